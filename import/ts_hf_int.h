/*
 * ts_hf_int.h - the Hugging Face config.json importer's own types and the
 * functions its files share (hf_*); the interface is ts_import_hf() and
 * ts_import_hf_from() in ts_import.h.
 *   ts_hf.c         the table of model types, the keys most configs use,
 *                   tying and biases, the members proposed, the entry
 *   ts_hf_family.c  the readers of one family each: Falcon / BLOOM,
 *                   GPT-2, the MoE families (Mixtral, Qwen, DeepSeek)
 */
#ifndef TS_HF_INT_H
#define TS_HF_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ts_import.h"

typedef enum hf_moe {
    HF_MOE_NONE = 0,
    HF_MOE_MIXTRAL,  /* num_local_experts, num_experts_per_tok */
    HF_MOE_QWEN3,    /* num_experts, moe_intermediate_size, every layer sparse */
    HF_MOE_DEEPSEEK, /* routed + shared experts, first dense layers, MLA */
    HF_MOE_QWEN2,    /* HF_MOE_QWEN3 plus a gated shared expert */
    HF_MOE_GLM4      /* DeepSeek's experts, shared ones and first dense layers, with GQA */
} hf_moe;

/* Which layers slide when the config gives a window (the <Type>Config's
 * rule; a layer_types list, where given, says it for any type). */
typedef enum hf_window {
    HF_WIN_NONE = 0, /* no sliding window in the model type */
    HF_WIN_ALL,      /* every layer (Mistral, Mixtral, Phi-3, Starcoder2, Qwen3-MoE) */
    HF_WIN_FROM,     /* from layer max_window_layers on (Qwen2, Qwen3) */
    HF_WIN_ALT,      /* every other layer, the first sliding (Gemma 2, gpt-oss) */
    HF_WIN_PATTERN,  /* all but every sliding_window_pattern-th (Gemma 3) */
    HF_WIN_VERSIONED /* the layers depend on the transformers version: refused (Qwen2-MoE) */
} hf_window;

typedef struct hf_spec {
    const char *type;
    bool gpt2_keys;          /* n_embd, n_layer, n_head, n_inner, n_positions */
    bool tie_default;        /* tie_word_embeddings when absent */
    bool gated;              /* SwiGLU / GeGLU: gate, up, down */
    bool qkv_bias;           /* always (Qwen2) */
    bool attention_bias_key; /* "attention_bias" -> q, k, v, o biases */
    bool attention_bias_default;
    bool mlp_bias_key; /* "mlp_bias" (Llama) */
    bool mlp_bias;     /* always (GPT-2, GPT-NeoX) */
    bool layernorm;    /* LayerNorm with bias, else RMSNorm */
    int norms;         /* per layer */
    bool qk_norm;
    int64_t head_dim_default; /* when "head_dim" is absent; 0 = hidden / heads */
    hf_moe moe;
    bool router_bias;     /* DeepSeek-V3 e_score_correction_bias */
    bool text_config;     /* multimodal: the language model is in text_config */
    bool gemma3_defaults; /* Gemma3TextConfig defaults for absent keys */
    /* ---- for the model types added with the catalogue (issue 24) ---- */
    bool falcon_keys;     /* FalconConfig: no intermediate_size, kv heads and norms from flags */
    bool bloom_keys;      /* BloomConfig: n_layer, n_head, hidden_size (n_embed), MLP 4 h */
    const char *bias_key; /* one key for the q, k, v, o biases ("bias", "use_bias") */
    bool bias_key_default;
    bool bias_key_mlp;     /* ... and the MLP's */
    bool embed_norm;       /* a LayerNorm after the embedding (BLOOM) */
    bool norms_weightless; /* OLMo: LayerNorm without weights (counted; noted) */
    bool qk_norm_full;     /* OLMo 2: q/k norms over the whole projection (noted) */
    bool lm_head_bias_key; /* PhiMoE: "lm_head_bias" (not counted; noted) */
    bool sinks;            /* gpt-oss: a learned sink logit per head (not counted; noted) */
    bool minimax_keys;     /* MiniMax-M2: its own code's keys checked against transformers' */
    int64_t top_k_default; /* num_experts_per_tok when absent; 0 = MixtralConfig's 2 */
    hf_window window;
    bool window_flag;       /* slides only with use_sliding_window (Qwen, default off) */
    int64_t window_default; /* sliding_window when absent (null: none) */
} hf_spec;

/* The origins' indices in hf_shape.o, one per member group. */
enum {
    K_LAYERS,
    K_HIDDEN,
    K_HEADS,
    K_KV,
    K_FFN,
    K_VOCAB,
    K_HEAD_DIM,
    K_POS,
    K_EXPERTS,
    K_TOPK,
    K_MOE_FFN,
    K_SHARED,
    K_DENSE,
    K_QLORA,
    K_KVLORA,
    K_NOPE,
    K_ROPE,
    K_VDIM,
    K_TIE,
    K_BIAS,
    K_NORMS,
    K_WINDOW,
    K_WLAYERS,
    K_COUNT
};

/* Every value a row can produce, before it becomes request members. */
typedef struct hf_shape {
    int64_t layers, hidden, heads, kv_heads, ffn, vocab, head_dim, pos;
    int64_t experts, top_k, moe_ffn, shared, dense_layers;
    int64_t q_lora, kv_lora, nope, rope, v_dim, norms;
    int64_t window, wlayers; /* sliding_window, sliding_layers */
    bool tied, qkv_bias, out_bias, mlp_bias, router_bias, shared_gate;
    bool qk_norm; /* read from the config (GLM-4.5's use_qk_norm); else the spec's */
    char o[K_COUNT][TS_IMPORT_ORIGIN_LEN]; /* origins, by the K_* index */
} hf_shape;

/* ts_hf_family.c: the readers of one family each (0 or -1 with *err). */
/* FalconConfig's and BloomConfig's names for the shape */
int hf_read_more_keys(const ts_import_obj *o, const hf_spec *s, hf_shape *h, ts_api_err *err);
/* GPT2Config's names */
int hf_read_gpt2(const ts_import_obj *o, hf_shape *h, ts_api_err *err);
/* the experts of s->moe's family */
int hf_read_moe(const ts_import_obj *o, const hf_spec *s, hf_shape *h, ts_api_notes *notes,
                ts_api_err *err);
/* the sliding window and the layers that use it */
int hf_read_window(const ts_import_obj *o, const hf_spec *s, hf_shape *h, ts_api_notes *notes,
                   ts_api_err *err);
/* what the catalogue's rows count differently from the checkpoint */
void hf_notes_more(const ts_import_obj *o, const hf_spec *s, const hf_shape *h,
                   ts_api_notes *notes);

#endif /* TS_HF_INT_H */
