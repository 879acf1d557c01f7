// CSQLite: SQLite (Debian's libsqlite3-0), opened with dlopen on first use,
// not linked.
//
// Linking libsqlite3 made the dynamic loader map it and bind its 1,600
// symbols at every start of `lunar`, which was a fifth of `lunar run
// hello.lua`'s instructions, though only a command that opens a store needs
// it. Only libsqlite3-dev's header is used here, for its types and
// constants; every call goes through a `lunar_sqlite3_*` function below,
// which calls SQLite's function of the same name through a table resolved
// once.
#ifndef CSQLITE_H
#define CSQLITE_H

#include <sqlite3.h>

/// Loads SQLite (once, whichever thread asks first); 1 if it is usable, 0
/// if not, and then `lunar_sqlite_load_error` says why.
int lunar_sqlite_load(void);
/// Why SQLite could not be loaded ("cannot load libsqlite3.so.0: ...");
/// empty when it was.
const char *lunar_sqlite_load_error(void);

// SQLite's functions, each as its namesake in sqlite3.h. `open_v2` loads
// SQLite first and fails with SQLITE_CANTOPEN when it cannot; the others
// need a connection or statement it made, and return a failure value
// (SQLITE_MISUSE, 0, NULL) if SQLite is missing.

/// sqlite3_open_v2.
int lunar_sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs);
/// sqlite3_close_v2.
int lunar_sqlite3_close_v2(sqlite3 *db);
/// sqlite3_exec, without a callback.
int lunar_sqlite3_exec(sqlite3 *db, const char *sql);
/// sqlite3_errmsg.
const char *lunar_sqlite3_errmsg(sqlite3 *db);
/// sqlite3_errstr.
const char *lunar_sqlite3_errstr(int code);
/// sqlite3_get_autocommit.
int lunar_sqlite3_get_autocommit(sqlite3 *db);
/// sqlite3_last_insert_rowid.
sqlite3_int64 lunar_sqlite3_last_insert_rowid(sqlite3 *db);
/// sqlite3_changes64.
sqlite3_int64 lunar_sqlite3_changes64(sqlite3 *db);
/// sqlite3_prepare_v3, without the tail.
int lunar_sqlite3_prepare_v3(sqlite3 *db, const char *sql, unsigned int flags, sqlite3_stmt **statement);
/// sqlite3_finalize.
int lunar_sqlite3_finalize(sqlite3_stmt *statement);
/// sqlite3_reset.
int lunar_sqlite3_reset(sqlite3_stmt *statement);
/// sqlite3_clear_bindings.
int lunar_sqlite3_clear_bindings(sqlite3_stmt *statement);
/// sqlite3_step.
int lunar_sqlite3_step(sqlite3_stmt *statement);
/// sqlite3_bind_null.
int lunar_sqlite3_bind_null(sqlite3_stmt *statement, int index);
/// sqlite3_bind_int64.
int lunar_sqlite3_bind_int64(sqlite3_stmt *statement, int index, sqlite3_int64 value);
/// sqlite3_bind_double.
int lunar_sqlite3_bind_double(sqlite3_stmt *statement, int index, double value);
/// sqlite3_bind_text64, copied (SQLITE_TRANSIENT) as UTF-8.
int lunar_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, sqlite3_uint64 length);
/// sqlite3_bind_blob64, copied (SQLITE_TRANSIENT).
int lunar_sqlite3_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, sqlite3_uint64 length);
/// sqlite3_bind_zeroblob.
int lunar_sqlite3_bind_zeroblob(sqlite3_stmt *statement, int index, int length);
/// sqlite3_column_type.
int lunar_sqlite3_column_type(sqlite3_stmt *statement, int column);
/// sqlite3_column_int64.
sqlite3_int64 lunar_sqlite3_column_int64(sqlite3_stmt *statement, int column);
/// sqlite3_column_double.
double lunar_sqlite3_column_double(sqlite3_stmt *statement, int column);
/// sqlite3_column_blob.
const void *lunar_sqlite3_column_blob(sqlite3_stmt *statement, int column);
/// sqlite3_column_text.
const unsigned char *lunar_sqlite3_column_text(sqlite3_stmt *statement, int column);
/// sqlite3_column_bytes.
int lunar_sqlite3_column_bytes(sqlite3_stmt *statement, int column);

/// Makes statements on `db` wait up to `milliseconds` for another
/// connection's lock, retrying after short sleeps (see CSQLite.c).
int lunar_sqlite_busy_timeout(sqlite3 *db, int milliseconds);

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

/// Makes `db` keep its log small after each commit (see CSQLite.c), with
/// `wal` (which must outlive the hook: `lunar_sqlite_wal_stop` removes it).
void lunar_sqlite_wal_start(sqlite3 *db, lunar_sqlite_wal *wal);
/// Removes the hook `lunar_sqlite_wal_start` installed.
void lunar_sqlite_wal_stop(sqlite3 *db);

#endif
