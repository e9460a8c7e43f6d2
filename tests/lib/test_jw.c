/*
 * test_jw.c - the response writer's strings (lib/ts_jw.c).
 *
 * The writer tests sixteen bytes (SSE2) or eight at a time for a byte to
 * escape and copies the runs between escapes; these cases put each
 * escapable byte at every offset of strings up to 72 bytes, so every
 * block and word boundary and the overlapping last word are crossed.
 * Built twice: as the library is, and with -DTS_JW_NO_SIMD (the
 * portable word scan alone).
 * The UTF-8-checking text writer (problem details) the same way.
 * Numbers: test_dtoa.c; the whole writer's text: test_api.c.
 */
#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ts_jw.h"

/* Escaping copies runs of safe bytes between escapes (ts_jw.c tests
 * eight bytes at a time): an escapable byte at every offset of strings
 * of 1..72 bytes, and every byte value once.  Expected text built byte
 * by byte from RFC 8259 section 7. */
static void expect_escaped(char *dst, const unsigned char *src, size_t n)
{
    static const char hex[] = "0123456789abcdef";

    *dst++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = src[i];

        if (c == '"' || c == '\\') {
            *dst++ = '\\';
            *dst++ = (char)c;
        } else if (c == '\n' || c == '\r' || c == '\t') {
            *dst++ = '\\';
            *dst++ = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        } else if (c < 0x20) {
            memcpy(dst, "\\u00", 4);
            dst[4] = hex[c >> 4];
            dst[5] = hex[c & 15];
            dst += 6;
        } else {
            *dst++ = (char)c;
        }
    }
    *dst++ = '"';
    *dst = '\0';
}

START_TEST(test_writer_escapes)
{
    static const unsigned char special[] = { '"', '\\', '\n', 0x01, 0x1f, '\t' };
    unsigned char src[256];
    char want[256 * 6 + 3], text[257];
    ts_jw w;
    size_t len;
    char *out;

    for (size_t n = 1; n <= 72; n++)
        for (size_t at = 0; at < n; at++)
            for (size_t k = 0; k < sizeof special; k++) {
                for (size_t i = 0; i < n; i++)
                    src[i] = (unsigned char)('a' + (i % 26)); /* ' ', 0x7f, UTF-8 stay */
                src[at] = special[k];
                if (at + 3 < n)
                    src[at + 3] = 0xc3; /* a high byte is not an escape */
                memcpy(text, src, n);
                text[n] = '\0';
                ts_jw_init(&w);
                ts_jw_str(&w, NULL, text);
                out = ts_jw_finish(&w, &len);
                ck_assert_ptr_nonnull(out);
                expect_escaped(want, src, n);
                ck_assert_msg(strcmp(out, want) == 0, "n %zu at %zu: %s", n, at, out);
                ck_assert_uint_eq(len, strlen(want));
                free(out);
            }
    /* Bytes 1..255 in one string (strn: the NUL ends it). */
    for (int i = 1; i < 256; i++)
        src[i - 1] = (unsigned char)i;
    memcpy(text, src, 255);
    text[255] = '\0';
    ts_jw_init(&w);
    ts_jw_strn(&w, NULL, text, sizeof text);
    out = ts_jw_finish(&w, &len);
    ck_assert_ptr_nonnull(out);
    expect_escaped(want, src, 255);
    ck_assert_str_eq(out, want);
    free(out);
}
END_TEST

/* The text writer (ts_jw_text: a problem's detail and field, which may
 * quote client bytes).  Well-formed UTF-8 (RFC 3629) goes out exactly as
 * ts_jw_str writes it; each byte of an ill-formed sequence becomes U+FFFD
 * (in every class below, no byte of the sequence starts a well-formed
 * one).  Each sequence at every offset of strings of 1..48 bytes, an
 * escape just after it, so the runs between replacements and escapes
 * cross every block and word boundary of both scans; every output parses
 * back (jansson) to the replaced text. */
static const struct {
    const char *s;
    bool valid;
} utf8_cases[] = {
    { "\xc2\x80", true },          /* U+0080, the first 2-byte */
    { "\xc3\xa9", true },          /* e acute */
    { "\xe0\xa0\x80", true },      /* U+0800, the first 3-byte */
    { "\xe2\x82\xac", true },      /* euro sign */
    { "\xed\x9f\xbf", true },      /* U+D7FF, below the surrogates */
    { "\xee\x80\x80", true },      /* U+E000, above them */
    { "\xef\xbf\xbd", true },      /* U+FFFD itself */
    { "\xf0\x90\x80\x80", true },  /* U+10000, the first 4-byte */
    { "\xf0\x9f\x98\x80", true },  /* an emoji */
    { "\xf4\x8f\xbf\xbf", true },  /* U+10FFFF, the last */
    { "\x80", false },             /* lone continuation */
    { "\xbf\xbf", false },         /* two of them */
    { "\xc3", false },             /* truncated 2-byte */
    { "\xe2\x82", false },         /* truncated 3-byte */
    { "\xf0\x9f\x98", false },     /* truncated 4-byte */
    { "\xc0\xaf", false },         /* overlong "/" */
    { "\xc1\xbf", false },         /* overlong U+007F */
    { "\xe0\x80\xaf", false },     /* overlong, 3 bytes */
    { "\xf0\x80\x80\xaf", false }, /* overlong, 4 bytes */
    { "\xed\xa0\x80", false },     /* surrogate U+D800 */
    { "\xed\xbf\xbf", false },     /* surrogate U+DFFF */
    { "\xf4\x90\x80\x80", false }, /* U+110000 */
    { "\xf5\x80\x80\x80", false }, /* lead above F4 */
    { "\xfe", false },
    { "\xff", false },
};

/* src with each byte of an ill-formed sequence at [at, at+k) replaced. */
static size_t replaced(char *dst, const char *src, size_t n, size_t at, size_t k, bool valid)
{
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        if (!valid && i >= at && i < at + k) {
            memcpy(dst + o, "\xef\xbf\xbd", 3);
            o += 3;
        } else {
            dst[o++] = src[i];
        }
    }
    dst[o] = '\0';
    return o;
}

static char *text_out(const char *s)
{
    ts_jw w;
    size_t len;
    char *out;

    ts_jw_init(&w);
    ts_jw_text(&w, NULL, s);
    out = ts_jw_finish(&w, &len);
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(len, strlen(out));
    return out;
}

START_TEST(test_text_utf8)
{
    char src[64], rep[64 * 3], want[64 * 3 * 6 + 3];

    for (size_t c = 0; c < sizeof utf8_cases / sizeof utf8_cases[0]; c++) {
        size_t k = strlen(utf8_cases[c].s);

        for (size_t n = k; n <= 48; n++)
            for (size_t at = 0; at + k <= n; at++) {
                char *out;
                json_t *j;
                size_t rn;

                for (size_t i = 0; i < n; i++)
                    src[i] = (char)('a' + (i % 26));
                memcpy(src + at, utf8_cases[c].s, k);
                if (at + k < n)
                    src[at + k] = '"'; /* an escape right after it */
                src[n] = '\0';
                rn = replaced(rep, src, n, at, k, utf8_cases[c].valid);
                expect_escaped(want, (const unsigned char *)rep, rn);
                out = text_out(src);
                ck_assert_msg(strcmp(out, want) == 0, "case %zu n %zu at %zu: %s", c, n, at, out);
                if (utf8_cases[c].valid) {
                    ts_jw w;
                    char *str;

                    ts_jw_init(&w);
                    ts_jw_str(&w, NULL, src);
                    str = ts_jw_finish(&w, NULL);
                    ck_assert_ptr_nonnull(str);
                    ck_assert_str_eq(out, str); /* byte for byte */
                    free(str);
                }
                j = json_loads(out, JSON_DECODE_ANY, NULL);
                ck_assert_msg(j != NULL, "case %zu n %zu at %zu: not JSON: %s", c, n, at, out);
                ck_assert_str_eq(json_string_value(j), rep);
                json_decref(j);
                free(out);
            }
    }
}
END_TEST

/* Every byte value in one text: 1..127 kept (escaped as ts_jw_str does),
 * each of 128..255 a U+FFFD (no two of them in this order make a
 * well-formed sequence); NULL writes null, as ts_jw_str does. */
START_TEST(test_text_all_bytes)
{
    char src[256], rep[256 * 3], want[256 * 3 * 6 + 3];
    char *out;
    json_t *j;
    size_t rn;
    ts_jw w;

    for (int i = 1; i < 256; i++)
        src[i - 1] = (char)i;
    src[255] = '\0';
    rn = replaced(rep, src, 255, 127, 128, false);
    expect_escaped(want, (const unsigned char *)rep, rn);
    out = text_out(src);
    ck_assert_str_eq(out, want);
    j = json_loads(out, JSON_DECODE_ANY, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_string_value(j), rep);
    json_decref(j);
    free(out);

    ts_jw_init(&w);
    ts_jw_open(&w, NULL, '{');
    ts_jw_text_(&w, "a", 1, NULL, 0);
    ts_jw_text(&w, "b", "\xff");
    ts_jw_close(&w, '}');
    out = ts_jw_finish(&w, NULL);
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq(out, "{\"a\":null,\"b\":\"\xef\xbf\xbd\"}");
    free(out);
}
END_TEST

static Suite *jw_suite(void)
{
    Suite *s = suite_create("jw");
    TCase *t = tcase_create("jw");

    tcase_add_test(t, test_writer_escapes);
    tcase_add_test(t, test_text_utf8);
    tcase_add_test(t, test_text_all_bytes);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(jw_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
