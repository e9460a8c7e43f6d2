/*
 * ts_cli_conn.h - where the CLI's requests go: a trainsize server over
 * HTTP, or the same api/core code in this process (--local).
 *
 * Both answer a request with a status, a content type and a body, so the
 * rest of the CLI cannot tell them apart: in process the request goes to
 * ts_api_handle(), the function the server itself calls for every /v1
 * request (server/ts_route.c), with the headers the HTTP client would
 * send, so the body is the server's byte for byte (tests/cli/
 * test_cli_local.c holds every data-driven API case to that).
 */
#ifndef TS_CLI_CONN_H
#define TS_CLI_CONN_H

#include "ts_cli_http.h"

#include <stdbool.h>

typedef struct ts_conn {
    bool local;      /* answer in process, no server */
    const char *url; /* the server's base URL (not local) */
    long timeout_ms; /* 0 = TS_HTTP_TIMEOUT_MS (not local) */
} ts_conn;

/* One request, as ts_http_request(): body NULL sends none (GET), else it
 * is sent as application/json.  A 4xx/5xx answer is TS_HTTP_OK with its
 * status; an error means no answer came (unreachable, out of memory). */
ts_http_status ts_conn_request(const ts_conn *c, const char *method, const char *path,
                               const char *body, ts_http_response *resp, ts_http_error *err);

/* The same with the body's length and content type given (NULL: no
 * Content-Type), for the tests that send every API case. */
ts_http_status ts_conn_request_raw(const ts_conn *c, const char *method, const char *path,
                                   const char *content_type, const char *body, size_t body_len,
                                   ts_http_response *resp, ts_http_error *err);

/* "local" or the URL, for reports. */
const char *ts_conn_name(const ts_conn *c);

#endif /* TS_CLI_CONN_H */
