/*
 * trainsize.c - command-line client for a trainsize server's /v1 API.
 *
 * A pure client: it turns options into the run JSON, asks the server, and
 * prints the answer.  No estimation happens here, so the CLI, the dashboard
 * and the API can never disagree.
 *
 * Exit codes: 0 ok / fits / healthy, 1 does not fit / unhealthy, 2 the
 * server answered with an error, 3 the server could not be reached or sent
 * something unreadable, 64 bad usage (sysexits EX_USAGE).
 */
#include "ts_cli_check.h"
#include "ts_cli_http.h"
#include "ts_cli_opts.h"
#include "ts_cli_report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    TS_EXIT_OK = 0,
    TS_EXIT_NO = 1,
    TS_EXIT_SERVER = 2,
    TS_EXIT_UNREACHABLE = 3,
    TS_EXIT_USAGE = 64
};

#define TS_DEFAULT_URL "http://127.0.0.1:8080"
#define TS_URL_LEN 256

typedef enum ts_cmd {
    TS_CMD_NONE = 0,
    TS_CMD_ESTIMATE,
    TS_CMD_CHECK,
    TS_CMD_HEALTH,
    TS_CMD_PRESETS,
    TS_CMD_GPUS,
    TS_CMD_SEARCH,
    TS_CMD_HELP,
    TS_CMD_VERSION
} ts_cmd;

/* Everything one invocation needs; lives on main's stack. */
typedef struct ts_cli {
    char url[TS_URL_LEN];
    long timeout_ms;
    bool json;
    bool formulas;             /* estimate: each row's formula under it */
    bool ready;
    ts_cmd cmd;
    json_t *run;
    ts_check_opts check;       /* trainsize check: plans, imports, margin */
} ts_cli;

static void usage_short(FILE *out)
{
    fprintf(out,
        "usage: trainsize [--url URL] [--timeout SECONDS] COMMAND [OPTIONS]\n"
        "commands: estimate, check, search, health, presets, gpus (trainsize --help lists every option)\n"
        "exit codes: 0 ok, 1 does not fit / unhealthy, 2 server error, 3 unreachable, 64 usage\n");
}

static void usage(FILE *out)
{
    fprintf(out,
        "usage: trainsize [--url URL] [--timeout SECONDS] COMMAND [OPTIONS]\n"
        "\n"
        "commands:\n"
        "  estimate [RUN OPTIONS] [--json] [--formulas]\n"
        "                                   memory, compute and checkpoint plan (POST /v1/plan);\n"
        "                                   --formulas: each figure's formula under it\n"
        "  check [RUN OPTIONS] [CHECK OPTIONS] [PLAN.json ...] [--json]\n"
        "                                   exit 0 if every plan fits in GPU memory (with the\n"
        "                                   margin), 1 if one does not, 2 rejected, 3 unreachable\n"
        "  search [RUN OPTIONS] [--json]    fastest layouts that fit, ranked (POST /v1/search);\n"
        "                                   given tp/pp/cp/ep/zero/framework/recompute/micro-batch/vpp\n"
        "                                   are kept, the rest searched; exit 1 if none fits\n"
        "  health [--ready]                 exit 0 if the server is live (and ready), 1 if not\n"
        "  presets [--json]                 list model presets\n"
        "  gpus [--json]                    list the GPU catalogue\n"
        "\n"
        "common options (before or after COMMAND):\n"
        "  --url URL          server, default $TRAINSIZE_URL, else http://127.0.0.1:$TRAINSIZE_PORT,\n"
        "                     else " TS_DEFAULT_URL "\n"
        "  --timeout SECONDS  whole-request timeout (default 30; connect timeout 3)\n"
        "  --json             print the server's JSON answer unchanged\n"
        "\n"
        "check options (a plan is the API's request JSON; the command line overrides it):\n"
        "  --file PLAN.json      a plan (also as bare arguments: trainsize check plans/*.json)\n"
        "  --hf-config FILE      a Hugging Face config.json (hf_config)\n"
        "  --deepspeed FILE      a DeepSpeed JSON config (deepspeed_config)\n"
        "  --megatron-args FILE  Megatron-LM arguments, as in a launch script (megatron_args)\n"
        "  --axolotl FILE        an axolotl YAML config (axolotl_config)\n"
        "  --margin 10%%          share of HBM that must stay free (or a fraction: 0.1)\n"
        "  --format FORMAT       text (default), junit (JUnit XML) or github (annotations)\n"
        "\n"
        "run options (JSON field names with '-' for '_'; flags take --no-NAME):\n");
    ts_cli_print_run_options(out);
    fprintf(out,
        "\n"
        "example: trainsize estimate --model llama3-70b --gpu h100-sxm --gpus 64 --zero 3\n"
        "exit codes: 0 ok, 1 does not fit / unhealthy, 2 server error, 3 unreachable, 64 usage\n");
}

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
    fprintf(stderr, "\n");
    usage_short(stderr);
    return TS_EXIT_USAGE;
}

static void default_url(char *buf, size_t len)
{
    const char *url = getenv("TRAINSIZE_URL");
    const char *port = getenv("TRAINSIZE_PORT");

    if (url && *url) {
        snprintf(buf, len, "%s", url);
        return;
    }
    /* inside the container the server's own port is the best guess */
    if (port && *port && strspn(port, "0123456789") == strlen(port) && strlen(port) <= 5) {
        snprintf(buf, len, "http://127.0.0.1:%s", port);
        return;
    }
    snprintf(buf, len, "%s", TS_DEFAULT_URL);
}

static ts_cmd parse_cmd(const char *s)
{
    static const struct { const char *name; ts_cmd cmd; } cmds[] = {
        {"estimate", TS_CMD_ESTIMATE}, {"check", TS_CMD_CHECK},
        {"health", TS_CMD_HEALTH}, {"presets", TS_CMD_PRESETS},
        {"gpus", TS_CMD_GPUS}, {"search", TS_CMD_SEARCH}, {"help", TS_CMD_HELP},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(s, cmds[i].name) == 0)
            return cmds[i].cmd;
    return TS_CMD_NONE;
}

/* "--name VALUE" or "--name=VALUE"; NULL when arg is not --name. */
static const char *opt_value(int argc, char **argv, int *i, const char *name,
                             bool *missing)
{
    size_t n = strlen(name);
    const char *arg = argv[*i];

    *missing = false;
    if (!arg || strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == '=')
        return arg + n + 1;
    if (arg[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

/* Options every command takes.  1 = consumed, 0 = not ours, -1 = usage error
 * (already reported). */
static int parse_common(ts_cli *cli, int argc, char **argv, int *i, int *rc)
{
    bool missing;
    const char *v;

    if ((v = opt_value(argc, argv, i, "--url", &missing)) != NULL) {
        if (!ts_http_url_ok(v) || strlen(v) >= sizeof cli->url) {
            *rc = usage_error("--url needs an http:// or https:// URL, got '%s'", v);
            return -1;
        }
        snprintf(cli->url, sizeof cli->url, "%s", v);
        return 1;
    }
    if (missing) {
        *rc = usage_error("%s needs a value", argv[*i]);
        return -1;
    }
    if ((v = opt_value(argc, argv, i, "--timeout", &missing)) != NULL) {
        char *end;
        double s;

        errno = 0;
        s = strtod(v, &end);
        if (errno || end == v || *end || !isfinite(s) || s <= 0 || s > 3600) {
            *rc = usage_error("--timeout needs seconds in (0, 3600], got '%s'", v);
            return -1;
        }
        cli->timeout_ms = (long)ceil(s * 1000.0);
        return 1;
    }
    if (missing) {
        *rc = usage_error("%s needs a value", argv[*i]);
        return -1;
    }
    return 0;
}

static int parse_args(ts_cli *cli, int argc, char **argv)
{
    int i, rc = TS_EXIT_OK, r;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            cli->cmd = TS_CMD_HELP;
            return TS_EXIT_OK;
        }
        if (!strcmp(a, "--version")) {
            cli->cmd = TS_CMD_VERSION;
            return TS_EXIT_OK;
        }
        r = parse_common(cli, argc, argv, &i, &rc);
        if (r < 0)
            return rc;
        if (r > 0)
            continue;

        if (cli->cmd == TS_CMD_NONE) {
            if (a[0] == '-')
                return usage_error("unknown option '%s' (a command comes first)", a);
            cli->cmd = parse_cmd(a);
            if (cli->cmd == TS_CMD_NONE)
                return usage_error("unknown command '%s'", a);
            continue;
        }

        if (!strcmp(a, "--json") &&
            (cli->cmd == TS_CMD_ESTIMATE || cli->cmd == TS_CMD_CHECK ||
             cli->cmd == TS_CMD_SEARCH ||
             cli->cmd == TS_CMD_PRESETS || cli->cmd == TS_CMD_GPUS)) {
            cli->json = true;
            continue;
        }
        if (!strcmp(a, "--formulas") && cli->cmd == TS_CMD_ESTIMATE) {
            cli->formulas = true;
            continue;
        }
        if (!strcmp(a, "--ready") && cli->cmd == TS_CMD_HEALTH) {
            cli->ready = true;
            continue;
        }
        if (cli->cmd == TS_CMD_CHECK) {
            char cerr[256];

            switch (ts_check_parse_option(argc, argv, &i, &cli->check, cerr, sizeof cerr)) {
            case 1:
                continue;
            case -1:
                return usage_error("%s", cerr);
            default:
                break;
            }
            if (a[0] != '-') {
                if (ts_check_add_file(&cli->check, a, cerr, sizeof cerr) != 0)
                    return usage_error("%s", cerr);
                continue;
            }
        }
        if (cli->cmd == TS_CMD_ESTIMATE || cli->cmd == TS_CMD_CHECK ||
            cli->cmd == TS_CMD_SEARCH) {
            ts_cli_error err;
            switch (ts_cli_parse_run_option(argc, argv, &i, cli->run, &err)) {
            case TS_CLI_OK:
                continue;
            case TS_CLI_EUSAGE:
                return usage_error("%s", err.text);
            case TS_CLI_ENOMEM:
                fprintf(stderr, "trainsize: out of memory\n");
                return TS_EXIT_UNREACHABLE;
            case TS_CLI_NOMATCH:
                break;
            }
        }
        if (a[0] == '-')
            return usage_error("unknown option '%s'", a);
        return usage_error("unexpected argument '%s'", a);
    }
    if (cli->cmd == TS_CMD_NONE)
        return usage_error("%s", "no command given");
    return TS_EXIT_OK;
}

/* One request; on success *answer is the parsed 2xx JSON.  Otherwise the
 * failure is printed and the exit code returned. */
static int call(const ts_cli *cli, const char *method, const char *path,
                const char *body, json_t **answer, char **raw)
{
    ts_http_client c = {cli->url, 0, cli->timeout_ms};
    ts_http_response resp;
    ts_http_error err;
    json_error_t jerr;
    json_t *j;

    *answer = NULL;
    if (raw)
        *raw = NULL;
    if (ts_http_request(&c, method, path, body, &resp, &err) != TS_HTTP_OK) {
        fprintf(stderr, "trainsize: %s\n", err.text);
        return TS_EXIT_UNREACHABLE;
    }
    j = json_loadb(resp.body, resp.len, 0, &jerr);
    if (resp.status < 200 || resp.status > 299) {
        if (j && ts_http_is_problem(&resp))
            ts_report_problem(stderr, j, resp.status);
        else
            fprintf(stderr, "error: server answered HTTP %ld for %s %s\n",
                    resp.status, method, path);
        json_decref(j);
        ts_http_response_free(&resp);
        return TS_EXIT_SERVER;
    }
    if (!j || !json_is_object(j)) {
        fprintf(stderr, "trainsize: %s%s is not a trainsize server: invalid JSON (%s)\n",
                cli->url, path, j ? "not an object" : jerr.text);
        json_decref(j);
        ts_http_response_free(&resp);
        return TS_EXIT_UNREACHABLE;
    }
    *answer = j;
    if (raw)
        *raw = resp.body; /* ownership moves to the caller */
    else
        ts_http_response_free(&resp);
    return TS_EXIT_OK;
}

static void print_raw(const char *raw)
{
    size_t n = strlen(raw);
    fputs(raw, stdout);
    if (n == 0 || raw[n - 1] != '\n')
        fputc('\n', stdout);
}

static int cmd_estimate(const ts_cli *cli, bool check_only)
{
    char *body = json_dumps(cli->run, JSON_COMPACT);
    char *raw = NULL;
    json_t *a = NULL;
    bool fits = false;
    int rc;

    if (!body) {
        fprintf(stderr, "trainsize: out of memory\n");
        return TS_EXIT_UNREACHABLE;
    }
    /* check only needs the memory estimate; it is cheaper than a plan */
    rc = call(cli, "POST", check_only ? "/v1/memory" : "/v1/plan", body, &a, &raw);
    free(body);
    if (rc != TS_EXIT_OK)
        return rc;

    if (check_only) {
        if (!ts_report_check(cli->json ? stderr : stdout, a, &fits)) {
            rc = TS_EXIT_UNREACHABLE;
        } else {
            if (cli->json)
                print_raw(raw);
            rc = fits ? TS_EXIT_OK : TS_EXIT_NO;
        }
    } else if (cli->json) {
        print_raw(raw);
    } else {
        ts_report_plan(stdout, a, cli->formulas);
    }
    free(raw);
    json_decref(a);
    return rc;
}

/* Ranked layouts; exit 1 when nothing fits (like check). */
static int cmd_search(const ts_cli *cli)
{
    char *body = json_dumps(cli->run, JSON_COMPACT);
    char *raw = NULL;
    json_t *a = NULL;
    int rc;

    if (!body) {
        fprintf(stderr, "trainsize: out of memory\n");
        return TS_EXIT_UNREACHABLE;
    }
    rc = call(cli, "POST", "/v1/search", body, &a, &raw);
    free(body);
    if (rc != TS_EXIT_OK)
        return rc;
    if (cli->json)
        print_raw(raw);
    else
        ts_report_search(stdout, a);
    rc = json_is_true(ts_report_get(a, "found")) ? TS_EXIT_OK : TS_EXIT_NO;
    free(raw);
    json_decref(a);
    return rc;
}

static int cmd_list(const ts_cli *cli, const char *path,
                    void (*report)(FILE *, const json_t *))
{
    char *raw = NULL;
    json_t *a = NULL;
    int rc = call(cli, "GET", path, NULL, &a, &raw);

    if (rc != TS_EXIT_OK)
        return rc;
    if (cli->json)
        print_raw(raw);
    else
        report(stdout, a);
    free(raw);
    json_decref(a);
    return TS_EXIT_OK;
}

/* One probe: 2xx = pass.  Any failure is "unhealthy" (exit 1), which is what
 * Docker's HEALTHCHECK and shell scripts expect. */
static bool probe(const ts_cli *cli, const char *path)
{
    ts_http_client c = {cli->url, 0, cli->timeout_ms};
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

int main(int argc, char **argv)
{
    ts_cli cli;
    int rc;

    memset(&cli, 0, sizeof cli);
    default_url(cli.url, sizeof cli.url);
    cli.run = json_object();
    if (!cli.run) {
        fprintf(stderr, "trainsize: out of memory\n");
        return TS_EXIT_UNREACHABLE;
    }

    rc = parse_args(&cli, argc, argv);
    if (rc != TS_EXIT_OK || cli.cmd == TS_CMD_HELP || cli.cmd == TS_CMD_VERSION) {
        if (rc == TS_EXIT_OK && cli.cmd == TS_CMD_HELP)
            usage(stdout);
        else if (rc == TS_EXIT_OK)
            printf("trainsize %s\n", TS_CLI_VERSION);
        json_decref(cli.run);
        return rc;
    }
    if (!ts_http_url_ok(cli.url)) {
        rc = usage_error("server URL must be http:// or https://, got '%s'", cli.url);
        json_decref(cli.run);
        return rc;
    }
    if (!ts_http_global_init()) {
        fprintf(stderr, "trainsize: cannot initialise libcurl\n");
        json_decref(cli.run);
        return TS_EXIT_UNREACHABLE;
    }

    switch (cli.cmd) {
    case TS_CMD_ESTIMATE: rc = cmd_estimate(&cli, false); break;
    case TS_CMD_CHECK:
        rc = ts_check_run(&cli.check, cli.url, cli.timeout_ms, cli.run, cli.json,
                          stdout, stderr);
        break;
    case TS_CMD_SEARCH:   rc = cmd_search(&cli); break;
    case TS_CMD_HEALTH:   rc = cmd_health(&cli); break;
    case TS_CMD_PRESETS:  rc = cmd_list(&cli, "/v1/presets", ts_report_presets); break;
    case TS_CMD_GPUS:     rc = cmd_list(&cli, "/v1/gpus", ts_report_gpus); break;
    case TS_CMD_NONE:
    case TS_CMD_HELP:
    case TS_CMD_VERSION:  break;
    }

    ts_http_global_cleanup();
    json_decref(cli.run);
    return rc;
}
