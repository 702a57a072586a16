/*
 * The cgo side of the Go package: every polyflake call the package makes, wrapped so that one cgo
 * call returns the result AND, on a core error, the core's message. The message is kept per OS
 * thread by the library, and a goroutine may move to another thread between two cgo calls, so
 * it is read here, on the thread that made the call. Hot paths return their IDs by value (no Go
 * pointer crosses, so nothing escapes to the heap).
 */
#ifndef POLYFLAKE_CGO_H
#define POLYFLAKE_CGO_H

#include <stdlib.h>
#include <string.h>

#include "polyflake.h"

/* A result; on a core error (codes 1 to 99) also the core's message, malloc'd (Go frees it). */
typedef struct {
  polyflake_result r;
  char *msg;
} pf_status;

static inline pf_status pf_status_of(polyflake_result r) {
  pf_status s;
  s.r = r;
  s.msg = NULL;
  if (r != POLYFLAKE_RESULT_OK && r < 100) {
    size_t len = 0;
    s.msg = malloc(1024);
    if (s.msg && polyflake_last_error_message(s.msg, 1024, &len) != POLYFLAKE_RESULT_OK) s.msg[0] = 0;
  }
  return s;
}

/* pf_NAME(params) is polyflake_NAME(args) with its status. */
#define PF_WRAP(name, params, args) \
  static inline pf_status pf_##name params { return pf_status_of(polyflake_##name args); }

PF_WRAP(generator_new, (const polyflake_config *c, const polyflake_clock *k, polyflake_generator **o), (c, k, o))
PF_WRAP(generator_new_file_lease, (const polyflake_config *c, const polyflake_file_lease_options *f, const polyflake_clock *k, polyflake_generator **o), (c, f, k, o))
PF_WRAP(generator_new_etcd, (const polyflake_config *c, const polyflake_etcd_options *e, const polyflake_clock *k, polyflake_generator **o), (c, e, k, o))
PF_WRAP(generator_new_zookeeper, (const polyflake_config *c, const polyflake_zookeeper_options *z, const polyflake_clock *k, polyflake_generator **o), (c, z, k, o))
PF_WRAP(generator_new_from_env, (const polyflake_config *c, const char *v, const polyflake_clock *k, polyflake_generator **o), (c, v, k, o))
PF_WRAP(generator_new_from_hostname, (const polyflake_config *c, const char *h, const polyflake_clock *k, polyflake_generator **o), (c, h, k, o))
PF_WRAP(generator_new_from_ipv4, (const polyflake_config *c, const char *a, int64_t p, const polyflake_clock *k, polyflake_generator **o), (c, a, p, k, o))
PF_WRAP(timeid_generator_new, (uint32_t f, const polyflake_timeid_config *c, const polyflake_clock *k, polyflake_timeid_generator **o), (f, c, k, o))
PF_WRAP(next_ids, (const polyflake_generator *g, int64_t *buf, size_t n), (g, (uint64_t *)buf, n))
PF_WRAP(next_timeids, (const polyflake_timeid_generator *g, uint8_t *buf, size_t n), (g, buf, n))
PF_WRAP(next_ids_within, (const polyflake_generator *g, int64_t *buf, size_t n, uint64_t t), (g, (uint64_t *)buf, n, t))
PF_WRAP(next_timeids_within, (const polyflake_timeid_generator *g, uint8_t *buf, size_t n, uint64_t t), (g, buf, n, t))
PF_WRAP(wait_ready, (const polyflake_generator *g, uint64_t timeout_ms), (g, timeout_ms))
PF_WRAP(generator_decode, (const polyflake_generator *g, int64_t id, polyflake_decoded *d), (g, (uint64_t)id, d))
PF_WRAP(decode, (polyflake_layout l, int64_t epoch_ms, int64_t id, polyflake_decoded *d), (l, epoch_ms, (uint64_t)id, d))
PF_WRAP(compose, (polyflake_layout l, int64_t epoch_ms, int64_t unix_ms, uint64_t node, uint64_t seq, uint64_t *id), (l, epoch_ms, unix_ms, node, seq, id))
PF_WRAP(layout_from_name, (const char *name, polyflake_layout *l), (name, l))
PF_WRAP(layout_describe, (polyflake_layout l, polyflake_layout_info *i), (l, i))
PF_WRAP(parse_id, (const char *text, uint64_t *id), (text, id))
PF_WRAP(manual_clock_set, (const polyflake_clock *c, int64_t ms), (c, ms))
PF_WRAP(manual_clock_advance, (const polyflake_clock *c, int64_t ms), (c, ms))
PF_WRAP(manual_clock_elapse, (const polyflake_clock *c, uint64_t ms), (c, ms))
PF_WRAP(manual_clock_set_tick_ms, (const polyflake_clock *c, int64_t ms), (c, ms))
PF_WRAP(manual_clock_get, (const polyflake_clock *c, int64_t *ms), (c, ms))

/* A user clock over a Go function (userclock.go exports the two functions it calls; the
 * context is the function's cgo.Handle). */
extern int32_t pfGoClockRead(uintptr_t h, int64_t *out, char *why, size_t why_len);
extern void pfGoClockFree(uintptr_t h);

static inline int32_t pf_go_clock_read(void *ctx, int64_t *out, char *why, size_t why_len) {
  return pfGoClockRead((uintptr_t)ctx, out, why, why_len);
}

static inline void pf_go_clock_free(void *ctx) { pfGoClockFree((uintptr_t)ctx); }

static inline pf_status pf_user_clock_new(uintptr_t h, polyflake_clock **o) {
  return pf_status_of(polyflake_user_clock_new(pf_go_clock_read, pf_go_clock_free, (void *)h, o));
}

/* The per-ID calls (pf_next_id, pf_next_timeid) take their handle as an integer,
 * uintptr(unsafe.Pointer(handle)) on the Go side: cgo checks every pointer argument of a call
 * for Go pointers (runtime.cgoCheckPointer, about 2 ns a call, 3% of NextID on the 2-core
 * machine: BENCHMARKS.md, "C and Go"), and a handle is the library's memory, never Go's. */
#define PF_HANDLE(type, h) ((const type *)(h))

/* One 64-bit ID by value. */
typedef struct {
  uint64_t id;
  pf_status s;
} pf_id64;

static inline pf_id64 pf_next_id(uintptr_t g) {
  pf_id64 o;
  o.id = 0;
  o.s = pf_status_of(polyflake_next_id(PF_HANDLE(polyflake_generator, g), &o.id));
  return o;
}

static inline pf_id64 pf_next_id_within(const polyflake_generator *g, uint64_t timeout_ms) {
  pf_id64 o;
  o.id = 0;
  o.s = pf_status_of(polyflake_next_id_within(g, &o.id, timeout_ms));
  return o;
}

/* One UUID or ULID by value: 16 bytes, big-endian. */
typedef struct {
  uint8_t b[POLYFLAKE_ID128_LEN];
} pf_id128;

typedef struct {
  pf_id128 id;
  pf_status s;
} pf_id128_status;

static inline pf_id128_status pf_next_timeid(uintptr_t g) {
  pf_id128_status o;
  memset(&o.id, 0, sizeof o.id);
  o.s = pf_status_of(polyflake_next_timeid(PF_HANDLE(polyflake_timeid_generator, g), o.id.b));
  return o;
}

static inline pf_id128_status pf_next_timeid_within(const polyflake_timeid_generator *g, uint64_t t) {
  pf_id128_status o;
  memset(&o.id, 0, sizeof o.id);
  o.s = pf_status_of(polyflake_next_timeid_within(g, o.id.b, t));
  return o;
}

static inline pf_id128_status pf_parse_uuid(const char *text) {
  pf_id128_status o;
  memset(&o.id, 0, sizeof o.id);
  o.s = pf_status_of(polyflake_parse_uuid(text, o.id.b));
  return o;
}

static inline pf_id128_status pf_parse_ulid(const char *text) {
  pf_id128_status o;
  memset(&o.id, 0, sizeof o.id);
  o.s = pf_status_of(polyflake_parse_ulid(text, o.id.b));
  return o;
}

/* Text of an ID by value (the longest, a UUID's 36 characters and a NUL). */
typedef struct {
  char text[POLYFLAKE_UUID_TEXT_LEN];
} pf_text;

static inline pf_text pf_format_uuid(pf_id128 id) {
  pf_text t;
  if (polyflake_format_uuid(id.b, t.text, sizeof t.text) != POLYFLAKE_RESULT_OK) t.text[0] = 0;
  return t;
}

static inline pf_text pf_format_ulid(pf_id128 id) {
  pf_text t;
  if (polyflake_format_ulid(id.b, t.text, sizeof t.text) != POLYFLAKE_RESULT_OK) t.text[0] = 0;
  return t;
}

typedef struct {
  int64_t ms;
  pf_status s;
} pf_ms;

static inline pf_ms pf_uuid7_timestamp_ms(pf_id128 id) {
  pf_ms o;
  o.ms = 0;
  o.s = pf_status_of(polyflake_uuid7_timestamp_ms(id.b, &o.ms));
  return o;
}

static inline int64_t pf_ulid_timestamp_ms(pf_id128 id) {
  int64_t ms = 0;
  polyflake_ulid_timestamp_ms(id.b, &ms);
  return ms;
}

typedef struct {
  pf_text t;
  pf_status s;
} pf_text_status;

static inline pf_text_status pf_format_id(int64_t id) {
  pf_text_status o;
  size_t len = 0;
  o.t.text[0] = 0;
  o.s = pf_status_of(polyflake_format_id((uint64_t)id, o.t.text, sizeof o.t.text, &len));
  return o;
}

#endif
