/*
 * ts_cat.c - the catalogue answers (see ts_cat.h).
 */
#include "ts_cat.h"

#include <stdlib.h>
#include <string.h>

#include "ts_api.h"
#include "ts_gzip.h"

ts_cat_status ts_cat_build(ts_cat *cat)
{
    const char *const *paths = ts_api_catalogues();

    memset(cat, 0, sizeof *cat);
    for (size_t i = 0; paths[i] != NULL && cat->n < TS_CAT_MAX; i++) {
        ts_api_response r;
        ts_cat_entry *e = &cat->e[cat->n];

        if (ts_api_handle("GET", paths[i], NULL, NULL, 0, &r) != 0) {
            ts_api_response_free(&r);
            ts_cat_free(cat);
            return TS_CAT_NOMEM;
        }
        if (r.status != 200) {
            ts_api_response_free(&r);
            continue;
        }
        e->path = paths[i];
        e->body = r.body; /* now ours */
        e->len = r.body_len;
        e->content_type = r.content_type;
        ts_etag_of(e->body, e->len, e->etag);
        r.body = NULL;
        ts_api_response_free(&r);
        cat->n++;
    }
    return TS_CAT_OK;
}

ts_static_status ts_cat_add_file(ts_cat *cat, const char *path, const char *fs_path)
{
    ts_static_file f;

    if (cat->n >= TS_CAT_MAX)
        return TS_STATIC_NOMEM;
    ts_static_status st = ts_static_load_file(fs_path, &f);
    if (st != TS_STATIC_OK)
        return st;

    ts_cat_entry *e = &cat->e[cat->n];
    memset(e, 0, sizeof *e);
    e->path = path;
    e->body = f.data; /* now ours */
    e->len = f.len;
    e->content_type = f.content_type;
    e->file = 1;
    /* By content, not size and mtime: replicas built from the same
     * document agree. */
    ts_etag_of(e->body, e->len, e->etag);
    /* A failed compression leaves e->gz NULL: identity only is served. */
    if (ts_gzip_worth(e->content_type, e->len) &&
        ts_etag_gz(e->etag, e->etag_gz, sizeof e->etag_gz))
        (void)ts_gzip_compress(e->body, e->len, &e->gz, &e->gzlen);
    cat->n++;
    return TS_STATIC_OK;
}

const ts_cat_entry *ts_cat_find(const ts_cat *cat, const char *path)
{
    for (size_t i = 0; i < cat->n; i++)
        if (strcmp(cat->e[i].path, path) == 0)
            return &cat->e[i];
    return NULL;
}

void ts_cat_free(ts_cat *cat)
{
    for (size_t i = 0; i < cat->n; i++) {
        free(cat->e[i].body);
        free(cat->e[i].gz);
    }
    memset(cat, 0, sizeof *cat);
}
