/*
 * ts_import.c - the shared part of the importers (see ts_import.h):
 * proposed values with their origin, notes, typed getters that name the
 * imported key on error, size caps, and the "inputs_source" /
 * "import_notes" answer members.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_import.h"

const char *const ts_import_members[TS_IMP_COUNT + 1] = { [TS_IMP_HF] = "hf_config",
                                                          [TS_IMP_AXOLOTL] = "axolotl_config",
                                                          [TS_IMP_LLAMAFACTORY] =
                                                              "llamafactory_config",
                                                          [TS_IMP_NEMO] = "nemo_config",
                                                          [TS_IMP_DS] = "deepspeed_config",
                                                          [TS_IMP_MEGA] = "megatron_args",
                                                          [TS_IMP_COUNT] = NULL };

const char *const *ts_api_import_members(void)
{
    return ts_import_members;
}

static const char *const ts_src_names[TS_SRC_COUNT] = {
    [TS_SRC_DEFAULT] = "default",        [TS_SRC_PRESET] = "preset",
    [TS_SRC_CATALOGUE] = "catalogue",    [TS_SRC_HF] = "hf_config",
    [TS_SRC_AXOLOTL] = "axolotl_config", [TS_SRC_LLAMAFACTORY] = "llamafactory_config",
    [TS_SRC_NEMO] = "nemo_config",       [TS_SRC_DS] = "deepspeed_config",
    [TS_SRC_MEGATRON] = "megatron_args", [TS_SRC_REQUEST] = "request",
};

const char *ts_api_src_name(ts_api_src s)
{
    return (unsigned)s < TS_SRC_COUNT ? ts_src_names[s] : "default";
}

void ts_import_init(ts_import *im, ts_api_notes *notes)
{
    memset(im, 0, sizeof *im);
    im->notes = notes;
}

void ts_import_free(ts_import *im)
{
    size_t i;

    for (i = 0; i < TS_FI_COUNT; i++) {
        json_decref(im->vals[i]);
        im->vals[i] = NULL;
    }
}

static void note_v(ts_api_notes *n, size_t about, ts_api_src by, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 0)))
#endif
    ;

static void note_v(ts_api_notes *n, size_t about, ts_api_src by, const char *fmt, va_list ap)
{
    int len;

    if (n == NULL)
        return;
    if (n->n >= TS_API_NOTES_MAX) {
        n->truncated = true;
        return;
    }
    len = vsnprintf(n->text[n->n], TS_API_NOTE_LEN, fmt, ap);
    if (len < 0)
        n->text[n->n][0] = '\0';
    else if ((size_t)len >= TS_API_NOTE_LEN)
        ts_utf8_trim(n->text[n->n], TS_API_NOTE_LEN - 1);
    n->about[n->n] = (unsigned short)about;
    n->by[n->n] = (unsigned char)by;
    n->n++;
}

void ts_import_note(ts_api_notes *n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    note_v(n, TS_FI_COUNT, TS_SRC_DEFAULT, fmt, ap);
    va_end(ap);
}

void ts_import_note_about(ts_api_notes *n, ts_field_id fi, ts_api_src by, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    note_v(n, (size_t)fi, by, fmt, ap);
    va_end(ap);
}

void ts_import_notes_settle(ts_api_notes *n, const unsigned char *source)
{
    size_t i, k = 0;

    for (i = 0; i < n->n; i++) {
        unsigned about = n->about[i];
        unsigned char from = about < TS_FI_COUNT ? source[about] : TS_SRC_DEFAULT;

        if (from != TS_SRC_DEFAULT && from != TS_SRC_PRESET && from != n->by[i])
            continue; /* the user gave it: nothing left to say */
        if (k != i) {
            memcpy(n->text[k], n->text[i], sizeof n->text[k]);
            n->about[k] = n->about[i];
            n->by[k] = n->by[i];
        }
        k++;
    }
    n->n = k;
}

static void oom(ts_api_err *err)
{
    ts_api_err_set(err, TS_PROB_OUT_OF_MEMORY, NULL, "out of memory reading an imported config");
}

/* Member fi becomes v (reference stolen), from src at origin, with no
 * word about what it replaces: the after-import rules' own changes. */
static int import_put(ts_import *im, ts_field_id fi, json_t *v, ts_api_src src, const char *origin,
                      ts_api_err *err)
{
    if (v == NULL) {
        oom(err);
        return -1;
    }
    json_decref(im->vals[fi]);
    im->vals[fi] = v;
    im->src[fi] = src;
    snprintf(im->origin[fi], sizeof im->origin[fi], "%s", origin);
    return 0;
}

int ts_import_set(ts_import *im, ts_field_id fi, json_t *v, ts_api_src src, const char *origin,
                  ts_api_err *err)
{
    if (v != NULL && im->vals[fi] != NULL) {
        /* Two imports say different things: the later one (Megatron over
         * DeepSpeed over HF) wins, and the user is told. */
        if (!json_equal(im->vals[fi], v)) {
            char a[64], b[64];
            char *sa = json_dumps(im->vals[fi], JSON_ENCODE_ANY | JSON_COMPACT);
            char *sb = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

            ts_utf8_copy(a, sizeof a, sa != NULL ? sa : "?");
            ts_utf8_copy(b, sizeof b, sb != NULL ? sb : "?");
            free(sa);
            free(sb);
            ts_import_note(im->notes, "%s: %s from %s overrides %s from %s", ts_fields[fi].name, b,
                           origin, a, im->origin[fi]);
        }
    }
    return import_put(im, fi, v, src, origin, err);
}

int ts_import_set_int(ts_import *im, ts_field_id fi, int64_t v, ts_api_src src, const char *origin,
                      ts_api_err *err)
{
    return ts_import_set(im, fi, json_integer((json_int_t)v), src, origin, err);
}

int ts_import_set_bool(ts_import *im, ts_field_id fi, bool v, ts_api_src src, const char *origin,
                       ts_api_err *err)
{
    return ts_import_set(im, fi, json_boolean(v), src, origin, err);
}

int ts_import_set_str(ts_import *im, ts_field_id fi, const char *v, ts_api_src src,
                      const char *origin, ts_api_err *err)
{
    return ts_import_set(im, fi, json_string(v), src, origin, err);
}

void ts_import_ptr(char *buf, size_t size, const ts_import_obj *o, const char *key)
{
    snprintf(buf, size, "%s", o->base);
    ts_import_ptr_add(buf, size, key);
}

/* RFC 6901 escaping of one reference token. */
void ts_import_ptr_add(char *buf, size_t size, const char *key)
{
    size_t n = strlen(buf);

    if (n + 2 > size)
        return;
    buf[n++] = '/';
    for (; *key != '\0' && n + 3 < size; key++) {
        if (*key == '~' || *key == '/') {
            buf[n++] = '~';
            buf[n++] = *key == '~' ? '0' : '1';
        } else {
            buf[n++] = *key;
        }
    }
    buf[n] = '\0';
    if (*key != '\0')
        ts_utf8_trim(buf, n);
}

static const char *kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    default:
        return "something else";
    }
}

static void missing(const ts_import_obj *o, const char *key, ts_api_err *err)
{
    char ptr[TS_IMPORT_ORIGIN_LEN];

    ts_import_ptr(ptr, sizeof ptr, o, key);
    ts_api_err_set(err, TS_PROB_MISSING_FIELD, ptr, "%s is required in %s", key, o->base);
}

int ts_import_int(const ts_import_obj *o, const char *key, int64_t lo, int64_t hi, bool required,
                  int64_t *out, ts_api_err *err)
{
    const json_t *v = json_object_get(o->obj, key);
    char ptr[TS_IMPORT_ORIGIN_LEN];
    double d;

    if (v == NULL || json_is_null(v)) {
        if (required) {
            missing(o, key, err);
            return -1;
        }
        return 0;
    }
    ts_import_ptr(ptr, sizeof ptr, o, key);
    /* The request decodes every number as a double (ts_json_in.c): an
     * integer is a number without a fraction (JSON Schema's rule), and
     * the bounds here are far below 2^53, where that is exact. */
    if (!json_is_number(v)) {
        ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr, "%s must be an integer, got %s", ptr,
                       kind(v));
        return -1;
    }
    d = json_number_value(v);
    if (!isfinite(d) || d != floor(d)) {
        ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr,
                       "%s must be an integer (no fractional part), got %.17g", ptr, d);
        return -1;
    }
    if (d < (double)lo || d > (double)hi) {
        ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, ptr,
                       "%s must be an integer from %lld to %lld, got %.17g", ptr, (long long)lo,
                       (long long)hi, d);
        return -1;
    }
    *out = (int64_t)d;
    return 1;
}

int ts_import_bool(const ts_import_obj *o, const char *key, bool *out, ts_api_err *err)
{
    const json_t *v = json_object_get(o->obj, key);
    char ptr[TS_IMPORT_ORIGIN_LEN];

    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_boolean(v)) {
        ts_import_ptr(ptr, sizeof ptr, o, key);
        ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr, "%s must be true or false, got %s", ptr,
                       kind(v));
        return -1;
    }
    *out = json_is_true(v);
    return 1;
}

int ts_import_str(const ts_import_obj *o, const char *key, bool required, const char **out,
                  ts_api_err *err)
{
    const json_t *v = json_object_get(o->obj, key);
    char ptr[TS_IMPORT_ORIGIN_LEN];

    if (v == NULL || json_is_null(v)) {
        if (required) {
            missing(o, key, err);
            return -1;
        }
        return 0;
    }
    if (!json_is_string(v)) {
        ts_import_ptr(ptr, sizeof ptr, o, key);
        ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr, "%s must be a string, got %s", ptr, kind(v));
        return -1;
    }
    *out = json_string_value(v);
    return 1;
}

int ts_import_sub(const ts_import_obj *o, const char *key, ts_import_obj *sub, ts_api_err *err)
{
    const json_t *v = json_object_get(o->obj, key);
    char ptr[TS_IMPORT_ORIGIN_LEN];

    ts_import_ptr(ptr, sizeof ptr, o, key);
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_object(v)) {
        ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr, "%s must be an object, got %s", ptr,
                       kind(v));
        return -1;
    }
    sub->obj = v;
    ts_utf8_copy(sub->base, sizeof sub->base, ptr);
    return 1;
}

/* Count values depth-first, stopping as soon as a cap is passed. */
static bool walk(const json_t *v, size_t depth, size_t *nodes)
{
    if (++*nodes > TS_IMPORT_NODES_MAX || depth > TS_IMPORT_DEPTH_MAX)
        return false;
    if (json_is_object(v)) {
        const char *k;
        const json_t *m;

        json_object_foreach((json_t *)v, k, m) if (!walk(m, depth + 1, nodes)) return false;
    } else if (json_is_array(v)) {
        size_t i;

        for (i = 0; i < json_array_size(v); i++)
            if (!walk(json_array_get(v, i), depth + 1, nodes))
                return false;
    }
    return true;
}

int ts_import_check_size(const json_t *doc, const char *ptr, ts_api_err *err)
{
    size_t nodes = 0;

    if (walk(doc, 1, &nodes))
        return 0;
    ts_api_err_set(err, TS_PROB_IMPORT_TOO_LARGE, ptr,
                   "%s exceeds %d JSON values or %d levels of nesting", ptr, TS_IMPORT_NODES_MAX,
                   TS_IMPORT_DEPTH_MAX);
    return -1;
}

void ts_json_inputs_source(ts_jw *w, const char *key, const ts_api_req *req)
{
    size_t i;

    ts_jw_open(w, key, '{');
    /* The same members as the "inputs" echo (all but the fit extras). */
    for (i = 0; i < TS_FI_SOLVE; i++)
        ts_jw_str(w, ts_fields[i].name, ts_api_src_name((ts_api_src)req->source[i]));
    ts_jw_close(w, '}');
}

void ts_json_import_notes(ts_jw *w, const char *key, const ts_api_notes *n)
{
    size_t i;

    ts_jw_open(w, key, '[');
    for (i = 0; i < n->n; i++)
        ts_jw_text(w, NULL, n->text[i]);
    if (n->truncated)
        ts_jw_str(w, NULL, "(more notes left out)");
    ts_jw_close(w, ']');
}

/* The HF Trainer's optim names (transformers OptimizerNames), which
 * axolotl's optimizer and LLaMA-Factory's optim pass through, onto
 * trainsize's optimizers; torch: torch.optim's, whose moments take the
 * parameter's dtype (AdamW._init_group: zeros_like(p)). */
static const struct {
    const char *hf, *ours;
    bool torch;
} ts_hf_optims[] = {
    { "adamw_torch", "adamw", true },
    { "adamw_torch_fused", "adamw", true },
    { "adamw_hf", "adamw", true },
    { "adamw_apex_fused", "adamw", false },
    { "adamw_bnb_8bit", "adam8bit", false },
    { "paged_adamw_8bit", "paged_adam8bit", false },
    { "adamw_8bit", "adam8bit", false },
    { "paged_adamw_32bit", "adamw", false },
    { "adafactor", "adafactor", false },
    { "lion_pytorch", "lion", true }, /* axolotl's name for torch's Lion */
    { "lion_32bit", "lion", false },
    { "paged_lion_32bit", "lion", false },
    { "lion_8bit", "lion", false },
    { "sgd", "sgd", false },
};

int ts_import_hf_optim(ts_import *im, const char *name, ts_api_src src, const char *origin,
                       ts_api_err *err)
{
    size_t i;

    for (i = 0; i < sizeof ts_hf_optims / sizeof ts_hf_optims[0]; i++)
        if (strcmp(ts_hf_optims[i].hf, name) == 0)
            return ts_import_set_str(im, TS_FI_OPTIMIZER, ts_hf_optims[i].ours, src, origin, err);
    ts_import_note(im->notes,
                   "%s \"%.*s\" has no state model here: optimizer keeps its request or default "
                   "value",
                   origin, ts_utf8_prec(name, 40), name);
    return 0;
}

bool ts_import_hf_optim_torch(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof ts_hf_optims / sizeof ts_hf_optims[0]; i++)
        if (strcmp(ts_hf_optims[i].hf, name) == 0)
            return ts_hf_optims[i].torch;
    return false;
}

/* The rule ts_import.h states for d16: without FSDP or DeepSpeed (hf,
 * zero 0; LLaMA-Factory's pure_bf16 under FSDP too) nothing upcasts the
 * 16-bit model, so no master copy, and a full fine-tune with a torch
 * optimizer keeps its moments 16-bit.  The importers only record what
 * their config says (import/ts_axolotl.c ax_pure16,
 * import/ts_llamafactory.c lf_precision); a build without libyaml never sets
 * d16.  Applied once the framework and zero are known. */
static int settle_dtype16(ts_import *im, const json_t *fw, const json_t *z,
                          const json_t *const *given, ts_api_err *err)
{
    const json_t *precision = given[TS_FI_PRECISION], *master = given[TS_FI_MASTER_WEIGHTS];
    const json_t *opt_prec = given[TS_FI_OPTIMIZER_PRECISION], *lora_rank = given[TS_FI_LORA_RANK];

    /* LLaMA-Factory refuses pure_bf16 under DeepSpeed ZeRO-3
     * (hparams/parser.py: "`pure_bf16` is incompatible with DeepSpeed
     * ZeRO-3"). */
    if (im->d16_no_ds3 && json_is_string(fw) && strcmp(json_string_value(fw), "deepspeed") == 0 &&
        json_is_number(z) && json_number_value(z) == 3) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, im->d16_origin,
                       "%s under DeepSpeed ZeRO-3: the config's trainer refuses it (LLaMA-Factory: "
                       "\"`pure_bf16` is incompatible with DeepSpeed ZeRO-3\")",
                       im->d16_origin);
        return -1;
    }
    /* The request's numbers are decoded as reals: compared as numbers. */
    if (im->d16[0] == '\0' || !json_is_string(fw) || strcmp(json_string_value(fw), "hf") != 0 ||
        !(im->d16_any_zero || (json_is_number(z) && json_number_value(z) == 0)))
        return 0;
    /* A request's own precision says another dtype than the config's. */
    if (json_is_string(precision) && strcmp(json_string_value(precision), im->d16) != 0)
        return 0;
    if (im->d16_embed_fp32 && !(json_is_number(lora_rank) && json_number_value(lora_rank) > 0)) {
        ts_import_note(im->notes,
                       "%s: a full fine-tune with eager or SDPA attention keeps embed_tokens, "
                       "lm_head and the norms in fp32 beside the %s layers "
                       "(_configure_embedding_dtypes): master_weights and optimizer_precision "
                       "stay as given",
                       im->d16_base, im->d16);
        return 0;
    }
    if (master == NULL &&
        ts_import_set_bool(im, TS_FI_MASTER_WEIGHTS, false, im->d16_src, im->d16_origin, err) != 0)
        return -1;
    /* A request's LoRA makes the adapters (fp32) what the moments are of. */
    if (!im->d16_full || opt_prec != NULL ||
        (json_is_number(lora_rank) && json_number_value(lora_rank) > 0))
        return 0;
    return ts_import_set_str(im, TS_FI_OPTIMIZER_PRECISION, "bf16", im->d16_src, im->d16_opt_origin,
                             err);
}

int ts_import_apply_steps(ts_api_req *req, const ts_import *im, ts_api_err *err)
{
    ts_run *r = &req->run;
    unsigned char s = req->source[TS_FI_TOKENS];
    double t;

    if (im->max_steps <= 0)
        return 0;
    if (s != TS_SRC_DEFAULT && s != TS_SRC_PRESET && s != TS_SRC_CATALOGUE) {
        ts_import_note(&req->notes, "%s is not used: tokens is given (%s)", im->steps_origin,
                       ts_api_src_name((ts_api_src)s));
        return 0;
    }
    if (r->global_batch <= 0 || r->seq <= 0) {
        ts_import_note(&req->notes,
                       "%s: the global batch is not known here, so tokens keeps its default "
                       "(give global_batch or gradient_accumulation_steps)",
                       im->steps_origin);
        return 0;
    }
    /* At most 2^40 steps x the run's checked batch and length: a double
     * holds it; the range is tokens' own. */
    t = (double)im->max_steps * (double)r->global_batch * (double)r->seq;
    if (!(t <= ts_fields[TS_FI_TOKENS].maximum)) {
        ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, im->steps_origin,
                       "max_steps %lld x global_batch %lld x seq %lld = %.3g tokens, more than "
                       "%.3g",
                       (long long)im->max_steps, (long long)r->global_batch, (long long)r->seq, t,
                       ts_fields[TS_FI_TOKENS].maximum);
        return -1;
    }
    r->tokens = t;
    req->source[TS_FI_TOKENS] = (unsigned char)im->steps_src;
    ts_import_note(&req->notes,
                   "tokens = max_steps %lld (%s) x global_batch %lld x seq %lld = %.6g",
                   (long long)im->max_steps, im->steps_origin, (long long)r->global_batch,
                   (long long)r->seq, t);
    return 0;
}

/* A base the config's trainer will not shard (q8_origin) under FSDP (hf,
 * zero >= 1) or ZeRO-3 is a 400 there. */
static int settle_sharded(const ts_import *im, const json_t *fw, const json_t *z, ts_api_err *err)
{
    const char *f = json_string_value(fw);
    double zv = json_is_number(z) ? json_number_value(z) : 0;

    if (im->q8_origin[0] == '\0' || f == NULL)
        return 0;
    /* LLaMA-Factory model/model_utils/quantization.py: under ZeRO-3 or
     * FSDP "Only 4-bit quantized model can use fsdp+qlora". */
    if ((strcmp(f, "hf") == 0 && zv >= 1) || (strcmp(f, "deepspeed") == 0 && zv == 3)) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, im->q8_origin,
                       "%s: an 8-bit bitsandbytes base is not sharded by the config's trainer "
                       "(LLaMA-Factory: \"Only 4-bit quantized model can use fsdp+qlora\"); "
                       "quantization_bit 4 is",
                       im->q8_origin);
        return -1;
    }
    return 0;
}

/* The one place the rule lives: an import's liger_kernels (axolotl's
 * LigerPlugin, LLaMA-Factory's enable_liger_kernel) under a final
 * framework other than hf is withdrawn (unless the request gives
 * liger_kernels), said with where that framework came from, and the
 * layers are costed as fused (unless the request gives layer_impl): the
 * kernels still load and fuse the norms, rotary and SwiGLU, whatever the
 * request says of liger_kernels, framework hf's input. */
static int settle_liger(ts_import *im, const json_t *fw, const json_t *const *given,
                        ts_api_err *err)
{
    const json_t *liger = given[TS_FI_LIGER_KERNELS], *layer_impl = given[TS_FI_LAYER_IMPL];
    char origin[TS_IMPORT_ORIGIN_LEN];
    ts_api_src src = im->src[TS_FI_LIGER_KERNELS];

    if (!json_is_true(im->vals[TS_FI_LIGER_KERNELS]) || !json_is_string(fw) ||
        strcmp(json_string_value(fw), "hf") == 0 || (liger != NULL && layer_impl != NULL))
        return 0;
    snprintf(origin, sizeof origin, "%s", im->origin[TS_FI_LIGER_KERNELS]);
    ts_import_note(im->notes,
                   "%s: the Liger kernels under framework %s (%s): liger_kernels is framework "
                   "hf's, so the layers are costed as %s",
                   origin, json_string_value(fw),
                   given[TS_FI_FRAMEWORK] != NULL ? "the request's" : im->origin[TS_FI_FRAMEWORK],
                   layer_impl == NULL ? "fused (layer_impl) instead"
                                      : "the request's layer_impl says");
    /* The same import's own values, replaced (not a clash between two):
     * origin is a copy, as import_put rewrites the member's. */
    if (liger == NULL && import_put(im, TS_FI_LIGER_KERNELS, json_false(), src, origin, err) != 0)
        return -1;
    if (layer_impl == NULL &&
        import_put(im, TS_FI_LAYER_IMPL, json_string("fused"), src, origin, err) != 0)
        return -1;
    return 0;
}

/* Whether the run's model is transformers' (its attention rules apply):
 * framework hf, or DeepSpeed under an import whose trainer loads the
 * model through transformers (axolotl's or LLaMA-Factory's deepspeed:). */
static bool settle_transformers(const ts_import *im, const json_t *fw)
{
    const char *f = json_is_string(fw) ? json_string_value(fw) : "";

    return strcmp(f, "hf") == 0 || (im->transformers && strcmp(f, "deepspeed") == 0);
}

/* transformers' GptOssPreTrainedModel has _supports_sdpa = False (SDPA
 * takes no sinks): loaded as is, gpt-oss trains with eager attention,
 * whose s x s scores are kept; FlashAttention with sinks is a kernel the
 * user loads (attn_implementation), which a request says as attention. */
static int settle_eager(ts_import *im, const json_t *fw, const json_t *const *given,
                        ts_api_err *err)
{
    if (im->eager_origin[0] == '\0' || given[TS_FI_ATTENTION] != NULL ||
        im->vals[TS_FI_ATTENTION] != NULL || !settle_transformers(im, fw))
        return 0;
    ts_import_note(im->notes,
                   "%s: transformers has no SDPA path for gpt-oss's attention sinks, so it trains "
                   "with attention \"eager\" unless a sink-aware kernel is loaded (then send "
                   "attention \"flash\")",
                   im->eager_origin);
    return ts_import_set_str(im, TS_FI_ATTENTION, "eager", im->eager_src, im->eager_origin, err);
}

/* transformers' default attn_implementation is sdpa where the model
 * supports it (PreTrainedModel._check_and_adjust_attn_implementation),
 * and sdpa gets a sliding layer's band as a dense mask (docs/formulas.md,
 * Attention): a transformers model (settle_transformers) with an imported
 * window trains sdpa unless the request or an import names the kernel.  Without a
 * window sdpa and flash cost the same, so nothing is said. */
static int settle_sdpa(ts_import *im, const json_t *fw, const json_t *const *given, ts_api_err *err)
{
    const json_t *w = given[TS_FI_SLIDING_WINDOW] != NULL ? given[TS_FI_SLIDING_WINDOW]
                                                          : im->vals[TS_FI_SLIDING_WINDOW];
    const json_t *seq = given[TS_FI_SEQ] != NULL ? given[TS_FI_SEQ] : im->vals[TS_FI_SEQ];
    char origin[TS_IMPORT_ORIGIN_LEN];

    /* A window wider than the sequence (Phi-3.5's 262144) is no window;
     * the sequence: the request's, an import's, else the default. */
    double s = json_is_number(seq) ? json_number_value(seq) : ts_fields[TS_FI_SEQ].def;

    if (im->vals[TS_FI_SLIDING_WINDOW] == NULL || !json_is_number(w) ||
        !(json_number_value(w) > 0) || json_number_value(w) > s || given[TS_FI_ATTENTION] != NULL ||
        im->vals[TS_FI_ATTENTION] != NULL || !settle_transformers(im, fw))
        return 0;
    snprintf(origin, sizeof origin, "%s", im->origin[TS_FI_SLIDING_WINDOW]);
    ts_import_note(im->notes,
                   "%s: transformers (framework hf, or an axolotl or LLaMA-Factory config's "
                   "DeepSpeed) runs a window with its default sdpa (every key computed): send "
                   "attention flash for flash_attention_2",
                   origin);
    return ts_import_set_str(im, TS_FI_ATTENTION, "sdpa", im->src[TS_FI_SLIDING_WINDOW], origin,
                             err);
}

/* The request's layers over an imported model whose window covers some of
 * its layers (Gemma 3: 22 of 26): the imported count would mean another
 * share, or exceed the layers.  The same share of the request's layers,
 * rounded, said; the request's sliding_layers overrides.  The request's
 * number is used only once it is an integer in layers' range (else its
 * own 400 follows). */
static int settle_window_layers(ts_import *im, const json_t *const *given, ts_api_err *err)
{
    const json_t *lr = given[TS_FI_LAYERS], *li = im->vals[TS_FI_LAYERS];
    const json_t *n = im->vals[TS_FI_SLIDING_LAYERS];
    char origin[TS_IMPORT_ORIGIN_LEN];
    double L, Lr, k, scaled;

    if (lr == NULL || given[TS_FI_SLIDING_LAYERS] != NULL || !json_is_number(lr) ||
        !json_is_number(li) || !json_is_number(n))
        return 0;
    L = json_number_value(li);
    Lr = json_number_value(lr);
    k = json_number_value(n);
    if (!(k > 0) || !(L >= 1) || !(Lr >= 1) || Lr > ts_fields[TS_FI_LAYERS].maximum ||
        Lr != floor(Lr) || Lr == L)
        return 0;
    scaled = floor(k * Lr / L + 0.5);
    snprintf(origin, sizeof origin, "%s", im->origin[TS_FI_SLIDING_LAYERS]);
    ts_import_note(im->notes,
                   "%s: %.0f sliding layers of %.0f, the same share of the request's %.0f "
                   "layers: %.0f (give sliding_layers for the exact pattern)",
                   origin, k, L, Lr, scaled);
    return import_put(im, TS_FI_SLIDING_LAYERS, json_integer((json_int_t)scaled),
                      im->src[TS_FI_SLIDING_LAYERS], origin, err);
}

int ts_import_settle(ts_import *im, const json_t *const *given, ts_api_err *err)
{
    /* The final framework and zero: the request's, else the imports'. */
    const json_t *fw =
        given[TS_FI_FRAMEWORK] != NULL ? given[TS_FI_FRAMEWORK] : im->vals[TS_FI_FRAMEWORK];
    const json_t *z = given[TS_FI_ZERO] != NULL ? given[TS_FI_ZERO] : im->vals[TS_FI_ZERO];

    if (settle_dtype16(im, fw, z, given, err) != 0 || settle_sharded(im, fw, z, err) != 0 ||
        settle_liger(im, fw, given, err) != 0 || settle_eager(im, fw, given, err) != 0 ||
        settle_sdpa(im, fw, given, err) != 0 || settle_window_layers(im, given, err) != 0)
        return -1;
    return 0;
}
