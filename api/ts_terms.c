/*
 * ts_terms.c - the output-terms table (ts_terms.h).
 *
 * label and doc are copied verbatim into the dashboard (web/terms.js), the
 * CLI's table and docs/terms.md by tools/ts_gen_fields and into
 * api/openapi.json by tools/ts_gen_openapi (ninja -C BUILD regen-fields),
 * so write them for those readers: a label
 * is a short noun phrase (the CLI prints it in 32 columns), a doc one
 * sentence.  formula is the static formula of a plain number (terms carry
 * theirs in the answer); each cites the code that computes it, whose
 * sources are in docs/formulas.md.
 */
#include <stddef.h>
#include <string.h>

#include "ts_terms.h"

const ts_term_objdef ts_term_objs[TS_TO_COUNT] = {
    [TS_TO_PARAMS] = { "params", "ParamsHuman", "Parameters" },
    [TS_TO_MEMORY] = { "memory", "MemoryHuman", "Memory per GPU" },
    [TS_TO_BPP] = { "memory.bytes_per_param", "BytesPerParamHuman",
                    "Bytes per parameter (unsharded)" },
    [TS_TO_STAGE] = { "memory.stages[]", "StageHuman", "Per pipeline stage" },
    [TS_TO_PHASE] = { "memory.phases[]", NULL, "Phases of a step" },
    [TS_TO_COMPUTE] = { "compute", "ComputeHuman", "Compute" },
    [TS_TO_STEP] = { "compute.step", "StepHuman", "Step time, per optimizer step" },
    [TS_TO_CHECKPOINT] = { "checkpoint", "CheckpointHuman", "Checkpoint" },
    [TS_TO_TIER] = { "checkpoint.tiers[]", "TierHuman", "Checkpoint tiers" },
    [TS_TO_SEARCH] = { "results[]", "SearchResultHuman", "Layout search results" },
    [TS_TO_PRESET] = { "presets[]", "PresetHuman", "Model presets" },
    [TS_TO_GPU] = { "gpus[]", "GpuHuman", "GPU catalogue" },
    [TS_TO_GOODPUT] = { "compute.goodput", "GoodputHuman", "With checkpoints and failures" },
    [TS_TO_ENERGY] = { "compute.energy", "EnergyHuman", "Energy and carbon" },
    [TS_TO_BUDGET] = { "budget", "BudgetHuman", "Budget" },
};

/* A term object; a number with its text in the "human" map; a number with
 * its text beside it.  c: the CLI row flag. */
#define TERM(o, k, f, u, l, d, c)                                                               \
    {                                                                                           \
        .obj = o, .key = k, .klen = sizeof k - 1, .shape = TS_TERM_OBJECT, .fmt = f, .unit = u, \
        .label = l, .doc = d, .cli = c                                                          \
    }
#define NUM(o, k, f, u, l, d, fo, c)                                                         \
    {                                                                                        \
        .obj = o, .key = k, .klen = sizeof k - 1, .shape = TS_TERM_MAP, .fmt = f, .unit = u, \
        .label = l, .doc = d, .formula = fo, .cli = c                                        \
    }
#define SIB(o, k, hk, f, u, l, d, fo)                                                        \
    {                                                                                        \
        .obj = o, .key = k, .klen = sizeof k - 1, .shape = TS_TERM_SIBLING, .human_key = hk, \
        .hklen = sizeof hk - 1, .fmt = f, .unit = u, .label = l, .doc = d, .formula = fo     \
    }

#define ROW     TS_TERM_CLI_ROW
#define NONZERO TS_TERM_CLI_NONZERO
#define NO      TS_TERM_CLI_NO

const ts_term_def ts_terms[TS_T_COUNT] = {
    /* params (core/ts_model.c) */
    [TS_T_PARAMS_TOTAL] = NUM(TS_TO_PARAMS, "total", TS_FMT_COUNT, "", "Parameters",
                              "Every parameter of the model, each expert counted.",
                              "counted from the shape (params.formula), or params as given", NO),
    [TS_T_PARAMS_ACTIVE] =
        NUM(TS_TO_PARAMS, "active", TS_FMT_COUNT, "", "Active parameters",
            "Parameters one token passes through: MoE counts top_k of the routed experts.",
            "total - (experts - top_k) * expert parameters", NO),

    /* memory, bytes per GPU at the worst stage's peak (core/ts_memory.c) */
    [TS_T_MEM_WEIGHTS] = TERM(TS_TO_MEMORY, "weights", TS_FMT_BYTES, "B", "Weights",
                              "Model weights held by one GPU.", ROW),
    [TS_T_MEM_GRADS] = TERM(TS_TO_MEMORY, "grads", TS_FMT_BYTES, "B", "Gradients",
                            "Gradient buffers held by one GPU.", ROW),
    [TS_T_MEM_MASTER] = TERM(TS_TO_MEMORY, "master", TS_FMT_BYTES, "B", "Master weights",
                             "The fp32 master copy of the trained weights (mixed precision).", ROW),
    [TS_T_MEM_OPTIMIZER] = TERM(TS_TO_MEMORY, "optimizer", TS_FMT_BYTES, "B", "Optimizer states",
                                "Optimizer moments (AdamW: m and v).", ROW),
    [TS_T_MEM_ACTIVATIONS] =
        TERM(TS_TO_MEMORY, "activations", TS_FMT_BYTES, "B", "Activations",
             "Activations saved for the backward pass at the peak phase.", ROW),
    [TS_T_MEM_BUFFERS] = TERM(
        TS_TO_MEMORY, "buffers", TS_FMT_BYTES, "B", "Working buffers",
        "Transient working set at the peak phase: logits and loss, recompute, framework buckets.",
        ROW),
    [TS_T_MEM_OVERHEAD] =
        TERM(TS_TO_MEMORY, "overhead", TS_FMT_BYTES, "B", "Overhead",
             "Allocator reserve beyond the allocated peak, plus the runtime context.", ROW),
    [TS_T_MEM_TOTAL] =
        TERM(TS_TO_MEMORY, "total", TS_FMT_BYTES, "B", "Total per GPU",
             "What one GPU of the worst pipeline stage needs; compared with its HBM.", ROW),
    [TS_T_MEM_HBM_BYTES] =
        NUM(TS_TO_MEMORY, "hbm_bytes", TS_FMT_BYTES, "B", "GPU HBM",
            "HBM of one GPU as the driver reports it (H100 SXM: 81559 MiB = 79.6 GiB).",
            "the catalogue's HBM, or hbm_gb * 1e9, or hbm_gib * 2^30", ROW),
    [TS_T_MEM_HEADROOM_BYTES] =
        NUM(TS_TO_MEMORY, "headroom_bytes", TS_FMT_BYTES, "B", "Headroom",
            "HBM left free on the worst stage's GPUs; negative: short by that much.",
            "hbm_bytes - total", ROW),
    [TS_T_MEM_HOST_BYTES_PER_GPU] =
        NUM(TS_TO_MEMORY, "host_bytes_per_gpu", TS_FMT_BYTES, "B", "Host RAM per GPU (offload)",
            "Host memory one GPU's offloaded states take (ZeRO-Offload / ZeRO-Infinity).",
            "offload_optimizer: (master + optimizer + 4 f) bytes/param; offload_params: + weights "
            "bytes/param; times the GPU's parameter share",
            NONZERO),
    [TS_T_MEM_HOST_BYTES_PER_NODE] =
        NUM(TS_TO_MEMORY, "host_bytes_per_node", TS_FMT_BYTES, "B", "Host RAM per node (offload)",
            "Host memory the offloaded states of one node's GPUs take.",
            "host_bytes_per_gpu * min(gpus, gpus_per_node)", NONZERO),
    [TS_T_MEM_ALLOCATED_PEAK] =
        TERM(TS_TO_MEMORY, "allocated_peak", TS_FMT_BYTES, "B", "Allocated peak",
             "Tensors allocated at the peak phase (torch.cuda.max_memory_allocated).", NO),
    [TS_T_MEM_RESERVED_PEAK] =
        TERM(TS_TO_MEMORY, "reserved_peak", TS_FMT_BYTES, "B", "Reserved peak",
             "What the caching allocator holds at the peak (torch.cuda.max_memory_reserved).", NO),
    [TS_T_MEM_RUNTIME] = TERM(
        TS_TO_MEMORY, "runtime", TS_FMT_BYTES, "B", "Runtime context (in overhead)",
        "CUDA context, cuBLAS workspaces and NCCL buffers outside the allocator; part of overhead.",
        NO),
    [TS_T_MEM_PARAMS_PER_GPU] =
        NUM(TS_TO_MEMORY, "params_per_gpu", TS_FMT_COUNT, "", "Parameters per GPU (before ZeRO)",
            "Parameters of the heaviest pipeline stage on one GPU, before ZeRO shards them.",
            "P_dense / (tp * pp) + P_expert / (tp * pp * ep), the heaviest stage", NO),
    [TS_T_MEM_MODEL_STATE_BYTES] =
        NUM(TS_TO_MEMORY, "model_state_bytes", TS_FMT_BYTES, "B", "Model state, whole model",
            "Weights, gradients, master and optimizer states of the whole model, every replica "
            "counted once.",
            "P * bytes_per_param.total", NO),
    [TS_T_MEM_INFERENCE_BYTES] =
        NUM(TS_TO_MEMORY, "inference_bytes", TS_FMT_BYTES, "B", "Weights for inference",
            "The whole model's weights at the training precision, no optimizer.",
            "P * bytes(precision)", NO),
    [TS_T_MEM_ACTIVATIONS_SEED000] =
        TERM(TS_TO_MEMORY, "activations_seed000", TS_FMT_BYTES, "B",
             "Activations, simple form (seed 000)",
             "The simple whole-model activation form, for comparison only: not in the total.", NO),
    [TS_T_MEM_DEEPSPEED_GPU] = TERM(
        TS_TO_MEMORY, "deepspeed_gpu", TS_FMT_BYTES, "B", "DeepSpeed cross-check",
        "DeepSpeed's own estimator for ZeRO 2 and 3 (0 for other stages), for comparison.", NO),

    /* memory.bytes_per_param: before any sharding (core/ts_memory.c) */
    [TS_T_BPP_TOTAL] = NUM(TS_TO_BPP, "total", TS_FMT_PLAIN, "B", "Bytes per parameter (unsharded)",
                           "Model state per parameter before ZeRO shards it: mixed-precision AdamW "
                           "is 2 + 2 + 4 + 8 = 16.",
                           "weights + grads + master + optimizer", NO),
    [TS_T_BPP_WEIGHTS] =
        NUM(TS_TO_BPP, "weights", TS_FMT_PLAIN, "B", "Weights",
            "Bytes per parameter of the weights (LoRA: the frozen base's precision).",
            "bytes(precision); LoRA: bytes(frozen_precision) on the frozen matrices", NO),
    [TS_T_BPP_GRADS] = NUM(TS_TO_BPP, "grads", TS_FMT_PLAIN, "B", "Gradients",
                           "Bytes per parameter of the gradients, per trained parameter share.",
                           "bytes(grad_precision) * trainable fraction", NO),
    [TS_T_BPP_MASTER] = NUM(TS_TO_BPP, "master", TS_FMT_PLAIN, "B", "Master weights",
                            "Bytes per parameter of the fp32 master copy.",
                            "4 * trainable fraction with master_weights, else 0", NO),
    [TS_T_BPP_OPTIMIZER] =
        NUM(TS_TO_BPP, "optimizer", TS_FMT_PLAIN, "B", "Optimizer states",
            "Bytes per parameter of the optimizer states (AdamW: 8).",
            "the optimizer's states * bytes(optimizer_precision) * trainable fraction", NO),

    /* every pipeline stage (core/ts_mem_stage.c ts_mem_stage_eval) */
    [TS_T_STAGE_WEIGHTS] =
        NUM(TS_TO_STAGE, "weights", TS_FMT_BYTES, "B", "Weights", "This stage's weights per GPU.",
            "as memory.weights, for this stage's layers", NO),
    [TS_T_STAGE_GRADS] = NUM(TS_TO_STAGE, "grads", TS_FMT_BYTES, "B", "Gradients",
                             "This stage's gradient buffers per GPU.",
                             "as memory.grads, for this stage's layers", NO),
    [TS_T_STAGE_MASTER] = NUM(TS_TO_STAGE, "master", TS_FMT_BYTES, "B", "Master weights",
                              "This stage's fp32 master weights per GPU.",
                              "as memory.master, for this stage's layers", NO),
    [TS_T_STAGE_OPTIMIZER] = NUM(TS_TO_STAGE, "optimizer", TS_FMT_BYTES, "B", "Optimizer states",
                                 "This stage's optimizer moments per GPU.",
                                 "as memory.optimizer, for this stage's layers", NO),
    [TS_T_STAGE_ACTIVATIONS] =
        NUM(TS_TO_STAGE, "activations", TS_FMT_BYTES, "B", "Activations",
            "This stage's saved activations (its micro-batches in flight).",
            "in_flight * layers * per-layer activations (+ embedding, logits at the ends)", NO),
    [TS_T_STAGE_BUFFERS] = NUM(TS_TO_STAGE, "buffers", TS_FMT_BYTES, "B", "Working buffers",
                               "This stage's working set at its peak phase.",
                               "as memory.buffers, at this stage's peak phase", NO),
    [TS_T_STAGE_OVERHEAD] = NUM(TS_TO_STAGE, "overhead", TS_FMT_BYTES, "B", "Overhead",
                                "This stage's allocator reserve plus runtime context.",
                                "(reserved_peak - allocated_peak) + overhead_gib * 2^30", NO),
    [TS_T_STAGE_ALLOCATED_PEAK] =
        NUM(TS_TO_STAGE, "allocated_peak", TS_FMT_BYTES, "B", "Allocated peak",
            "Tensors allocated at this stage's peak phase.",
            "max over phases of the tensors allocated", NO),
    [TS_T_STAGE_RESERVED_PEAK] =
        NUM(TS_TO_STAGE, "reserved_peak", TS_FMT_BYTES, "B", "Reserved peak",
            "What the caching allocator holds at this stage's peak.",
            "allocated_peak + cached blocks + fragmentation * allocated_peak", NO),
    [TS_T_STAGE_TOTAL] =
        SIB(TS_TO_STAGE, "total", "total_human", TS_FMT_BYTES, "B", "Total",
            "What one GPU of this stage needs.", "reserved_peak + runtime context"),
    [TS_T_STAGE_HEADROOM] = NUM(TS_TO_STAGE, "headroom", TS_FMT_BYTES, "B", "Headroom",
                                "HBM left on this stage's GPUs; negative: short by that much.",
                                "hbm_bytes - total", NO),

    /* memory.phases[] */
    [TS_T_PHASE_BYTES] =
        SIB(TS_TO_PHASE, "bytes", "human", TS_FMT_BYTES, "B", "Allocated",
            "Bytes allocated on the worst stage at this phase of the step.",
            "weights + grads + master + optimizer + saved activations + the phase's working set"),

    /* compute (core/ts_compute.c, core/ts_step.c) */
    [TS_T_CMP_MODEL_FLOPS] = TERM(TS_TO_COMPUTE, "model_flops", TS_FMT_FLOPS, "FLOP", "Model FLOPs",
                                  "FLOPs the model needs for the run, the MFU basis.", ROW),
    [TS_T_CMP_MODEL_FLOPS_ATTN] = TERM(
        TS_TO_COMPUTE, "model_flops_attn", TS_FMT_FLOPS, "FLOP", "Model FLOPs, attention-aware",
        "Model FLOPs with the attention score and value matmuls added (PaLM).", NO),
    [TS_T_CMP_HARDWARE_FLOPS] = TERM(
        TS_TO_COMPUTE, "hardware_flops", TS_FMT_FLOPS, "FLOP", "Hardware FLOPs (with recompute)",
        "FLOPs the GPUs execute, recomputed forward passes included.", ROW),
    [TS_T_CMP_GPU_HOURS] = TERM(TS_TO_COMPUTE, "gpu_hours", TS_FMT_COUNT, "GPU-hours", "GPU-hours",
                                "GPU time for the run at the MFU used.", ROW),
    [TS_T_CMP_GPU_YEARS] =
        NUM(TS_TO_COMPUTE, "gpu_years", TS_FMT_COUNT, "GPU-years", "GPU-years",
            "The same GPU time in years of one GPU.", "gpu_hours / (24 * 365.25)", NO),
    [TS_T_CMP_WALL_SECONDS] =
        TERM(TS_TO_COMPUTE, "wall_seconds", TS_FMT_SECONDS, "s", "Wall-clock",
             "Elapsed time with every GPU busy, checkpoints and failures not counted.", ROW),
    [TS_T_CMP_MFU] = NUM(
        TS_TO_COMPUTE, "mfu", TS_FMT_FRACTION, "", "MFU",
        "Model FLOPs utilisation the time estimate uses: the mfu input, else the predicted one.",
        "mfu, or predicted_mfu when mfu is not given", ROW),
    [TS_T_CMP_HFU] = NUM(TS_TO_COMPUTE, "hfu", TS_FMT_FRACTION, "", "HFU",
                         "Hardware FLOPs utilisation: MFU with recomputed forward passes counted.",
                         "mfu * hardware_flops / model_flops", NO),
    [TS_T_CMP_PREDICTED_MFU] =
        NUM(TS_TO_COMPUTE, "predicted_mfu", TS_FMT_FRACTION, "", "Predicted MFU",
            "MFU the step-time model predicts (model FLOPs, no recompute counted).",
            "model FLOPs per step / (step_time * gpus * peak)", NO),
    [TS_T_CMP_STEP_TIME] =
        TERM(TS_TO_COMPUTE, "step_time", TS_FMT_SECONDS, "s", "Predicted step time",
             "Seconds per optimizer step from the step-time model.", ROW),
    [TS_T_CMP_STEPS] = NUM(TS_TO_COMPUTE, "steps", TS_FMT_COUNT, "", "Steps",
                           "Optimizer steps in the run.", "tokens / (global_batch * seq)", ROW),
    [TS_T_CMP_STEP_SECONDS] =
        NUM(TS_TO_COMPUTE, "step_seconds", TS_FMT_SECONDS, "s", "Step time at the MFU",
            "Seconds per step implied by the MFU used.", "wall_seconds / steps", NO),
    [TS_T_CMP_TOKENS] =
        NUM(TS_TO_COMPUTE, "tokens", TS_FMT_COUNT, "", "Training tokens",
            "Tokens the run trains on (fine-tuning: dataset tokens times epochs).",
            "tokens, else the preset's published count, else 20 * P (Chinchilla)", NO),
    [TS_T_CMP_TOKENS_PER_SECOND] =
        NUM(TS_TO_COMPUTE, "tokens_per_second", TS_FMT_COUNT, "tokens/s", "Tokens per second (job)",
            "Steady-state throughput of the whole job.", "tokens / wall_seconds", ROW),
    [TS_T_CMP_TOKENS_PER_GPU_SECOND] =
        NUM(TS_TO_COMPUTE, "tokens_per_gpu_second", TS_FMT_COUNT, "tokens/s",
            "Tokens per GPU-second", "Throughput of one GPU.", "tokens_per_second / gpus", NO),
    [TS_T_CMP_PEAK_FLOPS] =
        NUM(TS_TO_COMPUTE, "peak_flops", TS_FMT_SI, "FLOP/s", "Peak per GPU",
            "Dense peak of one GPU at the compute precision (not the 2:4-sparse figure).",
            "the catalogue's dense peak for compute_precision, or peak_tflops * 1e12", NO),
    [TS_T_CMP_ACHIEVED_FLOPS_PER_GPU] =
        NUM(TS_TO_COMPUTE, "achieved_flops_per_gpu", TS_FMT_SI, "FLOP/s", "Achieved per GPU",
            "Model FLOP rate one GPU sustains at the MFU used.", "peak_flops * mfu", NO),
    [TS_T_CMP_COST_USD] = TERM(TS_TO_COMPUTE, "cost_usd", TS_FMT_COUNT, "USD", "Cost",
                               "GPU time priced at gpu_hour_usd (0 without a price).", NONZERO),

    /* compute.step: seconds per optimizer step (core/ts_step.c) */
    [TS_T_STEP_COMPUTE] =
        NUM(TS_TO_STEP, "compute", TS_FMT_SECONDS, "s", "Compute",
            "Forward and backward matmuls, attention and elementwise kernels.",
            "roofline per kernel at the GPU's matmul rate and HBM bandwidth", ROW),
    [TS_T_STEP_RECOMPUTE] = NUM(TS_TO_STEP, "recompute", TS_FMT_SECONDS, "s", "Recompute",
                                "Forward work done again under selective or full recompute.",
                                "the recomputed forward kernels, same roofline", ROW),
    [TS_T_STEP_TP_COMM] =
        NUM(TS_TO_STEP, "tp_comm", TS_FMT_SECONDS, "s", "TP communication",
            "Tensor-parallel collectives not hidden behind compute.",
            "all-reduce (or reduce-scatter + all-gather with SP) per layer over NVLink", NO),
    [TS_T_STEP_PP_BUBBLE] = NUM(TS_TO_STEP, "pp_bubble", TS_FMT_SECONDS, "s", "Pipeline bubble",
                                "Idle pipeline time, with the exposed point-to-point sends.",
                                "(p - 1) / v * t_microbatch + exposed p2p", ROW),
    [TS_T_STEP_PP_P2P] =
        NUM(TS_TO_STEP, "pp_p2p", TS_FMT_SECONDS, "s", "of the bubble: point-to-point",
            "The pipeline sends between stages, part of the bubble.",
            "activation bytes per micro-batch / link bandwidth", NO),
    [TS_T_STEP_DP_COMM] =
        NUM(TS_TO_STEP, "dp_comm", TS_FMT_SECONDS, "s", "DP / FSDP communication",
            "Data-parallel, ZeRO and FSDP collectives not hidden behind compute.",
            "gradient reduce-scatter / all-reduce and weight all-gather, minus the overlap", NO),
    [TS_T_STEP_CP_COMM] = NUM(TS_TO_STEP, "cp_comm", TS_FMT_SECONDS, "s", "CP communication",
                              "Context-parallel ring exchange not hidden behind compute.",
                              "K/V ring passes per layer, minus the overlap", NO),
    [TS_T_STEP_EP_COMM] =
        NUM(TS_TO_STEP, "ep_comm", TS_FMT_SECONDS, "s", "EP all-to-all",
            "Expert-parallel token dispatch and combine not hidden behind compute.",
            "two all-to-alls per MoE layer forward, two backward", NO),
    [TS_T_STEP_OPTIMIZER] = NUM(TS_TO_STEP, "optimizer", TS_FMT_SECONDS, "s", "Optimizer step",
                                "The optimizer update, bound by HBM bandwidth.",
                                "optimizer bytes read and written / HBM bandwidth", ROW),
    [TS_T_STEP_OFFLOAD] =
        NUM(TS_TO_STEP, "offload", TS_FMT_SECONDS, "s", "Offload",
            "Host transfers and the CPU optimizer when offloading.",
            "offloaded bytes / host link bandwidth + CPU optimizer time", NONZERO),
    [TS_T_STEP_EXPOSED_COMM] = NUM(
        TS_TO_STEP, "exposed_comm", TS_FMT_SECONDS, "s", "Exposed communication (sum)",
        "Communication not hidden behind compute.", "tp_comm + dp_comm + cp_comm + ep_comm", ROW),
    [TS_T_STEP_OVERLAPPED_COMM] =
        NUM(TS_TO_STEP, "overlapped_comm", TS_FMT_SECONDS, "s", "Overlapped communication",
            "Communication hidden behind compute: not in the step time.",
            "communication time - exposed_comm", NO),
    [TS_T_STEP_GEMM_EFFICIENCY] =
        NUM(TS_TO_STEP, "gemm_efficiency", TS_FMT_FRACTION, "", "Matmul efficiency",
            "FLOP-weighted fraction of the dense peak the matmuls reach.",
            "model FLOPs / (peak * matmul seconds)", NO),
    [TS_T_STEP_UNDERFILL] = NUM(
        TS_TO_STEP, "underfill", TS_FMT_SECONDS, "s", "Matmul shortfall",
        "Matmul time beyond what the GPU's matmul rate would take: GEMMs too small to fill the "
        "GPU.",
        "m * sum over the slowest stage's GEMMs of (roofline time - FLOPs / (peak * core))", NO),

    /* checkpoint (core/ts_ckpt.c) */
    [TS_T_CK_FULL_BYTES] =
        TERM(TS_TO_CHECKPOINT, "full_bytes", TS_FMT_BYTES, "B", "Full (resumable) checkpoint",
             "Everything needed to resume bit-exactly.", ROW),
    [TS_T_CK_WEIGHTS_BYTES] =
        TERM(TS_TO_CHECKPOINT, "weights_bytes", TS_FMT_BYTES, "B", "Weights only",
             "The weights alone, at the training precision.", ROW),
    [TS_T_CK_SHARD_BYTES_PER_GPU] =
        TERM(TS_TO_CHECKPOINT, "shard_bytes_per_gpu", TS_FMT_BYTES, "B", "Largest per-GPU shard",
             "The most one writer writes.", ROW),
    [TS_T_CK_WRITERS] = NUM(TS_TO_CHECKPOINT, "writers", TS_FMT_INTEGER, "", "Writers",
                            "GPUs that write a shard: every rank, except under ZeRO 0 without "
                            "parallel_save, where DP rank 0 of each model-parallel group writes.",
                            "gpus; ZeRO 0 without parallel_save: tp * pp * ep", NO),
    [TS_T_CK_BYTES_PER_NODE] = NUM(
        TS_TO_CHECKPOINT, "bytes_per_node", TS_FMT_BYTES, "B", "Written per node",
        "Bytes the busiest node writes per checkpoint.", "min(writers, gpus_per_node) * shard", NO),
    [TS_T_CK_JOB_MTBF_S] = NUM(TS_TO_CHECKPOINT, "job_mtbf_s", TS_FMT_SECONDS, "s", "Job MTBF",
                               "Mean time between failures of the whole job: any one GPU stops it.",
                               "job_mtbf_hours * 3600, or gpu_mtbf_hours * 3600 / gpus", ROW),
    [TS_T_CK_BLOCKING_WRITE_S] = NUM(
        TS_TO_CHECKPOINT, "blocking_write_s", TS_FMT_SECONDS, "s", "Blocking write C (first tier)",
        "Training pauses for the NVMe write; later tiers drain from NVMe asynchronously.",
        "C = the nvme tier's write_s", NO),
    [TS_T_CK_YOUNG_INTERVAL_S] =
        TERM(TS_TO_CHECKPOINT, "young_interval_s", TS_FMT_SECONDS, "s", "Young interval",
             "Young's first-order optimal checkpoint interval.", ROW),
    [TS_T_CK_DALY_INTERVAL_S] =
        TERM(TS_TO_CHECKPOINT, "daly_interval_s", TS_FMT_SECONDS, "s", "Daly interval",
             "Daly's higher-order optimal checkpoint interval.", ROW),
    [TS_T_CK_WASTE_FRACTION] = TERM(TS_TO_CHECKPOINT, "waste_fraction", TS_FMT_FRACTION, "",
                                    "Time lost at the Daly interval",
                                    "Share of the run lost to checkpoint writes, restarts and "
                                    "recomputed work at the Daly interval.",
                                    ROW),
    [TS_T_CK_WASTE_FRACTION_SCHEDULE] =
        NUM(TS_TO_CHECKPOINT, "waste_fraction_schedule", TS_FMT_FRACTION, "",
            "Time lost at the NVMe schedule", "The same share at the configured NVMe interval.",
            "1 - tau / (M e^(R/M) (e^((tau+C)/M) - 1)) at tau = nvme_interval_min * 60 (Daly 2006)",
            NO),

    /* checkpoint.tiers[] */
    [TS_T_TIER_INTERVAL_S] =
        NUM(TS_TO_TIER, "interval_s", TS_FMT_SECONDS, "s", "Interval",
            "Time between checkpoints on this tier.", "<tier>_interval_min * 60", NO),
    [TS_T_TIER_WRITE_S] =
        NUM(TS_TO_TIER, "write_s", TS_FMT_SECONDS, "s", "Write",
            "Time to write one checkpoint to this tier.", "shard / bandwidth_per_writer", NO),
    [TS_T_TIER_RESTORE_S] =
        NUM(TS_TO_TIER, "restore_s", TS_FMT_SECONDS, "s", "Restore",
            "Time to read one back, at the same bandwidth.", "shard / bandwidth_per_writer", NO),
    [TS_T_TIER_BANDWIDTH_PER_WRITER] =
        NUM(TS_TO_TIER, "bandwidth_per_writer", TS_FMT_SI, "B/s", "Per writer",
            "Write bandwidth one writer gets on this tier.",
            "min(writer_gbps, tier aggregate / writers) * 1e9", NO),
    [TS_T_TIER_KEEP] = NUM(TS_TO_TIER, "keep", TS_FMT_INTEGER, "", "Kept",
                           "Checkpoints retained on this tier.", "<tier>_keep", NO),
    [TS_T_TIER_STORAGE_BYTES] =
        NUM(TS_TO_TIER, "storage_bytes", TS_FMT_BYTES, "B", "Storage",
            "Space the kept checkpoints take (nvme: per node).", "keep * full (nvme: / nodes)", NO),
    [TS_T_TIER_OVERHEAD_FRACTION] =
        NUM(TS_TO_TIER, "overhead_fraction", TS_FMT_FRACTION, "", "Time cost",
            "Share of the time this tier's writes would take if they blocked.",
            "write_s / interval_s", NO),

    /* POST /v1/search results[] (core/ts_search.c) */
    [TS_T_SR_STEP_TIME] = SIB(TS_TO_SEARCH, "step_time", "step_time_human", TS_FMT_SECONDS, "s",
                              "Step time", "Predicted seconds per optimizer step of this layout.",
                              "the step-time model (compute.step_time) for this layout"),
    [TS_T_SR_PREDICTED_MFU] = NUM(TS_TO_SEARCH, "predicted_mfu", TS_FMT_FRACTION, "", "MFU",
                                  "Predicted MFU of this layout.",
                                  "model FLOPs per step / (step_time * gpus * peak)", NO),
    [TS_T_SR_TOKENS_PER_GPU_SECOND] = NUM(
        TS_TO_SEARCH, "tokens_per_gpu_second", TS_FMT_COUNT, "tokens/s", "Tokens per GPU-second",
        "Throughput of one GPU in this layout.", "global_batch * seq / (step_time * gpus)", NO),
    [TS_T_SR_GPU_SECONDS_PER_STEP] = NUM(
        TS_TO_SEARCH, "gpu_seconds_per_step", TS_FMT_SECONDS, "s", "GPU time per step",
        "GPU-seconds one step costs: the cost objective without a price.", "step_time * gpus", NO),
    [TS_T_SR_COST_USD_PER_STEP] =
        NUM(TS_TO_SEARCH, "cost_usd_per_step", TS_FMT_COUNT, "USD", "Cost per step",
            "One step priced at gpu_hour_usd (0 without a price).",
            "gpu_seconds_per_step / 3600 * gpu_hour_usd", NO),
    [TS_T_SR_WALL_SECONDS] =
        NUM(TS_TO_SEARCH, "wall_seconds", TS_FMT_SECONDS, "s", "Run time",
            "Wall-clock time of the whole run (tokens) in this layout; wall_days beside it.",
            "tokens / (global_batch * seq) * step_time", NO),
    [TS_T_SR_GPU_HOURS] =
        NUM(TS_TO_SEARCH, "gpu_hours", TS_FMT_COUNT, "GPU-hours", "GPU-hours",
            "GPU time of the whole run in this layout.", "wall_seconds * gpus / 3600", NO),
    [TS_T_SR_COST_USD] = NUM(TS_TO_SEARCH, "cost_usd", TS_FMT_COUNT, "USD", "Cost",
                             "The whole run priced at gpu_hour_usd (0 without a price).",
                             "gpu_hours * gpu_hour_usd", NO),
    [TS_T_SR_USEFUL_FRACTION] =
        NUM(TS_TO_SEARCH, "useful_fraction", TS_FMT_FRACTION, "", "Useful training time",
            "Fraction of the wall clock with failures spent on training that is kept "
            "(compute.goodput).",
            "tau / (M e^(R/M) (e^((tau+C)/M) - 1)) for this layout's checkpoint write C", NO),
    [TS_T_SR_GOODPUT_WALL_SECONDS] = NUM(
        TS_TO_SEARCH, "goodput_wall_seconds", TS_FMT_SECONDS, "s", "Run time with failures",
        "Expected wall clock of the whole run with checkpoint writes, failures and restarts: what "
        "max_days holds (goodput_wall_days beside it).",
        "wall_seconds / useful_fraction", NO),
    [TS_T_SR_GOODPUT_COST_USD] =
        NUM(TS_TO_SEARCH, "goodput_cost_usd", TS_FMT_COUNT, "USD", "Cost with failures",
            "The GPU time held with failures priced at gpu_hour_usd (0 without a price): what "
            "max_cost holds.",
            "goodput_wall_seconds * gpus / 3600 * gpu_hour_usd", NO),
    [TS_T_SR_MEMORY_TOTAL] =
        SIB(TS_TO_SEARCH, "memory_total", "memory_total_human", TS_FMT_BYTES, "B", "Memory per GPU",
            "Total per GPU of this layout's worst stage.", "memory.total for this layout"),
    [TS_T_SR_HEADROOM_BYTES] =
        NUM(TS_TO_SEARCH, "headroom_bytes", TS_FMT_BYTES, "B", "Headroom",
            "HBM left on this layout's worst stage.", "hbm_bytes - memory_total", NO),

    /* GET /v1/presets */
    [TS_T_PRESET_PARAMS] =
        NUM(TS_TO_PRESET, "params", TS_FMT_COUNT, "", "Parameters",
            "Parameters counted from the preset's shape.", "core/ts_model.c from the shape", NO),
    [TS_T_PRESET_ACTIVE_PARAMS] = NUM(TS_TO_PRESET, "active_params", TS_FMT_COUNT, "",
                                      "Active parameters", "Parameters one token passes through.",
                                      "total - (experts - top_k) * expert parameters", NO),
    [TS_T_PRESET_PUBLISHED_PARAMS] =
        NUM(TS_TO_PRESET, "published_params", TS_FMT_COUNT, "", "Published parameters",
            "The count the model's authors publish (0: none).", "as published", NO),
    [TS_T_PRESET_TRAIN_TOKENS] =
        NUM(TS_TO_PRESET, "train_tokens", TS_FMT_COUNT, "", "Training tokens",
            "Tokens the model was trained on, as published (0: unpublished).", "as published", NO),

    /* GET /v1/gpus */
    [TS_T_GPU_HBM_BYTES] =
        NUM(TS_TO_GPU, "hbm_bytes", TS_FMT_BYTES, "B", "HBM",
            "Memory of one GPU as the driver reports it (H100 SXM: 81559 MiB = 79.6 GiB).",
            "the datasheet, in the driver's units", NO),
    [TS_T_GPU_HBM_BW] = NUM(TS_TO_GPU, "hbm_bw", TS_FMT_SI, "B/s", "HBM bandwidth",
                            "Memory bandwidth of one GPU.", "the datasheet", NO),
    [TS_T_GPU_BF16_TFLOPS] = NUM(TS_TO_GPU, "bf16_tflops", TS_FMT_INTEGER, "TFLOP/s", "BF16 peak",
                                 "Dense BF16 peak of one GPU.", "the datasheet", NO),
    [TS_T_GPU_FP8_TFLOPS] = NUM(TS_TO_GPU, "fp8_tflops", TS_FMT_INTEGER, "TFLOP/s", "FP8 peak",
                                "Dense FP8 peak of one GPU (0: no FP8).", "the datasheet", NO),
    [TS_T_GPU_FP32_TFLOPS] =
        NUM(TS_TO_GPU, "fp32_tflops", TS_FMT_INTEGER, "TFLOP/s", "FP32 peak",
            "Dense FP32 (TF32 tensor core) peak of one GPU.", "the datasheet", NO),
    [TS_T_GPU_BOARD_WATTS] =
        NUM(TS_TO_GPU, "board_watts", TS_FMT_SI, "W", "Board power",
            "Maximum board power of one GPU (TDP), what the energy estimate charges per GPU-hour.",
            "the datasheet (power_source)", NO),

    /* compute.goodput: the run with checkpoints and failures (core/ts_goodput.c) */
    [TS_T_GP_WALL_SECONDS] = TERM(
        TS_TO_GOODPUT, "wall_seconds", TS_FMT_SECONDS, "s", "Wall-clock with failures",
        "Expected elapsed time with checkpoint writes, failures, restarts and redone work.", ROW),
    [TS_T_GP_USEFUL_FRACTION] =
        TERM(TS_TO_GOODPUT, "useful_fraction", TS_FMT_FRACTION, "", "Useful training time",
             "Fraction of the wall clock spent on training that is kept (goodput).", ROW),
    [TS_T_GP_INTERRUPTIONS] =
        NUM(TS_TO_GOODPUT, "interruptions", TS_FMT_COUNT, "", "Expected failures",
            "Failures expected over the run.", "wall_seconds / job_mtbf_s", ROW),
    [TS_T_GP_CHECKPOINT_S] =
        NUM(TS_TO_GOODPUT, "checkpoint_s", TS_FMT_SECONDS, "s", "Checkpoint write stalls",
            "Time the job waits on blocking checkpoint writes.",
            "failure_free_s / interval_s * write_s", NO),
    [TS_T_GP_LOST_S] = NUM(TS_TO_GOODPUT, "lost_s", TS_FMT_SECONDS, "s", "Lost to failures",
                           "Restarts and the work redone after failures.",
                           "wall_seconds - failure_free_s - checkpoint_s", NO),
    [TS_T_GP_LOST_PER_INTERRUPTION_S] =
        NUM(TS_TO_GOODPUT, "lost_per_interruption_s", TS_FMT_SECONDS, "s", "Lost per failure",
            "Time one failure costs: the restart and the work since the last checkpoint.",
            "lost_s / interruptions (~ restart_s + (interval_s + write_s) / 2)", NO),
    [TS_T_GP_GPU_HOURS] =
        NUM(TS_TO_GOODPUT, "gpu_hours", TS_FMT_COUNT, "GPU-hours", "GPU-hours held",
            "GPU time the job holds its GPUs for, failures included.", "wall_seconds * gpus / 3600",
            NO),
    [TS_T_GP_COST_USD] = NUM(TS_TO_GOODPUT, "cost_usd", TS_FMT_COUNT, "USD", "Cost with failures",
                             "The GPU time held priced at gpu_hour_usd (0 without a price).",
                             "gpu_hours * gpu_hour_usd", NONZERO),
    [TS_T_GP_JOB_MTBF_S] = NUM(TS_TO_GOODPUT, "job_mtbf_s", TS_FMT_SECONDS, "s", "Job MTBF",
                               "Mean time between failures of the whole job.",
                               "job_mtbf_hours * 3600, or gpu_mtbf_hours * 3600 / gpus", NO),
    [TS_T_GP_INTERVAL_S] =
        NUM(TS_TO_GOODPUT, "interval_s", TS_FMT_SECONDS, "s", "Checkpoint interval",
            "Training time between checkpoints: the node-local schedule.", "nvme_interval_min * 60",
            NO),
    [TS_T_GP_WRITE_S] = NUM(TS_TO_GOODPUT, "write_s", TS_FMT_SECONDS, "s", "Blocking write",
                            "Time one checkpoint stops training (the node-local write).",
                            "checkpoint.blocking_write_s", NO),
    [TS_T_GP_RELAUNCH_S] =
        NUM(TS_TO_GOODPUT, "relaunch_s", TS_FMT_SECONDS, "s", "Relaunch",
            "From a failure to a running job again, before the checkpoint is read.",
            "relaunch_min * 60", NO),
    [TS_T_GP_RESTORE_S] = NUM(TS_TO_GOODPUT, "restore_s", TS_FMT_SECONDS, "s", "Restore",
                              "Reading the last checkpoint back from the shared file system.",
                              "checkpoint.tiers[shared].restore_s", NO),
    [TS_T_GP_RESTART_S] =
        NUM(TS_TO_GOODPUT, "restart_s", TS_FMT_SECONDS, "s", "Restart",
            "Time from a failure until training resumes.", "relaunch_s + restore_s", NO),
    [TS_T_GP_FAILURE_FREE_S] =
        NUM(TS_TO_GOODPUT, "failure_free_s", TS_FMT_SECONDS, "s", "Wall-clock without failures",
            "The failure-free time the estimate starts from.", "compute.wall_seconds", NO),
    [TS_T_GP_DALY_INTERVAL_S] =
        NUM(TS_TO_GOODPUT, "daly_interval_s", TS_FMT_SECONDS, "s", "Optimal interval (Daly)",
            "The checkpoint interval that loses least for this write time and MTBF.",
            "checkpoint.daly_interval_s", NO),
    [TS_T_GP_USEFUL_FRACTION_DALY] =
        NUM(TS_TO_GOODPUT, "useful_fraction_daly", TS_FMT_FRACTION, "",
            "Useful time at the optimal interval",
            "The useful fraction with checkpoints every daly_interval_s.",
            "daly_interval_s / (M e^(R/M) (e^((daly_interval_s + C)/M) - 1))", NO),

    /* compute.energy (core/ts_energy.c) */
    [TS_T_EN_ENERGY_WH] = TERM(TS_TO_ENERGY, "energy_wh", TS_FMT_SI, "Wh", "Energy",
                               "Electricity the run takes at the meter.", ROW),
    [TS_T_EN_CO2E_T] =
        TERM(TS_TO_ENERGY, "co2e_t", TS_FMT_COUNT, "t CO2e", "Emissions",
             "Greenhouse gas emissions of that electricity, tonnes CO2-equivalent.", ROW),
    [TS_T_EN_GPU_HOURS] =
        NUM(TS_TO_ENERGY, "gpu_hours", TS_FMT_COUNT, "GPU-hours", "GPU-hours powered",
            "GPU time the energy is charged for: the time held, failures included.",
            "compute.goodput.gpu_hours", NO),
    [TS_T_EN_GPU_WATTS] = NUM(TS_TO_ENERGY, "gpu_watts", TS_FMT_SI, "W", "Power per GPU",
                              "Power one GPU draws while training.",
                              "gpu_watts, else the catalogue's board_watts", NO),
    [TS_T_EN_HOST_WATTS] = NUM(TS_TO_ENERGY, "host_watts", TS_FMT_SI, "W", "Host power per GPU",
                               "The rest of the node's power per GPU.", "host_watts_per_gpu", NO),
    [TS_T_EN_PUE] = NUM(TS_TO_ENERGY, "pue", TS_FMT_PLAIN, "", "PUE",
                        "Facility energy over IT energy.", "pue", NO),
    [TS_T_EN_GRID_KG_PER_KWH] =
        NUM(TS_TO_ENERGY, "grid_kg_per_kwh", TS_FMT_PLAIN, "kg/kWh", "Grid intensity",
            "Carbon intensity of the electricity, kg CO2e per kWh.", "grid_kg_per_kwh", NO),
    [TS_T_EN_FACILITY_W] = NUM(TS_TO_ENERGY, "facility_w", TS_FMT_SI, "W", "Power at the meter",
                               "What the whole job draws, cooling and power delivery included.",
                               "gpus * (gpu_watts + host_watts) * pue", ROW),

    /* budget: POST /v1/budget (core/ts_sizing.c, core/ts_scaling.c) */
    [TS_T_BG_FLOPS] = TERM(TS_TO_BUDGET, "flops", TS_FMT_FLOPS, "FLOP", "FLOPs the budget buys",
                           "Model FLOPs the budget trains at the plan's MFU, after failures.", ROW),
    [TS_T_BG_GPU_HOURS] =
        NUM(TS_TO_BUDGET, "gpu_hours", TS_FMT_COUNT, "GPU-hours", "Budget",
            "The budget in GPU-hours of the run's GPU.",
            "budget_gpu_hours, or budget_days * 24 * gpus, or budget_usd / gpu_hour_usd", ROW),
    [TS_T_BG_DAYS] = NUM(TS_TO_BUDGET, "days", TS_FMT_COUNT, "days", "Budget in days",
                         "The budget as days of the run's GPUs.", "gpu_hours / gpus / 24", ROW),
    [TS_T_BG_USD] = NUM(TS_TO_BUDGET, "usd", TS_FMT_COUNT, "USD", "Budget in USD",
                        "The budget priced at gpu_hour_usd (0 without a price).",
                        "gpu_hours * gpu_hour_usd", NONZERO),
    [TS_T_BG_PEAK_FLOPS] =
        NUM(TS_TO_BUDGET, "peak_flops", TS_FMT_SI, "FLOP/s", "Peak per GPU",
            "Dense peak of one GPU at the compute precision.", "compute.peak_flops", NO),
    [TS_T_BG_MFU] = NUM(TS_TO_BUDGET, "mfu", TS_FMT_FRACTION, "", "MFU of the plan",
                        "The plan's MFU: mfu if given, else the best layout's predicted one.",
                        "compute.mfu", ROW),
    [TS_T_BG_USEFUL_FRACTION] =
        NUM(TS_TO_BUDGET, "useful_fraction", TS_FMT_FRACTION, "", "Useful training time",
            "Fraction of the GPU time that trains usefully, failures counted.",
            "compute.goodput.useful_fraction", ROW),
    [TS_T_BG_OPTIMAL_PARAMS] =
        NUM(TS_TO_BUDGET, "optimal_params", TS_FMT_COUNT, "", "Compute-optimal parameters",
            "The scaling law's optimal parameter count for the FLOPs.",
            "G (flops/6)^a, G = (alpha A / (beta B))^(1/(alpha+beta)), a = beta/(alpha+beta)", ROW),
    [TS_T_BG_OPTIMAL_TOKENS] = NUM(
        TS_TO_BUDGET, "optimal_tokens", TS_FMT_COUNT, "", "Compute-optimal tokens",
        "The scaling law's optimal token count for the FLOPs.", "flops / (6 optimal_params)", ROW),
    [TS_T_BG_OPTIMAL_LOSS] =
        NUM(TS_TO_BUDGET, "optimal_loss", TS_FMT_PLAIN, "nats", "Loss at the optimum",
            "The law's predicted loss at the optimum (nats per token, its data).",
            "E + A / optimal_params^alpha + B / optimal_tokens^beta", NO),
    [TS_T_BG_PARAMS] = NUM(TS_TO_BUDGET, "params", TS_FMT_COUNT, "", "Parameters planned",
                           "Active parameters of the model the plan trains.",
                           "params.active of the plan's model", ROW),
    [TS_T_BG_TOKENS] =
        NUM(TS_TO_BUDGET, "tokens", TS_FMT_COUNT, "", "Tokens planned",
            "Tokens that spend the budget on that model.", "flops / (6 params)", ROW),
    [TS_T_BG_TOKENS_PER_PARAM] =
        NUM(TS_TO_BUDGET, "tokens_per_param", TS_FMT_COUNT, "", "Tokens per parameter",
            "Training tokens per parameter of the plan (Chinchilla: about 20).", "tokens / params",
            ROW),
    [TS_T_BG_LOSS] =
        NUM(TS_TO_BUDGET, "loss", TS_FMT_PLAIN, "nats", "Predicted loss",
            "The law's loss for the plan's model and tokens (0 for MoE: the law is dense).",
            "E + A / params^alpha + B / tokens^beta", ROW),
};

size_t ts_term_human(char *buf, size_t size, ts_term_id id, double v)
{
    const ts_term_def *d = (unsigned)id < TS_T_COUNT ? &ts_terms[id] : NULL;

    if (d == NULL) {
        if (size > 0)
            buf[0] = '\0';
        return 0;
    }
    return ts_fmt_human(buf, size, v, d->fmt, d->unit);
}

const ts_term_def *ts_term_find(ts_term_obj obj, const char *key)
{
    size_t i;

    for (i = 0; i < TS_T_COUNT; i++)
        if (ts_terms[i].obj == obj && ts_terms[i].key != NULL && strcmp(ts_terms[i].key, key) == 0)
            return &ts_terms[i];
    return NULL;
}

ts_term_obj ts_term_obj_find(const char *path)
{
    int o;

    for (o = 0; o < TS_TO_COUNT; o++)
        if (strcmp(ts_term_objs[o].path, path) == 0)
            return (ts_term_obj)o;
    return TS_TO_COUNT;
}
