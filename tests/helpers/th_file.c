/*
 * th_file.c - whole-file reads and writes (see th_file.h).
 */
#include "th_file.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

char *th_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 4096, n = 0, got;
    char *p;

    if (f == NULL)
        return NULL;
    p = malloc(cap);
    while (p != NULL && (got = fread(p + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *q = realloc(p, cap * 2);

            if (q == NULL)
                free(p);
            p = q;
            cap *= 2;
        }
    }
    fclose(f);
    if (p != NULL) {
        p[n] = '\0';
        if (len != NULL)
            *len = n;
    }
    return p;
}

void th_write_file(const char *dir, const char *name, const char *text)
{
    char path[2048];
    FILE *f;

    if (name != NULL)
        snprintf(path, sizeof path, "%s/%s", dir, name);
    else
        snprintf(path, sizeof path, "%s", dir);
    f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_int_ge(fputs(text, f), 0);
    ck_assert_int_eq(fclose(f), 0);
}
