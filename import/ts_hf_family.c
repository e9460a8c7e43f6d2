/*
 * ts_hf_family.c - the readers of one model family each for a Hugging
 * Face config.json: the names FalconConfig, BloomConfig and GPT2Config
 * give the shape, the experts of Mixtral, Qwen-MoE and DeepSeek, and
 * what the catalogue's added rows count differently from the checkpoint.
 * Part of the config.json importer (ts_hf.c, whose table row says which
 * reader a model_type takes); shared types in ts_hf_int.h.
 */
#include <stdio.h>
#include <string.h>

#include "ts_ckd.h"
#include "ts_hf_int.h"
#include "ts_import.h"

/* ---- readers of the model types added for the catalogue (issue 24) ---- */

/* Qwen2-MoE's shared expert is one gated MLP of
 * shared_expert_intermediate_size: counted as that many moe_ffn-wide
 * shared experts (the same weights and FLOPs), with its h-weight gate. */
static int hf_read_qwen2_shared(const ts_import_obj *o, hf_shape *h, ts_api_notes *notes,
                                ts_api_err *err)
{
    int64_t width = 0;
    char ptr[TS_IMPORT_ORIGIN_LEN];

    if (ts_import_int(o, "shared_expert_intermediate_size", 0, INT64_C(1) << 40, false, &width,
                      err) < 0)
        return -1;
    if (width == 0)
        return 0;
    ts_import_ptr(ptr, sizeof ptr, o, "shared_expert_intermediate_size");
    if (width % h->moe_ffn != 0) {
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, ptr,
                       "shared_expert_intermediate_size %lld is not a multiple of "
                       "moe_intermediate_size %lld: a shared expert of its own width is "
                       "not modelled",
                       (long long)width, (long long)h->moe_ffn);
        return -1;
    }
    h->shared = width / h->moe_ffn;
    h->shared_gate = true;
    snprintf(h->o[K_SHARED], TS_IMPORT_ORIGIN_LEN, "%s", ptr);
    if (h->shared > 1)
        ts_import_note(notes,
                       "%s %lld = %lld x moe_intermediate_size: counted as %lld "
                       "shared experts of that width (the same weights and FLOPs)",
                       ptr, (long long)width, (long long)h->shared, (long long)h->shared);
    return 0;
}

/* FalconConfig and BloomConfig name the shape their own way. */
int hf_read_more_keys(const ts_import_obj *o, const hf_spec *s, hf_shape *h, ts_api_err *err)
{
    const int64_t big = INT64_C(1) << 40;
    const char *layers = s->bloom_keys ? "n_layer" : "num_hidden_layers";
    const char *heads = s->bloom_keys ? "n_head" : "num_attention_heads";
    const char *hidden = "hidden_size";
    bool newarch = false, mq = true, par = true;
    int64_t nln = 0;
    int rc;

    /* BloomConfig still takes the old n_embed for hidden_size. */
    if (s->bloom_keys && json_object_get(o->obj, hidden) == NULL &&
        json_object_get(o->obj, "n_embed") != NULL)
        hidden = "n_embed";
    if (ts_import_int(o, layers, 1, big, true, &h->layers, err) < 0 ||
        ts_import_int(o, hidden, 1, big, true, &h->hidden, err) < 0 ||
        ts_import_int(o, heads, 1, big, true, &h->heads, err) < 0 ||
        ts_import_int(o, "vocab_size", 1, big, true, &h->vocab, err) < 0)
        return -1;
    ts_import_ptr(h->o[K_LAYERS], TS_IMPORT_ORIGIN_LEN, o, layers);
    ts_import_ptr(h->o[K_HIDDEN], TS_IMPORT_ORIGIN_LEN, o, hidden);
    ts_import_ptr(h->o[K_HEADS], TS_IMPORT_ORIGIN_LEN, o, heads);
    ts_import_ptr(h->o[K_VOCAB], TS_IMPORT_ORIGIN_LEN, o, "vocab_size");
    h->ffn = 4 * h->hidden;
    snprintf(h->o[K_FFN], TS_IMPORT_ORIGIN_LEN, "%s (%s MLP: 4 hidden_size)", o->base, s->type);
    if (s->bloom_keys)
        return 0;
    if ((rc = ts_import_int(o, "ffn_hidden_size", 1, big, false, &h->ffn, err)) < 0)
        return -1;
    if (rc > 0)
        ts_import_ptr(h->o[K_FFN], TS_IMPORT_ORIGIN_LEN, o, "ffn_hidden_size");
    if (ts_import_bool(o, "new_decoder_architecture", &newarch, err) < 0 ||
        ts_import_bool(o, "multi_query", &mq, err) < 0 ||
        ts_import_bool(o, "parallel_attn", &par, err) < 0 ||
        ts_import_int(o, "num_ln_in_parallel_attn", 1, 2, false, &nln, err) < 0)
        return -1;
    if (newarch) {
        h->kv_heads = h->heads; /* FalconConfig: num_kv_heads defaults to the heads */
        snprintf(h->o[K_KV], TS_IMPORT_ORIGIN_LEN, "%s", h->o[K_HEADS]);
        if ((rc = ts_import_int(o, "num_kv_heads", 1, big, false, &h->kv_heads, err)) < 0)
            return -1;
        if (rc > 0)
            ts_import_ptr(h->o[K_KV], TS_IMPORT_ORIGIN_LEN, o, "num_kv_heads");
    } else if (mq) {
        h->kv_heads = 1;
        snprintf(h->o[K_KV], TS_IMPORT_ORIGIN_LEN, "%s/multi_query (one k/v head)", o->base);
    }
    /* Two LayerNorms side by side in the new architecture, one before
     * the parallel attention and MLP, two in sequence otherwise. */
    h->norms = newarch && nln != 1 ? 2 : par ? 1 : 2;
    snprintf(h->o[K_NORMS], TS_IMPORT_ORIGIN_LEN, "%s/%s", o->base,
             newarch ? "new_decoder_architecture" : "parallel_attn");
    return 0;
}

/* layer_types, the list newer transformers writes into every config
 * (and gpt-oss's and Gemma 3's own): how many layers slide.  Only the
 * two kinds this model costs; any other (chunked or linear attention)
 * is refused rather than costed as full attention.  1 listed, 0 absent,
 * -1 error. */
static int hf_layer_types(const ts_import_obj *o, const hf_shape *h, int64_t *n, char *origin,
                          ts_api_err *err)
{
    const json_t *v = json_object_get(o->obj, "layer_types"), *t;
    char ptr[TS_IMPORT_ORIGIN_LEN];
    size_t i;

    if (v == NULL || json_is_null(v))
        return 0;
    ts_import_ptr(ptr, sizeof ptr, o, "layer_types");
    if (!json_is_array(v) || json_array_size(v) != (size_t)h->layers) {
        ts_api_err_set(err, json_is_array(v) ? TS_PROB_INVALID_VALUE : TS_PROB_INVALID_TYPE, ptr,
                       "%s must list one type per layer (%lld layers)", ptr, (long long)h->layers);
        return -1;
    }
    *n = 0;
    json_array_foreach(v, i, t)
    {
        const char *k = json_is_string(t) ? json_string_value(t) : NULL;

        if (k != NULL && strcmp(k, "sliding_attention") == 0) {
            (*n)++;
        } else if (k == NULL || strcmp(k, "full_attention") != 0) {
            snprintf(ptr + strlen(ptr), sizeof ptr - strlen(ptr), "/%zu", i);
            ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, ptr,
                           "%s: only full_attention and sliding_attention layers are "
                           "modelled",
                           ptr);
            return -1;
        }
    }
    snprintf(origin, TS_IMPORT_ORIGIN_LEN, "%s", ptr);
    return 1;
}

/* The layers that slide by the type's rule, without layer_types. */
static int hf_window_layers(const ts_import_obj *o, const hf_spec *s, hf_shape *h, ts_api_err *err)
{
    int64_t k;
    int rc;

    switch (s->window) {
    case HF_WIN_FROM:
        k = 28; /* Qwen2Config's and Qwen3Config's default max_window_layers */
        if ((rc = ts_import_int(o, "max_window_layers", 0, INT64_C(1) << 40, false, &k, err)) < 0)
            return -1;
        h->wlayers = k < h->layers ? h->layers - k : 0;
        snprintf(h->o[K_WLAYERS], TS_IMPORT_ORIGIN_LEN, "%s%s (%lld: from it on)", o->base,
                 rc > 0 ? "/max_window_layers" : " (default max_window_layers)", (long long)k);
        return 0;
    case HF_WIN_ALT:
        h->wlayers = (h->layers + 1) / 2;
        snprintf(h->o[K_WLAYERS], TS_IMPORT_ORIGIN_LEN, "%s (model_type %s: every other layer)",
                 o->base, s->type);
        return 0;
    case HF_WIN_PATTERN:
        k = 6; /* Gemma3TextConfig's default sliding_window_pattern */
        if ((rc = ts_import_int(o, "sliding_window_pattern", 1, INT64_C(1) << 40, false, &k, err)) <
            0)
            return -1;
        h->wlayers = h->layers - h->layers / k;
        if (rc > 0)
            ts_import_ptr(h->o[K_WLAYERS], TS_IMPORT_ORIGIN_LEN, o, "sliding_window_pattern");
        else
            snprintf(h->o[K_WLAYERS], TS_IMPORT_ORIGIN_LEN,
                     "%s (%s default sliding_window_pattern 6)", o->base, s->type);
        return 0;
    case HF_WIN_VERSIONED: {
        char ptr[TS_IMPORT_ORIGIN_LEN];

        ts_import_ptr(ptr, sizeof ptr, o, "use_sliding_window");
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, ptr,
                       "%s: which %s layers slide differs between transformers versions; "
                       "give sliding_window and sliding_layers",
                       ptr, s->type);
        return -1;
    }
    default: /* HF_WIN_ALL */
        h->wlayers = h->layers;
        snprintf(h->o[K_WLAYERS], TS_IMPORT_ORIGIN_LEN, "%s (model_type %s: every layer)", o->base,
                 s->type);
        return 0;
    }
}

/* The sliding window, as the <Type>Config decides it (transformers
 * configuration_<type>.py): sliding_window is the band a query sees,
 * itself included; null means none and an absent key the type's
 * default.  Qwen's types slide only with use_sliding_window.  Which
 * layers: layer_types where listed, else the type's rule. */
int hf_read_window(const ts_import_obj *o, const hf_spec *s, hf_shape *h, ts_api_notes *notes,
                   ts_api_err *err)
{
    const json_t *v = json_object_get(o->obj, "sliding_window");
    int64_t n = 0;
    bool use = true;
    int listed, rc;

    snprintf(h->o[K_WINDOW], TS_IMPORT_ORIGIN_LEN, "%s (model_type %s)", o->base, s->type);
    snprintf(h->o[K_WLAYERS], TS_IMPORT_ORIGIN_LEN, "%s", h->o[K_WINDOW]);
    if ((listed = hf_layer_types(o, h, &n, h->o[K_WLAYERS], err)) < 0)
        return -1;
    if (s->window == HF_WIN_NONE && listed == 0) {
        if (v != NULL && !json_is_null(v))
            ts_import_note(notes,
                           "%s/sliding_window: model_type %s does not say which layers use "
                           "it; costed as full attention",
                           o->base, s->type);
        return 0;
    }
    if (s->window_flag) {
        use = false; /* Qwen2Config's default */
        if (ts_import_bool(o, "use_sliding_window", &use, err) < 0)
            return -1;
        if (!use)
            ts_import_ptr(h->o[K_WINDOW], TS_IMPORT_ORIGIN_LEN, o, "use_sliding_window");
    }
    if (use && v == NULL && s->window_default > 0) {
        h->window = s->window_default;
        snprintf(h->o[K_WINDOW], TS_IMPORT_ORIGIN_LEN, "%s (%s default sliding_window)", o->base,
                 s->type);
    } else if (use && (rc = ts_import_int(o, "sliding_window", 1, INT64_C(1) << 24, false,
                                          &h->window, err)) != 0) {
        if (rc < 0)
            return -1;
        ts_import_ptr(h->o[K_WINDOW], TS_IMPORT_ORIGIN_LEN, o, "sliding_window");
    }
    if (h->window == 0) {
        if (n > 0)
            ts_import_note(notes,
                           "%s/layer_types: %lld sliding layers, but the config gives them no "
                           "window: costed as full attention",
                           o->base, (long long)n);
        return 0;
    }
    if (listed > 0)
        h->wlayers = n;
    else if (hf_window_layers(o, s, h, err) < 0)
        return -1;
    /* As the request has them: 0 layers for every one (so that a smaller
     * layers in the request keeps the rule), no window when none slides. */
    if (h->wlayers == 0)
        h->window = 0;
    else if (h->wlayers == h->layers)
        h->wlayers = 0;
    return 0;
}

/* What the added rows count differently from the checkpoint, said. */
void hf_notes_more(const ts_import_obj *o, const hf_spec *s, const hf_shape *h, ts_api_notes *notes)
{
    int64_t d = h->head_dim != 0 ? h->head_dim : h->hidden / h->heads;
    int64_t kv = h->kv_heads != 0 ? h->kv_heads : h->heads;
    const json_t *v;

    if (s->norms_weightless)
        ts_import_note(notes,
                       "%s: OLMo's LayerNorms have no weights; the %lld norm "
                       "vectors of %lld counted here (%lld parameters) are not in the "
                       "checkpoint",
                       o->base, (long long)(2 * h->layers + 1), (long long)h->hidden,
                       (long long)((2 * h->layers + 1) * h->hidden));
    if (s->qk_norm_full)
        ts_import_note(notes,
                       "%s: %s normalises q and k over the whole projection "
                       "((heads + kv_heads) x head_dim = %lld weights a layer), counted as "
                       "2 x head_dim: %lld parameters short",
                       o->base, s->type, (long long)((h->heads + kv) * d),
                       (long long)(((h->heads + kv) * d - 2 * d) * h->layers));
    if (s->sinks)
        ts_import_note(notes,
                       "%s: gpt-oss's %lld attention sinks (a logit per head and layer) are "
                       "not counted",
                       o->base, (long long)(h->heads * h->layers));
    if (s->lm_head_bias_key && (v = json_object_get(o->obj, "lm_head_bias")) != NULL &&
        json_is_true(v))
        ts_import_note(notes,
                       "%s/lm_head_bias: the output head's %lld biases are not "
                       "counted",
                       o->base, (long long)h->vocab);
}

/* MixtralConfig (GraniteMoe, PhiMoE): num_local_experts, top-k default 2. */
static int hf_read_mixtral(const ts_import_obj *o, const hf_spec *s, hf_shape *h, ts_api_err *err)
{
    const int64_t big = INT64_C(1) << 40;
    int rc;

    if (ts_import_int(o, "num_local_experts", 1, big, true, &h->experts, err) < 0)
        return -1;
    ts_import_ptr(h->o[K_EXPERTS], TS_IMPORT_ORIGIN_LEN, o, "num_local_experts");
    /* gpt-oss's router is a Linear with bias; MiniMax-M2's keeps an
     * e_score_correction_bias, as DeepSeek-V3's */
    h->router_bias = s->router_bias;
    /* MixtralConfig's default 2 (GraniteMoe's and PhiMoE's too); GptOssConfig's 4. */
    h->top_k = s->top_k_default != 0 ? s->top_k_default : 2;
    snprintf(h->o[K_TOPK], TS_IMPORT_ORIGIN_LEN, "%s (%s default num_experts_per_tok)", o->base,
             s->type);
    if ((rc = ts_import_int(o, "num_experts_per_tok", 1, big, false, &h->top_k, err)) < 0)
        return -1;
    if (rc > 0)
        ts_import_ptr(h->o[K_TOPK], TS_IMPORT_ORIGIN_LEN, o, "num_experts_per_tok");
    return 0;
}

/* MiniMax-M2 (transformers models/minimax_m2/modular_minimax_m2.py@
 * 001f85b3): MixtralExperts and MixtralTopKRouter (sigmoid scores plus
 * the e_score_correction_bias of the checkpoint), FlexOlmoAttention =
 * Olmo2Attention (q and k RMSNorms over the whole projection), every
 * layer softmax attention and sparse.  The Hub config also carries keys
 * of MiniMax's own modeling code (auto_map); where one asks for a part
 * transformers does not build, it is refused rather than dropped. */
static int hf_read_minimax(const ts_import_obj *o, const hf_shape *h, ts_api_notes *notes,
                           ts_api_err *err)
{
    const int64_t big = INT64_C(1) << 40;
    const json_t *list = json_object_get(o->obj, "attn_type_list");
    const json_t *t;
    const char *qk_type = NULL;
    int64_t shared = 0, mtp = 0;
    bool qk = true;
    char ptr[TS_IMPORT_ORIGIN_LEN];
    size_t i;

    if (ts_import_int(o, "shared_intermediate_size", 0, big, false, &shared, err) < 0 ||
        ts_import_bool(o, "use_qk_norm", &qk, err) < 0 ||
        ts_import_str(o, "qk_norm_type", false, &qk_type, err) < 0 ||
        ts_import_int(o, "num_mtp_modules", 0, big, false, &mtp, err) < 0)
        return -1;
    if (shared > 0) {
        ts_import_ptr(ptr, sizeof ptr, o, "shared_intermediate_size");
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, ptr,
                       "shared_intermediate_size %lld: a shared expert beside the routed "
                       "ones is not modelled for minimax_m2 (transformers builds none)",
                       (long long)shared);
        return -1;
    }
    if (!qk || (qk_type != NULL && strcmp(qk_type, "per_layer") != 0)) {
        ts_import_ptr(ptr, sizeof ptr, o, qk ? "qk_norm_type" : "use_qk_norm");
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, ptr,
                       "%s: only q and k norms over the whole projection (use_qk_norm "
                       "true, qk_norm_type \"per_layer\", what transformers builds) are "
                       "modelled",
                       ptr);
        return -1;
    }
    if (list != NULL && !json_is_null(list)) {
        ts_import_ptr(ptr, sizeof ptr, o, "attn_type_list");
        if (!json_is_array(list) || json_array_size(list) != (size_t)h->layers) {
            ts_api_err_set(err, json_is_array(list) ? TS_PROB_INVALID_VALUE : TS_PROB_INVALID_TYPE,
                           ptr, "%s must list one attention type per layer (%lld layers)", ptr,
                           (long long)h->layers);
            return -1;
        }
        /* MiniMax's code: 1 softmax attention, 0 its linear (lightning) one. */
        json_array_foreach(list, i, t)
        {
            double k = json_is_number(t) ? json_number_value(t) : -1.0;

            if (k == 1.0)
                continue;
            snprintf(ptr + strlen(ptr), sizeof ptr - strlen(ptr), "/%zu", i);
            if (k == 0.0)
                ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, ptr,
                               "%s: only softmax attention layers (1) are modelled, not "
                               "linear attention (0)",
                               ptr);
            else
                ts_api_err_set(
                    err, json_is_number(t) ? TS_PROB_INVALID_VALUE : TS_PROB_INVALID_TYPE, ptr,
                    "%s must be 0 (linear attention) or 1 (softmax attention)", ptr);
            return -1;
        }
    }
    if (mtp > 0)
        ts_import_note(notes,
                       "%s/num_mtp_modules %lld: the multi-token prediction modules are not "
                       "counted (transformers' MiniMaxM2ForCausalLM builds none)",
                       o->base, (long long)mtp);
    return 0;
}

/* One of Glm4MoeConfig's integer keys, its default when absent
 * (configuration_glm4_moe.py@c7ec229a), the origin into o_out. */
static int hf_glm4_int(const ts_import_obj *o, const char *key, int64_t lo, int64_t def, int64_t *v,
                       char *o_out, ts_api_err *err)
{
    int rc;

    *v = def;
    if ((rc = ts_import_int(o, key, lo, INT64_C(1) << 40, false, v, err)) < 0)
        return -1;
    if (rc > 0)
        ts_import_ptr(o_out, TS_IMPORT_ORIGIN_LEN, o, key);
    else
        snprintf(o_out, TS_IMPORT_ORIGIN_LEN, "%s (Glm4MoeConfig default %s %lld)", o->base, key,
                 (long long)def);
    return 0;
}

/* GLM-4.5 (modeling_glm4_moe.py@a0699c97): Glm4MoeMoE is n_routed_experts
 * MLPs of moe_intermediate_size, one shared MLP of moe_intermediate_size x
 * n_shared_experts (counted as that many shared experts: the same weights
 * and FLOPs) and a router of n_routed_experts x h with its
 * e_score_correction_bias, in every layer from first_k_dense_replace on;
 * o_proj has no bias whatever attention_bias says.  The checkpoint's
 * multi-token-prediction layer (num_nextn_predict_layers) is not built
 * (Glm4MoeModel ignores model.layers.46/92 on load): noted. */
static int hf_read_glm4(const ts_import_obj *o, hf_shape *h, ts_api_notes *notes, ts_api_err *err)
{
    int64_t mtp = 0;

    if (hf_glm4_int(o, "n_routed_experts", 1, 128, &h->experts, h->o[K_EXPERTS], err) < 0 ||
        hf_glm4_int(o, "num_experts_per_tok", 1, 8, &h->top_k, h->o[K_TOPK], err) < 0 ||
        hf_glm4_int(o, "moe_intermediate_size", 1, 1408, &h->moe_ffn, h->o[K_MOE_FFN], err) < 0 ||
        hf_glm4_int(o, "n_shared_experts", 0, 1, &h->shared, h->o[K_SHARED], err) < 0 ||
        hf_glm4_int(o, "first_k_dense_replace", 0, 1, &h->dense_layers, h->o[K_DENSE], err) < 0 ||
        ts_import_int(o, "num_nextn_predict_layers", 0, INT64_C(1) << 40, false, &mtp, err) < 0 ||
        ts_import_bool(o, "use_qk_norm", &h->qk_norm, err) < 0)
        return -1;
    h->out_bias = false;
    h->router_bias = true; /* Glm4MoeTopkRouter's e_score_correction_bias */
    if (mtp > 0)
        ts_import_note(notes,
                       "%s/num_nextn_predict_layers %lld: the multi-token prediction layer in the "
                       "checkpoint is not counted (transformers' Glm4MoeModel does not build it)",
                       o->base, (long long)mtp);
    return 0;
}

/* Qwen3-MoE and Qwen2-MoE (modeling_qwen3_moe.py): a layer is sparse
 * unless listed in mlp_only_layers or off the decoder_sparse_step grid. */
static int hf_read_qwen_moe(const ts_import_obj *o, const hf_spec *s, hf_shape *h,
                            ts_api_notes *notes, ts_api_err *err)
{
    const int64_t big = INT64_C(1) << 40;
    const json_t *only = json_object_get(o->obj, "mlp_only_layers");
    int64_t step = 1;
    char ptr[TS_IMPORT_ORIGIN_LEN];

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
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, ptr,
                       "dense layers between sparse ones are not modelled: "
                       "decoder_sparse_step must be 1 and mlp_only_layers empty");
        return -1;
    }
    return s->moe == HF_MOE_QWEN2 ? hf_read_qwen2_shared(o, h, notes, err) : 0;
}

/* DeepSeek-V2/V3 (modeling_deepseek.py): MLA everywhere, MoE in every
 * layer after the first first_k_dense_replace. */
static int hf_read_deepseek(const ts_import_obj *o, const hf_spec *s, hf_shape *h,
                            ts_api_notes *notes, ts_api_err *err)
{
    const int64_t big = INT64_C(1) << 40;
    int64_t freq = 1, mtp = 0;
    const char *method = NULL;

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
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, ptr,
                       "moe_layer_freq %lld (MoE only every n-th layer) is not modelled; "
                       "only 1 is",
                       (long long)freq);
        return -1;
    }
    if (mtp > 0)
        ts_import_note(notes,
                       "%s/num_nextn_predict_layers %lld: the multi-token "
                       "prediction module is not counted (DeepSeek-V3's 671B excludes "
                       "its 14B MTP weights)",
                       o->base, (long long)mtp);
    if (s->router_bias || (method != NULL && strcmp(method, "noaux_tc") == 0))
        h->router_bias = true;
    return 0;
}

int hf_read_moe(const ts_import_obj *o, const hf_spec *s, hf_shape *h, ts_api_notes *notes,
                ts_api_err *err)
{
    if (s->moe == HF_MOE_MIXTRAL)
        return hf_read_mixtral(o, s, h, err) < 0 ||
                       (s->minimax_keys && hf_read_minimax(o, h, notes, err) < 0)
                   ? -1
                   : 0;
    if (s->moe == HF_MOE_QWEN3 || s->moe == HF_MOE_QWEN2)
        return hf_read_qwen_moe(o, s, h, notes, err);
    if (s->moe == HF_MOE_GLM4)
        return hf_read_glm4(o, h, notes, err);
    return hf_read_deepseek(o, s, h, notes, err);
}

/* GPT2Config's names: n_layer, n_embd, n_head, n_inner (null: 4 n_embd),
 * n_positions (default 1024). */
int hf_read_gpt2(const ts_import_obj *o, hf_shape *h, ts_api_err *err)
{
    const int64_t big = INT64_C(1) << 40;
    int rc;

    if (ts_import_int(o, "n_layer", 1, big, true, &h->layers, err) < 0 ||
        ts_import_int(o, "n_embd", 1, big, true, &h->hidden, err) < 0 ||
        ts_import_int(o, "n_head", 1, big, true, &h->heads, err) < 0 ||
        ts_import_int(o, "vocab_size", 1, big, true, &h->vocab, err) < 0)
        return -1;
    ts_import_ptr(h->o[K_LAYERS], TS_IMPORT_ORIGIN_LEN, o, "n_layer");
    ts_import_ptr(h->o[K_HIDDEN], TS_IMPORT_ORIGIN_LEN, o, "n_embd");
    ts_import_ptr(h->o[K_HEADS], TS_IMPORT_ORIGIN_LEN, o, "n_head");
    ts_import_ptr(h->o[K_VOCAB], TS_IMPORT_ORIGIN_LEN, o, "vocab_size");
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
    return 0;
}
