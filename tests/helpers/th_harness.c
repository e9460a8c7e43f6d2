/*
 * th_harness.c - process and HTTP helpers for the server and cli tests.
 */
#include "th_harness.h"
#include "th_file.h"

#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define MAX_ARGS 64
/* valgrind makes start-up slow; a native start takes milliseconds. */
#define START_TIMEOUT_MS 30000

double th_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

void th_sleep_ms(unsigned ms)
{
    struct timespec t = { (time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L };
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? v : fallback;
}

/* argv: wrapper words, the binary, then args.  Strings in store. */
static int build_argv(char **argv, char *store, size_t store_cap, const char *const *args)
{
    int n = 0;
    const char *wrap = getenv("TRAINSIZE_SERVER_WRAP");
    if (wrap != NULL && strlen(wrap) < store_cap) {
        memcpy(store, wrap, strlen(wrap) + 1);
        char *save = NULL;
        for (char *t = strtok_r(store, " ", &save); t && n < MAX_ARGS / 2;
             t = strtok_r(NULL, " ", &save))
            argv[n++] = t;
    }
    argv[n++] = (char *)(uintptr_t)env_or("TRAINSIZE_SERVER", "trainsize-server");
    for (size_t i = 0; args != NULL && args[i] != NULL && n < MAX_ARGS - 1; i++)
        argv[n++] = (char *)(uintptr_t)args[i];
    argv[n] = NULL;
    return n;
}

/* In the child: die with the test process so no server outlives a
 * failed test, then exec. */
static void exec_child(char **argv)
{
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    execvp(argv[0], argv);
    fprintf(stderr, "th_harness: exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

int th_start(th_server *s, const char *const *extra)
{
    const char *src = env_or("TRAINSIZE_SRCDIR", ".");
    char web[4096], openapi[4096];
    snprintf(web, sizeof web, "%s/web", src);
    snprintf(openapi, sizeof openapi, "%s/api/openapi.json", src);
    const char *args[MAX_ARGS] = { "--port",     "0", "--bind",    "127.0.0.1",
                                   "--web-root", web, "--openapi", openapi };
    size_t na = 8;
    for (size_t i = 0; extra != NULL && extra[i] != NULL && na < MAX_ARGS - 1; i++)
        args[na++] = extra[i];
    args[na] = NULL;

    char *argv[MAX_ARGS + 1];
    char store[1024];
    build_argv(argv, store, sizeof store, args);

    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(p[1], STDOUT_FILENO);
        close(p[0]);
        close(p[1]);
        exec_child(argv);
    }
    close(p[1]);
    s->pid = pid;
    s->port = 0;

    char line[256];
    size_t len = 0;
    double deadline = th_now_ms() + START_TIMEOUT_MS;
    while (len + 1 < sizeof line && memchr(line, '\n', len) == NULL) {
        struct pollfd pf = { p[0], POLLIN, 0 };
        int left = (int)(deadline - th_now_ms());
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            break;
        ssize_t n = read(p[0], line + len, sizeof line - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(p[0]);
    line[len] = '\0';
    unsigned port = 0;
    if (sscanf(line, "listening on http://127.0.0.1:%u", &port) != 1 || port == 0 || port > 65535) {
        fprintf(stderr, "th_harness: no 'listening on' line, got '%s'\n", line);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        s->pid = 0;
        return -1;
    }
    s->port = port;
    return 0;
}

th_server th_shared;
static int shared_bad_exits;

void th_shared_start(void)
{
    if (th_start(&th_shared, NULL) != 0) {
        fprintf(stderr, "th_harness: cannot start $TRAINSIZE_SERVER\n");
        exit(1);
    }
}

void th_shared_stop(void)
{
    int rc = th_stop(&th_shared, 20000);
    if (rc != 0) {
        fprintf(stderr, "th_harness: shared server exit status %d\n", rc);
        shared_bad_exits++;
    }
}

int th_shared_bad_exits(void)
{
    return shared_bad_exits;
}

bool th_alive(const th_server *s)
{
    int st;
    return s->pid > 0 && waitpid(s->pid, &st, WNOHANG) == 0;
}

int th_wait(th_server *s, unsigned timeout_ms)
{
    if (s->pid <= 0)
        return -1;
    double deadline = th_now_ms() + timeout_ms;
    for (;;) {
        int st = 0;
        pid_t r = waitpid(s->pid, &st, WNOHANG);
        if (r == s->pid) {
            s->pid = 0;
            if (WIFEXITED(st))
                return WEXITSTATUS(st);
            return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
        }
        if (r < 0 || th_now_ms() > deadline)
            break;
        th_sleep_ms(5);
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
    return -1;
}

int th_stop(th_server *s, unsigned timeout_ms)
{
    if (s->pid <= 0)
        return -1;
    kill(s->pid, SIGTERM);
    return th_wait(s, timeout_ms);
}

/* ------------------------------------------------------------------ */
/* Child processes                                                     */
/* ------------------------------------------------------------------ */

#define EXEC_SILENCE_MS 60000

static void grow_append(char **buf, size_t *len, const char *p, size_t n)
{
    char *nb = realloc(*buf, *len + n + 1);
    if (nb == NULL)
        return; /* keep what we have: the test compares text, not bytes */
    memcpy(nb + *len, p, n);
    *len += n;
    nb[*len] = '\0';
    *buf = nb;
}

/* In the child: apply "K=V" / "K" edits. */
static void edit_env(const char *const *env)
{
    for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
        const char *eq = strchr(env[i], '=');
        char key[128];
        if (eq == NULL) {
            unsetenv(env[i]);
        } else if ((size_t)(eq - env[i]) < sizeof key) {
            memcpy(key, env[i], (size_t)(eq - env[i]));
            key[eq - env[i]] = '\0';
            setenv(key, eq + 1, 1);
        }
    }
}

int th_exec(const char *const *argv, const char *wrap_env, const char *const *env, th_proc *p)
{
    char *args[MAX_ARGS + 1];
    char store[1024];
    int n = 0, po[2], pe[2];
    const char *wrap = wrap_env != NULL ? getenv(wrap_env) : NULL;
    size_t lo = 0, le = 0;

    p->code = -1;
    p->out = calloc(1, 1);
    p->err = calloc(1, 1);
    if (p->out == NULL || p->err == NULL)
        return -1;
    if (wrap != NULL && *wrap != '\0' && strlen(wrap) < sizeof store) {
        char *save = NULL;
        memcpy(store, wrap, strlen(wrap) + 1);
        for (char *t = strtok_r(store, " ", &save); t && n < MAX_ARGS / 2;
             t = strtok_r(NULL, " ", &save))
            args[n++] = t;
    }
    for (size_t i = 0; argv[i] != NULL && n < MAX_ARGS; i++)
        args[n++] = (char *)(uintptr_t)argv[i];
    args[n] = NULL;
    if (pipe(po) != 0)
        return -1;
    if (pipe(pe) != 0) {
        close(po[0]);
        close(po[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(po[0]);
        close(po[1]);
        close(pe[0]);
        close(pe[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(po[1], STDOUT_FILENO);
        dup2(pe[1], STDERR_FILENO);
        close(po[0]);
        close(po[1]);
        close(pe[0]);
        close(pe[1]);
        edit_env(env);
        exec_child(args);
    }
    close(po[1]);
    close(pe[1]);
    /* Read both pipes as they fill, so neither blocks the child. */
    struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, EXEC_SILENCE_MS) <= 0) {
            fprintf(stderr, "th_harness: %s silent for %d s, killed\n", args[0],
                    EXEC_SILENCE_MS / 1000);
            kill(pid, SIGKILL);
            break;
        }
        for (int k = 0; k < 2; k++) {
            char chunk[4096];
            if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t got = read(fds[k].fd, chunk, sizeof chunk);
            if (got <= 0) {
                close(fds[k].fd);
                fds[k].fd = -1;
                open_fds--;
            } else if (k == 0) {
                grow_append(&p->out, &lo, chunk, (size_t)got);
            } else {
                grow_append(&p->err, &le, chunk, (size_t)got);
            }
        }
    }
    for (int k = 0; k < 2; k++)
        if (fds[k].fd >= 0)
            close(fds[k].fd);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    p->code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    return 0;
}

void th_proc_free(th_proc *p)
{
    free(p->out);
    free(p->err);
    p->out = p->err = NULL;
}

int th_run(const char *const *args, const char *env_assign, char *out, size_t out_cap, char *err,
           size_t err_cap)
{
    const char *argv[MAX_ARGS + 1] = { env_or("TRAINSIZE_SERVER", "trainsize-server") };
    const char *env[2] = { env_assign, NULL };
    size_t n = 1;
    th_proc p;

    for (size_t i = 0; args != NULL && args[i] != NULL && n < MAX_ARGS; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    int rc = th_exec(argv, "TRAINSIZE_SERVER_WRAP", env, &p);
    snprintf(out, out_cap, "%s", p.out != NULL ? p.out : "");
    snprintf(err, err_cap, "%s", p.err != NULL ? p.err : "");
    th_proc_free(&p);
    return rc == 0 ? p.code : -1;
}

/* ------------------------------------------------------------------ */
/* libcurl                                                             */
/* ------------------------------------------------------------------ */

typedef struct sink {
    char *p;
    size_t len;
} sink;

static size_t sink_write(char *data, size_t size, size_t nmemb, void *ud)
{
    sink *s = ud;
    size_t n = size * nmemb;
    char *p = realloc(s->p, s->len + n + 1);
    if (p == NULL)
        return 0;
    memcpy(p + s->len, data, n);
    s->p = p;
    s->len += n;
    s->p[s->len] = '\0';
    return n;
}

typedef struct source {
    const char *p;
    size_t left;
} source;

static size_t source_read(char *buf, size_t size, size_t nmemb, void *ud)
{
    source *s = ud;
    size_t n = size * nmemb;
    /* Small pieces so a chunked body really arrives in many chunks. */
    if (n > 4096)
        n = 4096;
    if (n > s->left)
        n = s->left;
    memcpy(buf, s->p, n);
    s->p += n;
    s->left -= n;
    return n;
}

int th_http(unsigned port, const th_req *req, th_resp *resp)
{
    memset(resp, 0, sizeof *resp);
    CURL *h = req->handle != NULL ? req->handle : curl_easy_init();
    if (h == NULL)
        return -1;
    if (req->handle != NULL)
        curl_easy_reset(h); /* keeps the live connection */

    char url[2048];
    snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, req->path);
    const char *method = req->method != NULL ? req->method : "GET";
    sink body = { NULL, 0 }, hdrs = { NULL, 0 };
    source src = { req->body, req->body_len };
    struct curl_slist *list = NULL;
    char ct[256];

    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, sink_write);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &hdrs);
    if (req->path_as_is)
        curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);

    if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (req->body != NULL) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        if (req->chunked) {
            curl_easy_setopt(h, CURLOPT_READFUNCTION, source_read);
            curl_easy_setopt(h, CURLOPT_READDATA, &src);
            list = curl_slist_append(list, "Transfer-Encoding: chunked");
        } else {
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body);
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        }
        if (strcmp(method, "POST") != 0)
            curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    } else if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    }
    /* "Content-Type:" with no value stops curl adding its form default. */
    snprintf(ct, sizeof ct, "Content-Type:%s%s", req->content_type ? " " : "",
             req->content_type ? req->content_type : "");
    list = curl_slist_append(list, ct);
    if (req->header != NULL)
        list = curl_slist_append(list, req->header);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);

    resp->curl_rc = curl_easy_perform(h);
    if (resp->curl_rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
    curl_slist_free_all(list);
    if (req->handle == NULL)
        curl_easy_cleanup(h);
    else /* the slist and sinks die here; do not let h point at them */
        curl_easy_reset(h);

    resp->body = body.p != NULL ? body.p : calloc(1, 1);
    resp->len = body.len;
    resp->headers = hdrs.p != NULL ? hdrs.p : calloc(1, 1);
    resp->headers_len = hdrs.len;
    return resp->status != 0 ? 0 : -1;
}

th_resp th_get(unsigned port, const char *path)
{
    th_req rq = { .path = path };
    th_resp r;
    th_http(port, &rq, &r);
    return r;
}

th_resp th_post(unsigned port, const char *path, const char *body)
{
    th_req rq = { .method = "POST",
                  .path = path,
                  .content_type = "application/json",
                  .body = body,
                  .body_len = strlen(body) };
    th_resp r;
    th_http(port, &rq, &r);
    return r;
}

void th_resp_free(th_resp *resp)
{
    free(resp->body);
    free(resp->headers);
    resp->body = NULL;
    resp->headers = NULL;
}

bool th_header(const th_resp *resp, const char *name, char *buf, size_t cap)
{
    bool found = false;
    size_t nl = strlen(name);
    const char *p = resp->headers;
    while (p != NULL && *p != '\0') {
        const char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        if (ll > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            size_t vl = ll - (size_t)(v - p);
            while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == ' '))
                vl--;
            if (vl >= cap)
                vl = cap - 1;
            memcpy(buf, v, vl);
            buf[vl] = '\0';
            found = true; /* keep going: the last response wins (100) */
        }
        p = eol ? eol + 1 : NULL;
    }
    return found;
}

/* ------------------------------------------------------------------ */
/* Raw sockets                                                         */
/* ------------------------------------------------------------------ */

int th_connect(unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

int th_send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

size_t th_recv_all(int fd, char *buf, size_t cap, unsigned timeout_ms)
{
    size_t len = 0;
    double deadline = th_now_ms() + timeout_ms;
    while (len + 1 < cap) {
        struct pollfd pf = { fd, POLLIN, 0 };
        int left = (int)(deadline - th_now_ms());
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            break;
        ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    return len;
}

/* ------------------------------------------------------------------ */
/* Misc                                                                */
/* ------------------------------------------------------------------ */

double th_metric(const char *text, const char *series)
{
    size_t sl = strlen(series);
    for (const char *p = text; p != NULL && *p != '\0';) {
        if (strncmp(p, series, sl) == 0 && p[sl] == ' ')
            return strtod(p + sl + 1, NULL);
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return 0;
}

double th_scrape(unsigned port, CURL *handle, const char *series)
{
    th_req rq = { .path = "/metrics", .handle = handle };
    th_resp r;
    th_http(port, &rq, &r);
    ck_assert_msg(r.status == 200, "GET /metrics: %ld", r.status);
    double v = th_metric(r.body, series);
    th_resp_free(&r);
    return v;
}

char *th_read_src(const char *rel, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", env_or("TRAINSIZE_SRCDIR", "."), rel);
    return th_read_file(path, len);
}
