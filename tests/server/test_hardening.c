/*
 * test_hardening.c - issue 14: slow clients, oversized chunked uploads,
 * draining, requests libmicrohttpd would hold unanswered, request
 * smuggling framings, MHD's own answers in the metrics, non-regular files
 * in the web root, and the security headers.
 *
 * Each test drives the real trainsize-server binary over 127.0.0.1 with
 * raw sockets (the misbehaviour is the point, libcurl would not produce
 * it).  Slow cases run their own server with deadlines of 1-2 s, so the
 * whole file runs in about 15 s.  Every test here but test_obs_fold
 * failed against the server before issue 14's fixes; test_obs_fold pins
 * what libmicrohttpd 0.9.75 does (it unfolds, with no hook to refuse).
 */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <microhttpd.h>

#include "th_file.h"
#include "th_harness.h"
#include "ts_api.h"

/* Send raw bytes on a fresh connection and read the answer until the
 * server closes or timeout_ms passes.  *closed_ms is how long until EOF
 * (or reset), -1 if the connection was still open at the timeout. */
static size_t exchange(unsigned port, const char *req, size_t len, char *buf, size_t cap,
                       unsigned timeout_ms, double *closed_ms)
{
    int fd = th_connect(port);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(th_send_all(fd, req, len), 0);
    double t0 = th_now_ms();
    size_t got = 0;
    *closed_ms = -1;
    buf[0] = '\0';
    while (got + 1 < cap) {
        int left = (int)(t0 + timeout_ms - th_now_ms());
        struct pollfd pf = { fd, POLLIN, 0 };
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            break;
        ssize_t n = recv(fd, buf + got, cap - 1 - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            *closed_ms = th_now_ms() - t0;
            break;
        }
        got += (size_t)n;
        buf[got] = '\0';
    }
    close(fd);
    return got;
}

/* A raw answer carries the problem of this slug with the one title the
 * problem-type table (api/ts_problem.c) gives it. */
static void assert_problem_of(const char *buf, const char *slug)
{
    char want[192];
    const char *title = ts_api_problem_title(slug);

    ck_assert_msg(title != NULL, "%s is not in the problem table", slug);
    snprintf(want, sizeof want, "\"type\":\"https://trainsize.dev/problems/%s\",\"title\":\"%s\"",
             slug, title);
    ck_assert_msg(strstr(buf, want) != NULL, "no %s in %.400s", want, buf);
}

/* ------------------------------------------------------------------ */
/* 1. slowloris                                                        */
/* ------------------------------------------------------------------ */

#define SLOW_CONNS 4

START_TEST(test_slowloris)
{
    /* Idle timeout 30 s: trickling one byte every 200 ms keeps MHD's
     * idle clock at zero, so only the 1 s request deadline can act. */
    th_server s;
    const char *const args[] = { "--request-timeout", "1", "--timeout", "30", "--per-ip", "5",
                                 "--threads",         "2", NULL };
    ck_assert_int_eq(th_start(&s, args), 0);
    int fd[SLOW_CONNS];
    double closed_at[SLOW_CONNS];
    const char *head = "GET /livez HTTP/1.1\r\nHost: t\r\nX-Slow: ";
    for (int i = 0; i < SLOW_CONNS; i++) {
        fd[i] = th_connect(s.port);
        ck_assert_int_ge(fd[i], 0);
        ck_assert_int_eq(th_send_all(fd[i], head, strlen(head)), 0);
        closed_at[i] = -1;
    }
    double t0 = th_now_ms();
    int open = SLOW_CONNS, served_meanwhile = 0;
    while (open > 0 && th_now_ms() - t0 < 5000) {
        th_sleep_ms(200);
        for (int i = 0; i < SLOW_CONNS; i++) {
            if (closed_at[i] >= 0)
                continue;
            struct pollfd pf = { fd[i], POLLIN, 0 };
            char c;
            int gone = poll(&pf, 1, 0) > 0 && recv(fd[i], &c, 1, 0) <= 0;
            if (!gone)
                gone = send(fd[i], "a", 1, MSG_NOSIGNAL) != 1;
            if (gone) {
                closed_at[i] = th_now_ms() - t0;
                open--;
            }
        }
        /* The fifth slot of this address still serves others. */
        if (!served_meanwhile && open == SLOW_CONNS) {
            th_req rq = { .path = "/livez" };
            th_resp r;
            th_http(s.port, &rq, &r);
            served_meanwhile = r.status == 200;
            th_resp_free(&r);
        }
    }
    for (int i = 0; i < SLOW_CONNS; i++) {
        close(fd[i]);
        /* Deadline 1 s after accept, watchdog tick 100 ms, our own poll
         * every 200 ms: closed between ~0.8 s and 2 s after the start. */
        ck_assert_msg(closed_at[i] >= 600 && closed_at[i] < 2500,
                      "slow connection %d closed at %.0f ms", i, closed_at[i]);
    }
    ck_assert(served_meanwhile);
    /* Everyone else is served afterwards, and the closes are counted. */
    th_req rq = { .path = "/livez" };
    th_resp r;
    th_http(s.port, &rq, &r);
    ck_assert_int_eq(r.status, 200);
    th_resp_free(&r);
    ck_assert_double_eq(
        th_scrape(s.port, NULL, "trainsize_connections_closed_total{reason=\"request_timeout\"}"),
        SLOW_CONNS);
    ck_assert_int_eq(th_stop(&s, 20000), 0);
}
END_TEST

/* A flood: as many slow connections as --max-conns.  Before, nobody got
 * in until they gave up; now, with 3/4 of the slots taken, a request
 * still arriving after 1 s is cut, although the deadline is 30 s. */
#define FLOOD_CONNS    8
#define FLOOD_PRESSURE 6 /* 3/4 of --max-conns 8 */

START_TEST(test_connection_flood)
{
    th_server s;
    const char *const args[] = { "--max-conns", "8",         "--request-timeout",
                                 "30",          "--timeout", "30",
                                 "--threads",   "2",         NULL };
    ck_assert_int_eq(th_start(&s, args), 0);
    int fd[FLOOD_CONNS];
    const char *head = "POST /v1/memory HTTP/1.1\r\nHost: t\r\nX-Slow: ";
    for (int i = 0; i < FLOOD_CONNS; i++) {
        fd[i] = th_connect(s.port);
        ck_assert_int_ge(fd[i], 0);
        ck_assert_int_eq(th_send_all(fd[i], head, strlen(head)), 0);
    }
    double t0 = th_now_ms(), served_at = -1, settled = -1;
    int open = FLOOD_CONNS;
    /* Pressure lasts while 3/4 of the slots (6) are taken: on a busy
     * machine the eight are armed over more than one 100 ms tick, and
     * once enough are cut the rest are below the pressure line and keep
     * their 30 s deadline, which is the point (new clients get in).
     * Poll until relieved, then a little longer to catch a last tick. */
    while (th_now_ms() - t0 < 5000 && (settled < 0 || th_now_ms() - settled < 400) && open > 0) {
        th_sleep_ms(200);
        for (int i = 0; i < FLOOD_CONNS; i++) {
            if (fd[i] < 0)
                continue;
            struct pollfd pf = { fd[i], POLLIN, 0 };
            char c;
            if ((poll(&pf, 1, 0) > 0 && recv(fd[i], &c, 1, 0) <= 0) ||
                send(fd[i], "a", 1, MSG_NOSIGNAL) != 1) {
                close(fd[i]);
                fd[i] = -1;
                open--;
            }
        }
        if (settled < 0 && open < FLOOD_PRESSURE && served_at >= 0)
            settled = th_now_ms();
        if (served_at < 0) {
            th_req rq = { .path = "/livez" };
            th_resp r;
            th_http(s.port, &rq, &r);
            if (r.status == 200)
                served_at = th_now_ms() - t0;
            th_resp_free(&r);
        }
    }
    for (int i = 0; i < FLOOD_CONNS; i++)
        if (fd[i] >= 0)
            close(fd[i]);
    ck_assert_msg(open < FLOOD_PRESSURE, "%d flood connections still open after 5 s", open);
    /* Cut at ~1 s (+ a 100 ms tick, + our 200 ms polling). */
    ck_assert_msg(served_at >= 0 && served_at < 2500,
                  "a normal request got through only at %.0f ms", served_at);
    ck_assert_double_eq(
        th_scrape(s.port, NULL, "trainsize_connections_closed_total{reason=\"overload\"}"),
        FLOOD_CONNS - open);
    ck_assert_int_eq(th_stop(&s, 20000), 0);
}
END_TEST

/* A slow body (headers in, body trickling) meets the same deadline, and a
 * kept-alive connection gets a fresh deadline per request. */
START_TEST(test_slow_body_and_keepalive)
{
    th_server s;
    const char *const args[] = { "--request-timeout", "2", "--timeout", "30",
                                 "--io-threads",      "1", NULL };
    ck_assert_int_eq(th_start(&s, args), 0);

    /* Three quick requests on one connection over ~3 s: each one well
     * inside its own deadline, the sum beyond one. */
    int fd = th_connect(s.port);
    ck_assert_int_ge(fd, 0);
    for (int i = 0; i < 3; i++) {
        const char *rq = "GET /livez HTTP/1.1\r\nHost: t\r\n\r\n";
        ck_assert_int_eq(th_send_all(fd, rq, strlen(rq)), 0);
        char buf[2048];
        size_t n = 0;
        while (n == 0 || strstr(buf, "\r\n\r\n") == NULL) {
            struct pollfd pf = { fd, POLLIN, 0 };
            ck_assert_int_gt(poll(&pf, 1, 2000), 0);
            ssize_t k = recv(fd, buf + n, sizeof buf - 1 - n, 0);
            ck_assert_int_gt(k, 0);
            n += (size_t)k;
            buf[n] = '\0';
        }
        ck_assert_msg(strncmp(buf, "HTTP/1.1 200 ", 13) == 0, "%s", buf);
        th_sleep_ms(1000);
    }
    close(fd);

    /* Body: 10 of 100 declared bytes, then a byte every 300 ms. */
    fd = th_connect(s.port);
    ck_assert_int_ge(fd, 0);
    const char *head = "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
                       "Content-Type: application/json\r\n"
                       "Content-Length: 100\r\n\r\n{\"model\": ";
    ck_assert_int_eq(th_send_all(fd, head, strlen(head)), 0);
    double t0 = th_now_ms(), closed = -1;
    while (closed < 0 && th_now_ms() - t0 < 6000) {
        th_sleep_ms(300);
        struct pollfd pf = { fd, POLLIN, 0 };
        char c;
        if ((poll(&pf, 1, 0) > 0 && recv(fd, &c, 1, 0) <= 0) || send(fd, " ", 1, MSG_NOSIGNAL) != 1)
            closed = th_now_ms() - t0;
    }
    close(fd);
    ck_assert_msg(closed >= 1500 && closed < 3500, "closed at %.0f ms", closed);
    ck_assert_int_eq(th_stop(&s, 20000), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* 2. chunked upload over the cap                                      */
/* ------------------------------------------------------------------ */

START_TEST(test_chunked_over_cap_dropped)
{
    int fd = th_connect(th_shared.port);
    ck_assert_int_ge(fd, 0);
    struct timeval tv = { 3, 0 };
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const char *head = "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
                       "Content-Type: application/json\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    ck_assert_int_eq(th_send_all(fd, head, strlen(head)), 0);
    /* 4 KiB chunks, up to 32 MiB: before the fix the server read all of
     * it (and would answer 413 only after the last chunk). */
    static char chunk[4096 + 16];
    int hl = snprintf(chunk, sizeof chunk, "1000\r\n");
    memset(chunk + hl, ' ', 4096);
    memcpy(chunk + hl + 4096, "\r\n", 2);
    size_t clen = (size_t)hl + 4096 + 2, sent = 0;
    const size_t limit = 32u << 20;
    double t0 = th_now_ms();
    while (sent < limit && th_now_ms() - t0 < 10000) {
        if (th_send_all(fd, chunk, clen) != 0)
            break;
        sent += clen;
    }
    close(fd);
    /* Dropped once past the cap (64 KiB); what the kernels buffered on
     * both sides before the reset is at most a few MiB on loopback. */
    ck_assert_msg(sent < 8u << 20, "server read %zu bytes of chunks", sent);
    ck_assert_double_ge(th_scrape(th_shared.port, NULL,
                                  "trainsize_connections_closed_total{reason=\"body_too_large\"}"),
                        1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* 3. draining                                                         */
/* ------------------------------------------------------------------ */

static int connect_errno(unsigned port)
{
    int fd = th_connect(port);
    int e = fd < 0 ? errno : 0;
    if (fd >= 0)
        close(fd);
    return e;
}

START_TEST(test_drain_refuses_new_and_has_deadline)
{
    th_server s;
    /* A 4 s drain: long enough that "refused while the server still
     * waits for the in-flight request" is told apart from "queued until
     * exit" (the bug) without a tight bound on how soon the signal is
     * handled; a loaded 2-core build machine once took 1 s to do it. */
    const char *const args[] = { "--threads", "2", "--drain-timeout", "4", "--request-timeout",
                                 "60",        NULL };
    ck_assert_int_eq(th_start(&s, args), 0);

    /* An in-flight request that never finishes its body. */
    int fd = th_connect(s.port);
    ck_assert_int_ge(fd, 0);
    const char *head = "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
                       "Content-Type: application/json\r\n"
                       "Content-Length: 50\r\n\r\n{";
    ck_assert_int_eq(th_send_all(fd, head, strlen(head)), 0);
    th_sleep_ms(200);

    ck_assert_int_eq(kill(s.pid, SIGTERM), 0);
    double t0 = th_now_ms();
    /* New connections are refused while the drain waits (not queued in
     * the backlog until exit, which is what happened before). */
    int e = 0;
    while (th_now_ms() - t0 < 3000 && (e = connect_errno(s.port)) == 0)
        th_sleep_ms(20);
    double refused = th_now_ms() - t0;
    /* Refused, or reset when the SYN was already queued as the socket
     * stopped listening (see ts_server_drain). */
    ck_assert_msg(e == ECONNREFUSED || e == ECONNRESET, "connect after SIGTERM: %s",
                  e == 0 ? "accepted" : strerror(e));
    ck_assert_msg(th_alive(&s), "refused only at exit, %.0f ms after SIGTERM", refused);

    /* The stuck request gets the 4 s drain deadline, then the server
     * exits 0 by itself. */
    int rc = th_wait(&s, 12000);
    double dt = th_now_ms() - t0;
    close(fd);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(dt >= 3800 && dt < 9000, "exited %.0f ms after SIGTERM", dt);
}
END_TEST

/* ------------------------------------------------------------------ */
/* 4. requests that used to get no answer                              */
/* ------------------------------------------------------------------ */

START_TEST(test_many_query_args_closed)
{
    size_t cap = 1500 * 8 + 128;
    char *req = malloc(cap);
    ck_assert_ptr_nonnull(req);
    size_t n = (size_t)snprintf(req, cap, "GET /livez?");
    for (int i = 0; i < 1500; i++)
        n += (size_t)snprintf(req + n, cap - n, "%sa%d=1", i ? "&" : "", i);
    n += (size_t)snprintf(req + n, cap - n, " HTTP/1.1\r\nHost: t\r\n\r\n");
    char buf[4096];
    double closed;
    exchange(th_shared.port, req, n, buf, sizeof buf, 3000, &closed);
    free(req);
    /* Before: held with no answer until the idle timeout (10 s). */
    ck_assert_msg(closed >= 0 && closed < 1000, "closed after %.0f ms", closed);
    /* 100 arguments are fine (answered). */
    char small[1024];
    n = (size_t)snprintf(small, sizeof small, "GET /livez?");
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(small + n, sizeof small - n, "%s%d", i ? "&" : "", i);
    n += (size_t)snprintf(small + n, sizeof small - n,
                          " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    exchange(th_shared.port, small, n, buf, sizeof buf, 3000, &closed);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 200 ", 13) == 0, "%.200s", buf);
}
END_TEST

START_TEST(test_te_not_chunked_answered)
{
    const char *req = "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
                      "Content-Type: application/json\r\n"
                      "Transfer-Encoding: gzip, chunked\r\n\r\n"
                      "5\r\nhello\r\n0\r\n\r\n";
    char buf[4096];
    double closed;
    exchange(th_shared.port, req, strlen(req), buf, sizeof buf, 3000, &closed);
    /* RFC 9112 6.1: an unknown transfer coding is a 501; and closed. */
    ck_assert_msg(strncmp(buf, "HTTP/1.1 501 ", 13) == 0, "%.300s", buf);
    ck_assert_ptr_nonnull(strstr(buf, "application/problem+json"));
    assert_problem_of(buf, "unsupported-transfer-coding");
    ck_assert_msg(closed >= 0 && closed < 1000, "closed after %.0f ms", closed);
}
END_TEST

/* What cannot be told from a slow client until the deadline (a chunk of
 * 2^63 bytes announced, a TLS ClientHello, a request line that never
 * ends) is closed at the request deadline instead of the idle timeout
 * or never. */
START_TEST(test_unanswerable_closed_at_deadline)
{
    th_server s;
    const char *const args[] = { "--request-timeout", "1", "--timeout", "30",
                                 "--io-threads",      "1", NULL };
    ck_assert_int_eq(th_start(&s, args), 0);
    static const struct {
        const char *name, *bytes;
        size_t len;
    } cases[] = {
        { "chunk 2^63",
          "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
          "Content-Type: application/json\r\n"
          "Transfer-Encoding: chunked\r\n\r\n"
          "8000000000000000\r\nabc",
          0 },
        { "tls hello", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 0 },
        { "bare CR", "GET /livez HTTP/1.1\rHost: t\r\r", 0 },
        { "empty lines", "\r\n\r\n\r\n\r\n\r\n\r\n", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[1024];
        double closed;
        exchange(s.port, cases[i].bytes, strlen(cases[i].bytes), buf, sizeof buf, 4000, &closed);
        ck_assert_msg(closed >= 700 && closed < 2500, "%s: closed after %.0f ms", cases[i].name,
                      closed);
    }
    ck_assert_int_eq(th_stop(&s, 20000), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* 5. request smuggling                                                */
/* ------------------------------------------------------------------ */

START_TEST(test_smuggling_framings)
{
    static const struct {
        const char *name, *req;
    } cases[] = {
        { "two Content-Length",
          "POST /v1/memory HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
          "Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}"
          "GET /livez HTTP/1.1\r\nHost: t\r\n\r\n" },
        { "TE and CL", "POST /v1/memory HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                       "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
                       "0\r\n\r\nGET /livez HTTP/1.1\r\nHost: t\r\n\r\n" },
        { "two TE", "POST /v1/memory HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                    "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "0\r\n\r\n" },
        { "no Host", "GET /livez HTTP/1.1\r\n\r\n" },
        { "two Host", "GET /livez HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[8192];
        double closed;
        exchange(th_shared.port, cases[i].req, strlen(cases[i].req), buf, sizeof buf, 3000,
                 &closed);
        ck_assert_msg(strncmp(buf, "HTTP/1.1 400 ", 13) == 0, "%s: %.300s", cases[i].name, buf);
        ck_assert_msg(strstr(buf, "application/problem+json") != NULL, "%s", cases[i].name);
        assert_problem_of(buf, "malformed-request");
        ck_assert_msg(strstr(buf, "Connection: close") != NULL, "%s: %.300s", cases[i].name, buf);
        /* Closed: the smuggled second request is never answered. */
        ck_assert_msg(closed >= 0 && closed < 1000, "%s: closed after %.0f ms", cases[i].name,
                      closed);
        ck_assert_msg(strstr(buf, "HTTP/1.1 200 ") == NULL, "%s: a second answer: %.600s",
                      cases[i].name, buf);
    }
    /* HTTP/1.0 needs no Host; identical repeated Content-Length is one
     * value (RFC 9110 8.6) and not an error. */
    char buf[4096];
    double closed;
    exchange(th_shared.port, "GET /livez HTTP/1.0\r\n\r\n", 23, buf, sizeof buf, 3000, &closed);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 200 ", 13) == 0, "%.300s", buf);
    const char *same = "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
                       "Content-Type: application/json\r\nConnection: close\r\n"
                       "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}";
    exchange(th_shared.port, same, strlen(same), buf, sizeof buf, 3000, &closed);
    /* the api's own answer to "{}" (400 naming /model), not framing */
    ck_assert_msg(strstr(buf, "\"/model\"") != NULL, "%.400s", buf);
}
END_TEST

START_TEST(test_obs_fold)
{
    const char *req = "GET /livez HTTP/1.1\r\nHost: t\r\nX-A: a\r\n b\r\n"
                      "Connection: close\r\n\r\n";
    char buf[4096];
    double closed;
    exchange(th_shared.port, req, strlen(req), buf, sizeof buf, 3000, &closed);
    /* RFC 9112 5.2: a server MUST reject obs-fold with 400 or replace it
     * with SP.  libmicrohttpd >= 1.0 at discipline level 1 rejects it;
     * 0.9.75 joins the lines by itself (into the field name!), and the
     * layout check of server/ts_http.c sees the moved line (issue 22;
     * before it, this was answered 200). */
    ck_assert_msg(strncmp(buf, "HTTP/1.1 400 ", 13) == 0, "%.300s", buf);
}
END_TEST

/* Issue 22 finding 5: header sections libmicrohttpd 0.9.75 accepts and a
 * proxy in front may read differently.  Each is a 400 problem+json
 * (malformed-request) and the connection is closed, so whatever the
 * client meant by the rest is never parsed. */
/* A literal with NUL bytes in it, and its length. */
#define WITH_LEN(lit) lit, sizeof(lit) - 1

START_TEST(test_header_syntax)
{
    static const struct {
        const char *name, *req;
        size_t len; /* 0: strlen */
    } cases[] = {
        /* RFC 9112 5.1: no whitespace between field name and colon; a
         * proxy that strips it frames by chunks, MHD (which does not
         * know the name "Transfer-Encoding ") by the Content-Length. */
        { "space before colon",
          "POST /v1/memory HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
          "Transfer-Encoding : chunked\r\nContent-Length: 21\r\n\r\n"
          "{\"model\":\"llama3-8b\"}",
          0 },
        { "tab before colon", "GET /livez HTTP/1.1\r\nHost: t\r\nX-A\t: b\r\n\r\n", 0 },
        /* RFC 9110 5.1: a field name is a token */
        { "@ in name", "GET /livez HTTP/1.1\r\nHost: t\r\nX@A: b\r\n\r\n", 0 },
        { "space in name", "GET /livez HTTP/1.1\r\nHost: t\r\nX A: b\r\n\r\n", 0 },
        { "empty name", "GET /livez HTTP/1.1\r\nHost: t\r\n: b\r\n\r\n", 0 },
        { "non-ASCII name", "GET /livez HTTP/1.1\r\nHost: t\r\nX\xc3\xa9: b\r\n\r\n", 0 },
        /* RFC 9112 2.2: whitespace before the first field line */
        { "space before first field", "GET /livez HTTP/1.1\r\n Host: t\r\n\r\n", 0 },
        /* RFC 9112 2.2: bare LF as a line terminator (a MAY accept we
         * refuse: a proxy that does not split there sees other fields) */
        { "bare LF everywhere", "GET /livez HTTP/1.1\nHost: t\nX-A: b\n\n", 0 },
        { "bare LF after request line", "GET /livez HTTP/1.1\nHost: t\r\n\r\n", 0 },
        { "bare LF in the middle", "GET /livez HTTP/1.1\r\nHost: t\nX-A: b\r\n\r\n", 0 },
        { "bare LF on the last field", "GET /livez HTTP/1.1\r\nHost: t\n\r\n", 0 },
        { "bare LF blank line", "GET /livez HTTP/1.1\r\nHost: t\r\n\n", 0 },
        /* RFC 9110 5.5: NUL or CR in a value must be rejected (or
         * replaced by SP, which 0.9.75 does not do) */
        { "NUL in value", WITH_LEN("GET /livez HTTP/1.1\r\nHost: t\r\nX-A: a\0b\r\n\r\n") },
        { "NUL hiding a field",
          WITH_LEN(
              "GET /livez HTTP/1.1\r\nHost: t\r\nX-A: a\0Transfer-Encoding: chunked\r\n\r\n") },
        { "CR in value", "GET /livez HTTP/1.1\r\nHost: t\r\nX-A: a\rb\r\n\r\n", 0 },
        { "control char in value", "GET /livez HTTP/1.1\r\nHost: t\r\nX-A: a\x01b\r\n\r\n", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[8192];
        double closed;
        size_t len = cases[i].len != 0 ? cases[i].len : strlen(cases[i].req);
        exchange(th_shared.port, cases[i].req, len, buf, sizeof buf, 3000, &closed);
        ck_assert_msg(strncmp(buf, "HTTP/1.1 400 ", 13) == 0, "%s: %.300s", cases[i].name, buf);
        ck_assert_msg(strstr(buf, "application/problem+json") != NULL, "%s: %.300s", cases[i].name,
                      buf);
        assert_problem_of(buf, "malformed-request");
        ck_assert_msg(closed >= 0 && closed < 1000, "%s: closed after %.0f ms", cases[i].name,
                      closed);
    }
    /* What stays fine: CRLF throughout, optional whitespace around a
     * value, a tab and obs-text inside one, an empty value, spurious
     * blank lines before the request line (RFC 9112 2.2), HTTP/1.0. */
    static const char *const fine[] = {
        "GET /livez HTTP/1.1\r\nHost: t\r\nX-A:b\r\nConnection: close\r\n\r\n",
        "GET /livez HTTP/1.1\r\nHost: t\r\nX-A:  b c \t \r\nConnection: close\r\n\r\n",
        "GET /livez HTTP/1.1\r\nHost: t\r\nX-A: a\tb \xc3\xa9\r\nConnection: close\r\n\r\n",
        "GET /livez HTTP/1.1\r\nHost: t\r\nX-Empty:\r\nX-B: \r\nConnection: close\r\n\r\n",
        "\r\n\r\nGET /livez HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        "GET /livez HTTP/1.0\r\n\r\n",
        "GET /livez?a=1&b HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
        char buf[4096];
        double closed;
        exchange(th_shared.port, fine[i], strlen(fine[i]), buf, sizeof buf, 3000, &closed);
        ck_assert_msg(strncmp(buf, "HTTP/1.1 200 ", 13) == 0, "fine %zu: %.300s", i, buf);
    }
    /* A body after the header section is not part of it. */
    const char *post = "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
                       "Content-Type: application/json\r\nConnection: close\r\n"
                       "Content-Length: 21\r\n\r\n{\"model\":\"llama3-8b\"}";
    char buf[8192];
    double closed;
    exchange(th_shared.port, post, strlen(post), buf, sizeof buf, 3000, &closed);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 200 ", 13) == 0, "%.300s", buf);
}
END_TEST

/* A malformed Content-Length is refused by libmicrohttpd itself, before
 * any callback of ours: parse_connection_headers() queues its HTML 400,
 * then MHD_connection_handle_idle() overwrites the state it left
 * (HEADERS_SENDING) with HEADERS_PROCESSED and builds the response head
 * a second time (connection.c@v0.9.75, 940041ad78b4; fixed upstream in
 * f1bfbe71, first released in 1.0.0).  Our handler is never called
 * (call_connection_handler() returns at once when a response is set),
 * so a problem+json answer cannot be put in its place.  Pinned: still a
 * 400, the connection closed, counted under route "mhd"; under 0.9.x
 * the status line comes twice. */
START_TEST(test_bad_content_length_mhd)
{
    static const char *const values[] = { "abc", "-1", "+21", "21, 21", "0x15", " " };
    const char *series = "trainsize_http_requests_total{route=\"mhd\",status=\"400\"}";
    double before = th_scrape(th_shared.port, NULL, series);
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char req[512], buf[4096];
        double closed;
        int n = snprintf(req, sizeof req,
                         "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
                         "Content-Type: application/json\r\nContent-Length: %s\r\n\r\n"
                         "{\"model\":\"llama3-8b\"}",
                         values[i]);
        exchange(th_shared.port, req, (size_t)n, buf, sizeof buf, 3000, &closed);
        ck_assert_msg(strncmp(buf, "HTTP/1.1 400 ", 13) == 0, "'%s': %.300s", values[i], buf);
        ck_assert_msg(closed >= 0 && closed < 1000, "'%s': closed after %.0f ms", values[i],
                      closed);
        size_t heads = 0;
        for (const char *p = buf; (p = strstr(p, "HTTP/1.1 400 ")) != NULL; p++)
            heads++;
#if MHD_VERSION >= 0x01000000
        ck_assert_msg(heads == 1, "'%s': %zu status lines", values[i], heads);
#else
        ck_assert_msg(heads == 2, "'%s': %zu status lines (MHD 0.9.75 sends its head twice)",
                      values[i], heads);
#endif
        ck_assert_msg(strstr(buf, "problem+json") == NULL, "'%s': %.300s", values[i], buf);
    }
    ck_assert_double_eq(th_scrape(th_shared.port, NULL, series),
                        before + (double)(sizeof values / sizeof values[0]));
}
END_TEST

/* ------------------------------------------------------------------ */
/* 6. MHD's own answers are counted; our 413 under its route           */
/* ------------------------------------------------------------------ */

START_TEST(test_every_response_counted)
{
    const unsigned port = th_shared.port;
    const char *s505 = "trainsize_http_requests_total{route=\"mhd\",status=\"505\"}";
    const char *s413 = "trainsize_http_requests_total{route=\"/v1/memory\",status=\"413\"}";
    const char *o413 = "trainsize_http_requests_total{route=\"other\",status=\"413\"}";
    double v505 = th_scrape(port, NULL, s505), v413 = th_scrape(port, NULL, s413);
    double w413 = th_scrape(port, NULL, o413);

    /* A version MHD refuses by itself (its HTML page, not ours). */
    char buf[4096];
    double closed;
    exchange(port, "GET /livez HTTP/9.9\r\nHost: t\r\n\r\n", 33, buf, sizeof buf, 3000, &closed);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 505 ", 13) == 0, "%.200s", buf);
    ck_assert_double_eq(th_scrape(port, NULL, s505), v505 + 1);

    /* A declared oversize body: our 413 (the one problem type, api's
     * payload-too-large), counted under /v1/memory and not "other". */
    const char *big = "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
                      "Content-Type: application/json\r\n"
                      "Content-Length: 1000000\r\n\r\n";
    exchange(port, big, strlen(big), buf, sizeof buf, 3000, &closed);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 413 ", 13) == 0, "%.200s", buf);
    assert_problem_of(buf, "payload-too-large");
    ck_assert_double_eq(th_scrape(port, NULL, s413), v413 + 1);
    ck_assert_double_eq(th_scrape(port, NULL, o413), w413);

    /* One off the api paths has no route of its own: "other". */
    const char *big_other = "POST /nope HTTP/1.1\r\nHost: t\r\n"
                            "Content-Length: 1000000\r\n\r\n";
    exchange(port, big_other, strlen(big_other), buf, sizeof buf, 3000, &closed);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 413 ", 13) == 0, "%.200s", buf);
    ck_assert_double_eq(th_scrape(port, NULL, o413), w413 + 1);
    ck_assert_double_eq(th_scrape(port, NULL, s413), v413 + 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* 7. FIFO in the web root                                             */
/* ------------------------------------------------------------------ */

START_TEST(test_fifo_in_web_root)
{
    char dir[] = "/tmp/ts-webroot-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256], idx[256];
    snprintf(path, sizeof path, "%s/pipe.js", dir);
    snprintf(idx, sizeof idx, "%s/index.html", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    th_write_file(idx, NULL, "<!doctype html><title>t</title>\n");

    th_server s;
    const char *const args[] = { "--io-threads", "1", "--web-root", dir, NULL };
    ck_assert_int_eq(th_start(&s, args), 0);
    /* Before: each request opened the FIFO for reading and blocked the
     * only worker; two of them stopped the server. */
    for (int i = 0; i < 2; i++) {
        th_req rq = { .path = "/pipe.js" };
        th_resp r;
        double t0 = th_now_ms();
        th_http(s.port, &rq, &r);
        ck_assert_msg(r.status == 404, "fifo: %ld", r.status);
        ck_assert_msg(th_now_ms() - t0 < 2000, "took %.0f ms", th_now_ms() - t0);
        th_resp_free(&r);
    }
    th_req rq = { .path = "/" };
    th_resp r;
    th_http(s.port, &rq, &r);
    ck_assert_int_eq(r.status, 200);
    th_resp_free(&r);
    ck_assert_int_eq(th_stop(&s, 20000), 0);
    unlink(path);
    unlink(idx);
    rmdir(dir);
}
END_TEST

/* ------------------------------------------------------------------ */
/* 8. no libmicrohttpd warning at start with one thread                */
/* ------------------------------------------------------------------ */

START_TEST(test_one_thread_no_warning)
{
    /* Before: "Warning: Zero size, specified for thread pool size, is
     * ignored" at every start with one libmicrohttpd thread (then
     * --threads 1, now --io-threads 1).  Run the binary with
     * stderr in a file, stop it, and read what MHD said. */
    const char *bin = getenv("TRAINSIZE_SERVER");
    ck_assert_ptr_nonnull(bin);
    char log[] = "/tmp/ts-stderr-XXXXXX";
    int lfd = mkstemp(log);
    ck_assert_int_ge(lfd, 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(lfd, STDERR_FILENO);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDOUT_FILENO);
        execl(bin, bin, "--port", "0", "--io-threads", "1", "--web-root", "/tmp", (char *)NULL);
        _exit(127);
    }
    th_sleep_ms(700);
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char buf[4096];
    ssize_t n = pread(lfd, buf, sizeof buf - 1, 0);
    close(lfd);
    unlink(log);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    ck_assert_msg(strstr(buf, "1 I/O threads") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "mhd:") == NULL, "MHD said: %s", buf);
}
END_TEST

/* ------------------------------------------------------------------ */
/* 10. security headers                                                */
/* ------------------------------------------------------------------ */

START_TEST(test_security_headers)
{
    static const char *const paths[] = { "/", "/index.html", "/v1/gpus", "/livez", "/nope" };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        th_req rq = { .path = paths[i] };
        th_resp r;
        th_http(th_shared.port, &rq, &r);
        char v[512];
        ck_assert_msg(th_header(&r, "Content-Security-Policy", v, sizeof v), "%s: no CSP",
                      paths[i]);
        ck_assert_msg(strstr(v, "frame-ancestors 'none'") != NULL, "%s: %s", paths[i], v);
        /* No inline script or style is allowed anywhere. */
        ck_assert_msg(strstr(v, "unsafe-inline") == NULL, "%s: %s", paths[i], v);
        if (i < 2)
            ck_assert_msg(strstr(v, "default-src 'self'") != NULL, "%s: %s", paths[i], v);
        else
            ck_assert_msg(strstr(v, "default-src 'none'") != NULL, "%s: %s", paths[i], v);
        ck_assert(th_header(&r, "X-Frame-Options", v, sizeof v));
        ck_assert_str_eq(v, "DENY");
        ck_assert(th_header(&r, "Referrer-Policy", v, sizeof v));
        ck_assert_str_eq(v, "no-referrer");
        th_resp_free(&r);
    }
}
END_TEST

static Suite *hardening_suite(void)
{
    Suite *s = suite_create("hardening");

    TCase *shared = tcase_create("shared");
    tcase_add_unchecked_fixture(shared, th_shared_start, th_shared_stop);
    tcase_set_timeout(shared, 30);
    tcase_add_test(shared, test_chunked_over_cap_dropped);
    tcase_add_test(shared, test_many_query_args_closed);
    tcase_add_test(shared, test_te_not_chunked_answered);
    tcase_add_test(shared, test_smuggling_framings);
    tcase_add_test(shared, test_obs_fold);
    tcase_add_test(shared, test_header_syntax);
    tcase_add_test(shared, test_bad_content_length_mhd);
    tcase_add_test(shared, test_every_response_counted);
    tcase_add_test(shared, test_security_headers);
    suite_add_tcase(s, shared);

    TCase *own = tcase_create("own-server");
    tcase_set_timeout(own, 30);
    tcase_add_test(own, test_slowloris);
    tcase_add_test(own, test_slow_body_and_keepalive);
    tcase_add_test(own, test_connection_flood);
    tcase_add_test(own, test_drain_refuses_new_and_has_deadline);
    tcase_add_test(own, test_unanswerable_closed_at_deadline);
    tcase_add_test(own, test_fifo_in_web_root);
    tcase_add_test(own, test_one_thread_no_warning);
    suite_add_tcase(s, own);
    return s;
}

int main(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    SRunner *sr = srunner_create(hardening_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    if (th_shared_bad_exits() > 0)
        fprintf(stderr, "test_hardening: %d shared server(s) exited non-zero\n",
                th_shared_bad_exits());
    return failed == 0 && th_shared_bad_exits() == 0 ? 0 : 1;
}
