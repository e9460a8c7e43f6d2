/*
 * ts_search_int.h - the layout search's state, shared by its two files:
 * ts_search.c (the enumeration, ts_search_run) and ts_search_rank.c (a
 * candidate's memory, cost and rank).
 */
#ifndef TS_SEARCH_INT_H
#define TS_SEARCH_INT_H

#include "ts_internal.h"

/* Divisors of layers / pp kept for vpp (numbers up to 2^20, the layers
 * limit, have at most 240). */
#define TS_SEARCH_VDIVISORS 256

typedef struct ts_search_ctx {
    const ts_run *base;
    const ts_search_cfg *cfg;
    ts_params params;
    ts_search_out *out;
    size_t limit;
    ts_budget *b; /* exhausted: stop */
    int64_t max_mb, max_vpp;
    bool gb_given;      /* the run's global batch is kept; else each layout's default */
    bool tp_overlap;    /* the run's tp_comm_overlap, on each layout with tp > 1 (SP) */
    const int64_t *div; /* the global batch's divisors, ascending */
    size_t ndiv;
    int64_t vdiv[TS_SEARCH_VDIVISORS]; /* vpp candidates of the current pp, ascending */
    size_t nvdiv;
    int64_t g_max;   /* the most GPUs a layout may take */
    int64_t g_fixed; /* the GPUs every layout takes; 0: any up to g_max */
} ts_search_ctx;

/* Memory of one candidate; true when its layout is valid and it fits
 * with the margin. */
bool ts_search_fits(ts_search_ctx *c, ts_run *cand, ts_memory *mem);
/* Step time, cost and run length of a candidate that fits; ranked when
 * it is within max_days / max_cost and among the best c->limit. */
void ts_search_cost(ts_search_ctx *c, const ts_run *cand, const ts_memory *mem);
/* The "why" of result i: the last one's, or what it beats the next by. */
void ts_search_why_last(ts_search_out *out, size_t i);
void ts_search_why_pair(const ts_search_ctx *c, ts_search_result *a, const ts_search_result *b,
                        size_t i);

#endif /* TS_SEARCH_INT_H */
