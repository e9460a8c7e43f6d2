/*
 * test_cases.c - every case of tests/data/api_cases through
 * ts_api_handle(), as the server and the fuzzer call it.
 *
 * The cases are data (tests/data/api_cases/README.md): the request, the
 * expected status, and for an error the problem's slug, JSON pointer and a
 * word of its detail; for a success the values at dotted paths, each
 * worked by hand in the case's "why".  The runner (tests/helpers/
 * th_cases.c) also checks the contract of every answer and, for every
 * problem, the one problem-type table (api/ts_problem.c).  The same cases
 * run over loopback HTTP in tests/server/test_server.c.
 *
 * argv[1] is tests/data ("files" of a case are read from there).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th_cases.h"
#include "ts_api.h"

/* Test-process state: the loaded cases. */
static const char *data_dir;
static json_t *cases;

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);

    ck_assert_ptr_nonnull(d);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static void api_send(void *ctx, const th_case_req *rq, th_case_resp *out)
{
    ts_api_response r;

    (void)ctx;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(
        ts_api_handle(rq->method, rq->route, rq->content_type, rq->body, rq->body_len, &r), 0);
    ck_assert_ptr_nonnull(r.body);
    /* every answer names a metrics route */
    ck_assert_ptr_nonnull(r.route);
    /* bad input is never a 5xx */
    ck_assert_msg(r.status == 200 || (r.status >= 400 && r.status < 500), "status %u for %s %s: %s",
                  r.status, rq->method, rq->route, r.body);
    out->status = r.status;
    out->content_type =
        r.content_type != NULL ? dup_n(r.content_type, strlen(r.content_type)) : NULL;
    out->allow = r.allow != NULL ? dup_n(r.allow, strlen(r.allow)) : NULL;
    out->body = dup_n(r.body, r.body_len);
    out->body_len = r.body_len;
    ts_api_response_free(&r);
}

static const th_transport api_transport = { "api", api_send, NULL };

START_TEST(test_case)
{
    th_case_run(json_array_get(cases, (size_t)_i), data_dir, &api_transport);
}
END_TEST

int main(int argc, char **argv)
{
    char dir[2048];
    Suite *s;
    TCase *tc;
    SRunner *sr;
    int failed;

    if (argc < 2) {
        fprintf(stderr, "usage: test_cases TESTS_DATA_DIR\n");
        return 2;
    }
    data_dir = argv[1];
    snprintf(dir, sizeof dir, "%s/api_cases", data_dir);
    cases = th_cases_load(dir, "api");
    fprintf(stderr, "test_cases: %zu cases from %s\n", json_array_size(cases), dir);
    s = suite_create("api-cases");
    tc = tcase_create("cases");
    tcase_add_loop_test(tc, test_case, 0, (int)json_array_size(cases));
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    json_decref(cases);
    return failed == 0 ? 0 : 1;
}
