/*
 * test_scaling.c - the Chinchilla law (core/ts_scaling.c) and a budget
 * turned into a plan (core/ts_sizing.c).
 *
 * Which table is reproduced, and how closely (Hoffmann et al. 2022,
 * arXiv 2203.15556).  Issue 28 asks for Table 3 "to their printed
 * precision"; no published closed form gives that, so these are the
 * nearest honest checks, each with its tolerance explained:
 *  - Table 3 is not even a power law at its printed precision: the
 *    least-squares power laws through its nine rows (N ~ C^0.498,
 *    D ~ C^0.502) miss 6 of the 9 FLOP figures at 3 digits and 7 of the 9
 *    token figures at 0.1, and its rows are not 6ND-consistent (67B x
 *    1.5T x 6 = 6.03e23 against the row's 5.76e23, Gopher's budget,
 *    whose 6ND tokens would be 1.43T).  We ship no approach-1 law: its
 *    constants are not printed (only a = b = 0.50, Table 2).
 *  - Table 3 is approach 1 (the minimum over training curves): a power law
 *    whose constant the paper does not print.  Neither parametric fit is
 *    approach 1; Besiroglu et al. 2024's refit (exponent a = 0.513, against
 *    approach 1's 0.50) gives Table 3's parameter counts within 11 % up to
 *    1e25 FLOPs (Gopher's 5.76e23: 72.3B for 67B) and drifts to +23 % at
 *    1.3e28 (12.3T for 10T): checked below as that, a comparison.
 *  - Table A3 (section D.3) prints approach 3, the parametric fit itself:
 *    its parameter count at each printed FLOP budget within 8 % (1.1 % at
 *    67B, 7.5 % at 10T).  The table is not exact to its own digits (67B x
 *    4.1T x 6 = 1.65e24, printed 1.71e24; the 175B row prints 1.26e24 for
 *    175B x 12.0T x 6 = 1.26e25, used here), so 8 % is what it allows.
 *  - Fig. 4's caption: approach 3 puts Gopher's budget at 40B parameters:
 *    40.3B here (39.5-40.5 rounds to it).  The exponents rounded as eq. 10
 *    prints them (0.34, 0.28) give 32.2B; the unrounded 0.3392 and 0.2849
 *    (the arXiv source, as Besiroglu et al. report) are the ones used.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"

#define REL_CLOSE(got, want, rel)                                                           \
    ck_assert_msg(fabs((double)(got) - (double)(want)) <= (rel)*fabs((double)(want)),       \
                  "%s = %.9g, want %.9g (rel tol %g)", #got, (double)(got), (double)(want), \
                  (double)(rel))

static double n_opt(ts_scaling_law l, double c)
{
    double n, d;

    ts_law_optimum(ts_law_get(l), c, &n, &d);
    REL_CLOSE(6 * n * d, c, 1e-12);
    return n;
}

START_TEST(test_gopher_40b)
{
    ts_law rounded = *ts_law_get(TS_LAW_HOFFMANN);
    double n = n_opt(TS_LAW_HOFFMANN, 5.76e23), d;

    ck_assert_msg(n >= 39.5e9 && n < 40.5e9, "N_opt = %.4g", n);
    /* Eq. 10 as printed: a smaller model, which the paper does not state. */
    rounded.alpha = 0.34;
    rounded.beta = 0.28;
    rounded.E = 1.69;
    ts_law_optimum(&rounded, 5.76e23, &n, &d);
    REL_CLOSE(n, 32.19e9, 1e-3);
}
END_TEST

START_TEST(test_table_a3_approach3)
{
    /* parameters, FLOPs (Hoffmann et al. Table A3, approach 3) */
    static const double rows[][2] = {
        { 400e6, 2.21e19 }, { 1e9, 1.62e20 },   { 10e9, 2.46e22 },
        { 67e9, 1.71e24 },  { 175e9, 1.26e25 }, { 280e9, 3.52e25 },
        { 520e9, 1.36e26 }, { 1e12, 5.65e26 },  { 10e12, 8.55e28 },
    };
    size_t i;

    for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
        REL_CLOSE(n_opt(TS_LAW_HOFFMANN, rows[i][1]), rows[i][0], 0.08);
}
END_TEST

START_TEST(test_table3_besiroglu)
{
    /* parameters, FLOPs (Hoffmann et al. Table 3, approach 1) */
    static const double rows[][2] = {
        { 400e6, 1.92e19 }, { 1e9, 1.21e20 },   { 10e9, 1.23e22 },
        { 67e9, 5.76e23 },  { 175e9, 3.85e24 }, { 280e9, 9.90e24 },
        { 520e9, 3.43e25 }, { 1e12, 1.27e26 },  { 10e12, 1.30e28 },
    };
    const ts_law *b = ts_law_get(TS_LAW_BESIROGLU);
    size_t i;

    REL_CLOSE(b->beta / (b->alpha + b->beta), 0.5126, 1e-4);
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
        REL_CLOSE(n_opt(TS_LAW_BESIROGLU, rows[i][1]), rows[i][0],
                  rows[i][1] <= 1e25 ? 0.11 : 0.25);
}
END_TEST

/* The closed form is the minimum of L(N, C / 6N): golden-section search
 * over log N. */
START_TEST(test_closed_form_is_minimum)
{
    static const double budgets[] = { 1e19, 1e21, 5.76e23, 1e25, 1e27 };
    int l;
    size_t i;

    for (l = 0; l < TS_LAW_COUNT; l++) {
        const ts_law *law = ts_law_get((ts_scaling_law)l);

        for (i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
            double c = budgets[i], lo = log(1e6), hi = log(1e15), g = (sqrt(5.0) - 1) / 2;
            int k;

            for (k = 0; k < 200; k++) {
                double x = hi - g * (hi - lo), y = lo + g * (hi - lo);

                if (ts_law_loss(law, exp(x), c / (6 * exp(x))) <
                    ts_law_loss(law, exp(y), c / (6 * exp(y))))
                    hi = y;
                else
                    lo = x;
            }
            REL_CLOSE(n_opt((ts_scaling_law)l, c), exp((lo + hi) / 2), 1e-6);
        }
    }
    /* By hand: Chinchilla (70B, 1.4T) under each fit. */
    REL_CLOSE(ts_law_loss(ts_law_get(TS_LAW_HOFFMANN), 70e9, 1.4e12), 1.92083520, 1e-8);
    REL_CLOSE(ts_law_loss(ts_law_get(TS_LAW_BESIROGLU), 70e9, 1.4e12), 1.97388186, 1e-8);
    ck_assert_ptr_null(ts_law_get(TS_LAW_COUNT));
    ck_assert_str_eq(ts_law_get(TS_LAW_HOFFMANN)->name, "hoffmann");
    ck_assert_str_eq(ts_law_get(TS_LAW_BESIROGLU)->name, "besiroglu");
}
END_TEST

START_TEST(test_shapes)
{
    static const double sizes[] = { 5e7, 3e8, 1e9, 7e9, 40e9, 70e9, 400e9, 2e12 };
    ts_error err;
    size_t i;

    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ts_model m;
        ts_params p;

        memset(&err, 0, sizeof err);
        ck_assert_msg(ts_scaling_shape(sizes[i], "budget_gpu_hours", &m, &err) == TS_OK, "%g: %s",
                      sizes[i], err.text);
        ck_assert(ts_model_params(&m, &p, &err) == TS_OK);
        REL_CLOSE(p.total, sizes[i], 0.02);
        ck_assert_int_eq(m.hidden % 128, 0);
        ck_assert_int_eq(m.hidden / 128, m.heads);
        ck_assert(m.gated && m.vocab == TS_SHAPE_VOCAB);
        /* Aspect ratio near 128 where the sizes allow (not the smallest). */
        if (sizes[i] >= 1e9) {
            double aspect = (double)m.hidden / (double)m.layers;

            ck_assert_msg(aspect > 64 && aspect < 256, "%g: hidden %lld layers %lld", sizes[i],
                          (long long)m.hidden, (long long)m.layers);
        }
    }
    /* 7B: width 4096 as Llama 2 7B and Llama 3 8B; 31 layers of 218M
     * (GQA 8, FFN 14336) and 262M of embeddings make 7.03B. */
    {
        ts_model m;

        ck_assert(ts_scaling_shape(7e9, "f", &m, &err) == TS_OK);
        ck_assert_int_eq(m.hidden, 4096);
        ck_assert_int_eq(m.layers, 31);
        ck_assert_int_eq(m.kv_heads, 8);
        ck_assert_int_eq(m.ffn, 14336);
    }
    /* Below the smallest shape, and not a size. */
    {
        ts_model m;

        ck_assert(ts_scaling_shape(1e6, "budget_gpu_hours", &m, &err) == TS_EINVAL);
        ck_assert_str_eq(err.field, "budget_gpu_hours");
        ck_assert(ts_scaling_shape(NAN, "budget_days", &m, &err) == TS_EINVAL);
        ck_assert_str_eq(err.field, "budget_days");
    }
}
END_TEST

static ts_sizing_cfg cfg_of(double gpu_hours, ts_sizing_mode mode)
{
    ts_sizing_cfg c;

    memset(&c, 0, sizeof c);
    c.gpu_hours = gpu_hours;
    c.field = "budget_gpu_hours";
    c.mode = mode;
    c.law = TS_LAW_HOFFMANN;
    ts_search_defaults(&c.search);
    return c;
}

/* The plan of the returned run spends the budget: its GPU-hours held
 * (with failures) are the budget's, its MFU and goodput the sizing's. */
static void check_plan_spends(const ts_sizing_out *o, ts_search_out *scratch)
{
    ts_plan *plan = malloc(sizeof *plan);
    ts_error err;

    (void)scratch;
    ck_assert_ptr_nonnull(plan);
    memset(&err, 0, sizeof err);
    ck_assert_msg(ts_plan_estimate(&o->run, plan, &err) == TS_OK, "%s: %s", err.field, err.text);
    REL_CLOSE(plan->compute.goodput.gpu_hours, o->gpu_hours, 1e-9);
    REL_CLOSE(plan->compute.mfu, o->mfu, 1e-12);
    REL_CLOSE(plan->compute.goodput.useful_fraction.value, o->useful_fraction, 1e-12);
    REL_CLOSE(plan->compute.model_flops.value, o->flops, 1e-9);
    REL_CLOSE(plan->compute.tokens, o->tokens, 1e-12);
    ck_assert(plan->memory.fits);
    free(plan);
}

START_TEST(test_sizing_optimal)
{
    ts_search_out *scratch = malloc(sizeof *scratch);
    ts_sizing_out o;
    ts_sizing_cfg c = cfg_of(64 * 24 * 7, TS_SIZE_OPTIMAL); /* 64 GPUs for a week */
    ts_run r;
    ts_budget work;
    ts_error err;

    ck_assert_ptr_nonnull(scratch);
    ts_run_defaults(&r);
    r.gpus = 64;
    ts_budget_init(&work, 0);
    memset(&err, 0, sizeof err);
    ck_assert_msg(ts_sizing_run(&r, &c, &work, scratch, &o, &err) == TS_OK, "%s: %s", err.field,
                  err.text);
    ck_assert(o.converged);
    ck_assert(!o.truncated);
    ck_assert_int_ge(o.iterations, 1);
    ck_assert_int_le(o.iterations, TS_SIZING_ITER_MAX);
    REL_CLOSE(o.flops, o.gpu_hours * 3600 * 989e12 * o.mfu * o.useful_fraction, 1e-12);
    /* The shape planned is the law's optimum for the budget's FLOPs to
     * the shape's granularity (2 %), trained on the tokens that spend it. */
    REL_CLOSE(o.params, o.optimal_params, 0.03);
    REL_CLOSE(o.tokens, o.flops / (6 * o.params), 1e-12);
    REL_CLOSE(o.tokens_per_param, o.tokens / o.params, 1e-12);
    REL_CLOSE(o.loss, ts_law_loss(ts_law_get(TS_LAW_HOFFMANN), o.params, o.tokens), 1e-12);
    ck_assert(o.loss >= o.optimal_loss - 1e-12);
    ck_assert_int_eq(o.run.gpus, 64);
    ck_assert(o.mfu > 0.1 && o.mfu < 0.9);
    check_plan_spends(&o, scratch);

    /* The replication's law plans another model from the same budget. */
    c.law = TS_LAW_BESIROGLU;
    ck_assert(ts_sizing_run(&r, &c, &work, scratch, &o, &err) == TS_OK);
    check_plan_spends(&o, scratch);
    free(scratch);
}
END_TEST

START_TEST(test_sizing_ratio_and_model)
{
    ts_search_out *scratch = malloc(sizeof *scratch);
    ts_sizing_out o;
    ts_sizing_cfg c = cfg_of(100000, TS_SIZE_RATIO);
    ts_run r;
    ts_error err;

    ck_assert_ptr_nonnull(scratch);
    /* Llama 3 8B's 15T tokens: about 1,900 per parameter, on purpose. */
    ts_run_defaults(&r);
    r.gpus = 256;
    c.tokens_per_param = 1900;
    memset(&err, 0, sizeof err);
    ck_assert_msg(ts_sizing_run(&r, &c, NULL, scratch, &o, &err) == TS_OK, "%s: %s", err.field,
                  err.text);
    /* N from the ratio to 2 %, so the ratio itself to about 4 %. */
    REL_CLOSE(o.tokens_per_param, 1900, 0.045);
    check_plan_spends(&o, scratch);

    /* A given model: the tokens the budget buys. */
    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("llama3-8b"));
    r.gpus = 64;
    c = cfg_of(10000, TS_SIZE_MODEL);
    ck_assert_msg(ts_sizing_run(&r, &c, NULL, scratch, &o, &err) == TS_OK, "%s: %s", err.field,
                  err.text);
    ck_assert_int_eq(o.iterations, 1);
    ck_assert_int_eq(o.run.model.layers, 32);
    REL_CLOSE(o.tokens, o.flops / (6 * 8.03e9), 0.001);
    check_plan_spends(&o, scratch);
    free(scratch);
}
END_TEST

START_TEST(test_sizing_refusals)
{
    ts_search_out *scratch = malloc(sizeof *scratch);
    ts_sizing_out o;
    ts_sizing_cfg c = cfg_of(1e-3, TS_SIZE_OPTIMAL);
    ts_run r;
    ts_error err;

    ck_assert_ptr_nonnull(scratch);
    ts_run_defaults(&r);
    r.gpus = 8;
    /* 3.6 s of 8 GPUs: a model below the smallest shape. */
    memset(&err, 0, sizeof err);
    ck_assert(ts_sizing_run(&r, &c, NULL, scratch, &o, &err) == TS_EINVAL);
    ck_assert_str_eq(err.field, "budget_gpu_hours");
    /* No budget, an unknown law, a ratio of 0. */
    c.gpu_hours = 0;
    ck_assert(ts_sizing_run(&r, &c, NULL, scratch, &o, &err) == TS_EINVAL);
    ck_assert_str_eq(err.field, "budget_gpu_hours");
    c = cfg_of(1000, TS_SIZE_RATIO);
    ck_assert(ts_sizing_run(&r, &c, NULL, scratch, &o, &err) == TS_EINVAL);
    ck_assert_str_eq(err.field, "tokens_per_param");
    c = cfg_of(1000, TS_SIZE_OPTIMAL);
    c.law = TS_LAW_COUNT;
    ck_assert(ts_sizing_run(&r, &c, NULL, scratch, &o, &err) == TS_EINVAL);
    ck_assert_str_eq(err.field, "scaling_law");
    /* A given model and a budget of less than one optimizer step. */
    ts_run_apply_preset(&r, ts_preset_find("llama3-70b"));
    r.gpus = 64;
    c = cfg_of(1, TS_SIZE_MODEL);
    ck_assert(ts_sizing_run(&r, &c, NULL, scratch, &o, &err) == TS_EINVAL);
    ck_assert_str_eq(err.field, "budget_gpu_hours");
    /* Llama 3 405B cannot fit on 8 H100 at all. */
    ts_run_apply_preset(&r, ts_preset_find("llama3-405b"));
    r.gpus = 8;
    c = cfg_of(1e5, TS_SIZE_MODEL);
    ck_assert(ts_sizing_run(&r, &c, NULL, scratch, &o, &err) == TS_ENOFIT);
    ck_assert_str_eq(err.field, "gpus");
    free(scratch);
}
END_TEST

static Suite *scaling_suite(void)
{
    Suite *s = suite_create("scaling");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_gopher_40b);
    tcase_add_test(tc, test_table_a3_approach3);
    tcase_add_test(tc, test_table3_besiroglu);
    tcase_add_test(tc, test_closed_form_is_minimum);
    tcase_add_test(tc, test_shapes);
    tcase_add_test(tc, test_sizing_optimal);
    tcase_add_test(tc, test_sizing_ratio_and_model);
    tcase_add_test(tc, test_sizing_refusals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(scaling_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
