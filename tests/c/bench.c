/*
 * polyflake_next_id per call from C. Not a test: it asserts nothing about speed.
 *
 *   bench LABEL            make bench-c's table: each setup measured exactly as
 *                          ffi-c/benches/core_per_call.rs measures the Rust core (same setups,
 *                          same call count, best of the same number of rounds), beside
 *                          clock_gettime(CLOCK_REALTIME) measured the same way; then the CPU
 *                          time per wall-clock second of a strict loop at 41/10/12's ceiling
 *   bench --check LABEL    make bench-check's rows: one JSON object a line on stdout, each row
 *                          timed back to back with clock_gettime(CLOCK_REALTIME) in each of 201
 *                          rounds of ~1 ms, ratio = the median of the rounds' ratios
 *   bench --ceiling SECS [LABEL]   the ceiling alone, for SECS seconds
 *
 * LABEL is the build (static, shared); the check mode's rows from the shared library say so in
 * their names ("c shared ..."), the static library's carry the plain names.
 *
 * Every generator runs without a lead limit (a flat-out monotonic loop passes the default 5,000
 * ms within a second, then refuses), keeps no restart-guard mark (a mark's R, one reserve ahead,
 * bounds the lead too) and claims its node ids in a host scope of this process's own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "polyflake.h"

#define CALLS 5000000L
#define ROUNDS 15
#define CHECK_ROUNDS 201
#define CHECK_MS 1.0
#define BATCH 4096

static char scope[41];
static volatile uint64_t sink;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void fail(const char *what, polyflake_result r) {
  fprintf(stderr, "%s: %s\n", what, polyflake_result_name(r));
  exit(1);
}

/* The loops: n calls each, on ctx. */
typedef void (*loop_fn)(void *ctx, long n);

static void loop_clock(void *ctx, long n) {
  struct timespec ts;
  uint64_t s = 0;
  long i;
  (void)ctx;
  for (i = 0; i < n; i++) {
    clock_gettime(CLOCK_REALTIME, &ts);
    s += (uint64_t)ts.tv_nsec;
  }
  sink = s;
}

static void loop_next_id(void *ctx, long n) {
  const polyflake_generator *g = ctx;
  uint64_t id = 0;
  long i;
  for (i = 0; i < n; i++) {
    polyflake_result r = polyflake_next_id(g, &id);
    if (r != POLYFLAKE_RESULT_OK) fail("polyflake_next_id", r);
  }
  sink = id;
}

/* n IDs in batches of 4,096 (the last one shorter). */
static void loop_next_ids(void *ctx, long n) {
  static uint64_t buf[BATCH];
  const polyflake_generator *g = ctx;
  long done;
  for (done = 0; done < n; done += BATCH) {
    size_t k = (size_t)(n - done < BATCH ? n - done : BATCH);
    polyflake_result r = polyflake_next_ids(g, buf, k);
    if (r != POLYFLAKE_RESULT_OK) fail("polyflake_next_ids", r);
  }
  sink = buf[0];
}

static void loop_uuid7(void *ctx, long n) {
  uint8_t b[POLYFLAKE_ID128_LEN];
  long i;
  for (i = 0; i < n; i++) {
    polyflake_result r = polyflake_next_uuid7(ctx, b);
    if (r != POLYFLAKE_RESULT_OK) fail("polyflake_next_uuid7", r);
  }
  sink = b[15];
}

static void loop_ulid(void *ctx, long n) {
  uint8_t b[POLYFLAKE_ID128_LEN];
  long i;
  for (i = 0; i < n; i++) {
    polyflake_result r = polyflake_next_ulid(ctx, b);
    if (r != POLYFLAKE_RESULT_OK) fail("polyflake_next_ulid", r);
  }
  sink = b[15];
}

static double timed(loop_fn f, void *ctx, long n) {
  double t = now_ns();
  f(ctx, n);
  return (now_ns() - t) / (double)n;
}

/* make bench-c's figure: the best of ROUNDS rounds of CALLS calls. */
static double best_per_call(loop_fn f, void *ctx) {
  double best = 1e30;
  int r;
  for (r = 0; r < ROUNDS; r++) {
    double ns = timed(f, ctx, CALLS);
    if (ns < best) best = ns;
  }
  return best;
}

static polyflake_generator *make(uint32_t mode, polyflake_layout layout, int64_t node,
                                  uint32_t source) {
  polyflake_config cfg;
  polyflake_generator *g = NULL;
  polyflake_result r;
  polyflake_config_init(&cfg);
  cfg.mode = mode;
  cfg.layout = layout;
  cfg.node_id = node;
  cfg.clock_source = source;
  cfg.has_max_lead = 0;
  cfg.restart_guard = POLYFLAKE_RESTART_GUARD_OFF;
  cfg.host_scope = scope;
  r = polyflake_generator_new(&cfg, NULL, &g); /* the system clock */
  if (r != POLYFLAKE_RESULT_OK) fail("polyflake_generator_new", r);
  return g;
}

static void timeid_config(polyflake_timeid_config *cfg) {
  polyflake_timeid_config_init(cfg);
  cfg->has_max_lead = 0;
}

/* The source in effect (the coarse one falls back to the precise one where it is too coarse). */
static const char *source_of(const polyflake_generator *g) {
  polyflake_health_snapshot h;
  if (polyflake_health(g, &h) != POLYFLAKE_RESULT_OK) exit(1);
  return polyflake_clock_source_name(h.clock_source);
}

/* ---- check mode -------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(const double *v, int n) {
  double s[CHECK_ROUNDS];
  memcpy(s, v, sizeof(double) * (size_t)n);
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  return s[n / 2];
}

/* How many calls of f take about ms milliseconds: from the fastest of three timings of a count
 * that takes over 2 ms (a timing the scheduler cut into would give too few). */
static long calibrate(loop_fn f, void *ctx, double ms) {
  long n = 100, k;
  double ns;
  int i;
  while (timed(f, ctx, n) * (double)n < 2e6 && n < (1L << 30)) n *= 4;
  ns = timed(f, ctx, n);
  for (i = 0; i < 2; i++) {
    double t = timed(f, ctx, n);
    if (t < ns) ns = t;
  }
  k = (long)(ms * 1e6 / ns);
  return k > 100 ? k : 100;
}

/* The row's case and the reference timed back to back in each round (which goes first
 * alternates); the medians of each and the median of the rounds' ratios. */
static void check_row(const char *prefix, const char *row, loop_fn f, void *ctx) {
  double r[CHECK_ROUNDS], s[CHECK_ROUNDS], ratio[CHECK_ROUNDS];
  long nr = calibrate(loop_clock, NULL, CHECK_MS), ns = calibrate(f, ctx, CHECK_MS);
  int i;
  timed(loop_clock, NULL, nr);
  timed(f, ctx, ns);
  for (i = 0; i < CHECK_ROUNDS; i++) {
    if (i % 2 == 0) {
      r[i] = timed(loop_clock, NULL, nr);
      s[i] = timed(f, ctx, ns);
    } else {
      s[i] = timed(f, ctx, ns);
      r[i] = timed(loop_clock, NULL, nr);
    }
    ratio[i] = s[i] / r[i];
  }
  printf("{\"row\": \"%s%s\", \"ns\": %.3f, \"reference\": \"clock_gettime(CLOCK_REALTIME)\", "
         "\"reference_ns\": %.3f, \"ratio\": %.4f}\n",
         prefix, row, median(s, CHECK_ROUNDS), median(r, CHECK_ROUNDS),
         median(ratio, CHECK_ROUNDS));
  fflush(stdout);
}

static int check(const char *label) {
  polyflake_layout wide = {41, 1, 21}, def = polyflake_layout_default();
  const char *prefix = strcmp(label, "shared") == 0 ? "c shared " : "c ";
  polyflake_generator *strict = make(POLYFLAKE_MODE_STRICT, wide, 0, POLYFLAKE_CLOCK_SOURCE_PRECISE);
  polyflake_generator *strict_coarse =
      make(POLYFLAKE_MODE_STRICT, wide, 1, POLYFLAKE_CLOCK_SOURCE_COARSE);
  polyflake_generator *mono = make(POLYFLAKE_MODE_MONOTONIC, def, 2, POLYFLAKE_CLOCK_SOURCE_PRECISE);
  polyflake_generator *mono_coarse =
      make(POLYFLAKE_MODE_MONOTONIC, def, 3, POLYFLAKE_CLOCK_SOURCE_COARSE);
  polyflake_generator *batch = make(POLYFLAKE_MODE_MONOTONIC, def, 4, POLYFLAKE_CLOCK_SOURCE_PRECISE);
  polyflake_timeid_config tc;
  polyflake_uuid7_generator *u = NULL;
  polyflake_ulid_generator *l = NULL;
  polyflake_result res;
  timeid_config(&tc);
  if ((res = polyflake_uuid7_generator_new(&tc, NULL, &u)) != POLYFLAKE_RESULT_OK)
    fail("polyflake_uuid7_generator_new", res);
  if ((res = polyflake_ulid_generator_new(&tc, NULL, &l)) != POLYFLAKE_RESULT_OK)
    fail("polyflake_ulid_generator_new", res);
  check_row(prefix, "next_id strict 41/1/21", loop_next_id, strict);
  check_row(prefix, "next_id strict coarse 41/1/21", loop_next_id, strict_coarse);
  check_row(prefix, "next_id monotonic 41/10/12", loop_next_id, mono);
  check_row(prefix, "next_id monotonic coarse 41/10/12", loop_next_id, mono_coarse);
  check_row(prefix, "next_ids(4096) per id", loop_next_ids, batch);
  check_row(prefix, "next_uuid7", loop_uuid7, u);
  check_row(prefix, "next_ulid", loop_ulid, l);
  polyflake_generator_free(strict);
  polyflake_generator_free(strict_coarse);
  polyflake_generator_free(mono);
  polyflake_generator_free(mono_coarse);
  polyflake_generator_free(batch);
  polyflake_uuid7_generator_free(u);
  polyflake_ulid_generator_free(l);
  return 0;
}

/* ---- the ceiling ------------------------------------------------------------------------- */

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A strict loop on the default layout for secs seconds: it may issue 4,096 IDs a millisecond
 * (4,096,000 a second), then waits for the next millisecond (the core sleeps to its boundary). */
static void ceiling(const char *label, double secs) {
  polyflake_generator *g =
      make(POLYFLAKE_MODE_STRICT, polyflake_layout_default(), 5, POLYFLAKE_CLOCK_SOURCE_PRECISE);
  double t0 = now_ns(), c0 = cpu_ns(), wall, cpu;
  uint64_t id = 0, n = 0;
  polyflake_result r;
  while (now_ns() - t0 < secs * 1e9) {
    long i;
    for (i = 0; i < 1024; i++) {
      if ((r = polyflake_next_id(g, &id)) != POLYFLAKE_RESULT_OK) fail("polyflake_next_id", r);
    }
    n += 1024;
  }
  wall = (now_ns() - t0) / 1e9;
  cpu = (cpu_ns() - c0) / 1e9;
  sink = id;
  printf("C (%s) strict 41/10/12 precise polyflake_next_id at the ceiling: %.0f IDs/s = %.2f%% of "
         "4096000/s, %.3f CPU-s per wall-s\n",
         label, (double)n / wall, 100.0 * (double)n / wall / 4096000.0, cpu / wall);
  polyflake_generator_free(g);
}

int main(int argc, char **argv) {
  const char *label = "c";
  polyflake_layout wide = {41, 1, 21};
  uint32_t s;
  double clock_ns;
  snprintf(scope, sizeof scope, "bench-c-%ld", (long)getpid());
  if (argc > 2 && strcmp(argv[1], "--check") == 0) return check(argv[2]);
  if (argc > 2 && strcmp(argv[1], "--ceiling") == 0) {
    ceiling(argc > 3 ? argv[3] : "c", atof(argv[2]));
    return 0;
  }
  if (argc > 1) label = argv[1];
  clock_ns = best_per_call(loop_clock, NULL);
  printf("C (%s) clock_gettime(CLOCK_REALTIME) (the reference): %.2f ns/call\n", label, clock_ns);
  for (s = POLYFLAKE_CLOCK_SOURCE_PRECISE; s <= POLYFLAKE_CLOCK_SOURCE_COARSE; s++) {
    polyflake_generator *strict = make(POLYFLAKE_MODE_STRICT, wide, 1, s);
    polyflake_generator *mono = make(POLYFLAKE_MODE_MONOTONIC, polyflake_layout_default(), 1, s);
    double ns = best_per_call(loop_next_id, strict);
    printf("C (%s) strict 41/1/21 %-7s polyflake_next_id: %.2f ns/call (%.2fx the clock read)\n",
           label, source_of(strict), ns, ns / clock_ns);
    ns = best_per_call(loop_next_id, mono);
    printf("C (%s) monotonic 41/10/12 %-7s polyflake_next_id: %.2f ns/call (%.2fx the clock read)\n",
           label, source_of(mono), ns, ns / clock_ns);
    polyflake_generator_free(strict);
    polyflake_generator_free(mono);
  }
  ceiling(label, 1.0);
  return 0;
}
