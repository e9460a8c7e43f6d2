/*
 * ts_cli_http.h - the CLI's one HTTP exchange with a trainsize server.
 *
 * A thin libcurl wrapper: one request, a capped response buffer, explicit
 * timeouts, and a status enum plus a caller-owned error text instead of
 * curl's codes leaking into the rest of the client.
 */
#ifndef TS_CLI_HTTP_H
#define TS_CLI_HTTP_H

#include <stdbool.h>
#include <stddef.h>

/* Largest response body the client keeps; /v1/plan is a few KiB, so a
 * bigger answer means something that is not a trainsize server. */
#define TS_HTTP_BODY_MAX (8u * 1024u * 1024u)

#define TS_HTTP_CONNECT_TIMEOUT_MS 3000L
#define TS_HTTP_TIMEOUT_MS         30000L

typedef enum ts_http_status {
    TS_HTTP_OK = 0,
    TS_HTTP_EURL,     /* base URL is not http(s)://... */
    TS_HTTP_ECONNECT, /* refused, unresolvable, unreachable */
    TS_HTTP_ETIMEOUT, /* connect or total timeout */
    TS_HTTP_ETOOBIG,  /* response past TS_HTTP_BODY_MAX */
    TS_HTTP_ENOMEM,
    TS_HTTP_EOTHER /* any other transfer failure */
} ts_http_status;

typedef struct ts_http_error {
    ts_http_status code;
    char text[256];
} ts_http_error;

typedef struct ts_http_client {
    const char *base_url;    /* "http://127.0.0.1:8080", trailing '/' ok */
    long connect_timeout_ms; /* 0 = TS_HTTP_CONNECT_TIMEOUT_MS */
    long timeout_ms;         /* 0 = TS_HTTP_TIMEOUT_MS */
} ts_http_client;

typedef struct ts_http_response {
    long status; /* HTTP status code */
    char *body;  /* malloc'd, NUL-terminated, never NULL on TS_HTTP_OK */
    size_t len;
    char content_type[128]; /* "" when the server sent none */
} ts_http_response;

/* Call once per process around all requests (wraps curl_global_*). */
bool ts_http_global_init(void);
void ts_http_global_cleanup(void);

/* True when base looks like an http:// or https:// URL with a host. */
bool ts_http_url_ok(const char *base);

/* One request.  body == NULL sends no body (GET); otherwise it is sent as
 * application/json.  On TS_HTTP_OK *resp owns a body the caller frees with
 * ts_http_response_free(); on failure *resp is empty and *err says why. */
ts_http_status ts_http_request(const ts_http_client *c, const char *method, const char *path,
                               const char *body, ts_http_response *resp, ts_http_error *err);

/* The same with the body's length and its Content-Type given (NULL: the
 * header is left out; it is sent even without a body). */
ts_http_status ts_http_request_raw(const ts_http_client *c, const char *method, const char *path,
                                   const char *content_type, const char *body, size_t body_len,
                                   ts_http_response *resp, ts_http_error *err);

void ts_http_response_free(ts_http_response *resp);

/* True for application/problem+json (RFC 9457). */
bool ts_http_is_problem(const ts_http_response *resp);

#endif /* TS_CLI_HTTP_H */
