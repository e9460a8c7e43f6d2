/*
 * ts_cat.h - the catalogue answers, built once at server start.
 *
 * GET /v1/presets and /v1/gpus depend on nothing but the build
 * (ts_api_catalogues()): their bytes are made once by the api layer and
 * then served from memory with a strong ETag.  The OpenAPI document is
 * one more entry, read from its file once at start (ts_cat_add_file),
 * with its gzip coding made then too: 290 KB, it cost a read and a
 * compression per request when it was served as a static file.
 * Read-only once the server starts, so every worker thread may use it
 * without a lock.
 */
#ifndef TS_CAT_H
#define TS_CAT_H

#include <stddef.h>

#include "ts_etag.h"
#include "ts_static.h"

#define TS_CAT_MAX 8

typedef struct ts_cat_entry {
    const char *path; /* static, "/v1/gpus" */
    char *body;       /* the 200 answer, NUL-terminated */
    size_t len;
    const char *content_type; /* static */
    char etag[TS_ETAG_LEN];   /* of the body (ts_etag_of) */
    char *gz;                 /* gzip coding of the body, or NULL */
    size_t gzlen;
    char etag_gz[TS_ETAG_LEN]; /* etag with "-gz": its own validator */
    int file;                  /* read by ts_cat_add_file */
} ts_cat_entry;

typedef struct ts_cat {
    size_t n;
    ts_cat_entry e[TS_CAT_MAX];
} ts_cat;

typedef enum ts_cat_status { TS_CAT_OK = 0, TS_CAT_NOMEM } ts_cat_status;

/* Build every catalogue answer into *cat.  A route whose answer is not
 * a 200 (a broken built-in entry) is left out, so it is answered per
 * request, problem and all.  On TS_CAT_NOMEM nothing is kept. */
ts_cat_status ts_cat_build(ts_cat *cat);

/* Read the file at fs_path once, as the answer for GET path (static
 * string), with a gzip coding when ts_gzip_worth() says so.  Anything
 * but TS_STATIC_OK adds nothing; the caller answers for it. */
ts_static_status ts_cat_add_file(ts_cat *cat, const char *path, const char *fs_path);

/* The entry for an exact path, or NULL. */
const ts_cat_entry *ts_cat_find(const ts_cat *cat, const char *path);

void ts_cat_free(ts_cat *cat);

#endif /* TS_CAT_H */
