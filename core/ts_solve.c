/*
 * ts_solve.c - fit solvers (largest micro-batch, fewest GPUs) and the
 * data-parallel sweep.
 *
 * All three resolve the run once, then estimate the memory of modified
 * private copies: each trial re-derives its layout (ts_run_relayout: the
 * checks a changed dp, micro_batch or global_batch can fail, the same as a
 * whole resolution would make), so they never disagree with
 * ts_memory_estimate.  They lean on two properties of the memory model
 * (ts_memory.c):
 *   - per-GPU memory is non-decreasing in micro_batch, also when the
 *     global batch is fixed (in_flight * micro_batch = min(pp*b, G/dp));
 *   - with the global batch derived (ts_batch_default: p in flight
 *     whenever pp > 1) per-GPU memory is non-increasing in dp;
 *   - with one micro-batch per step it is non-increasing in dp too, and a
 *     lower bound for the same dp with any fixed global batch (in_flight
 *     can only grow), which is what the solver bisects on when the user
 *     fixed the batch.
 * Every trial and every loop iteration is charged to the request's work
 * budget (trainsize.h); their worst cases stay well inside the default
 * one, so it stops them only when a caller gives a smaller one.
 */
#include "ts_internal.h"

#include <math.h>
#include <string.h>

#define TS_SOLVE_MB_MAX    (INT64_C(1) << 20) /* = resolve's micro_batch limit */
#define TS_SOLVE_GPUS_MAX  (INT64_C(1) << 20) /* = resolve's gpus limit */
#define TS_SOLVE_GB_MAX    (INT64_C(1) << 40) /* = resolve's global_batch limit */
#define TS_SOLVE_SWEEP_TOP 1024
#define TS_SOLVE_GIB       1073741824.0 /* 2^30: fit reasons speak GiB, as the answers do */

/* ---- largest micro-batch ------------------------------------------ */

typedef struct ts_mb_ctx {
    ts_run base;        /* resolved, micro_batch to be set per trial */
    ts_params params;   /* of base.model */
    ts_memory mem;      /* memory of the last trial */
    ts_memory best_mem; /* memory of the largest micro-batch found to fit */
    int64_t best;       /* that micro-batch, 0 = none yet */
    ts_budget *b;
    ts_error *err;
} ts_mb_ctx;

/* Memory of t, a resolved run whose layout changed; *fits when it fits.
 * Errors (other than not fitting) propagate; mem is zeroed on them. */
static ts_status ts_solve_try(ts_run *t, const ts_params *p, ts_memory *mem, ts_error *err,
                              bool *fits)
{
    ts_status st = ts_run_relayout(t, err);

    if (st == TS_OK)
        st = ts_memory_eval(t, p, mem, err);
    else
        *mem = (ts_memory){ 0 };
    *fits = st == TS_OK && mem->fits;
    return st;
}

/* *fits for micro-batch b; the largest that fits is remembered with its
 * memory.  Out of budget: TS_OK, *fits false, c->b->exhausted. */
static ts_status ts_mb_try(ts_mb_ctx *c, int64_t b, bool *fits)
{
    ts_run t = c->base;
    ts_status st;

    *fits = false;
    t.micro_batch = b;
    if (!ts_budget_take(c->b, ts_memory_work(&t)))
        return TS_OK;
    st = ts_solve_try(&t, &c->params, &c->mem, c->err, fits);
    if (st == TS_OK && *fits && b > c->best) {
        c->best = b;
        c->best_mem = c->mem;
    }
    return st;
}

/* Largest b in (lo, hi] that fits, given lo fits. */
static ts_status ts_mb_bisect(ts_mb_ctx *c, int64_t lo, int64_t hi, int64_t *best)
{
    ts_status st;
    bool fits;

    if ((st = ts_mb_try(c, hi, &fits)) != TS_OK)
        return st;
    if (fits) {
        *best = hi;
        return TS_OK;
    }
    /* Invariant: lo fits, hi does not (or was not tried: out of budget). */
    while (hi - lo > 1 && !c->b->exhausted) {
        int64_t mid = lo + (hi - lo) / 2;

        if ((st = ts_mb_try(c, mid, &fits)) != TS_OK)
            return st;
        if (fits)
            lo = mid;
        else
            hi = mid;
    }
    *best = lo;
    return TS_OK;
}

/* Largest divisor of n (<= limit) that fits, divisors tried from the top.
 * n <= 2^40 has at most 6720 divisors, so this stays cheap; no table is
 * kept, the divisors come out of two passes over i <= sqrt(n) (2^20 at
 * most, each charged).  Out of budget: *best = 0 (none found yet). */
static ts_status ts_mb_divisors(ts_mb_ctx *c, int64_t n, int64_t limit, int64_t *best)
{
    ts_status st;
    bool fits;
    int64_t i, root = (int64_t)sqrt((double)n);

    /* floor(sqrt(n)) exactly: the double's root is off by one at most. */
    while (root > 1 && root > n / root)
        root--;
    while ((root + 1) <= n / (root + 1))
        root++;
    *best = 0;
    /* Large divisors n/i, descending as i grows. */
    for (i = 1; i <= root; i++) {
        int64_t d = n / i;

        if (!ts_budget_take(c->b, TS_COST_ITER))
            return TS_OK;
        if (n % i != 0 || d <= root || d > limit)
            continue;
        if ((st = ts_mb_try(c, d, &fits)) != TS_OK)
            return st;
        if (fits) {
            *best = d;
            return TS_OK;
        }
    }
    /* Small divisors i <= sqrt(n), descending. */
    for (i = root; i >= 1; i--) {
        if (!ts_budget_take(c->b, TS_COST_ITER))
            return TS_OK;
        if (n % i != 0 || i > limit)
            continue;
        if ((st = ts_mb_try(c, i, &fits)) != TS_OK)
            return st;
        if (fits) {
            *best = i;
            return TS_OK;
        }
    }
    *best = 0;
    return TS_OK;
}

ts_status ts_fit_max_micro_batch(const ts_run *r, int64_t limit, int64_t *mb, ts_memory *mem,
                                 ts_error *err)
{
    return ts_fit_max_micro_batch_within(r, limit, NULL, mb, mem, err);
}

ts_status ts_fit_max_micro_batch_within(const ts_run *r, int64_t limit, ts_budget *budget,
                                        int64_t *mb, ts_memory *mem, ts_error *err)
{
    ts_mb_ctx c;
    ts_budget own;
    ts_status st;
    bool fixed_gb, fits;
    int64_t best = 0;

    if (budget == NULL) {
        ts_budget_init(&own, 0);
        budget = &own;
    }
    if (r == NULL || mb == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *mb = 0;
    if (mem != NULL)
        *mem = (ts_memory){ 0 };
    if (limit < 1 || limit > TS_SOLVE_MB_MAX)
        return ts_error_set(err, TS_EINVAL, "max_micro_batch",
                            "max_micro_batch must be in [1, %lld], got %lld",
                            (long long)TS_SOLVE_MB_MAX, (long long)limit);

    memset(&c, 0, sizeof c);
    c.err = err;
    c.b = budget;
    c.base = *r;
    /* A global_batch > 0 on input is the user's: only micro-batches that
     * divide global_batch/dp keep it.  Otherwise it follows the trial. */
    fixed_gb = r->global_batch > 0;
    c.base.micro_batch = 1; /* the solved-for field: the input's is ignored */
    if ((st = ts_run_resolve(&c.base, err)) != TS_OK)
        return st;
    ts_model_count(&c.base.model, &c.params);
    if (!fixed_gb)
        c.base.global_batch = 0;

    if ((st = ts_mb_try(&c, 1, &fits)) != TS_OK)
        return st;
    if (budget->exhausted)
        return ts_error_set(err, TS_EINVAL, "max_micro_batch",
                            "the work budget (%llu units) ran out before micro_batch 1 was tried",
                            (unsigned long long)budget->limit);
    if (!fits) {
        if (mem != NULL)
            *mem = c.mem;
        return ts_error_set(err, TS_ENOFIT, "micro_batch",
                            "micro_batch 1 needs %.1f GiB per GPU, the GPU has %.1f GiB "
                            "(%.4g and %.4g bytes)",
                            c.mem.total.value / TS_SOLVE_GIB, c.mem.hbm_bytes / TS_SOLVE_GIB,
                            c.mem.total.value, c.mem.hbm_bytes);
    }
    if (fixed_gb)
        st = ts_mb_divisors(&c, c.base.global_batch / c.base.dp, limit, &best);
    else if (limit > 1)
        st = ts_mb_bisect(&c, 1, limit, &best);
    else
        best = 1;
    if (st != TS_OK)
        return st;
    /* Out of budget: the largest found to fit so far (1 at least). */
    if (best < 1 || budget->exhausted)
        best = c.best;

    /* The winner's memory, not the last probe's (kept when it was tried:
     * the same run estimated again would give the same bytes). */
    *mb = best;
    if (mem != NULL)
        *mem = c.best_mem;
    return TS_OK;
}

/* ---- fewest GPUs --------------------------------------------------- */

typedef struct ts_dp_ctx {
    ts_run base;      /* resolved; dp, gpus, global_batch set per trial */
    ts_params params; /* of base.model */
    int64_t user_gb;  /* caller's global_batch, 0 = derived */
    ts_memory mem;
    ts_memory hi_mem; /* ts_fit_min_gpus: the smallest dp found to fit's */
    int64_t ep, mp;   /* ts_fit_min_gpus: ep, tp * pp * cp of base */
    int64_t kmax;     /* ts_fit_min_gpus: dp = k * ep for k = 1..kmax */
    ts_budget *b;
    ts_error *err;
} ts_dp_ctx;

/* The user's global batch where dp allows it, else derived
 * (ts_batch_default).  The sweep and the min-GPU solver both use this rule so
 * a fixed global batch does not blank out dp = 1, 2, 4, ... */
static int64_t ts_dp_global_batch(int64_t user_gb, int64_t dp, int64_t mb)
{
    return user_gb > 0 && user_gb % (dp * mb) == 0 ? user_gb : 0;
}

/* *fits for dp; *t is the trial's run (resolved when TS_OK).  bound: the
 * run whose memory is non-increasing in dp and no more than the real
 * batch's at that dp: the derived batch itself when the user gave none,
 * else one micro-batch per step (the fewest in flight; a derived batch
 * holds p of them and would skip a dp the user's small batch fits at).
 * Out of budget: TS_OK, *fits false, c->b->exhausted. */
static ts_status ts_dp_try(ts_dp_ctx *c, int64_t dp, bool bound, ts_run *t, bool *fits)
{
    *t = c->base;
    t->dp = dp;
    t->gpus = 0;
    if (bound)
        t->global_batch = c->user_gb > 0 ? dp * t->micro_batch : 0;
    else
        t->global_batch = ts_dp_global_batch(c->user_gb, dp, t->micro_batch);
    *fits = false;
    if (!ts_budget_take(c->b, ts_memory_work(t)))
        return TS_OK;
    return ts_solve_try(t, &c->params, &c->mem, c->err, fits);
}

/* Equivalent to trying dp = ep, 2ep, 3ep, ... in order (ep | dp), but the
 * prefix that cannot fit is skipped by bisection on a lower bound
 * (ts_dp_try; see the top of this file). */
ts_status ts_fit_min_gpus(const ts_run *r, int64_t max_gpus, int64_t *dp, int64_t *gpus,
                          ts_memory *mem, ts_error *err)
{
    return ts_fit_min_gpus_within(r, max_gpus, NULL, dp, gpus, mem, err);
}

/* The solver's context for r: the run validated but for the solved-for
 * layout, its counts, and the largest k (dp = k * ep) max_gpus allows. */
static ts_status ts_dp_setup(const ts_run *r, int64_t max_gpus, ts_dp_ctx *c, ts_error *err)
{
    ts_status st;

    if (max_gpus < 1 || max_gpus > TS_SOLVE_GPUS_MAX)
        return ts_error_set(err, TS_EINVAL, "max_gpus", "max_gpus must be in [1, %lld], got %lld",
                            (long long)TS_SOLVE_GPUS_MAX, (long long)max_gpus);

    /* The batch is applied per trial, so resolve below never sees it. */
    if (r->global_batch < 0 || r->global_batch > TS_SOLVE_GB_MAX)
        return ts_error_set(err, TS_EINVAL, "global_batch",
                            "global_batch must be in [0, %lld], got %lld",
                            (long long)TS_SOLVE_GB_MAX, (long long)r->global_batch);

    c->user_gb = r->global_batch;
    c->base = *r;
    /* Validate everything but the solved-for layout at the smallest valid
     * dp (an out-of-range ep is left for resolve to name). */
    c->base.gpus = 0;
    c->base.dp = r->ep >= 1 && r->ep <= TS_SOLVE_GPUS_MAX ? r->ep : 1;
    c->base.global_batch = 0;
    if ((st = ts_run_resolve(&c->base, err)) != TS_OK)
        return st;
    ts_model_count(&c->base.model, &c->params);
    c->ep = c->base.ep;
    c->mp = c->base.tp * c->base.pp * c->base.cp;
    c->kmax = max_gpus / (c->mp * c->ep);
    if (c->kmax < 1)
        return ts_error_set(err, TS_ENOFIT, "gpus",
                            "tp * pp * cp * ep = %lld exceeds max_gpus %lld",
                            (long long)(c->mp * c->ep), (long long)max_gpus);
    return TS_OK;
}

/* The smallest k whose bound fits into *lo and *hi (equal unless the
 * budget ran out; hi's memory in c->hi_mem): kmax fits, lo - 1 not.  An
 * error when not even kmax fits (mem: its memory). */
static ts_status ts_dp_bisect(ts_dp_ctx *c, ts_memory *mem, int64_t *lo, int64_t *hi)
{
    int64_t ep = c->ep, mp = c->mp, kmax = c->kmax;
    ts_run t;
    ts_status st;
    bool fits;

    if ((st = ts_dp_try(c, kmax * ep, true, &t, &fits)) != TS_OK)
        return st;
    if (c->b->exhausted)
        return ts_error_set(c->err, TS_EINVAL, "max_gpus",
                            "the work budget (%llu units) ran out before %lld GPUs were tried",
                            (unsigned long long)c->b->limit, (long long)(kmax * ep * mp));
    if (!fits) {
        if (mem != NULL)
            *mem = c->mem;
        return ts_error_set(c->err, TS_ENOFIT, "gpus",
                            "does not fit on %lld GPUs: %.1f GiB per GPU, the GPU has %.1f GiB "
                            "(%.4g and %.4g bytes)",
                            (long long)(kmax * ep * mp), c->mem.total.value / TS_SOLVE_GIB,
                            c->mem.hbm_bytes / TS_SOLVE_GIB, c->mem.total.value, c->mem.hbm_bytes);
    }
    *lo = 1;
    *hi = kmax;
    c->hi_mem = c->mem; /* hi's: the answer if the budget runs out */
    while (*lo < *hi) {
        int64_t mid = *lo + (*hi - *lo) / 2;

        if ((st = ts_dp_try(c, mid * ep, true, &t, &fits)) != TS_OK)
            return st;
        if (c->b->exhausted)
            break;
        if (fits) {
            *hi = mid;
            c->hi_mem = c->mem;
        } else {
            *lo = mid + 1;
        }
    }
    return TS_OK;
}

/* From lo the first k that fits with its real global batch (with none
 * given the bound is the real batch: this ends at lo): *dp and *gpus set
 * when one does, left 0 when none does or the budget ran out. */
static ts_status ts_dp_scan(ts_dp_ctx *c, int64_t lo, int64_t *dp, int64_t *gpus, ts_memory *mem)
{
    int64_t ep = c->ep, k;
    ts_run t;
    ts_status st;
    bool fits;

    for (k = lo; k <= c->kmax && ts_budget_take(c->b, TS_COST_ITER); k++) {
        /* A global batch the user fixed is kept: only a dp whose
         * dp * micro_batch divides it is an answer (one that silently
         * re-derived the batch would be refused by the very request). */
        if (c->user_gb > 0 && c->user_gb % (k * ep * c->base.micro_batch) != 0)
            continue;
        if ((st = ts_dp_try(c, k * ep, false, &t, &fits)) != TS_OK)
            return st;
        if (fits) {
            *dp = k * ep;
            *gpus = k * ep * c->mp;
            if (mem != NULL)
                *mem = c->mem;
            return TS_OK;
        }
    }
    return TS_OK;
}

/* No k from lo fitted, or the budget ran out first (hi: the fewest found
 * to fit by the bound). */
static ts_status ts_dp_none(ts_dp_ctx *c, int64_t hi, int64_t *dp, int64_t *gpus, ts_memory *mem)
{
    int64_t ep = c->ep, kmax = c->kmax;

    if (c->b->exhausted && c->user_gb == 0) {
        /* A derived batch is the answer's own: hi is the fewest GPUs
         * found to fit so far. */
        *dp = hi * ep;
        *gpus = hi * ep * c->mp;
        if (mem != NULL)
            *mem = c->hi_mem;
        return TS_OK;
    }
    if (c->b->exhausted) /* a fixed batch: no answer found yet */
        return ts_error_set(c->err, TS_EINVAL, "max_gpus",
                            "the work budget (%llu units) ran out before a data-parallel degree "
                            "up to %lld that divides global_batch %lld was found to fit",
                            (unsigned long long)c->b->limit, (long long)(kmax * ep),
                            (long long)c->user_gb);
    if (mem != NULL)
        *mem = c->mem;
    if (c->user_gb > 0)
        return ts_error_set(c->err, TS_ENOFIT, "global_batch",
                            "no data-parallel degree up to %lld that divides global_batch %lld "
                            "(with micro_batch %lld) fits",
                            (long long)(kmax * ep), (long long)c->user_gb,
                            (long long)c->base.micro_batch);
    /* Unreachable while the monotonicity above holds; fail closed. */
    return ts_error_set(c->err, TS_ENOFIT, "gpus", "no data-parallel degree up to %lld fits",
                        (long long)(kmax * ep));
}

ts_status ts_fit_min_gpus_within(const ts_run *r, int64_t max_gpus, ts_budget *budget, int64_t *dp,
                                 int64_t *gpus, ts_memory *mem, ts_error *err)
{
    ts_dp_ctx c;
    ts_budget own;
    ts_status st;
    int64_t lo = 0, hi = 0;

    if (budget == NULL) {
        ts_budget_init(&own, 0);
        budget = &own;
    }
    if (r == NULL || dp == NULL || gpus == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *dp = *gpus = 0;
    if (mem != NULL)
        *mem = (ts_memory){ 0 };
    memset(&c, 0, sizeof c);
    c.err = err;
    c.b = budget;
    if ((st = ts_dp_setup(r, max_gpus, &c, err)) != TS_OK ||
        (st = ts_dp_bisect(&c, mem, &lo, &hi)) != TS_OK ||
        (st = ts_dp_scan(&c, lo, dp, gpus, mem)) != TS_OK)
        return st;
    if (*dp > 0)
        return TS_OK;
    return ts_dp_none(&c, hi, dp, gpus, mem);
}

/* ---- data-parallel sweep ------------------------------------------- */

ts_status ts_sweep_eval(const ts_run *r, const ts_params *p, int64_t user_gb, ts_budget *b,
                        ts_sweep_point *pts, size_t cap, size_t *n, ts_error *err)
{
    ts_dp_ctx c;
    ts_status st;
    int64_t dps[TS_SWEEP_MAX + 1];
    int64_t top, mp, d;
    size_t count = 0, i;

    *n = 0;
    memset(&c, 0, sizeof c);
    c.err = err;
    c.base = *r;
    c.params = *p;
    c.user_gb = user_gb;
    c.b = b;
    mp = c.base.tp * c.base.pp * c.base.cp;

    /* dp = 1, 2, 4, ... up to max(1024, dp), with the run's dp merged in
     * ascending order.  Points where ep does not divide dp, or that would
     * exceed the GPU limit, cannot be configured and are left out; the
     * run's own dp is always valid (it just resolved). */
    top = c.base.dp > TS_SOLVE_SWEEP_TOP ? c.base.dp : TS_SOLVE_SWEEP_TOP;
    for (d = 1; d <= top && ts_budget_take(b, TS_COST_ITER); d *= 2) {
        if (c.base.dp < d && (count == 0 || dps[count - 1] < c.base.dp))
            dps[count++] = c.base.dp;
        if (d % c.base.ep == 0 && d * mp <= TS_SOLVE_GPUS_MAX && d != c.base.dp)
            dps[count++] = d;
    }
    if (count == 0 || dps[count - 1] < c.base.dp)
        dps[count++] = c.base.dp;
    if (count > cap || count > TS_SWEEP_MAX)
        return ts_error_set(err, TS_EINVAL, "", "sweep needs %zu points, room for %zu", count,
                            cap < TS_SWEEP_MAX ? cap : (size_t)TS_SWEEP_MAX);

    for (i = 0; i < count; i++) {
        ts_sweep_point *pt = &pts[i];
        ts_ckpt ck;
        ts_compute cmp;
        ts_run t;
        bool fits;

        /* The checkpoint of the same point, from its memory. */
        if ((st = ts_dp_try(&c, dps[i], false, &t, &fits)) != TS_OK)
            return st;
        if (b->exhausted)
            break; /* the points so far */
        if ((st = ts_ckpt_eval(&t, &c.mem, &ck, err)) != TS_OK)
            return st;

        pt->dp = dps[i];
        pt->gpus = dps[i] * mp;
        pt->global_batch = t.global_batch;
        pt->weights = c.mem.weights.value;
        pt->grads = c.mem.grads.value;
        pt->master = c.mem.master.value;
        pt->optimizer = c.mem.optimizer.value;
        pt->activations = c.mem.activations.value;
        pt->buffers = c.mem.buffers.value;
        pt->overhead = c.mem.overhead.value;
        pt->total = c.mem.total.value;
        pt->ckpt_shard_bytes = ck.shard_bytes_per_gpu.value;
        pt->fits = c.mem.fits;
        /* The time at this point, for the dashboard's days-vs-GPUs curve.
         * A point where the step model has no finite answer keeps no time
         * (timed false); that is not an error of the plan. */
        if (!ts_budget_take(b, TS_COST_STEP))
            break;
        pt->timed = ts_compute_eval(&t, &c.params, &cmp, NULL) == TS_OK;
        pt->step_seconds = pt->timed ? cmp.step_time.value : 0;
        pt->wall_seconds = pt->timed ? cmp.wall_seconds.value : 0;
        pt->mfu = pt->timed ? cmp.mfu : 0;
    }
    *n = i;
    return TS_OK;
}

ts_status ts_sweep_dp(const ts_run *r, ts_sweep_point *pts, size_t cap, size_t *n, ts_error *err)
{
    ts_run base;
    ts_params p;
    ts_budget b;
    ts_status st;

    if (r == NULL || pts == NULL || n == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *n = 0;
    base = *r;
    if ((st = ts_run_resolve(&base, err)) != TS_OK)
        return st;
    ts_model_count(&base.model, &p);
    ts_budget_init(&b, 0); /* 24 points: far inside it */
    /* The caller's global batch, 0 = derived per point. */
    return ts_sweep_eval(&base, &p, r->global_batch, &b, pts, cap, n, err);
}
