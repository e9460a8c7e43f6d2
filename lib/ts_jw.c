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
 * Strings are copied in runs: sixteen bytes at a time (SSE2) or eight
 * are tested for a byte that needs escaping, and what lies between
 * escapes goes out with one memcpy.  Keys are static literals or table
 * names and are copied as they are, their lengths passed along.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ts_jw.h"

#include "ts_dtoa.h"
#include "ts_utf8.h"

/* TS_JW_NO_SIMD: the portable scan only (tests build it both ways). */
#if defined(__SSE2__) && !defined(TS_JW_NO_SIMD)
#define TS_JW_SSE2 1
#include <emmintrin.h>
#endif

#define TS_JW_MAX        (4u * 1024u * 1024u) /* far above any response (plan ~16 KB) */
#define TS_JW_FIRST      8192u                /* a /v1/memory answer (~6.7 KB) in one allocation */
#define TS_EXACT_INT_MAX 9007199254740992.0   /* 2^53 */

void ts_jw_init(ts_jw *w)
{
    ts_buf_init(&w->b, TS_JW_MAX);
    w->first = true;
    w->oom = false;
    w->nonfinite = NULL;
}

void ts_jw_discard(ts_jw *w)
{
    ts_buf_free(&w->b);
    ts_jw_init(w);
}

char *ts_jw_finish(ts_jw *w, size_t *len)
{
    char *out;

    if (w->oom || w->b.data == NULL) {
        ts_jw_discard(w);
        return NULL;
    }
    w->b.data[w->b.len] = '\0'; /* the writer keeps room for it, not it */
    out = ts_buf_steal(&w->b, len);
    ts_jw_init(w);
    return out;
}

/* reserve's slow path: grow the buffer, or record oom and drop it (its
 * cap is then 0, so every later fast test fails and lands here). */
static bool grow(ts_jw *w, size_t n)
{
    if (w->oom)
        return false;
    if (ts_buf_reserve(&w->b, n, TS_JW_FIRST) != TS_BUF_OK) {
        w->oom = true;
        ts_buf_free(&w->b);
        return false;
    }
    return true;
}

/* Room for n more bytes plus the final NUL. */
static inline bool reserve(ts_jw *w, size_t n)
{
    return n < w->b.cap - w->b.len || grow(w, n);
}

static inline char *at(ts_jw *w)
{
    return w->b.data + w->b.len;
}

static void put(ts_jw *w, const char *s, size_t n)
{
    if (!reserve(w, n))
        return;
    memcpy(at(w), s, n);
    w->b.len += n;
}

static void putc1(ts_jw *w, char c)
{
    if (!reserve(w, 1))
        return;
    w->b.data[w->b.len++] = c;
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
    case '"':
        put(w, "\\\"", 2);
        break;
    case '\\':
        put(w, "\\\\", 2);
        break;
    case '\n':
        put(w, "\\n", 2);
        break;
    case '\r':
        put(w, "\\r", 2);
        break;
    case '\t':
        put(w, "\\t", 2);
        break;
    default: {
        char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
        put(w, u, 6);
        break;
    }
    }
}

/* Index of the first byte of s[i..n) that needs escaping, or n.  Sixteen
 * bytes at a time with SSE2 where the compiler has it (every x86-64),
 * then eight with the word test, then bytes: strings are the largest
 * part of an answer (the formulas and assumptions, ~2.5 KB of 6.7). */
static size_t scan_safe(const char *s, size_t i, size_t n)
{
#if defined(TS_JW_SSE2)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i bslash = _mm_set1_epi8('\\');
    const __m128i ctl = _mm_set1_epi8(0x1f);

    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        /* x <= 0x1f unsigned: min(x, 0x1f) == x */
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
                                 _mm_cmpeq_epi8(_mm_min_epu8(x, ctl), x));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);

        if (mask != 0)
            return i + (size_t)__builtin_ctz(mask);
    }
#endif
    for (; i + 8 <= n; i += 8) {
        uint64_t x;

        memcpy(&x, s + i, 8);
        if (word_needs_escape(x))
            break;
    }
    /* Fewer than 8 left of a string of 8 or more: one overlapping word
     * over its last 8 bytes says whether any of them needs a look. */
    if (i < n && n - i < 8 && n >= 8) {
        uint64_t x;

        memcpy(&x, s + n - 8, 8);
        if (!word_needs_escape(x))
            return n;
    }
    while (i < n && !byte_needs_escape((unsigned char)s[i]))
        i++;
    return i;
}

/* s[0..n) escaped, without the quotes. */
static void put_escaped(ts_jw *w, const char *s, size_t n)
{
    size_t i = 0;

    for (;;) {
        size_t j = scan_safe(s, i, n);

        put(w, s + i, j - i);
        if (j == n)
            break;
        put_escape(w, (unsigned char)s[j]);
        i = j + 1;
    }
}

static void put_string(ts_jw *w, const char *s, size_t n)
{
    /* Room for the common case, no escapes, up front. */
    if (!reserve(w, n + 2))
        return;
    w->b.data[w->b.len++] = '"';
    put_escaped(w, s, n);
    putc1(w, '"');
}

/* Length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629 section
 * 4: no overlong forms, no surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];

    if (c < 0x80)
        return 1;
    if (c < 0xC2) /* a continuation byte, or an overlong 2-byte lead */
        return 0;
    if (c < 0xE0)
        return n >= 2 && ts_utf8_is_cont(s[1]) ? 2 : 0;
    if (c < 0xF0) {
        if (n < 3 || !ts_utf8_is_cont(s[1]) || !ts_utf8_is_cont(s[2]))
            return 0;
        if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0))
            return 0; /* overlong; UTF-16 surrogates */
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || !ts_utf8_is_cont(s[1]) || !ts_utf8_is_cont(s[2]) || !ts_utf8_is_cont(s[3]))
            return 0;
        if ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90))
            return 0; /* overlong; above U+10FFFF */
        return 4;
    }
    return 0;
}

/* Copy a key of kl bytes (kl > 0) to p: short keys, nearly all of them,
 * with two overlapping fixed-size copies instead of a call to memcpy. */
static inline void copy_key(char *p, const char *key, size_t kl)
{
    if (kl >= 8 && kl <= 16) {
        memcpy(p, key, 8);
        memcpy(p + kl - 8, key + kl - 8, 8);
    } else if (kl >= 4 && kl < 8) {
        memcpy(p, key, 4);
        memcpy(p + kl - 4, key + kl - 4, 4);
    } else {
        memcpy(p, key, kl);
    }
}

/* Comma between siblings, then "key": when inside an object, with room
 * for `extra` more bytes after it (the value that follows: one test of
 * the buffer per member).  false after oom. */
static inline bool prefix_room(ts_jw *w, const char *key, size_t kl, size_t extra)
{
    char *p;

    if (!reserve(w, kl + 4 + extra))
        return false;
    p = at(w);
    if (!w->first)
        *p++ = ',';
    w->first = false;
    if (key != NULL) {
        *p++ = '"';
        copy_key(p, key, kl);
        p += kl;
        *p++ = '"';
        *p++ = ':';
    }
    w->b.len = (size_t)(p - w->b.data);
    return true;
}

static inline void prefix(ts_jw *w, const char *key, size_t kl)
{
    (void)prefix_room(w, key, kl, 0);
}

/* Bytes of a literal into room already reserved. */
static inline void put_fixed(ts_jw *w, const char *s, size_t n)
{
    memcpy(at(w), s, n);
    w->b.len += n;
}

void ts_jw_open_(ts_jw *w, const char *key, size_t kl, char bracket)
{
    if (prefix_room(w, key, kl, 1))
        w->b.data[w->b.len++] = bracket;
    w->first = true;
}

void ts_jw_close(ts_jw *w, char bracket)
{
    putc1(w, bracket);
    w->first = false;
}

/* v's digits into reserved room (21 bytes: sign and 20 digits). */
static inline void put_i64(ts_jw *w, int64_t v)
{
    /* |v| without overflow, INT64_MIN included: -(v + 1) fits, then + 1
     * in unsigned (no wrap-around either, so the fuzz builds' integer
     * checks need no exception here). */
    uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;

    if (v < 0)
        w->b.data[w->b.len++] = '-';
    w->b.len += ts_dtoa_u64(u, at(w));
}

void ts_jw_int_(ts_jw *w, const char *key, size_t kl, int64_t v)
{
    if (prefix_room(w, key, kl, 21))
        put_i64(w, v);
}

void ts_jw_num_(ts_jw *w, const char *key, size_t kl, double v)
{
    if (!prefix_room(w, key, kl, TS_DTOA_BUF))
        return;
    if (!isfinite(v)) {
        if (w->nonfinite == NULL)
            w->nonfinite = key != NULL ? key : "(array element)";
        put_fixed(w, "null", 4); /* keeps the text well-formed; it is discarded */
        return;
    }
    /* |v| < 2^53 first: the conversion is defined, and exact. */
    if (fabs(v) < TS_EXACT_INT_MAX && (double)(int64_t)v == v)
        put_i64(w, (int64_t)v); /* -0 too: "0" */
    else
        w->b.len += ts_dtoa_format(v, at(w));
}

void ts_jw_bool_(ts_jw *w, const char *key, size_t kl, bool v)
{
    if (!prefix_room(w, key, kl, 5))
        return;
    if (v)
        put_fixed(w, "true", 4);
    else
        put_fixed(w, "false", 5);
}

void ts_jw_null_(ts_jw *w, const char *key, size_t kl)
{
    if (prefix_room(w, key, kl, 4))
        put_fixed(w, "null", 4);
}

void ts_jw_strl_(ts_jw *w, const char *key, size_t kl, const char *s, size_t n)
{
    prefix(w, key, kl);
    if (s == NULL)
        put(w, "null", 4);
    else
        put_string(w, s, n);
}

/* Texts that may quote what a client sent (a problem's detail, a field
 * pointer): JSON text must be UTF-8 (RFC 8259 section 8.1), so each byte
 * that does not start a well-formed sequence is written as U+FFFD, the
 * replacement character, and the rest of the text is kept as it was. */
void ts_jw_text_(ts_jw *w, const char *key, size_t kl, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, run = 0;

    prefix(w, key, kl);
    if (s == NULL) {
        put(w, "null", 4);
        return;
    }
    putc1(w, '"');
    while (i < n) {
        size_t k = u[i] < 0x80 ? 1 : utf8_seq(u + i, n - i);

        if (k != 0) {
            i += k;
            continue;
        }
        put_escaped(w, s + run, i - run);
        put(w, "\xEF\xBF\xBD", 3); /* U+FFFD */
        run = ++i;
    }
    put_escaped(w, s + run, n - run);
    putc1(w, '"');
}
