/*
 * ts_jw.c - a compact JSON writer for responses.
 *
 * Responses are written straight from the core's structs into one
 * growing buffer: no intermediate tree, one allocation in the common
 * case.  (Building a jansson tree and json_dumps() cost ~50 us for a
 * /v1/memory answer; this writer ~3 us.)  The buffer has a hard cap, as
 * curl's dynbuf does: past it, or when malloc fails, the writer records
 * oom and the caller answers 503.
 *
 * Numbers: exactly integral doubles below 2^53 are written as integers;
 * other doubles as the shortest text that parses back to the same
 * double (ts_dtoa.c, Ryu), laid out as printf's %.15g would (0.4, not
 * 0.40000000000000002; 1e+21).  Non-finite numbers are never written:
 * the first one's key is recorded and the caller answers 422.
 *
 * Strings are copied in runs: eight bytes at a time are tested for a
 * byte that needs escaping, and what lies between escapes goes out with
 * one memcpy.  Keys are static literals and are copied as they are.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api_int.h"
#include "ts_dtoa.h"

#define TS_JW_MAX (4u * 1024u * 1024u) /* far above any response (plan ~10 KB) */
#define TS_EXACT_INT_MAX 9007199254740992.0 /* 2^53 */

void ts_jw_init(ts_jw *w)
{
    memset(w, 0, sizeof *w);
    w->first = true;
}

void ts_jw_discard(ts_jw *w)
{
    free(w->buf);
    ts_jw_init(w);
}

char *ts_jw_finish(ts_jw *w, size_t *len)
{
    char *out;

    if (w->oom || w->buf == NULL) {
        ts_jw_discard(w);
        return NULL;
    }
    w->buf[w->len] = '\0';
    out = w->buf;
    *len = w->len;
    w->buf = NULL;
    ts_jw_init(w);
    return out;
}

/* Grow for n more bytes plus the final NUL (reserve's slow path). */
static bool grow(ts_jw *w, size_t n)
{
    size_t want;
    char *nb;

    if (w->oom)
        return false;
    if (n > TS_JW_MAX || w->len + n + 1 > TS_JW_MAX) {
        w->oom = true;
        return false;
    }
    /* 8 KiB: a /v1/memory answer (~6 KB) in one allocation */
    want = w->cap != 0 ? w->cap : 8192;
    while (want < w->len + n + 1)
        want *= 2;
    if (want > TS_JW_MAX)
        want = TS_JW_MAX;
    nb = realloc(w->buf, want);
    if (nb == NULL) {
        w->oom = true;
        return false;
    }
    w->buf = nb;
    w->cap = want;
    return true;
}

/* Room for n more bytes plus the final NUL.  After oom cap is 0 or
 * the buffer is dropped, so the fast test fails and grow() says no. */
static inline bool reserve(ts_jw *w, size_t n)
{
    return (!w->oom && w->len + n + 1 <= w->cap) || grow(w, n);
}

static void put(ts_jw *w, const char *s, size_t n)
{
    if (!reserve(w, n))
        return;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void putc1(ts_jw *w, char c)
{
    if (!reserve(w, 1))
        return;
    w->buf[w->len++] = c;
}

/* Any byte of x below 0x20, '"' or '\\'?  The has-less-than and
 * has-zero-byte tests of Anderson's "Bit Twiddling Hacks" (exact for
 * "any byte", n <= 128). */
static bool word_needs_escape(uint64_t x)
{
    const uint64_t ones = UINT64_C(0x0101010101010101);
    const uint64_t high = UINT64_C(0x8080808080808080);
    uint64_t q = x ^ (ones * '"');
    uint64_t b = x ^ (ones * '\\');

    return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b)) & high;
}

static bool byte_needs_escape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

static void put_escape(ts_jw *w, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";

    switch (c) {
    case '"': put(w, "\\\"", 2); break;
    case '\\': put(w, "\\\\", 2); break;
    case '\n': put(w, "\\n", 2); break;
    case '\r': put(w, "\\r", 2); break;
    case '\t': put(w, "\\t", 2); break;
    default: {
        char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
        put(w, u, 6);
        break;
    }
    }
}

static void put_string(ts_jw *w, const char *s, size_t n)
{
    size_t i = 0, run = 0;

    /* Room for the common case, no escapes, up front. */
    if (!reserve(w, n + 2))
        return;
    w->buf[w->len++] = '"';
    while (i < n) {
        size_t lim;
        uint64_t x;

        for (; i + 8 <= n; i += 8) {
            memcpy(&x, s + i, 8);
            if (word_needs_escape(x))
                break;
        }
        lim = i + 8 < n ? i + 8 : n;
        while (i < lim && !byte_needs_escape((unsigned char)s[i]))
            i++;
        if (i == lim)
            continue;
        put(w, s + run, i - run);
        put_escape(w, (unsigned char)s[i]);
        run = ++i;
    }
    put(w, s + run, n - run);
    putc1(w, '"');
}

/* Comma between siblings, then "key": when inside an object. */
static void prefix(ts_jw *w, const char *key)
{
    size_t kl = key != NULL ? strlen(key) : 0;
    char *p;

    if (!reserve(w, kl + 4))
        return;
    p = w->buf + w->len;
    if (!w->first)
        *p++ = ',';
    w->first = false;
    if (key != NULL) {
        *p++ = '"';
        memcpy(p, key, kl);
        p += kl;
        *p++ = '"';
        *p++ = ':';
    }
    w->len = (size_t)(p - w->buf);
}

void ts_jw_open(ts_jw *w, const char *key, char bracket)
{
    prefix(w, key);
    putc1(w, bracket);
    w->first = true;
}

void ts_jw_close(ts_jw *w, char bracket)
{
    putc1(w, bracket);
    w->first = false;
}

static void put_i64(ts_jw *w, int64_t v)
{
    /* Work in unsigned so INT64_MIN negates without overflow. */
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    if (!reserve(w, 21))
        return;
    if (v < 0)
        w->buf[w->len++] = '-';
    w->len += ts_dtoa_u64(u, w->buf + w->len);
}

void ts_jw_int(ts_jw *w, const char *key, int64_t v)
{
    prefix(w, key);
    put_i64(w, v);
}

void ts_jw_num(ts_jw *w, const char *key, double v)
{
    if (!isfinite(v)) {
        if (w->nonfinite == NULL)
            w->nonfinite = key != NULL ? key : "(array element)";
        prefix(w, key);
        put(w, "null", 4); /* keeps the text well-formed; it is discarded */
        return;
    }
    prefix(w, key);
    /* |v| < 2^53 first: the conversion is defined, and exact. */
    if (fabs(v) < TS_EXACT_INT_MAX && (double)(int64_t)v == v) {
        put_i64(w, (int64_t)v); /* -0 too: "0" */
        return;
    }
    if (reserve(w, TS_DTOA_BUF))
        w->len += ts_dtoa_format(v, w->buf + w->len);
}

void ts_jw_bool(ts_jw *w, const char *key, bool v)
{
    prefix(w, key);
    if (v)
        put(w, "true", 4);
    else
        put(w, "false", 5);
}

void ts_jw_null(ts_jw *w, const char *key)
{
    prefix(w, key);
    put(w, "null", 4);
}

void ts_jw_str(ts_jw *w, const char *key, const char *s)
{
    if (s == NULL) {
        ts_jw_null(w, key);
        return;
    }
    prefix(w, key);
    put_string(w, s, strlen(s));
}

void ts_jw_strn(ts_jw *w, const char *key, const char *s, size_t cap)
{
    prefix(w, key);
    put_string(w, s, strnlen(s, cap));
}
