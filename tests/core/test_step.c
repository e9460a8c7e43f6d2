/*
 * test_step.c - the step-time model (core/ts_step.c) and the layout
 * search (core/ts_search.c).
 *
 * Collective and kernel formulas are checked against values worked by
 * hand in the comment next to each (1e-12 relative: double rounding
 * only).  The composed step is checked through identities that follow
 * from the model's definition (the bubble does not depend on the number
 * of micro-batches; interleaving by v divides it by v; GPU-hours equal
 * step time x steps x GPUs when the MFU is predicted), so they hold
 * whatever the catalogue figures are.  The measured-run accuracy lives
 * in tests/validation/step_time.json.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"

#define REL_CLOSE(got, want, rel)                                                             \
    ck_assert_msg(fabs((double)(got) - (double)(want)) <= (rel)*fabs((double)(want)),         \
                  "%s = %.12g, want %.12g (rel tol %g)", #got, (double)(got), (double)(want), \
                  (double)(rel))

/* ---- collectives and kernels, by hand ----------------------------- */

START_TEST(test_allreduce_ring)
{
    /* 1 GB over 8 ranks at 100 GB/s: 2 * 7/8 * 1e9 / 1e11 = 0.0175 s.
     * Latency: tree 2 * log2(8) = 6 hops (< ring's 14) * 5 us = 30 us. */
    REL_CLOSE(ts_step_allreduce_s(1e9, 8, 1e11, 0), 0.0175, 1e-12);
    REL_CLOSE(ts_step_allreduce_s(1e9, 8, 1e11, 5e-6), 0.0175 + 30e-6, 1e-12);
    /* 2 ranks: 2 * 1/2 * 1e9 / 1e11 = 0.01 s; hops min(2, 2) = 2. */
    REL_CLOSE(ts_step_allreduce_s(1e9, 2, 1e11, 1e-6), 0.01 + 2e-6, 1e-12);
    /* 1024 ranks: bandwidth term 2 * 1023/1024 * 1e-2 = 0.019980469 s;
     * tree latency 2 * 10 hops * 10 us = 200 us. */
    REL_CLOSE(ts_step_allreduce_s(1e9, 1024, 1e11, 1e-5), 2.0 * 1023.0 / 1024.0 * 0.01 + 200e-6,
              1e-12);
    ck_assert(ts_step_allreduce_s(1e9, 1, 1e11, 1e-5) == 0);
    ck_assert(ts_step_allreduce_s(0, 8, 1e11, 1e-5) == 0);
    ck_assert(ts_step_allreduce_s(1e9, 8, 0, 1e-5) == 0);
}
END_TEST

START_TEST(test_allgather_alltoall)
{
    /* All-gather of a 1 GB result over 4 ranks at 100 GB/s: each rank
     * receives 3/4 of it, 0.0075 s, plus 3 ring hops * 10 us. */
    REL_CLOSE(ts_step_allgather_s(1e9, 4, 1e11, 1e-5), 0.0075 + 30e-6, 1e-12);
    /* Reduce-scatter moves the same bytes: all-reduce = RS + AG in the
     * bandwidth term (latency aside). */
    REL_CLOSE(2.0 * ts_step_allgather_s(1e9, 4, 1e11, 0), ts_step_allreduce_s(1e9, 4, 1e11, 0),
              1e-12);
    /* All-to-all of 800 MB over 8: 7/8 leaves, 0.007 s at 100 GB/s. */
    REL_CLOSE(ts_step_alltoall_s(8e8, 8, 1e11, 0), 0.007, 1e-12);
}
END_TEST

START_TEST(test_gemm_roofline)
{
    /* 1000^3 at 1 TFLOP/s peak, core 0.5: 2e9 / 5e11 = 4 ms; operands
     * 2 * 3e6 bytes at 1 GB/s * 0.9 = 6.6667 ms; sum 10.6667 ms. */
    REL_CLOSE(ts_step_gemm_s(1000, 1000, 1000, 1e12, 0.5, 1e9), 0.004 + 6e6 / 0.9e9, 1e-12);
    ck_assert(ts_step_gemm_s(0, 1000, 1000, 1e12, 0.5, 1e9) == 0);
}
END_TEST

START_TEST(test_bubble_fraction)
{
    /* (p - 1) / (m v): 7/64, 7/256; no pipeline, no bubble. */
    REL_CLOSE(ts_step_bubble_fraction(8, 64, 1), 7.0 / 64.0, 1e-15);
    REL_CLOSE(ts_step_bubble_fraction(8, 64, 4), 7.0 / 256.0, 1e-15);
    ck_assert(ts_step_bubble_fraction(1, 64, 1) == 0);
}
END_TEST

START_TEST(test_catalogue_network)
{
    /* oracles.md, "Interconnect": NVLink per GPU, bidirectional. */
    ck_assert(ts_gpu_find("a100-80")->nvlink_bw == 600e9);
    ck_assert(ts_gpu_find("h100-sxm")->nvlink_bw == 900e9);
    ck_assert(ts_gpu_find("h200")->nvlink_bw == 900e9);
    ck_assert(ts_gpu_find("b200")->nvlink_bw == 1800e9);
    ck_assert(ts_gpu_find("mi300x")->nvlink_bw == 896e9);
    /* 400 Gb/s = 50 GB/s per H100. */
    ck_assert(ts_gpu_find("h100-sxm")->net_bw == 50e9);
    /* The core matmul rate is the catalogue MAMF: 792.1 / 989. */
    REL_CLOSE(ts_step_core_eff(ts_gpu_find("h100-sxm")), 0.801, 1e-12);
}
END_TEST

/* ---- composed step ------------------------------------------------ */

static void llama_run(ts_run *r, const char *preset, int64_t gpus)
{
    ts_run_defaults(r);
    ts_run_apply_preset(r, ts_preset_find(preset));
    r->gpus = gpus;
    r->dp = 0;
}

/* A model-parallel-only run of a preset on tp x pp GPUs (dp 1, one
 * sequence per micro-batch, no recompute): what the TP and pipeline
 * tests count by hand. */
static void mp_run(ts_run *r, const char *preset, int64_t tp, int64_t pp, int64_t seq,
                   int64_t global_batch, bool sp)
{
    llama_run(r, preset, tp * pp);
    r->tp = tp;
    r->pp = pp;
    r->dp = 1;
    r->seq = seq;
    r->micro_batch = 1;
    r->global_batch = global_batch;
    r->sequence_parallel = sp;
    r->recompute = TS_RECOMPUTE_NONE;
}

START_TEST(test_no_shape_matmul_bound)
{
    ts_run r;
    ts_step s;
    ts_error e;

    /* 1e9 params on one H100, 1000-token sequences, one per step:
     * compute = 6 * 1e9 * 1000 / (989e12 * 0.801 * 708.5 / 841.9) s (MAMF
     * at the sustained clock, test_sustained_matmul), nothing to reduce,
     * optimizer = 1e9 params * (2*2 grad reads + 8 master + 2*2*4 Adam +
     * 2 weights = 30 B) / 2.90e12 (H100's measured streaming bandwidth,
     * core/ts_gpu.c). */
    ts_run_defaults(&r);
    r.model.params = 1e9;
    r.gpus = 1;
    r.dp = 0;
    r.seq = 1000;
    r.global_batch = 1;
    r.grad_precision = TS_PREC_BF16;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    ck_assert(!s.from_shape);
    REL_CLOSE(s.compute, 6e12 / (989e12 * 0.801 * (708.5 / 841.9)), 1e-12);
    ck_assert(s.dp_comm == 0 && s.tp_comm == 0 && s.pp_bubble == 0);
    REL_CLOSE(s.optimizer, 1e9 * 30.0 / 2.90e12, 1e-12);
    REL_CLOSE(s.step_time.value, s.compute + s.optimizer, 1e-12);
    /* 6 P per token over step * peak: the matmul fraction, less the optimizer share. */
    REL_CLOSE(s.predicted_mfu, 6e12 / (s.step_time.value * 989e12), 1e-12);
}
END_TEST

START_TEST(test_bubble_independent_of_m)
{
    ts_run r;
    ts_step a, b, c;
    ts_error e;

    /* Llama 3 8B, tp 1 pp 4 dp 2: the bubble is (p-1)/v stage-times,
     * whatever the number of micro-batches; compute doubles with m. */
    llama_run(&r, "llama3-8b", 8);
    r.pp = 4;
    r.global_batch = 16;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.global_batch = 32;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.pp_bubble - b.pp_p2p, a.pp_bubble - a.pp_p2p, 1e-12);
    REL_CLOSE(b.compute, 2.0 * a.compute, 1e-12);
    ck_assert(a.micro_batches == 8 && b.micro_batches == 16);
    /* Interleaving with v = 2 halves it (32 layers split evenly). */
    r.pp_schedule = TS_PP_INTERLEAVED;
    r.vpp = 2;
    ck_assert_int_eq(ts_step_estimate(&r, &c, &e), TS_OK);
    REL_CLOSE(c.pp_bubble - c.pp_p2p, 0.5 * (b.pp_bubble - b.pp_p2p), 1e-12);
}
END_TEST

START_TEST(test_uneven_stages)
{
    ts_run r;
    ts_step even, uneven, last;
    ts_error e;

    /* 12 layers on pp 4: even [3 3 3 3]; first_stage_layers 1 gives
     * [1 4 4 3] (the rest split evenly, larger first).  The bubble is
     * (p-1) x the mean stage time, and the mean only depends on the 12
     * layers in total, so it is the same; the slowest stage (a middle
     * one with 4 layers, or the last with 3 plus the output layer) sets
     * the rest. */
    ts_run_defaults(&r);
    r.model.layers = 12;
    r.model.hidden = 2048;
    r.model.heads = 16;
    r.model.vocab = 1000; /* a small output layer: a 4-layer stage is the slowest */
    r.seq = 2048;
    r.pp = 4;
    r.gpus = 4;
    r.dp = 0;
    r.global_batch = 8;
    ck_assert_int_eq(ts_step_estimate(&r, &even, &e), TS_OK);
    r.first_stage_layers = 1;
    ck_assert_int_eq(ts_step_estimate(&r, &uneven, &e), TS_OK);
    REL_CLOSE(uneven.pp_bubble - uneven.pp_p2p, even.pp_bubble - even.pp_p2p, 1e-12);
    ck_assert(uneven.compute > even.compute);
    /* [5 3 2 2] via last_stage_layers 2 and first 5: same mean again. */
    r.first_stage_layers = 5;
    r.last_stage_layers = 2;
    ck_assert_int_eq(ts_step_estimate(&r, &last, &e), TS_OK);
    REL_CLOSE(last.pp_bubble - last.pp_p2p, even.pp_bubble - even.pp_p2p, 1e-12);
}
END_TEST

START_TEST(test_recompute_adds_forward)
{
    ts_run r;
    ts_step none, full, sel;
    ts_error e;

    /* Full recompute redoes the forward: recompute = compute's forward
     * share, i.e. between a quarter and a half of fwd+bwd (backward is
     * about twice forward). */
    llama_run(&r, "llama3-8b", 8);
    r.global_batch = 8;
    ck_assert_int_eq(ts_step_estimate(&r, &none, &e), TS_OK);
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_step_estimate(&r, &full, &e), TS_OK);
    r.recompute = TS_RECOMPUTE_SELECTIVE;
    ck_assert_int_eq(ts_step_estimate(&r, &sel, &e), TS_OK);
    ck_assert(none.recompute == 0);
    ck_assert(full.recompute > 0.25 * full.compute && full.recompute < 0.5 * full.compute);
    ck_assert(sel.recompute > 0 && sel.recompute < full.recompute);
    REL_CLOSE(full.compute, none.compute, 1e-12);
    ck_assert(full.step_time.value > sel.step_time.value &&
              sel.step_time.value > none.step_time.value);
}
END_TEST

/* Megatron-LM's block method (--recompute-method block
 * --recompute-num-layers N; megatron/core/recompute.py@d98e8a64 167-181):
 * each (virtual) stage reruns the forward of its first N layers only.
 * Hand computation, Llama 3 8B (32 layers) on tp 8: N = 8 of the 32
 * layers reruns a quarter of full recompute's forward and of its redone
 * TP collectives; the forward and backward themselves do not change.
 * Interleaved pp 2, vpp 2, tp 4: 16 layers a stage in two 8-layer
 * virtual stages, N = 3 reruns 6 of the 16, 3/8.  The hardware FLOPs'
 * recompute term follows the same fraction of the model's layers. */
START_TEST(test_recompute_layers_block)
{
    ts_run r;
    ts_step none, full, blk;
    ts_compute cn, cf, cb;
    ts_error e;

    llama_run(&r, "llama3-8b", 8);
    r.tp = 8;
    r.global_batch = 8;
    ck_assert_int_eq(ts_step_estimate(&r, &none, &e), TS_OK);
    ck_assert_int_eq(ts_compute_estimate(&r, &cn, &e), TS_OK);
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_step_estimate(&r, &full, &e), TS_OK);
    ck_assert_int_eq(ts_compute_estimate(&r, &cf, &e), TS_OK);
    r.recompute_layers = 8;
    ck_assert_int_eq(ts_step_estimate(&r, &blk, &e), TS_OK);
    ck_assert_int_eq(ts_compute_estimate(&r, &cb, &e), TS_OK);
    ck_assert(full.recompute > 0 && full.tp_comm > none.tp_comm);
    REL_CLOSE(blk.recompute, 0.25 * full.recompute, 1e-12);
    REL_CLOSE(blk.tp_comm - none.tp_comm, 0.25 * (full.tp_comm - none.tp_comm), 1e-9);
    REL_CLOSE(blk.compute, full.compute, 1e-12);
    REL_CLOSE(cb.hardware_flops.value - cn.hardware_flops.value,
              0.25 * (cf.hardware_flops.value - cn.hardware_flops.value), 1e-12);
    /* All 32: the same as every layer. */
    r.recompute_layers = 32;
    ck_assert_int_eq(ts_step_estimate(&r, &blk, &e), TS_OK);
    REL_CLOSE(blk.step_time.value, full.step_time.value, 1e-12);

    r.tp = 4;
    r.pp = 2;
    r.pp_schedule = TS_PP_INTERLEAVED;
    r.vpp = 2;
    r.recompute_layers = 0;
    r.recompute = TS_RECOMPUTE_NONE;
    ck_assert_int_eq(ts_step_estimate(&r, &none, &e), TS_OK);
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_step_estimate(&r, &full, &e), TS_OK);
    r.recompute_layers = 3;
    ck_assert_int_eq(ts_step_estimate(&r, &blk, &e), TS_OK);
    REL_CLOSE(blk.recompute, 3.0 / 8.0 * full.recompute, 1e-12);
    REL_CLOSE(blk.tp_comm - none.tp_comm, 3.0 / 8.0 * (full.tp_comm - none.tp_comm), 1e-9);
    ck_assert(blk.step_time.value > none.step_time.value &&
              blk.step_time.value < full.step_time.value);
}
END_TEST

/* PyTorch's non-reentrant checkpoint (FSDP's checkpoint_wrapper, torch
 * >= 2.1) stops recomputing once the block's last saved tensor is back:
 * the MLP's down projection and the residual add after it are not rerun
 * (core/ts_step_layer.c, ts_step_rec_skip).  Hand computation: a GELU
 * block of h 8192, ffn 4h at 256-token sequences does 12 h^2 linear
 * FLOPs per token, of which the down projection is 4 h^2 (a third); the
 * attention core (2 x 128 x 2 x 8192 = 4.2 MFLOP a token against 1.6
 * GFLOP) and the elementwise work (about 3 % of the forward) are small,
 * so the recompute falls to about 2/3 (the down projection's GEMM shape
 * runs at its own efficiency: 0.64-0.70 accepted).  Megatron's and a
 * reentrant checkpoint's recompute is the whole forward, the same in
 * both frameworks; a MoE block (its combine saves the experts' outputs)
 * and LoRA (the adapter saves after the base matmul) rerun it too. */
START_TEST(test_recompute_early_stop)
{
    ts_run r;
    ts_step meg, re, es, moe_re, moe_es;
    ts_error e;

    ts_run_defaults(&r);
    r.model.layers = 8;
    r.model.hidden = 8192;
    r.model.heads = 64;
    r.model.ffn = 32768;
    r.model.vocab = 50368;
    r.model.pos_embeddings = 256;
    r.seq = 256;
    r.micro_batch = 8;
    r.gpus = 8;
    r.dp = 0;
    r.global_batch = 64;
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_step_estimate(&r, &meg, &e), TS_OK);
    r.framework = TS_FW_FSDP;
    r.layer_impl = TS_LAYER_FUSED; /* megatron's kernels: only the checkpoint differs */
    r.zero = 3;
    r.recompute_impl = TS_RIMPL_REENTRANT;
    ck_assert_int_eq(ts_step_estimate(&r, &re, &e), TS_OK);
    r.recompute_impl = TS_RIMPL_DEFAULT; /* fsdp: non_reentrant */
    ck_assert_int_eq(ts_step_estimate(&r, &es, &e), TS_OK);
    ck_assert(meg.from_shape && es.from_shape);
    REL_CLOSE(re.recompute, meg.recompute, 1e-12);
    REL_CLOSE(es.compute, re.compute, 1e-12);
    ck_assert_msg(es.recompute > 0.64 * re.recompute && es.recompute < 0.70 * re.recompute,
                  "early stop %g of %g", es.recompute, re.recompute);
    ck_assert(es.step_time.value < re.step_time.value);
    /* Megatron told non_reentrant (Megatron-Core's te checkpoint) gets it too. */
    r.framework = TS_FW_MEGATRON;
    r.zero = 1;
    r.recompute_impl = TS_RIMPL_EARLY_STOP;
    ck_assert_int_eq(ts_step_estimate(&r, &meg, &e), TS_OK);
    REL_CLOSE(meg.recompute, es.recompute, 1e-12);

    llama_run(&r, "mixtral-8x7b", 8);
    r.global_batch = 8;
    r.framework = TS_FW_FSDP;
    r.zero = 3;
    r.recompute = TS_RECOMPUTE_FULL;
    r.recompute_impl = TS_RIMPL_REENTRANT;
    ck_assert_int_eq(ts_step_estimate(&r, &moe_re, &e), TS_OK);
    r.recompute_impl = TS_RIMPL_EARLY_STOP;
    ck_assert_int_eq(ts_step_estimate(&r, &moe_es, &e), TS_OK);
    REL_CLOSE(moe_es.recompute, moe_re.recompute, 1e-12);

    llama_run(&r, "llama3-8b", 1);
    r.global_batch = 1;
    r.framework = TS_FW_FSDP;
    r.zero = 3;
    r.recompute = TS_RECOMPUTE_FULL;
    r.lora_rank = 8;
    r.recompute_impl = TS_RIMPL_REENTRANT;
    ck_assert_int_eq(ts_step_estimate(&r, &moe_re, &e), TS_OK);
    r.recompute_impl = TS_RIMPL_EARLY_STOP;
    ck_assert_int_eq(ts_step_estimate(&r, &moe_es, &e), TS_OK);
    REL_CLOSE(moe_es.recompute, moe_re.recompute, 1e-12);
}
END_TEST

/* torchtitan's per-op selective checkpoint (recompute selective_op;
 * parallelize_llama.py@9dec370 _apply_ac_to_transformer_block) keeps the
 * SDPA output and the 1st, 3rd, 5th, 7th aten.mm outputs (wq, wv, w1,
 * w2) and reruns the rest up to the early stop at w2's input
 * (core/ts_step_layer.c, ts_step_rec_op).  Hand computation: a gated
 * block of h 8192, 8 KV heads of 128 (kv 1024 = h/8), ffn 28672 = 3.5h
 * at 256-token sequences: per token the linears do 2 h^2 (1 + 1/8 + 1/8
 * + 1 + 3 x 3.5) = 2 x 12.75 h^2 FLOPs, the rerun wk + wo + w3 2 x (1/8
 * + 1 + 3.5) h^2 = 2 x 4.625 h^2, 0.363 of them; the attention core (0.5
 * %) is not rerun; the elementwise work (a few % of the forward) is, all
 * but the last residual add, and wk's narrow GEMM runs below the wide
 * ones' efficiency: 0.34-0.42 of a reentrant full recompute accepted.
 * TP (tp 8, sequence parallel): the two forward all-gathers are redone,
 * the reduce-scatters are saved or past the stop: exactly half of full
 * (reentrant) recompute's redone collectives. */
START_TEST(test_recompute_selective_op)
{
    ts_run r;
    ts_step none, re, op;
    ts_error e;

    ts_run_defaults(&r);
    r.model.layers = 8;
    r.model.hidden = 8192;
    r.model.heads = 64;
    r.model.kv_heads = 8;
    r.model.ffn = 28672;
    r.model.gated = true;
    r.model.vocab = 50368;
    r.seq = 256;
    r.micro_batch = 8;
    r.gpus = 8;
    r.dp = 0;
    r.global_batch = 64;
    r.framework = TS_FW_FSDP;
    r.layer_impl = TS_LAYER_FUSED; /* the share of fused layers' forward */
    r.zero = 3;
    ck_assert_int_eq(ts_step_estimate(&r, &none, &e), TS_OK);
    r.recompute = TS_RECOMPUTE_FULL;
    r.recompute_impl = TS_RIMPL_REENTRANT;
    ck_assert_int_eq(ts_step_estimate(&r, &re, &e), TS_OK);
    r.recompute = TS_RECOMPUTE_SELECTIVE_OP;
    r.recompute_impl = TS_RIMPL_DEFAULT;
    ck_assert_msg(ts_step_estimate(&r, &op, &e) == TS_OK, "%s", e.text);
    REL_CLOSE(op.compute, none.compute, 1e-12);
    ck_assert_msg(op.recompute > 0.34 * re.recompute && op.recompute < 0.42 * re.recompute,
                  "selective_op %g of %g", op.recompute, re.recompute);

    r.tp = 8;
    r.sequence_parallel = true;
    r.recompute = TS_RECOMPUTE_NONE;
    ck_assert_int_eq(ts_step_estimate(&r, &none, &e), TS_OK);
    r.recompute = TS_RECOMPUTE_FULL;
    r.recompute_impl = TS_RIMPL_REENTRANT;
    ck_assert_int_eq(ts_step_estimate(&r, &re, &e), TS_OK);
    r.recompute = TS_RECOMPUTE_SELECTIVE_OP;
    r.recompute_impl = TS_RIMPL_DEFAULT;
    ck_assert_int_eq(ts_step_estimate(&r, &op, &e), TS_OK);
    ck_assert(re.tp_comm > none.tp_comm);
    REL_CLOSE(op.tp_comm - none.tp_comm, 0.5 * (re.tp_comm - none.tp_comm), 1e-9);

    /* Only torchtitan's (fsdp) dense blocks with a shape have that order. */
    r.framework = TS_FW_MEGATRON;
    r.zero = 1;
    ck_assert_int_eq(ts_step_estimate(&r, &op, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "recompute");
    r.framework = TS_FW_FSDP;
    r.zero = 3;
    r.model.experts = 8;
    r.model.top_k = 2;
    ck_assert_int_eq(ts_step_estimate(&r, &op, &e), TS_EINCOMPAT);
    /* Nor flash-attn's varlen path with its unpad copies, outside the
     * policy's save list. */
    r.model.experts = 0;
    r.model.top_k = 0;
    ck_assert_int_eq(ts_step_estimate(&r, &op, &e), TS_OK);
    r.attention_unpad = true;
    ck_assert_int_eq(ts_step_estimate(&r, &op, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "recompute");
}
END_TEST

/* The layer's matmuls are as wide as the model's weights (ts_model_count
 * counts them the same way).  Gemma 7B's shape: h 3072, 16 heads of
 * head_dim 256, so q, k, v are 4096 wide, not h: per token the layer's
 * linear FLOPs grow from h (3h + h + 3F) = 3072 x 86,016 (head_dim = h/a
 * = 192) to 3072 x (3 x 4096 + 4096 + 3F) = 3072 x 90,112, x 1.0476, and
 * the attention core by 256/192; the head and norms do not change.  So
 * head_dim 192 is the default exactly, and head_dim 256 costs between 3 %
 * and 15 % more compute.  MoE experts are moe_ffn wide (DeepSeek, Qwen-MoE):
 * Mixtral's MLP is ~89 % of its linear FLOPs (2 experts x 3 h F against
 * h (h + 2048) + h h per token), so a quarter-width expert cuts the
 * linear FLOPs to ~0.33; with the attention core, elementwise work and the
 * narrower GEMMs' lower efficiency the compute still falls by more than a
 * quarter; a shared expert adds one more MLP per token.  MLA's
 * latent projections are matmuls too: a wider kv latent costs more. */
/* A sliding window shrinks the fused attention's work to the band: query
 * i sees min(i + 1, w) keys, continuous mean w - w^2 / (2 s) (core/
 * ts_model.c ts_model_attn_span), against s / 2 for full causal.  The
 * attention core is linear in that mean, so the compute differences from
 * full attention stand in the ratio of the means' differences.  By hand,
 * s = 8192: w = 1024 gives 1024 - 64 = 960, w = 4096 gives 4096 - 1024 =
 * 3072; from s / 2 = 4096 that is -3136 and -1024, ratio 3.0625; half the
 * layers at w = 1024, half of -3136.  Eager computes the whole s x s
 * scores (the mask after the matmul) and llm-foundry's Triton kernel
 * has no window: no change.  A window of s or more is full attention. */
START_TEST(test_sliding_window)
{
    ts_run r;
    ts_step full, w1, w2, half, big;
    ts_error e;
    int k;

    mp_run(&r, "llama3-8b", 1, 1, 8192, 1, false);
    ck_assert_int_eq(ts_step_estimate(&r, &full, &e), TS_OK);
    r.model.sliding_window = 1024;
    ck_assert_int_eq(ts_step_estimate(&r, &w1, &e), TS_OK);
    r.model.sliding_window = 4096;
    ck_assert_int_eq(ts_step_estimate(&r, &w2, &e), TS_OK);
    r.model.sliding_window = 1024;
    r.model.sliding_layers = 16;
    ck_assert_int_eq(ts_step_estimate(&r, &half, &e), TS_OK);
    ck_assert(w1.compute < w2.compute && w2.compute < full.compute);
    REL_CLOSE((w1.compute - full.compute) / (w2.compute - full.compute), 3136.0 / 1024.0, 1e-9);
    REL_CLOSE((half.compute - full.compute) / (w1.compute - full.compute), 0.5, 1e-9);

    r.model.sliding_layers = 0;
    r.model.sliding_window = 8192;
    ck_assert_int_eq(ts_step_estimate(&r, &big, &e), TS_OK);
    REL_CLOSE(big.compute, full.compute, 1e-12);
    r.model.sliding_window = 1 << 20;
    ck_assert_int_eq(ts_step_estimate(&r, &big, &e), TS_OK);
    REL_CLOSE(big.compute, full.compute, 1e-12);

    for (k = 0; k < 2; k++) {
        r.attention = k == 0 ? TS_ATTN_EAGER : TS_ATTN_TRITON;
        r.model.sliding_window = 0;
        ck_assert_int_eq(ts_step_estimate(&r, &full, &e), TS_OK);
        r.model.sliding_window = 1024;
        ck_assert_int_eq(ts_step_estimate(&r, &w1, &e), TS_OK);
        REL_CLOSE(w1.compute, full.compute, 1e-12);
    }

    /* sdpa: flash's time without a window; with one, transformers passes
     * the band as a dense mask without is_causal, so every key of the
     * square, s = 8192 against s / 2 = 4096: from full, +4096 where
     * flash's band is -3136 (half the layers: +2048). */
    r.attention = TS_ATTN_FLASH;
    r.model.sliding_window = 0;
    ck_assert_int_eq(ts_step_estimate(&r, &full, &e), TS_OK);
    r.model.sliding_window = 1024;
    ck_assert_int_eq(ts_step_estimate(&r, &w1, &e), TS_OK);
    r.attention = TS_ATTN_SDPA;
    r.model.sliding_window = 0;
    ck_assert_int_eq(ts_step_estimate(&r, &w2, &e), TS_OK);
    REL_CLOSE(w2.compute, full.compute, 1e-12);
    r.model.sliding_window = 1024;
    ck_assert_int_eq(ts_step_estimate(&r, &w2, &e), TS_OK);
    REL_CLOSE((w2.compute - full.compute) / (w1.compute - full.compute), -4096.0 / 3136.0, 1e-9);
    r.model.sliding_layers = 16;
    ck_assert_int_eq(ts_step_estimate(&r, &half, &e), TS_OK);
    REL_CLOSE((half.compute - full.compute) / (w2.compute - full.compute), 0.5, 1e-9);
    /* A window of exactly s keeps the mask under sdpa (the square), where
     * flash's band is then the causal half. */
    r.model.sliding_layers = 0;
    r.model.sliding_window = 8192;
    ck_assert_int_eq(ts_step_estimate(&r, &big, &e), TS_OK);
    REL_CLOSE((big.compute - full.compute) / (w2.compute - full.compute), 1.0, 1e-9);
}
END_TEST

START_TEST(test_layer_widths_follow_the_shape)
{
    ts_run r;
    ts_step a, b, c;
    ts_error e;

    llama_run(&r, "llama3-8b", 1);
    r.model.hidden = 3072;
    r.model.heads = 16;
    r.model.kv_heads = 16;
    r.model.ffn = 24576;
    r.micro_batch = 2;
    r.global_batch = 2;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.model.head_dim = 192;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.compute, a.compute, 1e-12);
    r.model.head_dim = 256;
    ck_assert_int_eq(ts_step_estimate(&r, &c, &e), TS_OK);
    ck_assert_msg(c.compute > 1.03 * a.compute && c.compute < 1.15 * a.compute,
                  "head_dim 256: compute %g vs %g", c.compute, a.compute);

    llama_run(&r, "mixtral-8x7b", 8);
    r.ep = 8;
    r.global_batch = 8;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.model.moe_ffn = r.model.ffn;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.compute, a.compute, 1e-12);
    r.model.moe_ffn = r.model.ffn / 4;
    ck_assert_int_eq(ts_step_estimate(&r, &c, &e), TS_OK);
    ck_assert_msg(c.compute < 0.75 * a.compute && c.compute > 0.2 * a.compute,
                  "moe_ffn F/4: compute %g vs %g", c.compute, a.compute);
    r.model.shared_experts = 1;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    ck_assert(b.compute > c.compute);

    /* Learned absolute positions (pos_embeddings: GPT-2, MPT) have no
     * rotary: its read and write of q and k (2 x 2 B per element, forward,
     * twice that backward) leaves the elementwise time, a little of the
     * compute (Llama 3 8B: 5120 of ~40 h-wide elements per token moved). */
    llama_run(&r, "llama3-8b", 1);
    r.global_batch = 1;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.model.pos_embeddings = 8192;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    ck_assert_msg(b.compute < a.compute && b.compute > 0.95 * a.compute, "rotary: %g vs %g",
                  b.compute, a.compute);

    /* A MoE model's first dense_layers are dense layers (DeepSeek-V3:
     * first_k_dense 3 of 61): with every layer dense the compute is the
     * dense model's exactly, with one of 32 it lies between (the 14336-wide
     * dense MLP against two 1024-wide experts). */
    {
        ts_step moe, one, all, dense;

        llama_run(&r, "mixtral-8x7b", 1);
        r.global_batch = 1;
        r.model.moe_ffn = 1024;
        ck_assert_int_eq(ts_step_estimate(&r, &moe, &e), TS_OK);
        r.model.dense_layers = 1;
        ck_assert_int_eq(ts_step_estimate(&r, &one, &e), TS_OK);
        r.model.dense_layers = r.model.layers;
        ck_assert_int_eq(ts_step_estimate(&r, &all, &e), TS_OK);
        r.model.experts = 0;
        r.model.top_k = 0;
        r.model.dense_layers = 0;
        r.model.moe_ffn = 0;
        ck_assert_int_eq(ts_step_estimate(&r, &dense, &e), TS_OK);
        REL_CLOSE(all.compute, dense.compute, 1e-12);
        ck_assert_msg(one.compute > moe.compute && one.compute < dense.compute, "%g %g %g",
                      moe.compute, one.compute, dense.compute);
    }

    /* DeepSeek-V2-Lite's MLA: kv latent 512, rope 64, nope 128, v 128. */
    llama_run(&r, "llama3-8b", 1);
    r.model.hidden = 2048;
    r.model.heads = 16;
    r.model.kv_heads = 16;
    r.model.ffn = 10944;
    r.model.kv_lora_rank = 512;
    r.model.qk_rope_dim = 64;
    r.model.qk_nope_dim = 128;
    r.model.v_head_dim = 128;
    r.global_batch = 1;
    ck_assert_msg(ts_step_estimate(&r, &a, &e) == TS_OK, "%s", e.text);
    r.model.kv_lora_rank = 1024;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    ck_assert(b.compute > a.compute);
}
END_TEST

/* 2 layers, h 1024, 8 heads, vocab 1000, seq 1024, tp 2 without SP, one
 * sequence on 2 GPUs of one node. */
static void tp_run(ts_run *r)
{
    ts_run_defaults(r);
    r->model.layers = 2;
    r->model.hidden = 1024;
    r->model.heads = 8;
    r->model.vocab = 1000;
    r->seq = 1024;
    r->micro_batch = 8; /* GPU-bound: no idle time under the launch floor hides TP */
    r->tp = 2;
    r->gpus = 2;
    r->dp = 0;
    r->global_batch = 8;
}

/* tp_run's TP time by hand over n ranks at bus bandwidth bw with `hops`
 * 3 us hops: per layer 4 all-reduces of S = 8,192 tokens * 1024 * 2 B,
 * 2 (n - 1) / n S / bw each, plus the vocab-parallel loss's 2 all-reduces
 * of 4 B per token. */
static double tp_comm_by_hand(double n, double hops, double bw)
{
    double T = 8192.0, S = T * 1024.0 * 2.0, f = 2.0 * (n - 1.0) / n;
    double one = f * S / bw + hops * 3e-6;
    double head = 2.0 * (f * T * 4.0 / bw + hops * 3e-6);

    return 2.0 * 4.0 * one + head;
}

/* tp_run over NVLink at 900/2 GB/s * 0.8, 2 ranks: 2 hops. */
START_TEST(test_tp_allreduce_per_layer)
{
    ts_run r;
    ts_step s;
    ts_error e;

    tp_run(&r);
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.tp_comm, tp_comm_by_hand(2, 2, 360e9), 1e-12);
    /* A user NVLink figure replaces the catalogue's. */
    r.nvlink_gbps = 450;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.tp_comm, tp_comm_by_hand(2, 2, 180e9), 1e-12);
}
END_TEST

/* nvlink_topology mesh: an MI300X's 896 GB/s is seven 128 GB/s Infinity
 * Fabric links, one to each other GPU of the 8-GPU platform (its default
 * in the catalogue), so TP 2 all-reduces over one link: 896 / 2 x 0.8 / 7
 * = 51.2 GB/s one way, where a switch (or the whole node, TP 8) gets
 * 358.4.  tp_run on MI300X. */
START_TEST(test_nvlink_mesh)
{
    ts_run r;
    ts_step s, all;
    ts_error e;
    double bw = 896e9 / 2.0 * 0.8;

    tp_run(&r);
    r.gpu = *ts_gpu_find("mi300x");
    ck_assert(r.gpu.mesh);
    ck_assert(!ts_gpu_find("h100-sxm")->mesh);
    ck_assert_msg(ts_step_estimate(&r, &s, &e) == TS_OK, "%s", e.text);
    REL_CLOSE(s.tp_comm, tp_comm_by_hand(2, 2, bw / 7.0), 1e-12);
    /* A 4-GPU node: the pair holds 1 of 3 peers' links. */
    r.gpus_per_node = 4;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.tp_comm, tp_comm_by_hand(2, 2, bw / 3.0), 1e-12);
    /* TP 4 of the 8: three of the seven peers' links, 4 tree hops. */
    r.gpus_per_node = 8;
    r.tp = 4;
    r.gpus = 4;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.tp_comm, tp_comm_by_hand(4, 4, bw * 3.0 / 7.0), 1e-12);
    r.tp = 2;
    r.gpus = 2;
    /* A switch gives the pair every link. */
    r.nvlink_topology = TS_TOPO_SWITCH;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.tp_comm, tp_comm_by_hand(2, 2, bw), 1e-12);
    /* TP 8 spans the whole mesh: every link, as a switch. */
    r.tp = 8;
    r.gpus = 8;
    ck_assert_int_eq(ts_step_estimate(&r, &all, &e), TS_OK);
    r.nvlink_topology = TS_TOPO_MESH;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.tp_comm, all.tp_comm, 1e-12);
    /* An H100 told it is a mesh splits its links the same way. */
    r.gpu = *ts_gpu_find("h100-sxm");
    r.tp = 2;
    r.gpus = 2;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.tp_comm, tp_comm_by_hand(2, 2, 900e9 / 2.0 * 0.8 / 7.0), 1e-12);
}
END_TEST

/* tp_comm_overlap (Transformer Engine userbuffers, PyTorch async TP): with
 * SP a layer's 4 forward and 4 backward collectives (all-gather or
 * reduce-scatter of S = tok h 2 B, "one" each) run under the linears'
 * GEMMs.  Llama 3 70B, TP 8 in one node, 8,192 tokens: one = 7 x 1/8 x
 * 134 MB / 360 GB/s + 7 x 3 us = 347 us, 4 one = 1.4 ms, far below the
 * forward GEMMs' ~3 ms per layer, so nothing waits: the 8 exposed "one"
 * of each layer become hidden, charged at kappa 0.189 like every
 * overlapped collective.  tp_comm falls by L x 8 one x (1 - 0.189); the
 * head's vocab-parallel loss all-reduces are not overlapped. */
START_TEST(test_tp_comm_overlap)
{
    ts_run r;
    ts_step off, on;
    ts_error e;
    double S, one;

    mp_run(&r, "llama3-70b", 8, 1, 8192, 1, true);
    ck_assert_int_eq(ts_step_estimate(&r, &off, &e), TS_OK);
    r.tp_comm_overlap = true;
    ck_assert_msg(ts_step_estimate(&r, &on, &e) == TS_OK, "%s", e.text);
    S = 8192.0 * 8192.0 * 2.0;
    one = 7.0 * (S / 8.0) / 360e9 + 7.0 * 3e-6;
    REL_CLOSE(off.tp_comm - on.tp_comm, 80.0 * 8.0 * one * (1.0 - 0.189), 1e-9);
    REL_CLOSE(off.compute, on.compute, 1e-12);
    /* Megatron-LM asserts sequence parallelism for --tp-comm-overlap. */
    r.sequence_parallel = false;
    ck_assert_int_eq(ts_step_estimate(&r, &on, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "tp_comm_overlap");
    r.sequence_parallel = true;
    r.tp = 1;
    r.dp = 8;
    r.global_batch = 8;
    ck_assert_int_eq(ts_step_estimate(&r, &on, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "tp_comm_overlap");
}
END_TEST

START_TEST(test_compute_uses_prediction)
{
    ts_run r;
    ts_compute c;
    ts_error e;

    llama_run(&r, "llama3-8b", 64);
    r.global_batch = 512;
    ck_assert_int_eq(ts_compute_estimate(&r, &c, &e), TS_OK);
    ck_assert(c.mfu_predicted);
    ck_assert(c.mfu == c.predicted_mfu && c.mfu > 0 && c.mfu <= 1);
    /* GPU-hours * 3600 = step time * steps * GPUs, by construction. */
    REL_CLOSE(c.gpu_hours.value * 3600.0, c.step_time.value * c.steps * 64.0, 1e-9);
    REL_CLOSE(c.step_seconds, c.step_time.value, 1e-9);
    /* An mfu input overrides: 6 P T / (peak * 0.4 * 3600). */
    r.mfu = 0.4;
    r.gpu_hour_usd = 2.5;
    ck_assert_int_eq(ts_compute_estimate(&r, &c, &e), TS_OK);
    ck_assert(!c.mfu_predicted && c.mfu == 0.4);
    REL_CLOSE(c.gpu_hours.value, c.model_flops.value / (989e12 * 0.4 * 3600.0), 1e-12);
    REL_CLOSE(c.cost_usd.value, 2.5 * c.gpu_hours.value, 1e-12);
    ck_assert(c.predicted_mfu > 0 && c.predicted_mfu != 0.4);
}
END_TEST

START_TEST(test_bad_network_inputs)
{
    ts_run r;
    ts_step s;
    ts_error e;

    llama_run(&r, "llama3-8b", 8);
    r.nvlink_gbps = -1;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_EINVAL);
    ck_assert_str_eq(e.field, "nvlink_gbps");
    r.nvlink_gbps = 0;
    r.net_gbps = NAN;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_EINVAL);
    ck_assert_str_eq(e.field, "net_gbps");
    r.net_gbps = 0;
    r.gemm_efficiency = 1.5;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_EINVAL);
    ck_assert_str_eq(e.field, "gemm_efficiency");
    r.gemm_efficiency = 0;
    r.gpu_hour_usd = -2;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_EINVAL);
    ck_assert_str_eq(e.field, "gpu_hour_usd");
}
END_TEST

/* Megatron's data-parallel overlap (--overlap-grad-reduce,
 * --overlap-param-gather; megatron/core/distributed/
 * param_and_grad_buffer.py@d98e8a64): on, the gradient reduce-scatter
 * runs under the last backward and the parameter all-gather under the
 * first forward, only what outlasts them and the last bucket showing;
 * off (Megatron-LM's default), each is waited for in full.  The
 * overlapped run's dp_comm is exposed + kappa x hidden (0.189, the
 * contention charge), so with both off it is that plus (1 - 0.189) x
 * hidden, and nothing is hidden; a 7B model on 16 GPUs over two nodes
 * (the collectives cross the NIC). */
START_TEST(test_megatron_dp_overlap)
{
    ts_run r;
    ts_step on, off, half;
    ts_error e;

    ts_run_defaults(&r);
    r.model.layers = 32;
    r.model.hidden = 4096;
    r.model.heads = 32;
    r.model.vocab = 32000;
    r.seq = 2048;
    r.micro_batch = 1;
    r.global_batch = 32;
    r.gpus = 16;
    r.dp = 0;
    r.zero = 1;
    r.framework = TS_FW_MEGATRON;
    ck_assert_int_eq(ts_step_estimate(&r, &on, &e), TS_OK);
    ck_assert(on.overlapped_comm > 0);
    r.overlap_grad_reduce = false;
    r.overlap_param_gather = false;
    ck_assert_int_eq(ts_step_estimate(&r, &off, &e), TS_OK);
    REL_CLOSE(off.dp_comm, on.dp_comm + (1.0 - 0.189) * on.overlapped_comm, 1e-9);
    ck_assert(off.overlapped_comm == 0.0);
    ck_assert(off.step_time.value > on.step_time.value);
    r.overlap_grad_reduce = true;
    ck_assert_int_eq(ts_step_estimate(&r, &half, &e), TS_OK);
    ck_assert(half.dp_comm > on.dp_comm && half.dp_comm < off.dp_comm);
    /* Megatron's flags, so off under FSDP is a 400 naming the field. */
    r.framework = TS_FW_FSDP;
    r.zero = 3;
    ck_assert_int_eq(ts_step_estimate(&r, &half, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "overlap_param_gather");
}
END_TEST

/* The matmul core at the sustained clock: the catalogue MAMF times the
 * measured MSMF/MAMF of a power-saturated chip (ml-engineering@082816f:
 * H200 708.5 / 841.9, the H100 SXM's die and 700 W limit).  No shape:
 * compute = 6 P T / (gpus * peak * core) exactly.  The CUDA toolkit does
 * not move it: llm-foundry's H100 logs show CUDA 11.8 and 12.1 within a few
 * per cent (h100old.csv / h100new.csv @beb8dee69).  A100: no MSMF
 * measured, the burst MAMF stands; gemm_efficiency overrides both. */
START_TEST(test_sustained_matmul)
{
    ts_run r;
    ts_step a, b;
    ts_error e;

    ts_run_defaults(&r);
    r.model.params = 1e9;
    r.seq = 1000;
    r.global_batch = 1;
    r.gpus = 1;
    r.dp = 1;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    REL_CLOSE(a.compute, 6e12 / (989e12 * 0.801 * (708.5 / 841.9)), 1e-9);
    r.cuda = 11.8;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.compute, a.compute, 1e-12);
    r.gemm_efficiency = 0.75;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.compute, 6e12 / (989e12 * 0.75), 1e-9);
    r.gemm_efficiency = 0;
    r.gpu = *ts_gpu_find("a100-80");
    r.cuda = 11.7;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.compute, 6e12 / (312e12 * 0.859), 1e-9);
    /* Grand Teton's H100 96GB at its default 500 W (torchtitan
     * benchmarks/llama3_h100_202412_torchtitan.md@c7484b20d): the same die
     * below the 700 W the sustain was measured at settles at cbrt(500 /
     * 700) = 0.8939 of that clock (the cube-root rule of ts_gpu_settled):
     * 989 x 0.801 x 708.5/841.9 x 0.8939 = 596.0 TFLOP/s
     * (sustain 0.752264). */
    r.gpu = *ts_gpu_find("h100-96");
    r.cuda = 0;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.compute, 6e12 / (989e12 * 0.801 * (708.5 / 841.9) * cbrt(500.0 / 700.0)), 1e-9);
    REL_CLOSE(ts_gpu_sustain(&r.gpu), 0.752264, 1e-5);
    r.gpu = *ts_gpu_find("h100-sxm");
    REL_CLOSE(ts_gpu_sustain(&r.gpu), 708.5 / 841.9, 1e-12);
    /* H100 NVL, the same 132-SM die at 400 W: x cbrt(400 / 700) = 0.8298;
     * H100 PCIe (114 SMs) keeps its burst (no sustain). */
    r.gpu = *ts_gpu_find("h100-nvl");
    REL_CLOSE(ts_gpu_sustain(&r.gpu), 708.5 / 841.9 * cbrt(400.0 / 700.0), 1e-12);
    r.gpu = *ts_gpu_find("h100-pcie");
    ck_assert(ts_gpu_sustain(&r.gpu) == 0.0);
}
END_TEST

/* A TP group over two nodes (TP 16, 8 H100 per node): NCCL's rings stripe
 * over all eight NICs of a node (NVIDIA/nccl#412), so the all-reduces run
 * at min(8 x 50 GB/s, NVLink 450 GB/s one way) x 0.8 = 320 GB/s bus
 * bandwidth, not one NIC's 40 GB/s.  No SP, no recompute, one micro-batch:
 * tp_comm = L (4 all-reduces of tok h 2 B) + 2 all-reduces of tok 4 B
 * (vocab-parallel loss), 8 us per hop across nodes. */
START_TEST(test_tp_across_nodes_nic_striping)
{
    ts_run r;
    ts_step s;
    ts_error e;
    double tok = 2048, bw = 8 * 50e9 * 0.8, want;

    mp_run(&r, "llama3-8b", 16, 1, 2048, 1, false);
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    want = 32 * 4 * ts_step_allreduce_s(tok * 4096 * 2, 16, bw, 8e-6) +
           2 * ts_step_allreduce_s(tok * 4, 16, bw, 8e-6);
    REL_CLOSE(s.tp_comm, want, 1e-12);
}
END_TEST

/* Pipeline p2p without SP: Megatron-LM splits the stage boundary's
 * activation (2048 tokens x 4096 x 2 B = 16,777,216 B) into tp = 8
 * chunks, each rank sends its 1/8 through its own NIC (H100: 50 GB/s at
 * 80 %) and the next stage all-gathers them over NVLink (900 / 2 GB/s at
 * 80 %): Narayanan et al. 2021 Sec. 4.1, megatron/p2p_communication.py
 * @7fccd6a17a.  1F1B, m = 4 micro-batches, p = 2: 2 (m + p - 1) = 10
 * transfers on the critical path.  With SP the activation is already
 * split and nothing is gathered. */
START_TEST(test_pp_p2p_scatter_gather)
{
    ts_run r;
    ts_step s;
    ts_error e;
    double full = 2048.0 * 4096 * 2, one;

    mp_run(&r, "llama3-8b", 8, 2, 2048, 4, false);
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    one = full / 8 / (50e9 * 0.8) + 8e-6 + ts_step_allgather_s(full, 8, 450e9 * 0.8, 3e-6);
    REL_CLOSE(s.pp_p2p, 10 * one, 1e-12);
    r.sequence_parallel = true;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.pp_p2p, 10 * (full / 8 / (50e9 * 0.8) + 8e-6), 1e-12);
}
END_TEST

/* Pipeline p2p under the interleaved schedule, tp 8 with SP (each rank
 * sends 1/8 of 2048 x 4096 x 2 B through its NIC, 50 GB/s at 80 %, 8 us),
 * p = 4, v = 2, m = 8.  Blocking (megatron/p2p_communication.py
 * @6985e58938, the SC21 runs): every chunk boundary of every micro-batch
 * waits each way, 2 (m v + p - 1) = 38 exchanges.  Overlapped
 * (megatron/core/pipeline_parallel/schedules.py@d98e8a64dd): the last
 * rank's warm-up and cool-down, 2 (v p - 1) = 14.  m = 4: m v = 8 is
 * within rank 0's warm-up 2 (p - 1) + (v - 1) p = 10, all blocking,
 * 2 (8 + 3) = 22. */
START_TEST(test_pp_p2p_interleaved)
{
    ts_run r;
    ts_step s;
    ts_error e;
    double one = 2048.0 * 4096 * 2 / 8 / (50e9 * 0.8) + 8e-6;

    mp_run(&r, "llama3-8b", 8, 4, 2048, 8, true);
    r.pp_schedule = TS_PP_INTERLEAVED;
    r.vpp = 2;
    ck_assert(r.overlap_p2p_comm); /* the default */
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.pp_p2p, 14 * one, 1e-12);
    r.overlap_p2p_comm = false;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.pp_p2p, 38 * one, 1e-12);
    r.overlap_p2p_comm = true;
    r.global_batch = 4;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.pp_p2p, 22 * one, 1e-12);
}
END_TEST

/* Stages that share nodes, a pipeline that spans two: tp 4, p = 4 on 16
 * H100, stages 0-1 in one node and 2-3 in the other.  The exchanges are
 * rendezvous, so rank 1 (network on one side, NVLink, 900 / 2 GB/s at
 * 80 % and 3 us, on the other) paces every rank: 1F1B, m = 8, the fill
 * and drain 2 (p - 1) = 6 network exchanges, each steady step one of
 * each, 6 c + 8 (c + c_nv).  Interleaved (v = 2, blocking) sends both
 * sides in one batch over the two links at once: 2 (p - 1 + (v - 1) p)
 * c + (m v - (v - 1) p) c = 14 c + 12 c. */
START_TEST(test_pp_p2p_node_edge)
{
    ts_run r;
    ts_step s;
    ts_error e;
    double act = 2048.0 * 4096 * 2 / 4;
    double c = act / (50e9 * 0.8) + 8e-6, c_nv = act / (450e9 * 0.8) + 3e-6;

    mp_run(&r, "llama3-8b", 4, 4, 2048, 8, true);
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.pp_p2p, 6 * c + 8 * (c + c_nv), 1e-12);
    r.pp_schedule = TS_PP_INTERLEAVED;
    r.vpp = 2;
    r.overlap_p2p_comm = false;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.pp_p2p, 26 * c, 1e-12);
}
END_TEST

/* A tiny model whose kernels are far shorter than their launches. */
static void tiny_run(ts_run *r, int64_t gpus)
{
    ts_run_defaults(r);
    r->model.layers = 32;
    r->model.hidden = 64;
    r->model.heads = 1;
    r->model.vocab = 8;
    r->seq = 16;
    r->micro_batch = 1;
    r->gpus = gpus;
    r->dp = 0;
    r->global_batch = gpus;
    r->attention = TS_ATTN_FLASH;
    r->dropout = false;
    r->recompute = TS_RECOMPUTE_NONE;
}

START_TEST(test_launch_floor)
{
    ts_run r;
    ts_step s;
    ts_error e;

    /* 16 tokens of h 64: every GEMM and elementwise kernel lasts
     * nanoseconds, so each layer runs at the host's launch rate, 5 us a
     * kernel: forward 4 GEMMs + 1 fused attention + 2 norms + 2 residual
     * adds + activation + rotary = 11, backward 8 + 1 + 6 = 15; 32 layers
     * x 26 x 5 us = 4.16 ms.  The output layer (vocab 8) adds
     * nanoseconds, hence 1e-3. */
    tiny_run(&r, 1);
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.compute, 32.0 * 26.0 * 5e-6, 1e-3);
}
END_TEST

/* Megatron's legacy layer: the host's time per base kernel is the one
 * measured on vTrain's host-bound runs (ts_step_layer.c), 69 us, not a
 * raw launch.  Eager attention with dropout and full recompute: forward 4
 * GEMMs + 4 attention kernels (two batched matmuls, softmax, dropout) + 8
 * elementwise (2 norms, 2 residual adds, activation, rotary, 2 dropouts) =
 * 16, backward 8 + 4 + 8 = 20, recompute the forward's 16: 32 layers x 36
 * x 69 us = 79.5 ms of compute and 32 x 16 x 69 us = 35.3 ms of
 * recompute.  Not that layer, so 5 us launches (forward 13 and backward 17
 * with FlashAttention's 1 kernel, and with eager attention but no dropout:
 * 3 attention and 6 elementwise kernels): FlashAttention,
 * Hugging Face's layers (layer_impl eager, whose extra passes add kernels:
 * only the ratio to the legacy figure is checked), no dropout, LoRA. */
START_TEST(test_host_floor_megatron_eager)
{
    ts_run r;
    ts_step s;
    ts_error e;
    double legacy;

    tiny_run(&r, 1);
    r.framework = TS_FW_MEGATRON;
    r.attention = TS_ATTN_EAGER;
    r.dropout = true;
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.compute, 32.0 * 36.0 * 69e-6, 1e-3);
    REL_CLOSE(s.recompute, 32.0 * 16.0 * 69e-6, 1e-3);
    legacy = s.compute;
    r.framework = TS_FW_DEEPSPEED;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.compute, legacy, 1e-9);

    r.attention = TS_ATTN_FLASH;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.compute, 32.0 * 30.0 * 5e-6, 1e-3);
    REL_CLOSE(s.recompute, 32.0 * 13.0 * 5e-6, 1e-3);

    r.attention = TS_ATTN_EAGER;
    r.dropout = false;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.compute, 32.0 * (13.0 + 17.0) * 5e-6, 1e-3);

    r.dropout = true;
    r.layer_impl = TS_LAYER_EAGER;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    ck_assert_msg(s.compute < legacy / 5.0, "HF layers under DeepSpeed: %g s", s.compute);

    r.layer_impl = TS_LAYER_DEFAULT;
    r.lora_rank = 8;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    ck_assert_msg(s.compute < legacy / 5.0, "LoRA under DeepSpeed: %g s", s.compute);
}
END_TEST

/* A host-bound layer's TP all-reduces run on the GPU while it waits for
 * the host's next launch.  tiny_run at TP 2 over 2 GPUs: every kernel
 * lasts nanoseconds, so a layer takes the launch floor, 55 us forward and
 * 75 us backward, with the GPU idle nearly all of it.  Each all-reduce of
 * S = 16 tokens x 64 x 2 B = 2,048 B (2 heads of 32) at 360 GB/s is 2 (1/2) S / bw + 2
 * hops x 3 us = 6.006 us: the forward's two and the backward's two fit
 * in the idle time, so only the vocab-parallel loss's two all-reduces of
 * 4 B per token are exposed.  At 4.096 MB/s (nvlink_gbps 0.01024 x 0.8 /
 * 2) one all-reduce is 0.5 ms + 6 us: each layer exposes all four but
 * the 130 us of idle time. */
START_TEST(test_host_idle_hides_tp)
{
    ts_run r;
    ts_step s;
    ts_error e;
    double bw = 360e9, one, head;

    tiny_run(&r, 2);
    r.model.heads = 2;
    r.tp = 2;
    r.global_batch = 1; /* one micro-batch */
    ck_assert_msg(ts_step_estimate(&r, &s, &e) == TS_OK, "%s", e.text);
    head = 2.0 * (16.0 * 4.0 / bw + 2.0 * 3e-6);
    REL_CLOSE(s.tp_comm, head, 1e-9);
    REL_CLOSE(s.compute, 32.0 * 130e-6, 1e-3); /* the floor, as test_launch_floor */

    bw = 0.01024e9 / 2.0 * 0.8;
    r.nvlink_gbps = 0.01024;
    ck_assert_msg(ts_step_estimate(&r, &s, &e) == TS_OK, "%s", e.text);
    one = 2048.0 / bw + 2.0 * 3e-6;
    head = 2.0 * (16.0 * 4.0 / bw + 2.0 * 3e-6);
    REL_CLOSE(s.tp_comm, 32.0 * (4.0 * one - 130e-6) + head, 1e-4);
}
END_TEST

START_TEST(test_fsdp_per_layer_latency)
{
    ts_run r;
    ts_step s;
    ts_error e;
    double lam = 255.0 * 8e-6, f = 55e-6, b = 75e-6;

    /* FSDP FULL_SHARD over 256 GPUs (32 nodes), one micro-batch: each of
     * the 32 layers gathers its ~100 kB of weights before forward and
     * backward and reduce-scatters its grads, 96 ring collectives of
     * lam = 255 hops x 8 us (bandwidth term ~1 us: within 1e-2).  Of the
     * forward's 32 gathers 31 run under a layer's 55 us forward, the first
     * is exposed; of the backward's 32 (gather + reduce-scatter) pairs 31
     * run under a 75 us backward, one is exposed:
     *   exposed = 31 (lam - f) + lam + 31 (2 lam - b) + 2 lam
     *           = 96 lam - 31 (f + b),  hidden = 31 (f + b) at kappa 0.189.
     * The latency counted once per step, as before, gave ~2 ms. */
    tiny_run(&r, 256);
    r.framework = TS_FW_FSDP;
    r.layer_impl = TS_LAYER_FUSED; /* the 11 + 15 kernels of test_launch_floor */
    r.zero = 3;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.dp_comm, 96.0 * lam - 31.0 * (1.0 - 0.189) * (f + b), 1e-2);
    /* SHARD_GRAD_OP: one gather and one reduce-scatter per layer:
     *   exposed = 31 (lam - f) + lam + 31 (lam - b) + lam = 64 lam - 31 (f + b). */
    r.zero = 2;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    REL_CLOSE(s.dp_comm, 64.0 * lam - 31.0 * (1.0 - 0.189) * (f + b), 1e-2);
}
END_TEST

/* The toolkit must run on the GPU (CUDA release notes). */
START_TEST(test_cuda_compat)
{
    static const struct {
        const char *gpu;
        double cuda;
        ts_status st;
    } c[] = {
        { "h100-sxm", 11.7, TS_EINCOMPAT }, /* Hopper arrived in 11.8 */
        { "h100-sxm", 11.8, TS_OK },
        { "b200", 12.4, TS_EINCOMPAT }, /* Blackwell needs 12.8 */
        { "b200", 12.8, TS_OK },
        { "b300", 12.8, TS_EINCOMPAT }, /* Blackwell Ultra (sm_103) needs 12.9 */
        { "b300", 12.9, TS_OK },
        { "a100-80", 10.2, TS_EINCOMPAT }, /* Ampere needs 11.0 */
        { "v100-32", 13.0, TS_EINCOMPAT }, /* CUDA 13 dropped Volta */
        { "v100-32", 12.9, TS_OK },
        { "mi300x", 12.4, TS_EINCOMPAT }, /* not an NVIDIA GPU */
        { "h100-sxm", 8.0, TS_EINVAL },   /* below the accepted range */
        { "h100-sxm", 14.0, TS_EINVAL },
        { "h100-sxm", NAN, TS_EINVAL },
    };
    size_t i;

    for (i = 0; i < sizeof c / sizeof c[0]; i++) {
        ts_run r;
        ts_step s;
        ts_error e;

        llama_run(&r, "llama3-8b", 8);
        r.gpu = *ts_gpu_find(c[i].gpu);
        if (r.gpu.sm == 70)
            r.compute_precision = r.precision = r.grad_precision = TS_PREC_FP16;
        r.cuda = c[i].cuda;
        ck_assert_msg(ts_step_estimate(&r, &s, &e) == c[i].st, "%s cuda %g: %s", c[i].gpu,
                      c[i].cuda, e.text);
        if (c[i].st != TS_OK)
            ck_assert_str_eq(e.field, "cuda");
    }
}
END_TEST

/* flash-attn's Triton kernel (llm-foundry's attn_impl: triton): the
 * attention core at 1/2 of FA2's rate (its docstring: about
 * FlashAttention-1's speed; Dao 2023: FA2 "around 2x" FA1), everything
 * else unchanged.  Seq 8192 makes attention large: the difference in
 * forward+backward compute is exactly the flash run's attention time. */
START_TEST(test_triton_attention)
{
    ts_run r;
    ts_step f, t;
    ts_error e;
    double L, tok, h, fl, attn, mem;

    llama_run(&r, "llama3-8b", 8);
    r.seq = 8192;
    r.global_batch = 8;
    ck_assert_int_eq(ts_step_estimate(&r, &f, &e), TS_OK);
    r.attention = TS_ATTN_TRITON;
    ck_assert_int_eq(ts_step_estimate(&r, &t, &e), TS_OK);
    /* One micro-batch of 8192 tokens per GPU, 32 layers, h 4096: attention
     * FLOPs 4 tok (s/2) h forward, 2.5x that backward, at 0.35 of 989e12. */
    L = 32;
    tok = 8192;
    h = 4096;
    fl = 4.0 * tok * (8192 / 2.0) * h;
    attn = L * 3.5 * fl / (989e12 * 0.35);
    /* Its backward's own kernels (ts_step_bwd_extra), per token: 4096 q
     * elements x (4 zeroing the fp32 dq + 4 + 2 copying it to bf16) +
     * 4096 x (2 + 2) reading o and do + 6144 x (2 + 2) concatenating dq,
     * dk, dv into the qkv grad = 81920 B at the streaming bandwidth. */
    mem = r.gpu.hbm_bw * (r.gpu.stream_eff > 0 ? r.gpu.stream_eff : 0.9);
    REL_CLOSE(t.compute - f.compute, attn + L * tok * 81920.0 / mem, 1e-9);
}
END_TEST

/* Backward kernels without a forward twin.  llama3-8b (h 4096, 32 heads,
 * 8 kv heads of 128, F 14336, gated), 8 GPUs, seq 8192, one micro-batch
 * of 8192 tokens per GPU, 32 layers.  Biases on every linear add one
 * reduction over tokens each, reading the bf16 output grad: q,k,v 6144
 * wide, out 4096, gate+up 28672, down 4096: 43008 x 2 B a token, 4
 * launches (test_triton_attention has the triton backward's own). */
START_TEST(test_backward_extra_kernels)
{
    ts_run r;
    ts_step a, b;
    ts_error e;
    double mem, tok = 8192, L = 32;

    llama_run(&r, "llama3-8b", 8);
    r.seq = 8192;
    r.global_batch = 8;
    mem = r.gpu.hbm_bw * (r.gpu.stream_eff > 0 ? r.gpu.stream_eff : 0.9);
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.model.qkv_bias = r.model.out_bias = r.model.mlp_bias = true;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.compute - a.compute, L * tok * 43008.0 * 2.0 / mem, 1e-9);
}
END_TEST

/* FSDP1's flat-parameter grad path.  llama3-8b on 8 GPUs under FSDP
 * (zero 3, bf16 params, fp32 reduce): a layer's 4096 (4096 + 2 x 1024 +
 * 4096) + 3 x 4096 x 14336 = 218103808 weights each cost 2 + 2 B more
 * (the split backward's concatenation into the flat grad) and 4 + 4 B
 * more (the in-place pre-divide of the fp32 unsharded grad), 12 B, every
 * micro-batch (one here), 32 layers, at the streaming bandwidth. */
START_TEST(test_fsdp1_flat_param_grads)
{
    ts_run r;
    ts_step a, b;
    ts_error e;
    double mem;

    llama_run(&r, "llama3-8b", 8);
    r.framework = TS_FW_FSDP;
    r.zero = 3;
    r.grad_precision = TS_PREC_FP32;
    r.global_batch = 8;
    mem = r.gpu.hbm_bw * (r.gpu.stream_eff > 0 ? r.gpu.stream_eff : 0.9);
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.fsdp_impl = TS_FSDP_FLAT_PARAM;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.compute - a.compute, 32.0 * 218103808.0 * 12.0 / mem, 1e-9);
}
END_TEST

/* ---- search ------------------------------------------------------- */

static ts_search_out *search_out(void)
{
    ts_search_out *o = malloc(sizeof *o);

    ck_assert_ptr_nonnull(o);
    return o;
}

/* The GEMM roofline against a published cuBLASLt sweep (Azure's ND A100
 * v4, FP16, timed after 10,000 warm-up iterations: Azure/AI-benchmarking-
 * guide Azure_Results/ND_A100_v4_results.md@8fd0c6e1): square GEMMs of
 * 2,048-16,384 measured 221.8, 228.0, 253.7 and 256.5 TFLOP/s; the roofline
 * at A100's MAMF (0.859 of 312) and 0.9 of 2.039 TB/s gives 220.8, 242.1,
 * 254.4 and 261.0, each within 10 %.  (1,024^3: 187.7 against 119.4
 * measured, a fixed per-kernel cost the model does not add per GEMM.) */
START_TEST(test_gemm_published_sweep)
{
    static const double n[] = { 2048, 4096, 8192, 16384 };
    static const double meas[] = { 221.8e12, 228.0e12, 253.7e12, 256.5e12 };
    size_t i;

    for (i = 0; i < sizeof n / sizeof n[0]; i++) {
        double t = ts_step_gemm_s(n[i], n[i], n[i], 312e12, 0.859, 2.039e12);

        REL_CLOSE(2.0 * n[i] * n[i] * n[i] / t, meas[i], 0.10);
    }
}
END_TEST

/* The GEMM roofline at small transformer shapes against measured bf16
 * latencies (ai-dynamo/aiconfigurator@095f58a5, aic-core/src/
 * aiconfigurator_core/systems/data/{a100_sxm,h100_sxm}/gemm/trtllm/<version>/
 * gemm_perf.parquet: CUDA-graph replays timed with CUDA events, 6 runs
 * a shape; A100-SXM4-80GB under TRT-LLM 1.0.0, H100 80GB HBM3 under
 * 1.3.0rc20), M = 8,192 tokens, K -> N as the forward linear, TFLOP/s =
 * 2MNK / latency.  The model runs each GEMM at the catalogue MAMF and the
 * catalogue streaming bandwidth, one after the other (A100 0.859 x 312 and
 * 1.61 TB/s; H100 0.801 x 989 and 2.90 TB/s).  A100: 0.85-1.04 of the
 * measured rate.  H100: 0.73-0.89, the additive roofline charging a
 * small-K GEMM's traffic that the measured kernels hide under the math,
 * so the model errs slow there, never fast.  The bands are what the
 * comparison shows (the data carry about 10 % noise), so a change to the
 * roofline that moves any shape out of them fails here. */
START_TEST(test_gemm_small_shapes_measured)
{
    static const struct {
        double m, k, n, a100, h100; /* measured TFLOP/s */
    } g[] = {
        { 8192, 768, 768, 202, 581 },   { 8192, 768, 3072, 230, 641 },
        { 8192, 3072, 768, 245, 739 },  { 8192, 1024, 1024, 191, 655 },
        { 8192, 2048, 2048, 254, 710 }, { 8192, 2048, 8192, 262, 743 },
        { 8192, 4096, 4096, 265, 800 }, { 8192, 16384, 4096, 255, 796 },
    };
    const ts_gpu *a = ts_gpu_find("a100-80"), *h = ts_gpu_find("h100-sxm");
    size_t i;

    for (i = 0; i < sizeof g / sizeof g[0]; i++) {
        double f = 2.0 * g[i].m * g[i].n * g[i].k;
        /* ts_step_gemm_s scales the bandwidth by TS_STEP_MEM_EFF (0.9);
         * hand it the catalogue's streaming figure over that. */
        double ta = ts_step_gemm_s(g[i].m, g[i].n, g[i].k, a->bf16_flops, ts_step_core_eff(a),
                                   a->hbm_bw * a->stream_eff / 0.9);
        double th = ts_step_gemm_s(g[i].m, g[i].n, g[i].k, h->bf16_flops, ts_step_core_eff(h),
                                   h->hbm_bw * h->stream_eff / 0.9);
        double ra = f / ta / (g[i].a100 * 1e12), rh = f / th / (g[i].h100 * 1e12);

        ck_assert_msg(ra > 0.84 && ra < 1.05, "A100 %gx%gx%g: %.3f", g[i].m, g[i].k, g[i].n, ra);
        ck_assert_msg(rh > 0.72 && rh < 0.90, "H100 %gx%gx%g: %.3f", g[i].m, g[i].k, g[i].n, rh);
    }
}
END_TEST

/* Cross-entropy bytes per logit, by hand from Megatron-Core's kernel
 * sequence (core/ts_step_kernel.c): forward 2 + 4 (cast) + 4 (max) + 8 (subtract)
 * + 8 (exp) + 4 (sum) + 8 (divide) = 38 B; backward 8 (mul) + 6 (cast
 * back) = 14 B.  1,000 logits: 38,000 and 14,000 B; the same for torch.
 * flash-attn's fused kernel: 2 B read forward, 2 B read + 2 B written
 * backward: 2,000 and 4,000 B. */
START_TEST(test_loss_bytes)
{
    double f, b;

    ts_step_loss_bytes(TS_LOSS_VOCAB_PARALLEL, 1000.0, &f, &b);
    REL_CLOSE(f, 38000.0, 1e-12);
    REL_CLOSE(b, 14000.0, 1e-12);
    ts_step_loss_bytes(TS_LOSS_TORCH, 1000.0, &f, &b);
    REL_CLOSE(f, 38000.0, 1e-12);
    REL_CLOSE(b, 14000.0, 1e-12);
    ts_step_loss_bytes(TS_LOSS_FUSED, 1000.0, &f, &b);
    REL_CLOSE(f, 2000.0, 1e-12);
    REL_CLOSE(b, 4000.0, 1e-12);
}
END_TEST

/* FP8 casting traffic of one layer (core/ts_step_kernel.c, ts_step_fp8_cast),
 * by hand: tok 1000, h 100, F 400, tp 1, kv_dim 100, not gated, top_k 1,
 * 120,000 local weights.
 *   inputs  QKV 1000x100, out 1000x100, FC1 1000x100, FC2 1000x400: 700,000
 *   grads   QKV 1000x300, out 1000x100, FC1 1000x400, FC2 1000x100: 900,000
 *   forward 4 B x 700,000 + 4 B x 120,000 (weights) = 3,280,000 B
 *   backward 4 B x 900,000 = 3,600,000 B
 * With the weight cast shared over 4 micro-batches (Megatron's
 * is_first_microbatch): forward 2,800,000 + 120,000 = 2,920,000 B. */
START_TEST(test_fp8_cast_bytes)
{
    double f, b;

    ts_step_fp8_cast(1000, 100, 400, 1, 100, false, 1, 4.0 * 120000, &f, &b);
    REL_CLOSE(f, 3280000.0, 1e-12);
    REL_CLOSE(b, 3600000.0, 1e-12);
    ts_step_fp8_cast(1000, 100, 400, 1, 100, false, 1, 4.0 * 120000 / 4, &f, &b);
    REL_CLOSE(f, 2920000.0, 1e-12);
    REL_CLOSE(b, 3600000.0, 1e-12);
    /* tp 2, gated, GQA kv_dim 25: inputs 1000 (100 + 50) + 1000 (100 + 200)
     * = 450,000; grads 1000 (50 + 50 + 100) + 1000 (400 + 100) = 700,000. */
    ts_step_fp8_cast(1000, 100, 400, 2, 25, true, 1, 0, &f, &b);
    REL_CLOSE(f, 4.0 * 450000.0, 1e-12);
    REL_CLOSE(b, 4.0 * 700000.0, 1e-12);
}
END_TEST

/* The weights' part, per step, by hand for 120,000 weights (TE linear.py
 * @ac80527 979-1011; quantizer.cpp@ad3f651f create_transpose):
 *   16-bit weights, TN-only GPU: read 2, write 1 + 1 transposed = 480,000;
 *   the same where FP8 GEMMs take any layout (B200): 2 + 1 = 360,000;
 *   FP8 parameters, TN-only: the transpose cache, read 1 write 1 = 240,000;
 *   FP8 parameters on B200: 0 (no cast, no transpose);
 *   a frozen FP8 base: 0. */
START_TEST(test_fp8_weight_cast_bytes)
{
    REL_CLOSE(ts_step_fp8_wcast(false, false, true, 120000), 480000.0, 1e-12);
    REL_CLOSE(ts_step_fp8_wcast(false, false, false, 120000), 360000.0, 1e-12);
    REL_CLOSE(ts_step_fp8_wcast(true, false, true, 120000), 240000.0, 1e-12);
    ck_assert(ts_step_fp8_wcast(true, false, false, 120000) == 0.0);
    ck_assert(ts_step_fp8_wcast(false, true, true, 120000) == 0.0);
}
END_TEST

/* FP8 matmuls at the measured FP8 fraction, already power-settled (no
 * sustain derating): H100 1382.2 / 1979, so 6e12 FLOPs take
 * 6e12 / 1382.2e12 s; B200's FP8 MSMF 2795.7 likewise.  BF16 on the
 * same GPU keeps MAMF x sustain; GB200's settled rates are B200's at
 * the clock its larger power limit buys. */
START_TEST(test_fp8_matmul_rate)
{
    ts_run r;
    ts_step a;
    ts_error e;

    ts_run_defaults(&r);
    r.model.params = 1e9;
    r.seq = 1000;
    r.global_batch = 1;
    r.gpus = 1;
    r.dp = 1;
    r.compute_precision = TS_PREC_FP8;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    REL_CLOSE(a.compute, 6e12 / 1382.2e12, 1e-9);
    /* B200: its FP8 MSMF, 2795.7 of 4500, also settled. */
    r.gpu = *ts_gpu_find("b200");
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    REL_CLOSE(a.compute, 6e12 / 2795.7e12, 1e-9);
    /* A GPU with no FP8 measurement: the BF16 fraction at the FP8 peak
     * (GH200: its BF16 MAMF 0.830, no MSMF, no derating). */
    r.gpu = *ts_gpu_find("gh200");
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    REL_CLOSE(a.compute, 6e12 / (1979e12 * 0.830), 1e-9);
    /* Blackwell parts with no MSMF: B200's settled points moved to each
     * part's own power limit (its catalogue board_watts), the clock as
     * the cube root of the power (ts_gpu.c): FP8 2795.7 at ~990 W, BF16
     * 1456.3 at ~994 W, times (W / 990)^(1/3) and (W / 994)^(1/3);
     * GB200 1,200 W gives 2980.8 and 1550.7 TFLOP/s. */
    {
        static const char *const settled[] = { "gb200", "b300", "gb300" };

        for (size_t i = 0; i < sizeof settled / sizeof settled[0]; i++) {
            double w;

            r.gpu = *ts_gpu_find(settled[i]);
            w = r.gpu.board_watts;
            r.compute_precision = TS_PREC_FP8;
            ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
            REL_CLOSE(a.compute, 6e12 / (2795.7e12 * cbrt(w / 990.0)), 1e-5);
            r.compute_precision = TS_PREC_BF16;
            ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
            REL_CLOSE(a.compute, 6e12 / (1456.3e12 * cbrt(w / 994.0)), 1e-5);
        }
        REL_CLOSE(2795.7 * cbrt(1200.0 / 990.0), 2980.8, 1e-4);
        /* measured parts take their own settled rates, not this one */
        ck_assert(ts_gpu_settled(ts_gpu_find("b200"), true) == 0);
        ck_assert(ts_gpu_settled(ts_gpu_find("h100-sxm"), false) == 0);
    }
}
END_TEST

/* Megatron-Core's CPU activation offload: the offloaded layers' bytes
 * (the memory answer's host_bytes_per_gpu, one micro-batch at pp 1) go
 * out during each micro-batch's forward and back during its backward
 * over the host link, spread over the pass; what shows is a pass's copy
 * time beyond the pass.  With a link slow enough that both copies
 * outlast their passes, offload = m (2 t - fwd - bwd), t = bytes / link:
 * halving the link adds exactly 2 m t.  At NVLink-C2C's 450 GB/s
 * (GB200) they hide. */
START_TEST(test_offload_activation_copies)
{
    ts_run r;
    ts_step a, b;
    ts_memory mem;
    double t, m = 4;

    ts_run_defaults(&r);
    r.model = (ts_model){ .layers = 32,
                          .hidden = 4096,
                          .heads = 32,
                          .kv_heads = 8,
                          .ffn = 14336,
                          .vocab = 128256,
                          .gated = true };
    r.gpu = *ts_gpu_find("h100-sxm");
    r.seq = 8192;
    r.micro_batch = 1;
    r.gpus = 8;
    r.tp = 1;
    r.global_batch = 32; /* dp 8: m = 4 */
    r.offload_activation_layers = 16;
    r.gpu.pcie_bw = 1e9;
    ck_assert_int_eq(ts_memory_estimate(&r, &mem, NULL), TS_OK);
    ck_assert(mem.host_bytes_per_gpu > 0);
    t = mem.host_bytes_per_gpu / 1e9;
    ck_assert_int_eq(ts_step_estimate(&r, &a, NULL), TS_OK);
    r.gpu.pcie_bw = 0.5e9;
    ck_assert_int_eq(ts_step_estimate(&r, &b, NULL), TS_OK);
    ck_assert(a.offload > 0);
    REL_CLOSE(b.offload - a.offload, 2 * m * t, 1e-9);
    REL_CLOSE(b.step_time.value - a.step_time.value, 2 * m * t, 1e-9);
    r.gpu = *ts_gpu_find("gb200");
    ck_assert_int_eq(ts_step_estimate(&r, &a, NULL), TS_OK);
    ck_assert(a.offload == 0);
    r.offload_activation_layers = 0;
    ck_assert_int_eq(ts_step_estimate(&r, &b, NULL), TS_OK);
    REL_CLOSE(a.step_time.value, b.step_time.value, 1e-12);
    /* Inference: Megatron-Core offloads under grad mode only. */
    r.gpu = *ts_gpu_find("h100-sxm");
    r.gpu.pcie_bw = 0.5e9;
    r.offload_activation_layers = 16;
    r.optimizer = TS_OPT_NONE;
    ck_assert_int_eq(ts_step_estimate(&r, &a, NULL), TS_OK);
    ck_assert(a.offload == 0);
}
END_TEST

/* Under FP8 the attention core stays in bf16 (TE DotProductAttention
 * without fp8_dpa).  Identity: with the FP8 peak made effectively
 * infinite (GEMM math free), doubling the BF16 peak halves exactly the
 * attention part and nothing else, so the compute drops by half the
 * attention time: one layer, one micro-batch of 8192 tokens, h 4096,
 * causal: fl = 4 x 8192 x 4096 x 4096 = 549,755,813,888 FLOPs forward,
 * 2.5x that backward, at 0.35 of 989 TFLOP/s. */
START_TEST(test_fp8_attention_bf16)
{
    ts_run r;
    ts_step a, b;
    ts_error e;
    double fl = 4.0 * 8192.0 * 4096.0 * 4096.0;
    double attn = 3.5 * fl / (989e12 * 0.35);

    ts_run_defaults(&r);
    r.model.layers = 1;
    r.model.hidden = 4096;
    r.model.heads = 32;
    r.model.vocab = 1024;
    r.seq = 8192;
    r.micro_batch = 1;
    r.global_batch = 1;
    r.gpus = 1;
    r.dp = 1;
    r.attention = TS_ATTN_FLASH;
    r.compute_precision = TS_PREC_FP8;
    r.gpu.fp8_flops = 1e18; /* the range's top: GEMM math ~free */
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.gpu.bf16_flops *= 2.0;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(a.compute - b.compute, attn / 2.0, 1e-9);
}
END_TEST

/* Memory-bound work at the measured streaming bandwidth: the optimizer
 * step of a 1e9-parameter model on one H100 (ts_step_opt_bytes: fp32
 * grads read twice 8 B, master 8 B, Adam m and v 16 B, bf16 weights
 * 2 B = 34 B/param) at 2.90 TB/s, against the 90 % default of a GPU with
 * no measurement (H100 PCIe: 2.0 TB/s x 0.9). */
START_TEST(test_stream_bandwidth)
{
    ts_run r;
    ts_step a;
    ts_error e;

    ts_run_defaults(&r);
    r.model.params = 1e9;
    r.seq = 1000;
    r.global_batch = 1;
    r.gpus = 1;
    r.dp = 1;
    r.grad_precision = TS_PREC_FP32;
    r.master_weights = true;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    REL_CLOSE(a.optimizer, 34e9 / 2.90e12, 1e-9);
    r.gpu = *ts_gpu_find("h100-pcie");
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    REL_CLOSE(a.optimizer, 34e9 / (2.0e12 * 0.9), 1e-9);
    /* A100 80GB: Azure's BabelStream copy, 1.61 of 2.039 TB/s
     * (ND_A100_v4_results.md@8fd0c6e1). */
    r.gpu = *ts_gpu_find("a100-80");
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    REL_CLOSE(a.optimizer, 34e9 / 1.61e12, 1e-9);
}
END_TEST

/* ---- LoRA and QLoRA (issue 26) ------------------------------------ */

/* One frozen 1000 x 200 by 200 x 300 linear at 1 FLOP/s and unbounded
 * bandwidth, so seconds are FLOPs: forward 2 x 1000 x 300 x 200 =
 * 1.2e8; backward the dgrad alone, 1.2e8 (full training adds the wgrad,
 * another 1.2e8).  With its rank-8 adapter: A 1000 x 200 -> 8 is
 * 2 x 1000 x 8 x 200 = 3.2e6 forward, B 1000 x 8 -> 300 is
 * 2 x 1000 x 300 x 8 = 4.8e6; both train, so backward doubles them:
 * forward 1.28e8, backward 1.2e8 + 1.6e7 = 1.36e8. */
START_TEST(test_lora_no_wgrad)
{
    double f, b;

    ts_step_lora_linear_s(1000, 300, 200, 8, false, TS_QUANT_BF16, 1, 1, 1e300, &f, &b);
    REL_CLOSE(f, 1.2e8, 1e-12);
    REL_CLOSE(b, 1.2e8, 1e-12);
    ts_step_lora_linear_s(1000, 300, 200, 8, true, TS_QUANT_BF16, 1, 1, 1e300, &f, &b);
    REL_CLOSE(f, 1.28e8, 1e-12);
    REL_CLOSE(b, 1.36e8, 1e-12);
}
END_TEST

/* Dequantisation traffic, by hand.  NF4 (bitsandbytes MatMul4Bit): each
 * of forward and backward reads 0.5 B + 1/64 B (8-bit absmax per 64) +
 * 4/(64 x 256) B (fp32 absmax per 256 blocks) and writes 2 B per weight:
 * 1e6 weights, 2,515,869.140625 B each way.  LLM.int8 (MatMul8bitLt), 1e6
 * weights, 1000 input and 2000 output elements: forward 6 x 1000 +
 * 8 x 2000 = 22,000 B; backward 4 x 2000 + 10 x 1e6 = 10,008,000 B.  A
 * bf16 base moves nothing extra.  At 1 B/s and unbounded FLOP/s the
 * linear's NF4 seconds exceed its bf16 seconds by exactly those bytes. */
START_TEST(test_dequant_bytes)
{
    double f, b, f0, b0;

    ts_step_dequant_bytes(TS_QUANT_NF4, 1e6, 1000, 2000, &f, &b);
    REL_CLOSE(f, 2515869.140625, 1e-12);
    REL_CLOSE(b, 2515869.140625, 1e-12);
    ts_step_dequant_bytes(TS_QUANT_INT8, 1e6, 1000, 2000, &f, &b);
    REL_CLOSE(f, 22000.0, 1e-12);
    REL_CLOSE(b, 10008000.0, 1e-12);
    ts_step_dequant_bytes(TS_QUANT_BF16, 1e6, 1000, 2000, &f, &b);
    ck_assert(f == 0 && b == 0);
    /* FP8 weights under bf16 matmuls: read 1 B, write 2 B, each way. */
    ts_step_dequant_bytes(TS_QUANT_FP8, 1e6, 1000, 2000, &f, &b);
    REL_CLOSE(f, 3e6, 1e-12);
    REL_CLOSE(b, 3e6, 1e-12);
    /* GPTQ through auto-gptq's torch path: shift (0.5 + 4), int8 cast
     * (4 + 1), mask (1 + 1), zeros (1 + 1), scales (1 + 2) = 16.5 B per
     * weight forward; the kept fp16 weight serves backward. */
    ts_step_dequant_bytes(TS_QUANT_GPTQ, 1e6, 1000, 2000, &f, &b);
    REL_CLOSE(f, 16.5e6, 1e-12);
    ck_assert(b == 0);
    /* m 1, n 1000, k 1000: 1e6 weights. */
    ts_step_lora_linear_s(1, 1000, 1000, 8, false, TS_QUANT_BF16, 1e300, 1, 1, &f0, &b0);
    ts_step_lora_linear_s(1, 1000, 1000, 8, false, TS_QUANT_NF4, 1e300, 1, 1, &f, &b);
    REL_CLOSE(f - f0, 2515869.140625, 1e-9);
    REL_CLOSE(b - b0, 2515869.140625, 1e-9);
}
END_TEST

static void lora_run(ts_run *r)
{
    ts_run_defaults(r);
    r->model.layers = 4;
    r->model.hidden = 1024;
    r->model.heads = 16;
    r->model.kv_heads = 16;
    r->model.ffn = 4096;
    r->model.vocab = 32000;
    r->model.gated = false;
    r->seq = 4096; /* 16,384 tokens a micro-batch: well above the launch floor */
    r->micro_batch = 4;
    r->global_batch = 4;
    r->gpus = 1;
    r->dp = 1;
    r->zero = 0;
    r->lora_rank = 8;
    r->lora_targets = TS_LORA_ALL_LINEAR;
}

/* lora_run's shape trained in full with a gated (SwiGLU) MLP. */
static void gated_run(ts_run *r)
{
    lora_run(r);
    r->lora_rank = 0;
    r->model.gated = true;
}

/* A GPTQ base (auto-gptq's torch dequantisation) costs its LoRA twin
 * 16.5 B per layer-linear weight each forward and nothing backward: on
 * lora_run's 12,582,912 layer-linear weights, 4 layers, one micro-batch
 * at 2.90e12 B/s; full recompute runs the forward, and so the
 * dequantisation, twice.  Framework hf (auto-gptq lives in transformers
 * models); under megatron a 400 naming frozen_precision. */
START_TEST(test_gptq_dequant_step)
{
    ts_run r;
    ts_step lo, q;
    ts_error e;
    double pass = 12582912.0 * 16.5;

    lora_run(&r);
    r.frozen_precision = TS_QUANT_GPTQ;
    ck_assert_int_eq(ts_step_estimate(&r, &q, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "frozen_precision");
    r.framework = TS_FW_HF;
    r.frozen_precision = TS_QUANT_BF16;
    ck_assert_int_eq(ts_step_estimate(&r, &lo, &e), TS_OK);
    r.frozen_precision = TS_QUANT_GPTQ;
    ck_assert_int_eq(ts_step_estimate(&r, &q, &e), TS_OK);
    REL_CLOSE(q.step_time.value - lo.step_time.value, 4.0 * pass / 2.90e12, 1e-6);
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_step_estimate(&r, &q, &e), TS_OK);
    r.frozen_precision = TS_QUANT_BF16;
    ck_assert_int_eq(ts_step_estimate(&r, &lo, &e), TS_OK);
    REL_CLOSE(q.step_time.value - lo.step_time.value, 4.0 * 2.0 * pass / 2.90e12, 1e-6);
}
END_TEST

/* A QLoRA step costs its LoRA twin plus the dequantisation of every
 * layer linear, forward and backward, and the forward's again when full
 * recompute redoes it; the output head stays in 16 bits.  Layer linears:
 * QKV 1024 x 3072, out 1024 x 1024, fc1 1024 x 4096, fc2 4096 x 1024 =
 * 12,582,912 weights, 2.515869... B each pass; 4 layers; one
 * micro-batch; H100 SXM streaming at 2.90e12 B/s (the catalogue's
 * BabelStream figure, test_stream_bandwidth). */
START_TEST(test_qlora_dequant_step)
{
    ts_run r;
    ts_step lo, q;
    ts_error e;
    double pass = 12582912.0 * (0.5 + 1.0 / 64.0 + 4.0 / 16384.0 + 2.0);

    lora_run(&r);
    ck_assert_int_eq(ts_step_estimate(&r, &lo, &e), TS_OK);
    r.frozen_precision = TS_QUANT_NF4;
    ck_assert_int_eq(ts_step_estimate(&r, &q, &e), TS_OK);
    REL_CLOSE(q.step_time.value - lo.step_time.value, 4.0 * 2.0 * pass / 2.90e12, 1e-6);
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_step_estimate(&r, &q, &e), TS_OK);
    r.frozen_precision = TS_QUANT_BF16;
    ck_assert_int_eq(ts_step_estimate(&r, &lo, &e), TS_OK);
    REL_CLOSE(q.step_time.value - lo.step_time.value, 4.0 * 3.0 * pass / 2.90e12, 1e-6);
}
END_TEST

/* A train metric, by hand (core/ts_step_kernel.c): cast 2 + 4, then
 * log_softmax's three reads and one write of fp32, 16: 22 B per logit.
 * Two metrics on the lora_run model without LoRA (V 32,000, 16,384
 * tokens, one micro-batch, H100 SXM streaming 2.90e12 B/s) add
 * 2 x 22 x 16,384 x 32,000 B to the step. */
START_TEST(test_logit_metrics_step)
{
    ts_run r;
    ts_step a, b;
    ts_error e;

    REL_CLOSE(ts_step_metric_bytes(1000.0), 22000.0, 1e-12);
    lora_run(&r);
    r.lora_rank = 0;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.logit_metrics = 2;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.step_time.value - a.step_time.value, 2.0 * 22.0 * 16384.0 * 32000.0 / 2.90e12,
              1e-6);
}
END_TEST

/* activation_func_fp8_input_store (Megatron-Core fused_bias_swiglu.py):
 * the SwiGLU input, 2F = 8,192 wide, is cast to FP8 after forward (read 2,
 * write 1) and back before the SwiGLU backward (read 1, write 2): 6 B
 * per element per micro-batch, 16,384 tokens, 4 layers, one micro-batch,
 * H100 SXM streaming at 2.90e12 B/s; plus one launch each way, which the
 * 16,384-token layer hides (its kernels are far above the floor). */
START_TEST(test_act_fp8_store_step)
{
    ts_run r;
    ts_step a, b;
    ts_error e;

    gated_run(&r);
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.act_fp8_input_store = true;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.step_time.value - a.step_time.value, 6.0 * 16384.0 * 8192.0 * 4.0 / 2.90e12, 1e-6);
}
END_TEST

/* attention_unpad (llm-foundry's flash_attn_fn around flash-attn's
 * bert_padding, flash_attn/bert_padding.py@v2.4.2): per layer and token,
 * forward q, k, v gathered (read 2 + write 2 each, 3 x 1024 wide) and the
 * 1024-wide output zero-filled and index-put into it (2 + 2 + 2): 18 x
 * 1024 B; backward the output grad gathered (2 + 2) and q, k, v grads
 * zeroed and scattered (2 + 2 + 2 each): 22 x 1024 B.  gated_run: 4
 * layers, 16,384 tokens, 2.90e12 B/s.  Full recompute reruns the
 * forward's share; attention other than flash is a 400. */
START_TEST(test_attention_unpad_step)
{
    ts_run r;
    ts_step a, b;
    ts_error e;
    double per = 4.0 * 16384.0 * 1024.0 / 2.90e12;

    gated_run(&r);
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.attention_unpad = true;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.step_time.value - a.step_time.value, (18.0 + 22.0) * per, 1e-6);
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    r.attention_unpad = false;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    REL_CLOSE(b.step_time.value - a.step_time.value, (18.0 + 22.0 + 18.0) * per, 1e-6);
    r.attention_unpad = true;
    r.attention = TS_ATTN_TRITON;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "attention_unpad");
}
END_TEST

/* An FP8 base under FP8 matmuls (NeMo/Megatron fp8_params, Transformer
 * Engine's fp8_model_init) is read as it is: no dequantisation, and the
 * per-GEMM weight cast of FP8 training is gone.  Against a bf16 base
 * under the same FP8 matmuls the step saves exactly that cast, 4 B per
 * layer weight per micro-batch (ts_step_fp8_cast: read 2, write 1 + 1
 * transposed): 12,582,912 weights x 4 layers x 4 B at 2.90e12 B/s.
 * Under bf16 matmuls an FP8 base is dequantised like NF4, 1 + 2 B per
 * weight each pass. */
START_TEST(test_fp8_frozen_step)
{
    ts_run r;
    ts_step b16, f8;
    ts_error e;
    double w = 12582912.0 * 4.0;

    lora_run(&r);
    r.precision = TS_PREC_BF16;
    r.compute_precision = TS_PREC_FP8;
    ck_assert_int_eq(ts_step_estimate(&r, &b16, &e), TS_OK);
    r.frozen_precision = TS_QUANT_FP8;
    ck_assert_int_eq(ts_step_estimate(&r, &f8, &e), TS_OK);
    REL_CLOSE(b16.step_time.value - f8.step_time.value, w * 4.0 / 2.90e12, 1e-6);
    r.compute_precision = TS_PREC_BF16;
    ck_assert_int_eq(ts_step_estimate(&r, &f8, &e), TS_OK);
    r.frozen_precision = TS_QUANT_BF16;
    ck_assert_int_eq(ts_step_estimate(&r, &b16, &e), TS_OK);
    REL_CLOSE(f8.step_time.value - b16.step_time.value, 2.0 * w * 3.0 / 2.90e12, 1e-6);
}
END_TEST

/* Under LoRA only the adapters are stepped: the optimizer's time scales
 * from the full model's by adapters / parameters.  Adapters, rank 8 on
 * every linear of a two-matrix MLP model (no gate): q, k, v, o 8 x
 * (1024 + 1024) each, fc1 and fc2 8 x (1024 + 4096) each = 147,456 a
 * layer, 589,824 for 4 layers. */
START_TEST(test_lora_optimizer_adapters)
{
    ts_run r;
    ts_step full, lo;
    ts_params p;
    ts_error e;

    lora_run(&r);
    ck_assert_int_eq(ts_step_estimate(&r, &lo, &e), TS_OK);
    r.lora_rank = 0;
    ck_assert_int_eq(ts_step_estimate(&r, &full, &e), TS_OK);
    ck_assert_int_eq(ts_model_params(&r.model, &p, &e), TS_OK);
    REL_CLOSE(lo.optimizer / full.optimizer, 589824.0 / p.total, 1e-12);
}
END_TEST

/* lora_modules_to_save on lora_run (vocab 32000 x hidden 1024 =
 * 32,768,000 per copy): the copies are stepped with the adapters, so
 * the optimizer's time grows by (589,824 + 2 x 32,768,000) / 589,824;
 * embed_tokens alone adds no matmul, lm_head's copy adds its weight
 * gradient, tok x V x h = 16,384 x 32000 x 1024 at 2 FLOP each: at
 * least those FLOPs at the GPU's peak, at most them at half of it plus
 * the GEMM's bf16 operands and output at half the HBM bandwidth. */
START_TEST(test_lora_save_step)
{
    ts_run r;
    ts_step lo, emb, head;
    ts_error e;
    double flops = 2.0 * 16384.0 * 32000.0 * 1024.0;
    double bytes = 2.0 * (1024.0 * 16384.0 + 16384.0 * 32000.0) + 2.0 * 1024.0 * 32000.0;

    lora_run(&r);
    r.framework = TS_FW_HF; /* PEFT's option: not Megatron's */
    ck_assert_int_eq(ts_step_estimate(&r, &lo, &e), TS_OK);
    r.lora_save = TS_LORA_SAVE_EMBED;
    ck_assert_int_eq(ts_step_estimate(&r, &emb, &e), TS_OK);
    REL_CLOSE(emb.optimizer / lo.optimizer, (589824.0 + 32768000.0) / 589824.0, 1e-12);
    REL_CLOSE(emb.compute, lo.compute, 1e-12);
    r.lora_save = TS_LORA_SAVE_ALL;
    ck_assert_int_eq(ts_step_estimate(&r, &head, &e), TS_OK);
    REL_CLOSE(head.optimizer / lo.optimizer, (589824.0 + 2.0 * 32768000.0) / 589824.0, 1e-12);
    ck_assert(head.compute - lo.compute >= flops / r.gpu.bf16_flops);
    ck_assert(head.compute - lo.compute <=
              flops / (0.5 * r.gpu.bf16_flops) + bytes / (0.5 * r.gpu.hbm_bw));
}
END_TEST

/* layer_impl eager (the default under hf and fsdp): transformers' and
 * torchtitan's eager modules move more bytes than fused kernels
 * (core/ts_step_layer.c, ts_step_eager), by hand for h 1024, 16 heads (no
 * grouped K/V), gated F 4096, per token per layer forward: two fp32
 * RMSNorms +32 B x 1024 each = 65,536; rotary on q and k +16 B x 2048 =
 * 32,768; silu and product unfused +4 B x 4096 = 16,384; the contiguous
 * attention output 4 B x 1024 = 4,096: 118,784 B.  Backward moves twice
 * that: 3 x 118,784 x 16,384 tokens x 4 layers at H100's 2.90e12 B/s,
 * the only difference from the same run with fused layers (one GPU,
 * nothing sharded, full fine-tuning).  hf and fsdp run the same eager
 * layer.  A LayerNorm model with learned positions has neither the
 * norms' nor the rotary's share: 16,384 + 4,096 = 20,480 B. */
/* Step time with layer_impl `impl` less the same run's with fused layers
 * (r keeps `impl`). */
static double fused_gap(ts_run *r, ts_layer_impl impl)
{
    ts_step fu, st;
    ts_error e;

    r->layer_impl = TS_LAYER_FUSED;
    ck_assert_msg(ts_step_estimate(r, &fu, &e) == TS_OK, "%s", e.text);
    r->layer_impl = impl;
    ck_assert_msg(ts_step_estimate(r, &st, &e) == TS_OK, "%s", e.text);
    return st.step_time.value - fu.step_time.value;
}

START_TEST(test_eager_layer_bytes)
{
    ts_run r;
    ts_step fs, hf;
    ts_error e;

    gated_run(&r);
    r.framework = TS_FW_FSDP;
    REL_CLOSE(fused_gap(&r, TS_LAYER_DEFAULT), 3.0 * 118784.0 * 16384.0 * 4.0 / 2.90e12, 1e-6);
    ck_assert_int_eq(ts_step_estimate(&r, &fs, &e), TS_OK);
    r.framework = TS_FW_HF;
    ck_assert_int_eq(ts_step_estimate(&r, &hf, &e), TS_OK);
    REL_CLOSE(hf.step_time.value, fs.step_time.value, 1e-12);
    /* megatron is fused by default; eager says otherwise. */
    r.framework = TS_FW_MEGATRON;
    REL_CLOSE(fused_gap(&r, TS_LAYER_DEFAULT), 0.0, 0.0);
    REL_CLOSE(fused_gap(&r, TS_LAYER_EAGER), 3.0 * 118784.0 * 16384.0 * 4.0 / 2.90e12, 1e-6);
    /* TP 2 with sequence parallelism: the norms run on half the tokens,
     * the rest at half the heads and F: 32,768 + 16,384 (q and kv 512
     * each) + 8,192 + 2,048 = 59,392 B a token a layer. */
    r.gpus = 2;
    r.tp = 2;
    r.sequence_parallel = true;
    REL_CLOSE(fused_gap(&r, TS_LAYER_EAGER), 3.0 * 59392.0 * 16384.0 * 4.0 / 2.90e12, 1e-6);
    r.gpus = 1;
    r.tp = 1;
    r.sequence_parallel = false;
    r.norm = TS_NORM_LAYERNORM;
    r.model.pos_embeddings = 4096;
    REL_CLOSE(fused_gap(&r, TS_LAYER_EAGER), 3.0 * 20480.0 * 16384.0 * 4.0 / 2.90e12, 1e-6);
}
END_TEST

/* qk_norm on gated_run (16 heads of 64, MHA: q and k 1024 wide each):
 * one fused RMSNorm over each, read and write bf16, 4 B x 2,048 = 8,192 B
 * a token a layer forward, twice that backward; the eager module adds
 * 32 B x 2,048 = 65,536 B more (16,384 tokens, 4 layers, 2.90e12 B/s).
 * The norms' own 2 x 64 weights a layer add nanoseconds of optimizer and
 * weight traffic: 1e-4. */
START_TEST(test_qk_norm_step)
{
    ts_run r;
    ts_step a, b;
    ts_error e;

    gated_run(&r);
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.model.qk_norm = true;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.step_time.value - a.step_time.value, 3.0 * 8192.0 * 16384.0 * 4.0 / 2.90e12, 1e-4);
    r.layer_impl = TS_LAYER_EAGER;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.model.qk_norm = false;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(a.step_time.value - b.step_time.value,
              3.0 * (8192.0 + 65536.0) * 16384.0 * 4.0 / 2.90e12, 1e-4);
}
END_TEST

/* liger_kernels: Liger's fused RMSNorm, RoPE and SwiGLU move what the
 * fused kernels already count, so of test_eager_layer_bytes' 118,784 B only
 * the contiguous attention output, 4 B x 1024 = 4,096 B a token a layer,
 * stays above fused layers; 21 fewer kernels a pass are far under these 16,384
 * tokens' time.  Not hf, or tp > 1, is a 400 naming liger_kernels
 * (NeMo AutoModel turns Liger off under TP or CP). */
START_TEST(test_liger_kernels_step)
{
    ts_run r;
    ts_step fs, lg;
    ts_error e;

    gated_run(&r);
    r.framework = TS_FW_FSDP;
    r.layer_impl = TS_LAYER_FUSED;
    ck_assert_int_eq(ts_step_estimate(&r, &fs, &e), TS_OK);
    r.layer_impl = TS_LAYER_DEFAULT;
    r.framework = TS_FW_HF;
    r.liger_kernels = true;
    ck_assert_int_eq(ts_step_estimate(&r, &lg, &e), TS_OK);
    REL_CLOSE(lg.step_time.value - fs.step_time.value, 3.0 * 4096.0 * 16384.0 * 4.0 / 2.90e12,
              1e-6);
    r.framework = TS_FW_FSDP;
    ck_assert_int_eq(ts_step_estimate(&r, &lg, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "liger_kernels");
    r.framework = TS_FW_HF;
    r.gpus = 2;
    r.tp = 2;
    ck_assert_int_eq(ts_step_estimate(&r, &lg, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "liger_kernels");
}
END_TEST

/* lora_dropout (issue 26): one dropout kernel each way over every
 * adapted matrix's input, by hand on lora_run (megatron, no gate): q, k,
 * v, o, fc1 read 1024 elements a token, fc2 4096: 9216; bf16 2 + 2 + 1
 * B forward and 2 + 1 + 2 B backward = 10 B each, 92,160 B a token a
 * layer, 16,384 tokens, 4 layers at H100's 2.90e12 B/s.  Full recompute
 * redoes the forward's: 15 B.  hf moves fp32: 9 + 9 = 18 B. */
START_TEST(test_lora_dropout_step)
{
    ts_run r;
    ts_step a, b;
    ts_error e;
    double el = 9216.0 * 16384.0 * 4.0;

    lora_run(&r);
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.lora_dropout = 0.1;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.step_time.value - a.step_time.value, 10.0 * el / 2.90e12, 1e-6);
    r.recompute = TS_RECOMPUTE_FULL;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    r.lora_dropout = 0;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    REL_CLOSE(b.step_time.value - a.step_time.value, 15.0 * el / 2.90e12, 1e-6);
    r.recompute = TS_RECOMPUTE_NONE;
    r.framework = TS_FW_HF;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.lora_dropout = 0.05;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.step_time.value - a.step_time.value, 18.0 * el / 2.90e12, 1e-6);
}
END_TEST

/* lora_impl automodel (NeMo AutoModel's LinearLoRA: res + dropout(
 * lora_B(lora_A(x) * scale))): the scale runs on the rank-wide product,
 * so each adapter saves PEFT's output-wide scale forward (read 2n, write
 * 2n) and its gradient's backward (4n): 8 B per output element.  By hand
 * on lora_run with a gate (hf, adapters in the model's dtype for both):
 * outputs q, k, v, o 1024 each, gate and up 4096, down 1024 = 13,312 a
 * token a layer; inputs q, k, v, o, gate, up 1024 each, down 4096 =
 * 10,240.  16,384 tokens, 4 layers at H100's 2.90e12 B/s.  A dropout of
 * 0.1 drops the output instead of the input, 5 B each way per element
 * (bf16): PEFT 2 x 5 x 10,240, AutoModel 2 x 5 x 13,312.  Without
 * adapters, or under megatron, the option is a 400. */
START_TEST(test_lora_impl_step)
{
    ts_run r;
    ts_step pe, am;
    ts_error e;
    double per = 16384.0 * 4.0 / 2.90e12;

    lora_run(&r);
    r.model.gated = true;
    r.lora_impl = TS_LORA_IMPL_AUTOMODEL;
    ck_assert_int_eq(ts_step_estimate(&r, &am, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "lora_impl");
    r.lora_impl = TS_LORA_IMPL_PEFT;
    r.framework = TS_FW_HF;
    r.adapter_precision = TS_ADAPTER_MODEL;
    ck_assert_int_eq(ts_step_estimate(&r, &pe, &e), TS_OK);
    r.lora_impl = TS_LORA_IMPL_AUTOMODEL;
    ck_assert_int_eq(ts_step_estimate(&r, &am, &e), TS_OK);
    REL_CLOSE(pe.step_time.value - am.step_time.value, 8.0 * 13312.0 * per, 1e-6);
    /* AutoModel's default adapter dtype is the model's: the same run. */
    r.adapter_precision = TS_ADAPTER_DEFAULT;
    ck_assert_int_eq(ts_step_estimate(&r, &pe, &e), TS_OK);
    ck_assert(pe.step_time.value == am.step_time.value);
    r.adapter_precision = TS_ADAPTER_MODEL;
    r.lora_dropout = 0.1;
    ck_assert_int_eq(ts_step_estimate(&r, &am, &e), TS_OK);
    r.lora_impl = TS_LORA_IMPL_PEFT;
    ck_assert_int_eq(ts_step_estimate(&r, &pe, &e), TS_OK);
    REL_CLOSE(pe.step_time.value - am.step_time.value,
              (8.0 * 13312.0 + 2.0 * 5.0 * (10240.0 - 13312.0)) * per, 1e-6);
    r.lora_dropout = 0;
    r.lora_rank = 0;
    r.adapter_precision = TS_ADAPTER_DEFAULT;
    r.lora_impl = TS_LORA_IMPL_AUTOMODEL;
    ck_assert_int_eq(ts_step_estimate(&r, &am, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "lora_impl");
}
END_TEST

/* adapter_precision (issue 26): fp32 adapters beside a bf16 model cast
 * each adapted matrix's input to fp32 (PEFT _cast_input_dtype: read 2k,
 * write 4k) and the gradient back in backward (6k); in the model's dtype
 * there is no cast.  By hand on lora_run: the adapters' inputs are 9216
 * elements a token (q, k, v, o, fc1 1024, fc2 4096), 12 B each, 16,384
 * tokens, 4 layers at H100's 2.90e12 B/s.  hf's default is fp32, the
 * other frameworks' the model's; an fp32 model has nothing to cast. */
START_TEST(test_adapter_precision_step)
{
    ts_run r;
    ts_step a, b;
    ts_error e;
    double cast = 12.0 * 9216.0 * 16384.0 * 4.0 / 2.90e12;

    lora_run(&r);
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.adapter_precision = TS_ADAPTER_FP32;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.step_time.value - a.step_time.value, cast, 1e-6);
    r.adapter_precision = TS_ADAPTER_MODEL;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    ck_assert(b.step_time.value == a.step_time.value);

    r.framework = TS_FW_HF;
    r.adapter_precision = TS_ADAPTER_MODEL;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.adapter_precision = TS_ADAPTER_DEFAULT;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    REL_CLOSE(b.step_time.value - a.step_time.value, cast, 1e-6);

    r.precision = r.grad_precision = r.compute_precision = TS_PREC_FP32;
    r.master_weights = false;
    ck_assert_int_eq(ts_step_estimate(&r, &a, &e), TS_OK);
    r.adapter_precision = TS_ADAPTER_MODEL;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_OK);
    ck_assert(b.step_time.value == a.step_time.value);

    /* Without adapters it would change nothing: refused. */
    r.lora_rank = 0;
    ck_assert_int_eq(ts_step_estimate(&r, &b, &e), TS_EINCOMPAT);
    ck_assert_str_eq(e.field, "adapter_precision");
}
END_TEST

/* Issue 25: a warning whenever the pipeline bubble, the exposed
 * communication or the matmuls' shortfall from the GPU's rate (an
 * under-filled GPU) costs more than a quarter of the step, and only then. */
static void assert_warnings_follow_rule(const ts_step *s)
{
    double q = 0.25 * s->step_time.value;

    ck_assert(s->underfill >= 0 && s->underfill <= s->compute);
    ck_assert_int_eq((s->warnings & TS_STEP_WARN_BUBBLE) != 0, s->pp_bubble > q);
    ck_assert_int_eq((s->warnings & TS_STEP_WARN_COMM) != 0, s->exposed_comm > q);
    ck_assert_int_eq((s->warnings & TS_STEP_WARN_UNDERFILL) != 0, s->underfill > q);
}

START_TEST(test_step_warnings)
{
    ts_run r;
    ts_step s;
    ts_error e;

    /* Llama 3 8B on one node, dp 8, 8192 tokens per GPU per micro-batch:
     * nothing to warn about. */
    llama_run(&r, "llama3-8b", 8);
    r.global_batch = 64;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    assert_warnings_follow_rule(&s);
    ck_assert_uint_eq(s.warnings, 0);

    /* 128 tokens per GPU per micro-batch: 128-row GEMMs stream the whole
     * weight matrix for little math (the roofline's memory term
     * dominates), so most of the matmul time is shortfall. */
    llama_run(&r, "llama3-8b", 8);
    r.seq = 128;
    r.global_batch = 64;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    assert_warnings_follow_rule(&s);
    ck_assert(s.warnings & TS_STEP_WARN_UNDERFILL);

    /* tp 8 across nodes of 4 GPUs: every layer's TP collectives cross
     * the network. */
    llama_run(&r, "llama3-8b", 8);
    r.tp = 8;
    r.gpus_per_node = 4;
    r.global_batch = 64;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    assert_warnings_follow_rule(&s);
    ck_assert(s.warnings & TS_STEP_WARN_COMM);

    /* pp 8 with 8 micro-batches per step: bubble 7/8 of the compute. */
    llama_run(&r, "llama3-8b", 8);
    r.pp = 8;
    r.global_batch = 8;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    assert_warnings_follow_rule(&s);
    ck_assert(s.warnings & TS_STEP_WARN_BUBBLE);

    /* No shape: matmuls at the catalogue rate by definition. */
    ts_run_defaults(&r);
    r.model.params = 1e9;
    r.gpus = 1;
    r.dp = 0;
    r.global_batch = 1;
    ck_assert_int_eq(ts_step_estimate(&r, &s, &e), TS_OK);
    ck_assert(s.underfill == 0);
    assert_warnings_follow_rule(&s);
}
END_TEST

START_TEST(test_search_70b_1024)
{
    ts_run r;
    ts_search_cfg cfg;
    ts_search_out *o = search_out();
    ts_error e;
    size_t i;

    /* The case: Llama 3 70B on 1024 H100, 1024 x 8192 per step. */
    llama_run(&r, "llama3-70b", 1024);
    r.global_batch = 1024;
    ts_search_defaults(&cfg);
    ck_assert_int_eq(ts_search_run(&r, &cfg, o, &e), TS_OK);
    ck_assert_uint_eq(o->n, 20);
    ck_assert(o->fitting <= o->tried && o->tried <= o->enumerated);
    for (i = 0; i < o->n; i++) {
        const ts_search_result *x = &o->results[i];

        ck_assert(x->fits && x->headroom >= 0 && x->memory_total <= x->hbm);
        ck_assert_int_eq(x->gpus, 1024);
        ck_assert_int_eq(x->tp * x->pp * x->cp * x->dp, 1024);
        ck_assert_int_le(x->tp, 8); /* inside a node by default */
        ck_assert_int_eq(64 % x->tp, 0);
        ck_assert_int_eq(1024 % (x->dp * x->micro_batch), 0);
        if (i > 0)
            ck_assert(o->results[i - 1].step_time <= x->step_time);
        ck_assert(x->why[0] != '\0');
    }
    /* The best one resolves and fits when sent back as a run. */
    {
        ts_run b = r;
        ts_memory m;

        b.tp = o->results[0].tp;
        b.pp = o->results[0].pp;
        b.cp = o->results[0].cp;
        b.dp = o->results[0].dp;
        b.gpus = 0;
        b.micro_batch = o->results[0].micro_batch;
        b.vpp = o->results[0].vpp;
        b.pp_schedule = o->results[0].pp_schedule;
        b.zero = o->results[0].zero;
        b.framework = o->results[0].framework;
        b.recompute = o->results[0].recompute;
        b.sequence_parallel = o->results[0].sequence_parallel;
        b.first_stage_layers = o->results[0].first_stage_layers;
        ck_assert_int_eq(ts_memory_estimate(&b, &m, &e), TS_OK);
        ck_assert(m.fits);
    }
    free(o);
}
END_TEST

START_TEST(test_search_constraints)
{
    ts_run r;
    ts_search_cfg cfg;
    ts_search_out *o = search_out();
    ts_error e;
    size_t i;

    llama_run(&r, "llama3-8b", 16);
    r.global_batch = 64;
    ts_search_defaults(&cfg);
    cfg.tp = 2;
    cfg.recompute_mask = 1u << TS_RECOMPUTE_FULL;
    cfg.framework = TS_FW_MEGATRON;
    cfg.limit = 5;
    ck_assert_int_eq(ts_search_run(&r, &cfg, o, &e), TS_OK);
    ck_assert_uint_le(o->n, 5);
    for (i = 0; i < o->n; i++) {
        ck_assert_int_eq(o->results[i].tp, 2);
        ck_assert_int_eq(o->results[i].recompute, TS_RECOMPUTE_FULL);
        ck_assert_int_eq(o->results[i].framework, TS_FW_MEGATRON);
    }
    /* Cost objective with max_gpus: GPU-seconds ascending. */
    ts_search_defaults(&cfg);
    cfg.objective = TS_SEARCH_COST;
    cfg.max_gpus = 16;
    ck_assert_int_eq(ts_search_run(&r, &cfg, o, &e), TS_OK);
    for (i = 1; i < o->n; i++)
        ck_assert(o->results[i - 1].gpu_seconds <= o->results[i].gpu_seconds);
    free(o);
}
END_TEST

START_TEST(test_search_errors)
{
    ts_run r;
    ts_search_cfg cfg;
    ts_search_out *o = search_out();
    ts_error e;

    ts_search_defaults(&cfg);
    /* No shape: nothing to lay out. */
    ts_run_defaults(&r);
    r.model.params = 7e9;
    ck_assert_int_eq(ts_search_run(&r, &cfg, o, &e), TS_EINVAL);
    ck_assert_str_eq(e.field, "layers");
    /* 405B on 8 GPUs of 80 GB: nothing fits (16 B/param alone is 6.5 TB). */
    llama_run(&r, "llama3-405b", 8);
    r.global_batch = 8;
    ck_assert_int_eq(ts_search_run(&r, &cfg, o, &e), TS_ENOFIT);
    ck_assert_uint_eq(o->n, 0);
    ck_assert(o->pruned > 0);
    /* limit out of range. */
    llama_run(&r, "llama3-8b", 8);
    cfg.limit = 0;
    ck_assert_int_eq(ts_search_run(&r, &cfg, o, &e), TS_EINVAL);
    ck_assert_str_eq(e.field, "limit");
    free(o);
}
END_TEST

static Suite *step_suite(void)
{
    Suite *s = suite_create("step");
    TCase *tc = tcase_create("formulas");

    tcase_add_test(tc, test_allreduce_ring);
    tcase_add_test(tc, test_recompute_early_stop);
    tcase_add_test(tc, test_recompute_selective_op);
    tcase_add_test(tc, test_allgather_alltoall);
    tcase_add_test(tc, test_gemm_roofline);
    tcase_add_test(tc, test_gemm_small_shapes_measured);
    tcase_add_test(tc, test_bubble_fraction);
    tcase_add_test(tc, test_catalogue_network);
    tcase_add_test(tc, test_no_shape_matmul_bound);
    tcase_add_test(tc, test_bubble_independent_of_m);
    tcase_add_test(tc, test_uneven_stages);
    tcase_add_test(tc, test_recompute_adds_forward);
    tcase_add_test(tc, test_recompute_layers_block);
    tcase_add_test(tc, test_tp_allreduce_per_layer);
    tcase_add_test(tc, test_nvlink_mesh);
    tcase_add_test(tc, test_tp_comm_overlap);
    tcase_add_test(tc, test_compute_uses_prediction);
    tcase_add_test(tc, test_bad_network_inputs);
    tcase_add_test(tc, test_step_warnings);
    suite_add_tcase(s, tc);
    tc = tcase_create("search");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_sustained_matmul);
    tcase_add_test(tc, test_megatron_dp_overlap);
    tcase_add_test(tc, test_tp_across_nodes_nic_striping);
    tcase_add_test(tc, test_pp_p2p_scatter_gather);
    tcase_add_test(tc, test_pp_p2p_interleaved);
    tcase_add_test(tc, test_pp_p2p_node_edge);
    tcase_add_test(tc, test_launch_floor);
    tcase_add_test(tc, test_host_floor_megatron_eager);
    tcase_add_test(tc, test_host_idle_hides_tp);
    tcase_add_test(tc, test_fsdp_per_layer_latency);
    tcase_add_test(tc, test_cuda_compat);
    tcase_add_test(tc, test_triton_attention);
    tcase_add_test(tc, test_backward_extra_kernels);
    tcase_add_test(tc, test_fsdp1_flat_param_grads);
    tcase_add_test(tc, test_fp8_cast_bytes);
    tcase_add_test(tc, test_fp8_weight_cast_bytes);
    tcase_add_test(tc, test_loss_bytes);
    tcase_add_test(tc, test_gemm_published_sweep);
    tcase_add_test(tc, test_fp8_matmul_rate);
    tcase_add_test(tc, test_fp8_attention_bf16);
    tcase_add_test(tc, test_stream_bandwidth);
    tcase_add_test(tc, test_lora_no_wgrad);
    tcase_add_test(tc, test_dequant_bytes);
    tcase_add_test(tc, test_qlora_dequant_step);
    tcase_add_test(tc, test_fp8_frozen_step);
    tcase_add_test(tc, test_logit_metrics_step);
    tcase_add_test(tc, test_act_fp8_store_step);
    tcase_add_test(tc, test_attention_unpad_step);
    tcase_add_test(tc, test_liger_kernels_step);
    tcase_add_test(tc, test_lora_impl_step);
    tcase_add_test(tc, test_gptq_dequant_step);
    tcase_add_test(tc, test_lora_optimizer_adapters);
    tcase_add_test(tc, test_lora_save_step);
    tcase_add_test(tc, test_eager_layer_bytes);
    tcase_add_test(tc, test_qk_norm_step);
    tcase_add_test(tc, test_lora_dropout_step);
    tcase_add_test(tc, test_adapter_precision_step);
    tcase_add_test(tc, test_search_70b_1024);
    tcase_add_test(tc, test_search_constraints);
    tcase_add_test(tc, test_search_errors);
    tcase_add_test(tc, test_layer_widths_follow_the_shape);
    tcase_add_test(tc, test_sliding_window);
    tcase_add_test(tc, test_offload_activation_copies);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(step_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
