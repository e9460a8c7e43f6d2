/*
 * ts_search.c - enumerate parallel layouts, keep those that fit, rank them
 * by predicted step time (core/ts_step.c) or by GPU-seconds per step.
 *
 * Dimensions, outermost first: tp (divides heads, KV heads compatible,
 * inside a node unless max_tp says otherwise), cp (powers of two dividing
 * seq), pp (any count whose split Megatron can express: even, or the first
 * stage taking the remainder), dp (the rest of the GPUs; must divide
 * global_batch), ep (MoE: divides experts and dp), framework / ZeRO stage,
 * recompute, micro-batch (divides global_batch / dp), vpp (interleaved
 * schedule when pp > 1 and the stage layers split evenly).
 *
 * Without a global batch every layout gets the one a practitioner would
 * pick for it (ts_batch_default: about 4M tokens, and enough micro-batches
 * that the pipeline bubble stays under a quarter), so layouts with
 * different batches are compared per token: the objective is time (or
 * GPU-time) per token, which orders the same as per step when the batch
 * is fixed.  The batch belongs to the parallel layout and schedule (the
 * default at micro-batch 1, or at the fixed micro-batch); the micro-batch
 * splits a rank's share of it (ts_search_inner_derived).  dp runs over
 * the divisors of the 4M-token batch G0 when max_gpus is searched, or is
 * the one dp the GPUs leave, at most G0 (one sequence per rank: a larger
 * dp would need a batch no run of that size uses).
 *
 * A candidate is kept when it fits with the margin (cfg->margin of HBM
 * kept free) and within max_days / max_cost, which hold the run with
 * checkpoints and failures (ts_goodput.c); what fits only without the
 * margin is counted as tight.  Its grad_precision follows its framework
 * when cfg->grad_follows_framework (what /v1/plan would derive), so the
 * run of a result, resolved again, is the run it was ranked as.
 *
 * Pruning: memory falls monotonically from none to selective to full
 * recompute and rises with the micro-batch, so for each structural layout
 * full recompute at micro-batch 1 is tried first; if that does not fit,
 * nothing of that layout can, and it is skipped uncosted.  Within a
 * recompute mode the micro-batch loop stops at the first that does not
 * fit.  No allocation: the candidate runs live on the stack, the ranked
 * top-k in the caller's ts_search_out (insertion into a sorted array).
 *
 * Work: every loop iteration, memory estimate and step estimate is
 * charged to the request's budget (trainsize.h, "Work budget"); when it
 * runs out the search stops where it is and answers the best layouts seen
 * (out->truncated).  Loops run over what can be valid only, bounded before
 * they start: tp <= heads, cp <= seq, pp <= layers, micro-batches over the
 * divisors of global_batch / dp, vpp over the divisors of layers / pp (so
 * max_vpp = 2^20 costs what max_vpp = layers / pp does).
 *
 * This file: the enumeration and the entry; a candidate's memory, cost,
 * rank and "why" are in ts_search_rank.c (shared: ts_search_int.h).
 */
#include "ts_internal.h"
#include "ts_search_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Divisors of the global batch kept (numbers below 2^40 have at most
 * 6720). */
#define TS_SEARCH_DIVISORS 8192

void ts_search_defaults(ts_search_cfg *c)
{
    if (c == NULL)
        return;
    memset(c, 0, sizeof *c);
    c->objective = TS_SEARCH_TIME;
    c->limit = 20;
    c->zero = -1;
    c->framework = -1;
    c->margin = TS_SEARCH_MARGIN;
}

/* Framework and ZeRO stage combinations worth trying: Megatron's
 * distributed optimizer (ZeRO-1 style), FSDP FULL_SHARD / SHARD_GRAD_OP,
 * DeepSpeed ZeRO-1/2/3.  ZeRO-0 is dominated (same traffic, more memory). */
typedef struct ts_search_fw {
    ts_framework fw;
    int zero;
} ts_search_fw;

static const ts_search_fw ts_search_fws[] = {
    { TS_FW_MEGATRON, 1 },  { TS_FW_FSDP, 3 },      { TS_FW_FSDP, 2 },
    { TS_FW_DEEPSPEED, 1 }, { TS_FW_DEEPSPEED, 2 }, { TS_FW_DEEPSPEED, 3 },
};

/* selective_op (torchtitan's per-op checkpoint) is a framework's own
 * policy: tried only when the request names it, and only for fsdp
 * layouts (ts_search_rec_fw). */
static bool ts_search_rec_ok(const ts_search_cfg *cfg, ts_recompute rc)
{
    if (rc == TS_RECOMPUTE_SELECTIVE_OP)
        return (cfg->recompute_mask & (1u << rc)) != 0;
    return cfg->recompute_mask == 0 || (cfg->recompute_mask & (1u << rc)) != 0;
}

static bool ts_search_rec_fw(const ts_search_cfg *cfg, const ts_run *lay, ts_recompute rc)
{
    /* Megatron-Core's CPU offload runs without recompute only (ts_compat.c). */
    return ts_search_rec_ok(cfg, rc) &&
           (rc != TS_RECOMPUTE_SELECTIVE_OP || lay->framework == TS_FW_FSDP) &&
           (lay->offload_activation_layers == 0 || rc == TS_RECOMPUTE_NONE);
}

/* Micro-batch and vpp loops for one structural layout and recompute mode,
 * at the run's global batch.  The micro-batches are the divisors of
 * per_dp, all among the global batch's, ascending as mb = 1, 2, ... would
 * meet them. */
static void ts_search_inner(ts_search_ctx *c, ts_run *lay, ts_recompute rc)
{
    const ts_search_cfg *cfg = c->cfg;
    int64_t per_dp = c->base->global_batch / lay->dp;
    size_t di;

    for (di = 0; di < c->ndiv && c->div[di] <= per_dp && c->div[di] <= c->max_mb; di++) {
        int64_t mb = c->div[di];
        ts_run cand;
        ts_memory mem;
        int64_t m;
        size_t vi;

        if (!ts_budget_take(c->b, TS_COST_ITER))
            return;
        if (per_dp % mb != 0 || (cfg->micro_batch > 0 && mb != cfg->micro_batch))
            continue;
        m = per_dp / mb;
        cand = *lay;
        cand.recompute = rc;
        cand.micro_batch = mb;
        cand.vpp = 1;
        cand.pp_schedule = TS_PP_1F1B;
        c->out->enumerated++;
        if (!ts_search_fits(c, &cand, &mem))
            break; /* a larger micro-batch holds more */
        if (cfg->vpp <= 1)
            ts_search_cost(c, &cand, &mem);
        /* Interleaved 1F1B: even stages only, m a multiple of pp
         * (Megatron's schedule requirement); v divides layers / pp. */
        if (lay->pp < 2 || lay->first_stage_layers > 0 || m % lay->pp != 0)
            continue;
        for (vi = 0; vi < c->nvdiv && !c->b->exhausted; vi++) {
            int64_t v = c->vdiv[vi];
            ts_run iv;
            ts_memory imem;

            if (!ts_budget_take(c->b, TS_COST_ITER))
                return;
            if (cfg->vpp > 0 && v != cfg->vpp)
                continue;
            iv = *lay;
            iv.recompute = rc;
            iv.micro_batch = mb;
            iv.vpp = v;
            iv.pp_schedule = TS_PP_INTERLEAVED;
            c->out->enumerated++;
            if (ts_search_fits(c, &iv, &imem))
                ts_search_cost(c, &iv, &imem);
        }
    }
}

/* The same without a global batch: each schedule (1F1B, then interleaved
 * with each v) of the layout gets the batch ts_batch_default gives it at
 * micro-batch 1 (or the fixed one): the batch is the parallel layout's,
 * the micro-batch how each rank splits its share, so a larger micro-batch
 * is fewer micro-batches per step, not a larger batch.  The micro-batches
 * are the divisors of G0 that divide the rank's share. */
static void ts_search_inner_derived(ts_search_ctx *c, ts_run *lay, ts_recompute rc)
{
    const ts_search_cfg *cfg = c->cfg;
    bool ilv_ok = lay->pp >= 2 && lay->first_stage_layers == 0;
    size_t si, ns = 1 + (ilv_ok ? c->nvdiv : 0);

    for (si = 0; si < ns && !c->b->exhausted; si++) {
        ts_run sch = *lay;
        ts_batch_rule br;
        int64_t per_dp;
        size_t di;

        if (!ts_budget_take(c->b, TS_COST_ITER))
            return;
        sch.recompute = rc;
        sch.vpp = si == 0 ? 1 : c->vdiv[si - 1];
        sch.pp_schedule = si == 0 ? TS_PP_1F1B : TS_PP_INTERLEAVED;
        if ((si == 0 && cfg->vpp > 1) || (si > 0 && cfg->vpp > 0 && sch.vpp != cfg->vpp))
            continue;
        sch.micro_batch = cfg->micro_batch > 0 ? cfg->micro_batch : 1;
        if (ts_batch_default(&sch, &br, NULL) != TS_OK)
            continue;
        sch.global_batch = br.global_batch;
        per_dp = br.global_batch / lay->dp;
        for (di = 0; di < c->ndiv && c->div[di] <= c->max_mb; di++) {
            int64_t mb = cfg->micro_batch > 0 ? cfg->micro_batch : c->div[di];
            ts_run cand;
            ts_memory mem;

            if (!ts_budget_take(c->b, TS_COST_ITER))
                return;
            if (cfg->micro_batch > 0 && di > 0)
                break;
            if (mb > per_dp || per_dp % mb != 0)
                continue;
            /* Interleaved: m a multiple of pp, as Megatron schedules it. */
            if (si > 0 && (per_dp / mb) % lay->pp != 0)
                continue;
            cand = sch;
            cand.micro_batch = mb;
            c->out->enumerated++;
            if (!ts_search_fits(c, &cand, &mem))
                break; /* a larger micro-batch holds more */
            ts_search_cost(c, &cand, &mem);
        }
    }
}

/* One structural layout: every framework, recompute mode, micro-batch. */
static void ts_search_layout(ts_search_ctx *c, ts_run *lay)
{
    const ts_search_cfg *cfg = c->cfg;
    size_t f;

    for (f = 0; f < sizeof ts_search_fws / sizeof ts_search_fws[0]; f++) {
        const ts_search_fw *fw = &ts_search_fws[f];
        ts_run probe;
        ts_memory mem;
        int rc;

        if (!ts_budget_take(c->b, TS_COST_ITER))
            return;
        if (cfg->framework >= 0 && (int)fw->fw != cfg->framework)
            continue;
        if (cfg->zero >= 0 && fw->zero != cfg->zero)
            continue;
        /* PP with Megatron or DeepSpeed ZeRO-1 only; CP and EP Megatron only. */
        if (lay->pp > 1 && !(fw->zero == 1))
            continue;
        if ((lay->cp > 1 || lay->ep > 1) && fw->fw != TS_FW_MEGATRON)
            continue;
        /* Megatron-Core's CPU offload: megatron at pp 1 only (ts_compat.c). */
        if (lay->offload_activation_layers > 0 && (fw->fw != TS_FW_MEGATRON || lay->pp > 1))
            continue;
        /* Megatron's DP overlap switched off: megatron layouts only. */
        if ((!lay->overlap_grad_reduce || !lay->overlap_param_gather) && fw->fw != TS_FW_MEGATRON)
            continue;
        lay->framework = fw->fw;
        lay->zero = fw->zero;
        lay->sequence_parallel = lay->tp > 1;
        lay->tp_comm_overlap = c->tp_overlap && lay->tp > 1 && ts_framework_tp_overlap(fw->fw);

        /* Prune: the least memory this layout can take (full recompute,
         * micro-batch 1, or the fixed values). */
        probe = *lay;
        probe.recompute = TS_RECOMPUTE_FULL;
        if (!ts_search_rec_ok(cfg, TS_RECOMPUTE_FULL))
            probe.recompute =
                ts_search_rec_fw(cfg, lay, TS_RECOMPUTE_SELECTIVE_OP) ? TS_RECOMPUTE_SELECTIVE_OP
                : ts_search_rec_ok(cfg, TS_RECOMPUTE_SELECTIVE)       ? TS_RECOMPUTE_SELECTIVE
                                                                      : TS_RECOMPUTE_NONE;
        if (lay->offload_activation_layers > 0)
            probe.recompute = TS_RECOMPUTE_NONE;
        probe.micro_batch = cfg->micro_batch > 0 ? cfg->micro_batch : 1;
        probe.vpp = 1;
        probe.pp_schedule = TS_PP_1F1B;
        if (c->gb_given && (c->base->global_batch / lay->dp) % probe.micro_batch != 0)
            continue;
        if (!c->gb_given)
            probe.global_batch = 0; /* this layout's own, at the probe's micro-batch */
        c->out->enumerated++;
        if (!ts_search_fits(c, &probe, &mem)) {
            c->out->pruned++;
            continue;
        }
        for (rc = TS_RECOMPUTE_NONE; rc < TS_RECOMPUTE_COUNT && !c->b->exhausted; rc++)
            if (ts_search_rec_fw(cfg, lay, (ts_recompute)rc)) {
                if (c->gb_given)
                    ts_search_inner(c, lay, (ts_recompute)rc);
                else
                    ts_search_inner_derived(c, lay, (ts_recompute)rc);
            }
    }
}

/* Megatron expresses uneven stages through the first/last stage counts:
 * the middle stages split the rest evenly.  Returns false when no such
 * split exists (then that pp is skipped). */
static bool ts_search_split(int64_t L, int64_t pp, int64_t *first)
{
    int64_t per;

    *first = 0;
    if (pp <= 1 || L % pp == 0)
        return pp <= L;
    per = (L + pp - 1) / pp;     /* ceil */
    *first = L - (pp - 1) * per; /* the remainder on the first stage */
    return *first >= 1;
}

static int64_t ts_search_gcd(int64_t a, int64_t b)
{
    while (b != 0) {
        int64_t t = a % b;

        a = b;
        b = t;
    }
    return a;
}

static bool ts_search_tp_ok(const ts_model *m, int64_t tp)
{
    int64_t kv = m->kv_heads > 0 ? m->kv_heads : m->heads;

    if (m->heads % tp != 0)
        return false;
    return kv >= tp ? kv % tp == 0 : tp % kv == 0;
}

/* The divisors of q in [2, max], ascending, into c->vdiv (trial division
 * up to sqrt(q), each step charged). */
static void ts_search_vdivisors(ts_search_ctx *c, int64_t q, int64_t max)
{
    int64_t hi[TS_SEARCH_VDIVISORS], d;
    size_t nhi = 0;

    c->nvdiv = 0;
    for (d = 1; d * d <= q && ts_budget_take(c->b, TS_COST_ITER); d++) {
        if (q % d != 0)
            continue;
        if (d >= 2 && d <= max && c->nvdiv < TS_SEARCH_VDIVISORS)
            c->vdiv[c->nvdiv++] = d;
        if (d != q / d && q / d <= max && nhi < TS_SEARCH_VDIVISORS)
            hi[nhi++] = q / d;
    }
    while (nhi > 0 && c->nvdiv < TS_SEARCH_VDIVISORS)
        c->vdiv[c->nvdiv++] = hi[--nhi];
}

/* The one-GPU copy of the run every candidate is laid over: everything
 * but the layout must be valid (model, GPU, precision, batch ...).  No
 * global_batch: the run's default at one GPU (about 4M tokens,
 * ts_batch_default), G0: what dp and the micro-batch run over; each
 * candidate then derives its own. */
static ts_status ts_search_base(const ts_run *r, ts_run *base, ts_error *err)
{
    ts_status st;

    *base = *r;
    base->tp = base->pp = base->cp = base->ep = base->dp = 1;
    base->gpus = 0;
    base->micro_batch = 1;
    base->vpp = 1;
    base->pp_schedule = TS_PP_1F1B;
    base->first_stage_layers = base->last_stage_layers = 0;
    base->sequence_parallel = false;
    base->tp_comm_overlap = false; /* per layout: needs tp > 1 */
    if (base->offload_params)
        base->zero = 3;
    if ((st = ts_run_resolve(base, err)) != TS_OK)
        return st;
    if (base->model.layers <= 0)
        return ts_error_set(err, TS_EINVAL, "layers",
                            "a layout search needs a model shape (layers, hidden, heads)");
    return TS_OK;
}

/* The search's own settings. */
static ts_status ts_search_check(const ts_search_cfg *cfg, const ts_run *base, ts_error *err)
{
    if (cfg->limit < 1 || cfg->limit > TS_SEARCH_MAX_RESULTS)
        return ts_error_set(err, TS_EINVAL, "limit", "limit must be from 1 to %d",
                            TS_SEARCH_MAX_RESULTS);
    if ((unsigned)cfg->objective >= TS_SEARCH_OBJECTIVE_COUNT)
        return ts_error_set(err, TS_EINVAL, "objective", "unknown objective");
    if (cfg->framework >= TS_FW_COUNT || cfg->zero > 3)
        return ts_error_set(err, TS_EINVAL, cfg->zero > 3 ? "zero" : "framework",
                            "unknown framework or ZeRO stage");
    if (!(cfg->margin >= 0 && cfg->margin < 1))
        return ts_error_set(err, TS_EINVAL, "margin", "margin must be in [0, 1), got %g",
                            cfg->margin);
    if (!(cfg->max_days >= 0 && cfg->max_days <= 1e12) ||
        !(cfg->max_cost >= 0 && cfg->max_cost <= 1e18))
        return ts_error_set(err, TS_EINVAL,
                            cfg->max_days >= 0 && cfg->max_days <= 1e12 ? "max_cost" : "max_days",
                            "max_days must be in [0, 1e12] and max_cost in [0, 1e18]");
    if (cfg->max_cost > 0 && !(base->gpu_hour_usd > 0))
        return ts_error_set(err, TS_EINCOMPAT, "max_cost",
                            "max_cost needs a price: give gpu_hour_usd");
    /* Megatron-Core's CPU offload runs at pp 1 under megatron only
     * (ts_compat.c): a search held elsewhere would try nothing. */
    if (base->offload_activation_layers > 0 &&
        (cfg->pp > 1 || (cfg->framework >= 0 && cfg->framework != (int)TS_FW_MEGATRON)))
        return ts_error_set(err, TS_EINCOMPAT, "offload_activation_layers",
                            "offload_activation_layers needs pp 1 and framework \"megatron\" "
                            "(Megatron-Core's CPU offload), but the search holds %s",
                            cfg->pp > 1 ? "pp above 1" : "another framework");
    if ((!base->overlap_grad_reduce || !base->overlap_param_gather) && cfg->framework >= 0 &&
        cfg->framework != (int)TS_FW_MEGATRON)
        return ts_error_set(err, TS_EINCOMPAT,
                            base->overlap_grad_reduce ? "overlap_param_gather"
                                                      : "overlap_grad_reduce",
                            "Megatron's data-parallel overlap is switched off, but the search "
                            "holds another framework");
    return TS_OK;
}

/* dp must divide the global batch gb: its divisors, ascending (the small
 * ones counted up, their cofactors down from sqrt), into div; how many. */
static size_t ts_search_batch_divisors(int64_t gb, int64_t *div, ts_budget *b)
{
    int64_t hi[TS_SEARCH_DIVISORS / 2], d;
    size_t ndiv = 0, nhi = 0;

    for (d = 1; d * d <= gb && ndiv < TS_SEARCH_DIVISORS / 2 && ts_budget_take(b, TS_COST_ITER);
         d++) {
        if (gb % d != 0)
            continue;
        div[ndiv++] = d;
        if (d != gb / d)
            hi[nhi++] = gb / d;
    }
    while (nhi > 0 && ndiv < TS_SEARCH_DIVISORS)
        div[ndiv++] = hi[--nhi];
    return ndiv;
}

/* The layouts of one (tp, cp, pp, dp, first): ep divides both experts
 * and dp, so the divisors of their gcd, by trial division up to its
 * root. */
static void ts_search_eps(ts_search_ctx *c, int64_t tp, int64_t cp, int64_t pp, int64_t dp,
                          int64_t first)
{
    const ts_run *base = c->base;
    int64_t g = base->model.experts > 1 ? ts_search_gcd(base->model.experts, dp) : 1;
    int64_t eps[512], ep;
    size_t neps = 0, ei;

    for (ep = 1; ep * ep <= g && neps + 2 <= sizeof eps / sizeof eps[0] &&
                 ts_budget_take(c->b, TS_COST_ITER);
         ep++) {
        if (g % ep != 0)
            continue;
        eps[neps++] = ep;
        if (ep != g / ep)
            eps[neps++] = g / ep;
    }
    for (ei = 0; ei < neps && !c->b->exhausted; ei++) {
        ts_run lay;

        ep = eps[ei];
        if (c->cfg->ep > 0 && ep != c->cfg->ep)
            continue;
        lay = *base;
        lay.tp = tp;
        lay.cp = cp;
        lay.pp = pp;
        lay.dp = dp;
        lay.ep = ep;
        lay.gpus = tp * cp * pp * dp;
        lay.first_stage_layers = first;
        lay.last_stage_layers = 0;
        lay.offload_params = base->offload_params;
        ts_search_layout(c, &lay);
    }
}

/* dp for one (tp, cp, pp): the global batch's divisors; without a batch
 * and with the GPUs fixed, the one dp they leave. */
static void ts_search_dps(ts_search_ctx *c, int64_t tp, int64_t cp, int64_t pp, int64_t first)
{
    size_t di;

    for (di = 0; di < c->ndiv && ts_budget_take(c->b, TS_COST_ITER); di++) {
        int64_t dp = c->div[di];

        if (!c->gb_given && c->g_fixed > 0) {
            /* at most G0: one sequence per rank of the 4M-token batch,
             * as a given batch bounds it */
            if (di > 0 || c->g_fixed / (tp * cp * pp) > c->base->global_batch)
                break;
            dp = c->g_fixed / (tp * cp * pp);
        }
        if (tp * cp * pp * dp > c->g_max)
            break; /* ascending */
        if (c->g_fixed > 0 && tp * cp * pp * dp != c->g_fixed)
            continue;
        ts_search_eps(c, tp, cp, pp, dp, first);
    }
}

/* pp for one (tp, cp): the stages Megatron can split the layers into;
 * vpp candidates from the divisors of an even stage's layers. */
static void ts_search_pps(ts_search_ctx *c, int64_t tp, int64_t cp, int64_t max_pp)
{
    const ts_search_cfg *cfg = c->cfg;
    int64_t L = c->base->model.layers, pp;

    for (pp = 1; pp <= max_pp && tp * cp * pp <= c->g_max && ts_budget_take(c->b, TS_COST_ITER);
         pp++) {
        int64_t first;

        if (cfg->pp > 0 && pp != cfg->pp)
            continue;
        if (c->g_fixed > 0 && c->g_fixed % (tp * cp * pp) != 0)
            continue;
        if (!ts_search_split(L, pp, &first))
            continue;
        c->nvdiv = 0;
        if (pp > 1 && first == 0)
            ts_search_vdivisors(c, L / pp, c->max_vpp);
        ts_search_dps(c, tp, cp, pp, first);
    }
}

/* Every (tp, cp, pp) within the bounds: what the caller allows, cut to
 * what can be valid (tp divides heads, cp divides seq, pp <= layers), so
 * a limit of 2^20 costs no more than the model allows. */
static void ts_search_grid(ts_search_ctx *c)
{
    const ts_search_cfg *cfg = c->cfg;
    const ts_run *base = c->base;
    int64_t L = base->model.layers;
    int64_t max_tp = cfg->max_tp > 0 ? cfg->max_tp : base->gpus_per_node;
    int64_t max_pp = cfg->max_pp > 0 ? cfg->max_pp : L;
    int64_t max_cp = cfg->max_cp > 0 ? cfg->max_cp : TS_SEARCH_CP_DEFAULT;
    int64_t tp, cp;

    if (max_tp > base->model.heads)
        max_tp = base->model.heads;
    if (max_pp > L)
        max_pp = L;
    if (max_cp > base->seq)
        max_cp = base->seq;
    for (tp = 1; tp <= max_tp && tp <= c->g_max && ts_budget_take(c->b, TS_COST_ITER); tp++) {
        if ((cfg->tp > 0 && tp != cfg->tp) || !ts_search_tp_ok(&base->model, tp))
            continue;
        for (cp = 1; cp <= max_cp && tp * cp <= c->g_max && ts_budget_take(c->b, TS_COST_ITER);
             cp *= 2) {
            if ((cfg->cp > 0 && cp != cfg->cp) || base->seq % cp != 0)
                continue;
            ts_search_pps(c, tp, cp, max_pp);
        }
    }
}

/* Nothing ranked: why, as the error (an empty list is never an answer). */
static ts_status ts_search_none(const ts_search_ctx *c, ts_error *err)
{
    const ts_search_cfg *cfg = c->cfg;
    const ts_search_out *out = c->out;

    if (out->truncated)
        /* Nothing costed before the budget ran out: no partial answer. */
        return ts_error_set(err, TS_EINVAL, cfg->max_gpus > 0 ? "max_gpus" : "gpus",
                            "the layout search over %lld GPUs ran out of its work budget "
                            "(%llu units, %llu layouts tried) before any layout fit: fix tp, "
                            "pp or cp, or lower max_gpus, max_pp, max_micro_batch or max_vpp",
                            (long long)c->g_max, (unsigned long long)c->b->limit,
                            (unsigned long long)out->tried);
    if (out->fitting > 0 && !(cfg->max_days > 0) && !(cfg->max_cost > 0))
        /* No gate given: every layout was over because none finishes. */
        return ts_error_set(err, TS_ERANGE,
                            c->base->ckpt.job_mtbf_hours > 0 ? "job_mtbf_hours" : "gpu_mtbf_hours",
                            "%llu layouts of %lld GPUs fit, but under failures none would ever "
                            "finish: the job fails far more often than a checkpoint interval "
                            "(shorten nvme_interval_min)",
                            (unsigned long long)out->fitting, (long long)c->g_max);
    if (out->fitting > 0)
        return ts_error_set(err, TS_ENOFIT, cfg->max_days > 0 ? "max_days" : "max_cost",
                            "%llu layouts of %lld GPUs fit, none within max_days / max_cost",
                            (unsigned long long)out->fitting, (long long)c->g_max);
    if (out->tight > 0)
        return ts_error_set(err, TS_ENOFIT, "margin",
                            "no layout of %lld GPUs fits with %.4g %% of HBM kept free (margin); "
                            "%llu estimates fit without it",
                            (long long)c->g_max, 100.0 * cfg->margin,
                            (unsigned long long)out->tight);
    return ts_error_set(err, TS_ENOFIT, "gpus", "no layout of %lld GPUs fits (%llu tried)",
                        (long long)c->g_max, (unsigned long long)out->tried);
}

ts_status ts_search_run(const ts_run *r, const ts_search_cfg *cfg, ts_search_out *out,
                        ts_error *err)
{
    return ts_search_run_within(r, cfg, NULL, out, err);
}

ts_status ts_search_run_within(const ts_run *r, const ts_search_cfg *cfg, ts_budget *budget,
                               ts_search_out *out, ts_error *err)
{
    ts_search_ctx c;
    ts_budget own;
    ts_run base;
    ts_status st;
    int64_t div[TS_SEARCH_DIVISORS], g_max;
    size_t i;

    if (budget == NULL) {
        ts_budget_init(&own, 0);
        budget = &own;
    }
    if (r == NULL || cfg == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    memset(out, 0, sizeof *out);
    g_max = cfg->max_gpus > 0 ? cfg->max_gpus : r->gpus;
    if (g_max <= 0)
        return ts_error_set(err, TS_EINVAL, "gpus", "a layout search needs gpus (or max_gpus)");
    if ((st = ts_search_base(r, &base, err)) != TS_OK ||
        (st = ts_search_check(cfg, &base, err)) != TS_OK)
        return st;

    memset(&c, 0, sizeof c);
    c.base = &base;
    c.cfg = cfg;
    c.out = out;
    c.limit = cfg->limit;
    c.b = budget;
    c.max_mb = cfg->max_micro_batch > 0 ? cfg->max_micro_batch : TS_SEARCH_MB_DEFAULT;
    c.max_vpp = cfg->max_vpp > 0 ? cfg->max_vpp : TS_SEARCH_VPP_DEFAULT;
    c.gb_given = r->global_batch > 0;
    c.tp_overlap = r->tp_comm_overlap;
    c.g_max = g_max;
    c.g_fixed = cfg->max_gpus > 0 ? 0 : r->gpus;
    ts_model_count(&base.model, &c.params);
    c.ndiv = ts_search_batch_divisors(base.global_batch, div, budget);
    c.div = div;
    ts_search_grid(&c);

    for (i = 0; i < out->n; i++) {
        if (i + 1 == out->n)
            ts_search_why_last(out, i);
        else
            ts_search_why_pair(&c, &out->results[i], &out->results[i + 1], i);
    }
    out->truncated = budget->exhausted;
    return out->n == 0 ? ts_search_none(&c, err) : TS_OK;
}
