/*
 * test_utf8.c - the text cutter (lib/ts_utf8.c): hand-worked cuts, then
 * every max over strings built from characters of every width, against
 * the boundaries found by decoding the string here.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_utf8.h"

/* é U+00E9 (2 bytes), € U+20AC (3), 😀 U+1F600 (4): RFC 3629 encodings. */
#define E2 "\xc3\xa9"
#define E3 "\xe2\x82\xac"
#define E4 "\xf0\x9f\x98\x80"

START_TEST(test_cut_by_hand)
{
    /* "a" + é: cutting at 2 would keep é's lead byte alone. */
    ck_assert_uint_eq(ts_utf8_cut("a" E2, 1), 1);
    ck_assert_uint_eq(ts_utf8_cut("a" E2, 2), 1);
    ck_assert_uint_eq(ts_utf8_cut("a" E2, 3), 3);
    ck_assert_uint_eq(ts_utf8_cut("a" E2, 99), 3);
    /* € and 😀: every cut inside goes back to the lead. */
    ck_assert_uint_eq(ts_utf8_cut(E3 E3, 3), 3);
    ck_assert_uint_eq(ts_utf8_cut(E3 E3, 4), 3);
    ck_assert_uint_eq(ts_utf8_cut(E3 E3, 5), 3);
    ck_assert_uint_eq(ts_utf8_cut(E3 E3, 6), 6);
    ck_assert_uint_eq(ts_utf8_cut(E4, 1), 0);
    ck_assert_uint_eq(ts_utf8_cut(E4, 3), 0);
    ck_assert_uint_eq(ts_utf8_cut(E4, 4), 4);
    ck_assert_uint_eq(ts_utf8_cut("", 5), 0);
    ck_assert_uint_eq(ts_utf8_cut("abc", 0), 0);
    ck_assert_uint_eq(ts_utf8_cut(E2, 0), 0);
    /* issue 22's note: "a" * 47 + "é" * 10 under a 48-byte bound keeps the a's */
    {
        char s[80];

        memset(s, 'a', 47);
        s[47] = '\0';
        for (int i = 0; i < 10; i++)
            strcat(s, E2);
        ck_assert_uint_eq(ts_utf8_cut(s, 48), 47);
        ck_assert_int_eq(ts_utf8_prec(s, 48), 47);
        ck_assert_uint_eq(ts_utf8_cut(s, 49), 49);
    }
    /* Ill-formed input is cut where asked: a run of 4 continuation
     * bytes has no lead within reach, a lone continuation after a
     * complete character is not part of it. */
    ck_assert_uint_eq(ts_utf8_cut("a\x80\x80\x80\x80\x80", 5), 5);
    ck_assert_uint_eq(ts_utf8_cut(E2 "\x80"
                                     "b",
                                  2),
                      2);
    /* a lead byte with too few continuations before the cut */
    ck_assert_uint_eq(ts_utf8_cut("\xe2\x82\x82\x82", 2), 0);
    /* precision is an int: a bound past INT_MAX is clamped, not wrapped */
    ck_assert_int_eq(ts_utf8_prec("abc", (size_t)-1), 3);
}
END_TEST

/* ts_utf8_cut reads at most max + 1 bytes: no NUL in reach (ASan checks
 * the heap block's end). */
START_TEST(test_cut_reads_max_plus_one)
{
    static const char ee[12] = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";

    for (size_t max = 0; max < sizeof ee; max++) {
        char *s = malloc(max + 1);

        ck_assert_ptr_nonnull(s);
        /* é é é ..., no NUL (copied: gcc -O3 misjudges a fill loop's bound) */
        memcpy(s, ee, max + 1);
        ck_assert_uint_eq(ts_utf8_cut(s, max), max - max % 2);
        free(s);
    }
}
END_TEST

/* Strings of 1- to 4-byte characters, every max from 0 to past the end:
 * the cut is the largest character boundary <= max (boundaries found by
 * decoding the string as it was built). */
START_TEST(test_cut_every_max)
{
    static const char *const ch[] = { "a", E2, E3, E4 };
    unsigned seed = 12345;

    for (int t = 0; t < 2000; t++) {
        char s[64];
        bool bound[64];
        size_t len = 0;

        memset(bound, 0, sizeof bound);
        bound[0] = true;
        s[0] = '\0';
        while (len < 40) {
            const char *c;

            seed = seed * 1103515245u + 12345u;
            c = ch[(seed >> 16) % 4];
            memcpy(s + len, c, strlen(c));
            len += strlen(c);
            bound[len] = true;
        }
        s[len] = '\0';
        for (size_t max = 0; max <= len + 2; max++) {
            size_t want = max < len ? max : len;

            while (!bound[want])
                want--;
            ck_assert_msg(ts_utf8_cut(s, max) == want, "string %d, max %zu: got %zu, want %zu", t,
                          max, ts_utf8_cut(s, max), want);
        }
    }
}
END_TEST

START_TEST(test_copy)
{
    char d[4];

    ck_assert_uint_eq(ts_utf8_copy(d, sizeof d, "ab" E2), 2);
    ck_assert_str_eq(d, "ab");
    ck_assert_uint_eq(ts_utf8_copy(d, sizeof d, "a" E2 "z"), 3);
    ck_assert_str_eq(d, "a" E2);
    ck_assert_uint_eq(ts_utf8_copy(d, sizeof d, E4), 0);
    ck_assert_str_eq(d, "");
    ck_assert_uint_eq(ts_utf8_copy(d, 1, "abc"), 0);
    ck_assert_str_eq(d, "");
    ck_assert_uint_eq(ts_utf8_copy(d, 0, "abc"), 0); /* nothing written */
}
END_TEST

START_TEST(test_trim)
{
    static const struct {
        const char *in;
        size_t out;
    } c[] = {
        { "abc", 3 },
        { "a" E2, 3 },          /* complete */
        { "a\xc3", 1 },         /* lead alone */
        { "a\xe2\x82", 1 },     /* 2 of 3 */
        { "a\xf0\x9f\x98", 1 }, /* 3 of 4 */
        { "a" E4, 5 },
        { "a\x80\x80\x80\x80", 5 }, /* no lead within 4: left alone */
        { E2 "\x80", 3 },           /* stray continuation after é */
        { "", 0 },
    };
    char buf[16];

    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        snprintf(buf, sizeof buf, "%s", c[i].in);
        ck_assert_msg(ts_utf8_trim(buf, strlen(buf)) == c[i].out, "case %zu", i);
        ck_assert_uint_eq(strlen(buf), c[i].out);
    }
    /* what vsnprintf leaves: "a" * 6 + "é" cut at 7 bytes */
    memcpy(buf, "aaaaaa" E2, 7);
    buf[7] = '\0';
    ck_assert_uint_eq(ts_utf8_trim(buf, strlen(buf)), 6);
    ck_assert_str_eq(buf, "aaaaaa");
}
END_TEST

/* jansson's "invalid escape near '\"sol\\\xf0'": the token stops at the
 * byte that failed, the emoji's lead, inside the text (fuzz_api finding);
 * every incomplete sequence goes, wherever it stands. */
START_TEST(test_drop_cut)
{
    static const struct {
        const char *in, *out;
    } c[] = {
        { "near '\"sol\\\xf0'", "near '\"sol\\'" },
        { "abc", "abc" },
        { "a" E2 "b" E3 "c" E4, "a" E2 "b" E3 "c" E4 }, /* complete: kept */
        { "a\xc3", "a" },                               /* at the end, as trim */
        { "\xe2\x82x\xf0\x9f\x98y", "xy" },             /* 2 of 3, 3 of 4 */
        { "\xc3" E2, E2 },                              /* a lead before a lead */
        { E2 "\x80\x80", E2 "\x80\x80" },               /* stray continuations stay */
        { "", "" },
    };
    char buf[32];

    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        snprintf(buf, sizeof buf, "%s", c[i].in);
        ck_assert_msg(ts_utf8_drop_cut(buf) == strlen(c[i].out), "case %zu", i);
        ck_assert_msg(strcmp(buf, c[i].out) == 0, "case %zu", i);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("utf8");
    TCase *tc = tcase_create("cut");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_cut_by_hand);
    tcase_add_test(tc, test_cut_reads_max_plus_one);
    tcase_add_test(tc, test_cut_every_max);
    tcase_add_test(tc, test_copy);
    tcase_add_test(tc, test_trim);
    tcase_add_test(tc, test_drop_cut);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
