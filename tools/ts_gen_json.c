/*
 * ts_gen_json.c - a jansson value in json.dumps(indent=2,
 * ensure_ascii=False)'s layout (see ts_gen_json.h).
 *
 * The layout follows CPython's Lib/json/encoder.py (_make_iterencode:
 * "[]"/"{}" when empty, else one member a line at indent+2, ", " never,
 * ": " after a key) and float.__repr__ (shortest digits, plain notation
 * for decimal exponents -4..15 with ".0" on an integral value, else
 * d.ddde+XX with two exponent digits at least).
 */
#include "ts_gen_json.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_dtoa.h"

static ts_buf_status emit(ts_buf *b, const char *s, size_t n)
{
    return ts_buf_append(b, s, n);
}

static ts_buf_status emit_indent(ts_buf *b, int n)
{
    static const char spaces[] = "                                ";
    ts_buf_status st = TS_BUF_OK;

    for (; n > 0 && st == TS_BUF_OK; n -= 32)
        st = emit(b, spaces, n < 32 ? (size_t)n : 32);
    return st;
}

/* A string literal: ", \ and the C0 controls escaped, the rest (UTF-8
 * included) copied, as ensure_ascii=False writes it. */
ts_buf_status gen_json_str(ts_buf *b, const char *s, size_t n)
{
    ts_buf_status st = emit(b, "\"", 1);

    for (size_t i = 0; i < n && st == TS_BUF_OK; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];

        switch (c) {
        case '"':
            st = emit(b, "\\\"", 2);
            break;
        case '\\':
            st = emit(b, "\\\\", 2);
            break;
        case '\n':
            st = emit(b, "\\n", 2);
            break;
        case '\r':
            st = emit(b, "\\r", 2);
            break;
        case '\t':
            st = emit(b, "\\t", 2);
            break;
        case '\b':
            st = emit(b, "\\b", 2);
            break;
        case '\f':
            st = emit(b, "\\f", 2);
            break;
        default:
            if (c < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                st = emit(b, esc, 6);
            } else {
                st = emit(b, s + i, 1);
            }
        }
    }
    return st == TS_BUF_OK ? emit(b, "\"", 1) : st;
}

/* A finite real as Python's repr: the shortest digits d (n of them) of
 * v = d * 10^e10; x = e10 + n - 1 is the decimal exponent. */
static ts_buf_status emit_real(ts_buf *b, double v)
{
    char dig[24], out[48];
    uint64_t digits;
    int32_t e10;
    size_t n, k = 0;
    int x;

    if (v < 0 || (v == 0 && signbit(v)))
        out[k++] = '-';
    v = fabs(v);
    if (v == 0)
        return ts_buf_printf(b, "%s0.0", k ? "-" : "");
    ts_dtoa_shortest(v, &digits, &e10);
    n = ts_dtoa_u64(digits, dig);
    x = (int)e10 + (int)n - 1;
    if (x < -4 || x >= 16) {
        out[k++] = dig[0];
        if (n > 1) {
            out[k++] = '.';
            memcpy(out + k, dig + 1, n - 1);
            k += n - 1;
        }
        k += (size_t)snprintf(out + k, sizeof out - k, "e%c%02d", x < 0 ? '-' : '+', abs(x));
    } else if (x < 0) {
        memcpy(out + k, "0.0000", (size_t)(1 - x));
        k += (size_t)(1 - x);
        memcpy(out + k, dig, n);
        k += n;
    } else {
        /* x + 1 digits before the point, zeros when the digits run out */
        for (int i = 0; i <= x; i++)
            out[k++] = (size_t)i < n ? dig[i] : '0';
        out[k++] = '.';
        if ((size_t)x + 1 >= n) {
            out[k++] = '0';
        } else {
            memcpy(out + k, dig + x + 1, n - (size_t)x - 1);
            k += n - (size_t)x - 1;
        }
    }
    return emit(b, out, k);
}

static ts_buf_status emit_value(ts_buf *b, const json_t *v, int ind);

static ts_buf_status emit_array(ts_buf *b, const json_t *v, int ind)
{
    ts_buf_status st;
    size_t i;
    json_t *item;

    if (json_array_size(v) == 0)
        return emit(b, "[]", 2);
    st = emit(b, "[\n", 2);
    json_array_foreach(v, i, item)
    {
        if (st == TS_BUF_OK && i > 0)
            st = emit(b, ",\n", 2);
        if (st == TS_BUF_OK)
            st = emit_indent(b, ind + 2);
        if (st == TS_BUF_OK)
            st = emit_value(b, item, ind + 2);
    }
    if (st == TS_BUF_OK)
        st = emit(b, "\n", 1);
    if (st == TS_BUF_OK)
        st = emit_indent(b, ind);
    return st == TS_BUF_OK ? emit(b, "]", 1) : st;
}

static ts_buf_status emit_object(ts_buf *b, const json_t *v, int ind)
{
    ts_buf_status st;
    const char *key;
    json_t *item;
    bool first = true;

    if (json_object_size(v) == 0)
        return emit(b, "{}", 2);
    st = emit(b, "{\n", 2);
    /* jansson keeps insertion order: the template's order is the file's */
    json_object_foreach((json_t *)v, key, item)
    {
        if (st == TS_BUF_OK && !first)
            st = emit(b, ",\n", 2);
        first = false;
        if (st == TS_BUF_OK)
            st = emit_indent(b, ind + 2);
        if (st == TS_BUF_OK)
            st = gen_json_str(b, key, strlen(key));
        if (st == TS_BUF_OK)
            st = emit(b, ": ", 2);
        if (st == TS_BUF_OK)
            st = emit_value(b, item, ind + 2);
    }
    if (st == TS_BUF_OK)
        st = emit(b, "\n", 1);
    if (st == TS_BUF_OK)
        st = emit_indent(b, ind);
    return st == TS_BUF_OK ? emit(b, "}", 1) : st;
}

static ts_buf_status emit_value(ts_buf *b, const json_t *v, int ind)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return emit_object(b, v, ind);
    case JSON_ARRAY:
        return emit_array(b, v, ind);
    case JSON_STRING:
        return gen_json_str(b, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return ts_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_REAL:
        return emit_real(b, json_real_value(v));
    case JSON_TRUE:
        return emit(b, "true", 4);
    case JSON_FALSE:
        return emit(b, "false", 5);
    case JSON_NULL:
    default:
        return emit(b, "null", 4);
    }
}

ts_buf_status gen_json_write(ts_buf *b, const json_t *v)
{
    return emit_value(b, v, 0);
}
