/*
 * ts_mem_stage.c - one pipeline stage's memory: its layers and the
 * micro-batches it holds, its model states after ZeRO / FSDP sharding,
 * the framework's buffers, its activations, the allocated bytes at each
 * phase of the step, the caching allocator's reserve, and the terms at
 * the peak.  Part of the memory model (ts_mem.h); see docs/formulas.md,
 * "Peak memory".
 *
 * The bytes allocated at four moments are compared:
 *   forward   end of the forward of the micro-batches in flight;
 *   loss      the last stage's logits, fp32 upcast, softmax and gradient;
 *   backward  backward of a layer with its recompute and gradient
 *             working set, all in-flight activations still saved;
 *   optimizer the step, with gradients and its temporaries.
 * The largest is the allocated peak (torch.cuda.max_memory_allocated).
 * The reserved peak adds the caching allocator's blocks that the peak
 * phase could not reuse; the total adds the runtime context (CUDA
 * context, communicator buffers) that no allocator sees, and is what is
 * compared with HBM.
 *
 * Dense and expert parameters are sharded separately: dense over
 * Nd = dp*cp, experts over their own data-parallel group Nd/ep.
 */
#include "ts_mem.h"

#include <math.h>
#include <stddef.h>

/* DeepSpeed ZeRO defaults (deepspeed/runtime/zero/config.py):
 * reduce_bucket_size and allgather_bucket_size 5e8 elements,
 * stage3_prefetch_bucket_size 5e7, stage3_max_live_parameters 1e9. */
#define TS_MEM_DS_BUCKET   5e8
#define TS_MEM_DS_PREFETCH 5e7
#define TS_MEM_DS_MAX_LIVE 1e9

/* First layer of stage i: the sum of the counts before it, in closed
 * form (the first stage's count, then j even stages of which the first
 * rest % mid hold one more). */
int64_t ts_mem_stage_start(const ts_run *r, int64_t i)
{
    ts_run_stages s;
    int64_t j;

    if (r->pp == 1 || i == 0)
        return 0;
    ts_run_stage_sizes(r, &s);
    if (s.middle <= 0)
        return s.first; /* only the first and the last stage */
    j = i - (s.first > 0);
    return s.first + j * s.base + (j < s.extra ? j : s.extra);
}

/* Micro-batches of activations stage i holds at its peak: 1F1B warms up
 * pp - i of them; Megatron's interleaved schedule warms up
 * 2 (pp - i - 1) + (v - 1) pp chunks of L/(pp v) layers
 * (schedules.py, get_num_warmup_microbatches), i.e. for the first stage
 * pp (1 + (pp - 1)/(pp v)) micro-batches' worth.  Never more than the
 * step has.  Unknown step: assume it has enough (Megatron does). */
static double ts_mem_in_flight(const ts_mem_ctx *c, int64_t i)
{
    const ts_run *r = c->run;
    double pp = (double)r->pp, v = (double)r->vpp, n;

    if (r->pp == 1)
        return 1;
    if (r->pp_schedule == TS_PP_INTERLEAVED) {
        n = (2.0 * (pp - (double)i - 1.0) + (v - 1.0) * pp + 1.0);
        if (c->micro_per_step > 0)
            n = fmin(n, c->micro_per_step * v);
        return n / v;
    }
    n = pp - (double)i;
    if (c->micro_per_step > 0)
        n = fmin(n, c->micro_per_step);
    return n;
}

/* One stage's figures as ts_mem_stage_eval works them out, step by step. */
typedef struct ts_mem_sw {
    bool first, last;               /* the first / last pipeline stage */
    bool fsdp, ds;                  /* hf: accelerate's FSDP underneath when sharded (zero >= 2) */
    double n, nd_l;                 /* layers; of them, a MoE model's first dense layers */
    double dense, expert;           /* parameters on this GPU, before sharding */
    double share;                   /* after sharding */
    double layer_p;                 /* parameters of the largest layer */
    double W, G, M, O, Op;          /* weights, grads, master, optimizer, paged optimizer */
    double Oc;                      /* of O: the lora_modules_to_save copies' states */
    double Gh;                      /* lm_head's copy's gradient, whole (the last stage) */
    double persist;                 /* framework buffers held through forward and backward */
    double fwd_ws, bwd_ws, loss_ws; /* working sets of forward, backward, the loss */
    double held, metric_ws;         /* logits the trainer holds for its metrics; one metric's */
    double saved;                   /* activations saved for backward */
    double grads_live;              /* gradients allocated during forward */
    double ph[TS_PHASE_COUNT];      /* allocated bytes per phase */
    int peak;                       /* the phase of the largest */
    double reserve;                 /* cached blocks the peak phase cannot reuse */
} ts_mem_sw;

/* The embedding and output layer this stage holds (after tp). */
static double ts_mem_stage_emb_head(const ts_mem_ctx *c, const ts_mem_sw *w)
{
    return (w->first ? c->emb : 0) + (w->last ? c->head : 0);
}

/* The stage's layers and parameters (before sharding). */
static void ts_mem_stage_params(const ts_mem_ctx *c, int64_t i, int64_t start, ts_mem_stage *st,
                                ts_mem_sw *w)
{
    const ts_run *r = c->run;

    w->n = (double)(c->shape ? ts_run_stage_layers(r, i) : 0);
    st->stage = i;
    st->layers = (int64_t)w->n;
    /* A MoE model's first dense layers (DeepSeek) sit on the first stages. */
    w->nd_l = c->dense_layers > start ? fmin(w->n, (double)(c->dense_layers - start)) : 0;
    if (c->shape) {
        w->dense = (w->n - w->nd_l) * c->layer_dense + w->nd_l * c->layer_dense_d +
                   (w->first ? c->emb : 0) + (w->last ? c->head : 0);
        w->expert = (w->n - w->nd_l) * c->layer_expert;
    } else {
        /* A plain count: spread evenly over the stages. */
        w->dense = c->p.dense / (double)(r->tp * r->pp);
        w->expert = c->p.expert / (double)(r->tp * r->pp * r->ep);
    }
    st->params = w->dense + w->expert;
    w->layer_p = fmax(c->layer_dense + c->layer_expert, w->nd_l > 0 ? c->layer_dense_d : 0);
}

/* LoRA: adapters train (sharded like any trained state); the frozen base
 * is stored at frozen_precision (sharded under ZeRO-3 / FSDP as the base
 * itself is), embeddings at the training precision. */
static void ts_mem_stage_lora(const ts_mem_ctx *c, ts_mem_stage *st, ts_mem_sw *w)
{
    const ts_run *r = c->run;
    double ad = w->n * c->lora_layer, ad_sh = ad / c->nd;
    double pb = ts_precision_bytes(r->precision);
    double emb = (w->first ? c->emb : 0) + (w->last ? c->head : 0);
    double lin = st->params - emb;
    /* hf: PEFT keeps a bf16/fp16 model's adapters in fp32
     * (autocast_adapter_dtype, peft mapping_func.py): 4-byte weights and
     * gradients, no separate master copy (adapter_precision). */
    bool fp32 = ts_run_adapters_fp32(r);
    double ab = fp32 ? 4.0 : pb;

    /* lora_modules_to_save: PEFT's ModulesToSaveWrapper trains a deep
     * copy of the module beside the frozen original (peft@5d602fdb
     * src/peft/utils/other.py, ModulesToSaveWrapper.update), in the
     * model's dtype (cast_adapter_dtype upcasts only the tuner layers'
     * adapters), so it is held as this run holds a trained parameter:
     * the model's precision, grad_precision, the master copy when the
     * run keeps one (under hf and fsdp the fp32 parameter is that copy,
     * with no 16-bit one beside it), the optimizer's states; sharded
     * like the adapters. */
    double sv = (w->first ? c->save_emb : 0) + (w->last ? c->save_head : 0), sv_sh = sv / c->nd;
    bool master = r->master_weights;

    w->W = (r->zero >= 3 ? 1.0 / c->nd : 1.0) * (c->frozen_b * lin + pb * emb) +
           ab * (r->zero >= 3 ? ad_sh : ad) +
           (w->fsdp && master ? 0 : pb) * (r->zero >= 3 ? sv_sh : sv);
    w->G = (fp32 ? 4.0 : ts_precision_bytes(r->grad_precision)) * (r->zero >= 2 ? ad_sh : ad) +
           ts_precision_bytes(r->grad_precision) * (r->zero >= 2 ? sv_sh : sv);
    w->M = (master && !fp32 ? 4.0 * (r->zero >= 1 ? ad_sh : ad) : 0) +
           (master ? 4.0 * (r->zero >= 1 ? sv_sh : sv) : 0);
    /* DeepSpeed's fp32 gradient partition of what trains (as
     * ts_mem_stage_states adds it for full training). */
    if (w->ds)
        w->G += 4.0 * (r->zero >= 1 ? ad_sh + sv_sh : ad + sv);
    /* Under accelerate's FSDP, PEFT's fsdp_auto_wrap_policy wraps every
     * leaf module with a trained weight as its own unit (peft@5d602fdb
     * other.py lambda_policy_fn): a copy is gathered, and its gradient
     * reduced, whole, so the working sets are at least one copy's. */
    if (w->fsdp && r->zero >= 2)
        w->layer_p = fmax(w->layer_p, fmax(w->first ? c->save_emb : 0, w->last ? c->save_head : 0));
    /* lm_head's copy forms its whole gradient first in backward, while
     * every saved activation is still held (under FSDP the unit's
     * backward working set above already holds it). */
    w->Gh = w->last && !(w->fsdp && r->zero >= 2)
                ? ts_precision_bytes(r->grad_precision) * c->save_head
                : 0;
    w->Oc = c->opt_bpp * (r->zero >= 1 ? sv_sh : sv) +
            (w->first ? c->emb_opt * c->save_emb / (r->zero >= 1 ? c->nd : 1.0) : 0);
    w->O = c->opt_bpp * (r->zero >= 1 ? ad_sh : ad) + w->Oc;
    st->params += ad + sv;
}

/* Weights, gradients, master and optimizer states on this GPU. */
static void ts_mem_stage_states(const ts_mem_ctx *c, ts_mem_stage *st, ts_mem_sw *w)
{
    const ts_run *r = c->run;
    double share = w->dense / c->nd + w->expert / c->nde; /* sharded share of the stage */

    w->share = share;
    st->host_share = share;
    w->W = c->bw * (r->zero >= 3 ? share : st->params);
    if (ts_run_te_fp8_params(r) && !c->lora) {
        /* FP8 parameters are Transformer Engine's modules' weights
         * (fp8_model_init): the word embedding and Megatron's own output
         * layer stay 16-bit (the norms and a router too, negligible). */
        double emb_head = ts_mem_stage_emb_head(c, w);

        w->W += (2.0 - c->bw) * (r->zero >= 3 ? emb_head / c->nd : emb_head);
    }
    w->G = c->bg * (r->zero >= 2 ? share : st->params);
    w->M = c->bm * (r->zero >= 1 ? share : st->params);
    w->O = c->bo * (r->zero >= 1 ? share : st->params);
    if (w->fsdp && r->master_weights && !c->lora) {
        /* FSDP keeps the sharded parameter in fp32 as the master copy and
         * no persistent 16-bit copy (MixedPrecisionPolicy param_dtype
         * casts at all-gather time). */
        w->W = 0;
    }
    /* A trained embedding's 32-bit states under the HF Trainer's bnb
     * 8-bit optimizers (ts_mem_states.c); its input embedding sits on
     * the first stage (a tied output layer shares that weight). */
    if (w->first && c->training && !c->lora && c->shape)
        w->O += c->emb_opt * c->f * (c->p.embedding / (double)r->tp) / (r->zero >= 1 ? c->nd : 1.0);
    if (w->ds && c->training) {
        /* DeepSpeed keeps an fp32 gradient partition next to the 16-bit
         * gradients (stage_1_and_2.py single_partition_of_fp32_groups,
         * stage3.py fp32_partitioned_groups_flat): estimate_zero2/3's 18
         * bytes = 2 + 4 + 12. */
        w->G += 4.0 * c->f * (r->zero >= 1 ? share : st->params);
    }
    if (c->lora)
        ts_mem_stage_lora(c, st, w);
    if (r->offload_optimizer) {
        /* ZeRO-Offload: master, moments and the fp32 gradient partition
         * live in host RAM; 16-bit gradients stream out through the
         * reduce bucket (counted with the buffers). */
        w->M = w->O = w->G = w->Oc = 0;
    }
    if (r->offload_params)
        w->W = 0;
    /* Paged 8-bit states live in managed memory: on the GPU (the total,
     * nvidia-smi) but never in the caching allocator's figures.  The
     * full copies' tensors (vocab x hidden) are all past the size that
     * pages. */
    w->Op = (w->O - w->Oc) * c->paged_frac + (r->optimizer == TS_OPT_PAGED_ADAM8BIT ? w->Oc : 0);
    w->O -= w->Op;
}

/* Framework buffers.  persist: held through forward and backward. */
static void ts_mem_stage_buffers(const ts_mem_ctx *c, const ts_mem_stage *st, ts_mem_sw *w)
{
    const ts_run *r = c->run;
    double layer_p = w->layer_p;

    w->persist = 0;
    w->fwd_ws = 0;
    w->bwd_ws = 0;
    if (w->fsdp && r->zero >= 2 && c->nd > 1) {
        double bf16 = 2.0;
        if (r->pp > 1 || r->zero == 2) {
            /* torchtitan under PP (reshard_after_forward False) and
             * SHARD_GRAD_OP: the stage's 16-bit parameters stay
             * unsharded for the whole step. */
            w->persist += bf16 * st->params;
        } else {
            /* FSDP2 root module (embedding, final norm, output) is not
             * resharded after forward; each block is all-gathered with
             * the next one prefetched. */
            w->persist += bf16 * ts_mem_stage_emb_head(c, w);
            w->fwd_ws += 2.0 * bf16 * layer_p;
        }
        /* Backward of one block: unsharded 16-bit gradients and the fp32
         * reduce-scatter input (reduce_dtype fp32). */
        w->bwd_ws +=
            (r->pp > 1 || r->zero == 2 ? 0 : 2.0 * bf16 * layer_p) + bf16 * layer_p + 4.0 * layer_p;
        if (r->pp > 1) {
            /* Gradient sync only after the last micro-batch: unsharded
             * fp32 gradients accumulate for the whole step. */
            w->persist += 4.0 * c->f * st->params;
        }
    } else if (w->ds) {
        if (r->zero >= 3) {
            w->fwd_ws += 2.0 * fmin(TS_MEM_DS_MAX_LIVE, layer_p + TS_MEM_DS_PREFETCH);
            w->bwd_ws += 2.0 * fmin(TS_MEM_DS_MAX_LIVE, layer_p + TS_MEM_DS_PREFETCH);
        }
        if (c->training)
            w->bwd_ws += 2.0 * fmin(TS_MEM_DS_BUCKET, st->params); /* reduce (ipg) bucket */
    } else if (ts_run_te_fp8(r) && r->zero < 3 && c->training) {
        /* Transformer Engine's FP8 weights, held from the first
         * micro-batch to the next step's (Megatron-Core passes
         * is_first_microbatch, so Linear.forward caches them): 16-bit
         * weights get an FP8 copy in the module's workspace, 1 B an
         * element (ROCm/TransformerEngine@ac80527 module/linear.py
         * 982-1011); FP8 parameters (Float8Tensor: fp8_params,
         * fp8_param_gather; precision fp8) are that copy.  Where FP8
         * GEMMs run TN only (Hopper and before; AMD taken so) a transpose
         * beside it, 1 B more; Blackwell takes any layout and TE 2.x
         * makes none for per-tensor scaled FP8 (NVIDIA/TransformerEngine
         * transformer_engine/pytorch/csrc/quantizer.cpp@ad3f651f
         * create_transpose = columnwise_usage &&
         * !nvte_is_non_tn_fp8_gemm_supported(); MXFP8 keeps both, not
         * modelled).  Every linear of the stage; the embedding and output
         * layer are not TE linears.  Megatron's
         * disable_parameter_transpose_cache (is_first_microbatch None) and
         * LoRA's frozen base are not modelled. */
        double lin = st->params - ts_mem_stage_emb_head(c, w);
        bool tn_only = ts_gpu_fp8_tn_only(&r->gpu);

        w->persist +=
            ((ts_run_te_fp8_params(r) ? 0.0 : 1.0) + (tn_only ? 1.0 : 0.0)) * fmax(0, lin);
    }
}

/* Full recompute of only recompute_layers layers per (virtual) stage
 * (Megatron's block method, ts_run_recomputed): one micro-batch's saved
 * bytes per token, the recomputed layers keeping their input and the
 * others their no-recompute set (act.full); the first layers of a stage
 * are both the recomputed ones and a MoE model's dense ones (exact
 * without vpp).  *freed: the kept layers of one virtual stage, which come
 * after its recomputed ones: a recomputed layer's forward runs before
 * they are saved and its backward's re-run after they are freed. */
static double ts_mem_stage_block(const ts_mem_ctx *c, const ts_mem_sw *w, double *freed)
{
    const ts_run *r = c->run;
    double k = ts_run_recomputed(r, (int64_t)w->n), kd = fmin(w->nd_l, k), km = k - kd;
    double v = r->vpp > 1 ? (double)r->vpp : 1.0;

    *freed = (w->n - k) / v * (w->nd_l > 0 ? fmin(c->act.full, c->act_dense.full) : c->act.full);
    return km * c->act.saved + (w->n - w->nd_l - km) * c->act.full + kd * c->act_dense.saved +
           (w->nd_l - kd) * c->act_dense.full;
}

/* Megatron-Core's CPU activation offload (ts_run_offloaded_layers),
 * through Transformer Engine's default handler (>= 2.10,
 * DefaultOffloadSynchronizer: NVIDIA/TransformerEngine
 * transformer_engine/pytorch/cpu_offload.py@00382b96,
 * _default_offload_sync_init): layers 0 .. k-1 go to pinned host RAM,
 * every saved tensor of 2^20 elements or more but the weights; layer i's copy
 * must finish before layer L - k + i runs forward and its reload starts
 * at the backward of layer L - 1 - k + i, so the saved activations peak
 * at (L - k) layers (its docstring: "(num_layers - num_offloaded_layers)
 * * T").  The first layers are the offloaded ones, a MoE model's dense
 * layers first.  TE 1.10-2.9 (or NVTE_CPU_OFFLOAD_V1=1) hold one more.
 * *host: the offloaded bytes of a micro-batch (ts_mem_offload_bytes). */
static double ts_mem_stage_offload(const ts_mem_ctx *c, const ts_mem_sw *w, int64_t k, double *host)
{
    double kd = fmin(w->nd_l, (double)k), km = (double)k - kd;

    *host = ts_mem_offload_bytes(c->run);
    return (w->n - w->nd_l - km) * c->act.saved + (w->nd_l - kd) * c->act_dense.saved;
}

/* Saved activations of the micro-batches in flight, one layer's working
 * set in forward and backward, the loss working set. */
static void ts_mem_stage_acts(const ts_mem_ctx *c, int64_t i, ts_mem_stage *st, ts_mem_sw *w)
{
    const ts_run *r = c->run;
    double fl = ts_mem_in_flight(c, i), per_mb, freed = 0;
    /* One layer's working set: the larger of the two layer kinds. */
    double fw = c->act.full - c->act.saved, bw = fw + c->act.work;

    st->in_flight = fl;
    per_mb = (w->n - w->nd_l) * c->act.saved + w->nd_l * c->act_dense.saved;
    if (r->recompute == TS_RECOMPUTE_FULL && r->recompute_layers > 0 && c->shape)
        per_mb = ts_mem_stage_block(c, w, &freed);
    if (ts_run_offloaded_layers(r) > 0 && c->shape && c->training) {
        double host;

        per_mb = ts_mem_stage_offload(c, w, ts_run_offloaded_layers(r), &host);
        st->host_act = fl * host;
    }
    w->saved = fl * per_mb * c->tokens;
    if (w->first && c->shape)
        w->saved += fl * 8.0 * c->tokens; /* input ids (int64) */
    if (!c->training)
        w->saved = 0;
    if (w->nd_l > 0) {
        fw = fmax(fw, c->act_dense.full - c->act_dense.saved);
        bw = fmax(bw, c->act_dense.full - c->act_dense.saved + c->act_dense.work);
    }
    if (freed > 0) {
        /* A kept layer's own forward has no transient set, its backward
         * the gradient working set (as without recompute). */
        double work = fmax(c->act.work, w->nd_l > 0 ? c->act_dense.work : 0);

        fw = fmax(0, fw - freed);
        bw = fmax(work, bw - freed);
    }
    w->fwd_ws += c->training ? fw * c->tokens : 0;
    w->bwd_ws += bw * c->tokens;
    w->loss_ws = w->last && c->shape ? c->act.loss * c->tokens : 0;
    /* Composer keeps the model's outputs (state.outputs) until its train
     * metrics have run after the micro-batch's backward (composer
     * trainer/trainer.py@v0.16.3 _train_microbatch, _eval_train_metrics):
     * the bf16 logits live through backward, and each metric adds its
     * fp32 transient once the activations are gone. */
    w->held = w->loss_ws > 0 && r->logit_metrics > 0 ? c->act.logits * c->tokens : 0;
    w->metric_ws = w->held > 0 ? c->act.metric * c->tokens : 0;
    if (c->lora && ts_run_frozen_dequant(r) != TS_QUANT_BF16) {
        /* A quantised base is dequantised to 16 bits one matrix at a time
         * for its matmul (bitsandbytes / torchao NF4): the largest, h x F. */
        double deq = 2.0 * (double)r->model.hidden * (double)r->model.ffn / (double)r->tp;
        w->fwd_ws += deq;
        w->bwd_ws += deq;
    }
}

/* The allocated bytes of each phase and the peak among them. */
static void ts_mem_stage_phases(const ts_mem_ctx *c, ts_mem_stage *st, ts_mem_sw *w)
{
    const ts_run *r = c->run;
    double *ph = w->ph;
    int k;

    /* Gradients: Megatron's main_grad buffer is persistent; PyTorch
     * optimizers' zero_grad(set_to_none) frees them, so they exist in
     * forward only while a step accumulates over micro-batches. */
    w->grads_live = w->G;
    if (r->framework != TS_FW_MEGATRON && c->micro_per_step <= 1 && r->pp == 1)
        w->grads_live = 0;

    for (k = 0; k < TS_PHASE_COUNT; k++)
        ph[k] = 0;
    if (c->training) {
        double base = w->W + w->M + w->O + w->persist;
        ph[TS_PHASE_FORWARD] = base + w->grads_live + w->saved + w->fwd_ws;
        if (w->loss_ws > 0)
            ph[TS_PHASE_LOSS] =
                base + w->grads_live + w->saved + c->act.out_in * c->tokens + w->loss_ws;
        /* Backward: activations free as gradients appear. */
        ph[TS_PHASE_BACKWARD] =
            base + fmax(w->saved + w->grads_live + (w->grads_live > 0 ? 0 : w->Gh), w->G) +
            w->bwd_ws + w->held;
        ph[TS_PHASE_OPTIMIZER] =
            w->W + w->G + w->M + w->O + w->persist -
            (w->fsdp && r->pp > 1 ? 4.0 * c->f * st->params : 0) +
            (w->ds && r->zero < 3 ? 2.0 * fmin(TS_MEM_DS_BUCKET, st->params) : 0);
        /* The train metrics run between backward and the step. */
        ph[TS_PHASE_OPTIMIZER] = fmax(ph[TS_PHASE_OPTIMIZER], base + w->G + w->held + w->metric_ws);
    } else {
        ph[TS_PHASE_FORWARD] = w->W + w->persist + w->fwd_ws;
    }

    w->peak = TS_PHASE_FORWARD;
    for (k = 0; k < TS_PHASE_COUNT; k++) {
        st->phase_bytes[k] = ph[k];
        if (ph[k] > ph[w->peak])
            w->peak = k;
    }
    st->peak_phase = (ts_phase)w->peak;
    st->allocated_peak = ph[w->peak];
}

/* The caching allocator's blocks beyond the allocated peak. */
static void ts_mem_stage_reserve(const ts_mem_ctx *c, ts_mem_stage *st, ts_mem_sw *w)
{
    const ts_run *r = c->run;
    int peak = w->peak;
    double reserve = 0, stream = 0;

    if (w->fsdp && r->zero >= 2 && c->nd > 1 && r->pp == 1) {
        /* FSDP2 allocates the reduce-scatter input and output (the sharded
         * gradients) on its reduce-scatter stream (_fsdp_collectives.py,
         * foreach_reduce); the caching allocator pools blocks per stream,
         * so after the first step that stream keeps them even while
         * zero_grad has freed the gradients: in forward and at the loss,
         * whichever phase is the peak (in backward and the step they are
         * the live gradients). */
        stream = (w->grads_live > 0 ? 0 : w->G) + 4.0 * w->layer_p;
    }
    /* At the loss phase, blocks cached from the layers' forward
     * transients (far smaller than a logits buffer) and the freed bf16
     * logits block cannot serve the fp32 loss buffers. */
    if (peak == TS_PHASE_LOSS)
        reserve = w->fwd_ws + c->act.loss_cached * c->tokens;
    if (peak == TS_PHASE_LOSS || peak == TS_PHASE_FORWARD)
        reserve += stream;
    if (w->loss_ws > 0 && peak != TS_PHASE_LOSS && c->training) {
        /* The caching allocator returns nothing to the driver unless
         * emptied (c10/cuda/CUDACachingAllocator.cpp: freed blocks stay
         * cached): a later, larger phase carves its tensors out of the
         * loss phase's cached blocks, so the reserved peak is never below
         * what the loss phase reserved. */
        double loss_res =
            w->ph[TS_PHASE_LOSS] + w->fwd_ws + c->act.loss_cached * c->tokens + stream;

        if (loss_res > st->allocated_peak + reserve)
            reserve = loss_res - st->allocated_peak;
    }
    reserve += r->fragmentation * st->allocated_peak;
    w->reserve = reserve;
    st->reserved_peak = st->allocated_peak + reserve;
}

/* The terms at the peak phase; they add up to the total. */
static void ts_mem_stage_terms(const ts_mem_ctx *c, ts_mem_stage *st, const ts_mem_sw *w)
{
    const ts_run *r = c->run;

    st->weights = w->W;
    st->master = w->M;
    st->optimizer = w->O;
    st->paged = w->Op;
    switch (w->peak) {
    case TS_PHASE_LOSS:
        st->grads = w->grads_live;
        st->activations = w->saved + c->act.out_in * c->tokens;
        st->buffers = w->persist + w->loss_ws;
        break;
    case TS_PHASE_BACKWARD:
        /* Start of backward (activations all saved) or its end (all
         * gradients allocated), whichever holds more. */
        st->activations = w->saved + w->grads_live >= w->G ? w->saved : 0;
        st->grads = w->saved + w->grads_live >= w->G ? w->grads_live : w->G;
        st->buffers = w->persist + w->bwd_ws + w->held;
        break;
    case TS_PHASE_OPTIMIZER:
        st->grads = w->G;
        st->activations = 0;
        st->buffers = w->ph[w->peak] - (w->W + w->G + w->M + w->O);
        break;
    case TS_PHASE_FORWARD:
    default:
        st->grads = c->training ? w->grads_live : 0;
        st->activations = w->saved;
        st->buffers = w->persist + w->fwd_ws;
        break;
    }
    st->overhead = w->reserve + r->overhead_gib * TS_MEM_GIB + w->Op;
    st->total = st->reserved_peak + r->overhead_gib * TS_MEM_GIB + w->Op;
    st->headroom = r->gpu.hbm_bytes - st->total;
    st->fits = st->total <= r->gpu.hbm_bytes;
}

void ts_mem_stage_eval(const ts_mem_ctx *c, int64_t i, int64_t start, ts_mem_stage *st)
{
    const ts_run *r = c->run;
    ts_mem_sw w = { 0 };

    st->host_act = 0;
    w.first = i == 0;
    w.last = i == r->pp - 1;
    w.fsdp = r->framework == TS_FW_FSDP || r->framework == TS_FW_HF;
    w.ds = r->framework == TS_FW_DEEPSPEED;
    ts_mem_stage_params(c, i, start, st, &w);
    ts_mem_stage_states(c, st, &w);
    ts_mem_stage_buffers(c, st, &w);
    ts_mem_stage_acts(c, i, st, &w);
    ts_mem_stage_phases(c, st, &w);
    ts_mem_stage_reserve(c, st, &w);
    ts_mem_stage_terms(c, st, &w);
}

/* The middle stages [a, b) of a pipeline longer than TS_STAGES_MAX (a >= 1,
 * b <= pp - 1: neither the first nor the last stage) fall into at most
 * four runs in which a stage differs from the one before it only by
 * holding fewer micro-batches: the layer count changes once (the even
 * split's remainder goes to the earlier stages), and the dense-FFN layers
 * of a MoE model (DeepSeek's first_k_dense_replace) make all-dense stages,
 * at most one mixed stage, then all-MoE ones.  Within a run a stage's
 * total cannot exceed the one before it: in_flight does not grow with the
 * stage index (ts_mem_in_flight), saved activations are in_flight times a
 * non-negative per-run constant, every phase and so their maximum is
 * non-decreasing in them, and a middle stage has no loss phase (its
 * reserve is fragmentation * peak, the FSDP stream reserve needs pp = 1);
 * IEEE rounding keeps each step monotone.  So the first stage of each
 * run is the only candidate for the worst: mids gets those, ascending.
 * The full loop's tie rule (the first of equal totals) is kept, as the
 * candidates are met in the same order. */
size_t ts_mem_middle(const ts_mem_ctx *c, int64_t a, int64_t b, int64_t *mids)
{
    const ts_run *r = c->run;
    int64_t cand[TS_MEM_MIDDLE_MAX], k;
    size_t n = 0, nc = 0, i;

    cand[nc++] = a;
    if (c->shape) {
        ts_run_stages st;

        ts_run_stage_sizes(r, &st);
        /* The first even stage with one layer fewer. */
        if (st.middle > 0 && st.extra != 0)
            cand[nc++] = (st.first > 0) + st.extra;
        if (c->dense_layers > 0 && c->dense_layers < r->model.layers) {
            /* k: the stage holding layer dense_layers (the first MoE
             * layer), the last one starting at or before it. */
            int64_t lo_i = 0, hi_i = r->pp - 1, D = c->dense_layers;

            while (lo_i < hi_i) {
                int64_t m = lo_i + (hi_i - lo_i + 1) / 2;

                if (ts_mem_stage_start(r, m) <= D)
                    lo_i = m;
                else
                    hi_i = m - 1;
            }
            cand[nc++] = lo_i;
            if (lo_i + 1 < r->pp)
                cand[nc++] = lo_i + 1;
        }
    }
    /* Inside [a, b), ascending, each once. */
    for (i = 0; i < nc; i++) {
        size_t j;
        bool dup = false;

        k = cand[i];
        for (j = 0; j < n; j++)
            dup = dup || mids[j] == k;
        if (k < a || k >= b || dup)
            continue;
        for (j = n; j > 0 && mids[j - 1] > k; j--)
            mids[j] = mids[j - 1];
        mids[j] = k;
        n++;
    }
    return n;
}
