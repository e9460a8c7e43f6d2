/*
 * ts_gen_catalogue.c - models/<org>__<name>.json -> the C table of the model
 * catalogue.
 *
 *   ts_gen_catalogue MODELS_DIR OUT.c
 *
 * Every models/<org>__<name>.json is one model: its Hugging Face Hub id,
 * the other names it answers to, the count its publisher states and the
 * config.json members the importer reads (models/README.md).  The files
 * are checked (members, types, the id against the file name, the
 * published figure against its rounded text) and written, sorted by file
 * name, as api/ts_catalogue.h's ts_catalogue_table[] with each config as
 * compact JSON text: the server never reads models/ (it may not even be
 * installed).  OUT is rewritten only when its text changes, so that the
 * build, which runs this every time (a new file needs no reconfigure),
 * recompiles nothing when nothing changed.  Exit 1 with file: message on
 * a bad file.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* api/ts_catalogue.h: ids and aliases fit ts_run.preset (64 bytes). */
#define GEN_NAME_MAX 63
/* C11 5.2.4.1 guarantees string literals of 4095 characters (and
 * -Woverlength-strings holds us to it). */
#define GEN_LITERAL_MAX 4095
/* Like the request's own cap (core/ts_model.c TS_MODEL_PARAMS_MAX). */
#define GEN_PARAMS_MAX 1e15

typedef struct gen_buf {
    char *p;
    size_t n, cap;
} gen_buf;

static void die_oom(void)
{
    fputs("ts_gen_catalogue: out of memory\n", stderr);
    exit(2);
}

static void buf_put(gen_buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        char *p;

        while (b->n + n + 1 > cap)
            cap *= 2;
        if ((p = realloc(b->p, cap)) == NULL)
            die_oom();
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void cat_printf(gen_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void cat_printf(gen_buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        fputs("ts_gen_catalogue: line too long\n", stderr);
        exit(2);
    }
    buf_put(b, tmp, (size_t)n);
}

/* s as a C string literal: quotes, backslashes, control and non-ASCII
 * bytes escaped (octal, so that no following hex digit is swallowed). */
static void buf_cstr(gen_buf *b, const char *s)
{
    buf_put(b, "\"", 1);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        char e[8];

        if (c == '"' || c == '\\') {
            e[0] = '\\';
            e[1] = (char)c;
            buf_put(b, e, 2);
        } else if (c < 0x20 || c >= 0x7f || c == '?') {
            /* '?' too: no trigraph can form. */
            snprintf(e, sizeof e, "\\%03o", c);
            buf_put(b, e, 4);
        } else {
            buf_put(b, (const char *)&c, 1);
        }
    }
    buf_put(b, "\"", 1);
}

static int cat_fail(const char *file, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int cat_fail(const char *file, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", file);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return -1;
}

/* A Hub name: org/name or name, of [A-Za-z0-9._-], at most one '/'. */
static bool hub_name_ok(const char *s, bool need_org)
{
    size_t n = strlen(s), slashes = 0, i;

    if (n == 0 || n > GEN_NAME_MAX)
        return false;
    for (i = 0; i < n; i++) {
        char c = s[i];

        if (c == '/') {
            if (i == 0 || i + 1 == n)
                return false;
            slashes++;
        } else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '_' || c == '-')) {
            return false;
        }
    }
    return slashes <= 1 && (!need_org || slashes == 1);
}

/* "72.7B" -> 72700000000 and half a unit of its last digit (50000000).
 * Integer arithmetic: the figure is compared exactly. */
static bool parse_rounded(const char *t, long long *value, long long *half_unit)
{
    long long whole = 0, frac = 0, scale = 1, mul;
    int fd = 0;
    const char *p = t;

    if (*p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9' && whole < 1000000)
        whole = whole * 10 + (*p++ - '0');
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9' && fd < 6) {
            frac = frac * 10 + (*p++ - '0');
            scale *= 10;
            fd++;
        }
    }
    if (p[0] == 'B' && p[1] == '\0')
        mul = 1000000000LL;
    else if (p[0] == 'M' && p[1] == '\0')
        mul = 1000000LL;
    else
        return false;
    if (mul % (scale * 2) != 0)
        return false;
    *value = whole * mul + frac * (mul / scale);
    *half_unit = mul / scale / 2;
    return true;
}

static bool is_int(const json_t *v)
{
    return json_is_integer(v);
}

static const char *const gen_members[] = { "id",
                                           "aliases",
                                           "params_published",
                                           "params_published_as",
                                           "params_exact",
                                           "params_source",
                                           "params_adjust",
                                           "config_source",
                                           "notes",
                                           "config",
                                           NULL };

/* One file, checked: what its table row needs. */
typedef struct gen_model {
    json_t *root;
    const char *id, *as, *psrc, *csrc, *adj_why;
    const json_t *aliases;
    long long published, half, adjust;
    bool exact;
    char *config; /* compact JSON text (json_dumps) */
} gen_model;

/* Members, id against the file name, aliases.  0 or -1 (reported). */
static int check_names(const char *fname, gen_model *m)
{
    const char *key;
    json_t *v;
    char expect[160];
    size_t i, k;

    json_object_foreach(m->root, key, v)
    {
        for (k = 0; gen_members[k] != NULL && strcmp(gen_members[k], key) != 0; k++)
            ;
        if (gen_members[k] == NULL)
            return cat_fail(fname, "unknown member \"%s\"", key);
    }
    v = json_object_get(m->root, "id");
    if (!json_is_string(v) || !hub_name_ok(json_string_value(v), true))
        return cat_fail(fname,
                        "id must be a Hub id, organisation/name of [A-Za-z0-9._-], "
                        "at most %d characters",
                        GEN_NAME_MAX);
    m->id = json_string_value(v);
    /* models/<org>__<name>.json: the file is found from the id. */
    snprintf(expect, sizeof expect, "%.*s__%s.json", (int)strcspn(m->id, "/"), m->id,
             strchr(m->id, '/') + 1);
    if (strcmp(expect, fname) != 0)
        return cat_fail(fname, "id \"%s\" belongs in %s", m->id, expect);
    m->aliases = json_object_get(m->root, "aliases");
    if (!json_is_array(m->aliases))
        return cat_fail(fname, "aliases must be an array (may be empty)");
    json_array_foreach(
        m->aliases, i,
        v) if (!json_is_string(v) ||
               !hub_name_ok(
                   json_string_value(v),
                   false)) return cat_fail(fname,
                                           "aliases[%zu] must be a Hub id or a short name of "
                                           "[A-Za-z0-9._-]",
                                           i);
    return 0;
}

/* The published count, exact or as its rounded text, and any adjustment. */
static int check_published(const char *fname, gen_model *m)
{
    const json_t *v = json_object_get(m->root, "params_published"), *adj, *p;
    long long rounded = 0;

    if (!is_int(v) || json_integer_value(v) <= 0 || (double)json_integer_value(v) > GEN_PARAMS_MAX)
        return cat_fail(fname, "params_published must be an integer in [1, %g]", GEN_PARAMS_MAX);
    m->published = (long long)json_integer_value(v);
    v = json_object_get(m->root, "params_exact");
    if (!json_is_boolean(v))
        return cat_fail(fname, "params_exact must be true or false");
    m->exact = json_is_true(v);
    v = json_object_get(m->root, "params_published_as");
    if (m->exact != (v == NULL))
        return cat_fail(fname, m->exact ? "an exact count has no params_published_as"
                                        : "a rounded count needs params_published_as, the figure "
                                          "as published (\"7.61B\")");
    if (!m->exact) {
        if (!json_is_string(v) || !parse_rounded(json_string_value(v), &rounded, &m->half))
            return cat_fail(fname, "params_published_as must read like 7B, 72.7B or 135M");
        m->as = json_string_value(v);
        if (rounded != m->published)
            return cat_fail(fname, "params_published %lld is not params_published_as \"%s\" (%lld)",
                            m->published, m->as, rounded);
    }
    if ((adj = json_object_get(m->root, "params_adjust")) != NULL) {
        p = json_object_get(adj, "params");
        m->adj_why = json_string_value(json_object_get(adj, "why"));
        if (!json_is_object(adj) || json_object_size(adj) != 2 || !is_int(p) ||
            json_integer_value(p) == 0 || m->adj_why == NULL || m->adj_why[0] == '\0')
            return cat_fail(fname, "params_adjust must be {\"params\": nonzero integer, "
                                   "\"why\": text}");
        m->adjust = (long long)json_integer_value(p);
    }
    return 0;
}

/* Sources, notes and the config itself. */
static int check_config(const char *fname, gen_model *m)
{
    const json_t *v, *cfg = json_object_get(m->root, "config");

    m->psrc = json_string_value(json_object_get(m->root, "params_source"));
    m->csrc = json_string_value(json_object_get(m->root, "config_source"));
    if (m->psrc == NULL || m->psrc[0] == '\0' || m->csrc == NULL || m->csrc[0] == '\0')
        return cat_fail(fname, "params_source and config_source must be non-empty strings");
    if ((v = json_object_get(m->root, "notes")) != NULL && !json_is_string(v))
        return cat_fail(fname, "notes must be a string");
    if (!json_is_object(cfg) || !json_is_string(json_object_get(cfg, "model_type")))
        return cat_fail(fname, "config must be an object with a model_type string");
    /* Key order as in the file; %.17g keeps every real exact. */
    m->config = json_dumps(cfg, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    if (m->config == NULL)
        die_oom();
    if (strlen(m->config) >= GEN_LITERAL_MAX)
        return cat_fail(fname, "config is %zu bytes as compact JSON; the table holds at most %d",
                        strlen(m->config), GEN_LITERAL_MAX - 1);
    return 0;
}

/* The alias array (into arrays) and the row (into rows) of a checked file. */
static void emit_entry(const char *fname, size_t idx, const gen_model *m, gen_buf *arrays,
                       gen_buf *rows)
{
    const json_t *v;
    char path[4096];
    size_t i;

    cat_printf(arrays, "static const char *const ts_cat_aliases_%zu[] = { ", idx);
    json_array_foreach(m->aliases, i, v)
    {
        buf_cstr(arrays, json_string_value(v));
        buf_put(arrays, ", ", 2);
    }
    buf_put(arrays, "NULL };\n", 8);

    buf_put(rows, "    { ", 6);
    buf_cstr(rows, m->id);
    cat_printf(rows, ", ts_cat_aliases_%zu,\n      ", idx);
    snprintf(path, sizeof path, "models/%s", fname);
    buf_cstr(rows, path);
    buf_put(rows, ",\n      ", 8);
    buf_cstr(rows, m->config);
    cat_printf(rows, ",\n      %lld.0, %lld.0, %s, ", m->published, m->half,
               m->exact ? "true" : "false");
    if (m->as != NULL)
        buf_cstr(rows, m->as);
    else
        buf_put(rows, "NULL", 4);
    cat_printf(rows, ", %lld.0, ", m->adjust);
    if (m->adj_why != NULL)
        buf_cstr(rows, m->adj_why);
    else
        buf_put(rows, "NULL", 4);
    buf_put(rows, ",\n      ", 8);
    buf_cstr(rows, m->psrc);
    buf_put(rows, ",\n      ", 8);
    buf_cstr(rows, m->csrc);
    buf_put(rows, " },\n", 4);
}

/* Check one file and append its alias array and table row. */
static int gen_entry(const char *dir, const char *fname, size_t idx, gen_buf *arrays, gen_buf *rows)
{
    gen_model m = { 0 };
    char path[4096];
    json_error_t je;
    int rc = -1;

    snprintf(path, sizeof path, "%s/%s", dir, fname);
    m.root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (m.root == NULL)
        return cat_fail(fname, "line %d: %s", je.line, je.text);
    if (!json_is_object(m.root))
        cat_fail(fname, "not a JSON object");
    else if (check_names(fname, &m) == 0 && check_published(fname, &m) == 0 &&
             check_config(fname, &m) == 0) {
        emit_entry(fname, idx, &m, arrays, rows);
        rc = 0;
    }
    free(m.config);
    json_decref(m.root);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The *.json names in dir, sorted (readdir's order is the filesystem's). */
static char **list_models(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t cap = 0;

    *n = 0;
    if (d == NULL) {
        fprintf(stderr, "ts_gen_catalogue: %s: %s\n", dir, strerror(errno));
        exit(2);
    }
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);

        if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.')
            continue;
        if (*n == cap) {
            char **p = realloc(names, (cap ? cap * 2 : 128) * sizeof *names);

            if (p == NULL)
                die_oom();
            names = p;
            cap = cap ? cap * 2 : 128;
        }
        if ((names[*n] = strdup(e->d_name)) == NULL)
            die_oom();
        (*n)++;
    }
    closedir(d);
    if (*n > 0)
        qsort(names, *n, sizeof *names, cmp_str);
    return names;
}

/* Write text to path unless the file already holds exactly that. */
static int write_if_changed(const char *path, const gen_buf *b)
{
    FILE *f = fopen(path, "rb");

    if (f != NULL) {
        char *old = malloc(b->n + 1);
        size_t got = old != NULL ? fread(old, 1, b->n + 1, f) : 0;
        bool same = old != NULL && got == b->n && memcmp(old, b->p, b->n) == 0;

        free(old);
        fclose(f);
        if (same)
            return 0;
    }
    if ((f = fopen(path, "wb")) == NULL || fwrite(b->p, 1, b->n, f) != b->n) {
        fprintf(stderr, "ts_gen_catalogue: %s: %s\n", path, strerror(errno));
        if (f != NULL)
            fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    gen_buf out = { 0 }, arrays = { 0 }, rows = { 0 };
    char **names;
    size_t n, i;
    int bad = 0, rc;

    if (argc != 3) {
        fputs("usage: ts_gen_catalogue MODELS_DIR OUT.c\n", stderr);
        return 2;
    }
    names = list_models(argv[1], &n);
    for (i = 0; i < n; i++)
        if (gen_entry(argv[1], names[i], i, &arrays, &rows) != 0)
            bad = 1;
    if (bad)
        return 1;
    if (n == 0) {
        fprintf(stderr, "ts_gen_catalogue: no .json files in %s\n", argv[1]);
        return 1;
    }
    cat_printf(&out,
               "/* Generated by tools/ts_gen_catalogue.c from the %zu files in models/:\n"
               " * do not edit; add or change a file in models/. */\n",
               n);
    cat_printf(&out, "#include \"ts_catalogue.h\"\n\n");
    buf_put(&out, arrays.p, arrays.n);
    cat_printf(&out, "\nconst ts_catalogue_entry ts_catalogue_table[] = {\n");
    buf_put(&out, rows.p, rows.n);
    cat_printf(&out, "};\n\nconst size_t ts_catalogue_table_n = %zu;\n", n);
    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(arrays.p);
    free(rows.p);
    rc = write_if_changed(argv[2], &out);
    free(out.p);
    return rc == 0 ? 0 : 1;
}
