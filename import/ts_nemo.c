/*
 * ts_nemo.c        - a NeMo training YAML ("nemo_config") -> run.
 *
 * The form of NeMo-Framework-Launcher's launcher_scripts/conf/training/
 * <family>/<model>.yaml (@26e42fa91d9e608897ce485b4911c263a4b57008), which
 * NeMo's megatron_gpt_pretraining.py reads: trainer.num_nodes x
 * trainer.devices GPUs and trainer.precision; under model: the shape
 * (num_layers, hidden_size, ffn_hidden_size, num_attention_heads,
 * num_query_groups, kv_channels, normalization, bias, activation,
 * position_embedding_type, max_position_embeddings,
 * share_embeddings_and_output_weights, num_moe_experts, moe_router_topk),
 * the layout (micro_batch_size, global_batch_size, the tensor / pipeline /
 * virtual pipeline / context / expert parallel sizes, sequence_parallel,
 * overlap_p2p_comm,
 * activations_checkpoint_granularity, fp8, optim.name, fsdp), the
 * tokenizer and peft (LoRA: ts_nemo_peft.c).  Read by the YAML reader (ts_yaml.c: PyYAML's safe_load
 * rules, which OmegaConf's loader follows), then mapped with the typed
 * getters, so an error names /nemo_config/model/<key>.
 *
 * The launcher's files use OmegaConf interpolations: ${.hidden_size} (a
 * sibling key), ${training.model.x} (the file is composed under
 * "training"), and the resolvers launcher_scripts/main.py registers:
 * multiply (x * y), divide_ceil (ceil(x / y)), divide_floor (floor(x / y))
 * (ffn_hidden_size: ${multiply:4, ${.hidden_size}}).  Those are evaluated
 * here, bounded in depth; any other (${data_dir}) is not known, a 400 in
 * a key this reads.
 *
 * Defaults are NeMo's where the launcher's files leave a key out
 * (nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py
 * @b1f5aa3a811edfbdf5302fa71f4584a7f9c50353: learned_absolute positions,
 * tied embeddings; megatron_base_model.py build_transformer_config
 * @7ed545578ff57af0401a5374ce1cead2874c2659: bias True, activation gelu,
 * gated when the activation's name ends in "glu", LayerNorm;
 * _vocab_size_with_padding there pads the tokenizer's vocabulary to a
 * multiple of make_vocab_size_divisible_by (128) x tp, as Megatron does).
 * Keys this does not read are listed in a note, except those known to
 * change nothing modelled here (learning rate, fusions, logging).
 *
 * Built only with libyaml; without it ts_import_noyaml.c makes
 * nemo_config a 400 saying so.
 *
 * This file: the interpolations, the typed getters, trainer:, the keys
 * not read and the entry point; model:'s shape, layout and vocabulary are
 * in ts_nemo_model.c, the shared types in ts_nemo_int.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_catalogue.h"
#include "ts_ckd.h"
#include "ts_import.h"
#include "ts_nemo_int.h"

#include "ts_yaml.h"

/* ---- OmegaConf interpolations -------------------------------------- */

#define INTERP_DEPTH_MAX 8

typedef struct interp {
    const json_t *root;
    const json_t *here; /* the mapping holding the value, for ${.key} */
    const char *p;
    unsigned depth;
} interp;

static bool interp_expr(interp *x, int64_t *out);

/* The value at a dotted path (the launcher's "training." dropped), and
 * the mapping that holds it. */
static const json_t *path_get(const json_t *from, const char *path, size_t len,
                              const json_t **parent)
{
    const json_t *v = from;
    size_t i = 0;

    if (len > 9 && strncmp(path, "training.", 9) == 0) {
        path += 9;
        len -= 9;
    }
    *parent = from;
    while (i < len && v != NULL) {
        char key[64];
        size_t k = 0;

        while (i < len && path[i] != '.') {
            if (k + 1 >= sizeof key)
                return NULL;
            key[k++] = path[i++];
        }
        key[k] = '\0';
        if (i < len)
            i++;
        *parent = v;
        v = json_is_object(v) ? json_object_get(v, key) : NULL;
    }
    return v;
}

/* v as an integer: a JSON integer, or an interpolation string. */
static bool interp_value(interp *x, const json_t *v, const json_t *parent, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        interp sub = { x->root, parent, s, x->depth };
        bool ok;

        if (s[0] != '$' || s[1] != '{')
            return false;
        ok = interp_expr(&sub, out);
        while (*sub.p == ' ')
            sub.p++;
        return ok && *sub.p == '\0';
    }
    return false;
}

/* An operand of a resolver: an integer literal or ${...}. */
static bool interp_operand(interp *x, int64_t *out)
{
    while (*x->p == ' ')
        x->p++;
    if (x->p[0] == '$' && x->p[1] == '{')
        return interp_expr(x, out);
    if ((*x->p >= '0' && *x->p <= '9') || (*x->p == '-' && x->p[1] >= '0' && x->p[1] <= '9')) {
        char *end;
        long long v = strtoll(x->p, &end, 10);

        if (*end == '.')
            return false; /* a float: not a count */
        x->p = end;
        *out = (int64_t)v;
        return true;
    }
    return false;
}

/* x->p at "${": its integer value; false when it is not one read here. */
static bool interp_expr(interp *x, int64_t *out)
{
    const char *q;
    bool ok = false;

    if (++x->depth > INTERP_DEPTH_MAX)
        return false;
    x->p += 2;
    for (q = x->p; (*q >= 'a' && *q <= 'z') || *q == '_'; q++)
        ;
    if (*q == ':' && q > x->p) {
        size_t nl = (size_t)(q - x->p);
        int64_t a = 0, b = 0;
        char name[16];

        snprintf(name, sizeof name, "%.*s", (int)(nl < sizeof name ? nl : sizeof name - 1), x->p);
        x->p = q + 1;
        if (!interp_operand(x, &a))
            return false;
        while (*x->p == ' ')
            x->p++;
        if (*x->p != ',')
            return false;
        x->p++;
        if (!interp_operand(x, &b))
            return false;
        while (*x->p == ' ')
            x->p++;
        if (*x->p != '}')
            return false;
        x->p++;
        if (strcmp(name, "multiply") == 0) {
            ok = !ts_ckd_mul(out, a, b);
        } else if ((strcmp(name, "divide_ceil") == 0 || strcmp(name, "divide_floor") == 0) &&
                   b != 0 && !(a == INT64_MIN && b == -1)) {
            /* Python's math.ceil / math.floor of a true division */
            int64_t q0 = a / b, r0 = a % b;

            if (r0 != 0 && ((r0 < 0) != (b < 0)))
                q0--; /* floor */
            if (name[7] == 'c' && r0 != 0)
                q0++;
            *out = q0;
            ok = true;
        }
    } else {
        const char *e = strchr(x->p, '}');
        const json_t *parent = NULL, *v;

        if (e == NULL)
            return false;
        if (x->p[0] == '.') {
            const char *key = x->p + 1;

            v = path_get(x->here, key, (size_t)(e - key), &parent);
        } else {
            v = path_get(x->root, x->p, (size_t)(e - x->p), &parent);
        }
        x->p = e + 1;
        ok = v != NULL && interp_value(x, v, parent, out);
    }
    x->depth--;
    return ok;
}

/* ---- typed getters that follow interpolations ---------------------- */

static void ptr_of(char *buf, size_t size, const ts_import_obj *o, const char *key)
{
    ts_import_ptr(buf, size, o, key);
}

/* An integer key in [lo, hi]: 1 present, 0 absent/null, -1 error. */
int nemo_int(nemo *n, const ts_import_obj *o, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    const json_t *v = json_object_get(o->obj, key);

    if (json_is_string(v) && strncmp(json_string_value(v), "${", 2) == 0) {
        interp x = { n->root, o->obj, NULL, 0 };
        char ptr[TS_IMPORT_ORIGIN_LEN];
        int64_t r;

        ptr_of(ptr, sizeof ptr, o, key);
        if (!interp_value(&x, v, o->obj, &r)) {
            const char *s = json_string_value(v);

            ts_api_err_set(n->err, TS_PROB_INVALID_VALUE, ptr,
                           "%s is '%.*s', an interpolation that is not resolved here (only "
                           "${.key}, ${training.path} and the launcher's multiply, "
                           "divide_ceil, divide_floor are): give the value",
                           ptr, ts_utf8_prec(s, 80), s);
            return -1;
        }
        if (r < lo || r > hi) {
            ts_api_err_set(n->err, TS_PROB_OUT_OF_RANGE, ptr,
                           "%s must be an integer from %lld to %lld, got %lld (from %s)", ptr,
                           (long long)lo, (long long)hi, (long long)r, json_string_value(v));
            return -1;
        }
        *out = r;
        return 1;
    }
    return ts_import_int(o, key, lo, hi, false, out, n->err);
}

/* A boolean key; YAML 1.1's yes/no/on/off arrive as JSON booleans. */
int nemo_bool(nemo *n, const ts_import_obj *o, const char *key, bool *out)
{
    return ts_import_bool(o, key, out, n->err);
}

int nemo_str(nemo *n, const ts_import_obj *o, const char *key, const char **out)
{
    return ts_import_str(o, key, false, out, n->err);
}

/* A number key (dropout): 1, 0, -1. */
int nemo_num(nemo *n, const ts_import_obj *o, const char *key, double *out)
{
    const json_t *v = json_object_get(o->obj, key);
    char ptr[TS_IMPORT_ORIGIN_LEN];

    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_number(v)) {
        ptr_of(ptr, sizeof ptr, o, key);
        ts_api_err_set(n->err, TS_PROB_INVALID_TYPE, ptr, "%s must be a number", ptr);
        return -1;
    }
    *out = json_number_value(v);
    return 1;
}

/* ---- setting members ------------------------------------------------ */

int nemo_set_i(nemo *n, ts_field_id fi, int64_t v, const ts_import_obj *o, const char *key)
{
    char ptr[TS_IMPORT_ORIGIN_LEN];

    ptr_of(ptr, sizeof ptr, o, key);
    return ts_import_set_int(n->im, fi, v, TS_SRC_NEMO, ptr, n->err);
}

int nemo_set_b(nemo *n, ts_field_id fi, bool v, const ts_import_obj *o, const char *key)
{
    char ptr[TS_IMPORT_ORIGIN_LEN];

    ptr_of(ptr, sizeof ptr, o, key);
    return ts_import_set_bool(n->im, fi, v, TS_SRC_NEMO, ptr, n->err);
}

int nemo_set_s(nemo *n, ts_field_id fi, const char *v, const ts_import_obj *o, const char *key)
{
    char ptr[TS_IMPORT_ORIGIN_LEN];

    ptr_of(ptr, sizeof ptr, o, key);
    return ts_import_set_str(n->im, fi, v, TS_SRC_NEMO, ptr, n->err);
}

/* Integer keys that map one to one (model:). */
static int direct(nemo *n, const ts_import_obj *m)
{
    static const struct {
        const char *key;
        ts_field_id fi;
    } map[] = {
        { "num_layers", TS_FI_LAYERS },
        { "hidden_size", TS_FI_HIDDEN },
        { "num_attention_heads", TS_FI_HEADS },
        { "ffn_hidden_size", TS_FI_FFN },
        { "micro_batch_size", TS_FI_MICRO_BATCH },
        { "global_batch_size", TS_FI_GLOBAL_BATCH },
        { "tensor_model_parallel_size", TS_FI_TP },
        { "pipeline_model_parallel_size", TS_FI_PP },
        { "context_parallel_size", TS_FI_CP },
        { "expert_model_parallel_size", TS_FI_EP },
        { "num_moe_experts", TS_FI_EXPERTS },
        { "moe_router_topk", TS_FI_TOP_K },
        { "moe_ffn_hidden_size", TS_FI_MOE_FFN },
    };
    size_t k;

    for (k = 0; k < sizeof map / sizeof map[0]; k++) {
        const ts_api_field *f = &ts_fields[map[k].fi];
        int64_t v = 0;
        int rc = nemo_int(n, m, map[k].key, (int64_t)f->minimum, (int64_t)f->maximum, &v);

        if (rc < 0 || (rc > 0 && nemo_set_i(n, map[k].fi, v, m, map[k].key) != 0))
            return -1;
    }
    return 0;
}

/* ---- trainer ----------------------------------------------------------- */

static int trainer(nemo *n, const ts_import_obj *t, int64_t *max_steps)
{
    const json_t *prec = json_object_get(t->obj, "precision");
    int64_t nodes = 1, devices = 0;
    int rc, rd;

    if (prec != NULL && !json_is_null(prec)) {
        /* Lightning's names: 16 / "16-mixed" fp16, "bf16" / "bf16-mixed"
         * bf16, 32 / "32-true" fp32. */
        const char *p = json_string_value(prec);
        const char *ours = NULL;

        if (json_is_integer(prec))
            ours = json_integer_value(prec) == 16   ? "fp16"
                   : json_integer_value(prec) == 32 ? "fp32"
                                                    : NULL;
        else if (p != NULL)
            ours = strncmp(p, "bf16", 4) == 0                           ? "bf16"
                   : strcmp(p, "16") == 0 || strcmp(p, "16-mixed") == 0 ? "fp16"
                   : strcmp(p, "32") == 0 || strcmp(p, "32-true") == 0  ? "fp32"
                                                                        : NULL;
        if (ours == NULL) {
            ts_api_err_set(n->err, TS_PROB_INVALID_VALUE, NEMO_PTR "/trainer/precision",
                           "/nemo_config/trainer/precision takes 16, 16-mixed, bf16, "
                           "bf16-mixed or 32");
            return -1;
        }
        if (nemo_set_s(n, TS_FI_PRECISION, ours, t, "precision") != 0)
            return -1;
    }
    if ((rc = nemo_int(n, t, "num_nodes", 1, 1048576, &nodes)) < 0 ||
        (rd = nemo_int(n, t, "devices", 1, 1048576, &devices)) < 0)
        return -1;
    if (rd > 0) {
        char origin[TS_IMPORT_ORIGIN_LEN];
        int64_t gpus = ts_ckd_mul_sat(nodes, devices);

        snprintf(origin, sizeof origin, NEMO_PTR "/trainer (num_nodes %lld x devices %lld)",
                 (long long)nodes, (long long)devices);
        if (ts_import_set_int(n->im, TS_FI_GPUS, gpus, TS_SRC_NEMO, origin, n->err) != 0)
            return -1;
    } else if (json_object_get(t->obj, "devices") != NULL) {
        ts_import_note(n->im->notes, NEMO_PTR "/trainer/devices is not a count: the GPU "
                                              "count is not read");
    }
    if (nemo_int(n, t, "max_steps", 1, INT64_C(1) << 40, max_steps) < 0)
        return -1;
    return 0;
}

/* ---- keys not read ---------------------------------------------------- */

/* model: keys read above, or known to change nothing modelled here. */
static const char *const model_known[] = {
    "num_layers", "hidden_size", "num_attention_heads", "ffn_hidden_size", "micro_batch_size",
    "global_batch_size", "tensor_model_parallel_size", "pipeline_model_parallel_size",
    "context_parallel_size", "expert_model_parallel_size", "num_moe_experts", "moe_router_topk",
    "moe_ffn_hidden_size", "make_vocab_size_divisible_by", "tokenizer", "normalization",
    "activation", "position_embedding_type", "bias", "qkv_bias",
    "share_embeddings_and_output_weights", "num_query_groups", "kv_channels",
    "max_position_embeddings", "encoder_seq_length", "hidden_dropout", "attention_dropout",
    "ffn_dropout", "sequence_parallel", "virtual_pipeline_model_parallel_size", "data",
    "activations_checkpoint_granularity", "activations_checkpoint_method",
    "activations_checkpoint_num_layers", "fp8", "fp8_params", "activation_func_fp8_input_store",
    "use_flash_attention", "fsdp", "fsdp_sharding_strategy", "optim", "peft", "ub_tp_comm_overlap",
    "cpu_offloading", "cpu_offloading_num_layers", "cpu_offloading_activations",
    "cpu_offloading_weights",
    /* no effect on memory, time or checkpoints as modelled */
    "mcore_gpt", "rampup_batch_size", "init_method_std", "use_scaled_init_method",
    "apply_query_key_layer_scaling", "layernorm_epsilon", "do_layer_norm_weight_decay",
    "pre_process", "post_process", "persist_layer_norm", "headscale", "transformer_block_type",
    "openai_gelu", "normalize_attention_scores", "rotary_percentage", "rotary_base",
    "apply_rope_fusion", "cross_entropy_loss_fusion", "attention_type", "native_amp_init_scale",
    "native_amp_growth_interval", "hysteresis", "fp32_residual_connection", "fp16_lm_cross_entropy",
    "megatron_amp_O2", "grad_allreduce_chunk_size_mb", "grad_div_ar_fusion",
    "gradient_accumulation_fusion", "bias_activation_fusion", "bias_dropout_add_fusion",
    "masked_softmax_fusion", "seed", "resume_from_checkpoint", "use_cpu_initialization",
    "onnx_safe", "apex_transformer_log_level", "gradient_as_bucket_view", "sync_batch_comm",
    "num_micro_batches_with_partial_activation_checkpoints",
    "activations_checkpoint_layers_per_pipeline", "deterministic_mode", "transformer_engine",
    "fp8_e4m3", "fp8_hybrid", "fp8_margin", "fp8_interval", "fp8_amax_history_len",
    "fp8_amax_compute_algo", "fp8_wgrad", "gc_interval", "nsys_profile", "overlap_p2p_comm",
    "batch_p2p_comm", "fsdp_grad_reduce_dtype", "fsdp_sharded_checkpoint", "sharp", "name",
    "tp_comm_overlap_ag", "tp_comm_overlap_rs", "ub_tp_comm_overlap_cfg",
    "seq_len_interpolation_factor", "moe_aux_loss_coeff", "moe_router_load_balancing_type",
    "moe_token_dispatcher_type", "moe_grouped_gemm", "moe_z_loss_coeff", "moe_input_jitter_eps",
    "moe_router_pre_softmax", "moe_per_layer_logging", "moe_router_score_function",
    "attention_backend", "defer_embedding_wgrad_compute", "wgrad_deferral_limit",
    "hidden_size_per_attention_head", "precision", "layernorm_zero_centered_gamma", NULL
};

static void note_unread(nemo *n, const ts_import_obj *m)
{
    char list[TS_API_NOTE_LEN - 64] = "";
    const char *key;
    const json_t *v;
    size_t count = 0;

    json_object_foreach((json_t *)m->obj, key, v)
    {
        const char *const *k;
        size_t len = strlen(list);

        (void)v;
        for (k = model_known; *k != NULL && strcmp(*k, key) != 0; k++)
            ;
        if (*k != NULL)
            continue;
        count++;
        if (len + 4 < sizeof list)
            snprintf(list + len, sizeof list - len, "%s%.*s", len ? ", " : "",
                     ts_utf8_prec(key, 48), key);
    }
    if (count > 0) {
        ts_utf8_trim(list, strlen(list));
        ts_import_note(n->im->notes, NEMO_PTR "/model: keys not read: %s", list);
    }
}

/* NeMo's Mamba and hybrid models (MegatronMambaModel: NeMo@8cfedd72
 * examples/nlp/language_modeling/conf/megatron_mamba_config.yaml) share
 * the GPT keys (num_layers, hidden_size, ffn_hidden_size, ...) and add
 * these; hybrid_override_pattern null still says Mamba (every layer is
 * one when no pattern or ratio asks for attention).  Read as a
 * transformer they would describe another model: refused at the key,
 * as the HF and Megatron importers refuse theirs. */
static int nemo_mamba(nemo *n, const ts_import_obj *m)
{
    static const char *const keys[] = { "hybrid_override_pattern", "mamba_ssm_ngroups",
                                        "hybrid_attention_ratio", "hybrid_mlp_ratio" };
    char ptr[TS_IMPORT_ORIGIN_LEN];
    size_t i;

    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (json_object_get(m->obj, keys[i]) == NULL)
            continue;
        ts_import_ptr(ptr, sizeof ptr, m, keys[i]);
        ts_api_err_set(n->err, TS_PROB_UNSUPPORTED_MODEL_TYPE, ptr,
                       "%s is a key of NeMo's Mamba / hybrid models (megatron_mamba): "
                       "state-space layers are not modelled (transformer layers only)",
                       ptr);
        return -1;
    }
    return 0;
}

/* ---- the document ------------------------------------------------------ */

static int nemo_map(ts_import *im, const json_t *cfg, ts_api_err *err)
{
    nemo n = { im, cfg, err };
    ts_import_obj root = { cfg, NEMO_PTR };
    ts_import_obj m, t;
    int64_t max_steps = 0, tp = 1;
    bool hf = ts_import_from(im, TS_FI_LAYERS, TS_SRC_HF);
    bool model;
    int rm, rt, lora;

    if ((rm = ts_import_sub(&root, "model", &m, err)) < 0 ||
        (rt = ts_import_sub(&root, "trainer", &t, err)) < 0)
        return -1;
    if (rm == 0 && rt == 0) {
        ts_api_err_set(err, TS_PROB_INVALID_VALUE, NEMO_PTR,
                       "nemo_config has neither model: nor trainer: (a NeMo training YAML, "
                       "conf/training/<family>/<model>.yaml)");
        return -1;
    }
    if (ts_import_set_str(im, TS_FI_FRAMEWORK, "megatron", TS_SRC_NEMO, NEMO_PTR, err) != 0)
        return -1;
    if (rt > 0 && trainer(&n, &t, &max_steps) != 0)
        return -1;
    if (rm == 0)
        return 0;
    model = json_object_get(m.obj, "num_layers") != NULL && !hf;
    if (nemo_mamba(&n, &m) != 0 || direct(&n, &m) != 0 || nemo_shape(&n, &m, model) != 0 ||
        nemo_layout(&n, &m) != 0 || (lora = nemo_peft(&n, &m)) < 0 ||
        nemo_fp8_weights(&n, &m, lora > 0) != 0)
        return -1;
    if (nemo_int(&n, &m, "tensor_model_parallel_size", 1, 1048576, &tp) < 0)
        return -1;
    if (!im->req_has[TS_FI_VOCAB] &&
        nemo_vocab(&n, &m, model && im->vals[TS_FI_VOCAB] == NULL, tp) != 0)
        return -1;
    /* Training length: max_steps x global batch x sequence. */
    if (max_steps > 0) {
        int64_t gb = 0, seq = 0;
        const json_t *d = json_object_get(m.obj, "data");
        ts_import_obj dobj = { d, NEMO_PTR "/model/data" };

        if (nemo_int(&n, &m, "global_batch_size", 1, INT64_C(1) << 40, &gb) < 0 ||
            nemo_int(&n, &m, "encoder_seq_length", 1, 16777216, &seq) < 0)
            return -1;
        if (seq == 0 && json_is_object(d) &&
            nemo_int(&n, &dobj, "seq_length", 1, 16777216, &seq) < 0)
            return -1;
        if (gb > 0 && seq > 0 &&
            ts_import_set(im, TS_FI_TOKENS, json_real((double)max_steps * (double)gb * (double)seq),
                          TS_SRC_NEMO, NEMO_PTR "/trainer/max_steps", err) != 0)
            return -1;
    }
    note_unread(&n, &m);
    return 0;
}

int ts_import_nemo(ts_import *im, const char *yaml, size_t len, ts_api_err *err)
{
    return ts_yaml_import(im, yaml, len, "nemo_config", nemo_map, err);
}
