/*
 * ts_json_list.c - the catalogue's answers -> JSON text (GET
 * /v1/presets, /v1/gpus; api/CONTRACT.md): presets and catalogue models
 * with their shapes and aliases, GPUs with their figures.  Written as
 * ts_json_out.c writes (ts_json_out_int.h).
 */
#include <string.h>

#include "ts_api_int.h"
#include "ts_catalogue.h"
#include "ts_json_out_int.h"
#include "ts_terms.h"

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

static ts_status put_catalogue_entry(ts_jw *w, const ts_catalogue_entry *e, ts_api_req *req,
                                     ts_error *err)
{
    ts_api_err aerr;
    ts_params pr;
    ts_status st;
    human_acc h = { 0 };
    size_t k;

    if (ts_catalogue_run(e, req, &aerr) != 0)
        return ts_error_set(err, TS_EINVAL, "model", "catalogue entry %s: %s", e->id, aerr.detail);
    if ((st = ts_model_params(&req->run.model, &pr, err)) != TS_OK)
        return st;
    ts_jw_open(w, NULL, '{');
    ts_jw_str(w, "id", e->id);
    ts_jw_str(w, "kind", "catalogue");
    ts_jw_str(w, "name", e->id);
    out_num(w, &h, TS_T_PRESET_PARAMS, pr.total);
    out_num(w, &h, TS_T_PRESET_ACTIVE_PARAMS, pr.active);
    out_num(w, &h, TS_T_PRESET_PUBLISHED_PARAMS, e->params_published);
    out_num(w, &h, TS_T_PRESET_TRAIN_TOKENS, 0);
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
    out_human(w, &h);
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
        out_num(w, &h, TS_T_PRESET_PARAMS, pr.total);
        out_num(w, &h, TS_T_PRESET_ACTIVE_PARAMS, pr.active);
        out_num(w, &h, TS_T_PRESET_PUBLISHED_PARAMS, p->published_params);
        out_num(w, &h, TS_T_PRESET_TRAIN_TOKENS, p->train_tokens);
        ts_jw_int(w, "seq", p->seq);
        put_shape(w, m);
        ts_jw_str(w, "source", p->source);
        put_preset_aliases(w, p);
        out_human(w, &h);
        ts_jw_close(w, '}');
    }
    /* The catalogue's own entries, each resolved as a request naming it
     * would be (those a preset answers for are that preset, above). */
    for (i = 0; i < ts_catalogue_count(); i++) {
        const ts_catalogue_entry *e = ts_catalogue_at(i);
        ts_status st;

        if (ts_catalogue_shadow(e) == NULL && (st = put_catalogue_entry(w, e, req, err)) != TS_OK)
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
        out_num(w, &h, TS_T_GPU_HBM_BYTES, g->hbm_bytes);
        out_num(w, &h, TS_T_GPU_HBM_BW, g->hbm_bw);
        out_num(w, &h, TS_T_GPU_BF16_TFLOPS, g->bf16_flops / 1e12);
        /* V100, T4: bf16_tflops is their FP16 rate; bf16 is a 400 there */
        ts_jw_bool(w, "bf16", ts_gpu_bf16(g));
        out_num(w, &h, TS_T_GPU_FP8_TFLOPS, g->fp8_flops / 1e12);
        out_num(w, &h, TS_T_GPU_FP32_TFLOPS, g->fp32_flops / 1e12);
        ts_jw_str(w, "source", g->source);
        out_num(w, &h, TS_T_GPU_BOARD_WATTS, g->board_watts);
        ts_jw_str(w, "power_source", g->power_source);
        put_aliases(w, ts_gpu_alias, g->id);
        out_human(w, &h);
        ts_jw_close(w, '}');
    }
    ts_jw_close(w, ']');
}
