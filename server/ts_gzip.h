/*
 * ts_gzip.h - gzip content coding for the dashboard's static files.
 */
#ifndef TS_GZIP_H
#define TS_GZIP_H

#include <stdbool.h>
#include <stddef.h>

/* Does an Accept-Encoding value allow gzip (RFC 9110 section 12.5.3)?
 * The weight of "gzip" or "x-gzip" where the field names them (q=0: no,
 * whatever "*" says), else that of "*"; a weight outside the qvalue
 * grammar counts as 0.  NULL: no. */
bool ts_gzip_accepted(const char *accept_encoding);

/* Worth compressing: text, scripts, JSON and SVG of at least 1 KiB. */
bool ts_gzip_worth(const char *content_type, size_t len);

/* gzip in[0..n) into a malloc'd *out of *outn bytes.  0, or -1 when zlib
 * or malloc fails or the result would not be smaller (keep the original). */
int ts_gzip_compress(const char *in, size_t n, char **out, size_t *outn);

#endif /* TS_GZIP_H */
