/*
 * test_cli.c - the `trainsize` CLI against the real server on loopback.
 *
 * The parent process starts trainsize-server on port 0 once (unchecked
 * fixture); every test runs the built CLI binary as a child process and
 * compares what it prints and its exit code with the API's own JSON
 * answer for the same run, fetched directly.  So the expected values are
 * the server's, and the test proves the CLI neither drops nor distorts
 * them.  Paths come from meson: TRAINSIZE_SERVER (with TRAINSIZE_SRCDIR, for the shared harness) and TS_CLI.  TS_CLI_WRAP (e.g.
 * "valgrind --error-exitcode=99 ...") prefixes every CLI run.
 */
#include "ts_cli_report.h"
#include "ts_cli_terms.h"
#include "th_harness.h"
#include "th_json.h"

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#define URL_LEN  128
#define MAX_ARGS 64

/* Test-process state (not request state): the URL of the one server all
 * tests share (th_shared, tests/helpers/th_harness.h). */
static char server_url[URL_LEN];
static char server_port[16];

typedef th_proc run_result;
#define result_free th_proc_free

/* ---------- process helpers ---------- */

/* Run the CLI ($TS_CLI, behind $TS_CLI_WRAP) with args (NULL-terminated)
 * and env edits ("K=V" sets, "K" unsets); stdout and stderr captured. */
static run_result run_cli_env(const char *const *args, const char *const *env)
{
    const char *argv[MAX_ARGS] = { getenv("TS_CLI") };
    size_t n = 1;
    run_result r;

    ck_assert_msg(argv[0] != NULL, "TS_CLI not set");
    for (size_t i = 0; args[i] != NULL; i++) {
        ck_assert_uint_lt(n, MAX_ARGS - 1);
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    ck_assert_int_eq(th_exec(argv, "TS_CLI_WRAP", env, &r), 0);
    return r;
}

/* Default env for tests: no TRAINSIZE_* leaking in from the caller. */
static const char *const clean_env[] = { "TRAINSIZE_URL", "TRAINSIZE_PORT", "TRAINSIZE_LOCAL",
                                         NULL };

static run_result run_cli(const char *const *args)
{
    return run_cli_env(args, clean_env);
}

/* A loopback port with nothing listening: bind port 0, read it, close. */
static int closed_port(void)
{
    struct sockaddr_in a = { 0 };
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;

    ck_assert_int_ge(fd, 0);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* ---------- server fixture ---------- */

/* The real server, started by the shared harness (tests/helpers). */
static void server_start(void)
{
    th_shared_start();
    snprintf(server_url, sizeof server_url, "http://127.0.0.1:%u", th_shared.port);
    snprintf(server_port, sizeof server_port, "%u", th_shared.port);
}

/* ---------- direct API access for the expected values ---------- */

/* Over libcurl (tests/helpers), not the CLI's own client: the expected
 * values must not share the code under test. */
static json_t *api(const char *method, const char *path, const char *body, long *status)
{
    th_req rq = { .method = method,
                  .path = path,
                  .content_type = body != NULL ? "application/json" : NULL,
                  .body = body,
                  .body_len = body != NULL ? strlen(body) : 0 };
    th_resp resp;
    json_t *j;

    ck_assert_msg(th_http(th_shared.port, &rq, &resp) == 0, "API %s %s: no answer (curl %d)",
                  method, path, (int)resp.curl_rc);
    j = th_json_parse(resp.body, resp.len);
    if (status)
        *status = resp.status;
    th_resp_free(&resp);
    return j;
}

static json_t *api_ok(const char *method, const char *path, const char *body)
{
    long st = 0;
    json_t *j = api(method, path, body, &st);
    ck_assert_int_eq(st, 200);
    return j;
}

/* The exit status a plan answer's verdict means (margin 0): 0 when the
 * worst stage fits, 1 when it does not (ts_cli_exits[]). */
static int verdict_exit(const json_t *answer)
{
    const json_t *f = th_json_get(answer, "memory.fits");

    ck_assert_msg(json_is_boolean(f), "answer without memory.fits");
    return json_is_true(f) ? 0 : 1;
}

/* One row of the CLI's table, "  <label> <human> <exact>" at the fixed
 * columns of ts_cli_report.c (label TS_REPORT_LABEL_W wide, text right-
 * aligned in 16, then 3 spaces): the first row whose label is exactly
 * label after the line section (a heading; NULL: from the top).  Returns
 * false when there is none. */
typedef struct table_row {
    char human[64];
    double exact; /* NAN when the row has no exact column */
} table_row;

static bool table_row_at(const char *out, const char *section, const char *label, table_row *row)
{
    const char *p = out;
    size_t ll = strlen(label);
    const size_t text_at = 2 + TS_REPORT_LABEL_W + 1, exact_at = text_at + 16 + 3;

    if (section != NULL) {
        size_t sl = strlen(section);

        for (;;) {
            const char *nl = strchr(p, '\n');

            if (strncmp(p, section, sl) == 0 && (p[sl] == '\n' || p[sl] == ' '))
                break;
            if (nl == NULL)
                return false;
            p = nl + 1;
        }
    }
    for (; *p != '\0'; p = strchr(p, '\n') != NULL ? strchr(p, '\n') + 1 : p + strlen(p)) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        size_t k;
        const char *t;

        if (len < text_at + 16 || strncmp(p, "  ", 2) != 0 || strncmp(p + 2, label, ll) != 0)
            continue;
        for (k = 2 + ll; k < text_at && p[k] == ' '; k++)
            ;
        if (k != text_at)
            continue; /* a longer label that starts with this one */
        for (t = p + text_at; *t == ' '; t++)
            ;
        snprintf(row->human, sizeof row->human, "%.*s", (int)(p + text_at + 16 - t), t);
        row->exact = len > exact_at ? strtod(p + exact_at, NULL) : NAN;
        return true;
    }
    return false;
}

static double table_exact(const char *out, const char *label)
{
    table_row row;

    return table_row_at(out, NULL, label, &row) ? row.exact : NAN;
}

static const char *table_text(const char *out, const char *label, char *buf, size_t len)
{
    table_row row;

    size_t n;

    if (!table_row_at(out, NULL, label, &row))
        return NULL;
    n = strlen(row.human);
    if (n >= len)
        return NULL;
    memcpy(buf, row.human, n + 1);
    return buf;
}

/* |got - want| within tol absolute or rel relative. */
static void expect_close(const char *what, double got, double want, double abs_tol, double rel_tol)
{
    double d = fabs(got - want);
    ck_assert_msg(isfinite(got), "%s: row missing in CLI output", what);
    ck_assert_msg(d <= abs_tol || d <= rel_tol * fabs(want), "%s: CLI %.17g vs API %.17g", what,
                  got, want);
}

/* ---------- tests ---------- */

/* The answer's text for a CLI row (where ts_cli_terms.h says it is). */
static const char *answer_text(const json_t *obj, const ts_cli_term *t)
{
    const json_t *v =
        t->shape == TS_CLI_TERM_OBJECT    ? json_object_get(json_object_get(obj, t->key), "human")
        : t->shape == TS_CLI_TERM_SIBLING ? json_object_get(obj, t->human_key)
                                          : json_object_get(json_object_get(obj, "human"), t->key);

    return json_string_value(v);
}

/* llama3-8b, ZeRO 3 on 8 GPUs with a price: every row of the table
 * (ts_cli_terms[], the API's terms table) shows the API's own text for it
 * ("human"), and its exact column equals the value.  Tolerances: bytes
 * print as %.0f, so 0.5 B; other exact values as %.6g, 6 significant
 * digits, so a relative error of at most 5e-6 (we allow 1e-5). */
START_TEST(estimate_table_matches_api)
{
    static const char body[] =
        "{\"model\":\"llama3-8b\",\"gpu\":\"h100-sxm\",\"gpus\":8,\"zero\":3,"
        "\"gpu_hour_usd\":2}";
    const char *args[] = { "--url", server_url,       "estimate", "--model", "llama3-8b",
                           "--gpu", "h100-sxm",       "--gpus",   "8",       "--zero",
                           "3",     "--gpu-hour-usd", "2",        NULL };
    json_t *plan = api_ok("POST", "/v1/plan", body);
    run_result r = run_cli(args);
    char fits[16];
    size_t shown = 0;

    ck_assert_msg(r.code == 0, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "llama3-8b on 8 x h100-sxm"));
    for (size_t i = 0; i < ts_cli_term_count; i++) {
        const ts_cli_term *t = &ts_cli_terms[i];
        const json_t *obj = th_json_get(plan, t->obj);
        const json_t *vj = json_object_get(obj, t->key);
        const char *want = answer_text(obj, t);
        const char *title = NULL;
        double v =
            json_number_value(t->shape == TS_CLI_TERM_OBJECT ? json_object_get(vj, "value") : vj);
        table_row row;

        if (strcmp(t->obj, "budget") == 0)
            continue; /* /v1/budget's own: budget_table_matches_api */
        for (const ts_cli_term_obj *o = ts_cli_term_objs; o->path != NULL; o++)
            if (strcmp(o->path, t->obj) == 0)
                title = o->title;
        ck_assert_msg(want != NULL, "API answer lacks the text of %s.%s", t->obj, t->key);
        if (!table_row_at(r.out, title, t->label, &row)) {
            ck_assert_msg(t->nonzero && v == 0, "no row %s (%s) in:\n%s", t->label, title, r.out);
            continue;
        }
        ck_assert_msg(strcmp(row.human, want) == 0, "%s: CLI \"%s\", API \"%s\"", t->label,
                      row.human, want);
        if (strcmp(t->unit, "B") == 0)
            expect_close(t->label, row.exact, v, 0.5, 0);
        else
            expect_close(t->label, row.exact, v, 0, 1e-5);
        shown++;
    }
    ck_assert_uint_ge(shown, 30);
    /* the cost row (nonzero-only) is there with a price */
    ck_assert_double_gt(th_json_num(plan, "compute.cost_usd.value"), 0);
    ck_assert_double_eq_tol(table_exact(r.out, "Cost"), th_json_num(plan, "compute.cost_usd.value"),
                            1e-5 * th_json_num(plan, "compute.cost_usd.value"));
    ck_assert_ptr_nonnull(table_text(r.out, "Fits", fits, sizeof fits));
    ck_assert_str_eq(fits, json_is_true(th_json_get(plan, "memory.fits")) ? "yes" : "no");
    result_free(&r);
    json_decref(plan);
}
END_TEST

/* trainsize budget (issue 28): the summary line and every row of the
 * budget, compute, goodput and energy sections are the API's texts for
 * /v1/budget's answer, and the exact columns its values. */
START_TEST(budget_table_matches_api)
{
    static const char body[] = "{\"gpu\":\"h100-sxm\",\"gpus\":64,\"budget_days\":7,"
                               "\"gpu_hour_usd\":2.5}";
    static const char *const objs[] = { "budget", "compute.goodput", "compute.energy" };
    const char *args[] = { "--url",    server_url,       "budget", "--gpu",
                           "h100-sxm", "--gpus",         "64",     "--budget-days",
                           "7",        "--gpu-hour-usd", "2.5",    NULL };
    json_t *a = api_ok("POST", "/v1/budget", body);
    run_result r = run_cli(args);
    size_t shown = 0;

    ck_assert_msg(r.code == 0, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_msg(strncmp(r.out, json_string_value(th_json_get(a, "budget.summary")),
                          strlen(json_string_value(th_json_get(a, "budget.summary")))) == 0,
                  "first line is not the summary:\n%s", r.out);
    for (size_t i = 0; i < ts_cli_term_count; i++) {
        const ts_cli_term *t = &ts_cli_terms[i];
        const json_t *obj = th_json_get(a, t->obj);
        const char *title = NULL, *want;
        double v;
        table_row row;
        bool ours = false;

        for (size_t k = 0; k < sizeof objs / sizeof objs[0]; k++)
            ours = ours || strcmp(objs[k], t->obj) == 0;
        if (!ours)
            continue;
        want = answer_text(obj, t);
        v = json_number_value(t->shape == TS_CLI_TERM_OBJECT
                                  ? json_object_get(json_object_get(obj, t->key), "value")
                                  : json_object_get(obj, t->key));
        for (const ts_cli_term_obj *o = ts_cli_term_objs; o->path != NULL; o++)
            if (strcmp(o->path, t->obj) == 0)
                title = o->title;
        ck_assert_msg(want != NULL, "API answer lacks the text of %s.%s", t->obj, t->key);
        if (!table_row_at(r.out, title, t->label, &row)) {
            ck_assert_msg(t->nonzero && v == 0, "no row %s (%s) in:\n%s", t->label, title, r.out);
            continue;
        }
        ck_assert_msg(strcmp(row.human, want) == 0, "%s: CLI \"%s\", API \"%s\"", t->label,
                      row.human, want);
        expect_close(t->label, row.exact, v, 0, 1e-5);
        shown++;
    }
    ck_assert_uint_ge(shown, 15);
    result_free(&r);
    json_decref(a);
}
END_TEST

/* The example: 80e9 B of HBM printed "74.51 GiB" by the CLI and
 * "74.5 GiB" by the API.  Now the CLI prints the API's string, and with
 * --formulas each figure's formula under it (a term's from the answer). */
START_TEST(estimate_prints_api_strings_and_formulas)
{
    static const char body[] = "{\"model\":\"llama3-8b\",\"gpus\":8,\"hbm_gb\":80}";
    const char *args[] = { "--url", server_url, "estimate", "--model",    "llama3-8b", "--gpus",
                           "8",     "--hbm-gb", "80",       "--formulas", NULL };
    json_t *plan = api_ok("POST", "/v1/plan", body);
    run_result r = run_cli(args);
    char line[256];
    const char *f = json_string_value(th_json_get(plan, "memory.total.formula"));
    table_row row;

    ck_assert_msg(r.code == verdict_exit(plan), "exit %d, stderr: %s", r.code, r.err);
    /* 80e9 / 2^30 = 74.506 GiB, three significant digits */
    ck_assert_str_eq(json_string_value(th_json_get(plan, "memory.human.hbm_bytes")), "74.5 GiB");
    ck_assert(table_row_at(r.out, "Memory per GPU", "GPU HBM", &row));
    ck_assert_str_eq(row.human, "74.5 GiB");
    ck_assert_ptr_nonnull(f);
    snprintf(line, sizeof line, "\n      = %s\n", f);
    ck_assert_msg(strstr(r.out, line) != NULL, "no formula line '%s' in:\n%s", f, r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "\n      = hbm_bytes - total\n"));
    result_free(&r);
    json_decref(plan);
}
END_TEST

/* --json prints the server's answer unchanged. */
START_TEST(estimate_json_is_api_answer)
{
    static const char body[] = "{\"model\":\"llama3-70b\",\"gpus\":64,\"zero\":1}";
    const char *args[] = { "estimate", "--json", "--model", "llama3-70b", "--gpus", "64",
                           "--zero",   "1",      "--url",   server_url,   NULL };
    json_t *want = api_ok("POST", "/v1/plan", body), *got;
    run_result r = run_cli(args);
    json_error_t jerr;

    /* 70B over 64 GPUs with ZeRO 1 does not fit: exit 1, and the answer
     * still on stdout, unchanged */
    ck_assert_int_eq(verdict_exit(want), 1);
    ck_assert_msg(r.code == 1, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "does not fit"));
    got = json_loads(r.out, 0, &jerr);
    ck_assert_msg(got != NULL, "CLI --json output is not JSON: %s", jerr.text);
    ck_assert_msg(json_equal(got, want), "CLI --json differs from the API answer");
    json_decref(got);
    json_decref(want);
    result_free(&r);
}
END_TEST

/* Issue 25: estimate prints the answer's compute.assumptions (the batch
 * chosen when none is given) and compute.warnings, each line as sent. */
START_TEST(estimate_prints_assumptions_and_warnings)
{
    static const char dflt[] = "{\"model\":\"llama3.1-405b\",\"gpus\":16384,\"tp\":8,\"pp\":16}";
    static const char given[] = "{\"model\":\"llama3.1-405b\",\"gpus\":16384,\"tp\":8,"
                                "\"pp\":16,\"global_batch\":512}";
    const char *a1[] = { "--url",  server_url, "estimate", "--model", "llama3.1-405b",
                         "--gpus", "16384",    "--tp",     "8",       "--pp",
                         "16",     NULL };
    const char *a2[] = { "--url",  server_url,       "estimate", "--model", "llama3.1-405b",
                         "--gpus", "16384",          "--tp",     "8",       "--pp",
                         "16",     "--global-batch", "512",      NULL };
    json_t *p1 = api_ok("POST", "/v1/plan", dflt), *p2 = api_ok("POST", "/v1/plan", given);
    const char *note = json_string_value(json_array_get(th_json_get(p1, "compute.assumptions"), 0));
    const char *warn = json_string_value(json_array_get(th_json_get(p2, "compute.warnings"), 0));
    char line[1024];
    run_result r;

    ck_assert_ptr_nonnull(note);
    ck_assert_ptr_nonnull(warn);
    r = run_cli(a1);
    snprintf(line, sizeof line, "\nAssumed\n  %s\n", note);
    ck_assert_msg(strstr(r.out, line) != NULL, "no '%s' in:\n%.1500s", line, r.out);
    ck_assert_ptr_null(strstr(r.out, "\nWarnings\n"));
    result_free(&r);
    r = run_cli(a2);
    snprintf(line, sizeof line, "\nWarnings\n  ! %s\n", warn);
    ck_assert_msg(strstr(r.out, line) != NULL, "no '%s' in:\n%.1500s", line, r.out);
    ck_assert_ptr_null(strstr(r.out, "\nAssumed\n"));
    result_free(&r);
    json_decref(p1);
    json_decref(p2);
}
END_TEST

/* Options and --set reach the server with the right JSON types: the
 * resolved inputs echo them back. */
START_TEST(options_are_typed)
{
    const char *args[] = {
        "--url",       server_url,  "estimate", "--json", "--model",
        "llama3-8b",   "--set",     "tp=2",     "--set",  "sequence_parallel=true",
        "--set",       "mfu=0.5",   "--tokens", "1T",     "--micro-batch=2",
        "--recompute", "selective", "--gpus",   "16",     NULL
    };
    const char *args2[] = { "--url",
                            server_url,
                            "estimate",
                            "--json",
                            "--model",
                            "llama3-8b",
                            "--sequence-parallel",
                            "--no-sequence-parallel",
                            NULL };
    run_result r = run_cli(args);
    json_t *a;
    json_error_t jerr;

    a = json_loads(r.out, 0, &jerr);
    ck_assert_ptr_nonnull(a);
    ck_assert_msg(r.code == verdict_exit(a), "exit %d, stderr: %s", r.code, r.err);
    ck_assert_int_eq((int)th_json_num(a, "inputs.tp"), 2);
    ck_assert(json_is_true(th_json_get(a, "inputs.sequence_parallel")));
    ck_assert_double_eq_tol(th_json_num(a, "inputs.mfu"), 0.5, 1e-12);
    /* 1T = 1e12 tokens (decimal suffix, as model cards write it) */
    ck_assert_double_eq_tol(th_json_num(a, "inputs.tokens"), 1e12, 1.0);
    ck_assert_int_eq((int)th_json_num(a, "inputs.micro_batch"), 2);
    ck_assert_str_eq(json_string_value(th_json_get(a, "inputs.recompute")), "selective");
    /* gpus 16 = dp * tp with tp 2 -> dp 8 */
    ck_assert_int_eq((int)th_json_num(a, "inputs.dp"), 8);
    json_decref(a);
    result_free(&r);

    /* the last of --x / --no-x wins */
    r = run_cli(args2);
    a = json_loads(r.out, 0, &jerr);
    ck_assert_ptr_nonnull(a);
    ck_assert_msg(r.code == verdict_exit(a), "exit %d, stderr: %s", r.code, r.err);
    ck_assert(json_is_false(th_json_get(a, "inputs.sequence_parallel")));
    json_decref(a);
    result_free(&r);
}
END_TEST

/* llama3-70b on 8 H100 with ZeRO 0: 16 B/param * 70e9 = 1.12e12 B of model
 * state per GPU (oracles.md, seed 000) against 80 GB of HBM: cannot fit.
 * The API must agree, and check exits 1 saying so. */
START_TEST(check_does_not_fit)
{
    static const char body[] =
        "{\"model\":\"llama3-70b\",\"gpu\":\"h100-sxm\",\"gpus\":8,\"zero\":0}";
    const char *args[] = { "--url",    server_url, "check", "--model", "llama3-70b", "--gpu",
                           "h100-sxm", "--gpus",   "8",     "--zero",  "0",          NULL };
    json_t *mem = api_ok("POST", "/v1/memory", body);
    run_result r;
    char total[64];

    ck_assert(json_is_false(th_json_get(mem, "memory.fits")));
    /* lower bound by hand: model state alone is 16 B * 70e9 = 1.12e12 B */
    ck_assert_double_ge(th_json_num(mem, "memory.total.value"), 1.12e12);
    r = run_cli(args);
    ck_assert_msg(r.code == 1, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "DOES NOT FIT"));
    ck_assert_ptr_nonnull(strstr(r.out, "short by"));
    expect_close("check total", table_exact(r.out, "Total per GPU"),
                 th_json_num(mem, "memory.total.value"), 0.5, 0);
    expect_close("check headroom", table_exact(r.out, "Headroom"),
                 th_json_num(mem, "memory.headroom_bytes"), 0.5, 0);
    ck_assert_ptr_nonnull(table_text(r.out, "Headroom", total, sizeof total));
    ck_assert_str_eq(total, json_string_value(th_json_get(mem, "memory.human.headroom_bytes")));
    ck_assert_ptr_nonnull(table_text(r.out, "Fits", total, sizeof total));
    ck_assert_str_eq(total, "no");
    result_free(&r);
    json_decref(mem);
}
END_TEST

/* llama3-8b (h 4096, 32 layers, preset seq 8192), ZeRO 3 over 8 GPUs with
 * selective recompute, Megatron (the default).  By hand: model state
 * 18 B * 8.03e9 / 8 = 18.1e9 B (bf16 weights, fp32 main grads, 12 B of
 * master + Adam); saved activations per token per layer 4 norm/linear
 * inputs 2h + Q, K, V, O 2(h + 2*1024 + h) + SwiGLU 6F = 139264 B, times
 * 8192 tokens and 32 layers = 36.5e9 B; the loss phase adds the fused
 * cross-entropy's (2 + 4) V per token = 6.3e9 B; plus 2 GiB runtime
 * ~ 63e9 B < 85.5e9 B (81559 MiB) of HBM.  The API must agree, and check
 * exits 0. */
START_TEST(check_fits)
{
    static const char body[] = "{\"model\":\"llama3-8b\",\"gpu\":\"h100-sxm\",\"gpus\":8,"
                               "\"zero\":3,\"recompute\":\"selective\"}";
    const char *args[] = { "--url", server_url,    "check",     "--model", "llama3-8b",
                           "--gpu", "h100-sxm",    "--gpus",    "8",       "--zero",
                           "3",     "--recompute", "selective", NULL };
    const char *jargs[] = { "--url",     server_url, "check",       "--json",    "--model",
                            "llama3-8b", "--gpu",    "h100-sxm",    "--gpus",    "8",
                            "--zero",    "3",        "--recompute", "selective", NULL };
    json_t *mem = api_ok("POST", "/v1/memory", body), *got;
    run_result r;

    ck_assert(json_is_true(th_json_get(mem, "memory.fits")));
    /* the hand estimate above, within 10 % (input ids, the final norm
     * and the output layer's inputs are left out there) */
    ck_assert_double_eq_tol(th_json_num(mem, "memory.total.value"), 63e9, 6.3e9);
    r = run_cli(args);
    ck_assert_msg(r.code == 0, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "FITS"));
    ck_assert_ptr_null(strstr(r.out, "DOES NOT FIT"));
    result_free(&r);

    /* check --json is --format json: the answer is the API's, inside */
    r = run_cli(jargs);
    ck_assert_msg(r.code == 0, "exit %d, stderr: %s", r.code, r.err);
    got = json_loads(r.out, 0, NULL);
    ck_assert_ptr_nonnull(got);
    ck_assert(json_equal(th_json_get(got, "plans.0.answer"), mem));
    ck_assert_str_eq(json_string_value(th_json_get(got, "plans.0.verdict")), "fits");
    json_decref(got);
    result_free(&r);
    json_decref(mem);
}
END_TEST

/* search: the table lists the API's ranking in order; nothing fitting
 * exits 1 like check. */
START_TEST(search_table_matches_api)
{
    static const char body[] =
        "{\"model\":\"llama3-8b\",\"gpus\":16,\"global_batch\":64,\"limit\":3}";
    const char *args[] = { "--url", server_url,       "search", "--model", "llama3-8b", "--gpus",
                           "16",    "--global-batch", "64",     "--limit", "3",         NULL };
    const char *none[] = { "--url",  server_url, "search",         "--model", "llama3-405b",
                           "--gpus", "8",        "--global-batch", "8",       NULL };
    json_t *a = api_ok("POST", "/v1/search", body);
    const json_t *first = json_array_get(th_json_get(a, "results"), 0);
    char want[96];
    run_result r;

    ck_assert_ptr_nonnull(first);
    r = run_cli(args);
    ck_assert_msg(r.code == 0, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "rank"));
    /* rank 1's layout columns as the API gave them */
    snprintf(want, sizeof want, "   1    16 %3.0f %3.0f %3.0f %5.0f", th_json_num(first, "tp"),
             th_json_num(first, "pp"), th_json_num(first, "cp"), th_json_num(first, "dp"));
    ck_assert_msg(strstr(r.out, want) != NULL, "want '%s' in:\n%s", want, r.out);
    /* its run time is the one with failures, which --max-days holds */
    snprintf(want, sizeof want, " %12s",
             json_string_value(th_json_get(first, "human.goodput_wall_seconds")));
    ck_assert_msg(strstr(r.out, want) != NULL, "want '%s' in:\n%s", want, r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "with checkpoint writes, failures and restarts"));
    result_free(&r);
    json_decref(a);

    r = run_cli(none);
    ck_assert_msg(r.code == 1, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "nothing fits"));
    result_free(&r);
}
END_TEST

/* Issue 25: every row of a search prints the estimate command that
 * reproduces it; run as printed, it fits with the search's margin (exit
 * 0) and predicts the row's step time and memory. */
START_TEST(search_commands_reproduce_rows)
{
    static const char body[] = "{\"model\":\"llama3-70b\",\"gpus\":64,\"gpu\":\"h100-sxm\","
                               "\"limit\":4}";
    const char *args[] = { "--url", server_url, "search",   "--model", "llama3-70b", "--gpus",
                           "64",    "--gpu",    "h100-sxm", "--limit", "4",          NULL };
    json_t *a = api_ok("POST", "/v1/search", body);
    run_result r = run_cli(args);
    const char *p = strstr(r.out, "\nEach layout on its own:\n");
    size_t rows = 0;

    ck_assert_msg(r.code == 0, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_msg(p != NULL, "no commands in:\n%.1500s", r.out);
    p = strchr(p + 1, '\n') + 1;
    while (*p != '\0') {
        const char *nl = strchr(p, '\n'), *cmd = strstr(p, "trainsize estimate ");
        char line[2048], *save = NULL, *tok;
        const char *argv[96] = { "--url", server_url };
        size_t n = 2, len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        const json_t *row = json_array_get(th_json_get(a, "results"), rows);
        run_result e;

        ck_assert_ptr_nonnull(row);
        ck_assert(cmd != NULL && cmd < p + len);
        /* no word of these needs quotes: split at spaces */
        snprintf(line, sizeof line, "%.*s", (int)(p + len - cmd - 10), cmd + 10);
        for (tok = strtok_r(line, " ", &save); tok != NULL && n < 95;
             tok = strtok_r(NULL, " ", &save))
            argv[n++] = tok;
        argv[n] = NULL;
        e = run_cli(argv);
        ck_assert_msg(e.code == 0, "rank %zu: exit %d: %s\n%.800s", rows + 1, e.code, e.err, e.out);
        ck_assert_ptr_nonnull(strstr(e.out, "Verdict: fits with a 10% margin"));
        expect_close("step time", table_exact(e.out, "Predicted step time"),
                     th_json_num(row, "step_time"), 0, 1e-5);
        expect_close("memory", table_exact(e.out, "Total per GPU"),
                     th_json_num(row, "memory_total"), 0.5, 0);
        result_free(&e);
        rows++;
        p = nl != NULL ? nl + 1 : p + len;
    }
    ck_assert_uint_eq(rows, json_array_size(th_json_get(a, "results")));
    result_free(&r);
    json_decref(a);
}
END_TEST

START_TEST(health_live_and_closed)
{
    char dead[URL_LEN], port_env[32], url_env[URL_LEN + 16], dead_env[URL_LEN + 16];
    const char *live[] = { "health", "--url", server_url, NULL };
    const char *ready[] = { "health", "--ready", "--url", server_url, NULL };
    const char *dflt[] = { "health", NULL };
    const char *down[] = { "health", "--url", dead, NULL };
    const char *env_url[] = { "TRAINSIZE_PORT", url_env, NULL };
    const char *env_dead[] = { "TRAINSIZE_PORT", dead_env, NULL };
    const char *env_port[] = { "TRAINSIZE_URL", port_env, NULL };
    run_result r;

    snprintf(dead, sizeof dead, "http://127.0.0.1:%d", closed_port());
    snprintf(url_env, sizeof url_env, "TRAINSIZE_URL=%s", server_url);
    snprintf(dead_env, sizeof dead_env, "TRAINSIZE_URL=%s", dead);
    snprintf(port_env, sizeof port_env, "TRAINSIZE_PORT=%s", server_port);

    r = run_cli(live);
    ck_assert_msg(r.code == 0, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "ok:"));
    result_free(&r);

    r = run_cli(ready);
    ck_assert_msg(r.code == 0, "exit %d, stderr: %s", r.code, r.err);
    result_free(&r);

    r = run_cli(down);
    ck_assert_int_eq(r.code, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "unhealthy"));
    result_free(&r);

    /* the URL comes from TRAINSIZE_URL ... */
    r = run_cli_env(dflt, env_url);
    ck_assert_msg(r.code == 0, "TRAINSIZE_URL: exit %d, stderr: %s", r.code, r.err);
    result_free(&r);
    r = run_cli_env(dflt, env_dead);
    ck_assert_int_eq(r.code, 1);
    result_free(&r);
    /* ... else from TRAINSIZE_PORT, as inside the container */
    r = run_cli_env(dflt, env_port);
    ck_assert_msg(r.code == 0, "TRAINSIZE_PORT: exit %d, stderr: %s", r.code, r.err);
    result_free(&r);
}
END_TEST

START_TEST(unreachable_exits_3)
{
    char dead[URL_LEN];
    const char *args[] = { "--url", dead, "estimate", "--model", "llama3-8b", NULL };
    const char *args2[] = { "--url", dead, "presets", NULL };
    run_result r;

    snprintf(dead, sizeof dead, "http://127.0.0.1:%d", closed_port());
    r = run_cli(args);
    ck_assert_int_eq(r.code, 3);
    ck_assert_ptr_nonnull(strstr(r.err, "cannot reach"));
    ck_assert_str_eq(r.out, "");
    result_free(&r);
    r = run_cli(args2);
    ck_assert_int_eq(r.code, 3);
    result_free(&r);
}
END_TEST

/* A problem+json answer prints exactly "error: <detail> (field <ptr>)" with
 * the server's own detail, and exits 2. */
static void expect_problem(const char *body, const char *const *args, const char *field)
{
    long st = 0;
    json_t *p = api("POST", "/v1/plan", body, &st);
    const char *detail = json_string_value(json_object_get(p, "detail"));
    const char *f = json_string_value(json_object_get(p, "field"));
    char want[512];
    run_result r;

    ck_assert_int_eq(st, 400);
    ck_assert_ptr_nonnull(detail);
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f, field);
    snprintf(want, sizeof want, "error: %s (field %s)\n", detail, field);
    r = run_cli(args);
    ck_assert_msg(r.code == 2, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_str_eq(r.err, want);
    ck_assert_str_eq(r.out, "");
    result_free(&r);
    json_decref(p);
}

START_TEST(server_problem_exits_2)
{
    /* llama3-8b has 32 heads: tp 3 does not divide them */
    const char *tp3[] = { "--url", server_url, "estimate", "--model", "llama3-8b",
                          "--tp",  "3",        "--gpus",   "3",       NULL };
    const char *neg[] = { "--url",     server_url, "estimate", "--model",
                          "llama3-8b", "--seq",    "-5",       NULL };
    const char *unk[] = { "--url",     server_url, "estimate",      "--model",
                          "llama3-8b", "--set",    "bogus_field=1", NULL };
    const char *chk[] = { "--url", server_url, "check", "--model", "no-such-model", NULL };
    run_result r;

    expect_problem("{\"model\":\"llama3-8b\",\"tp\":3,\"gpus\":3}", tp3, "/tp");
    expect_problem("{\"model\":\"llama3-8b\",\"seq\":-5}", neg, "/seq");
    expect_problem("{\"model\":\"llama3-8b\",\"bogus_field\":1}", unk, "/bogus_field");

    /* check: a problem is exit 2, not "does not fit" (1) */
    r = run_cli(chk);
    ck_assert_msg(r.code == 2, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "(field /model)"));
    result_free(&r);
}
END_TEST

/* Issue 24's done-when: a Hugging Face Hub id from the catalogue and a
 * GPU as people type it; an unknown Hub id is exit 2 with the closest. */
START_TEST(estimate_hub_id)
{
    const char *args[] = { "--url", server_url, "estimate", "--model", "Qwen/Qwen2.5-72B",
                           "--gpu", "H100",     "--gpus",   "64",      NULL };
    const char *typo[] = { "--url", server_url, "estimate", "--model", "Qwen/Qwen2.5-72B-Instrcut",
                           "--gpu", "H100",     "--gpus",   "64",      NULL };
    run_result r = run_cli(args);

    /* An answer: 72.7B with ZeRO-1 (the default) does not fit 80 GB, the
     * verdict "no" is exit 1 (--help); a 4xx would be 2. */
    ck_assert_msg(r.code == 1, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "Qwen/Qwen2.5-72B on 64 x h100-sxm"));
    /* 72,706,203,648 (models/Qwen__Qwen2.5-72B.json) */
    ck_assert_ptr_nonnull(strstr(r.out, "72.7B params"));
    result_free(&r);
    r = run_cli(typo);
    ck_assert_msg(r.code == 2, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "did you mean \"Qwen/Qwen2.5-72B\""));
    result_free(&r);
}
END_TEST

/* Bad usage: exit 2 (the input is wrong, like a 4xx), usage text on
 * stderr, nothing sent. */
START_TEST(usage_errors_exit_2)
{
    static const char *const cases[][8] = {
        { NULL },                                       /* no command */
        { "frobnicate", NULL },                         /* unknown command */
        { "estimate", "--frobnicate", "1", NULL },      /* unknown option */
        { "estimate", "--tp", "abc", NULL },            /* not an integer */
        { "estimate", "--mfu", "nan", NULL },           /* not finite */
        { "estimate", "--tokens", "5X", NULL },         /* bad suffix */
        { "estimate", "--set", "noequals", NULL },      /* --set needs = */
        { "estimate", "--set", "=3", NULL },            /* empty key */
        { "estimate", "--model", NULL },                /* missing value */
        { "estimate", "--gated=maybe", NULL },          /* bad bool */
        { "--url", "ftp://127.0.0.1", "health", NULL }, /* not http */
        { "--timeout", "-1", "health", NULL },          /* bad timeout */
        { "health", "extra", NULL },                    /* stray argument */
        { "presets", "--tp", "2", NULL },               /* run option on a list */
    };
    static const char *const mention[] = {
        "no command", "frobnicate", "--frobnicate", "--tp",  "--mfu",     "--tokens", "--set",
        "--set",      "--model",    "--gated",      "--url", "--timeout", "extra",    "--tp",
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* point at the live server: a usage error must not depend on it */
        const char *args[12] = { "--url", server_url };
        size_t n = 2;
        run_result r;

        if (i == 10 || i == 11)
            n = 0; /* these test the global options themselves */
        for (size_t k = 0; cases[i][k]; k++)
            args[n++] = cases[i][k];
        args[n] = NULL;
        r = run_cli(args);
        ck_assert_msg(r.code == 2, "case %zu: exit %d, stderr: %s", i, r.code, r.err);
        ck_assert_msg(strstr(r.err, "usage:") != NULL, "case %zu: no usage text", i);
        ck_assert_msg(strstr(r.err, mention[i]) != NULL, "case %zu: message does not name '%s': %s",
                      i, mention[i], r.err);
        ck_assert_str_eq(r.out, "");
        result_free(&r);
    }
}
END_TEST

START_TEST(help_exits_0)
{
    const char *args[] = { "--help", NULL };
    run_result r = run_cli(args);

    ck_assert_int_eq(r.code, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "--micro-batch"));
    ck_assert_ptr_nonnull(strstr(r.out, "--set KEY=VALUE"));
    result_free(&r);
}
END_TEST

/* Every catalogue id the API lists starts a line of the CLI's table. */
static void expect_listed(const char *cmd, const char *path, const char *key)
{
    const char *args[] = { "--url", server_url, cmd, NULL };
    const char *jargs[] = { "--url", server_url, cmd, "--json", NULL };
    json_t *want = api_ok("GET", path, NULL), *got;
    json_t *list = json_object_get(want, key), *item;
    run_result r = run_cli(args);
    size_t i;

    ck_assert_msg(r.code == 0, "exit %d, stderr: %s", r.code, r.err);
    ck_assert_int_gt(json_array_size(list), 0);
    json_array_foreach(list, i, item)
    {
        const char *id = json_string_value(json_object_get(item, "id"));
        char needle[64];
        ck_assert_ptr_nonnull(id);
        snprintf(needle, sizeof needle, "\n%s ", id);
        ck_assert_msg(strstr(r.out, needle) != NULL, "%s: '%s' not listed", cmd, id);
    }
    result_free(&r);

    r = run_cli(jargs);
    ck_assert_int_eq(r.code, 0);
    got = json_loads(r.out, 0, NULL);
    ck_assert_ptr_nonnull(got);
    ck_assert(json_equal(got, want));
    json_decref(got);
    result_free(&r);
    json_decref(want);
}

START_TEST(presets_and_gpus)
{
    expect_listed("presets", "/v1/presets", "presets");
    expect_listed("gpus", "/v1/gpus", "gpus");
}
END_TEST

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("against-server");

    tcase_add_unchecked_fixture(tc, server_start, th_shared_stop);
    /* generous: TS_CLI_WRAP may run every CLI call under valgrind */
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, estimate_table_matches_api);
    tcase_add_test(tc, estimate_prints_api_strings_and_formulas);
    tcase_add_test(tc, estimate_json_is_api_answer);
    tcase_add_test(tc, estimate_prints_assumptions_and_warnings);
    tcase_add_test(tc, options_are_typed);
    tcase_add_test(tc, check_does_not_fit);
    tcase_add_test(tc, check_fits);
    tcase_add_test(tc, search_table_matches_api);
    tcase_add_test(tc, budget_table_matches_api);
    tcase_add_test(tc, search_commands_reproduce_rows);
    tcase_add_test(tc, health_live_and_closed);
    tcase_add_test(tc, unreachable_exits_3);
    tcase_add_test(tc, server_problem_exits_2);
    tcase_add_test(tc, estimate_hub_id);
    tcase_add_test(tc, usage_errors_exit_2);
    tcase_add_test(tc, help_exits_0);
    tcase_add_test(tc, presets_and_gpus);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cli_suite());
    int failed;

    /* a dead server must not hang the CLI runs into SIGPIPE territory */
    signal(SIGPIPE, SIG_IGN);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 && th_shared_bad_exits() == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
