/*
 * ts_search_rank.c - one candidate of the layout search (ts_search.c): its
 * memory with the margin, its step time, cost and run length under
 * failures against max_days / max_cost, its place in the ranked top-k,
 * and why each ranked layout beats the next.
 */
#include "ts_internal.h"
#include "ts_search_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Seconds (GPU-seconds) per token: per step when every layout has the
 * same batch, comparable across batches when they differ. */
static double ts_search_key(const ts_search_ctx *c, const ts_search_result *r)
{
    double tok = (double)r->global_batch * (double)c->base->seq;

    return (c->cfg->objective == TS_SEARCH_COST ? r->gpu_seconds : r->step_time) / tok;
}

static void ts_search_insert(ts_search_ctx *c, const ts_search_result *r)
{
    ts_search_out *o = c->out;
    double k = ts_search_key(c, r);
    size_t pos = o->n;

    /* Equal keys keep enumeration order (smaller tp/pp first). */
    while (pos > 0 && ts_search_key(c, &o->results[pos - 1]) > k)
        pos--;
    if (pos >= c->limit)
        return;
    if (o->n < c->limit)
        o->n++;
    memmove(&o->results[pos + 1], &o->results[pos], (o->n - 1 - pos) * sizeof o->results[0]);
    o->results[pos] = *r;
}

/* The worst key currently kept, or +inf while the list is not full. */
static double ts_search_cutoff(const ts_search_ctx *c)
{
    const ts_search_out *o = c->out;

    return o->n < c->limit ? INFINITY : ts_search_key(c, &o->results[o->n - 1]);
}

/* Memory of one candidate; true when its layout is valid and it fits
 * with the margin.  Only the layout differs from the resolved base: it
 * alone is checked again (ts_run_relayout), the batch derived again when
 * the run gave none, the gradient precision set by the framework when it
 * follows it. */
bool ts_search_fits(ts_search_ctx *c, ts_run *cand, ts_memory *mem)
{
    ts_error e;

    if (!ts_budget_take(c->b, ts_memory_work(cand)))
        return false;
    c->out->tried++;
    if (c->cfg->grad_follows_framework)
        cand->grad_precision =
            ts_framework_grad_precision(cand->framework, cand->precision, cand->master_weights);
    if (ts_run_relayout(cand, &e) != TS_OK)
        return false;
    if (ts_memory_eval(cand, &c->params, mem, &e) != TS_OK)
        return false;
    if (mem->fits && !(mem->total.value <= (1.0 - c->cfg->margin) * mem->hbm_bytes)) {
        c->out->tight++;
        return false;
    }
    return mem->fits;
}

/* The candidate's useful fraction under failures (ts_goodput.c) with its
 * own checkpoint write (its shard depends on the layout); 0 when it has
 * none, which the gate counts as never finishing. */
static double ts_search_useful(const ts_run *cand, const ts_memory *mem)
{
    ts_ckpt k;
    ts_error e;

    return ts_ckpt_eval(cand, mem, &k, &e) == TS_OK ? ts_goodput_useful(cand, &k) : 0;
}

void ts_search_cost(ts_search_ctx *c, const ts_run *cand, const ts_memory *mem)
{
    ts_step st;
    ts_search_result r;
    double gsec, wall, useful, gwall, gcost;

    if (!ts_budget_take(c->b, TS_COST_STEP) || ts_step_eval(cand, &c->params, &st) != TS_OK)
        return;
    c->out->fitting++;
    gsec = st.step_time.value * (double)cand->gpus;
    /* The whole run: tokens / (global_batch * seq) steps, as the compute
     * estimate counts them with the predicted MFU. */
    wall = cand->tokens / ((double)cand->global_batch * (double)cand->seq) * st.step_time.value;
    /* The gate holds the run as it will go: with checkpoint stalls,
     * restarts and redone work (what the row's plan says in
     * compute.goodput).  One that never ends is over any budget. */
    useful = ts_search_useful(cand, mem);
    gwall = useful > 0 ? wall / useful : INFINITY;
    gcost = gwall * (double)cand->gpus / 3600.0 * cand->gpu_hour_usd;
    if (!isfinite(gwall) || !isfinite(gcost) ||
        (c->cfg->max_days > 0 && gwall > c->cfg->max_days * 86400.0) ||
        (c->cfg->max_cost > 0 && gcost > c->cfg->max_cost)) {
        c->out->over_budget++;
        return;
    }
    {
        ts_search_result probe;

        probe.step_time = st.step_time.value;
        probe.gpu_seconds = gsec;
        probe.global_batch = cand->global_batch;
        if (ts_search_key(c, &probe) >= ts_search_cutoff(c))
            return;
    }
    memset(&r, 0, sizeof r);
    r.tp = cand->tp;
    r.pp = cand->pp;
    r.cp = cand->cp;
    r.dp = cand->dp;
    r.ep = cand->ep;
    r.micro_batch = cand->micro_batch;
    r.vpp = cand->vpp;
    r.gpus = cand->gpus;
    r.first_stage_layers = cand->first_stage_layers;
    r.last_stage_layers = cand->last_stage_layers;
    r.global_batch = cand->global_batch;
    r.grad_precision = cand->grad_precision;
    r.zero = cand->zero;
    r.framework = cand->framework;
    r.recompute = cand->recompute;
    r.pp_schedule = cand->pp_schedule;
    r.sequence_parallel = cand->sequence_parallel;
    r.tp_comm_overlap = cand->tp_comm_overlap;
    r.step_time = st.step_time.value;
    r.predicted_mfu = st.predicted_mfu;
    r.tokens_per_gpu_second = st.tokens_per_gpu_second;
    r.gpu_seconds = gsec;
    r.cost_usd = gsec / 3600.0 * cand->gpu_hour_usd;
    r.wall_seconds = wall;
    r.gpu_hours = wall * (double)cand->gpus / 3600.0;
    r.cost_total_usd = r.gpu_hours * cand->gpu_hour_usd;
    r.useful_fraction = useful;
    r.goodput_wall_seconds = gwall;
    r.goodput_cost_usd = gcost;
    r.memory_total = mem->total.value;
    r.headroom = mem->headroom_bytes;
    r.hbm = mem->hbm_bytes;
    r.fits = mem->fits;
    r.compute = st.compute;
    r.recompute_s = st.recompute;
    r.tp_comm = st.tp_comm;
    r.pp_bubble = st.pp_bubble;
    r.dp_comm = st.dp_comm;
    r.cp_comm = st.cp_comm;
    r.ep_comm = st.ep_comm;
    r.optimizer = st.optimizer;
    r.offload = st.offload;
    ts_search_insert(c, &r);
}

/* The last result's "why": the words match the counts ("only" when
 * nothing else was ranked, the count otherwise: limit cut the list). */
void ts_search_why_last(ts_search_out *out, size_t i)
{
    ts_search_result *a = &out->results[i];
    uint64_t ranked = out->fitting - out->over_budget;

    if (i == 0 && ranked <= 1)
        snprintf(a->why, sizeof a->why, "the only layout that fits");
    else if (i == 0)
        snprintf(a->why, sizeof a->why, "the best of %llu that fit", (unsigned long long)ranked);
    else
        snprintf(a->why, sizeof a->why, "last of the %zu ranked results (of %llu that fit)", out->n,
                 (unsigned long long)ranked);
}

/* Why a (rank i + 1) beats b, the next: the term that differs most, b's
 * terms at a's batch (layouts without a given batch can differ in it):
 * seconds per a's step. */
void ts_search_why_pair(const ts_search_ctx *c, ts_search_result *a, const ts_search_result *b,
                        size_t i)
{
    static const char *const names[] = {
        "compute",           "recompute",          "tensor-parallel comm",
        "pipeline bubble",   "data-parallel comm", "context-parallel comm",
        "expert all-to-all", "optimizer step",     "offload"
    };
    const char *better = c->cfg->objective == TS_SEARCH_COST ? "cheaper" : "faster";
    double sc = (double)a->global_batch / (double)b->global_batch;
    double da[] = { sc * b->compute - a->compute, sc * b->recompute_s - a->recompute_s,
                    sc * b->tp_comm - a->tp_comm, sc * b->pp_bubble - a->pp_bubble,
                    sc * b->dp_comm - a->dp_comm, sc * b->cp_comm - a->cp_comm,
                    sc * b->ep_comm - a->ep_comm, sc * b->optimizer - a->optimizer,
                    sc * b->offload - a->offload };
    size_t j, best = 0;
    double ka = ts_search_key(c, a), kb = ts_search_key(c, b);
    double gain = kb > 0 ? 100.0 * (kb - ka) / kb : 0;

    for (j = 1; j < sizeof da / sizeof da[0]; j++)
        if (da[j] > da[best])
            best = j;
    if (da[best] > 0)
        snprintf(a->why, sizeof a->why, "%.2f %% %s than #%zu: %.3g s less %s per step", gain,
                 better, i + 2, da[best], names[best]);
    else
        snprintf(a->why, sizeof a->why, "%.2f %% %s than #%zu (%s)", gain, better, i + 2,
                 a->gpus < b->gpus ? "fewer GPUs" : "same terms, listed first");
}
