/*
 * test_gpu_preset.c - GPU catalogue and model presets.
 *
 * Catalogue values are stored constants, so they are compared with a
 * relative tolerance of 1e-9 (only decimal-to-binary rounding of the
 * literal can differ).  Preset parameter counts are checked against the
 * authors' published figure within 2%: published counts are rounded to two
 * or three significant figures ("70B"), and biases are ignored by the
 * shape formula (< 0.1% for GPT-3, none in Llama).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"

#define REL_CLOSE(got, want, rel)                                                           \
    ck_assert_msg(fabs((double)(got) - (double)(want)) <= (rel)*fabs((double)(want)),       \
                  "%s = %.6g, want %.6g (rel tol %g)", #got, (double)(got), (double)(want), \
                  (double)(rel))

/* ------------------------------------------------------------------ */
/* Catalogue values (dense peaks).                                     */
/* ------------------------------------------------------------------ */

static const struct gpu_case {
    const char *id;
    double bf16_tflops, fp8_tflops, fp32_tflops, hbm_mib,
        bw_tbs; /* HBM as nvidia-smi / rocm-smi total */
    const char *why;
} gpu_cases[] = {
    /* oracles.md "Compute": A100 312 BF16, 80 GB; A100 datasheet: TF32 156
     * dense, no FP8, 80GB SXM 2,039 GB/s. */
    { "a100-80", 312, 0, 156, 81920, 2.039, "oracles.md + A100 datasheet" },
    /* A100 datasheet, 40GB SXM: 1,555 GB/s. */
    { "a100-40", 312, 0, 156, 40960, 1.555, "A100 datasheet" },
    /* oracles.md: H100 SXM BF16 dense 989 / FP8 1979, 80 GB, 3.35 TB/s. */
    { "h100-sxm", 989, 1979, 494.7, 81559, 3.35, "oracles.md (seed 002)" },
    /* H100 datasheet, PCIe column, sparse figures halved. */
    { "h100-pcie", 756, 1513, 378, 81559, 2.0, "H100 datasheet (PCIe)" },
    /* oracles.md: H200 same compute as H100, 141 GB, 4.8 TB/s. */
    { "h200", 989, 1979, 494.7, 143771, 4.8, "oracles.md" },
    /* oracles.md: B200 ~2250 BF16 / 4500 FP8, ~180 GB, ~8 TB/s. */
    { "b200", 2250, 4500, 1100, 183359, 8.0, "oracles.md" },
    /* oracles.md: MI300X 1307 BF16, 192 GB, 5.3 TB/s (data sheet 1307.4). */
    { "mi300x", 1307.4, 2614.9, 653.7, 196288, 5.3, "oracles.md + MI300X data sheet" },
    /* L40S datasheet: 362 BF16 dense (733 is the sparse figure), 48 GB, 864 GB/s. */
    { "l40s", 362, 733, 183, 46068, 0.864, "L40S datasheet" },
    /* GH200 datasheet: H100 compute, 96 GB HBM3, 4.0 TB/s. */
    { "gh200", 989, 1979, 494.7, 97871, 4.0, "GH200 datasheet" },
    /* V100 datasheet: FP16 tensor 125, FP32 15.7, 900 GB/s; nvidia-smi
     * 16160 / 32510 MiB. */
    { "v100-16", 125, 0, 15.7, 16160, 0.9, "V100 datasheet" },
    { "v100-32", 125, 0, 15.7, 32510, 0.9, "V100 datasheet" },
    /* H100 NVL datasheet: 835 BF16 dense, 94 GB (95830 MiB), 3.9 TB/s. */
    { "h100-nvl", 835, 1670, 417.5, 95830, 3.9, "H100 NVL datasheet" },
    /* torchtitan benchmarks/llama3_h100_202412_torchtitan.md: H100 96GB
     * HBM2e, 2.4 TB/s; H100 compute; GH200's 96 GB as nvidia-smi reports. */
    { "h100-96", 989, 1979, 494.7, 97871, 2.4, "torchtitan's Grand Teton H100" },
    /* GB200 NVL72 datasheet per GPU: 2.5 PF BF16 dense, 186 GB, 8 TB/s. */
    { "gb200", 2500, 5000, 1250, 189471, 8.0, "GB200 datasheet" },
    /* Blackwell Ultra datasheet per GPU (aiconfigurator systems/b300_sxm.yaml, gb300.yaml):
     * B300 2.25 PF BF16 dense, 62 TB/s / 8, nvidia-smi 275040 MiB; GB300
     * 2.5 PF, 8 TB/s, 284208 MiB. */
    { "b300", 2250, 4500, 1125, 275040, 7.75, "Blackwell Ultra datasheet" },
    { "gb300", 2500, 5000, 1250, 284208, 8.0, "Blackwell Ultra datasheet" },
    /* MI250X data sheet per GCD: 191.5 BF16, 64 GB (65520 MiB), 1.6 TB/s. */
    { "mi250x", 191.5, 0, 47.9, 65520, 1.6, "MI250X data sheet" },
    { "mi325x", 1307.4, 2614.9, 653.7, 262144, 6.0, "MI325X data sheet" },
    /* H100 SXM / A100 SXM4 80GB figures (aiconfigurator#968: the export
     * variants differ in NVLink only); nvidia-smi 81559 / 81920 MiB. */
    { "h800", 989, 1979, 494.7, 81559, 3.35, "H800 = H100 SXM compute" },
    { "a800-80", 312, 0, 156, 81920, 2.039, "A800 = A100 80GB compute" },
    /* H200 datasheet NVL column: 1,671 / 3,341 sparse, halved. */
    { "h200-nvl", 835.5, 1670.5, 417.5, 143771, 4.8, "H200 NVL datasheet" },
    /* Ada whitepaper v2.1 App. A: FP32-accumulate BF16 165.2, FP8 330.3, TF32 82.6. */
    { "rtx-4090", 165.2, 330.3, 82.6, 24564, 1.008, "Ada whitepaper" },
    /* GA102 whitepaper App. A: FP32-accumulate 71, TF32 35.6. */
    { "rtx-3090", 71, 0, 35.6, 24576, 0.936, "GA102 whitepaper" },
    { "rtx-a6000", 154.8, 0, 77.4, 49140, 0.768, "GA102 whitepaper v2 + A6000 datasheet" },
    { "l40", 181.05, 362.1, 90.5, 46068, 0.864, "L40 datasheet" },
    { "a10g", 70, 0, 35, 23028, 0.6, "AWS G5" },
    /* A10 datasheet: BF16 125 / TF32 62.5 dense, 600 GB/s; L4 datasheet:
     * 242 / 485 / 120 with sparsity halved, 300 GB/s. */
    { "a10", 125, 0, 62.5, 23028, 0.6, "A10 datasheet" },
    { "l4", 121, 242.5, 60, 23034, 0.3, "L4 datasheet" },
    /* T4 datasheet: FP16 65 mixed precision, FP32 8.1 (no TF32, no BF16). */
    { "t4", 65, 0, 8.1, 15360, 0.32, "T4 datasheet" },
    /* ml-engineering@744d01e: MI355X BF16 2500 / FP8 5000 dense, FP32 157.3
     * (no TF32 published), 288 GB (288 GiB as MI325X's 256 reads), 8 TB/s. */
    { "mi355x", 2500, 5000, 157.3, 294912, 8.0, "ml-engineering MI355X rows" },
    /* ai-dynamo/aiconfigurator systems/a100_pcie.yaml: 312, 80 GiB, 1.935 TB/s;
     * a30.yaml: 165, 24 GiB, 933 GB/s; rtx_pro_6000_server.yaml: 467.8 /
     * 935.6 at 2430 MHz, 97887 MiB, 1.792 TB/s. */
    { "a100-pcie-80", 312, 0, 156, 81920, 1.935, "aiconfigurator a100_pcie.yaml" },
    { "a30", 165, 0, 82.5, 24576, 0.933, "aiconfigurator a30.yaml" },
    { "rtx-pro-6000", 467.8, 935.6, 233.9, 97887, 1.792,
      "aiconfigurator rtx_pro_6000_server.yaml" },
};

START_TEST(test_gpu_values)
{
    const struct gpu_case *c = &gpu_cases[_i];
    const ts_gpu *g = ts_gpu_find(c->id);

    ck_assert_msg(g != NULL, "gpu %s missing (%s)", c->id, c->why);
    ck_assert_str_eq(g->id, c->id);
    REL_CLOSE(g->bf16_flops, c->bf16_tflops * 1e12, 1e-9);
    REL_CLOSE(g->fp32_flops, c->fp32_tflops * 1e12, 1e-9);
    if (c->fp8_tflops == 0)
        ck_assert(g->fp8_flops == 0);
    else
        REL_CLOSE(g->fp8_flops, c->fp8_tflops * 1e12, 1e-9);
    REL_CLOSE(g->hbm_bytes, c->hbm_mib * 1048576.0, 1e-9);
    REL_CLOSE(g->hbm_bw, c->bw_tbs * 1e12, 1e-9);
}
END_TEST

/* Every entry: a source, a unique id, and dense-looking ratios.  A sparse
 * figure entered as dense would double bf16 relative to tf32 (the dense
 * TF32 rate is half the dense BF16 rate on every listed part) and FP8 is
 * twice BF16 where it exists, so ratios outside [0.45, 0.55] / [1.9, 2.1]
 * flag a mixed-up column. */
START_TEST(test_gpu_catalogue_consistent)
{
    size_t n = ts_gpu_count(), i, j;

    ck_assert_uint_eq(n, sizeof gpu_cases / sizeof gpu_cases[0]);
    ck_assert_ptr_null(ts_gpu_at(n));
    for (i = 0; i < n; i++) {
        const ts_gpu *g = ts_gpu_at(i);
        ck_assert_ptr_nonnull(g);
        ck_assert(g->source != NULL && strlen(g->source) > 10);
        ck_assert(strlen(g->name) > 0);
        ck_assert_ptr_eq(ts_gpu_find(g->id), g);
        ck_assert(g->hbm_bytes > 0 && g->hbm_bw > 0);
        /* V100 has no TF32 (its fp32 is the CUDA-core 15.7), MI250X's
         * fp32 matrix rate is a quarter of its bf16 and MI355X publishes
         * no TF32 (its fp32 is the vector 157.3): lower, never higher. */
        if (strncmp(g->id, "v100", 4) == 0 || strcmp(g->id, "mi250x") == 0 ||
            strcmp(g->id, "t4") == 0 || strcmp(g->id, "mi355x") == 0)
            ck_assert_msg(g->fp32_flops / g->bf16_flops < 0.3, "%s fp32/bf16", g->id);
        else
            ck_assert_msg(g->fp32_flops / g->bf16_flops >= 0.45 &&
                              g->fp32_flops / g->bf16_flops <= 0.55,
                          "%s tf32/bf16", g->id);
        if (g->fp8_flops > 0)
            ck_assert_msg(g->fp8_flops / g->bf16_flops >= 1.9 &&
                              g->fp8_flops / g->bf16_flops <= 2.1,
                          "%s fp8/bf16", g->id);
        for (j = i + 1; j < n; j++)
            ck_assert_str_ne(g->id, ts_gpu_at(j)->id);
    }
}
END_TEST

START_TEST(test_gpu_peak)
{
    const ts_gpu *h100 = ts_gpu_find("h100-sxm");
    const ts_gpu *a100 = ts_gpu_find("a100-80");

    ck_assert_ptr_nonnull(h100);
    ck_assert_ptr_nonnull(a100);
    /* trainsize.h: fp32 -> fp32_flops, bf16/fp16 -> bf16_flops, fp8 -> fp8_flops. */
    ck_assert(ts_gpu_peak(h100, TS_PREC_BF16) == h100->bf16_flops);
    ck_assert(ts_gpu_peak(h100, TS_PREC_FP16) == h100->bf16_flops);
    ck_assert(ts_gpu_peak(h100, TS_PREC_FP32) == h100->fp32_flops);
    ck_assert(ts_gpu_peak(h100, TS_PREC_FP8) == h100->fp8_flops);
    /* A100 has no FP8 tensor cores: 0, which the estimators turn into an error. */
    ck_assert(ts_gpu_peak(a100, TS_PREC_FP8) == 0);
    ck_assert(ts_gpu_peak(NULL, TS_PREC_BF16) == 0);
    ck_assert(ts_gpu_peak(h100, TS_PREC_COUNT) == 0);
}
END_TEST

/* Measured fractions from their sources by hand.  MI300X attention: AITER
 * FMHA v3 at MLPerf's Llama-2-70B shape (ROCm/aiter op_tests/cpp/mha/
 * README.md@a83421be), fwd 518.29 and bwd 481.895 TFLOP/s in FA2's
 * convention: 3.5 / (1/518.29 + 2.5/481.895) = 491.76 of 1307.4 = 0.376;
 * MI325X shares it.  MI325X FP8: AMD's hipBLASLt MAF 1527.7 of 2614.9
 * (ROCm/rocm-blogs measuring-max-achievable-flops-part2, footnote 4). */
START_TEST(test_gpu_amd_measured)
{
    const ts_gpu *mi300x = ts_gpu_find("mi300x");
    const ts_gpu *mi325x = ts_gpu_find("mi325x");
    double attn = 3.5 / (1.0 / 518.29 + 2.5 / 481.895) / 1307.4;

    ck_assert_ptr_nonnull(mi300x);
    ck_assert_ptr_nonnull(mi325x);
    ck_assert_msg(fabs(mi300x->attn_eff - attn) < 5e-4, "%g vs %g", mi300x->attn_eff, attn);
    ck_assert(mi325x->attn_eff == mi300x->attn_eff);
    ck_assert_msg(fabs(mi325x->mamf_fp8 - 1527.7 / 2614.9) < 1e-9, "%g", mi325x->mamf_fp8);
}
END_TEST

/* BF16 tensor cores came with Ampere (compute capability 8.0): V100 (7.0)
 * and T4 (7.5) have none, every later NVIDIA part and the AMD ones do.  A
 * run that asks for bf16 there is refused, naming the precision. */
START_TEST(test_gpu_bf16)
{
    static const char *const without[] = { "v100-16", "v100-32", "t4" };
    ts_run r;
    ts_error err;
    size_t i;

    for (i = 0; i < ts_gpu_count(); i++) {
        const ts_gpu *g = ts_gpu_at(i);
        bool none = false;
        size_t k;

        for (k = 0; k < sizeof without / sizeof without[0]; k++)
            none = none || strcmp(g->id, without[k]) == 0;
        ck_assert_msg(ts_gpu_bf16(g) == !none, "%s", g->id);
    }
    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("llama2-7b"));
    r.gpu = *ts_gpu_find("v100-32");
    ck_assert_int_eq(ts_run_resolve(&r, &err), TS_EINCOMPAT);
    ck_assert_str_eq(err.field, "precision");
    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("llama2-7b"));
    r.gpu = *ts_gpu_find("t4");
    r.precision = r.grad_precision = TS_PREC_FP16;
    ck_assert_int_eq(ts_run_resolve(&r, &err), TS_EINCOMPAT);
    ck_assert_str_eq(err.field, "compute_precision");
    r.compute_precision = TS_PREC_FP16;
    ck_assert_msg(ts_run_resolve(&r, &err) == TS_OK, "%s", err.text);
}
END_TEST

START_TEST(test_gpu_find_unknown)
{
    /* names as typed resolve (test_name.c); nothing else does */
    ck_assert_ptr_null(ts_gpu_find("h1000"));
    ck_assert_ptr_null(ts_gpu_find("H100-SXM6"));
    ck_assert_ptr_null(ts_gpu_find(""));
    ck_assert_ptr_null(ts_gpu_find(NULL));
    ck_assert_ptr_null(ts_gpu_at((size_t)-1));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Presets                                                             */
/* ------------------------------------------------------------------ */

/* Each preset's params from its shape equal the released checkpoint's
 * count exactly (Llama 2 70B: 68,976,648,192, not "70e9"); GPT-3, with no
 * released checkpoint, within 0.3% of the paper's rounded 175e9. */
START_TEST(test_preset_params_match_published)
{
    const ts_preset *p = ts_preset_at((size_t)_i);
    ts_params prm;
    ts_error err;

    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ts_model_params(&p->model, &prm, &err), TS_OK);
    ck_assert(prm.from_shape);
    ck_assert_msg(strcmp(p->id, "gpt3-175b") == 0
                      ? fabs(prm.total - p->published_params) <= 0.003 * p->published_params
                      : prm.total == p->published_params,
                  "%s: computed %.4g vs published %.4g", p->id, prm.total, p->published_params);
    ck_assert(p->seq > 0);
    ck_assert(p->train_tokens >= 0);
    ck_assert(p->source != NULL && strlen(p->source) > 10);
    ck_assert(p->name != NULL && strlen(p->name) > 0);
    ck_assert_ptr_eq(ts_preset_find(p->id), p);
}
END_TEST

static const struct preset_case {
    const char *id;
    double total, active, rel;
    const char *why;
} preset_cases[] = {
    /* docs/formulas.md "Checks": Llama 2 7B -> 6.74e9 (3 s.f., so 0.1%). */
    { "llama2-7b", 6.74e9, 6.74e9, 1e-3, "formulas.md" },
    /* docs/formulas.md: Llama 3 8B -> 8.03e9. */
    { "llama3-8b", 8.03e9, 8.03e9, 1e-3, "formulas.md" },
    /* docs/formulas.md: GPT-3 -> 174.6e9 (12 L h^2 + V h); 4 s.f. -> 0.05%. */
    { "gpt3-175b", 174.6e9, 174.6e9, 5e-4, "formulas.md" },
    /* docs/formulas.md: Mixtral 8x7B -> 46.7e9 total / 12.9e9 active. */
    { "mixtral-8x7b", 46.7e9, 12.9e9, 2e-3, "formulas.md / Mistral AI" },
};

START_TEST(test_preset_shapes)
{
    const struct preset_case *c = &preset_cases[_i];
    const ts_preset *p = ts_preset_find(c->id);
    ts_params prm;
    ts_error err;

    ck_assert_msg(p != NULL, "preset %s missing", c->id);
    ck_assert_int_eq(ts_model_params(&p->model, &prm, &err), TS_OK);
    REL_CLOSE(prm.total, c->total, c->rel);
    REL_CLOSE(prm.active, c->active, c->rel);
}
END_TEST

START_TEST(test_preset_published_facts)
{
    const ts_preset *p;

    /* Llama 2 paper, Table 1: 2T tokens, 4k context; 70B uses GQA (8 kv). */
    p = ts_preset_find("llama2-70b");
    ck_assert_ptr_nonnull(p);
    ck_assert(p->train_tokens == 2e12);
    ck_assert_int_eq(p->seq, 4096);
    ck_assert_int_eq(p->model.kv_heads, 8);
    /* Llama 3 405B: 126 layers, h 16384, 8k context (Llama 3 paper Table 3). */
    p = ts_preset_find("llama3-405b");
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p->model.layers, 126);
    ck_assert_int_eq(p->model.hidden, 16384);
    ck_assert_int_eq(p->seq, 8192);
    ck_assert(p->train_tokens >= 15e12);
    /* Llama 3 paper: the flagship was trained on 15.6T tokens. */
    p = ts_preset_find("llama3.1-405b");
    ck_assert_ptr_nonnull(p);
    ck_assert(p->train_tokens == 15.6e12);
    /* GPT-3 paper Table 2.1: 300B tokens, 2048 context, tied embeddings. */
    p = ts_preset_find("gpt3-175b");
    ck_assert_ptr_nonnull(p);
    ck_assert(p->train_tokens == 300e9);
    ck_assert_int_eq(p->seq, 2048);
    ck_assert(p->model.tied_embeddings);
    ck_assert(!p->model.gated);
    /* Mixtral: 8 experts, top-2. */
    p = ts_preset_find("mixtral-8x7b");
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p->model.experts, 8);
    ck_assert_int_eq(p->model.top_k, 2);
}
END_TEST

START_TEST(test_preset_lookup)
{
    size_t n = ts_preset_count(), i, j;

    ck_assert(n >= 11);
    ck_assert_ptr_null(ts_preset_at(n));
    ck_assert_ptr_null(ts_preset_find("gpt-5"));
    ck_assert_ptr_null(ts_preset_find(""));
    ck_assert_ptr_null(ts_preset_find(NULL));
    for (i = 0; i < n; i++) {
        ck_assert(strlen(ts_preset_at(i)->id) < 32); /* fits ts_run.preset */
        for (j = i + 1; j < n; j++)
            ck_assert_str_ne(ts_preset_at(i)->id, ts_preset_at(j)->id);
    }
}
END_TEST

static Suite *gpu_preset_suite(void)
{
    Suite *s = suite_create("gpu_preset");
    TCase *tc = tcase_create("core");

    tcase_add_loop_test(tc, test_gpu_values, 0, (int)(sizeof gpu_cases / sizeof gpu_cases[0]));
    tcase_add_test(tc, test_gpu_catalogue_consistent);
    tcase_add_test(tc, test_gpu_peak);
    tcase_add_test(tc, test_gpu_amd_measured);
    tcase_add_test(tc, test_gpu_find_unknown);
    tcase_add_test(tc, test_gpu_bf16);
    tcase_add_loop_test(tc, test_preset_params_match_published, 0, (int)ts_preset_count());
    tcase_add_loop_test(tc, test_preset_shapes, 0,
                        (int)(sizeof preset_cases / sizeof preset_cases[0]));
    tcase_add_test(tc, test_preset_published_facts);
    tcase_add_test(tc, test_preset_lookup);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gpu_preset_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
