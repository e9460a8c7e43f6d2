/*
 * ts_compute.c - training FLOPs, GPU-hours and wall clock.
 *
 * model FLOPs = 6 P_active T (Kaplan et al. 2020): forward 2PT, backward 4PT.
 * The attention-aware form adds the QK^T and AV matmuls, 12 L h s per token
 * (PaLM, Chowdhery et al. 2022, App. B).  Recompute adds forward passes that
 * the hardware executes but MFU does not credit, so it raises HFU only.
 * LoRA trains the adapters only: the frozen base runs its forward and its
 * input-gradient matmuls but no weight gradients, 4 P_active + 6 P_lora
 * per token (ts_compute_basis).  See docs/formulas.md, "Compute".
 */
#include "ts_internal.h"

#include <math.h>

#define TS_SECONDS_PER_HOUR 3600.0
#define TS_SECONDS_PER_DAY  86400.0
#define TS_HOURS_PER_YEAR   (365.25 * 24.0) /* Julian year */

/* Every reported double must be finite: a huge token count times a huge
 * model could overflow, and that must be an error, never "inf" in JSON. */
static int ts_compute_all_finite(const ts_compute *c)
{
    const double v[] = {
        c->tokens,
        c->params_active,
        c->model_flops.value,
        c->model_flops_attn.value,
        c->hardware_flops.value,
        c->peak_flops,
        c->mfu,
        c->hfu,
        c->gpu_hours.value,
        c->wall_seconds.value,
        c->wall_days,
        c->gpu_years,
        c->tokens_per_second,
        c->tokens_per_gpu_second,
        c->steps,
        c->step_seconds,
        c->achieved_flops_per_gpu,
        c->predicted_mfu,
        c->step_time.value,
        c->cost_usd.value,
        c->step.tokens_per_second,
    };
    size_t i;

    for (i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

/* The formulas, by [lora][attention_flops]: model FLOPs, and hardware
 * FLOPs by recompute (none, selective, full; selective_op is ts_basis_hw_op). */
static const char *const ts_basis_model[2][2] = {
    { "6 * P_active * T", "(6 * P_active + 12 * L * h * s) * T" },
    { "(4 * P_active + 6 * P_lora) * T", "(4 * P_active + 6 * P_lora + 12 * L * h * s) * T" },
};
static const char *const ts_basis_hw[2][2][3] = {
    { { "6 P_active T", "6 P_active T + 4 L h s T (selective recompute)",
        "6 P_active T + (2 P_active + 4 L h s) T (full recompute)" },
      { "(6 P_active + 12 L h s) T", "(6 P_active + 12 L h s) T + 4 L h s T (selective recompute)",
        "(6 P_active + 12 L h s) T + (2 P_active + 4 L h s) T (full recompute)" } },
    { { "(4 P_active + 6 P_lora) T", "(4 P_active + 6 P_lora) T + 4 L h s T (selective recompute)",
        "(4 P_active + 6 P_lora) T + (2 P_active + 2 P_lora + 4 L h s) T (full recompute)" },
      { "(4 P_active + 6 P_lora + 12 L h s) T",
        "(4 P_active + 6 P_lora + 12 L h s) T + 4 L h s T (selective recompute)",
        "(4 P_active + 6 P_lora + 12 L h s) T + (2 P_active + 2 P_lora + 4 L h s) T (full "
        "recompute)" } },
};
static const char *const ts_basis_hw_op[2] = {
    "6 P_active T + 2 L h (kv + o [+ F]) T (selective op recompute: wk, wo [, w3])",
    "(6 P_active + 12 L h s) T + 2 L h (kv + o [+ F]) T (selective op recompute: wk, wo [, w3])",
};
/* Full recompute that stops early (non-reentrant, ts_step_layer.c
 * ts_step_rec_skip): the dense layers' down projection is not rerun. */
static const char *const ts_basis_hw_early[2] = {
    "6 P_active T + (2 P_active + 4 L h s - 2 L_dense h F) T (full recompute, non-reentrant: the "
    "down projection not rerun)",
    "(6 P_active + 12 L h s) T + (2 P_active + 4 L h s - 2 L_dense h F) T (full recompute, "
    "non-reentrant: the down projection not rerun)",
};
static const char *const ts_basis_hours[2][2] = {
    { "6 P_active T / (peak * MFU * 3600)", "(6 P_active + 12 L h s) T / (peak * MFU * 3600)" },
    { "(4 P_active + 6 P_lora) T / (peak * MFU * 3600)",
      "(4 P_active + 6 P_lora + 12 L h s) T / (peak * MFU * 3600)" },
};
static const char *const ts_basis_convention[2][2] = {
    { "6 P_active per token (Kaplan: attention matmuls and recompute not credited)",
      "(6 P_active + 12 L h s) per token (PaLM: attention non-causal, no recompute credit)" },
    { "4 P_active + 6 P_lora per token (LoRA: no weight gradients for the frozen base; attention "
      "matmuls and recompute not credited)",
      "(4 P_active + 6 P_lora + 12 L h s) per token (LoRA: no weight gradients for the frozen "
      "base; PaLM's attention, non-causal; no recompute credit)" },
};

/* The MFU basis, per token of the full sequence.  Kaplan et al. 2020:
 * forward 2 P, backward 4 P (input and weight gradients, 2 P each).
 * LoRA (lora_rank with a model shape, as the memory and step models
 * take it): the frozen base needs no weight gradients, "we do not need to
 * calculate the gradients ... for most parameters" (Hu et al. 2021,
 * section 4.2), so 4 P_active, and the adapters train, 6 P_lora, of the
 * experts a token is routed to (top_k) in a MoE layer.  The attention
 * matmuls have no weights: 12 L h s either way (PaLM, App. B). */
void ts_compute_basis(const ts_run *run, const ts_params *p, ts_flops_basis *out)
{
    const ts_model *m = &run->model;
    bool shape = p->from_shape && m->layers > 0;
    int lora = shape && run->lora_rank > 0;
    int attn = run->attention_flops && shape;
    double P = p->active, weights = 6.0 * P;

    out->lora_params = 0;
    if (lora) {
        double routed = m->experts > 1 ? (double)m->top_k : 1.0;

        out->lora_params =
            (double)m->layers * ts_lora_layer_params(m, run->lora_targets, run->lora_rank, routed);
        weights = 4.0 * P + 6.0 * out->lora_params;
    }
    out->weights = weights;
    out->attention = shape ? 12.0 * (double)m->layers * (double)m->hidden * (double)run->seq : 0;
    out->per_token = weights + (attn ? out->attention : 0);
    out->model_formula = ts_basis_model[lora][0];
    out->attn_formula = ts_basis_model[lora][1];
    out->convention = ts_basis_convention[lora][attn];
    out->hours_formula = ts_basis_hours[lora][run->attention_flops ? 1 : 0];
    out->lora = lora != 0;
}

/* The step-time model (core/ts_step.c) always runs; its MFU sets the
 * GPU-hours unless the caller sent one: into out->step, out->mfu. */
static ts_status ts_compute_mfu(const ts_run *run, const ts_params *p, ts_compute *out,
                                ts_error *err)
{
    double mfu;

    if (ts_step_eval(run, p, &out->step) != TS_OK)
        return ts_error_set(err, TS_ERANGE, "gpus", "the step time is not finite for these inputs");
    out->step_time = out->step.step_time;
    out->predicted_mfu = out->step.predicted_mfu;
    mfu = run->mfu;
    if (mfu == 0) {
        if (!(out->predicted_mfu > 0 && out->predicted_mfu <= 1)) {
            double bad = out->predicted_mfu; /* read before the answer is cleared */

            *out = (ts_compute){ 0 };
            return ts_error_set(err, TS_ERANGE, "mfu",
                                "the predicted MFU %g is outside (0, 1]; send mfu", bad);
        }
        mfu = out->predicted_mfu;
        out->mfu_predicted = true;
    }
    out->mfu = mfu;
    return TS_OK;
}

/* FLOPs recomputed over the run (L h s: layers, hidden, sequence; T
 * tokens; the forward of the adapters too under LoRA), and the hardware
 * FLOPs' formula. */
static double ts_compute_recompute(const ts_run *run, const ts_flops_basis *b, double P, double L,
                                   double h, double s, double T, const char **hw_formula)
{
    const char *const *f = ts_basis_hw[b->lora][run->attention_flops ? 1 : 0];
    const ts_model *m = &run->model;
    double F = (double)(m->ffn > 0 ? m->ffn : 4 * m->hidden);

    switch (run->recompute) {
    case TS_RECOMPUTE_SELECTIVE:
        *hw_formula = f[1];
        return 4.0 * L * h * s * T; /* attention-score forward again */
    case TS_RECOMPUTE_FULL: {
        /* Layers whose MLP is dense: a MoE model's first dense layers. */
        double Ld = m->experts > 1 ? (double)m->dense_layers : L;
        /* The step model's early stop (ts_step_rec_skip): a dense block
         * without LoRA does not rerun its down projection. */
        double skip = ts_run_recompute_impl(run) == TS_RIMPL_EARLY_STOP && !b->lora && L > 0
                          ? 2.0 * Ld * h * F
                          : 0.0;

        *hw_formula = skip > 0 ? ts_basis_hw_early[run->attention_flops ? 1 : 0] : f[2];
        /* Whole forward again, of the recomputed layers' share with the
         * block method (recompute_layers; the embedding and head among
         * the layers, a small error). */
        return (2.0 * P + 2.0 * b->lora_params + 4.0 * L * h * s - skip) * T *
               (run->recompute_layers > 0 && L > 0 ? ts_run_recomputed_total(run) / L : 1.0);
    }
    case TS_RECOMPUTE_SELECTIVE_OP: {
        /* torchtitan's per-op checkpoint reruns the even-counted matmuls
         * before its early stop: wk, wo and (gated) w3 (ts_step_layer.c
         * ts_step_rec_op); the SDPA output is kept.  A LoRA run never
         * gets here (ts_run_resolve). */
        double hd = m->head_dim > 0 ? (double)m->head_dim : h / (double)m->heads;
        double kvh = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads);

        *hw_formula = ts_basis_hw_op[run->attention_flops ? 1 : 0];
        return 2.0 * L * h * (kvh * hd + (double)m->heads * hd + (m->gated ? F : 0.0)) * T;
    }
    case TS_RECOMPUTE_NONE:
    case TS_RECOMPUTE_COUNT:
    default:
        *hw_formula = f[0];
        return 0;
    }
}

/* Model and hardware FLOPs of the run into out; returns the time basis
 * MFU refers to (ts_compute_basis: 6PT, LoRA's 4PT + 6 P_lora T, plus
 * the attention matmuls when attention_flops is set). */
static double ts_compute_flops(const ts_run *run, const ts_params *p, ts_compute *out,
                               ts_flops_basis *basis)
{
    double P = p->active, T = run->tokens, L, h, base, recompute;
    double s = (double)run->seq; /* FLOPs are per token of the full sequence, whatever cp is */
    const char *hw_formula;
    ts_flops_basis b;

    /* Attention matmuls need L, h and s; a plain parameter count has none
     * (and then no attention_flops: ts_run_resolve). */
    if (p->from_shape && run->model.layers > 0) {
        L = (double)run->model.layers;
        h = (double)run->model.hidden;
    } else {
        L = 0;
        h = 0;
    }
    ts_compute_basis(run, p, &b);
    out->tokens = T;
    out->params_active = P;

    ts_term_set(&out->model_flops, b.weights * T, b.model_formula,
                b.lora ? "LoRA (Hu et al. 2021): the frozen base runs forward 2PT and input "
                         "gradients 2PT, no weight gradients; the adapters train (6 P_lora T); "
                         "attention matmuls and recompute not counted"
                       : "Kaplan et al. 2020: forward 2PT + backward 4PT; attention matmuls and "
                         "recompute not counted");
    ts_term_set(&out->model_flops_attn, (b.weights + b.attention) * T, b.attn_formula,
                p->from_shape ? "PaLM (Chowdhery et al. 2022, App. B): adds the QK^T and AV "
                                "matmuls, no causal-mask saving"
                              : "no model shape: the attention term is unknown and taken as 0");
    base = run->attention_flops ? out->model_flops_attn.value : out->model_flops.value;
    recompute = ts_compute_recompute(run, &b, P, L, h, s, T, &hw_formula);
    ts_term_set(&out->hardware_flops, base + recompute, hw_formula,
                "FLOPs the GPUs execute: the time basis plus recomputed forward passes "
                "(Korthikanti et al. 2022)");
    out->hfu = out->mfu * out->hardware_flops.value / base;
    *basis = b;
    return base;
}

/* GPU-hours, wall clock, throughput and cost from the time basis. */
static void ts_compute_time(const ts_run *run, const ts_flops_basis *b, double base,
                            ts_compute *out)
{
    double T = run->tokens, gpus = (double)run->gpus;
    double s = (double)run->seq, seqs_per_step = (double)run->global_batch;

    out->achieved_flops_per_gpu = out->peak_flops * out->mfu;
    ts_term_set(&out->gpu_hours, base / (out->achieved_flops_per_gpu * TS_SECONDS_PER_HOUR),
                b->hours_formula,
                "dense peak at the compute precision; MFU constant over the run; no restarts or "
                "evaluation");
    ts_term_set(&out->wall_seconds, out->gpu_hours.value * TS_SECONDS_PER_HOUR / gpus,
                "gpu_hours * 3600 / gpus",
                "all GPUs busy for the whole run; checkpoint and failure time not included");
    out->wall_days = out->wall_seconds.value / TS_SECONDS_PER_DAY;
    out->gpu_years = out->gpu_hours.value / TS_HOURS_PER_YEAR;
    out->tokens_per_second = T / out->wall_seconds.value;
    out->tokens_per_gpu_second = out->tokens_per_second / gpus;
    out->steps = T / (seqs_per_step * s);
    out->step_seconds = out->wall_seconds.value / out->steps;
    ts_term_set(&out->cost_usd, out->gpu_hours.value * run->gpu_hour_usd,
                "gpu_hours * gpu_hour_usd",
                run->gpu_hour_usd > 0 ? "compute only: storage, network and idle time not priced"
                                      : "no gpu_hour_usd given");
}

ts_status ts_compute_eval(const ts_run *run, const ts_params *p, ts_compute *out, ts_error *err)
{
    double base, T = run->tokens, mfu;
    ts_flops_basis b;
    ts_status st;

    *out = (ts_compute){ 0 };
    /* Resolved: tokens, seq, gpus and global_batch positive, mfu in
     * [0, 1], the compute precision's peak present (ts_run_resolve). */
    out->peak_flops = ts_gpu_peak(&run->gpu, run->compute_precision);
    if ((st = ts_compute_mfu(run, p, out, err)) != TS_OK) {
        *out = (ts_compute){ 0 };
        return st;
    }
    mfu = out->mfu;
    base = ts_compute_flops(run, p, out, &b);
    /* Recompute makes the GPUs execute more than the model needs: an mfu
     * that implies more than the peak cannot be reached. */
    if (out->hfu > 1.0) {
        double hfu = out->hfu;

        *out = (ts_compute){ 0 };
        return ts_error_set(err, TS_EINCOMPAT, "mfu",
                            "mfu %g with %s recompute means the GPUs execute %.3g of their peak "
                            "(hardware FLOPs utilisation above 1)",
                            mfu, ts_recompute_name(run->recompute), hfu);
    }
    ts_compute_time(run, &b, base, out);

    if (!ts_compute_all_finite(out)) {
        /* Name the input furthest (in orders of magnitude) from a real
         * run's: tokens ~1e12, mfu ~0.4, peak ~1e15 FLOP/s. */
        double dt = fabs(log10(T / 1e12)), dm = fabs(log10(mfu / 0.4));
        double dp = fabs(log10(out->peak_flops / 1e15));
        const char *field = dt >= dm && dt >= dp ? "tokens" : dm >= dp ? "mfu" : "peak_tflops";

        *out = (ts_compute){ 0 };
        return ts_error_set(err, TS_ERANGE, field,
                            "compute figures overflow for these inputs (%s is the most extreme)",
                            field);
    }
    return TS_OK;
}

ts_status ts_compute_estimate(const ts_run *r, ts_compute *out, ts_error *err)
{
    ts_run run;
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *out = (ts_compute){ 0 };
    run = *r; /* resolve a private copy: the caller's run is const */
    if ((st = ts_run_resolve(&run, err)) != TS_OK)
        return st;
    return ts_compute_resolved(&run, out, err);
}

/* A plan that fits with less than the search's margin (TS_SEARCH_MARGIN)
 * of HBM to spare leaves PyTorch's caching allocator little room: when no
 * cached block fits a request and cudaMalloc fails, it frees its cache
 * and retries (synchronising the device; torch.cuda.memory_stats()
 * num_alloc_retries), and Composer treats repeated retries as thrashing
 * that collapses throughput (mosaicml/composer#1998).  How often that
 * happens depends on fragmentation no estimate sees, so it is a warning on
 * the step time, not a cost in it. */
static void ts_compute_memory_warn(const ts_memory *m, ts_compute *c)
{
    double f = m->hbm_bytes > 0 ? m->total.value / m->hbm_bytes : 0;

    if (f > 1.0 - TS_SEARCH_MARGIN && f <= 1.0) {
        c->step.warnings |= TS_STEP_WARN_MEMORY;
        c->step.memory_fraction = f;
    }
}

ts_status ts_compute_outlook(const ts_run *r, const ts_memory *mem, const ts_ckpt *k, ts_compute *c,
                             ts_error *err)
{
    ts_status st;

    if ((st = ts_goodput_eval(r, k, c->wall_seconds.value, &c->goodput, err)) != TS_OK ||
        (st = ts_energy_eval(r, c->goodput.gpu_hours, &c->energy, err)) != TS_OK) {
        *c = (ts_compute){ 0 };
        return st;
    }
    ts_compute_memory_warn(mem, c);
    return TS_OK;
}

ts_status ts_compute_resolved(const ts_run *r, ts_compute *out, ts_error *err)
{
    ts_params p;
    ts_memory mem; /* ~14 KB, as ts_ckpt_resolved holds it */
    ts_ckpt k;
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *out = (ts_compute){ 0 };
    if ((st = ts_run_resolved_ok(r, err)) != TS_OK)
        return st;
    ts_model_count(&r->model, &p);
    if ((st = ts_compute_eval(r, &p, out, err)) != TS_OK)
        return st;
    /* Goodput needs the checkpoint's write and restore times, which need
     * the bytes per parameter of the memory estimate. */
    if ((st = ts_memory_eval(r, &p, &mem, err)) != TS_OK ||
        (st = ts_ckpt_eval(r, &mem, &k, err)) != TS_OK) {
        *out = (ts_compute){ 0 };
        return st;
    }
    return ts_compute_outlook(r, &mem, &k, out, err);
}
