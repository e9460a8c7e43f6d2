/*
 * test_etag.c - unit tests of server/ts_etag.c (If-None-Match, content
 * tags) and server/ts_cat.c (the catalogue answers built at start).
 * Expected values by hand from RFC 9110 13.1.2 and the FNV-1a test
 * vectors (draft-eastlake-fnv, "" / "a" / "foobar").
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api.h"
#include "ts_cat.h"
#include "ts_etag.h"

START_TEST(test_match_forms)
{
    static const struct {
        const char *inm;
        bool match;
    } cases[] = {
        { "\"t1\"", true },
        { "W/\"t1\"", true },      /* weak comparison */
        { "\"a\", \"t1\"", true }, /* a list */
        { "\"a\",\"t1\",\"b\"", true },
        { " \t\"a\" ,\tW/\"t1\" ", true }, /* OWS around members */
        { "*", true },
        { "\"a\", *", true },
        { "\"t\"", false },
        { "\"t1x\"", false },
        { "\"t1", false },           /* unterminated */
        { "t1", false },             /* not quoted */
        { "\"a,\"t1\"\"", false },   /* "a," is one tag, then junk */
        { "\"a,b\", \"t1\"", true }, /* a comma inside a tag */
        { "", false },
        { ",,", false },
        { "W/", false },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(ts_etag_match(cases[i].inm, "\"t1\"") == cases[i].match, "If-None-Match: %s",
                      cases[i].inm);
    ck_assert(!ts_etag_match(NULL, "\"t1\""));
    ck_assert(ts_etag_match("\"t1\"", "W/\"t1\"")); /* our own tag weak */
    ck_assert(!ts_etag_match("*", NULL));
}
END_TEST

START_TEST(test_tag_of)
{
    char t[TS_ETAG_LEN];

    ts_etag_of("", 0, t);
    ck_assert_str_eq(t, "\"0-cbf29ce484222325\"");
    ts_etag_of("a", 1, t);
    ck_assert_str_eq(t, "\"1-af63dc4c8601ec8c\"");
    ts_etag_of("foobar", 6, t);
    ck_assert_str_eq(t, "\"6-85944171f73967e8\"");
    ck_assert(ts_etag_match(t, "\"6-85944171f73967e8\""));
}
END_TEST

/* Every catalogue route is cached, with the api layer's bytes. */
START_TEST(test_cat_build)
{
    const char *const *paths = ts_api_catalogues();
    ts_cat cat;
    size_t n = 0;

    ck_assert_int_eq(ts_cat_build(&cat), TS_CAT_OK);
    for (; paths[n] != NULL; n++) {
        const ts_cat_entry *e = ts_cat_find(&cat, paths[n]);
        ts_api_response r;
        char t[TS_ETAG_LEN];

        ck_assert_msg(e != NULL, "%s not cached", paths[n]);
        ck_assert_int_eq(ts_api_handle("GET", paths[n], NULL, NULL, 0, &r), 0);
        ck_assert_uint_eq(e->len, r.body_len);
        ck_assert(memcmp(e->body, r.body, r.body_len) == 0);
        ck_assert_str_eq(e->content_type, "application/json");
        ts_etag_of(r.body, r.body_len, t);
        ck_assert_str_eq(e->etag, t);
        ts_api_response_free(&r);
    }
    ck_assert_uint_eq(cat.n, n);
    ck_assert_uint_eq(n, 2);
    ck_assert_ptr_null(ts_cat_find(&cat, "/v1/memory"));
    ck_assert_ptr_null(ts_cat_find(&cat, "/v1/gpus/"));
    ts_cat_free(&cat);
    ck_assert_uint_eq(cat.n, 0);
}
END_TEST

/* The gzip coding's tag: "-gz" inside the quotes, in place or copied;
 * refused (out untouched) unquoted or when it would not fit. */
START_TEST(test_etag_gz)
{
    char out[16] = "untouched";
    char in_place[16] = "\"1f-abc\"";

    ck_assert(ts_etag_gz("\"1f-abc\"", out, sizeof out));
    ck_assert_str_eq(out, "\"1f-abc-gz\"");
    ck_assert(ts_etag_gz(in_place, in_place, sizeof in_place));
    ck_assert_str_eq(in_place, "\"1f-abc-gz\"");
    strcpy(out, "untouched");
    ck_assert(!ts_etag_gz("abc", out, sizeof out));
    ck_assert(!ts_etag_gz("\"", out, sizeof out));
    /* 12 + 3 = 15 bytes and the NUL: 16 fits, 15 does not. */
    ck_assert(!ts_etag_gz("\"0123456789\"", out, 15));
    ck_assert_str_eq(out, "untouched");
    ck_assert(ts_etag_gz("\"0123456789\"", out, 16));
    ck_assert_str_eq(out, "\"0123456789-gz\"");
}
END_TEST

static Suite *etag_suite(void)
{
    Suite *s = suite_create("etag");
    TCase *t = tcase_create("etag");

    tcase_add_test(t, test_match_forms);
    tcase_add_test(t, test_tag_of);
    tcase_add_test(t, test_cat_build);
    tcase_add_test(t, test_etag_gz);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(etag_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
