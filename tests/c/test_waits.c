/*
 * Waits that a caller can bound and cut, through the C ABI; static node ids held host-wide; and
 * refusals that echo what was sent.
 *
 * - a strict batch of 20,000 IDs on layout 41/21/1 (2 IDs per ms: about 10 s of waiting) with a
 *   100 ms deadline (polyflake_next_ids_within) fails with POLYFLAKE_RESULT_INTERRUPTED after
 *   100 ms and within 100 ms + a stated margin, its buffer untouched; the same for a UUIDv7 and a
 *   ULID generator waiting out a 30 s rewind on a test clock;
 * - two threads blocked in long calls on one generator are both released by
 *   polyflake_generator_interrupt from a third (and the UUIDv7 and ULID cancel calls), and a call
 *   begun after the interrupt is not cut;
 * - a second process (this program again, exec'd) asking for a static node id this one holds is
 *   refused with POLYFLAKE_RESULT_NODE_ID_IN_USE naming this process's pid; a forked child is
 *   refused its live parent's id (and its inherited generator says USED_AFTER_FORK); a holder
 *   killed with SIGKILL releases its id without cleanup;
 * - the refusals of out-of-range values echo the caller's exact value.
 *
 * Usage: test_waits              (every test; child processes are this program again)
 *        test_waits claim NODE   (a child: try to take NODE, print the result and the message)
 *        test_waits hold NODE    (a child: take NODE, print "held", wait for stdin to close)
 * Built twice by .build/mk/c.mk, against libpolyflake.so and libpolyflake.a, and run under valgrind.
 */
#include "polyflake.h"
#include "check.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The margin past a deadline that a loaded 2-core machine may add (one 20 ms slice of the
 * core's wait, then scheduling); multiplied by `slack` under valgrind. */
#define MARGIN_MS 150.0
static double slack = 1.0;

/* A static node id no other test of this suite uses (POLYFLAKE_HOST_SCOPE keeps the other
 * suites apart). */
#define HELD_NODE 901
#define KILLED_NODE 902

static void die(const char *what, const char *detail) {
  fprintf(stderr, "FATAL: %s: %s (%s)\n", what, detail, strerror(errno));
  exit(2);
}

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A strict generator on layout 41/21/1: a batch of n waits about n / 2 ms. */
static polyflake_generator *slow_generator(int64_t node) {
  polyflake_config cfg;
  polyflake_generator *g = NULL;
  polyflake_config_init(&cfg);
  cfg.layout.timestamp_bits = 41;
  cfg.layout.node_bits = 21;
  cfg.layout.sequence_bits = 1;
  cfg.node_id = node;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
  if (!g) die("generator 41/21/1", last_message());
  return g;
}

#define BATCH 20000
#define POISON UINT64_C(0xA5A5A5A5A5A5A5A5)

static int untouched(const uint64_t *buf, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (buf[i] != POISON) return 0;
  return 1;
}

static void poison(uint64_t *buf, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) buf[i] = POISON;
}

/* A 100 ms deadline on a strict batch that would wait ~10 s: three runs, each INTERRUPTED,
 * never before 100 ms, each within 100 ms + MARGIN_MS, the buffer untouched. */
static void deadline_on_a_strict_batch(void) {
  polyflake_generator *g = slow_generator(4242);
  uint64_t *buf = malloc(sizeof *buf * BATCH);
  double took[3];
  uint64_t before = 0, after = 0;
  int i;
  if (!buf) die("malloc", "batch");
  CHECK_RESULT(polyflake_next_id(g, &before), POLYFLAKE_RESULT_OK);
  for (i = 0; i < 3; i++) {
    double t0;
    polyflake_result r;
    poison(buf, BATCH);
    t0 = mono_ms();
    r = polyflake_next_ids_within(g, buf, BATCH, 100);
    took[i] = mono_ms() - t0;
    CHECK_RESULT(r, POLYFLAKE_RESULT_INTERRUPTED);
    CHECK(took[i] >= 100.0, "run %d: cut after %.1f ms, before its 100 ms deadline", i, took[i]);
    CHECK(took[i] <= 100.0 + MARGIN_MS * slack, "run %d: cut after %.1f ms (bound %.0f ms)", i,
          took[i], 100.0 + MARGIN_MS * slack);
    CHECK(untouched(buf, BATCH), "run %d: the buffer was written", i);
    CHECK(strstr(last_message(), "interrupted after waiting") != NULL, "message: %s",
          last_message());
  }
  /* The generator goes on, past everything the cut batches reserved. */
  CHECK_RESULT(polyflake_next_id(g, &after), POLYFLAKE_RESULT_OK);
  CHECK(after > before, "%" PRIu64 " after %" PRIu64, after, before);
  /* A deadline long enough: the batch completes (200 IDs, about 100 ms). */
  poison(buf, 200);
  CHECK_RESULT(polyflake_next_ids_within(g, buf, 200, 60000), POLYFLAKE_RESULT_OK);
  CHECK(buf[0] > after && buf[199] > buf[198], "the batch is in order after the cuts");
  /* Timeout 0 still issues what needs no wait (one ID of a fresh millisecond, or a wait cut). */
  {
    uint64_t one = 0;
    polyflake_result r = polyflake_next_id_within(g, &one, 0);
    CHECK(r == POLYFLAKE_RESULT_OK || r == POLYFLAKE_RESULT_INTERRUPTED, "timeout 0: %s",
          polyflake_result_name(r));
    CHECK(r != POLYFLAKE_RESULT_OK || one > buf[199], "timeout 0 issued an old ID");
  }
  qsort(took, 3, sizeof took[0], cmp_double);
  printf("deadline: strict batch of %d on 41/21/1 with timeout 100 ms: INTERRUPTED after %.1f, "
         "%.1f, %.1f ms (bound %.0f), buffer untouched\n",
         BATCH, took[0], took[1], took[2], 100.0 + MARGIN_MS * slack);
  free(buf);
  polyflake_generator_free(g);
}

/* One thread in a long call. */
typedef struct {
  const polyflake_generator *g;
  uint64_t *buf;
  polyflake_result r;
  double ended;
} blocked_t;

static void *blocked_batch(void *arg) {
  blocked_t *b = arg;
  b->r = polyflake_next_ids(b->g, b->buf, BATCH);
  b->ended = mono_ms();
  return NULL;
}

/* Two threads blocked in ~10 s batches on one generator, released by one interrupt call from
 * this thread within a slice plus MARGIN_MS; a batch begun after it is not cut. */
static void interrupt_from_another_thread(void) {
  polyflake_generator *g = slow_generator(4243);
  blocked_t b[2];
  pthread_t t[2];
  double cut, release[2];
  int i;
  for (i = 0; i < 2; i++) {
    b[i].g = g;
    b[i].buf = malloc(sizeof(uint64_t) * BATCH);
    if (!b[i].buf) die("malloc", "batch");
    poison(b[i].buf, BATCH);
    b[i].r = POLYFLAKE_RESULT_OK;
    if (pthread_create(&t[i], NULL, blocked_batch, &b[i]) != 0) die("pthread_create", "batch");
  }
  sleep_ms(300); /* both are deep in their waits */
  cut = mono_ms();
  CHECK_RESULT(polyflake_generator_interrupt(g), POLYFLAKE_RESULT_OK);
  for (i = 0; i < 2; i++) {
    pthread_join(t[i], NULL);
    release[i] = b[i].ended - cut;
    CHECK_RESULT(b[i].r, POLYFLAKE_RESULT_INTERRUPTED);
    CHECK(release[i] <= 20.0 + MARGIN_MS * slack, "thread %d released %.1f ms after the interrupt",
          i, release[i]);
    CHECK(untouched(b[i].buf, BATCH), "thread %d: the buffer was written", i);
  }
  /* A later call is not affected by the earlier interrupt. */
  {
    uint64_t small[100];
    CHECK_RESULT(polyflake_next_ids(g, small, 100), POLYFLAKE_RESULT_OK);
  }
  /* Interrupting a closed generator, or one with nothing waiting, is fine; NULL is refused. */
  CHECK_RESULT(polyflake_generator_interrupt(g), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_generator_close(g), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_generator_interrupt(g), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_generator_interrupt(NULL), POLYFLAKE_RESULT_NULL_PARAMETER);
  printf("interrupt: two threads blocked in strict batches of %d released %.1f and %.1f ms after "
         "polyflake_generator_interrupt (bound %.0f), buffers untouched\n",
         BATCH, release[0], release[1], 20.0 + MARGIN_MS * slack);
  free(b[0].buf);
  free(b[1].buf);
  polyflake_generator_free(g);
}

/* UUIDv7 and ULID: a 30 s rewind on a test clock with a 60 s wait budget makes the next call
 * wait; a deadline and the cancel call each cut it. */
typedef struct {
  const void *g;
  int ulid;
  uint8_t out[16];
  polyflake_result r;
  double ended;
} blocked128_t;

static void *blocked_one(void *arg) {
  blocked128_t *b = arg;
  b->r = b->ulid ? polyflake_next_ulid(b->g, b->out) : polyflake_next_uuid7(b->g, b->out);
  b->ended = mono_ms();
  return NULL;
}

static void timeid_waits(int ulid) {
  const char *what = ulid ? "ULID" : "UUIDv7";
  polyflake_timeid_config cfg;
  polyflake_clock *clock = NULL;
  polyflake_uuid7_generator *u = NULL;
  polyflake_ulid_generator *l = NULL;
  const void *g;
  uint8_t id[16], batch[16 * 4], zero[16 * 4] = {0};
  double t0, took, cut;
  blocked128_t b;
  pthread_t t;
  polyflake_timeid_config_init(&cfg);
  cfg.max_wait_ms = 60000.0;
  CHECK_RESULT(polyflake_manual_clock_new(1735689600000, &clock), POLYFLAKE_RESULT_OK);
  if (ulid) CHECK_RESULT(polyflake_ulid_generator_new(&cfg, clock, &l), POLYFLAKE_RESULT_OK);
  else CHECK_RESULT(polyflake_uuid7_generator_new(&cfg, clock, &u), POLYFLAKE_RESULT_OK);
  g = ulid ? (const void *)l : (const void *)u;
  if (!g) die("timeid generator", last_message());
  CHECK_RESULT(ulid ? polyflake_next_ulid(l, id) : polyflake_next_uuid7(u, id), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(polyflake_manual_clock_advance(clock, -30000), POLYFLAKE_RESULT_OK);
  /* A deadline on one ID. */
  memset(id, 0, sizeof id);
  t0 = mono_ms();
  CHECK_RESULT(ulid ? polyflake_next_ulid_within(l, id, 100) : polyflake_next_uuid7_within(u, id, 100),
               POLYFLAKE_RESULT_INTERRUPTED);
  took = mono_ms() - t0;
  CHECK(took >= 100.0 && took <= 100.0 + MARGIN_MS * slack, "%s: cut after %.1f ms", what, took);
  CHECK(memcmp(id, zero, sizeof id) == 0, "%s: the ID was written", what);
  /* A deadline on a batch. */
  memset(batch, 0, sizeof batch);
  CHECK_RESULT(ulid ? polyflake_next_ulids_within(l, batch, 4, 50)
                    : polyflake_next_uuid7s_within(u, batch, 4, 50),
               POLYFLAKE_RESULT_INTERRUPTED);
  CHECK(memcmp(batch, zero, sizeof batch) == 0, "%s: the batch was written", what);
  /* The cancel call from another thread. */
  b.g = g;
  b.ulid = ulid;
  memset(b.out, 0, sizeof b.out);
  b.r = POLYFLAKE_RESULT_OK;
  if (pthread_create(&t, NULL, blocked_one, &b) != 0) die("pthread_create", what);
  sleep_ms(200);
  cut = mono_ms();
  CHECK_RESULT(ulid ? polyflake_ulid_generator_interrupt(l) : polyflake_uuid7_generator_interrupt(u),
               POLYFLAKE_RESULT_OK);
  pthread_join(t, NULL);
  CHECK_RESULT(b.r, POLYFLAKE_RESULT_INTERRUPTED);
  CHECK(b.ended - cut <= 20.0 + MARGIN_MS * slack, "%s: released %.1f ms after the interrupt",
        what, b.ended - cut);
  CHECK(memcmp(b.out, zero, 16) == 0, "%s: the cut call wrote", what);
  /* The clock catches up: issuing goes on. */
  CHECK_RESULT(polyflake_manual_clock_advance(clock, 30001), POLYFLAKE_RESULT_OK);
  CHECK_RESULT(ulid ? polyflake_next_ulids_within(l, batch, 4, 0) : polyflake_next_uuid7s_within(u, batch, 4, 0),
               POLYFLAKE_RESULT_OK);
  CHECK_RESULT(ulid ? polyflake_ulid_generator_interrupt(NULL) : polyflake_uuid7_generator_interrupt(NULL),
               POLYFLAKE_RESULT_NULL_PARAMETER);
  printf("%s: a 30 s rewind wait cut by a 100 ms deadline after %.1f ms and by the cancel call "
         "%.1f ms after it\n",
         what, took, b.ended - cut);
  polyflake_uuid7_generator_free(u);
  polyflake_ulid_generator_free(l);
  polyflake_clock_free(clock);
}

/* --- Static node ids held host-wide --- */

static polyflake_result take(int64_t node, polyflake_generator **out) {
  polyflake_config cfg;
  polyflake_config_init(&cfg);
  cfg.node_id = node;
  *out = NULL;
  return polyflake_generator_new(&cfg, NULL, out);
}

/* Child: try to take `node`; print "RESULT_NAME message" on one line. */
static int claim_child(int64_t node) {
  polyflake_generator *g = NULL;
  polyflake_result r = take(node, &g);
  printf("%s %s\n", polyflake_result_name(r), r == POLYFLAKE_RESULT_OK ? "" : last_message());
  polyflake_generator_free(g);
  return 0;
}

/* Child: take `node`, say "held", then hold it until stdin closes (or it is killed). */
static int hold_child(int64_t node) {
  polyflake_generator *g = NULL;
  char c;
  polyflake_result r = take(node, &g);
  printf("%s\n", r == POLYFLAKE_RESULT_OK ? "held" : polyflake_result_name(r));
  fflush(stdout);
  while (read(0, &c, 1) > 0) {
  }
  polyflake_generator_free(g);
  return 0;
}

/* Run `self claim NODE` and read its one line into `line`. */
static void claim_in_another_process(const char *self, int64_t node, char *line, size_t len) {
  char cmd[4200];
  FILE *p;
  snprintf(cmd, sizeof cmd, "exec '%s' claim %" PRId64, self, node);
  p = popen(cmd, "r");
  if (!p) die("popen", cmd);
  if (!fgets(line, (int)len, p)) line[0] = 0;
  pclose(p);
}

static void node_id_held_host_wide(const char *self) {
  polyflake_generator *g = NULL, *again = NULL;
  char line[1200], pid_text[64];
  pid_t pid;
  int fds[2], status = 0;
  snprintf(pid_text, sizeof pid_text, "process %ld ", (long)getpid());
  CHECK_RESULT(take(HELD_NODE, &g), POLYFLAKE_RESULT_OK);
  if (!g) die("static node", last_message());
  /* In this process: refused, no pid. */
  CHECK_RESULT(take(HELD_NODE, &again), POLYFLAKE_RESULT_NODE_ID_IN_USE);
  CHECK(strstr(last_message(), "in this process") != NULL, "message: %s", last_message());
  /* Another process: refused, naming this one. */
  claim_in_another_process(self, HELD_NODE, line, sizeof line);
  CHECK(strncmp(line, "NODE_ID_IN_USE ", 15) == 0, "second process: %s", line);
  CHECK(strstr(line, pid_text) != NULL, "second process's message names %s: %s", pid_text, line);
  CHECK(strstr(line, "lease") != NULL, "the message says what to do: %s", line);
  printf("host-wide: a second process asking for node %d: %s", HELD_NODE, line);
  /* A forked child: refused its live parent's id; its inherited generator is used after fork. */
  if (pipe(fds) != 0) die("pipe", "fork");
  pid = fork();
  if (pid < 0) die("fork", "static node");
  if (pid == 0) {
    polyflake_generator *mine = NULL;
    uint64_t id;
    char out[1200];
    polyflake_result r = take(HELD_NODE, &mine), inherited;
    int n = snprintf(out, sizeof out, "%s %s|", polyflake_result_name(r),
                     r == POLYFLAKE_RESULT_OK ? "" : last_message());
    inherited = polyflake_next_id(g, &id);
    n += snprintf(out + n, sizeof out - (size_t)n, "%s", polyflake_result_name(inherited));
    if (write(fds[1], out, (size_t)n) != n) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  {
    ssize_t n = read(fds[0], line, sizeof line - 1);
    line[n > 0 ? n : 0] = 0;
  }
  close(fds[0]);
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forked child status %d", status);
  CHECK(strncmp(line, "NODE_ID_IN_USE ", 15) == 0, "forked child: %s", line);
  CHECK(strstr(line, pid_text) != NULL, "forked child's message names its parent: %s", line);
  CHECK(strstr(line, "|USED_AFTER_FORK") != NULL, "the inherited generator: %s", line);
  printf("host-wide: a forked child asking for its parent's node %d: refused, naming the parent; "
         "its inherited generator: USED_AFTER_FORK\n",
         HELD_NODE);
  /* Closed: free again, for another process. */
  CHECK_RESULT(polyflake_generator_close(g), POLYFLAKE_RESULT_OK);
  claim_in_another_process(self, HELD_NODE, line, sizeof line);
  CHECK(strncmp(line, "OK", 2) == 0, "after close, a second process: %s", line);
  polyflake_generator_free(g);
  polyflake_generator_free(again);
}

/* A holder killed with SIGKILL releases its id: nothing to clean up. */
static void a_killed_holder_releases(const char *self) {
  int to_child[2], from_child[2];
  pid_t pid;
  char line[1200] = "", pid_text[64];
  polyflake_generator *g = NULL;
  FILE *f;
  int status;
  if (pipe(to_child) != 0 || pipe(from_child) != 0) die("pipe", "holder");
  pid = fork();
  if (pid < 0) die("fork", "holder");
  if (pid == 0) {
    char node[32];
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    close(to_child[1]);
    close(from_child[0]);
    snprintf(node, sizeof node, "%d", KILLED_NODE);
    execl(self, self, "hold", node, (char *)NULL);
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  f = fdopen(from_child[0], "r");
  if (!f || !fgets(line, sizeof line, f)) die("holder", "no line");
  CHECK(strncmp(line, "held", 4) == 0, "holder: %s", line);
  snprintf(pid_text, sizeof pid_text, "process %ld ", (long)pid);
  CHECK_RESULT(take(KILLED_NODE, &g), POLYFLAKE_RESULT_NODE_ID_IN_USE);
  CHECK(strstr(last_message(), pid_text) != NULL, "names the holder %s: %s", pid_text,
        last_message());
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  fclose(f);
  close(to_child[1]);
  CHECK_RESULT(take(KILLED_NODE, &g), POLYFLAKE_RESULT_OK);
  printf("host-wide: node %d held by process %ld was free once it was killed (SIGKILL)\n",
         KILLED_NODE, (long)pid);
  polyflake_generator_free(g);
}

/* --- Refusals echo what was sent --- */

static void echoes(void) {
  polyflake_config cfg;
  polyflake_generator *g = NULL;
  uint64_t id;
  int i;
  struct {
    int64_t node, epoch;
    const char *want;
  } cases[] = {
      {INT64_MAX, POLYFLAKE_DEFAULT_EPOCH_MS, "9223372036854775807"},
      {INT64_MIN, POLYFLAKE_DEFAULT_EPOCH_MS, "-9223372036854775808"},
      {(int64_t)1 << 40, POLYFLAKE_DEFAULT_EPOCH_MS, "1099511627776"},
      {0, INT64_MAX, "9223372036854775807"},
      {0, INT64_MIN, "-9223372036854775808"},
  };
  for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
    polyflake_config_init(&cfg);
    cfg.node_id = cases[i].node;
    cfg.epoch_ms = cases[i].epoch;
    g = NULL;
    CHECK(polyflake_generator_new(&cfg, NULL, &g) != POLYFLAKE_RESULT_OK && g == NULL, "case %d", i);
    CHECK(strstr(last_message(), cases[i].want) != NULL, "case %d echoes %s: %s", i, cases[i].want,
          last_message());
  }
  polyflake_config_init(&cfg);
  cfg.mode = UINT32_MAX;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "4294967295") != NULL, "mode: %s", last_message());
  polyflake_config_init(&cfg);
  cfg.max_lead_ms = INT64_MIN;
  cfg.has_max_lead = 1;
  cfg.mode = POLYFLAKE_MODE_MONOTONIC;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "-9223372036854775808") != NULL, "max_lead_ms: %s", last_message());
  polyflake_config_init(&cfg);
  cfg.node_id = 903;
  CHECK_RESULT(polyflake_generator_new(&cfg, NULL, &g), POLYFLAKE_RESULT_OK);
  if (!g) die("node 903", last_message());
  CHECK_RESULT(polyflake_next_ids(g, &id, SIZE_MAX), POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "18446744073709551615") != NULL, "count: %s", last_message());
  CHECK_RESULT(polyflake_next_ids_within(g, &id, (size_t)POLYFLAKE_MAX_BATCH + 1, 10),
               POLYFLAKE_RESULT_INVALID_ARGUMENT);
  CHECK(strstr(last_message(), "16777217") != NULL, "count: %s", last_message());
  polyflake_generator_free(g);
  printf("echo: node ids, epochs, a mode, a lead and batch counts out of range "
         "are echoed as sent\n");
}

int main(int argc, char **argv) {
  const char *self = argv[0];
  if (argc == 3 && strcmp(argv[1], "claim") == 0) return claim_child(atoll(argv[2]));
  if (argc == 3 && strcmp(argv[1], "hold") == 0) return hold_child(atoll(argv[2]));
  if (argc != 1 || !strchr(self, '/')) {
    fprintf(stderr, "usage: PATH/%s (the children are this program again)\n", argv[0]);
    return 2;
  }
  if (getenv("POLYFLAKE_UNDER_VALGRIND")) slack = 20.0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("polyflake %s (C, waits and host-wide node ids)\n", polyflake_version());
  deadline_on_a_strict_batch();
  interrupt_from_another_thread();
  timeid_waits(0);
  timeid_waits(1);
  node_id_held_host_wide(self);
  a_killed_holder_releases(self);
  echoes();
  printf("%d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
