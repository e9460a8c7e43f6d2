/*
 * test_yaml.c - the YAML reader (import/ts_yaml.c) against PyYAML's
 * safe_load, which axolotl uses.  Every row of same[] was run through
 * PyYAML 6.0 (yaml.safe_load(text)["a"], or the exception it raised) when
 * it was written, and each value follows from lib/yaml/resolver.py's
 * regular expressions and constructor.py by hand: a float needs a dot and
 * a signed exponent (1.5e+3 is 1500.0, 1.5e3 a string), 010 is octal 8,
 * 1:30 is sexagesimal 90, "!" asks for the implicit resolution even on a
 * quoted scalar.  differ[] are this reader's deliberate refusals where
 * PyYAML would give a value JSON cannot hold or C would cut short
 * (.inf, dates, bytes, sets, NUL), or that this importer does not follow
 * (merge keys, aliases, a key given twice).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ts_yaml.h"

typedef struct yaml_case {
    const char *text;
    const char *want;  /* JSON of member "a"; NULL: an error */
    const char *field; /* the error's pointer */
} yaml_case;

static const yaml_case same[] = {
    { "a: 1.5e3", "\"1.5e3\"", NULL },
    { "a: 1.5e+3", "1500.0", NULL },
    { "a: 1e+5", "\"1e+5\"", NULL },
    { "a: 1e5", "\"1e5\"", NULL },
    { "a: .5", "0.5", NULL },
    { "a: -.5", "\"-.5\"", NULL },
    { "a: 1.", "1.0", NULL },
    { "a: 1_000.5", "1000.5", NULL },
    { "a: 6.02e-23", "6.02e-23", NULL },
    { "a: 6.02E+23", "6.02e+23", NULL },
    { "a: 6e-23", "\"6e-23\"", NULL },
    { "a: 6.0e-23", "6e-23", NULL },
    { "a: 1:30", "90", NULL },
    { "a: -1:30", "-90", NULL },
    { "a: 1:30.5", "90.5", NULL },
    { "a: 1:60", "\"1:60\"", NULL },
    { "a: 1:5:7", "3907", NULL },
    { "a: 0:30", "\"0:30\"", NULL },
    { "a: 012", "10", NULL },
    { "a: 09", "\"09\"", NULL },
    { "a: 0", "0", NULL },
    { "a: -0", "0", NULL },
    { "a: 0x1F", "31", NULL },
    { "a: -0x10", "-16", NULL },
    { "a: 0b101", "5", NULL },
    { "a: 0_", "0", NULL },
    { "a: 2_048", "2048", NULL },
    { "a: +12", "12", NULL },
    { "a: 0o17", "\"0o17\"", NULL },
    { "a: 9223372036854775807", "9223372036854775807", NULL },
    { "a: yes", "true", NULL },
    { "a: Off", "false", NULL },
    { "a: nO", "\"nO\"", NULL },
    { "a: ~", "null", NULL },
    { "a:", "null", NULL },
    { "a: nULL", "\"nULL\"", NULL },
    { "a: \"2048\"", "\"2048\"", NULL },
    { "a: '1.5'", "\"1.5\"", NULL },
    { "a: !!int \"2048\"", "2048", NULL },
    { "a: !!int 0x10", "16", NULL },
    { "a: !!str 2048", "\"2048\"", NULL },
    { "a: !!str yes", "\"yes\"", NULL },
    { "a: !!float 1", "1.0", NULL },
    { "a: !!float 1.5e3", "1500.0", NULL },
    { "a: !!float \"2_5\"", "25.0", NULL },
    { "a: !!bool YES", "true", NULL },
    { "a: !!bool off", "false", NULL },
    { "a: !!null x", "null", NULL },
    { "a: ! 12", "12", NULL },
    { "a: ! '12'", "12", NULL },
    { "a: !!seq [1, 2]", "[1,2]", NULL },
    { "a: !!map {b: 1}", "{\"b\":1}", NULL },
    { "--- \na: 1\n...\n", "1", NULL },
    { "a: 1\n---\nb: 2\n", NULL, "/x" },
    { "a: 1\n---\n", NULL, "/x" },
    { "a: =", NULL, "/x/a" },
    { "a: !!bool 1", NULL, "/x/a" },
    { "a: !!int 1.5", NULL, "/x/a" },
    { "a: !foo x", NULL, "/x/a" },
    { "a: [1, !x 2]", NULL, "/x/a/1" },
    { "a: {b: [0, {c: !!python/none ''}]}", NULL, "/x/a/b/1/c" },
    { "a: 0x_", NULL, "/x/a" },
};

static const yaml_case differ[] = {
    { "a: .inf", NULL, "/x/a" },
    { "a: -.Inf", NULL, "/x/a" },
    { "a: .NaN", NULL, "/x/a" },
    { "a: 2001-12-14", "\"2001-12-14\"", NULL },
    { "a: 9223372036854775808", "9.2233720368547758e+18", NULL },
    { "a: 1\na: 2", NULL, "/x/a" },
    { "\"a\\0b\": 1", NULL, "/x" },
    { "a: \"x\\0\"", NULL, "/x/a" },
    { "<<: {a: 1}", NULL, "/x/<<" },
    { "a: &x 1\nb: *x", NULL, "/x" },
    { "a: !!binary aGk=", NULL, "/x/a" },
    { "a: !!set {x: null}", NULL, "/x/a" },
};

static void run(const yaml_case *c)
{
    ts_api_err err;
    json_t *doc;

    memset(&err, 0, sizeof err);
    doc = ts_yaml_read(c->text, strlen(c->text), "/x", &err);
    if (c->want == NULL) {
        ck_assert_msg(doc == NULL, "%s: read, want an error at %s", c->text, c->field);
        ck_assert_msg(strcmp(err.field, c->field) == 0, "%s: error at '%s', want '%s' (%s)",
                      c->text, err.field, c->field, err.detail);
        ck_assert_uint_eq(err.status, 400);
    } else {
        json_t *want = json_loads(c->want, JSON_DECODE_ANY, NULL);
        char *got;

        ck_assert_msg(doc != NULL, "%s: error %s at %s", c->text, err.detail, err.field);
        ck_assert_ptr_nonnull(want);
        got = json_dumps(json_object_get(doc, "a"), JSON_ENCODE_ANY | JSON_COMPACT);
        ck_assert_msg(json_equal(json_object_get(doc, "a"), want), "%s: got %s, want %s", c->text,
                      got != NULL ? got : "(none)", c->want);
        free(got);
        json_decref(want);
        json_decref(doc);
    }
}

START_TEST(test_same_as_pyyaml)
{
    run(&same[_i]);
}
END_TEST

START_TEST(test_deliberate_differences)
{
    run(&differ[_i]);
}
END_TEST

/* The pointer of a nested value, RFC 6901-escaped. */
START_TEST(test_pointer_escapes)
{
    ts_api_err err;
    const char *t = "a/b:\n  c~d: !!bool maybe\n";

    memset(&err, 0, sizeof err);
    ck_assert_ptr_null(ts_yaml_read(t, strlen(t), "/x", &err));
    ck_assert_str_eq(err.field, "/x/a~1b/c~0d");
    ck_assert_msg(strstr(err.detail, "maybe") != NULL, "%s", err.detail);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("yaml");
    TCase *tc = tcase_create("read");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_same_as_pyyaml, 0, (int)(sizeof same / sizeof same[0]));
    tcase_add_loop_test(tc, test_deliberate_differences, 0,
                        (int)(sizeof differ / sizeof differ[0]));
    tcase_add_test(tc, test_pointer_escapes);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
