/*
 * ts_json_in.c - request body -> validated, resolved ts_run.
 *
 * One json_loadb() per request.  The object's members are walked by hand
 * against the core's field table (ts_fields[], core/ts_fields.h: name,
 * JSON type, range, where it lands in the ts_run), so that unknown
 * members, wrong types and out-of-range values are each reported with the
 * member's JSON pointer before anything reaches the core.  The limits are
 * the core's own (ts_run_resolve checks the same rows): generous sanity
 * bounds that keep every product the core forms exact and finite;
 * checking them here too gives the caller the JSON type and range in one
 * place (and in openapi.json).  The same table drives the core's
 * defaults and range checks, the "inputs" echo (ts_json_out.c), the docs
 * (ts_fields_doc.c) and every generated copy (tools/ts_gen_openapi:
 * openapi.json; tools/ts_gen_fields: the fuzz dictionary, the CLI's
 * options, docs/fields.md, web/fields.js).
 *
 * Order of application: defaults, preset ("model"), GPU ("gpu"), every
 * other member, then hbm_gb / peak_tflops on top of the chosen GPU.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api_int.h"
#include "ts_catalogue.h"
#include "ts_import.h"

const ts_api_field *ts_api_request_field(size_t i)
{
    return i < TS_FI_COUNT ? &ts_fields[i] : NULL;
}

size_t ts_api_request_field_count(void)
{
    return TS_FI_COUNT;
}

/* Linear search: 59 short names, cheaper than hashing for every key. */
static size_t field_index(const char *key)
{
    size_t i;

    /* The first byte rules out most of the table without a call. */
    for (i = 0; i < TS_FI_COUNT; i++)
        if (ts_fields[i].name[0] == key[0] &&
            strcmp(ts_fields[i].name, key) == 0)
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
        const ts_api_field *f = &ts_fields[i];
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
static void quote_short(char *buf, size_t size, const char *s, size_t max)
{
    int n = ts_utf8_prec(s, max);

    snprintf(buf, size, "%.*s%s", n, s, s[n] != '\0' ? "..." : "");
}

/* RFC 6901: "~" -> "~0", "/" -> "~1".  Truncated (on a character
 * boundary) when the key is absurdly long. */
static void json_pointer(char *buf, size_t size, const char *key)
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

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number"; /* all numbers decode as reals */
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    default: return "something else";
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

static void type_error(ts_api_err *err, const ts_api_field *f, const json_t *v,
                       const char *want)
{
    char ptr[64];

    snprintf(ptr, sizeof ptr, "/%s", f->name);
    ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr,
                   "%s must be %s%s, got %s", f->name, want,
                   f->nullable ? " or null" : "", json_kind(v));
}

static void range_error(ts_api_err *err, const ts_api_field *f, double v)
{
    char ptr[64];

    snprintf(ptr, sizeof ptr, "/%s", f->name);
    ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, ptr,
                   "%s must be %s %.17g and %s %.17g, got %.17g", f->name,
                   f->exclusive_minimum ? ">" : ">=", f->minimum,
                   f->exclusive_maximum ? "<" : "<=", f->maximum, v);
}

/* Type and range check of one member; no side effects on the run. */
static int check_value(const ts_api_field *f, const json_t *v, ts_api_err *err)
{
    char ptr[64];

    if (json_is_null(v)) {
        if (f->nullable)
            return 0;
    }
    switch (f->type) {
    case TS_FT_INTEGER: {
        double d;
        /* JSON Schema counts any number with a zero fraction as an
         * integer (2.0, 2e0; draft 2020-12 validation 6.1.1), and the
         * body is decoded with JSON_DECODE_INT_AS_REAL so that literals
         * past 2^63 still parse: check integrality and range here.  The
         * limits are below 2^53, where doubles hold integers exactly. */
        if (!json_is_number(v)) {
            type_error(err, f, v, "an integer");
            return -1;
        }
        d = json_number_value(v);
        if (!isfinite(d) || d != floor(d)) {
            snprintf(ptr, sizeof ptr, "/%s", f->name);
            ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr,
                           "%s must be an integer (no fractional part), got %.17g",
                           f->name, d);
            return -1;
        }
        if (d < f->minimum || d > f->maximum) {
            snprintf(ptr, sizeof ptr, "/%s", f->name);
            ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, ptr,
                           "%s must be an integer from %.0f to %.0f, got %.17g",
                           f->name, f->minimum, f->maximum, d);
            return -1;
        }
        return 0;
    }
    case TS_FT_NUMBER: {
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
            ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, ptr,
                           "%s must be a finite number", f->name);
            return -1;
        }
        if (d != 0 && fabs(d) < DBL_MIN) {
            /* Subnormals (5e-324) pass every range test and then blow
             * up a division: no real quantity is that small. */
            snprintf(ptr, sizeof ptr, "/%s", f->name);
            ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, ptr,
                           "%s must be 0 or at least %g in magnitude, got %.17g",
                           f->name, DBL_MIN, d);
            return -1;
        }
        if ((f->exclusive_minimum ? d <= f->minimum : d < f->minimum) ||
            (f->exclusive_maximum ? d >= f->maximum : d > f->maximum)) {
            range_error(err, f, d);
            return -1;
        }
        return 0;
    }
    case TS_FT_BOOLEAN:
        if (!json_is_boolean(v)) {
            type_error(err, f, v, "true or false");
            return -1;
        }
        return 0;
    case TS_FT_STRING:
        if (!json_is_string(v)) {
            type_error(err, f, v, "a string");
            return -1;
        }
        if (f->values != NULL) {
            const char *s = json_string_value(v);
            const char *const *e;
            char list[256];
            char got[80];

            for (e = f->values; *e != NULL; e++)
                if (strcmp(*e, s) == 0)
                    return 0;
            list_values(list, sizeof list, f->values);
            quote_short(got, sizeof got, s, 64);
            snprintf(ptr, sizeof ptr, "/%s", f->name);
            ts_api_err_set(err, TS_PROB_INVALID_ENUM, ptr,
                           "%s must be one of %s; got \"%s\"", f->name, list, got);
            return -1;
        }
        return 0;
    default:
        break;
    }
    type_error(err, f, v, "a valid value");
    return -1;
}

static void unknown_field(ts_api_err *err, const char *key, bool fit, bool search)
{
    char ptr[TS_FT_LEN];
    char shown[96];
    size_t idx = field_index(key);
    const char *near;

    json_pointer(ptr, sizeof ptr, key);
    quote_short(shown, sizeof shown, key, 64);
    if (idx != SIZE_MAX && ts_fields[idx].fit_only && !fit) {
        ts_api_err_set(err, TS_PROB_UNKNOWN_FIELD, ptr,
                       search ? "\"%s\" is only accepted by POST /v1/fit (a search explores every layout)"
                              : "\"%s\" is only accepted by POST /v1/fit", shown);
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
                       "in the request schema of openapi.json", shown);
}

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
    json_t *seen;     /* decoded keys met so far */
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

        json_pointer(ptr, sizeof ptr, key);
        quote_short(shown, sizeof shown, key, 64);
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
static int check_duplicates(const char *body, size_t len, const json_t *root,
                            ts_api_err *err)
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

static int import_index(const char *key);

/* Duplicate keys inside the imported objects (hf_config,
 * deepspeed_config): jansson keeps the last one, which would silently
 * pick one of two values.  Walks the object text at s depth-first; at the
 * top (ptr "") only into the import members, whose own duplicates
 * check_duplicates() has already refused.  0, 1 (err set) or -1 (out of
 * memory). */
static int import_duplicates(const char *s, size_t n, const char *ptr, int depth,
                             ts_api_err *err)
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
        json_pointer(tok, sizeof tok, key);
        snprintf(sub, sizeof sub, "%.*s%s", ts_utf8_prec(ptr, sizeof sub / 2), ptr, tok);
        if (depth > 0 && json_object_get(seen, key) != NULL) {
            ts_api_err_set(err, TS_PROB_DUPLICATE_KEY, sub,
                           "duplicate object key %s in an imported config", sub);
            rc = 1;
        } else if (json_object_set_new(seen, key, json_null()) != 0) {
            rc = -1;
        }
        descend = depth > 0 || import_index(key) >= 0;
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

static void list_ids(char *buf, size_t size, bool presets)
{
    size_t o = 0;
    size_t i;
    size_t n = presets ? ts_preset_count() : ts_gpu_count();

    buf[0] = '\0';
    for (i = 0; i < n && o < size; i++) {
        const char *id = presets ? ts_preset_at(i)->id : ts_gpu_at(i)->id;
        int w = snprintf(buf + o, size - o, "%s%s", i ? ", " : "", id);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

/* The catalogue entry "model" names, when no preset answers for it. */
static const ts_catalogue_entry *model_entry(const json_t *v)
{
    const ts_preset *p;
    const ts_catalogue_entry *e;

    if (v == NULL || !json_is_string(v) ||
        !ts_catalogue_resolve(json_string_value(v), &p, &e))
        return NULL;
    return e;
}

/* A preset's shape, seq and tokens; a catalogue entry's shape came in
 * with the imports (apply_imports), only its id is kept here. */
static int apply_preset(ts_run *r, const json_t *v, const ts_catalogue_entry *cat,
                        ts_api_err *err)
{
    const ts_preset *p;
    const ts_catalogue_entry *e;
    const char *hint;
    char ids[512];
    char got[80];

    if (v == NULL || json_is_null(v))
        return 0;
    if (cat != NULL) {
        snprintf(r->preset, sizeof r->preset, "%s", cat->id);
        return 0;
    }
    if (!ts_catalogue_resolve(json_string_value(v), &p, &e) || p == NULL) {
        list_ids(ids, sizeof ids, true);
        quote_short(got, sizeof got, json_string_value(v), 64);
        hint = ts_catalogue_suggest(json_string_value(v));
        ts_api_err_set(err, TS_PROB_UNKNOWN_PRESET,
                       "/model", "unknown model preset \"%s\"%s%s%s; valid: %s, "
                       "or a model of the catalogue by its Hugging Face Hub id "
                       "(GET /v1/presets)", got, hint ? " (did you mean \"" : "",
                       hint ? hint : "", hint ? "\"?)" : "", ids);
        return -1;
    }
    ts_run_apply_preset(r, p);
    return 0;
}

/* lora_targets: the names onto the run's bit set; an unknown name is a
 * 400 that names it (cut at a character boundary) and lists the valid. */
static int apply_lora_targets(ts_run *r, const json_t *v, ts_api_err *err)
{
    const char *s;
    size_t len, at = 0, bl = 0;
    unsigned set = 0;
    char item[80], got[96];

    if (v == NULL)
        return 0;
    s = json_string_value(v);
    len = json_string_length(v);
    if (memchr(s, '\0', len) != NULL || ts_lora_targets_parse(s, len, &set, &at, &bl) != 0) {
        size_t n = bl < sizeof item - 1 ? bl : sizeof item - 1;

        memcpy(item, s + at, n);
        item[n] = '\0';
        quote_short(got, sizeof got, item, 64);
        if (memchr(s, '\0', len) == NULL && bl == len && at == 0 && strstr(s, "query_key_value") != NULL)
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, "/lora_targets",
                           "lora_targets mixes query_key_value (a fused q, k, v) with q_proj, "
                           "k_proj or v_proj: a model has one or the other");
        else
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, "/lora_targets",
                           "lora_targets: \"%s\" is not a target; give all-linear, peft-default "
                           "or names joined by commas from q_proj, k_proj, v_proj, o_proj, "
                           "gate_proj, up_proj, down_proj, query_key_value", got);
        return -1;
    }
    r->lora_targets = set;
    return 0;
}

static int apply_gpu(ts_run *r, const json_t *v, ts_api_err *err)
{
    const ts_gpu *g;
    const char *hint;
    char ids[512];
    char got[80];

    if (v == NULL)
        return 0;
    g = ts_gpu_find(json_string_value(v));
    if (g == NULL) {
        list_ids(ids, sizeof ids, false);
        quote_short(got, sizeof got, json_string_value(v), 64);
        hint = ts_gpu_suggest(json_string_value(v));
        ts_api_err_set(err, TS_PROB_UNKNOWN_GPU, "/gpu",
                       "unknown GPU \"%s\"%s%s%s; valid: %s (GET /v1/gpus)", got,
                       hint ? " (did you mean \"" : "", hint ? hint : "",
                       hint ? "\"?)" : "", ids);
        return -1;
    }
    r->gpu = *g;
    return 0;
}

/* The value of an enum member that check_value() accepted. */
static int enum_value(const ts_field *b, const json_t *v)
{
    const char *s = json_string_value(v);
    size_t i;

    for (i = 0; b->values[i + 1] != NULL && strcmp(b->values[i], s) != 0; i++)
        ;
    return b->ints[i];
}

/* The CUSTOM rows of the registry (core/ts_fields.def), by id: those
 * stored with the plain members, and where the others are applied. */
static void store_custom(ts_field_id id, const json_t *v, ts_api_req *req)
{
    switch (id) {
    case TS_FI_PARAMS:
        if (!json_is_null(v))
            req->run.model.params = json_number_value(v) + 0.0;
        break;
    case TS_FI_SOLVE:
        req->solve = (ts_fit_solve)enum_value(&ts_fields[id], v);
        break;
    case TS_FI_MAX_MICRO_BATCH:
        req->max_micro_batch = (int64_t)json_number_value(v);
        break;
    case TS_FI_MAX_GPUS:
        req->max_gpus = (int64_t)json_number_value(v);
        break;
    case TS_FI_MODEL:        /* apply_preset(), before every other member */
    case TS_FI_GPU:          /* apply_gpu(), before every other member */
    case TS_FI_LORA_TARGETS: /* apply_lora_targets(), with its error */
    case TS_FI_HBM_GB:       /* apply_gpu_overrides(), on the GPU chosen */
    case TS_FI_HBM_GIB:
    case TS_FI_PEAK_TFLOPS:
    default:                 /* the search's and the budget's: search_seed(),
                              * budget_seed() */
        break;
    }
}

/* Store one checked member into the run (a route's extras into req). */
static void store(ts_field_id id, const json_t *v, ts_api_req *req)
{
    const ts_field *f = &ts_fields[id];
    void *at = (char *)&req->run + f->off;

    switch (f->kind) {
    case TS_FK_INT64:
        *(int64_t *)at = (int64_t)json_number_value(v);
        break;
    case TS_FK_INT:
        *(int *)at = (int)json_number_value(v);
        break;
    case TS_FK_NUM:
        if (!json_is_null(v))
            *(double *)at = json_number_value(v) + 0.0;
        break;
    case TS_FK_NUM_OPT:
        *(double *)at = json_is_null(v) ? 0.0 : json_number_value(v) + 0.0;
        break;
    case TS_FK_BOOL:
        *(bool *)at = json_is_true(v);
        break;
    case TS_FK_ENUM:
        *(int *)at = enum_value(f, v);
        break;
    case TS_FK_CUSTOM:
        store_custom(id, v, req);
        break;
    }
}

/* The peak the run will use: the one for its compute precision. */
static void set_peak(ts_gpu *g, ts_precision compute, double flops)
{
    switch (compute) {
    case TS_PREC_FP32:
        g->fp32_flops = flops;
        break;
    case TS_PREC_FP8:
        g->fp8_flops = flops;
        break;
    case TS_PREC_BF16:
    case TS_PREC_FP16:
    case TS_PREC_COUNT:
    default:
        g->bf16_flops = flops;
        break;
    }
}

/* hbm_gb, hbm_gib and peak_tflops on top of the GPU chosen, once the
 * compute precision (which selects the peak) is known. */
static int apply_gpu_overrides(ts_run *r, const json_t *const *given, ts_api_err *err)
{
    if (given[TS_FI_HBM_GB] != NULL)
        r->gpu.hbm_bytes = json_number_value(given[TS_FI_HBM_GB]) * 1e9;
    if (given[TS_FI_HBM_GIB] != NULL) {
        double gib = json_number_value(given[TS_FI_HBM_GIB]) * 1073741824.0;

        /* Both may come back from an echo; they must then agree. */
        if (given[TS_FI_HBM_GB] != NULL && fabs(gib - r->gpu.hbm_bytes) > 1e-9 * gib) {
            ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS,
                           "/hbm_gib", "hbm_gb (decimal GB) and hbm_gib (GiB) disagree: give one");
            return -1;
        }
        r->gpu.hbm_bytes = gib;
    }
    if (given[TS_FI_PEAK_TFLOPS] != NULL)
        set_peak(&r->gpu, r->compute_precision,
                 json_number_value(given[TS_FI_PEAK_TFLOPS]) * 1e12);
    return 0;
}

static int fit_seed(ts_api_req *req, const json_t *const *given,
                    ts_api_err *err)
{
    /* Members the solver would overwrite or ignore: a request we would
     * silently not honour, so refuse it.  TS_FI_COUNT ends each list. */
    static const ts_field_id mb_clash[] = { TS_FI_MICRO_BATCH, TS_FI_MAX_GPUS, TS_FI_COUNT };
    static const ts_field_id gpus_clash[] = { TS_FI_DP, TS_FI_GPUS, TS_FI_MAX_MICRO_BATCH, TS_FI_COUNT };
    bool mb = req->solve == TS_FIT_SOLVE_MICRO_BATCH;
    const ts_field_id *c;

    if (given[TS_FI_SOLVE] == NULL) {
        ts_api_err_set(err, TS_PROB_MISSING_FIELD, "/solve",
                       "solve is required: \"micro_batch\" (largest micro-batch "
                       "that fits) or \"gpus\" (fewest GPUs that fit)");
        return -1;
    }
    for (c = mb ? mb_clash : gpus_clash; *c != TS_FI_COUNT; c++) {
        const char *name = ts_fields[*c].name;
        char ptr[64];

        /* An imported value (a DeepSpeed micro-batch) is what the solver
         * replaces; only the request's own members clash. */
        if (given[*c] == NULL || req->source[*c] != TS_SRC_REQUEST)
            continue;
        snprintf(ptr, sizeof ptr, "/%s", name);
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS,
                       ptr, "%s cannot be given with solve=\"%s\" (%s)", name,
                       mb ? "micro_batch" : "gpus",
                       strncmp(name, "max_", 4) == 0
                           ? "it limits the other solve mode"
                           : "it is what the solver computes");
        return -1;
    }
    if (mb) {
        req->run.micro_batch = 1;
    } else {
        /* Smallest layout the solver may start from: ep must divide dp. */
        req->run.dp = req->run.ep;
        req->run.gpus = 0;
    }
    return 0;
}

/* The duplicate-key scans answer 0 (none), 1 (err filled) or -1 (out of
 * memory): true when the request is refused. */
static bool duplicates_refused(int rc, ts_api_err *err)
{
    if (rc == 0)
        return false;
    if (rc != 1)
        ts_api_err_set(err, TS_PROB_OUT_OF_MEMORY, NULL,
                       "out of memory parsing the request");
    return true;
}

/* Index of an import member ("hf_config", ...), or -1. */
static int import_index(const char *key)
{
    int i;

    for (i = 0; ts_import_members[i] != NULL; i++)
        if (strcmp(ts_import_members[i], key) == 0)
            return i;
    return -1;
}

/* Point an error raised for an imported value at where it came from:
 * origin is "/hf_config/num_hidden_layers" or "/megatron_args (--tp)". */
static void blame_import(ts_api_err *err, const char *origin)
{
    char detail[TS_API_DETAIL_LEN];
    size_t plen;
    int n;

    /* A value the importer derived without a key of its own keeps the
     * core's pointer: never a problem without a field. */
    if (origin == NULL || origin[0] == '\0')
        return;
    plen = strcspn(origin, " ");
    n = snprintf(detail, sizeof detail, "from %s: ", origin);

    if (n > 0 && (size_t)n < sizeof detail) {
        size_t room = sizeof detail - (size_t)n;

        memcpy(detail + n, err->detail, strnlen(err->detail, room - 1));
        detail[(size_t)n + strnlen(err->detail, room - 1)] = '\0';
        ts_utf8_trim(detail, strlen(detail));
        memcpy(err->detail, detail, sizeof err->detail);
    }
    snprintf(err->field, sizeof err->field, "%.*s", (int)plen, origin);
}

/* Run the importers and merge their values under the request's own. */
static int apply_imports(const json_t *const *imp, const ts_catalogue_entry *cat,
                         ts_import *im, const json_t **given, ts_api_req *req,
                         ts_api_err *err)
{
    static const struct { bool object; const char *what; } want[TS_IMP_COUNT] = {
        [TS_IMP_HF] = { true, "a Hugging Face config.json" },
        [TS_IMP_AXOLOTL] = { false, "an axolotl YAML config" },
        [TS_IMP_NEMO] = { false, "a NeMo training YAML" },
        [TS_IMP_DS] = { true, "a DeepSpeed config" },
        [TS_IMP_MEGA] = { false, "Megatron-LM arguments" },
    };
    size_t i;

    for (i = 0; i < TS_IMP_COUNT; i++) {
        char ptr[32];
        bool ok;

        if (imp[i] == NULL)
            continue;
        ok = want[i].object ? json_is_object(imp[i]) : json_is_string(imp[i]);
        if (!ok) {
            /* A string where a document goes is most often a file name:
             * the server reads no files, the CLI does. */
            bool path = want[i].object && json_is_string(imp[i]);

            snprintf(ptr, sizeof ptr, "/%s", ts_import_members[i]);
            ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr,
                           "%s must be %s (%s), got %s%s", ts_import_members[i],
                           want[i].object ? "an object" : "a string", want[i].what,
                           json_kind(imp[i]),
                           path ? ": send the file's JSON itself, the server reads no files "
                                  "(the CLI reads a path: --hf-config FILE, --deepspeed FILE, "
                                  "or a plan file naming it)" : "");
            return -1;
        }
        req->imported = true;
    }
    for (i = 0; i < TS_FI_COUNT; i++)
        im->req_has[i] = given[i] != NULL;
    /* A catalogue model is the first import: a preset's place in the
     * order, hf_config and the rest on top of it. */
    if (cat != NULL) {
        req->imported = true;
        if (ts_catalogue_import(im, cat, err) != 0)
            return -1;
    }
    if (imp[TS_IMP_HF] != NULL && ts_import_hf(im, imp[TS_IMP_HF], err) != 0)
        return -1;
    if (imp[TS_IMP_AXOLOTL] != NULL &&
        ts_import_axolotl(im, json_string_value(imp[TS_IMP_AXOLOTL]),
                          json_string_length(imp[TS_IMP_AXOLOTL]), err) != 0)
        return -1;
    if (imp[TS_IMP_NEMO] != NULL &&
        ts_import_nemo(im, json_string_value(imp[TS_IMP_NEMO]),
                       json_string_length(imp[TS_IMP_NEMO]), err) != 0)
        return -1;
    if (imp[TS_IMP_DS] != NULL && ts_import_ds(im, imp[TS_IMP_DS], err) != 0)
        return -1;
    if (imp[TS_IMP_MEGA] != NULL &&
        ts_import_mega(im, json_string_value(imp[TS_IMP_MEGA]),
                       json_string_length(imp[TS_IMP_MEGA]), err) != 0)
        return -1;
    for (i = 0; i < TS_FI_COUNT; i++) {
        if (im->vals[i] == NULL)
            continue;
        if (given[i] != NULL) {
            /* The request overrides: say so when it differs. */
            if (!json_equal(given[i], im->vals[i]))
                ts_import_note(&req->notes, "%s: the request's value overrides %s",
                               ts_fields[i].name, im->origin[i]);
            continue;
        }
        if (ts_fields[i].fit_only)
            continue;
        if (check_value(&ts_fields[i], im->vals[i], err) != 0) {
            blame_import(err, im->origin[i]);
            return -1;
        }
        given[i] = im->vals[i];
        req->source[i] = (unsigned char)im->src[i];
    }
    return 0;
}

static bool req_has_import(const json_t *const *imp)
{
    size_t i;

    for (i = 0; i < TS_IMP_COUNT; i++)
        if (imp[i] != NULL)
            return true;
    return false;
}

/* Members a preset sets: the whole shape, seq and tokens. */
static bool preset_sets(size_t i)
{
    return (i >= TS_FI_PARAMS && i <= TS_FI_V_HEAD_DIM) || i == TS_FI_SEQ ||
           i == TS_FI_TOKENS || i == TS_FI_MODEL;
}

typedef enum ts_json_mode { TS_JSON_RUN = 0, TS_JSON_FIT, TS_JSON_SEARCH, TS_JSON_BUDGET } ts_json_mode;

/* The search's fixed dimensions: the layout members the caller gave. */
static void search_seed(ts_api_req *req, const json_t *const *given)
{
    ts_search_cfg *c = &req->search;
    const ts_run *r = &req->run;

    ts_search_defaults(c);
    if (given[TS_FI_OBJECTIVE] != NULL)
        c->objective = (ts_search_objective)enum_value(&ts_fields[TS_FI_OBJECTIVE],
                                                       given[TS_FI_OBJECTIVE]);
    if (given[TS_FI_LIMIT] != NULL)
        c->limit = (size_t)json_number_value(given[TS_FI_LIMIT]);
    if (given[TS_FI_MAX_TP] != NULL)
        c->max_tp = (int64_t)json_number_value(given[TS_FI_MAX_TP]);
    if (given[TS_FI_MAX_PP] != NULL)
        c->max_pp = (int64_t)json_number_value(given[TS_FI_MAX_PP]);
    if (given[TS_FI_MAX_CP] != NULL)
        c->max_cp = (int64_t)json_number_value(given[TS_FI_MAX_CP]);
    if (given[TS_FI_MAX_VPP] != NULL)
        c->max_vpp = (int64_t)json_number_value(given[TS_FI_MAX_VPP]);
    if (given[TS_FI_MARGIN] != NULL)
        c->margin = json_number_value(given[TS_FI_MARGIN]);
    if (given[TS_FI_MAX_DAYS] != NULL)
        c->max_days = json_number_value(given[TS_FI_MAX_DAYS]);
    if (given[TS_FI_MAX_COST] != NULL)
        c->max_cost = json_number_value(given[TS_FI_MAX_COST]);
    /* What /v1/plan derives for each framework unless grad_precision is
     * given (by the request or an import). */
    c->grad_follows_framework = req->source[TS_FI_GRAD_PRECISION] == TS_SRC_DEFAULT;
    if (given[TS_FI_MAX_MICRO_BATCH] != NULL)
        c->max_micro_batch = req->max_micro_batch;
    if (given[TS_FI_MAX_GPUS] != NULL)
        c->max_gpus = req->max_gpus;
    c->tp = given[TS_FI_TP] != NULL ? r->tp : 0;
    c->pp = given[TS_FI_PP] != NULL ? r->pp : 0;
    c->cp = given[TS_FI_CP] != NULL ? r->cp : 0;
    c->ep = given[TS_FI_EP] != NULL ? r->ep : 0;
    c->micro_batch = given[TS_FI_MICRO_BATCH] != NULL ? r->micro_batch : 0;
    c->vpp = given[TS_FI_VPP] != NULL ? r->vpp : 0;
    c->zero = given[TS_FI_ZERO] != NULL ? r->zero : -1;
    c->framework = given[TS_FI_FRAMEWORK] != NULL ? (int)r->framework : -1;
    c->recompute_mask = given[TS_FI_RECOMPUTE] != NULL ? 1u << r->recompute : 0;
}

/* POST /v1/budget: exactly one budget member, in GPU-hours; the mode
 * (a given model, a ratio, or compute-optimal) and the law. */
static int budget_seed(ts_api_req *req, const json_t *const *given, ts_api_err *err)
{
    static const ts_field_id kinds[] = { TS_FI_BUDGET_GPU_HOURS, TS_FI_BUDGET_DAYS,
                                        TS_FI_BUDGET_USD };
    ts_sizing_cfg *c = &req->budget;
    const ts_run *r = &req->unresolved;
    bool model = r->model.layers > 0 || r->model.params > 0;
    double v = 0;
    size_t i, n = 0;

    memset(c, 0, sizeof *c);
    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (given[kinds[i]] == NULL)
            continue;
        if (n++ > 0) {
            char ptr[40];

            snprintf(ptr, sizeof ptr, "/%s", ts_fields[kinds[i]].name);
            ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, ptr,
                           "give one budget: %s and %s both given",
                           ts_fields[req->budget_field].name,
                           ts_fields[kinds[i]].name);
            return -1;
        }
        req->budget_field = kinds[i];
        v = json_number_value(given[kinds[i]]);
    }
    if (n == 0) {
        ts_api_err_set(err, TS_PROB_MISSING_FIELD, "/budget_gpu_hours",
                       "give the budget: budget_gpu_hours, budget_days (of the run's gpus) "
                       "or budget_usd (at gpu_hour_usd)");
        return -1;
    }
    if (r->gpus <= 0) {
        ts_api_err_set(err, TS_PROB_MISSING_FIELD, "/gpus",
                       "a budget plan runs on a given number of GPUs: give gpus, not dp");
        return -1;
    }
    switch (req->budget_field) {
    case TS_FI_BUDGET_DAYS:
        c->gpu_hours = v * 24.0 * (double)r->gpus;
        break;
    case TS_FI_BUDGET_USD:
        if (!(r->gpu_hour_usd > 0)) {
            ts_api_err_set(err, TS_PROB_MISSING_FIELD, "/gpu_hour_usd",
                           "budget_usd needs the price of a GPU-hour: give gpu_hour_usd");
            return -1;
        }
        c->gpu_hours = v / r->gpu_hour_usd;
        break;
    default:
        c->gpu_hours = v;
        break;
    }
    c->field = ts_fields[req->budget_field].name;
    c->search = req->search;
    c->law = given[TS_FI_SCALING_LAW] != NULL
                 ? (ts_scaling_law)enum_value(&ts_fields[TS_FI_SCALING_LAW],
                                              given[TS_FI_SCALING_LAW])
                 : TS_LAW_HOFFMANN;
    c->mode = model ? TS_SIZE_MODEL : TS_SIZE_OPTIMAL;
    if (given[TS_FI_TOKENS_PER_PARAM] != NULL) {
        if (model) {
            ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, "/tokens_per_param",
                           "tokens_per_param sizes the model: it cannot go with a given model "
                           "(whose tokens the budget sets)");
            return -1;
        }
        c->mode = TS_SIZE_RATIO;
        c->tokens_per_param = json_number_value(given[TS_FI_TOKENS_PER_PARAM]);
    }
    if (given[TS_FI_TOKENS] != NULL && req->source[TS_FI_TOKENS] == TS_SRC_REQUEST) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, "/tokens",
                       "the budget sets the tokens: leave tokens out");
        return -1;
    }
    return 0;
}

static int parse_body(const char *body, size_t len, ts_json_mode mode,
                      ts_api_req *req, ts_api_err *err)
{
    bool fit = mode == TS_JSON_FIT;
    const json_t *given[TS_FI_COUNT];
    const json_t *imp[TS_IMP_COUNT] = { NULL };
    const ts_catalogue_entry *cat;
    ts_import *im = NULL;
    json_error_t je;
    json_t *root;
    const char *key;
    json_t *val;
    ts_error cerr;
    size_t i;
    int rc = -1;

    memset(given, 0, sizeof given);
    /* All but the notes' text (3.8 KB, written when a note is added). */
    memset(req, 0, offsetof(ts_api_req, notes.text));
    memset((char *)req + offsetof(ts_api_req, run), 0,
           sizeof *req - offsetof(ts_api_req, run));
    /* The fit extras' defaults (core/ts_fields.def). */
    req->max_micro_batch = (int64_t)ts_fields[TS_FI_MAX_MICRO_BATCH].def;
    req->max_gpus = (int64_t)ts_fields[TS_FI_MAX_GPUS].def;

    /* Every number decodes as a double: integer literals of 2^63 and
     * more (JSON.stringify(1e19)) are valid numbers for number members;
     * check_value() checks integer members for integrality instead. */
    root = json_loadb(body != NULL ? body : "", body != NULL ? len : 0,
                      JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, &je);
    if (root == NULL) {
        if (json_error_code(&je) == json_error_out_of_memory) {
            ts_api_err_set(err, TS_PROB_OUT_OF_MEMORY, NULL,
                           "out of memory parsing the request");
        } else {
            /* jansson cuts its text at JSON_ERROR_TEXT_LENGTH bytes, where
             * a quoted token may be mid-character. */
            ts_utf8_trim(je.text, strlen(je.text));
            ts_api_err_set(err, TS_PROB_INVALID_JSON, NULL,
                           "line %d, column %d: %s", je.line, je.column, je.text);
        }
        return -1;
    }
    if (!json_is_object(root)) {
        ts_api_err_set(err, TS_PROB_NOT_AN_OBJECT,
                       "", "the request body must be a JSON object, got %s",
                       json_kind(root));
        goto out;
    }
    if (duplicates_refused(check_duplicates(body, len, root, err), err))
        goto out;

    /* Pass 1: every member known, well-typed and in range. */
    json_object_foreach(root, key, val) {
        size_t idx = field_index(key);
        int ii = import_index(key);

        if (ii >= 0) {
            imp[ii] = val;
            continue;
        }
        if (idx == SIZE_MAX ||
            (ts_fields[idx].fit_only && !fit &&
             !(mode == TS_JSON_SEARCH && idx != TS_FI_SOLVE)) ||
            (ts_fields[idx].search_only && mode != TS_JSON_SEARCH) ||
            (ts_fields[idx].budget_only && mode != TS_JSON_BUDGET)) {
            unknown_field(err, key, fit, mode == TS_JSON_SEARCH);
            goto out;
        }
        if (check_value(&ts_fields[idx], val, err) != 0)
            goto out;
        given[idx] = val;
        req->source[idx] = TS_SRC_REQUEST;
    }
    /* A catalogue model's members get their source from its import. */
    cat = model_entry(given[TS_FI_MODEL]);
    if (given[TS_FI_MODEL] != NULL && !json_is_null(given[TS_FI_MODEL]) && cat == NULL)
        for (i = 0; i < TS_FI_COUNT; i++)
            if (given[i] == NULL && preset_sets(i))
                req->source[i] = TS_SRC_PRESET;

    /* Imports: proposed values, checked like members, under the request's. */
    if (req_has_import(imp) || cat != NULL) {
        if (req_has_import(imp) &&
            duplicates_refused(import_duplicates(body, len, "", 0, err), err))
            goto out;
        im = malloc(sizeof *im);
        if (im == NULL) {
            ts_api_err_set(err, TS_PROB_OUT_OF_MEMORY, NULL,
                           "out of memory parsing the request");
            goto out;
        }
        ts_import_init(im, &req->notes);
        if (apply_imports(imp, cat, im, given, req, err) != 0)
            goto out;
        ts_import_notes_settle(&req->notes, req->source);
    }

    /* Pass 2: apply in a fixed order (see the file comment). */
    ts_run_defaults(&req->run);
    if (apply_preset(&req->run, given[TS_FI_MODEL], cat, err) != 0)
        goto out;
    if (apply_gpu(&req->run, given[TS_FI_GPU], err) != 0)
        goto out;
    for (i = 0; i < TS_FI_COUNT; i++)
        if (given[i] != NULL)
            store((ts_field_id)i, given[i], req);
    if (apply_lora_targets(&req->run, given[TS_FI_LORA_TARGETS], err) != 0)
        goto out;

    /* Defaults that follow other members (docs/formulas.md): grads and
     * compute follow the weight precision, master weights are on unless
     * the weights are already fp32. */
    if (given[TS_FI_PRECISION] != NULL) {
        if (given[TS_FI_GRAD_PRECISION] == NULL)
            req->run.grad_precision = req->run.precision;
        if (given[TS_FI_COMPUTE_PRECISION] == NULL)
            req->run.compute_precision = req->run.precision;
        if (given[TS_FI_MASTER_WEIGHTS] == NULL)
            req->run.master_weights = req->run.precision != TS_PREC_FP32;
    }
    /* What each framework does unless told otherwise (docs/formulas.md,
     * "What the framework holds"): Megatron accumulates and reduces
     * gradients in an fp32 main_grad buffer with bf16/fp16 weights
     * (arguments.py: accumulate_allreduce_grads_in_fp32); FSDP's gradients
     * have the sharded parameters' dtype (fp32 when they are the master
     * copy) and FSDP means full sharding; DeepSpeed's 16-bit gradients
     * follow the weights (its fp32 partition is modelled separately). */
    /* Until now grad_precision is the precision's (or both defaults,
     * bf16): the framework's rule starts from it (the search applies the
     * same rule to every framework it tries). */
    if (given[TS_FI_GRAD_PRECISION] == NULL)
        req->run.grad_precision = ts_framework_grad_precision(req->run.framework,
                                                              req->run.precision,
                                                              req->run.master_weights);
    if (given[TS_FI_ZERO] == NULL && req->run.framework == TS_FW_FSDP)
        req->run.zero = 3;

    /* gpus = dp*tp*pp*cp: one given, derive the other. */
    if (given[TS_FI_DP] != NULL && given[TS_FI_GPUS] == NULL)
        req->run.gpus = 0;
    if (given[TS_FI_GPUS] != NULL && given[TS_FI_DP] == NULL)
        req->run.dp = 0;

    if (apply_gpu_overrides(&req->run, given, err) != 0)
        goto out;

    {
        const json_t *p = given[TS_FI_PARAMS];
        if (p != NULL && !json_is_null(p) && req->run.model.layers > 0) {
            ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, "/params",
                           "params is computed from the shape (layers = %lld%s); "
                           "give either params (with layers 0 and no model "
                           "preset) or a shape",
                           (long long)req->run.model.layers,
                           given[TS_FI_MODEL] != NULL ? ", from the preset" : "");
            goto out;
        }
    }

    if (im != NULL && ts_import_apply_batch(req, im, err) != 0)
        goto out;

    if (fit) {
        if (fit_seed(req, given, err) != 0)
            goto out;
    }

    req->unresolved = req->run;
    if (mode == TS_JSON_BUDGET) {
        /* As a search (the sizing searches every shape it plans), plus
         * the budget; req->unresolved is what the sizing starts from. */
        search_seed(req, given);
        rc = budget_seed(req, given, err);
        goto out;
    }
    if (mode == TS_JSON_SEARCH) {
        /* Every candidate is resolved by the search; the given layout
         * members fix their dimension. */
        search_seed(req, given);
        rc = 0;
        goto out;
    }
    memset(&cerr, 0, sizeof cerr);
    if (ts_run_resolve(&req->run, &cerr) != TS_OK) {
        size_t idx = field_index(cerr.field);

        ts_api_err_from_core(err, &cerr);
        /* A core check on an imported value names the imported key. */
        if (im != NULL && idx != SIZE_MAX && im->vals[idx] != NULL &&
            req->source[idx] == im->src[idx] && req->source[idx] != TS_SRC_REQUEST)
            blame_import(err, im->origin[idx]);
        goto out;
    }
    rc = 0;
out:
    if (im != NULL) {
        ts_import_free(im);
        free(im);
    }
    json_decref(root);
    return rc;
}

int ts_json_parse_run(const char *body, size_t len, bool fit,
                      ts_api_req *req, ts_api_err *err)
{
    return parse_body(body, len, fit ? TS_JSON_FIT : TS_JSON_RUN, req, err);
}

int ts_json_parse_search(const char *body, size_t len, ts_api_req *req,
                         ts_api_err *err)
{
    return parse_body(body, len, TS_JSON_SEARCH, req, err);
}

int ts_json_parse_budget(const char *body, size_t len, ts_api_req *req, ts_api_err *err)
{
    return parse_body(body, len, TS_JSON_BUDGET, req, err);
}
