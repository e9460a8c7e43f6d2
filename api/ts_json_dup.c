/*
 * ts_json_dup.c - duplicate object keys, found in the request's text.
 *
 * jansson keeps the last of duplicated keys when JSON_REJECT_DUPLICATES
 * is off, and with it on names the key only inside its message text,
 * truncated; the request would silently pick one of two values.  These
 * walk the (already valid) text instead and name the first repeated key
 * by its JSON pointer: at the top level, and inside the import members'
 * objects (hf_config, deepspeed_config).
 */
#include <stdio.h>
#include <string.h>

#include "ts_api_int.h"
#include "ts_import.h"

/* Length of the JSON string token at s[0] == '"' (quotes included).
 * The text has already been accepted by jansson, so it is well formed. */
static size_t string_token_len(const char *s, size_t n)
{
    size_t i = 1;

    while (i < n && s[i] != '"')
        i += s[i] == '\\' ? 2 : 1;
    return i < n ? i + 1 : n;
}

/* Offset just past the value that starts at s[i]: a string, or a nested
 * array/object skipped by bracket depth (iteratively: jansson allows
 * 2048 levels), or a scalar literal. */
static size_t skip_value(const char *s, size_t n, size_t i)
{
    size_t depth = 0;

    if (i >= n)
        return n;
    if (s[i] == '"')
        return i + string_token_len(s + i, n - i);
    if (s[i] != '{' && s[i] != '[') {
        while (i < n && strchr(",}] \t\r\n", s[i]) == NULL)
            i++;
        return i;
    }
    while (i < n) {
        char c = s[i];

        if (c == '"') {
            i += string_token_len(s + i, n - i);
            continue;
        }
        if (c == '{' || c == '[')
            depth++;
        else if ((c == '}' || c == ']') && --depth == 0)
            return i + 1;
        i++;
    }
    return n;
}

static size_t skip_ws(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    return i;
}

/* Walk the top-level members of the (valid) object text and call back
 * for each key token; stops when the callback returns non-zero. */
typedef int (*key_fn)(const char *tok, size_t len, size_t off, void *ctx);

static int each_key(const char *s, size_t n, key_fn fn, void *ctx)
{
    size_t i = skip_ws(s, n, 0);

    if (i >= n || s[i] != '{')
        return 0;
    i = skip_ws(s, n, i + 1);
    while (i < n && s[i] == '"') {
        size_t len = string_token_len(s + i, n - i);
        int rc = fn(s + i, len, i, ctx);

        if (rc != 0)
            return rc;
        i = skip_ws(s, n, i + len);
        if (i < n && s[i] == ':')
            i = skip_ws(s, n, i + 1);
        i = skip_ws(s, n, skip_value(s, n, i));
        if (i < n && s[i] == ',')
            i = skip_ws(s, n, i + 1);
    }
    return 0;
}

static int count_key(const char *tok, size_t len, size_t off, void *ctx)
{
    (void)tok;
    (void)len;
    (void)off;
    ++*(size_t *)ctx;
    return 0;
}

typedef struct dup_scan {
    json_t *seen; /* decoded keys met so far */
    ts_api_err *err;
} dup_scan;

static int find_dup(const char *tok, size_t len, size_t off, void *ctx)
{
    dup_scan *d = ctx;
    json_error_t je;
    /* The key token is a JSON string literal: let jansson decode it
     * (escapes, surrogate pairs) rather than a second decoder here. */
    json_t *k = json_loadb(tok, len, JSON_DECODE_ANY, &je);
    const char *key = json_string_value(k);
    int rc = 0;

    if (key == NULL) {
        rc = -1; /* out of memory: jansson accepted this token before */
    } else if (json_object_get(d->seen, key) != NULL) {
        char ptr[TS_FT_LEN];
        char shown[96];

        ts_json_pointer(ptr, sizeof ptr, key);
        ts_json_quote_short(shown, sizeof shown, key, 64);
        ts_api_err_set(d->err, TS_PROB_DUPLICATE_KEY, ptr,
                       "duplicate object key \"%s\" at byte %zu", shown, off);
        rc = 1;
    } else if (json_object_set_new(d->seen, key, json_null()) != 0) {
        rc = -1;
    }
    json_decref(k);
    return rc;
}

/* jansson keeps the last of duplicated keys when JSON_REJECT_DUPLICATES
 * is off, and with it on names the key only inside its message text,
 * truncated.  So: count the top-level keys of the text; only when there
 * are more than the object holds, find the first repeated one.  Nested
 * objects need no check: no member takes an object (invalid-type).
 * Returns 0 (none), 1 (err set) or -1 (out of memory). */
int ts_json_dup_body(const char *body, size_t len, const json_t *root, ts_api_err *err)
{
    size_t keys = 0;
    dup_scan d;
    int rc;

    (void)each_key(body, len, count_key, &keys);
    if (keys <= json_object_size(root))
        return 0;
    d.seen = json_object();
    d.err = err;
    if (d.seen == NULL)
        return -1;
    rc = each_key(body, len, find_dup, &d);
    json_decref(d.seen);
    return rc;
}

/* Duplicate keys inside the imported objects (hf_config,
 * deepspeed_config): jansson keeps the last one, which would silently
 * pick one of two values.  Walks the object text at s depth-first; at the
 * top (ptr "") only into the import members, whose own duplicates
 * ts_json_dup_body() has already refused.  0, 1 (err set) or -1 (out of
 * memory). */
static int import_duplicates(const char *s, size_t n, const char *ptr, int depth, ts_api_err *err)
{
    size_t i = skip_ws(s, n, 0);
    json_t *seen;
    int rc = 0;

    if (i >= n || s[i] != '{' || depth > TS_IMPORT_DEPTH_MAX)
        return 0; /* deeper than the size cap, which refuses it anyway */
    if ((seen = json_object()) == NULL)
        return -1;
    i = skip_ws(s, n, i + 1);
    while (rc == 0 && i < n && s[i] == '"') {
        size_t len = string_token_len(s + i, n - i);
        json_t *k = json_loadb(s + i, len, JSON_DECODE_ANY, NULL);
        const char *key = json_string_value(k);
        char sub[TS_FT_LEN], tok[TS_FT_LEN / 2];
        bool descend;

        if (key == NULL) {
            json_decref(k);
            rc = -1;
            break;
        }
        ts_json_pointer(tok, sizeof tok, key);
        snprintf(sub, sizeof sub, "%.*s%s", ts_utf8_prec(ptr, sizeof sub / 2), ptr, tok);
        if (depth > 0 && json_object_get(seen, key) != NULL) {
            ts_api_err_set(err, TS_PROB_DUPLICATE_KEY, sub,
                           "duplicate object key %s in an imported config", sub);
            rc = 1;
        } else if (json_object_set_new(seen, key, json_null()) != 0) {
            rc = -1;
        }
        descend = depth > 0 || ts_json_import_index(key) >= 0;
        json_decref(k);
        i = skip_ws(s, n, i + len);
        if (i < n && s[i] == ':')
            i = skip_ws(s, n, i + 1);
        if (rc == 0 && descend && i < n && s[i] == '{')
            rc = import_duplicates(s + i, n - i, sub, depth + 1, err);
        i = skip_ws(s, n, skip_value(s, n, i));
        if (i < n && s[i] == ',')
            i = skip_ws(s, n, i + 1);
    }
    json_decref(seen);
    return rc;
}

int ts_json_dup_imports(const char *body, size_t len, ts_api_err *err)
{
    return import_duplicates(body, len, "", 0, err);
}
