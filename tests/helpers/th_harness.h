/*
 * th_harness.h - start the real trainsize-server binary and talk HTTP to
 * it over loopback (libcurl, or raw sockets for misbehaving clients).
 *
 * The binary comes from $TRAINSIZE_SERVER and the repository from
 * $TRAINSIZE_SRCDIR (both set by tests/server/meson.build and
 * tests/cli/meson.build).  An optional $TRAINSIZE_SERVER_WRAP (e.g.
 * "valgrind --error-exitcode=1 --leak-check=full") is put in front of the
 * command line.  Shared by tests/server and tests/cli: one copy of the
 * server fixture, the loopback requests and the child-process runner.
 */
#ifndef TH_HARNESS_H
#define TH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <curl/curl.h>

typedef struct th_server {
    pid_t pid;
    unsigned port;
} th_server;

/* Start with --port 0 --bind 127.0.0.1 --web-root $SRC/web --openapi
 * $SRC/api/openapi.json plus extra (NULL-terminated, may be NULL), and wait
 * for the "listening on" line.  0 on success. */
int th_start(th_server *s, const char *const *extra);

/* The server a test file shares between its tests: an unchecked fixture
 * (tcase_add_unchecked_fixture(tc, th_shared_start, th_shared_stop))
 * starts it in the test process; th_shared_stop counts a non-zero exit
 * (a leak under valgrind, a crash at shutdown) in th_shared_bad_exits(),
 * which main() adds to its verdict.  Test-process state, not request
 * state. */
extern th_server th_shared;
void th_shared_start(void);
void th_shared_stop(void);
int th_shared_bad_exits(void);

/* SIGTERM, then wait up to timeout_ms; SIGKILL after that.  Returns the
 * exit status, 128 + signal if killed by one, -1 if it had to be killed. */
int th_stop(th_server *s, unsigned timeout_ms);

/* Wait for an already signalled server; same results as th_stop. */
int th_wait(th_server *s, unsigned timeout_ms);

/* Is the process still running? */
bool th_alive(const th_server *s);

/* Run the binary to completion (for --help, bad flags); stdout and stderr
 * are captured into out/err (NUL-terminated, truncated).  env_assign is
 * "NAME=value" or NULL.  Returns the exit status or -1. */
int th_run(const char *const *args, const char *env_assign, char *out, size_t out_cap, char *err,
           size_t err_cap);

typedef struct th_req {
    const char *method; /* "GET" when NULL */
    const char *path;
    const char *content_type; /* NULL: no header */
    const char *body;
    size_t body_len;
    bool chunked;       /* send the body with unknown length */
    bool path_as_is;    /* keep "/../" as typed */
    const char *header; /* one extra "Name: value" or NULL */
    CURL *handle;       /* reuse this handle (keep-alive) or NULL */
} th_req;

typedef struct th_resp {
    long status; /* 0 when the transfer failed */
    char *body;  /* malloc'd, NUL-terminated */
    size_t len;
    char *headers; /* raw header block, malloc'd */
    size_t headers_len;
    CURLcode curl_rc;
} th_resp;

/* One request to 127.0.0.1:port.  Returns 0 when an HTTP status came
 * back.  th_resp_free() in every case. */
int th_http(unsigned port, const th_req *req, th_resp *resp);
void th_resp_free(th_resp *resp);

/* GET path / POST body as application/json on a fresh connection; the
 * answer (status 0 when none came).  th_resp_free() it. */
th_resp th_get(unsigned port, const char *path);
th_resp th_post(unsigned port, const char *path, const char *body);

/* GET /metrics and read one series (th_metric); fails the test unless
 * the scrape answers 200.  handle: a kept-alive connection or NULL. */
double th_scrape(unsigned port, CURL *handle, const char *series);

/* A child process run to completion. */
typedef struct th_proc {
    int code;  /* exit status, 128 + signal, -1 if killed */
    char *out; /* stdout, malloc'd, NUL-terminated */
    char *err; /* stderr */
} th_proc;

/* Run argv (NULL-terminated, argv[0] looked up in PATH) behind the words
 * of $wrap_env when wrap_env names a set variable (e.g. "TS_CLI_WRAP").
 * env edits the child's environment: "K=V" sets K, "K" unsets it (NULL:
 * none).  stdout and stderr are read as they come, so neither pipe fills;
 * a child silent for 60 s is killed.  0 when it ran; th_proc_free() in
 * every case. */
int th_exec(const char *const *argv, const char *wrap_env, const char *const *env, th_proc *p);
void th_proc_free(th_proc *p);

/* Value of a response header (case-insensitive name), copied into buf;
 * false when absent. */
bool th_header(const th_resp *resp, const char *name, char *buf, size_t cap);

/* Raw TCP connection to 127.0.0.1:port; -1 on failure. */
int th_connect(unsigned port);
/* Send all of p; 0 on success. */
int th_send_all(int fd, const void *p, size_t n);
/* Read until EOF or timeout_ms; returns bytes read (NUL-terminated). */
size_t th_recv_all(int fd, char *buf, size_t cap, unsigned timeout_ms);

/* Value of one Prometheus sample line "name{labels} value"; series is the
 * text before the value.  0 when the series is absent. */
double th_metric(const char *text, const char *series);

/* Read a file of the source tree into a malloc'd buffer; NULL if absent. */
char *th_read_src(const char *rel, size_t *len);

/* Monotonic milliseconds. */
double th_now_ms(void);
void th_sleep_ms(unsigned ms);

#endif /* TH_HARNESS_H */
