/*
 * test_cli_formats.c - the machine formats of check, estimate and search
 * (docs/cli.md "Output formats"), read back the way a CI system reads
 * them.
 *
 * json and jsonl are parsed with jansson and held to the API's own
 * answers, fetched directly from the real server (tests/helpers); junit
 * is validated with xmllint against tests/data/junit.xsd; github's
 * file=/line= are found in the files by this test, independently of the
 * CLI's scanner; markdown and csv are split into cells (RFC 4180 for
 * csv) and compared with the JSON.  The notes: --notes=off, and no note
 * about a value the command line gave.
 * Environment (tests/cli/meson.build): TRAINSIZE_SERVER, TRAINSIZE_SRCDIR,
 * TS_CLI, XMLLINT, and optionally TS_CLI_WRAP.
 */
#include "th_file.h"
#include "th_harness.h"
#include "th_json.h"
#include "ts_cli_terms.h"

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Test-process state: the shared server, our directories. */
static char data[1024]; /* $TRAINSIZE_SRCDIR/tests/data */
static char tmpdir[256];

static const char *dpath(const char *rel)
{
    static char bufs[8][1200];
    static unsigned k;
    char *b = bufs[k++ % 8];

    snprintf(b, sizeof bufs[0], "%s/%s", data, rel);
    return b;
}

/* trainsize --local ARGS... (stdin_text: fed on standard input). */
static th_proc cli_in(const char *const *args, const char *stdin_path)
{
    const char *argv[48] = { getenv("TS_CLI"), "--local" };
    size_t n = 2;
    th_proc p;

    ck_assert_ptr_nonnull(argv[0]);
    for (size_t i = 0; args[i] != NULL; i++) {
        ck_assert_uint_lt(n, 46);
        argv[n++] = args[i];
    }
    if (stdin_path != NULL) {
        /* th_exec has no stdin: run it through sh with a redirect */
        char cmd[4096];
        size_t o = (size_t)snprintf(cmd, sizeof cmd, "exec");

        for (size_t i = 0; i < n; i++)
            o += (size_t)snprintf(cmd + o, sizeof cmd - o, " '%s'", argv[i]);
        snprintf(cmd + o, sizeof cmd - o, " < '%s'", stdin_path);
        ck_assert_int_eq(th_exec((const char *[]){ "sh", "-c", cmd, NULL }, NULL,
                                 (const char *[]){ "TRAINSIZE_URL", "TRAINSIZE_PORT", NULL }, &p),
                         0);
        return p;
    }
    argv[n] = NULL;
    ck_assert_int_eq(th_exec(argv, "TS_CLI_WRAP",
                             (const char *[]){ "TRAINSIZE_URL", "TRAINSIZE_PORT", NULL }, &p),
                     0);
    return p;
}

static th_proc cli(const char *const *args)
{
    return cli_in(args, NULL);
}

/* The server's answer to body on route (200 expected). */
static json_t *api(const char *route, const char *body)
{
    th_resp r = th_post(th_shared.port, route, body);
    json_t *j;

    ck_assert_msg(r.status == 200 || r.status == 400, "%s: %ld %s", route, r.status, r.body);
    j = th_json_parse(r.body, r.len);
    th_resp_free(&r);
    return j;
}

static json_t *api_file(const char *route, const char *path)
{
    char *text = th_read_file(path, NULL);
    json_t *j;

    ck_assert_ptr_nonnull(text);
    j = api(route, text);
    free(text);
    return j;
}

/* 1-based line of the first line holding needle in the file; 0 if none. */
static unsigned line_of(const char *path, const char *needle)
{
    char *text = th_read_file(path, NULL);
    const char *p;
    unsigned line = 1;

    ck_assert_ptr_nonnull(text);
    p = strstr(text, needle);
    if (p == NULL) {
        free(text);
        return 0;
    }
    for (const char *q = text; q < p; q++)
        line += *q == '\n';
    free(text);
    return line;
}

static void server_start(void)
{
    const char *src = getenv("TRAINSIZE_SRCDIR");
    char tmpl[] = "/tmp/ts-formats-XXXXXX";

    ck_assert_ptr_nonnull(src);
    snprintf(data, sizeof data, "%s/tests/data", src);
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    snprintf(tmpdir, sizeof tmpdir, "%s", tmpl);
    th_shared_start();
}

static void server_stop(void)
{
    char cmd[320];

    th_shared_stop();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* ---------- json, jsonl ---------- */

/* A fitting plan, one that does not fit, one the API rejects, 10 %
 * margin: the document's verdicts, figures and answers are the API's. */
START_TEST(json_document)
{
    const char *plans[] = { "plans/llama3-8b-zero3.json", "plans/llama3-70b-zero0.json",
                            "plans/bad-tp.json" };
    static const char *const verdicts[] = { "fits", "does-not-fit", "rejected" };
    th_proc p = cli((const char *[]){ "check", "--format", "json", "--margin", "10%",
                                      dpath(plans[0]), dpath(plans[1]), dpath(plans[2]), NULL });
    json_t *doc = th_json_parse(p.out, strlen(p.out));

    ck_assert_msg(p.code == 2, "exit %d: %s", p.code, p.err);
    ck_assert_str_eq(th_json_str(doc, "command"), "check");
    ck_assert_str_eq(th_json_str(doc, "source"), "local");
    ck_assert_str_eq(th_json_str(doc, "verdict"), "rejected");
    ck_assert_int_eq((int)th_json_num(doc, "exit"), 2);
    ck_assert_double_eq(th_json_num(doc, "margin"), 0.1);
    ck_assert_int_eq((int)th_json_num(doc, "counts.plans"), 3);
    ck_assert_int_eq((int)th_json_num(doc, "counts.fits"), 1);
    ck_assert_int_eq((int)th_json_num(doc, "counts.does_not_fit"), 1);
    ck_assert_int_eq((int)th_json_num(doc, "counts.rejected"), 1);
    ck_assert_int_eq((int)th_json_num(doc, "counts.error"), 0);
    ck_assert_uint_eq(json_array_size(th_json_get(doc, "plans")), 3);
    for (size_t i = 0; i < 3; i++) {
        json_t *pl = json_array_get(th_json_get(doc, "plans"), i);
        json_t *want = api_file("/v1/memory", dpath(plans[i]));

        ck_assert_str_eq(th_json_str(pl, "file"), dpath(plans[i]));
        ck_assert_str_eq(th_json_str(pl, "verdict"), verdicts[i]);
        ck_assert_int_eq((int)th_json_num(pl, "exit"), (int)i);
        ck_assert_double_eq(th_json_num(pl, "margin"), 0.1);
        ck_assert_msg(json_equal(th_json_get(pl, "answer"), want), "plan %zu: answer differs", i);
        if (i < 2) {
            double total = th_json_num(want, "memory.total.value");
            double hbm = th_json_num(want, "memory.hbm_bytes");

            ck_assert_double_eq(th_json_num(pl, "total_bytes"), total);
            ck_assert_double_eq(th_json_num(pl, "hbm_bytes"), hbm);
            /* allowed = (1 - 0.1) x HBM; spare = allowed - total */
            ck_assert_double_eq_tol(th_json_num(pl, "allowed_bytes"), 0.9 * hbm, 1.0);
            ck_assert_double_eq_tol(th_json_num(pl, "spare_bytes"), 0.9 * hbm - total, 1.0);
            ck_assert_double_eq(th_json_num(pl, "worst_stage"),
                                th_json_num(want, "memory.worst_stage"));
            ck_assert_ptr_nonnull(strstr(th_json_str(pl, "summary"), "10% margin"));
            ck_assert(json_is_null(th_json_get(pl, "field")));
        } else {
            ck_assert_str_eq(th_json_str(pl, "field"), "/tp");
            ck_assert(json_is_null(th_json_get(pl, "total_bytes")));
        }
        json_decref(want);
    }
    json_decref(doc);
    th_proc_free(&p);

    /* estimate: one plan, the /v1/plan answer inside */
    p = cli((const char *[]){ "estimate", "--format", "json", dpath(plans[0]), NULL });
    doc = th_json_parse(p.out, strlen(p.out));
    ck_assert_int_eq(p.code, 0);
    ck_assert_str_eq(th_json_str(doc, "command"), "estimate");
    {
        json_t *want = api_file("/v1/plan", dpath(plans[0]));

        ck_assert(json_equal(th_json_get(doc, "plans.0.answer"), want));
        ck_assert_ptr_nonnull(th_json_get(want, "compute.step"));
        json_decref(want);
    }
    json_decref(doc);
    th_proc_free(&p);
}
END_TEST

/* jsonl: one JSON object per line, the document's plans; search: one
 * line per ranked layout, the answer's results. */
START_TEST(jsonl_lines)
{
    th_proc d =
        cli((const char *[]){ "check", "--format", "json", dpath("plans/llama3-8b-zero3.json"),
                              dpath("plans/llama3-70b-zero0.json"), NULL });
    th_proc l =
        cli((const char *[]){ "check", "--format", "jsonl", dpath("plans/llama3-8b-zero3.json"),
                              dpath("plans/llama3-70b-zero0.json"), NULL });
    json_t *doc = th_json_parse(d.out, strlen(d.out));
    const char *line = l.out;
    size_t n = 0;

    ck_assert_int_eq(l.code, 1);
    while (*line != '\0') {
        const char *nl = strchr(line, '\n');
        json_t *j;

        ck_assert_ptr_nonnull(nl);
        j = th_json_parse(line, (size_t)(nl - line));
        ck_assert(json_is_object(j));
        ck_assert_msg(json_equal(j, json_array_get(th_json_get(doc, "plans"), n)),
                      "line %zu is not plan %zu", n, n);
        json_decref(j);
        n++;
        line = nl + 1;
    }
    ck_assert_uint_eq(n, 2);
    json_decref(doc);
    th_proc_free(&d);
    th_proc_free(&l);

    d = cli((const char *[]){ "search", "--json", "--model", "llama3-8b", "--gpus", "16",
                              "--global-batch", "64", "--limit", "4", NULL });
    l = cli((const char *[]){ "search", "--format", "jsonl", "--model", "llama3-8b", "--gpus", "16",
                              "--global-batch", "64", "--limit", "4", NULL });
    doc = th_json_parse(d.out, strlen(d.out));
    ck_assert_int_eq(l.code, 0);
    n = 0;
    for (line = l.out; *line != '\0'; n++) {
        const char *nl = strchr(line, '\n');
        json_t *j;

        ck_assert_ptr_nonnull(nl);
        j = th_json_parse(line, (size_t)(nl - line));
        ck_assert(json_equal(j, json_array_get(th_json_get(doc, "results"), n)));
        json_decref(j);
        line = nl + 1;
    }
    ck_assert_uint_eq(n, json_array_size(th_json_get(doc, "results")));
    ck_assert_uint_ge(n, 2);
    json_decref(doc);
    th_proc_free(&d);
    th_proc_free(&l);
}
END_TEST

/* ---------- junit ---------- */

START_TEST(junit_estimate_validates)
{
    const char *xmllint = getenv("XMLLINT");
    char xml[320];
    th_proc p =
        cli((const char *[]){ "estimate", "--format", "junit", dpath("plans/llama3-8b-zero3.json"),
                              dpath("plans/llama3-70b-zero0.json"), NULL });

    ck_assert_int_eq(p.code, 1);
    ck_assert_ptr_nonnull(strstr(p.out, "<testsuite name=\"trainsize estimate\""));
    ck_assert_ptr_nonnull(strstr(p.out, "type=\"does-not-fit\""));
    snprintf(xml, sizeof xml, "%s/estimate.xml", tmpdir);
    th_write_file(xml, NULL, p.out);
    th_proc_free(&p);
    ck_assert_msg(xmllint != NULL && *xmllint != '\0', "XMLLINT not set (libxml2-utils)");
    ck_assert_int_eq(
        th_exec((const char *[]){ xmllint, "--noout", "--schema", dpath("junit.xsd"), xml, NULL },
                NULL, NULL, &p),
        0);
    ck_assert_msg(p.code == 0, "xmllint: %s", p.err);
    th_proc_free(&p);
}
END_TEST

/* ---------- github ---------- */

/* The annotation line that starts with prefix, or NULL. */
static const char *gh_line(const char *out, const char *prefix)
{
    for (const char *l = out; l != NULL && *l != '\0';
         l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, prefix, strlen(prefix)) == 0)
            return l;
    return NULL;
}

START_TEST(github_points_into_files)
{
    char cfg[320], want[640], args[320], bad[320], inline_plan[320];
    th_proc p;

    /* a config.json given on the command line: its notes point into it */
    snprintf(cfg, sizeof cfg, "%s/config.json", tmpdir);
    {
        char *text = th_read_file(dpath("hf/llama3-8b.json"), NULL);

        th_write_file(cfg, NULL, text);
        free(text);
    }
    p = cli((const char *[]){ "check", "--format", "github", "--hf-config", cfg, "--gpus", "8",
                              "--zero", "3", NULL });
    ck_assert_msg(strstr(p.out, "file=command line") == NULL, "%s", p.out);
    ck_assert_msg(strstr(p.out, "command%20line") == NULL, "%s", p.out);
    /* the verdict has no file: the plan is the command line */
    ck_assert_ptr_nonnull(gh_line(p.out, "::notice title=trainsize check PASS::"));
    snprintf(want, sizeof want,
             "::warning file=%s,line=%u,title=trainsize import note::"
             "/hf_config/torch_dtype",
             cfg, line_of(cfg, "\"torch_dtype\""));
    ck_assert_msg(gh_line(p.out, want) != NULL, "no '%s' in\n%s", want, p.out);
    snprintf(want, sizeof want,
             "::warning file=%s,line=%u,title=trainsize import note::"
             "/hf_config/max_position_embeddings",
             cfg, line_of(cfg, "\"max_position_embeddings\""));
    ck_assert_msg(gh_line(p.out, want) != NULL, "no '%s' in\n%s", want, p.out);
    th_proc_free(&p);

    /* a plan with the config inside it: the lines of the plan file */
    snprintf(inline_plan, sizeof inline_plan, "%s/inline.json", tmpdir);
    {
        char *text = th_read_file(dpath("hf/llama3-8b.json"), NULL);
        char *plan = malloc(strlen(text) + 64);

        ck_assert_ptr_nonnull(plan);
        sprintf(plan, "{\n\"gpus\": 8,\n\"zero\": 3,\n\"hf_config\": %s}\n", text);
        th_write_file(inline_plan, NULL, plan);
        free(plan);
        free(text);
    }
    p = cli((const char *[]){ "check", "--format", "github", inline_plan, NULL });
    snprintf(want, sizeof want, "::notice file=%s,title=trainsize check PASS::", inline_plan);
    ck_assert_msg(gh_line(p.out, want) != NULL, "no '%s' in\n%s", want, p.out);
    snprintf(want, sizeof want,
             "::warning file=%s,line=%u,title=trainsize import note::"
             "/hf_config/torch_dtype",
             inline_plan, line_of(inline_plan, "\"torch_dtype\""));
    ck_assert_int_gt(line_of(inline_plan, "\"torch_dtype\""), 4);
    ck_assert_msg(gh_line(p.out, want) != NULL, "no '%s' in\n%s", want, p.out);
    th_proc_free(&p);

    /* a rejected value inside an imported file: the error points at it */
    snprintf(bad, sizeof bad, "%s/bad-config.json", tmpdir);
    th_write_file(bad, NULL,
                  "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 4096,\n"
                  "  \"num_hidden_layers\": -3,\n  \"num_attention_heads\": 32,\n"
                  "  \"intermediate_size\": 14336,\n  \"vocab_size\": 128256\n}\n");
    p = cli((const char *[]){ "check", "--format", "github", "--hf-config", bad, NULL });
    ck_assert_int_eq(p.code, 2);
    snprintf(want, sizeof want, "::error file=%s,line=4,title=trainsize check REJECTED::", bad);
    ck_assert_msg(gh_line(p.out, want) != NULL, "no '%s' in\n%s", want, p.out);
    th_proc_free(&p);

    /* Megatron arguments: the line of the flag a note names */
    snprintf(args, sizeof args, "%s/args.txt", tmpdir);
    th_write_file(args, NULL,
                  "pretrain_gpt.py \\\n  --num-layers 32 --hidden-size 4096 \\\n"
                  "  --num-attention-heads 32 --seq-length 4096 \\\n  --my-custom-flag 3 \\\n"
                  "  --bf16\n");
    p = cli((const char *[]){ "check", "--format", "github", "--hf-config", cfg, "--megatron-args",
                              args, "--gpus", "8", NULL });
    snprintf(want, sizeof want,
             "::warning file=%s,line=4,title=trainsize import note::"
             "megatron_args: unknown flags ignored: --my-custom-flag",
             args);
    ck_assert_msg(gh_line(p.out, want) != NULL, "no '%s' in\n%s", want, p.out);
    th_proc_free(&p);

    /* a plan on standard input: no file to point at */
    p = cli_in((const char *[]){ "check", "--format", "github", "-", NULL }, inline_plan);
    ck_assert_msg(p.code == 0, "exit %d: %s", p.code, p.err);
    ck_assert_ptr_nonnull(gh_line(p.out, "::notice title=trainsize check PASS::"));
    ck_assert_ptr_nonnull(gh_line(p.out, "::warning title=trainsize import note::"));
    ck_assert_ptr_null(strstr(p.out, "file="));
    th_proc_free(&p);
}
END_TEST

/* ---------- markdown ---------- */

/* Cells of a markdown table row ("| a | b \| c |"): count, and cell k
 * (trimmed) into buf. */
static size_t md_cells(const char *row, size_t k, char *buf, size_t size)
{
    size_t n = 0, o = 0;

    buf[0] = '\0';
    ck_assert_int_eq(row[0], '|');
    for (const char *c = row + 1; *c != '\0' && *c != '\n'; c++) {
        if (*c == '\\' && c[1] == '|') {
            if (n == k && o + 1 < size)
                buf[o++] = '|';
            c++;
            continue;
        }
        if (*c == '|') {
            n++;
            continue;
        }
        if (n == k && o + 1 < size)
            buf[o++] = *c;
    }
    buf[o] = '\0';
    while (o > 0 && buf[o - 1] == ' ')
        buf[--o] = '\0';
    if (buf[0] == ' ')
        memmove(buf, buf + 1, strlen(buf));
    return n;
}

START_TEST(markdown_table)
{
    char odd[320], cell[256];
    th_proc p;
    const char *row;

    snprintf(odd, sizeof odd, "%s/a|b.json", tmpdir);
    th_write_file(odd, NULL, "{\"model\":\"llama3-70b\",\"gpus\":8,\"zero\":0}");
    p = cli((const char *[]){ "check", "--format", "markdown", "--margin", "10%",
                              dpath("plans/llama3-8b-zero3.json"), odd, NULL });
    ck_assert_int_eq(p.code, 1);
    ck_assert_ptr_nonnull(
        strstr(p.out, "trainsize check: 1 of 2 plans fits with a 10% margin\n---\n"));
    row = strstr(p.out, "\n| plan | verdict |");
    ck_assert_ptr_nonnull(row);
    ck_assert_uint_eq(md_cells(row + 1, 0, cell, sizeof cell), 7);
    row = strchr(row + 1, '\n') + 1; /* the alignment row */
    ck_assert_uint_eq(md_cells(row, 0, cell, sizeof cell), 7);
    row = strchr(row, '\n') + 1;
    ck_assert_uint_eq(md_cells(row, 0, cell, sizeof cell), 7);
    ck_assert_str_eq(cell, dpath("plans/llama3-8b-zero3.json"));
    md_cells(row, 1, cell, sizeof cell);
    ck_assert_ptr_nonnull(strstr(cell, "fits"));
    row = strchr(row, '\n') + 1;
    ck_assert_uint_eq(md_cells(row, 0, cell, sizeof cell), 7);
    ck_assert_str_eq(cell, odd); /* the | escaped, read back whole */
    md_cells(row, 1, cell, sizeof cell);
    ck_assert_ptr_nonnull(strstr(cell, "does not fit"));
    th_proc_free(&p);

    p = cli((const char *[]){ "search", "--format", "markdown", "--model", "llama3-8b", "--gpus",
                              "16", "--limit", "3", NULL });
    ck_assert_int_eq(p.code, 0);
    row = strstr(p.out, "\n| rank |");
    ck_assert_ptr_nonnull(row);
    ck_assert_uint_eq(md_cells(row + 1, 0, cell, sizeof cell), 15);
    th_proc_free(&p);
}
END_TEST

/* ---------- csv ---------- */

/* RFC 4180 records of text: rows of fields (malloc'd), *n rows. */
/* Columns: a search row's scalars and its objects' ("step.", "human.",
 * "request.": well over 64). */
#define CSV_COLS 160
typedef struct csv_doc {
    char *cell[64][CSV_COLS];
    size_t cols[64];
    size_t rows;
} csv_doc;

static void csv_parse(const char *s, csv_doc *d)
{
    char buf[4096];
    size_t o = 0;
    bool q = false;

    memset(d, 0, sizeof *d);
    for (; *s != '\0'; s++) {
        if (q) {
            if (*s == '"' && s[1] == '"') {
                buf[o++] = '"';
                s++;
            } else if (*s == '"') {
                q = false;
            } else {
                buf[o++] = *s;
            }
        } else if (*s == '"') {
            q = true;
        } else if (*s == ',' || *s == '\r') {
            if (*s == '\r') {
                ck_assert_int_eq(s[1], '\n'); /* CRLF line ends */
                s++;
            }
            buf[o] = '\0';
            ck_assert_uint_lt(d->rows, 64);
            ck_assert_uint_lt(d->cols[d->rows], CSV_COLS);
            d->cell[d->rows][d->cols[d->rows]++] = strdup(buf);
            o = 0;
            if (*s == '\n')
                d->rows++;
        } else {
            ck_assert_int_ne(*s, '\n'); /* a bare LF only inside quotes */
            buf[o++] = *s;
        }
        ck_assert_uint_lt(o, sizeof buf);
    }
    ck_assert(!q);
    ck_assert_uint_eq(o, 0);
}

static void csv_free(csv_doc *d)
{
    for (size_t r = 0; r < 64; r++)
        for (size_t c = 0; c < d->cols[r]; c++)
            free(d->cell[r][c]);
}

static size_t csv_col(const csv_doc *d, const char *name)
{
    for (size_t c = 0; c < d->cols[0]; c++)
        if (strcmp(d->cell[0][c], name) == 0)
            return c;
    ck_abort_msg("no column %s", name);
    return 0;
}

START_TEST(csv_rows)
{
    csv_doc *d = malloc(sizeof *d);
    th_proc p;
    json_t *j;

    ck_assert_ptr_nonnull(d);
    /* check: a row per plan, the figures the JSON's */
    p = cli((const char *[]){ "check", "--format", "csv", dpath("plans/llama3-8b-zero3.json"),
                              dpath("plans/bad-tp.json"), NULL });
    ck_assert_int_eq(p.code, 2);
    csv_parse(p.out, d);
    ck_assert_uint_eq(d->rows, 3);
    ck_assert_uint_eq(d->cols[1], d->cols[0]);
    ck_assert_uint_eq(d->cols[2], d->cols[0]);
    j = api_file("/v1/memory", dpath("plans/llama3-8b-zero3.json"));
    ck_assert_str_eq(d->cell[1][csv_col(d, "verdict")], "fits");
    ck_assert_double_eq(strtod(d->cell[1][csv_col(d, "total_bytes")], NULL),
                        th_json_num(j, "memory.total.value"));
    ck_assert_str_eq(d->cell[2][csv_col(d, "verdict")], "rejected");
    ck_assert_str_eq(d->cell[2][csv_col(d, "total_bytes")], "");
    json_decref(j);
    csv_free(d);
    th_proc_free(&p);

    /* estimate: the verdict row, then a row per figure of the terms table
     * with the answer's value (exactly: shortest round trip) and text */
    p = cli((const char *[]){ "estimate", "--format", "csv", dpath("plans/llama3-8b-zero3.json"),
                              NULL });
    ck_assert_int_eq(p.code, 0);
    csv_parse(p.out, d);
    j = api_file("/v1/plan", dpath("plans/llama3-8b-zero3.json"));
    ck_assert_str_eq(d->cell[1][csv_col(d, "section")], "verdict");
    ck_assert_str_eq(d->cell[1][csv_col(d, "figure")], "fits");
    for (size_t r = 2; r < d->rows; r++) {
        const char *sec = d->cell[r][csv_col(d, "section")];
        const char *fig = d->cell[r][csv_col(d, "figure")];
        const json_t *obj = th_json_get(j, sec), *v = json_object_get(obj, fig);

        ck_assert_msg(v != NULL, "%s.%s not in the answer", sec, fig);
        if (json_is_object(v)) {
            ck_assert_str_eq(d->cell[r][csv_col(d, "text")],
                             json_string_value(json_object_get(v, "human")));
            v = json_object_get(v, "value");
        }
        ck_assert_double_eq(strtod(d->cell[r][csv_col(d, "value")], NULL), json_number_value(v));
    }
    ck_assert_uint_ge(d->rows, 30);
    json_decref(j);
    csv_free(d);
    th_proc_free(&p);

    /* search: a row per layout, a column per member */
    {
        th_proc s = cli((const char *[]){ "search", "--json", "--model", "llama3-8b", "--gpus",
                                          "16", "--limit", "5", NULL });

        p = cli((const char *[]){ "search", "--format", "csv", "--model", "llama3-8b", "--gpus",
                                  "16", "--limit", "5", NULL });
        ck_assert_int_eq(p.code, 0);
        csv_parse(p.out, d);
        j = th_json_parse(s.out, strlen(s.out));
        ck_assert_uint_eq(d->rows - 1, json_array_size(th_json_get(j, "results")));
        for (size_t r = 1; r < d->rows; r++) {
            const json_t *row = json_array_get(th_json_get(j, "results"), r - 1);

            ck_assert_double_eq(strtod(d->cell[r][csv_col(d, "tp")], NULL), th_json_num(row, "tp"));
            ck_assert_double_eq(strtod(d->cell[r][csv_col(d, "step_time")], NULL),
                                th_json_num(row, "step_time"));
            ck_assert_str_eq(d->cell[r][csv_col(d, "human.predicted_mfu")],
                             th_json_str(row, "human.predicted_mfu"));
        }
        json_decref(j);
        csv_free(d);
        th_proc_free(&p);
        th_proc_free(&s);
    }
    free(d);
}
END_TEST

/* ---------- notes ---------- */

START_TEST(notes_off_and_given)
{
    th_proc p = cli((const char *[]){ "check", "--hf-config", dpath("hf/llama3-8b.json"), "--gpus",
                                      "8", "--zero", "3", NULL });
    json_t *doc;

    ck_assert_ptr_nonnull(strstr(p.out, "note: /hf_config/torch_dtype"));
    th_proc_free(&p);
    /* --notes=off: none, in text and in the document */
    p = cli((const char *[]){ "check", "--notes=off", "--hf-config", dpath("hf/llama3-8b.json"),
                              "--gpus", "8", "--zero", "3", NULL });
    ck_assert_ptr_null(strstr(p.out, "note:"));
    th_proc_free(&p);
    p = cli((const char *[]){ "check", "--notes", "off", "--format", "json", "--hf-config",
                              dpath("hf/llama3-8b.json"), "--gpus", "8", NULL });
    doc = th_json_parse(p.out, strlen(p.out));
    ck_assert_uint_eq(json_array_size(th_json_get(doc, "plans.0.notes")), 0);
    json_decref(doc);
    th_proc_free(&p);
    /* --precision and --seq given: no note about torch_dtype or
     * max_position_embeddings, in any format */
    p = cli((const char *[]){ "check", "--format", "github", "--hf-config",
                              dpath("hf/llama3-8b.json"), "--precision", "bf16", "--seq", "4096",
                              "--gpus", "8", "--zero", "3", NULL });
    ck_assert_ptr_null(strstr(p.out, "torch_dtype"));
    ck_assert_ptr_null(strstr(p.out, "max_position_embeddings"));
    ck_assert_ptr_null(strstr(p.out, "::warning"));
    th_proc_free(&p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli-formats");
    TCase *tc = tcase_create("formats");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, server_start, server_stop);
    tcase_add_test(tc, json_document);
    tcase_add_test(tc, jsonl_lines);
    tcase_add_test(tc, junit_estimate_validates);
    tcase_add_test(tc, github_points_into_files);
    tcase_add_test(tc, markdown_table);
    tcase_add_test(tc, csv_rows);
    tcase_add_test(tc, notes_off_and_given);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 && th_shared_bad_exits() == 0 ? 0 : 1;
}
