/*
 * test_ckpt.c - checkpoint sizes, write times, Young/Daly (ts_ckpt_estimate).
 *
 * Expected values come from /work/shared/oracles.md ("Checkpoints") or are
 * worked by hand next to each check.  Hand arithmetic gets 1e-9 relative
 * (double rounding only); published figures get their stated tolerance.
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

static void make_run(ts_run *r, const char *preset, double params, int64_t gpus)
{
    ts_run_defaults(r);
    if (preset != NULL) {
        const ts_preset *p = ts_preset_find(preset);
        ck_assert_msg(p != NULL, "preset %s", preset);
        ts_run_apply_preset(r, p);
    } else {
        r->model.params = params;
    }
    r->gpus = gpus;
    r->dp = 0;
}

static ts_ckpt estimate_ok(const ts_run *r)
{
    ts_ckpt out;
    ts_error err;

    memset(&err, 0, sizeof err);
    ck_assert_msg(ts_ckpt_estimate(r, &out, &err) == TS_OK, "%s: %s", err.field, err.text);
    return out;
}

/* ------------------------------------------------------------------ */
/* Sizes                                                               */
/* ------------------------------------------------------------------ */

START_TEST(test_bytes_per_param)
{
    ts_run r;
    ts_ckpt c;

    /* oracles.md: resumable without grads = 2 + 4 + 4 + 4 = 14 B/param. */
    make_run(&r, NULL, 1e9, 8);
    c = estimate_ok(&r);
    REL_CLOSE(c.bpp_full, 14.0, 1e-12);
    REL_CLOSE(c.full_bytes.value, 14e9, 1e-12);
    REL_CLOSE(c.weights_bytes.value, 2e9, 1e-12); /* bf16 weights */
    ck_assert_ptr_nonnull(c.full_bytes.formula);
    ck_assert_ptr_nonnull(c.full_bytes.assumptions);

    /* + bf16 grads 2 = 16 (oracles.md: mixed Adam model state 16). */
    r.ckpt.include_grads = true;
    c = estimate_ok(&r);
    REL_CLOSE(c.bpp_full, 16.0, 1e-12);

    /* fp32 everything, no master copy: 4 + 8 = 12. */
    make_run(&r, NULL, 1e9, 8);
    r.precision = r.grad_precision = r.compute_precision = TS_PREC_FP32;
    r.master_weights = false;
    c = estimate_ok(&r);
    REL_CLOSE(c.bpp_full, 12.0, 1e-12);
    REL_CLOSE(c.weights_bytes.value, 4e9, 1e-12);

    /* formulas.md: frozen params keep weights only; grads, master and
     * optimizer scale by f.  f = 0.01: 2 + 0.01 * (4 + 8) = 2.12. */
    make_run(&r, NULL, 1e9, 8);
    r.trainable_fraction = 0.01;
    c = estimate_ok(&r);
    REL_CLOSE(c.bpp_full, 2.12, 1e-12);

    /* Inference (optimizer none): weights only, 2 B/param. */
    make_run(&r, NULL, 1e9, 8);
    r.optimizer = TS_OPT_NONE;
    c = estimate_ok(&r);
    REL_CLOSE(c.bpp_full, 2.0, 1e-12);
    REL_CLOSE(c.full_bytes.value, c.weights_bytes.value, 1e-12);
}
END_TEST

START_TEST(test_bloom_176b)
{
    ts_run r;
    ts_ckpt c;

    make_run(&r, NULL, 176e9, 384);
    c = estimate_ok(&r);
    /* oracles.md (BLOOM model card): full checkpoint ~2.3 TB.  14 * 176e9 =
     * 2.464e12 B, 7.1% above the card's figure (which is as stored, rounded,
     * and counts GiB-ish units); tolerance 8%, no tighter claim is honest. */
    REL_CLOSE(c.full_bytes.value, 14 * 176e9, 1e-12);
    REL_CLOSE(c.full_bytes.value, 2.3e12, 0.08);
    /* bf16 weights ~329 GB: 176e9 * 2 = 352e9 B = 327.8 GiB, so the card's
     * "GB" are GiB; within 0.5% of 329 in GiB. */
    REL_CLOSE(c.weights_bytes.value, 352e9, 1e-12);
    REL_CLOSE(c.weights_bytes.value / 1073741824.0, 329.0, 5e-3);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Per-GPU shard                                                       */
/* ------------------------------------------------------------------ */

/* oracles.md / seed 000: 13B per-GPU checkpoint ~10.4 GB at DP=1 ->
 * ~650 MB at DP=16, a 1/16 shard.  The totals do not follow from 14-16
 * B/param, so only the ratio is tested: exactly 16 (1e-12). */
static const struct scale_case {
    bool parallel_save;
    int zero;
    double ratio;
} scale_cases[] = {
    { true, 1, 16.0 }, /* every rank writes full / (dp tp pp cp) */
    { true, 0, 16.0 },
    { false, 3, 16.0 }, /* ZeRO-3: full / (tp pp Nd) */
};

START_TEST(test_shard_scales_inverse_dp)
{
    const struct scale_case *k = &scale_cases[_i];
    ts_run r;
    ts_ckpt one, sixteen;

    make_run(&r, "llama2-13b", 0, 1);
    r.ckpt.parallel_save = k->parallel_save;
    r.zero = k->zero;
    one = estimate_ok(&r);
    r.gpus = 16;
    sixteen = estimate_ok(&r);
    REL_CLOSE(one.shard_bytes_per_gpu.value / sixteen.shard_bytes_per_gpu.value, k->ratio, 1e-12);
    /* The full checkpoint is the same size whatever the layout. */
    REL_CLOSE(one.full_bytes.value, sixteen.full_bytes.value, 1e-12);
    ck_assert_int_eq(sixteen.writers, 16);
}
END_TEST

/* Without parallel save, DP rank 0 writes the replicated part (formulas.md). */
static const struct shard_case {
    int zero;
    int64_t tp, pp, dp;
    double shard_per_param; /* bytes per model parameter in the largest shard */
    int64_t writers;
} shard_cases[] = {
    /* stage 0: full / (t p) = 14 / 4 = 3.5; only t p = 4 ranks write. */
    { 0, 2, 2, 4, 14.0 / 4, 4 },
    /* stage 1: weights / (t p) + 12 / (t p Nd) = 2/4 + 12/16 = 1.25. */
    { 1, 2, 2, 4, 2.0 / 4 + 12.0 / 16, 16 },
    /* stage 2: same rule (grads not saved) = 1.25. */
    { 2, 2, 2, 4, 2.0 / 4 + 12.0 / 16, 16 },
    /* stage 3: 14 / (t p Nd) = 14 / 16 = 0.875. */
    { 3, 2, 2, 4, 14.0 / 16, 16 },
    /* dp 1, stage 1: 2 + 12 = 14, the whole state on one GPU. */
    { 1, 1, 1, 1, 14.0, 1 },
};

START_TEST(test_shard_rank0_rule)
{
    const struct shard_case *k = &shard_cases[_i];
    ts_run r;
    ts_ckpt c;

    /* Plain 1e9 params: bytes/param reads directly as GB. */
    make_run(&r, NULL, 1e9, k->tp * k->pp * k->dp);
    r.tp = k->tp;
    r.pp = k->pp;
    r.zero = k->zero;
    r.ckpt.parallel_save = false;
    c = estimate_ok(&r);
    REL_CLOSE(c.shard_bytes_per_gpu.value, k->shard_per_param * 1e9, 1e-12);
    ck_assert_int_eq(c.writers, k->writers);
    ck_assert_ptr_nonnull(c.shard_bytes_per_gpu.formula);
}
END_TEST

/* MoE without parallel save: the experts of one data-parallel group are
 * spread over its ep ranks, so each writes 1/ep of them (the audit found
 * the whole expert state charged to one rank).  Mixtral 8x7B (test_model.c:
 * dense 1605636096, experts 45097156608), bf16 + master + AdamW = 14 B,
 * ZeRO 0, ep 8 on 8 GPUs: 14 * (1605636096 + 45097156608 / 8) =
 * 101398929408 B; writers tp * pp * ep = 8. */
START_TEST(test_moe_shard_ep)
{
    ts_run r;
    ts_ckpt c;

    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("mixtral-8x7b"));
    r.gpus = 8;
    r.ep = 8;
    r.zero = 0;
    r.ckpt.parallel_save = false;
    c = estimate_ok(&r);
    REL_CLOSE(c.shard_bytes_per_gpu.value, 101398929408.0, 1e-12);
    ck_assert_int_eq(c.writers, 8);
    /* ZeRO 1: weights 2 * 7242780672 + the 12 B rest over Nd 8:
     * 12 * 46702792704 / 8 = 70054189056 -> 84539750400. */
    r.zero = 1;
    c = estimate_ok(&r);
    REL_CLOSE(c.shard_bytes_per_gpu.value, 2 * 7242780672.0 + 12 * 46702792704.0 / 8, 1e-12);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Tiers, MTBF, Young/Daly, worked by hand                             */
/* ------------------------------------------------------------------ */

START_TEST(test_write_times_by_hand)
{
    ts_run r;
    ts_ckpt c;
    const ts_ckpt_tier *t;
    double C, M, young, daly, R;

    /* P = 1e9 -> full 14e9 B.  16 GPUs, 8 per node -> 2 nodes; parallel save:
     * shard = 14e9 / 16 = 875e6 B, 16 writers.  Defaults (trainsize.h):
     * writer 2 GB/s, nvme 6 GB/s/node, shared 100, object 20 GB/s;
     * intervals 5 / 30 / 180 min; keep 2 / 3 / 5; GPU MTBF 50,000 h. */
    make_run(&r, NULL, 1e9, 16);
    c = estimate_ok(&r);
    REL_CLOSE(c.shard_bytes_per_gpu.value, 875e6, 1e-12);
    ck_assert_int_eq(c.writers, 16);
    /* busiest node: 8 writers * 875e6 = 7e9 B. */
    REL_CLOSE(c.bytes_per_node, 7e9, 1e-12);

    /* nvme: min(2, 6 * 2 / 16 = 0.75) = 0.75 GB/s -> 875e6 / 0.75e9 = 1.16667 s. */
    t = &c.tiers[TS_TIER_NVME];
    ck_assert_str_eq(t->name, "nvme");
    REL_CLOSE(t->bandwidth_per_writer, 0.75e9, 1e-12);
    REL_CLOSE(t->write_s, 875e6 / 0.75e9, 1e-12);
    REL_CLOSE(t->restore_s, 875e6 / 0.75e9, 1e-12);
    REL_CLOSE(t->interval_s, 300, 1e-12);
    REL_CLOSE(t->overhead_fraction, (875e6 / 0.75e9) / 300, 1e-12);
    ck_assert_int_eq(t->keep, 2);
    REL_CLOSE(t->storage_bytes, 2 * 14e9 / 2, 1e-12); /* keep * full / nodes, per node */

    /* shared: min(2, 100 / 16 = 6.25) = 2 GB/s -> 0.4375 s. */
    t = &c.tiers[TS_TIER_SHARED];
    ck_assert_str_eq(t->name, "shared");
    REL_CLOSE(t->bandwidth_per_writer, 2e9, 1e-12);
    REL_CLOSE(t->write_s, 0.4375, 1e-12);
    REL_CLOSE(t->interval_s, 1800, 1e-12);
    REL_CLOSE(t->storage_bytes, 3 * 14e9, 1e-12);

    /* object: min(2, 20 / 16 = 1.25) = 1.25 GB/s -> 0.7 s. */
    t = &c.tiers[TS_TIER_OBJECT];
    ck_assert_str_eq(t->name, "object");
    REL_CLOSE(t->bandwidth_per_writer, 1.25e9, 1e-12);
    REL_CLOSE(t->write_s, 0.7, 1e-12);
    REL_CLOSE(t->interval_s, 10800, 1e-12);
    REL_CLOSE(t->storage_bytes, 5 * 14e9, 1e-12);

    /* M = 50,000 h / 16 = 3125 h = 1.125e7 s; C = 1.16667 s (nvme). */
    C = 875e6 / 0.75e9;
    M = 1.125e7;
    R = 0.4375;
    REL_CLOSE(c.job_mtbf_s, M, 1e-12);
    REL_CLOSE(c.blocking_write_s, C, 1e-12);
    /* Young: sqrt(2 * 1.16667 * 1.125e7) = sqrt(2.625e7) = 5123.475 s. */
    young = 5123.475382979799;
    REL_CLOSE(c.young_interval_s.value, young, 1e-9);
    /* Daly: 5123.475 * (1 + sqrt(C/2M)/3 + C/18M) - C
     * = 5123.475 * (1 + 1.0184e-4 + 5.76e-9) - 1.16667 = 5122.698 s. */
    daly = young * (1 + sqrt(C / (2 * M)) / 3 + C / (18 * M)) - C;
    REL_CLOSE(daly, 5122.6976347, 1e-9);
    REL_CLOSE(c.daly_interval_s.value, daly, 1e-9);
    /* Waste at Daly (Daly 2006, eq. 7, exact):
     * 1 - tau / (M e^(R/M) (e^((tau+C)/M) - 1)) = 0.0004553898; to first order
     * C/tau + (tau/2 + R)/M = 2.2775e-4 + 2.2771e-4 = 4.5546e-4 (the
     * second-order terms are 1.5e-4 of it). */
    REL_CLOSE(c.waste_fraction.value, 1 - daly / (M * exp(R / M) * expm1((daly + C) / M)), 1e-9);
    REL_CLOSE(c.waste_fraction.value, 0.000455389772, 1e-6);
    REL_CLOSE(c.waste_fraction.value, C / daly + (daly / 2 + R) / M, 2e-4);
    /* At the 5-minute schedule: 0.003887196 exact; first order
     * 1.16667/300 + (150 + 0.4375)/1.125e7 = 3.9023e-3. */
    REL_CLOSE(c.waste_fraction_schedule, 0.003887196029, 1e-6);
    REL_CLOSE(c.waste_fraction_schedule, C / 300 + (150 + R) / M, 5e-3); /* (C/tau)^2 terms */
    ck_assert_ptr_nonnull(c.young_interval_s.formula);
    ck_assert_ptr_nonnull(c.daly_interval_s.formula);
    ck_assert_ptr_nonnull(c.waste_fraction.formula);
}
END_TEST

/* Node-local NVMe bandwidth is per node, so it is shared by the nodes
 * that hold writers, not by every node of the job (formulas.md,
 * "Checkpoints").  Without parallel save at ZeRO 0 only the t p ep ranks
 * of DP rank 0 write, which on a large job is a few of its nodes.  P = 1e9
 * (full 14e9 B), 64 GPUs at 8 per node = 8 nodes; nvme 1 GB/s per node,
 * below the 2 GB/s writer path, so the tier's share decides. */
static const struct nvme_case {
    int64_t tp, pp;
    int64_t writers, writer_nodes;
    double shard, bw, write_s, storage;
    const char *why;
} nvme_cases[] = {
    /* t p = 16 writers = 2 nodes; shard 14e9 / 16 = 875e6 B.
     * bw = min(2e9, 1e9 * 2 / 16 = 125e6) = 125e6 B/s -> 7 s.
     * (Divided over all 8 nodes it would read 5e8 B/s, 1.75 s.)
     * storage per node: keep 2 * 14e9 / 2 nodes = 14e9 B (not 3.5e9). */
    { 8, 2, 16, 2, 875e6, 125e6, 7.0, 14e9, "t p = 16 writers on 2 of 8 nodes" },
    /* one writer on one node: shard = full = 14e9 B;
     * bw = min(2e9, 1e9 * 1 / 1) = 1e9 -> 14 s (all nodes: min(2e9, 8e9)
     * = 2e9, 7 s); storage 2 * 14e9 / 1 = 28e9 B. */
    { 1, 1, 1, 1, 14e9, 1e9, 14.0, 28e9, "one writer" },
};

START_TEST(test_nvme_writer_nodes)
{
    const struct nvme_case *k = &nvme_cases[_i];
    const ts_ckpt_tier *t;
    ts_run r;
    ts_ckpt c;

    make_run(&r, NULL, 1e9, 64);
    r.tp = k->tp;
    r.pp = k->pp;
    r.zero = 0;
    r.ckpt.parallel_save = false;
    r.ckpt.nvme_gbps = 1;
    c = estimate_ok(&r);
    ck_assert_msg(c.writers == k->writers, "%s: writers %lld", k->why, (long long)c.writers);
    REL_CLOSE(c.shard_bytes_per_gpu.value, k->shard, 1e-12);
    t = &c.tiers[TS_TIER_NVME];
    REL_CLOSE(t->bandwidth_per_writer, k->bw, 1e-12);
    REL_CLOSE(t->write_s, k->write_s, 1e-12);
    REL_CLOSE(c.blocking_write_s, k->write_s, 1e-12);
    REL_CLOSE(t->storage_bytes, k->storage, 1e-12);
    /* The shared tier has one aggregate for the whole job: 100 GB/s over
     * the writers, capped by the 2 GB/s writer path. */
    REL_CLOSE(c.tiers[TS_TIER_SHARED].bandwidth_per_writer, fmin(2e9, 100e9 / (double)k->writers),
              1e-12);
    /* When every GPU writes (parallel save), every node writes: 64
     * writers on 8 nodes, min(2e9, 8e9 / 64 = 125e6), shard 14e9 / 64. */
    r.ckpt.parallel_save = true;
    c = estimate_ok(&r);
    REL_CLOSE(c.tiers[TS_TIER_NVME].bandwidth_per_writer, 125e6, 1e-12);
    REL_CLOSE(c.tiers[TS_TIER_NVME].write_s, (14e9 / 64) / 125e6, 1e-12);
}
END_TEST

/* Context parallelism splits the sequence, not the weights: each of the
 * cp ranks holds the full layer state, so with parallel save the state
 * is written by dp t p c ranks and the shard is full / (dp t p c)
 * (formulas.md).  P = 1e9 -> full 14e9 B; dp fixed at 4, so cp = 1, 2,
 * 4 means 4, 8, 16 GPUs: 3.5e9, 1.75e9, 875e6 B. */
START_TEST(test_shard_follows_cp)
{
    static const struct {
        int64_t cp;
        double shard;
    } k[] = {
        { 1, 14e9 / 4 },
        { 2, 14e9 / 8 },
        { 4, 14e9 / 16 },
    };
    ts_run r;
    ts_ckpt c;
    size_t i;

    for (i = 0; i < sizeof k / sizeof k[0]; i++) {
        make_run(&r, NULL, 1e9, 0);
        r.dp = 4;
        r.cp = k[i].cp;
        c = estimate_ok(&r);
        REL_CLOSE(c.shard_bytes_per_gpu.value, k[i].shard, 1e-12);
        ck_assert_int_eq(c.writers, 4 * k[i].cp);
    }
    /* Fixed gpus 16: cp 2 leaves dp 8, and the shard is still 1/16. */
    make_run(&r, NULL, 1e9, 16);
    r.cp = 2;
    c = estimate_ok(&r);
    REL_CLOSE(c.shard_bytes_per_gpu.value, 14e9 / 16, 1e-12);
    /* Without parallel save ZeRO shards over Nd = dp cp as well:
     * stage 3, dp 4, cp 2: 14e9 / 8 = 1.75e9; stage 1: weights 2e9 whole
     * on DP rank 0 + 12e9 / 8 = 3.5e9. */
    make_run(&r, NULL, 1e9, 0);
    r.dp = 4;
    r.cp = 2;
    r.ckpt.parallel_save = false;
    r.zero = 3;
    c = estimate_ok(&r);
    REL_CLOSE(c.shard_bytes_per_gpu.value, 14e9 / 8, 1e-12);
    r.zero = 1;
    c = estimate_ok(&r);
    REL_CLOSE(c.shard_bytes_per_gpu.value, 2e9 + 12e9 / 8, 1e-12);
}
END_TEST

static const struct interval_case {
    double c, m, young, daly;
    const char *why;
} interval_cases[] = {
    /* Young: sqrt(2 * 60 * 11160) = sqrt(1,339,200) = 1157.238 s (M = 3.1 h). */
    { 60, 11160, 1157.2380913, -1, "Young 1974 by hand" },
    /* Daly: sqrt(1.2e6) = 1095.445; 1 + sqrt(0.003)/3 + 60/180000
     * = 1.018591; 1095.445 * 1.018591 - 60 = 1055.810 s. */
    { 60, 10000, 1095.4451150, 1055.8102634, "Daly 2006 by hand" },
    /* C >= 2M: Daly says checkpoint every M. */
    { 300, 100, 244.9489743, 100, "Daly 2006, C >= 2M" },
    { 200, 100, 200, 100, "Daly 2006, C = 2M boundary" },
    /* undefined inputs give 0, never NaN */
    { 0, 100, 0, 0, "no write cost" },
    { 10, 0, 0, 0, "no MTBF" },
    { -1, 100, 0, 0, "negative" },
    { NAN, 100, 0, 0, "NaN" },
    { 10, INFINITY, 0, 0, "Inf" },
};

START_TEST(test_young_daly_helpers)
{
    const struct interval_case *k = &interval_cases[_i];
    double y = ts_young_interval(k->c, k->m);
    double d = ts_daly_interval(k->c, k->m);

    ck_assert_msg(isfinite(y) && isfinite(d), "%s", k->why);
    if (k->young == 0)
        ck_assert_msg(y == 0, "%s: young %g", k->why, y);
    else
        REL_CLOSE(y, k->young, 1e-9);
    if (k->daly == 0)
        ck_assert_msg(d == 0, "%s: daly %g", k->why, d);
    else if (k->daly > 0)
        REL_CLOSE(d, k->daly, 1e-9);
}
END_TEST

START_TEST(test_llama3_mtbf)
{
    ts_run r;
    ts_ckpt c;

    /* oracles.md: Llama 3, 419 unexpected interruptions in 54 days on
     * 16,384 GPUs: job MTBF = 54 * 24 / 419 = 3.093 h ("~1 per 3.1 h").
     * As a per-GPU MTBF: 3.093 * 16384 = 50,677 h, close to the 50,000 h
     * default.  Tolerance 1% against the paper's rounded 3.1 h. */
    make_run(&r, NULL, 8e9, 16384);
    r.ckpt.gpu_mtbf_hours = 54.0 * 24.0 * 16384.0 / 419.0;
    c = estimate_ok(&r);
    REL_CLOSE(c.job_mtbf_s / 3600.0, 54.0 * 24.0 / 419.0, 1e-12);
    REL_CLOSE(c.job_mtbf_s / 3600.0, 3.1, 1e-2);

    /* job_mtbf_hours overrides the per-GPU figure. */
    r.ckpt.job_mtbf_hours = 3.1;
    c = estimate_ok(&r);
    REL_CLOSE(c.job_mtbf_s, 11160, 1e-12);
    REL_CLOSE(c.young_interval_s.value, sqrt(2 * c.blocking_write_s * 11160), 1e-12);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

enum bad_field {
    BAD_WRITER,
    BAD_NVME,
    BAD_SHARED,
    BAD_OBJECT,
    BAD_INTERVAL,
    BAD_KEEP,
    BAD_MTBF,
    BAD_JOB_MTBF
};

static const struct bad_case {
    enum bad_field which;
    double value;
    const char *field;
} bad_cases[] = {
    { BAD_WRITER, 0, "writer_gbps" },
    { BAD_WRITER, -2, "writer_gbps" },
    { BAD_NVME, NAN, "nvme_gbps" },
    { BAD_SHARED, INFINITY, "shared_gbps" },
    { BAD_OBJECT, 0, "object_gbps" },
    { BAD_INTERVAL, 0, "nvme_interval_min" },
    { BAD_KEEP, 0, "nvme_keep" },
    { BAD_MTBF, -1, "gpu_mtbf_hours" },
    { BAD_JOB_MTBF, -3, "job_mtbf_hours" }, /* negative is not "derive" */
    { BAD_JOB_MTBF, NAN, "job_mtbf_hours" },
};

START_TEST(test_bad_config)
{
    const struct bad_case *k = &bad_cases[_i];
    ts_run r;
    ts_ckpt c;
    ts_error err;

    make_run(&r, NULL, 1e9, 8);
    switch (k->which) {
    case BAD_WRITER:
        r.ckpt.writer_gbps = k->value;
        break;
    case BAD_NVME:
        r.ckpt.nvme_gbps = k->value;
        break;
    case BAD_SHARED:
        r.ckpt.shared_gbps = k->value;
        break;
    case BAD_OBJECT:
        r.ckpt.object_gbps = k->value;
        break;
    case BAD_INTERVAL:
        r.ckpt.nvme_interval_min = k->value;
        break;
    case BAD_KEEP:
        r.ckpt.nvme_keep = (int64_t)k->value;
        break;
    case BAD_MTBF:
        r.ckpt.gpu_mtbf_hours = k->value;
        break;
    case BAD_JOB_MTBF:
        r.ckpt.job_mtbf_hours = k->value;
        break;
    default:
        ck_abort();
    }
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(ts_ckpt_estimate(&r, &c, &err), TS_EINVAL);
    ck_assert_str_eq(err.field, k->field);
    ck_assert(c.full_bytes.value == 0 && c.tiers[0].write_s == 0);
}
END_TEST

START_TEST(test_null_args)
{
    ts_run r;
    ts_ckpt c;
    ts_error err;

    make_run(&r, NULL, 1e9, 8);
    ck_assert_int_eq(ts_ckpt_estimate(NULL, &c, &err), TS_EINVAL);
    ck_assert_int_eq(ts_ckpt_estimate(&r, NULL, &err), TS_EINVAL);
    ck_assert_int_eq(ts_ckpt_estimate(&r, &c, NULL), TS_OK);
}
END_TEST

/* A job that fails every second with a 5-minute schedule loses
 * (almost) everything: the waste tends to 1, it never exceeds it. */
START_TEST(test_waste_bounded)
{
    ts_run r;
    ts_ckpt c;

    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("llama3-405b"));
    r.gpus = 16384;
    r.tp = 8;
    r.pp = 16;
    r.ckpt.job_mtbf_hours = 1.0 / 3600;
    c = estimate_ok(&r);
    ck_assert(c.waste_fraction_schedule > 0.99 && c.waste_fraction_schedule <= 1);
    ck_assert(c.waste_fraction.value > 0 && c.waste_fraction.value <= 1);
    r.ckpt.job_mtbf_hours = 1e-9;
    c = estimate_ok(&r);
    ck_assert(c.waste_fraction_schedule == 1 && c.waste_fraction.value <= 1);
}
END_TEST

/* Every preset with defaults: finite figures. */
START_TEST(test_all_presets_finite)
{
    size_t i, j;

    for (i = 0; i < ts_preset_count(); i++) {
        ts_run r;
        ts_ckpt c;

        ts_run_defaults(&r);
        ts_run_apply_preset(&r, ts_preset_at(i));
        c = estimate_ok(&r);
        ck_assert(isfinite(c.full_bytes.value) && c.full_bytes.value > 0);
        ck_assert(isfinite(c.daly_interval_s.value) && c.daly_interval_s.value > 0);
        ck_assert(isfinite(c.waste_fraction.value));
        /* A fraction of time: never above 1 (the first-order form gave
         * 3.16 for the default llama3-405b plan). */
        ck_assert(c.waste_fraction.value >= 0 && c.waste_fraction.value <= 1);
        ck_assert(c.waste_fraction_schedule >= 0 && c.waste_fraction_schedule <= 1);
        for (j = 0; j < TS_TIER_COUNT; j++)
            ck_assert(isfinite(c.tiers[j].write_s) && c.tiers[j].write_s > 0);
    }
}
END_TEST

static Suite *ckpt_suite(void)
{
    Suite *s = suite_create("ckpt");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_bytes_per_param);
    tcase_add_test(tc, test_bloom_176b);
    tcase_add_loop_test(tc, test_shard_scales_inverse_dp, 0,
                        (int)(sizeof scale_cases / sizeof scale_cases[0]));
    tcase_add_loop_test(tc, test_shard_rank0_rule, 0,
                        (int)(sizeof shard_cases / sizeof shard_cases[0]));
    tcase_add_test(tc, test_write_times_by_hand);
    tcase_add_loop_test(tc, test_young_daly_helpers, 0,
                        (int)(sizeof interval_cases / sizeof interval_cases[0]));
    tcase_add_test(tc, test_llama3_mtbf);
    tcase_add_loop_test(tc, test_bad_config, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, test_null_args);
    tcase_add_test(tc, test_all_presets_finite);
    tcase_add_test(tc, test_waste_bounded);
    tcase_add_test(tc, test_moe_shard_ep);
    tcase_add_loop_test(tc, test_nvme_writer_nodes, 0,
                        (int)(sizeof nvme_cases / sizeof nvme_cases[0]));
    tcase_add_test(tc, test_shard_follows_cp);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ckpt_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
