/*
 * ts_json_out.c - core result structs -> JSON text (api/CONTRACT.md).
 *
 * Written with ts_jw (ts_jw.c): numbers round-trip, NaN/Inf are never
 * emitted (the writer records the first one and the caller answers 422).
 * Member order follows CONTRACT.md.  Every figure with a human text is
 * written through its row of the output-terms table (ts_terms.c): the key,
 * and the text in the row's kind and unit, as a term, beside the number,
 * or in the object's "human" map (put_num, then put_human at the end).
 */
#include <math.h>
#include <string.h>

#include "ts_api_int.h"
#include "ts_catalogue.h"
#include "ts_terms.h"

/* The numbers of one object whose texts go in its "human" map; a local of
 * the writing function (no state outlives a response).  More than the
 * largest object has (TS_TO_STEP: 13 rows); tests/api checks that every
 * map is complete. */
#define TS_HUMAN_MAX 24

typedef struct human_acc {
    size_t n;
    ts_term_id id[TS_HUMAN_MAX];
    double v[TS_HUMAN_MAX];
} human_acc;

/* A term object {value, human, formula, assumptions}. */
static void put_term(ts_jw *w, ts_term_id id, const ts_term *t)
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
static void put_num(ts_jw *w, human_acc *h, ts_term_id id, double v)
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

/* "human": {key: text, ...} for the numbers put_num kept. */
static void put_human(ts_jw *w, const human_acc *h)
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
    put_num(w, &h, TS_T_STAGE_WEIGHTS, st->weights);
    put_num(w, &h, TS_T_STAGE_GRADS, st->grads);
    put_num(w, &h, TS_T_STAGE_MASTER, st->master);
    put_num(w, &h, TS_T_STAGE_OPTIMIZER, st->optimizer);
    put_num(w, &h, TS_T_STAGE_ACTIVATIONS, st->activations);
    put_num(w, &h, TS_T_STAGE_BUFFERS, st->buffers);
    put_num(w, &h, TS_T_STAGE_OVERHEAD, st->overhead);
    put_num(w, &h, TS_T_STAGE_ALLOCATED_PEAK, st->allocated_peak);
    put_num(w, &h, TS_T_STAGE_RESERVED_PEAK, st->reserved_peak);
    put_num(w, &h, TS_T_STAGE_TOTAL, st->total);
    ts_jw_str(w, "peak_phase", ts_phase_name(st->peak_phase));
    put_num(w, &h, TS_T_STAGE_HEADROOM, st->headroom);
    ts_jw_bool(w, "fits", st->fits);
    put_human(w, &h);
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
static void put_inputs(ts_jw *w, const char *key, const ts_run *r, const bool *keep)
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
    put_inputs(w, key, r, NULL);
}

/* A search result's "request" (issue 25): what POST /v1/plan needs to
 * estimate the very run the search ranked.  The query's members as its
 * sources gave them (the request's own, and an import's values, written
 * out: the request carries no import text), the layout the search chose
 * over them, always; what a preset or catalogue model sets comes back
 * from "model".  grad_precision is left to follow the framework, as the
 * search made it, unless it was given. */
static void put_request(ts_jw *w, const ts_api_req *req, const ts_search_result *x)
{
    static const ts_field_id layout[] = {
        TS_FI_GPUS, TS_FI_DP, TS_FI_TP, TS_FI_PP, TS_FI_CP, TS_FI_EP, TS_FI_MICRO_BATCH,
        TS_FI_GLOBAL_BATCH, TS_FI_ZERO, TS_FI_FRAMEWORK, TS_FI_RECOMPUTE,
        TS_FI_SEQUENCE_PARALLEL, TS_FI_PP_SCHEDULE, TS_FI_VPP, TS_FI_FIRST_STAGE_LAYERS,
        TS_FI_LAST_STAGE_LAYERS,
    };
    bool keep[TS_FI_COUNT];
    ts_run run = req->run;
    size_t i;

    for (i = 0; i < TS_FI_COUNT; i++)
        keep[i] = req->source[i] != TS_SRC_DEFAULT && req->source[i] != TS_SRC_PRESET &&
                  req->source[i] != TS_SRC_CATALOGUE;
    for (i = 0; i < sizeof layout / sizeof layout[0]; i++)
        keep[layout[i]] = true;
    run.gpus = x->gpus;
    run.dp = x->dp;
    run.tp = x->tp;
    run.pp = x->pp;
    run.cp = x->cp;
    run.ep = x->ep;
    run.micro_batch = x->micro_batch;
    run.global_batch = x->global_batch;
    run.zero = x->zero;
    run.framework = x->framework;
    run.recompute = x->recompute;
    run.sequence_parallel = x->sequence_parallel;
    run.pp_schedule = x->pp_schedule;
    run.vpp = x->vpp;
    run.first_stage_layers = x->first_stage_layers;
    run.last_stage_layers = x->last_stage_layers;
    run.grad_precision = x->grad_precision;
    put_inputs(w, "request", &run, keep);
}

void ts_json_params(ts_jw *w, const char *key, const ts_params *p)
{
    human_acc h = { 0 };

    ts_jw_open(w, key, '{');
    put_num(w, &h, TS_T_PARAMS_TOTAL, p->total);
    put_num(w, &h, TS_T_PARAMS_ACTIVE, p->active);
    ts_jw_num(w, "embedding", p->embedding);
    ts_jw_num(w, "output_head", p->output_head);
    ts_jw_num(w, "per_layer_attn", p->per_layer_attn);
    ts_jw_num(w, "per_layer_mlp", p->per_layer_mlp);
    ts_jw_num(w, "per_layer_norm", p->per_layer_norm);
    ts_jw_num(w, "expert", p->expert);
    ts_jw_num(w, "dense", p->dense);
    ts_jw_bool(w, "from_shape", p->from_shape);
    ts_jw_str(w, "formula", p->formula != NULL ? p->formula : "");
    put_human(w, &h);
    ts_jw_close(w, '}');
}

void ts_json_memory(ts_jw *w, const char *key, const ts_memory *m)
{
    human_acc h = { 0 };

    ts_jw_open(w, key, '{');
    put_num(w, &h, TS_T_MEM_PARAMS_PER_GPU, m->params_per_gpu);
    ts_jw_int(w, "shard_group", m->shard_group);
    {
        human_acc bh = { 0 };

        ts_jw_open(w, "bytes_per_param", '{');
        put_num(w, &bh, TS_T_BPP_WEIGHTS, m->bpp_weights);
        put_num(w, &bh, TS_T_BPP_GRADS, m->bpp_grads);
        put_num(w, &bh, TS_T_BPP_MASTER, m->bpp_master);
        put_num(w, &bh, TS_T_BPP_OPTIMIZER, m->bpp_optimizer);
        put_num(w, &bh, TS_T_BPP_TOTAL, m->bpp_total);
        put_human(w, &bh);
        ts_jw_close(w, '}');
    }
    put_num(w, &h, TS_T_MEM_MODEL_STATE_BYTES, m->model_state_bytes);
    put_num(w, &h, TS_T_MEM_INFERENCE_BYTES, m->inference_bytes);
    put_term(w, TS_T_MEM_WEIGHTS, &m->weights);
    put_term(w, TS_T_MEM_GRADS, &m->grads);
    put_term(w, TS_T_MEM_MASTER, &m->master);
    put_term(w, TS_T_MEM_OPTIMIZER, &m->optimizer);
    put_term(w, TS_T_MEM_ACTIVATIONS, &m->activations);
    put_term(w, TS_T_MEM_BUFFERS, &m->buffers);
    put_term(w, TS_T_MEM_OVERHEAD, &m->overhead);
    put_term(w, TS_T_MEM_TOTAL, &m->total);
    put_term(w, TS_T_MEM_ALLOCATED_PEAK, &m->allocated_peak);
    put_term(w, TS_T_MEM_RESERVED_PEAK, &m->reserved_peak);
    put_term(w, TS_T_MEM_RUNTIME, &m->runtime);
    ts_jw_open(w, "phases", '[');
    {
        int k;
        for (k = 0; k < TS_PHASE_COUNT; k++) {
            human_acc none = { 0 }; /* a phase's only number has its text beside it */

            if (m->phases[k] <= 0)
                continue; /* the phase does not occur (loss off the last stage, inference) */
            ts_jw_open(w, NULL, '{');
            ts_jw_str(w, "name", ts_phase_name((ts_phase)k));
            put_num(w, &none, TS_T_PHASE_BYTES, m->phases[k]);
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
    put_term(w, TS_T_MEM_ACTIVATIONS_SEED000, &m->act_seed000);
    put_num(w, &h, TS_T_MEM_HOST_BYTES_PER_GPU, m->host_bytes_per_gpu);
    put_num(w, &h, TS_T_MEM_HOST_BYTES_PER_NODE, m->host_bytes_per_node);
    put_term(w, TS_T_MEM_DEEPSPEED_GPU, &m->deepspeed_gpu);
    put_num(w, &h, TS_T_MEM_HBM_BYTES, m->hbm_bytes);
    put_num(w, &h, TS_T_MEM_HEADROOM_BYTES, m->headroom_bytes);
    ts_jw_bool(w, "fits", m->fits);
    put_human(w, &h);
    ts_jw_close(w, '}');
}

/* Longest assumption or warning line: the numbers are bounded, the
 * words fixed. */
#define TS_NOTE_LEN 512

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
        ts_fmt_human(tok, sizeof tok, (double)r->global_batch * (double)r->seq,
                     TS_FMT_COUNT, "tokens");
        n = snprintf(line, sizeof line,
                     "global_batch not given: %lld sequences (%s) per step = dp %lld x "
                     "micro_batch %lld x %lld micro-batches per pipeline, the larger of %lld "
                     "for about 4M tokens per step (Llama 2's batch, Touvron et al. 2023)",
                     (long long)r->global_batch, tok, (long long)r->dp,
                     (long long)r->micro_batch, (long long)b.micro_batches,
                     (long long)b.m_tokens);
        if (r->pp > 1 && n > 0 && (size_t)n < sizeof line)
            snprintf(line + n, sizeof line - (size_t)n,
                     " and %lld so that the pipeline bubble (p-1)/(v m) stays at most 1/%d "
                     "of the compute (Narayanan et al. 2021, section 2.2; pp %lld, vpp %lld%s)",
                     (long long)b.m_bubble, TS_BATCH_BUBBLE_DIV, (long long)r->pp,
                     (long long)r->vpp,
                     r->pp_schedule == TS_PP_INTERLEAVED ? ", a multiple of pp" : "");
        ts_jw_str(w, NULL, line);
    }
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
    ts_jw_close(w, ']');
}

void ts_json_compute(ts_jw *w, const char *key, const ts_compute *c, const ts_run *r,
                     bool batch_default)
{
    human_acc h = { 0 };

    ts_jw_open(w, key, '{');
    put_num(w, &h, TS_T_CMP_TOKENS, c->tokens);
    ts_jw_num(w, "params_active", c->params_active);
    put_term(w, TS_T_CMP_MODEL_FLOPS, &c->model_flops);
    put_term(w, TS_T_CMP_MODEL_FLOPS_ATTN, &c->model_flops_attn);
    put_term(w, TS_T_CMP_HARDWARE_FLOPS, &c->hardware_flops);
    put_term(w, TS_T_CMP_GPU_HOURS, &c->gpu_hours);
    put_term(w, TS_T_CMP_WALL_SECONDS, &c->wall_seconds);
    put_num(w, &h, TS_T_CMP_PEAK_FLOPS, c->peak_flops);
    put_num(w, &h, TS_T_CMP_MFU, c->mfu);
    put_num(w, &h, TS_T_CMP_HFU, c->hfu);
    ts_jw_num(w, "wall_days", c->wall_days);
    put_num(w, &h, TS_T_CMP_GPU_YEARS, c->gpu_years);
    put_num(w, &h, TS_T_CMP_TOKENS_PER_SECOND, c->tokens_per_second);
    put_num(w, &h, TS_T_CMP_TOKENS_PER_GPU_SECOND, c->tokens_per_gpu_second);
    put_num(w, &h, TS_T_CMP_STEPS, c->steps);
    put_num(w, &h, TS_T_CMP_STEP_SECONDS, c->step_seconds);
    put_num(w, &h, TS_T_CMP_ACHIEVED_FLOPS_PER_GPU, c->achieved_flops_per_gpu);
    ts_jw_str(w, "mfu_source", c->mfu_predicted ? "predicted" : "input");
    put_num(w, &h, TS_T_CMP_PREDICTED_MFU, c->predicted_mfu);
    ts_jw_str(w, "mfu_convention", c->step.mfu_convention);
    put_term(w, TS_T_CMP_STEP_TIME, &c->step_time);
    ts_json_step(w, "step", &c->step);
    put_term(w, TS_T_CMP_COST_USD, &c->cost_usd);
    ts_json_goodput(w, "goodput", &c->goodput);
    ts_json_energy(w, "energy", &c->energy);
    put_assumptions(w, r, batch_default);
    put_warnings(w, &c->step, r, batch_default);
    put_human(w, &h);
    ts_jw_close(w, '}');
}

void ts_json_goodput(ts_jw *w, const char *key, const ts_goodput *g)
{
    human_acc h = { 0 };

    ts_jw_open(w, key, '{');
    put_term(w, TS_T_GP_WALL_SECONDS, &g->wall_seconds);
    ts_jw_num(w, "wall_days", g->wall_days);
    put_term(w, TS_T_GP_USEFUL_FRACTION, &g->useful_fraction);
    put_num(w, &h, TS_T_GP_INTERRUPTIONS, g->interruptions);
    put_num(w, &h, TS_T_GP_CHECKPOINT_S, g->checkpoint_s);
    put_num(w, &h, TS_T_GP_LOST_S, g->lost_s);
    put_num(w, &h, TS_T_GP_LOST_PER_INTERRUPTION_S, g->lost_per_interruption_s);
    put_num(w, &h, TS_T_GP_GPU_HOURS, g->gpu_hours);
    put_num(w, &h, TS_T_GP_COST_USD, g->cost_usd);
    put_num(w, &h, TS_T_GP_JOB_MTBF_S, g->job_mtbf_s);
    put_num(w, &h, TS_T_GP_INTERVAL_S, g->interval_s);
    put_num(w, &h, TS_T_GP_WRITE_S, g->write_s);
    put_num(w, &h, TS_T_GP_RELAUNCH_S, g->relaunch_s);
    put_num(w, &h, TS_T_GP_RESTORE_S, g->restore_s);
    put_num(w, &h, TS_T_GP_RESTART_S, g->restart_s);
    put_num(w, &h, TS_T_GP_FAILURE_FREE_S, g->failure_free_s);
    put_num(w, &h, TS_T_GP_DALY_INTERVAL_S, g->daly_interval_s);
    put_num(w, &h, TS_T_GP_USEFUL_FRACTION_DALY, g->useful_fraction_daly);
    put_human(w, &h);
    ts_jw_close(w, '}');
}

void ts_json_energy(ts_jw *w, const char *key, const ts_energy *e)
{
    human_acc h = { 0 };

    ts_jw_open(w, key, '{');
    put_term(w, TS_T_EN_ENERGY_WH, &e->energy_wh);
    put_term(w, TS_T_EN_CO2E_T, &e->co2e_t);
    put_num(w, &h, TS_T_EN_GPU_HOURS, e->gpu_hours);
    put_num(w, &h, TS_T_EN_GPU_WATTS, e->gpu_watts);
    put_num(w, &h, TS_T_EN_HOST_WATTS, e->host_watts);
    put_num(w, &h, TS_T_EN_PUE, e->pue);
    put_num(w, &h, TS_T_EN_GRID_KG_PER_KWH, e->grid_kg_per_kwh);
    put_num(w, &h, TS_T_EN_FACILITY_W, e->facility_w);
    ts_jw_str(w, "power_source", e->power_source != NULL ? e->power_source : "");
    put_human(w, &h);
    ts_jw_close(w, '}');
}

/* The texts of the one-line summary, each its row's (the dashboard and
 * the CLI print the same). */
static void put_summary(ts_jw *w, const ts_sizing_out *o, const ts_plan *plan)
{
    char p[TS_FMT_HUMAN_LEN], t[TS_FMT_HUMAN_LEN], d[TS_FMT_HUMAN_LEN], usd[TS_FMT_HUMAN_LEN];
    char e[TS_FMT_HUMAN_LEN], co2[TS_FMT_HUMAN_LEN], line[512];
    const ts_compute *c = &plan->compute;

    ts_term_human(p, sizeof p, TS_T_BG_PARAMS, o->params);
    ts_term_human(t, sizeof t, TS_T_BG_TOKENS, o->tokens);
    ts_term_human(d, sizeof d, TS_T_GP_WALL_SECONDS, c->goodput.wall_seconds.value);
    ts_term_human(usd, sizeof usd, TS_T_GP_COST_USD, c->goodput.cost_usd);
    ts_term_human(e, sizeof e, TS_T_EN_ENERGY_WH, c->energy.energy_wh.value);
    ts_term_human(co2, sizeof co2, TS_T_EN_CO2E_T, c->energy.co2e_t.value);
    snprintf(line, sizeof line, "With this budget: %s-parameter model on %s tokens, %s%s%s, %s, %s",
             p, t, d, c->goodput.cost_usd > 0 ? ", " : "", c->goodput.cost_usd > 0 ? usd : "",
             e, co2);
    ts_jw_str(w, "summary", line);
}

void ts_json_budget(ts_jw *w, const char *key, const ts_api_req *req, const ts_sizing_out *o,
                    const ts_plan *plan)
{
    static const char *const modes[TS_SIZE_MODE_COUNT] = {
        [TS_SIZE_OPTIMAL] = "compute_optimal", [TS_SIZE_RATIO] = "tokens_per_param",
        [TS_SIZE_MODEL] = "model",
    };
    const ts_sizing_cfg *c = &req->budget;
    const ts_law *law = ts_law_get(c->law);
    human_acc h = { 0 };
    ts_term flops;

    ts_jw_open(w, key, '{');
    ts_jw_str(w, "basis", c->field);
    ts_jw_str(w, "mode", modes[c->mode]);
    ts_jw_str(w, "scaling_law", law->name);
    ts_jw_open(w, "law", '{');
    ts_jw_num(w, "E", law->E);
    ts_jw_num(w, "A", law->A);
    ts_jw_num(w, "B", law->B);
    ts_jw_num(w, "alpha", law->alpha);
    ts_jw_num(w, "beta", law->beta);
    ts_jw_str(w, "source", law->source);
    ts_jw_close(w, '}');
    ts_jw_int(w, "gpus", o->run.gpus);
    put_num(w, &h, TS_T_BG_GPU_HOURS, o->gpu_hours);
    put_num(w, &h, TS_T_BG_DAYS, o->gpu_hours / (double)o->run.gpus / 24.0);
    put_num(w, &h, TS_T_BG_USD, o->gpu_hours * o->run.gpu_hour_usd);
    put_num(w, &h, TS_T_BG_PEAK_FLOPS, o->peak_flops);
    put_num(w, &h, TS_T_BG_MFU, o->mfu);
    put_num(w, &h, TS_T_BG_USEFUL_FRACTION, o->useful_fraction);
    flops.value = o->flops;
    flops.formula = "gpu_hours * 3600 * peak_flops * mfu * useful_fraction";
    flops.assumptions = "the GPU time spent at the plan's MFU, less what failures, restarts and "
                        "checkpoint writes take (compute.goodput); 6 N D model FLOPs";
    put_term(w, TS_T_BG_FLOPS, &flops);
    put_num(w, &h, TS_T_BG_OPTIMAL_PARAMS, o->optimal_params);
    put_num(w, &h, TS_T_BG_OPTIMAL_TOKENS, o->optimal_tokens);
    put_num(w, &h, TS_T_BG_OPTIMAL_LOSS, o->optimal_loss);
    put_num(w, &h, TS_T_BG_PARAMS, o->params);
    put_num(w, &h, TS_T_BG_TOKENS, o->tokens);
    put_num(w, &h, TS_T_BG_TOKENS_PER_PARAM, o->tokens_per_param);
    put_num(w, &h, TS_T_BG_LOSS, o->loss);
    ts_jw_int(w, "iterations", o->iterations);
    ts_jw_bool(w, "converged", o->converged);
    put_summary(w, o, plan);
    put_human(w, &h);
    ts_jw_close(w, '}');
}

void ts_json_step(ts_jw *w, const char *key, const ts_step *s)
{
    human_acc h = { 0 };

    ts_jw_open(w, key, '{');
    put_num(w, &h, TS_T_STEP_COMPUTE, s->compute);
    put_num(w, &h, TS_T_STEP_RECOMPUTE, s->recompute);
    put_num(w, &h, TS_T_STEP_TP_COMM, s->tp_comm);
    put_num(w, &h, TS_T_STEP_PP_BUBBLE, s->pp_bubble);
    put_num(w, &h, TS_T_STEP_PP_P2P, s->pp_p2p);
    put_num(w, &h, TS_T_STEP_DP_COMM, s->dp_comm);
    put_num(w, &h, TS_T_STEP_CP_COMM, s->cp_comm);
    put_num(w, &h, TS_T_STEP_EP_COMM, s->ep_comm);
    put_num(w, &h, TS_T_STEP_OPTIMIZER, s->optimizer);
    put_num(w, &h, TS_T_STEP_OFFLOAD, s->offload);
    put_num(w, &h, TS_T_STEP_EXPOSED_COMM, s->exposed_comm);
    put_num(w, &h, TS_T_STEP_OVERLAPPED_COMM, s->overlapped_comm);
    ts_jw_num(w, "micro_batches", s->micro_batches);
    put_num(w, &h, TS_T_STEP_GEMM_EFFICIENCY, s->gemm_efficiency);
    put_num(w, &h, TS_T_STEP_UNDERFILL, s->underfill);
    ts_jw_num(w, "model_flops_per_step", s->model_flops);
    ts_jw_num(w, "tokens_per_second", s->tokens_per_second);
    ts_jw_num(w, "tokens_per_gpu_second", s->tokens_per_gpu_second);
    ts_jw_num(w, "nvlink_bus_bytes_per_s", s->nvlink_bw);
    ts_jw_num(w, "net_bus_bytes_per_s", s->net_bw);
    ts_jw_bool(w, "from_shape", s->from_shape);
    put_human(w, &h);
    ts_jw_close(w, '}');
}

void ts_json_search(ts_jw *w, const ts_api_req *req, const ts_search_out *o)
{
    const ts_search_cfg *cfg = &req->search;
    size_t i;

    ts_jw_str(w, "objective", cfg->objective == TS_SEARCH_COST ? "cost" : "time");
    ts_jw_num(w, "margin", cfg->margin);
    ts_jw_open(w, "counts", '{');
    ts_jw_int(w, "enumerated", (int64_t)o->enumerated);
    ts_jw_int(w, "tried", (int64_t)o->tried);
    ts_jw_int(w, "fitting", (int64_t)o->fitting);
    ts_jw_int(w, "tight", (int64_t)o->tight);
    ts_jw_int(w, "over_budget", (int64_t)o->over_budget);
    ts_jw_int(w, "pruned", (int64_t)o->pruned);
    ts_jw_close(w, '}');
    ts_jw_bool(w, "truncated", o->truncated);
    ts_jw_open(w, "results", '[');
    for (i = 0; i < o->n; i++) {
        const ts_search_result *r = &o->results[i];
        human_acc h = { 0 };

        ts_jw_open(w, NULL, '{');
        ts_jw_int(w, "rank", (int64_t)i + 1);
        ts_jw_int(w, "gpus", r->gpus);
        ts_jw_int(w, "tp", r->tp);
        ts_jw_int(w, "pp", r->pp);
        ts_jw_int(w, "cp", r->cp);
        ts_jw_int(w, "dp", r->dp);
        ts_jw_int(w, "ep", r->ep);
        ts_jw_int(w, "micro_batch", r->micro_batch);
        ts_jw_int(w, "vpp", r->vpp);
        ts_jw_str(w, "pp_schedule", ts_pp_schedule_name(r->pp_schedule));
        ts_jw_int(w, "first_stage_layers", r->first_stage_layers);
        ts_jw_int(w, "last_stage_layers", r->last_stage_layers);
        ts_jw_int(w, "global_batch", r->global_batch);
        ts_jw_str(w, "framework", ts_framework_name(r->framework));
        ts_jw_int(w, "zero", r->zero);
        ts_jw_str(w, "recompute", ts_recompute_name(r->recompute));
        ts_jw_bool(w, "sequence_parallel", r->sequence_parallel);
        put_num(w, &h, TS_T_SR_STEP_TIME, r->step_time);
        put_num(w, &h, TS_T_SR_PREDICTED_MFU, r->predicted_mfu);
        put_num(w, &h, TS_T_SR_TOKENS_PER_GPU_SECOND, r->tokens_per_gpu_second);
        put_num(w, &h, TS_T_SR_GPU_SECONDS_PER_STEP, r->gpu_seconds);
        put_num(w, &h, TS_T_SR_COST_USD_PER_STEP, r->cost_usd);
        put_num(w, &h, TS_T_SR_WALL_SECONDS, r->wall_seconds);
        ts_jw_num(w, "wall_days", r->wall_seconds / 86400.0);
        put_num(w, &h, TS_T_SR_GPU_HOURS, r->gpu_hours);
        put_num(w, &h, TS_T_SR_COST_USD, r->cost_total_usd);
        put_num(w, &h, TS_T_SR_USEFUL_FRACTION, r->useful_fraction);
        put_num(w, &h, TS_T_SR_GOODPUT_WALL_SECONDS, r->goodput_wall_seconds);
        ts_jw_num(w, "goodput_wall_days", r->goodput_wall_seconds / 86400.0);
        put_num(w, &h, TS_T_SR_GOODPUT_COST_USD, r->goodput_cost_usd);
        put_num(w, &h, TS_T_SR_MEMORY_TOTAL, r->memory_total);
        put_num(w, &h, TS_T_SR_HEADROOM_BYTES, r->headroom);
        ts_jw_bool(w, "fits", r->fits);
        ts_jw_open(w, "step", '{');
        ts_jw_num(w, "compute", r->compute);
        ts_jw_num(w, "recompute", r->recompute_s);
        ts_jw_num(w, "tp_comm", r->tp_comm);
        ts_jw_num(w, "pp_bubble", r->pp_bubble);
        ts_jw_num(w, "dp_comm", r->dp_comm);
        ts_jw_num(w, "cp_comm", r->cp_comm);
        ts_jw_num(w, "ep_comm", r->ep_comm);
        ts_jw_num(w, "optimizer", r->optimizer);
        ts_jw_num(w, "offload", r->offload);
        ts_jw_close(w, '}');
        ts_jw_strn(w, "why", r->why, sizeof r->why);
        put_request(w, req, r);
        put_human(w, &h);
        ts_jw_close(w, '}');
    }
    ts_jw_close(w, ']');
}

void ts_json_checkpoint(ts_jw *w, const char *key, const ts_ckpt *k)
{
    static const char *const tier_names[TS_TIER_COUNT] = { "nvme", "shared", "object" };
    human_acc h = { 0 };
    size_t i;

    ts_jw_open(w, key, '{');
    put_term(w, TS_T_CK_FULL_BYTES, &k->full_bytes);
    put_term(w, TS_T_CK_WEIGHTS_BYTES, &k->weights_bytes);
    put_term(w, TS_T_CK_SHARD_BYTES_PER_GPU, &k->shard_bytes_per_gpu);
    put_term(w, TS_T_CK_YOUNG_INTERVAL_S, &k->young_interval_s);
    put_term(w, TS_T_CK_DALY_INTERVAL_S, &k->daly_interval_s);
    put_term(w, TS_T_CK_WASTE_FRACTION, &k->waste_fraction);
    ts_jw_num(w, "bpp_full", k->bpp_full);
    put_num(w, &h, TS_T_CK_WRITERS, (double)k->writers); /* < 2^53: written as an integer */
    put_num(w, &h, TS_T_CK_BYTES_PER_NODE, k->bytes_per_node);
    put_num(w, &h, TS_T_CK_JOB_MTBF_S, k->job_mtbf_s);
    put_num(w, &h, TS_T_CK_BLOCKING_WRITE_S, k->blocking_write_s);
    put_num(w, &h, TS_T_CK_WASTE_FRACTION_SCHEDULE, k->waste_fraction_schedule);
    ts_jw_open(w, "tiers", '[');
    for (i = 0; i < TS_TIER_COUNT; i++) {
        const ts_ckpt_tier *t = &k->tiers[i];
        human_acc th = { 0 };

        ts_jw_open(w, NULL, '{');
        ts_jw_str(w, "name", t->name != NULL ? t->name : tier_names[i]);
        put_num(w, &th, TS_T_TIER_INTERVAL_S, t->interval_s);
        put_num(w, &th, TS_T_TIER_WRITE_S, t->write_s);
        put_num(w, &th, TS_T_TIER_RESTORE_S, t->restore_s);
        put_num(w, &th, TS_T_TIER_BANDWIDTH_PER_WRITER, t->bandwidth_per_writer);
        put_num(w, &th, TS_T_TIER_KEEP, (double)t->keep);
        put_num(w, &th, TS_T_TIER_STORAGE_BYTES, t->storage_bytes);
        put_num(w, &th, TS_T_TIER_OVERHEAD_FRACTION, t->overhead_fraction);
        ts_jw_str(w, "formula", t->formula != NULL ? t->formula : "");
        put_human(w, &th);
        ts_jw_close(w, '}');
    }
    ts_jw_close(w, ']');
    put_human(w, &h);
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

/* The other names a catalogue entry answers to (Hub ids, GPU names as
 * people type them): what "model" and "gpu" accept besides the id. */
static void put_aliases(ts_jw *w, const char *(*alias)(const char *, size_t), const char *id)
{
    const char *a;
    size_t i;

    ts_jw_open(w, "aliases", '[');
    for (i = 0; (a = alias(id, i)) != NULL; i++)
        ts_jw_str(w, NULL, a);
    ts_jw_close(w, ']');
}

/* The shape members of a presets[] entry. */
static void put_shape(ts_jw *w, const ts_model *m)
{
    ts_jw_int(w, "layers", m->layers);
    ts_jw_int(w, "hidden", m->hidden);
    ts_jw_int(w, "heads", m->heads);
    ts_jw_int(w, "kv_heads", m->kv_heads);
    ts_jw_int(w, "ffn", m->ffn);
    ts_jw_int(w, "vocab", m->vocab);
    ts_jw_int(w, "experts", m->experts);
    ts_jw_int(w, "top_k", m->top_k);
    ts_jw_bool(w, "gated", m->gated);
    ts_jw_bool(w, "tied_embeddings", m->tied_embeddings);
}

/* A preset's aliases, then the other names of the catalogue entries it
 * answers for (their Hub id is one of its aliases). */
static void put_preset_aliases(ts_jw *w, const ts_preset *p)
{
    const char *a;
    size_t i, k, j;

    ts_jw_open(w, "aliases", '[');
    for (i = 0; (a = ts_preset_alias(p->id, i)) != NULL; i++)
        ts_jw_str(w, NULL, a);
    for (i = 0; i < ts_catalogue_count(); i++) {
        const ts_catalogue_entry *e = ts_catalogue_at(i);

        if (ts_catalogue_shadow(e) != p)
            continue;
        for (k = 0; (a = e->aliases[k]) != NULL; k++) {
            bool dup = ts_name_same(a, p->id);
            const char *b;

            for (j = 0; !dup && (b = ts_preset_alias(p->id, j)) != NULL; j++)
                dup = ts_name_same(a, b);
            if (!dup)
                ts_jw_str(w, NULL, a);
        }
    }
    ts_jw_close(w, ']');
}

static ts_status put_catalogue_entry(ts_jw *w, const ts_catalogue_entry *e,
                                     ts_api_req *req, ts_error *err)
{
    ts_api_err aerr;
    ts_params pr;
    ts_status st;
    human_acc h = { 0 };
    size_t k;

    if (ts_catalogue_run(e, req, &aerr) != 0)
        return ts_error_set(err, TS_EINVAL, "model", "catalogue entry %s: %s", e->id,
                            aerr.detail);
    if ((st = ts_model_params(&req->run.model, &pr, err)) != TS_OK)
        return st;
    ts_jw_open(w, NULL, '{');
    ts_jw_str(w, "id", e->id);
    ts_jw_str(w, "kind", "catalogue");
    ts_jw_str(w, "name", e->id);
    put_num(w, &h, TS_T_PRESET_PARAMS, pr.total);
    put_num(w, &h, TS_T_PRESET_ACTIVE_PARAMS, pr.active);
    put_num(w, &h, TS_T_PRESET_PUBLISHED_PARAMS, e->params_published);
    put_num(w, &h, TS_T_PRESET_TRAIN_TOKENS, 0);
    ts_jw_int(w, "seq", req->run.seq);
    put_shape(w, &req->run.model);
    ts_jw_str(w, "source", e->config_source);
    ts_jw_open(w, "aliases", '[');
    for (k = 0; e->aliases[k] != NULL; k++)
        ts_jw_str(w, NULL, e->aliases[k]);
    ts_jw_close(w, ']');
    ts_jw_bool(w, "published_params_exact", e->params_exact);
    if (e->params_published_as != NULL)
        ts_jw_str(w, "published_params_as", e->params_published_as);
    if (e->params_adjust_why != NULL) {
        ts_jw_num(w, "published_params_adjust", e->params_adjust);
        ts_jw_str(w, "published_params_adjust_why", e->params_adjust_why);
    }
    ts_jw_str(w, "published_params_source", e->params_source);
    ts_jw_str(w, "file", e->file);
    put_human(w, &h);
    ts_jw_close(w, '}');
    return TS_OK;
}

ts_status ts_json_presets(ts_jw *w, const char *key, ts_api_req *req, ts_error *err)
{
    size_t i;

    ts_jw_open(w, key, '[');
    for (i = 0; i < ts_preset_count(); i++) {
        const ts_preset *p = ts_preset_at(i);
        const ts_model *m = &p->model;
        ts_params pr;
        ts_status st = ts_model_params(m, &pr, err);
        human_acc h = { 0 };

        if (st != TS_OK)
            return st; /* a catalogue defect: the caller reports it */
        ts_jw_open(w, NULL, '{');
        ts_jw_str(w, "id", p->id);
        ts_jw_str(w, "kind", "preset");
        ts_jw_str(w, "name", p->name);
        put_num(w, &h, TS_T_PRESET_PARAMS, pr.total);
        put_num(w, &h, TS_T_PRESET_ACTIVE_PARAMS, pr.active);
        put_num(w, &h, TS_T_PRESET_PUBLISHED_PARAMS, p->published_params);
        put_num(w, &h, TS_T_PRESET_TRAIN_TOKENS, p->train_tokens);
        ts_jw_int(w, "seq", p->seq);
        put_shape(w, m);
        ts_jw_str(w, "source", p->source);
        put_preset_aliases(w, p);
        put_human(w, &h);
        ts_jw_close(w, '}');
    }
    /* The catalogue's own entries, each resolved as a request naming it
     * would be (those a preset answers for are that preset, above). */
    for (i = 0; i < ts_catalogue_count(); i++) {
        const ts_catalogue_entry *e = ts_catalogue_at(i);
        ts_status st;

        if (ts_catalogue_shadow(e) == NULL &&
            (st = put_catalogue_entry(w, e, req, err)) != TS_OK)
            return st;
    }
    ts_jw_close(w, ']');
    return TS_OK;
}

void ts_json_gpus(ts_jw *w, const char *key)
{
    size_t i;

    ts_jw_open(w, key, '[');
    for (i = 0; i < ts_gpu_count(); i++) {
        const ts_gpu *g = ts_gpu_at(i);
        human_acc h = { 0 };

        ts_jw_open(w, NULL, '{');
        ts_jw_strn(w, "id", g->id, sizeof g->id);
        ts_jw_strn(w, "name", g->name, sizeof g->name);
        put_num(w, &h, TS_T_GPU_HBM_BYTES, g->hbm_bytes);
        put_num(w, &h, TS_T_GPU_HBM_BW, g->hbm_bw);
        put_num(w, &h, TS_T_GPU_BF16_TFLOPS, g->bf16_flops / 1e12);
        put_num(w, &h, TS_T_GPU_FP8_TFLOPS, g->fp8_flops / 1e12);
        put_num(w, &h, TS_T_GPU_FP32_TFLOPS, g->fp32_flops / 1e12);
        ts_jw_str(w, "source", g->source);
        put_num(w, &h, TS_T_GPU_BOARD_WATTS, g->board_watts);
        ts_jw_str(w, "power_source", g->power_source);
        put_aliases(w, ts_gpu_alias, g->id);
        put_human(w, &h);
        ts_jw_close(w, '}');
    }
    ts_jw_close(w, ']');
}
