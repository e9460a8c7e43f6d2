/*
 * ts_cli_check.c - plans and their verdicts (see ts_cli_check.h).
 *
 * Every file is read once, up front (so "-" can stand for stdin once and
 * the reports can find line numbers in the text); then each plan is sent
 * on its own and its result kept for the report (ts_cli_out.c).
 */
#include "ts_cli_check.h"
#include "ts_cli_out.h"
#include "ts_cli_report.h"
#include "ts_fmt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const ts_check_format_names[TS_CHECK_FORMAT_COUNT + 1] = {
    [TS_CHECK_TEXT] = "text",   [TS_CHECK_JSON] = "json",       [TS_CHECK_JSONL] = "jsonl",
    [TS_CHECK_JUNIT] = "junit", [TS_CHECK_GITHUB] = "github",   [TS_CHECK_MARKDOWN] = "markdown",
    [TS_CHECK_CSV] = "csv",     [TS_CHECK_FORMAT_COUNT] = NULL,
};

const char *const ts_check_import_members[TS_CHECK_IMP_COUNT] = {
    [TS_CHECK_IMP_HF] = "hf_config",
    [TS_CHECK_IMP_DS] = "deepspeed_config",
    [TS_CHECK_IMP_MEGA] = "megatron_args",
    [TS_CHECK_IMP_AXOLOTL] = "axolotl_config",
    [TS_CHECK_IMP_LLAMAFACTORY] = "llamafactory_config",
    [TS_CHECK_IMP_NEMO] = "nemo_config",
};

/* JSON objects; the others are text (a JSON string in the request) */
static bool import_is_json(size_t k)
{
    return k == TS_CHECK_IMP_HF || k == TS_CHECK_IMP_DS;
}

/* ---------------------------------------------------------------- */
/* options                                                           */
/* ---------------------------------------------------------------- */

bool ts_check_parse_margin(const char *s, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s)
        return false;
    if (*end == '%') {
        v /= 100.0;
        end++;
    }
    if (*end != '\0' || !isfinite(v) || v < 0 || v >= 1)
        return false;
    *out = v;
    return true;
}

/* "-" (stdin) can be read once. */
static bool stdin_taken(const ts_check_opts *o)
{
    size_t k;

    for (k = 0; k < o->n_files; k++)
        if (strcmp(o->files[k], "-") == 0)
            return true;
    for (k = 0; k < TS_CHECK_IMP_COUNT; k++)
        if (o->imports[k] != NULL && strcmp(o->imports[k], "-") == 0)
            return true;
    return false;
}

int ts_check_add_file(ts_check_opts *o, const char *path, char *err, size_t errlen)
{
    if (o->n_files >= TS_CHECK_FILES_MAX) {
        snprintf(err, errlen, "at most %d plan files per run", TS_CHECK_FILES_MAX);
        return -1;
    }
    if (strcmp(path, "-") == 0 && stdin_taken(o)) {
        snprintf(err, errlen, "'-' (standard input) can be given once");
        return -1;
    }
    o->files[o->n_files++] = path;
    return 0;
}

int ts_check_set_import(ts_check_opts *o, ts_check_import k, const char *path, char *err,
                        size_t errlen)
{
    bool again = o->imports[k] != NULL && strcmp(o->imports[k], "-") == 0;

    if (strcmp(path, "-") == 0 && stdin_taken(o) && !again) {
        snprintf(err, errlen, "'-' (standard input) can be given once");
        return -1;
    }
    o->imports[k] = path;
    return 0;
}

/* ---------------------------------------------------------------- */
/* files                                                             */
/* ---------------------------------------------------------------- */

static void slurp(ts_check_src *s)
{
    bool in = strcmp(s->path, "-") == 0;
    FILE *f = in ? stdin : fopen(s->path, "rb");
    size_t n;

    if (f == NULL) {
        snprintf(s->why, sizeof s->why, "cannot read %s: %s", s->path, strerror(errno));
        return;
    }
    s->text = malloc((size_t)TS_CHECK_FILE_MAX + 1);
    if (s->text == NULL) {
        snprintf(s->why, sizeof s->why, "out of memory reading %s", s->path);
    } else {
        n = fread(s->text, 1, (size_t)TS_CHECK_FILE_MAX + 1, f);
        if (ferror(f) || n > (size_t)TS_CHECK_FILE_MAX) {
            snprintf(s->why, sizeof s->why,
                     ferror(f) ? "cannot read %s" : "%s is larger than 1 MiB",
                     in ? "standard input" : s->path);
            free(s->text);
            s->text = NULL;
        } else {
            s->text[n] = '\0';
            s->len = n;
        }
    }
    if (!in)
        fclose(f);
}

static json_t *parse_json(const ts_check_src *s, bool object, char *err, size_t errlen)
{
    json_error_t je;
    json_t *j;

    if (s->text == NULL) {
        snprintf(err, errlen, "%s", s->why);
        return NULL;
    }
    j = json_loadb(s->text, s->len, JSON_REJECT_DUPLICATES, &je);
    if (j == NULL) {
        snprintf(err, errlen, "%s: invalid JSON at line %d, column %d: %s", s->path, je.line,
                 je.column, je.text);
        return NULL;
    }
    if (object && !json_is_object(j)) {
        snprintf(err, errlen, "%s: a plan is a JSON object (the API's request body)", s->path);
        json_decref(j);
        return NULL;
    }
    return j;
}

/* A plan's import member given as a file next to the plan
 * ("hf_config": "configs/x.json"): the CLI reads it and sends it inline,
 * the server never reads a file.  A JSON member (hf_config,
 * deepspeed_config) given as a string is always a path; a text member
 * (megatron_args, axolotl_config, llamafactory_config, nemo_config) is a path when it is one
 * word that looks like one (a '/' or a .sh .txt .args .yaml .yml name),
 * else the text itself. */
static bool looks_like_path(const char *s)
{
    static const char *const ext[] = { ".sh", ".txt", ".args", ".yaml", ".yml", ".json", NULL };
    size_t n = strlen(s), k;

    if (n == 0 || n >= 4096 || s[0] == '-' || strpbrk(s, " \t\r\n") != NULL)
        return false;
    if (strchr(s, '/') != NULL)
        return true;
    for (k = 0; ext[k] != NULL; k++) {
        size_t el = strlen(ext[k]);

        if (n > el && strcmp(s + n - el, ext[k]) == 0)
            return true;
    }
    return false;
}

/* rel, relative to the directory of plan_path (as is when absolute or
 * when the plan is standard input), into a malloc'd path. */
static char *path_next_to(const char *plan_path, const char *rel)
{
    const char *slash = plan_path != NULL ? strrchr(plan_path, '/') : NULL;
    size_t dl = slash != NULL && rel[0] != '/' && strcmp(plan_path, "-") != 0
                    ? (size_t)(slash - plan_path) + 1
                    : 0;
    char *p = malloc(dl + strlen(rel) + 1);

    if (p != NULL) {
        memcpy(p, plan_path, dl);
        strcpy(p + dl, rel);
    }
    return p;
}

static int inline_paths(json_t *plan, const char *plan_path, char *err, size_t errlen)
{
    size_t k;

    for (k = 0; k < TS_CHECK_IMP_COUNT; k++) {
        const char *m = ts_check_import_members[k];
        const char *rel = json_string_value(json_object_get(plan, m));
        ts_check_src s;
        json_t *v;

        if (rel == NULL || (!import_is_json(k) && !looks_like_path(rel)))
            continue;
        memset(&s, 0, sizeof s);
        s.path = path_next_to(plan_path, rel);
        if (s.path == NULL) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        slurp(&s);
        if (s.text == NULL) {
            snprintf(err, errlen, "%s: %s names a file (a path next to the plan): %s",
                     plan_path != NULL ? plan_path : "plan", m, s.why);
            free((char *)s.path);
            return -1;
        }
        v = import_is_json(k) ? parse_json(&s, true, err, errlen) : json_stringn(s.text, s.len);
        if (v == NULL && !import_is_json(k))
            snprintf(err, errlen, "%s is not UTF-8 text", s.path);
        free(s.text);
        free((char *)s.path);
        if (v == NULL)
            return -1;
        json_object_set_new(plan, m, v);
    }
    return 0;
}

/* The command line's imports as request members, built once. */
static int load_imports(const ts_check_src *srcs, json_t **members, char *err, size_t errlen)
{
    size_t k;

    for (k = 0; k < TS_CHECK_IMP_COUNT; k++) {
        const ts_check_src *s = &srcs[k];

        if (s->path == NULL)
            continue;
        if (import_is_json(k)) {
            members[k] = parse_json(s, true, err, errlen);
        } else if (s->text == NULL) {
            snprintf(err, errlen, "%s", s->why);
        } else {
            members[k] = json_stringn(s->text, s->len);
            if (members[k] == NULL)
                snprintf(err, errlen, "%s is not UTF-8 text", s->path);
        }
        if (members[k] == NULL)
            return -1;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- */
/* one plan                                                          */
/* ---------------------------------------------------------------- */

static void copy_notes(ts_check_result *r, const json_t *answer)
{
    const json_t *notes = ts_report_get(answer, "import_notes");
    size_t i, n = json_array_size(notes);

    if (n == 0)
        return;
    r->notes = calloc(n, sizeof *r->notes);
    if (r->notes == NULL)
        return;
    for (i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(notes, i));

        if (s != NULL && (r->notes[r->n_notes] = strdup(s)) != NULL)
            r->n_notes++;
    }
}

/* The run gates on /v1/plan's answer: compute.goodput's days and cost
 * (with checkpoint writes, failures and restarts: the issue 28 gate, as
 * search's max_days / max_cost) against r->max_days / r->max_cost.  The
 * outcome is appended to the summary at at. */
static ts_check_verdict judge_run(const json_t *a, ts_check_result *r, size_t at)
{
    const json_t *g = ts_report_get(a, "compute.goodput");
    const char *dh = json_string_value(ts_report_get(g, "wall_seconds.human"));
    const char *ch = json_string_value(ts_report_get(g, "human.cost_usd"));
    char *s = r->summary + at;
    size_t room = sizeof r->summary - at;
    bool over_days, over_cost;

    r->days = ts_report_num(g, "wall_days");
    r->cost = ts_report_num(g, "cost_usd");
    if (!isfinite(r->days) || !isfinite(r->cost) || dh == NULL || ch == NULL) {
        snprintf(
            r->summary, sizeof r->summary,
            "the answer has no compute.goodput wall_days / cost_usd for --max-days / --max-cost");
        return TS_CHECK_ERROR;
    }
    if (r->max_cost > 0 && !(ts_report_num(a, "inputs.gpu_hour_usd") > 0)) {
        r->field = "/max_cost";
        snprintf(r->summary, sizeof r->summary,
                 "max_cost needs a price: give gpu_hour_usd, --gpu-hour-usd (field /max_cost)");
        return TS_CHECK_REJECTED;
    }
    over_days = r->max_days > 0 && r->days > r->max_days;
    over_cost = r->max_cost > 0 && r->cost > r->max_cost;
    if (over_days || over_cost) {
        char days[96] = "", cost[96] = "";

        if (over_days)
            snprintf(days, sizeof days, "takes %s (%.6g days), over max_days %.6g", dh, r->days,
                     r->max_days);
        if (over_cost)
            snprintf(cost, sizeof cost, "costs %s, over max_cost %.6g USD", ch, r->max_cost);
        snprintf(s, room, ", but the run with failures %s%s%s", days,
                 over_days && over_cost ? " and " : "", cost);
        return TS_CHECK_NO;
    }
    snprintf(s, room, "; the run with failures takes %s%s%s", dh,
             r->max_cost > 0 ? " and costs " : "", r->max_cost > 0 ? ch : "");
    return TS_CHECK_FITS;
}

ts_check_verdict ts_check_judge(double margin, const json_t *a, ts_check_result *r, FILE *rep)
{
    const json_t *mem = ts_report_get(a, "memory");
    const json_t *t_human = ts_report_get(mem, "total.human");
    const json_t *h_human = ts_report_get(mem, "human.hbm_bytes");
    const json_t *f = ts_report_get(mem, "fits");
    char t[TS_FMT_HUMAN_LEN], h[TS_FMT_HUMAN_LEN], al[TS_FMT_HUMAN_LEN], gap[TS_FMT_HUMAN_LEN];
    double worst;
    bool fits;

    r->total = ts_report_num(mem, "total.value");
    r->hbm = ts_report_num(mem, "hbm_bytes");
    r->worst_stage = ts_report_num(mem, "worst_stage");
    r->allowed = r->hbm * (1.0 - margin);
    if (!json_is_boolean(f) || !isfinite(r->total) || !isfinite(r->hbm)) {
        snprintf(r->summary, sizeof r->summary,
                 "the answer has no memory.total / hbm_bytes / fits");
        return TS_CHECK_ERROR;
    }
    fits = json_is_true(f);
    worst = isfinite(r->worst_stage) ? r->worst_stage : 0;
    if (rep != NULL) {
        bool dummy;

        ts_report_check(rep, a, &dummy);
        ts_report_stages(rep, mem);
    }
    /* the answer's texts; the margin's figures are the CLI's own, written
     * by the API's formatter */
    snprintf(t, sizeof t, "%s", json_is_string(t_human) ? json_string_value(t_human) : "n/a");
    snprintf(h, sizeof h, "%s", json_is_string(h_human) ? json_string_value(h_human) : "n/a");
    ts_fmt_human(al, sizeof al, r->allowed, TS_FMT_BYTES, "B");
    ts_fmt_human(gap, sizeof gap, fabs(r->allowed - r->total), TS_FMT_BYTES, "B");
    if (fits && r->total <= r->allowed) {
        int n = snprintf(r->summary, sizeof r->summary,
                         "fits with a %.4g%% margin: %s per GPU (worst stage %.0f) of %s allowed "
                         "(%s HBM), %s to spare",
                         margin * 100, t, worst, al, h, gap);
        ts_check_verdict v = TS_CHECK_FITS;

        if (r->max_days > 0 || r->max_cost > 0)
            v = judge_run(a, r, n > 0 && (size_t)n < sizeof r->summary ? (size_t)n : 0);
        if (rep != NULL)
            fprintf(rep, "%s: %s\n", v == TS_CHECK_FITS ? "PASS" : "FAIL", r->summary);
        return v;
    }
    if (fits)
        snprintf(r->summary, sizeof r->summary,
                 "fits, but not with a %.4g%% margin: %s per GPU (worst stage %.0f) > %s "
                 "allowed of %s HBM, over by %s",
                 margin * 100, t, worst, al, h, gap);
    else
        snprintf(r->summary, sizeof r->summary,
                 "does not fit: %s per GPU (worst stage %.0f) > %s HBM; with a %.4g%% "
                 "margin %s allowed, over by %s",
                 t, worst, h, margin * 100, al, gap);
    if (rep != NULL)
        fprintf(rep, "FAIL: %s\n", r->summary);
    return TS_CHECK_NO;
}

/* The plan's request: the file's object (or {}), the command line's
 * imports, then its run options on top. */
static json_t *build_request(const ts_check_src *plan_src, json_t *const *imports,
                             const json_t *run_opts, ts_check_result *r)
{
    json_t *plan;
    size_t k;

    if (plan_src != NULL) {
        plan = parse_json(plan_src, true, r->summary, sizeof r->summary);
        if (plan != NULL &&
            inline_paths(plan, plan_src->path, r->summary, sizeof r->summary) != 0) {
            json_decref(plan);
            plan = NULL;
        }
        if (plan == NULL) {
            r->verdict = TS_CHECK_REJECTED;
            return NULL;
        }
    } else if ((plan = json_object()) == NULL) {
        r->verdict = TS_CHECK_ERROR;
        snprintf(r->summary, sizeof r->summary, "out of memory");
        return NULL;
    }
    for (k = 0; k < TS_CHECK_IMP_COUNT; k++)
        if (imports[k] != NULL)
            json_object_set(plan, ts_check_import_members[k], imports[k]);
    json_object_update(plan, (json_t *)run_opts);
    return plan;
}

/* A 4xx/5xx answer: the problem's detail and field in the summary. */
static void judge_problem(const ts_http_response *resp, ts_check_result *r)
{
    const json_t *a = r->answer;
    const char *detail = json_string_value(json_object_get(a, "detail"));
    const char *field = json_string_value(json_object_get(a, "field"));
    bool problem = a != NULL && ts_http_is_problem(resp);

    r->verdict = resp->status >= 500 ? TS_CHECK_ERROR : TS_CHECK_REJECTED;
    if (!problem) {
        snprintf(r->summary, sizeof r->summary, "answered HTTP %ld", resp->status);
        return;
    }
    r->field = field != NULL && *field ? field : NULL;
    snprintf(r->summary, sizeof r->summary, "rejected (HTTP %ld): %s%s%s%s", resp->status,
             detail != NULL ? detail : "no detail", r->field ? " (field " : "",
             r->field ? r->field : "", r->field ? ")" : "");
}

/* max_days / max_cost of the plan (a file's member or --max-days /
 * --max-cost): taken out of the request, which /v1/memory and /v1/plan
 * do not take (they are search's members), and held against the plan's
 * compute.goodput.  Ranges as core/ts_fields.def gives them. */
static int take_gate(json_t *plan, const char *key, double max, double *out, ts_check_result *r)
{
    const json_t *v = json_object_get(plan, key);
    double x;

    *out = 0;
    if (v == NULL)
        return 0;
    x = json_number_value(v);
    if (!json_is_number(v) || !(x >= 0 && x <= max)) {
        r->verdict = TS_CHECK_REJECTED;
        r->field = key[4] == 'd' ? "/max_days" : "/max_cost";
        snprintf(r->summary, sizeof r->summary,
                 "%s must be a number in [0, %g], 0 for no limit (field %s)", key, max, r->field);
        return -1;
    }
    *out = x;
    json_object_del(plan, key);
    return 0;
}

static void check_one(const ts_check_opts *o, const ts_conn *conn, json_t *const *imports,
                      const json_t *run_opts, const ts_check_src *plan_src, ts_check_result *r)
{
    ts_http_response resp;
    ts_http_error herr;
    json_t *plan;
    char *body = NULL;
    FILE *rep = NULL;
    double t0 = now_s();
    bool gated;

    r->file = plan_src != NULL ? plan_src->path : NULL;
    r->total = r->allowed = r->hbm = r->worst_stage = NAN;
    r->days = r->cost = NAN;
    plan = build_request(plan_src, imports, run_opts, r);
    if (plan == NULL)
        goto done;
    if (take_gate(plan, "max_days", 1e12, &r->max_days, r) != 0 ||
        take_gate(plan, "max_cost", 1e18, &r->max_cost, r) != 0) {
        json_decref(plan);
        goto done;
    }
    gated = r->max_days > 0 || r->max_cost > 0;
    body = json_dumps(plan, JSON_COMPACT);
    json_decref(plan);
    if (body == NULL) {
        r->verdict = TS_CHECK_ERROR;
        snprintf(r->summary, sizeof r->summary, "out of memory");
        goto done;
    }
    if (ts_conn_request(conn, "POST", o->estimate || gated ? "/v1/plan" : "/v1/memory", body, &resp,
                        &herr) != TS_HTTP_OK) {
        r->verdict = TS_CHECK_ERROR;
        snprintf(r->summary, sizeof r->summary, "%s", herr.text);
        goto done;
    }
    r->raw = resp.body; /* ownership moves to the result */
    r->raw_len = resp.len;
    r->answer = json_loadb(resp.body, resp.len, 0, NULL);
    if (resp.status < 200 || resp.status > 299) {
        judge_problem(&resp, r);
        goto done;
    }
    if (!json_is_object(r->answer)) {
        r->verdict = TS_CHECK_ERROR;
        snprintf(r->summary, sizeof r->summary, "%s is not a trainsize server (invalid JSON)",
                 ts_conn_name(conn));
        goto done;
    }
    if (!o->notes_off)
        copy_notes(r, r->answer);
    /* check's text report: the verdict line, the memory rows, the stages */
    if (!o->estimate)
        rep = open_memstream(&r->report, &r->report_len);
    r->verdict = ts_check_judge(o->margin, r->answer, r, rep);
    if (rep != NULL)
        fclose(rep);
done:
    r->seconds = now_s() - t0;
    free(body);
}

static void free_result(ts_check_result *r)
{
    size_t k;

    free(r->report);
    free(r->raw);
    json_decref(r->answer);
    for (k = 0; k < r->n_notes; k++)
        free(r->notes[k]);
    free(r->notes);
}

int ts_check_request(const ts_check_opts *o, const json_t *run_opts, json_t **req, char *why,
                     size_t whylen)
{
    ts_check_src srcs[TS_CHECK_IMP_COUNT + 1];
    json_t *imports[TS_CHECK_IMP_COUNT] = { NULL };
    ts_check_result r;
    size_t k;
    int rc = -1;

    memset(srcs, 0, sizeof srcs);
    memset(&r, 0, sizeof r);
    *req = NULL;
    for (k = 0; k < TS_CHECK_IMP_COUNT; k++)
        srcs[k].path = o->imports[k];
    srcs[TS_CHECK_IMP_COUNT].path = o->n_files > 0 ? o->files[0] : NULL;
    for (k = 0; k <= TS_CHECK_IMP_COUNT; k++)
        if (srcs[k].path != NULL)
            slurp(&srcs[k]);
    if (load_imports(srcs, imports, why, whylen) == 0) {
        *req =
            build_request(o->n_files > 0 ? &srcs[TS_CHECK_IMP_COUNT] : NULL, imports, run_opts, &r);
        if (*req == NULL)
            snprintf(why, whylen, "%s", r.summary);
        else
            rc = 0;
    }
    for (k = 0; k < TS_CHECK_IMP_COUNT; k++)
        json_decref(imports[k]);
    for (k = 0; k <= TS_CHECK_IMP_COUNT; k++)
        free(srcs[k].text);
    return rc;
}

int ts_check_run(const ts_check_opts *o, const ts_conn *conn, const json_t *run_opts, FILE *out,
                 FILE *err)
{
    size_t n = o->n_files > 0 ? o->n_files : 1, i, k;
    size_t n_src = o->n_files + TS_CHECK_IMP_COUNT;
    ts_check_src *srcs = calloc(n_src, sizeof *srcs);
    ts_check_result *rs = calloc(n, sizeof *rs);
    json_t *imports[TS_CHECK_IMP_COUNT] = { NULL };
    char why[640];
    int worst = TS_CHECK_FITS;

    if (srcs == NULL || rs == NULL) {
        fprintf(err, "trainsize: out of memory\n");
        worst = TS_CHECK_ERROR;
        goto out;
    }
    /* srcs: the imports first (their order in ts_check_import), then the plans */
    for (k = 0; k < TS_CHECK_IMP_COUNT; k++)
        srcs[k].path = o->imports[k];
    for (k = 0; k < o->n_files; k++)
        srcs[TS_CHECK_IMP_COUNT + k].path = o->files[k];
    for (k = 0; k < n_src; k++)
        if (srcs[k].path != NULL)
            slurp(&srcs[k]);
    if (load_imports(srcs, imports, why, sizeof why) != 0) {
        fprintf(err, "trainsize: %s\n", why);
        worst = TS_CHECK_REJECTED;
        goto out;
    }
    for (i = 0; i < n; i++) {
        check_one(o, conn, imports, run_opts, o->n_files > 0 ? &srcs[TS_CHECK_IMP_COUNT + i] : NULL,
                  &rs[i]);
        if ((int)rs[i].verdict > worst)
            worst = (int)rs[i].verdict;
    }
    {
        ts_check_run_info info = { o, conn, rs, n, srcs };

        ts_out_plans(out, err, &info);
    }
out:
    for (k = 0; k < TS_CHECK_IMP_COUNT; k++)
        json_decref(imports[k]);
    for (i = 0; rs != NULL && i < n; i++)
        free_result(&rs[i]);
    for (k = 0; srcs != NULL && k < n_src; k++)
        free(srcs[k].text);
    free(rs);
    free(srcs);
    return worst;
}
