/*
 * ts_gen_json.h - a jansson value written as the committed JSON files
 * are: Python's json.dumps(value, indent=2, ensure_ascii=False).
 *
 * jansson's own json_dumps() writes a real with 17 significant digits
 * (0.1 becomes 0.10000000000000001); this writer gives each real its
 * shortest round-trip digits (lib/ts_dtoa.h) in Python's repr layout
 * (3.0, 1e+20, 1.5e-07), so a generated file reads as a hand-kept one
 * did and reloads to the same doubles.  Build-time tools only.
 */
#ifndef TS_GEN_JSON_H
#define TS_GEN_JSON_H

#include <jansson.h>

#include "ts_buf.h"

/* v at indent 0, no trailing newline.  TS_BUF_OK, or the buffer's
 * failure (then b holds a partial text). */
ts_buf_status gen_json_write(ts_buf *b, const json_t *v);

/* s[0 .. n) as a JSON string literal, as json.dumps(ensure_ascii=False)
 * writes it: ", \ and the C0 controls escaped, the rest (UTF-8) copied. */
ts_buf_status gen_json_str(ts_buf *b, const char *s, size_t n);

#endif /* TS_GEN_JSON_H */
