/*
 * test_fmt.c - the "human" texts (lib/ts_fmt.c) against printf.
 *
 * ts_fmt.c writes its fixed-point digits with integer arithmetic; they
 * must be exactly what snprintf("%.*f") writes (glibc rounds the exact
 * binary value, ties to even).  The expectation for each value follows
 * the documented rule of each unit: fractions as percent with three
 * significant digits (2, 1 or 0 decimals under 10, 100 and above),
 * bytes under 1 KiB as whole bytes, above with binary prefixes; plain
 * numbers as %.3g and integers as %.0f of round() (their fast paths).
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_fmt.h"
#include "../helpers/th_sample.h"

static uint64_t next_random(uint64_t *s) /* xorshift64* (Vigna 2016) */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

static int decimals_for(double v)
{
    double a = fabs(v);

    return a < 10.0 ? 2 : a < 100.0 ? 1 : 0;
}

static void check_one(double v)
{
    static const char *const units[] = { " KiB", " MiB", " GiB", " TiB",
                                         " PiB", " EiB", " ZiB", " YiB" };
    char got[64], want[64];
    double b, p;

    v += 0.0; /* as ts_fmt_human: -0 is 0 */
    p = v * 100.0;
    ts_fmt_human(got, sizeof got, v, TS_FMT_FRACTION, "");
    snprintf(want, sizeof want, "%.*f %%", decimals_for(p), p);
    TH_ASSERT(strcmp(got, want) == 0, "%a fraction: \"%s\", printf \"%s\"", v, got, want);

    ts_fmt_human(got, sizeof got, v, TS_FMT_BYTES, "B");
    b = v;
    if (fabs(b) < 1024.0) {
        snprintf(want, sizeof want, "%.0f B", b);
    } else {
        size_t i = 0;

        b /= 1024.0;
        while (fabs(b) >= 1024.0 && i + 1 < sizeof units / sizeof units[0]) {
            b /= 1024.0;
            i++;
        }
        snprintf(want, sizeof want, "%.*f%s", decimals_for(b), b, units[i]);
    }
    TH_ASSERT(strcmp(got, want) == 0, "%a bytes: \"%s\", printf \"%s\"", v, got, want);

    /* plain: printf's %.3g (trailing zeros dropped, exponent from 1000 and
     * below 1e-4), the unit after a space */
    ts_fmt_human(got, sizeof got, v, TS_FMT_PLAIN, "B");
    snprintf(want, sizeof want, "%.3g B", v);
    TH_ASSERT(strcmp(got, want) == 0, "%a plain: \"%s\", printf \"%s\"", v, got, want);
    ts_fmt_human(got, sizeof got, v, TS_FMT_PLAIN, "");
    snprintf(want, sizeof want, "%.3g", v);
    TH_ASSERT(strcmp(got, want) == 0, "%a plain: \"%s\", printf \"%s\"", v, got, want);

    /* integer: rounded half away from zero (round()), then %.0f */
    ts_fmt_human(got, sizeof got, v, TS_FMT_INTEGER, "copies");
    snprintf(want, sizeof want, "%.0f copies", round(v) + 0.0);
    TH_ASSERT(strcmp(got, want) == 0, "%a integer: \"%s\", printf \"%s\"", v, got, want);
}

/* Ties and near-ties of the last printed digit, the decade edges
 * (9.995 -> "9.99" or "10.00"?), zero, signs, tiny values. */
START_TEST(test_edges)
{
    static const double cases[] = {
        0.0,
        -0.0,
        1e-300,
        -1e-300,
        5e-324,
        0.125,
        0.375,
        2.5,
        3.5,
        0.005,
        0.015,
        0.045,
        9.995,
        9.994999,
        99.95,
        99.949999,
        999.5,
        1000.5,
        1023.5,
        1024.0,
        0.5,
        1.5,
        -0.5,
        -2.5,
        0.0999999,
        0.1,
        1.005,
        35184372088831.5,
        35184372088832.0,
        1.0,
        0.99999,
        9.9949,
        9.9951,
        99.949,
        99.951,
        999.49,
        999.5,
        999.51,
        1.0005,
        1.0015,
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_one(cases[i]);
        check_one(cases[i] / 100.0);
        check_one(nextafter(cases[i], INFINITY));
        check_one(nextafter(cases[i], -INFINITY));
    }
    /* every k/8 and k/1000 up to 2000: exact ties and their neighbours */
    for (int k = -16000; k <= 16000; k++) {
        check_one(k / 8.0);
        check_one(k / 800.0);
        check_one(k / 1000.0);
        check_one(k / 100000.0);
    }
}
END_TEST

/* 1e6 random values (a tenth under ASan: th_sample.h), log-uniform over
 * 1e-6 .. 1e18, both signs. */
START_TEST(test_random)
{
    uint64_t s = UINT64_C(0x2545f4914f6cdd1d);

    for (int i = 0; i < TH_SAMPLE(1000000); i++) {
        uint64_t r = next_random(&s);
        double u = (double)(r >> 11) / 9007199254740992.0;
        double v = pow(10.0, -6.0 + 24.0 * u);

        check_one((r & 1) ? -v : v);
    }
}
END_TEST

static Suite *fmt_suite(void)
{
    Suite *s = suite_create("fmt");
    TCase *t = tcase_create("fmt");

    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_edges);
    tcase_add_test(t, test_random);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(fmt_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
