/*
 * test_server.c - integration tests: the real trainsize-server binary on
 * loopback, driven with libcurl and raw sockets.
 *
 * Expected numbers come from /work/shared/oracles.md (cited per check)
 * or from the request itself (an override must come back in "inputs").
 * Check runs each test in a forked child; the shared server is started
 * by an unchecked fixture in the parent and its exit status is checked
 * by main() after the run, so a leak under valgrind or a crash at
 * shutdown fails the suite too.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "th_cases.h"
#include "th_file.h"
#include "th_harness.h"
#include "th_json.h"
#include "ts_gzip.h"

#define PORT th_shared.port

static const char preset_body[] =
    "{\"model\":\"llama3-70b\",\"gpu\":\"h100-sxm\",\"dp\":8,\"seq\":2048}";

/* Test-process state: the cases of tests/data/api_cases run over HTTP. */
static json_t *g_cases;
static char g_data[2048];

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static th_resp get(const char *path)
{
    return th_get(PORT, path);
}

static th_resp post(const char *path, const char *body)
{
    return th_post(PORT, path, body);
}

static json_t *parse(const th_resp *r)
{
    return th_json_parse(r->body, r->len);
}

/* Header name is present with exactly the value want. */
static void assert_header(const th_resp *r, const char *name, const char *want)
{
    char v[256];
    ck_assert_msg(th_header(r, name, v, sizeof v), "no %s header", name);
    ck_assert_msg(strcmp(v, want) == 0, "%s: %s, want %s", name, v, want);
}

/* Every answer carries nosniff, whatever the route. */
static void assert_nosniff(const th_resp *r)
{
    assert_header(r, "X-Content-Type-Options", "nosniff");
}

/* A problem+json error: status, content type, body status, and the
 * field pointer or a word the detail must mention. */
static void assert_problem(th_resp *r, long status, const char *field)
{
    ck_assert_msg(r->status == status, "status %ld, want %ld: %.300s", r->status, status, r->body);
    assert_header(r, "Content-Type", "application/problem+json");
    assert_nosniff(r);
    json_t *j = parse(r);
    ck_assert_int_eq((long)th_json_num(j, "status"), status);
    ck_assert(json_is_string(json_object_get(j, "title")));
    ck_assert(json_is_string(json_object_get(j, "type")));
    if (field != NULL) {
        const char *f = json_string_value(json_object_get(j, "field"));
        ck_assert_msg(f != NULL && strcmp(f, field) == 0, "field %s, want %s: %.300s",
                      f ? f : "(none)", field, r->body);
    }
    json_decref(j);
}

/* ------------------------------------------------------------------ */
/* routes                                                              */
/* ------------------------------------------------------------------ */

START_TEST(test_presets)
{
    th_resp r = get("/v1/presets");
    ck_assert_int_eq(r.status, 200);
    assert_nosniff(&r);
    json_t *j = parse(&r);
    json_t *list = json_object_get(j, "presets");
    ck_assert(json_is_array(list));
    json_t *found = NULL;
    size_t i;
    json_t *p;
    json_array_foreach(list, i, p) if (strcmp(json_string_value(json_object_get(p, "id")),
                                              "llama3-70b") == 0) found = p;
    ck_assert_msg(found != NULL, "llama3-70b not in /v1/presets");
    /* Llama 3 paper, Table 3: 70B has 80 layers, model dim 8192. */
    ck_assert_int_eq((long)th_json_num(found, "layers"), 80);
    ck_assert_int_eq((long)th_json_num(found, "hidden"), 8192);
    json_decref(j);
    th_resp_free(&r);
}
END_TEST

START_TEST(test_gpus)
{
    th_resp r = get("/v1/gpus");
    ck_assert_int_eq(r.status, 200);
    json_t *j = parse(&r);
    json_t *list = json_object_get(j, "gpus");
    ck_assert(json_is_array(list));
    json_t *h100 = NULL;
    size_t i;
    json_t *g;
    json_array_foreach(list, i, g) if (strcmp(json_string_value(json_object_get(g, "id")),
                                              "h100-sxm") == 0) h100 = g;
    ck_assert(h100 != NULL);
    /* oracles.md: H100 SXM 989 dense BF16 TFLOP/s, 81559 MiB as the driver reports. */
    ck_assert_double_eq_tol(th_json_num(h100, "bf16_tflops"), 989.0, 1e-9);
    ck_assert_double_eq_tol(th_json_num(h100, "hbm_bytes"), 81559.0 * 1048576,
                            1.0); /* nvidia-smi MiB */
    json_decref(j);
    th_resp_free(&r);
}
END_TEST

/* The override (seq 2048) must reach the core: it comes back in inputs. */
static json_t *estimate(const char *path, const char *section)
{
    th_resp r = post(path, preset_body);
    ck_assert_msg(r.status == 200, "%s: %ld %.300s", path, r.status, r.body);
    assert_header(&r, "Content-Type", "application/json");
    assert_nosniff(&r);
    json_t *j = parse(&r);
    json_t *in = json_object_get(j, "inputs");
    ck_assert_int_eq((long)th_json_num(in, "seq"), 2048);
    ck_assert_int_eq((long)th_json_num(in, "dp"), 8);
    ck_assert_str_eq(json_string_value(json_object_get(in, "model")), "llama3-70b");
    ck_assert_msg(json_is_object(json_object_get(j, section)), "no '%s'", section);
    th_resp_free(&r);
    return j;
}

START_TEST(test_memory)
{
    json_t *j = estimate("/v1/memory", "memory");
    json_t *bpp = json_object_get(json_object_get(j, "memory"), "bytes_per_param");
    /* oracles.md: mixed-precision Adam with fp32 grads (Megatron-LM, the
     * default framework) = 2 + 4 + 4 + 4 + 4 = 18 B/param.  Exact. */
    ck_assert_double_eq_tol(th_json_num(bpp, "total"), 18.0, 1e-12);
    json_decref(j);
}
END_TEST

START_TEST(test_compute)
{
    json_t *j = estimate("/v1/compute", "compute");
    json_t *c = json_object_get(j, "compute");
    double p = th_json_num(json_object_get(j, "params"), "active");
    double t = th_json_num(c, "tokens");
    double f = th_json_num(json_object_get(c, "model_flops"), "value");
    /* Kaplan et al. 2020 (oracles.md): model FLOPs = 6 P T; the same
     * doubles multiplied, so only rounding (1e-12 relative) separates them. */
    ck_assert_double_eq_tol(f / (6.0 * p * t), 1.0, 1e-12);
    json_decref(j);
}
END_TEST

START_TEST(test_checkpoint)
{
    json_t *j = estimate("/v1/checkpoint", "checkpoint");
    /* oracles.md: resumable checkpoint without grads = 2 + 4 + 4 + 4 =
     * 14 B/param.  Exact. */
    ck_assert_double_eq_tol(th_json_num(json_object_get(j, "checkpoint"), "bpp_full"), 14.0, 1e-12);
    json_decref(j);
}
END_TEST

START_TEST(test_plan)
{
    json_t *j = estimate("/v1/plan", "memory");
    ck_assert(json_is_object(json_object_get(j, "compute")));
    ck_assert(json_is_object(json_object_get(j, "checkpoint")));
    json_t *sweep = json_object_get(j, "sweep");
    ck_assert(json_is_array(sweep));
    ck_assert_uint_gt(json_array_size(sweep), 1);
    /* trainsize.h: the sweep is ascending in dp and starts at dp = 1. */
    ck_assert_int_eq((long)th_json_num(json_array_get(sweep, 0), "dp"), 1);
    json_decref(j);
}
END_TEST

START_TEST(test_fit)
{
    th_resp r = post("/v1/fit", "{\"model\":\"llama3-8b\",\"gpu\":\"h100-sxm\","
                                "\"dp\":8,\"seq\":2048,\"recompute\":\"full\","
                                "\"solve\":\"micro_batch\"}");
    ck_assert_msg(r.status == 200, "%ld %.300s", r.status, r.body);
    json_t *j = parse(&r);
    json_t *found = json_object_get(j, "found");
    ck_assert(json_is_boolean(found));
    /* 8B, ZeRO-1, dp 8 (oracles.md ZeRO stage 1: 2P + 2P + 12P/Nd):
     * 16 + 16 + 12 = 44 GB, plus full-recompute activations 2sbh per layer
     * (Korthikanti Table 2) = 2 * 2048 * 4096 * 32 layers = 0.54 GB and
     * 2 GiB overhead: ~47 GB < 80 GB at micro-batch 1, so the solver must
     * find something >= 1. */
    ck_assert(json_is_true(found));
    ck_assert_int_ge((long)th_json_num(j, "micro_batch"), 1);
    json_decref(j);
    th_resp_free(&r);
}
END_TEST

START_TEST(test_ops)
{
    /* text/plain, one word (api/openapi.json /livez, /readyz). */
    th_resp r = get("/livez");
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "ok\n");
    assert_header(&r, "Content-Type", "text/plain; charset=utf-8");
    assert_nosniff(&r);
    th_resp_free(&r);

    r = get("/readyz");
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "ready\n");
    th_resp_free(&r);

    /* HEAD: same status and length, no body. */
    th_req rq = { .method = "HEAD", .path = "/livez" };
    th_http(PORT, &rq, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.len, 0);
    assert_header(&r, "Content-Length", "3");
    th_resp_free(&r);
}
END_TEST

/* GET on a kept-alive handle.  MHD finishes a request (and so counts it
 * in on_completed) before it reads the next one on the same connection,
 * which makes the counter deltas below deterministic. */
static th_resp get_on(CURL *h, const char *path)
{
    th_req rq = { .path = path, .handle = h };
    th_resp r;
    th_http(PORT, &rq, &r);
    return r;
}

START_TEST(test_metrics)
{
    const char *gpus = "trainsize_http_requests_total{route=\"/v1/gpus\",status=\"200\"}";
    const char *count = "trainsize_http_request_duration_seconds_count";
    CURL *h = curl_easy_init();
    ck_assert_ptr_nonnull(h);
    th_resp a = get_on(h, "/metrics");
    /* A request an earlier test gave up on (its client timed out on a
     * loaded machine) can still be finishing on the server: wait, up to
     * 5 s, until this /metrics is the only request in flight, so that
     * nothing else completes between the two snapshots. */
    for (int wait = 0;
         wait < 250 && a.status == 200 && th_metric(a.body, "trainsize_inflight_requests") > 1.0;
         wait++) {
        th_resp_free(&a);
        nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
        a = get_on(h, "/metrics");
    }
    ck_assert_int_eq(a.status, 200);
    ck_assert_double_eq(th_metric(a.body, "trainsize_inflight_requests"), 1.0);
    assert_header(&a, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    for (int i = 0; i < 3; i++) {
        th_resp g = get_on(h, "/v1/gpus");
        ck_assert_int_eq(g.status, 200);
        th_resp_free(&g);
    }
    th_resp b = get_on(h, "/metrics");
    ck_assert_int_eq(b.status, 200);
    curl_easy_cleanup(h);
    /* Tests run one at a time on one connection, so the deltas are exact:
     * 3 GETs of /v1/gpus, and those 3 plus the first /metrics (counted
     * when it completed, after it was rendered) in the histogram. */
    ck_assert_double_eq(th_metric(b.body, gpus) - th_metric(a.body, gpus), 3.0);
    ck_assert_double_eq(th_metric(b.body, count) - th_metric(a.body, count), 4.0);
    /* Only the /metrics request itself is in flight while it renders. */
    ck_assert_double_eq(th_metric(b.body, "trainsize_inflight_requests"), 1.0);
    /* The cumulative +Inf bucket equals _count by construction. */
    ck_assert_double_eq(
        th_metric(b.body, "trainsize_http_request_duration_seconds_bucket{le=\"+Inf\"}"),
        th_metric(b.body, count));
    ck_assert_ptr_nonnull(strstr(b.body, "# TYPE trainsize_http_requests_total counter\n"));
    ck_assert_ptr_nonnull(
        strstr(b.body, "# TYPE trainsize_http_request_duration_seconds histogram\n"));
    ck_assert_ptr_nonnull(strstr(b.body, "trainsize_build_info{version=\""));
    ck_assert_ptr_nonnull(strstr(b.body, "trainsize_http_request_duration_seconds_sum "));
    th_resp_free(&a);
    th_resp_free(&b);
}
END_TEST

START_TEST(test_static_index)
{
    size_t flen = 0;
    char *file = th_read_src("web/index.html", &flen);
    th_resp r = get("/");
    if (file == NULL) {
        /* No dashboard checked in yet: a clean 404, not a crash. */
        assert_problem(&r, 404, NULL);
        th_resp_free(&r);
        return;
    }
    ck_assert_int_eq(r.status, 200);
    assert_header(&r, "Content-Type", "text/html; charset=utf-8");
    assert_header(&r, "Cache-Control", "no-cache");
    assert_nosniff(&r);
    ck_assert_uint_eq(r.len, flen);
    ck_assert(memcmp(r.body, file, flen) == 0);

    /* Revalidation with the ETag: 304, no body. */
    char etag[128], hdr[160];
    ck_assert(th_header(&r, "ETag", etag, sizeof etag));
    snprintf(hdr, sizeof hdr, "If-None-Match: %s", etag);
    th_resp_free(&r);
    th_req rq = { .path = "/index.html", .header = hdr };
    th_http(PORT, &rq, &r);
    ck_assert_int_eq(r.status, 304);
    ck_assert_uint_eq(r.len, 0);
    th_resp_free(&r);
    free(file);
}
END_TEST

/* gunzip body into a malloc'd buffer (the test's own inflate, not the
 * server's code). */
static char *gunzip(const char *in, size_t n, size_t *outn)
{
    size_t cap = 64 * n + 65536; /* JSON schemas deflate ~15:1 */
    char *out = malloc(cap);
    z_stream z;

    memset(&z, 0, sizeof z);
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)(void *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap;
    ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
    *outn = z.total_out;
    inflateEnd(&z);
    return out;
}

/* Issue 13 point 10: the dashboard's text is served gzipped to clients
 * that accept it, with Vary, its own validator and If-None-Match lists. */
START_TEST(test_static_gzip)
{
    size_t flen = 0, glen = 0;
    char *file = th_read_src("web/app.js", &flen);
    char v[128], etag[128], hdr[256];
    th_resp r;
    th_req rq = { .path = "/app.js", .header = "Accept-Encoding: br, gzip;q=0.8" };

    ck_assert_ptr_nonnull(file);
    th_http(PORT, &rq, &r);
    ck_assert_int_eq(r.status, 200);
    assert_header(&r, "Content-Encoding", "gzip");
    assert_header(&r, "Vary", "Accept-Encoding");
    ck_assert(r.len < flen / 2); /* JavaScript compresses better than 2:1 */
    {
        char *plain = gunzip(r.body, r.len, &glen);
        ck_assert_uint_eq(glen, flen);
        ck_assert(memcmp(plain, file, flen) == 0);
        free(plain);
    }
    ck_assert(th_header(&r, "ETag", etag, sizeof etag));
    ck_assert_ptr_nonnull(strstr(etag, "-gz\""));
    th_resp_free(&r);

    /* A list, and the W/ form, revalidate; so does "*". */
    snprintf(hdr, sizeof hdr, "If-None-Match: \"nope\", W/%s", etag);
    rq = (th_req){ .path = "/app.js", .header = hdr };
    th_http(PORT, &rq, &r);
    ck_assert_int_eq(r.status, 200); /* no Accept-Encoding: the identity tag differs */
    ck_assert(!th_header(&r, "Content-Encoding", v, sizeof v));
    ck_assert(th_header(&r, "Vary", v, sizeof v));
    ck_assert_uint_eq(r.len, flen);
    th_resp_free(&r);
    rq = (th_req){ .path = "/app.js", .header = "If-None-Match: *" };
    th_http(PORT, &rq, &r);
    ck_assert_int_eq(r.status, 304);
    th_resp_free(&r);

    /* q=0 refuses gzip: identity. */
    rq = (th_req){ .path = "/app.js", .header = "Accept-Encoding: gzip;q=0, identity" };
    th_http(PORT, &rq, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert(!th_header(&r, "Content-Encoding", v, sizeof v));
    ck_assert_uint_eq(r.len, flen);
    th_resp_free(&r);

    /* "*" covers only the codings not named: the named refusal wins
     * (RFC 9110 12.5.3; issue 22 finding 5, gzip before). */
    rq = (th_req){ .path = "/app.js", .header = "Accept-Encoding: gzip;q=0, *" };
    th_http(PORT, &rq, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert(!th_header(&r, "Content-Encoding", v, sizeof v));
    ck_assert_uint_eq(r.len, flen);
    th_resp_free(&r);

    /* The Accept-Encoding parser itself (the table: test_server_units.c). */
    ck_assert(ts_gzip_accepted("gzip"));
    ck_assert(ts_gzip_accepted("deflate, x-gzip"));
    ck_assert(ts_gzip_accepted("*;q=0.1"));
    ck_assert(!ts_gzip_accepted("gzip;q=0"));
    ck_assert(!ts_gzip_accepted("gzipx, br"));
    ck_assert(!ts_gzip_accepted(NULL));
    ck_assert(!ts_gzip_worth("text/css", 100));
    ck_assert(!ts_gzip_worth("image/png", 100000));
    free(file);
}
END_TEST

/* The web root's lexical check over the wire (server/ts_static.c), on a
 * root of our own: a subdirectory makes "/sub/../index.html" resolve
 * inside the root, so only the lexical check refuses it; "a..b.js" has
 * dots in a name, not a dot-segment, and is served; the file beside the
 * root never is, however the climb is spelt (MHD hands us the path
 * percent-decoded: server/ts_request.c ts_request_unescape()).  The spellings against
 * the repository's web root are cases in tests/data/api_cases/static.json. */
START_TEST(test_static_names)
{
    static const char *const refused[] = {
        "/sub/../index.html",
        "/sub/%2e%2e/index.html",
        "/sub/%2E%2E/index.html",
        "/sub/..%2findex.html",
        "/sub/.%2e/index.html",
        "/sub/./index.html",
        "/sub/..",
        "/sub/.",
        "/.",
        "/..",
        "/sub/../",
        "/../secret.txt",
        "/a/../../secret.txt",
        "/sub/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/%2e%2e%2fsecret.txt",
        "/..foo",
        "/.env",
        "//secret.txt",
    };
    char dir[] = "/tmp/ts-names-XXXXXX";
    char root[64], sub[80], cmd[128];
    th_server s;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(root, sizeof root, "%s/web", dir);
    snprintf(sub, sizeof sub, "%s/sub", root);
    ck_assert_int_eq(mkdir(root, 0700), 0);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    th_write_file(dir, "secret.txt", "SECRET outside the root");
    th_write_file(root, "index.html", "<p>root</p>");
    th_write_file(root, "a..b.js", "let ab = 2;");
    th_write_file(root, "..foo", "SECRET dot-file");
    th_write_file(root, ".env", "SECRET=1");
    th_write_file(sub, "index.html", "<p>sub</p>");
    {
        const char *const args[] = { "--web-root", root, NULL };
        ck_assert_int_eq(th_start(&s, args), 0);
    }
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        th_req rq = { .path = refused[i], .path_as_is = true };
        th_resp r;
        th_http(s.port, &rq, &r);
        ck_assert_msg(r.status == 404, "%s: %ld %.80s", refused[i], r.status, r.body);
        ck_assert_msg(strstr(r.body, "SECRET") == NULL && strstr(r.body, "<p>") == NULL,
                      "%s leaked: %.80s", refused[i], r.body);
        assert_problem(&r, 404, NULL);
        th_resp_free(&r);
    }
    {
        th_resp r = th_get(s.port, "/a..b.js");
        ck_assert_msg(r.status == 200, "/a..b.js: %ld", r.status);
        ck_assert_str_eq(r.body, "let ab = 2;");
        assert_header(&r, "Content-Type", "text/javascript; charset=utf-8");
        th_resp_free(&r);
        r = th_get(s.port, "/sub/");
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(r.body, "<p>sub</p>");
        th_resp_free(&r);
    }
    ck_assert_int_eq(th_stop(&s, 20000), 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* GET /openapi.json: the document's bytes, read once at start (server/
 * ts_cat.c) and served like a catalogue: content ETag, no-cache, 304s,
 * and a gzip coding made at start with its own validator. */
START_TEST(test_openapi)
{
    size_t flen = 0, glen = 0;
    char *file = th_read_src("api/openapi.json", &flen);
    char v[128], etag[128], etag_gz[128], hdr[256];
    th_resp r;
    th_req rq = { .path = "/openapi.json" };

    ck_assert_ptr_nonnull(file);
    th_http(PORT, &rq, &r);
    ck_assert_int_eq(r.status, 200);
    assert_header(&r, "Content-Type", "application/json");
    assert_header(&r, "Cache-Control", "no-cache");
    assert_header(&r, "Vary", "Accept-Encoding");
    ck_assert(!th_header(&r, "Content-Encoding", v, sizeof v));
    ck_assert_uint_eq(r.len, flen);
    ck_assert(memcmp(r.body, file, flen) == 0);
    ck_assert(th_header(&r, "ETag", etag, sizeof etag));
    assert_nosniff(&r);
    th_resp_free(&r);

    rq.header = "Accept-Encoding: gzip";
    th_http(PORT, &rq, &r);
    ck_assert_int_eq(r.status, 200);
    assert_header(&r, "Content-Encoding", "gzip");
    ck_assert(r.len < flen / 4); /* the document is mostly repeated keys */
    {
        char *plain = gunzip(r.body, r.len, &glen);
        ck_assert_uint_eq(glen, flen);
        ck_assert(memcmp(plain, file, flen) == 0);
        free(plain);
    }
    ck_assert(th_header(&r, "ETag", etag_gz, sizeof etag_gz));
    ck_assert_str_ne(etag_gz, etag);
    ck_assert_ptr_nonnull(strstr(etag_gz, "-gz\""));
    th_resp_free(&r);

    /* Each coding revalidates against its own tag only. */
    snprintf(hdr, sizeof hdr, "If-None-Match: %s", etag);
    rq.header = hdr;
    th_http(PORT, &rq, &r);
    ck_assert_int_eq(r.status, 304);
    ck_assert_uint_eq(r.len, 0);
    ck_assert(th_header(&r, "ETag", v, sizeof v));
    ck_assert_str_eq(v, etag);
    th_resp_free(&r);
    snprintf(hdr, sizeof hdr, "If-None-Match: %s", etag_gz);
    th_http(PORT, &rq, &r);
    ck_assert_int_eq(r.status, 200); /* identity asked, gzip tag given */
    ck_assert_uint_eq(r.len, flen);
    th_resp_free(&r);

    /* The bytes are the document's, whatever answered them. */
    {
        json_t *j = th_json_parse(file, flen);
        ck_assert(json_is_string(json_object_get(j, "openapi")));
        json_decref(j);
    }

    rq = (th_req){ .method = "POST",
                   .path = "/openapi.json",
                   .content_type = "application/json",
                   .body = "{}",
                   .body_len = 2 };
    th_http(PORT, &rq, &r);
    assert_problem(&r, 405, NULL);
    assert_header(&r, "Allow", "GET, HEAD");
    th_resp_free(&r);
    free(file);
}
END_TEST

/* The document is read when the server starts: changing the file later
 * changes nothing served; a missing file answers 404 and one over the
 * static cap the file-too-large problem, both for as long as it runs. */
START_TEST(test_openapi_at_start)
{
    char dir[] = "/tmp/ts-openapi-XXXXXX";
    char path[64], cmd[128];
    th_server s;
    th_resp r;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/doc.json", dir);
    th_write_file(dir, "doc.json", "{\"openapi\":\"3.1.0\",\"v\":1}");
    {
        const char *const args[] = { "--openapi", path, NULL };
        ck_assert_int_eq(th_start(&s, args), 0);
    }
    th_write_file(dir, "doc.json", "{\"openapi\":\"3.1.0\",\"v\":2222}");
    r = th_get(s.port, "/openapi.json");
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "{\"openapi\":\"3.1.0\",\"v\":1}");
    th_resp_free(&r);
    ck_assert_int_eq(th_stop(&s, 20000), 0);

    ck_assert_int_eq(unlink(path), 0);
    {
        const char *const args[] = { "--openapi", path, NULL };
        ck_assert_int_eq(th_start(&s, args), 0);
    }
    th_write_file(dir, "doc.json", "{}"); /* too late */
    r = th_get(s.port, "/openapi.json");
    assert_problem(&r, 404, NULL);
    th_resp_free(&r);
    ck_assert_int_eq(th_stop(&s, 20000), 0);

    /* One byte over TS_STATIC_FILE_MAX (4 MiB), as a sparse file. */
    {
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(ftruncate(fileno(f), 4 * 1024 * 1024 + 1), 0);
        fclose(f);
        const char *const args[] = { "--openapi", path, NULL };
        ck_assert_int_eq(th_start(&s, args), 0);
    }
    r = th_get(s.port, "/openapi.json");
    assert_problem(&r, 500, NULL);
    ck_assert_ptr_nonnull(strstr(r.body, "file-too-large"));
    ck_assert_ptr_nonnull(strstr(r.body, "\"title\":\"File too large to serve\""));
    th_resp_free(&r);
    ck_assert_int_eq(th_stop(&s, 20000), 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* errors                                                              */
/* ------------------------------------------------------------------ */

/* The error classes (and the imports, and a few successes) are data:
 * every case of tests/data/api_cases that runs "via" http, through the
 * same runner as tests/api/test_cases.c (tests/helpers/th_cases.c), with
 * the answer read off the wire: status, Content-Type, Allow, body. */
static void http_send(void *ctx, const th_case_req *rq, th_case_resp *out)
{
    unsigned port = *(const unsigned *)ctx;
    bool has_body = rq->body_len > 0 || strcmp(rq->method, "POST") == 0;
    /* path_as_is: "/../" and "/./" reach the server as the case spells them */
    th_req q = { .method = rq->method,
                 .path = rq->route,
                 .content_type = rq->content_type,
                 .body = has_body ? rq->body : NULL,
                 .body_len = rq->body_len,
                 .path_as_is = true };
    th_resp r;
    char v[256];

    th_http(port, &q, &r);
    ck_assert_msg(r.status != 0, "%s %s: no answer (curl %d)", rq->method, rq->route,
                  (int)r.curl_rc);
    assert_nosniff(&r);
    out->status = (unsigned)r.status;
    out->content_type = th_header(&r, "Content-Type", v, sizeof v) ? strdup(v) : NULL;
    out->allow = th_header(&r, "Allow", v, sizeof v) ? strdup(v) : NULL;
    out->body = r.body;
    out->body_len = r.len;
    r.body = NULL;
    th_resp_free(&r);
}

START_TEST(test_case)
{
    th_transport t = { "http", http_send, &th_shared.port };

    th_case_run(json_array_get(g_cases, (size_t)_i), g_data, &t);
}
END_TEST

/* A body of exactly n bytes: a valid request padded with spaces. */
static char *padded_body(size_t n)
{
    char *b = malloc(n + 1);
    ck_assert_ptr_nonnull(b);
    memset(b, ' ', n);
    memcpy(b, preset_body, strlen(preset_body));
    b[n] = '\0';
    return b;
}

START_TEST(test_body_cap_early)
{
    /* Content-Length over the cap is refused before any body is sent:
     * the answer arrives although we never send a byte of it. */
    int fd = th_connect(PORT);
    ck_assert_int_ge(fd, 0);
    const char *head = "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
                       "Content-Type: application/json\r\n"
                       "Content-Length: 1000000\r\n\r\n";
    ck_assert_int_eq(th_send_all(fd, head, strlen(head)), 0);
    char buf[4096];
    th_recv_all(fd, buf, sizeof buf, 3000);
    close(fd);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 413 ", 13) == 0, "%.200s", buf);
    ck_assert_ptr_nonnull(strstr(buf, "application/problem+json"));
}
END_TEST

/* An answer sent before the body (413 at the headers) ends in a FIN, not
 * a reset: the server reads what had arrived before it closes (server/
 * ts_request.c drain_unread).  The reset made curl, still sending a body
 * over the cap, fail its send and never read the 413 ("no answer (curl
 * 55)" for the over-cap api cases below, 2 in 20,000 such POSTs under
 * load). */
START_TEST(test_body_cap_no_reset)
{
    const char *head = "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
                       "Content-Type: application/json\r\n"
                       "Content-Length: 65537\r\n\r\n";
    size_t hl = strlen(head), bl = 16u * 1024u;
    char *req = malloc(hl + bl), buf[4096];
    int err = 0;
    socklen_t el = sizeof err;

    ck_assert_ptr_nonnull(req);
    memcpy(req, head, hl);
    memset(req + hl, ' ', bl);
    /* One send of 16 KiB, one loopback segment (under half of any window,
     * where Linux would push a first part): all of it is in the server's
     * socket before it reads the head, and half of it is still unread
     * when it answers (MHD 0.9.75 reads 8 KiB, half its 16 KiB pool). */
    int fd = th_connect(PORT);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(th_send_all(fd, req, hl + bl), 0);
    free(req);
    th_recv_all(fd, buf, sizeof buf, 3000); /* to the FIN */
    ck_assert_msg(strncmp(buf, "HTTP/1.1 413 ", 13) == 0, "%.200s", buf);
    /* A reset comes with the close, right after the FIN; none within
     * 500 ms (events 0: poll reports only an error or a hang-up). */
    struct pollfd pf = { fd, 0, 0 };
    int ready = poll(&pf, 1, 500);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
    close(fd);
    ck_assert_msg(ready == 0 && err == 0, "reset after the 413: revents %#x, %s",
                  (unsigned)pf.revents, strerror(err));
}
END_TEST

START_TEST(test_body_cap_chunked)
{
    /* Chunked below the cap works... */
    th_req rq = { .method = "POST",
                  .path = "/v1/memory",
                  .content_type = "application/json",
                  .chunked = true,
                  .body = preset_body,
                  .body_len = strlen(preset_body) };
    th_resp r;
    th_http(PORT, &rq, &r);
    ck_assert_msg(r.status == 200, "%ld %.300s", r.status, r.body);
    th_resp_free(&r);

    /* ...and 100 KiB of chunks crosses it mid-stream: libmicrohttpd
     * cannot queue a 413 before the body ends, so the server drops the
     * connection (issue 14; tests/server/test_hardening.c streams 32 MiB
     * to show it stops reading).  No answer at all, never a 200. */
    char *b = padded_body(100u * 1024u);
    rq.body = b;
    rq.body_len = 100u * 1024u;
    th_http(PORT, &rq, &r);
    ck_assert_msg(r.status == 0, "status %ld: %.200s", r.status, r.body);
    th_resp_free(&r);
    free(b);
}
END_TEST

START_TEST(test_huge_content_length)
{
    /* Overflowing Content-Length: a 4xx from MHD or from us, never 5xx. */
    int fd = th_connect(PORT);
    ck_assert_int_ge(fd, 0);
    const char *head = "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
                       "Content-Length: 99999999999999999999999999\r\n\r\n";
    ck_assert_int_eq(th_send_all(fd, head, strlen(head)), 0);
    char buf[4096];
    th_recv_all(fd, buf, sizeof buf, 3000);
    close(fd);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 4", 10) == 0, "%.200s", buf);
}
END_TEST

/* ------------------------------------------------------------------ */
/* concurrency                                                         */
/* ------------------------------------------------------------------ */

#define CONC_THREADS  16
#define CONC_REQUESTS 50

typedef struct conc_arg {
    const char *want; /* reference body */
    size_t want_len;
    int ok; /* 200 with an identical body */
    long last_status;
} conc_arg;

static void *conc_worker(void *p)
{
    conc_arg *a = p;
    CURL *h = curl_easy_init(); /* one keep-alive connection per thread */
    for (int i = 0; h != NULL && i < CONC_REQUESTS; i++) {
        th_req rq = { .method = "POST",
                      .path = "/v1/memory",
                      .content_type = "application/json",
                      .body = preset_body,
                      .body_len = strlen(preset_body),
                      .handle = h };
        th_resp r;
        th_http(PORT, &rq, &r);
        a->last_status = r.status;
        if (r.status == 200 && r.len == a->want_len && memcmp(r.body, a->want, r.len) == 0)
            a->ok++;
        th_resp_free(&r);
    }
    if (h != NULL)
        curl_easy_cleanup(h);
    return NULL;
}

START_TEST(test_concurrency)
{
    th_resp ref = post("/v1/memory", preset_body);
    ck_assert_int_eq(ref.status, 200);
    pthread_t t[CONC_THREADS];
    conc_arg a[CONC_THREADS];
    for (int i = 0; i < CONC_THREADS; i++) {
        a[i] = (conc_arg){ ref.body, ref.len, 0, 0 };
        ck_assert_int_eq(pthread_create(&t[i], NULL, conc_worker, &a[i]), 0);
    }
    int total = 0;
    for (int i = 0; i < CONC_THREADS; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(a[i].ok == CONC_REQUESTS, "thread %d: %d/%d ok, last %ld", i, a[i].ok,
                      CONC_REQUESTS, a[i].last_status);
        total += a[i].ok;
    }
    ck_assert_int_eq(total, CONC_THREADS * CONC_REQUESTS);
    th_resp_free(&ref);
}
END_TEST

/* ------------------------------------------------------------------ */
/* slow clients and shutdown (own servers)                             */
/* ------------------------------------------------------------------ */

START_TEST(test_slow_client_timeout)
{
    th_server s;
    const char *const args[] = { "--timeout", "1", "--threads", "2", NULL };
    ck_assert_int_eq(th_start(&s, args), 0);
    int fd = th_connect(s.port);
    ck_assert_int_ge(fd, 0);
    /* Half a request line block, then silence.  The clock starts before
     * the send: the server's idle timer starts when it reads these bytes,
     * after the send began, whereas a clock read after send() returns is
     * late by however long a loaded machine keeps us from running there
     * (a 150 ms stall made it "closed after 852 ms"). */
    const char *half = "GET /livez HTTP/1.1\r\nHost: t\r\n";
    double t0 = th_now_ms();
    ck_assert_int_eq(th_send_all(fd, half, strlen(half)), 0);
    char buf[1024];
    size_t n = th_recv_all(fd, buf, sizeof buf, 8000);
    double dt = th_now_ms() - t0;
    close(fd);
    /* Closed by the server 1 s after it read the bytes, with no answer:
     * MHD 0.9.75 times out in milliseconds of CLOCK_MONOTONIC_COARSE, a
     * few ms of granularity (libmicrohttpd src/microhttpd/connection.c
     * connection_check_timedout, mhd_mono_clock.c @940041a).  The upper
     * bound leaves a loaded machine 3 s to run the close and our read. */
    ck_assert_uint_eq(n, 0);
    ck_assert_msg(dt >= 900.0 && dt < 4000.0, "closed after %.0f ms", dt);

    /* The server is still healthy. */
    th_req rq = { .path = "/livez" };
    th_resp r;
    th_http(s.port, &rq, &r);
    ck_assert_int_eq(r.status, 200);
    th_resp_free(&r);
    ck_assert_int_eq(th_stop(&s, 20000), 0);
}
END_TEST

/* The answer cache (server/ts_memo.h): the same request is answered
 * again with the same bytes and headers (but Date), counted as a hit;
 * any other route, Content-Type or body byte is a miss; error answers
 * are never kept.  The deltas are exact: tests run one at a time. */
static double cache_series(const char *result)
{
    char series[96];

    snprintf(series, sizeof series, "trainsize_answer_cache_total{result=\"%s\"}", result);
    return th_scrape(PORT, NULL, series);
}

/* The header block without its Date line (it may tick between two). */
static void headers_but_date(const th_resp *r, char *out, size_t cap)
{
    const char *p = r->headers, *end = r->headers + r->headers_len;
    size_t o = 0;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)(end - p);

        if (strncasecmp(p, "Date:", 5) != 0 && o + n < cap) {
            memcpy(out + o, p, n);
            o += n;
        }
        p += n;
    }
    out[o] = '\0';
}

static th_resp post_ct(const char *path, const char *ct, const char *body)
{
    th_req q = {
        .method = "POST", .path = path, .content_type = ct, .body = body, .body_len = strlen(body)
    };
    th_resp r;

    th_http(PORT, &q, &r);
    return r;
}

START_TEST(test_answer_cache)
{
    /* A body no other test sends, so the first ask is a miss. */
    static const char a[] = "{\"model\":\"llama3-8b\",\"gpu\":\"a100-80\",\"dp\":3,\"seq\":1536}";
    static const char a_ws[] =
        "{ \"model\":\"llama3-8b\",\"gpu\":\"a100-80\",\"dp\":3,\"seq\":1536}";
    static const char b[] = "{\"model\":\"llama3-8b\",\"gpu\":\"a100-80\",\"dp\":5,\"seq\":1536}";
    char h1[4096], h2[4096];
    double hit0 = cache_series("hit"), miss0 = cache_series("miss");

    th_resp r1 = post("/v1/memory", a), r2 = post("/v1/memory", a);
    ck_assert_int_eq(r1.status, 200);
    ck_assert_int_eq(r2.status, 200);
    ck_assert_uint_eq(r1.len, r2.len);
    ck_assert(memcmp(r1.body, r2.body, r1.len) == 0);
    headers_but_date(&r1, h1, sizeof h1);
    headers_but_date(&r2, h2, sizeof h2);
    ck_assert_str_eq(h1, h2);
    assert_nosniff(&r2);
    ck_assert_double_eq(cache_series("hit") - hit0, 1.0);
    ck_assert_double_eq(cache_series("miss") - miss0, 1.0);

    /* Not the same request: another route, Content-Type, body spacing or
     * value.  Each is computed (a miss); the equivalent ones answer the
     * same bytes, the other one differs. */
    th_resp c = post("/v1/plan", a);
    th_resp d = post_ct("/v1/memory", "application/json; charset=utf-8", a);
    th_resp e = post("/v1/memory", a_ws);
    th_resp f = post("/v1/memory", b);
    ck_assert_int_eq(c.status, 200);
    ck_assert_ptr_nonnull(strstr(c.body, "\"sweep\""));
    ck_assert(d.len == r1.len && memcmp(d.body, r1.body, d.len) == 0);
    ck_assert(e.len == r1.len && memcmp(e.body, r1.body, e.len) == 0);
    ck_assert_int_eq(f.status, 200);
    ck_assert(f.len != r1.len || memcmp(f.body, r1.body, f.len) != 0);
    ck_assert_double_eq(cache_series("hit") - hit0, 1.0);
    ck_assert_double_eq(cache_series("miss") - miss0, 5.0);

    /* Problems are computed every time (a miss each), never kept. */
    for (int i = 0; i < 2; i++) {
        th_resp p = post("/v1/memory", "{\"model\":\"llama3-8b\",\"seq\":-5}");
        assert_problem(&p, 400, "/seq");
        th_resp_free(&p);
    }
    ck_assert_double_eq(cache_series("hit") - hit0, 1.0);
    ck_assert_double_eq(cache_series("miss") - miss0, 7.0);
    th_resp_free(&r1);
    th_resp_free(&r2);
    th_resp_free(&c);
    th_resp_free(&d);
    th_resp_free(&e);
    th_resp_free(&f);
}
END_TEST

/* One slot: two requests take turns in it, each still answered right;
 * with 0 nothing is kept. */
START_TEST(test_answer_cache_sizes)
{
    static const char a[] = "{\"model\":\"llama3-8b\",\"dp\":2}";
    static const char b[] = "{\"model\":\"llama3-8b\",\"dp\":4}";
    const char *sizes[] = { "1", "0" };

    for (int k = 0; k < 2; k++) {
        th_server s;
        const char *const args[] = { "--answer-cache", sizes[k], NULL };
        th_resp want[2];

        ck_assert_int_eq(th_start(&s, args), 0);
        want[0] = th_post(s.port, "/v1/memory", a);
        want[1] = th_post(s.port, "/v1/memory", b);
        for (int i = 0; i < 4; i++) {
            th_resp r = th_post(s.port, "/v1/memory", i % 2 ? b : a);
            ck_assert_int_eq(r.status, 200);
            ck_assert(r.len == want[i % 2].len && memcmp(r.body, want[i % 2].body, r.len) == 0);
            th_resp_free(&r);
        }
        /* alternating in one slot: every ask a miss */
        ck_assert_double_eq(th_scrape(s.port, NULL, "trainsize_answer_cache_total{result=\"hit\"}"),
                            0.0);
        th_resp r = th_post(s.port, "/v1/memory", b); /* b holds the slot */
        th_resp_free(&r);
        ck_assert_double_eq(th_scrape(s.port, NULL, "trainsize_answer_cache_total{result=\"hit\"}"),
                            k == 0 ? 1.0 : 0.0);
        th_resp_free(&want[0]);
        th_resp_free(&want[1]);
        ck_assert_int_eq(th_stop(&s, 10000), 0);
    }
}
END_TEST

/* A raw header block has "Connection: close" (any case). */
static bool says_close(const char *h)
{
    static const char want[] = "connection: close";
    size_t i, k;

    for (i = 0; h != NULL && h[i] != '\0'; i++) {
        for (k = 0; want[k] != '\0' && h[i + k] != '\0' && (h[i + k] | 0x20) == (want[k] | 0x20);
             k++)
            ;
        if (want[k] == '\0')
            return true;
    }
    return false;
}

START_TEST(test_graceful_shutdown)
{
    th_server s;
    /* A long idle timeout: the readyz connection below sits idle while the
     * test waits on the gauges (seconds under ASan on a loaded machine);
     * at the default 10 s the server could close it, and once draining
     * has closed the listener curl's retry would find nothing (status 0).
     * (The st == 0 that CI saw here was not that but the server aborting
     * in the drain: test_sigterm_while_accepting.) */
    const char *const args[] = { "--threads", "2", "--timeout", "120", NULL };
    ck_assert_int_eq(th_start(&s, args), 0);

    /* A keep-alive connection opened before the signal, to watch readyz. */
    CURL *keep = curl_easy_init();
    th_req ready = { .path = "/readyz", .handle = keep };
    th_resp r;
    th_http(s.port, &ready, &r);
    ck_assert_int_eq(r.status, 200);
    th_resp_free(&r);
    /* Its answer is in the answer cache now; while draining it must be
     * computed again, with "Connection: close" (checked below). */
    r = th_post(s.port, "/v1/memory", preset_body);
    ck_assert_int_eq(r.status, 200);
    th_resp_free(&r);
    /* ...and out of the in-flight gauge (it drops in the completion
     * callback, which may run just after the answer reached us): else it
     * could stand in for the slow request in the count of 2 below, and
     * the drain find nothing in flight.  Polled on the kept-alive handle
     * used below, so no poll of ours is still counted either. */
    CURL *mh = curl_easy_init();
    double t00 = th_now_ms(), idle = 0;
    while ((idle = th_scrape(s.port, mh, "trainsize_inflight_requests")) != 1.0 &&
           th_now_ms() - t00 < 5000)
        th_sleep_ms(10);
    /* (asserted: past 5 s the count of 2 below would prove nothing) */
    ck_assert_msg(idle == 1.0, "%g requests in flight before the slow one", idle);

    /* A slow request: headers and half the body, then a pause. */
    size_t blen = strlen(preset_body), half = blen / 2;
    char head[256];
    snprintf(head, sizeof head,
             "POST /v1/memory HTTP/1.1\r\nHost: t\r\n"
             "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
             blen);
    int fd = th_connect(s.port);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(th_send_all(fd, head, strlen(head)), 0);
    ck_assert_int_eq(th_send_all(fd, preset_body, half), 0);
    /* It is in flight once the gauge shows it next to /metrics itself.
     * The previous /metrics may still be counted for a moment after its
     * answer reached us (the gauge drops in the completion callback), so
     * wait for exactly 2 rather than reading it once past 2. */
    double t0 = th_now_ms(), seen = 0;
    /* (one kept-alive handle: the previous poll has completed, and left
     * the gauge, before the next one is rendered) */
    while ((seen = th_scrape(s.port, mh, "trainsize_inflight_requests")) != 2.0 &&
           th_now_ms() - t0 < 5000)
        th_sleep_ms(10);
    ck_assert_double_eq(seen, 2.0);
    curl_easy_cleanup(mh);
    /* The watching connection is still the one opened first, and alive. */
    th_http(s.port, &ready, &r);
    ck_assert_int_eq(r.status, 200);
    th_resp_free(&r);

    ck_assert_int_eq(kill(s.pid, SIGTERM), 0);
    /* Draining: readyz on the old connection turns 503.  A readyz routed
     * just before the flag flipped answers 200, and its reply, written
     * after, already says "Connection: close" (ts_reply.c); the next poll
     * then finds the listener shut (status 0).  Either way the server
     * told this connection it is draining. */
    long st = 0;
    bool close_said = false;
    t0 = th_now_ms();
    do {
        th_http(s.port, &ready, &r);
        st = r.status;
        if (st == 200)
            close_said = says_close(r.headers);
        th_resp_free(&r);
        if (st != 503)
            th_sleep_ms(10);
    } while (st == 200 && th_now_ms() - t0 < 5000);
    curl_easy_cleanup(keep);
    ck_assert_msg(st == 503 || (st == 0 && close_said),
                  "readyz while draining: %ld (a 200 before it said close: %d)", st, close_said);
    /* It waits for the slow request rather than exiting. */
    th_sleep_ms(200);
    ck_assert(th_alive(&s));

    ck_assert_int_eq(th_send_all(fd, preset_body + half, blen - half), 0);
    char buf[65536];
    th_recv_all(fd, buf, sizeof buf, 5000);
    close(fd);
    ck_assert_msg(strncmp(buf, "HTTP/1.1 200 ", 13) == 0, "%.200s", buf);
    ck_assert_ptr_nonnull(strstr(buf, "\"memory\""));
    ck_assert_msg(strstr(buf, "\r\nConnection: close\r\n") != NULL, "%.400s", buf);
    /* ...then exits 0 by itself. */
    ck_assert_int_eq(th_wait(&s, 20000), 0);
}
END_TEST

/* SIGTERM while connections keep arriving, on two I/O threads and on one
 * (_i): the drain must not race the threads that accept them.  It did:
 * libmicrohttpd's quiesce aborted when a woken epoll worker had already
 * taken the listen fd out of its set (CI, fresh-root stage, twice: exit
 * 134 at th_stop and status 0 from /readyz here).
 * $TRAINSIZE_TEST_SLOW_QUIESCE, where set, preloads slow_quiesce.c, which
 * holds that window open for 50 ms, so the old server aborted on every run
 * with two threads; without it the test still drives the same path, at the
 * race's natural odds. */
START_TEST(test_sigterm_while_accepting)
{
    const char *shim = getenv("TRAINSIZE_TEST_SLOW_QUIESCE");
    if (shim != NULL && shim[0] != '\0')
        setenv("LD_PRELOAD", shim, 1); /* this forked test only */
    th_server s;
    const char *const args[] = { "--io-threads", _i == 0 ? "2" : "1", NULL };
    ck_assert_int_eq(th_start(&s, args), 0);
    unsetenv("LD_PRELOAD");

    pid_t kid = fork();
    ck_assert_int_ge(kid, 0);
    if (kid == 0) {
        /* New connections, one request each, for 800 ms: every one wakes
         * the I/O threads that still listen. */
        static const char req[] = "GET /livez HTTP/1.1\r\nHost: t\r\n\r\n";
        double end = th_now_ms() + 800;
        while (th_now_ms() < end) {
            int fd = th_connect(s.port);
            if (fd >= 0) {
                (void)th_send_all(fd, req, sizeof req - 1);
                close(fd);
            }
            th_sleep_ms(1);
        }
        _exit(0);
    }
    th_sleep_ms(100);
    ck_assert_int_eq(kill(s.pid, SIGTERM), 0);
    int rc = th_wait(&s, 20000);
    int kst = 0;
    waitpid(kid, &kst, 0);
    ck_assert_msg(rc == 0, "server exit status %d on SIGTERM while accepting", rc);
}
END_TEST

START_TEST(test_cli_flags)
{
    char out[4096], err[4096];
    const char *const bad_port[] = { "--port", "70000", NULL };
    ck_assert_int_eq(th_run(bad_port, NULL, out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "--port") != NULL, "%s", err);

    const char *const none[] = { NULL };
    ck_assert_int_eq(th_run(none, "TRAINSIZE_THREADS=zero", out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "TRAINSIZE_THREADS") != NULL, "%s", err);

    const char *const unknown[] = { "--frobnicate", NULL };
    ck_assert_int_eq(th_run(unknown, NULL, out, sizeof out, err, sizeof err), 2);
    ck_assert_msg(strstr(err, "--frobnicate") != NULL, "%s", err);

    const char *const version[] = { "--version", NULL };
    ck_assert_int_eq(th_run(version, NULL, out, sizeof out, err, sizeof err), 0);
    ck_assert_msg(strncmp(out, "trainsize-server ", 17) == 0, "%s", out);

    const char *const help[] = { "--help", NULL };
    ck_assert_int_eq(th_run(help, NULL, out, sizeof out, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(out, "--body-max"));
}
END_TEST

static Suite *server_suite(void)
{
    Suite *s = suite_create("server");

    TCase *routes = tcase_create("routes");
    tcase_add_unchecked_fixture(routes, th_shared_start, th_shared_stop);
    tcase_set_timeout(routes, 20);
    tcase_add_test(routes, test_presets);
    tcase_add_test(routes, test_gpus);
    tcase_add_test(routes, test_memory);
    tcase_add_test(routes, test_compute);
    tcase_add_test(routes, test_checkpoint);
    tcase_add_test(routes, test_plan);
    tcase_add_test(routes, test_fit);
    tcase_add_test(routes, test_ops);
    tcase_add_test(routes, test_metrics);
    tcase_add_test(routes, test_answer_cache);
    tcase_add_test(routes, test_static_index);
    tcase_add_test(routes, test_static_gzip);
    tcase_add_test(routes, test_openapi);
    suite_add_tcase(s, routes);

    TCase *cases = tcase_create("cases");
    tcase_add_unchecked_fixture(cases, th_shared_start, th_shared_stop);
    tcase_set_timeout(cases, 20);
    tcase_add_loop_test(cases, test_case, 0, (int)json_array_size(g_cases));
    suite_add_tcase(s, cases);

    TCase *errors = tcase_create("errors");
    tcase_add_unchecked_fixture(errors, th_shared_start, th_shared_stop);
    tcase_set_timeout(errors, 20);
    tcase_add_test(errors, test_body_cap_early);
    tcase_add_test(errors, test_body_cap_no_reset);
    tcase_add_test(errors, test_body_cap_chunked);
    tcase_add_test(errors, test_huge_content_length);
    suite_add_tcase(s, errors);

    TCase *conc = tcase_create("concurrency");
    tcase_add_unchecked_fixture(conc, th_shared_start, th_shared_stop);
    tcase_set_timeout(conc, 60);
    tcase_add_test(conc, test_concurrency);
    suite_add_tcase(s, conc);

    TCase *life = tcase_create("lifecycle");
    tcase_set_timeout(life, 60);
    tcase_add_test(life, test_slow_client_timeout);
    tcase_add_test(life, test_graceful_shutdown);
    tcase_add_loop_test(life, test_sigterm_while_accepting, 0, 2);
    tcase_add_test(life, test_answer_cache_sizes);
    tcase_add_test(life, test_cli_flags);
    tcase_add_test(life, test_static_names);
    tcase_add_test(life, test_openapi_at_start);
    suite_add_tcase(s, life);
    return s;
}

int main(void)
{
    char dir[2100];

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    snprintf(g_data, sizeof g_data, "%s/tests/data",
             getenv("TRAINSIZE_SRCDIR") != NULL ? getenv("TRAINSIZE_SRCDIR") : ".");
    snprintf(dir, sizeof dir, "%s/api_cases", g_data);
    g_cases = th_cases_load(dir, "http");
    fprintf(stderr, "test_server: %zu cases from %s\n", json_array_size(g_cases), dir);
    SRunner *sr = srunner_create(server_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    json_decref(g_cases);
    curl_global_cleanup();
    if (th_shared_bad_exits() > 0)
        fprintf(stderr, "test_server: %d shared server(s) exited non-zero\n",
                th_shared_bad_exits());
    return failed == 0 && th_shared_bad_exits() == 0 ? 0 : 1;
}
