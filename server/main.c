/*
 * main.c - trainsize-server entry point: configuration, start-up line,
 * and graceful shutdown.
 *
 * SIGTERM/SIGINT are blocked before the daemon starts, so every MHD
 * thread inherits the mask and only the main thread ever receives them,
 * synchronously, through sigwait().  No signal handler, nothing unsafe.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_config.h"
#include "ts_server.h"

#ifndef TS_VERSION
#define TS_VERSION "unknown"
#endif

static const char *env_lookup(const char *name)
{
    return getenv(name);
}

int main(int argc, char **argv)
{
    ts_config cfg;
    char err[TS_CONFIG_ERR_LEN];
    switch (ts_config_load(&cfg, argc, argv, env_lookup, err)) {
    case TS_CONFIG_OK:
        break;
    case TS_CONFIG_HELP:
        ts_config_usage(stdout);
        return 0;
    case TS_CONFIG_VERSION:
        printf("trainsize-server %s\n", TS_VERSION);
        return 0;
    case TS_CONFIG_EINVAL:
        fprintf(stderr, "trainsize-server: %s\n", err);
        return 2;
    }

    /* MHD sends with MSG_NOSIGNAL; this covers anything else. */
    signal(SIGPIPE, SIG_IGN);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    if (pthread_sigmask(SIG_BLOCK, &stop, NULL) != 0) {
        fprintf(stderr, "trainsize-server: cannot block signals\n");
        return 1;
    }

    ts_server *srv = NULL;
    char serr[TS_SERVER_ERR_LEN];
    if (ts_server_start(&cfg, &srv, serr) != TS_SERVER_OK) {
        fprintf(stderr, "trainsize-server: %s\n", serr);
        return 1;
    }
    /* Tests and scripts read this line to learn the port. */
    printf("listening on %s\n", ts_server_url(srv));
    fflush(stdout);
    fprintf(stderr,
            "trainsize-server %s: %u workers, queue %u, %u I/O threads, "
            "body max %zu, timeout %us, request timeout %us, access log %s\n",
            TS_VERSION, cfg.threads, cfg.queue_max, cfg.io_threads, cfg.body_max, cfg.timeout_s,
            cfg.request_timeout_ms / 1000u, cfg.access_log ? "on" : "off");

    int sig = 0;
    while (sigwait(&stop, &sig) != 0)
        ;
    fprintf(stderr, "trainsize-server: %s, draining\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    /* New connections are refused from here; in-flight requests get
     * --drain-timeout seconds, then MHD_stop_daemon closes them. */
    ts_server_drain(srv);
    if (!ts_server_wait_idle(srv, cfg.drain_timeout_s * 1000u))
        fprintf(stderr,
                "trainsize-server: requests still in flight after "
                "%u s, closing them\n",
                cfg.drain_timeout_s);
    ts_server_stop(srv);
    fprintf(stderr, "trainsize-server: stopped\n");
    return 0;
}
