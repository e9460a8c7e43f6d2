/*
 * ts_mem_act.c - activations of one transformer layer, bytes per token on
 * one GPU: what its forward saves for backward under each recompute mode,
 * the working set of its backward, and the last stage's logits/loss
 * buffers.  Part of the memory model (ts_mem.h); see docs/formulas.md,
 * "Activations".
 *
 * The Megatron-LM / Transformer Engine set (Korthikanti et al. 2022,
 * section 4.1, generalised): the inputs of both norms and of the QKV and
 * MLP linears (act_b h each; replicated across TP ranks unless sequence
 * parallel), Q, K, V and the attention output (K and V sized from
 * kv_heads), the MLP intermediates (gated: gate+up kept by the fused
 * SwiGLU and their product, 3 act_b F; GeLU: 2 act_b F), eager
 * attention's softmax (act_b a s) and, with dropout, its mask (a s) and
 * output (act_b a s), and the two 1-byte dropout masks (h each).  With
 * eager attention, dropout, MHA and F = 4h this is exactly Table 2:
 * s b h (34 + 5 a s / h) with t = 1.
 */
#include "ts_mem.h"

#include <math.h>

/* The widths of one layer on one GPU that every term below reads. */
typedef struct ts_mem_dims {
    bool moe;
    double t, h, a, s, v_hd, act_b;
    double tr;         /* divisor of replicated tensors */
    double q;          /* query width per rank */
    double ov;         /* attention output width per rank */
    double kv, vv;     /* key, value widths per rank */
    double k;          /* experts per token (1: dense MLP) */
    double mlp_n;      /* MLPs a token runs: k, plus a MoE layer's shared experts */
    double F;          /* MLP width */
    double mlp_b;      /* MLP intermediates per token, elements */
    double eager;      /* eager attention's score tensors (sdpa: its window mask), bytes */
    double rep, shard; /* replicated / tp-sharded saved bytes */
    double V, kc;      /* vocabulary per rank, loss chunks */
} ts_mem_dims;

/* What FP8 keeps at 1 B an element of the set ts_mem_layer_dims counts. */
static void ts_mem_layer_fp8(const ts_run *run, ts_mem_dims *d)
{
    /* Megatron-Core's activation_func_fp8_input_store: the SwiGLU saves its
     * 2F-wide input as input.to(torch.float8_e4m3fn), 1 B an element, and
     * casts it back in backward (megatron/core/fusions/fused_bias_swiglu.py
     * @d98e8a64 SwiGLUFunction / BiasSwiGLUFunction.forward; every MLP,
     * experts included, passes the flag). */
    if (run->act_fp8_input_store && run->model.gated)
        d->shard -= (d->act_b - 1.0) * 2.0 * d->F / d->t * d->mlp_n;
    /* Transformer Engine's linears under FP8 (Megatron-Core's TE layers)
     * save for the weight gradient the FP8 copy of the input their GEMM
     * used, 1 B an element (module/linear.py saved_inputmat or its
     * transpose, never both; layernorm_linear.py and layernorm_mlp.py
     * cast the norm's output straight to FP8 and save that, the norm's
     * own input staying 16-bit for its backward: ROCm/TransformerEngine
     * @ac80527 linear.py 298-309, layernorm_linear.py 150-160): the QKV
     * and fc1 inputs and fc2's (the MLP product) at 1 B, and the output
     * projection's FP8 copy of the attention output beside the 16-bit
     * one the attention backward keeps.  Full training only: a frozen
     * base saves no input for a weight gradient, which LoRA's adapter
     * inputs are modelled without. */
    if (ts_run_te_fp8(run)) {
        const ts_model *m = &run->model;
        bool mla = m->kv_lora_rank > 0;

        /* The attention's input: one FP8 copy for the fused QKV; MLA's q
         * and kv down projections are two plain TE linears after a
         * separate norm, one copy each (gpt_layer_specs.py@d98e8a64
         * 296-310, the training spec; mla_down_proj_fusion not modelled), its normed latents the up projections' FP8 inputs. */
        d->rep -= (d->act_b - (mla ? 2.0 : 1.0)) * d->h;
        if (mla)
            d->rep -= (d->act_b - 1.0) * (double)(m->kv_lora_rank + m->q_lora_rank);
        if (d->moe) {
            /* The router keeps the norm's output 16-bit
             * (RouterGatingLinearFunction, moe/moe_utils.py@d98e8a64
             * 1382); the experts' grouped linear saves the permuted
             * tokens in FP8 (module/grouped_linear.py@ac80527 225-237);
             * shared experts save their own FP8 copy of the norm's
             * output. */
            d->rep -= (d->act_b - 1.0) * d->h * d->k;
            if (m->shared_experts > 0)
                d->rep += d->h;
        } else {
            d->rep -= (d->act_b - 1.0) * d->h;
        }
        d->shard += d->ov;
        d->shard -= (d->act_b - 1.0) * d->F / d->t * d->mlp_n;
    }
}

static void ts_mem_layer_dims(const ts_run *run, bool dense, ts_mem_dims *d)
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

    d->moe = moe;
    d->t = t;
    d->h = h;
    d->a = a;
    d->s = s;
    d->v_hd = v_hd;
    d->act_b = act_b;
    d->tr = sp ? t : 1.0;
    d->q = a * qk_hd / t;
    d->ov = a * v_hd / t;
    d->kv = mla ? a * qk_hd / t                    /* k, v per rank (v below) */
                : (kvh >= t ? kvh / t : 1.0) * hd; /* replicated when kv_heads < tp */
    d->vv = mla ? d->ov : d->kv;
    d->k = moe ? (double)m->top_k : 1.0;
    d->F = moe && m->moe_ffn > 0 ? (double)m->moe_ffn : (double)m->ffn;
    d->mlp_n = d->k + (moe ? (double)m->shared_experts : 0.0);
    d->mlp_b = (m->gated ? 3.0 : 2.0) * d->F / t * d->mlp_n;
    d->V = (double)m->vocab / t;
    d->kc = (double)run->loss_chunks;

    d->rep = 4.0 * act_b * h + (run->dropout ? 2.0 * h : 0.0);
    if (moe)
        d->rep +=
            act_b * h * d->k; /* tokens permuted to their experts (Megatron token dispatcher) */
    if (mla)
        d->rep += act_b * (double)(m->kv_lora_rank + m->q_lora_rank); /* latents, normed */
    d->shard = act_b * (d->q + d->kv + d->vv + d->ov) + act_b * d->mlp_b;
    /* qk_norm: the per-head norms of q and k keep their inputs (the
     * normed, rotated q and k are what attention keeps above). */
    if (m->qk_norm)
        d->shard += act_b * (d->q + d->kv);
    ts_mem_layer_fp8(run, d);
    /* attention_unpad: the varlen kernel saves its unpadded output and the
     * output projection the padded copy pad_input made of it (bert_padding
     * .py@v2.4.2 index_put_first_axis), where the padded path saves one
     * tensor for both; q, k, v stay one saved copy each. */
    if (run->attention_unpad)
        d->shard += act_b * d->ov;
    d->eager = 0;
    if (run->attention == TS_ATTN_EAGER) {
        d->eager = (act_b + (run->dropout ? 1.0 + act_b : 0.0)) * a * s / t;
    } else if (run->attention == TS_ATTN_SDPA && ts_model_window_layers(m, s) > 0) {
        /* transformers' sdpa: a sliding layer's boolean [b, 1, s, s] mask
         * (masking_utils.py sdpa_mask, transformers >= 4.53), which PyTorch
         * turns into an additive one of the query's dtype on every call
         * (attention.cpp convert_boolean_attn_mask) and the
         * memory-efficient backward keeps (its attn_bias): act_b s per
         * token on sliding_layers of the layers, held like scores. */
        d->eager = act_b * s * ts_model_window_layers(m, s) / (double)m->layers;
    }
}

/* PEFT's LoRA Linear.forward casts the input to the adapter's dtype
 * before lora_A (peft@5fe7f8f8 tuners/lora/layer.py 751-773,
 * _cast_input_dtype), and get_peft_model's autocast_adapter_dtype=True
 * keeps bf16 models' adapters in fp32 (tuners_utils.py
 * _cast_adapter_dtype): lora_A saves a 4-byte copy of its input, one per
 * adapted matrix, q, k and v each their own. */
static double ts_mem_lora_inputs(const ts_run *run, const ts_mem_dims *d)
{
    const ts_model *m = &run->model;
    unsigned tg = run->lora_targets;
    double h = d->h, F = d->F, t = d->t;

    return 4.0 * (((tg & TS_LORA_Q) ? h : 0) + ((tg & TS_LORA_K) ? h : 0) +
                  ((tg & TS_LORA_V) ? h : 0) + ((tg & TS_LORA_QKV) ? h : 0) +
                  ((tg & TS_LORA_O) ? d->a * d->v_hd / t : 0)) +
           4.0 * d->mlp_n *
               ((m->gated && (tg & TS_LORA_GATE) ? h : 0) + ((tg & TS_LORA_UP) ? h : 0) +
                ((tg & TS_LORA_DOWN) ? F / t : 0));
}

/* lora_dropout > 0: each adapted matrix runs its own nn.Dropout over its
 * input before lora_A, and native dropout keeps a 1-byte bool mask per
 * element for backward.  PEFT (peft@5d602fdb src/peft/tuners/lora/
 * layer.py 1059-1063, Linear.forward: lora_A(dropout(x)) after
 * _cast_input_dtype) drops the fp32 copy that lora_A saved anyway
 * (ts_mem_lora_inputs): the mask is all it adds.  Megatron/NeMo
 * (dropout_position "pre": NeMo@8cfedd72 nemo/collections/nlp/modules/
 * common/megatron/adapters/parallel_adapters.py 313-315, as MLPerf's
 * Llama-2-70B LoRA configures it; Megatron-Bridge@067f987d src/megatron/
 * bridge/peft/utils.py 1222-1223, the default), like the other
 * frameworks' bf16 adapters, save the dropped act_b copy for linear_in
 * beside the base linear's own input, and the mask: act_b + 1 per
 * element.
 * Inputs per GPU: q, k, v, qkv, gate, up h / t_sp (the local sequence
 * shard under sequence parallel: the adapters drop before gathering),
 * o the attention output, down the MLP width; MoE experts per routed
 * token.  lora_impl automodel drops the adapter's output
 * (dropout(lora_B(...)), nemo_automodel/components/_peft/lora.py
 * @507bfb751): the mask over the output width is all it keeps, since the
 * add after it saves nothing; o's and down's outputs are still partial
 * sums over the whole sequence there (the scale sits before lora_B "to
 * keep lora_res as a Partial tensor", reduced once after the add), h wide
 * for every token. */
static double ts_mem_lora_dropout(const ts_run *run, const ts_mem_dims *d)
{
    const ts_model *m = &run->model;
    unsigned tg = run->lora_targets;
    double h = d->h / d->tr, in;

    if (run->lora_rank == 0 || !(run->lora_dropout > 0))
        return 0.0;
    if (run->lora_impl == TS_LORA_IMPL_AUTOMODEL)
        return ((tg & TS_LORA_Q) ? d->q : 0) + ((tg & TS_LORA_K) ? d->kv : 0) +
               ((tg & TS_LORA_V) ? d->vv : 0) + ((tg & TS_LORA_QKV) ? d->q + d->kv + d->vv : 0) +
               ((tg & TS_LORA_O) ? d->h : 0) +
               d->mlp_n *
                   ((m->gated && (tg & TS_LORA_GATE) ? d->F / d->t : 0) +
                    ((tg & TS_LORA_UP) ? d->F / d->t : 0) + ((tg & TS_LORA_DOWN) ? d->h : 0));
    in = ((tg & TS_LORA_Q) ? h : 0) + ((tg & TS_LORA_K) ? h : 0) + ((tg & TS_LORA_V) ? h : 0) +
         ((tg & TS_LORA_QKV) ? h : 0) + ((tg & TS_LORA_O) ? d->ov : 0) +
         d->mlp_n * ((m->gated && (tg & TS_LORA_GATE) ? h : 0) + ((tg & TS_LORA_UP) ? h : 0) +
                     ((tg & TS_LORA_DOWN) ? d->F / d->t : 0));
    return (ts_run_adapters_fp32(run) ? 1.0 : d->act_b + 1.0) * in;
}

/* PyTorch eager modules (torchtitan, torchtune, HF), uncompiled: the
 * norms (below), RoPE works on fp32 copies of q and k, GQA K/V are
 * expanded to all heads before SDPA (repeat_kv copies), the attention
 * output is made contiguous for the output projection (a copy), and
 * SwiGLU keeps w1's output, silu's output, w3's output and their product
 * (4 act_b F; GeLU 2).  Everything backward needs, bytes per token. */
static double ts_mem_layer_eager(const ts_run *run, const ts_mem_dims *d)
{
    const ts_model *m = &run->model;
    double act_b = d->act_b, h = d->h, t = d->t, F = d->F, q = d->q, kv = d->kv;
    /* liger_kernels (liger_kernel@v0.6.3): LigerSiLUMulFunction saves
     * gate and up only (ops/swiglu.py: save_for_backward(a, b); backward
     * recomputes silu), and LigerRMSNormFunction its input and the fp32
     * rstd per row (ops/rms_norm.py: save_for_backward(X, W, RSTD)). */
    bool liger = run->liger_kernels && run->framework == TS_FW_HF;
    double mlp_e = (m->gated ? (liger ? 3.0 : 4.0) : 2.0) * act_b * F / t * d->mlp_n;
    /* nn.LayerNorm is one native kernel: its input and fp32 mean and
     * rstd.  The eager RMSNorm of these codebases upcasts: x.float()
     * (4h) and the normalised act_b h. */
    double norm = run->norm == TS_NORM_LAYERNORM ? act_b * h + 8.0
                  : liger                        ? act_b * h + 4.0
                                                 : 4.0 * h + act_b * h;
    /* transformers' apply_rotary_pos_emb multiplies q and k by cos and
     * sin cast to the activations' dtype (LlamaRotaryEmbedding,
     * modeling_llama.py@5dd4a635): no fp32 copies of q and k.  A model
     * with learned absolute positions (pos_embeddings: GPT-2, OPT, MPT)
     * has no rotary at all: its positions are added once, to the
     * embedding output. */
    double rope = run->framework == TS_FW_HF || m->pos_embeddings > 0 ? 0.0 : 4.0 * (q + kv);
    /* qk_norm: the same eager RMSNorm over q and over k, x.float() and
     * the normalised copy each (Liger's: its input). */
    double qkn = !m->qk_norm ? 0.0 : liger ? act_b * (q + kv) : (4.0 + act_b) * (q + kv);
    double full = 2.0 * norm / d->tr + 2.0 * act_b * h / d->tr + rope + qkn +
                  act_b * (q + q + d->a * d->v_hd / t + d->ov) + act_b * d->ov + mlp_e + d->eager;

    if (ts_run_adapters_fp32(run))
        full += ts_mem_lora_inputs(run, d);
    return full;
}

/* The no-recompute formula text for the kernels and precision run has. */
static const char *ts_mem_formula_none(const ts_run *run, const ts_mem_dims *d)
{
    bool fp8 = ts_run_te_fp8(run);

    /* MoE and MLA layers keep more FP8 copies (ts_mem_layer_fp8):
     * said, not spelled out (docs/formulas.md has the terms). */
    if (fp8 && (run->model.experts > 1 || run->model.kv_lora_rank > 0))
        return "no recompute, Transformer Engine FP8: the dense layer's set with the QKV, "
               "fc1 and fc2 inputs at 1 B and the output projection's FP8 copy (+o); MoE: "
               "the router's input 16-bit, the permuted tokens and a shared expert's input "
               "in FP8; MLA: the down projections' input and the latents at 1 B; eager "
               "attention's score terms or a sliding window's mask as in the dense text";
    if (fp8 && (run->attention == TS_ATTN_EAGER || d->eager > 0))
        return "no recompute, Transformer Engine FP8: act_b (4h [+ dropout 2h])/t_sp + act_b "
               "(2q + 2kv + mlp) + eager (act_b [+1+act_b] a s)/t, with the QKV, fc1 "
               "and fc2 inputs at 1 B and the output projection's FP8 copy of the "
               "attention output (+o)";
    if (fp8)
        return "no recompute, FlashAttention, Transformer Engine FP8: act_b (2h [+ "
               "dropout 2h])/t_sp + 2h/t_sp (the QKV and fc1 inputs in FP8) + act_b (2q + "
               "2kv + mlp) + o (the output projection's FP8 input), mlp = (2 act_b + 1 | "
               "act_b + 1) F/t (fc2's input in FP8), the gated 2F at 1 B with "
               "activation_func_fp8_input_store";
    return run->attention == TS_ATTN_EAGER
               ? "no recompute: act_b (4h [+ dropout 2h])/t_sp + act_b (2q + 2kv + mlp) "
                 "+ eager (act_b [+1+act_b] a s)/t, the gated 2F at 1 B with "
                 "activation_func_fp8_input_store"
           : d->eager > 0
               ? "no recompute, sdpa with a sliding window: act_b (4h [+ dropout 2h])/t_sp "
                 "+ act_b (2q + 2kv + mlp) + act_b s (the additive mask) on the sliding "
                 "layers, mlp = (3 gated | 2) F/t"
               : "no recompute, FlashAttention: act_b (4h [+ dropout 2h])/t_sp + act_b "
                 "(2q + 2kv + mlp), mlp = (3 gated | 2) F/t, the gated 2F at 1 B with "
                 "activation_func_fp8_input_store";
}

/* What a layer's forward keeps for its backward under run->recompute
 * (o->full already set). */
static void ts_mem_layer_saved(const ts_run *run, const ts_mem_dims *d, ts_mem_act *o)
{
    double act_b = d->act_b;

    o->score = 0;
    switch (run->recompute) {
    case TS_RECOMPUTE_FULL:
        /* Only the layer input is kept (Megatron --recompute-granularity
         * full, torchtitan mode "full"). */
        o->saved = act_b * d->h / d->tr;
        o->formula = run->recompute_layers > 0
                         ? "full recompute of recompute_layers layers per (virtual) stage "
                           "(Megatron block method): act_b h / t_sp per token for those (layer "
                           "input only), the no-recompute set for the others"
                         : "full recompute: act_b h / t_sp per token per layer (layer input only)";
        break;
    case TS_RECOMPUTE_SELECTIVE:
        /* Megatron selective: the core attention recomputed, so only its
         * s^2 score terms go (with FlashAttention nothing changes). */
        o->saved = o->full - d->eager;
        o->formula =
            "selective recompute: the no-recompute set without eager attention's score "
            "terms (Korthikanti Table 2 without 5as/h), K/V from kv_heads, gated MLP 3F (its 2F "
            "at 1 B with activation_func_fp8_input_store)";
        break;
    case TS_RECOMPUTE_SELECTIVE_OP: {
        /* torchtitan's per-op SAC (parallelize_llama.py@9dec370
         * _apply_ac_to_transformer_block, _save_list): torch.utils.
         * checkpoint keeps the block input and the outputs its policy
         * marks MUST_SAVE, the SDPA op's (the attention output and its
         * fp32 logsumexp, a per head) and every other aten.mm's, counted
         * from one: wq, wv, w1, w2 of a gated block (wq, wv, fc1 without
         * a gate).  Everything else backward needs is rebuilt from them
         * (ts_mem_stage.c: full - saved, the recompute working set). */
        double mm = d->q + d->vv + d->F / d->t + (run->model.gated ? d->h / d->tr : 0.0);

        o->saved = act_b * (d->h / d->tr + d->ov + mm) + 4.0 * d->a / d->t;
        o->formula =
            "selective op AC (torchtitan): act_b (h/t_sp + o + wq + wv + w1 [+ w2]) + 4 a/t "
            "(logsumexp) per token per layer";
        break;
    }
    case TS_RECOMPUTE_NONE:
    case TS_RECOMPUTE_COUNT:
    default:
        o->saved = o->full;
        o->score = d->eager;
        o->formula = ts_mem_formula_none(run, d);
        break;
    }
}

/* The last stage's final norm and output layer inputs, and its logits.
 * Logits are vocab-parallel over tp (Megatron, torchtitan's
 * loss_parallel).  Megatron's fused vocab-parallel cross-entropy
 * (core/tensor_parallel/cross_entropy.py) upcasts once and works in
 * place: act_b V + 4 V.  PyTorch's F.cross_entropy (torchtitan,
 * torchtune, HF under DeepSpeed) keeps log_softmax's fp32 output, and its
 * backward allocates nll_loss's fp32 gradient and log_softmax's: three
 * fp32 copies of the logits of a chunk at once, the bf16 logits being
 * dropped before backward (torchtitan train.py `del pred`).  flash-attn's
 * cross_entropy (flash_attn/ops/triton/cross_entropy.py@058ad35a,
 * CrossEntropyLoss: ctx.save_for_backward(logits, lse, labels), backward
 * dlogits = torch.empty_like(logits)), llm-foundry's default loss_fn
 * (llmfoundry/models/mpt/modeling_mpt.py@beb8dee69, fused_crossentropy),
 * reads the logits in their own dtype and never upcasts a copy: the
 * logits of every chunk stay saved and one chunk's gradient is written
 * beside them, act_b V (1 + 1/kc), the 4 B log-sum-exp per token aside. */
static void ts_mem_layer_loss(const ts_run *run, const ts_mem_dims *d, ts_mem_act *o)
{
    double act_b = d->act_b, V = d->V, kc = d->kc;
    ts_loss_impl impl = ts_run_loss_impl(run);

    o->out_in = 2.0 * act_b * d->h / d->tr;
    o->logits = act_b * V;
    /* A train metric's F.cross_entropy under autocast: the fp32 copy and
     * log_softmax's fp32 output, the bf16 logits held beside them. */
    o->metric = 8.0 * V;
    if (impl == TS_LOSS_VOCAB_PARALLEL) {
        o->loss = (act_b + 4.0 / kc) * V;
        o->loss_cached = 0;
    } else if (impl == TS_LOSS_FUSED) {
        o->loss = act_b * V * (1.0 + 1.0 / kc);
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

/* Under LoRA the base is frozen, and a linear keeps its input for
 * backward only to form its weight's gradient: autograd saves mm's first
 * operand only when the second needs a gradient (PyTorch
 * tools/autograd/derivatives.yaml, mm: mat2's formula is the only one
 * reading self; the generated code saves an input only for an output it
 * must compute), and Transformer Engine's Linear and LayerNormMLP save
 * their GEMM inputs for the weight gradient only when the weight requires
 * one.  So a frozen linear's input stays only when an adapter keeps it:
 * Megatron/NeMo and torchtune adapters read the same tensor (their
 * linear_in saves it), while PEFT's lora_A saves its own fp32 copy
 * (ts_mem_lora_inputs), so with fp32 adapters (hf's default,
 * adapter_precision) no base input stays; adapters in the model's dtype
 * read the base input itself, as Megatron's do.  The same
 * holds for the eager RMSNorm's last multiply by its frozen weight (its
 * bf16 normalised input), and for the output projection's contiguous
 * copy of the attention output; fused attention keeps its own output.
 * Bytes per token per layer no longer kept. */
static double ts_mem_frozen_inputs(const ts_run *run, const ts_mem_dims *d)
{
    unsigned tg = run->lora_targets;
    bool own = ts_run_adapters_fp32(run);
    bool eager = ts_framework_eager(run->framework);
    double act_b = d->act_b, h = d->h / d->tr;
    double drop = 0;

    if (run->lora_rank <= 0)
        return 0;
    if (own || !(tg & (TS_LORA_Q | TS_LORA_K | TS_LORA_V | TS_LORA_QKV)))
        drop += act_b * h; /* QKV input */
    if (own || !(tg & (TS_LORA_GATE | TS_LORA_UP)))
        drop += act_b * h; /* MLP input */
    if (own || !(tg & TS_LORA_DOWN))
        drop += act_b * d->mlp_n * d->F / d->t; /* down projection input */
    if (eager) {
        if (own || !(tg & TS_LORA_O))
            drop += act_b * d->ov; /* the output projection's contiguous input */
        if (run->norm == TS_NORM_RMSNORM && !run->liger_kernels)
            drop += 2.0 * act_b * h; /* each norm's bf16 normalised input to weight * x */
        if (run->model.qk_norm && !run->liger_kernels)
            drop += act_b * (d->q + d->kv); /* the same for q_norm and k_norm */
    }
    return drop;
}

void ts_mem_layer(const ts_run *run, bool dense, ts_mem_act *o)
{
    ts_mem_dims d;

    ts_mem_layer_dims(run, dense, &d);
    o->full = d.rep / d.tr + d.shard + d.eager;
    o->eager = d.eager;
    if (ts_framework_eager(run->framework))
        o->full = ts_mem_layer_eager(run, &d);
    o->full -= ts_mem_frozen_inputs(run, &d);
    /* The adapters' dropout: kept with the layer's whole set (and with
     * Megatron's selective set, which recomputes only core attention). */
    o->full += ts_mem_lora_dropout(run, &d);
    o->work = d.act_b * (2.0 * d.h / d.tr + fmax(d.mlp_b, d.q + d.kv + d.vv + d.ov +
                                                              (run->attention == TS_ATTN_EAGER
                                                                   ? 2.0 * d.act_b * d.a * d.s / d.t
                                                                   : 0)));
    ts_mem_layer_saved(run, &d, o);
    ts_mem_layer_loss(run, &d, o);
}

double ts_mem_offload_bytes(const ts_run *run)
{
    int64_t k = ts_run_offloaded_layers(run);
    ts_mem_act a, ad;
    double kd;

    if (k <= 0)
        return 0;
    ts_mem_layer(run, false, &a);
    ts_mem_layer(run, true, &ad);
    kd = run->model.experts > 1 ? fmin((double)run->model.dense_layers, (double)k) : 0;
    return (((double)k - kd) * a.saved + kd * ad.saved) * ((double)run->seq / (double)run->cp) *
           (double)run->micro_batch;
}
