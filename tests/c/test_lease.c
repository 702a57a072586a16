/*
 * The C test of polyflake's node-id sources through the C ABI: file leases in a temporary
 * directory (two holders get two slots, NO_FREE_SLOT, a freed slot taken again behind the
 * restart guard, the lease in the health snapshot), the static sources (env, hostname ordinal,
 * IPv4 subnet), bad options (NULL, out of range, not UTF-8), an unreachable etcd and ZooKeeper,
 * the TLS and credential fields (and their environment fallback), a real etcd and a real
 * ZooKeeper (two slots, NO_FREE_SLOT, a freed slot behind its guard, health naming the store),
 * an etcd lease revoked under a holder with common.heal (healed, no ID twice), and ZooKeeper
 * digest auth.
 *
 * Usage: test_lease ZOOKEEPER_ENSEMBLE ETCD_ENDPOINT   (tests/stores/with_zookeeper.sh and
 * tests/c/with_etcd.sh start both on 127.0.0.1 with free ports and temporary data, and stop
 * them afterwards)
 * Built twice by .build/mk/c.mk, against libpolyflake.so and libpolyflake.a, and run again under valgrind.
 */
#include "polyflake.h"
#include "check.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double slack = 1.0;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One ID, retrying (bounded) while the restart guard waits: the only refusal a fresh holder may
 * give. Returns the last result. */
static polyflake_result first_id(const polyflake_generator *g, uint64_t *id, int *guard_refusals) {
  double start = now_ms();
  polyflake_result r;
  for (;;) {
    r = polyflake_next_id(g, id);
    if (r != POLYFLAKE_RESULT_LEASE_NOT_READY || now_ms() - start > 15000.0 * slack) return r;
    (*guard_refusals)++;
    sleep_ms(1);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* File leases                                                                                */

static void file_leases(void) {
  char dir[] = "/tmp/polyflake-c-lease-XXXXXX";
  polyflake_config cfg;
  polyflake_file_lease_options o;
  polyflake_generator *a = NULL, *b = NULL, *c = NULL;
  polyflake_health_snapshot h;
  polyflake_decoded d;
  uint64_t id = 0, last_a = 0;
  int64_t slot_a, slot_b, i;
  int refusals = 0;
  /* R's reserve; renewed every reserve / 5. Wide under valgrind, where threads stall longer. */
  const uint64_t reserve = slack > 1.0 ? 5000 : 1000;

  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(2);
  }
  polyflake_config_init(&cfg);
  cfg.node_id = 999; /* ignored: the slot is the node id */
  CHECK_RESULT(polyflake_file_lease_options_init(&o), POLYFLAKE_RESULT_OK);
  /* The core's defaults, from the init function (0 is never a default). */
  CHECK(o.dir == NULL && o.common.slots == POLYFLAKE_ALL_SLOTS && o.common.identity == NULL &&
            o.common.reserve_ms == 5000 && o.common.max_guard_wait_ms == 60000,
        "file lease defaults");
  o.dir = dir;
  o.common.slots = 2;
  o.common.identity = "c-test-a";
  o.common.reserve_ms = reserve;

  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &a), POLYFLAKE_RESULT_OK);
  o.common.identity = "c-test-b";
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &b), POLYFLAKE_RESULT_OK);
  if (!a || !b) {
    fprintf(stderr, "FATAL: no file lease: %s\n", last_message());
    exit(1);
  }
  slot_a = node_of(a);
  slot_b = node_of(b);
  CHECK(slot_a >= 0 && slot_a < 2 && slot_b >= 0 && slot_b < 2 && slot_a != slot_b,
        "two holders in one process, two slots: %" PRId64 " and %" PRId64, slot_a, slot_b);

  /* A NEW slot has no record: a holder nobody can see may have reached a full reserve, so it
   * is guarded for one (restart_guard) until polyflake_wait_ready waits it out. The guard is
   * the last millisecond such a holder may have issued (take time + reserve); issuing starts one
   * millisecond after it, so the wait right after taking the slot is reserve + 1 ms at most
   * (docs/decisions.md, "The restart guard's arithmetic"). */
  CHECK_RESULT(polyflake_health(a, &h), POLYFLAKE_RESULT_OK);
  CHECK(!h.ok && h.status == POLYFLAKE_HEALTH_STATUS_RESTART_GUARD && h.lease_has_guard &&
            h.lease_guard_waiting && h.lease_guard_remaining_ms > 0 &&
            h.lease_guard_remaining_ms <= (uint64_t)reserve + 1 &&
            h.lease_phase == POLYFLAKE_LEASE_PHASE_RESTART_GUARD,
        "a new slot's guard: %s, %" PRIu64 " ms", h.reason, h.lease_guard_remaining_ms);
  id = 42;
  CHECK_RESULT(polyflake_next_id(a, &id), POLYFLAKE_RESULT_LEASE_NOT_READY);
  CHECK(id == 42, "out-param written on error");
  CHECK_RESULT(polyflake_wait_ready(a, (uint64_t)(3 * reserve)), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_wait_ready(b, (uint64_t)(3 * reserve)), POLYFLAKE_RESULT_OK);
  /* IDs carry the slot. */
  for (i = 0; i < 1000; i++) {
    CHECK_RESULT(polyflake_next_id(a, &id), POLYFLAKE_RESULT_OK);
    CHECK(id > last_a, "increasing");
    last_a = id;
  }
  CHECK_RESULT(polyflake_generator_decode(a, last_a, &d), POLYFLAKE_RESULT_OK);
  CHECK(d.node_id == slot_a, "ID node %u, slot %" PRId64, d.node_id, slot_a);

  CHECK_RESULT(polyflake_health(a, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.ok && h.status == POLYFLAKE_HEALTH_STATUS_OK, "healthy: %s", h.reason);
  CHECK(h.source == POLYFLAKE_NODE_SOURCE_FILE_LEASE, "source %u", h.source);
  CHECK(strcmp(polyflake_node_source_name(h.source), "file_lease") == 0, "source name");
  CHECK(h.lease_kind == POLYFLAKE_LEASE_KIND_FILE, "lease kind %u", h.lease_kind);
  CHECK(h.lease_slot == (uint32_t)slot_a && h.node_id == (uint32_t)slot_a, "lease slot %u", h.lease_slot);
  CHECK(h.lease_high_water_ms >= d.timestamp_ms, "R %" PRId64 " behind an issued ms %" PRId64,
        h.lease_high_water_ms, d.timestamp_ms);
  CHECK(h.lease_high_water_ms > h.wall_ms && h.lease_high_water_ms <= h.wall_ms + (int64_t)reserve,
        "R = now + reserve: R %" PRId64 ", wall %" PRId64, h.lease_high_water_ms, h.wall_ms);
  CHECK(h.lease_has_guard && !h.lease_guard_waiting && h.lease_guard_remaining_ms == 0 &&
            !h.lease_expired && h.lease_phase == POLYFLAKE_LEASE_PHASE_HELD &&
            h.lease_guard_note[0] == 0,
        "the new slot's guard has passed: phase %s", polyflake_lease_phase_name(h.lease_phase));
  CHECK(!h.lease_lost && h.lease_store[0] != 0 && strstr(h.lease_store, dir) != NULL,
        "store %s", h.lease_store);
  CHECK(h.lease_last_error[0] == 0, "no store error: %s", h.lease_last_error);

  /* The renewal thread keeps R ahead (every reserve / 5). Poll for its first renewal rather
   * than sleep a fixed two and a half periods: a loaded machine can deschedule the thread past
   * those, and the check is that it renews, not how promptly. */
  {
    double start = now_ms();
    do {
      CHECK_RESULT(polyflake_health(a, &h), POLYFLAKE_RESULT_OK);
      if (h.lease_renewals >= 1 || h.lease_failures > 0) break;
      sleep_ms(10);
    } while (now_ms() - start < 10000.0 * slack);
  }
  CHECK(h.lease_renewals >= 1 && h.lease_failures == 0, "renewals %" PRIu64 ", failures %" PRIu64,
        h.lease_renewals, h.lease_failures);

  /* Both slots held: a third holder is refused, with the directory and slot count named. */
  o.common.identity = "c-test-c";
  c = (polyflake_generator *)&id; /* a sentinel: must stay untouched */
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &c), POLYFLAKE_RESULT_NO_FREE_SLOT);
  CHECK(c == (polyflake_generator *)&id, "out-param written on error");
  CHECK(strstr(last_message(), dir) != NULL && strstr(last_message(), "2") != NULL,
        "NO_FREE_SLOT message: %s", last_message());

  /* Freeing a frees its slot; the new holder finds a's last millisecond as R and issues only
   * after it (the restart guard), with the slot a had. */
  polyflake_generator_free(a);
  c = NULL;
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &c), POLYFLAKE_RESULT_OK);
  if (c) {
    CHECK(node_of(c) == slot_a, "freed slot %" PRId64 " taken again, got %" PRId64, slot_a, node_of(c));
    CHECK_RESULT(polyflake_health(c, &h), POLYFLAKE_RESULT_OK);
    CHECK(h.lease_has_guard && h.lease_guard_until_ms == d.timestamp_ms,
          "guard %" PRId64 " = the previous holder's last ms %" PRId64, h.lease_guard_until_ms,
          d.timestamp_ms);
    CHECK_RESULT(first_id(c, &id, &refusals), POLYFLAKE_RESULT_OK);
    {
      polyflake_decoded dc;
      polyflake_generator_decode(c, id, &dc);
      CHECK(dc.timestamp_ms > d.timestamp_ms && dc.node_id == slot_a,
            "after the guard: %" PRId64 " > %" PRId64, dc.timestamp_ms, d.timestamp_ms);
    }
    CHECK_RESULT(polyflake_health(c, &h), POLYFLAKE_RESULT_OK);
    CHECK(h.ok && !h.lease_guard_waiting && h.lease_guard_remaining_ms == 0, "guard passed");
  }
  polyflake_generator_free(b);
  polyflake_generator_free(c);

  /* slots = 1 and two holders: the second gets NO_FREE_SLOT. */
  o.common.slots = 1;
  o.common.identity = NULL; /* the hostname */
  a = b = NULL;
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &a), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &b), POLYFLAKE_RESULT_NO_FREE_SLOT);
  CHECK(b == NULL && node_of(a) == 0, "one slot, one holder");
  polyflake_generator_free(a);

  remove_tree(dir);
  printf("file leases: ok (%d restart-guard refusals waited out)\n", refusals);
}

/* ------------------------------------------------------------------------------------------ */
/* Bad options                                                                                */

static void bad_options(void) {
  polyflake_config cfg;
  polyflake_file_lease_options o;
  polyflake_etcd_options e;
  polyflake_generator *g = NULL;
  const char *endpoints[2] = {"http://127.0.0.1:1", NULL};
  const polyflake_result N = POLYFLAKE_RESULT_NULL_PARAMETER;
  const polyflake_result S = POLYFLAKE_RESULT_INVALID_NODE_SOURCE;
  char dir[] = "/tmp/polyflake-c-bad-XXXXXX";

  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(2);
  }
  polyflake_config_init(&cfg);
  CHECK_RESULT(polyflake_file_lease_options_init(NULL), N);
  CHECK_RESULT(polyflake_etcd_options_init(NULL), N);
  polyflake_file_lease_options_init(&o);
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &g), N); /* dir NULL */
  o.dir = dir;
  CHECK_RESULT(polyflake_generator_new_file_lease(NULL, &o, NULL, &g), N);
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, NULL, NULL, &g), N);
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, NULL), N);
  o.common.slots = 1025; /* more than the 1024 node ids of 10 node bits */
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &g), S);
  CHECK(strstr(last_message(), "1025") != NULL, "message: %s", last_message());
  o.common.slots = 0; /* refused: 0 is no default (POLYFLAKE_ALL_SLOTS is "every node id") */
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &g), S);
  CHECK(strstr(last_message(), "slots = 0") != NULL, "message: %s", last_message());
  o.common.slots = POLYFLAKE_ALL_SLOTS;
  o.common.reserve_ms = 5;
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &g), S);
  o.common.reserve_ms = 0; /* refused like every other binding: never silently the default */
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &g), S);
  CHECK(strstr(last_message(), "reserve_ms = 0") != NULL, "message: %s", last_message());
  o.common.reserve_ms = 5000;
  o.common.max_guard_wait_ms = UINT64_C(31536000001); /* past a year */
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &g), S);
  CHECK(strstr(last_message(), "max_guard_wait_ms") != NULL, "message: %s", last_message());
  o.common.max_guard_wait_ms = 60000;
  o.common.identity = "a/b";
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &g), S);
  o.common.identity = "";
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &g), S);
  o.common.identity = "\xff\xfe";
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &g), S);
  CHECK(strstr(last_message(), "UTF-8") != NULL, "message: %s", last_message());
  o.common.identity = NULL;
  cfg.mode = 9;
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  polyflake_config_init(&cfg);
  o.dir = "/dev/null/polyflake"; /* cannot be a directory */
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &g), POLYFLAKE_RESULT_LEASE_STORE);
  CHECK(g == NULL, "out-param written on error");

  CHECK_RESULT(polyflake_etcd_options_init(&e), POLYFLAKE_RESULT_OK);
  CHECK(e.endpoints == NULL && e.endpoint_count == 0 && e.ttl_s == 10 &&
            e.store.prefix == NULL && e.store.connect_timeout_ms == 2000 &&
            e.common.reserve_ms == 5000 && e.common.slots == POLYFLAKE_ALL_SLOTS &&
            e.common.identity == NULL && e.common.max_guard_wait_ms == 60000,
        "etcd defaults");
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), S); /* no endpoint */
  e.endpoint_count = 1;
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), N); /* endpoints NULL */
  e.endpoints = endpoints;
  e.endpoint_count = 2;
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), N); /* a NULL entry */
  e.endpoint_count = 1;
  CHECK_RESULT(polyflake_generator_new_etcd(NULL, &e, NULL, &g), N);
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, NULL, NULL, &g), N);
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, NULL), N);
  e.ttl_s = -1;
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), S);
  e.ttl_s = 0; /* refused, never the default */
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), S);
  e.ttl_s = 10;
  e.store.connect_timeout_ms = 0;
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), S);
  e.store.connect_timeout_ms = 2000;
  e.store.prefix = "no-slash";
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), S);
  e.store.prefix = "/\xc3";
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), S);
  e.store.prefix = NULL;
  e.store.connect_timeout_ms = 600001;
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), S);
  /* Nothing listens on port 1: the store error comes back within the short timeout. */
  e.store.connect_timeout_ms = 300;
  {
    double start = now_ms();
    CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), POLYFLAKE_RESULT_LEASE_STORE);
    CHECK(now_ms() - start < 10000.0 * slack, "unreachable etcd took %.0f ms", now_ms() - start);
    CHECK(strstr(last_message(), "127.0.0.1:1") != NULL, "message: %s", last_message());
  }
  CHECK(g == NULL, "out-param written on error");

  /* The static sources' NULLs and bad input. */
  CHECK_RESULT(polyflake_generator_new_from_env(NULL, "X", NULL, &g), N);
  CHECK_RESULT(polyflake_generator_new_from_env(&cfg, NULL, NULL, &g), N);
  CHECK_RESULT(polyflake_generator_new_from_env(&cfg, "X", NULL, NULL), N);
  CHECK_RESULT(polyflake_generator_new_from_hostname(NULL, "ids-1", NULL, &g), N);
  CHECK_RESULT(polyflake_generator_new_from_hostname(&cfg, "ids-1", NULL, NULL), N);
  CHECK_RESULT(polyflake_generator_new_from_ipv4(NULL, "10.0.0.1", 24, NULL, &g), N);
  CHECK_RESULT(polyflake_generator_new_from_ipv4(&cfg, NULL, 24, NULL, &g), N);
  CHECK_RESULT(polyflake_generator_new_from_ipv4(&cfg, "10.0.0.1", 24, NULL, NULL), N);
  CHECK(g == NULL, "out-param written on error");
  rmdir(dir);
  printf("bad options: ok\n");
}

/* ------------------------------------------------------------------------------------------ */
/* Static sources: env, hostname ordinal, IPv4                                                */

static int64_t node_from(polyflake_result r, polyflake_generator *g) {
  int64_t n = r == POLYFLAKE_RESULT_OK ? node_of(g) : -1;
  polyflake_generator_free(g);
  return n;
}

static void static_sources(void) {
  polyflake_config cfg;
  polyflake_generator *g = NULL;
  polyflake_health_snapshot h;
  const polyflake_result S = POLYFLAKE_RESULT_INVALID_NODE_SOURCE;
  polyflake_result r;

  polyflake_config_init(&cfg);
  cfg.node_id = 1; /* ignored */
  setenv("POLYFLAKE_C_TEST_NODE", "12", 1);
  r = polyflake_generator_new_from_env(&cfg, "POLYFLAKE_C_TEST_NODE", NULL, &g);
  CHECK_RESULT(r, POLYFLAKE_RESULT_OK);
  if (r == POLYFLAKE_RESULT_OK) {
    polyflake_health(g, &h);
    /* Not a lease: the fixed node id's mark on this host (its restart guard). */
    CHECK(h.source == POLYFLAKE_NODE_SOURCE_ENV && h.lease_kind == POLYFLAKE_LEASE_KIND_HOST &&
              h.lease_slot == 12 && strstr(h.lease_store, "node-41-10-12-0012") != NULL &&
              h.restart_guard_note[0] == 0,
          "env source, its mark: kind %s, store %s, note '%s'",
          polyflake_lease_kind_name(h.lease_kind), h.lease_store, h.restart_guard_note);
  }
  CHECK(node_from(r, g) == 12, "env node");
  g = NULL;
  setenv("POLYFLAKE_C_TEST_NODE", "twelve", 1);
  CHECK_RESULT(polyflake_generator_new_from_env(&cfg, "POLYFLAKE_C_TEST_NODE", NULL, &g), S);
  setenv("POLYFLAKE_C_TEST_NODE", "5000", 1);
  CHECK_RESULT(polyflake_generator_new_from_env(&cfg, "POLYFLAKE_C_TEST_NODE", NULL, &g), POLYFLAKE_RESULT_INVALID_NODE_ID);
  unsetenv("POLYFLAKE_C_TEST_NODE");
  CHECK_RESULT(polyflake_generator_new_from_env(&cfg, "POLYFLAKE_C_TEST_NODE", NULL, &g), S);
  CHECK(strstr(last_message(), "POLYFLAKE_C_TEST_NODE") != NULL, "message: %s", last_message());

  r = polyflake_generator_new_from_hostname(&cfg, "ids-7.ids.default.svc", NULL, &g);
  CHECK_RESULT(r, POLYFLAKE_RESULT_OK);
  if (r == POLYFLAKE_RESULT_OK) {
    polyflake_health(g, &h);
    CHECK(strcmp(polyflake_node_source_name(h.source), "hostname") == 0, "hostname source");
  }
  CHECK(node_from(r, g) == 7, "hostname ordinal");
  g = NULL;
  CHECK_RESULT(polyflake_generator_new_from_hostname(&cfg, "ids", NULL, &g), S);
  CHECK_RESULT(polyflake_generator_new_from_hostname(&cfg, "ids-1024", NULL, &g), POLYFLAKE_RESULT_INVALID_NODE_ID);

  /* 10.1.7.9 in a /22: the low 10 bits, 3 * 256 + 9. */
  r = polyflake_generator_new_from_ipv4(&cfg, "10.1.7.9", 22, NULL, &g);
  CHECK_RESULT(r, POLYFLAKE_RESULT_OK);
  CHECK(node_from(r, g) == 3 * 256 + 9, "ipv4 /22");
  g = NULL;
  CHECK_RESULT(polyflake_generator_new_from_ipv4(&cfg, "10.1.7.9", 21, NULL, &g), S);
  CHECK(strstr(last_message(), "/21") != NULL, "message: %s", last_message());
  CHECK_RESULT(polyflake_generator_new_from_ipv4(&cfg, "10.1.7.9", 33, NULL, &g), S);
  CHECK_RESULT(polyflake_generator_new_from_ipv4(&cfg, "10.1.7.9", 256 + 22, NULL, &g), S);
  CHECK(strstr(last_message(), "278") != NULL, "a prefix is never wrapped: %s", last_message());
  CHECK_RESULT(polyflake_generator_new_from_ipv4(&cfg, "10.1.7", 22, NULL, &g), S);
  CHECK_RESULT(polyflake_generator_new_from_ipv4(&cfg, "::1", 22, NULL, &g), S);
  CHECK(g == NULL, "out-param written on error");
  /* Every source takes the optional clock: the reference literal, node 37 from a hostname. */
  {
    polyflake_clock *clock = NULL;
    uint64_t id = 0;
    polyflake_manual_clock_new(1737747358021, &clock);
    CHECK_RESULT(polyflake_generator_new_from_hostname(&cfg, "ids-37", clock, &g), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
    CHECK(id == UINT64_C(141264821508263936), "hostname on a manual clock: %" PRIu64, id);
    polyflake_generator_free(g);
    polyflake_clock_free(clock);
    g = NULL;
  }
  CHECK(strcmp(polyflake_node_source_name(POLYFLAKE_NODE_SOURCE_ETCD), "etcd") == 0, "etcd name");
  CHECK(strcmp(polyflake_node_source_name(77), "unknown") == 0, "unknown source");
  printf("static sources: ok\n");
}

/* ------------------------------------------------------------------------------------------ */
/* ZooKeeper and TLS/credential options: bad input needs no server                            */

static void zookeeper_and_tls_options(void) {
  polyflake_config cfg;
  polyflake_zookeeper_options z;
  polyflake_etcd_options e;
  polyflake_generator *g = NULL;
  const char *endpoint = "http://127.0.0.1:1";
  const polyflake_result N = POLYFLAKE_RESULT_NULL_PARAMETER;
  const polyflake_result S = POLYFLAKE_RESULT_INVALID_NODE_SOURCE;

  polyflake_config_init(&cfg);
  CHECK_RESULT(polyflake_zookeeper_options_init(NULL), N);
  CHECK_RESULT(polyflake_zookeeper_options_init(&z), POLYFLAKE_RESULT_OK);
  CHECK(z.ensemble == NULL && z.session_timeout_ms == 10000 && z.store.prefix == NULL &&
            z.store.connect_timeout_ms == 2000 && z.common.reserve_ms == 5000 &&
            z.common.slots == POLYFLAKE_ALL_SLOTS && z.common.identity == NULL &&
            z.common.max_guard_wait_ms == 60000,
        "ZooKeeper defaults");
  CHECK(z.store.credentials.ca_file == NULL && z.store.credentials.cert_file == NULL &&
            z.store.credentials.key_file == NULL && z.store.credentials.username == NULL &&
            z.store.credentials.password == NULL,
        "ZooKeeper TLS defaults");
  CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, &z, NULL, &g), N); /* ensemble NULL */
  z.ensemble = "";
  CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, &z, NULL, &g), S);
  CHECK(strstr(last_message(), "at least one server") != NULL, "message: %s", last_message());
  z.ensemble = " , ";
  CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, &z, NULL, &g), S);
  z.ensemble = "zk1"; /* no port */
  CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, &z, NULL, &g), S);
  CHECK(strstr(last_message(), "host:port") != NULL, "message: %s", last_message());
  z.ensemble = "127.0.0.1:1";
  CHECK_RESULT(polyflake_generator_new_zookeeper(NULL, &z, NULL, &g), N);
  CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, NULL, NULL, &g), N);
  CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, &z, NULL, NULL), N);
  z.store.prefix = "polyflake"; /* no leading slash */
  CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, &z, NULL, &g), S);
  CHECK(strstr(last_message(), "must start with '/'") != NULL, "message: %s", last_message());
  z.store.prefix = "/\xc3";
  CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, &z, NULL, &g), S);
  CHECK(strstr(last_message(), "UTF-8") != NULL, "message: %s", last_message());
  z.store.prefix = NULL;
  z.session_timeout_ms = 0; /* refused, never the default */
  CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, &z, NULL, &g), S);
  CHECK(strstr(last_message(), "session_timeout_ms") != NULL, "message: %s", last_message());
  z.session_timeout_ms = 10000;
  z.store.credentials.username = "ids"; /* a user without a password */
  CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, &z, NULL, &g), S);
  CHECK(strstr(last_message(), "has no password") != NULL, "message: %s", last_message());
  z.store.credentials.username = NULL;
  z.store.credentials.ca_file = "/nonexistent/c-missing-ca.pem";
  CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, &z, NULL, &g), S);
  CHECK(strstr(last_message(), "c-missing-ca.pem: cannot read it") != NULL, "message: %s",
        last_message());
  /* A NULL field is the core's environment variable: the same file named from there. */
  z.store.credentials.ca_file = NULL;
  setenv("POLYFLAKE_ZOOKEEPER_CA_FILE", "/nonexistent/c-env-ca.pem", 1);
  CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, &z, NULL, &g), S);
  CHECK(strstr(last_message(), "c-env-ca.pem") != NULL, "message: %s", last_message());
  unsetenv("POLYFLAKE_ZOOKEEPER_CA_FILE");
  /* Nothing listens on port 1: the store error comes back within connect_timeout_ms. */
  z.store.connect_timeout_ms = 500;
  {
    double start = now_ms();
    CHECK_RESULT(polyflake_generator_new_zookeeper(&cfg, &z, NULL, &g), POLYFLAKE_RESULT_LEASE_STORE);
    CHECK(now_ms() - start < 2500.0 * slack, "unreachable ZooKeeper took %.0f ms", now_ms() - start);
    CHECK(strstr(last_message(), "cannot reach ZooKeeper") != NULL, "message: %s", last_message());
  }

  /* The etcd options' TLS and credential fields reach the core the same way. */
  CHECK_RESULT(polyflake_etcd_options_init(&e), POLYFLAKE_RESULT_OK);
  CHECK(e.store.credentials.ca_file == NULL && e.store.credentials.cert_file == NULL &&
            e.store.credentials.key_file == NULL && e.store.credentials.username == NULL &&
            e.store.credentials.password == NULL,
        "etcd TLS defaults");
  e.endpoints = &endpoint;
  e.endpoint_count = 1;
  e.store.credentials.ca_file = "/nonexistent/c-etcd-ca.pem";
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), S);
  CHECK(strstr(last_message(), "c-etcd-ca.pem") != NULL, "message: %s", last_message());
  e.store.credentials.ca_file = NULL;
  setenv("POLYFLAKE_ETCD_CERT_FILE", "/nonexistent/c-etcd-env-cert.pem", 1);
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), S);
  CHECK(strstr(last_message(), "key_file") != NULL, "message: %s", last_message());
  unsetenv("POLYFLAKE_ETCD_CERT_FILE");
  e.store.credentials.password = "c-secret-9"; /* a password without a user */
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), S);
  CHECK(strstr(last_message(), "user name") != NULL, "message: %s", last_message());
  CHECK(strstr(last_message(), "c-secret-9") == NULL, "password in the message: %s", last_message());
  e.store.credentials.password = NULL;
  e.store.credentials.username = "\xff";
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), S);
  CHECK(strstr(last_message(), "UTF-8") != NULL, "message: %s", last_message());
  CHECK(g == NULL, "out-param written on error");
  printf("ZooKeeper and TLS options: ok\n");
}

/* ------------------------------------------------------------------------------------------ */
/* A real etcd and a real ZooKeeper: the same checks through either constructor                */

typedef struct {
  const char *name;     /* "etcd" or "ZooKeeper" */
  const char *where;    /* the endpoint or the ensemble */
  char prefix[64];
  int zk;
  polyflake_node_source source;
  polyflake_lease_kind kind;
  const char *username, *password; /* ZooKeeper digest auth (NULL: none) */
} remote_store;

static polyflake_result new_remote(const remote_store *st, const char *identity,
                                   polyflake_generator **out) {
  polyflake_config cfg;
  uint64_t reserve = slack > 1.0 ? 5000 : 1000, timeout = (uint64_t)(3000 * slack);
  polyflake_config_init(&cfg);
  if (st->zk) {
    polyflake_zookeeper_options z;
    polyflake_zookeeper_options_init(&z);
    z.ensemble = st->where;
    z.store.prefix = st->prefix;
    z.common.slots = 2;
    z.common.reserve_ms = reserve;
    z.store.connect_timeout_ms = timeout;
    z.common.identity = identity;
    z.store.credentials.username = st->username;
    z.store.credentials.password = st->password;
    return polyflake_generator_new_zookeeper(&cfg, &z, NULL, out);
  } else {
    polyflake_etcd_options e;
    polyflake_etcd_options_init(&e);
    e.endpoints = &st->where;
    e.endpoint_count = 1;
    e.store.prefix = st->prefix;
    e.common.slots = 2;
    e.common.reserve_ms = reserve;
    e.store.connect_timeout_ms = timeout;
    e.common.identity = identity;
    return polyflake_generator_new_etcd(&cfg, &e, NULL, out);
  }
}

static void remote_lease(remote_store *st) {
  polyflake_generator *a = NULL, *b = NULL, *c = NULL;
  polyflake_health_snapshot h;
  polyflake_decoded d;
  uint64_t id = 0;
  int refusals = 0, i;

  CHECK_RESULT(new_remote(st, "c-lease-a", &a), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(new_remote(st, "c-lease-b", &b), POLYFLAKE_RESULT_OK);
  if (!a || !b) {
    fprintf(stderr, "FATAL: no %s lease at %s: %s\n", st->name, st->where, last_message());
    exit(1);
  }
  CHECK(node_of(a) != node_of(b) && node_of(a) < 2 && node_of(b) < 2, "two %s slots", st->name);
  /* New slots: guarded for a full reserve first. */
  CHECK_RESULT(polyflake_wait_ready(a, (uint64_t)(15000 * slack)), POLYFLAKE_RESULT_OK);
  for (i = 0; i < 100; i++) CHECK_RESULT(polyflake_next_id(a, &id), POLYFLAKE_RESULT_OK);
  polyflake_generator_decode(a, id, &d);
  CHECK(d.node_id == node_of(a), "ID carries the %s slot", st->name);
  CHECK_RESULT(polyflake_health(a, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.ok && h.source == st->source && h.lease_kind == st->kind, "%s health: %s", st->name,
        h.reason);
  CHECK(h.lease_slot == (uint32_t)node_of(a) && h.lease_high_water_ms >= d.timestamp_ms &&
            !h.lease_lost,
        "%s lease state", st->name);
  CHECK(strstr(h.lease_store, st->where) != NULL && strstr(h.lease_store, st->prefix) != NULL,
        "%s store: %s", st->name, h.lease_store);

  CHECK_RESULT(new_remote(st, "c-lease-c", &c), POLYFLAKE_RESULT_NO_FREE_SLOT);
  CHECK(c == NULL, "out-param written on error");
  polyflake_generator_free(a);
  CHECK_RESULT(new_remote(st, "c-lease-c", &c), POLYFLAKE_RESULT_OK);
  if (c) {
    CHECK(node_of(c) == d.node_id, "freed %s slot taken again", st->name);
    CHECK_RESULT(polyflake_health(c, &h), POLYFLAKE_RESULT_OK);
    CHECK(h.lease_has_guard && h.lease_guard_until_ms >= d.timestamp_ms, "%s guard %" PRId64,
          st->name, h.lease_guard_until_ms);
    CHECK_RESULT(first_id(c, &id, &refusals), POLYFLAKE_RESULT_OK);
    {
      polyflake_decoded dc;
      polyflake_generator_decode(c, id, &dc);
      CHECK(dc.timestamp_ms > h.lease_guard_until_ms, "after the %s guard", st->name);
    }
  }
  polyflake_generator_free(b);
  polyflake_generator_free(c);
  printf("%s lease at %s: ok (%d restart-guard refusals waited out)\n", st->name, st->where,
         refusals);
}

/* The etcd lease of a holder with common.heal revoked (etcdctl lease revoke): the generator
 * heals by itself, a new slot behind its guard, the same handle issuing again within seconds;
 * no ID twice across the run; ids_issued goes on. */
static int64_t etcd_lease_of(const char *endpoint, const char *key) {
  char cmd[512], line[256];
  long long lease = -1;
  FILE *p;
  snprintf(cmd, sizeof cmd, "ETCDCTL_API=3 etcdctl --endpoints=%s get %s -w fields", endpoint, key);
  p = popen(cmd, "r");
  if (!p) return -1;
  while (fgets(line, sizeof line, p))
    if (strncmp(line, "\"Lease\" : ", 10) == 0) lease = atoll(line + 10);
  pclose(p);
  return lease;
}

static void etcd_revoked_heals(const char *endpoint) {
  polyflake_config cfg;
  polyflake_etcd_options e;
  polyflake_generator *g = NULL;
  polyflake_health_snapshot h;
  char prefix[64], key[96], cmd[512];
  uint64_t id = 0, *ids = NULL;
  size_t n = 0, cap = 0, i, dups = 0, before;
  int64_t lease, lost;
  int refusals = 0, other = 0, after = 0;
  double start, healed_in = -1.0;
  polyflake_result r;

  snprintf(prefix, sizeof prefix, "/polyflake-c-heal-%ld", (long)getpid());
  polyflake_config_init(&cfg);
  polyflake_etcd_options_init(&e);
  CHECK(!e.common.heal, "etcd: heal off by default");
  e.endpoints = &endpoint;
  e.endpoint_count = 1;
  e.store.prefix = prefix;
  e.store.connect_timeout_ms = (uint64_t)(3000 * slack);
  e.common.slots = 2;
  e.common.reserve_ms = slack > 1.0 ? 5000 : 1000;
  e.common.heal = true;
  CHECK_RESULT(polyflake_generator_new_etcd(&cfg, &e, NULL, &g), POLYFLAKE_RESULT_OK);
  if (!g) return;
  CHECK_RESULT(polyflake_wait_ready(g, (uint64_t)(15000 * slack)), POLYFLAKE_RESULT_OK);
  cap = 1 << 16;
  ids = malloc(cap * sizeof *ids);
  if (!ids) exit(2);
  for (i = 0; i < 1000; i++) {
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
    ids[n++] = id;
  }
  before = n;
  lost = node_of(g);
  snprintf(key, sizeof key, "%s/slot/%04" PRId64, prefix, lost);
  lease = etcd_lease_of(endpoint, key);
  CHECK(lease > 0, "the etcd lease of %s: %" PRId64, key, lease);
  snprintf(cmd, sizeof cmd, "ETCDCTL_API=3 etcdctl --endpoints=%s lease revoke %llx >/dev/null",
           endpoint, (unsigned long long)lease);
  CHECK(lease > 0 && system(cmd) == 0, "%s", cmd);
  start = now_ms();
  /* Mint on through the loss and the heal until 1,000 IDs came after the last refusal. */
  while (after < 1000 && now_ms() - start < 20000.0 * slack) {
    r = polyflake_next_id(g, &id);
    if (r == POLYFLAKE_RESULT_OK) {
      if (n == cap) {
        cap *= 2;
        ids = realloc(ids, cap * sizeof *ids);
        if (!ids) exit(2);
      }
      ids[n++] = id;
      if (refusals > 0) {
        if (healed_in < 0) healed_in = now_ms() - start;
        after++;
      } else {
        sleep_ms(1);
      }
      continue;
    }
    if (r == POLYFLAKE_RESULT_LEASE_LOST || r == POLYFLAKE_RESULT_LEASE_NOT_READY) refusals++;
    else other++;
    after = 0;
    healed_in = -1.0;
    sleep_ms(1);
  }
  CHECK(after >= 1000 && refusals > 0 && other == 0,
        "etcd: issuing again after the revoke (%d refusals, %d other, %d after)", refusals, other,
        after);
  CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.ok && !h.lease_lost && h.lease_kind == POLYFLAKE_LEASE_KIND_ETCD &&
            (int64_t)h.lease_slot == node_of(g),
        "etcd health after the heal: %s", h.reason);
  CHECK(h.ids_issued >= n, "etcd: ids_issued %" PRIu64 " goes on (%zu minted)", h.ids_issued, n);
  qsort(ids, n, sizeof *ids, cmp_u64);
  for (i = 1; i < n; i++) dups += ids[i] == ids[i - 1];
  CHECK(dups == 0, "etcd: %zu IDs twice across the heal", dups);
  printf("etcd lease revoked under a holder with heal: slot %" PRId64 " lost, slot %" PRId64
         " taken, issuing again after %.0f ms (%d refusals), %zu + %zu IDs, %zu twice\n",
         lost, node_of(g), healed_in, refusals, before, n - before, dups);
  polyflake_generator_free(g);
  free(ids);
}

/* ZooKeeper digest auth: the holder's znodes are its user's; another client without the
 * credentials, or with a wrong password, gets a clear LEASE_STORE error. */
static void zookeeper_auth(remote_store *st) {
  polyflake_generator *a = NULL, *b = NULL;
  uint64_t id;
  snprintf(st->prefix, sizeof st->prefix, "/polyflake-c-acl-%ld", (long)getpid());
  st->username = "c-ids";
  st->password = "right-password";
  CHECK_RESULT(new_remote(st, "c-acl-a", &a), POLYFLAKE_RESULT_OK);
  if (a) {
    CHECK_RESULT(polyflake_wait_ready(a, (uint64_t)(15000 * slack)), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_next_id(a, &id), POLYFLAKE_RESULT_OK);
  }
  st->password = "c-bad-pw-7";
  CHECK_RESULT(new_remote(st, "c-acl-b", &b), POLYFLAKE_RESULT_LEASE_STORE);
  CHECK(strstr(last_message(), "not authorized") != NULL && strstr(last_message(), "c-bad-pw-7") == NULL,
        "message: %s", last_message());
  st->username = st->password = NULL;
  CHECK_RESULT(new_remote(st, "c-acl-b", &b), POLYFLAKE_RESULT_LEASE_STORE);
  CHECK(strstr(last_message(), "username and password") != NULL, "message: %s", last_message());
  CHECK(b == NULL, "out-param written on error");
  if (a) CHECK_RESULT(polyflake_next_id(a, &id), POLYFLAKE_RESULT_OK);
  polyflake_generator_free(a);
  printf("ZooKeeper digest auth at %s: ok\n", st->where);
}

int main(int argc, char **argv) {
  if (getenv("POLYFLAKE_UNDER_VALGRIND")) slack = 20.0;
  if (argc != 3) {
    fprintf(stderr, "usage: %s ZOOKEEPER_ENSEMBLE ETCD_ENDPOINT\n", argv[0]);
    return 2;
  }
  printf("polyflake %s (C, node-id sources)\n", polyflake_version());
  file_leases();
  bad_options();
  static_sources();
  zookeeper_and_tls_options();
  {
    remote_store zk = {"ZooKeeper", NULL, "", 1, POLYFLAKE_NODE_SOURCE_ZOOKEEPER,
                       POLYFLAKE_LEASE_KIND_ZOOKEEPER, NULL, NULL};
    remote_store etcd = {"etcd", NULL, "", 0, POLYFLAKE_NODE_SOURCE_ETCD, POLYFLAKE_LEASE_KIND_ETCD,
                         NULL, NULL};
    zk.where = argv[1];
    etcd.where = argv[2];
    snprintf(zk.prefix, sizeof zk.prefix, "/polyflake-c-test-%ld", (long)getpid());
    snprintf(etcd.prefix, sizeof etcd.prefix, "/polyflake-c-test-%ld", (long)getpid());
    remote_lease(&etcd);
    etcd_revoked_heals(etcd.where);
    remote_lease(&zk);
    zookeeper_auth(&zk);
  }
  printf("%d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
