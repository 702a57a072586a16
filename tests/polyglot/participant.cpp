// The C++ participant of the cross-language uniqueness run.
//
// Usage: participant_cpp LEASE_DIR SECONDS OUT_PATH [uuidv7]
//
// A strict generator (default layout and epoch) whose node id is a slot of the file lease on
// LEASE_DIR (default slots, identity "cpp"), waiting out its restart guard with
// polyflake_wait_ready (at most 15 s; a fresh directory's new slot is guarded for a full
// reserve). When LEASE_DIR is zk://HOST:PORT[,HOST:PORT...]/PREFIX the slot is leased from that
// ZooKeeper ensemble under that znode prefix instead (no /PREFIX: the default "/polyflake").
// Then single polyflake_next_id calls at full speed for SECONDS seconds
// (the time checked every 1,024 IDs) into a std::vector<uint64_t>. Writes OUT_PATH (raw
// little-endian uint64, in issue order) and OUT_PATH.json. Exit 0 on success; on any error one
// line on stderr and exit 1.
//
// With `uuidv7`: a strict UUIDv7 generator on the system clock instead (no lease: LEASE_DIR is
// ignored), single polyflake_next_uuid7 calls into a std::vector of 16-byte arrays; OUT_PATH holds
// 16 bytes per UUID, big-endian, and OUT_PATH.json "format": "uuidv7", node_id null, first and
// last as text.
#include "polyflake.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr const char *kLanguage = "cpp";
using Clock = std::chrono::steady_clock;

struct Free {
  void operator()(polyflake_generator *g) const { polyflake_generator_free(g); }
};
struct FreeUuid7 {
  void operator()(polyflake_uuid7_generator *g) const { polyflake_uuid7_generator_free(g); }
};
using Generator = std::unique_ptr<polyflake_generator, Free>;
using Uuid7Generator = std::unique_ptr<polyflake_uuid7_generator, FreeUuid7>;

// A polyflake error as an exception carrying the code name and the core's message.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void raise(const std::string &what, polyflake_result r) {
  char msg[1024];
  size_t len = 0;
  std::string text = polyflake_last_error_message(msg, sizeof msg, &len) == POLYFLAKE_RESULT_OK && len
                         ? std::string(msg, len)
                         : polyflake_result_message(r);
  throw Error(what + ": " + polyflake_result_name(r) + ": " + text);
}

std::string format(uint64_t id) {
  char text[POLYFLAKE_ID_TEXT_LEN];
  size_t len = 0;
  polyflake_result r = polyflake_format_id(id, text, sizeof text, &len);
  if (r != POLYFLAKE_RESULT_OK) raise("format_id", r);
  return std::string(text, len);
}

// Write `bytes` to `path` (the raw IDs).
void write_file(const std::string &path, const std::vector<unsigned char> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string uuid_text(const uint8_t *uuid) {
  char text[POLYFLAKE_UUID_TEXT_LEN];
  const polyflake_result r = polyflake_format_uuid(uuid, text, sizeof text);
  if (r != POLYFLAKE_RESULT_OK) raise("format_uuid", r);
  return text;
}

// The uuidv7 mode: single calls at full speed until the deadline, then the bytes and the summary.
void run_uuidv7(double seconds, const std::string &out_path) {
  polyflake_timeid_config cfg;
  polyflake_timeid_config_init(&cfg);  // strict
  polyflake_uuid7_generator *g = nullptr;
  polyflake_result r = polyflake_uuid7_generator_new(&cfg, nullptr, &g);
  if (r != POLYFLAKE_RESULT_OK) raise("uuid7 generator", r);
  Uuid7Generator gen(g);
  std::vector<std::array<uint8_t, POLYFLAKE_ID128_LEN>> ids;
  ids.reserve(1 << 20);
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(seconds));
  for (;;) {
    if ((ids.size() & 1023) == 0 && !ids.empty() && Clock::now() >= deadline) break;
    ids.emplace_back();
    if ((r = polyflake_next_uuid7(gen.get(), ids.back().data())) != POLYFLAKE_RESULT_OK)
      raise("next_uuid7", r);
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const auto *raw = reinterpret_cast<const unsigned char *>(ids.data());
  write_file(out_path, std::vector<unsigned char>(raw, raw + ids.size() * POLYFLAKE_ID128_LEN));
  char secs[64];
  std::snprintf(secs, sizeof secs, "%.6f", elapsed);
  std::ofstream json(out_path + ".json", std::ios::trunc);
  json << "{\"language\": \"" << kLanguage << "\", \"format\": \"uuidv7\", \"node_id\": null"
       << ", \"count\": " << ids.size() << ", \"seconds\": " << secs << ", \"first\": \""
       << uuid_text(ids.front().data()) << "\", \"last\": \"" << uuid_text(ids.back().data())
       << "\"}\n";
  json.close();
  if (!json) throw std::runtime_error("cannot write " + out_path + ".json");
}

int run(const std::string &dir, const std::string &seconds_text, const std::string &out_path,
        bool uuidv7) {
  std::size_t used = 0;
  double seconds = 0;
  try {
    seconds = std::stod(seconds_text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != seconds_text.size() || !(seconds > 0.0) || seconds > 3600.0)
    throw std::runtime_error("SECONDS must be a number in (0, 3600], not \"" + seconds_text + "\"");
  if (uuidv7) {
    run_uuidv7(seconds, out_path);
    return 0;
  }

  polyflake_config cfg;
  polyflake_config_init(&cfg);  // strict, layout 41/10/12, the default epoch

  // Take a slot (system clock: nullptr), wait out its restart guard (at most 15 s; a fresh
  // directory's new slot is guarded for a full reserve), then the first ID.
  polyflake_generator *g = nullptr;
  polyflake_result r;
  if (dir.rfind("zk://", 0) == 0) {
    const std::string rest = dir.substr(5);
    const auto slash = rest.find('/');
    const std::string ensemble = rest.substr(0, slash);
    const std::string prefix = slash == std::string::npos ? std::string() : rest.substr(slash);
    polyflake_zookeeper_options zk;
    polyflake_zookeeper_options_init(&zk);
    zk.ensemble = ensemble.c_str();
    zk.store.prefix = prefix.empty() ? nullptr : prefix.c_str();  // nullptr: the default prefix
    zk.common.identity = kLanguage;
    r = polyflake_generator_new_zookeeper(&cfg, &zk, nullptr, &g);
    if (r != POLYFLAKE_RESULT_OK) raise("ZooKeeper lease", r);
  } else {
    polyflake_file_lease_options opts;
    polyflake_file_lease_options_init(&opts);
    opts.dir = dir.c_str();
    opts.common.identity = kLanguage;
    r = polyflake_generator_new_file_lease(&cfg, &opts, nullptr, &g);
    if (r != POLYFLAKE_RESULT_OK) raise("file lease", r);
  }
  Generator gen(g);
  if ((r = polyflake_wait_ready(gen.get(), 15000)) != POLYFLAKE_RESULT_OK) raise("wait_ready", r);
  uint64_t id = 0;
  if ((r = polyflake_next_id(gen.get(), &id)) != POLYFLAKE_RESULT_OK) raise("first ID", r);

  std::vector<uint64_t> ids;
  ids.reserve(1 << 20);
  ids.push_back(id);
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(seconds));
  for (;;) {
    if ((ids.size() & 1023) == 0 && Clock::now() >= deadline) break;
    r = polyflake_next_id(gen.get(), &id);
    if (r != POLYFLAKE_RESULT_OK) raise("next_id", r);
    ids.push_back(id);
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();

  polyflake_config held;
  r = polyflake_generator_config(gen.get(), &held);
  if (r != POLYFLAKE_RESULT_OK) raise("config", r);

  {
    std::vector<unsigned char> bytes(ids.size() * 8);
    for (std::size_t i = 0; i < ids.size(); i++)
      for (int j = 0; j < 8; j++) bytes[i * 8 + j] = static_cast<unsigned char>(ids[i] >> (8 * j));
    write_file(out_path, bytes);
  }
  {
    char secs[64];
    std::snprintf(secs, sizeof secs, "%.6f", elapsed);
    std::ofstream json(out_path + ".json", std::ios::trunc);
    json << "{\"language\": \"" << kLanguage << "\", \"node_id\": " << held.node_id
         << ", \"count\": " << ids.size() << ", \"seconds\": " << secs << ", \"first\": \""
         << format(ids.front()) << "\", \"last\": \"" << format(ids.back()) << "\"}\n";
    json.close();
    if (!json) throw std::runtime_error("cannot write " + out_path + ".json");
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  const bool uuidv7 = argc == 5 && std::string(argv[4]) == "uuidv7";
  if (argc != 4 && !uuidv7) {
    std::fprintf(stderr, "usage: %s LEASE_DIR SECONDS OUT_PATH [uuidv7]\n", argv[0]);
    return 1;
  }
  try {
    return run(argv[1], argv[2], argv[3], uuidv7);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "participant_cpp: %s\n", e.what());
    return 1;
  }
}
