/*
 * ts_server.c - libmicrohttpd front end for the /v1 api: start-up, drain
 * and stop (ts_server.h).  The request callbacks are in ts_request.c,
 * routing in ts_route.c, responses in ts_reply.c, the access log in
 * ts_access.c (the map: ts_server_int.h).
 *
 * The catalogue answers (ts_cat.h) are built once at start, with their
 * MHD responses (200 and 304): a GET of one queues the same response
 * object every time (MHD counts its references), no copy, no headers
 * rebuilt.
 */
#include "ts_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ts_server_int.h"

#ifndef TS_VERSION
#define TS_VERSION "unknown"
#endif

/* How often the watchdog looks at deadlines: the close lands within one
 * tick of the deadline. */
#define GUARD_TICK_MS 100u
/* Under pressure (3/4 of --max-conns open) a request gets this long. */
#define PRESSURE_MS 1000u

static void server_free(ts_server *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < TS_CAT_MAX; i++)
        for (size_t gz = 0; gz < 2; gz++)
            for (size_t nm = 0; nm < 2; nm++)
                if (s->cat_resp[i][gz][nm] != NULL)
                    MHD_destroy_response(s->cat_resp[i][gz][nm]);
    ts_work_free(s->work);
    ts_memo_free(s->memo);
    ts_cat_free(&s->cat);
    ts_guard_free(s->guard);
    ts_metrics_free(s->metrics);
    free(s->web_root);
    free(s);
}

/* The metrics and the route labels the daemon itself answers under. */
static int start_metrics(ts_server *s)
{
    s->metrics = ts_metrics_new(ts_api_routes(), TS_VERSION);
    if (s->metrics == NULL)
        return -1;
    s->r_livez = ts_metrics_route(s->metrics, "/livez");
    s->r_readyz = ts_metrics_route(s->metrics, "/readyz");
    s->r_metrics = ts_metrics_route(s->metrics, "/metrics");
    s->r_static = ts_metrics_route(s->metrics, "static");
    s->r_other = ts_metrics_route(s->metrics, "other");
    s->r_mhd = ts_metrics_route(s->metrics, "mhd");
    return 0;
}

/* The MHD responses of catalogue entry i, each coding, 200 and 304;
 * left NULL when MHD has no memory: built per request then. */
static void cat_responses(ts_server *s, size_t i)
{
    const ts_cat_entry *e = &s->cat.e[i];

    s->cat_route[i] = e->file ? s->r_static : ts_metrics_route(s->metrics, e->path);
    for (size_t gz = 0; gz < (e->gz != NULL ? 2u : 1u); gz++)
        for (size_t nm = 0; nm < 2; nm++) {
            ts_reply r = ts_reply_cat(e, nm, gz);
            struct MHD_Response *resp = MHD_create_response_from_buffer(r.len, r.body, r.mode);

            if (resp != NULL && !ts_reply_headers(s, resp, &r)) {
                MHD_destroy_response(resp);
                resp = NULL;
            }
            s->cat_resp[i][gz][nm] = resp;
        }
}

/* The catalogue answers and the OpenAPI document, read once. */
static int start_catalogue(ts_server *s)
{
    const char *path = s->cfg.openapi;

    if (ts_cat_build(&s->cat) != TS_CAT_OK)
        return -1;
    s->openapi_st = ts_cat_add_file(&s->cat, "/openapi.json", path);
    if (s->openapi_st == TS_STATIC_NOMEM)
        return -1;
    if (s->openapi_st != TS_STATIC_OK)
        fprintf(stderr,
                "trainsize-server: OpenAPI document '%s' %s; GET /openapi.json "
                "will answer %s\n",
                path, s->openapi_st == TS_STATIC_TOOBIG ? "is too large" : "not found",
                s->openapi_st == TS_STATIC_TOOBIG ? "500" : "404");
    for (size_t i = 0; i < s->cat.n; i++)
        cat_responses(s, i);
    return 0;
}

/* The request deadlines: with 3/4 of the connection slots taken, a
 * request still arriving after PRESSURE_MS is cut, so slots go to
 * clients that send. */
static int start_guard(ts_server *s)
{
    const ts_config *cfg = &s->cfg;
    unsigned pressure_conns = cfg->max_conns - cfg->max_conns / 4;
    unsigned pressure_ms =
        cfg->request_timeout_ms < PRESSURE_MS ? cfg->request_timeout_ms : PRESSURE_MS;

    s->guard = ts_guard_new(GUARD_TICK_MS, pressure_conns, pressure_ms, ts_request_on_expired, s);
    return s->guard != NULL ? 0 : -1;
}

/* The listening address; MHD's IPv6 flag when it is one. */
static unsigned listen_addr(const ts_config *cfg, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (strchr(cfg->bind, ':') != NULL) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)cfg->port);
        inet_pton(AF_INET6, cfg->bind, &a->sin6_addr);
        return MHD_USE_IPv6;
    }
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)cfg->port);
    inet_pton(AF_INET, cfg->bind, &a->sin_addr);
    return 0;
}

/* The MHD daemon with our callbacks and limits; 0 when it listens. */
static int start_daemon(ts_server *s)
{
    const ts_config *cfg = &s->cfg;
    struct sockaddr_storage ss;
    /* Suspend/resume: api work leaves MHD's threads for ts_work's. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                     MHD_ALLOW_SUSPEND_RESUME;

    /* poll, never epoll.  In epoll mode MHD_quiesce_daemon (our drain)
     * takes the listen fd out of the epoll set while the polling thread
     * may be doing the same, and MHD panics (abort) when its removal
     * fails: in a thread pool quiesce itself does not tolerate the race
     * (libmicrohttpd 0.9.75 daemon.c 5527-5531, unchanged in 1.0.1: CI's
     * fresh-root stage aborted twice, "Failed to remove listen FD from
     * epoll set"), and with one thread the polling loop's second removal
     * (daemon.c 4965-4976) can read the flag quiesce has not cleared yet.
     * In poll mode quiesce only sets a flag and wakes the threads through
     * their inter-thread channel: nothing to race (docs/performance.md). */
    flags |= MHD_USE_POLL;
    flags |= listen_addr(cfg, &ss);
    /* MHD_OPTION_ARRAY so that the pool size can be left out for one
     * thread: MHD warns at every start about a pool of size 0. */
    struct MHD_OptionItem opts[] = {
        /* First, so that MHD's own option errors use it too. */
        { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)(uintptr_t)ts_access_mhd_log, s },
        { MHD_OPTION_SOCK_ADDR, 0, &ss },
        { MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)cfg->timeout_s, NULL },
        { MHD_OPTION_CONNECTION_LIMIT, (intptr_t)cfg->max_conns, NULL },
        { MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)cfg->per_ip, NULL },
        { MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)CONN_MEMORY_LIMIT, NULL },
        { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)(uintptr_t)ts_request_on_completed, s },
        { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)(uintptr_t)ts_request_on_connection, s },
        { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)(uintptr_t)ts_request_on_uri, s },
        { MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)(uintptr_t)ts_request_unescape, NULL },
#if MHD_VERSION >= 0x01000000
        /* 1.0 can be strict where 0.9.75 cannot: level 1 ("suitable for
         * highly loaded public servers", microhttpd.h) rejects obsolete
         * line folding, bare LF and whitespace before the colon. */
        { MHD_OPTION_CLIENT_DISCIPLINE_LVL, 1, NULL },
#endif
        { cfg->io_threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END,
          (intptr_t)cfg->io_threads, NULL },
        { MHD_OPTION_END, 0, NULL },
    };
    s->daemon = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, ts_request_on_request, s,
                                 MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (s->daemon == NULL)
        return -1;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info != NULL ? info->port : cfg->port;
    snprintf(s->url, sizeof s->url, (flags & MHD_USE_IPv6) ? "http://[%s]:%u" : "http://%s:%u",
             cfg->bind, s->port);
    return 0;
}

ts_server_status ts_server_start(const ts_config *cfg, ts_server **out, char err[TS_SERVER_ERR_LEN])
{
    ts_server_status st = TS_SERVER_ENOMEM;
    const char *why = "out of memory";
    ts_server *s = calloc(1, sizeof *s);

    *out = NULL;
    err[0] = '\0';
    if (s == NULL)
        goto fail;
    s->cfg = *cfg;
    s->quiesced_fd = MHD_INVALID_SOCKET;
    atomic_init(&s->draining, false);
    if (start_metrics(s) != 0)
        goto fail;
    /* 64 KiB a slot: several times a plan answer (16 KB), so the byte
     * cap only bites when many kept answers are unusually large. */
    if (cfg->answer_cache > 0 &&
        (s->memo = ts_memo_new(cfg->answer_cache, (size_t)cfg->answer_cache * 64u * 1024u)) == NULL)
        goto fail;
    if (ts_work_new(cfg->threads, cfg->queue_max, &s->work) != TS_WORK_OK) {
        why = "out of memory (worker threads)";
        goto fail;
    }
    if (start_catalogue(s) != 0 || start_guard(s) != 0)
        goto fail;
    s->web_root = ts_static_root(cfg->web_root);
    if (s->web_root == NULL)
        fprintf(stderr,
                "trainsize-server: web root '%s' not found; the dashboard "
                "(GET /) will answer 404\n",
                cfg->web_root);
    if (start_daemon(s) != 0) {
        st = TS_SERVER_EBIND;
        why = NULL;
        snprintf(err, TS_SERVER_ERR_LEN, "cannot listen on %s port %u (in use, or no permission)",
                 cfg->bind, cfg->port);
        goto fail;
    }
    *out = s;
    return TS_SERVER_OK;
fail:
    if (why != NULL)
        snprintf(err, TS_SERVER_ERR_LEN, "%s", why);
    server_free(s);
    return st;
}

unsigned ts_server_port(const ts_server *s)
{
    return s->port;
}

const char *ts_server_url(const ts_server *s)
{
    return s->url;
}

void ts_server_drain(ts_server *s)
{
    if (atomic_exchange(&s->draining, true))
        return;
    /* Quiescing only takes the socket out of MHD's poll sets: the kernel
     * would go on completing handshakes into the backlog, and those
     * clients would hang until exit and then be reset.  shutdown() on a
     * listening socket stops it listening (Linux: new SYNs are refused,
     * queued connections reset) while the fd stays ours, so no worker
     * can see it reused; it is closed after MHD_stop_daemon. */
    s->quiesced_fd = MHD_quiesce_daemon(s->daemon);
    if (s->quiesced_fd != MHD_INVALID_SOCKET)
        shutdown(s->quiesced_fd, SHUT_RDWR);
}

bool ts_server_wait_idle(ts_server *s, unsigned timeout_ms)
{
    const struct timespec tick = { 0, 5 * 1000 * 1000 };
    for (unsigned waited = 0; ts_metrics_inflight(s->metrics) > 0; waited += 5) {
        if (waited >= timeout_ms)
            return false;
        nanosleep(&tick, NULL);
    }
    return true;
}

void ts_server_stop(ts_server *s)
{
    if (s == NULL)
        return;
    /* Workers first: the requests they hold belong to connections that
     * MHD_stop_daemon frees, and it must find none suspended (an API
     * violation in 0.9.75, MHD_stop_daemon's comment): running jobs
     * finish and resume theirs, waiting ones are cancelled (resumed and
     * closed). */
    ts_work_stop(s->work);
    MHD_stop_daemon(s->daemon);
    /* Only now: worker threads may touch the socket until they stop. */
    if (s->quiesced_fd != MHD_INVALID_SOCKET)
        close(s->quiesced_fd);
    server_free(s);
}
