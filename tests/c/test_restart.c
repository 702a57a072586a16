/*
 * A fixed node id keeps every promise a lease keeps, through the C ABI, tried with real
 * processes on one host; every case counts duplicates across its holders' IDs: zero.
 *
 * - a handover: a holder mints and lets go (a close, an exit() with its generator open, a
 *   SIGKILL); a successor already waiting for the node id takes it the moment it is free and
 *   mints at once after a close or an exit, and after a kill once the clock passes the mark
 *   (at most one reserve, 5 s);
 * - a restart with the clock stepped back (faketime, the wall clock only): killed, successor
 *   3 s behind: it waits, repeats nothing; closed or exited, 1 s behind: the same; killed,
 *   30 s behind: refused with LEASE_NOT_READY ("longer than a call waits"), nothing issued;
 * - a monotonic holder 100 ms ahead (a batch of 409,600) exits or is killed: a strict and a
 *   monotonic successor start without a refusal, above its lead;
 * - a lease and a static id share one claim: a file lease skips the slot a static holder has,
 *   a static id a lease holds (or another process holds) is refused, naming the holder;
 * - a user clock is exempt from the host-wide claim and keeps no mark (the in-process rule
 *   holds), and host scopes keep two holders of one node id apart on purpose;
 * - the state directory: a file where the directory should be is LEASE_STORE with
 *   POLYFLAKE_RESTART_GUARD_REQUIRED, a note in health with AUTO and OFF; the environment
 *   (POLYFLAKE_RESTART_GUARD, POLYFLAKE_STATE_DIR, POLYFLAKE_HOST_SCOPE) and bad values echoed;
 * - the kernel's word on the clock in health, and max_clock_error_ms refusing and releasing,
 *   under a stand-in for adjtimex (LD_PRELOAD) that moves it under a live process.
 *
 * Usage: test_restart SHIM.so   (SHIM.so: core/tests/support/fake_adjtimex.c, built by .build/mk/c.mk;
 *                                the holders are this program again, PF_RESTART_CHILD set)
 * Built twice by .build/mk/c.mk, against libpolyflake.so and libpolyflake.a. Not under valgrind: every
 * case is about time between processes.
 */
#define _DEFAULT_SOURCE /* realpath() */
#include "polyflake.h"
#include "check.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CHILD "PF_RESTART_CHILD"
/* What a loaded 2-core machine may add to a wait: spawning, scheduling. */
#define MARGIN_MS 2000.0

static void die(const char *what, const char *detail) {
  fprintf(stderr, "FATAL: %s: %s (%s)\n", what, detail, strerror(errno));
  exit(2);
}

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *env_or(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return v && *v ? v : fallback;
}

static const char *env(const char *name) {
  const char *v = getenv(name);
  if (!v) {
    fprintf(stderr, "FATAL: %s is not set\n", name);
    exit(2);
  }
  return v;
}

static void make_dir(char *tmpl) {
  if (!mkdtemp(tmpl)) die("mkdtemp", tmpl);
}

/* ------------------------------------------------------------------------------------------ */
/* The holder: this program again                                                              */

/* A holder's config: NODE, MODE (strict | monotonic), STATE (the state directory), the restart
 * guard required. */
static void holder_config(polyflake_config *cfg) {
  polyflake_config_init(cfg);
  cfg->node_id = atoll(env("NODE"));
  cfg->mode = strcmp(env_or("MODE", "strict"), "monotonic") == 0 ? POLYFLAKE_MODE_MONOTONIC
                                                                  : POLYFLAKE_MODE_STRICT;
  cfg->restart_guard = POLYFLAKE_RESTART_GUARD_REQUIRED;
  cfg->state_dir = env("STATE");
}

/* A holder. Environment: NODE, MODE, STATE, OUT (its IDs, native u64s), COUNT (IDs one by one),
 * BURST (a batch first: a monotonic holder runs ahead by it), MS (mint this long after the first
 * ID, instead of COUNT), RETRY (retry while the node id is in use), END: close | exit (exit()
 * with the generator open) | hang (say DONE, then wait to be killed). Says READY, then
 * "DONE waits=W status=S first_ms=F [REFUSED CODE message]". */
static int mint_child(void) {
  polyflake_config cfg;
  polyflake_generator *g = NULL;
  polyflake_health_snapshot h;
  polyflake_result r;
  FILE *out;
  long count = atol(env_or("COUNT", "0")), burst = atol(env_or("BURST", "0"));
  double ms = atof(env_or("MS", "0")), t0 = mono_ms(), ready, first = -1, until = 0;
  const char *end = env_or("END", "close");
  char refused[1200] = "";
  long n = 0;
  holder_config(&cfg);
  for (;;) {
    r = polyflake_generator_new(&cfg, NULL, &g);
    if (r != POLYFLAKE_RESULT_NODE_ID_IN_USE || !getenv("RETRY")) break;
    if (mono_ms() - t0 > 20000) break;
    {
      struct timespec ts = {0, 200000}; /* 200 us */
      nanosleep(&ts, NULL);
    }
  }
  if (r != POLYFLAKE_RESULT_OK) {
    printf("READY failed %s %s\n", polyflake_result_name(r), last_message());
    return 3;
  }
  printf("READY %" PRId64 "\n", node_of(g));
  fflush(stdout);
  ready = mono_ms();
  out = fopen(env("OUT"), "wb");
  if (!out) die("open", env("OUT"));
  if (burst > 0) {
    uint64_t *buf = malloc(sizeof *buf * (size_t)burst);
    if (!buf) die("malloc", "burst");
    r = polyflake_next_ids(g, buf, (size_t)burst);
    if (r == POLYFLAKE_RESULT_OK) {
      fwrite(buf, sizeof *buf, (size_t)burst, out);
      first = mono_ms() - ready;
    } else {
      snprintf(refused, sizeof refused, "REFUSED %s %s", polyflake_result_name(r), last_message());
    }
    free(buf);
  }
  while (!refused[0] && (n < count || (ms > 0 && (first < 0 || mono_ms() < until)))) {
    uint64_t id;
    r = polyflake_next_id(g, &id);
    if (r != POLYFLAKE_RESULT_OK) {
      snprintf(refused, sizeof refused, "REFUSED %s %s", polyflake_result_name(r), last_message());
      break;
    }
    if (first < 0) {
      first = mono_ms() - ready;
      until = mono_ms() + ms;
    }
    fwrite(&id, sizeof id, 1, out);
    n++;
  }
  fclose(out);
  polyflake_health(g, &h);
  printf("DONE waits=%" PRIu64 " status=%s first_ms=%.0f %s\n", h.restart_waits,
         polyflake_health_status_name(h.status), first, refused);
  fflush(stdout);
  if (strcmp(end, "exit") == 0) exit(0); /* the generator open: the exit handler's mark */
  if (strcmp(end, "hang") == 0)
    for (;;) pause();
  polyflake_generator_free(g);
  return 0;
}

/* A holder of a file lease: DIR, SLOTS, LAYOUT ("T/N/S"), STATE; says "HELD slot", then waits
 * to be killed. */
static int lease_child(void) {
  polyflake_config cfg;
  polyflake_file_lease_options o;
  polyflake_generator *g = NULL;
  polyflake_result r;
  polyflake_config_init(&cfg);
  polyflake_layout_from_name(env_or("LAYOUT", "default"), &cfg.layout);
  cfg.state_dir = env("STATE");
  polyflake_file_lease_options_init(&o);
  o.dir = env("DIR");
  o.common.slots = (uint32_t)atol(env("SLOTS"));
  o.common.reserve_ms = 50;
  r = polyflake_generator_new_file_lease(&cfg, &o, NULL, &g);
  if (r != POLYFLAKE_RESULT_OK) {
    printf("HELD failed %s %s\n", polyflake_result_name(r), last_message());
    return 3;
  }
  printf("HELD %" PRId64 "\n", node_of(g));
  fflush(stdout);
  for (;;) pause();
}

/* Build node NODE with every host setting left to the environment; say the result and message. */
static int build_child(void) {
  polyflake_config cfg;
  polyflake_generator *g = NULL;
  polyflake_health_snapshot h;
  polyflake_result r;
  polyflake_config_init(&cfg);
  cfg.node_id = atoll(env("NODE"));
  r = polyflake_generator_new(&cfg, NULL, &g);
  if (r == POLYFLAKE_RESULT_OK) {
    polyflake_health(g, &h);
    printf("BUILT %s kind=%s store=%s note=%s\n", polyflake_result_name(r),
           polyflake_lease_kind_name(h.lease_kind), h.lease_store, h.restart_guard_note);
  } else {
    printf("BUILT %s %s\n", polyflake_result_name(r), last_message());
  }
  polyflake_generator_free(g);
  return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Spawning holders                                                                            */

/* A child process: its pid and its stdout. */
typedef struct {
  pid_t pid;
  FILE *out;
} kid_t;

/* The live children, killed at exit: a failing test leaves no process holding a node id. */
#define MAX_KIDS 64
static pid_t live[MAX_KIDS];

static void kill_live(void) {
  int i;
  for (i = 0; i < MAX_KIDS; i++)
    if (live[i] > 0) {
      kill(live[i], SIGKILL);
      waitpid(live[i], NULL, 0);
      live[i] = 0;
    }
}

static void on_alarm(int sig) {
  (void)sig;
  fprintf(stderr, "FATAL: test_restart ran over its time limit\n");
  kill_live();
  _exit(2);
}

static char self[4096], faketime[4096];
static const char *shim;

/* The path of `name` on PATH (empty if none). */
static void which(const char *name, char *out, size_t len) {
  char path[8192], *dir, *save = NULL;
  snprintf(path, sizeof path, "%s", env_or("PATH", "/usr/bin:/bin"));
  out[0] = 0;
  for (dir = strtok_r(path, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    snprintf(out, len, "%s/%s", dir, name);
    if (access(out, X_OK) == 0) return;
  }
  out[0] = 0;
}

/* True when `entry` ("NAME=...") sets a variable that one of `vars` sets too. */
static int overridden(const char *entry, const char *const *vars) {
  size_t len = strcspn(entry, "=");
  for (; *vars; vars++)
    if (strncmp(entry, *vars, len) == 0 && (*vars)[len] == '=') return 1;
  return 0;
}

/* Run this program as a holder with `vars` (NULL-terminated "NAME=value" strings) set in its
 * environment (over this one's), under `faketime -f OFFSET` (the wall clock only) when offset is
 * not NULL, with `preload` as LD_PRELOAD when not NULL. */
static kid_t spawn(const char *const *vars, const char *offset, const char *preload) {
  char *envp[512], *argv[6], ld[4200];
  int fds[2], n = 0, i;
  kid_t k;
  for (i = 0; environ[i] && n < 480; i++)
    if (!overridden(environ[i], vars)) envp[n++] = environ[i];
  for (i = 0; vars[i] && n < 500; i++) envp[n++] = (char *)vars[i];
  if (offset) envp[n++] = "FAKETIME_DONT_FAKE_MONOTONIC=1";
  if (preload) {
    snprintf(ld, sizeof ld, "LD_PRELOAD=%s", preload);
    envp[n++] = ld;
  }
  envp[n] = NULL;
  i = 0;
  if (offset) {
    argv[i++] = faketime;
    argv[i++] = "-f";
    argv[i++] = (char *)offset;
  }
  argv[i++] = self;
  argv[i] = NULL;
  if (pipe(fds) != 0) die("pipe", "holder");
  k.pid = fork();
  if (k.pid < 0) die("fork", "holder");
  if (k.pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execve(offset ? faketime : self, argv, envp);
    _exit(127);
  }
  close(fds[1]);
  k.out = fdopen(fds[0], "r");
  for (i = 0; i < MAX_KIDS; i++)
    if (live[i] == 0) {
      live[i] = k.pid;
      break;
    }
  return k;
}

/* Read the child's lines until one contains `prefix`; that line from the prefix on (empty if
 * the child ended first). */
static const char *kid_line(kid_t *k, const char *prefix) {
  static char line[4096];
  while (fgets(line, sizeof line, k->out)) {
    char *at = strstr(line, prefix);
    if (at) {
      line[strcspn(line, "\n")] = 0;
      return at;
    }
  }
  line[0] = 0;
  return line;
}

static void forget(pid_t pid) {
  int i;
  for (i = 0; i < MAX_KIDS; i++)
    if (live[i] == pid) live[i] = 0;
}

/* Wait for the child to end; its exit status (-1 if killed). */
static int kid_wait(kid_t *k) {
  int status = 0;
  waitpid(k->pid, &status, 0);
  forget(k->pid);
  if (k->out) fclose(k->out);
  k->out = NULL;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void kid_kill(kid_t *k) {
  kill(k->pid, SIGKILL);
  kid_wait(k);
}

/* "NAME=value" strings for spawn(), kept in a small arena per test. */
typedef struct {
  char text[16][4200];
  const char *list[17];
  int n;
} vars_t;

static void var(vars_t *v, const char *name, const char *fmt, ...) {
  va_list ap;
  int at = snprintf(v->text[v->n], sizeof v->text[v->n], "%s=", name);
  va_start(ap, fmt);
  vsnprintf(v->text[v->n] + at, sizeof v->text[v->n] - (size_t)at, fmt, ap);
  va_end(ap);
  v->list[v->n] = v->text[v->n];
  v->list[++v->n] = NULL;
}

/* A mint holder's variables: node, state directory, output, and `extra` ("NAME=value" pairs). */
static void holder_vars(vars_t *v, int node, const char *state, const char *out,
                        const char *const *extra) {
  v->n = 0;
  v->list[0] = NULL;
  var(v, CHILD, "mint");
  var(v, "NODE", "%d", node);
  var(v, "STATE", "%s", state);
  var(v, "OUT", "%s", out);
  for (; extra && *extra; extra++) {
    v->list[v->n] = *extra;
    v->list[++v->n] = NULL;
  }
}

/* A DONE line's number after `key=` (-1 if absent). */
static double field(const char *line, const char *key) {
  char pat[64];
  const char *at;
  snprintf(pat, sizeof pat, " %s=", key);
  at = strstr(line, pat);
  return at ? atof(at + strlen(pat)) : -1;
}

/* The IDs a holder wrote. */
static void read_ids(const char *path, ids_t *ids) {
  FILE *f = fopen(path, "rb");
  uint64_t id;
  ids->n = 0;
  if (!f) return;
  while (fread(&id, sizeof id, 1, f) == 1) ids_push(ids, id);
  fclose(f);
}

/* How many IDs of `sets` repeat one before them (0 is the promise); `*total` gets the count. */
static size_t duplicates(ids_t *sets, int n, size_t *total) {
  ids_t all = {0};
  size_t i, d = 0;
  int s;
  for (s = 0; s < n; s++)
    for (i = 0; i < sets[s].n; i++) ids_push(&all, sets[s].v[i]);
  qsort(all.v, all.n, sizeof *all.v, cmp_u64);
  for (i = 1; i < all.n; i++)
    if (all.v[i] == all.v[i - 1]) d++;
  *total = all.n;
  free(all.v);
  return d;
}

static void remove_dir_of(const char *dir) { remove_tree(dir); }

/* ------------------------------------------------------------------------------------------ */
/* The tests                                                                                   */

static size_t ids_checked = 0, dups_found = 0;

/* A holder lets go three ways, twice each; a successor already waiting takes over. */
static void a_handover_between_processes_repeats_nothing(void) {
  static const char *const ends[] = {"close", "exit", "hang"};
  char dir[] = "/tmp/polyflake-c-handover-XXXXXX";
  ids_t sets[12] = {{0}};
  double worst[3] = {0, 0, 0};
  int waited[3] = {0, 0, 0};
  size_t total, d;
  int round;
  make_dir(dir);
  for (round = 0; round < 6; round++) {
    const char *end = ends[round % 3];
    char a_out[4200], b_out[4200], end_var[32];
    const char *a_extra[] = {"COUNT=3000", end_var, NULL}, *b_extra[] = {"COUNT=3000", "RETRY=1", NULL};
    const char *done;
    vars_t va, vb;
    kid_t a, b;
    snprintf(a_out, sizeof a_out, "%s/a%d", dir, round);
    snprintf(b_out, sizeof b_out, "%s/b%d", dir, round);
    snprintf(end_var, sizeof end_var, "END=%s", end);
    holder_vars(&va, 960, dir, a_out, a_extra);
    holder_vars(&vb, 960, dir, b_out, b_extra);
    a = spawn(va.list, NULL, NULL);
    CHECK(strncmp(kid_line(&a, "READY"), "READY 960", 9) == 0, "round %d: the holder", round);
    b = spawn(vb.list, NULL, NULL);
    done = kid_line(&a, "DONE");
    CHECK(strstr(done, "REFUSED") == NULL, "round %d: the holder: %s", round, done);
    if (strcmp(end, "hang") == 0) kid_kill(&a);
    else CHECK(kid_wait(&a) == 0, "round %d: the holder's exit", round);
    done = kid_line(&b, "DONE");
    CHECK(done[0] && strstr(done, "REFUSED") == NULL, "round %d (%s): the successor: %s", round,
          end, done);
    if (field(done, "waits") > 0) waited[round % 3]++;
    if (field(done, "first_ms") > worst[round % 3]) worst[round % 3] = field(done, "first_ms");
    if (strcmp(end, "hang") != 0)
      CHECK(field(done, "waits") == 0, "round %d: after a%s the successor waited: %s", round,
            strcmp(end, "close") == 0 ? " close" : "n exit", done);
    else
      CHECK(field(done, "first_ms") <= 5000 + MARGIN_MS,
            "round %d: after a kill the successor waited past one reserve: %s", round, done);
    CHECK(kid_wait(&b) == 0, "round %d: the successor's exit", round);
    read_ids(a_out, &sets[2 * round]);
    read_ids(b_out, &sets[2 * round + 1]);
    CHECK(sets[2 * round].n == 3000 && sets[2 * round + 1].n == 3000, "round %d: %zu and %zu IDs",
          round, sets[2 * round].n, sets[2 * round + 1].n);
  }
  d = duplicates(sets, 12, &total);
  CHECK(d == 0, "%zu duplicates among %zu IDs", d, total);
  CHECK(total == 6 * 6000, "%zu IDs", total);
  ids_checked += total;
  dups_found += d;
  printf("handover: 6 rounds on node 960 (close, exit(), SIGKILL, twice each), a successor "
         "waiting each time: %zu IDs, %zu duplicates; the successor's first ID after a close "
         "%.0f ms (waited %d of 2), after an exit %.0f ms (waited %d of 2), after a kill %.0f ms "
         "(waited %d of 2; bound one reserve, 5000 ms)\n",
         total, d, worst[0], waited[0], worst[1], waited[1], worst[2], waited[2]);
  for (round = 0; round < 12; round++) free(sets[round].v);
  remove_dir_of(dir);
}

/* A holder mints 300 ms on the true clock and goes (`end`); its successor starts at once with its
 * wall clock `offset` behind. The successor's DONE line into `done`; duplicates counted. */
static void restart_behind(const char *offset, const char *end, char *done, size_t len,
                           size_t *b_ids) {
  char dir[] = "/tmp/polyflake-c-behind-XXXXXX", a_out[4200], b_out[4200], end_var[32];
  const char *a_extra[] = {"MS=300", end_var, NULL}, *b_extra[] = {"MS=300", NULL};
  ids_t sets[2] = {{0}};
  size_t total, d;
  vars_t va, vb;
  kid_t a, b;
  make_dir(dir);
  snprintf(a_out, sizeof a_out, "%s/a", dir);
  snprintf(b_out, sizeof b_out, "%s/b", dir);
  snprintf(end_var, sizeof end_var, "END=%s", end);
  holder_vars(&va, 961, dir, a_out, a_extra);
  holder_vars(&vb, 961, dir, b_out, b_extra);
  a = spawn(va.list, NULL, NULL);
  kid_line(&a, "DONE");
  if (strcmp(end, "hang") == 0) kid_kill(&a);
  else CHECK(kid_wait(&a) == 0, "the holder's exit");
  b = spawn(vb.list, offset, NULL);
  snprintf(done, len, "%s", kid_line(&b, "DONE"));
  kid_wait(&b);
  read_ids(a_out, &sets[0]);
  read_ids(b_out, &sets[1]);
  d = duplicates(sets, 2, &total);
  CHECK(d == 0, "%s behind after %s: %zu duplicates among %zu IDs", offset, end, d, total);
  CHECK(sets[0].n > 0, "the holder issued nothing");
  ids_checked += total;
  dups_found += d;
  *b_ids = sets[1].n;
  free(sets[0].v);
  free(sets[1].v);
  remove_dir_of(dir);
}

static int faketime_present(void) {
  char cmd[4200];
  which("faketime", faketime, sizeof faketime);
  snprintf(cmd, sizeof cmd, "'%s' -f -1s true >/dev/null 2>&1", faketime);
  return faketime[0] && system(cmd) == 0;
}

static void a_restart_with_the_clock_stepped_back_waits_and_repeats_nothing(void) {
  char done[4096];
  size_t n;
  if (!faketime_present()) {
    CHECK(0, "faketime is missing: make deps-apt installs it");
    return;
  }
  /* Killed (the mark one reserve ahead), successor 3 s behind: it waits out the guard. */
  restart_behind("-3s", "hang", done, sizeof done, &n);
  CHECK(field(done, "waits") == 1 && !strstr(done, "REFUSED") && n > 0, "killed, -3s: %s", done);
  printf("restart: killed, successor's clock 3 s behind: first ID after %.0f ms (waits=%.0f), "
         "%zu IDs, 0 repeated\n", field(done, "first_ms"), field(done, "waits"), n);
  /* A clean close, successor 1 s behind (an NTP step): it waits up to 1 s, less its own start
   * (a successor that started after the step had passed would not wait at all). */
  restart_behind("-1s", "close", done, sizeof done, &n);
  CHECK(field(done, "waits") == 1 && !strstr(done, "REFUSED") && n > 0, "closed, -1s: %s", done);
  CHECK(field(done, "first_ms") <= 1000 + MARGIN_MS, "closed, -1s: %s", done);
  printf("restart: closed, successor 1 s behind: first ID after %.0f ms (waits=%.0f), %zu "
         "IDs, 0 repeated\n", field(done, "first_ms"), field(done, "waits"), n);
  /* exit() with the generator open, 1 s behind: the exit handler left the mark clean. */
  restart_behind("-1s", "exit", done, sizeof done, &n);
  CHECK(!strstr(done, "REFUSED") && n > 0, "exit(), -1s: %s", done);
  CHECK(field(done, "first_ms") <= 1000 + MARGIN_MS, "exit(), -1s: %s", done);
  printf("restart: exit() with the generator open, successor 1 s behind: first ID after "
         "%.0f ms (waits=%.0f), %zu IDs, 0 repeated\n", field(done, "first_ms"),
         field(done, "waits"), n);
  /* Further behind than a call waits (10 s): refused with the reason, nothing issued. */
  restart_behind("-30s", "hang", done, sizeof done, &n);
  CHECK(strstr(done, "REFUSED LEASE_NOT_READY") != NULL, "killed, -30s: %s", done);
  CHECK(strstr(done, "longer than a call waits") != NULL, "killed, -30s: %s", done);
  CHECK(n == 0, "killed, -30s: %zu IDs issued", n);
  printf("restart: killed, successor 30 s behind: %s (%zu IDs)\n", strstr(done, "REFUSED"), n);
}

/* 409,600 IDs at once put a monotonic holder 100 ms ahead; it goes at once (exit(), then a
 * kill); a strict and a monotonic successor follow. */
static void a_monotonic_holder_ahead_hands_its_lead_on(void) {
  static const char *const ends[] = {"exit", "hang"};
  int round;
  for (round = 0; round < 2; round++) {
    char dir[] = "/tmp/polyflake-c-ahead-XXXXXX", outs[3][4200], end_var[32];
    const char *a_extra[] = {"MODE=monotonic", "BURST=409600", end_var, NULL};
    const char *modes[] = {"MODE=strict", "MODE=monotonic"};
    ids_t sets[3] = {{0}};
    double first[2] = {0, 0};
    size_t total, d;
    vars_t v;
    kid_t a;
    int i;
    make_dir(dir);
    for (i = 0; i < 3; i++) snprintf(outs[i], sizeof outs[i], "%s/o%d", dir, i);
    snprintf(end_var, sizeof end_var, "END=%s", ends[round]);
    holder_vars(&v, 962, dir, outs[0], a_extra);
    a = spawn(v.list, NULL, NULL);
    CHECK(!strstr(kid_line(&a, "DONE"), "REFUSED"), "the monotonic holder");
    if (round == 1) kid_kill(&a);
    else CHECK(kid_wait(&a) == 0, "the holder's exit");
    for (i = 0; i < 2; i++) {
      const char *extra[] = {modes[i], "COUNT=20000", NULL};
      const char *done;
      kid_t b;
      holder_vars(&v, 962, dir, outs[i + 1], extra);
      b = spawn(v.list, NULL, NULL);
      done = kid_line(&b, "DONE");
      CHECK(done[0] && !strstr(done, "REFUSED"), "%s successor after %s: %s", modes[i],
            ends[round], done);
      first[i] = field(done, "first_ms");
      CHECK(kid_wait(&b) == 0, "the successor's exit");
    }
    for (i = 0; i < 3; i++) read_ids(outs[i], &sets[i]);
    CHECK(sets[0].n == 409600 && sets[1].n == 20000 && sets[2].n == 20000, "%zu %zu %zu IDs",
          sets[0].n, sets[1].n, sets[2].n);
    CHECK(sets[1].n == 0 || sets[1].v[0] > sets[0].v[sets[0].n - 1],
          "the strict successor started under the holder's lead");
    d = duplicates(sets, 3, &total);
    CHECK(d == 0, "%zu duplicates among %zu IDs", d, total);
    ids_checked += total;
    dups_found += d;
    printf("monotonic lead: a holder 100 ms ahead (409,600 IDs) %s; a strict successor's first "
           "ID after %.0f ms, a monotonic one's after %.0f ms: %zu IDs, %zu duplicates\n",
           round == 0 ? "exits with its generator open" : "is killed", first[0], first[1], total, d);
    for (i = 0; i < 3; i++) free(sets[i].v);
    remove_dir_of(dir);
  }
}

static polyflake_result static_on(int64_t node, const char *layout, const char *state,
                                  polyflake_generator **g) {
  polyflake_config cfg;
  polyflake_config_init(&cfg);
  polyflake_layout_from_name(layout, &cfg.layout);
  cfg.node_id = node;
  cfg.restart_guard = POLYFLAKE_RESTART_GUARD_REQUIRED;
  cfg.state_dir = state;
  *g = NULL;
  return polyflake_generator_new(&cfg, NULL, g);
}

static polyflake_result lease_on(const char *dir, uint32_t slots, const char *layout,
                                 polyflake_generator **g) {
  polyflake_config cfg;
  polyflake_file_lease_options o;
  polyflake_config_init(&cfg);
  polyflake_layout_from_name(layout, &cfg.layout);
  polyflake_file_lease_options_init(&o);
  o.dir = dir;
  o.common.slots = slots;
  o.common.reserve_ms = 50;
  *g = NULL;
  return polyflake_generator_new_file_lease(&cfg, &o, NULL, g);
}

static void a_lease_and_a_static_id_share_one_claim(void) {
  char state[] = "/tmp/polyflake-c-claim-state-XXXXXX", leases[] = "/tmp/polyflake-c-claim-XXXXXX";
  char other[] = "/tmp/polyflake-c-claim-other-XXXXXX", out[4200], pid_text[64];
  polyflake_generator *s0 = NULL, *l = NULL, *s1 = NULL;
  vars_t v;
  kid_t k;
  make_dir(state);
  make_dir(leases);
  make_dir(other);
  /* In this process: a static holder of 0; the lease skips slot 0 and takes 1; a static 1 is
   * refused (the holder is in this process). */
  CHECK_RESULT(static_on(0, "41/3/19", state, &s0), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(lease_on(leases, 8, "41/3/19", &l), POLYFLAKE_RESULT_OK);
  CHECK(l && node_of(l) == 1, "the lease took slot %" PRId64 " beside a static 0", l ? node_of(l) : -1);
  CHECK_RESULT(static_on(1, "41/3/19", state, &s1), POLYFLAKE_RESULT_NODE_ID_IN_USE);
  CHECK(strstr(last_message(), "in this process") != NULL, "message: %s", last_message());
  polyflake_generator_free(l);
  polyflake_generator_free(s0);
  /* Another process holds static 0 (default layout): refused here naming it; a lease here skips
   * slot 0. */
  snprintf(out, sizeof out, "%s/ids", state);
  {
    const char *extra[] = {"COUNT=10", "END=hang", NULL};
    holder_vars(&v, 0, state, out, extra);
  }
  k = spawn(v.list, NULL, NULL);
  kid_line(&k, "DONE");
  snprintf(pid_text, sizeof pid_text, "process %ld ", (long)k.pid);
  CHECK_RESULT(static_on(0, "default", state, &s0), POLYFLAKE_RESULT_NODE_ID_IN_USE);
  CHECK(strstr(last_message(), pid_text) != NULL, "names %s: %s", pid_text, last_message());
  printf("claim: a static id another process holds: %s\n", last_message());
  CHECK_RESULT(lease_on(other, 8, "default", &l), POLYFLAKE_RESULT_OK);
  CHECK(l && node_of(l) != 0, "the lease took the slot of a static holder");
  polyflake_generator_free(l);
  kid_kill(&k);
  /* Another process holds a lease's slot: a static id of it is refused naming that process. */
  v.n = 0;
  v.list[0] = NULL;
  var(&v, CHILD, "lease");
  var(&v, "DIR", "%s", leases);
  var(&v, "SLOTS", "1");
  var(&v, "LAYOUT", "41/3/19");
  var(&v, "STATE", "%s", state);
  k = spawn(v.list, NULL, NULL);
  CHECK(strcmp(kid_line(&k, "HELD"), "HELD 0") == 0, "the lease holder");
  snprintf(pid_text, sizeof pid_text, "process %ld ", (long)k.pid);
  CHECK_RESULT(static_on(0, "41/3/19", state, &s0), POLYFLAKE_RESULT_NODE_ID_IN_USE);
  CHECK(strstr(last_message(), pid_text) != NULL, "names %s: %s", pid_text, last_message());
  kid_kill(&k);
  CHECK_RESULT(static_on(0, "41/3/19", state, &s0), POLYFLAKE_RESULT_OK);
  polyflake_generator_free(s0);
  printf("claim: a file lease skips the slot a static holder has (here and in another process); "
         "a static id a lease holds (here and in another process) is NODE_ID_IN_USE naming it\n");
  remove_dir_of(state);
  remove_dir_of(leases);
  remove_dir_of(other);
}

/* A user's own time source: the system clock read through a function pointer. */
static int32_t read_system(void *context, int64_t *out_ms, char *why, size_t why_len) {
  struct timespec ts;
  int *freed = context;
  (void)why;
  (void)why_len;
  if (*freed) return 9; /* read after its context was freed: a bug */
  clock_gettime(CLOCK_REALTIME, &ts);
  *out_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  return 0;
}

static void free_context(void *context) { *(int *)context += 1; }

static int32_t read_failing(void *context, int64_t *out_ms, char *why, size_t why_len) {
  (void)context;
  (void)out_ms;
  snprintf(why, why_len, "the PTP daemon is not running");
  return 4;
}

static void a_user_clock_is_exempt_from_the_host_claim(void) {
  char state[] = "/tmp/polyflake-c-user-clock-XXXXXX", out[4200];
  polyflake_clock *clock = NULL, *bad = NULL;
  polyflake_generator *g = NULL, *g2 = NULL, *sys = NULL;
  polyflake_health_snapshot h;
  uint64_t id = 0;
  int freed = 0;
  vars_t v;
  kid_t k;
  const char *extra[] = {"COUNT=10", "END=hang", NULL};
  make_dir(state);
  snprintf(out, sizeof out, "%s/ids", state);
  holder_vars(&v, 966, state, out, extra);
  k = spawn(v.list, NULL, NULL);
  kid_line(&k, "DONE");
  /* The system clock is refused: the holder has node 966 on this host. */
  CHECK_RESULT(static_on(966, "default", state, &sys), POLYFLAKE_RESULT_NODE_ID_IN_USE);
  /* A user clock is not the host's: it claims in this process only, and keeps no mark. */
  CHECK_RESULT(polyflake_user_clock_new(NULL, free_context, &freed, &clock),
               POLYFLAKE_RESULT_NULL_PARAMETER);
  CHECK_RESULT(polyflake_user_clock_new(read_system, free_context, &freed, NULL),
               POLYFLAKE_RESULT_NULL_PARAMETER);
  CHECK(freed == 0, "the context was freed by a refused call");
  CHECK_RESULT(polyflake_user_clock_new(read_system, free_context, &freed, &clock),
               POLYFLAKE_RESULT_OK);
  {
    polyflake_config cfg;
    polyflake_config_init(&cfg);
    cfg.node_id = 966;
    /* A mark goes with the system clock: required on a user clock is refused. */
    cfg.restart_guard = POLYFLAKE_RESTART_GUARD_REQUIRED;
    CHECK_RESULT(polyflake_generator_new(&cfg, clock, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
    CHECK(strstr(last_message(), "\"required\"") != NULL, "message: %s", last_message());
    cfg.restart_guard = POLYFLAKE_RESTART_GUARD_DEFAULT;
    cfg.state_dir = state;
    CHECK_RESULT(polyflake_generator_new(&cfg, clock, &g), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
    CHECK(h.ok && h.lease_kind == POLYFLAKE_LEASE_KIND_NONE && h.restart_guard_note[0] == 0 &&
              h.clock_tick_ns == 0,
          "a user clock's health: kind %s, note '%s'", polyflake_lease_kind_name(h.lease_kind),
          h.restart_guard_note);
    /* In this process the rule holds. */
    CHECK_RESULT(polyflake_generator_new(&cfg, clock, &g2), POLYFLAKE_RESULT_NODE_ID_IN_USE);
    CHECK(strstr(last_message(), "in this process") != NULL, "message: %s", last_message());
    /* The kernel says nothing of a user clock. */
    cfg.node_id = 967;
    cfg.has_max_clock_error = 1;
    cfg.max_clock_error_ms = 100;
    CHECK_RESULT(polyflake_generator_new(&cfg, clock, &g2), POLYFLAKE_RESULT_INVALID_ARGUMENT);
    CHECK(strstr(last_message(), "max_clock_error_ms") != NULL, "message: %s", last_message());
    /* A failing read: CLOCK_FAILED with its reason. */
    cfg.has_max_clock_error = 0;
    CHECK_RESULT(polyflake_user_clock_new(read_failing, NULL, NULL, &bad), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_generator_new(&cfg, bad, &g2), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_next_id(g2, &id), POLYFLAKE_RESULT_CLOCK_FAILED);
    CHECK(strstr(last_message(), "returned 4: the PTP daemon is not running") != NULL,
          "message: %s", last_message());
    CHECK_RESULT(polyflake_manual_clock_set(bad, 1), POLYFLAKE_RESULT_INVALID_ARGUMENT);
    polyflake_generator_free(g2);
    polyflake_clock_free(bad);
  }
  polyflake_clock_free(clock);
  CHECK(freed == 0, "the context was freed while a generator reads it");
  polyflake_generator_free(g);
  CHECK(freed == 1, "the context was freed %d times once the clock and its generator were gone",
        freed);
  kid_kill(&k);
  printf("user clock: node 966 held by process %ld on the system clock; here on a user clock it "
         "issues (no mark), a second here is NODE_ID_IN_USE; the context freed once\n",
         (long)k.pid);
  remove_dir_of(state);
}

static void host_scopes_keep_holders_apart(void) {
  char state[] = "/tmp/polyflake-c-scope-XXXXXX";
  polyflake_config cfg;
  polyflake_generator *a = NULL, *b = NULL, *c = NULL;
  polyflake_health_snapshot ha, hb;
  uint64_t ia = 0, ib = 0;
  make_dir(state);
  polyflake_config_init(&cfg);
  cfg.node_id = 968;
  cfg.state_dir = state;
  cfg.restart_guard = POLYFLAKE_RESTART_GUARD_REQUIRED;
  cfg.host_scope = "c-alpha";
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &a), POLYFLAKE_RESULT_OK);
  cfg.host_scope = "c-beta";
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &b), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &c), POLYFLAKE_RESULT_NODE_ID_IN_USE);
  CHECK_RESULT(polyflake_next_id(a, &ia), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_id(b, &ib), POLYFLAKE_RESULT_OK);
  polyflake_health(a, &ha);
  polyflake_health(b, &hb);
  CHECK(ha.lease_kind == POLYFLAKE_LEASE_KIND_HOST && hb.lease_kind == POLYFLAKE_LEASE_KIND_HOST &&
            strcmp(ha.lease_store, hb.lease_store) != 0 && strstr(ha.lease_store, state) == ha.lease_store,
        "two marks: %s and %s", ha.lease_store, hb.lease_store);
  /* Bad scopes are refused, echoing what was sent. */
  cfg.host_scope = "two words";
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &c), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "invalid host_scope: \"two words\"") != NULL, "message: %s",
        last_message());
  cfg.host_scope = "billing\xff";
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &c), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "billing\\xFF") != NULL && strstr(last_message(), "UTF-8") != NULL,
        "message: %s", last_message());
  cfg.host_scope = "a-scope-of-forty-one-bytes-is-one-too-lon";
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &c), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "40") != NULL, "message: %s", last_message());
  printf("scopes: node 968 held twice in one process, scopes c-alpha and c-beta (two marks); bad "
         "scopes echoed: %s\n", last_message());
  polyflake_generator_free(a);
  polyflake_generator_free(b);
  remove_dir_of(state);
}

/* The state directory: a file where it should be; a new generator in this process follows the
 * last one; the environment's settings. */
static void the_state_directory_keeps_the_mark_or_says_why_not(void) {
  char state[] = "/tmp/polyflake-c-state-XXXXXX", file[4200], line[4096];
  polyflake_config cfg;
  polyflake_generator *g = NULL;
  polyflake_health_snapshot h;
  uint64_t last = 0, next = 0;
  double t0;
  vars_t v;
  kid_t k;
  FILE *f;
  make_dir(state);
  snprintf(file, sizeof file, "%s/not-a-directory", state);
  f = fopen(file, "w");
  if (!f) die("create", file);
  fclose(f);
  polyflake_config_init(&cfg);
  cfg.node_id = 965;
  cfg.state_dir = file;
  cfg.restart_guard = POLYFLAKE_RESTART_GUARD_REQUIRED;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_LEASE_STORE);
  CHECK(strstr(last_message(), file) && strstr(last_message(), "POLYFLAKE_STATE_DIR"),
        "required: %s", last_message());
  printf("state directory: required, a file in its place: %s\n", last_message());
  cfg.restart_guard = POLYFLAKE_RESTART_GUARD_AUTO;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
  polyflake_health(g, &h);
  CHECK(h.ok && h.lease_kind == POLYFLAKE_LEASE_KIND_NONE &&
            strstr(h.restart_guard_note, "no restart guard") != NULL,
        "auto: kind %s, note '%s'", polyflake_lease_kind_name(h.lease_kind), h.restart_guard_note);
  CHECK_RESULT(polyflake_next_id(g, &next), POLYFLAKE_RESULT_OK);
  polyflake_generator_free(g);
  cfg.restart_guard = POLYFLAKE_RESTART_GUARD_OFF;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
  polyflake_health(g, &h);
  CHECK(strncmp(h.restart_guard_note, "off", 3) == 0, "off: '%s'", h.restart_guard_note);
  polyflake_generator_free(g);
  cfg.restart_guard = 4;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "4 is not a polyflake_restart_guard (0 default, 1 auto, 2 required, 3 off)"),
        "message: %s", last_message());
  /* A new generator of the node id in this process follows the last one at once. */
  cfg.state_dir = state;
  cfg.restart_guard = POLYFLAKE_RESTART_GUARD_REQUIRED;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
  {
    uint64_t *burst = malloc(sizeof *burst * 409600);
    if (!burst) die("malloc", "burst");
    cfg.mode = POLYFLAKE_MODE_MONOTONIC;
    polyflake_generator_free(g);
    CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_next_ids(g, burst, 409600), POLYFLAKE_RESULT_OK);
    last = burst[409599];
    free(burst);
  }
  polyflake_health(g, &h);
  CHECK(h.lease_kind == POLYFLAKE_LEASE_KIND_HOST && strstr(h.lease_store, state) == h.lease_store &&
            strstr(h.lease_store, "node-41-10-12-0965") != NULL && h.restart_waits == 0,
        "the mark: %s %s", polyflake_lease_kind_name(h.lease_kind), h.lease_store);
  polyflake_generator_free(g);
  cfg.mode = POLYFLAKE_MODE_STRICT;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
  t0 = mono_ms();
  CHECK_RESULT(polyflake_next_id(g, &next), POLYFLAKE_RESULT_OK);
  CHECK(next > last, "the new generator started under the last one's IDs");
  polyflake_health(g, &h);
  CHECK(mono_ms() - t0 <= 100 + MARGIN_MS, "waited %.0f ms", mono_ms() - t0);
  printf("state directory: a strict generator after a monotonic one 100 ms ahead (409,600 IDs) "
         "in this process: first ID above its last after %.1f ms (restart_waits %" PRIu64 ")\n",
         mono_ms() - t0, h.restart_waits);
  polyflake_generator_free(g);
  /* The environment: POLYFLAKE_RESTART_GUARD and POLYFLAKE_STATE_DIR where the config leaves
   * them, POLYFLAKE_HOST_SCOPE. */
  {
    static const struct {
      const char *guard, *dir_is_file, *scope, *want;
    } cases[] = {
        {"required", "1", "", "BUILT LEASE_STORE"},
        {"auto", "1", "", "BUILT OK kind=none"},
        {"off", "", "", "BUILT OK kind=none store= note=off"},
        {"", "", "", "BUILT OK kind=host"},
        {"sometimes", "", "", "BUILT INVALID_ARGUMENT"},
        {"", "", "two words", "BUILT INVALID_ARGUMENT"},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      v.n = 0;
      v.list[0] = NULL;
      var(&v, CHILD, "build");
      var(&v, "NODE", "964");
      var(&v, "POLYFLAKE_RESTART_GUARD", "%s", cases[i].guard);
      var(&v, "POLYFLAKE_STATE_DIR", "%s", cases[i].dir_is_file[0] ? file : state);
      if (cases[i].scope[0]) var(&v, "POLYFLAKE_HOST_SCOPE", "%s", cases[i].scope);
      k = spawn(v.list, NULL, NULL);
      snprintf(line, sizeof line, "%s", kid_line(&k, "BUILT"));
      kid_wait(&k);
      CHECK(strncmp(line, cases[i].want, strlen(cases[i].want)) == 0,
            "POLYFLAKE_RESTART_GUARD=%s, POLYFLAKE_STATE_DIR a %s, POLYFLAKE_HOST_SCOPE=%s: %s",
            cases[i].guard, cases[i].dir_is_file[0] ? "file" : "directory", cases[i].scope, line);
      if (strcmp(cases[i].guard, "sometimes") == 0)
        CHECK(strstr(line, "POLYFLAKE_RESTART_GUARD") && strstr(line, "\"sometimes\""), "%s", line);
      if (strcmp(cases[i].guard, "required") == 0)
        CHECK(strstr(line, file) != NULL, "names the directory: %s", line);
      if (strstr(cases[i].want, "kind=host"))
        CHECK(strstr(line, state) != NULL, "the mark in POLYFLAKE_STATE_DIR: %s", line);
    }
    printf("state directory: POLYFLAKE_RESTART_GUARD (required, auto, off, unset, a bad word), "
           "POLYFLAKE_STATE_DIR and POLYFLAKE_HOST_SCOPE read where the config leaves them\n");
  }
  remove_dir_of(state);
}

/* ------------------------------------------------------------------------------------------ */
/* The kernel's word on the clock                                                              */

static const char *sync_file;

static void set_sync(const char *text) {
  FILE *f = fopen(sync_file, "w");
  if (!f) die("write", sync_file);
  fputs(text, f);
  fclose(f);
}

/* Call next_id on g every 20 ms until it gives `want` (up to 2,500 ms: the monitor looks once a
 * second); how long that took (-1: never). */
static double until_result(const polyflake_generator *g, polyflake_result want) {
  double t0 = mono_ms();
  uint64_t id;
  while (mono_ms() - t0 < 2500) {
    if (polyflake_next_id(g, &id) == want) return mono_ms() - t0;
    sleep_ms(20);
  }
  return -1;
}

/* The child under the stand-in: a generator bound to 50 ms of error, one without a bound, a
 * UUIDv7 generator bound too; the kernel's word moved under them. Exit status: failures. */
static int sync_child(void) {
  polyflake_config cfg;
  polyflake_timeid_config tcfg;
  polyflake_generator *bound = NULL, *free_g = NULL;
  polyflake_uuid7_generator *u = NULL;
  polyflake_health_snapshot h;
  uint8_t uuid[16];
  uint64_t id;
  double took;
  sync_file = env("PF_FAKE_ADJTIMEX");
  set_sync("0 0 5000 1000"); /* synchronized, 5 ms of maximum error */
  polyflake_config_init(&cfg);
  cfg.node_id = 970;
  cfg.restart_guard = POLYFLAKE_RESTART_GUARD_OFF;
  cfg.has_max_clock_error = 1;
  cfg.max_clock_error_ms = 50;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &bound), POLYFLAKE_RESULT_OK);
  cfg.node_id = 971;
  cfg.has_max_clock_error = 0;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &free_g), POLYFLAKE_RESULT_OK);
  polyflake_timeid_config_init(&tcfg);
  tcfg.has_max_clock_error = 1;
  tcfg.max_clock_error_ms = 50;
  CHECK_RESULT(polyflake_uuid7_generator_new(&tcfg, NULL, &u), POLYFLAKE_RESULT_OK);
  if (!bound || !free_g || !u) return 1;
  CHECK_RESULT(polyflake_next_id(bound, &id), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_next_uuid7(u, uuid), POLYFLAKE_RESULT_OK);
  polyflake_health(free_g, &h);
  CHECK(h.clock_sync_state == POLYFLAKE_CLOCK_SYNC_STATE_OK && h.clock_sync_synchronized &&
            h.clock_sync_max_error_us == 5000 && h.clock_sync_est_error_us == 1000,
        "synchronized: %s %d %" PRId64 " %" PRId64, polyflake_clock_sync_state_name(h.clock_sync_state),
        h.clock_sync_synchronized, h.clock_sync_max_error_us, h.clock_sync_est_error_us);
  /* Unsynchronized: the bound generators refuse within the monitor's second; the free one goes on. */
  set_sync("5 64 16000000 16000000");
  took = until_result(bound, POLYFLAKE_RESULT_CLOCK_UNSYNCHRONIZED);
  CHECK(took >= 0, "never refused while the kernel says unsynchronized");
  CHECK(strstr(last_message(), "not synchronized") != NULL, "message: %s", last_message());
  printf("SYNC unsynchronized: refused after %.0f ms: %s\n", took, last_message());
  CHECK_RESULT(polyflake_next_uuid7(u, uuid), POLYFLAKE_RESULT_CLOCK_UNSYNCHRONIZED);
  CHECK_RESULT(polyflake_next_id(free_g, &id), POLYFLAKE_RESULT_OK);
  polyflake_health(bound, &h);
  CHECK(!h.ok && h.status == POLYFLAKE_HEALTH_STATUS_CLOCK_UNSYNCHRONIZED &&
            h.clock_sync_state == POLYFLAKE_CLOCK_SYNC_STATE_UNSYNCHRONIZED &&
            !h.clock_sync_synchronized && h.clock_sync_max_error_us == 16000000,
        "unsynchronized health: %s %s", polyflake_health_status_name(h.status),
        polyflake_clock_sync_state_name(h.clock_sync_state));
  /* Synchronized again: it issues again. */
  set_sync("0 0 5000 1000");
  took = until_result(bound, POLYFLAKE_RESULT_OK);
  CHECK(took >= 0, "never issued again once synchronized");
  printf("SYNC synchronized again: issuing after %.0f ms\n", took);
  /* Synchronized, but 80 ms of maximum error over a 50 ms bound. */
  set_sync("0 0 80000 1000");
  took = until_result(bound, POLYFLAKE_RESULT_CLOCK_UNSYNCHRONIZED);
  CHECK(took >= 0 && strstr(last_message(), "over max_clock_error_ms = 50") != NULL,
        "over the bound: %s", last_message());
  printf("SYNC 80 ms of error over a 50 ms bound: refused after %.0f ms: %s\n", took, last_message());
  /* A leap second due: said in health; the clock is synchronized, so it issues. */
  set_sync("1 0 5000 1000");
  took = until_result(bound, POLYFLAKE_RESULT_OK);
  polyflake_health(bound, &h);
  CHECK(took >= 0 && h.ok && h.clock_sync_state == POLYFLAKE_CLOCK_SYNC_STATE_INSERT_LEAP,
        "a leap due: %s", polyflake_clock_sync_state_name(h.clock_sync_state));
  polyflake_generator_free(bound);
  polyflake_generator_free(free_g);
  polyflake_uuid7_generator_free(u);
  printf("SYNC %d checks, %d failures\n", checks, failures);
  return failures;
}

static void the_kernels_word_refuses_and_releases_a_bound_generator(void) {
  char dir[] = "/tmp/polyflake-c-sync-XXXXXX", file[4200], line[4096];
  polyflake_config cfg;
  polyflake_generator *g = NULL;
  polyflake_health_snapshot h;
  polyflake_clock *manual = NULL;
  uint64_t id;
  vars_t v;
  kid_t k;
  int status;
  /* This host's own kernel, as it is (no stand-in). */
  polyflake_config_init(&cfg);
  cfg.node_id = 972;
  cfg.restart_guard = POLYFLAKE_RESTART_GUARD_OFF;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
  polyflake_health(g, &h);
  printf("clock sync: this host's kernel says %s (synchronized %d, max error %" PRId64
         " us, est %" PRId64 " us)\n",
         polyflake_clock_sync_state_name(h.clock_sync_state), h.clock_sync_synchronized,
         h.clock_sync_max_error_us, h.clock_sync_est_error_us);
  CHECK(h.ok, "no bound, no refusal: %s", h.reason);
  polyflake_generator_free(g);
  cfg.has_max_clock_error = 1;
  cfg.max_clock_error_ms = 16000;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
  if (h.clock_sync_state == POLYFLAKE_CLOCK_SYNC_STATE_UNSYNCHRONIZED)
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_CLOCK_UNSYNCHRONIZED);
  else if (h.clock_sync_synchronized && h.clock_sync_max_error_us < 16000000)
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
  polyflake_generator_free(g);
  /* Out of range, and with a test clock: refused, echoing the value. */
  cfg.max_clock_error_ms = 0;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "max_clock_error_ms") != NULL, "0: %s", last_message());
  cfg.max_clock_error_ms = 16001;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "16001") != NULL, "16001: %s", last_message());
  cfg.max_clock_error_ms = 100;
  polyflake_manual_clock_new(1800000000000, &manual);
  CHECK_RESULT(polyflake_generator_new(&cfg, manual, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  polyflake_clock_free(manual);
  /* Under the stand-in, moved under a live process. */
  make_dir(dir);
  snprintf(file, sizeof file, "%s/state", dir);
  v.n = 0;
  v.list[0] = NULL;
  var(&v, CHILD, "sync");
  var(&v, "PF_FAKE_ADJTIMEX", "%s", file);
  k = spawn(v.list, NULL, shim);
  while (fgets(line, sizeof line, k.out))
    if (strncmp(line, "SYNC", 4) == 0 || strncmp(line, "FAIL", 4) == 0) printf("clock sync: %s", line);
  status = kid_wait(&k);
  CHECK(status == 0, "the child under the stand-in: exit %d", status);
  remove_dir_of(dir);
}

int main(int argc, char **argv) {
  const char *child = getenv(CHILD);
  if (child && strcmp(child, "mint") == 0) return mint_child();
  if (child && strcmp(child, "lease") == 0) return lease_child();
  if (child && strcmp(child, "build") == 0) return build_child();
  if (child && strcmp(child, "sync") == 0) return sync_child();
  if (argc != 2 || !realpath(argv[0], self)) {
    fprintf(stderr, "usage: %s FAKE_ADJTIMEX.so (the holders are this program again)\n", argv[0]);
    return 2;
  }
  shim = argv[1];
  setvbuf(stdout, NULL, _IOLBF, 0);
  signal(SIGALRM, on_alarm);
  alarm(600);
  atexit(kill_live);
  printf("polyflake %s (C, a fixed node id's restart guard and the kernel's clock)\n",
         polyflake_version());
  a_handover_between_processes_repeats_nothing();
  a_restart_with_the_clock_stepped_back_waits_and_repeats_nothing();
  a_monotonic_holder_ahead_hands_its_lead_on();
  a_lease_and_a_static_id_share_one_claim();
  a_user_clock_is_exempt_from_the_host_claim();
  host_scopes_keep_holders_apart();
  the_state_directory_keeps_the_mark_or_says_why_not();
  the_kernels_word_refuses_and_releases_a_bound_generator();
  printf("%zu IDs checked across processes, %zu duplicates\n", ids_checked, dups_found);
  printf("%d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
