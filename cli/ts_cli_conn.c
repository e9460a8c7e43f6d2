/*
 * ts_cli_conn.c - a request to the server, or to the api in process.
 */
#include "ts_cli_conn.h"
#include "ts_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In process: what server/ts_route.c's ts_route_dispatch() does with a /v1
 * request, minus the sockets.  The server hands ts_api_handle() the
 * Content-Type header or "" when there is none, and the body it read. */
static ts_http_status local_request(const char *method, const char *path, const char *content_type,
                                    const char *body, size_t body_len, ts_http_response *resp,
                                    ts_http_error *err)
{
    ts_api_response r;

    memset(&r, 0, sizeof r);
    if (ts_api_handle(method, path, content_type != NULL ? content_type : "",
                      body != NULL ? body : "", body_len, &r) != 0) {
        ts_api_response_free(&r);
        err->code = TS_HTTP_ENOMEM;
        snprintf(err->text, sizeof err->text, "out of memory");
        return TS_HTTP_ENOMEM;
    }
    resp->status = (long)r.status;
    resp->body = r.body; /* malloc'd, NUL-terminated: ownership moves */
    resp->len = r.body_len;
    snprintf(resp->content_type, sizeof resp->content_type, "%s",
             r.content_type != NULL ? r.content_type : "");
    return TS_HTTP_OK;
}

ts_http_status ts_conn_request_raw(const ts_conn *c, const char *method, const char *path,
                                   const char *content_type, const char *body, size_t body_len,
                                   ts_http_response *resp, ts_http_error *err)
{
    ts_http_client h = { c->url, 0, c->timeout_ms };

    memset(resp, 0, sizeof *resp);
    if (c->local)
        return local_request(method, path, content_type, body, body_len, resp, err);
    return ts_http_request_raw(&h, method, path, content_type, body, body_len, resp, err);
}

ts_http_status ts_conn_request(const ts_conn *c, const char *method, const char *path,
                               const char *body, ts_http_response *resp, ts_http_error *err)
{
    return ts_conn_request_raw(c, method, path, body != NULL ? "application/json" : NULL, body,
                               body != NULL ? strlen(body) : 0, resp, err);
}

const char *ts_conn_name(const ts_conn *c)
{
    return c->local ? "local" : c->url;
}
