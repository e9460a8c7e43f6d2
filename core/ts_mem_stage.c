/*
 * ts_memory.c - per-GPU memory as a peak over the phases of one optimizer
 * step, per pipeline stage, on top of what the training framework holds.
 * See docs/formulas.md, "Peak memory" (every constant there has a source).
 *
 * For each stage the bytes allocated at four moments are compared:
 *   forward   end of the forward of the micro-batches in flight;
 *   loss      the last stage's logits, fp32 upcast, softmax and gradient;
 *   backward  backward of a layer with its recompute and gradient
 *             working set, all in-flight activations still saved;
 *   optimizer the step, with gradients and its temporaries.
 * The largest is the allocated peak (torch.cuda.max_memory_allocated).
 * The reserved peak adds the caching allocator's blocks that the peak
 * phase could not reuse; the total adds the runtime context (CUDA
 * context, communicator buffers) that no allocator sees, and is what is
 * compared with HBM.  The worst stage sets the verdict.
 *
 * Dense and expert parameters are sharded separately: dense over
 * Nd = dp*cp, experts over their own data-parallel group Nd/ep.  Nothing
 * non-finite ever leaves this file (TS_ERANGE instead).
 */
#include "ts_internal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define TS_MEM_GIB 1073741824.0 /* 2^30 */
/* Adafactor without a shape: the square-matrix rule at h = 4096. */
#define TS_MEM_ADAFACTOR_H 4096.0
/* DeepSpeed ZeRO defaults (deepspeed/runtime/zero/config.py):
 * reduce_bucket_size and allgather_bucket_size 5e8 elements,
 * stage3_prefetch_bucket_size 5e7, stage3_max_live_parameters 1e9. */
#define TS_MEM_DS_BUCKET 5e8
#define TS_MEM_DS_PREFETCH 5e7
#define TS_MEM_DS_MAX_LIVE 1e9

static const char *const ts_phase_names[TS_PHASE_COUNT] = {
    [TS_PHASE_FORWARD] = "forward",
    [TS_PHASE_LOSS] = "loss",
    [TS_PHASE_BACKWARD] = "backward",
    [TS_PHASE_OPTIMIZER] = "optimizer",
};

const char *ts_phase_name(ts_phase p)
{
    return (unsigned)p < TS_PHASE_COUNT ? ts_phase_names[p] : "unknown";
}

/* bitsandbytes 8-bit optimizers quantise each state block-wise, one fp32
 * absmax per 2048 elements (bitsandbytes optimizer.py@06029dd6,
 * Optimizer2State.init_state); the paged variants put the states of
 * tensors of 1e5 elements or more in CUDA managed memory (get_state_buffer:
 * F.get_paged), which the caching allocator does not see. */
#define TS_MEM_BNB_BLOCK 2048.0
#define TS_MEM_BNB_PAGED_MIN 1e5

typedef struct ts_mem_opt {
    double bpp;                /* optimizer state bytes per trainable param */
    const char *assumptions;
} ts_mem_opt;

static ts_mem_opt ts_mem_optimizer(const ts_run *run, const ts_params *p)
{
    ts_mem_opt r = { 0, "" };
    /* Adam-family moments follow optimizer_precision (torchtune's
     * pure-bf16 AdamW keeps m and v in bf16). */
    double mom = ts_precision_bytes(run->optimizer_precision);

    switch (run->optimizer) {
    case TS_OPT_NONE:
        r.assumptions = "inference: no optimizer state";
        break;
    case TS_OPT_ADAM:
    case TS_OPT_ADAMW:
        r.bpp = 2 * mom;
        r.assumptions = mom == 4 ? "Adam/AdamW: m and v in fp32, 8 B per trainable param"
                                 : "Adam/AdamW: m and v in bf16 (pure bf16), 4 B per trainable param";
        break;
    case TS_OPT_ADAM8BIT:
        r.bpp = 2.0 + 8.0 / TS_MEM_BNB_BLOCK;
        r.assumptions = "8-bit Adam (bitsandbytes): m and v 1 byte each + one fp32 absmax per 2048";
        break;
    case TS_OPT_PAGED_ADAM8BIT:
        r.bpp = 2.0 + 8.0 / TS_MEM_BNB_BLOCK;
        r.assumptions = "paged 8-bit AdamW (bitsandbytes): m and v 1 byte each + one fp32 absmax per 2048; "
                        "states of tensors >= 1e5 elements in CUDA managed memory: counted under runtime "
                        "(and the total), not in optimizer, allocated or reserved";
        break;
    case TS_OPT_SGD:
        r.assumptions = "plain SGD keeps no state";
        break;
    case TS_OPT_SGD_MOMENTUM:
        r.bpp = mom;
        r.assumptions = "SGD with momentum: one buffer at optimizer_precision";
        break;
    case TS_OPT_LION:
        r.bpp = mom;
        r.assumptions = "Lion: one momentum buffer at optimizer_precision";
        break;
    case TS_OPT_ADAFACTOR:
        /* Factored second moment 4 (r + c) bytes per r x c matrix. */
        if (p->from_shape) {
            r.bpp = 8.0 / (double)run->model.hidden;
            r.assumptions = "Adafactor: factored fp32 second moment, no momentum; 8/h B per param (square h x h matrices)";
        } else {
            r.bpp = 8.0 / TS_MEM_ADAFACTOR_H;
            r.assumptions = "Adafactor: factored fp32 second moment, no momentum; no shape, so 8/4096 B per param";
        }
        break;
    case TS_OPT_COUNT:
        break;
    }
    return r;
}

/* ---- activations of one layer, bytes per token on one GPU ---------- */

typedef struct ts_mem_act {
    double saved;   /* kept from a layer's forward to its backward */
    double full;    /* everything backward needs, nothing recomputed */
    double work;    /* gradient working set inside a layer's backward */
    double score;   /* the s^2 (attention score) part of saved */
    double out_in;  /* final norm + output layer inputs (last stage) */
    double loss;    /* logits/loss working set, bytes per token */
    double loss_cached; /* logits blocks the loss tensors cannot reuse */
    const char *formula;
} ts_mem_act;

/*
 * Bytes per token per layer.  The Megatron-LM / Transformer Engine set
 * (Korthikanti et al. 2022, section 4.1, generalised): the inputs of both
 * norms and of the QKV and MLP linears (act_b h each; replicated across TP
 * ranks unless sequence parallel), Q, K, V and the attention output (K and
 * V sized from kv_heads), the MLP intermediates (gated: gate+up kept by the
 * fused SwiGLU and their product, 3 act_b F; GeLU: 2 act_b F), eager
 * attention's softmax (act_b a s) and, with dropout, its mask (a s) and
 * output (act_b a s), and the two 1-byte dropout masks (h each).  With
 * eager attention, dropout, MHA and F = 4h this is exactly Table 2:
 * s b h (34 + 5 a s / h) with t = 1.
 */
/* dense: one of a MoE model's first dense layers (DeepSeek
 * first_k_dense_replace), whose MLP is a plain FFN of width ffn. */
static void ts_mem_layer(const ts_run *run, bool dense, ts_mem_act *o)
{
    const ts_model *m = &run->model;
    bool moe = m->experts > 1 && !dense, mla = m->kv_lora_rank > 0;
    double t = (double)run->tp, h = (double)m->hidden, a = (double)m->heads;
    double hd = m->head_dim > 0 ? (double)m->head_dim : h / a, s = (double)run->seq;
    double kvh = (double)m->kv_heads;
    /* MLA: per head q and k are nope + rope wide, v v_head_dim; the
     * latent is expanded to full heads before attention. */
    double qk_hd = mla ? (double)(m->qk_nope_dim + m->qk_rope_dim) : hd;
    double v_hd = mla ? (double)(m->v_head_dim > 0 ? m->v_head_dim : m->qk_nope_dim) : hd;
    double act_b = run->precision == TS_PREC_FP32 ? 4.0 : 2.0;
    bool sp = run->sequence_parallel || run->tp == 1;
    double tr = sp ? t : 1.0;              /* divisor of replicated tensors */
    double q = a * qk_hd / t;              /* query width per rank */
    double ov = a * v_hd / t;              /* attention output width per rank */
    double kv = mla ? a * qk_hd / t        /* k, v per rank (v below) */
                    : (kvh >= t ? kvh / t : 1.0) * hd; /* replicated when kv_heads < tp */
    double vv = mla ? ov : kv;
    double k = moe ? (double)m->top_k : 1.0;
    double F = moe && m->moe_ffn > 0 ? (double)m->moe_ffn : (double)m->ffn;
    double mlp_b = (m->gated ? 3.0 : 2.0) * F / t *
                   (k + (moe ? (double)m->shared_experts : 0.0));
    double eager = 0, rep, shard, V = (double)m->vocab / t;
    double kc = (double)run->loss_chunks;

    rep = 4.0 * act_b * h + (run->dropout ? 2.0 * h : 0.0);
    if (moe)
        rep += act_b * h * k; /* tokens permuted to their experts (Megatron token dispatcher) */
    if (mla)
        rep += act_b * (double)(m->kv_lora_rank + m->q_lora_rank); /* latents, normed */
    shard = act_b * (q + kv + vv + ov) + act_b * mlp_b;
    if (run->attention == TS_ATTN_EAGER)
        eager = (act_b + (run->dropout ? 1.0 + act_b : 0.0)) * a * s / t;
    o->full = rep / tr + shard + eager;
    if (run->framework == TS_FW_FSDP || run->framework == TS_FW_HF) {
        /* PyTorch eager modules (torchtitan, torchtune, HF), uncompiled:
         * the norms (below), RoPE works on fp32 copies of q and k, GQA
         * K/V are expanded to all heads before SDPA (repeat_kv copies),
         * the attention output is made contiguous for the output
         * projection (a copy), and SwiGLU keeps w1's output, silu's
         * output, w3's output and their product (4 act_b F; GeLU 2). */
        double mlp_e = (m->gated ? 4.0 : 2.0) * act_b * F / t *
                       (k + (moe ? (double)m->shared_experts : 0.0));
        /* nn.LayerNorm is one native kernel: its input and fp32 mean and
         * rstd.  The eager RMSNorm of these codebases upcasts: x.float()
         * (4h) and the normalised act_b h. */
        double norm = run->norm == TS_NORM_LAYERNORM ? act_b * h + 8.0 : 4.0 * h + act_b * h;
        /* transformers' apply_rotary_pos_emb multiplies q and k by cos
         * and sin cast to the activations' dtype (LlamaRotaryEmbedding,
         * modeling_llama.py@5dd4a635): no fp32 copies of q and k. */
        double rope = run->framework == TS_FW_HF ? 0.0 : 4.0 * (q + kv);

        o->full = 2.0 * norm / tr + 2.0 * act_b * h / tr +
                  rope + act_b * (q + q + a * v_hd / t + ov) + act_b * ov + mlp_e + eager;
        if (run->framework == TS_FW_HF && run->lora_rank > 0) {
            /* PEFT's LoRA Linear.forward casts the input to the adapter's
             * dtype before lora_A (peft@5fe7f8f8 tuners/lora/layer.py
             * 751-773, _cast_input_dtype), and get_peft_model's
             * autocast_adapter_dtype=True keeps bf16 models' adapters in
             * fp32 (tuners_utils.py _cast_adapter_dtype): lora_A saves a
             * 4-byte copy of its input, one per adapted matrix, q, k and v
             * each their own. */
            unsigned tg = run->lora_targets;
            double mlp_in = (k + (moe ? (double)m->shared_experts : 0.0));

            o->full += 4.0 * (((tg & TS_LORA_Q) ? h : 0) + ((tg & TS_LORA_K) ? h : 0) +
                              ((tg & TS_LORA_V) ? h : 0) + ((tg & TS_LORA_QKV) ? h : 0) +
                              ((tg & TS_LORA_O) ? a * v_hd / t : 0)) +
                       4.0 * mlp_in * ((m->gated && (tg & TS_LORA_GATE) ? h : 0) +
                                       ((tg & TS_LORA_UP) ? h : 0) +
                                       ((tg & TS_LORA_DOWN) ? F / t : 0));
        }
    }
    o->work = act_b * (2.0 * h / tr +
                       fmax(mlp_b, q + kv + vv + ov + (eager > 0 ? 2.0 * act_b * a * s / t : 0)));
    o->score = 0;

    switch (run->recompute) {
    case TS_RECOMPUTE_FULL:
        /* Only the layer input is kept (Megatron --recompute-granularity
         * full, torchtitan mode "full"). */
        o->saved = act_b * h / tr;
        o->formula = "full recompute: act_b h / t_sp per token per layer (layer input only)";
        break;
    case TS_RECOMPUTE_SELECTIVE:
        if (run->framework == TS_FW_FSDP || run->framework == TS_FW_HF) {
            /* torchtitan selective op AC (distributed/activation_checkpoint.py,
             * _custom_policy): the layer input, the SDPA output and every
             * other matmul output (1st, 3rd, ...: wq, wv, w1, w2 for a gated
             * MLP; wq, wv, fc1 for GeLU). */
            double mm = q + vv + F / t * k + (m->gated ? h / tr : 0.0);
            o->saved = act_b * (h / tr + ov + mm);
            o->formula = "selective op AC (torchtitan): act_b (h/t_sp + q + wq + wv + w1 [+ w2]) per token per layer";
        } else {
            /* Megatron selective: core attention recomputed, so only the
             * s^2 terms go (with FlashAttention nothing changes). */
            o->saved = rep / tr + shard;
            o->formula = "selective recompute: Korthikanti Table 2 without the 5as/h score terms, K/V from kv_heads, gated MLP 3F";
        }
        break;
    case TS_RECOMPUTE_NONE:
    case TS_RECOMPUTE_COUNT:
    default:
        o->saved = o->full;
        o->score = eager;
        o->formula = run->attention == TS_ATTN_EAGER
            ? "no recompute: act_b (4h [+ dropout 2h])/t_sp + act_b (2q + 2kv + mlp) + eager (act_b [+1+act_b] a s)/t"
            : "no recompute, FlashAttention: act_b (4h [+ dropout 2h])/t_sp + act_b (2q + 2kv + mlp), mlp = (3 gated | 2) F/t";
        break;
    }

    o->out_in = 2.0 * act_b * h / tr;
    /* Logits are vocab-parallel over tp (Megatron, torchtitan's
     * loss_parallel).  Megatron's fused vocab-parallel cross-entropy
     * (core/tensor_parallel/cross_entropy.py) upcasts once and works in
     * place: act_b V + 4 V.  PyTorch's F.cross_entropy (torchtitan,
     * torchtune, HF under DeepSpeed) keeps log_softmax's fp32 output, and
     * its backward allocates nll_loss's fp32 gradient and log_softmax's:
     * three fp32 copies of the logits of a chunk at once, the bf16 logits
     * being dropped before backward (torchtitan train.py `del pred`). */
    if (run->framework == TS_FW_MEGATRON) {
        o->loss = (act_b + 4.0 / kc) * V;
        o->loss_cached = 0;
    } else {
        double fwd = act_b * V + 4.0 * V * (kc - 1.0) / kc + 8.0 * V / kc;
        double bwd = 4.0 * V * (kc - 1.0) / kc + 12.0 * V / kc + act_b * V * (kc - 1.0) / kc;
        o->loss = fmax(fwd, bwd);
        /* The freed bf16 logits block is smaller than an fp32 copy: the
         * caching allocator cannot hand it to backward's fp32 buffers. */
        o->loss_cached = kc == 1.0 ? act_b * V : 0.0;
    }
}

/* ---- one pipeline stage ------------------------------------------- */

typedef struct ts_mem_ctx {
    const ts_run *run;
    ts_params p;
    bool shape, training;
    double f;                      /* trainable fraction */
    double bw, bg, bm, bo;         /* bytes per param: weights, grads, master, optimizer */
    double nd, nde;                /* shard degrees: dense, expert */
    double layer_dense, layer_expert; /* params per (MoE) layer on one GPU (after tp / ep) */
    double layer_dense_d;          /* params of one of the first dense-FFN layers (DeepSeek) */
    int64_t dense_layers;          /* how many first layers are dense in a MoE model */
    ts_mem_act act_dense;          /* activations of such a dense layer */
    double emb, head;              /* embedding / output head on one GPU */
    double tokens;                 /* tokens per micro-batch on one GPU: seq/cp * b */
    double micro_per_step;         /* 0: not known (no global batch given) */
    ts_mem_act act;
    bool lora;                     /* LoRA adapters train, the base is frozen */
    double lora_layer;             /* adapter params per layer on one GPU */
    double frozen_b;               /* bytes per frozen base param */
    double paged_frac;             /* of the optimizer state: in CUDA managed memory (paged 8-bit) */
    double opt_bpp;                /* optimizer state bytes per trained param */
} ts_mem_ctx;

/* Layers of stage i: first/last counts as given, the rest even, the
 * earlier stages taking the remainder (they also hold the most
 * micro-batches, so this is the conservative placement). */
static int64_t ts_mem_stage_layers(const ts_run *r, int64_t i)
{
    int64_t pp = r->pp, L = r->model.layers;
    int64_t first = r->first_stage_layers, last = r->last_stage_layers;
    int64_t lo = 0, mid = pp, rest = L, j;

    if (pp == 1)
        return L;
    if (first > 0) {
        if (i == 0)
            return first;
        mid--;
        rest -= first;
        lo = 1;
    }
    if (last > 0) {
        if (i == pp - 1)
            return last;
        mid--;
        rest -= last;
    }
    j = i - lo;
    return rest / mid + (j < rest % mid ? 1 : 0);
}

/* First layer of stage i: the sum of the counts before it, in closed
 * form (the first stage's count, then j even stages of which the first
 * rest % mid hold one more). */
static int64_t ts_mem_stage_start(const ts_run *r, int64_t i)
{
    int64_t pp = r->pp, L = r->model.layers;
    int64_t first = r->first_stage_layers, last = r->last_stage_layers;
    int64_t lo = 0, mid = pp, rest = L, j, q, rem;

    if (pp == 1 || i == 0)
        return 0;
    if (first > 0) {
        mid--;
        rest -= first;
        lo = 1;
    }
    if (last > 0) {
        mid--;
        rest -= last;
    }
    j = i - lo;
    if (mid <= 0)
        return first; /* only the first and the last stage */
    q = rest / mid;
    rem = rest % mid;
    return (lo > 0 ? first : 0) + j * q + (j < rem ? j : rem);
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

/* Stage i holds layers start .. start + its count - 1. */
static void ts_mem_stage_eval(const ts_mem_ctx *c, int64_t i, int64_t start, ts_mem_stage *st)
{
    const ts_run *r = c->run;
    bool first = i == 0, last = i == r->pp - 1;
    /* hf: accelerate's FSDP underneath when sharded (zero >= 2). */
    bool fsdp = r->framework == TS_FW_FSDP || r->framework == TS_FW_HF,
         ds = r->framework == TS_FW_DEEPSPEED;
    bool pytorch_opt = r->framework != TS_FW_MEGATRON;
    double n, nd_l, dense, expert, share, W, G, M, O, Op;
    double fl, saved, fwd_ws, bwd_ws, loss_ws, layer_p, persist, grads_live;
    double ph[TS_PHASE_COUNT] = { 0 };
    double reserve = 0;
    int k, peak;

    n = (double)(c->shape ? ts_mem_stage_layers(r, i) : 0);
    st->stage = i;
    st->layers = (int64_t)n;
    /* A MoE model's first dense layers (DeepSeek) sit on the first stages. */
    nd_l = c->dense_layers > start ? fmin(n, (double)(c->dense_layers - start)) : 0;
    if (c->shape) {
        dense = (n - nd_l) * c->layer_dense + nd_l * c->layer_dense_d +
                (first ? c->emb : 0) + (last ? c->head : 0);
        expert = (n - nd_l) * c->layer_expert;
    } else {
        /* A plain count: spread evenly over the stages. */
        dense = c->p.dense / (double)(r->tp * r->pp);
        expert = c->p.expert / (double)(r->tp * r->pp * r->ep);
    }
    st->params = dense + expert;
    layer_p = fmax(c->layer_dense + c->layer_expert, nd_l > 0 ? c->layer_dense_d : 0);

    /* Sharded share of this stage's parameters. */
    share = dense / c->nd + expert / c->nde;
    st->host_share = share;
    W = c->bw * (r->zero >= 3 ? share : st->params);
    G = c->bg * (r->zero >= 2 ? share : st->params);
    M = c->bm * (r->zero >= 1 ? share : st->params);
    O = c->bo * (r->zero >= 1 ? share : st->params);
    if (fsdp && r->master_weights && !c->lora) {
        /* FSDP keeps the sharded parameter in fp32 as the master copy and
         * no persistent 16-bit copy (MixedPrecisionPolicy param_dtype
         * casts at all-gather time). */
        W = 0;
    }
    if (ds && c->training) {
        /* DeepSpeed keeps an fp32 gradient partition next to the 16-bit
         * gradients (stage_1_and_2.py single_partition_of_fp32_groups,
         * stage3.py fp32_partitioned_groups_flat): estimate_zero2/3's 18
         * bytes = 2 + 4 + 12. */
        G += 4.0 * c->f * (r->zero >= 1 ? share : st->params);
    }
    if (c->lora) {
        /* Adapters train (sharded like any trained state); the frozen
         * base is stored at frozen_precision (sharded under ZeRO-3 /
         * FSDP as the base itself is), embeddings at the training
         * precision. */
        double ad = n * c->lora_layer, ad_sh = ad / c->nd;
        double pb = ts_precision_bytes(r->precision);
        double emb = (first ? c->emb : 0) + (last ? c->head : 0);
        double lin = st->params - emb;

        /* hf: PEFT keeps a bf16/fp16 model's adapters in fp32
         * (autocast_adapter_dtype, peft mapping_func.py): 4-byte weights
         * and gradients, no separate master copy. */
        bool hf = r->framework == TS_FW_HF;
        double ab = hf ? 4.0 : pb;

        W = (r->zero >= 3 ? 1.0 / c->nd : 1.0) * (c->frozen_b * lin + pb * emb) +
            ab * (r->zero >= 3 ? ad_sh : ad);
        G = (hf ? 4.0 : ts_precision_bytes(r->grad_precision)) * (r->zero >= 2 ? ad_sh : ad);
        M = r->master_weights && !hf ? 4.0 * (r->zero >= 1 ? ad_sh : ad) : 0;
        O = c->opt_bpp * (r->zero >= 1 ? ad_sh : ad);
        st->params += ad;
    }
    if (r->offload_optimizer) {
        /* ZeRO-Offload: master, moments and the fp32 gradient partition
         * live in host RAM; 16-bit gradients stream out through the
         * reduce bucket (counted with the buffers). */
        M = O = G = 0;
    }
    if (r->offload_params)
        W = 0;
    /* Paged 8-bit states live in managed memory: on the GPU (the total,
     * nvidia-smi) but never in the caching allocator's figures. */
    Op = O * c->paged_frac;
    O -= Op;

    /* Framework buffers.  persist: held through forward and backward. */
    persist = 0;
    fwd_ws = 0;
    bwd_ws = 0;
    if (fsdp && r->zero >= 2 && c->nd > 1) {
        double bf16 = 2.0;
        if (r->pp > 1 || r->zero == 2) {
            /* torchtitan under PP (reshard_after_forward False) and
             * SHARD_GRAD_OP: the stage's 16-bit parameters stay
             * unsharded for the whole step. */
            persist += bf16 * st->params;
        } else {
            /* FSDP2 root module (embedding, final norm, output) is not
             * resharded after forward; each block is all-gathered with
             * the next one prefetched. */
            persist += bf16 * ((first ? c->emb : 0) + (last ? c->head : 0));
            fwd_ws += 2.0 * bf16 * layer_p;
        }
        /* Backward of one block: unsharded 16-bit gradients and the fp32
         * reduce-scatter input (reduce_dtype fp32). */
        bwd_ws += (r->pp > 1 || r->zero == 2 ? 0 : 2.0 * bf16 * layer_p) +
                  bf16 * layer_p + 4.0 * layer_p;
        if (r->pp > 1) {
            /* Gradient sync only after the last micro-batch: unsharded
             * fp32 gradients accumulate for the whole step. */
            persist += 4.0 * c->f * st->params;
        }
    } else if (ds) {
        if (r->zero >= 3) {
            fwd_ws += 2.0 * fmin(TS_MEM_DS_MAX_LIVE, layer_p + TS_MEM_DS_PREFETCH);
            bwd_ws += 2.0 * fmin(TS_MEM_DS_MAX_LIVE, layer_p + TS_MEM_DS_PREFETCH);
        }
        if (c->training)
            bwd_ws += 2.0 * fmin(TS_MEM_DS_BUCKET, st->params); /* reduce (ipg) bucket */
    }

    /* Activations. */
    fl = ts_mem_in_flight(c, i);
    st->in_flight = fl;
    saved = fl * ((n - nd_l) * c->act.saved + nd_l * c->act_dense.saved) * c->tokens;
    if (first && c->shape)
        saved += fl * 8.0 * c->tokens; /* input ids (int64) */
    if (!c->training)
        saved = 0;
    {
        /* One layer's working set: the larger of the two layer kinds. */
        double fw = c->act.full - c->act.saved, bw = fw + c->act.work;

        if (nd_l > 0) {
            fw = fmax(fw, c->act_dense.full - c->act_dense.saved);
            bw = fmax(bw, c->act_dense.full - c->act_dense.saved + c->act_dense.work);
        }
        fwd_ws += c->training ? fw * c->tokens : 0;
        bwd_ws += bw * c->tokens;
    }
    loss_ws = last && c->shape ? c->act.loss * c->tokens : 0;
    if (c->lora && r->frozen_precision != TS_QUANT_BF16) {
        /* A quantised base is dequantised to 16 bits one matrix at a time
         * for its matmul (bitsandbytes / torchao NF4): the largest, h x F. */
        double deq = 2.0 * (double)r->model.hidden * (double)r->model.ffn / (double)r->tp;
        fwd_ws += deq;
        bwd_ws += deq;
    }

    /* Gradients: Megatron's main_grad buffer is persistent; PyTorch
     * optimizers' zero_grad(set_to_none) frees them, so they exist in
     * forward only while a step accumulates over micro-batches. */
    grads_live = G;
    if (pytorch_opt && c->micro_per_step <= 1 && r->pp == 1)
        grads_live = 0;

    if (c->training) {
        double base = W + M + O + persist;
        ph[TS_PHASE_FORWARD] = base + grads_live + saved + fwd_ws;
        if (loss_ws > 0)
            ph[TS_PHASE_LOSS] = base + grads_live + saved +
                                c->act.out_in * c->tokens + loss_ws;
        /* Backward: activations free as gradients appear. */
        ph[TS_PHASE_BACKWARD] = base + fmax(saved + grads_live, G) + bwd_ws;
        ph[TS_PHASE_OPTIMIZER] = W + G + M + O + persist -
                                 (fsdp && r->pp > 1 ? 4.0 * c->f * st->params : 0) +
                                 (ds && r->zero < 3 ? 2.0 * fmin(TS_MEM_DS_BUCKET, st->params) : 0);
    } else {
        ph[TS_PHASE_FORWARD] = W + persist + fwd_ws;
    }

    peak = TS_PHASE_FORWARD;
    for (k = 0; k < TS_PHASE_COUNT; k++) {
        st->phase_bytes[k] = ph[k];
        if (ph[k] > ph[peak])
            peak = k;
    }
    st->peak_phase = (ts_phase)peak;
    st->allocated_peak = ph[peak];

    /* Allocator reserve: at the loss phase, blocks cached from the
     * layers' forward transients (far smaller than a logits buffer) and
     * the freed bf16 logits block cannot serve the fp32 loss buffers. */
    if (peak == TS_PHASE_LOSS)
        reserve = fwd_ws + c->act.loss_cached * c->tokens;
    if (fsdp && r->zero >= 2 && c->nd > 1 && r->pp == 1 && peak != TS_PHASE_BACKWARD &&
        peak != TS_PHASE_OPTIMIZER) {
        /* FSDP2 allocates the reduce-scatter input and output (the sharded
         * gradients) on its reduce-scatter stream (_fsdp_collectives.py,
         * foreach_reduce); the caching allocator pools blocks per stream,
         * so after the first step that stream keeps them even while
         * zero_grad has freed the gradients. */
        reserve += (grads_live > 0 ? 0 : G) + 4.0 * layer_p;
    }
    if (loss_ws > 0 && peak != TS_PHASE_LOSS && c->training) {
        /* The caching allocator returns nothing to the driver unless
         * emptied (c10/cuda/CUDACachingAllocator.cpp: freed blocks stay
         * cached): a later, larger phase carves its tensors out of the
         * loss phase's cached blocks, so the reserved peak is never below
         * what the loss phase reserved. */
        double loss_res = ph[TS_PHASE_LOSS] + fwd_ws + c->act.loss_cached * c->tokens;

        if (loss_res > st->allocated_peak + reserve)
            reserve = loss_res - st->allocated_peak;
    }
    reserve += r->fragmentation * st->allocated_peak;
    st->reserved_peak = st->allocated_peak + reserve;

    /* Terms at the peak phase; they add up to the total. */
    st->weights = W;
    st->master = M;
    st->optimizer = O;
    st->paged = Op;
    switch (peak) {
    case TS_PHASE_LOSS:
        st->grads = grads_live;
        st->activations = saved + c->act.out_in * c->tokens;
        st->buffers = persist + loss_ws;
        break;
    case TS_PHASE_BACKWARD:
        /* Start of backward (activations all saved) or its end (all
         * gradients allocated), whichever holds more. */
        st->activations = saved + grads_live >= G ? saved : 0;
        st->grads = saved + grads_live >= G ? grads_live : G;
        st->buffers = persist + bwd_ws;
        break;
    case TS_PHASE_OPTIMIZER:
        st->grads = G;
        st->activations = 0;
        st->buffers = ph[peak] - (W + G + M + O);
        break;
    case TS_PHASE_FORWARD:
    default:
        st->grads = c->training ? grads_live : 0;
        st->activations = saved;
        st->buffers = persist + fwd_ws;
        break;
    }
    st->overhead = reserve + r->overhead_gib * TS_MEM_GIB + Op;
    st->total = st->reserved_peak + r->overhead_gib * TS_MEM_GIB + Op;
    st->headroom = r->gpu.hbm_bytes - st->total;
    st->fits = st->total <= r->gpu.hbm_bytes;
}

/* DeepSpeed's estimate_zero{2,3}_model_states_mem_needs (no offload), as
 * in deepspeed/runtime/zero/stage_1_and_2.py and stage3.py since PR #5099
 * (DeepSpeed 0.14): ZeRO-2 2P + 18P/N, ZeRO-3 4 largest_layer + 18P/N. */
static void ts_mem_deepspeed(const ts_run *run, const ts_params *p,
                             ts_memory *out)
{
    double P = out->params_per_gpu, N = (double)out->shard_group, largest;

    if (run->zero < 2) {
        ts_term_set(&out->deepspeed_gpu, 0, "0",
                    "DeepSpeed's estimators cover ZeRO-2 and ZeRO-3 only");
        return;
    }
    if (run->zero == 2) {
        ts_term_set(&out->deepspeed_gpu, 2.0 * P + 18.0 * P / N, "2 P_gpu + 18 P_gpu / (dp*cp)",
                    "DeepSpeed >= 0.14 (PR #5099) estimate_zero2_model_states_mem_needs, no offload");
        return;
    }
    largest = 0;
    if (p->from_shape) {
        double layer = p->per_layer_attn + p->per_layer_mlp + p->per_layer_norm;
        largest = fmax(p->embedding, layer) / (double)run->tp;
    }
    ts_term_set(&out->deepspeed_gpu, 4.0 * largest + 18.0 * P / N,
                "4 largest_layer + 18 P_gpu / (dp*cp); largest_layer = max(V h, one layer) / tp",
                p->from_shape
                    ? "DeepSpeed >= 0.14 estimate_zero3_model_states_mem_needs, no offload"
                    : "DeepSpeed >= 0.14 estimate_zero3_model_states_mem_needs, no offload; no shape, largest layer taken as 0");
}

static bool ts_mem_finite(const ts_memory *o)
{
    const double v[] = {
        o->params_per_gpu, o->bpp_weights, o->bpp_grads, o->bpp_master,
        o->bpp_optimizer, o->bpp_total, o->model_state_bytes, o->inference_bytes,
        o->weights.value, o->grads.value, o->master.value, o->optimizer.value,
        o->activations.value, o->buffers.value, o->overhead.value, o->total.value,
        o->allocated_peak.value, o->reserved_peak.value, o->runtime.value,
        o->act_per_layer, o->act_layer_full, o->act_embedding_logits, o->act_seed000.value,
        o->act_seq2_term, o->host_bytes_per_gpu, o->host_bytes_per_node,
        o->deepspeed_gpu.value, o->hbm_bytes, o->headroom_bytes,
    };
    size_t i;

    for (i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

/* Bytes per parameter, the shares per GPU and the activation model. */
static void ts_mem_context(const ts_run *run, const ts_params *p, ts_mem_ctx *c,
                           ts_memory *out)
{
    const ts_model *m = &run->model;
    ts_mem_opt opt = ts_mem_optimizer(run, p);
    double t = (double)run->tp;

    *c = (ts_mem_ctx){ 0 };
    c->run = run;
    c->p = *p;
    c->shape = p->from_shape;
    c->training = run->optimizer != TS_OPT_NONE;
    c->f = c->training ? run->trainable_fraction : 0.0;

    /* LoRA: adapters A (r x in) and B (out x r) on every attention and
     * MLP matrix are all that trains; the base is frozen at
     * frozen_precision, embeddings and norms at the training precision
     * (Hu et al. 2021; QLoRA, Dettmers et al. 2023; HF peft with
     * target_modules all-linear: 41,943,040 adapters for Llama 3 8B at
     * r 16). */
    c->lora_layer = 0;
    c->lora = run->lora_rank > 0 && c->shape && c->training;
    if (c->lora) {
        double h = (double)m->hidden, F = (double)m->ffn, r = (double)run->lora_rank;
        double kvd = (double)m->kv_heads * h / (double)m->heads;
        double E = m->experts > 1 ? (double)m->experts : 1.0;
        unsigned tg = run->lora_targets;
        /* A (r x in) and B (out x r) on each targeted matrix; a
         * two-matrix MLP has no gate (up_proj, down_proj are fc1, fc2). */
        double attn = r * (((tg & TS_LORA_Q) ? h + h : 0) + ((tg & TS_LORA_K) ? h + kvd : 0) +
                           ((tg & TS_LORA_V) ? h + kvd : 0) + ((tg & TS_LORA_O) ? h + h : 0) +
                           ((tg & TS_LORA_QKV) ? h + h + 2.0 * kvd : 0));
        double mlp = r * E * ((m->gated && (tg & TS_LORA_GATE) ? h + F : 0) +
                              ((tg & TS_LORA_UP) ? h + F : 0) + ((tg & TS_LORA_DOWN) ? F + h : 0));
        double adapters = (attn + mlp) * (double)m->layers;
        /* Paged 8-bit states: the adapters' A and B tensors of 1e5
         * elements or more (r in, r out). */
        double paged = 0;

        if (run->optimizer == TS_OPT_PAGED_ADAM8BIT) {
            const double in_out[][3] = {
                { TS_LORA_Q, h, h }, { TS_LORA_K, h, kvd }, { TS_LORA_V, h, kvd },
                { TS_LORA_O, h, h }, { TS_LORA_QKV, h, h + 2.0 * kvd },
            };
            size_t j;

            for (j = 0; j < sizeof in_out / sizeof in_out[0]; j++) {
                if (!(tg & (unsigned)in_out[j][0]))
                    continue;
                paged += (r * in_out[j][1] >= TS_MEM_BNB_PAGED_MIN ? r * in_out[j][1] : 0) +
                         (r * in_out[j][2] >= TS_MEM_BNB_PAGED_MIN ? r * in_out[j][2] : 0);
            }
            if (r * h >= TS_MEM_BNB_PAGED_MIN || r * F >= TS_MEM_BNB_PAGED_MIN) {
                double per = (r * h >= TS_MEM_BNB_PAGED_MIN ? r * h : 0) +
                             (r * F >= TS_MEM_BNB_PAGED_MIN ? r * F : 0);
                double nmlp = (m->gated && (tg & TS_LORA_GATE) ? 1.0 : 0) +
                              ((tg & TS_LORA_UP) ? 1.0 : 0) + ((tg & TS_LORA_DOWN) ? 1.0 : 0);

                paged += E * nmlp * per;
            }
            c->paged_frac = attn + mlp > 0 ? paged / (attn + mlp) : 0;
        }
        double linear = p->total - p->embedding - p->output_head;

        c->lora_layer = (attn + mlp) / t;
        c->f = 1.0;
        c->frozen_b = ts_quant_bytes(run->frozen_precision);
        /* Reported per parameter of base + adapters. */
        out->bpp_weights = (c->frozen_b * linear +
                            ts_precision_bytes(run->precision) * (p->embedding + p->output_head + adapters)) /
                           (p->total + adapters);
        c->f = adapters / (p->total + adapters);
    } else {
        out->bpp_weights = ts_precision_bytes(run->precision);
    }
    out->bpp_grads = c->f * ts_precision_bytes(run->grad_precision);
    out->bpp_master = run->master_weights ? c->f * 4.0 : 0.0;
    out->bpp_optimizer = c->f * opt.bpp;
    out->bpp_total = out->bpp_weights + out->bpp_grads + out->bpp_master + out->bpp_optimizer;
    c->opt_bpp = opt.bpp;
    /* Full training: every matrix has far more than 1e5 elements. */
    if (!c->lora && run->optimizer == TS_OPT_PAGED_ADAM8BIT)
        c->paged_frac = 1.0;
    c->bw = out->bpp_weights;
    c->bg = out->bpp_grads;
    c->bm = out->bpp_master;
    c->bo = out->bpp_optimizer;

    c->nd = (double)(run->dp * run->cp);
    c->nde = c->nd / (double)run->ep; /* exact: dp % ep == 0 */
    if (c->shape) {
        double moe_layers = (double)(m->layers - p->dense_layers);
        double per_layer_expert = moe_layers > 0 ? p->expert / moe_layers : 0.0;
        c->layer_dense = (p->per_layer_attn + p->per_layer_norm +
                          p->per_layer_mlp - per_layer_expert) / t;
        c->layer_expert = per_layer_expert / (t * (double)run->ep);
        c->layer_dense_d = (p->per_layer_attn + p->per_layer_norm + p->dense_layer_mlp) / t;
        c->dense_layers = p->dense_layers;
        /* The norm after the embedding is replicated, not split by tp. */
        c->emb = p->embedding / t + p->embed_norm;
        /* Tied embeddings: with pp > 1 the last stage holds its own copy
         * of the word embeddings (Megatron shared_embedding). */
        c->head = (p->output_head > 0 ? p->output_head
                                      : (run->pp > 1 ? p->embedding : 0.0)) / t +
                  (double)m->hidden; /* final norm */
    }
    c->tokens = (double)(run->seq / run->cp) * (double)run->micro_batch;
    c->micro_per_step = run->global_batch > 0
        ? (double)(run->global_batch / (run->dp * run->micro_batch)) : 0;
    if (c->shape) {
        ts_mem_layer(run, false, &c->act);
        ts_mem_layer(run, true, &c->act_dense);
    } else
        c->act = (ts_mem_act){ 0, 0, 0, 0, 0, 0, 0, "no model shape: activations not modelled" };
    out->optimizer.assumptions = opt.assumptions;
}

static const char *ts_mem_fw_text(const ts_run *r)
{
    switch (r->framework) {
    case TS_FW_FSDP:
        return "PyTorch FSDP2 (torchtitan): sharded fp32 params as master, unsharded 16-bit block + prefetch, fp32 reduce-scatter";
    case TS_FW_DEEPSPEED:
        return "DeepSpeed ZeRO: 16-bit + fp32 gradient partitions, reduce/allgather buckets, stage-3 live parameters";
    case TS_FW_HF:
        return "Hugging Face transformers + PEFT: eager modules, fp32 adapters and fp32 copies of their inputs, per-layer checkpointing; FSDP's buffers with zero >= 2";
    case TS_FW_MEGATRON:
    case TS_FW_COUNT:
    default:
        return "Megatron-LM: distributed optimizer shards master and moments over dp*cp; main_grad buffer persistent";
    }
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
#define TS_MEM_MIDDLE_MAX 4

static size_t ts_mem_middle(const ts_mem_ctx *c, int64_t a, int64_t b, int64_t *mids)
{
    const ts_run *r = c->run;
    int64_t cand[TS_MEM_MIDDLE_MAX], k;
    size_t n = 0, nc = 0, i;

    cand[nc++] = a;
    if (c->shape) {
        int64_t lo = r->first_stage_layers > 0 ? 1 : 0;
        int64_t mid = r->pp - lo - (r->last_stage_layers > 0 ? 1 : 0);
        int64_t rest = r->model.layers - r->first_stage_layers - r->last_stage_layers;

        /* The first even stage with one layer fewer. */
        if (mid > 0 && rest % mid != 0)
            cand[nc++] = lo + rest % mid;
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

uint64_t ts_memory_work(const ts_run *r)
{
    int64_t stages = r->pp <= TS_STAGES_MAX ? r->pp : TS_STAGES_MAX + TS_MEM_MIDDLE_MAX;

    return TS_COST_MEMORY + TS_COST_STAGE * (uint64_t)stages;
}

/* All but stages[] (64 entries, 11 KB): the stages_len used are written
 * whole, and an estimate runs once per candidate in the fit and search
 * loops. */
static void ts_mem_clear(ts_memory *out)
{
    memset(out, 0, offsetof(ts_memory, stages));
    memset((char *)out + offsetof(ts_memory, stages) + sizeof out->stages, 0,
           sizeof *out - offsetof(ts_memory, stages) - sizeof out->stages);
}

ts_status ts_memory_eval(const ts_run *run, const ts_params *p, ts_memory *out,
                         ts_error *err)
{
    ts_mem_ctx c;
    ts_mem_stage s, worst;
    double host;
    int64_t on_node, i, start, half = TS_STAGES_MAX / 2;
    const char *opt_text;
    int k;

    ts_mem_clear(out);

    out->params = *p;
    ts_mem_context(run, p, &c, out);
    opt_text = out->optimizer.assumptions;
    out->model_state_bytes = p->total * out->bpp_total;
    out->inference_bytes = p->total * ts_precision_bytes(run->precision);
    out->shard_group = run->dp * run->cp;

    /* The worst stage (the first of the largest totals) sets the verdict.
     * Up to TS_STAGES_MAX stages: each one, all listed.  Past that, the
     * first and last half are listed and, between them, only the stage
     * that opens each run of equal stages is evaluated (ts_mem_middle):
     * O(1) in pp, so that a client's pp of 2^20 costs what 64 do. */
    out->stages_count = run->pp;
    worst = (ts_mem_stage){ 0 };
    if (run->pp <= TS_STAGES_MAX) {
        for (i = 0, start = 0; i < run->pp; i++) {
            ts_mem_stage_eval(&c, i, start, &s);
            start += s.layers;
            if (i == 0 || s.total > worst.total)
                worst = s;
            out->stages[out->stages_len++] = s;
        }
    } else {
        int64_t mids[TS_MEM_MIDDLE_MAX];
        size_t nm = ts_mem_middle(&c, half, run->pp - half, mids), mi = 0;

        for (i = 0; i < run->pp; i++) {
            if (i == half) {
                /* Ascending, as the full loop would meet them. */
                for (mi = 0; mi < nm; mi++) {
                    ts_mem_stage_eval(&c, mids[mi], c.shape ? ts_mem_stage_start(run, mids[mi]) : 0, &s);
                    if (s.total > worst.total)
                        worst = s;
                }
                i = run->pp - half;
            }
            ts_mem_stage_eval(&c, i, c.shape ? ts_mem_stage_start(run, i) : 0, &s);
            if (i == 0 || s.total > worst.total)
                worst = s;
            out->stages[out->stages_len++] = s;
        }
    }
    out->worst_stage = worst.stage;
    out->params_per_gpu = worst.params;
    out->layers_per_stage = worst.layers;
    out->in_flight = (int64_t)ceil(out->stages[0].in_flight);
    out->act_per_layer = c.act.saved * c.tokens;
    out->act_layer_full = c.act.full * c.tokens;
    out->act_seq2_term = c.act.score * c.tokens * (double)out->stages[0].layers *
                         out->stages[0].in_flight;
    out->act_embedding_logits = c.act.loss * c.tokens;
    for (k = 0; k < TS_PHASE_COUNT; k++)
        out->phases[k] = worst.phase_bytes[k];
    out->peak_phase = worst.peak_phase;

    ts_term_set(&out->weights, worst.weights,
                run->offload_params ? "0 on GPU; host: bytes(precision) * P_stage / (dp*cp)"
                : run->framework == TS_FW_FSDP && run->master_weights ? "0: the fp32 shard is the master copy"
                : c.lora ? "bytes(frozen_precision) * P_linear + bytes(precision) * (P_embedding + adapters), stage share"
                : run->zero >= 3 ? "bytes(precision) * (P_dense/(dp cp) + P_expert/(dp cp/ep)), stage share"
                                : "bytes(precision) * P_stage; P_stage = its layers/tp (experts /ep) + embedding (first) + head (last)",
                ts_mem_fw_text(run));
    ts_term_set(&out->grads, worst.grads,
                !c.training ? "0"
                : run->zero >= 2 ? "bytes(grad_precision) * f * P_stage / (dp*cp) (experts / (dp*cp/ep))"
                                : "bytes(grad_precision) * f * P_stage",
                !c.training ? "inference: no gradients"
                : run->framework == TS_FW_MEGATRON ? "Megatron main_grad buffer (fp32 by default), held all step"
                : "PyTorch zero_grad(set_to_none): allocated during backward unless the step accumulates");
    ts_term_set(&out->master, worst.master,
                out->bpp_master == 0 ? "0"
                : run->offload_optimizer ? "0 on GPU; host: 4 * f * P_stage / (dp*cp)"
                : run->zero >= 1 ? "4 * f * P_stage / (dp*cp) (experts / (dp*cp/ep))"
                                : "4 * f * P_stage",
                out->bpp_master == 0 ? "no fp32 master copy (master_weights off, fp32 weights, or inference)"
                : run->zero >= 1 ? "fp32 master weights sharded over the data-parallel group"
                                : "fp32 master weights replicated");
    ts_term_set(&out->optimizer, worst.optimizer,
                out->bpp_optimizer == 0 ? "0"
                : run->offload_optimizer ? "0 on GPU; host: bpp_optimizer * f * P_stage / (dp*cp)"
                : run->zero >= 1 ? "bpp_optimizer * f * P_stage / (dp*cp) (experts / (dp*cp/ep))"
                                : "bpp_optimizer * f * P_stage",
                opt_text);
    ts_term_set(&out->activations, worst.activations,
                c.shape && c.training ? c.act.formula : "0",
                !c.training ? "inference: activations and KV cache not modelled"
                : !c.shape ? "no model shape: activations need layers, hidden and heads, reported as 0"
                : "saved activations at the peak phase: in_flight * layers * per-layer bytes * seq/cp * micro_batch (+ input ids)");
    ts_term_set(&out->buffers, worst.buffers,
                "peak-phase working set: logits/loss, recompute + gradient working set of one layer, framework buffers",
                "loss: Megatron fused CE (act_b + 4/chunks) V/tp, PyTorch CE 3 fp32 copies per chunk; FSDP unsharded block + prefetch, fp32 reduce-scatter; DeepSpeed buckets 5e8");
    ts_term_set(&out->allocated_peak, worst.allocated_peak,
                "max over phases (forward, loss, backward, optimizer) of the tensors allocated",
                "compare with torch.cuda.max_memory_allocated / 'peak active'");
    ts_term_set(&out->reserved_peak, worst.reserved_peak,
                "allocated_peak + cached blocks the peak phase cannot reuse + fragmentation * allocated_peak",
                "caching allocator: at the loss phase the layers' freed working set and the bf16 logits block are too small for the fp32 loss buffers; compare with torch.cuda.max_memory_reserved");
    ts_term_set(&out->runtime, run->overhead_gib * TS_MEM_GIB + worst.paged,
                worst.paged > 0 ? "overhead_gib * 2^30 + paged optimizer states" : "overhead_gib * 2^30",
                worst.paged > 0
                    ? "CUDA context, cuBLAS workspaces, NCCL communicator buffers, and the paged 8-bit optimizer states (CUDA managed memory): outside the caching allocator"
                    : "CUDA context, cuBLAS workspaces, NCCL communicator buffers: outside the caching allocator");
    ts_term_set(&out->overhead, worst.overhead,
                "(reserved_peak - allocated_peak) + runtime",
                "allocator reserve plus runtime context");
    ts_term_set(&out->total, worst.total,
                "reserved_peak + runtime context, worst pipeline stage",
                "compared with HBM as the driver reports it");

    /* Host RAM for offload (DeepSpeed ZeRO-Offload / Infinity): fp32
     * master, moments and the fp32 gradient partition, 16 B per trainable
     * param of the shard; + 16-bit params with offload_params (18). */
    host = 0;
    if (run->offload_optimizer)
        host += (out->bpp_master + out->bpp_optimizer + 4.0 * c.f) * worst.host_share;
    if (run->offload_params)
        host += out->bpp_weights * worst.host_share;
    out->host_bytes_per_gpu = host;
    /* Only this job's GPUs on a node share its host RAM. */
    on_node = run->gpus < run->gpus_per_node ? run->gpus : run->gpus_per_node;
    out->host_bytes_per_node = host * (double)on_node;

    /* Seed 000's simple whole-model form, reported for comparison only. */
    if (c.shape && c.training) {
        double sq = (double)run->seq, h = (double)run->model.hidden;
        ts_term_set(&out->act_seed000,
                    (double)run->micro_batch * (double)run->model.layers *
                        (5.0 * sq * h + 2.0 * (double)run->model.heads * sq * sq + 2.0 * sq * (double)run->model.ffn),
                    "b L (5 s h + 2 a s^2 + 2 s F)",
                    "seed 000's simple form: whole model, no parallelism or recompute; not used in the total");
    } else {
        ts_term_set(&out->act_seed000, 0, "0",
                    !c.training ? "inference: activations and KV cache not modelled"
                                : "no model shape: activations need layers, hidden and heads, reported as 0");
    }

    ts_mem_deepspeed(run, p, out);

    out->hbm_bytes = run->gpu.hbm_bytes;
    out->headroom_bytes = out->hbm_bytes - out->total.value;
    out->fits = out->total.value <= out->hbm_bytes;

    if (!ts_mem_finite(out)) {
        *out = (ts_memory){ 0 };
        return ts_error_set(err, TS_ERANGE, "", "memory figures overflow for these inputs");
    }
    return TS_OK;
}

ts_status ts_memory_estimate(const ts_run *r, ts_memory *out, ts_error *err)
{
    ts_run run;
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    run = *r; /* private copy: the caller's run is const */
    if ((st = ts_run_resolve(&run, err)) != TS_OK) {
        ts_mem_clear(out);
        return st;
    }
    return ts_memory_resolved(&run, out, err);
}

ts_status ts_memory_resolved(const ts_run *r, ts_memory *out, ts_error *err)
{
    ts_params p;
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    if ((st = ts_run_resolved_ok(r, err)) != TS_OK) {
        ts_mem_clear(out);
        return st;
    }
    ts_model_count(&r->model, &p);
    return ts_memory_eval(r, &p, out, err);
}

ts_status ts_memory_stage(const ts_run *r, int64_t i, ts_mem_stage *out, ts_error *err)
{
    ts_run run;
    ts_params p;
    ts_mem_ctx c;
    ts_memory scratch; /* ts_mem_context fills its bytes per parameter */
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *out = (ts_mem_stage){ 0 };
    run = *r;
    if ((st = ts_run_resolve(&run, err)) != TS_OK)
        return st;
    if (i < 0 || i >= run.pp)
        return ts_error_set(err, TS_EINVAL, "pp", "stage %lld is not in [0, pp = %lld)",
                            (long long)i, (long long)run.pp);
    ts_model_count(&run.model, &p);
    ts_mem_clear(&scratch);
    ts_mem_context(&run, &p, &c, &scratch);
    ts_mem_stage_eval(&c, i, c.shape ? ts_mem_stage_start(&run, i) : 0, out);
    return TS_OK;
}
