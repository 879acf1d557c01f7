// CPostgres: PostgreSQL's client library (Debian's libpq5), opened with
// dlopen on first use, not linked.
//
// Linking libpq made the dynamic loader map it and some twenty libraries it
// needs (gssapi, ldap, gnutls...) and resolve their symbols at every start
// of `lunar`, which made `lunar run hello.lua` about nine times as slow as
// `lua5.4`. Only libpq-dev's header is used here, for its types; every call
// goes through a `lunar_PQ*` function below, which calls libpq's function
// of the same name through a table resolved once.
#ifndef CPOSTGRES_H
#define CPOSTGRES_H

#include <postgresql/libpq-fe.h>

/// Loads libpq (once, whichever thread asks first); 1 if it is usable, 0 if
/// not, and then `lunar_pq_load_error` says why.
int lunar_pq_load(void);
/// Why libpq could not be loaded ("cannot load libpq.so.5: ..."); empty
/// when it was.
const char *lunar_pq_load_error(void);

// libpq's functions, each as its namesake in libpq-fe.h. The two that make
// a connection or read a connection string load libpq first and return
// NULL when it cannot be loaded; the others need an object those made, and
// return a failure value (NULL, 0, CONNECTION_BAD...) if libpq is missing.

/// PQconnectdb.
PGconn *lunar_PQconnectdb(const char *conninfo);
/// PQconnectdbParams.
PGconn *lunar_PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname);
/// PQconninfoParse.
PQconninfoOption *lunar_PQconninfoParse(const char *conninfo, char **errmsg);
/// PQconninfoFree.
void lunar_PQconninfoFree(PQconninfoOption *options);
/// PQfinish.
void lunar_PQfinish(PGconn *conn);
/// PQreset.
void lunar_PQreset(PGconn *conn);
/// PQstatus.
ConnStatusType lunar_PQstatus(const PGconn *conn);
/// PQtransactionStatus.
PGTransactionStatusType lunar_PQtransactionStatus(const PGconn *conn);
/// PQerrorMessage.
char *lunar_PQerrorMessage(const PGconn *conn);
/// PQsocket.
int lunar_PQsocket(const PGconn *conn);
/// PQsetNoticeProcessor.
PQnoticeProcessor lunar_PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg);
/// PQexec.
PGresult *lunar_PQexec(PGconn *conn, const char *query);
/// PQexecParams.
PGresult *lunar_PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                             const char *const *paramValues, const int *paramLengths, const int *paramFormats,
                             int resultFormat);
/// PQprepare.
PGresult *lunar_PQprepare(PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes);
/// PQexecPrepared.
PGresult *lunar_PQexecPrepared(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues,
                               const int *paramLengths, const int *paramFormats, int resultFormat);
/// PQconsumeInput.
int lunar_PQconsumeInput(PGconn *conn);
/// PQnotifies.
PGnotify *lunar_PQnotifies(PGconn *conn);
/// PQfreemem.
void lunar_PQfreemem(void *ptr);
/// PQresultStatus.
ExecStatusType lunar_PQresultStatus(const PGresult *res);
/// PQresultErrorMessage.
char *lunar_PQresultErrorMessage(const PGresult *res);
/// PQresultErrorField.
char *lunar_PQresultErrorField(const PGresult *res, int fieldcode);
/// PQclear.
void lunar_PQclear(PGresult *res);
/// PQntuples.
int lunar_PQntuples(const PGresult *res);
/// PQgetisnull.
int lunar_PQgetisnull(const PGresult *res, int tup_num, int field_num);
/// PQgetlength.
int lunar_PQgetlength(const PGresult *res, int tup_num, int field_num);
/// PQgetvalue.
char *lunar_PQgetvalue(const PGresult *res, int tup_num, int field_num);

#endif
