/*
 * ts_config.c - flags and TRAINSIZE_* variables (see ts_config.h).
 *
 * One table drives both sources, so a flag and its variable can never
 * drift apart and the error for either names the same setting.
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
#define CFG_CONNS_MAX 65536u
#define CFG_QUEUE_MAX 65536u

typedef enum cfg_key {
    K_PORT, K_BIND, K_THREADS, K_IO_THREADS, K_QUEUE_MAX, K_BODY_MAX, K_WEB_ROOT, K_OPENAPI,
    K_TIMEOUT, K_REQUEST_TIMEOUT, K_DRAIN_TIMEOUT, K_MAX_CONNS, K_PER_IP, K_ACCESS_LOG, K_ANSWER_CACHE, K_COUNT
} cfg_key;

static const struct cfg_opt {
    const char *flag;
    const char *env;
} cfg_opts[K_COUNT] = {
    [K_PORT] = {"--port", "TRAINSIZE_PORT"},
    [K_BIND] = {"--bind", "TRAINSIZE_BIND"},
    [K_THREADS] = {"--threads", "TRAINSIZE_THREADS"},
    [K_IO_THREADS] = {"--io-threads", "TRAINSIZE_IO_THREADS"},
    [K_QUEUE_MAX] = {"--queue-max", "TRAINSIZE_QUEUE_MAX"},
    [K_BODY_MAX] = {"--body-max", "TRAINSIZE_BODY_MAX"},
    [K_WEB_ROOT] = {"--web-root", "TRAINSIZE_WEB_ROOT"},
    [K_OPENAPI] = {"--openapi", "TRAINSIZE_OPENAPI"},
    [K_TIMEOUT] = {"--timeout", "TRAINSIZE_TIMEOUT"},
    [K_REQUEST_TIMEOUT] = {"--request-timeout", "TRAINSIZE_REQUEST_TIMEOUT"},
    [K_DRAIN_TIMEOUT] = {"--drain-timeout", "TRAINSIZE_DRAIN_TIMEOUT"},
    [K_MAX_CONNS] = {"--max-conns", "TRAINSIZE_MAX_CONNS"},
    [K_PER_IP] = {"--per-ip", "TRAINSIZE_PER_IP"},
    [K_ACCESS_LOG] = {"--access-log", "TRAINSIZE_ACCESS_LOG"},
    [K_ANSWER_CACHE] = {"--answer-cache", "TRAINSIZE_ANSWER_CACHE"},
};

const char *ts_config_usage(void)
{
    return "usage: trainsize-server [options]\n"
           "  --port N        TCP port, 0 = any free port (TRAINSIZE_PORT, 8080)\n"
           "  --bind ADDR     numeric IPv4/IPv6 address (TRAINSIZE_BIND, 127.0.0.1)\n"
           "  --threads N     workers computing api answers: estimate, search,\n"
           "                  fit, plan, import (TRAINSIZE_THREADS, online cores)\n"
           "  --io-threads N  threads reading requests and answering probes,\n"
           "                  metrics, static files and cached answers, never\n"
           "                  held by api work (TRAINSIZE_IO_THREADS, 2)\n"
           "  --queue-max N   api requests that may wait for a busy worker,\n"
           "                  0..65536; past it 503 server-busy with Retry-After\n"
           "                  (TRAINSIZE_QUEUE_MAX, 64)\n"
           "  --body-max N    request body cap in bytes, at most 65536\n"
           "                  (TRAINSIZE_BODY_MAX, 65536)\n"
           "  --web-root DIR  dashboard files (TRAINSIZE_WEB_ROOT, " TS_DEFAULT_WEBROOT ")\n"
           "  --openapi FILE  OpenAPI document (TRAINSIZE_OPENAPI, " TS_DEFAULT_OPENAPI ")\n"
           "  --timeout S     idle connection timeout, seconds (TRAINSIZE_TIMEOUT, 10)\n"
           "  --request-timeout S  a request's headers and body must arrive within\n"
           "                  S seconds of the connection opening or the previous\n"
           "                  response, or the connection is closed\n"
           "                  (TRAINSIZE_REQUEST_TIMEOUT, 15)\n"
           "  --drain-timeout S  after SIGTERM, in-flight requests get S seconds\n"
           "                  (TRAINSIZE_DRAIN_TIMEOUT, 10)\n"
           "  --max-conns N   connection limit (TRAINSIZE_MAX_CONNS, 1024)\n"
           "  --per-ip N      connections per client address (TRAINSIZE_PER_IP, 256)\n"
           "  --access-log B  1 = one log line per request on stderr, 0 = off\n"
           "                  (TRAINSIZE_ACCESS_LOG, 1)\n"
           "  --answer-cache N  estimate answers kept to send again to the same\n"
           "                  request, 0..4096, 0 = off (TRAINSIZE_ANSWER_CACHE, 256)\n"
           "  --help, --version\n"
           "Flags override environment variables.\n";
}

/* Strict unsigned decimal: digits only, no sign, no blanks, in [lo, hi]. */
static int parse_uint(const char *s, unsigned long long lo,
                      unsigned long long hi, unsigned long long *out)
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

static ts_config_status fail(char err[TS_CONFIG_ERR_LEN], cfg_key k,
                             bool from_env, const char *value,
                             const char *why)
{
    snprintf(err, TS_CONFIG_ERR_LEN, "invalid %s '%s': %s",
             from_env ? cfg_opts[k].env : cfg_opts[k].flag, value, why);
    return TS_CONFIG_EINVAL;
}

static ts_config_status set_value(ts_config *cfg, cfg_key k, const char *v,
                                  bool from_env, char err[TS_CONFIG_ERR_LEN])
{
    unsigned long long n = 0;
    switch (k) {
    case K_PORT:
        if (parse_uint(v, 0, 65535, &n) != 0)
            return fail(err, k, from_env, v, "expected an integer 0..65535");
        cfg->port = (unsigned)n;
        break;
    case K_BIND: {
        unsigned char tmp[sizeof(struct in6_addr)];
        if (strlen(v) >= TS_CONFIG_BIND_LEN
            || (inet_pton(AF_INET, v, tmp) != 1
                && inet_pton(AF_INET6, v, tmp) != 1))
            return fail(err, k, from_env, v,
                        "expected a numeric IPv4 or IPv6 address");
        memcpy(cfg->bind, v, strlen(v) + 1);
        break;
    }
    case K_THREADS:
    case K_IO_THREADS:
        if (parse_uint(v, 1, CFG_THREADS_MAX, &n) != 0)
            return fail(err, k, from_env, v, "expected an integer 1..256");
        if (k == K_THREADS)
            cfg->threads = (unsigned)n;
        else
            cfg->io_threads = (unsigned)n;
        break;
    case K_QUEUE_MAX:
        if (parse_uint(v, 0, CFG_QUEUE_MAX, &n) != 0)
            return fail(err, k, from_env, v, "expected an integer 0..65536");
        cfg->queue_max = (unsigned)n;
        break;
    case K_BODY_MAX:
        /* The api layer rejects anything above TS_API_BODY_MAX anyway, so
         * a larger cap would be a lie: refuse it rather than clamp. */
        if (parse_uint(v, 1, TS_API_BODY_MAX, &n) != 0)
            return fail(err, k, from_env, v, "expected an integer 1..65536");
        cfg->body_max = (size_t)n;
        break;
    case K_WEB_ROOT:
    case K_OPENAPI:
        if (*v == '\0' || strlen(v) >= PATH_MAX)
            return fail(err, k, from_env, v, "expected a non-empty path");
        if (k == K_WEB_ROOT)
            cfg->web_root = v;
        else
            cfg->openapi = v;
        break;
    case K_TIMEOUT:
        if (parse_uint(v, 1, CFG_TIMEOUT_MAX, &n) != 0)
            return fail(err, k, from_env, v, "expected seconds 1..3600");
        cfg->timeout_s = (unsigned)n;
        break;
    case K_REQUEST_TIMEOUT:
    case K_DRAIN_TIMEOUT:
        if (parse_uint(v, 1, CFG_TIMEOUT_MAX, &n) != 0)
            return fail(err, k, from_env, v, "expected seconds 1..3600");
        if (k == K_REQUEST_TIMEOUT)
            cfg->request_timeout_ms = (unsigned)n * 1000u;
        else
            cfg->drain_timeout_s = (unsigned)n;
        break;
    case K_MAX_CONNS:
        if (parse_uint(v, 1, CFG_CONNS_MAX, &n) != 0)
            return fail(err, k, from_env, v, "expected an integer 1..65536");
        cfg->max_conns = (unsigned)n;
        break;
    case K_PER_IP:
        if (parse_uint(v, 1, CFG_CONNS_MAX, &n) != 0)
            return fail(err, k, from_env, v, "expected an integer 1..65536");
        cfg->per_ip = (unsigned)n;
        break;
    case K_ACCESS_LOG:
        if (strcmp(v, "0") == 0)
            cfg->access_log = false;
        else if (strcmp(v, "1") == 0)
            cfg->access_log = true;
        else
            return fail(err, k, from_env, v, "expected 0 or 1");
        break;
    case K_ANSWER_CACHE:
        /* 4096 slots x 64 KiB: the cache's byte cap stays under 256 MiB */
        if (parse_uint(v, 0, 4096, &n) != 0)
            return fail(err, k, from_env, v, "expected an integer 0..4096");
        cfg->answer_cache = (unsigned)n;
        break;
    case K_COUNT:
        break;
    }
    return TS_CONFIG_OK;
}

static unsigned online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    return n > (long)CFG_THREADS_MAX ? CFG_THREADS_MAX : (unsigned)n;
}

ts_config_status ts_config_load(ts_config *cfg, int argc, char **argv,
                                ts_config_env_fn env,
                                char err[TS_CONFIG_ERR_LEN])
{
    err[0] = '\0';
    cfg->port = 8080;
    memcpy(cfg->bind, "127.0.0.1", sizeof "127.0.0.1");
    cfg->threads = online_cores();
    /* Two: one slow client's write or a static file read never leaves the
     * probes without a thread, and they are cheap. */
    cfg->io_threads = 2;
    cfg->queue_max = 64;
    cfg->body_max = TS_API_BODY_MAX;
    cfg->web_root = TS_DEFAULT_WEBROOT;
    cfg->openapi = TS_DEFAULT_OPENAPI;
    cfg->timeout_s = 10;
    /* A slow-header/slow-body client (slowloris) resets the idle timeout
     * with every byte; this one does not move.  15 s is ample for a 64 KiB
     * body on any real link and well under nginx's 60 s defaults
     * (client_header_timeout, client_body_timeout). */
    cfg->request_timeout_ms = 15000u;
    cfg->drain_timeout_s = 10;
    cfg->max_conns = 1024;
    cfg->per_ip = 256;
    cfg->access_log = true;
    cfg->answer_cache = 256;

    for (int k = 0; env != NULL && k < K_COUNT; k++) {
        const char *v = env(cfg_opts[k].env);
        if (v == NULL)
            continue;
        ts_config_status st = set_value(cfg, (cfg_key)k, v, true, err);
        if (st != TS_CONFIG_OK)
            return st;
    }

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return TS_CONFIG_HELP;
        if (strcmp(a, "--version") == 0)
            return TS_CONFIG_VERSION;
        int k = 0;
        size_t flen = 0;
        for (; k < K_COUNT; k++) {
            flen = strlen(cfg_opts[k].flag);
            if (strncmp(a, cfg_opts[k].flag, flen) == 0
                && (a[flen] == '\0' || a[flen] == '='))
                break;
        }
        if (k == K_COUNT) {
            snprintf(err, TS_CONFIG_ERR_LEN,
                     "unknown option '%s' (try --help)", a);
            return TS_CONFIG_EINVAL;
        }
        const char *v;
        if (a[flen] == '=') {
            v = a + flen + 1;
        } else if (i + 1 < argc) {
            v = argv[++i];
        } else {
            snprintf(err, TS_CONFIG_ERR_LEN, "option %s needs a value",
                     cfg_opts[k].flag);
            return TS_CONFIG_EINVAL;
        }
        ts_config_status st = set_value(cfg, (cfg_key)k, v, false, err);
        if (st != TS_CONFIG_OK)
            return st;
    }

    return TS_CONFIG_OK;
}
