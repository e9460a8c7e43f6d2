/*
 * test_dtoa.c - ts_dtoa (Ryu, Adams 2018) against the C library.
 *
 * Every text must read back (strtod) as exactly the double written, be a
 * JSON number (RFC 8259 section 6), have no more digits than the
 * printf %.15g/%.16g/%.17g loop the JSON writer used before, and no
 * fewer than it needs: the correctly rounded text one digit shorter
 * (glibc's printf is exact) must not read back.  Where that loop found
 * the same number of digits, the text must be the same byte for byte,
 * so answers keep their layout.  Built twice: with the compiler's
 * 128-bit integers and with the portable 64-bit product
 * (TS_DTOA_NO_INT128).
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_dtoa.h"
#include "../helpers/th_sample.h"

#define RANDOM_DOUBLES TH_SAMPLE(1000000)
#define PRINTF_EVERY   10 /* the printf comparisons on every 10th: 1e5 */

static double from_bits(uint64_t b)
{
    double v;

    memcpy(&v, &b, sizeof v);
    return v;
}

/* xorshift64* (Vigna 2016): fixed seed, the same doubles every run. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

/* The writer's former number text: fewest of 15, 16, 17 %g digits that
 * read back. */
static int old_format(char *buf, size_t size, double v)
{
    int n = 0;

    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, size, "%.*g", prec, v);
        if (prec == 17 || strtod(buf, NULL) == v)
            break;
    }
    return n;
}

/* Significant digits of a number text: first to last non-zero digit of
 * the mantissa ("120" and "1.2e+02" have 2). */
static int sig_digits(const char *s)
{
    int n = 0, pending = 0, lead = 1;

    for (; *s != '\0' && *s != 'e' && *s != 'E'; s++) {
        if (*s < '0' || *s > '9')
            continue;
        if (lead && *s == '0')
            continue;
        lead = 0;
        if (*s == '0') {
            pending++;
        } else {
            n += pending + 1;
            pending = 0;
        }
    }
    return n;
}

/* RFC 8259: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static int is_json_number(const char *s)
{
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return 0;
    if (*s == '.') {
        s++;
        if (*s < '0' || *s > '9')
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (*s < '0' || *s > '9')
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

/* One value through every check; printf: also the printf comparisons. */
static void check_value(double v, int printf_too)
{
    char buf[TS_DTOA_BUF + 8], old[64], shorter[64];
    size_t n;

    memset(buf, 'x', sizeof buf);
    n = ts_dtoa_format(v, buf);
    TH_ASSERT(n > 0 && n < TS_DTOA_BUF && strlen(buf) == n, "%a: length %zu", v, n);
    TH_ASSERT(is_json_number(buf), "%a: \"%s\" is not a JSON number", v, buf);
    TH_ASSERT(strtod(buf, NULL) == v || (v == 0 && strtod(buf, NULL) == 0),
              "%a: \"%s\" reads back as %a", v, buf, strtod(buf, NULL));
    if (v != 0 && isfinite(v)) {
        uint64_t d;
        int32_t e;
        int k = ts_dtoa_shortest(fabs(v), &d, &e);

        TH_ASSERT(d % 10 != 0, "%a: digits %llu end in 0", v, (unsigned long long)d);
        TH_ASSERT(k == sig_digits(buf), "%a: %d significant digits in \"%s\"", v, k, buf);
    }
    if (!printf_too || v == 0)
        return;
    {
        int digits = sig_digits(buf);
        int od;

        old_format(old, sizeof old, v);
        od = sig_digits(old);
        TH_ASSERT(digits <= od, "%a: \"%s\" longer than \"%s\"", v, buf, old);
        if (digits == od)
            TH_ASSERT(strcmp(buf, old) == 0, "%a: \"%s\", before \"%s\"", v, buf, old);
        if (digits > 1) {
            /* One digit fewer, correctly rounded, does not read back. */
            snprintf(shorter, sizeof shorter, "%.*e", digits - 2, v);
            TH_ASSERT(strtod(shorter, NULL) != v, "%a: \"%s\" is shorter than \"%s\"", v, shorter,
                      buf);
        }
        /* The same number of digits, correctly rounded: when it reads
         * back it is what we wrote (the closest of the shortest). */
        snprintf(shorter, sizeof shorter, "%.*e", digits - 1, v);
        if (strtod(shorter, NULL) == v) {
            uint64_t d;
            int32_t e;
            char mine[64];

            ts_dtoa_shortest(fabs(v), &d, &e);
            snprintf(mine, sizeof mine, "%s%llue%d", v < 0 ? "-" : "", (unsigned long long)d,
                     (int)e);
            TH_ASSERT(strtod(mine, NULL) == v, "%a: %s", v, mine);
            TH_ASSERT(sig_digits(shorter) == digits, "%a", v);
            {
                /* digits of printf's d.ddd against ours */
                char a[32], b[32];
                size_t ai = 0, bi = 0;

                for (const char *c = shorter; *c != '\0' && *c != 'e'; c++)
                    if (*c >= '0' && *c <= '9')
                        a[ai++] = *c;
                a[ai] = '\0';
                snprintf(b, sizeof b, "%llu", (unsigned long long)d);
                bi = strlen(b);
                TH_ASSERT(ai == bi && memcmp(a, b, ai) == 0, "%a: printf %s, ours %s", v, shorter,
                          b);
            }
        }
    }
}

/* Texts worked out by hand from the %.Pg rule (P = max(digits, 15)). */
START_TEST(test_known)
{
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        { 0.0, "0" },
        { -0.0, "0" },
        { 1.0, "1" },
        { -2.0, "-2" },
        { 0.1, "0.1" },
        { 0.3, "0.3" },
        { 0.1 + 0.2, "0.30000000000000004" }, /* 17 digits, fixed */
        { 1.0 / 3.0, "0.3333333333333333" },  /* 16 digits */
        { 123456.789, "123456.789" },
        { 0.0001, "0.0001" }, /* exponent -4: still fixed */
        { 0.00001, "1e-05" }, /* -5: exponent form, 2 digits */
        { 1.5e-7, "1.5e-07" },
        { 1e15, "1e+15" },                          /* exponent 15 >= P = 15 */
        { 123456789012345.6, "123456789012345.6" }, /* 16 digits, x = 14 */
        { 1e21, "1e+21" },
        { 1e100, "1e+100" },
        { 9007199254740994.0, "9007199254740994" },   /* 2^53 + 2: 16 digits, x 15 < 16 */
        { 9007199254740992.0, "9007199254740992" },   /* 2^53 */
        { 12345678901234568.0, "12345678901234568" }, /* 17 digits, x 16 < 17 */
        { 1.2e16, "1.2e+16" },
        { DBL_MAX, "1.7976931348623157e+308" },
        { DBL_MIN, "2.2250738585072014e-308" },
        { 5e-324, "5e-324" },                                  /* smallest subnormal: 1 digit */
        { 2.2250738585072009e-308, "2.225073858507201e-308" }, /* largest subnormal */
        { -1.5, "-1.5" },
        { 2.5e-5, "2.5e-05" },
        { 430820738407431.8, "430820738407431.8" },
        { 7.680865431066018, "7.680865431066018" },
        { 71525.57373046875, "71525.57373046875" },
    };
    char buf[TS_DTOA_BUF];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = ts_dtoa_format(cases[i].v, buf);

        ck_assert_msg(strcmp(buf, cases[i].text) == 0, "%a: \"%s\", want \"%s\"", cases[i].v, buf,
                      cases[i].text);
        ck_assert_uint_eq(n, strlen(cases[i].text));
        check_value(cases[i].v, 1);
    }
}
END_TEST

START_TEST(test_shortest_parts)
{
    uint64_t d;
    int32_t e;

    ck_assert_int_eq(ts_dtoa_shortest(1.0, &d, &e), 1);
    ck_assert_uint_eq(d, 1);
    ck_assert_int_eq(e, 0);
    ck_assert_int_eq(ts_dtoa_shortest(0.3, &d, &e), 1);
    ck_assert_uint_eq(d, 3);
    ck_assert_int_eq(e, -1);
    ck_assert_int_eq(ts_dtoa_shortest(5e-324, &d, &e), 1);
    ck_assert_uint_eq(d, 5);
    ck_assert_int_eq(e, -324);
    ck_assert_int_eq(ts_dtoa_shortest(DBL_MAX, &d, &e), 17);
    ck_assert_uint_eq(d, UINT64_C(17976931348623157));
    ck_assert_int_eq(e, 292);
    ck_assert_int_eq(ts_dtoa_shortest(1e23, &d, &e), 1); /* 1e23 is not exact */
    ck_assert_uint_eq(d, 1);
    ck_assert_int_eq(e, 23);
}
END_TEST

/* Integers, two digits at a time: the edges of every digit count and
 * random values against printf's %llu. */
START_TEST(test_u64)
{
    uint64_t s = 42, p = 1;
    char buf[24], want[24];
    size_t n;

    n = ts_dtoa_u64(0, buf);
    ck_assert(n == 1 && buf[0] == '0');
    n = ts_dtoa_u64(UINT64_MAX, buf);
    ck_assert_uint_eq(n, 20);
    ck_assert(memcmp(buf, "18446744073709551615", 20) == 0);
    for (int k = 0; k < 20; k++, p *= 10) {
        for (int d = -1; d <= 1; d++) {
            uint64_t v = p + (uint64_t)d;

            n = ts_dtoa_u64(v, buf);
            snprintf(want, sizeof want, "%llu", (unsigned long long)v);
            TH_ASSERT(n == strlen(want), "\"%.*s\", want \"%s\"", (int)n, buf, want);
            TH_ASSERT(memcmp(buf, want, n) == 0, "\"%.*s\", want \"%s\"", (int)n, buf, want);
        }
    }
    for (int i = 0; i < 100000; i++) {
        uint64_t v = next_random(&s) >> (next_random(&s) % 64);

        n = ts_dtoa_u64(v, buf);
        snprintf(want, sizeof want, "%llu", (unsigned long long)v);
        TH_ASSERT(n == strlen(want), "\"%.*s\", want \"%s\"", (int)n, buf, want);
        TH_ASSERT(memcmp(buf, want, n) == 0, "\"%.*s\", want \"%s\"", (int)n, buf, want);
    }
}
END_TEST

START_TEST(test_nonfinite)
{
    char buf[TS_DTOA_BUF];

    ck_assert_uint_eq(ts_dtoa_format(INFINITY, buf), 0);
    ck_assert_str_eq(buf, "");
    ck_assert_uint_eq(ts_dtoa_format(-INFINITY, buf), 0);
    ck_assert_uint_eq(ts_dtoa_format(NAN, buf), 0);
}
END_TEST

/* Subnormals, binade edges, powers of 2 and 10, 2^53 and its
 * neighbours, integers. */
START_TEST(test_edges)
{
    char text[32];
    int k;

    for (k = -1074; k <= 1023; k++) {
        double p = ldexp(1.0, k);

        check_value(p, 1);
        check_value(nextafter(p, 0.0), 1);
        check_value(nextafter(p, INFINITY), 1);
        check_value(-p, 0);
    }
    for (k = -323; k <= 308; k++) {
        double p;

        snprintf(text, sizeof text, "1e%d", k);
        p = strtod(text, NULL);
        check_value(p, 1);
        check_value(nextafter(p, 0.0), 1);
        check_value(nextafter(p, INFINITY), 1);
        snprintf(text, sizeof text, "9.5e%d", k); /* ties of the last digits */
        p = strtod(text, NULL);
        if (isfinite(p))
            check_value(p, 1);
    }
    for (uint64_t b = 1; b <= 2000; b++) { /* smallest subnormals */
        check_value(from_bits(b), 1);
        check_value(from_bits(UINT64_C(0x000fffffffffffff) - b + 1), 1);
    }
    {
        double p53 = 9007199254740992.0;

        for (k = -50; k <= 50; k++)
            check_value(p53 + 2.0 * k, 1);
        check_value(nextafter(p53, 0.0), 1);
        check_value(nextafter(p53, INFINITY), 1);
    }
    /* Runs of neighbours where the bounds are exact decimals (binades
     * 2^50..2^56: spacing 1/4 to 16, q <= 1 in Ryu's terms). */
    for (k = 50; k <= 56; k++) {
        double p = ldexp(1.0, k) * 1.2345;

        for (int j = 0; j < 4000; j++, p = nextafter(p, INFINITY))
            check_value(p, 1);
    }
    check_value(DBL_MAX, 1);
    check_value(nextafter(DBL_MAX, 0.0), 1);
    check_value(DBL_MIN, 1);
    check_value(nextafter(DBL_MIN, 0.0), 1);
    check_value(5e-324, 1);
    for (k = 0; k <= TH_SAMPLE(100000); k++) {
        check_value((double)k, k % 7 == 0);
        check_value(k / 1000.0, k % 7 == 0);
        check_value(k * 0.1, k % 7 == 0);
    }
}
END_TEST

/* RANDOM_DOUBLES (a tenth under ASan) random bit patterns of finite doubles, plus as many
 * random decimals of 1-17 digits at random exponents (the numbers an
 * answer holds are mostly short). */
START_TEST(test_random)
{
    uint64_t s = UINT64_C(0x9e3779b97f4a7c15);
    char text[48];
    long i, done = 0;

    for (i = 0; done < RANDOM_DOUBLES; i++) {
        uint64_t b = next_random(&s);
        double v = from_bits(b);

        if (!isfinite(v))
            continue;
        check_value(v, done % PRINTF_EVERY == 0);
        done++;
    }
    for (i = 0; i < RANDOM_DOUBLES / 10; i++) {
        uint64_t r = next_random(&s);
        int digits = 1 + (int)(r % 17);
        int exp10 = (int)((r >> 8) % 80) - 40;
        uint64_t m = next_random(&s), lim = 1;

        for (int k = 0; k < digits; k++)
            lim *= 10;
        m %= lim;
        snprintf(text, sizeof text, "%llue%d", (unsigned long long)m, exp10);
        check_value(strtod(text, NULL), i % PRINTF_EVERY == 0);
    }
}
END_TEST

static Suite *dtoa_suite(void)
{
    Suite *s = suite_create("dtoa");
    TCase *t = tcase_create("dtoa");

    tcase_set_timeout(t, 300);
    tcase_add_test(t, test_known);
    tcase_add_test(t, test_shortest_parts);
    tcase_add_test(t, test_u64);
    tcase_add_test(t, test_nonfinite);
    tcase_add_test(t, test_edges);
    tcase_add_test(t, test_random);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(dtoa_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
