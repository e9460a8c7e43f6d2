/*
 * ts_cli_opts.h - command-line options -> the /v1 run object.
 *
 * One table lists every run field of the API with its JSON type (generated
 * from the field registry core/ts_fields.def by tools/ts_gen_fields);
 * "--micro-batch 4" becomes {"micro_batch":4}.  The CLI checks only the
 * syntax (is it an integer?); ranges and combinations are the server's to
 * judge, so the answer and its error naming the field come from one place.
 */
#ifndef TS_CLI_OPTS_H
#define TS_CLI_OPTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum ts_cli_kind {
    TS_CLI_STR = 0,
    TS_CLI_INT, /* JSON integer */
    TS_CLI_NUM, /* JSON number; accepts k/M/B/T suffixes where noted */
    TS_CLI_BOOL /* flag: --x = true, --no-x or --x=false = false */
} ts_cli_kind;

typedef struct ts_cli_field {
    const char *name; /* JSON name, e.g. "micro_batch" (option: --micro-batch) */
    ts_cli_kind kind;
    bool suffix; /* NUM only: allow 15T, 70B, 1.5M */
    const char *help;
} ts_cli_field;

typedef enum ts_cli_status {
    TS_CLI_OK = 0,
    TS_CLI_NOMATCH, /* argv[*i] is not a run option */
    TS_CLI_EUSAGE,  /* a run option with a bad or missing value */
    TS_CLI_ENOMEM
} ts_cli_status;

typedef struct ts_cli_error {
    char text[256];
} ts_cli_error;

/* Generated from the api's field registry (ts_cli_fields.c, build dir). */
extern const ts_cli_field ts_cli_field_table[];
extern const size_t ts_cli_field_count;
extern const char *const ts_cli_run_options_help[]; /* --help lines, NULL-ended */

const ts_cli_field *ts_cli_fields(size_t *count);
/* The word --help shows for the option's value: "NAME" (a string), "N"
 * (an integer), "X" (a number), NULL for a flag; as the generated help
 * lines (test_cli_unit.c holds them to it). */
const char *ts_cli_field_metavar(const ts_cli_field *f);
const ts_cli_field *ts_cli_field_find(const char *json_name);

/* Try argv[*i] as a run option ("--tp 8", "--tp=8", "--gated", "--no-gated",
 * "--set key=value").  On TS_CLI_OK the field is set in run (last one wins)
 * and *i points at the last argument consumed. */
ts_cli_status ts_cli_parse_run_option(int argc, char **argv, int *i, json_t *run,
                                      ts_cli_error *err);

/* Value of a "--set key=value": JSON when it parses as a JSON number, bool,
 * null, string, array or object, otherwise the raw text as a string.
 * NULL only when out of memory. */
json_t *ts_cli_typed_value(const char *text);

/* Print the option list for the usage text. */
void ts_cli_print_run_options(FILE *out);

#endif /* TS_CLI_OPTS_H */
