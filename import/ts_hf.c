/*
 * ts_hf.c - a Hugging Face config.json ("hf_config") -> shape.
 *
 * One table row per supported model_type says which keys it uses and what
 * the modeling code builds from them (transformers' modeling_<type>.py):
 * bias flags, norm kind and count, q/k norms, default head_dim and tying.
 * Parameter counts then follow core/ts_model.c and are checked in
 * tests/api against the released checkpoints' totals.  Keys that change
 * the count and are not modelled are refused; the sliding window and its
 * layers are read (ts_hf_family.c hf_read_window); keys that change
 * neither (rope_theta, ...) are ignored; a few that users often
 * mistake for run settings (torch_dtype, max_position_embeddings) are
 * noted.  A model_type without a row is read as Llama-like when the file
 * has the standard keys (noted), else refused naming the missing ones.
 * This file holds the table, the keys most configs use, tying and biases,
 * the members proposed and the entry; the readers of one family each
 * (Falcon / BLOOM, GPT-2, the MoE families) are in ts_hf_family.c, their
 * shared types in ts_hf_int.h.
 */
#include <stdio.h>
#include <string.h>

#include "ts_hf_int.h"
#include "ts_import.h"

/* Sources: transformers' modeling_<type>.py (q/k/v/o bias arguments, norm
 * classes, tie_word_embeddings defaults of each <Type>Config). */
/* DeepSeek-V3's layout: MLA, its experts and router bias (Kimi K2 reuses
 * it whole). */
#define HF_DEEPSEEK_V3_ROW                                                         \
    .gated = true, .attention_bias_key = true, .norms = 2, .moe = HF_MOE_DEEPSEEK, \
    .router_bias = true

static const hf_spec hf_specs[] = {
    { .type = "llama",
      .gated = true,
      .attention_bias_key = true,
      .mlp_bias_key = true,
      .norms = 2 },
    { .type = "mistral", .gated = true, .norms = 2, .window = HF_WIN_ALL, .window_default = 4096 },
    { .type = "mixtral", .gated = true, .norms = 2, .moe = HF_MOE_MIXTRAL, .window = HF_WIN_ALL },
    { .type = "qwen2",
      .gated = true,
      .qkv_bias = true,
      .norms = 2,
      .window = HF_WIN_FROM,
      .window_flag = true,
      .window_default = 4096 },
    { .type = "qwen3",
      .gated = true,
      .attention_bias_key = true,
      .norms = 2,
      .qk_norm = true,
      .head_dim_default = 128,
      .window = HF_WIN_FROM,
      .window_flag = true,
      .window_default = 4096 },
    { .type = "qwen3_moe",
      .gated = true,
      .attention_bias_key = true,
      .norms = 2,
      .qk_norm = true,
      .head_dim_default = 128,
      .moe = HF_MOE_QWEN3,
      .window = HF_WIN_ALL,
      .window_flag = true,
      .window_default = 4096 },
    { .type = "gemma",
      .tie_default = true,
      .gated = true,
      .attention_bias_key = true,
      .norms = 2,
      .head_dim_default = 256 },
    { .type = "gemma2",
      .tie_default = true,
      .gated = true,
      .attention_bias_key = true,
      .norms = 4,
      .head_dim_default = 256,
      .window = HF_WIN_ALT,
      .window_default = 4096 },
    { .type = "gemma3_text",
      .tie_default = true,
      .gated = true,
      .attention_bias_key = true,
      .norms = 4,
      .qk_norm = true,
      .head_dim_default = 256,
      .gemma3_defaults = true,
      .window = HF_WIN_PATTERN,
      .window_default = 4096 },
    { .type = "gemma3",
      .tie_default = true,
      .gated = true,
      .attention_bias_key = true,
      .norms = 4,
      .qk_norm = true,
      .head_dim_default = 256,
      .text_config = true,
      .gemma3_defaults = true,
      .window = HF_WIN_PATTERN,
      .window_default = 4096 },
    { .type = "phi3", .gated = true, .norms = 2, .window = HF_WIN_ALL },
    { .type = "gpt2",
      .gpt2_keys = true,
      .tie_default = true,
      .qkv_bias = true,
      .attention_bias_default = true,
      .mlp_bias = true,
      .layernorm = true,
      .norms = 2 },
    { .type = "gpt_neox",
      .attention_bias_key = true,
      .attention_bias_default = true,
      .mlp_bias = true,
      .layernorm = true,
      .norms = 2 },
    { .type = "deepseek_v2",
      .gated = true,
      .attention_bias_key = true,
      .norms = 2,
      .moe = HF_MOE_DEEPSEEK },
    { .type = "deepseek_v3", HF_DEEPSEEK_V3_ROW },
    /* ---- added for the model catalogue (issue 24); transformers paths
     * at the commits of the stored versions read:
     * falcon: models/falcon/modeling_falcon.py@44272086 (FalconAttention:
     *   one fused query_key_value of (heads + 2 kv) head_dim, kv = 1 with
     *   multi_query, num_kv_heads with new_decoder_architecture; dense;
     *   FalconMLP h -> ffn_hidden_size (4 h) -> h, GELU; every Linear's
     *   bias is config.bias; FalconDecoderLayer: ln_attn + ln_mlp with the
     *   new architecture, else input_layernorm (+ post_attention_layernorm
     *   without parallel_attn); LayerNorm ln_f; lm_head tied).
     * bloom: models/bloom/modeling_bloom.py@9d97831a (fused qkv and dense
     *   with biases, MLP 4 h with biases, input/post_attention LayerNorms,
     *   word_embeddings_layernorm after the embedding, ln_f, ALiBi).
     * starcoder2: models/starcoder2/modeling_starcoder2.py@73faa33f (q, k,
     *   v, o, c_fc, c_proj with bias=use_bias; LayerNorm with bias; MLP
     *   c_fc -> c_proj, not gated).
     * granite, granitemoe: models/granite/modeling_granite.py@b6dd89b4
     *   (Llama's layout; the multipliers scale activations), models/
     *   granitemoe/modeling_granitemoe.py@c7a438e9 (router Linear(h, E,
     *   bias=False); input_linear E x 2 I x h, output_linear E x h x I).
     * olmo: models/olmo/modeling_olmo.py@38e888f5 (OlmoLayerNorm has no
     *   weight or bias).  olmo2: models/olmo2/modeling_olmo2.py@7264638d
     *   (q_norm over heads x head_dim, k_norm over kv_heads x head_dim;
     *   post-attention and post-feedforward RMSNorms).
     * phimoe: models/phimoe/modeling_phimoe.py@c4cdd1a0 (LayerNorm with
     *   bias, q/k/v/o bias=attention_bias, Mixtral's experts and router,
     *   lm_head bias=lm_head_bias).
     * qwen2_moe: models/qwen2_moe/modeling_qwen2_moe.py@1c351314 (q/k/v
     *   biases; shared_expert of shared_expert_intermediate_size and
     *   shared_expert_gate Linear(h, 1, bias=False) beside the experts).
     * internlm2: not in transformers; internlm/internlm2-7b on the Hub,
     *   modeling_internlm2.py (wqkv and wo bias=config.bias, feed_forward
     *   w1/w3/w2 without bias, RMSNorm). */
    { .type = "falcon",
      .falcon_keys = true,
      .tie_default = true,
      .layernorm = true,
      .norms = 1,
      .bias_key = "bias",
      .bias_key_mlp = true },
    { .type = "bloom",
      .bloom_keys = true,
      .tie_default = true,
      .qkv_bias = true,
      .attention_bias_default = true,
      .mlp_bias = true,
      .layernorm = true,
      .norms = 2,
      .embed_norm = true },
    { .type = "starcoder2",
      .tie_default = true,
      .layernorm = true,
      .norms = 2,
      .bias_key = "use_bias",
      .bias_key_default = true,
      .bias_key_mlp = true,
      .window = HF_WIN_ALL },
    { .type = "granite",
      .gated = true,
      .attention_bias_key = true,
      .mlp_bias_key = true,
      .norms = 2 },
    { .type = "granitemoe",
      .gated = true,
      .attention_bias_key = true,
      .norms = 2,
      .moe = HF_MOE_MIXTRAL },
    { .type = "olmo",
      .gated = true,
      .attention_bias_key = true,
      .norms = 2,
      .norms_weightless = true },
    { .type = "olmo2",
      .gated = true,
      .attention_bias_key = true,
      .norms = 2,
      .qk_norm = true,
      .qk_norm_full = true },
    { .type = "phimoe",
      .gated = true,
      .attention_bias_key = true,
      .layernorm = true,
      .norms = 2,
      .moe = HF_MOE_MIXTRAL,
      .lm_head_bias_key = true,
      .window = HF_WIN_ALL },
    { .type = "qwen2_moe",
      .gated = true,
      .qkv_bias = true,
      .norms = 2,
      .moe = HF_MOE_QWEN2,
      .window = HF_WIN_VERSIONED,
      .window_flag = true,
      .window_default = 4096 },
    /* gpt_oss: models/gpt_oss/modeling_gpt_oss.py (transformers 4.55):
     * q/k/v/o with bias=config.attention_bias and a sinks parameter of
     * num_attention_heads; GptOssTopKRouter a weight E x h and a bias E;
     * GptOssExperts gate_up_proj E x h x 2I with gate_up_proj_bias E x 2I
     * and down_proj E x I x h with down_proj_bias E x h (Mixtral's keys:
     * num_local_experts, num_experts_per_tok); two RMSNorms; no tying.
     * Absent keys take GptOssConfig's defaults: head_dim 64,
     * attention_bias true, num_experts_per_tok 4. */
    { .type = "gpt_oss",
      .gated = true,
      .attention_bias_key = true,
      .attention_bias_default = true,
      .mlp_bias = true,
      .norms = 2,
      .head_dim_default = 64,
      .moe = HF_MOE_MIXTRAL,
      .top_k_default = 4,
      .router_bias = true,
      .sinks = true,
      .window = HF_WIN_ALT,
      .window_default = 128 },
    { .type = "internlm2", .gated = true, .norms = 2, .bias_key = "bias" },
    /* kimi_k2: Moonshot's Kimi K2 (architectures DeepseekV3ForCausalLM,
     * auto_map modeling_deepseek.DeepseekV3ForCausalLM in its config.json):
     * DeepSeek-V3's layout and keys.  kimi_k25: Kimi K2.5, the same
     * language model in text_config beside a vision tower (not counted). */
    { .type = "kimi_k2", HF_DEEPSEEK_V3_ROW },
    { .type = "kimi_k25", HF_DEEPSEEK_V3_ROW, .text_config = true },
    /* glm4_moe (GLM-4.5, GLM-4.5-Air, GLM-4.6): transformers
     * models/glm4_moe/modeling_glm4_moe.py@a0699c97: q, k, v with
     * bias=attention_bias, o_proj without; q/k RMSNorms over head_dim with
     * use_qk_norm; DeepSeek-V3's experts, shared experts of
     * moe_intermediate_size x n_shared_experts and sigmoid router with its
     * e_score_correction_bias, after first_k_dense_replace dense layers of
     * intermediate_size (hf_read_glm4); two RMSNorms; no tying. */
    { .type = "glm4_moe",
      .gated = true,
      .attention_bias_key = true,
      .norms = 2,
      .moe = HF_MOE_GLM4,
      .router_bias = true },
    /* minimax_m2: models/minimax_m2/modular_minimax_m2.py@001f85b3 (see
     * hf_read_minimax): Mixtral's keys, MiniMaxM2Config's defaults head_dim
     * 128 and num_experts_per_tok 8, no linear biases (the router's
     * e_score_correction_bias counted, as DeepSeek-V3's), no tying, two
     * RMSNorms. */
    { .type = "minimax_m2",
      .gated = true,
      .norms = 2,
      .qk_norm = true,
      .qk_norm_full = true,
      .head_dim_default = 128,
      .moe = HF_MOE_MIXTRAL,
      .top_k_default = 8,
      .router_bias = true,
      .minimax_keys = true },
};

#define HF_N (sizeof hf_specs / sizeof hf_specs[0])

/* Gemma3TextConfig's defaults (transformers configuration_gemma3.py):
 * the released multimodal configs leave most of text_config to them. */
static const struct {
    const char *key;
    int64_t v;
} gemma3_defaults[] = {
    { "vocab_size", 262208 },    { "hidden_size", 2304 },      { "intermediate_size", 9216 },
    { "num_hidden_layers", 26 }, { "num_attention_heads", 8 }, { "num_key_value_heads", 4 },
    { "head_dim", 256 },
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
static int hf_int(const ts_import_obj *o, const hf_spec *s, const char *key, int64_t lo,
                  bool required, int64_t *v, char *origin, char *defaulted, size_t dlen,
                  ts_api_err *err)
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

/* The names most configs use (LlamaConfig's); an absent key takes a
 * Gemma 3 default where the spec says so (listed in defaulted). */
static int hf_read_keys(const ts_import_obj *o, const hf_spec *s, hf_shape *h, char *defaulted,
                        size_t dlen, ts_api_err *err)
{
    int rc;

    if (hf_int(o, s, "num_hidden_layers", 1, true, &h->layers, h->o[K_LAYERS], defaulted, dlen,
               err) < 0 ||
        hf_int(o, s, "hidden_size", 1, true, &h->hidden, h->o[K_HIDDEN], defaulted, dlen, err) <
            0 ||
        hf_int(o, s, "num_attention_heads", 1, true, &h->heads, h->o[K_HEADS], defaulted, dlen,
               err) < 0 ||
        hf_int(o, s, "intermediate_size", 1, true, &h->ffn, h->o[K_FFN], defaulted, dlen, err) <
            0 ||
        hf_int(o, s, "vocab_size", 1, true, &h->vocab, h->o[K_VOCAB], defaulted, dlen, err) < 0)
        return -1;
    if (s->moe == HF_MOE_DEEPSEEK)
        return 0;
    /* null or absent = MHA (every <Type>Config does this). */
    if (hf_int(o, s, "num_key_value_heads", 1, false, &h->kv_heads, h->o[K_KV], defaulted, dlen,
               err) < 0)
        return -1;
    if ((rc = hf_int(o, s, "head_dim", 1, false, &h->head_dim, h->o[K_HEAD_DIM], defaulted, dlen,
                     err)) < 0)
        return -1;
    if (rc == 0 && s->head_dim_default != 0) {
        h->head_dim = s->head_dim_default;
        snprintf(h->o[K_HEAD_DIM], TS_IMPORT_ORIGIN_LEN, "%s (%s default head_dim)", o->base,
                 s->type);
    }
    return 0;
}

/* tie_word_embeddings (the type's default when absent) and the biases:
 * attention_bias, mlp_bias, or the type's one key for them. */
static int hf_read_tie_bias(const ts_import_obj *o, const hf_spec *s, hf_shape *h, ts_api_err *err)
{
    bool b;
    int rc;

    h->tied = s->tie_default;
    snprintf(h->o[K_TIE], TS_IMPORT_ORIGIN_LEN, "%s (%s default tie_word_embeddings)", o->base,
             s->type);
    if ((rc = ts_import_bool(o, "tie_word_embeddings", &h->tied, err)) < 0)
        return -1;
    if (rc > 0)
        ts_import_ptr(h->o[K_TIE], TS_IMPORT_ORIGIN_LEN, o, "tie_word_embeddings");
    h->qkv_bias = s->qkv_bias || s->attention_bias_default;
    h->out_bias = s->attention_bias_default;
    h->mlp_bias = s->mlp_bias;
    snprintf(h->o[K_BIAS], TS_IMPORT_ORIGIN_LEN, "%s (model_type %s)", o->base, s->type);
    if (s->attention_bias_key && (rc = ts_import_bool(o, "attention_bias", &b, err)) != 0) {
        if (rc < 0)
            return -1;
        h->qkv_bias = s->qkv_bias || b;
        h->out_bias = b;
        ts_import_ptr(h->o[K_BIAS], TS_IMPORT_ORIGIN_LEN, o, "attention_bias");
    }
    if (s->mlp_bias_key && (rc = ts_import_bool(o, "mlp_bias", &b, err)) != 0) {
        if (rc < 0)
            return -1;
        h->mlp_bias = b;
    }
    if (s->bias_key != NULL) {
        b = s->bias_key_default;
        if ((rc = ts_import_bool(o, s->bias_key, &b, err)) < 0)
            return -1;
        if (rc > 0)
            ts_import_ptr(h->o[K_BIAS], TS_IMPORT_ORIGIN_LEN, o, s->bias_key);
        h->qkv_bias = h->out_bias = b;
        if (s->bias_key_mlp)
            h->mlp_bias = b;
    }
    return 0;
}

static int hf_read(const ts_import_obj *o, const hf_spec *s, hf_shape *h, ts_api_notes *notes,
                   ts_api_err *err)
{
    char defaulted[200] = "";
    int rc;

    memset(h, 0, sizeof *h);
    h->norms = s->norms;
    snprintf(h->o[K_NORMS], TS_IMPORT_ORIGIN_LEN, "%s (model_type %s)", o->base, s->type);
    if (s->falcon_keys || s->bloom_keys)
        rc = hf_read_more_keys(o, s, h, err);
    else if (s->gpt2_keys)
        rc = hf_read_gpt2(o, h, err);
    else
        rc = hf_read_keys(o, s, h, defaulted, sizeof defaulted, err);
    if (rc < 0 || hf_read_tie_bias(o, s, h, err) < 0)
        return -1;
    if (s->moe != HF_MOE_NONE && hf_read_moe(o, s, h, notes, err) < 0)
        return -1;
    if (hf_read_window(o, s, h, notes, err) < 0)
        return -1;
    if (s->moe == HF_MOE_DEEPSEEK && h->qkv_bias) {
        char ptr[TS_IMPORT_ORIGIN_LEN];

        ts_import_ptr(ptr, sizeof ptr, o, "attention_bias");
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, ptr,
                       "attention_bias with latent attention is not modelled");
        return -1;
    }
    if (defaulted[0] != '\0')
        ts_import_note(notes, "%s: absent keys take Gemma3TextConfig defaults: %s", o->base,
                       defaulted);
    return 0;
}

/* Propose every member the shape gives; 0 or -1. */
static int hf_emit(ts_import *im, const hf_spec *s, const hf_shape *h, ts_api_src S,
                   ts_api_err *err)
{
#define EMIT_I(fi, v, k)                                    \
    if (ts_import_set_int(im, fi, v, S, h->o[k], err) != 0) \
    return -1
#define EMIT_B(fi, v, k)                                     \
    if (ts_import_set_bool(im, fi, v, S, h->o[k], err) != 0) \
    return -1

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
    EMIT_I(TS_FI_NORMS_PER_LAYER, h->norms, K_NORMS);
    EMIT_B(TS_FI_QK_NORM, s->qk_norm || h->qk_norm, K_BIAS);
    EMIT_I(TS_FI_POS_EMBEDDINGS, h->pos, K_POS);
    EMIT_I(TS_FI_EXPERTS, h->experts, K_EXPERTS);
    EMIT_I(TS_FI_TOP_K, h->top_k, K_TOPK);
    EMIT_I(TS_FI_MOE_FFN, h->moe_ffn, K_MOE_FFN);
    EMIT_I(TS_FI_SHARED_EXPERTS, h->shared, K_SHARED);
    EMIT_I(TS_FI_DENSE_LAYERS, h->dense_layers, K_DENSE);
    EMIT_B(TS_FI_ROUTER_BIAS, h->router_bias, K_BIAS);
    EMIT_B(TS_FI_SHARED_EXPERT_GATE, h->shared_gate, K_SHARED);
    EMIT_B(TS_FI_EMBED_NORM, s->embed_norm, K_BIAS);
    EMIT_I(TS_FI_Q_LORA_RANK, h->q_lora, K_QLORA);
    EMIT_I(TS_FI_KV_LORA_RANK, h->kv_lora, K_KVLORA);
    EMIT_I(TS_FI_QK_NOPE_DIM, h->nope, K_NOPE);
    EMIT_I(TS_FI_QK_ROPE_DIM, h->rope, K_ROPE);
    EMIT_I(TS_FI_V_HEAD_DIM, h->v_dim, K_VDIM);
    EMIT_I(TS_FI_SLIDING_WINDOW, h->window, K_WINDOW);
    EMIT_I(TS_FI_SLIDING_LAYERS, h->wlayers, K_WLAYERS);
    if (ts_import_set_str(im, TS_FI_NORM, s->layernorm ? "layernorm" : "rmsnorm", S, h->o[K_BIAS],
                          err) != 0)
        return -1;
    /* A shape replaces any preset's: no stale plain count. */
    if (ts_import_set(im, TS_FI_PARAMS, json_null(), S, h->o[K_LAYERS], err) != 0)
        return -1;
#undef EMIT_I
#undef EMIT_B
    return 0;
}

static void hf_notes(const ts_import_obj *o, const ts_import_obj *root, ts_api_notes *notes)
{
    const json_t *v;

    if ((v = json_object_get(root->obj, "torch_dtype")) != NULL && json_is_string(v))
        ts_import_note_about(notes, TS_FI_PRECISION, TS_SRC_HF,
                             "%s/torch_dtype \"%.*s\" is the checkpoint's storage "
                             "type; the training precision is the precision member",
                             root->base, ts_utf8_prec(json_string_value(v), 40),
                             json_string_value(v));
    if ((v = json_object_get(o->obj, "max_position_embeddings")) != NULL && json_is_number(v))
        ts_import_note_about(notes, TS_FI_SEQ, TS_SRC_HF,
                             "%s/max_position_embeddings %.0f is the context limit, "
                             "not the training sequence length (give seq)",
                             o->base, json_number_value(v));
    if (json_object_get(root->obj, "vision_config") != NULL)
        ts_import_note(notes,
                       "%s/vision_config: the vision tower and projector are "
                       "not counted, only the language model",
                       root->base);
    if (json_object_get(root->obj, "quantization_config") != NULL)
        ts_import_note(notes,
                       "%s/quantization_config: the checkpoint's storage "
                       "quantization does not change the parameter count",
                       root->base);
}

/* Keys that say an unknown model_type's layers are not a Llama's: a
 * Llama-like read would drop them and report a model a fraction of the
 * checkpoint's size.  State-space layers first (not modelled even with a
 * shape given), then experts: Mixtral's num_local_experts, Qwen-MoE's
 * num_experts, DeepSeek's n_routed_experts, moe_num_experts (more than
 * one is a MoE).  State-space layers (any value): Jamba's and Zamba's
 * mamba_d_state and attn_layer_period, Mamba's state_size and
 * conv_kernel, NemotronH's hybrid_override_pattern, Jamba's and Zamba's
 * layers_block_type. */
static int hf_not_llama_like(const ts_import_obj *root, const char *got, const char *list,
                             ts_api_err *err)
{
    static const char *const experts[] = { "num_local_experts", "num_experts", "n_routed_experts",
                                           "moe_num_experts" };
    static const char *const ssm[] = { "mamba_d_state",           "mamba_expand",
                                       "attn_layer_period",       "state_size",
                                       "ssm_state_size",          "conv_kernel",
                                       "hybrid_override_pattern", "layers_block_type" };
    char ptr[TS_IMPORT_ORIGIN_LEN];
    size_t i;

    for (i = 0; i < sizeof ssm / sizeof ssm[0]; i++) {
        const json_t *v = json_object_get(root->obj, ssm[i]);

        if (v == NULL || json_is_null(v))
            continue;
        ts_import_ptr(ptr, sizeof ptr, root, ssm[i]);
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_MODEL_TYPE, ptr,
                       "model_type \"%s\" is not supported, and %s says it has state-space "
                       "(Mamba) layers, which trainsize does not model (transformer layers "
                       "only); supported: %s",
                       got, ptr, list);
        return -1;
    }
    for (i = 0; i < sizeof experts / sizeof experts[0]; i++) {
        const json_t *v = json_object_get(root->obj, experts[i]);

        if (!json_is_number(v) || !(json_number_value(v) > 1.0))
            continue;
        ts_import_ptr(ptr, sizeof ptr, root, experts[i]);
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_MODEL_TYPE, ptr,
                       "model_type \"%s\" is not supported, and %s (%g) says its layers are "
                       "mixture-of-experts ones, which reading it as Llama-like would drop; "
                       "send the shape fields instead (experts, top_k, moe_ffn, ...); "
                       "supported: %s",
                       got, ptr, json_number_value(v), list);
        return -1;
    }
    return 0;
}

/* A model_type without a row (issue 24 item 5): Llama-like when the file
 * has the keys every Llama-style config.json has (noted, into *like),
 * else NULL and a 400 at the first missing key, naming every one. */
static const hf_spec *hf_unknown_type(const ts_import_obj *root, const char *type, hf_spec *like,
                                      ts_api_notes *notes, ts_api_err *err)
{
    static const char *const std_keys[] = { "num_hidden_layers", "hidden_size",
                                            "num_attention_heads", "intermediate_size",
                                            "vocab_size" };
    char list[512], missing[400], first[TS_IMPORT_ORIGIN_LEN], ptr[TS_IMPORT_ORIGIN_LEN];
    size_t n = 0, m = 0, i;
    char got[64];
    int cut = ts_utf8_prec(type, 48);

    list[0] = '\0';
    /* The supported types are the table's rows: no second list to keep. */
    for (i = 0; i < HF_N && n < sizeof list; i++) {
        int k = snprintf(list + n, sizeof list - n, "%s\"%s\"", i ? ", " : "", hf_specs[i].type);
        if (k < 0)
            break;
        n += (size_t)k;
    }
    snprintf(got, sizeof got, "%.*s%s", cut, type, type[cut] != '\0' ? "..." : "");
    if (hf_not_llama_like(root, got, list, err) != 0)
        return NULL;
    missing[0] = first[0] = '\0';
    for (i = 0; i < sizeof std_keys / sizeof std_keys[0]; i++) {
        const json_t *v = json_object_get(root->obj, std_keys[i]);

        if (v != NULL && !json_is_null(v))
            continue;
        ts_import_ptr(ptr, sizeof ptr, root, std_keys[i]);
        if (first[0] == '\0')
            snprintf(first, sizeof first, "%s", ptr);
        if (m < sizeof missing) {
            int k = snprintf(missing + m, sizeof missing - m, "%s%s", m ? ", " : "", ptr);

            m += k > 0 ? (size_t)k : 0;
        }
    }
    if (first[0] != '\0') {
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_MODEL_TYPE, first,
                       "model_type \"%s\" is not supported, and the file lacks standard "
                       "keys that would read it as Llama-like: %s; supported: %s",
                       got, missing, list);
        return NULL;
    }
    /* The Llama row, named for what it is in origins and notes. */
    *like = hf_specs[0];
    like->type = "Llama-like";
    ts_import_note(notes,
                   "%s/model_type \"%s\" is not one trainsize models: read "
                   "as Llama-like (RMSNorm, gated MLP, biases only from attention_bias and "
                   "mlp_bias, tie_word_embeddings false unless given); check params.total "
                   "against the checkpoint",
                   root->base, got);
    return like;
}

/* base names the document in errors and notes ("/hf_config"; the
 * catalogue's "/model (<id>)"), src is every value's source. */
int ts_import_hf_from(ts_import *im, const json_t *cfg, const char *base, ts_api_src src,
                      ts_api_err *err)
{
    ts_import_obj root = { cfg, "" };
    ts_import_obj text;
    const ts_import_obj *o = &root;
    const hf_spec *s = NULL;
    hf_spec like;
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
    if (s == NULL && (s = hf_unknown_type(&root, type, &like, im->notes, err)) == NULL)
        return -1;
    if (s->text_config) {
        int rc = ts_import_sub(&root, "text_config", &text, err);

        if (rc < 0)
            return -1;
        if (rc == 0) {
            ts_import_ptr(ptr, sizeof ptr, &root, "text_config");
            ts_api_err_set(err, TS_PROB_MISSING_FIELD, ptr,
                           "model_type \"%s\" keeps the language model in text_config", type);
            return -1;
        }
        o = &text;
    }
    if (hf_read(o, s, &h, im->notes, err) < 0)
        return -1;
    hf_notes(o, &root, im->notes);
    hf_notes_more(o, s, &h, im->notes);
    if (s->sinks) {
        snprintf(im->eager_origin, sizeof im->eager_origin, "%s", root.base);
        im->eager_src = src;
    }
    return hf_emit(im, s, &h, src, err);
}

int ts_import_hf(ts_import *im, const json_t *cfg, ts_api_err *err)
{
    return ts_import_hf_from(im, cfg, "/hf_config", TS_SRC_HF, err);
}
