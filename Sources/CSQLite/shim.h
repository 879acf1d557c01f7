#include <sqlite3.h>
#include <stdint.h>
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
