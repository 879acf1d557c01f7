#include "CMicroHTTPD.h"

#include <CSharedLibrary.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Every libmicrohttpd function Lunar calls; their types are the header's
// (`__typeof__` reads the declaration, nothing is linked).
#define LUNAR_MHD_FUNCTIONS(X) \
  X(MHD_start_daemon) \
  X(MHD_stop_daemon) \
  X(MHD_get_daemon_info) \
  X(MHD_lookup_connection_value) \
  X(MHD_create_response_from_buffer) \
  X(MHD_add_response_header) \
  X(MHD_queue_response) \
  X(MHD_destroy_response)

static struct {
#define FIELD(name) __typeof__(&name) name;
  LUNAR_MHD_FUNCTIONS(FIELD)
#undef FIELD
  atomic_int loaded;
  char error[256];
} mhd;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
#define SYMBOL(name) {#name, (void **)&mhd.name},
  const lunar_symbol symbols[] = {LUNAR_MHD_FUNCTIONS(SYMBOL)};
#undef SYMBOL
  if (lunar_openlibrary("libmicrohttpd.so.12", symbols, sizeof symbols / sizeof *symbols, mhd.error, sizeof mhd.error))
    atomic_store_explicit(&mhd.loaded, 1, memory_order_release);
}

int lunar_http_load(void) {
  pthread_once(&load_once, load);
  return atomic_load_explicit(&mhd.loaded, memory_order_acquire);
}

const char *lunar_http_load_error(void) {
  pthread_once(&load_once, load);
  return mhd.error;
}

// What the server was started with.
struct server {
  struct MHD_Daemon *daemon;
  lunar_http_handler handler;
  void *context;
  size_t body_limit;
};

// A request being read: its body so far.
struct lunar_http_exchange {
  struct MHD_Connection *connection;
  const char *method;
  const char *path;
  char *body;
  size_t length;
  int too_large;
  int responded;
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state) {
  (void)version;
  struct server *server = cls;
  struct lunar_http_exchange *exchange = *state;
  if (exchange == NULL) {
    // The first call has the head only; the body, if any, comes next.
    exchange = calloc(1, sizeof *exchange);
    if (exchange == NULL) return MHD_NO;
    *state = exchange;
    return MHD_YES;
  }
  if (*upload_size > 0) {
    size_t room = server->body_limit - exchange->length;
    size_t take = *upload_size < room ? *upload_size : room;
    if (take < *upload_size) exchange->too_large = 1;
    if (take > 0) {
      char *grown = realloc(exchange->body, exchange->length + take + 1);
      if (grown == NULL) return MHD_NO;
      memcpy(grown + exchange->length, upload, take);
      exchange->body = grown;
      exchange->length += take;
      exchange->body[exchange->length] = '\0';
    }
    *upload_size = 0;
    return MHD_YES;
  }
  exchange->connection = connection;
  exchange->method = method;
  exchange->path = url;
  server->handler(server->context, exchange);
  return exchange->responded ? MHD_YES : MHD_NO;
}

static void completed(void *cls, struct MHD_Connection *connection, void **state, enum MHD_RequestTerminationCode code) {
  (void)cls, (void)connection, (void)code;
  struct lunar_http_exchange *exchange = *state;
  if (exchange == NULL) return;
  free(exchange->body);
  free(exchange);
  *state = NULL;
}

void *lunar_http_start(const char *host, int ipv6, unsigned short port, lunar_http_handler handler, void *context,
                       unsigned timeout_seconds, size_t head_limit, size_t body_limit, char *error, size_t size) {
  if (!lunar_http_load()) {
    snprintf(error, size, "needs libmicrohttpd12 (%s)", mhd.error);
    return NULL;
  }
  struct sockaddr_in address4;
  struct sockaddr_in6 address6;
  struct sockaddr *address;
  memset(&address4, 0, sizeof address4);
  memset(&address6, 0, sizeof address6);
  if (ipv6) {
    address6.sin6_family = AF_INET6;
    address6.sin6_port = htons(port);
    if (inet_pton(AF_INET6, host, &address6.sin6_addr) != 1) goto bad_address;
    address = (struct sockaddr *)&address6;
  } else {
    address4.sin_family = AF_INET;
    address4.sin_port = htons(port);
    if (inet_pton(AF_INET, host, &address4.sin_addr) != 1) goto bad_address;
    address = (struct sockaddr *)&address4;
  }
  struct server *server = calloc(1, sizeof *server);
  if (server == NULL) {
    snprintf(error, size, "out of memory");
    return NULL;
  }
  server->handler = handler;
  server->context = context;
  server->body_limit = body_limit;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | (ipv6 ? MHD_USE_IPv6 : 0);
  server->daemon = mhd.MHD_start_daemon(
    flags, port, NULL, NULL, answer, server, MHD_OPTION_SOCK_ADDR, address, MHD_OPTION_CONNECTION_TIMEOUT,
    timeout_seconds, MHD_OPTION_CONNECTION_MEMORY_LIMIT, head_limit, MHD_OPTION_CONNECTION_LIMIT, 1000u,
    MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
  if (server->daemon == NULL) {
    free(server);
    snprintf(error, size, "cannot listen on %s port %u (in use, or not an address of this host)", host, port);
    return NULL;
  }
  return server;
bad_address:
  snprintf(error, size, "'%s' is not a numeric IP address", host);
  return NULL;
}

unsigned short lunar_http_port(void *server) {
  const union MHD_DaemonInfo *info = mhd.MHD_get_daemon_info(((struct server *)server)->daemon, MHD_DAEMON_INFO_BIND_PORT);
  return info == NULL ? 0 : info->port;
}

void lunar_http_stop(void *server) {
  mhd.MHD_stop_daemon(((struct server *)server)->daemon);
  free(server);
}

const char *lunar_http_method(const lunar_http_exchange *exchange) { return exchange->method; }

const char *lunar_http_path(const lunar_http_exchange *exchange) { return exchange->path; }

const char *lunar_http_header(const lunar_http_exchange *exchange, const char *name) {
  return mhd.MHD_lookup_connection_value(exchange->connection, MHD_HEADER_KIND, name);
}

const char *lunar_http_argument(const lunar_http_exchange *exchange, const char *name) {
  return mhd.MHD_lookup_connection_value(exchange->connection, MHD_GET_ARGUMENT_KIND, name);
}

const char *lunar_http_body(const lunar_http_exchange *exchange, size_t *length) {
  *length = exchange->length;
  return exchange->body;
}

int lunar_http_body_too_large(const lunar_http_exchange *exchange) { return exchange->too_large; }

int lunar_http_respond(lunar_http_exchange *exchange, unsigned status, const char *const *names,
                       const char *const *values, int count, const void *body, size_t length) {
  struct MHD_Response *response = mhd.MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
  if (response == NULL) return 0;
  for (int i = 0; i < count; i++) mhd.MHD_add_response_header(response, names[i], values[i]);
  enum MHD_Result queued = mhd.MHD_queue_response(exchange->connection, status, response);
  mhd.MHD_destroy_response(response);
  exchange->responded = queued == MHD_YES;
  return exchange->responded;
}
