/*
 * test_jw.c - the response writer's strings (api/ts_jw.c).
 *
 * The writer tests sixteen bytes (SSE2) or eight at a time for a byte to
 * escape and copies the runs between escapes; these cases put each
 * escapable byte at every offset of strings up to 72 bytes, so every
 * block and word boundary and the overlapping last word are crossed.
 * Built twice: as the library is, and with -DTS_JW_NO_SIMD (the
 * portable word scan alone).
 * Numbers: test_dtoa.c; the whole writer's text: test_api.c.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api_int.h"

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

static Suite *jw_suite(void)
{
    Suite *s = suite_create("jw");
    TCase *t = tcase_create("jw");

    tcase_add_test(t, test_writer_escapes);
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
