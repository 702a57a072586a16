// The test of include/polyflake.hpp, the header-only C++ API: every public item, with real
// behaviour (IDs increase, batch sizes, the core's codes and messages for bad input, moved-from
// handles, health fields, deadlines and interrupts timed, threads, node-id sources and leases).
//
// Usage: test_polyflake_hpp [ZOOKEEPER_ENSEMBLE ETCD_ENDPOINT]
//   with the two arguments it also leases from that real ZooKeeper and etcd (.build/mk/c.mk runs it
//   beside tests/stores/with_zookeeper.sh and tests/c/with_etcd.sh); POLYFLAKE_CPP_NO_STORES=1
//   skips the etcd/ZooKeeper checks (a library built without the remote stores: .build/mk/sanitize.mk's).
// Built by .build/mk/c.mk (make test-cpp) as C++17 and C++20 with -Wall -Wextra -Wpedantic -Werror,
// against the shared and the static library, run plainly, under valgrind and under ASan+UBSan.
#include "polyflake.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <unistd.h>

namespace pf = polyflake;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

int failures = 0;
long checks = 0;
double slack = 1.0;  // timing bounds are multiplied by it under valgrind
// A lease's reserve: short (a new slot waits it out), but long enough for a late renewal thread
// on a loaded machine; under valgrind (everything about 20 times slower) 5 s.
std::uint64_t reserve_ms() { return slack > 1.0 ? 5000 : 500; }

void check(bool ok, const std::string &what) {
  ++checks;
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  }
}

// Run f, which must throw polyflake::Error with `code`; returns its message ("" if none thrown).
template <class F>
std::string expect_error(const std::string &what, const char *code, F &&f) {
  try {
    f();
  } catch (const pf::Error &e) {
    check(e.code() == code, what + ": code " + std::string(e.code()) + " (" + e.what() + "), wanted " + code);
    check(std::string(e.what()).size() > 0, what + ": an empty message");
    return e.what();
  }
  check(false, what + ": no error, wanted " + code);
  return "";
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

template <class T>
bool strictly_increasing(const std::vector<T> &v) {
  for (std::size_t i = 1; i < v.size(); ++i)
    if (!(v[i - 1] < v[i])) return false;
  return true;
}

// Until `waiting()` (a call on another thread is inside a wait), at most 10 s (times slack).
template <class F>
bool until_waiting(F &&waiting) {
  const Clock::time_point end = Clock::now() + std::chrono::milliseconds(static_cast<long long>(10000 * slack));
  while (Clock::now() < end) {
    if (waiting()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

long long ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

// The reference literal: node 37 at 1737747358021 ms is 141264821508263936.
constexpr std::int64_t kLiteralMs = 1737747358021;
constexpr std::int64_t kLiteralId = 141264821508263936;

// ---------------------------------------------------------------------------------------------

void test_types() {
  static_assert(!std::is_copy_constructible_v<pf::Snowflake>, "generators are move-only");
  static_assert(!std::is_copy_assignable_v<pf::Snowflake>, "generators are move-only");
  static_assert(std::is_nothrow_move_constructible_v<pf::Snowflake>, "a move never throws");
  static_assert(std::is_nothrow_move_assignable_v<pf::Snowflake>, "a move never throws");
  static_assert(!std::is_copy_constructible_v<pf::Uuid7Generator>, "move-only");
  static_assert(std::is_nothrow_move_constructible_v<pf::UlidGenerator>, "a move never throws");
  static_assert(!std::is_copy_constructible_v<pf::ManualClock>, "clocks are move-only");
  static_assert(std::is_nothrow_move_constructible_v<pf::ScriptedClock>, "a move never throws");
  static_assert(std::is_base_of_v<std::runtime_error, pf::Error>, "Error is a runtime_error");
  static_assert(std::is_base_of_v<pf::Clock, pf::ManualClock> && std::is_base_of_v<pf::Clock, pf::ScriptedClock>,
                "one Clock type for the constructors");
  static_assert(std::is_same_v<decltype(std::declval<pf::Snowflake &>().next_id()), std::int64_t>, "int64 IDs");
  static_assert(std::is_same_v<decltype(std::declval<pf::Snowflake &>().try_next_id()), std::optional<std::int64_t>>,
                "optional");
  static_assert(std::is_same_v<decltype(std::declval<pf::Uuid7Generator &>().next_id()), pf::Uuid>, "Uuid");
  static_assert(std::is_same_v<decltype(std::declval<pf::UlidGenerator &>().next_id()), pf::Ulid>, "Ulid");
  static_assert(std::is_convertible_v<pf::TimePoint, std::chrono::system_clock::time_point>,
                "an ID's time is a system_clock time");
  static_assert(std::is_same_v<decltype(pf::Uuid{}.bytes), std::array<std::uint8_t, 16>>, "16 bytes");
  check(pf::max_batch == POLYFLAKE_MAX_BATCH, "max_batch");
  check(pf::forward_step_off == POLYFLAKE_FORWARD_STEP_OFF, "forward_step_off");
}

void test_version_and_error() {
  check(pf::version() == POLYFLAKE_VERSION, "version(): library " + pf::version() + " vs header " POLYFLAKE_VERSION);

  const pf::Error made(POLYFLAKE_RESULT_INVALID_ID, "made by hand");
  check(made.code() == "INVALID_ID" && made.result() == POLYFLAKE_RESULT_INVALID_ID &&
            std::string(made.what()) == "made by hand",
        "Error(result, message)");
  const pf::Error null = pf::Error::from_result(POLYFLAKE_RESULT_NULL_PARAMETER);
  check(null.code() == "NULL_PARAMETER" &&
            std::string(null.what()) == polyflake_result_message(POLYFLAKE_RESULT_NULL_PARAMETER),
        "from_result(NULL_PARAMETER): the boundary's sentence");

  // A node id out of range: the core's code and its message with the numbers.
  std::string msg = expect_error("node id 1024", "INVALID_NODE_ID", [] { pf::Snowflake g{1024}; });
  check(contains(msg, "1024") && contains(msg, "1023"), "node id 1024: the core's message, got: " + msg);
  msg = expect_error("node id -1", "INVALID_NODE_ID", [] { pf::Snowflake g{-1}; });
  check(contains(msg, "-1"), "node id -1: the core's message, got: " + msg);
  try {
    pf::Snowflake g{5000};
    check(false, "node id 5000 accepted");
  } catch (const std::runtime_error &e) {  // catchable as the standard base
    check(contains(e.what(), "5000"), std::string("as runtime_error: ") + e.what());
  }
  pf::Config bad(3);
  bad.max_wait_ms = -1;
  expect_error("max_wait_ms -1", "INVALID_ARGUMENT", [&] { pf::Snowflake g{bad}; });
  bad = pf::Config(3);
  bad.epoch_ms = -5;
  expect_error("epoch -5", "INVALID_EPOCH", [&] { pf::Snowflake g{bad}; });
  bad = pf::Config(3);
  bad.layout = pf::Layout{40, 10, 10};
  expect_error("layout 40/10/10", "INVALID_LAYOUT", [&] { pf::Snowflake g{bad}; });
}

void test_layout_and_free_functions() {
  const pf::Layout def = pf::Layout::preset_default();
  check(def == (pf::Layout{41, 10, 12}), "preset_default is 41/10/12");
  check(pf::Layout::preset_short() == (pf::Layout{39, 12, 12}), "preset_short is 39/12/12");
  check(pf::Layout::preset_long_lived() == pf::Layout::from_name("long_lived"), "preset_long_lived");
  check(pf::Layout::preset_big_fleet() == pf::Layout::from_name("big_fleet"), "preset_big_fleet");
  check(pf::Layout::preset_big_fleet() != def, "operator!=");
  check(pf::Layout::from_name("default") == def && pf::Layout::from_name("41/10/12") == def, "from_name");
  check(pf::Layout::from_name("40/11/12") == (pf::Layout{40, 11, 12}), "from_name T/N/S");
  expect_error("from_name nope", "UNKNOWN_LAYOUT", [] { pf::Layout::from_name("nope"); });
  expect_error("from_name 40/10/10", "INVALID_LAYOUT", [] { pf::Layout::from_name("40/10/10"); });
  const pf::LayoutInfo info = def.describe();
  check(info.max_node_id == 1023 && info.max_sequence == 4095 && info.ids_per_ms == 4096 &&
            info.max_elapsed_ms == (std::uint64_t{1} << 41) - 1 && info.years > 69 && info.years < 70,
        "describe 41/10/12");
  expect_error("describe 0/0/0", "INVALID_LAYOUT", [] { (pf::Layout{0, 0, 0}).describe(); });
  const polyflake_layout c = def.to_c();
  check(c.timestamp_bits == 41 && c.node_bits == 10 && c.sequence_bits == 12 && pf::Layout::from_c(c) == def,
        "to_c / from_c");

  // decode / compose / parse_id / format_id, no generator.
  const pf::Decoded d = pf::decode(def, POLYFLAKE_DEFAULT_EPOCH_MS, kLiteralId);
  check(d.timestamp_ms == kLiteralMs && d.node_id == 37 && d.sequence == 0, "decode the literal");
  check(d.time == pf::TimePoint(std::chrono::milliseconds(kLiteralMs)), "decode: time");
  check(pf::compose(def, POLYFLAKE_DEFAULT_EPOCH_MS, kLiteralMs, 37, 0) == kLiteralId, "compose the literal");
  check(pf::compose(def, POLYFLAKE_DEFAULT_EPOCH_MS, kLiteralMs, 37, 5) == kLiteralId + 5, "compose sequence 5");
  expect_error("compose node 1024", "INVALID_NODE_ID",
               [&] { pf::compose(def, POLYFLAKE_DEFAULT_EPOCH_MS, kLiteralMs, 1024, 0); });
  expect_error("compose sequence 4096", "INVALID_ARGUMENT",
               [&] { pf::compose(def, POLYFLAKE_DEFAULT_EPOCH_MS, kLiteralMs, 1, 4096); });
  expect_error("compose before the epoch", "TIMESTAMP_OVERFLOW",
               [&] { pf::compose(def, POLYFLAKE_DEFAULT_EPOCH_MS, 1000, 1, 0); });
  expect_error("decode -1", "INVALID_ID", [&] { pf::decode(def, POLYFLAKE_DEFAULT_EPOCH_MS, -1); });
  check(pf::format_id(kLiteralId) == "141264821508263936", "format_id");
  check(pf::format_id(0) == "0", "format_id 0");
  check(pf::format_id(INT64_MAX) == "9223372036854775807", "format_id INT64_MAX");
  check(pf::parse_id("141264821508263936") == kLiteralId, "parse_id");
  expect_error("format_id -1", "INVALID_ID", [] { pf::format_id(-1); });
  expect_error("parse_id 12a", "INVALID_ID", [] { pf::parse_id("12a"); });
  expect_error("parse_id 2^63", "INVALID_ID", [] { pf::parse_id("9223372036854775808"); });
  expect_error("parse_id empty", "INVALID_ID", [] { pf::parse_id(""); });
}

void test_config() {
  const pf::Config c;
  check(c.layout == pf::Layout::preset_default() && c.epoch_ms == POLYFLAKE_DEFAULT_EPOCH_MS && c.node_id == 0 &&
            c.mode == pf::Mode::strict && c.max_wait_ms == 5.0 && c.max_lead_ms == 5000 &&
            c.max_forward_step_ms == 60000 && c.forward_confirm_ms == 300000 &&
            c.clock_source == pf::ClockSource::precise && !c.max_clock_error_ms &&
            c.restart_guard == pf::RestartGuard::from_env && !c.state_dir && !c.host_scope,
        "Config(): the core's defaults (a lead limit of 5,000 ms)");
  check(pf::Config(9).node_id == 9, "Config(node_id)");
  pf::Config m(4);
  m.mode = pf::Mode::monotonic;
  m.max_lead_ms = 250;
  m.max_forward_step_ms = pf::forward_step_off;
  m.clock_source = pf::ClockSource::coarse;
  const polyflake_config raw = m.to_c();
  check(raw.node_id == 4 && raw.mode == POLYFLAKE_MODE_MONOTONIC && raw.has_max_lead == 1 && raw.max_lead_ms == 250 &&
            raw.max_forward_step_ms == POLYFLAKE_FORWARD_STEP_OFF && raw.clock_source == POLYFLAKE_CLOCK_SOURCE_COARSE,
        "Config::to_c");
  const pf::Config back(raw);
  check(back.node_id == 4 && back.mode == pf::Mode::monotonic && back.max_lead_ms == 250 &&
            back.max_forward_step_ms == pf::forward_step_off && back.clock_source == pf::ClockSource::coarse,
        "Config(polyflake_config)");
  // The setters chain; the host settings reach the C struct (strings borrowed).
  pf::Config h = pf::Config(5)
                     .with_max_lead_ms(std::nullopt)
                     .with_max_clock_error_ms(250)
                     .with_restart_guard(pf::RestartGuard::off)
                     .with_state_dir("/srv/ids/state")
                     .with_host_scope("billing");
  const polyflake_config hc = h.to_c();
  check(hc.has_max_lead == 0 && hc.has_max_clock_error == 1 && hc.max_clock_error_ms == 250 &&
            hc.restart_guard == POLYFLAKE_RESTART_GUARD_OFF && std::string(hc.state_dir) == "/srv/ids/state" &&
            std::string(hc.host_scope) == "billing",
        "Config setters and to_c: the host settings");
  const pf::Config hb(hc);
  check(!hb.max_lead_ms && hb.max_clock_error_ms == 250 && hb.restart_guard == pf::RestartGuard::off &&
            hb.state_dir == "/srv/ids/state" && hb.host_scope == "billing",
        "Config(polyflake_config): the host settings");

  // A generator's config(): what it runs with.
  pf::ManualClock clock(kLiteralMs);
  const pf::Snowflake g(m, clock);
  const pf::Config got = g.config();
  check(got.node_id == 4 && got.mode == pf::Mode::monotonic && got.max_lead_ms == 250 &&
            got.max_forward_step_ms == pf::forward_step_off && got.layout == pf::Layout::preset_default(),
        "Snowflake::config()");

  const pf::TimeIdConfig t;
  check(t.mode == pf::Mode::strict && t.clock_source == pf::ClockSource::precise && t.max_wait_ms == 5.0 &&
            t.max_forward_step_ms == 60000 && t.forward_confirm_ms == 300000 && t.max_lead_ms == 5000 &&
            !t.max_clock_error_ms,
        "TimeIdConfig(): the core's defaults");
  pf::TimeIdConfig tm;
  tm.mode = pf::Mode::monotonic;
  tm.max_lead_ms = 7;
  const polyflake_timeid_config traw = tm.to_c();
  check(traw.mode == POLYFLAKE_MODE_MONOTONIC && traw.has_max_lead == 1 && traw.max_lead_ms == 7, "TimeIdConfig::to_c");
  pf::TimeIdConfig tbad;
  tbad.max_wait_ms = -3;
  expect_error("TimeIdConfig max_wait_ms -3", "INVALID_ARGUMENT", [&] { pf::Uuid7Generator u{tbad}; });
}

void test_manual_clock_and_literal() {
  pf::ManualClock clock(kLiteralMs);
  check(static_cast<bool>(clock) && clock.get() != nullptr && clock.now_ms() == kLiteralMs, "ManualClock now_ms");
  const pf::Snowflake g(37, clock);
  const std::int64_t id = g.next_id();
  check(id == kLiteralId, "node 37 at 1737747358021 ms is 141264821508263936, got " + std::to_string(id));
  check(g.next_id() == kLiteralId + 1, "the next in the same ms: sequence 1");

  // time for a log line in one call
  const std::chrono::system_clock::time_point when = g.time_of(id);
  const std::time_t secs = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char line[64];
  std::strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count() % 1000;
  check(std::string(line) == "2025-01-24T19:35:58", std::string("time_of: ") + line);
  check(millis == 21, "time_of: the millisecond");
  const pf::Decoded d = g.decode(id);
  check(d.node_id == 37 && d.sequence == 0 && d.timestamp_ms == kLiteralMs, "Snowflake::decode");
  expect_error("Snowflake::decode -1", "INVALID_ID", [&] { g.decode(-1); });

  // A step back: refused, never repeated; try_next_id refuses the same way (not a wait).
  clock.advance_ms(-600);
  check(clock.now_ms() == kLiteralMs - 600, "advance_ms");
  std::string msg = expect_error("a 600 ms step back", "CLOCK_MOVED_BACKWARDS", [&] { g.next_id(); });
  check(contains(msg, "600"), "CLOCK_MOVED_BACKWARDS names the 600 ms: " + msg);
  expect_error("try_next_id on a step back", "CLOCK_MOVED_BACKWARDS", [&] { g.try_next_id(); });
  // A step a year ahead is refused in strict mode; corrected, and time that really passes, is not.
  clock.advance_ms(600 + 31536000000);
  expect_error("a year ahead", "CLOCK_JUMPED_AHEAD", [&] { g.next_id(); });
  clock.set_ms(kLiteralMs);
  clock.elapse_ms(5);
  check(clock.now_ms() == kLiteralMs + 5, "set_ms + elapse_ms");
  const std::int64_t later = g.next_id();
  check(later > id + 1 && g.decode(later).timestamp_ms == kLiteralMs + 5, "after elapse_ms: 5 ms later");

  const pf::Health h = g.health();
  check(h.ok && h.status == "ok" && h.status_code == POLYFLAKE_HEALTH_STATUS_OK && h.reason.empty(), "health ok");
  check(h.node_id == 37 && h.source == "static" && h.mode == pf::Mode::strict, "health node, source, mode");
  check(h.ids_issued == 3 && h.last_issued_ms == kLiteralMs + 5 && h.wall_ms == kLiteralMs + 5 && h.lead_ms == 0,
        "health counters: ids_issued " + std::to_string(h.ids_issued));
  check(h.rewinds_refused == 2 && h.forward_refused == 1 && h.clock_ahead_ms == 0,
        "health: two rewinds (next_id, try_next_id) and one forward step refused (" + std::to_string(h.rewinds_refused) + ", " +
            std::to_string(h.forward_refused) + ")");
  check(h.clock_source == "precise" && h.clock_tick_ns == 0 && h.clock_note.empty(), "health: a test clock");
  check(h.lease_kind == "none" && h.lease_store.empty() && h.lease_phase == "held" && !h.lease_lost &&
            !h.lease_expired && !h.lease_guard_until_ms && h.lease_renewals == 0 && h.lease_failures == 0 &&
            h.lease_last_error.empty() && h.lease_guard_note.empty() && !h.lease_guard_waiting &&
            h.lease_guard_remaining_ms == 0,
        "health: no lease");

  // The clock's tick gives the coarse source a lagging reading.
  pf::ManualClock coarse_clock(kLiteralMs + 3);
  coarse_clock.set_tick_ms(4);
  pf::Config cc(38);
  cc.clock_source = pf::ClockSource::coarse;
  const pf::Snowflake cg(cc, coarse_clock);
  const std::int64_t cid = cg.next_id();
  check(cg.decode(cid).timestamp_ms <= kLiteralMs + 3 && cg.decode(cid).timestamp_ms >= kLiteralMs,
        "coarse source on a ticking clock");
  check(cg.health().clock_source == "coarse", "health clock_source coarse: " + cg.health().clock_source);

  // A scripted clock: prepared readings in order.
  pf::ScriptedClock script({kLiteralMs, kLiteralMs + 10});
  check(static_cast<bool>(script), "ScriptedClock");
  const pf::Snowflake sg(37, script);
  const std::int64_t s1 = sg.next_id(), s2 = sg.next_id();
  check(sg.decode(s1).timestamp_ms == kLiteralMs && sg.decode(s2).timestamp_ms == kLiteralMs + 10,
        "scripted readings in order");
  pf::ScriptedClock empty_script({});
  check(static_cast<bool>(empty_script), "ScriptedClock of no readings");
}

void test_try_and_batches() {
  // 41/21/1: two IDs per millisecond; a frozen test clock spends it at once.
  pf::ManualClock clock(kLiteralMs);
  pf::Config c(7);
  c.layout = pf::Layout{41, 21, 1};
  const pf::Snowflake g(c, clock);
  const std::optional<std::int64_t> a = g.try_next_id(), b = g.try_next_id();
  check(a && b && *b == *a + 1, "try_next_id issues without a wait");
  check(!g.try_next_id(), "try_next_id: nullopt where next_id would wait (the ms is spent)");
  clock.elapse_ms(1);
  const std::optional<std::int64_t> next = g.try_next_id();
  check(next && *next > *b, "try_next_id after a millisecond passed");
  expect_error("a strict batch beyond a frozen ms", "CLOCK_MOVED_BACKWARDS", [&] { g.next_ids(3); });

  // Monotonic: never waits, borrows ahead; health says so.
  pf::ManualClock mclock(kLiteralMs);
  c.mode = pf::Mode::monotonic;
  c.node_id = 8;
  const pf::Snowflake mg(c, mclock);
  const std::vector<std::int64_t> ids = mg.next_ids(10);
  check(ids.size() == 10 && strictly_increasing(ids), "monotonic next_ids(10) on a frozen clock");
  const pf::Health h = mg.health();
  check(h.mode == pf::Mode::monotonic && h.ms_borrowed >= 4 && h.lead_ms >= 4 && h.ids_issued == 10,
        "health: borrowed ahead (ms_borrowed " + std::to_string(h.ms_borrowed) + ")");
  c.max_lead_ms = 2;
  c.node_id = 9;
  const pf::Snowflake lg(c, mclock);
  expect_error("monotonic past max_lead_ms", "LEAD_LIMIT_EXCEEDED", [&] { lg.next_ids(10); });
  check(lg.health().lead_refused == 1, "health lead_refused");

  // Snowflake::monotonic: the named constructor.
  pf::ManualClock nclock(kLiteralMs);
  const pf::Snowflake named = pf::Snowflake::monotonic(10, &nclock);
  check(named.config().mode == pf::Mode::monotonic && named.health().node_id == 10, "Snowflake::monotonic");
  const std::vector<std::int64_t> many = named.next_ids(5000);  // past 4096 in one frozen ms
  check(many.size() == 5000 && strictly_increasing(many), "monotonic 5000 in a frozen ms");

  // Batches on the system clock: sizes, order, the caller's buffer.
  const pf::Snowflake sys(11);
  const std::vector<std::int64_t> batch = sys.next_ids(10000);
  check(batch.size() == 10000 && strictly_increasing(batch), "next_ids(10000): size and order");
  check(sys.next_ids(0).empty(), "next_ids(0): empty");
  std::vector<std::int64_t> buf(1000, -7);
  sys.next_ids(buf.data(), buf.size());
  check(strictly_increasing(buf) && buf.front() > batch.back(), "next_ids(ptr, n) after the vector");
  std::vector<std::int64_t> sized(16, -7);
  sys.next_ids(sized.data(), 4);
  check(sized[3] > buf.back() && sized[4] == -7, "next_ids(ptr, 4) writes 4");
  expect_error("next_ids(nullptr, 1)", "NULL_PARAMETER", [&] { sys.next_ids(nullptr, 1); });
  expect_error("next_ids(max_batch + 1)", "INVALID_ARGUMENT", [&] { sys.next_ids(pf::max_batch + 1); });
  const std::vector<std::int64_t> within = sys.next_ids_within(100, 1s);
  check(within.size() == 100 && strictly_increasing(within) && within.front() > sized[3], "next_ids_within(n, 1s)");
  sys.next_ids_within(buf.data(), buf.size(), 1s);
  check(strictly_increasing(buf) && buf.front() > within.back(), "next_ids_within(ptr, n, 1s)");
  check(sys.next_id_within(0ms) > buf.back(), "next_id_within(0ms): no wait needed, issued");
  check(sys.next_id_within(-5s) > 0, "next_id_within(negative): a passed deadline, no wait needed");
  check(sys.next_id_within(std::chrono::duration<double>(0.25)) > 0, "next_id_within(double seconds)");
  check(sys.next_id_within(std::chrono::hours::max()) > 0, "next_id_within(hours::max): no deadline");
#ifdef POLYFLAKE_HPP_HAS_SPAN
  std::array<std::int64_t, 64> arr{};
  sys.next_ids(std::span<std::int64_t>(arr));
  check(std::is_sorted(arr.begin(), arr.end()) && arr.front() > 0 && arr.front() != arr.back(), "next_ids(span)");
  sys.next_ids_within(std::span<std::int64_t>(arr).first(8), 1s);
  check(arr[0] > arr[63] && arr[8] < arr[7], "next_ids_within(span.first(8))");
#endif

  // Closed: GENERATOR_CLOSED, the buffer untouched, health "closed".
  sys.close();
  sys.close();  // twice is fine
  std::vector<std::int64_t> untouched(8, -7);
  expect_error("next_ids on a closed generator", "GENERATOR_CLOSED", [&] { sys.next_ids(untouched.data(), 8); });
  check(std::all_of(untouched.begin(), untouched.end(), [](std::int64_t v) { return v == -7; }),
        "buffer untouched on error");
  expect_error("next_id on a closed generator", "GENERATOR_CLOSED", [&] { sys.next_id(); });
  expect_error("try_next_id on a closed generator", "GENERATOR_CLOSED", [&] { sys.try_next_id(); });
  const pf::Health closed = sys.health();
  check(!closed.ok && closed.status == "closed" && closed.status_code == POLYFLAKE_HEALTH_STATUS_CLOSED &&
            !closed.reason.empty(),
        "health after close: " + closed.status);
}

void test_deadlines_and_interrupt() {
  // A strict batch of 20,000 on 41/21/1 (2 IDs per ms) would take about 10 s.
  pf::Config c(12);
  c.layout = pf::Layout{41, 21, 1};
  const pf::Snowflake g(c);
  std::vector<std::int64_t> buf(20000, -7);
  Clock::time_point t = Clock::now();
  expect_error("next_ids_within(20000, 100ms)", "INTERRUPTED", [&] { g.next_ids_within(buf.data(), buf.size(), 100ms); });
  long long took = ms_since(t);
  check(took >= 100 && took < 100 + 150 * slack, "cut after 100 ms, took " + std::to_string(took));
  check(buf[0] == -7 && buf[19999] == -7, "buffer untouched after the deadline");
  t = Clock::now();
  expect_error("next_ids_within(20000, 1us)", "INTERRUPTED", [&] { g.next_ids_within(20000, 1us); });
  took = ms_since(t);
  check(took >= 1 && took < 150 * slack, "1 us rounds up to 1 ms, took " + std::to_string(took));

  // interrupt() from another thread cuts a batch in flight; later calls are not affected.
  std::atomic<bool> started{false};
  std::string code;
  const std::uint64_t sleeps = g.health().wait_sleeps;  // before the call: a wait counts once
  std::thread worker([&] {
    started = true;
    try {
      g.next_ids(20000);
      code = "OK";
    } catch (const pf::Error &e) {
      code = std::string(e.code());
    }
  });
  while (!started) std::this_thread::yield();
  check(until_waiting([&] { return g.health().wait_sleeps > sleeps; }), "the batch waits (health wait_sleeps)");
  t = Clock::now();
  g.interrupt();
  worker.join();
  took = ms_since(t);
  check(code == "INTERRUPTED", "interrupt(): the batch in flight fails INTERRUPTED, got " + code);
  check(took < 150 * slack, "interrupt(): the batch ended within a slice, took " + std::to_string(took));
  check(g.next_ids(4).size() == 4, "after interrupt(): calls that begin later are not affected");
  g.wait_ready(1s);  // no lease: at once
  g.wait_ready(0ms);

  // A rewind inside a 60 s budget on a test clock: next_id would wait 30 s.
  pf::ManualClock clock(kLiteralMs);
  pf::Config w(13);
  w.max_wait_ms = 60000;
  const pf::Snowflake wg(w, clock);
  wg.next_id();
  clock.advance_ms(-30000);
  check(!wg.try_next_id(), "try_next_id: nullopt inside the rewind budget");
  t = Clock::now();
  expect_error("next_id_within(50ms) on a 30 s rewind", "INTERRUPTED", [&] { wg.next_id_within(50ms); });
  took = ms_since(t);
  check(took >= 50 && took < 50 + 150 * slack, "next_id_within(50ms), took " + std::to_string(took));
  check(wg.health().rewinds_waited == 0, "health: nothing waited out");
}

void test_moves() {
  pf::ManualClock clock(kLiteralMs);
  pf::Snowflake a(40);  // the system clock: node 40 held host-wide
  const std::int64_t first = a.next_id();
  pf::Snowflake b = std::move(a);
  check(!a && static_cast<bool>(b) && a.get() == nullptr, "moved-from: no handle");  // NOLINT(bugprone-use-after-move)
  check(b.next_id() > first, "the moved-to generator issues on");
  expect_error("next_id on a moved-from Snowflake", "NULL_PARAMETER", [&] { a.next_id(); });
  expect_error("try_next_id on moved-from", "NULL_PARAMETER", [&] { a.try_next_id(); });
  expect_error("next_ids on moved-from", "NULL_PARAMETER", [&] { a.next_ids(3); });
  expect_error("next_ids(0) on moved-from", "NULL_PARAMETER", [&] { a.next_ids(0); });
  expect_error("health on moved-from", "NULL_PARAMETER", [&] { a.health(); });
  expect_error("interrupt on moved-from", "NULL_PARAMETER", [&] { a.interrupt(); });
  expect_error("close on moved-from", "NULL_PARAMETER", [&] { a.close(); });
  expect_error("decode on moved-from", "NULL_PARAMETER", [&] { a.decode(first); });
  expect_error("config on moved-from", "NULL_PARAMETER", [&] { a.config(); });
  expect_error("wait_ready on moved-from", "NULL_PARAMETER", [&] { a.wait_ready(1ms); });

  // The node id is held host-wide until the owner goes: a second one is refused...
  std::string msg = expect_error("node 40 twice", "NODE_ID_IN_USE", [] { pf::Snowflake again(40); });
  check(contains(msg, "40"), "NODE_ID_IN_USE names the node id: " + msg);
  // ...and move-assigning over the owner frees the old handle (and with it node 40).
  b = pf::Snowflake(41);
  check(b.health().node_id == 41, "move-assigned");
  { pf::Snowflake again(40); check(again.next_id() > first, "node 40 free after its owner was replaced"); }
  { pf::Snowflake again(40); check(static_cast<bool>(again), "node 40 free after the destructor closed it"); }

  // adopt(): a handle made with polyflake.h.
  polyflake_config cfg;
  polyflake_config_init(&cfg);
  cfg.node_id = 42;
  polyflake_generator *raw = nullptr;
  check(polyflake_generator_new(&cfg, clock.get(), &raw) == POLYFLAKE_RESULT_OK, "C handle");
  const pf::Snowflake adopted = pf::Snowflake::adopt(raw);
  check(adopted.get() == raw && adopted.next_id() == pf::compose(pf::Layout::preset_default(),
                                                                  POLYFLAKE_DEFAULT_EPOCH_MS, kLiteralMs, 42, 0),
        "adopt(): owns and issues");
  const pf::Snowflake none = pf::Snowflake::adopt(nullptr);
  check(!none, "adopt(nullptr): empty");

  // Clocks: moved-from refuses; generators keep their own reference to a destroyed clock.
  pf::ManualClock c2 = std::move(clock);
  check(!clock && static_cast<bool>(c2), "ManualClock moved");
  expect_error("now_ms on a moved-from clock", "NULL_PARAMETER", [&] { clock.now_ms(); });
  std::optional<pf::Snowflake> outlives;
  {
    pf::ManualClock temp(kLiteralMs);
    outlives.emplace(43, temp);
  }
  check(outlives->next_id() == pf::compose(pf::Layout::preset_default(), POLYFLAKE_DEFAULT_EPOCH_MS, kLiteralMs, 43, 0),
        "a generator outlives its clock object");

  // The 128-bit generators move the same way.
  pf::Uuid7Generator u;
  pf::Uuid7Generator u2 = std::move(u);
  check(!u && static_cast<bool>(u2), "Uuid7Generator moved");
  expect_error("next_id on a moved-from Uuid7Generator", "NULL_PARAMETER", [&] { u.next_id(); });
  pf::UlidGenerator l;
  pf::UlidGenerator l2(std::move(l));
  expect_error("next_ids on a moved-from UlidGenerator", "NULL_PARAMETER", [&] { l.next_ids(2); });
  l = std::move(l2);
  check(static_cast<bool>(l) && !l2 && l.next_id().to_string().size() == 26, "UlidGenerator move-assigned back");
}

void test_threads() {
  const pf::Snowflake g(44);
  std::vector<std::vector<std::int64_t>> got(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5000; ++i) got[t].push_back(g.next_id());
      const std::vector<std::int64_t> more = g.next_ids(5000);
      got[t].insert(got[t].end(), more.begin(), more.end());
    });
  for (std::thread &t : threads) t.join();
  std::set<std::int64_t> all;
  bool ordered = true;
  for (const auto &v : got) {
    ordered = ordered && strictly_increasing(v);
    all.insert(v.begin(), v.end());
  }
  check(all.size() == 40000, "4 threads x 10,000 on one generator: all distinct (" + std::to_string(all.size()) + ")");
  check(ordered, "each thread's IDs increase");
  check(g.health().ids_issued == 40000, "health ids_issued 40000");
}

// A fixed node id's restart guard, the kernel's word on the clock, a user clock and the new error
// class, through the C++ API (the cases between processes: tests/c/test_restart.c).
void test_restart_guard(const std::filesystem::path &tmp) {
  const std::string state = (tmp / "state").string();
  std::filesystem::create_directories(state);
  pf::Config c(930);
  c.restart_guard = pf::RestartGuard::required;
  c.state_dir = state;
  c.host_scope = "cpp-test";
  std::int64_t last = 0;
  {
    const pf::Snowflake g(c);
    last = g.next_id();
    const pf::Health h = g.health();
    check(h.ok && h.lease_kind == "host" && contains(h.lease_store, state) && contains(h.lease_store, "-cpp-test") &&
              h.lease_slot == 930 && h.restart_waits == 0 && h.restart_guard_note.empty(),
          "a static node id's mark: kind " + h.lease_kind + ", store " + h.lease_store);
    check(!h.clock_sync_state.empty() && h.clock_sync_state != "unknown" && h.clock_sync_max_error_us >= -1 &&
              h.clock_sync_synchronized == (h.clock_sync_state != "unsynchronized" && h.clock_sync_state != "unavailable"),
          "health: the kernel says " + h.clock_sync_state);
    expect_error("a second holder here", "NODE_ID_IN_USE", [&] { pf::Snowflake again(c); });
  }
  {
    const pf::Snowflake next(c);  // closed cleanly: the next holder follows at once
    check(next.next_id() > last && next.health().restart_waits == 0, "a new generator follows the last one");
  }
  pf::Config file = c;
  file.node_id = 931;
  file.state_dir = (tmp / "state" / "a-file").string();
  std::FILE *f = std::fopen(file.state_dir->c_str(), "w");
  if (f) std::fclose(f);
  std::string msg = expect_error("required, a file as the state directory", "LEASE_STORE", [&] { pf::Snowflake g(file); });
  check(contains(msg, *file.state_dir) && contains(msg, "POLYFLAKE_STATE_DIR"), "LEASE_STORE names the directory: " + msg);
  file.restart_guard = pf::RestartGuard::off;
  check(pf::Snowflake(file).health().restart_guard_note.rfind("off", 0) == 0, "off: a note in health");
  file.host_scope = "two words";
  msg = expect_error("a scope with a space", "INVALID_ARGUMENT", [&] { pf::Snowflake g(file); });
  check(contains(msg, "\"two words\""), "the scope echoed: " + msg);

  // The kernel's bound: out of range, on a test clock: refused. On this host's kernel as it is.
  pf::Config bound(932);
  bound.max_clock_error_ms = 16001;
  check(contains(expect_error("max_clock_error_ms 16001", "INVALID_ARGUMENT", [&] { pf::Snowflake g(bound); }), "16001"),
        "max_clock_error_ms 16001 echoed");
  bound.max_clock_error_ms = 100;
  pf::ManualClock manual(kLiteralMs);
  expect_error("max_clock_error_ms on a test clock", "INVALID_ARGUMENT", [&] { pf::Snowflake g(bound, manual); });
  bound.restart_guard = pf::RestartGuard::off;
  const pf::Snowflake b(bound);
  if (b.health().clock_sync_state == "unsynchronized") {
    const pf::Error e = [&] {
      try {
        b.next_id();
      } catch (const pf::Error &err) {
        return err;
      }
      return pf::Error(POLYFLAKE_RESULT_OK, "issued");
    }();
    check(e.code() == "CLOCK_UNSYNCHRONIZED" && e.result() == POLYFLAKE_RESULT_CLOCK_UNSYNCHRONIZED &&
              contains(e.what(), "not synchronized"),
          std::string("an unsynchronized kernel refuses a bound generator: ") + e.what());
    check(b.health().status == "clock_unsynchronized" &&
              b.health().status_code == POLYFLAKE_HEALTH_STATUS_CLOCK_UNSYNCHRONIZED,
          "health: clock_unsynchronized");
  }
  pf::TimeIdConfig tc;
  tc.max_clock_error_ms = 0;
  expect_error("a UUIDv7 max_clock_error_ms 0", "INVALID_ARGUMENT", [&] { pf::Uuid7Generator u(tc); });

  // A user clock: no mark (its times are not the host's; its exemption from the host-wide claim
  // takes a second process: tests/c/test_restart.c), the rule in this process; its exception is
  // CLOCK_FAILED.
  std::atomic<bool> fail{false};
  const pf::UserClock user([&] {
    if (fail) throw std::runtime_error("the PTP daemon is not running");
    return static_cast<std::int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  });
  expect_error("required on a user clock", "INVALID_ARGUMENT", [&] { pf::Snowflake g(c, user); });
  c.restart_guard = pf::RestartGuard::from_env;
  const pf::Snowflake u(c, user);
  check(u.next_id() > 0 && u.health().lease_kind == "none" && u.health().restart_guard_note.empty(),
        "a user clock keeps no mark");
  expect_error("a second user-clock holder here", "NODE_ID_IN_USE", [&] { pf::Snowflake again(c, user); });
  expect_error("a system-clock holder beside it here", "NODE_ID_IN_USE", [&] { pf::Snowflake again(c); });
  fail = true;
  msg = expect_error("a user clock that throws", "CLOCK_FAILED", [&] { u.next_id(); });
  check(contains(msg, "the PTP daemon is not running"), "CLOCK_FAILED carries what(): " + msg);
}

void test_node_sources(const std::filesystem::path &tmp) {
  ::setenv("POLYFLAKE_CPP_TEST_NODE", "45", 1);
  const pf::Snowflake env = pf::Snowflake::from_env(pf::Config(), "POLYFLAKE_CPP_TEST_NODE");
  check(env.health().node_id == 45 && env.health().source == "env", "from_env: node 45, source env");
  ::unsetenv("POLYFLAKE_CPP_TEST_NODE");
  expect_error("from_env unset", "INVALID_NODE_SOURCE",
               [] { pf::Snowflake::from_env(pf::Config(), "POLYFLAKE_CPP_TEST_NODE"); });
  ::setenv("POLYFLAKE_CPP_TEST_NODE", "4096", 1);
  expect_error("from_env 4096", "INVALID_NODE_ID",
               [] { pf::Snowflake::from_env(pf::Config(), "POLYFLAKE_CPP_TEST_NODE"); });

  pf::ManualClock clock(kLiteralMs);  // test clocks are exempt from the host-wide hold
  const pf::Snowflake host = pf::Snowflake::from_hostname(pf::Config(), std::string("ids-7.ids.default.svc"), &clock);
  check(host.health().node_id == 7 && host.health().source == "hostname", "from_hostname: ids-7 is node 7");
  expect_error("from_hostname without an ordinal", "INVALID_NODE_SOURCE",
               [&] { pf::Snowflake::from_hostname(pf::Config(), std::string("no-ordinal-here"), &clock); });
  try {  // this host's own name: an ordinal or not, never another code
    const pf::Snowflake own = pf::Snowflake::from_hostname(pf::Config(), std::nullopt, &clock);
    check(own.health().source == "hostname", "from_hostname(nullopt)");
  } catch (const pf::Error &e) {
    check(e.code() == "INVALID_NODE_SOURCE", std::string("from_hostname(nullopt): ") + e.what());
  }
  const pf::Snowflake ip = pf::Snowflake::from_ipv4(pf::Config(), "10.1.7.9", 22, &clock);
  check(ip.health().node_id == 777 && ip.health().source == "ipv4", "from_ipv4 10.1.7.9/22 is node 777");
  std::string msg = expect_error("from_ipv4 /16", "INVALID_NODE_SOURCE",
                                 [&] { pf::Snowflake::from_ipv4(pf::Config(), "10.1.7.9", 16, &clock); });
  check(contains(msg, "16"), "from_ipv4 /16: the core's message: " + msg);
  expect_error("from_ipv4 not an address", "INVALID_NODE_SOURCE",
               [&] { pf::Snowflake::from_ipv4(pf::Config(), "10.1.7", 24, &clock); });

  // File leases.
  const std::string dir = (tmp / "leases").string();
  pf::FileLeaseOptions o(dir);
  check(o.dir == dir && o.slots == POLYFLAKE_ALL_SLOTS && o.reserve_ms == 5000 && o.max_guard_wait_ms == 60000 &&
            !o.identity && !o.heal,
        "FileLeaseOptions: the core's defaults");
  o.slots = 1;
  o.identity = "cpp-test";
  o.reserve_ms = reserve_ms();
  const pf::Snowflake leased = pf::Snowflake::file_lease(pf::Config(), o);
  leased.wait_ready(std::chrono::milliseconds(static_cast<long long>(3 * reserve_ms())));
  const std::int64_t id = leased.next_id();
  const pf::Health h = leased.health();
  check(h.ok && h.source == "file_lease" && h.lease_kind == "file" && h.lease_slot == 0 && h.node_id == 0 &&
            contains(h.lease_store, dir) && h.lease_phase == "held" && !h.lease_lost &&
            h.lease_high_water_ms >= leased.decode(id).timestamp_ms,
        "file lease health: kind " + h.lease_kind + ", store " + h.lease_store + ", phase " + h.lease_phase);
  check(h.lease_guard_until_ms.has_value(), "a new slot is guarded (lease_guard_until_ms)");
  std::string full = expect_error("a second holder of 1 slot", "NO_FREE_SLOT",
                                  [&] { pf::Snowflake::file_lease(pf::Config(), o); });
  pf::FileLeaseOptions bad(dir);
  bad.reserve_ms = 0;
  msg = expect_error("file lease reserve_ms 0", "INVALID_NODE_SOURCE", [&] { pf::Snowflake::file_lease(pf::Config(), bad); });
  check(contains(msg, "reserve"), "reserve_ms 0: the core's message: " + msg);
  pf::Config other(0);
  other.layout = pf::Layout::preset_short();
  pf::FileLeaseOptions o2(dir);
  expect_error("another ID space on the same directory", "ID_SPACE_MISMATCH",
               [&] { pf::Snowflake::file_lease(other, o2); });
  leased.close();
  const pf::Health after = leased.health();
  check(after.status == "closed", "file lease closed: " + after.status);
}

// A lost lease healed (FileLeaseOptions::heal): the slot file deleted under a lease of 2 slots
// heals by itself, the same object issuing again from a new slot, no ID twice across the run, the
// counters going on; heal off (the default): LEASE_LOST for good.
void test_heal(const std::filesystem::path &tmp) {
  for (const bool heal : {true, false}) {
    const std::filesystem::path dir = tmp / (heal ? "heal-on" : "heal-off");
    const std::string what = heal ? "heal on: " : "heal off: ";
    pf::FileLeaseOptions o(dir.string());
    o.slots = 2;
    o.reserve_ms = reserve_ms();
    o.heal = heal;
    const pf::Snowflake g = pf::Snowflake::file_lease(pf::Config(), o);
    g.wait_ready(std::chrono::milliseconds(static_cast<long long>(3 * reserve_ms())));
    std::set<std::int64_t> seen;
    std::size_t minted = 0;
    for (int i = 0; i < 1000; ++i, ++minted) seen.insert(g.next_id());
    const std::int64_t lost = g.config().node_id;
    char name[32];
    std::snprintf(name, sizeof name, "slot-%04lld", static_cast<long long>(lost));
    check(std::filesystem::remove(dir / name), what + "the slot file removed");
    const auto start = Clock::now();
    if (heal) {
      // Mint on through the loss and the heal until 1,000 IDs came after the last refusal.
      const auto limit = std::chrono::milliseconds(static_cast<long long>(3 * reserve_ms() + 10000 * slack));
      int refusals = 0, after = 0;
      while (after < 1000 && Clock::now() - start < limit) {
        try {
          seen.insert(g.next_id());
          ++minted;
          if (refusals > 0) ++after;
        } catch (const pf::Error &e) {
          check(e.code() == "LEASE_LOST" || e.code() == "LEASE_NOT_READY",
                what + "refused with " + std::string(e.code()));
          ++refusals;
          after = 0;
          std::this_thread::sleep_for(1ms);
        }
      }
      check(refusals > 0 && after == 1000, what + "issuing again after the loss: " + std::to_string(refusals) +
                                               " refusals, " + std::to_string(after) + " IDs after");
      g.wait_ready(std::chrono::milliseconds(static_cast<long long>(3 * reserve_ms())));
      const pf::Health h = g.health();
      check(h.ok && h.status == "ok" && !h.lease_lost && h.lease_phase == "held" &&
                static_cast<std::int64_t>(h.node_id) == g.config().node_id && h.lease_slot == h.node_id,
            what + "health after the heal: " + h.status + ", node " + std::to_string(h.node_id));
      check(h.ids_issued >= minted, what + "ids_issued goes on: " + std::to_string(h.ids_issued));
      const std::int64_t id = g.next_id();
      seen.insert(id);
      ++minted;
      check(static_cast<std::int64_t>(g.decode(id).node_id) == g.config().node_id,
            what + "an ID after the heal carries the new slot");
      check(seen.size() == minted, what + "no ID twice: " + std::to_string(minted - seen.size()) + " repeated");
    } else {
      const auto limit = std::chrono::milliseconds(static_cast<long long>(5000 * slack));
      while (g.health().status != "lease_lost" && Clock::now() - start < limit) std::this_thread::sleep_for(10ms);
      std::this_thread::sleep_for(1s);
      const pf::Health h = g.health();
      check(!h.ok && h.status == "lease_lost" && h.lease_lost, what + "lost 1 s later: " + h.status);
      expect_error(what + "next_id", "LEASE_LOST", [&] { g.next_id(); });
      expect_error(what + "wait_ready", "LEASE_LOST", [&] { g.wait_ready(2s); });
      check(seen.size() == minted, what + "no ID twice");
    }
  }
}

void test_store_options() {
  const pf::EtcdOptions e({"http://127.0.0.1:2379"});
  check(e.endpoints.size() == 1 && !e.prefix && e.ttl_s == 10 && e.reserve_ms == 5000 && e.slots == POLYFLAKE_ALL_SLOTS &&
            !e.identity && e.connect_timeout_ms == 2000 && e.max_guard_wait_ms == 60000 && !e.heal &&
            !e.credentials.ca_file && !e.credentials.password,
        "EtcdOptions: the core's defaults");
  const pf::ZooKeeperOptions z("127.0.0.1:2181");
  check(z.ensemble == "127.0.0.1:2181" && !z.prefix && z.session_timeout_ms == 10000 && z.reserve_ms == 5000 &&
            z.slots == POLYFLAKE_ALL_SLOTS && z.connect_timeout_ms == 2000 && z.max_guard_wait_ms == 60000 &&
            !z.heal && !z.credentials.username,
        "ZooKeeperOptions: the core's defaults");
  if (std::getenv("POLYFLAKE_CPP_NO_STORES")) return;

  expect_error("etcd without endpoints", "INVALID_NODE_SOURCE", [] { pf::Snowflake::etcd(pf::Config(), pf::EtcdOptions({})); });
  pf::EtcdOptions ttl({"http://127.0.0.1:1"});
  ttl.ttl_s = 0;
  expect_error("etcd ttl_s 0", "INVALID_NODE_SOURCE", [&] { pf::Snowflake::etcd(pf::Config(), ttl); });
  pf::EtcdOptions ca({"https://127.0.0.1:1"});
  ca.credentials.ca_file = "/nonexistent/polyflake-cpp-ca.pem";
  std::string msg = expect_error("etcd ca_file missing", "INVALID_NODE_SOURCE", [&] { pf::Snowflake::etcd(pf::Config(), ca); });
  check(contains(msg, "/nonexistent/polyflake-cpp-ca.pem"), "etcd ca_file: the message names the file: " + msg);
  pf::EtcdOptions down({"http://127.0.0.1:1"});
  down.connect_timeout_ms = 300;
  expect_error("etcd unreachable", "LEASE_STORE", [&] { pf::Snowflake::etcd(pf::Config(), down); });

  expect_error("zookeeper empty ensemble", "INVALID_NODE_SOURCE",
               [] { pf::Snowflake::zookeeper(pf::Config(), pf::ZooKeeperOptions("")); });
  pf::ZooKeeperOptions rel("127.0.0.1:1");
  rel.prefix = "relative/prefix";
  expect_error("zookeeper relative prefix", "INVALID_NODE_SOURCE", [&] { pf::Snowflake::zookeeper(pf::Config(), rel); });
  pf::ZooKeeperOptions st("127.0.0.1:1");
  st.session_timeout_ms = 0;
  expect_error("zookeeper session timeout 0", "INVALID_NODE_SOURCE", [&] { pf::Snowflake::zookeeper(pf::Config(), st); });
  pf::ZooKeeperOptions zdown("127.0.0.1:1");
  zdown.connect_timeout_ms = 300;
  msg = expect_error("zookeeper unreachable", "LEASE_STORE", [&] { pf::Snowflake::zookeeper(pf::Config(), zdown); });
  check(contains(msg, "ZooKeeper"), "zookeeper unreachable: " + msg);
}

void test_real_stores(const std::string &ensemble, const std::string &endpoint) {
  pf::ZooKeeperOptions z(ensemble);
  z.prefix = "/polyflake/cpp-hpp-test";
  z.identity = "cpp-hpp-test";
  z.reserve_ms = reserve_ms();
  z.credentials.username = "cpp";
  z.credentials.password = "cpp-secret";
  const pf::Snowflake zg = pf::Snowflake::zookeeper(pf::Config(), z);
  zg.wait_ready(std::chrono::milliseconds(static_cast<long long>(10000 * slack)));
  const std::int64_t zid = zg.next_id();
  const pf::Health zh = zg.health();
  check(zid > 0 && zh.source == "zookeeper" && zh.lease_kind == "zookeeper" &&
            contains(zh.lease_store, "/polyflake/cpp-hpp-test") && zh.lease_slot == zh.node_id,
        "ZooKeeper lease: source " + zh.source + ", store " + zh.lease_store);
  pf::ZooKeeperOptions wrong = z;
  wrong.credentials.password = "not-the-password";
  wrong.identity = "cpp-hpp-intruder";
  const std::string msg = expect_error("ZooKeeper: a wrong password", "LEASE_STORE",
                                       [&] { pf::Snowflake::zookeeper(pf::Config(), wrong); });
  check(!contains(msg, "not-the-password"), "a password never appears in a message");
  zg.close();  // one generator per node id per process and ID space: free it for etcd's slots

  pf::EtcdOptions e({endpoint});
  e.prefix = "/polyflake/cpp-hpp-test";
  e.identity = "cpp-hpp-test";
  e.reserve_ms = reserve_ms();
  e.slots = 2;
  const pf::Snowflake eg = pf::Snowflake::etcd(pf::Config(), e);
  eg.wait_ready(std::chrono::milliseconds(static_cast<long long>(10000 * slack)));
  const std::int64_t eid = eg.next_id();
  const pf::Health eh = eg.health();
  check(eid > 0 && eh.source == "etcd" && eh.lease_kind == "etcd" && contains(eh.lease_store, endpoint) &&
            contains(eh.lease_store, "/polyflake/cpp-hpp-test") && eh.lease_slot < 2,
        "etcd lease: source " + eh.source + ", store " + eh.lease_store);
  pf::EtcdOptions e2 = e;
  e2.identity = "cpp-hpp-test-2";
  const pf::Snowflake eg2 = pf::Snowflake::etcd(pf::Config(), e2);
  check(eg2.health().lease_slot != eh.lease_slot, "etcd: a second holder takes the other slot");
  e2.identity = "cpp-hpp-test-3";
  expect_error("etcd: both slots held", "NO_FREE_SLOT", [&] { pf::Snowflake::etcd(pf::Config(), e2); });
}

template <class Gen, class Id>
void test_timeid(const char *name, std::size_t text_len) {
  const std::string n = name;
  const auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const Gen g;
  const std::int64_t before = now_ms();
  const Id id = g.next_id();
  const std::int64_t after = now_ms();
  check(id.timestamp_ms() >= before && id.timestamp_ms() <= after, n + ": timestamp is now");
  check(id.time() == pf::TimePoint(std::chrono::milliseconds(id.timestamp_ms())), n + ": time()");
  const std::string text = id.to_string();
  check(text.size() == text_len, n + ": text length " + std::to_string(text.size()));
  check(Id::parse(text) == id, n + ": parse(to_string()) round trip");
  const std::vector<Id> batch = g.next_ids(1000);
  check(batch.size() == 1000 && strictly_increasing(batch) && id < batch.front(), n + ": next_ids(1000) increasing");
  check(g.next_ids(0).empty(), n + ": next_ids(0)");
  std::vector<Id> buf(100);
  g.next_ids(buf.data(), buf.size());
  check(strictly_increasing(buf) && batch.back() < buf.front(), n + ": next_ids(ptr, n)");
  g.next_ids_within(buf.data(), buf.size(), 1s);
  check(strictly_increasing(buf), n + ": next_ids_within(ptr, n, 1s)");
  check(g.next_ids_within(10, 1s).size() == 10, n + ": next_ids_within(n, 1s)");
  check(buf.back() < g.next_id_within(0ms), n + ": next_id_within(0ms)");
  const std::optional<Id> t = g.try_next_id();
  check(t.has_value(), n + ": try_next_id");
#ifdef POLYFLAKE_HPP_HAS_SPAN
  std::array<Id, 16> arr{};
  g.next_ids(std::span<Id>(arr));
  check(std::is_sorted(arr.begin(), arr.end()) && arr.front() < arr.back(), n + ": next_ids(span)");
  g.next_ids_within(std::span<Id>(arr), 1s);
  check(arr.front() < arr.back(), n + ": next_ids_within(span)");
#endif
  // Comparison operators.
  const Id a = batch[0], b = batch[1];
  check(a == a && a != b && a < b && b > a && a <= b && a <= a && b >= a && b >= b && !(b < a), n + ": operators");
  expect_error(n + ": parse bad text", "INVALID_ID", [] { Id::parse("not an id"); });

  const pf::Health h = g.health();
  check(h.ok && h.status == "ok" && h.node_id == 0 && h.ids_issued == 1 + 1000 + 100 + 100 + 10 + 1 + 1
#ifdef POLYFLAKE_HPP_HAS_SPAN
                                                                            + 32
#endif
        ,
        n + ": health ids_issued " + std::to_string(h.ids_issued));

  // On a frozen test clock: the timestamp is the clock's; strict spends 32,768 per ms then waits.
  pf::ManualClock clock(kLiteralMs);
  const Gen fixed(pf::TimeIdConfig{}, clock);
  check(fixed.next_id().timestamp_ms() == kLiteralMs, n + ": a test clock's timestamp");
  std::size_t issued = 1;  // at most 32,768 per ms (the counter's start may be random)
  while (issued <= 32768 && fixed.try_next_id()) ++issued;
  check(issued <= 32768 && !fixed.try_next_id(),
        n + ": try_next_id nullopt once the ms is spent, after " + std::to_string(issued));
  clock.elapse_ms(1);
  const std::optional<Id> later = fixed.try_next_id();
  check(later && later->timestamp_ms() == kLiteralMs + 1, n + ": try_next_id after a ms passed");
  const Gen mono = Gen::monotonic(&clock);
  const std::vector<Id> many = mono.next_ids(40000);
  check(many.size() == 40000 && strictly_increasing(many) && mono.health().mode == pf::Mode::monotonic &&
            mono.health().ms_borrowed >= 1,
        n + ": monotonic borrows past 32,768 in a frozen ms");
  const Gen mono_sys = Gen::monotonic();
  const Id m1 = mono_sys.next_id();
  const Id m2 = mono_sys.next_id();
  check(m1 < m2 && mono_sys.health().mode == pf::Mode::monotonic, n + ": monotonic() on the system clock");

  // Deadline and interrupt on a 30 s rewind inside a 60 s budget.
  pf::TimeIdConfig wc;
  wc.max_wait_ms = 60000;
  const Gen w(wc, clock);
  w.next_id();
  clock.advance_ms(-30000);
  Clock::time_point start = Clock::now();
  expect_error(n + ": next_id_within(50ms) on a 30 s rewind", "INTERRUPTED", [&] { w.next_id_within(50ms); });
  const long long took = ms_since(start);
  check(took >= 50 && took < 50 + 150 * slack, n + ": within 50 ms, took " + std::to_string(took));
  std::vector<Id> untouched(4);
  expect_error(n + ": next_ids_within(4, 20ms)", "INTERRUPTED", [&] { w.next_ids_within(untouched.data(), 4, 20ms); });
  check(untouched[0] == Id{} && untouched[3] == Id{}, n + ": buffer untouched");
  std::string code;
  const std::uint64_t sleeps = w.health().wait_sleeps;  // before the call: a wait counts once
  std::thread worker([&] {
    try {
      w.next_id();
      code = "OK";
    } catch (const pf::Error &e) {
      code = std::string(e.code());
    }
  });
  check(until_waiting([&] { return w.health().wait_sleeps > sleeps; }), n + ": the call waits (health wait_sleeps)");
  start = Clock::now();
  w.interrupt();
  worker.join();
  check(code == "INTERRUPTED" && ms_since(start) < 150 * slack, n + ": interrupt() cut the wait: " + code);

  fixed.close();
  expect_error(n + ": next_id after close", "GENERATOR_CLOSED", [&] { fixed.next_id(); });
  check(fixed.health().status == "closed" && !fixed.health().ok, n + ": health closed");
  check(fixed.get() != nullptr, n + ": get()");
}

void test_uuid_ulid_values() {
  const pf::Uuid u = pf::Uuid::parse("017F22E2-79B0-7CC3-98C4-DC0C0C07398F");
  check(u.to_string() == "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", "Uuid parse any case, text lower case");
  check(u.bytes[0] == 0x01 && u.bytes[1] == 0x7f && u.bytes[15] == 0x8f, "Uuid bytes big-endian");
  check(u.timestamp_ms() == 0x017F22E279B0, "Uuid timestamp_ms");
  expect_error("Uuid short text", "INVALID_ID", [] { pf::Uuid::parse("017f22e2-79b0-7cc3-98c4"); });
  const pf::Uuid v4 = pf::Uuid::parse("550e8400-e29b-41d4-a716-446655440000");
  expect_error("timestamp of a UUIDv4", "INVALID_ID", [&] { v4.timestamp_ms(); });
  check(pf::Uuid{}.to_string() == "00000000-0000-0000-0000-000000000000", "the nil UUID");

  const pf::Ulid l = pf::Ulid::parse("01arz3ndektsv4rrffq69g5fav");
  check(l.to_string() == "01ARZ3NDEKTSV4RRFFQ69G5FAV", "Ulid parse any case, text upper case");
  check(l.timestamp_ms() == 1469922850259, "Ulid timestamp_ms");
  check(pf::Ulid::parse("01ARZ3NDEKTSV4RRFFQ69G5FAV") == pf::Ulid::parse("O1ARZ3NDEKTSV4RRFFQ69G5FAV"), "O reads as 0");
  expect_error("Ulid overflow", "INVALID_ID", [] { pf::Ulid::parse("8ZZZZZZZZZZZZZZZZZZZZZZZZZ"); });
  const pf::Ulid top = pf::Ulid::parse("7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
  check(top.time().time_since_epoch().count() == top.timestamp_ms() && top.timestamp_ms() == (std::int64_t{1} << 48) - 1,
        "the largest ULID's time, in ms (no overflow)");
}

}  // namespace

int main(int argc, char **argv) {
  if (std::getenv("POLYFLAKE_UNDER_VALGRIND")) slack = 20.0;
  const std::filesystem::path tmp =
      std::filesystem::temp_directory_path() / ("polyflake-hpp-" + std::to_string(::getpid()));
  std::filesystem::remove_all(tmp);
  std::filesystem::create_directories(tmp);
  try {
    test_types();
    test_version_and_error();
    test_layout_and_free_functions();
    test_config();
    test_manual_clock_and_literal();
    test_try_and_batches();
    test_deadlines_and_interrupt();
    test_moves();
    test_threads();
    test_node_sources(tmp);
    test_restart_guard(tmp);
    test_heal(tmp);
    test_store_options();
    test_uuid_ulid_values();
    test_timeid<pf::Uuid7Generator, pf::Uuid>("uuid7", 36);
    test_timeid<pf::UlidGenerator, pf::Ulid>("ulid", 26);
    if (argc == 3) {
      test_real_stores(argv[1], argv[2]);
    } else {
      std::printf("(no ZOOKEEPER_ENSEMBLE ETCD_ENDPOINT given: real stores skipped)\n");
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "FAIL: uncaught %s\n", e.what());
    ++failures;
  }
  std::filesystem::remove_all(tmp);
  std::printf("%s: %ld checks, %d failures (C++ %ld)\n", argv[0], checks, failures, static_cast<long>(__cplusplus));
  return failures == 0 ? 0 : 1;
}
