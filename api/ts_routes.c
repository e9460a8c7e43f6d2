/*
 * ts_routes.c - the /v1 route table and ts_api_handle().
 *
 * Order of checks for a request: route (404), method (405 + Allow), body
 * size (413), media type (415), then the body (400/422).  A request
 * lives on this function's stack plus one parsed jansson tree and one
 * output buffer, so the handler is reentrant.  Its loops (search, fit,
 * sweep) share one work budget (trainsize.h), made here per request: an
 * answer cut short by it says "truncated": true.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api_int.h"

typedef enum ts_route_id {
    TS_ROUTE_PRESETS = 0,
    TS_ROUTE_GPUS,
    TS_ROUTE_MEMORY,
    TS_ROUTE_COMPUTE,
    TS_ROUTE_CHECKPOINT,
    TS_ROUTE_PLAN,
    TS_ROUTE_FIT,
    TS_ROUTE_SEARCH,
    TS_ROUTE_IMPORT,
    TS_ROUTE_BUDGET,
    TS_ROUTE_COUNT
} ts_route_id;

typedef struct ts_route {
    const char *method;
    const char *path; /* also the metrics label */
} ts_route;

static const ts_route ts_routes[TS_ROUTE_COUNT] = {
    [TS_ROUTE_PRESETS] = { "GET", "/v1/presets" },
    [TS_ROUTE_GPUS] = { "GET", "/v1/gpus" },
    [TS_ROUTE_MEMORY] = { "POST", "/v1/memory" },
    [TS_ROUTE_COMPUTE] = { "POST", "/v1/compute" },
    [TS_ROUTE_CHECKPOINT] = { "POST", "/v1/checkpoint" },
    [TS_ROUTE_PLAN] = { "POST", "/v1/plan" },
    [TS_ROUTE_FIT] = { "POST", "/v1/fit" },
    [TS_ROUTE_SEARCH] = { "POST", "/v1/search" },
    [TS_ROUTE_IMPORT] = { "POST", "/v1/import" },
    [TS_ROUTE_BUDGET] = { "POST", "/v1/budget" },
};

static const char *const ts_route_list[TS_ROUTE_COUNT + 1] = { "GET /v1/presets",
                                                               "GET /v1/gpus",
                                                               "POST /v1/memory",
                                                               "POST /v1/compute",
                                                               "POST /v1/checkpoint",
                                                               "POST /v1/plan",
                                                               "POST /v1/fit",
                                                               "POST /v1/search",
                                                               "POST /v1/import",
                                                               "POST /v1/budget",
                                                               NULL };

const char *const *ts_api_routes(void)
{
    return ts_route_list;
}

const char *const *ts_api_catalogues(void)
{
    static const char *const list[] = {
        "/v1/presets", "/v1/gpus", NULL /* ts_routes[TS_ROUTE_PRESETS, _GPUS] */
    };

    return list;
}

static int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* "application/json", any case, optionally followed by parameters
 * ("; charset=utf-8").  "application/jsonx" or "text/json" are not. */
static bool is_json_media_type(const char *ct)
{
    static const char want[] = "application/json";
    size_t i;

    if (ct == NULL)
        return false;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    for (i = 0; want[i] != '\0'; i++)
        if (ascii_lower((unsigned char)ct[i]) != want[i])
            return false;
    ct += i;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    return *ct == '\0' || *ct == ';';
}

/* Hand the writer's text out as a 200, or the problem it ran into. */
static int respond_json(ts_jw *w, ts_api_response *resp)
{
    size_t len = 0;
    char *body;

    if (w->nonfinite != NULL && !w->oom) {
        char detail[160];

        /* We will not print NaN/Inf (not JSON) or null for a number: the
         * inputs lead to a result that cannot be represented. */
        snprintf(detail, sizeof detail, "the result \"%s\" is not a finite number for these inputs",
                 w->nonfinite);
        ts_jw_discard(w);
        return ts_api_problem(resp, TS_PROB_NON_FINITE_RESULT, detail, NULL);
    }
    body = ts_jw_finish(w, &len);
    if (body == NULL) {
        ts_api_oom_response(resp);
        return -1;
    }
    resp->status = 200;
    resp->content_type = "application/json";
    resp->body = body;
    resp->body_len = len;
    return 0;
}

/* A core error as a problem; the import notes go with it, since a 400
 * after an import is when they explain most (issue 24). */
static int respond_core_error(const ts_api_req *req, const ts_error *cerr, ts_api_response *resp)
{
    ts_api_err e;

    ts_api_err_from_core(&e, cerr);
    return ts_api_err_respond_notes(&e, &req->notes, resp);
}

/* With an import in the request: where each input came from, and what
 * the import could not map exactly (ts_import.c); also without one when
 * there is a note (a model name read as another organisation's). */
static void put_import(ts_jw *w, const ts_api_req *req)
{
    if (!req->imported && req->notes.n == 0)
        return;
    ts_json_inputs_source(w, "inputs_source", req);
    ts_json_import_notes(w, "import_notes", &req->notes);
}

/* POST /v1/import: the resolved inputs only, and the model's count so the
 * import can be checked against the checkpoint. */
static int handle_import(const ts_api_req *req, ts_api_response *resp)
{
    ts_error cerr;
    ts_params p;
    ts_jw w;

    memset(&cerr, 0, sizeof cerr);
    if (ts_model_params(&req->run.model, &p, &cerr) != TS_OK)
        return respond_core_error(req, &cerr, resp);
    ts_jw_init(&w);
    ts_jw_open(&w, NULL, '{');
    ts_json_inputs(&w, "inputs", &req->run);
    ts_json_inputs_source(&w, "inputs_source", req);
    ts_json_import_notes(&w, "import_notes", &req->notes);
    ts_json_params(&w, "params", &p);
    ts_jw_close(&w, '}');
    return respond_json(&w, resp);
}

/* req->run is resolved (ts_json_parse_run): the *_resolved estimators
 * validate nothing again. */
static int handle_memory(const ts_api_req *req, ts_api_response *resp)
{
    ts_error cerr;
    ts_memory m;
    ts_jw w;

    memset(&cerr, 0, sizeof cerr);
    if (ts_memory_resolved(&req->run, &m, &cerr) != TS_OK)
        return respond_core_error(req, &cerr, resp);
    ts_jw_init(&w);
    ts_jw_open(&w, NULL, '{');
    ts_json_inputs(&w, "inputs", &req->run);
    put_import(&w, req);
    ts_json_params(&w, "params", &m.params);
    ts_json_memory(&w, "memory", &m);
    ts_jw_close(&w, '}');
    return respond_json(&w, resp);
}

/* POST /v1/compute (compute true) and /v1/checkpoint. */
static int handle_compute_ckpt(bool compute, const ts_api_req *req, ts_api_response *resp)
{
    ts_error cerr;
    ts_params p;
    ts_compute c;
    ts_ckpt k;
    ts_status st;
    ts_jw w;

    memset(&cerr, 0, sizeof cerr);
    if (ts_model_params(&req->run.model, &p, &cerr) != TS_OK)
        return respond_core_error(req, &cerr, resp);
    st = compute ? ts_compute_resolved(&req->run, &c, &cerr)
                 : ts_ckpt_resolved(&req->run, &k, &cerr);
    if (st != TS_OK)
        return respond_core_error(req, &cerr, resp);
    ts_jw_init(&w);
    ts_jw_open(&w, NULL, '{');
    ts_json_inputs(&w, "inputs", &req->run);
    put_import(&w, req);
    ts_json_params(&w, "params", &p);
    if (compute)
        ts_json_compute(&w, "compute", &c, &req->run, req->unresolved.global_batch == 0);
    else
        ts_json_checkpoint(&w, "checkpoint", &k);
    ts_jw_close(&w, '}');
    return respond_json(&w, resp);
}

static int handle_plan(const ts_api_req *req, ts_api_response *resp)
{
    ts_plan *plan = malloc(sizeof *plan); /* ~5 KB: kept off the server thread's stack */
    ts_error cerr;
    ts_budget work;
    ts_jw w;

    if (plan == NULL) {
        ts_api_oom_response(resp);
        return -1;
    }
    memset(&cerr, 0, sizeof cerr);
    ts_budget_init(&work, 0);
    if (ts_plan_resolved_within(&req->run, &work, plan, &cerr) != TS_OK) {
        free(plan);
        return respond_core_error(req, &cerr, resp);
    }
    ts_jw_init(&w);
    ts_jw_open(&w, NULL, '{');
    ts_json_inputs(&w, "inputs", &plan->run);
    put_import(&w, req);
    ts_json_params(&w, "params", &plan->memory.params);
    ts_json_memory(&w, "memory", &plan->memory);
    ts_json_compute(&w, "compute", &plan->compute, &plan->run, req->unresolved.global_batch == 0);
    ts_json_checkpoint(&w, "checkpoint", &plan->ckpt);
    ts_json_sweep(&w, "sweep", plan->sweep, plan->sweep_len);
    /* Only when it happened: answers that were complete stay as they were
     * (24 sweep points never come near the budget). */
    if (work.exhausted)
        ts_jw_bool(&w, "truncated", true);
    free(plan);
    ts_jw_close(&w, '}');
    return respond_json(&w, resp);
}

static int handle_fit(const ts_api_req *req, ts_api_response *resp)
{
    ts_error cerr;
    ts_memory mem;
    ts_run solved = req->unresolved;
    int64_t mb = 0, dp = 0, gpus = 0;
    bool mb_mode = req->solve == TS_FIT_SOLVE_MICRO_BATCH;
    ts_budget work;
    ts_status st;
    ts_jw w;

    memset(&cerr, 0, sizeof cerr);
    ts_budget_init(&work, 0);
    /* The solvers take the run as the user gave it: a resolved run has
     * global_batch filled in, which they would treat as user-fixed. */
    if (mb_mode)
        st = ts_fit_max_micro_batch_within(&req->unresolved, req->max_micro_batch, &work, &mb, &mem,
                                           &cerr);
    else
        st =
            ts_fit_min_gpus_within(&req->unresolved, req->max_gpus, &work, &dp, &gpus, &mem, &cerr);
    if (st != TS_OK && st != TS_ENOFIT)
        return respond_core_error(req, &cerr, resp);

    if (st == TS_OK) {
        ts_error rerr;

        /* Echo the configuration that fits, resolved like a request, so
         * it can be sent as-is to /v1/plan. */
        if (mb_mode) {
            solved.micro_batch = mb;
        } else {
            solved.dp = dp;
            solved.gpus = 0;
        }
        memset(&rerr, 0, sizeof rerr);
        if (ts_run_resolve(&solved, &rerr) != TS_OK)
            return respond_core_error(req, &rerr, resp);
    } else {
        solved = req->run;
    }
    ts_jw_init(&w);
    ts_jw_open(&w, NULL, '{');
    ts_json_inputs(&w, "inputs", &solved);
    put_import(&w, req);
    ts_jw_str(&w, "solve", mb_mode ? "micro_batch" : "gpus");
    ts_jw_bool(&w, "found", st == TS_OK);
    if (st == TS_OK) {
        if (mb_mode) {
            ts_jw_int(&w, "micro_batch", mb);
        } else {
            ts_jw_int(&w, "dp", dp);
            ts_jw_int(&w, "gpus", gpus);
        }
        ts_json_memory(&w, "memory", &mem);
    } else {
        ts_jw_strn(&w, "reason", cerr.text[0] != '\0' ? cerr.text : ts_strerror(st),
                   sizeof cerr.text);
    }
    /* The best found before the budget ran out (the default one holds
     * the solvers' worst case: only said when it did not). */
    if (work.exhausted)
        ts_jw_bool(&w, "truncated", true);
    ts_jw_close(&w, '}');
    return respond_json(&w, resp);
}

/* POST /v1/search: the ranked layouts.  Nothing fitting is an answer
 * (200, results empty, "reason"), like /v1/fit's found: false. */
static int handle_search(const ts_api_req *req, ts_api_response *resp)
{
    ts_error cerr;
    ts_search_out *out = malloc(sizeof *out); /* ~40 KB: off the thread's stack */
    ts_budget work;
    ts_status st;
    ts_jw w;

    if (out == NULL) {
        ts_api_oom_response(resp);
        return -1;
    }
    memset(&cerr, 0, sizeof cerr);
    ts_budget_init(&work, 0);
    st = ts_search_run_within(&req->run, &req->search, &work, out, &cerr);
    if (st != TS_OK && st != TS_ENOFIT) {
        free(out);
        return respond_core_error(req, &cerr, resp);
    }
    ts_jw_init(&w);
    ts_jw_open(&w, NULL, '{');
    ts_json_inputs(&w, "inputs", &req->run);
    put_import(&w, req);
    ts_json_search(&w, req, out);
    ts_jw_bool(&w, "found", st == TS_OK);
    if (st != TS_OK)
        ts_jw_strn(&w, "reason", cerr.text, sizeof cerr.text);
    ts_jw_close(&w, '}');
    free(out);
    return respond_json(&w, resp);
}

/* POST /v1/budget: the model and tokens a budget of GPU time buys, and
 * the plan of it (core/ts_sizing.c), whose "request" is a /v1/plan body
 * that gives the same figures.  The sizing's searches and the plan share
 * the request's work budget. */
static int handle_budget(const ts_api_req *req, ts_api_response *resp)
{
    ts_search_out *scratch = malloc(sizeof *scratch); /* ~40 KB each: off the stack */
    ts_sizing_out *out = malloc(sizeof *out);
    ts_plan *plan = malloc(sizeof *plan);
    ts_error cerr;
    ts_budget work;
    int rc;
    ts_jw w;

    if (scratch == NULL || out == NULL || plan == NULL) {
        free(scratch);
        free(out);
        free(plan);
        ts_api_oom_response(resp);
        return -1;
    }
    memset(&cerr, 0, sizeof cerr);
    ts_budget_init(&work, 0);
    if (ts_sizing_run(&req->unresolved, &req->budget, &work, scratch, out, &cerr) != TS_OK ||
        ts_plan_resolved_within(&out->run, &work, plan, &cerr) != TS_OK) {
        rc = respond_core_error(req, &cerr, resp);
        goto done;
    }
    ts_jw_init(&w);
    ts_jw_open(&w, NULL, '{');
    ts_json_inputs(&w, "request", &plan->run);
    put_import(&w, req);
    ts_json_budget(&w, "budget", req, out, plan);
    ts_json_params(&w, "params", &plan->memory.params);
    ts_json_memory(&w, "memory", &plan->memory);
    ts_json_compute(&w, "compute", &plan->compute, &plan->run, req->unresolved.global_batch == 0);
    ts_json_checkpoint(&w, "checkpoint", &plan->ckpt);
    if (work.exhausted || out->truncated)
        ts_jw_bool(&w, "truncated", true);
    ts_jw_close(&w, '}');
    rc = respond_json(&w, resp);
done:
    free(scratch);
    free(out);
    free(plan);
    return rc;
}

static int handle_get(ts_route_id id, ts_api_response *resp)
{
    ts_jw w;

    ts_jw_init(&w);
    ts_jw_open(&w, NULL, '{');
    if (id == TS_ROUTE_PRESETS) {
        ts_api_req *scratch = malloc(sizeof *scratch);
        ts_error cerr;
        ts_status st;

        if (scratch == NULL) {
            ts_jw_discard(&w);
            ts_api_oom_response(resp);
            return -1;
        }
        memset(&cerr, 0, sizeof cerr);
        st = ts_json_presets(&w, "presets", scratch, &cerr);
        free(scratch);
        if (st != TS_OK) {
            /* A broken built-in catalogue is our bug, not the caller's. */
            ts_jw_discard(&w);
            return ts_api_problem(resp, TS_PROB_INTERNAL_ERROR, cerr.text, NULL);
        }
    } else {
        ts_json_gpus(&w, "gpus");
    }
    ts_jw_close(&w, '}');
    return respond_json(&w, resp);
}

/* The route of path (the query string never selects one), or NULL. */
static const ts_route *find_route(const char *path, ts_route_id *id)
{
    size_t plen = path != NULL ? strcspn(path, "?") : 0;
    size_t i;

    for (i = 0; i < TS_ROUTE_COUNT; i++) {
        /* path may be NULL (plen 0): memcmp must not see it even then. */
        if (path != NULL && strlen(ts_routes[i].path) == plen &&
            memcmp(ts_routes[i].path, path, plen) == 0) {
            *id = (ts_route_id)i;
            return &ts_routes[i];
        }
    }
    return NULL;
}

/* false when route r takes method, else true and its 405 (with Allow)
 * into resp, ts_api_problem's result into *rc.  HEAD is served wherever
 * GET is (the server sends the headers only), so Allow names both
 * (RFC 9110 9.3.2, 15.5.6). */
static bool refuse_method(const ts_route *r, const char *method, ts_api_response *resp, int *rc)
{
    bool is_get = strcmp(r->method, "GET") == 0;
    char detail[96];

    if (method != NULL &&
        (strcmp(method, r->method) == 0 || (is_get && strcmp(method, "HEAD") == 0)))
        return false;
    resp->allow = is_get ? "GET, HEAD" : r->method;
    snprintf(detail, sizeof detail, "%s accepts %s only", r->path, resp->allow);
    *rc = ts_api_problem(resp, TS_PROB_METHOD_NOT_ALLOWED, detail, NULL);
    return true;
}

/* false when a POST body may be parsed, else true and its 413 or 415
 * into resp, ts_api_problem's result into *rc. */
static bool refuse_body(const char *content_type, size_t body_len, ts_api_response *resp, int *rc)
{
    char detail[160];

    if (body_len > TS_API_BODY_MAX) {
        /* the server's words for its own 413 (server/ts_reply.c), which
         * stops reading at the cap and never learns the length: the CLI's
         * --local answers with these bytes too */
        snprintf(detail, sizeof detail, "request body exceeds the %u byte limit", TS_API_BODY_MAX);
        *rc = ts_api_problem(resp, TS_PROB_PAYLOAD_TOO_LARGE, detail, NULL);
        return true;
    }
    if (!is_json_media_type(content_type)) {
        const char *got = content_type != NULL ? content_type : "none";
        const char *q = content_type != NULL ? "\"" : "";

        snprintf(detail, sizeof detail,
                 "send the request body as Content-Type: "
                 "application/json (got %s%.*s%s)",
                 q, ts_utf8_prec(got, 64), got, q);
        *rc = ts_api_problem(resp, TS_PROB_UNSUPPORTED_MEDIA_TYPE, detail, NULL);
        return true;
    }
    return false;
}

/* A POST route's body parsed, then its handler. */
static int handle_post(ts_route_id id, const char *body, size_t body_len, ts_api_response *resp)
{
    ts_api_req req;
    ts_api_err err;

    if ((id == TS_ROUTE_SEARCH ? ts_json_parse_search(body, body_len, &req, &err)
         : id == TS_ROUTE_BUDGET
             ? ts_json_parse_budget(body, body_len, &req, &err)
             : ts_json_parse_run(body, body_len, id == TS_ROUTE_FIT, &req, &err)) != 0) {
        if (err.status == 503) {
            ts_api_oom_response(resp);
            return -1;
        }
        return ts_api_err_respond_notes(&err, &req.notes, resp);
    }
    switch (id) {
    case TS_ROUTE_MEMORY:
        return handle_memory(&req, resp);
    case TS_ROUTE_COMPUTE:
    case TS_ROUTE_CHECKPOINT:
        return handle_compute_ckpt(id == TS_ROUTE_COMPUTE, &req, resp);
    case TS_ROUTE_PLAN:
        return handle_plan(&req, resp);
    case TS_ROUTE_FIT:
        return handle_fit(&req, resp);
    case TS_ROUTE_SEARCH:
        return handle_search(&req, resp);
    case TS_ROUTE_IMPORT:
        return handle_import(&req, resp);
    case TS_ROUTE_BUDGET:
        return handle_budget(&req, resp);
    case TS_ROUTE_PRESETS:
    case TS_ROUTE_GPUS:
    case TS_ROUTE_COUNT:
    default:
        return ts_api_problem(resp, TS_PROB_INTERNAL_ERROR, "route has no estimator", NULL);
    }
}

int ts_api_handle(const char *method, const char *path, const char *content_type, const char *body,
                  size_t body_len, ts_api_response *resp)
{
    const ts_route *r;
    ts_route_id id = TS_ROUTE_COUNT;
    int rc = 0;

    if (resp == NULL)
        return -1;
    memset(resp, 0, sizeof *resp);
    resp->route = "other";

    r = find_route(path, &id);
    if (r == NULL) {
        char detail[160];
        const char *p = path != NULL ? path : "(none)";

        snprintf(detail, sizeof detail, "no such resource: %.*s", ts_utf8_prec(p, 96), p);
        return ts_api_problem(resp, TS_PROB_NOT_FOUND, detail, NULL);
    }
    resp->route = r->path;
    if (refuse_method(r, method, resp, &rc))
        return rc;
    if (id == TS_ROUTE_PRESETS || id == TS_ROUTE_GPUS)
        return handle_get(id, resp);
    if (refuse_body(content_type, body_len, resp, &rc))
        return rc;
    return handle_post(id, body, body_len, resp);
}
