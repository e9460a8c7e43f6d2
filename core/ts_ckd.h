/*
 * ts_ckd.h - overflow-checked int64 arithmetic for numbers a client sent.
 *
 * The shape of C23's <stdckdint.h> (ckd_mul(&r, a, b) is true when the
 * exact result did not fit), on the GCC/Clang builtins that C23 took it
 * from, for C11.  A sum or product of two client integers is written
 * with these, never with a bare * or +: issue 22's SIGFPE was
 * 2^40 x 2^24 wrapping to 0 and then dividing by it.
 *
 * The _sat forms give INT64_MAX (INT64_MIN below zero) instead of a
 * wrapped value, for a result that a range check reads next: the check
 * then names the field, and no error branch is needed here.
 *
 * Header only, static inline, no allocation: api/ and the importers
 * include it, core/ may.
 */
#ifndef TS_CKD_H
#define TS_CKD_H

#include <stdbool.h>
#include <stdint.h>

#if !defined(__GNUC__) && !defined(__clang__)
#error "ts_ckd.h needs __builtin_mul_overflow (GCC >= 5 or Clang >= 3.8)"
#endif

/* *r = a * b; true when the exact product does not fit in int64_t. */
static inline bool ts_ckd_mul(int64_t *r, int64_t a, int64_t b)
{
    return __builtin_mul_overflow(a, b, r);
}

/* *r = a + b; true when the exact sum does not fit in int64_t. */
static inline bool ts_ckd_add(int64_t *r, int64_t a, int64_t b)
{
    return __builtin_add_overflow(a, b, r);
}

/* a * b, or INT64_MAX / INT64_MIN (the sign of the exact product) when
 * it does not fit. */
static inline int64_t ts_ckd_mul_sat(int64_t a, int64_t b)
{
    int64_t r;

    if (!__builtin_mul_overflow(a, b, &r))
        return r;
    return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

/* a + b, or INT64_MAX / INT64_MIN when it does not fit (both operands
 * then have the sign of the exact sum). */
static inline int64_t ts_ckd_add_sat(int64_t a, int64_t b)
{
    int64_t r;

    if (!__builtin_add_overflow(a, b, &r))
        return r;
    return a < 0 ? INT64_MIN : INT64_MAX;
}

/* The smallest multiple of m (m >= 1) that is >= v (v >= 0), into *r;
 * true when it does not fit (or m < 1, v < 0).  Exact integer rounding:
 * ceil(v / m) * m without the division's floating point. */
static inline bool ts_ckd_round_up(int64_t *r, int64_t v, int64_t m)
{
    int64_t q;

    if (m < 1 || v < 0)
        return true;
    q = v / m + (v % m != 0);
    return __builtin_mul_overflow(q, m, r);
}

#endif /* TS_CKD_H */
