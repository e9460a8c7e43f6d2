/*
 * ts_route.c - routing (ts_server_int.h): the api's work handed to a
 * worker and answered back on MHD's thread, the catalogue answers built
 * at start, the probes, the metrics and the static files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_etag.h"
#include "ts_gzip.h"
#include "ts_server_int.h"

/* Probes read the status only (Kubernetes: 200-399 passes); the body is
 * one word of text/plain, as api/openapi.json documents. */
static const char livez_body[] = "ok\n";
static const char ready_body[] = "ready\n";
static const char draining_body[] = "draining\n";
static const char ops_allow[] = "GET, HEAD";

static int is_get(const char *method)
{
    return strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

static enum MHD_Result serve_file(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                  ts_static_status st, ts_static_file *f)
{
    if (st == TS_STATIC_NOTFOUND)
        return ts_reply_not_found(s, c, rq);
    rq->route = s->r_static;
    if (st == TS_STATIC_NOMEM)
        return ts_reply_problem(s, c, rq, TS_PROB_OUT_OF_MEMORY, "out of memory, retry later",
                                NULL);
    if (st == TS_STATIC_TOOBIG) {
        fprintf(stderr, "trainsize-server: %s: file over %u bytes, not served\n", rq->path,
                TS_STATIC_FILE_MAX);
        return ts_reply_problem(s, c, rq, TS_PROB_FILE_TOO_LARGE, "static file too large to serve",
                                NULL);
    }
    const char *inm =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    const char *enc = NULL, *vary = NULL;

    if (ts_gzip_worth(f->content_type, f->len)) {
        char *gz, etag_gz[sizeof f->etag];
        size_t gzn;

        vary = MHD_HTTP_HEADER_ACCEPT_ENCODING;
        if (ts_gzip_accepted(
                MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING)) &&
            ts_etag_gz(f->etag, etag_gz, sizeof etag_gz) &&
            ts_gzip_compress(f->data, f->len, &gz, &gzn) == 0) {
            free(f->data);
            f->data = gz;
            f->len = gzn;
            enc = "gzip";
            memcpy(f->etag, etag_gz, sizeof etag_gz);
        }
    }
    ts_reply r = {
        .status = MHD_HTTP_OK,
        .content_type = f->content_type,
        .body = f->data,
        .len = f->len,
        .mode = MHD_RESPMEM_MUST_FREE,
        .cache_control = f->cache_control,
        .etag = f->etag,
        .csp = ts_reply_csp_dashboard,
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
    f->data = NULL; /* ts_reply_queue() owns it now, success or not */
    return ts_reply_queue(s, c, rq, &r);
}

static enum MHD_Result serve_catalogue(ts_server *s, struct MHD_Connection *c, ts_req *rq, size_t i)
{
    const ts_cat_entry *e = &s->cat.e[i];
    const char *inm =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    bool gz = e->gz != NULL && ts_gzip_accepted(MHD_lookup_connection_value(
                                   c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
    /* Each coding is matched against its own validator. */
    bool nm = ts_etag_match(inm, gz ? e->etag_gz : e->etag);
    struct MHD_Response *resp = s->cat_resp[i][gz][nm];

    rq->route = s->cat_route[i];
    if (resp == NULL || atomic_load(&s->draining)) {
        /* Draining adds "Connection: close": a response of its own. */
        ts_reply r = ts_reply_cat(e, nm, gz);
        return ts_reply_queue(s, c, rq, &r);
    }
    if (MHD_queue_response(c, nm ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK, resp) != MHD_YES)
        return MHD_NO;
    ts_reply_answered(rq, nm ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK,
                      nm   ? 0
                      : gz ? e->gzlen
                           : e->len);
    return MHD_YES;
}

static enum MHD_Result route_ops(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                 const char *method, size_t route)
{
    rq->route = route;
    if (!is_get(method))
        return ts_reply_problem(s, c, rq, TS_PROB_METHOD_NOT_ALLOWED, "use GET or HEAD", ops_allow);
    if (route == s->r_livez)
        return ts_reply_const(s, c, rq, MHD_HTTP_OK, livez_body, sizeof livez_body - 1);
    if (route == s->r_readyz) {
        if (atomic_load(&s->draining))
            return ts_reply_const(s, c, rq, MHD_HTTP_SERVICE_UNAVAILABLE, draining_body,
                                  sizeof draining_body - 1);
        return ts_reply_const(s, c, rq, MHD_HTTP_OK, ready_body, sizeof ready_body - 1);
    }
    size_t len = 0;
    ts_work_stats ws;
    ts_work_stats_get(s->work, &ws);
    char *text = ts_metrics_render(s->metrics, &ws, &len);
    if (text == NULL)
        return ts_reply_problem(s, c, rq, TS_PROB_OUT_OF_MEMORY, "out of memory, retry later",
                                NULL);
    ts_reply r = {
        .status = MHD_HTTP_OK,
        .content_type = "text/plain; version=0.0.4; charset=utf-8",
        .body = text,
        .len = len,
        .mode = MHD_RESPMEM_MUST_FREE,
        .cache_control = "no-store",
    };
    return ts_reply_queue(s, c, rq, &r);
}

static enum MHD_Result route_static(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                    const char *url, const char *method)
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
            return ts_reply_not_found(s, c, rq);
        rq->route = s->r_static;
        return ts_reply_problem(s, c, rq, TS_PROB_METHOD_NOT_ALLOWED,
                                "static files take GET or HEAD", ops_allow);
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
    rq->rc = ts_api_handle(rq->api_method, rq->url, rq->ct, body, rq->body.len, &rq->ar);
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
enum MHD_Result ts_route_work_answer(ts_server *s, struct MHD_Connection *c, ts_req *rq)
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
        return ts_reply_api(s, c, rq, &rq->ar, rq->rc, NULL);
    struct MHD_Response *kept = NULL;
    size_t len = rq->ar.body_len;
    enum MHD_Result ret = ts_reply_api_keep(s, c, rq, &rq->ar, rq->rc, NULL, &kept);
    if (kept != NULL)
        ts_memo_put(s->memo, &rq->key, kept, rq->route, len);
    return ret;
}

/* A POST asked before is sent again as it was (ts_memo.h); not while
 * draining, whose answers carry "Connection: close".  MHD_YES/MHD_NO
 * when answered from the memo, -1 when not (*memo then says whether
 * to remember the answer under *key). */
static int route_memo(ts_server *s, struct MHD_Connection *c, ts_req *rq, const char *url,
                      const char *method, const char *ct, ts_memo_key *key, bool *memo)
{
    const char *body = rq->body.data != NULL ? rq->body.data : "";
    size_t route = 0, len = 0;
    int hit;

    *memo = s->memo != NULL && strcmp(method, MHD_HTTP_METHOD_POST) == 0 &&
            !atomic_load(&s->draining) && ts_memo_key_init(key, url, ct, body, rq->body.len);
    if (!*memo)
        return -1;
    hit = ts_memo_serve(s->memo, key, c, &route, &len);
    ts_metrics_answer_cache(s->metrics, hit != -1);
    if (hit == -1)
        return -1;
    rq->route = route;
    if (hit == MHD_YES)
        ts_reply_answered(rq, MHD_HTTP_OK, len);
    return hit == MHD_YES ? MHD_YES : MHD_NO;
}

/* /v1: a catalogue built at start, a remembered answer, or the api's
 * work, which runs on a worker, never on this thread. */
static enum MHD_Result route_api(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                 const char *url, const char *method)
{
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    ts_memo_key key;
    bool memo = false;
    int hit;

    if (is_get(method)) {
        const ts_cat_entry *e = ts_cat_find(&s->cat, url);
        if (e != NULL)
            return serve_catalogue(s, c, rq, (size_t)(e - s->cat.e));
    }
    ct = ct != NULL ? ct : "";
    hit = route_memo(s, c, rq, url, method, ct, &key, &memo);
    if (hit != -1)
        return (enum MHD_Result)hit;
    if (!ts_work_reserve(s->work))
        return ts_reply_busy(s, c, rq);
    rq->c = c;
    /* HEAD is GET without the body; MHD drops the body for us. */
    rq->api_method = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0 ? MHD_HTTP_METHOD_GET : method;
    rq->url = url;
    rq->ct = ct;
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

enum MHD_Result ts_route_dispatch(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                  const char *url, const char *method)
{
    if (strncmp(url, "/v1/", 4) == 0 || strcmp(url, "/v1") == 0)
        return route_api(s, c, rq, url, method);
    if (strcmp(url, "/livez") == 0)
        return route_ops(s, c, rq, method, s->r_livez);
    if (strcmp(url, "/readyz") == 0)
        return route_ops(s, c, rq, method, s->r_readyz);
    if (strcmp(url, "/metrics") == 0)
        return route_ops(s, c, rq, method, s->r_metrics);
    return route_static(s, c, rq, url, method);
}

/* Route label for a request we answer before dispatch (413, framing):
 * the api path when it is one, so a 413 on /v1/memory is counted there. */
size_t ts_route_of(ts_server *s, const char *url)
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
