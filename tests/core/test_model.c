/*
 * test_model.c - parameter counts from a shape (ts_model_params).
 *
 * Shapes are entered by hand from each model's paper / config.json, not
 * taken from the preset table, so this file checks the formula itself.
 * Published totals are rounded to 3 significant figures (e.g. "6.74B"),
 * hence the 0.5% tolerance on them; the exact integer counts worked by hand
 * in the comments are checked to 1e-12 relative (double represents these
 * integers exactly, the tolerance only absorbs summation order).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"

#define REL_CLOSE(got, want, rel)                                                                  \
    ck_assert_msg(fabs((got) - (want)) <= (rel)*fabs(want), "%s = %.12g, want %.12g (rel tol %g)", \
                  #got, (double)(got), (double)(want), (double)(rel))

#define EXACT     1e-12
#define PUBLISHED 0.005 /* published figures have 3 significant digits */

typedef struct shape_case {
    const char *name;
    ts_model m;
    double published_total;  /* as the authors give it */
    double exact_total;      /* worked by hand below */
    double published_active; /* 0 = same as total */
    double exact_active;
} shape_case;

static const shape_case shapes[] = {
    /* Llama 2 7B (Touvron et al. 2023; HF config: L 32, h 4096, a 32,
     * F 11008, V 32000, SwiGLU, untied).  Per layer 4 h^2 = 67108864 +
     * 3 h F = 135266304 + 2h = 8192 -> 202383360; x32 = 6476267520;
     * + 2 V h = 262144000 + final norm 4096 = 6738415616. Paper: 6.74B. */
    { "llama2-7b",
      { .layers = 32,
        .hidden = 4096,
        .heads = 32,
        .kv_heads = 32,
        .ffn = 11008,
        .vocab = 32000,
        .gated = true },
      6.74e9,
      6738415616.0,
      0,
      6738415616.0 },
    /* Llama 3 8B (Meta 2024; config: L 32, h 4096, a 32, a_kv 8, F 14336,
     * V 128256).  attn 2h^2 + 2h*1024 = 41943040, MLP 3hF = 176160768,
     * norm 8192 -> 218112000 x 32 = 6979584000; 2Vh = 1050673152; + 4096
     * = 8030261248.  Published: 8.03B. */
    { "llama3-8b",
      { .layers = 32,
        .hidden = 4096,
        .heads = 32,
        .kv_heads = 8,
        .ffn = 14336,
        .vocab = 128256,
        .gated = true },
      8.03e9,
      8030261248.0,
      0,
      8030261248.0 },
    /* GPT-3 175B (Brown et al. 2020, Table 2.1: L 96, h 12288, a 96,
     * F = 4h, V 50257, tied).  12 L h^2 = 173946175488, norms 2hL + h =
     * 2371584, Vh = 617558016 -> 174566105088.  docs/formulas.md: 174.6e9. */
    { "gpt3-175b",
      { .layers = 96, .hidden = 12288, .heads = 96, .vocab = 50257, .tied_embeddings = true },
      174.6e9,
      174566105088.0,
      0,
      174566105088.0 },
    /* Mixtral 8x7B (Jiang et al. 2024: L 32, h 4096, a 32, a_kv 8,
     * F 14336, V 32000, E 8, k 2).  Per layer attn 41943040 + 8 x 176160768
     * + router 32768 + 8192 = 1451270144, x32 = 46440644608, + 2Vh
     * 262144000 + 4096 = 46702792704.  Active: minus 6 experts x 32 layers x
     * 176160768 = 33822867456 -> 12879925248.  Paper: 46.7B / 12.9B. */
    { "mixtral-8x7b",
      { .layers = 32,
        .hidden = 4096,
        .heads = 32,
        .kv_heads = 8,
        .ffn = 14336,
        .vocab = 32000,
        .experts = 8,
        .top_k = 2,
        .gated = true },
      46.7e9,
      46702792704.0,
      12.9e9,
      12879925248.0 },
};

START_TEST(test_published_shapes)
{
    const shape_case *c = &shapes[_i];
    ts_params p;
    ts_error err;

    ck_assert_int_eq(ts_model_params(&c->m, &p, &err), TS_OK);
    ck_assert(p.from_shape);
    ck_assert_ptr_nonnull(p.formula);
    REL_CLOSE(p.total, c->exact_total, EXACT);
    REL_CLOSE(p.total, c->published_total, PUBLISHED);
    REL_CLOSE(p.active, c->exact_active, EXACT);
    if (c->published_active > 0)
        REL_CLOSE(p.active, c->published_active, PUBLISHED);
    /* The parts add up to the whole. */
    REL_CLOSE((double)c->m.layers * (p.per_layer_attn + p.per_layer_mlp + p.per_layer_norm) +
                  (double)c->m.hidden + p.embedding + p.output_head,
              p.total, EXACT);
    REL_CLOSE(p.dense + p.expert, p.total, EXACT);
}
END_TEST

START_TEST(test_mixtral_parts)
{
    ts_params p;

    ck_assert_int_eq(ts_model_params(&shapes[3].m, &p, NULL), TS_OK);
    /* Experts: 32 layers x 8 x 3 h F = 32 * 8 * 176160768 = 45097156608. */
    REL_CLOSE(p.expert, 45097156608.0, EXACT);
    /* Per-layer MLP: 8 * 176160768 + router 4096 * 8 = 1409318912. */
    REL_CLOSE(p.per_layer_mlp, 1409318912.0, EXACT);
    /* top_k 0 means 1 (trainsize.h): active drops 7 experts per layer:
     * 46702792704 - 7 * 32 * 176160768 = 7242780672. */
    {
        ts_model m = shapes[3].m;
        m.top_k = 0;
        ck_assert_int_eq(ts_model_params(&m, &p, NULL), TS_OK);
        REL_CLOSE(p.active, 7242780672.0, EXACT);
    }
}
END_TEST

START_TEST(test_defaults_and_ties)
{
    ts_model m = { .layers = 2, .hidden = 64, .heads = 4, .vocab = 100 };
    ts_params p;

    /* kv_heads 0 = MHA, ffn 0 = 4h, not gated: per layer 4h^2 + 8h^2 + 2h
     * = 12*4096 + 128 = 49280; x2 = 98560; + h 64 + Vh 6400 x 2 = 111424. */
    ck_assert_int_eq(ts_model_params(&m, &p, NULL), TS_OK);
    REL_CLOSE(p.total, 111424.0, EXACT);
    REL_CLOSE(p.output_head, 6400.0, EXACT);
    ck_assert(p.expert == 0);
    /* Tying drops the output head: 111424 - 6400 = 105024. */
    m.tied_embeddings = true;
    ck_assert_int_eq(ts_model_params(&m, &p, NULL), TS_OK);
    REL_CLOSE(p.total, 105024.0, EXACT);
    ck_assert(p.output_head == 0);
    /* Gated adds a third h x F matrix per layer: + 2 * h * 4h = 32768. */
    m.gated = true;
    ck_assert_int_eq(ts_model_params(&m, &p, NULL), TS_OK);
    REL_CLOSE(p.total, 105024.0 + 32768.0, EXACT);
}
END_TEST

START_TEST(test_plain_params)
{
    ts_model m = { .params = 70e9 };
    ts_params p;

    ck_assert_int_eq(ts_model_params(&m, &p, NULL), TS_OK);
    ck_assert(!p.from_shape);
    ck_assert(p.total == 70e9 && p.active == 70e9 && p.dense == 70e9);
    ck_assert(p.embedding == 0 && p.expert == 0);
    /* With a shape, params is ignored (trainsize.h). */
    m = shapes[0].m;
    m.params = 1.0;
    ck_assert_int_eq(ts_model_params(&m, &p, NULL), TS_OK);
    REL_CLOSE(p.total, 6738415616.0, EXACT);
}
END_TEST

/* Shapes with the finer detail, from the released config.json files in
 * tests/data/hf (tests/data/api_cases/import.json reads those end to end); here
 * entered by hand to pin the formula.  Totals are the checkpoints'. */
static const shape_case detailed[] = {
    /* Qwen2.5-7B: q/k/v biases (a d + 2 a_kv d = 3584 + 1024 per layer).
     * 28 x (29360128 + 4608 + 203685888 + 7168) + 2 x 152064 x 3584 + 3584
     * = 7615616512 (model card: 7.61B). */
    { "qwen2.5-7b",
      { .layers = 28,
        .hidden = 3584,
        .heads = 28,
        .kv_heads = 4,
        .ffn = 18944,
        .vocab = 152064,
        .gated = true,
        .qkv_bias = true },
      7.61e9,
      7615616512.0,
      0,
      7615616512.0 },
    /* Gemma 2 9B: head_dim 256 (16 x 256 != 3584), 4 norms per layer, tied.
     * 42 x (44040192 + 154140672 + 14336) + 256000 x 3584 + 3584 = 9241705984. */
    { "gemma2-9b",
      { .layers = 42,
        .hidden = 3584,
        .heads = 16,
        .kv_heads = 8,
        .ffn = 14336,
        .vocab = 256000,
        .gated = true,
        .tied_embeddings = true,
        .head_dim = 256,
        .norms_per_layer = 4 },
      9.24e9,
      9241705984.0,
      0,
      9241705984.0 },
    /* GPT-2 small: biases everywhere, LayerNorm weight + bias, 1024 learned
     * positions, tied: 12 x 7087872 + (50257 + 1024) x 768 + 1536
     * = 124439808. */
    { "gpt2",
      { .layers = 12,
        .hidden = 768,
        .heads = 12,
        .vocab = 50257,
        .tied_embeddings = true,
        .qkv_bias = true,
        .out_bias = true,
        .mlp_bias = true,
        .norm_bias = true,
        .pos_embeddings = 1024 },
      124e6,
      124439808.0,
      0,
      124439808.0 },
    /* DeepSeek-V3: MLA (q 1536, kv 512, nope 128, rope 64, v 128) =
     * 187107328 per layer; 3 dense layers of F 18432; 58 MoE layers of
     * 256 routed + 1 shared experts of 2048, router 256 x 7168 + 256 bias.
     * Total 671026419200 (report: 671B); active: minus 248 x 44040192 x 58
     * = 37552297472 (report: 37B). */
    { "deepseek-v3",
      { .layers = 61,
        .hidden = 7168,
        .heads = 128,
        .kv_heads = 128,
        .ffn = 18432,
        .vocab = 129280,
        .experts = 256,
        .top_k = 8,
        .gated = true,
        .moe_ffn = 2048,
        .shared_experts = 1,
        .dense_layers = 3,
        .router_bias = true,
        .q_lora_rank = 1536,
        .kv_lora_rank = 512,
        .qk_nope_dim = 128,
        .qk_rope_dim = 64,
        .v_head_dim = 128 },
      671e9,
      671026419200.0,
      37e9,
      37552297472.0 },
    /* BLOOM-560M: biases everywhere, LayerNorm pairs, a LayerNorm after
     * the embedding, MLP 4 h, tied.  Per layer: attention 4 h^2 + 4 h =
     * 4198400, MLP 8 h^2 + 5 h = 8393728, norms 4 h = 4096: 12596224;
     * x 24 = 302309376; + V h 256901120 + embedding norm 2048 + final
     * norm 2048 = 559214592 (keras-hub bloom_560m_multi: 559,214,592). */
    { "bloom-560m",
      { .layers = 24,
        .hidden = 1024,
        .heads = 16,
        .vocab = 250880,
        .tied_embeddings = true,
        .qkv_bias = true,
        .out_bias = true,
        .mlp_bias = true,
        .norm_bias = true,
        .embed_norm = true },
      559e6,
      559214592.0,
      0,
      559214592.0 },
    /* Qwen1.5-MoE-A2.7B: q/k/v biases; 60 experts of 1408 (3 h 1408 =
     * 8650752), top 4; the shared expert of 5632 = 4 of them; router
     * 2048 x 60 and the shared gate 2048.  Per layer: attention 4 h^2 +
     * 3 h = 16783360, MoE 64 x 8650752 + 122880 + 2048 = 553773056, norms
     * 4096: 570560512; x 24 + 2 V h 622329856 + 2048 = 14315784192
     * (keras-hub qwen1.5_moe_2.7b_en: 14,315,784,192).  Active: minus 56 x
     * 8650752 x 24 = 2689173504 (the name's "A2.7B"). */
    { "qwen1.5-moe-a2.7b",
      { .layers = 24,
        .hidden = 2048,
        .heads = 16,
        .kv_heads = 16,
        .ffn = 5632,
        .vocab = 151936,
        .experts = 60,
        .top_k = 4,
        .gated = true,
        .qkv_bias = true,
        .moe_ffn = 1408,
        .shared_experts = 4,
        .shared_expert_gate = true },
      14.3e9,
      14315784192.0,
      2.7e9,
      2689173504.0 },
};

START_TEST(test_detailed_shapes)
{
    const shape_case *c = &detailed[_i];
    const ts_model *m = &c->m;
    ts_params p;
    double L = (double)m->layers, Ld;

    ck_assert_int_eq(ts_model_params(m, &p, NULL), TS_OK);
    REL_CLOSE(p.total, c->exact_total, EXACT);
    REL_CLOSE(p.total, c->published_total, 0.02); /* "9.24B", "671B", "124M" */
    REL_CLOSE(p.active, c->exact_active, EXACT);
    if (c->published_active > 0)
        REL_CLOSE(p.active, c->published_active, 0.02);
    /* The parts add up: dense first layers carry their own MLP, the final
     * norm is a LayerNorm pair when norm_bias. */
    Ld = (double)p.dense_layers;
    REL_CLOSE(L * (p.per_layer_attn + p.per_layer_norm) + (L - Ld) * p.per_layer_mlp +
                  Ld * p.dense_layer_mlp + (m->norm_bias ? 2.0 : 1.0) * (double)m->hidden +
                  p.embedding + p.embed_norm + p.output_head,
              p.total, EXACT);
    REL_CLOSE(p.dense + p.expert, p.total, EXACT);
}
END_TEST

/* An explicit head_dim frees hidden from heads x head_dim (Gemma 7B:
 * 16 x 256 on hidden 3072): the hidden % heads check no longer applies. */
START_TEST(test_head_dim_frees_hidden)
{
    ts_model m = { .layers = 1, .hidden = 64, .heads = 5, .vocab = 10, .head_dim = 16 };
    ts_params p;

    ck_assert_int_eq(ts_model_params(&m, &p, NULL), TS_OK);
    /* q, o: 64 x 80 each; k, v: 64 x 80 each (MHA) = 4 x 5120 = 20480. */
    REL_CLOSE(p.per_layer_attn, 20480.0, EXACT);
}
END_TEST

typedef struct bad_case {
    ts_model m;
    ts_status code;
    const char *field;
} bad_case;

/* Each row changes one thing from a valid shape or plain count. */
static const bad_case bad[] = {
    { { 0 }, TS_EINVAL, "model" }, /* nothing at all */
    { { .params = -1 }, TS_EINVAL, "params" },
    { { .params = 2e15 }, TS_EINVAL, "params" },                /* past 1e15 limit */
    { { .params = 1e9, .hidden = 4096 }, TS_EINVAL, "hidden" }, /* shape without layers */
    { { .params = 1e9, .experts = 8 }, TS_EINVAL, "experts" },
    { { .layers = -1, .hidden = 64, .heads = 4, .vocab = 10 }, TS_EINVAL, "layers" },
    { { .layers = 2, .hidden = 0, .heads = 4, .vocab = 10 }, TS_EINVAL, "hidden" },
    { { .layers = 2, .hidden = 64, .heads = 0, .vocab = 10 }, TS_EINVAL, "heads" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 0 }, TS_EINVAL, "vocab" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .ffn = -5 }, TS_EINVAL, "ffn" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .kv_heads = -1 },
      TS_EINVAL,
      "kv_heads" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .experts = -2 }, TS_EINVAL, "experts" },
    { { .layers = INT64_C(1) << 21, .hidden = 64, .heads = 4, .vocab = 10 }, TS_EINVAL, "layers" },
    { { .layers = 2, .hidden = INT64_C(1) << 40, .heads = 4, .vocab = 10 }, TS_EINVAL, "hidden" },
    { { .layers = 2, .hidden = 64, .heads = 5, .vocab = 10 }, TS_EINCOMPAT, "heads" }, /* 64 % 5 */
    { { .layers = 2, .hidden = 64, .heads = 4, .kv_heads = 3, .vocab = 10 },
      TS_EINCOMPAT,
      "kv_heads" },
    { { .layers = 2, .hidden = 64, .heads = 4, .kv_heads = 8, .vocab = 10 },
      TS_EINCOMPAT,
      "kv_heads" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .experts = 4, .top_k = 5 },
      TS_EINCOMPAT,
      "top_k" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .top_k = 2 }, TS_EINCOMPAT, "top_k" },
    /* finer shape detail */
    { { .params = 1e9, .qkv_bias = true }, TS_EINVAL, "qkv_bias" }, /* without layers */
    { { .params = 1e9, .head_dim = 128 }, TS_EINVAL, "head_dim" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .norms_per_layer = 17 },
      TS_EINVAL,
      "norms_per_layer" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .moe_ffn = 32 },
      TS_EINCOMPAT,
      "moe_ffn" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .shared_experts = 1 },
      TS_EINCOMPAT,
      "shared_experts" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .router_bias = true },
      TS_EINCOMPAT,
      "router_bias" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .shared_expert_gate = true },
      TS_EINCOMPAT,
      "shared_expert_gate" },
    { { .layers = 2,
        .hidden = 64,
        .heads = 4,
        .vocab = 10,
        .experts = 4,
        .shared_expert_gate = true },
      TS_EINCOMPAT,
      "shared_expert_gate" },
    { { .params = 1e9, .embed_norm = true }, TS_EINVAL, "embed_norm" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .experts = 4, .dense_layers = 3 },
      TS_EINCOMPAT,
      "dense_layers" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .q_lora_rank = 8 },
      TS_EINCOMPAT,
      "q_lora_rank" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .kv_lora_rank = 8 },
      TS_EINCOMPAT,
      "qk_nope_dim" },
    { { .layers = 2,
        .hidden = 64,
        .heads = 4,
        .vocab = 10,
        .kv_lora_rank = 8,
        .qk_nope_dim = 16,
        .head_dim = 16 },
      TS_EINCOMPAT,
      "head_dim" },
    { { .layers = 2,
        .hidden = 64,
        .heads = 4,
        .vocab = 10,
        .kv_lora_rank = 8,
        .qk_nope_dim = 16,
        .qkv_bias = true },
      TS_EINCOMPAT,
      "qkv_bias" },
    /* sliding window */
    { { .params = 1e9, .sliding_window = 4096 }, TS_EINVAL, "sliding_window" },
    { { .layers = 2, .hidden = 64, .heads = 4, .vocab = 10, .sliding_window = -1 },
      TS_EINVAL,
      "sliding_window" },
    { { .layers = 2,
        .hidden = 64,
        .heads = 4,
        .vocab = 10,
        .sliding_window = 8,
        .sliding_layers = 3 },
      TS_EINCOMPAT,
      "sliding_layers" },
};

START_TEST(test_bad_models)
{
    ts_params p;
    ts_error err;

    memset(&err, 0, sizeof err);
    ck_assert_int_eq(ts_model_params(&bad[_i].m, &p, &err), bad[_i].code);
    ck_assert_int_eq(err.code, bad[_i].code);
    ck_assert_str_eq(err.field, bad[_i].field);
    ck_assert(err.text[0] != '\0');
}
END_TEST

START_TEST(test_nan_params)
{
    ts_model m = { .params = NAN };
    ts_error err;
    ts_params p;

    ck_assert_int_eq(ts_model_params(&m, &p, &err), TS_EINVAL);
    ck_assert_str_eq(err.field, "params");
    m.params = INFINITY;
    ck_assert_int_eq(ts_model_params(&m, &p, &err), TS_EINVAL);
    ck_assert_str_eq(err.field, "params");
    ck_assert_int_eq(ts_model_params(NULL, &p, &err), TS_EINVAL);
    ck_assert_int_eq(ts_model_params(&m, NULL, NULL), TS_EINVAL);
}
END_TEST

START_TEST(test_extreme_shape_finite)
{
    /* Every field at its limit gives a finite count, which is then
     * refused: above the 1e15 that params itself may not pass (naming
     * layers, with the count). */
    ts_model m = { .layers = INT64_C(1) << 20,
                   .hidden = INT64_C(1) << 24,
                   .heads = INT64_C(1) << 20,
                   .ffn = INT64_C(1) << 26,
                   .vocab = INT64_C(1) << 30,
                   .experts = INT64_C(1) << 20,
                   .top_k = INT64_C(1) << 20,
                   .gated = true };
    ts_params p;
    ts_error err;

    ck_assert_int_eq(ts_model_params(&m, &p, &err), TS_EINVAL);
    ck_assert_str_eq(err.field, "layers");
    ck_assert_ptr_nonnull(strstr(err.text, "above"));
    /* Just under the limit is fine: 1e15 / (12 h^2) layers at h 65536. */
    m = (ts_model){ .layers = 19000, .hidden = 65536, .heads = 512, .vocab = 1000 };
    ck_assert_int_eq(ts_model_params(&m, &p, NULL), TS_OK);
    ck_assert(isfinite(p.total) && p.total > 0 && p.total <= 1e15);
}
END_TEST

static Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("params");

    tcase_add_loop_test(tc, test_published_shapes, 0, (int)(sizeof shapes / sizeof shapes[0]));
    tcase_add_test(tc, test_mixtral_parts);
    tcase_add_loop_test(tc, test_detailed_shapes, 0, (int)(sizeof detailed / sizeof detailed[0]));
    tcase_add_test(tc, test_head_dim_frees_hidden);
    tcase_add_test(tc, test_defaults_and_ties);
    tcase_add_test(tc, test_plain_params);
    tcase_add_loop_test(tc, test_bad_models, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(tc, test_nan_params);
    tcase_add_test(tc, test_extreme_shape_finite);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(model_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
