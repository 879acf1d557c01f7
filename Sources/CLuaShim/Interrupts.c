// Stopping Lua code: the one hook function (interrupts, deadlines and
// coverage's line events share it), interrupts from any thread, task
// deadlines, Ctrl-C, ending a stuck process, and the wake-up the runtime
// loop sleeps on.
// sem_clockwait (glibc 2.30) is a GNU extension.
#define _GNU_SOURCE
#include "Internal.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// MARK: - Hooks

static void lunar_hook(lua_State *L, lua_Debug *ar);

#define EVERY_STEP (LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT)

// Every hook Lunar sets goes through here, so that interrupts, deadlines
// and coverage share one hook function on each thread: `mask` is what the
// interrupt or the deadline needs (0: nothing), and the line events
// coverage counts are added while it counts. Async-signal-safe.
static void set_hook(lunar_Control *c, lua_State *L, int mask, int count) {
  mask |= atomic_load_explicit(&c->linemask, memory_order_relaxed);
  lua_sethook(L, mask != 0 ? lunar_hook : NULL, mask, count);
}

int lunar_hasonlyownhook(lua_State *L) {
  lua_Hook hook = lua_gethook(L);
  return hook == NULL || hook == lunar_hook;
}

void lunar_hookifinterrupted(lunar_Control *c, lua_State *L) {
  if (atomic_load(&c->interrupted)) set_hook(c, L, EVERY_STEP, 1);
}

// Hooks are per thread: a coroutine made before coverage started, or one
// whose hook the script removed, counts its lines once it is resumed. A
// hook the script set itself (debug.sethook) is left alone.
void lunar_hookforcoverage(lunar_Control *c, lua_State *L) {
  if (!atomic_load_explicit(&c->linemask, memory_order_relaxed) || (lua_gethookmask(L) & LUA_MASKLINE)) return;
  lua_Hook hook = lua_gethook(L);
  if (hook == NULL) set_hook(c, L, 0, 0);
  else if (hook == lunar_hook) set_hook(c, L, lua_gethookmask(L), lua_gethookcount(L));
}

// MARK: - Interrupts

// The interrupt's hook fires at every step and stays set, so a pcall that
// catches the error is interrupted again at its next instruction.
static void raise_interrupt(lunar_Control *c, lua_State *L) {
  const char *message = atomic_load(&c->message);
  if (message == NULL)
    message = atomic_load(&c->interrupted) == LUNAR_INTERRUPT_SIGNAL ? "interrupted" : "stopped";
  atomic_store(&c->taken, 1);
  luaL_error(L, "%s", message);
}

void lunar_interrupt(lunar_Control *c, int reason, const char *message) {
  atomic_store(&c->message, message);
  int expected = LUNAR_INTERRUPT_NONE;
  atomic_compare_exchange_strong(&c->interrupted, &expected, reason);
  // Counted, so a state being closed waits until the hook is set before it
  // is freed (see closed_for_interrupts).
  atomic_fetch_add(&c->interrupting, 1);
  lua_State *running = atomic_load(&c->running);
  if (running != NULL) set_hook(c, running, EVERY_STEP, 1);
  atomic_fetch_sub(&c->interrupting, 1);
  sem_post(&c->wakeup);
}

// Called only on the loop thread: seeing the flag there means the loop is
// back in the runtime's own code, so the interrupt is taken.
int lunar_interrupted(lua_State *L) {
  lunar_Control *c = control(L);
  int reason = atomic_load(&c->interrupted);
  if (reason != LUNAR_INTERRUPT_NONE) atomic_store(&c->taken, 1);
  return reason;
}

int lunar_interrupttaken(lunar_Control *c) { return atomic_load(&c->taken); }

void lunar_clearinterrupt(lua_State *L) {
  lunar_Control *c = control(L);
  atomic_store(&c->interrupted, LUNAR_INTERRUPT_NONE);
  atomic_store(&c->taken, 0);
  set_hook(c, L, 0, 0);
}

// MARK: - Deadlines

double lunar_monotonic(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

// How many instructions run between two looks at the clock. Lua 5.4 stops
// at every instruction of a thread that has a count hook, whatever the
// count, so the count only decides how often the clock is read (a few tens
// of nanoseconds a time) and how late a deadline may be seen: a thousand
// instructions are a few microseconds.
#define DEADLINE_INSTRUCTIONS 1000

// Hooks thread L for the deadline of the code running now, if it has one;
// a thread already past it is stopped at its next step. A hook left on a
// thread that no longer runs under a deadline drops its part when it next
// fires. An interrupt's hook is never replaced (lunar_resume sets it after
// this), and an interrupt that replaced this one wins.
void lunar_watchdeadline(lunar_Control *c, lua_State *L) {
  if (L == NULL || c->deadline == HUGE_VAL || atomic_load(&c->interrupted)) return;
  if (lunar_monotonic() >= c->deadline) set_hook(c, L, EVERY_STEP, 1);
  else set_hook(c, L, LUA_MASKCOUNT, DEADLINE_INSTRUCTIONS);
}

// The one hook function. A line event is coverage's. Any other event is
// the interrupt's or the deadline's: an interrupt raises at every step
// until it is cleared; a deadline reads the clock every
// DEADLINE_INSTRUCTIONS and, once it has passed, raises its message at
// every call, return and instruction, as the interrupt does, so a pcall
// that catches the error is stopped again at once and the error unwinds
// the whole task. The deadline's message is raised as it is (lua_error,
// not luaL_error): no position is prefixed.
static void lunar_hook(lua_State *L, lua_Debug *ar) {
  lunar_Control *c = control(L);
  int line = ar->event == LUA_HOOKLINE;
  if (line) {
    lunar_coverageline(c->coverage, L, ar);
    // An interrupt's hook is set from another thread, and Lua's hook count
    // is not atomic: set while this thread is between reading the old mask
    // (lines only) and counting down, the count passes zero and the count
    // hook never fires. Line events take the interrupt too, and setting
    // the hook again here, on its own thread, starts the count afresh.
    if (!atomic_load(&c->interrupted)) return;
  }
  if (atomic_load(&c->interrupted)) {
    if (line || lua_gethookcount(L) != 1) set_hook(c, L, EVERY_STEP, 1);
    raise_interrupt(c, L);
    return;
  }
  if (c->deadline == HUGE_VAL) {
    set_hook(c, L, 0, 0);
    return;
  }
  if (lunar_monotonic() < c->deadline) {
    // An interrupt's hook left after it was cleared: back to the clock.
    if (lua_gethookcount(L) == 1) set_hook(c, L, LUA_MASKCOUNT, DEADLINE_INSTRUCTIONS);
    return;
  }
  if (lua_gethookcount(L) != 1) set_hook(c, L, EVERY_STEP, 1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->deadlinemessage);
  lua_error(L);
}

void lunar_setdeadline(lua_State *L, double at, int message) {
  lunar_Control *c = control(L);
  c->deadline = at != at ? HUGE_VAL : at;
  c->deadlinemessage = message;
  lunar_watchdeadline(c, atomic_load(&c->running));
}

// MARK: - Ending a stuck process

// The loop thread is inside one long C call (a backtracking string.find, a
// sort of millions) that never returns to Lua, so the interrupt hook never
// runs. Nothing can stop that call from another thread: Lua's errors are
// longjmps on the thread that raises them, and cancelling the thread would
// unwind Lua's and Swift's frames without their cleanup. So the process
// ends here. _exit, not exit: atexit handlers and static destructors would
// run while the loop thread still uses the state. Standard output is
// flushed only if no other thread holds its lock (the stuck call might be
// writing to it); everything else is left as a crash would leave it, and
// files Lunar writes are written atomically or appended, so a crash keeps
// them whole.
void lunar_endprocess(const char *line, int status) {
  if (ftrylockfile(stdout) == 0) {
    fflush(stdout);
    funlockfile(stdout);
  }
  size_t length = strlen(line), offset = 0;
  while (offset < length) {
    ssize_t written = write(STDERR_FILENO, line + offset, length - offset);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) break;
    offset += (size_t)written;
  }
  _exit(status);
}

// MARK: - Ctrl-C

#define MAX_SIGINT_TARGETS 256
static _Atomic(lunar_Control *) sigint_targets[MAX_SIGINT_TARGETS];
static atomic_flag sigint_installed = ATOMIC_FLAG_INIT;

static atomic_int sigint_count;

int lunar_sigintcount(void) { return atomic_load(&sigint_count); }

// Stop signals (SIGINT, SIGTERM, SIGHUP under `lunar run`): while a
// workflow runs, the first one is only noted and posted, so the run cancels
// its steps cooperatively (finally and <close> run); a second one, or any
// one when nothing cooperates, interrupts at once.
static atomic_int stop_cooperating;
static atomic_int stop_signal;
static atomic_int stop_count;
static sem_t stop_posted;
static atomic_flag stop_posted_made = ATOMIC_FLAG_INIT;

static void interrupt_all(int signal) {
  for (int i = 0; i < MAX_SIGINT_TARGETS; i++) {
    lunar_Control *c = atomic_load(&sigint_targets[i]);
    if (c == NULL) continue;
    if (atomic_load(&c->closing) && atomic_load(&c->endsprocess)) {
      static const char line[] = "lunar: interrupted while closing the state (a finalizer was still running)\n";
      if (write(STDERR_FILENO, line, sizeof line - 1) < 0) {
      }
      _exit(128 + signal);
    }
    lunar_interrupt(c, LUNAR_INTERRUPT_SIGNAL, signal == SIGTERM ? "terminated" : signal == SIGHUP ? "hung up" : "interrupted");
  }
}

static void make_stop_posted(void) {
  if (!atomic_flag_test_and_set(&stop_posted_made)) sem_init(&stop_posted, 0, 0);
}

static void on_sigint(int signal) {
  if (signal == SIGINT) atomic_fetch_add(&sigint_count, 1);
  int count = atomic_fetch_add(&stop_count, 1) + 1;
  int expected = 0;
  atomic_compare_exchange_strong(&stop_signal, &expected, signal);
  if (count == 1 && atomic_load(&stop_cooperating)) {
    sem_post(&stop_posted);
    return;
  }
  interrupt_all(signal);
}

void lunar_catchstopsignals(lua_State *L) {
  make_stop_posted();
  lunar_catchsigint(L);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, NULL);
  sigaction(SIGHUP, &action, NULL);
}

void lunar_cooperatestop(int on) {
  make_stop_posted();
  atomic_store(&stop_cooperating, on);
}

int lunar_stopsignal(void) { return atomic_load(&stop_signal); }

// The longest single wait: a longer one (or a NaN) is cut to this and
// reported as a timeout, so the caller looks again. Converting a huge number
// of seconds to a timespec would overflow into the past and make the
// caller spin.
#define LUNAR_SLEEP_MAX 86400.0

// The monotonic instant `seconds` (0 to a day) from now, for
// sem_clockwait: a step of the wall clock (NTP setting a new machine's time)
// must not stretch or cut a sleep, as it would a realtime deadline.
static struct timespec deadline_after(double seconds) {
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  double whole = (double)(long long)seconds;
  deadline.tv_sec += (time_t)whole;
  deadline.tv_nsec += (long)((seconds - whole) * 1e9);
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000L;
  }
  return deadline;
}

// Waits for `semaphore` to be posted until `seconds` pass on the monotonic
// clock (cut to 0 to LUNAR_SLEEP_MAX; a NaN waits the most); with
// `through_signals`, a signal does not end the wait. 1 if it was posted.
static int wait_on(sem_t *semaphore, double seconds, int through_signals) {
  if (!(seconds <= LUNAR_SLEEP_MAX)) seconds = LUNAR_SLEEP_MAX;
  if (seconds < 0) seconds = 0;
  struct timespec deadline = deadline_after(seconds);
  while (sem_clockwait(semaphore, CLOCK_MONOTONIC, &deadline) != 0) {
    if (errno != EINTR || !through_signals) return 0;
  }
  return 1;
}

int lunar_waitstopsignal(double seconds) {
  make_stop_posted();
  return wait_on(&stop_posted, seconds, 1);
}

int lunar_semwait(sem_t *semaphore, double seconds) { return wait_on(semaphore, seconds, 0); }

void lunar_poststop(void) {
  make_stop_posted();
  sem_post(&stop_posted);
}

void lunar_interruptforstop(void) {
  int signal = atomic_load(&stop_signal);
  interrupt_all(signal == 0 ? SIGINT : signal);
}

void lunar_catchsigint(lua_State *L) {
  lunar_Control *c = control(L);
  for (int i = 0; i < MAX_SIGINT_TARGETS; i++) {
    lunar_Control *empty = NULL;
    if (atomic_compare_exchange_strong(&sigint_targets[i], &empty, c)) break;
  }
  if (!atomic_flag_test_and_set(&sigint_installed)) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_sigint;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
  }
}

void lunar_releasesigint(lua_State *L) { lunar_releasesigintof(control(L)); }

void lunar_releasesigintof(lunar_Control *c) {
  for (int i = 0; i < MAX_SIGINT_TARGETS; i++) {
    lunar_Control *expected = c;
    atomic_compare_exchange_strong(&sigint_targets[i], &expected, NULL);
  }
}

// MARK: - Wake-up

void lunar_wake(lua_State *L) { sem_post(&control(L)->wakeup); }

int lunar_sleep(lua_State *L, double seconds) {
  lunar_Control *c = control(L);
  if (seconds < 0) {
    while (sem_wait(&c->wakeup) != 0 && errno == EINTR) {}
    return 1;
  }
  return wait_on(&c->wakeup, seconds, 1);
}
