/*
 * The C participant of the cross-language uniqueness run.
 *
 * Usage: participant_c LEASE_DIR SECONDS OUT_PATH [uuidv7]
 *
 * A strict generator (default layout and epoch) whose node id is a slot of the file lease on
 * LEASE_DIR (default slots, identity "c"), waiting out its restart guard with polyflake_wait_ready
 * (at most 15 s; a fresh directory's new slot is guarded for a full reserve). When LEASE_DIR is
 * zk://HOST:PORT[,HOST:PORT...]/PREFIX the slot is leased from that ZooKeeper ensemble under that
 * znode prefix instead (polyflake_generator_new_zookeeper; no /PREFIX: the default "/polyflake").
 * Then single
 * polyflake_next_id calls at full speed for SECONDS seconds
 * (the time checked every 1,024 IDs) into a growable buffer. Writes OUT_PATH (the IDs as raw
 * little-endian uint64, in issue order) and OUT_PATH.json (language, node_id, count, seconds,
 * first, last). Exit 0 on success; on any error one line on stderr and exit 1.
 *
 * With `uuidv7`: a strict UUIDv7 generator on the system clock instead (no lease: LEASE_DIR is
 * ignored), single polyflake_next_uuid7 calls; OUT_PATH holds 16 bytes per UUID, big-endian, in
 * issue order, and OUT_PATH.json has "format": "uuidv7", node_id null, first and last as text.
 */
#include "polyflake.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LANGUAGE "c"
#define GUARD_WAIT_MS 15000

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One line on stderr, exit 1. `r` is a polyflake result (or OK for a non-polyflake error). */
static void fail(const char *what, polyflake_result r) {
  if (r != POLYFLAKE_RESULT_OK) {
    char msg[1024];
    size_t len = 0;
    if (polyflake_last_error_message(msg, sizeof msg, &len) != POLYFLAKE_RESULT_OK || len == 0) {
      snprintf(msg, sizeof msg, "%s", polyflake_result_message(r));
    }
    fprintf(stderr, "participant_c: %s: %s: %s\n", what, polyflake_result_name(r), msg);
  } else {
    fprintf(stderr, "participant_c: %s: %s\n", what, strerror(errno));
  }
  exit(1);
}

static int write_ids(const char *path, const uint64_t *ids, size_t n) {
  unsigned char chunk[8 * 4096];
  size_t i = 0;
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  while (i < n) {
    size_t k = 0, j;
    for (; i < n && k < sizeof chunk; i++) {
      for (j = 0; j < 8; j++) chunk[k++] = (unsigned char)(ids[i] >> (8 * j));
    }
    if (fwrite(chunk, 1, k, f) != k) {
      fclose(f);
      return -1;
    }
  }
  return fclose(f) == 0 ? 0 : -1;
}

static int write_bytes(const char *path, const uint8_t *bytes, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  if (n && fwrite(bytes, 1, n, f) != n) {
    fclose(f);
    return -1;
  }
  return fclose(f) == 0 ? 0 : -1;
}

/* The uuidv7 mode: single calls at full speed for `seconds`, then the raw bytes and the summary. */
static void run_uuidv7(double seconds, const char *out_path, const char *json_path) {
  polyflake_timeid_config cfg;
  polyflake_uuid7_generator *gen = NULL;
  polyflake_result r;
  size_t count = 0, cap = 1 << 20;
  uint8_t *ids;
  double start, deadline, elapsed;
  char first[POLYFLAKE_UUID_TEXT_LEN], last[POLYFLAKE_UUID_TEXT_LEN];
  FILE *f;
  polyflake_timeid_config_init(&cfg); /* strict */
  if ((r = polyflake_uuid7_generator_new(&cfg, NULL, &gen)) != POLYFLAKE_RESULT_OK)
    fail("uuid7 generator", r);
  ids = malloc(cap * POLYFLAKE_ID128_LEN);
  if (!ids) fail("malloc", POLYFLAKE_RESULT_OK);
  start = now_s();
  deadline = start + seconds;
  for (;;) {
    if ((count & 1023) == 0 && count > 0 && now_s() >= deadline) break;
    if (count == cap) {
      uint8_t *grown = realloc(ids, 2 * cap * POLYFLAKE_ID128_LEN);
      if (!grown) fail("realloc", POLYFLAKE_RESULT_OK);
      ids = grown;
      cap *= 2;
    }
    r = polyflake_next_uuid7(gen, ids + count * POLYFLAKE_ID128_LEN);
    if (r != POLYFLAKE_RESULT_OK) fail("next_uuid7", r);
    count++;
  }
  elapsed = now_s() - start;
  if (write_bytes(out_path, ids, count * POLYFLAKE_ID128_LEN) != 0) fail(out_path, POLYFLAKE_RESULT_OK);
  if ((r = polyflake_format_uuid(ids, first, sizeof first)) != POLYFLAKE_RESULT_OK ||
      (r = polyflake_format_uuid(ids + (count - 1) * POLYFLAKE_ID128_LEN, last, sizeof last)) !=
          POLYFLAKE_RESULT_OK)
    fail("format_uuid", r);
  f = fopen(json_path, "w");
  if (!f) fail(json_path, POLYFLAKE_RESULT_OK);
  fprintf(f,
          "{\"language\": \"%s\", \"format\": \"uuidv7\", \"node_id\": null, \"count\": %zu, "
          "\"seconds\": %.6f, \"first\": \"%s\", \"last\": \"%s\"}\n",
          LANGUAGE, count, elapsed, first, last);
  if (fclose(f) != 0) fail(json_path, POLYFLAKE_RESULT_OK);
  polyflake_uuid7_generator_free(gen);
  free(ids);
}

/* The generator: a slot of the file lease on `where`, or of the ZooKeeper ensemble of a
 * zk://ENSEMBLE/PREFIX address. */
static polyflake_generator *lease_from(const char *where) {
  polyflake_config cfg;
  polyflake_generator *gen = NULL;
  polyflake_result r;
  polyflake_config_init(&cfg); /* strict, layout 41/10/12, the default epoch */
  if (strncmp(where, "zk://", 5) == 0) {
    polyflake_zookeeper_options zk;
    char ensemble[4096];
    const char *hosts = where + 5, *slash = strchr(hosts, '/');
    size_t n = slash ? (size_t)(slash - hosts) : strlen(hosts);
    if (n >= sizeof ensemble) {
      fprintf(stderr, "participant_c: the ZooKeeper address is too long\n");
      exit(1);
    }
    memcpy(ensemble, hosts, n);
    ensemble[n] = 0;
    polyflake_zookeeper_options_init(&zk);
    zk.ensemble = ensemble;
    zk.store.prefix = slash; /* NULL: the default prefix */
    zk.common.identity = LANGUAGE;
    if ((r = polyflake_generator_new_zookeeper(&cfg, &zk, NULL, &gen)) != POLYFLAKE_RESULT_OK)
      fail("ZooKeeper lease", r);
  } else {
    polyflake_file_lease_options opts;
    polyflake_file_lease_options_init(&opts);
    opts.dir = where;
    opts.common.identity = LANGUAGE;
    if ((r = polyflake_generator_new_file_lease(&cfg, &opts, NULL, &gen)) != POLYFLAKE_RESULT_OK)
      fail("file lease", r);
  }
  return gen;
}

int main(int argc, char **argv) {
  polyflake_generator *gen = NULL;
  polyflake_result r = POLYFLAKE_RESULT_OK;
  uint64_t *ids, id = 0;
  size_t count = 0, cap = 1 << 20;
  double seconds, start, deadline, elapsed;
  char *end = NULL, json_path[4096];
  char first[POLYFLAKE_ID_TEXT_LEN], last[POLYFLAKE_ID_TEXT_LEN];
  size_t len;
  FILE *f;

  if (argc != 4 && !(argc == 5 && strcmp(argv[4], "uuidv7") == 0)) {
    fprintf(stderr, "usage: %s LEASE_DIR SECONDS OUT_PATH [uuidv7]\n", argv[0]);
    return 1;
  }
  errno = 0;
  seconds = strtod(argv[2], &end);
  if (errno || end == argv[2] || *end != 0 || !(seconds > 0.0) || seconds > 3600.0) {
    fprintf(stderr, "participant_c: SECONDS must be a number in (0, 3600], not \"%s\"\n", argv[2]);
    return 1;
  }
  if (snprintf(json_path, sizeof json_path, "%s.json", argv[3]) >= (int)sizeof json_path) {
    fprintf(stderr, "participant_c: OUT_PATH is too long\n");
    return 1;
  }

  if (argc == 5) {
    run_uuidv7(seconds, argv[3], json_path);
    return 0;
  }

  /* Take a slot (system clock), wait out its restart guard, then the first ID. */
  gen = lease_from(argv[1]);
  if ((r = polyflake_wait_ready(gen, GUARD_WAIT_MS)) != POLYFLAKE_RESULT_OK) fail("wait_ready", r);
  if ((r = polyflake_next_id(gen, &id)) != POLYFLAKE_RESULT_OK) fail("first ID", r);

  ids = malloc(cap * sizeof *ids);
  if (!ids) fail("malloc", POLYFLAKE_RESULT_OK);
  ids[count++] = id;

  start = now_s();
  deadline = start + seconds;
  for (;;) {
    if ((count & 1023) == 0 && now_s() >= deadline) break;
    if (count == cap) {
      uint64_t *grown = realloc(ids, 2 * cap * sizeof *ids);
      if (!grown) fail("realloc", POLYFLAKE_RESULT_OK);
      ids = grown;
      cap *= 2;
    }
    r = polyflake_next_id(gen, &ids[count]);
    if (r != POLYFLAKE_RESULT_OK) fail("next_id", r);
    count++;
  }
  elapsed = now_s() - start;

  if (write_ids(argv[3], ids, count) != 0) fail(argv[3], POLYFLAKE_RESULT_OK);
  if ((r = polyflake_format_id(ids[0], first, sizeof first, &len)) != POLYFLAKE_RESULT_OK ||
      (r = polyflake_format_id(ids[count - 1], last, sizeof last, &len)) != POLYFLAKE_RESULT_OK) {
    fail("format_id", r);
  }
  f = fopen(json_path, "w");
  if (!f) fail(json_path, POLYFLAKE_RESULT_OK);
  {
    polyflake_config held;
    if ((r = polyflake_generator_config(gen, &held)) != POLYFLAKE_RESULT_OK) fail("config", r);
    fprintf(f,
            "{\"language\": \"%s\", \"node_id\": %" PRId64 ", \"count\": %zu, \"seconds\": %.6f, "
            "\"first\": \"%s\", \"last\": \"%s\"}\n",
            LANGUAGE, held.node_id, count, elapsed, first, last);
  }
  if (fclose(f) != 0) fail(json_path, POLYFLAKE_RESULT_OK);
  polyflake_generator_free(gen);
  free(ids);
  return 0;
}
