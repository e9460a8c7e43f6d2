/*
 * ts_goodput.c - expected wall clock of a run under failures.
 *
 * The failure-free time T (ts_compute) runs in segments of tau seconds of
 * training, each closed by a blocking checkpoint write C.  Failures come
 * at rate 1/M (the job MTBF of the checkpoint model: per-GPU MTBF / gpus,
 * or given); each costs a restart R (re-launch, then reading the last
 * checkpoint back) and the work done since that checkpoint.  With
 * exponential failures a segment takes M e^(R/M) (e^((tau+C)/M) - 1) on
 * average (Daly 2006, "A higher order estimate of the optimum checkpoint
 * interval for restart dumps", FGCS 22(3), eq. 7), so the expected wall
 * clock is T/tau times that, and T over it is the fraction of time spent
 * training usefully.  The same segment formula gives the checkpoint's
 * waste (ts_ckpt.c, ts_daly_useful_fraction).  See docs/formulas.md,
 * "Goodput under failures".
 */
#include "ts_internal.h"

#include <math.h>

#define TS_SECONDS_PER_DAY 86400.0

double ts_goodput_useful(const ts_run *r, const ts_ckpt *k)
{
    return ts_daly_useful_fraction(k->blocking_write_s, k->tiers[TS_TIER_NVME].interval_s,
                                   r->ckpt.relaunch_min * 60.0 + k->tiers[TS_TIER_SHARED].restore_s,
                                   k->job_mtbf_s);
}

ts_status ts_goodput_eval(const ts_run *r, const ts_ckpt *k, double failure_free_s, ts_goodput *out,
                          ts_error *err)
{
    double T = failure_free_s, M, C, R, tau, useful, wall, segments;

    *out = (ts_goodput){ 0 };
    M = k->job_mtbf_s;
    C = k->blocking_write_s;
    tau = k->tiers[TS_TIER_NVME].interval_s;
    out->relaunch_s = r->ckpt.relaunch_min * 60.0;
    out->restore_s = k->tiers[TS_TIER_SHARED].restore_s;
    R = out->relaunch_s + out->restore_s;
    out->job_mtbf_s = M;
    out->interval_s = tau;
    out->write_s = C;
    out->restart_s = R;
    out->failure_free_s = T;

    useful = ts_goodput_useful(r, k);
    if (!(useful > 0)) {
        /* A checkpoint interval (plus its write) many times the MTBF:
         * the expected time is unbounded, the run never finishes. */
        *out = (ts_goodput){ 0 };
        return ts_error_set(err, TS_ERANGE,
                            r->ckpt.job_mtbf_hours > 0 ? "job_mtbf_hours" : "gpu_mtbf_hours",
                            "the job fails every %.3g s on average, far less than a checkpoint "
                            "interval of %.3g s: it would never finish (shorten nvme_interval_min)",
                            M, tau);
    }
    wall = T / useful;
    segments = T / tau;
    ts_term_set(
        &out->wall_seconds, wall, "T / tau * M e^(R/M) (e^((tau+C)/M) - 1)",
        "Daly 2006 exact expectation: exponential failures at the job MTBF M; "
        "tau = nvme interval, C = its blocking write, R = relaunch + restore from the shared tier");
    out->wall_days = wall / TS_SECONDS_PER_DAY;
    ts_term_set(&out->useful_fraction, useful, "T / wall = tau / (M e^(R/M) (e^((tau+C)/M) - 1))",
                "fraction of the wall clock spent on training that is kept; "
                "~ 1 - C/tau - (tau/2 + R)/M when C, tau and R are small next to M");
    out->interruptions = wall / M;
    out->checkpoint_s = segments * C;
    /* wall >= T + checkpoint_s: each segment takes at least tau + C. */
    out->lost_s = fmax(0.0, wall - T - out->checkpoint_s);
    out->lost_per_interruption_s = out->interruptions > 0 ? out->lost_s / out->interruptions : 0;
    out->gpu_hours = wall * (double)r->gpus / 3600.0;
    out->cost_usd = out->gpu_hours * r->gpu_hour_usd;
    out->daly_interval_s = k->daly_interval_s.value;
    out->useful_fraction_daly = ts_daly_useful_fraction(C, out->daly_interval_s, R, M);

    {
        const double v[] = { out->wall_seconds.value, out->wall_days, out->interruptions,
                             out->checkpoint_s,       out->lost_s,    out->lost_per_interruption_s,
                             out->gpu_hours,          out->cost_usd,  out->relaunch_s,
                             out->restart_s };
        size_t i;

        for (i = 0; i < sizeof v / sizeof v[0]; i++)
            if (!isfinite(v[i])) {
                *out = (ts_goodput){ 0 };
                return ts_error_set(
                    err, TS_ERANGE, "tokens",
                    "the expected wall clock with failures overflows for these inputs");
            }
    }
    return TS_OK;
}
