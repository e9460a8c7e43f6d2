/*
 * test_floor.c - what issue 9 ("HTTP floor") changed, over loopback:
 *  - GET /v1/presets and /v1/gpus are built once at start and served
 *    from memory with a strong ETag; If-None-Match (one tag, a list, W/,
 *    "*") gives a 304; HEAD and the 405 for other methods are as before;
 *  - libmicrohttpd's connection pool is 16 KiB: a query string that
 *    would exhaust it is closed at once, not held.
 *
 * The expected bytes are the api layer's own answer (ts_api_handle, the
 * transport-free entry point), so the cache must serve exactly what an
 * uncached server would.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "th_harness.h"
#include "ts_api.h"

static th_server g_srv;
static int g_bad_exit;

static void shared_start(void)
{
    if (th_start(&g_srv, NULL) != 0) {
        fprintf(stderr, "test_floor: cannot start the server\n");
        exit(1);
    }
}

static void shared_stop(void)
{
    if (th_stop(&g_srv, 20000) != 0)
        g_bad_exit = 1;
}

static th_resp request(const char *method, const char *path, const char *header)
{
    th_req rq = { .method = method, .path = path, .header = header };
    th_resp r;

    th_http(g_srv.port, &rq, &r);
    return r;
}

static void header_is(const th_resp *r, const char *name, const char *want)
{
    char v[256];

    ck_assert_msg(th_header(r, name, v, sizeof v), "no %s", name);
    ck_assert_str_eq(v, want);
}

/* 200, the api layer's bytes, a strong tag; then every If-None-Match
 * form RFC 9110 13.1.2 allows. */
static void check_route(const char *path)
{
    ts_api_response want;
    char etag[128], hdr[320], v[64];
    th_resp r;

    ck_assert_int_eq(ts_api_handle("GET", path, NULL, NULL, 0, &want), 0);
    ck_assert_uint_eq(want.status, 200);

    r = request("GET", path, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.len, want.body_len);
    ck_assert(memcmp(r.body, want.body, want.body_len) == 0);
    header_is(&r, "Content-Type", "application/json");
    header_is(&r, "Cache-Control", "no-cache");
    header_is(&r, "X-Content-Type-Options", "nosniff");
    ck_assert(th_header(&r, "ETag", etag, sizeof etag));
    ck_assert_msg(etag[0] == '"' && etag[strlen(etag) - 1] == '"', "weak or bare tag %s", etag);
    th_resp_free(&r);

    /* The query string selects nothing: the same answer. */
    r = request("GET", path, NULL);
    th_resp_free(&r);
    snprintf(hdr, sizeof hdr, "%s?x=1", path);
    r = request("GET", hdr, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.len, want.body_len);
    th_resp_free(&r);

    /* The tag itself, in a list, weak, "*": 304 with the validator and
     * caching headers, no body. */
    static const struct {
        const char *before, *after; /* around the tag; NULL: no tag */
    } forms[] = { { "", "" }, { "\"nope\", ", "" }, { "W/\"a\",W/", " , \"b\"" }, { "*", NULL } };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char inm[256];

        snprintf(inm, sizeof inm, "%s%s%s", forms[i].before, forms[i].after != NULL ? etag : "",
                 forms[i].after != NULL ? forms[i].after : "");
        snprintf(hdr, sizeof hdr, "If-None-Match: %s", inm);
        r = request("GET", path, hdr);
        ck_assert_msg(r.status == 304, "%s: %ld", hdr, r.status);
        ck_assert_uint_eq(r.len, 0);
        header_is(&r, "ETag", etag);
        header_is(&r, "Cache-Control", "no-cache");
        th_resp_free(&r);
    }
    /* Other tags, and a tag cut short: the full answer. */
    const char *const misses[] = { "If-None-Match: \"x\"", "If-None-Match: W/\"x\", \"y\"",
                                   "If-None-Match: \"e7c" };
    for (size_t i = 0; i < sizeof misses / sizeof misses[0]; i++) {
        r = request("GET", path, misses[i]);
        ck_assert_msg(r.status == 200, "%s: %ld", misses[i], r.status);
        ck_assert_uint_eq(r.len, want.body_len);
        th_resp_free(&r);
    }

    /* HEAD: the GET's status and headers, no body; 304 the same way. */
    r = request("HEAD", path, NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.len, 0);
    snprintf(v, sizeof v, "%zu", want.body_len);
    header_is(&r, "Content-Length", v);
    header_is(&r, "ETag", etag);
    th_resp_free(&r);
    snprintf(hdr, sizeof hdr, "If-None-Match: %s", etag);
    r = request("HEAD", path, hdr);
    ck_assert_int_eq(r.status, 304);
    th_resp_free(&r);

    /* Other methods: 405 naming GET and HEAD, as before the cache. */
    r = request("POST", path, NULL);
    ck_assert_int_eq(r.status, 405);
    header_is(&r, "Allow", "GET, HEAD");
    header_is(&r, "Content-Type", "application/problem+json");
    th_resp_free(&r);
    r = request("DELETE", path, NULL);
    ck_assert_int_eq(r.status, 405);
    header_is(&r, "Allow", "GET, HEAD");
    th_resp_free(&r);

    ts_api_response_free(&want);
}

START_TEST(test_presets_cached)
{
    check_route("/v1/presets");
}
END_TEST

START_TEST(test_gpus_cached)
{
    check_route("/v1/gpus");
}
END_TEST

/* The two catalogues have their own tags, and the same bytes always
 * get the same tag (a second server agrees: replicas behind one load
 * balancer revalidate each other's answers). */
START_TEST(test_tags_stable)
{
    char a[128], b[128], c[128];
    th_server other;
    th_resp r;

    r = request("GET", "/v1/presets", NULL);
    ck_assert(th_header(&r, "ETag", a, sizeof a));
    th_resp_free(&r);
    r = request("GET", "/v1/gpus", NULL);
    ck_assert(th_header(&r, "ETag", b, sizeof b));
    th_resp_free(&r);
    ck_assert_str_ne(a, b);

    ck_assert_int_eq(th_start(&other, NULL), 0);
    {
        th_req rq = { .path = "/v1/gpus" };
        th_http(other.port, &rq, &r);
    }
    ck_assert(th_header(&r, "ETag", c, sizeof c));
    th_resp_free(&r);
    ck_assert_int_eq(th_stop(&other, 20000), 0);
    ck_assert_str_eq(b, c);
}
END_TEST

/* Counted under their own routes in /metrics, 304s included. */
START_TEST(test_metrics_counted)
{
    char etag[128], hdr[160];
    th_resp r = request("GET", "/v1/gpus", NULL);

    ck_assert(th_header(&r, "ETag", etag, sizeof etag));
    th_resp_free(&r);
    snprintf(hdr, sizeof hdr, "If-None-Match: %s", etag);
    r = request("GET", "/v1/gpus", hdr);
    ck_assert_int_eq(r.status, 304);
    th_resp_free(&r);
    r = request("GET", "/metrics", NULL);
    ck_assert_int_eq(r.status, 200);
    ck_assert(
        th_metric(r.body, "trainsize_http_requests_total{route=\"/v1/gpus\",status=\"304\"}") >= 1);
    ck_assert(
        th_metric(r.body, "trainsize_http_requests_total{route=\"/v1/gpus\",status=\"200\"}") >= 1);
    th_resp_free(&r);
}
END_TEST

/* 120 arguments of 70 bytes (a 9 KB URI) used to hold the connection
 * with a 16 KiB pool: MHD ran out of pool for the arguments and could
 * not build its 431.  Closed within a second now; a short query string
 * is still answered. */
START_TEST(test_query_over_pool_closed)
{
    char req[16384], buf[2048];
    size_t n = 0;
    double t0;
    int fd;

    n += (size_t)snprintf(req + n, sizeof req - n, "GET /v1/gpus?");
    for (int i = 0; i < 120; i++)
        n += (size_t)snprintf(req + n, sizeof req - n, "%sa%d=%070d", i ? "&" : "", i, 0);
    n += (size_t)snprintf(req + n, sizeof req - n, " HTTP/1.1\r\nHost: t\r\n\r\n");
    ck_assert(n < sizeof req);
    fd = th_connect(g_srv.port);
    ck_assert_int_ge(fd, 0);
    t0 = th_now_ms();
    ck_assert_int_eq(th_send_all(fd, req, n), 0);
    th_recv_all(fd, buf, sizeof buf, 3000);
    ck_assert_msg(th_now_ms() - t0 < 1000, "held %.0f ms", th_now_ms() - t0);
    close(fd);

    n = (size_t)snprintf(req, sizeof req, "GET /v1/gpus?");
    for (int i = 0; i < 20; i++)
        n += (size_t)snprintf(req + n, sizeof req - n, "%sa%d=%070d", i ? "&" : "", i, 0);
    n += (size_t)snprintf(req + n, sizeof req - n,
                          " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    fd = th_connect(g_srv.port);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(th_send_all(fd, req, n), 0);
    th_recv_all(fd, buf, sizeof buf, 3000);
    close(fd);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 200 ", 13) == 0, "%.200s", buf);
}
END_TEST

static Suite *floor_suite(void)
{
    Suite *s = suite_create("floor");
    TCase *t = tcase_create("floor");

    tcase_add_unchecked_fixture(t, shared_start, shared_stop);
    tcase_set_timeout(t, 30);
    tcase_add_test(t, test_presets_cached);
    tcase_add_test(t, test_gpus_cached);
    tcase_add_test(t, test_tags_stable);
    tcase_add_test(t, test_metrics_counted);
    tcase_add_test(t, test_query_over_pool_closed);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    sr = srunner_create(floor_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    if (g_bad_exit)
        fprintf(stderr, "test_floor: the shared server exited non-zero\n");
    return failed == 0 && !g_bad_exit ? 0 : 1;
}
