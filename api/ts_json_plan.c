/*
 * ts_json_plan.c - the search and budget answers -> JSON text (POST
 * /v1/search, /v1/budget; api/CONTRACT.md): each ranked layout with the
 * request that reproduces it, and the budget's plan with its summary
 * line.  Written as ts_json_out.c writes (ts_json_out_int.h).
 */
#include <stdio.h>
#include <string.h>

#include "ts_api_int.h"
#include "ts_json_out_int.h"
#include "ts_terms.h"

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
        TS_FI_GPUS,
        TS_FI_DP,
        TS_FI_TP,
        TS_FI_PP,
        TS_FI_CP,
        TS_FI_EP,
        TS_FI_MICRO_BATCH,
        TS_FI_GLOBAL_BATCH,
        TS_FI_ZERO,
        TS_FI_FRAMEWORK,
        TS_FI_RECOMPUTE,
        TS_FI_SEQUENCE_PARALLEL,
        TS_FI_TP_COMM_OVERLAP,
        TS_FI_PP_SCHEDULE,
        TS_FI_VPP,
        TS_FI_FIRST_STAGE_LAYERS,
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
    run.tp_comm_overlap = x->tp_comm_overlap;
    run.pp_schedule = x->pp_schedule;
    run.vpp = x->vpp;
    run.first_stage_layers = x->first_stage_layers;
    run.last_stage_layers = x->last_stage_layers;
    run.grad_precision = x->grad_precision;
    out_inputs(w, "request", &run, keep);
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
             p, t, d, c->goodput.cost_usd > 0 ? ", " : "", c->goodput.cost_usd > 0 ? usd : "", e,
             co2);
    ts_jw_str(w, "summary", line);
}

void ts_json_budget(ts_jw *w, const char *key, const ts_api_req *req, const ts_sizing_out *o,
                    const ts_plan *plan)
{
    static const char *const modes[TS_SIZE_MODE_COUNT] = {
        [TS_SIZE_OPTIMAL] = "compute_optimal",
        [TS_SIZE_RATIO] = "tokens_per_param",
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
    out_num(w, &h, TS_T_BG_GPU_HOURS, o->gpu_hours);
    out_num(w, &h, TS_T_BG_DAYS, o->gpu_hours / (double)o->run.gpus / 24.0);
    out_num(w, &h, TS_T_BG_USD, o->gpu_hours * o->run.gpu_hour_usd);
    out_num(w, &h, TS_T_BG_PEAK_FLOPS, o->peak_flops);
    out_num(w, &h, TS_T_BG_MFU, o->mfu);
    out_num(w, &h, TS_T_BG_USEFUL_FRACTION, o->useful_fraction);
    flops.value = o->flops;
    flops.formula = "gpu_hours * 3600 * peak_flops * mfu * useful_fraction";
    flops.assumptions = "the GPU time spent at the plan's MFU, less what failures, restarts and "
                        "checkpoint writes take (compute.goodput); 6 N D model FLOPs";
    out_term(w, TS_T_BG_FLOPS, &flops);
    out_num(w, &h, TS_T_BG_OPTIMAL_PARAMS, o->optimal_params);
    out_num(w, &h, TS_T_BG_OPTIMAL_TOKENS, o->optimal_tokens);
    out_num(w, &h, TS_T_BG_OPTIMAL_LOSS, o->optimal_loss);
    out_num(w, &h, TS_T_BG_PARAMS, o->params);
    out_num(w, &h, TS_T_BG_TOKENS, o->tokens);
    out_num(w, &h, TS_T_BG_TOKENS_PER_PARAM, o->tokens_per_param);
    out_num(w, &h, TS_T_BG_LOSS, o->loss);
    ts_jw_int(w, "iterations", o->iterations);
    ts_jw_bool(w, "converged", o->converged);
    put_summary(w, o, plan);
    out_human(w, &h);
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
        out_num(w, &h, TS_T_SR_STEP_TIME, r->step_time);
        out_num(w, &h, TS_T_SR_PREDICTED_MFU, r->predicted_mfu);
        out_num(w, &h, TS_T_SR_TOKENS_PER_GPU_SECOND, r->tokens_per_gpu_second);
        out_num(w, &h, TS_T_SR_GPU_SECONDS_PER_STEP, r->gpu_seconds);
        out_num(w, &h, TS_T_SR_COST_USD_PER_STEP, r->cost_usd);
        out_num(w, &h, TS_T_SR_WALL_SECONDS, r->wall_seconds);
        ts_jw_num(w, "wall_days", r->wall_seconds / 86400.0);
        out_num(w, &h, TS_T_SR_GPU_HOURS, r->gpu_hours);
        out_num(w, &h, TS_T_SR_COST_USD, r->cost_total_usd);
        out_num(w, &h, TS_T_SR_USEFUL_FRACTION, r->useful_fraction);
        out_num(w, &h, TS_T_SR_GOODPUT_WALL_SECONDS, r->goodput_wall_seconds);
        ts_jw_num(w, "goodput_wall_days", r->goodput_wall_seconds / 86400.0);
        out_num(w, &h, TS_T_SR_GOODPUT_COST_USD, r->goodput_cost_usd);
        out_num(w, &h, TS_T_SR_MEMORY_TOTAL, r->memory_total);
        out_num(w, &h, TS_T_SR_HEADROOM_BYTES, r->headroom);
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
        out_human(w, &h);
        ts_jw_close(w, '}');
    }
    ts_jw_close(w, ']');
}
