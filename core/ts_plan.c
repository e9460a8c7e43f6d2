/*
 * ts_plan.c - every estimate for one run in one call.
 *
 * The run is resolved once into out->run, so the plan reports the
 * effective inputs (dp and gpus both filled, tokens defaulted, ...) and
 * every estimator sees the same resolved run: nothing is validated again
 * (the checkpoint reuses the memory estimate, the sweep re-derives only
 * the layout of each point).
 */
#include "ts_internal.h"

#include <string.h>

/* out->run resolved: the estimates; the sweep charged to b. */
static ts_status ts_plan_fill(ts_plan *out, ts_budget *b, ts_error *err)
{
    ts_params p;
    ts_status st;

    ts_model_count(&out->run.model, &p);
    /* The sweep keeps the resolved global batch where a dp allows it. */
    if ((st = ts_memory_eval(&out->run, &p, &out->memory, err)) != TS_OK ||
        (st = ts_compute_eval(&out->run, &p, &out->compute, err)) != TS_OK ||
        (st = ts_ckpt_eval(&out->run, &out->memory, &out->ckpt, err)) != TS_OK ||
        (st = ts_compute_outlook(&out->run, &out->memory, &out->ckpt, &out->compute, err)) !=
            TS_OK ||
        (st = ts_sweep_eval(&out->run, &p, out->run.global_batch, b, out->sweep, TS_SWEEP_MAX,
                            &out->sweep_len, err)) != TS_OK) {
        /* No half-filled plan: a caller that ignores the status sees zeros. */
        memset(out, 0, sizeof *out);
        return st;
    }
    return TS_OK;
}

ts_status ts_plan_estimate(const ts_run *r, ts_plan *out, ts_error *err)
{
    ts_budget b;
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    memset(out, 0, sizeof *out);

    out->run = *r;
    if ((st = ts_run_resolve(&out->run, err)) != TS_OK) {
        memset(out, 0, sizeof *out);
        return st;
    }
    ts_budget_init(&b, 0);
    return ts_plan_fill(out, &b, err);
}

ts_status ts_plan_resolved(const ts_run *r, ts_plan *out, ts_error *err)
{
    return ts_plan_resolved_within(r, NULL, out, err);
}

ts_status ts_plan_resolved_within(const ts_run *r, ts_budget *budget, ts_plan *out, ts_error *err)
{
    ts_budget own;
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    memset(out, 0, sizeof *out);
    if ((st = ts_run_resolved_ok(r, err)) != TS_OK)
        return st;
    if (budget == NULL) {
        ts_budget_init(&own, 0);
        budget = &own;
    }
    out->run = *r;
    return ts_plan_fill(out, budget, err);
}
