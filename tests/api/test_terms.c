/*
 * test_terms.c - the output-terms table (api/ts_terms.c) against real
 * answers of ts_api_handle().
 *
 * Walks whole answers of /v1/plan (pp 2, so stages and a pipeline bubble),
 * /v1/fit, /v1/search, /v1/budget, /v1/presets and /v1/gpus and checks both ways:
 *  - every figure with a human text in them is a row of the table: a term
 *    object {value, human, formula, assumptions}, a key of an object's
 *    "human" map, or a "<key>_human" / phase "human" text beside a number;
 *    its text is the table's kind and unit applied to its value;
 *  - every row of the table appears in those answers (no dead rows), every
 *    "human" map has all of its object's rows, and nothing else;
 *  - the table itself: keys unique per object, labels and docs present
 *    (CLI labels fit the CLI's 32 columns), formulas on numbers only.
 */
#include <check.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api.h"
#include "ts_terms.h"

#define PATH_LEN 128

static json_t *answer(const char *method, const char *path, const char *body)
{
    ts_api_response r;
    json_error_t je;
    json_t *j;

    ck_assert_int_eq(ts_api_handle(method, path, body != NULL ? "application/json" : NULL, body,
                                   body != NULL ? strlen(body) : 0, &r),
                     0);
    ck_assert_msg(r.status == 200, "%s %s: %u %s", method, path, r.status, r.body);
    j = json_loadb(r.body, r.body_len, 0, &je);
    ck_assert_msg(j != NULL, "%s %s: %s", method, path, je.text);
    ts_api_response_free(&r);
    return j;
}

static bool is_term_object(const json_t *v)
{
    return json_is_object(v) && json_object_size(v) == 4 &&
           json_is_number(json_object_get(v, "value")) &&
           json_is_string(json_object_get(v, "human")) &&
           json_is_string(json_object_get(v, "formula")) &&
           json_is_string(json_object_get(v, "assumptions"));
}

/* What a walk found: the rows it saw, and its first complaint. */
typedef struct walk_ctx {
    bool seen[TS_T_COUNT];
    char err[512];
} walk_ctx;

/* Record the first complaint; true when cond holds. */
static bool ok(walk_ctx *c, bool cond, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static bool ok(walk_ctx *c, bool cond, const char *fmt, ...)
{
    if (!cond && c->err[0] == '\0') {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(c->err, sizeof c->err, fmt, ap);
        va_end(ap);
    }
    return cond;
}

static void expect_text(walk_ctx *c, const ts_term_def *d, const char *where, double v,
                        const char *got)
{
    char want[TS_FMT_HUMAN_LEN];

    ts_term_human(want, sizeof want, (ts_term_id)(d - ts_terms), v);
    if (ok(c, strcmp(got, want) == 0, "%s: human \"%s\", the table's %s/%s of %.17g is \"%s\"",
           where, got, ts_fmt_kind_name(d->fmt), d->unit, v, want))
        c->seen[d - ts_terms] = true;
}

/* The row whose text sits in member hkey of an object of obj. */
static const ts_term_def *sibling_row(ts_term_obj obj, const char *hkey)
{
    for (size_t i = 0; i < TS_T_COUNT; i++)
        if (ts_terms[i].obj == obj && ts_terms[i].shape == TS_TERM_SIBLING &&
            strcmp(ts_terms[i].human_key, hkey) == 0)
            return &ts_terms[i];
    return NULL;
}

static void walk(walk_ctx *c, const json_t *o, const char *path);

static bool is_human_key(const char *key)
{
    size_t n = strlen(key);

    return strcmp(key, "human") == 0 || (n > 6 && strcmp(key + n - 6, "_human") == 0);
}

static void walk_member(walk_ctx *c, const json_t *o, ts_term_obj obj, const char *path,
                        const char *key, const json_t *v)
{
    char where[PATH_LEN * 2], sub[PATH_LEN];
    const ts_term_def *d;

    snprintf(where, sizeof where, "%s%s%s", path, *path ? "." : "", key);
    if (is_term_object(v)) {
        d = obj < TS_TO_COUNT ? ts_term_find(obj, key) : NULL;
        if (ok(c, d != NULL, "%s is a term the table does not have", where) &&
            ok(c, d->shape == TS_TERM_OBJECT, "%s: a term, the table says a number", where))
            expect_text(c, d, where, json_number_value(json_object_get(v, "value")),
                        json_string_value(json_object_get(v, "human")));
        return;
    }
    if (strcmp(key, "human") == 0 && json_is_object(v)) {
        const char *k;
        const json_t *t;

        if (!ok(c, obj < TS_TO_COUNT && ts_term_objs[obj].schema != NULL,
                "%s: a human map on an object the table has none for", where))
            return;
        json_object_foreach((json_t *)v, k, t)
        {
            const json_t *num = json_object_get(o, k);

            d = ts_term_find(obj, k);
            if (ok(c, d != NULL && d->shape == TS_TERM_MAP, "%s.%s: not a map row of %s", where, k,
                   ts_term_objs[obj].path) &&
                ok(c, json_is_string(t) && json_is_number(num), "%s.%s: text or number missing",
                   where, k))
                expect_text(c, d, where, json_number_value(num), json_string_value(t));
        }
        /* complete: every map row of the object has its text */
        for (size_t i = 0; i < TS_T_COUNT; i++)
            if (ts_terms[i].obj == obj && ts_terms[i].shape == TS_TERM_MAP)
                ok(c, json_is_string(json_object_get(v, ts_terms[i].key)), "%s lacks %s", where,
                   ts_terms[i].key);
        return;
    }
    if (json_is_string(v) && is_human_key(key)) {
        d = obj < TS_TO_COUNT ? sibling_row(obj, key) : NULL;
        if (ok(c, d != NULL, "%s: a human text the table does not explain", where) &&
            ok(c, json_is_number(json_object_get(o, d->key)), "%s: no %s beside it", where, d->key))
            expect_text(c, d, where, json_number_value(json_object_get(o, d->key)),
                        json_string_value(v));
        return;
    }
    if (json_is_object(v)) {
        snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
        walk(c, v, sub);
    } else if (json_is_array(v)) {
        size_t i;
        const json_t *e;

        snprintf(sub, sizeof sub, "%s%s%s[]", path, *path ? "." : "", key);
        json_array_foreach((json_t *)v, i, e) if (json_is_object(e)) walk(c, e, sub);
    }
}

static void walk(walk_ctx *c, const json_t *o, const char *path)
{
    ts_term_obj obj = ts_term_obj_find(path);
    const char *key;
    const json_t *v;

    json_object_foreach((json_t *)o, key, v) walk_member(c, o, obj, path, key, v);
    if (obj == TS_TO_COUNT)
        return;
    /* every row of the object is there, in its shape */
    for (size_t i = 0; i < TS_T_COUNT; i++) {
        const ts_term_def *d = &ts_terms[i];

        if (d->obj != obj)
            continue;
        if (d->shape == TS_TERM_MAP)
            ok(c, json_is_object(json_object_get(o, "human")), "%s has no human map", path);
        else if (d->shape == TS_TERM_SIBLING)
            ok(c, json_is_string(json_object_get(o, d->human_key)), "%s has no %s", path,
               d->human_key);
        else
            ok(c, is_term_object(json_object_get(o, d->key)), "%s.%s is not a term", path, d->key);
    }
}

START_TEST(every_emitted_term_is_in_the_table)
{
    static const struct {
        const char *method, *path, *body;
    } calls[] = {
        { "POST", "/v1/plan",
          "{\"model\":\"llama3-8b\",\"gpus\":16,\"pp\":2,\"zero\":1,"
          "\"gpu_hour_usd\":2.5,\"offload_optimizer\":true}" },
        { "POST", "/v1/fit", "{\"model\":\"llama3-8b\",\"gpus\":8,\"solve\":\"micro_batch\"}" },
        { "POST", "/v1/search", "{\"model\":\"llama3-8b\",\"gpus\":8,\"limit\":3}" },
        { "POST", "/v1/budget", "{\"gpus\":64,\"budget_days\":7,\"gpu_hour_usd\":2.5}" },
        { "GET", "/v1/presets", NULL },
        { "GET", "/v1/gpus", NULL },
    };
    static walk_ctx c; /* 1 KiB; static only to keep the stack small */

    memset(&c, 0, sizeof c);
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        json_t *a = answer(calls[i].method, calls[i].path, calls[i].body);

        walk(&c, a, "");
        json_decref(a);
        ck_assert_msg(c.err[0] == '\0', "%s %s: %s", calls[i].method, calls[i].path, c.err);
    }
    for (size_t i = 0; i < TS_T_COUNT; i++)
        ck_assert_msg(c.seen[i], "row %s.%s of the table is in no answer",
                      ts_term_objs[ts_terms[i].obj].path, ts_terms[i].key);
}
END_TEST

/* The walk refuses answers that drift from the table: a term renamed, a
 * wrong text, a map key the table lacks, an unexplained text, a map
 * missing a row (so the test above can fail). */
START_TEST(the_walk_catches_drift)
{
    static const char *const bad[] = {
        "{\"memory\":{\"weightz\":{\"value\":1,\"human\":\"1 "
        "B\",\"formula\":\"\",\"assumptions\":\"\"}}}",
        "{\"memory\":{\"weights\":{\"value\":1024,\"human\":\"1 "
        "KiB\",\"formula\":\"\",\"assumptions\":\"\"}}}",
        "{\"gpus\":[{\"hbm_bytes\":1,\"extra\":2,\"human\":{\"extra\":\"2\"}}]}",
        "{\"compute\":{\"foo_human\":\"1 s\",\"foo\":1}}",
        "{\"params\":{\"total\":1e9,\"active\":1e9,\"human\":{\"total\":\"1.00B\"}}}",
    };

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_error_t je;
        json_t *j = json_loads(bad[i], 0, &je);
        static walk_ctx c;

        ck_assert_msg(j != NULL, "%s", je.text);
        memset(&c, 0, sizeof c);
        walk(&c, j, "");
        ck_assert_msg(c.err[0] != '\0', "the walk accepted %s", bad[i]);
        json_decref(j);
    }
}
END_TEST

START_TEST(table_rows_are_well_formed)
{
    for (size_t i = 0; i < TS_T_COUNT; i++) {
        const ts_term_def *d = &ts_terms[i];
        const char *where = d->key != NULL ? d->key : "(no key)";

        ck_assert_msg(d->key != NULL && d->label != NULL && d->doc != NULL && d->unit != NULL,
                      "row %zu (%s) is not filled in", i, where);
        ck_assert_msg(d->obj < TS_TO_COUNT && d->fmt < TS_FMT_KIND_COUNT, "%s: obj or kind", where);
        ck_assert_msg(d->doc[strlen(d->doc) - 1] == '.', "%s: the doc is a sentence", where);
        ck_assert_msg((d->shape == TS_TERM_OBJECT) == (d->formula == NULL),
                      "%s: numbers carry a formula, terms take the answer's", where);
        ck_assert_msg((d->shape == TS_TERM_SIBLING) == (d->human_key != NULL), "%s: human_key",
                      where);
        ck_assert_msg(d->shape != TS_TERM_MAP || ts_term_objs[d->obj].schema != NULL,
                      "%s: a map row on an object without a map", where);
        ck_assert_msg(d->cli == TS_TERM_CLI_NO || strlen(d->label) <= 32,
                      "%s: CLI label over 32 columns", where);
        ck_assert_msg(ts_term_find(d->obj, d->key) == d, "%s: key twice in %s", where,
                      ts_term_objs[d->obj].path);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("terms");
    TCase *tc = tcase_create("terms");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, every_emitted_term_is_in_the_table);
    tcase_add_test(tc, the_walk_catches_drift);
    tcase_add_test(tc, table_rows_are_well_formed);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
