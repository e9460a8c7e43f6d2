/*
 * ts_utf8.c - cutting human text at character boundaries (ts_utf8.h).
 */
#include <limits.h>
#include <string.h>

#include "ts_utf8.h"

/* Bytes a sequence starting with lead c has (1 for ASCII and for bytes
 * that cannot lead one: those stand alone). */
static size_t seq_len(unsigned char c)
{
    return c >= 0xF0 && c < 0xF8 ? 4 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xC0 && c < 0xE0 ? 2 : 1;
}

size_t ts_utf8_cut(const char *s, size_t max)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strnlen(s, max), k;

    if (n < max || u[n] == '\0' || !ts_utf8_is_cont(u[n]))
        return n; /* all of s, or the next byte starts a character */
    /* u[n] continues a sequence: back to its lead, at most 3 bytes away
     * (a 4-byte sequence).  Further back there is no lead, the text is
     * ill-formed there, and the cut stays where it was. */
    for (k = 1; k <= 3 && k <= n; k++)
        if (!ts_utf8_is_cont(u[n - k]))
            return seq_len(u[n - k]) > k ? n - k : n;
    return n;
}

int ts_utf8_prec(const char *s, size_t max)
{
    return (int)ts_utf8_cut(s, max < (size_t)INT_MAX ? max : (size_t)INT_MAX);
}

size_t ts_utf8_copy(char *dst, size_t size, const char *s)
{
    size_t n;

    if (size == 0)
        return 0;
    n = ts_utf8_cut(s, size - 1);
    memcpy(dst, s, n);
    dst[n] = '\0';
    return n;
}

size_t ts_utf8_trim(char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t k;

    for (k = 1; k <= 4 && k <= len; k++) {
        if (!ts_utf8_is_cont(u[len - k])) {
            /* The last lead byte: complete when its sequence fits in the
             * k bytes left (a stray continuation run is left alone). */
            if (seq_len(u[len - k]) > k)
                len -= k;
            break;
        }
    }
    s[len] = '\0';
    return len;
}

size_t ts_utf8_drop_cut(char *s)
{
    unsigned char *u = (unsigned char *)s;
    size_t r = 0, w = 0;

    while (u[r] != '\0') {
        size_t n = seq_len(u[r]), k = 1;

        /* The NUL is no continuation byte: k stops at the end. */
        while (k < n && ts_utf8_is_cont(u[r + k]))
            k++;
        if (k < n) {
            r += k; /* cut short: the lead and what it had go */
            continue;
        }
        for (; k > 0; k--)
            u[w++] = u[r++];
    }
    u[w] = '\0';
    return w;
}
