/*
 * ts_cat.h - the catalogue answers, built once at server start.
 *
 * GET /v1/presets and /v1/gpus depend on nothing but the build
 * (ts_api_catalogues()): their bytes are made once by the api layer and
 * then served from memory with a strong ETag.  Read-only after
 * ts_cat_new(), so every worker thread may use it without a lock.
 */
#ifndef TS_CAT_H
#define TS_CAT_H

#include <stddef.h>

#include "ts_etag.h"

#define TS_CAT_MAX 8

typedef struct ts_cat_entry {
    const char *path;          /* static, "/v1/gpus" */
    char *body;                /* the 200 answer, NUL-terminated */
    size_t len;
    const char *content_type;  /* static */
    char etag[TS_ETAG_LEN];    /* of the body (ts_etag_of) */
} ts_cat_entry;

typedef struct ts_cat {
    size_t n;
    ts_cat_entry e[TS_CAT_MAX];
} ts_cat;

typedef enum ts_cat_status {
    TS_CAT_OK = 0,
    TS_CAT_NOMEM
} ts_cat_status;

/* Build every catalogue answer into *cat.  A route whose answer is not
 * a 200 (a broken built-in entry) is left out, so it is answered per
 * request, problem and all.  On TS_CAT_NOMEM nothing is kept. */
ts_cat_status ts_cat_build(ts_cat *cat);

/* The entry for an exact path, or NULL. */
const ts_cat_entry *ts_cat_find(const ts_cat *cat, const char *path);

void ts_cat_free(ts_cat *cat);

#endif /* TS_CAT_H */
