/*
 * ts_cat.c - the catalogue answers (see ts_cat.h).
 */
#include "ts_cat.h"

#include <stdlib.h>
#include <string.h>

#include "ts_api.h"

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

const ts_cat_entry *ts_cat_find(const ts_cat *cat, const char *path)
{
    for (size_t i = 0; i < cat->n; i++)
        if (strcmp(cat->e[i].path, path) == 0)
            return &cat->e[i];
    return NULL;
}

void ts_cat_free(ts_cat *cat)
{
    for (size_t i = 0; i < cat->n; i++)
        free(cat->e[i].body);
    memset(cat, 0, sizeof *cat);
}
