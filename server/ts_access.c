/*
 * ts_access.c - the access log (ts_server_int.h): one line per request
 * on stderr, "METHOD PATH STATUS BYTES MICROSECONDS[ NOTE][ dropped:WHY]",
 * including the answers libmicrohttpd builds by itself and connections
 * shut before their request line was in.  One write() per line keeps
 * lines whole across threads.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ts_server_int.h"

static void log_line(const char *line, int n, size_t cap)
{
    if (n > 0) {
        size_t len = (size_t)n < cap ? (size_t)n : cap - 1;
        ssize_t w = write(STDERR_FILENO, line, len);
        (void)w;
    }
}

void ts_access_printable(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src != NULL && src[i] != '\0' && i + 1 < cap; i++) {
        unsigned char u = (unsigned char)src[i];
        dst[i] = (u < 0x21 || u > 0x7e) ? '?' : (char)u;
    }
    dst[i] = '\0';
}

void ts_access_request(const ts_req *rq, uint64_t ns, enum MHD_RequestTerminationCode toe)
{
    static const char *const why[] = {
        [MHD_REQUEST_TERMINATED_COMPLETED_OK] = "",
        [MHD_REQUEST_TERMINATED_WITH_ERROR] = " error",
        [MHD_REQUEST_TERMINATED_TIMEOUT_REACHED] = " timeout",
        [MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN] = " shutdown",
        [MHD_REQUEST_TERMINATED_READ_ERROR] = " read-error",
        [MHD_REQUEST_TERMINATED_CLIENT_ABORT] = " client-abort",
    };
    const char *note =
        (unsigned)toe < sizeof why / sizeof why[0] && why[toe] != NULL ? why[toe] : " aborted";
    char line[LOG_PATH_MAX + 128];
    int n;

    if (rq->conn != NULL && ts_guard_expired(rq->conn->gc))
        note = " request-deadline";
    n = snprintf(line, sizeof line, "%s %s %u %zu %llu%s%s%s\n",
                 rq->method[0] != '\0' ? rq->method : "-", rq->path[0] != '\0' ? rq->path : "-",
                 rq->status, rq->bytes, (unsigned long long)(ns / 1000u), note,
                 rq->dropped != NULL ? " dropped:" : "", rq->dropped != NULL ? rq->dropped : "");
    log_line(line, n, sizeof line);
}

void ts_access_deadline(void)
{
    static const char line[] = "- - 0 0 0 request-deadline\n";
    log_line(line, (int)sizeof line - 1, sizeof line);
}

void ts_access_mhd_log(void *cls, const char *fmt, va_list ap)
{
    ts_server *s = cls;
    /* The one place where every answer libmicrohttpd builds by itself
     * (malformed request line, 414, 431, 505, bad chunk sizes...) shows
     * up, with its status: the first argument of this message
     * (transmit_error_response() in MHD's connection.c).  Counted under
     * route "mhd" and logged, so no response goes unrecorded. */
    static const char err_fmt[] = "Error processing request (HTTP response code is %u";
    if (s != NULL && strncmp(fmt, err_fmt, sizeof err_fmt - 1) == 0) {
        va_list aq;
        va_copy(aq, ap);
        unsigned st = va_arg(aq, unsigned);
        va_end(aq);
        ts_metrics_count(s->metrics, s->r_mhd, st);
        if (s->cfg.access_log) {
            char line[64];
            int n = snprintf(line, sizeof line, "- - %u 0 0 mhd\n", st);
            log_line(line, n, sizeof line);
        }
    }
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && msg[n - 1] == '\n')
        msg[--n] = '\0';
    fprintf(stderr, "trainsize-server: mhd: %s\n", msg);
}
