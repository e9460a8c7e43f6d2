/*
 * ts_jw.h - the one compact JSON writer (answers, problem bodies, the
 * server's prepared answers).  libc only: it writes into a capped ts_buf
 * (ts_buf.h), numbers through ts_dtoa.h, client text checked with
 * ts_utf8.h.
 */
#ifndef TS_JW_H
#define TS_JW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ts_buf.h"

typedef struct ts_jw {
    ts_buf b;              /* the text (ts_buf.c: capped, NUL-terminated) */
    bool first;            /* next value is the first in its container */
    bool oom;              /* malloc failed or the hard cap was reached */
    const char *nonfinite; /* static key of the first NaN/Inf, or NULL */
} ts_jw;

void ts_jw_init(ts_jw *w);
void ts_jw_discard(ts_jw *w);
/* The NUL-terminated text (caller frees), or NULL after oom. */
char *ts_jw_finish(ts_jw *w, size_t *len);

/* key is the member name inside an object, NULL inside an array or at
 * the top.  Keys are static literals or table names: they are not
 * escaped.  Each call below passes the key's length along; for a literal
 * key the compiler folds it (ts_jw_klen inlines), so the writer copies
 * keys without a strlen. */
static inline size_t ts_jw_klen(const char *key)
{
    return key != NULL ? strlen(key) : 0;
}

void ts_jw_open_(ts_jw *w, const char *key, size_t kl, char bracket);
void ts_jw_close(ts_jw *w, char bracket); /* '}' or ']' */
void ts_jw_num_(ts_jw *w, const char *key, size_t kl, double v);
void ts_jw_int_(ts_jw *w, const char *key, size_t kl, int64_t v);
void ts_jw_bool_(ts_jw *w, const char *key, size_t kl, bool v);
void ts_jw_null_(ts_jw *w, const char *key, size_t kl);
/* s of length n (escaped as needed); s NULL writes null. */
void ts_jw_strl_(ts_jw *w, const char *key, size_t kl, const char *s, size_t n);
/* The same for a text that may hold bytes a client sent: each byte that
 * does not start well-formed UTF-8 goes out as U+FFFD. */
void ts_jw_text_(ts_jw *w, const char *key, size_t kl, const char *s, size_t n);
#define ts_jw_text(w, key, s) \
    ts_jw_text_((w), (key), ts_jw_klen(key), (s), (s) != NULL ? strlen(s) : 0)

#define ts_jw_open(w, key, bracket) \
    ts_jw_open_((w), (key), ts_jw_klen(key), (bracket)) /* '{' or '[' */
#define ts_jw_num(w, key, v)  ts_jw_num_((w), (key), ts_jw_klen(key), (v))
#define ts_jw_int(w, key, v)  ts_jw_int_((w), (key), ts_jw_klen(key), (v))
#define ts_jw_bool(w, key, v) ts_jw_bool_((w), (key), ts_jw_klen(key), (v))
#define ts_jw_null(w, key)    ts_jw_null_((w), (key), ts_jw_klen(key))
/* NULL -> null */
#define ts_jw_str(w, key, s) ts_jw_str_((w), (key), ts_jw_klen(key), (s))
/* at most cap bytes of s (a fixed-size member that may fill its array) */
#define ts_jw_strn(w, key, s, cap) \
    ts_jw_strl_((w), (key), ts_jw_klen(key), (s), strnlen((s), (cap)))

static inline void ts_jw_str_(ts_jw *w, const char *key, size_t kl, const char *s)
{
    ts_jw_strl_(w, key, kl, s, s != NULL ? strlen(s) : 0);
}

#endif /* TS_JW_H */
