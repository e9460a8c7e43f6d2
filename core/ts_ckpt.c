/*
 * ts_ckpt.c - checkpoint sizes, write/restore times and the interval.
 *
 * Sizes come from the same bytes-per-parameter table as the memory estimate
 * (ts_memory_estimate), so a change of precision or optimizer moves both.
 * Write time per tier is shard / min(writer_bw, aggregate_bw / writers);
 * the interval is Young 1974 / Daly 2006 with C = the blocking write to the
 * node-local tier (later tiers drain from it asynchronously).
 * See docs/formulas.md, "Checkpoints".
 */
#include "ts_internal.h"

#include <math.h>

#define TS_GBPS 1e9

/* 0 for inputs where the interval is undefined (no write cost, no MTBF),
 * so callers never see NaN. */
double ts_young_interval(double c, double m)
{
    if (!(c > 0) || !(m > 0) || !isfinite(c) || !isfinite(m))
        return 0;
    return sqrt(2.0 * c * m);
}

double ts_daly_interval(double c, double m)
{
    if (!(c > 0) || !(m > 0) || !isfinite(c) || !isfinite(m))
        return 0;
    if (c >= 2.0 * m) /* Daly 2006: past this the expansion breaks down */
        return m;
    return sqrt(2.0 * c * m) * (1.0 + sqrt(c / (2.0 * m)) / 3.0 + c / (18.0 * m)) - c;
}

/* Fraction of wall time spent training usefully with checkpoints and
 * exponential failures (Daly 2006, eq. 7): a segment of tau work + C write
 * takes M e^(R/M) (e^((tau+C)/M) - 1) on average, so the useful fraction
 * is tau over that.  Exact for every C, tau, R, M, always in [0, 1]; to
 * first order it is 1 - C/tau - (tau/2 + R)/M.  expm1 keeps the
 * small-rate end exact; a segment too long to ever finish is 0.  The
 * checkpoint's waste and the goodput (ts_goodput.c) both use it. */
double ts_daly_useful_fraction(double c, double tau, double r, double m)
{
    double x, expected;

    if (!(tau > 0) || !(m > 0))
        return 1;
    x = (tau + c) / m;
    if (x > 700 || r / m > 700)
        return 0;
    expected = m * exp(r / m) * expm1(x);
    if (!(expected > 0) || !isfinite(expected))
        return 0;
    return fmin(1.0, fmax(0.0, tau / expected));
}

/* Fraction of wall time lost to checkpoints, lost work and restarts. */
static double ts_ckpt_waste(double c, double tau, double r, double m)
{
    return 1.0 - ts_daly_useful_fraction(c, tau, r, m);
}

static int64_t ts_ckpt_ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* One storage tier: every writer gets min(its own path, its share of the
 * tier's aggregate bandwidth). */
static void ts_ckpt_tier_fill(ts_ckpt_tier *t, const char *name, double shard, int64_t writers,
                              double writer_bw, double aggregate_bw, double interval_s,
                              int64_t keep, double storage_bytes, const char *formula)
{
    double share = aggregate_bw / (double)writers;

    t->name = name;
    t->interval_s = interval_s;
    t->bandwidth_per_writer = share < writer_bw ? share : writer_bw;
    t->write_s = shard / t->bandwidth_per_writer;
    t->restore_s = t->write_s; /* same bandwidth model read back */
    t->keep = keep;
    t->storage_bytes = storage_bytes;
    t->overhead_fraction = t->write_s / interval_s;
    t->formula = formula;
}

static int ts_ckpt_all_finite(const ts_ckpt *c)
{
    size_t i;
    const double v[] = {
        c->full_bytes.value,          c->weights_bytes.value,     c->bpp_full,
        c->shard_bytes_per_gpu.value, c->bytes_per_node,          c->job_mtbf_s,
        c->young_interval_s.value,    c->daly_interval_s.value,   c->blocking_write_s,
        c->waste_fraction.value,      c->waste_fraction_schedule,
    };

    for (i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]))
            return 0;
    for (i = 0; i < TS_TIER_COUNT; i++) {
        const ts_ckpt_tier *t = &c->tiers[i];
        if (!isfinite(t->interval_s) || !isfinite(t->write_s) || !isfinite(t->restore_s) ||
            !isfinite(t->bandwidth_per_writer) || !isfinite(t->storage_bytes) ||
            !isfinite(t->overhead_fraction))
            return 0;
    }
    return 1;
}

/* Checkpoint sizes: everything to resume (full) and the weights alone,
 * into out; *full and *weights in bytes. */
static void ts_ckpt_sizes(const ts_run *run, const ts_memory *mem, ts_ckpt *out, double *full,
                          double *weights)
{
    const ts_ckpt_cfg *k = &run->ckpt;
    /* The parameters the bytes per parameter are averaged over: under
     * LoRA the adapters and lora_modules_to_save's copies too. */
    double P = mem->bpp_params > 0 ? mem->bpp_params : mem->params.total;

    out->bpp_full = mem->bpp_weights + mem->bpp_master + mem->bpp_optimizer +
                    (k->include_grads ? mem->bpp_grads : 0);
    *full = P * out->bpp_full;
    *weights = P * mem->bpp_weights;
    ts_term_set(&out->full_bytes, *full,
                k->include_grads ? "P * (weights + grads + master + optimizer bytes/param)"
                                 : "P * (weights + master + optimizer bytes/param)",
                "everything needed to resume bit-exactly: 14 B/param for mixed-precision Adam "
                "without grads");
    ts_term_set(&out->weights_bytes, *weights, "P * bytes(precision)",
                "weights only, at the training precision (for inference or fine-tuning)");
}

/* The largest shard one GPU writes and how many GPUs write, into out;
 * returns the shard's bytes. */
static double ts_ckpt_shard(const ts_run *run, const ts_memory *mem, double full, double weights,
                            ts_ckpt *out)
{
    double P = mem->params.total, replicated_extra, shard, mp, nd, ef, ep;
    int64_t writers;
    const char *shard_formula;

    mp = (double)(run->tp * run->pp); /* model-parallel split of the state */
    nd = (double)(run->dp * run->cp); /* ZeRO sharding group */
    /* Experts are split over ep as well: ep ranks of one data-parallel
     * group hold different experts and each writes its own. */
    ef = P > 0 ? mem->params.expert / P : 0.0;
    ep = (double)run->ep;
    replicated_extra = full - weights;
    if (run->ckpt.parallel_save) {
        /* Every rank writes an equal slice of what it holds (DCP-style). */
        shard = full / (double)run->gpus;
        writers = run->gpus;
        shard_formula = "full / (dp * tp * pp * cp)";
    } else if (run->zero == 0) {
        /* Only DP rank 0 of each model-parallel (and expert) group writes. */
        shard = full * ((1.0 - ef) / mp + ef / (mp * ep));
        writers = run->tp * run->pp * run->ep;
        shard_formula = "full_dense / (tp * pp) + full_expert / (tp * pp * ep)";
    } else if (run->zero < 3) {
        /* Weights replicated (rank 0 writes them), the rest sharded over Nd. */
        shard = weights * ((1.0 - ef) / mp + ef / (mp * ep)) + replicated_extra / (mp * nd);
        writers = run->gpus;
        shard_formula = "weights_dense / (tp * pp) + weights_expert / (tp * pp * ep) + (master + "
                        "optimizer [+ grads]) / (tp * pp * dp * cp)";
    } else {
        shard = full / (mp * nd);
        writers = run->gpus;
        shard_formula = "full / (tp * pp * dp * cp)";
    }
    ts_term_set(
        &out->shard_bytes_per_gpu, shard, shard_formula,
        run->ckpt.parallel_save
            ? "parallel save: every rank writes 1/gpus of the state, so the shard scales as 1/dp"
            : "DP rank 0 writes the replicated state; the largest shard is reported");
    out->writers = writers;
    return shard;
}

/* Write and restore times of each storage tier (out->writers write shard
 * bytes each; full: the whole checkpoint, for the storage kept). */
static void ts_ckpt_tiers(const ts_run *run, double full, double shard, ts_ckpt *out)
{
    const ts_ckpt_cfg *k = &run->ckpt;
    int64_t writers = out->writers, nodes, writer_nodes, per_node;

    nodes = ts_ckpt_ceil_div(run->gpus, run->gpus_per_node);
    /* Node-local NVMe only helps on nodes that hold writers (writers packed
     * rank-major); equals all nodes whenever every GPU writes. */
    writer_nodes = ts_ckpt_ceil_div(writers, run->gpus_per_node);
    if (writer_nodes > nodes)
        writer_nodes = nodes;
    per_node = writers < run->gpus_per_node ? writers : run->gpus_per_node;
    out->bytes_per_node = (double)per_node * shard; /* busiest node */

    ts_ckpt_tier_fill(&out->tiers[TS_TIER_NVME], "nvme", shard, writers, k->writer_gbps * TS_GBPS,
                      k->nvme_gbps * TS_GBPS * (double)writer_nodes, k->nvme_interval_min * 60.0,
                      k->nvme_keep, (double)k->nvme_keep * full / (double)writer_nodes,
                      "shard / min(writer_gbps, nvme_gbps * nodes / writers); storage keep * full "
                      "/ nodes per node");
    ts_ckpt_tier_fill(&out->tiers[TS_TIER_SHARED], "shared", shard, writers,
                      k->writer_gbps * TS_GBPS, k->shared_gbps * TS_GBPS,
                      k->shared_interval_min * 60.0, k->shared_keep, (double)k->shared_keep * full,
                      "shard / min(writer_gbps, shared_gbps / writers); storage keep * full");
    ts_ckpt_tier_fill(&out->tiers[TS_TIER_OBJECT], "object", shard, writers,
                      k->writer_gbps * TS_GBPS, k->object_gbps * TS_GBPS,
                      k->object_interval_min * 60.0, k->object_keep, (double)k->object_keep * full,
                      "shard / min(writer_gbps, object_gbps / writers); storage keep * full");
}

/* The job's MTBF, Young's and Daly's intervals and the time lost, from
 * the tiers' write and restore times. */
static void ts_ckpt_intervals(const ts_run *run, ts_ckpt *out)
{
    const ts_ckpt_cfg *k = &run->ckpt;
    double M, C, R;

    M = (k->job_mtbf_hours > 0 ? k->job_mtbf_hours : k->gpu_mtbf_hours / (double)run->gpus) *
        3600.0;
    C = out->tiers[TS_TIER_NVME].write_s;
    R = out->tiers[TS_TIER_SHARED].restore_s;
    out->job_mtbf_s = M;
    out->blocking_write_s = C;
    ts_term_set(&out->young_interval_s, ts_young_interval(C, M), "sqrt(2 C M)",
                "Young 1974; C = blocking nvme write, M = job MTBF, failures exponential");
    ts_term_set(&out->daly_interval_s, ts_daly_interval(C, M),
                "sqrt(2CM) (1 + sqrt(C/(2M))/3 + C/(18M)) - C if C < 2M, else M",
                "Daly 2006 higher-order optimum; C = blocking nvme write, M = job MTBF");
    ts_term_set(
        &out->waste_fraction, ts_ckpt_waste(C, out->daly_interval_s.value, R, M),
        "1 - tau / (M e^(R/M) (e^((tau+C)/M) - 1)) at tau = Daly interval (~ C/tau + (tau/2 + "
        "R)/M)",
        "Daly 2006 exact expected time, exponential failures; R = restore from the shared tier");
    out->waste_fraction_schedule = ts_ckpt_waste(C, out->tiers[TS_TIER_NVME].interval_s, R, M);
}

ts_status ts_ckpt_eval(const ts_run *run, const ts_memory *mem, ts_ckpt *out, ts_error *err)
{
    double full, weights, shard;

    /* Resolved: bandwidths, intervals and keeps positive, the MTBF, the
     * degrees (ts_run_resolve); what is divided by below. */
    *out = (ts_ckpt){ 0 };
    ts_ckpt_sizes(run, mem, out, &full, &weights);
    shard = ts_ckpt_shard(run, mem, full, weights, out);
    ts_ckpt_tiers(run, full, shard, out);
    ts_ckpt_intervals(run, out);

    if (!ts_ckpt_all_finite(out)) {
        *out = (ts_ckpt){ 0 };
        return ts_error_set(err, TS_ERANGE, "", "checkpoint figures overflow for these inputs");
    }
    return TS_OK;
}

ts_status ts_ckpt_estimate(const ts_run *r, ts_ckpt *out, ts_error *err)
{
    ts_run run;
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *out = (ts_ckpt){ 0 };
    run = *r; /* resolve a private copy: the caller's run is const */
    if ((st = ts_run_resolve(&run, err)) != TS_OK)
        return st;
    return ts_ckpt_resolved(&run, out, err);
}

ts_status ts_ckpt_resolved(const ts_run *r, ts_ckpt *out, ts_error *err)
{
    ts_params p;
    ts_memory mem;
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *out = (ts_ckpt){ 0 };
    if ((st = ts_run_resolved_ok(r, err)) != TS_OK)
        return st;
    /* The bytes-per-parameter table lives in the memory estimate. */
    ts_model_count(&r->model, &p);
    if ((st = ts_memory_eval(r, &p, &mem, err)) != TS_OK)
        return st;
    return ts_ckpt_eval(r, &mem, out, err);
}
