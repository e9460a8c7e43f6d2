/*
 * ts_deepspeed.c - a DeepSpeed JSON config ("deepspeed_config") -> run.
 *
 * Keys follow DeepSpeed's config reference (deepspeed.ai/docs/config-json)
 * and runtime/config.py: train_batch_size = train_micro_batch_size_per_gpu
 * x gradient_accumulation_steps x data-parallel size; any two determine
 * the third, which ts_import_apply_batch() applies (and checks) once dp
 * is known.  "auto" (the
 * Hugging Face Trainer fills it from its own arguments) is not guessed:
 * the member keeps its request/default value and a note says so.  Keys
 * that do not change the estimate are listed in one note.
 */
#include <stdio.h>
#include <string.h>

#include "ts_ckd.h"
#include "ts_import.h"

#define DS_BIG (INT64_C(1) << 40)

static bool is_auto(const json_t *v)
{
    return json_is_string(v) && strcmp(json_string_value(v), "auto") == 0;
}

static void note_auto(ts_import *im, const char *ptr, const char *member)
{
    ts_import_note(im->notes,
                   "%s is \"auto\" (filled by the Hugging Face Trainer): "
                   "%s keeps its request or default value",
                   ptr, member);
}

/* An integer key that may be "auto" (then auto_bit goes into
 * im->ds_auto): 1 set, 0 absent/auto, -1 error. */
static int ds_int(ts_import *im, const ts_import_obj *o, const char *key, int64_t lo, int64_t hi,
                  const char *member, unsigned auto_bit, int64_t *out, ts_api_err *err)
{
    const json_t *v = json_object_get(o->obj, key);
    char ptr[TS_IMPORT_ORIGIN_LEN];

    if (v != NULL && is_auto(v)) {
        ts_import_ptr(ptr, sizeof ptr, o, key);
        note_auto(im, ptr, member);
        im->ds_auto |= auto_bit;
        return 0;
    }
    return ts_import_int(o, key, lo, hi, false, out, err);
}

/* bf16/fp16 {"enabled": bool | "auto"}: 1 enabled, 0 disabled or absent,
 * 2 auto, -1 error. */
static int ds_enabled(ts_import *im, const ts_import_obj *o, const char *key, bool *present,
                      ts_api_err *err)
{
    ts_import_obj sec;
    const json_t *v;
    char ptr[TS_IMPORT_ORIGIN_LEN];
    bool on = false;
    int rc;

    *present = false;
    if ((rc = ts_import_sub(o, key, &sec, err)) <= 0)
        return rc;
    *present = true;
    v = json_object_get(sec.obj, "enabled");
    if (v != NULL && is_auto(v)) {
        ts_import_ptr(ptr, sizeof ptr, &sec, "enabled");
        note_auto(im, ptr, "precision");
        return 2;
    }
    if ((rc = ts_import_bool(&sec, "enabled", &on, err)) < 0)
        return -1;
    /* DeepSpeed: a section without "enabled" is disabled. */
    return on ? 1 : 0;
}

static int ds_precision(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    bool p16, pbf, pbf2;
    int fp16 = ds_enabled(im, o, "fp16", &p16, err);
    int bf16, bf16_legacy;

    if (fp16 < 0)
        return -1;
    if ((bf16 = ds_enabled(im, o, "bf16", &pbf, err)) < 0)
        return -1;
    /* "bfloat16" is the older name of the same section. */
    if ((bf16_legacy = ds_enabled(im, o, "bfloat16", &pbf2, err)) < 0)
        return -1;
    if (bf16 == 0 && pbf2)
        bf16 = bf16_legacy;
    if (fp16 == 1 && bf16 == 1) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, "/deepspeed_config/fp16/enabled",
                       "fp16 and bf16 cannot both be enabled (DeepSpeed refuses this too)");
        return -1;
    }
    if (fp16 == 1)
        return ts_import_set_str(im, TS_FI_PRECISION, "fp16", TS_SRC_DS,
                                 "/deepspeed_config/fp16/enabled", err);
    if (bf16 == 1)
        return ts_import_set_str(
            im, TS_FI_PRECISION, "bf16", TS_SRC_DS,
            pbf ? "/deepspeed_config/bf16/enabled" : "/deepspeed_config/bfloat16/enabled", err);
    if (fp16 == 2 || bf16 == 2)
        return 0;
    /* Neither enabled: DeepSpeed trains in fp32. */
    ts_import_note_about(im->notes, TS_FI_PRECISION, TS_SRC_DS,
                         "/deepspeed_config: neither fp16 nor bf16 is enabled, "
                         "so DeepSpeed trains in fp32 (precision \"fp32\")");
    return ts_import_set_str(im, TS_FI_PRECISION, "fp32", TS_SRC_DS, "/deepspeed_config", err);
}

/* offload_optimizer / offload_param {"device": "cpu" | "nvme" | "none"}. */
static int ds_offload(ts_import *im, const ts_import_obj *z, const char *key, ts_field_id fi,
                      ts_api_err *err)
{
    ts_import_obj sec;
    const char *dev = "none";
    char ptr[TS_IMPORT_ORIGIN_LEN];
    int rc;

    if ((rc = ts_import_sub(z, key, &sec, err)) <= 0)
        return rc;
    if (ts_import_str(&sec, "device", false, &dev, err) < 0)
        return -1;
    ts_import_ptr(ptr, sizeof ptr, &sec, "device");
    if (strcmp(dev, "none") == 0)
        return ts_import_set_bool(im, fi, false, TS_SRC_DS, ptr, err);
    if (strcmp(dev, "cpu") == 0)
        return ts_import_set_bool(im, fi, true, TS_SRC_DS, ptr, err);
    if (strcmp(dev, "nvme") == 0) {
        ts_import_note(im->notes,
                       "%s \"nvme\": modelled as host offload; the "
                       "host_bytes figures are what ZeRO-Infinity stages through "
                       "pinned host memory to NVMe",
                       ptr);
        return ts_import_set_bool(im, fi, true, TS_SRC_DS, ptr, err);
    }
    ts_api_err_set(err, TS_PROB_INVALID_ENUM, ptr, "%s must be \"none\", \"cpu\" or \"nvme\"", ptr);
    return -1;
}

static int ds_zero(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    ts_import_obj z;
    int64_t stage = 0;
    int rc;

    if ((rc = ts_import_sub(o, "zero_optimization", &z, err)) < 0)
        return -1;
    if (rc == 0) {
        /* No section: ZeRO is off. */
        return ts_import_set_int(im, TS_FI_ZERO, 0, TS_SRC_DS, "/deepspeed_config", err);
    }
    if ((rc = ts_import_int(&z, "stage", 0, 3, false, &stage, err)) < 0)
        return -1;
    if (ts_import_set_int(im, TS_FI_ZERO, stage, TS_SRC_DS,
                          rc > 0 ? "/deepspeed_config/zero_optimization/stage"
                                 : "/deepspeed_config/zero_optimization",
                          err) != 0)
        return -1;
    if (ds_offload(im, &z, "offload_optimizer", TS_FI_OFFLOAD_OPTIMIZER, err) < 0 ||
        ds_offload(im, &z, "offload_param", TS_FI_OFFLOAD_PARAMS, err) < 0)
        return -1;
    return 0;
}

static int ds_optimizer(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    static const struct {
        const char *ds, *ours;
    } map[] = {
        { "Adam", "adam" },    { "AdamW", "adamw" }, { "FusedAdam", "adam" },
        { "CPUAdam", "adam" }, { "Lion", "lion" },   { "SGD", "sgd" },
    };
    ts_import_obj opt;
    const char *type = NULL;
    size_t i;
    int rc;

    if ((rc = ts_import_sub(o, "optimizer", &opt, err)) <= 0)
        return rc;
    if ((rc = ts_import_str(&opt, "type", false, &type, err)) <= 0)
        return rc;
    for (i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].ds, type) == 0)
            return ts_import_set_str(im, TS_FI_OPTIMIZER, map[i].ours, TS_SRC_DS,
                                     "/deepspeed_config/optimizer/type", err);
    ts_import_note(im->notes,
                   "/deepspeed_config/optimizer/type \"%.*s\" has no "
                   "state model here: optimizer keeps its request or default value",
                   ts_utf8_prec(type, 40), type);
    return 0;
}

static int ds_checkpointing(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    ts_import_obj ac;
    bool on = false;
    int rc;

    if ((rc = ts_import_sub(o, "activation_checkpointing", &ac, err)) <= 0)
        return rc;
    /* The section configures deepspeed.checkpointing; the model code
     * decides which blocks it wraps.  Whole-layer checkpointing is the
     * usual use (Megatron-DeepSpeed), so: full recompute. */
    ts_import_note(im->notes, "/deepspeed_config/activation_checkpointing: taken as "
                              "full recompute of every layer (recompute \"full\")");
    if (ts_import_bool(&ac, "partition_activations", &on, err) < 0)
        return -1;
    if (on)
        ts_import_note(im->notes, "/deepspeed_config/activation_checkpointing/"
                                  "partition_activations: the split of checkpoints across "
                                  "tensor-parallel ranks is not modelled");
    on = false;
    if (ts_import_bool(&ac, "cpu_checkpointing", &on, err) < 0)
        return -1;
    if (on)
        ts_import_note(im->notes, "/deepspeed_config/activation_checkpointing/"
                                  "cpu_checkpointing: checkpoints moved to host memory are "
                                  "still counted on the GPU (an upper bound)");
    return ts_import_set_str(im, TS_FI_RECOMPUTE, "full", TS_SRC_DS,
                             "/deepspeed_config/activation_checkpointing", err);
}

static void ds_ignored(ts_import *im, const json_t *cfg)
{
    static const char *const used[] = { "train_batch_size",
                                        "train_micro_batch_size_per_gpu",
                                        "gradient_accumulation_steps",
                                        "fp16",
                                        "bf16",
                                        "bfloat16",
                                        "zero_optimization",
                                        "optimizer",
                                        "activation_checkpointing",
                                        NULL };
    char list[TS_API_NOTE_LEN - 80];
    size_t n = 0;
    const char *k;
    const json_t *v;

    list[0] = '\0';
    json_object_foreach((json_t *)cfg, k, v)
    {
        const char *const *u;
        int w;

        for (u = used; *u != NULL && strcmp(*u, k) != 0; u++)
            ;
        if (*u != NULL || n >= sizeof list)
            continue;
        w = snprintf(list + n, sizeof list - n, "%s%.*s", n ? ", " : "", ts_utf8_prec(k, 40), k);
        if (w > 0)
            n += (size_t)w;
    }
    (void)v;
    if (n > 0) {
        ts_utf8_trim(list, strlen(list));
        ts_import_note(im->notes,
                       "/deepspeed_config: keys with no effect on the "
                       "estimate: %s",
                       list);
    }
}

/* DeepSpeed's batch rule, applied once dp is known (deepspeed/runtime/
 * config.py _set_batch_related_parameters and _batch_assertion
 * @38327e07f6cd39b63418f60cedd1651b0be3e7c3): train_batch_size = micro x
 * gradient_accumulation_steps x dp (DeepSpeed's world_size, the
 * data-parallel group); any two determine the third by floor division in
 * DeepSpeed's order, train_batch_size alone means gas 1 and micro =
 * train_batch_size / dp, micro alone means gas 1 and train_batch_size =
 * micro x dp; then all three must be >= 1 and agree.  The micro-batch in
 * use may be the request's or another import's: DeepSpeed would be
 * handed that one.  A key left "auto" is filled by the Hugging Face
 * Trainer, so nothing is derived from its absence.  Each derived value is
 * said in a note. */

/* An origin's JSON pointer, for a 400: "/deepspeed_config/train_batch_size",
 * or "/megatron_args" for a --deepspeed_config heredoc's value
 * ("/megatron_args (the --deepspeed_config heredoc, ...)", ts_megatron.c). */
static void origin_ptr(const char *origin, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s", (int)strcspn(origin, " "), origin);
}

/* Which config a value came from, for a note: "/deepspeed_config", or a
 * --deepspeed_config heredoc's origin as ts_megatron.c wrote it. */
static const char *origin_doc(const char *origin)
{
    return strncmp(origin, "/deepspeed_config", 17) == 0 ? "/deepspeed_config" : origin;
}

/* Where the micro-batch in use came from, for a detail. */
static const char *micro_from(const ts_api_req *req, const ts_import *im)
{
    switch (req->source[TS_FI_MICRO_BATCH]) {
    case TS_SRC_REQUEST:
        return "/micro_batch";
    case TS_SRC_DEFAULT:
    case TS_SRC_PRESET:
        return "default";
    default:
        return im->origin[TS_FI_MICRO_BATCH];
    }
}

/* No train_batch_size: global_batch = micro x gas x dp.  Past
 * global_batch's range the product is the imported keys' doing, so the
 * 400 names the accumulation key, not a /global_batch nobody sent. */
static int ds_global_from(ts_api_req *req, const ts_import *im, int64_t dp, ts_api_err *err)
{
    ts_run *r = &req->run;
    int64_t hi = (int64_t)ts_fields[TS_FI_GLOBAL_BATCH].maximum;
    int64_t t = ts_ckd_mul_sat(ts_ckd_mul_sat(r->micro_batch, im->ds_gas), dp);

    if (t > hi) {
        char ptr[TS_IMPORT_ORIGIN_LEN];

        origin_ptr(im->gas_origin, ptr, sizeof ptr);
        ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, ptr,
                       "micro-batch %lld (%s) x gradient_accumulation_steps %lld (%s) x "
                       "dp %lld = %lld is more than global_batch's maximum %lld",
                       (long long)r->micro_batch, micro_from(req, im), (long long)im->ds_gas,
                       im->gas_origin, (long long)dp, (long long)t, (long long)hi);
        return -1;
    }
    r->global_batch = t;
    req->source[TS_FI_GLOBAL_BATCH] = (unsigned char)im->gas_src;
    ts_import_note(&req->notes,
                   "global_batch = micro-batch %lld x "
                   "gradient_accumulation_steps %lld (%s) x dp %lld = %lld",
                   (long long)r->micro_batch, (long long)im->ds_gas, im->gas_origin, (long long)dp,
                   (long long)t);
    return 0;
}

/* train_batch_size given (it is global_batch): derive what is missing. */
static int ds_from_train_batch(ts_api_req *req, const ts_import *im, bool has_m, int64_t dp,
                               ts_api_err *err)
{
    ts_run *r = &req->run;
    int64_t t = r->global_batch, m = r->micro_batch, g = im->ds_gas;
    bool has_g = g > 0;
    /* train_batch_size's origin: the key, or a --deepspeed_config heredoc */
    const char *tbs = origin_doc(im->origin[TS_FI_GLOBAL_BATCH]);
    char ptr[TS_IMPORT_ORIGIN_LEN];

    origin_ptr(im->origin[TS_FI_GLOBAL_BATCH], ptr, sizeof ptr);

    if (has_m && !has_g) {
        g = t / m / dp;
    } else if (!has_m && has_g) {
        m = t / dp / g;
    } else if (!has_m) {
        if (im->ds_auto & TS_DS_AUTO_GAS)
            return 0; /* the Trainer's accumulation: nothing to derive from */
        g = 1;
        m = t / dp;
    }
    if (m < 1 || g < 1) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, ptr,
                       "train_batch_size %lld with dp %lld gives micro-batch %lld and "
                       "gradient_accumulation_steps %lld; DeepSpeed needs each >= 1",
                       (long long)t, (long long)dp, (long long)m, (long long)g);
        return -1;
    }
    if (t != ts_ckd_mul_sat(ts_ckd_mul_sat(m, g), dp)) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, ptr,
                       "train_batch_size %lld != micro-batch %lld (%s) x "
                       "gradient_accumulation_steps %lld x dp %lld = %lld (DeepSpeed "
                       "asserts this)",
                       (long long)t, (long long)m,
                       has_m ? micro_from(req, im) : "train_batch_size / dp", (long long)g,
                       (long long)dp, (long long)ts_ckd_mul_sat(ts_ckd_mul_sat(m, g), dp));
        return -1;
    }
    if (has_m && !has_g)
        ts_import_note(&req->notes,
                       "%s: gradient_accumulation_steps = "
                       "train_batch_size %lld / micro-batch %lld / dp %lld = %lld, as "
                       "DeepSpeed derives it",
                       tbs, (long long)t, (long long)m, (long long)dp, (long long)g);
    else if (!has_m && has_g)
        ts_import_note(&req->notes,
                       "%s: micro-batch = train_batch_size "
                       "%lld / dp %lld / gradient_accumulation_steps %lld = %lld, as "
                       "DeepSpeed derives it",
                       tbs, (long long)t, (long long)dp, (long long)g, (long long)m);
    else if (!has_m)
        ts_import_note(&req->notes,
                       "%s: train_batch_size %lld alone: "
                       "gradient_accumulation_steps 1 and micro-batch %lld / dp %lld = "
                       "%lld, as DeepSpeed sets them",
                       tbs, (long long)t, (long long)t, (long long)dp, (long long)m);
    if (!has_m) {
        r->micro_batch = m;
        req->source[TS_FI_MICRO_BATCH] = TS_SRC_DS;
    }
    return 0;
}

int ts_import_apply_batch(ts_api_req *req, const ts_import *im, ts_api_err *err)
{
    ts_run *r = &req->run;
    int64_t mp = ts_ckd_mul_sat(ts_ckd_mul_sat(r->tp, r->pp), r->cp);
    int64_t dp = r->dp > 0 ? r->dp : (mp > 0 && r->gpus % mp == 0 ? r->gpus / mp : 0);
    unsigned char gsrc = req->source[TS_FI_GLOBAL_BATCH];
    bool has_m = req->source[TS_FI_MICRO_BATCH] != TS_SRC_DEFAULT;

    if (dp <= 0)
        return 0;
    if (gsrc == TS_SRC_REQUEST || gsrc == TS_SRC_MEGATRON) {
        if (im->ds_gas > 0)
            ts_import_note(&req->notes, "%s is not used: global_batch is given", im->gas_origin);
        return 0;
    }
    if (im->ds_train_batch && gsrc == TS_SRC_DS)
        return ds_from_train_batch(req, im, has_m, dp, err);
    if (im->ds_gas > 0)
        return ds_global_from(req, im, dp, err);
    /* DeepSpeed's micro-batch alone: gas 1, train_batch_size = micro x dp. */
    if (req->source[TS_FI_MICRO_BATCH] == TS_SRC_DS &&
        (im->ds_auto & (TS_DS_AUTO_TBS | TS_DS_AUTO_GAS)) == 0) {
        r->global_batch = ts_ckd_mul_sat(r->micro_batch, dp);
        req->source[TS_FI_GLOBAL_BATCH] = TS_SRC_DS;
        ts_import_note(&req->notes,
                       "%s: train_micro_batch_size_per_gpu "
                       "%lld alone: gradient_accumulation_steps 1 and train_batch_size = "
                       "micro-batch %lld x dp %lld = %lld, as DeepSpeed sets them",
                       origin_doc(im->origin[TS_FI_MICRO_BATCH]), (long long)r->micro_batch,
                       (long long)r->micro_batch, (long long)dp, (long long)r->global_batch);
    }
    return 0;
}

int ts_import_ds(ts_import *im, const json_t *cfg, ts_api_err *err)
{
    ts_import_obj root = { cfg, "/deepspeed_config" };
    int64_t v = 0;
    int rc;

    if (ts_import_check_size(cfg, "/deepspeed_config", err) != 0)
        return -1;
    if (ts_import_set_str(im, TS_FI_FRAMEWORK, "deepspeed", TS_SRC_DS, "/deepspeed_config", err) !=
        0)
        return -1;
    if ((rc = ds_int(im, &root, "train_micro_batch_size_per_gpu", 1, 1048576, "micro_batch",
                     TS_DS_AUTO_MICRO, &v, err)) < 0)
        return -1;
    if (rc > 0 && ts_import_set_int(im, TS_FI_MICRO_BATCH, v, TS_SRC_DS,
                                    "/deepspeed_config/train_micro_batch_size_per_gpu", err) != 0)
        return -1;
    if ((rc = ds_int(im, &root, "gradient_accumulation_steps", 1, 1048576, "global_batch",
                     TS_DS_AUTO_GAS, &v, err)) < 0)
        return -1;
    if (rc > 0) {
        if (im->ds_gas > 0 && im->ds_gas != v)
            ts_import_note(im->notes,
                           "gradient_accumulation_steps: %lld from "
                           "/deepspeed_config overrides %lld from %s",
                           (long long)v, (long long)im->ds_gas, im->gas_origin);
        im->ds_gas = v;
        im->gas_src = TS_SRC_DS;
        snprintf(im->gas_origin, sizeof im->gas_origin,
                 "/deepspeed_config/gradient_accumulation_steps");
    }
    if ((rc = ds_int(im, &root, "train_batch_size", 1, DS_BIG, "global_batch", TS_DS_AUTO_TBS, &v,
                     err)) < 0)
        return -1;
    if (rc > 0) {
        if (ts_import_set_int(im, TS_FI_GLOBAL_BATCH, v, TS_SRC_DS,
                              "/deepspeed_config/train_batch_size", err) != 0)
            return -1;
        im->ds_train_batch = true;
    }
    if (ds_precision(im, &root, err) < 0 || ds_zero(im, &root, err) < 0 ||
        ds_optimizer(im, &root, err) < 0 || ds_checkpointing(im, &root, err) < 0)
        return -1;
    ds_ignored(im, cfg);
    return 0;
}
