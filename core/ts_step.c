/*
 * ts_step.c - time of one optimizer step from first principles.
 *
 * One micro-batch on one GPU of the slowest pipeline stage is costed
 * kernel by kernel, then composed into the pipeline schedule, the
 * data-parallel collectives, and the optimizer step:
 *
 *   step = m * t_mb(slowest stage) + (p - 1)/v * t_mb(mean stage)   (1F1B bubble)
 *        + exposed DP/ZeRO/FSDP traffic + optimizer + offload
 *
 * Matmuls: additive roofline t = 2MNK / (peak * core) + 2(MK + KN + MN) / BW,
 * with `core` the fraction implied by the measured Maximum Achievable Matmul
 * FLOPS (MAMF) at its own shape, so small hidden sizes and the per-GPU
 * slices left after TP reach less of the peak than the benchmark did, for
 * a physical reason (less data reuse per byte loaded).  Fused attention
 * runs at the catalogue's FlashAttention fraction; unfused ("eager")
 * attention is two batched matmuls plus softmax/dropout traffic.  Norms,
 * residual adds, activation functions and dropout are memory-bound.
 *
 * Collectives: ring bandwidth term ((n-1)/n per all-gather/reduce-scatter,
 * 2(n-1)/n per all-reduce) at NCCL's achievable bus bandwidth, plus a
 * per-hop latency (ring n-1 hops, tree 2 log2 n: the smaller).  TP is
 * exposed (Megatron-LM's default; sequence parallelism's backward
 * re-gather is overlapped with the dgrad GEMM, as in Megatron's
 * LinearWithGradAccumulationAndAsyncCommunication).  DP traffic overlaps
 * what each framework overlaps: Megatron-Core's distributed optimizer
 * (--overlap-grad-reduce / --overlap-param-gather) hides the grad
 * reduce-scatter behind the last micro-batch's backward and the param
 * all-gather behind the first forward; FSDP/ZeRO-3 gather every layer's
 * weights before its forward and backward and reduce-scatter its grads,
 * prefetching one layer ahead (torchtitan / PyTorch FSDP2); DeepSpeed
 * ZeRO-1/2 all-gathers the updated weights after the step, exposed.
 * See docs/formulas.md, "Step time", and README "Accuracy: step time".
 * The kernels, one layer and the collectives are in ts_step_kernel.c,
 * ts_step_layer.c and ts_step_comm.c (ts_step_int.h); this file composes
 * the step.
 */
#include "ts_step_int.h"

#include <math.h>

/* NCCL bus bandwidth over the link's one-way peak: nccl-tests all_reduce
 * on DGX A100 reaches ~230-240 GB/s of NVLink3's 300, DGX H100 ~360-370 of
 * NVLink4's 450 without NVLS, NDR IB ~40-45 of 50 GB/s. */
#define TS_STEP_LINK_EFF 0.8
/* Fallbacks for a custom GPU with no network figures. */
#define TS_STEP_NVLINK_DEFAULT 64e9 /* PCIe Gen4 x16, bidirectional */
#define TS_STEP_NET_DEFAULT    50e9 /* 400 Gb/s */
#define TS_STEP_PCIE_DEFAULT   32e9
#define TS_STEP_ATTN_DEFAULT   0.35 /* fused attention fraction of a GPU with none */
/* Host-side Adam (DeepSpeed CPU-Adam) per GPU's share of the host:
 * ~25 GB/s of the sockets' memory bandwidth for each of 8 GPUs. */
#define TS_STEP_HOST_BW 25e9
/* kappa: the share of hidden (overlapped) communication time charged to
 * the step.  Collective kernels occupy SMs and HBM bandwidth while the
 * matmuls run; Lee et al. 2025 (arXiv 2507.03114, "Characterizing
 * Compute-Communication Overlap in GPU-Accelerated Distributed Deep
 * Learning", abstract) measured computation overlapped with
 * communication 18.9 % slower on average (max 40 %) on A100, H100, MI250
 * and MI210.  The compute that runs under a collective lasts about as long
 * as the collective, so the charge is 0.189 of the hidden time.  The one
 * value; docs/formulas.md and README state the same number. */
#define TS_STEP_KAPPA 0.189

double ts_step_bubble_fraction(int64_t p, int64_t m, int64_t v)
{
    if (p <= 1 || m <= 0 || v <= 0)
        return 0;
    return (double)(p - 1) / ((double)m * (double)v);
}

/* ---- the step ---------------------------------------------------- */

static double ts_step_bytes(ts_precision p)
{
    return ts_precision_bytes(p);
}

/* Optimizer state bytes moved per parameter in the update: read grad,
 * read+write master, read+write each state buffer, write the weights. */
static double ts_step_opt_bytes(const ts_run *r, double grad_b)
{
    double state = r->optimizer_precision == TS_PREC_BF16 ? 2.0 : 4.0;
    double n_state;

    switch (r->optimizer) {
    case TS_OPT_ADAM:
    case TS_OPT_ADAMW:
        n_state = 2;
        break;
    case TS_OPT_ADAM8BIT:
        n_state = 2;
        state = 1;
        break;
    case TS_OPT_SGD_MOMENTUM:
    case TS_OPT_LION:
        n_state = 1;
        break;
    case TS_OPT_ADAFACTOR:
        n_state = 0.05; /* factored: tiny */
        break;
    case TS_OPT_NONE:
        return 0;
    case TS_OPT_SGD:
    case TS_OPT_COUNT:
    default:
        n_state = 0;
        break;
    }
    return 2.0 * grad_b /* grad read for the norm/clip, then for the update */ +
           (r->master_weights ? 8.0 : 0.0) + 2.0 * n_state * state + ts_step_bytes(r->precision);
}

/* What the phases of ts_step_eval share: the step's counts and this
 * GPU's parameters, then the slowest stage's micro-batch. */
typedef struct ts_step_sum {
    double m, tokens_step, gpus;
    double P_gpu, P_train, P_gather_b, n_dp, wb, gb;
    int64_t n_dp_i;
    double fwd_max, bwd_max; /* the slowest stage, one micro-batch */
    double hidden;           /* TP / CP traffic hidden under compute, per step */
} ts_step_sum;

/* The run's achieved rates; TS_EINCOMPAT when the GPU has no peak at
 * the compute precision. */
static ts_status ts_step_rates(const ts_run *r, const ts_params *p, ts_step_hw *hw)
{
    const ts_gpu *g = &r->gpu;
    bool fp8;

    hw->peak = ts_gpu_peak(g, r->compute_precision);
    /* Memory-bound kernels run at the GPU's measured streaming bandwidth
     * where the catalogue has one (BabelStream copy), else at 90 % of the
     * datasheet figure. */
    hw->mem = (g->hbm_bw > 0 ? g->hbm_bw : 2e12) *
              (g->stream_eff > 0 && g->stream_eff <= 1 ? g->stream_eff : TS_STEP_MEM_EFF);
    fp8 = r->compute_precision == TS_PREC_FP8;
    hw->opb = fp8 ? 1.0 : r->compute_precision == TS_PREC_FP32 ? 4.0 : 2.0;
    /* Under FP8 only the linears run in FP8: Transformer Engine's
     * DotProductAttention stays in bf16 unless the recipe sets fp8_dpa
     * (transformer_engine/pytorch/attention.py@v1.12), and torchao's
     * float8 converts nn.Linear only. */
    hw->attn_peak = fp8 ? ts_gpu_peak(g, TS_PREC_BF16) : hw->peak;
    if (!(hw->attn_peak > 0))
        hw->attn_peak = hw->peak;
    {
        ts_gpu gg = *g;
        double derived = ts_gpu_settled(g, fp8), sustain = ts_gpu_sustain(g);

        /* FP8 matmuls reach their own measured fraction of the FP8 peak
         * (cuBLASLt / hipBLASLt sweeps, ts_gpu.c) where one is known.
         * That sweep ran 10,000 warm-up iterations before timing, so it
         * is already at the power-limited clock: no sustain derating.  A
         * Blackwell part without an MSMF: B200's settled rate at its own
         * power limit (ts_gpu_settled), never above its burst. */
        bool settled = (fp8 && g->mamf_fp8 > 0 && g->mamf_fp8 <= 1) || derived > 0;

        if (derived > 0)
            gg.mamf = fmin(derived / hw->peak, g->mamf);
        else if (settled)
            gg.mamf = g->mamf_fp8;
        /* An explicit gemm_efficiency is what the user's stack achieves;
         * else the catalogue's burst MAMF at the sustained clock. */
        if (r->gemm_efficiency > 0)
            gg.mamf = r->gemm_efficiency;
        else if (!settled && sustain > 0)
            gg.mamf *= sustain;
        hw->core = ts_step_core_eff(&gg);
    }
    /* FP8/FP32 runs use the BF16 fractions at their own peak (no MAMF
     * figures for them in the catalogue). */
    hw->attn = g->attn_eff > 0 && g->attn_eff <= 1 ? g->attn_eff : TS_STEP_ATTN_DEFAULT;
    hw->nvlink = (r->nvlink_gbps > 0 ? r->nvlink_gbps * 1e9
                  : g->nvlink_bw > 0 ? g->nvlink_bw
                                     : TS_STEP_NVLINK_DEFAULT) /
                 2.0 * TS_STEP_LINK_EFF;
    hw->net = (r->net_gbps > 0 ? r->net_gbps * 1e9
               : g->net_bw > 0 ? g->net_bw
                               : TS_STEP_NET_DEFAULT) *
              TS_STEP_LINK_EFF;
    /* A mesh splits the links over the node's other GPUs (ts_gpu.c). */
    hw->peers = (r->nvlink_topology == TS_TOPO_MESH ||
                 (r->nvlink_topology == TS_TOPO_DEFAULT && g->mesh)) &&
                        r->gpus_per_node > 1
                    ? (double)(r->gpus_per_node - 1)
                    : 0;
    hw->pcie = g->pcie_bw > 0 ? g->pcie_bw : TS_STEP_PCIE_DEFAULT;
    hw->gemm_flops = hw->gemm_ideal = 0;
    /* LoRA: the base is frozen, dequantised from its storage where its
     * matmuls need it. */
    hw->frozen = r->lora_rank > 0 && p->from_shape && r->optimizer != TS_OPT_NONE;
    hw->quant = ts_run_frozen_dequant(r);
    hw->xops_f = hw->xops_b = 0;
    if (!(hw->peak > 0) || !(hw->core > 0))
        return TS_EINCOMPAT;
    return TS_OK;
}

/* Micro-batches, tokens and the parameters this GPU holds, trains and
 * gathers. */
static void ts_step_shares(const ts_run *r, const ts_params *p, const ts_step_hw *hw,
                           ts_step_sum *s)
{
    double m, tokens_step, gpus, P_gpu, P_train, P_gather_b, wb, gb;

    gpus = (double)r->gpus;
    m = (double)r->global_batch / ((double)r->dp * (double)r->micro_batch);
    tokens_step = (double)r->global_batch * (double)r->seq;
    wb = ts_step_bytes(r->precision);
    /* Gradients are reduced at their own precision: Megatron's fp32
     * main_grad (accumulate_allreduce_grads_in_fp32), FSDP's reduce_dtype,
     * DeepSpeed's 16-bit grads; the api sets those per framework. */
    gb = ts_step_bytes(r->grad_precision);
    P_gpu = (p->dense / ((double)r->tp * (double)r->pp)) +
            p->expert / ((double)r->tp * (double)r->pp * (double)r->ep);
    P_train = P_gpu * r->trainable_fraction;
    if (hw->frozen) {
        /* LoRA: the adapters are all that trains (reduced, stepped); the
         * frozen base is gathered at its storage width under ZeRO-3. */
        double emb = (p->embedding + p->output_head) / ((double)r->tp * (double)r->pp);
        double ad = ts_step_lora_layer_params(r) * (double)r->model.layers / (double)r->pp;
        /* lora_modules_to_save: full vocab x hidden copies that train
         * (reduced, stepped, gathered) like the adapters; spread over
         * the stages as the embedding is. */
        double cp = ts_lora_save_params(&r->model, r->lora_save) / ((double)r->tp * (double)r->pp);

        P_train = ad + cp;
        P_gather_b = (P_gpu - emb) * ts_quant_bytes(r->frozen_precision) +
                     (emb + ad + cp) * ts_step_bytes(r->precision);
    } else {
        P_gather_b = P_gpu * ts_step_bytes(r->precision);
        if (ts_run_te_fp8_params(r)) {
            /* FP8 parameters are TE modules' weights: the embedding and
             * output layer are gathered 16-bit (ts_mem_stage.c). */
            double emb = (p->embedding + p->output_head) / ((double)r->tp * (double)r->pp);

            P_gather_b += emb * (2.0 - ts_step_bytes(r->precision));
        }
    }
    s->m = m;
    s->tokens_step = tokens_step;
    s->gpus = gpus;
    s->P_gpu = P_gpu;
    s->P_train = P_train;
    s->P_gather_b = P_gather_b;
    s->wb = wb;
    s->gb = gb;
    s->n_dp_i = r->dp * r->cp;
    s->n_dp = (double)s->n_dp_i;
}

/* The pipeline's stages: one layer's and the head's costs, and the
 * slowest stage's micro-batch term by term. */
typedef struct ts_step_pipe {
    ts_step_layer ly;
    ts_step_layer ly_dense; /* a MoE model's first dense_layers (DeepSeek: 3 of 61) */
    double head_f, head_b, head_tp;
    double short_layer, short_head, short_dense;
    int64_t stages;
    double t_mb_max, t_mb_sum, fwd_max, bwd_max;
    double comp_max, rec_max, tp_max, cp_max, ep_max;
    double tp_hid_max, cp_hid_max, hidden, short_max;
} ts_step_pipe;

/* Stages come in at most four sizes (first, last, and the two
 * of the even split between), so each size is costed once and
 * counted: O(1) in pp.  Middle sizes fall monotonically, the
 * boundary is found by bisection. */
static int64_t ts_step_stage_kinds(const ts_run *r, int64_t stages, int64_t idx[4], int64_t cnt[4])
{
    int64_t nk = 0;

    if (stages == 1) {
        idx[nk] = 0;
        cnt[nk++] = 1;
    } else {
        idx[nk] = 0;
        cnt[nk++] = 1;
        idx[nk] = stages - 1;
        cnt[nk++] = 1;
        if (stages > 2) {
            int64_t lo = 1, hi = stages - 2;
            int64_t big = ts_run_stage_layers(r, 1);

            /* last index in [1, stages-2] with the first middle's size */
            while (lo < hi) {
                int64_t mid = lo + (hi - lo + 1) / 2;

                if (ts_run_stage_layers(r, mid) == big)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            idx[nk] = 1;
            cnt[nk++] = lo;
            if (lo < stages - 2) {
                idx[nk] = lo + 1;
                cnt[nk++] = stages - 2 - lo;
            }
        }
    }
    return nk;
}

/* Of stage si's nl layers, how many are the model's first dense_layers
 * (a MoE model's dense MLPs come first: DeepSeek-V3's first_k_dense). */
static double ts_step_stage_dense(const ts_run *r, int64_t si, int64_t nl)
{
    int64_t Ld = r->model.experts > 1 ? r->model.dense_layers : 0, start = 0, i;

    for (i = 0; i < si && start < Ld; i++)
        start += ts_run_stage_layers(r, i);
    return start >= Ld ? 0.0 : (double)(Ld - start < nl ? Ld - start : nl);
}

/* The mean layer of a stage with nd dense layers of nl (the MoE layer
 * itself when it has none). */
static ts_step_layer ts_step_stage_layer(const ts_step_pipe *q, double nl, double nd, double *shrt)
{
    const ts_step_layer *a = &q->ly, *d = &q->ly_dense;
    double wa = (nl - nd) / nl, wd = nd / nl;

    if (!(nd > 0)) {
        *shrt = q->short_layer;
        return *a;
    }
    *shrt = wa * q->short_layer + wd * q->short_dense;
    return (ts_step_layer){
        .fwd = wa * a->fwd + wd * d->fwd,
        .bwd = wa * a->bwd + wd * d->bwd,
        .attn_fwd = wa * a->attn_fwd + wd * d->attn_fwd,
        .tp_exposed = wa * a->tp_exposed + wd * d->tp_exposed,
        .tp_hidden = wa * a->tp_hidden + wd * d->tp_hidden,
        .cp_exposed = wa * a->cp_exposed + wd * d->cp_exposed,
        .cp_hidden = wa * a->cp_hidden + wd * d->cp_hidden,
        .ep = wa * a->ep + wd * d->ep,
        .tp_fwd = wa * a->tp_fwd + wd * d->tp_fwd,
        .ep_fwd = wa * a->ep_fwd + wd * d->ep_fwd,
        .wtraffic = wa * a->wtraffic + wd * d->wtraffic,
        .rec_skip = wa * a->rec_skip + wd * d->rec_skip,
        .rec_skip_tp = wa * a->rec_skip_tp + wd * d->rec_skip_tp,
        .rec_op = wa * a->rec_op + wd * d->rec_op,
        .rec_op_tp = wa * a->rec_op_tp + wd * d->rec_op_tp,
    };
}

/* Stage si's micro-batch, for cnt stages of its size; the slowest one's
 * terms kept. */
static void ts_step_stage(const ts_run *r, ts_step_pipe *q, int64_t si, int64_t cnt)
{
    int64_t nl_i = ts_run_stage_layers(r, si);
    double nl = (double)nl_i, short_layer;
    ts_step_layer ly =
        ts_step_stage_layer(q, nl, nl_i > 0 ? ts_step_stage_dense(r, si, nl_i) : 0, &short_layer);
    int64_t stages = q->stages;
    double head_f = q->head_f, head_b = q->head_b, head_tp = q->head_tp;
    double f = nl * ly.fwd + (si == stages - 1 ? head_f : 0);
    double bk = nl * ly.bwd + (si == stages - 1 ? head_b : 0);
    double rec = 0, tp, cp, ep, t_mb;
    /* Full recompute reruns nk of the nl layers: all, or the block
     * method's first recompute_layers of each virtual stage (the mean
     * layer's cost: a MoE model's dense layers are not told apart). */
    double nk = ts_run_recomputed(r, nl_i);

    if (r->recompute == TS_RECOMPUTE_FULL)
        rec = nk * (ly.fwd - ly.rec_skip + ly.tp_fwd - ly.rec_skip_tp + ly.ep_fwd);
    else if (r->recompute == TS_RECOMPUTE_SELECTIVE)
        rec = nl * ly.attn_fwd;
    else if (r->recompute == TS_RECOMPUTE_SELECTIVE_OP)
        rec = nl * (ly.rec_op + ly.rec_op_tp);
    tp = nl * ly.tp_exposed + (si == stages - 1 ? head_tp : 0);
    cp = nl * ly.cp_exposed;
    ep = nl * ly.ep;
    t_mb = f + bk + rec + tp + cp + ep;
    q->t_mb_sum += (double)cnt * t_mb;
    if (t_mb > q->t_mb_max) {
        q->t_mb_max = t_mb;
        q->fwd_max = f;
        q->bwd_max = bk;
        q->comp_max = f + bk;
        /* Full and selective_op recompute's redone collectives count as
         * TP/EP time. */
        if (r->recompute == TS_RECOMPUTE_FULL) {
            q->rec_max = nk * (ly.fwd - ly.rec_skip);
            q->tp_max = tp + nk * (ly.tp_fwd - ly.rec_skip_tp);
            q->ep_max = ep + nk * ly.ep_fwd;
        } else if (r->recompute == TS_RECOMPUTE_SELECTIVE_OP) {
            q->rec_max = nl * ly.rec_op;
            q->tp_max = tp + nl * ly.rec_op_tp;
            q->ep_max = ep;
        } else {
            q->rec_max = rec;
            q->tp_max = tp;
            q->ep_max = ep;
        }
        q->cp_max = cp;
        q->tp_hid_max = nl * ly.tp_hidden;
        q->cp_hid_max = nl * ly.cp_hidden;
        q->hidden = nl * (ly.tp_hidden + ly.cp_hidden);
        q->short_max = nl * short_layer + (si == stages - 1 ? q->short_head : 0);
    }
}

/* A model with a shape: one layer and the head costed, each stage size
 * composed, the slowest stage's micro-batch m times, the 1F1B bubble
 * and the point-to-point sends. */
static void ts_step_pipeline(const ts_run *r, ts_step_hw *hw, ts_step_sum *s, ts_step *out)
{
    ts_step_pipe q = { 0 };
    int64_t idx[4], cnt[4], nk, k;
    double m = s->m, g_t, g_f, bubble, p2p;

    q.stages = r->pp;
    /* Each GEMM's shortfall from the matmul rate, per layer and for
     * the head: its roofline time less its FLOPs at peak * core. */
    g_t = hw->gemm_ideal;
    g_f = hw->gemm_flops;
    ts_step_layer_cost(r, hw, &q.ly);
    q.short_layer = (hw->gemm_ideal - g_t) - (hw->gemm_flops - g_f) / (hw->peak * hw->core);
    if (r->model.experts > 1 && r->model.dense_layers > 0) {
        /* The dense layers: the same layer with an ffn-wide dense MLP. */
        ts_run dr = *r;

        dr.model.experts = 0;
        dr.model.top_k = 0;
        dr.model.shared_experts = 0;
        g_t = hw->gemm_ideal;
        g_f = hw->gemm_flops;
        ts_step_layer_cost(&dr, hw, &q.ly_dense);
        q.short_dense = (hw->gemm_ideal - g_t) - (hw->gemm_flops - g_f) / (hw->peak * hw->core);
    }
    g_t = hw->gemm_ideal;
    g_f = hw->gemm_flops;
    ts_step_head_cost(r, hw, &q.head_f, &q.head_b, &q.head_tp);
    q.short_head = (hw->gemm_ideal - g_t) - (hw->gemm_flops - g_f) / (hw->peak * hw->core);
    nk = ts_step_stage_kinds(r, q.stages, idx, cnt);
    for (k = 0; k < nk; k++)
        ts_step_stage(r, &q, idx[k], cnt[k]);
    p2p = ts_step_pp_p2p(r, hw, m);
    bubble = (double)(r->pp - 1) / (double)r->vpp * (q.t_mb_sum / (double)q.stages);
    out->compute = m * q.comp_max;
    out->recompute = m * q.rec_max;
    out->tp_comm = m * (q.tp_max + TS_STEP_KAPPA * q.tp_hid_max);
    out->cp_comm = m * (q.cp_max + TS_STEP_KAPPA * q.cp_hid_max);
    out->ep_comm = m * q.ep_max;
    out->pp_p2p = p2p;
    out->pp_bubble = bubble + p2p;
    /* Forward and backward GEMMs of the slowest stage; recompute's
     * redone forward is left out (a lower bound). */
    out->underfill = q.short_max > 0 ? m * q.short_max : 0;
    s->fwd_max = q.fwd_max;
    s->bwd_max = q.bwd_max;
    s->hidden = q.hidden * m;
}

/* No shape: matmul-bound 6 P per token (+2 P with full recompute)
 * at the catalogue matmul fraction, nothing else resolvable. */
static void ts_step_flat(const ts_run *r, const ts_params *p, ts_step_hw *hw, ts_step_sum *s,
                         ts_step *out)
{
    double m = s->m, fwd_max, bwd_max;
    double per_gpu_tok = s->tokens_step / s->gpus;

    fwd_max = 2.0 * p->active * per_gpu_tok / (hw->peak * hw->core) / m;
    bwd_max = 2.0 * fwd_max;
    out->compute = m * (fwd_max + bwd_max);
    out->recompute = r->recompute == TS_RECOMPUTE_FULL ? m * fwd_max : 0;
    hw->gemm_flops = 6.0 * p->active * per_gpu_tok;
    hw->gemm_ideal = out->compute;
    s->fwd_max = fwd_max;
    s->bwd_max = bwd_max;
}

/* Optimizer step: memory-bound over this GPU's shard of the states. */
static void ts_step_optimizer(const ts_run *r, const ts_step_hw *hw, const ts_step_sum *s,
                              ts_step *out)
{
    double P_train = s->P_train, P_gpu = s->P_gpu, n_dp = s->n_dp, wb = s->wb, gb = s->gb;
    double m = s->m, t_opt, t_off = 0;
    double shard = r->zero >= 1 ? P_train / n_dp : P_train;

    t_opt = r->offload_optimizer ? 0 : shard * ts_step_opt_bytes(r, gb) / hw->mem;
    if (r->offload_optimizer) {
        /* Grads down and weights up over PCIe, Adam on the host. */
        t_off = shard * (gb + wb) / hw->pcie + shard * ts_step_opt_bytes(r, gb) / TS_STEP_HOST_BW;
    }
    if (r->offload_params) {
        /* ZeRO-Infinity streams every weight shard in before forward
         * and backward of each micro-batch. */
        t_off += m * 2.0 * (P_gpu / n_dp) * wb / hw->pcie;
    }
    out->optimizer = t_opt;
    out->offload = t_off;
}

/* Megatron-Core's CPU activation offload (offload_activation_layers;
 * ts_mem_stage.c has the schedule): each micro-batch copies the offloaded
 * layers' saved bytes to host RAM during its forward and back during its
 * backward, over the host link (hw->pcie: PCIe, NVLink-C2C on Grace
 * parts), on Transformer Engine's offload stream under the compute.
 * Layer i's copy may run from its own forward to layer L - k + i's, k
 * copies in L - k layers' time, a pass's compute bounding them: what
 * shows is what a pass's copies take beyond the pass itself (the head
 * counted in the pass, slightly optimistic).  Copy engines, not SMs, move
 * the bytes: the hidden part costs nothing.  The bytes are the memory
 * answer's host share (ts_mem_offload_bytes). */
static void ts_step_offload_act(const ts_run *r, const ts_step_hw *hw, const ts_step_sum *s,
                                ts_step *out)
{
    double t;

    if (ts_run_offloaded_layers(r) <= 0 || !out->from_shape || !(hw->pcie > 0))
        return;
    t = ts_mem_offload_bytes(r) / hw->pcie;
    out->offload += s->m * (fmax(0, t - s->fwd_max) + fmax(0, t - s->bwd_max));
}

/* The sums, MFU, warnings and the step time's term. */
static ts_status ts_step_totals(const ts_run *r, const ts_params *p, const ts_step_hw *hw,
                                const ts_step_sum *s, double dp_hidden, ts_step *out)
{
    double tokens_step = s->tokens_step, gpus = s->gpus, hidden = s->hidden;
    double total;
    ts_flops_basis basis;

    out->exposed_comm = out->tp_comm + out->cp_comm + out->ep_comm + out->pp_p2p + out->dp_comm;
    out->overlapped_comm = hidden + dp_hidden;
    total = out->compute + out->recompute + out->tp_comm + out->cp_comm + out->ep_comm +
            out->pp_bubble + out->dp_comm + out->optimizer + out->offload;
    out->gemm_efficiency = hw->gemm_ideal > 0 ? hw->gemm_flops / (hw->gemm_ideal * hw->peak) : 0;

    /* MFU basis: the compute estimate's own (ts_compute_basis). */
    ts_compute_basis(r, p, &basis);
    out->model_flops = basis.per_token * tokens_step;
    out->mfu_convention = basis.convention;
    if (!(total > 0) || !isfinite(total))
        return TS_ERANGE;
    out->predicted_mfu = out->model_flops / (total * gpus * hw->peak);
    /* What costs more than a quarter of the step is worth a warning (the
     * share Narayanan et al. 2021 keep the bubble under by m >> p; the
     * same bar for the other overheads, issue 25). */
    {
        double q = total / TS_STEP_WARN_DIV;

        if (out->pp_bubble > q)
            out->warnings |= TS_STEP_WARN_BUBBLE;
        if (out->exposed_comm > q)
            out->warnings |= TS_STEP_WARN_COMM;
        if (out->underfill > q)
            out->warnings |= TS_STEP_WARN_UNDERFILL;
    }
    out->tokens_per_second = tokens_step / total;
    out->tokens_per_gpu_second = out->tokens_per_second / gpus;
    ts_term_set(
        &out->step_time, total,
        out->from_shape
            ? "m * t_mb(slowest stage) + (p-1)/v * t_mb(mean) + p2p + exposed DP + optimizer + "
              "offload"
            : "6 P_active * tokens / (gpus * peak * matmul fraction) + exposed DP + optimizer",
        out->from_shape
            ? "roofline matmuls at the catalogue MAMF-derived core rate, fused attention at the "
              "catalogue fraction, memory-bound elementwise; ring/tree collectives at 80 % of "
              "link; "
              "framework overlap (docs/formulas.md, Step time)"
            : "no model shape: attention, TP, PP and elementwise work are not modelled");
    if (!isfinite(out->predicted_mfu) || !isfinite(out->tokens_per_second))
        return TS_ERANGE;
    return TS_OK;
}

ts_status ts_step_eval(const ts_run *r, const ts_params *p, ts_step *out)
{
    ts_step_hw hw;
    ts_step_sum s = { 0 };
    ts_step_dp_in dp;
    double dp_exposed = 0, dp_hidden = 0, stage_factor;

    *out = (ts_step){ 0 };
    if (ts_step_rates(r, p, &hw) != TS_OK)
        return TS_EINCOMPAT;
    out->nvlink_bw = hw.nvlink;
    out->nvlink_peers = hw.peers;
    out->net_bw = hw.net;
    ts_step_shares(r, p, &hw, &s);
    out->micro_batches = s.m;
    out->from_shape = p->from_shape && r->model.layers > 0;
    if (out->from_shape)
        ts_step_pipeline(r, &hw, &s, out);
    else
        ts_step_flat(r, p, &hw, &s, out);

    /* FSDP's per-layer schedule and Megatron's last bucket go by the
     * first stage's layers. */
    stage_factor = out->from_shape ? (double)ts_run_stage_layers(r, 0) : 1.0;
    if (stage_factor < 1)
        stage_factor = 1;
    dp = (ts_step_dp_in){ .m = s.m,
                          .fwd = s.fwd_max,
                          .bwd = s.bwd_max,
                          .layers = stage_factor,
                          .gather_b = s.P_gather_b,
                          .train = s.P_train,
                          .gb = s.gb,
                          .n = s.n_dp_i };
    ts_step_dp_comm(r, &hw, &dp, &dp_exposed, &dp_hidden);
    if (r->compute_precision == TS_PREC_FP8)
        dp_exposed += ts_step_fp8_amax_s(r, &hw, s.m);
    /* Contention charge for everything hidden (DP here, TP/CP in
     * ts_step_pipeline). */
    out->dp_comm = dp_exposed + TS_STEP_KAPPA * dp_hidden;

    ts_step_optimizer(r, &hw, &s, out);
    ts_step_offload_act(r, &hw, &s, out);
    return ts_step_totals(r, p, &hw, &s, dp_hidden, out);
}

ts_status ts_step_estimate(const ts_run *r, ts_step *out, ts_error *err)
{
    ts_run run;
    ts_params p;
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *out = (ts_step){ 0 };
    run = *r;
    if ((st = ts_run_resolve(&run, err)) != TS_OK)
        return st;
    ts_model_count(&run.model, &p);
    st = ts_step_eval(&run, &p, out);
    if (st == TS_EINCOMPAT)
        return ts_error_set(err, st, "compute_precision", "GPU '%s' has no dense %s peak",
                            run.gpu.id, ts_precision_name(run.compute_precision));
    if (st != TS_OK) {
        *out = (ts_step){ 0 };
        return ts_error_set(err, TS_ERANGE, "gpus", "step time is not finite for these inputs");
    }
    return TS_OK;
}
