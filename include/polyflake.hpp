// polyflake.hpp: the C++17 API of polyflake, header-only, over the C ABI of polyflake.h.
//
// Unique, time-sortable IDs (64-bit Snowflake, UUIDv7, ULID) from one Rust core. This header only
// wraps: every rule about IDs (ranges, defaults, layouts, waits, leases) is the core's, reached
// through polyflake.h, and every refusal is the core's, thrown as polyflake::Error with the core's
// code and message. Link it like polyflake.h: pkg-config polyflake (or polyflake-static), or CMake
// `target_link_libraries(app PRIVATE polyflake::cpp)` (or polyflake::cpp_static).
//
//     polyflake::Snowflake gen{37};                     // strict, node 37, the system clock
//     std::int64_t id = gen.next_id();
//     auto when = gen.time_of(id);                      // std::chrono, for a log line
//
// Handles (generators and clocks) are move-only RAII owners of one C handle. Every member
// function of a generator is thread-safe (share one generator per node between threads) except
// assignment and destruction. A moved-from object holds no handle: every call on it throws
// polyflake::Error with code "NULL_PARAMETER" (the C ABI's answer to a NULL handle), and
// `explicit operator bool` is false.
#ifndef POLYFLAKE_HPP
#define POLYFLAKE_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "polyflake.hpp needs C++17 or later (use polyflake.h from C)"
#endif

#include "polyflake.h"

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
#if __cplusplus >= 202002L && __has_include(<span>)
#include <span>
/// Defined when the std::span overloads (C++20) are available.
#define POLYFLAKE_HPP_HAS_SPAN 1
#endif

/// polyflake's C++ API: generators, IDs, test clocks and the core's errors.
namespace polyflake {

/// A point in time at millisecond precision on the system clock (Unix epoch): what an ID carries.
/// Converts implicitly to std::chrono::system_clock::time_point.
using TimePoint = std::chrono::time_point<std::chrono::system_clock, std::chrono::milliseconds>;

/// A failure reported by the core or the C boundary. `code()` is the stable code string
/// (`polyflake_result_name`: "INVALID_NODE_ID", "CLOCK_MOVED_BACKWARDS", ..., the same in every
/// binding); `what()` is the core's message for this failure, with its numbers
/// (`polyflake_last_error_message`), or for a fault of the C boundary (NULL_PARAMETER,
/// BUFFER_TOO_SMALL, PANIC) its sentence (`polyflake_result_message`).
class Error : public std::runtime_error {
 public:
  /// An error with this result code and message.
  Error(polyflake_result result, const std::string &message)
      : std::runtime_error(message), result_(result) {}

  /// The error the C ABI just returned on this thread: `result`, with the core's message.
  static Error from_result(polyflake_result result) {
    const bool boundary = result == POLYFLAKE_RESULT_NULL_PARAMETER ||
                          result == POLYFLAKE_RESULT_BUFFER_TOO_SMALL ||
                          result == POLYFLAKE_RESULT_PANIC;
    if (!boundary) {
      char text[1024];  // polyflake.h: 1024 bytes always suffice
      std::size_t len = 0;
      if (polyflake_last_error_message(text, sizeof text, &len) == POLYFLAKE_RESULT_OK && len > 0)
        return Error(result, std::string(text, len));
    }
    return Error(result, polyflake_result_message(result));
  }

  /// The stable code: "INVALID_NODE_ID", "INTERRUPTED", ... (a static string).
  std::string_view code() const noexcept { return polyflake_result_name(result_); }

  /// The C ABI's numeric result (a `POLYFLAKE_RESULT_*` value).
  polyflake_result result() const noexcept { return result_; }

 private:
  polyflake_result result_;
};

/// Internals of the wrapper; not part of the API.
namespace detail {

/// Throw the Error for `r` unless it is POLYFLAKE_RESULT_OK.
inline void check(polyflake_result r) {
  if (r != POLYFLAKE_RESULT_OK) throw Error::from_result(r);
}

/// A move-only owner of one C handle, freed by `Free` (which accepts NULL).
template <class T, void (*Free)(T *)>
class Handle {
 public:
  Handle() noexcept = default;
  explicit Handle(T *p) noexcept : p_(p) {}
  Handle(Handle &&other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
  Handle &operator=(Handle &&other) noexcept {
    if (this != &other) {
      Free(p_);
      p_ = std::exchange(other.p_, nullptr);
    }
    return *this;
  }
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  ~Handle() { Free(p_); }
  T *get() const noexcept { return p_; }

 private:
  T *p_ = nullptr;
};

/// A `_within` timeout as the C ABI's milliseconds: rounded up (a call never ends before it),
/// zero or negative as 0 (already passed), beyond what milliseconds hold as UINT64_MAX (no
/// deadline).
template <class Rep, class Period>
std::uint64_t timeout_ms(std::chrono::duration<Rep, Period> timeout) {
  if (timeout <= timeout.zero()) return 0;
  const long double ms = std::chrono::duration<long double, std::milli>(timeout).count();
  if (ms >= static_cast<long double>(std::numeric_limits<std::int64_t>::max() / 2))
    return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(std::chrono::ceil<std::chrono::milliseconds>(timeout).count());
}

/// `text` as a NUL-terminated C string for the C ABI, or NULL (the core's default) for nullopt.
inline const char *c_str_or_null(const std::optional<std::string> &text) {
  return text ? text->c_str() : nullptr;
}

}  // namespace detail

/// The library's version ("0.1.0"); the header's is POLYFLAKE_VERSION.
inline std::string version() { return polyflake_version(); }

/// How a Snowflake (or UUIDv7/ULID) generator meets a clock that goes back or a spent millisecond.
enum class Mode : std::uint32_t {
  /// An issued timestamp never exceeds the wall clock: small rewinds (up to max_wait_ms) and a
  /// spent sequence are waited out, larger rewinds refused (CLOCK_MOVED_BACKWARDS).
  strict = POLYFLAKE_MODE_STRICT,
  /// Never waits and never duplicates: borrows from the next millisecond, up to max_lead_ms
  /// (5,000 ms by default) ahead of the wall clock.
  monotonic = POLYFLAKE_MODE_MONOTONIC,
};

/// Whether a fixed node id (static, env, hostname, IPv4) on the system clock keeps a mark on this
/// host, so that its next holder here starts above everything it could have issued.
enum class RestartGuard : std::uint32_t {
  /// The environment's choice: POLYFLAKE_RESTART_GUARD ("auto", "required", "off"), else auto.
  from_env = POLYFLAKE_RESTART_GUARD_DEFAULT,
  /// A mark where the state directory allows it; else none, said on stderr and in health.
  automatic = POLYFLAKE_RESTART_GUARD_AUTO,
  /// A mark, or the constructor throws LEASE_STORE naming the directory and the fixes.
  required = POLYFLAKE_RESTART_GUARD_REQUIRED,
  /// No mark: a successor after a clock stepped back can repeat IDs.
  off = POLYFLAKE_RESTART_GUARD_OFF,
};

/// Which system clock reading a generator uses per ID.
enum class ClockSource : std::uint32_t {
  /// CLOCK_REALTIME for every ID (the default).
  precise = POLYFLAKE_CLOCK_SOURCE_PRECISE,
  /// CLOCK_REALTIME_COARSE, the precise clock only when needed (see polyflake.h).
  coarse = POLYFLAKE_CLOCK_SOURCE_COARSE,
};

/// `Config::max_forward_step_ms` turning the forward-step check off.
inline constexpr std::uint64_t forward_step_off = POLYFLAKE_FORWARD_STEP_OFF;

/// The most IDs one batch call may issue (POLYFLAKE_MAX_BATCH).
inline constexpr std::size_t max_batch = POLYFLAKE_MAX_BATCH;

/// What `Layout::describe` tells of a layout.
struct LayoutInfo {
  /// The largest node id, 2^node_bits - 1.
  std::uint64_t max_node_id;
  /// The largest sequence value, 2^sequence_bits - 1.
  std::uint64_t max_sequence;
  /// IDs one node can issue in one millisecond, 2^sequence_bits.
  std::uint64_t ids_per_ms;
  /// The largest elapsed milliseconds since the epoch, 2^timestamp_bits - 1.
  std::uint64_t max_elapsed_ms;
  /// How many (Julian) years the timestamp field lasts.
  double years;
};

/// The bit layout of a 64-bit ID: timestamp, node and sequence bits (the core judges them).
struct Layout {
  /// Bits of elapsed milliseconds since the epoch.
  std::uint32_t timestamp_bits;
  /// Bits of node id.
  std::uint32_t node_bits;
  /// Bits of per-millisecond sequence.
  std::uint32_t sequence_bits;

  /// The default preset, 41/10/12.
  static Layout preset_default() { return from_c(polyflake_layout_default()); }
  /// The long-lived preset (`polyflake_layout_long_lived`).
  static Layout preset_long_lived() { return from_c(polyflake_layout_long_lived()); }
  /// The big-fleet preset (`polyflake_layout_big_fleet`).
  static Layout preset_big_fleet() { return from_c(polyflake_layout_big_fleet()); }
  /// The short preset, 39/12/12 (`polyflake_layout_short`).
  static Layout preset_short() { return from_c(polyflake_layout_short()); }

  /// A preset by name ("default", "long_lived", "big_fleet", "short") or "T/N/S" such as
  /// "40/11/12". Throws Error UNKNOWN_LAYOUT or INVALID_LAYOUT.
  static Layout from_name(const std::string &name) {
    polyflake_layout out{};
    detail::check(polyflake_layout_from_name(name.c_str(), &out));
    return from_c(out);
  }

  /// The layout's limits. Throws Error INVALID_LAYOUT.
  LayoutInfo describe() const {
    polyflake_layout_info info{};
    detail::check(polyflake_layout_describe(to_c(), &info));
    return {info.max_node_id, info.max_sequence, info.ids_per_ms, info.max_elapsed_ms, info.years};
  }

  /// The C struct.
  polyflake_layout to_c() const { return {timestamp_bits, node_bits, sequence_bits}; }
  /// From the C struct.
  static Layout from_c(const polyflake_layout &l) { return {l.timestamp_bits, l.node_bits, l.sequence_bits}; }

  /// Equal field by field.
  friend bool operator==(const Layout &a, const Layout &b) {
    return a.timestamp_bits == b.timestamp_bits && a.node_bits == b.node_bits &&
           a.sequence_bits == b.sequence_bits;
  }
  /// Not equal.
  friend bool operator!=(const Layout &a, const Layout &b) { return !(a == b); }
};

/// A Snowflake generator's settings. Constructed with the core's defaults
/// (`polyflake_config_init`: layout 41/10/12, epoch 2024-01-01, strict, max_wait_ms 5, a lead
/// limit of 5,000 ms, ...); a value you write is judged by the core as written. The setters
/// return the Config, to chain: `Config(37).with_state_dir("/srv/ids").with_host_scope("billing")`.
struct Config {
  /// The bit layout.
  Layout layout;
  /// The epoch, Unix milliseconds.
  std::int64_t epoch_ms;
  /// The node id (read only by the static constructors; the other sources give the node id).
  std::int64_t node_id;
  /// Strict or monotonic.
  Mode mode;
  /// Strict mode's wait budget in milliseconds.
  double max_wait_ms;
  /// Monotonic mode's limit on running ahead of the wall clock, in ms (default 5,000); nullopt:
  /// no limit at all.
  std::optional<std::int64_t> max_lead_ms;
  /// How far the wall clock may step ahead before it is a forward step, in ms
  /// (`forward_step_off`: no check).
  std::uint64_t max_forward_step_ms;
  /// How long a stepped-ahead clock must hold before it is believed, in ms of elapsed time.
  std::uint64_t forward_confirm_ms;
  /// The clock reading per ID.
  ClockSource clock_source;
  /// Refuse to issue (CLOCK_UNSYNCHRONIZED) while the kernel says the system clock is not
  /// synchronized or its maximum error exceeds this many ms (1 to 16,000); nullopt (the
  /// default): reported in health only.
  std::optional<std::uint64_t> max_clock_error_ms;
  /// A fixed node id's restart guard (default RestartGuard::from_env: the environment's);
  /// `required` with a test or user clock is INVALID_ARGUMENT (they keep no mark).
  RestartGuard restart_guard;
  /// The restart guard's state directory; nullopt: POLYFLAKE_STATE_DIR, else the lease
  /// directory (POLYFLAKE_LEASE_DIR, else /var/tmp/polyflake-leases).
  std::optional<std::string> state_dir;
  /// The host scope of the node id's claim and mark (at most 40 of [A-Za-z0-9._-]); nullopt:
  /// POLYFLAKE_HOST_SCOPE, else the host's one scope.
  std::optional<std::string> host_scope;

  /// The core's defaults.
  Config() : Config(default_c()) {}
  /// The core's defaults with this node id.
  explicit Config(std::int64_t node) : Config() { node_id = node; }
  /// From the C struct.
  explicit Config(const polyflake_config &c)
      : layout(Layout::from_c(c.layout)),
        epoch_ms(c.epoch_ms),
        node_id(c.node_id),
        mode(static_cast<Mode>(c.mode)),
        max_wait_ms(c.max_wait_ms),
        max_lead_ms(c.has_max_lead ? std::optional<std::int64_t>(c.max_lead_ms) : std::nullopt),
        max_forward_step_ms(c.max_forward_step_ms),
        forward_confirm_ms(c.forward_confirm_ms),
        clock_source(static_cast<ClockSource>(c.clock_source)),
        max_clock_error_ms(c.has_max_clock_error ? std::optional<std::uint64_t>(c.max_clock_error_ms)
                                                 : std::nullopt),
        restart_guard(static_cast<RestartGuard>(c.restart_guard)),
        state_dir(c.state_dir ? std::optional<std::string>(c.state_dir) : std::nullopt),
        host_scope(c.host_scope ? std::optional<std::string>(c.host_scope) : std::nullopt) {}

  /// Set the mode; returns *this.
  Config &with_mode(Mode m) { mode = m; return *this; }
  /// Set max_lead_ms (nullopt: no limit); returns *this.
  Config &with_max_lead_ms(std::optional<std::int64_t> ms) { max_lead_ms = ms; return *this; }
  /// Set max_clock_error_ms; returns *this.
  Config &with_max_clock_error_ms(std::optional<std::uint64_t> ms) { max_clock_error_ms = ms; return *this; }
  /// Set the restart guard; returns *this.
  Config &with_restart_guard(RestartGuard g) { restart_guard = g; return *this; }
  /// Set the state directory; returns *this.
  Config &with_state_dir(std::string dir) { state_dir = std::move(dir); return *this; }
  /// Set the host scope; returns *this.
  Config &with_host_scope(std::string scope) { host_scope = std::move(scope); return *this; }

  /// The C struct (its strings borrowed from this Config: keep it alive while the C struct is used).
  polyflake_config to_c() const {
    polyflake_config c = default_c();
    c.layout = layout.to_c();
    c.epoch_ms = epoch_ms;
    c.node_id = node_id;
    c.mode = static_cast<std::uint32_t>(mode);
    c.max_wait_ms = max_wait_ms;
    c.has_max_lead = max_lead_ms ? 1u : 0u;
    c.max_lead_ms = max_lead_ms.value_or(0);
    c.max_forward_step_ms = max_forward_step_ms;
    c.forward_confirm_ms = forward_confirm_ms;
    c.clock_source = static_cast<std::uint32_t>(clock_source);
    c.has_max_clock_error = max_clock_error_ms ? 1u : 0u;
    c.max_clock_error_ms = max_clock_error_ms.value_or(0);
    c.restart_guard = static_cast<std::uint32_t>(restart_guard);
    c.state_dir = detail::c_str_or_null(state_dir);
    c.host_scope = detail::c_str_or_null(host_scope);
    return c;
  }

 private:
  static polyflake_config default_c() {
    polyflake_config c{};
    detail::check(polyflake_config_init(&c));
    return c;
  }
};

/// A UUIDv7 or ULID generator's settings, with the core's defaults (`polyflake_timeid_config_init`).
struct TimeIdConfig {
  /// Strict or monotonic.
  Mode mode;
  /// The clock reading per ID.
  ClockSource clock_source;
  /// Strict mode's wait budget in milliseconds.
  double max_wait_ms;
  /// The forward-step bound in ms (`forward_step_off`: no check).
  std::uint64_t max_forward_step_ms;
  /// How long a stepped-ahead clock must hold before it is believed, in ms.
  std::uint64_t forward_confirm_ms;
  /// Monotonic mode's limit on running ahead of the wall clock, in ms (default 5,000); nullopt:
  /// no limit at all.
  std::optional<std::int64_t> max_lead_ms;
  /// As Config::max_clock_error_ms.
  std::optional<std::uint64_t> max_clock_error_ms;

  /// The core's defaults.
  TimeIdConfig() {
    polyflake_timeid_config c{};
    detail::check(polyflake_timeid_config_init(&c));
    mode = static_cast<Mode>(c.mode);
    clock_source = static_cast<ClockSource>(c.clock_source);
    max_wait_ms = c.max_wait_ms;
    max_forward_step_ms = c.max_forward_step_ms;
    forward_confirm_ms = c.forward_confirm_ms;
    max_lead_ms = c.has_max_lead ? std::optional<std::int64_t>(c.max_lead_ms) : std::nullopt;
    max_clock_error_ms =
        c.has_max_clock_error ? std::optional<std::uint64_t>(c.max_clock_error_ms) : std::nullopt;
  }

  /// The C struct.
  polyflake_timeid_config to_c() const {
    polyflake_timeid_config c{};
    detail::check(polyflake_timeid_config_init(&c));
    c.mode = static_cast<std::uint32_t>(mode);
    c.clock_source = static_cast<std::uint32_t>(clock_source);
    c.max_wait_ms = max_wait_ms;
    c.max_forward_step_ms = max_forward_step_ms;
    c.forward_confirm_ms = forward_confirm_ms;
    c.has_max_lead = max_lead_ms ? 1u : 0u;
    c.max_lead_ms = max_lead_ms.value_or(0);
    c.has_max_clock_error = max_clock_error_ms ? 1u : 0u;
    c.max_clock_error_ms = max_clock_error_ms.value_or(0);
    return c;
  }
};

/// TLS and credentials of an etcd or ZooKeeper lease. A field left nullopt is the core's
/// environment variable (POLYFLAKE_ETCD_CA_FILE, ..., POLYFLAKE_ZOOKEEPER_PASSWORD).
struct Credentials {
  /// A PEM file of the CA certificate(s) the servers' must chain to (turns TLS on).
  std::optional<std::string> ca_file;
  /// A PEM file of this client's certificate (with key_file).
  std::optional<std::string> cert_file;
  /// A PEM file of the private key of cert_file.
  std::optional<std::string> key_file;
  /// The user to authenticate as (etcd auth; ZooKeeper digest).
  std::optional<std::string> username;
  /// The password of username (prefer the environment variable to a literal in code).
  std::optional<std::string> password;
};

/// A file lease: the node id is a free slot of a directory of slot files (one host, no server).
/// The other fields start at the core's defaults (`polyflake_file_lease_options_init`).
struct FileLeaseOptions {
  /// The lease directory (created if missing), shared by every process sharing node ids.
  std::string dir;
  /// How many slots to use (POLYFLAKE_ALL_SLOTS: every node id).
  std::uint32_t slots;
  /// A stable identity whose previous slot is tried first; nullopt: this host's name.
  std::optional<std::string> identity;
  /// How far ahead of the clock the high-water mark R is kept, in ms.
  std::uint64_t reserve_ms;
  /// A slot guarded longer than this (ms) is taken only when no other slot is free.
  std::uint64_t max_guard_wait_ms;
  /// Heal a lost lease (default false): take a new slot in the background, behind its restart
  /// guard, and go on issuing from it (config().node_id changes; the counters go on). Off: a
  /// lost lease throws LEASE_LOST for good.
  bool heal;

  /// The core's defaults, on this directory.
  explicit FileLeaseOptions(std::string directory) : dir(std::move(directory)) {
    polyflake_file_lease_options c{};
    detail::check(polyflake_file_lease_options_init(&c));
    slots = c.common.slots;
    reserve_ms = c.common.reserve_ms;
    max_guard_wait_ms = c.common.max_guard_wait_ms;
    heal = c.common.heal;
  }
};

/// An etcd lease: the node id is a slot of an etcd v3 cluster. The other fields start at the
/// core's defaults (`polyflake_etcd_options_init`).
struct EtcdOptions {
  /// The cluster's client URLs ("http://127.0.0.1:2379").
  std::vector<std::string> endpoints;
  /// The key prefix, one per ID space; nullopt: the core's "/polyflake".
  std::optional<std::string> prefix;
  /// The etcd lease's time to live in seconds.
  std::int64_t ttl_s;
  /// How far ahead of the clock R is kept, in ms.
  std::uint64_t reserve_ms;
  /// As in FileLeaseOptions.
  std::uint32_t slots;
  /// As in FileLeaseOptions.
  std::optional<std::string> identity;
  /// The timeout of connecting and of each request, in ms.
  std::uint64_t connect_timeout_ms;
  /// As in FileLeaseOptions.
  std::uint64_t max_guard_wait_ms;
  /// As in FileLeaseOptions.
  bool heal;
  /// TLS and authentication.
  Credentials credentials;

  /// The core's defaults, on these endpoints.
  explicit EtcdOptions(std::vector<std::string> urls) : endpoints(std::move(urls)) {
    polyflake_etcd_options c{};
    detail::check(polyflake_etcd_options_init(&c));
    ttl_s = c.ttl_s;
    reserve_ms = c.common.reserve_ms;
    slots = c.common.slots;
    connect_timeout_ms = c.store.connect_timeout_ms;
    max_guard_wait_ms = c.common.max_guard_wait_ms;
    heal = c.common.heal;
  }
};

/// A ZooKeeper lease: the node id is a slot of a ZooKeeper ensemble (3.5+). The other fields
/// start at the core's defaults (`polyflake_zookeeper_options_init`).
struct ZooKeeperOptions {
  /// ZooKeeper's connect string, "host:port" or "host:port,host:port,...".
  std::string ensemble;
  /// The znode prefix, an absolute path, one per ID space; nullopt: the core's "/polyflake".
  std::optional<std::string> prefix;
  /// The session timeout asked of the ensemble, in ms: the lease's time to live.
  std::uint64_t session_timeout_ms;
  /// How far ahead of the clock R is kept, in ms.
  std::uint64_t reserve_ms;
  /// As in FileLeaseOptions.
  std::uint32_t slots;
  /// As in FileLeaseOptions.
  std::optional<std::string> identity;
  /// The timeout of connecting and of each request, in ms.
  std::uint64_t connect_timeout_ms;
  /// As in FileLeaseOptions.
  std::uint64_t max_guard_wait_ms;
  /// As in FileLeaseOptions.
  bool heal;
  /// TLS and authentication (digest: the znodes created are writable by this user only).
  Credentials credentials;

  /// The core's defaults, on this ensemble.
  explicit ZooKeeperOptions(std::string connect) : ensemble(std::move(connect)) {
    polyflake_zookeeper_options c{};
    detail::check(polyflake_zookeeper_options_init(&c));
    session_timeout_ms = c.session_timeout_ms;
    reserve_ms = c.common.reserve_ms;
    slots = c.common.slots;
    connect_timeout_ms = c.store.connect_timeout_ms;
    max_guard_wait_ms = c.common.max_guard_wait_ms;
    heal = c.common.heal;
  }
};

/// A test clock: a manual or scripted clock for any generator constructor (omitted: the system
/// clock). Generators keep their own reference: a clock may be destroyed before them. Move-only.
class Clock {
 public:
  /// The C handle (NULL once moved from); still owned by this object.
  polyflake_clock *get() const noexcept { return handle_.get(); }
  /// True while this object holds a handle (false once moved from).
  explicit operator bool() const noexcept { return get() != nullptr; }

 protected:
  /// Own `clock`.
  explicit Clock(polyflake_clock *clock) noexcept : handle_(clock) {}

 private:
  detail::Handle<polyflake_clock, polyflake_clock_free> handle_;
};

/// A clock that moves only when told to (`polyflake_manual_clock_new`): a wall reading, and an
/// elapsed-time reading starting at 0.
class ManualClock : public Clock {
 public:
  /// A clock reading `start_ms` (Unix ms).
  explicit ManualClock(std::int64_t start_ms) : Clock(make(start_ms)) {}

  /// Step the wall reading to `ms` (elapsed time does not move: a rewind or a forward step).
  void set_ms(std::int64_t ms) const { detail::check(polyflake_manual_clock_set(get(), ms)); }
  /// Step the wall reading by `delta_ms` (negative: back; elapsed time does not move).
  void advance_ms(std::int64_t delta_ms) const {
    detail::check(polyflake_manual_clock_advance(get(), delta_ms));
  }
  /// Let `ms` milliseconds pass: the wall and the elapsed-time readings both move.
  void elapse_ms(std::uint64_t ms) const { detail::check(polyflake_manual_clock_elapse(get(), ms)); }
  /// Give the clock a coarse reading rounded down to a multiple of `tick_ms` (set it before
  /// making generators on the clock).
  void set_tick_ms(std::int64_t tick_ms) const {
    detail::check(polyflake_manual_clock_set_tick_ms(get(), tick_ms));
  }
  /// The wall reading, Unix ms.
  std::int64_t now_ms() const {
    std::int64_t ms = 0;
    detail::check(polyflake_manual_clock_get(get(), &ms));
    return ms;
  }

 private:
  static polyflake_clock *make(std::int64_t start_ms) {
    polyflake_clock *c = nullptr;
    detail::check(polyflake_manual_clock_new(start_ms, &c));
    return c;
  }
};

/// A user's own time source that follows real time (PTP, a GPS receiver), read through a
/// function (`polyflake_user_clock_new`): `now` returns Unix ms, or throws to fail the call that
/// read it (CLOCK_FAILED with the exception's what()). Called from any thread that calls a
/// generator on it: it must be thread-safe. Its times are not the host's: a generator on it holds
/// its node id in this process only and keeps no restart-guard mark.
class UserClock : public Clock {
 public:
  /// A clock reading `now()`.
  explicit UserClock(std::function<std::int64_t()> now) : Clock(make(std::move(now))) {}

 private:
  using Fn = std::function<std::int64_t()>;
  static std::int32_t read(void *context, std::int64_t *out_ms, char *why, std::size_t why_len) noexcept {
    try {
      *out_ms = (*static_cast<Fn *>(context))();
      return 0;
    } catch (const std::exception &e) {
      std::snprintf(why, why_len, "%s", e.what());
    } catch (...) {
      std::snprintf(why, why_len, "an exception that is not a std::exception");
    }
    return 1;
  }
  static void release(void *context) noexcept { delete static_cast<Fn *>(context); }
  static polyflake_clock *make(Fn now) {
    auto fn = std::make_unique<Fn>(std::move(now));
    polyflake_clock *c = nullptr;
    detail::check(polyflake_user_clock_new(read, release, fn.get(), &c));
    fn.release();  // owned by the clock now: freed by `release` with its last generator
    return c;
  }
};

/// A clock reading prepared values in order, then the last one plus 1, 2, ...
/// (`polyflake_scripted_clock_new`; each read is one ms of elapsed time).
class ScriptedClock : public Clock {
 public:
  /// A clock reading `readings` (Unix ms; copied) in order.
  explicit ScriptedClock(const std::vector<std::int64_t> &readings) : Clock(make(readings)) {}

 private:
  static polyflake_clock *make(const std::vector<std::int64_t> &readings) {
    polyflake_clock *c = nullptr;
    detail::check(polyflake_scripted_clock_new(readings.empty() ? nullptr : readings.data(),
                                               readings.size(), &c));
    return c;
  }
};

/// A generator's health snapshot (`polyflake_health`): names as the core spells them.
struct Health {
  /// True when the generator can issue now.
  bool ok;
  /// Why it is or is not healthy: "ok", "clock_behind", "closed", ...
  std::string status;
  /// The same as a `POLYFLAKE_HEALTH_STATUS_*` value.
  std::uint32_t status_code;
  /// A human-readable reason; empty when ok.
  std::string reason;
  /// The node id (0 for UUIDv7 and ULID generators).
  std::uint32_t node_id;
  /// Where the node id came from: "static", "env", "hostname", "ipv4", "file_lease", "etcd",
  /// "zookeeper".
  std::string source;
  /// Strict or monotonic.
  Mode mode;
  /// The millisecond (Unix) of the last issued ID; nullopt before the first.
  std::optional<std::int64_t> last_issued_ms;
  /// The wall clock when the snapshot was taken, Unix ms (0 if the clock failed).
  std::int64_t wall_ms;
  /// How far the last issued millisecond is ahead of the wall clock (0 when it is not).
  std::int64_t lead_ms;
  /// IDs issued so far.
  std::uint64_t ids_issued;
  /// Calls that waited out a small rewind and then succeeded.
  std::uint64_t rewinds_waited;
  /// Calls refused because the clock was behind (or stuck) past the wait budget.
  std::uint64_t rewinds_refused;
  /// Times a strict call found the millisecond's sequence spent and had to wait.
  std::uint64_t sequence_exhaustions;
  /// Sleeps taken while waiting.
  std::uint64_t wait_sleeps;
  /// Milliseconds a monotonic generator moved into ahead of the wall clock.
  std::uint64_t ms_borrowed;
  /// Monotonic calls refused by max_lead_ms.
  std::uint64_t lead_refused;
  /// How far the wall clock reads ahead of what elapsed time vouches for, while not believed.
  std::int64_t clock_ahead_ms;
  /// Strict calls refused because the clock had stepped ahead.
  std::uint64_t forward_refused;
  /// The clock reading in use: "precise" or "coarse".
  std::string clock_source;
  /// The resolution of the system clock in use, in ns; 0 for a test clock.
  std::uint64_t clock_tick_ns;
  /// Why a requested coarse source is not in use; empty otherwise.
  std::string clock_note;
  /// The lease's store: "none", "file", "etcd", "zookeeper", or "host": a fixed node id's mark
  /// on this host (its restart guard).
  std::string lease_kind;
  /// The directory, or the endpoints (ensemble) and key prefix, or the mark's path; empty
  /// without a lease.
  std::string lease_store;
  /// The slot held, which is the node id.
  std::uint32_t lease_slot;
  /// The high-water mark R (Unix ms).
  std::int64_t lease_high_water_ms;
  /// What the slot's previous holder may have reached (nullopt: the slot was not guarded).
  std::optional<std::int64_t> lease_guard_until_ms;
  /// True while the restart guard waits (`wait_ready` waits it out).
  bool lease_guard_waiting;
  /// How long the restart guard still waits, in ms.
  std::uint64_t lease_guard_remaining_ms;
  /// Why the guard is long; else empty.
  std::string lease_guard_note;
  /// Lease renewals.
  std::uint64_t lease_renewals;
  /// Failed lease renewals.
  std::uint64_t lease_failures;
  /// True once the lease is lost (the generator has stopped for good, or heals: heal).
  bool lease_lost;
  /// True while the next ID would pass R.
  bool lease_expired;
  /// Where the lease stands: "held", "restart_guard", "expired", "lost".
  std::string lease_phase;
  /// The last store error, or why the lease was lost; empty if none.
  std::string lease_last_error;
  /// Calls that waited for a fixed node id's restart guard.
  std::uint64_t restart_waits;
  /// Why a fixed node id on the system clock keeps no mark on this host; empty when it keeps one.
  std::string restart_guard_note;
  /// What the kernel says of the system clock: "ok", "insert_leap", "delete_leap",
  /// "leap_in_progress", "leap_done", "unsynchronized", "unavailable".
  std::string clock_sync_state;
  /// True when a time daemon keeps the system clock synchronized.
  bool clock_sync_synchronized;
  /// The kernel's maximum error of the clock, in µs (-1: unavailable).
  std::int64_t clock_sync_max_error_us;
  /// The kernel's estimated error of the clock, in µs (-1: unavailable).
  std::int64_t clock_sync_est_error_us;

  /// From the C snapshot.
  static Health from_c(const polyflake_health_snapshot &h) {
    Health o{};
    o.ok = h.ok;
    o.status = polyflake_health_status_name(h.status);
    o.status_code = h.status;
    o.reason = h.reason;
    o.node_id = h.node_id;
    o.source = polyflake_node_source_name(h.source);
    o.mode = static_cast<Mode>(h.mode);
    o.last_issued_ms = h.has_last_issued ? std::optional<std::int64_t>(h.last_issued_ms) : std::nullopt;
    o.wall_ms = h.wall_ms;
    o.lead_ms = h.lead_ms;
    o.ids_issued = h.ids_issued;
    o.rewinds_waited = h.rewinds_waited;
    o.rewinds_refused = h.rewinds_refused;
    o.sequence_exhaustions = h.sequence_exhaustions;
    o.wait_sleeps = h.wait_sleeps;
    o.ms_borrowed = h.ms_borrowed;
    o.lead_refused = h.lead_refused;
    o.clock_ahead_ms = h.clock_ahead_ms;
    o.forward_refused = h.forward_refused;
    o.clock_source = polyflake_clock_source_name(h.clock_source);
    o.clock_tick_ns = h.clock_tick_ns;
    o.clock_note = h.clock_note;
    o.lease_kind = polyflake_lease_kind_name(h.lease_kind);
    o.lease_store = h.lease_store;
    o.lease_slot = h.lease_slot;
    o.lease_high_water_ms = h.lease_high_water_ms;
    o.lease_guard_until_ms =
        h.lease_has_guard ? std::optional<std::int64_t>(h.lease_guard_until_ms) : std::nullopt;
    o.lease_guard_waiting = h.lease_guard_waiting;
    o.lease_guard_remaining_ms = h.lease_guard_remaining_ms;
    o.lease_guard_note = h.lease_guard_note;
    o.lease_renewals = h.lease_renewals;
    o.lease_failures = h.lease_failures;
    o.lease_lost = h.lease_lost;
    o.lease_expired = h.lease_expired;
    o.lease_phase = polyflake_lease_phase_name(h.lease_phase);
    o.lease_last_error = h.lease_last_error;
    o.restart_waits = h.restart_waits;
    o.restart_guard_note = h.restart_guard_note;
    o.clock_sync_state = polyflake_clock_sync_state_name(h.clock_sync_state);
    o.clock_sync_synchronized = h.clock_sync_synchronized;
    o.clock_sync_max_error_us = h.clock_sync_max_error_us;
    o.clock_sync_est_error_us = h.clock_sync_est_error_us;
    return o;
  }
};

/// The parts of a Snowflake ID.
struct Decoded {
  /// When the ID was made at the latest (a monotonic generator may run ahead of the wall clock).
  TimePoint time;
  /// The same, Unix ms.
  std::int64_t timestamp_ms;
  /// The node that made it.
  std::uint32_t node_id;
  /// Its position within that node's millisecond.
  std::uint32_t sequence;

  /// From the C struct.
  static Decoded from_c(const polyflake_decoded &d) {
    return {TimePoint(std::chrono::milliseconds(d.timestamp_ms)), d.timestamp_ms, d.node_id, d.sequence};
  }
};

/// Decode `id` for a layout and epoch (no generator needed). Throws Error INVALID_LAYOUT,
/// INVALID_ID (negative).
inline Decoded decode(const Layout &layout, std::int64_t epoch_ms, std::int64_t id) {
  polyflake_decoded d{};
  detail::check(polyflake_decode(layout.to_c(), epoch_ms, static_cast<std::uint64_t>(id), &d));
  return Decoded::from_c(d);
}

/// Pack a Unix-ms timestamp, node id and sequence into an ID (the inverse of decode). Throws
/// Error INVALID_LAYOUT, TIMESTAMP_OVERFLOW, INVALID_NODE_ID, INVALID_ARGUMENT.
inline std::int64_t compose(const Layout &layout, std::int64_t epoch_ms, std::int64_t unix_ms,
                            std::uint64_t node_id, std::uint64_t sequence) {
  std::uint64_t id = 0;
  detail::check(polyflake_compose(layout.to_c(), epoch_ms, unix_ms, node_id, sequence, &id));
  return static_cast<std::int64_t>(id);
}

/// Parse a decimal ID (ASCII digits only, below 2^63; read up to a NUL). Throws Error INVALID_ID.
inline std::int64_t parse_id(const std::string &text) {
  std::uint64_t id = 0;
  detail::check(polyflake_parse_id(text.c_str(), &id));
  return static_cast<std::int64_t>(id);
}

/// An ID as decimal text. Throws Error INVALID_ID (negative).
inline std::string format_id(std::int64_t id) {
  char text[POLYFLAKE_ID_TEXT_LEN];
  std::size_t len = 0;
  detail::check(polyflake_format_id(static_cast<std::uint64_t>(id), text, sizeof text, &len));
  return std::string(text, len);
}

/// A Snowflake generator: 64-bit IDs (as std::int64_t, always >= 0) for one node id. Move-only;
/// every member function is thread-safe. Errors are the core's, thrown as Error.
class Snowflake {
 public:
  /// Strict mode on the system clock with the core's defaults for this static node id (held
  /// host-wide: another live generator with it is NODE_ID_IN_USE; its mark on this host makes
  /// its next holder start above everything it issued). Throws Error INVALID_NODE_ID (out of the
  /// layout's range), NODE_ID_IN_USE, ...
  explicit Snowflake(std::int64_t node_id) : Snowflake(Config(node_id)) {}
  /// As above, on a test clock.
  Snowflake(std::int64_t node_id, const Clock &clock) : Snowflake(Config(node_id), clock) {}
  /// These settings, static node id `config.node_id`, on the system clock.
  explicit Snowflake(const Config &config) : Snowflake(Adopt{}, make(config, nullptr)) {}
  /// These settings on a test clock.
  Snowflake(const Config &config, const Clock &clock) : Snowflake(Adopt{}, make(config, clock.get())) {}

  /// Monotonic mode (never waits, borrows ahead) with the core's defaults for this node id.
  static Snowflake monotonic(std::int64_t node_id, const Clock *clock = nullptr) {
    Config c(node_id);
    c.mode = Mode::monotonic;
    return Snowflake(Adopt{}, make(c, clock ? clock->get() : nullptr));
  }

  /// The node id leased from a directory of slot files (`config.node_id` ignored); call
  /// wait_ready before the first ID. Throws Error NO_FREE_SLOT, LEASE_STORE,
  /// INVALID_NODE_SOURCE, ID_SPACE_MISMATCH, ...
  static Snowflake file_lease(const Config &config, const FileLeaseOptions &options,
                              const Clock *clock = nullptr) {
    polyflake_config c = config.to_c();
    polyflake_file_lease_options o{};
    detail::check(polyflake_file_lease_options_init(&o));
    o.dir = options.dir.c_str();
    o.common = lease_common(options);
    polyflake_generator *g = nullptr;
    detail::check(polyflake_generator_new_file_lease(&c, &o, clock ? clock->get() : nullptr, &g));
    return Snowflake(Adopt{}, g);
  }

  /// The node id leased from an etcd cluster. Throws Error LEASE_STORE (unreachable, refused),
  /// NO_FREE_SLOT, INVALID_NODE_SOURCE (no endpoint, options out of range), ...
  static Snowflake etcd(const Config &config, const EtcdOptions &options,
                        const Clock *clock = nullptr) {
    polyflake_config c = config.to_c();
    std::vector<const char *> endpoints;
    for (const std::string &e : options.endpoints) endpoints.push_back(e.c_str());
    polyflake_etcd_options o{};
    detail::check(polyflake_etcd_options_init(&o));
    o.endpoints = endpoints.empty() ? nullptr : endpoints.data();
    o.endpoint_count = endpoints.size();
    o.ttl_s = options.ttl_s;
    o.store = remote_store(options);
    o.common = lease_common(options);
    polyflake_generator *g = nullptr;
    detail::check(polyflake_generator_new_etcd(&c, &o, clock ? clock->get() : nullptr, &g));
    return Snowflake(Adopt{}, g);
  }

  /// The node id leased from a ZooKeeper ensemble. Throws Error LEASE_STORE, NO_FREE_SLOT,
  /// INVALID_NODE_SOURCE (an empty ensemble, a relative prefix, ...), ...
  static Snowflake zookeeper(const Config &config, const ZooKeeperOptions &options,
                             const Clock *clock = nullptr) {
    polyflake_config c = config.to_c();
    polyflake_zookeeper_options o{};
    detail::check(polyflake_zookeeper_options_init(&o));
    o.ensemble = options.ensemble.c_str();
    o.session_timeout_ms = options.session_timeout_ms;
    o.store = remote_store(options);
    o.common = lease_common(options);
    polyflake_generator *g = nullptr;
    detail::check(polyflake_generator_new_zookeeper(&c, &o, clock ? clock->get() : nullptr, &g));
    return Snowflake(Adopt{}, g);
  }

  /// The static node id in the environment variable `var` (decimal). Throws Error
  /// INVALID_NODE_SOURCE (unset, not a number), INVALID_NODE_ID, NODE_ID_IN_USE, ...
  static Snowflake from_env(const Config &config, const std::string &var,
                            const Clock *clock = nullptr) {
    polyflake_config c = config.to_c();
    polyflake_generator *g = nullptr;
    detail::check(polyflake_generator_new_from_env(&c, var.c_str(), clock ? clock->get() : nullptr, &g));
    return Snowflake(Adopt{}, g);
  }

  /// The static node id at the end of a StatefulSet-style hostname ("ids-7.ids.svc" is 7);
  /// nullopt: this host's name. Throws Error INVALID_NODE_SOURCE, ...
  static Snowflake from_hostname(const Config &config, const std::optional<std::string> &hostname,
                                 const Clock *clock = nullptr) {
    polyflake_config c = config.to_c();
    polyflake_generator *g = nullptr;
    detail::check(polyflake_generator_new_from_hostname(&c, detail::c_str_or_null(hostname),
                                                        clock ? clock->get() : nullptr, &g));
    return Snowflake(Adopt{}, g);
  }

  /// The static node id from the low `32 - prefix_len` bits of the IPv4 address `addr`
  /// ("10.1.7.9") in a stated subnet. Throws Error INVALID_NODE_SOURCE, ...
  static Snowflake from_ipv4(const Config &config, const std::string &addr, std::int64_t prefix_len,
                             const Clock *clock = nullptr) {
    polyflake_config c = config.to_c();
    polyflake_generator *g = nullptr;
    detail::check(polyflake_generator_new_from_ipv4(&c, addr.c_str(), prefix_len,
                                                    clock ? clock->get() : nullptr, &g));
    return Snowflake(Adopt{}, g);
  }

  /// Take ownership of a C handle made with polyflake.h (NULL: an empty object whose calls
  /// throw NULL_PARAMETER).
  static Snowflake adopt(polyflake_generator *handle) noexcept { return Snowflake(Adopt{}, handle); }

  /// One ID. Strict mode may wait (a small rewind, a spent millisecond, a fixed node id's
  /// restart guard after its previous holder was killed: up to 10 s). Throws Error
  /// CLOCK_MOVED_BACKWARDS, CLOCK_JUMPED_AHEAD, LEAD_LIMIT_EXCEEDED, LEASE_NOT_READY,
  /// CLOCK_UNSYNCHRONIZED, GENERATOR_CLOSED, INTERRUPTED (interrupt() cut its wait), ...
  std::int64_t next_id() const {
    std::uint64_t id = 0;
    detail::check(polyflake_next_id(get(), &id));
    return static_cast<std::int64_t>(id);
  }

  /// One ID if that needs no wait; nullopt where next_id would wait (or interrupt() ran). Other
  /// refusals throw as in next_id. (`polyflake_next_id_within` with a timeout of 0.)
  std::optional<std::int64_t> try_next_id() const {
    std::uint64_t id = 0;
    const polyflake_result r = polyflake_next_id_within(get(), &id, 0);
    if (r == POLYFLAKE_RESULT_INTERRUPTED) return std::nullopt;
    detail::check(r);
    return static_cast<std::int64_t>(id);
  }

  /// next_id whose waits end after `timeout` (rounded up to ms): then Error INTERRUPTED. A call
  /// that needs no wait issues whatever the timeout.
  template <class Rep, class Period>
  std::int64_t next_id_within(std::chrono::duration<Rep, Period> timeout) const {
    std::uint64_t id = 0;
    detail::check(polyflake_next_id_within(get(), &id, detail::timeout_ms(timeout)));
    return static_cast<std::int64_t>(id);
  }

  /// `n` increasing IDs (n up to max_batch, else Error INVALID_ARGUMENT). A strict batch larger
  /// than a millisecond's sequence waits about n / 2^sequence_bits ms.
  std::vector<std::int64_t> next_ids(std::size_t n) const {
    std::vector<std::int64_t> out(n);
    std::int64_t none = 0;  // an empty vector's data() may be NULL, which the C ABI refuses
    next_ids(n ? out.data() : &none, n);
    return out;
  }

  /// Fill `out[0..n]` with increasing IDs; `out` untouched on any error (NULL: NULL_PARAMETER).
  void next_ids(std::int64_t *out, std::size_t n) const {
    detail::check(polyflake_next_ids(get(), reinterpret_cast<std::uint64_t *>(out), n));
  }

  /// next_ids(n) whose waits end after `timeout`: then Error INTERRUPTED (the IDs it reserved
  /// are never issued: a gap, never a duplicate).
  template <class Rep, class Period>
  std::vector<std::int64_t> next_ids_within(std::size_t n, std::chrono::duration<Rep, Period> timeout) const {
    std::vector<std::int64_t> out(n);
    std::int64_t none = 0;
    next_ids_within(n ? out.data() : &none, n, timeout);
    return out;
  }

  /// next_ids(out, n) whose waits end after `timeout`; `out` untouched on any error.
  template <class Rep, class Period>
  void next_ids_within(std::int64_t *out, std::size_t n, std::chrono::duration<Rep, Period> timeout) const {
    detail::check(polyflake_next_ids_within(get(), reinterpret_cast<std::uint64_t *>(out), n,
                                            detail::timeout_ms(timeout)));
  }

#ifdef POLYFLAKE_HPP_HAS_SPAN
  /// Fill the span with increasing IDs (C++20); untouched on any error.
  void next_ids(std::span<std::int64_t> out) const {
    std::int64_t none = 0;
    next_ids(out.empty() ? &none : out.data(), out.size());
  }
  /// Fill the span, with a deadline (C++20).
  template <class Rep, class Period>
  void next_ids_within(std::span<std::int64_t> out, std::chrono::duration<Rep, Period> timeout) const {
    std::int64_t none = 0;
    next_ids_within(out.empty() ? &none : out.data(), out.size(), timeout);
  }
#endif

  /// Cut short every call on this generator waiting now (any thread): each fails with Error
  /// INTERRUPTED within 20 ms, having issued nothing; later calls are not affected.
  void interrupt() const { detail::check(polyflake_generator_interrupt(get())); }

  /// Wait, up to `timeout`, while a restart guard holds: a lease's, or a fixed node id's mark on
  /// this host (returns at once when there is nothing to wait for). Throws Error LEASE_NOT_READY
  /// if it still holds, LEASE_LOST (a lease with heal set waits through its heal), GENERATOR_CLOSED, ...
  template <class Rep, class Period>
  void wait_ready(std::chrono::duration<Rep, Period> timeout) const {
    detail::check(polyflake_wait_ready(get(), detail::timeout_ms(timeout)));
  }

  /// A health snapshot: status, counters, clock source, lease.
  Health health() const {
    polyflake_health_snapshot h{};
    detail::check(polyflake_health(get(), &h));
    return Health::from_c(h);
  }

  /// The parts of `id` for this generator's layout and epoch. Throws Error INVALID_ID.
  Decoded decode(std::int64_t id) const {
    polyflake_decoded d{};
    detail::check(polyflake_generator_decode(get(), static_cast<std::uint64_t>(id), &d));
    return Decoded::from_c(d);
  }

  /// When `id` was made (for a log line): decode(id).time.
  TimePoint time_of(std::int64_t id) const { return decode(id).time; }

  /// The generator's settings (node_id the one in use, whatever its source).
  Config config() const {
    polyflake_config c{};
    detail::check(polyflake_generator_config(get(), &c));
    return Config(c);
  }

  /// Stop for good: later calls throw GENERATOR_CLOSED, the node id (or lease slot) is free.
  /// Closing twice is fine; the destructor closes too.
  void close() const { detail::check(polyflake_generator_close(get())); }

  /// The C handle (NULL once moved from); still owned by this object.
  polyflake_generator *get() const noexcept { return handle_.get(); }
  /// True while this object holds a handle (false once moved from).
  explicit operator bool() const noexcept { return get() != nullptr; }

 private:
  struct Adopt {};
  Snowflake(Adopt, polyflake_generator *handle) noexcept : handle_(handle) {}
  static polyflake_generator *make(const Config &config, const polyflake_clock *clock) {
    polyflake_config c = config.to_c();
    polyflake_generator *g = nullptr;
    detail::check(polyflake_generator_new(&c, clock, &g));
    return g;
  }
  /// The settings every lease shares, from any of the three options (strings borrowed).
  template <typename Options>
  static polyflake_lease_common lease_common(const Options &o) {
    return {o.slots, detail::c_str_or_null(o.identity), o.reserve_ms, o.max_guard_wait_ms, o.heal};
  }
  /// Prefix, timeout and credentials of an etcd or ZooKeeper lease (strings borrowed).
  template <typename Options>
  static polyflake_remote_store remote_store(const Options &o) {
    const Credentials &c = o.credentials;
    return {detail::c_str_or_null(o.prefix), o.connect_timeout_ms,
            {detail::c_str_or_null(c.ca_file), detail::c_str_or_null(c.cert_file),
             detail::c_str_or_null(c.key_file), detail::c_str_or_null(c.username),
             detail::c_str_or_null(c.password)}};
  }

  detail::Handle<polyflake_generator, polyflake_generator_free> handle_;
};

/// A UUID (16 bytes, big-endian: byte order is issue order and text order).
struct Uuid {
  /// The 16 bytes.
  std::array<std::uint8_t, POLYFLAKE_ID128_LEN> bytes;

  /// Parse hyphenated text, any case. Throws Error INVALID_ID with the core's reason.
  static Uuid parse(const std::string &text) {
    Uuid u{};
    detail::check(polyflake_parse_uuid(text.c_str(), u.bytes.data()));
    return u;
  }
  /// The canonical text, 36 lower-case characters.
  std::string to_string() const {
    char text[POLYFLAKE_UUID_TEXT_LEN];
    detail::check(polyflake_format_uuid(bytes.data(), text, sizeof text));
    return text;
  }
  /// Its Unix-ms timestamp. Throws Error INVALID_ID unless it is a UUIDv7.
  std::int64_t timestamp_ms() const {
    std::int64_t ms = 0;
    detail::check(polyflake_uuid7_timestamp_ms(bytes.data(), &ms));
    return ms;
  }
  /// Its time (for a log line). Throws as timestamp_ms.
  TimePoint time() const { return TimePoint(std::chrono::milliseconds(timestamp_ms())); }

  /// Byte-wise equal.
  friend bool operator==(const Uuid &a, const Uuid &b) { return a.bytes == b.bytes; }
  /// Not equal.
  friend bool operator!=(const Uuid &a, const Uuid &b) { return a.bytes != b.bytes; }
  /// Issue order (byte-wise).
  friend bool operator<(const Uuid &a, const Uuid &b) { return a.bytes < b.bytes; }
  /// Issue order.
  friend bool operator>(const Uuid &a, const Uuid &b) { return b < a; }
  /// Issue order.
  friend bool operator<=(const Uuid &a, const Uuid &b) { return !(b < a); }
  /// Issue order.
  friend bool operator>=(const Uuid &a, const Uuid &b) { return !(a < b); }
};

/// A ULID (16 bytes, big-endian: byte order is issue order and text order).
struct Ulid {
  /// The 16 bytes.
  std::array<std::uint8_t, POLYFLAKE_ID128_LEN> bytes;

  /// Parse Crockford base32 text, any case. Throws Error INVALID_ID with the core's reason.
  static Ulid parse(const std::string &text) {
    Ulid u{};
    detail::check(polyflake_parse_ulid(text.c_str(), u.bytes.data()));
    return u;
  }
  /// The text, 26 upper-case characters.
  std::string to_string() const {
    char text[POLYFLAKE_ULID_TEXT_LEN];
    detail::check(polyflake_format_ulid(bytes.data(), text, sizeof text));
    return text;
  }
  /// Its Unix-ms timestamp.
  std::int64_t timestamp_ms() const {
    std::int64_t ms = 0;
    detail::check(polyflake_ulid_timestamp_ms(bytes.data(), &ms));
    return ms;
  }
  /// Its time (for a log line).
  TimePoint time() const { return TimePoint(std::chrono::milliseconds(timestamp_ms())); }

  /// Byte-wise equal.
  friend bool operator==(const Ulid &a, const Ulid &b) { return a.bytes == b.bytes; }
  /// Not equal.
  friend bool operator!=(const Ulid &a, const Ulid &b) { return a.bytes != b.bytes; }
  /// Issue order (byte-wise).
  friend bool operator<(const Ulid &a, const Ulid &b) { return a.bytes < b.bytes; }
  /// Issue order.
  friend bool operator>(const Ulid &a, const Ulid &b) { return b < a; }
  /// Issue order.
  friend bool operator<=(const Ulid &a, const Ulid &b) { return !(b < a); }
  /// Issue order.
  friend bool operator>=(const Ulid &a, const Ulid &b) { return !(a < b); }
};

static_assert(sizeof(Uuid) == POLYFLAKE_ID128_LEN && std::is_trivially_copyable_v<Uuid> &&
                  std::is_standard_layout_v<Uuid>,
              "a Uuid array is the C ABI's 16 * n bytes");
static_assert(sizeof(Ulid) == POLYFLAKE_ID128_LEN && std::is_trivially_copyable_v<Ulid> &&
                  std::is_standard_layout_v<Ulid>,
              "a Ulid array is the C ABI's 16 * n bytes");

namespace detail {

/// The C calls of one 128-bit format.
template <class Id>
struct TimeIdApi;

template <>
struct TimeIdApi<Uuid> {
  using Gen = polyflake_uuid7_generator;
  static constexpr auto make = polyflake_uuid7_generator_new;
  static constexpr auto free = polyflake_uuid7_generator_free;
  static constexpr auto next = polyflake_next_uuid7;
  static constexpr auto next_within = polyflake_next_uuid7_within;
  static constexpr auto fill = polyflake_next_uuid7s;
  static constexpr auto fill_within = polyflake_next_uuid7s_within;
  static constexpr auto interrupt = polyflake_uuid7_generator_interrupt;
  static constexpr auto health = polyflake_uuid7_health;
  static constexpr auto close = polyflake_uuid7_generator_close;
};

template <>
struct TimeIdApi<Ulid> {
  using Gen = polyflake_ulid_generator;
  static constexpr auto make = polyflake_ulid_generator_new;
  static constexpr auto free = polyflake_ulid_generator_free;
  static constexpr auto next = polyflake_next_ulid;
  static constexpr auto next_within = polyflake_next_ulid_within;
  static constexpr auto fill = polyflake_next_ulids;
  static constexpr auto fill_within = polyflake_next_ulids_within;
  static constexpr auto interrupt = polyflake_ulid_generator_interrupt;
  static constexpr auto health = polyflake_ulid_health;
  static constexpr auto close = polyflake_ulid_generator_close;
};

}  // namespace detail

/// A UUIDv7 (Id = Uuid) or ULID (Id = Ulid) generator: no node id, so any number may live in a
/// process. Move-only; every member function is thread-safe. Use the names Uuid7Generator and
/// UlidGenerator.
template <class Id>
class TimeIdGenerator {
  using Api = detail::TimeIdApi<Id>;

 public:
  /// The core's defaults (strict) on the system clock.
  TimeIdGenerator() : TimeIdGenerator(TimeIdConfig{}) {}
  /// These settings on the system clock.
  explicit TimeIdGenerator(const TimeIdConfig &config) : handle_(make(config, nullptr)) {}
  /// These settings on a test clock.
  TimeIdGenerator(const TimeIdConfig &config, const Clock &clock) : handle_(make(config, clock.get())) {}

  /// Monotonic mode (never waits, borrows ahead) with the core's defaults.
  static TimeIdGenerator monotonic(const Clock *clock = nullptr) {
    TimeIdConfig c;
    c.mode = Mode::monotonic;
    return clock ? TimeIdGenerator(c, *clock) : TimeIdGenerator(c);
  }

  /// One ID. Strict mode may wait. Throws Error as Snowflake::next_id.
  Id next_id() const {
    Id id{};
    detail::check(Api::next(get(), id.bytes.data()));
    return id;
  }

  /// One ID if that needs no wait; nullopt where next_id would wait (or interrupt() ran).
  std::optional<Id> try_next_id() const {
    Id id{};
    const polyflake_result r = Api::next_within(get(), id.bytes.data(), 0);
    if (r == POLYFLAKE_RESULT_INTERRUPTED) return std::nullopt;
    detail::check(r);
    return id;
  }

  /// next_id whose waits end after `timeout` (rounded up to ms): then Error INTERRUPTED.
  template <class Rep, class Period>
  Id next_id_within(std::chrono::duration<Rep, Period> timeout) const {
    Id id{};
    detail::check(Api::next_within(get(), id.bytes.data(), detail::timeout_ms(timeout)));
    return id;
  }

  /// `n` increasing IDs (n up to max_batch).
  std::vector<Id> next_ids(std::size_t n) const {
    std::vector<Id> out(n);
    Id none{};  // an empty vector's data() may be NULL, which the C ABI refuses
    next_ids(n ? out.data() : &none, n);
    return out;
  }

  /// Fill `out[0..n]` with increasing IDs; untouched on any error.
  void next_ids(Id *out, std::size_t n) const {
    detail::check(Api::fill(get(), bytes(out), n));
  }

  /// next_ids(n) whose waits end after `timeout`: then Error INTERRUPTED.
  template <class Rep, class Period>
  std::vector<Id> next_ids_within(std::size_t n, std::chrono::duration<Rep, Period> timeout) const {
    std::vector<Id> out(n);
    Id none{};
    next_ids_within(n ? out.data() : &none, n, timeout);
    return out;
  }

  /// next_ids(out, n) whose waits end after `timeout`; untouched on any error.
  template <class Rep, class Period>
  void next_ids_within(Id *out, std::size_t n, std::chrono::duration<Rep, Period> timeout) const {
    detail::check(Api::fill_within(get(), bytes(out), n, detail::timeout_ms(timeout)));
  }

#ifdef POLYFLAKE_HPP_HAS_SPAN
  /// Fill the span with increasing IDs (C++20).
  void next_ids(std::span<Id> out) const {
    Id none{};
    next_ids(out.empty() ? &none : out.data(), out.size());
  }
  /// Fill the span, with a deadline (C++20).
  template <class Rep, class Period>
  void next_ids_within(std::span<Id> out, std::chrono::duration<Rep, Period> timeout) const {
    Id none{};
    next_ids_within(out.empty() ? &none : out.data(), out.size(), timeout);
  }
#endif

  /// Cut short every call on this generator waiting now (Error INTERRUPTED within 20 ms).
  void interrupt() const { detail::check(Api::interrupt(get())); }

  /// A health snapshot (node_id 0, source "static").
  Health health() const {
    polyflake_health_snapshot h{};
    detail::check(Api::health(get(), &h));
    return Health::from_c(h);
  }

  /// Stop for good: later calls throw GENERATOR_CLOSED.
  void close() const { detail::check(Api::close(get())); }

  /// The C handle (NULL once moved from); still owned by this object.
  typename Api::Gen *get() const noexcept { return handle_.get(); }
  /// True while this object holds a handle (false once moved from).
  explicit operator bool() const noexcept { return get() != nullptr; }

 private:
  static typename Api::Gen *make(const TimeIdConfig &config, const polyflake_clock *clock) {
    polyflake_timeid_config c = config.to_c();
    typename Api::Gen *g = nullptr;
    detail::check(Api::make(&c, clock, &g));
    return g;
  }
  static std::uint8_t *bytes(Id *ids) { return ids ? ids->bytes.data() : nullptr; }

  detail::Handle<typename Api::Gen, Api::free> handle_;
};

/// A UUIDv7 generator: next_id() gives a Uuid.
using Uuid7Generator = TimeIdGenerator<Uuid>;
/// A ULID generator: next_id() gives a Ulid.
using UlidGenerator = TimeIdGenerator<Ulid>;

}  // namespace polyflake

#endif  // POLYFLAKE_HPP
