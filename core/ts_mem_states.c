/*
 * ts_mem_states.c - bytes per parameter of the model states (weights,
 * gradients, fp32 master, optimizer), LoRA's adapters over a frozen base,
 * and the parameters one GPU holds: the context every pipeline stage of a
 * run shares.  Part of the memory model (ts_mem.h); see docs/formulas.md,
 * "Bytes per parameter".
 */
#include "ts_mem.h"

#include <stddef.h>

/* Adafactor without a shape: the square-matrix rule at h = 4096. */
#define TS_MEM_ADAFACTOR_H 4096.0

/* bitsandbytes 8-bit optimizers quantise each state block-wise, one fp32
 * absmax per 2048 elements (bitsandbytes optimizer.py@06029dd6,
 * Optimizer2State.init_state); the paged variants put the states of
 * tensors of 1e5 elements or more in CUDA managed memory (get_state_buffer:
 * F.get_paged), which the caching allocator does not see. */
#define TS_MEM_BNB_BLOCK     2048.0
#define TS_MEM_BNB_PAGED_MIN 1e5

typedef struct ts_mem_opt {
    double bpp; /* optimizer state bytes per trainable param */
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
        r.assumptions = mom == 4
                            ? "Adam/AdamW: m and v in fp32, 8 B per trainable param"
                            : "Adam/AdamW: m and v in bf16 (pure bf16), 4 B per trainable param";
        break;
    case TS_OPT_ADAM8BIT:
        r.bpp = 2.0 + 8.0 / TS_MEM_BNB_BLOCK;
        r.assumptions = "8-bit Adam (bitsandbytes): m and v 1 byte each + one fp32 absmax per 2048";
        break;
    case TS_OPT_PAGED_ADAM8BIT:
        r.bpp = 2.0 + 8.0 / TS_MEM_BNB_BLOCK;
        r.assumptions =
            "paged 8-bit AdamW (bitsandbytes): m and v 1 byte each + one fp32 absmax per 2048; "
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
            r.assumptions = "Adafactor: factored fp32 second moment, no momentum; 8/h B per param "
                            "(square h x h matrices)";
        } else {
            r.bpp = 8.0 / TS_MEM_ADAFACTOR_H;
            r.assumptions = "Adafactor: factored fp32 second moment, no momentum; no shape, so "
                            "8/4096 B per param";
        }
        break;
    case TS_OPT_COUNT:
        break;
    }
    return r;
}

/* LoRA adapters' widths for the paged count: A (r x in) and B (out x r)
 * on each targeted matrix; a two-matrix MLP has no gate (up_proj,
 * down_proj are fc1, fc2). */
typedef struct ts_mem_lora {
    double h, F, r, kvd, E;
    double layer; /* adapter params per layer, whole model width (ts_lora_layer_params) */
} ts_mem_lora;

/* Paged 8-bit states: of the adapters' A and B tensors, those of 1e5
 * elements or more (r in, r out), as a fraction of all adapter params. */
static double ts_mem_lora_paged(const ts_run *run, const ts_mem_lora *l)
{
    const ts_model *m = &run->model;
    unsigned tg = run->lora_targets;
    double h = l->h, F = l->F, r = l->r, kvd = l->kvd, E = l->E;
    double paged = 0;
    const double in_out[][3] = {
        { TS_LORA_Q, h, h },
        { TS_LORA_K, h, kvd },
        { TS_LORA_V, h, kvd },
        { TS_LORA_O, h, h },
        { TS_LORA_QKV, h, h + 2.0 * kvd },
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
        double nmlp = (m->gated && (tg & TS_LORA_GATE) ? 1.0 : 0) + ((tg & TS_LORA_UP) ? 1.0 : 0) +
                      ((tg & TS_LORA_DOWN) ? 1.0 : 0);

        paged += E * nmlp * per;
    }
    return l->layer > 0 ? paged / l->layer : 0;
}

/* The layers' parameters: everything but the embedding and the output
 * head (what LoRA freezes at frozen_precision and GPTQ packs). */
static double ts_mem_body_params(const ts_params *p)
{
    return p->total - p->embedding - p->output_head;
}

/* LoRA: adapters A (r x in) and B (out x r) on every attention and MLP
 * matrix are all that trains; the base is frozen at frozen_precision,
 * embeddings and norms at the training precision (Hu et al. 2021; QLoRA,
 * Dettmers et al. 2023; HF peft with target_modules all-linear:
 * 41,943,040 adapters for Llama 3 8B at r 16).  Sets the adapters' share
 * of c and the weights' bytes per parameter of base + adapters. */
static void ts_mem_lora_context(const ts_run *run, const ts_params *p, ts_mem_ctx *c,
                                ts_memory *out)
{
    const ts_model *m = &run->model;
    ts_mem_lora l;
    double adapters, linear, copies, all;

    l.h = (double)m->hidden;
    l.F = (double)m->ffn;
    l.r = (double)run->lora_rank;
    l.kvd = (double)m->kv_heads * l.h / (double)m->heads;
    l.E = m->experts > 1 ? (double)m->experts : 1.0;
    /* Every expert's adapters: the whole model's states. */
    l.layer = ts_lora_layer_params(m, run->lora_targets, run->lora_rank, l.E);
    adapters = l.layer * (double)m->layers;
    if (run->optimizer == TS_OPT_PAGED_ADAM8BIT)
        c->paged_frac = ts_mem_lora_paged(run, &l);
    linear = ts_mem_body_params(p);

    c->lora_layer = l.layer / (double)run->tp;
    /* lora_modules_to_save: full copies of the token embedding and of
     * the output layer, on the first and the last stage. */
    copies = ts_lora_save_params(m, run->lora_save);
    c->save_emb = ts_lora_save_params(m, run->lora_save & TS_LORA_SAVE_EMBED) / (double)run->tp;
    c->save_head = ts_lora_save_params(m, run->lora_save & TS_LORA_SAVE_HEAD) / (double)run->tp;
    c->frozen_b = ts_quant_bytes(run->frozen_precision);
    /* Reported per parameter of base + adapters + copies; fp32 adapters
     * (adapter_precision) at 4 B, as ts_mem_stage_lora holds them. */
    all = p->total + adapters + copies;
    out->bpp_weights =
        (c->frozen_b * linear +
         ts_precision_bytes(run->precision) * (p->embedding + p->output_head + copies) +
         (ts_run_adapters_fp32(run) ? 4.0 : ts_precision_bytes(run->precision)) * adapters) /
        all;
    c->f = (adapters + copies) / all;
    out->bpp_params = all;
    c->lora_adapters = adapters / all;
    c->lora_copies = copies / all;
}

/* Bytes per parameter of each model state, into out and c. */
static void ts_mem_bytes(const ts_run *run, const ts_params *p, ts_mem_ctx *c, ts_memory *out)
{
    ts_mem_opt opt = ts_mem_optimizer(run, p);

    c->lora_layer = 0;
    c->lora = run->lora_rank > 0 && c->shape && c->training;
    out->bpp_params = p->total;
    if (c->lora)
        ts_mem_lora_context(run, p, c, out);
    else
        out->bpp_weights = ts_precision_bytes(run->precision);
    out->bpp_grads = c->f * ts_precision_bytes(run->grad_precision);
    out->bpp_master = run->master_weights ? c->f * 4.0 : 0.0;
    /* fp32 adapters: fp32 gradients, no separate master copy; the
     * modules_to_save copies as the run's trained parameters (what
     * ts_mem_stage_lora holds). */
    if (c->lora && ts_run_adapters_fp32(run)) {
        out->bpp_grads =
            c->lora_adapters * 4.0 + c->lora_copies * ts_precision_bytes(run->grad_precision);
        out->bpp_master = run->master_weights ? c->lora_copies * 4.0 : 0.0;
    }
    out->bpp_optimizer = c->f * opt.bpp;
    out->bpp_total = out->bpp_weights + out->bpp_grads + out->bpp_master + out->bpp_optimizer;
    c->opt_bpp = opt.bpp;
    /* The HF Trainer gives every nn.Embedding 32-bit states under a
     * bitsandbytes 8-bit optimizer (transformers trainer.py
     * create_optimizer: GlobalOptimManager.register_module_override(
     * module, "weight", {"optim_bits": 32})): a trained embedding's m
     * and v are fp32, 8 B, where the rest take 2 + 8/2048. */
    if (run->framework == TS_FW_HF &&
        (run->optimizer == TS_OPT_ADAM8BIT || run->optimizer == TS_OPT_PAGED_ADAM8BIT))
        c->emb_opt = 8.0 - opt.bpp;
    /* Full training: every matrix has far more than 1e5 elements. */
    if (!c->lora && run->optimizer == TS_OPT_PAGED_ADAM8BIT)
        c->paged_frac = 1.0;
    c->bw = out->bpp_weights;
    c->bg = out->bpp_grads;
    c->bm = out->bpp_master;
    c->bo = out->bpp_optimizer;
    /* The stages add the embedding's 32-bit states where it sits; the
     * reported bytes per parameter (checkpoints, model_state_bytes) hold
     * them too: the trained input embedding, or embed_tokens' copy. */
    if (c->emb_opt > 0 && c->shape && c->training) {
        double e = !c->lora ? c->f * p->embedding
                            : ts_lora_save_params(&run->model, run->lora_save & TS_LORA_SAVE_EMBED);

        out->bpp_optimizer += c->emb_opt * e / out->bpp_params;
        out->bpp_total += c->emb_opt * e / out->bpp_params;
    }
    out->optimizer.assumptions = opt.assumptions;
}

/* Parameters per layer and of the embedding and head on one GPU. */
static void ts_mem_shares(const ts_run *run, const ts_params *p, ts_mem_ctx *c)
{
    const ts_model *m = &run->model;
    double t = (double)run->tp;
    double moe_layers = (double)(m->layers - p->dense_layers);
    double per_layer_expert = moe_layers > 0 ? p->expert / moe_layers : 0.0;

    c->layer_dense =
        (p->per_layer_attn + p->per_layer_norm + p->per_layer_mlp - per_layer_expert) / t;
    c->layer_expert = per_layer_expert / (t * (double)run->ep);
    c->layer_dense_d = (p->per_layer_attn + p->per_layer_norm + p->dense_layer_mlp) / t;
    c->dense_layers = p->dense_layers;
    /* The norm after the embedding is replicated, not split by tp. */
    c->emb = p->embedding / t + p->embed_norm;
    /* Tied embeddings: with pp > 1 the last stage holds its own copy of
     * the word embeddings (Megatron shared_embedding). */
    c->head = (p->output_head > 0 ? p->output_head : (run->pp > 1 ? p->embedding : 0.0)) / t +
              (double)m->hidden; /* final norm */
}

/* A GPTQ base (frozen_precision gptq) is dequantised by plain torch ops
 * before torch.matmul (auto-gptq qlinear_cuda_old, ts_step_kernel.c), and
 * autograd keeps that fp16 weight for the input's gradient: each layer
 * keeps its linears' weights at 2 B beside its activations (with full
 * recompute only the layer in backward), per token of the micro-batch as
 * the layer's other terms are counted.  The count is the layer's share of
 * the non-embedding parameters, its norms' few thousand included. */
static void ts_mem_gptq_kept(const ts_run *run, const ts_params *p, ts_mem_ctx *c)
{
    const ts_model *m = &run->model;
    double per_tok;

    if (!c->lora || run->frozen_precision != TS_QUANT_GPTQ || m->layers <= 0 || c->tokens <= 0)
        return;
    per_tok = 2.0 * ts_mem_body_params(p) / (double)m->layers / (double)run->tp / c->tokens;
    c->act.full += per_tok;
    c->act_dense.full += per_tok;
    if (run->recompute == TS_RECOMPUTE_NONE || run->recompute == TS_RECOMPUTE_SELECTIVE) {
        c->act.saved += per_tok;
        c->act_dense.saved += per_tok;
    }
}

void ts_mem_context(const ts_run *run, const ts_params *p, ts_mem_ctx *c, ts_memory *out)
{
    *c = (ts_mem_ctx){ 0 };
    c->run = run;
    c->p = *p;
    c->shape = p->from_shape;
    c->training = run->optimizer != TS_OPT_NONE;
    c->f = c->training ? run->trainable_fraction : 0.0;
    ts_mem_bytes(run, p, c, out);

    c->nd = (double)(run->dp * run->cp);
    c->nde = c->nd / (double)run->ep; /* exact: dp % ep == 0 */
    if (c->shape)
        ts_mem_shares(run, p, c);
    c->tokens = (double)(run->seq / run->cp) * (double)run->micro_batch;
    c->micro_per_step =
        run->global_batch > 0 ? (double)(run->global_batch / (run->dp * run->micro_batch)) : 0;
    if (c->shape) {
        ts_mem_layer(run, false, &c->act);
        ts_mem_layer(run, true, &c->act_dense);
        ts_mem_gptq_kept(run, p, c);
    } else
        c->act = (ts_mem_act){ .formula = "no model shape: activations not modelled" };
}
