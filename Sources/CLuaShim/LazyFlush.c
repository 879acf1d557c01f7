// Progress lines into a pipe or a file without a write(2) each: a run of
// 10,000 steps prints 20,000 lines, and flushing each took longer than
// running the step. A thread of its own flushes standard output 30 ms
// after the first line not yet flushed, so a line is out within 30 ms
// even while the loop thread computes a long step. It never touches a
// lua_State; stdio's own lock orders it with the loop's writes.
#include "include/CLuaShim.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static sem_t due;
// 1 while lines wait for the flusher; 0 after a flush.
static atomic_int waiting;
// 1 once the flusher runs: without it (no thread, or in a forked child,
// which has none) every line is flushed as it is written.
static atomic_int flusher_runs;

static void *flush_later(void *unused) {
  (void)unused;
  for (;;) {
    while (sem_wait(&due) != 0) {}
    struct timespec delay = { 0, 30 * 1000 * 1000 };
    while (nanosleep(&delay, &delay) != 0) {}
    // Cleared first: a line written while this flush runs asks for another.
    atomic_store(&waiting, 0);
    fflush(stdout);
  }
  return NULL;
}

static void in_forked_child(void) { atomic_store(&flusher_runs, 0); }

static void start_flusher(void) {
  if (sem_init(&due, 0, 0) != 0) return;
  pthread_attr_t attributes;
  pthread_t thread;
  if (pthread_attr_init(&attributes) != 0) return;
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&thread, &attributes, flush_later, NULL) == 0) {
    pthread_atfork(NULL, NULL, in_forked_child);
    atomic_store(&flusher_runs, 1);
  }
  pthread_attr_destroy(&attributes);
}

void lunar_writeprogress(const char *bytes, size_t size) {
  fwrite(bytes, 1, size, stdout);
  pthread_once(&once, start_flusher);
  if (!atomic_load(&flusher_runs)) {
    fflush(stdout);
  } else if (atomic_exchange(&waiting, 1) == 0) {
    sem_post(&due);
  }
}
