// CHTTP: HTTP requests through Debian's libcurl, loaded on first use.
//
// libcurl is opened with dlopen the first time a request is made, not
// linked: linking it (directly, or through FoundationNetworking's
// URLSession) loads some thirty shared libraries at every start of
// `lunar` and would make `lunar run hello.lua` several times slower.
#ifndef CHTTP_H
#define CHTTP_H

#include <stddef.h>

/// The outcome of one request.
typedef struct lunar_http_response {
  long status;        ///< HTTP status, 0 when no response arrived
  char *body;         ///< response body (malloc'd), may contain zeros
  size_t body_length;
  char *content_type; ///< malloc'd, or NULL
  int error;          ///< 0 ok; else one of LUNAR_HTTP_* below
  char message[256];  ///< what went wrong, for errors
} lunar_http_response;

#define LUNAR_HTTP_OK 0
#define LUNAR_HTTP_UNAVAILABLE 1   ///< libcurl could not be loaded
#define LUNAR_HTTP_TIMEOUT 2
#define LUNAR_HTTP_CANCELLED 3
#define LUNAR_HTTP_CONNECT 4       ///< could not resolve or connect (offline)
#define LUNAR_HTTP_TRANSPORT 5     ///< any other transport failure
#define LUNAR_HTTP_TOO_LARGE 6     ///< the body passed the size limit

/// A flag that stops a request: set by any thread, read by libcurl's
/// progress callback on the transfer's thread (a C11 atomic on both sides).
typedef struct lunar_http_cancel lunar_http_cancel;

/// A new, unset flag (NULL if out of memory).
lunar_http_cancel *lunar_http_cancel_new(void);
/// Sets the flag; the request stops at its next progress callback.
void lunar_http_cancel_set(lunar_http_cancel *flag);
/// Frees a flag no request uses any more.
void lunar_http_cancel_free(lunar_http_cancel *flag);

/// Performs a request, blocking the calling thread. `headers` are
/// "Name: value" lines. Only http and https are spoken, redirects
/// included. The request stops early when `cancel` (may be NULL) is set.
void lunar_http_perform(const char *method, const char *url, const char *const *headers, int header_count,
                        const char *body, size_t body_length, double timeout_seconds, size_t max_body,
                        lunar_http_cancel *cancel, lunar_http_response *response);

/// Frees what a response owns.
void lunar_http_free(lunar_http_response *response);

#endif
