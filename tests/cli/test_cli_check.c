/*
 * test_cli_check.c - `trainsize check` as a CI gate, against the real
 * server on loopback.
 *
 * Expected verdicts are the API's own: each plan is also sent to
 * /v1/memory directly, and the CLI's exit code, stage table and margin
 * decision must follow from that answer (memory.total <= (1 - margin) *
 * memory.hbm_bytes).  The JUnit report is validated with xmllint against
 * tests/data/junit.xsd (the Ant JUnit structure CI systems read); the
 * GitHub format against the workflow-command syntax and its escapes.
 * Environment (tests/cli/meson.build): TRAINSIZE_SERVER, TRAINSIZE_SRCDIR,
 * TS_CLI, XMLLINT, and optionally TS_CLI_WRAP (valgrind).
 */
#include "th_file.h"
#include "th_harness.h"
#include "th_json.h"
#include "ts_cli_check.h"
#include "ts_cli_esc.h"

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Test-process state: the URL of the one server every test uses
 * (th_shared, tests/helpers/th_harness.h) and our directories. */
static char url[64];
static char data[1024]; /* $TRAINSIZE_SRCDIR/tests/data */
static char tmpdir[256];

typedef th_proc run_out;
#define run_free th_proc_free

/* Run argv (NULL-terminated; argv[0] is the program), behind $TS_CLI_WRAP
 * when wrap; stdout and stderr captured. */
static run_out run_argv(const char *const *argv, bool wrap)
{
    run_out r;

    ck_assert_int_eq(th_exec(argv, wrap ? "TS_CLI_WRAP" : NULL, NULL, &r), 0);
    return r;
}

/* trainsize --url URL check EXTRA... */
static run_out check(const char *const *extra)
{
    const char *argv[64] = { getenv("TS_CLI"), "--url", url, "check" };
    size_t n = 4;

    ck_assert_ptr_nonnull(argv[0]);
    for (size_t i = 0; extra[i] != NULL && n < 63; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    return run_argv(argv, true);
}

static const char *dpath(const char *rel)
{
    /* a few live at once: rotate through buffers */
    static char bufs[8][1200];
    static unsigned k;
    char *b = bufs[k++ % 8];

    snprintf(b, sizeof bufs[0], "%s/%s", data, rel);
    return b;
}

static char *read_file(const char *path)
{
    char *s = th_read_file(path, NULL);

    ck_assert_msg(s != NULL, "read %s", path);
    return s;
}

static void write_file(const char *path, const char *text)
{
    th_write_file(path, NULL, text);
}

/* POST body to route; the parsed 200 answer. */
static json_t *post_to(const char *route, json_t *body)
{
    char *text = json_dumps(body, JSON_COMPACT);
    th_resp resp = th_post(th_shared.port, route, text);
    json_t *a;

    ck_assert_msg(resp.status == 200, "%s: %ld %s", route, resp.status, resp.body);
    a = th_json_parse(resp.body, resp.len);
    th_resp_free(&resp);
    free(text);
    return a;
}

static json_t *memory(json_t *body)
{
    return post_to("/v1/memory", body);
}

static json_t *plan(const char *rel)
{
    json_t *j = json_load_file(dpath(rel), 0, NULL);

    ck_assert_ptr_nonnull(j);
    return j;
}

static void server_start(void)
{
    const char *src = getenv("TRAINSIZE_SRCDIR");
    char tmpl[] = "/tmp/ts-check-XXXXXX";

    ck_assert_ptr_nonnull(src);
    snprintf(data, sizeof data, "%s/tests/data", src);
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    snprintf(tmpdir, sizeof tmpdir, "%s", tmpl);
    th_shared_start();
    snprintf(url, sizeof url, "http://127.0.0.1:%u", th_shared.port);
}

static void server_stop(void)
{
    char cmd[320];

    th_shared_stop();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* ------------------------------------------------------------------ */

/* One plan each: the exit code is the API's verdict (0 fits, 1 does not),
 * 2 for a plan the API rejects or a file that is not a plan, 3 when no
 * server answers. */
START_TEST(exit_codes)
{
    json_t *fits_plan = plan("plans/llama3-8b-zero3.json");
    json_t *nofit_plan = plan("plans/llama3-70b-zero0.json");
    json_t *a = memory(fits_plan), *b = memory(nofit_plan);
    char bad_json[320], not_obj[320];
    run_out r;

    ck_assert(json_is_true(json_object_get(json_object_get(a, "memory"), "fits")));
    ck_assert(json_is_false(json_object_get(json_object_get(b, "memory"), "fits")));

    r = check((const char *[]){ dpath("plans/llama3-8b-zero3.json"), NULL });
    ck_assert_msg(r.code == 0, "exit %d: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "PASS: fits"));
    run_free(&r);

    r = check((const char *[]){ "--file", dpath("plans/llama3-70b-zero0.json"), NULL });
    ck_assert_msg(r.code == 1, "exit %d: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "FAIL: does not fit"));
    run_free(&r);

    r = check((const char *[]){ dpath("plans/bad-tp.json"), NULL });
    ck_assert_msg(r.code == 2, "exit %d: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "(field /tp)"));
    run_free(&r);

    snprintf(bad_json, sizeof bad_json, "%s/bad.json", tmpdir);
    write_file(bad_json, "{\"model\": ");
    r = check((const char *[]){ bad_json, NULL });
    ck_assert_msg(r.code == 2, "exit %d: %s", r.code, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "invalid JSON"));
    run_free(&r);

    snprintf(not_obj, sizeof not_obj, "%s/array.json", tmpdir);
    write_file(not_obj, "[1, 2]");
    r = check((const char *[]){ not_obj, NULL });
    ck_assert_msg(r.code == 2, "exit %d: %s", r.code, r.err);
    run_free(&r);

    r = check((const char *[]){ dpath("plans/no-such-plan.json"), NULL });
    ck_assert_msg(r.code == 2, "exit %d: %s", r.code, r.err);
    run_free(&r);

    {
        /* port 1 on loopback: nothing listens (connection refused) */
        const char *argv[] = { getenv("TS_CLI"),
                               "--url",
                               "http://127.0.0.1:1",
                               "check",
                               dpath("plans/llama3-8b-zero3.json"),
                               NULL };

        r = run_argv(argv, true);
        ck_assert_msg(r.code == 3, "exit %d: %s", r.code, r.err);
        run_free(&r);
    }
    json_decref(a);
    json_decref(b);
    json_decref(fits_plan);
    json_decref(nofit_plan);
}
END_TEST

/* Issue 28: --max-days / --max-cost (or max_days / max_cost in the plan)
 * hold the run with checkpoint writes, failures and restarts: /v1/plan's
 * compute.goodput, one point either side of its days and cost; a limit
 * between the failure-free days and those fails.  The API's /v1/plan
 * answer is the oracle. */
START_TEST(run_gates)
{
    json_t *p = plan("plans/llama3-8b-zero3.json");
    json_t *a;
    double days, free_days, cost;
    char lo[64], hi[64], mid[64], clo[64], chi[64], file[320];
    run_out r;

    json_object_set_new(p, "gpu_hour_usd", json_real(2.5));
    a = post_to("/v1/plan", p);
    days = th_json_num(a, "compute.goodput.wall_days");
    free_days = th_json_num(a, "compute.wall_days");
    cost = th_json_num(a, "compute.goodput.cost_usd");
    ck_assert_msg(days > free_days * 1.001 && cost > 0, "%g days, %g failure-free", days,
                  free_days);
    snprintf(lo, sizeof lo, "%.17g", days * 0.9999);
    snprintf(hi, sizeof hi, "%.17g", days * 1.0001);
    snprintf(mid, sizeof mid, "%.17g", (days + free_days) / 2);
    snprintf(clo, sizeof clo, "%.17g", cost * 0.9999);
    snprintf(chi, sizeof chi, "%.17g", cost * 1.0001);

    r = check((const char *[]){ dpath("plans/llama3-8b-zero3.json"), "--gpu-hour-usd", "2.5",
                                "--max-days", hi, "--max-cost", chi, NULL });
    ck_assert_msg(r.code == 0, "exit %d: %s%s", r.code, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "PASS: fits"));
    ck_assert_ptr_nonnull(strstr(r.out, "the run with failures takes"));
    run_free(&r);
    /* Longer than the failure-free run allows, shorter than with failures. */
    r = check((const char *[]){ dpath("plans/llama3-8b-zero3.json"), "--max-days", mid, NULL });
    ck_assert_msg(r.code == 1, "exit %d: %s%s", r.code, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "FAIL: fits"));
    ck_assert_ptr_nonnull(strstr(r.out, "over max_days"));
    run_free(&r);
    r = check((const char *[]){ dpath("plans/llama3-8b-zero3.json"), "--max-days", lo, NULL });
    ck_assert_msg(r.code == 1, "exit %d: %s%s", r.code, r.out, r.err);
    run_free(&r);
    r = check((const char *[]){ dpath("plans/llama3-8b-zero3.json"), "--gpu-hour-usd", "2.5",
                                "--max-cost", clo, NULL });
    ck_assert_msg(r.code == 1, "exit %d: %s%s", r.code, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "over max_cost"));
    run_free(&r);
    /* estimate holds the same gates. */
    {
        const char *argv[] = {
            getenv("TS_CLI"), "--url", url, "estimate", dpath("plans/llama3-8b-zero3.json"),
            "--max-days",     lo,      NULL
        };

        r = run_argv(argv, false);
        ck_assert_msg(r.code == 1, "exit %d: %s%s", r.code, r.out, r.err);
        run_free(&r);
    }
    /* The gates as members of a plan file. */
    snprintf(file, sizeof file, "%s/gated.json", tmpdir);
    json_object_set_new(p, "max_days", json_real(days * 0.9999));
    ck_assert_int_eq(json_dump_file(p, file, 0), 0);
    r = check((const char *[]){ file, NULL });
    ck_assert_msg(r.code == 1, "exit %d: %s%s", r.code, r.out, r.err);
    run_free(&r);
    json_object_set_new(p, "max_days", json_real(days * 1.0001));
    ck_assert_int_eq(json_dump_file(p, file, 0), 0);
    r = check((const char *[]){ file, NULL });
    ck_assert_msg(r.code == 0, "exit %d: %s%s", r.code, r.out, r.err);
    run_free(&r);
    /* Refused, naming the field: a negative limit; a cost without a price. */
    json_object_set_new(p, "max_days", json_real(-1));
    ck_assert_int_eq(json_dump_file(p, file, 0), 0);
    r = check((const char *[]){ file, NULL });
    ck_assert_msg(r.code == 2, "exit %d: %s%s", r.code, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "max_days must be"));
    ck_assert_ptr_nonnull(strstr(r.err, "(field /max_days)"));
    run_free(&r);
    r = check((const char *[]){ dpath("plans/llama3-8b-zero3.json"), "--max-cost", "1e6", NULL });
    ck_assert_msg(r.code == 2, "exit %d: %s%s", r.code, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "needs a price"));
    ck_assert_ptr_nonnull(strstr(r.err, "(field /max_cost)"));
    run_free(&r);
    json_decref(a);
    json_decref(p);
}
END_TEST

/* --margin m passes when total <= (1 - m) * HBM: one point either side of
 * the plan's own free share, from the API's numbers. */
START_TEST(margin)
{
    json_t *p = plan("plans/llama3-8b-zero3.json");
    json_t *a = memory(p);
    double total = th_json_num(a, "memory.total.value");
    double hbm = th_json_num(a, "memory.hbm_bytes");
    double free_share = 1.0 - total / hbm;
    char below[32], above[32];
    run_out r;

    ck_assert(free_share > 0.02 && free_share < 0.98);
    snprintf(below, sizeof below, "%.4f%%", (free_share - 0.01) * 100);
    snprintf(above, sizeof above, "%.4f", free_share + 0.01);
    r = check((const char *[]){ "--margin", below, dpath("plans/llama3-8b-zero3.json"), NULL });
    ck_assert_msg(r.code == 0, "margin %s: exit %d", below, r.code);
    run_free(&r);
    r = check((const char *[]){ "--margin", above, dpath("plans/llama3-8b-zero3.json"), NULL });
    ck_assert_msg(r.code == 1, "margin %s: exit %d", above, r.code);
    ck_assert_ptr_nonnull(strstr(r.out, "not with a"));
    run_free(&r);
    json_decref(a);
    json_decref(p);
}
END_TEST

/* Several plans: the worst verdict wins (rejected 2 > does not fit 1). */
START_TEST(many_plans)
{
    run_out r;

    r = check((const char *[]){ dpath("plans/llama3-8b-zero3.json"),
                                dpath("plans/llama3-70b-zero0.json"), NULL });
    ck_assert_msg(r.code == 1, "exit %d", r.code);
    ck_assert_ptr_nonnull(strstr(r.out, "2 plans: 1 fit, 1 do not fit, 0 rejected"));
    run_free(&r);
    r = check((const char *[]){ dpath("plans/llama3-8b-zero3.json"),
                                dpath("plans/llama3-70b-zero0.json"), dpath("plans/bad-tp.json"),
                                NULL });
    ck_assert_msg(r.code == 2, "exit %d", r.code);
    ck_assert_ptr_nonnull(strstr(r.out, "3 plans: 1 fit, 1 do not fit, 1 rejected, 0 errors"));
    run_free(&r);
}
END_TEST

/* Imports on the command line (over a plan file's own members) give the
 * same answer as the API for the same body; the Megatron layout (PP 2)
 * shows a per-stage table whose worst row is the API's worst_stage. */
START_TEST(imports_and_stages)
{
    json_t *body = json_object();
    json_t *a;
    char *mega = read_file(dpath("megatron/llama3-8b.txt"));
    char worst_row[64];
    size_t stages, i;
    run_out r;

    json_object_set_new(body, "hf_config", json_load_file(dpath("hf/llama3-8b.json"), 0, NULL));
    json_object_set_new(body, "megatron_args", json_string(mega));
    json_object_set_new(body, "gpus", json_integer(64));
    a = memory(body);
    stages = json_array_size(json_object_get(json_object_get(a, "memory"), "stages"));
    ck_assert_uint_eq(stages, 2); /* --pipeline-model-parallel-size 2 */

    r = check((const char *[]){ "--hf-config", dpath("hf/llama3-8b.json"), "--megatron-args",
                                dpath("megatron/llama3-8b.txt"), "--gpus", "64", NULL });
    ck_assert_int_eq(r.code,
                     json_is_true(json_object_get(json_object_get(a, "memory"), "fits")) ? 0 : 1);
    ck_assert_ptr_nonnull(strstr(r.out, "Per pipeline stage"));
    for (i = 0; i < stages; i++) {
        char row[32];

        snprintf(row, sizeof row, "\n  %5zu %6.0f ", i,
                 json_number_value(json_object_get(
                     json_array_get(json_object_get(json_object_get(a, "memory"), "stages"), i),
                     "layers")));
        ck_assert_msg(strstr(r.out, row) != NULL, "no row for stage %zu in\n%s", i, r.out);
    }
    snprintf(worst_row, sizeof worst_row, "worst stage %.0f", th_json_num(a, "memory.worst_stage"));
    ck_assert_ptr_nonnull(strstr(r.out, worst_row));
    ck_assert_ptr_nonnull(strstr(r.out, "note: megatron_args: unknown flags ignored"));
    run_free(&r);
    json_decref(a);

    /* imports inside a plan file */
    {
        json_t *p = plan("plans/mixtral-8x7b-zero3-imports.json");
        json_t *m = memory(p);
        bool fits = json_is_true(json_object_get(json_object_get(m, "memory"), "fits"));

        ck_assert_double_eq(th_json_num(m, "params.total"), 46702792704.0);
        r = check((const char *[]){ dpath("plans/mixtral-8x7b-zero3-imports.json"), NULL });
        ck_assert_int_eq(r.code, fits ? 0 : 1);
        run_free(&r);
        /* the command line overrides the plan: 4 GPUs cannot hold it */
        r = check((const char *[]){ dpath("plans/mixtral-8x7b-zero3-imports.json"), "--gpus", "2",
                                    NULL });
        ck_assert_msg(r.code == 1, "exit %d: %s", r.code, r.out);
        run_free(&r);
        json_decref(m);
        json_decref(p);
    }
    /* an axolotl YAML next to the config.json: the API's verdict */
    {
        json_t *q = json_object();
        char *yml = read_file(dpath("axolotl/llama3-qlora.yml"));
        json_t *m;

        json_object_set_new(q, "hf_config", json_load_file(dpath("hf/llama3-8b.json"), 0, NULL));
        json_object_set_new(q, "axolotl_config", json_string(yml));
        json_object_set_new(q, "gpus", json_integer(1));
        m = memory(q);
        ck_assert_int_eq(
            json_integer_value(json_object_get(json_object_get(m, "inputs"), "lora_rank")), 32);
        r = check((const char *[]){ "--hf-config", dpath("hf/llama3-8b.json"), "--axolotl",
                                    dpath("axolotl/llama3-qlora.yml"), "--gpus", "1", NULL });
        ck_assert_int_eq(
            r.code, json_is_true(json_object_get(json_object_get(m, "memory"), "fits")) ? 0 : 1);
        ck_assert_ptr_nonnull(strstr(r.out, "note: /axolotl_config/base_model"));
        run_free(&r);
        json_decref(m);
        json_decref(q);
        free(yml);
    }
    /* an import file that does not exist is a rejected check */
    r = check(
        (const char *[]){ "--hf-config", dpath("hf/none.json"), "--model", "llama3-8b", NULL });
    ck_assert_int_eq(r.code, 2);
    run_free(&r);
    free(mega);
    json_decref(body);
}
END_TEST

/* trainsize CMD [EXTRA...] against the server (estimate, search, ...). */
static run_out cmd(const char *command, const char *const *extra)
{
    const char *argv[64] = { getenv("TS_CLI"), "--url", url, command };
    size_t n = 4;

    for (size_t i = 0; extra[i] != NULL && n < 63; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    return run_argv(argv, true);
}

static void copy_file(const char *from, const char *to)
{
    char *t = read_file(from);

    write_file(to, t);
    free(t);
}

/* Issue 24 item 3: imports on every command (search too), "-" for
 * standard input, a plan naming its config files by a path next to it
 * (the CLI reads them; the server never reads a file). */
START_TEST(imports_everywhere)
{
    char dir[300], cfgdir[400], planp[512], bad[512], script[1600];
    json_t *body = json_object(), *want, *got;
    run_out r;

    /* search --hf-config: the answer is /v1/search's for the same body */
    json_object_set_new(body, "hf_config", json_load_file(dpath("hf/llama3-8b.json"), 0, NULL));
    json_object_set_new(body, "gpus", json_integer(8));
    json_object_set_new(body, "limit", json_integer(2));
    {
        char *text = json_dumps(body, JSON_COMPACT);
        th_resp resp = th_post(th_shared.port, "/v1/search", text);

        ck_assert_msg(resp.status == 200, "search: %ld %s", resp.status, resp.body);
        want = th_json_parse(resp.body, resp.len);
        th_resp_free(&resp);
        free(text);
    }
    r = cmd("search", (const char *[]){ "--json", "--hf-config", dpath("hf/llama3-8b.json"),
                                        "--gpus", "8", "--limit", "2", NULL });
    ck_assert_msg(r.code == 0, "search exit %d: %s%s", r.code, r.out, r.err);
    got = json_loads(r.out, 0, NULL);
    ck_assert_ptr_nonnull(got);
    ck_assert_msg(json_equal(json_object_get(got, "results"), json_object_get(want, "results")),
                  "search --hf-config differs from /v1/search");
    json_decref(got);
    json_decref(want);
    run_free(&r);

    /* the same config on standard input ("-") */
    snprintf(script, sizeof script,
             "'%s' --url %s estimate --json --hf-config - --gpus 8 "
             "--zero 3 < '%s'",
             getenv("TS_CLI"), url, dpath("hf/llama3-8b.json"));
    r = run_argv((const char *[]){ "/bin/sh", "-c", script, NULL }, false);
    ck_assert_msg(r.code == 0 || r.code == 1, "estimate --hf-config -: exit %d %s", r.code, r.err);
    got = json_loads(r.out, 0, NULL);
    ck_assert_ptr_nonnull(got);
    ck_assert_double_eq(th_json_num(got, "params.total"), 8030261248.0);
    json_decref(got);
    run_free(&r);

    /* a plan naming its config.json and launch script next to it */
    snprintf(dir, sizeof dir, "%s/plan", tmpdir);
    snprintf(cfgdir, sizeof cfgdir, "%s/configs", dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(mkdir(cfgdir, 0700), 0);
    snprintf(planp, sizeof planp, "%s/llama.json", cfgdir);
    copy_file(dpath("hf/llama3-8b.json"), planp);
    snprintf(planp, sizeof planp, "%s/train.sh", cfgdir);
    copy_file(dpath("megatron/llama3-8b-array.sh"), planp);
    snprintf(planp, sizeof planp, "%s/plan.json", dir);
    write_file(planp, "{\"hf_config\": \"configs/llama.json\", \"gpus\": 8, \"zero\": 3}");
    r = cmd("estimate", (const char *[]){ "--json", planp, NULL });
    ck_assert_msg(r.code == 0 || r.code == 1, "estimate plan: exit %d %s", r.code, r.err);
    got = json_loads(r.out, 0, NULL);
    ck_assert_ptr_nonnull(got);
    ck_assert_double_eq(th_json_num(got, "params.total"), 8030261248.0);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(got, "inputs_source"), "layers")),
        "hf_config");
    json_decref(got);
    run_free(&r);
    write_file(planp, "{\"megatron_args\": \"configs/train.sh\"}");
    r = cmd("search", (const char *[]){ "--json", planp, "--limit", "1", NULL });
    ck_assert_msg(r.code == 0 || r.code == 1, "search plan: exit %d %s%s", r.code, r.out, r.err);
    got = json_loads(r.out, 0, NULL);
    ck_assert_ptr_nonnull(got);
    /* the script's model (its vocabulary from --tokenizer-model) */
    ck_assert_double_eq(th_json_num(got, "inputs.vocab"), 128256.0);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(got, "inputs_source"), "layers")),
        "megatron_args");
    json_decref(got);
    run_free(&r);

    /* a NeMo training YAML on the command line */
    r = cmd("estimate",
            (const char *[]){ "--json", "--nemo-config", dpath("nemo/gpt-1b.yaml"), NULL });
    ck_assert_msg(r.code == 0 || r.code == 1, "estimate nemo: exit %d %s", r.code, r.err);
    got = json_loads(r.out, 0, NULL);
    ck_assert_ptr_nonnull(got);
    ck_assert_double_eq(th_json_num(got, "params.total"), 1316081664.0);
    json_decref(got);
    run_free(&r);

    /* a named file that is not there: rejected (exit 2), naming it */
    snprintf(bad, sizeof bad, "%s/bad.json", dir);
    write_file(bad, "{\"hf_config\": \"configs/none.json\"}");
    r = check((const char *[]){ bad, NULL });
    ck_assert_int_eq(r.code, 2);
    ck_assert_msg(strstr(r.out, "hf_config names a file") != NULL ||
                      strstr(r.err, "hf_config names a file") != NULL,
                  "%s%s", r.out, r.err);
    run_free(&r);
    /* search answers one run */
    r = cmd("search", (const char *[]){ planp, bad, NULL });
    ck_assert_int_eq(r.code, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "at most one plan"));
    run_free(&r);
    json_decref(body);
}
END_TEST

static void count_attr(const char *xml, const char *attr, const char *want)
{
    char needle[64];

    snprintf(needle, sizeof needle, "%s=\"%s\"", attr, want);
    ck_assert_msg(strstr(xml, needle) != NULL, "no %s in\n%s", needle, xml);
}

/* --format junit validates against the JUnit schema, with one testcase
 * per plan: failure for "does not fit", error for rejected. */
START_TEST(junit_report)
{
    const char *xmllint = getenv("XMLLINT");
    char odd[320], xml_path[320];
    run_out r;

    /* a file name that needs XML escaping */
    snprintf(odd, sizeof odd, "%s/a&b<c>\"q\".json", tmpdir);
    write_file(odd, "{\"model\":\"llama3-8b\",\"gpus\":8,\"zero\":3,\"recompute\":\"selective\"}");
    r = check((const char *[]){ "--format", "junit", dpath("plans/llama3-8b-zero3.json"),
                                dpath("plans/llama3-70b-zero0.json"), dpath("plans/bad-tp.json"),
                                odd, NULL });
    ck_assert_int_eq(r.code, 2);
    ck_assert_ptr_nonnull(strstr(r.out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    count_attr(r.out, "tests", "4");
    count_attr(r.out, "failures", "1");
    count_attr(r.out, "errors", "1");
    ck_assert_ptr_nonnull(strstr(r.out, "a&amp;b&lt;c&gt;&quot;q&quot;.json"));
    ck_assert_ptr_nonnull(strstr(r.out, "type=\"does-not-fit\""));
    ck_assert_ptr_nonnull(strstr(r.out, "type=\"rejected\""));
    snprintf(xml_path, sizeof xml_path, "%s/report.xml", tmpdir);
    write_file(xml_path, r.out);
    run_free(&r);

    ck_assert_msg(xmllint != NULL && *xmllint != '\0', "XMLLINT not set (libxml2-utils)");
    {
        const char *argv[] = { xmllint, "--noout", "--schema", dpath("junit.xsd"), xml_path, NULL };

        r = run_argv(argv, false);
        ck_assert_msg(r.code == 0, "xmllint: %s", r.err);
        run_free(&r);
    }
    /* and the schema is strict: a report missing system-err fails it */
    {
        char *x = read_file(xml_path);
        char *p = strstr(x, "    <system-err></system-err>\n");
        const char *argv[] = { xmllint, "--noout", "--schema", dpath("junit.xsd"), xml_path, NULL };

        ck_assert_ptr_nonnull(p);
        memmove(p, p + strlen("    <system-err></system-err>\n"),
                strlen(p + strlen("    <system-err></system-err>\n")) + 1);
        write_file(xml_path, x);
        free(x);
        r = run_argv(argv, false);
        ck_assert_int_ne(r.code, 0);
        run_free(&r);
    }
}
END_TEST

/* --format github: one workflow command per plan, error or notice, with
 * the file property escaped (, and : as %2C, %3A) and data escaped (%). */
START_TEST(github_report)
{
    char odd[320], want[640], esc[400];
    run_out r;

    snprintf(odd, sizeof odd, "%s/x,y:z.json", tmpdir);
    write_file(odd, "{\"model\":\"llama3-70b\",\"gpus\":8,\"zero\":0}");
    r = check((const char *[]){ "--format", "github", "--margin", "5%",
                                dpath("plans/llama3-8b-zero3.json"), odd, NULL });
    ck_assert_int_eq(r.code, 1);
    ts_esc_gh(esc, sizeof esc, dpath("plans/llama3-8b-zero3.json"), true);
    snprintf(want, sizeof want,
             "::notice file=%s,title=trainsize check PASS::fits with a 5%%25 margin", esc);
    ck_assert_msg(strstr(r.out, want) != NULL, "no '%s' in\n%s", want, r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "x%2Cy%3Az.json,title=trainsize check FAIL::does not fit"));
    /* every line is a workflow command */
    {
        const char *line = r.out;

        while (*line != '\0') {
            ck_assert_msg(strncmp(line, "::", 2) == 0, "not a command: %s", line);
            line = strchr(line, '\n');
            ck_assert_ptr_nonnull(line);
            line++;
        }
    }
    run_free(&r);
}
END_TEST

START_TEST(usage)
{
    static const char *const bad[][3] = {
        { "--margin", "150%", NULL }, { "--margin", "abc", NULL }, { "--margin", "-1%", NULL },
        { "--format", "xml", NULL },  { "--file", NULL, NULL },
    };

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *args[4] = { bad[i][0], bad[i][1], dpath("plans/llama3-8b-zero3.json"), NULL };
        run_out r;

        if (bad[i][1] == NULL)
            args[1] = NULL;
        r = check(args);
        ck_assert_msg(r.code == 2, "%s %s: exit %d", bad[i][0], bad[i][1], r.code);
        run_free(&r);
    }
}
END_TEST

/* Escapes and the margin parser, by hand. */
START_TEST(units)
{
    char b[128];
    double m = -1;

    ts_esc_xml(b, sizeof b, "a<b&\"c'>\x01\n");
    ck_assert_str_eq(b, "a&lt;b&amp;&quot;c&apos;&gt;&#10;");
    ts_esc_xml(b, 8, "&&&&");
    ck_assert_str_eq(b, "&amp;"); /* never half an entity */
    ts_esc_gh(b, sizeof b, "50%\r\nx:y,z", false);
    ck_assert_str_eq(b, "50%25%0D%0Ax:y,z");
    ts_esc_gh(b, sizeof b, "a:b,c%", true);
    ck_assert_str_eq(b, "a%3Ab%2Cc%25");
    ck_assert(ts_check_parse_margin("10%", &m));
    ck_assert_double_eq(m, 0.1);
    ck_assert(ts_check_parse_margin("0.25", &m));
    ck_assert_double_eq(m, 0.25);
    ck_assert(ts_check_parse_margin("0", &m));
    ck_assert_double_eq(m, 0);
    ck_assert(!ts_check_parse_margin("100%", &m));
    ck_assert(!ts_check_parse_margin("1", &m));
    ck_assert(!ts_check_parse_margin("-1%", &m));
    ck_assert(!ts_check_parse_margin("10%%", &m));
    ck_assert(!ts_check_parse_margin("nan", &m));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli-check");
    TCase *tc = tcase_create("check");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, server_start, server_stop);
    tcase_add_test(tc, units);
    tcase_add_test(tc, exit_codes);
    tcase_add_test(tc, margin);
    tcase_add_test(tc, run_gates);
    tcase_add_test(tc, many_plans);
    tcase_add_test(tc, imports_and_stages);
    tcase_add_test(tc, imports_everywhere);
    tcase_add_test(tc, junit_report);
    tcase_add_test(tc, github_report);
    tcase_add_test(tc, usage);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 && th_shared_bad_exits() == 0 ? 0 : 1;
}
