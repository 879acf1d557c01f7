#include "CPostgres.h"

#include <CSharedLibrary.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

// Every libpq function Lunar calls. Their types are those libpq-fe.h
// declares (`__typeof__` reads the declaration, nothing is linked).
#define LUNAR_PQ_FUNCTIONS(X) \
  X(PQconnectdb) \
  X(PQconnectdbParams) \
  X(PQconninfoParse) \
  X(PQconninfoFree) \
  X(PQfinish) \
  X(PQreset) \
  X(PQstatus) \
  X(PQtransactionStatus) \
  X(PQerrorMessage) \
  X(PQsocket) \
  X(PQsetNoticeProcessor) \
  X(PQexec) \
  X(PQexecParams) \
  X(PQprepare) \
  X(PQexecPrepared) \
  X(PQconsumeInput) \
  X(PQnotifies) \
  X(PQfreemem) \
  X(PQresultStatus) \
  X(PQresultErrorMessage) \
  X(PQresultErrorField) \
  X(PQclear) \
  X(PQntuples) \
  X(PQgetisnull) \
  X(PQgetlength) \
  X(PQgetvalue)

// The table, written once by `load` under pthread_once. `loaded` is set
// last, with release order: a call that sees it set sees the whole table,
// whichever thread loaded it.
static struct {
#define FIELD(name) __typeof__(&name) name;
  LUNAR_PQ_FUNCTIONS(FIELD)
#undef FIELD
  atomic_int loaded;
  char error[256];
} pq;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

// What the calls that return a message say when libpq is missing.
static char not_loaded[] = "libpq is not loaded";

static void load(void) {
#define SYMBOL(name) {#name, (void **)&pq.name},
  const lunar_symbol symbols[] = {LUNAR_PQ_FUNCTIONS(SYMBOL)};
#undef SYMBOL
  // The soname of Debian's libpq5; libpq-dev's unversioned libpq.so is
  // only there for linking.
  if (lunar_openlibrary("libpq.so.5", symbols, sizeof symbols / sizeof *symbols, pq.error, sizeof pq.error))
    atomic_store_explicit(&pq.loaded, 1, memory_order_release);
}

static int ready(void) { return atomic_load_explicit(&pq.loaded, memory_order_acquire); }

int lunar_pq_load(void) {
  pthread_once(&load_once, load);
  return ready();
}

const char *lunar_pq_load_error(void) {
  pthread_once(&load_once, load);
  return pq.error;
}

PGconn *lunar_PQconnectdb(const char *conninfo) {
  return lunar_pq_load() ? pq.PQconnectdb(conninfo) : NULL;
}

PGconn *lunar_PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname) {
  return lunar_pq_load() ? pq.PQconnectdbParams(keywords, values, expand_dbname) : NULL;
}

PQconninfoOption *lunar_PQconninfoParse(const char *conninfo, char **errmsg) {
  if (!lunar_pq_load()) {
    if (errmsg != NULL) *errmsg = NULL;
    return NULL;
  }
  return pq.PQconninfoParse(conninfo, errmsg);
}

// The rest take what the functions above made, so libpq is loaded when
// they are reached; the check keeps a stray call from jumping to NULL.
void lunar_PQconninfoFree(PQconninfoOption *options) {
  if (ready()) pq.PQconninfoFree(options);
}

void lunar_PQfinish(PGconn *conn) {
  if (ready()) pq.PQfinish(conn);
}

void lunar_PQreset(PGconn *conn) {
  if (ready()) pq.PQreset(conn);
}

ConnStatusType lunar_PQstatus(const PGconn *conn) { return ready() ? pq.PQstatus(conn) : CONNECTION_BAD; }

PGTransactionStatusType lunar_PQtransactionStatus(const PGconn *conn) {
  return ready() ? pq.PQtransactionStatus(conn) : PQTRANS_UNKNOWN;
}

char *lunar_PQerrorMessage(const PGconn *conn) { return ready() ? pq.PQerrorMessage(conn) : not_loaded; }

int lunar_PQsocket(const PGconn *conn) { return ready() ? pq.PQsocket(conn) : -1; }

PQnoticeProcessor lunar_PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg) {
  return ready() ? pq.PQsetNoticeProcessor(conn, proc, arg) : NULL;
}

PGresult *lunar_PQexec(PGconn *conn, const char *query) { return ready() ? pq.PQexec(conn, query) : NULL; }

PGresult *lunar_PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                             const char *const *paramValues, const int *paramLengths, const int *paramFormats,
                             int resultFormat) {
  if (!ready()) return NULL;
  return pq.PQexecParams(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat);
}

PGresult *lunar_PQprepare(PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes) {
  return ready() ? pq.PQprepare(conn, stmtName, query, nParams, paramTypes) : NULL;
}

PGresult *lunar_PQexecPrepared(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues,
                               const int *paramLengths, const int *paramFormats, int resultFormat) {
  if (!ready()) return NULL;
  return pq.PQexecPrepared(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}

int lunar_PQconsumeInput(PGconn *conn) { return ready() ? pq.PQconsumeInput(conn) : 0; }

PGnotify *lunar_PQnotifies(PGconn *conn) { return ready() ? pq.PQnotifies(conn) : NULL; }

void lunar_PQfreemem(void *ptr) {
  if (ready()) pq.PQfreemem(ptr);
}

ExecStatusType lunar_PQresultStatus(const PGresult *res) {
  return ready() ? pq.PQresultStatus(res) : PGRES_FATAL_ERROR;
}

char *lunar_PQresultErrorMessage(const PGresult *res) { return ready() ? pq.PQresultErrorMessage(res) : not_loaded; }

char *lunar_PQresultErrorField(const PGresult *res, int fieldcode) {
  return ready() ? pq.PQresultErrorField(res, fieldcode) : NULL;
}

void lunar_PQclear(PGresult *res) {
  if (ready()) pq.PQclear(res);
}

int lunar_PQntuples(const PGresult *res) { return ready() ? pq.PQntuples(res) : 0; }

int lunar_PQgetisnull(const PGresult *res, int tup_num, int field_num) {
  return ready() ? pq.PQgetisnull(res, tup_num, field_num) : 1;
}

int lunar_PQgetlength(const PGresult *res, int tup_num, int field_num) {
  return ready() ? pq.PQgetlength(res, tup_num, field_num) : 0;
}

char *lunar_PQgetvalue(const PGresult *res, int tup_num, int field_num) {
  return ready() ? pq.PQgetvalue(res, tup_num, field_num) : NULL;
}
