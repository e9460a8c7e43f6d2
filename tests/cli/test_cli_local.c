/*
 * test_cli_local.c - `trainsize --local` answers as the server does, byte
 * for byte.
 *
 * Every case of tests/data/api_cases (tests/data/api_cases/README.md) is
 * sent through the CLI's own request function (ts_conn_request_raw(),
 * ts_cli_conn.h) twice: in process (--local) and over loopback HTTP to
 * the real trainsize-server.  The status, the content type and every
 * byte of the body must be the same; then the local answer goes through
 * the cases' own checks (tests/helpers/th_cases.c), so it is also the
 * right answer, not just the same one.  The Allow header (405) is the
 * server's: the in-process path has no headers.  tests/cli/test_cli.c
 * runs the CLI binary both ways on a sample of commands.
 */
#include "th_cases.h"
#include "th_harness.h"
#include "ts_cli_conn.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Test-process state: the loaded cases and where their files are. */
static json_t *cases;
static char data_dir[1024];

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);

    ck_assert_ptr_nonnull(d);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* Does the case also run over HTTP (no "via", or one naming it)? */
static bool runs_over_http(const json_t *c)
{
    const json_t *via = json_object_get(c, "via"), *v;
    size_t i;

    if (via == NULL)
        return true;
    if (json_is_string(via))
        return strcmp(json_string_value(via), "http") == 0;
    json_array_foreach(via, i, v) if (json_is_string(v) &&
                                      strcmp(json_string_value(v), "http") == 0) return true;
    return false;
}

/* The server's answer to the same request (as tests/server sends it). */
static void server_answer(const th_case_req *rq, th_resp *r)
{
    bool has_body = rq->body_len > 0 || strcmp(rq->method, "POST") == 0;
    th_req q = { .method = rq->method,
                 .path = rq->route,
                 .content_type = rq->content_type,
                 .body = has_body ? rq->body : NULL,
                 .body_len = rq->body_len,
                 .path_as_is = true };

    th_http(th_shared.port, &q, r);
    ck_assert_msg(r->status != 0, "%s %s: no answer from the server (curl %d)", rq->method,
                  rq->route, (int)r->curl_rc);
}

static void local_send(void *ctx, const th_case_req *rq, th_case_resp *out)
{
    const ts_conn local = { true, NULL, 0 };
    const bool *http = ctx;
    ts_http_response resp;
    ts_http_error err;
    char allow[128];

    ck_assert_msg(ts_conn_request_raw(&local, rq->method, rq->route, rq->content_type, rq->body,
                                      rq->body_len, &resp, &err) == TS_HTTP_OK,
                  "%s %s: %s", rq->method, rq->route, err.text);
    out->status = (unsigned)resp.status;
    out->content_type =
        resp.content_type[0] != '\0' ? dup_n(resp.content_type, strlen(resp.content_type)) : NULL;
    out->body = resp.body;
    out->body_len = resp.len;
    out->allow = NULL;
    if (*http) {
        th_resp r;
        char ct[256];

        server_answer(rq, &r);
        ck_assert_msg(r.status == resp.status, "%s %s: local %ld, server %ld", rq->method,
                      rq->route, resp.status, r.status);
        ck_assert(th_header(&r, "Content-Type", ct, sizeof ct));
        ck_assert_msg(strcmp(ct, resp.content_type) == 0, "%s %s: local '%s', server '%s'",
                      rq->method, rq->route, resp.content_type, ct);
        ck_assert_msg(r.len == resp.len && memcmp(r.body, resp.body, r.len) == 0,
                      "%s %s: the bodies differ\nlocal:  %.*s\nserver: %.*s", rq->method, rq->route,
                      (int)resp.len, resp.body, (int)r.len, r.body);
        if (th_header(&r, "Allow", allow, sizeof allow))
            out->allow = dup_n(allow, strlen(allow));
        th_resp_free(&r);
    }
}

START_TEST(test_case)
{
    const json_t *c = json_array_get(cases, (size_t)_i);
    bool http = runs_over_http(c);
    th_transport t = { "api", local_send, &http };

    th_case_run(c, data_dir, &t);
}
END_TEST

/* The cases were there to compare: all of them but the ones that run in
 * process only (none today) went to the server too. */
START_TEST(cases_loaded)
{
    size_t i, http = 0;

    for (i = 0; i < json_array_size(cases); i++)
        http += runs_over_http(json_array_get(cases, i));
    ck_assert_uint_ge(http, 150);
}
END_TEST

int main(void)
{
    const char *src = getenv("TRAINSIZE_SRCDIR");
    char dir[1200];
    Suite *s;
    TCase *tc;
    SRunner *sr;
    int failed;

    if (src == NULL) {
        fprintf(stderr, "test_cli_local: TRAINSIZE_SRCDIR not set\n");
        return 2;
    }
    snprintf(data_dir, sizeof data_dir, "%s/tests/data", src);
    snprintf(dir, sizeof dir, "%s/api_cases", data_dir);
    cases = th_cases_load(dir, "api");
    fprintf(stderr, "test_cli_local: %zu cases from %s\n", json_array_size(cases), dir);
    s = suite_create("cli-local");
    tc = tcase_create("local-equals-server");
    tcase_add_unchecked_fixture(tc, th_shared_start, th_shared_stop);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, cases_loaded);
    tcase_add_loop_test(tc, test_case, 0, (int)json_array_size(cases));
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    json_decref(cases);
    return failed == 0 && th_shared_bad_exits() == 0 ? 0 : 1;
}
