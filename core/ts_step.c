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
 */
#include "ts_internal.h"

#include <math.h>

/* Streaming kernels reach ~90 % of the HBM peak (STREAM-like copies). */
#define TS_STEP_MEM_EFF 0.9
/* NCCL bus bandwidth over the link's one-way peak: nccl-tests all_reduce
 * on DGX A100 reaches ~230-240 GB/s of NVLink3's 300, DGX H100 ~360-370 of
 * NVLink4's 450 without NVLS, NDR IB ~40-45 of 50 GB/s. */
#define TS_STEP_LINK_EFF 0.8
/* Per-hop latency: NCCL's tuning model puts a few microseconds per step
 * inside a node and more across one (src/graph/tuning.cc hwLat/baseLat). */
#define TS_STEP_ALPHA_NVLINK 3e-6
#define TS_STEP_ALPHA_NET    8e-6
/* Fallbacks for a custom GPU with no network figures. */
#define TS_STEP_NVLINK_DEFAULT 64e9 /* PCIe Gen4 x16, bidirectional */
#define TS_STEP_NET_DEFAULT    50e9 /* 400 Gb/s */
#define TS_STEP_PCIE_DEFAULT   32e9
#define TS_STEP_MAMF_DEFAULT   0.7
#define TS_STEP_ATTN_DEFAULT   0.35
/* Host-side Adam (DeepSpeed CPU-Adam) per GPU's share of the host:
 * ~25 GB/s of the sockets' memory bandwidth for each of 8 GPUs. */
#define TS_STEP_HOST_BW 25e9
/* FlashAttention's backward does 2.5x the forward's FLOPs (it recomputes
 * the scores; Dao 2023, Sec. 3.1); the catalogue fraction is in that count. */
#define TS_STEP_FA_BWD 2.5
/* FlashAttention-2 is "1.3-2.5x faster than FlashAttention in Triton"
 * forward+backward (Dao 2023, Sec. 4.1, A100): the Triton kernel runs at
 * the catalogue (FA2) fraction over the range's geometric mean, 1.8. */
#define TS_STEP_TRITON_SLOWDOWN 1.8
/* No CUDA-version term: the FlashAttention-3 remark that Ampere-style
 * mma.sync reaches ~2/3 of Hopper's peak is about hand-written kernels;
 * llm-foundry's own logs show cuBLAS under CUDA 11.8 as fast as under
 * 12.1 on H100 (scripts/train/benchmarking/h100old.csv vs h100new.csv
 * @beb8dee69: 33 runs of the same configs, +0 to +4 %, median +2 %). */
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
/* Host launch floor: a GPU kernel cannot start before the host has
 * launched it, so a layer whose kernels are shorter than their launches
 * runs at the launch rate.  NVIDIA measures back-to-back launches of a
 * ~3 us kernel at 3.8 us each ("Getting Started with CUDA Graphs",
 * developer.nvidia.com/blog/cuda-graphs); PyTorch's eager dispatcher adds
 * its own per-op time on top, so 5 us per modelled kernel is a floor. */
#define TS_STEP_LAUNCH_S 5e-6

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

/* ---- kernels ----------------------------------------------------- */

double ts_step_gemm_s(double m, double n, double k, double peak, double core, double hbm_bw)
{
    if (!(m > 0 && n > 0 && k > 0 && peak > 0 && core > 0 && hbm_bw > 0))
        return 0;
    return 2.0 * m * n * k / (peak * core) +
           2.0 * (m * k + k * n + m * n) / (hbm_bw * TS_STEP_MEM_EFF);
}

static double ts_step_mamf(const ts_gpu *g)
{
    return g->mamf > 0 && g->mamf <= 1 ? g->mamf : TS_STEP_MAMF_DEFAULT;
}

/* The matmul core rate: the measured MAMF itself.  The benchmark loops
 * over the same operands, which stay warm in L2 (40-50 MB on A100/H100),
 * so it measures the math pipeline; in training every GEMM streams its
 * operands from HBM, which ts_step_gemm_s() adds on top. */
double ts_step_core_eff(const ts_gpu *g)
{
    if (g == NULL || !(g->bf16_flops > 0))
        return 0;
    return ts_step_mamf(g);
}

double ts_step_bubble_fraction(int64_t p, int64_t m, int64_t v)
{
    if (p <= 1 || m <= 0 || v <= 0)
        return 0;
    return (double)(p - 1) / ((double)m * (double)v);
}

/* ---- the per-layer model ----------------------------------------- */

typedef struct ts_step_hw {
    double peak;      /* dense FLOP/s at the compute precision */
    double core;      /* matmul core fraction */
    double mem;       /* achieved streaming HBM bandwidth, bytes/s */
    double opb;       /* bytes per GEMM input element (2 bf16, 1 fp8) */
    double attn_peak; /* dense FLOP/s the attention core runs at */
    double attn;      /* fused attention fraction */
    double nvlink;    /* one-way NCCL bus bandwidth inside a node */
    double net;       /* one-way NCCL bus bandwidth per GPU across nodes */
    double pcie;
    double gemm_flops, gemm_ideal; /* FLOPs and their time at peak*core: efficiency */
    bool frozen;                   /* LoRA: the linears' weights are frozen (no wgrad GEMM) */
    ts_quant quant;                /* storage of frozen weights: dequantised around each GEMM */
    double xops_f, xops_b;         /* extra kernels (dequant, adapters) for the launch floor */
} ts_step_hw;

/* One GEMM at the run's achieved rates: inputs at the compute
 * precision's width, the output in bf16. */
static double ts_step_gemm_at(double m, double n, double k, const ts_step_hw *hw)
{
    return 2.0 * m * n * k / (hw->peak * hw->core) +
           (hw->opb * (m * k + k * n) + 2.0 * m * n) / hw->mem;
}

static void ts_step_frozen_gemm(ts_step_hw *hw, double m, double n, double k, double count,
                                double *fwd, double *bwd);

/* Forward GEMM, and its two backward GEMMs (dgrad M x K x N, wgrad K x N x M).
 * A frozen weight (LoRA's base) has only the first two. */
static void ts_step_gemm3(ts_step_hw *hw, double m, double n, double k, double count, double *fwd,
                          double *bwd)
{
    double f, b;

    if (hw->frozen) {
        ts_step_frozen_gemm(hw, m, n, k, count, fwd, bwd);
        return;
    }
    f = ts_step_gemm_at(m, n, k, hw) * count;
    b = (ts_step_gemm_at(m, k, n, hw) + ts_step_gemm_at(k, n, m, hw)) * count;
    *fwd += f;
    *bwd += b;
    hw->gemm_flops += 6.0 * m * n * k * count;
    hw->gemm_ideal += f + b;
}

/* ---- LoRA and QLoRA ---------------------------------------------- */

/* Dequantisation traffic of one frozen linear of `params` weights, with
 * in_el input and out_el output elements, per micro-batch, in bytes.
 *   nf4 (QLoRA): bitsandbytes' MatMul4Bit dequantises the whole weight to
 *     the compute dtype before its forward GEMM and again before its dgrad
 *     (bitsandbytes/autograd/_functions.py@012c6606, MatMul4Bit.forward
 *     and .backward: F.dequantize_4bit, then linear / matmul): each pass
 *     reads the packed 4 bits and the double-quantised absmax
 *     (ts_quant_bytes) and writes 2 B per weight.  Memory-bound.
 *   int8 (LLM.int8, MatMul8bitLt in the same file, frozen int8 weights):
 *     forward, the input is quantised row- and column-wise (double_quant:
 *     read 2, write 1 + 1) and put in the col32 layout (1 + 1) per input
 *     element; the int32 GEMM result (4 B, 2 more than bf16) is
 *     dequantised by mm_dequant (read 4, write 2) per output element; the
 *     weight's tiled layout is cached after the first call.  Backward,
 *     the output gradient is quantised (read 2, write 1 + 1) and the
 *     weight brought back to 16 bits for the dgrad: undo_layout's two
 *     int8 copies (1 + 1 each), the cast (1 + 2), the in-place scale
 *     (2 + 2), 10 B per weight. */
void ts_step_dequant_bytes(ts_quant q, double params, double in_el, double out_el, double *fwd,
                           double *bwd)
{
    *fwd = 0;
    *bwd = 0;
    if (q == TS_QUANT_NF4) {
        *fwd = params * (ts_quant_bytes(q) + 2.0);
        *bwd = *fwd;
    } else if (q == TS_QUANT_INT8) {
        *fwd = 6.0 * in_el + 8.0 * out_el;
        *bwd = 4.0 * out_el + 10.0 * params;
    }
}

/* A frozen linear: PEFT sets requires_grad False on the base weights
 * (LoraModel._mark_only_adapters_as_trainable, src/peft/tuners/lora/
 * model.py), so autograd runs its forward and dgrad GEMMs and skips the
 * wgrad one; a quantised base adds its dequantisation (memory-bound,
 * outside the GEMM efficiency). */
static void ts_step_frozen_gemm(ts_step_hw *hw, double m, double n, double k, double count,
                                double *fwd, double *bwd)
{
    double f = ts_step_gemm_at(m, n, k, hw) * count;
    double b = ts_step_gemm_at(m, k, n, hw) * count;
    double df, db;

    hw->gemm_flops += 4.0 * m * n * k * count;
    hw->gemm_ideal += f + b;
    ts_step_dequant_bytes(hw->quant, n * k, m * k, m * n, &df, &db);
    if (df > 0 || db > 0) {
        f += count * df / hw->mem;
        b += count * db / hw->mem;
        hw->xops_f += count * (hw->quant == TS_QUANT_INT8 ? 3.0 : 1.0);
        hw->xops_b += count * (hw->quant == TS_QUANT_INT8 ? 5.0 : 1.0);
    }
    *fwd += f;
    *bwd += b;
}

/* The adapter pair of one adapted matrix (in k, out n) over m tokens:
 * A (k -> rank) and B (rank -> n) are thin GEMMs, forward and both
 * backward GEMMs each (they train); ts_step_gemm_at's roofline makes them
 * bandwidth-bound at small ranks.  PEFT's LoRA Linear.forward adds
 * lora_B(lora_A(dropout(x))) * scaling to the base output (peft@5fe7f8f8
 * tuners/lora/layer.py, Linear.forward): the scale (read 2n, write 2n)
 * and the out-of-place add (read 4n, write 2n) per token; backward scales
 * the gradient (4n) and autograd sums the two input gradients, base dgrad
 * and A's (read 4k, write 2k).  Under hf the input is cast to the fp32
 * adapters' dtype first (_cast_input_dtype: read 2k, write 4k; its
 * backward casts the gradient back, 6k).  lora_dropout > 0 would copy the
 * input once more per adapted matrix; trainsize has no input for it. */
static void ts_step_adapter(const ts_run *r, ts_step_hw *hw, double m, double n, double k,
                            double count, double *fwd, double *bwd)
{
    double rank = (double)r->lora_rank;
    double cast = r->framework == TS_FW_HF ? 6.0 * k : 0.0;
    ts_step_hw a = *hw;

    a.frozen = false;
    ts_step_gemm3(&a, m, rank, k, count, fwd, bwd);
    ts_step_gemm3(&a, m, n, rank, count, fwd, bwd);
    hw->gemm_flops = a.gemm_flops;
    hw->gemm_ideal = a.gemm_ideal;
    *fwd += count * m * (10.0 * n + cast) / hw->mem;
    *bwd += count * m * (4.0 * n + 6.0 * k + cast) / hw->mem;
    hw->xops_f += count * (4.0 + (cast > 0 ? 1.0 : 0.0));
    hw->xops_b += count * (6.0 + (cast > 0 ? 1.0 : 0.0));
}

/* Every adapter of one layer on one GPU (its tp slice): q, k, v (or the
 * fused qkv), o, gate, up, down as lora_targets says; a two-matrix MLP
 * has no gate (core/ts_lora.c).  MoE: each local expert's MLP matrices
 * over its tokens. */
static void ts_step_lora_layer(const ts_run *r, ts_step_hw *hw, double tok, double kv_dim,
                               double mlp_tok, double mlp_count, double *fwd, double *bwd)
{
    const ts_model *md = &r->model;
    unsigned tg = r->lora_targets;
    double t = (double)r->tp, h = (double)md->hidden;
    double F = (double)(md->ffn > 0 ? md->ffn : 4 * md->hidden);

    if (tg & TS_LORA_Q)
        ts_step_adapter(r, hw, tok, h / t, h, 1, fwd, bwd);
    if (tg & TS_LORA_K)
        ts_step_adapter(r, hw, tok, kv_dim, h, 1, fwd, bwd);
    if (tg & TS_LORA_V)
        ts_step_adapter(r, hw, tok, kv_dim, h, 1, fwd, bwd);
    if (tg & TS_LORA_QKV)
        ts_step_adapter(r, hw, tok, h / t + 2.0 * kv_dim, h, 1, fwd, bwd);
    if (tg & TS_LORA_O)
        ts_step_adapter(r, hw, tok, h, h / t, 1, fwd, bwd);
    if (md->gated && (tg & TS_LORA_GATE))
        ts_step_adapter(r, hw, mlp_tok, F / t, h, mlp_count, fwd, bwd);
    if (tg & TS_LORA_UP)
        ts_step_adapter(r, hw, mlp_tok, F / t, h, mlp_count, fwd, bwd);
    if (tg & TS_LORA_DOWN)
        ts_step_adapter(r, hw, mlp_tok, h, F / t, mlp_count, fwd, bwd);
}

/* Adapter parameters of one layer on one GPU: the tp slice of
 * ts_lora_layer_params (the count ts_memory.c uses); experts' adapters
 * split over ep with their experts. */
static double ts_step_lora_layer_params(const ts_run *r)
{
    const ts_model *md = &r->model;
    double E = md->experts > 1 ? (double)md->experts / (double)r->ep : 1.0;

    return ts_lora_layer_params(md, r->lora_targets, r->lora_rank, E) / (double)r->tp;
}

/* One frozen linear (m x k input, n outputs) and, when adapted, its
 * adapter pair, at the given rates (bf16 operands), seconds forward and
 * backward: the same code the layer model runs, exposed for tests. */
void ts_step_lora_linear_s(double m, double n, double k, int64_t rank, bool adapted, ts_quant q,
                           double peak, double core, double mem, double *fwd, double *bwd)
{
    ts_step_hw hw = { 0 };
    ts_run r;

    ts_run_defaults(&r);
    r.lora_rank = rank;
    hw.peak = peak;
    hw.core = core;
    hw.mem = mem;
    hw.opb = 2.0;
    hw.frozen = true;
    hw.quant = q;
    *fwd = 0;
    *bwd = 0;
    ts_step_gemm3(&hw, m, n, k, 1, fwd, bwd);
    if (adapted && rank > 0)
        ts_step_adapter(&r, &hw, m, n, k, 1, fwd, bwd);
}

typedef struct ts_step_layer {
    double fwd, bwd; /* compute, one layer, one micro-batch */
    double attn_fwd; /* the attention core part of fwd (selective recompute) */
    double tp_exposed, tp_hidden;
    double cp_exposed, cp_hidden;
    double ep;     /* all-to-all, exposed */
    double tp_fwd; /* forward TP collectives (redone by full recompute) */
    double ep_fwd;
    double wtraffic; /* weight-sized HBM traffic per micro-batch (in bwd) */
} ts_step_layer;

static bool ts_step_same_node(int64_t span, int64_t gpn)
{
    return span <= gpn;
}

/* Bus bandwidth of a ring collective over a group of n ranks, g of them in
 * each node.  Inside a node: NVLink.  Across nodes NCCL aggregates the
 * node's NICs: each ring (channel) enters a node through one NIC, runs
 * through the node's GPUs over NVLink and leaves through a NIC, and as many
 * such flows run concurrently as the node has NICs (S. Jeaugey,
 * NVIDIA/nccl#412; bandwidth "should add up" per NIC, NVIDIA/nccl#652).
 * The g ranks of the group in a node therefore drive g NICs: min(g x NIC,
 * NVLink), not one NIC per rank's share. */
static double ts_step_ring_bw(const ts_step_hw *hw, int64_t n, int64_t g, int64_t gpn)
{
    double agg;

    if (ts_step_same_node(n, gpn))
        return hw->nvlink;
    if (g < 1)
        g = 1;
    agg = (double)g * hw->net;
    return agg < hw->nvlink ? agg : hw->nvlink;
}

/* FP8 (Transformer Engine) casting work of one layer's four linears, in
 * bytes moved, per micro-batch.  TE runs every linear's GEMMs in FP8 but
 * keeps activations and their gradients in bf16 between them, so each
 * linear casts (TransformerEngine transformer_engine/pytorch/module/
 * linear.py@v1.12, _Linear.forward / backward and base.py
 * grad_output_preprocess):
 *   forward:  its bf16 input to FP8 and, for the wgrad GEMM, its FP8
 *             transpose, fused with the amax in one kernel
 *             (fp8_cast_transpose_fused): read 2 B, write 1 + 1 B per
 *             element of the tok x K input;
 *   backward: the bf16 output gradient likewise
 *             (fp8_cast_transpose_bgrad_fused): 4 B per element of the
 *             tok x N gradient;
 *   weights:  read bf16, write FP8 and its transpose, 4 B per weight,
 *             redone every micro-batch unless the caller says which
 *             micro-batch is the first (is_first_microbatch, the
 *             weight-cache path of Linear.forward: Megatron-Core passes
 *             it, so the weights are cast once per step).
 * The work is memory-bound: per token it is ~4 (h + N) bytes against
 * ~6 h N FLOPs of the GEMMs, so its share falls as 1/h and dominates
 * small hidden sizes.  weight_div: micro-batches the weight cast is
 * shared over. */
void ts_step_fp8_cast(double tok, double h, double F, double t, double kv_dim, bool gated,
                      double top_k, double P_l, double weight_div, double *fwd, double *bwd)
{
    double fc1 = (gated ? 2.0 : 1.0) * F / t;
    double in_el = tok * (h + h / t) + top_k * tok * (h + F / t); /* QKV, out, FC1, FC2 inputs */
    double out_el =
        tok * (h / t + 2.0 * kv_dim + h) + top_k * tok * (fc1 + h); /* their outputs' grads */

    *fwd = 4.0 * in_el + (weight_div > 1 ? 4.0 * P_l / weight_div : 4.0 * P_l);
    *bwd = 4.0 * out_el;
}

/* Elementwise bytes an eager Hugging Face transformers layer moves beyond
 * the fused kernels counted in ts_step_layer_cost, forward, per
 * micro-batch (transformers src/transformers/models/llama/
 * modeling_llama.py@00227283, the modules ts_memory.c's hf activations
 * follow):
 *   LlamaRMSNorm: to fp32 (read 2, write 4), pow (4 + 4), mean (read 4),
 *     scale by rsqrt (4 + 4), back to bf16 (4 + 2), times the weight
 *     (2 + 2): 36 B per element where one fused norm moves 4: +32, twice;
 *   apply_rotary_pos_emb on q and k: q * cos (2 + 2), rotate_half's
 *     negated half (1 + 1) and cat (2 + 2), * sin (2 + 2), the sum
 *     (4 + 2): 20 B per element against the fused 4: +16;
 *   LlamaMLP: act_fn(gate) * up as two kernels, silu (2 + 2) and the
 *     product (4 + 2): 10 B per F element against the fused 6: +4;
 *   repeat_kv (grouped K/V expanded to every head for SDPA): read the kv
 *     width, write the full width, K and V;
 *   the attention output made contiguous for o_proj (2 + 2 per element).
 * Backward moves about twice that, as for the fused kernels.  Each
 * unfused piece is a kernel of its own: ~22 more launches a pass (+2 for
 * repeat_kv). */
static double ts_step_hf_eager(const ts_model *md, double tok, double t, double kv_dim, double F,
                               double k_mlp, ts_step_hw *hw)
{
    double h = (double)md->hidden;
    bool gqa = kv_dim < h / t;
    double b =
        tok * (2.0 * 32.0 * h + 16.0 * (h / t + kv_dim) + (md->gated ? 4.0 * k_mlp * F / t : 0.0) +
               (gqa ? 2.0 * (2.0 * kv_dim + 2.0 * h / t) : 0.0) + 4.0 * h / t);

    hw->xops_f += 22.0 + (gqa ? 2.0 : 0.0);
    hw->xops_b += 22.0 + (gqa ? 2.0 : 0.0);
    return b;
}

static void ts_step_layer_cost(const ts_run *r, ts_step_hw *hw, ts_step_layer *o)
{
    const ts_model *md = &r->model;
    double t = (double)r->tp, c = (double)r->cp, e = (double)r->ep;
    double s = (double)r->seq, b = (double)r->micro_batch;
    double h = (double)md->hidden, a = (double)md->heads;
    double kv = (double)(md->kv_heads > 0 ? md->kv_heads : md->heads);
    double F = (double)(md->ffn > 0 ? md->ffn : 4 * md->hidden);
    double dh = h / a;
    double tok = s * b / c;                      /* tokens on this GPU per micro-batch */
    double kv_gpu = kv / t > 1.0 ? kv / t : 1.0; /* KV heads replicated when kv < tp */
    bool sp = r->sequence_parallel || r->tp == 1;
    double tok_h = sp ? tok / t : tok; /* norm/residual regions */
    bool moe = md->experts > 1;
    double elem_f, attn_f = 0, attn_b = 0, f = 0, bw = 0, fp8_f = 0, fp8_b = 0;
    double S, alpha_tp, bw_tp;

    *o = (ts_step_layer){ 0 };
    hw->xops_f = hw->xops_b = 0; /* dequant, adapter and eager kernels, counted as costed */

    /* Attention projections. */
    ts_step_gemm3(hw, tok, h / t + 2.0 * kv_gpu * dh, h, 1, &f, &bw);
    ts_step_gemm3(hw, tok, h, h / t, 1, &f, &bw);

    /* MLP: dense, or top_k of E experts spread over ep GPUs. */
    if (moe) {
        double E = (double)md->experts, k = (double)(md->top_k > 0 ? md->top_k : 1);
        double per_expert = tok * k * e / E; /* tokens each local expert sees */
        double local = E / e;

        ts_step_gemm3(hw, tok, E, h, 1, &f, &bw); /* router */
        ts_step_gemm3(hw, per_expert, (md->gated ? 2.0 : 1.0) * F / t, h, local, &f, &bw);
        ts_step_gemm3(hw, per_expert, h, F / t, local, &f, &bw);
    } else {
        ts_step_gemm3(hw, tok, (md->gated ? 2.0 : 1.0) * F / t, h, 1, &f, &bw);
        ts_step_gemm3(hw, tok, h, F / t, 1, &f, &bw);
    }

    /* LoRA adapters on the targeted matrices (the base linears above are
     * frozen: hw->frozen). */
    if (r->lora_rank > 0 && hw->frozen) {
        double kk = moe ? (double)(md->top_k > 0 ? md->top_k : 1) : 1.0;
        double E = moe ? (double)md->experts : 1.0;

        ts_step_lora_layer(r, hw, tok, kv_gpu * dh, moe ? tok * kk * e / E : tok, moe ? E / e : 1.0,
                           &f, &bw);
    }

    /* Attention core. */
    if (r->attention != TS_ATTN_EAGER) {
        /* QK^T and AV: 4 s_kv h/t FLOPs per query token, causal halves s_kv. */
        double fl = 4.0 * tok * (s / 2.0) * h / t;
        double fa = hw->attn / (r->attention == TS_ATTN_TRITON ? TS_STEP_TRITON_SLOWDOWN : 1.0);

        attn_f = fl / (hw->attn_peak * fa);
        attn_b = TS_STEP_FA_BWD * fl / (hw->attn_peak * fa);
    } else {
        /* Materialised scores: full s x s per head (the mask is applied
         * after the matmul), fused scale-mask-softmax, optional dropout. */
        double heads = b * a / t, sq = s / c;
        double scores = heads * sq * s;                  /* elements */
        double pass = (r->dropout ? 9.0 : 4.0) * scores; /* bytes: r+w softmax, dropout r+w+mask */
        double fw = 0, bk = 0;
        ts_step_hw ah = *hw; /* the score matmuls run in bf16 under FP8 too */

        ah.peak = hw->attn_peak;
        ah.opb = 2.0;
        ah.frozen = false; /* activations on both sides: both grads */
        ts_step_gemm3(&ah, sq, s, dh, heads, &fw, &bk);
        ts_step_gemm3(&ah, sq, dh, s, heads, &fw, &bk);
        hw->gemm_flops = ah.gemm_flops;
        hw->gemm_ideal = ah.gemm_ideal;
        attn_f = fw + pass / hw->mem;
        attn_b = bk + (r->dropout ? 11.0 : 6.0) * scores / hw->mem;
    }

    /* Memory-bound elementwise work, bf16 activations: two norms (r+w),
     * two residual adds (2r+w), optional dropout (r+w+1 B mask) on the
     * h-wide regions; activation function on the F-wide one (gated reads
     * two halves); rotary on q and k.  Backward moves about twice that. */
    elem_f = tok_h * h * 2.0 * (2.0 * 2.0 + 2.0 * 3.0 + (r->dropout ? 2.0 * 2.5 : 0.0)) +
             tok * (F / t) * 2.0 * (md->gated ? 3.0 : 2.0) *
                 (moe ? (double)(md->top_k > 0 ? md->top_k : 1) : 1.0) +
             tok * (h / t + kv_gpu * dh) * 2.0 * 2.0;
    if (r->framework == TS_FW_HF)
        elem_f += ts_step_hf_eager(md, tok, t, kv_gpu * dh, F,
                                   moe ? (double)(md->top_k > 0 ? md->top_k : 1) : 1.0, hw);
    elem_f /= hw->mem;

    /* Weight-sized traffic every micro-batch, beyond the GEMMs' own
     * operands.  Megatron accumulates wgrad into fp32 main grads inside
     * the GEMM (gradient-accumulation fusion): C is read and written in
     * fp32, 6 B/param more than a bf16 store.  FSDP / ZeRO-3 gathers the
     * unsharded weights into HBM before forward and again before
     * backward, casts grads to the reduce dtype and reduce-scatters them
     * from HBM; ZeRO-1/2 (DeepSpeed) copies grads into its reduce buckets. */
    {
        double moe_mult = moe ? (double)md->experts / e : 1.0;
        double P_l =
            (h * (h + 2.0 * kv * dh) + h * h + moe_mult * (md->gated ? 3.0 : 2.0) * h * F) / t;
        double wb = ts_precision_bytes(r->precision);
        double gb = ts_precision_bytes(r->grad_precision);
        double extra;

        if (r->zero >= 3)
            extra = 2.0 * wb + (gb != wb ? wb + gb : 0.0) + gb;
        else if (r->framework == TS_FW_MEGATRON)
            extra = 6.0;
        else
            extra = 3.0 * gb;
        o->wtraffic = P_l * extra / hw->mem;
        if (hw->frozen) {
            /* LoRA: only the adapters have grads; ZeRO-3 / FSDP still
             * gathers the frozen weights (at their storage width) before
             * forward and backward. */
            double ad = ts_step_lora_layer_params(r);
            double fb = ts_quant_bytes(r->frozen_precision);

            o->wtraffic = ((r->zero >= 3 ? 2.0 * fb * P_l : 0.0) +
                           ad * (extra - (r->zero >= 3 ? 2.0 * wb : 0.0))) /
                          hw->mem;
        }
        if (r->compute_precision == TS_PREC_FP8) {
            double mb = (double)r->global_batch / ((double)r->dp * (double)r->micro_batch);
            double kk = moe ? (double)(md->top_k > 0 ? md->top_k : 1) : 1.0;

            ts_step_fp8_cast(tok, h, F, t, kv_gpu * dh, md->gated, kk, P_l,
                             r->framework == TS_FW_MEGATRON && mb > 1 ? mb : 1.0, &fp8_f, &fp8_b);
            fp8_f /= hw->mem;
            fp8_b /= hw->mem;
        }
    }

    o->fwd = f + attn_f + elem_f + fp8_f;
    o->bwd = bw + attn_b + 2.0 * elem_f + o->wtraffic + fp8_b;
    o->attn_fwd = attn_f;

    /* Launch floor: the modelled kernels, one launch each.  Forward: the
     * GEMMs (QKV, out, two MLP; MoE: router and two grouped expert
     * GEMMs), attention (one fused kernel; eager: two batched matmuls,
     * softmax, dropout), two norms, two residual adds, the activation,
     * rotary, two dropouts.  Backward: two GEMMs per forward GEMM, one
     * attention backward (eager: its four), the same elementwise count. */
    {
        double gemms = moe ? 5.0 : 4.0;
        double attn_ops = r->attention == TS_ATTN_EAGER ? (r->dropout ? 4.0 : 3.0) : 1.0;
        double elem_ops =
            6.0 + (r->dropout ? 2.0 : 0.0) +
            (r->compute_precision == TS_PREC_FP8 ? 4.0 : 0.0); /* one cast per GEMM input / grad */
        double lf = (gemms + attn_ops + elem_ops + hw->xops_f) * TS_STEP_LAUNCH_S;
        double lb = ((hw->frozen ? 1.0 : 2.0) * gemms + attn_ops + elem_ops + hw->xops_b) *
                    TS_STEP_LAUNCH_S;

        if (o->fwd < lf)
            o->fwd = lf;
        if (o->bwd < lb)
            o->bwd = lb;
    }

    /* Tensor parallel: the activation S = tok*h*2 bytes is all-reduced
     * twice per pass, or reduce-scattered and all-gathered (SP). */
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
        } else {
            one = ts_step_allreduce_s(S, r->tp, bw_tp, alpha_tp);
            o->tp_fwd = 2.0 * one;
            o->tp_exposed = 4.0 * one;
        }
    }

    /* Context parallel: ring of K,V blocks, overlapped with the blocks'
     * attention (Megatron-Core / TE ring attention); backward sends K,V
     * and their grads. */
    if (r->cp > 1) {
        bool in_node = ts_step_same_node(r->tp * r->cp, r->gpus_per_node);
        double bwc = in_node ? hw->nvlink : hw->net;
        double al = in_node ? TS_STEP_ALPHA_NVLINK : TS_STEP_ALPHA_NET;
        double kvb = 2.0 * tok * kv_gpu * dh * 2.0;
        double fwdc = (c - 1.0) * (kvb / bwc + al);
        double bwdc = 2.0 * fwdc;
        double ef = fwdc > attn_f ? fwdc - attn_f : 0;
        double eb = bwdc > attn_b ? bwdc - attn_b : 0;

        o->cp_exposed = ef + eb;
        o->cp_hidden = fwdc + bwdc - ef - eb;
    }

    /* Expert parallel: dispatch and combine, forward and backward. */
    if (moe && r->ep > 1) {
        bool in_node = ts_step_same_node(r->tp * r->ep, r->gpus_per_node);
        double k = (double)(md->top_k > 0 ? md->top_k : 1);
        double bytes = tok * k * h * 2.0, one;

        if (in_node) {
            one = ts_step_alltoall_s(bytes, r->ep, hw->nvlink, TS_STEP_ALPHA_NVLINK);
        } else {
            /* Each rank exchanges (n-1)/n of its tokens: the (g-1)/n bound
             * for ranks of its own node over NVLink, the (n-g)/n for other
             * nodes through its own NIC, both at once. */
            double n = (double)r->ep;
            double g = (double)(r->gpus_per_node / r->tp > 1 ? r->gpus_per_node / r->tp : 1);
            double t_in = (g - 1.0) / n * bytes / hw->nvlink;
            double t_out = (n - g) / n * bytes / hw->net;

            one = (t_in > t_out ? t_in : t_out) + (n - 1.0) * TS_STEP_ALPHA_NET;
        }

        o->ep_fwd = 2.0 * one;
        o->ep = 4.0 * one;
    }
}

/* Bytes the cross-entropy moves over `logits` bf16 logits (this GPU's
 * vocabulary slice), forward and backward.  The loss runs in fp32:
 * Megatron casts the logits (vocab_parallel_cross_entropy(output.float()),
 * megatron/model/gpt_model.py) and PyTorch autocast runs log_softmax and
 * nll_loss in float32.  Counted kernel by kernel as Megatron-Core's
 * VocabParallelCrossEntropy does it (megatron/core/tensor_parallel/
 * cross_entropy.py@00611e6e), 4 B per fp32 element:
 *   forward: cast (read 2, write 4), max (read 4), in-place subtract
 *            (4 + 4), in-place exp (4 + 4), sum (read 4), in-place divide
 *            to the softmax kept for backward (4 + 4): 38 B;
 *   backward: grad_input.mul_ (4 + 4), the cast's backward to bf16
 *            (read 4, write 2): 14 B.
 * For a small model with a large vocabulary this is a visible share of
 * the step (MPT-125M: V 50,368 against h 768). */
void ts_step_loss_bytes(double logits, double *fwd, double *bwd)
{
    *fwd = logits * (2.0 + 4.0 + 4.0 + 8.0 + 8.0 + 4.0 + 8.0);
    *bwd = logits * (8.0 + 4.0 + 2.0);
}

/* Output layer and cross-entropy of the last stage, one micro-batch. */
static void ts_step_head_cost(const ts_run *r, ts_step_hw *hw, double *fwd, double *bwd, double *tp)
{
    const ts_model *md = &r->model;
    double t = (double)r->tp, tok = (double)r->seq * (double)r->micro_batch / (double)r->cp;
    double V = (double)md->vocab, h = (double)md->hidden;
    double f = 0, b = 0;

    *tp = 0;
    if (V > 0) {
        /* Under LoRA the head is frozen but not quantised (bitsandbytes
         * and PEFT leave lm_head in 16 bits). */
        ts_quant q = hw->quant;

        hw->quant = TS_QUANT_BF16;
        ts_step_gemm3(hw, tok, V / t, h, 1, &f, &b);
        hw->quant = q;
    }
    {
        double lf, lb;

        ts_step_loss_bytes(tok * (V / t), &lf, &lb);
        f += lf / hw->mem;
        b += lb / hw->mem;
    }
    if (r->tp > 1) {
        bool in_node = ts_step_same_node(r->tp, r->gpus_per_node);
        int64_t g = r->gpus_per_node < r->tp ? r->gpus_per_node : r->tp;

        /* Vocab-parallel loss: small all-reduces of max and sum per token. */
        *tp = 2.0 * ts_step_allreduce_s(tok * 4.0, r->tp,
                                        ts_step_ring_bw(hw, r->tp, g, r->gpus_per_node),
                                        in_node ? TS_STEP_ALPHA_NVLINK : TS_STEP_ALPHA_NET);
    }
    *fwd = f;
    *bwd = b;
}

/* Layers of pipeline stage i (Megatron's even split, or the given edges). */
static int64_t ts_step_stage_layers(const ts_run *r, int64_t i)
{
    int64_t L = r->model.layers, p = r->pp;
    int64_t fsl = r->first_stage_layers, lsl = r->last_stage_layers;
    int64_t middle, rest, base, extra, j;

    if (p <= 1)
        return L;
    if (i == 0 && fsl > 0)
        return fsl;
    if (i == p - 1 && lsl > 0)
        return lsl;
    middle = p - (fsl > 0) - (lsl > 0);
    rest = L - fsl - lsl;
    if (middle <= 0)
        return 0;
    base = rest / middle;
    extra = rest % middle;
    /* Index among the stages without a given count; the first `extra` get one more. */
    j = i - (fsl > 0);
    return base + (j < extra ? 1 : 0);
}

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

ts_status ts_step_eval(const ts_run *r, const ts_params *p, ts_step *out)
{
    const ts_gpu *g = &r->gpu;
    ts_step_hw hw;
    ts_step_layer ly;
    double m, tokens_step, gpus, P_gpu, P_train, P_gather_b, n_dp, wb, gb, t_opt, t_off = 0;
    double t_mb_max = 0, t_mb_sum = 0, fwd_max = 0, bwd_max = 0;
    double comp_max = 0, rec_max = 0, tp_max = 0, cp_max = 0, ep_max = 0;
    double tp_hid_max = 0, cp_hid_max = 0;
    double hidden = 0, bubble, p2p = 0, dp_exposed = 0, dp_hidden = 0, total;
    double basis, stage_factor;
    double short_layer = 0, short_head = 0, short_max = 0;
    int64_t n_dp_i, stages;
    bool in_node_dp, fp8;

    *out = (ts_step){ 0 };
    hw.peak = ts_gpu_peak(g, r->compute_precision);
    /* Memory-bound kernels run at the GPU's measured streaming bandwidth
     * where the catalogue has one (BabelStream copy), else at 90 % of the
     * datasheet figure. */
    hw.mem = (g->hbm_bw > 0 ? g->hbm_bw : 2e12) *
             (g->stream_eff > 0 && g->stream_eff <= 1 ? g->stream_eff : TS_STEP_MEM_EFF);
    fp8 = r->compute_precision == TS_PREC_FP8;
    hw.opb = fp8 ? 1.0 : r->compute_precision == TS_PREC_FP32 ? 4.0 : 2.0;
    /* Under FP8 only the linears run in FP8: Transformer Engine's
     * DotProductAttention stays in bf16 unless the recipe sets fp8_dpa
     * (transformer_engine/pytorch/attention.py@v1.12), and torchao's
     * float8 converts nn.Linear only. */
    hw.attn_peak = fp8 ? ts_gpu_peak(g, TS_PREC_BF16) : hw.peak;
    if (!(hw.attn_peak > 0))
        hw.attn_peak = hw.peak;
    {
        ts_gpu gg = *g;

        /* FP8 matmuls reach their own measured fraction of the FP8 peak
         * (cuBLASLt / hipBLASLt sweeps, ts_gpu.c) where one is known.
         * That sweep ran 10,000 warm-up iterations before timing, so it
         * is already at the power-limited clock: no sustain derating. */
        bool settled = fp8 && g->mamf_fp8 > 0 && g->mamf_fp8 <= 1;

        if (settled)
            gg.mamf = g->mamf_fp8;
        /* An explicit gemm_efficiency is what the user's stack achieves;
         * else the catalogue's burst MAMF at the sustained clock. */
        if (r->gemm_efficiency > 0)
            gg.mamf = r->gemm_efficiency;
        else if (!settled && gg.sustain > 0 && gg.sustain <= 1)
            gg.mamf *= gg.sustain;
        hw.core = ts_step_core_eff(&gg);
    }
    /* FP8/FP32 runs use the BF16 fractions at their own peak (no MAMF
     * figures for them in the catalogue). */
    hw.attn = g->attn_eff > 0 && g->attn_eff <= 1 ? g->attn_eff : TS_STEP_ATTN_DEFAULT;
    hw.nvlink = (r->nvlink_gbps > 0 ? r->nvlink_gbps * 1e9
                 : g->nvlink_bw > 0 ? g->nvlink_bw
                                    : TS_STEP_NVLINK_DEFAULT) /
                2.0 * TS_STEP_LINK_EFF;
    hw.net = (r->net_gbps > 0 ? r->net_gbps * 1e9
              : g->net_bw > 0 ? g->net_bw
                              : TS_STEP_NET_DEFAULT) *
             TS_STEP_LINK_EFF;
    hw.pcie = g->pcie_bw > 0 ? g->pcie_bw : TS_STEP_PCIE_DEFAULT;
    hw.gemm_flops = hw.gemm_ideal = 0;
    /* LoRA: the base is frozen (and stored at frozen_precision). */
    hw.frozen = r->lora_rank > 0 && p->from_shape && r->optimizer != TS_OPT_NONE;
    hw.quant = r->frozen_precision;
    hw.xops_f = hw.xops_b = 0;
    if (!(hw.peak > 0) || !(hw.core > 0))
        return TS_EINCOMPAT;
    out->nvlink_bw = hw.nvlink;
    out->net_bw = hw.net;

    gpus = (double)r->gpus;
    m = (double)r->global_batch / ((double)r->dp * (double)r->micro_batch);
    tokens_step = (double)r->global_batch * (double)r->seq;
    out->micro_batches = m;
    out->from_shape = p->from_shape && r->model.layers > 0;

    wb = ts_step_bytes(r->precision);
    /* Gradients are reduced at their own precision: Megatron's fp32
     * main_grad (accumulate_allreduce_grads_in_fp32), FSDP's reduce_dtype,
     * DeepSpeed's 16-bit grads; the api sets those per framework. */
    gb = ts_step_bytes(r->grad_precision);
    P_gpu = (p->dense / ((double)r->tp * (double)r->pp)) +
            p->expert / ((double)r->tp * (double)r->pp * (double)r->ep);
    P_train = P_gpu * r->trainable_fraction;
    if (hw.frozen) {
        /* LoRA: the adapters are all that trains (reduced, stepped); the
         * frozen base is gathered at its storage width under ZeRO-3. */
        double emb = (p->embedding + p->output_head) / ((double)r->tp * (double)r->pp);
        double ad = ts_step_lora_layer_params(r) * (double)r->model.layers / (double)r->pp;

        P_train = ad;
        P_gather_b = (P_gpu - emb) * ts_quant_bytes(r->frozen_precision) +
                     emb * ts_step_bytes(r->precision) + ad * ts_step_bytes(r->precision);
    } else {
        P_gather_b = P_gpu * ts_step_bytes(r->precision);
    }
    n_dp_i = r->dp * r->cp;
    n_dp = (double)n_dp_i;
    stages = r->pp;

    if (out->from_shape) {
        double head_f, head_b, head_tp, layer_mb, g_t, g_f;

        /* Each GEMM's shortfall from the matmul rate, per layer and for
         * the head: its roofline time less its FLOPs at peak * core. */
        g_t = hw.gemm_ideal;
        g_f = hw.gemm_flops;
        ts_step_layer_cost(r, &hw, &ly);
        short_layer = (hw.gemm_ideal - g_t) - (hw.gemm_flops - g_f) / (hw.peak * hw.core);
        g_t = hw.gemm_ideal;
        g_f = hw.gemm_flops;
        ts_step_head_cost(r, &hw, &head_f, &head_b, &head_tp);
        short_head = (hw.gemm_ideal - g_t) - (hw.gemm_flops - g_f) / (hw.peak * hw.core);
        /* Stages come in at most four sizes (first, last, and the two
         * of the even split between), so each size is costed once and
         * counted: O(1) in pp.  Middle sizes fall monotonically, the
         * boundary is found by bisection. */
        {
            int64_t idx[4], cnt[4], nk = 0, k;

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
                    int64_t big = ts_step_stage_layers(r, 1);

                    /* last index in [1, stages-2] with the first middle's size */
                    while (lo < hi) {
                        int64_t mid = lo + (hi - lo + 1) / 2;

                        if (ts_step_stage_layers(r, mid) == big)
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
            for (k = 0; k < nk; k++) {
                int64_t si = idx[k];
                double nl = (double)ts_step_stage_layers(r, si);
                double f = nl * ly.fwd + (si == stages - 1 ? head_f : 0);
                double bk = nl * ly.bwd + (si == stages - 1 ? head_b : 0);
                double rec = 0, tp, cp, ep, t_mb;

                if (r->recompute == TS_RECOMPUTE_FULL)
                    rec = nl * (ly.fwd + ly.tp_fwd + ly.ep_fwd);
                else if (r->recompute == TS_RECOMPUTE_SELECTIVE)
                    rec = nl * ly.attn_fwd;
                tp = nl * ly.tp_exposed + (si == stages - 1 ? head_tp : 0);
                cp = nl * ly.cp_exposed;
                ep = nl * ly.ep;
                t_mb = f + bk + rec + tp + cp + ep;
                t_mb_sum += (double)cnt[k] * t_mb;
                if (t_mb > t_mb_max) {
                    t_mb_max = t_mb;
                    fwd_max = f;
                    bwd_max = bk;
                    comp_max = f + bk;
                    /* Full recompute's redone collectives count as TP/EP time. */
                    if (r->recompute == TS_RECOMPUTE_FULL) {
                        rec_max = nl * ly.fwd;
                        tp_max = tp + nl * ly.tp_fwd;
                        ep_max = ep + nl * ly.ep_fwd;
                    } else {
                        rec_max = rec;
                        tp_max = tp;
                        ep_max = ep;
                    }
                    cp_max = cp;
                    tp_hid_max = nl * ly.tp_hidden;
                    cp_hid_max = nl * ly.cp_hidden;
                    hidden = nl * (ly.tp_hidden + ly.cp_hidden);
                    short_max = nl * short_layer + (si == stages - 1 ? short_head : 0);
                }
            }
        }
        layer_mb = t_mb_max;
        /* Pipeline point-to-point: one activation each way per
         * micro-batch per stage boundary; across nodes when a stage fills
         * a node.  Each TP rank sends 1/t of it: with SP the activation is
         * already split; without SP Megatron-LM splits it into t chunks,
         * one per rank and its own NIC, and the receiving stage
         * all-gathers them over NVLink (scatter/gather optimisation,
         * Narayanan et al. 2021 Sec. 4.1; on by default since
         * NVIDIA/Megatron-LM@72e4230bb5, megatron/p2p_communication.py
         * @7fccd6a17a split_tensor_into_1d_equal_chunks /
         * gather_split_1d_tensor).  Megatron-Core's p2p
         * (megatron/core/pipeline_parallel/p2p_communication.py) sends
         * the whole tensor from every rank instead: not distinguished. */
        if (r->pp > 1) {
            int64_t span = r->tp * r->cp * r->dp;
            bool in_node = ts_step_same_node(span * 2, r->gpus_per_node);
            bool sg = !r->sequence_parallel && r->tp > 1 && r->framework == TS_FW_MEGATRON;
            double full = (double)r->seq * (double)r->micro_batch / (double)r->cp *
                          (double)r->model.hidden * 2.0;
            double act = full / (r->sequence_parallel || sg ? (double)r->tp : 1.0);
            double one =
                act / (in_node ? hw.nvlink : hw.net) +
                (in_node ? TS_STEP_ALPHA_NVLINK : TS_STEP_ALPHA_NET) +
                (sg ? ts_step_allgather_s(full, r->tp, hw.nvlink, TS_STEP_ALPHA_NVLINK) : 0);

            if (r->vpp > 1)
                /* Interleaved: Megatron overlaps p2p with compute
                 * (--overlap-p2p-communication) but for the warm-up. */
                p2p = 2.0 * (double)(r->pp - 1) * one;
            else
                p2p = 2.0 * (m + (double)(r->pp - 1)) * one;
        }
        bubble = (double)(r->pp - 1) / (double)r->vpp * (t_mb_sum / (double)stages);
        out->compute = m * comp_max;
        out->recompute = m * rec_max;
        out->tp_comm = m * (tp_max + TS_STEP_KAPPA * tp_hid_max);
        out->cp_comm = m * (cp_max + TS_STEP_KAPPA * cp_hid_max);
        out->ep_comm = m * ep_max;
        out->pp_p2p = p2p;
        out->pp_bubble = bubble + p2p;
        /* Forward and backward GEMMs of the slowest stage; recompute's
         * redone forward is left out (a lower bound). */
        out->underfill = short_max > 0 ? m * short_max : 0;
        hidden *= m;
        (void)layer_mb;
    } else {
        /* No shape: matmul-bound 6 P per token (+2 P with full recompute)
         * at the catalogue matmul fraction, nothing else resolvable. */
        double per_gpu_tok = tokens_step / gpus;

        fwd_max = 2.0 * p->active * per_gpu_tok / (hw.peak * hw.core) / m;
        bwd_max = 2.0 * fwd_max;
        out->compute = m * (fwd_max + bwd_max);
        out->recompute = r->recompute == TS_RECOMPUTE_FULL ? m * fwd_max : 0;
        hw.gemm_flops = 6.0 * p->active * per_gpu_tok;
        hw.gemm_ideal = out->compute;
    }

    /* Data parallel over dp*cp ranks.  Inside a node when the group fits
     * one; otherwise every GPU's own NIC carries its share, and the k
     * ranks a node holds split the ring into k channels (NCCL). */
    {
        int64_t span = r->tp * r->cp * r->dp;
        int64_t per_node = r->gpus_per_node / (r->tp * r->cp);
        double bw_dp, al;
        double ag_w, rs_g, ar, nl, ag_l, rs_l, f_l, b_l;

        in_node_dp = ts_step_same_node(span, r->gpus_per_node);
        if (per_node < 1)
            per_node = 1;
        if (per_node > n_dp_i)
            per_node = n_dp_i;
        bw_dp = in_node_dp ? hw.nvlink
                           : ((double)per_node * hw.net < hw.nvlink ? (double)per_node * hw.net
                                                                    : hw.nvlink);
        al = in_node_dp ? TS_STEP_ALPHA_NVLINK : TS_STEP_ALPHA_NET;
        ag_w = ts_step_allgather_s(P_gather_b, n_dp_i, bw_dp, al);
        rs_g = ts_step_allgather_s(P_train * gb, n_dp_i, bw_dp, al);
        ar = ts_step_allreduce_s(P_train * gb, n_dp_i, bw_dp, al);
        stage_factor = out->from_shape ? (double)ts_step_stage_layers(r, 0) : 1.0;
        if (stage_factor < 1)
            stage_factor = 1;
        /* One layer's collectives and compute, for FSDP's per-layer schedule. */
        nl = stage_factor;
        ag_l = ts_step_allgather_s(P_gather_b / nl, n_dp_i, bw_dp, al);
        rs_l = ts_step_allgather_s(P_train * gb / nl, n_dp_i, bw_dp, al);
        f_l = fwd_max / nl;
        b_l = bwd_max / nl;

        if (r->optimizer == TS_OPT_NONE || n_dp_i <= 1) {
            /* nothing to reduce */
        } else if (r->zero >= 3) {
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
            double b_need = ag_l + rs_l;
            double f_exp = (nl - 1) * (ag_l > f_l ? ag_l - f_l : 0) + ag_l;
            double b_exp = (nl - 1) * (b_need > b_l ? b_need - b_l : 0) + b_need;

            dp_exposed = m * (f_exp + b_exp);
            dp_hidden = m * nl * (ag_l + b_need) - dp_exposed;
        } else if (r->framework == TS_FW_MEGATRON) {
            /* Distributed optimizer (zero >= 1): RS grads + AG params;
             * zero 0: all-reduce.  Overlapped with the last backward /
             * first forward. */
            double red = r->zero >= 1 ? rs_g : ar;
            double gat = r->zero >= 1 ? ag_w : 0;
            double e1 = red > bwd_max ? red - bwd_max : 0;
            double e2 = gat > fwd_max ? gat - fwd_max : 0;
            /* The last bucket cannot overlap (Megatron's default buckets
             * are ~40M params: a small share of any large model). */
            double tail = (red + gat) / stage_factor;

            dp_exposed = e1 + e2 + tail;
            dp_hidden = red + gat - dp_exposed;
        } else {
            /* DeepSpeed ZeRO-1/2 (and FSDP SHARD_GRAD_OP): grads reduced
             * under backward (ZeRO-2 every micro-batch, ZeRO-1 once), the
             * updated weights all-gathered after the step, exposed. */
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
        }
        if (dp_hidden < 0)
            dp_hidden = 0;
    }
    /* FP8 delayed scaling: at the end of every forward and backward TE
     * all-reduces the amax history of all its tensors in one fused
     * buffer over the data- and model-parallel group
     * (transformer_engine/pytorch/fp8.py@v1.12,
     * reduce_and_update_fp8_tensors): a few kilobytes, latency-bound. */
    if (fp8) {
        int64_t grp = r->dp * r->tp * r->cp;
        bool in_node = ts_step_same_node(grp * r->pp, r->gpus_per_node);

        dp_exposed += m * 2.0 *
                      ts_step_allreduce_s(4096.0, grp, in_node ? hw.nvlink : hw.net,
                                          in_node ? TS_STEP_ALPHA_NVLINK : TS_STEP_ALPHA_NET);
    }
    /* Contention charge for everything hidden (DP here, TP/CP below). */
    out->dp_comm = dp_exposed + TS_STEP_KAPPA * dp_hidden;

    /* Optimizer step: memory-bound over this GPU's shard of the states. */
    {
        double shard = r->zero >= 1 ? P_train / n_dp : P_train;

        t_opt = r->offload_optimizer ? 0 : shard * ts_step_opt_bytes(r, gb) / hw.mem;
        if (r->offload_optimizer) {
            /* Grads down and weights up over PCIe, Adam on the host. */
            t_off =
                shard * (gb + wb) / hw.pcie + shard * ts_step_opt_bytes(r, gb) / TS_STEP_HOST_BW;
        }
        if (r->offload_params) {
            /* ZeRO-Infinity streams every weight shard in before forward
             * and backward of each micro-batch. */
            t_off += m * 2.0 * (P_gpu / n_dp) * wb / hw.pcie;
        }
    }
    out->optimizer = t_opt;
    out->offload = t_off;

    out->exposed_comm = out->tp_comm + out->cp_comm + out->ep_comm + out->pp_p2p + out->dp_comm;
    out->overlapped_comm = hidden + dp_hidden;
    total = out->compute + out->recompute + out->tp_comm + out->cp_comm + out->ep_comm +
            out->pp_bubble + out->dp_comm + out->optimizer + out->offload;
    out->gemm_efficiency = hw.gemm_ideal > 0 ? hw.gemm_flops / (hw.gemm_ideal * hw.peak) : 0;

    /* MFU basis: the compute estimate's own (6 P_active per token, plus
     * PaLM's 12 L h s when attention_flops is set). */
    basis = 6.0 * p->active;
    if (r->attention_flops && out->from_shape)
        basis += 12.0 * (double)r->model.layers * (double)r->model.hidden * (double)r->seq;
    out->model_flops = basis * tokens_step;
    out->mfu_convention =
        r->attention_flops
            ? "(6 P_active + 12 L h s) per token (PaLM: attention non-causal, no recompute credit)"
            : "6 P_active per token (Kaplan: attention matmuls and recompute not credited)";
    if (!(total > 0) || !isfinite(total))
        return TS_ERANGE;
    out->predicted_mfu = out->model_flops / (total * gpus * hw.peak);
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
