/*
 * The C test of the 128-bit formats of polyflake's C ABI: the conformance vectors of
 * tests/vectors/formats.json (RFC 9562's example, ULID spec examples, the limits, bad text),
 * UUIDv7 and ULID generators (bytes big-endian, batches, text, health, close), bad input (NULL
 * for every pointer parameter, settings out of range), 8 threads on one handle, and fork (a
 * child goes on issuing, with random bits of its own). Their scenario files run in
 * test_polyflake.c with the others.
 *
 * Usage: test_formats VECTORS_DIR   (tests/vectors; JSON read with cJSON)
 * Built twice by .build/mk/c.mk, against libpolyflake.so and libpolyflake.a, and run again under valgrind.
 */
#include "polyflake.h"
#include "check.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef uint8_t id128[POLYFLAKE_ID128_LEN];

static const cJSON *get(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static const char *str(const cJSON *obj, const char *key) {
  const cJSON *v = get(obj, key);
  if (!cJSON_IsString(v)) {
    fprintf(stderr, "FATAL: missing string %s\n", key);
    exit(2);
  }
  return v->valuestring;
}

static int64_t num(const cJSON *obj, const char *key) { return (int64_t)get(obj, key)->valuedouble; }

/* A decimal string as 16 big-endian bytes (the vectors' "value"), by hand: x = 10x + digit. */
static void from_decimal(const char *text, id128 out) {
  memset(out, 0, POLYFLAKE_ID128_LEN);
  for (; *text; text++) {
    unsigned carry = (unsigned)(*text - '0');
    int i;
    for (i = POLYFLAKE_ID128_LEN - 1; i >= 0; i--) {
      carry += 10u * out[i];
      out[i] = (uint8_t)carry;
      carry >>= 8;
    }
  }
}

static int uuid_text_is(const id128 u, const char *want) {
  char text[POLYFLAKE_UUID_TEXT_LEN];
  return polyflake_format_uuid(u, text, sizeof text) == POLYFLAKE_RESULT_OK && strcmp(text, want) == 0;
}

static int ulid_text_is(const id128 u, const char *want) {
  char text[POLYFLAKE_ULID_TEXT_LEN];
  return polyflake_format_ulid(u, text, sizeof text) == POLYFLAKE_RESULT_OK && strcmp(text, want) == 0;
}

static void vectors(const char *dir) {
  char path[4096], *text;
  FILE *f;
  long size;
  cJSON *doc;
  const cJSON *uuid, *ulid, *rfc, *v;
  id128 u, want, sentinel;
  int64_t ms = 0;
  int cases = 0;
  snprintf(path, sizeof path, "%s/formats.json", dir);
  f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "FATAL: cannot open %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  text = calloc(1, (size_t)size + 1);
  if (fread(text, 1, (size_t)size, f) != (size_t)size) exit(2);
  fclose(f);
  doc = cJSON_Parse(text);
  free(text);
  if (!doc) exit(2);
  uuid = get(doc, "uuid");
  ulid = get(doc, "ulid");
  memset(sentinel, 0xab, sizeof sentinel);

  /* RFC 9562 appendix A.6: every field, read from the bytes. */
  rfc = get(uuid, "rfc9562_example");
  CHECK_RESULT(polyflake_parse_uuid(str(rfc, "text"), u), POLYFLAKE_RESULT_OK);
  from_decimal(str(rfc, "value"), want);
  CHECK(memcmp(u, want, sizeof u) == 0, "RFC 9562 value");
  CHECK(uuid_text_is(u, str(rfc, "canonical")), "RFC 9562 canonical text");
  CHECK_RESULT(polyflake_uuid7_timestamp_ms(u, &ms), POLYFLAKE_RESULT_OK);
  CHECK(ms == num(rfc, "unix_ts_ms"), "RFC 9562 unix_ts_ms %" PRId64, ms);
  CHECK((u[6] >> 4) == num(rfc, "version"), "version %d", u[6] >> 4);
  CHECK((u[8] >> 6) == num(rfc, "variant"), "variant %d", u[8] >> 6);
  CHECK((((u[6] & 0xf) << 8) | u[7]) == num(rfc, "rand_a"), "rand_a");
  {
    uint64_t rand_b = u[8] & 0x3f;
    int i;
    for (i = 9; i < 16; i++) rand_b = (rand_b << 8) | u[i];
    CHECK(rand_b == strtoull(str(rfc, "rand_b"), NULL, 10), "rand_b %" PRIu64, rand_b);
  }
  cases++;
  cJSON_ArrayForEach(v, get(uuid, "limits")) {
    CHECK_RESULT(polyflake_parse_uuid(str(v, "text"), u), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_uuid7_timestamp_ms(u, &ms), POLYFLAKE_RESULT_OK);
    CHECK(ms == num(v, "unix_ts_ms") && uuid_text_is(u, str(v, "text")), "limit %s", str(v, "text"));
    cases++;
  }
  cJSON_ArrayForEach(v, get(uuid, "bad_text")) {
    memcpy(u, sentinel, sizeof u);
    CHECK_RESULT(polyflake_parse_uuid(v->valuestring, u), POLYFLAKE_RESULT_INVALID_ID);
    CHECK(memcmp(u, sentinel, sizeof u) == 0, "bad UUID text \"%s\": out-param written", v->valuestring);
    CHECK(strstr(last_message(), "UUID") != NULL, "message: %s", last_message());
    cases++;
  }
  cJSON_ArrayForEach(v, get(uuid, "not_v7")) {
    ms = 42;
    CHECK_RESULT(polyflake_parse_uuid(v->valuestring, u), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_uuid7_timestamp_ms(u, &ms), POLYFLAKE_RESULT_INVALID_ID);
    CHECK(ms == 42, "out-param written on error");
    cases++;
  }

  cJSON_ArrayForEach(v, get(ulid, "examples")) {
    CHECK_RESULT(polyflake_parse_ulid(str(v, "text"), u), POLYFLAKE_RESULT_OK);
    from_decimal(str(v, "value"), want);
    CHECK(memcmp(u, want, sizeof u) == 0, "ULID value %s", str(v, "text"));
    CHECK_RESULT(polyflake_ulid_timestamp_ms(u, &ms), POLYFLAKE_RESULT_OK);
    CHECK(ms == num(v, "unix_ts_ms") && ulid_text_is(u, str(v, "text")), "ULID %s", str(v, "text"));
    cases++;
  }
  {
    /* The spec's monotonic pair: the second is the first plus one. */
    const cJSON *pair = get(ulid, "monotonic_pair");
    id128 a, b;
    int i, carry = 1;
    CHECK_RESULT(polyflake_parse_ulid(cJSON_GetArrayItem(pair, 0)->valuestring, a), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_parse_ulid(cJSON_GetArrayItem(pair, 1)->valuestring, b), POLYFLAKE_RESULT_OK);
    for (i = 15; i >= 0; i--) {
      int sum = a[i] + carry;
      a[i] = (uint8_t)sum;
      carry = sum >> 8;
    }
    CHECK(memcmp(a, b, sizeof a) == 0, "monotonic pair");
    cases++;
  }
  cJSON_ArrayForEach(v, get(ulid, "limits")) {
    CHECK_RESULT(polyflake_parse_ulid(str(v, "text"), u), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_ulid_timestamp_ms(u, &ms), POLYFLAKE_RESULT_OK);
    CHECK(ms == num(v, "unix_ts_ms") && ulid_text_is(u, str(v, "text")), "limit %s", str(v, "text"));
    cases++;
  }
  cJSON_ArrayForEach(v, get(ulid, "aliases")) {
    CHECK_RESULT(polyflake_parse_ulid(str(v, "text"), u), POLYFLAKE_RESULT_OK);
    CHECK(ulid_text_is(u, str(v, "canonical")), "alias %s", str(v, "text"));
    cases++;
  }
  cJSON_ArrayForEach(v, get(ulid, "bad_text")) {
    memcpy(u, sentinel, sizeof u);
    CHECK_RESULT(polyflake_parse_ulid(v->valuestring, u), POLYFLAKE_RESULT_INVALID_ID);
    CHECK(memcmp(u, sentinel, sizeof u) == 0, "bad ULID text \"%s\": out-param written", v->valuestring);
    cases++;
  }
  CHECK(cases >= 29, "vector cases: %d", cases);
  cJSON_Delete(doc);
  printf("format vectors: %d cases ok\n", cases);
}

/* A UUIDv7 and a ULID generator on one manual clock: bytes, order, text, batches, health. */
static void generators(void) {
  const int64_t t = 1645557742000; /* RFC 9562's example millisecond */
  polyflake_timeid_config cfg;
  polyflake_clock *clock = NULL;
  polyflake_uuid7_generator *u = NULL;
  polyflake_ulid_generator *l = NULL;
  polyflake_health_snapshot h;
  id128 a, b, c, *batch = malloc(1000 * sizeof *batch);
  char text[POLYFLAKE_UUID_TEXT_LEN], ltext[POLYFLAKE_ULID_TEXT_LEN];
  int64_t ms = 0;
  int i;
  CHECK_RESULT(polyflake_timeid_config_init(&cfg), POLYFLAKE_RESULT_OK);
  /* The core's defaults: the lead bounded at 5,000 ms, no bound on the clock's error. */
  CHECK(cfg.mode == POLYFLAKE_MODE_STRICT && cfg.max_wait_ms == 5.0 && cfg.has_max_lead == 1 &&
            cfg.max_lead_ms == 5000 && cfg.max_forward_step_ms == 60000 &&
            cfg.forward_confirm_ms == 300000 && cfg.clock_source == POLYFLAKE_CLOCK_SOURCE_PRECISE &&
            cfg.has_max_clock_error == 0,
        "timeid defaults");
  polyflake_manual_clock_new(t, &clock);
  CHECK_RESULT(polyflake_uuid7_generator_new(&cfg, clock, &u), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_ulid_generator_new(&cfg, clock, &l), POLYFLAKE_RESULT_OK);

  CHECK_RESULT(polyflake_next_uuid7(u, a), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_format_uuid(a, text, sizeof text), POLYFLAKE_RESULT_OK);
  /* The RFC's millisecond, version 7, a whole-ms clock's rand_a 0, variant 0b10. */
  CHECK(strncmp(text, "017f22e2-79b0-7000-", 19) == 0 && strchr("89ab", text[19]), "UUID %s", text);
  CHECK_RESULT(polyflake_uuid7_timestamp_ms(a, &ms), POLYFLAKE_RESULT_OK);
  CHECK(ms == t, "timestamp %" PRId64, ms);
  CHECK_RESULT(polyflake_parse_uuid(text, b), POLYFLAKE_RESULT_OK);
  CHECK(memcmp(a, b, sizeof a) == 0, "text round trip");
  CHECK_RESULT(polyflake_next_uuid7(u, b), POLYFLAKE_RESULT_OK);
  CHECK(memcmp(a, b, sizeof a) < 0, "a generator's UUIDs increase as bytes");
  CHECK_RESULT(polyflake_next_uuid7s(u, batch[0], 1000), POLYFLAKE_RESULT_OK);
  CHECK(memcmp(b, batch[0], sizeof b) < 0, "batch after single");
  for (i = 1; i < 1000; i++) CHECK(memcmp(batch[i - 1], batch[i], sizeof b) < 0, "batch order at %d", i);
  CHECK_RESULT(polyflake_uuid7_health(u, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.ok && h.ids_issued == 1002 && h.node_id == 0, "UUIDv7 health: %s", h.reason);

  CHECK_RESULT(polyflake_next_ulid(l, a), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_ulid(l, b), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_format_ulid(a, ltext, sizeof ltext), POLYFLAKE_RESULT_OK);
  CHECK(strlen(ltext) == 26 && strncmp(ltext, "01FWHE4YDG", 10) == 0, "ULID %s", ltext);
  CHECK_RESULT(polyflake_ulid_timestamp_ms(a, &ms), POLYFLAKE_RESULT_OK);
  CHECK(ms == t, "ULID timestamp %" PRId64, ms);
  /* Within a millisecond each ULID is the previous one plus one (the spec's monotonic variant). */
  memcpy(c, a, sizeof c);
  for (i = 15; i >= 0 && ++c[i] == 0; i--) {
  }
  CHECK(memcmp(c, b, sizeof c) == 0, "ULID + 1");
  CHECK_RESULT(polyflake_next_ulids(l, batch[0], 1000), POLYFLAKE_RESULT_OK);
  for (i = 1; i < 1000; i++) CHECK(memcmp(batch[i - 1], batch[i], sizeof b) < 0, "ULID batch order");

  /* A rewind: strict refuses both, as a Snowflake generator; the buffer is untouched. */
  polyflake_manual_clock_advance(clock, -600);
  memset(batch, 0xcd, 1000 * sizeof *batch);
  CHECK_RESULT(polyflake_next_uuid7s(u, batch[0], 1000), POLYFLAKE_RESULT_CLOCK_MOVED_BACKWARDS);
  CHECK_RESULT(polyflake_next_ulids(l, batch[0], 1000), POLYFLAKE_RESULT_CLOCK_MOVED_BACKWARDS);
  for (i = 0; i < 1000; i++) CHECK(batch[i][0] == 0xcd && batch[i][15] == 0xcd, "buffer written on error");
  memset(c, 0xcd, sizeof c);
  CHECK_RESULT(polyflake_next_uuid7(u, c), POLYFLAKE_RESULT_CLOCK_MOVED_BACKWARDS);
  CHECK(c[0] == 0xcd, "out-param written on error");
  CHECK_RESULT(polyflake_ulid_health(l, &h), POLYFLAKE_RESULT_OK);
  CHECK(!h.ok && h.status == POLYFLAKE_HEALTH_STATUS_CLOCK_BEHIND, "ULID health %s",
        polyflake_health_status_name(h.status));

  /* Closed: refused with GENERATOR_CLOSED, health says so; closing twice is fine. */
  polyflake_manual_clock_advance(clock, 600);
  CHECK_RESULT(polyflake_uuid7_generator_close(u), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_uuid7_generator_close(u), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_uuid7(u, c), POLYFLAKE_RESULT_GENERATOR_CLOSED);
  CHECK_RESULT(polyflake_uuid7_health(u, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.status == POLYFLAKE_HEALTH_STATUS_CLOSED, "closed");
  CHECK_RESULT(polyflake_ulid_generator_close(l), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_ulids(l, batch[0], 1), POLYFLAKE_RESULT_GENERATOR_CLOSED);
  polyflake_uuid7_generator_free(u);
  polyflake_ulid_generator_free(l);

  /* Any number of generators on the system clock (no node id to hold), monotonic and coarse. */
  cfg.mode = POLYFLAKE_MODE_MONOTONIC;
  cfg.clock_source = POLYFLAKE_CLOCK_SOURCE_COARSE;
  CHECK_RESULT(polyflake_uuid7_generator_new(&cfg, NULL, &u), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_ulid_generator_new(&cfg, NULL, &l), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_uuid7s(u, batch[0], 1000), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_uuid7_timestamp_ms(batch[999], &ms), POLYFLAKE_RESULT_OK);
  CHECK(ms > 1704067200000, "system clock timestamp %" PRId64, ms);
  CHECK_RESULT(polyflake_uuid7_health(u, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.mode == POLYFLAKE_MODE_MONOTONIC && (h.clock_source == POLYFLAKE_CLOCK_SOURCE_COARSE ||
                                               h.clock_note[0] != 0),
        "monotonic coarse health");
  polyflake_uuid7_generator_free(u);
  polyflake_ulid_generator_free(l);
  polyflake_clock_free(clock);
  free(batch);
  printf("generators: bytes, order, text, batches, refusals, health, close\n");
}

static void bad_input(void) {
  const polyflake_result N = POLYFLAKE_RESULT_NULL_PARAMETER;
  polyflake_timeid_config cfg;
  polyflake_clock *clock = NULL;
  polyflake_uuid7_generator *u = NULL;
  polyflake_ulid_generator *l = NULL;
  polyflake_health_snapshot h;
  id128 a;
  char text[POLYFLAKE_UUID_TEXT_LEN];
  int64_t ms = 0;
  polyflake_manual_clock_new(1700000000000, &clock);
  CHECK_RESULT(polyflake_timeid_config_init(NULL), N);
  polyflake_timeid_config_init(&cfg);
  CHECK_RESULT(polyflake_uuid7_generator_new(NULL, clock, &u), N);
  CHECK_RESULT(polyflake_uuid7_generator_new(&cfg, clock, NULL), N);
  CHECK_RESULT(polyflake_uuid7_generator_new(NULL, NULL, NULL), N);
  CHECK_RESULT(polyflake_ulid_generator_new(NULL, clock, &l), N);
  CHECK_RESULT(polyflake_ulid_generator_new(&cfg, NULL, NULL), N);
  /* Settings out of range: the core's code and message; nothing written. */
  cfg.mode = 2;
  CHECK_RESULT(polyflake_uuid7_generator_new(&cfg, clock, &u), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "mode") != NULL, "message: %s", last_message());
  polyflake_timeid_config_init(&cfg);
  cfg.clock_source = 9;
  CHECK_RESULT(polyflake_ulid_generator_new(&cfg, clock, &l), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "clock_source") != NULL, "message: %s", last_message());
  polyflake_timeid_config_init(&cfg);
  cfg.max_wait_ms = -1;
  CHECK_RESULT(polyflake_uuid7_generator_new(&cfg, clock, &u), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  polyflake_timeid_config_init(&cfg);
  cfg.has_max_lead = 1;
  cfg.max_lead_ms = -1;
  CHECK_RESULT(polyflake_ulid_generator_new(&cfg, clock, &l), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  polyflake_timeid_config_init(&cfg);
  cfg.max_forward_step_ms = 0;
  CHECK_RESULT(polyflake_uuid7_generator_new(&cfg, clock, &u), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(u == NULL && l == NULL, "out-param written on error");

  polyflake_timeid_config_init(&cfg);
  CHECK_RESULT(polyflake_uuid7_generator_new(&cfg, clock, &u), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_ulid_generator_new(&cfg, clock, &l), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_uuid7(NULL, a), N);
  CHECK_RESULT(polyflake_next_uuid7(u, NULL), N);
  CHECK_RESULT(polyflake_next_ulid(NULL, a), N);
  CHECK_RESULT(polyflake_next_ulid(l, NULL), N);
  CHECK_RESULT(polyflake_next_uuid7s(NULL, a, 1), N);
  CHECK_RESULT(polyflake_next_uuid7s(u, NULL, 1), N);
  CHECK_RESULT(polyflake_next_uuid7s(u, NULL, 0), N);
  CHECK_RESULT(polyflake_next_uuid7s(u, a, 0), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_ulids(l, NULL, 0), N);
  CHECK_RESULT(polyflake_next_ulids(NULL, a, 1), N);
  CHECK_RESULT(polyflake_next_uuid7s(u, a, (size_t)POLYFLAKE_MAX_BATCH + 1), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK_RESULT(polyflake_next_ulids(l, a, SIZE_MAX), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK_RESULT(polyflake_uuid7_health(NULL, &h), N);
  CHECK_RESULT(polyflake_uuid7_health(u, NULL), N);
  CHECK_RESULT(polyflake_ulid_health(NULL, &h), N);
  CHECK_RESULT(polyflake_ulid_health(l, NULL), N);
  CHECK_RESULT(polyflake_uuid7_generator_close(NULL), N);
  CHECK_RESULT(polyflake_ulid_generator_close(NULL), N);
  CHECK_RESULT(polyflake_next_uuid7(u, a), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_format_uuid(NULL, text, sizeof text), N);
  CHECK_RESULT(polyflake_format_uuid(a, NULL, sizeof text), N);
  CHECK_RESULT(polyflake_format_ulid(NULL, text, sizeof text), N);
  CHECK_RESULT(polyflake_format_ulid(a, NULL, sizeof text), N);
  memset(text, 'x', sizeof text);
  CHECK_RESULT(polyflake_format_uuid(a, text, POLYFLAKE_UUID_TEXT_LEN - 1), POLYFLAKE_RESULT_BUFFER_TOO_SMALL);
  CHECK_RESULT(polyflake_format_ulid(a, text, POLYFLAKE_ULID_TEXT_LEN - 1), POLYFLAKE_RESULT_BUFFER_TOO_SMALL);
  CHECK_RESULT(polyflake_format_uuid(a, text, 0), POLYFLAKE_RESULT_BUFFER_TOO_SMALL);
  CHECK(text[0] == 'x', "buffer written on error");
  CHECK_RESULT(polyflake_parse_uuid(NULL, a), N);
  CHECK_RESULT(polyflake_parse_uuid("017f22e2-79b0-7cc3-98c4-dc0c0c07398f", NULL), N);
  CHECK_RESULT(polyflake_parse_ulid(NULL, a), N);
  CHECK_RESULT(polyflake_parse_ulid("01ARZ3NDEKTSV4RRFFQ69G5FAV", NULL), N);
  /* Bytes that are not UTF-8 are refused by the core's parsers, not repaired. */
  CHECK_RESULT(polyflake_parse_uuid("017f22e2-79b0-7cc3-98c4-dc0c0c07398\xff", a), POLYFLAKE_RESULT_INVALID_ID);
  CHECK_RESULT(polyflake_parse_ulid("01ARZ3NDEKTSV4RRFFQ69G5FA\xff", a), POLYFLAKE_RESULT_INVALID_ID);
  CHECK_RESULT(polyflake_uuid7_timestamp_ms(NULL, &ms), N);
  CHECK_RESULT(polyflake_uuid7_timestamp_ms(a, NULL), N);
  CHECK_RESULT(polyflake_ulid_timestamp_ms(NULL, &ms), N);
  CHECK_RESULT(polyflake_ulid_timestamp_ms(a, NULL), N);
  polyflake_uuid7_generator_free(u);
  polyflake_ulid_generator_free(l);
  polyflake_uuid7_generator_free(NULL);
  polyflake_ulid_generator_free(NULL);
  polyflake_clock_free(clock);
  printf("bad input (128-bit formats): ok\n");
}

/* ------------------------------------------------------------------------------------------ */
/* 8 threads on one UUIDv7 handle: no duplicate, each thread's UUIDs increasing               */

#define THREADS 8
#define PER_THREAD 20000

#define NEXT_UUID7(g, out, i) polyflake_next_uuid7(g, (out)[i])
#define UUID_AFTER(out, i) (memcmp((out)[i], (out)[(i)-1], sizeof(out)[i]) > 0)
DEFINE_WORKER(polyflake_uuid7_generator, id128, NEXT_UUID7, UUID_AFTER)

static int cmp_id(const void *a, const void *b) { return memcmp(a, b, sizeof(id128)); }

static void threads(void) {
  polyflake_timeid_config cfg;
  polyflake_uuid7_generator *g = NULL;
  worker_t w[THREADS];
  id128 *all = malloc(sizeof(id128) * THREADS * PER_THREAD);
  int i, dups = 0;
  polyflake_timeid_config_init(&cfg);
  CHECK_RESULT(polyflake_uuid7_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
  RUN_WORKERS(w, g, all, worker);
  qsort(all, (size_t)THREADS * PER_THREAD, sizeof *all, cmp_id);
  for (i = 1; i < THREADS * PER_THREAD; i++) dups += memcmp(all[i], all[i - 1], sizeof all[i]) == 0;
  CHECK(dups == 0, "%d duplicates", dups);
  polyflake_uuid7_generator_free(g);
  free(all);
  printf("threads: %d x %d UUIDv7s on one handle, no duplicate\n", THREADS, PER_THREAD);
}

/* After fork() a UUIDv7 generator goes on issuing in the child (it has no node id to guard), and
 * the child's random bits are its own: parent and child issue from the same state (a manual
 * clock, the same next counter) yet differ. */
static void fork_goes_on(void) {
  polyflake_timeid_config cfg;
  polyflake_clock *clock = NULL;
  polyflake_uuid7_generator *u = NULL;
  id128 mine, theirs;
  int fds[2], status = 0;
  pid_t pid;
  polyflake_timeid_config_init(&cfg);
  polyflake_manual_clock_new(1737747358021, &clock);
  CHECK_RESULT(polyflake_uuid7_generator_new(&cfg, clock, &u), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_uuid7(u, mine), POLYFLAKE_RESULT_OK);
  if (pipe(fds) != 0) exit(2);
  fflush(NULL);
  pid = fork();
  if (pid == 0) {
    id128 child;
    polyflake_result r = polyflake_next_uuid7(u, child);
    if (r != POLYFLAKE_RESULT_OK) memset(child, 0, sizeof child);
    _exit(write(fds[1], child, sizeof child) == (ssize_t)sizeof child ? 0 : 1);
  }
  close(fds[1]);
  CHECK(read(fds[0], theirs, sizeof theirs) == (ssize_t)sizeof theirs, "child wrote its UUID");
  close(fds[0]);
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  CHECK_RESULT(polyflake_next_uuid7(u, mine), POLYFLAKE_RESULT_OK);
  /* Same millisecond, rand_a and counter (the first 9 bytes and the counter bits of byte 8),
   * different random bits. */
  CHECK(memcmp(mine, theirs, 6) == 0, "same millisecond");
  CHECK(memcmp(mine + 9, theirs + 9, 7) != 0, "the child repeated the parent's random bits");
  polyflake_uuid7_generator_free(u);
  polyflake_clock_free(clock);
  printf("fork: the child goes on issuing, with random bits of its own\n");
}

/* The handle whose format is a value (polyflake_timeid_generator): the same generators as the
 * typed handles, the format chosen at _new; a code that is no format is refused. */
static void format_value(void) {
  const int64_t t = 1645557742000;
  polyflake_timeid_config cfg;
  polyflake_clock *clock = NULL;
  polyflake_timeid_generator *g = NULL;
  polyflake_health_snapshot h;
  id128 a, b, c, batch[3];
  char text[POLYFLAKE_UUID_TEXT_LEN];
  int i;
  CHECK_RESULT(polyflake_timeid_config_init(&cfg), POLYFLAKE_RESULT_OK);
  polyflake_manual_clock_new(t, &clock);
  CHECK_RESULT(polyflake_timeid_generator_new(2, &cfg, clock, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(g == NULL, "nothing made for format 2");
  CHECK_RESULT(polyflake_timeid_generator_new(POLYFLAKE_TIME_FORMAT_UUID7, &cfg, clock, NULL),
               POLYFLAKE_RESULT_NULL_PARAMETER);

  CHECK_RESULT(polyflake_timeid_generator_new(POLYFLAKE_TIME_FORMAT_UUID7, &cfg, clock, &g), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_timeid(g, a), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_format_uuid(a, text, sizeof text), POLYFLAKE_RESULT_OK);
  CHECK(strncmp(text, "017f22e2-79b0-7000-", 19) == 0, "UUID from the format-value handle %s", text);
  CHECK_RESULT(polyflake_next_timeid_within(g, b, 100), POLYFLAKE_RESULT_OK);
  CHECK(memcmp(a, b, sizeof a) < 0, "increasing");
  CHECK_RESULT(polyflake_timeid_health(g, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.ok && h.ids_issued == 2, "health: %s", h.reason);
  CHECK_RESULT(polyflake_timeid_generator_interrupt(g), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_timeid_generator_close(g), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_timeid(g, c), POLYFLAKE_RESULT_GENERATOR_CLOSED);
  polyflake_timeid_generator_free(g);
  polyflake_timeid_generator_free(NULL);

  CHECK_RESULT(polyflake_timeid_generator_new(POLYFLAKE_TIME_FORMAT_ULID, &cfg, clock, &g), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_timeid(g, a), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_timeids(g, batch[0], 2), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_timeids_within(g, batch[2], 1, 100), POLYFLAKE_RESULT_OK);
  /* A ULID's +1 within the millisecond, across the single and the batch calls. */
  for (i = 0; i < 3; i++) {
    int k;
    memcpy(c, i == 0 ? a : batch[i - 1], sizeof c);
    for (k = 15; k >= 0 && ++c[k] == 0; k--) {
    }
    CHECK(memcmp(c, batch[i], sizeof c) == 0, "ULID + 1 at %d", i);
  }
  polyflake_timeid_generator_free(g);
  polyflake_clock_free(clock);
  printf("format value: either format from one handle type; an unknown format refused\n");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s VECTORS_DIR\n", argv[0]);
    return 2;
  }
  printf("polyflake %s (C, UUIDv7 and ULID)\n", polyflake_version());
  vectors(argv[1]);
  generators();
  format_value();
  bad_input();
  threads();
  fork_goes_on();
  printf("%d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
