/*
 * ts_cli_out.h - the reports of `trainsize check` and `estimate`, in
 * every --format (text, json, jsonl, junit, github, markdown, csv).
 *
 * Each reads the plans' results (ts_cli_check.h) only; the figures are
 * the answer's, the margin's the CLI's own (ts_check_judge).
 */
#ifndef TS_CLI_OUT_H
#define TS_CLI_OUT_H

#include "ts_cli_check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Write the run's report in opts->format to out; what is not part of it
 * (a rejected plan's error in text) to err. */
void ts_out_plans(FILE *out, FILE *err, const ts_check_run_info *run);

/* An answer's bytes as they came, ending in a newline. */
void ts_out_raw(FILE *out, const char *raw, size_t len);

/* A /v1/search answer as jsonl (a line per ranked layout, its bytes as
 * the API sent them), csv or markdown (a row per layout). */
void ts_out_search(FILE *out, const json_t *answer, const char *raw, ts_check_format format);

#endif /* TS_CLI_OUT_H */
