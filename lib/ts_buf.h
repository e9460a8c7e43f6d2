/*
 * ts_buf.h - a growable byte buffer with a hard size limit.
 *
 * Modelled on curl's dynbuf: appends past the limit fail instead of
 * growing, so a request body can never take more memory than the cap.
 * The data is always NUL-terminated (one spare byte beyond len).
 *
 * The one capped buffer of the project: the server's request bodies and
 * metrics text, the api's JSON writer (ts_jw.c) and the CLI's HTTP
 * responses all hold their bytes in one.  libc only, so the CLI compiles
 * it in without the core.
 */
#ifndef TS_BUF_H
#define TS_BUF_H

#include <stddef.h>

#if defined(__GNUC__)
#define TS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TS_PRINTF(a, b)
#endif

typedef enum ts_buf_status {
    TS_BUF_OK = 0,
    TS_BUF_FULL, /* the append would exceed the limit; buffer unchanged */
    TS_BUF_NOMEM /* allocation failed; buffer unchanged */
} ts_buf_status;

typedef struct ts_buf {
    char *data; /* NULL until the first append */
    size_t len;
    size_t cap; /* allocated bytes, including the NUL */
    size_t max; /* largest len allowed */
} ts_buf;

void ts_buf_init(ts_buf *b, size_t max);
/* Room for n more bytes and the NUL, allocating at least `hint` bytes on
 * the first allocation (a writer that knows its usual size grows once).
 * TS_BUF_FULL past max, TS_BUF_NOMEM when malloc fails; unchanged then. */
ts_buf_status ts_buf_reserve(ts_buf *b, size_t n, size_t hint);
/* The fast test of ts_buf_reserve, for writers that fill data[len..]
 * themselves and then add to len (the JSON writer's per-member path). */
static inline ts_buf_status ts_buf_room(ts_buf *b, size_t n)
{
    return n < b->cap - b->len ? TS_BUF_OK : ts_buf_reserve(b, n, 0);
}
ts_buf_status ts_buf_append(ts_buf *b, const void *p, size_t n);
ts_buf_status ts_buf_printf(ts_buf *b, const char *fmt, ...) TS_PRINTF(2, 3);
/* Hand the data to the caller (malloc'd, NUL-terminated; never NULL unless
 * out of memory) and reset the buffer. */
char *ts_buf_steal(ts_buf *b, size_t *len);
void ts_buf_free(ts_buf *b);

#endif /* TS_BUF_H */
