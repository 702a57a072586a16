/*
 * The C test of polyflake's C ABI: layout vectors, every scenario file, bad input (NULL for every
 * pointer parameter, out-of-range values, invalid ID text), the same bad node-source inputs as
 * every binding (tests/vectors/bad_node_sources.json), forward clock steps on a manual clock,
 * and 8 threads on one handle.
 *
 * Usage: test_polyflake VECTORS_DIR [threads]   (tests/vectors; JSON read with cJSON; `threads`:
 *        only the 8-thread test, for the ThreadSanitizer run)
 * Built twice by .build/mk/c.mk, against libpolyflake.so and libpolyflake.a, and run again under valgrind.
 */
#include "polyflake.h"
#include "check.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


/* Abort the whole run: the test itself cannot go on (unreadable file, broken JSON, ...). */
static void die(const char *what, const char *detail) {
  fprintf(stderr, "FATAL: %s: %s\n", what, detail);
  exit(2);
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  long n;
  char *buf;
  if (!f) die("cannot open", path);
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)n + 1);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) die("cannot read", path);
  buf[n] = 0;
  fclose(f);
  return buf;
}

static cJSON *read_json(const char *path) {
  char *text = read_file(path);
  cJSON *doc = cJSON_Parse(text);
  free(text);
  if (!doc) die("bad JSON", path);
  return doc;
}

static const cJSON *get(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static int64_t num(const cJSON *obj, const char *key) {
  const cJSON *v = get(obj, key);
  if (!cJSON_IsNumber(v)) die("missing number", key);
  return (int64_t)v->valuedouble;
}

static const char *str(const cJSON *obj, const char *key) {
  const cJSON *v = get(obj, key);
  if (!cJSON_IsString(v)) die("missing string", key);
  return v->valuestring;
}

/* Fail on any key of `obj` that is not in the NULL-terminated list: a runner must not skip
 * what it does not understand. */
static void only_keys(const cJSON *obj, const char *where, const char *const *allowed) {
  const cJSON *item;
  cJSON_ArrayForEach(item, obj) {
    const char *const *a;
    int known = 0;
    for (a = allowed; *a; a++) known |= strcmp(*a, item->string) == 0;
    CHECK(known, "%s: unknown key \"%s\"", where, item->string);
  }
}

static uint64_t parse_u64(const char *text) { return strtoull(text, NULL, 10); }

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------------------------------------ */
/* Layout vectors                                                                             */

static void layout_vectors(const char *dir) {
  char path[4096];
  cJSON *doc;
  const cJSON *layouts, *entry, *lit, *v;
  int cases = 0;
  snprintf(path, sizeof path, "%s/layouts.json", dir);
  doc = read_json(path);
  CHECK(num(doc, "epoch_ms_default") == POLYFLAKE_DEFAULT_EPOCH_MS, "default epoch");
  layouts = get(doc, "layouts");
  CHECK(cJSON_GetArraySize(layouts) == 4, "four presets");
  cJSON_ArrayForEach(entry, layouts) {
    /* "long_lived_42_8_13" -> preset name "long_lived" and its bits */
    char name[64];
    char *cut;
    polyflake_layout l, by_fn;
    polyflake_layout_info info;
    char years[32], want_years[32];
    const cJSON *c;
    snprintf(name, sizeof name, "%s", entry->string);
    cut = strchr(name, '_');
    while (cut && !(cut[1] >= '0' && cut[1] <= '9')) cut = strchr(cut + 1, '_');
    if (!cut) die("layout key without bits", entry->string);
    *cut = 0;
    CHECK_RESULT(polyflake_layout_from_name(name, &l), POLYFLAKE_RESULT_OK);
    if (strcmp(name, "default") == 0) by_fn = polyflake_layout_default();
    else if (strcmp(name, "long_lived") == 0) by_fn = polyflake_layout_long_lived();
    else if (strcmp(name, "big_fleet") == 0) by_fn = polyflake_layout_big_fleet();
    else if (strcmp(name, "short") == 0) by_fn = polyflake_layout_short();
    else die("unknown preset", name);
    CHECK(memcmp(&l, &by_fn, sizeof l) == 0, "%s: getter and name agree", name);
    CHECK(l.timestamp_bits == (uint32_t)num(entry, "timestamp_bits"), "%s ts bits", name);
    CHECK(l.node_bits == (uint32_t)num(entry, "node_bits"), "%s node bits", name);
    CHECK(l.sequence_bits == (uint32_t)num(entry, "sequence_bits"), "%s seq bits", name);
    CHECK_RESULT(polyflake_layout_describe(l, &info), POLYFLAKE_RESULT_OK);
    CHECK(info.max_node_id == (uint64_t)num(entry, "max_node_id"), "%s max node", name);
    CHECK(info.max_sequence == (uint64_t)num(entry, "max_sequence"), "%s max seq", name);
    CHECK(info.max_elapsed_ms == (uint64_t)num(entry, "max_elapsed_ms"), "%s window", name);
    snprintf(years, sizeof years, "%.2f", info.years);
    snprintf(want_years, sizeof want_years, "%.2f", get(entry, "years")->valuedouble);
    CHECK(strcmp(years, want_years) == 0, "%s years %s want %s", name, years, want_years);
    cJSON_ArrayForEach(c, get(entry, "cases")) {
      int64_t ts = num(c, "epoch_ms");
      uint64_t node = (uint64_t)num(c, "node_id"), seq = (uint64_t)num(c, "sequence");
      const char *text = str(c, "id");
      uint64_t want = parse_u64(text), id = 0;
      polyflake_decoded d;
      char buf[POLYFLAKE_ID_TEXT_LEN];
      size_t len = 0;
      CHECK_RESULT(polyflake_compose(l, POLYFLAKE_DEFAULT_EPOCH_MS, ts, node, seq, &id),
                   POLYFLAKE_RESULT_OK);
      CHECK(id == want, "%s compose %s got %" PRIu64, name, text, id);
      CHECK_RESULT(polyflake_decode(l, POLYFLAKE_DEFAULT_EPOCH_MS, want, &d), POLYFLAKE_RESULT_OK);
      CHECK(d.timestamp_ms == ts && d.node_id == node && d.sequence == seq, "%s decode %s",
            name, text);
      CHECK_RESULT(polyflake_parse_id(text, &id), POLYFLAKE_RESULT_OK);
      CHECK(id == want, "%s parse %s", name, text);
      CHECK_RESULT(polyflake_format_id(want, buf, sizeof buf, &len), POLYFLAKE_RESULT_OK);
      CHECK(strcmp(buf, text) == 0 && len == strlen(text), "%s format %s got %s", name, text,
            buf);
      if (seq == 0) {
        /* A generator on a clock at the case's millisecond issues exactly this ID. */
        polyflake_config cfg;
        polyflake_clock *clock = NULL;
        polyflake_generator *g = NULL;
        polyflake_config_init(&cfg);
        cfg.layout = l;
        cfg.node_id = (int64_t)node;
        CHECK_RESULT(polyflake_manual_clock_new(ts, &clock), POLYFLAKE_RESULT_OK);
        CHECK_RESULT(polyflake_generator_new(&cfg, clock, &g), POLYFLAKE_RESULT_OK);
        CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
        CHECK(id == want, "%s generator at %s", name, text);
        polyflake_generator_free(g);
        polyflake_clock_free(clock);
      }
      cases++;
    }
  }
  CHECK(cases == 4 * 66, "cases run: %d", cases);

  cJSON_ArrayForEach(lit, get(doc, "literals")) {
    polyflake_decoded d;
    uint64_t id = 0;
    CHECK_RESULT(polyflake_parse_id(str(lit, "id"), &id), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_decode(polyflake_layout_default(), POLYFLAKE_DEFAULT_EPOCH_MS, id, &d),
                 POLYFLAKE_RESULT_OK);
    CHECK(d.timestamp_ms == num(lit, "epoch_ms") && d.node_id == (uint32_t)num(lit, "node_id") &&
              d.sequence == (uint32_t)num(lit, "sequence"),
          "literal %s", str(lit, "id"));
  }

  /* Invalid node ids: refused when the generator is made. */
  cJSON_ArrayForEach(v, get(get(doc, "invalid"), "node_id_default_layout")) {
    polyflake_config cfg;
    polyflake_clock *clock = NULL;
    polyflake_generator *g = NULL;
    if (v->valuedouble >= 9223372036854775807.0) {
      /* 2^63 has no int64_t form: the C type itself refuses it. Say so instead of skipping. */
      printf("  node id %.0f: not representable as int64_t node_id (refused by the type)\n",
             v->valuedouble);
      continue;
    }
    polyflake_config_init(&cfg);
    cfg.node_id = (int64_t)v->valuedouble;
    polyflake_manual_clock_new(POLYFLAKE_DEFAULT_EPOCH_MS, &clock);
    CHECK_RESULT(polyflake_generator_new(&cfg, clock, &g), POLYFLAKE_RESULT_INVALID_NODE_ID);
    CHECK(g == NULL, "out-param written on error");
    polyflake_clock_free(clock);
  }
  /* Invalid ID text: refused by the parser; values of 2^63 and up also by decode. */
  cJSON_ArrayForEach(v, get(get(doc, "invalid"), "decode_default_layout")) {
    uint64_t id = 7;
    polyflake_decoded d;
    CHECK_RESULT(polyflake_parse_id(v->valuestring, &id), POLYFLAKE_RESULT_INVALID_ID);
    CHECK(id == 7, "out-param written on error");
    if (strcmp(v->valuestring, "9223372036854775808") == 0) {
      CHECK_RESULT(polyflake_decode(polyflake_layout_default(), POLYFLAKE_DEFAULT_EPOCH_MS,
                                    UINT64_C(9223372036854775808), &d),
                   POLYFLAKE_RESULT_INVALID_ID);
    }
  }
  cJSON_ArrayForEach(v, get(get(doc, "invalid"), "layouts")) {
    polyflake_layout l;
    polyflake_layout_info info;
    char name[64];
    l.timestamp_bits = (uint32_t)cJSON_GetArrayItem(v, 0)->valuedouble;
    l.node_bits = (uint32_t)cJSON_GetArrayItem(v, 1)->valuedouble;
    l.sequence_bits = (uint32_t)cJSON_GetArrayItem(v, 2)->valuedouble;
    CHECK_RESULT(polyflake_layout_describe(l, &info), POLYFLAKE_RESULT_INVALID_LAYOUT);
    snprintf(name, sizeof name, "%u/%u/%u", l.timestamp_bits, l.node_bits, l.sequence_bits);
    CHECK(polyflake_layout_from_name(name, &l) != POLYFLAKE_RESULT_OK, "layout %s", name);
  }
  cJSON_Delete(doc);
  printf("layout vectors: %d cases ok\n", cases);
}

/* ------------------------------------------------------------------------------------------ */
/* Scenarios                                                                                  */

/* Every ID a scenario issues as 16 big-endian bytes (a Snowflake ID in the low 8), so one
 * memcmp orders and compares IDs of every format as numbers. */
typedef struct {
  uint8_t b[POLYFLAKE_ID128_LEN];
} id128_t;

static id128_t id128_of(uint64_t v) {
  id128_t x;
  int i;
  memset(x.b, 0, sizeof x.b);
  for (i = 0; i < 8; i++) x.b[15 - i] = (uint8_t)(v >> (8 * i));
  return x;
}

static uint64_t u64_of(const id128_t *x) {
  uint64_t v = 0;
  int i;
  for (i = 8; i < 16; i++) v = (v << 8) | x->b[i];
  return v;
}

static int cmp_id128(const void *a, const void *b) { return memcmp(a, b, sizeof(id128_t)); }

enum format { FMT_SNOWFLAKE, FMT_UUIDV7, FMT_ULID };

typedef struct {
  const char *key;
  enum format format;
  polyflake_generator *g;         /* FMT_SNOWFLAKE */
  polyflake_uuid7_generator *u;   /* FMT_UUIDV7 */
  polyflake_ulid_generator *l;    /* FMT_ULID */
  polyflake_clock *clock; /* NULL: the system clock */
  int manual;             /* the clock is a manual one (clock_set, clock_advance, clock_elapse) */
  int has_last;
  id128_t last;
  const cJSON *spec; /* kept for a `deferred` generator, made by a `create` step */
  int created;       /* made (up front or by `create`); a closed one stays, refusing */
} gen_t;

/* The clock source every generator of the running scenario uses: each file runs on the precise
 * source and again on the coarse one, as the Rust runner does. */
static uint32_t scenario_source = POLYFLAKE_CLOCK_SOURCE_PRECISE;

/* The scenario file's ONE lease directory (made on first use; "" when none), removed after it. */
static char lease_dir[64];

static const char *lease_dir_get(void) {
  if (!lease_dir[0]) {
    snprintf(lease_dir, sizeof lease_dir, "/tmp/polyflake-scenario-XXXXXX");
    if (!mkdtemp(lease_dir)) die("mkdtemp", lease_dir);
  }
  return lease_dir;
}

static void lease_dir_remove(void) {
  DIR *d;
  struct dirent *e;
  char path[512];
  if (!lease_dir[0]) return;
  d = opendir(lease_dir);
  if (d) {
    while ((e = readdir(d))) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(path, sizeof path, "%s/%s", lease_dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  if (rmdir(lease_dir) != 0) die("cannot remove the lease directory", lease_dir);
  lease_dir[0] = 0;
}

/* Expand a scripted clock's values: integers, or runs {start, count, step?, each?}. */
static int64_t *expand_values(const cJSON *values, size_t *n_out) {
  size_t n = 0, cap = 16;
  int64_t *out = malloc(cap * sizeof *out);
  const cJSON *v;
  static const char *const run_keys[] = {"start", "count", "step", "each", NULL};
  cJSON_ArrayForEach(v, values) {
    int64_t start, count, step, each, i;
    if (cJSON_IsNumber(v)) {
      start = (int64_t)v->valuedouble;
      count = 1;
      step = 0;
      each = 1;
    } else {
      only_keys(v, "scripted run", run_keys);
      start = num(v, "start");
      count = num(v, "count");
      step = get(v, "step") ? num(v, "step") : 0;
      each = get(v, "each") ? num(v, "each") : 1;
    }
    for (i = 0; i < count; i++) {
      if (n == cap) {
        cap *= 2;
        out = realloc(out, cap * sizeof *out);
        if (!out) die("out of memory", "values");
      }
      out[n++] = start + step * (i / each);
    }
  }
  *n_out = n;
  return out;
}

/* The settings every generator takes (mode, wait, lead, forward step) from a spec, and the
 * running scenario's clock source. */
static polyflake_timeid_config shared_settings(const cJSON *spec, const char *where) {
  polyflake_timeid_config s;
  const cJSON *step = get(spec, "max_forward_step_ms");
  const char *mode = str(spec, "mode");
  polyflake_timeid_config_init(&s);
  if (strcmp(mode, "strict") == 0) s.mode = POLYFLAKE_MODE_STRICT;
  else if (strcmp(mode, "monotonic") == 0) s.mode = POLYFLAKE_MODE_MONOTONIC;
  else die("unknown mode", where);
  if (get(spec, "max_wait_ms")) s.max_wait_ms = get(spec, "max_wait_ms")->valuedouble;
  if (get(spec, "max_lead_ms")) {
    s.has_max_lead = 1;
    s.max_lead_ms = num(spec, "max_lead_ms");
  }
  /* null turns the forward-step check off */
  if (cJSON_IsNull(step)) s.max_forward_step_ms = POLYFLAKE_FORWARD_STEP_OFF;
  else if (step) s.max_forward_step_ms = (uint64_t)num(spec, "max_forward_step_ms");
  if (get(spec, "forward_confirm_ms")) s.forward_confirm_ms = (uint64_t)num(spec, "forward_confirm_ms");
  s.clock_source = scenario_source;
  return s;
}

/* The spec's test clock into out->clock (none: the system clock). */
static void build_clock(const cJSON *clock, const char *where, gen_t *out) {
  static const char *const clock_keys[] = {"kind", "start_ms", "values", NULL};
  out->clock = NULL;
  out->manual = 0;
  if (!clock) return;
  only_keys(clock, where, clock_keys);
  if (strcmp(str(clock, "kind"), "manual") == 0) {
    out->manual = 1;
    if (polyflake_manual_clock_new(num(clock, "start_ms"), &out->clock) != POLYFLAKE_RESULT_OK)
      die("manual clock", where);
  } else if (strcmp(str(clock, "kind"), "scripted") == 0) {
    size_t n = 0;
    int64_t *values = expand_values(get(clock, "values"), &n);
    if (polyflake_scripted_clock_new(values, n, &out->clock) != POLYFLAKE_RESULT_OK)
      die("scripted clock", where);
    free(values);
  } else {
    die("unknown clock kind", where);
  }
}

/* A Snowflake generator from its spec, one constructor per source, each with the optional clock
 * (NULL: the system clock). */
static polyflake_result build_snowflake(const cJSON *spec, const char *where,
                                        const polyflake_timeid_config *s, gen_t *out) {
  static const char *const spec_keys[] = {"mode",        "node_id",     "layout",
                                          "epoch_ms",    "max_wait_ms", "max_lead_ms",
                                          "clock",       "source",      "deferred",
                                          "max_forward_step_ms", "forward_confirm_ms", NULL};
  static const char *const source_keys[] = {"kind", "slots", "reserve_ms", NULL};
  polyflake_config cfg;
  polyflake_file_lease_options lease, *opts = NULL;
  const cJSON *layout = get(spec, "layout"), *source = get(spec, "source");
  polyflake_result r;
  only_keys(spec, where, spec_keys);
  polyflake_config_init(&cfg);
  cfg.mode = s->mode;
  cfg.max_wait_ms = s->max_wait_ms;
  cfg.has_max_lead = s->has_max_lead;
  cfg.max_lead_ms = s->max_lead_ms;
  cfg.max_forward_step_ms = s->max_forward_step_ms;
  cfg.forward_confirm_ms = s->forward_confirm_ms;
  cfg.clock_source = s->clock_source;
  if (source) {
    only_keys(source, where, source_keys);
    if (strcmp(str(source, "kind"), "file_lease") != 0) die("unknown source kind", where);
    polyflake_file_lease_options_init(&lease);
    lease.dir = lease_dir_get();
    if (get(source, "slots")) lease.common.slots = (uint32_t)num(source, "slots");
    if (get(source, "reserve_ms")) lease.common.reserve_ms = (uint64_t)num(source, "reserve_ms");
    opts = &lease;
  } else {
    cfg.node_id = num(spec, "node_id");
  }
  if (cJSON_IsString(layout)) {
    r = polyflake_layout_from_name(layout->valuestring, &cfg.layout);
    if (r != POLYFLAKE_RESULT_OK) return r;
  } else if (cJSON_IsArray(layout)) {
    cfg.layout.timestamp_bits = (uint32_t)cJSON_GetArrayItem(layout, 0)->valuedouble;
    cfg.layout.node_bits = (uint32_t)cJSON_GetArrayItem(layout, 1)->valuedouble;
    cfg.layout.sequence_bits = (uint32_t)cJSON_GetArrayItem(layout, 2)->valuedouble;
  } else if (layout) {
    die("bad layout", where);
  }
  if (get(spec, "epoch_ms")) cfg.epoch_ms = num(spec, "epoch_ms");
  return opts ? polyflake_generator_new_file_lease(&cfg, opts, out->clock, &out->g)
              : polyflake_generator_new(&cfg, out->clock, &out->g);
}

/* Make a generator from a scenario spec; returns the C result (the spec's errors are data). A
 * spec with "format" is a UUIDv7 or ULID generator: no node id, layout, epoch or source. */
static polyflake_result build(const cJSON *spec, const char *where, gen_t *out) {
  static const char *const format_keys[] = {"mode", "format", "deferred", "max_wait_ms",
                                            "max_lead_ms", "max_forward_step_ms",
                                            "forward_confirm_ms", "clock", NULL};
  const cJSON *format = get(spec, "format");
  polyflake_timeid_config s = shared_settings(spec, where);
  polyflake_result r;
  out->g = NULL;
  out->u = NULL;
  out->l = NULL;
  out->has_last = 0;
  build_clock(get(spec, "clock"), where, out);
  if (!format) {
    out->format = FMT_SNOWFLAKE;
    r = build_snowflake(spec, where, &s, out);
  } else {
    only_keys(spec, where, format_keys);
    if (strcmp(str(spec, "format"), "uuidv7") == 0) {
      out->format = FMT_UUIDV7;
      r = polyflake_uuid7_generator_new(&s, out->clock, &out->u);
    } else if (strcmp(str(spec, "format"), "ulid") == 0) {
      out->format = FMT_ULID;
      r = polyflake_ulid_generator_new(&s, out->clock, &out->l);
    } else {
      die("unknown format", where);
      r = POLYFLAKE_RESULT_PANIC;
    }
  }
  if (r != POLYFLAKE_RESULT_OK) {
    polyflake_clock_free(out->clock);
    out->clock = NULL;
  }
  return r;
}

static int made(const gen_t *g) { return g->g || g->u || g->l; }

static void free_gen(gen_t *g) {
  polyflake_generator_free(g->g);
  polyflake_uuid7_generator_free(g->u);
  polyflake_ulid_generator_free(g->l);
  polyflake_clock_free(g->clock);
  g->g = NULL;
  g->u = NULL;
  g->l = NULL;
  g->clock = NULL;
  g->created = 0;
}

/* One ID of any format. */
static polyflake_result gen_next(const gen_t *g, id128_t *out) {
  uint64_t id = 0;
  polyflake_result r;
  if (g->format == FMT_UUIDV7) return polyflake_next_uuid7(g->u, out->b);
  if (g->format == FMT_ULID) return polyflake_next_ulid(g->l, out->b);
  r = polyflake_next_id(g->g, &id);
  if (r == POLYFLAKE_RESULT_OK) *out = id128_of(id);
  return r;
}

/* One batch of n into out; on an error the caller's buffer must be untouched (checked here with
 * a sentinel, for every format). */
static polyflake_result gen_batch(const gen_t *g, id128_t *out, size_t n, const char *what) {
  size_t i, j;
  polyflake_result r;
  if (g->format == FMT_SNOWFLAKE) {
    uint64_t *buf = malloc((n ? n : 1) * sizeof *buf);
    for (i = 0; i < n; i++) buf[i] = UINT64_MAX;
    r = polyflake_next_ids(g->g, buf, n);
    for (i = 0; i < n; i++) {
      if (r == POLYFLAKE_RESULT_OK) out[i] = id128_of(buf[i]);
      else CHECK(buf[i] == UINT64_MAX, "%s: buffer written on error", what);
    }
    free(buf);
    return r;
  }
  memset(out, 0xff, n * sizeof *out);
  r = g->format == FMT_UUIDV7 ? polyflake_next_uuid7s(g->u, out->b, n)
                              : polyflake_next_ulids(g->l, out->b, n);
  for (i = 0; r != POLYFLAKE_RESULT_OK && i < n; i++)
    for (j = 0; j < sizeof out->b; j++) CHECK(out[i].b[j] == 0xff, "%s: buffer written on error", what);
  return r;
}

static polyflake_result gen_health(const gen_t *g, polyflake_health_snapshot *h) {
  if (g->format == FMT_UUIDV7) return polyflake_uuid7_health(g->u, h);
  if (g->format == FMT_ULID) return polyflake_ulid_health(g->l, h);
  return polyflake_health(g->g, h);
}

static polyflake_result gen_close(const gen_t *g) {
  if (g->format == FMT_UUIDV7) return polyflake_uuid7_generator_close(g->u);
  if (g->format == FMT_ULID) return polyflake_ulid_generator_close(g->l);
  return polyflake_generator_close(g->g);
}

/* The Snowflake generator behind a step that only Snowflake IDs have (ids, sequences, decode). */
static const polyflake_generator *snowflake_of(const gen_t *g, const char *what) {
  if (g->format != FMT_SNOWFLAKE) die("a Snowflake-only expectation on a UUIDv7/ULID generator", what);
  return g->g;
}

static void check_decoded(const polyflake_generator *g, uint64_t id, const cJSON *want,
                          const char *what) {
  static const char *const keys[] = {"timestamp_ms", "node_id", "sequence", NULL};
  polyflake_decoded d;
  only_keys(want, what, keys);
  CHECK_RESULT(polyflake_generator_decode(g, id, &d), POLYFLAKE_RESULT_OK);
  CHECK(d.timestamp_ms == num(want, "timestamp_ms"), "%s: timestamp %" PRId64, what,
        d.timestamp_ms);
  CHECK(d.node_id == (uint32_t)num(want, "node_id"), "%s: node %u", what, d.node_id);
  CHECK(d.sequence == (uint32_t)num(want, "sequence"), "%s: sequence %u", what, d.sequence);
}

/* `first` / `last`: all three fields of a Snowflake ID; only the Unix ms of a UUIDv7 or ULID. */
static void check_id(const gen_t *g, const id128_t *id, const cJSON *want, const char *what) {
  static const char *const keys[] = {"timestamp_ms", NULL};
  int64_t ms = 0;
  if (g->format == FMT_SNOWFLAKE) {
    check_decoded(g->g, u64_of(id), want, what);
    return;
  }
  only_keys(want, what, keys);
  CHECK_RESULT(g->format == FMT_UUIDV7 ? polyflake_uuid7_timestamp_ms(id->b, &ms)
                                       : polyflake_ulid_timestamp_ms(id->b, &ms),
               POLYFLAKE_RESULT_OK);
  CHECK(ms == num(want, "timestamp_ms"), "%s: timestamp %" PRId64, what, ms);
}

static double health_number(const polyflake_health_snapshot *h, const char *key) {
  if (strcmp(key, "lead_ms") == 0) return (double)h->lead_ms;
  if (strcmp(key, "ids_issued") == 0) return (double)h->ids_issued;
  if (strcmp(key, "rewinds_waited") == 0) return (double)h->rewinds_waited;
  if (strcmp(key, "rewinds_refused") == 0) return (double)h->rewinds_refused;
  if (strcmp(key, "sequence_exhaustions") == 0) return (double)h->sequence_exhaustions;
  if (strcmp(key, "wait_sleeps") == 0) return (double)h->wait_sleeps;
  if (strcmp(key, "ms_borrowed") == 0) return (double)h->ms_borrowed;
  if (strcmp(key, "lead_refused") == 0) return (double)h->lead_refused;
  if (strcmp(key, "clock_ahead_ms") == 0) return (double)h->clock_ahead_ms;
  if (strcmp(key, "forward_refused") == 0) return (double)h->forward_refused;
  return NAN;
}

static void check_health(const gen_t *g, const cJSON *expect, const char *what) {
  polyflake_health_snapshot h;
  const cJSON *e;
  CHECK_RESULT(gen_health(g, &h), POLYFLAKE_RESULT_OK);
  cJSON_ArrayForEach(e, expect) {
    if (strcmp(e->string, "ok") == 0) {
      CHECK(h.ok == cJSON_IsTrue(e), "%s: ok is %d (%s)", what, h.ok, h.reason);
    } else if (strcmp(e->string, "status") == 0) {
      const char *got = polyflake_health_status_name(h.status);
      CHECK(strcmp(got, e->valuestring) == 0, "%s: status %s want %s", what, got,
            e->valuestring);
    } else {
      double got = health_number(&h, e->string);
      CHECK(!isnan(got), "%s: unknown health key \"%s\"", what, e->string);
      if (isnan(got)) continue;
      if (cJSON_IsObject(e)) {
        static const char *const bounds[] = {"min", "max", NULL};
        only_keys(e, what, bounds);
        if (get(e, "min")) CHECK(got >= get(e, "min")->valuedouble, "%s: %s = %g < min", what, e->string, got);
        if (get(e, "max")) CHECK(got <= get(e, "max")->valuedouble, "%s: %s = %g > max", what, e->string, got);
      } else {
        CHECK(got == e->valuedouble, "%s: %s = %g want %g", what, e->string, got, e->valuedouble);
      }
    }
  }
}

static gen_t *find_gen(gen_t *gens, int n, const char *key) {
  int i;
  for (i = 0; i < n; i++)
    if (strcmp(gens[i].key, key) == 0) return &gens[i];
  die("unknown generator", key);
  return NULL;
}

/* A generator a step may use: made (a closed one stays, refusing); anything else is a bad
 * scenario file. */
static gen_t *live_gen(gen_t *gens, int n, const char *key) {
  gen_t *g = find_gen(gens, n, key);
  if (!g->created) die("generator not created", key);
  return g;
}

/* Every ID of a scenario file, for the uniqueness check at its end. */
typedef struct {
  id128_t *v;
  size_t n, cap;
} all_ids_t;

static void all_push(all_ids_t *all, const id128_t *id) {
  if (all->n == all->cap) {
    all->cap = all->cap ? all->cap * 2 : 4096;
    all->v = realloc(all->v, all->cap * sizeof *all->v);
    if (!all->v) die("out of memory", "IDs");
  }
  all->v[all->n++] = *id;
}

static void run_ids_step(gen_t *gen, const cJSON *step, const char *op, const char *what,
                         all_ids_t *all) {
  static const char *const id_expect_keys[] = {"error", "ids",   "sequences", "max_sequence",
                                               "first", "last",  "increasing", NULL};
  const cJSON *expect = get(step, "expect");
  const cJSON *want_error = expect ? get(expect, "error") : NULL;
  size_t count = get(step, "count") ? (size_t)num(step, "count") : 1, got = 0, i;
  id128_t *ids = malloc((count ? count : 1) * sizeof *ids);
  polyflake_result failure = POLYFLAKE_RESULT_OK;
  if (expect) only_keys(expect, what, id_expect_keys);
  if (strcmp(op, "next_id") == 0) {
    for (i = 0; i < count; i++) {
      failure = gen_next(gen, &ids[got]);
      if (failure != POLYFLAKE_RESULT_OK) break;
      got++;
    }
  } else {
    failure = gen_batch(gen, ids, count, what);
    if (failure == POLYFLAKE_RESULT_OK) got = count;
  }
  if (want_error) {
    CHECK(failure != POLYFLAKE_RESULT_OK, "%s: expected %s, got IDs", what, want_error->valuestring);
    CHECK(strcmp(polyflake_result_name(failure), want_error->valuestring) == 0,
          "%s: got %s want %s", what, polyflake_result_name(failure), want_error->valuestring);
    if (strcmp(op, "next_id") == 0) CHECK(got == count - 1, "%s: failed early (%zu)", what, got);
  } else {
    CHECK(failure == POLYFLAKE_RESULT_OK, "%s: unexpected %s", what, polyflake_result_name(failure));
  }
  if (expect && get(expect, "ids")) {
    const polyflake_generator *g = snowflake_of(gen, what);
    const cJSON *w;
    size_t k = 0;
    (void)g;
    CHECK((size_t)cJSON_GetArraySize(get(expect, "ids")) == got, "%s: id count", what);
    cJSON_ArrayForEach(w, get(expect, "ids")) {
      if (k < got) CHECK(u64_of(&ids[k]) == parse_u64(w->valuestring), "%s: id %zu", what, k);
      k++;
    }
  }
  if (expect && get(expect, "sequences")) {
    const polyflake_generator *g = snowflake_of(gen, what);
    const cJSON *w;
    size_t k = 0;
    CHECK((size_t)cJSON_GetArraySize(get(expect, "sequences")) == got, "%s: sequence count", what);
    cJSON_ArrayForEach(w, get(expect, "sequences")) {
      polyflake_decoded d;
      if (k < got) {
        polyflake_generator_decode(g, u64_of(&ids[k]), &d);
        CHECK(d.sequence == (uint32_t)w->valuedouble, "%s: sequence %zu", what, k);
      }
      k++;
    }
  }
  if (expect && get(expect, "max_sequence")) {
    const polyflake_generator *g = snowflake_of(gen, what);
    uint32_t max = 0;
    for (i = 0; i < got; i++) {
      polyflake_decoded d;
      polyflake_generator_decode(g, u64_of(&ids[i]), &d);
      if (d.sequence > max) max = d.sequence;
    }
    CHECK(got > 0 && max == (uint32_t)num(expect, "max_sequence"), "%s: max_sequence", what);
  }
  if (expect && get(expect, "first")) {
    CHECK(got > 0, "%s: no first", what);
    if (got) check_id(gen, &ids[0], get(expect, "first"), what);
  }
  if (expect && get(expect, "last")) {
    CHECK(got > 0, "%s: no last", what);
    if (got) check_id(gen, &ids[got - 1], get(expect, "last"), what);
  }
  /* Always: strictly increasing per generator across steps, collected for uniqueness. */
  for (i = 0; i < got; i++) {
    if (gen->has_last) CHECK(cmp_id128(&ids[i], &gen->last) > 0, "%s: not increasing at %zu", what, i);
    gen->has_last = 1;
    gen->last = ids[i];
    all_push(all, &ids[i]);
  }
  free(ids);
}

/* Fork; the child calls polyflake_next_id once on the inherited handle and pipes back the
 * result's name ("OK" or the error code); the parent returns it in `buf`. */
static const char *next_id_in_child(const gen_t *g, char *buf, size_t len) {
  int fds[2];
  pid_t pid;
  ssize_t n;
  size_t got = 0;
  int status = 0;
  if (pipe(fds) != 0) die("pipe", "fork step");
  fflush(NULL); /* or the child may write the parent's buffered output a second time */
  pid = fork();
  if (pid < 0) die("fork", "fork step");
  if (pid == 0) {
    id128_t id;
    const char *outcome = polyflake_result_name(gen_next(g, &id));
    if (write(fds[1], outcome, strlen(outcome)) < 0) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  while (got + 1 < len && (n = read(fds[0], buf + got, len - 1 - got)) > 0) got += (size_t)n;
  buf[got] = 0;
  close(fds[0]);
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status), "fork step: the child died (status %d)", status);
  return buf;
}

/* Returns the steps run, or 0 with `*skip` set to why the file is not applicable here. */
static int run_scenario(const char *path, double slack, const char **skip) {
  static const char *const top_keys[] = {"name",       "description", "source", "needs",
                                         "generators", "steps",       NULL};
  static const char *const step_keys[] = {"op", "gen", "count", "expect", "id", "ms",
                                          "config", "within_ms", NULL};
  static const char *const construct_keys[] = {"error", "ok", NULL};
  static const char *const decode_keys[] = {"decoded", NULL};
  static const char *const create_keys[] = {"error", NULL};
  cJSON *doc = read_json(path);
  const cJSON *spec, *step;
  gen_t gens[16];
  int n_gens = 0, n_steps = 0, i;
  all_ids_t all = {NULL, 0, 0};
  const char *name = str(doc, "name");
  only_keys(doc, name, top_keys);
  *skip = NULL;
  cJSON_ArrayForEach(spec, get(doc, "needs")) {
    /* C has fork(): it needs nothing it lacks. */
    if (strcmp(spec->valuestring, "fork") != 0)
      die("unknown need", spec->valuestring);
  }
  cJSON_ArrayForEach(spec, get(doc, "generators")) {
    polyflake_result r;
    const cJSON *deferred = get(spec, "deferred");
    if (n_gens == 16) die("too many generators", name);
    memset(&gens[n_gens], 0, sizeof gens[n_gens]);
    gens[n_gens].spec = spec;
    gens[n_gens].key = spec->string;
    if (deferred && !cJSON_IsBool(deferred)) die("deferred is not a boolean", spec->string);
    if (cJSON_IsTrue(deferred)) {
      n_gens++;
      continue;
    }
    r = build(spec, name, &gens[n_gens]);
    CHECK(r == POLYFLAKE_RESULT_OK, "%s: building %s: %s", name, spec->string,
          polyflake_result_name(r));
    if (r != POLYFLAKE_RESULT_OK) {
      for (i = 0; i < n_gens; i++) free_gen(&gens[i]);
      lease_dir_remove();
      cJSON_Delete(doc);
      return 0;
    }
    gens[n_gens++].created = 1;
  }
  cJSON_ArrayForEach(step, get(doc, "steps")) {
    char what[256];
    const char *op = str(step, "op");
    const cJSON *expect = get(step, "expect");
    double started = now_ms();
    snprintf(what, sizeof what, "%s step %d (%s, %s clock)", name, n_steps, op,
             polyflake_clock_source_name(scenario_source));
    only_keys(step, what, step_keys);
    if (strcmp(op, "construct") == 0) {
      gen_t tmp;
      polyflake_result r = build(get(step, "config"), what, &tmp);
      only_keys(expect, what, construct_keys);
      if (get(expect, "error")) {
        CHECK(strcmp(polyflake_result_name(r), str(expect, "error")) == 0, "%s: got %s want %s",
              what, polyflake_result_name(r), str(expect, "error"));
        CHECK(r == POLYFLAKE_RESULT_OK || !made(&tmp), "%s: out-param written on error", what);
      } else {
        CHECK(r == POLYFLAKE_RESULT_OK, "%s: %s", what, polyflake_result_name(r));
      }
      if (r == POLYFLAKE_RESULT_OK) free_gen(&tmp);
    } else if (strcmp(op, "create") == 0) {
      gen_t *g = find_gen(gens, n_gens, str(step, "gen"));
      polyflake_result r;
      const char *want = expect && get(expect, "error") ? str(expect, "error") : "OK";
      if (expect) only_keys(expect, what, create_keys);
      if (g->created || !cJSON_IsTrue(get(g->spec, "deferred"))) die("not a deferred generator", what);
      r = build(g->spec, what, g);
      CHECK(strcmp(polyflake_result_name(r), want) == 0, "%s: got %s want %s", what,
            polyflake_result_name(r), want);
      if (r == POLYFLAKE_RESULT_OK) g->created = 1;
      else CHECK(!made(g), "%s: out-param written on error", what);
    } else if (strcmp(op, "close") == 0) {
      if (expect) die("close expects nothing", what);
      /* The generator stays: every later call on it fails with GENERATOR_CLOSED. */
      CHECK_RESULT(gen_close(live_gen(gens, n_gens, str(step, "gen"))), POLYFLAKE_RESULT_OK);
    } else if (strcmp(op, "clock_set") == 0 || strcmp(op, "clock_advance") == 0 ||
               strcmp(op, "clock_elapse") == 0) {
      gen_t *g = live_gen(gens, n_gens, str(step, "gen"));
      int64_t ms = num(step, "ms");
      if (!g->manual) die("not a manual clock", what);
      if (strcmp(op, "clock_set") == 0)
        CHECK_RESULT(polyflake_manual_clock_set(g->clock, ms), POLYFLAKE_RESULT_OK);
      else if (strcmp(op, "clock_advance") == 0)
        CHECK_RESULT(polyflake_manual_clock_advance(g->clock, ms), POLYFLAKE_RESULT_OK);
      else if (ms < 0)
        die("clock_elapse with a negative ms", what);
      else
        CHECK_RESULT(polyflake_manual_clock_elapse(g->clock, (uint64_t)ms), POLYFLAKE_RESULT_OK);
    } else if (strcmp(op, "decode") == 0) {
      gen_t *g = live_gen(gens, n_gens, str(step, "gen"));
      only_keys(expect, what, decode_keys);
      check_decoded(snowflake_of(g, what), parse_u64(str(step, "id")), get(expect, "decoded"), what);
    } else if (strcmp(op, "health") == 0) {
      check_health(live_gen(gens, n_gens, str(step, "gen")), expect, what);
    } else if (strcmp(op, "next_id") == 0 || strcmp(op, "next_ids") == 0) {
      run_ids_step(live_gen(gens, n_gens, str(step, "gen")), step, op, what, &all);
    } else if (strcmp(op, "fork") == 0) {
      static const char *const fork_keys[] = {"error", NULL};
      char outcome[64];
      const char *want = expect && get(expect, "error") ? str(expect, "error") : "OK";
      if (expect) only_keys(expect, what, fork_keys);
      next_id_in_child(live_gen(gens, n_gens, str(step, "gen")), outcome, sizeof outcome);
      CHECK(strcmp(outcome, want) == 0, "%s: the child's next_id gave %s, want %s", what, outcome,
            want);
    } else {
      CHECK(0, "%s: unknown op", what);
    }
    if (get(step, "within_ms")) {
      double took = now_ms() - started, bound = get(step, "within_ms")->valuedouble * slack;
      CHECK(took < bound, "%s: took %.1f ms, bound %.0f ms", what, took, bound);
    }
    n_steps++;
  }
  /* qsort's array may not be NULL even for 0 elements (UBSan: nonnull-attribute). */
  if (all.n > 1) qsort(all.v, all.n, sizeof *all.v, cmp_id128);
  for (i = 1; (size_t)i < all.n; i++)
    CHECK(cmp_id128(&all.v[i], &all.v[i - 1]) != 0, "%s: duplicate ID", name);
  for (i = 0; i < n_gens; i++) free_gen(&gens[i]);
  lease_dir_remove();
  free(all.v);
  cJSON_Delete(doc);
  CHECK(n_steps > 0, "%s has no steps", name);
  return n_steps;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Scenario coverage: written to <target>/scenario-coverage/<lang>.txt for `make test`
 * (tests/vectors/check_coverage.py); lang is this program's name (test_c_shared: c-shared). */
static const char *coverage_lang = "c";

/* The *.json files of dir/sub (sorted, each as "sub/name"), appended to names[]. */
static int list_scenarios(const char *dir, const char *sub, char **names, int n) {
  char path[4096];
  DIR *d;
  struct dirent *e;
  int first = n;
  snprintf(path, sizeof path, "%s/%s", dir, sub);
  d = opendir(path);
  if (!d) die("cannot open", path);
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
      if (n == 256) die("too many scenario files", path);
      names[n] = malloc(strlen(sub) + len + 2);
      sprintf(names[n++], "%s/%s", sub, e->d_name);
    }
  }
  closedir(d);
  qsort(names + first, (size_t)(n - first), sizeof *names, cmp_str);
  return n;
}

/* Every file of scenarios/ and of scenarios/formats/ (the UUIDv7 and ULID files, which wait
 * there until every runner runs them), each on both clock sources. The coverage record lists
 * the files of scenarios/ itself, as check_coverage.py expects. */
static void scenarios(const char *dir, double slack) {
  static const uint32_t sources[] = {POLYFLAKE_CLOCK_SOURCE_PRECISE, POLYFLAKE_CLOCK_SOURCE_COARSE};
  char path[4096];
  char *names[256];
  int n = 0, top, ran = 0, i;
  FILE *coverage;
  n = list_scenarios(dir, "scenarios", names, n);
  top = n;
  n = list_scenarios(dir, "scenarios/formats", names, n);
  CHECK(top >= 15 && n - top >= 4, "scenario files missing: %d and %d", top, n - top);
  if (getenv("CARGO_TARGET_DIR")) snprintf(path, sizeof path, "%s", getenv("CARGO_TARGET_DIR"));
  else snprintf(path, sizeof path, "%s/../../target", dir);
  mkdir(path, 0755);
  strncat(path, "/scenario-coverage", sizeof path - strlen(path) - 1);
  mkdir(path, 0755);
  snprintf(path + strlen(path), sizeof path - strlen(path), "/%s.txt", coverage_lang);
  coverage = fopen(path, "w");
  if (!coverage) die("cannot write", path);
  for (i = 0; i < n; i++) {
    int steps = 0, passed = 1, s;
    const char *skip = NULL;
    const char *base = strrchr(names[i], '/') + 1;
    size_t stem = strlen(base) - 5; /* without ".json" */
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    for (s = 0; s < 2 && !skip; s++) {
      int before = failures;
      scenario_source = sources[s];
      steps = run_scenario(path, slack, &skip);
      if (!skip)
        printf("  scenario %-48s %-7s %s (%d steps)\n", names[i] + 10,
               polyflake_clock_source_name(sources[s]), failures == before ? "ok" : "FAILED", steps);
      passed = passed && steps > 0 && failures == before;
    }
    scenario_source = POLYFLAKE_CLOCK_SOURCE_PRECISE;
    if (skip) {
      printf("  scenario %-48s not applicable: %s\n", names[i] + 10, skip);
      if (i < top) fprintf(coverage, "%.*s not-applicable: %s\n", (int)stem, base, skip);
      ran++;
    } else {
      if (steps > 0) ran++;
      if (passed && i < top) fprintf(coverage, "%.*s ok\n", (int)stem, base);
    }
    free(names[i]);
  }
  fclose(coverage);
  CHECK(ran == n, "ran %d of %d scenario files", ran, n);
  printf("scenarios: %d files, each on the precise and the coarse clock source\n", ran);
}

/* ------------------------------------------------------------------------------------------ */
/* Bad input: every pointer parameter NULL, out-of-range values, invalid text                 */

static void bad_input(void) {
  polyflake_config cfg;
  polyflake_clock *mc = NULL, *sc = NULL;
  polyflake_generator *g = NULL;
  polyflake_layout l = polyflake_layout_default();
  polyflake_decoded d;
  polyflake_health_snapshot h;
  uint64_t id = 42, buf[4];
  int64_t ms = 0, values[2] = {1, 2};
  char text[POLYFLAKE_ID_TEXT_LEN];
  size_t len = 0;
  const polyflake_result N = POLYFLAKE_RESULT_NULL_PARAMETER;

  CHECK_RESULT(polyflake_config_init(NULL), N);
  polyflake_config_init(&cfg);
  CHECK_RESULT(polyflake_manual_clock_new(0, NULL), N);
  CHECK_RESULT(polyflake_manual_clock_new(POLYFLAKE_DEFAULT_EPOCH_MS + 10, &mc), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_manual_clock_set(NULL, 1), N);
  CHECK_RESULT(polyflake_manual_clock_advance(NULL, 1), N);
  CHECK_RESULT(polyflake_manual_clock_elapse(NULL, 1), N);
  CHECK_RESULT(polyflake_manual_clock_get(NULL, &ms), N);
  CHECK_RESULT(polyflake_manual_clock_get(mc, NULL), N);
  CHECK_RESULT(polyflake_scripted_clock_new(NULL, 2, &sc), N);
  CHECK_RESULT(polyflake_scripted_clock_new(values, 2, NULL), N);
  CHECK_RESULT(polyflake_scripted_clock_new(NULL, 0, &sc), POLYFLAKE_RESULT_OK);
  polyflake_clock_free(sc);
  CHECK_RESULT(polyflake_scripted_clock_new(values, 2, &sc), POLYFLAKE_RESULT_OK);
  /* A scripted clock cannot be stepped or elapsed: refused, never ignored. */
  CHECK_RESULT(polyflake_manual_clock_set(sc, 1), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK_RESULT(polyflake_manual_clock_advance(sc, 1), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK_RESULT(polyflake_manual_clock_elapse(sc, 1), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK_RESULT(polyflake_manual_clock_get(sc, &ms), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  /* elapse moves the wall reading too; set and advance step it */
  CHECK_RESULT(polyflake_manual_clock_elapse(mc, 5), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_manual_clock_get(mc, &ms), POLYFLAKE_RESULT_OK);
  CHECK(ms == POLYFLAKE_DEFAULT_EPOCH_MS + 15, "elapse moved the wall reading to %" PRId64, ms);

  /* One constructor per source, each with an optional clock: NULL is the system clock, every
   * other NULL is refused before anything is made or any directory touched. */
  CHECK_RESULT(polyflake_generator_new(NULL, mc, &g), N);
  CHECK_RESULT(polyflake_generator_new(&cfg, mc, NULL), N);
  CHECK_RESULT(polyflake_generator_new(NULL, NULL, &g), N);
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, NULL), N);
  CHECK_RESULT(polyflake_generator_new(NULL, sc, &g), N);
  {
    polyflake_file_lease_options lo;
    CHECK_RESULT(polyflake_file_lease_options_init(&lo), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &lo, mc, &g), N); /* dir NULL */
    CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &lo, sc, &g), N);
    lo.dir = "/nonexistent/polyflake-never-created";
    CHECK_RESULT(polyflake_generator_new_file_lease(NULL, &lo, mc, &g), N);
    CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, NULL, mc, &g), N);
    CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &lo, mc, NULL), N);
    CHECK_RESULT(polyflake_generator_new_file_lease(NULL, &lo, sc, &g), N);
    CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, NULL, sc, &g), N);
    CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &lo, sc, NULL), N);
    CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &lo, NULL, NULL), N);
  }
  CHECK(g == NULL, "out-param written on error");

  /* Out-of-range settings: each refused with its code and the core's message, nothing written. */
  cfg.mode = 7;
  CHECK_RESULT(polyflake_generator_new(&cfg, mc, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "mode") != NULL, "message: %s", last_message());
  polyflake_config_init(&cfg);
  cfg.clock_source = 2;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "clock_source") != NULL, "message: %s", last_message());
  cfg.clock_source = UINT32_MAX;
  CHECK_RESULT(polyflake_generator_new(&cfg, mc, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  polyflake_config_init(&cfg);
  cfg.node_id = 1024;
  CHECK_RESULT(polyflake_generator_new(&cfg, mc, &g), POLYFLAKE_RESULT_INVALID_NODE_ID);
  cfg.node_id = -1;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_NODE_ID);
  cfg.node_id = INT64_MIN;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_NODE_ID);
  polyflake_config_init(&cfg);
  cfg.layout.sequence_bits = 13;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_LAYOUT);
  cfg.layout.timestamp_bits = UINT32_MAX;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_LAYOUT);
  polyflake_config_init(&cfg);
  cfg.max_wait_ms = -1.0;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  cfg.max_wait_ms = NAN;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  polyflake_config_init(&cfg);
  cfg.has_max_lead = 1;
  cfg.max_lead_ms = -3;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  polyflake_config_init(&cfg);
  cfg.epoch_ms = INT64_MAX;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_EPOCH);
  /* The forward-step settings: 0 and past a year refused (0 is no default: "off" is
   * POLYFLAKE_FORWARD_STEP_OFF). */
  polyflake_config_init(&cfg);
  CHECK(cfg.max_forward_step_ms == 60000 && cfg.forward_confirm_ms == 300000,
        "forward defaults %" PRIu64 " %" PRIu64, cfg.max_forward_step_ms, cfg.forward_confirm_ms);
  cfg.max_forward_step_ms = 0;
  CHECK_RESULT(polyflake_generator_new(&cfg, mc, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "max_forward_step_ms") != NULL, "message: %s", last_message());
  cfg.max_forward_step_ms = POLYFLAKE_FORWARD_STEP_OFF - 1;
  CHECK_RESULT(polyflake_generator_new(&cfg, mc, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  polyflake_config_init(&cfg);
  cfg.forward_confirm_ms = UINT64_MAX;
  CHECK_RESULT(polyflake_generator_new(&cfg, mc, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "forward_confirm_ms") != NULL, "message: %s", last_message());
  CHECK(g == NULL, "out-param written on error");
  /* "off" round-trips through the generator's configuration */
  polyflake_config_init(&cfg);
  cfg.max_forward_step_ms = POLYFLAKE_FORWARD_STEP_OFF;
  cfg.forward_confirm_ms = 0;
  CHECK_RESULT(polyflake_generator_new(&cfg, mc, &g), POLYFLAKE_RESULT_OK);
  {
    polyflake_config held;
    CHECK_RESULT(polyflake_generator_config(g, &held), POLYFLAKE_RESULT_OK);
    CHECK(held.max_forward_step_ms == POLYFLAKE_FORWARD_STEP_OFF && held.forward_confirm_ms == 0,
          "config round trip");
  }
  polyflake_generator_free(g);
  g = NULL;
  {
    /* The core's message carries the numbers; the static one does not. */
    char msg[1024];
    size_t msg_len = 0;
    polyflake_config_init(&cfg);
    cfg.node_id = 5000;
    polyflake_generator_new(&cfg, NULL, &g);
    CHECK_RESULT(polyflake_last_error_message(msg, sizeof msg, &msg_len), POLYFLAKE_RESULT_OK);
    CHECK(strstr(msg, "5000") && strstr(msg, "1023") && msg_len == strlen(msg), "message: %s", msg);
    CHECK_RESULT(polyflake_last_error_message(msg, 3, &msg_len), POLYFLAKE_RESULT_BUFFER_TOO_SMALL);
    CHECK_RESULT(polyflake_last_error_message(NULL, 10, &msg_len), N);
    CHECK_RESULT(polyflake_last_error_message(msg, sizeof msg, NULL), N);
  }

  /* A system-clock generator: a second one with the same node id, epoch and layout is refused. */
  {
    polyflake_generator *g2 = NULL;
    polyflake_config_init(&cfg);
    cfg.node_id = 1001;
    CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g2), POLYFLAKE_RESULT_NODE_ID_IN_USE);
    CHECK(g2 == NULL, "out-param written on error");
    /* close frees the node id; the handle stays (and refuses) until it is freed */
    CHECK_RESULT(polyflake_generator_close(g), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g2), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_GENERATOR_CLOSED);
    polyflake_generator_free(g);
    polyflake_generator_free(g2);
    g = NULL;
  }

  polyflake_config_init(&cfg);
  CHECK_RESULT(polyflake_generator_new(&cfg, mc, &g), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_generator_close(NULL), N);
  CHECK_RESULT(polyflake_wait_ready(NULL, 0), N);
  CHECK_RESULT(polyflake_wait_ready(g, 0), POLYFLAKE_RESULT_OK); /* no lease: nothing to wait for */
  CHECK_RESULT(polyflake_next_id(NULL, &id), N);
  CHECK_RESULT(polyflake_next_id(g, NULL), N);
  CHECK_RESULT(polyflake_next_ids(NULL, buf, 4), N);
  CHECK_RESULT(polyflake_next_ids(g, NULL, 4), N);
  CHECK_RESULT(polyflake_next_ids(g, NULL, 0), N);
  CHECK_RESULT(polyflake_next_ids(g, buf, 0), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_ids(g, buf, (size_t)POLYFLAKE_MAX_BATCH + 1), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK_RESULT(polyflake_next_ids(g, buf, SIZE_MAX), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK_RESULT(polyflake_generator_decode(NULL, 1, &d), N);
  CHECK_RESULT(polyflake_generator_decode(g, 1, NULL), N);
  CHECK_RESULT(polyflake_generator_decode(g, UINT64_MAX, &d), POLYFLAKE_RESULT_INVALID_ID);
  CHECK_RESULT(polyflake_generator_config(NULL, &cfg), N);
  CHECK_RESULT(polyflake_generator_config(g, NULL), N);
  CHECK_RESULT(polyflake_health(NULL, &h), N);
  CHECK_RESULT(polyflake_health(g, NULL), N);
  /* A clock before the epoch: the ID would be outside the window. */
  polyflake_manual_clock_set(mc, POLYFLAKE_DEFAULT_EPOCH_MS - 1);
  id = 42;
  CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_TIMESTAMP_OVERFLOW);
  CHECK(id == 42, "out-param written on error");
  CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
  CHECK(!h.ok && h.status == POLYFLAKE_HEALTH_STATUS_CLOCK_OUTSIDE_WINDOW && h.reason[0] != 0,
        "health outside window: %s", h.reason);
  /* Closed: every call refuses with GENERATOR_CLOSED (the buffer untouched), health says so,
   * decoding still works, closing again is fine. */
  CHECK_RESULT(polyflake_generator_close(g), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_generator_close(g), POLYFLAKE_RESULT_OK);
  polyflake_manual_clock_set(mc, POLYFLAKE_DEFAULT_EPOCH_MS + 100);
  id = 42;
  CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_GENERATOR_CLOSED);
  CHECK(id == 42, "out-param written on error");
  buf[0] = 42;
  CHECK_RESULT(polyflake_next_ids(g, buf, 4), POLYFLAKE_RESULT_GENERATOR_CLOSED);
  CHECK(buf[0] == 42, "buffer written on error");
  CHECK_RESULT(polyflake_wait_ready(g, 10), POLYFLAKE_RESULT_GENERATOR_CLOSED);
  CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
  CHECK(!h.ok && h.status == POLYFLAKE_HEALTH_STATUS_CLOSED, "closed health: %s",
        polyflake_health_status_name(h.status));
  CHECK(strcmp(polyflake_health_status_name(h.status), "closed") == 0, "closed name");
  CHECK_RESULT(polyflake_generator_decode(g, 1, &d), POLYFLAKE_RESULT_OK);
  polyflake_generator_free(g);

  CHECK_RESULT(polyflake_layout_from_name(NULL, &l), N);
  CHECK_RESULT(polyflake_layout_from_name("default", NULL), N);
  CHECK_RESULT(polyflake_layout_from_name("nope", &l), POLYFLAKE_RESULT_UNKNOWN_LAYOUT);
  CHECK_RESULT(polyflake_layout_from_name("\xff\xfe", &l), POLYFLAKE_RESULT_UNKNOWN_LAYOUT);
  CHECK_RESULT(polyflake_layout_describe(l, NULL), N);
  CHECK_RESULT(polyflake_decode(l, 0, 1, NULL), N);
  CHECK_RESULT(polyflake_compose(l, POLYFLAKE_DEFAULT_EPOCH_MS, 0, 0, 0, NULL), N);
  CHECK_RESULT(polyflake_compose(l, POLYFLAKE_DEFAULT_EPOCH_MS, POLYFLAKE_DEFAULT_EPOCH_MS, 1024, 0, &id), POLYFLAKE_RESULT_INVALID_NODE_ID);
  CHECK_RESULT(polyflake_compose(l, POLYFLAKE_DEFAULT_EPOCH_MS, POLYFLAKE_DEFAULT_EPOCH_MS, 0, 4096, &id), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK_RESULT(polyflake_compose(l, POLYFLAKE_DEFAULT_EPOCH_MS, POLYFLAKE_DEFAULT_EPOCH_MS - 1, 0, 0, &id), POLYFLAKE_RESULT_TIMESTAMP_OVERFLOW);
  CHECK_RESULT(polyflake_parse_id(NULL, &id), N);
  CHECK_RESULT(polyflake_parse_id("1", NULL), N);
  CHECK_RESULT(polyflake_parse_id("+1", &id), POLYFLAKE_RESULT_INVALID_ID);
  CHECK_RESULT(polyflake_parse_id("1\xff", &id), POLYFLAKE_RESULT_INVALID_ID);
  CHECK_RESULT(polyflake_parse_id("99999999999999999999999", &id), POLYFLAKE_RESULT_INVALID_ID);
  CHECK_RESULT(polyflake_format_id(1, NULL, 20, &len), N);
  CHECK_RESULT(polyflake_format_id(1, text, sizeof text, NULL), N);
  CHECK_RESULT(polyflake_format_id(UINT64_C(9223372036854775808), text, sizeof text, &len), POLYFLAKE_RESULT_INVALID_ID);
  memset(text, 'x', sizeof text);
  CHECK_RESULT(polyflake_format_id(UINT64_C(9223372036854775807), text, 19, &len), POLYFLAKE_RESULT_BUFFER_TOO_SMALL);
  CHECK(text[0] == 'x', "buffer written on error");
  CHECK_RESULT(polyflake_format_id(UINT64_C(9223372036854775807), text, 20, &len), POLYFLAKE_RESULT_OK);
  CHECK(len == 19 && strcmp(text, "9223372036854775807") == 0, "format max: %s", text);
  CHECK_RESULT(polyflake_format_id(0, text, 2, &len), POLYFLAKE_RESULT_OK);
  CHECK(strcmp(text, "0") == 0 && len == 1, "format 0");

  /* Frees accept NULL; names and messages are total. */
  polyflake_generator_free(NULL);
  polyflake_clock_free(NULL);
  CHECK(strcmp(polyflake_result_name(POLYFLAKE_RESULT_CLOCK_MOVED_BACKWARDS), "CLOCK_MOVED_BACKWARDS") == 0, "name");
  CHECK(strcmp(polyflake_result_name(POLYFLAKE_RESULT_PANIC), "PANIC") == 0, "panic name");
  CHECK(strcmp(polyflake_result_name(9999), "unknown polyflake_result") == 0, "unknown name");
  CHECK(strlen(polyflake_result_message(POLYFLAKE_RESULT_INVALID_ID)) > 0, "message");
  CHECK(strlen(polyflake_result_message(9999)) > 0, "unknown message");
  CHECK(strcmp(polyflake_health_status_name(POLYFLAKE_HEALTH_STATUS_CLOCK_STUCK), "clock_stuck") == 0, "status name");
  CHECK(strcmp(polyflake_health_status_name(77), "unknown") == 0, "unknown status");
  /* The new results and statuses keep their numbers and the core's names. */
  CHECK(POLYFLAKE_RESULT_CLOCK_JUMPED_AHEAD == 19 && POLYFLAKE_RESULT_ID_SPACE_MISMATCH == 20 &&
            POLYFLAKE_RESULT_GENERATOR_CLOSED == 21,
        "result codes");
  CHECK(strcmp(polyflake_result_name(19), "CLOCK_JUMPED_AHEAD") == 0, "19");
  CHECK(strcmp(polyflake_result_name(20), "ID_SPACE_MISMATCH") == 0, "20");
  CHECK(strcmp(polyflake_result_name(21), "GENERATOR_CLOSED") == 0, "21");
  CHECK(POLYFLAKE_RESULT_INTERRUPTED == 22, "result code 22");
  CHECK(strcmp(polyflake_result_name(22), "INTERRUPTED") == 0, "22");
  /* Appended at the end: the codes before it keep their numbers; 24 is unused. */
  CHECK(POLYFLAKE_RESULT_CLOCK_UNSYNCHRONIZED == 23 &&
            strcmp(polyflake_result_name(23), "CLOCK_UNSYNCHRONIZED") == 0,
        "result code 23");
  CHECK(strstr(polyflake_result_message(23), "max_clock_error_ms") != NULL, "message 23: %s",
        polyflake_result_message(23));
  CHECK(strcmp(polyflake_result_name(24), "unknown polyflake_result") == 0, "24 is unused");
  CHECK(POLYFLAKE_HEALTH_STATUS_CLOCK_UNSYNCHRONIZED == 13 &&
            strcmp(polyflake_health_status_name(13), "clock_unsynchronized") == 0,
        "status 13");
  CHECK(strcmp(polyflake_health_status_name(14), "unknown") == 0, "status 14 is unused");
  CHECK(POLYFLAKE_LEASE_KIND_HOST == 4 && strcmp(polyflake_lease_kind_name(4), "host") == 0,
        "lease kind 4");
  CHECK(strcmp(polyflake_lease_kind_name(5), "unknown") == 0, "lease kind 5 is unused");
  CHECK(strcmp(polyflake_clock_sync_state_name(POLYFLAKE_CLOCK_SYNC_STATE_OK), "ok") == 0 &&
            strcmp(polyflake_clock_sync_state_name(POLYFLAKE_CLOCK_SYNC_STATE_LEAP_IN_PROGRESS),
                   "leap_in_progress") == 0 &&
            strcmp(polyflake_clock_sync_state_name(POLYFLAKE_CLOCK_SYNC_STATE_UNAVAILABLE),
                   "unavailable") == 0 &&
            strcmp(polyflake_clock_sync_state_name(7), "unknown") == 0,
        "clock sync state names");
  CHECK(strstr(polyflake_result_message(21), "closed") != NULL, "message 21");
  CHECK(POLYFLAKE_HEALTH_STATUS_CLOCK_AHEAD == 10 && POLYFLAKE_HEALTH_STATUS_CLOSED == 11, "statuses");
  CHECK(strcmp(polyflake_health_status_name(10), "clock_ahead") == 0, "status 10");
  CHECK(POLYFLAKE_HEALTH_STATUS_STORE_ROLLED_BACK == 12 &&
            strcmp(polyflake_health_status_name(12), "store_rolled_back") == 0,
        "status 12");
  CHECK(strcmp(polyflake_health_status_name(11), "closed") == 0, "status 11");
  CHECK(strcmp(polyflake_lease_phase_name(POLYFLAKE_LEASE_PHASE_RESTART_GUARD), "restart_guard") == 0, "phase");
  CHECK(strcmp(polyflake_lease_phase_name(9), "unknown") == 0, "unknown phase");
  CHECK(strcmp(polyflake_clock_source_name(POLYFLAKE_CLOCK_SOURCE_COARSE), "coarse") == 0, "coarse");
  CHECK(strcmp(polyflake_clock_source_name(2), "unknown") == 0, "unknown clock source");
  CHECK_RESULT(polyflake_manual_clock_set_tick_ms(NULL, 4), N);
  CHECK_RESULT(polyflake_manual_clock_set_tick_ms(sc, 4), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strlen(polyflake_version()) > 0, "version");

  polyflake_clock_free(mc);
  polyflake_clock_free(sc);
  printf("bad input: ok\n");
}

/* ------------------------------------------------------------------------------------------ */
/* The same bad node-source inputs as every binding: same code, same message (the core's)      */

static void bad_node_sources(const char *vectors) {
  static const char *const case_keys[] = {"name", "source", "error", "message", NULL};
  static const char *const source_keys[] = {"kind",  "address",    "prefix_len", "dir",
                                            "slots", "reserve_ms", "identity",   NULL};
  char path[4096];
  cJSON *doc;
  const cJSON *c;
  int cases = 0;
  snprintf(path, sizeof path, "%s/bad_node_sources.json", vectors);
  doc = read_json(path);
  cJSON_ArrayForEach(c, get(doc, "cases")) {
    const cJSON *src = get(c, "source");
    const char *name = str(c, "name"), *kind = str(src, "kind");
    char dir[] = "/tmp/polyflake-c-bad-source-XXXXXX";
    polyflake_config cfg;
    polyflake_generator *g = NULL;
    polyflake_result r;
    only_keys(c, name, case_keys);
    only_keys(src, name, source_keys);
    polyflake_config_init(&cfg);
    if (strcmp(kind, "ipv4") == 0) {
      r = polyflake_generator_new_from_ipv4(&cfg, str(src, "address"), num(src, "prefix_len"), NULL, &g);
    } else if (strcmp(kind, "file_lease") == 0) {
      polyflake_file_lease_options o;
      polyflake_file_lease_options_init(&o);
      if (!mkdtemp(dir)) die("mkdtemp", dir);
      o.dir = dir; /* the table's "TMP": a fresh directory */
      if (get(src, "slots")) o.common.slots = (uint32_t)num(src, "slots");
      if (get(src, "reserve_ms")) o.common.reserve_ms = (uint64_t)num(src, "reserve_ms");
      if (get(src, "identity")) o.common.identity = str(src, "identity");
      r = polyflake_generator_new_file_lease(&cfg, &o, NULL, &g);
      /* Refused before the directory was touched: it is still empty. */
      CHECK(rmdir(dir) == 0, "%s: the lease directory was written", name);
    } else {
      die("unknown source kind", kind);
      r = POLYFLAKE_RESULT_PANIC;
    }
    CHECK(strcmp(polyflake_result_name(r), str(c, "error")) == 0, "%s: got %s want %s", name,
          polyflake_result_name(r), str(c, "error"));
    CHECK(strcmp(last_message(), str(c, "message")) == 0, "%s: message \"%s\" want \"%s\"",
          name, last_message(), str(c, "message"));
    CHECK(g == NULL, "%s: out-param written on error", name);
    polyflake_generator_free(g);
    cases++;
  }
  CHECK(cases >= 6, "bad node-source cases: %d", cases);
  cJSON_Delete(doc);
  printf("bad node sources: %d cases, the core's code and message each\n", cases);
}

/* ------------------------------------------------------------------------------------------ */
/* Forward steps on a manual clock: refused, corrected, confirmed after elapse                */

static void forward_steps(void) {
  const int64_t t = POLYFLAKE_DEFAULT_EPOCH_MS + 1000000, hour = 3600000;
  polyflake_config cfg;
  polyflake_clock *clock = NULL;
  polyflake_generator *g = NULL, *m = NULL, *off = NULL;
  polyflake_health_snapshot h;
  polyflake_decoded d;
  uint64_t before = 0, id = 42, buf[1000];
  int64_t now = 0;
  polyflake_manual_clock_new(t, &clock);
  polyflake_config_init(&cfg);
  cfg.node_id = 201;
  cfg.max_forward_step_ms = 1000;
  cfg.forward_confirm_ms = 10000;
  CHECK_RESULT(polyflake_generator_new(&cfg, clock, &g), POLYFLAKE_RESULT_OK);
  cfg.node_id = 202;
  cfg.mode = POLYFLAKE_MODE_MONOTONIC;
  CHECK_RESULT(polyflake_generator_new(&cfg, clock, &m), POLYFLAKE_RESULT_OK);
  cfg.node_id = 203;
  cfg.mode = POLYFLAKE_MODE_STRICT;
  cfg.max_forward_step_ms = POLYFLAKE_FORWARD_STEP_OFF;
  CHECK_RESULT(polyflake_generator_new(&cfg, clock, &off), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_id(g, &before), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_id(m, &id), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_id(off, &id), POLYFLAKE_RESULT_OK);

  /* A bad NTP server steps the clock an hour ahead: strict refuses, nothing is issued from it. */
  polyflake_manual_clock_advance(clock, hour);
  id = 42;
  CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_CLOCK_JUMPED_AHEAD);
  CHECK(id == 42, "out-param written on error");
  CHECK(strstr(last_message(), "1000") != NULL, "message names the bound: %s", last_message());
  CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
  CHECK(!h.ok && h.status == POLYFLAKE_HEALTH_STATUS_CLOCK_AHEAD, "status %s",
        polyflake_health_status_name(h.status));
  CHECK(h.clock_ahead_ms >= hour && h.clock_ahead_ms < hour + 1000 && h.forward_refused >= 1,
        "clock_ahead_ms %" PRId64 ", forward_refused %" PRIu64, h.clock_ahead_ms, h.forward_refused);
  /* Monotonic mode keeps issuing from the trusted time, not from the step. */
  CHECK_RESULT(polyflake_next_ids(m, buf, 1000), POLYFLAKE_RESULT_OK);
  polyflake_generator_decode(m, buf[999], &d);
  CHECK(d.timestamp_ms < t + 10, "monotonic followed the step to %" PRId64, d.timestamp_ms);
  CHECK_RESULT(polyflake_health(m, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.ok && h.clock_ahead_ms >= hour, "monotonic health: %s", h.reason);
  /* With the check off, the step is trusted. */
  CHECK_RESULT(polyflake_next_id(off, &id), POLYFLAKE_RESULT_OK);
  polyflake_generator_decode(off, id, &d);
  CHECK(d.timestamp_ms == t + hour, "off: %" PRId64, d.timestamp_ms);

  /* Half a second later the clock is corrected: issuing resumes below the step. */
  polyflake_manual_clock_elapse(clock, 500);
  polyflake_manual_clock_advance(clock, -hour);
  CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
  polyflake_generator_decode(g, id, &d);
  CHECK(id > before && d.timestamp_ms == t + 500, "after the correction: %" PRId64, d.timestamp_ms);
  CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.ok && h.clock_ahead_ms == 0, "healthy again: %s", h.reason);

  /* A step that holds its new offset for forward_confirm_ms of elapsed time is believed (a
   * generator of its own: this one's step was corrected above). */
  polyflake_generator_free(g);
  cfg.node_id = 204;
  cfg.max_forward_step_ms = 1000;
  CHECK_RESULT(polyflake_generator_new(&cfg, clock, &g), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
  polyflake_manual_clock_advance(clock, hour);
  CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_CLOCK_JUMPED_AHEAD);
  polyflake_manual_clock_elapse(clock, 9999);
  CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_CLOCK_JUMPED_AHEAD);
  polyflake_manual_clock_elapse(clock, 1);
  CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
  polyflake_manual_clock_get(clock, &now);
  polyflake_generator_decode(g, id, &d);
  CHECK(d.timestamp_ms == now, "confirmed: issued at %" PRId64 ", clock %" PRId64, d.timestamp_ms, now);
  CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.ok && h.status == POLYFLAKE_HEALTH_STATUS_OK, "believed: %s", h.reason);
  /* A suspend is elapsed time, never a step. */
  polyflake_manual_clock_elapse(clock, 8 * hour);
  CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
  polyflake_generator_free(g);
  polyflake_generator_free(m);
  polyflake_generator_free(off);
  polyflake_clock_free(clock);
  printf("forward steps: refused, corrected, confirmed\n");
}

/* ------------------------------------------------------------------------------------------ */
/* The coarse clock source: on a manual clock whose coarse reading lags by a tick,  */
/* and on the system clock                                                                    */

static void coarse_source(void) {
  const int64_t t = 1737747358023; /* a 4 ms tick puts the coarse reading at ...020 */
  polyflake_config cfg;
  polyflake_clock *clock = NULL;
  polyflake_generator *g = NULL;
  polyflake_health_snapshot h;
  polyflake_decoded d;
  uint64_t id = 0, prev = 0;
  int i;
  polyflake_manual_clock_new(t, &clock);
  CHECK_RESULT(polyflake_manual_clock_set_tick_ms(clock, 4), POLYFLAKE_RESULT_OK);
  polyflake_config_init(&cfg);
  cfg.node_id = 301;
  cfg.clock_source = POLYFLAKE_CLOCK_SOURCE_COARSE;
  CHECK_RESULT(polyflake_generator_new(&cfg, clock, &g), POLYFLAKE_RESULT_OK);
  {
    polyflake_config held;
    CHECK_RESULT(polyflake_generator_config(g, &held), POLYFLAKE_RESULT_OK);
    CHECK(held.clock_source == POLYFLAKE_CLOCK_SOURCE_COARSE, "held source %u", held.clock_source);
  }
  /* Issued at the coarse reading: a past tick, never ahead of the wall clock. */
  CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
  polyflake_generator_decode(g, id, &d);
  CHECK(d.timestamp_ms == t - 3, "coarse issue at %" PRId64, d.timestamp_ms);
  /* Time passes within the tick: the coarse reading stays behind what the precise one says,
   * and that lag is no rewind (no wait, no refusal). */
  for (i = 0; i < 3; i++) {
    prev = id;
    polyflake_manual_clock_elapse(clock, 1);
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
    CHECK(id > prev, "increasing");
  }
  CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.ok && h.rewinds_waited == 0 && h.rewinds_refused == 0 && h.wait_sleeps == 0,
        "lag taken for a rewind: %s", h.reason);
  CHECK(h.clock_source == POLYFLAKE_CLOCK_SOURCE_COARSE && h.clock_note[0] == 0,
        "health source %s (%s)", polyflake_clock_source_name(h.clock_source), h.clock_note);
  /* A real rewind shows in the coarse reading at once and is refused as on the precise source. */
  polyflake_manual_clock_advance(clock, -600);
  CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_CLOCK_MOVED_BACKWARDS);
  CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
  CHECK(!h.ok && h.status == POLYFLAKE_HEALTH_STATUS_CLOCK_BEHIND, "status %s",
        polyflake_health_status_name(h.status));
  polyflake_generator_free(g);
  polyflake_clock_free(clock);

  /* The system clock: the source in effect and its tick from clock_getres (or, where the coarse
   * clock is missing or coarser than 10 ms, the precise one and the reason). */
  polyflake_config_init(&cfg);
  cfg.node_id = 302;
  cfg.clock_source = POLYFLAKE_CLOCK_SOURCE_COARSE;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
  for (i = 0; i < 10000; i++) {
    prev = id;
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
    if (i > 0) CHECK(id > prev, "increasing at %d", i);
  }
  CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.ok && h.ids_issued == 10000, "health: %s", h.reason);
  if (h.clock_source == POLYFLAKE_CLOCK_SOURCE_COARSE)
    CHECK(h.clock_tick_ns > 0 && h.clock_tick_ns <= 10000000 && h.clock_note[0] == 0,
          "tick %" PRIu64 " ns", h.clock_tick_ns);
  else
    CHECK(h.clock_note[0] != 0, "the precise clock serves without a reason");
  printf("coarse source: a tick's lag is no rewind, a rewind is refused; system tick %" PRIu64
         " ns (%s)\n", h.clock_tick_ns, polyflake_clock_source_name(h.clock_source));
  polyflake_generator_free(g);
}

/* ------------------------------------------------------------------------------------------ */
/* 8 threads on one handle                                                                    */

#define THREADS 8
#define PER_THREAD 20000

#define NEXT_ID(g, out, i) polyflake_next_id(g, &(out)[i])
#define ID_AFTER(out, i) ((out)[i] > (out)[(i)-1])
DEFINE_WORKER(polyflake_generator, uint64_t, NEXT_ID, ID_AFTER)

static void threads(void) {
  polyflake_config cfg;
  polyflake_generator *g = NULL;
  worker_t w[THREADS];
  uint64_t *all = malloc(sizeof(uint64_t) * THREADS * PER_THREAD);
  polyflake_health_snapshot h;
  int i, dups = 0;
  polyflake_config_init(&cfg);
  cfg.node_id = 77;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
  RUN_WORKERS(w, g, all, worker);
  qsort(all, (size_t)THREADS * PER_THREAD, sizeof *all, cmp_u64);
  for (i = 1; i < THREADS * PER_THREAD; i++) dups += all[i] == all[i - 1];
  CHECK(dups == 0, "%d duplicates", dups);
  CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
  CHECK(h.ids_issued == (uint64_t)THREADS * PER_THREAD, "ids_issued %" PRIu64, h.ids_issued);
  polyflake_generator_free(g);
  free(all);
  printf("threads: %d x %d IDs, no duplicate\n", THREADS, PER_THREAD);
}

int main(int argc, char **argv) {
  /* Under valgrind everything runs ~20x slower: the hang bounds get the same slack. */
  double slack = getenv("POLYFLAKE_UNDER_VALGRIND") ? 20.0 : 1.0;
  if (argc == 3 && strcmp(argv[2], "threads") == 0) {
    /* Only the 8 threads on one handle: the ThreadSanitizer run (.build/mk/sanitize.mk). */
    printf("polyflake %s (C, threads only)\n", polyflake_version());
    threads();
    printf("%d checks, %d failures\n", checks, failures);
    return failures == 0 ? 0 : 1;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: %s VECTORS_DIR [threads]\n", argv[0]);
    return 2;
  }
  {
    /* test_c_shared -> c-shared: the coverage record of this link variant. */
    static char lang[64];
    const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    char *p;
    snprintf(lang, sizeof lang, "%s", strncmp(base, "test_", 5) == 0 ? base + 5 : base);
    for (p = lang; *p; p++)
      if (*p == '_') *p = '-';
    coverage_lang = lang;
  }
  printf("polyflake %s (C)\n", polyflake_version());
  layout_vectors(argv[1]);
  scenarios(argv[1], slack);
  bad_input();
  bad_node_sources(argv[1]);
  forward_steps();
  coarse_source();
  threads();
  printf("%d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
