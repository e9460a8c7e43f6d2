/*
 * test_answers.c - the answers' bytes, recorded (issue 23: refactors keep
 * answers byte-identical).
 *
 * Every API case of tests/data/api_cases (the "api" ones) and every row
 * of the validation tables (each tests/validation JSON file: a row's "request"
 * or "config" posted to /v1/plan) goes through ts_api_handle(); the
 * status, length and a 64-bit FNV-1a hash of each answer's body are
 * compared with tests/data/answers.txt.  A refactor must leave the file
 * as it is; a change of the numbers on purpose (an accuracy fix) rewrites
 * it with one command, and the diff shows which answers moved:
 *
 *   ninja -C BUILD regen-answers
 *
 * usage: test_answers TESTS_DATA_DIR VALIDATION_DIR RECORDED [--write]
 */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th_cases.h"
#include "ts_api.h"

#define REGEN "ninja -C BUILD regen-answers (then review: git diff tests/data/answers.txt)"

static const char *data_dir, *val_dir, *recorded;
static int write_mode;
static FILE *out;           /* the lines as they are now */
static const char *current; /* "case:NAME" being run */

/* FNV-1a, 64 bits (Fowler, Noll, Vo): a change detector, not a MAC. */
static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 14695981039346656037u;

    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211u;
    }
    return h;
}

static void record(const char *name, const ts_api_response *r)
{
    fprintf(out, "%016" PRIx64 " %u %zu %s\n", fnv1a(r->body, r->body_len), r->status, r->body_len,
            name);
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);

    ck_assert_ptr_nonnull(d);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* The api transport of test_cases.c that also records what it answered. */
static void api_send(void *ctx, const th_case_req *rq, th_case_resp *o)
{
    ts_api_response r;

    (void)ctx;
    memset(&r, 0, sizeof r);
    ts_api_handle(rq->method, rq->route, rq->content_type, rq->body, rq->body_len, &r);
    ck_assert_ptr_nonnull(r.body);
    record(current, &r);
    o->status = r.status;
    o->content_type = r.content_type != NULL ? dup_n(r.content_type, strlen(r.content_type)) : NULL;
    o->allow = r.allow != NULL ? dup_n(r.allow, strlen(r.allow)) : NULL;
    o->body = dup_n(r.body, r.body_len);
    o->body_len = r.body_len;
    ts_api_response_free(&r);
}

static const th_transport api_transport = { "api", api_send, NULL };

static void run_cases(void)
{
    char dir[2048], name[512];
    json_t *cases;

    snprintf(dir, sizeof dir, "%s/api_cases", data_dir);
    cases = th_cases_load(dir, "api");
    for (size_t i = 0; i < json_array_size(cases); i++) {
        const json_t *c = json_array_get(cases, i);

        snprintf(name, sizeof name, "case:%s", json_string_value(json_object_get(c, "name")));
        current = name;
        th_case_run(c, data_dir, &api_transport);
    }
    json_decref(cases);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every row of one validation table that holds a request, posted to
 * /v1/plan. */
static void run_table(const char *file)
{
    static const char *const arrays[] = { "rows", "fit" };
    char path[2048], name[512];
    json_t *doc;

    snprintf(path, sizeof path, "%s/%s", val_dir, file);
    doc = json_load_file(path, 0, NULL);
    ck_assert_msg(doc != NULL, "cannot read %s", path);
    for (size_t a = 0; a < 2; a++) {
        json_t *rows = json_object_get(doc, arrays[a]);

        for (size_t i = 0; i < json_array_size(rows); i++) {
            json_t *row = json_array_get(rows, i);
            json_t *req = json_object_get(row, "request");
            const char *id = json_string_value(json_object_get(row, "name"));
            ts_api_response r;
            char *body;

            if (req == NULL)
                req = json_object_get(row, "config");
            if (id == NULL)
                id = json_string_value(json_object_get(row, "id"));
            if (!json_is_object(req))
                continue;
            body = json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS);
            ck_assert_ptr_nonnull(body);
            memset(&r, 0, sizeof r);
            ts_api_handle("POST", "/v1/plan", "application/json", body, strlen(body), &r);
            snprintf(name, sizeof name, "validation:%s:%s:%zu:%s", file, arrays[a], i,
                     id != NULL ? id : "?");
            record(name, &r);
            ts_api_response_free(&r);
            free(body);
        }
    }
    json_decref(doc);
}

static void run_tables(void)
{
    DIR *d = opendir(val_dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0;

    ck_assert_msg(d != NULL, "cannot list %s", val_dir);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);

        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
            char **g = realloc(names, (n + 1) * sizeof *names);

            ck_assert_ptr_nonnull(g);
            names = g;
            names[n++] = dup_n(e->d_name, len);
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        run_table(names[i]);
        free(names[i]);
    }
    free(names);
}

static char *slurp(FILE *f, size_t *len)
{
    char *buf = NULL;
    size_t cap = 0, n = 0, got;

    do {
        if (n + 4096 > cap) {
            char *g = realloc(buf, cap = (cap + 4096) * 2);

            ck_assert_ptr_nonnull(g);
            buf = g;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0);
    buf[n] = '\0';
    *len = n;
    return buf;
}

START_TEST(test_answers_as_recorded)
{
    size_t now_len, was_len;
    char *now, *was;
    FILE *f;

    out = tmpfile();
    ck_assert_ptr_nonnull(out);
    run_cases();
    run_tables();
    rewind(out);
    now = slurp(out, &now_len);
    fclose(out);
    if (write_mode) {
        f = fopen(recorded, "wb");
        ck_assert_msg(f != NULL, "cannot write %s", recorded);
        ck_assert_uint_eq(fwrite(now, 1, now_len, f), now_len);
        ck_assert_int_eq(fclose(f), 0);
        fprintf(stderr, "test_answers: wrote %s\n", recorded);
        free(now);
        return;
    }
    f = fopen(recorded, "rb");
    ck_assert_msg(f != NULL, "cannot read %s; record it: " REGEN, recorded);
    was = slurp(f, &was_len);
    fclose(f);
    if (now_len != was_len || memcmp(now, was, now_len) != 0) {
        /* name the first line that differs */
        const char *a = now, *b = was;

        while (*a != '\0' && *a == *b) {
            const char *na = strchr(a, '\n'), *nb = strchr(b, '\n');

            if (na == NULL || nb == NULL || na - a != nb - b || memcmp(a, b, (size_t)(na - a)) != 0)
                break;
            a = na + 1;
            b = nb + 1;
        }
        ck_abort_msg("answers differ from %s, first at\n  now: %.*s\n  was: %.*s\n"
                     "A refactor must not change them.  If the change is meant (numbers "
                     "changed on purpose), rewrite the record: " REGEN,
                     recorded, (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
    }
    free(now);
    free(was);
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s;
    TCase *tc;
    SRunner *sr;
    int failed;

    if (argc < 4) {
        fprintf(stderr, "usage: test_answers TESTS_DATA_DIR VALIDATION_DIR RECORDED [--write]\n");
        return 2;
    }
    data_dir = argv[1];
    val_dir = argv[2];
    recorded = argv[3];
    write_mode = argc > 4 && strcmp(argv[4], "--write") == 0;
    s = suite_create("answers");
    tc = tcase_create("answers");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_answers_as_recorded);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
