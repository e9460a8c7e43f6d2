/*
 * ts_mem.h - what the memory model's files share; not installed, not part
 * of the public interface (trainsize.h).
 *
 *   ts_memory.c      the memory answer: every stage, the worst one's
 *                    terms, host RAM, DeepSpeed's cross-check, the API
 *   ts_mem_states.c  bytes per parameter (optimizer, LoRA, paged 8-bit)
 *                    and the parameters one GPU holds (the context)
 *   ts_mem_act.c     one layer's activations and the loss working set
 *   ts_mem_stage.c   one pipeline stage: its layers, micro-batches in
 *                    flight, model states, buffers, phases and reserve
 *
 * See docs/formulas.md, "Peak memory".
 */
#ifndef TS_MEM_H
#define TS_MEM_H

#include "ts_internal.h"

#define TS_MEM_GIB 1073741824.0 /* 2^30 */

/* Activations of one layer, bytes per token on one GPU (ts_mem_act.c). */
typedef struct ts_mem_act {
    double saved;       /* kept from a layer's forward to its backward */
    double full;        /* everything backward needs, nothing recomputed */
    double work;        /* gradient working set inside a layer's backward */
    double score;       /* the s^2 (attention score) part of saved */
    double eager;       /* the s^2 part of full */
    double out_in;      /* final norm + output layer inputs (last stage) */
    double loss;        /* logits/loss working set, bytes per token */
    double loss_cached; /* logits blocks the loss tensors cannot reuse */
    double logits;      /* the bf16 logits, bytes per token (last stage) */
    double metric;      /* one fp32 cross-entropy metric's transient, bytes per token */
    const char *formula;
} ts_mem_act;

/* What every stage of one run shares (ts_mem_context). */
typedef struct ts_mem_ctx {
    const ts_run *run;
    ts_params p;
    bool shape, training;
    double f;                         /* trainable fraction */
    double bw, bg, bm, bo;            /* bytes per param: weights, grads, master, optimizer */
    double nd, nde;                   /* shard degrees: dense, expert */
    double layer_dense, layer_expert; /* params per (MoE) layer on one GPU (after tp / ep) */
    double layer_dense_d;             /* params of one of the first dense-FFN layers (DeepSeek) */
    int64_t dense_layers;             /* how many first layers are dense in a MoE model */
    ts_mem_act act_dense;             /* activations of such a dense layer */
    double emb, head;                 /* embedding / output head on one GPU */
    double tokens;                    /* tokens per micro-batch on one GPU: seq/cp * b */
    double micro_per_step;            /* 0: not known (no global batch given) */
    ts_mem_act act;
    bool lora;         /* LoRA adapters train, the base is frozen */
    double lora_layer; /* adapter params per layer on one GPU */
    double save_emb;   /* lora_modules_to_save: embed_tokens' trained copy on one GPU */
    double save_head;  /* lm_head's trained copy on one GPU (the last stage) */
    double lora_adapters, lora_copies; /* of base + adapters + copies: the two trained parts */
    double frozen_b;                   /* bytes per frozen base param */
    double paged_frac; /* of the optimizer state: in CUDA managed memory (paged 8-bit) */
    double opt_bpp;    /* optimizer state bytes per trained param */
    double emb_opt;    /* more per trained nn.Embedding param: the HF Trainer's 32-bit bnb states */
} ts_mem_ctx;

/* Bytes per token of one layer of run (ts_mem_act.c).  dense: one of a
 * MoE model's first dense layers (DeepSeek first_k_dense_replace), whose
 * MLP is a plain FFN of width ffn. */
void ts_mem_layer(const ts_run *run, bool dense, ts_mem_act *o);

/* Bytes per parameter (into out->bpp_* and out->optimizer.assumptions),
 * the shares per GPU and the activation model (ts_mem_states.c). */
void ts_mem_context(const ts_run *run, const ts_params *p, ts_mem_ctx *c, ts_memory *out);

/* First layer of stage i (ts_mem_stage.c). */
int64_t ts_mem_stage_start(const ts_run *r, int64_t i);

/* Stage i, which holds layers start .. start + its count - 1. */
void ts_mem_stage_eval(const ts_mem_ctx *c, int64_t i, int64_t start, ts_mem_stage *st);

/* The middle stages [a, b) of a pipeline longer than TS_STAGES_MAX that
 * can be the worst: at most TS_MEM_MIDDLE_MAX, ascending, into mids
 * (ts_mem_stage.c explains why these are enough). */
#define TS_MEM_MIDDLE_MAX 4
size_t ts_mem_middle(const ts_mem_ctx *c, int64_t a, int64_t b, int64_t *mids);

#endif /* TS_MEM_H */
