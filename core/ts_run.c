/*
 * ts_run.c - run defaults, presets applied to a run, and resolution:
 * every field validated, the derived ones (dp or gpus, kv_heads, ffn,
 * top_k, tokens, global_batch) filled in.
 *
 * Resolution works on a private copy and writes it back only on success,
 * so a caller never sees a half-resolved run.  It is idempotent: a
 * resolved run has dp and gpus both set and consistent, and every default
 * already filled.  Error fields are the public JSON input names
 * (api/CONTRACT.md).
 */
#include "ts_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Upper limits.  They only exist to keep every product below finite and
 * every int64 product exact; each is orders of magnitude past real runs. */
#define TS_RUN_DEGREE_MAX  (INT64_C(1) << 20) /* tp, pp, cp, ep, dp */
#define TS_RUN_GPUS_MAX    (INT64_C(1) << 20) /* dp * tp * pp * cp */
#define TS_RUN_SEQ_MAX     (INT64_C(1) << 24)
#define TS_RUN_MB_MAX      (INT64_C(1) << 20)
#define TS_RUN_GB_MAX      (INT64_C(1) << 40) /* sequences per step */
#define TS_RUN_NODE_MAX    (INT64_C(1) << 16) /* GPUs per node */
#define TS_RUN_KEEP_MAX    (INT64_C(1) << 20)
#define TS_RUN_TOKENS_MAX  1e20
#define TS_RUN_OVERHEAD_GIB_MAX 1024.0
#define TS_RUN_FRAG_MAX    0.5     /* exclusive */
#define TS_RUN_HBM_MAX     1e15    /* 1 PB per GPU */
#define TS_RUN_FLOPS_MAX   1e18    /* 1 EFLOP/s per GPU */
#define TS_RUN_BW_MAX      1e15    /* bytes/s */
#define TS_RUN_GBPS_MAX    1e6     /* GB/s, 1 PB/s */
#define TS_RUN_CUDA_MIN    9.0     /* CUDA toolkit versions accepted: [9.0, 14) */
#define TS_RUN_CUDA_MAX    14.0
#define TS_RUN_MINUTES_MAX 1e7     /* ~19 years */
#define TS_RUN_HOURS_MAX   1e9
#define TS_RUN_BATCH_TOKENS (INT64_C(1) << 22)
#define TS_RUN_LAYERS_MAX  (INT64_C(1) << 20)
#define TS_RUN_LORA_MAX    (INT64_C(1) << 20)
#define TS_RUN_USD_MAX     1e6     /* per GPU-hour */

void ts_run_defaults(ts_run *r)
{
    const ts_gpu *g;

    if (r == NULL)
        return;
    memset(r, 0, sizeof *r);
    r->precision = TS_PREC_BF16;
    r->grad_precision = TS_PREC_BF16;
    r->compute_precision = TS_PREC_BF16;
    r->master_weights = true;
    r->optimizer = TS_OPT_ADAMW;
    r->trainable_fraction = 1.0;
    r->seq = 4096;
    r->micro_batch = 1;
    r->gpus = 8;
    r->tp = r->pp = r->cp = r->ep = 1;
    r->zero = 1;
    r->recompute = TS_RECOMPUTE_NONE;
    r->optimizer_precision = TS_PREC_FP32;
    r->frozen_precision = TS_QUANT_BF16;
    r->framework = TS_FW_MEGATRON;
    r->attention = TS_ATTN_FLASH;
    r->norm = TS_NORM_RMSNORM;
    r->pp_schedule = TS_PP_1F1B;
    r->vpp = 1;
    r->loss_chunks = 1;
    /* A missing catalogue entry leaves gpu zeroed; resolve then reports
     * field "gpu" instead of estimating against a made-up device. */
    g = ts_gpu_find("h100-sxm");
    if (g != NULL)
        r->gpu = *g;
    r->gpus_per_node = 8;
    r->mfu = 0; /* predicted by the step-time model (core/ts_step.c) */
    r->overhead_gib = 2.0;
    r->fragmentation = 0;

    r->ckpt.writer_gbps = 2;
    r->ckpt.nvme_gbps = 6;
    r->ckpt.shared_gbps = 100;
    r->ckpt.object_gbps = 20;
    r->ckpt.nvme_interval_min = 5;
    r->ckpt.shared_interval_min = 30;
    r->ckpt.object_interval_min = 180;
    r->ckpt.nvme_keep = 2;
    r->ckpt.shared_keep = 3;
    r->ckpt.object_keep = 5;
    r->ckpt.include_grads = false;
    r->ckpt.parallel_save = true;
    r->ckpt.gpu_mtbf_hours = 50000;
    r->ckpt.job_mtbf_hours = 0;
}

void ts_run_apply_preset(ts_run *r, const ts_preset *p)
{
    if (r == NULL || p == NULL)
        return;
    r->model = p->model;
    if (p->seq > 0)
        r->seq = p->seq;
    if (p->train_tokens > 0)
        r->tokens = p->train_tokens;
    snprintf(r->preset, sizeof r->preset, "%s", p->id != NULL ? p->id : "");
}

/* ---- field checks ------------------------------------------------- */

/* v in [lo, hi], or (lo, hi] when lo_open; hi exclusive when hi_open. */
static ts_status ts_run_real(double v, double lo, bool lo_open, double hi,
                             bool hi_open, const char *field, ts_error *err)
{
    bool ok = isfinite(v) && (lo_open ? v > lo : v >= lo) &&
              (hi_open ? v < hi : v <= hi);

    if (!ok)
        return ts_error_set(err, TS_EINVAL, field, "%s must be finite and in %c%g, %g%c, got %g",
                            field, lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']', v);
    return TS_OK;
}

static ts_status ts_run_check_enums(const ts_run *r, ts_error *err)
{
    if ((unsigned)r->precision >= TS_PREC_COUNT)
        return ts_error_set(err, TS_EINVAL, "precision", "unknown precision");
    if ((unsigned)r->grad_precision >= TS_PREC_COUNT)
        return ts_error_set(err, TS_EINVAL, "grad_precision", "unknown grad_precision");
    if ((unsigned)r->compute_precision >= TS_PREC_COUNT)
        return ts_error_set(err, TS_EINVAL, "compute_precision", "unknown compute_precision");
    if ((unsigned)r->optimizer >= TS_OPT_COUNT)
        return ts_error_set(err, TS_EINVAL, "optimizer", "unknown optimizer");
    if ((unsigned)r->recompute >= TS_RECOMPUTE_COUNT)
        return ts_error_set(err, TS_EINVAL, "recompute", "unknown recompute mode");
    /* Optimizer states are kept in fp32 or bf16 (torchtune's pure-bf16
     * AdamW); other widths are not what any framework ships. */
    if (r->optimizer_precision != TS_PREC_FP32 && r->optimizer_precision != TS_PREC_BF16)
        return ts_error_set(err, TS_EINVAL, "optimizer_precision",
                            "optimizer_precision must be fp32 or bf16");
    if ((unsigned)r->frozen_precision >= TS_QUANT_COUNT)
        return ts_error_set(err, TS_EINVAL, "frozen_precision", "unknown frozen_precision");
    if ((unsigned)r->framework >= TS_FW_COUNT)
        return ts_error_set(err, TS_EINVAL, "framework", "unknown framework");
    if ((unsigned)r->attention >= TS_ATTN_COUNT)
        return ts_error_set(err, TS_EINVAL, "attention", "unknown attention");
    if ((unsigned)r->norm >= TS_NORM_COUNT)
        return ts_error_set(err, TS_EINVAL, "norm", "unknown norm");
    if ((unsigned)r->pp_schedule >= TS_PP_COUNT)
        return ts_error_set(err, TS_EINVAL, "pp_schedule", "unknown pp_schedule");
    return TS_OK;
}

static ts_status ts_run_check_work(const ts_run *r, ts_error *err)
{
    ts_status st;

    if ((st = ts_run_real(r->trainable_fraction, 0, true, 1, false, "trainable_fraction", err)) != TS_OK ||
        (st = ts_check_int(r->seq, 1, TS_RUN_SEQ_MAX, "seq", err)) != TS_OK ||
        (st = ts_check_int(r->micro_batch, 1, TS_RUN_MB_MAX, "micro_batch", err)) != TS_OK ||
        (st = ts_check_int(r->global_batch, 0, TS_RUN_GB_MAX, "global_batch", err)) != TS_OK ||
        (st = ts_run_real(r->tokens, 0, false, TS_RUN_TOKENS_MAX, false, "tokens", err)) != TS_OK)
        return st;
    return TS_OK;
}

static ts_status ts_run_check_layout(const ts_run *r, ts_error *err)
{
    ts_status st;

    if ((st = ts_check_int(r->gpus, 0, TS_RUN_GPUS_MAX, "gpus", err)) != TS_OK ||
        (st = ts_check_int(r->dp, 0, TS_RUN_DEGREE_MAX, "dp", err)) != TS_OK ||
        (st = ts_check_int(r->tp, 1, TS_RUN_DEGREE_MAX, "tp", err)) != TS_OK ||
        (st = ts_check_int(r->pp, 1, TS_RUN_DEGREE_MAX, "pp", err)) != TS_OK ||
        (st = ts_check_int(r->cp, 1, TS_RUN_DEGREE_MAX, "cp", err)) != TS_OK ||
        (st = ts_check_int(r->ep, 1, TS_RUN_DEGREE_MAX, "ep", err)) != TS_OK ||
        (st = ts_check_int(r->zero, 0, 3, "zero", err)) != TS_OK ||
        (st = ts_check_int(r->vpp, 1, TS_RUN_DEGREE_MAX, "vpp", err)) != TS_OK ||
        (st = ts_check_int(r->first_stage_layers, 0, TS_RUN_LAYERS_MAX, "first_stage_layers", err)) != TS_OK ||
        (st = ts_check_int(r->last_stage_layers, 0, TS_RUN_LAYERS_MAX, "last_stage_layers", err)) != TS_OK ||
        (st = ts_check_int(r->loss_chunks, 1, TS_RUN_SEQ_MAX, "loss_chunks", err)) != TS_OK ||
        (st = ts_check_int(r->lora_rank, 0, TS_RUN_LORA_MAX, "lora_rank", err)) != TS_OK)
        return st;
    return TS_OK;
}

/* The CUDA toolkit must be able to run on the GPU at all: Ampere (sm_80)
 * arrived with CUDA 11.0, Hopper (sm_90) with 11.8, Blackwell (sm_100)
 * with 12.8; CUDA 13.0 dropped Volta (sm_70).  CUDA release notes. */
static ts_status ts_run_check_cuda(const ts_run *r, ts_error *err)
{
    int sm = r->gpu.sm;
    double lo;

    if (r->cuda == 0)
        return TS_OK;
    if (!(r->cuda >= TS_RUN_CUDA_MIN && r->cuda < TS_RUN_CUDA_MAX))
        return ts_error_set(err, TS_EINVAL, "cuda", "cuda must be finite and in [%g, %g), got %g",
                            TS_RUN_CUDA_MIN, TS_RUN_CUDA_MAX, r->cuda);
    if (sm == 0)
        return ts_error_set(err, TS_EINCOMPAT, "cuda",
                            "GPU '%s' is not an NVIDIA GPU: cuda does not apply", r->gpu.id);
    lo = sm >= 100 ? 12.8 : sm >= 90 ? 11.8 : sm >= 80 ? 11.0 : 9.0;
    if (r->cuda < lo - 1e-9)
        return ts_error_set(err, TS_EINCOMPAT, "cuda",
                            "GPU '%s' (sm_%d) needs CUDA %.1f or later", r->gpu.id, sm, lo);
    if (sm < 75 && r->cuda >= 13.0)
        return ts_error_set(err, TS_EINCOMPAT, "cuda",
                            "CUDA 13 no longer supports GPU '%s' (sm_%d)", r->gpu.id, sm);
    return TS_OK;
}

static ts_status ts_run_check_hardware(const ts_run *r, ts_error *err)
{
    const ts_gpu *g = &r->gpu;
    ts_status st;

    if (g->id[0] == '\0' && g->hbm_bytes == 0 && g->bf16_flops == 0)
        return ts_error_set(err, TS_EINVAL, "gpu", "no GPU given");
    if ((st = ts_run_real(g->hbm_bytes, 0, true, TS_RUN_HBM_MAX, false, "hbm_gb", err)) != TS_OK ||
        (st = ts_run_real(g->bf16_flops, 0, true, TS_RUN_FLOPS_MAX, false, "peak_tflops", err)) != TS_OK ||
        (st = ts_run_real(g->fp32_flops, 0, false, TS_RUN_FLOPS_MAX, false, "gpu", err)) != TS_OK ||
        (st = ts_run_real(g->fp8_flops, 0, false, TS_RUN_FLOPS_MAX, false, "gpu", err)) != TS_OK ||
        (st = ts_run_real(g->hbm_bw, 0, false, TS_RUN_BW_MAX, false, "gpu", err)) != TS_OK ||
        (st = ts_check_int(r->gpus_per_node, 1, TS_RUN_NODE_MAX, "gpus_per_node", err)) != TS_OK ||
        (st = ts_run_real(r->mfu, 0, false, 1, false, "mfu", err)) != TS_OK ||
        (st = ts_run_real(r->nvlink_gbps, 0, false, TS_RUN_GBPS_MAX, false, "nvlink_gbps", err)) != TS_OK ||
        (st = ts_run_real(r->net_gbps, 0, false, TS_RUN_GBPS_MAX, false, "net_gbps", err)) != TS_OK ||
        (st = ts_run_real(r->gemm_efficiency, 0, false, 1, false, "gemm_efficiency", err)) != TS_OK ||
        (st = ts_run_check_cuda(r, err)) != TS_OK ||
        (st = ts_run_real(r->gpu_hour_usd, 0, false, TS_RUN_USD_MAX, false, "gpu_hour_usd", err)) != TS_OK ||
        (st = ts_run_real(r->overhead_gib, 0, false, TS_RUN_OVERHEAD_GIB_MAX, false, "overhead_gib", err)) != TS_OK ||
        (st = ts_run_real(r->fragmentation, 0, false, TS_RUN_FRAG_MAX, true, "fragmentation", err)) != TS_OK)
        return st;
    /* The compute precision selects the peak: it must exist on this GPU. */
    if ((r->compute_precision == TS_PREC_FP8 && !(g->fp8_flops > 0)) ||
        (r->compute_precision == TS_PREC_FP32 && !(g->fp32_flops > 0)))
        return ts_error_set(err, TS_EINCOMPAT, "compute_precision",
                            "GPU '%s' has no dense %s peak", g->id,
                            ts_precision_name(r->compute_precision));
    return TS_OK;
}

static ts_status ts_run_check_ckpt(const ts_ckpt_cfg *k, ts_error *err)
{
    ts_status st;

    if ((st = ts_run_real(k->writer_gbps, 0, true, TS_RUN_GBPS_MAX, false, "writer_gbps", err)) != TS_OK ||
        (st = ts_run_real(k->nvme_gbps, 0, true, TS_RUN_GBPS_MAX, false, "nvme_gbps", err)) != TS_OK ||
        (st = ts_run_real(k->shared_gbps, 0, true, TS_RUN_GBPS_MAX, false, "shared_gbps", err)) != TS_OK ||
        (st = ts_run_real(k->object_gbps, 0, true, TS_RUN_GBPS_MAX, false, "object_gbps", err)) != TS_OK ||
        (st = ts_run_real(k->nvme_interval_min, 0, true, TS_RUN_MINUTES_MAX, false, "nvme_interval_min", err)) != TS_OK ||
        (st = ts_run_real(k->shared_interval_min, 0, true, TS_RUN_MINUTES_MAX, false, "shared_interval_min", err)) != TS_OK ||
        (st = ts_run_real(k->object_interval_min, 0, true, TS_RUN_MINUTES_MAX, false, "object_interval_min", err)) != TS_OK ||
        (st = ts_check_int(k->nvme_keep, 1, TS_RUN_KEEP_MAX, "nvme_keep", err)) != TS_OK ||
        (st = ts_check_int(k->shared_keep, 1, TS_RUN_KEEP_MAX, "shared_keep", err)) != TS_OK ||
        (st = ts_check_int(k->object_keep, 1, TS_RUN_KEEP_MAX, "object_keep", err)) != TS_OK ||
        (st = ts_run_real(k->gpu_mtbf_hours, 0, true, TS_RUN_HOURS_MAX, false, "gpu_mtbf_hours", err)) != TS_OK ||
        (st = ts_run_real(k->job_mtbf_hours, 0, false, TS_RUN_HOURS_MAX, false, "job_mtbf_hours", err)) != TS_OK)
        return st;
    return TS_OK;
}

/* gpus = dp * tp * pp * cp: derive whichever is missing, or check both. */
static ts_status ts_run_derive_layout(ts_run *r, ts_error *err)
{
    /* tp, pp, cp <= 2^20 each: the product of three fits int64 (2^60). */
    int64_t mp = r->tp * r->pp * r->cp;

    if (mp > TS_RUN_GPUS_MAX)
        return ts_error_set(err, TS_EINVAL, "gpus",
                            "tp * pp * cp = %lld exceeds %lld GPUs",
                            (long long)mp, (long long)TS_RUN_GPUS_MAX);
    if (r->gpus == 0 && r->dp == 0)
        return ts_error_set(err, TS_EINVAL, "gpus", "give gpus or dp");
    if (r->dp == 0) {
        if (r->gpus % mp != 0)
            return ts_error_set(err, TS_EINCOMPAT, "gpus",
                                "gpus %lld is not divisible by tp * pp * cp = %lld",
                                (long long)r->gpus, (long long)mp);
        r->dp = r->gpus / mp;
        return TS_OK;
    }
    /* dp, mp <= 2^20: the product fits int64. */
    if (r->dp * mp > TS_RUN_GPUS_MAX)
        return ts_error_set(err, TS_EINVAL, "dp",
                            "dp * tp * pp * cp = %lld exceeds %lld GPUs",
                            (long long)(r->dp * mp), (long long)TS_RUN_GPUS_MAX);
    if (r->gpus == 0) {
        r->gpus = r->dp * mp;
        return TS_OK;
    }
    if (r->gpus != r->dp * mp)
        return ts_error_set(err, TS_EINCOMPAT, "gpus",
                            "gpus %lld != dp * tp * pp * cp = %lld",
                            (long long)r->gpus, (long long)(r->dp * mp));
    return TS_OK;
}

/* Pipeline schedule and uneven stages, as Megatron-LM accepts them
 * (megatron/training/arguments.py: decoder_first/last_pipeline_num_layers,
 * num_layers_per_virtual_pipeline_stage; interleaving needs pp > 1). */
static ts_status ts_run_check_pipeline(const ts_run *r, bool shape, ts_error *err)
{
    int64_t edge, middle;

    if (r->pp_schedule == TS_PP_INTERLEAVED && r->pp < 2)
        return ts_error_set(err, TS_EINCOMPAT, "pp_schedule",
                            "the interleaved schedule needs pp >= 2, got pp %lld",
                            (long long)r->pp);
    if (r->vpp > 1 && r->pp_schedule != TS_PP_INTERLEAVED)
        return ts_error_set(err, TS_EINCOMPAT, "vpp",
                            "vpp %lld needs pp_schedule \"interleaved\"", (long long)r->vpp);
    if (r->pp == 1 && (r->first_stage_layers > 0 || r->last_stage_layers > 0))
        return ts_error_set(err, TS_EINCOMPAT, r->first_stage_layers > 0 ? "first_stage_layers"
                                                                          : "last_stage_layers",
                            "stage layer counts need pp >= 2");
    if (!shape) {
        if (r->first_stage_layers > 0 || r->last_stage_layers > 0 || r->vpp > 1)
            return ts_error_set(err, TS_EINCOMPAT,
                                r->vpp > 1 ? "vpp" : r->first_stage_layers > 0 ? "first_stage_layers"
                                                                                : "last_stage_layers",
                                "pipeline stage layouts need a model shape (layers)");
        return TS_OK;
    }
    edge = r->first_stage_layers + r->last_stage_layers;
    middle = r->pp - (r->first_stage_layers > 0) - (r->last_stage_layers > 0);
    /* Layers left for the stages whose count was not given: at least one
     * each (a stage cannot be empty). */
    if (edge > 0 && r->model.layers - edge < middle)
        return ts_error_set(err, TS_EINCOMPAT,
                            r->first_stage_layers > 0 ? "first_stage_layers" : "last_stage_layers",
                            "first_stage_layers + last_stage_layers = %lld leaves %lld layers "
                            "for %lld other stages", (long long)edge,
                            (long long)(r->model.layers - edge), (long long)middle);
    if (edge > 0 && middle == 0 && edge != r->model.layers)
        return ts_error_set(err, TS_EINCOMPAT, "last_stage_layers",
                            "with pp 2 the two stage counts must add up to layers %lld, got %lld",
                            (long long)r->model.layers, (long long)edge);
    if (r->vpp > 1 && r->vpp * r->pp > r->model.layers)
        return ts_error_set(err, TS_EINCOMPAT, "vpp",
                            "vpp * pp = %lld exceeds layers %lld: a virtual stage would be empty",
                            (long long)(r->vpp * r->pp), (long long)r->model.layers);
    return TS_OK;
}

/* Degrees the model shape must divide (Megatron-LM's asserts). */
static ts_status ts_run_check_split(const ts_run *r, bool shape, ts_error *err)
{
    const ts_model *m = &r->model;
    ts_status st;
    int64_t kv = m->kv_heads != 0 ? m->kv_heads : m->heads;

    if (shape) {
        if (m->heads % r->tp != 0)
            return ts_error_set(err, TS_EINCOMPAT, "tp",
                                "heads %lld is not divisible by tp %lld",
                                (long long)m->heads, (long long)r->tp);
        /* KV heads split across TP ranks, or replicated when fewer. */
        if (kv >= r->tp ? kv % r->tp != 0 : r->tp % kv != 0)
            return ts_error_set(err, TS_EINCOMPAT, "tp",
                                "kv_heads %lld and tp %lld: one must divide the other",
                                (long long)kv, (long long)r->tp);
        /* Uneven splits are allowed (Llama 3 405B: 126 layers on pp 16);
         * every stage needs at least one layer. */
        if (r->pp > m->layers)
            return ts_error_set(err, TS_EINCOMPAT, "pp",
                                "pp %lld exceeds layers %lld: a stage would be empty",
                                (long long)r->pp, (long long)m->layers);
        if (r->lora_rank > m->hidden)
            return ts_error_set(err, TS_EINCOMPAT, "lora_rank",
                                "lora_rank %lld exceeds hidden %lld",
                                (long long)r->lora_rank, (long long)m->hidden);
    }
    if ((st = ts_run_check_pipeline(r, shape, err)) != TS_OK)
        return st;
    /* Every route refuses it alike (the audit found /v1/fit accepting
     * what /v1/plan rejected). */
    if (r->attention_flops && !shape)
        return ts_error_set(err, TS_EINCOMPAT, "attention_flops",
                            "attention-aware FLOPs need a model shape (layers, hidden), not a plain params count");
    if (r->seq % r->cp != 0)
        return ts_error_set(err, TS_EINCOMPAT, "cp",
                            "seq %lld is not divisible by cp %lld",
                            (long long)r->seq, (long long)r->cp);
    if (r->ep > 1) {
        if (m->experts <= 1)
            return ts_error_set(err, TS_EINCOMPAT, "ep",
                                "ep %lld needs a mixture-of-experts model (experts > 1)",
                                (long long)r->ep);
        if (m->experts % r->ep != 0)
            return ts_error_set(err, TS_EINCOMPAT, "ep",
                                "experts %lld is not divisible by ep %lld",
                                (long long)m->experts, (long long)r->ep);
        if (r->dp % r->ep != 0)
            return ts_error_set(err, TS_EINCOMPAT, "ep",
                                "dp %lld is not divisible by ep %lld",
                                (long long)r->dp, (long long)r->ep);
    }
    if (r->offload_params && r->zero != 3)
        return ts_error_set(err, TS_EINCOMPAT, "offload_params",
                            "offload_params needs zero 3 (ZeRO-Infinity), got zero %d", r->zero);
    if (r->offload_optimizer && r->zero == 0)
        return ts_error_set(err, TS_EINCOMPAT, "offload_optimizer",
                            "offload_optimizer needs zero >= 1 (ZeRO-Offload)");
    return TS_OK;
}

ts_status ts_run_resolve(ts_run *r, ts_error *err)
{
    ts_run w;
    ts_params p;
    ts_status st;
    int64_t per_step;

    if (r == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    w = *r;
    w.preset[sizeof w.preset - 1] = '\0';
    w.gpu.id[sizeof w.gpu.id - 1] = '\0';
    w.gpu.name[sizeof w.gpu.name - 1] = '\0';

    if ((st = ts_run_check_enums(&w, err)) != TS_OK ||
        (st = ts_model_params(&w.model, &p, err)) != TS_OK ||
        (st = ts_run_check_work(&w, err)) != TS_OK ||
        (st = ts_run_check_layout(&w, err)) != TS_OK ||
        (st = ts_run_check_hardware(&w, err)) != TS_OK ||
        (st = ts_run_check_ckpt(&w.ckpt, err)) != TS_OK ||
        (st = ts_run_derive_layout(&w, err)) != TS_OK ||
        (st = ts_run_check_split(&w, p.from_shape, err)) != TS_OK)
        return st;

    /* Shape defaults documented in trainsize.h. */
    if (p.from_shape) {
        if (w.model.kv_heads == 0)
            w.model.kv_heads = w.model.heads;
        if (w.model.ffn == 0)
            w.model.ffn = 4 * w.model.hidden;
        if (w.model.experts > 1 && w.model.top_k == 0)
            w.model.top_k = 1;
    }

    /* Chinchilla's 20 tokens per parameter when neither the user nor a
     * preset gave a token count. */
    /* params <= 1e15, so 20 P stays below the 1e20 token limit. */
    if (w.tokens == 0)
        w.tokens = 20.0 * p.total;

    /* dp, micro_batch <= 2^20 each: the product fits int64.  No global
     * batch given: about 4M tokens per step (2^22, Llama 2's batch,
     * Touvron et al. 2023b section 2.2; Llama 3 405B started there),
     * rounded up to whole micro-batches on every data-parallel rank. */
    per_step = w.dp * w.micro_batch;
    if (w.global_batch == 0) {
        int64_t seqs = (TS_RUN_BATCH_TOKENS + w.seq - 1) / w.seq;
        w.global_batch = (seqs + per_step - 1) / per_step * per_step;
    }
    if (w.global_batch % per_step != 0)
        return ts_error_set(err, TS_EINCOMPAT, "global_batch",
                            "global_batch %lld is not divisible by dp * micro_batch = %lld",
                            (long long)w.global_batch, (long long)per_step);

    /* fp32 weights are their own master copy: a second one is never kept. */
    if (w.precision == TS_PREC_FP32)
        w.master_weights = false;

    *r = w;
    return TS_OK;
}
