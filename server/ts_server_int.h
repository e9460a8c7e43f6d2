/*
 * ts_server_int.h - what the files of the daemon share (not for other
 * modules): the server and request state, the reply, and each file's
 * entry points.
 *
 *   ts_server.c   life cycle: start-up (catalogue, guard, the MHD
 *                 daemon and its options), drain, stop
 *   ts_request.c  the MHD callbacks: a request's state from its URI to
 *                 its completion, header and framing checks, body cap
 *   ts_route.c    routing: the api (on a worker), catalogues, probes,
 *                 metrics, static files
 *   ts_reply.c    responses: headers every answer carries, problem
 *                 answers, queueing
 *   ts_access.c   the access log and MHD's own messages
 *
 * Per request the daemon calls on_request() several times: once when the
 * headers are in (we allocate the request state and check Content-Length),
 * once per body chunk (appended to a capped buffer, or discarded once the
 * cap is crossed), and once with no data, when we answer.  on_completed()
 * then records metrics, writes the access-log line and frees the state.
 * Nothing request-specific lives outside the ts_req hung on the connection.
 */
#ifndef TS_SERVER_INT_H
#define TS_SERVER_INT_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <microhttpd.h>

#include "ts_api.h"
#include "ts_buf.h"
#include "ts_cat.h"
#include "ts_config.h"
#include "ts_guard.h"
#include "ts_memo.h"
#include "ts_metrics.h"
#include "ts_server.h"
#include "ts_static.h"
#include "ts_work.h"

/* libmicrohttpd's per-connection pool: request line, headers, the
 * response head.  0.9.75 zeroes all of it after every request
 * (MHD_pool_reset in memorypool.c), so its size is a per-request
 * memset: 16 KiB (64 KiB cost ~2.5 us of a 7 us GET on loopback).
 * Header fields past ~12 KiB, or 300 tiny ones, get MHD's 431. */
#define CONN_MEMORY_LIMIT (16u * 1024u)
#define LOG_PATH_MAX      200

struct ts_server {
    ts_config cfg;
    struct MHD_Daemon *daemon;
    ts_metrics *metrics;
    char *web_root; /* realpath of cfg.web_root, NULL if missing */
    atomic_bool draining;
    MHD_socket quiesced_fd; /* ours to close after MHD_stop_daemon */
    ts_guard *guard;        /* request deadlines */
    unsigned port;
    char url[96];
    size_t r_livez, r_readyz, r_metrics, r_static, r_other, r_mhd;
    ts_cat cat; /* catalogue answers, read-only once started */
    /* [i][gz][nm]: the 200 (nm 0) and 304 (nm 1) of cat.e[i], identity
     * (gz 0) or gzip (gz 1); NULL: built per request. */
    struct MHD_Response *cat_resp[TS_CAT_MAX][2][2];
    size_t cat_route[TS_CAT_MAX]; /* metrics route of cat.e[i] */
    ts_static_status openapi_st;  /* how reading cfg.openapi at start went */
    ts_memo *memo;                /* recent estimate answers; NULL: off */
    ts_work *work;                /* workers for the api's computing */
};

/* State of one connection (MHD's socket context). */
typedef struct ts_conn {
    ts_guard_conn *gc;  /* NULL if the guard had no memory */
    unsigned requests;  /* requests seen by the URI callback */
    unsigned completed; /* ...and finished through on_completed */
} ts_conn;

/* Where a request handed to the worker pool is. */
typedef enum req_work {
    WORK_NONE = 0,  /* never handed over */
    WORK_QUEUED,    /* suspended: queued or running */
    WORK_DONE,      /* ar/rc filled, connection resumed */
    WORK_CANCELLED, /* the pool stopped first: close */
    WORK_ANSWERED,  /* ar went into a response */
} req_work;

/* State of one request, owned by its connection. */
typedef struct ts_req {
    ts_conn *conn;       /* may be NULL (out of memory at accept) */
    int started;         /* on_request has seen the headers */
    const char *dropped; /* why we closed without an answer, or NULL */
    struct timespec t0;
    ts_buf body;
    int too_big;     /* body crossed the cap: discard the rest */
    int linger;      /* answered before its body: drain it at completion */
    int answered;    /* a response is queued */
    unsigned status; /* 0 until answered */
    size_t bytes;    /* response body length */
    size_t route;    /* metrics route index */
    char method[16];
    char path[LOG_PATH_MAX + 1];
    /* Api work (ts_work.h).  While WORK_QUEUED the connection is
     * suspended: MHD touches neither it nor this request, and the worker
     * alone writes ar and rc, then resumes the connection (MHD's mutex
     * orders those writes before the handler reads them).  api_method,
     * url and ct are MHD's strings, valid until on_completed. */
    ts_work_job job;
    struct MHD_Connection *c;
    req_work work;
    const char *api_method, *url, *ct;
    ts_api_response ar;
    int rc;
    bool memo; /* remember a 200 under key */
    ts_memo_key key;
} ts_req;

/* One response before MHD has it. */
typedef struct ts_reply {
    unsigned status;
    const char *content_type;
    char *body;
    size_t len;
    enum MHD_ResponseMemoryMode mode;
    const char *allow;
    const char *cache_control;
    const char *etag;
    const char *csp;         /* NULL: the api's (ts_reply.c) */
    const char *encoding;    /* Content-Encoding, NULL: identity */
    const char *vary;        /* Vary, NULL: none */
    const char *retry_after; /* Retry-After, NULL: none */
    int close;               /* send "Connection: close" and close */
} ts_reply;

/* ---- ts_reply.c ---- */

/* The dashboard's Content-Security-Policy (ts_reply.csp). */
extern const char ts_reply_csp_dashboard[];
int ts_reply_headers(ts_server *s, struct MHD_Response *resp, const ts_reply *r);
void ts_reply_answered(ts_req *rq, unsigned status, size_t len);
enum MHD_Result ts_reply_queue_keep(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                    const ts_reply *r, struct MHD_Response **keep);
enum MHD_Result ts_reply_queue(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                               const ts_reply *r);
enum MHD_Result ts_reply_api_keep(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                  ts_api_response *ar, int rc, const char *allow,
                                  struct MHD_Response **keep);
enum MHD_Result ts_reply_api(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                             ts_api_response *ar, int rc, const char *allow);
enum MHD_Result ts_reply_problem(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                 ts_problem slug, const char *detail, const char *allow);
enum MHD_Result ts_reply_problem_close(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                       ts_problem slug, const char *detail);
enum MHD_Result ts_reply_busy(ts_server *s, struct MHD_Connection *c, ts_req *rq);
enum MHD_Result ts_reply_too_big(ts_server *s, struct MHD_Connection *c, ts_req *rq);
enum MHD_Result ts_reply_not_found(ts_server *s, struct MHD_Connection *c, ts_req *rq);
enum MHD_Result ts_reply_const(ts_server *s, struct MHD_Connection *c, ts_req *rq, unsigned status,
                               const char *body, size_t len);
ts_reply ts_reply_cat(const ts_cat_entry *e, bool not_modified, bool gz);

/* ---- ts_route.c ---- */

/* Answer a request whose headers and body are in. */
enum MHD_Result ts_route_dispatch(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                  const char *url, const char *method);
/* Back on MHD's thread after a worker resumed the connection. */
enum MHD_Result ts_route_work_answer(ts_server *s, struct MHD_Connection *c, ts_req *rq);
/* Metrics route of a request answered before dispatch (413, framing). */
size_t ts_route_of(ts_server *s, const char *url);

/* ---- ts_request.c: the MHD callbacks (cls is the ts_server) ---- */

void *ts_request_on_uri(void *cls, const char *uri, struct MHD_Connection *c);
enum MHD_Result ts_request_on_request(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls);
void ts_request_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                             enum MHD_RequestTerminationCode toe);
void ts_request_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                              enum MHD_ConnectionNotificationCode toe);
void ts_request_on_expired(void *cls, bool pressure);
size_t ts_request_unescape(void *cls, struct MHD_Connection *c, char *uri);

/* ---- ts_access.c ---- */

/* Copy for the log: printable ASCII only, truncated. */
void ts_access_printable(char *dst, size_t cap, const char *src);
/* rq's line (method, path, status, bytes, microseconds, notes). */
void ts_access_request(const ts_req *rq, uint64_t ns, enum MHD_RequestTerminationCode toe);
/* A connection shut before its request line was in. */
void ts_access_deadline(void);
/* MHD's error log (cls is the ts_server): every answer MHD builds by
 * itself is counted and logged here. */
void ts_access_mhd_log(void *cls, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 0)))
#endif
    ;

#endif /* TS_SERVER_INT_H */
