/*
 * ts_import_hf.c - a Hugging Face config.json ("hf_config") -> shape.
 *
 * One table row per supported model_type says which keys it uses and what
 * the modeling code builds from them (transformers' modeling_<type>.py):
 * bias flags, norm kind and count, q/k norms, default head_dim and tying.
 * Parameter counts then follow core/ts_model.c and are checked in
 * tests/api against the released checkpoints' totals.  Keys that change
 * the count and are not modelled are refused; keys that do not change it
 * (rope_theta, sliding_window, ...) are ignored; a few that users often
 * mistake for run settings (torch_dtype, max_position_embeddings) are
 * noted.
 */
#include <stdio.h>
#include <string.h>

#include "ts_ckd.h"
#include "ts_import.h"

typedef enum hf_moe {
    HF_MOE_NONE = 0,
    HF_MOE_MIXTRAL,     /* num_local_experts, num_experts_per_tok */
    HF_MOE_QWEN3,       /* num_experts, moe_intermediate_size, every layer sparse */
    HF_MOE_DEEPSEEK     /* routed + shared experts, first dense layers, MLA */
} hf_moe;

typedef struct hf_spec {
    const char *type;
    bool gpt2_keys;         /* n_embd, n_layer, n_head, n_inner, n_positions */
    bool tie_default;       /* tie_word_embeddings when absent */
    bool gated;             /* SwiGLU / GeGLU: gate, up, down */
    bool qkv_bias;          /* always (Qwen2) */
    bool attention_bias_key;/* "attention_bias" -> q, k, v, o biases */
    bool attention_bias_default;
    bool mlp_bias_key;      /* "mlp_bias" (Llama) */
    bool mlp_bias;          /* always (GPT-2, GPT-NeoX) */
    bool layernorm;         /* LayerNorm with bias, else RMSNorm */
    int norms;              /* per layer */
    bool qk_norm;
    int64_t head_dim_default; /* when "head_dim" is absent; 0 = hidden / heads */
    hf_moe moe;
    bool router_bias;       /* DeepSeek-V3 e_score_correction_bias */
    bool text_config;       /* multimodal: the language model is in text_config */
    bool gemma3_defaults;   /* Gemma3TextConfig defaults for absent keys */
} hf_spec;

/* Sources: transformers' modeling_<type>.py (q/k/v/o bias arguments, norm
 * classes, tie_word_embeddings defaults of each <Type>Config). */
static const hf_spec hf_specs[] = {
    { .type = "llama", .gated = true, .attention_bias_key = true, .mlp_bias_key = true, .norms = 2 },
    { .type = "mistral", .gated = true, .norms = 2 },
    { .type = "mixtral", .gated = true, .norms = 2, .moe = HF_MOE_MIXTRAL },
    { .type = "qwen2", .gated = true, .qkv_bias = true, .norms = 2 },
    { .type = "qwen3", .gated = true, .attention_bias_key = true, .norms = 2, .qk_norm = true,
      .head_dim_default = 128 },
    { .type = "qwen3_moe", .gated = true, .attention_bias_key = true, .norms = 2, .qk_norm = true,
      .head_dim_default = 128, .moe = HF_MOE_QWEN3 },
    { .type = "gemma", .tie_default = true, .gated = true, .attention_bias_key = true, .norms = 2,
      .head_dim_default = 256 },
    { .type = "gemma2", .tie_default = true, .gated = true, .attention_bias_key = true, .norms = 4,
      .head_dim_default = 256 },
    { .type = "gemma3_text", .tie_default = true, .gated = true, .attention_bias_key = true,
      .norms = 4, .qk_norm = true, .head_dim_default = 256, .gemma3_defaults = true },
    { .type = "gemma3", .tie_default = true, .gated = true, .attention_bias_key = true,
      .norms = 4, .qk_norm = true, .head_dim_default = 256, .text_config = true,
      .gemma3_defaults = true },
    { .type = "phi3", .gated = true, .norms = 2 },
    { .type = "gpt2", .gpt2_keys = true, .tie_default = true, .qkv_bias = true,
      .attention_bias_default = true, .mlp_bias = true, .layernorm = true, .norms = 2 },
    { .type = "gpt_neox", .attention_bias_key = true, .attention_bias_default = true,
      .mlp_bias = true, .layernorm = true, .norms = 2 },
    { .type = "deepseek_v2", .gated = true, .attention_bias_key = true, .norms = 2,
      .moe = HF_MOE_DEEPSEEK },
    { .type = "deepseek_v3", .gated = true, .attention_bias_key = true, .norms = 2,
      .moe = HF_MOE_DEEPSEEK, .router_bias = true },
};

#define HF_N (sizeof hf_specs / sizeof hf_specs[0])

const char *const ts_import_hf_types[HF_N + 1] = {
    "llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "gemma", "gemma2",
    "gemma3_text", "gemma3", "phi3", "gpt2", "gpt_neox", "deepseek_v2",
    "deepseek_v3", NULL
};

/* Every value a row can produce, before it becomes request members. */
typedef struct hf_shape {
    int64_t layers, hidden, heads, kv_heads, ffn, vocab, head_dim, pos;
    int64_t experts, top_k, moe_ffn, shared, dense_layers;
    int64_t q_lora, kv_lora, nope, rope, v_dim;
    bool tied, qkv_bias, out_bias, mlp_bias, router_bias;
    char o[20][TS_IMPORT_ORIGIN_LEN]; /* origins, by hf_key index below */
} hf_shape;

enum {
    K_LAYERS, K_HIDDEN, K_HEADS, K_KV, K_FFN, K_VOCAB, K_HEAD_DIM, K_POS,
    K_EXPERTS, K_TOPK, K_MOE_FFN, K_SHARED, K_DENSE, K_QLORA, K_KVLORA,
    K_NOPE, K_ROPE, K_VDIM, K_TIE, K_BIAS
};

/* Gemma3TextConfig's defaults (transformers configuration_gemma3.py):
 * the released multimodal configs leave most of text_config to them. */
static const struct { const char *key; int64_t v; } gemma3_defaults[] = {
    { "vocab_size", 262208 }, { "hidden_size", 2304 }, { "intermediate_size", 9216 },
    { "num_hidden_layers", 26 }, { "num_attention_heads", 8 },
    { "num_key_value_heads", 4 }, { "head_dim", 256 },
};

static int64_t gemma3_default(const char *key)
{
    size_t i;

    for (i = 0; i < sizeof gemma3_defaults / sizeof gemma3_defaults[0]; i++)
        if (strcmp(gemma3_defaults[i].key, key) == 0)
            return gemma3_defaults[i].v;
    return 0;
}

/* Read an integer key into *v with origin; a Gemma 3 default fills an
 * absent one (listed in *defaulted).  Returns 1, 0 (absent), -1 error. */
static int hf_int(const ts_import_obj *o, const hf_spec *s, const char *key,
                  int64_t lo, bool required, int64_t *v, char *origin,
                  char *defaulted, size_t dlen, ts_api_err *err)
{
    int rc;
    int64_t d = s->gemma3_defaults ? gemma3_default(key) : 0;

    rc = ts_import_int(o, key, lo, INT64_C(1) << 40, required && d == 0, v, err);
    if (rc > 0)
        ts_import_ptr(origin, TS_IMPORT_ORIGIN_LEN, o, key);
    if (rc == 0 && d != 0) {
        size_t n = strlen(defaulted);

        *v = d;
        snprintf(origin, TS_IMPORT_ORIGIN_LEN, "%s (Gemma3TextConfig default)", o->base);
        snprintf(defaulted + n, dlen - n, "%s%s %lld", n ? ", " : "", key, (long long)d);
        return 1;
    }
    return rc;
}

static int hf_read_moe(const ts_import_obj *o, const hf_spec *s, hf_shape *h,
                       ts_api_notes *notes, ts_api_err *err)
{
    const int64_t big = INT64_C(1) << 40;
    int64_t freq = 1, mtp = 0;
    const char *method = NULL;
    int rc;

    if (s->moe == HF_MOE_MIXTRAL) {
        if (ts_import_int(o, "num_local_experts", 1, big, true, &h->experts, err) < 0)
            return -1;
        ts_import_ptr(h->o[K_EXPERTS], TS_IMPORT_ORIGIN_LEN, o, "num_local_experts");
        h->top_k = 2; /* MixtralConfig default */
        snprintf(h->o[K_TOPK], TS_IMPORT_ORIGIN_LEN, "%s (MixtralConfig default)", o->base);
        if ((rc = ts_import_int(o, "num_experts_per_tok", 1, big, false, &h->top_k, err)) < 0)
            return -1;
        if (rc > 0)
            ts_import_ptr(h->o[K_TOPK], TS_IMPORT_ORIGIN_LEN, o, "num_experts_per_tok");
        return 0;
    }
    if (s->moe == HF_MOE_QWEN3) {
        const json_t *only = json_object_get(o->obj, "mlp_only_layers");
        int64_t step = 1;
        char ptr[TS_IMPORT_ORIGIN_LEN];

        /* modeling_qwen3_moe.py: a layer is sparse unless listed in
         * mlp_only_layers or off the decoder_sparse_step grid. */
        if (ts_import_int(o, "num_experts", 1, big, true, &h->experts, err) < 0 ||
            ts_import_int(o, "num_experts_per_tok", 1, big, true, &h->top_k, err) < 0 ||
            ts_import_int(o, "moe_intermediate_size", 1, big, true, &h->moe_ffn, err) < 0 ||
            ts_import_int(o, "decoder_sparse_step", 1, big, false, &step, err) < 0)
            return -1;
        ts_import_ptr(h->o[K_EXPERTS], TS_IMPORT_ORIGIN_LEN, o, "num_experts");
        ts_import_ptr(h->o[K_TOPK], TS_IMPORT_ORIGIN_LEN, o, "num_experts_per_tok");
        ts_import_ptr(h->o[K_MOE_FFN], TS_IMPORT_ORIGIN_LEN, o, "moe_intermediate_size");
        if (step != 1 || (only != NULL && !json_is_null(only) &&
                          !(json_is_array(only) && json_array_size(only) == 0))) {
            ts_import_ptr(ptr, sizeof ptr, o, step != 1 ? "decoder_sparse_step" : "mlp_only_layers");
            ts_api_err_set(err, "unsupported-config", ptr,
                           "dense layers between sparse ones are not modelled: "
                           "decoder_sparse_step must be 1 and mlp_only_layers empty");
            return -1;
        }
        return 0;
    }
    /* DeepSeek-V2/V3 (modeling_deepseek.py): MLA everywhere, MoE in every
     * layer after the first first_k_dense_replace. */
    if (ts_import_int(o, "n_routed_experts", 1, big, true, &h->experts, err) < 0 ||
        ts_import_int(o, "num_experts_per_tok", 1, big, true, &h->top_k, err) < 0 ||
        ts_import_int(o, "moe_intermediate_size", 1, big, true, &h->moe_ffn, err) < 0 ||
        ts_import_int(o, "n_shared_experts", 0, big, false, &h->shared, err) < 0 ||
        ts_import_int(o, "first_k_dense_replace", 0, big, false, &h->dense_layers, err) < 0 ||
        ts_import_int(o, "q_lora_rank", 1, big, false, &h->q_lora, err) < 0 ||
        ts_import_int(o, "kv_lora_rank", 1, big, true, &h->kv_lora, err) < 0 ||
        ts_import_int(o, "qk_nope_head_dim", 1, big, true, &h->nope, err) < 0 ||
        ts_import_int(o, "qk_rope_head_dim", 0, big, true, &h->rope, err) < 0 ||
        ts_import_int(o, "v_head_dim", 1, big, true, &h->v_dim, err) < 0 ||
        ts_import_int(o, "moe_layer_freq", 1, big, false, &freq, err) < 0 ||
        ts_import_int(o, "num_nextn_predict_layers", 0, big, false, &mtp, err) < 0 ||
        ts_import_str(o, "topk_method", false, &method, err) < 0)
        return -1;
    ts_import_ptr(h->o[K_EXPERTS], TS_IMPORT_ORIGIN_LEN, o, "n_routed_experts");
    ts_import_ptr(h->o[K_TOPK], TS_IMPORT_ORIGIN_LEN, o, "num_experts_per_tok");
    ts_import_ptr(h->o[K_MOE_FFN], TS_IMPORT_ORIGIN_LEN, o, "moe_intermediate_size");
    ts_import_ptr(h->o[K_SHARED], TS_IMPORT_ORIGIN_LEN, o, "n_shared_experts");
    ts_import_ptr(h->o[K_DENSE], TS_IMPORT_ORIGIN_LEN, o, "first_k_dense_replace");
    ts_import_ptr(h->o[K_QLORA], TS_IMPORT_ORIGIN_LEN, o, "q_lora_rank");
    ts_import_ptr(h->o[K_KVLORA], TS_IMPORT_ORIGIN_LEN, o, "kv_lora_rank");
    ts_import_ptr(h->o[K_NOPE], TS_IMPORT_ORIGIN_LEN, o, "qk_nope_head_dim");
    ts_import_ptr(h->o[K_ROPE], TS_IMPORT_ORIGIN_LEN, o, "qk_rope_head_dim");
    ts_import_ptr(h->o[K_VDIM], TS_IMPORT_ORIGIN_LEN, o, "v_head_dim");
    if (freq != 1) {
        char ptr[TS_IMPORT_ORIGIN_LEN];

        ts_import_ptr(ptr, sizeof ptr, o, "moe_layer_freq");
        ts_api_err_set(err, "unsupported-config", ptr,
                       "moe_layer_freq %lld (MoE only every n-th layer) is not modelled; "
                       "only 1 is", (long long)freq);
        return -1;
    }
    if (mtp > 0)
        ts_import_note(notes, "%s/num_nextn_predict_layers %lld: the multi-token "
                       "prediction module is not counted (DeepSeek-V3's 671B excludes "
                       "its 14B MTP weights)", o->base, (long long)mtp);
    if (s->router_bias || (method != NULL && strcmp(method, "noaux_tc") == 0))
        h->router_bias = true;
    return 0;
}

static int hf_read(const ts_import_obj *o, const hf_spec *s, hf_shape *h,
                   ts_api_notes *notes, ts_api_err *err)
{
    const int64_t big = INT64_C(1) << 40;
    char defaulted[200] = "";
    bool b;
    int rc;

    memset(h, 0, sizeof *h);
    if (s->gpt2_keys) {
        if (ts_import_int(o, "n_layer", 1, big, true, &h->layers, err) < 0 ||
            ts_import_int(o, "n_embd", 1, big, true, &h->hidden, err) < 0 ||
            ts_import_int(o, "n_head", 1, big, true, &h->heads, err) < 0 ||
            ts_import_int(o, "vocab_size", 1, big, true, &h->vocab, err) < 0)
            return -1;
        ts_import_ptr(h->o[K_LAYERS], TS_IMPORT_ORIGIN_LEN, o, "n_layer");
        ts_import_ptr(h->o[K_HIDDEN], TS_IMPORT_ORIGIN_LEN, o, "n_embd");
        ts_import_ptr(h->o[K_HEADS], TS_IMPORT_ORIGIN_LEN, o, "n_head");
        ts_import_ptr(h->o[K_VOCAB], TS_IMPORT_ORIGIN_LEN, o, "vocab_size");
        /* n_inner null = 4 n_embd; n_positions default 1024 (GPT2Config). */
        h->ffn = ts_ckd_mul_sat(h->hidden, 4);
        snprintf(h->o[K_FFN], TS_IMPORT_ORIGIN_LEN, "%s/n_embd (n_inner = 4 n_embd)", o->base);
        if ((rc = ts_import_int(o, "n_inner", 1, big, false, &h->ffn, err)) < 0)
            return -1;
        if (rc > 0)
            ts_import_ptr(h->o[K_FFN], TS_IMPORT_ORIGIN_LEN, o, "n_inner");
        h->pos = 1024;
        snprintf(h->o[K_POS], TS_IMPORT_ORIGIN_LEN, "%s (GPT2Config n_positions default)", o->base);
        if ((rc = ts_import_int(o, "n_positions", 1, big, false, &h->pos, err)) < 0)
            return -1;
        if (rc > 0)
            ts_import_ptr(h->o[K_POS], TS_IMPORT_ORIGIN_LEN, o, "n_positions");
    } else {
        if (hf_int(o, s, "num_hidden_layers", 1, true, &h->layers, h->o[K_LAYERS],
                   defaulted, sizeof defaulted, err) < 0 ||
            hf_int(o, s, "hidden_size", 1, true, &h->hidden, h->o[K_HIDDEN],
                   defaulted, sizeof defaulted, err) < 0 ||
            hf_int(o, s, "num_attention_heads", 1, true, &h->heads, h->o[K_HEADS],
                   defaulted, sizeof defaulted, err) < 0 ||
            hf_int(o, s, "intermediate_size", 1, true, &h->ffn, h->o[K_FFN],
                   defaulted, sizeof defaulted, err) < 0 ||
            hf_int(o, s, "vocab_size", 1, true, &h->vocab, h->o[K_VOCAB],
                   defaulted, sizeof defaulted, err) < 0)
            return -1;
        if (s->moe != HF_MOE_DEEPSEEK) {
            /* null or absent = MHA (every <Type>Config does this). */
            if ((rc = hf_int(o, s, "num_key_value_heads", 1, false, &h->kv_heads,
                             h->o[K_KV], defaulted, sizeof defaulted, err)) < 0)
                return -1;
            if ((rc = hf_int(o, s, "head_dim", 1, false, &h->head_dim, h->o[K_HEAD_DIM],
                             defaulted, sizeof defaulted, err)) < 0)
                return -1;
            if (rc == 0 && s->head_dim_default != 0) {
                h->head_dim = s->head_dim_default;
                snprintf(h->o[K_HEAD_DIM], TS_IMPORT_ORIGIN_LEN, "%s (%s default head_dim)",
                         o->base, s->type);
            }
        }
    }

    h->tied = s->tie_default;
    snprintf(h->o[K_TIE], TS_IMPORT_ORIGIN_LEN, "%s (%s default tie_word_embeddings)",
             o->base, s->type);
    if ((rc = ts_import_bool(o, "tie_word_embeddings", &h->tied, err)) < 0)
        return -1;
    if (rc > 0)
        ts_import_ptr(h->o[K_TIE], TS_IMPORT_ORIGIN_LEN, o, "tie_word_embeddings");

    h->qkv_bias = s->qkv_bias || s->attention_bias_default;
    h->out_bias = s->attention_bias_default;
    h->mlp_bias = s->mlp_bias;
    snprintf(h->o[K_BIAS], TS_IMPORT_ORIGIN_LEN, "%s (model_type %s)", o->base, s->type);
    if (s->attention_bias_key) {
        if ((rc = ts_import_bool(o, "attention_bias", &b, err)) < 0)
            return -1;
        if (rc > 0) {
            h->qkv_bias = s->qkv_bias || b;
            h->out_bias = b;
            ts_import_ptr(h->o[K_BIAS], TS_IMPORT_ORIGIN_LEN, o, "attention_bias");
        }
    }
    if (s->mlp_bias_key) {
        if ((rc = ts_import_bool(o, "mlp_bias", &b, err)) < 0)
            return -1;
        if (rc > 0)
            h->mlp_bias = b;
    }
    if (s->moe != HF_MOE_NONE && hf_read_moe(o, s, h, notes, err) < 0)
        return -1;
    if (s->moe == HF_MOE_DEEPSEEK && h->qkv_bias) {
        char ptr[TS_IMPORT_ORIGIN_LEN];

        ts_import_ptr(ptr, sizeof ptr, o, "attention_bias");
        ts_api_err_set(err, "unsupported-config", ptr,
                       "attention_bias with latent attention is not modelled");
        return -1;
    }
    if (defaulted[0] != '\0')
        ts_import_note(notes, "%s: absent keys take Gemma3TextConfig defaults: %s",
                       o->base, defaulted);
    return 0;
}

/* Propose every member the shape gives; 0 or -1. */
static int hf_emit(ts_import *im, const hf_spec *s, const hf_shape *h,
                   ts_api_src S, ts_api_err *err)
{
#define EMIT_I(fi, v, k) \
    if (ts_import_set_int(im, fi, v, S, h->o[k], err) != 0) return -1
#define EMIT_B(fi, v, k) \
    if (ts_import_set_bool(im, fi, v, S, h->o[k], err) != 0) return -1

    EMIT_I(TS_FI_LAYERS, h->layers, K_LAYERS);
    EMIT_I(TS_FI_HIDDEN, h->hidden, K_HIDDEN);
    EMIT_I(TS_FI_HEADS, h->heads, K_HEADS);
    /* MLA keeps one k/v per head (num_key_value_heads == heads). */
    EMIT_I(TS_FI_KV_HEADS, h->kv_heads != 0 ? h->kv_heads : h->heads,
           h->kv_heads != 0 ? K_KV : K_HEADS);
    EMIT_I(TS_FI_FFN, h->ffn, K_FFN);
    EMIT_I(TS_FI_VOCAB, h->vocab, K_VOCAB);
    EMIT_B(TS_FI_GATED, s->gated, K_BIAS);
    EMIT_B(TS_FI_TIED_EMBEDDINGS, h->tied, K_TIE);
    EMIT_I(TS_FI_HEAD_DIM, h->head_dim, K_HEAD_DIM);
    EMIT_B(TS_FI_QKV_BIAS, h->qkv_bias, K_BIAS);
    EMIT_B(TS_FI_OUT_BIAS, h->out_bias, K_BIAS);
    EMIT_B(TS_FI_MLP_BIAS, h->mlp_bias, K_BIAS);
    EMIT_B(TS_FI_NORM_BIAS, s->layernorm, K_BIAS);
    EMIT_I(TS_FI_NORMS_PER_LAYER, s->norms, K_BIAS);
    EMIT_B(TS_FI_QK_NORM, s->qk_norm, K_BIAS);
    EMIT_I(TS_FI_POS_EMBEDDINGS, h->pos, K_POS);
    EMIT_I(TS_FI_EXPERTS, h->experts, K_EXPERTS);
    EMIT_I(TS_FI_TOP_K, h->top_k, K_TOPK);
    EMIT_I(TS_FI_MOE_FFN, h->moe_ffn, K_MOE_FFN);
    EMIT_I(TS_FI_SHARED_EXPERTS, h->shared, K_SHARED);
    EMIT_I(TS_FI_DENSE_LAYERS, h->dense_layers, K_DENSE);
    EMIT_B(TS_FI_ROUTER_BIAS, h->router_bias, K_BIAS);
    EMIT_I(TS_FI_Q_LORA_RANK, h->q_lora, K_QLORA);
    EMIT_I(TS_FI_KV_LORA_RANK, h->kv_lora, K_KVLORA);
    EMIT_I(TS_FI_QK_NOPE_DIM, h->nope, K_NOPE);
    EMIT_I(TS_FI_QK_ROPE_DIM, h->rope, K_ROPE);
    EMIT_I(TS_FI_V_HEAD_DIM, h->v_dim, K_VDIM);
    if (ts_import_set_str(im, TS_FI_NORM, s->layernorm ? "layernorm" : "rmsnorm",
                          S, h->o[K_BIAS], err) != 0)
        return -1;
    /* A shape replaces any preset's: no stale plain count. */
    if (ts_import_set(im, TS_FI_PARAMS, json_null(), S, h->o[K_LAYERS], err) != 0)
        return -1;
#undef EMIT_I
#undef EMIT_B
    return 0;
}

static void hf_notes(const ts_import_obj *o, const ts_import_obj *root,
                     ts_api_notes *notes)
{
    const json_t *v;

    if ((v = json_object_get(root->obj, "torch_dtype")) != NULL && json_is_string(v))
        ts_import_note_about(notes, TS_FI_PRECISION, TS_SRC_HF,
                             "%s/torch_dtype \"%.*s\" is the checkpoint's storage "
                             "type; the training precision is the precision member",
                             root->base, ts_utf8_prec(json_string_value(v), 40),
                             json_string_value(v));
    if ((v = json_object_get(o->obj, "max_position_embeddings")) != NULL &&
        json_is_number(v))
        ts_import_note_about(notes, TS_FI_SEQ, TS_SRC_HF,
                             "%s/max_position_embeddings %.0f is the context limit, "
                             "not the training sequence length (give seq)", o->base,
                             json_number_value(v));
    if (json_object_get(root->obj, "vision_config") != NULL)
        ts_import_note(notes, "%s/vision_config: the vision tower and projector are "
                       "not counted, only the language model", root->base);
    if (json_object_get(root->obj, "quantization_config") != NULL)
        ts_import_note(notes, "%s/quantization_config: the checkpoint's storage "
                       "quantization does not change the parameter count", root->base);
}

/* base names the document in errors and notes ("/hf_config"; the
 * catalogue's "/model (<id>)"), src is every value's source. */
int ts_import_hf_from(ts_import *im, const json_t *cfg, const char *base,
                      ts_api_src src, ts_api_err *err)
{
    ts_import_obj root = { cfg, "" };
    ts_import_obj text;
    const ts_import_obj *o = &root;
    const hf_spec *s = NULL;
    const char *type = NULL;
    hf_shape h;
    char ptr[TS_IMPORT_ORIGIN_LEN];
    size_t i;

    snprintf(root.base, sizeof root.base, "%s", base);
    if (ts_import_check_size(cfg, root.base, err) != 0)
        return -1;
    if (ts_import_str(&root, "model_type", true, &type, err) < 0)
        return -1;
    for (i = 0; i < HF_N; i++)
        if (strcmp(hf_specs[i].type, type) == 0)
            s = &hf_specs[i];
    if (s == NULL) {
        char list[320];
        size_t n = 0;
        char got[64];
        int cut = ts_utf8_prec(type, 48);

        list[0] = '\0';
        for (i = 0; ts_import_hf_types[i] != NULL && n < sizeof list; i++) {
            int k = snprintf(list + n, sizeof list - n, "%s\"%s\"", i ? ", " : "",
                             ts_import_hf_types[i]);
            if (k < 0)
                break;
            n += (size_t)k;
        }
        snprintf(got, sizeof got, "%.*s%s", cut, type, type[cut] != '\0' ? "..." : "");
        ts_import_ptr(ptr, sizeof ptr, &root, "model_type");
        ts_api_err_set(err, "unsupported-model-type", ptr,
                       "model_type \"%s\" is not supported; supported: %s", got, list);
        return -1;
    }
    if (s->text_config) {
        int rc = ts_import_sub(&root, "text_config", &text, err);

        if (rc < 0)
            return -1;
        if (rc == 0) {
            ts_import_ptr(ptr, sizeof ptr, &root, "text_config");
            ts_api_err_set(err, "missing-field", ptr,
                           "model_type \"%s\" keeps the language model in text_config", type);
            return -1;
        }
        o = &text;
    }
    if (hf_read(o, s, &h, im->notes, err) < 0)
        return -1;
    hf_notes(o, &root, im->notes);
    return hf_emit(im, s, &h, src, err);
}

int ts_import_hf(ts_import *im, const json_t *cfg, ts_api_err *err)
{
    return ts_import_hf_from(im, cfg, "/hf_config", TS_SRC_HF, err);
}
