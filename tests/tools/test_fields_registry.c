/*
 * test_fields_registry.c - the field registry covers the run, once.
 *
 * Every input member of ts_run (core/trainsize.h; those of ts_model and
 * ts_ckpt_cfg one by one) is bound by exactly one entry of
 * core/ts_fields.def, and every entry binds a member that exists.  With
 * the TS_FI_* indices and the runtime table ts_fields[] expanded from
 * those rows, and the parser, the echo, the docs, the defaults and the
 * range checks all loops over that table, adding an input is one row, its
 * ts_run member and the formula that uses it (docs/contributing.md,
 * "Adding an input"); this is the check that no member is left out of the
 * registry or bound twice.  The struct's text (and each row's MEMBER,
 * ts_fields[].member) is read as written, so the test needs no list of
 * members of its own.
 * usage: test_fields_registry CORE/trainsize.h
 */
#include <check.h>

#include "th_file.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_fields_doc.h"

/* A row that sets its member: every plain kind, and the custom ones
 * but those that override a figure of the GPU (member gpu.X: hbm_gb,
 * hbm_gib, peak_tflops); a route's extra has no member. */
static bool owns(const ts_field *f)
{
    return f->member != NULL && strncmp(f->member, "gpu.", 4) != 0;
}

#define MEMBERS_MAX 256
#define NAME_LEN    64

typedef struct member_list {
    size_t n;
    char name[MEMBERS_MAX][NAME_LEN];
    char type[MEMBERS_MAX][NAME_LEN];
} member_list;

static char *header;

/* The members of "typedef struct TAG { ... } TAG;": declarations split at
 * ';', comments dropped, "int64_t tp, pp;" and "char id[24];" read as C
 * writes them.  Members of a struct type are kept with that type. */
static void struct_members(const char *tag, member_list *out)
{
    char open[96], close[96];
    const char *a, *b;
    char *body, *p, *decl;
    size_t len;

    snprintf(open, sizeof open, "typedef struct %s {", tag);
    snprintf(close, sizeof close, "} %s;", tag);
    a = strstr(header, open);
    ck_assert_msg(a != NULL, "trainsize.h has no '%s'", open);
    a += strlen(open);
    b = strstr(a, close);
    ck_assert_msg(b != NULL, "trainsize.h has no '%s'", close);
    len = (size_t)(b - a);
    body = malloc(len + 1);
    ck_assert(body != NULL);
    /* Comments become spaces. */
    for (size_t i = 0, o = 0; i <= len; i++) {
        if (i + 1 < len && a[i] == '/' && a[i + 1] == '*') {
            const char *e = strstr(a + i + 2, "*/");
            i = (size_t)(e - a) + 1;
            body[o++] = ' ';
            continue;
        }
        body[o++] = i < len ? a[i] : '\0';
    }
    out->n = 0;
    for (decl = strtok_r(body, ";", &p); decl != NULL; decl = strtok_r(NULL, ";", &p)) {
        char type[NAME_LEN] = "";
        char *tok;
        size_t k = 0;

        while (isspace((unsigned char)*decl))
            decl++;
        if (*decl == '\0')
            continue;
        /* The last identifier before each ',' or the end (an array's
         * brackets removed) is a member; what precedes the first one is
         * the type. */
        for (tok = decl; tok != NULL;) {
            char *end = strchr(tok, ',');
            char piece[256];
            size_t pl = end != NULL ? (size_t)(end - tok) : strlen(tok);
            char *br, *e, *s;

            ck_assert(pl < sizeof piece);
            memcpy(piece, tok, pl);
            piece[pl] = '\0';
            if ((br = strchr(piece, '[')) != NULL)
                *br = '\0';
            e = piece + strlen(piece);
            while (e > piece && isspace((unsigned char)e[-1]))
                *--e = '\0';
            s = e;
            while (s > piece && (isalnum((unsigned char)s[-1]) || s[-1] == '_'))
                s--;
            ck_assert_msg(*s != '\0', "%s: cannot read the declaration '%s'", tag, decl);
            if (k == 0) {
                char *t = piece, *te = s;

                while (isspace((unsigned char)*t))
                    t++;
                while (te > t && isspace((unsigned char)te[-1]))
                    te--;
                snprintf(type, sizeof type, "%.*s", (int)(te - t), t);
            }
            ck_assert(out->n < MEMBERS_MAX);
            snprintf(out->name[out->n], NAME_LEN, "%s", s);
            snprintf(out->type[out->n], NAME_LEN, "%s", type);
            out->n++;
            k++;
            tok = end != NULL ? end + 1 : NULL;
        }
    }
    free(body);
}

/* ts_run's input members: ts_model's and ts_ckpt_cfg's as model.X, ckpt.X. */
static void run_members(member_list *out)
{
    member_list run, sub;

    struct_members("ts_run", &run);
    out->n = 0;
    for (size_t i = 0; i < run.n; i++) {
        const char *nested = strcmp(run.type[i], "ts_model") == 0      ? "ts_model"
                             : strcmp(run.type[i], "ts_ckpt_cfg") == 0 ? "ts_ckpt_cfg"
                                                                       : NULL;

        if (nested == NULL) {
            snprintf(out->name[out->n], NAME_LEN, "%s", run.name[i]);
            snprintf(out->type[out->n++], NAME_LEN, "%s", run.type[i]);
            continue;
        }
        struct_members(nested, &sub);
        for (size_t j = 0; j < sub.n; j++) {
            ck_assert(out->n < MEMBERS_MAX);
            snprintf(out->name[out->n], NAME_LEN, "%s.%s", run.name[i], sub.name[j]);
            snprintf(out->type[out->n++], NAME_LEN, "%s", sub.type[j]);
        }
    }
}

START_TEST(every_member_has_one_entry)
{
    static member_list m;

    run_members(&m);
    ck_assert_msg(m.n > 50, "read only %zu ts_run members from trainsize.h", m.n);
    for (size_t i = 0; i < m.n; i++) {
        size_t owners = 0;

        for (size_t e = 0; e < TS_FI_COUNT; e++)
            if (owns(&ts_fields[e]) && strcmp(ts_fields[e].member, m.name[i]) == 0)
                owners++;
        ck_assert_msg(owners == 1,
                      "ts_run member '%s' (%s) is bound by %zu entries of core/ts_fields.def, "
                      "not 1: every input member has exactly one entry",
                      m.name[i], m.type[i], owners);
    }
}
END_TEST

START_TEST(every_entry_binds_a_member)
{
    static member_list m;

    run_members(&m);
    for (size_t e = 0; e < TS_FI_COUNT; e++) {
        const ts_field *f = &ts_fields[e];
        bool found = false;

        if (owns(f)) {
            for (size_t i = 0; i < m.n && !found; i++)
                found = strcmp(m.name[i], f->member) == 0;
            ck_assert_msg(found, "entry '%s' binds '%s', which is not a ts_run member", f->name,
                          f->member);
        } else if (f->member != NULL) {
            ck_assert_msg(f->kind == TS_FK_CUSTOM,
                          "entry '%s' overrides the GPU's %s: only a CUSTOM row can", f->name,
                          f->member);
        } else {
            /* A route's extra: no run member, and only on its route. */
            ck_assert_msg(f->kind == TS_FK_CUSTOM && f->off == 0,
                          "entry '%s' is a route's: no KIND or MEMBER", f->name);
            ck_assert_msg((f->flags & (TS_FF_FIT | TS_FF_SEARCH | TS_FF_BUDGET)) != 0,
                          "entry '%s' binds no run member but is not fit-, search- or budget-only",
                          f->name);
        }
    }
}
END_TEST

/* The KIND, TYPE and VALUES columns agree: a plain kind is the JSON type
 * it writes, an enum has names and their enumerators, nothing else has. */
START_TEST(kind_type_and_values_agree)
{
    for (size_t e = 0; e < TS_FI_COUNT; e++) {
        const ts_field *f = &ts_fields[e];
        bool is_enum = f->values != NULL;
        int want = -1;

        switch (f->kind) {
        case TS_FK_INT64:
        case TS_FK_INT:
            want = TS_FT_INTEGER;
            break;
        case TS_FK_NUM:
        case TS_FK_NUM_OPT:
            want = TS_FT_NUMBER;
            break;
        case TS_FK_BOOL:
            want = TS_FT_BOOLEAN;
            break;
        case TS_FK_ENUM:
            want = TS_FT_STRING;
            break;
        case TS_FK_CUSTOM:
            break;
        }
        ck_assert_msg(want < 0 || (int)f->type == want, "entry '%s': KIND and TYPE disagree",
                      f->name);
        ck_assert_msg((f->kind == TS_FK_ENUM) <= is_enum, "entry '%s': an ENUM without VALUES",
                      f->name);
        ck_assert_msg(!is_enum ||
                          (f->type == TS_FT_STRING && f->ints != NULL && f->values[0] != NULL),
                      "entry '%s': VALUES on a %d member", f->name, (int)f->type);
        ck_assert_msg((f->kind == TS_FK_NUM_OPT) <= f->nullable,
                      "entry '%s': NUM_OPT takes null (TS_FF_NULL)", f->name);
        ck_assert_uint_eq(f->nlen, strlen(f->name));
    }
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s = suite_create("fields-registry");
    TCase *tc = tcase_create("registry");
    SRunner *sr;
    int failed;

    if (argc != 2 || (header = th_read_file(argv[1], NULL)) == NULL) {
        fprintf(stderr, "usage: test_fields_registry CORE/trainsize.h\n");
        return EXIT_FAILURE;
    }
    tcase_add_test(tc, every_member_has_one_entry);
    tcase_add_test(tc, every_entry_binds_a_member);
    tcase_add_test(tc, kind_type_and_values_agree);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    free(header);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
