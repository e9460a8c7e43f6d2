/*
 * test_defaults.c - no hand-written default disagrees with the code
 * (issue 24 item 7: --help, docs/fields.md and openapi.json said
 * "0 = dp*micro_batch" for global_batch while the core used about 4M
 * tokens).
 *
 * Every copy people read (--help, docs/fields.md, openapi.json, the
 * dashboard) is generated from the registry's docs columns
 * (core/ts_fields.def: .def, .doc, .search_doc), so checking those
 * columns checks them all.  For each entry:
 *   - ts_run_defaults() stores exactly the DEF column of the runtime
 *     table (ts_fields[], a loop over the plain members), and the names
 *     it leaves in the custom ones (the GPU, the preset, the LoRA
 *     targets) are their .def texts;
 *   - a .def text that starts with a number, true/false, null or one of
 *     the member's values states that default; a computed one ("the
 *     preset's, else 4096", "0 (= 4 h)") states it after "else" or
 *     first, and otherwise names what it is computed from, never a bare
 *     number of its own;
 *   - "Default N" / "default N" in the one-line docs is the default (the
 *     search's own bounds for search_doc);
 *   - global_batch's formula names the core's constants: about
 *     TS_BATCH_TOKENS (2^22, "4M") tokens and a bubble of 1 /
 *     TS_BATCH_BUBBLE_DIV.
 */
#include <check.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"
#include "ts_api_int.h"
#include "ts_fields_doc.h"

/* The default of a CUSTOM member that is a name, as ts_run_defaults()
 * leaves it (the GPU's id, no preset, the LoRA targets' text); NULL for
 * the others, whose DEF column is a number (or NAN: none). */
static const char *default_text(size_t i, const ts_run *r, char *buf, size_t size)
{
    switch (i) {
    case TS_FI_MODEL:
        return r->preset;
    case TS_FI_GPU:
        return r->gpu.id;
    case TS_FI_LORA_TARGETS:
        ts_lora_targets_text(r->lora_targets, buf, size);
        return buf;
    case TS_FI_LORA_SAVE:
        ts_lora_save_text(r->lora_save, buf, size);
        return buf;
    default:
        return NULL;
    }
}

/* The default the code uses: the DEF column, or for the search's bounds
 * that DEF leaves 0 ("derived"), the search's own constants; NAN when
 * it is computed from other members. */
static double effective(size_t i, bool search)
{
    if (i == TS_FI_MAX_CP)
        return TS_SEARCH_CP_DEFAULT;
    if (i == TS_FI_MAX_VPP)
        return TS_SEARCH_VPP_DEFAULT;
    if (i == TS_FI_MAX_MICRO_BATCH && search)
        return TS_SEARCH_MB_DEFAULT;
    if (i == TS_FI_MAX_TP || i == TS_FI_MAX_PP)
        return NAN; /* gpus_per_node, layers */
    return ts_fields[i].def;
}

/* The name of enum member i's value v, or NULL. */
static const char *enum_name(size_t i, double v)
{
    const ts_field *f = &ts_fields[i];
    size_t k;

    if (f->values == NULL || f->ints == NULL)
        return NULL;
    for (k = 0; f->values[k] != NULL; k++)
        if ((double)f->ints[k] == v)
            return f->values[k];
    return NULL;
}

static bool is_enum_value(size_t i, const char *w)
{
    const ts_field *f = &ts_fields[i];
    size_t k;

    for (k = 0; f->values != NULL && f->values[k] != NULL; k++)
        if (strcmp(f->values[k], w) == 0)
            return true;
    return false;
}

/* The first word of t (letters, digits, '_', '-', '.'), into w. */
static const char *word(const char *t, char *w, size_t size)
{
    size_t n = 0;

    while (*t == ' ')
        t++;
    while (*t != '\0' &&
           (isalnum((unsigned char)*t) || *t == '_' || *t == '-' || *t == '.' || *t == '\'') &&
           n + 1 < size)
        w[n++] = *t++;
    w[n] = '\0';
    return t;
}

/* A stated default w (a number, true/false, a value name) is member i's
 * default d; msg says where it was read. */
static void states(size_t i, const char *w, double d, const char *where)
{
    const char *name = ts_fields[i].name;
    char *end;
    double n;

    if (is_enum_value(i, w)) { /* first: "1f1b" is a name */
        const char *want = enum_name(i, d);

        ck_assert_msg(want != NULL && strcmp(want, w) == 0,
                      "%s: %s states %s, the code's default is %s", name, where, w,
                      want != NULL ? want : "?");
        return;
    }
    if (isdigit((unsigned char)w[0]) || (w[0] == '-' && isdigit((unsigned char)w[1]))) {
        n = strtod(w, &end);
        ck_assert_msg(*end == '\0', "%s: %s: '%s' is not a number", name, where, w);
        ck_assert_msg(!isnan(d), "%s: %s states %s, but the default is computed", name, where, w);
        ck_assert_msg(n == d, "%s: %s states %s, the code's default is %.17g", name, where, w, d);
        return;
    }
    if (strcmp(w, "true") == 0 || strcmp(w, "false") == 0) {
        ck_assert_msg(ts_fields[i].type == TS_FT_BOOLEAN,
                      "%s: %s states %s for a member that is not a flag", name, where, w);
        ck_assert_msg((w[0] == 't') == (d != 0), "%s: %s states %s, the code's default is %s", name,
                      where, w, d != 0 ? "true" : "false");
        return;
    }
    ck_abort_msg("%s: %s: '%s' is not a value of the member", name, where, w);
}

START_TEST(test_def_column_is_what_the_core_stores)
{
    ts_run r;
    size_t i;

    ts_run_defaults(&r);
    for (i = 0; i < TS_FI_COUNT; i++) {
        const ts_field *f = &ts_fields[i];
        const char *base = (const char *)&r;
        double v;

        switch (f->kind) {
        case TS_FK_INT64:
            v = (double)*(const int64_t *)(const void *)(base + f->off);
            break;
        case TS_FK_INT:
        case TS_FK_ENUM:
            v = (double)*(const int *)(const void *)(base + f->off);
            break;
        case TS_FK_NUM:
        case TS_FK_NUM_OPT:
            v = *(const double *)(const void *)(base + f->off);
            break;
        case TS_FK_BOOL:
            v = *(const bool *)(const void *)(base + f->off) ? 1.0 : 0.0;
            break;
        case TS_FK_CUSTOM:
        default:
            continue;
        }
        ck_assert_msg(v == f->def, "%s: ts_run_defaults() stores %.17g, DEF is %.17g", f->name, v,
                      f->def);
    }
    ck_assert_uint_eq(r.lora_targets, (unsigned)ts_fields[TS_FI_LORA_TARGETS].def);
    ck_assert_uint_eq(r.lora_save, (unsigned)ts_fields[TS_FI_LORA_SAVE].def);
    ck_assert_double_eq(r.model.params, ts_fields[TS_FI_PARAMS].def);
    {
        ts_search_cfg c;

        ts_search_defaults(&c);
        ck_assert_double_eq((double)c.objective, ts_fields[TS_FI_OBJECTIVE].def);
        ck_assert_double_eq((double)c.limit, ts_fields[TS_FI_LIMIT].def);
    }
}
END_TEST

/* The .def text of every entry against the code's default. */
START_TEST(test_def_text)
{
    ts_run r;
    size_t i;

    ts_run_defaults(&r);
    for (i = 0; i < TS_FI_COUNT; i++) {
        const char *name = ts_fields[i].name;
        const char *t = ts_field_docs[i].def;
        double d = effective(i, false);
        char w[64], text[64];
        const char *rest, *e, *code = default_text(i, &r, text, sizeof text);

        ck_assert_msg(t != NULL && t[0] != '\0', "%s: no .def text", name);
        if (code != NULL) {
            /* a name: "none" for no preset, else the id itself */
            ck_assert_msg(strcmp(t, code) == 0 || (code[0] == '\0' && strcmp(t, "none") == 0),
                          "%s: .def '%s', the code's default is '%s'", name, t, code);
            continue;
        }
        rest = word(t, w, sizeof w);
        (void)rest;
        if (strcmp(w, "null") == 0) {
            ck_assert_msg(d == 0, "%s: .def says null, the default is %.17g", name, d);
            continue;
        }
        if (strcmp(w, "required") == 0)
            continue; /* solve: no default */
        if (isdigit((unsigned char)w[0]) || strcmp(w, "true") == 0 || strcmp(w, "false") == 0 ||
            is_enum_value(i, w)) {
            states(i, w, d, ".def");
            continue;
        }
        /* Computed from something else: what it is computed from, and
         * the value when there is nothing to compute from ("else"). */
        if ((e = strstr(t, "else ")) != NULL) {
            word(e + 5, w, sizeof w);
            if (isdigit((unsigned char)w[0]) || strcmp(w, "true") == 0 || strcmp(w, "false") == 0 ||
                is_enum_value(i, w)) {
                /* "else 20 * params" is a formula, not a value */
                const char *after = e + 5 + strlen(w);

                while (*after == ' ')
                    after++;
                if (*after != '*' && *after != 'x')
                    states(i, w, ts_fields[i].def, ".def (else)");
            }
        }
        ck_assert_msg(strspn(t, "0123456789. ") != strlen(t),
                      "%s: a computed default written as a bare number", name);
    }
}
END_TEST

/* "Default N" in the docs (and "search default N" in search_doc). */
static void doc_defaults(size_t i, const char *text, bool search)
{
    const char *p = text;

    if (text == NULL)
        return;
    while ((p = strstr(p, "efault ")) != NULL) {
        char w[64];

        word(p + 7, w, sizeof w);
        p += 7;
        if (!isdigit((unsigned char)w[0]))
            continue;
        if (w[strlen(w) - 1] == '.')
            w[strlen(w) - 1] = '\0'; /* end of the sentence */
        states(i, w, effective(i, search), search ? ".search_doc" : ".doc");
    }
}

START_TEST(test_doc_text)
{
    size_t i;

    for (i = 0; i < TS_FI_COUNT; i++) {
        doc_defaults(i, ts_field_docs[i].doc, false);
        doc_defaults(i, ts_field_docs[i].search_doc, true);
    }
}
END_TEST

/* The default global batch's text names the core's rule: about
 * TS_BATCH_TOKENS tokens ("4M" for 2^22), a bubble of at most 1 /
 * TS_BATCH_BUBBLE_DIV, 0 meaning "derived". */
START_TEST(test_global_batch_formula)
{
    char tokens[16], bubble[16];
    const char *def = ts_field_docs[TS_FI_GLOBAL_BATCH].def;
    const char *doc = ts_field_docs[TS_FI_GLOBAL_BATCH].doc;

    snprintf(tokens, sizeof tokens, "%.0fM tokens", round((double)TS_BATCH_TOKENS / 1e6));
    snprintf(bubble, sizeof bubble, "1/%d", TS_BATCH_BUBBLE_DIV);
    ck_assert_double_eq(ts_fields[TS_FI_GLOBAL_BATCH].def, 0);
    ck_assert_msg(strncmp(def, "0 (", 3) == 0, ".def '%s'", def);
    ck_assert_msg(strstr(def, tokens) != NULL && strstr(def, bubble) != NULL,
                  "global_batch .def '%s' lacks '%s' or '%s'", def, tokens, bubble);
    ck_assert_msg(strstr(doc, tokens) != NULL && strstr(doc, bubble) != NULL,
                  "global_batch .doc '%s' lacks '%s' or '%s'", doc, tokens, bubble);
    ck_assert_msg(strstr(doc, "dp * micro_batch") != NULL, "global_batch .doc: %s", doc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("defaults");
    TCase *tc = tcase_create("registry");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_def_column_is_what_the_core_stores);
    tcase_add_test(tc, test_def_text);
    tcase_add_test(tc, test_doc_text);
    tcase_add_test(tc, test_global_batch_formula);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
