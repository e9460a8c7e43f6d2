/*
 * ts_gen_check.c - compare a committed generated file with the
 * generator's text, and say how to refresh it (ts_gen_check.h).
 */
#include "ts_gen_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file's bytes (malloc'd, *len set), or NULL when it cannot be read. */
static char *read_committed(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long n;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (p = malloc((size_t)n + 1)) != NULL) {
        *len = fread(p, 1, (size_t)n, f);
        if (*len != (size_t)n) {
            free(p);
            p = NULL;
        }
    }
    fclose(f);
    return p;
}

/* 1-based number of the first line where a and b differ. */
static size_t first_diff_line(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t line = 1;

    for (size_t i = 0; i < alen && i < blen && a[i] == b[i]; i++)
        if (a[i] == '\n')
            line++;
    return line;
}

int gen_check_committed(const char *committed, const char *text, size_t len, const char *out,
                        const char *refresh)
{
    size_t clen = 0;
    char *old = read_committed(committed, &clen);
    int rc = 0;

    if (old == NULL || clen != len || memcmp(old, text, len) != 0) {
        fprintf(stderr,
                "%s is stale: it differs from the generator's output from line %zu.\n"
                "  see:     diff -u %s %s\n"
                "  refresh: %s (then commit %s)\n",
                committed, old != NULL ? first_diff_line(old, clen, text, len) : 1, committed, out,
                refresh, committed);
        rc = 1;
    } else {
        printf("%s is up to date\n", committed);
    }
    free(old);
    return rc;
}
