/*
 * ts_gen_openapi.c - the one writer of api/openapi.json.
 *
 * The hand-written document is api/openapi.in.json.  Each part that
 * another source owns is a placeholder there, a string starting with
 * "@generated", which this program replaces:
 *
 *   components.schemas.{Run,FitRequest,Inputs,SearchRequest,BudgetRequest}
 *       "x-generated", "properties" (and Inputs' "required"): the
 *       request-field registry, read through its runtime tables
 *       ts_fields[] (core/ts_fields.h) and ts_field_docs[] (core/ts_fields.def);
 *   components.schemas.<Name>Human: the output-terms table (ts_terms[]);
 *   components.schemas.Problem.x-problem-types: api/ts_problems.def;
 *   every POST's 200 example "value": the API's answer to the request
 *       example of the same name, and every 400 example "value": its
 *       answer to the example's x-request (a JSON value) or
 *       x-request-text (raw body text), both through ts_api_handle() in
 *       this process, as the server would answer;
 *   the top-level "x-generated": where each part comes from.
 *
 * A generated spot without its placeholder is refused (a hand edit
 * there would be lost), and so is a placeholder left unfilled.  The
 * document is written by ts_gen_json.c (json.dumps(indent=2) layout).
 *
 *   ts_gen_openapi TEMPLATE OUT                 write OUT ("-": stdout)
 *   ts_gen_openapi check TEMPLATE COMMITTED OUT write OUT; exit 1 with a
 *                                               diff hint when COMMITTED
 *                                               differs (meson test)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ts_api.h"
#include "ts_fields_doc.h"
#include "ts_gen_check.h"
#include "ts_gen_json.h"
#include "ts_terms.h"

#define GEN_REFRESH "ninja -C BUILDDIR regen-openapi"
#define GEN_BY      "tools/ts_gen_openapi.c"
#define PLACEHOLDER "@generated"

static void fatal(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

static void fatal(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "ts_gen_openapi: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* A new jansson value, or the end (a build tool: no partial document). */
static json_t *made(json_t *v)
{
    if (v == NULL)
        fatal("out of memory");
    return v;
}

static void set_member(json_t *obj, const char *key, json_t *v)
{
    if (json_object_set_new(obj, key, made(v)) != 0)
        fatal("out of memory");
}

/* The member reached through the NULL-terminated keys, or NULL. */
static json_t *dig(json_t *v, ...)
{
    va_list ap;
    const char *key;

    va_start(ap, v);
    while (v != NULL && (key = va_arg(ap, const char *)) != NULL)
        v = json_object_get(v, key);
    va_end(ap);
    return v;
}

static bool is_placeholder(const json_t *v)
{
    return json_is_string(v) &&
           strncmp(json_string_value(v), PLACEHOLDER, strlen(PLACEHOLDER)) == 0;
}

/* obj[key] = v where the template has a placeholder; jansson keeps the
 * member's place, so the template's key order is the file's. */
static void fill(json_t *obj, const char *key, json_t *v, const char *where)
{
    if (!is_placeholder(json_object_get(obj, key)))
        fatal("api/openapi.in.json: %s: \"%s\" must be a \"" PLACEHOLDER "...\" placeholder "
              "(the generator writes it; a hand edit there would be lost)",
              where, key);
    set_member(obj, key, v);
}

/* Integral values below 1e16 as integers (1000000), others as reals. */
static json_t *number(double v)
{
    /* The range test first: converting a double outside json_int_t's
     * range is undefined behaviour (C11 6.3.1.4). */
    if (v < 1e16 && v > -1e16 && v == (double)(json_int_t)v)
        return json_integer((json_int_t)v);
    return json_real(v);
}

/* ------------------------------------------------------------------ */
/* Request schemas (core/ts_fields.def)                                */
/* ------------------------------------------------------------------ */

/* In the order they appear in openapi.json. */
typedef enum schema_kind {
    SCHEMA_RUN,
    SCHEMA_FIT,
    SCHEMA_INPUTS,
    SCHEMA_SEARCH,
    SCHEMA_BUDGET,
    SCHEMA_COUNT
} schema_kind;

static const char *const schema_names[SCHEMA_COUNT] = { "Run", "FitRequest", "Inputs",
                                                        "SearchRequest", "BudgetRequest" };

/* One member.  described: the requests carry the doc; Inputs is the
 * echo and carries types and ranges only.  search: SearchRequest's doc
 * where the entry has one. */
static json_t *property(const ts_field *f, const ts_field_doc *d, bool described, bool search)
{
    static const char *const type_names[] = { "integer", "number", "boolean", "string" };
    json_t *p = made(json_object());

    if (f->nullable)
        set_member(p, "type", json_pack("[ss]", type_names[f->type], "null"));
    else
        set_member(p, "type", json_string(type_names[f->type]));
    if (f->values != NULL) {
        json_t *e = made(json_array());

        for (const char *const *v = f->values; *v != NULL; v++)
            if (json_array_append_new(e, made(json_string(*v))) != 0)
                fatal("out of memory");
        set_member(p, "enum", e);
    }
    if (f->type == TS_FT_INTEGER || f->type == TS_FT_NUMBER) {
        set_member(p, f->exclusive_minimum ? "exclusiveMinimum" : "minimum", number(f->minimum));
        set_member(p, f->exclusive_maximum ? "exclusiveMaximum" : "maximum", number(f->maximum));
    }
    if (described && d->doc != NULL)
        set_member(p, "description",
                   json_string(search && d->search_doc != NULL ? d->search_doc : d->doc));
    return p;
}

/* An import member: an object, or a capped text. */
static json_t *import_property(const ts_import_doc *d)
{
    json_t *p = made(json_object());

    set_member(p, "type", json_string(d->text ? "string" : "object"));
    if (d->text)
        set_member(p, "maxLength", json_integer(d->max_len));
    if (d->doc != NULL)
        set_member(p, "description", json_string(d->doc));
    return p;
}

static bool run_member(const ts_api_field *f)
{
    return !f->fit_only && !f->search_only && !f->budget_only;
}

/* Which extras a schema has: the parser's rules (ts_json_parse_run):
 * fit extras on /v1/fit, and on /v1/search all but solve; search extras
 * on /v1/search only; budget extras on /v1/budget only. */
static bool extra_member(size_t i, schema_kind k)
{
    const ts_api_field *f = &ts_fields[i];

    if (f->fit_only)
        return k == SCHEMA_FIT || (k == SCHEMA_SEARCH && i != TS_FI_SOLVE);
    if (f->search_only)
        return k == SCHEMA_SEARCH;
    return f->budget_only && k == SCHEMA_BUDGET;
}

/* The run fields, the import members (requests only: the echo has
 * none), then the fit, search and budget extras the schema has. */
static json_t *properties(schema_kind k)
{
    const char *const *imports = ts_api_import_members();
    json_t *props = made(json_object());
    bool search = k == SCHEMA_SEARCH;

    for (size_t i = 0; i < TS_FI_COUNT; i++)
        if (run_member(&ts_fields[i]))
            set_member(props, ts_fields[i].name,
                       property(&ts_fields[i], &ts_field_docs[i], k != SCHEMA_INPUTS, search));
    for (size_t i = 0; k != SCHEMA_INPUTS && i < TS_IMP_COUNT && imports[i] != NULL; i++)
        set_member(props, imports[i], import_property(&ts_import_docs[i]));
    /* fit extras first, then search, then budget: the parser's order */
    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = 0; i < TS_FI_COUNT; i++) {
            const ts_api_field *f = &ts_fields[i];
            bool in_pass = pass == 0 ? f->fit_only : pass == 1 ? f->search_only : f->budget_only;

            if (in_pass && extra_member(i, k))
                set_member(
                    props, f->name,
                    property(&ts_fields[i], &ts_field_docs[i], true, search && !f->budget_only));
        }
    }
    return props;
}

/* Inputs' "required": the echo has every run member. */
static json_t *inputs_required(void)
{
    json_t *req = made(json_array());

    for (size_t i = 0; i < TS_FI_COUNT; i++)
        if (run_member(&ts_fields[i]) &&
            json_array_append_new(req, made(json_string(ts_fields[i].name))) != 0)
            fatal("out of memory");
    return req;
}

static void fill_request_schemas(json_t *schemas)
{
    for (int k = 0; k < SCHEMA_COUNT; k++) {
        json_t *s = json_object_get(schemas, schema_names[k]);
        char where[64];

        snprintf(where, sizeof where, "components.schemas.%s", schema_names[k]);
        if (!json_is_object(s))
            fatal("api/openapi.in.json: no schema %s (components.schemas)", schema_names[k]);
        fill(s, "x-generated",
             json_string("properties (and Inputs.required) are generated by " GEN_BY
                         " from core/ts_fields.def; do not edit them "
                         "here: edit the registry, then " GEN_REFRESH),
             where);
        fill(s, "properties", properties((schema_kind)k), where);
        if (k == SCHEMA_INPUTS)
            fill(s, "required", inputs_required(), where);
    }
}

/* ------------------------------------------------------------------ */
/* "<Name>Human" schemas (api/ts_terms.c)                              */
/* ------------------------------------------------------------------ */

/* One object's "human" map: a text per number that has one. */
static json_t *human_schema(ts_term_obj o)
{
    json_t *s = made(json_object()), *props = made(json_object()), *req = made(json_array());
    char text[512];

    set_member(s, "x-generated",
               json_string("generated by " GEN_BY " from api/ts_terms.c; do not edit "
                           "it here: edit the table, then " GEN_REFRESH));
    set_member(s, "type", json_string("object"));
    snprintf(text, sizeof text,
             "The text of each number of %s that has one: its value rounded, "
             "with its unit, as the dashboard and the CLI show it.",
             ts_term_objs[o].path);
    set_member(s, "description", json_string(text));
    for (size_t i = 0; i < TS_T_COUNT; i++) {
        const ts_term_def *d = &ts_terms[i];

        if (d->obj != o || d->shape != TS_TERM_MAP)
            continue;
        if ((size_t)snprintf(text, sizeof text, "%s: %s Formula: %s.", d->label, d->doc,
                             d->formula) >= sizeof text)
            fatal("api/ts_terms.c: the description of %s.%s is over %zu bytes",
                  ts_term_objs[o].path, d->key, sizeof text);
        set_member(props, d->key, json_pack("{s:s, s:s}", "type", "string", "description", text));
        if (json_array_append_new(req, made(json_string(d->key))) != 0)
            fatal("out of memory");
    }
    set_member(s, "properties", props);
    set_member(s, "required", req);
    set_member(s, "additionalProperties", json_false());
    return s;
}

static void fill_human_schemas(json_t *schemas)
{
    for (int o = 0; o < TS_TO_COUNT; o++)
        if (ts_term_objs[o].schema != NULL)
            fill(schemas, ts_term_objs[o].schema, human_schema((ts_term_obj)o),
                 "components.schemas");
}

/* Problem.x-problem-types: slug -> status, title, in the table's order. */
static void fill_problem_types(json_t *schemas)
{
    json_t *types = made(json_object());
    const ts_api_problem_type *t;

    for (size_t i = 0; (t = ts_api_problem_type_at(i)) != NULL; i++)
        set_member(types, t->slug,
                   json_pack("{s:I, s:s}", "status", (json_int_t)t->status, "title", t->title));
    fill(json_object_get(schemas, "Problem"), "x-problem-types", types,
         "components.schemas.Problem");
}

/* ------------------------------------------------------------------ */
/* Examples: the API's own answers                                     */
/* ------------------------------------------------------------------ */

/* The API's answer to POST path with body, as a JSON value; its status
 * must be want. */
static json_t *answer(const char *path, const char *name, const char *body, unsigned want)
{
    ts_api_response r;
    json_error_t je;
    json_t *got;

    if (ts_api_handle("POST", path, "application/json", body, strlen(body), &r) != 0)
        fatal("out of memory");
    if (r.status != want)
        fatal("%s example %s: documented as a %u, answered %u: %s", path, name, want, r.status,
              r.body);
    got = json_loadb(r.body, r.body_len, JSON_REJECT_DUPLICATES, &je);
    if (got == NULL)
        fatal("%s example %s: the answer is no JSON (%s)", path, name, je.text);
    ts_api_response_free(&r);
    return got;
}

/* A request value as a body: compact, as the API's tests send it. */
static char *request_body(const json_t *value)
{
    char *body = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);

    if (body == NULL)
        fatal("out of memory");
    return body;
}

/* Each 200 example is the answer to the request example of its name. */
static void fill_ok_examples(const char *path, json_t *op)
{
    json_t *reqs = dig(op, "requestBody", "content", "application/json", "examples", NULL);
    json_t *oks = dig(op, "responses", "200", "content", "application/json", "examples", NULL);
    const char *name;
    json_t *ex;
    char where[160];

    json_object_foreach(oks, name, ex)
    {
        json_t *req = dig(reqs, name, "value", NULL);
        char *body;

        snprintf(where, sizeof where, "paths.%s.post 200 example %s", path, name);
        if (req == NULL)
            fatal("api/openapi.in.json: %s has no request example of that name", where);
        body = request_body(req);
        fill(ex, "value", answer(path, name, body, 200), where);
        free(body);
    }
}

/* Each 400 example is the answer to its x-request or x-request-text. */
static void fill_bad_examples(const char *path, json_t *op)
{
    json_t *bad =
        dig(op, "responses", "400", "content", "application/problem+json", "examples", NULL);
    const char *name;
    json_t *ex;
    char where[160];

    json_object_foreach(bad, name, ex)
    {
        json_t *value = json_object_get(ex, "x-request");
        const char *text = json_string_value(json_object_get(ex, "x-request-text"));
        char *body = value != NULL ? request_body(value) : NULL;

        snprintf(where, sizeof where, "paths.%s.post 400 example %s", path, name);
        if (body == NULL && text == NULL)
            fatal("api/openapi.in.json: %s has neither x-request nor x-request-text", where);
        fill(ex, "value", answer(path, name, body != NULL ? body : text, 400), where);
        free(body);
    }
}

static void fill_examples(json_t *doc)
{
    const char *path;
    json_t *item;

    json_object_foreach(json_object_get(doc, "paths"), path, item)
    {
        json_t *op = json_object_get(item, "post");

        if (op == NULL)
            continue;
        fill_ok_examples(path, op);
        fill_bad_examples(path, op);
    }
}

/* ------------------------------------------------------------------ */
/* The document                                                        */
/* ------------------------------------------------------------------ */

/* The JSON pointer of the first placeholder left in v (into ptr), or
 * false when there is none. */
static bool find_placeholder(const json_t *v, char *ptr, size_t size, size_t at)
{
    const char *key;
    json_t *item;
    size_t i;

    if (is_placeholder(v))
        return true;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, item)
        {
            snprintf(ptr + at, size - at, "/%s", key);
            if (find_placeholder(item, ptr, size, strlen(ptr)))
                return true;
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, item)
        {
            snprintf(ptr + at, size - at, "/%zu", i);
            if (find_placeholder(item, ptr, size, strlen(ptr)))
                return true;
        }
    }
    ptr[at] = '\0';
    return false;
}

/* The whole file's text from the template: malloc'd, with its length. */
static char *openapi_document(const char *template_path, size_t *len)
{
    json_error_t je;
    json_t *doc = json_load_file(template_path, JSON_REJECT_DUPLICATES, &je);
    json_t *schemas = dig(doc, "components", "schemas", NULL);
    char ptr[512] = "";
    ts_buf b;
    char *text;

    if (doc == NULL)
        fatal("%s: line %d: %s", template_path, je.line, je.text);
    if (!json_is_object(schemas))
        fatal("%s: no components.schemas", template_path);
    fill(doc, "x-generated",
         json_string("generated by " GEN_BY
                     ": do not edit.  The text is api/openapi.in.json's; the "
                     "request schemas come from core/ts_fields.def, the *Human schemas from "
                     "api/ts_terms.c, Problem.x-problem-types from api/ts_problems.def and the "
                     "examples' answers from the API itself.  Refresh: " GEN_REFRESH),
         "the top level");
    fill_request_schemas(schemas);
    fill_human_schemas(schemas);
    fill_problem_types(schemas);
    fill_examples(doc);
    if (find_placeholder(doc, ptr, sizeof ptr, 0))
        fatal("%s: the placeholder at %s is not one the generator fills", template_path, ptr);
    ts_buf_init(&b, (size_t)64 << 20);
    if (gen_json_write(&b, doc) != TS_BUF_OK || ts_buf_append(&b, "\n", 1) != TS_BUF_OK)
        fatal("out of memory");
    json_decref(doc);
    text = ts_buf_steal(&b, len);
    if (text == NULL)
        fatal("out of memory");
    return text;
}

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");

    if (f == NULL)
        fatal("cannot write %s", path);
    if (fwrite(text, 1, len, f) != len || (f != stdout ? fclose(f) : fflush(f)) != 0)
        fatal("cannot write %s", path);
}

static int check(const char *template_path, const char *committed, const char *out)
{
    size_t len;
    char *text = openapi_document(template_path, &len);
    int rc;

    write_file(out, text, len);
    rc = gen_check_committed(committed, text, len, out, GEN_REFRESH);
    free(text);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "check") == 0)
        return check(argv[2], argv[3], argv[4]);
    if (argc == 3) {
        size_t len;
        char *text = openapi_document(argv[1], &len);

        write_file(argv[2], text, len);
        free(text);
        return 0;
    }
    fprintf(stderr, "usage: ts_gen_openapi TEMPLATE OUT\n"
                    "       ts_gen_openapi check TEMPLATE COMMITTED OUT\n");
    return 64;
}
