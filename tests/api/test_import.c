/*
 * test_import.c - imported configs (hf_config, deepspeed_config,
 * megatron_args) through ts_api_handle(), data-driven.
 *
 * argv[1] is tests/data.  tests/data/import_cases.json lists each case:
 * the request (inline "body", plus "files" read from tests/data and
 * "patch"ed: "a/b" keys reach into nested objects, "$delete" removes a
 * key; "megatron_append" adds words to the args file), the route, the
 * expected status, and then either the expected values at dotted paths
 * ("expect"), substrings of an array's strings ("contains") and absent
 * members ("absent"), or the problem's JSON pointer ("field") and slug
 * ("type").  Each case says why in "why": the parameter counts are worked
 * by hand there and match the released checkpoints' published totals.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api.h"

static const char *data_dir;
static json_t *cases;

static char *read_data(const char *rel)
{
    char path[1024];
    FILE *f;
    long n;
    char *buf;

    snprintf(path, sizeof path, "%s/%s", data_dir, rel);
    f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    ck_assert_int_ge(n, 0);
    rewind(f);
    buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* "a/b" -> obj["a"]["b"] = v (v stolen); "$delete" removes. */
static void patch_one(json_t *obj, const char *path, json_t *v)
{
    char key[128];
    const char *slash = strchr(path, '/');

    if (slash != NULL) {
        json_t *sub;

        snprintf(key, sizeof key, "%.*s", (int)(slash - path), path);
        sub = json_object_get(obj, key);
        ck_assert_msg(json_is_object(sub), "patch: %s is not an object", key);
        patch_one(sub, slash + 1, v);
        return;
    }
    if (json_is_string(v) && strcmp(json_string_value(v), "$delete") == 0) {
        json_object_del(obj, path);
        json_decref(v);
        return;
    }
    json_object_set_new(obj, path, v);
}

static json_t *build_body(const json_t *c)
{
    const json_t *body = json_object_get(c, "body");
    const json_t *files = json_object_get(c, "files");
    const json_t *patch = json_object_get(c, "patch");
    const json_t *append = json_object_get(c, "megatron_append");
    json_t *req = body != NULL ? json_deep_copy(body) : json_object();
    const char *k;
    json_t *v;

    json_object_foreach((json_t *)files, k, v) {
        char *text = read_data(json_string_value(v));

        if (strcmp(k, "megatron_args") == 0 || strcmp(k, "axolotl_config") == 0) {
            json_object_set_new(req, k, json_string(text));
        } else {
            json_error_t je;
            json_t *doc = json_loads(text, 0, &je);

            ck_assert_msg(doc != NULL, "%s: %s", json_string_value(v), je.text);
            json_object_set_new(req, k, doc);
        }
        free(text);
    }
    json_object_foreach((json_t *)patch, k, v) {
        json_t *target = json_object_get(req, k);
        const char *pk;
        json_t *pv;

        ck_assert_msg(json_is_object(target), "patch target %s", k);
        json_object_foreach(v, pk, pv)
            patch_one(target, pk, json_deep_copy(pv));
    }
    if (append != NULL) {
        const char *old = json_string_value(json_object_get(req, "megatron_args"));
        size_t n = strlen(old) + json_string_length(append) + 1;
        char *s = malloc(n);

        ck_assert_ptr_nonnull(s);
        snprintf(s, n, "%s%s", old, json_string_value(append));
        json_object_set_new(req, "megatron_args", json_string(s));
        free(s);
    }
    return req;
}

/* Dotted lookup "params.total". */
static const json_t *at(const json_t *root, const char *path)
{
    char key[128];
    const char *dot;

    while ((dot = strchr(path, '.')) != NULL) {
        snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
        root = json_object_get(root, key);
        if (root == NULL)
            return NULL;
        path = dot + 1;
    }
    return json_object_get(root, path);
}

static bool same(const json_t *got, const json_t *want)
{
    if (json_is_number(got) && json_is_number(want))
        return json_number_value(got) == json_number_value(want);
    return json_equal(got, want);
}

START_TEST(test_case)
{
    const json_t *c = json_array_get(cases, (size_t)_i);
    const char *name = json_string_value(json_object_get(c, "name"));
    const char *route = json_string_value(json_object_get(c, "route"));
    json_t *req = build_body(c);
    char *body = json_dumps(req, JSON_COMPACT);
    ts_api_response r;
    json_t *ans;
    const char *k;
    json_t *v;
    unsigned want = (unsigned)json_integer_value(json_object_get(c, "status"));

    ck_assert_ptr_nonnull(body);
    ck_assert_int_eq(ts_api_handle("POST", route, "application/json", body,
                                   strlen(body), &r), 0);
    ans = json_loadb(r.body, r.body_len, 0, NULL);
    ck_assert_msg(ans != NULL, "%s: answer is not JSON", name);
    ck_assert_msg(r.status == want, "%s: status %u, want %u: %s", name, r.status,
                  want, r.body);
    if (want == 200) {
        ck_assert_str_eq(r.content_type, "application/json");
        json_object_foreach(json_object_get(c, "expect"), k, v) {
            const json_t *got = at(ans, k);

            ck_assert_msg(got != NULL, "%s: %s missing", name, k);
            ck_assert_msg(same(got, v), "%s: %s = %s, want %s", name, k,
                          json_dumps(got, JSON_ENCODE_ANY), json_dumps(v, JSON_ENCODE_ANY));
        }
        json_object_foreach(json_object_get(c, "contains"), k, v) {
            const json_t *arr = at(ans, k);
            bool found = false;
            size_t i;

            ck_assert_msg(json_is_array(arr), "%s: %s is not an array", name, k);
            for (i = 0; i < json_array_size(arr) && !found; i++)
                found = strstr(json_string_value(json_array_get(arr, i)),
                               json_string_value(v)) != NULL;
            ck_assert_msg(found, "%s: no %s entry contains '%s'", name, k,
                          json_string_value(v));
        }
        {
            const json_t *absent = json_object_get(c, "absent");
            size_t i;

            for (i = 0; i < json_array_size(absent); i++)
                ck_assert_msg(at(ans, json_string_value(json_array_get(absent, i))) == NULL,
                              "%s: %s should be absent", name,
                              json_string_value(json_array_get(absent, i)));
        }
        /* Whatever the import, the inputs echo stays a valid request. */
        if (json_object_get(ans, "inputs") != NULL && strcmp(route, "/v1/fit") != 0) {
            char *echo = json_dumps(json_object_get(ans, "inputs"), JSON_COMPACT);
            ts_api_response r2;

            ck_assert_int_eq(ts_api_handle("POST", "/v1/memory", "application/json",
                                           echo, strlen(echo), &r2), 0);
            ck_assert_msg(r2.status == 200, "%s: echo refused: %s", name, r2.body);
            ts_api_response_free(&r2);
            free(echo);
        }
    } else {
        const char *type = json_string_value(json_object_get(ans, "type"));
        const char *field = json_string_value(json_object_get(ans, "field"));
        const char *detail = json_string_value(json_object_get(ans, "detail"));
        const char *want_detail = json_string_value(json_object_get(c, "detail_contains"));
        char want_type[128];

        ck_assert_str_eq(r.content_type, "application/problem+json");
        snprintf(want_type, sizeof want_type, "https://trainsize.dev/problems/%s",
                 json_string_value(json_object_get(c, "type")));
        ck_assert_msg(type != NULL && strcmp(type, want_type) == 0, "%s: type %s, want %s (%s)",
                      name, type, want_type, detail);
        ck_assert_msg(field != NULL &&
                      strcmp(field, json_string_value(json_object_get(c, "field"))) == 0,
                      "%s: field %s, want %s (%s)", name, field,
                      json_string_value(json_object_get(c, "field")), detail);
        if (want_detail != NULL)
            ck_assert_msg(detail != NULL && strstr(detail, want_detail) != NULL,
                          "%s: detail '%s' lacks '%s'", name, detail, want_detail);
    }
    json_decref(ans);
    ts_api_response_free(&r);
    free(body);
    json_decref(req);
}
END_TEST

/* The route is listed, and /v1/import answers only the inputs (plus the
 * count that checks them): no memory, compute or checkpoint. */
START_TEST(test_import_route)
{
    const char *const *routes = ts_api_routes();
    const char *body = "{\"model\":\"llama3-8b\"}";
    bool listed = false;
    ts_api_response r;
    json_t *a;

    for (; *routes != NULL; routes++)
        listed |= strcmp(*routes, "POST /v1/import") == 0;
    ck_assert(listed);
    ck_assert_int_eq(ts_api_handle("POST", "/v1/import", "application/json", body,
                                   strlen(body), &r), 0);
    ck_assert_uint_eq(r.status, 200);
    a = json_loads(r.body, 0, NULL);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(json_object_size(a), 4);
    ck_assert_ptr_nonnull(json_object_get(a, "inputs"));
    ck_assert_ptr_nonnull(json_object_get(a, "inputs_source"));
    ck_assert_ptr_nonnull(json_object_get(a, "import_notes"));
    ck_assert_ptr_nonnull(json_object_get(a, "params"));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(a, "inputs_source"),
                                                       "layers")), "preset");
    json_decref(a);
    ts_api_response_free(&r);
    ck_assert_int_eq(ts_api_handle("GET", "/v1/import", NULL, NULL, 0, &r), 0);
    ck_assert_uint_eq(r.status, 405);
    ts_api_response_free(&r);
}
END_TEST

/* Duplicate keys inside an import (jansson alone would keep the last):
 * raw text, since a duplicate cannot be built as a JSON value. */
START_TEST(test_nested_duplicates)
{
    static const struct { const char *body, *field; } dups[] = {
        { "{\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":1,\"hidden_size\":2}}",
          "/hf_config/hidden_size" },
        { "{\"model\":\"llama3-8b\",\"deepspeed_config\":{\"zero_optimization\":"
          "{\"stage\":1,\"offload_param\":{\"device\":\"cpu\"},\"stage\":3}}}",
          "/deepspeed_config/zero_optimization/stage" },
        { "{\"hf_config\":{\"model_type\":\"gemma3\",\"text_config\":{\"a/b\":1,\"a/b\":2}}}",
          "/hf_config/text_config/a~1b" },
        { "{\"hf_config\":{},\"hf_config\":{}}", "/hf_config" },
    };
    size_t i;

    for (i = 0; i < sizeof dups / sizeof dups[0]; i++) {
        ts_api_response r;
        json_t *a;

        ck_assert_int_eq(ts_api_handle("POST", "/v1/import", "application/json", dups[i].body,
                                       strlen(dups[i].body), &r), 0);
        ck_assert_msg(r.status == 400, "%s: %u", dups[i].body, r.status);
        a = json_loads(r.body, 0, NULL);
        ck_assert_str_eq(json_string_value(json_object_get(a, "type")),
                         "https://trainsize.dev/problems/duplicate-key");
        ck_assert_str_eq(json_string_value(json_object_get(a, "field")), dups[i].field);
        json_decref(a);
        ts_api_response_free(&r);
    }
}
END_TEST

int main(int argc, char **argv)
{
    json_error_t je;
    Suite *s;
    TCase *tc;
    SRunner *sr;
    int failed;

    if (argc < 2) {
        fprintf(stderr, "usage: test_import TESTS_DATA_DIR\n");
        return 2;
    }
    data_dir = argv[1];
    {
        char path[1024];
        FILE *f;

        snprintf(path, sizeof path, "%s/import_cases.json", data_dir);
        f = fopen(path, "rb");
        if (f == NULL) {
            fprintf(stderr, "cannot open %s\n", path);
            return 2;
        }
        cases = json_loadf(f, 0, &je);
        fclose(f);
    }
    if (!json_is_array(cases)) {
        fprintf(stderr, "import_cases.json: %s\n", je.text);
        return 2;
    }
    s = suite_create("import");
    tc = tcase_create("cases");
    tcase_add_loop_test(tc, test_case, 0, (int)json_array_size(cases));
    tcase_add_test(tc, test_import_route);
    tcase_add_test(tc, test_nested_duplicates);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    json_decref(cases);
    return failed == 0 ? 0 : 1;
}
