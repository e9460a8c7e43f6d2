/*
 * ts_cli_cmds.h - the CLI's commands and its own options, as tables.
 *
 * One table each, read by the parser (trainsize.c), the help texts, the
 * "did you mean" suggestions and the build-time generator of the shell
 * completions and the man page (ts_cli_gen.c), so none of them keeps a
 * list of its own.  The run options (--tp, --model ...) are the API
 * registry's (ts_cli_opts.h); their enum values are the API's
 * (ts_api_request_field()).
 */
#ifndef TS_CLI_CMDS_H
#define TS_CLI_CMDS_H

#include "ts_cli_check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum ts_cmd {
    TS_CMD_NONE = 0,
    TS_CMD_ESTIMATE,
    TS_CMD_CHECK,
    TS_CMD_SEARCH,
    TS_CMD_BUDGET,
    TS_CMD_HEALTH,
    TS_CMD_PRESETS,
    TS_CMD_GPUS,
    TS_CMD_HELP,
    TS_CMD_COUNT
} ts_cmd;

#define TS_CMD_BIT(c) (1u << (unsigned)(c))
#define TS_CMDS_PLAN  (TS_CMD_BIT(TS_CMD_ESTIMATE) | TS_CMD_BIT(TS_CMD_CHECK))
#define TS_CMDS_RUN   (TS_CMDS_PLAN | TS_CMD_BIT(TS_CMD_SEARCH) | TS_CMD_BIT(TS_CMD_BUDGET))

#define TS_FORMAT_BIT(f) (1u << (unsigned)(f))

typedef struct ts_cli_cmd {
    const char *name;     /* "estimate" */
    const char *synopsis; /* after "trainsize NAME " */
    const char *summary;  /* one line */
    const char *help;     /* a paragraph, lines of at most 76 columns */
    unsigned formats;     /* TS_FORMAT_BIT()s --format takes; 0: none */
    bool run_options;     /* takes the registry's run options */
} ts_cli_cmd;

typedef enum ts_opt_id {
    TS_CLI_OPT_URL = 0,
    TS_CLI_OPT_LOCAL,
    TS_CLI_OPT_TIMEOUT,
    TS_CLI_OPT_HELP,
    TS_CLI_OPT_VERSION,
    TS_CLI_OPT_JSON,
    TS_CLI_OPT_FORMAT,
    TS_CLI_OPT_NOTES,
    TS_CLI_OPT_FORMULAS,
    TS_CLI_OPT_MARGIN,
    TS_CLI_OPT_FILE,
    TS_CLI_OPT_HF_CONFIG,
    TS_CLI_OPT_DEEPSPEED,
    TS_CLI_OPT_MEGATRON_ARGS,
    TS_CLI_OPT_AXOLOTL,
    TS_CLI_OPT_LLAMAFACTORY,
    TS_CLI_OPT_NEMO,
    TS_CLI_OPT_READY,
    TS_CLI_OPT_COUNT
} ts_opt_id;

typedef enum ts_opt_arg {
    TS_ARG_NONE = 0, /* a flag */
    TS_ARG_WORD,     /* a value */
    TS_ARG_FILE,     /* a file name ("-": standard input) */
    TS_ARG_ENUM      /* one of values[] */
} ts_opt_arg;

typedef struct ts_cli_opt {
    const char *name; /* "--url" */
    char short_name;  /* 'V' for -V, or 0 */
    ts_opt_arg arg;
    const char *metavar;       /* "URL"; NULL for a flag */
    unsigned cmds;             /* TS_CMD_BIT()s; 0: every command (global) */
    const char *const *values; /* TS_ARG_ENUM: NULL-terminated */
    const char *help;
} ts_cli_opt;

extern const ts_cli_cmd ts_cli_cmds[TS_CMD_COUNT]; /* [TS_CMD_NONE] unused */
extern const ts_cli_opt ts_cli_opts[TS_CLI_OPT_COUNT];

/* The exit statuses, one table for --help, the man page and docs/cli.md. */
typedef struct ts_cli_exit {
    int code;
    const char *meaning;
} ts_cli_exit;
extern const ts_cli_exit ts_cli_exits[]; /* code -1 ends it */

/* "estimate" -> TS_CMD_ESTIMATE; TS_CMD_NONE when not a command. */
ts_cmd ts_cli_cmd_find(const char *name);

/* The option of argv word arg ("--url", "--url=x", "-V"), when it is one
 * of the table's and cmd takes it; NULL otherwise. */
const ts_cli_opt *ts_cli_opt_match(const char *arg, ts_cmd cmd);

/* The enum values of a run field from the API registry ("precision" ->
 * fp32, bf16 ...), NULL when it is a free value. */
const char *const *ts_cli_field_values(const char *json_name);

/* The closest candidate to what was typed (core/ts_name.c's suggester:
 * case and punctuation folded, near enough for a typo), into buf; false
 * when none is close. */
bool ts_cli_suggest_option(const char *arg, ts_cmd cmd, char *buf, size_t size);
bool ts_cli_suggest_value(const char *word, const char *const *values, char *buf, size_t size);
bool ts_cli_suggest_command(const char *word, char *buf, size_t size);

/* Help: the whole text (cmd TS_CMD_NONE) or one command's. */
void ts_cli_help(FILE *out, ts_cmd cmd);
/* The exit status table, indented. */
void ts_cli_help_exits(FILE *out);

#endif /* TS_CLI_CMDS_H */
