// The C++ test of polyflake's C ABI: the same header from C++17 with RAII handles, running the
// layout vectors, the UUIDv7/ULID vectors, every scenario file (UUIDv7 and ULID ones too) on both
// clock sources, NULL parameters, and 8 std::threads on one handle.
//
// Usage: test_polyflake_cpp VECTORS_DIR   (JSON read with nlohmann/json)
// Built twice by .build/mk/c.mk, against libpolyflake.so and libpolyflake.a, and run under valgrind.
#include "polyflake.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

int failures = 0;
long checks = 0;

void check(bool ok, const std::string &what) {
  ++checks;
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  }
}

std::string name_of(polyflake_result r) { return polyflake_result_name(r); }

// Handles own their C object; the deleters are the _free functions (which accept NULL).
struct GeneratorFree {
  void operator()(polyflake_generator *g) const { polyflake_generator_free(g); }
};
struct ClockFree {
  void operator()(polyflake_clock *c) const { polyflake_clock_free(c); }
};
struct Uuid7Free {
  void operator()(polyflake_uuid7_generator *g) const { polyflake_uuid7_generator_free(g); }
};
struct UlidFree {
  void operator()(polyflake_ulid_generator *g) const { polyflake_ulid_generator_free(g); }
};
using Generator = std::unique_ptr<polyflake_generator, GeneratorFree>;
using Clock = std::unique_ptr<polyflake_clock, ClockFree>;
using Uuid7 = std::unique_ptr<polyflake_uuid7_generator, Uuid7Free>;
using Ulid = std::unique_ptr<polyflake_ulid_generator, UlidFree>;

json load(const fs::path &p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot open " + p.string());
  return json::parse(in);
}

void only_keys(const json &o, const std::string &where, const std::set<std::string> &allowed) {
  for (auto it = o.begin(); it != o.end(); ++it)
    check(allowed.count(it.key()) == 1, where + ": unknown key \"" + it.key() + "\"");
}

uint64_t u64(const std::string &s) { return std::stoull(s); }

void layout_vectors(const fs::path &dir) {
  json doc = load(dir / "layouts.json");
  check(doc["epoch_ms_default"].get<int64_t>() == POLYFLAKE_DEFAULT_EPOCH_MS, "default epoch");
  int cases = 0;
  for (auto &[key, entry] : doc["layouts"].items()) {
    // "long_lived_42_8_13" -> "long_lived"
    std::string name = key;
    for (int i = 0; i < 3; ++i) name = name.substr(0, name.rfind('_'));
    polyflake_layout l{};
    check(polyflake_layout_from_name(name.c_str(), &l) == POLYFLAKE_RESULT_OK, name);
    check(l.timestamp_bits == entry["timestamp_bits"].get<uint32_t>() &&
              l.node_bits == entry["node_bits"].get<uint32_t>() &&
              l.sequence_bits == entry["sequence_bits"].get<uint32_t>(),
          name + " bits");
    polyflake_layout_info info{};
    check(polyflake_layout_describe(l, &info) == POLYFLAKE_RESULT_OK, name + " describe");
    check(info.max_node_id == entry["max_node_id"].get<uint64_t>(), name + " max node");
    check(info.max_sequence == entry["max_sequence"].get<uint64_t>(), name + " max seq");
    check(info.max_elapsed_ms == entry["max_elapsed_ms"].get<uint64_t>(), name + " window");
    check(std::round(info.years * 100) == std::round(entry["years"].get<double>() * 100),
          name + " years");
    for (auto &c : entry["cases"]) {
      const auto ts = c["epoch_ms"].get<int64_t>();
      const auto node = c["node_id"].get<uint64_t>(), seq = c["sequence"].get<uint64_t>();
      const auto text = c["id"].get<std::string>();
      const uint64_t want = u64(text);
      uint64_t id = 0;
      check(polyflake_compose(l, POLYFLAKE_DEFAULT_EPOCH_MS, ts, node, seq, &id) ==
                    POLYFLAKE_RESULT_OK &&
                id == want,
            name + " compose " + text);
      polyflake_decoded d{};
      check(polyflake_decode(l, POLYFLAKE_DEFAULT_EPOCH_MS, want, &d) == POLYFLAKE_RESULT_OK &&
                d.timestamp_ms == ts && d.node_id == node && d.sequence == seq,
            name + " decode " + text);
      check(polyflake_parse_id(text.c_str(), &id) == POLYFLAKE_RESULT_OK && id == want,
            name + " parse " + text);
      char buf[POLYFLAKE_ID_TEXT_LEN];
      size_t len = 0;
      check(polyflake_format_id(want, buf, sizeof buf, &len) == POLYFLAKE_RESULT_OK &&
                text == std::string(buf, len),
            name + " format " + text);
      cases++;
    }
  }
  check(cases == 4 * 66, "cases run");
  for (auto &lit : doc["literals"]) {
    uint64_t id = 0;
    polyflake_decoded d{};
    polyflake_parse_id(lit["id"].get<std::string>().c_str(), &id);
    check(polyflake_decode(polyflake_layout_default(), POLYFLAKE_DEFAULT_EPOCH_MS, id, &d) ==
                  POLYFLAKE_RESULT_OK &&
              d.timestamp_ms == lit["epoch_ms"].get<int64_t>() &&
              d.node_id == lit["node_id"].get<uint32_t>() &&
              d.sequence == lit["sequence"].get<uint32_t>(),
          "literal " + lit["id"].get<std::string>());
  }
  for (auto &n : doc["invalid"]["node_id_default_layout"]) {
    if (!n.is_number_integer() || (n.is_number_unsigned() && n.get<uint64_t>() > INT64_MAX)) {
      std::printf("  node id %s: not representable as int64_t node_id (refused by the type)\n",
                  n.dump().c_str());
      continue;
    }
    polyflake_config cfg;
    polyflake_config_init(&cfg);
    cfg.node_id = n.get<int64_t>();
    polyflake_clock *raw = nullptr;
    polyflake_manual_clock_new(POLYFLAKE_DEFAULT_EPOCH_MS, &raw);
    Clock clock(raw);
    polyflake_generator *g = nullptr;
    check(polyflake_generator_new(&cfg, clock.get(), &g) == POLYFLAKE_RESULT_INVALID_NODE_ID &&
              g == nullptr,
          "node id " + n.dump());
  }
  for (auto &t : doc["invalid"]["decode_default_layout"]) {
    uint64_t id = 0;
    check(polyflake_parse_id(t.get<std::string>().c_str(), &id) == POLYFLAKE_RESULT_INVALID_ID,
          "invalid id " + t.dump());
  }
  for (auto &b : doc["invalid"]["layouts"]) {
    polyflake_layout l{b[0].get<uint32_t>(), b[1].get<uint32_t>(), b[2].get<uint32_t>()};
    polyflake_layout_info info{};
    check(polyflake_layout_describe(l, &info) == POLYFLAKE_RESULT_INVALID_LAYOUT,
          "invalid layout " + b.dump());
  }
  std::printf("layout vectors: %d cases\n", cases);
}

// Every ID a scenario issues as 16 big-endian bytes (a Snowflake ID in the low 8): one ordering
// and one uniqueness check for every format.
using Id = std::array<uint8_t, POLYFLAKE_ID128_LEN>;

Id id_of(uint64_t v) {
  Id x{};
  for (int i = 0; i < 8; ++i) x[15 - i] = uint8_t(v >> (8 * i));
  return x;
}

uint64_t u64_of(const Id &x) {
  uint64_t v = 0;
  for (int i = 8; i < 16; ++i) v = (v << 8) | x[i];
  return v;
}

enum class Format { Snowflake, Uuid7, Ulid };

struct Gen {
  Format format = Format::Snowflake;
  Generator g;          // Format::Snowflake
  Uuid7 u;              // Format::Uuid7
  Ulid l;               // Format::Ulid
  Clock clock;          // null: the system clock
  bool manual = false;  // clock_set, clock_advance and clock_elapse need a manual clock
  bool has_last = false;
  Id last{};
  const json *spec = nullptr;  // kept for a `deferred` generator, made by a `create` step

  bool made() const { return g || u || l; }

  polyflake_result next(Id &out) const {
    if (format == Format::Uuid7) return polyflake_next_uuid7(u.get(), out.data());
    if (format == Format::Ulid) return polyflake_next_ulid(l.get(), out.data());
    uint64_t id = 0;
    const polyflake_result r = polyflake_next_id(g.get(), &id);
    if (r == POLYFLAKE_RESULT_OK) out = id_of(id);
    return r;
  }

  // A batch into `out`; on an error the caller's buffer must stay untouched (checked).
  polyflake_result batch(std::vector<Id> &out, size_t n, const std::string &what) const {
    polyflake_result r;
    if (format == Format::Snowflake) {
      std::vector<uint64_t> buf(n, UINT64_MAX);
      r = polyflake_next_ids(g.get(), buf.data(), n);
      if (r == POLYFLAKE_RESULT_OK)
        for (auto id : buf) out.push_back(id_of(id));
      else
        check(std::all_of(buf.begin(), buf.end(), [](uint64_t v) { return v == UINT64_MAX; }),
              what + ": buffer written on error");
      return r;
    }
    Id sentinel;
    sentinel.fill(0xff);
    std::vector<Id> buf(std::max<size_t>(n, 1), sentinel);
    r = format == Format::Uuid7 ? polyflake_next_uuid7s(u.get(), buf[0].data(), n)
                                : polyflake_next_ulids(l.get(), buf[0].data(), n);
    if (r == POLYFLAKE_RESULT_OK)
      out.assign(buf.begin(), buf.begin() + n);
    else
      check(std::all_of(buf.begin(), buf.end(), [&](const Id &v) { return v == sentinel; }),
            what + ": buffer written on error");
    return r;
  }

  polyflake_result health(polyflake_health_snapshot &h) const {
    if (format == Format::Uuid7) return polyflake_uuid7_health(u.get(), &h);
    if (format == Format::Ulid) return polyflake_ulid_health(l.get(), &h);
    return polyflake_health(g.get(), &h);
  }

  polyflake_result close() const {
    if (format == Format::Uuid7) return polyflake_uuid7_generator_close(u.get());
    if (format == Format::Ulid) return polyflake_ulid_generator_close(l.get());
    return polyflake_generator_close(g.get());
  }

  // The Snowflake generator behind an expectation only Snowflake IDs have.
  const polyflake_generator *snowflake(const std::string &what) const {
    if (format != Format::Snowflake)
      throw std::runtime_error(what + ": a Snowflake-only expectation on a UUIDv7/ULID generator");
    return g.get();
  }
};

// The clock source every generator of the running scenario uses: each file runs on the precise
// source and again on the coarse one, as the Rust runner does.
uint32_t scenario_source = POLYFLAKE_CLOCK_SOURCE_PRECISE;

// The scenario file's ONE lease directory: made on first use, removed with the object.
struct LeaseDir {
  std::string path;
  LeaseDir() = default;
  LeaseDir(const LeaseDir &) = delete;
  LeaseDir &operator=(const LeaseDir &) = delete;
  const char *get() {
    if (path.empty()) {
      char tmpl[] = "/tmp/polyflake-scenario-XXXXXX";
      if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
      path = tmpl;
    }
    return path.c_str();
  }
  ~LeaseDir() {
    if (!path.empty()) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};

std::vector<int64_t> expand(const json &values) {
  std::vector<int64_t> out;
  for (auto &v : values) {
    if (v.is_number()) {
      out.push_back(v.get<int64_t>());
      continue;
    }
    only_keys(v, "scripted run", {"start", "count", "step", "each"});
    const auto start = v["start"].get<int64_t>(), count = v["count"].get<int64_t>();
    const auto step = v.value("step", int64_t{0}), each = v.value("each", int64_t{1});
    for (int64_t i = 0; i < count; ++i) out.push_back(start + step * (i / each));
  }
  return out;
}

// The settings every generator takes (mode, wait, lead, forward step), and the running
// scenario's clock source.
polyflake_timeid_config shared_settings(const json &spec, const std::string &where) {
  polyflake_timeid_config s;
  polyflake_timeid_config_init(&s);
  const auto mode = spec["mode"].get<std::string>();
  if (mode == "strict") s.mode = POLYFLAKE_MODE_STRICT;
  else if (mode == "monotonic") s.mode = POLYFLAKE_MODE_MONOTONIC;
  else throw std::runtime_error(where + ": mode " + mode);
  if (spec.contains("max_wait_ms")) s.max_wait_ms = spec["max_wait_ms"].get<double>();
  if (spec.contains("max_lead_ms")) {
    s.has_max_lead = 1;
    s.max_lead_ms = spec["max_lead_ms"].get<int64_t>();
  }
  if (spec.contains("max_forward_step_ms")) {  // null turns the check off
    const json &step = spec["max_forward_step_ms"];
    s.max_forward_step_ms = step.is_null() ? POLYFLAKE_FORWARD_STEP_OFF : step.get<uint64_t>();
  }
  if (spec.contains("forward_confirm_ms"))
    s.forward_confirm_ms = spec["forward_confirm_ms"].get<uint64_t>();
  s.clock_source = scenario_source;
  return s;
}

polyflake_result build_snowflake(const json &spec, const std::string &where,
                                 const polyflake_timeid_config &s, Gen &out, LeaseDir &dir) {
  only_keys(spec, where,
            {"mode", "node_id", "layout", "epoch_ms", "max_wait_ms", "max_lead_ms", "clock",
             "source", "deferred", "max_forward_step_ms", "forward_confirm_ms"});
  polyflake_config cfg;
  polyflake_config_init(&cfg);
  cfg.mode = s.mode;
  cfg.max_wait_ms = s.max_wait_ms;
  cfg.has_max_lead = s.has_max_lead;
  cfg.max_lead_ms = s.max_lead_ms;
  cfg.max_forward_step_ms = s.max_forward_step_ms;
  cfg.forward_confirm_ms = s.forward_confirm_ms;
  cfg.clock_source = s.clock_source;
  polyflake_file_lease_options lease;
  const polyflake_file_lease_options *opts = nullptr;
  if (spec.contains("source")) {
    const json &source = spec["source"];
    only_keys(source, where, {"kind", "slots", "reserve_ms"});
    if (source["kind"].get<std::string>() != "file_lease")
      throw std::runtime_error(where + ": source kind " + source["kind"].dump());
    polyflake_file_lease_options_init(&lease);
    lease.dir = dir.get();
    if (source.contains("slots")) lease.common.slots = source["slots"].get<uint32_t>();
    if (source.contains("reserve_ms")) lease.common.reserve_ms = source["reserve_ms"].get<uint64_t>();
    opts = &lease;
  }
  if (!opts) cfg.node_id = spec["node_id"].get<int64_t>();
  if (spec.contains("layout")) {
    const json &l = spec["layout"];
    if (l.is_string()) {
      polyflake_result r = polyflake_layout_from_name(l.get<std::string>().c_str(), &cfg.layout);
      if (r != POLYFLAKE_RESULT_OK) return r;
    } else {
      cfg.layout = {l[0].get<uint32_t>(), l[1].get<uint32_t>(), l[2].get<uint32_t>()};
    }
  }
  if (spec.contains("epoch_ms")) cfg.epoch_ms = spec["epoch_ms"].get<int64_t>();
  // One constructor per source, each with the optional clock (null: the system clock).
  polyflake_generator *g = nullptr;
  polyflake_result r = opts ? polyflake_generator_new_file_lease(&cfg, opts, out.clock.get(), &g)
                            : polyflake_generator_new(&cfg, out.clock.get(), &g);
  out.g.reset(g);
  return r;
}

// A generator from its spec; a spec with "format" is a UUIDv7 or ULID generator (no node id,
// layout, epoch or source).
polyflake_result build(const json &spec, const std::string &where, Gen &out, LeaseDir &dir) {
  const polyflake_timeid_config s = shared_settings(spec, where);
  polyflake_clock *c = nullptr;
  if (spec.contains("clock")) {
    const json &clock = spec["clock"];
    only_keys(clock, where, {"kind", "start_ms", "values"});
    const auto kind = clock["kind"].get<std::string>();
    out.manual = kind == "manual";
    if (kind == "manual") {
      polyflake_manual_clock_new(clock["start_ms"].get<int64_t>(), &c);
    } else if (kind == "scripted") {
      const auto values = expand(clock["values"]);
      polyflake_scripted_clock_new(values.data(), values.size(), &c);
    } else {
      throw std::runtime_error(where + ": clock kind " + kind);
    }
  }
  out.clock.reset(c);
  out.has_last = false;
  if (!spec.contains("format")) {
    out.format = Format::Snowflake;
    return build_snowflake(spec, where, s, out, dir);
  }
  only_keys(spec, where,
            {"mode", "format", "deferred", "max_wait_ms", "max_lead_ms", "max_forward_step_ms",
             "forward_confirm_ms", "clock"});
  const auto format = spec["format"].get<std::string>();
  polyflake_result r;
  if (format == "uuidv7") {
    out.format = Format::Uuid7;
    polyflake_uuid7_generator *u = nullptr;
    r = polyflake_uuid7_generator_new(&s, c, &u);
    out.u.reset(u);
  } else if (format == "ulid") {
    out.format = Format::Ulid;
    polyflake_ulid_generator *l = nullptr;
    r = polyflake_ulid_generator_new(&s, c, &l);
    out.l.reset(l);
  } else {
    throw std::runtime_error(where + ": format " + format);
  }
  return r;
}

void check_decoded(const polyflake_generator *g, uint64_t id, const json &want,
                   const std::string &what) {
  only_keys(want, what, {"timestamp_ms", "node_id", "sequence"});
  polyflake_decoded d{};
  check(polyflake_generator_decode(g, id, &d) == POLYFLAKE_RESULT_OK &&
            d.timestamp_ms == want["timestamp_ms"].get<int64_t>() &&
            d.node_id == want["node_id"].get<uint32_t>() &&
            d.sequence == want["sequence"].get<uint32_t>(),
        what + ": decoded " + want.dump());
}

// `first` / `last`: all three fields of a Snowflake ID; only the Unix ms of a UUIDv7 or ULID.
void check_id(const Gen &g, const Id &id, const json &want, const std::string &what) {
  if (g.format == Format::Snowflake) return check_decoded(g.g.get(), u64_of(id), want, what);
  only_keys(want, what, {"timestamp_ms"});
  int64_t ms = 0;
  const polyflake_result r = g.format == Format::Uuid7
                                 ? polyflake_uuid7_timestamp_ms(id.data(), &ms)
                                 : polyflake_ulid_timestamp_ms(id.data(), &ms);
  check(r == POLYFLAKE_RESULT_OK && ms == want["timestamp_ms"].get<int64_t>(),
        what + ": timestamp " + std::to_string(ms));
}

double health_number(const polyflake_health_snapshot &h, const std::string &k) {
  const std::map<std::string, double> v = {
      {"lead_ms", double(h.lead_ms)},
      {"ids_issued", double(h.ids_issued)},
      {"rewinds_waited", double(h.rewinds_waited)},
      {"rewinds_refused", double(h.rewinds_refused)},
      {"sequence_exhaustions", double(h.sequence_exhaustions)},
      {"wait_sleeps", double(h.wait_sleeps)},
      {"ms_borrowed", double(h.ms_borrowed)},
      {"lead_refused", double(h.lead_refused)},
      {"clock_ahead_ms", double(h.clock_ahead_ms)},
      {"forward_refused", double(h.forward_refused)}};
  auto it = v.find(k);
  return it == v.end() ? NAN : it->second;
}

// Fork; the child calls next once on the inherited handle and pipes back the result's name
// ("OK" or the error code), which the parent returns.
std::string next_id_in_child(const Gen &g) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe");
  std::fflush(nullptr);  // or the child may write the parent's buffered output a second time
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    Id id{};
    const char *outcome = polyflake_result_name(g.next(id));
    _exit(write(fds[1], outcome, std::strlen(outcome)) < 0 ? 1 : 0);
  }
  close(fds[1]);
  std::string out;
  char buf[64];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  check(WIFEXITED(status), "fork step: the child died");
  return out;
}

// Returns the steps run, or 0 with `skip` set to why the file is not applicable here.
int run_scenario(const fs::path &path, double slack, std::string &skip) {
  json doc = load(path);
  const auto name = doc["name"].get<std::string>();
  only_keys(doc, name, {"name", "description", "source", "needs", "generators", "steps"});
  skip.clear();  // no `needs` entry is out of this runner's reach today
  for (auto &need : doc.value("needs", json::array())) {
    // C++ has fork(): it needs nothing it lacks.
    if (need != "fork")
      throw std::runtime_error(name + ": unknown need " + need.dump());
  }
  LeaseDir lease_dir;  // declared first: removed after every generator is gone
  std::map<std::string, Gen> gens;
  for (auto &[key, spec] : doc["generators"].items()) {
    gens[key].spec = &spec;
    if (spec.contains("deferred")) {
      if (!spec["deferred"].is_boolean())
        throw std::runtime_error(name + ": " + key + ": deferred is not a boolean");
      if (spec["deferred"].get<bool>()) continue;
    }
    polyflake_result r = build(spec, name, gens[key], lease_dir);
    check(r == POLYFLAKE_RESULT_OK, name + ": building " + key + ": " + name_of(r));
    if (r != POLYFLAKE_RESULT_OK) return 0;
  }
  std::set<Id> seen;
  int n = 0;
  for (auto &step : doc["steps"]) {
    const auto op = step["op"].get<std::string>();
    const std::string what = name + " step " + std::to_string(n) + " (" + op + ", " +
                             polyflake_clock_source_name(scenario_source) + " clock)";
    only_keys(step, what, {"op", "gen", "count", "expect", "id", "ms", "config", "within_ms"});
    const json expect = step.value("expect", json::object());
    const auto started = std::chrono::steady_clock::now();
    Gen *g = nullptr;
    if (step.contains("gen")) {
      auto it = gens.find(step["gen"].get<std::string>());
      if (it == gens.end()) throw std::runtime_error(what + ": unknown generator");
      g = &it->second;
      // Every op but `create` needs the generator made (a closed one stays, refusing).
      if ((op == "create") == g->made())
        throw std::runtime_error(what + (g->made() ? ": already created" : ": not created"));
    }
    if (op == "construct") {
      only_keys(expect, what, {"error", "ok"});
      Gen tmp;
      polyflake_result r = build(step["config"], what, tmp, lease_dir);
      if (expect.contains("error"))
        check(name_of(r) == expect["error"].get<std::string>(), what + ": got " + name_of(r));
      else
        check(r == POLYFLAKE_RESULT_OK, what + ": " + name_of(r));
    } else if (op == "create") {
      only_keys(expect, what, {"error"});
      if (!g->spec->value("deferred", false))
        throw std::runtime_error(what + ": not a deferred generator");
      polyflake_result r = build(*g->spec, what, *g, lease_dir);
      check(name_of(r) == expect.value("error", std::string("OK")), what + ": got " + name_of(r));
      if (r != POLYFLAKE_RESULT_OK) check(!g->made(), what + ": out-param written on error");
    } else if (op == "close") {
      if (step.contains("expect")) throw std::runtime_error(what + ": close expects nothing");
      // The generator stays: every later call on it fails with GENERATOR_CLOSED.
      check(g->close() == POLYFLAKE_RESULT_OK, what);
    } else if (op == "clock_set" || op == "clock_advance" || op == "clock_elapse") {
      if (!g->manual) throw std::runtime_error(what + ": not a manual clock");
      polyflake_clock *c = g->clock.get();
      if (op == "clock_elapse") {
        check(polyflake_manual_clock_elapse(c, step["ms"].get<uint64_t>()) == POLYFLAKE_RESULT_OK,
              what);
      } else {
        const auto ms = step["ms"].get<int64_t>();
        check((op == "clock_set" ? polyflake_manual_clock_set(c, ms)
                                 : polyflake_manual_clock_advance(c, ms)) == POLYFLAKE_RESULT_OK,
              what);
      }
    } else if (op == "decode") {
      only_keys(expect, what, {"decoded"});
      check_decoded(g->snowflake(what), u64(step["id"].get<std::string>()), expect["decoded"],
                    what);
    } else if (op == "health") {
      polyflake_health_snapshot h{};
      check(g->health(h) == POLYFLAKE_RESULT_OK, what);
      for (auto &[k, want] : expect.items()) {
        if (k == "ok") {
          check(h.ok == want.get<bool>(), what + ": ok (" + h.reason + ")");
        } else if (k == "status") {
          check(polyflake_health_status_name(h.status) == want.get<std::string>(),
                what + ": status " + polyflake_health_status_name(h.status));
        } else {
          const double got = health_number(h, k);
          check(!std::isnan(got), what + ": unknown health key " + k);
          if (want.is_object()) {
            only_keys(want, what, {"min", "max"});
            if (want.contains("min")) check(got >= want["min"].get<double>(), what + ": " + k + " min");
            if (want.contains("max")) check(got <= want["max"].get<double>(), what + ": " + k + " max");
          } else {
            check(got == want.get<double>(), what + ": " + k + " = " + std::to_string(got));
          }
        }
      }
    } else if (op == "next_id" || op == "next_ids") {
      only_keys(expect, what,
                {"error", "ids", "sequences", "max_sequence", "first", "last", "increasing"});
      const size_t count = step.value("count", size_t{1});
      std::vector<Id> ids;
      polyflake_result failure = POLYFLAKE_RESULT_OK;
      if (op == "next_id") {
        for (size_t i = 0; i < count; ++i) {
          Id id{};
          if ((failure = g->next(id)) != POLYFLAKE_RESULT_OK) break;
          ids.push_back(id);
        }
      } else {
        failure = g->batch(ids, count, what);
      }
      if (expect.contains("error")) {
        check(name_of(failure) == expect["error"].get<std::string>(),
              what + ": got " + name_of(failure));
        if (op == "next_id") check(ids.size() == count - 1, what + ": failed early");
      } else {
        check(failure == POLYFLAKE_RESULT_OK, what + ": unexpected " + name_of(failure));
      }
      auto sequence = [&](const Id &id) {
        polyflake_decoded d{};
        polyflake_generator_decode(g->snowflake(what), u64_of(id), &d);
        return d.sequence;
      };
      if (expect.contains("ids")) {
        g->snowflake(what);
        std::vector<Id> want;
        for (auto &s : expect["ids"]) want.push_back(id_of(u64(s.get<std::string>())));
        check(ids == want, what + ": ids");
      }
      if (expect.contains("sequences")) {
        std::vector<uint32_t> got, want = expect["sequences"].get<std::vector<uint32_t>>();
        for (auto &id : ids) got.push_back(sequence(id));
        check(got == want, what + ": sequences");
      }
      if (expect.contains("max_sequence")) {
        uint32_t max = 0;
        for (auto &id : ids) max = std::max(max, sequence(id));
        check(!ids.empty() && max == expect["max_sequence"].get<uint32_t>(), what + ": max_sequence");
      }
      if (expect.contains("first")) {
        check(!ids.empty(), what + ": no first");
        if (!ids.empty()) check_id(*g, ids.front(), expect["first"], what + " first");
      }
      if (expect.contains("last")) {
        check(!ids.empty(), what + ": no last");
        if (!ids.empty()) check_id(*g, ids.back(), expect["last"], what + " last");
      }
      for (auto &id : ids) {
        if (g->has_last && id <= g->last) check(false, what + ": not increasing");
        if (!seen.insert(id).second) check(false, what + ": duplicate ID");
        g->has_last = true;
        g->last = id;
      }
    } else if (op == "fork") {
      only_keys(expect, what, {"error"});
      const std::string outcome = next_id_in_child(*g);
      check(outcome == expect.value("error", std::string("OK")),
            what + ": the child's next_id gave " + outcome);
    } else {
      check(false, what + ": unknown op");
    }
    if (step.contains("within_ms")) {
      const double took = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - started)
                              .count();
      check(took < step["within_ms"].get<double>() * slack,
            what + ": took " + std::to_string(took) + " ms");
    }
    ++n;
  }
  check(n > 0, name + ": no steps");
  return n;
}

// Scenario coverage: written to <target>/scenario-coverage/<lang>.txt for `make test`
// (tests/vectors/check_coverage.py); lang is this program's name (test_cpp_shared: cpp-shared).
std::string coverage_lang = "cpp";

std::vector<fs::path> json_files(const fs::path &dir) {
  std::vector<fs::path> files;
  for (auto &e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Every file of scenarios/ and of scenarios/formats/ (the UUIDv7 and ULID files, which wait
// there until every runner runs them), each on both clock sources. The coverage record lists
// the files of scenarios/ itself, as check_coverage.py expects.
void scenarios(const fs::path &dir, double slack) {
  std::vector<fs::path> files = json_files(dir / "scenarios");
  const size_t top = files.size();
  for (auto &f : json_files(dir / "scenarios" / "formats")) files.push_back(f);
  check(top >= 15 && files.size() - top >= 4, "scenario files missing");
  const char *target = std::getenv("CARGO_TARGET_DIR");
  const fs::path out = fs::path(target ? target : (dir / ".." / ".." / "target").string()) /
                       "scenario-coverage";
  fs::create_directories(out);
  std::ostringstream coverage;  // written at the end: a forked child must not inherit a buffer
  size_t ran = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const fs::path &f = files[i];
    const std::string shown = (i < top ? "" : "formats/") + f.filename().string();
    std::string skip;
    bool passed = true;
    int steps = 0;
    for (uint32_t source : {POLYFLAKE_CLOCK_SOURCE_PRECISE, POLYFLAKE_CLOCK_SOURCE_COARSE}) {
      const int before = failures;
      scenario_source = source;
      steps = run_scenario(f, slack, skip);
      if (!skip.empty()) break;
      std::printf("  scenario %-48s %-7s %s (%d steps)\n", shown.c_str(),
                  polyflake_clock_source_name(source), failures == before ? "ok" : "FAILED", steps);
      passed = passed && steps > 0 && failures == before;
    }
    scenario_source = POLYFLAKE_CLOCK_SOURCE_PRECISE;
    if (!skip.empty()) {
      std::printf("  scenario %-48s not applicable: %s\n", shown.c_str(), skip.c_str());
      if (i < top) coverage << f.stem().string() << " not-applicable: " << skip << "\n";
      ++ran;
      continue;
    }
    ran += steps > 0;
    if (passed && i < top) coverage << f.stem().string() << " ok\n";
  }
  std::ofstream(out / (coverage_lang + ".txt")) << coverage.str();
  check(ran == files.size(), "every scenario file ran");
  std::printf("scenarios: %zu files, each on the precise and the coarse clock source\n", ran);
}

// A decimal string as 16 big-endian bytes (the vectors' "value").
Id from_decimal(const std::string &text) {
  Id out{};
  for (char c : text) {
    unsigned carry = unsigned(c - '0');
    for (int i = 15; i >= 0; --i) {
      carry += 10u * out[i];
      out[i] = uint8_t(carry);
      carry >>= 8;
    }
  }
  return out;
}

// The conformance vectors of the 128-bit formats (tests/vectors/formats.json).
void format_vectors(const fs::path &dir) {
  const json doc = load(dir / "formats.json");
  int cases = 0;
  auto text_of = [](const Id &id, bool uuid) {
    char buf[POLYFLAKE_UUID_TEXT_LEN] = {};
    const polyflake_result r = uuid ? polyflake_format_uuid(id.data(), buf, sizeof buf)
                                    : polyflake_format_ulid(id.data(), buf, sizeof buf);
    return r == POLYFLAKE_RESULT_OK ? std::string(buf) : name_of(r);
  };
  auto parse = [](const std::string &text, bool uuid, Id &out) {
    return uuid ? polyflake_parse_uuid(text.c_str(), out.data())
                : polyflake_parse_ulid(text.c_str(), out.data());
  };
  for (const bool uuid : {true, false}) {
    const json &part = doc[uuid ? "uuid" : "ulid"];
    std::vector<json> good;
    if (uuid) good.push_back(part["rfc9562_example"]);
    for (auto &v : part.value("examples", json::array())) good.push_back(v);
    for (auto &v : part["limits"]) good.push_back(v);
    for (auto &v : good) {
      const auto text = v["text"].get<std::string>();
      Id id{};
      int64_t ms = 0;
      check(parse(text, uuid, id) == POLYFLAKE_RESULT_OK, "parse " + text);
      if (v.contains("value")) check(id == from_decimal(v["value"].get<std::string>()), "value " + text);
      std::string canonical = v.value("canonical", text);
      if (!uuid) std::transform(canonical.begin(), canonical.end(), canonical.begin(), ::toupper);
      check(text_of(id, uuid) == canonical, "format " + text + ": " + text_of(id, uuid));
      check((uuid ? polyflake_uuid7_timestamp_ms(id.data(), &ms)
                  : polyflake_ulid_timestamp_ms(id.data(), &ms)) == POLYFLAKE_RESULT_OK &&
                ms == v["unix_ts_ms"].get<int64_t>(),
            "timestamp " + text);
      ++cases;
    }
    for (auto &v : part["bad_text"]) {
      Id id;
      id.fill(0xab);
      check(parse(v.get<std::string>(), uuid, id) == POLYFLAKE_RESULT_INVALID_ID &&
                id[0] == 0xab && id[15] == 0xab,
            "bad text " + v.dump());
      ++cases;
    }
  }
  for (auto &v : doc["uuid"]["not_v7"]) {
    Id id{};
    int64_t ms = 42;
    check(parse(v.get<std::string>(), true, id) == POLYFLAKE_RESULT_OK &&
              polyflake_uuid7_timestamp_ms(id.data(), &ms) == POLYFLAKE_RESULT_INVALID_ID && ms == 42,
          "not v7 " + v.dump());
    ++cases;
  }
  for (auto &v : doc["ulid"]["aliases"]) {
    Id id{};
    check(parse(v["text"].get<std::string>(), false, id) == POLYFLAKE_RESULT_OK &&
              text_of(id, false) == v["canonical"].get<std::string>(),
          "alias " + v.dump());
    ++cases;
  }
  Id a{}, b{};
  parse(doc["ulid"]["monotonic_pair"][0].get<std::string>(), false, a);
  parse(doc["ulid"]["monotonic_pair"][1].get<std::string>(), false, b);
  for (int i = 15; i >= 0 && ++a[i] == 0; --i) {
  }
  check(a == b, "ULID monotonic pair");
  check(cases >= 28, "format vector cases: " + std::to_string(cases));
  std::printf("format vectors: %d cases\n", cases + 1);
}

void null_parameters() {
  const auto N = POLYFLAKE_RESULT_NULL_PARAMETER;
  polyflake_config cfg;
  polyflake_config_init(&cfg);
  polyflake_generator *g = nullptr;
  uint64_t id = 0;
  check(polyflake_config_init(nullptr) == N, "config_init");
  check(polyflake_generator_new(nullptr, nullptr, &g) == N, "generator_new config");
  check(polyflake_generator_new(&cfg, nullptr, nullptr) == N, "generator_new out");
  check(polyflake_generator_close(nullptr) == N, "generator_close");
  check(polyflake_wait_ready(nullptr, 0) == N, "wait_ready");
  check(polyflake_manual_clock_elapse(nullptr, 1) == N, "manual_clock_elapse");
  check(polyflake_next_id(nullptr, &id) == N, "next_id generator");
  check(polyflake_next_ids(nullptr, &id, 1) == N, "next_ids generator");
  check(polyflake_next_id_within(nullptr, &id, 10) == N, "next_id_within generator");
  check(polyflake_next_ids_within(nullptr, &id, 1, 10) == N, "next_ids_within generator");
  check(polyflake_generator_interrupt(nullptr) == N, "generator_interrupt");
  check(polyflake_parse_id(nullptr, &id) == N, "parse_id text");
  check(polyflake_health(nullptr, nullptr) == N, "health");
  check(polyflake_manual_clock_new(0, nullptr) == N, "manual_clock_new");
  check(polyflake_scripted_clock_new(nullptr, 1, nullptr) == N, "scripted_clock_new");
  polyflake_timeid_config tcfg;
  polyflake_timeid_config_init(&tcfg);
  polyflake_uuid7_generator *u = nullptr;
  polyflake_ulid_generator *l = nullptr;
  uint8_t bytes[POLYFLAKE_ID128_LEN] = {};
  char text[POLYFLAKE_UUID_TEXT_LEN];
  check(polyflake_timeid_config_init(nullptr) == N, "timeid_config_init");
  check(polyflake_uuid7_generator_new(nullptr, nullptr, &u) == N, "uuid7_generator_new config");
  check(polyflake_uuid7_generator_new(&tcfg, nullptr, nullptr) == N, "uuid7_generator_new out");
  check(polyflake_ulid_generator_new(nullptr, nullptr, &l) == N, "ulid_generator_new config");
  check(polyflake_next_uuid7(nullptr, bytes) == N, "next_uuid7");
  check(polyflake_next_ulids(nullptr, bytes, 1) == N, "next_ulids");
  check(polyflake_next_uuid7s_within(nullptr, bytes, 1, 10) == N, "next_uuid7s_within");
  check(polyflake_next_ulid_within(nullptr, bytes, 10) == N, "next_ulid_within");
  check(polyflake_uuid7_generator_interrupt(nullptr) == N, "uuid7_generator_interrupt");
  check(polyflake_ulid_generator_interrupt(nullptr) == N, "ulid_generator_interrupt");
  check(polyflake_format_uuid(nullptr, text, sizeof text) == N, "format_uuid");
  check(polyflake_parse_ulid(nullptr, bytes) == N, "parse_ulid");
  check(polyflake_ulid_timestamp_ms(bytes, nullptr) == N, "ulid_timestamp_ms");
  check(u == nullptr && l == nullptr, "out-param written on error");
  polyflake_generator_free(nullptr);
  polyflake_clock_free(nullptr);
  polyflake_uuid7_generator_free(nullptr);
  polyflake_ulid_generator_free(nullptr);
  std::printf("null parameters: ok\n");
}

void threads() {
  polyflake_config cfg;
  polyflake_config_init(&cfg);
  cfg.node_id = 79;
  polyflake_generator *raw = nullptr;
  check(polyflake_generator_new(&cfg, nullptr, &raw) == POLYFLAKE_RESULT_OK,
        "system-clock generator");
  Generator g(raw);
  constexpr int kThreads = 8, kPer = 20000;
  std::vector<std::vector<uint64_t>> out(kThreads);
  std::vector<int> errors(kThreads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      out[t].reserve(kPer);
      for (int i = 0; i < kPer; ++i) {
        uint64_t id = 0;
        if (polyflake_next_id(g.get(), &id) != POLYFLAKE_RESULT_OK ||
            (!out[t].empty() && id <= out[t].back()))
          ++errors[t];
        out[t].push_back(id);
      }
    });
  }
  for (auto &th : pool) th.join();
  std::vector<uint64_t> all;
  for (int t = 0; t < kThreads; ++t) {
    check(errors[t] == 0, "thread " + std::to_string(t) + " errors");
    all.insert(all.end(), out[t].begin(), out[t].end());
  }
  std::sort(all.begin(), all.end());
  check(std::adjacent_find(all.begin(), all.end()) == all.end(), "no duplicate across threads");
  std::printf("threads: %d x %d IDs, no duplicate\n", kThreads, kPer);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s VECTORS_DIR\n", argv[0]);
    return 2;
  }
  const double slack = std::getenv("POLYFLAKE_UNDER_VALGRIND") ? 20.0 : 1.0;
  coverage_lang = fs::path(argv[0]).filename().string();  // test_cpp_shared -> cpp-shared
  if (coverage_lang.rfind("test_", 0) == 0) coverage_lang.erase(0, 5);
  std::replace(coverage_lang.begin(), coverage_lang.end(), '_', '-');
  std::printf("polyflake %s (C++)\n", polyflake_version());
  try {
    layout_vectors(argv[1]);
    format_vectors(argv[1]);
    scenarios(argv[1], slack);
    null_parameters();
    threads();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "FATAL: %s\n", e.what());
    return 2;
  }
  std::printf("%ld checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
