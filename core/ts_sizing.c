/*
 * ts_sizing.c - from a budget of GPU time to a plan.
 *
 * The budget buys C = gpu_hours * 3600 * peak * MFU * useful FLOPs: the
 * GPUs' dense peak at the MFU of the layout the plan uses, times the
 * fraction of the wall clock that survives failures (ts_goodput.c).  C
 * sets the model (the law's compute-optimal N, or N with D = ratio * N
 * spending C, or the run's own model) and the tokens D = C / (6 N).
 * MFU and goodput depend on the model's shape and layout, which depend
 * on C: the loop below plans a shape for the current C, searches its
 * fastest layout on the run's GPUs (ts_search.c), evaluates that run
 * (step time, checkpoint, goodput) and starts again from the C it gets,
 * until the shape repeats or is within 2 % of the size its FLOPs call
 * for (shapes are discrete: a fixed point), or TS_SIZING_ITER_MAX
 * searches; when the shapes keep alternating, the
 * evaluated one with the lowest predicted loss for its own FLOPs is kept.
 * Whichever run is returned has its tokens set from its own MFU and
 * goodput, so a plan of it (/v1/plan) spends the budget.  Every search charges the request's work
 * budget.  See docs/formulas.md, "Compute-optimal sizing".
 */
#include "ts_internal.h"

#include <math.h>
#include <string.h>

/* Starting guesses: a typical large-run MFU and goodput (the loop moves
 * off them at once; a given mfu replaces the first). */
#define TS_SIZING_MFU0       0.4
#define TS_SIZING_USEFUL0    0.95
#define TS_SIZING_TOKENS_MAX 1e20 /* the registry's tokens limit */
/* A shape this close (in log) to the size called for is taken: the
 * shapes themselves are 2 % apart at worst (ts_scaling_shape). */
#define TS_SIZING_TOL 0.02

static bool ts_same_shape(const ts_model *a, const ts_model *b)
{
    return a->layers == b->layers && a->hidden == b->hidden && a->heads == b->heads &&
           a->kv_heads == b->kv_heads && a->ffn == b->ffn;
}

/* The layout of search result l on run r (unresolved). */
static void ts_sizing_apply(ts_run *r, const ts_search_result *l)
{
    r->tp = l->tp;
    r->pp = l->pp;
    r->cp = l->cp;
    r->ep = l->ep;
    r->dp = l->dp;
    r->gpus = l->gpus;
    r->micro_batch = l->micro_batch;
    r->vpp = l->vpp;
    r->pp_schedule = l->pp_schedule;
    r->first_stage_layers = l->first_stage_layers;
    r->last_stage_layers = l->last_stage_layers;
    r->zero = l->zero;
    r->framework = l->framework;
    r->recompute = l->recompute;
    r->sequence_parallel = l->sequence_parallel;
    r->tp_comm_overlap = l->tp_comm_overlap;
    ts_run_fit_recompute_layers(r);
}

/* Resolve r and evaluate what the budget depends on: the MFU the plan
 * will use and its useful fraction under failures. */
static ts_status ts_sizing_eval(ts_run *r, double *mfu, double *useful, ts_params *p, ts_error *err)
{
    ts_memory mem;
    ts_compute c;
    ts_ckpt k;
    ts_goodput g;
    ts_status st;

    if ((st = ts_run_resolve(r, err)) != TS_OK)
        return st;
    ts_model_count(&r->model, p);
    if ((st = ts_compute_eval(r, p, &c, err)) != TS_OK ||
        (st = ts_memory_eval(r, p, &mem, err)) != TS_OK ||
        (st = ts_ckpt_eval(r, &mem, &k, err)) != TS_OK ||
        (st = ts_goodput_eval(r, &k, c.wall_seconds.value, &g, err)) != TS_OK)
        return st;
    *mfu = c.mfu;
    *useful = g.useful_fraction.value;
    return TS_OK;
}

/* The size the budget calls for at mfu and useful (not TS_SIZE_MODEL). */
static double ts_sizing_target(const ts_sizing_cfg *cfg, const ts_law *law, double flops)
{
    double n, d;

    if (cfg->mode == TS_SIZE_RATIO)
        return sqrt(flops / (6.0 * cfg->tokens_per_param));
    ts_law_optimum(law, flops, &n, &d);
    return n;
}

static ts_status ts_sizing_check(const ts_run *base, const ts_sizing_cfg *cfg, ts_error *err)
{
    const char *f = cfg->field != NULL ? cfg->field : "";

    if (!(cfg->gpu_hours > 0) || !isfinite(cfg->gpu_hours))
        return ts_error_set(err, TS_EINVAL, f, "the budget must be a positive number of GPU-hours");
    if ((unsigned)cfg->mode >= TS_SIZE_MODE_COUNT)
        return ts_error_set(err, TS_EINVAL, f, "unknown sizing mode");
    if (ts_law_get(cfg->law) == NULL)
        return ts_error_set(err, TS_EINVAL, "scaling_law", "unknown scaling law");
    if (cfg->mode == TS_SIZE_RATIO &&
        (!(cfg->tokens_per_param > 0) || !isfinite(cfg->tokens_per_param)))
        return ts_error_set(err, TS_EINVAL, "tokens_per_param",
                            "tokens_per_param must be a positive number");
    if (!(ts_gpu_peak(&base->gpu, base->compute_precision) > 0))
        return ts_error_set(err, TS_EINCOMPAT, "compute_precision", "%s has no %s peak",
                            base->gpu.id, ts_precision_name(base->compute_precision));
    if (base->gpus <= 0)
        return ts_error_set(err, TS_EINVAL, "gpus", "a budget plan needs the number of GPUs");
    return TS_OK;
}

/* What the sizing loop carries from one search to the next. */
typedef struct ts_sizing_state {
    const ts_law *law;
    double peak, mfu, useful; /* the GPUs' peak; the last run's MFU and useful fraction */
    double n;                 /* the size called for (TS_SIZE_MODEL: the model's own) */
    ts_params p;              /* counts of the run evaluated last */
    ts_model prev;            /* its shape */
    bool have;                /* a run was evaluated */
    double best_loss;         /* the lowest predicted loss so far (HUGE_VAL: none) */
    ts_run best_run;          /* and what gave it */
    ts_search_result best_layout;
    ts_params best_p;
    double best_mfu, best_useful;
} ts_sizing_state;

/* The shape to search next into *model (TS_SIZE_MODEL: the run's own);
 * *done when the shape evaluated last is already the answer. */
static ts_status ts_sizing_shape(const ts_run *base, const ts_sizing_cfg *cfg, ts_sizing_state *s,
                                 ts_model *model, bool *done, ts_error *err)
{
    double flops = cfg->gpu_hours * 3600.0 * s->peak * s->mfu * s->useful;
    ts_status st;

    *done = false;
    if (cfg->mode == TS_SIZE_MODEL) {
        *model = base->model;
        return TS_OK;
    }
    s->n = ts_sizing_target(cfg, s->law, flops);
    /* The shape evaluated last is within the shapes' own tolerance of the
     * size its FLOPs call for: a fixed point. */
    if (s->have && fabs(log(s->p.total / s->n)) <= TS_SIZING_TOL) {
        *done = true;
        return TS_OK;
    }
    if ((st = ts_scaling_shape(s->n, cfg->field, model, err)) != TS_OK)
        return st;
    if (s->have && ts_same_shape(model, &s->prev))
        *done = true;
    return TS_OK;
}

/* The fastest layout of model on the run's GPUs, evaluated: into out
 * (layout, run) and s (MFU, useful fraction, counts). */
static ts_status ts_sizing_step(const ts_run *base, const ts_sizing_cfg *cfg, const ts_model *model,
                                ts_budget *work, ts_search_out *scratch, ts_sizing_out *out,
                                ts_sizing_state *s, ts_error *err)
{
    ts_run run = *base;
    ts_status st;

    if (cfg->mode != TS_SIZE_MODEL) {
        run.model = *model;
        run.preset[0] = '\0';
    }
    /* Tokens change nothing the search looks at; any valid count. */
    run.tokens = 1e12;
    st = ts_search_run_within(&run, &cfg->search, work, scratch, err);
    out->iterations++;
    if (st == TS_ENOFIT)
        return ts_error_set(err, TS_ENOFIT, "gpus",
                            "no layout of a %.3g-parameter model fits on %lld x %s", s->n,
                            (long long)base->gpus, base->gpu.id);
    if (st != TS_OK)
        return st;
    out->truncated = out->truncated || scratch->truncated;
    out->layout = scratch->results[0];
    ts_sizing_apply(&run, &out->layout);
    if ((st = ts_sizing_eval(&run, &s->mfu, &s->useful, &s->p, err)) != TS_OK)
        return st;
    out->run = run;
    s->prev = *model;
    s->have = true;
    return TS_OK;
}

/* The loss the shape evaluated last reaches on the tokens its own FLOPs
 * buy: when the shapes keep alternating (a layer count that pipelines
 * well raises the MFU, which calls for a larger model that pipelines
 * worse), the one that trains the best model is kept. */
static void ts_sizing_keep(const ts_sizing_cfg *cfg, const ts_sizing_out *out, ts_sizing_state *s)
{
    double flops = cfg->gpu_hours * 3600.0 * s->peak * s->mfu * s->useful;
    double loss = ts_law_loss(s->law, s->p.total, flops / (6.0 * s->p.total));

    if (loss < s->best_loss) {
        s->best_loss = loss;
        s->best_run = out->run;
        s->best_layout = out->layout;
        s->best_p = s->p;
        s->best_mfu = s->mfu;
        s->best_useful = s->useful;
    }
}

/* The run returned (the last one evaluated, or the best when the loop
 * did not converge): its tokens from its own MFU and goodput. */
static ts_status ts_sizing_finish(const ts_sizing_cfg *cfg, ts_sizing_state *s, ts_sizing_out *out,
                                  ts_error *err)
{
    const ts_params *p = &s->p;
    double flops;

    if (!out->converged && s->best_loss < HUGE_VAL) {
        out->run = s->best_run;
        out->layout = s->best_layout;
        s->p = s->best_p;
        s->mfu = s->best_mfu;
        s->useful = s->best_useful;
    }
    out->mfu = s->mfu;
    out->useful_fraction = s->useful;
    out->flops = flops = cfg->gpu_hours * 3600.0 * s->peak * s->mfu * s->useful;
    out->params = p->active;
    out->tokens = flops / (6.0 * p->active);
    if (!(out->tokens >= 1) || !isfinite(out->tokens) ||
        out->tokens < (double)out->run.global_batch * (double)out->run.seq)
        return ts_error_set(err, TS_EINVAL, cfg->field,
                            "this budget buys %.3g tokens of a %.3g-parameter model: less than "
                            "one optimizer step (%lld sequences of %lld)",
                            out->tokens, p->active, (long long)out->run.global_batch,
                            (long long)out->run.seq);
    if (out->tokens > TS_SIZING_TOKENS_MAX)
        return ts_error_set(err, TS_EINVAL, cfg->field,
                            "this budget buys %.3g tokens of a %.3g-parameter model, more than "
                            "the 1e20 tokens a plan takes",
                            out->tokens, p->active);
    out->run.tokens = out->tokens;
    out->tokens_per_param = out->tokens / p->active;
    ts_law_optimum(s->law, flops, &out->optimal_params, &out->optimal_tokens);
    out->optimal_loss = ts_law_loss(s->law, out->optimal_params, out->optimal_tokens);
    /* The law was fitted on dense models: no loss for a mixture of experts. */
    out->loss = p->expert > 0 ? 0 : ts_law_loss(s->law, p->total, out->tokens);
    return ts_run_resolve(&out->run, err);
}

ts_status ts_sizing_run(const ts_run *base, const ts_sizing_cfg *cfg, ts_budget *work,
                        ts_search_out *scratch, ts_sizing_out *out, ts_error *err)
{
    ts_budget own;
    ts_sizing_state s;
    ts_model model;
    bool done;
    ts_status st;
    int it;

    if (base == NULL || cfg == NULL || scratch == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    memset(out, 0, sizeof *out);
    if ((st = ts_sizing_check(base, cfg, err)) != TS_OK)
        return st;
    if (work == NULL) {
        ts_budget_init(&own, 0);
        work = &own;
    }
    memset(&s, 0, sizeof s);
    s.law = ts_law_get(cfg->law);
    s.peak = ts_gpu_peak(&base->gpu, base->compute_precision);
    s.mfu = base->mfu > 0 ? base->mfu : TS_SIZING_MFU0;
    s.useful = TS_SIZING_USEFUL0;
    s.best_loss = HUGE_VAL;
    out->gpu_hours = cfg->gpu_hours;
    out->peak_flops = s.peak;
    if (cfg->mode == TS_SIZE_MODEL) {
        if ((st = ts_model_params(&base->model, &s.p, err)) != TS_OK)
            return st;
        s.n = s.p.active;
    }

    for (it = 0; it < TS_SIZING_ITER_MAX; it++) {
        if ((st = ts_sizing_shape(base, cfg, &s, &model, &done, err)) != TS_OK)
            return st;
        if (done) {
            out->converged = true;
            break;
        }
        if ((st = ts_sizing_step(base, cfg, &model, work, scratch, out, &s, err)) != TS_OK)
            return st;
        if (cfg->mode == TS_SIZE_MODEL) {
            out->converged = true;
            break;
        }
        ts_sizing_keep(cfg, out, &s);
        if (work->exhausted)
            break;
    }
    return ts_sizing_finish(cfg, &s, out, err);
}
