/*
 * test_ckd.c - the overflow-checked arithmetic (core/ts_ckd.h), on the
 * edges of int64_t worked by hand: 2^63 - 1 = 9223372036854775807.
 */
#include <check.h>
#include <stdint.h>

#include "ts_ckd.h"

#define P(n) (INT64_C(1) << (n))

START_TEST(test_mul)
{
    int64_t r = 0;

    /* issue 22 finding 1: 2^40 x 2^24 = 2^64, which wrapped to 0 */
    ck_assert(ts_ckd_mul(&r, P(40), P(24)));
    ck_assert(!ts_ckd_mul(&r, P(31), P(31)));
    ck_assert_int_eq(r, P(62));
    ck_assert(!ts_ckd_mul(&r, 128, 16));
    ck_assert_int_eq(r, 2048);
    ck_assert(ts_ckd_mul(&r, INT64_MAX, 2));
    ck_assert(ts_ckd_mul(&r, INT64_MIN, -1));  /* 2^63 */
    ck_assert(!ts_ckd_mul(&r, -P(32), P(31))); /* -2^63 fits */
    ck_assert_int_eq(r, INT64_MIN);
    ck_assert(!ts_ckd_mul(&r, 0, INT64_MIN));
    ck_assert_int_eq(r, 0);
    ck_assert(!ts_ckd_mul(&r, 3037000499, 3037000499)); /* floor(sqrt(2^63 - 1)) squared */
    ck_assert_int_eq(r, INT64_C(9223372030926249001));
    ck_assert(ts_ckd_mul(&r, 3037000500, 3037000500)); /* 9223372037000250000 > 2^63 - 1 */
}
END_TEST

START_TEST(test_add)
{
    int64_t r = 0;

    ck_assert(!ts_ckd_add(&r, P(62), P(62) - 1));
    ck_assert_int_eq(r, INT64_MAX);
    ck_assert(ts_ckd_add(&r, P(62), P(62)));
    ck_assert(ts_ckd_add(&r, INT64_MIN, -1));
    ck_assert(!ts_ckd_add(&r, INT64_MIN, INT64_MAX));
    ck_assert_int_eq(r, -1);
}
END_TEST

START_TEST(test_saturating)
{
    ck_assert_int_eq(ts_ckd_mul_sat(P(40), P(24)), INT64_MAX);
    ck_assert_int_eq(ts_ckd_mul_sat(-P(40), P(24)), INT64_MIN);
    ck_assert_int_eq(ts_ckd_mul_sat(-P(40), -P(24)), INT64_MAX);
    ck_assert_int_eq(ts_ckd_mul_sat(4, 4096), 16384);
    ck_assert_int_eq(ts_ckd_add_sat(INT64_MAX, 1), INT64_MAX);
    ck_assert_int_eq(ts_ckd_add_sat(INT64_MIN, -1), INT64_MIN);
    ck_assert_int_eq(ts_ckd_add_sat(-5, 3), -2);
}
END_TEST

/* Megatron's vocabulary padding (ceil(v / m) * m), by hand. */
START_TEST(test_round_up)
{
    int64_t r = 0;

    ck_assert(!ts_ckd_round_up(&r, 32000, 128 * 16)); /* 15.625 -> 16 x 2048 */
    ck_assert_int_eq(r, 32768);
    ck_assert(!ts_ckd_round_up(&r, 50257, 128 * 8)); /* GPT-3 at tp 8: 50 x 1024 */
    ck_assert_int_eq(r, 51200);
    ck_assert(!ts_ckd_round_up(&r, 32768, 2048)); /* already a multiple */
    ck_assert_int_eq(r, 32768);
    ck_assert(!ts_ckd_round_up(&r, 0, 128));
    ck_assert_int_eq(r, 0);
    ck_assert(!ts_ckd_round_up(&r, 1, P(50))); /* one multiple */
    ck_assert_int_eq(r, P(50));
    ck_assert(ts_ckd_round_up(&r, INT64_MAX, 2)); /* 2^62 x 2 = 2^63 */
    ck_assert(ts_ckd_round_up(&r, 5, 0));
    ck_assert(ts_ckd_round_up(&r, -1, 8));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ckd");
    TCase *tc = tcase_create("int64");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_mul);
    tcase_add_test(tc, test_add);
    tcase_add_test(tc, test_saturating);
    tcase_add_test(tc, test_round_up);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
