/*
 * ts_step_comm.c - the step-time model's collectives: the ring/tree cost
 * of one collective, a layer's TP, CP and EP traffic, the pipeline's
 * point-to-point sends, the data-parallel (ZeRO / FSDP) schedule of each
 * framework and FP8's amax all-reduces.  ts_step.c's header has the
 * model and its sources.
 */
#include "ts_step_int.h"

#include <math.h>

/* ---- collectives ------------------------------------------------- */

static double ts_step_hops(int64_t n, bool tree)
{
    double ring = (double)(n - 1);

    if (!tree)
        return ring;
    /* Tree: 2 log2 n hops (reduce up, broadcast down); NCCL picks the
     * faster, which for latency is the smaller hop count. */
    {
        double t = 2.0 * ceil(log2((double)n));
        return t < 2.0 * ring ? t : 2.0 * ring;
    }
}

double ts_step_allreduce_s(double bytes, int64_t n, double bw, double alpha)
{
    if (n <= 1 || !(bytes > 0) || !(bw > 0))
        return 0;
    return 2.0 * (double)(n - 1) / (double)n * bytes / bw + ts_step_hops(n, true) * alpha;
}

double ts_step_allgather_s(double bytes, int64_t n, double bw, double alpha)
{
    if (n <= 1 || !(bytes > 0) || !(bw > 0))
        return 0;
    return (double)(n - 1) / (double)n * bytes / bw + (double)(n - 1) * alpha;
}

double ts_step_alltoall_s(double bytes, int64_t n, double bw, double alpha)
{
    /* Each rank keeps 1/n of what it sends and exchanges the rest. */
    return ts_step_allgather_s(bytes, n, bw, alpha);
}

bool ts_step_same_node(int64_t span, int64_t gpn)
{
    return span <= gpn;
}

/* One-way bandwidth per GPU of a collective over n GPUs of one node.
 * Through a switch (NVSwitch) every GPU drives all its links whatever the
 * group.  In a mesh (nvlink_topology) each GPU's links go one set to each
 * peer, so a group of n reaches its n - 1 peers over (n - 1) / peers of
 * them: NCCL's rings over a fully connected group use every direct link
 * (bigscience experiments/bandwidth n1_32gb_all_reduce_bench.txt: 12
 * rings over every order of a V100 node's 4 GPUs), and a pair (a
 * pipeline send, TP 2) has its own links only. */
double ts_step_node_bw(const ts_step_hw *hw, int64_t n)
{
    double k = (double)(n - 1);

    if (!(hw->peers > 0) || n < 2 || k >= hw->peers)
        return hw->nvlink;
    return hw->nvlink * k / hw->peers;
}

/* The bus bandwidth a ring over nodes gets from its g ranks in each node:
 * each ring (channel) enters a node through one NIC, runs through the
 * node's g GPUs and leaves through a NIC, and as many such flows run
 * concurrently as the node has NICs (S. Jeaugey, NVIDIA/nccl#412;
 * bandwidth "should add up" per NIC, NVIDIA/nccl#652).  Of g channels
 * each GPU sends one out through its NIC and g - 1 on to a peer in the
 * node, so a step moves g chunks per GPU in max(chunk / NIC,
 * (g - 1) chunk / link): min(g x NIC, g / (g - 1) x link), the link
 * being the group's share of the node's scale-up bandwidth
 * (ts_step_node_bw); not one NIC per rank's share.  Under a switch the
 * link term never binds (NVLink is several NICs wide); in a mesh it can. */
static double ts_step_nic_ring_bw(const ts_step_hw *hw, int64_t g)
{
    double agg, link;

    if (g < 2)
        return hw->net;
    agg = (double)g * hw->net;
    link = (double)g / (double)(g - 1) * ts_step_node_bw(hw, g);
    return agg < link ? agg : link;
}

/* Bus bandwidth of a ring collective over a group of n ranks, g of them in
 * each node.  Inside a node: its scale-up links (ts_step_node_bw); across
 * nodes: the node's NICs (ts_step_nic_ring_bw). */
double ts_step_ring_bw(const ts_step_hw *hw, int64_t n, int64_t g, int64_t gpn)
{
    if (ts_step_same_node(n, gpn))
        return ts_step_node_bw(hw, n);
    return ts_step_nic_ring_bw(hw, g);
}

/* ---- one layer --------------------------------------------------- */

/* Tensor parallel: the activation S = tok*h*2 bytes is all-reduced
 * twice per pass, or reduce-scattered and all-gathered (SP). */
static void ts_step_tp_layer(const ts_run *r, const ts_step_hw *hw, const ts_step_shape *sh,
                             double gemm_f, double gemm_b, ts_step_layer *o)
{
    double tok = sh->tok, h = sh->h;
    double S, alpha_tp, bw_tp;

    S = tok * h * 2.0;
    if (r->tp > 1) {
        bool in_node = ts_step_same_node(r->tp, r->gpus_per_node);
        double one;

        bw_tp = ts_step_ring_bw(hw, r->tp, r->gpus_per_node < r->tp ? r->gpus_per_node : r->tp,
                                r->gpus_per_node);
        alpha_tp = in_node ? TS_STEP_ALPHA_NVLINK : TS_STEP_ALPHA_NET;
        if (r->sequence_parallel) {
            one = ts_step_allgather_s(S, r->tp, bw_tp, alpha_tp); /* = one RS */
            o->tp_fwd = 4.0 * one;
            o->tp_exposed = 8.0 * one;
            o->tp_hidden = 2.0 * one; /* wgrad input re-gather under dgrad */
            if (r->tp_comm_overlap) {
                /* Userbuffers / async TP: every all-gather and
                 * reduce-scatter of the layer is split into chunks that
                 * run under the GEMM consuming or producing it (Megatron-
                 * Bridge comm_overlap.py TransformerLayerTPOverlapCfg:
                 * qkv/fc1 fprop and proj/fc2 dgrad ring-exchange,
                 * proj/fc2 fprop pipelined, qkv/fc1 dgrad and wgrad bulk).
                 * Budgeted per pass, not per pair: the pass waits only for
                 * what its 4 collectives take beyond its linears' GEMMs
                 * together (a collective longer than its own GEMM, as the
                 * o-projection's reduce-scatter at TP 8 can be, is taken
                 * to catch up under the next one); the rest is hidden,
                 * charged at kappa like any other overlapped collective
                 * (ts_step.c). */
                double ef = 4.0 * one > gemm_f ? 4.0 * one - gemm_f : 0;
                double eb = 4.0 * one > gemm_b ? 4.0 * one - gemm_b : 0;

                o->tp_fwd = ef;
                o->tp_exposed = ef + eb;
                o->tp_hidden += 8.0 * one - ef - eb;
            }
        } else {
            one = ts_step_allreduce_s(S, r->tp, bw_tp, alpha_tp);
            o->tp_fwd = 2.0 * one;
            o->tp_exposed = 4.0 * one;
        }
    }
}

/* Context parallel: ring of K,V blocks, overlapped with the blocks'
 * attention (Megatron-Core / TE ring attention); backward sends K,V
 * and their grads. */
static void ts_step_cp_layer(const ts_run *r, const ts_step_hw *hw, const ts_step_shape *sh,
                             double attn_f, double attn_b, ts_step_layer *o)
{
    double c = sh->c, tok = sh->tok, kv_gpu = sh->kv_gpu;

    if (r->cp > 1) {
        bool in_node = ts_step_same_node(r->tp * r->cp, r->gpus_per_node);
        double bwc = in_node ? ts_step_node_bw(hw, r->cp) : hw->net;
        double al = in_node ? TS_STEP_ALPHA_NVLINK : TS_STEP_ALPHA_NET;
        double kvb = tok * kv_gpu * (sh->qk + sh->vd) * 2.0;
        double fwdc = (c - 1.0) * (kvb / bwc + al);
        double bwdc = 2.0 * fwdc;
        double ef = fwdc > attn_f ? fwdc - attn_f : 0;
        double eb = bwdc > attn_b ? bwdc - attn_b : 0;

        o->cp_exposed = ef + eb;
        o->cp_hidden = fwdc + bwdc - ef - eb;
    }
}

/* Expert parallel: dispatch and combine, forward and backward. */
static void ts_step_ep_layer(const ts_run *r, const ts_step_hw *hw, const ts_step_shape *sh,
                             ts_step_layer *o)
{
    const ts_model *md = &r->model;
    double tok = sh->tok, h = sh->h;
    bool moe = sh->moe;

    if (moe && r->ep > 1) {
        bool in_node = ts_step_same_node(r->tp * r->ep, r->gpus_per_node);
        double k = (double)(md->top_k > 0 ? md->top_k : 1);
        double bytes = tok * k * h * 2.0, one;

        if (in_node) {
            one =
                ts_step_alltoall_s(bytes, r->ep, ts_step_node_bw(hw, r->ep), TS_STEP_ALPHA_NVLINK);
        } else {
            /* Each rank exchanges (n-1)/n of its tokens: the (g-1)/n bound
             * for ranks of its own node over NVLink, the (n-g)/n for other
             * nodes through its own NIC, both at once. */
            double n = (double)r->ep;
            double g = (double)(r->gpus_per_node / r->tp > 1 ? r->gpus_per_node / r->tp : 1);
            double t_in = (g - 1.0) / n * bytes / ts_step_node_bw(hw, (int64_t)g);
            double t_out = (n - g) / n * bytes / hw->net;

            one = (t_in > t_out ? t_in : t_out) + (n - 1.0) * TS_STEP_ALPHA_NET;
        }

        o->ep_fwd = 2.0 * one;
        o->ep = 4.0 * one;
    }
}

void ts_step_layer_comm(const ts_run *r, const ts_step_hw *hw, const ts_step_shape *sh,
                        double gemm_f, double gemm_b, double attn_f, double attn_b,
                        ts_step_layer *o)
{
    ts_step_tp_layer(r, hw, sh, gemm_f, gemm_b, o);
    ts_step_cp_layer(r, hw, sh, attn_f, attn_b, o);
    ts_step_ep_layer(r, hw, sh, o);
}

/* ---- the step ---------------------------------------------------- */

/* One stage boundary's exchange of one activation (or its gradient),
 * over NVLink or the network.  Each TP rank sends 1/t of it: with SP
 * the activation is already split; without SP Megatron-LM splits it
 * into t chunks, one per rank and its own NIC, and the receiving stage
 * all-gathers them over NVLink (scatter/gather optimisation, Narayanan
 * et al. 2021 Sec. 4.1; on by default since NVIDIA/Megatron-LM
 * @72e4230bb5, megatron/p2p_communication.py@7fccd6a17a
 * split_tensor_into_1d_equal_chunks / gather_split_1d_tensor).
 * Megatron-Core's p2p (megatron/core/pipeline_parallel/
 * p2p_communication.py) sends the whole tensor from every rank
 * instead: not distinguished. */
static double ts_step_pp_one(const ts_run *r, const ts_step_hw *hw, bool nvlink)
{
    bool sg = !r->sequence_parallel && r->tp > 1 && r->framework == TS_FW_MEGATRON;
    double full =
        (double)r->seq * (double)r->micro_batch / (double)r->cp * (double)r->model.hidden * 2.0;
    double act = full / (r->sequence_parallel || sg ? (double)r->tp : 1.0);

    return act / (nvlink ? ts_step_node_bw(hw, 2) : hw->net) +
           (nvlink ? TS_STEP_ALPHA_NVLINK : TS_STEP_ALPHA_NET) +
           (sg ? ts_step_allgather_s(full, r->tp, ts_step_node_bw(hw, r->tp), TS_STEP_ALPHA_NVLINK)
               : 0);
}

/* Pipeline point-to-point on the critical path (docs/formulas.md "PP").
 * The exchanges are rendezvous between neighbours, so the slowest
 * boundary paces every rank: c is one exchange over the network unless
 * the whole pipeline fits a node.  A blocking schedule waits for every
 * exchange between two compute steps (megatron/p2p_communication.py
 * @6985e58938 _communicate: req.wait(), then torch.cuda.synchronize()).
 * The last rank's path holds the p - 1 hops of the fill and its (v - 1) p
 * warm-up steps (all m v when fewer), one send each, and the same back in
 * the cool-down: 2 (v p - 1) c.  Each of the m v - (v - 1) p steady steps
 * between them sends both ways: 1F1B in two exchanges
 * (send_forward_recv_backward, send_backward_recv_forward), interleaved
 * in one batch (send_forward_backward_recv_forward_backward).  Both tensors leave
 * through the same link, 2 c, unless the pacing rank sits at a node's
 * edge (stages share nodes, the pipeline spans several): then one side
 * is NVLink, c + c_nvlink in turn, or c at once when batched.  v = 1 and
 * every boundary alike: 2 (m + p - 1) c.
 * Interleaving was blocking until the overlap option (NVIDIA/
 * Megatron-LM@f9283c5a8a; on by default since @4eeff55d1f, NeMo and
 * Megatron-Bridge set it with vpp > 1; Megatron-Core's own default is
 * off): the steady sends run under the next forward / backward
 * (megatron/core/pipeline_parallel/schedules.py@d98e8a64dd
 * pp_post_forward / pp_pre_forward) and the warm-up's and cool-down's
 * stay blocking, 2 (v p - 1) c.  When every micro-batch is in the
 * warm-up (m v at most rank 0's 2 (p - 1) + (v - 1) p,
 * get_pp_rank_microbatches) nothing overlaps. */
double ts_step_pp_p2p(const ts_run *r, const ts_step_hw *hw, double m)
{
    double p = (double)r->pp, v = (double)r->vpp, c, steady, warm, n_steady;
    int64_t span = r->tp * r->cp * r->dp;
    bool in_node, edge;

    if (r->pp < 2)
        return 0;
    in_node = ts_step_same_node(span * r->pp, r->gpus_per_node);
    edge = !in_node && ts_step_same_node(span * 2, r->gpus_per_node);
    c = ts_step_pp_one(r, hw, in_node);
    /* The last rank's warm-up: (v - 1) p steps, or every step it has. */
    warm = (v - 1.0) * p < m * v ? (v - 1.0) * p : m * v;
    n_steady = m * v - warm;
    if (r->vpp > 1 && r->overlap_p2p_comm && m * v > 2.0 * (p - 1.0) + (v - 1.0) * p)
        return 2.0 * (p - 1.0 + warm) * c;
    steady = !edge ? 2.0 * c : r->vpp > 1 ? c : c + ts_step_pp_one(r, hw, true);
    return 2.0 * (p - 1.0 + warm) * c + n_steady * steady;
}

/* The data-parallel collectives of one step, whole and per layer. */
typedef struct ts_step_dp_t {
    double ag_w, rs_g, ar; /* weights all-gather, grads reduce-scatter, all-reduce */
    double nl, ag_l, rs_l; /* layers; one layer's all-gather, reduce-scatter */
    double f_l, b_l;       /* one layer's forward, backward */
} ts_step_dp_t;

/* Data parallel over dp*cp ranks.  Inside a node when the group fits
 * one; otherwise every GPU's own NIC carries its share, and the k
 * ranks a node holds split the ring into k channels (NCCL). */
static void ts_step_dp_times(const ts_run *r, const ts_step_hw *hw, const ts_step_dp_in *in,
                             ts_step_dp_t *t)
{
    int64_t n_dp_i = in->n;
    double P_gather_b = in->gather_b, P_train = in->train, gb = in->gb;
    double fwd_max = in->fwd, bwd_max = in->bwd;
    int64_t span = r->tp * r->cp * r->dp;
    int64_t per_node = r->gpus_per_node / (r->tp * r->cp);
    double bw_dp, al, nl;
    bool in_node_dp;

    in_node_dp = ts_step_same_node(span, r->gpus_per_node);
    if (per_node < 1)
        per_node = 1;
    if (per_node > n_dp_i)
        per_node = n_dp_i;
    bw_dp = in_node_dp ? ts_step_node_bw(hw, n_dp_i) : ts_step_nic_ring_bw(hw, per_node);
    al = in_node_dp ? TS_STEP_ALPHA_NVLINK : TS_STEP_ALPHA_NET;
    t->ag_w = ts_step_allgather_s(P_gather_b, n_dp_i, bw_dp, al);
    t->rs_g = ts_step_allgather_s(P_train * gb, n_dp_i, bw_dp, al);
    t->ar = ts_step_allreduce_s(P_train * gb, n_dp_i, bw_dp, al);
    /* One layer's collectives and compute, for FSDP's per-layer schedule. */
    nl = in->layers;
    t->ag_l = ts_step_allgather_s(P_gather_b / nl, n_dp_i, bw_dp, al);
    t->rs_l = ts_step_allgather_s(P_train * gb / nl, n_dp_i, bw_dp, al);
    t->f_l = fwd_max / nl;
    t->b_l = bwd_max / nl;
    t->nl = nl;
}

/* FSDP / ZeRO-3: every wrapped layer gathers its weights
 * before forward and again before backward and
 * reduce-scatters its grads after backward, one collective
 * per layer per micro-batch, each paying the ring's full
 * latency ((n-1) hops, ts_step_allgather_s; NCCL runs
 * all-gather and reduce-scatter as rings only:
 * NVIDIA/nccl src/graph/tuning.cc@01afd20a, ncclTopoTuneModel
 * models non-all-reduce collectives for NCCL_ALGO_RING
 * alone).  One layer ahead is prefetched: L - 1 layers'
 * collectives run under a neighbour layer's compute and show
 * where they outlast it; the first gather (forward and
 * backward) and the last reduce-scatter have nothing to hide
 * under. */
static void ts_step_dp_zero3(const ts_step_dp_in *in, const ts_step_dp_t *t, double *exposed,
                             double *hidden)
{
    double m = in->m, nl = t->nl, ag_l = t->ag_l, rs_l = t->rs_l, f_l = t->f_l, b_l = t->b_l;
    double dp_exposed, dp_hidden;

    double b_need = ag_l + rs_l;
    double f_exp = (nl - 1) * (ag_l > f_l ? ag_l - f_l : 0) + ag_l;
    double b_exp = (nl - 1) * (b_need > b_l ? b_need - b_l : 0) + b_need;

    dp_exposed = m * (f_exp + b_exp);
    dp_hidden = m * nl * (ag_l + b_need) - dp_exposed;
    *exposed = dp_exposed;
    *hidden = dp_hidden;
}

/* DeepSpeed ZeRO-1/2 (and FSDP SHARD_GRAD_OP): grads reduced
 * under backward (ZeRO-2 every micro-batch, ZeRO-1 once), the
 * updated weights all-gathered after the step, exposed. */
static void ts_step_dp_zero12(const ts_run *r, const ts_step_dp_in *in, const ts_step_dp_t *t,
                              double *exposed, double *hidden)
{
    double m = in->m, bwd_max = in->bwd, stage_factor = in->layers;
    double ag_w = t->ag_w, rs_g = t->rs_g, ar = t->ar;
    double nl = t->nl, ag_l = t->ag_l, rs_l = t->rs_l, f_l = t->f_l, b_l = t->b_l;
    double dp_exposed, dp_hidden;

    double red = r->zero >= 1 ? rs_g : ar;
    double per = r->zero == 2 ? m : 1.0;
    double e1 = red > bwd_max ? red - bwd_max : 0;
    double gat = r->zero >= 1 ? ag_w : 0;

    if (r->framework == TS_FW_FSDP && r->zero == 2) {
        /* SHARD_GRAD_OP: per wrapped layer, one gather before its
         * forward (kept through backward, freed after it when
         * grads sync, so again each micro-batch) and one
         * reduce-scatter after its backward, each at the ring's
         * full latency; prefetched one layer ahead as ZeRO-3
         * above. */
        double fe = (nl - 1) * (ag_l > f_l ? ag_l - f_l : 0) + ag_l;
        double be = (nl - 1) * (rs_l > b_l ? rs_l - b_l : 0) + rs_l;

        dp_exposed = m * (fe + be);
        dp_hidden = m * nl * (ag_l + rs_l) - dp_exposed;
    } else {
        dp_exposed = per * (e1 + red / stage_factor) + gat;
        dp_hidden = per * red + (r->zero >= 1 ? ag_w : 0) - dp_exposed;
    }
    *exposed = dp_exposed;
    *hidden = dp_hidden;
}

void ts_step_dp_comm(const ts_run *r, const ts_step_hw *hw, const ts_step_dp_in *in,
                     double *exposed, double *hidden)
{
    ts_step_dp_t t;
    double fwd_max = in->fwd, bwd_max = in->bwd, stage_factor = in->layers;
    double dp_exposed = 0, dp_hidden = 0;

    ts_step_dp_times(r, hw, in, &t);
    if (r->optimizer == TS_OPT_NONE || in->n <= 1) {
        /* nothing to reduce */
    } else if (r->zero >= 3) {
        ts_step_dp_zero3(in, &t, &dp_exposed, &dp_hidden);
    } else if (r->framework == TS_FW_MEGATRON) {
        /* Distributed optimizer (zero >= 1): RS grads + AG params;
         * zero 0: all-reduce.  With --overlap-grad-reduce the buckets
         * reduce under the last backward, with --overlap-param-gather
         * the gather runs under the first forward (megatron/core/
         * distributed/param_and_grad_buffer.py@d98e8a64); without, each
         * is issued after backward / after the step and waited for
         * (finalize_model_grads, the optimizer's param sync). */
        double red = r->zero >= 1 ? t.rs_g : t.ar;
        double gat = r->zero >= 1 ? t.ag_w : 0;
        double ov_red = r->overlap_grad_reduce ? red : 0;
        double ov_gat = r->overlap_param_gather ? gat : 0;
        /* The last bucket cannot overlap (Megatron's default buckets
         * are ~40M params: a small share of any large model); the
         * others run under the pass and show where they outlast it. */
        double tail = (ov_red + ov_gat) / stage_factor;
        double e1 = fmax(0, ov_red - ov_red / stage_factor - bwd_max);
        double e2 = fmax(0, ov_gat - ov_gat / stage_factor - fwd_max);

        dp_exposed = e1 + e2 + tail + (red - ov_red) + (gat - ov_gat);
        dp_hidden = red + gat - dp_exposed;
    } else {
        ts_step_dp_zero12(r, in, &t, &dp_exposed, &dp_hidden);
    }
    if (dp_hidden < 0)
        dp_hidden = 0;
    *exposed = dp_exposed;
    *hidden = dp_hidden;
}

/* FP8 delayed scaling: at the end of every forward and backward TE
 * all-reduces the amax history of all its tensors in one fused
 * buffer over the data- and model-parallel group
 * (transformer_engine/pytorch/fp8.py@v1.12,
 * reduce_and_update_fp8_tensors): a few kilobytes, latency-bound. */
double ts_step_fp8_amax_s(const ts_run *r, const ts_step_hw *hw, double m)
{
    int64_t grp = r->dp * r->tp * r->cp;
    bool in_node = ts_step_same_node(grp * r->pp, r->gpus_per_node);

    return m * 2.0 *
           ts_step_allreduce_s(4096.0, grp, in_node ? ts_step_node_bw(hw, grp) : hw->net,
                               in_node ? TS_STEP_ALPHA_NVLINK : TS_STEP_ALPHA_NET);
}
