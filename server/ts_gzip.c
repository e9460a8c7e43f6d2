/*
 * ts_gzip.c - gzip content coding for the dashboard's static files.
 *
 * The dashboard is ~130 KB of text that compresses to ~37 KB; on a first
 * visit that is the difference between one and several round trips of
 * TCP slow start.  Files are compressed per response (zlib level 6, about
 * a millisecond for the largest) rather than cached, so nothing is shared
 * between requests and an edited file is served compressed at once.
 */
#include "ts_gzip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#define TS_GZIP_MIN 1024u

/* The q-value after a coding: ";q=0", ";q=0.0"... mean "not acceptable". */
static bool q_positive(const char *p, const char *end)
{
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == ';'))
            p++;
        if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
            double q = strtod(p + 2, NULL);
            return q > 0;
        }
        while (p < end && *p != ';')
            p++;
    }
    return true;
}

bool ts_gzip_accepted(const char *ae)
{
    const char *p = ae;

    if (ae == NULL)
        return false;
    while (*p != '\0') {
        const char *tok, *end;
        size_t tl;

        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        tok = p;
        while (*p != '\0' && *p != ',' && *p != ';' && *p != ' ' && *p != '\t')
            p++;
        tl = (size_t)(p - tok);
        end = p;
        while (*end != '\0' && *end != ',')
            end++;
        if (((tl == 4 && strncasecmp(tok, "gzip", 4) == 0) ||
             (tl == 6 && strncasecmp(tok, "x-gzip", 6) == 0) ||
             (tl == 1 && tok[0] == '*')) &&
            q_positive(p, end))
            return true;
        p = end;
    }
    return false;
}

bool ts_gzip_worth(const char *ct, size_t len)
{
    if (ct == NULL || len < TS_GZIP_MIN)
        return false;
    return strncmp(ct, "text/", 5) == 0 || strncmp(ct, "application/javascript", 22) == 0 ||
           strncmp(ct, "application/json", 16) == 0 || strncmp(ct, "image/svg+xml", 13) == 0;
}

int ts_gzip_compress(const char *in, size_t n, char **out, size_t *outn)
{
    z_stream z;
    uLong bound;
    char *buf;
    int rc;

    *out = NULL;
    *outn = 0;
    if (n > 0xffffffffu)
        return -1;
    memset(&z, 0, sizeof z);
    /* windowBits 15 + 16: a gzip header and trailer instead of zlib's. */
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    bound = deflateBound(&z, (uLong)n) + 32; /* + gzip header and trailer */
    buf = malloc(bound);
    if (buf == NULL) {
        deflateEnd(&z);
        return -1;
    }
    z.next_in = (Bytef *)(void *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)buf;
    z.avail_out = (uInt)bound;
    rc = deflate(&z, Z_FINISH);
    if (rc != Z_STREAM_END || z.total_out >= n) {
        deflateEnd(&z);
        free(buf);
        return -1;
    }
    *outn = (size_t)z.total_out;
    *out = buf;
    deflateEnd(&z);
    return 0;
}
