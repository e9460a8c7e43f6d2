/*
 * ts_step_kernel.c - the step-time model's kernels: one GEMM's additive
 * roofline at the run's rates (ts_step.c's header has the model), a
 * frozen and possibly quantised base weight's GEMMs and dequantisation
 * (LoRA / QLoRA), and the bytes the FP8 casts and the cross-entropy
 * move.
 */
#include "ts_step_int.h"

/* Fallback for a custom GPU with no MAMF figure. */
#define TS_STEP_MAMF_DEFAULT 0.7
/* No CUDA-version term: the FlashAttention-3 remark that Ampere-style
 * mma.sync reaches ~2/3 of Hopper's peak is about hand-written kernels;
 * llm-foundry's own logs show cuBLAS under CUDA 11.8 as fast as under
 * 12.1 on H100 (scripts/train/benchmarking/h100old.csv vs h100new.csv
 * @beb8dee69: 33 runs of the same configs, +0 to +4 %, median +2 %). */

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

/* One GEMM at the run's achieved rates: inputs at the compute
 * precision's width, the output in bf16. */
static double ts_step_gemm_at(double m, double n, double k, const ts_step_hw *hw)
{
    return 2.0 * m * n * k / (hw->peak * hw->core) +
           (hw->opb * (m * k + k * n) + 2.0 * m * n) / hw->mem;
}

/* One train metric (Composer's LanguageCrossEntropy / LanguagePerplexity:
 * torch.nn.CrossEntropyLoss(reduction='sum') over the logits, composer
 * metrics/nlp.py@v0.16.3), no gradient, under the trainer's bf16
 * autocast, which runs log_softmax in fp32: the cast (read 2, write 4),
 * then log_softmax over a vocabulary row too long for one block's shared
 * memory reads the row for its maximum, again for its sum of
 * exponentials and again to write the fp32 result (4 + 4 + 4 + 4);
 * nll_loss reads one element a row.  22 B per logit. */
double ts_step_metric_bytes(double logits)
{
    return logits * (2.0 + 4.0 + 4.0 + 4.0 + 4.0 + 4.0);
}

/* ---- frozen and quantised weights (LoRA's base) ------------------ */

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
 *     (2 + 2), 10 B per weight.
 *   fp8 (Transformer Engine Float8Tensor weights) under bf16 matmuls: each
 *     pass reads 1 B and writes 2 B per weight.  Under FP8 matmuls the
 *     weight is read as it is (ts_step_rates leaves no dequantisation).
 *   gptq: auto-gptq's QuantLinear (qlinear_cuda_old, the class
 *     dynamically_import_QuantLinear picks without exllama for desc_act
 *     False; auto_gptq@v0.4.2 and v0.5.1 alike) runs its CUDA kernel only
 *     below kernel_switch_threshold (128) input rows; a training
 *     micro-batch dequantises in plain torch ops and then calls
 *     torch.matmul: the right shift of the broadcast qweight (read 0.5,
 *     write int32 4), the cast to int8 (4 + 1), the mask (1 + 1), the
 *     zeros subtracted (1 + 1) and the fp16 scales multiplied (1 + 2):
 *     16.5 B per weight, nine kernels with the zeros' own four.  Autograd
 *     keeps the fp16 weight for the input's gradient, so backward
 *     dequantises nothing (ts_mem_states.c counts the kept weight).
 * Each with the kernels it launches a pass: one dequantisation for nf4
 * and fp8. */
typedef struct ts_step_dq {
    double fwd, bwd; /* bytes */
    double kf, kb;   /* kernels launched */
} ts_step_dq;

static ts_step_dq ts_step_dequant(ts_quant q, double params, double in_el, double out_el)
{
    ts_step_dq d = { 0, 0, 0, 0 };

    if (q == TS_QUANT_NF4 || q == TS_QUANT_FP8) {
        d.fwd = d.bwd = params * (ts_quant_bytes(q) + 2.0);
        d.kf = d.kb = 1.0;
    } else if (q == TS_QUANT_INT8) {
        d.fwd = 6.0 * in_el + 8.0 * out_el;
        d.bwd = 4.0 * out_el + 10.0 * params;
        d.kf = 3.0; /* double_quant, transform, mm_dequant */
        d.kb = 5.0; /* the gradient's double_quant, undo_layout x 2, cast, scale */
    } else if (q == TS_QUANT_GPTQ) {
        d.fwd = params * (0.5 + 4.0 + 4.0 + 1.0 + 1.0 + 1.0 + 1.0 + 1.0 + 1.0 + 2.0);
        d.kf = 9.0;
    }
    return d;
}

void ts_step_dequant_bytes(ts_quant q, double params, double in_el, double out_el, double *fwd,
                           double *bwd)
{
    ts_step_dq d = ts_step_dequant(q, params, in_el, out_el);

    *fwd = d.fwd;
    *bwd = d.bwd;
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
    ts_step_dq d = ts_step_dequant(hw->quant, n * k, m * k, m * n);

    hw->gemm_flops += 4.0 * m * n * k * count;
    hw->gemm_ideal += f + b;
    f += count * d.fwd / hw->mem;
    b += count * d.bwd / hw->mem;
    hw->xops_f += count * d.kf;
    hw->xops_b += count * d.kb;
    *fwd += f;
    *bwd += b;
}

/* Forward GEMM, and its two backward GEMMs (dgrad M x K x N, wgrad K x N x M).
 * A frozen weight (LoRA's base) has only the first two. */
void ts_step_gemm3(ts_step_hw *hw, double m, double n, double k, double count, double *fwd,
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
 *   weights:  wcast, the bytes the caller's weights take (ts_step_fp8_wcast),
 *             per micro-batch.
 * The work is memory-bound: per token it is ~4 (h + N) bytes against
 * ~6 h N FLOPs of the GEMMs, so its share falls as 1/h and dominates
 * small hidden sizes. */
void ts_step_fp8_cast(double tok, double h, double F, double t, double kv_dim, bool gated,
                      double top_k, double wcast, double *fwd, double *bwd)
{
    double fc1 = (gated ? 2.0 : 1.0) * F / t;
    double in_el = tok * (h + h / t) + top_k * tok * (h + F / t); /* QKV, out, FC1, FC2 inputs */
    double out_el =
        tok * (h / t + 2.0 * kv_dim + h) + top_k * tok * (fc1 + h); /* their outputs' grads */

    *fwd = 4.0 * in_el + wcast;
    *bwd = 4.0 * out_el;
}

/* Bytes Transformer Engine moves to make P_l weights usable by FP8 GEMMs,
 * per step (ROCm/TransformerEngine@ac80527 module/linear.py 979-1011):
 *   16-bit weights: cast to an FP8 workspace, read 2 B, write 1 B, and
 *             1 B more for its transpose where FP8 GEMMs are TN only
 *             (ts_gpu_fp8_tn_only);
 *   FP8 parameters (Float8Tensor): no cast (the optimizer writes them,
 *             in its own step term); on TN-only GPUs the transpose cache
 *             is filled, read 1 B, write 1 B;
 *   a frozen FP8 base (LoRA): nothing here.
 * Redone every micro-batch unless the caller says which micro-batch is the
 * first (is_first_microbatch: Megatron-Core passes it, so once a step). */
double ts_step_fp8_wcast(bool fp8_params, bool frozen_fp8, bool tn_only, double P_l)
{
    if (frozen_fp8)
        return 0.0;
    if (fp8_params)
        return tn_only ? 2.0 * P_l : 0.0;
    return (tn_only ? 4.0 : 3.0) * P_l;
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
 * the step (MPT-125M: V 50,368 against h 768).  flash-attn's fused kernel
 * (flash_attn/ops/triton/cross_entropy.py@058ad35a) reads each bf16 logit
 * once forward (an online log-sum-exp over column blocks) and once
 * backward, where it writes the bf16 gradient: 2 B and 4 B. */
void ts_step_loss_bytes(ts_loss_impl impl, double logits, double *fwd, double *bwd)
{
    if (impl == TS_LOSS_FUSED) {
        *fwd = logits * 2.0;
        *bwd = logits * (2.0 + 2.0);
        return;
    }
    *fwd = logits * (2.0 + 4.0 + 4.0 + 8.0 + 8.0 + 4.0 + 8.0);
    *bwd = logits * (8.0 + 4.0 + 2.0);
}
