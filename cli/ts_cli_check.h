/*
 * ts_cli_check.h - `trainsize check` and `trainsize estimate`: plans and
 * their verdicts.
 *
 * A plan is the API's request JSON (imports allowed inside it).  Each
 * plan, with the command line's imports (--hf-config, --axolotl,
 * --deepspeed, --megatron-args) and run options on top, is sent to
 * POST /v1/memory (check) or POST /v1/plan (estimate) and fits when the
 * worst pipeline stage fits with the margin:
 *     memory.total <= (1 - margin) * memory.hbm_bytes   (and memory.fits)
 * With max_days / max_cost (--max-days, --max-cost, or members of the
 * plan; taken out of the request, which goes to POST /v1/plan) it also
 * passes only when the run with checkpoints and failures is within them:
 *     compute.goodput.wall_days <= max_days, compute.goodput.cost_usd <= max_cost
 * Exit status, worst over all plans (the verdict's number):
 * 0 every plan fits with the margin, 1 one does not, 2 one was rejected
 * (a 4xx answer, or a plan or config file that cannot be read), 3 no
 * answer (the server unreachable, a 5xx, an answer that is not one).
 * The reports are ts_cli_out.h's.
 */
#ifndef TS_CLI_CHECK_H
#define TS_CLI_CHECK_H

#include "ts_cli_conn.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TS_CHECK_FILES_MAX 256
#define TS_CHECK_FILE_MAX  (1024L * 1024L) /* bytes of one plan or config file */

/* A plan's verdict; the numbers are the exit status. */
typedef enum ts_check_verdict {
    TS_CHECK_FITS = 0,
    TS_CHECK_NO = 1,       /* does not fit (with the margin) */
    TS_CHECK_REJECTED = 2, /* 4xx, or a file that cannot be read */
    TS_CHECK_ERROR = 3     /* no answer: unreachable, 5xx, not JSON */
} ts_check_verdict;

typedef enum ts_check_format {
    TS_CHECK_TEXT = 0,
    TS_CHECK_JSON,     /* one document: every plan, verdict, answer */
    TS_CHECK_JSONL,    /* one line per plan */
    TS_CHECK_JUNIT,    /* JUnit XML (tests/data/junit.xsd) */
    TS_CHECK_GITHUB,   /* GitHub Actions workflow commands */
    TS_CHECK_MARKDOWN, /* a summary table ($GITHUB_STEP_SUMMARY) */
    TS_CHECK_CSV,      /* one row per plan (estimate: per figure) */
    TS_CHECK_FORMAT_COUNT
} ts_check_format;

/* The --format names, in ts_check_format order. */
extern const char *const ts_check_format_names[TS_CHECK_FORMAT_COUNT + 1];

/* A command-line import: the member it fills and the file it came from. */
typedef enum ts_check_import {
    TS_CHECK_IMP_HF = 0,       /* --hf-config      hf_config (JSON) */
    TS_CHECK_IMP_DS,           /* --deepspeed      deepspeed_config (JSON) */
    TS_CHECK_IMP_MEGA,         /* --megatron-args  megatron_args (text) */
    TS_CHECK_IMP_AXOLOTL,      /* --axolotl        axolotl_config (YAML text) */
    TS_CHECK_IMP_LLAMAFACTORY, /* --llamafactory llamafactory_config (YAML text) */
    TS_CHECK_IMP_NEMO,         /* --nemo-config    nemo_config (YAML text) */
    TS_CHECK_IMP_COUNT
} ts_check_import;

/* The request member each import fills, in ts_check_import order. */
extern const char *const ts_check_import_members[TS_CHECK_IMP_COUNT];

typedef struct ts_check_opts {
    const char *imports[TS_CHECK_IMP_COUNT]; /* file paths ("-": stdin), NULL when not given */
    const char *files[TS_CHECK_FILES_MAX];   /* plan files ("-": stdin) */
    size_t n_files;
    double margin;     /* fraction of HBM kept free, [0, 1) */
    bool margin_given; /* --margin was given (search sends it; else the API's 0.1) */
    ts_check_format format;
    bool estimate;  /* trainsize estimate: /v1/plan, its tables */
    bool formulas;  /* estimate text: each figure's formula */
    bool raw_json;  /* --json on estimate: the answers unchanged */
    bool notes_off; /* --notes=off: no import notes printed */
} ts_check_opts;

/* One plan's outcome, what every report reads. */
typedef struct ts_check_result {
    const char *file; /* plan file, NULL: the command line alone */
    ts_check_verdict verdict;
    char summary[768]; /* one line, says the margin */
    char *report;      /* text report (check), malloc'd, may be NULL */
    size_t report_len;
    char **notes; /* import_notes, copied */
    size_t n_notes;
    char *raw; /* the answer's bytes (a 2xx or a problem), or NULL */
    size_t raw_len;
    json_t *answer;    /* raw parsed, or NULL */
    const char *field; /* rejected: the problem's JSON pointer, or NULL */
    /* the verdict's figures (NAN when there is no answer) */
    double total, allowed, hbm, worst_stage;
    /* The run gates (0: none), set before ts_check_judge, and the run's
     * days and cost with failures it read (NAN when not gated). */
    double max_days, max_cost;
    double days, cost;
    double seconds;
} ts_check_result;

/* A file of the run, read once ("-": standard input). */
typedef struct ts_check_src {
    const char *path; /* NULL: not given */
    char *text;       /* NUL-terminated, NULL when unreadable */
    size_t len;
    char why[640]; /* when unreadable */
} ts_check_src;

/* A whole run: every plan's result, for the reports. */
typedef struct ts_check_run_info {
    const ts_check_opts *opts;
    const ts_conn *conn;
    const ts_check_result *results;
    size_t n;
    /* the command line's imports in ts_check_import order, then the
     * plans in opts->files order (results[i] read srcs[IMP_COUNT + i]) */
    const ts_check_src *srcs;
} ts_check_run_info;

/* A plan file (--file F or a bare argument).  0, or -1 with err (too
 * many, or a second "-"). */
int ts_check_add_file(ts_check_opts *o, const char *path, char *err, size_t errlen);

/* A command-line import (--hf-config F ...).  0, or -1 with err (a
 * second "-"). */
int ts_check_set_import(ts_check_opts *o, ts_check_import k, const char *path, char *err,
                        size_t errlen);

/* One request from the command line: the plan file (o->files[0], if
 * any, its config paths read and inlined), the imports, then run_opts on
 * top (trainsize search).  0 with *req (owned), or -1 with why. */
int ts_check_request(const ts_check_opts *o, const json_t *run_opts, json_t **req, char *why,
                     size_t whylen);

/* "10%" -> 0.10, "0.1" -> 0.1; false unless in [0, 1). */
bool ts_check_parse_margin(const char *s, double *out);

/* Verdict on an answer that carries "memory" (/v1/memory or /v1/plan):
 * fills r's figures and summary, writes the check's text report to rep
 * (NULL: none).  TS_CHECK_ERROR when the answer has no memory figures.
 * With r->max_days or r->max_cost > 0 the answer is /v1/plan's and its
 * compute.goodput must be within them too (TS_CHECK_ERROR without it). */
ts_check_verdict ts_check_judge(double margin, const json_t *answer, ts_check_result *r, FILE *rep);

/* Run every plan (or the run options alone when there is no plan file)
 * and report on out (errors on err).  Returns the exit status above. */
int ts_check_run(const ts_check_opts *o, const ts_conn *conn, const json_t *run_opts, FILE *out,
                 FILE *err);

#endif /* TS_CLI_CHECK_H */
