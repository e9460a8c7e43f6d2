/*
 * ts_step_int.h - what the step-time model's files share; not installed,
 * not part of the public interface (trainsize.h).
 *
 *   ts_step.c         the step: the run's rates, the pipeline of
 *                     micro-batches, the optimizer, the sums and MFU
 *   ts_step_kernel.c  one GEMM's roofline (frozen and quantised weights
 *                     included) and the byte counts of other kernels
 *   ts_step_layer.c   one layer and the output head, kernel by kernel:
 *                     GEMMs, LoRA adapters, attention, elementwise work
 *   ts_step_comm.c    collectives: TP, CP, EP inside a layer, pipeline
 *                     point-to-point, data parallel / ZeRO / FSDP
 *
 * See docs/formulas.md, "Step time".
 */
#ifndef TS_STEP_INT_H
#define TS_STEP_INT_H

#include "ts_internal.h"

/* Streaming kernels reach ~90 % of the HBM peak (STREAM-like copies). */
#define TS_STEP_MEM_EFF 0.9
/* Per-hop latency: NCCL's tuning model puts a few microseconds per step
 * inside a node and more across one (src/graph/tuning.cc hwLat/baseLat). */
#define TS_STEP_ALPHA_NVLINK 3e-6
#define TS_STEP_ALPHA_NET    8e-6

/* The run's achieved rates, and the tallies its kernels add to. */
typedef struct ts_step_hw {
    double peak;      /* dense FLOP/s at the compute precision */
    double core;      /* matmul core fraction */
    double mem;       /* achieved streaming HBM bandwidth, bytes/s */
    double opb;       /* bytes per GEMM input element (2 bf16, 1 fp8) */
    double attn_peak; /* dense FLOP/s the attention core runs at */
    double attn;      /* fused attention fraction */
    double nvlink;    /* one-way NCCL bus bandwidth inside a node (all of a GPU's links) */
    double peers;     /* mesh: the node's other GPUs the links split over; 0 = a switch */
    double net;       /* one-way NCCL bus bandwidth per GPU across nodes */
    double pcie;
    double gemm_flops, gemm_ideal; /* FLOPs and their time at peak*core: efficiency */
    bool frozen;                   /* LoRA: the linears' weights are frozen (no wgrad GEMM) */
    ts_quant quant;                /* storage of frozen weights: dequantised around each GEMM */
    double xops_f, xops_b;         /* extra kernels (dequant, adapters) for the launch floor */
} ts_step_hw;

/* One layer's costs, one micro-batch on one GPU, seconds. */
typedef struct ts_step_layer {
    double fwd, bwd; /* compute, one layer, one micro-batch */
    double attn_fwd; /* the attention core part of fwd (selective recompute) */
    double tp_exposed, tp_hidden;
    double cp_exposed, cp_hidden;
    double ep;     /* all-to-all, exposed */
    double tp_fwd; /* forward TP collectives (redone by full recompute) */
    double ep_fwd;
    double wtraffic; /* weight-sized HBM traffic per micro-batch (in bwd) */
    /* Forward work full recompute does not redo: PyTorch's non-reentrant
     * checkpoint stops once every tensor saved for backward is back
     * (ts_step_layer_cost). */
    double rec_skip, rec_skip_tp;
    /* recompute selective_op: the forward work torchtitan's per-op
     * checkpoint reruns in backward, and its TP collectives. */
    double rec_op, rec_op_tp;
} ts_step_layer;

/* One layer's shape on one GPU, as ts_step_layer_cost's parts use it. */
typedef struct ts_step_shape {
    double t, c, e; /* tp, cp, ep */
    double s, b;    /* seq, micro-batch */
    double h, a, kv, F;
    double qk, vd; /* per-head q/k and v widths: head_dim, h / a, or MLA's */
    double qw, ow; /* q's output and o's input width on this GPU: a qk / t, a vd / t */
    double Fe, S;  /* an expert's ffn (moe_ffn, else ffn) and the shared experts */
    double mlp_n;  /* MLPs a token runs: top_k plus the shared experts; 1 dense */
    double attn_p; /* attention weights of one layer (ts_model_attn_params) */
    double tok;    /* tokens on this GPU per micro-batch */
    double kv_gpu; /* KV heads replicated when kv < tp */
    double qkv;    /* the q, k, v projections' output width on this GPU: qw + kv_gpu (qk + vd) */
    double tok_h;  /* norm/residual regions (split by SP) */
    bool moe, mla;
} ts_step_shape;

/* What the data-parallel collectives depend on (ts_step_dp_comm). */
typedef struct ts_step_dp_in {
    double m;         /* micro-batches per step */
    double fwd, bwd;  /* the slowest stage's forward and backward, one micro-batch */
    double layers;    /* layers of the first stage (at least 1): FSDP's per-layer schedule */
    double gather_b;  /* bytes of the weights this GPU gathers */
    double train, gb; /* trainable parameters on this GPU, bytes per gradient */
    int64_t n;        /* ranks: dp * cp */
} ts_step_dp_in;

/* ts_step_kernel.c: forward and backward GEMMs of one linear (m x k
 * input, n outputs), count of them, added to fwd / bwd and to hw's
 * FLOP and ideal-time tallies. */
void ts_step_gemm3(ts_step_hw *hw, double m, double n, double k, double count, double *fwd,
                   double *bwd);

/* ts_step_layer.c: one transformer layer and the output head, one
 * micro-batch on one GPU. */
void ts_step_layer_cost(const ts_run *r, ts_step_hw *hw, ts_step_layer *o);
void ts_step_head_cost(const ts_run *r, ts_step_hw *hw, double *fwd, double *bwd, double *tp);
/* LoRA adapter parameters of one layer on one GPU. */
double ts_step_lora_layer_params(const ts_run *r);

/* ts_step_comm.c */
bool ts_step_same_node(int64_t span, int64_t gpn);
double ts_step_ring_bw(const ts_step_hw *hw, int64_t n, int64_t g, int64_t gpn);
double ts_step_node_bw(const ts_step_hw *hw, int64_t n);
/* One layer's TP, CP and EP collectives into o; gemm_f / gemm_b: the
 * linears' GEMMs that overlapped TP collectives (tp_comm_overlap) hide
 * under; attn_f / attn_b: the attention core the CP ring hides under. */
void ts_step_layer_comm(const ts_run *r, const ts_step_hw *hw, const ts_step_shape *sh,
                        double gemm_f, double gemm_b, double attn_f, double attn_b,
                        ts_step_layer *o);
/* Pipeline point-to-point of one step, m micro-batches. */
double ts_step_pp_p2p(const ts_run *r, const ts_step_hw *hw, double m);
/* Data-parallel collectives of one step: exposed and hidden seconds. */
void ts_step_dp_comm(const ts_run *r, const ts_step_hw *hw, const ts_step_dp_in *in,
                     double *exposed, double *hidden);
/* FP8 delayed scaling's amax all-reduces of one step, m micro-batches. */
double ts_step_fp8_amax_s(const ts_run *r, const ts_step_hw *hw, double m);

#endif
