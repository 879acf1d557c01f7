#include <sqlite3.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

// SQLite's own busy handler first retries a locked database after 1 ms,
// then 2, 5, 10... Lunar's transactions take tens of microseconds, so
// workers sharing a store would mostly sleep: this one retries after
// 50 µs, doubling up to 2 ms, until `timeout` milliseconds have passed.
static inline int lunar_sqlite_busy(void *timeout, int count) {
  long limit = (long)(intptr_t)timeout * 1000;
  long waited = 0;
  for (int i = 0; i < count; i++) waited += i < 6 ? 50L << i : 2000;
  if (waited >= limit) return 0;
  usleep(count < 6 ? 50 << count : 2000);
  return 1;
}

/// Makes statements on `db` wait up to `milliseconds` for another
/// connection's lock, retrying after short sleeps.
static inline int lunar_sqlite_busy_timeout(sqlite3 *db, int milliseconds) {
  return sqlite3_busy_handler(db, lunar_sqlite_busy, (void *)(intptr_t)milliseconds);
}

// The write-ahead log of a store shared by busy processes. SQLite's own
// checkpoint after a commit (PASSIVE, once the log holds 1,000 pages)
// copies pages back but never waits; the log starts over from its
// beginning only when a transaction begins while every page of it has been
// copied. With a submitter and a worker committing in turn, the other one
// has always begun during the checkpoint, so the log never started over
// and grew by every commit (1.1 GB for 30,000 jobs). Past twice that size,
// a commit therefore runs a TRUNCATE checkpoint, which waits (briefly) for
// the other connections' transactions to end, copies everything, and
// empties the file. Only one checkpoint runs at a time, and SQLite does
// not wait for another's (the other process's passive one, after each of
// its commits): that refusal is retried here, until the same deadline.

/// Pages in the log past which SQLite's passive checkpoint runs (its default).
#define LUNAR_SQLITE_WAL_PASSIVE_PAGES 1000
/// Pages past which a commit empties the log with a TRUNCATE checkpoint.
#define LUNAR_SQLITE_WAL_TRUNCATE_PAGES 2000
/// How long a TRUNCATE checkpoint may wait for other connections, in ms;
/// when they stay busy, a later commit tries again, once the log grew by
/// another LUNAR_SQLITE_WAL_PASSIVE_PAGES (so a connection that holds a
/// long transaction does not make every commit wait).
#define LUNAR_SQLITE_WAL_TRUNCATE_WAIT_MS 50

/// A connection's log keeping: its usual busy timeout, restored after a
/// checkpoint's shorter one, and the size at which to try the next
/// TRUNCATE checkpoint.
typedef struct lunar_sqlite_wal {
  int busy_timeout_ms;
  int truncate_at;
  /// TRUNCATE checkpoints that emptied the log, and those that found the
  /// store busy until their deadline (for tests and benchmarks).
  long truncated;
  long busy;
} lunar_sqlite_wal;

static inline long lunar_sqlite_monotonic_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

// Runs after each commit of the connection, with its write lock released
// and no transaction of its own open: the moment a checkpoint can wait
// for everyone else.
static inline int lunar_sqlite_wal_hook(void *context, sqlite3 *db, const char *schema, int pages) {
  lunar_sqlite_wal *wal = (lunar_sqlite_wal *)context;
  if (pages < LUNAR_SQLITE_WAL_PASSIVE_PAGES) {
    wal->truncate_at = LUNAR_SQLITE_WAL_TRUNCATE_PAGES;
    return SQLITE_OK;
  }
  if (pages < wal->truncate_at) {
    sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return SQLITE_OK;
  }
  long deadline = lunar_sqlite_monotonic_us() + LUNAR_SQLITE_WAL_TRUNCATE_WAIT_MS * 1000L;
  int code;
  for (int attempt = 0;; attempt++) {
    long left = deadline - lunar_sqlite_monotonic_us();
    lunar_sqlite_busy_timeout(db, left > 1000 ? (int)(left / 1000) : 1);
    code = sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    if ((code & 0xFF) != SQLITE_BUSY || lunar_sqlite_monotonic_us() >= deadline) break;
    usleep(attempt < 6 ? 50 << attempt : 2000);
  }
  lunar_sqlite_busy_timeout(db, wal->busy_timeout_ms);
  if (code == SQLITE_OK) {
    wal->truncated++;
    wal->truncate_at = LUNAR_SQLITE_WAL_TRUNCATE_PAGES;
  } else {
    wal->busy++;
    wal->truncate_at = pages + LUNAR_SQLITE_WAL_PASSIVE_PAGES;
  }
  // A checkpoint that could not finish loses nothing: the commit stands.
  return SQLITE_OK;
}

/// Makes `db` keep its log small after each commit, as above, with `wal`
/// (which must outlive the hook: `lunar_sqlite_wal_stop` removes it).
static inline void lunar_sqlite_wal_start(sqlite3 *db, lunar_sqlite_wal *wal) {
  wal->truncate_at = LUNAR_SQLITE_WAL_TRUNCATE_PAGES;
  sqlite3_wal_hook(db, lunar_sqlite_wal_hook, wal);
}

/// Removes the hook `lunar_sqlite_wal_start` installed.
static inline void lunar_sqlite_wal_stop(sqlite3 *db) { sqlite3_wal_hook(db, NULL, NULL); }
