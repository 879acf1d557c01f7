#include "CSQLite.h"

#include <CSharedLibrary.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

// Every SQLite function Lunar calls. Their types are those sqlite3.h
// declares (`__typeof__` reads the declaration, nothing is linked).
#define LUNAR_SQLITE_FUNCTIONS(X) \
  X(sqlite3_open_v2) \
  X(sqlite3_close_v2) \
  X(sqlite3_exec) \
  X(sqlite3_errmsg) \
  X(sqlite3_errstr) \
  X(sqlite3_get_autocommit) \
  X(sqlite3_last_insert_rowid) \
  X(sqlite3_changes64) \
  X(sqlite3_prepare_v3) \
  X(sqlite3_finalize) \
  X(sqlite3_reset) \
  X(sqlite3_clear_bindings) \
  X(sqlite3_step) \
  X(sqlite3_bind_null) \
  X(sqlite3_bind_int64) \
  X(sqlite3_bind_double) \
  X(sqlite3_bind_text64) \
  X(sqlite3_bind_blob64) \
  X(sqlite3_bind_zeroblob) \
  X(sqlite3_column_type) \
  X(sqlite3_column_int64) \
  X(sqlite3_column_double) \
  X(sqlite3_column_blob) \
  X(sqlite3_column_text) \
  X(sqlite3_column_bytes) \
  X(sqlite3_busy_handler) \
  X(sqlite3_wal_hook) \
  X(sqlite3_wal_checkpoint_v2)

// The table, written once by `load` under pthread_once. `loaded` is set
// last, with release order: a call that sees it set sees the whole table,
// whichever thread loaded it.
static struct {
#define FIELD(name) __typeof__(&name) name;
  LUNAR_SQLITE_FUNCTIONS(FIELD)
#undef FIELD
  atomic_int loaded;
  char error[256];
} lib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

// What the calls that return a message say when SQLite is missing.
static const char not_loaded[] = "libsqlite3 is not loaded";

static void load(void) {
#define SYMBOL(name) {#name, (void **)&lib.name},
  const lunar_symbol symbols[] = {LUNAR_SQLITE_FUNCTIONS(SYMBOL)};
#undef SYMBOL
  // The soname of Debian's libsqlite3-0; libsqlite3-dev's unversioned
  // libsqlite3.so is only there for linking.
  if (lunar_openlibrary("libsqlite3.so.0", symbols, sizeof symbols / sizeof *symbols, lib.error, sizeof lib.error))
    atomic_store_explicit(&lib.loaded, 1, memory_order_release);
}

static int ready(void) { return atomic_load_explicit(&lib.loaded, memory_order_acquire); }

int lunar_sqlite_load(void) {
  pthread_once(&load_once, load);
  return ready();
}

const char *lunar_sqlite_load_error(void) {
  pthread_once(&load_once, load);
  return lib.error;
}

int lunar_sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs) {
  if (!lunar_sqlite_load()) {
    *db = NULL;
    return SQLITE_CANTOPEN;
  }
  return lib.sqlite3_open_v2(filename, db, flags, vfs);
}

const char *lunar_sqlite3_errstr(int code) { return ready() ? lib.sqlite3_errstr(code) : not_loaded; }

// The rest take what open_v2 made, so SQLite is loaded when they are
// reached; the check keeps a stray call from jumping to NULL.
int lunar_sqlite3_close_v2(sqlite3 *db) { return ready() ? lib.sqlite3_close_v2(db) : SQLITE_MISUSE; }

int lunar_sqlite3_exec(sqlite3 *db, const char *sql) {
  return ready() ? lib.sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_MISUSE;
}

const char *lunar_sqlite3_errmsg(sqlite3 *db) { return ready() ? lib.sqlite3_errmsg(db) : not_loaded; }

int lunar_sqlite3_get_autocommit(sqlite3 *db) { return ready() ? lib.sqlite3_get_autocommit(db) : 0; }

sqlite3_int64 lunar_sqlite3_last_insert_rowid(sqlite3 *db) {
  return ready() ? lib.sqlite3_last_insert_rowid(db) : 0;
}

sqlite3_int64 lunar_sqlite3_changes64(sqlite3 *db) { return ready() ? lib.sqlite3_changes64(db) : 0; }

int lunar_sqlite3_prepare_v3(sqlite3 *db, const char *sql, unsigned int flags, sqlite3_stmt **statement) {
  if (!ready()) {
    *statement = NULL;
    return SQLITE_MISUSE;
  }
  return lib.sqlite3_prepare_v3(db, sql, -1, flags, statement, NULL);
}

int lunar_sqlite3_finalize(sqlite3_stmt *statement) {
  return ready() ? lib.sqlite3_finalize(statement) : SQLITE_MISUSE;
}

int lunar_sqlite3_reset(sqlite3_stmt *statement) { return ready() ? lib.sqlite3_reset(statement) : SQLITE_MISUSE; }

int lunar_sqlite3_clear_bindings(sqlite3_stmt *statement) {
  return ready() ? lib.sqlite3_clear_bindings(statement) : SQLITE_MISUSE;
}

int lunar_sqlite3_step(sqlite3_stmt *statement) { return ready() ? lib.sqlite3_step(statement) : SQLITE_MISUSE; }

int lunar_sqlite3_bind_null(sqlite3_stmt *statement, int index) {
  return ready() ? lib.sqlite3_bind_null(statement, index) : SQLITE_MISUSE;
}

int lunar_sqlite3_bind_int64(sqlite3_stmt *statement, int index, sqlite3_int64 value) {
  return ready() ? lib.sqlite3_bind_int64(statement, index, value) : SQLITE_MISUSE;
}

int lunar_sqlite3_bind_double(sqlite3_stmt *statement, int index, double value) {
  return ready() ? lib.sqlite3_bind_double(statement, index, value) : SQLITE_MISUSE;
}

int lunar_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, sqlite3_uint64 length) {
  return ready() ? lib.sqlite3_bind_text64(statement, index, text, length, SQLITE_TRANSIENT, SQLITE_UTF8)
                 : SQLITE_MISUSE;
}

int lunar_sqlite3_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, sqlite3_uint64 length) {
  return ready() ? lib.sqlite3_bind_blob64(statement, index, bytes, length, SQLITE_TRANSIENT) : SQLITE_MISUSE;
}

int lunar_sqlite3_bind_zeroblob(sqlite3_stmt *statement, int index, int length) {
  return ready() ? lib.sqlite3_bind_zeroblob(statement, index, length) : SQLITE_MISUSE;
}

int lunar_sqlite3_column_type(sqlite3_stmt *statement, int column) {
  return ready() ? lib.sqlite3_column_type(statement, column) : SQLITE_NULL;
}

sqlite3_int64 lunar_sqlite3_column_int64(sqlite3_stmt *statement, int column) {
  return ready() ? lib.sqlite3_column_int64(statement, column) : 0;
}

double lunar_sqlite3_column_double(sqlite3_stmt *statement, int column) {
  return ready() ? lib.sqlite3_column_double(statement, column) : 0;
}

const void *lunar_sqlite3_column_blob(sqlite3_stmt *statement, int column) {
  return ready() ? lib.sqlite3_column_blob(statement, column) : NULL;
}

const unsigned char *lunar_sqlite3_column_text(sqlite3_stmt *statement, int column) {
  return ready() ? lib.sqlite3_column_text(statement, column) : NULL;
}

int lunar_sqlite3_column_bytes(sqlite3_stmt *statement, int column) {
  return ready() ? lib.sqlite3_column_bytes(statement, column) : 0;
}

// SQLite's own busy handler first retries a locked database after 1 ms,
// then 2, 5, 10... Lunar's transactions take tens of microseconds, so
// workers sharing a store would mostly sleep: this one retries after
// 50 µs, doubling up to 2 ms, until `timeout` milliseconds have passed.
static int busy(void *timeout, int count) {
  long limit = (long)(intptr_t)timeout * 1000;
  long waited = 0;
  for (int i = 0; i < count; i++) waited += i < 6 ? 50L << i : 2000;
  if (waited >= limit) return 0;
  usleep(count < 6 ? 50 << count : 2000);
  return 1;
}

int lunar_sqlite_busy_timeout(sqlite3 *db, int milliseconds) {
  return ready() ? lib.sqlite3_busy_handler(db, busy, (void *)(intptr_t)milliseconds) : SQLITE_MISUSE;
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

static long monotonic_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

// Runs after each commit of the connection, with its write lock released
// and no transaction of its own open: the moment a checkpoint can wait
// for everyone else.
static int wal_hook(void *context, sqlite3 *db, const char *schema, int pages) {
  lunar_sqlite_wal *wal = (lunar_sqlite_wal *)context;
  if (pages < LUNAR_SQLITE_WAL_PASSIVE_PAGES) {
    wal->truncate_at = LUNAR_SQLITE_WAL_TRUNCATE_PAGES;
    return SQLITE_OK;
  }
  if (pages < wal->truncate_at) {
    lib.sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return SQLITE_OK;
  }
  long deadline = monotonic_us() + LUNAR_SQLITE_WAL_TRUNCATE_WAIT_MS * 1000L;
  int code;
  for (int attempt = 0;; attempt++) {
    long left = deadline - monotonic_us();
    lunar_sqlite_busy_timeout(db, left > 1000 ? (int)(left / 1000) : 1);
    code = lib.sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    if ((code & 0xFF) != SQLITE_BUSY || monotonic_us() >= deadline) break;
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

void lunar_sqlite_wal_start(sqlite3 *db, lunar_sqlite_wal *wal) {
  if (!ready()) return;
  wal->truncate_at = LUNAR_SQLITE_WAL_TRUNCATE_PAGES;
  lib.sqlite3_wal_hook(db, wal_hook, wal);
}

void lunar_sqlite_wal_stop(sqlite3 *db) {
  if (ready()) lib.sqlite3_wal_hook(db, NULL, NULL);
}
