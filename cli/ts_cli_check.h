/*
 * ts_cli_check.h - `trainsize check`: a CI gate over one or many plans.
 *
 * A plan is the API's request JSON (imports allowed inside it).  Each
 * plan, with the command line's imports (--hf-config, --axolotl,
 * --deepspeed, --megatron-args) and run options on top, is sent to POST /v1/memory and
 * passes when the worst pipeline stage fits with the margin:
 *     memory.total <= (1 - margin) * memory.hbm_bytes   (and memory.fits)
 * Exit status, worst over all plans: 0 every plan fits with the margin,
 * 1 one does not, 2 one was rejected (the server's 4xx, or a plan or
 * config file that cannot be read), 3 the server was unreachable.
 * Reports: text (default), JUnit XML (--format junit) or GitHub Actions
 * workflow annotations (--format github).
 */
#ifndef TS_CLI_CHECK_H
#define TS_CLI_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TS_CHECK_FILES_MAX 256
#define TS_CHECK_FILE_MAX (1024L * 1024L) /* bytes of one plan or config file */

typedef enum ts_check_format {
    TS_CHECK_TEXT = 0,
    TS_CHECK_JUNIT,
    TS_CHECK_GITHUB
} ts_check_format;

typedef struct ts_check_opts {
    const char *hf_config;      /* file paths, NULL when not given */
    const char *deepspeed;
    const char *megatron_args;
    const char *axolotl;        /* axolotl YAML (axolotl_config) */
    const char *files[TS_CHECK_FILES_MAX];
    size_t n_files;
    double margin;              /* fraction of HBM kept free, [0, 1) */
    ts_check_format format;
} ts_check_opts;

/* "--hf-config F", "--deepspeed F", "--megatron-args F", "--axolotl F", "--file F",
 * "--margin 10%", "--format junit" (also --name=value).  1 consumed (and
 * *i on its last word), 0 not a check option, -1 usage error in err. */
int ts_check_parse_option(int argc, char **argv, int *i, ts_check_opts *o,
                          char *err, size_t errlen);

/* A plan file given as a bare argument.  0, or -1 (too many) with err. */
int ts_check_add_file(ts_check_opts *o, const char *path, char *err, size_t errlen);

/* "10%" -> 0.10, "0.1" -> 0.1; false unless in [0, 1). */
bool ts_check_parse_margin(const char *s, double *out);

/* Run every plan (or the run options alone when there is no plan file)
 * against url and report on out.  json: print each answer (text format
 * only).  Returns the exit status above. */
int ts_check_run(const ts_check_opts *o, const char *url, long timeout_ms,
                 const json_t *run_opts, bool json, FILE *out, FILE *err);

/* Escapes for the reports, exposed for the unit tests.  Write s escaped
 * into buf (always NUL-terminated, truncated on a character boundary). */
void ts_check_xml_escape(char *buf, size_t size, const char *s);
void ts_check_gh_escape(char *buf, size_t size, const char *s, bool property);

#endif /* TS_CLI_CHECK_H */
