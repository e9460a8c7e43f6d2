/*
 * ts_cli_cmds.c - the command and option tables, suggestions, help.
 */
#include "ts_cli_cmds.h"
#include "ts_cli_opts.h"
#include "ts_api.h"
#include "trainsize.h"

#include <string.h>

#define F_TEXT     TS_FORMAT_BIT(TS_CHECK_TEXT)
#define F_JSON     TS_FORMAT_BIT(TS_CHECK_JSON)
#define F_JSONL    TS_FORMAT_BIT(TS_CHECK_JSONL)
#define F_MARKDOWN TS_FORMAT_BIT(TS_CHECK_MARKDOWN)
#define F_CSV      TS_FORMAT_BIT(TS_CHECK_CSV)
#define PLAN_FORMATS                                                                              \
    (F_TEXT | F_JSON | F_JSONL | TS_FORMAT_BIT(TS_CHECK_JUNIT) | TS_FORMAT_BIT(TS_CHECK_GITHUB) | \
     F_MARKDOWN | F_CSV)

const ts_cli_cmd ts_cli_cmds[TS_CMD_COUNT] = {
    [TS_CMD_NONE] = { NULL, NULL, NULL, NULL, 0, false },
    [TS_CMD_ESTIMATE] = { "estimate", "[RUN OPTIONS] [PLAN.json ...]",
                          "memory, step time, cost and checkpoints of a run (POST /v1/plan)",
                          "Prints the plan's tables and its verdict: it fits when the worst "
                          "pipeline\n"
                          "stage needs at most (1 - margin) of the GPU's HBM.  Exit 1 when it "
                          "does\n"
                          "not.  Plan files and imported configs work as for check.",
                          PLAN_FORMATS, true },
    [TS_CMD_CHECK] = { "check", "[RUN OPTIONS] [PLAN.json ...]",
                       "a CI gate: does every plan fit in GPU memory (POST /v1/memory)",
                       "A plan is the API's request JSON in a file (imports allowed inside it;\n"
                       "\"hf_config\": \"configs/x.json\" names a file next to the plan, which is\n"
                       "read and sent inline); the command line's imports and run options go on\n"
                       "top of each.  A plan fits when memory.total <= (1 - margin) x\n"
                       "memory.hbm_bytes; with --max-days / --max-cost (or max_days / max_cost\n"
                       "in the plan) its run with checkpoint writes, failures and restarts\n"
                       "(POST /v1/plan, compute.goodput) must also be within them.  Without a\n"
                       "plan file the run options alone are one plan.  The exit status is the\n"
                       "worst over all plans.",
                       PLAN_FORMATS, true },
    [TS_CMD_SEARCH] = { "search", "[RUN OPTIONS] [PLAN.json]",
                        "the fastest layouts that fit, ranked (POST /v1/search)",
                        "Given tp/pp/cp/ep/zero/framework/recompute/micro-batch/vpp are kept, the\n"
                        "rest searched.  Imported configs and one plan file work as for check.\n"
                        "A layout is ranked when it fits with the margin (default 10% of HBM kept\n"
                        "free) and within --max-days / --max-cost; every row ends with the\n"
                        "estimate command that reproduces it.  Exit 1 when no layout fits.",
                        F_TEXT | F_JSON | F_JSONL | F_MARKDOWN | F_CSV, true },
    [TS_CMD_BUDGET] = { "budget",
                        "[RUN OPTIONS] --budget-days D | --budget-gpu-hours H | --budget-usd U",
                        "what a budget of GPU time trains, and its plan (POST /v1/budget)",
                        "Without a model: the compute-optimal model for the FLOPs the budget buys\n"
                        "(--scaling-law hoffmann or besiroglu), or one of --tokens-per-param; "
                        "with\n"
                        "--model, the tokens it buys.  Days are wall clock with failures, on "
                        "--gpus.",
                        F_TEXT | F_JSON, true },
    [TS_CMD_HEALTH] = { "health", "[--ready]", "is the server live (and ready)",
                        "Asks the server's /livez (and /readyz with --ready): exit 0 when it\n"
                        "answers 2xx, 1 otherwise.  Always needs a server (--url, $TRAINSIZE_URL,\n"
                        "$TRAINSIZE_PORT, else http://127.0.0.1:8080).",
                        0, false },
    [TS_CMD_PRESETS] = { "presets", "", "the model presets (GET /v1/presets)",
                         "Lists every model preset: its id (for --model), parameters, sequence\n"
                         "length and training tokens.",
                         F_TEXT | F_JSON, false },
    [TS_CMD_GPUS] = { "gpus", "", "the GPU catalogue (GET /v1/gpus)",
                      "Lists every GPU: its id (for --gpu), HBM, bandwidth and peaks.",
                      F_TEXT | F_JSON, false },
    [TS_CMD_HELP] = { "help", "[COMMAND]", "this text, or one command's",
                      "trainsize help estimate is trainsize estimate --help.", 0, false },
};

static const char *const format_values[] = { "text",   "json",     "jsonl", "junit",
                                             "github", "markdown", "csv",   NULL };
static const char *const notes_values[] = { "on", "off", NULL };

const ts_cli_opt ts_cli_opts[TS_CLI_OPT_COUNT] = {
    [TS_CLI_OPT_URL] = { "--url", 0, TS_ARG_WORD, "URL", 0, NULL,
                         "ask the server at URL (default: $TRAINSIZE_URL, else\n"
                         "http://127.0.0.1:$TRAINSIZE_PORT when set; else --local)" },
    [TS_CLI_OPT_LOCAL] = { "--local", 0, TS_ARG_NONE, NULL, 0, NULL,
                           "answer in this process, no server: the same code and the same\n"
                           "bytes as the server's (also $TRAINSIZE_LOCAL=1)" },
    [TS_CLI_OPT_TIMEOUT] = { "--timeout", 0, TS_ARG_WORD, "SECONDS", 0, NULL,
                             "whole-request timeout for a server (default 30; connect 3)" },
    [TS_CLI_OPT_HELP] = { "--help", 'h', TS_ARG_NONE, NULL, 0, NULL,
                          "this text; after a command, that command's" },
    [TS_CLI_OPT_VERSION] = { "--version", 'V', TS_ARG_NONE, NULL, 0, NULL,
                             "print the version and exit" },
    [TS_CLI_OPT_JSON] = { "--json", 0, TS_ARG_NONE, NULL,
                          TS_CMDS_RUN | TS_CMD_BIT(TS_CMD_PRESETS) | TS_CMD_BIT(TS_CMD_GPUS), NULL,
                          "the API's answer unchanged (check: --format json)" },
    [TS_CLI_OPT_FORMAT] = { "--format", 0, TS_ARG_ENUM, "FORMAT",
                            TS_CMDS_RUN | TS_CMD_BIT(TS_CMD_PRESETS) | TS_CMD_BIT(TS_CMD_GPUS),
                            format_values,
                            "text (default), json (one document), jsonl (a line per plan or\n"
                            "row), junit (JUnit XML), github (workflow annotations), markdown\n"
                            "(a summary table) or csv" },
    [TS_CLI_OPT_NOTES] = { "--notes", 0, TS_ARG_ENUM, "on|off", TS_CMDS_PLAN, notes_values,
                           "off: leave out what an import could not map exactly" },
    [TS_CLI_OPT_FORMULAS] = { "--formulas", 0, TS_ARG_NONE, NULL, TS_CMD_BIT(TS_CMD_ESTIMATE), NULL,
                              "each figure's formula under it" },
    [TS_CLI_OPT_MARGIN] = { "--margin", 0, TS_ARG_WORD, "M", TS_CMDS_RUN, NULL,
                            "share of HBM that must stay free: 10% or 0.1 (default 0;\n"
                            "search: 10%, layouts above it are not ranked)" },
    [TS_CLI_OPT_FILE] = { "--file", 0, TS_ARG_FILE, "PLAN.json", TS_CMDS_RUN, NULL,
                          "a plan (also as bare arguments: trainsize check plans/*.json;\n"
                          "search takes one); its config files may be paths next to it" },
    [TS_CLI_OPT_HF_CONFIG] = { "--hf-config", 0, TS_ARG_FILE, "FILE", TS_CMDS_RUN, NULL,
                               "a Hugging Face config.json (hf_config); - reads standard input" },
    [TS_CLI_OPT_DEEPSPEED] = { "--deepspeed", 0, TS_ARG_FILE, "FILE", TS_CMDS_RUN, NULL,
                               "a DeepSpeed JSON config (deepspeed_config)" },
    [TS_CLI_OPT_MEGATRON_ARGS] = { "--megatron-args", 0, TS_ARG_FILE, "FILE", TS_CMDS_RUN, NULL,
                                   "a Megatron-LM launch script or its arguments (megatron_args)" },
    [TS_CLI_OPT_AXOLOTL] = { "--axolotl", 0, TS_ARG_FILE, "FILE", TS_CMDS_RUN, NULL,
                             "an axolotl YAML config (axolotl_config)" },
    [TS_CLI_OPT_LLAMAFACTORY] = { "--llamafactory", 0, TS_ARG_FILE, "FILE", TS_CMDS_RUN, NULL,
                                  "a LLaMA-Factory training YAML (llamafactory_config)" },
    [TS_CLI_OPT_NEMO] = { "--nemo-config", 0, TS_ARG_FILE, "FILE", TS_CMDS_RUN, NULL,
                          "a NeMo training YAML, conf/training/<family>/<model>.yaml "
                          "(nemo_config)" },
    [TS_CLI_OPT_READY] = { "--ready", 0, TS_ARG_NONE, NULL, TS_CMD_BIT(TS_CMD_HEALTH), NULL,
                           "also ask /readyz" },
};

const ts_cli_exit ts_cli_exits[] = {
    { 0, "ok: every plan fits with the margin, a layout fits, the server is healthy" },
    { 1, "the verdict is no: a plan does not fit (estimate, check), no layout\n"
         "fits (search), the server is not healthy (health)" },
    { 2, "the input is wrong: bad usage, a file that cannot be read, or the API\n"
         "rejected the request (a 4xx answer, naming the field)" },
    { 3, "no answer: the server is unreachable or timed out, answered 5xx, or\n"
         "sent something that is not the API's" },
    { -1, NULL },
};

ts_cmd ts_cli_cmd_find(const char *name)
{
    for (int c = TS_CMD_NONE + 1; c < TS_CMD_COUNT; c++)
        if (strcmp(ts_cli_cmds[c].name, name) == 0)
            return (ts_cmd)c;
    return TS_CMD_NONE;
}

static bool opt_takes(const ts_cli_opt *o, ts_cmd cmd)
{
    if (o->cmds == 0)
        return true;
    if (cmd == TS_CMD_NONE)
        return false;
    if (o == &ts_cli_opts[TS_CLI_OPT_FORMAT])
        return ts_cli_cmds[cmd].formats != 0;
    return (o->cmds & TS_CMD_BIT(cmd)) != 0;
}

const ts_cli_opt *ts_cli_opt_match(const char *arg, ts_cmd cmd)
{
    for (size_t i = 0; i < TS_CLI_OPT_COUNT; i++) {
        const ts_cli_opt *o = &ts_cli_opts[i];
        size_t n = strlen(o->name);
        bool hit = strncmp(arg, o->name, n) == 0 &&
                   (arg[n] == '\0' || (arg[n] == '=' && o->arg != TS_ARG_NONE));

        if (!hit && o->short_name != 0)
            hit = arg[0] == '-' && arg[1] == o->short_name && arg[2] == '\0';
        if (hit)
            return opt_takes(o, cmd) ? o : NULL;
    }
    return NULL;
}

const char *const *ts_cli_field_values(const char *json_name)
{
    size_t n = ts_api_request_field_count();

    for (size_t i = 0; i < n; i++) {
        const ts_api_field *f = ts_api_request_field(i);

        if (strcmp(f->name, json_name) == 0)
            return f->values;
    }
    return NULL;
}

/* ---------------------------------------------------------------- */
/* suggestions                                                       */
/* ---------------------------------------------------------------- */

/* The closest candidate, by core/ts_name.c's suggester (the API's own
 * "did you mean" for model and GPU names): case and punctuation folded,
 * optimal-string-alignment distance, near enough for a typo. */
static bool suggest_done(const ts_name_suggest *s, char *buf, size_t size)
{
    const char *best = ts_name_suggest_best(s);

    if (best == NULL)
        return false;
    snprintf(buf, size, "%s", best);
    return true;
}

bool ts_cli_suggest_option(const char *arg, ts_cmd cmd, char *buf, size_t size)
{
    char word[TS_NAME_KEY_MAX];
    size_t n = strcspn(arg, "=");
    ts_name_suggest s;

    if (n >= sizeof word)
        return false;
    memcpy(word, arg, n);
    word[n] = '\0';
    ts_name_suggest_init(&s, word);
    for (size_t i = 0; i < TS_CLI_OPT_COUNT; i++)
        if (opt_takes(&ts_cli_opts[i], cmd))
            ts_name_suggest_try(&s, ts_cli_opts[i].name);
    if (cmd != TS_CMD_NONE && ts_cli_cmds[cmd].run_options) {
        size_t count;
        const ts_cli_field *f = ts_cli_fields(&count);

        ts_name_suggest_try(&s, "--set");
        /* the keys drop punctuation: "micro_batch" is "--micro-batch" */
        for (size_t i = 0; i < count; i++)
            ts_name_suggest_try(&s, f[i].name);
    }
    if (ts_name_suggest_best(&s) == NULL)
        return false;
    if (s.best[0] != '-') {
        /* a run field: its option's spelling */
        snprintf(buf, size, "--%s", s.best);
        for (size_t k = 2; buf[k] != '\0'; k++)
            buf[k] = buf[k] == '_' ? '-' : buf[k];
        return true;
    }
    return suggest_done(&s, buf, size);
}

bool ts_cli_suggest_value(const char *word, const char *const *values, char *buf, size_t size)
{
    ts_name_suggest s;

    ts_name_suggest_init(&s, word);
    for (; values != NULL && *values != NULL; values++)
        ts_name_suggest_try(&s, *values);
    return suggest_done(&s, buf, size);
}

bool ts_cli_suggest_command(const char *word, char *buf, size_t size)
{
    ts_name_suggest s;

    ts_name_suggest_init(&s, word);
    for (int c = TS_CMD_NONE + 1; c < TS_CMD_COUNT; c++)
        ts_name_suggest_try(&s, ts_cli_cmds[c].name);
    return suggest_done(&s, buf, size);
}

/* ---------------------------------------------------------------- */
/* help                                                              */
/* ---------------------------------------------------------------- */

/* text's lines, each after indent (the first after first instead). */
static void indented(FILE *out, const char *first, const char *indent, const char *text)
{
    const char *p = text;

    fputs(first, out);
    while (*p != '\0') {
        size_t n = strcspn(p, "\n");

        fprintf(out, "%.*s\n", (int)n, p);
        p += n;
        if (*p == '\n' && p[1] != '\0')
            fputs(indent, out);
        if (*p == '\n')
            p++;
    }
}

static void help_option(FILE *out, const ts_cli_opt *o)
{
    char head[64];

    if (o->short_name != 0)
        snprintf(head, sizeof head, "  -%c, %s", o->short_name, o->name);
    else if (o->metavar != NULL)
        snprintf(head, sizeof head, "  %s %s", o->name, o->metavar);
    else
        snprintf(head, sizeof head, "  %s", o->name);
    if (strlen(head) < 28) {
        char first[64];

        snprintf(first, sizeof first, "%-28s", head);
        indented(out, first, "                            ", o->help);
    } else {
        fprintf(out, "%s\n", head);
        indented(out, "                            ", "                            ", o->help);
    }
}

void ts_cli_help_exits(FILE *out)
{
    for (const ts_cli_exit *e = ts_cli_exits; e->code >= 0; e++) {
        char first[16];

        snprintf(first, sizeof first, "  %d  ", e->code);
        indented(out, first, "     ", e->meaning);
    }
}

static void help_options_of(FILE *out, ts_cmd cmd, bool global)
{
    for (size_t i = 0; i < TS_CLI_OPT_COUNT; i++) {
        const ts_cli_opt *o = &ts_cli_opts[i];

        if ((o->cmds == 0) == global && (global || opt_takes(o, cmd)))
            help_option(out, o);
    }
}

static void help_command(FILE *out, ts_cmd cmd)
{
    const ts_cli_cmd *c = &ts_cli_cmds[cmd];

    fprintf(out, "usage: trainsize [--url URL | --local] %s %s\n\n", c->name, c->synopsis);
    fprintf(out, "%s.\n\n%s\n", c->summary, c->help);
    if (cmd != TS_CMD_HELP) {
        fprintf(out, "\noptions:\n");
        help_options_of(out, cmd, false);
    }
    if (c->run_options) {
        fprintf(out, "\nrun options (JSON field names with '-' for '_'; flags take --no-NAME):\n");
        ts_cli_print_run_options(out);
    }
    fprintf(out, "\ncommon options (before or after the command):\n");
    help_options_of(out, cmd, true);
    fprintf(out, "\nexit status:\n");
    ts_cli_help_exits(out);
}

void ts_cli_help(FILE *out, ts_cmd cmd)
{
    if (cmd != TS_CMD_NONE) {
        help_command(out, cmd);
        return;
    }
    fprintf(out, "usage: trainsize [--url URL | --local] [--timeout SECONDS] COMMAND [OPTIONS]\n\n"
                 "commands:\n");
    for (int c = TS_CMD_NONE + 1; c < TS_CMD_COUNT; c++)
        fprintf(out, "  %-10s %s\n", ts_cli_cmds[c].name, ts_cli_cmds[c].summary);
    fprintf(out, "\ncommon options (before or after the command):\n");
    help_options_of(out, TS_CMD_NONE, true);
    fprintf(out, "\ncommand options (trainsize help COMMAND for each command's):\n");
    for (size_t i = 0; i < TS_CLI_OPT_COUNT; i++)
        if (ts_cli_opts[i].cmds != 0)
            help_option(out, &ts_cli_opts[i]);
    fprintf(out, "\nrun options of estimate, check and search (JSON field names with '-'\n"
                 "for '_'; flags take --no-NAME):\n");
    ts_cli_print_run_options(out);
    fprintf(out,
            "\nexample: trainsize estimate --model llama3-70b --gpu h100-sxm --gpus 64 --zero 3\n"
            "\nexit status:\n");
    ts_cli_help_exits(out);
}
