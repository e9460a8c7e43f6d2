/*
 * ts_preset.c - published model shapes.
 *
 * Shapes are the ones the authors publish (paper tables, released configs);
 * parameters are then computed from the shape by ts_model_params, and
 * published_params is kept only to cross-check that computation.
 */
#include "trainsize.h"

#include <string.h>

/* Shape helper: GQA decoder, untied, biases ignored. */
#define TS_SHAPE(l, h, a, kv, f, v, g, tied)                                                   \
    {                                                                                          \
        .params = 0, .layers = (l), .hidden = (h), .heads = (a), .kv_heads = (kv), .ffn = (f), \
        .vocab = (v), .experts = 0, .top_k = 0, .gated = (g), .tied_embeddings = (tied)        \
    }

#define LLAMA2_SRC                                                                            \
    "Touvron et al. 2023, Llama 2 (Table 1: 2T tokens, 4k context); shape from the released " \
    "params.json"
#define LLAMA3_SRC \
    "Meta Llama 3 model card (over 15T tokens, 8k context); shape from the released config.json"
#define LLAMA31_SRC \
    "Dubey et al. 2024, The Llama 3 Herd of Models (Table 3 shapes; 405B on 15.6T tokens)"

static const ts_preset ts_preset_table[] = {
    /* published_params: the exact count of the released checkpoint (the
     * papers round: "7B" is 6,738,415,616, "70B" 68,976,648,192). */
    { "llama2-7b", "Llama 2 7B", TS_SHAPE(32, 4096, 32, 32, 11008, 32000, true, false),
      6738415616.0, 2e12, 4096, LLAMA2_SRC },
    { "llama2-13b", "Llama 2 13B", TS_SHAPE(40, 5120, 40, 40, 13824, 32000, true, false),
      13015864320.0, 2e12, 4096, LLAMA2_SRC },
    { "llama2-70b", "Llama 2 70B", TS_SHAPE(80, 8192, 64, 8, 28672, 32000, true, false),
      68976648192.0, 2e12, 4096, LLAMA2_SRC },
    { "llama3-8b", "Llama 3 8B", TS_SHAPE(32, 4096, 32, 8, 14336, 128256, true, false),
      8030261248.0, 15e12, 8192, LLAMA3_SRC },
    { "llama3-70b", "Llama 3 70B", TS_SHAPE(80, 8192, 64, 8, 28672, 128256, true, false),
      70553706496.0, 15e12, 8192, LLAMA3_SRC },
    { "llama3-405b", "Llama 3 405B", TS_SHAPE(126, 16384, 128, 8, 53248, 128256, true, false),
      405853388800.0, 15e12, 8192, LLAMA3_SRC },
    { "llama3.1-8b", "Llama 3.1 8B", TS_SHAPE(32, 4096, 32, 8, 14336, 128256, true, false),
      8030261248.0, 15e12, 8192, LLAMA31_SRC },
    { "llama3.1-70b", "Llama 3.1 70B", TS_SHAPE(80, 8192, 64, 8, 28672, 128256, true, false),
      70553706496.0, 15e12, 8192, LLAMA31_SRC },
    { "llama3.1-405b", "Llama 3.1 405B", TS_SHAPE(126, 16384, 128, 8, 53248, 128256, true, false),
      405853388800.0, 15.6e12, 8192, LLAMA31_SRC },
    /* GPT-3 uses learned positions and tied embeddings; F = 4h, plain GELU.
     * No released checkpoint: 175e9 is the paper's rounded figure (the
     * shape gives 174.6e9 without biases and positions). */
    { "gpt3-175b", "GPT-3 175B", TS_SHAPE(96, 12288, 96, 96, 49152, 50257, false, true), 175e9,
      300e9, 2048,
      "Brown et al. 2020, Language Models are Few-Shot Learners (Table 2.1: 96 layers, d 12288, 96 "
      "heads, 300B tokens, 2048 context)" },
    /* 8 SwiGLU experts, 2 active per token; tokens not published. */
    { "mixtral-8x7b",
      "Mixtral 8x7B",
      { .params = 0,
        .layers = 32,
        .hidden = 4096,
        .heads = 32,
        .kv_heads = 8,
        .ffn = 14336,
        .vocab = 32000,
        .experts = 8,
        .top_k = 2,
        .gated = true,
        .tied_embeddings = false },
      46702792704.0,
      0,
      32768,
      "Jiang et al. 2024, Mixtral of Experts (Table 1; 46.7B total / 12.9B active per Mistral AI's "
      "announcement; 32k context)" },
};

#define TS_PRESET_N (sizeof ts_preset_table / sizeof ts_preset_table[0])

size_t ts_preset_count(void)
{
    return TS_PRESET_N;
}

const ts_preset *ts_preset_at(size_t i)
{
    return i < TS_PRESET_N ? &ts_preset_table[i] : NULL;
}

/* Hugging Face Hub ids of the checkpoints the presets are (base and
 * instruct share the shape and the count).  The Hub id is what a user has in
 * a config, a launch script or an axolotl base_model line. */
static const struct {
    const char *alias, *id;
} ts_preset_aliases[] = {
    { "meta-llama/Llama-2-7b-hf", "llama2-7b" },
    { "meta-llama/Llama-2-7b-chat-hf", "llama2-7b" },
    { "meta-llama/Llama-2-13b-hf", "llama2-13b" },
    { "meta-llama/Llama-2-13b-chat-hf", "llama2-13b" },
    { "meta-llama/Llama-2-70b-hf", "llama2-70b" },
    { "meta-llama/Llama-2-70b-chat-hf", "llama2-70b" },
    { "meta-llama/Meta-Llama-3-8B", "llama3-8b" },
    { "meta-llama/Meta-Llama-3-8B-Instruct", "llama3-8b" },
    { "meta-llama/Meta-Llama-3-70B", "llama3-70b" },
    { "meta-llama/Meta-Llama-3-70B-Instruct", "llama3-70b" },
    { "meta-llama/Llama-3.1-8B", "llama3.1-8b" },
    { "meta-llama/Llama-3.1-8B-Instruct", "llama3.1-8b" },
    { "meta-llama/Meta-Llama-3.1-8B", "llama3.1-8b" },
    { "meta-llama/Meta-Llama-3.1-8B-Instruct", "llama3.1-8b" },
    { "meta-llama/Llama-3.1-70B", "llama3.1-70b" },
    { "meta-llama/Llama-3.1-70B-Instruct", "llama3.1-70b" },
    { "meta-llama/Meta-Llama-3.1-70B", "llama3.1-70b" },
    { "meta-llama/Meta-Llama-3.1-70B-Instruct", "llama3.1-70b" },
    { "meta-llama/Llama-3.1-405B", "llama3.1-405b" },
    { "meta-llama/Llama-3.1-405B-Instruct", "llama3.1-405b" },
    { "meta-llama/Meta-Llama-3.1-405B", "llama3.1-405b" },
    { "meta-llama/Meta-Llama-3.1-405B-Instruct", "llama3.1-405b" },
    { "mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b" },
    { "mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b" },
};
#define TS_PRESET_ALIAS_N (sizeof ts_preset_aliases / sizeof ts_preset_aliases[0])

const ts_preset *ts_preset_find(const char *id)
{
    size_t i;

    if (id == NULL)
        return NULL;
    for (i = 0; i < TS_PRESET_N; i++)
        if (strcmp(ts_preset_table[i].id, id) == 0)
            return &ts_preset_table[i];
    /* Then as typed: any case and punctuation ("Llama3-8B", "llama3_8b"),
     * and the Hub ids, with or without the organisation. */
    for (i = 0; i < TS_PRESET_N; i++)
        if (ts_name_same(ts_preset_table[i].id, id))
            return &ts_preset_table[i];
    for (i = 0; i < TS_PRESET_ALIAS_N; i++) {
        const char *a = ts_preset_aliases[i].alias, *slash = strchr(a, '/');

        if (ts_name_same(a, id) || (slash != NULL && ts_name_same(slash + 1, id)))
            return ts_preset_find(ts_preset_aliases[i].id);
    }
    return NULL;
}

const char *ts_preset_suggest(const char *typed)
{
    ts_name_suggest s;
    const char *best;
    size_t i;

    ts_name_suggest_init(&s, typed);
    for (i = 0; i < TS_PRESET_N; i++)
        ts_name_suggest_try(&s, ts_preset_table[i].id);
    for (i = 0; i < TS_PRESET_ALIAS_N; i++)
        ts_name_suggest_try(&s, ts_preset_aliases[i].alias);
    best = ts_name_suggest_best(&s);
    return best != NULL ? ts_preset_find(best)->id : NULL;
}

const char *ts_preset_alias(const char *id, size_t i)
{
    size_t k;

    for (k = 0; k < TS_PRESET_ALIAS_N; k++) {
        if (strcmp(ts_preset_aliases[k].id, id) != 0)
            continue;
        if (i == 0)
            return ts_preset_aliases[k].alias;
        i--; /* never below 0: no wrap-around for the fuzz builds' checks */
    }
    return NULL;
}
