/*
 * ts_internal.h - helpers shared by the core's modules; not installed,
 * not part of the public interface (trainsize.h).
 */
#ifndef TS_INTERNAL_H
#define TS_INTERNAL_H

#include "trainsize.h"

/* Fill one reported figure; formula and assumptions are static strings. */
void ts_term_set(ts_term *t, double value, const char *formula, const char *assumptions);

/* TS_OK when lo <= v <= hi, else TS_EINVAL naming field and the range. */
ts_status ts_check_int(int64_t v, int64_t lo, int64_t hi, const char *field, ts_error *err);

/* ---- a run resolved once (core/ts_run.c) ---------------------------- */

/* A resolved run whose layout members (TS_FF_LAYOUT in ts_fields.def:
 * degrees, micro_batch, global_batch, framework, zero, recompute, the
 * pipeline schedule) a solver or the search changed: those members
 * checked again and the layout re-derived (gpus = 0 or dp = 0 derives
 * it, global_batch = 0 derives it), with the checks between them, as
 * ts_run_resolve() would.  In place; *r is unspecified after an error. */
ts_status ts_run_relayout(ts_run *r, ts_error *err);

/* TS_OK when r looks resolved (degrees, dp, gpus, global_batch and
 * tokens derived and consistent): the O(1) guard of the *_resolved()
 * entry points, not a validation. */
ts_status ts_run_resolved_ok(const ts_run *r, ts_error *err);

/* How the pipeline splits the model's layers (one rule for the memory
 * model, the step model and the recompute count): first/last stage
 * counts as given (pp > 1), the other `middle` stages `base` layers each,
 * the earlier `extra` of them one more (they also hold the most
 * micro-batches, so this is the conservative placement). */
typedef struct ts_run_stages {
    int64_t first, last; /* given counts, 0 = none */
    int64_t base, extra; /* the other stages: base layers, extra of them one more */
    int64_t middle;      /* how many other stages */
} ts_run_stages;
void ts_run_stage_sizes(const ts_run *r, ts_run_stages *s);
/* Layers of pipeline stage i (0 .. pp-1) under that split. */
int64_t ts_run_stage_layers(const ts_run *r, int64_t i);

/* Of a stage's nl layers, how many full recompute reruns: all of them, or
 * with recompute_layers N the first N of each of its vpp virtual stages
 * (Megatron-LM's block method); 0 unless recompute is full.  The model's
 * total over every stage: ts_run_recomputed_total() (core/ts_run.c). */
double ts_run_recomputed(const ts_run *r, int64_t nl);
double ts_run_recomputed_total(const ts_run *r);

/* The cross-entropy kernel a run's loss uses, its default resolved:
 * Megatron's own vocab-parallel kernel, torch's for the other frameworks. */
ts_loss_impl ts_run_loss_impl(const ts_run *r);

/* How full recompute reruns a block, its default resolved: fsdp's
 * non-reentrant early stop, the others' whole forward (ts_run.c). */
ts_recompute_impl ts_run_recompute_impl(const ts_run *r);
/* Frameworks that can overlap TP collectives with GEMMs (tp_comm_overlap):
 * Megatron (Transformer Engine userbuffers) and the PyTorch FSDP stacks
 * (async TP: torchtitan, NeMo AutoModel); DeepSpeed and a plain
 * transformers run cannot (ts_compat.c). */
bool ts_framework_tp_overlap(ts_framework f);
/* ts_compat.c: the options only some frameworks, kernels or layouts have
 * (tp_comm_overlap, liger_kernels, frozen_precision gptq, lora_impl
 * automodel; recompute selective_op,
 * activation_func_fp8_input_store, attention_unpad), checked on a run
 * whose fields are in range, after its layout is derived (at a resolve
 * and at every relayout: a search varies the framework). */
ts_status ts_compat_check(const ts_run *r, ts_error *err);
/* LoRA adapters kept in fp32 beside a 16-bit model (PEFT's autocast):
 * 4-byte adapter states, an fp32 copy of each adapted input. */
bool ts_run_adapters_fp32(const ts_run *r);
/* The frameworks whose models are eager PyTorch modules (transformers,
 * torchtitan, torchtune): hf and fsdp.  The memory model keeps those
 * modules' saved tensors for them; layer_impl defaults to eager there. */
bool ts_framework_eager(ts_framework f);
/* The layers' elementwise ops run one PyTorch kernel each (layer_impl;
 * by default under ts_framework_eager's frameworks). */
bool ts_run_eager_layers(const ts_run *r);

/* The storage a LoRA base is dequantised from before each of its matmuls:
 * frozen_precision, or bf16 (nothing to dequantise) for a bf16 base and
 * for FP8 weights under FP8 matmuls, which read them as they are. */
ts_quant ts_run_frozen_dequant(const ts_run *r);
/* A layout a solver or the search picked for a run with recompute_layers:
 * 0 unless recompute is full, else at most the largest virtual stage
 * (what Megatron's block loop recomputes when N exceeds it). */
void ts_run_fit_recompute_layers(ts_run *r);

/* The layers whose activations Megatron-Core's CPU offload keeps in host
 * RAM: offload_activation_layers where the layout has it (framework
 * megatron, pp 1, recompute none; ts_compat.c refuses the others at a
 * resolve and a relayout), else 0: a search's probes cost without it. */
int64_t ts_run_offloaded_layers(const ts_run *r);

/* Transformer Engine under FP8 as Megatron-Core runs it, full training
 * (ts_compat.c): its linears keep the FP8 copies of their inputs
 * (ts_mem_act.c) and cache FP8 weights (ts_mem_stage.c). */
bool ts_run_te_fp8(const ts_run *r);

/* FP8 parameters as Megatron builds them (fp8_param_gather, NeMo's
 * fp8_params: precision fp8): TE modules' weights only, the embedding and
 * output layer staying 16-bit (ts_mem_stage.c, ts_step.c). */
bool ts_run_te_fp8_params(const ts_run *r);

/* The bytes those layers save for backward, one micro-batch on one GPU:
 * what goes to host RAM and back (core/ts_mem_act.c), for the memory
 * answer and the step's copies alike. */
double ts_mem_offload_bytes(const ts_run *run);

/* Parameter counts of a model ts_model_params() accepted (ts_model.c). */
void ts_model_count(const ts_model *m, ts_params *out);
/* One layer's attention weights (q, k, v, o, biases, norms; MLA's down
 * and up projections), as ts_model_count counts them (ts_model.c). */
double ts_model_attn_params(const ts_model *m);

/* The estimators on a resolved run and its counts p: nothing is checked
 * again.  The public *_estimate() resolve once, then call these. */
ts_status ts_memory_eval(const ts_run *r, const ts_params *p, ts_memory *out, ts_error *err);
ts_status ts_compute_eval(const ts_run *r, const ts_params *p, ts_compute *out, ts_error *err);
/* The MFU basis (model FLOPs per token of the full sequence) and its
 * formulas, one for the compute estimate and the step model
 * (ts_compute.c). */
typedef struct ts_flops_basis {
    double per_token;          /* weights + attention when attention_flops */
    double weights;            /* 6 P_active, or LoRA's 4 P_active + 6 P_lora */
    double attention;          /* 12 L h s (0 without a model shape) */
    double lora_params;        /* P_lora: adapters a token passes through */
    bool lora;                 /* the frozen-base form */
    const char *model_formula; /* static strings */
    const char *attn_formula;
    const char *hours_formula;
    const char *convention;
} ts_flops_basis;
void ts_compute_basis(const ts_run *r, const ts_params *p, ts_flops_basis *out);

/* mem: the memory estimate of the same run (its bytes per parameter). */
ts_status ts_ckpt_eval(const ts_run *r, const ts_memory *mem, ts_ckpt *out, ts_error *err);
/* T / wall of the run with failures (Daly 2006 at the nvme interval, the
 * restart = relaunch + shared-tier restore): what ts_goodput_eval and the
 * search's max_days / max_cost gate divide the failure-free time by; 0
 * when the run would never finish. */
double ts_goodput_useful(const ts_run *r, const ts_ckpt *k);
/* Goodput of a run (ts_goodput.c): k its checkpoint estimate, T its
 * failure-free wall seconds (ts_compute.wall_seconds). */
ts_status ts_goodput_eval(const ts_run *r, const ts_ckpt *k, double failure_free_s, ts_goodput *out,
                          ts_error *err);
/* Energy of gpu_hours of r's GPUs (ts_energy.c). */
ts_status ts_energy_eval(const ts_run *r, double gpu_hours, ts_energy *out, ts_error *err);
/* Both into c (a ts_compute_eval answer for r), k the run's checkpoint
 * estimate, and the near-full memory warning from mem, the run's memory
 * estimate: what ts_compute_resolved and the plan add (ts_compute.c). */
ts_status ts_compute_outlook(const ts_run *r, const ts_memory *mem, const ts_ckpt *k, ts_compute *c,
                             ts_error *err);
/* user_gb: the global batch kept at every dp it divides (0 = derived).
 * Each point charged to b; when it runs out the sweep stops (TS_OK, *n
 * the points done, b->exhausted). */
ts_status ts_sweep_eval(const ts_run *r, const ts_params *p, int64_t user_gb, ts_budget *b,
                        ts_sweep_point *pts, size_t cap, size_t *n, ts_error *err);

/* ---- the work budget (core/ts_budget.c) ----------------------------- */

/* Charge units: true when they fit under the limit (then counted), false
 * when not (nothing counted, b->exhausted set: the caller stops). */
bool ts_budget_take(ts_budget *b, uint64_t units);

/* Units a memory estimate of r costs: TS_COST_MEMORY plus TS_COST_STAGE
 * per stage ts_memory_eval evaluates (at most TS_STAGES_MAX + 4 whatever
 * pp is: core/ts_memory.c). */
uint64_t ts_memory_work(const ts_run *r);

/* Step model on an already resolved run and its params (no resolution,
 * no error text: the search calls it in its inner loop).  TS_EINCOMPAT:
 * no peak at the compute precision; TS_ERANGE: not finite. */
ts_status ts_step_eval(const ts_run *r, const ts_params *p, ts_step *out);

#endif /* TS_INTERNAL_H */
