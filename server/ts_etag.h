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

#endif /* TS_ETAG_H */
