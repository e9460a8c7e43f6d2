/*
 * ts_etag.c - entity tags (see ts_etag.h).
 */
#include "ts_etag.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE (RFC 9110 8.8.3): the
 * quoted part of tag at p, or NULL when p is not one. */
static const char *opaque(const char *p, size_t *len)
{
    const char *end;

    if (strncmp(p, "W/", 2) == 0)
        p += 2;
    if (*p != '"')
        return NULL;
    end = strchr(p + 1, '"');
    if (end == NULL)
        return NULL;
    *len = (size_t)(end - p) + 1;
    return p;
}

bool ts_etag_match(const char *inm, const char *etag)
{
    const char *want, *p = inm;
    size_t wl;

    if (inm == NULL || etag == NULL || (want = opaque(etag, &wl)) == NULL)
        return false;
    while (*p != '\0') {
        const char *tag;
        size_t tl;

        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (*p == '\0')
            break;
        if (*p == '*')
            return true;
        tag = opaque(p, &tl);
        if (tag != NULL) {
            if (tl == wl && memcmp(tag, want, wl) == 0)
                return true;
            p = tag + tl;
        }
        /* On to the next member (a malformed one is skipped). */
        while (*p != '\0' && *p != ',')
            p++;
    }
    return false;
}

bool ts_etag_gz(const char *etag, char *out, size_t cap)
{
    size_t el = strlen(etag);

    if (el < 2 || etag[el - 1] != '"' || el + 3 >= cap)
        return false;
    memmove(out, etag, el - 1);
    memcpy(out + el - 1, "-gz\"", 5);
    return true;
}

void ts_etag_of(const void *data, size_t len, char out[TS_ETAG_LEN])
{
    const unsigned char *b = data;
    uint64_t h = UINT64_C(14695981039346656037); /* FNV-1a 64 offset basis */

    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= UINT64_C(1099511628211); /* FNV 64-bit prime */
    }
    snprintf(out, TS_ETAG_LEN, "\"%llx-%016llx\"", (unsigned long long)len, (unsigned long long)h);
}
