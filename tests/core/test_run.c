/*
 * test_run.c - errors, enum names, run defaults, presets applied to a run,
 * and ts_run_resolve: derived fields and one case per validation rule
 * (status code AND public field name, api/CONTRACT.md).
 *
 * Expected values are the defaults documented in core/trainsize.h, the
 * H100 SXM figures in /work/shared/oracles.md, or small integers worked
 * by hand next to each check; all comparisons are exact (integers, or
 * doubles that are exact products of small integers).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"

/* A small valid shape: L 4, h 256, a 8, a_kv 4, F 1024, V 1000.  Hand
 * count: per layer 2h^2 + 2h(4*32) = 131072 + 65536 = 196608, MLP
 * 2hF = 524288, norm 512 -> 721408; x4 = 2885632; + h 256 + 2Vh 512000
 * = 3397888. */
#define SMALL_PARAMS 3397888.0

static void small_run(ts_run *r)
{
    ts_run_defaults(r);
    r->model.layers = 4;
    r->model.hidden = 256;
    r->model.heads = 8;
    r->model.kv_heads = 4;
    r->model.vocab = 1000;
    r->seq = 512;
}

/* ---- errors and enums ---------------------------------------------- */

START_TEST(test_strerror)
{
    ts_status codes[] = { TS_OK, TS_EINVAL, TS_ERANGE, TS_EINCOMPAT, TS_ENOTFOUND, TS_ENOFIT };
    size_t i, j;

    for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        ck_assert_ptr_nonnull(ts_strerror(codes[i]));
        ck_assert(ts_strerror(codes[i])[0] != '\0');
        for (j = 0; j < i; j++)
            ck_assert_str_ne(ts_strerror(codes[i]), ts_strerror(codes[j]));
    }
    ck_assert_ptr_nonnull(ts_strerror((ts_status)99));
}
END_TEST

START_TEST(test_error_set)
{
    ts_error err;
    char longname[200];

    ck_assert_int_eq(ts_error_set(NULL, TS_EINVAL, "tp", "x %d", 1), TS_EINVAL);
    ck_assert_int_eq(ts_error_set(&err, TS_EINCOMPAT, "heads", "heads %d %% tp %d", 30, 4),
                     TS_EINCOMPAT);
    ck_assert_int_eq(err.code, TS_EINCOMPAT);
    ck_assert_str_eq(err.field, "heads");
    ck_assert_str_eq(err.text, "heads 30 % tp 4");
    ts_error_set(&err, TS_ERANGE, NULL, "no field");
    ck_assert_str_eq(err.field, "");
    /* Oversized field and text are truncated, still NUL-terminated. */
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ts_error_set(&err, TS_EINVAL, longname, "%s%s", longname, longname);
    ck_assert_uint_eq(strlen(err.field), TS_ERROR_FIELD_LEN - 1);
    ck_assert_uint_eq(strlen(err.text), TS_ERROR_TEXT_LEN - 1);
}
END_TEST

START_TEST(test_enum_names)
{
    /* Public names from api/CONTRACT.md, in enum order. */
    static const char *const prec[] = { "fp32", "bf16", "fp16", "fp8" };
    static const char *const opt[] = { "none",         "adam",      "adamw", "adam8bit",      "sgd",
                                       "sgd_momentum", "adafactor", "lion",  "paged_adam8bit" };
    static const char *const rec[] = { "none", "selective", "full", "selective_op" };
    int i;

    for (i = 0; i < TS_PREC_COUNT; i++) {
        ts_precision p = TS_PREC_COUNT;
        ck_assert_str_eq(ts_precision_name((ts_precision)i), prec[i]);
        ck_assert_int_eq(ts_precision_parse(prec[i], &p), TS_OK);
        ck_assert_int_eq(p, i);
    }
    for (i = 0; i < TS_OPT_COUNT; i++) {
        ts_optimizer o = TS_OPT_COUNT;
        ck_assert_str_eq(ts_optimizer_name((ts_optimizer)i), opt[i]);
        ck_assert_int_eq(ts_optimizer_parse(opt[i], &o), TS_OK);
        ck_assert_int_eq(o, i);
    }
    for (i = 0; i < TS_RECOMPUTE_COUNT; i++) {
        ts_recompute r = TS_RECOMPUTE_COUNT;
        ck_assert_str_eq(ts_recompute_name((ts_recompute)i), rec[i]);
        ck_assert_int_eq(ts_recompute_parse(rec[i], &r), TS_OK);
        ck_assert_int_eq(r, i);
    }
    ck_assert_str_eq(ts_precision_name(TS_PREC_COUNT), "unknown");
    ck_assert_str_eq(ts_optimizer_name((ts_optimizer)-1), "unknown");
    ck_assert_str_eq(ts_recompute_name(TS_RECOMPUTE_COUNT), "unknown");
}
END_TEST

START_TEST(test_enum_parse_bad)
{
    ts_precision p = TS_PREC_FP8;
    ts_optimizer o = TS_OPT_LION;
    ts_recompute r = TS_RECOMPUTE_FULL;

    ck_assert_int_eq(ts_precision_parse("BF16", &p), TS_EINVAL); /* case matters */
    ck_assert_int_eq(ts_precision_parse("int8", &p), TS_EINVAL);
    ck_assert_int_eq(ts_precision_parse("", &p), TS_EINVAL);
    ck_assert_int_eq(ts_precision_parse(NULL, &p), TS_EINVAL);
    ck_assert_int_eq(ts_optimizer_parse("adam ", &o), TS_EINVAL);
    ck_assert_int_eq(ts_optimizer_parse("adamw", NULL), TS_EINVAL);
    ck_assert_int_eq(ts_recompute_parse("partial", &r), TS_EINVAL);
    /* A failed parse leaves the output alone. */
    ck_assert_int_eq(p, TS_PREC_FP8);
    ck_assert_int_eq(o, TS_OPT_LION);
    ck_assert_int_eq(r, TS_RECOMPUTE_FULL);
}
END_TEST

START_TEST(test_precision_bytes)
{
    /* docs/formulas.md, bytes per parameter: fp32 4, bf16/fp16 2, fp8 1. */
    ck_assert(ts_precision_bytes(TS_PREC_FP32) == 4);
    ck_assert(ts_precision_bytes(TS_PREC_BF16) == 2);
    ck_assert(ts_precision_bytes(TS_PREC_FP16) == 2);
    ck_assert(ts_precision_bytes(TS_PREC_FP8) == 1);
    ck_assert(ts_precision_bytes(TS_PREC_COUNT) == 0);
}
END_TEST

/* ---- defaults and presets ------------------------------------------ */

START_TEST(test_defaults)
{
    ts_run r;

    ts_run_defaults(&r);
    /* Each value as documented above ts_run_defaults in trainsize.h. */
    ck_assert_int_eq(r.precision, TS_PREC_BF16);
    ck_assert_int_eq(r.grad_precision, TS_PREC_BF16);
    ck_assert_int_eq(r.compute_precision, TS_PREC_BF16);
    ck_assert(r.master_weights);
    ck_assert_int_eq(r.optimizer, TS_OPT_ADAMW);
    ck_assert(r.trainable_fraction == 1.0);
    ck_assert_int_eq(r.seq, 4096);
    ck_assert_int_eq(r.micro_batch, 1);
    ck_assert_int_eq(r.gpus, 8);
    ck_assert_int_eq(r.tp, 1);
    ck_assert_int_eq(r.pp, 1);
    ck_assert_int_eq(r.cp, 1);
    ck_assert_int_eq(r.ep, 1);
    ck_assert_int_eq(r.zero, 1);
    ck_assert(!r.sequence_parallel);
    ck_assert_int_eq(r.recompute, TS_RECOMPUTE_NONE);
    ck_assert_str_eq(r.gpu.id, "h100-sxm");
    ck_assert(r.gpu.hbm_bytes == 81559.0 * 1048576); /* oracles.md: H100 SXM 81559 MiB */
    ck_assert_int_eq(r.gpus_per_node, 8);
    ck_assert(r.mfu == 0); /* 0 = predicted by the step model (issue 11) */
    ck_assert(r.overhead_gib == 2.0);
    ck_assert(r.fragmentation == 0);
    ck_assert_int_eq(r.framework, TS_FW_MEGATRON);
    ck_assert_int_eq(r.attention, TS_ATTN_FLASH);
    ck_assert_int_eq(r.vpp, 1);
    ck_assert_int_eq(r.loss_chunks, 1);
    ck_assert_int_eq(r.optimizer_precision, TS_PREC_FP32);
    ck_assert(r.ckpt.writer_gbps == 2 && r.ckpt.nvme_gbps == 6);
    ck_assert(r.ckpt.shared_gbps == 100 && r.ckpt.object_gbps == 20);
    ck_assert(r.ckpt.nvme_interval_min == 5 && r.ckpt.shared_interval_min == 30 &&
              r.ckpt.object_interval_min == 180);
    ck_assert(r.ckpt.nvme_keep == 2 && r.ckpt.shared_keep == 3 && r.ckpt.object_keep == 5);
    ck_assert(!r.ckpt.include_grads && r.ckpt.parallel_save);
    ck_assert(r.ckpt.gpu_mtbf_hours == 50000 && r.ckpt.job_mtbf_hours == 0);
    /* No model: resolving the bare defaults names the model. */
    {
        ts_error err;
        ck_assert_int_eq(ts_run_resolve(&r, &err), TS_EINVAL);
        ck_assert_str_eq(err.field, "model");
    }
}
END_TEST

START_TEST(test_apply_preset)
{
    /* A hand-made preset, so this test does not depend on the table. */
    ts_preset p = {
        .id = "toy-1m",
        .name = "Toy",
        .model = { .layers = 4, .hidden = 256, .heads = 8, .kv_heads = 4, .vocab = 1000 },
        .published_params = 3.4e6,
        .train_tokens = 1e9,
        .seq = 2048
    };
    ts_run r;

    ts_run_defaults(&r);
    r.gpus = 16;
    ts_run_apply_preset(&r, &p);
    ck_assert_str_eq(r.preset, "toy-1m");
    ck_assert_int_eq(r.model.layers, 4);
    ck_assert_int_eq(r.model.kv_heads, 4);
    ck_assert_int_eq(r.seq, 2048);
    ck_assert(r.tokens == 1e9);
    ck_assert_int_eq(r.gpus, 16); /* the rest is left alone */
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert(r.tokens == 1e9); /* the preset's tokens win over 20 P */

    /* No published tokens: 20 P (Chinchilla), 20 * 3397888 = 67957760. */
    p.train_tokens = 0;
    ts_run_defaults(&r);
    ts_run_apply_preset(&r, &p);
    ck_assert(r.tokens == 0);
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert(r.tokens == 20.0 * SMALL_PARAMS);
}
END_TEST

/* ---- resolution ----------------------------------------------------- */

START_TEST(test_resolve_layout)
{
    ts_run r;
    ts_error err;

    /* gpus 64, tp 8 -> dp = 64 / 8 = 8. */
    small_run(&r);
    r.gpus = 64;
    r.tp = 4;
    r.pp = 2;
    ck_assert_int_eq(ts_run_resolve(&r, &err), TS_OK);
    ck_assert_int_eq(r.dp, 8);
    ck_assert_int_eq(r.gpus, 64);
    /* dp 4, tp 2, pp 2, cp 2 -> gpus 32. */
    small_run(&r);
    r.gpus = 0;
    r.dp = 4;
    r.tp = 2;
    r.pp = 2;
    r.cp = 2;
    ck_assert_int_eq(ts_run_resolve(&r, &err), TS_OK);
    ck_assert_int_eq(r.gpus, 32);
    /* Both given and agreeing. */
    small_run(&r);
    r.gpus = 16;
    r.dp = 8;
    r.tp = 2;
    ck_assert_int_eq(ts_run_resolve(&r, &err), TS_OK);
    /* Both given, disagreeing: 8 * 2 != 8. */
    small_run(&r);
    r.gpus = 8;
    r.dp = 8;
    r.tp = 2;
    ck_assert_int_eq(ts_run_resolve(&r, &err), TS_EINCOMPAT);
    ck_assert_str_eq(err.field, "gpus");
    /* 12 GPUs cannot be split into tp 8. */
    small_run(&r);
    r.gpus = 12;
    r.tp = 8;
    ck_assert_int_eq(ts_run_resolve(&r, &err), TS_EINCOMPAT);
    ck_assert_str_eq(err.field, "gpus");
    /* Neither given. */
    small_run(&r);
    r.gpus = 0;
    ck_assert_int_eq(ts_run_resolve(&r, &err), TS_EINVAL);
    ck_assert_str_eq(err.field, "gpus");
}
END_TEST

START_TEST(test_resolve_defaults)
{
    ts_run r, again;

    small_run(&r);
    r.model.kv_heads = 0;
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert_int_eq(r.model.kv_heads, 8);  /* = heads */
    ck_assert_int_eq(r.model.ffn, 4 * 256); /* = 4 h */
    ck_assert_int_eq(r.model.top_k, 0);     /* dense: untouched */
    ck_assert_int_eq(r.dp, 8);              /* 8 GPUs / 1 */
    /* About 4M tokens: ceil(2^22 / seq) sequences, a multiple of dp * b. */
    ck_assert_int_eq(r.global_batch, (4194304 + r.seq - 1) / r.seq);
    ck_assert_int_eq(r.global_batch % 8, 0);
    /* Idempotent: a resolved run resolves to itself. */
    again = r;
    ck_assert_int_eq(ts_run_resolve(&again, NULL), TS_OK);
    ck_assert(memcmp(&again, &r, sizeof r) == 0);

    /* MoE: top_k 0 -> 1. */
    small_run(&r);
    r.model.experts = 4;
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert_int_eq(r.model.top_k, 1);

    /* global_batch 64 with dp 8, micro_batch 2: 64 % 16 == 0, kept. */
    small_run(&r);
    r.micro_batch = 2;
    r.global_batch = 64;
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert_int_eq(r.global_batch, 64);

    /* fp32 weights are their own master copy. */
    small_run(&r);
    r.precision = TS_PREC_FP32;
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert(!r.master_weights);

    /* sequence_parallel with tp 1 is a no-op, not an error. */
    small_run(&r);
    r.sequence_parallel = true;
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);

    /* Plain params resolve; tokens = 20 * 7e9. */
    ts_run_defaults(&r);
    r.model.params = 7e9;
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert(r.tokens == 140e9);
}
END_TEST

START_TEST(test_resolve_failure_leaves_run)
{
    ts_run r, before;
    ts_error err;

    small_run(&r);
    r.gpus = 0;
    r.dp = 4;
    r.tp = 3; /* heads 8 % 3 */
    before = r;
    ck_assert_int_eq(ts_run_resolve(&r, &err), TS_EINCOMPAT);
    ck_assert(memcmp(&before, &r, sizeof r) == 0);
    ck_assert_int_eq(ts_run_resolve(NULL, &err), TS_EINVAL);
}
END_TEST

/* One mutation of the small valid run per row. */
typedef void (*mutate_fn)(ts_run *r);
typedef struct bad_case {
    const char *what;
    mutate_fn mutate;
    ts_status code;
    const char *field;
} bad_case;

#define BAD(name, stmt)               \
    static void bad_##name(ts_run *r) \
    {                                 \
        stmt;                         \
    }
BAD(no_model, r->model = (ts_model){ 0 })
BAD(precision, r->precision = TS_PREC_COUNT)
BAD(grad_precision, r->grad_precision = (ts_precision)-1)
BAD(compute_precision, r->compute_precision = (ts_precision)7)
BAD(optimizer, r->optimizer = TS_OPT_COUNT)
BAD(recompute, r->recompute = TS_RECOMPUTE_COUNT)
BAD(trainable_zero, r->trainable_fraction = 0)
BAD(trainable_big, r->trainable_fraction = 1.5)
BAD(trainable_nan, r->trainable_fraction = NAN)
BAD(seq_zero, r->seq = 0)
BAD(seq_big, r->seq = (INT64_C(1) << 24) + 1)
BAD(mb_zero, r->micro_batch = 0)
BAD(mb_neg, r->micro_batch = -3)
BAD(gb_neg, r->global_batch = -1)
BAD(gb_indivisible, r->global_batch = 12) /* dp 8 * mb 1 does not divide 12 */
BAD(tokens_neg, r->tokens = -1)
BAD(tokens_inf, r->tokens = INFINITY)
BAD(gpus_neg, r->gpus = -8)
BAD(gpus_big, r->gpus = (INT64_C(1) << 20) + 8)
BAD(dp_neg, r->dp = -1)
BAD(tp_zero, r->tp = 0)
BAD(tp_big, r->tp = (INT64_C(1) << 21))
BAD(pp_zero, r->pp = 0)
BAD(cp_zero, r->cp = 0)
BAD(ep_zero, r->ep = 0)
BAD(zero_neg, r->zero = -1)
BAD(zero_big, r->zero = 4)
BAD(product_big, r->gpus = 0; r->dp = 1 << 10; r->tp = 1 << 11)
BAD(mp_big, r->tp = 1 << 20; r->pp = 1 << 20; r->cp = 1 << 20)
BAD(no_gpu, memset(&r->gpu, 0, sizeof r->gpu))
BAD(hbm_zero, r->gpu.hbm_bytes = 0)
BAD(hbm_nan, r->gpu.hbm_bytes = NAN)
BAD(peak_zero, r->gpu.bf16_flops = 0)
BAD(peak_inf, r->gpu.bf16_flops = INFINITY)
BAD(fp8_neg, r->gpu.fp8_flops = -1)
BAD(gpus_per_node, r->gpus_per_node = 0)
BAD(mfu_zero, r->mfu = -1e-9)
BAD(mfu_big, r->mfu = 1.01)
BAD(overhead_neg, r->overhead_gib = -0.1)
BAD(overhead_big, r->overhead_gib = 1025)
BAD(frag_half, r->fragmentation = 0.5)
BAD(frag_neg, r->fragmentation = -0.01)
BAD(writer, r->ckpt.writer_gbps = 0)
BAD(nvme, r->ckpt.nvme_gbps = NAN)
BAD(shared, r->ckpt.shared_gbps = -1)
BAD(object, r->ckpt.object_gbps = 0)
BAD(nvme_int, r->ckpt.nvme_interval_min = 0)
BAD(shared_int, r->ckpt.shared_interval_min = -5)
BAD(object_int, r->ckpt.object_interval_min = INFINITY)
BAD(nvme_keep, r->ckpt.nvme_keep = 0)
BAD(shared_keep, r->ckpt.shared_keep = -1)
BAD(object_keep, r->ckpt.object_keep = 0)
BAD(gpu_mtbf, r->ckpt.gpu_mtbf_hours = 0)
BAD(job_mtbf, r->ckpt.job_mtbf_hours = -1)
/* incompatibilities */
BAD(heads_tp, r->gpus = 12; r->tp = 3) /* heads 8 % 3 */
BAD(kv_tp, r->gpus = 64; r->tp = 8; r->model.heads = 48; r->model.kv_heads = 12;
    r->model.hidden = 480)
/* kv 12 >= tp 8, 12 % 8 */
BAD(kv_tp_rep, r->gpus = 16; r->tp = 16; r->model.heads = 48; r->model.kv_heads = 6;
    r->model.hidden = 480)
/* kv 6 < tp 16, 16 % 6 */
BAD(heads_kv, r->model.kv_heads = 3)  /* 8 % 3 */
BAD(hidden_heads, r->model.heads = 6) /* 256 % 6 */
BAD(layers_pp, r->pp = 8)             /* 8 stages > 4 layers (gpus 8, dp 1) */
BAD(seq_cp, r->seq = 500; r->cp = 8)  /* 500 % 8 */
BAD(ep_dense, r->ep = 2)
BAD(ep_experts, r->model.experts = 6; r->ep = 4) /* 6 % 4 */
BAD(ep_dp, r->model.experts = 16; r->ep = 16)    /* dp 8 % 16 */
BAD(ep_plain, r->model = (ts_model){ .params = 1e9 }; r->ep = 2)
BAD(offload_params, r->offload_params = true; r->zero = 2)
BAD(offload_opt, r->offload_optimizer = true; r->zero = 0)
BAD(fp8_no_peak, r->compute_precision = TS_PREC_FP8; r->gpu.fp8_flops = 0)
BAD(fp32_no_peak, r->compute_precision = TS_PREC_FP32; r->gpu.fp32_flops = 0)
BAD(top_k, r->model.experts = 4; r->model.top_k = 5)

static const bad_case bad[] = {
    { "no model", bad_no_model, TS_EINVAL, "model" },
    { "precision", bad_precision, TS_EINVAL, "precision" },
    { "grad_precision", bad_grad_precision, TS_EINVAL, "grad_precision" },
    { "compute_precision", bad_compute_precision, TS_EINVAL, "compute_precision" },
    { "optimizer", bad_optimizer, TS_EINVAL, "optimizer" },
    { "recompute", bad_recompute, TS_EINVAL, "recompute" },
    { "trainable 0", bad_trainable_zero, TS_EINVAL, "trainable_fraction" },
    { "trainable 1.5", bad_trainable_big, TS_EINVAL, "trainable_fraction" },
    { "trainable NaN", bad_trainable_nan, TS_EINVAL, "trainable_fraction" },
    { "seq 0", bad_seq_zero, TS_EINVAL, "seq" },
    { "seq 2^24+1", bad_seq_big, TS_EINVAL, "seq" },
    { "micro_batch 0", bad_mb_zero, TS_EINVAL, "micro_batch" },
    { "micro_batch -3", bad_mb_neg, TS_EINVAL, "micro_batch" },
    { "global_batch -1", bad_gb_neg, TS_EINVAL, "global_batch" },
    { "global_batch 12", bad_gb_indivisible, TS_EINCOMPAT, "global_batch" },
    { "tokens -1", bad_tokens_neg, TS_EINVAL, "tokens" },
    { "tokens inf", bad_tokens_inf, TS_EINVAL, "tokens" },
    { "gpus -8", bad_gpus_neg, TS_EINVAL, "gpus" },
    { "gpus 2^20+8", bad_gpus_big, TS_EINVAL, "gpus" },
    { "dp -1", bad_dp_neg, TS_EINVAL, "dp" },
    { "tp 0", bad_tp_zero, TS_EINVAL, "tp" },
    { "tp 2^21", bad_tp_big, TS_EINVAL, "tp" },
    { "pp 0", bad_pp_zero, TS_EINVAL, "pp" },
    { "cp 0", bad_cp_zero, TS_EINVAL, "cp" },
    { "ep 0", bad_ep_zero, TS_EINVAL, "ep" },
    { "zero -1", bad_zero_neg, TS_EINVAL, "zero" },
    { "zero 4", bad_zero_big, TS_EINVAL, "zero" },
    { "dp*tp > 2^20", bad_product_big, TS_EINVAL, "dp" },
    { "tp*pp*cp > 2^20", bad_mp_big, TS_EINVAL, "gpus" },
    { "no gpu", bad_no_gpu, TS_EINVAL, "gpu" },
    { "hbm 0", bad_hbm_zero, TS_EINVAL, "hbm_gb" },
    { "hbm NaN", bad_hbm_nan, TS_EINVAL, "hbm_gb" },
    { "peak 0", bad_peak_zero, TS_EINVAL, "peak_tflops" },
    { "peak inf", bad_peak_inf, TS_EINVAL, "peak_tflops" },
    { "fp8 peak -1", bad_fp8_neg, TS_EINVAL, "gpu" },
    { "gpus_per_node 0", bad_gpus_per_node, TS_EINVAL, "gpus_per_node" },
    { "mfu negative", bad_mfu_zero, TS_EINVAL, "mfu" },
    { "mfu 1.01", bad_mfu_big, TS_EINVAL, "mfu" },
    { "overhead -0.1", bad_overhead_neg, TS_EINVAL, "overhead_gib" },
    { "overhead 1025", bad_overhead_big, TS_EINVAL, "overhead_gib" },
    { "fragmentation 0.5", bad_frag_half, TS_EINVAL, "fragmentation" },
    { "fragmentation -0.01", bad_frag_neg, TS_EINVAL, "fragmentation" },
    { "writer_gbps 0", bad_writer, TS_EINVAL, "writer_gbps" },
    { "nvme_gbps NaN", bad_nvme, TS_EINVAL, "nvme_gbps" },
    { "shared_gbps -1", bad_shared, TS_EINVAL, "shared_gbps" },
    { "object_gbps 0", bad_object, TS_EINVAL, "object_gbps" },
    { "nvme_interval 0", bad_nvme_int, TS_EINVAL, "nvme_interval_min" },
    { "shared_interval -5", bad_shared_int, TS_EINVAL, "shared_interval_min" },
    { "object_interval inf", bad_object_int, TS_EINVAL, "object_interval_min" },
    { "nvme_keep 0", bad_nvme_keep, TS_EINVAL, "nvme_keep" },
    { "shared_keep -1", bad_shared_keep, TS_EINVAL, "shared_keep" },
    { "object_keep 0", bad_object_keep, TS_EINVAL, "object_keep" },
    { "gpu_mtbf 0", bad_gpu_mtbf, TS_EINVAL, "gpu_mtbf_hours" },
    { "job_mtbf -1", bad_job_mtbf, TS_EINVAL, "job_mtbf_hours" },
    { "heads % tp", bad_heads_tp, TS_EINCOMPAT, "tp" },
    { "kv_heads % tp", bad_kv_tp, TS_EINCOMPAT, "tp" },
    { "tp % kv_heads", bad_kv_tp_rep, TS_EINCOMPAT, "tp" },
    { "heads % kv_heads", bad_heads_kv, TS_EINCOMPAT, "kv_heads" },
    { "hidden % heads", bad_hidden_heads, TS_EINCOMPAT, "heads" },
    { "pp > layers", bad_layers_pp, TS_EINCOMPAT, "pp" },
    { "seq % cp", bad_seq_cp, TS_EINCOMPAT, "cp" },
    { "ep without experts", bad_ep_dense, TS_EINCOMPAT, "ep" },
    { "experts % ep", bad_ep_experts, TS_EINCOMPAT, "ep" },
    { "dp % ep", bad_ep_dp, TS_EINCOMPAT, "ep" },
    { "ep on plain params", bad_ep_plain, TS_EINCOMPAT, "ep" },
    { "offload_params zero 2", bad_offload_params, TS_EINCOMPAT, "offload_params" },
    { "offload_optimizer zero 0", bad_offload_opt, TS_EINCOMPAT, "offload_optimizer" },
    { "fp8 on a GPU without", bad_fp8_no_peak, TS_EINCOMPAT, "compute_precision" },
    { "fp32 on a GPU without", bad_fp32_no_peak, TS_EINCOMPAT, "compute_precision" },
    { "top_k > experts", bad_top_k, TS_EINCOMPAT, "top_k" },
};

START_TEST(test_resolve_bad)
{
    const bad_case *c = &bad[_i];
    ts_run r;
    ts_error err;

    small_run(&r);
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK); /* the base is valid */
    small_run(&r);
    c->mutate(&r);
    memset(&err, 0, sizeof err);
    ck_assert_msg(ts_run_resolve(&r, &err) == c->code, "%s: got %s (%s: %s)", c->what,
                  ts_strerror(err.code), err.field, err.text);
    ck_assert_msg(strcmp(err.field, c->field) == 0, "%s: field '%s', want '%s'", c->what, err.field,
                  c->field);
    ck_assert(err.text[0] != '\0');
}
END_TEST

/* ---- the default global batch (issue 25) --------------------------- */

/* Llama 3.1 405B (126 layers, seq 8192) on 16,384 GPUs, tp 8 x pp 16. */
static void run_405b(ts_run *r, int64_t gpus)
{
    ts_run_defaults(r);
    ts_run_apply_preset(r, ts_preset_find("llama3.1-405b"));
    r->gpus = gpus;
    r->tp = 8;
    r->pp = 16;
}

START_TEST(test_default_batch_rule)
{
    ts_run r;
    ts_batch_rule b;

    /* dp 128: 4M tokens are 2^22 / 8192 = 512 sequences, 4 micro-batches
     * per pipeline; the bubble bound wants m >= 4 (p - 1) / v = 60
     * (bubble (p-1)/(v m) <= 1/4, Narayanan et al. 2021 section 2.2), so
     * 128 x 1 x 60 = 7680 sequences (62.9M tokens). */
    run_405b(&r, 16384);
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert_int_eq(r.dp, 128);
    ck_assert_int_eq(r.global_batch, 7680);
    ck_assert_int_eq(ts_batch_default(&r, &b, NULL), TS_OK);
    ck_assert_int_eq(b.m_tokens, 4);
    ck_assert_int_eq(b.m_bubble, 60);
    ck_assert_int_eq(b.micro_batches, 60);
    ck_assert_int_eq(b.global_batch, 7680);

    /* It grows with dp: 32,768 GPUs, dp 256 -> 256 x 60 = 15360. */
    run_405b(&r, 32768);
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert_int_eq(r.global_batch, 15360);

    /* And with the micro-batch: b 2 -> 128 x 2 x 60 = 15360. */
    run_405b(&r, 16384);
    r.micro_batch = 2;
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert_int_eq(r.global_batch, 15360);

    /* Interleaved, v 4: ceil(60 / 4) = 15, rounded up to a multiple of
     * pp (Megatron's interleaved schedule) = 16 -> 128 x 16 = 2048
     * sequences, the batch Meta trained with (Llama 3 paper, Table 4). */
    run_405b(&r, 16384);
    r.pp_schedule = TS_PP_INTERLEAVED;
    r.vpp = 4;
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert_int_eq(r.global_batch, 2048);
    ck_assert_int_eq(ts_batch_default(&r, &b, NULL), TS_OK);
    ck_assert_int_eq(b.m_bubble, 16);

    /* A given batch is kept. */
    run_405b(&r, 16384);
    r.global_batch = 512;
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert_int_eq(r.global_batch, 512);

    /* The tokens bound wins on few GPUs: small_run on 8 GPUs, pp 2, dp 4,
     * seq 512: 2^22 / 512 = 8192 sequences, m = 2048 >= 4. */
    small_run(&r);
    r.pp = 2;
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert_int_eq(r.global_batch, 8192);
    ck_assert_int_eq(ts_batch_default(&r, &b, NULL), TS_OK);
    ck_assert_int_eq(b.m_tokens, 2048);
    ck_assert_int_eq(b.m_bubble, 4);

    /* No pipeline: no bubble bound. */
    small_run(&r);
    ck_assert_int_eq(ts_run_resolve(&r, NULL), TS_OK);
    ck_assert_int_eq(ts_batch_default(&r, &b, NULL), TS_OK);
    ck_assert_int_eq(b.m_bubble, 0);

    /* An unresolved layout is refused. */
    small_run(&r);
    r.dp = 0;
    ck_assert_int_eq(ts_batch_default(&r, &b, NULL), TS_EINVAL);
}
END_TEST

static Suite *run_suite(void)
{
    Suite *s = suite_create("run");
    TCase *tc = tcase_create("run");

    tcase_add_test(tc, test_strerror);
    tcase_add_test(tc, test_error_set);
    tcase_add_test(tc, test_enum_names);
    tcase_add_test(tc, test_enum_parse_bad);
    tcase_add_test(tc, test_precision_bytes);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_apply_preset);
    tcase_add_test(tc, test_resolve_layout);
    tcase_add_test(tc, test_resolve_defaults);
    tcase_add_test(tc, test_resolve_failure_leaves_run);
    tcase_add_test(tc, test_default_batch_rule);
    tcase_add_loop_test(tc, test_resolve_bad, 0, (int)(sizeof bad / sizeof bad[0]));
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(run_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
