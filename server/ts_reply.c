/*
 * ts_reply.c - the daemon's responses (ts_server_int.h): the headers
 * every answer carries, api and problem answers, queueing on MHD.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_server_int.h"

/* Headers for every response.  The dashboard loads its own scripts and
 * styles only (no inline code, no third parties): 'self' is all it
 * needs, and nothing may frame it (clickjacking) or learn our URLs from
 * a Referer.  API answers are data, never documents: 'none'. */
const char ts_reply_csp_dashboard[] =
    "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
static const char csp_api[] = "default-src 'none'; frame-ancestors 'none'";

/* Every header of r onto resp; 0 when MHD ran out of memory. */
int ts_reply_headers(ts_server *s, struct MHD_Response *resp, const ts_reply *r)
{
    int ok = 1;
    if (r->content_type != NULL)
        ok &=
            MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type) == MHD_YES;
    ok &= MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff") == MHD_YES;
    ok &= MHD_add_response_header(resp, "Content-Security-Policy",
                                  r->csp != NULL ? r->csp : csp_api) == MHD_YES;
    /* Older browsers ignore frame-ancestors; X-Frame-Options covers them. */
    ok &= MHD_add_response_header(resp, "X-Frame-Options", "DENY") == MHD_YES;
    ok &= MHD_add_response_header(resp, "Referrer-Policy", "no-referrer") == MHD_YES;
    if (r->allow != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow) == MHD_YES;
    if (r->cache_control != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, r->cache_control) ==
              MHD_YES;
    if (r->etag != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, r->etag) == MHD_YES;
    if (r->encoding != NULL)
        ok &=
            MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, r->encoding) == MHD_YES;
    if (r->vary != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, r->vary) == MHD_YES;
    if (r->retry_after != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, r->retry_after) == MHD_YES;
    /* While draining, tell keep-alive clients to reconnect elsewhere;
     * after a framing error, the rest of the stream cannot be trusted. */
    if (atomic_load(&s->draining) || r->close)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close") == MHD_YES;
    return ok;
}

/* What went out: for the log and the metrics. */
void ts_reply_answered(ts_req *rq, unsigned status, size_t len)
{
    rq->answered = 1;
    rq->status = status;
    /* MHD sends headers only for HEAD; log what went on the wire. */
    rq->bytes = strcmp(rq->method, MHD_HTTP_METHOD_HEAD) == 0 ? 0 : len;
}

/* Queue r.  With keep, a queued response is handed to the caller (its
 * reference) instead of being released: the answer cache holds it. */
enum MHD_Result ts_reply_queue_keep(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                    const ts_reply *r, struct MHD_Response **keep)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(r->len, r->body, r->mode);
    if (resp == NULL) {
        /* MHD took no ownership on failure. */
        if (r->mode == MHD_RESPMEM_MUST_FREE)
            free(r->body);
        return MHD_NO;
    }
    enum MHD_Result ret = MHD_NO;
    if (ts_reply_headers(s, resp, r))
        ret = MHD_queue_response(c, r->status, resp);
    if (ret == MHD_YES && keep != NULL)
        *keep = resp;
    else
        MHD_destroy_response(resp);
    if (ret == MHD_YES)
        ts_reply_answered(rq, r->status, r->len);
    return ret;
}

enum MHD_Result ts_reply_queue(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                               const ts_reply *r)
{
    return ts_reply_queue_keep(s, c, rq, r, NULL);
}

/* An api response as a reply, taking over its malloc'd body (ts_api.h). */
static ts_reply api_reply(ts_api_response *ar, int rc, const char *allow)
{
    ts_reply r = {
        .status = ar->status,
        .content_type = ar->content_type,
        .body = ar->body,
        .len = ar->body_len,
        /* rc == -1: a static out-of-memory body that must not be freed. */
        .mode = rc == 0 ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT,
        .allow = allow != NULL ? allow : ar->allow,
        .cache_control = "no-store",
    };
    if (rc == 0)
        ar->body = NULL; /* now the reply's */
    ts_api_response_free(ar);
    return r;
}

/* Send an api response, taking over its malloc'd body. */
enum MHD_Result ts_reply_api_keep(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                  ts_api_response *ar, int rc, const char *allow,
                                  struct MHD_Response **keep)
{
    ts_reply r = api_reply(ar, rc, allow);
    return ts_reply_queue_keep(s, c, rq, &r, keep);
}

enum MHD_Result ts_reply_api(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                             ts_api_response *ar, int rc, const char *allow)
{
    return ts_reply_api_keep(s, c, rq, ar, rc, allow, NULL);
}

/* A problem answer of type slug.  Its status and title come from the one
 * problem-type table (api/ts_problem.c), so the server and the api cannot
 * give one type two statuses or two titles. */
enum MHD_Result ts_reply_problem(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                 ts_problem slug, const char *detail, const char *allow)
{
    ts_api_response ar;
    memset(&ar, 0, sizeof ar);
    int rc = ts_api_problem(&ar, slug, detail, NULL);
    return ts_reply_api(s, c, rq, &ar, rc, allow);
}

/* A problem answer after which the connection is closed: the bytes that
 * follow (an unread body, a smuggled request) are never parsed. */
enum MHD_Result ts_reply_problem_close(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                       ts_problem slug, const char *detail)
{
    ts_api_response ar;
    memset(&ar, 0, sizeof ar);
    int rc = ts_api_problem(&ar, slug, detail, NULL);
    ts_reply r = api_reply(&ar, rc, NULL);
    r.close = 1;
    rq->linger = 1;
    return ts_reply_queue(s, c, rq, &r);
}

/* Every worker busy and the queue full: 503 at once, not a wait behind
 * them (issue 22).  Retry-After (RFC 9110 10.2.3) in seconds: the api's
 * work budget keeps one request under a second. */
enum MHD_Result ts_reply_busy(ts_server *s, struct MHD_Connection *c, ts_req *rq)
{
    char detail[160];
    snprintf(detail, sizeof detail,
             "all %u workers are busy and %u requests are waiting; retry shortly", s->cfg.threads,
             s->cfg.queue_max);
    ts_api_response ar;
    memset(&ar, 0, sizeof ar);
    int rc = ts_api_problem(&ar, TS_PROB_SERVER_BUSY, detail, NULL);
    ts_reply r = api_reply(&ar, rc, NULL);
    r.retry_after = "1";
    return ts_reply_queue(s, c, rq, &r);
}

enum MHD_Result ts_reply_too_big(ts_server *s, struct MHD_Connection *c, ts_req *rq)
{
    char detail[96];
    snprintf(detail, sizeof detail, "request body exceeds the %zu byte limit", s->cfg.body_max);
    /* Closed after: the body behind it is never read. */
    return ts_reply_problem_close(s, c, rq, TS_PROB_PAYLOAD_TOO_LARGE, detail);
}

enum MHD_Result ts_reply_not_found(ts_server *s, struct MHD_Connection *c, ts_req *rq)
{
    rq->route = s->r_other;
    return ts_reply_problem(s, c, rq, TS_PROB_NOT_FOUND, "no such resource", NULL);
}

enum MHD_Result ts_reply_const(ts_server *s, struct MHD_Connection *c, ts_req *rq, unsigned status,
                               const char *body, size_t len)
{
    ts_reply r = {
        .status = status,
        .content_type = "text/plain; charset=utf-8",
        .body = (char *)(uintptr_t)body, /* PERSISTENT: MHD only reads it */
        .len = len,
        .mode = MHD_RESPMEM_PERSISTENT,
        .cache_control = "no-store",
    };
    return ts_reply_queue(s, c, rq, &r);
}

/* Catalogue entry e as a reply: the 200, or the 304 for a matching
 * If-None-Match (RFC 9110 15.4.5: the same validator and caching
 * headers, no body), in the identity or (gz, where e has one) the gzip
 * coding.  The body is the cache's: MHD only reads it. */
ts_reply ts_reply_cat(const ts_cat_entry *e, bool not_modified, bool gz)
{
    ts_reply r = {
        .status = not_modified ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK,
        .content_type = not_modified ? NULL : e->content_type,
        .body = not_modified ? NULL
                : gz         ? e->gz
                             : e->body,
        .len = not_modified ? 0
               : gz         ? e->gzlen
                            : e->len,
        .mode = MHD_RESPMEM_PERSISTENT,
        /* Stored, but revalidated: a new build may change them. */
        .cache_control = "no-cache",
        .etag = gz ? e->etag_gz : e->etag,
        .encoding = gz ? "gzip" : NULL,
        .vary = e->gz != NULL ? MHD_HTTP_HEADER_ACCEPT_ENCODING : NULL,
    };
    return r;
}
