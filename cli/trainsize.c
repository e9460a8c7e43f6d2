/*
 * trainsize.c - the command-line client of the /v1 API.
 *
 * It turns options into the run JSON, has it answered (by a server, or in
 * process through the same api code: ts_cli_conn.h) and prints the
 * answer.  No estimation happens here, so the CLI, the dashboard and the
 * API can never disagree.  The commands and options are the tables of
 * ts_cli_cmds.h and ts_cli_opts.h; the exit statuses are ts_cli_exits[]:
 * 0 ok / fits / healthy, 1 the verdict is no, 2 the input is wrong (usage,
 * files, a 4xx), 3 no answer (unreachable, 5xx, not the API's).
 */
#include "ts_cli_check.h"
#include "ts_cli_cmds.h"
#include "ts_cli_conn.h"
#include "ts_cli_http.h"
#include "ts_cli_opts.h"
#include "ts_cli_out.h"
#include "ts_cli_report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TS_EXIT_OK = 0, TS_EXIT_NO = 1, TS_EXIT_INPUT = 2, TS_EXIT_ERROR = 3 };

#define TS_DEFAULT_URL "http://127.0.0.1:8080"
#define TS_URL_LEN     256

/* Everything one invocation needs; lives on main's stack. */
typedef struct ts_cli {
    char url[TS_URL_LEN];
    bool url_given;   /* --url */
    bool local_given; /* --local */
    long timeout_ms;
    bool json;
    bool format_given;
    bool ready;
    bool help; /* --help / help [COMMAND] */
    bool version;
    ts_cmd cmd;
    ts_cmd help_cmd; /* help COMMAND */
    bool dashdash;   /* after "--": only plan files */
    json_t *run;
    ts_check_opts plan; /* estimate, check: plans, imports, margin, format */
    ts_conn conn;
} ts_cli;

static int usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static int usage_error(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "trainsize: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: trainsize [--url URL | --local] COMMAND [OPTIONS]"
                    " (trainsize help [COMMAND] for more)\n");
    return TS_EXIT_INPUT;
}

/* TRAINSIZE_URL, else http://127.0.0.1:$TRAINSIZE_PORT; false when
 * neither is set (then TS_DEFAULT_URL). */
static bool env_url(char *buf, size_t len)
{
    const char *url = getenv("TRAINSIZE_URL");
    const char *port = getenv("TRAINSIZE_PORT");

    if (url && *url) {
        snprintf(buf, len, "%s", url);
        return true;
    }
    /* inside the container the server's own port is the best guess */
    if (port && *port && strspn(port, "0123456789") == strlen(port) && strlen(port) <= 5) {
        snprintf(buf, len, "http://127.0.0.1:%s", port);
        return true;
    }
    snprintf(buf, len, "%s", TS_DEFAULT_URL);
    return false;
}

/* " (did you mean X?)" or "" into buf. */
static const char *did_you_mean(char *buf, size_t size, bool found, const char *what)
{
    if (found)
        snprintf(buf, size, " (did you mean %s?)", what);
    else
        buf[0] = '\0';
    return buf;
}

/* v is one of the table's formats (table_option checked it); the
 * command must write it. */
static int parse_format(ts_cli *cli, const char *v)
{
    for (int f = 0; f < TS_CHECK_FORMAT_COUNT; f++) {
        if (strcmp(v, ts_check_format_names[f]) != 0)
            continue;
        if ((ts_cli_cmds[cli->cmd].formats & TS_FORMAT_BIT(f)) == 0)
            return usage_error("%s does not write --format %s", ts_cli_cmds[cli->cmd].name, v);
        cli->plan.format = (ts_check_format)f;
        cli->format_given = true;
        return TS_EXIT_OK;
    }
    return usage_error("--format: unknown format '%s'", v);
}

static int parse_timeout(ts_cli *cli, const char *v)
{
    char *end;
    double s;

    errno = 0;
    s = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(s) || s <= 0 || s > 3600)
        return usage_error("--timeout needs seconds in (0, 3600], got '%s'", v);
    cli->timeout_ms = (long)ceil(s * 1000.0);
    return TS_EXIT_OK;
}

/* One option of the table, its value already taken (NULL for a flag). */
static int apply_option(ts_cli *cli, const ts_cli_opt *o, const char *v)
{
    static const ts_check_import imports[] = {
        [TS_CLI_OPT_HF_CONFIG] = TS_CHECK_IMP_HF,
        [TS_CLI_OPT_DEEPSPEED] = TS_CHECK_IMP_DS,
        [TS_CLI_OPT_MEGATRON_ARGS] = TS_CHECK_IMP_MEGA,
        [TS_CLI_OPT_AXOLOTL] = TS_CHECK_IMP_AXOLOTL,
        [TS_CLI_OPT_LLAMAFACTORY] = TS_CHECK_IMP_LLAMAFACTORY,
        [TS_CLI_OPT_NEMO] = TS_CHECK_IMP_NEMO,
    };
    ts_opt_id id = (ts_opt_id)(o - ts_cli_opts);
    char err[256];

    switch (id) {
    case TS_CLI_OPT_URL:
        if (!ts_http_url_ok(v) || strlen(v) >= sizeof cli->url)
            return usage_error("--url needs an http:// or https:// URL, got '%s'", v);
        snprintf(cli->url, sizeof cli->url, "%s", v);
        cli->url_given = true;
        return TS_EXIT_OK;
    case TS_CLI_OPT_LOCAL:
        cli->local_given = true;
        return TS_EXIT_OK;
    case TS_CLI_OPT_TIMEOUT:
        return parse_timeout(cli, v);
    case TS_CLI_OPT_HELP:
        cli->help = true;
        if (cli->cmd == TS_CMD_HELP && cli->help_cmd == TS_CMD_NONE)
            cli->help_cmd = TS_CMD_HELP; /* help --help: help's own */
        return TS_EXIT_OK;
    case TS_CLI_OPT_VERSION:
        cli->version = true;
        return TS_EXIT_OK;
    case TS_CLI_OPT_JSON:
        cli->json = true;
        return TS_EXIT_OK;
    case TS_CLI_OPT_FORMAT:
        return parse_format(cli, v);
    case TS_CLI_OPT_NOTES:
        cli->plan.notes_off = strcmp(v, "off") == 0;
        return TS_EXIT_OK;
    case TS_CLI_OPT_FORMULAS:
        cli->plan.formulas = true;
        return TS_EXIT_OK;
    case TS_CLI_OPT_READY:
        cli->ready = true;
        return TS_EXIT_OK;
    case TS_CLI_OPT_MARGIN:
        if (!ts_check_parse_margin(v, &cli->plan.margin))
            return usage_error("--margin needs a fraction of HBM to keep free, like 10%% "
                               "or 0.1 (in [0, 1)), got '%s'",
                               v);
        cli->plan.margin_given = true;
        return TS_EXIT_OK;
    case TS_CLI_OPT_FILE:
        return ts_check_add_file(&cli->plan, v, err, sizeof err) == 0 ? TS_EXIT_OK
                                                                      : usage_error("%s", err);
    case TS_CLI_OPT_HF_CONFIG:
    case TS_CLI_OPT_DEEPSPEED:
    case TS_CLI_OPT_MEGATRON_ARGS:
    case TS_CLI_OPT_AXOLOTL:
    case TS_CLI_OPT_LLAMAFACTORY:
    case TS_CLI_OPT_NEMO:
        return ts_check_set_import(&cli->plan, imports[id], v, err, sizeof err) == 0
                   ? TS_EXIT_OK
                   : usage_error("%s", err);
    case TS_CLI_OPT_COUNT:
    default:
        break;
    }
    return usage_error("%s: not handled", o->name);
}

/* A word of the table's: its value from "=value" or the next word. */
static int table_option(ts_cli *cli, const ts_cli_opt *o, int argc, char **argv, int *i)
{
    const char *arg = argv[*i], *eq = strchr(arg, '=');
    const char *v = NULL;

    if (o->arg != TS_ARG_NONE) {
        if (eq != NULL && arg[1] == '-') {
            v = eq + 1;
        } else if (*i + 1 < argc) {
            v = argv[++*i];
        } else {
            return usage_error("%s needs a value%s%s", o->name, o->metavar != NULL ? ": " : "",
                               o->metavar != NULL ? o->metavar : "");
        }
        if (o->arg == TS_ARG_ENUM) {
            char near[64], hint[96];
            bool ok = false;

            for (const char *const *e = o->values; *e != NULL && !ok; e++)
                ok = strcmp(*e, v) == 0;
            if (!ok)
                return usage_error(
                    "%s: unknown value '%s'%s", o->name, v,
                    did_you_mean(hint, sizeof hint,
                                 ts_cli_suggest_value(v, o->values, near, sizeof near), near));
        }
    }
    return apply_option(cli, o, v);
}

static int unknown_option(const ts_cli *cli, const char *a)
{
    char near[80], hint[112];

    if (cli->cmd == TS_CMD_NONE && ts_cli_opt_match(a, TS_CMD_ESTIMATE) != NULL)
        return usage_error("%s comes after a command (trainsize COMMAND %s)", a, a);
    if (cli->cmd != TS_CMD_NONE && !ts_cli_cmds[cli->cmd].run_options &&
        (ts_cli_opt_match(a, TS_CMD_ESTIMATE) != NULL || strncmp(a, "--", 2) == 0)) {
        /* a run option on presets: no suggestion of estimate's options */
        bool found = ts_cli_suggest_option(a, cli->cmd, near, sizeof near);

        return usage_error("unknown option '%s' for %s%s", a, ts_cli_cmds[cli->cmd].name,
                           did_you_mean(hint, sizeof hint, found, near));
    }
    return usage_error("unknown option '%s'%s", a,
                       did_you_mean(hint, sizeof hint,
                                    ts_cli_suggest_option(a, cli->cmd, near, sizeof near), near));
}

/* A word that is not an option: the command, help's topic or a plan. */
static int positional(ts_cli *cli, const char *a)
{
    char near[64], hint[96], err[256];

    if (cli->cmd == TS_CMD_NONE) {
        cli->cmd = ts_cli_cmd_find(a);
        if (cli->cmd == TS_CMD_NONE)
            return usage_error("unknown command '%s'%s", a,
                               did_you_mean(hint, sizeof hint,
                                            ts_cli_suggest_command(a, near, sizeof near), near));
        return TS_EXIT_OK;
    }
    if (cli->cmd == TS_CMD_HELP && cli->help_cmd == TS_CMD_NONE) {
        cli->help_cmd = ts_cli_cmd_find(a);
        if (cli->help_cmd == TS_CMD_NONE)
            return usage_error("help: unknown command '%s'%s", a,
                               did_you_mean(hint, sizeof hint,
                                            ts_cli_suggest_command(a, near, sizeof near), near));
        return TS_EXIT_OK;
    }
    if (cli->cmd == TS_CMD_ESTIMATE || cli->cmd == TS_CMD_CHECK || cli->cmd == TS_CMD_SEARCH)
        return ts_check_add_file(&cli->plan, a, err, sizeof err) == 0 ? TS_EXIT_OK
                                                                      : usage_error("%s", err);
    return usage_error("unexpected argument '%s'", a);
}

/* A run option whose field takes one of the registry's values: refused
 * here, with the closest one, rather than sent. */
static int check_enums(const ts_cli *cli)
{
    const char *key;
    json_t *v;

    json_object_foreach(cli->run, key, v)
    {
        const char *const *values = ts_cli_field_values(key);
        const char *s = json_string_value(v);
        char near[64], hint[96], opt[64];
        bool ok = false;
        size_t k;

        if (values == NULL || s == NULL)
            continue;
        for (k = 0; values[k] != NULL && !ok; k++)
            ok = strcmp(values[k], s) == 0;
        if (ok)
            continue;
        snprintf(opt, sizeof opt, "--%s", key);
        for (k = 2; opt[k] != '\0'; k++)
            opt[k] = opt[k] == '_' ? '-' : opt[k];
        return usage_error("%s: unknown value '%s'%s", opt, s,
                           did_you_mean(hint, sizeof hint,
                                        ts_cli_suggest_value(s, values, near, sizeof near), near));
    }
    return TS_EXIT_OK;
}

static int parse_args(ts_cli *cli, int argc, char **argv)
{
    int i, rc;

    for (i = 1; i < argc && !cli->help && !cli->version; i++) {
        const char *a = argv[i];
        const ts_cli_opt *o;

        if (cli->dashdash || a[0] != '-' || strcmp(a, "-") == 0) {
            if ((rc = positional(cli, a)) != TS_EXIT_OK)
                return rc;
            continue;
        }
        if (strcmp(a, "--") == 0 && cli->cmd != TS_CMD_NONE) {
            cli->dashdash = true;
            continue;
        }
        if ((o = ts_cli_opt_match(a, cli->cmd)) != NULL) {
            if ((rc = table_option(cli, o, argc, argv, &i)) != TS_EXIT_OK)
                return rc;
            continue;
        }
        if (cli->cmd != TS_CMD_NONE && ts_cli_cmds[cli->cmd].run_options) {
            ts_cli_error err;

            switch (ts_cli_parse_run_option(argc, argv, &i, cli->run, &err)) {
            case TS_CLI_OK:
                continue;
            case TS_CLI_EUSAGE:
                return usage_error("%s", err.text);
            case TS_CLI_ENOMEM:
                fprintf(stderr, "trainsize: out of memory\n");
                return TS_EXIT_ERROR;
            case TS_CLI_NOMATCH:
                break;
            }
        }
        return unknown_option(cli, a);
    }
    if (cli->cmd == TS_CMD_HELP)
        cli->help = true;
    if (cli->help || cli->version)
        return TS_EXIT_OK;
    if (cli->cmd == TS_CMD_NONE)
        return usage_error("%s", "no command given");
    if (cli->cmd == TS_CMD_SEARCH && cli->plan.n_files > 1)
        return usage_error("search answers one run: give at most one plan file");
    return check_enums(cli);
}

/* Where the answers come from: --url or --local on the command line,
 * else $TRAINSIZE_LOCAL, else a server named by $TRAINSIZE_URL or
 * $TRAINSIZE_PORT, else in process (health: always a server). */
static int resolve_conn(ts_cli *cli)
{
    const char *env = getenv("TRAINSIZE_LOCAL");
    bool from_env = !cli->url_given ? env_url(cli->url, sizeof cli->url) : true;
    bool local;

    if (cli->url_given && cli->local_given)
        return usage_error("--url and --local: give one or the other");
    if (cli->local_given || cli->url_given) {
        local = cli->local_given;
    } else if (env != NULL && *env != '\0') {
        if (!strcmp(env, "1") || !strcmp(env, "true") || !strcmp(env, "yes"))
            local = true;
        else if (!strcmp(env, "0") || !strcmp(env, "false") || !strcmp(env, "no"))
            local = false;
        else
            return usage_error("TRAINSIZE_LOCAL is 1 or 0, got '%s'", env);
    } else {
        local = !from_env;
    }
    if (cli->cmd == TS_CMD_HEALTH) {
        if (local && (cli->local_given || (env != NULL && *env != '\0')))
            return usage_error("health asks a server: give --url (not --local)");
        local = false;
    }
    if (!local && !ts_http_url_ok(cli->url))
        return usage_error("server URL must be http:// or https://, got '%s'", cli->url);
    cli->conn.local = local;
    cli->conn.url = cli->url;
    cli->conn.timeout_ms = cli->timeout_ms;
    return TS_EXIT_OK;
}

/* --json and --format together; what --json means per command. */
static int resolve_format(ts_cli *cli)
{
    if (cli->json && cli->format_given && cli->plan.format != TS_CHECK_JSON)
        return usage_error("--json and --format %s: give one",
                           ts_check_format_names[cli->plan.format]);
    if (!cli->json)
        return TS_EXIT_OK;
    if (cli->cmd == TS_CMD_ESTIMATE && !cli->format_given)
        cli->plan.raw_json = true; /* the answer unchanged */
    else
        cli->plan.format = TS_CHECK_JSON;
    return TS_EXIT_OK;
}

/* One request; on success *answer is the parsed 2xx JSON and *raw its
 * bytes.  Otherwise the failure is printed and the exit status returned. */
static int call(const ts_cli *cli, const char *method, const char *path, const char *body,
                json_t **answer, ts_http_response *raw)
{
    ts_http_error err;
    json_error_t jerr;
    json_t *j;

    *answer = NULL;
    if (ts_conn_request(&cli->conn, method, path, body, raw, &err) != TS_HTTP_OK) {
        fprintf(stderr, "trainsize: %s\n", err.text);
        return TS_EXIT_ERROR;
    }
    j = json_loadb(raw->body, raw->len, 0, &jerr);
    if (raw->status < 200 || raw->status > 299) {
        if (j && ts_http_is_problem(raw))
            ts_report_problem(stderr, j, raw->status);
        else
            fprintf(stderr, "error: %s answered HTTP %ld for %s %s\n", ts_conn_name(&cli->conn),
                    raw->status, method, path);
        json_decref(j);
        ts_http_response_free(raw);
        return raw->status >= 500 ? TS_EXIT_ERROR : TS_EXIT_INPUT;
    }
    if (!j || !json_is_object(j)) {
        fprintf(stderr, "trainsize: %s%s is not a trainsize server: invalid JSON (%s)\n",
                ts_conn_name(&cli->conn), path, j ? "not an object" : jerr.text);
        json_decref(j);
        ts_http_response_free(raw);
        return TS_EXIT_ERROR;
    }
    *answer = j;
    return TS_EXIT_OK;
}

/* Ranked layouts; exit 1 when nothing fits.  The request: the plan file
 * (if any), the imports, the run options, as for estimate. */
static int cmd_search(const ts_cli *cli)
{
    char why[768];
    json_t *req = NULL;
    char *body;
    ts_http_response raw;
    json_t *a = NULL;
    int rc;

    if (ts_check_request(&cli->plan, cli->run, &req, why, sizeof why) != 0) {
        fprintf(stderr, "trainsize: %s\n", why);
        return TS_EXIT_INPUT;
    }
    /* --margin is the search's "margin" (the API's default, 0.1, without) */
    body = !cli->plan.margin_given ||
                   json_object_set_new(req, "margin", json_real(cli->plan.margin)) == 0
               ? json_dumps(req, JSON_COMPACT)
               : NULL;
    json_decref(req);
    if (!body) {
        fprintf(stderr, "trainsize: out of memory\n");
        return TS_EXIT_ERROR;
    }
    rc = call(cli, "POST", "/v1/search", body, &a, &raw);
    free(body);
    if (rc != TS_EXIT_OK)
        return rc;
    if (cli->plan.format == TS_CHECK_JSON)
        ts_out_raw(stdout, raw.body, raw.len);
    else if (cli->plan.format == TS_CHECK_TEXT)
        ts_report_search(stdout, a);
    else
        ts_out_search(stdout, a, raw.body, cli->plan.format);
    rc = json_is_true(ts_report_get(a, "found")) ? TS_EXIT_OK : TS_EXIT_NO;
    if (rc == TS_EXIT_NO && cli->plan.format != TS_CHECK_TEXT)
        fprintf(stderr, "trainsize: no layout fits: %s\n",
                json_string_value(ts_report_get(a, "reason")) != NULL
                    ? json_string_value(ts_report_get(a, "reason"))
                    : "none found");
    ts_http_response_free(&raw);
    json_decref(a);
    return rc;
}

/* A budget's model, tokens and plan (issue 28). */
static int cmd_budget(const ts_cli *cli)
{
    char *body = json_dumps(cli->run, JSON_COMPACT);
    ts_http_response raw;
    json_t *a = NULL;
    int rc;

    if (!body) {
        fprintf(stderr, "trainsize: out of memory\n");
        return TS_EXIT_ERROR;
    }
    rc = call(cli, "POST", "/v1/budget", body, &a, &raw);
    free(body);
    if (rc != TS_EXIT_OK)
        return rc;
    if (cli->plan.format == TS_CHECK_JSON)
        ts_out_raw(stdout, raw.body, raw.len);
    else
        ts_report_budget(stdout, a);
    ts_http_response_free(&raw);
    json_decref(a);
    return TS_EXIT_OK;
}

static int cmd_list(const ts_cli *cli, const char *path, void (*report)(FILE *, const json_t *))
{
    ts_http_response raw;
    json_t *a = NULL;
    int rc = call(cli, "GET", path, NULL, &a, &raw);

    if (rc != TS_EXIT_OK)
        return rc;
    if (cli->plan.format == TS_CHECK_JSON)
        ts_out_raw(stdout, raw.body, raw.len);
    else
        report(stdout, a);
    ts_http_response_free(&raw);
    json_decref(a);
    return TS_EXIT_OK;
}

/* One probe: 2xx = pass.  Any failure is "unhealthy" (exit 1), which is what
 * Docker's HEALTHCHECK and shell scripts expect. */
static bool probe(const ts_cli *cli, const char *path)
{
    ts_http_client c = { cli->url, 0, cli->timeout_ms };
    ts_http_response resp;
    ts_http_error err;
    bool ok;

    if (ts_http_request(&c, "GET", path, NULL, &resp, &err) != TS_HTTP_OK) {
        fprintf(stderr, "unhealthy: %s\n", err.text);
        return false;
    }
    ok = resp.status >= 200 && resp.status <= 299;
    if (!ok)
        fprintf(stderr, "unhealthy: %s%s answered HTTP %ld\n", cli->url, path, resp.status);
    ts_http_response_free(&resp);
    return ok;
}

static int cmd_health(const ts_cli *cli)
{
    if (!probe(cli, "/livez"))
        return TS_EXIT_NO;
    if (cli->ready && !probe(cli, "/readyz"))
        return TS_EXIT_NO;
    printf("ok: %s is %s\n", cli->url, cli->ready ? "live and ready" : "live");
    return TS_EXIT_OK;
}

static int run_command(ts_cli *cli)
{
    switch (cli->cmd) {
    case TS_CMD_ESTIMATE:
    case TS_CMD_CHECK:
        cli->plan.estimate = cli->cmd == TS_CMD_ESTIMATE;
        return ts_check_run(&cli->plan, &cli->conn, cli->run, stdout, stderr);
    case TS_CMD_SEARCH:
        return cmd_search(cli);
    case TS_CMD_BUDGET:
        return cmd_budget(cli);
    case TS_CMD_HEALTH:
        return cmd_health(cli);
    case TS_CMD_PRESETS:
        return cmd_list(cli, "/v1/presets", ts_report_presets);
    case TS_CMD_GPUS:
        return cmd_list(cli, "/v1/gpus", ts_report_gpus);
    case TS_CMD_NONE:
    case TS_CMD_HELP:
    case TS_CMD_COUNT:
    default:
        return TS_EXIT_OK;
    }
}

int main(int argc, char **argv)
{
    ts_cli cli;
    int rc;

    memset(&cli, 0, sizeof cli);
    cli.run = json_object();
    if (!cli.run) {
        fprintf(stderr, "trainsize: out of memory\n");
        return TS_EXIT_ERROR;
    }
    rc = parse_args(&cli, argc, argv);
    if (rc == TS_EXIT_OK && cli.version) {
        printf("trainsize %s\n", TS_CLI_VERSION);
    } else if (rc == TS_EXIT_OK && cli.help) {
        ts_cli_help(stdout, cli.cmd == TS_CMD_HELP ? cli.help_cmd : cli.cmd);
    } else if (rc == TS_EXIT_OK && (rc = resolve_conn(&cli)) == TS_EXIT_OK &&
               (rc = resolve_format(&cli)) == TS_EXIT_OK) {
        if (!ts_http_global_init()) {
            fprintf(stderr, "trainsize: cannot initialise libcurl\n");
            rc = TS_EXIT_ERROR;
        } else {
            rc = run_command(&cli);
            ts_http_global_cleanup();
        }
    }
    json_decref(cli.run);
    return rc;
}
