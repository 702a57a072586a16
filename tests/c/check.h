/*
 * What the C test programs share: the CHECK macros (a failure is counted and printed, the run
 * goes on) and small helpers over the C ABI. Include after polyflake.h and <stdio.h>.
 */
#ifndef POLYFLAKE_TEST_CHECK_H
#define POLYFLAKE_TEST_CHECK_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int failures = 0;
static int checks = 0;

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    checks++;                                                              \
    if (!(cond)) {                                                         \
      failures++;                                                          \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);      \
      fprintf(stderr, __VA_ARGS__);                                        \
      fprintf(stderr, "\n");                                               \
    }                                                                      \
  } while (0)

#define CHECK_RESULT(expr, want)                                                        \
  do {                                                                                  \
    polyflake_result got_ = (expr);                                                     \
    CHECK(got_ == (want), "%s gave %s, want %s", #expr, polyflake_result_name(got_),    \
          polyflake_result_name(want));                                                 \
  } while (0)

/* The worker_t and worker() of a thread test: PER_THREAD IDs from the handle g into out[], each
 * from ISSUE(g, out, i) and after the one before (AFTER(out, i)); failures count in errors. */
#define DEFINE_WORKER(handle_t, id_t, ISSUE, AFTER)                     \
  typedef struct {                                                    \
    const handle_t *g;                                                \
    id_t *out;                                                        \
    int errors;                                                       \
  } worker_t;                                                         \
  static void *worker(void *arg) {                                    \
    worker_t *w = arg;                                                \
    int i;                                                            \
    for (i = 0; i < PER_THREAD; i++) {                                \
      if (ISSUE(w->g, w->out, i) != POLYFLAKE_RESULT_OK) w->errors++; \
      else if (i > 0 && !(AFTER(w->out, i))) w->errors++;             \
    }                                                                 \
    return NULL;                                                      \
  }

/* Run THREADS workers on w[0..THREADS): w[i] gets the handle `gen`, its PER_THREAD IDs at
 * all + i * PER_THREAD and no errors; join them and check that none counted an error (needs
 * <pthread.h>, THREADS and PER_THREAD). */
#define RUN_WORKERS(w, gen, all, worker)                                       \
  do {                                                                         \
    pthread_t tid_[THREADS];                                                   \
    int i_;                                                                    \
    for (i_ = 0; i_ < THREADS; i_++) {                                         \
      (w)[i_].g = (gen);                                                       \
      (w)[i_].out = (all) + (size_t)i_ * PER_THREAD;                           \
      (w)[i_].errors = 0;                                                      \
      pthread_create(&tid_[i_], NULL, (worker), &(w)[i_]);                     \
    }                                                                          \
    for (i_ = 0; i_ < THREADS; i_++) {                                         \
      pthread_join(tid_[i_], NULL);                                            \
      CHECK((w)[i_].errors == 0, "thread %d: %d errors", i_, (w)[i_].errors);  \
    }                                                                          \
  } while (0)

/* This thread's last core error message (polyflake_last_error_message). */
static inline const char *last_message(void) {
  static char msg[1024];
  size_t len = 0;
  if (polyflake_last_error_message(msg, sizeof msg, &len) != POLYFLAKE_RESULT_OK) msg[0] = 0;
  return msg;
}

/* The node id a generator holds, from its configuration (-1 if it cannot say). */
static inline int64_t node_of(const polyflake_generator *g) {
  polyflake_config c;
  return polyflake_generator_config(g, &c) == POLYFLAKE_RESULT_OK ? c.node_id : -1;
}

static inline void sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

/* A growing list of IDs (for the uniqueness checks). */
typedef struct {
  uint64_t *v;
  size_t n, cap;
} ids_t;

static inline void ids_push(ids_t *ids, uint64_t id) {
  if (ids->n == ids->cap) {
    ids->cap = ids->cap ? ids->cap * 2 : 4096;
    ids->v = realloc(ids->v, ids->cap * sizeof *ids->v);
    if (!ids->v) {
      fprintf(stderr, "FATAL: out of memory\n");
      exit(2);
    }
  }
  ids->v[ids->n++] = id;
}

static inline int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Remove a directory of plain files (a lease directory), best effort. */
static inline void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char path[4096];
  if (!d) return;
  while ((e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

#endif
