/*
 * ts_json_check.c - one request member against its row of the field
 * table (ts_fields[], core/ts_fields.h): which row a key is, its JSON type
 * and range, and the problem that names it by its JSON pointer (unknown,
 * wrong type, out of range, not one of the enum's names).  No side
 * effects: the parser (ts_json_in.c) stores what passes.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ts_api_int.h"

/* Linear search: 59 short names, cheaper than hashing for every key. */
size_t ts_json_field_index(const char *key)
{
    size_t i;

    /* The first byte rules out most of the table without a call. */
    for (i = 0; i < TS_FI_COUNT; i++)
        if (ts_fields[i].name[0] == key[0] && strcmp(ts_fields[i].name, key) == 0)
            return i;
    return SIZE_MAX;
}

/* Levenshtein distance, capped: we only care whether it is <= 2. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t row[64];
    size_t i, j;

    if (la >= 63 || lb >= 63)
        return SIZE_MAX;
    for (j = 0; j <= lb; j++)
        row[j] = j;
    for (i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] == b[j - 1] ? 0 : 1);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *ts_json_suggest(const char *key, bool fit)
{
    const char *best = NULL;
    size_t best_d = 3;
    size_t i;

    for (i = 0; i < TS_FI_COUNT; i++) {
        const ts_field *f = &ts_fields[i];
        size_t d;

        if ((f->fit_only && !fit) || f->search_only || f->budget_only)
            continue;
        d = edit_distance(key, f->name);
        if (d < best_d) {
            best_d = d;
            best = f->name;
        }
    }
    return best;
}

/* Copy at most max bytes of s, ending on a UTF-8 boundary, "..." if cut. */
void ts_json_quote_short(char *buf, size_t size, const char *s, size_t max)
{
    int n = ts_utf8_prec(s, max);

    snprintf(buf, size, "%.*s%s", n, s, s[n] != '\0' ? "..." : "");
}

/* RFC 6901: "~" -> "~0", "/" -> "~1".  Truncated (on a character
 * boundary) when the key is absurdly long. */
void ts_json_pointer(char *buf, size_t size, const char *key)
{
    size_t o = 0;

    if (size < 4) {
        if (size > 0)
            buf[0] = '\0';
        return;
    }
    buf[o++] = '/';
    for (; *key != '\0' && o + 3 < size; key++) {
        if (*key == '~' || *key == '/') {
            buf[o++] = '~';
            buf[o++] = *key == '~' ? '0' : '1';
        } else {
            buf[o++] = *key;
        }
    }
    buf[o] = '\0';
    if (*key != '\0')
        ts_utf8_trim(buf, o);
}

const char *ts_json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number"; /* all numbers decode as reals */
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    default:
        return "something else";
    }
}

static void list_values(char *buf, size_t size, const char *const *values)
{
    size_t o = 0;

    buf[0] = '\0';
    for (; *values != NULL && o < size; values++) {
        int n = snprintf(buf + o, size - o, "%s\"%s\"", o ? ", " : "", *values);
        if (n < 0)
            break;
        o += (size_t)n;
    }
}

static void type_error(ts_api_err *err, const ts_field *f, const json_t *v, const char *want)
{
    char ptr[64];

    snprintf(ptr, sizeof ptr, "/%s", f->name);
    ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr, "%s must be %s%s, got %s", f->name, want,
                   f->nullable ? " or null" : "", ts_json_kind(v));
}

static void range_error(ts_api_err *err, const ts_field *f, double v)
{
    char ptr[64];

    snprintf(ptr, sizeof ptr, "/%s", f->name);
    ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, ptr, "%s must be %s %.17g and %s %.17g, got %.17g",
                   f->name, f->exclusive_minimum ? ">" : ">=", f->minimum,
                   f->exclusive_maximum ? "<" : "<=", f->maximum, v);
}

/* An integer member.  JSON Schema counts any number with a zero fraction
 * as an integer (2.0, 2e0; draft 2020-12 validation 6.1.1), and the body
 * is decoded with JSON_DECODE_INT_AS_REAL so that literals past 2^63
 * still parse: check integrality and range here.  The limits are below
 * 2^53, where doubles hold integers exactly. */
static int check_integer(const ts_field *f, const json_t *v, ts_api_err *err)
{
    char ptr[64];
    double d;

    if (!json_is_number(v)) {
        type_error(err, f, v, "an integer");
        return -1;
    }
    d = json_number_value(v);
    if (!isfinite(d) || d != floor(d)) {
        snprintf(ptr, sizeof ptr, "/%s", f->name);
        ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr,
                       "%s must be an integer (no fractional part), got %.17g", f->name, d);
        return -1;
    }
    if (d < f->minimum || d > f->maximum) {
        snprintf(ptr, sizeof ptr, "/%s", f->name);
        ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, ptr,
                       "%s must be an integer from %.0f to %.0f, got %.17g", f->name, f->minimum,
                       f->maximum, d);
        return -1;
    }
    return 0;
}

static int check_number(const ts_field *f, const json_t *v, ts_api_err *err)
{
    char ptr[64];
    double d;

    if (!json_is_number(v)) {
        type_error(err, f, v, "a number");
        return -1;
    }
    d = json_number_value(v);
    if (!isfinite(d)) {
        /* jansson refuses NaN/Infinity literals and overflowing reals;
         * this guards against a future parser that does not. */
        snprintf(ptr, sizeof ptr, "/%s", f->name);
        ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, ptr, "%s must be a finite number", f->name);
        return -1;
    }
    if (d != 0 && fabs(d) < DBL_MIN) {
        /* Subnormals (5e-324) pass every range test and then blow
         * up a division: no real quantity is that small. */
        snprintf(ptr, sizeof ptr, "/%s", f->name);
        ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, ptr,
                       "%s must be 0 or at least %g in magnitude, got %.17g", f->name, DBL_MIN, d);
        return -1;
    }
    if ((f->exclusive_minimum ? d <= f->minimum : d < f->minimum) ||
        (f->exclusive_maximum ? d >= f->maximum : d > f->maximum)) {
        range_error(err, f, d);
        return -1;
    }
    return 0;
}

/* A string member: an id, or one of the enum's names. */
static int check_string(const ts_field *f, const json_t *v, ts_api_err *err)
{
    const char *s;
    const char *const *e;
    char ptr[64], list[256], got[80];

    if (!json_is_string(v)) {
        type_error(err, f, v, "a string");
        return -1;
    }
    if (f->values == NULL)
        return 0;
    s = json_string_value(v);
    for (e = f->values; *e != NULL; e++)
        if (strcmp(*e, s) == 0)
            return 0;
    list_values(list, sizeof list, f->values);
    ts_json_quote_short(got, sizeof got, s, 64);
    snprintf(ptr, sizeof ptr, "/%s", f->name);
    ts_api_err_set(err, TS_PROB_INVALID_ENUM, ptr, "%s must be one of %s; got \"%s\"", f->name,
                   list, got);
    return -1;
}

int ts_json_check_value(const ts_field *f, const json_t *v, ts_api_err *err)
{
    if (json_is_null(v) && f->nullable)
        return 0;
    switch (f->type) {
    case TS_FT_INTEGER:
        return check_integer(f, v, err);
    case TS_FT_NUMBER:
        return check_number(f, v, err);
    case TS_FT_BOOLEAN:
        if (!json_is_boolean(v)) {
            type_error(err, f, v, "true or false");
            return -1;
        }
        return 0;
    case TS_FT_STRING:
        return check_string(f, v, err);
    default:
        break;
    }
    type_error(err, f, v, "a valid value");
    return -1;
}

void ts_json_unknown_field(ts_api_err *err, const char *key, bool fit, bool search)
{
    char ptr[TS_FT_LEN];
    char shown[96];
    size_t idx = ts_json_field_index(key);
    const char *near;

    ts_json_pointer(ptr, sizeof ptr, key);
    ts_json_quote_short(shown, sizeof shown, key, 64);
    if (idx != SIZE_MAX && ts_fields[idx].fit_only && !fit) {
        ts_api_err_set(
            err, TS_PROB_UNKNOWN_FIELD, ptr,
            search ? "\"%s\" is only accepted by POST /v1/fit (a search explores every layout)"
                   : "\"%s\" is only accepted by POST /v1/fit",
            shown);
        return;
    }
    if (idx != SIZE_MAX && ts_fields[idx].search_only && !search) {
        ts_api_err_set(err, TS_PROB_UNKNOWN_FIELD, ptr,
                       "\"%s\" is only accepted by POST /v1/search", shown);
        return;
    }
    if (idx != SIZE_MAX && ts_fields[idx].budget_only) {
        ts_api_err_set(err, TS_PROB_UNKNOWN_FIELD, ptr,
                       "\"%s\" is only accepted by POST /v1/budget", shown);
        return;
    }
    near = ts_json_suggest(key, fit);
    if (near != NULL)
        ts_api_err_set(err, TS_PROB_UNKNOWN_FIELD, ptr,
                       "unknown field \"%s\"; did you mean \"%s\"?", shown, near);
    else
        ts_api_err_set(err, TS_PROB_UNKNOWN_FIELD, ptr,
                       "unknown field \"%s\"; the accepted fields are listed "
                       "in the request schema of openapi.json",
                       shown);
}

/* Index of an import member ("hf_config", ...), or -1. */
int ts_json_import_index(const char *key)
{
    int i;

    for (i = 0; ts_import_members[i] != NULL; i++)
        if (strcmp(ts_import_members[i], key) == 0)
            return i;
    return -1;
}

/* The value of an enum member that ts_json_check_value() accepted. */
int ts_json_enum_value(const ts_field *b, const json_t *v)
{
    const char *s = json_string_value(v);
    size_t i;

    for (i = 0; b->values[i + 1] != NULL && strcmp(b->values[i], s) != 0; i++)
        ;
    return b->ints[i];
}
