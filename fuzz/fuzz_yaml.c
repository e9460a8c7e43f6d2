/*
 * fuzz_yaml.c - libFuzzer target for the YAML reader (import/ts_yaml.c) and
 * the axolotl mapping (import/ts_axolotl.c), the LLaMA-Factory one
 * (import/ts_llamafactory.c) and the NeMo one (import/ts_nemo.c) on the
 * same text.
 *
 * Each input is an axolotl_config text:
 *   1. ts_yaml_read() on it when it has no NUL (the importer refuses a
 *      NUL before reading): an object, or NULL with a 4xx whose pointer is
 *      under /axolotl_config (503 only out of memory); an object's numbers
 *      are finite (JSON has no others) and it dumps as JSON;
 *   2. ts_import_axolotl(), ts_import_llamafactory() and ts_import_nemo()
 *      on the bytes as they are: 0, or -1 with such a problem under their
 *      own member; every proposed value is freed (LSan);
 *   3. when the bytes are UTF-8, as the axolotl_config member of a request
 *      over a preset through ts_api_handle() on /v1/memory, with dp 2
 *      (so micro x steps x dp is computed), then as llamafactory_config
 *      the same way (its 16-bit rule runs there), and as nemo_config
 *      alone on /v1/import: fuzz_check.c's invariants.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_check.h"
#include "ts_import.h"
#include "ts_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* libFuzzer's own mutations, and one time in three numbers swapped for
 * edge values (fuzz_check.c): micro_batch_size x gradient_accumulation_steps x dp past its range needs two large values at once. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    size = LLVMFuzzerMutate(data, size, max_size);
    return seed % 3 == 0 ? fz_mutate_numbers(data, size, max_size, seed) : size;
}

static void bad_problem(const char *what, const ts_api_err *err)
{
    fprintf(stderr, "fuzz_yaml: %s: problem %u at '%s': %s\n", what, err->status, err->field,
            err->detail);
    abort();
}

static bool problem_ok_at(const ts_api_err *err, const char *ptr)
{
    return (err->status >= 400 && err->status < 500 &&
            strncmp(err->field, ptr, strlen(ptr)) == 0) ||
           err->status == 503;
}

static bool problem_ok(const ts_api_err *err)
{
    return problem_ok_at(err, "/axolotl_config");
}

/* Every number in v is finite. */
static void check_finite(const json_t *v)
{
    const char *k;
    const json_t *m;
    size_t i;

    if (json_is_real(v) && !isfinite(json_real_value(v)))
        abort();
    if (json_is_object(v))
        json_object_foreach((json_t *)v, k, m) check_finite(m);
    if (json_is_array(v))
        for (i = 0; i < json_array_size(v); i++)
            check_finite(json_array_get(v, i));
}

static void read_direct(const char *text, size_t len)
{
    ts_api_err err;
    json_t *doc;
    char *dump;

    memset(&err, 0, sizeof err);
    doc = ts_yaml_read(text, len, "/axolotl_config", &err);
    if (doc == NULL) {
        if (!problem_ok(&err))
            bad_problem("ts_yaml_read", &err);
        return;
    }
    if (!json_is_object(doc))
        abort();
    check_finite(doc);
    dump = json_dumps(doc, JSON_COMPACT);
    if (dump == NULL)
        abort();
    free(dump);
    json_decref(doc);
}

static void import_direct(const char *text, size_t len)
{
    ts_api_notes notes;
    ts_api_err err;
    ts_import im;

    memset(&notes, 0, sizeof notes);
    memset(&err, 0, sizeof err);
    ts_import_init(&im, &notes);
    if (ts_import_axolotl(&im, text, len, &err) != 0 && !problem_ok(&err))
        bad_problem("ts_import_axolotl", &err);
    ts_import_free(&im);
    /* the same text as a LLaMA-Factory YAML (its defaults, refusals and
     * the 16-bit rule's record) */
    memset(&notes, 0, sizeof notes);
    memset(&err, 0, sizeof err);
    ts_import_init(&im, &notes);
    if (ts_import_llamafactory(&im, text, len, &err) != 0 &&
        !problem_ok_at(&err, "/llamafactory_config"))
        bad_problem("ts_import_llamafactory", &err);
    ts_import_free(&im);
    /* the same text as a NeMo training YAML (ts_nemo.c: its
     * interpolations, resolvers and mapping) */
    memset(&notes, 0, sizeof notes);
    memset(&err, 0, sizeof err);
    ts_import_init(&im, &notes);
    if (ts_import_nemo(&im, text, len, &err) != 0 && !problem_ok_at(&err, "/nemo_config"))
        bad_problem("ts_import_nemo", &err);
    ts_import_free(&im);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    json_t *s, *o;

    if (memchr(text, '\0', size) == NULL)
        read_direct(text, size);
    import_direct(text, size);
    s = json_stringn(text, size); /* NULL unless UTF-8 */
    if (s == NULL)
        return 0;
    /* "o" steals a reference: keep ours, the text is posted twice */
    o = json_pack("{s:s, s:i, s:O}", "model", "llama3-8b", "dp", 2, "axolotl_config", s);
    if (o != NULL) {
        char *body = json_dumps(o, JSON_COMPACT);

        if (body == NULL)
            abort();
        fz_post("/v1/memory", body, strlen(body));
        free(body);
        /* as llamafactory_config over the same preset */
        json_object_del(o, "axolotl_config");
        json_object_set(o, "llamafactory_config", s);
        body = json_dumps(o, JSON_COMPACT);
        if (body == NULL)
            abort();
        fz_post("/v1/memory", body, strlen(body));
        free(body);
        /* and as nemo_config, alone */
        json_object_del(o, "llamafactory_config");
        json_object_del(o, "model");
        json_object_set(o, "nemo_config", s);
        body = json_dumps(o, JSON_COMPACT);
        if (body == NULL)
            abort();
        fz_post("/v1/import", body, strlen(body));
        free(body);
        json_decref(o);
    }
    json_decref(s);
    return 0;
}
