/*
 * ts_run.c - run defaults, presets applied to a run, and resolution:
 * every field validated, the derived ones (dp or gpus, kv_heads, ffn,
 * top_k, tokens, global_batch) filled in.
 *
 * The defaults and the per-field range checks are loops over the field
 * registry (ts_fields[], ts_fields.def: DEF, LO, HI); what involves several fields
 * (divisibility, the GPU, the CUDA toolkit, pipeline layouts) is here.
 * Resolution works on a private copy and writes it back only on success,
 * so a caller never sees a half-resolved run.  It is idempotent: a
 * resolved run has dp and gpus both set and consistent, and every default
 * already filled.  The estimators resolve once at their entry; a solver
 * or the search that changes a resolved run's layout re-derives it with
 * ts_run_relayout() (ts_internal.h) instead of a whole resolution.  Error
 * fields are the public JSON input names (api/CONTRACT.md).
 */
#include "ts_internal.h"
#include "ts_fields.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Limits of what the registry's per-field ranges (ts_fields.def) do not
 * cover: products of fields and the GPU's own figures.  They only exist to
 * keep every product below finite and every int64 product exact; each is
 * orders of magnitude past real runs. */
#define TS_RUN_GPUS_MAX  (INT64_C(1) << 20) /* dp * tp * pp * cp */
#define TS_RUN_HBM_MAX   1e15               /* 1 PB per GPU */
#define TS_RUN_FLOPS_MAX 1e18               /* 1 EFLOP/s per GPU */
#define TS_RUN_BW_MAX    1e15               /* bytes/s */
#define TS_RUN_GB_MAX    (INT64_C(1) << 40) /* = the registry's global_batch limit */

/* The GPU's catalogue id before a request names one.  A missing entry
 * leaves gpu zeroed; resolve then reports field "gpu" instead of
 * estimating against a made-up device. */
#define TS_RUN_GPU_DEFAULT "h100-sxm"

/* A plain member of the run: where it is, by the registry's offset. */
static void *ts_run_at(ts_run *r, const ts_field *f)
{
    return (char *)r + f->off;
}

static const void *ts_run_at_c(const ts_run *r, const ts_field *f)
{
    return (const char *)r + f->off;
}

void ts_run_defaults(ts_run *r)
{
    const ts_gpu *g;
    size_t i;

    if (r == NULL)
        return;
    memset(r, 0, sizeof *r);
    /* The registry's DEF column, stored as the member's kind. */
    for (i = 0; i < TS_FI_COUNT; i++) {
        const ts_field *f = &ts_fields[i];
        void *at = ts_run_at(r, f);

        switch (f->kind) {
        case TS_FK_INT64:
            *(int64_t *)at = (int64_t)f->def;
            break;
        case TS_FK_INT:
        case TS_FK_ENUM:
            *(int *)at = (int)f->def;
            break;
        case TS_FK_NUM:
        case TS_FK_NUM_OPT:
            *(double *)at = f->def;
            break;
        case TS_FK_BOOL:
            *(bool *)at = f->def != 0;
            break;
        case TS_FK_CUSTOM:
            break;
        }
    }
    /* The custom members with a default of their own (params and the
     * preset are 0: none). */
    if ((g = ts_gpu_find(TS_RUN_GPU_DEFAULT)) != NULL)
        r->gpu = *g;
    r->lora_targets = (unsigned)ts_fields[TS_FI_LORA_TARGETS].def;
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
static ts_status ts_run_real(double v, double lo, bool lo_open, double hi, bool hi_open,
                             const char *field, ts_error *err)
{
    bool ok = isfinite(v) && (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);

    if (!ok)
        return ts_error_set(err, TS_EINVAL, field, "%s must be finite and in %c%g, %g%c, got %g",
                            field, lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']', v);
    return TS_OK;
}

/* A number where 0 means "not given": 0 or in range.  With an exclusive
 * lower bound of 0 that is [0, hi], said so. */
static ts_status ts_run_opt(double v, double lo, bool lo_open, double hi, bool hi_open,
                            const char *field, ts_error *err)
{
    if (lo == 0 && lo_open)
        return ts_run_real(v, 0, false, hi, hi_open, field, err);
    return v == 0 ? TS_OK : ts_run_real(v, lo, lo_open, hi, hi_open, field, err);
}

/* One enum member's value is one of its names' enumerators. */
static ts_status ts_run_enum(const ts_field *f, int v, ts_error *err)
{
    char names[160];
    size_t k, o = 0;

    for (k = 0; f->values[k] != NULL; k++)
        if (f->ints[k] == v)
            return TS_OK;
    names[0] = '\0';
    for (k = 0; f->values[k] != NULL && o < sizeof names; k++) {
        int n = snprintf(names + o, sizeof names - o, " %s", f->values[k]);

        if (n < 0)
            break;
        o += (size_t)n;
    }
    return ts_error_set(err, TS_EINVAL, f->name, "%s must be one of%s, got %d", f->name, names, v);
}

/* One member's range (or value list), by its kind.  Custom members are
 * their binder's or the route's to check (the GPU's: ts_run_check_gpu
 * below); the shape's, ts_model_params()'s, whose bounds depend on it. */
static ts_status ts_run_check_field(const ts_run *r, const ts_field *f, ts_error *err)
{
    const void *at = ts_run_at_c(r, f);
    bool lo_open = (f->flags & TS_FF_XMIN) != 0, hi_open = (f->flags & TS_FF_XMAX) != 0;

    /* Unsigned: an offset before model wraps past its size. */
    if (f->off - offsetof(ts_run, model) < sizeof r->model)
        return TS_OK;
    switch (f->kind) {
    case TS_FK_INT64:
        return ts_check_int(*(const int64_t *)at, (int64_t)f->minimum, (int64_t)f->maximum, f->name,
                            err);
    case TS_FK_INT:
        return ts_check_int(*(const int *)at, (int64_t)f->minimum, (int64_t)f->maximum, f->name,
                            err);
    case TS_FK_NUM:
        return ts_run_real(*(const double *)at, f->minimum, lo_open, f->maximum, hi_open, f->name,
                           err);
    case TS_FK_NUM_OPT:
        return ts_run_opt(*(const double *)at, f->minimum, lo_open, f->maximum, hi_open, f->name,
                          err);
    case TS_FK_ENUM:
        return ts_run_enum(f, *(const int *)at, err);
    case TS_FK_BOOL:
    case TS_FK_CUSTOM:
        break;
    }
    return TS_OK;
}

/* Every row of the registry whose FLAGS include all of only (0: every
 * row; TS_FF_LAYOUT: the members the solvers and the search vary), in
 * the registry's order: the first bad one is reported. */
static ts_status ts_run_check_fields(const ts_run *r, unsigned only, ts_error *err)
{
    ts_status st;
    size_t i;

    for (i = 0; i < TS_FI_COUNT; i++)
        if ((ts_fields[i].flags & only) == only &&
            (st = ts_run_check_field(r, &ts_fields[i], err)) != TS_OK)
            return st;
    return TS_OK;
}

/* The CUDA toolkit must be able to run on the GPU at all: Ampere (sm_80)
 * arrived with CUDA 11.0, Hopper (sm_90) with 11.8, Blackwell (sm_100,
 * and sm_120 of the RTX parts) with 12.8, Blackwell Ultra (sm_103: B300,
 * GB300) with 12.9; CUDA 13.0 dropped Volta (sm_70).  CUDA release notes.
 * The version's own range is the registry's. */
static ts_status ts_run_check_cuda(const ts_run *r, ts_error *err)
{
    int sm = r->gpu.sm;
    double lo;

    if (r->cuda == 0)
        return TS_OK;
    if (sm == 0)
        return ts_error_set(err, TS_EINCOMPAT, "cuda",
                            "GPU '%s' is not an NVIDIA GPU: cuda does not apply", r->gpu.id);
    lo = sm == 103 ? 12.9 : sm >= 100 ? 12.8 : sm >= 90 ? 11.8 : sm >= 80 ? 11.0 : 9.0;
    if (r->cuda < lo - 1e-9)
        return ts_error_set(err, TS_EINCOMPAT, "cuda", "GPU '%s' (sm_%d) needs CUDA %.1f or later",
                            r->gpu.id, sm, lo);
    if (sm < 75 && r->cuda >= 13.0)
        return ts_error_set(err, TS_EINCOMPAT, "cuda",
                            "CUDA 13 no longer supports GPU '%s' (sm_%d)", r->gpu.id, sm);
    return TS_OK;
}

/* The GPU's binders (gpu, hbm_gb, hbm_gib, peak_tflops) write into the
 * catalogue copy: its figures, and what needs them. */
static ts_status ts_run_check_gpu(const ts_run *r, ts_error *err)
{
    const ts_gpu *g = &r->gpu;
    ts_status st;

    if (g->id[0] == '\0' && g->hbm_bytes == 0 && g->bf16_flops == 0)
        return ts_error_set(err, TS_EINVAL, "gpu", "no GPU given");
    if ((st = ts_run_real(g->hbm_bytes, 0, true, TS_RUN_HBM_MAX, false, "hbm_gb", err)) != TS_OK ||
        (st = ts_run_real(g->bf16_flops, 0, true, TS_RUN_FLOPS_MAX, false, "peak_tflops", err)) !=
            TS_OK ||
        (st = ts_run_real(g->fp32_flops, 0, false, TS_RUN_FLOPS_MAX, false, "gpu", err)) != TS_OK ||
        (st = ts_run_real(g->fp8_flops, 0, false, TS_RUN_FLOPS_MAX, false, "gpu", err)) != TS_OK ||
        (st = ts_run_real(g->hbm_bw, 0, false, TS_RUN_BW_MAX, false, "gpu", err)) != TS_OK ||
        (st = ts_run_check_cuda(r, err)) != TS_OK)
        return st;
    /* bf16 before Ampere has no tensor cores to run on (PyTorch emulates
     * it far below the FP16 peak the catalogue lists): fp16 is what such
     * runs use (Megatron --fp16, DeepSpeed fp16). */
    if (!ts_gpu_bf16(g) && (r->compute_precision == TS_PREC_BF16 || r->precision == TS_PREC_BF16))
        return ts_error_set(err, TS_EINCOMPAT,
                            r->precision == TS_PREC_BF16 ? "precision" : "compute_precision",
                            "GPU '%s' has no BF16 tensor cores (compute capability %d.%d; BF16 "
                            "came with 8.0): bf16 would run emulated; use fp16",
                            g->id, g->sm / 10, g->sm % 10);
    /* The compute precision selects the peak: it must exist on this GPU. */
    if ((r->compute_precision == TS_PREC_FP8 && !(g->fp8_flops > 0)) ||
        (r->compute_precision == TS_PREC_FP32 && !(g->fp32_flops > 0)))
        return ts_error_set(err, TS_EINCOMPAT, "compute_precision", "GPU '%s' has no dense %s peak",
                            g->id, ts_precision_name(r->compute_precision));
    return TS_OK;
}

/* gpus = dp * tp * pp * cp: derive whichever is missing, or check both. */
static ts_status ts_run_derive_layout(ts_run *r, ts_error *err)
{
    /* tp, pp, cp <= 2^20 each: the product of three fits int64 (2^60). */
    int64_t mp = r->tp * r->pp * r->cp;

    if (mp > TS_RUN_GPUS_MAX)
        return ts_error_set(err, TS_EINVAL, "gpus", "tp * pp * cp = %lld exceeds %lld GPUs",
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
        return ts_error_set(err, TS_EINVAL, "dp", "dp * tp * pp * cp = %lld exceeds %lld GPUs",
                            (long long)(r->dp * mp), (long long)TS_RUN_GPUS_MAX);
    if (r->gpus == 0) {
        r->gpus = r->dp * mp;
        return TS_OK;
    }
    if (r->gpus != r->dp * mp)
        return ts_error_set(err, TS_EINCOMPAT, "gpus", "gpus %lld != dp * tp * pp * cp = %lld",
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
        return ts_error_set(err, TS_EINCOMPAT, "vpp", "vpp %lld needs pp_schedule \"interleaved\"",
                            (long long)r->vpp);
    if (r->pp == 1 && (r->first_stage_layers > 0 || r->last_stage_layers > 0))
        return ts_error_set(err, TS_EINCOMPAT,
                            r->first_stage_layers > 0 ? "first_stage_layers" : "last_stage_layers",
                            "stage layer counts need pp >= 2");
    if (!shape) {
        if (r->first_stage_layers > 0 || r->last_stage_layers > 0 || r->vpp > 1)
            return ts_error_set(err, TS_EINCOMPAT,
                                r->vpp > 1                  ? "vpp"
                                : r->first_stage_layers > 0 ? "first_stage_layers"
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
                            "for %lld other stages",
                            (long long)edge, (long long)(r->model.layers - edge),
                            (long long)middle);
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

/* The adapters' own options on a run without adapters would be accepted
 * and change nothing: refused, as a silent no-op would mislead. */
static ts_status ts_run_check_no_adapters(const ts_run *r, ts_error *err)
{
    if (r->lora_dropout > 0)
        return ts_error_set(err, TS_EINCOMPAT, "lora_dropout",
                            "lora_dropout %g needs LoRA adapters (lora_rank > 0)", r->lora_dropout);
    if (r->adapter_precision != TS_ADAPTER_DEFAULT)
        return ts_error_set(err, TS_EINCOMPAT, "adapter_precision",
                            "adapter_precision %s needs LoRA adapters (lora_rank > 0)",
                            ts_adapter_precision_name(r->adapter_precision));
    if (r->lora_impl != TS_LORA_IMPL_PEFT)
        return ts_error_set(err, TS_EINCOMPAT, "lora_impl",
                            "lora_impl %s needs LoRA adapters (lora_rank > 0)",
                            ts_lora_impl_name(r->lora_impl));
    if (r->lora_save != 0)
        return ts_error_set(err, TS_EINCOMPAT, "lora_modules_to_save",
                            "lora_modules_to_save needs LoRA adapters (lora_rank > 0); without "
                            "them every module trains already");
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
            return ts_error_set(err, TS_EINCOMPAT, "tp", "heads %lld is not divisible by tp %lld",
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
                                "lora_rank %lld exceeds hidden %lld", (long long)r->lora_rank,
                                (long long)m->hidden);
    }
    /* The API sets only these sets (ts_lora_targets_parse); a core
     * caller's own must be one of them too. */
    if (r->lora_rank > 0 &&
        (r->lora_targets == 0 || (r->lora_targets & ~(TS_LORA_ALL_LINEAR | TS_LORA_QKV)) != 0 ||
         ((r->lora_targets & TS_LORA_QKV) &&
          (r->lora_targets & (TS_LORA_Q | TS_LORA_K | TS_LORA_V))))) {
        return ts_error_set(err, TS_EINVAL, "lora_targets",
                            "lora_targets %#x is not a set of the layer's matrices",
                            r->lora_targets);
    }
    if ((r->lora_save & ~TS_LORA_SAVE_ALL) != 0)
        return ts_error_set(err, TS_EINVAL, "lora_modules_to_save",
                            "lora_modules_to_save %#x is not a set of embed_tokens, lm_head",
                            r->lora_save);
    if (r->lora_rank == 0 && (st = ts_run_check_no_adapters(r, err)) != TS_OK)
        return st;
    if ((st = ts_run_check_pipeline(r, shape, err)) != TS_OK)
        return st;
    /* Every route refuses it alike (the audit found /v1/fit accepting
     * what /v1/plan rejected). */
    if (r->attention_flops && !shape)
        return ts_error_set(
            err, TS_EINCOMPAT, "attention_flops",
            "attention-aware FLOPs need a model shape (layers, hidden), not a plain params count");
    if (r->seq % r->cp != 0)
        return ts_error_set(err, TS_EINCOMPAT, "cp", "seq %lld is not divisible by cp %lld",
                            (long long)r->seq, (long long)r->cp);
    if (r->ep > 1) {
        if (m->experts <= 1)
            return ts_error_set(err, TS_EINCOMPAT, "ep",
                                "ep %lld needs a mixture-of-experts model (experts > 1)",
                                (long long)r->ep);
        if (m->experts % r->ep != 0)
            return ts_error_set(err, TS_EINCOMPAT, "ep", "experts %lld is not divisible by ep %lld",
                                (long long)m->experts, (long long)r->ep);
        if (r->dp % r->ep != 0)
            return ts_error_set(err, TS_EINCOMPAT, "ep", "dp %lld is not divisible by ep %lld",
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

ts_precision ts_framework_grad_precision(ts_framework fw, ts_precision precision,
                                         bool master_weights)
{
    /* fp8 (Transformer Engine) casts GEMM inputs; gradients stay 16-bit
     * at least, never 1 byte. */
    ts_precision g = precision == TS_PREC_FP8 ? TS_PREC_BF16 : precision;

    switch (fw) {
    case TS_FW_MEGATRON:
        return precision != TS_PREC_FP32 ? TS_PREC_FP32 : g;
    case TS_FW_FSDP:
    case TS_FW_HF:
        /* PyTorch gradients have the parameter's dtype (HF Trainer: the
         * model's torch_dtype; fp32 when that is the master copy). */
        return master_weights ? TS_PREC_FP32 : precision;
    case TS_FW_DEEPSPEED:
    case TS_FW_COUNT:
    default:
        return g;
    }
}

/* The default global batch (trainsize.h, ts_batch_default): the larger
 * of the micro-batch counts that reach TS_BATCH_TOKENS tokens per step
 * and that keep the pipeline bubble (p-1)/(v m) at most 1/4 of the ideal
 * time.  The bubble fraction is Narayanan et al. 2021 (SC21, "Efficient
 * Large-Scale Language Model Training on GPU Clusters Using
 * Megatron-LM"), section 2.2.1 (1F1B) and 2.2.2 (interleaved: divided by
 * v); they keep m >> p for it to be small.  Megatron-LM's interleaved
 * schedule runs micro-batches in groups of p (schedules.py,
 * forward_backward_pipelining_with_interleaving; older releases assert
 * that p divides m), hence the rounding.  No allocation, O(1). */
ts_status ts_batch_default(const ts_run *r, ts_batch_rule *out, ts_error *err)
{
    int64_t per_step, seqs, m_tok, m_bub = 0, m;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *out = (ts_batch_rule){ 0 };
    /* dp, micro_batch, pp, vpp at most 2^20 each (the registry's
     * limits): every product below fits int64. */
    if (r->dp < 1 || r->micro_batch < 1 || r->seq < 1 || r->pp < 1 || r->vpp < 1 ||
        r->dp > TS_RUN_GPUS_MAX || r->micro_batch > TS_RUN_GPUS_MAX || r->pp > TS_RUN_GPUS_MAX ||
        r->vpp > TS_RUN_GPUS_MAX)
        return ts_error_set(err, TS_EINVAL, "dp",
                            "the default global batch needs a resolved layout (dp, micro_batch, "
                            "seq, pp, vpp >= 1)");
    per_step = r->dp * r->micro_batch;
    seqs = (TS_BATCH_TOKENS + r->seq - 1) / r->seq;
    m_tok = (seqs + per_step - 1) / per_step;
    if (r->pp > 1) {
        m_bub = (TS_BATCH_BUBBLE_DIV * (r->pp - 1) + r->vpp - 1) / r->vpp;
        if (r->pp_schedule == TS_PP_INTERLEAVED)
            m_bub = (m_bub + r->pp - 1) / r->pp * r->pp;
    }
    m = m_tok > m_bub ? m_tok : m_bub;
    /* per_step <= 2^40: at least one micro-batch always fits the limit. */
    if (m > TS_RUN_GB_MAX / per_step)
        m = TS_RUN_GB_MAX / per_step;
    out->m_tokens = m_tok;
    out->m_bubble = m_bub;
    out->micro_batches = m;
    out->global_batch = m * per_step;
    return TS_OK;
}

/* What follows from the layout (dp or gpus, global_batch) and the checks
 * that involve it, on a run whose fields are checked. */
static ts_status ts_run_derive(ts_run *w, ts_error *err)
{
    ts_status st;
    int64_t per_step;

    if ((st = ts_run_derive_layout(w, err)) != TS_OK ||
        (st = ts_run_check_split(w, w->model.layers > 0, err)) != TS_OK ||
        (st = ts_compat_check(w, err)) != TS_OK)
        return st;
    /* dp, micro_batch <= 2^20 each: the product fits int64.  No global
     * batch given: what runs at that scale use (ts_batch_default). */
    per_step = w->dp * w->micro_batch;
    if (w->global_batch == 0) {
        ts_batch_rule b;

        if ((st = ts_batch_default(w, &b, err)) != TS_OK)
            return st;
        w->global_batch = b.global_batch;
    }
    if (w->global_batch % per_step != 0)
        return ts_error_set(err, TS_EINCOMPAT, "global_batch",
                            "global_batch %lld is not divisible by dp * micro_batch = %lld",
                            (long long)w->global_batch, (long long)per_step);
    return TS_OK;
}

void ts_run_stage_sizes(const ts_run *r, ts_run_stages *s)
{
    s->first = r->pp > 1 ? r->first_stage_layers : 0;
    s->last = r->pp > 1 ? r->last_stage_layers : 0;
    s->middle = r->pp - (s->first > 0) - (s->last > 0);
    s->base = s->middle > 0 ? (r->model.layers - s->first - s->last) / s->middle : 0;
    s->extra = s->middle > 0 ? (r->model.layers - s->first - s->last) % s->middle : 0;
}

int64_t ts_run_stage_layers(const ts_run *r, int64_t i)
{
    ts_run_stages s;
    int64_t j;

    ts_run_stage_sizes(r, &s);
    if (i == 0 && s.first > 0)
        return s.first;
    if (i == r->pp - 1 && s.last > 0)
        return s.last;
    if (s.middle <= 0)
        return 0;
    /* Index among the stages without a given count. */
    j = i - (s.first > 0);
    return s.base + (j < s.extra ? 1 : 0);
}

/* Megatron-LM's block method (megatron/core/transformer/transformer_block.py
 * @a7c9e8c4 _checkpointed_forward, 568-590; megatron/core/recompute.py
 * @d98e8a64 checkpointed_forward, 167-181): each TransformerBlock, one
 * per virtual stage, checkpoints its first recompute_num_layers layers
 * (num_layers_per_pipeline_rank = len(self.layers), 323) and runs the
 * rest plainly.  A stage's nl layers split over vpp chunks as evenly as
 * they go. */
double ts_run_recomputed(const ts_run *r, int64_t nl)
{
    int64_t v = r->vpp > 1 ? r->vpp : 1, n = r->recompute_layers, base, extra;

    if (r->recompute != TS_RECOMPUTE_FULL || nl <= 0)
        return 0;
    if (n <= 0)
        return (double)nl;
    base = nl / v;
    extra = nl % v;
    return (double)extra * (double)(n < base + 1 ? n : base + 1) +
           (double)(v - extra) * (double)(n < base ? n : base);
}

double ts_run_recomputed_total(const ts_run *r)
{
    ts_run_stages s;

    if (r->model.layers <= 0)
        return 0;
    ts_run_stage_sizes(r, &s);
    return ts_run_recomputed(r, s.first) + ts_run_recomputed(r, s.last) +
           (double)s.extra * ts_run_recomputed(r, s.base + 1) +
           (double)(s.middle - s.extra) * ts_run_recomputed(r, s.base);
}

/* The largest virtual stage of r's pipeline, layers. */
static int64_t ts_run_chunk_max(const ts_run *r)
{
    ts_run_stages s;
    int64_t big, v = r->vpp > 1 ? r->vpp : 1;

    ts_run_stage_sizes(r, &s);
    big = s.base + (s.extra > 0);
    big = s.first > big ? s.first : big;
    big = s.last > big ? s.last : big;
    return (big + v - 1) / v;
}

void ts_run_fit_recompute_layers(ts_run *r)
{
    int64_t chunk = r->model.layers > 0 && r->pp >= 1 ? ts_run_chunk_max(r) : 0;

    if (r->recompute != TS_RECOMPUTE_FULL || chunk <= 0)
        r->recompute_layers = 0;
    else if (r->recompute_layers > chunk)
        r->recompute_layers = chunk;
}

/* recompute_layers as the request gave it: with recompute full, a model
 * shape, and at most the layers of the largest virtual stage (Megatron
 * asks for 1 .. num_layers_per_pipeline_rank, transformer_config.py
 * @d98e8a64 1919-1925).  A solver or the search that later picks another
 * recompute mode or pipeline keeps it: it applies to full only, and a
 * smaller stage recomputes all its layers (the block loop's bound). */
static ts_status ts_run_check_recompute_layers(const ts_run *r, ts_error *err)
{
    int64_t chunk, v = r->vpp > 1 ? r->vpp : 1;

    if (r->recompute_layers == 0)
        return TS_OK;
    if (r->recompute != TS_RECOMPUTE_FULL)
        return ts_error_set(err, TS_EINCOMPAT, "recompute_layers",
                            "recompute_layers %lld needs recompute \"full\", got \"%s\"",
                            (long long)r->recompute_layers, ts_recompute_name(r->recompute));
    if (r->model.layers <= 0)
        return ts_error_set(err, TS_EINCOMPAT, "recompute_layers",
                            "recompute_layers needs a model shape (layers), not a plain params "
                            "count");
    chunk = ts_run_chunk_max(r);
    if (r->recompute_layers > chunk)
        return ts_error_set(err, TS_EINCOMPAT, "recompute_layers",
                            "recompute_layers %lld exceeds the %lld layers of a %s",
                            (long long)r->recompute_layers, (long long)chunk,
                            v > 1 ? "virtual pipeline stage" : "pipeline stage");
    return TS_OK;
}

ts_status ts_run_resolve(ts_run *r, ts_error *err)
{
    ts_run w;
    ts_params p;
    ts_status st;

    if (r == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    w = *r;
    w.preset[sizeof w.preset - 1] = '\0';
    w.gpu.id[sizeof w.gpu.id - 1] = '\0';
    w.gpu.name[sizeof w.gpu.name - 1] = '\0';

    /* ts_model_params sees layers > 0 exactly when it counts a shape. */
    if ((st = ts_run_check_fields(&w, 0, err)) != TS_OK ||
        (st = ts_run_check_gpu(&w, err)) != TS_OK ||
        (st = ts_model_params(&w.model, &p, err)) != TS_OK ||
        (st = ts_run_derive(&w, err)) != TS_OK ||
        (st = ts_run_check_recompute_layers(&w, err)) != TS_OK)
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

    /* fp32 weights are their own master copy: a second one is never kept. */
    if (w.precision == TS_PREC_FP32)
        w.master_weights = false;

    *r = w;
    return TS_OK;
}

ts_status ts_run_relayout(ts_run *r, ts_error *err)
{
    ts_status st;

    if ((st = ts_run_check_fields(r, TS_FF_LAYOUT, err)) != TS_OK)
        return st;
    return ts_run_derive(r, err);
}

ts_status ts_run_resolved_ok(const ts_run *r, ts_error *err)
{
    bool ok = r->tp >= 1 && r->pp >= 1 && r->cp >= 1 && r->ep >= 1 && r->dp >= 1 &&
              r->micro_batch >= 1 && r->seq >= 1 && r->gpus_per_node >= 1 &&
              r->tp <= TS_RUN_GPUS_MAX && r->pp <= TS_RUN_GPUS_MAX && r->cp <= TS_RUN_GPUS_MAX &&
              r->dp <= TS_RUN_GPUS_MAX && r->micro_batch <= TS_RUN_GPUS_MAX;

    /* Each factor <= 2^20: the products below fit int64. */
    ok = ok && r->tp * r->pp * r->cp <= TS_RUN_GPUS_MAX &&
         r->gpus == r->dp * r->tp * r->pp * r->cp && r->global_batch >= 1 &&
         r->global_batch % (r->dp * r->micro_batch) == 0 && r->tokens > 0 && isfinite(r->tokens);
    if (!ok)
        return ts_error_set(err, TS_EINVAL, "",
                            "the run is not resolved: call ts_run_resolve() first");
    return TS_OK;
}

ts_loss_impl ts_run_loss_impl(const ts_run *r)
{
    if (r->loss_impl != TS_LOSS_DEFAULT)
        return r->loss_impl;
    return r->framework == TS_FW_MEGATRON ? TS_LOSS_VOCAB_PARALLEL : TS_LOSS_TORCH;
}

ts_recompute_impl ts_run_recompute_impl(const ts_run *r)
{
    if (r->recompute_impl != TS_RIMPL_DEFAULT)
        return r->recompute_impl;
    return r->framework == TS_FW_FSDP ? TS_RIMPL_EARLY_STOP : TS_RIMPL_REENTRANT;
}

bool ts_framework_eager(ts_framework f)
{
    return f == TS_FW_HF || f == TS_FW_FSDP;
}

bool ts_run_eager_layers(const ts_run *r)
{
    if (r->layer_impl != TS_LAYER_DEFAULT)
        return r->layer_impl == TS_LAYER_EAGER;
    return ts_framework_eager(r->framework);
}

bool ts_run_adapters_fp32(const ts_run *r)
{
    ts_adapter_precision a = r->adapter_precision;

    if (r->lora_rank <= 0 || r->precision == TS_PREC_FP32)
        return false;
    /* PEFT's autocast makes hf's adapters fp32; NeMo AutoModel's
     * LinearLoRA creates them in the base weight's dtype (lora.py@507bfb751
     * _init_adapter: lora_dtype or the weight's). */
    if (a == TS_ADAPTER_DEFAULT)
        a = r->framework == TS_FW_HF && r->lora_impl != TS_LORA_IMPL_AUTOMODEL ? TS_ADAPTER_FP32
                                                                               : TS_ADAPTER_MODEL;
    return a == TS_ADAPTER_FP32;
}

ts_quant ts_run_frozen_dequant(const ts_run *r)
{
    if (r->frozen_precision == TS_QUANT_FP8 && r->compute_precision == TS_PREC_FP8)
        return TS_QUANT_BF16;
    return r->frozen_precision;
}
