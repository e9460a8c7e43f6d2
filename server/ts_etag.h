/*
 * ts_etag.h - entity tags: If-None-Match evaluation and content tags.
 *
 * One helper for every validator the server hands out (static files,
 * the catalogue answers): RFC 9110 section 13.1.2.
 */
#ifndef TS_ETAG_H
#define TS_ETAG_H

#include <stdbool.h>
#include <stddef.h>

/* "\"" + 16 hex + "-" + 16 hex + "\"" and the NUL, rounded up. */
#define TS_ETAG_LEN 40

/* Does an If-None-Match field value match etag?  The value is "*" or a
 * comma-separated list of entity tags, compared weakly (a W/ prefix on
 * either side is ignored, the quoted opaque tags must be equal).  NULL
 * (no field) and malformed members match nothing. */
bool ts_etag_match(const char *if_none_match, const char *etag);

/* A strong tag from the bytes themselves: "\"<len>-<FNV-1a 64>\"" in
 * hex (Fowler-Noll-Vo, draft-eastlake-fnv section 2).  The same bytes
 * always give the same tag, so restarts and replicas agree. */
void ts_etag_of(const void *data, size_t len, char out[TS_ETAG_LEN]);

/* The tag of a representation's gzip coding: etag (a quoted tag) with
 * "-gz" before its closing quote, into out[cap] (out may be etag).  Each
 * coding needs a strong validator of its own (RFC 9110 section 8.8.3.3).
 * false, out untouched, when etag is not quoted or the result does not
 * fit. */
bool ts_etag_gz(const char *etag, char *out, size_t cap);

#endif /* TS_ETAG_H */
