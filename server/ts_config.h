/*
 * ts_config.h - server settings from command-line flags and environment.
 *
 * Every setting has a flag and a TRAINSIZE_* variable; the flag wins.
 * Invalid values are errors that name the flag (never clamped silently).
 */
#ifndef TS_CONFIG_H
#define TS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum ts_config_status {
    TS_CONFIG_OK = 0,
    TS_CONFIG_HELP,    /* --help: usage wanted, exit 0 */
    TS_CONFIG_VERSION, /* --version: exit 0 */
    TS_CONFIG_EINVAL   /* bad flag or value: message in err, exit 2 */
} ts_config_status;

#define TS_CONFIG_ERR_LEN  256
#define TS_CONFIG_BIND_LEN 64

typedef struct ts_config {
    unsigned port;                 /* 0 = any free port */
    char bind[TS_CONFIG_BIND_LEN]; /* numeric IPv4 or IPv6 address */
    unsigned threads;              /* workers computing api answers (ts_work) */
    unsigned io_threads;           /* libmicrohttpd threads: I/O, cheap routes */
    unsigned queue_max;            /* api requests that may wait for a worker */
    size_t body_max;               /* request body cap, <= TS_API_BODY_MAX */
    const char *web_root;          /* borrowed from argv/env or the default */
    const char *openapi;           /* path of openapi.json, borrowed */
    unsigned timeout_s;            /* idle connection timeout */
    unsigned request_timeout_ms;   /* headers + body must arrive within this
                                  * (flag in seconds; ms for the fuzzer) */
    unsigned drain_timeout_s;      /* SIGTERM: longest wait for in-flight work */
    unsigned max_conns;
    unsigned per_ip;
    bool access_log;
    unsigned answer_cache; /* estimate answers remembered; 0: none */
} ts_config;

/* Look-up for environment variables; main passes getenv, tests a table. */
typedef const char *(*ts_config_env_fn)(const char *name);

/* Fill *cfg from defaults, then env, then argv[1..].  String settings
 * point into argv, the environment or static defaults.  On TS_CONFIG_EINVAL
 * err holds a one-line message. */
ts_config_status ts_config_load(ts_config *cfg, int argc, char **argv, ts_config_env_fn env,
                                char err[TS_CONFIG_ERR_LEN]);

/* The --help text, written from the options table: each option with its
 * range, its variable and its default. */
void ts_config_usage(FILE *out);

#endif /* TS_CONFIG_H */
