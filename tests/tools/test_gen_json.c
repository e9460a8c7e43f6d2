/*
 * test_gen_json.c - tools/ts_gen_json.c writes what Python's
 * json.dumps(value, indent=2, ensure_ascii=False) writes, byte for byte:
 * the layout api/openapi.json has always had.  The expected texts were
 * printed by CPython 3.11's json.dumps for the same values.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ts_gen_json.h"

static char *dump(json_t *v)
{
    ts_buf b;
    char *s;

    ck_assert_ptr_nonnull(v);
    ts_buf_init(&b, 1 << 20);
    ck_assert_int_eq(gen_json_write(&b, v), TS_BUF_OK);
    s = ts_buf_steal(&b, NULL);
    json_decref(v);
    return s;
}

/* Each double as float.__repr__ writes it: shortest digits, plain
 * between 1e-4 and 1e16 (".0" when integral), else d.ddde+XX. */
START_TEST(reals_as_python_repr)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        { 0.1, "0.1" },
        { 1e16, "1e+16" },
        { 1e15, "1000000000000000.0" },
        { 123456.5, "123456.5" },
        { 1e-4, "0.0001" },
        { 1e-5, "1e-05" },
        { 1.5e-7, "1.5e-07" },
        { 5e-324, "5e-324" },
        { 1.7976931348623157e308, "1.7976931348623157e+308" },
        { -0.0, "-0.0" },
        { 0.0, "0.0" },
        { -2.5, "-2.5" },
        { 3.0, "3.0" },
        { 100.0, "100.0" },
        { 1e22, "1e+22" },
        { 12345678901234567890.0, "1.2345678901234567e+19" },
        { 0.000123, "0.000123" },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = dump(json_real(cases[i].v));

        ck_assert_msg(strcmp(s, cases[i].want) == 0, "%.17g: got %s, want %s", cases[i].v, s,
                      cases[i].want);
        free(s);
    }
}
END_TEST

/* Containers one member a line at indent + 2, empty ones as [] and {},
 * strings with ", \ and C0 controls escaped (lower-case \u), UTF-8 and
 * DEL copied. */
START_TEST(layout_as_json_dumps)
{
    json_t *v = json_pack("{s:[], s:{}, s:s, s:[ibnb], s:{s:{s:i}}}", "a", "b", "c",
                          "q\"\\\n\x01\x7f \xc3\xa9", "d", 1, 1, 0, "e", "f", "g", 1);
    char *s = dump(v);
    const char *want = "{\n"
                       "  \"a\": [],\n"
                       "  \"b\": {},\n"
                       "  \"c\": \"q\\\"\\\\\\n\\u0001\x7f \xc3\xa9\",\n"
                       "  \"d\": [\n"
                       "    1,\n"
                       "    true,\n"
                       "    null,\n"
                       "    false\n"
                       "  ],\n"
                       "  \"e\": {\n"
                       "    \"f\": {\n"
                       "      \"g\": 1\n"
                       "    }\n"
                       "  }\n"
                       "}";

    ck_assert_str_eq(s, want);
    free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gen_json");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, reals_as_python_repr);
    tcase_add_test(tc, layout_as_json_dumps);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
