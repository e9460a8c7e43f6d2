/*
 * ts_memory.c - per-GPU memory: bytes per parameter term by term, ZeRO
 * sharding over the data-parallel group, offload to host RAM, activations
 * (Korthikanti et al. 2022 / Megatron-LM), overhead, fit.
 * See docs/formulas.md, "Bytes per parameter" to "Overhead".
 *
 * Dense and expert parameters are sharded separately: dense over
 * Nd = dp*cp, experts over their own data-parallel group Nd/ep.  Every
 * figure is a ts_term with a static formula and assumption string, and
 * nothing non-finite ever leaves this file (TS_ERANGE instead).
 */
#include "ts_internal.h"

#include <math.h>

#define TS_MEM_GIB 1073741824.0 /* 2^30 */
/* Adafactor without a shape: the square-matrix rule at h = 4096. */
#define TS_MEM_ADAFACTOR_H 4096.0

typedef struct ts_mem_opt {
    double bpp;                /* optimizer state bytes per trainable param */
    const char *assumptions;
} ts_mem_opt;

static ts_mem_opt ts_mem_optimizer(ts_optimizer o, const ts_params *p,
                                   const ts_model *m)
{
    ts_mem_opt r = { 0, "" };

    switch (o) {
    case TS_OPT_NONE:
        r.assumptions = "inference: no optimizer state";
        break;
    case TS_OPT_ADAM:
    case TS_OPT_ADAMW:
        r.bpp = 8;
        r.assumptions = "Adam/AdamW: m and v in fp32, 8 B per trainable param";
        break;
    case TS_OPT_ADAM8BIT:
        r.bpp = 2;
        r.assumptions = "8-bit Adam (bitsandbytes): m and v 1 byte each; block scales ignored";
        break;
    case TS_OPT_SGD:
        r.assumptions = "plain SGD keeps no state";
        break;
    case TS_OPT_SGD_MOMENTUM:
        r.bpp = 4;
        r.assumptions = "SGD with momentum: one fp32 buffer";
        break;
    case TS_OPT_LION:
        r.bpp = 4;
        r.assumptions = "Lion: one fp32 momentum buffer";
        break;
    case TS_OPT_ADAFACTOR:
        /* Factored second moment 4 (r + c) bytes per r x c matrix. */
        if (p->from_shape) {
            r.bpp = 8.0 / (double)m->hidden;
            r.assumptions = "Adafactor: factored fp32 second moment, no momentum; 8/h B per param (square h x h matrices)";
        } else {
            r.bpp = 8.0 / TS_MEM_ADAFACTOR_H;
            r.assumptions = "Adafactor: factored fp32 second moment, no momentum; no shape, so 8/4096 B per param";
        }
        break;
    case TS_OPT_COUNT:
        break;
    }
    return r;
}

/* Activations of the first pipeline stage (the one that holds the most). */
static void ts_mem_activations(const ts_run *run, const ts_params *p,
                               ts_memory *out)
{
    const ts_model *m = &run->model;
    double s, b, h, a, F, V, t, L, sbh, c1, score, coef, per_step, emb;
    bool split_all; /* every per-layer term divided by t */
    const char *formula;

    out->layers_per_stage = 0;
    out->in_flight = 0;
    if (run->optimizer == TS_OPT_NONE) {
        ts_term_set(&out->activations, 0, "0",
                    "inference: activations and KV cache not modelled");
        ts_term_set(&out->act_seed000, 0, "0",
                    "inference: activations and KV cache not modelled");
        return;
    }
    if (!p->from_shape) {
        ts_term_set(&out->activations, 0, "0",
                    "no model shape: activations need layers, hidden and heads, reported as 0");
        ts_term_set(&out->act_seed000, 0, "0",
                    "no model shape: activations need layers, hidden and heads, reported as 0");
        return;
    }

    s = (double)(run->seq / run->cp); /* exact: seq % cp == 0 */
    b = (double)run->micro_batch;
    h = (double)m->hidden;
    a = (double)m->heads;
    F = (double)m->ffn;
    V = (double)m->vocab;
    t = (double)run->tp;
    L = (double)m->layers;
    sbh = s * b * h;
    c1 = 18.0 + 4.0 * F / h;   /* 34 when F = 4h */
    score = 5.0 * a * s / h;   /* attention scores, softmax, dropout: the s^2 part */
    /* With t = 1 the SP and non-SP forms coincide. */
    split_all = run->sequence_parallel || run->tp == 1;

    switch (run->recompute) {
    case TS_RECOMPUTE_SELECTIVE:
        coef = split_all ? c1 / t : 10.0 + (c1 - 10.0) / t;
        score = 0;
        formula = split_all
            ? "layers_per_stage * in_flight * s b h (18 + 4F/h)/t + embedding/logits; s = seq/cp, selective recompute"
            : "layers_per_stage * in_flight * s b h (10 + (8 + 4F/h)/t) + embedding/logits; s = seq/cp, selective recompute";
        break;
    case TS_RECOMPUTE_FULL:
        coef = split_all ? 2.0 / t : 2.0;
        score = 0;
        formula = split_all
            ? "layers_per_stage * in_flight * 2 s b h / t + embedding/logits; s = seq/cp, full recompute"
            : "layers_per_stage * in_flight * 2 s b h + embedding/logits; s = seq/cp, full recompute";
        break;
    case TS_RECOMPUTE_NONE:
    case TS_RECOMPUTE_COUNT:
    default:
        coef = split_all ? c1 / t : 10.0 + (c1 - 10.0) / t;
        formula = split_all
            ? "layers_per_stage * in_flight * s b h ((18 + 4F/h)/t + 5as/(h t)) + embedding/logits; s = seq/cp"
            : "layers_per_stage * in_flight * s b h (10 + (8 + 4F/h)/t + 5as/(h t)) + embedding/logits; s = seq/cp";
        break;
    }

    out->act_per_layer = sbh * (coef + score / t);
    /* The heaviest stage sets the peak: ceil(L / pp) layers. */
    out->layers_per_stage = (m->layers + run->pp - 1) / run->pp;
    /* 1F1B: the first stage holds up to pp micro-batches, fewer when the
     * step has fewer. */
    per_step = (double)(run->global_batch / (run->dp * run->micro_batch));
    out->in_flight = (int64_t)fmin((double)run->pp, per_step);

    /* Input ids (8 B/token) + embedding dropout per in-flight micro-batch;
     * output layer and fp32 loss only when one stage holds the whole model. */
    emb = (8.0 * s * b + sbh) * (double)out->in_flight;
    if (run->pp == 1)
        emb += 4.0 * sbh * (1.0 + V / h);
    out->act_embedding_logits = emb / t;

    out->act_seq2_term = (double)out->layers_per_stage * (double)out->in_flight *
                         sbh * score / t;
    ts_term_set(&out->activations,
                (double)out->layers_per_stage * (double)out->in_flight *
                        out->act_per_layer + out->act_embedding_logits,
                formula,
                "Korthikanti et al. 2022 Table 2 / Megatron-LM: 16-bit activations, dropout masks kept, "
                "1F1B schedule, first pipeline stage");

    /* Seed 000's simple whole-model form, reported for comparison only. */
    s = (double)run->seq;
    ts_term_set(&out->act_seed000,
                b * L * (5.0 * s * h + 2.0 * a * s * s + 2.0 * s * F),
                "b L (5 s h + 2 a s^2 + 2 s F)",
                "seed 000's simple form: whole model, no parallelism or recompute; not used in the total");
}

/* DeepSpeed's estimate_zero{2,3}_model_states_mem_needs (no offload), on
 * this GPU's share of the model: P = params_per_gpu, N = dp*cp. */
static void ts_mem_deepspeed(const ts_run *run, const ts_params *p,
                             ts_memory *out)
{
    double P = out->params_per_gpu, N = (double)out->shard_group, largest;

    if (run->zero < 2) {
        ts_term_set(&out->deepspeed_gpu, 0, "0",
                    "DeepSpeed's estimators cover ZeRO-2 and ZeRO-3 only");
        return;
    }
    if (run->zero == 2) {
        ts_term_set(&out->deepspeed_gpu, 4.0 * P + 16.0 * P / N, "4 P_gpu + 16 P_gpu / (dp*cp)",
                    "DeepSpeed estimate_zero2_model_states_mem_needs, no offload; fixed mixed-precision Adam");
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
                    ? "DeepSpeed estimate_zero3_model_states_mem_needs, no offload; fixed mixed-precision Adam"
                    : "DeepSpeed estimate_zero3_model_states_mem_needs, no offload; no shape, largest layer taken as 0");
}

static bool ts_mem_finite(const ts_memory *o)
{
    const double v[] = {
        o->params_per_gpu, o->bpp_weights, o->bpp_grads, o->bpp_master,
        o->bpp_optimizer, o->bpp_total, o->model_state_bytes, o->inference_bytes,
        o->weights.value, o->grads.value, o->master.value, o->optimizer.value,
        o->activations.value, o->overhead.value, o->total.value,
        o->act_per_layer, o->act_embedding_logits, o->act_seed000.value,
        o->act_seq2_term, o->host_bytes_per_gpu, o->host_bytes_per_node,
        o->deepspeed_gpu.value, o->hbm_bytes, o->headroom_bytes,
    };
    size_t i;

    for (i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

ts_status ts_memory_estimate(const ts_run *r, ts_memory *out, ts_error *err)
{
    ts_run run;
    ts_status st;
    ts_params p;
    ts_mem_opt opt;
    double f, tpp, nd, nde, dense_gpu, expert_gpu, share0, share1, share2, share3;
    double w, g, m, o, host, states;
    bool training;
    int64_t on_node;

    if (r == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *out = (ts_memory){ 0 };

    run = *r; /* private copy: the caller's run is const */
    if ((st = ts_run_resolve(&run, err)) != TS_OK ||
        (st = ts_model_params(&run.model, &p, err)) != TS_OK)
        return st;
    out->params = p;

    /* Bytes per parameter of the unsharded state.  Frozen parameters
     * (trainable_fraction < 1) keep weights only. */
    training = run.optimizer != TS_OPT_NONE;
    f = training ? run.trainable_fraction : 0.0;
    opt = ts_mem_optimizer(run.optimizer, &p, &run.model);
    out->bpp_weights = ts_precision_bytes(run.precision);
    out->bpp_grads = f * ts_precision_bytes(run.grad_precision);
    out->bpp_master = run.master_weights ? f * 4.0 : 0.0;
    out->bpp_optimizer = f * opt.bpp;
    out->bpp_total = out->bpp_weights + out->bpp_grads + out->bpp_master + out->bpp_optimizer;
    out->model_state_bytes = p.total * out->bpp_total;
    out->inference_bytes = p.total * ts_precision_bytes(run.precision);

    /* This GPU's share before ZeRO, then per ZeRO stage threshold. */
    tpp = (double)(run.tp * run.pp);
    nd = (double)(run.dp * run.cp);
    nde = nd / (double)run.ep; /* exact: dp % ep == 0 */
    dense_gpu = p.dense / tpp;
    expert_gpu = p.expert / (tpp * (double)run.ep);
    out->params_per_gpu = dense_gpu + expert_gpu;
    out->shard_group = run.dp * run.cp;
    share0 = dense_gpu + expert_gpu;
    share1 = run.zero >= 1 ? dense_gpu / nd + expert_gpu / nde : share0;
    share2 = run.zero >= 2 ? dense_gpu / nd + expert_gpu / nde : share0;
    share3 = run.zero >= 3 ? dense_gpu / nd + expert_gpu / nde : share0;

    w = out->bpp_weights * share3;
    g = out->bpp_grads * share2;
    m = out->bpp_master * share1;
    o = out->bpp_optimizer * share1;
    host = 0;
    if (run.offload_optimizer) {
        host += m + o;
        m = o = 0;
    }
    if (run.offload_params) {
        host += w;
        w = 0;
    }

    ts_term_set(&out->weights, w,
                run.offload_params ? "0 on GPU; host: bytes(precision) * P_gpu / (dp*cp)"
                : run.zero >= 3 ? "bytes(precision) * (P_dense/(tp pp dp cp) + P_expert/(tp pp dp cp/ep))"
                                : "bytes(precision) * P_gpu; P_gpu = P_dense/(tp pp) + P_expert/(tp pp ep)",
                run.offload_params ? "ZeRO-Infinity: weights offloaded to host RAM, fetched per layer"
                : run.zero >= 3 ? "ZeRO-3: weights sharded over the data-parallel group"
                                : "weights replicated across data-parallel ranks; uniform split over stages");
    ts_term_set(&out->grads, g,
                !training ? "0"
                : run.zero >= 2 ? "bytes(grad_precision) * f * P_gpu / (dp*cp) (experts / (dp*cp/ep))"
                                : "bytes(grad_precision) * f * P_gpu",
                !training ? "inference: no gradients"
                : run.zero >= 2 ? "ZeRO-2/3: gradients sharded; f = trainable_fraction"
                                : "gradients replicated; f = trainable_fraction");
    ts_term_set(&out->master, m,
                out->bpp_master == 0 ? "0"
                : run.offload_optimizer ? "0 on GPU; host: 4 * f * P_gpu / (dp*cp)"
                : run.zero >= 1 ? "4 * f * P_gpu / (dp*cp) (experts / (dp*cp/ep))"
                                : "4 * f * P_gpu",
                out->bpp_master == 0 ? "no fp32 master copy (master_weights off, fp32 weights, or inference)"
                : run.offload_optimizer ? "ZeRO-Offload: fp32 master weights in host RAM"
                : run.zero >= 1 ? "ZeRO-1+: fp32 master weights sharded"
                                : "fp32 master weights replicated");
    ts_term_set(&out->optimizer, o,
                opt.bpp == 0 ? "0"
                : run.offload_optimizer ? "0 on GPU; host: bpp_optimizer * f * P_gpu / (dp*cp)"
                : run.zero >= 1 ? "bpp_optimizer * f * P_gpu / (dp*cp) (experts / (dp*cp/ep))"
                                : "bpp_optimizer * f * P_gpu",
                opt.assumptions);

    ts_mem_activations(&run, &p, out);

    states = w + g + m + o + out->activations.value;
    ts_term_set(&out->overhead, run.overhead_gib * TS_MEM_GIB + run.fragmentation * states,
                "overhead_gib * 2^30 + fragmentation * (weights + grads + master + optimizer + activations)",
                "CUDA context, NCCL buffers and workspace, plus allocator fragmentation");
    ts_term_set(&out->total, states + out->overhead.value,
                "weights + grads + master + optimizer + activations + overhead",
                "per GPU, first pipeline stage");

    out->host_bytes_per_gpu = host;
    /* Only this job's GPUs on a node share its host RAM. */
    on_node = run.gpus < run.gpus_per_node ? run.gpus : run.gpus_per_node;
    out->host_bytes_per_node = host * (double)on_node;

    ts_mem_deepspeed(&run, &p, out);

    out->hbm_bytes = run.gpu.hbm_bytes;
    out->headroom_bytes = out->hbm_bytes - out->total.value;
    out->fits = out->total.value <= out->hbm_bytes;

    if (!ts_mem_finite(out)) {
        *out = (ts_memory){ 0 };
        return ts_error_set(err, TS_ERANGE, "", "memory figures overflow for these inputs");
    }
    return TS_OK;
}
