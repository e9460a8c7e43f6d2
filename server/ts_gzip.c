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

/* RFC 9110 12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ),
 * in thousandths; -1 when [p, end) is not one. */
static int qvalue(const char *p, const char *end)
{
    size_t n = (size_t)(end - p);
    if (n == 0 || (p[0] != '0' && p[0] != '1'))
        return -1;
    int q = (p[0] - '0') * 1000;
    if (n == 1)
        return q;
    if (p[1] != '.' || n > 5)
        return -1;
    int scale = 100;
    for (size_t i = 2; i < n; i++, scale /= 10) {
        if (p[i] < '0' || p[i] > '9' || (q == 1000 && p[i] != '0'))
            return -1;
        q += (p[i] - '0') * scale;
    }
    return q;
}

static bool ows(char c)
{
    return c == ' ' || c == '\t';
}

/* One list member [p, end): its coding and weight (1000 when none, 0
 * when the weight is malformed: a client that cannot say is not sent
 * that coding). */
static void member(const char *p, const char *end, const char **tok, size_t *tl, int *q)
{
    while (p < end && ows(*p))
        p++;
    *tok = p;
    while (p < end && *p != ';' && !ows(*p))
        p++;
    *tl = (size_t)(p - *tok);
    *q = 1000;
    while (p < end) { /* parameters: OWS ";" OWS name "=" value */
        while (p < end && (ows(*p) || *p == ';'))
            p++;
        const char *name = p;
        while (p < end && *p != ';' && *p != '=' && !ows(*p))
            p++;
        bool is_q = p - name == 1 && (*name == 'q' || *name == 'Q');
        if (p < end && *p == '=')
            p++;
        const char *v = p;
        while (p < end && *p != ';' && !ows(*p))
            p++;
        if (is_q) {
            int w = qvalue(v, p);
            *q = w < 0 ? 0 : w;
        }
    }
}

bool ts_gzip_accepted(const char *ae)
{
    /* The weight the field gives gzip by name (x-gzip is gzip, RFC 9110
     * 8.4.1.3) and by "*"; -1 where it gives none.  "*" covers only the
     * codings the field does not name (12.5.3), so a named weight, q=0
     * included, wins over it. */
    int named = -1, star = -1;

    if (ae == NULL)
        return false;
    for (const char *p = ae; *p != '\0';) {
        const char *end = strchr(p, ',');
        if (end == NULL)
            end = p + strlen(p);
        const char *tok;
        size_t tl;
        int q;
        member(p, end, &tok, &tl, &q);
        if ((tl == 4 && strncasecmp(tok, "gzip", 4) == 0) ||
            (tl == 6 && strncasecmp(tok, "x-gzip", 6) == 0))
            named = q > named ? q : named;
        else if (tl == 1 && tok[0] == '*')
            star = q > star ? q : star;
        p = *end == ',' ? end + 1 : end;
    }
    return named >= 0 ? named > 0 : star > 0;
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
