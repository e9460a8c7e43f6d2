/*
 * test_real_imports.c - the real-world launch files of
 * tests/data/imports/real (issue 24's done-when): Megatron-LM example
 * scripts in the string and the array style, NeMo launcher YAMLs, Hugging
 * Face Trainer / accelerate DeepSpeed configs with "auto", axolotl YAMLs
 * and config.json files, each our own rewrite of the upstream file its
 * manifest entry names.
 *
 * Every run of manifest.json goes two ways:
 *   1. through the API in process: POST /v1/import (ts_api_handle) with
 *      the file as its member and the run's request members;
 *   2. through the CLI: trainsize --local estimate --json, the file given
 *      with its import option (--megatron-args, --nemo-config, ...) and
 *      the request members with --set;
 * and both must give the status and, for a 200, every expected figure
 * (the publisher's count or a hand count, in the run's "why"); for a 4xx
 * the problem's field and a part of its detail.
 * Environment (tests/cli/meson.build): TRAINSIZE_SRCDIR, TS_CLI.
 */
#include "th_harness.h"
#include "ts_api.h"

#include <check.h>

#include "th_file.h"
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *manifest;
static char dir[1024];
static size_t nruns;
static struct {
    size_t file, run;
} runs[128];

/* The value at a dotted path ("params.total"), or NULL. */
static const json_t *at(const json_t *j, const char *path)
{
    char key[128];

    while (j != NULL && *path != '\0') {
        size_t n = strcspn(path, ".");

        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        j = json_object_get(j, key);
        path += n + (path[n] == '.');
    }
    return j;
}

static bool same(const json_t *got, const json_t *want)
{
    if (got == NULL)
        return false;
    if (json_is_number(got) && json_is_number(want))
        return json_number_value(got) == json_number_value(want);
    return json_equal(got, want);
}

static bool json_member(const char *member)
{
    return strcmp(member, "hf_config") == 0 || strcmp(member, "deepspeed_config") == 0;
}

/* The answer's checks, the same for both ways. */
static void check_answer(const char *how, const char *file, const json_t *run, long status,
                         const json_t *answer, const char *err_text)
{
    long want = (long)json_integer_value(json_object_get(run, "status"));
    const char *k;
    const json_t *v;

    ck_assert_msg(status == want, "%s %s %s: status %ld, want %ld (%s)", how, file,
                  json_dumps(json_object_get(run, "request"), JSON_COMPACT), status, want,
                  err_text != NULL ? err_text : "");
    if (want >= 400) {
        const char *field = json_string_value(json_object_get(run, "field"));
        const char *detail = json_string_value(json_object_get(run, "detail"));

        if (answer != NULL) {
            ck_assert_str_eq(json_string_value(json_object_get(answer, "field")), field);
            ck_assert_msg(strstr(json_string_value(json_object_get(answer, "detail")), detail),
                          "%s %s: detail '%s' lacks '%s'", how, file,
                          json_string_value(json_object_get(answer, "detail")), detail);
        } else {
            ck_assert_msg(err_text != NULL && strstr(err_text, field) != NULL &&
                              strstr(err_text, detail) != NULL,
                          "%s %s: stderr lacks '%s' / '%s': %s", how, file, field, detail,
                          err_text != NULL ? err_text : "");
        }
        return;
    }
    ck_assert_ptr_nonnull(answer);
    json_object_foreach((json_t *)json_object_get(run, "expect"), k, v)
    {
        const json_t *g = at(answer, k);
        char *gs = g != NULL ? json_dumps(g, JSON_ENCODE_ANY) : NULL;

        ck_assert_msg(same(g, v), "%s %s: %s = %s, want %s", how, file, k,
                      gs != NULL ? gs : "(missing)", json_dumps(v, JSON_ENCODE_ANY));
        free(gs);
    }
    if (json_is_string(json_object_get(run, "contains"))) {
        const char *part = json_string_value(json_object_get(run, "contains"));
        const json_t *notes = json_object_get(answer, "import_notes");
        bool found = false;
        size_t i;

        for (i = 0; i < json_array_size(notes) && !found; i++)
            found = strstr(json_string_value(json_array_get(notes, i)), part) != NULL;
        ck_assert_msg(found, "%s %s: no import note contains '%s'", how, file, part);
    }
}

START_TEST(test_run)
{
    const json_t *f = json_array_get(json_object_get(manifest, "files"), runs[_i].file);
    const json_t *run = json_array_get(json_object_get(f, "runs"), runs[_i].run);
    const char *file = json_string_value(json_object_get(f, "file"));
    const char *member = json_string_value(json_object_get(f, "member"));
    char path[2048];
    size_t len;
    char *text;

    snprintf(path, sizeof path, "%s/%s", dir, file);
    text = th_read_file(path, &len);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    /* 1. the API, in process */
    {
        json_t *body = json_deep_copy(json_object_get(run, "request"));
        json_t *doc =
            json_member(member) ? json_loadb(text, len, 0, NULL) : json_stringn(text, len);
        ts_api_response r;
        json_t *a;
        char *b;

        ck_assert_ptr_nonnull(doc);
        json_object_set_new(body, member, doc);
        b = json_dumps(body, JSON_COMPACT);
        ck_assert_int_eq(ts_api_handle("POST", "/v1/import", "application/json", b, strlen(b), &r),
                         0);
        a = json_loadb(r.body, r.body_len, 0, NULL);
        check_answer("api", file, run, (long)r.status, a, r.body);
        json_decref(a);
        ts_api_response_free(&r);
        free(b);
        json_decref(body);
    }
    /* 2. the CLI, in process (--local), the file as its option */
    {
        static const struct {
            const char *member, *opt;
        } opts[] = {
            { "megatron_args", "--megatron-args" }, { "nemo_config", "--nemo-config" },
            { "hf_config", "--hf-config" },         { "deepspeed_config", "--deepspeed" },
            { "axolotl_config", "--axolotl" },      { "llamafactory_config", "--llamafactory" },
        };
        const char *argv[48] = { getenv("TS_CLI"), "--local", "estimate", "--json" };
        char sets[16][256];
        size_t n = 4, k, ns = 0;
        const char *key;
        const json_t *v;
        th_proc p;
        long status;
        json_t *a;

        ck_assert_ptr_nonnull(argv[0]);
        for (k = 0; k < sizeof opts / sizeof opts[0] && strcmp(opts[k].member, member) != 0; k++)
            ;
        ck_assert(k < sizeof opts / sizeof opts[0]);
        argv[n++] = opts[k].opt;
        argv[n++] = path;
        json_object_foreach((json_t *)json_object_get(run, "request"), key, v)
        {
            char *val = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

            ck_assert(ns < 16);
            snprintf(sets[ns], sizeof sets[ns], "%s=%s", key, val);
            free(val);
            argv[n++] = "--set";
            argv[n++] = sets[ns++];
        }
        argv[n] = NULL;
        ck_assert_int_eq(th_exec(argv, NULL, NULL, &p), 0);
        /* exit 0 / 1: an answer (fits or not), 2: a 4xx (its problem on
         * stderr); the want's own 4xx status then stands for it */
        status = p.code != 2 ? 200
                 : json_integer_value(json_object_get(run, "status")) >= 400
                     ? (long)json_integer_value(json_object_get(run, "status"))
                     : 400;
        ck_assert_msg(p.code == 0 || p.code == 1 || p.code == 2, "cli %s: exit %d: %s", file,
                      p.code, p.err);
        a = p.code == 2 ? NULL : json_loads(p.out, 0, NULL);
        check_answer("cli", file, run, status, a, p.err);
        json_decref(a);
        th_proc_free(&p);
    }
    free(text);
}
END_TEST

/* The manifest's own shape: at least 25 files, each with its source, and
 * every file of the directory listed. */
START_TEST(test_manifest)
{
    const json_t *files = json_object_get(manifest, "files");
    size_t i;

    ck_assert_uint_ge(json_array_size(files), 25);
    for (i = 0; i < json_array_size(files); i++) {
        const json_t *f = json_array_get(files, i);

        ck_assert_msg(json_string_length(json_object_get(f, "source")) > 10, "entry %zu: source",
                      i);
        ck_assert_msg(strchr(json_string_value(json_object_get(f, "source")), '@') != NULL,
                      "entry %zu: source without @commit", i);
        ck_assert_uint_ge(json_array_size(json_object_get(f, "runs")), 1);
    }
}
END_TEST

static void load(void)
{
    const char *src = getenv("TRAINSIZE_SRCDIR");
    char path[1100];
    json_error_t je;
    size_t i, k;

    if (src == NULL) {
        fprintf(stderr, "TRAINSIZE_SRCDIR not set\n");
        exit(2);
    }
    snprintf(dir, sizeof dir, "%s/tests/data/imports/real", src);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    manifest = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (manifest == NULL) {
        fprintf(stderr, "%s: %s\n", path, je.text);
        exit(2);
    }
    for (i = 0; i < json_array_size(json_object_get(manifest, "files")); i++) {
        const json_t *f = json_array_get(json_object_get(manifest, "files"), i);

        for (k = 0; k < json_array_size(json_object_get(f, "runs")); k++) {
            if (nruns >= sizeof runs / sizeof runs[0]) {
                fprintf(stderr, "manifest: more than %zu runs\n", sizeof runs / sizeof runs[0]);
                exit(2);
            }
            runs[nruns].file = i;
            runs[nruns].run = k;
            nruns++;
        }
    }
}

int main(void)
{
    Suite *s = suite_create("real-imports");
    TCase *tc = tcase_create("files");
    SRunner *sr;
    int failed;

    load();
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_manifest);
    tcase_add_loop_test(tc, test_run, 0, (int)nruns);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    json_decref(manifest);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
