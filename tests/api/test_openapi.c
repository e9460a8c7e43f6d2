/*
 * test_openapi.c - api/openapi.json against the code.
 *
 * argv[1] is the spec (meson passes files('../../api/openapi.json')).
 * Checked both ways so neither can drift:
 *  - routes: every ts_api_routes() entry is in the spec with its method,
 *    and every /v1 operation of the spec is in the route table;
 *  - request schema: the Run and FitRequest properties are exactly the
 *    parser's field table (name, type, nullability, range, enum), every
 *    schema-valid boundary value passes the parser's checks and every
 *    value just outside fails with the member's pointer;
 *  - examples: each request example is valid and gets its same-named 200
 *    answer; each 400 example's x-request (or raw x-request-text) gets that
 *    problem type and field; every actual and documented response
 *    validates against the response schema (a small
 *    JSON Schema subset: $ref, type, enum, ranges, required, properties,
 *    additionalProperties false, items, minItems/maxItems).
 */
#include <check.h>
#include <jansson.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"
#include "ts_api.h"

static const char *spec_path;
static json_t *spec;

static void load_spec(void)
{
    json_error_t je;

    spec = json_load_file(spec_path, JSON_REJECT_DUPLICATES, &je);
    ck_assert_msg(spec != NULL, "%s: line %d: %s", spec_path, je.line, je.text);
}

static void free_spec(void)
{
    json_decref(spec);
    spec = NULL;
}

static json_t *schema(const char *name)
{
    json_t *s =
        json_object_get(json_object_get(json_object_get(spec, "components"), "schemas"), name);
    ck_assert_msg(s != NULL, "no schema %s", name);
    return s;
}

/* ------------------------------------------------------------------ */
/* a JSON Schema subset                                                */
/* ------------------------------------------------------------------ */

static bool type_ok(const char *t, const json_t *v)
{
    if (strcmp(t, "integer") == 0)
        return json_is_integer(v);
    if (strcmp(t, "number") == 0)
        return json_is_number(v);
    if (strcmp(t, "string") == 0)
        return json_is_string(v);
    if (strcmp(t, "boolean") == 0)
        return json_is_boolean(v);
    if (strcmp(t, "object") == 0)
        return json_is_object(v);
    if (strcmp(t, "array") == 0)
        return json_is_array(v);
    if (strcmp(t, "null") == 0)
        return json_is_null(v);
    ck_abort_msg("schema type %s not handled", t);
    return false;
}

/* Returns NULL when v is valid, else a message (in buf). */
static const char *validate(const json_t *s, const json_t *v, const char *where, char *buf,
                            size_t size)
{
    const json_t *t, *x;
    const char *ref = json_string_value(json_object_get(s, "$ref"));

    if (ref != NULL) {
        const char *pfx = "#/components/schemas/";
        ck_assert(strncmp(ref, pfx, strlen(pfx)) == 0);
        return validate(schema(ref + strlen(pfx)), v, where, buf, size);
    }
    t = json_object_get(s, "type");
    if (json_is_string(t) && !type_ok(json_string_value(t), v)) {
        snprintf(buf, size, "%s: not %s", where, json_string_value(t));
        return buf;
    }
    if (json_is_array(t)) {
        size_t i;
        bool any = false;
        json_array_foreach(t, i, x) any = any || type_ok(json_string_value(x), v);
        if (!any) {
            snprintf(buf, size, "%s: none of the types", where);
            return buf;
        }
    }
    if ((x = json_object_get(s, "enum")) != NULL) {
        size_t i;
        json_t *e;
        bool any = false;
        json_array_foreach(x, i, e) any = any || json_equal(e, v);
        if (!any) {
            snprintf(buf, size, "%s: not in enum", where);
            return buf;
        }
    }
    if (json_is_number(v)) {
        double d = json_number_value(v);
        if (((x = json_object_get(s, "minimum")) && d < json_number_value(x)) ||
            ((x = json_object_get(s, "maximum")) && d > json_number_value(x)) ||
            ((x = json_object_get(s, "exclusiveMinimum")) && d <= json_number_value(x)) ||
            ((x = json_object_get(s, "exclusiveMaximum")) && d >= json_number_value(x))) {
            snprintf(buf, size, "%s: %.17g out of range", where, d);
            return buf;
        }
    }
    if (json_is_object(v)) {
        const json_t *props = json_object_get(s, "properties");
        const char *key;
        json_t *m;
        size_t i;

        json_array_foreach(json_object_get(s, "required"), i, m)
        {
            if (json_object_get(v, json_string_value(m)) == NULL) {
                snprintf(buf, size, "%s: required \"%s\" missing", where, json_string_value(m));
                return buf;
            }
        }
        json_object_foreach((json_t *)v, key, m)
        {
            const json_t *ps = props != NULL ? json_object_get(props, key) : NULL;
            char sub[256];
            const char *bad;

            if (ps == NULL) {
                if (json_is_false(json_object_get(s, "additionalProperties"))) {
                    snprintf(buf, size, "%s: unexpected \"%s\"", where, key);
                    return buf;
                }
                continue;
            }
            snprintf(sub, sizeof sub, "%s.%s", where, key);
            if ((bad = validate(ps, m, sub, buf, size)) != NULL)
                return bad;
        }
    }
    if (json_is_array(v)) {
        const json_t *items = json_object_get(s, "items");
        size_t i;
        json_t *m;

        if (((x = json_object_get(s, "minItems")) &&
             json_array_size(v) < (size_t)json_integer_value(x)) ||
            ((x = json_object_get(s, "maxItems")) &&
             json_array_size(v) > (size_t)json_integer_value(x))) {
            snprintf(buf, size, "%s: %zu items", where, json_array_size(v));
            return buf;
        }
        json_array_foreach(v, i, m)
        {
            char sub[256];
            const char *bad;

            if (items == NULL)
                break;
            snprintf(sub, sizeof sub, "%s[%zu]", where, i);
            if ((bad = validate(items, m, sub, buf, size)) != NULL)
                return bad;
        }
    }
    return NULL;
}

static void assert_valid(const json_t *s, const json_t *v, const char *what)
{
    char buf[512];
    const char *bad = validate(s, v, what, buf, sizeof buf);

    ck_assert_msg(bad == NULL, "%s", bad);
}

/* The schema a response is documented with. */
static json_t *response_schema(json_t *op, const char *status, const char *ctype)
{
    json_t *s = json_object_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(op, "responses"), status), "content"),
            ctype),
        "schema");
    ck_assert_msg(s != NULL, "no %s schema for %s", ctype, status);
    return s;
}

/* ------------------------------------------------------------------ */
/* routes                                                              */
/* ------------------------------------------------------------------ */

static void lower(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            *s = (char)(*s - 'A' + 'a');
}

START_TEST(test_version)
{
    ck_assert_str_eq(json_string_value(json_object_get(spec, "openapi")), "3.1.0");
    ck_assert(json_is_string(json_object_get(json_object_get(spec, "info"), "title")));
}
END_TEST

START_TEST(test_routes_both_ways)
{
    json_t *paths = json_object_get(spec, "paths");
    const char *const *r;
    const char *path;
    json_t *item;
    static const char *const server_paths[] = { "/livez", "/readyz", "/metrics", "/" };
    size_t i;

    for (r = ts_api_routes(); *r != NULL; r++) {
        char method[8], p[64];
        ck_assert_int_eq(sscanf(*r, "%7s %63s", method, p), 2);
        lower(method);
        ck_assert_msg(json_object_get(json_object_get(paths, p), method) != NULL,
                      "route %s missing from openapi.json", *r);
    }
    json_object_foreach(paths, path, item)
    {
        const char *m;
        json_t *op;

        if (strncmp(path, "/v1/", 4) != 0)
            continue;
        json_object_foreach(item, m, op)
        {
            char want[80];
            char upper[8];
            bool found = false;
            size_t k;

            (void)op;
            /* HEAD is served wherever GET is (the server drops the body) */
            if (strcmp(m, "head") == 0) {
                ck_assert_msg(json_object_get(item, "get") != NULL, "HEAD %s without GET", path);
                continue;
            }
            for (k = 0; m[k] != '\0' && k < sizeof upper - 1; k++)
                upper[k] = (char)(m[k] >= 'a' && m[k] <= 'z' ? m[k] - 'a' + 'A' : m[k]);
            upper[k] = '\0';
            snprintf(want, sizeof want, "%s %s", upper, path);
            for (r = ts_api_routes(); *r != NULL; r++)
                found = found || strcmp(*r, want) == 0;
            ck_assert_msg(found, "openapi.json has %s, the route table does not", want);
        }
    }
    /* HEAD is served wherever GET is: documented beside it. */
    json_object_foreach(paths, path, item)
        ck_assert_msg(json_object_get(item, "get") == NULL || json_object_get(item, "head") != NULL,
                      "%s: GET documented without HEAD", path);
    /* The server's own routes are documented too. */
    for (i = 0; i < sizeof server_paths / sizeof server_paths[0]; i++)
        ck_assert_msg(json_object_get(json_object_get(paths, server_paths[i]), "get") != NULL,
                      "GET %s missing", server_paths[i]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* request schema <-> parser field table                               */
/* ------------------------------------------------------------------ */

static const char *type_name(ts_field_type t)
{
    switch (t) {
    case TS_FT_INTEGER:
        return "integer";
    case TS_FT_NUMBER:
        return "number";
    case TS_FT_BOOLEAN:
        return "boolean";
    case TS_FT_STRING:
        return "string";
    default:
        return "?";
    }
}

static void check_property(const ts_api_field *f, const json_t *p)
{
    const json_t *t = json_object_get(p, "type");
    const json_t *x;

    ck_assert_msg(p != NULL, "%s not in the schema", f->name);
    if (f->nullable) {
        ck_assert_msg(json_is_array(t) && json_array_size(t) == 2, "%s: want [type, null]",
                      f->name);
        ck_assert_str_eq(json_string_value(json_array_get(t, 0)), type_name(f->type));
        ck_assert_str_eq(json_string_value(json_array_get(t, 1)), "null");
    } else {
        ck_assert_msg(json_is_string(t), "%s: type", f->name);
        ck_assert_str_eq(json_string_value(t), type_name(f->type));
    }
    if (f->type == TS_FT_INTEGER || f->type == TS_FT_NUMBER) {
        x = json_object_get(p, f->exclusive_minimum ? "exclusiveMinimum" : "minimum");
        ck_assert_msg(json_is_number(x) && json_number_value(x) == f->minimum, "%s: minimum",
                      f->name);
        x = json_object_get(p, f->exclusive_maximum ? "exclusiveMaximum" : "maximum");
        ck_assert_msg(json_is_number(x) && json_number_value(x) == f->maximum, "%s: maximum",
                      f->name);
        ck_assert(json_object_get(p, f->exclusive_minimum ? "minimum" : "exclusiveMinimum") ==
                  NULL);
        ck_assert(json_object_get(p, f->exclusive_maximum ? "maximum" : "exclusiveMaximum") ==
                  NULL);
    } else {
        ck_assert_msg(json_object_get(p, "minimum") == NULL &&
                          json_object_get(p, "maximum") == NULL,
                      "%s: range on a non-number", f->name);
    }
    x = json_object_get(p, "enum");
    if (f->values == NULL) {
        ck_assert_msg(x == NULL, "%s: enum in the schema only", f->name);
    } else {
        size_t i;
        ck_assert_msg(json_is_array(x), "%s: enum missing", f->name);
        for (i = 0; f->values[i] != NULL; i++)
            ck_assert_str_eq(json_string_value(json_array_get(x, i)), f->values[i]);
        ck_assert_uint_eq(json_array_size(x), i);
    }
    ck_assert_msg(json_is_string(json_object_get(p, "description")), "%s: description", f->name);
}

/* mode: 0 Run, 1 FitRequest, 2 SearchRequest (fit extras but solve,
 * plus the search-only members), 3 BudgetRequest (the budget members). */
static void check_request_schema(const char *name, int mode)
{
    json_t *s = schema(name);
    json_t *props = json_object_get(s, "properties");
    size_t i, n = 0;

    ck_assert(json_is_false(json_object_get(s, "additionalProperties")));
    for (i = 0; i < ts_api_request_field_count(); i++) {
        const ts_api_field *f = ts_api_request_field(i);
        json_t *p = json_object_get(props, f->name);

        if ((f->fit_only &&
             (mode == 0 || mode == 3 || (mode == 2 && strcmp(f->name, "solve") == 0))) ||
            (f->search_only && mode != 2) || (f->budget_only && mode != 3)) {
            ck_assert_msg(p == NULL, "%s: %s belongs to another route", name, f->name);
            continue;
        }
        check_property(f, p);
        n++;
    }
    /* The import members sit outside the field table (import/ts_import.c). */
    for (i = 0; ts_api_import_members()[i] != NULL; i++) {
        const json_t *p = json_object_get(props, ts_api_import_members()[i]);
        const char *t = json_string_value(json_object_get(p, "type"));

        ck_assert_msg(p != NULL, "%s: import member %s missing", name, ts_api_import_members()[i]);
        /* configs that are JSON are objects; YAML and argument text are strings */
        ck_assert_str_eq(t,
                         strcmp(ts_api_import_members()[i], "megatron_args") == 0 ||
                                 strcmp(ts_api_import_members()[i], "axolotl_config") == 0 ||
                                 strcmp(ts_api_import_members()[i], "llamafactory_config") == 0 ||
                                 strcmp(ts_api_import_members()[i], "nemo_config") == 0
                             ? "string"
                             : "object");
        n++;
    }
    /* same count: no property the parser does not know */
    ck_assert_uint_eq(json_object_size(props), n);
}

START_TEST(test_request_schema)
{
    json_t *req;

    check_request_schema("Run", 0);
    check_request_schema("FitRequest", 1);
    check_request_schema("SearchRequest", 2);
    check_request_schema("BudgetRequest", 3);
    req = json_object_get(schema("FitRequest"), "required");
    ck_assert_uint_eq(json_array_size(req), 1);
    ck_assert_str_eq(json_string_value(json_array_get(req, 0)), "solve");
    ck_assert_uint_eq(json_array_size(json_object_get(schema("Run"), "required")), 0);
    /* Inputs (the echo) has every Run member but the imports, nothing else. */
    {
        size_t imports = 0;

        while (ts_api_import_members()[imports] != NULL)
            imports++;
        ck_assert_uint_eq(json_object_size(json_object_get(schema("Inputs"), "properties")) +
                              imports,
                          json_object_size(json_object_get(schema("Run"), "properties")));
    }
}
END_TEST

/* Send {"<name>": v} (plus "solve" on /v1/fit); return the problem
 * type slug and field, or "" for 200. */
static unsigned probe(const ts_api_field *f, json_t *v, char *slug, size_t slen, char *field,
                      size_t flen)
{
    json_t *o = json_object();
    char *body;
    ts_api_response r;
    json_t *j;
    unsigned status;

    json_object_set_new(o, f->name, v);
    if (f->fit_only && strcmp(f->name, "solve") != 0)
        json_object_set_new(o, "solve",
                            json_string(strcmp(f->name, "max_gpus") == 0 ? "gpus" : "micro_batch"));
    body = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    ck_assert_int_eq(ts_api_handle("POST",
                                   f->search_only   ? "/v1/search"
                                   : f->fit_only    ? "/v1/fit"
                                   : f->budget_only ? "/v1/budget"
                                                    : "/v1/memory",
                                   "application/json", body, strlen(body), &r),
                     0);
    status = r.status;
    j = json_loads(r.body, 0, NULL);
    ck_assert_ptr_nonnull(j);
    snprintf(slug, slen, "%s",
             status == 200 ? ""
                           : json_string_value(json_object_get(j, "type")) +
                                 strlen("https://trainsize.dev/problems/"));
    snprintf(field, flen, "%s",
             json_is_string(json_object_get(j, "field"))
                 ? json_string_value(json_object_get(j, "field"))
                 : "");
    json_decref(j);
    ts_api_response_free(&r);
    free(body);
    json_decref(o);
    return status;
}

/* Schema-valid boundary values pass the parser's own checks (the core
 * may still refuse the combination); values just outside are refused
 * by the parser, naming the member. */
/* InputsSource's values are the sources ts_api_src_name() writes:
 * default, preset, catalogue, each import member, request (issue 24: a
 * new import member was missing from this hand-written enum). */
START_TEST(test_inputs_source_enum)
{
    const json_t *e =
        json_object_get(json_object_get(schema("InputsSource"), "additionalProperties"), "enum");
    size_t i, k, n = 0;

    ck_assert(json_is_array(e));
    for (i = 0; ts_api_import_members()[i] != NULL; i++, n++) {
        bool found = false;

        for (k = 0; k < json_array_size(e); k++)
            found = found || strcmp(json_string_value(json_array_get(e, k)),
                                    ts_api_import_members()[i]) == 0;
        ck_assert_msg(found, "InputsSource lacks %s", ts_api_import_members()[i]);
    }
    ck_assert_uint_eq(json_array_size(e), n + 4); /* + default, preset, catalogue, request */
}
END_TEST

START_TEST(test_schema_values_accepted)
{
    size_t i;

    for (i = 0; i < ts_api_request_field_count(); i++) {
        const ts_api_field *f = ts_api_request_field(i);
        json_t *good[3] = { NULL, NULL, NULL };
        json_t *bad[3] = { NULL, NULL, NULL };
        char ptr[64];
        size_t k;

        snprintf(ptr, sizeof ptr, "/%s", f->name);
        switch (f->type) {
        case TS_FT_INTEGER:
            good[0] = json_integer((json_int_t)f->minimum);
            good[1] = json_integer((json_int_t)f->maximum);
            bad[0] = json_integer((json_int_t)f->minimum - 1);
            bad[1] = json_integer((json_int_t)f->maximum + 1);
            bad[2] = json_real(f->minimum + 0.5);
            break;
        case TS_FT_NUMBER:
            /* exclusive bounds: the next double inside is valid, except
             * that subnormals are refused (README, Limits): past an
             * exclusive 0 the smallest normal double is */
            good[0] = json_real(f->exclusive_minimum
                                    ? (f->minimum == 0 ? DBL_MIN : nextafter(f->minimum, INFINITY))
                                    : f->minimum);
            good[1] =
                json_real(f->exclusive_maximum ? nextafter(f->maximum, -INFINITY) : f->maximum);
            bad[0] =
                json_real(f->exclusive_minimum ? f->minimum : nextafter(f->minimum, -INFINITY));
            bad[1] = json_real(f->exclusive_maximum ? f->maximum : nextafter(f->maximum, INFINITY));
            bad[2] = json_string("1");
            break;
        case TS_FT_BOOLEAN:
            good[0] = json_true();
            good[1] = json_false();
            bad[0] = json_integer(1);
            break;
        case TS_FT_STRING:
            if (f->values != NULL) {
                good[0] = json_string(f->values[0]);
                bad[0] = json_string("not-a-value");
            } else {
                /* catalogue ids: the first entry of each catalogue */
                good[0] = json_string(strcmp(f->name, "gpu") == 0 ? ts_gpu_at(0)->id
                                                                  : ts_preset_at(0)->id);
                bad[0] = json_string("no-such-id");
            }
            bad[1] = json_integer(1);
            break;
        default:
            ck_abort_msg("type");
        }
        if (f->nullable)
            good[2] = json_null();
        for (k = 0; k < 3; k++) {
            char slug[64], field[64];

            if (good[k] != NULL) {
                probe(f, good[k], slug, sizeof slug, field, sizeof field);
                /* Not refused as JSON: only the core's semantic checks
                 * (a lone member may not make a complete run) remain. */
                ck_assert_msg(
                    strcmp(slug, "unknown-field") != 0 && strcmp(slug, "invalid-type") != 0 &&
                        strcmp(slug, "out-of-range") != 0 && strcmp(slug, "invalid-enum") != 0 &&
                        strcmp(slug, "unknown-gpu") != 0 && strcmp(slug, "unknown-preset") != 0,
                    "%s: schema-valid value %zu refused as %s", f->name, k, slug);
            }
            if (bad[k] != NULL) {
                unsigned st = probe(f, bad[k], slug, sizeof slug, field, sizeof field);
                ck_assert_msg(st == 400 && strcmp(field, ptr) == 0,
                              "%s: invalid value %zu gave %u %s at %s", f->name, k, st, slug,
                              field);
            }
        }
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* examples                                                            */
/* ------------------------------------------------------------------ */

/* The status code whose response content holds an example named name. */
static const char *status_of_example(json_t *op, const char *name, json_t **doc)
{
    const char *code;
    json_t *resp;

    json_object_foreach(json_object_get(op, "responses"), code, resp)
    {
        const char *ct;
        json_t *media;
        json_object_foreach(json_object_get(resp, "content"), ct, media)
        {
            json_t *ex = json_object_get(json_object_get(media, "examples"), name);
            (void)ct;
            if (ex != NULL) {
                *doc = json_object_get(ex, "value");
                return code;
            }
        }
    }
    return NULL;
}

/* Send one documented 400 example's request: x-request is a JSON value,
 * x-request-text raw body text (a duplicated key is no JSON value). */
static void check_bad_example(const char *path, json_t *op, const char *name, json_t *ex)
{
    json_t *value = json_object_get(ex, "x-request");
    const char *text = json_string_value(json_object_get(ex, "x-request-text"));
    json_t *doc = json_object_get(ex, "value");
    json_t *ps = response_schema(op, "400", "application/problem+json");
    char *body = value != NULL
                     ? json_dumps(value, JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY)
                     : NULL;
    const char *sent = body != NULL ? body : text;
    ts_api_response r;
    json_t *got;
    char what[128];

    ck_assert_msg(sent != NULL, "%s: 400 example %s has neither x-request nor x-request-text", path,
                  name);
    ck_assert_int_eq(ts_api_handle("POST", path, "application/json", sent, strlen(sent), &r), 0);
    ck_assert_msg(r.status == 400, "%s 400 example %s: got %u: %s", path, name, r.status, r.body);
    got = json_loads(r.body, 0, NULL);
    ck_assert_ptr_nonnull(got);
    snprintf(what, sizeof what, "%s %s", path, name);
    assert_valid(ps, got, what);
    assert_valid(ps, doc, what);
    /* the same problem as documented, naming the same member */
    ck_assert_msg(json_equal(json_object_get(got, "type"), json_object_get(doc, "type")),
                  "%s: type", what);
    ck_assert_msg(json_equal(json_object_get(got, "field"), json_object_get(doc, "field")),
                  "%s: field", what);
    ck_assert_msg(json_is_string(json_object_get(got, "field")), "%s: a 400 example names a field",
                  what);
    json_decref(got);
    ts_api_response_free(&r);
    free(body);
}

START_TEST(test_examples)
{
    const char *path;
    json_t *item;
    size_t posts = 0;

    json_object_foreach(json_object_get(spec, "paths"), path, item)
    {
        json_t *op = json_object_get(item, "post");
        json_t *media, *exs, *ex, *bad;
        const char *name;
        size_t n400 = 0;

        if (op == NULL)
            continue;
        posts++;
        media = json_object_get(json_object_get(json_object_get(op, "requestBody"), "content"),
                                "application/json");
        ck_assert_ptr_nonnull(media);
        /* Request examples are valid requests (linters check them against
         * the schema); each has its same-named 200 answer. */
        exs = json_object_get(media, "examples");
        ck_assert_msg(json_object_size(exs) >= 1, "%s: examples", path);
        json_object_foreach(exs, name, ex)
        {
            json_t *doc = NULL;
            const char *code = status_of_example(op, name, &doc);
            json_t *value = json_object_get(ex, "value");
            char *body;
            ts_api_response r;
            json_t *got;
            char what[128];

            ck_assert_msg(code != NULL && strcmp(code, "200") == 0,
                          "%s: request example %s has no 200 answer (invalid requests "
                          "belong in a 400 example's x-request)",
                          path, name);
            body = json_dumps(value, JSON_COMPACT | JSON_REAL_PRECISION(17));
            ck_assert_int_eq(
                ts_api_handle("POST", path, "application/json", body, strlen(body), &r), 0);
            ck_assert_msg(r.status == 200, "%s example %s: got %u: %s", path, name, r.status,
                          r.body);
            got = json_loads(r.body, 0, NULL);
            ck_assert_ptr_nonnull(got);
            snprintf(what, sizeof what, "%s %s", path, name);
            assert_valid(response_schema(op, "200", "application/json"), got, what);
            assert_valid(response_schema(op, "200", "application/json"), doc, what);
            /* a request the api accepts is valid by the request schema */
            assert_valid(json_object_get(media, "schema"), value, what);
            /* the documented answer is the one the api gives today, so
             * a formula change cannot leave stale numbers in the spec */
            ck_assert_msg(json_equal(got, doc),
                          "%s: documented 200 example differs "
                          "from the api's answer; regenerate it: ninja -C BUILD regen-openapi",
                          what);
            json_decref(got);
            ts_api_response_free(&r);
            free(body);
        }
        bad = json_object_get(
            json_object_get(
                json_object_get(json_object_get(json_object_get(op, "responses"), "400"),
                                "content"),
                "application/problem+json"),
            "examples");
        json_object_foreach(bad, name, ex)
        {
            check_bad_example(path, op, name, ex);
            n400++;
        }
        ck_assert_msg(n400 >= 1, "%s: needs a documented 400 example", path);
    }
    ck_assert_uint_ge(posts, 5);
}
END_TEST

/* x-problem-types in the Problem schema is the api's table, both ways. */
START_TEST(test_problem_types)
{
    json_t *doc = json_object_get(schema("Problem"), "x-problem-types");
    const ts_api_problem_type *t;
    size_t i;

    ck_assert_msg(json_is_object(doc), "Problem.x-problem-types missing");
    for (i = 0; (t = ts_api_problem_type_at(i)) != NULL; i++) {
        json_t *e = json_object_get(doc, t->slug);

        ck_assert_msg(e != NULL, "problem type %s not in x-problem-types", t->slug);
        ck_assert_msg(json_integer_value(json_object_get(e, "status")) == (json_int_t)t->status,
                      "%s: status", t->slug);
        ck_assert_msg(strcmp(json_string_value(json_object_get(e, "title")), t->title) == 0,
                      "%s: title", t->slug);
    }
    ck_assert_uint_eq(json_object_size(doc), i);
}
END_TEST

/* GET responses match their schemas. */
START_TEST(test_get_schemas)
{
    static const char *const gets[] = { "/v1/presets", "/v1/gpus" };
    size_t i;

    for (i = 0; i < 2; i++) {
        json_t *op =
            json_object_get(json_object_get(json_object_get(spec, "paths"), gets[i]), "get");
        ts_api_response r;
        json_t *got;

        ck_assert_ptr_nonnull(op);
        ck_assert_int_eq(ts_api_handle("GET", gets[i], NULL, NULL, 0, &r), 0);
        ck_assert_uint_eq(r.status, 200);
        got = json_loads(r.body, 0, NULL);
        assert_valid(response_schema(op, "200", "application/json"), got, gets[i]);
        json_decref(got);
        ts_api_response_free(&r);
    }
}
END_TEST

/* Every problem the api can produce fits the Problem schema. */
START_TEST(test_problem_schema)
{
    static const struct {
        const char *m, *p, *ct, *b;
    } cases[] = {
        { "GET", "/v1/nope", NULL, "" },
        { "GET", "/v1/plan", NULL, "" },
        { "POST", "/v1/plan", "text/plain", "{}" },
        { "POST", "/v1/plan", "application/json", "{\"tp\":" },
        { "POST", "/v1/plan", "application/json", "{\"params\":7e9,\"tp\":3}" },
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ts_api_response r;
        json_t *got;

        ck_assert_int_eq(
            ts_api_handle(cases[i].m, cases[i].p, cases[i].ct, cases[i].b, strlen(cases[i].b), &r),
            0);
        got = json_loads(r.body, 0, NULL);
        assert_valid(schema("Problem"), got, cases[i].p);
        json_decref(got);
        ts_api_response_free(&r);
    }
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s = suite_create("openapi");
    TCase *tc = tcase_create("spec");
    SRunner *sr;
    int failed;

    if (argc < 2) {
        fprintf(stderr, "usage: %s path/to/openapi.json\n", argv[0]);
        return EXIT_FAILURE;
    }
    spec_path = argv[1];
    tcase_add_checked_fixture(tc, load_spec, free_spec);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_version);
    tcase_add_test(tc, test_routes_both_ways);
    tcase_add_test(tc, test_request_schema);
    tcase_add_test(tc, test_inputs_source_enum);
    tcase_add_test(tc, test_schema_values_accepted);
    tcase_add_test(tc, test_examples);
    tcase_add_test(tc, test_problem_types);
    tcase_add_test(tc, test_get_schemas);
    tcase_add_test(tc, test_problem_schema);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
