#include "CHTTP.h"

#include <CSharedLibrary.h>
#include <curl/curl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The libcurl functions Lunar uses, resolved once.
static struct {
  CURLcode (*global_init)(long);
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_perform)(CURL *);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  void (*easy_cleanup)(CURL *);
  const char *(*easy_strerror)(CURLcode);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
  int loaded;
  char error[200];
} curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
  const lunar_symbol symbols[] = {
    {"curl_global_init", (void **)&curl.global_init},
    {"curl_easy_init", (void **)&curl.easy_init},
    {"curl_easy_setopt", (void **)&curl.easy_setopt},
    {"curl_easy_perform", (void **)&curl.easy_perform},
    {"curl_easy_getinfo", (void **)&curl.easy_getinfo},
    {"curl_easy_cleanup", (void **)&curl.easy_cleanup},
    {"curl_easy_strerror", (void **)&curl.easy_strerror},
    {"curl_slist_append", (void **)&curl.slist_append},
    {"curl_slist_free_all", (void **)&curl.slist_free_all},
  };
  if (!lunar_openlibrary("libcurl.so.4", symbols, sizeof symbols / sizeof *symbols, curl.error, sizeof curl.error))
    return;
  curl.global_init(CURL_GLOBAL_DEFAULT);
  curl.loaded = 1;
}

typedef struct {
  char *data;
  size_t length;
  size_t capacity;
  size_t limit;
  int too_large;
} buffer;

static size_t on_body(char *chunk, size_t size, size_t count, void *context) {
  buffer *b = (buffer *)context;
  size_t n = size * count;
  if (b->length + n > b->limit) {
    b->too_large = 1;
    return 0;  // makes libcurl stop with a write error
  }
  if (b->length + n + 1 > b->capacity) {
    size_t capacity = b->capacity ? b->capacity * 2 : 16384;
    while (capacity < b->length + n + 1) capacity *= 2;
    char *grown = realloc(b->data, capacity);
    if (grown == NULL) return 0;
    b->data = grown;
    b->capacity = capacity;
  }
  memcpy(b->data + b->length, chunk, n);
  b->length += n;
  b->data[b->length] = 0;
  return n;
}

struct lunar_http_cancel {
  atomic_int set;
};

lunar_http_cancel *lunar_http_cancel_new(void) {
  lunar_http_cancel *flag = malloc(sizeof *flag);
  if (flag != NULL) atomic_init(&flag->set, 0);
  return flag;
}

void lunar_http_cancel_set(lunar_http_cancel *flag) {
  if (flag != NULL) atomic_store_explicit(&flag->set, 1, memory_order_release);
}

void lunar_http_cancel_free(lunar_http_cancel *flag) { free(flag); }

static int on_progress(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
  (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
  lunar_http_cancel *cancel = (lunar_http_cancel *)context;
  return (cancel != NULL && atomic_load_explicit(&cancel->set, memory_order_acquire)) ? 1 : 0;
}

// The only protocols requests and their redirects may use: never file,
// ftp, scp or anything else libcurl was built with.
static const char allowed_protocols[] = "http,https";

void lunar_http_perform(const char *method, const char *url, const char *const *headers, int header_count,
                        const char *body, size_t body_length, double timeout_seconds, size_t max_body,
                        lunar_http_cancel *cancel, lunar_http_response *response) {
  memset(response, 0, sizeof *response);
  pthread_once(&load_once, load);
  if (!curl.loaded) {
    response->error = LUNAR_HTTP_UNAVAILABLE;
    snprintf(response->message, sizeof response->message, "%s", curl.error);
    return;
  }
  CURL *handle = curl.easy_init();
  if (handle == NULL) {
    response->error = LUNAR_HTTP_TRANSPORT;
    snprintf(response->message, sizeof response->message, "cannot start a request");
    return;
  }
  // A libcurl too old to take the allow-list would speak every protocol it
  // knows: refuse to send anything through it.
  if (curl.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, allowed_protocols) != CURLE_OK ||
      curl.easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS_STR, allowed_protocols) != CURLE_OK) {
    curl.easy_cleanup(handle);
    response->error = LUNAR_HTTP_TRANSPORT;
    snprintf(response->message, sizeof response->message, "this libcurl cannot be limited to http and https");
    return;
  }
  buffer received = {0};
  received.limit = max_body;
  struct curl_slist *list = NULL;
  for (int i = 0; i < header_count; i++) list = curl.slist_append(list, headers[i]);

  curl.easy_setopt(handle, CURLOPT_URL, url);
  curl.easy_setopt(handle, CURLOPT_CUSTOMREQUEST, method);
  curl.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl.easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 1L);
  if (list) curl.easy_setopt(handle, CURLOPT_HTTPHEADER, list);
  if (body != NULL) {
    curl.easy_setopt(handle, CURLOPT_POSTFIELDS, body);
    curl.easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
  }
  if (timeout_seconds > 0) {
    // NaN fails the test above; a timeout too long to count in milliseconds is none.
    double milliseconds = timeout_seconds * 1000;
    if (milliseconds < (double)LONG_MAX / 2) curl.easy_setopt(handle, CURLOPT_TIMEOUT_MS, (long)milliseconds);
  }
  curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_body);
  curl.easy_setopt(handle, CURLOPT_WRITEDATA, &received);
  curl.easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
  curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl.easy_setopt(handle, CURLOPT_XFERINFODATA, (void *)cancel);

  CURLcode code = curl.easy_perform(handle);
  long status = 0;
  curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
  char *type = NULL;
  curl.easy_getinfo(handle, CURLINFO_CONTENT_TYPE, &type);
  response->status = status;
  if (type != NULL) response->content_type = strdup(type);
  response->body = received.data;
  response->body_length = received.length;
  switch (code) {
    case CURLE_OK: response->error = LUNAR_HTTP_OK; break;
    case CURLE_OPERATION_TIMEDOUT: response->error = LUNAR_HTTP_TIMEOUT; break;
    case CURLE_ABORTED_BY_CALLBACK: response->error = LUNAR_HTTP_CANCELLED; break;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT: response->error = LUNAR_HTTP_CONNECT; break;
    case CURLE_WRITE_ERROR:
      response->error = received.too_large ? LUNAR_HTTP_TOO_LARGE : LUNAR_HTTP_TRANSPORT;
      break;
    default: response->error = LUNAR_HTTP_TRANSPORT; break;
  }
  if (code != CURLE_OK) snprintf(response->message, sizeof response->message, "%s", curl.easy_strerror(code));
  if (list) curl.slist_free_all(list);
  curl.easy_cleanup(handle);
}

void lunar_http_free(lunar_http_response *response) {
  free(response->body);
  free(response->content_type);
  response->body = NULL;
  response->content_type = NULL;
}
