/*
 * ts_server.c - libmicrohttpd front end for the /v1 api.
 *
 * Per request the daemon calls on_request() several times: once when the
 * headers are in (we allocate the request state and check Content-Length),
 * once per body chunk (appended to a capped buffer, or discarded once the
 * cap is crossed), and once with no data, when we answer.  on_completed()
 * then records metrics, writes the access-log line and frees the state.
 * Nothing request-specific lives outside the ts_req hung on the connection.
 *
 * Hardening (issue 14), each closing a hole libmicrohttpd 0.9.75 leaves:
 *  - every connection is on a ts_guard list with a deadline for the whole
 *    request (headers and body), armed when it opens and after each
 *    response; slow clients are shut down past it (slowloris);
 *  - the URI log callback sees the raw request line first: requests MHD
 *    would hold unanswered (a thousand query arguments exhaust its pool
 *    and it then never replies) are closed at once;
 *  - framing that a proxy may read differently (two Content-Lengths,
 *    Transfer-Encoding with Content-Length, a coding other than
 *    "chunked", no Host in HTTP/1.1) is answered 400/501 and closed
 *    (RFC 9112 6.1, 6.3; RFC 9110 7.2);
 *  - a chunked body crossing the cap drops the connection (MHD cannot
 *    queue a response mid-upload);
 *  - responses MHD makes itself are still logged and counted.
 *
 * The catalogue answers (ts_cat.h) are built once at start, with their
 * MHD responses (200 and 304): a GET of one queues the same response
 * object every time (MHD counts its references), no copy, no headers
 * rebuilt.
 */
#include "ts_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "ts_api.h"
#include "ts_buf.h"
#include "ts_memo.h"
#include "ts_cat.h"
#include "ts_etag.h"
#include "ts_guard.h"
#include "ts_gzip.h"
#include "ts_http.h"
#include "ts_metrics.h"
#include "ts_static.h"
#include "ts_work.h"

#ifndef TS_VERSION
#define TS_VERSION "unknown"
#endif

/* libmicrohttpd's per-connection pool: request line, headers, the
 * response head.  0.9.75 zeroes all of it after every request
 * (MHD_pool_reset in memorypool.c), so its size is a per-request
 * memset: 16 KiB (64 KiB cost ~2.5 us of a 7 us GET on loopback).
 * Header fields past ~12 KiB, or 300 tiny ones, get MHD's 431. */
#define CONN_MEMORY_LIMIT (16u * 1024u)
#define LOG_PATH_MAX 200
/* More query arguments than any route reads (none does today) by far;
 * MHD takes ~48 B of the same pool per argument, on top of the request
 * line, and stalls when the pool runs out (it cannot build its own
 * 431), so we stop well before: at QUERY_ARGS_MAX arguments, or when
 * the URI and QUERY_ARG_COST per argument pass URI_POOL_BUDGET (found:
 * 120 arguments of 70 bytes held a 16 KiB pool). */
#define QUERY_ARGS_MAX 128
#define QUERY_ARG_COST 64u
#define URI_POOL_BUDGET (CONN_MEMORY_LIMIT - 4096u)
/* How often the watchdog looks at deadlines: the close lands within one
 * tick of the deadline. */
#define GUARD_TICK_MS 100u
/* Under pressure (3/4 of --max-conns open) a request gets this long. */
#define PRESSURE_MS 1000u

/* Headers for every response.  The dashboard loads its own scripts and
 * styles only (no inline code, no third parties): 'self' is all it
 * needs, and nothing may frame it (clickjacking) or learn our URLs from
 * a Referer.  API answers are data, never documents: 'none'. */
static const char csp_dashboard[] =
    "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
static const char csp_api[] = "default-src 'none'; frame-ancestors 'none'";

struct ts_server {
    ts_config cfg;
    struct MHD_Daemon *daemon;
    ts_metrics *metrics;
    char *web_root;          /* realpath of cfg.web_root, NULL if missing */
    atomic_bool draining;
    MHD_socket quiesced_fd;  /* ours to close after MHD_stop_daemon */
    ts_guard *guard;         /* request deadlines */
    unsigned port;
    char url[96];
    size_t r_livez, r_readyz, r_metrics, r_static, r_other, r_mhd;
    ts_cat cat;              /* catalogue answers, read-only once started */
    /* [i][gz][nm]: the 200 (nm 0) and 304 (nm 1) of cat.e[i], identity
     * (gz 0) or gzip (gz 1); NULL: built per request. */
    struct MHD_Response *cat_resp[TS_CAT_MAX][2][2];
    size_t cat_route[TS_CAT_MAX];             /* metrics route of cat.e[i] */
    ts_static_status openapi_st;  /* how reading cfg.openapi at start went */
    ts_memo *memo;           /* recent estimate answers; NULL: off */
    ts_work *work;           /* workers for the api's computing */
};

/* State of one connection (MHD's socket context). */
typedef struct ts_conn {
    ts_guard_conn *gc;       /* NULL if the guard had no memory */
    unsigned requests;       /* requests seen by the URI callback */
    unsigned completed;      /* ...and finished through on_completed */
} ts_conn;

/* Where a request handed to the worker pool is. */
typedef enum req_work {
    WORK_NONE = 0,           /* never handed over */
    WORK_QUEUED,             /* suspended: queued or running */
    WORK_DONE,               /* ar/rc filled, connection resumed */
    WORK_CANCELLED,          /* the pool stopped first: close */
    WORK_ANSWERED,           /* ar went into a response */
} req_work;

/* State of one request, owned by its connection. */
typedef struct ts_req {
    ts_conn *conn;           /* may be NULL (out of memory at accept) */
    int started;             /* on_request has seen the headers */
    const char *dropped;     /* why we closed without an answer, or NULL */
    struct timespec t0;
    ts_buf body;
    int too_big;             /* body crossed the cap: discard the rest */
    int answered;            /* a response is queued */
    unsigned status;         /* 0 until answered */
    size_t bytes;            /* response body length */
    size_t route;            /* metrics route index */
    char method[16];
    char path[LOG_PATH_MAX + 1];
    /* Api work (ts_work.h).  While WORK_QUEUED the connection is
     * suspended: MHD touches neither it nor this request, and the worker
     * alone writes ar and rc, then resumes the connection (MHD's mutex
     * orders those writes before the handler reads them).  api_method,
     * url and ct are MHD's strings, valid until on_completed. */
    ts_work_job job;
    struct MHD_Connection *c;
    req_work work;
    const char *api_method, *url, *ct;
    ts_api_response ar;
    int rc;
    bool memo;               /* remember a 200 under key */
    ts_memo_key key;
} ts_req;

typedef struct reply {
    unsigned status;
    const char *content_type;
    char *body;
    size_t len;
    enum MHD_ResponseMemoryMode mode;
    const char *allow;
    const char *cache_control;
    const char *etag;
    const char *csp;         /* NULL: csp_api */
    const char *encoding;    /* Content-Encoding, NULL: identity */
    const char *vary;        /* Vary, NULL: none */
    const char *retry_after; /* Retry-After, NULL: none */
    int close;               /* send "Connection: close" and close */
} reply;

/* Probes read the status only (Kubernetes: 200-399 passes); the body is
 * one word of text/plain, as api/openapi.json documents. */
static const char livez_body[] = "ok\n";
static const char ready_body[] = "ready\n";
static const char draining_body[] = "draining\n";
static const char ops_allow[] = "GET, HEAD";

static uint64_t elapsed_ns(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int64_t ns = (int64_t)(t1.tv_sec - t0->tv_sec) * 1000000000
                 + (t1.tv_nsec - t0->tv_nsec);
    return ns > 0 ? (uint64_t)ns : 0;
}

/* ------------------------------------------------------------------ */
/* Responses                                                           */
/* ------------------------------------------------------------------ */

/* Every header of r onto resp; 0 when MHD ran out of memory. */
static int add_headers(ts_server *s, struct MHD_Response *resp, const reply *r)
{
    int ok = 1;
    if (r->content_type != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                      r->content_type) == MHD_YES;
    ok &= MHD_add_response_header(resp, "X-Content-Type-Options",
                                  "nosniff") == MHD_YES;
    ok &= MHD_add_response_header(resp, "Content-Security-Policy",
                                  r->csp != NULL ? r->csp : csp_api) == MHD_YES;
    /* Older browsers ignore frame-ancestors; X-Frame-Options covers them. */
    ok &= MHD_add_response_header(resp, "X-Frame-Options", "DENY") == MHD_YES;
    ok &= MHD_add_response_header(resp, "Referrer-Policy",
                                  "no-referrer") == MHD_YES;
    if (r->allow != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
                                      r->allow) == MHD_YES;
    if (r->cache_control != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
                                      r->cache_control) == MHD_YES;
    if (r->etag != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG,
                                      r->etag) == MHD_YES;
    if (r->encoding != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING,
                                      r->encoding) == MHD_YES;
    if (r->vary != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, r->vary) == MHD_YES;
    if (r->retry_after != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER,
                                      r->retry_after) == MHD_YES;
    /* While draining, tell keep-alive clients to reconnect elsewhere;
     * after a framing error, the rest of the stream cannot be trusted. */
    if (atomic_load(&s->draining) || r->close)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION,
                                      "close") == MHD_YES;
    return ok;
}

/* What went out: for the log and the metrics. */
static void answered(ts_req *rq, unsigned status, size_t len)
{
    rq->answered = 1;
    rq->status = status;
    /* MHD sends headers only for HEAD; log what went on the wire. */
    rq->bytes = strcmp(rq->method, MHD_HTTP_METHOD_HEAD) == 0 ? 0 : len;
}

/* Queue r.  With keep, a queued response is handed to the caller (its
 * reference) instead of being released: the answer cache holds it. */
static enum MHD_Result queue_keep(ts_server *s, struct MHD_Connection *c,
                                  ts_req *rq, const reply *r,
                                  struct MHD_Response **keep)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(r->len, r->body, r->mode);
    if (resp == NULL) {
        /* MHD took no ownership on failure. */
        if (r->mode == MHD_RESPMEM_MUST_FREE)
            free(r->body);
        return MHD_NO;
    }
    enum MHD_Result ret = MHD_NO;
    if (add_headers(s, resp, r))
        ret = MHD_queue_response(c, r->status, resp);
    if (ret == MHD_YES && keep != NULL)
        *keep = resp;
    else
        MHD_destroy_response(resp);
    if (ret == MHD_YES)
        answered(rq, r->status, r->len);
    return ret;
}

static enum MHD_Result queue(ts_server *s, struct MHD_Connection *c,
                             ts_req *rq, const reply *r)
{
    return queue_keep(s, c, rq, r, NULL);
}

/* An api response as a reply, taking over its malloc'd body (ts_api.h). */
static reply api_reply(ts_api_response *ar, int rc, const char *allow)
{
    reply r = {
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
static enum MHD_Result queue_api_keep(ts_server *s, struct MHD_Connection *c,
                                      ts_req *rq, ts_api_response *ar, int rc,
                                      const char *allow,
                                      struct MHD_Response **keep)
{
    reply r = api_reply(ar, rc, allow);
    return queue_keep(s, c, rq, &r, keep);
}

static enum MHD_Result queue_api(ts_server *s, struct MHD_Connection *c,
                                 ts_req *rq, ts_api_response *ar, int rc,
                                 const char *allow)
{
    return queue_api_keep(s, c, rq, ar, rc, allow, NULL);
}

/* A problem answer of type slug.  Its status and title come from the one
 * problem-type table (api/ts_problem.c), so the server and the api cannot
 * give one type two statuses or two titles. */
static enum MHD_Result queue_problem(ts_server *s, struct MHD_Connection *c,
                                     ts_req *rq, ts_problem slug, const char *detail,
                                     const char *allow)
{
    ts_api_response ar;
    memset(&ar, 0, sizeof ar);
    int rc = ts_api_problem(&ar, slug, detail, NULL);
    return queue_api(s, c, rq, &ar, rc, allow);
}

/* A problem answer after which the connection is closed: the bytes that
 * follow (an unread body, a smuggled request) are never parsed. */
static enum MHD_Result queue_problem_close(ts_server *s,
                                           struct MHD_Connection *c,
                                           ts_req *rq, ts_problem slug,
                                           const char *detail)
{
    ts_api_response ar;
    memset(&ar, 0, sizeof ar);
    int rc = ts_api_problem(&ar, slug, detail, NULL);
    reply r = api_reply(&ar, rc, NULL);
    r.close = 1;
    return queue(s, c, rq, &r);
}

/* Every worker busy and the queue full: 503 at once, not a wait behind
 * them (issue 22).  Retry-After (RFC 9110 10.2.3) in seconds: the api's
 * work budget keeps one request under a second. */
static enum MHD_Result queue_busy(ts_server *s, struct MHD_Connection *c,
                                  ts_req *rq)
{
    char detail[160];
    snprintf(detail, sizeof detail,
             "all %u workers are busy and %u requests are waiting; retry shortly",
             s->cfg.threads, s->cfg.queue_max);
    ts_api_response ar;
    memset(&ar, 0, sizeof ar);
    int rc = ts_api_problem(&ar, TS_PROB_SERVER_BUSY, detail, NULL);
    reply r = api_reply(&ar, rc, NULL);
    r.retry_after = "1";
    return queue(s, c, rq, &r);
}

static enum MHD_Result queue_too_big(ts_server *s, struct MHD_Connection *c,
                                     ts_req *rq)
{
    char detail[96];
    snprintf(detail, sizeof detail,
             "request body exceeds the %zu byte limit", s->cfg.body_max);
    /* Closed after: the body behind it is never read. */
    return queue_problem_close(s, c, rq, TS_PROB_PAYLOAD_TOO_LARGE, detail);
}

static enum MHD_Result queue_not_found(ts_server *s, struct MHD_Connection *c,
                                       ts_req *rq)
{
    rq->route = s->r_other;
    return queue_problem(s, c, rq, TS_PROB_NOT_FOUND,
                         "no such resource", NULL);
}

static enum MHD_Result queue_const(ts_server *s, struct MHD_Connection *c,
                                   ts_req *rq, unsigned status,
                                   const char *body, size_t len)
{
    reply r = {
        .status = status,
        .content_type = "text/plain; charset=utf-8",
        .body = (char *)(uintptr_t)body, /* PERSISTENT: MHD only reads it */
        .len = len,
        .mode = MHD_RESPMEM_PERSISTENT,
        .cache_control = "no-store",
    };
    return queue(s, c, rq, &r);
}

/* ------------------------------------------------------------------ */
/* Routes                                                              */
/* ------------------------------------------------------------------ */

static int is_get(const char *method)
{
    return strcmp(method, MHD_HTTP_METHOD_GET) == 0
           || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

static enum MHD_Result serve_file(ts_server *s, struct MHD_Connection *c,
                                  ts_req *rq, ts_static_status st,
                                  ts_static_file *f)
{
    if (st == TS_STATIC_NOTFOUND)
        return queue_not_found(s, c, rq);
    rq->route = s->r_static;
    if (st == TS_STATIC_NOMEM)
        return queue_problem(s, c, rq, TS_PROB_OUT_OF_MEMORY, "out of memory, retry later", NULL);
    if (st == TS_STATIC_TOOBIG) {
        fprintf(stderr, "trainsize-server: %s: file over %u bytes, not served\n",
                rq->path, TS_STATIC_FILE_MAX);
        return queue_problem(s, c, rq, TS_PROB_FILE_TOO_LARGE, "static file too large to serve", NULL);
    }
    const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                  MHD_HTTP_HEADER_IF_NONE_MATCH);
    const char *enc = NULL, *vary = NULL;

    if (ts_gzip_worth(f->content_type, f->len)) {
        char *gz, etag_gz[sizeof f->etag];
        size_t gzn;

        vary = MHD_HTTP_HEADER_ACCEPT_ENCODING;
        if (ts_gzip_accepted(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                         MHD_HTTP_HEADER_ACCEPT_ENCODING)) &&
            ts_etag_gz(f->etag, etag_gz, sizeof etag_gz) &&
            ts_gzip_compress(f->data, f->len, &gz, &gzn) == 0) {
            free(f->data);
            f->data = gz;
            f->len = gzn;
            enc = "gzip";
            memcpy(f->etag, etag_gz, sizeof etag_gz);
        }
    }
    reply r = {
        .status = MHD_HTTP_OK,
        .content_type = f->content_type,
        .body = f->data,
        .len = f->len,
        .mode = MHD_RESPMEM_MUST_FREE,
        .cache_control = f->cache_control,
        .etag = f->etag,
        .csp = csp_dashboard,
        .encoding = enc,
        .vary = vary,
    };
    if (ts_etag_match(inm, f->etag)) {
        free(f->data);
        r.status = MHD_HTTP_NOT_MODIFIED;
        r.content_type = NULL;
        r.body = NULL;
        r.len = 0;
        r.mode = MHD_RESPMEM_PERSISTENT;
    }
    f->data = NULL; /* queue() owns it now, success or not */
    return queue(s, c, rq, &r);
}

/* Catalogue entry e as a reply: the 200, or the 304 for a matching
 * If-None-Match (RFC 9110 15.4.5: the same validator and caching
 * headers, no body), in the identity or (gz, where e has one) the gzip
 * coding.  The body is the cache's: MHD only reads it. */
static reply cat_reply(const ts_cat_entry *e, bool not_modified, bool gz)
{
    reply r = {
        .status = not_modified ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK,
        .content_type = not_modified ? NULL : e->content_type,
        .body = not_modified ? NULL : gz ? e->gz : e->body,
        .len = not_modified ? 0 : gz ? e->gzlen : e->len,
        .mode = MHD_RESPMEM_PERSISTENT,
        /* Stored, but revalidated: a new build may change them. */
        .cache_control = "no-cache",
        .etag = gz ? e->etag_gz : e->etag,
        .encoding = gz ? "gzip" : NULL,
        .vary = e->gz != NULL ? MHD_HTTP_HEADER_ACCEPT_ENCODING : NULL,
    };
    return r;
}

static enum MHD_Result serve_catalogue(ts_server *s, struct MHD_Connection *c,
                                       ts_req *rq, size_t i)
{
    const ts_cat_entry *e = &s->cat.e[i];
    const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                  MHD_HTTP_HEADER_IF_NONE_MATCH);
    bool gz = e->gz != NULL
              && ts_gzip_accepted(MHD_lookup_connection_value(
                     c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
    /* Each coding is matched against its own validator. */
    bool nm = ts_etag_match(inm, gz ? e->etag_gz : e->etag);
    struct MHD_Response *resp = s->cat_resp[i][gz][nm];

    rq->route = s->cat_route[i];
    if (resp == NULL || atomic_load(&s->draining)) {
        /* Draining adds "Connection: close": a response of its own. */
        reply r = cat_reply(e, nm, gz);
        return queue(s, c, rq, &r);
    }
    if (MHD_queue_response(c, nm ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK, resp) != MHD_YES)
        return MHD_NO;
    answered(rq, nm ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK,
             nm ? 0 : gz ? e->gzlen : e->len);
    return MHD_YES;
}

static enum MHD_Result route_ops(ts_server *s, struct MHD_Connection *c,
                                 ts_req *rq, const char *method,
                                 size_t route)
{
    rq->route = route;
    if (!is_get(method))
        return queue_problem(s, c, rq, TS_PROB_METHOD_NOT_ALLOWED, "use GET or HEAD", ops_allow);
    if (route == s->r_livez)
        return queue_const(s, c, rq, MHD_HTTP_OK, livez_body,
                           sizeof livez_body - 1);
    if (route == s->r_readyz) {
        if (atomic_load(&s->draining))
            return queue_const(s, c, rq, MHD_HTTP_SERVICE_UNAVAILABLE,
                               draining_body, sizeof draining_body - 1);
        return queue_const(s, c, rq, MHD_HTTP_OK, ready_body,
                           sizeof ready_body - 1);
    }
    size_t len = 0;
    ts_work_stats ws;
    ts_work_stats_get(s->work, &ws);
    char *text = ts_metrics_render(s->metrics, &ws, &len);
    if (text == NULL)
        return queue_problem(s, c, rq, TS_PROB_OUT_OF_MEMORY, "out of memory, retry later", NULL);
    reply r = {
        .status = MHD_HTTP_OK,
        .content_type = "text/plain; version=0.0.4; charset=utf-8",
        .body = text,
        .len = len,
        .mode = MHD_RESPMEM_MUST_FREE,
        .cache_control = "no-store",
    };
    return queue(s, c, rq, &r);
}

static enum MHD_Result route_static(ts_server *s, struct MHD_Connection *c,
                                    ts_req *rq, const char *url,
                                    const char *method)
{
    ts_static_file f;
    ts_static_status st;
    if (strcmp(url, "/openapi.json") == 0) {
        /* Read at start (ts_cat_add_file); what went wrong then, now. */
        const ts_cat_entry *e = ts_cat_find(&s->cat, url);
        if (e != NULL && is_get(method))
            return serve_catalogue(s, c, rq, (size_t)(e - s->cat.e));
        memset(&f, 0, sizeof f);
        st = e != NULL ? TS_STATIC_OK : s->openapi_st;
    } else {
        st = ts_static_load(s->web_root, url, &f);
    }
    if (!is_get(method)) {
        /* Existing resource, wrong verb: 405; otherwise plain 404. */
        free(f.data);
        if (st == TS_STATIC_NOTFOUND)
            return queue_not_found(s, c, rq);
        rq->route = s->r_static;
        return queue_problem(s, c, rq, TS_PROB_METHOD_NOT_ALLOWED, "static files take GET or HEAD", ops_allow);
    }
    return serve_file(s, c, rq, st, &f);
}

static ts_req *req_of_job(ts_work_job *job)
{
    return (ts_req *)(void *)((char *)job - offsetof(ts_req, job));
}

/* On a worker: the api's answer, then the connection is MHD's again. */
static void work_run(ts_work_job *job)
{
    ts_req *rq = req_of_job(job);
    struct MHD_Connection *c = rq->c;
    const char *body = rq->body.data != NULL ? rq->body.data : "";
    memset(&rq->ar, 0, sizeof rq->ar);
    rq->rc = ts_api_handle(rq->api_method, rq->url, rq->ct, body,
                           rq->body.len, &rq->ar);
    rq->work = WORK_DONE;
    MHD_resume_connection(c); /* rq is not ours from here */
}

/* The pool stopped before running it (shutdown past --drain-timeout). */
static void work_cancel(ts_work_job *job)
{
    ts_req *rq = req_of_job(job);
    struct MHD_Connection *c = rq->c;
    rq->work = WORK_CANCELLED;
    MHD_resume_connection(c);
}

/* Back on MHD's thread after the worker resumed the connection. */
static enum MHD_Result work_answer(ts_server *s, struct MHD_Connection *c,
                                   ts_req *rq)
{
    if (rq->work == WORK_QUEUED)
        return MHD_YES; /* not resumed yet; MHD calls again */
    if (rq->work != WORK_DONE) {
        rq->dropped = "shutdown";
        return MHD_NO;
    }
    rq->work = WORK_ANSWERED;
    rq->route = ts_metrics_route(s->metrics, rq->ar.route);
    /* not while draining, whose answers carry "Connection: close" */
    bool memo = rq->memo && !atomic_load(&s->draining);
    if (!memo || rq->rc != 0 || rq->ar.status != MHD_HTTP_OK)
        return queue_api(s, c, rq, &rq->ar, rq->rc, NULL);
    struct MHD_Response *kept = NULL;
    size_t len = rq->ar.body_len;
    enum MHD_Result ret = queue_api_keep(s, c, rq, &rq->ar, rq->rc, NULL, &kept);
    if (kept != NULL)
        ts_memo_put(s->memo, &rq->key, kept, rq->route, len);
    return ret;
}

static enum MHD_Result dispatch(ts_server *s, struct MHD_Connection *c,
                                ts_req *rq, const char *url,
                                const char *method)
{
    if (strncmp(url, "/v1/", 4) == 0 || strcmp(url, "/v1") == 0) {
        if (is_get(method)) {
            const ts_cat_entry *e = ts_cat_find(&s->cat, url);
            if (e != NULL)
                return serve_catalogue(s, c, rq, (size_t)(e - s->cat.e));
        }
        const char *ct = MHD_lookup_connection_value(
            c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        /* HEAD is GET without the body; MHD drops the body for us. */
        const char *m = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0
                            ? MHD_HTTP_METHOD_GET
                            : method;
        const char *body = rq->body.data != NULL ? rq->body.data : "";
        /* An estimate asked before is sent again as it was (ts_memo.h);
         * not while draining, whose answers carry "Connection: close". */
        ts_memo_key key;
        bool memo = s->memo != NULL && strcmp(method, MHD_HTTP_METHOD_POST) == 0
                    && !atomic_load(&s->draining)
                    && ts_memo_key_init(&key, url, ct != NULL ? ct : "", body,
                                        rq->body.len);
        if (memo) {
            size_t route = 0, len = 0;
            int hit = ts_memo_serve(s->memo, &key, c, &route, &len);
            ts_metrics_answer_cache(s->metrics, hit != -1);
            if (hit != -1) {
                rq->route = route;
                if (hit == MHD_YES)
                    answered(rq, MHD_HTTP_OK, len);
                return hit == MHD_YES ? MHD_YES : MHD_NO;
            }
        }
        /* The api's work runs on a worker, never on this thread. */
        if (!ts_work_reserve(s->work))
            return queue_busy(s, c, rq);
        rq->c = c;
        rq->api_method = m;
        rq->url = url;
        rq->ct = ct != NULL ? ct : "";
        rq->memo = memo;
        if (memo)
            rq->key = key;
        rq->job.run = work_run;
        rq->job.cancel = work_cancel;
        rq->work = WORK_QUEUED;
        /* Suspended before any worker can see the job, so its resume
         * always comes after (MHD: resuming a connection that is not
         * suspended is undefined). */
        MHD_suspend_connection(c);
        ts_work_submit(s->work, &rq->job);
        return MHD_YES;
    }
    if (strcmp(url, "/livez") == 0)
        return route_ops(s, c, rq, method, s->r_livez);
    if (strcmp(url, "/readyz") == 0)
        return route_ops(s, c, rq, method, s->r_readyz);
    if (strcmp(url, "/metrics") == 0)
        return route_ops(s, c, rq, method, s->r_metrics);
    return route_static(s, c, rq, url, method);
}

/* ------------------------------------------------------------------ */
/* MHD callbacks                                                       */
/* ------------------------------------------------------------------ */

/* Copy for the log: printable ASCII only, truncated. */
static void copy_printable(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src != NULL && src[i] != '\0' && i + 1 < cap; i++) {
        unsigned char u = (unsigned char)src[i];
        dst[i] = (u < 0x21 || u > 0x7e) ? '?' : (char)u;
    }
    dst[i] = '\0';
}

static ts_conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci != NULL ? ci->socket_context : NULL;
}

static ts_req *req_new(ts_server *s, struct MHD_Connection *c)
{
    ts_req *rq = calloc(1, sizeof *rq);
    if (rq == NULL)
        return NULL;
    clock_gettime(CLOCK_MONOTONIC, &rq->t0);
    ts_buf_init(&rq->body, s->cfg.body_max);
    rq->route = s->r_other;
    rq->conn = conn_of(c);
    if (rq->conn != NULL)
        rq->conn->requests++;
    ts_metrics_inflight_add(s->metrics, 1);
    return rq;
}

/* Route label for a request we answer before dispatch (413, framing):
 * the api path when it is one, so a 413 on /v1/memory is counted there. */
static size_t route_of(ts_server *s, const char *url)
{
    if (strcmp(url, "/livez") == 0)
        return s->r_livez;
    if (strcmp(url, "/readyz") == 0)
        return s->r_readyz;
    if (strcmp(url, "/metrics") == 0)
        return s->r_metrics;
    if (strncmp(url, "/v1/", 4) == 0)
        return ts_metrics_route(s->metrics, url);
    return s->r_other;
}

/* Fires first, on the raw request line (before MHD splits the query):
 * the request state starts here so that whatever MHD does next, even
 * answering by itself, ends in on_completed and the log. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    ts_server *s = cls;
    ts_req *rq = req_new(s, c);
    if (rq == NULL)
        return NULL; /* on_request tries again */
    copy_printable(rq->path, sizeof rq->path, uri);
    const char *q = strchr(uri, '?');
    size_t args = 0;
    for (; q != NULL && *q != '\0'; q++)
        args += *q == '&' || *q == ';' || *q == '?';
    bool too_many = args > QUERY_ARGS_MAX;
    if ((too_many || (args > 0 && strlen(uri) + QUERY_ARG_COST * args > URI_POOL_BUDGET))
        && rq->conn != NULL) {
        /* MHD would fill its pool, fail to build its own 431 and hold the
         * connection: close it now.  We are on the connection's thread. */
        rq->dropped = too_many ? "too-many-query-args" : "query-over-pool";
        ts_metrics_closed(s->metrics, TS_CLOSE_BAD_REQUEST);
        ts_guard_kill(rq->conn->gc);
    }
    return rq;
}

typedef struct framing {
    unsigned cl;             /* Content-Length fields */
    unsigned te;             /* Transfer-Encoding fields */
    int cl_differ;           /* two Content-Length values differ */
    const char *cl_first;
    const char *te_value;
    unsigned host;
} framing;

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind,
                                     const char *key, const char *value)
{
    framing *f = cls;
    (void)kind;
    if (value == NULL)
        value = "";
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        if (f->cl++ == 0)
            f->cl_first = value;
        else if (strcmp(value, f->cl_first) != 0)
            f->cl_differ = 1;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        f->te++;
        f->te_value = value;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
        f->host++;
    }
    return MHD_YES;
}

/* Message framing a front proxy could read differently from MHD
 * (request smuggling): RFC 9112 6.3 says such a message must be treated
 * as an error and the connection closed.  NULL when fine; else the
 * detail, and *status the code (501 for an unknown transfer coding,
 * RFC 9112 6.1). */
static const char *bad_framing(struct MHD_Connection *c, const char *version,
                               unsigned *status)
{
    framing f = {0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_framing, &f);
    *status = MHD_HTTP_BAD_REQUEST;
    if (f.cl_differ)
        return "conflicting Content-Length fields";
    if (f.te > 0 && f.cl > 0)
        return "Transfer-Encoding together with Content-Length";
    if (f.te > 1)
        return "more than one Transfer-Encoding field";
    if (f.te == 1 && strcasecmp(f.te_value, "chunked") != 0) {
        *status = MHD_HTTP_NOT_IMPLEMENTED;
        return "only Transfer-Encoding: chunked is supported";
    }
    /* RFC 9112 3.2: a 1.1 request without exactly one Host is a 400. */
    if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 && f.host != 1)
        return f.host == 0 ? "HTTP/1.1 request without Host"
                           : "more than one Host field";
    return NULL;
}

/* Content-Length over the cap?  MHD has already rejected malformed
 * values with 400, so only the size matters here. */
static int declared_too_big(struct MHD_Connection *c, size_t max)
{
    const char *cl = MHD_lookup_connection_value(
        c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl == NULL)
        return 0;
    errno = 0;
    char *end = NULL;
    unsigned long long n = strtoull(cl, &end, 10);
    if (errno == ERANGE)
        return 1;
    return end != cl && n > (unsigned long long)max;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version,
                                  const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    ts_server *s = cls;
    ts_req *rq = *con_cls;

    if (rq == NULL) {
        rq = req_new(s, c);
        if (rq == NULL)
            return MHD_NO; /* out of memory: drop the connection */
        *con_cls = rq;
    }
    if (!rq->started) {
        rq->started = 1;
        copy_printable(rq->method, sizeof rq->method, method);
        copy_printable(rq->path, sizeof rq->path, url);
        rq->route = route_of(s, url);
        if (rq->dropped != NULL)
            return MHD_NO;
        /* Field syntax first: a name MHD did not recognise
         * ("Transfer-Encoding ") would slip past the framing checks. */
        const char *why = ts_http_header_error(c, method, version);
        if (why != NULL)
            return queue_problem_close(s, c, rq, TS_PROB_MALFORMED_REQUEST, why);
        unsigned status = 0;
        why = bad_framing(c, version, &status);
        if (why != NULL)
            return status == MHD_HTTP_NOT_IMPLEMENTED
                       ? queue_problem_close(s, c, rq, TS_PROB_UNSUPPORTED_TRANSFER_CODING, why)
                       : queue_problem_close(s, c, rq, TS_PROB_MALFORMED_REQUEST, why);
        /* Refuse a declared oversize body before reading any of it. */
        if (declared_too_big(c, s->cfg.body_max))
            return queue_too_big(s, c, rq);
        return MHD_YES;
    }

    if (*upload_data_size != 0) {
        if (!rq->too_big && !rq->answered) {
            ts_buf_status st =
                ts_buf_append(&rq->body, upload_data, *upload_data_size);
            if (st == TS_BUF_NOMEM)
                return MHD_NO;
            if (st == TS_BUF_FULL) {
                /* Chunked upload past the cap.  MHD 0.9.75 cannot queue
                 * a 413 before the whole body is in (MHD_queue_response
                 * wants HEADERS_PROCESSED or FULL_REQ_RECEIVED), and
                 * reading on would let one client stream for ever:
                 * drop the connection. */
                rq->too_big = 1;
                rq->dropped = "body-over-cap";
                ts_buf_free(&rq->body);
                ts_metrics_closed(s->metrics, TS_CLOSE_BODY_TOO_LARGE);
                return MHD_NO;
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }

    if (rq->answered)
        return MHD_YES;
    if (rq->work != WORK_NONE)
        return work_answer(s, c, rq);
    /* The request is in: from here the time is ours, not the client's. */
    if (rq->conn != NULL)
        ts_guard_arm(rq->conn->gc, 0);
    if (rq->too_big)
        return queue_too_big(s, c, rq);
    return dispatch(s, c, rq, url, method);
}

static void log_line(const char *line, int n, size_t cap)
{
    /* One write() per line keeps lines whole across threads. */
    if (n > 0) {
        size_t len = (size_t)n < cap ? (size_t)n : cap - 1;
        ssize_t w = write(STDERR_FILENO, line, len);
        (void)w;
    }
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    ts_server *s = cls;
    ts_req *rq = *con_cls;
    if (rq == NULL)
        return;
    uint64_t ns = elapsed_ns(&rq->t0);
    int mhd_made = 0;
    if (rq->status == 0 && rq->dropped == NULL) {
        /* Not ours: MHD answered by itself (bad chunk framing, header
         * pool full...); mhd_log() has counted and logged it. */
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
        mhd_made = ci != NULL && ci->http_status != 0;
    }
    if (rq->status != 0)
        ts_metrics_observe(s->metrics, rq->route, rq->status, ns);
    ts_metrics_inflight_add(s->metrics, -1);
    if (rq->conn != NULL) {
        rq->conn->completed++;
        /* The next request on this connection gets a fresh deadline. */
        ts_guard_arm(rq->conn->gc, s->cfg.request_timeout_ms);
    }

    if (s->cfg.access_log && !mhd_made) {
        static const char *const why[] = {
            [MHD_REQUEST_TERMINATED_COMPLETED_OK] = "",
            [MHD_REQUEST_TERMINATED_WITH_ERROR] = " error",
            [MHD_REQUEST_TERMINATED_TIMEOUT_REACHED] = " timeout",
            [MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN] = " shutdown",
            [MHD_REQUEST_TERMINATED_READ_ERROR] = " read-error",
            [MHD_REQUEST_TERMINATED_CLIENT_ABORT] = " client-abort",
        };
        const char *note = (unsigned)toe < sizeof why / sizeof why[0]
                               && why[toe] != NULL ? why[toe] : " aborted";
        if (rq->conn != NULL && ts_guard_expired(rq->conn->gc))
            note = " request-deadline";
        char line[LOG_PATH_MAX + 128];
        int n = snprintf(line, sizeof line, "%s %s %u %zu %llu%s%s%s\n",
                         rq->method[0] != '\0' ? rq->method : "-",
                         rq->path[0] != '\0' ? rq->path : "-",
                         rq->status, rq->bytes,
                         (unsigned long long)(ns / 1000u), note,
                         rq->dropped != NULL ? " dropped:" : "",
                         rq->dropped != NULL ? rq->dropped : "");
        log_line(line, n, sizeof line);
    }
    if (rq->work == WORK_DONE)
        ts_api_response_free(&rq->ar); /* closed before it was sent */
    ts_buf_free(&rq->body);
    free(rq);
    *con_cls = NULL;
}

/* Watchdog, lock held: a connection passed its request deadline. */
static void on_expired(void *cls, bool pressure)
{
    ts_server *s = cls;
    ts_metrics_closed(s->metrics, pressure ? TS_CLOSE_OVERLOAD
                                           : TS_CLOSE_REQUEST_TIMEOUT);
}

static void on_connection(void *cls, struct MHD_Connection *c,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    ts_server *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        ts_conn *k = calloc(1, sizeof *k);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (k != NULL && ci != NULL) {
            k->gc = ts_guard_open(s->guard, ci->connect_fd);
            ts_guard_arm(k->gc, s->cfg.request_timeout_ms);
        }
        *socket_context = k;
        return;
    }
    ts_conn *k = *socket_context;
    if (k == NULL)
        return;
    if (k->requests == k->completed) {
        /* Nothing of ours was open: a slow client shut out before its
         * request line was in.  Counted by on_expired; logged here. */
        if (ts_guard_expired(k->gc) && s->cfg.access_log) {
            static const char line[] = "- - 0 0 0 request-deadline\n";
            log_line(line, (int)sizeof line - 1, sizeof line);
        }
    }
    ts_guard_close(s->guard, k->gc);
    free(k);
    *socket_context = NULL;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Percent-decoding that leaves %00..%1F and %7F encoded: a decoded NUL
 * would cut the C string ("/index.html%00.png" -> "/index.html"), so we
 * keep it visible and the static lookup fails with 404. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *uri)
{
    (void)cls;
    (void)c;
    char *w = uri;
    for (const char *r = uri; *r != '\0';) {
        if (r[0] == '%') {
            int hi = hexval(r[1]);
            int lo = hi >= 0 ? hexval(r[2]) : -1;
            if (lo >= 0) {
                int v = hi * 16 + lo;
                if (v >= 0x20 && v != 0x7f) {
                    *w++ = (char)v;
                    r += 3;
                    continue;
                }
            }
        }
        *w++ = *r++;
    }
    *w = '\0';
    return (size_t)(w - uri);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 0)))
#endif
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    ts_server *s = cls;
    /* The one place where every answer libmicrohttpd builds by itself
     * (malformed request line, 414, 431, 505, bad chunk sizes...) shows
     * up, with its status: the first argument of this message
     * (transmit_error_response() in MHD's connection.c).  Counted under
     * route "mhd" and logged, so no response goes unrecorded. */
    static const char err_fmt[] = "Error processing request (HTTP response code is %u";
    if (s != NULL && strncmp(fmt, err_fmt, sizeof err_fmt - 1) == 0) {
        va_list aq;
        va_copy(aq, ap);
        unsigned st = va_arg(aq, unsigned);
        va_end(aq);
        ts_metrics_count(s->metrics, s->r_mhd, st);
        if (s->cfg.access_log) {
            char line[64];
            int n = snprintf(line, sizeof line, "- - %u 0 0 mhd\n", st);
            log_line(line, n, sizeof line);
        }
    }
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && msg[n - 1] == '\n')
        msg[--n] = '\0';
    fprintf(stderr, "trainsize-server: mhd: %s\n", msg);
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                          */
/* ------------------------------------------------------------------ */

static void server_free(ts_server *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < TS_CAT_MAX; i++)
        for (size_t gz = 0; gz < 2; gz++)
            for (size_t nm = 0; nm < 2; nm++)
                if (s->cat_resp[i][gz][nm] != NULL)
                    MHD_destroy_response(s->cat_resp[i][gz][nm]);
    ts_work_free(s->work);
    ts_memo_free(s->memo);
    ts_cat_free(&s->cat);
    ts_guard_free(s->guard);
    ts_metrics_free(s->metrics);
    free(s->web_root);
    free(s);
}

ts_server_status ts_server_start(const ts_config *cfg, ts_server **out,
                                 char err[TS_SERVER_ERR_LEN])
{
    *out = NULL;
    err[0] = '\0';
    ts_server *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err, TS_SERVER_ERR_LEN, "out of memory");
        return TS_SERVER_ENOMEM;
    }
    s->cfg = *cfg;
    s->quiesced_fd = MHD_INVALID_SOCKET;
    atomic_init(&s->draining, false);
    s->metrics = ts_metrics_new(ts_api_routes(), TS_VERSION);
    if (s->metrics == NULL) {
        server_free(s);
        snprintf(err, TS_SERVER_ERR_LEN, "out of memory");
        return TS_SERVER_ENOMEM;
    }
    s->r_livez = ts_metrics_route(s->metrics, "/livez");
    s->r_readyz = ts_metrics_route(s->metrics, "/readyz");
    s->r_metrics = ts_metrics_route(s->metrics, "/metrics");
    s->r_static = ts_metrics_route(s->metrics, "static");
    s->r_other = ts_metrics_route(s->metrics, "other");
    s->r_mhd = ts_metrics_route(s->metrics, "mhd");

    /* 64 KiB a slot: several times a plan answer (16 KB), so the byte
     * cap only bites when many kept answers are unusually large. */
    if (cfg->answer_cache > 0
        && (s->memo = ts_memo_new(cfg->answer_cache,
                                  (size_t)cfg->answer_cache * 64u * 1024u)) == NULL) {
        server_free(s);
        snprintf(err, TS_SERVER_ERR_LEN, "out of memory");
        return TS_SERVER_ENOMEM;
    }
    if (ts_work_new(cfg->threads, cfg->queue_max, &s->work) != TS_WORK_OK) {
        server_free(s);
        snprintf(err, TS_SERVER_ERR_LEN, "out of memory (worker threads)");
        return TS_SERVER_ENOMEM;
    }
    if (ts_cat_build(&s->cat) != TS_CAT_OK) {
        server_free(s);
        snprintf(err, TS_SERVER_ERR_LEN, "out of memory");
        return TS_SERVER_ENOMEM;
    }
    s->openapi_st = ts_cat_add_file(&s->cat, "/openapi.json", cfg->openapi);
    if (s->openapi_st == TS_STATIC_NOMEM) {
        server_free(s);
        snprintf(err, TS_SERVER_ERR_LEN, "out of memory");
        return TS_SERVER_ENOMEM;
    }
    if (s->openapi_st != TS_STATIC_OK)
        fprintf(stderr,
                "trainsize-server: OpenAPI document '%s' %s; GET /openapi.json "
                "will answer %s\n", cfg->openapi,
                s->openapi_st == TS_STATIC_TOOBIG ? "is too large" : "not found",
                s->openapi_st == TS_STATIC_TOOBIG ? "500" : "404");
    for (size_t i = 0; i < s->cat.n; i++) {
        const ts_cat_entry *e = &s->cat.e[i];
        s->cat_route[i] = e->file ? s->r_static
                                  : ts_metrics_route(s->metrics, e->path);
        /* Left NULL when MHD has no memory: built per request then. */
        for (size_t gz = 0; gz < (e->gz != NULL ? 2u : 1u); gz++)
            for (size_t nm = 0; nm < 2; nm++) {
                reply r = cat_reply(e, nm, gz);
                struct MHD_Response *resp =
                    MHD_create_response_from_buffer(r.len, r.body, r.mode);
                if (resp != NULL && !add_headers(s, resp, &r)) {
                    MHD_destroy_response(resp);
                    resp = NULL;
                }
                s->cat_resp[i][gz][nm] = resp;
            }
    }

    /* With 3/4 of the connection slots taken, a request still arriving
     * after PRESSURE_MS is cut: slots go to clients that send. */
    unsigned pressure_conns = cfg->max_conns - cfg->max_conns / 4;
    unsigned pressure_ms = cfg->request_timeout_ms < PRESSURE_MS
                               ? cfg->request_timeout_ms : PRESSURE_MS;
    s->guard = ts_guard_new(GUARD_TICK_MS, pressure_conns, pressure_ms,
                            on_expired, s);
    if (s->guard == NULL) {
        server_free(s);
        snprintf(err, TS_SERVER_ERR_LEN, "out of memory");
        return TS_SERVER_ENOMEM;
    }

    s->web_root = ts_static_root(cfg->web_root);
    if (s->web_root == NULL)
        fprintf(stderr,
                "trainsize-server: web root '%s' not found; the dashboard "
                "(GET /) will answer 404\n", cfg->web_root);

    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    /* Suspend/resume: api work leaves MHD's threads for ts_work's. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC
                     | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES
                 ? MHD_USE_EPOLL
                 : MHD_USE_POLL;
    int v6 = strchr(cfg->bind, ':') != NULL;
    if (v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)cfg->port);
        inet_pton(AF_INET6, cfg->bind, &a->sin6_addr);
        flags |= MHD_USE_IPv6;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)cfg->port);
        inet_pton(AF_INET, cfg->bind, &a->sin_addr);
    }

    /* MHD_OPTION_ARRAY so that the pool size can be left out for one
     * thread: MHD warns at every start about a pool of size 0. */
    struct MHD_OptionItem opts[] = {
        /* First, so that MHD's own option errors use it too. */
        {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)(uintptr_t)mhd_log, s},
        {MHD_OPTION_SOCK_ADDR, 0, &ss},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)cfg->timeout_s, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)cfg->max_conns, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)cfg->per_ip, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)CONN_MEMORY_LIMIT, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)(uintptr_t)on_completed, s},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)(uintptr_t)on_connection, s},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)(uintptr_t)on_uri, s},
        {MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)(uintptr_t)unescape, NULL},
#if MHD_VERSION >= 0x01000000
        /* 1.0 can be strict where 0.9.75 cannot: level 1 ("suitable for
         * highly loaded public servers", microhttpd.h) rejects obsolete
         * line folding, bare LF and whitespace before the colon. */
        {MHD_OPTION_CLIENT_DISCIPLINE_LVL, 1, NULL},
#endif
        {cfg->io_threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END,
         (intptr_t)cfg->io_threads, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    s->daemon = MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, on_request, s,
        MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (s->daemon == NULL) {
        snprintf(err, TS_SERVER_ERR_LEN,
                 "cannot listen on %s port %u (in use, or no permission)",
                 cfg->bind, cfg->port);
        server_free(s);
        return TS_SERVER_EBIND;
    }
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info != NULL ? info->port : cfg->port;
    snprintf(s->url, sizeof s->url, v6 ? "http://[%s]:%u" : "http://%s:%u",
             cfg->bind, s->port);
    *out = s;
    return TS_SERVER_OK;
}

unsigned ts_server_port(const ts_server *s)
{
    return s->port;
}

const char *ts_server_url(const ts_server *s)
{
    return s->url;
}

void ts_server_drain(ts_server *s)
{
    if (atomic_exchange(&s->draining, true))
        return;
    /* Quiescing only takes the socket out of MHD's poll sets: the kernel
     * would go on completing handshakes into the backlog, and those
     * clients would hang until exit and then be reset.  shutdown() on a
     * listening socket stops it listening (Linux: new SYNs are refused,
     * queued connections reset) while the fd stays ours, so no worker
     * can see it reused; it is closed after MHD_stop_daemon. */
    s->quiesced_fd = MHD_quiesce_daemon(s->daemon);
    if (s->quiesced_fd != MHD_INVALID_SOCKET)
        shutdown(s->quiesced_fd, SHUT_RDWR);
}

bool ts_server_wait_idle(ts_server *s, unsigned timeout_ms)
{
    const struct timespec tick = {0, 5 * 1000 * 1000};
    for (unsigned waited = 0; ts_metrics_inflight(s->metrics) > 0; waited += 5) {
        if (waited >= timeout_ms)
            return false;
        nanosleep(&tick, NULL);
    }
    return true;
}

void ts_server_stop(ts_server *s)
{
    if (s == NULL)
        return;
    /* Workers first: the requests they hold belong to connections that
     * MHD_stop_daemon frees, and it must find none suspended (an API
     * violation in 0.9.75, MHD_stop_daemon's comment): running jobs
     * finish and resume theirs, waiting ones are cancelled (resumed and
     * closed). */
    ts_work_stop(s->work);
    MHD_stop_daemon(s->daemon);
    /* Only now: worker threads may touch the socket until they stop. */
    if (s->quiesced_fd != MHD_INVALID_SOCKET)
        close(s->quiesced_fd);
    server_free(s);
}
