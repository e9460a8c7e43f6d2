/*
 * ts_dtoa.c - shortest round-trip text of a double (see ts_dtoa.h).
 *
 * Written from the description in Ulf Adams, "Ryu: fast float-to-string
 * conversion", PLDI 2018 (doi:10.1145/3192366.3192369), sections 2-3:
 *
 *  1. v = m2 * 2^e2; its rounding interval is ((4 m2 - 1 - s), (4 m2 + 2))
 *     * 2^(e2-2), s = 1 except at the bottom of a binade, where the
 *     lower neighbour is half as far (s = 0).
 *  2. The bounds are scaled by 2^e2 / 10^q at once, q chosen so that a
 *     digit or so more than the answer needs is left: one 64x128-bit
 *     product with a 125-bit approximation of 5^-q (e2 >= 0) or of
 *     5^(-e2-q) (e2 < 0), shifted right (tables: ts_dtoa_gen.py).
 *  3. Digits are removed while the interval still holds a number with
 *     one digit fewer; the last one removed rounds the result.  Whether
 *     the truncated parts were exactly zero (a bound lies on a decimal
 *     number, a tie to round to even) is tracked only where it can
 *     happen, q small enough for 5^q or 2^q to divide the bound.
 *
 * Even mantissas accept their interval's bounds (round half to even
 * reads a bound back as v).
 */
#include "ts_dtoa.h"

#include <stdbool.h>
#include <string.h>

#include "ts_dtoa_tab.h"

#define TS_DTOA_MANT_BITS 52
#define TS_DTOA_BIAS      1023
#define TS_DTOA_P5_BITS   125 /* precision of the tables */

/* floor(e * log10(2)), 0 <= e <= 1650 (Adams 2018, 3.3). */
static uint32_t log10_pow2(int32_t e)
{
    return ((uint32_t)e * 78913u) >> 18;
}

/* floor(e * log10(5)), 0 <= e <= 2620. */
static uint32_t log10_pow5(int32_t e)
{
    return ((uint32_t)e * 732923u) >> 20;
}

/* Bit length of 5^e (1 for e = 0), 0 <= e <= 3528. */
static int32_t pow5_bits(int32_t e)
{
    return (int32_t)(((uint32_t)e * 1217359u) >> 19) + 1;
}

static bool pow5_divides(uint64_t v, uint32_t p)
{
    uint32_t n = 0;

    while (v != 0 && v % 5 == 0) {
        v /= 5;
        n++;
    }
    return n >= p;
}

static bool pow2_divides(uint64_t v, uint32_t p)
{
    return (v & ((UINT64_C(1) << p) - 1)) == 0;
}

/* (m * mul) >> j, mul a 128-bit table entry (low, high), 64 < j < 128.
 * m < 2^55 and mul < 2^126, so the 181-bit product shifted by 64 fits
 * in 128 bits. */
#if defined(__SIZEOF_INT128__) && !defined(TS_DTOA_NO_INT128)
__extension__ typedef unsigned __int128 ts_dtoa_u128;

static uint64_t mul_shift(uint64_t m, const uint64_t mul[2], int32_t j)
{
    ts_dtoa_u128 lo = (ts_dtoa_u128)m * mul[0];
    ts_dtoa_u128 hi = (ts_dtoa_u128)m * mul[1];

    return (uint64_t)(((lo >> 64) + hi) >> (j - 64));
}
#else
/* Portable: the 64x64 -> 128 product from 32-bit halves. */
static uint64_t mul_64x64(uint64_t a, uint64_t b, uint64_t *hi)
{
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32;
    uint64_t b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);

    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return (mid << 32) | (p00 & 0xffffffffu);
}

static uint64_t mul_shift(uint64_t m, const uint64_t mul[2], int32_t j)
{
    uint64_t h0, h1, mid, top;
    int32_t s = j - 64;

    (void)mul_64x64(m, mul[0], &h0);
    mid = mul_64x64(m, mul[1], &h1);
    /* (m * mul) >> 64 = (top:mid) */
    mid += h0;
    top = h1 + (mid < h0);
    return (mid >> s) | (top << (64 - s));
}
#endif

static const char ts_dtoa_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static int digit_count(uint64_t v)
{
    int n = 1;

    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* v's rounding interval in decimal (steps 1 and 2): vr, vp and vm are
 * v, its upper and its lower bound times 2^(e2-2) / 10^e10, truncated;
 * vr_tz and vm_tz say that what v's and the lower bound's truncations
 * dropped was zero (tracked only where it can be). */
typedef struct ts_dtoa_iv {
    uint64_t vr, vp, vm;
    int32_t e10;
    bool even; /* even mantissa: the bounds are in the interval */
    bool vm_tz, vr_tz;
} ts_dtoa_iv;

/* Step 2 for e2 >= 0: divide by 10^q, one digit more than fits (hence
 * the -1 when e2 > 3). */
static void ts_dtoa_scale_up(uint64_t mv, uint32_t mm_shift, int32_t e2, ts_dtoa_iv *iv)
{
    uint32_t q = log10_pow2(e2) - (e2 > 3);
    int32_t j = -e2 + (int32_t)q + TS_DTOA_P5_BITS + pow5_bits((int32_t)q) - 1;
    const uint64_t *mul = ts_dtoa_pow5_inv[q];

    iv->e10 = (int32_t)q;
    iv->vr = mul_shift(mv, mul, j);
    iv->vp = mul_shift(mv + 2, mul, j);
    iv->vm = mul_shift(mv - 1 - mm_shift, mul, j);
    /* Exact division by 10^q needs 5^q | bound: only for q <= 21
     * (5^22 > 2^54 > 4 m2 + 2), and one bound at most. */
    if (q <= 21) {
        if (mv % 5 == 0)
            iv->vr_tz = pow5_divides(mv, q);
        else if (iv->even)
            iv->vm_tz = pow5_divides(mv - 1 - mm_shift, q);
        else if (pow5_divides(mv + 2, q))
            iv->vp--; /* the upper bound itself is excluded */
    }
}

/* Step 2 for e2 < 0: multiply by 5^(-e2-q) and shift. */
static void ts_dtoa_scale_down(uint64_t mv, uint32_t mm_shift, int32_t e2, ts_dtoa_iv *iv)
{
    uint32_t q = log10_pow5(-e2) - (-e2 > 1);
    int32_t i = -e2 - (int32_t)q;
    int32_t j = (int32_t)q - (pow5_bits(i) - TS_DTOA_P5_BITS);
    const uint64_t *mul = ts_dtoa_pow5[i];

    iv->e10 = (int32_t)q + e2;
    iv->vr = mul_shift(mv, mul, j);
    iv->vp = mul_shift(mv + 2, mul, j);
    iv->vm = mul_shift(mv - 1 - mm_shift, mul, j);
    if (q <= 1) {
        /* mv has >= 2 trailing zero bits, mv + 2 exactly 1: the products
         * are exact. */
        iv->vr_tz = true;
        if (iv->even)
            iv->vm_tz = mm_shift == 1;
        else
            iv->vp--;
    } else if (q < 63) {
        /* Exact iff 2^q divides mv (5^(-e2) supplies the fives). */
        iv->vr_tz = pow2_divides(mv, q);
    }
}

/* Steps 1 and 2: v = m2 * 2^e2 and its interval, scaled. */
static void ts_dtoa_interval(double v, ts_dtoa_iv *iv)
{
    uint64_t bits, mant, m2, mv;
    uint32_t bexp, mm_shift;
    int32_t e2;

    memcpy(&bits, &v, sizeof bits);
    mant = bits & ((UINT64_C(1) << TS_DTOA_MANT_BITS) - 1);
    bexp = (uint32_t)(bits >> TS_DTOA_MANT_BITS) & 0x7ffu;
    /* v = m2 * 2^e2; the 2 extra bits make room for the bounds. */
    if (bexp == 0) {
        m2 = mant;
        e2 = 1 - TS_DTOA_BIAS - TS_DTOA_MANT_BITS - 2;
    } else {
        m2 = mant | (UINT64_C(1) << TS_DTOA_MANT_BITS);
        e2 = (int32_t)bexp - TS_DTOA_BIAS - TS_DTOA_MANT_BITS - 2;
    }
    iv->even = (m2 & 1) == 0;
    iv->vm_tz = false;
    iv->vr_tz = false;
    mv = 4 * m2;
    /* The lower neighbour is closer at the bottom of a binade. */
    mm_shift = mant != 0 || bexp <= 1;
    if (e2 >= 0)
        ts_dtoa_scale_up(mv, mm_shift, e2, iv);
    else
        ts_dtoa_scale_down(mv, mm_shift, e2, iv);
}

/* Step 3, rare: a bound or v itself may be an exact decimal.  Returns
 * the digits; *removed counts the digits dropped. */
static uint64_t ts_dtoa_trim_exact(ts_dtoa_iv *iv, int32_t *removed)
{
    uint64_t vr = iv->vr, vp = iv->vp, vm = iv->vm;
    uint32_t last = 0;
    bool vm_tz = iv->vm_tz, vr_tz = iv->vr_tz;

    for (;;) {
        uint64_t vp10 = vp / 10, vm10 = vm / 10, vr10;

        if (vp10 <= vm10)
            break;
        vr10 = vr / 10;
        vm_tz &= vm - 10 * vm10 == 0;
        vr_tz &= last == 0;
        last = (uint32_t)(vr - 10 * vr10);
        vr = vr10;
        vp = vp10;
        vm = vm10;
        (*removed)++;
    }
    if (vm_tz) {
        /* The lower bound is in the interval and ends in zeros. */
        for (;;) {
            uint64_t vm10 = vm / 10, vr10;

            if (vm - 10 * vm10 != 0)
                break;
            vr10 = vr / 10;
            vr_tz &= last == 0;
            last = (uint32_t)(vr - 10 * vr10);
            vr = vr10;
            vp /= 10;
            vm = vm10;
            (*removed)++;
        }
    }
    if (vr_tz && last == 5 && vr % 2 == 0)
        last = 4; /* exact tie: round half to even */
    return vr + ((vr == vm && (!iv->even || !vm_tz)) || last >= 5);
}

/* Step 3, common: nothing exact, the last removed digit rounds. */
static uint64_t ts_dtoa_trim(const ts_dtoa_iv *iv, int32_t *removed)
{
    uint64_t vr = iv->vr, vp = iv->vp, vm = iv->vm;
    bool up = false;

    if (vp / 100 > vm / 100) {
        up = vr % 100 >= 50;
        vr /= 100;
        vp /= 100;
        vm /= 100;
        *removed += 2;
    }
    for (;;) {
        uint64_t vp10 = vp / 10, vm10 = vm / 10, vr10;

        if (vp10 <= vm10)
            break;
        vr10 = vr / 10;
        up = vr - 10 * vr10 >= 5;
        vr = vr10;
        vp = vp10;
        vm = vm10;
        (*removed)++;
    }
    return vr + (vr == vm || up);
}

int ts_dtoa_shortest(double v, uint64_t *digits, int32_t *exp10)
{
    ts_dtoa_iv iv;
    uint64_t out;
    int32_t e10, removed = 0;

    ts_dtoa_interval(v, &iv);
    if (iv.vm_tz || iv.vr_tz)
        out = ts_dtoa_trim_exact(&iv, &removed);
    else
        out = ts_dtoa_trim(&iv, &removed);
    e10 = iv.e10 + removed;
    while (out % 10 == 0 && out != 0) { /* never seen; kept exact if it is */
        out /= 10;
        e10++;
    }
    *digits = out;
    *exp10 = e10;
    return digit_count(out);
}

/* Number of decimal digits of v (1..20). */
static unsigned count_digits(uint64_t v)
{
    static const uint64_t p10[20] = {
        UINT64_C(1),
        UINT64_C(10),
        UINT64_C(100),
        UINT64_C(1000),
        UINT64_C(10000),
        UINT64_C(100000),
        UINT64_C(1000000),
        UINT64_C(10000000),
        UINT64_C(100000000),
        UINT64_C(1000000000),
        UINT64_C(10000000000),
        UINT64_C(100000000000),
        UINT64_C(1000000000000),
        UINT64_C(10000000000000),
        UINT64_C(100000000000000),
        UINT64_C(1000000000000000),
        UINT64_C(10000000000000000),
        UINT64_C(100000000000000000),
        UINT64_C(1000000000000000000),
        UINT64_C(10000000000000000000),
    };
#if defined(__GNUC__)
    /* floor(log10(2^bits)) from the bit length (1233/4096 ~ log10 2),
     * then one comparison: the well-known bit-length estimate. */
    unsigned bits = 64u - (unsigned)__builtin_clzll(v | 1);
    unsigned d = (bits * 1233u) >> 12;

    return d + 1u - ((v | 1) < p10[d]); /* v | 1: 0 has one digit */
#else
    unsigned d = 1;

    while (d < 20 && v >= p10[d])
        d++;
    return d;
#endif
}

/* The two digits of r (< 100) at p. */
static inline void put_pair(char *p, unsigned r)
{
    p[0] = ts_dtoa_pairs[2 * r];
    p[1] = ts_dtoa_pairs[2 * r + 1];
}

size_t ts_dtoa_u64(uint64_t v, char buf[20])
{
    size_t n = count_digits(v);
    char *p = buf + n;
    uint32_t x;

    /* In place from the end, two digits at a time; eight-digit chunks
     * first so the rest runs in 32-bit arithmetic (cheaper than 64-bit
     * division by 100, the cost of every integer in an answer). */
    while (v >= UINT64_C(100000000)) {
        uint32_t lo = (uint32_t)(v % UINT64_C(100000000));

        v /= UINT64_C(100000000);
        put_pair(p - 2, lo % 100u);
        lo /= 100u;
        put_pair(p - 4, lo % 100u);
        lo /= 100u;
        put_pair(p - 6, lo % 100u);
        put_pair(p - 8, lo / 100u);
        p -= 8;
    }
    x = (uint32_t)v;
    while (x >= 100u) {
        p -= 2;
        put_pair(p, x % 100u);
        x /= 100u;
    }
    if (x >= 10u)
        put_pair(p - 2, x);
    else
        p[-1] = (char)('0' + (int)x);
    return n;
}

size_t ts_dtoa_format(double v, char buf[TS_DTOA_BUF])
{
    char d[20];
    char *p = buf;
    uint64_t bits, m;
    int32_t e, x, prec;
    int n, i;

    memcpy(&bits, &v, sizeof bits);
    if (((bits >> TS_DTOA_MANT_BITS) & 0x7ffu) == 0x7ffu) {
        buf[0] = '\0';
        return 0;
    }
    if ((bits << 1) == 0) { /* +0 and -0 */
        buf[0] = '0';
        buf[1] = '\0';
        return 1;
    }
    if (bits >> 63) {
        *p++ = '-';
        v = -v;
    }
    n = ts_dtoa_shortest(v, &m, &e);
    (void)ts_dtoa_u64(m, d); /* n digits: m has no more */

    x = e + n - 1; /* the exponent of d.ddd e x */
    prec = n > 15 ? n : 15;
    if (x < -4 || x >= prec) {
        int32_t ax = x < 0 ? -x : x;

        *p++ = d[0];
        if (n > 1) {
            *p++ = '.';
            memcpy(p, d + 1, (size_t)n - 1);
            p += n - 1;
        }
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        if (ax >= 100) {
            *p++ = (char)('0' + ax / 100);
            ax %= 100;
        }
        memcpy(p, ts_dtoa_pairs + 2 * ax, 2);
        p += 2;
    } else if (x < 0) {
        *p++ = '0';
        *p++ = '.';
        for (i = -1; i > x; i--)
            *p++ = '0';
        memcpy(p, d, (size_t)n);
        p += n;
    } else if (x >= n - 1) {
        memcpy(p, d, (size_t)n);
        p += n;
        for (i = n - 1; i < x; i++)
            *p++ = '0';
    } else {
        memcpy(p, d, (size_t)x + 1);
        p += x + 1;
        *p++ = '.';
        memcpy(p, d + x + 1, (size_t)(n - x - 1));
        p += n - x - 1;
    }
    *p = '\0';
    return (size_t)(p - buf);
}
