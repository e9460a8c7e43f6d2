/*
 * test_plan.c - ts_plan_estimate: one call, the same numbers as the
 * individual estimators, on the resolved run.
 *
 * The plan must agree exactly (==) with calling each estimator on the same
 * run: it is the same arithmetic on the same inputs, so any difference is
 * a bug, not rounding.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"

static void make_run(ts_run *r, const char *preset, int64_t dp)
{
    ts_run_defaults(r);
    ts_run_apply_preset(r, ts_preset_find(preset));
    r->gpus = 0; /* derived from dp */
    r->dp = dp;
}

/* api/CONTRACT.md example: {"model":"llama3-70b","gpu":"h100-sxm","dp":64}. */
START_TEST(test_plan_matches_estimators)
{
    ts_run r;
    ts_plan *plan = malloc(sizeof *plan);
    ts_memory mem;
    ts_compute comp;
    ts_ckpt ck;
    ts_error err;
    size_t i;
    int found = 0;

    ck_assert_ptr_nonnull(plan);
    make_run(&r, "llama3-70b", 64);
    ck_assert_msg(ts_plan_estimate(&r, plan, &err) == TS_OK, "%s: %s", err.field, err.text);

    /* plan.run is resolved: gpus = dp * tp * pp * cp = 64, tokens from the
     * preset (Llama 3 model card: 15T), global batch about 4M tokens:
     * ceil(2^22 / 8192) = 512 sequences, a multiple of dp * b = 64. */
    ck_assert_int_eq(plan->run.dp, 64);
    ck_assert_int_eq(plan->run.gpus, 64);
    ck_assert(plan->run.tokens == 15e12);
    ck_assert_int_eq(plan->run.global_batch, 512);
    ck_assert_int_eq(plan->run.model.kv_heads, 8);
    ck_assert_str_eq(plan->run.gpu.id, "h100-sxm");

    ck_assert_int_eq(ts_memory_estimate(&r, &mem, &err), TS_OK);
    ck_assert_int_eq(ts_compute_estimate(&r, &comp, &err), TS_OK);
    ck_assert_int_eq(ts_ckpt_estimate(&r, &ck, &err), TS_OK);
    ck_assert(plan->memory.total.value == mem.total.value);
    ck_assert(plan->memory.activations.value == mem.activations.value);
    ck_assert(plan->memory.params.total == mem.params.total);
    ck_assert(plan->compute.model_flops.value == comp.model_flops.value);
    ck_assert(plan->compute.gpu_hours.value == comp.gpu_hours.value);
    ck_assert(plan->compute.wall_seconds.value == comp.wall_seconds.value);
    ck_assert(plan->ckpt.full_bytes.value == ck.full_bytes.value);
    ck_assert(plan->ckpt.shard_bytes_per_gpu.value == ck.shard_bytes_per_gpu.value);
    ck_assert(plan->ckpt.daly_interval_s.value == ck.daly_interval_s.value);

    /* Sweep: dp = 1, 2, 4, ... ascending, and contains the run's dp with
     * the same per-GPU total as the memory estimate. */
    ck_assert(plan->sweep_len > 1 && plan->sweep_len <= TS_SWEEP_MAX);
    ck_assert_int_eq(plan->sweep[0].dp, 1);
    for (i = 0; i < plan->sweep_len; i++) {
        if (i > 0)
            ck_assert(plan->sweep[i].dp > plan->sweep[i - 1].dp);
        ck_assert(isfinite(plan->sweep[i].total));
        if (plan->sweep[i].dp == 64) {
            found = 1;
            ck_assert(plan->sweep[i].total == mem.total.value);
            ck_assert(plan->sweep[i].fits == mem.fits);
            ck_assert_int_eq(plan->sweep[i].gpus, 64);
        }
    }
    ck_assert(found);
    free(plan);
}
END_TEST

/* A plan reflects the overrides, not the preset defaults. */
START_TEST(test_plan_run_is_effective)
{
    ts_run r;
    ts_plan *plan = malloc(sizeof *plan);
    ts_error err;

    ck_assert_ptr_nonnull(plan);
    make_run(&r, "llama3-8b", 8);
    r.tp = 2;
    r.tokens = 1e12;
    r.gpu = *ts_gpu_find("h200");
    ck_assert_msg(ts_plan_estimate(&r, plan, &err) == TS_OK, "%s", err.text);
    ck_assert_int_eq(plan->run.gpus, 16); /* 8 * 2 */
    ck_assert(plan->run.tokens == 1e12);
    ck_assert(plan->compute.tokens == 1e12);
    /* H200: 141 GB (oracles.md) */
    ck_assert(plan->memory.hbm_bytes == 143771.0 * 1048576); /* nvidia-smi: 143771 MiB */
    /* 6 * 8.03e9 * 1e12 = 4.82e22 (Llama 3 8B count from formulas.md, 3 s.f.). */
    ck_assert(fabs(plan->compute.model_flops.value - 4.818e22) < 1e-3 * 4.818e22);
    free(plan);
}
END_TEST

START_TEST(test_plan_error_passes_through)
{
    ts_run r;
    ts_plan *plan = malloc(sizeof *plan);
    ts_error err;

    ck_assert_ptr_nonnull(plan);
    /* Llama 3 70B has 64 heads: tp = 3 cannot split them. */
    make_run(&r, "llama3-70b", 8);
    r.tp = 3;
    memset(&err, 0, sizeof err);
    ck_assert_int_ne(ts_plan_estimate(&r, plan, &err), TS_OK);
    ck_assert_str_eq(err.field, "tp");
    /* No half-filled plan. */
    ck_assert(plan->memory.total.value == 0);
    ck_assert(plan->compute.gpu_hours.value == 0);
    ck_assert_uint_eq(plan->sweep_len, 0);

    /* fp8 compute on an A100: the compute error surfaces from the plan. */
    make_run(&r, "llama3-8b", 8);
    r.gpu = *ts_gpu_find("a100-80");
    r.compute_precision = TS_PREC_FP8;
    ck_assert_int_eq(ts_plan_estimate(&r, plan, &err), TS_EINCOMPAT);
    ck_assert_str_eq(err.field, "compute_precision");

    ck_assert_int_eq(ts_plan_estimate(NULL, plan, &err), TS_EINVAL);
    ck_assert_int_eq(ts_plan_estimate(&r, NULL, &err), TS_EINVAL);
    free(plan);
}
END_TEST

/* Every preset on every GPU: a plan with defaults, all finite. */
START_TEST(test_plan_all_presets)
{
    ts_plan *plan = malloc(sizeof *plan);
    size_t i, j;

    ck_assert_ptr_nonnull(plan);
    for (i = 0; i < ts_preset_count(); i++) {
        for (j = 0; j < ts_gpu_count(); j++) {
            ts_run r;
            ts_error err;

            ts_run_defaults(&r);
            ts_run_apply_preset(&r, ts_preset_at(i));
            r.gpu = *ts_gpu_at(j);
            /* the API's default on a GPU without BF16 (api/ts_json_in.c) */
            if (!ts_gpu_bf16(&r.gpu))
                r.precision = r.compute_precision = r.grad_precision = TS_PREC_FP16;
            ck_assert_msg(ts_plan_estimate(&r, plan, &err) == TS_OK, "%s/%s: %s",
                          ts_preset_at(i)->id, ts_gpu_at(j)->id, err.text);
            ck_assert(isfinite(plan->memory.total.value));
            ck_assert(isfinite(plan->compute.wall_seconds.value));
            ck_assert(isfinite(plan->ckpt.waste_fraction.value));
            ck_assert_str_eq(plan->run.preset, ts_preset_at(i)->id);
        }
    }
    free(plan);
}
END_TEST

static Suite *plan_suite(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_plan_matches_estimators);
    tcase_add_test(tc, test_plan_run_is_effective);
    tcase_add_test(tc, test_plan_error_passes_through);
    tcase_add_test(tc, test_plan_all_presets);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(plan_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
