/*
 * test_budget.c - the work budget one request's loops share (issue 22),
 * and the long-pipeline memory estimate that made it O(1) in pp.
 *
 * The budget counts units, not time, so everything here is exact: a
 * search's count is the same on every run, a limit one unit short of it
 * truncates, and the issue's 57 s request is asserted by its count.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"

/* 963761198400 = 2^6 3^4 5^2 7 11 13 17 19 23 < 2^40: 6720 divisors, the
 * most of any global batch the API accepts (issue 22's reproducer). */
#define HC INT64_C(963761198400)

static void preset_run(ts_run *r, const char *preset, int64_t gpus)
{
    ts_run_defaults(r);
    ts_run_apply_preset(r, ts_preset_find(preset));
    r->gpus = gpus;
    r->dp = 0;
}

static ts_search_out *search_out(void)
{
    ts_search_out *o = malloc(sizeof *o);

    ck_assert_ptr_nonnull(o);
    return o;
}

/* The ranked list a search answers: costed layouts that fit, best first. */
static void assert_ranked(const ts_search_out *o)
{
    size_t i;

    for (i = 0; i < o->n; i++) {
        ck_assert(o->results[i].fits);
        ck_assert(o->results[i].memory_total <= o->results[i].hbm);
        if (i > 0)
            ck_assert(o->results[i - 1].step_time <= o->results[i].step_time);
    }
}

static void assert_same_results(const ts_search_out *a, const ts_search_out *b)
{
    size_t i;

    ck_assert_uint_eq(a->n, b->n);
    ck_assert_uint_eq(a->enumerated, b->enumerated);
    ck_assert_uint_eq(a->tried, b->tried);
    ck_assert_uint_eq(a->fitting, b->fitting);
    ck_assert_uint_eq(a->pruned, b->pruned);
    ck_assert_int_eq(a->truncated, b->truncated);
    for (i = 0; i < a->n; i++) {
        const ts_search_result *x = &a->results[i], *y = &b->results[i];

        ck_assert_int_eq(x->tp, y->tp);
        ck_assert_int_eq(x->pp, y->pp);
        ck_assert_int_eq(x->cp, y->cp);
        ck_assert_int_eq(x->dp, y->dp);
        ck_assert_int_eq(x->micro_batch, y->micro_batch);
        ck_assert_int_eq(x->vpp, y->vpp);
        ck_assert_int_eq(x->zero, y->zero);
        ck_assert_int_eq(x->recompute, y->recompute);
        ck_assert(x->step_time == y->step_time);
        ck_assert_str_eq(x->why, y->why);
    }
}

START_TEST(test_budget_init_take)
{
    ts_budget b;

    ts_budget_init(&b, 0);
    ck_assert(b.limit == TS_BUDGET_DEFAULT);
    ck_assert(b.used == 0 && !b.exhausted);
    ts_budget_init(&b, 7);
    ck_assert(b.limit == 7);
    ts_budget_init(NULL, 7); /* no crash */
}
END_TEST

/* Issue 22, finding 2: Llama 3 8B, max_gpus 2^20, a global batch of 6720
 * divisors, max_vpp 2^20 ran the vpp loop 2^20 times per micro-batch
 * outside the search budget: 57 s.  Now vpp runs over the divisors of
 * layers / pp only and every loop is charged: the search stops at the
 * default budget, truncated, with 20 ranked layouts, and the count is the
 * same on a second run. */
START_TEST(test_search_issue22_bounded)
{
    ts_run r;
    ts_search_cfg cfg;
    ts_search_out *o = search_out(), *o2 = search_out();
    ts_budget b, b2;
    ts_error e;

    preset_run(&r, "llama3-8b", 8);
    r.global_batch = HC;
    ts_search_defaults(&cfg);
    cfg.max_gpus = INT64_C(1) << 20;
    cfg.max_vpp = INT64_C(1) << 20;
    ts_budget_init(&b, 0);
    ck_assert_int_eq(ts_search_run_within(&r, &cfg, &b, o, &e), TS_OK);
    ck_assert(o->truncated && b.exhausted);
    ck_assert(b.used <= TS_BUDGET_DEFAULT);
    /* It stopped on a charge that did not fit: within one memory and one
     * step estimate of the limit, not earlier. */
    ck_assert(b.used > TS_BUDGET_DEFAULT - (TS_COST_MEMORY + TS_COST_STAGE * 68 + TS_COST_STEP));
    ck_assert_uint_eq(o->n, 20);
    assert_ranked(o);

    ts_budget_init(&b2, 0);
    ck_assert_int_eq(ts_search_run_within(&r, &cfg, &b2, o2, &e), TS_OK);
    ck_assert(b2.used == b.used);
    assert_same_results(o, o2);
    free(o);
    free(o2);
}
END_TEST

/* A search that completes has an exact count U: a budget of U gives the
 * same answer untruncated, one of U - 1 truncates it, and a tight one
 * answers the best layouts seen so far, every one of them a layout the
 * full search also costed no better than its own rank. */
START_TEST(test_search_tiny_budget_truncates)
{
    ts_run r;
    ts_search_cfg cfg;
    ts_search_out *full = search_out(), *o = search_out();
    ts_budget b;
    ts_error e;
    uint64_t U;
    size_t i;

    preset_run(&r, "llama3-70b", 64);
    r.global_batch = 64;
    ts_search_defaults(&cfg);
    ts_budget_init(&b, 0);
    ck_assert_int_eq(ts_search_run_within(&r, &cfg, &b, full, &e), TS_OK);
    ck_assert(!full->truncated && !b.exhausted);
    ck_assert_uint_gt(full->n, 0);
    U = b.used;
    ck_assert(U > 0);

    ts_budget_init(&b, U);
    ck_assert_int_eq(ts_search_run_within(&r, &cfg, &b, o, &e), TS_OK);
    ck_assert(!o->truncated && b.used == U);
    assert_same_results(full, o);

    ts_budget_init(&b, U - 1);
    ck_assert_int_eq(ts_search_run_within(&r, &cfg, &b, o, &e), TS_OK);
    ck_assert(o->truncated && b.exhausted && b.used <= U - 1);

    ts_budget_init(&b, U / 2);
    ck_assert_int_eq(ts_search_run_within(&r, &cfg, &b, o, &e), TS_OK);
    ck_assert(o->truncated);
    ck_assert_uint_gt(o->n, 0);
    ck_assert_uint_lt(o->tried, full->tried);
    assert_ranked(o);
    /* Best so far: never better than the full search's best. */
    ck_assert(o->results[0].step_time >= full->results[0].step_time);
    for (i = 0; i < o->n; i++)
        ck_assert(o->results[i].gpus == 64);

    /* A budget too small to cost anything: no partial answer, a problem
     * naming the field that sized the search. */
    ts_budget_init(&b, 50);
    ck_assert_int_eq(ts_search_run_within(&r, &cfg, &b, o, &e), TS_EINVAL);
    ck_assert_str_eq(e.field, "gpus");
    ck_assert(o->truncated && o->n == 0);
    cfg.max_gpus = 64;
    ts_budget_init(&b, 50);
    ck_assert_int_eq(ts_search_run_within(&r, &cfg, &b, o, &e), TS_EINVAL);
    ck_assert_str_eq(e.field, "max_gpus");
    free(full);
    free(o);
}
END_TEST

/* max_vpp beyond layers / pp adds nothing: the answer and its count are
 * those of max_vpp = layers (32 for Llama 3 8B). */
START_TEST(test_search_vpp_capped)
{
    ts_run r;
    ts_search_cfg cfg;
    ts_search_out *a = search_out(), *o = search_out();
    ts_budget b1, b2;
    ts_error e;

    preset_run(&r, "llama3-8b", 64);
    r.global_batch = 256;
    ts_search_defaults(&cfg);
    cfg.max_vpp = 32;
    ts_budget_init(&b1, 0);
    ck_assert_int_eq(ts_search_run_within(&r, &cfg, &b1, a, &e), TS_OK);
    cfg.max_vpp = INT64_C(1) << 20;
    ts_budget_init(&b2, 0);
    ck_assert_int_eq(ts_search_run_within(&r, &cfg, &b2, o, &e), TS_OK);
    ck_assert(!a->truncated && !o->truncated);
    ck_assert(b1.used == b2.used);
    assert_same_results(a, o);
    /* Likewise max_tp past the heads (32) and max_pp past the layers. */
    cfg.max_tp = INT64_C(1) << 20;
    cfg.max_pp = INT64_C(1) << 20;
    ts_budget_init(&b2, 0);
    ck_assert_int_eq(ts_search_run_within(&r, &cfg, &b2, o, &e), TS_OK);
    cfg.max_tp = 32;
    cfg.max_pp = 32;
    ts_budget_init(&b1, 0);
    ck_assert_int_eq(ts_search_run_within(&r, &cfg, &b1, a, &e), TS_OK);
    ck_assert(b1.used == b2.used);
    assert_same_results(a, o);
    free(a);
    free(o);
}
END_TEST

/* The fit solvers' worst cases stay inside the default budget (so the
 * API's fit never truncates), and a small budget answers the best found
 * so far. */
START_TEST(test_fit_budget)
{
    ts_run r;
    ts_memory m, full_m;
    ts_budget b;
    ts_error e;
    int64_t mb = 0, dp = 0, gpus = 0, full_mb = 0;

    /* Largest micro-batch with a global batch of 6720 divisors on a
     * pipeline past TS_STAGES_MAX: 2 * 2^20 trial divisions at most, plus
     * a memory estimate per divisor tried, from the top down (stage 0
     * holds 128 micro-batches of 8 layers and 256 tokens each). */
    ts_run_defaults(&r);
    r.model = (ts_model){ .layers = 1024, .hidden = 64, .heads = 1, .vocab = 64 };
    r.pp = r.gpus = 128;
    r.global_batch = HC;
    r.seq = 256;
    ts_budget_init(&b, 0);
    ck_assert_int_eq(ts_fit_max_micro_batch_within(&r, 1 << 20, &b, &full_mb, &full_m, &e), TS_OK);
    ck_assert(!b.exhausted);
    ck_assert(b.used <= 2 * (UINT64_C(1) << 20) * TS_COST_ITER +
                            6720 * (TS_COST_MEMORY + 68 * TS_COST_STAGE));
    ck_assert_int_gt(full_mb, 1);
    ck_assert(full_m.fits);
    /* Same answer as the plain entry point. */
    ck_assert_int_eq(ts_fit_max_micro_batch(&r, 1 << 20, &mb, &m, &e), TS_OK);
    ck_assert_int_eq(mb, full_mb);
    ck_assert(m.total.value == full_m.total.value);

    /* A budget that runs out after micro-batch 1 and a few divisions:
     * micro-batch 1 (known to fit) and its memory. */
    ts_budget_init(&b, 2 * (TS_COST_MEMORY + 68 * TS_COST_STAGE));
    ck_assert_int_eq(ts_fit_max_micro_batch_within(&r, 1 << 20, &b, &mb, &m, &e), TS_OK);
    ck_assert(b.exhausted);
    ck_assert_int_eq(mb, 1);
    ck_assert(m.fits && m.total.value > 0);
    /* Too small for micro-batch 1 itself: the field that asked. */
    ts_budget_init(&b, 10);
    ck_assert_int_eq(ts_fit_max_micro_batch_within(&r, 1 << 20, &b, &mb, &m, &e), TS_EINVAL);
    ck_assert_str_eq(e.field, "max_micro_batch");

    /* Fewest GPUs, derived batch, bisection cut short: the fewest found to
     * fit so far, which is no fewer than the full answer. */
    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("llama3-70b"));
    r.gpus = 0;
    r.zero = 3;
    r.tp = 8; /* fits from dp = 7 */
    ts_budget_init(&b, 0);
    ck_assert_int_eq(ts_fit_min_gpus_within(&r, 1 << 20, &b, &dp, &gpus, &m, &e), TS_OK);
    ck_assert(!b.exhausted);
    {
        int64_t full_dp = dp;

        ts_budget_init(&b, 3 * (TS_COST_MEMORY + TS_COST_STAGE));
        ck_assert_int_eq(ts_fit_min_gpus_within(&r, 1 << 20, &b, &dp, &gpus, &m, &e), TS_OK);
        ck_assert(b.exhausted);
        ck_assert_int_gt(dp, full_dp);
        ck_assert(m.fits);
    }
    /* A fixed global batch with no answer found yet: max_gpus named. */
    r.global_batch = HC;
    ts_budget_init(&b, 3 * (TS_COST_MEMORY + TS_COST_STAGE));
    ck_assert_int_eq(ts_fit_min_gpus_within(&r, 1 << 20, &b, &dp, &gpus, &m, &e), TS_EINVAL);
    ck_assert_str_eq(e.field, "max_gpus");
    /* Its worst case (2^20 candidate dp, 6720 of them tried) fits. */
    ts_budget_init(&b, 0);
    ck_assert_int_eq(ts_fit_min_gpus_within(&r, 1 << 20, &b, &dp, &gpus, &m, &e), TS_OK);
    ck_assert(!b.exhausted);
}
END_TEST

/* The plan's sweep: charged, cut short by a small budget (the points done
 * so far, ascending), complete under the default one. */
START_TEST(test_plan_sweep_budget)
{
    ts_run r;
    ts_plan *p = malloc(sizeof *p), *q = malloc(sizeof *q);
    ts_budget b;
    ts_error e;
    size_t i;

    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(q);
    preset_run(&r, "llama3-8b", 8);
    ck_assert_int_eq(ts_run_resolve(&r, &e), TS_OK);
    ts_budget_init(&b, 0);
    ck_assert_int_eq(ts_plan_resolved_within(&r, &b, p, &e), TS_OK);
    ck_assert(!b.exhausted);
    ck_assert_uint_gt(p->sweep_len, 3);
    ck_assert_int_eq(ts_plan_resolved(&r, q, &e), TS_OK);
    ck_assert_uint_eq(q->sweep_len, p->sweep_len);

    ts_budget_init(&b, b.used - 1);
    ck_assert_int_eq(ts_plan_resolved_within(&r, &b, q, &e), TS_OK);
    ck_assert(b.exhausted);
    ck_assert_uint_eq(q->sweep_len, p->sweep_len - 1);
    for (i = 0; i < q->sweep_len; i++)
        ck_assert(q->sweep[i].total == p->sweep[i].total);
    ck_assert(q->memory.total.value == p->memory.total.value);
    free(p);
    free(q);
}
END_TEST

/* Pipelines longer than TS_STAGES_MAX: the estimate evaluates the listed
 * stages and the first of each run of equal middle stages only.  Its
 * worst stage and total must be those of every stage evaluated one by one
 * (ts_memory_stage), the first of equal totals winning. */
static void check_all_stages(const ts_run *r)
{
    ts_memory m;
    ts_mem_stage s, worst;
    ts_error e;
    int64_t i;

    ck_assert_msg(ts_memory_estimate(r, &m, &e) == TS_OK, "%s: %s", e.field, e.text);
    for (i = 0; i < m.stages_count; i++) {
        ck_assert_int_eq(ts_memory_stage(r, i, &s, &e), TS_OK);
        ck_assert_int_eq(s.stage, i);
        if (i == 0 || s.total > worst.total)
            worst = s;
    }
    ck_assert_int_eq(m.worst_stage, worst.stage);
    ck_assert(m.total.value == worst.total);
    ck_assert(m.activations.value == worst.activations);
    /* The listed stages are those stages. */
    ck_assert_int_eq(ts_memory_stage(r, m.stages[40].stage, &s, &e), TS_OK);
    ck_assert(s.total == m.stages[40].total && s.layers == m.stages[40].layers);
}

START_TEST(test_long_pipeline_worst_stage)
{
    ts_run r;
    ts_error e;

    /* Even split with a remainder (1000 = 7 * 142 + 6: stages 0-5 hold
     * 143 layers), 1F1B, steps of few micro-batches: in_flight is equal
     * over the early stages, so the layer count decides. */
    ts_run_defaults(&r);
    r.model = (ts_model){ .layers = 1000 * 7 + 6, .hidden = 256, .heads = 4, .vocab = 1000 };
    r.pp = 1000;
    r.gpus = 0;
    r.dp = 2;
    r.global_batch = 2 * 3;
    check_all_stages(&r);
    r.global_batch = 0;
    check_all_stages(&r);
    /* Uneven first and last stages. */
    r.first_stage_layers = 1;
    r.last_stage_layers = 2;
    check_all_stages(&r);

    /* A MoE model whose first dense_layers are dense-FFN (DeepSeek): the
     * all-dense stages, the mixed one and the all-MoE ones are runs of
     * their own; the dense ones are lighter here, so with equal in_flight
     * the first all-MoE stage, in the middle, is the worst: 101 (layers
     * 202 and 203; stage 100 holds dense layer 200 and MoE layer 201). */
    ts_run_defaults(&r);
    r.model = (ts_model){ .layers = 400,
                          .hidden = 256,
                          .heads = 4,
                          .vocab = 1000,
                          .experts = 16,
                          .top_k = 2,
                          .moe_ffn = 1024,
                          .ffn = 256,
                          .dense_layers = 201 };
    r.pp = 200;
    r.gpus = 0;
    r.dp = 1;
    r.global_batch = 2;
    check_all_stages(&r);
    {
        ts_memory m;

        ck_assert_int_eq(ts_memory_estimate(&r, &m, &e), TS_OK);
        ck_assert_int_eq(m.worst_stage, 101);
    }
    /* Interleaved schedule, no batch limit. */
    r.pp_schedule = TS_PP_INTERLEAVED;
    r.vpp = 2;
    r.global_batch = 0;
    check_all_stages(&r);
    /* A plain parameter count: every middle stage the same. */
    ts_run_defaults(&r);
    r.model.params = 70e9;
    r.pp = 300;
    r.gpus = 0;
    r.dp = 1;
    check_all_stages(&r);

    /* ts_memory_stage refuses a stage outside the pipeline. */
    {
        ts_mem_stage s;

        ck_assert_int_eq(ts_memory_stage(&r, 300, &s, &e), TS_EINVAL);
        ck_assert_int_eq(ts_memory_stage(&r, -1, &s, &e), TS_EINVAL);
    }
}
END_TEST

static Suite *budget_suite(void)
{
    Suite *s = suite_create("budget");
    TCase *tc = tcase_create("budget");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_budget_init_take);
    tcase_add_test(tc, test_search_issue22_bounded);
    tcase_add_test(tc, test_search_tiny_budget_truncates);
    tcase_add_test(tc, test_search_vpp_capped);
    tcase_add_test(tc, test_fit_budget);
    tcase_add_test(tc, test_plan_sweep_budget);
    tcase_add_test(tc, test_long_pipeline_worst_stage);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(budget_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
