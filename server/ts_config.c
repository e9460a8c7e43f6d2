/*
 * ts_config.c - flags and TRAINSIZE_* variables (see ts_config.h).
 *
 * One table holds every option: its flag, its variable, its kind and
 * range, where it lands in ts_config, its default and its help.  The
 * defaults, both parsers, the error for a bad value (naming the flag or
 * the variable it came from) and the --help text are all read from it,
 * so a flag, its variable, its default and its documented default can
 * never drift apart.
 */
#include "ts_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ts_api.h"

#ifndef TS_DEFAULT_WEBROOT
#define TS_DEFAULT_WEBROOT "/usr/local/share/trainsize/web"
#endif
#ifndef TS_DEFAULT_OPENAPI
#define TS_DEFAULT_OPENAPI "/usr/local/share/trainsize/openapi.json"
#endif

/* Upper bounds: generous, but they keep arithmetic and MHD sane. */
#define CFG_THREADS_MAX 256u
#define CFG_TIMEOUT_MAX 3600u
#define CFG_CONNS_MAX   65536u
#define CFG_QUEUE_MAX   65536u
/* 4096 slots x 64 KiB: the answer cache's byte cap stays under 256 MiB. */
#define CFG_ANSWER_CACHE_MAX 4096u

/* What a value is and where it goes. */
typedef enum cfg_kind {
    CFG_UINT,    /* unsigned, an integer in [lo, hi] */
    CFG_SIZE,    /* size_t, an integer in [lo, hi] */
    CFG_SECONDS, /* unsigned seconds in [lo, hi] */
    CFG_MS,      /* seconds in [lo, hi], kept as unsigned milliseconds */
    CFG_BOOL,    /* bool, 0 or 1 */
    CFG_ADDR,    /* a numeric IPv4 or IPv6 address into char[TS_CONFIG_BIND_LEN] */
    CFG_PATH     /* a non-empty path, borrowed (const char *) */
} cfg_kind;

typedef struct cfg_opt {
    const char *flag; /* "--port" */
    const char *env;  /* "TRAINSIZE_PORT" */
    const char *arg;  /* the value's name in --help: "N" */
    cfg_kind kind;
    size_t off;                /* offsetof(ts_config, member) */
    unsigned long long lo, hi; /* numbers: the accepted range */
    unsigned long long def;    /* numbers and CFG_BOOL: the default */
    const char *def_str;       /* CFG_ADDR, CFG_PATH: the default */
    unsigned (*def_fn)(void);  /* a default known at run time, or NULL */
    const char *def_text;      /* how --help names def_fn's default */
    const char *help;          /* --help's text, before the range and default */
} cfg_opt;

static unsigned online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    return n > (long)CFG_THREADS_MAX ? CFG_THREADS_MAX : (unsigned)n;
}

#define OFF(m) offsetof(ts_config, m)
static const cfg_opt cfg_opts[] = {
    { "--port", "TRAINSIZE_PORT", "N", CFG_UINT, OFF(port), 0, 65535, 8080, NULL, NULL, NULL,
      "TCP port, 0 = any free port" },
    { "--bind", "TRAINSIZE_BIND", "ADDR", CFG_ADDR, OFF(bind), 0, 0, 0, "127.0.0.1", NULL, NULL,
      "numeric IPv4/IPv6 address" },
    { "--threads", "TRAINSIZE_THREADS", "N", CFG_UINT, OFF(threads), 1, CFG_THREADS_MAX, 0, NULL,
      online_cores, "online cores",
      "workers computing api answers: estimate, search, fit, plan, import" },
    /* Two: one slow client's write or a static file read never leaves the
     * probes without a thread, and they are cheap. */
    { "--io-threads", "TRAINSIZE_IO_THREADS", "N", CFG_UINT, OFF(io_threads), 1, CFG_THREADS_MAX, 2,
      NULL, NULL, NULL,
      "threads reading requests and answering probes, metrics, static files and cached "
      "answers, never held by api work" },
    { "--queue-max", "TRAINSIZE_QUEUE_MAX", "N", CFG_UINT, OFF(queue_max), 0, CFG_QUEUE_MAX, 64,
      NULL, NULL, NULL,
      "api requests that may wait for a busy worker; past it 503 server-busy with Retry-After" },
    /* The api layer rejects anything above TS_API_BODY_MAX anyway, so a
     * larger cap would be a lie: refused rather than clamped. */
    { "--body-max", "TRAINSIZE_BODY_MAX", "N", CFG_SIZE, OFF(body_max), 1, TS_API_BODY_MAX,
      TS_API_BODY_MAX, NULL, NULL, NULL, "request body cap in bytes" },
    { "--web-root", "TRAINSIZE_WEB_ROOT", "DIR", CFG_PATH, OFF(web_root), 0, 0, 0,
      TS_DEFAULT_WEBROOT, NULL, NULL, "dashboard files" },
    { "--openapi", "TRAINSIZE_OPENAPI", "FILE", CFG_PATH, OFF(openapi), 0, 0, 0, TS_DEFAULT_OPENAPI,
      NULL, NULL, "OpenAPI document" },
    { "--timeout", "TRAINSIZE_TIMEOUT", "S", CFG_SECONDS, OFF(timeout_s), 1, CFG_TIMEOUT_MAX, 10,
      NULL, NULL, NULL, "idle connection timeout, seconds" },
    /* A slow-header/slow-body client (slowloris) resets the idle timeout
     * with every byte; this one does not move.  15 s is ample for a 64 KiB
     * body on any real link and well under nginx's 60 s defaults
     * (client_header_timeout, client_body_timeout). */
    { "--request-timeout", "TRAINSIZE_REQUEST_TIMEOUT", "S", CFG_MS, OFF(request_timeout_ms), 1,
      CFG_TIMEOUT_MAX, 15, NULL, NULL, NULL,
      "a request's headers and body must arrive within S seconds of the connection opening "
      "or the previous response, or the connection is closed" },
    { "--drain-timeout", "TRAINSIZE_DRAIN_TIMEOUT", "S", CFG_SECONDS, OFF(drain_timeout_s), 1,
      CFG_TIMEOUT_MAX, 10, NULL, NULL, NULL, "after SIGTERM, in-flight requests get S seconds" },
    { "--max-conns", "TRAINSIZE_MAX_CONNS", "N", CFG_UINT, OFF(max_conns), 1, CFG_CONNS_MAX, 1024,
      NULL, NULL, NULL, "connection limit" },
    { "--per-ip", "TRAINSIZE_PER_IP", "N", CFG_UINT, OFF(per_ip), 1, CFG_CONNS_MAX, 256, NULL, NULL,
      NULL, "connections per client address" },
    { "--access-log", "TRAINSIZE_ACCESS_LOG", "B", CFG_BOOL, OFF(access_log), 0, 1, 1, NULL, NULL,
      NULL, "1 = one log line per request on stderr, 0 = off" },
    { "--answer-cache", "TRAINSIZE_ANSWER_CACHE", "N", CFG_UINT, OFF(answer_cache), 0,
      CFG_ANSWER_CACHE_MAX, 256, NULL, NULL, NULL,
      "estimate answers kept to send again to the same request, 0 = off" },
};
#undef OFF
#define CFG_COUNT (sizeof cfg_opts / sizeof cfg_opts[0])

/* ------------------------------------------------------------------ */
/* --help                                                              */
/* ------------------------------------------------------------------ */

#define HELP_COL   18 /* where the help text starts */
#define HELP_WIDTH 78 /* where it wraps */

/* Marks a space the wrap must not break at (written as a space). */
#define NBSP '\x1f'

/* text from column col, wrapped at spaces to HELP_WIDTH, continued at
 * HELP_COL; ends the line. */
static void usage_wrap(FILE *out, const char *text, size_t col)
{
    while (*text != '\0') {
        size_t room = col < HELP_WIDTH ? HELP_WIDTH - col : 1;
        size_t n = strlen(text);

        if (n > room) {
            size_t cut = room;
            while (cut > 0 && text[cut] != ' ')
                cut--;
            n = cut > 0 ? cut : strcspn(text, " ");
        }
        for (size_t i = 0; i < n; i++)
            fputc(text[i] == NBSP ? ' ' : text[i], out);
        text += n;
        while (*text == ' ')
            text++;
        if (*text != '\0') {
            fprintf(out, "\n%*s", HELP_COL, "");
            col = HELP_COL;
        }
    }
    fputc('\n', out);
}

/* s with its spaces made unbreakable from the first one at or after
 * from; and " = " everywhere ("0 = off" stays on one line). */
static void usage_glue(char *s, size_t from)
{
    for (size_t i = 0; s[i] != '\0'; i++)
        if (s[i] == ' ' && (i >= from || s[i + 1] == '=' || (i > 0 && s[i - 1] == '=')))
            s[i] = NBSP;
}

/* One option: flag and argument, then its help with the range, the
 * variable and the default, all from the table; the parenthesis is
 * kept whole on one line. */
static void usage_option(FILE *out, const cfg_opt *o)
{
    char text[512], def[160];
    int col;

    if (o->def_str != NULL)
        snprintf(def, sizeof def, "%s", o->def_str);
    else if (o->def_fn != NULL)
        snprintf(def, sizeof def, "%s", o->def_text);
    else
        snprintf(def, sizeof def, "%llu", o->def);
    if (o->kind == CFG_UINT || o->kind == CFG_SIZE || o->kind == CFG_SECONDS || o->kind == CFG_MS)
        snprintf(text, sizeof text, "%s (%llu..%llu; %s, %s)", o->help, o->lo, o->hi, o->env, def);
    else
        snprintf(text, sizeof text, "%s (%s, %s)", o->help, o->env, def);
    usage_glue(text, strlen(o->help) + 1);
    col = fprintf(out, "  %s %s", o->flag, o->arg);
    if (col < 0)
        return;
    fprintf(out, "%*s", col + 2 <= HELP_COL ? HELP_COL - col : 2, "");
    usage_wrap(out, text, col + 2 <= HELP_COL ? HELP_COL : (size_t)col + 2);
}

void ts_config_usage(FILE *out)
{
    fputs("usage: trainsize-server [options]\n", out);
    for (size_t k = 0; k < CFG_COUNT; k++)
        usage_option(out, &cfg_opts[k]);
    fputs("  --help, --version\n"
          "Flags override environment variables.\n",
          out);
}

/* ------------------------------------------------------------------ */
/* Values                                                              */
/* ------------------------------------------------------------------ */

/* Strict unsigned decimal: digits only, no sign, no blanks, in [lo, hi]. */
static int parse_uint(const char *s, unsigned long long lo, unsigned long long hi,
                      unsigned long long *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* The error for a bad value, naming where it came from. */
static ts_config_status invalid(char err[TS_CONFIG_ERR_LEN], const cfg_opt *o, bool from_env,
                                const char *value)
{
    char why[96];

    switch (o->kind) {
    case CFG_SECONDS:
    case CFG_MS:
        snprintf(why, sizeof why, "expected seconds %llu..%llu", o->lo, o->hi);
        break;
    case CFG_BOOL:
        snprintf(why, sizeof why, "expected 0 or 1");
        break;
    case CFG_ADDR:
        snprintf(why, sizeof why, "expected a numeric IPv4 or IPv6 address");
        break;
    case CFG_PATH:
        snprintf(why, sizeof why, "expected a non-empty path");
        break;
    case CFG_UINT:
    case CFG_SIZE:
    default:
        snprintf(why, sizeof why, "expected an integer %llu..%llu", o->lo, o->hi);
        break;
    }
    snprintf(err, TS_CONFIG_ERR_LEN, "invalid %s '%s': %s", from_env ? o->env : o->flag, value,
             why);
    return TS_CONFIG_EINVAL;
}

/* Store n (a number in range) as o's member. */
static void store_number(ts_config *cfg, const cfg_opt *o, unsigned long long n)
{
    char *m = (char *)cfg + o->off;

    switch (o->kind) {
    case CFG_SIZE:
        *(size_t *)(void *)m = (size_t)n;
        break;
    case CFG_MS:
        *(unsigned *)(void *)m = (unsigned)n * 1000u;
        break;
    case CFG_BOOL:
        *(bool *)(void *)m = n != 0;
        break;
    case CFG_UINT:
    case CFG_SECONDS:
    default:
        *(unsigned *)(void *)m = (unsigned)n;
        break;
    }
}

static ts_config_status set_value(ts_config *cfg, const cfg_opt *o, const char *v, bool from_env,
                                  char err[TS_CONFIG_ERR_LEN])
{
    char *m = (char *)cfg + o->off;
    unsigned long long n = 0;
    unsigned char tmp[sizeof(struct in6_addr)];

    switch (o->kind) {
    case CFG_ADDR:
        if (strlen(v) >= TS_CONFIG_BIND_LEN ||
            (inet_pton(AF_INET, v, tmp) != 1 && inet_pton(AF_INET6, v, tmp) != 1))
            return invalid(err, o, from_env, v);
        memcpy(m, v, strlen(v) + 1);
        return TS_CONFIG_OK;
    case CFG_PATH:
        if (*v == '\0' || strlen(v) >= PATH_MAX)
            return invalid(err, o, from_env, v);
        *(const char **)(void *)m = v;
        return TS_CONFIG_OK;
    case CFG_BOOL:
        /* only the two words: "yes" or "2" is a mistake to report */
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return invalid(err, o, from_env, v);
        break;
    default:
        break;
    }
    if (parse_uint(v, o->lo, o->hi, &n) != 0)
        return invalid(err, o, from_env, v);
    store_number(cfg, o, n);
    return TS_CONFIG_OK;
}

/* Every option's default, from the table. */
static void set_defaults(ts_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t k = 0; k < CFG_COUNT; k++) {
        const cfg_opt *o = &cfg_opts[k];
        char *m = (char *)cfg + o->off;

        if (o->kind == CFG_ADDR)
            snprintf(m, TS_CONFIG_BIND_LEN, "%s", o->def_str);
        else if (o->kind == CFG_PATH)
            *(const char **)(void *)m = o->def_str;
        else
            store_number(cfg, o, o->def_fn != NULL ? o->def_fn() : o->def);
    }
}

/* The option a flag names ("--port" or "--port=80"), NULL if none;
 * *flen is the flag's length. */
static const cfg_opt *find_flag(const char *a, size_t *flen)
{
    for (size_t k = 0; k < CFG_COUNT; k++) {
        *flen = strlen(cfg_opts[k].flag);
        if (strncmp(a, cfg_opts[k].flag, *flen) == 0 && (a[*flen] == '\0' || a[*flen] == '='))
            return &cfg_opts[k];
    }
    return NULL;
}

static ts_config_status load_args(ts_config *cfg, int argc, char **argv,
                                  char err[TS_CONFIG_ERR_LEN])
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        size_t flen = 0;
        const cfg_opt *o;
        ts_config_status st;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return TS_CONFIG_HELP;
        if (strcmp(a, "--version") == 0)
            return TS_CONFIG_VERSION;
        o = find_flag(a, &flen);
        if (o == NULL) {
            snprintf(err, TS_CONFIG_ERR_LEN, "unknown option '%s' (try --help)", a);
            return TS_CONFIG_EINVAL;
        }
        if (a[flen] == '=') {
            v = a + flen + 1;
        } else if (i + 1 < argc) {
            v = argv[++i];
        } else {
            snprintf(err, TS_CONFIG_ERR_LEN, "option %s needs a value", o->flag);
            return TS_CONFIG_EINVAL;
        }
        st = set_value(cfg, o, v, false, err);
        if (st != TS_CONFIG_OK)
            return st;
    }
    return TS_CONFIG_OK;
}

ts_config_status ts_config_load(ts_config *cfg, int argc, char **argv, ts_config_env_fn env,
                                char err[TS_CONFIG_ERR_LEN])
{
    err[0] = '\0';
    set_defaults(cfg);
    for (size_t k = 0; env != NULL && k < CFG_COUNT; k++) {
        const char *v = env(cfg_opts[k].env);
        ts_config_status st;

        if (v == NULL)
            continue;
        st = set_value(cfg, &cfg_opts[k], v, true, err);
        if (st != TS_CONFIG_OK)
            return st;
    }
    return load_args(cfg, argc, argv, err);
}
