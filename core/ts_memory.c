/*
 * ts_memory.c - per-GPU memory as a peak over the phases of one optimizer
 * step, per pipeline stage, on top of what the training framework holds.
 * See docs/formulas.md, "Peak memory" (every constant there has a source).
 *
 * The memory answer: the context of the run (bytes per parameter, shares
 * per GPU, activations: ts_mem_states.c, ts_mem_act.c), every pipeline
 * stage evaluated (ts_mem_stage.c) and the worst one's terms reported.
 * The worst stage sets the verdict.  Nothing non-finite ever leaves this
 * file (TS_ERANGE instead).
 */
#include "ts_mem.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static const char *const ts_phase_names[TS_PHASE_COUNT] = {
    [TS_PHASE_FORWARD] = "forward",
    [TS_PHASE_LOSS] = "loss",
    [TS_PHASE_BACKWARD] = "backward",
    [TS_PHASE_OPTIMIZER] = "optimizer",
};

const char *ts_phase_name(ts_phase p)
{
    return (unsigned)p < TS_PHASE_COUNT ? ts_phase_names[p] : "unknown";
}

/* DeepSpeed's estimate_zero{2,3}_model_states_mem_needs (no offload), as
 * in deepspeed/runtime/zero/stage_1_and_2.py and stage3.py since PR #5099
 * (DeepSpeed 0.14): ZeRO-2 2P + 18P/N, ZeRO-3 4 largest_layer + 18P/N. */
static void ts_mem_deepspeed(const ts_run *run, const ts_params *p, ts_memory *out)
{
    double P = out->params_per_gpu, N = (double)out->shard_group, largest;

    if (run->zero < 2) {
        ts_term_set(&out->deepspeed_gpu, 0, "0",
                    "DeepSpeed's estimators cover ZeRO-2 and ZeRO-3 only");
        return;
    }
    if (run->zero == 2) {
        ts_term_set(
            &out->deepspeed_gpu, 2.0 * P + 18.0 * P / N, "2 P_gpu + 18 P_gpu / (dp*cp)",
            "DeepSpeed >= 0.14 (PR #5099) estimate_zero2_model_states_mem_needs, no offload");
        return;
    }
    largest = 0;
    if (p->from_shape) {
        double layer = p->per_layer_attn + p->per_layer_mlp + p->per_layer_norm;
        largest = fmax(p->embedding, layer) / (double)run->tp;
    }
    ts_term_set(&out->deepspeed_gpu, 4.0 * largest + 18.0 * P / N,
                "4 largest_layer + 18 P_gpu / (dp*cp); largest_layer = max(V h, one layer) / tp",
                p->from_shape
                    ? "DeepSpeed >= 0.14 estimate_zero3_model_states_mem_needs, no offload"
                    : "DeepSpeed >= 0.14 estimate_zero3_model_states_mem_needs, no offload; no "
                      "shape, largest layer taken as 0");
}

static bool ts_mem_finite(const ts_memory *o)
{
    const double v[] = {
        o->params_per_gpu,
        o->bpp_weights,
        o->bpp_grads,
        o->bpp_master,
        o->bpp_optimizer,
        o->bpp_total,
        o->model_state_bytes,
        o->inference_bytes,
        o->weights.value,
        o->grads.value,
        o->master.value,
        o->optimizer.value,
        o->activations.value,
        o->buffers.value,
        o->overhead.value,
        o->total.value,
        o->allocated_peak.value,
        o->reserved_peak.value,
        o->runtime.value,
        o->act_per_layer,
        o->act_layer_full,
        o->act_embedding_logits,
        o->act_seed000.value,
        o->act_seq2_term,
        o->host_bytes_per_gpu,
        o->host_bytes_per_node,
        o->deepspeed_gpu.value,
        o->hbm_bytes,
        o->headroom_bytes,
    };
    size_t i;

    for (i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

static const char *ts_mem_fw_text(const ts_run *r)
{
    switch (r->framework) {
    case TS_FW_FSDP:
        /* FSDP1's flat parameters hold the same bytes per rank as FSDP2's
         * per-parameter shards (one unit gathered plus one prefetched:
         * limit_all_gathers); only the step time tells them apart. */
        if (r->fsdp_impl == TS_FSDP_FLAT_PARAM)
            return "PyTorch FSDP1 (FullyShardedDataParallel, flat parameters): sharded fp32 "
                   "params as master, unsharded 16-bit unit + prefetch, fp32 reduce-scatter";
        return "PyTorch FSDP2 (torchtitan): sharded fp32 params as master, unsharded 16-bit block "
               "+ prefetch, fp32 reduce-scatter";
    case TS_FW_DEEPSPEED:
        return "DeepSpeed ZeRO: 16-bit + fp32 gradient partitions, reduce/allgather buckets, "
               "stage-3 live parameters";
    case TS_FW_HF:
        return "Hugging Face transformers + PEFT: eager modules, fp32 adapters and fp32 copies of "
               "their inputs unless adapter_precision is model, per-layer checkpointing; FSDP's "
               "buffers with zero >= 2";
    case TS_FW_MEGATRON:
    case TS_FW_COUNT:
    default:
        return "Megatron-LM: distributed optimizer shards master and moments over dp*cp; main_grad "
               "buffer persistent";
    }
}

uint64_t ts_memory_work(const ts_run *r)
{
    int64_t stages = r->pp <= TS_STAGES_MAX ? r->pp : TS_STAGES_MAX + TS_MEM_MIDDLE_MAX;

    return TS_COST_MEMORY + TS_COST_STAGE * (uint64_t)stages;
}

/* All but stages[] (64 entries, 11 KB): the stages_len used are written
 * whole, and an estimate runs once per candidate in the fit and search
 * loops. */
static void ts_mem_clear(ts_memory *out)
{
    memset(out, 0, offsetof(ts_memory, stages));
    memset((char *)out + offsetof(ts_memory, stages) + sizeof out->stages, 0,
           sizeof *out - offsetof(ts_memory, stages) - sizeof out->stages);
}

/* Every stage into out->stages (the listed ones) and the worst into
 * *worst (the first of the largest totals).  Up to TS_STAGES_MAX stages:
 * each one, all listed.  Past that, the first and last half are listed
 * and, between them, only the stage that opens each run of equal stages
 * is evaluated (ts_mem_middle): O(1) in pp, so that a client's pp of 2^20
 * costs what 64 do. */
static void ts_mem_stages(const ts_run *run, const ts_mem_ctx *c, ts_memory *out,
                          ts_mem_stage *worst)
{
    ts_mem_stage s;
    int64_t i, start, half = TS_STAGES_MAX / 2;
    int64_t mids[TS_MEM_MIDDLE_MAX];
    size_t nm, mi;

    out->stages_count = run->pp;
    *worst = (ts_mem_stage){ 0 };
    if (run->pp <= TS_STAGES_MAX) {
        for (i = 0, start = 0; i < run->pp; i++) {
            ts_mem_stage_eval(c, i, start, &s);
            start += s.layers;
            if (i == 0 || s.total > worst->total)
                *worst = s;
            out->stages[out->stages_len++] = s;
        }
        return;
    }
    nm = ts_mem_middle(c, half, run->pp - half, mids);
    for (i = 0; i < run->pp; i++) {
        if (i == half) {
            /* Ascending, as the full loop would meet them. */
            for (mi = 0; mi < nm; mi++) {
                ts_mem_stage_eval(c, mids[mi], c->shape ? ts_mem_stage_start(run, mids[mi]) : 0,
                                  &s);
                if (s.total > worst->total)
                    *worst = s;
            }
            i = run->pp - half;
        }
        ts_mem_stage_eval(c, i, c->shape ? ts_mem_stage_start(run, i) : 0, &s);
        if (i == 0 || s.total > worst->total)
            *worst = s;
        out->stages[out->stages_len++] = s;
    }
}

/* The model states' terms of the worst stage; opt_text: the optimizer's
 * assumptions (ts_mem_context). */
static void ts_mem_terms_states(const ts_run *run, const ts_mem_ctx *c, const ts_mem_stage *worst,
                                const char *opt_text, ts_memory *out)
{
    ts_term_set(&out->weights, worst->weights,
                run->offload_params ? "0 on GPU; host: bytes(precision) * P_stage / (dp*cp)"
                : run->framework == TS_FW_FSDP && run->master_weights && !c->lora
                    ? "0: the fp32 shard is the master copy"
                : c->lora && run->lora_save != 0
                    ? "bytes(frozen_precision) * P_linear + bytes(precision) * (P_embedding + "
                      "adapters + the lora_modules_to_save copies, vocab x hidden each; under hf "
                      "with master_weights the copies' fp32 master is their weight), stage share"
                : c->lora ? "bytes(frozen_precision) * P_linear + bytes(precision) * (P_embedding "
                            "+ adapters), stage share"
                : run->zero >= 3
                    ? "bytes(precision) * (P_dense/(dp cp) + P_expert/(dp cp/ep)), stage share"
                    : "bytes(precision) * P_stage; P_stage = its layers/tp (experts /ep) + "
                      "embedding (first) + head (last)",
                ts_mem_fw_text(run));
    ts_term_set(&out->grads, worst->grads,
                !c->training ? "0"
                : run->zero >= 2
                    ? "bytes(grad_precision) * f * P_stage / (dp*cp) (experts / (dp*cp/ep))"
                    : "bytes(grad_precision) * f * P_stage",
                !c->training ? "inference: no gradients"
                : run->framework == TS_FW_MEGATRON
                    ? "Megatron main_grad buffer (fp32 by default), held all step"
                    : "PyTorch zero_grad(set_to_none): allocated during backward unless the step "
                      "accumulates");
    ts_term_set(&out->master, worst->master,
                out->bpp_master == 0     ? "0"
                : run->offload_optimizer ? "0 on GPU; host: 4 * f * P_stage / (dp*cp)"
                : run->zero >= 1         ? "4 * f * P_stage / (dp*cp) (experts / (dp*cp/ep))"
                                         : "4 * f * P_stage",
                out->bpp_master == 0
                    ? "no fp32 master copy (master_weights off, fp32 weights, or inference)"
                : run->zero >= 1 ? "fp32 master weights sharded over the data-parallel group"
                                 : "fp32 master weights replicated");
    ts_term_set(&out->optimizer, worst->optimizer,
                out->bpp_optimizer == 0  ? "0"
                : run->offload_optimizer ? "0 on GPU; host: bpp_optimizer * f * P_stage / (dp*cp)"
                : run->zero >= 1 ? "bpp_optimizer * f * P_stage / (dp*cp) (experts / (dp*cp/ep))"
                                 : "bpp_optimizer * f * P_stage",
                opt_text);
}

/* The worst stage's activations, buffers, peaks, runtime and total. */
static void ts_mem_terms_peak(const ts_run *run, const ts_mem_ctx *c, const ts_mem_stage *worst,
                              ts_memory *out)
{
    ts_term_set(
        &out->activations, worst->activations, c->shape && c->training ? c->act.formula : "0",
        !c->training ? "inference: activations and KV cache not modelled"
        : !c->shape  ? "no model shape: activations need layers, hidden and heads, reported as 0"
        : ts_run_offloaded_layers(run) > 0
            ? "saved activations at the end of the forward: (layers - offload_activation_layers) "
              "* per-layer bytes * seq/cp * micro_batch (+ input ids); the offloaded layers' in "
              "host RAM (host_bytes_per_gpu; Transformer Engine >= 2.10's default handler, one "
              "layer more before it)"
            : "saved activations at the peak phase: in_flight * layers * per-layer bytes * "
              "seq/cp * micro_batch (+ input ids)");
    ts_term_set(
        &out->buffers, worst->buffers,
        "peak-phase working set: logits/loss, recompute + gradient working set of one layer, "
        "framework buffers",
        "loss: Megatron fused CE (act_b + 4/chunks) V/tp, PyTorch CE 3 fp32 copies per chunk; FSDP "
        "unsharded block + prefetch, fp32 reduce-scatter; DeepSpeed buckets 5e8; Megatron under "
        "FP8: Transformer Engine's cached FP8 weights, copy + transpose of 16-bit weights (2 B) "
        "or the transpose of FP8 ones (1 B) per linear weight");
    ts_term_set(&out->allocated_peak, worst->allocated_peak,
                "max over phases (forward, loss, backward, optimizer) of the tensors allocated",
                "compare with torch.cuda.max_memory_allocated / 'peak active'");
    ts_term_set(&out->reserved_peak, worst->reserved_peak,
                "allocated_peak + cached blocks the peak phase cannot reuse + fragmentation * "
                "allocated_peak",
                "caching allocator: at the loss phase the layers' freed working set and the bf16 "
                "logits block are too small for the fp32 loss buffers; compare with "
                "torch.cuda.max_memory_reserved");
    ts_term_set(&out->runtime, run->overhead_gib * TS_MEM_GIB + worst->paged,
                worst->paged > 0 ? "overhead_gib * 2^30 + paged optimizer states"
                                 : "overhead_gib * 2^30",
                worst->paged > 0
                    ? "CUDA context, cuBLAS workspaces, NCCL communicator buffers, and the paged "
                      "8-bit optimizer states (CUDA managed memory): outside the caching allocator"
                    : "CUDA context, cuBLAS workspaces, NCCL communicator buffers: outside the "
                      "caching allocator");
    ts_term_set(&out->overhead, worst->overhead, "(reserved_peak - allocated_peak) + runtime",
                "allocator reserve plus runtime context");
    ts_term_set(&out->total, worst->total, "reserved_peak + runtime context, worst pipeline stage",
                "compared with HBM as the driver reports it");
}

/* Host RAM for offload (DeepSpeed ZeRO-Offload / Infinity): fp32 master,
 * moments and the fp32 gradient partition, 16 B per trainable param of
 * the shard; + 16-bit params with offload_params (18). */
static void ts_mem_host(const ts_run *run, const ts_mem_ctx *c, const ts_mem_stage *worst,
                        ts_memory *out)
{
    double host = 0;
    /* host_share counts the base's parameters; the bytes per parameter
     * are averaged over base + adapters + copies (bpp_params). */
    double share =
        worst->host_share * (out->params.total > 0 ? out->bpp_params / out->params.total : 1.0);
    int64_t on_node;

    if (run->offload_optimizer)
        host += (out->bpp_master + out->bpp_optimizer + 4.0 * c->f) * share;
    if (run->offload_params)
        host += out->bpp_weights * share;
    host += worst->host_act; /* offload_activation_layers (ts_mem_stage_offload) */
    out->host_bytes_per_gpu = host;
    /* Only this job's GPUs on a node share its host RAM. */
    on_node = run->gpus < run->gpus_per_node ? run->gpus : run->gpus_per_node;
    out->host_bytes_per_node = host * (double)on_node;
}

/* Seed 000's simple whole-model form, reported for comparison only. */
static void ts_mem_seed000(const ts_run *run, const ts_mem_ctx *c, ts_memory *out)
{
    if (c->shape && c->training) {
        double sq = (double)run->seq, h = (double)run->model.hidden;
        ts_term_set(&out->act_seed000,
                    (double)run->micro_batch * (double)run->model.layers *
                        (5.0 * sq * h + 2.0 * (double)run->model.heads * sq * sq +
                         2.0 * sq * (double)run->model.ffn),
                    "b L (5 s h + 2 a s^2 + 2 s F)",
                    "seed 000's simple form: whole model, no parallelism or recompute; not used in "
                    "the total");
    } else {
        ts_term_set(
            &out->act_seed000, 0, "0",
            !c->training
                ? "inference: activations and KV cache not modelled"
                : "no model shape: activations need layers, hidden and heads, reported as 0");
    }
}

ts_status ts_memory_eval(const ts_run *run, const ts_params *p, ts_memory *out, ts_error *err)
{
    ts_mem_ctx c;
    ts_mem_stage worst;
    const char *opt_text;
    int k;

    ts_mem_clear(out);

    out->params = *p;
    ts_mem_context(run, p, &c, out);
    opt_text = out->optimizer.assumptions;
    out->model_state_bytes = out->bpp_params * out->bpp_total;
    out->inference_bytes = p->total * ts_precision_bytes(run->precision);
    out->shard_group = run->dp * run->cp;

    ts_mem_stages(run, &c, out, &worst);
    out->worst_stage = worst.stage;
    out->params_per_gpu = worst.params;
    out->layers_per_stage = worst.layers;
    out->in_flight = (int64_t)ceil(out->stages[0].in_flight);
    out->act_per_layer = c.act.saved * c.tokens;
    out->act_layer_full = c.act.full * c.tokens;
    {
        /* Block recompute: the layers not recomputed keep their scores. */
        double n0 = (double)out->stages[0].layers, k0 = n0;

        if (run->recompute == TS_RECOMPUTE_FULL && run->recompute_layers > 0)
            k0 = ts_run_recomputed(run, out->stages[0].layers);
        if (ts_run_offloaded_layers(run) > 0) {
            /* CPU offload (recompute none): the layers kept on the GPU. */
            n0 -= (double)ts_run_offloaded_layers(run);
            k0 = n0;
        }
        out->act_seq2_term =
            (c.act.score * k0 + c.act.eager * (n0 - k0)) * c.tokens * out->stages[0].in_flight;
    }
    out->act_embedding_logits = c.act.loss * c.tokens;
    for (k = 0; k < TS_PHASE_COUNT; k++)
        out->phases[k] = worst.phase_bytes[k];
    out->peak_phase = worst.peak_phase;

    ts_mem_terms_states(run, &c, &worst, opt_text, out);
    ts_mem_terms_peak(run, &c, &worst, out);
    ts_mem_host(run, &c, &worst, out);
    ts_mem_seed000(run, &c, out);
    ts_mem_deepspeed(run, p, out);

    out->hbm_bytes = run->gpu.hbm_bytes;
    out->headroom_bytes = out->hbm_bytes - out->total.value;
    out->fits = out->total.value <= out->hbm_bytes;

    if (!ts_mem_finite(out)) {
        *out = (ts_memory){ 0 };
        return ts_error_set(err, TS_ERANGE, "", "memory figures overflow for these inputs");
    }
    return TS_OK;
}

ts_status ts_memory_estimate(const ts_run *r, ts_memory *out, ts_error *err)
{
    ts_run run;
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    run = *r; /* private copy: the caller's run is const */
    if ((st = ts_run_resolve(&run, err)) != TS_OK) {
        ts_mem_clear(out);
        return st;
    }
    return ts_memory_resolved(&run, out, err);
}

ts_status ts_memory_resolved(const ts_run *r, ts_memory *out, ts_error *err)
{
    ts_params p;
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    if ((st = ts_run_resolved_ok(r, err)) != TS_OK) {
        ts_mem_clear(out);
        return st;
    }
    ts_model_count(&r->model, &p);
    return ts_memory_eval(r, &p, out, err);
}

ts_status ts_memory_stage(const ts_run *r, int64_t i, ts_mem_stage *out, ts_error *err)
{
    ts_run run;
    ts_params p;
    ts_mem_ctx c;
    ts_memory scratch; /* ts_mem_context fills its bytes per parameter */
    ts_status st;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *out = (ts_mem_stage){ 0 };
    run = *r;
    if ((st = ts_run_resolve(&run, err)) != TS_OK)
        return st;
    if (i < 0 || i >= run.pp)
        return ts_error_set(err, TS_EINVAL, "pp", "stage %lld is not in [0, pp = %lld)",
                            (long long)i, (long long)run.pp);
    ts_model_count(&run.model, &p);
    ts_mem_clear(&scratch);
    ts_mem_context(&run, &p, &c, &scratch);
    ts_mem_stage_eval(&c, i, c.shape ? ts_mem_stage_start(&run, i) : 0, out);
    return TS_OK;
}
