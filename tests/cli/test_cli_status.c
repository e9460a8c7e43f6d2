/*
 * test_cli_status.c - where the CLI's answers come from (--local, --url,
 * the environment) and what its exit status means, command by command.
 *
 * The binary runs as a child process (TS_CLI, behind TS_CLI_WRAP) against
 * the real server on loopback and in process; the byte comparison of
 * every API case is tests/cli/test_cli_local.c's, this file holds the
 * binary to it on a sample of commands.  The exit statuses are the table
 * of ts_cli_exits[] (cli/ts_cli_cmds.c): 0 ok, 1 the verdict is no, 2 the
 * input is wrong (usage, files, 4xx), 3 no answer (unreachable, 5xx).
 */
#include "th_harness.h"
#include "th_json.h"
#include "ts_cli_cmds.h"

#include <check.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Test-process state: the shared server's URL. */
static char url[64];

/* trainsize ARGS... with env edits ("K=V" sets, "K" unsets); every
 * TRAINSIZE_* of the caller's environment is unset first. */
static th_proc cli_env(const char *const *args, const char *const *env)
{
    const char *argv[48] = { getenv("TS_CLI") };
    const char *envv[16] = { "TRAINSIZE_URL", "TRAINSIZE_PORT", "TRAINSIZE_LOCAL" };
    size_t n = 1, e = 3;
    th_proc p;

    ck_assert_ptr_nonnull(argv[0]);
    for (size_t i = 0; args[i] != NULL; i++) {
        ck_assert_uint_lt(n, 46);
        argv[n++] = args[i];
    }
    for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
        ck_assert_uint_lt(e, 15);
        envv[e++] = env[i];
    }
    ck_assert_int_eq(th_exec(argv, "TS_CLI_WRAP", envv, &p), 0);
    return p;
}

static th_proc cli(const char *const *args)
{
    return cli_env(args, NULL);
}

static void server_start(void)
{
    th_shared_start();
    snprintf(url, sizeof url, "http://127.0.0.1:%u", th_shared.port);
}

/* A loopback port with nothing listening. */
static int closed_port(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static const char *const fits_run[] = { "--model", "llama3-8b",   "--gpus",    "8", "--zero",
                                        "3",       "--recompute", "selective", NULL };

/* args + fits_run, NULL-terminated, into out. */
static const char **with_run(const char **out, size_t cap, const char *const *args,
                             const char *const *run)
{
    size_t n = 0;

    for (size_t i = 0; args[i] != NULL; i++)
        out[n++] = args[i];
    for (size_t i = 0; run != NULL && run[i] != NULL; i++)
        out[n++] = run[i];
    ck_assert_uint_lt(n, cap);
    out[n] = NULL;
    return out;
}

/* ---------- where the answers come from ---------- */

/* The same command with --local and with --url: the same bytes on
 * stdout and the same exit status, for every command that asks the API
 * (the answers unchanged with --json; check's document differs only in
 * its "source"). */
START_TEST(local_equals_server)
{
    static const char *const cmds[][16] = {
        { "estimate", "--json", "--model", "llama3-70b", "--gpus", "64", "--zero", "1", NULL },
        { "estimate", "--json", "--model", "llama3-8b", "--gpus", "8", "--zero", "3", "--recompute",
          "selective", NULL },
        { "estimate", "--model", "mixtral-8x7b", "--gpus", "16", "--ep", "8", NULL },
        { "search", "--json", "--model", "llama3-8b", "--gpus", "16", "--global-batch", "64",
          "--limit", "3", NULL },
        { "search", "--format", "csv", "--model", "llama3-8b", "--gpus", "16", NULL },
        { "presets", "--json", NULL },
        { "gpus", "--json", NULL },
        { "estimate", "--json", "--model", "llama3-8b", "--tp", "3", "--gpus", "3", NULL },
        { "check", "--format", "jsonl", "--model", "llama3-70b", "--gpus", "8", NULL },
    };

    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        const char *a[24], *b[24];
        th_proc l, s;

        a[0] = "--local";
        b[0] = "--url";
        b[1] = url;
        with_run(a + 1, 23, cmds[i], NULL);
        with_run(b + 2, 22, cmds[i], NULL);
        l = cli(a);
        s = cli(b);
        ck_assert_msg(l.code == s.code, "%s: local exit %d, server %d\n%s%s", cmds[i][0], l.code,
                      s.code, l.err, s.err);
        ck_assert_msg(strcmp(l.out, s.out) == 0, "%s %s: stdout differs", cmds[i][0], cmds[i][1]);
        ck_assert_str_eq(l.err, s.err);
        ck_assert_int_gt(strlen(l.out) + strlen(l.err), 0);
        th_proc_free(&l);
        th_proc_free(&s);
    }
}
END_TEST

/* The server is asked when one is named (--url, TRAINSIZE_URL,
 * TRAINSIZE_PORT); else the answer is local.  TRAINSIZE_LOCAL=1 turns
 * local on over the environment's URL, 0 off (then the default URL);
 * --url and --local together are a usage error; health always asks a
 * server.  A dead URL tells them apart: exit 3 when it is asked. */
START_TEST(where_answers_come_from)
{
    char dead[64], dead_env[80], port_env[40];
    const char *args[16];
    th_proc p;

    snprintf(dead, sizeof dead, "http://127.0.0.1:%d", closed_port());
    snprintf(dead_env, sizeof dead_env, "TRAINSIZE_URL=%s", dead);
    snprintf(port_env, sizeof port_env, "TRAINSIZE_PORT=%d", closed_port());

    /* nothing named: local, exit 0 without a server */
    p = cli(with_run(args, 16, (const char *[]){ "check", NULL }, fits_run));
    ck_assert_msg(p.code == 0, "exit %d: %s", p.code, p.err);
    th_proc_free(&p);
    /* a URL in the environment is asked (dead: 3) ... */
    p = cli_env(with_run(args, 16, (const char *[]){ "check", NULL }, fits_run),
                (const char *[]){ dead_env, NULL });
    ck_assert_msg(p.code == 3, "exit %d: %s", p.code, p.err);
    ck_assert_ptr_nonnull(strstr(p.err, "cannot reach"));
    th_proc_free(&p);
    p = cli_env(with_run(args, 16, (const char *[]){ "check", NULL }, fits_run),
                (const char *[]){ port_env, NULL });
    ck_assert_msg(p.code == 3, "exit %d: %s", p.code, p.err);
    th_proc_free(&p);
    /* ... unless TRAINSIZE_LOCAL=1 or --local says otherwise */
    p = cli_env(with_run(args, 16, (const char *[]){ "check", NULL }, fits_run),
                (const char *[]){ dead_env, "TRAINSIZE_LOCAL=1", NULL });
    ck_assert_msg(p.code == 0, "exit %d: %s", p.code, p.err);
    th_proc_free(&p);
    p = cli_env(with_run(args, 16, (const char *[]){ "--local", "check", NULL }, fits_run),
                (const char *[]){ dead_env, NULL });
    ck_assert_msg(p.code == 0, "exit %d: %s", p.code, p.err);
    th_proc_free(&p);
    /* --url on the command line wins over TRAINSIZE_LOCAL=1 */
    p = cli_env(with_run(args, 16, (const char *[]){ "--url", dead, "check", NULL }, fits_run),
                (const char *[]){ "TRAINSIZE_LOCAL=1", NULL });
    ck_assert_msg(p.code == 3, "exit %d: %s", p.code, p.err);
    th_proc_free(&p);
    /* TRAINSIZE_LOCAL=0: the server, here the live one by URL */
    {
        char live_env[80];

        snprintf(live_env, sizeof live_env, "TRAINSIZE_URL=%s", url);
        p = cli_env(with_run(args, 16, (const char *[]){ "check", NULL }, fits_run),
                    (const char *[]){ live_env, "TRAINSIZE_LOCAL=0", NULL });
        ck_assert_msg(p.code == 0, "exit %d: %s", p.code, p.err);
        th_proc_free(&p);
    }
    /* usage errors: both, a bad TRAINSIZE_LOCAL, health --local */
    p = cli((const char *[]){ "--url", url, "--local", "gpus", NULL });
    ck_assert_int_eq(p.code, 2);
    ck_assert_ptr_nonnull(strstr(p.err, "--local"));
    th_proc_free(&p);
    p = cli_env((const char *[]){ "gpus", NULL },
                (const char *[]){ "TRAINSIZE_LOCAL=maybe", NULL });
    ck_assert_int_eq(p.code, 2);
    th_proc_free(&p);
    p = cli((const char *[]){ "--local", "health", NULL });
    ck_assert_int_eq(p.code, 2);
    ck_assert_ptr_nonnull(strstr(p.err, "health asks a server"));
    th_proc_free(&p);
}
END_TEST

/* ---------- exit statuses ---------- */

/* A one-shot server that answers any request with a 503 problem: the
 * "no answer" class (3), as a 5xx. */
typedef struct fake_server {
    int fd;
    unsigned port;
    int requests;
} fake_server;

static void *fake_serve(void *arg)
{
    static const char body[] = "{\"type\":\"https://trainsize.dev/problems/overloaded\","
                               "\"title\":\"Service unavailable\",\"status\":503,"
                               "\"detail\":\"try later\",\"field\":null}";
    fake_server *f = arg;

    for (int i = 0; i < f->requests; i++) {
        char req[8192], head[256];
        int c = accept(f->fd, NULL, NULL);

        if (c < 0)
            return NULL;
        (void)recv(c, req, sizeof req, 0);
        snprintf(head, sizeof head,
                 "HTTP/1.1 503 Service Unavailable\r\nContent-Type: "
                 "application/problem+json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                 strlen(body));
        if (send(c, head, strlen(head), MSG_NOSIGNAL) > 0)
            (void)send(c, body, strlen(body), MSG_NOSIGNAL);
        close(c);
    }
    return NULL;
}

static void fake_start(fake_server *f, pthread_t *t, int requests)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof a;

    f->requests = requests;
    f->fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(f->fd, 0);
    ck_assert_int_eq(bind(f->fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(f->fd, 4), 0);
    ck_assert_int_eq(getsockname(f->fd, (struct sockaddr *)&a, &al), 0);
    f->port = ntohs(a.sin_port);
    ck_assert_int_eq(pthread_create(t, NULL, fake_serve, f), 0);
}

typedef struct status_case {
    const char *const args[16];
    int code;
    const char *says; /* on stdout or stderr */
} status_case;

/* By hand: llama3-8b ZeRO 3 with selective recompute on 8 H100 needs
 * ~59 GiB of 79.6 (test_cli.c check_fits works it); llama3-70b with
 * ZeRO 0 on 8 needs 16 B x 70e9 = 1.1 TB of model state alone. */
static const status_case status_cases[] = {
    /* 0: the verdict is yes */
    { { "estimate", "--model", "llama3-8b", "--gpus", "8", "--zero", "3", "--recompute",
        "selective", NULL },
      0,
      "Verdict: fits with a 0% margin" },
    { { "check", "--model", "llama3-8b", "--gpus", "8", "--zero", "3", "--recompute", "selective",
        NULL },
      0,
      "PASS: fits" },
    { { "search", "--model", "llama3-8b", "--gpus", "16", "--limit", "1", NULL }, 0, "rank" },
    /* 1: the verdict is no, and the margin is said */
    { { "estimate", "--model", "llama3-70b", "--gpus", "8", "--zero", "0", NULL },
      1,
      "Verdict: does not fit: " },
    { { "estimate", "--margin", "30%", "--model", "llama3-8b", "--gpus", "8", "--zero", "3",
        "--recompute", "selective", NULL },
      1,
      "fits, but not with a 30% margin" },
    { { "estimate", "--json", "--model", "llama3-70b", "--gpus", "8", "--zero", "0", NULL },
      1,
      "with a 0% margin" },
    { { "check", "--margin", "10%", "--model", "llama3-70b", "--gpus", "8", "--zero", "0", NULL },
      1,
      "with a 10% margin" },
    { { "search", "--model", "llama3-405b", "--gpus", "8", "--tp", "1", "--pp", "1", "--zero", "0",
        NULL },
      1,
      "nothing fits" },
    /* 2: the input is wrong */
    { { "estimate", "--tp", "abc", NULL }, 2, "--tp needs an integer" },
    { { "estimate", "--model", "llama3-8b", "--tp", "3", "--gpus", "3", NULL }, 2, "(field /tp)" },
    { { "check", "/no/such/plan.json", NULL }, 2, "cannot read /no/such/plan.json" },
    { { "search", "--model", "no-such-model", NULL }, 2, "(field /model)" },
    { { "frobnicate", NULL }, 2, "unknown command" },
    { { "presets", "--tp", "2", NULL }, 2, "--tp" },
};

START_TEST(exit_status_table)
{
    const status_case *c = &status_cases[_i];
    const char *args[24];
    th_proc p;

    args[0] = "--local";
    with_run(args + 1, 23, c->args, NULL);
    p = cli(args);
    ck_assert_msg(p.code == c->code, "%s %s: exit %d, want %d\n%s%s", c->args[0], c->args[1],
                  p.code, c->code, p.out, p.err);
    ck_assert_msg(strstr(p.out, c->says) != NULL || strstr(p.err, c->says) != NULL,
                  "%s: '%s' not said:\n%s%s", c->args[0], c->says, p.out, p.err);
    th_proc_free(&p);
}
END_TEST

/* 3: no answer.  Unreachable, and a 5xx, on every command that asks. */
START_TEST(exit_3_no_answer)
{
    static const char *const cmds[][4] = {
        { "estimate", "--model", "llama3-8b", NULL },
        { "check", "--model", "llama3-8b", NULL },
        { "search", "--model", "llama3-8b", NULL },
        { "presets", NULL },
        { "gpus", NULL },
    };
    size_t n = sizeof cmds / sizeof cmds[0];
    char dead[64], fake[64];
    fake_server f;
    pthread_t t;

    snprintf(dead, sizeof dead, "http://127.0.0.1:%d", closed_port());
    fake_start(&f, &t, (int)n);
    snprintf(fake, sizeof fake, "http://127.0.0.1:%u", f.port);
    for (size_t i = 0; i < n; i++) {
        const char *args[12];
        th_proc p;

        args[0] = "--url";
        args[1] = dead;
        with_run(args + 2, 10, cmds[i], NULL);
        p = cli(args);
        ck_assert_msg(p.code == 3, "%s unreachable: exit %d: %s", cmds[i][0], p.code, p.err);
        th_proc_free(&p);
        args[1] = fake;
        p = cli(args);
        ck_assert_msg(p.code == 3, "%s 5xx: exit %d: %s", cmds[i][0], p.code, p.err);
        ck_assert_msg(strstr(p.err, "try later") != NULL, "%s: %s", cmds[i][0], p.err);
        th_proc_free(&p);
    }
    pthread_join(t, NULL);
    close(f.fd);
    /* health: unreachable is "not healthy", the verdict 1 */
    {
        th_proc p = cli((const char *[]){ "--url", dead, "health", NULL });

        ck_assert_int_eq(p.code, 1);
        th_proc_free(&p);
    }
}
END_TEST

/* The one table (ts_cli_exits[]) is what --help prints and what
 * docs/cli.md says, word for word. */
START_TEST(table_in_help_and_docs)
{
    th_proc p = cli((const char *[]){ "--help", NULL });
    char *doc = th_read_src("docs/cli.md", NULL);
    const char *tab;
    size_t n = 0;

    ck_assert_int_eq(p.code, 0);
    ck_assert_ptr_nonnull(doc);
    tab = strstr(p.out, "\nexit status:\n");
    ck_assert_ptr_nonnull(tab);
    for (const ts_cli_exit *e = ts_cli_exits; e->code >= 0; e++, n++) {
        char row[512], first[128];
        size_t k = 0;

        /* docs: "| 0 | meaning on one line |" */
        k = (size_t)snprintf(row, sizeof row, "| %d | ", e->code);
        for (const char *c = e->meaning; *c != '\0' && k + 4 < sizeof row; c++)
            row[k++] = *c == '\n' ? ' ' : *c;
        snprintf(row + k, sizeof row - k, " |");
        ck_assert_msg(strstr(doc, row) != NULL, "docs/cli.md lacks the row\n%s", row);
        /* --help: "  0  <first line>" */
        snprintf(first, sizeof first, "\n  %d  %.*s\n", e->code, (int)strcspn(e->meaning, "\n"),
                 e->meaning);
        ck_assert_msg(strstr(tab, first) != NULL, "--help lacks%s", first);
    }
    ck_assert_uint_eq(n, 4);
    free(doc);
    th_proc_free(&p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli-status");
    TCase *tc = tcase_create("status");
    SRunner *sr;
    int failed;

    signal(SIGPIPE, SIG_IGN);
    tcase_add_unchecked_fixture(tc, server_start, th_shared_stop);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, local_equals_server);
    tcase_add_test(tc, where_answers_come_from);
    tcase_add_loop_test(tc, exit_status_table, 0,
                        (int)(sizeof status_cases / sizeof status_cases[0]));
    tcase_add_test(tc, exit_3_no_answer);
    tcase_add_test(tc, table_in_help_and_docs);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 && th_shared_bad_exits() == 0 ? 0 : 1;
}
