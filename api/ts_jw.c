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
 * other doubles with the fewest of 15, 16 or 17 significant digits that
 * parse back to the same double, so every value round-trips (the
 * %.17g guarantee) without printing 0.4 as 0.40000000000000002.
 * Non-finite numbers are never written: the first one's key is recorded
 * and the caller answers 422.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api_int.h"

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

/* Room for n more bytes plus the final NUL. */
static bool reserve(ts_jw *w, size_t n)
{
    size_t want;
    char *nb;

    if (w->oom)
        return false;
    if (w->len + n + 1 <= w->cap)
        return true;
    if (n > TS_JW_MAX || w->len + n + 1 > TS_JW_MAX) {
        w->oom = true;
        return false;
    }
    want = w->cap != 0 ? w->cap : 4096;
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

static void put_string(ts_jw *w, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, run = 0;

    putc1(w, '"');
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(w, s + run, i - run);
        run = i + 1;
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
    put(w, s + run, n - run);
    putc1(w, '"');
}

/* Comma between siblings, then "key": when inside an object. */
static void prefix(ts_jw *w, const char *key)
{
    if (!w->first)
        putc1(w, ',');
    w->first = false;
    if (key != NULL) {
        put_string(w, key, strlen(key));
        putc1(w, ':');
    }
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
    char tmp[24];
    char *p = tmp + sizeof tmp;
    /* Work in unsigned so INT64_MIN negates without overflow. */
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    do {
        *--p = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u != 0);
    if (v < 0)
        *--p = '-';
    put(w, p, (size_t)(tmp + sizeof tmp - p));
}

void ts_jw_int(ts_jw *w, const char *key, int64_t v)
{
    prefix(w, key);
    put_i64(w, v);
}

/* Shortest of %.15g/%.16g/%.17g that reads back as v. */
static int fmt_real(char *buf, size_t size, double v)
{
    int prec, n = 0;

    for (prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, size, "%.*g", prec, v);
        if (prec == 17 || strtod(buf, NULL) == v)
            break;
    }
    /* A locale with a decimal comma would break JSON. */
    for (char *c = buf; *c != '\0'; c++)
        if (*c == ',')
            *c = '.';
    return n;
}

void ts_jw_num(ts_jw *w, const char *key, double v)
{
    char tmp[40];
    int n;

    if (!isfinite(v)) {
        if (w->nonfinite == NULL)
            w->nonfinite = key != NULL ? key : "(array element)";
        prefix(w, key);
        put(w, "null", 4); /* keeps the text well-formed; it is discarded */
        return;
    }
    v += 0.0; /* -0 -> 0 */
    prefix(w, key);
    if (v == floor(v) && fabs(v) < TS_EXACT_INT_MAX) {
        put_i64(w, (int64_t)v);
        return;
    }
    n = fmt_real(tmp, sizeof tmp, v);
    if (n > 0 && (size_t)n < sizeof tmp)
        put(w, tmp, (size_t)n);
    else
        w->oom = true;
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
