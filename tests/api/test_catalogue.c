/*
 * test_catalogue.c - the model catalogue (models/, api/ts_catalogue.c).
 *
 * For EVERY entry, the parameter count the API computes for {"model": id}
 * is held to the count its publisher states (params_source in the file):
 * equal when that count is exact, else within half a unit of the last
 * digit of the rounded figure ("7.61B": 7.605e9 to 7.615e9), published
 * plus params_adjust where the file explains one.  Every entry that
 * misses is listed before the test fails.  The same config sent as
 * hf_config must count the same.  Then: the built table holds exactly the
 * files in models/ (a file added without a rebuild, or edited since, is
 * caught), every name resolves to its own entry, and names as people type
 * them work.
 *
 * argv[1]: the models/ directory of the source tree.
 */
#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "th_json.h"
#include "trainsize.h"
#include "ts_api.h"
#include "ts_catalogue.h"

static const char *models_dir = "models";

static json_t *post(const char *path, const char *body, ts_api_response *resp)
{
    ck_assert_int_eq(ts_api_handle("POST", path, "application/json", body, strlen(body), resp), 0);
    ck_assert_ptr_nonnull(resp->body);
    return th_json_contract(resp->status, resp->content_type, resp->body, resp->body_len);
}

/* params.total of POST /v1/import with body; -1 when not a 200. */
static double import_total(const char *body, json_t **answer)
{
    ts_api_response r;
    json_t *j = post("/v1/import", body, &r);
    double total = -1;

    if (r.status == 200)
        total = th_json_num(j, "params.total");
    else
        fprintf(stderr, "  %u %.300s\n", r.status, r.body);
    ts_api_response_free(&r);
    if (answer != NULL)
        *answer = j;
    else
        json_decref(j);
    return total;
}

/* Whether computed meets e's published figure; the tolerance in text. */
static bool meets_published(const ts_catalogue_entry *e, double computed, char *tol, size_t n)
{
    double want = e->params_published + e->params_adjust;

    if (e->params_exact) {
        snprintf(tol, n, "exact%s", e->params_adjust != 0 ? ", adjusted" : "");
        return computed == want;
    }
    snprintf(tol, n, "\"%s\" +- %.0f", e->params_published_as, e->params_half_unit);
    return fabs(computed - want) <= e->params_half_unit;
}

START_TEST(test_every_count)
{
    char body[8192], tol[96];
    size_t i, bad = 0, exact = 0;

    ck_assert_uint_ge(ts_catalogue_count(), 60);
    for (i = 0; i < ts_catalogue_count(); i++) {
        const ts_catalogue_entry *e = ts_catalogue_at(i);
        const ts_preset *shadow = ts_catalogue_shadow(e);
        json_t *ans = NULL;
        double by_model, by_config;
        bool ok;

        snprintf(body, sizeof body, "{\"model\":\"%s\"}", e->id);
        by_model = import_total(body, &ans);
        ck_assert_int_lt(snprintf(body, sizeof body, "{\"hf_config\":%s}", e->config),
                         (int)sizeof body);
        by_config = import_total(body, NULL);
        ok = meets_published(e, by_model, tol, sizeof tol) && by_config == by_model;
        printf("%-44s %15.0f  published %15.0f%+.0f (%s)%s%s%s\n", e->id, by_model,
               e->params_published, e->params_adjust, tol, shadow != NULL ? " [preset " : "",
               shadow != NULL ? shadow->id : "", shadow != NULL ? "]" : "");
        if (!ok) {
            fprintf(stderr, "MISS %s: model %.0f, hf_config %.0f, published %.0f%+.0f (%s)\n",
                    e->id, by_model, by_config, e->params_published, e->params_adjust, tol);
            bad++;
        }
        if (e->params_exact)
            exact++;
        /* The answer names the entry and where each value came from. */
        if (by_model > 0) {
            ck_assert_str_eq(th_json_str(ans, "inputs.model"), shadow != NULL ? shadow->id : e->id);
            ck_assert_str_eq(th_json_str(ans, "inputs_source.layers"),
                             shadow != NULL ? "preset" : "catalogue");
        }
        json_decref(ans);
    }
    printf("%zu models, %zu with an exact published count\n", ts_catalogue_count(), exact);
    ck_assert_msg(bad == 0, "%zu catalogue models miss their published count (MISS lines)", bad);
}
END_TEST

/* Dense and MoE both, and the families the issue lists. */
START_TEST(test_coverage)
{
    static const char *const families[] = { "meta-llama/Llama-2-",
                                            "meta-llama/Meta-Llama-3-",
                                            "meta-llama/Llama-3.1-",
                                            "meta-llama/Llama-3.2-",
                                            "meta-llama/Llama-3.3-",
                                            "Qwen/Qwen2-",
                                            "Qwen/Qwen2.5-",
                                            "Qwen/Qwen3-",
                                            "mistralai/Mistral-",
                                            "mistralai/Mixtral-",
                                            "deepseek-ai/DeepSeek-V2",
                                            "deepseek-ai/DeepSeek-V2-Lite",
                                            "deepseek-ai/DeepSeek-V3",
                                            "google/gemma-2-",
                                            "google/gemma-3-",
                                            "microsoft/Phi-3-",
                                            "microsoft/Phi-3.5-",
                                            "microsoft/phi-4",
                                            "openai-community/gpt2",
                                            "EleutherAI/pythia-",
                                            "tiiuae/falcon-",
                                            "bigscience/bloom",
                                            "ibm-granite/granite-",
                                            "allenai/OLMo-2-",
                                            "Qwen/Qwen1.5-MoE-",
                                            "Qwen/Qwen2-57B-A14B",
                                            "microsoft/Phi-3.5-MoE",
                                            "bigcode/starcoder2-",
                                            NULL };
    ts_api_req *req = malloc(sizeof *req);
    ts_api_err err;
    size_t i, k, moe = 0;

    ck_assert_ptr_nonnull(req);
    for (i = 0; i < ts_catalogue_count(); i++) {
        ck_assert_int_eq(ts_catalogue_run(ts_catalogue_at(i), req, &err), 0);
        if (req->run.model.experts > 1)
            moe++;
    }
    free(req);
    ck_assert_uint_ge(moe, 12);
    ck_assert_uint_ge(ts_catalogue_count() - moe, 40);
    for (k = 0; families[k] != NULL; k++) {
        bool seen = false;

        for (i = 0; i < ts_catalogue_count() && !seen; i++)
            seen = strncmp(ts_catalogue_at(i)->id, families[k], strlen(families[k])) == 0;
        ck_assert_msg(seen, "no %s model in the catalogue", families[k]);
    }
}
END_TEST

static const ts_catalogue_entry *by_file(const char *file)
{
    size_t i;

    for (i = 0; i < ts_catalogue_count(); i++)
        if (strcmp(ts_catalogue_at(i)->file + strlen("models/"), file) == 0)
            return ts_catalogue_at(i);
    return NULL;
}

/* The built table is the files: none missing, none extra, none edited
 * since the build (the build regenerates it; this catches a stale one). */
START_TEST(test_table_is_the_files)
{
    DIR *d = opendir(models_dir);
    struct dirent *de;
    size_t files = 0;

    ck_assert_msg(d != NULL, "cannot open %s", models_dir);
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name), k;
        const ts_catalogue_entry *e;
        char path[4096];
        json_error_t je;
        json_t *f, *cfg, *al;

        if (n <= 5 || strcmp(de->d_name + n - 5, ".json") != 0)
            continue;
        files++;
        e = by_file(de->d_name);
        ck_assert_msg(e != NULL,
                      "models/%s is not in the built catalogue: rebuild "
                      "(ninja -C BUILDDIR)",
                      de->d_name);
        snprintf(path, sizeof path, "%s/%s", models_dir, de->d_name);
        f = json_load_file(path, 0, &je);
        ck_assert_msg(f != NULL, "%s: %s", path, je.text);
        cfg = json_loads(e->config, 0, &je);
        ck_assert_ptr_nonnull(cfg);
        ck_assert_msg(json_equal(cfg, json_object_get(f, "config")),
                      "models/%s changed since the build: rebuild", de->d_name);
        ck_assert_str_eq(json_string_value(json_object_get(f, "id")), e->id);
        ck_assert(json_integer_value(json_object_get(f, "params_published")) ==
                  (json_int_t)e->params_published);
        al = json_object_get(f, "aliases");
        for (k = 0; k < json_array_size(al); k++) {
            ck_assert_ptr_nonnull(e->aliases[k]);
            ck_assert_str_eq(json_string_value(json_array_get(al, k)), e->aliases[k]);
        }
        ck_assert_ptr_null(e->aliases[json_array_size(al)]);
        json_decref(cfg);
        json_decref(f);
    }
    closedir(d);
    ck_assert_uint_eq(files, ts_catalogue_count());
}
END_TEST

/* A name means one model: each entry's id and aliases, with or without
 * the organisation, resolve to that entry (or to the preset that
 * answers for it), never to another. */
static void assert_resolves(const char *name, const ts_catalogue_entry *e)
{
    const ts_preset *p, *shadow = ts_catalogue_shadow(e);
    const ts_catalogue_entry *got;
    const char *slash = strchr(name, '/');

    ck_assert_msg(ts_catalogue_resolve(name, &p, &got) == 1, "%s does not resolve", name);
    ck_assert_msg(shadow != NULL ? p == shadow : got == e, "%s (of %s) resolves to %s", name, e->id,
                  p != NULL ? p->id : got->id);
    if (slash != NULL)
        assert_resolves(slash + 1, e);
}

START_TEST(test_names_unique)
{
    size_t i, k;

    for (i = 0; i < ts_catalogue_count(); i++) {
        const ts_catalogue_entry *e = ts_catalogue_at(i);

        assert_resolves(e->id, e);
        for (k = 0; e->aliases[k] != NULL; k++)
            assert_resolves(e->aliases[k], e);
    }
}
END_TEST

/* Names as typed: case, punctuation, no organisation; typos get the
 * closest model (OSA distance, core/ts_name.c). */
START_TEST(test_names_as_typed)
{
    const ts_preset *p;
    const ts_catalogue_entry *e;

    ck_assert_int_eq(ts_catalogue_resolve("qwen2.5-72b", &p, &e), 1);
    ck_assert_str_eq(e->id, "Qwen/Qwen2.5-72B");
    ck_assert_int_eq(ts_catalogue_resolve("QWEN/Qwen2.5-72B-Instruct", &p, &e), 1);
    ck_assert_str_eq(e->id, "Qwen/Qwen2.5-72B");
    ck_assert_int_eq(ts_catalogue_resolve("deepseek_v3", &p, &e), 1);
    ck_assert_str_eq(e->id, "deepseek-ai/DeepSeek-V3");
    /* A preset's checkpoint stays the preset. */
    ck_assert_int_eq(ts_catalogue_resolve("meta-llama/Llama-3.1-8B", &p, &e), 1);
    ck_assert_ptr_null(e);
    ck_assert_str_eq(p->id, "llama3.1-8b");
    ck_assert_int_eq(ts_catalogue_resolve("meta-llama/Llama-9-8B", &p, &e), 0);
    /* The Hub page's address as pasted: the repository it names. */
    ck_assert_int_eq(ts_catalogue_resolve("https://huggingface.co/Qwen/Qwen2.5-72B", &p, &e), 1);
    ck_assert_str_eq(e->id, "Qwen/Qwen2.5-72B");
    ck_assert_int_eq(ts_catalogue_resolve(
                         "HTTPS://www.HuggingFace.co/Qwen/Qwen2.5-72B-Instruct/tree/main", &p, &e),
                     1);
    ck_assert_str_eq(e->id, "Qwen/Qwen2.5-72B");
    ck_assert_int_eq(
        ts_catalogue_resolve("hf.co/meta-llama/Llama-3.1-8B/blob/main/config.json", &p, &e), 1);
    ck_assert_str_eq(p->id, "llama3.1-8b");
    ck_assert_int_eq(ts_catalogue_resolve("https://huggingface.co/", &p, &e), 0);
    /* a repository without an organisation, then a page; a query */
    ck_assert_int_eq(ts_catalogue_resolve("https://huggingface.co/gpt2/tree/main", &p, &e), 1);
    ck_assert_str_eq(e->id, "openai-community/gpt2");
    ck_assert_int_eq(ts_catalogue_resolve(
                         "https://huggingface.co/Qwen/Qwen2.5-72B?library=transformers", &p, &e),
                     1);
    ck_assert_str_eq(e->id, "Qwen/Qwen2.5-72B");
    ck_assert_int_eq(ts_catalogue_resolve(NULL, &p, &e), 0);
    ck_assert_int_eq(ts_catalogue_resolve("https://example.com/Qwen/Qwen2.5-72B", &p, &e), 0);
    /* Another organisation's copy: found by its name, and said so. */
    ck_assert_int_eq(ts_catalogue_resolve("unsloth/Qwen2.5-72B-Instruct", &p, &e),
                     TS_CATALOGUE_OTHER_ORG);
    ck_assert_str_eq(e->id, "Qwen/Qwen2.5-72B");
    ck_assert_int_eq(ts_catalogue_resolve("NousResearch/Llama-2-7b-hf", &p, &e),
                     TS_CATALOGUE_OTHER_ORG);
    ck_assert_str_eq(p->id, "llama2-7b");
    /* A quantised copy whose suffix keeps every shape: found, and said
     * so; AWQ may pad a shape (Qwen2.5-72B-Instruct-AWQ's 29696), so not. */
    ck_assert_int_eq(ts_catalogue_resolve("unsloth/Qwen2.5-72B-Instruct-bnb-4bit", &p, &e),
                     TS_CATALOGUE_QUANT);
    ck_assert_str_eq(e->id, "Qwen/Qwen2.5-72B");
    ck_assert_int_eq(ts_catalogue_resolve("Qwen2.5-72B-Instruct-FP8-Dynamic", &p, &e),
                     TS_CATALOGUE_QUANT);
    ck_assert_int_eq(ts_catalogue_resolve("Qwen/Qwen2.5-72B-Instruct-AWQ", &p, &e), 0);
    ck_assert_int_eq(ts_catalogue_resolve("-bnb-4bit", &p, &e), 0);
    ck_assert_int_eq(ts_catalogue_resolve("bnb-4bit", &p, &e), 0);
    ck_assert_int_eq(ts_catalogue_resolve("a/Qwen/Qwen2.5-72B", &p, &e), 0);
    /* "instrcut": one transposition (distance 1) from an alias. */
    ck_assert_str_eq(ts_catalogue_suggest("Qwen/Qwen2.5-72b-instrcut"), "Qwen/Qwen2.5-72B");
    /* "Qwen3-30B-A3": one letter missing from the id without its org. */
    ck_assert_str_eq(ts_catalogue_suggest("Qwen3-30B-A3"), "Qwen/Qwen3-30B-A3B");
    ck_assert_str_eq(ts_catalogue_suggest("lama3-8b"), "llama3-8b");
    ck_assert_ptr_null(ts_catalogue_suggest("banana-7b"));
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s = suite_create("catalogue");
    TCase *tc = tcase_create("catalogue");
    SRunner *sr;
    int failed;

    if (argc > 1)
        models_dir = argv[1];
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_count);
    tcase_add_test(tc, test_coverage);
    tcase_add_test(tc, test_table_is_the_files);
    tcase_add_test(tc, test_names_unique);
    tcase_add_test(tc, test_names_as_typed);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
