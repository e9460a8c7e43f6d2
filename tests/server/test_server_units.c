/*
 * test_server_units.c - unit tests of the server's own modules: config
 * parsing, the capped buffer, the metrics registry and static files.
 * No network; expected values are worked out by hand next to each check.
 */
#define _XOPEN_SOURCE 700 /* mkdtemp, symlink */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ts_api.h"
#include "ts_buf.h"
#include "ts_memo.h"
#include "ts_config.h"
#include "ts_guard.h"
#include "ts_gzip.h"
#include "ts_http.h"
#include "ts_metrics.h"
#include "ts_static.h"
#include "th_file.h"

/* ------------------------------------------------------------------ */
/* config                                                              */
/* ------------------------------------------------------------------ */

/* Environment for a test: NAME=value pairs, NULL-terminated. */
static const char *const *g_env;

static const char *fake_env(const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; g_env != NULL && g_env[i] != NULL; i++)
        if (strncmp(g_env[i], name, nl) == 0 && g_env[i][nl] == '=')
            return g_env[i] + nl + 1;
    return NULL;
}

static ts_config_status load(ts_config *cfg, const char *const *args, const char *const *env,
                             char *err)
{
    char *argv[32] = { (char *)"trainsize-server" };
    int argc = 1;
    for (size_t i = 0; args != NULL && args[i] != NULL; i++)
        argv[argc++] = (char *)(uintptr_t)args[i];
    g_env = env;
    return ts_config_load(cfg, argc, argv, fake_env, err);
}

START_TEST(test_config_defaults)
{
    ts_config c;
    char err[TS_CONFIG_ERR_LEN];
    ck_assert_int_eq(load(&c, NULL, NULL, err), TS_CONFIG_OK);
    /* The documented defaults (task brief / --help). */
    ck_assert_uint_eq(c.port, 8080);
    ck_assert_str_eq(c.bind, "127.0.0.1");
    ck_assert_uint_eq(c.body_max, TS_API_BODY_MAX);
    ck_assert_uint_eq(c.timeout_s, 10);
    ck_assert_uint_eq(c.request_timeout_ms, 15000); /* README: 15 s */
    ck_assert_uint_eq(c.drain_timeout_s, 10);
    ck_assert_uint_eq(c.max_conns, 1024);
    ck_assert_uint_eq(c.per_ip, 256);
    ck_assert(c.access_log);
    ck_assert_uint_eq(c.answer_cache, 256); /* --help */
    ck_assert_uint_eq(c.threads, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
    ck_assert_uint_eq(c.io_threads, 2); /* --help */
    ck_assert_uint_eq(c.queue_max, 64); /* --help */
}
END_TEST

START_TEST(test_config_flags_beat_env)
{
    ts_config c;
    char err[TS_CONFIG_ERR_LEN];
    const char *const env[] = { "TRAINSIZE_PORT=9000", "TRAINSIZE_THREADS=3",
                                "TRAINSIZE_BIND=0.0.0.0", "TRAINSIZE_ACCESS_LOG=0", NULL };
    const char *const args[] = { "--port", "9100",   "--timeout=5", "--body-max",
                                 "1024",   "--bind", "::1",         NULL };
    ck_assert_int_eq(load(&c, args, env, err), TS_CONFIG_OK);
    ck_assert_uint_eq(c.port, 9100);   /* flag over env */
    ck_assert_uint_eq(c.threads, 3);   /* env only */
    ck_assert_str_eq(c.bind, "::1");   /* flag over env */
    ck_assert(!c.access_log);          /* env "0" disables */
    ck_assert_uint_eq(c.timeout_s, 5); /* --flag=value form */
    ck_assert_uint_eq(c.body_max, 1024);

    const char *const env2[] = { "TRAINSIZE_REQUEST_TIMEOUT=3", "TRAINSIZE_DRAIN_TIMEOUT=4", NULL };
    ck_assert_int_eq(load(&c, NULL, env2, err), TS_CONFIG_OK);
    ck_assert_uint_eq(c.request_timeout_ms, 3000);
    ck_assert_uint_eq(c.drain_timeout_s, 4);
    const char *const args2[] = { "--request-timeout=7", "--drain-timeout", "1", NULL };
    ck_assert_int_eq(load(&c, args2, env2, err), TS_CONFIG_OK);
    ck_assert_uint_eq(c.request_timeout_ms, 7000); /* flag over env */
    ck_assert_uint_eq(c.drain_timeout_s, 1);

    /* The worker pool's settings, both sources; queue 0 is allowed. */
    const char *const env3[] = { "TRAINSIZE_IO_THREADS=3", "TRAINSIZE_QUEUE_MAX=9", NULL };
    const char *const args3[] = { "--queue-max", "0", NULL };
    ck_assert_int_eq(load(&c, args3, env3, err), TS_CONFIG_OK);
    ck_assert_uint_eq(c.io_threads, 3);
    ck_assert_uint_eq(c.queue_max, 0); /* flag over env */

    const char *const zero[] = { "--port", "0", NULL };
    ck_assert_int_eq(load(&c, zero, NULL, err), TS_CONFIG_OK);
    ck_assert_uint_eq(c.port, 0); /* 0 = pick a free port */
}
END_TEST

START_TEST(test_config_rejects)
{
    static const struct {
        const char *arg, *value, *env, *name; /* name must be in the error */
    } cases[] = {
        { "--port", "65536", NULL, "--port" },
        { "--port", "-1", NULL, "--port" },
        { "--port", "80x", NULL, "--port" },
        { "--port", " 80", NULL, "--port" },
        { "--threads", "0", NULL, "--threads" },
        { "--threads", "257", NULL, "--threads" },
        { "--io-threads", "0", NULL, "--io-threads" },
        { "--io-threads", "257", NULL, "--io-threads" },
        { "--queue-max", "65537", NULL, "--queue-max" },
        { "--queue-max", "-1", NULL, "--queue-max" },
        { NULL, NULL, "TRAINSIZE_QUEUE_MAX=many", "TRAINSIZE_QUEUE_MAX" },
        /* Above TS_API_BODY_MAX would be a silent clamp: refused. */
        { "--body-max", "65537", NULL, "--body-max" },
        { "--body-max", "0", NULL, "--body-max" },
        { "--timeout", "0", NULL, "--timeout" },
        { "--timeout", "ten", NULL, "--timeout" },
        { "--request-timeout", "0", NULL, "--request-timeout" },
        { "--request-timeout", "3601", NULL, "--request-timeout" },
        { "--drain-timeout", "1.5", NULL, "--drain-timeout" },
        { NULL, NULL, "TRAINSIZE_REQUEST_TIMEOUT=", "TRAINSIZE_REQUEST_TIMEOUT" },
        { "--max-conns", "0", NULL, "--max-conns" },
        { "--per-ip", "", NULL, "--per-ip" },
        { "--access-log", "yes", NULL, "--access-log" },
        { "--answer-cache", "4097", NULL, "--answer-cache" },
        { "--answer-cache", "-1", NULL, "--answer-cache" },
        { NULL, NULL, "TRAINSIZE_ANSWER_CACHE=lots", "TRAINSIZE_ANSWER_CACHE" },
        { "--bind", "localhost", NULL, "--bind" },
        { "--web-root", "", NULL, "--web-root" },
        { NULL, NULL, "TRAINSIZE_PORT=http", "TRAINSIZE_PORT" },
        { NULL, NULL, "TRAINSIZE_TIMEOUT=99999", "TRAINSIZE_TIMEOUT" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ts_config c;
        char err[TS_CONFIG_ERR_LEN];
        const char *const args[] = { cases[i].arg, cases[i].value, NULL };
        const char *const env[] = { cases[i].env, NULL };
        ts_config_status st = load(&c, cases[i].arg ? args : NULL, env, err);
        ck_assert_msg(st == TS_CONFIG_EINVAL, "case %zu accepted", i);
        ck_assert_msg(strstr(err, cases[i].name) != NULL, "case %zu: '%s'", i, err);
    }

    ts_config c;
    char err[TS_CONFIG_ERR_LEN];
    const char *const unknown[] = { "--prot", "80", NULL };
    ck_assert_int_eq(load(&c, unknown, NULL, err), TS_CONFIG_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "--prot"));
    const char *const dangling[] = { "--port", NULL };
    ck_assert_int_eq(load(&c, dangling, NULL, err), TS_CONFIG_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "--port"));
    const char *const help[] = { "--help", NULL };
    ck_assert_int_eq(load(&c, help, NULL, err), TS_CONFIG_HELP);
    const char *const version[] = { "--version", NULL };
    ck_assert_int_eq(load(&c, version, NULL, err), TS_CONFIG_VERSION);
}
END_TEST

static bool cfg_same(const ts_config *a, const ts_config *b)
{
    return a->port == b->port && strcmp(a->bind, b->bind) == 0 && a->threads == b->threads &&
           a->io_threads == b->io_threads && a->queue_max == b->queue_max &&
           a->body_max == b->body_max && strcmp(a->web_root, b->web_root) == 0 &&
           strcmp(a->openapi, b->openapi) == 0 && a->timeout_s == b->timeout_s &&
           a->request_timeout_ms == b->request_timeout_ms &&
           a->drain_timeout_s == b->drain_timeout_s && a->max_conns == b->max_conns &&
           a->per_ip == b->per_ip && a->access_log == b->access_log &&
           a->answer_cache == b->answer_cache;
}

static ts_config_status load_flag(ts_config *c, const char *flag, unsigned long long v, char *err)
{
    char num[32];
    snprintf(num, sizeof num, "%llu", v);
    const char *const args[] = { flag, num, NULL };
    return load(c, args, NULL, err);
}

/* One option's --help paragraph "  --flag ARG  help (LO..HI; ENV, DEF)"
 * or "(ENV, DEF)": what it says is what ts_config_load does. */
static void check_usage_option(const char *par)
{
    char flag[48], env[64], def[160], envdef[240], err[TS_CONFIG_ERR_LEN];
    unsigned long long lo = 0, hi = 0;
    ts_config d, c;
    const char *paren = strrchr(par, '(');
    int ranged;

    ck_assert_int_eq(sscanf(par, " %47s", flag), 1);
    ck_assert_msg(paren != NULL && par[strlen(par) - 1] == ')', "%s: no (...) at the end", flag);
    ranged = sscanf(paren, "(%llu..%llu; %63[^,], %159[^)])", &lo, &hi, env, def) == 4;
    ck_assert_msg(ranged || sscanf(paren, "(%63[^,], %159[^)])", env, def) == 2,
                  "%s: unreadable %s", flag, paren);
    ck_assert_int_eq(load(&d, NULL, NULL, err), TS_CONFIG_OK);
    /* the documented default is the loaded one, by flag and by variable */
    if (strcmp(def, "online cores") == 0) {
        ck_assert_uint_eq(d.threads, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
    } else {
        const char *const args[] = { flag, def, NULL };
        ck_assert_msg(load(&c, args, NULL, err) == TS_CONFIG_OK, "%s %s: %s", flag, def, err);
        ck_assert_msg(cfg_same(&c, &d), "%s: the default is not %s", flag, def);
        snprintf(envdef, sizeof envdef, "%s=%s", env, def);
        const char *const envs[] = { envdef, NULL };
        ck_assert_msg(load(&c, NULL, envs, err) == TS_CONFIG_OK, "%s: %s", envdef, err);
        ck_assert_msg(cfg_same(&c, &d), "%s: not the default", envdef);
    }
    if (!ranged)
        return;
    /* the documented range is the enforced one */
    ck_assert_msg(load_flag(&c, flag, lo, err) == TS_CONFIG_OK, "%s %llu refused", flag, lo);
    ck_assert_msg(load_flag(&c, flag, hi, err) == TS_CONFIG_OK, "%s %llu refused", flag, hi);
    ck_assert_msg(load_flag(&c, flag, hi + 1, err) == TS_CONFIG_EINVAL, "%s %llu taken", flag,
                  hi + 1);
    ck_assert_msg(lo == 0 || load_flag(&c, flag, lo - 1, err) == TS_CONFIG_EINVAL, "%s %llu taken",
                  flag, lo - 1);
}

/* Issue 23: --help is written from the options table, so every option
 * is in it with the default and the range the parser applies. */
START_TEST(test_config_usage)
{
    static const char *const flags[] = {
        "--port",          "--bind",      "--threads", "--io-threads", "--queue-max",
        "--body-max",      "--web-root",  "--openapi", "--timeout",    "--request-timeout",
        "--drain-timeout", "--max-conns", "--per-ip",  "--access-log", "--answer-cache",
    };
    char *text = NULL, par[1024] = "";
    size_t len = 0, seen = 0;
    FILE *f = open_memstream(&text, &len);

    ck_assert_ptr_nonnull(f);
    ts_config_usage(f);
    fclose(f);
    for (const char *line = text; line != NULL && *line != '\0';) {
        const char *nl = strchr(line, '\n');
        int n = nl != NULL ? (int)(nl - line) : (int)strlen(line);
        bool more = strncmp(line, "                  ", 18) == 0;

        if (!more && par[0] != '\0') {
            check_usage_option(par);
            par[0] = '\0';
        }
        if (strncmp(line, "  --", 4) == 0 && strncmp(line, "  --help", 8) != 0) {
            ck_assert_msg(seen < sizeof flags / sizeof flags[0] &&
                              strncmp(line + 2, flags[seen], strlen(flags[seen])) == 0 &&
                              line[2 + strlen(flags[seen])] == ' ',
                          "--help line %.*s: expected %s", n, line, flags[seen]);
            seen++;
            snprintf(par, sizeof par, "%.*s", n, line);
        } else if (more && par[0] != '\0') {
            size_t at = strlen(par);
            snprintf(par + at, sizeof par - at, " %.*s", n - 18, line + 18);
        }
        line = nl != NULL ? nl + 1 : NULL;
    }
    ck_assert_uint_eq(seen, sizeof flags / sizeof flags[0]);
    free(text);
}
END_TEST

/* ------------------------------------------------------------------ */
/* buffer                                                              */
/* ------------------------------------------------------------------ */

/* The answer cache's bounds (server/ts_memo.c); serving needs a live
 * connection and is tested over HTTP (test_server.c). */
static struct MHD_Response *fake_answer(size_t len)
{
    static char body[TS_MEMO_ANSWER_MAX + 1];
    return MHD_create_response_from_buffer(len, body, MHD_RESPMEM_PERSISTENT);
}

START_TEST(test_memo_bounds)
{
    static char big[TS_MEMO_KEY_MAX + 1];
    ts_memo_key k1, k2, k3;
    size_t n = 0, bytes = 0;

    ck_assert_ptr_null(ts_memo_new(0, 1024)); /* 0 slots: off */
    /* keys: too large a body is not remembered */
    memset(big, 'x', sizeof big);
    ck_assert_int_eq(ts_memo_key_init(&k1, "/v1/memory", "application/json", big, sizeof big), 0);
    ck_assert_int_eq(ts_memo_key_init(&k1, "/v1/memory", "application/json", big, TS_MEMO_KEY_MAX),
                     1);
    /* the parts' lengths are in the hash: moving a byte across changes it */
    ck_assert_int_eq(ts_memo_key_init(&k1, "/v1/ab", "c", "{}", 2), 1);
    ck_assert_int_eq(ts_memo_key_init(&k2, "/v1/a", "bc", "{}", 2), 1);
    ck_assert(k1.hash != k2.hash);

    /* 3 slots round up to 4; 100 bytes of keys and answers at most */
    ts_memo *m = ts_memo_new(3, 100);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(ts_memo_key_init(&k3, "/v1/x", "t", "{1}", 3), 1);
    ts_memo_put(m, &k1, fake_answer(40), 0, 40);
    ts_memo_stats(m, &n, &bytes);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(bytes, strlen("/v1/ab") + 1 + 2 + 40);
    /* the same key again replaces, never duplicates */
    ts_memo_put(m, &k1, fake_answer(40), 0, 40);
    ts_memo_stats(m, &n, &bytes);
    ck_assert_uint_eq(n, 1);
    /* a second that would pass the byte cap makes room first */
    ts_memo_put(m, &k3, fake_answer(60), 0, 60);
    ts_memo_stats(m, &n, &bytes);
    ck_assert_uint_le(bytes, 100);
    ck_assert_uint_ge(n, 1);
    /* one that can never fit is not kept, and nothing else is lost */
    size_t before = n;
    ts_memo_put(m, &k2, fake_answer(200), 0, 200);
    ts_memo_stats(m, &n, &bytes);
    ck_assert_uint_eq(n, before);
    ck_assert_uint_le(bytes, 100);
    ts_memo_free(m); /* releases every kept response (ASan: no leak) */

    m = ts_memo_new(1, (size_t)1 << 30);
    ck_assert_ptr_nonnull(m);
    ts_memo_put(m, &k1, fake_answer(TS_MEMO_ANSWER_MAX + 1), 0, TS_MEMO_ANSWER_MAX + 1);
    ts_memo_stats(m, &n, &bytes);
    ck_assert_uint_eq(n, 0); /* over the answer cap */
    ts_memo_free(m);
}
END_TEST

START_TEST(test_buf_cap)
{
    ts_buf b;
    ts_buf_init(&b, 10);
    ck_assert_int_eq(ts_buf_append(&b, "12345", 5), TS_BUF_OK);
    ck_assert_int_eq(ts_buf_append(&b, "67890", 5), TS_BUF_OK); /* == cap */
    ck_assert_uint_eq(b.len, 10);
    ck_assert_str_eq(b.data, "1234567890");
    /* One byte over: refused, contents unchanged. */
    ck_assert_int_eq(ts_buf_append(&b, "x", 1), TS_BUF_FULL);
    ck_assert_uint_eq(b.len, 10);
    ck_assert_str_eq(b.data, "1234567890");
    ts_buf_free(&b);

    ts_buf_init(&b, 8);
    ck_assert_int_eq(ts_buf_printf(&b, "%d-%s", 42, "ab"), TS_BUF_OK);
    ck_assert_str_eq(b.data, "42-ab");
    ck_assert_int_eq(ts_buf_printf(&b, "%s", "xyzw"), TS_BUF_FULL); /* 5+4 > 8 */
    size_t len = 0;
    char *s = ts_buf_steal(&b, &len);
    ck_assert_str_eq(s, "42-ab");
    ck_assert_uint_eq(len, 5);
    ck_assert_ptr_null(b.data);
    free(s);
    s = ts_buf_steal(&b, &len); /* empty buffer: "" not NULL */
    ck_assert_str_eq(s, "");
    ck_assert_uint_eq(len, 0);
    free(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* metrics                                                             */
/* ------------------------------------------------------------------ */

START_TEST(test_metrics_render)
{
    static const char *const routes[] = { "GET /v1/gpus", "POST /v1/plan", "GET /v1/plan", NULL };
    ts_metrics *m = ts_metrics_new(routes, "9.9.9");
    ck_assert_ptr_nonnull(m);
    size_t plan = ts_metrics_route(m, "/v1/plan");
    ck_assert_str_eq(ts_metrics_route_label(m, plan), "/v1/plan");
    /* Duplicate paths share one label; unknown labels fall to "other". */
    ck_assert_uint_eq(ts_metrics_route(m, "/v1/nowhere"), ts_metrics_route(m, "other"));
    ck_assert_uint_eq(ts_metrics_route(m, NULL), ts_metrics_route(m, "other"));

    /* 3 requests: 50 us, 1 ms (on a bound: le is inclusive), 3 s. */
    ts_metrics_observe(m, plan, 200, 50000u);
    ts_metrics_observe(m, plan, 200, 1000000u);
    ts_metrics_observe(m, ts_metrics_route(m, "/livez"), 503, 3000000000u);
    ts_metrics_observe(m, plan, 999, 1u); /* no status series, still timed */
    ts_metrics_inflight_add(m, 2);
    ts_metrics_inflight_add(m, -1);

    size_t len = 0;
    char *t = ts_metrics_render(m, NULL, &len);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(len, strlen(t));
    ck_assert_ptr_nonnull(strstr(t, "trainsize_build_info{version=\"9.9.9\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(t, "\ntrainsize_inflight_requests 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "trainsize_http_requests_total{route=\"/v1/plan\",status=\"200\"} 2\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "trainsize_http_requests_total{route=\"/livez\",status=\"503\"} 1\n"));
    ck_assert_ptr_null(strstr(t, "status=\"999\""));
    ck_assert_ptr_null(strstr(t, "route=\"/v1/gpus\"")); /* zero: omitted */
    /* Cumulative: 1 ns and 50 us <= 100 us; 1 ms <= 1 ms; 3 s <= 5 s. */
    ck_assert_ptr_nonnull(
        strstr(t, "trainsize_http_request_duration_seconds_bucket{le=\"0.0001\"} 2\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "trainsize_http_request_duration_seconds_bucket{le=\"0.001\"} 3\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "trainsize_http_request_duration_seconds_bucket{le=\"2.5\"} 3\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "trainsize_http_request_duration_seconds_bucket{le=\"5\"} 4\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "trainsize_http_request_duration_seconds_bucket{le=\"+Inf\"} 4\n"));
    /* Sum: 50000 + 1000000 + 3000000000 + 1 ns = 3.001050001 s. */
    ck_assert_ptr_nonnull(strstr(t, "trainsize_http_request_duration_seconds_sum 3.001050001\n"));
    ck_assert_ptr_nonnull(strstr(t, "trainsize_http_request_duration_seconds_count 4\n"));
    free(t);
    /* Closed connections: every reason rendered (0 too), counted apart
     * from the requests; an out-of-range reason is ignored. */
    ts_metrics_closed(m, TS_CLOSE_REQUEST_TIMEOUT);
    ts_metrics_closed(m, TS_CLOSE_REQUEST_TIMEOUT);
    ts_metrics_closed(m, TS_CLOSE_BODY_TOO_LARGE);
    ts_metrics_closed(m, TS_CLOSE_COUNT);
    ts_work_stats ws = { .workers = 4, .queue_max = 64, .queued = 3, .busy = 4, .rejected = 7 };
    t = ts_metrics_render(m, &ws, &len);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(
        strstr(t, "trainsize_connections_closed_total{reason=\"request_timeout\"} 2\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "trainsize_connections_closed_total{reason=\"body_too_large\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "trainsize_connections_closed_total{reason=\"bad_request\"} 0\n"));
    ck_assert_ptr_nonnull(strstr(t, "trainsize_http_request_duration_seconds_count 4\n"));
    ck_assert_uint_eq(ts_metrics_route(m, "mhd") == ts_metrics_route(m, "other"), 0);
    /* The worker pool's gauges, as given (left out above with NULL). */
    ck_assert_ptr_nonnull(strstr(t, "\ntrainsize_work_queue_depth 3\n"));
    ck_assert_ptr_nonnull(strstr(t, "\ntrainsize_work_busy_workers 4\n"));
    ck_assert_ptr_nonnull(strstr(t, "\ntrainsize_work_workers 4\n"));
    ck_assert_ptr_nonnull(strstr(t, "\ntrainsize_work_queue_max 64\n"));
    ck_assert_ptr_nonnull(strstr(t, "\ntrainsize_work_rejected_total 7\n"));
    free(t);
    ts_metrics_free(m);
}
END_TEST

/* ------------------------------------------------------------------ */
/* static files                                                        */
/* ------------------------------------------------------------------ */

static char g_tmp[64];
static char g_root[128];

/* tmp/secret.txt outside the root, tmp/root/{index.html,app.js,...},
 * tmp/root/sub/index.html, a symlink root/leak -> ../secret.txt, and
 * tmp/root2/secret.txt beside the root with root/sib -> ../root2/secret.txt
 * (its real path starts with the root's text, but is not under it).
 * Names with dots that are not dot-segments: a..b.js, x.., sub/v1..2.css;
 * and ..foo, a dot-file (refused as one, whatever follows the dots). */
static void static_setup(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/ts-static-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_tmp));
    snprintf(g_root, sizeof g_root, "%s/root", g_tmp);
    ck_assert_int_eq(mkdir(g_root, 0700), 0);
    char sub[160];
    snprintf(sub, sizeof sub, "%s/sub", g_root);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    th_write_file(g_tmp, "secret.txt", "secret");
    th_write_file(g_root, "index.html", "<h1>hi</h1>");
    th_write_file(g_root, "app.js", "let a = 1;");
    th_write_file(g_root, "style.css", "b{}");
    th_write_file(g_root, "logo.svg", "<svg/>");
    th_write_file(g_root, "data.json", "{}");
    th_write_file(g_root, "icon.png", "PNG");
    th_write_file(g_root, "favicon.ico", "ICO");
    th_write_file(g_root, "blob.bin", "?");
    th_write_file(g_root, ".env", "TOKEN=x");
    th_write_file(sub, "index.html", "<p>sub</p>");
    th_write_file(g_root, "a..b.js", "let ab = 2;");
    th_write_file(g_root, "x..", "x");
    th_write_file(sub, "v1..2.css", "i{}");
    th_write_file(g_root, "..foo", "dots");
    char link[160];
    snprintf(link, sizeof link, "%s/leak", g_root);
    ck_assert_int_eq(symlink("../secret.txt", link), 0);
    char sib[160];
    snprintf(sib, sizeof sib, "%s/root2", g_tmp);
    ck_assert_int_eq(mkdir(sib, 0700), 0);
    th_write_file(sib, "secret.txt", "sibling");
    snprintf(link, sizeof link, "%s/sib", g_root);
    ck_assert_int_eq(symlink("../root2/secret.txt", link), 0);
}

static void static_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_tmp);
}

/* Accept-Encoding (RFC 9110 12.5.3): does it allow gzip?  "*" stands for
 * every coding the field does not name, so a coding named with q=0 is
 * refused whatever "*" says (issue 22: "gzip;q=0, *" was answered with
 * gzip).  qvalue = "0" ["." 0*3DIGIT] / "1" ["." 0*3"0"] (12.4.2); a
 * weight outside that grammar refuses its coding (identity is always
 * safe to send).  x-gzip is gzip (8.4.1.3). */
START_TEST(test_accept_encoding_table)
{
    static const struct {
        const char *ae;
        bool gzip;
    } cases[] = {
        { NULL, false },
        { "", false },
        { "gzip", true },
        { "GZIP", true },
        { "x-gzip", true },
        { "deflate, x-gzip", true },
        { "br, gzip;q=0.5", true },
        { "gzip;q=1", true },
        { "gzip;q=1.000", true },
        { "gzip;q=0.001", true },
        { "gzip ; q=0.5", true },
        { "gzip;Q=0.5", true },
        { "*", true },
        { "*;q=0.1", true },
        { "br, *", true },
        { "identity", false },
        { "br, deflate", false },
        { "gzipx, br", false },
        { "xgzip", false },
        { "gzip;q=0", false },
        { "gzip;q=0.0", false },
        { "gzip;q=0.000", false },
        { "*;q=0", false },
        { "br, *;q=0", false },
        /* the finding: the explicit refusal wins over "*" */
        { "gzip;q=0, *", false },
        { "*, gzip;q=0", false },
        { "x-gzip;q=0, *", false },
        { "*;q=1, gzip;q=0.000", false },
        /* "*" does not refuse what is named with a weight above 0 */
        { "*;q=0, gzip", true },
        { "gzip;q=0.3, *;q=0", true },
        /* weights outside the grammar refuse their coding */
        { "gzip;q=2", false },
        { "gzip;q=1.5", false },
        { "gzip;q=1.0001", false },
        { "gzip;q=0.0001", false },
        { "gzip;q=.5", false },
        { "gzip;q=-1", false },
        { "gzip;q=", false },
        { "gzip;q=abc", false },
        { "gzip;q=0.5x", false },
        { "gzip;q=abc, *", false },
        /* list syntax: empty elements, blanks, other parameters */
        { " , ,gzip ,", true },
        { "\tgzip\t", true },
        { "gzip;level=9", true },
        { "gzip;level=9;q=0", false },
        { ",,,", false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(ts_gzip_accepted(cases[i].ae) == cases[i].gzip, "'%s': want %s",
                      cases[i].ae != NULL ? cases[i].ae : "(null)",
                      cases[i].gzip ? "gzip" : "identity");
}
END_TEST

/* Field-name and field-value characters (RFC 9110 5.1, 5.5, 5.6.2). */
START_TEST(test_http_chars)
{
    const char *tchars = "!#$%&'*+-.^_`|~09azAZ";
    for (const char *p = tchars; *p != '\0'; p++)
        ck_assert_msg(ts_http_tchar((unsigned char)*p), "'%c'", *p);
    const char *not_t = " \t:;,\"()/<=>?@[\\]{}\x7f\x80\xff";
    for (const char *p = not_t; *p != '\0'; p++)
        ck_assert_msg(!ts_http_tchar((unsigned char)*p), "0x%02x", (unsigned char)*p);
    ck_assert(!ts_http_tchar(0));
    ck_assert(ts_http_value_ok("a b\tc \xc3\xa9 ~", strlen("a b\tc \xc3\xa9 ~")));
    ck_assert(ts_http_value_ok("", 0));
    ck_assert(!ts_http_value_ok("a\0b", 3));
    ck_assert(!ts_http_value_ok("a\rb", 3));
    ck_assert(!ts_http_value_ok("a\nb", 3));
    ck_assert(!ts_http_value_ok("a\x1f", 2));
    ck_assert(!ts_http_value_ok("\x7f", 1));
}
END_TEST

START_TEST(test_static_serve)
{
    static const struct {
        const char *path, *type, *cache, *body;
    } ok[] = {
        { "/", "text/html; charset=utf-8", "no-cache", "<h1>hi</h1>" },
        { "/index.html", "text/html; charset=utf-8", "no-cache", "<h1>hi</h1>" },
        { "/sub/", "text/html; charset=utf-8", "no-cache", "<p>sub</p>" },
        { "/app.js", "text/javascript; charset=utf-8", "max-age=3600", "let a = 1;" },
        { "/style.css", "text/css; charset=utf-8", "max-age=3600", "b{}" },
        { "/logo.svg", "image/svg+xml", "max-age=3600", "<svg/>" },
        { "/data.json", "application/json", "max-age=3600", "{}" },
        { "/icon.png", "image/png", "max-age=3600", "PNG" },
        { "/favicon.ico", "image/x-icon", "max-age=3600", "ICO" },
        { "/blob.bin", "application/octet-stream", "max-age=3600", "?" },
        /* dots inside a name are not a dot-segment */
        { "/a..b.js", "text/javascript; charset=utf-8", "max-age=3600", "let ab = 2;" },
        { "/x..", "application/octet-stream", "max-age=3600", "x" },
        { "/sub/v1..2.css", "text/css; charset=utf-8", "max-age=3600", "i{}" },
    };
    char *root = ts_static_root(g_root);
    ck_assert_ptr_nonnull(root);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ts_static_file f;
        ck_assert_msg(ts_static_load(root, ok[i].path, &f) == TS_STATIC_OK, "%s", ok[i].path);
        ck_assert_str_eq(f.content_type, ok[i].type);
        ck_assert_str_eq(f.cache_control, ok[i].cache);
        ck_assert_uint_eq(f.len, strlen(ok[i].body));
        ck_assert_str_eq(f.data, ok[i].body);
        ck_assert_int_eq(f.etag[0], '"');
        free(f.data);
    }
    free(root);
}
END_TEST

START_TEST(test_static_refuse)
{
    static const char *const bad[] = {
        "/../secret.txt",
        "/sub/../../secret.txt",
        "/sub/..",
        "/..",
        "/sub/../index.html", /* resolves inside the root: refused lexically */
        "/sub/./index.html",
        "/./index.html",
        "/.",
        "/sub/.",
        "/sub/../",
        "/a/../../etc/passwd",
        "/../root2/secret.txt",
        "/leak",  /* symlink resolving outside the root */
        "/sib",   /* .../root2/secret.txt: the root's text as prefix */
        "/..foo", /* a dot-file, though not a dot-segment */
        "/.env",  /* dot-files are never served */
        "/sub",   /* a directory, not a file */
        "/missing.html",
        "relative.html",
        "/a\\b",
        "/index.html%00.png",
        "/x\x01y",
    };
    char *root = ts_static_root(g_root);
    ck_assert_ptr_nonnull(root);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ts_static_file f;
        ck_assert_msg(ts_static_load(root, bad[i], &f) == TS_STATIC_NOTFOUND, "%s was served",
                      bad[i]);
        ck_assert_ptr_null(f.data);
    }
    free(root);
    /* No web root at all: everything is "not found". */
    ts_static_file f;
    ck_assert_int_eq(ts_static_load(NULL, "/", &f), TS_STATIC_NOTFOUND);
    ck_assert_ptr_null(ts_static_root("/nonexistent/trainsize/web"));
}
END_TEST

/* ------------------------------------------------------------------ */
/* guard (request deadlines)                                           */
/* ------------------------------------------------------------------ */

static void count_expired(void *cls, bool pressure)
{
    (*(int *)cls) += pressure ? 100 : 1;
}

/* Is the peer of fd shut down (EOF readable now)? */
static int peer_shut(int fd)
{
    struct pollfd pf = { fd, POLLIN, 0 };
    char c;
    return poll(&pf, 1, 0) > 0 && recv(fd, &c, 1, MSG_DONTWAIT) == 0;
}

START_TEST(test_guard_deadlines)
{
    int expired = 0;
    ts_guard *g = ts_guard_new(10, 0, 0, count_expired, &expired);
    ck_assert_ptr_nonnull(g);
    int a[2], b[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
    ts_guard_conn *ca = ts_guard_open(g, a[0]);
    ts_guard_conn *cb = ts_guard_open(g, b[0]);
    ck_assert_ptr_nonnull(ca);
    ck_assert_ptr_nonnull(cb);
    /* a: 50 ms deadline; b: disarmed after arming (request complete). */
    ts_guard_arm(ca, 50);
    ts_guard_arm(cb, 50);
    ts_guard_arm(cb, 0);
    struct timespec t = { 0, 200 * 1000 * 1000 };
    nanosleep(&t, NULL);
    ck_assert(ts_guard_expired(ca));
    ck_assert(!ts_guard_expired(cb));
    ck_assert(peer_shut(a[1])); /* the watchdog shut a's socket */
    ck_assert(!peer_shut(b[1]));
    ck_assert_int_eq(expired, 1); /* once, not once per tick */
    /* Re-arming far ahead does not fire. */
    ts_guard_arm(cb, 100000);
    nanosleep(&t, NULL);
    ck_assert(!ts_guard_expired(cb));
    ts_guard_kill(cb); /* from the connection's own thread */
    ck_assert(peer_shut(b[1]));
    ts_guard_close(g, ca);
    ts_guard_close(g, cb);
    ts_guard_close(g, NULL); /* no-op */
    ts_guard_free(g);
    for (int i = 0; i < 2; i++) {
        close(a[i]);
        close(b[i]);
    }
}
END_TEST

START_TEST(test_guard_pressure)
{
    /* Two connections, pressure from 2 on after 50 ms: both armed for
     * 100 s are cut at ~50 ms; with one closed first, the other is not. */
    int expired = 0;
    ts_guard *g = ts_guard_new(10, 2, 50, count_expired, &expired);
    ck_assert_ptr_nonnull(g);
    int a[2], b[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
    ts_guard_conn *ca = ts_guard_open(g, a[0]);
    ts_guard_conn *cb = ts_guard_open(g, b[0]);
    ts_guard_arm(ca, 100000);
    ts_guard_arm(cb, 0); /* disarmed: answering, never cut */
    struct timespec t = { 0, 200 * 1000 * 1000 };
    nanosleep(&t, NULL);
    ck_assert(ts_guard_expired(ca));
    ck_assert(!ts_guard_expired(cb));
    ck_assert_int_eq(expired, 100); /* one, flagged as pressure */
    ts_guard_close(g, ca);
    /* Alone now: below the pressure mark, only its deadline counts. */
    ts_guard_arm(cb, 100000);
    nanosleep(&t, NULL);
    ck_assert(!ts_guard_expired(cb));
    ts_guard_close(g, cb);
    ts_guard_free(g);
    for (int i = 0; i < 2; i++) {
        close(a[i]);
        close(b[i]);
    }
}
END_TEST

static Suite *units_suite(void)
{
    Suite *s = suite_create("server-units");
    TCase *cfg = tcase_create("config");
    tcase_add_test(cfg, test_config_defaults);
    tcase_add_test(cfg, test_config_flags_beat_env);
    tcase_add_test(cfg, test_config_rejects);
    tcase_add_test(cfg, test_config_usage);
    suite_add_tcase(s, cfg);

    TCase *misc = tcase_create("buf-metrics");
    tcase_add_test(misc, test_buf_cap);
    tcase_add_test(misc, test_memo_bounds);
    tcase_add_test(misc, test_metrics_render);
    tcase_add_test(misc, test_accept_encoding_table);
    tcase_add_test(misc, test_http_chars);
    tcase_add_test(misc, test_guard_deadlines);
    tcase_add_test(misc, test_guard_pressure);
    suite_add_tcase(s, misc);

    TCase *st = tcase_create("static");
    tcase_add_checked_fixture(st, static_setup, static_teardown);
    tcase_add_test(st, test_static_serve);
    tcase_add_test(st, test_static_refuse);
    suite_add_tcase(s, st);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(units_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
