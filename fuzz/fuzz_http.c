/*
 * fuzz_http.c - libFuzzer target for the HTTP layer: raw request bytes
 * into the real daemon.
 *
 * One trainsize server (server/ts_server.c over libmicrohttpd, one I/O
 * thread and one api worker, a 250 ms request deadline, the repository's web root) is
 * started in-process on 127.0.0.1 at the first input.  Each input is
 * written to a fresh loopback connection, the write side is shut (the
 * server sees the end of the stream, so nothing waits for a deadline),
 * and the answer is read to EOF.  Everything the server runs is
 * instrumented and under ASan/UBSan, across its threads.  Invariants:
 *   - the server answers or closes within 3 s (nothing is held;
 *     anything unanswered is closed by the 250 ms request deadline);
 *   - an answer starts with "HTTP/1.x NNN " and is never a 500 (bad
 *     input is a 4xx, or a 501/503/505 for a framing we do not speak);
 *   - the server still answers GET /livez after every input.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ts_config.h"
#include "ts_server.h"

#ifndef TS_FUZZ_WEBROOT
#define TS_FUZZ_WEBROOT "web"
#endif
#ifndef TS_FUZZ_OPENAPI
#define TS_FUZZ_OPENAPI "api/openapi.json"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ts_server *g_srv;
static unsigned g_port;

static void start(void)
{
    ts_config cfg;
    char err[TS_CONFIG_ERR_LEN];
    char *argv[] = { (char *)"fuzz_http", NULL };
    if (ts_config_load(&cfg, 1, argv, NULL, err) != TS_CONFIG_OK)
        abort();
    cfg.port = 0;
    cfg.threads = 1;
    cfg.io_threads = 1;
    cfg.access_log = false;
    cfg.request_timeout_ms = 250;
    cfg.timeout_s = 2;
    cfg.web_root = TS_FUZZ_WEBROOT;
    cfg.openapi = TS_FUZZ_OPENAPI;
    char serr[TS_SERVER_ERR_LEN];
    if (ts_server_start(&cfg, &g_srv, serr) != TS_SERVER_OK) {
        fprintf(stderr, "fuzz_http: %s\n", serr);
        abort();
    }
    g_port = ts_server_port(g_srv);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int dial(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        abort();
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)g_port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        /* libFuzzer's timer (SIGALRM) can land while connect() waits: the
         * handshake goes on, so wait for it.  It waits when the SYN meets
         * the server side's TIME_WAIT of an earlier connection on the
         * same port pair and is sent again 1 s later: at a few thousand
         * connections a second the client's ephemeral ports come round. */
        struct pollfd pf = { fd, POLLOUT, 0 };
        int err = errno, so = 0;
        socklen_t len = sizeof so;
        if (err != EINTR || poll(&pf, 1, 5000) != 1 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len) != 0 || so != 0) {
            fprintf(stderr, "fuzz_http: connect: %s\n", strerror(err != EINTR ? err : so));
            abort();
        }
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Send all (the server may close early: that is fine), shut the write
 * side, read to EOF.  Returns the bytes read into buf; aborts if the
 * server holds the connection past limit_ms. */
static size_t roundtrip(const uint8_t *p, size_t n, char *buf, size_t cap, double limit_ms)
{
    int fd = dial();
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        p += w;
        n -= (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    size_t got = 0;
    double t0 = now_ms();
    for (;;) {
        int left = (int)(t0 + limit_ms - now_ms());
        if (left <= 0) {
            fprintf(stderr, "fuzz_http: connection held for %.0f ms\n", limit_ms);
            abort();
        }
        /* Once answers flow, a quiet 10 ms ends the exchange: with epoll
         * (the server's mode until it moved to poll), MHD 0.9.75 can miss a FIN that came in the same read as a
         * complete keep-alive request, and would only drop the
         * connection at the request deadline (250 ms here). */
        struct pollfd pf = { fd, POLLIN, 0 };
        int pr = poll(&pf, 1, got > 0 && left > 10 ? 10 : left);
        if (pr == 0 && got > 0)
            break;
        if (pr <= 0)
            continue;
        char tmp[4096];
        ssize_t r = recv(fd, tmp, sizeof tmp, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        size_t k = (size_t)r < cap - 1 - got ? (size_t)r : cap - 1 - got;
        memcpy(buf + got, tmp, k);
        got += k;
    }
    buf[got] = '\0';
    close(fd);
    return got;
}

static int status_line(const char *p)
{
    return strncmp(p, "HTTP/1.", 7) == 0 && (p[7] == '0' || p[7] == '1') && p[8] == ' ' &&
           p[9] >= '1' && p[9] <= '5' && p[10] >= '0' && p[10] <= '9' && p[11] >= '0' &&
           p[11] <= '9' && p[12] == ' ';
}

/* Every response in a keep-alive stream must be well formed (the first
 * strictly; later ones once found, see the resync below). */
static void check_answers(const char *buf, size_t len)
{
    const char *p = buf;
    while (p != NULL && p < buf + len) {
        if (strncmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ' || p[12] != ' ') {
            fprintf(stderr, "fuzz_http: malformed answer: %.200s\n", p);
            abort();
        }
        int st = atoi(p + 9);
        if (st < 100 || st > 599 || st == 500) {
            fprintf(stderr, "fuzz_http: status %d: %.400s\n", st, p);
            abort();
        }
        /* Next answer, if pipelined: after this one's body. */
        const char *end = strstr(p, "\r\n\r\n");
        if (end == NULL)
            break;
        const char *cl = strstr(p, "Content-Length: ");
        size_t body = cl != NULL && cl < end ? strtoul(cl + 16, NULL, 10) : 0;
        if (strstr(p, "HTTP/1.1 304") == p || strstr(p, "HTTP/1.1 204") == p)
            body = 0;
        p = end + 4 + body;
        /* HEAD answers carry Content-Length without a body: resync on the
         * next thing shaped like a status line (bodies may quote
         * "HTTP/1.1" in prose). */
        while (p != NULL && p < buf + len && !status_line(p))
            p = strstr(p + 1, "HTTP/1.");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_srv == NULL)
        start();
    static char buf[1 << 20];
    size_t n = roundtrip(data, size, buf, sizeof buf, 3000);
    check_answers(buf, n);

    static const char probe[] = "GET /livez HTTP/1.1\r\nHost: f\r\nConnection: close\r\n\r\n";
    n = roundtrip((const uint8_t *)probe, sizeof probe - 1, buf, sizeof buf, 3000);
    if (strncmp(buf, "HTTP/1.1 200 ", 13) != 0) {
        fprintf(stderr, "fuzz_http: server no longer answers /livez: %.200s\n", buf);
        abort();
    }
    return 0;
}
