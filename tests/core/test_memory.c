/*
 * test_memory.c - ts_memory_estimate: bytes per parameter, ZeRO sharding,
 * offload, activations, overhead, fit, DeepSpeed cross-check.
 *
 * Expected values are from /work/shared/oracles.md (cited per case, with
 * the tolerance the source's rounding allows) or worked by hand in the
 * comment next to the check.  Hand-worked values are sums and products of
 * exactly representable numbers, so they get 1e-12 relative (summation
 * order only).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"

#define REL_CLOSE(got, want, rel)                                                                  \
    ck_assert_msg(fabs((got) - (want)) <= (rel)*fabs(want), "%s = %.12g, want %.12g (rel tol %g)", \
                  #got, (double)(got), (double)(want), (double)(rel))
#define ABS_CLOSE(got, want, tol)                                                             \
    ck_assert_msg(fabs((got) - (want)) <= (tol), "%s = %.12g, want %.12g (abs tol %g)", #got, \
                  (double)(got), (double)(want), (double)(tol))
#define EXACT 1e-12
#define GIB   1073741824.0

static void plain_run(ts_run *r, double params, int64_t gpus)
{
    ts_run_defaults(r);
    r->model.params = params;
    r->gpus = gpus;
}

/* GPT-3 175B (Brown et al. 2020): L 96, h 12288, a 96, F 4h, V 50257, in
 * Korthikanti et al.'s setting: eager attention with dropout, GeLU MLP,
 * Megatron-LM. */
static void gpt3_run(ts_run *r, int64_t tp, bool sp, ts_recompute rc)
{
    ts_run_defaults(r);
    r->attention = TS_ATTN_EAGER;
    r->dropout = true;
    r->model = (ts_model){
        .layers = 96, .hidden = 12288, .heads = 96, .vocab = 50257, .tied_embeddings = true
    };
    r->seq = 2048;
    r->micro_batch = 1;
    r->tp = tp;
    r->gpus = tp; /* dp 1 */
    r->sequence_parallel = sp;
    r->recompute = rc;
}

static double states(const ts_memory *m)
{
    return m->weights.value + m->grads.value + m->master.value + m->optimizer.value;
}

static void assert_sane(const ts_memory *m)
{
    const ts_term *t[] = { &m->weights,       &m->grads,          &m->master,
                           &m->optimizer,     &m->activations,    &m->buffers,
                           &m->overhead,      &m->total,          &m->act_seed000,
                           &m->deepspeed_gpu, &m->allocated_peak, &m->reserved_peak,
                           &m->runtime };
    size_t i;

    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        ck_assert_msg(isfinite(t[i]->value) && t[i]->value >= 0, "term %zu = %g", i, t[i]->value);
        ck_assert_ptr_nonnull(t[i]->formula);
        ck_assert_ptr_nonnull(t[i]->assumptions);
        ck_assert(t[i]->formula[0] != '\0' && t[i]->assumptions[0] != '\0');
    }
    ck_assert(isfinite(m->headroom_bytes) && isfinite(m->host_bytes_per_node));
    /* The total is the sum of its terms, and reserved >= allocated. */
    REL_CLOSE(m->total.value,
              states(m) + m->activations.value + m->buffers.value + m->overhead.value, EXACT);
    REL_CLOSE(m->total.value, m->reserved_peak.value + m->runtime.value, EXACT);
    ck_assert(m->reserved_peak.value >= m->allocated_peak.value);
    ck_assert(m->stages_len >= 1 && (int64_t)m->stages_len <= m->stages_count);
}

/* ---- bytes per parameter -------------------------------------------- */

typedef struct bpp_case {
    const char *what;
    ts_optimizer opt;
    ts_precision prec, grad;
    bool master;
    double w, g, m, o, total; /* expected bytes per parameter */
} bpp_case;

static const bpp_case bpps[] = {
    /* oracles.md (seeds 000, 003): 2 + 2 + 4 + 4 + 4 = 16. */
    { "adamw", TS_OPT_ADAMW, TS_PREC_BF16, TS_PREC_BF16, true, 2, 2, 4, 8, 16 },
    { "adam", TS_OPT_ADAM, TS_PREC_BF16, TS_PREC_BF16, true, 2, 2, 4, 8, 16 },
    /* oracles.md: with fp32 grads 18 (Megatron-LM). */
    { "adamw fp32 grads", TS_OPT_ADAMW, TS_PREC_BF16, TS_PREC_FP32, true, 2, 4, 4, 8, 18 },
    /* bitsandbytes 8-bit: 1 byte per moment + one fp32 absmax per 2048-element
     * block per moment (optimizer.py@06029dd6 init_state): 2 + 8/2048. */
    { "adam8bit", TS_OPT_ADAM8BIT, TS_PREC_BF16, TS_PREC_BF16, true, 2, 2, 4, 2 + 8.0 / 2048,
      10 + 8.0 / 2048 },
    /* SGD no state: 2 + 2 + 4. */
    { "sgd", TS_OPT_SGD, TS_PREC_BF16, TS_PREC_BF16, true, 2, 2, 4, 0, 8 },
    /* SGD momentum / Lion: one fp32 buffer, 2 + 2 + 4 + 4. */
    { "sgd_momentum", TS_OPT_SGD_MOMENTUM, TS_PREC_BF16, TS_PREC_BF16, true, 2, 2, 4, 4, 12 },
    { "lion", TS_OPT_LION, TS_PREC_BF16, TS_PREC_BF16, true, 2, 2, 4, 4, 12 },
    /* Adafactor without a shape: 8/4096 B per param. */
    { "adafactor", TS_OPT_ADAFACTOR, TS_PREC_BF16, TS_PREC_BF16, true, 2, 2, 4, 8.0 / 4096,
      8 + 8.0 / 4096 },
    /* Pure fp32 Adam: fp32 weights are their own master: 4 + 4 + 0 + 8. */
    { "fp32 adamw", TS_OPT_ADAMW, TS_PREC_FP32, TS_PREC_FP32, true, 4, 4, 0, 8, 16 },
    /* bf16 without a master copy: 2 + 2 + 0 + 8. */
    { "no master", TS_OPT_ADAMW, TS_PREC_BF16, TS_PREC_BF16, false, 2, 2, 0, 8, 12 },
    /* fp8 weights, bf16 grads: 1 + 2 + 4 + 8. */
    { "fp8 weights", TS_OPT_ADAMW, TS_PREC_FP8, TS_PREC_BF16, true, 1, 2, 4, 8, 15 },
    /* oracles.md: inference bf16 2 B/param, nothing else. */
    { "inference", TS_OPT_NONE, TS_PREC_BF16, TS_PREC_BF16, true, 2, 0, 0, 0, 2 },
};

START_TEST(test_bpp)
{
    const bpp_case *c = &bpps[_i];
    ts_run r;
    ts_memory m;
    ts_error err;

    plain_run(&r, 1e9, 8);
    r.optimizer = c->opt;
    r.precision = c->prec;
    r.grad_precision = c->grad;
    r.master_weights = c->master;
    /* FP8 weights come with FP8 compute, as the API defaults them (and
     * Megatron-Core requires: ts_compat.c). */
    if (c->prec == TS_PREC_FP8)
        r.compute_precision = TS_PREC_FP8;
    ck_assert_msg(ts_memory_estimate(&r, &m, &err) == TS_OK, "%s: %s", c->what, err.text);
    REL_CLOSE(m.bpp_weights, c->w, EXACT);
    ck_assert(m.bpp_grads == c->g);
    ck_assert(m.bpp_master == c->m);
    REL_CLOSE(m.bpp_optimizer + 1, c->o + 1, EXACT); /* +1: c->o may be 0 */
    REL_CLOSE(m.bpp_total, c->total, EXACT);
    REL_CLOSE(m.model_state_bytes, 1e9 * c->total, EXACT);
    assert_sane(&m);
}
END_TEST

START_TEST(test_adafactor_shape)
{
    ts_run r;
    ts_memory m;

    /* With a shape, 8/h: h 256 -> 0.03125 B per param. */
    ts_run_defaults(&r);
    r.model = (ts_model){ .layers = 4, .hidden = 256, .heads = 8, .vocab = 1000 };
    r.seq = 512;
    r.optimizer = TS_OPT_ADAFACTOR;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.bpp_optimizer, 8.0 / 256, EXACT);
}
END_TEST

START_TEST(test_70b)
{
    ts_run r;
    ts_memory m;

    /* oracles.md (seed 000): 16 x 70e9 = 1.12e12 B model state;
     * 2 x 70e9 = 140e9 B inference. */
    plain_run(&r, 70e9, 8);
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.model_state_bytes, 1.12e12, EXACT);
    REL_CLOSE(m.inference_bytes, 140e9, EXACT);
    ck_assert(!m.fits); /* ZeRO-1 on 8: 2P + 2P + 12P/8 = 385e9 per GPU */
    REL_CLOSE(states(&m), 4 * 70e9 + 12 * 70e9 / 8, EXACT);

    /* Inference with tp 8 on 8x H100 (640 GB): 140e9 / 8 = 17.5e9 per GPU. */
    plain_run(&r, 70e9, 8);
    r.optimizer = TS_OPT_NONE;
    r.tp = 8;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.weights.value, 17.5e9, EXACT);
    ck_assert(m.grads.value == 0 && m.master.value == 0 && m.optimizer.value == 0);
    ck_assert(m.activations.value == 0);
    ck_assert_ptr_nonnull(strstr(m.activations.assumptions, "not modelled"));
    ck_assert(m.fits);
    assert_sane(&m);
}
END_TEST

/* ---- ZeRO ------------------------------------------------------------ */

START_TEST(test_zero_paper)
{
    /* oracles.md, ZeRO paper Figure 1: P 7.5e9, Nd 64, K 12:
     * 120, 31.4, 16.6, 1.9 GB (rounded to 0.1 GB -> +-0.05e9).
     * Exact: 16P = 120e9; 4P + 12P/64 = 31.40625e9; 2P + 14P/64 =
     * 16.640625e9; 16P/64 = 1.875e9. */
    static const double paper[4] = { 120e9, 31.4e9, 16.6e9, 1.9e9 };
    static const double exact[4] = { 120e9, 31.40625e9, 16.640625e9, 1.875e9 };
    ts_run r;
    ts_memory m;
    int z;

    for (z = 0; z <= 3; z++) {
        plain_run(&r, 7.5e9, 64);
        r.zero = z;
        ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
        ABS_CLOSE(states(&m), paper[z], 0.05e9);
        REL_CLOSE(states(&m), exact[z], EXACT);
        ck_assert_int_eq(m.shard_group, 64);
        REL_CLOSE(m.params_per_gpu, 7.5e9, EXACT);
        assert_sane(&m);
    }
}
END_TEST

/* Megatron-LM's distributed optimizer with its fp32 main grads: 6 + 12/d
 * bytes per parameter (megatron/training/theoretical_memory_usage.py;
 * mbridge's estimator prints 7.5 at d = 8). */
START_TEST(test_megatron_distributed_optimizer)
{
    ts_run r;
    ts_memory m;

    plain_run(&r, 1e9, 8);
    r.framework = TS_FW_MEGATRON;
    r.grad_precision = TS_PREC_FP32;
    r.zero = 1;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(states(&m), (6 + 12.0 / 8) * 1e9, EXACT);
    r.zero = 0; /* no distributed optimizer: 18 */
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(states(&m), 18e9, EXACT);
}
END_TEST

START_TEST(test_zero_shard_group)
{
    ts_run r;
    ts_memory m;

    /* ZeRO shards over dp*cp, not over all GPUs: 64 GPUs, tp 4, cp 2 ->
     * dp 8, Nd 16.  ZeRO-3 per GPU: 16 * 7.5e9 / 4 / 16 = 1.875e9. */
    plain_run(&r, 7.5e9, 64);
    r.tp = 4;
    r.cp = 2;
    r.zero = 3;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert_int_eq(m.shard_group, 16);
    REL_CLOSE(m.params_per_gpu, 7.5e9 / 4, EXACT);
    REL_CLOSE(states(&m), 16 * 7.5e9 / 4 / 16, EXACT);
}
END_TEST

START_TEST(test_moe_expert_sharding)
{
    ts_run r;
    ts_memory m;

    /* Mixtral 8x7B shape (test_model.c: total 46702792704, experts
     * 45097156608, dense 1605636096).  dp 8, ep 8, ZeRO-3: dense over
     * Nd 8, experts first split by ep 8 then over Nd/ep = 1.
     * P_gpu = 1605636096 + 45097156608/8 = 7242780672.
     * weights = 2 (1605636096/8 + 5637144576/1) = 11675698176. */
    ts_run_defaults(&r);
    r.model = (ts_model){ .layers = 32,
                          .hidden = 4096,
                          .heads = 32,
                          .kv_heads = 8,
                          .ffn = 14336,
                          .vocab = 32000,
                          .experts = 8,
                          .top_k = 2,
                          .gated = true };
    r.gpus = 8;
    r.ep = 8;
    r.zero = 3;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.params_per_gpu, 7242780672.0, EXACT);
    REL_CLOSE(m.weights.value, 11675698176.0, EXACT);
    /* grads same split, 2 B: equal to weights. */
    REL_CLOSE(m.grads.value, 11675698176.0, EXACT);
    assert_sane(&m);
}
END_TEST

START_TEST(test_deepspeed)
{
    ts_run r;
    ts_memory m;

    /* oracles.md: DeepSpeed's current estimate_zero2 (PR #5099) for
     * t5-3b, P 2851e6 on 8 GPUs: 2P + 18P/8 = 12.11675e9 B = 11.28 GiB
     * (printed to 0.01 GiB -> +-0.005); the old docs' 4P + 16P/N (15.93
     * GiB) is no longer what the code computes. */
    plain_run(&r, 2851e6, 8);
    r.zero = 2;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ABS_CLOSE(m.deepspeed_gpu.value / GIB, 11.28, 0.005);
    REL_CLOSE(m.deepspeed_gpu.value, 12.11675e9, EXACT);
    ck_assert_ptr_nonnull(strstr(m.deepspeed_gpu.assumptions, "5099"));
    /* ZeRO-3 without a shape: largest layer unknown (0), 18P/8. */
    r.zero = 3;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.deepspeed_gpu.value, 18 * 2851e6 / 8, EXACT);
    /* Stages 0 and 1 have no DeepSpeed estimator: 0. */
    r.zero = 1;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert(m.deepspeed_gpu.value == 0);
}
END_TEST

START_TEST(test_lora)
{
    ts_run r;
    ts_memory m;

    /* trainable 0.01: weights full, the rest scaled: 2 + 0.01 * 14 = 2.14. */
    plain_run(&r, 7e9, 1);
    r.trainable_fraction = 0.01;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.bpp_total, 2.14, EXACT);
    REL_CLOSE(m.weights.value, 14e9, EXACT);
    REL_CLOSE(m.grads.value, 0.02 * 7e9, EXACT);
    REL_CLOSE(m.master.value + m.optimizer.value, 0.12 * 7e9, EXACT);
}
END_TEST

/* LoRA on Llama 3 8B, r 16 on q, k, v, o and the three MLP matrices: per
 * layer 16 ((4096 + 4096) + 2 (4096 + 1024) + (4096 + 4096)) + 16 * 3 *
 * (4096 + 14336) = 1310720, times 32 = 41,943,040 adapters (what HF peft
 * prints for target_modules all-linear).  One GPU, ZeRO 0: bf16 base
 * 2 * 8030261248, adapters 2 + grads 2 + master 4 + Adam 8 bytes each. */
START_TEST(test_lora_rank)
{
    ts_run r;
    ts_memory m;
    double ad = 41943040.0, P = 8030261248.0, emb = 2 * 128256.0 * 4096 + 4096; /* + final norm */

    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("llama3-8b"));
    r.gpus = 1;
    r.zero = 0;
    r.lora_rank = 16;
    r.global_batch = 1;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.weights.value, 2 * P + 2 * ad, EXACT);
    REL_CLOSE(m.master.value, 4 * ad, EXACT);
    REL_CLOSE(m.optimizer.value, 8 * ad, EXACT);
    ck_assert(m.grads.value == 2 * ad || m.grads.value == 0);
    /* QLoRA: the linear base in NF4 (0.5 + 1/64 + 4/16384 B per weight,
     * Dettmers et al. 2023), embeddings, head and final norm stay bf16. */
    r.frozen_precision = TS_QUANT_NF4;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.weights.value, (0.5 + 1.0 / 64 + 4.0 / 16384) * (P - emb) + 2 * emb + 2 * ad, 1e-9);
    assert_sane(&m);
    /* FP8 base (Transformer Engine fp8_model_init): 1 B per linear
     * weight, the rest as before. */
    r.frozen_precision = TS_QUANT_FP8;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.weights.value, 1.0 * (P - emb) + 2 * emb + 2 * ad, 1e-9);
    assert_sane(&m);
}
END_TEST

/* A frozen base keeps a linear's input only for an adapter
 * (ts_mem_act.c, ts_mem_frozen_inputs).  Llama 3 8B (h 4096, F 14336,
 * RMSNorm), one GPU, no recompute, act_b 2, per token per layer:
 *   megatron, LoRA on every linear: every input feeds an adapter, the
 *     whole set as without LoRA;
 *   megatron, q and v only: the MLP input and the down projection's input
 *     go, 2 (4096 + 14336) = 36,864 B;
 *   hf (PEFT's lora_A saves its own fp32 copy, 4 B x 4096 for each of q
 *     and v = 32,768 B): the QKV and MLP inputs, the down input, o_proj's
 *     contiguous input and both RMSNorms' bf16 normalised copies go,
 *     2 (5 x 4096 + 14336) = 69,632 B. */
START_TEST(test_lora_frozen_inputs)
{
    ts_run r;
    ts_memory none, all, qv;
    double tok;

    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("llama3-8b"));
    r.gpus = 1;
    r.zero = 0;
    r.global_batch = 1;
    r.recompute = TS_RECOMPUTE_NONE;
    tok = (double)r.seq * (double)r.micro_batch;
    ck_assert_int_eq(ts_memory_estimate(&r, &none, NULL), TS_OK);
    r.lora_rank = 16;
    r.lora_targets = TS_LORA_ALL_LINEAR;
    ck_assert_int_eq(ts_memory_estimate(&r, &all, NULL), TS_OK);
    REL_CLOSE(all.act_per_layer, none.act_per_layer, EXACT);
    r.lora_targets = TS_LORA_Q | TS_LORA_V;
    ck_assert_int_eq(ts_memory_estimate(&r, &qv, NULL), TS_OK);
    REL_CLOSE(none.act_per_layer - qv.act_per_layer, 36864.0 * tok, 1e-12);
    r.framework = TS_FW_HF;
    r.lora_rank = 0;
    ck_assert_int_eq(ts_memory_estimate(&r, &none, NULL), TS_OK);
    r.lora_rank = 16;
    ck_assert_int_eq(ts_memory_estimate(&r, &qv, NULL), TS_OK);
    REL_CLOSE(none.act_per_layer - qv.act_per_layer, (69632.0 - 32768.0) * tok, 1e-12);
    assert_sane(&qv);
}
END_TEST

/* FSDP's reduce-scatter stream keeps its gradient blocks cached once
 * zero_grad has freed them (ts_mem_stage.c): whichever phase is the
 * allocated peak, the loss phase of a later step still sees them, so the
 * reserved peak is at least the loss phase's bytes plus the sharded fp32
 * gradients, 4 B x 6,738,415,616 / 8 for Llama 2 7B on 8 GPUs.  Here the
 * backward is the allocated peak (the case that once left them out). */
START_TEST(test_fsdp_stream_cache_at_loss)
{
    ts_run r;
    ts_memory m;

    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("llama2-7b"));
    r.gpus = 8;
    r.framework = TS_FW_FSDP;
    r.zero = 3;
    r.grad_precision = TS_PREC_FP32;
    r.recompute = TS_RECOMPUTE_NONE;
    r.micro_batch = 1;
    r.global_batch = 8;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert_int_eq(m.stages[0].peak_phase, TS_PHASE_BACKWARD);
    ck_assert(m.stages[0].reserved_peak >=
              m.stages[0].phase_bytes[TS_PHASE_LOSS] + 4.0 * 6738415616.0 / 8.0);
    assert_sane(&m);
    /* The weights term names the FSDP the run asked for, and FSDP1's flat
     * parameters hold the same bytes (only its step time differs). */
    ck_assert_ptr_nonnull(strstr(m.weights.assumptions, "FSDP2"));
    {
        double total = m.total.value;

        r.fsdp_impl = TS_FSDP_FLAT_PARAM;
        ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
        ck_assert_ptr_nonnull(strstr(m.weights.assumptions, "FSDP1"));
        ck_assert_ptr_null(strstr(m.weights.assumptions, "FSDP2"));
        ck_assert(m.total.value == total);
    }
}
END_TEST

/* Llama 3.2 3B's shape (h 3072, 24 heads of 128, 8 KV heads, 28 layers,
 * SwiGLU F 8192, tied embeddings): the LoRA tests' model. */
static const ts_model llama32_3b = { .layers = 28,
                                     .hidden = 3072,
                                     .heads = 24,
                                     .kv_heads = 8,
                                     .ffn = 8192,
                                     .vocab = 128256,
                                     .gated = true,
                                     .tied_embeddings = true };

/* The hf LoRA run of peft's MetaMathQA benchmark on it: one GPU, 4 x 768
 * tokens, r 32 on q and v, no master copy. */
static void hf_lora_run(ts_run *r)
{
    ts_run_defaults(r);
    r->model = llama32_3b;
    r->framework = TS_FW_HF;
    r->gpus = 1;
    r->zero = 0;
    r->master_weights = false;
    r->seq = 768;
    r->micro_batch = 4;
    r->global_batch = 4;
    r->lora_rank = 32;
    r->lora_targets = TS_LORA_Q | TS_LORA_V;
}

/* liger_kernels on hf_lora_run (Llama 3.2 3B: h 3072, F 8192): each
 * LigerRMSNorm keeps its bf16 input and an fp32 rstd per token (2h + 4)
 * where the eager one keeps x.float() and the normalised bf16 (4h + 2h,
 * the latter not kept under LoRA: the norm weight is frozen), and
 * LigerSiLUMulFunction keeps gate and up, not silu's output (2F less).
 * Per token per layer, LoRA: 2 x 4h - 2 x (2h + 4) + 2F = 28,664 B;
 * full fine-tuning: 2 x 6h - 2 x (2h + 4) + 2F = 40,952 B.  A Liger run
 * outside framework hf is a 400. */
START_TEST(test_liger_kernels_memory)
{
    ts_run r;
    ts_memory eager, lg;
    ts_error e;
    double tok = 768.0 * 4.0;

    hf_lora_run(&r);
    ck_assert_int_eq(ts_memory_estimate(&r, &eager, NULL), TS_OK);
    r.liger_kernels = true;
    ck_assert_int_eq(ts_memory_estimate(&r, &lg, NULL), TS_OK);
    REL_CLOSE(eager.act_per_layer - lg.act_per_layer, 28664.0 * tok, 1e-12);
    assert_sane(&lg);
    r.lora_rank = 0;
    ck_assert_int_eq(ts_memory_estimate(&r, &lg, NULL), TS_OK);
    r.liger_kernels = false;
    ck_assert_int_eq(ts_memory_estimate(&r, &eager, NULL), TS_OK);
    REL_CLOSE(eager.act_per_layer - lg.act_per_layer, 40952.0 * tok, 1e-12);
    r.liger_kernels = true;
    r.framework = TS_FW_DEEPSPEED;
    ck_assert_int_eq(ts_memory_estimate(&r, &lg, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "liger_kernels");
}
END_TEST

/* lora_impl automodel drops each adapter's output, keeping only its
 * 1-byte mask; PEFT drops the input and, with adapters in the model's
 * dtype (both sides here), keeps the dropped bf16 copy and the mask.  On
 * hf_lora_run (q and v adapted, lora_dropout 0.1): PEFT 3 B x (q 3072 +
 * v 3072), AutoModel 1 B x (q 24 x 128 = 3072 + v 8 x 128 = 1024):
 * 14,336 B less a token a layer. */
START_TEST(test_lora_impl_memory)
{
    ts_run r;
    ts_memory pe, am;
    double tok = 768.0 * 4.0;

    hf_lora_run(&r);
    r.lora_dropout = 0.1;
    r.adapter_precision = TS_ADAPTER_MODEL;
    ck_assert_int_eq(ts_memory_estimate(&r, &pe, NULL), TS_OK);
    r.lora_impl = TS_LORA_IMPL_AUTOMODEL;
    ck_assert_int_eq(ts_memory_estimate(&r, &am, NULL), TS_OK);
    REL_CLOSE(pe.act_per_layer - am.act_per_layer, 14336.0 * tok, 1e-12);
    assert_sane(&am);
}
END_TEST

/* frozen_precision gptq: autograd keeps each layer's dequantised fp16
 * weights for the input's gradient.  On hf_lora_run (Llama 3.2 3B: per
 * layer q, o 3072 x 3072, k, v 3072 x 1024, three MLP 3072 x 8192 =
 * 100,663,296 weights, with its two norms 6,144 and 1/28 of the final
 * one): no recompute keeps 2 B of each in every layer's saved set; full
 * recompute keeps only the layer input, the weights join the backward's
 * working set. */
START_TEST(test_gptq_kept_memory)
{
    ts_run r;
    ts_memory nf, gq;
    double w = 2.0 * (100663296.0 + 6144.0 + 3072.0 / 28.0);

    hf_lora_run(&r);
    r.frozen_precision = TS_QUANT_NF4;
    ck_assert_int_eq(ts_memory_estimate(&r, &nf, NULL), TS_OK);
    r.frozen_precision = TS_QUANT_GPTQ;
    ck_assert_int_eq(ts_memory_estimate(&r, &gq, NULL), TS_OK);
    REL_CLOSE(gq.act_per_layer - nf.act_per_layer, w, 1e-9);
    assert_sane(&gq);
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_memory_estimate(&r, &gq, NULL), TS_OK);
    r.frozen_precision = TS_QUANT_NF4;
    ck_assert_int_eq(ts_memory_estimate(&r, &nf, NULL), TS_OK);
    REL_CLOSE(gq.act_per_layer, nf.act_per_layer, 1e-12);
    REL_CLOSE(gq.act_layer_full - nf.act_layer_full, w, 1e-9);
}
END_TEST

/* PEFT's LoRA on q_proj and v_proj only (its default for Llama), r 32 on
 * Llama 3.2 3B (h 3072, 24 heads, 8 KV heads, 28 layers): per layer
 * q 32 (3072 + 3072) = 196608 and v 32 (3072 + 1024) = 131072, times 28
 * = 9,175,040 adapters: num_trainable_params of peft's
 * method_comparison/MetaMathQA/results/lora--llama-3.2-3B-rank32.json
 * (peft@0a179c1e).  One GPU, ZeRO 0: Adam 8 B, master 4 B each. */
START_TEST(test_lora_targets)
{
    ts_run r;
    ts_memory m;
    double ad = 9175040.0;

    ts_run_defaults(&r);
    r.model = llama32_3b;
    r.gpus = 1;
    r.zero = 0;
    r.seq = 768;
    r.lora_rank = 32;
    r.lora_targets = TS_LORA_Q | TS_LORA_V;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.optimizer.value, 8 * ad, EXACT);
    REL_CLOSE(m.master.value, 4 * ad, EXACT);
    /* all-linear at r 16: per layer 16 ((3072 + 3072) + 2 (3072 + 1024)
     * + (3072 + 3072)) + 16 * 3 (3072 + 8192) = 327680 + 540672, times
     * 28 = 24,313,856. */
    r.lora_rank = 16;
    r.lora_targets = TS_LORA_ALL_LINEAR;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.optimizer.value, 8 * 24313856.0, EXACT);
    /* The MLP alone (gate, up, down), r 10: 10 * 3 * 11264 * 28 = 9,461,760. */
    r.lora_rank = 10;
    r.lora_targets = TS_LORA_GATE | TS_LORA_UP | TS_LORA_DOWN;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.optimizer.value, 8 * 9461760.0, EXACT);
    /* A fused query_key_value (GPT-NeoX), r 8: 8 (3072 + 3072 + 2 * 1024)
     * per layer, 28 layers = 1,835,008. */
    r.lora_rank = 8;
    r.lora_targets = TS_LORA_QKV;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.optimizer.value, 8 * 1835008.0, EXACT);
    /* A set the API never makes is refused, not silently empty. */
    r.lora_targets = 0;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_EINVAL);
    r.lora_targets = TS_LORA_QKV | TS_LORA_Q;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_EINVAL);
    r.lora_targets = 256;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_EINVAL);
}
END_TEST

/* qk_norm (Qwen3, Gemma 3) on hf_lora_run's shape (Llama 3.2 3B: q 3072,
 * k 1024 wide), 4 x 768 tokens, per token per layer of the full set:
 * - fused (megatron): each norm keeps its input, 2 x 4096 = 8,192 B;
 * - eager (fsdp, hf full training): x.float() and the normalised copy,
 *   (4 + 2) x 4096 = 24,576 B;
 * - hf LoRA: the norm weights are frozen, so the normalised copy is not
 *   kept: 4 x 4096 = 16,384 B. */
START_TEST(test_qk_norm_memory)
{
    ts_run r;
    ts_memory a, b;
    double tokens = 4 * 768.0;

    hf_lora_run(&r);
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.model.qk_norm = true;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(b.act_layer_full - a.act_layer_full, 16384 * tokens, 1e-12);
    r.lora_rank = 0;
    r.framework = TS_FW_FSDP;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    r.model.qk_norm = false;
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    REL_CLOSE(b.act_layer_full - a.act_layer_full, 24576 * tokens, 1e-12);
    r.framework = TS_FW_MEGATRON;
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.model.qk_norm = true;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(b.act_layer_full - a.act_layer_full, 8192 * tokens, 1e-12);
}
END_TEST

/* framework hf (transformers + PEFT), Llama 3.2 3B, 4 x 768 tokens:
 * - adapters in fp32 (autocast_adapter_dtype): weights 2 P + 4 ad, no
 *   master copy (ad = 9,175,040 at r 32 on q_proj, v_proj);
 * - lora_A saves a 4-byte copy of each adapted matrix's input: q and v
 *   (h each) against o (a d = 3072): 4 (2 h - h) = 12288 B per token per
 *   layer more in the layer's full set;
 * - transformers' RoPE keeps no fp32 q, k: full training under fsdp
 *   counts 4 (q + kv) = 4 (3072 + 1024) = 16384 B per token more. */
START_TEST(test_hf_framework)
{
    ts_run r;
    ts_memory qv, o, hf, fs;
    double ad = 9175040.0, tokens = 4 * 768.0;

    hf_lora_run(&r);
    ck_assert_int_eq(ts_memory_estimate(&r, &qv, NULL), TS_OK);
    REL_CLOSE(qv.weights.value, 2 * qv.params.total + 4 * ad, 1e-12);
    ck_assert(qv.master.value == 0);
    REL_CLOSE(qv.optimizer.value, 8 * ad, EXACT);
    r.lora_targets = TS_LORA_O;
    ck_assert_int_eq(ts_memory_estimate(&r, &o, NULL), TS_OK);
    REL_CLOSE(qv.act_layer_full - o.act_layer_full, 12288 * tokens, 1e-12);
    assert_sane(&qv);
    r.lora_rank = 0;
    ck_assert_int_eq(ts_memory_estimate(&r, &hf, NULL), TS_OK);
    r.framework = TS_FW_FSDP;
    ck_assert_int_eq(ts_memory_estimate(&r, &fs, NULL), TS_OK);
    REL_CLOSE(fs.act_layer_full - hf.act_layer_full, 16384 * tokens, 1e-12);
    /* Learned absolute positions (GPT-2, OPT, MPT: pos_embeddings) mean
     * no rotary: the fp32 q/k copies are not there either. */
    r.model.pos_embeddings = 2048;
    ck_assert_int_eq(ts_memory_estimate(&r, &fs, NULL), TS_OK);
    REL_CLOSE(fs.act_layer_full, hf.act_layer_full, 1e-12);
}
END_TEST

/* lora_dropout (issue 26), by hand per token per layer.  Megatron, h
 * 1024, 16 heads, two-matrix MLP F 4096, tp 1, every linear adapted:
 * adapter inputs q, k, v, o 1024 each, up 1024, down 4096 = 9216
 * elements, each a bf16 dropped copy and a 1-byte mask: 3 x 9216 =
 * 27,648 B, in the whole set and in Megatron's selective set; full
 * recompute keeps only the layer input.  hf (Llama 3.2 3B of
 * test_hf_framework, q and v): the fp32 copy lora_A saved already
 * becomes the dropped one, the mask adds 1 B x 2 x 3072 = 6,144 B. */
START_TEST(test_lora_dropout_memory)
{
    ts_run r;
    ts_memory a, b;
    double tokens;

    ts_run_defaults(&r);
    r.model = (ts_model){
        .layers = 4, .hidden = 1024, .heads = 16, .kv_heads = 16, .ffn = 4096, .vocab = 32000
    };
    r.gpus = 1;
    r.zero = 0;
    r.seq = 2048;
    r.micro_batch = 2;
    r.global_batch = 2;
    r.lora_rank = 8;
    r.lora_targets = TS_LORA_ALL_LINEAR;
    tokens = 2 * 2048.0;
    for (int rc = 0; rc < 3; rc++) {
        r.recompute = rc == 0   ? TS_RECOMPUTE_NONE
                      : rc == 1 ? TS_RECOMPUTE_SELECTIVE
                                : TS_RECOMPUTE_FULL;
        r.lora_dropout = 0;
        ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
        r.lora_dropout = 0.1;
        ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
        REL_CLOSE(b.act_layer_full - a.act_layer_full, 27648 * tokens, 1e-12);
        REL_CLOSE(b.act_per_layer - a.act_per_layer, rc == 2 ? 0 : 27648 * tokens, 1e-12);
        assert_sane(&b);
    }
    hf_lora_run(&r);
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.lora_dropout = 0.05;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(b.act_layer_full - a.act_layer_full, 6144 * 4 * 768.0, 1e-12);
}
END_TEST

/* adapter_precision (issue 26), by hand on test_lora_dropout_memory's hf
 * model (h 3072, 24 heads of 128, 8 KV heads, q and v adapted, r 32).
 * fp32 adapters (hf's default): lora_A keeps a 4-byte copy of each
 * adapted input, 2 x 4 x 3072 = 24,576 B a token a layer, and the frozen
 * QKV linear's bf16 input is kept by no one (6,144 B); in the model's
 * dtype lora_A reads that input itself: 18,432 B a token a layer less.
 * Adapter states: q 32 (3072 + 3072) + v 32 (3072 + 1024) = 327,680 a
 * layer, 28 layers, weights 4 B against 2 B each. */
START_TEST(test_adapter_precision_memory)
{
    ts_run r;
    ts_memory a, b;
    double adapters = 327680.0 * 28;

    hf_lora_run(&r);
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.adapter_precision = TS_ADAPTER_MODEL;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(a.act_layer_full - b.act_layer_full, 18432.0 * 4 * 768, 1e-12);
    REL_CLOSE(a.weights.value - b.weights.value, 2.0 * adapters, 1e-12);
    assert_sane(&b);
    r.adapter_precision = TS_ADAPTER_FP32;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    ck_assert(b.total.value == a.total.value);
}
END_TEST

/* The caching allocator keeps the loss phase's blocks: with per-layer
 * checkpointing the loss phase reserves fp32 logits blocks that a
 * larger later phase reuses, so reserved never drops below the loss
 * phase's allocation. */
START_TEST(test_reserved_keeps_loss_blocks)
{
    ts_run r;
    ts_memory m;

    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("llama3-8b"));
    r.framework = TS_FW_HF;
    r.gpus = 1;
    r.zero = 0;
    r.global_batch = 1;
    r.recompute = TS_RECOMPUTE_NONE;
    r.lora_rank = 16;
    r.seq = 2048;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert(m.reserved_peak.value >= m.phases[TS_PHASE_LOSS]);
    ck_assert(m.reserved_peak.value >= m.allocated_peak.value);
    assert_sane(&m);
}
END_TEST

/* The names PEFT uses, to the set and back. */
START_TEST(test_lora_target_names)
{
    unsigned set;
    size_t at, len;
    char t[128];
    const char *s;

    s = " q_proj , v_proj";
    ck_assert_int_eq(ts_lora_targets_parse(s, strlen(s), &set, &at, &len), 0);
    ck_assert_uint_eq(set, TS_LORA_Q | TS_LORA_V);
    ck_assert_uint_eq(ts_lora_targets_text(set, t, sizeof t), 13);
    ck_assert_str_eq(t, "q_proj,v_proj");
    s = "all-linear";
    ck_assert_int_eq(ts_lora_targets_parse(s, strlen(s), &set, &at, &len), 0);
    ck_assert_uint_eq(set, TS_LORA_ALL_LINEAR);
    ts_lora_targets_text(set, t, sizeof t);
    ck_assert_str_eq(t, "all-linear");
    /* Every name listed out is the same set: all-linear. */
    s = "down_proj,up_proj,gate_proj,o_proj,v_proj,k_proj,q_proj";
    ck_assert_int_eq(ts_lora_targets_parse(s, strlen(s), &set, &at, &len), 0);
    ck_assert_uint_eq(set, TS_LORA_ALL_LINEAR);
    s = "peft-default";
    ck_assert_int_eq(ts_lora_targets_parse(s, strlen(s), &set, &at, &len), 0);
    ck_assert_uint_eq(set, TS_LORA_Q | TS_LORA_V);
    /* The first bad item's place: the empty one between the commas. */
    s = "q_proj,,v_proj";
    ck_assert_int_eq(ts_lora_targets_parse(s, strlen(s), &set, &at, &len), -1);
    ck_assert_uint_eq(at, 7);
    ck_assert_uint_eq(len, 0);
    s = "q_proj,lm_head";
    ck_assert_int_eq(ts_lora_targets_parse(s, strlen(s), &set, &at, &len), -1);
    ck_assert_uint_eq(at, 7);
    ck_assert_uint_eq(len, 7);
    s = "";
    ck_assert_int_eq(ts_lora_targets_parse(s, 0, &set, &at, &len), -1);
    s = "query_key_value,v_proj";
    ck_assert_int_eq(ts_lora_targets_parse(s, strlen(s), &set, &at, &len), -1);
    ck_assert_uint_eq(len, strlen(s));
    /* Cut to the buffer, the full length still returned. */
    ck_assert_uint_eq(ts_lora_targets_text(TS_LORA_Q | TS_LORA_V, t, 5), 13);
    ck_assert_str_eq(t, "q_pr");
}
END_TEST

/* lora_modules_to_save's names, as lora_targets' are read. */
START_TEST(test_lora_save_names)
{
    unsigned set;
    size_t at, len;
    char t[64];
    const char *s;

    s = " lm_head , embed_tokens";
    ck_assert_int_eq(ts_lora_save_parse(s, strlen(s), &set, &at, &len), 0);
    ck_assert_uint_eq(set, TS_LORA_SAVE_EMBED | TS_LORA_SAVE_HEAD);
    ck_assert_uint_eq(ts_lora_save_text(set, t, sizeof t), 20);
    ck_assert_str_eq(t, "embed_tokens,lm_head");
    s = "  ";
    ck_assert_int_eq(ts_lora_save_parse(s, strlen(s), &set, &at, &len), 0);
    ck_assert_uint_eq(set, 0);
    ck_assert_uint_eq(ts_lora_save_text(0, t, sizeof t), 0);
    ck_assert_str_eq(t, "");
    /* A classification head (score) is not one trainsize reads: refused
     * at its place. */
    s = "lm_head,score";
    ck_assert_int_eq(ts_lora_save_parse(s, strlen(s), &set, &at, &len), -1);
    ck_assert_uint_eq(at, 8);
    ck_assert_uint_eq(len, 5);
    /* Other families' names for the two, each bit written once by its
     * Llama name; "none" is the empty set. */
    s = "wte,embed_out,word_embeddings";
    ck_assert_int_eq(ts_lora_save_parse(s, strlen(s), &set, &at, &len), 0);
    ck_assert_uint_eq(set, TS_LORA_SAVE_ALL);
    ck_assert_uint_eq(ts_lora_save_text(set, t, sizeof t), 20);
    ck_assert_str_eq(t, "embed_tokens,lm_head");
    s = " none ";
    ck_assert_int_eq(ts_lora_save_parse(s, strlen(s), &set, &at, &len), 0);
    ck_assert_uint_eq(set, 0);
    s = "lm_head,";
    ck_assert_int_eq(ts_lora_save_parse(s, strlen(s), &set, &at, &len), -1);
    ck_assert_uint_eq(at, 8);
    ck_assert_uint_eq(len, 0);
    ck_assert_uint_eq(ts_lora_save_text(TS_LORA_SAVE_HEAD, t, 4), 7);
    ck_assert_str_eq(t, "lm_");
}
END_TEST

/* lora_modules_to_save on hf_lora_run (Llama 3.2 3B, vocab 128256 x
 * hidden 3072 = 394,002,432 per copy; bf16, no master copy, AdamW with
 * fp32 moments), one GPU.  Both copies, C = 788,004,864: weights +2 C,
 * gradients +2 C (bf16, PyTorch's grads take the parameter's dtype; live
 * at the optimizer step, not at the loss peak), optimizer +8 C, master
 * none.  With the run's master copy (under hf the fp32 parameter
 * itself, autocast casting it: no 16-bit weights kept): master +4 C,
 * gradients fp32 +4 C, optimizer +8 C.  Under paged 8-bit AdamW the copies'
 * vocab x hidden states are all in managed memory: the allocator's
 * optimizer term does not move (the r 32 q/v adapters are under 1e5
 * elements each), the paged runtime share grows by the copies' states.
 * Half the copies (lm_head alone) is half of each.  Without adapters
 * the option is a 400, as is a set outside the two modules. */
START_TEST(test_lora_save_memory)
{
    ts_run r;
    ts_memory a, b;
    double C = 2.0 * 128256.0 * 3072.0;
    ts_error e;

    hf_lora_run(&r);
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.lora_save = TS_LORA_SAVE_EMBED | TS_LORA_SAVE_HEAD;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(b.weights.value - a.weights.value, 2 * C, 1e-12);
    REL_CLOSE(b.optimizer.value - a.optimizer.value, 8 * C, 1e-12);
    ck_assert(b.master.value == 0);
    /* The step holds weights, gradients and states: 2 + 2 + 8 a copy. */
    REL_CLOSE(b.stages[0].phase_bytes[TS_PHASE_OPTIMIZER] -
                  a.stages[0].phase_bytes[TS_PHASE_OPTIMIZER],
              12 * C, 1e-12);
    assert_sane(&b);
    r.lora_save = TS_LORA_SAVE_HEAD;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(b.optimizer.value - a.optimizer.value, 4 * C, 1e-12);
    r.lora_save = 0;
    r.master_weights = true;
    r.grad_precision = TS_PREC_FP32;
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.lora_save = TS_LORA_SAVE_ALL;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(b.master.value, 4 * C, 1e-12);
    REL_CLOSE(b.stages[0].phase_bytes[TS_PHASE_OPTIMIZER] -
                  a.stages[0].phase_bytes[TS_PHASE_OPTIMIZER],
              (4 + 4 + 8) * C, 1e-12);
    hf_lora_run(&r);
    r.optimizer = TS_OPT_PAGED_ADAM8BIT;
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.lora_save = TS_LORA_SAVE_ALL;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(b.optimizer.value, a.optimizer.value, 1e-12);
    /* lm_head's copy 2 + 8/2048 B; embed_tokens' copy is an
     * nn.Embedding, whose states the HF Trainer keeps 32-bit: 8 B. */
    REL_CLOSE(b.runtime.value - a.runtime.value, C / 2 * (2.0 + 8.0 / 2048.0) + C / 2 * 8.0, 1e-9);
    /* Full fine-tuning under 8-bit AdamW (not paged): the input
     * embedding's 394,002,432 parameters at 8 B under hf, at 2 + 8/2048
     * B under fsdp (no such override). */
    hf_lora_run(&r);
    r.lora_rank = 0;
    r.optimizer = TS_OPT_ADAM8BIT;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    r.framework = TS_FW_FSDP;
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    REL_CLOSE(b.optimizer.value - a.optimizer.value, C / 2 * (8.0 - 2.0 - 8.0 / 2048.0), 1e-9);
    r.framework = TS_FW_HF;
    r.lora_save = TS_LORA_SAVE_ALL;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "lora_modules_to_save");
    hf_lora_run(&r);
    r.lora_save = 4;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, &e), TS_EINVAL);
    ck_assert_str_eq(e.field, "lora_modules_to_save");
}
END_TEST

/* lora_modules_to_save under accelerate's FSDP (hf, zero 3, 8 GPUs):
 * PEFT wraps each copy as its own FSDP unit, so the forward working set
 * (a unit gathered and the next prefetched, 2 x 2 B) is sized by a
 * copy, 128256 x 3072 = 394,002,432, not by a Llama 3.2 3B layer,
 * 3072 x 8192 + 3 x 3072 x 8192 + 2 x 3072 = 100,669,440.  The forward
 * phase grows by the copies' sharded weights and states, (2 + 8) C / 8,
 * and 4 (394,002,432 - 100,669,440). */
START_TEST(test_lora_save_fsdp_units)
{
    ts_run r;
    ts_memory a, b;
    double C = 2.0 * 128256.0 * 3072.0;

    hf_lora_run(&r);
    r.gpus = 8;
    r.zero = 3;
    r.global_batch = 32;
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.lora_save = TS_LORA_SAVE_ALL;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(b.stages[0].phase_bytes[TS_PHASE_FORWARD] - a.stages[0].phase_bytes[TS_PHASE_FORWARD],
              (2 + 8) * C / 8 + 4 * (394002432.0 - 100669440.0), 1e-12);
}
END_TEST

/* The one adapter count both models use (ts_lora_layer_params), by hand:
 * Llama 3.2 3B (h 3072, kv width 1024, F 8192) as in test_lora_targets,
 * q + v at r 32: 196608 + 131072 = 327680; all-linear at r 16: 327680 +
 * 540672 = 868352.  Mixtral 8x7B (h 4096, kv width 1024, F 14336),
 * all-linear at r 16: attention 16 (8192 + 5120 + 5120 + 8192) = 425984,
 * each expert's MLP 16 * 3 (4096 + 14336) = 884736; all 8 experts (the
 * memory model) 7077888, or 2 of them (the step model's 8 / ep 4). */
START_TEST(test_lora_layer_params)
{
    ts_model l3 = { .layers = 28,
                    .hidden = 3072,
                    .heads = 24,
                    .kv_heads = 8,
                    .ffn = 8192,
                    .vocab = 128256,
                    .gated = true };
    ts_model mx = { .layers = 32,
                    .hidden = 4096,
                    .heads = 32,
                    .kv_heads = 8,
                    .ffn = 14336,
                    .vocab = 32000,
                    .experts = 8,
                    .top_k = 2,
                    .gated = true };

    REL_CLOSE(ts_lora_layer_params(&l3, TS_LORA_Q | TS_LORA_V, 32, 1), 327680.0, EXACT);
    REL_CLOSE(ts_lora_layer_params(&l3, TS_LORA_ALL_LINEAR, 16, 1), 868352.0, EXACT);
    REL_CLOSE(ts_lora_layer_params(&mx, TS_LORA_ALL_LINEAR, 16, 8), 425984.0 + 7077888.0, EXACT);
    REL_CLOSE(ts_lora_layer_params(&mx, TS_LORA_ALL_LINEAR, 16, 2), 425984.0 + 1769472.0, EXACT);
    /* A two-matrix MLP has no gate: up and down only, 16 * 2 (3072 + 8192). */
    l3.gated = false;
    REL_CLOSE(ts_lora_layer_params(&l3, TS_LORA_GATE | TS_LORA_UP | TS_LORA_DOWN, 16, 1), 360448.0,
              EXACT);
    /* Gemma 7B: 16 heads of head_dim 256, q_proj and v_proj 3072 -> 4096:
     * r 8 (3072 + 4096) each, 2 x 57,344 = 114,688 per layer (x 28 layers
     * = 3,211,264); o_proj 4096 -> 3072 the same.  MoE experts moe_ffn
     * wide: Mixtral's shape with 1408-wide experts, r 16 on up:
     * 16 (4096 + 1408) per expert. */
    {
        ts_model g = { .layers = 28,
                       .hidden = 3072,
                       .heads = 16,
                       .kv_heads = 16,
                       .head_dim = 256,
                       .ffn = 24576,
                       .vocab = 256000,
                       .gated = true };

        REL_CLOSE(ts_lora_layer_params(&g, TS_LORA_Q | TS_LORA_V, 8, 1), 114688.0, EXACT);
        REL_CLOSE(ts_lora_layer_params(&g, TS_LORA_O, 8, 1), 57344.0, EXACT);
        mx.moe_ffn = 1408;
        REL_CLOSE(ts_lora_layer_params(&mx, TS_LORA_UP, 16, 8), 8.0 * 16.0 * (4096 + 1408), EXACT);
    }
}
END_TEST

/* bitsandbytes' paged 8-bit AdamW: 2 + 8/2048 B per trained param (one
 * fp32 absmax per 2048-element block per state); the states of tensors
 * of 1e5 elements or more live in CUDA managed memory.  Llama 3 8B LoRA
 * r 16 all-linear: the MLP adapters' long side r F = 16 * 14336 =
 * 229,376 >= 1e5 (three per matrix kind: gate, up, down), every r h =
 * 65,536 and r kv = 16,384 < 1e5: paged 3 * 229376 of 1310720 per
 * layer = 0.525.  The paged part is runtime (outside the caching
 * allocator, like the CUDA context): not in optimizer, allocated or
 * reserved; the total counts it. */
START_TEST(test_paged_adam8bit)
{
    ts_run r;
    ts_memory m, u;
    double ad = 41943040.0, bpp = 2.0 + 8.0 / 2048, paged = 0.525 * bpp * ad;

    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("llama3-8b"));
    r.gpus = 1;
    r.zero = 0;
    r.lora_rank = 16;
    r.global_batch = 1;
    r.optimizer = TS_OPT_ADAM8BIT;
    ck_assert_int_eq(ts_memory_estimate(&r, &u, NULL), TS_OK);
    REL_CLOSE(u.optimizer.value, bpp * ad, EXACT);
    r.optimizer = TS_OPT_PAGED_ADAM8BIT;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.optimizer.value, bpp * ad - paged, 1e-9);
    REL_CLOSE(m.runtime.value - r.overhead_gib * GIB, paged, 1e-9);
    REL_CLOSE(u.allocated_peak.value - m.allocated_peak.value, paged, 1e-9);
    REL_CLOSE(m.total.value, u.total.value, 1e-12);
    assert_sane(&m);
}
END_TEST

/* FSDP's eager modules: RMSNorm keeps an fp32 copy of its input (4h) and
 * the normalised act_b h; LayerNorm is one kernel keeping its input and
 * 8 B of statistics.  Two norms per layer: the full set differs by
 * 2 (4h + 2h - 2h - 8) = 8h - 16 bytes per token (h 4096: 32752). */
START_TEST(test_fsdp_norms)
{
    ts_run r;
    ts_memory rms, ln;
    double tokens = 8192;

    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("llama3-8b"));
    r.framework = TS_FW_FSDP;
    r.zero = 3;
    ck_assert_int_eq(ts_memory_estimate(&r, &rms, NULL), TS_OK);
    r.norm = TS_NORM_LAYERNORM;
    ck_assert_int_eq(ts_memory_estimate(&r, &ln, NULL), TS_OK);
    REL_CLOSE(rms.act_layer_full - ln.act_layer_full, (8.0 * 4096 - 16) * tokens, EXACT);
    /* Megatron fuses both: no difference. */
    r.framework = TS_FW_MEGATRON;
    ck_assert_int_eq(ts_memory_estimate(&r, &ln, NULL), TS_OK);
    r.norm = TS_NORM_RMSNORM;
    ck_assert_int_eq(ts_memory_estimate(&r, &rms, NULL), TS_OK);
    ck_assert(rms.act_layer_full == ln.act_layer_full);
}
END_TEST

/* Selective recompute under fsdp is Megatron's (the attention core's
 * scores recomputed): with FlashAttention nothing is dropped, the
 * no-recompute set.  torchtitan's per-op checkpoint (selective_op,
 * parallelize_llama.py@9dec370 _save_list) keeps the block input, the
 * SDPA output and its fp32 logsumexp, and the 1st, 3rd, 5th and 7th
 * aten.mm outputs (wq, wv, w1, w2).  Hand computation, Llama 3 8B (h
 * 4096, 32 heads, 8 KV heads of 128, ffn 14336), bf16, tp 1: 2 (4096 +
 * 4096 + 4096 + 1024 + 14336 + 4096) + 4 x 32 = 63616 bytes per token
 * per layer. */
START_TEST(test_fsdp_selective_op)
{
    ts_run r;
    ts_memory sel, op;
    double tokens = 8192;

    ts_run_defaults(&r);
    ts_run_apply_preset(&r, ts_preset_find("llama3-8b"));
    r.framework = TS_FW_FSDP;
    r.zero = 3;
    r.attention = TS_ATTN_FLASH;
    r.recompute = TS_RECOMPUTE_SELECTIVE;
    ck_assert_int_eq(ts_memory_estimate(&r, &sel, NULL), TS_OK);
    REL_CLOSE(sel.act_per_layer, sel.act_layer_full, EXACT);
    r.recompute = TS_RECOMPUTE_SELECTIVE_OP;
    ck_assert_int_eq(ts_memory_estimate(&r, &op, NULL), TS_OK);
    REL_CLOSE(op.act_per_layer, 63616.0 * tokens, EXACT);
    REL_CLOSE(op.act_layer_full, sel.act_layer_full, EXACT);
}
END_TEST

START_TEST(test_offload)
{
    ts_run r;
    ts_memory m;

    /* ZeRO-2 + offload_optimizer, 7.5e9 on 64: master, moments and the
     * fp32 gradient partition leave HBM (oracles.md, DeepSpeed memory
     * docs: 16-18 B/param of host RAM, not 12); host per GPU
     * 16 * 7.5e9 / 64 = 1.875e9, per node x8 = 15e9. */
    plain_run(&r, 7.5e9, 64);
    r.zero = 2;
    r.offload_optimizer = true;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert(m.master.value == 0 && m.optimizer.value == 0 && m.grads.value == 0);
    REL_CLOSE(m.host_bytes_per_gpu, 1.875e9, EXACT);
    REL_CLOSE(m.host_bytes_per_node, 15e9, EXACT);
    /* GPU keeps the 16-bit weights, 2P = 15e9 (oracles.md). */
    REL_CLOSE(states(&m), 15e9, EXACT);
    assert_sane(&m);

    /* ZeRO-3 + both offloads: weights too, host 18 * 7.5e9 / 64 =
     * 2.109375e9 per GPU (the 18 of oracles.md); nothing stays on GPU. */
    r.zero = 3;
    r.offload_params = true;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert(m.weights.value == 0);
    REL_CLOSE(m.host_bytes_per_gpu, 2.109375e9, EXACT);
    ck_assert(states(&m) == 0);

    /* 4 GPUs on an 8-GPU node: host RAM for 4, 16 * 7.5e9 / 4 * 4 = 120e9. */
    plain_run(&r, 7.5e9, 4);
    r.zero = 1;
    r.offload_optimizer = true;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.host_bytes_per_gpu, 30e9, EXACT);
    REL_CLOSE(m.host_bytes_per_node, 120e9, EXACT);

    /* No offload, no host RAM. */
    plain_run(&r, 7.5e9, 64);
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert(m.host_bytes_per_gpu == 0 && m.host_bytes_per_node == 0);
}
END_TEST

/* ---- activations ----------------------------------------------------- */

#define GPT3_SBH (2048.0 * 1 * 12288) /* s b h = 25165824 */

typedef struct act_case {
    const char *what;
    int64_t tp;
    bool sp;
    ts_recompute rc;
    double coef; /* per-layer bytes / (s b h), Korthikanti Table 2 */
} act_case;

/* oracles.md "Activations per layer", GPT-3 175B: 5as/h = 5*96*2048/12288
 * = 80; c1 = 34 (F = 4h); t = 8. */
static const act_case acts[] = {
    { "none", 1, false, TS_RECOMPUTE_NONE, 34 + 80 },                /* 114 */
    { "tp", 8, false, TS_RECOMPUTE_NONE, 10 + 24.0 / 8 + 80.0 / 8 }, /* 23 */
    { "tp+sp", 8, true, TS_RECOMPUTE_NONE, 34.0 / 8 + 80.0 / 8 },    /* 14.25 */
    { "selective", 1, false, TS_RECOMPUTE_SELECTIVE, 34 },
    { "tp selective", 8, false, TS_RECOMPUTE_SELECTIVE, 10 + 24.0 / 8 }, /* 13 */
    { "tp+sp selective", 8, true, TS_RECOMPUTE_SELECTIVE, 34.0 / 8 },    /* 4.25 */
    { "full", 1, false, TS_RECOMPUTE_FULL, 2 },
    { "tp full", 8, false, TS_RECOMPUTE_FULL, 2 },
    { "tp+sp full", 8, true, TS_RECOMPUTE_FULL, 2.0 / 8 },
    { "sp tp1 no-op", 1, true, TS_RECOMPUTE_NONE, 34 + 80 },
};

START_TEST(test_activations_table)
{
    const act_case *c = &acts[_i];
    ts_run r;
    ts_memory m;
    double t = (double)c->tp, tr = c->sp || c->tp == 1 ? t : 1.0, loss, seq2, act;

    gpt3_run(&r, c->tp, c->sp, c->rc);
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.act_per_layer, GPT3_SBH * c->coef, EXACT);
    ck_assert_int_eq(m.layers_per_stage, 96);
    ck_assert_int_eq(m.in_flight, 1);
    /* pp 1: the loss phase sets the peak.  Megatron's fused
     * vocab-parallel cross-entropy: bf16 logits + one fp32 copy,
     * (2 + 4) V / t per token. */
    loss = 6.0 * 50257 / t * 2048;
    REL_CLOSE(m.act_embedding_logits, loss, EXACT);
    /* Peak: backward of a layer (its gradient working set, and under
     * full recompute its re-run forward, outweigh the logits); the 96
     * layers' saved activations + input ids 8 s b are all still held. */
    ck_assert_int_eq(m.peak_phase, TS_PHASE_BACKWARD);
    act = 96 * GPT3_SBH * c->coef + 8.0 * 2048;
    REL_CLOSE(m.activations.value, act, EXACT);
    /* The loss phase holds them too, with the final norm's and output
     * layer's inputs 2 * 2 s b h / t_sp and the logits buffers. */
    ck_assert(m.phases[TS_PHASE_LOSS] > 0);
    REL_CLOSE(m.phases[TS_PHASE_LOSS] - m.phases[TS_PHASE_FORWARD] +
                  (m.act_layer_full - m.act_per_layer),
              4.0 * GPT3_SBH / tr + loss, 1e-9);
    /* seq^2 part: 96 layers * s b h * 80 / t, gone with any recompute. */
    seq2 = c->rc == TS_RECOMPUTE_NONE ? 96 * GPT3_SBH * 80 / t : 0;
    REL_CLOSE(m.act_seq2_term + 1, seq2 + 1, EXACT);
    assert_sane(&m);
}
END_TEST

/* The loss phase's logits buffers per token, by kernel (ts_mem_act.c),
 * GPT-3 at tp 1 (V = 50,257, s b = 2,048, bf16 logits, one chunk):
 *   vocab_parallel (Megatron): bf16 logits + one fp32 copy = 6 V;
 *   torch (F.cross_entropy): backward's three fp32 copies = 12 V;
 *   fused (flash-attn): bf16 logits + bf16 dlogits = 4 V.
 * Default: megatron's own kernel, torch's under fsdp. */
START_TEST(test_loss_impl)
{
    static const struct {
        ts_loss_impl impl;
        ts_framework fw;
        double per_v;
    } k[] = {
        { TS_LOSS_DEFAULT, TS_FW_MEGATRON, 6 },    { TS_LOSS_VOCAB_PARALLEL, TS_FW_MEGATRON, 6 },
        { TS_LOSS_TORCH, TS_FW_MEGATRON, 12 },     { TS_LOSS_FUSED, TS_FW_MEGATRON, 4 },
        { TS_LOSS_DEFAULT, TS_FW_FSDP, 12 },       { TS_LOSS_FUSED, TS_FW_FSDP, 4 },
        { TS_LOSS_VOCAB_PARALLEL, TS_FW_FSDP, 6 },
    };

    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        ts_run r;
        ts_memory m;

        gpt3_run(&r, 1, false, TS_RECOMPUTE_FULL);
        r.framework = k[i].fw;
        r.loss_impl = k[i].impl;
        ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
        REL_CLOSE(m.act_embedding_logits, k[i].per_v * 50257 * 2048, EXACT);
    }
}
END_TEST

/* Composer's train metrics (logit_metrics, ts_mem_stage.c): the trainer
 * holds the bf16 logits through backward, 2 V bytes per token, and each
 * metric's F.cross_entropy adds an fp32 copy and log_softmax's fp32
 * output, 8 V, once the activations are gone.  GPT-3 at tp 1, one
 * micro-batch of 2,048 tokens, V = 50,257: backward +2 x 50,257 x 2,048
 * B; the post-backward phase (reported with the optimizer's) holds the
 * states, the gradients, the logits and one metric, +10 x 50,257 x 2,048 B
 * over the optimizer step's own bytes. */
START_TEST(test_logit_metrics)
{
    ts_run r;
    ts_memory a, b;
    double v = 50257.0 * 2048.0;

    gpt3_run(&r, 1, false, TS_RECOMPUTE_FULL);
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.logit_metrics = 2;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(b.stages[0].phase_bytes[TS_PHASE_BACKWARD] -
                  a.stages[0].phase_bytes[TS_PHASE_BACKWARD],
              2.0 * v, 1e-9);
    REL_CLOSE(b.stages[0].phase_bytes[TS_PHASE_OPTIMIZER] -
                  a.stages[0].phase_bytes[TS_PHASE_OPTIMIZER],
              10.0 * v, 1e-9);
    REL_CLOSE(b.stages[0].phase_bytes[TS_PHASE_FORWARD], a.stages[0].phase_bytes[TS_PHASE_FORWARD],
              EXACT);
    assert_sane(&b);
}
END_TEST

/* activation_func_fp8_input_store (Megatron-Core fused_bias_swiglu.py
 * SwiGLUFunction.forward: input.to(torch.float8_e4m3fn) saved): each
 * layer's SwiGLU input, 2F wide, is kept at 1 B instead of 2.  GPT-3
 * made gated at tp 8 with sequence parallel, no recompute, one
 * micro-batch of 2,048 tokens: -96 layers x 2,048 x 2 x 12,288 x 4 / 8 B
 * in the activations.  Megatron-Core allows it for SwiGLU only, and it is
 * Megatron-Core's: a plain MLP or another framework is a 400. */
START_TEST(test_act_fp8_store)
{
    ts_run r;
    ts_memory a, b;
    ts_error e;

    gpt3_run(&r, 8, true, TS_RECOMPUTE_NONE);
    r.model.gated = true;
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.act_fp8_input_store = true;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(a.activations.value - b.activations.value, 96.0 * 2048.0 * 2.0 * 12288.0 * 4.0 / 8.0,
              1e-9);
    assert_sane(&b);

    r.model.gated = false;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "activation_func_fp8_input_store");
    r.model.gated = true;
    r.framework = TS_FW_FSDP;
    r.zero = 3;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "activation_func_fp8_input_store");
}
END_TEST

/* attention_unpad: the varlen kernel saves its unpadded output and the
 * output projection its padded copy, one more act_b x h/t per token and
 * layer (GPT-3 175B under flash, TP 8 with SP: 96 x 2,048 x 2 x 12,288 /
 * 8 B); an eager attention with it is a 400. */
START_TEST(test_attention_unpad_memory)
{
    ts_run r;
    ts_memory a, b;
    ts_error e;

    gpt3_run(&r, 8, true, TS_RECOMPUTE_NONE);
    r.attention = TS_ATTN_FLASH;
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.attention_unpad = true;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(b.activations.value - a.activations.value, 96.0 * 2048.0 * 2.0 * 12288.0 / 8.0, 1e-9);
    assert_sane(&b);
    r.attention = TS_ATTN_EAGER;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "attention_unpad");
}
END_TEST

/* transformers' sdpa with a sliding window: each sliding layer keeps its
 * mask as an additive [b, 1, s, s] tensor of the query's dtype for the
 * memory-efficient backward (core/ts_mem_act.c).  GPT-3's shape, one GPU,
 * no recompute, s 2048, window 512 on 48 of the 96 layers: 48 x 2048^2
 * x 2 B = 402,653,184 B more than flash, which keeps no mask.  A window
 * wider than s takes no mask; under full recompute only the recomputed
 * layer's working set holds one, at most 2048^2 x 2 B at the peak. */
START_TEST(test_sdpa_window_mask)
{
    ts_run r;
    ts_memory a, b;

    gpt3_run(&r, 1, false, TS_RECOMPUTE_NONE);
    r.attention = TS_ATTN_FLASH;
    r.dropout = false;
    r.model.sliding_window = 512;
    r.model.sliding_layers = 48;
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.attention = TS_ATTN_SDPA;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(b.activations.value - a.activations.value, 48.0 * 2048.0 * 2048.0 * 2.0, 1e-9);
    assert_sane(&b);
    r.model.sliding_window = 4096;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    r.attention = TS_ATTN_FLASH;
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    REL_CLOSE(b.activations.value, a.activations.value, 1e-12);

    r.recompute = TS_RECOMPUTE_FULL;
    r.model.sliding_window = 512;
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    r.attention = TS_ATTN_SDPA;
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    ck_assert_msg(b.allocated_peak.value > a.allocated_peak.value &&
                      b.allocated_peak.value - a.allocated_peak.value <= 2048.0 * 2048.0 * 2.0,
                  "full recompute: sdpa %g vs flash %g", b.allocated_peak.value,
                  a.allocated_peak.value);
}
END_TEST

START_TEST(test_activation_score_term)
{
    ts_run r;
    ts_memory m;

    /* oracles.md: GPT-3 5as/h = 80, recovered from the seq^2 part. */
    gpt3_run(&r, 1, false, TS_RECOMPUTE_NONE);
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.act_seq2_term / (96 * GPT3_SBH), 80.0, EXACT);
    /* Recompute shrinks activations (a complaint about other tools). */
    {
        ts_memory sel, full;
        gpt3_run(&r, 1, false, TS_RECOMPUTE_SELECTIVE);
        ck_assert_int_eq(ts_memory_estimate(&r, &sel, NULL), TS_OK);
        gpt3_run(&r, 1, false, TS_RECOMPUTE_FULL);
        ck_assert_int_eq(ts_memory_estimate(&r, &full, NULL), TS_OK);
        ck_assert(full.activations.value < sel.activations.value);
        ck_assert(sel.activations.value < m.activations.value);
    }
}
END_TEST

START_TEST(test_seed000)
{
    ts_run r;
    ts_memory m;
    double s = 2048, h = 12288, a = 96, F = 4 * 12288.0;

    /* oracles.md, seed 000's form: b L (5 s h + 2 a s^2 + 2 s F). */
    gpt3_run(&r, 8, true, TS_RECOMPUTE_SELECTIVE);
    r.micro_batch = 2;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.act_seed000.value, 2 * 96 * (5 * s * h + 2 * a * s * s + 2 * s * F), EXACT);
    ck_assert_ptr_nonnull(strstr(m.act_seed000.assumptions, "seed 000"));
}
END_TEST

START_TEST(test_seq_doubling)
{
    ts_run r;
    ts_memory m1, m2;

    /* No recompute: per layer s b h (34 + 5as/h) grows faster than s, so
     * doubling seq more than doubles it; the seq^2 part quadruples.
     * Selective recompute is linear in s: exactly 2x per layer. */
    gpt3_run(&r, 1, false, TS_RECOMPUTE_NONE);
    ck_assert_int_eq(ts_memory_estimate(&r, &m1, NULL), TS_OK);
    r.seq = 4096;
    ck_assert_int_eq(ts_memory_estimate(&r, &m2, NULL), TS_OK);
    ck_assert(m2.activations.value > 2 * m1.activations.value);
    /* 2s: 2 s b h (34 + 160) vs s b h (114): ratio 388/114. */
    REL_CLOSE(m2.act_per_layer / m1.act_per_layer, 388.0 / 114.0, EXACT);
    REL_CLOSE(m2.act_seq2_term, 4 * m1.act_seq2_term, EXACT);

    gpt3_run(&r, 1, false, TS_RECOMPUTE_SELECTIVE);
    ck_assert_int_eq(ts_memory_estimate(&r, &m1, NULL), TS_OK);
    r.seq = 4096;
    ck_assert_int_eq(ts_memory_estimate(&r, &m2, NULL), TS_OK);
    REL_CLOSE(m2.act_per_layer, 2 * m1.act_per_layer, EXACT);
}
END_TEST

START_TEST(test_context_parallel)
{
    ts_run r;
    ts_memory a, b;

    /* cp 2 holds s/2 tokens per GPU, attending to all s keys: every term
     * halves, the s^2 score term included (s^2 / cp, not (s/cp)^2). */
    gpt3_run(&r, 1, false, TS_RECOMPUTE_NONE);
    r.cp = 2;
    r.gpus = 2;
    ck_assert_int_eq(ts_memory_estimate(&r, &a, NULL), TS_OK);
    gpt3_run(&r, 1, false, TS_RECOMPUTE_NONE);
    ck_assert_int_eq(ts_memory_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(a.act_per_layer, b.act_per_layer / 2, EXACT);
    REL_CLOSE(a.act_seq2_term, b.act_seq2_term / 2, EXACT);
    ck_assert_int_eq(a.shard_group, 2); /* dp 1 * cp 2 */
}
END_TEST

START_TEST(test_pipeline_in_flight)
{
    ts_run r;
    ts_memory m;
    double s = 2048, per_layer = GPT3_SBH * 114;

    /* pp 8: 96/8 = 12 layers per stage; global_batch 4 (dp 1, b 1) ->
     * the first stage holds min(8, 4) = 4 micro-batches (1F1B). */
    gpt3_run(&r, 1, false, TS_RECOMPUTE_NONE);
    r.pp = 8;
    r.gpus = 8;
    r.global_batch = 4;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert_int_eq(m.stages_count, 8);
    ck_assert_uint_eq(m.stages_len, 8);
    ck_assert_int_eq(m.stages[0].layers, 12);
    ck_assert_int_eq(m.in_flight, 4);
    REL_CLOSE(m.stages[0].in_flight, 4.0, EXACT);
    REL_CLOSE(m.stages[5].in_flight, 3.0, EXACT); /* pp - i = 3 */
    REL_CLOSE(m.stages[7].in_flight, 1.0, EXACT);
    /* Stage 0 at its forward end: 12 layers x 4 in flight + input ids. */
    ck_assert_int_eq(m.stages[0].peak_phase, TS_PHASE_BACKWARD);
    REL_CLOSE(m.stages[0].activations, 12 * 4 * per_layer + 8 * s * 4, EXACT);
    /* Only the last stage has a loss phase. */
    ck_assert(m.stages[0].phase_bytes[TS_PHASE_LOSS] == 0);
    ck_assert(m.stages[7].phase_bytes[TS_PHASE_LOSS] > 0);
    /* global_batch 64 -> in_flight capped at pp = 8. */
    r.global_batch = 64;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert_int_eq(m.in_flight, 8);
    REL_CLOSE(m.stages[0].activations, 12 * 8 * per_layer + 8 * s * 8, EXACT);
    /* No global batch: about 4M tokens per step (2048 sequences), so
     * pp in flight, as Megatron assumes (not 1). */
    r.global_batch = 0;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert_int_eq(m.in_flight, 8);
    /* Interleaved, v = 2 (Megatron schedules.py): stage 0 warms up
     * 2 (8 - 1) + (2 - 1) 8 = 22 chunks, + 1 in flight = 23 chunks of
     * 6 layers = 11.5 micro-batches of 12 layers = 8 (1 + 7/16). */
    r.pp_schedule = TS_PP_INTERLEAVED;
    r.vpp = 2;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.stages[0].in_flight, 8.0 * (1.0 + 7.0 / 16.0), EXACT);
    r.pp_schedule = TS_PP_1F1B;
    r.vpp = 1;
    /* Uneven split, as Llama 3 405B's 126 layers on pp 16 (Llama 3 paper,
     * Sec. 3.3.2): 96 layers on pp 7 -> 14,14,14,14,14,13,13. */
    r.pp = 7;
    r.gpus = 7;
    r.global_batch = 64;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert_int_eq(m.stages[0].layers, 14);
    ck_assert_int_eq(m.stages[4].layers, 14);
    ck_assert_int_eq(m.stages[6].layers, 13);
    ck_assert_int_eq(m.in_flight, 7);
    REL_CLOSE(m.stages[0].activations, 14 * 7 * per_layer + 8 * s * 7, EXACT);
    /* Given edge stages: first 10, last 6 -> 80 over 5 middle stages. */
    r.first_stage_layers = 10;
    r.last_stage_layers = 6;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert_int_eq(m.stages[0].layers, 10);
    ck_assert_int_eq(m.stages[1].layers, 16);
    ck_assert_int_eq(m.stages[5].layers, 16);
    ck_assert_int_eq(m.stages[6].layers, 6);
    assert_sane(&m);
}
END_TEST

/* Megatron-LM's block method (--recompute-method block
 * --recompute-num-layers N; transformer_block.py@a7c9e8c4 568-590): per
 * (virtual) stage the first N layers keep only their input, the others
 * everything.  GPT-3 175B, tp 8 + sp, pp 8: 12 layers per stage, 8
 * micro-batches in flight on stage 0 (global_batch 64).  Per layer / s b h
 * (Korthikanti Table 2, test_activations_table): full 2/8 = 0.25, none
 * 34/8 + 80/8 = 14.25.  N = 4: 4 x 0.25 + 8 x 14.25 = 115 per micro-batch;
 * the seq^2 part is the 8 kept layers' 80/8 each. */
START_TEST(test_recompute_layers_block)
{
    ts_run r;
    ts_memory m, none, all;
    double s = 2048;

    gpt3_run(&r, 8, true, TS_RECOMPUTE_FULL);
    r.pp = 8;
    r.gpus = 64;
    r.global_batch = 64;
    r.recompute_layers = 4;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert_int_eq(m.stages[0].layers, 12);
    REL_CLOSE(m.stages[0].in_flight, 8.0, EXACT);
    REL_CLOSE(m.stages[0].activations, 8 * 115 * GPT3_SBH + 8 * s * 8, EXACT);
    REL_CLOSE(m.act_seq2_term, 8 * 8 * GPT3_SBH * 80 / 8, EXACT);
    /* The kept layers come last in the stage: a recomputed layer's forward
     * and its backward's re-run forward happen while its micro-batch's 8
     * kept layers are not (yet, any more) held, so the working sets are
     * no-recompute's: backward minus forward is one layer's gradient
     * working set, as without recompute. */
    r.recompute = TS_RECOMPUTE_NONE;
    r.recompute_layers = 0;
    ck_assert_int_eq(ts_memory_estimate(&r, &none, NULL), TS_OK);
    REL_CLOSE(m.stages[0].phase_bytes[TS_PHASE_BACKWARD] -
                  m.stages[0].phase_bytes[TS_PHASE_FORWARD],
              none.stages[0].phase_bytes[TS_PHASE_BACKWARD] -
                  none.stages[0].phase_bytes[TS_PHASE_FORWARD],
              1e-9);
    /* N = the stage's 12 layers: full recompute of every layer. */
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_memory_estimate(&r, &all, NULL), TS_OK);
    r.recompute_layers = 12;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.total.value, all.total.value, EXACT);
    REL_CLOSE(m.stages[0].activations, 8 * 12 * 0.25 * GPT3_SBH + 8 * s * 8, EXACT);
    /* Interleaved, v 2: each 6-layer virtual stage recomputes its first 3,
     * 6 of the stage's 12: 6 x 0.25 + 6 x 14.25 = 87, over 8 (1 + 7/16)
     * micro-batches of the stage (test_pipeline_in_flight). */
    r.pp_schedule = TS_PP_INTERLEAVED;
    r.vpp = 2;
    r.recompute_layers = 3;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.stages[0].activations, 8.0 * (1.0 + 7.0 / 16.0) * (87 * GPT3_SBH + 8 * s), EXACT);
    assert_sane(&m);
}
END_TEST

/* Transformer Engine's linears under FP8 save the FP8 copy of their
 * input for the weight gradient (linear.py saved_inputmat; the fused
 * norm casts its output straight to FP8): GPT-3 175B, tp 8 + sp, per
 * layer / s b h: the QKV and fc1 inputs 1 B instead of 2 (-2/8), fc2's
 * input, the 4h GeLU output, 1 B (-4/8), and the output projection's FP8
 * copy of the attention output beside attention's bf16 one (+1/8):
 * 14.25 - 5/8 = 13.625. */
START_TEST(test_fp8_saved_inputs)
{
    ts_run r;
    ts_memory m;

    gpt3_run(&r, 8, true, TS_RECOMPUTE_NONE);
    r.compute_precision = TS_PREC_FP8;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.act_per_layer, 13.625 * GPT3_SBH, EXACT);
    /* Full recompute keeps the layer input only, in bf16 either way. */
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.act_per_layer, 2.0 / 8 * GPT3_SBH, EXACT);
    assert_sane(&m);
}
END_TEST

/* The same under a MoE layer (h 1024, 8 heads, 8 experts of 512, top 2,
 * one shared expert, tp 1, bytes per token per layer, act_b 2): the QKV
 * input at 1 B (-h), the router's input kept 16-bit
 * (RouterGatingLinearFunction), the two permuted copies at 1 B (-2h),
 * the shared expert's own FP8 copy of the norm output (+h), the output
 * projection's FP8 copy (+h) and fc2's inputs of the 3 MLPs at 1 B
 * (-3 x 512): -h - 1536 = -2560.  Dense: -2h + h - F. */
START_TEST(test_fp8_saved_inputs_moe)
{
    ts_run r;
    ts_memory bf, f8;
    double tok = 2048;

    ts_run_defaults(&r);
    r.model = (ts_model){ .layers = 4,
                          .hidden = 1024,
                          .heads = 8,
                          .vocab = 32000,
                          .gated = true,
                          .ffn = 4096,
                          .experts = 8,
                          .top_k = 2,
                          .moe_ffn = 512,
                          .shared_experts = 1 };
    r.seq = 2048;
    r.micro_batch = 1;
    r.gpus = 1;
    r.global_batch = 1;
    ck_assert_int_eq(ts_memory_estimate(&r, &bf, NULL), TS_OK);
    r.compute_precision = TS_PREC_FP8;
    ck_assert_int_eq(ts_memory_estimate(&r, &f8, NULL), TS_OK);
    REL_CLOSE(bf.act_per_layer - f8.act_per_layer, 2560.0 * tok, 1e-12);
    r.model.experts = 0;
    r.model.top_k = 0;
    r.model.moe_ffn = 0;
    r.model.shared_experts = 0;
    r.compute_precision = TS_PREC_BF16;
    ck_assert_int_eq(ts_memory_estimate(&r, &bf, NULL), TS_OK);
    r.compute_precision = TS_PREC_FP8;
    ck_assert_int_eq(ts_memory_estimate(&r, &f8, NULL), TS_OK);
    REL_CLOSE(bf.act_per_layer - f8.act_per_layer, (2.0 * 1024 - 1024 + 4096) * tok, 1e-12);
}
END_TEST

/* Transformer Engine's cached FP8 weights under Megatron-Core
 * (linear.py@ac80527 982-1011): 16-bit weights get an FP8 copy and its
 * transpose (2 B a linear weight), FP8 parameters (precision fp8) their
 * transpose (1 B), held from the first micro-batch to the next step's,
 * so in every phase, the optimizer's included.  Llama 3 8B shape on one
 * GPU's share (tp 1, ZeRO 1 over 8): linear weights 32 x (2 h^2 + 2 h kv
 * + 3 h F), h 4096, kv 1024, F 14336 = 6,979,321,856 (the norms' 8 K a
 * layer, counted with them, are 3e-5 of it). */
START_TEST(test_fp8_weight_cache)
{
    ts_run r;
    ts_memory bf, f8, w8;
    double lin = 32.0 * (2.0 * 4096 * 4096 + 2.0 * 4096 * 1024 + 3.0 * 4096 * 14336);

    ts_run_defaults(&r);
    r.model = (ts_model){ .layers = 32,
                          .hidden = 4096,
                          .heads = 32,
                          .kv_heads = 8,
                          .ffn = 14336,
                          .vocab = 128256,
                          .gated = true };
    r.seq = 4096;
    r.micro_batch = 1;
    r.gpus = 8;
    r.global_batch = 8;
    r.zero = 1;
    ck_assert_int_eq(ts_memory_estimate(&r, &bf, NULL), TS_OK);
    r.compute_precision = TS_PREC_FP8;
    ck_assert_int_eq(ts_memory_estimate(&r, &f8, NULL), TS_OK);
    REL_CLOSE(f8.phases[TS_PHASE_OPTIMIZER] - bf.phases[TS_PHASE_OPTIMIZER], 2.0 * lin, 1e-4);
    /* FP8 parameters: 1 B less per TE weight (the embedding and the
     * output layer, 2 x 128256 x 4096, stay 16-bit), 1 B less cache per
     * linear weight. */
    r.precision = TS_PREC_FP8;
    ck_assert_int_eq(ts_memory_estimate(&r, &w8, NULL), TS_OK);
    REL_CLOSE(f8.weights.value - w8.weights.value, 8030261248.0 - 2.0 * 128256 * 4096, 1e-6);
    REL_CLOSE(f8.buffers.value - w8.buffers.value, lin, 1e-4);
    /* Blackwell runs FP8 GEMMs in any layout: no transpose (TE 2.x
     * quantizer.cpp), the copy of 16-bit weights only, none for FP8
     * ones. */
    r.gpu = *ts_gpu_find("b200");
    ck_assert_int_eq(ts_memory_estimate(&r, &w8, NULL), TS_OK);
    r.precision = TS_PREC_BF16;
    ck_assert_int_eq(ts_memory_estimate(&r, &f8, NULL), TS_OK);
    r.compute_precision = TS_PREC_BF16;
    ck_assert_int_eq(ts_memory_estimate(&r, &bf, NULL), TS_OK);
    REL_CLOSE(f8.phases[TS_PHASE_OPTIMIZER] - bf.phases[TS_PHASE_OPTIMIZER], lin, 1e-4);
    REL_CLOSE(w8.buffers.value, bf.buffers.value, 1e-12);
    r.gpu = *ts_gpu_find("h100-sxm");
    r.compute_precision = TS_PREC_FP8;
    ck_assert_int_eq(ts_memory_estimate(&r, &f8, NULL), TS_OK);
    /* Not under FSDP / ZeRO-3 (the weights arrive gathered per layer). */
    r.precision = TS_PREC_BF16;
    r.zero = 3;
    ck_assert_int_eq(ts_memory_estimate(&r, &f8, NULL), TS_OK);
    r.compute_precision = TS_PREC_BF16;
    ck_assert_int_eq(ts_memory_estimate(&r, &bf, NULL), TS_OK);
    ck_assert(f8.phases[TS_PHASE_OPTIMIZER] == bf.phases[TS_PHASE_OPTIMIZER]);
}
END_TEST

/* Megatron-Core's CPU activation offload (cpu_offloading_num_layers;
 * Transformer Engine >= 2.10's default handler, cpu_offload.py@00382b96):
 * GPT-3 175B, tp 8 + sp, pp 1, no recompute, 96 layers of 14.25 s b h
 * each (test_recompute_layers_block).  N = 40: the first 40 layers'
 * activations go to host RAM, each copy finished before layer 56 + i
 * runs, so the GPU holds 56 layers at most: 56 x 14.25 s b h + the input
 * ids; host RAM 40 x 14.25 s b h; the seq^2 part the 56 kept layers'
 * 80/8 each. */
START_TEST(test_offload_activation_layers)
{
    ts_run r;
    ts_memory m, none;
    ts_error e;
    double s = 2048;

    gpt3_run(&r, 8, true, TS_RECOMPUTE_NONE);
    r.global_batch = 1;
    ck_assert_int_eq(ts_memory_estimate(&r, &none, NULL), TS_OK);
    REL_CLOSE(none.stages[0].activations, 96 * 14.25 * GPT3_SBH + 8 * s, EXACT);
    ck_assert(none.host_bytes_per_gpu == 0);
    r.offload_activation_layers = 40;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.stages[0].activations, 56 * 14.25 * GPT3_SBH + 8 * s, EXACT);
    REL_CLOSE(m.host_bytes_per_gpu, 40 * 14.25 * GPT3_SBH, EXACT);
    REL_CLOSE(m.act_seq2_term, 56 * GPT3_SBH * 80 / 8, EXACT);
    REL_CLOSE(none.total.value - m.total.value, 40 * 14.25 * GPT3_SBH, 1e-9);
    assert_sane(&m);
    /* What Megatron-Core refuses (transformer_config.py@d98e8a64
     * 1884-1899) is a 400 naming the field, never a silent no-op. */
    r.offload_activation_layers = 96;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "offload_activation_layers");
    r.offload_activation_layers = 40;
    r.recompute = TS_RECOMPUTE_SELECTIVE;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "offload_activation_layers");
    r.recompute = TS_RECOMPUTE_NONE;
    r.pp = 2;
    r.gpus = 16;
    r.global_batch = 2;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "offload_activation_layers");
    r.pp = 1;
    r.gpus = 8;
    r.framework = TS_FW_FSDP;
    r.sequence_parallel = false;
    r.zero = 3;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "offload_activation_layers");
}
END_TEST

START_TEST(test_no_shape_activations)
{
    ts_run r;
    ts_memory m;

    plain_run(&r, 7e9, 8);
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert(m.activations.value == 0 && m.act_per_layer == 0 && m.act_seq2_term == 0);
    ck_assert_ptr_nonnull(strstr(m.activations.assumptions, "shape"));
    assert_sane(&m);
}
END_TEST

/* ---- overhead and fit ------------------------------------------------ */

START_TEST(test_overhead_fit)
{
    ts_run r;
    ts_memory m;
    double sum;

    /* 1e9 params on 8 GPUs, ZeRO 1: 4e9 + 12e9/8 = 5.5e9 states; no
     * activations (plain).  Runtime context 2 GiB; no fragmentation. */
    plain_run(&r, 1e9, 8);
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    sum = 5.5e9;
    REL_CLOSE(states(&m), sum, EXACT);
    REL_CLOSE(m.overhead.value, 2 * GIB, EXACT);
    REL_CLOSE(m.total.value, sum + 2 * GIB, EXACT);
    ck_assert(m.hbm_bytes == 81559.0 * 1048576); /* nvidia-smi: 81559 MiB */
    REL_CLOSE(m.headroom_bytes, 81559.0 * 1048576 - m.total.value, EXACT);
    ck_assert(m.fits);

    /* Exactly full fits; one byte short does not. */
    r.gpu.hbm_bytes = m.total.value;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert(m.fits);
    ck_assert(m.headroom_bytes == 0);
    r.gpu.hbm_bytes = m.total.value - 1;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    ck_assert(!m.fits);
    ck_assert(m.headroom_bytes < 0);

    /* No overhead at all: total = states. */
    plain_run(&r, 1e9, 8);
    r.overhead_gib = 0;
    r.fragmentation = 0;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, NULL), TS_OK);
    REL_CLOSE(m.total.value, sum, EXACT);
}
END_TEST

START_TEST(test_errors)
{
    ts_run r;
    ts_memory m;
    ts_error err;

    /* Resolution errors come through with their field. */
    plain_run(&r, 7e9, 8);
    r.tp = 0;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, &err), TS_EINVAL);
    ck_assert_str_eq(err.field, "tp");
    plain_run(&r, 7e9, 8);
    r.model.params = NAN;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, &err), TS_EINVAL);
    ck_assert_str_eq(err.field, "params");
    ck_assert_int_eq(ts_memory_estimate(NULL, &m, &err), TS_EINVAL);
    ck_assert_int_eq(ts_memory_estimate(&r, NULL, &err), TS_EINVAL);
}
END_TEST

START_TEST(test_extremes_finite)
{
    ts_run r;
    ts_memory m;
    ts_error err;

    /* Every size at its limit: finite figures, never NaN/Inf.  A shape
     * near the 1e15-parameter ceiling (19000 layers of h 65536, 5.7e14),
     * the longest sequence, the largest micro-batch, 1e20 tokens. */
    ts_run_defaults(&r);
    r.model = (ts_model){ .layers = 19000,
                          .hidden = 65536,
                          .heads = 512,
                          .ffn = 65536,
                          .vocab = INT64_C(1) << 20,
                          .gated = true };
    r.seq = INT64_C(1) << 24;
    r.micro_batch = INT64_C(1) << 20;
    r.gpus = 1;
    r.tokens = 1e20;
    ck_assert_int_eq(ts_memory_estimate(&r, &m, &err), TS_OK);
    assert_sane(&m);
    ck_assert(!m.fits);
}
END_TEST

static Suite *memory_suite(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("memory");

    tcase_add_loop_test(tc, test_bpp, 0, (int)(sizeof bpps / sizeof bpps[0]));
    tcase_add_test(tc, test_adafactor_shape);
    tcase_add_test(tc, test_70b);
    tcase_add_test(tc, test_zero_paper);
    tcase_add_test(tc, test_zero_shard_group);
    tcase_add_test(tc, test_moe_expert_sharding);
    tcase_add_test(tc, test_deepspeed);
    tcase_add_test(tc, test_lora);
    tcase_add_test(tc, test_offload);
    tcase_add_test(tc, test_lora_rank);
    tcase_add_test(tc, test_lora_frozen_inputs);
    tcase_add_test(tc, test_fsdp_stream_cache_at_loss);
    tcase_add_test(tc, test_lora_targets);
    tcase_add_test(tc, test_lora_target_names);
    tcase_add_test(tc, test_lora_save_names);
    tcase_add_test(tc, test_lora_save_memory);
    tcase_add_test(tc, test_lora_save_fsdp_units);
    tcase_add_test(tc, test_lora_layer_params);
    tcase_add_test(tc, test_paged_adam8bit);
    tcase_add_test(tc, test_hf_framework);
    tcase_add_test(tc, test_qk_norm_memory);
    tcase_add_test(tc, test_lora_dropout_memory);
    tcase_add_test(tc, test_adapter_precision_memory);
    tcase_add_test(tc, test_reserved_keeps_loss_blocks);
    tcase_add_test(tc, test_megatron_distributed_optimizer);
    tcase_add_test(tc, test_fsdp_norms);
    tcase_add_test(tc, test_fsdp_selective_op);
    tcase_add_loop_test(tc, test_activations_table, 0, (int)(sizeof acts / sizeof acts[0]));
    tcase_add_test(tc, test_activation_score_term);
    tcase_add_test(tc, test_sdpa_window_mask);
    tcase_add_test(tc, test_loss_impl);
    tcase_add_test(tc, test_logit_metrics);
    tcase_add_test(tc, test_act_fp8_store);
    tcase_add_test(tc, test_attention_unpad_memory);
    tcase_add_test(tc, test_liger_kernels_memory);
    tcase_add_test(tc, test_lora_impl_memory);
    tcase_add_test(tc, test_gptq_kept_memory);
    tcase_add_test(tc, test_seed000);
    tcase_add_test(tc, test_seq_doubling);
    tcase_add_test(tc, test_context_parallel);
    tcase_add_test(tc, test_pipeline_in_flight);
    tcase_add_test(tc, test_recompute_layers_block);
    tcase_add_test(tc, test_offload_activation_layers);
    tcase_add_test(tc, test_fp8_saved_inputs);
    tcase_add_test(tc, test_fp8_weight_cache);
    tcase_add_test(tc, test_fp8_saved_inputs_moe);
    tcase_add_test(tc, test_no_shape_activations);
    tcase_add_test(tc, test_overhead_fit);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_extremes_finite);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(memory_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
