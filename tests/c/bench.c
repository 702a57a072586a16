/*
 * polyflake_next_id per call from C, measured exactly as ffi-c/benches/core_per_call.rs measures
 * the Rust core (same setups, same call count, best of the same number of rounds), so
 * `make bench-c` can report the C-over-Rust ratio. Not a test: it asserts nothing about speed.
 *
 * Usage: bench LABEL
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "polyflake.h"

#define CALLS 5000000L
#define ROUNDS 15

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double per_call(const polyflake_generator *g) {
  double best = 1e30;
  int r;
  for (r = 0; r < ROUNDS; r++) {
    volatile uint64_t sink = 0;
    uint64_t id;
    long i;
    double t = now_ns(), ns;
    for (i = 0; i < CALLS; i++) {
      if (polyflake_next_id(g, &id) != POLYFLAKE_RESULT_OK) {
        fprintf(stderr, "next_id failed\n");
        exit(1);
      }
      sink = id;
    }
    (void)sink;
    ns = (now_ns() - t) / (double)CALLS;
    if (ns < best) best = ns;
  }
  return best;
}

static polyflake_generator *make(uint32_t mode, polyflake_layout layout, int64_t node,
                                  uint32_t source) {
  polyflake_config cfg;
  polyflake_generator *g = NULL;
  polyflake_config_init(&cfg);
  cfg.mode = mode;
  cfg.layout = layout;
  cfg.node_id = node;
  cfg.clock_source = source;
  if (polyflake_generator_new(&cfg, NULL, &g) != POLYFLAKE_RESULT_OK) exit(1); /* system clock */
  return g;
}

/* The source in effect (the coarse one falls back to the precise one where it is too coarse). */
static const char *source_of(const polyflake_generator *g) {
  polyflake_health_snapshot h;
  if (polyflake_health(g, &h) != POLYFLAKE_RESULT_OK) exit(1);
  return polyflake_clock_source_name(h.clock_source);
}

int main(int argc, char **argv) {
  const char *label = argc > 1 ? argv[1] : "c";
  polyflake_layout wide = {41, 1, 21};
  uint32_t s;
  for (s = POLYFLAKE_CLOCK_SOURCE_PRECISE; s <= POLYFLAKE_CLOCK_SOURCE_COARSE; s++) {
    polyflake_generator *strict = make(POLYFLAKE_MODE_STRICT, wide, 1, s);
    polyflake_generator *mono = make(POLYFLAKE_MODE_MONOTONIC, polyflake_layout_default(), 1, s);
    printf("C (%s) strict 41/1/21 %-7s polyflake_next_id: %.2f ns/call\n", label, source_of(strict),
           per_call(strict));
    printf("C (%s) monotonic 41/10/12 %-7s polyflake_next_id: %.2f ns/call\n", label,
           source_of(mono), per_call(mono));
    polyflake_generator_free(strict);
    polyflake_generator_free(mono);
  }
  return 0;
}
