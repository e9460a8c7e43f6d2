/*
 * test_solve.c - fit solvers and the data-parallel sweep.
 *
 * Solver answers are checked against independent ts_memory_estimate calls
 * (the answer fits, the next candidate does not) and against figures
 * worked by hand in the comments.  Byte figures worked by hand use 1e-12
 * relative (exact products of small numbers, summation order only).
 */
#include <check.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"

#define REL_CLOSE(got, want, rel)                                                                  \
    ck_assert_msg(fabs((got) - (want)) <= (rel)*fabs(want), "%s = %.12g, want %.12g (rel tol %g)", \
                  #got, (double)(got), (double)(want), (double)(rel))
#define EXACT 1e-12

/* Llama 2 7B shape (test_model.c: 6738415616 params), 8 GPUs, ZeRO-3,
 * selective recompute: per micro-batch activations ~15.4e9 B, so a few
 * micro-batches fit in 80 GB. */
static void llama7b_run(ts_run *r)
{
    ts_run_defaults(r);
    r->model = (ts_model){ .layers = 32,
                           .hidden = 4096,
                           .heads = 32,
                           .kv_heads = 32,
                           .ffn = 11008,
                           .vocab = 32000,
                           .gated = true };
    r->seq = 4096;
    r->gpus = 8;
    r->zero = 3;
    r->recompute = TS_RECOMPUTE_SELECTIVE;
}

static bool fits_with(const ts_run *base, int64_t mb, int64_t gb)
{
    ts_run r = *base;
    ts_memory m;

    r.micro_batch = mb;
    r.global_batch = gb;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    return m.fits;
}

/* ---- largest micro-batch ------------------------------------------- */

START_TEST(test_max_mb_free_batch)
{
    ts_run r;
    ts_memory m, check;
    int64_t mb = 0;

    llama7b_run(&r);
    ck_assert_int_eq(ts_fit_max_micro_batch(&r, 1024, &mb, &m, NULL), TS_OK);
    /* By hand: states 16 * 6.738e9 / 8 = 13.48e9; activations per
     * micro-batch 32 s b h (18 + 4F/h) = 32 * 4096 * 4096 * 28.75 =
     * 15.43e9 plus logits ~2.2e9; overhead 2 GiB + 5%:
     * (80e9 - 2.147e9) / 1.05 - 13.48e9 = 60.7e9 -> 3 micro-batches. */
    ck_assert_int_eq(mb, 3);
    ck_assert(fits_with(&r, mb, 0));
    ck_assert(!fits_with(&r, mb + 1, 0));
    /* *mem is the memory of the answer. */
    r.micro_batch = mb;
    ck_assert_int_eq(ts_memory_estimate(&r, &check, NULL), TS_OK);
    ck_assert(m.total.value == check.total.value);
    ck_assert(m.fits);

    /* The limit caps the answer. */
    llama7b_run(&r);
    ck_assert_int_eq(ts_fit_max_micro_batch(&r, 2, &mb, NULL, NULL), TS_OK);
    ck_assert_int_eq(mb, 2);
    ck_assert_int_eq(ts_fit_max_micro_batch(&r, 1, &mb, NULL, NULL), TS_OK);
    ck_assert_int_eq(mb, 1);

    /* More HBM, larger answer; still m fits and m + 1 does not. */
    llama7b_run(&r);
    r.gpu.hbm_bytes = 1e12;
    ck_assert_int_eq(ts_fit_max_micro_batch(&r, 1024, &mb, NULL, NULL), TS_OK);
    ck_assert(mb > 3);
    ck_assert(fits_with(&r, mb, 0));
    ck_assert(!fits_with(&r, mb + 1, 0));
}
END_TEST

START_TEST(test_max_mb_fixed_batch)
{
    ts_run r;
    int64_t mb = 0, d;

    /* global_batch 48 on dp 8: micro-batches must divide 48/8 = 6, so
     * of 1, 2, 3, 6 the largest that fits (3, see above). */
    llama7b_run(&r);
    r.global_batch = 48;
    ck_assert_int_eq(ts_fit_max_micro_batch(&r, 1024, &mb, NULL, NULL), TS_OK);
    ck_assert_int_eq(mb, 3);
    /* global_batch 64: divisors of 8 are 1, 2, 4, 8; 3 fits but does not
     * divide, 4 does not fit -> 2. */
    r.global_batch = 64;
    ck_assert_int_eq(ts_fit_max_micro_batch(&r, 1024, &mb, NULL, NULL), TS_OK);
    ck_assert_int_eq(mb, 2);
    ck_assert(fits_with(&r, 2, 64));
    for (d = 3; d <= 8; d++)
        if (8 % d == 0)
            ck_assert(!fits_with(&r, d, 64));
    /* A prime per-rank batch (7): only 1 and 7; 7 does not fit. */
    r.global_batch = 56;
    ck_assert_int_eq(ts_fit_max_micro_batch(&r, 1024, &mb, NULL, NULL), TS_OK);
    ck_assert_int_eq(mb, 1);
    /* global_batch not divisible by dp at all: an input error. */
    r.global_batch = 12; /* 12 % 8 */
    {
        ts_error err;
        ck_assert_int_eq(ts_fit_max_micro_batch(&r, 1024, &mb, NULL, &err), TS_EINCOMPAT);
        ck_assert_str_eq(err.field, "global_batch");
    }
}
END_TEST

START_TEST(test_max_mb_errors)
{
    ts_run r;
    ts_memory m;
    ts_error err;
    int64_t mb = 99;

    /* 70B plain on 8 GPUs, ZeRO-1: 385e9 B per GPU of model state alone
     * (test_memory.c) -> not even micro-batch 1 fits. */
    ts_run_defaults(&r);
    r.model.params = 70e9;
    ck_assert_int_eq(ts_fit_max_micro_batch(&r, 1024, &mb, &m, &err), TS_ENOFIT);
    ck_assert_str_eq(err.field, "micro_batch");
    ck_assert_int_eq(mb, 0);
    ck_assert(!m.fits && m.total.value > m.hbm_bytes); /* memory of micro-batch 1 */
    {
        /* The reason speaks GiB like the answers: the H100's 81559 MiB
         * (nvidia-smi) are 79.6 GiB. */
        char want[96];
        ck_assert_double_eq_tol(m.hbm_bytes, 81559.0 * 1048576.0, 1e6);
        snprintf(want, sizeof want, "needs %.1f GiB per GPU, the GPU has 79.6 GiB",
                 m.total.value / 1073741824.0);
        ck_assert_msg(strstr(err.text, want) != NULL, "%s", err.text);
    }

    llama7b_run(&r);
    ck_assert_int_eq(ts_fit_max_micro_batch(&r, 0, &mb, NULL, &err), TS_EINVAL);
    ck_assert_str_eq(err.field, "max_micro_batch");
    ck_assert_int_eq(ts_fit_max_micro_batch(&r, (INT64_C(1) << 20) + 1, &mb, NULL, &err),
                     TS_EINVAL);
    ck_assert_str_eq(err.field, "max_micro_batch");
    r.tp = 3; /* heads 32 % 3 (gpus 24: dp 8) */
    r.gpus = 24;
    ck_assert_int_eq(ts_fit_max_micro_batch(&r, 16, &mb, NULL, &err), TS_EINCOMPAT);
    ck_assert_str_eq(err.field, "tp");
    ck_assert_int_eq(ts_fit_max_micro_batch(NULL, 16, &mb, NULL, &err), TS_EINVAL);
}
END_TEST

/* ---- fewest GPUs ----------------------------------------------------- */

static bool fits_dp(const ts_run *base, int64_t dp, int64_t gb)
{
    ts_run r = *base;
    ts_memory m;

    r.dp = dp;
    r.gpus = 0;
    r.global_batch = gb;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    return m.fits;
}

START_TEST(test_min_gpus_plain)
{
    ts_run r;
    ts_memory m;
    int64_t dp = 0, gpus = 0;

    /* 70B, ZeRO-3, no activations (plain): per GPU 16 * 70e9 / dp +
     * 2 GiB <= 81559 MiB = 85520809984 B  ->  dp >= 1.12e12 / 83373326336
     * = 13.4  ->  14. */
    ts_run_defaults(&r);
    r.model.params = 70e9;
    r.zero = 3;
    ck_assert_int_eq(ts_fit_min_gpus(&r, 65536, &dp, &gpus, &m, NULL), TS_OK);
    ck_assert_int_eq(dp, 14);
    ck_assert_int_eq(gpus, 14);
    ck_assert(m.fits);
    ck_assert(fits_dp(&r, 14, 0));
    ck_assert(!fits_dp(&r, 13, 0));

    /* tp 8 divides the state by 8 first: dp >= 13.4 / 8 -> 2, 16 GPUs. */
    r.tp = 8;
    ck_assert_int_eq(ts_fit_min_gpus(&r, 65536, &dp, &gpus, NULL, NULL), TS_OK);
    ck_assert_int_eq(dp, 2);
    ck_assert_int_eq(gpus, 16);
}
END_TEST

START_TEST(test_min_gpus_ep)
{
    ts_run r;
    int64_t dp = 0, gpus = 0;

    /* Mixtral 8x7B shape with ep 8: dp must be a multiple of 8. */
    ts_run_defaults(&r);
    r.model = (ts_model){ .layers = 32,
                          .hidden = 4096,
                          .heads = 32,
                          .kv_heads = 8,
                          .ffn = 14336,
                          .vocab = 32000,
                          .experts = 8,
                          .top_k = 2,
                          .gated = true };
    r.ep = 8;
    r.zero = 3;
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_fit_min_gpus(&r, 65536, &dp, &gpus, NULL, NULL), TS_OK);
    ck_assert_int_eq(dp % 8, 0);
    ck_assert(fits_dp(&r, dp, 0));
    if (dp > 8)
        ck_assert(!fits_dp(&r, dp - 8, 0));
}
END_TEST

START_TEST(test_min_gpus_matches_linear_scan)
{
    /* The solver bisects; a plain scan over dp = 1, 2, 3, ... with the
     * same global-batch rule (the user's where dp * b divides it, else
     * derived) must agree, also for pp > 1 where in_flight varies. */
    static const int64_t gbs[] = { 0, 96, 60, 7 };
    size_t i;

    for (i = 0; i < sizeof gbs / sizeof gbs[0]; i++) {
        ts_run r;
        int64_t dp = 0, gpus = 0, k, want = 0;

        ts_run_defaults(&r);
        r.model = (ts_model){
            .layers = 96, .hidden = 12288, .heads = 96, .vocab = 50257, .tied_embeddings = true
        };
        r.seq = 2048;
        r.tp = 8;
        r.pp = 8;
        r.zero = 1;
        r.global_batch = gbs[i];
        for (k = 1; k <= 64 && want == 0; k++)
            if (fits_dp(&r, k, gbs[i] > 0 && gbs[i] % k == 0 ? gbs[i] : 0))
                want = k;
        ck_assert_msg(want > 0, "no dp <= 64 fits for global_batch %lld", (long long)gbs[i]);
        ck_assert_int_eq(ts_fit_min_gpus(&r, 64 * 64, &dp, &gpus, NULL, NULL), TS_OK);
        ck_assert_msg(dp == want, "global_batch %lld: dp %lld, scan %lld", (long long)gbs[i],
                      (long long)dp, (long long)want);
        ck_assert_int_eq(gpus, dp * 64);
    }
}
END_TEST

/* A fixed batch of few micro-batches holds fewer in flight than the
 * derived one (which has p in flight whenever pp > 1: ts_batch_default),
 * so the derived memory is no lower bound for it: the solver must not
 * skip a dp the fixed batch fits at.  GPT-3 175B at seq 8192, tp 8, pp 8:
 * 12 layers a stage. */
START_TEST(test_min_gpus_small_fixed_batch)
{
    static const int64_t gbs[] = { 1, 2, 4 };
    size_t i;

    for (i = 0; i < sizeof gbs / sizeof gbs[0]; i++) {
        ts_run r;
        int64_t dp = 0, gpus = 0, k, want = 0;

        ts_run_defaults(&r);
        r.model = (ts_model){
            .layers = 96, .hidden = 12288, .heads = 96, .vocab = 50257, .tied_embeddings = true
        };
        r.seq = 8192;
        r.tp = 8;
        r.pp = 8;
        r.zero = 1;
        r.global_batch = gbs[i];
        for (k = 1; k <= gbs[i] && want == 0; k++)
            if (gbs[i] % k == 0 && fits_dp(&r, k, gbs[i]))
                want = k;
        if (want == 0)
            continue;
        ck_assert_int_eq(ts_fit_min_gpus(&r, 64 * 64, &dp, &gpus, NULL, NULL), TS_OK);
        ck_assert_msg(dp == want, "global_batch %lld: dp %lld, scan %lld", (long long)gbs[i],
                      (long long)dp, (long long)want);
    }
}
END_TEST

START_TEST(test_min_gpus_errors)
{
    ts_run r;
    ts_memory m;
    ts_error err;
    int64_t dp = 9, gpus = 9;

    /* 70B ZeRO-3 needs 16 GPUs (above): 8 is not enough. */
    ts_run_defaults(&r);
    r.model.params = 70e9;
    r.zero = 3;
    ck_assert_int_eq(ts_fit_min_gpus(&r, 8, &dp, &gpus, &m, &err), TS_ENOFIT);
    ck_assert_str_eq(err.field, "gpus");
    ck_assert(dp == 0 && gpus == 0);
    ck_assert(!m.fits);
    ck_assert_msg(strstr(err.text, "does not fit on 8 GPUs: ") != NULL &&
                      strstr(err.text, " GiB per GPU, the GPU has 79.6 GiB (") != NULL,
                  "%s", err.text);
    /* ZeRO-0 never shards: 1.05 * 16 * 70e9 per GPU whatever dp. */
    r.zero = 0;
    ck_assert_int_eq(ts_fit_min_gpus(&r, 65536, &dp, &gpus, NULL, &err), TS_ENOFIT);
    /* tp 16 alone exceeds max_gpus 8. */
    r.zero = 3;
    r.tp = 16;
    ck_assert_int_eq(ts_fit_min_gpus(&r, 8, &dp, &gpus, NULL, &err), TS_ENOFIT);
    ck_assert_str_eq(err.field, "gpus");
    r.tp = 1;
    ck_assert_int_eq(ts_fit_min_gpus(&r, 0, &dp, &gpus, NULL, &err), TS_EINVAL);
    ck_assert_str_eq(err.field, "max_gpus");
    r.global_batch = -4;
    ck_assert_int_eq(ts_fit_min_gpus(&r, 64, &dp, &gpus, NULL, &err), TS_EINVAL);
    ck_assert_str_eq(err.field, "global_batch");
    r.global_batch = 0;
    r.mfu = 2;
    ck_assert_int_eq(ts_fit_min_gpus(&r, 64, &dp, &gpus, NULL, &err), TS_EINVAL);
    ck_assert_str_eq(err.field, "mfu");
}
END_TEST

/* ---- sweep ----------------------------------------------------------- */

START_TEST(test_sweep_points)
{
    ts_run r;
    ts_sweep_point pts[TS_SWEEP_MAX];
    size_t n = 0, i;

    /* 70B plain ZeRO-3 on 8 GPUs: dp = 1, 2, ..., 1024 (8 is among them). */
    ts_run_defaults(&r);
    r.model.params = 70e9;
    r.zero = 3;
    ck_assert_int_eq(ts_sweep_dp(&r, pts, TS_SWEEP_MAX, &n, NULL), TS_OK);
    ck_assert_uint_eq(n, 11);
    for (i = 0; i < n; i++) {
        double dp = (double)pts[i].dp;
        ck_assert_int_eq(pts[i].dp, INT64_C(1) << i);
        ck_assert_int_eq(pts[i].gpus, pts[i].dp);
        /* ZeRO-3 over dp: 2 * 70e9 / dp weights, 12 * 70e9 / dp master+opt. */
        REL_CLOSE(pts[i].weights, 2 * 70e9 / dp, EXACT);
        REL_CLOSE(pts[i].master + pts[i].optimizer, 12 * 70e9 / dp, EXACT);
        /* Parallel save: 14 B/param (oracles.md) / (dp t p c). */
        REL_CLOSE(pts[i].ckpt_shard_bytes, 14 * 70e9 / dp, EXACT);
        /* Fits from dp 16 on (test_min_gpus_plain). */
        ck_assert(pts[i].fits == (pts[i].dp >= 16));
        if (i > 0)
            ck_assert(pts[i].total <= pts[i - 1].total);
    }

    /* Each point's time is the compute estimate of the same run at that
     * dp.  With the MFU given, GPU-hours do not depend on the GPU count
     * (FLOPs / (peak * mfu)), so wall seconds * GPUs is one constant:
     * 1024 GPUs take 1/1024 of the time of one (hand: T_wall = 6 N D /
     * (gpus * peak * mfu), docs/formulas.md). */
    r.mfu = 0.4;
    ck_assert_int_eq(ts_sweep_dp(&r, pts, TS_SWEEP_MAX, &n, NULL), TS_OK);
    ck_assert_uint_eq(n, 11);
    for (i = 0; i < n; i++) {
        ts_run t = r;
        ts_compute c;

        t.gpus = 0;
        t.dp = pts[i].dp;
        ck_assert_int_eq(ts_compute_estimate(&t, &c, NULL), TS_OK);
        ck_assert(pts[i].timed);
        REL_CLOSE(pts[i].wall_seconds, c.wall_seconds.value, EXACT);
        REL_CLOSE(pts[i].step_seconds, c.step_time.value, EXACT);
        REL_CLOSE(pts[i].mfu, 0.4, EXACT);
        REL_CLOSE(pts[i].wall_seconds * (double)pts[i].gpus, pts[0].wall_seconds, EXACT);
        /* The point names the batch its step is of: the one the run
         * resolves to at that dp. */
        ck_assert_int_eq(ts_run_resolve(&t, NULL), TS_OK);
        ck_assert_int_eq(pts[i].global_batch, t.global_batch);
        ck_assert_int_gt(pts[i].global_batch, 0);
    }

    /* A given global batch is kept where dp x micro_batch divides it
     * (512 / (1 x 64) .. 512 / (64 x 8)); past dp 64 each point derives
     * its own, and its step is of that batch. */
    r.global_batch = 512;
    r.micro_batch = 8;
    ck_assert_int_eq(ts_sweep_dp(&r, pts, TS_SWEEP_MAX, &n, NULL), TS_OK);
    for (i = 0; i < n; i++) {
        if (pts[i].dp <= 64)
            ck_assert_int_eq(pts[i].global_batch, 512);
        else
            ck_assert_int_eq(pts[i].global_batch % (pts[i].dp * 8), 0);
    }
    r.global_batch = 0;
    r.micro_batch = 1;
    r.mfu = 0;

    /* dp 48 is merged in order between 32 and 64. */
    r.gpus = 48;
    ck_assert_int_eq(ts_sweep_dp(&r, pts, TS_SWEEP_MAX, &n, NULL), TS_OK);
    ck_assert_uint_eq(n, 12);
    ck_assert_int_eq(pts[6].dp, 48);
    ck_assert_int_eq(pts[5].dp, 32);
    ck_assert_int_eq(pts[7].dp, 64);

    /* dp 4096 > 1024: powers up to 4096. */
    r.gpus = 4096;
    ck_assert_int_eq(ts_sweep_dp(&r, pts, TS_SWEEP_MAX, &n, NULL), TS_OK);
    ck_assert_uint_eq(n, 13);
    ck_assert_int_eq(pts[n - 1].dp, 4096);

    /* dp 3000: powers up to 2048, then 3000 last. */
    r.gpus = 3000;
    ck_assert_int_eq(ts_sweep_dp(&r, pts, TS_SWEEP_MAX, &n, NULL), TS_OK);
    ck_assert_uint_eq(n, 13);
    ck_assert_int_eq(pts[11].dp, 2048);
    ck_assert_int_eq(pts[12].dp, 3000);
}
END_TEST

START_TEST(test_sweep_monotone)
{
    int z;

    /* Per-GPU total is non-increasing in dp whenever ZeRO shards something. */
    for (z = 1; z <= 3; z++) {
        ts_run r;
        ts_sweep_point pts[TS_SWEEP_MAX];
        size_t n = 0, i;

        ts_run_defaults(&r);
        r.model = (ts_model){
            .layers = 96, .hidden = 12288, .heads = 96, .vocab = 50257, .tied_embeddings = true
        };
        r.seq = 2048;
        r.tp = 8;
        r.pp = 8;
        r.gpus = 64 * 16;
        r.zero = z;
        r.sequence_parallel = true;
        ck_assert_int_eq(ts_sweep_dp(&r, pts, TS_SWEEP_MAX, &n, NULL), TS_OK);
        ck_assert_uint_eq(n, 11);
        for (i = 1; i < n; i++) {
            ck_assert_msg(pts[i].total <= pts[i - 1].total, "zero %d dp %lld", z,
                          (long long)pts[i].dp);
            ck_assert(pts[i].gpus == pts[i].dp * 64);
        }
        /* Strictly smaller at the far end: sharding does something. */
        ck_assert(pts[n - 1].total < pts[0].total);
    }
}
END_TEST

START_TEST(test_sweep_fixed_batch)
{
    ts_run r;
    ts_sweep_point pts[TS_SWEEP_MAX];
    ts_memory m;
    size_t n = 0, i;

    /* GPT-3, tp 8, pp 8, global_batch 96: at dp where dp divides 96 the
     * global batch is kept (in_flight = min(8, 96/dp)); elsewhere (dp 64,
     * 128, ...) it is derived (in_flight 1) rather than the point dropped. */
    ts_run_defaults(&r);
    r.model = (ts_model){
        .layers = 96, .hidden = 12288, .heads = 96, .vocab = 50257, .tied_embeddings = true
    };
    r.seq = 2048;
    r.tp = 8;
    r.pp = 8;
    r.gpus = 64;
    r.global_batch = 96;
    ck_assert_int_eq(ts_sweep_dp(&r, pts, TS_SWEEP_MAX, &n, NULL), TS_OK);
    ck_assert_uint_eq(n, 11);
    for (i = 0; i < n; i++) {
        ts_run t = r;
        t.gpus = 0;
        t.dp = pts[i].dp;
        t.global_batch = 96 % pts[i].dp == 0 ? 96 : 0;
        ck_assert_int_eq(ts_memory_estimate(&t, &m, NULL), TS_OK);
        ck_assert(pts[i].activations == m.activations.value);
        ck_assert(pts[i].total == m.total.value);
        /* dp 32: 96/32 = 3 in flight; dp 64: the batch (96) does not
         * divide, so it is derived (about 4M tokens): pp = 8 in flight. */
        if (pts[i].dp == 32)
            ck_assert_int_eq(m.in_flight, 3);
        if (pts[i].dp == 64)
            ck_assert_int_eq(m.in_flight, 8);
    }
}
END_TEST

START_TEST(test_sweep_ep_and_errors)
{
    ts_run r;
    ts_sweep_point pts[TS_SWEEP_MAX];
    ts_error err;
    size_t n = 0;

    /* ep 8: dp 1, 2, 4 cannot be configured and are left out. */
    ts_run_defaults(&r);
    r.model = (ts_model){ .layers = 32,
                          .hidden = 4096,
                          .heads = 32,
                          .kv_heads = 8,
                          .ffn = 14336,
                          .vocab = 32000,
                          .experts = 8,
                          .top_k = 2,
                          .gated = true };
    r.ep = 8;
    ck_assert_int_eq(ts_sweep_dp(&r, pts, TS_SWEEP_MAX, &n, NULL), TS_OK);
    ck_assert_uint_eq(n, 8); /* 8 .. 1024 */
    ck_assert_int_eq(pts[0].dp, 8);

    /* Too little room is an error, not a silently short sweep. */
    ck_assert_int_eq(ts_sweep_dp(&r, pts, 4, &n, &err), TS_EINVAL);
    ck_assert_uint_eq(n, 0);
    /* An invalid run is reported with its field. */
    r.ep = 3;
    ck_assert_int_eq(ts_sweep_dp(&r, pts, TS_SWEEP_MAX, &n, &err), TS_EINCOMPAT);
    ck_assert_str_eq(err.field, "ep");
    ck_assert_int_eq(ts_sweep_dp(NULL, pts, TS_SWEEP_MAX, &n, &err), TS_EINVAL);
}
END_TEST

static Suite *solve_suite(void)
{
    Suite *s = suite_create("solve");
    TCase *tc = tcase_create("solve");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_max_mb_free_batch);
    tcase_add_test(tc, test_max_mb_fixed_batch);
    tcase_add_test(tc, test_max_mb_errors);
    tcase_add_test(tc, test_min_gpus_plain);
    tcase_add_test(tc, test_min_gpus_ep);
    tcase_add_test(tc, test_min_gpus_matches_linear_scan);
    tcase_add_test(tc, test_min_gpus_small_fixed_batch);
    tcase_add_test(tc, test_min_gpus_errors);
    tcase_add_test(tc, test_sweep_points);
    tcase_add_test(tc, test_sweep_monotone);
    tcase_add_test(tc, test_sweep_fixed_batch);
    tcase_add_test(tc, test_sweep_ep_and_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(solve_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
