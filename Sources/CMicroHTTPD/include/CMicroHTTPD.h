// CMicroHTTPD: the HTTP server of `lunar serve`, Debian's libmicrohttpd
// opened on first use (CSharedLibrary), so no other command loads it.
#ifndef CMICROHTTPD_H
#define CMICROHTTPD_H

#include <stddef.h>

/// One request, complete with its body, while its handler runs.
typedef struct lunar_http_exchange lunar_http_exchange;

/// Answers one request: it reads the request with the functions below and
/// must call `lunar_http_respond` once. Runs on the server's one thread.
typedef void (*lunar_http_handler)(void *context, lunar_http_exchange *exchange);

/// Opens libmicrohttpd; 1 when it is there, else 0 (`lunar_http_load_error`
/// says why).
int lunar_http_load(void);
/// Why libmicrohttpd could not be opened ("cannot load libmicrohttpd.so.12: ...").
const char *lunar_http_load_error(void);

/// Starts a server on the numeric address `host` (IPv4, or IPv6 when
/// `ipv6`) and `port` (0: any free port), answering every request with
/// `handler` on one thread of its own. A connection idle for
/// `timeout_seconds` is closed; a request's head (line and headers) is
/// bounded by `head_limit` bytes and its body by `body_limit`. Returns the
/// server, or NULL with `error` (`size` bytes) saying why.
void *lunar_http_start(const char *host, int ipv6, unsigned short port, lunar_http_handler handler, void *context,
                       unsigned timeout_seconds, size_t head_limit, size_t body_limit, char *error, size_t size);
/// The port `server` listens on.
unsigned short lunar_http_port(void *server);
/// Stops `server`: no handler runs once this returns.
void lunar_http_stop(void *server);

/// The request's method ("GET").
const char *lunar_http_method(const lunar_http_exchange *exchange);
/// The request's path, without its query, percent-decoded by the server.
const char *lunar_http_path(const lunar_http_exchange *exchange);
/// The value of header `name`, or NULL.
const char *lunar_http_header(const lunar_http_exchange *exchange, const char *name);
/// The value of query argument `name` (decoded), or NULL.
const char *lunar_http_argument(const lunar_http_exchange *exchange, const char *name);
/// The request's body and its length (`*length`); NULL when it had none.
const char *lunar_http_body(const lunar_http_exchange *exchange, size_t *length);
/// Whether the body was longer than the server's body limit (and cut).
int lunar_http_body_too_large(const lunar_http_exchange *exchange);

/// Answers with `status`, the `count` headers (`names[i]: values[i]`) and
/// the `length` bytes of `body` (copied). Returns 1 when queued.
int lunar_http_respond(lunar_http_exchange *exchange, unsigned status, const char *const *names,
                       const char *const *values, int count, const void *body, size_t length);

#endif
