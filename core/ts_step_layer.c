/*
 * ts_step_layer.c - one transformer layer and the output head, one
 * micro-batch on one GPU, kernel by kernel: the linears' GEMMs (a LoRA
 * run's frozen base and its adapters), the attention core, memory-bound
 * elementwise work, weight-sized traffic, the launch floor; the layer's
 * collectives are ts_step_comm.c's.  ts_step.c's header has the model.
 */
#include "ts_step_int.h"

#include <math.h>

/* FlashAttention's backward does 2.5x the forward's FLOPs (it recomputes
 * the scores; Dao 2023, Sec. 3.1); the catalogue fraction is in that count. */
#define TS_STEP_FA_BWD 2.5
/* attention "triton" is flash-attn's own Triton kernel as llm-foundry
 * runs it (attn_impl: triton, llmfoundry/models/layers/flash_attn_triton.py
 * @beb8dee69, copied from flash_attn/flash_attn_triton.py@eff9fe6b, v1.0.5),
 * whose docstring finds its forward + backward "slightly slower" than the
 * CUDA FlashAttention of the day (FlashAttention-1).  FlashAttention-2
 * yields "around 2x speedup compared to FlashAttention" (Dao 2023,
 * abstract; 1.7-3.0x over its benchmark's configurations, Sec. 4.1, A100),
 * so the kernel runs at the catalogue (FA2) fraction over 2, "slightly
 * slower" not counted.  The paper's "1.3-2.5x faster than FlashAttention
 * in Triton" is another kernel, OpenAI's triton.ops.flash_attention (the
 * paper's benchmark script, benchmarks/benchmark_flash_attention.py
 * @60499abc, imports it). */
#define TS_STEP_TRITON_SLOWDOWN 2.0
/* Host launch floor: a GPU kernel cannot start before the host has
 * launched it, so a layer whose kernels are shorter than their launches
 * runs at the launch rate.  NVIDIA measures back-to-back launches of a
 * ~3 us kernel at 3.8 us each ("Getting Started with CUDA Graphs",
 * developer.nvidia.com/blog/cuda-graphs); PyTorch's eager dispatcher adds
 * its own per-op time on top, so 5 us per modelled kernel is a floor. */
#define TS_STEP_LAUNCH_S 5e-6
/* Host time per kernel of Megatron's legacy Python layer (Megatron-LM's
 * and Megatron-DeepSpeed's ParallelTransformerLayer with the fused
 * softmax: autograd Functions around each parallel linear, the RNG
 * tracker's fork around each dropout, checkpointing that saves RNG
 * states).  Measured on vTrain's A100 hosts, not derived: the median step
 * per layer and micro-batch of the one-node main-part runs at hidden
 * 1,024, micro-batch 1, PP 1, TP 1-4 (the least GPU work per layer the
 * runs have) is 3.60 ms over 52 modelled kernels (scripts/vtrain-rows.py
 * floor, which the vtrain-rows test checks against this value). */
#define TS_STEP_HOST_MEGATRON_EAGER_S 69e-6

/* ---- LoRA adapters ----------------------------------------------- */

/* The adapter pair of one adapted matrix (in k, out n) over m tokens:
 * A (k -> rank) and B (rank -> n) are thin GEMMs, forward and both
 * backward GEMMs each (they train); the GEMM roofline (ts_step_kernel.c)
 * makes them bandwidth-bound at small ranks.  PEFT's LoRA Linear.forward adds
 * lora_B(lora_A(dropout(x))) * scaling to the base output (peft@5fe7f8f8
 * tuners/lora/layer.py, Linear.forward): the scale (read 2n, write 2n)
 * and the out-of-place add (read 4n, write 2n) per token; backward scales
 * the gradient (4n) and autograd sums the two input gradients, base dgrad
 * and A's (read 4k, write 2k).  With fp32 adapters (hf's default,
 * adapter_precision) the input is cast to their dtype first
 * (_cast_input_dtype: read 2k, write 4k; its backward casts the
 * gradient back, 6k).  lora_dropout > 0 adds one
 * kernel each way over the adapter's input, drop elements per token
 * (k, or its sequence shard under Megatron's sequence parallel: the
 * adapter drops before gathering, ts_mem_act.c): native dropout reads
 * the input and writes the dropped copy and a 1-byte mask, its backward
 * reads the gradient and the mask and writes the input's gradient, fp32
 * with fp32 adapters (4 + 4 + 1 B each way), bf16 otherwise (2 + 2 + 1).
 * lora_impl automodel: NeMo AutoModel's LinearLoRA.forward returns
 * res + dropout(lora_B(lora_A(x) * scale)) (nemo_automodel/components/
 * _peft/lora.py@507bfb751 lines 207-216; TritonLinearLoRA's fused kernel
 * scales inside it too): the scale runs on the rank-wide product, so of
 * the output-wide work only the add stays forward (6n) and nothing
 * backward but the input grads' sum (6k), and a dropout drops the output
 * (n wide), not the input. */
static void ts_step_adapter(const ts_run *r, ts_step_hw *hw, double m, double n, double k,
                            double drop, double count, double *fwd, double *bwd)
{
    double rank = (double)r->lora_rank;
    bool fp32 = ts_run_adapters_fp32(r);
    bool am = r->lora_impl == TS_LORA_IMPL_AUTOMODEL;
    double cast = fp32 ? 6.0 * k : 0.0;
    double dr = r->lora_dropout > 0 ? (fp32 ? 9.0 : 5.0) * (am ? n : drop) : 0.0;
    ts_step_hw a = *hw;

    a.frozen = false;
    ts_step_gemm3(&a, m, rank, k, count, fwd, bwd);
    ts_step_gemm3(&a, m, n, rank, count, fwd, bwd);
    hw->gemm_flops = a.gemm_flops;
    hw->gemm_ideal = a.gemm_ideal;
    *fwd += count * m * ((am ? 6.0 : 10.0) * n + cast + dr) / hw->mem;
    *bwd += count * m * ((am ? 0.0 : 4.0 * n) + 6.0 * k + cast + dr) / hw->mem;
    hw->xops_f += count * (4.0 + (cast > 0 ? 1.0 : 0.0) + (dr > 0 ? 1.0 : 0.0));
    hw->xops_b += count * (6.0 + (cast > 0 ? 1.0 : 0.0) + (dr > 0 ? 1.0 : 0.0));
}

/* Every adapter of one layer on one GPU (its tp slice): q, k, v (or the
 * fused qkv), o, gate, up, down as lora_targets says; a two-matrix MLP
 * has no gate (core/ts_lora.c).  MoE: each local expert's MLP matrices
 * over its tokens. */
static void ts_step_lora_layer(const ts_run *r, ts_step_hw *hw, const ts_step_shape *sh,
                               double mlp_tok, double mlp_count, double *fwd, double *bwd)
{
    const ts_model *md = &r->model;
    unsigned tg = r->lora_targets;
    double t = sh->t, h = sh->h, tok = sh->tok, kv_dim = sh->kv_gpu * sh->qk;
    double F = sh->moe ? sh->Fe : sh->F;
    /* The column-parallel adapters' input: the sequence shard under
     * Megatron's sequence parallel (t = 1 leaves it whole). */
    double hd = r->sequence_parallel ? h / t : h;

    if (tg & TS_LORA_Q)
        ts_step_adapter(r, hw, tok, sh->qw, h, hd, 1, fwd, bwd);
    if (tg & TS_LORA_K)
        ts_step_adapter(r, hw, tok, kv_dim, h, hd, 1, fwd, bwd);
    if (tg & TS_LORA_V)
        ts_step_adapter(r, hw, tok, sh->kv_gpu * sh->vd, h, hd, 1, fwd, bwd);
    if (tg & TS_LORA_QKV)
        ts_step_adapter(r, hw, tok, sh->qkv, h, hd, 1, fwd, bwd);
    if (tg & TS_LORA_O)
        ts_step_adapter(r, hw, tok, h, sh->ow, sh->ow, 1, fwd, bwd);
    if (md->gated && (tg & TS_LORA_GATE))
        ts_step_adapter(r, hw, mlp_tok, F / t, h, hd, mlp_count, fwd, bwd);
    if (tg & TS_LORA_UP)
        ts_step_adapter(r, hw, mlp_tok, F / t, h, hd, mlp_count, fwd, bwd);
    if (tg & TS_LORA_DOWN)
        ts_step_adapter(r, hw, mlp_tok, h, F / t, F / t, mlp_count, fwd, bwd);
}

/* Adapter parameters of one layer on one GPU: the tp slice of
 * ts_lora_layer_params (the count ts_memory.c uses); experts' adapters
 * split over ep with their experts. */
double ts_step_lora_layer_params(const ts_run *r)
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
        ts_step_adapter(&r, &hw, m, n, k, k, 1, fwd, bwd);
}

/* Elementwise bytes an eager PyTorch layer moves beyond the fused kernels
 * counted in ts_step_layer_cost, forward, per micro-batch: the layer as
 * Hugging Face transformers writes it (src/transformers/models/llama/
 * modeling_llama.py@00227283, the modules ts_mem_act.c's eager
 * activations follow) and as torchtitan does without torch.compile
 * (torchtitan/models/llama/model.py and models/norms.py RMSNorm@9dec370,
 * op for op the same; layer_impl eager, by default under hf and fsdp, the
 * frameworks ts_mem_act.c keeps eager tensors for):
 *   RMSNorm (8 kernels where a fused norm is 1): to fp32 (read 2, write
 *     4), pow (4 + 4), mean (read 4), + eps and rsqrt on the row's scalar,
 *     scale by rsqrt (4 + 4), back to bf16 (4 + 2), times the weight
 *     (2 + 2): 36 B per element where one fused norm moves 4: +32, twice;
 *     nn.LayerNorm is one native kernel, as fused;
 *   rotary on q and k (none with learned positions, pos_embeddings):
 *     transformers' q * cos (2 + 2), rotate_half's negated half (1 + 1)
 *     and cat (2 + 2), * sin (2 + 2), the sum (4 + 2); torchtitan's
 *     complex product reads bf16 into fp32 (2 + 4), multiplies (4 + 4)
 *     and casts back (4 + 2): 20 B per element against the fused 4, +16;
 *   SwiGLU: act_fn(gate) * up as two kernels, silu (2 + 2) and the
 *     product (4 + 2): 10 B per F element against the fused 6: +4;
 *   repeat_kv (grouped K/V expanded to every head for SDPA): read the kv
 *     width, write the full width, K and V;
 *   the attention output made contiguous for o_proj (2 + 2 per element).
 * Backward moves about twice that, as for the fused kernels.  Each
 * unfused piece is a kernel of its own: 7 more launches a norm, 6 for the
 * rotary (torchtitan's 3 a tensor; transformers' 5 a tensor less the fused
 * one's), 1 for the SwiGLU and 1 for the copy (22 a pass; +2 for
 * repeat_kv).
 * liger_kernels: Liger Kernel (liger_kernel@v0.6.3, d5648bfe) swaps the
 * norms, rotary and SwiGLU for one Triton kernel each, the traffic the
 * fused kernels above already carry: LigerRMSNormFunction reads x and
 * writes y (ops/rms_norm.py), rope_forward rotates q and k in place
 * (ops/rope.py; the transposes back to the physical layout make the
 * contiguous() calls no-ops), LigerSiLUMulFunction reads gate and up and
 * writes their product (ops/swiglu.py).  Only repeat_kv and the
 * contiguous copy stay. */
static double ts_step_eager(const ts_run *r, const ts_step_shape *sh, double F, double k_mlp,
                            ts_step_hw *hw)
{
    const ts_model *md = &r->model;
    double h = sh->h, q_dim = sh->qw, kv_dim = sh->kv_gpu * sh->qk;
    bool gqa = kv_dim < q_dim;
    bool rms = r->norm != TS_NORM_LAYERNORM && !r->liger_kernels;
    bool rope = md->pos_embeddings == 0 && !r->liger_kernels;
    bool glu = md->gated && !r->liger_kernels;
    /* The norms run on the sequence shard under Megatron-style SP
     * (tok_h), as the fused norms do; the rest on the whole micro-batch
     * at the rank's share of heads and F. */
    /* qk_norm's two RMSNorms are the same eager module (Qwen3RMSNorm)
     * over q and k: +32 B an element, 7 more kernels each. */
    bool qkn = md->qk_norm && !r->liger_kernels;
    double b =
        sh->tok_h * (rms ? 2.0 * 32.0 * h : 0.0) +
        sh->tok * ((qkn ? 32.0 * (q_dim + kv_dim) : 0.0) + (rope ? 16.0 * (q_dim + kv_dim) : 0.0) +
                   (glu ? 4.0 * k_mlp * F / sh->t : 0.0) +
                   (gqa ? 2.0 * (2.0 * kv_dim + 2.0 * q_dim) : 0.0) + 4.0 * q_dim);
    double ops = (rms ? 14.0 : 0.0) + (qkn ? 14.0 : 0.0) + (rope ? 6.0 : 0.0) + (glu ? 1.0 : 0.0) +
                 (gqa ? 2.0 : 0.0) + 1.0;

    hw->xops_f += ops;
    hw->xops_b += ops;
    return b;
}

/* ---- one layer --------------------------------------------------- */

/* The layer's sizes on this GPU (its tp, cp and ep shares). */
static void ts_step_shape_of(const ts_run *r, ts_step_shape *sh)
{
    const ts_model *md = &r->model;

    sh->t = (double)r->tp;
    sh->c = (double)r->cp;
    sh->e = (double)r->ep;
    sh->s = (double)r->seq;
    sh->b = (double)r->micro_batch;
    sh->h = (double)md->hidden;
    sh->a = (double)md->heads;
    sh->kv = (double)(md->kv_heads > 0 ? md->kv_heads : md->heads);
    sh->F = (double)(md->ffn > 0 ? md->ffn : 4 * md->hidden);
    /* Per-head widths as ts_model_count has them: an explicit head_dim
     * (Gemma, Qwen3: a head_dim > h), else h / a; MLA's q and k are
     * nope + rope wide and v v_head_dim (DeepSeek-V2 section 2.1). */
    sh->mla = md->kv_lora_rank > 0;
    sh->qk = sh->mla            ? (double)(md->qk_nope_dim + md->qk_rope_dim)
             : md->head_dim > 0 ? (double)md->head_dim
                                : sh->h / sh->a;
    sh->vd = !sh->mla             ? sh->qk
             : md->v_head_dim > 0 ? (double)md->v_head_dim
                                  : (double)md->qk_nope_dim;
    sh->qw = sh->a * sh->qk / sh->t;
    sh->ow = sh->a * sh->vd / sh->t;
    sh->moe = md->experts > 1;
    sh->Fe = sh->moe && md->moe_ffn > 0 ? (double)md->moe_ffn : sh->F;
    sh->S = sh->moe ? (double)md->shared_experts : 0.0;
    sh->mlp_n = sh->moe ? (double)(md->top_k > 0 ? md->top_k : 1) + sh->S : 1.0;
    /* The layer's attention weights without biases (h (q + k + v) +
     * o h); MLA's down and up projections as ts_model_count has them. */
    sh->attn_p =
        sh->mla ? ts_model_attn_params(md)
                : sh->h * (sh->a * sh->qk + sh->kv * (sh->qk + sh->vd)) + sh->a * sh->vd * sh->h;
    sh->tok = sh->s * sh->b / sh->c;
    sh->kv_gpu = sh->kv / sh->t > 1.0 ? sh->kv / sh->t : 1.0;
    sh->qkv = sh->qw + sh->kv_gpu * (sh->qk + sh->vd);
    sh->tok_h = r->sequence_parallel || r->tp == 1 ? sh->tok / sh->t : sh->tok;
}

/* The attention projections.  MLA (Megatron-Core MLASelfAttention,
 * megatron/core/transformer/multi_latent_attention.py): the down
 * projections to the q and kv latents are duplicated on every TP rank,
 * the up projections and the output split over heads. */
static void ts_step_attn_gemms(const ts_run *r, ts_step_hw *hw, const ts_step_shape *sh, double *f,
                               double *bw)
{
    const ts_model *md = &r->model;
    double t = sh->t, h = sh->h, tok = sh->tok;

    if (sh->mla) {
        double qr = (double)md->q_lora_rank, kvr = (double)md->kv_lora_rank;
        double nope = (double)md->qk_nope_dim, rope = (double)md->qk_rope_dim;

        if (qr > 0) {
            ts_step_gemm3(hw, tok, qr, h, 1, f, bw);
            ts_step_gemm3(hw, tok, sh->qw, qr, 1, f, bw);
        } else {
            ts_step_gemm3(hw, tok, sh->qw, h, 1, f, bw);
        }
        ts_step_gemm3(hw, tok, kvr + rope, h, 1, f, bw);
        ts_step_gemm3(hw, tok, sh->a * (nope + sh->vd) / t, kvr, 1, f, bw);
    } else {
        ts_step_gemm3(hw, tok, sh->qkv, h, 1, f, bw);
    }
    ts_step_gemm3(hw, tok, h, sh->ow, 1, f, bw);
}

/* The layer's linears: attention projections, the MLP (or the router
 * and the local experts), and their LoRA adapters. */
static void ts_step_layer_gemms(const ts_run *r, ts_step_hw *hw, const ts_step_shape *sh,
                                double *fp, double *bp, double *down_f)
{
    const ts_model *md = &r->model;
    double t = sh->t, e = sh->e, h = sh->h, F = sh->F, Fe = sh->Fe, S = sh->S;
    double tok = sh->tok;
    bool moe = sh->moe;
    double f = *fp, bw = *bp;

    ts_step_attn_gemms(r, hw, sh, &f, &bw);

    /* MLP: dense, or top_k of E experts spread over ep GPUs, each moe_ffn
     * wide, and the shared experts every token passes (split over tp like
     * a dense MLP). */
    if (moe) {
        double E = (double)md->experts, k = (double)(md->top_k > 0 ? md->top_k : 1);
        double per_expert = tok * k * e / E; /* tokens each local expert sees */
        double local = E / e;

        ts_step_gemm3(hw, tok, E, h, 1, &f, &bw); /* router */
        ts_step_gemm3(hw, per_expert, (md->gated ? 2.0 : 1.0) * Fe / t, h, local, &f, &bw);
        ts_step_gemm3(hw, per_expert, h, Fe / t, local, &f, &bw);
        if (S > 0) {
            ts_step_gemm3(hw, tok, (md->gated ? 2.0 : 1.0) * S * Fe / t, h, 1, &f, &bw);
            ts_step_gemm3(hw, tok, h, S * Fe / t, 1, &f, &bw);
        }
    } else {
        double before;

        ts_step_gemm3(hw, tok, (md->gated ? 2.0 : 1.0) * F / t, h, 1, &f, &bw);
        before = f;
        ts_step_gemm3(hw, tok, h, F / t, 1, &f, &bw);
        *down_f = f - before;
    }

    /* LoRA adapters on the targeted matrices (the base linears above are
     * frozen: hw->frozen). */
    if (r->lora_rank > 0 && hw->frozen) {
        double kk = moe ? (double)(md->top_k > 0 ? md->top_k : 1) : 1.0;
        double E = moe ? (double)md->experts : 1.0;

        ts_step_lora_layer(r, hw, sh, moe ? tok * kk * e / E : tok, moe ? E / e : 1.0, &f, &bw);
    }
    *fp = f;
    *bp = bw;
}

/* Keys a query's scores cover, the mean over positions and layers.  A
 * sliding window's band is all flash computes (flash-attn skips the key
 * blocks outside it: ts_model_attn_span).  llm-foundry's Triton kernel
 * has no window: the causal half.  transformers hands torch's SDPA a
 * sliding layer's band as a dense mask, with is_causal off
 * (sdpa_attention_forward: is_causal only without a mask), which rules
 * out the flash backend (check_for_attn_mask): the memory-efficient
 * kernel computes every key of the square, s, on those layers. */
static double ts_step_attn_keys(const ts_run *r, double s)
{
    const ts_model *m = &r->model;
    double L = (double)m->layers, n;

    if (r->attention == TS_ATTN_FLASH)
        return ts_model_attn_span(m, s);
    /* transformers drops the mask (and sets is_causal) only while the
     * keys are fewer than the window (_ignore_causal_mask_sdpa's
     * local_attention_size): a window of s still takes the square. */
    n = ts_model_window_layers(m, s);
    if (r->attention != TS_ATTN_SDPA || !(n > 0))
        return s / 2.0;
    return ((L - n) * (s / 2.0) + n * s) / L;
}

/* The attention core, forward and backward. */
static void ts_step_attn_core(const ts_run *r, ts_step_hw *hw, const ts_step_shape *sh, double *fp,
                              double *bp)
{
    double t = sh->t, c = sh->c, s = sh->s, b = sh->b, a = sh->a;
    double tok = sh->tok;
    double attn_f, attn_b;

    if (r->attention != TS_ATTN_EAGER) {
        /* QK^T and AV: 2 s_kv (qk + vd) FLOPs per head and query token
         * (4 s_kv h / t when qk = vd = h / a), causal halves s_kv. */
        double kv = ts_step_attn_keys(r, s);
        double fl = 2.0 * tok * kv * (a / t) * (sh->qk + sh->vd);
        double fa = hw->attn / (r->attention == TS_ATTN_TRITON ? TS_STEP_TRITON_SLOWDOWN : 1.0);

        attn_f = fl / (hw->attn_peak * fa);
        attn_b = TS_STEP_FA_BWD * fl / (hw->attn_peak * fa);
    } else {
        /* Materialised scores: full s x s per head (the mask is applied
         * after the matmul, a sliding window's too), fused
         * scale-mask-softmax, optional dropout. */
        double heads = b * a / t, sq = s / c;
        double scores = heads * sq * s;                  /* elements */
        double pass = (r->dropout ? 9.0 : 4.0) * scores; /* bytes: r+w softmax, dropout r+w+mask */
        double fw = 0, bk = 0;
        ts_step_hw ah = *hw; /* the score matmuls run in bf16 under FP8 too */

        ah.peak = hw->attn_peak;
        ah.opb = 2.0;
        ah.frozen = false; /* activations on both sides: both grads */
        ts_step_gemm3(&ah, sq, s, sh->qk, heads, &fw, &bk);
        ts_step_gemm3(&ah, sq, sh->vd, s, heads, &fw, &bk);
        hw->gemm_flops = ah.gemm_flops;
        hw->gemm_ideal = ah.gemm_ideal;
        attn_f = fw + pass / hw->mem;
        attn_b = bk + (r->dropout ? 11.0 : 6.0) * scores / hw->mem;
    }
    *fp = attn_f;
    *bp = attn_b;
}

/* activation_func_fp8_input_store (Megatron-Core, fused_bias_swiglu.py
 * @d98e8a64): the SwiGLU's 2F-wide input is cast to float8_e4m3fn for
 * backward beside the fused kernel (read 2, write 1 per element) and cast
 * back before the SwiGLU backward (read 1, write 2).  Bytes of one cast;
 * 0 without the flag (or without a gated MLP, which ts_run_resolve
 * rejects with it). */
static double ts_step_act_fp8_bytes(const ts_run *r, const ts_step_shape *sh)
{
    if (!r->act_fp8_input_store || !r->model.gated)
        return 0.0;
    return sh->tok * 2.0 * (sh->Fe / sh->t) * sh->mlp_n * 3.0;
}

/* attention_unpad: llm-foundry's flash_attn_fn (llmfoundry/models/layers/
 * attention.py@5e85bd62d) runs flash-attn's bert_padding around the
 * varlen kernel every layer, padding or not (flash_attn/bert_padding.py
 * @v2.4.2).  Forward: unpad_input gathers q, k and v into new tensors
 * (torch.gather: read 2, write 2 per element; the index is a broadcast
 * view) after a mask sum, nonzero, max().item(), cumsum and pad, and
 * pad_input zero-fills the padded output and index-puts the kernel's
 * output into it (write 2, read 2, write 2).  Backward: the output grad
 * gathered back (read 2, write 2), and each of q, k, v a zeroed grad the
 * scatter_ writes into (write 2, read 2, write 2).  Not costed: the
 * host syncs of nonzero and item(), and the copies a GQA model's k, v get
 * from flash_attn_fn's repeat (should_repeat_kv_for_gqa; MPT is MHA).
 * Adds the forward's seconds to the layer and both ways' kernels to the
 * launch count; returns the backward's seconds (0 without the flag). */
static double ts_step_unpad(const ts_run *r, ts_step_hw *hw, const ts_step_shape *sh,
                            ts_step_layer *o)
{
    if (!r->attention_unpad)
        return 0.0;
    o->fwd += sh->tok * (4.0 * sh->qkv + 6.0 * sh->ow) / hw->mem;
    hw->xops_f += 3.0 * 6.0 + 1.0 + 2.0; /* three unpads, the mask, pad_input */
    hw->xops_b += 3.0 * 2.0 + 1.0;
    return sh->tok * (6.0 * sh->qkv + 4.0 * sh->ow) / hw->mem;
}

/* Elementwise seconds of the layer's forward. */
static double ts_step_elementwise(const ts_run *r, ts_step_hw *hw, const ts_step_shape *sh)
{
    const ts_model *md = &r->model;
    double t = sh->t, h = sh->h, F = sh->moe ? sh->Fe : sh->F;
    double tok = sh->tok, kv_gpu = sh->kv_gpu, tok_h = sh->tok_h;
    double k_mlp = sh->mlp_n;
    double elem_f;

    /* Memory-bound elementwise work, bf16 activations: two norms (r+w),
     * two residual adds (2r+w), optional dropout (r+w+1 B mask) on the
     * h-wide regions; activation function on the F-wide one (gated reads
     * two halves); rotary on q and k (none with learned absolute
     * positions, pos_embeddings).  Backward moves about twice that. */
    elem_f = tok_h * h * 2.0 * (2.0 * 2.0 + 2.0 * 3.0 + (r->dropout ? 2.0 * 2.5 : 0.0)) +
             tok * (F / t) * 2.0 * (md->gated ? 3.0 : 2.0) * k_mlp +
             (md->pos_embeddings > 0 ? 0.0 : tok * (sh->qw + kv_gpu * sh->qk) * 2.0 * 2.0);
    /* qk_norm (Qwen3, Gemma 3): an RMSNorm over each head of q and of k
     * before the rotary (transformers modeling_qwen3.py Qwen3Attention
     * q_norm / k_norm; Megatron-Core qk_layernorm): one fused kernel
     * each, read and write. */
    if (md->qk_norm) {
        elem_f += tok * (sh->qw + kv_gpu * sh->qk) * 2.0 * 2.0;
        hw->xops_f += 2.0;
        hw->xops_b += 2.0;
    }
    if (ts_run_eager_layers(r))
        elem_f += ts_step_eager(r, sh, F, k_mlp, hw);
    elem_f /= hw->mem;
    return elem_f;
}

/* Backward kernels with no forward twin (bytes; backward is otherwise
 * costed as twice the forward's elementwise traffic).  A linear's bias
 * grad is a reduction over tokens reading its bf16 output grad: F.linear
 * runs addmm with the bias in the cuBLASLt epilogue, and the autograd
 * engine sums addmm's expanded bias grad back to the bias's shape
 * (torch/csrc/autograd/engine.cpp validate_outputs, at::sum_to).
 * MPT's triton flash attention backward (llmfoundry/models/layers/
 * flash_attn_triton.py@beb8dee69 _flash_attn_backward) zeroes an fp32
 * dq accumulator (4 B per q element), runs a preprocess kernel reading o
 * and do (2 + 2 per output element), copies dq_accum into bf16 dq
 * (4 + 2), and returns dq, dk, dv as separate tensors, which the backward
 * of the fused projection's chunk (llmfoundry/models/layers/attention.py
 * @beb8dee69) concatenates into the qkv grad (2 + 2 per element). */
static double ts_step_bwd_extra(const ts_run *r, ts_step_hw *hw, const ts_step_shape *sh)
{
    const ts_model *md = &r->model;
    double tok = sh->tok, qkv = sh->qkv;
    double b = 0, cast;

    if (md->qkv_bias) {
        b += tok * qkv * 2.0;
        hw->xops_b += 1.0;
    }
    if (md->out_bias) {
        b += sh->tok_h * sh->h * 2.0;
        hw->xops_b += 1.0;
    }
    if (md->mlp_bias && !sh->moe) {
        b += tok * (md->gated ? 2.0 : 1.0) * sh->F / sh->t * 2.0 + sh->tok_h * sh->h * 2.0;
        hw->xops_b += 2.0;
    }
    if (r->attention == TS_ATTN_TRITON) {
        b += tok * (sh->qw * (4.0 + 6.0) + sh->ow * 4.0 + qkv * 4.0);
        hw->xops_b += 4.0;
    }
    /* activation_func_fp8_input_store: the saved FP8 SwiGLU input cast back
     * to bf16 (read 1, write 2) before the SwiGLU backward. */
    cast = ts_step_act_fp8_bytes(r, sh);
    if (cast > 0) {
        b += cast;
        hw->xops_b += 1.0;
    }
    return b / hw->mem;
}

/* Weight-sized traffic every micro-batch, beyond the GEMMs' own
 * operands.  Megatron accumulates wgrad into fp32 main grads inside
 * the GEMM (gradient-accumulation fusion): C is read and written in
 * fp32, 6 B/param more than a bf16 store.  FSDP / ZeRO-3 gathers the
 * unsharded weights into HBM before forward and again before
 * backward, casts grads to the reduce dtype and reduce-scatters them
 * from HBM; ZeRO-1/2 (DeepSpeed) copies grads into its reduce buckets.
 * FSDP1's modules hold views into the flat parameter, so autograd's split
 * backward concatenates the parameters' grads into the flat grad (read and
 * write at the param width), and _reduce_grad divides the whole unsharded
 * grad in place by the pre-divide factor (2 or more on 2 or more ranks)
 * before the reduce-scatter (PyTorch 2.1: torch/distributed/fsdp/flat_param.py
 * _get_unflat_views, _runtime_utils.py _reduce_grad,
 * _div_if_needed).  FSDP2 copies per-parameter grads into the
 * reduce-scatter buffer at the reduce dtype (the cast above) and leaves
 * the division to NCCL. */
static void ts_step_weight_traffic(const ts_run *r, const ts_step_hw *hw, const ts_step_shape *sh,
                                   ts_step_layer *o, double *pf, double *pb)
{
    const ts_model *md = &r->model;
    double t = sh->t, e = sh->e, h = sh->h, F = sh->moe ? sh->Fe : sh->F;
    double tok = sh->tok, kv_gpu = sh->kv_gpu;
    bool moe = sh->moe;
    double fp8_f = 0, fp8_b = 0;
    double moe_mult = moe ? (double)md->experts / e + sh->S : 1.0;
    double P_l = (sh->attn_p + moe_mult * (md->gated ? 3.0 : 2.0) * h * F) / t;
    double wb = ts_precision_bytes(r->precision);
    double gb = ts_precision_bytes(r->grad_precision);
    double extra;

    if (r->zero >= 3)
        extra = 2.0 * wb + (gb != wb ? wb + gb : 0.0) + gb;
    else if (r->framework == TS_FW_MEGATRON)
        extra = 6.0;
    else
        extra = 3.0 * gb;
    if (r->framework == TS_FW_FSDP && r->fsdp_impl == TS_FSDP_FLAT_PARAM)
        extra += 2.0 * wb + (r->dp > 1 ? 2.0 * gb : 0.0);
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

        /* Frozen FP8 weights (fp8_model_init) are not cast again. */
        bool w8 = hw->frozen && r->frozen_precision == TS_QUANT_FP8;
        double wcast = ts_step_fp8_wcast(ts_run_te_fp8_params(r) && !hw->frozen, w8,
                                         ts_gpu_fp8_tn_only(&r->gpu), P_l);

        ts_step_fp8_cast(tok, h, F, t, kv_gpu * sh->qk, md->gated, kk,
                         r->framework == TS_FW_MEGATRON && mb > 1 ? wcast / mb : wcast, &fp8_f,
                         &fp8_b);
        fp8_f /= hw->mem;
        fp8_b /= hw->mem;
    }
    *pf = fp8_f;
    *pb = fp8_b;
}

/* Launch floor: the modelled kernels, one launch each.  Forward: the
 * GEMMs (QKV, out, two MLP; MoE: router and two grouped expert
 * GEMMs), attention (one fused kernel; eager: two batched matmuls,
 * softmax, dropout), two norms, two residual adds, the activation,
 * rotary, two dropouts.  Backward: two GEMMs per forward GEMM, one
 * attention backward (eager: its four), the same elementwise count. */
static void ts_step_launch_floor(const ts_run *r, const ts_step_hw *hw, const ts_step_shape *sh,
                                 ts_step_layer *o)
{
    bool moe = sh->moe;
    double gemms = moe ? 5.0 : 4.0;
    double attn_ops = r->attention == TS_ATTN_EAGER ? (r->dropout ? 4.0 : 3.0) : 1.0;
    double elem_ops =
        6.0 + (r->dropout ? 2.0 : 0.0) +
        (r->compute_precision == TS_PREC_FP8 ? 4.0 : 0.0); /* one cast per GEMM input / grad */
    /* Megatron's legacy layer: Megatron or DeepSpeed, eager attention,
     * its fused kernels (not Hugging Face's layers), dropout on (the RNG
     * tracker's forks are part of the cost measured), no adapters.  Its
     * base kernels cost the measured host time; the others (bias grads,
     * casts) a launch. */
    bool legacy = (r->framework == TS_FW_MEGATRON || r->framework == TS_FW_DEEPSPEED) &&
                  r->attention == TS_ATTN_EAGER && !ts_run_eager_layers(r) && r->dropout &&
                  r->lora_rank == 0;
    double per = legacy ? TS_STEP_HOST_MEGATRON_EAGER_S : TS_STEP_LAUNCH_S;
    double lf = (gemms + attn_ops + elem_ops) * per + hw->xops_f * TS_STEP_LAUNCH_S;
    double lb = ((hw->frozen ? 1.0 : 2.0) * gemms + attn_ops + elem_ops) * per +
                hw->xops_b * TS_STEP_LAUNCH_S;

    if (o->fwd < lf)
        o->fwd = lf;
    if (o->bwd < lb)
        o->bwd = lb;
}

/* One residual add: two reads and a write of the h-wide bf16 stream. */
static double ts_step_residual_add_s(const ts_step_hw *hw, const ts_step_shape *sh)
{
    return sh->tok_h * sh->h * 2.0 * 3.0 / hw->mem;
}

/* Full recompute under PyTorch's non-reentrant checkpoint (FSDP's
 * checkpoint_wrapper NO_REENTRANT: Composer, torchtitan) stops early:
 * since PyTorch 2.1 (pytorch/pytorch#96866, set_checkpoint_early_stop)
 * the recompute's pack hook raises once the last tensor the forward saved
 * for backward is back (torch/utils/checkpoint.py _recomputation_hook).
 * The autograd wrapper saves an op's inputs before it runs the kernel
 * (tools/autograd/gen_variable_type.py: setup_derivative before
 * emit_call), so a dense block's last saving op, the MLP's down
 * projection, is never run again, nor the residual add after it, nor the
 * tensor-parallel reduce of its output.  Megatron's CheckpointFunction,
 * DeepSpeed's checkpointing and transformers' gradient checkpointing
 * (use_reentrant True unless told otherwise) redo the whole forward.  A
 * MoE block's combine saves the experts' outputs, and a LoRA adapter on
 * the down projection saves after the base matmul: the down projection
 * runs again there, so only dense blocks without LoRA skip it. */
static void ts_step_rec_skip(const ts_run *r, const ts_step_hw *hw, const ts_step_shape *sh,
                             double down_f, ts_step_layer *o)
{
    if (ts_run_recompute_impl(r) != TS_RIMPL_EARLY_STOP || sh->moe || r->lora_rank > 0)
        return;
    o->rec_skip = down_f + ts_step_residual_add_s(hw, sh);
    if (o->rec_skip > o->fwd)
        o->rec_skip = o->fwd;
    /* The block's two forward TP reductions are the same size: after the
     * attention output and after the down projection. */
    o->rec_skip_tp = o->tp_fwd / 2.0;
}

/* recompute selective_op: torchtitan's per-op checkpoint
 * (parallelize_llama.py@9dec370 _apply_ac_to_transformer_block) keeps the
 * outputs of the ops in _save_list, aten.mm's only at odd counts (the
 * policy counts mm calls from one and saves when the count is odd; the
 * recompute counts its own the same way), and reruns the rest when
 * backward first needs the block.  torch.utils.checkpoint's early stop
 * (ts_step_rec_skip) holds under a policy too: its pack hook counts
 * autograd's saved tensors, the cached ops' inputs among them
 * (torch/utils/checkpoint.py@0008d771 _recomputation_hook,
 * _CachingTorchDispatchMode), and ends the rerun at w2's input, so a
 * Llama block (wq wk wv | SDPA | wo | w1 w3 w2) reruns wk, wo and w3 (wk
 * and wo without a gate, fc2 past the stop), not the SDPA, and every norm,
 * rotary, activation and residual add but the last.  TP: the forward
 * all-gathers of sequence parallelism (or the all-reduce after wo) are
 * not in the save list and are redone; the reduce-scatters are saved and
 * the second collective lies past the stop: half the forward's. */
static void ts_step_rec_op(const ts_run *r, const ts_step_hw *hw, const ts_step_shape *sh,
                           double elem_f, ts_step_layer *o)
{
    ts_step_hw a = *hw;
    double f = 0, b = 0, add_f = ts_step_residual_add_s(hw, sh);

    ts_step_gemm3(&a, sh->tok, sh->kv_gpu * sh->qk, sh->h, 1, &f, &b); /* wk */
    ts_step_gemm3(&a, sh->tok, sh->h, sh->ow, 1, &f, &b);              /* wo */
    if (r->model.gated)
        ts_step_gemm3(&a, sh->tok, sh->F / sh->t, sh->h, 1, &f, &b); /* w3 */
    o->rec_op = f + (elem_f > add_f ? elem_f - add_f : 0.0);
    o->rec_op_tp = o->tp_fwd / 2.0;
}

/* A host-bound layer leaves its GPU idle between kernels: the host
 * enqueues asynchronously and the stream runs each kernel once it is
 * launched, so the layer takes the host's time, not the GPU's.  Its TP
 * collectives run on that stream (the compute stream waits on NCCL's, the
 * host does not: ProcessGroupNCCL's Work::wait is a stream wait,
 * torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp synchronizeStream), so
 * they fill the idle time first and only the rest is exposed; nothing
 * else runs then, so no contention is charged (kappa).  vTrain's one-node
 * runs show it: where the host floor binds (hidden 1,024, micro-batch 1),
 * a layer takes the same time at TP 1, 2 and 4.  Not EP: a token
 * dispatcher's all-to-all needs its split sizes on the host first
 * (Megatron-Core's MoEAlltoAllTokenDispatcher copies tokens_per_expert to
 * the CPU), a synchronisation that drains the queue the idle time is. */
static void ts_step_host_idle(double gpu_f, double gpu_b, ts_step_layer *o)
{
    double idle_f = o->fwd > gpu_f ? o->fwd - gpu_f : 0;
    double idle_b = o->bwd > gpu_b ? o->bwd - gpu_b : 0;
    double tp_b = o->tp_exposed - o->tp_fwd;
    double h = fmin(o->tp_fwd, idle_f);

    o->tp_fwd -= h;
    o->tp_exposed -= h + fmin(tp_b, idle_b);
}

void ts_step_layer_cost(const ts_run *r, ts_step_hw *hw, ts_step_layer *o)
{
    ts_step_shape sh;
    double elem_f, attn_f = 0, attn_b = 0, f = 0, bw = 0, fp8_f = 0, fp8_b = 0, down_f = 0, cast;
    double unpad_b, gpu_f, gpu_b;

    ts_step_shape_of(r, &sh);
    *o = (ts_step_layer){ 0 };
    hw->xops_f = hw->xops_b = 0; /* dequant, adapter and eager kernels, counted as costed */
    ts_step_layer_gemms(r, hw, &sh, &f, &bw, &down_f);
    ts_step_attn_core(r, hw, &sh, &attn_f, &attn_b);
    elem_f = ts_step_elementwise(r, hw, &sh);
    ts_step_weight_traffic(r, hw, &sh, o, &fp8_f, &fp8_b);

    o->fwd = f + attn_f + elem_f + fp8_f;
    cast = ts_step_act_fp8_bytes(r, &sh);
    if (cast > 0) {
        o->fwd += cast / hw->mem;
        hw->xops_f += 1.0;
    }
    unpad_b = ts_step_unpad(r, hw, &sh, o);
    o->bwd =
        bw + attn_b + 2.0 * elem_f + ts_step_bwd_extra(r, hw, &sh) + o->wtraffic + fp8_b + unpad_b;
    o->attn_fwd = attn_f;
    gpu_f = o->fwd;
    gpu_b = o->bwd;
    ts_step_launch_floor(r, hw, &sh, o);
    ts_step_layer_comm(r, hw, &sh, f, bw, attn_f, attn_b, o);
    ts_step_host_idle(gpu_f, gpu_b, o);
    if (r->recompute == TS_RECOMPUTE_FULL)
        ts_step_rec_skip(r, hw, &sh, down_f, o);
    else if (r->recompute == TS_RECOMPUTE_SELECTIVE_OP)
        ts_step_rec_op(r, hw, &sh, elem_f, o);
}

/* Output layer and cross-entropy of the last stage, one micro-batch. */
void ts_step_head_cost(const ts_run *r, ts_step_hw *hw, double *fwd, double *bwd, double *tp)
{
    const ts_model *md = &r->model;
    double t = (double)r->tp, tok = (double)r->seq * (double)r->micro_batch / (double)r->cp;
    double V = (double)md->vocab, h = (double)md->hidden;
    double f = 0, b = 0;

    *tp = 0;
    if (V > 0) {
        /* Under LoRA the head is frozen but not quantised (bitsandbytes
         * and PEFT leave lm_head in 16 bits); a trained copy of it
         * (lora_modules_to_save) has its weight gradient too. */
        ts_quant q = hw->quant;
        bool frozen = hw->frozen;

        hw->quant = TS_QUANT_BF16;
        if (r->lora_save & TS_LORA_SAVE_HEAD)
            hw->frozen = false;
        ts_step_gemm3(hw, tok, V / t, h, 1, &f, &b);
        hw->quant = q;
        hw->frozen = frozen;
    }
    {
        double lf, lb, logits = tok * (V / t);

        ts_step_loss_bytes(ts_run_loss_impl(r), logits, &lf, &lb);
        f += lf / hw->mem;
        b += lb / hw->mem;
        /* Train metrics after the micro-batch's backward (Composer). */
        b += (double)r->logit_metrics * ts_step_metric_bytes(logits) / hw->mem;
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
