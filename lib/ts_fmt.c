/*
 * ts_fmt.c - human-readable quantities (ts_fmt.h): every "human" string.
 *
 * Three significant digits are enough for a person reading a dashboard;
 * the exact figure is always next to it in "value".  Fixed-point text is
 * made here with integer arithmetic, exactly as printf's %.Nf rounds
 * (the double's exact binary value, ties to even): an answer carries
 * ~20 of these and printf's multi-precision path cost ~100 ns each.
 * libc and libm only: the CLI compiles this file too.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ts_fmt.h"

/* v with `decimals` (0..2) places then suffix, as snprintf("%.*f%s")
 * writes it, for |v| < 2^45 (the scaled mantissa stays below 2^60).
 * false, nothing written, when v is out of that range or buf too small. */
static bool fixed(char *buf, size_t size, double v, int decimals, const char *suffix)
{
    static const uint64_t p10[] = { 1, 10, 100 };
    char digits[24];
    uint64_t bits, m, x, q;
    size_t n = 0, sl = strlen(suffix), need;
    int e2, shift, i;
    double a = fabs(v);

    if (!(a < 35184372088832.0) || decimals < 0 || decimals > 2) /* 2^45; NaN too */
        return false;
    memcpy(&bits, &a, sizeof bits);
    m = bits & ((UINT64_C(1) << 52) - 1);
    e2 = (int)(bits >> 52);
    if (e2 == 0) {
        e2 = -1074;
    } else {
        m |= UINT64_C(1) << 52;
        e2 -= 1075;
    }
    /* a = m * 2^e2 with e2 < 0 here (a < 2^52): round m * 10^d / 2^-e2. */
    x = m * p10[decimals];
    shift = -e2;
    if (shift >= 62) {
        q = 0; /* x < 2^60 < half of 2^shift */
    } else {
        uint64_t rem = x & ((UINT64_C(1) << shift) - 1), half = UINT64_C(1) << (shift - 1);

        q = x >> shift;
        if (rem > half || (rem == half && (q & 1) != 0))
            q++;
    }
    /* digits of q, least significant first; at least decimals + 1 */
    do {
        digits[n++] = (char)('0' + (int)(q % 10));
        q /= 10;
    } while (q != 0 || n < (size_t)decimals + 1);
    need = (signbit(v) ? 1 : 0) + n + (decimals > 0 ? 1 : 0) + sl + 1;
    if (need > size)
        return false;
    if (signbit(v))
        *buf++ = '-';
    for (i = (int)n - 1; i >= 0; i--) {
        *buf++ = digits[i];
        if (i == decimals && decimals > 0)
            *buf++ = '.';
    }
    memcpy(buf, suffix, sl + 1);
    return true;
}

/* Three significant digits without switching to exponent notation for
 * values in [0, 1000): 1.23, 12.3, 123. */
static void fmt_sig3(char *buf, size_t size, double v, const char *suffix)
{
    double a = fabs(v);
    int decimals = a < 10.0 ? 2 : a < 100.0 ? 1 : 0;

    if (!fixed(buf, size, v, decimals, suffix))
        snprintf(buf, size, "%.*f%s", decimals, v, suffix);
}

/* a then b into out (size bytes, NUL-terminated, cut to fit): the unit
 * tails, without a printf call per figure. */
static void join2(char *out, size_t size, const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);

    if (n >= size)
        n = size - 1;
    if (m >= size - n)
        m = size - n - 1;
    memcpy(out, a, n);
    memcpy(out + n, b, m);
    out[n + m] = '\0';
}

/* %.3g then suffix, as printf writes it, for 0 and 1 <= |v| < 999.5 (the
 * plain kind's range in practice: bytes per parameter): three significant
 * digits by fixed(), then %g's rule, trailing zeros and point dropped.
 * Rounding up into the next decade (9.996 -> "10.00") drops to the same
 * text %g writes ("10").  Other values go to printf. */
static void fmt_plain(char *buf, size_t size, double v, const char *suffix)
{
    double a = fabs(v);
    int decimals = a < 10.0 ? 2 : a < 100.0 ? 1 : 0;

    if ((a == 0.0 || (a >= 1.0 && a < 999.5)) && fixed(buf, size, v, decimals, "")) {
        size_t n = strlen(buf);

        if (decimals > 0) {
            while (buf[n - 1] == '0')
                n--;
            if (buf[n - 1] == '.')
                n--;
        }
        buf[n] = '\0';
        join2(buf + n, size - n, "", suffix);
        return;
    }
    snprintf(buf, size, "%.3g%s", v, suffix);
}

/* "3.6e+25" -> "3.6e25": shorter and what the papers write. */
static void fmt_exp(char *buf, size_t size, double v, const char *suffix)
{
    char tmp[64];
    char *e;

    snprintf(tmp, sizeof tmp, "%.3g", v);
    e = strchr(tmp, 'e');
    if (e != NULL) {
        char *src = e + 1;
        char *dst = e + 1;

        if (*src == '+')
            src++;
        else if (*src == '-')
            *dst++ = *src++;
        while (*src == '0' && src[1] != '\0')
            src++;
        memmove(dst, src, strlen(src) + 1);
    }
    snprintf(buf, size, "%s%s", tmp, suffix);
}

static void fmt_bytes(char *buf, size_t size, double v)
{
    static const char *const units[] = { " B",   " KiB", " MiB", " GiB", " TiB",
                                         " PiB", " EiB", " ZiB", " YiB" };
    size_t i = 0;
    double a = fabs(v);

    while (a >= 1024.0 && i + 1 < sizeof units / sizeof units[0]) {
        a /= 1024.0;
        v /= 1024.0;
        i++;
    }
    if (i == 0) {
        if (!fixed(buf, size, v, 0, " B"))
            snprintf(buf, size, "%.0f B", v);
    } else {
        fmt_sig3(buf, size, v, units[i]);
    }
}

static void fmt_seconds(char *buf, size_t size, double v)
{
    double a = fabs(v);

    if (a < 1e-3)
        fmt_exp(buf, size, v, " s");
    else if (a < 1.0)
        fmt_sig3(buf, size, v * 1e3, " ms");
    else if (a < 120.0)
        fmt_sig3(buf, size, v, " s");
    else if (a < 120.0 * 60.0)
        fmt_sig3(buf, size, v / 60.0, " min");
    else if (a < 48.0 * 3600.0)
        fmt_sig3(buf, size, v / 3600.0, " h");
    else if (a < 730.0 * 86400.0)
        fmt_sig3(buf, size, v / 86400.0, " days");
    else if (a < 1000.0 * 365.25 * 86400.0)
        fmt_sig3(buf, size, v / (365.25 * 86400.0), " years");
    else
        fmt_exp(buf, size, v / (365.25 * 86400.0), " years");
}

/* Decimal suffixes for counts: 1.72M GPU-hours, 8.03B (short scale, as
 * parameter counts are written).  unit is " GPU-hours" or "". */
static void fmt_count(char *buf, size_t size, double v, const char *unit)
{
    static const char *const sfx[] = { "", "k", "M", "B", "T" };
    char tail[40];
    size_t i = 0;
    double a = fabs(v);

    while (a >= 1000.0 && i + 1 < sizeof sfx / sizeof sfx[0]) {
        a /= 1000.0;
        v /= 1000.0;
        i++;
    }
    if (a >= 1000.0) {
        fmt_exp(buf, size, v * 1e12, unit);
        return;
    }
    {
        /* suffix then unit, cut to the buffer (units are short literals) */
        size_t n = strlen(sfx[i]), u = strlen(unit);

        if (n + u >= sizeof tail)
            u = sizeof tail - 1 - n;
        memcpy(tail, sfx[i], n);
        memcpy(tail + n, unit, u);
        tail[n + u] = '\0';
    }
    fmt_sig3(buf, size, v, tail);
}

/* SI prefixes on the unit (BIPM SI Brochure, 9th ed., Table 7): 989
 * TFLOP/s, 80.0 GB, 3.35 TB/s.  unit is "FLOP/s", "B", "B/s". */
static void fmt_si(char *buf, size_t size, double v, const char *unit)
{
    static const char *const pfx[] = { "", "k", "M", "G", "T", "P", "E", "Z", "Y" };
    char tail[40];
    size_t i = 0;
    double a = fabs(v);

    while (a >= 1000.0 && i + 1 < sizeof pfx / sizeof pfx[0]) {
        a /= 1000.0;
        v /= 1000.0;
        i++;
    }
    join2(tail, sizeof tail, " ", pfx[i]);
    join2(tail + strlen(tail), sizeof tail - strlen(tail), "", unit);
    if (a >= 1000.0)
        fmt_exp(buf, size, v, tail);
    else
        fmt_sig3(buf, size, v, tail);
}

size_t ts_fmt_human(char *buf, size_t size, double v, ts_fmt_kind kind, const char *unit)
{
    char spaced[32];

    if (size == 0)
        return 0;
    if (!isfinite(v)) {
        snprintf(buf, size, "n/a");
        return strlen(buf);
    }
    if (unit == NULL)
        unit = "";
    v += 0.0; /* -0 prints as 0 */
    /* " unit" for the kinds that print theirs after the number */
    if (kind == TS_FMT_COUNT || kind == TS_FMT_INTEGER || kind == TS_FMT_PLAIN)
        join2(spaced, sizeof spaced, *unit != '\0' ? " " : "", unit);
    switch (kind) {
    case TS_FMT_BYTES:
        fmt_bytes(buf, size, v);
        break;
    case TS_FMT_FLOPS:
        if (fabs(v) < 1000.0)
            fmt_sig3(buf, size, v, " FLOP");
        else
            fmt_exp(buf, size, v, " FLOP");
        break;
    case TS_FMT_SECONDS:
        fmt_seconds(buf, size, v);
        break;
    case TS_FMT_COUNT:
        fmt_count(buf, size, v, spaced);
        break;
    case TS_FMT_FRACTION:
        fmt_sig3(buf, size, v * 100.0, " %");
        break;
    case TS_FMT_SI:
        fmt_si(buf, size, v, unit);
        break;
    case TS_FMT_INTEGER:
        if (!fixed(buf, size, round(v) + 0.0, 0, spaced))
            snprintf(buf, size, "%.0f%s", round(v) + 0.0, spaced);
        break;
    case TS_FMT_PLAIN:
        fmt_plain(buf, size, v, spaced);
        break;
    case TS_FMT_KIND_COUNT:
    default:
        snprintf(buf, size, "%.17g", v);
        break;
    }
    return strlen(buf);
}

const char *ts_fmt_kind_name(ts_fmt_kind kind)
{
    static const char *const names[TS_FMT_KIND_COUNT] = {
        [TS_FMT_BYTES] = "bytes",     [TS_FMT_FLOPS] = "flops",       [TS_FMT_SECONDS] = "seconds",
        [TS_FMT_COUNT] = "count",     [TS_FMT_FRACTION] = "fraction", [TS_FMT_SI] = "si",
        [TS_FMT_INTEGER] = "integer", [TS_FMT_PLAIN] = "plain",
    };

    return (unsigned)kind < TS_FMT_KIND_COUNT ? names[kind] : "?";
}
