/*
 * ts_plan.c - every estimate for one run in one call.
 *
 * The run is resolved once into out->run, so the plan reports the
 * effective inputs (dp and gpus both filled, tokens defaulted, ...) and
 * every estimator sees the same resolved run (resolution is idempotent).
 */
#include "trainsize.h"

#include <string.h>

ts_status ts_plan_estimate(const ts_run *r, ts_plan *out, ts_error *err)
{
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    memset(out, 0, sizeof *out);

    out->run = *r;
    if ((st = ts_run_resolve(&out->run, err)) != TS_OK ||
        (st = ts_memory_estimate(&out->run, &out->memory, err)) != TS_OK ||
        (st = ts_compute_estimate(&out->run, &out->compute, err)) != TS_OK ||
        (st = ts_ckpt_estimate(&out->run, &out->ckpt, err)) != TS_OK ||
        (st = ts_sweep_dp(&out->run, out->sweep, TS_SWEEP_MAX,
                          &out->sweep_len, err)) != TS_OK) {
        /* No half-filled plan: a caller that ignores the status sees zeros. */
        memset(out, 0, sizeof *out);
        return st;
    }
    return TS_OK;
}
