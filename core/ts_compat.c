/*
 * ts_compat.c - options only some frameworks, kernels or layouts have:
 * one check each, a 400 naming the option when the run cannot have it
 * (never a silent no-op).  ts_run.c calls ts_compat_check() whenever
 * the layout is derived, at a resolve and at each relayout of a solver or
 * a search, which vary the framework, tp, cp and recompute these depend
 * on.
 */
#include "ts_internal.h"

bool ts_framework_tp_overlap(ts_framework f)
{
    return f == TS_FW_MEGATRON || f == TS_FW_FSDP;
}

/* Megatron-LM arguments.py: --tp-comm-overlap asserts sequence
 * parallelism, which it switches off at tensor parallel 1; only some
 * frameworks have it (ts_framework_tp_overlap). */
static ts_status ts_compat_tp_overlap(const ts_run *r, ts_error *err)
{
    if (r->tp_comm_overlap && !ts_framework_tp_overlap(r->framework))
        return ts_error_set(err, TS_EINCOMPAT, "tp_comm_overlap",
                            "tp_comm_overlap is Transformer Engine's (megatron) or PyTorch's async "
                            "TP (fsdp), not %s's",
                            ts_framework_name(r->framework));
    if (r->tp_comm_overlap && (r->tp < 2 || !r->sequence_parallel))
        return ts_error_set(err, TS_EINCOMPAT, "tp_comm_overlap",
                            "tp_comm_overlap needs tp > 1 and sequence_parallel, got tp %lld%s",
                            (long long)r->tp,
                            r->sequence_parallel ? "" : " without sequence_parallel");
    return TS_OK;
}

/* Liger's kernels patch transformers' own modules (liger_kernel
 * transformers/monkey_patch.py _apply_liger_kernel_to_instance), so they
 * are the hf framework's; they take whole tensors, and NeMo AutoModel
 * turns them off under tensor or context parallelism
 * (nemo_automodel/_transformers/auto_model.py@507bfb751
 * _apply_preload_overrides: "Disabling Liger kernel with TP or CP"). */
static ts_status ts_compat_liger(const ts_run *r, ts_error *err)
{
    if (!r->liger_kernels)
        return TS_OK;
    if (r->framework != TS_FW_HF)
        return ts_error_set(err, TS_EINCOMPAT, "liger_kernels",
                            "liger_kernels patches transformers' modules: framework \"hf\", not %s",
                            ts_framework_name(r->framework));
    if (r->tp > 1 || r->cp > 1)
        return ts_error_set(
            err, TS_EINCOMPAT, "liger_kernels",
            "liger_kernels needs tp 1 and cp 1 (its kernels take whole tensors), got "
            "tp %lld cp %lld",
            (long long)r->tp, (long long)r->cp);
    return TS_OK;
}

/* recompute selective_op is torchtitan's per-op policy over its Llama
 * block (parallelize_llama.py@9dec370 _apply_ac_to_transformer_block):
 * which outputs it keeps follows the order of the block's matmuls, known
 * for a dense block with separate q, k, v projections only.  A MoE
 * block's router and experts, MLA's latents and LoRA's adapters add
 * matmuls whose place in that count is not modelled.  Its save list
 * keeps the output of PyTorch's SDPA kernels; flash-attn's varlen call
 * and the unpad copies around it (attention_unpad, llm-foundry's
 * flash_attn_fn) are outside that list, so what reruns is not known. */
static ts_status ts_compat_recompute_op(const ts_run *r, ts_error *err)
{
    const char *why = NULL;

    if (r->recompute != TS_RECOMPUTE_SELECTIVE_OP)
        return TS_OK;
    if (r->framework != TS_FW_FSDP)
        why = "framework \"fsdp\" (torchtitan)";
    else if (r->model.layers <= 0)
        why = "a model shape (layers), not a plain params count";
    else if (r->model.experts > 1 || r->model.kv_lora_rank > 0 || r->lora_rank > 0)
        why = "a dense model without MLA or LoRA";
    else if (r->attention_unpad)
        why = "SDPA attention, without attention_unpad (flash-attn's varlen path is not in "
              "torchtitan's save list)";
    if (why == NULL)
        return TS_OK;
    return ts_error_set(err, TS_EINCOMPAT, "recompute", "recompute \"selective_op\" needs %s", why);
}

/* activation_func_fp8_input_store is Megatron-Core's, and Megatron-Core
 * allows it for SwiGLU only (transformer_config.py@d98e8a64
 * __post_init__: "Storing activation input in FP8 is supported only for
 * SwiGLU"). */
static ts_status ts_compat_act_fp8(const ts_run *r, ts_error *err)
{
    const char *why = NULL;

    if (!r->act_fp8_input_store)
        return TS_OK;
    if (r->framework != TS_FW_MEGATRON)
        why = "framework \"megatron\" (Megatron-Core's MLP; NeMo runs on it)";
    else if (!r->model.gated)
        why = "a gated (SwiGLU) MLP";
    if (why == NULL)
        return TS_OK;
    return ts_error_set(err, TS_EINCOMPAT, "activation_func_fp8_input_store",
                        "activation_func_fp8_input_store needs %s", why);
}

/* attention_unpad describes a wrapper around the flash kernel; the
 * other kernels take the padded batch. */
static ts_status ts_compat_unpad(const ts_run *r, ts_error *err)
{
    if (!r->attention_unpad || r->attention == TS_ATTN_FLASH)
        return TS_OK;
    return ts_error_set(err, TS_EINCOMPAT, "attention_unpad",
                        "attention_unpad needs attention \"flash\" (flash-attn's varlen call)");
}

/* Two descriptions of PyTorch-side code: a GPTQ base is auto-gptq's
 * QuantLinear inside a transformers model (frozen_precision gptq:
 * framework hf), and lora_impl automodel is NeMo AutoModel's LinearLoRA,
 * which runs its transformers or custom models plain or under FSDP2
 * (hf or fsdp).  Megatron and DeepSpeed's own stacks have neither. */
static ts_status ts_compat_pytorch_side(const ts_run *r, ts_error *err)
{
    if (r->frozen_precision == TS_QUANT_GPTQ && r->framework != TS_FW_HF)
        return ts_error_set(err, TS_EINCOMPAT, "frozen_precision",
                            "frozen_precision gptq is auto-gptq's QuantLinear in a transformers "
                            "model: framework \"hf\", not %s",
                            ts_framework_name(r->framework));
    /* QuantLinear registers qweight, qzeros, scales and g_idx as buffers
     * (auto_gptq@v0.4.2 qlinear_cuda_old.py __init__), and FSDP / ZeRO-3
     * shard parameters only: the packed base would stay whole on every
     * GPU, which the sharded memory model does not describe. */
    if (r->frozen_precision == TS_QUANT_GPTQ && r->zero >= 3)
        return ts_error_set(err, TS_EINCOMPAT, "frozen_precision",
                            "frozen_precision gptq keeps the packed weights as buffers, which "
                            "zero 3 (FSDP / ZeRO-3) does not shard: use zero 0-2");
    if (r->lora_impl == TS_LORA_IMPL_AUTOMODEL && r->framework != TS_FW_HF &&
        r->framework != TS_FW_FSDP)
        return ts_error_set(err, TS_EINCOMPAT, "lora_impl",
                            "lora_impl automodel is NeMo AutoModel's LinearLoRA: framework "
                            "\"hf\" or \"fsdp\", not %s",
                            ts_framework_name(r->framework));
    return TS_OK;
}

/* lora_modules_to_save is PEFT's (ModulesToSaveWrapper), under the HF
 * Trainer alone (framework hf, accelerate's FSDP being hf with zero >= 2)
 * or with DeepSpeed; Megatron-LM's and NeMo's LoRA train the adapters
 * only (Megatron-Bridge peft/lora.py has target_modules, no
 * modules_to_save), and torchtitan (fsdp) has no PEFT. */
static ts_status ts_compat_lora_save(const ts_run *r, ts_error *err)
{
    if (r->lora_save != 0 && r->framework != TS_FW_HF && r->framework != TS_FW_DEEPSPEED)
        return ts_error_set(err, TS_EINCOMPAT, "lora_modules_to_save",
                            "lora_modules_to_save is PEFT's (framework hf, or deepspeed under "
                            "the HF Trainer), not %s's: Megatron's and NeMo's LoRA train the "
                            "adapters only, torchtitan has no PEFT",
                            ts_framework_name(r->framework));
    return TS_OK;
}

/* Megatron-Core's CPU activation offload (cpu_offloading with
 * cpu_offloading_num_layers; Transformer Engine's get_cpu_offload_context)
 * as Megatron-Core validates it (megatron/core/transformer/
 * transformer_config.py@d98e8a64 1884-1899): 0 <= N < num_layers, no
 * pipeline parallelism, no activation recompute.  Transformer Engine
 * only: framework megatron.  A search keeps the layouts that have it. */
static ts_status ts_compat_offload_act(const ts_run *r, ts_error *err)
{
    int64_t n = r->offload_activation_layers;

    if (n == 0)
        return TS_OK;
    if (r->framework != TS_FW_MEGATRON)
        return ts_error_set(err, TS_EINCOMPAT, "offload_activation_layers",
                            "offload_activation_layers is Megatron-Core's CPU offload "
                            "(Transformer Engine); it needs framework \"megatron\", got \"%s\"",
                            ts_framework_name(r->framework));
    if (r->model.layers <= 0)
        return ts_error_set(err, TS_EINCOMPAT, "offload_activation_layers",
                            "offload_activation_layers needs a model shape (layers), not a "
                            "plain params count");
    if (n >= r->model.layers)
        return ts_error_set(err, TS_EINCOMPAT, "offload_activation_layers",
                            "offload_activation_layers %lld must be below the model's %lld layers "
                            "(Megatron-Core offloads fewer layers than it has)",
                            (long long)n, (long long)r->model.layers);
    if (r->pp > 1)
        return ts_error_set(err, TS_EINCOMPAT, "offload_activation_layers",
                            "offload_activation_layers needs pp 1 (Megatron-Core has no CPU "
                            "offloading with pipeline parallelism), got pp %lld",
                            (long long)r->pp);
    if (r->recompute != TS_RECOMPUTE_NONE)
        return ts_error_set(err, TS_EINCOMPAT, "offload_activation_layers",
                            "offload_activation_layers needs recompute \"none\" (Megatron-Core "
                            "does not offload with activation recomputation), got \"%s\"",
                            ts_recompute_name(r->recompute));
    return TS_OK;
}

/* --overlap-grad-reduce and --overlap-param-gather are Megatron's DDP and
 * distributed optimizer's; FSDP, DeepSpeed and Megatron-FSDP (zero 3)
 * schedule their own collectives (modelled per framework), so turning
 * Megatron's off there would be a silent no-op.  Megatron asserts the
 * parameter gather's overlap only with the gradient reduce's
 * (arguments.py@d98e8a64 1028-1029). */
static ts_status ts_compat_dp_overlap(const ts_run *r, ts_error *err)
{
    const char *f = !r->overlap_grad_reduce ? "overlap_grad_reduce" : "overlap_param_gather";

    if (r->overlap_grad_reduce && r->overlap_param_gather)
        return TS_OK;
    if (r->framework != TS_FW_MEGATRON || r->zero >= 3)
        return ts_error_set(
            err, TS_EINCOMPAT, f,
            "%s false is Megatron's DDP (--%s off); %s schedules its own "
            "data-parallel collectives",
            f, !r->overlap_grad_reduce ? "overlap-grad-reduce" : "overlap-param-gather",
            r->framework != TS_FW_MEGATRON ? ts_framework_name(r->framework)
                                           : "Megatron-FSDP (zero 3)");
    if (!r->overlap_grad_reduce && r->overlap_param_gather && r->zero >= 1)
        return ts_error_set(err, TS_EINCOMPAT, "overlap_param_gather",
                            "overlap_param_gather needs overlap_grad_reduce (Megatron: \"Must use "
                            "--overlap-param-gather with --overlap-grad-reduce\")");
    return TS_OK;
}

/* FP8 parameters under Megatron-Core are Transformer Engine modules
 * built under fp8_model_init, which TransformerConfig allows only with
 * FP8 compute (transformer_config.py@d98e8a64 1566: "fp8_param must be
 * used together with fp8 mode").  Megatron-LM's launcher also asks for
 * the distributed optimizer (arguments.py@d98e8a64 1095), but NeMo's
 * LoRA recipes build the same config with a plain fused Adam
 * (MLPerf v5.1 Llama-2-70B LoRA, fp8_params True, zero 0), so only
 * Megatron-Core's own check is a 400 here. */
static ts_status ts_compat_fp8_params(const ts_run *r, ts_error *err)
{
    if (r->precision != TS_PREC_FP8 || r->framework != TS_FW_MEGATRON ||
        r->compute_precision == TS_PREC_FP8)
        return TS_OK;
    return ts_error_set(err, TS_EINCOMPAT, "precision",
                        "precision fp8 under megatron (FP8 parameters) needs compute_precision fp8 "
                        "(Megatron-Core: \"fp8_param must be used together with fp8 mode\"), got "
                        "compute_precision %s",
                        ts_precision_name(r->compute_precision));
}

int64_t ts_run_offloaded_layers(const ts_run *r)
{
    int64_t n = r->offload_activation_layers;

    /* Megatron-Core offloads under torch.is_grad_enabled() only
     * (transformer_block.py@d98e8a64 739): nothing for inference. */
    if (n <= 0 || r->framework != TS_FW_MEGATRON || r->pp != 1 ||
        r->recompute != TS_RECOMPUTE_NONE || n >= r->model.layers || r->optimizer == TS_OPT_NONE)
        return 0;
    return n;
}

bool ts_run_te_fp8(const ts_run *r)
{
    return r->compute_precision == TS_PREC_FP8 && r->framework == TS_FW_MEGATRON &&
           r->lora_rank == 0;
}

bool ts_run_te_fp8_params(const ts_run *r)
{
    return r->precision == TS_PREC_FP8 && r->framework == TS_FW_MEGATRON;
}

ts_status ts_compat_check(const ts_run *r, ts_error *err)
{
    ts_status st;

    if ((st = ts_compat_tp_overlap(r, err)) != TS_OK || (st = ts_compat_liger(r, err)) != TS_OK ||
        (st = ts_compat_pytorch_side(r, err)) != TS_OK ||
        (st = ts_compat_recompute_op(r, err)) != TS_OK ||
        (st = ts_compat_act_fp8(r, err)) != TS_OK || (st = ts_compat_lora_save(r, err)) != TS_OK ||
        (st = ts_compat_offload_act(r, err)) != TS_OK ||
        (st = ts_compat_fp8_params(r, err)) != TS_OK ||
        (st = ts_compat_dp_overlap(r, err)) != TS_OK)
        return st;
    return ts_compat_unpad(r, err);
}
