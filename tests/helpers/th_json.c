/*
 * th_json.c - JSON helpers for the tests (see th_json.h).
 */
#include "th_json.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *th_json_parse(const char *text, size_t len)
{
    json_error_t je;
    json_t *j = json_loadb(text != NULL ? text : "", len, 0, &je);

    ck_assert_msg(j != NULL, "not JSON (%s): %.300s", je.text, text != NULL ? text : "");
    return j;
}

/* One step: a member of an object, or an index ("0") into an array. */
static json_t *step(const json_t *v, const char *key)
{
    if (json_is_array(v)) {
        char *end;
        unsigned long i = strtoul(key, &end, 10);

        return end != key && *end == '\0' ? json_array_get(v, i) : NULL;
    }
    return json_object_get(v, key);
}

json_t *th_json_get(const json_t *root, const char *path)
{
    char key[256];
    const char *dot;

    while ((dot = strchr(path, '.')) != NULL) {
        snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
        root = step(root, key);
        if (root == NULL)
            return NULL;
        path = dot + 1;
    }
    return step(root, path);
}

json_t *th_json_at(const json_t *root, const char *path)
{
    json_t *v = th_json_get(root, path);

    ck_assert_msg(v != NULL, "missing %s", path);
    return v;
}

double th_json_num(const json_t *root, const char *path)
{
    json_t *v = th_json_at(root, path);

    ck_assert_msg(json_is_number(v), "%s is not a number", path);
    return json_number_value(v);
}

const char *th_json_str(const json_t *root, const char *path)
{
    json_t *v = th_json_at(root, path);

    ck_assert_msg(json_is_string(v), "%s is not a string", path);
    return json_string_value(v);
}

bool th_json_same(const json_t *got, const json_t *want)
{
    if (json_is_number(got) && json_is_number(want))
        return json_number_value(got) == json_number_value(want);
    return json_equal(got, want);
}

/* Outside string literals the only words JSON has are true/false/null
 * and the exponent marker: anything else ("nan", "inf", "Infinity")
 * means a non-finite number leaked into the output. */
static void assert_no_bare_words(const char *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        char c = s[i];

        if (c == '"') {
            for (i++; i < n && s[i] != '"'; i++)
                if (s[i] == '\\')
                    i++;
            i++;
            continue;
        }
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            size_t j = i;

            while (j < n && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z')))
                j++;
            if (!((j - i == 4 && memcmp(s + i, "true", 4) == 0) ||
                  (j - i == 5 && memcmp(s + i, "false", 5) == 0) ||
                  (j - i == 4 && memcmp(s + i, "null", 4) == 0) ||
                  (j - i == 1 && (c == 'e' || c == 'E'))))
                ck_abort_msg("bare word \"%.*s\" in output", (int)(j - i), s + i);
            i = j;
            continue;
        }
        i++;
    }
}

static void assert_human_text(const char *h)
{
    ck_assert_ptr_nonnull(h);
    ck_assert_msg(strstr(h, "nan") == NULL && strstr(h, "inf") == NULL && strstr(h, "n/a") == NULL,
                  "human \"%s\"", h);
}

/* "human" members are for people: a NaN there would be a lie too.  A
 * term's "human" is a string, an object's "human" map holds strings. */
static void assert_humans_finite(const json_t *j)
{
    const char *key;
    json_t *v;
    size_t i;

    if (json_is_object(j)) {
        json_object_foreach((json_t *)j, key, v)
        {
            if (strcmp(key, "human") == 0 && json_is_object(v)) {
                const char *k;
                json_t *t;

                json_object_foreach(v, k, t) assert_human_text(json_string_value(t));
                continue;
            }
            if (strcmp(key, "human") == 0)
                assert_human_text(json_string_value(v));
            assert_humans_finite(v);
        }
    } else if (json_is_array(j)) {
        json_array_foreach(j, i, v) assert_humans_finite(v);
    }
}

json_t *th_json_contract(unsigned status, const char *content_type, const char *body, size_t len)
{
    json_error_t je;
    json_t *j;

    ck_assert_ptr_nonnull(body);
    ck_assert_uint_eq(strlen(body), len);
    ck_assert_ptr_nonnull(content_type);
    assert_no_bare_words(body, len);
    j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    ck_assert_msg(j != NULL, "invalid JSON out: %s (%.300s)", je.text, body);
    ck_assert(json_is_object(j));
    assert_humans_finite(j);
    if (status == 200) {
        ck_assert_str_eq(content_type, "application/json");
    } else {
        const char *type = json_string_value(json_object_get(j, "type"));
        json_t *field = json_object_get(j, "field");

        ck_assert_str_eq(content_type, "application/problem+json");
        {
            /* the five RFC 9457 members, and import_notes (a non-empty
             * array of strings) only after an import */
            const json_t *notes = json_object_get(j, "import_notes");
            size_t k;

            ck_assert_uint_eq(json_object_size(j), notes != NULL ? 6 : 5);
            if (notes != NULL) {
                ck_assert(json_is_array(notes) && json_array_size(notes) > 0);
                for (k = 0; k < json_array_size(notes); k++)
                    ck_assert(json_is_string(json_array_get(notes, k)));
            }
        }
        ck_assert_ptr_nonnull(type);
        ck_assert(strncmp(type, TH_PROBLEM_BASE, strlen(TH_PROBLEM_BASE)) == 0);
        ck_assert(json_is_string(json_object_get(j, "title")));
        ck_assert(json_is_string(json_object_get(j, "detail")));
        ck_assert_int_eq(json_integer_value(json_object_get(j, "status")), status);
        ck_assert(json_is_null(field) ||
                  (json_is_string(field) && json_string_value(field)[0] == '/'));
    }
    return j;
}
