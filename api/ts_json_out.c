/*
 * ts_json_out.c - core result structs -> JSON text (api/CONTRACT.md).
 *
 * Written with ts_jw (ts_jw.c): numbers round-trip, NaN/Inf are never
 * emitted (the writer records the first one and the caller answers 422).
 * Member order follows CONTRACT.md.
 */
#include <math.h>
#include <string.h>

#include "ts_api_int.h"

static void put_stage(ts_jw *w, const ts_mem_stage *st)
{
    char human[64];

    ts_jw_open(w, NULL, '{');
    ts_jw_int(w, "stage", st->stage);
    ts_jw_int(w, "layers", st->layers);
    ts_jw_num(w, "in_flight", st->in_flight);
    ts_jw_num(w, "params", st->params);
    ts_jw_num(w, "weights", st->weights);
    ts_jw_num(w, "grads", st->grads);
    ts_jw_num(w, "master", st->master);
    ts_jw_num(w, "optimizer", st->optimizer);
    ts_jw_num(w, "activations", st->activations);
    ts_jw_num(w, "buffers", st->buffers);
    ts_jw_num(w, "overhead", st->overhead);
    ts_jw_num(w, "allocated_peak", st->allocated_peak);
    ts_jw_num(w, "reserved_peak", st->reserved_peak);
    ts_jw_num(w, "total", st->total);
    ts_fmt_quantity(human, sizeof human, st->total, TS_UNIT_BYTES);
    ts_jw_str(w, "total_human", human);
    ts_jw_str(w, "peak_phase", ts_phase_name(st->peak_phase));
    ts_jw_num(w, "headroom", st->headroom);
    ts_jw_bool(w, "fits", st->fits);
    ts_jw_close(w, '}');
}

static void put_term(ts_jw *w, const char *key, const ts_term *t, ts_unit unit)
{
    char human[64];
    bool had = w->nonfinite != NULL;

    ts_fmt_quantity(human, sizeof human, t->value, unit);
    ts_jw_open(w, key, '{');
    ts_jw_num(w, "value", t->value);
    if (!had && w->nonfinite != NULL)
        w->nonfinite = key; /* name the term, not its "value" */
    ts_jw_str(w, "human", human);
    ts_jw_str(w, "formula", t->formula != NULL ? t->formula : "");
    ts_jw_str(w, "assumptions", t->assumptions != NULL ? t->assumptions : "");
    ts_jw_close(w, '}');
}

void ts_json_inputs(ts_jw *w, const char *key, const ts_run *r)
{
    const char *base = (const char *)r;
    size_t i;

    ts_jw_open(w, key, '{');
    /* Same table as the parser: the echo has exactly the request names. */
    for (i = 0; i < TS_FI_SOLVE; i++) {
        const ts_json_field *b = &ts_json_fields[i];
        const char *name = b->f.name;
        const void *at = base + b->off;

        switch (b->kind) {
        case TS_BIND_INT64:
            ts_jw_int(w, name, *(const int64_t *)at);
            break;
        case TS_BIND_INT:
            ts_jw_int(w, name, *(const int *)at);
            break;
        case TS_BIND_NUM:
            ts_jw_num(w, name, *(const double *)at);
            break;
        case TS_BIND_PARAMS:
            /* With a shape the count is derived (see "params" in the
             * response); null keeps the echo valid as a request. */
            if (r->model.layers > 0)
                ts_jw_null(w, name);
            else
                ts_jw_num(w, name, r->model.params);
            break;
        case TS_BIND_BOOL:
            ts_jw_bool(w, name, *(const bool *)at);
            break;
        case TS_BIND_PREC:
            ts_jw_str(w, name, ts_precision_name(*(const ts_precision *)at));
            break;
        case TS_BIND_OPT:
            ts_jw_str(w, name, ts_optimizer_name(*(const ts_optimizer *)at));
            break;
        case TS_BIND_RECOMPUTE:
            ts_jw_str(w, name, ts_recompute_name(*(const ts_recompute *)at));
            break;
        case TS_BIND_ENUM:
            ts_jw_str(w, name, b->f.values[*(const int *)at]);
            break;
        case TS_BIND_HBM_GIB:
            ts_jw_num(w, name, r->gpu.hbm_bytes / 1073741824.0);
            break;
        case TS_BIND_PRESET:
            if (r->preset[0] != '\0')
                ts_jw_strn(w, name, r->preset, sizeof r->preset);
            else
                ts_jw_null(w, name);
            break;
        case TS_BIND_GPU:
            ts_jw_strn(w, name, r->gpu.id, sizeof r->gpu.id);
            break;
        case TS_BIND_HBM:
            ts_jw_num(w, name, r->gpu.hbm_bytes / 1e9);
            break;
        case TS_BIND_PEAK:
            ts_jw_num(w, name, ts_gpu_peak(&r->gpu, r->compute_precision) / 1e12);
            break;
        case TS_BIND_NUM_OPT:
            /* 0 means "not given" (predicted / catalogue): null round-trips. */
            if (*(const double *)at == 0)
                ts_jw_null(w, name);
            else
                ts_jw_num(w, name, *(const double *)at);
            break;
        case TS_BIND_SOLVE:
        case TS_BIND_MAX_MB:
        case TS_BIND_MAX_GPUS:
        case TS_BIND_SEARCH:
        default:
            break;
        }
    }
    ts_jw_close(w, '}');
}

void ts_json_params(ts_jw *w, const char *key, const ts_params *p)
{
    ts_jw_open(w, key, '{');
    ts_jw_num(w, "total", p->total);
    ts_jw_num(w, "active", p->active);
    ts_jw_num(w, "embedding", p->embedding);
    ts_jw_num(w, "output_head", p->output_head);
    ts_jw_num(w, "per_layer_attn", p->per_layer_attn);
    ts_jw_num(w, "per_layer_mlp", p->per_layer_mlp);
    ts_jw_num(w, "per_layer_norm", p->per_layer_norm);
    ts_jw_num(w, "expert", p->expert);
    ts_jw_num(w, "dense", p->dense);
    ts_jw_bool(w, "from_shape", p->from_shape);
    ts_jw_str(w, "formula", p->formula != NULL ? p->formula : "");
    ts_jw_close(w, '}');
}

void ts_json_memory(ts_jw *w, const char *key, const ts_memory *m)
{
    ts_jw_open(w, key, '{');
    ts_jw_num(w, "params_per_gpu", m->params_per_gpu);
    ts_jw_int(w, "shard_group", m->shard_group);
    ts_jw_open(w, "bytes_per_param", '{');
    ts_jw_num(w, "weights", m->bpp_weights);
    ts_jw_num(w, "grads", m->bpp_grads);
    ts_jw_num(w, "master", m->bpp_master);
    ts_jw_num(w, "optimizer", m->bpp_optimizer);
    ts_jw_num(w, "total", m->bpp_total);
    ts_jw_close(w, '}');
    ts_jw_num(w, "model_state_bytes", m->model_state_bytes);
    ts_jw_num(w, "inference_bytes", m->inference_bytes);
    put_term(w, "weights", &m->weights, TS_UNIT_BYTES);
    put_term(w, "grads", &m->grads, TS_UNIT_BYTES);
    put_term(w, "master", &m->master, TS_UNIT_BYTES);
    put_term(w, "optimizer", &m->optimizer, TS_UNIT_BYTES);
    put_term(w, "activations", &m->activations, TS_UNIT_BYTES);
    put_term(w, "buffers", &m->buffers, TS_UNIT_BYTES);
    put_term(w, "overhead", &m->overhead, TS_UNIT_BYTES);
    put_term(w, "total", &m->total, TS_UNIT_BYTES);
    put_term(w, "allocated_peak", &m->allocated_peak, TS_UNIT_BYTES);
    put_term(w, "reserved_peak", &m->reserved_peak, TS_UNIT_BYTES);
    put_term(w, "runtime", &m->runtime, TS_UNIT_BYTES);
    ts_jw_open(w, "phases", '[');
    {
        int k;
        for (k = 0; k < TS_PHASE_COUNT; k++) {
            if (m->phases[k] <= 0)
                continue; /* the phase does not occur (loss off the last stage, inference) */
            char human[64];

            ts_fmt_quantity(human, sizeof human, m->phases[k], TS_UNIT_BYTES);
            ts_jw_open(w, NULL, '{');
            ts_jw_str(w, "name", ts_phase_name((ts_phase)k));
            ts_jw_num(w, "bytes", m->phases[k]);
            ts_jw_str(w, "human", human);
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
    put_term(w, "activations_seed000", &m->act_seed000, TS_UNIT_BYTES);
    ts_jw_num(w, "host_bytes_per_gpu", m->host_bytes_per_gpu);
    ts_jw_num(w, "host_bytes_per_node", m->host_bytes_per_node);
    put_term(w, "deepspeed_gpu", &m->deepspeed_gpu, TS_UNIT_BYTES);
    ts_jw_num(w, "hbm_bytes", m->hbm_bytes);
    ts_jw_num(w, "headroom_bytes", m->headroom_bytes);
    ts_jw_bool(w, "fits", m->fits);
    ts_jw_close(w, '}');
}

void ts_json_compute(ts_jw *w, const char *key, const ts_compute *c)
{
    ts_jw_open(w, key, '{');
    ts_jw_num(w, "tokens", c->tokens);
    ts_jw_num(w, "params_active", c->params_active);
    put_term(w, "model_flops", &c->model_flops, TS_UNIT_FLOPS);
    put_term(w, "model_flops_attn", &c->model_flops_attn, TS_UNIT_FLOPS);
    put_term(w, "hardware_flops", &c->hardware_flops, TS_UNIT_FLOPS);
    put_term(w, "gpu_hours", &c->gpu_hours, TS_UNIT_GPU_HOURS);
    put_term(w, "wall_seconds", &c->wall_seconds, TS_UNIT_SECONDS);
    ts_jw_num(w, "peak_flops", c->peak_flops);
    ts_jw_num(w, "mfu", c->mfu);
    ts_jw_num(w, "hfu", c->hfu);
    ts_jw_num(w, "wall_days", c->wall_days);
    ts_jw_num(w, "gpu_years", c->gpu_years);
    ts_jw_num(w, "tokens_per_second", c->tokens_per_second);
    ts_jw_num(w, "tokens_per_gpu_second", c->tokens_per_gpu_second);
    ts_jw_num(w, "steps", c->steps);
    ts_jw_num(w, "step_seconds", c->step_seconds);
    ts_jw_num(w, "achieved_flops_per_gpu", c->achieved_flops_per_gpu);
    ts_jw_str(w, "mfu_source", c->mfu_predicted ? "predicted" : "input");
    ts_jw_num(w, "predicted_mfu", c->predicted_mfu);
    ts_jw_str(w, "mfu_convention", c->step.mfu_convention);
    put_term(w, "step_time", &c->step_time, TS_UNIT_SECONDS);
    ts_json_step(w, "step", &c->step);
    put_term(w, "cost_usd", &c->cost_usd, TS_UNIT_USD);
    ts_jw_close(w, '}');
}

void ts_json_step(ts_jw *w, const char *key, const ts_step *s)
{
    ts_jw_open(w, key, '{');
    ts_jw_num(w, "compute", s->compute);
    ts_jw_num(w, "recompute", s->recompute);
    ts_jw_num(w, "tp_comm", s->tp_comm);
    ts_jw_num(w, "pp_bubble", s->pp_bubble);
    ts_jw_num(w, "pp_p2p", s->pp_p2p);
    ts_jw_num(w, "dp_comm", s->dp_comm);
    ts_jw_num(w, "cp_comm", s->cp_comm);
    ts_jw_num(w, "ep_comm", s->ep_comm);
    ts_jw_num(w, "optimizer", s->optimizer);
    ts_jw_num(w, "offload", s->offload);
    ts_jw_num(w, "exposed_comm", s->exposed_comm);
    ts_jw_num(w, "overlapped_comm", s->overlapped_comm);
    ts_jw_num(w, "micro_batches", s->micro_batches);
    ts_jw_num(w, "gemm_efficiency", s->gemm_efficiency);
    ts_jw_num(w, "model_flops_per_step", s->model_flops);
    ts_jw_num(w, "tokens_per_second", s->tokens_per_second);
    ts_jw_num(w, "tokens_per_gpu_second", s->tokens_per_gpu_second);
    ts_jw_num(w, "nvlink_bus_bytes_per_s", s->nvlink_bw);
    ts_jw_num(w, "net_bus_bytes_per_s", s->net_bw);
    ts_jw_bool(w, "from_shape", s->from_shape);
    ts_jw_close(w, '}');
}

void ts_json_search(ts_jw *w, const ts_search_cfg *cfg, const ts_search_out *o)
{
    size_t i;

    ts_jw_str(w, "objective", cfg->objective == TS_SEARCH_COST ? "cost" : "time");
    ts_jw_open(w, "counts", '{');
    ts_jw_int(w, "enumerated", (int64_t)o->enumerated);
    ts_jw_int(w, "tried", (int64_t)o->tried);
    ts_jw_int(w, "fitting", (int64_t)o->fitting);
    ts_jw_int(w, "pruned", (int64_t)o->pruned);
    ts_jw_close(w, '}');
    ts_jw_bool(w, "truncated", o->truncated);
    ts_jw_open(w, "results", '[');
    for (i = 0; i < o->n; i++) {
        const ts_search_result *r = &o->results[i];
        char human[64];

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
        ts_jw_str(w, "framework", ts_framework_name(r->framework));
        ts_jw_int(w, "zero", r->zero);
        ts_jw_str(w, "recompute", ts_recompute_name(r->recompute));
        ts_jw_bool(w, "sequence_parallel", r->sequence_parallel);
        ts_jw_num(w, "step_time", r->step_time);
        ts_fmt_quantity(human, sizeof human, r->step_time, TS_UNIT_SECONDS);
        ts_jw_str(w, "step_time_human", human);
        ts_jw_num(w, "predicted_mfu", r->predicted_mfu);
        ts_jw_num(w, "tokens_per_gpu_second", r->tokens_per_gpu_second);
        ts_jw_num(w, "gpu_seconds_per_step", r->gpu_seconds);
        ts_jw_num(w, "cost_usd_per_step", r->cost_usd);
        ts_jw_num(w, "memory_total", r->memory_total);
        ts_fmt_quantity(human, sizeof human, r->memory_total, TS_UNIT_BYTES);
        ts_jw_str(w, "memory_total_human", human);
        ts_jw_num(w, "headroom_bytes", r->headroom);
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
        ts_jw_close(w, '}');
    }
    ts_jw_close(w, ']');
}

void ts_json_checkpoint(ts_jw *w, const char *key, const ts_ckpt *k)
{
    static const char *const tier_names[TS_TIER_COUNT] = { "nvme", "shared", "object" };
    size_t i;

    ts_jw_open(w, key, '{');
    put_term(w, "full_bytes", &k->full_bytes, TS_UNIT_BYTES);
    put_term(w, "weights_bytes", &k->weights_bytes, TS_UNIT_BYTES);
    put_term(w, "shard_bytes_per_gpu", &k->shard_bytes_per_gpu, TS_UNIT_BYTES);
    put_term(w, "young_interval_s", &k->young_interval_s, TS_UNIT_SECONDS);
    put_term(w, "daly_interval_s", &k->daly_interval_s, TS_UNIT_SECONDS);
    put_term(w, "waste_fraction", &k->waste_fraction, TS_UNIT_FRACTION);
    ts_jw_num(w, "bpp_full", k->bpp_full);
    ts_jw_int(w, "writers", k->writers);
    ts_jw_num(w, "bytes_per_node", k->bytes_per_node);
    ts_jw_num(w, "job_mtbf_s", k->job_mtbf_s);
    ts_jw_num(w, "blocking_write_s", k->blocking_write_s);
    ts_jw_num(w, "waste_fraction_schedule", k->waste_fraction_schedule);
    ts_jw_open(w, "tiers", '[');
    for (i = 0; i < TS_TIER_COUNT; i++) {
        const ts_ckpt_tier *t = &k->tiers[i];

        ts_jw_open(w, NULL, '{');
        ts_jw_str(w, "name", t->name != NULL ? t->name : tier_names[i]);
        ts_jw_num(w, "interval_s", t->interval_s);
        ts_jw_num(w, "write_s", t->write_s);
        ts_jw_num(w, "restore_s", t->restore_s);
        ts_jw_num(w, "bandwidth_per_writer", t->bandwidth_per_writer);
        ts_jw_int(w, "keep", t->keep);
        ts_jw_num(w, "storage_bytes", t->storage_bytes);
        ts_jw_num(w, "overhead_fraction", t->overhead_fraction);
        ts_jw_str(w, "formula", t->formula != NULL ? t->formula : "");
        ts_jw_close(w, '}');
    }
    ts_jw_close(w, ']');
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
        ts_jw_close(w, '}');
    }
    ts_jw_close(w, ']');
}

ts_status ts_json_presets(ts_jw *w, const char *key, ts_error *err)
{
    size_t i;

    ts_jw_open(w, key, '[');
    for (i = 0; i < ts_preset_count(); i++) {
        const ts_preset *p = ts_preset_at(i);
        const ts_model *m = &p->model;
        ts_params pr;
        ts_status st = ts_model_params(m, &pr, err);

        if (st != TS_OK)
            return st; /* a catalogue defect: the caller reports it */
        ts_jw_open(w, NULL, '{');
        ts_jw_str(w, "id", p->id);
        ts_jw_str(w, "name", p->name);
        ts_jw_num(w, "params", pr.total);
        ts_jw_num(w, "active_params", pr.active);
        ts_jw_num(w, "published_params", p->published_params);
        ts_jw_num(w, "train_tokens", p->train_tokens);
        ts_jw_int(w, "seq", p->seq);
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
        ts_jw_str(w, "source", p->source);
        ts_jw_close(w, '}');
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

        ts_jw_open(w, NULL, '{');
        ts_jw_strn(w, "id", g->id, sizeof g->id);
        ts_jw_strn(w, "name", g->name, sizeof g->name);
        ts_jw_num(w, "hbm_bytes", g->hbm_bytes);
        ts_jw_num(w, "hbm_bw", g->hbm_bw);
        ts_jw_num(w, "bf16_tflops", g->bf16_flops / 1e12);
        ts_jw_num(w, "fp8_tflops", g->fp8_flops / 1e12);
        ts_jw_num(w, "fp32_tflops", g->fp32_flops / 1e12);
        ts_jw_str(w, "source", g->source);
        ts_jw_close(w, '}');
    }
    ts_jw_close(w, ']');
}
