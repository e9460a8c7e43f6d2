/*
 * ts_yaml.c - YAML text -> a jansson tree, as PyYAML's safe_load reads it.
 *
 * PyYAML's rules (lib/yaml/composer.py, resolver.py, constructor.py
 * @d51d8a138f7230834fc6e95635ff09ebd329185f), which axolotl loads with:
 *   - one document: a second one is an error (composer: "expected a
 *     single document in the stream"), never silently dropped;
 *   - plain scalars by the YAML 1.1 implicit resolvers: null (~, null,
 *     empty), bool (yes/no/true/false/on/off), int (2_048, 0x10, 0b10,
 *     octal 010, sexagesimal 1:30), float (a dot, and an exponent only
 *     with a sign: 1.5e+3 is a float, 1.5e3 and 1e5 are strings), the rest
 *     strings; a timestamp stays a string (JSON has none), .inf and .nan
 *     are a 400 (nor those), and so are "=" and the merge key "<<", which
 *     safe_load treats specially;
 *   - explicit tags honoured: !!str, !!int, !!float, !!bool, !!null, "!"
 *     (the implicit resolution, even quoted), !!map and !!seq on
 *     collections; a tag safe_load has no constructor for is a 400, and so
 *     are !!binary, !!timestamp, !!set, !!omap and !!pairs (no JSON form);
 *   - a scalar holding NUL (a "\0" escape) is a 400: C strings would stop
 *     there, and "sequence_len\0junk" is not sequence_len.
 * Aliases are refused, which also rules out expansion bombs.  Keys are
 * kept as their text (PyYAML would make "yes:" a bool key; no key read
 * here is one of those words).  Errors name the pointer of the value
 * under the document's own (base).
 *
 * Built only with libyaml (meson's yaml-0.1); its event parser does the
 * syntax, this file the resolution and the shape.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "ts_ckd.h"
#include "ts_import.h"
#include "ts_yaml.h"

#define YTAG "tag:yaml.org,2002:"

static bool word_in(const char *s, const char *const *list)
{
    for (; *list != NULL; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

typedef struct yj_frame {
    json_t *node; /* object or array */
    char *key;    /* pending mapping key (malloc'd) */
} yj_frame;

typedef struct yj {
    yj_frame st[TS_IMPORT_DEPTH_MAX];
    size_t depth;
    json_t *root;
    ts_api_err *err;
    const char *base; /* the pointer of the document: "/axolotl_config" */
    bool failed;      /* err is set (else a NULL value is out of memory) */
} yj;

static int yaml_fail(const yj *y, const yaml_parser_t *p, const char *what)
{
    ts_api_err_set(y->err, TS_PROB_INVALID_VALUE, y->base, "%s: %s at line %zu, column %zu",
                   y->base + 1, what, (size_t)p->problem_mark.line + 1,
                   (size_t)p->problem_mark.column + 1);
    return -1;
}

/* Pointer of the value being read: every open container's key or index;
 * with_key false leaves out the innermost pending key. */
static void yj_ptr(const yj *y, char *buf, size_t size, bool with_key)
{
    size_t i;

    snprintf(buf, size, "%s", y->base);
    for (i = 0; i < y->depth; i++) {
        const yj_frame *f = &y->st[i];
        char idx[24];

        if (json_is_array(f->node)) {
            snprintf(idx, sizeof idx, "%zu", json_array_size(f->node));
            ts_import_ptr_add(buf, size, idx);
        } else if (f->key != NULL && (with_key || i + 1 < y->depth)) {
            ts_import_ptr_add(buf, size, f->key);
        }
    }
}

/* A 400 at the value being read (leaf, when not NULL, appended to its
 * pointer), quoting s[0..n). */
static json_t *yj_bad(yj *y, ts_problem slug, const char *leaf, const char *what, const char *s,
                      size_t n)
{
    char ptr[TS_IMPORT_ORIGIN_LEN];

    yj_ptr(y, ptr, sizeof ptr, true);
    if (leaf != NULL)
        ts_import_ptr_add(ptr, sizeof ptr, leaf);
    ts_api_err_set(y->err, slug, ptr, "%s: %s '%.*s'", ptr, what, ts_utf8_prec(s, n < 64 ? n : 64),
                   s);
    y->failed = true;
    return NULL;
}

/* The number of digits of s[0..n) in base, '_' skipped, -1 when a
 * character is neither.  Past int64 *big is set (the value is then only
 * *d, approximately). */
static int yj_digits(const char *s, size_t n, unsigned base, int64_t *v, double *d, bool *big)
{
    size_t i, nd = 0;

    for (i = 0; i < n; i++) {
        char c = s[i];
        unsigned dv;

        if (c == '_')
            continue;
        if (c >= '0' && c <= '9')
            dv = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            dv = (unsigned)(c - 'a') + 10;
        else if (c >= 'A' && c <= 'F')
            dv = (unsigned)(c - 'A') + 10;
        else
            return -1;
        if (dv >= base)
            return -1;
        nd++;
        *big = *big || ts_ckd_mul(v, *v, (int64_t)base) || ts_ckd_add(v, *v, (int64_t)dv);
        *d = *d * base + dv;
    }
    return nd > 0 ? 1 : 0;
}

/* The number, from its value and sign: an integer while it fits. */
static json_t *yj_number(bool neg, int64_t v, double d, bool big)
{
    if (big)
        return json_real(neg ? -d : d);
    return json_integer((json_int_t)(neg ? -v : v));
}

/* A decimal past int64 as the nearest double (strtod of the digits), or
 * approx when there are too many digits to copy (it is past any range
 * then anyway). */
static double yj_decimal(const char *s, size_t n, double approx)
{
    char buf[64];
    size_t i, o = 0;

    for (i = 0; i < n; i++) {
        if (s[i] == '_')
            continue;
        if (o + 1 >= sizeof buf)
            return approx;
        buf[o++] = s[i];
    }
    buf[o] = '\0';
    return strtod(buf, NULL);
}

/* YAML 1.1 int (resolver.py's regex, constructor.py's construct_yaml_int):
 * 1 and *out, 0 not an int, -1 an int PyYAML cannot construct (0x_). */
static int yj_int(const char *s, size_t n, json_t **out)
{
    bool neg = false, big = false;
    int64_t v = 0;
    double d = 0;
    size_t i = 0;

    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    s += i;
    n -= i;
    if (n == 1 && s[0] == '0') {
        *out = json_integer(0);
        return 1;
    }
    if (n > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'x')) {
        int nd = yj_digits(s + 2, n - 2, s[1] == 'b' ? 2 : 16, &v, &d, &big);

        if (nd <= 0)
            return nd < 0 ? 0 : -1; /* int('', 16) raises */
    } else if (n > 1 && s[0] == '0') {
        if (yj_digits(s + 1, n - 1, 8, &v, &d, &big) < 0)
            return 0; /* "0_" is 0 */
    } else if (n > 0 && s[0] >= '1' && s[0] <= '9') {
        const char *colon = memchr(s, ':', n);
        size_t head = colon != NULL ? (size_t)(colon - s) : n;

        if (yj_digits(s, head, 10, &v, &d, &big) < 0)
            return 0;
        if (big && head == n)
            d = yj_decimal(s, n, d);
        /* sexagesimal: (:[0-5]?[0-9])+ */
        while (head < n) {
            size_t k = head + 1, m = 0;

            while (k + m < n && s[k + m] >= '0' && s[k + m] <= '9')
                m++;
            if (m == 0 || m > 2 || (m == 2 && s[k] > '5') || (k + m < n && s[k + m] != ':'))
                return 0;
            {
                int64_t part = s[k] - '0';

                if (m == 2)
                    part = part * 10 + (s[k + 1] - '0');
                big = big || ts_ckd_mul(&v, v, 60) || ts_ckd_add(&v, v, part);
                d = d * 60 + (double)part;
            }
            head = k + m;
        }
    } else {
        return 0;
    }
    *out = yj_number(neg, v, d, big);
    return 1;
}

/* [0-9][0-9_]* at s[*i]: true when matched (*i past it). */
static bool yj_run(const char *s, size_t n, size_t *i, bool first_digit)
{
    size_t k = *i;

    if (first_digit && (k >= n || s[k] < '0' || s[k] > '9'))
        return false;
    while (k < n && ((s[k] >= '0' && s[k] <= '9') || s[k] == '_'))
        k++;
    *i = k;
    return true;
}

/* resolver.py's float regex: 1 a float written plainly (to strtod once
 * '_' is gone), 2 sexagesimal, 3 .inf / .nan, 0 not a float. */
static int yj_float_kind(const char *s, size_t n)
{
    size_t i = 0;
    bool sign = n > 0 && (s[0] == '-' || s[0] == '+');

    if (sign)
        i++;
    if (n - i == 4 && s[i] == '.' &&
        (memcmp(s + i + 1, "inf", 3) == 0 || memcmp(s + i + 1, "Inf", 3) == 0 ||
         memcmp(s + i + 1, "INF", 3) == 0))
        return 3;
    if (!sign && n == 4 && s[0] == '.' &&
        (memcmp(s + 1, "nan", 3) == 0 || memcmp(s + 1, "NaN", 3) == 0 ||
         memcmp(s + 1, "NAN", 3) == 0))
        return 3;
    if (i < n && s[i] == '.') {
        /* \.[0-9][0-9_]*, no sign */
        i++;
        if (sign || !yj_run(s, n, &i, true))
            return 0;
    } else {
        bool sexa = false;

        if (!yj_run(s, n, &i, true))
            return 0;
        while (i < n && s[i] == ':') { /* (:[0-5]?[0-9])+ */
            size_t m = 0;

            while (i + 1 + m < n && s[i + 1 + m] >= '0' && s[i + 1 + m] <= '9')
                m++;
            if (m == 0 || m > 2 || (m == 2 && s[i + 1] > '5'))
                return 0;
            i += 1 + m;
            sexa = true;
        }
        if (i >= n || s[i] != '.')
            return 0;
        i++;
        yj_run(s, n, &i, false);
        if (sexa)
            return i == n ? 2 : 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        /* [eE][-+][0-9]+: the sign is required */
        size_t k = i + 2;

        if (i + 1 >= n || (s[i + 1] != '-' && s[i + 1] != '+') || k >= n)
            return 0;
        while (k < n && s[k] >= '0' && s[k] <= '9')
            k++;
        if (k != n || k == i + 2)
            return 0;
        i = k;
    }
    return i == n ? 1 : 0;
}

/* A float's value: '_' dropped, sexagesimal parts folded in base 60
 * (construct_yaml_float); NaN when the text is not one (Python's float()
 * would raise). */
static double yj_float_value(const char *s, size_t n)
{
    char buf[128];
    size_t i, o = 0;
    double v = 0, part;
    char *end;
    bool neg = n > 0 && s[0] == '-';

    if (n > 0 && (s[0] == '-' || s[0] == '+'))
        s++, n--;
    for (i = 0; i <= n; i++) {
        if (i < n && s[i] == '_')
            continue;
        if (i < n && s[i] != ':') {
            if (o + 1 >= sizeof buf || strchr("0123456789.eE+-", s[i]) == NULL)
                return NAN;
            buf[o++] = s[i];
            continue;
        }
        buf[o] = '\0';
        errno = 0;
        part = strtod(buf, &end);
        if (o == 0 || *end != '\0' || errno != 0 || strpbrk(buf, "0123456789") == NULL)
            return NAN;
        v = v * 60 + part;
        o = 0;
    }
    return neg ? -v : v;
}

static json_t *yj_float(yj *y, const char *s, size_t n)
{
    double d = yj_float_value(s, n);

    if (!isfinite(d))
        return yj_bad(y, TS_PROB_INVALID_VALUE, NULL, "is not a finite number (JSON has none):", s,
                      n);
    return json_real(d);
}

/* A plain scalar by PyYAML's implicit resolvers. */
static json_t *yj_plain(yj *y, const char *s, size_t n)
{
    static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
    static const char *const trues[] = { "yes",  "Yes", "YES", "true", "True",
                                         "TRUE", "on",  "On",  "ON",   NULL };
    static const char *const falses[] = { "no",    "No",  "NO",  "false", "False",
                                          "FALSE", "off", "Off", "OFF",   NULL };
    json_t *v = NULL;
    int rc;

    if (word_in(s, nulls))
        return json_null();
    if (word_in(s, trues))
        return json_true();
    if (word_in(s, falses))
        return json_false();
    if (strcmp(s, "=") == 0)
        return yj_bad(y, TS_PROB_INVALID_VALUE, NULL,
                      "PyYAML's safe_load has no constructor "
                      "for the value indicator",
                      s, n);
    if ((rc = yj_int(s, n, &v)) != 0)
        return rc > 0
                   ? v
                   : yj_bad(y, TS_PROB_INVALID_VALUE, NULL, "is an integer with no digits:", s, n);
    if (yj_float_kind(s, n) != 0)
        return yj_float(y, s, n);
    return json_stringn(s, n);
}

/* A tag safe_load would take but this reader does not (constructor.py's
 * SafeConstructor: JSON has no bytes, dates or sets): a 400 either way,
 * with the right reason. */
static json_t *yj_tag_refused(yj *y, const char *tag)
{
    static const char *const no_json[] = { YTAG "binary", YTAG "timestamp", YTAG "set",
                                           YTAG "omap",   YTAG "pairs",     NULL };

    return yj_bad(y, TS_PROB_INVALID_VALUE, NULL,
                  word_in(tag, no_json) ? "has a tag whose value has no JSON form (not read here):"
                                        : "has a tag PyYAML's safe_load has no constructor for:",
                  tag, strlen(tag));
}

/* A scalar with an explicit tag (construct_yaml_str/int/float/bool/null).
 * "!" asks for the implicit resolution even when quoted (PyYAML's
 * parser.py gives it implicit (True, False)). */
static json_t *yj_tagged(yj *y, const char *tag, const char *s, size_t n)
{
    static const char *const bools[] = { "yes", "no", "true", "false", "on", "off", NULL };
    json_t *v = NULL;

    if (strcmp(tag, "!") == 0)
        return yj_plain(y, s, n);
    if (strcmp(tag, YTAG "str") == 0)
        return json_stringn(s, n);
    if (strcmp(tag, YTAG "null") == 0)
        return json_null();
    if (strcmp(tag, YTAG "int") == 0)
        return yj_int(s, n, &v) > 0 ? v
                                    : yj_bad(y, TS_PROB_INVALID_VALUE, NULL,
                                             "!!int of a "
                                             "value that is not an integer:",
                                             s, n);
    if (strcmp(tag, YTAG "float") == 0)
        return yj_float(y, s, n);
    if (strcmp(tag, YTAG "bool") == 0) {
        char low[8];
        size_t i;

        for (i = 0; i < n && i + 1 < sizeof low; i++)
            low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
        low[i] = '\0';
        if (n < sizeof low && word_in(low, bools))
            return json_boolean(low[0] == 'y' || low[0] == 't' || strcmp(low, "on") == 0);
        return yj_bad(y, TS_PROB_INVALID_VALUE, NULL,
                      "!!bool of a value that is not yes, no, "
                      "true, false, on or off:",
                      s, n);
    }
    return yj_tag_refused(y, tag);
}

/* Add v (stolen) to the innermost container, or make it the root. */
static int yj_add(yj *y, json_t *v)
{
    yj_frame *f;

    if (v == NULL) {
        if (!y->failed)
            ts_api_err_set(y->err, TS_PROB_OUT_OF_MEMORY, NULL, "out of memory reading %s",
                           y->base + 1);
        return -1;
    }
    if (y->depth == 0) {
        if (y->root == NULL)
            y->root = v;
        else
            json_decref(v);
        return 0;
    }
    f = &y->st[y->depth - 1];
    if (json_is_array(f->node))
        return json_array_append_new(f->node, v) == 0 ? 0 : -1;
    if (f->key == NULL) {
        json_decref(v);
        ts_api_err_set(y->err, TS_PROB_INVALID_VALUE, y->base,
                       "%s: mapping keys must be plain scalars", y->base + 1);
        return -1;
    }
    if (json_object_get(f->node, f->key) != NULL) {
        char ptr[TS_IMPORT_ORIGIN_LEN];
        int n = ts_utf8_prec(f->key, 64);

        yj_ptr(y, ptr, sizeof ptr, true);
        ts_api_err_set(y->err, TS_PROB_DUPLICATE_KEY, ptr, "%s: key \"%.*s\" appears twice",
                       y->base + 1, n, f->key);
        json_decref(v);
        return -1;
    }
    json_object_set_new(f->node, f->key, v);
    free(f->key);
    f->key = NULL;
    return 0;
}

static int yj_scalar(yj *y, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    const char *tag = (const char *)ev->data.scalar.tag;
    size_t n = ev->data.scalar.length;
    yj_frame *f = y->depth > 0 ? &y->st[y->depth - 1] : NULL;
    bool is_key = f != NULL && json_is_object(f->node) && f->key == NULL;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    json_t *v;

    if (memchr(s, '\0', n) != NULL) {
        yj_bad(y, TS_PROB_INVALID_VALUE, NULL,
               is_key ? "a key contains a NUL character (\\0):" : "contains a NUL character (\\0):",
               s, strlen(s));
        return -1;
    }
    if (plain && strcmp(s, "<<") == 0) {
        /* safe_load merges the mapping given there into this one */
        yj_bad(y, TS_PROB_UNSUPPORTED_CONFIG, is_key ? "<<" : NULL,
               "merge keys are not "
               "supported; write the keys out:",
               s, n);
        return -1;
    }
    if (!is_key)
        return yj_add(y, tag != NULL ? yj_tagged(y, tag, s, n)
                         : plain     ? yj_plain(y, s, n)
                                     : json_stringn(s, n));
    /* A key keeps its text; a tag on it must still be one safe_load
     * constructs. */
    if (tag != NULL) {
        if ((v = yj_tagged(y, tag, s, n)) == NULL)
            return yj_add(y, NULL);
        json_decref(v);
    }
    if ((f->key = malloc(n + 1)) == NULL)
        return yj_add(y, NULL);
    memcpy(f->key, s, n + 1);
    return 0;
}

/* A mapping or sequence starts: only !!map / !!seq (or no tag). */
static int yj_open(yj *y, const yaml_event_t *ev)
{
    bool seq = ev->type == YAML_SEQUENCE_START_EVENT;
    const char *tag =
        (const char *)(seq ? ev->data.sequence_start.tag : ev->data.mapping_start.tag);

    if (tag != NULL && strcmp(tag, "!") != 0 && strcmp(tag, seq ? YTAG "seq" : YTAG "map") != 0) {
        yj_tag_refused(y, tag);
        return -1;
    }
    if (y->depth >= TS_IMPORT_DEPTH_MAX) {
        ts_api_err_set(y->err, TS_PROB_IMPORT_TOO_LARGE, y->base, "%s nests deeper than %d levels",
                       y->base + 1, TS_IMPORT_DEPTH_MAX);
        return -1;
    }
    if (y->depth > 0 && json_is_object(y->st[y->depth - 1].node) &&
        y->st[y->depth - 1].key == NULL) {
        ts_api_err_set(y->err, TS_PROB_INVALID_VALUE, y->base,
                       "%s: mapping keys must be plain scalars", y->base + 1);
        return -1;
    }
    y->st[y->depth].node = seq ? json_array() : json_object();
    y->st[y->depth].key = NULL;
    if (y->st[y->depth].node == NULL)
        return yj_add(y, NULL);
    y->depth++;
    return 0;
}

static int yj_event(yj *y, const yaml_event_t *ev, size_t *docs)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        return yj_scalar(y, ev);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        return yj_open(y, ev);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
        json_t *node;

        if (y->depth == 0)
            return 0;
        y->depth--;
        node = y->st[y->depth].node;
        y->st[y->depth].node = NULL;
        free(y->st[y->depth].key);
        y->st[y->depth].key = NULL;
        return yj_add(y, node);
    }
    case YAML_ALIAS_EVENT:
        ts_api_err_set(y->err, TS_PROB_INVALID_VALUE, y->base,
                       "%s: aliases (*name) are not supported", y->base + 1);
        return -1;
    case YAML_DOCUMENT_START_EVENT:
        if (++*docs > 1) {
            ts_api_err_set(y->err, TS_PROB_INVALID_VALUE, y->base,
                           "%s has more than one YAML document ('---'); PyYAML's "
                           "safe_load refuses that too",
                           y->base + 1);
            return -1;
        }
        return 0;
    case YAML_NO_EVENT:
    case YAML_STREAM_START_EVENT:
    case YAML_STREAM_END_EVENT:
    case YAML_DOCUMENT_END_EVENT:
    default:
        return 0;
    }
}

json_t *ts_yaml_read(const char *text, size_t len, const char *base, ts_api_err *err)
{
    yaml_parser_t p;
    yaml_event_t ev;
    yj y;
    size_t events = 0, docs = 0, i;
    bool done = false, ok = true;

    memset(&y, 0, sizeof y);
    y.err = err;
    y.base = base;
    if (!yaml_parser_initialize(&p)) {
        ts_api_err_set(err, TS_PROB_OUT_OF_MEMORY, NULL, "out of memory reading %s", base + 1);
        return NULL;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (!done && ok) {
        if (!yaml_parser_parse(&p, &ev)) {
            yaml_fail(&y, &p, p.problem != NULL ? p.problem : "invalid YAML");
            ok = false;
            break;
        }
        if (++events > TS_IMPORT_NODES_MAX * 2) {
            ts_api_err_set(err, TS_PROB_IMPORT_TOO_LARGE, base, "%s has more than %d values",
                           base + 1, TS_IMPORT_NODES_MAX);
            ok = false;
        } else {
            done = ev.type == YAML_STREAM_END_EVENT;
            ok = yj_event(&y, &ev, &docs) == 0;
        }
        yaml_event_delete(&ev);
    }
    for (i = 0; i < TS_IMPORT_DEPTH_MAX; i++) {
        json_decref(y.st[i].node);
        free(y.st[i].key);
    }
    yaml_parser_delete(&p);
    if (!ok) {
        json_decref(y.root);
        return NULL;
    }
    if (!json_is_object(y.root)) {
        json_decref(y.root);
        ts_api_err_set(err, TS_PROB_INVALID_TYPE, base,
                       "%s must be a YAML mapping (key: value lines)", base + 1);
        return NULL;
    }
    return y.root;
}

int ts_yaml_import(ts_import *im, const char *text, size_t len, const char *member,
                   ts_yaml_map_fn map, ts_api_err *err)
{
    char ptr[TS_IMPORT_BASE_LEN];
    json_t *cfg;
    int rc;

    snprintf(ptr, sizeof ptr, "/%s", member);
    if (len > TS_IMPORT_ARGS_MAX) {
        ts_api_err_set(err, TS_PROB_IMPORT_TOO_LARGE, ptr, "%s is %zu bytes, more than %d", member,
                       len, TS_IMPORT_ARGS_MAX);
        return -1;
    }
    if (memchr(text, '\0', len) != NULL) {
        ts_api_err_set(err, TS_PROB_INVALID_VALUE, ptr, "%s contains a NUL character", member);
        return -1;
    }
    if ((cfg = ts_yaml_read(text, len, ptr, err)) == NULL)
        return -1;
    rc = ts_import_check_size(cfg, ptr, err) == 0 ? map(im, cfg, err) : -1;
    json_decref(cfg);
    return rc;
}
