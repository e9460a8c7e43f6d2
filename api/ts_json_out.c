/*
 * ts_json_out.c - core result structs -> JSON text (api/CONTRACT.md).
 *
 * Written with ts_jw (ts_jw.c): numbers round-trip, NaN/Inf are never
 * emitted (the writer records the first one and the caller answers 422).
 * Member order follows CONTRACT.md.  Every figure with a human text is
 * written through its row of the output-terms table (ts_terms.c): the key,
 * and the text in the row's kind and unit, as a term, beside the number,
 * or in the object's "human" map (out_num, then out_human at the end).
 *
 * This file: the estimate's objects (inputs, params, memory, compute,
 * goodput, energy, step, checkpoint, sweep) and the writers the others
 * share (ts_json_out_int.h); the search and budget answers are in
 * ts_json_plan.c, the catalogue's (presets, GPUs) in ts_json_list.c.
 */
#include <math.h>
#include <string.h>

#include "ts_api_int.h"
#include "ts_json_out_int.h"
#include "ts_terms.h"

/* A term object {value, human, formula, assumptions}. */
void out_term(ts_jw *w, ts_term_id id, const ts_term *t)
{
    const ts_term_def *d = &ts_terms[id];
    char human[TS_FMT_HUMAN_LEN];
    bool had = w->nonfinite != NULL;
    size_t hl = ts_term_human(human, sizeof human, id, t->value);

    ts_jw_open_(w, d->key, d->klen, '{');
    ts_jw_num(w, "value", t->value);
    if (!had && w->nonfinite != NULL)
        w->nonfinite = d->key; /* name the term, not its "value" */
    ts_jw_strl_(w, "human", 5, human, hl);
    ts_jw_str(w, "formula", t->formula != NULL ? t->formula : "");
    ts_jw_str(w, "assumptions", t->assumptions != NULL ? t->assumptions : "");
    ts_jw_close(w, '}');
}

/* A number of the table: its text beside it (a sibling row), or kept in h
 * for the object's "human" map. */
void out_num(ts_jw *w, human_acc *h, ts_term_id id, double v)
{
    const ts_term_def *d = &ts_terms[id];

    ts_jw_num_(w, d->key, d->klen, v);
    if (d->shape == TS_TERM_SIBLING) {
        char human[TS_FMT_HUMAN_LEN];
        size_t hl = ts_term_human(human, sizeof human, id, v);

        ts_jw_strl_(w, d->human_key, d->hklen, human, hl);
    } else if (h->n < TS_HUMAN_MAX) {
        h->id[h->n] = id;
        h->v[h->n] = v;
        h->n++;
    }
}

/* "human": {key: text, ...} for the numbers out_num kept. */
void out_human(ts_jw *w, const human_acc *h)
{
    size_t i;

    ts_jw_open(w, "human", '{');
    for (i = 0; i < h->n; i++) {
        const ts_term_def *d = &ts_terms[h->id[i]];
        char human[TS_FMT_HUMAN_LEN];
        size_t hl = ts_term_human(human, sizeof human, h->id[i], h->v[i]);

        ts_jw_strl_(w, d->key, d->klen, human, hl);
    }
    ts_jw_close(w, '}');
}

static void put_stage(ts_jw *w, const ts_mem_stage *st)
{
    human_acc h = { 0 };

    ts_jw_open(w, NULL, '{');
    ts_jw_int(w, "stage", st->stage);
    ts_jw_int(w, "layers", st->layers);
    ts_jw_num(w, "in_flight", st->in_flight);
    ts_jw_num(w, "params", st->params);
    out_num(w, &h, TS_T_STAGE_WEIGHTS, st->weights);
    out_num(w, &h, TS_T_STAGE_GRADS, st->grads);
    out_num(w, &h, TS_T_STAGE_MASTER, st->master);
    out_num(w, &h, TS_T_STAGE_OPTIMIZER, st->optimizer);
    out_num(w, &h, TS_T_STAGE_ACTIVATIONS, st->activations);
    out_num(w, &h, TS_T_STAGE_BUFFERS, st->buffers);
    out_num(w, &h, TS_T_STAGE_OVERHEAD, st->overhead);
    out_num(w, &h, TS_T_STAGE_ALLOCATED_PEAK, st->allocated_peak);
    out_num(w, &h, TS_T_STAGE_RESERVED_PEAK, st->reserved_peak);
    out_num(w, &h, TS_T_STAGE_TOTAL, st->total);
    ts_jw_str(w, "peak_phase", ts_phase_name(st->peak_phase));
    out_num(w, &h, TS_T_STAGE_HEADROOM, st->headroom);
    ts_jw_bool(w, "fits", st->fits);
    out_human(w, &h);
    ts_jw_close(w, '}');
}

/* The CUSTOM rows of the registry (core/ts_fields.def) as a request
 * names them, by id. */
static void put_input_custom(ts_jw *w, ts_field_id id, const ts_run *r)
{
    const char *name = ts_fields[id].name;
    size_t nl = ts_fields[id].nlen;

    switch (id) {
    case TS_FI_PARAMS:
        /* With a shape the count is derived (see "params" in the
         * response); null keeps the echo valid as a request. */
        if (r->model.layers > 0)
            ts_jw_null_(w, name, nl);
        else
            ts_jw_num_(w, name, nl, r->model.params);
        break;
    case TS_FI_HBM_GIB:
        ts_jw_num_(w, name, nl, r->gpu.hbm_bytes / 1073741824.0);
        break;
    case TS_FI_MODEL:
        if (r->preset[0] != '\0')
            ts_jw_strl_(w, name, nl, r->preset, strnlen(r->preset, sizeof r->preset));
        else
            ts_jw_null_(w, name, nl);
        break;
    case TS_FI_GPU:
        ts_jw_strl_(w, name, nl, r->gpu.id, strnlen(r->gpu.id, sizeof r->gpu.id));
        break;
    case TS_FI_LORA_TARGETS: {
        char t[128];
        size_t tl = ts_lora_targets_text(r->lora_targets, t, sizeof t);

        ts_jw_strl_(w, name, nl, t, tl < sizeof t ? tl : sizeof t - 1);
        break;
    }
    case TS_FI_LORA_SAVE: {
        char t[64];
        size_t tl = ts_lora_save_text(r->lora_save, t, sizeof t);

        ts_jw_strl_(w, name, nl, t, tl < sizeof t ? tl : sizeof t - 1);
        break;
    }
    case TS_FI_HBM_GB:
        ts_jw_num_(w, name, nl, r->gpu.hbm_bytes / 1e9);
        break;
    case TS_FI_PEAK_TFLOPS:
        ts_jw_num_(w, name, nl, ts_gpu_peak(&r->gpu, r->compute_precision) / 1e12);
        break;
    default:
        break; /* a route's extra: not an input of the run */
    }
}

/* The run's members as a request names them; keep: which (NULL: all). */
void out_inputs(ts_jw *w, const char *key, const ts_run *r, const bool *keep)
{
    size_t i;

    ts_jw_open(w, key, '{');
    /* Same table as the parser: the echo has exactly the request names. */
    for (i = 0; i < TS_FI_SOLVE; i++) {
        const ts_field *b = &ts_fields[i];
        const char *name = b->name;
        size_t nl = b->nlen;
        const void *at = (const char *)r + b->off;

        if (keep != NULL && !keep[i])
            continue;
        switch (b->kind) {
        case TS_FK_INT64:
            ts_jw_int_(w, name, nl, *(const int64_t *)at);
            break;
        case TS_FK_INT:
            ts_jw_int_(w, name, nl, *(const int *)at);
            break;
        case TS_FK_NUM:
            ts_jw_num_(w, name, nl, *(const double *)at);
            break;
        case TS_FK_NUM_OPT:
            /* 0 means "not given" (predicted / catalogue): null round-trips. */
            if (*(const double *)at == 0)
                ts_jw_null_(w, name, nl);
            else
                ts_jw_num_(w, name, nl, *(const double *)at);
            break;
        case TS_FK_BOOL:
            ts_jw_bool_(w, name, nl, *(const bool *)at);
            break;
        case TS_FK_ENUM: {
            /* The name of the member's value (resolved: one of them). */
            int v = *(const int *)at;
            size_t k;

            for (k = 0; b->values[k + 1] != NULL && b->ints[k] != v; k++)
                ;
            ts_jw_str_(w, name, nl, b->values[k]);
            break;
        }
        case TS_FK_CUSTOM:
            put_input_custom(w, (ts_field_id)i, r);
            break;
        }
    }
    ts_jw_close(w, '}');
}

void ts_json_inputs(ts_jw *w, const char *key, const ts_run *r)
{
    out_inputs(w, key, r, NULL);
}

void ts_json_params(ts_jw *w, const char *key, const ts_params *p)
{
    human_acc h = { 0 };

    ts_jw_open(w, key, '{');
    out_num(w, &h, TS_T_PARAMS_TOTAL, p->total);
    out_num(w, &h, TS_T_PARAMS_ACTIVE, p->active);
    ts_jw_num(w, "embedding", p->embedding);
    ts_jw_num(w, "output_head", p->output_head);
    ts_jw_num(w, "per_layer_attn", p->per_layer_attn);
    ts_jw_num(w, "per_layer_mlp", p->per_layer_mlp);
    ts_jw_num(w, "per_layer_norm", p->per_layer_norm);
    ts_jw_num(w, "expert", p->expert);
    ts_jw_num(w, "dense", p->dense);
    ts_jw_bool(w, "from_shape", p->from_shape);
    ts_jw_str(w, "formula", p->formula != NULL ? p->formula : "");
    out_human(w, &h);
    ts_jw_close(w, '}');
}

void ts_json_memory(ts_jw *w, const char *key, const ts_memory *m)
{
    human_acc h = { 0 };

    ts_jw_open(w, key, '{');
    out_num(w, &h, TS_T_MEM_PARAMS_PER_GPU, m->params_per_gpu);
    ts_jw_int(w, "shard_group", m->shard_group);
    {
        human_acc bh = { 0 };

        ts_jw_open(w, "bytes_per_param", '{');
        out_num(w, &bh, TS_T_BPP_WEIGHTS, m->bpp_weights);
        out_num(w, &bh, TS_T_BPP_GRADS, m->bpp_grads);
        out_num(w, &bh, TS_T_BPP_MASTER, m->bpp_master);
        out_num(w, &bh, TS_T_BPP_OPTIMIZER, m->bpp_optimizer);
        out_num(w, &bh, TS_T_BPP_TOTAL, m->bpp_total);
        out_human(w, &bh);
        ts_jw_close(w, '}');
    }
    out_num(w, &h, TS_T_MEM_MODEL_STATE_BYTES, m->model_state_bytes);
    out_num(w, &h, TS_T_MEM_INFERENCE_BYTES, m->inference_bytes);
    out_term(w, TS_T_MEM_WEIGHTS, &m->weights);
    out_term(w, TS_T_MEM_GRADS, &m->grads);
    out_term(w, TS_T_MEM_MASTER, &m->master);
    out_term(w, TS_T_MEM_OPTIMIZER, &m->optimizer);
    out_term(w, TS_T_MEM_ACTIVATIONS, &m->activations);
    out_term(w, TS_T_MEM_BUFFERS, &m->buffers);
    out_term(w, TS_T_MEM_OVERHEAD, &m->overhead);
    out_term(w, TS_T_MEM_TOTAL, &m->total);
    out_term(w, TS_T_MEM_ALLOCATED_PEAK, &m->allocated_peak);
    out_term(w, TS_T_MEM_RESERVED_PEAK, &m->reserved_peak);
    out_term(w, TS_T_MEM_RUNTIME, &m->runtime);
    ts_jw_open(w, "phases", '[');
    {
        int k;
        for (k = 0; k < TS_PHASE_COUNT; k++) {
            human_acc none = { 0 }; /* a phase's only number has its text beside it */

            if (m->phases[k] <= 0)
                continue; /* the phase does not occur (loss off the last stage, inference) */
            ts_jw_open(w, NULL, '{');
            ts_jw_str(w, "name", ts_phase_name((ts_phase)k));
            out_num(w, &none, TS_T_PHASE_BYTES, m->phases[k]);
            ts_jw_close(w, '}');
        }
    }
    ts_jw_close(w, ']');
    ts_jw_str(w, "peak_phase", ts_phase_name(m->peak_phase));
    ts_jw_int(w, "stages_count", m->stages_count);
    ts_jw_int(w, "worst_stage", m->worst_stage);
    ts_jw_open(w, "stages", '[');
    {
        size_t i;
        for (i = 0; i < m->stages_len; i++)
            put_stage(w, &m->stages[i]);
    }
    ts_jw_close(w, ']');
    ts_jw_open(w, "activation_detail", '{');
    ts_jw_num(w, "per_layer", m->act_per_layer);
    ts_jw_num(w, "per_layer_full", m->act_layer_full);
    ts_jw_int(w, "layers_per_stage", m->layers_per_stage);
    ts_jw_int(w, "in_flight", m->in_flight);
    ts_jw_num(w, "embedding_logits", m->act_embedding_logits);
    ts_jw_num(w, "seq2_term", m->act_seq2_term);
    ts_jw_close(w, '}');
    out_term(w, TS_T_MEM_ACTIVATIONS_SEED000, &m->act_seed000);
    out_num(w, &h, TS_T_MEM_HOST_BYTES_PER_GPU, m->host_bytes_per_gpu);
    out_num(w, &h, TS_T_MEM_HOST_BYTES_PER_NODE, m->host_bytes_per_node);
    out_term(w, TS_T_MEM_DEEPSPEED_GPU, &m->deepspeed_gpu);
    out_num(w, &h, TS_T_MEM_HBM_BYTES, m->hbm_bytes);
    out_num(w, &h, TS_T_MEM_HEADROOM_BYTES, m->headroom_bytes);
    ts_jw_bool(w, "fits", m->fits);
    out_human(w, &h);
    ts_jw_close(w, '}');
}

/* Longest assumption or warning line: the numbers are bounded, the
 * words fixed. */
#define TS_NOTE_LEN 512

/* A sliding window narrower than the sequence: what the attention
 * kernel makes of it (core/ts_step_layer.c ts_step_attn_core). */
static void put_window(ts_jw *w, const ts_run *r)
{
    const ts_model *m = &r->model;
    long long n = (long long)ts_model_window_layers(m, (double)r->seq);
    char line[TS_NOTE_LEN];

    if (m->layers <= 0)
        return;
    if (m->sliding_window <= 0) {
        if (m->sliding_layers > 0)
            ts_jw_str(w, NULL,
                      "sliding_layers without sliding_window: every layer attends to the whole "
                      "causal sequence");
        return;
    }
    if (n == 0 || (m->sliding_window == r->seq && r->attention != TS_ATTN_SDPA))
        return;
    if (r->attention == TS_ATTN_FLASH)
        snprintf(line, sizeof line,
                 "sliding_window %lld on %lld of %lld layers: the fused attention computes "
                 "only the band, %.0f keys a query on the mean layer against %.0f for full "
                 "causal attention (flash-attn's window_size; transformers' default sdpa "
                 "computes more: send attention sdpa for that)",
                 (long long)m->sliding_window, n, (long long)m->layers,
                 ts_model_attn_span(m, (double)r->seq), (double)r->seq / 2.0);
    else if (r->attention == TS_ATTN_SDPA)
        snprintf(line, sizeof line,
                 "sliding_window %lld on %lld of %lld layers: transformers gives PyTorch's SDPA "
                 "the band as a dense mask, without is_causal, so its memory-efficient kernel "
                 "computes every key of those layers, twice the causal half",
                 (long long)m->sliding_window, n, (long long)m->layers);
    else
        snprintf(line, sizeof line,
                 "sliding_window %lld: attention %s %s, so the band saves no time",
                 (long long)m->sliding_window, ts_attention_name(r->attention),
                 r->attention == TS_ATTN_EAGER ? "computes the whole s x s scores and masks them"
                                               : "has no window (the causal half)");
    ts_jw_str(w, NULL, line);
}

/* "assumptions": what the answer chose for the run because it gave
 * nothing (issue 25: the global batch, ts_batch_default). */
static void put_assumptions(ts_jw *w, const ts_run *r, bool batch_default)
{
    ts_batch_rule b;
    char line[TS_NOTE_LEN], tok[TS_FMT_HUMAN_LEN];
    int n;

    ts_jw_open(w, "assumptions", '[');
    if (batch_default && ts_batch_default(r, &b, NULL) == TS_OK &&
        b.global_batch == r->global_batch) {
        ts_fmt_human(tok, sizeof tok, (double)r->global_batch * (double)r->seq, TS_FMT_COUNT,
                     "tokens");
        n = snprintf(line, sizeof line,
                     "global_batch not given: %lld sequences (%s) per step = dp %lld x "
                     "micro_batch %lld x %lld micro-batches per pipeline, the larger of %lld "
                     "for about 4M tokens per step (Llama 2's batch, Touvron et al. 2023)",
                     (long long)r->global_batch, tok, (long long)r->dp, (long long)r->micro_batch,
                     (long long)b.micro_batches, (long long)b.m_tokens);
        if (r->pp > 1 && n > 0 && (size_t)n < sizeof line)
            snprintf(line + n, sizeof line - (size_t)n,
                     " and %lld so that the pipeline bubble (p-1)/(v m) stays at most 1/%d "
                     "of the compute (Narayanan et al. 2021, section 2.2; pp %lld, vpp %lld%s)",
                     (long long)b.m_bubble, TS_BATCH_BUBBLE_DIV, (long long)r->pp,
                     (long long)r->vpp,
                     r->pp_schedule == TS_PP_INTERLEAVED ? ", a multiple of pp" : "");
        ts_jw_str(w, NULL, line);
    }
    put_window(w, r);
    ts_jw_close(w, ']');
}

/* "warnings": each overhead that costs more than 1/TS_STEP_WARN_DIV of
 * the step (ts_step.warnings), with what it is and what shrinks it. */
static void put_warnings(ts_jw *w, const ts_step *s, const ts_run *r, bool batch_default)
{
    double t = s->step_time.value;
    char line[TS_NOTE_LEN];

    ts_jw_open(w, "warnings", '[');
    if (!(t > 0)) {
        ts_jw_close(w, ']');
        return;
    }
    if (s->warnings & TS_STEP_WARN_BUBBLE) {
        snprintf(line, sizeof line,
                 "pipeline bubble: %.0f %% of the step (pp %lld, vpp %lld, %.0f micro-batches per "
                 "pipeline; idle (p-1)/(v m) of the compute, Narayanan et al. 2021): %s",
                 100.0 * s->pp_bubble / t, (long long)r->pp, (long long)r->vpp, s->micro_batches,
                 batch_default ? "the default batch keeps the bubble itself under 1/4, the rest "
                                 "is point-to-point sends: fewer stages (pp) shrink it"
                               : "a larger global_batch (more micro-batches) or the interleaved "
                                 "schedule (pp_schedule, vpp) shrinks it");
        ts_jw_str(w, NULL, line);
    }
    if (s->warnings & TS_STEP_WARN_COMM) {
        snprintf(line, sizeof line,
                 "exposed communication: %.0f %% of the step (tp %.3g s, dp %.3g s, cp %.3g s, "
                 "ep %.3g s, pipeline sends %.3g s not hidden behind compute): keep tp, cp and ep "
                 "inside a node (gpus_per_node) or lower them",
                 100.0 * s->exposed_comm / t, s->tp_comm, s->dp_comm, s->cp_comm, s->ep_comm,
                 s->pp_p2p);
        ts_jw_str(w, NULL, line);
    }
    if (s->warnings & TS_STEP_WARN_UNDERFILL) {
        snprintf(line, sizeof line,
                 "under-filled GPU: %.0f %% of the step is matmul time beyond the GPU's matmul "
                 "rate (%.0f tokens per GPU per micro-batch, matmuls at %.0f %% of the peak): a "
                 "larger micro_batch or seq, or less tp, cp or ep, makes the GEMMs larger",
                 100.0 * s->underfill / t,
                 (double)r->seq * (double)r->micro_batch / (double)(r->cp > 0 ? r->cp : 1),
                 100.0 * s->gemm_efficiency);
        ts_jw_str(w, NULL, line);
    }
    if (s->warnings & TS_STEP_WARN_MEMORY) {
        snprintf(line, sizeof line,
                 "memory near full: the plan needs %.1f %% of the GPU's HBM, inside the %.0f %% "
                 "margin search keeps free by default: PyTorch's caching allocator may find no "
                 "cached block that "
                 "fits, free its cache and retry cudaMalloc (num_alloc_retries in "
                 "torch.cuda.memory_stats), stalling the GPU each time, and repeated retries "
                 "collapse throughput (mosaicml/composer#1998); the step time assumes none. A "
                 "smaller micro_batch, more recompute or more sharding leaves room",
                 100.0 * s->memory_fraction, 100.0 * TS_SEARCH_MARGIN);
        ts_jw_str(w, NULL, line);
    }
    ts_jw_close(w, ']');
}

void ts_json_compute(ts_jw *w, const char *key, const ts_compute *c, const ts_run *r,
                     bool batch_default)
{
    human_acc h = { 0 };

    ts_jw_open(w, key, '{');
    out_num(w, &h, TS_T_CMP_TOKENS, c->tokens);
    ts_jw_num(w, "params_active", c->params_active);
    out_term(w, TS_T_CMP_MODEL_FLOPS, &c->model_flops);
    out_term(w, TS_T_CMP_MODEL_FLOPS_ATTN, &c->model_flops_attn);
    out_term(w, TS_T_CMP_HARDWARE_FLOPS, &c->hardware_flops);
    out_term(w, TS_T_CMP_GPU_HOURS, &c->gpu_hours);
    out_term(w, TS_T_CMP_WALL_SECONDS, &c->wall_seconds);
    out_num(w, &h, TS_T_CMP_PEAK_FLOPS, c->peak_flops);
    out_num(w, &h, TS_T_CMP_MFU, c->mfu);
    out_num(w, &h, TS_T_CMP_HFU, c->hfu);
    ts_jw_num(w, "wall_days", c->wall_days);
    out_num(w, &h, TS_T_CMP_GPU_YEARS, c->gpu_years);
    out_num(w, &h, TS_T_CMP_TOKENS_PER_SECOND, c->tokens_per_second);
    out_num(w, &h, TS_T_CMP_TOKENS_PER_GPU_SECOND, c->tokens_per_gpu_second);
    out_num(w, &h, TS_T_CMP_STEPS, c->steps);
    out_num(w, &h, TS_T_CMP_STEP_SECONDS, c->step_seconds);
    out_num(w, &h, TS_T_CMP_ACHIEVED_FLOPS_PER_GPU, c->achieved_flops_per_gpu);
    ts_jw_str(w, "mfu_source", c->mfu_predicted ? "predicted" : "input");
    out_num(w, &h, TS_T_CMP_PREDICTED_MFU, c->predicted_mfu);
    ts_jw_str(w, "mfu_convention", c->step.mfu_convention);
    out_term(w, TS_T_CMP_STEP_TIME, &c->step_time);
    ts_json_step(w, "step", &c->step);
    out_term(w, TS_T_CMP_COST_USD, &c->cost_usd);
    ts_json_goodput(w, "goodput", &c->goodput);
    ts_json_energy(w, "energy", &c->energy);
    put_assumptions(w, r, batch_default);
    put_warnings(w, &c->step, r, batch_default);
    out_human(w, &h);
    ts_jw_close(w, '}');
}

void ts_json_goodput(ts_jw *w, const char *key, const ts_goodput *g)
{
    human_acc h = { 0 };

    ts_jw_open(w, key, '{');
    out_term(w, TS_T_GP_WALL_SECONDS, &g->wall_seconds);
    ts_jw_num(w, "wall_days", g->wall_days);
    out_term(w, TS_T_GP_USEFUL_FRACTION, &g->useful_fraction);
    out_num(w, &h, TS_T_GP_INTERRUPTIONS, g->interruptions);
    out_num(w, &h, TS_T_GP_CHECKPOINT_S, g->checkpoint_s);
    out_num(w, &h, TS_T_GP_LOST_S, g->lost_s);
    out_num(w, &h, TS_T_GP_LOST_PER_INTERRUPTION_S, g->lost_per_interruption_s);
    out_num(w, &h, TS_T_GP_GPU_HOURS, g->gpu_hours);
    out_num(w, &h, TS_T_GP_COST_USD, g->cost_usd);
    out_num(w, &h, TS_T_GP_JOB_MTBF_S, g->job_mtbf_s);
    out_num(w, &h, TS_T_GP_INTERVAL_S, g->interval_s);
    out_num(w, &h, TS_T_GP_WRITE_S, g->write_s);
    out_num(w, &h, TS_T_GP_RELAUNCH_S, g->relaunch_s);
    out_num(w, &h, TS_T_GP_RESTORE_S, g->restore_s);
    out_num(w, &h, TS_T_GP_RESTART_S, g->restart_s);
    out_num(w, &h, TS_T_GP_FAILURE_FREE_S, g->failure_free_s);
    out_num(w, &h, TS_T_GP_DALY_INTERVAL_S, g->daly_interval_s);
    out_num(w, &h, TS_T_GP_USEFUL_FRACTION_DALY, g->useful_fraction_daly);
    out_human(w, &h);
    ts_jw_close(w, '}');
}

void ts_json_energy(ts_jw *w, const char *key, const ts_energy *e)
{
    human_acc h = { 0 };

    ts_jw_open(w, key, '{');
    out_term(w, TS_T_EN_ENERGY_WH, &e->energy_wh);
    out_term(w, TS_T_EN_CO2E_T, &e->co2e_t);
    out_num(w, &h, TS_T_EN_GPU_HOURS, e->gpu_hours);
    out_num(w, &h, TS_T_EN_GPU_WATTS, e->gpu_watts);
    out_num(w, &h, TS_T_EN_HOST_WATTS, e->host_watts);
    out_num(w, &h, TS_T_EN_PUE, e->pue);
    out_num(w, &h, TS_T_EN_GRID_KG_PER_KWH, e->grid_kg_per_kwh);
    out_num(w, &h, TS_T_EN_FACILITY_W, e->facility_w);
    ts_jw_str(w, "power_source", e->power_source != NULL ? e->power_source : "");
    out_human(w, &h);
    ts_jw_close(w, '}');
}

void ts_json_step(ts_jw *w, const char *key, const ts_step *s)
{
    human_acc h = { 0 };

    ts_jw_open(w, key, '{');
    out_num(w, &h, TS_T_STEP_COMPUTE, s->compute);
    out_num(w, &h, TS_T_STEP_RECOMPUTE, s->recompute);
    out_num(w, &h, TS_T_STEP_TP_COMM, s->tp_comm);
    out_num(w, &h, TS_T_STEP_PP_BUBBLE, s->pp_bubble);
    out_num(w, &h, TS_T_STEP_PP_P2P, s->pp_p2p);
    out_num(w, &h, TS_T_STEP_DP_COMM, s->dp_comm);
    out_num(w, &h, TS_T_STEP_CP_COMM, s->cp_comm);
    out_num(w, &h, TS_T_STEP_EP_COMM, s->ep_comm);
    out_num(w, &h, TS_T_STEP_OPTIMIZER, s->optimizer);
    out_num(w, &h, TS_T_STEP_OFFLOAD, s->offload);
    out_num(w, &h, TS_T_STEP_EXPOSED_COMM, s->exposed_comm);
    out_num(w, &h, TS_T_STEP_OVERLAPPED_COMM, s->overlapped_comm);
    ts_jw_num(w, "micro_batches", s->micro_batches);
    out_num(w, &h, TS_T_STEP_GEMM_EFFICIENCY, s->gemm_efficiency);
    out_num(w, &h, TS_T_STEP_UNDERFILL, s->underfill);
    ts_jw_num(w, "model_flops_per_step", s->model_flops);
    ts_jw_num(w, "tokens_per_second", s->tokens_per_second);
    ts_jw_num(w, "tokens_per_gpu_second", s->tokens_per_gpu_second);
    ts_jw_num(w, "nvlink_bus_bytes_per_s", s->nvlink_bw);
    ts_jw_num(w, "nvlink_mesh_peers", s->nvlink_peers);
    ts_jw_num(w, "net_bus_bytes_per_s", s->net_bw);
    ts_jw_bool(w, "from_shape", s->from_shape);
    out_human(w, &h);
    ts_jw_close(w, '}');
}

void ts_json_checkpoint(ts_jw *w, const char *key, const ts_ckpt *k)
{
    static const char *const tier_names[TS_TIER_COUNT] = { "nvme", "shared", "object" };
    human_acc h = { 0 };
    size_t i;

    ts_jw_open(w, key, '{');
    out_term(w, TS_T_CK_FULL_BYTES, &k->full_bytes);
    out_term(w, TS_T_CK_WEIGHTS_BYTES, &k->weights_bytes);
    out_term(w, TS_T_CK_SHARD_BYTES_PER_GPU, &k->shard_bytes_per_gpu);
    out_term(w, TS_T_CK_YOUNG_INTERVAL_S, &k->young_interval_s);
    out_term(w, TS_T_CK_DALY_INTERVAL_S, &k->daly_interval_s);
    out_term(w, TS_T_CK_WASTE_FRACTION, &k->waste_fraction);
    ts_jw_num(w, "bpp_full", k->bpp_full);
    out_num(w, &h, TS_T_CK_WRITERS, (double)k->writers); /* < 2^53: written as an integer */
    out_num(w, &h, TS_T_CK_BYTES_PER_NODE, k->bytes_per_node);
    out_num(w, &h, TS_T_CK_JOB_MTBF_S, k->job_mtbf_s);
    out_num(w, &h, TS_T_CK_BLOCKING_WRITE_S, k->blocking_write_s);
    out_num(w, &h, TS_T_CK_WASTE_FRACTION_SCHEDULE, k->waste_fraction_schedule);
    ts_jw_open(w, "tiers", '[');
    for (i = 0; i < TS_TIER_COUNT; i++) {
        const ts_ckpt_tier *t = &k->tiers[i];
        human_acc th = { 0 };

        ts_jw_open(w, NULL, '{');
        ts_jw_str(w, "name", t->name != NULL ? t->name : tier_names[i]);
        out_num(w, &th, TS_T_TIER_INTERVAL_S, t->interval_s);
        out_num(w, &th, TS_T_TIER_WRITE_S, t->write_s);
        out_num(w, &th, TS_T_TIER_RESTORE_S, t->restore_s);
        out_num(w, &th, TS_T_TIER_BANDWIDTH_PER_WRITER, t->bandwidth_per_writer);
        out_num(w, &th, TS_T_TIER_KEEP, (double)t->keep);
        out_num(w, &th, TS_T_TIER_STORAGE_BYTES, t->storage_bytes);
        out_num(w, &th, TS_T_TIER_OVERHEAD_FRACTION, t->overhead_fraction);
        ts_jw_str(w, "formula", t->formula != NULL ? t->formula : "");
        out_human(w, &th);
        ts_jw_close(w, '}');
    }
    ts_jw_close(w, ']');
    out_human(w, &h);
    ts_jw_close(w, '}');
}

void ts_json_sweep(ts_jw *w, const char *key, const ts_sweep_point *pts, size_t n)
{
    size_t i;

    ts_jw_open(w, key, '[');
    for (i = 0; i < n && i < TS_SWEEP_MAX; i++) {
        const ts_sweep_point *p = &pts[i];

        ts_jw_open(w, NULL, '{');
        ts_jw_int(w, "dp", p->dp);
        ts_jw_int(w, "gpus", p->gpus);
        ts_jw_int(w, "global_batch", p->global_batch);
        ts_jw_num(w, "weights", p->weights);
        ts_jw_num(w, "grads", p->grads);
        ts_jw_num(w, "master", p->master);
        ts_jw_num(w, "optimizer", p->optimizer);
        ts_jw_num(w, "activations", p->activations);
        ts_jw_num(w, "buffers", p->buffers);
        ts_jw_num(w, "overhead", p->overhead);
        ts_jw_num(w, "total", p->total);
        ts_jw_num(w, "ckpt_shard_bytes", p->ckpt_shard_bytes);
        ts_jw_bool(w, "fits", p->fits);
        if (p->timed) {
            ts_jw_num(w, "step_seconds", p->step_seconds);
            ts_jw_num(w, "wall_seconds", p->wall_seconds);
            ts_jw_num(w, "mfu", p->mfu);
        }
        ts_jw_close(w, '}');
    }
    ts_jw_close(w, ']');
}
