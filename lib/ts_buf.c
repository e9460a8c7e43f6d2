/*
 * ts_buf.c - capped dynamic buffer (see ts_buf.h).
 */
#include "ts_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ts_buf_init(ts_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

/* Make room for n more bytes plus the NUL, doubling to amortise. */
ts_buf_status ts_buf_reserve(ts_buf *b, size_t n, size_t hint)
{
    if (n > b->max - b->len)
        return TS_BUF_FULL;
    size_t need = b->len + n + 1;
    if (need <= b->cap)
        return TS_BUF_OK;
    size_t cap = b->cap ? b->cap : hint > 256 ? hint : 256;
    while (cap < need)
        cap = cap > ((size_t)-1) / 2 ? need : cap * 2;
    if (cap > b->max + 1)
        cap = b->max + 1;
    char *p = realloc(b->data, cap);
    if (p == NULL)
        return TS_BUF_NOMEM;
    b->data = p;
    b->cap = cap;
    return TS_BUF_OK;
}

ts_buf_status ts_buf_append(ts_buf *b, const void *p, size_t n)
{
    ts_buf_status st = ts_buf_reserve(b, n, 0);
    if (st != TS_BUF_OK)
        return st;
    if (n > 0)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return TS_BUF_OK;
}

ts_buf_status ts_buf_printf(ts_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return TS_BUF_NOMEM;
    ts_buf_status st = ts_buf_reserve(b, (size_t)n, 0);
    if (st != TS_BUF_OK)
        return st;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return TS_BUF_OK;
}

char *ts_buf_steal(ts_buf *b, size_t *len)
{
    char *p = b->data;
    if (p == NULL)
        p = calloc(1, 1); /* an empty, still freeable, string */
    if (len != NULL)
        *len = p ? b->len : 0;
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}

void ts_buf_free(ts_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}
