/*
 * ts_cli_report.h - render /v1 answers as text tables.
 *
 * A parsed JSON answer in, text out: the figures are the answer's own
 * texts ("human").  Missing fields print as "n/a" so an older or newer
 * server never crashes the client.
 */
#ifndef TS_CLI_REPORT_H
#define TS_CLI_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Dotted lookup: "memory.total.value".  NULL when any step is missing. */
const json_t *ts_report_get(const json_t *root, const char *path);
/* Number at path (integer or real); NAN when missing or not a number. */
double ts_report_num(const json_t *root, const char *path);

/* Width of the label column of the estimate table (its labels are the
 * terms table's, at most this long). */
#define TS_REPORT_LABEL_W 32

/* /v1/plan answer -> the estimate table; formulas: each row's formula
 * under it. */
void ts_report_plan(FILE *out, const json_t *plan, bool formulas);

/* /v1/memory or /v1/plan answer -> one verdict line plus the terms.
 * *fits gets memory.fits; returns false when the answer has no fits flag. */
bool ts_report_check(FILE *out, const json_t *answer, bool *fits);

/* /v1/budget answer -> its summary, the budget's rows, the layout, and
 * the plan's compute, goodput and energy. */
void ts_report_budget(FILE *out, const json_t *answer);

/* /v1/search answer -> the ranked table, one layout per line, then each
 * row's "request" as the estimate command that reproduces it. */
void ts_report_search(FILE *out, const json_t *answer);
/* A request object -> "trainsize estimate --name value ..." (names with
 * '-' for '_', booleans as --name / --no-name, null members left out,
 * strings quoted for a POSIX shell when needed), and --margin when
 * margin > 0 so that its verdict is the search's. */
void ts_report_command(FILE *out, const json_t *request, double margin);
/* memory.stages -> one row per pipeline stage (nothing when absent). */
void ts_report_stages(FILE *out, const json_t *memory);

void ts_report_presets(FILE *out, const json_t *answer);
void ts_report_gpus(FILE *out, const json_t *answer);

/* problem+json -> "error: <detail> (field /x)". */
void ts_report_problem(FILE *out, const json_t *problem, long status);

#endif /* TS_CLI_REPORT_H */
