/*
 * ts_server.h - the libmicrohttpd daemon: body capping, routing, ops
 * endpoints, static files, metrics and the access log.
 */
#ifndef TS_SERVER_H
#define TS_SERVER_H

#include <stdbool.h>

#include "ts_config.h"

typedef struct ts_server ts_server;

typedef enum ts_server_status {
    TS_SERVER_OK = 0,
    TS_SERVER_EBIND, /* the daemon did not start (port in use, ...) */
    TS_SERVER_ENOMEM
} ts_server_status;

#define TS_SERVER_ERR_LEN 256

/* Start listening.  cfg is copied; its strings must outlive the server. */
ts_server_status ts_server_start(const ts_config *cfg, ts_server **out,
                                 char err[TS_SERVER_ERR_LEN]);

/* The bound port (the real one when cfg->port was 0). */
unsigned ts_server_port(const ts_server *s);

/* "http://127.0.0.1:8080" style base URL. */
const char *ts_server_url(const ts_server *s);

/* Begin graceful shutdown: /readyz turns 503, responses carry
 * "Connection: close" and the listening socket stops accepting. */
void ts_server_drain(ts_server *s);

/* Wait until no request is in flight or timeout_ms passed; returns true
 * when idle. */
bool ts_server_wait_idle(ts_server *s, unsigned timeout_ms);

/* Stop the daemon (closing remaining connections) and free everything. */
void ts_server_stop(ts_server *s);

#endif /* TS_SERVER_H */
