/*
 * test_fields_doc.c - every request field has its documentation.
 *
 * The docs columns of an entry of core/ts_fields.def are designated
 * initializers, so an entry that leaves one out still compiles; this test
 * is where that shows.  The texts go verbatim into openapi.json and the
 * CLI's --help (tools/ts_gen_fields.c).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ts_fields_doc.h"

static bool known_group(const char *g)
{
    for (const ts_field_group *k = ts_field_groups; k->id != NULL; k++)
        if (strcmp(k->id, g) == 0)
            return true;
    return false;
}

START_TEST(every_field_documented)
{
    size_t i = (size_t)_i;
    const ts_api_field *f = &ts_fields[i];
    const ts_field_doc *d = &ts_field_docs[i];
    size_t n;

    ck_assert_msg(f->name != NULL, "TS_FI index %zu has no ts_fields row", i);
    ck_assert_msg(d->doc != NULL && d->doc[0] != '\0',
                  "field '%s' has no doc: add .doc to its entry in core/ts_fields.def", f->name);
    n = strlen(d->doc);
    ck_assert_msg(d->doc[n - 1] == '.' || d->doc[n - 1] == ')',
                  "field '%s': doc is a sentence, ends in '.': \"%s\"", f->name, d->doc);
    ck_assert_msg(strchr(d->doc, '\n') == NULL, "field '%s': doc is one line", f->name);
    ck_assert_msg(d->group != NULL && known_group(d->group),
                  "field '%s': group '%s' is not one of ts_field_groups", f->name,
                  d->group ? d->group : "(none)");
    ck_assert_msg(d->def != NULL && d->def[0] != '\0', "field '%s' has no default text", f->name);
    /* solve is /v1/fit's, which the CLI does not call; every run field,
     * search extra and the fit extras the search takes too is a CLI
     * option with help. */
    if (f->fit_only)
        ck_assert_str_eq(d->group, "fit");
    if (strcmp(f->name, "solve") == 0) {
        ck_assert_msg(d->cli == NULL, "fit-only field '%s' has CLI help", f->name);
    } else {
        if (f->search_only)
            ck_assert_str_eq(d->group, "search");
        if (f->budget_only)
            ck_assert_str_eq(d->group, "budget");
        ck_assert_msg(d->cli != NULL && d->cli[0] != '\0', "field '%s' has no CLI help", f->name);
        ck_assert_msg(strchr(d->cli, '\n') == NULL && strchr(d->cli, '"') == NULL,
                      "field '%s': CLI help is one line without quotes", f->name);
        /* The generator appends an enum's values from ts_fields[]. */
        ck_assert_msg(f->values == NULL || strchr(d->cli, '|') == NULL,
                      "field '%s': CLI help repeats the enum values", f->name);
    }
    ck_assert_msg(!d->cli_suffix || f->type == TS_FT_NUMBER,
                  "field '%s': k/M/B/T suffixes only for numbers", f->name);
}
END_TEST

/* The import members (hf_config, ...) have their docs too, one per name. */
START_TEST(every_import_documented)
{
    const char *const *names = ts_api_import_members();
    size_t n = 0;

    while (names[n] != NULL)
        n++;
    ck_assert_uint_eq(n, TS_IMP_COUNT);
    for (size_t i = 0; i < TS_IMP_COUNT; i++) {
        const ts_import_doc *d = &ts_import_docs[i];

        ck_assert_msg(d->doc != NULL && d->doc[0] != '\0', "import '%s' has no doc", names[i]);
        ck_assert_msg(!d->text || d->max_len > 0, "import '%s': text without a cap", names[i]);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fields-docs");
    TCase *tc = tcase_create("docs");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, every_field_documented, 0, TS_FI_COUNT);
    tcase_add_test(tc, every_import_documented);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
