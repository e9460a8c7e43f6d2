/*
 * ts_request.c - the libmicrohttpd callbacks (ts_server_int.h): a
 * request's state from its URI to its completion.
 *
 * Hardening (issue 14), each closing a hole libmicrohttpd 0.9.75 leaves:
 *  - every connection is on a ts_guard list with a deadline for the whole
 *    request (headers and body), armed when it opens and after each
 *    response; slow clients are shut down past it (slowloris);
 *  - the URI log callback sees the raw request line first: requests MHD
 *    would hold unanswered (a thousand query arguments exhaust its pool
 *    and it then never replies) are closed at once;
 *  - framing that a proxy may read differently (two Content-Lengths,
 *    Transfer-Encoding with Content-Length, a coding other than
 *    "chunked", no Host in HTTP/1.1) is answered 400/501 and closed
 *    (RFC 9112 6.1, 6.3; RFC 9110 7.2);
 *  - a chunked body crossing the cap drops the connection (MHD cannot
 *    queue a response mid-upload);
 *  - an answer sent before the body was read (413, framing) is not
 *    lost to a reset: what the client already sent is read and dropped
 *    before MHD closes (drain_unread);
 *  - responses MHD makes itself are still logged and counted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "ts_http.h"
#include "ts_server_int.h"

/* More query arguments than any route reads (none does today) by far;
 * MHD takes ~48 B of the same pool per argument, on top of the request
 * line, and stalls when the pool runs out (it cannot build its own
 * 431), so we stop well before: at QUERY_ARGS_MAX arguments, or when
 * the URI and QUERY_ARG_COST per argument pass URI_POOL_BUDGET (found:
 * 120 arguments of 70 bytes held a 16 KiB pool). */
#define QUERY_ARGS_MAX  128
#define QUERY_ARG_COST  64u
#define URI_POOL_BUDGET (CONN_MEMORY_LIMIT - 4096u)

/* Bytes drain_unread() reads at most: four bodies at the cap, more than
 * a client sends before it reads our answer, and a bound on the I/O
 * thread's time however fast a client streams. */
#define DRAIN_MAX (4u * TS_API_BODY_MAX)

static uint64_t elapsed_ns(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int64_t ns = (int64_t)(t1.tv_sec - t0->tv_sec) * 1000000000 + (t1.tv_nsec - t0->tv_nsec);
    return ns > 0 ? (uint64_t)ns : 0;
}

static ts_conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci != NULL ? ci->socket_context : NULL;
}

static ts_req *req_new(ts_server *s, struct MHD_Connection *c)
{
    ts_req *rq = calloc(1, sizeof *rq);
    if (rq == NULL)
        return NULL;
    clock_gettime(CLOCK_MONOTONIC, &rq->t0);
    ts_buf_init(&rq->body, s->cfg.body_max);
    rq->route = s->r_other;
    rq->conn = conn_of(c);
    if (rq->conn != NULL)
        rq->conn->requests++;
    ts_metrics_inflight_add(s->metrics, 1);
    return rq;
}

/* Fires first, on the raw request line (before MHD splits the query):
 * the request state starts here so that whatever MHD does next, even
 * answering by itself, ends in on_completed and the log. */
void *ts_request_on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    ts_server *s = cls;
    ts_req *rq = req_new(s, c);
    if (rq == NULL)
        return NULL; /* on_request tries again */
    ts_access_printable(rq->path, sizeof rq->path, uri);
    const char *q = strchr(uri, '?');
    size_t args = 0;
    for (; q != NULL && *q != '\0'; q++)
        args += *q == '&' || *q == ';' || *q == '?';
    bool too_many = args > QUERY_ARGS_MAX;
    if ((too_many || (args > 0 && strlen(uri) + QUERY_ARG_COST * args > URI_POOL_BUDGET)) &&
        rq->conn != NULL) {
        /* MHD would fill its pool, fail to build its own 431 and hold the
         * connection: close it now.  We are on the connection's thread. */
        rq->dropped = too_many ? "too-many-query-args" : "query-over-pool";
        ts_metrics_closed(s->metrics, TS_CLOSE_BAD_REQUEST);
        ts_guard_kill(rq->conn->gc);
    }
    return rq;
}

typedef struct framing {
    unsigned cl;   /* Content-Length fields */
    unsigned te;   /* Transfer-Encoding fields */
    int cl_differ; /* two Content-Length values differ */
    const char *cl_first;
    const char *te_value;
    unsigned host;
} framing;

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    framing *f = cls;
    (void)kind;
    if (value == NULL)
        value = "";
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        if (f->cl++ == 0)
            f->cl_first = value;
        else if (strcmp(value, f->cl_first) != 0)
            f->cl_differ = 1;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        f->te++;
        f->te_value = value;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
        f->host++;
    }
    return MHD_YES;
}

/* Message framing a front proxy could read differently from MHD
 * (request smuggling): RFC 9112 6.3 says such a message must be treated
 * as an error and the connection closed.  NULL when fine; else the
 * detail, and *status the code (501 for an unknown transfer coding,
 * RFC 9112 6.1). */
static const char *bad_framing(struct MHD_Connection *c, const char *version, unsigned *status)
{
    framing f = { 0 };
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_framing, &f);
    *status = MHD_HTTP_BAD_REQUEST;
    if (f.cl_differ)
        return "conflicting Content-Length fields";
    if (f.te > 0 && f.cl > 0)
        return "Transfer-Encoding together with Content-Length";
    if (f.te > 1)
        return "more than one Transfer-Encoding field";
    if (f.te == 1 && strcasecmp(f.te_value, "chunked") != 0) {
        *status = MHD_HTTP_NOT_IMPLEMENTED;
        return "only Transfer-Encoding: chunked is supported";
    }
    /* RFC 9112 3.2: a 1.1 request without exactly one Host is a 400. */
    if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 && f.host != 1)
        return f.host == 0 ? "HTTP/1.1 request without Host" : "more than one Host field";
    return NULL;
}

/* Content-Length over the cap?  MHD has already rejected malformed
 * values with 400, so only the size matters here. */
static int declared_too_big(struct MHD_Connection *c, size_t max)
{
    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl == NULL)
        return 0;
    errno = 0;
    char *end = NULL;
    unsigned long long n = strtoull(cl, &end, 10);
    if (errno == ERANGE)
        return 1;
    return end != cl && n > (unsigned long long)max;
}

/* First call: the headers are in.  Syntax and framing are checked
 * before anything is read, and a declared oversize body is refused. */
static enum MHD_Result headers_in(ts_server *s, struct MHD_Connection *c, ts_req *rq,
                                  const char *url, const char *method, const char *version)
{
    const char *why;
    unsigned status = 0;

    rq->started = 1;
    ts_access_printable(rq->method, sizeof rq->method, method);
    ts_access_printable(rq->path, sizeof rq->path, url);
    rq->route = ts_route_of(s, url);
    if (rq->dropped != NULL)
        return MHD_NO;
    /* Field syntax first: a name MHD did not recognise
     * ("Transfer-Encoding ") would slip past the framing checks. */
    why = ts_http_header_error(c, method, version);
    if (why != NULL)
        return ts_reply_problem_close(s, c, rq, TS_PROB_MALFORMED_REQUEST, why);
    why = bad_framing(c, version, &status);
    if (why != NULL)
        return ts_reply_problem_close(s, c, rq,
                                      status == MHD_HTTP_NOT_IMPLEMENTED
                                          ? TS_PROB_UNSUPPORTED_TRANSFER_CODING
                                          : TS_PROB_MALFORMED_REQUEST,
                                      why);
    if (declared_too_big(c, s->cfg.body_max))
        return ts_reply_too_big(s, c, rq);
    return MHD_YES;
}

/* A body chunk: appended under the cap, ignored once answered. */
static enum MHD_Result body_chunk(ts_server *s, ts_req *rq, const char *data, size_t *size)
{
    if (!rq->too_big && !rq->answered) {
        ts_buf_status st = ts_buf_append(&rq->body, data, *size);
        if (st == TS_BUF_NOMEM)
            return MHD_NO;
        if (st == TS_BUF_FULL) {
            /* Chunked upload past the cap.  MHD 0.9.75 cannot queue
             * a 413 before the whole body is in (MHD_queue_response
             * wants HEADERS_PROCESSED or FULL_REQ_RECEIVED), and
             * reading on would let one client stream for ever:
             * drop the connection. */
            rq->too_big = 1;
            rq->dropped = "body-over-cap";
            ts_buf_free(&rq->body);
            ts_metrics_closed(s->metrics, TS_CLOSE_BODY_TOO_LARGE);
            return MHD_NO;
        }
    }
    *size = 0;
    return MHD_YES;
}

enum MHD_Result ts_request_on_request(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
    ts_server *s = cls;
    ts_req *rq = *con_cls;

    if (rq == NULL) {
        rq = req_new(s, c);
        if (rq == NULL)
            return MHD_NO; /* out of memory: drop the connection */
        *con_cls = rq;
    }
    if (!rq->started)
        return headers_in(s, c, rq, url, method, version);
    if (*upload_data_size != 0)
        return body_chunk(s, rq, upload_data, upload_data_size);
    if (rq->answered)
        return MHD_YES;
    if (rq->work != WORK_NONE)
        return ts_route_work_answer(s, c, rq);
    /* The request is in: from here the time is ours, not the client's. */
    if (rq->conn != NULL)
        ts_guard_arm(rq->conn->gc, 0);
    if (rq->too_big)
        return ts_reply_too_big(s, c, rq);
    return ts_route_dispatch(s, c, rq, url, method);
}

/* Closing a socket with unread bytes sends a reset (RFC 9112 9.6), and
 * a client still sending its body then fails its next send and never
 * reads our answer: curl between its poll and its send reported "Failed
 * sending data to the peer" and no status for 2 of 20,000 POSTs over the
 * cap under load.  MHD 0.9.75 calls on_completed, then shuts down and
 * closes the socket (connection.c MHD_connection_close_ @940041a), so
 * what has arrived is read here, without waiting, and dropped unparsed:
 * the close is a plain FIN, and a byte arriving later draws its reset
 * only after the client's send of it succeeded (curl then polls, and
 * reads our answer before it sends again). */
static void drain_unread(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    char scratch[16384];
    size_t total = 0;

    while (ci != NULL && total < DRAIN_MAX) {
        ssize_t n = recv(ci->connect_fd, scratch, sizeof scratch, MSG_DONTWAIT);
        if (n > 0)
            total += (size_t)n;
        else if (n == 0 || errno != EINTR)
            break;
    }
}

void ts_request_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                             enum MHD_RequestTerminationCode toe)
{
    ts_server *s = cls;
    ts_req *rq = *con_cls;
    if (rq == NULL)
        return;
    uint64_t ns = elapsed_ns(&rq->t0);
    int mhd_made = 0;
    if (rq->status == 0 && rq->dropped == NULL) {
        /* Not ours: MHD answered by itself (bad chunk framing, header
         * pool full...); ts_access_mhd_log() has counted and logged it. */
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
        mhd_made = ci != NULL && ci->http_status != 0;
    }
    if (rq->status != 0)
        ts_metrics_observe(s->metrics, rq->route, rq->status, ns);
    ts_metrics_inflight_add(s->metrics, -1);
    if (rq->conn != NULL) {
        rq->conn->completed++;
        /* The next request on this connection gets a fresh deadline. */
        ts_guard_arm(rq->conn->gc, s->cfg.request_timeout_ms);
    }

    if (rq->linger && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
        drain_unread(c);
    if (s->cfg.access_log && !mhd_made)
        ts_access_request(rq, ns, toe);
    if (rq->work == WORK_DONE)
        ts_api_response_free(&rq->ar); /* closed before it was sent */
    ts_buf_free(&rq->body);
    free(rq);
    *con_cls = NULL;
}

/* Watchdog, lock held: a connection passed its request deadline. */
void ts_request_on_expired(void *cls, bool pressure)
{
    ts_server *s = cls;
    ts_metrics_closed(s->metrics, pressure ? TS_CLOSE_OVERLOAD : TS_CLOSE_REQUEST_TIMEOUT);
}

void ts_request_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                              enum MHD_ConnectionNotificationCode toe)
{
    ts_server *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        ts_conn *k = calloc(1, sizeof *k);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (k != NULL && ci != NULL) {
            k->gc = ts_guard_open(s->guard, ci->connect_fd);
            ts_guard_arm(k->gc, s->cfg.request_timeout_ms);
        }
        *socket_context = k;
        return;
    }
    ts_conn *k = *socket_context;
    if (k == NULL)
        return;
    if (k->requests == k->completed) {
        /* Nothing of ours was open: a slow client shut out before its
         * request line was in.  Counted by ts_request_on_expired; logged here. */
        if (ts_guard_expired(k->gc) && s->cfg.access_log) {
            ts_access_deadline();
        }
    }
    ts_guard_close(s->guard, k->gc);
    free(k);
    *socket_context = NULL;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Percent-decoding that leaves %00..%1F and %7F encoded: a decoded NUL
 * would cut the C string ("/index.html%00.png" -> "/index.html"), so we
 * keep it visible and the static lookup fails with 404. */
size_t ts_request_unescape(void *cls, struct MHD_Connection *c, char *uri)
{
    (void)cls;
    (void)c;
    char *w = uri;
    for (const char *r = uri; *r != '\0';) {
        if (r[0] == '%') {
            int hi = hexval(r[1]);
            int lo = hi >= 0 ? hexval(r[2]) : -1;
            if (lo >= 0) {
                int v = hi * 16 + lo;
                if (v >= 0x20 && v != 0x7f) {
                    *w++ = (char)v;
                    r += 3;
                    continue;
                }
            }
        }
        *w++ = *r++;
    }
    *w = '\0';
    return (size_t)(w - uri);
}
