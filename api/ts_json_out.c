/*
 * ts_json_out.c - core result structs -> jansson trees (api/CONTRACT.md).
 *
 * Every number goes through ts_json_put_num(): exactly integral values
 * below 2^53 become JSON integers (shorter, and exact), the rest reals
 * dumped with 17 significant digits so they round-trip.  A NaN or Inf is
 * never emitted: it is recorded in ts_json_out and the caller answers 422.
 */
#include <math.h>
#include <string.h>

#include "ts_api_int.h"

#define TS_EXACT_INT_MAX 9007199254740992.0 /* 2^53 */

static json_t *num_value(double v)
{
    v += 0.0; /* -0 -> 0 */
    if (v == floor(v) && fabs(v) < TS_EXACT_INT_MAX)
        return json_integer((json_int_t)v);
    return json_real(v);
}

void ts_json_put(json_t *obj, const char *key, json_t *v, ts_json_out *o)
{
    if (v == NULL || obj == NULL) {
        json_decref(v);
        o->oom = true;
        return;
    }
    if (json_object_set_new_nocheck(obj, key, v) != 0)
        o->oom = true;
}

void ts_json_put_num(json_t *obj, const char *key, double v, ts_json_out *o)
{
    if (!isfinite(v)) {
        if (o->nonfinite == NULL)
            o->nonfinite = key;
        return;
    }
    ts_json_put(obj, key, num_value(v), o);
}

void ts_json_put_int(json_t *obj, const char *key, int64_t v, ts_json_out *o)
{
    ts_json_put(obj, key, json_integer((json_int_t)v), o);
}

void ts_json_put_bool(json_t *obj, const char *key, bool v, ts_json_out *o)
{
    ts_json_put(obj, key, json_boolean(v), o);
}

void ts_json_put_str(json_t *obj, const char *key, const char *s, ts_json_out *o)
{
    ts_json_put(obj, key, s != NULL ? json_string(s) : json_null(), o);
}

/* Fixed-size char arrays in core structs: never read past them. */
static void put_strn(json_t *obj, const char *key, const char *s, size_t cap,
                     ts_json_out *o)
{
    ts_json_put(obj, key, json_stringn(s, strnlen(s, cap)), o);
}

static void put_term(json_t *obj, const char *key, const ts_term *t,
                     ts_unit unit, ts_json_out *o)
{
    char human[64];
    json_t *j;

    if (!isfinite(t->value)) {
        if (o->nonfinite == NULL)
            o->nonfinite = key;
        return;
    }
    j = json_object();
    ts_fmt_quantity(human, sizeof human, t->value, unit);
    ts_json_put_num(j, "value", t->value, o);
    ts_json_put_str(j, "human", human, o);
    ts_json_put_str(j, "formula", t->formula != NULL ? t->formula : "", o);
    ts_json_put_str(j, "assumptions", t->assumptions != NULL ? t->assumptions : "", o);
    ts_json_put(obj, key, j, o);
}

json_t *ts_json_inputs(const ts_run *r, ts_json_out *o)
{
    json_t *j = json_object();
    const char *base = (const char *)r;
    size_t i;

    /* Same table as the parser: the echo has exactly the request names. */
    for (i = 0; i < TS_FI_SOLVE; i++) {
        const ts_json_field *b = &ts_json_fields[i];
        const char *name = b->f.name;
        const void *at = base + b->off;

        switch (b->kind) {
        case TS_BIND_INT64:
            ts_json_put_int(j, name, *(const int64_t *)at, o);
            break;
        case TS_BIND_INT:
            ts_json_put_int(j, name, *(const int *)at, o);
            break;
        case TS_BIND_NUM:
            ts_json_put_num(j, name, *(const double *)at, o);
            break;
        case TS_BIND_PARAMS:
            /* With a shape the count is derived (see "params" in the
             * response); null keeps the echo valid as a request. */
            if (r->model.layers > 0)
                ts_json_put(j, name, json_null(), o);
            else
                ts_json_put_num(j, name, r->model.params, o);
            break;
        case TS_BIND_BOOL:
            ts_json_put_bool(j, name, *(const bool *)at, o);
            break;
        case TS_BIND_PREC:
            ts_json_put_str(j, name, ts_precision_name(*(const ts_precision *)at), o);
            break;
        case TS_BIND_OPT:
            ts_json_put_str(j, name, ts_optimizer_name(*(const ts_optimizer *)at), o);
            break;
        case TS_BIND_RECOMPUTE:
            ts_json_put_str(j, name, ts_recompute_name(*(const ts_recompute *)at), o);
            break;
        case TS_BIND_PRESET:
            if (r->preset[0] != '\0')
                put_strn(j, name, r->preset, sizeof r->preset, o);
            else
                ts_json_put(j, name, json_null(), o);
            break;
        case TS_BIND_GPU:
            put_strn(j, name, r->gpu.id, sizeof r->gpu.id, o);
            break;
        case TS_BIND_HBM:
            ts_json_put_num(j, name, r->gpu.hbm_bytes / 1e9, o);
            break;
        case TS_BIND_PEAK:
            ts_json_put_num(j, name, ts_gpu_peak(&r->gpu, r->compute_precision) / 1e12, o);
            break;
        case TS_BIND_SOLVE:
        case TS_BIND_MAX_MB:
        case TS_BIND_MAX_GPUS:
        default:
            break;
        }
    }
    return j;
}

json_t *ts_json_params(const ts_params *p, ts_json_out *o)
{
    json_t *j = json_object();

    ts_json_put_num(j, "total", p->total, o);
    ts_json_put_num(j, "active", p->active, o);
    ts_json_put_num(j, "embedding", p->embedding, o);
    ts_json_put_num(j, "output_head", p->output_head, o);
    ts_json_put_num(j, "per_layer_attn", p->per_layer_attn, o);
    ts_json_put_num(j, "per_layer_mlp", p->per_layer_mlp, o);
    ts_json_put_num(j, "per_layer_norm", p->per_layer_norm, o);
    ts_json_put_num(j, "expert", p->expert, o);
    ts_json_put_num(j, "dense", p->dense, o);
    ts_json_put_bool(j, "from_shape", p->from_shape, o);
    ts_json_put_str(j, "formula", p->formula != NULL ? p->formula : "", o);
    return j;
}

json_t *ts_json_memory(const ts_memory *m, ts_json_out *o)
{
    json_t *j = json_object();
    json_t *bpp = json_object();
    json_t *act = json_object();

    ts_json_put_num(j, "params_per_gpu", m->params_per_gpu, o);
    ts_json_put_int(j, "shard_group", m->shard_group, o);
    ts_json_put_num(bpp, "weights", m->bpp_weights, o);
    ts_json_put_num(bpp, "grads", m->bpp_grads, o);
    ts_json_put_num(bpp, "master", m->bpp_master, o);
    ts_json_put_num(bpp, "optimizer", m->bpp_optimizer, o);
    ts_json_put_num(bpp, "total", m->bpp_total, o);
    ts_json_put(j, "bytes_per_param", bpp, o);
    ts_json_put_num(j, "model_state_bytes", m->model_state_bytes, o);
    ts_json_put_num(j, "inference_bytes", m->inference_bytes, o);
    put_term(j, "weights", &m->weights, TS_UNIT_BYTES, o);
    put_term(j, "grads", &m->grads, TS_UNIT_BYTES, o);
    put_term(j, "master", &m->master, TS_UNIT_BYTES, o);
    put_term(j, "optimizer", &m->optimizer, TS_UNIT_BYTES, o);
    put_term(j, "activations", &m->activations, TS_UNIT_BYTES, o);
    put_term(j, "overhead", &m->overhead, TS_UNIT_BYTES, o);
    put_term(j, "total", &m->total, TS_UNIT_BYTES, o);
    ts_json_put_num(act, "per_layer", m->act_per_layer, o);
    ts_json_put_int(act, "layers_per_stage", m->layers_per_stage, o);
    ts_json_put_int(act, "in_flight", m->in_flight, o);
    ts_json_put_num(act, "embedding_logits", m->act_embedding_logits, o);
    ts_json_put_num(act, "seq2_term", m->act_seq2_term, o);
    ts_json_put(j, "activation_detail", act, o);
    put_term(j, "activations_seed000", &m->act_seed000, TS_UNIT_BYTES, o);
    ts_json_put_num(j, "host_bytes_per_gpu", m->host_bytes_per_gpu, o);
    ts_json_put_num(j, "host_bytes_per_node", m->host_bytes_per_node, o);
    put_term(j, "deepspeed_gpu", &m->deepspeed_gpu, TS_UNIT_BYTES, o);
    ts_json_put_num(j, "hbm_bytes", m->hbm_bytes, o);
    ts_json_put_num(j, "headroom_bytes", m->headroom_bytes, o);
    ts_json_put_bool(j, "fits", m->fits, o);
    return j;
}

json_t *ts_json_compute(const ts_compute *c, ts_json_out *o)
{
    json_t *j = json_object();

    ts_json_put_num(j, "tokens", c->tokens, o);
    ts_json_put_num(j, "params_active", c->params_active, o);
    put_term(j, "model_flops", &c->model_flops, TS_UNIT_FLOPS, o);
    put_term(j, "model_flops_attn", &c->model_flops_attn, TS_UNIT_FLOPS, o);
    put_term(j, "hardware_flops", &c->hardware_flops, TS_UNIT_FLOPS, o);
    put_term(j, "gpu_hours", &c->gpu_hours, TS_UNIT_GPU_HOURS, o);
    put_term(j, "wall_seconds", &c->wall_seconds, TS_UNIT_SECONDS, o);
    ts_json_put_num(j, "peak_flops", c->peak_flops, o);
    ts_json_put_num(j, "mfu", c->mfu, o);
    ts_json_put_num(j, "hfu", c->hfu, o);
    ts_json_put_num(j, "wall_days", c->wall_days, o);
    ts_json_put_num(j, "gpu_years", c->gpu_years, o);
    ts_json_put_num(j, "tokens_per_second", c->tokens_per_second, o);
    ts_json_put_num(j, "tokens_per_gpu_second", c->tokens_per_gpu_second, o);
    ts_json_put_num(j, "steps", c->steps, o);
    ts_json_put_num(j, "step_seconds", c->step_seconds, o);
    ts_json_put_num(j, "achieved_flops_per_gpu", c->achieved_flops_per_gpu, o);
    return j;
}

json_t *ts_json_checkpoint(const ts_ckpt *k, ts_json_out *o)
{
    static const char *const tier_names[TS_TIER_COUNT] = { "nvme", "shared", "object" };
    json_t *j = json_object();
    json_t *tiers = json_array();
    size_t i;

    put_term(j, "full_bytes", &k->full_bytes, TS_UNIT_BYTES, o);
    put_term(j, "weights_bytes", &k->weights_bytes, TS_UNIT_BYTES, o);
    put_term(j, "shard_bytes_per_gpu", &k->shard_bytes_per_gpu, TS_UNIT_BYTES, o);
    put_term(j, "young_interval_s", &k->young_interval_s, TS_UNIT_SECONDS, o);
    put_term(j, "daly_interval_s", &k->daly_interval_s, TS_UNIT_SECONDS, o);
    put_term(j, "waste_fraction", &k->waste_fraction, TS_UNIT_FRACTION, o);
    ts_json_put_num(j, "bpp_full", k->bpp_full, o);
    ts_json_put_int(j, "writers", k->writers, o);
    ts_json_put_num(j, "bytes_per_node", k->bytes_per_node, o);
    ts_json_put_num(j, "job_mtbf_s", k->job_mtbf_s, o);
    ts_json_put_num(j, "blocking_write_s", k->blocking_write_s, o);
    ts_json_put_num(j, "waste_fraction_schedule", k->waste_fraction_schedule, o);
    for (i = 0; i < TS_TIER_COUNT; i++) {
        const ts_ckpt_tier *t = &k->tiers[i];
        json_t *tj = json_object();

        ts_json_put_str(tj, "name", t->name != NULL ? t->name : tier_names[i], o);
        ts_json_put_num(tj, "interval_s", t->interval_s, o);
        ts_json_put_num(tj, "write_s", t->write_s, o);
        ts_json_put_num(tj, "restore_s", t->restore_s, o);
        ts_json_put_num(tj, "bandwidth_per_writer", t->bandwidth_per_writer, o);
        ts_json_put_int(tj, "keep", t->keep, o);
        ts_json_put_num(tj, "storage_bytes", t->storage_bytes, o);
        ts_json_put_num(tj, "overhead_fraction", t->overhead_fraction, o);
        ts_json_put_str(tj, "formula", t->formula != NULL ? t->formula : "", o);
        if (json_array_append_new(tiers, tj) != 0) /* decrefs tj on failure */
            o->oom = true;
    }
    ts_json_put(j, "tiers", tiers, o);
    return j;
}

json_t *ts_json_sweep(const ts_sweep_point *pts, size_t n, ts_json_out *o)
{
    json_t *a = json_array();
    size_t i;

    for (i = 0; i < n && i < TS_SWEEP_MAX; i++) {
        const ts_sweep_point *p = &pts[i];
        json_t *pj = json_object();

        ts_json_put_int(pj, "dp", p->dp, o);
        ts_json_put_int(pj, "gpus", p->gpus, o);
        ts_json_put_num(pj, "weights", p->weights, o);
        ts_json_put_num(pj, "grads", p->grads, o);
        ts_json_put_num(pj, "master", p->master, o);
        ts_json_put_num(pj, "optimizer", p->optimizer, o);
        ts_json_put_num(pj, "activations", p->activations, o);
        ts_json_put_num(pj, "overhead", p->overhead, o);
        ts_json_put_num(pj, "total", p->total, o);
        ts_json_put_num(pj, "ckpt_shard_bytes", p->ckpt_shard_bytes, o);
        ts_json_put_bool(pj, "fits", p->fits, o);
        if (json_array_append_new(a, pj) != 0) /* decrefs pj on failure */
            o->oom = true;
    }
    return a;
}

json_t *ts_json_presets(ts_json_out *o, ts_error *err)
{
    json_t *root = json_object();
    json_t *a = json_array();
    size_t i;

    for (i = 0; i < ts_preset_count(); i++) {
        const ts_preset *p = ts_preset_at(i);
        const ts_model *m = &p->model;
        ts_params pr;
        json_t *pj;

        if (ts_model_params(m, &pr, err) != TS_OK)
            break; /* a catalogue defect: the caller reports it */
        pj = json_object();
        ts_json_put_str(pj, "id", p->id, o);
        ts_json_put_str(pj, "name", p->name, o);
        ts_json_put_num(pj, "params", pr.total, o);
        ts_json_put_num(pj, "active_params", pr.active, o);
        ts_json_put_num(pj, "published_params", p->published_params, o);
        ts_json_put_num(pj, "train_tokens", p->train_tokens, o);
        ts_json_put_int(pj, "seq", p->seq, o);
        ts_json_put_int(pj, "layers", m->layers, o);
        ts_json_put_int(pj, "hidden", m->hidden, o);
        ts_json_put_int(pj, "heads", m->heads, o);
        ts_json_put_int(pj, "kv_heads", m->kv_heads, o);
        ts_json_put_int(pj, "ffn", m->ffn, o);
        ts_json_put_int(pj, "vocab", m->vocab, o);
        ts_json_put_int(pj, "experts", m->experts, o);
        ts_json_put_int(pj, "top_k", m->top_k, o);
        ts_json_put_bool(pj, "gated", m->gated, o);
        ts_json_put_bool(pj, "tied_embeddings", m->tied_embeddings, o);
        ts_json_put_str(pj, "source", p->source, o);
        if (json_array_append_new(a, pj) != 0) /* decrefs pj on failure */
            o->oom = true;
    }
    ts_json_put(root, "presets", a, o);
    return root;
}

json_t *ts_json_gpus(ts_json_out *o)
{
    json_t *root = json_object();
    json_t *a = json_array();
    size_t i;

    for (i = 0; i < ts_gpu_count(); i++) {
        const ts_gpu *g = ts_gpu_at(i);
        json_t *gj = json_object();

        put_strn(gj, "id", g->id, sizeof g->id, o);
        put_strn(gj, "name", g->name, sizeof g->name, o);
        ts_json_put_num(gj, "hbm_bytes", g->hbm_bytes, o);
        ts_json_put_num(gj, "hbm_bw", g->hbm_bw, o);
        ts_json_put_num(gj, "bf16_tflops", g->bf16_flops / 1e12, o);
        ts_json_put_num(gj, "fp8_tflops", g->fp8_flops / 1e12, o);
        ts_json_put_num(gj, "fp32_tflops", g->fp32_flops / 1e12, o);
        ts_json_put_str(gj, "source", g->source, o);
        if (json_array_append_new(a, gj) != 0) /* decrefs gj on failure */
            o->oom = true;
    }
    ts_json_put(root, "gpus", a, o);
    return root;
}
