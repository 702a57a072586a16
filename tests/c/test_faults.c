/*
 * The quiet faults of lease stores through the C ABI, each reproduced as an adversarial user
 * meets it: a slot file unlinked and a lease directory removed under a live holder while a second
 * process leases (two processes; zero duplicates; the first ends LEASE_LOST); a forked child that
 * closes its inherited descriptors, leases again and then uses the inherited generator; close()
 * with a live forked child, then a re-lease; the record table (records that do not parse give a
 * guard of a full reserve, never an error for the directory); a slot poisoned by a mark a year
 * ahead; a second ID space refused by one store; a deleted slot file healed (common.heal: a new
 * slot, no ID twice, the counters going on; twice, wait_ready waiting through the second) and,
 * by default, lost for good.
 *
 * Usage: test_faults            (runs every test; child processes are this program again)
 *        test_faults stream DIR OUT MS   (a child: see stream_child)
 * Built twice by .build/mk/c.mk, against libpolyflake.so and libpolyflake.a, and run under valgrind.
 */
#define _DEFAULT_SOURCE /* flock() */
#include "polyflake.h"
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double slack = 1.0;

static void die(const char *what, const char *detail) {
  fprintf(stderr, "FATAL: %s: %s (%s)\n", what, detail, strerror(errno));
  exit(2);
}

/* Unix milliseconds (the clock the lease's records use). */
static int64_t wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void make_dir(char *tmpl) {
  if (!mkdtemp(tmpl)) die("mkdtemp", tmpl);
}

/* A file-lease generator on the system clock (or NULL, with the result in *r). */
static polyflake_generator *lease(const char *dir, uint32_t slots, uint64_t reserve_ms,
                                  const polyflake_config *cfg, polyflake_result *r) {
  polyflake_config defaults;
  polyflake_file_lease_options o;
  polyflake_generator *g = NULL;
  polyflake_config_init(&defaults);
  polyflake_file_lease_options_init(&o);
  o.dir = dir;
  o.common.slots = slots;
  o.common.reserve_ms = reserve_ms;
  *r = polyflake_generator_new_file_lease(cfg ? cfg : &defaults, &o, NULL, &g);
  return g;
}

/* A lease that must be taken and waited ready. */
static polyflake_generator *ready_lease(const char *dir, uint32_t slots, uint64_t reserve_ms) {
  polyflake_result r;
  polyflake_generator *g = lease(dir, slots, reserve_ms, NULL, &r);
  if (!g) {
    fprintf(stderr, "FATAL: lease in %s: %s: %s\n", dir, polyflake_result_name(r), last_message());
    exit(2);
  }
  r = polyflake_wait_ready(g, (uint64_t)(10000 * slack));
  if (r != POLYFLAKE_RESULT_OK) {
    fprintf(stderr, "FATAL: wait_ready: %s: %s\n", polyflake_result_name(r), last_message());
    exit(2);
  }
  return g;
}

/* True when someone holds an exclusive lock on `path` (a shared lock is refused). */
static int locked(const char *path) {
  int fd = open(path, O_RDONLY), held;
  if (fd < 0) return 0;
  held = flock(fd, LOCK_SH | LOCK_NB) != 0;
  close(fd);
  return held;
}

/* Sort `ids` and count the values that occur more than once. */
static size_t duplicates(ids_t *ids) {
  size_t i, dups = 0;
  qsort(ids->v, ids->n, sizeof *ids->v, cmp_u64);
  for (i = 1; i < ids->n; i++) dups += ids->v[i] == ids->v[i - 1];
  return dups;
}

/* The IDs a stream child wrote (raw native-endian uint64). */
static void read_ids(const char *path, ids_t *into) {
  FILE *f = fopen(path, "rb");
  uint64_t buf[4096];
  size_t n;
  if (!f) die("cannot open", path);
  while ((n = fread(buf, sizeof buf[0], 4096, f)) > 0) {
    size_t i;
    for (i = 0; i < n; i++) ids_push(into, buf[i]);
  }
  fclose(f);
}

/* ------------------------------------------------------------------------------------------ */
/* A child process: take a slot (slots = 1, reserve 500 ms, system clock), wait out its guard,  */
/* print "NODE n", then write batches of 1,000 IDs to OUT for MS ms or until refused; then      */
/* print "END <result> <health status>".                                                       */

static int stream_child(const char *dir, const char *out, long ms) {
  polyflake_result r;
  polyflake_generator *g = ready_lease(dir, 1, 500);
  polyflake_health_snapshot h;
  uint64_t buf[1000];
  FILE *f = fopen(out, "wb");
  struct timespec start, now;
  if (!f) die("cannot write", out);
  printf("NODE %" PRId64 "\n", node_of(g));
  fflush(stdout);
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >= ms) {
      r = POLYFLAKE_RESULT_OK;
      break;
    }
    if ((r = polyflake_next_ids(g, buf, 1000)) != POLYFLAKE_RESULT_OK) break;
    if (fwrite(buf, sizeof buf[0], 1000, f) != 1000) die("cannot write", out);
  }
  fclose(f);
  polyflake_health(g, &h);
  printf("END %s %s\n", polyflake_result_name(r), polyflake_health_status_name(h.status));
  fflush(stdout);
  polyflake_generator_free(g);
  return 0;
}

/* Start this program as a stream child; its stdout is returned for reading lines. Each child
 * claims its node id in a host scope of its own: these tests are of the lease directory's rules,
 * and the host-wide claim would keep a second holder of slot 0 out while the first lives. */
static FILE *spawn_stream(const char *self, const char *dir, const char *out, long ms) {
  static int children = 0;
  const char *scope = getenv("POLYFLAKE_HOST_SCOPE");
  char cmd[8192];
  FILE *p;
  snprintf(cmd, sizeof cmd, "POLYFLAKE_HOST_SCOPE='%.30s-s%d' exec '%s' stream '%s' '%s' %ld",
           scope ? scope : "c-faults", children++, self, dir, out, ms);
  fflush(NULL);
  p = popen(cmd, "r");
  if (!p) die("popen", cmd);
  return p;
}

static void read_line(FILE *p, char *line, size_t len, const char *who) {
  if (!fgets(line, (int)len, p)) {
    line[0] = 0;
    CHECK(0, "%s: no line from the child", who);
  }
  line[strcspn(line, "\n")] = 0;
}

/* Two processes on one slot, the first one's slot file taken away by `remove_all` (1: the whole
 * directory; 0: the slot file) while it issues at full speed: the second takes the slot afresh. */
static void holder_and_successor(const char *self, int remove_all) {
  char dir[] = "/tmp/polyflake-c-deleted-XXXXXX", store[4096], a_out[4200], b_out[4200];
  char line_a[256], line_b[256], a_end[256], b_end[256], slot[4200];
  ids_t a = {NULL, 0, 0}, b = {NULL, 0, 0}, all = {NULL, 0, 0};
  size_t i;
  uint64_t a_max = 0, b_min = UINT64_MAX;
  FILE *pa, *pb;
  make_dir(dir);
  snprintf(store, sizeof store, "%s/leases", dir);
  snprintf(a_out, sizeof a_out, "%s/a.bin", dir);
  snprintf(b_out, sizeof b_out, "%s/b.bin", dir);
  snprintf(slot, sizeof slot, "%s/slot-0000", store);
  pa = spawn_stream(self, store, a_out, 4000);
  read_line(pa, line_a, sizeof line_a, "first holder");
  CHECK(strcmp(line_a, "NODE 0") == 0, "first holder: %s", line_a);
  sleep_ms(300);
  if (remove_all) remove_tree(store); /* an operator's rm -rf, a cleaner */
  else CHECK(unlink(slot) == 0, "unlink %s", slot);
  pb = spawn_stream(self, store, b_out, 1500);
  read_line(pb, line_b, sizeof line_b, "successor");
  CHECK(strcmp(line_b, "NODE 0") == 0, "the successor took slot 0: %s", line_b);
  read_line(pb, b_end, sizeof b_end, "successor");
  read_line(pa, a_end, sizeof a_end, "first holder");
  CHECK(pclose(pa) == 0 && pclose(pb) == 0, "children exit 0");
  read_ids(a_out, &a);
  read_ids(b_out, &b);
  CHECK(a.n >= 10000 && b.n >= 10000, "both issued: %zu and %zu", a.n, b.n);
  for (i = 0; i < a.n; i++) {
    ids_push(&all, a.v[i]);
    if (a.v[i] > a_max) a_max = a.v[i];
  }
  for (i = 0; i < b.n; i++) {
    ids_push(&all, b.v[i]);
    if (b.v[i] < b_min) b_min = b.v[i];
  }
  CHECK(duplicates(&all) == 0, "IDs issued by both holders of slot 0");
  CHECK(strcmp(a_end, "END LEASE_LOST lease_lost") == 0, "the first holder stopped: %s", a_end);
  CHECK(strcmp(b_end, "END OK ok") == 0, "the successor: %s", b_end);
  CHECK(b_min > a_max, "the successor's first ID is past everything the first issued");
  printf("%s under a live holder: %zu and %zu IDs, 0 shared, the first ends LEASE_LOST\n",
         remove_all ? "lease directory removed" : "slot file unlinked", a.n, b.n);
  free(a.v);
  free(b.v);
  free(all.v);
  unlink(a_out);
  unlink(b_out);
  remove_tree(store);
  rmdir(dir);
}

/* ------------------------------------------------------------------------------------------ */
/* Fork                                                                                       */

/* Write all of `text` to `fd`. */
static void write_all(int fd, const char *text, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, text, n);
    if (w <= 0) _exit(3);
    text += w;
    n -= (size_t)w;
  }
}

/* A child that closes every inherited descriptor (python-daemon, Celery's detach,
 * closerange()), makes its own lease generator G2 (whose slot file may get the number the
 * parent's slot file had), opens a log file, then uses the inherited generator G: G takes a
 * fresh slot of its own and must not close or unlock anything of G2's, nor the log. */
static void child_closes_inherited_descriptors(void) {
  char dir[] = "/tmp/polyflake-c-closerange-XXXXXX", log_path[4200], parent_slot[4200];
  polyflake_generator *g;
  int fds[2], status = 0;
  /* The highest number the child may use (under valgrind, its reduced limit), at most 1023. */
  long i, pipe_fd = (sysconf(_SC_OPEN_MAX) < 1024 ? sysconf(_SC_OPEN_MAX) : 1024) - 1;
  pid_t pid;
  ids_t all = {NULL, 0, 0};
  uint64_t id;
  int64_t parent_node, g_node = -1, g2_node = -1;
  FILE *in;
  char text[64];
  make_dir(dir);
  snprintf(log_path, sizeof log_path, "%s/child.log", dir);
  g = ready_lease(dir, 4, 200);
  parent_node = node_of(g);
  snprintf(parent_slot, sizeof parent_slot, "%s/slot-%04" PRId64, dir, parent_node);
  for (i = 0; i < 1000; i++) {
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
    ids_push(&all, id);
  }
  if (pipe(fds) != 0) die("pipe", "closerange");
  fflush(NULL);
  pid = fork();
  if (pid < 0) die("fork", "closerange");
  if (pid == 0) {
    polyflake_generator *g2;
    polyflake_health_snapshot h2;
    char g2_slot[4200], out[64];
    uint64_t renewals;
    FILE *log;
    int ok = 1, waited;
    /* The pipe to the parent moves above every number the child closes. */
    close(fds[0]);
    if (dup2(fds[1], (int)pipe_fd) < 0) _exit(4);
    for (i = 3; i < pipe_fd; i++) close((int)i);
    alarm(60); /* a hang fails the test instead of holding it */
    g2 = ready_lease(dir, 4, 200);
    snprintf(g2_slot, sizeof g2_slot, "%s/slot-%04" PRId64, dir, node_of(g2));
    log = fopen(log_path, "w");
    if (!log) _exit(5);
    /* The inherited generator takes its own fresh slot now. */
    ok &= polyflake_wait_ready(g, (uint64_t)(10000 * slack)) == POLYFLAKE_RESULT_OK;
    snprintf(out, sizeof out, "%" PRId64 " %" PRId64 "\n", node_of(g), node_of(g2));
    write_all((int)pipe_fd, out, strlen(out));
    for (i = 0; i < 2000; i++) {
      ok &= polyflake_next_id(i < 1000 ? g : g2, &id) == POLYFLAKE_RESULT_OK;
      snprintf(out, sizeof out, "%" PRIu64 "\n", id);
      write_all((int)pipe_fd, out, strlen(out));
    }
    /* G2's lock and renewals are untouched: its record keeps moving and stays its own. */
    ok &= locked(g2_slot);
    polyflake_health(g2, &h2);
    renewals = h2.lease_renewals;
    for (waited = 0; waited < 5000 * slack && h2.lease_renewals <= renewals + 2; waited += 10) {
      sleep_ms(10);
      polyflake_health(g2, &h2);
    }
    ok &= h2.lease_renewals > renewals + 2 && h2.ok && !h2.lease_lost;
    /* Closing the inherited generator closes nothing of the child's. */
    ok &= polyflake_generator_close(g) == POLYFLAKE_RESULT_OK;
    ok &= fputs("still open\n", log) >= 0 && fflush(log) == 0;
    ok &= locked(g2_slot);
    for (i = 0; i < 1000; i++) {
      ok &= polyflake_next_id(g2, &id) == POLYFLAKE_RESULT_OK;
      snprintf(out, sizeof out, "%" PRIu64 "\n", id);
      write_all((int)pipe_fd, out, strlen(out));
    }
    write_all((int)pipe_fd, ok ? "OK\n" : "FAILED\n", ok ? 3 : 7);
    fclose(log);
    polyflake_generator_free(g);
    polyflake_generator_free(g2);
    _exit(0);
  }
  close(fds[1]);
  for (i = 0; i < 1000; i++) {
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
    ids_push(&all, id);
  }
  in = fdopen(fds[0], "r");
  if (!in || !fgets(text, sizeof text, in) || sscanf(text, "%" SCNd64 " %" SCNd64, &g_node, &g2_node) != 2)
    CHECK(0, "no node ids from the child");
  while (in && fgets(text, sizeof text, in)) {
    if (strcmp(text, "OK\n") == 0 || strcmp(text, "FAILED\n") == 0) {
      CHECK(strcmp(text, "OK\n") == 0, "the child's own checks (locks, renewals, log) failed");
      continue;
    }
    ids_push(&all, strtoull(text, NULL, 10));
  }
  if (in) fclose(in);
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child exited %d", status);
  CHECK(parent_node != g_node && parent_node != g2_node && g_node != g2_node && g_node >= 0,
        "three holders, three slots: %" PRId64 " %" PRId64 " %" PRId64, parent_node, g_node, g2_node);
  CHECK(all.n == 5000, "%zu IDs", all.n);
  CHECK(duplicates(&all) == 0, "duplicates between the parent and the child");
  {
    FILE *log = fopen(log_path, "r");
    char got[64] = "";
    CHECK(log && fgets(got, sizeof got, log) && strcmp(got, "still open\n") == 0,
          "the child's log survived: %s", got);
    if (log) fclose(log);
  }
  {
    polyflake_health_snapshot h;
    CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
    CHECK(h.ok && locked(parent_slot), "the parent's slot is still its own: %s", h.reason);
  }
  polyflake_generator_free(g);
  free(all.v);
  remove_tree(dir);
  printf("fork: a child that closes inherited descriptors and leases again: 5000 IDs, 0 shared\n");
}

/* The parent's close() frees its slot while a forked child that never touched the generator (a
 * multiprocessing worker) lives; a new holder takes it at once. */
static void close_with_a_live_child(void) {
  char dir[] = "/tmp/polyflake-c-fork-close-XXXXXX";
  polyflake_generator *g, *again;
  polyflake_result r;
  uint64_t id;
  int status = 0, up[2];
  char byte;
  pid_t pid;
  make_dir(dir);
  g = ready_lease(dir, 1, 1000); /* R renewed every 200 ms: a loaded machine cannot starve it past R */
  CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
  fflush(NULL);
  if (pipe(up) != 0) die("pipe", "close");
  pid = fork();
  if (pid < 0) die("fork", "close");
  if (pid == 0) {
    /* Running: fork() has returned here, so the library's fork handler has closed this child's
     * copies of the slot's and the claim's descriptors. Until then (a child not yet scheduled,
     * valgrind's slow start) they still hold the slot and the node id for the parent. */
    if (write(up[1], "u", 1) != 1) _exit(3);
    sleep(30);
    _exit(0);
  }
  close(up[1]);
  if (read(up[0], &byte, 1) != 1) die("read", "the child's start");
  close(up[0]);
  CHECK_RESULT(polyflake_generator_close(g), POLYFLAKE_RESULT_OK);
  again = lease(dir, 1, 200, NULL, &r);
  CHECK(r == POLYFLAKE_RESULT_OK, "re-lease with a live child: %s: %s", polyflake_result_name(r),
        last_message());
  CHECK(again == NULL || node_of(again) == 0, "the freed slot");
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  polyflake_generator_free(again);
  polyflake_generator_free(g);
  remove_tree(dir);
  printf("fork: close() with a live child frees the slot\n");
}

/* ------------------------------------------------------------------------------------------ */
/* Records                                                                                    */

/* A slot record as polyflake's earlier version wrote it (no checksum), padded to 256 bytes:
 * complete, saying R = hwm. */
static size_t old_record(char *buf, const char *hwm) {
  size_t n = (size_t)snprintf(buf, 257, "polyflake-slot v1\nslot=0\nowner=h\nhigh_water_ms=%s\n", hwm);
  while (n < 255) buf[n++] = ' ';
  buf[n++] = '\n';
  return n;
}

static void write_slot(const char *dir, const char *name, const char *bytes, size_t n) {
  char path[4200];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "wb");
  if (!f || fwrite(bytes, 1, n, f) != n || fclose(f) != 0) die("cannot write", path);
}

/* Records that do not parse completely give a guard of a full reserve past now: never a small
 * R (a truncated "high_water_ms=17" is not R = 17), never an overflow, never an error for the
 * whole directory. */
static void record_table(void) {
  const uint64_t reserve = 800;
  char rec[300];
  size_t n;
  int c;
  for (c = 0; c < 7; c++) {
    char dir[] = "/tmp/polyflake-c-records-XXXXXX";
    const char *what;
    char bytes[300];
    size_t len;
    polyflake_result r;
    polyflake_generator *g;
    polyflake_health_snapshot h;
    uint64_t id = 42;
    int64_t before;
    make_dir(dir);
    switch (c) {
      case 0:
        what = "bad UTF-8";
        len = old_record(bytes, "17");
        bytes[20] = (char)0xff;
        break;
      case 1:
        what = "truncated high_water_ms=17";
        len = (size_t)sprintf(bytes, "polyflake-slot v1\nslot=0\nowner=h\nhigh_water_ms=17");
        break;
      case 2:
        what = "NUL bytes";
        len = 256;
        memset(bytes, 0, len);
        break;
      case 3:
        what = "duplicated key";
        len = (size_t)sprintf(bytes, "polyflake-slot v1\nslot=0\nowner=h\nhigh_water_ms=17\nhigh_water_ms=18\n");
        while (len < 255) bytes[len++] = ' ';
        bytes[len++] = '\n';
        break;
      case 4:
        what = "i64 max, truncated";
        len = (size_t)sprintf(bytes, "polyflake-slot v1\nslot=0\nowner=h\nhigh_water_ms=9223372036854775807");
        break;
      case 5:
        what = "past i64";
        len = old_record(bytes, "9223372036854775808");
        break;
      default:
        what = "empty";
        len = 0;
        break;
    }
    write_slot(dir, "slot-0000", bytes, len);
    before = wall_ms();
    g = lease(dir, 1, reserve, NULL, &r);
    CHECK(r == POLYFLAKE_RESULT_OK, "%s: %s: %s", what, polyflake_result_name(r), last_message());
    if (g) {
      CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
      CHECK(h.lease_has_guard && h.lease_guard_until_ms >= before + (int64_t)reserve &&
                h.lease_guard_until_ms <= wall_ms() + (int64_t)reserve,
            "%s: guard %" PRId64 " is not a full reserve past now (%" PRId64 ")", what,
            h.lease_guard_until_ms, before);
      CHECK(h.status == POLYFLAKE_HEALTH_STATUS_RESTART_GUARD, "%s: status %s", what,
            polyflake_health_status_name(h.status));
      CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_LEASE_NOT_READY);
      CHECK(id == 42, "out-param written on error");
      polyflake_generator_free(g);
    }
    remove_tree(dir);
  }
  /* One unreadable record never fails the whole directory: 15 other slots are free. */
  {
    char dir[] = "/tmp/polyflake-c-records-dir-XXXXXX";
    const char junk[3] = {(char)0xff, (char)0xfe, 0};
    polyflake_generator *g;
    uint64_t id;
    make_dir(dir);
    write_slot(dir, "slot-0000", junk, 3);
    g = ready_lease(dir, 16, reserve);
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
    polyflake_generator_free(g);
    remove_tree(dir);
  }
  /* A complete record whose mark lies past the layout's window: that slot alone is refused,
   * never wrapped. */
  {
    char dir[] = "/tmp/polyflake-c-records-window-XXXXXX";
    polyflake_generator *g;
    polyflake_result r;
    make_dir(dir);
    n = old_record(rec, "9223372036854775807");
    write_slot(dir, "slot-0000", rec, n);
    g = lease(dir, 1, 100, NULL, &r);
    CHECK(r == POLYFLAKE_RESULT_NO_FREE_SLOT && g == NULL, "one slot, past the window: %s",
          polyflake_result_name(r));
    g = lease(dir, 2, 100, NULL, &r);
    CHECK(r == POLYFLAKE_RESULT_OK && node_of(g) == 1, "slot 0 refused, slot 1 used: %s",
          polyflake_result_name(r));
    polyflake_generator_free(g);
    remove_tree(dir);
  }
  printf("records that do not parse: a full reserve each, never an error for the directory\n");
}

/* A mark a year ahead (left by a clock stepped ahead) poisons its slot: a free slot with a
 * short guard comes first; taken only when nothing else is free, and health says why. */
static void poisoned_slot(void) {
  char dir[] = "/tmp/polyflake-c-poisoned-XXXXXX", future[32], rec[300], scope[64];
  const char *base = getenv("POLYFLAKE_HOST_SCOPE");
  polyflake_generator *g, *other;
  polyflake_health_snapshot h;
  polyflake_config cfg;
  polyflake_result r;
  size_t n;
  make_dir(dir);
  /* A host scope of its own: the poisoned slot's R, once taken, is node 0's mark on this host
   * (in this scope), which would hold node 0 back from every later test's lease. */
  snprintf(scope, sizeof scope, "%.30s-poisoned", base ? base : "c-faults");
  polyflake_config_init(&cfg);
  cfg.host_scope = scope;
  snprintf(future, sizeof future, "%" PRId64, wall_ms() + INT64_C(31536000000));
  n = old_record(rec, future);
  write_slot(dir, "slot-0000", rec, n);
  other = lease(dir, 2, 100, &cfg, &r);
  CHECK(r == POLYFLAKE_RESULT_OK && node_of(other) == 1, "the free slot with a short guard first");
  g = lease(dir, 2, 100, &cfg, &r);
  CHECK(r == POLYFLAKE_RESULT_OK && node_of(g) == 0, "the poisoned slot, last: %s",
        polyflake_result_name(r));
  if (g) {
    CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
    CHECK(h.status == POLYFLAKE_HEALTH_STATUS_RESTART_GUARD &&
              strstr(h.lease_guard_note, "max_guard_wait_ms") != NULL &&
              strstr(h.reason, "max_guard_wait_ms") != NULL,
          "health says why: %s / %s", h.lease_guard_note, h.reason);
  }
  polyflake_generator_free(g);
  polyflake_generator_free(other);
  remove_tree(dir);
  printf("a poisoned slot: skipped while others are free, health says why when taken\n");
}

/* ------------------------------------------------------------------------------------------ */
/* Healing a lost lease (common.heal): the slot file deleted under a file lease of 2 slots and  */
/* a 500 ms reserve (renewed every 100 ms). Healing: the same handle takes a new slot behind   */
/* its guard and issues again within seconds, no ID twice across the run, ids_issued goes on.  */
/* Off (the default): lost for good, LEASE_LOST from next_id and wait_ready at once.           */

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void heal_a_deleted_slot_file(int heal) {
  char dir[] = "/tmp/polyflake-c-heal-XXXXXX", slot[256];
  polyflake_config cfg;
  polyflake_file_lease_options o;
  polyflake_generator *g = NULL;
  polyflake_health_snapshot h;
  polyflake_decoded d;
  ids_t ids = {0};
  uint64_t id = 0;
  int64_t lost;
  size_t minted_before;
  int i, after = 0, lost_refusals = 0, guard_refusals = 0, other = 0;
  double start, healed_in = -1.0;
  polyflake_result r;

  make_dir(dir);
  polyflake_config_init(&cfg);
  polyflake_file_lease_options_init(&o);
  CHECK(!o.common.heal, "heal is off by default");
  o.dir = dir;
  o.common.slots = 2;
  o.common.reserve_ms = 500;
  o.common.heal = heal != 0;
  CHECK_RESULT(polyflake_generator_new_file_lease(&cfg, &o, NULL, &g), POLYFLAKE_RESULT_OK);
  if (!g) return;
  CHECK_RESULT(polyflake_wait_ready(g, (uint64_t)(10000 * slack)), POLYFLAKE_RESULT_OK);
  for (i = 0; i < 1000; i++) {
    r = polyflake_next_id(g, &id);
    CHECK(r == POLYFLAKE_RESULT_OK, "next_id before the deletion: %s", polyflake_result_name(r));
    ids_push(&ids, id);
  }
  minted_before = ids.n;
  lost = node_of(g);
  snprintf(slot, sizeof slot, "%s/slot-%04" PRId64, dir, lost);
  CHECK(unlink(slot) == 0, "unlink %s", slot);
  start = mono_ms();

  if (heal) {
    /* Mint on through the loss and the heal until 1,000 IDs came after the last refusal. */
    while (after < 1000 && mono_ms() - start < 10000.0 * slack) {
      r = polyflake_next_id(g, &id);
      if (r == POLYFLAKE_RESULT_OK) {
        ids_push(&ids, id);
        if (lost_refusals + guard_refusals > 0) {
          if (healed_in < 0) healed_in = mono_ms() - start;
          after++;
        } else {
          sleep_ms(0);
        }
        continue;
      }
      if (r == POLYFLAKE_RESULT_LEASE_LOST) lost_refusals++;
      else if (r == POLYFLAKE_RESULT_LEASE_NOT_READY) guard_refusals++;
      else other++;
      after = 0;
      healed_in = -1.0;
      sleep_ms(1);
    }
    CHECK(after >= 1000, "issuing again within %.0f ms of the deletion (%d lost, %d guard refusals)",
          10000.0 * slack, lost_refusals, guard_refusals);
    CHECK(lost_refusals + guard_refusals > 0 && other == 0,
          "the loss was seen: %d LEASE_LOST, %d LEASE_NOT_READY, %d other", lost_refusals,
          guard_refusals, other);
    CHECK_RESULT(polyflake_wait_ready(g, (uint64_t)(5000 * slack)), POLYFLAKE_RESULT_OK);
    CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
    CHECK(h.ok && h.status == POLYFLAKE_HEALTH_STATUS_OK && !h.lease_lost &&
              h.lease_kind == POLYFLAKE_LEASE_KIND_FILE,
          "health after the heal: status %u, %s", h.status, h.reason);
    CHECK((int64_t)h.node_id == node_of(g) && (int64_t)h.lease_slot == node_of(g),
          "node id %" PRId64 ", health %u, slot %u", node_of(g), h.node_id, h.lease_slot);
    CHECK(h.ids_issued >= ids.n, "ids_issued %" PRIu64 " goes on: %zu minted", h.ids_issued, ids.n);
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_OK);
    ids_push(&ids, id);
    CHECK_RESULT(polyflake_generator_decode(g, id, &d), POLYFLAKE_RESULT_OK);
    CHECK((int64_t)d.node_id == node_of(g), "an ID after the heal carries node %u", d.node_id);
    CHECK(duplicates(&ids) == 0, "no ID twice across the heal (%zu IDs)", ids.n);
    printf("heal on: slot file %" PRId64 " deleted, slot %" PRId64 " taken, issuing again after "
           "%.0f ms (%d LEASE_LOST, %d LEASE_NOT_READY), %zu + %zu IDs, 0 twice\n",
           lost, node_of(g), healed_in, lost_refusals, guard_refusals, minted_before,
           ids.n - minted_before);
    /* Again, now waiting in wait_ready: once the loss is seen, it waits through the heal. */
    snprintf(slot, sizeof slot, "%s/slot-%04" PRId64, dir, node_of(g));
    CHECK(unlink(slot) == 0, "unlink %s", slot);
    start = mono_ms();
    do {
      CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
      if (!h.ok) break;
      sleep_ms(1);
    } while (mono_ms() - start < 5000.0 * slack);
    CHECK(!h.ok, "the second deletion seen: status %u", h.status);
    healed_in = mono_ms();
    CHECK_RESULT(polyflake_wait_ready(g, (uint64_t)(10000 * slack)), POLYFLAKE_RESULT_OK);
    healed_in = mono_ms() - healed_in;
    for (i = 0; i < 1000; i++) {
      r = polyflake_next_id(g, &id);
      CHECK(r == POLYFLAKE_RESULT_OK, "next_id after wait_ready: %s", polyflake_result_name(r));
      ids_push(&ids, id);
    }
    CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
    CHECK(h.ok && h.ids_issued >= ids.n, "after the second heal: ids_issued %" PRIu64 ", %zu minted",
          h.ids_issued, ids.n);
    CHECK(duplicates(&ids) == 0, "no ID twice across two heals (%zu IDs)", ids.n);
    printf("heal on, again: wait_ready waited through the heal (%.0f ms), %zu IDs, 0 twice\n",
           healed_in, ids.n);
  } else {
    do {
      CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
      if (h.status == POLYFLAKE_HEALTH_STATUS_LEASE_LOST) break;
      sleep_ms(10);
    } while (mono_ms() - start < 5000.0 * slack);
    CHECK(h.status == POLYFLAKE_HEALTH_STATUS_LEASE_LOST, "lost after the deletion: status %u",
          h.status);
    sleep_ms(1000);
    CHECK_RESULT(polyflake_health(g, &h), POLYFLAKE_RESULT_OK);
    CHECK(!h.ok && h.status == POLYFLAKE_HEALTH_STATUS_LEASE_LOST && h.lease_lost,
          "still lost 1 s later: status %u", h.status);
    CHECK_RESULT(polyflake_next_id(g, &id), POLYFLAKE_RESULT_LEASE_LOST);
    start = mono_ms();
    CHECK_RESULT(polyflake_wait_ready(g, (uint64_t)(2000 * slack)), POLYFLAKE_RESULT_LEASE_LOST);
    CHECK(mono_ms() - start < 1000.0 * slack, "wait_ready said LEASE_LOST at once: %.0f ms",
          mono_ms() - start);
    CHECK(duplicates(&ids) == 0, "no ID twice (%zu IDs)", ids.n);
    printf("heal off: slot file deleted, LEASE_LOST for good (health lease_lost 1 s later)\n");
  }
  polyflake_generator_free(g);
  free(ids.v);
  remove_tree(dir);
}

/* ------------------------------------------------------------------------------------------ */
/* One store, one ID space                                                                    */

static void one_id_space_per_store(void) {
  char dir[] = "/tmp/polyflake-c-space-XXXXXX";
  polyflake_config cfg;
  polyflake_generator *a, *b;
  polyflake_result r;
  make_dir(dir);
  a = lease(dir, 4, 100, NULL, &r);
  CHECK(r == POLYFLAKE_RESULT_OK, "the first generator records its space");
  polyflake_config_init(&cfg);
  cfg.layout = polyflake_layout_big_fleet();
  b = lease(dir, 4, 100, &cfg, &r);
  CHECK(r == POLYFLAKE_RESULT_ID_SPACE_MISMATCH && b == NULL, "another layout: %s",
        polyflake_result_name(r));
  CHECK(strstr(last_message(), "41/10/12") && strstr(last_message(), "41/12/10") &&
            strstr(last_message(), dir),
        "the message names both spaces and the store: %s", last_message());
  polyflake_config_init(&cfg);
  cfg.epoch_ms += 1;
  b = lease(dir, 4, 100, &cfg, &r);
  CHECK(r == POLYFLAKE_RESULT_ID_SPACE_MISMATCH && b == NULL, "another epoch: %s",
        polyflake_result_name(r));
  polyflake_generator_free(a);
  /* The store keeps its space when nobody holds it. */
  b = lease(dir, 4, 100, &cfg, &r);
  CHECK(r == POLYFLAKE_RESULT_ID_SPACE_MISMATCH && b == NULL, "still another epoch: %s",
        polyflake_result_name(r));
  remove_tree(dir);
  printf("one store, one ID space: a second one refused\n");
}

int main(int argc, char **argv) {
  const char *self = argv[0];
  if (argc == 5 && strcmp(argv[1], "stream") == 0) return stream_child(argv[2], argv[3], atol(argv[4]));
  if (argc != 1 || !strchr(self, '/')) {
    fprintf(stderr, "usage: PATH/%s (the children are this program again)\n", argv[0]);
    return 2;
  }
  if (getenv("POLYFLAKE_UNDER_VALGRIND")) slack = 20.0;
  printf("polyflake %s (C, quiet faults)\n", polyflake_version());
  record_table();
  poisoned_slot();
  one_id_space_per_store();
  heal_a_deleted_slot_file(1);
  heal_a_deleted_slot_file(0);
  close_with_a_live_child();
  child_closes_inherited_descriptors();
  /* The stream children run natively (under valgrind too: it does not follow exec). */
  holder_and_successor(self, 0);
  holder_and_successor(self, 1);
  printf("%d checks, %d failures\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
