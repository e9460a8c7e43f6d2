/*
 * ts_json_out_int.h - what the answer writers share (out_*): the "human"
 * map of an object, and the writers of a term, of a number with its text
 * and of the run's inputs.  The writers: ts_json_out.c (the estimate's
 * objects), ts_json_plan.c (search, budget), ts_json_list.c (presets,
 * GPUs); their interface is ts_json_* in ts_api_int.h.
 */
#ifndef TS_JSON_OUT_INT_H
#define TS_JSON_OUT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "ts_api_int.h"
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
void out_term(ts_jw *w, ts_term_id id, const ts_term *t);
/* A number of the table: its text beside it (a sibling row), or kept in h
 * for the object's "human" map. */
void out_num(ts_jw *w, human_acc *h, ts_term_id id, double v);
/* "human": {key: text, ...} for the numbers out_num kept. */
void out_human(ts_jw *w, const human_acc *h);
/* The run's members as a request names them; keep: which (NULL: all). */
void out_inputs(ts_jw *w, const char *key, const ts_run *r, const bool *keep);

#endif /* TS_JSON_OUT_INT_H */
