/*
 * ts_json_in.c - request body -> validated, resolved ts_run.
 *
 * One json_loadb() per request.  The object's members are walked by hand
 * against the core's field table (ts_fields[], core/ts_fields.h: name,
 * JSON type, range, where it lands in the ts_run), so that unknown
 * members, wrong types and out-of-range values are each reported with the
 * member's JSON pointer before anything reaches the core.  The limits are
 * the core's own (ts_run_resolve checks the same rows): generous sanity
 * bounds that keep every product the core forms exact and finite;
 * checking them here too gives the caller the JSON type and range in one
 * place (and in openapi.json).  The same table drives the core's
 * defaults and range checks, the "inputs" echo (ts_json_out.c), the docs
 * (ts_fields_doc.c) and every generated copy (tools/ts_gen_openapi:
 * openapi.json; tools/ts_gen_fields: the fuzz dictionary, the CLI's
 * options, docs/fields.md, web/fields.js).
 *
 * Order of application: defaults, preset ("model"), GPU ("gpu"), every
 * other member, then hbm_gb / peak_tflops on top of the chosen GPU.
 * Here the phases (decode, check, import, apply, the route's step); one
 * member's checks are ts_json_check.c's, the duplicate-key scans
 * ts_json_dup.c's, the routes' own members ts_json_route.c's.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api_int.h"
#include "ts_catalogue.h"
#include "ts_import.h"

const ts_api_field *ts_api_request_field(size_t i)
{
    return i < TS_FI_COUNT ? &ts_fields[i] : NULL;
}

size_t ts_api_request_field_count(void)
{
    return TS_FI_COUNT;
}

static void list_ids(char *buf, size_t size, bool presets)
{
    size_t o = 0;
    size_t i;
    size_t n = presets ? ts_preset_count() : ts_gpu_count();

    buf[0] = '\0';
    for (i = 0; i < n && o < size; i++) {
        const char *id = presets ? ts_preset_at(i)->id : ts_gpu_at(i)->id;
        int w = snprintf(buf + o, size - o, "%s%s", i ? ", " : "", id);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

/* The catalogue entry "model" names, when no preset answers for it. */
static const ts_catalogue_entry *model_entry(const json_t *v)
{
    const ts_preset *p;
    const ts_catalogue_entry *e;

    if (v == NULL || !json_is_string(v) || !ts_catalogue_resolve(json_string_value(v), &p, &e))
        return NULL;
    return e;
}

/* A preset's shape, seq and tokens; a catalogue entry's shape came in
 * with the imports (apply_imports), only its id is kept here. */
static int apply_preset(ts_api_req *req, const json_t *v, const ts_catalogue_entry *cat,
                        ts_api_err *err)
{
    ts_run *r = &req->run;
    const ts_preset *p;
    const ts_catalogue_entry *e;
    const char *hint;
    char ids[512];
    char got[80];
    int how;

    if (v == NULL || json_is_null(v))
        return 0;
    how = ts_catalogue_resolve(json_string_value(v), &p, &e);
    if (how == TS_CATALOGUE_OTHER_ORG || how == TS_CATALOGUE_QUANT) {
        ts_json_quote_short(got, sizeof got, json_string_value(v), 64);
        if (how == TS_CATALOGUE_QUANT)
            ts_import_note(&req->notes, "model \"%s\": " TS_CATALOGUE_QUANT_NOTE, got,
                           p != NULL ? p->id : e->id);
        else
            ts_import_note(&req->notes, "model \"%s\": " TS_CATALOGUE_COPY_NOTE, got,
                           p != NULL ? p->id : e->id);
    }
    if (cat != NULL) {
        snprintf(r->preset, sizeof r->preset, "%s", cat->id);
        return 0;
    }
    if (!how || p == NULL) {
        list_ids(ids, sizeof ids, true);
        ts_json_quote_short(got, sizeof got, json_string_value(v), 64);
        hint = ts_catalogue_suggest(json_string_value(v));
        ts_api_err_set(err, TS_PROB_UNKNOWN_PRESET, "/model",
                       "unknown model preset \"%s\"%s%s%s; valid: %s, "
                       "or a model of the catalogue by its Hugging Face Hub id "
                       "(GET /v1/presets)",
                       got, hint ? " (did you mean \"" : "", hint ? hint : "", hint ? "\"?)" : "",
                       ids);
        return -1;
    }
    ts_run_apply_preset(r, p);
    return 0;
}

/* A list of names (lora_targets, lora_modules_to_save) onto a bit set
 * with parse; -1 when a NUL or an item is not one, with that item quoted
 * into got (cut at a character boundary) and *whole true when the fault
 * is the whole list rather than one item. */
static int parse_names(const json_t *v,
                       int (*parse)(const char *, size_t, unsigned *, size_t *, size_t *),
                       unsigned *set, char *got, size_t gotn, bool *whole)
{
    const char *s = json_string_value(v);
    size_t len = json_string_length(v), at = 0, bl = 0, n;
    char item[80];
    bool nul = memchr(s, '\0', len) != NULL;

    if (!nul && parse(s, len, set, &at, &bl) == 0)
        return 0;
    n = bl < sizeof item - 1 ? bl : sizeof item - 1;
    memcpy(item, s + at, n);
    item[n] = '\0';
    ts_json_quote_short(got, gotn, item, 64);
    *whole = !nul && bl == len && at == 0;
    return -1;
}

/* lora_targets: the names onto the run's bit set; an unknown name is a
 * 400 that names it and lists the valid. */
static int apply_lora_targets(ts_run *r, const json_t *v, ts_api_err *err)
{
    unsigned set = 0;
    char got[96];
    bool whole = false;

    if (v == NULL)
        return 0;
    if (parse_names(v, ts_lora_targets_parse, &set, got, sizeof got, &whole) != 0) {
        if (whole && strstr(json_string_value(v), "query_key_value") != NULL)
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, "/lora_targets",
                           "lora_targets mixes query_key_value (a fused q, k, v) with q_proj, "
                           "k_proj or v_proj: a model has one or the other");
        else
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, "/lora_targets",
                           "lora_targets: \"%s\" is not a target; give all-linear, peft-default "
                           "or names joined by commas from q_proj, k_proj, v_proj, o_proj, "
                           "gate_proj, up_proj, down_proj, query_key_value",
                           got);
        return -1;
    }
    r->lora_targets = set;
    return 0;
}

/* lora_modules_to_save: "" or embed_tokens, lm_head joined by commas;
 * another name is a 400 that names it, as lora_targets does. */
static int apply_lora_save(ts_run *r, const json_t *v, ts_api_err *err)
{
    unsigned set = 0;
    char got[96];
    bool whole = false;

    if (v == NULL)
        return 0;
    if (parse_names(v, ts_lora_save_parse, &set, got, sizeof got, &whole) != 0) {
        ts_api_err_set(err, TS_PROB_INVALID_VALUE, "/lora_modules_to_save",
                       "lora_modules_to_save: \"%s\" is not a module trainsize models; give "
                       "embed_tokens, lm_head (embed_in, embed_out, word_embeddings, wte), "
                       "both joined by a comma, or \"\" or none",
                       got);
        return -1;
    }
    r->lora_save = set;
    return 0;
}

static int apply_gpu(ts_run *r, const json_t *v, ts_api_err *err)
{
    const ts_gpu *g;
    const char *hint;
    char ids[512];
    char got[80];

    if (v == NULL)
        return 0;
    g = ts_gpu_find(json_string_value(v));
    if (g == NULL) {
        list_ids(ids, sizeof ids, false);
        ts_json_quote_short(got, sizeof got, json_string_value(v), 64);
        hint = ts_gpu_suggest(json_string_value(v));
        ts_api_err_set(err, TS_PROB_UNKNOWN_GPU, "/gpu",
                       "unknown GPU \"%s\"%s%s%s; valid: %s (GET /v1/gpus)", got,
                       hint ? " (did you mean \"" : "", hint ? hint : "", hint ? "\"?)" : "", ids);
        return -1;
    }
    r->gpu = *g;
    return 0;
}

/* The CUSTOM rows of the registry (core/ts_fields.def), by id: those
 * stored with the plain members, and where the others are applied. */
static void store_custom(ts_field_id id, const json_t *v, ts_api_req *req)
{
    switch (id) {
    case TS_FI_PARAMS:
        if (!json_is_null(v))
            req->run.model.params = json_number_value(v) + 0.0;
        break;
    case TS_FI_SOLVE:
        req->solve = (ts_fit_solve)ts_json_enum_value(&ts_fields[id], v);
        break;
    case TS_FI_MAX_MICRO_BATCH:
        req->max_micro_batch = (int64_t)json_number_value(v);
        break;
    case TS_FI_MAX_GPUS:
        req->max_gpus = (int64_t)json_number_value(v);
        break;
    case TS_FI_MODEL:        /* apply_preset(), before every other member */
    case TS_FI_GPU:          /* apply_gpu(), before every other member */
    case TS_FI_LORA_TARGETS: /* apply_lora_targets(), with its error */
    case TS_FI_LORA_SAVE:    /* apply_lora_save(), with its error */
    case TS_FI_HBM_GB:       /* apply_gpu_overrides(), on the GPU chosen */
    case TS_FI_HBM_GIB:
    case TS_FI_PEAK_TFLOPS:
    default: /* the search's and the budget's: ts_json_search_seed(),
                              * ts_json_budget_seed() */
        break;
    }
}

/* Store one checked member into the run (a route's extras into req). */
static void store(ts_field_id id, const json_t *v, ts_api_req *req)
{
    const ts_field *f = &ts_fields[id];
    void *at = (char *)&req->run + f->off;

    switch (f->kind) {
    case TS_FK_INT64:
        *(int64_t *)at = (int64_t)json_number_value(v);
        break;
    case TS_FK_INT:
        *(int *)at = (int)json_number_value(v);
        break;
    case TS_FK_NUM:
        if (!json_is_null(v))
            *(double *)at = json_number_value(v) + 0.0;
        break;
    case TS_FK_NUM_OPT:
        *(double *)at = json_is_null(v) ? 0.0 : json_number_value(v) + 0.0;
        break;
    case TS_FK_BOOL:
        *(bool *)at = json_is_true(v);
        break;
    case TS_FK_ENUM:
        *(int *)at = ts_json_enum_value(f, v);
        break;
    case TS_FK_CUSTOM:
        store_custom(id, v, req);
        break;
    }
}

/* The peak the run will use: the one for its compute precision. */
static void set_peak(ts_gpu *g, ts_precision compute, double flops)
{
    switch (compute) {
    case TS_PREC_FP32:
        g->fp32_flops = flops;
        break;
    case TS_PREC_FP8:
        g->fp8_flops = flops;
        break;
    case TS_PREC_BF16:
    case TS_PREC_FP16:
    case TS_PREC_COUNT:
    default:
        g->bf16_flops = flops;
        break;
    }
}

/* hbm_gb, hbm_gib and peak_tflops on top of the GPU chosen, once the
 * compute precision (which selects the peak) is known. */
static int apply_gpu_overrides(ts_run *r, const json_t *const *given, ts_api_err *err)
{
    if (given[TS_FI_HBM_GB] != NULL)
        r->gpu.hbm_bytes = json_number_value(given[TS_FI_HBM_GB]) * 1e9;
    if (given[TS_FI_HBM_GIB] != NULL) {
        double gib = json_number_value(given[TS_FI_HBM_GIB]) * 1073741824.0;

        /* Both may come back from an echo; they must then agree. */
        if (given[TS_FI_HBM_GB] != NULL && fabs(gib - r->gpu.hbm_bytes) > 1e-9 * gib) {
            ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, "/hbm_gib",
                           "hbm_gb (decimal GB) and hbm_gib (GiB) disagree: give one");
            return -1;
        }
        r->gpu.hbm_bytes = gib;
    }
    if (given[TS_FI_PEAK_TFLOPS] != NULL)
        set_peak(&r->gpu, r->compute_precision, json_number_value(given[TS_FI_PEAK_TFLOPS]) * 1e12);
    return 0;
}

/* The duplicate-key scans answer 0 (none), 1 (err filled) or -1 (out of
 * memory): true when the request is refused. */
static bool duplicates_refused(int rc, ts_api_err *err)
{
    if (rc == 0)
        return false;
    if (rc != 1)
        ts_api_err_set(err, TS_PROB_OUT_OF_MEMORY, NULL, "out of memory parsing the request");
    return true;
}

/* Point an error raised for an imported value at where it came from:
 * origin is "/hf_config/num_hidden_layers" or "/megatron_args (--tp)". */
static void blame_import(ts_api_err *err, const char *origin)
{
    char detail[TS_API_DETAIL_LEN];
    size_t plen;
    int n;

    /* A value the importer derived without a key of its own keeps the
     * core's pointer: never a problem without a field. */
    if (origin == NULL || origin[0] == '\0')
        return;
    plen = strcspn(origin, " ");
    n = snprintf(detail, sizeof detail, "from %s: ", origin);

    if (n > 0 && (size_t)n < sizeof detail) {
        size_t room = sizeof detail - (size_t)n;

        memcpy(detail + n, err->detail, strnlen(err->detail, room - 1));
        detail[(size_t)n + strnlen(err->detail, room - 1)] = '\0';
        ts_utf8_trim(detail, strlen(detail));
        memcpy(err->detail, detail, sizeof err->detail);
    }
    snprintf(err->field, sizeof err->field, "%.*s", (int)plen, origin);
}

/* Each import member given is a document (an object) or a text, as its
 * importer reads it. */
static int import_types(const json_t *const *imp, ts_api_req *req, ts_api_err *err)
{
    static const struct {
        bool object;
        const char *what;
    } want[TS_IMP_COUNT] = {
        [TS_IMP_HF] = { true, "a Hugging Face config.json" },
        [TS_IMP_AXOLOTL] = { false, "an axolotl YAML config" },
        [TS_IMP_LLAMAFACTORY] = { false, "a LLaMA-Factory training YAML" },
        [TS_IMP_NEMO] = { false, "a NeMo training YAML" },
        [TS_IMP_DS] = { true, "a DeepSpeed config" },
        [TS_IMP_MEGA] = { false, "Megatron-LM arguments" },
    };
    size_t i;

    for (i = 0; i < TS_IMP_COUNT; i++) {
        char ptr[32];
        bool ok;

        if (imp[i] == NULL)
            continue;
        ok = want[i].object ? json_is_object(imp[i]) : json_is_string(imp[i]);
        if (!ok) {
            /* A string where a document goes is most often a file name:
             * the server reads no files, the CLI does. */
            bool path = want[i].object && json_is_string(imp[i]);

            snprintf(ptr, sizeof ptr, "/%s", ts_import_members[i]);
            ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr, "%s must be %s (%s), got %s%s",
                           ts_import_members[i], want[i].object ? "an object" : "a string",
                           want[i].what, ts_json_kind(imp[i]),
                           path ? ": send the file's JSON itself, the server reads no files "
                                  "(the CLI reads a path: --hf-config FILE, --deepspeed FILE, "
                                  "or a plan file naming it)"
                                : "");
            return -1;
        }
        req->imported = true;
    }
    /* Two training configs describe two runs, not one. */
    if (imp[TS_IMP_AXOLOTL] != NULL && imp[TS_IMP_LLAMAFACTORY] != NULL) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, "/llamafactory_config",
                       "axolotl_config and llamafactory_config each describe a whole training "
                       "run; send one");
        return -1;
    }
    return 0;
}

/* Run the importers and merge their values under the request's own. */
static int apply_imports(const json_t *const *imp, const ts_catalogue_entry *cat, ts_import *im,
                         const json_t **given, ts_api_req *req, ts_api_err *err)
{
    size_t i;

    if (import_types(imp, req, err) != 0)
        return -1;
    for (i = 0; i < TS_FI_COUNT; i++)
        im->req_has[i] = given[i] != NULL;
    /* A catalogue model is the first import: a preset's place in the
     * order, hf_config and the rest on top of it. */
    if (cat != NULL) {
        req->imported = true;
        if (ts_catalogue_import(im, cat, err) != 0)
            return -1;
    }
    if (imp[TS_IMP_HF] != NULL && ts_import_hf(im, imp[TS_IMP_HF], err) != 0)
        return -1;
    if (imp[TS_IMP_AXOLOTL] != NULL &&
        ts_import_axolotl(im, json_string_value(imp[TS_IMP_AXOLOTL]),
                          json_string_length(imp[TS_IMP_AXOLOTL]), err) != 0)
        return -1;
    if (imp[TS_IMP_LLAMAFACTORY] != NULL &&
        ts_import_llamafactory(im, json_string_value(imp[TS_IMP_LLAMAFACTORY]),
                               json_string_length(imp[TS_IMP_LLAMAFACTORY]), err) != 0)
        return -1;
    if (imp[TS_IMP_NEMO] != NULL && ts_import_nemo(im, json_string_value(imp[TS_IMP_NEMO]),
                                                   json_string_length(imp[TS_IMP_NEMO]), err) != 0)
        return -1;
    if (imp[TS_IMP_DS] != NULL && ts_import_ds(im, imp[TS_IMP_DS], err) != 0)
        return -1;
    if (imp[TS_IMP_MEGA] != NULL && ts_import_mega(im, json_string_value(imp[TS_IMP_MEGA]),
                                                   json_string_length(imp[TS_IMP_MEGA]), err) != 0)
        return -1;
    /* What depends on the final framework and zero, once every import
     * and the request have said which the run has. */
    if (ts_import_settle(im, given, err) != 0)
        return -1;
    for (i = 0; i < TS_FI_COUNT; i++) {
        if (im->vals[i] == NULL)
            continue;
        if (given[i] != NULL) {
            /* The request overrides: say so when it differs. */
            if (!json_equal(given[i], im->vals[i]))
                ts_import_note(&req->notes, "%s: the request's value overrides %s",
                               ts_fields[i].name, im->origin[i]);
            continue;
        }
        if (ts_fields[i].fit_only)
            continue;
        if (ts_json_check_value(&ts_fields[i], im->vals[i], err) != 0) {
            blame_import(err, im->origin[i]);
            return -1;
        }
        given[i] = im->vals[i];
        req->source[i] = (unsigned char)im->src[i];
    }
    return 0;
}

static bool req_has_import(const json_t *const *imp)
{
    size_t i;

    for (i = 0; i < TS_IMP_COUNT; i++)
        if (imp[i] != NULL)
            return true;
    return false;
}

/* Members a preset sets: the whole shape, seq and tokens. */
static bool preset_sets(size_t i)
{
    return (i >= TS_FI_PARAMS && i <= TS_FI_V_HEAD_DIM) || i == TS_FI_SEQ || i == TS_FI_TOKENS ||
           i == TS_FI_MODEL;
}

typedef enum ts_json_mode {
    TS_JSON_RUN = 0,
    TS_JSON_FIT,
    TS_JSON_SEARCH,
    TS_JSON_BUDGET
} ts_json_mode;

/* The body as a JSON object without duplicate keys, or NULL with err
 * set.  Every number decodes as a double: integer literals of 2^63 and
 * more (JSON.stringify(1e19)) are valid numbers for number members;
 * ts_json_check_value() checks integer members for integrality instead. */
static json_t *decode_body(const char *body, size_t len, ts_api_err *err)
{
    json_error_t je;
    json_t *root = json_loadb(body != NULL ? body : "", body != NULL ? len : 0,
                              JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, &je);

    if (root == NULL) {
        if (json_error_code(&je) == json_error_out_of_memory) {
            ts_api_err_set(err, TS_PROB_OUT_OF_MEMORY, NULL, "out of memory parsing the request");
        } else {
            /* jansson cuts its text at JSON_ERROR_TEXT_LENGTH bytes, and
             * the token it quotes ("near '...'") ends at the byte that
             * failed, either of which may be mid-character. */
            ts_utf8_drop_cut(je.text);
            ts_api_err_set(err, TS_PROB_INVALID_JSON, NULL, "line %d, column %d: %s", je.line,
                           je.column, je.text);
        }
        return NULL;
    }
    if (!json_is_object(root)) {
        ts_api_err_set(err, TS_PROB_NOT_AN_OBJECT, "",
                       "the request body must be a JSON object, got %s", ts_json_kind(root));
    } else if (!duplicates_refused(ts_json_dup_body(body, len, root, err), err)) {
        return root;
    }
    json_decref(root);
    return NULL;
}

/* Pass 1: every member known to the route, well-typed and in range, into
 * given[] (the import members into imp[]). */
static int check_members(json_t *root, ts_json_mode mode, const json_t **given, const json_t **imp,
                         ts_api_req *req, ts_api_err *err)
{
    bool fit = mode == TS_JSON_FIT;
    const char *key;
    json_t *val;

    json_object_foreach(root, key, val)
    {
        size_t idx = ts_json_field_index(key);
        int ii = ts_json_import_index(key);

        if (ii >= 0) {
            imp[ii] = val;
            continue;
        }
        if (idx == SIZE_MAX ||
            (ts_fields[idx].fit_only && !fit && !(mode == TS_JSON_SEARCH && idx != TS_FI_SOLVE)) ||
            (ts_fields[idx].search_only && mode != TS_JSON_SEARCH) ||
            (ts_fields[idx].budget_only && mode != TS_JSON_BUDGET)) {
            ts_json_unknown_field(err, key, fit, mode == TS_JSON_SEARCH);
            return -1;
        }
        if (ts_json_check_value(&ts_fields[idx], val, err) != 0)
            return -1;
        given[idx] = val;
        req->source[idx] = TS_SRC_REQUEST;
    }
    return 0;
}

/* The importers' proposed values (and a catalogue model's), checked like
 * members, under the request's own; *out owns them. */
static int run_imports(const char *body, size_t len, const json_t *const *imp,
                       const ts_catalogue_entry *cat, ts_import **out, const json_t **given,
                       ts_api_req *req, ts_api_err *err)
{
    ts_import *im;

    if (req_has_import(imp) && duplicates_refused(ts_json_dup_imports(body, len, err), err))
        return -1;
    if ((im = malloc(sizeof *im)) == NULL) {
        ts_api_err_set(err, TS_PROB_OUT_OF_MEMORY, NULL, "out of memory parsing the request");
        return -1;
    }
    *out = im;
    ts_import_init(im, &req->notes);
    if (apply_imports(imp, cat, im, given, req, err) != 0)
        return -1;
    ts_import_notes_settle(&req->notes, req->source);
    return 0;
}

/* Defaults that follow other members (docs/formulas.md): grads and
 * compute follow the weight precision, master weights are on unless the
 * weights are already fp32; then what each framework does unless told
 * otherwise ("What the framework holds"): Megatron accumulates and
 * reduces gradients in an fp32 main_grad buffer with bf16/fp16 weights
 * (arguments.py: accumulate_allreduce_grads_in_fp32); FSDP's gradients
 * have the sharded parameters' dtype (fp32 when they are the master
 * copy) and FSDP means full sharding; DeepSpeed's 16-bit gradients follow
 * the weights (its fp32 partition is modelled separately). */
static void follow_defaults(ts_run *r, const json_t *const *given)
{
    if (given[TS_FI_PRECISION] != NULL) {
        if (given[TS_FI_GRAD_PRECISION] == NULL)
            r->grad_precision = r->precision;
        if (given[TS_FI_COMPUTE_PRECISION] == NULL)
            r->compute_precision = r->precision;
        if (given[TS_FI_MASTER_WEIGHTS] == NULL)
            r->master_weights = r->precision != TS_PREC_FP32;
    }
    /* Megatron overlaps the parameter gather only with the gradient
     * reduce (ts_compat.c): the reduce's overlap switched off takes the
     * gather's default with it. */
    if (given[TS_FI_OVERLAP_GRAD_REDUCE] != NULL && !r->overlap_grad_reduce &&
        given[TS_FI_OVERLAP_PARAM_GATHER] == NULL)
        r->overlap_param_gather = false;
    /* Until now grad_precision is the precision's (or both defaults,
     * bf16): the framework's rule starts from it (the search applies the
     * same rule to every framework it tries). */
    if (given[TS_FI_GRAD_PRECISION] == NULL)
        r->grad_precision =
            ts_framework_grad_precision(r->framework, r->precision, r->master_weights);
    if (given[TS_FI_ZERO] == NULL && r->framework == TS_FW_FSDP)
        r->zero = 3;
    /* gpus = dp*tp*pp*cp: one given, derive the other. */
    if (given[TS_FI_DP] != NULL && given[TS_FI_GPUS] == NULL)
        r->gpus = 0;
    if (given[TS_FI_GPUS] != NULL && given[TS_FI_DP] == NULL)
        r->dp = 0;
}

/* Pass 2: the members into the run, in a fixed order (see the file
 * comment). */
static int apply_members(ts_api_req *req, const json_t *const *given, const ts_catalogue_entry *cat,
                         ts_api_err *err)
{
    const json_t *p = given[TS_FI_PARAMS];
    size_t i;

    ts_run_defaults(&req->run);
    if (apply_preset(req, given[TS_FI_MODEL], cat, err) != 0 ||
        apply_gpu(&req->run, given[TS_FI_GPU], err) != 0)
        return -1;
    for (i = 0; i < TS_FI_COUNT; i++)
        if (given[i] != NULL)
            store((ts_field_id)i, given[i], req);
    if (apply_lora_targets(&req->run, given[TS_FI_LORA_TARGETS], err) != 0 ||
        apply_lora_save(&req->run, given[TS_FI_LORA_SAVE], err) != 0)
        return -1;
    follow_defaults(&req->run, given);
    if (apply_gpu_overrides(&req->run, given, err) != 0)
        return -1;
    if (p != NULL && !json_is_null(p) && req->run.model.layers > 0) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, "/params",
                       "params is computed from the shape (layers = %lld%s); "
                       "give either params (with layers 0 and no model "
                       "preset) or a shape",
                       (long long)req->run.model.layers,
                       given[TS_FI_MODEL] != NULL ? ", from the preset" : "");
        return -1;
    }
    return 0;
}

/* On a GPU without BF16 tensor cores (V100, T4) the precisions nobody
 * gave default to fp16, what runs on those GPUs use; said in a note.  A
 * bf16 the request or an import gave stays, for ts_run_resolve's 400. */
static void default_fp16(ts_api_req *req)
{
    ts_run *r = &req->run;

    if (ts_gpu_bf16(&r->gpu) || req->source[TS_FI_PRECISION] != TS_SRC_DEFAULT ||
        r->precision != TS_PREC_BF16)
        return;
    r->precision = TS_PREC_FP16;
    if (req->source[TS_FI_COMPUTE_PRECISION] == TS_SRC_DEFAULT &&
        r->compute_precision == TS_PREC_BF16)
        r->compute_precision = TS_PREC_FP16;
    if (req->source[TS_FI_GRAD_PRECISION] == TS_SRC_DEFAULT && r->grad_precision == TS_PREC_BF16)
        r->grad_precision = TS_PREC_FP16;
    ts_import_note(&req->notes,
                   "precision: fp16, the default on %s, which has no BF16 tensor cores (compute "
                   "capability %d.%d)",
                   r->gpu.id, r->gpu.sm / 10, r->gpu.sm % 10);
}

/* The route's own step after the run: the search and the budget resolve
 * every candidate themselves (the given layout members fix their
 * dimension; the budget is a search plus the budget, from
 * req->unresolved); the others resolve the run here. */
static int finish_route(ts_json_mode mode, const json_t *const *given, const ts_import *im,
                        ts_api_req *req, ts_api_err *err)
{
    ts_error cerr;

    default_fp16(req);

    if (mode == TS_JSON_FIT && ts_json_fit_seed(req, given, err) != 0)
        return -1;
    req->unresolved = req->run;
    if (mode == TS_JSON_BUDGET) {
        ts_json_search_seed(req, given);
        return ts_json_budget_seed(req, given, err);
    }
    if (mode == TS_JSON_SEARCH) {
        ts_json_search_seed(req, given);
        return 0;
    }
    memset(&cerr, 0, sizeof cerr);
    if (ts_run_resolve(&req->run, &cerr) != TS_OK) {
        size_t idx = ts_json_field_index(cerr.field);

        ts_api_err_from_core(err, &cerr);
        /* A core check on an imported value names the imported key. */
        if (im != NULL && idx != SIZE_MAX && im->vals[idx] != NULL &&
            req->source[idx] == im->src[idx] && req->source[idx] != TS_SRC_REQUEST)
            blame_import(err, im->origin[idx]);
        return -1;
    }
    return 0;
}

static int parse_body(const char *body, size_t len, ts_json_mode mode, ts_api_req *req,
                      ts_api_err *err)
{
    const json_t *given[TS_FI_COUNT] = { NULL };
    const json_t *imp[TS_IMP_COUNT] = { NULL };
    const ts_catalogue_entry *cat;
    ts_import *im = NULL;
    json_t *root;
    size_t i;
    int rc = -1;

    /* All but the notes' text (3.8 KB, written when a note is added). */
    memset(req, 0, offsetof(ts_api_req, notes.text));
    memset((char *)req + offsetof(ts_api_req, run), 0, sizeof *req - offsetof(ts_api_req, run));
    /* The fit extras' defaults (core/ts_fields.def). */
    req->max_micro_batch = (int64_t)ts_fields[TS_FI_MAX_MICRO_BATCH].def;
    req->max_gpus = (int64_t)ts_fields[TS_FI_MAX_GPUS].def;
    if ((root = decode_body(body, len, err)) == NULL)
        return -1;
    if (check_members(root, mode, given, imp, req, err) != 0)
        goto out;
    /* A catalogue model's members get their source from its import. */
    cat = model_entry(given[TS_FI_MODEL]);
    if (given[TS_FI_MODEL] != NULL && !json_is_null(given[TS_FI_MODEL]) && cat == NULL)
        for (i = 0; i < TS_FI_COUNT; i++)
            if (given[i] == NULL && preset_sets(i))
                req->source[i] = TS_SRC_PRESET;
    if ((req_has_import(imp) || cat != NULL) &&
        run_imports(body, len, imp, cat, &im, given, req, err) != 0)
        goto out;
    if (apply_members(req, given, cat, err) != 0 ||
        (im != NULL &&
         (ts_import_apply_batch(req, im, err) != 0 || ts_import_apply_steps(req, im, err) != 0)))
        goto out;
    rc = finish_route(mode, given, im, req, err);
out:
    if (im != NULL) {
        ts_import_free(im);
        free(im);
    }
    json_decref(root);
    return rc;
}

int ts_json_parse_run(const char *body, size_t len, bool fit, ts_api_req *req, ts_api_err *err)
{
    return parse_body(body, len, fit ? TS_JSON_FIT : TS_JSON_RUN, req, err);
}

int ts_json_parse_search(const char *body, size_t len, ts_api_req *req, ts_api_err *err)
{
    return parse_body(body, len, TS_JSON_SEARCH, req, err);
}

int ts_json_parse_budget(const char *body, size_t len, ts_api_req *req, ts_api_err *err)
{
    return parse_body(body, len, TS_JSON_BUDGET, req, err);
}
