/*
 * test_work.c - issue 22: probes that api work cannot starve.
 *
 * Runs trainsize-server-hooks ($TRAINSIZE_SERVER, set by meson), the
 * server built with ts_work.c's test hooks: every worker sleeps
 * $TRAINSIZE_TEST_WORK_SLEEP_MS before each job, standing in for slow
 * searches.  Requests go over libcurl on 127.0.0.1, from one thread each;
 * every count and wait here is bounded (at most 11 requests at a time,
 * about 15 s in all).
 *
 * Before the worker pool (server/ts_work.c) the api's work ran on
 * libmicrohttpd's threads: with every one of them inside a slow request,
 * /livez waited behind it (issue 22: 12.4 s on a 2-thread server), and
 * nothing refused a request that could only wait.
 */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th_harness.h"

#define SLEEP_MS "1500"
#define WORKERS  2
#define QUEUE    4
#define HELD     (WORKERS + QUEUE)
#define PROBES   40

typedef struct poster {
    pthread_t t;
    unsigned port;
    char body[96];
    long status;
    double ms;
} poster;

static void *post_one(void *p)
{
    poster *a = p;
    double t0 = th_now_ms();
    th_resp r = th_post(a->port, "/v1/memory", a->body);
    a->ms = th_now_ms() - t0;
    a->status = r.status;
    th_resp_free(&r);
    return NULL;
}

/* Start n estimates at once, each on its own connection; distinct
 * bodies so that no answer can come from the answer cache. */
static void post_many(poster *a, size_t n, unsigned port, unsigned first)
{
    for (size_t i = 0; i < n; i++) {
        a[i].port = port;
        snprintf(a[i].body, sizeof a[i].body, "{\"model\":\"llama3-8b\",\"seq\":%u}",
                 1024u + first + (unsigned)i);
        ck_assert_int_eq(pthread_create(&a[i].t, NULL, post_one, &a[i]), 0);
    }
}

static void join_all(poster *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pthread_join(a[i].t, NULL);
}

/* Wait until the pool reports `busy` workers and `queued` waiting. */
static bool wait_pool(unsigned port, double busy, double queued, unsigned ms)
{
    double t0 = th_now_ms();
    while (th_now_ms() - t0 < ms) {
        if (th_scrape(port, NULL, "trainsize_work_busy_workers") == busy &&
            th_scrape(port, NULL, "trainsize_work_queue_depth") == queued)
            return true;
        th_sleep_ms(20);
    }
    return false;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void start_hooks(th_server *s, const char *sleep_ms, const char *const *args)
{
    ck_assert_int_eq(setenv("TRAINSIZE_TEST_WORK_SLEEP_MS", sleep_ms, 1), 0);
    int rc = th_start(s, args);
    unsetenv("TRAINSIZE_TEST_WORK_SLEEP_MS");
    ck_assert_int_eq(rc, 0);
}

START_TEST(test_probes_while_workers_busy)
{
    th_server s;
    const char *const args[] = { "--threads",      "2", "--queue-max", "4", "--io-threads", "2",
                                 "--answer-cache", "0", NULL };
    start_hooks(&s, SLEEP_MS, args);

    /* Every worker asleep in a job and every queue place taken. */
    poster held[HELD];
    post_many(held, HELD, s.port, 0);
    ck_assert_msg(wait_pool(s.port, WORKERS, QUEUE, 5000), "pool never reached %d busy + %d queued",
                  WORKERS, QUEUE);

    /* One more estimate: refused at once, not queued behind them. */
    poster extra[1];
    post_many(extra, 1, s.port, 100);
    join_all(extra, 1);
    ck_assert_int_eq(extra[0].status, 503);
    ck_assert_msg(extra[0].ms < 1000, "503 took %.0f ms", extra[0].ms);
    th_resp r = th_post(s.port, "/v1/memory", "{\"model\":\"llama3-8b\",\"seq\":4096}");
    char v[64];
    ck_assert_int_eq(r.status, 503);
    ck_assert_msg(th_header(&r, "Retry-After", v, sizeof v), "no Retry-After");
    ck_assert_str_eq(v, "1");
    ck_assert(th_header(&r, "Content-Type", v, sizeof v));
    ck_assert_str_eq(v, "application/problem+json");
    ck_assert_msg(strstr(r.body, "\"type\":\"https://trainsize.dev/problems/server-busy\"") != NULL,
                  "%s", r.body);
    th_resp_free(&r);

    /* The probes, each on a new connection as a kubelet makes them,
     * while the workers are still held (the first jobs end 1.5 s in). */
    double ms[PROBES];
    for (int i = 0; i < PROBES; i++) {
        const char *path = i % 4 == 3 ? "/readyz" : "/livez";
        double t0 = th_now_ms();
        th_resp p = th_get(s.port, path);
        ms[i] = th_now_ms() - t0;
        ck_assert_msg(p.status == 200, "%s: %ld", path, p.status);
        th_resp_free(&p);
    }
    ck_assert_double_eq(th_scrape(s.port, NULL, "trainsize_work_busy_workers"), WORKERS);
    qsort(ms, PROBES, sizeof ms[0], cmp_double);
    fprintf(stderr,
            "test_work: %d probes with %d workers busy, %d queued: "
            "median %.2f ms, max %.2f ms\n",
            PROBES, WORKERS, QUEUE, ms[PROBES / 2], ms[PROBES - 1]);
    /* A probe queued behind a job would wait for the rest of its 1.5 s;
     * 300 ms leaves room for a loaded 2-core machine's scheduling. */
    ck_assert_msg(ms[PROBES - 1] < 300, "slowest probe %.1f ms", ms[PROBES - 1]);

    /* The held requests are all answered, in ~3 rounds of 1.5 s. */
    join_all(held, HELD);
    for (int i = 0; i < HELD; i++)
        ck_assert_msg(held[i].status == 200, "held %d: %ld after %.0f ms", i, held[i].status,
                      held[i].ms);
    ck_assert_double_eq(th_scrape(s.port, NULL, "trainsize_work_rejected_total"), 2);
    ck_assert_double_eq(
        th_scrape(s.port, NULL,
                  "trainsize_http_requests_total{route=\"/v1/memory\",status=\"503\"}"),
        2);
    ck_assert_double_eq(th_scrape(s.port, NULL, "trainsize_work_queue_depth"), 0);
    ck_assert_int_eq(th_stop(&s, 20000), 0);
}
END_TEST

/* SIGTERM with requests waiting in the queue: they are still computed and
 * answered (the drain waits for them), then the server exits 0. */
START_TEST(test_drain_answers_queued)
{
    th_server s;
    const char *const args[] = { "--threads",      "1", "--queue-max", "4", "--drain-timeout", "10",
                                 "--answer-cache", "0", NULL };
    start_hooks(&s, "400", args);
    poster a[3];
    post_many(a, 3, s.port, 200);
    ck_assert_msg(wait_pool(s.port, 1, 2, 5000), "pool never reached 1 busy + 2 queued");
    double t0 = th_now_ms();
    ck_assert_int_eq(kill(s.pid, SIGTERM), 0);
    join_all(a, 3);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(a[i].status == 200, "queued %d: %ld", i, a[i].status);
    ck_assert_int_eq(th_wait(&s, 10000), 0);
    /* three jobs of 400 ms on one worker, less what ran before SIGTERM */
    ck_assert_msg(th_now_ms() - t0 < 3000, "exit %.0f ms after SIGTERM", th_now_ms() - t0);
}
END_TEST

/* --queue-max 0: with the one worker busy, the next request is refused
 * rather than left waiting. */
START_TEST(test_queue_zero)
{
    th_server s;
    const char *const args[] = {
        "--threads", "1", "--queue-max", "0", "--answer-cache", "0", NULL
    };
    start_hooks(&s, "800", args);
    poster a[1];
    post_many(a, 1, s.port, 300);
    ck_assert(wait_pool(s.port, 1, 0, 5000));
    th_resp r = th_post(s.port, "/v1/memory", "{\"model\":\"llama3-8b\"}");
    ck_assert_int_eq(r.status, 503);
    th_resp_free(&r);
    join_all(a, 1);
    ck_assert_int_eq(a[0].status, 200);
    ck_assert_int_eq(th_stop(&s, 20000), 0);
}
END_TEST

static Suite *work_suite(void)
{
    Suite *s = suite_create("work");
    TCase *tc = tcase_create("hooks");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_probes_while_workers_busy);
    tcase_add_test(tc, test_drain_answers_queued);
    tcase_add_test(tc, test_queue_zero);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    SRunner *sr = srunner_create(work_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? 0 : 1;
}
