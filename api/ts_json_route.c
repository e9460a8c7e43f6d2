/*
 * ts_json_route.c - the routes' own members (the TS_EXTRA rows of
 * core/ts_fields.def) into a parsed request: POST /v1/fit's solve and
 * limits, /v1/search's limits and fixed dimensions, /v1/budget's budget,
 * law and mode.  Called by the parser (ts_json_in.c) once the run's own
 * members are applied; given[] holds every member the request (or an
 * import) gave, checked.
 */
#include <stdio.h>
#include <string.h>

#include "ts_api_int.h"

/* POST /v1/fit: the solve mode and what it clashes with. */
int ts_json_fit_seed(ts_api_req *req, const json_t *const *given, ts_api_err *err)
{
    /* Members the solver would overwrite or ignore: a request we would
     * silently not honour, so refuse it.  TS_FI_COUNT ends each list. */
    static const ts_field_id mb_clash[] = { TS_FI_MICRO_BATCH, TS_FI_MAX_GPUS, TS_FI_COUNT };
    static const ts_field_id gpus_clash[] = { TS_FI_DP, TS_FI_GPUS, TS_FI_MAX_MICRO_BATCH,
                                              TS_FI_COUNT };
    bool mb = req->solve == TS_FIT_SOLVE_MICRO_BATCH;
    const ts_field_id *c;

    if (given[TS_FI_SOLVE] == NULL) {
        ts_api_err_set(err, TS_PROB_MISSING_FIELD, "/solve",
                       "solve is required: \"micro_batch\" (largest micro-batch "
                       "that fits) or \"gpus\" (fewest GPUs that fit)");
        return -1;
    }
    for (c = mb ? mb_clash : gpus_clash; *c != TS_FI_COUNT; c++) {
        const char *name = ts_fields[*c].name;
        char ptr[64];

        /* An imported value (a DeepSpeed micro-batch) is what the solver
         * replaces; only the request's own members clash. */
        if (given[*c] == NULL || req->source[*c] != TS_SRC_REQUEST)
            continue;
        snprintf(ptr, sizeof ptr, "/%s", name);
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, ptr,
                       "%s cannot be given with solve=\"%s\" (%s)", name,
                       mb ? "micro_batch" : "gpus",
                       strncmp(name, "max_", 4) == 0 ? "it limits the other solve mode"
                                                     : "it is what the solver computes");
        return -1;
    }
    if (mb) {
        req->run.micro_batch = 1;
    } else {
        /* Smallest layout the solver may start from: ep must divide dp. */
        req->run.dp = req->run.ep;
        req->run.gpus = 0;
    }
    return 0;
}

/* The search's fixed dimensions: the layout members the caller gave. */
void ts_json_search_seed(ts_api_req *req, const json_t *const *given)
{
    ts_search_cfg *c = &req->search;
    const ts_run *r = &req->run;

    ts_search_defaults(c);
    if (given[TS_FI_OBJECTIVE] != NULL)
        c->objective = (ts_search_objective)ts_json_enum_value(&ts_fields[TS_FI_OBJECTIVE],
                                                               given[TS_FI_OBJECTIVE]);
    if (given[TS_FI_LIMIT] != NULL)
        c->limit = (size_t)json_number_value(given[TS_FI_LIMIT]);
    if (given[TS_FI_MAX_TP] != NULL)
        c->max_tp = (int64_t)json_number_value(given[TS_FI_MAX_TP]);
    if (given[TS_FI_MAX_PP] != NULL)
        c->max_pp = (int64_t)json_number_value(given[TS_FI_MAX_PP]);
    if (given[TS_FI_MAX_CP] != NULL)
        c->max_cp = (int64_t)json_number_value(given[TS_FI_MAX_CP]);
    if (given[TS_FI_MAX_VPP] != NULL)
        c->max_vpp = (int64_t)json_number_value(given[TS_FI_MAX_VPP]);
    if (given[TS_FI_MARGIN] != NULL)
        c->margin = json_number_value(given[TS_FI_MARGIN]);
    if (given[TS_FI_MAX_DAYS] != NULL)
        c->max_days = json_number_value(given[TS_FI_MAX_DAYS]);
    if (given[TS_FI_MAX_COST] != NULL)
        c->max_cost = json_number_value(given[TS_FI_MAX_COST]);
    /* What /v1/plan derives for each framework unless grad_precision is
     * given (by the request or an import). */
    c->grad_follows_framework = req->source[TS_FI_GRAD_PRECISION] == TS_SRC_DEFAULT;
    if (given[TS_FI_MAX_MICRO_BATCH] != NULL)
        c->max_micro_batch = req->max_micro_batch;
    if (given[TS_FI_MAX_GPUS] != NULL)
        c->max_gpus = req->max_gpus;
    c->tp = given[TS_FI_TP] != NULL ? r->tp : 0;
    c->pp = given[TS_FI_PP] != NULL ? r->pp : 0;
    c->cp = given[TS_FI_CP] != NULL ? r->cp : 0;
    c->ep = given[TS_FI_EP] != NULL ? r->ep : 0;
    c->micro_batch = given[TS_FI_MICRO_BATCH] != NULL ? r->micro_batch : 0;
    c->vpp = given[TS_FI_VPP] != NULL ? r->vpp : 0;
    c->zero = given[TS_FI_ZERO] != NULL ? r->zero : -1;
    c->framework = given[TS_FI_FRAMEWORK] != NULL ? (int)r->framework : -1;
    c->recompute_mask = given[TS_FI_RECOMPUTE] != NULL ? 1u << r->recompute : 0;
}

/* POST /v1/budget: exactly one budget member, in GPU-hours; the mode
 * (a given model, a ratio, or compute-optimal) and the law. */
int ts_json_budget_seed(ts_api_req *req, const json_t *const *given, ts_api_err *err)
{
    static const ts_field_id kinds[] = { TS_FI_BUDGET_GPU_HOURS, TS_FI_BUDGET_DAYS,
                                         TS_FI_BUDGET_USD };
    ts_sizing_cfg *c = &req->budget;
    const ts_run *r = &req->unresolved;
    bool model = r->model.layers > 0 || r->model.params > 0;
    double v = 0;
    size_t i, n = 0;

    memset(c, 0, sizeof *c);
    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (given[kinds[i]] == NULL)
            continue;
        if (n++ > 0) {
            char ptr[40];

            snprintf(ptr, sizeof ptr, "/%s", ts_fields[kinds[i]].name);
            ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, ptr,
                           "give one budget: %s and %s both given",
                           ts_fields[req->budget_field].name, ts_fields[kinds[i]].name);
            return -1;
        }
        req->budget_field = kinds[i];
        v = json_number_value(given[kinds[i]]);
    }
    if (n == 0) {
        ts_api_err_set(err, TS_PROB_MISSING_FIELD, "/budget_gpu_hours",
                       "give the budget: budget_gpu_hours, budget_days (of the run's gpus) "
                       "or budget_usd (at gpu_hour_usd)");
        return -1;
    }
    if (r->gpus <= 0) {
        ts_api_err_set(err, TS_PROB_MISSING_FIELD, "/gpus",
                       "a budget plan runs on a given number of GPUs: give gpus, not dp");
        return -1;
    }
    switch (req->budget_field) {
    case TS_FI_BUDGET_DAYS:
        c->gpu_hours = v * 24.0 * (double)r->gpus;
        break;
    case TS_FI_BUDGET_USD:
        if (!(r->gpu_hour_usd > 0)) {
            ts_api_err_set(err, TS_PROB_MISSING_FIELD, "/gpu_hour_usd",
                           "budget_usd needs the price of a GPU-hour: give gpu_hour_usd");
            return -1;
        }
        c->gpu_hours = v / r->gpu_hour_usd;
        break;
    default:
        c->gpu_hours = v;
        break;
    }
    c->field = ts_fields[req->budget_field].name;
    c->search = req->search;
    c->law = given[TS_FI_SCALING_LAW] != NULL
                 ? (ts_scaling_law)ts_json_enum_value(&ts_fields[TS_FI_SCALING_LAW],
                                                      given[TS_FI_SCALING_LAW])
                 : TS_LAW_HOFFMANN;
    c->mode = model ? TS_SIZE_MODEL : TS_SIZE_OPTIMAL;
    if (given[TS_FI_TOKENS_PER_PARAM] != NULL) {
        if (model) {
            ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, "/tokens_per_param",
                           "tokens_per_param sizes the model: it cannot go with a given model "
                           "(whose tokens the budget sets)");
            return -1;
        }
        c->mode = TS_SIZE_RATIO;
        c->tokens_per_param = json_number_value(given[TS_FI_TOKENS_PER_PARAM]);
    }
    if (given[TS_FI_TOKENS] != NULL && req->source[TS_FI_TOKENS] == TS_SRC_REQUEST) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, "/tokens",
                       "the budget sets the tokens: leave tokens out");
        return -1;
    }
    return 0;
}
