/*
 * ts_fields.h - the request-field registry as a runtime table.
 *
 * Renamed on 2026-12-04 (issue 23 item 1): the api's ts_json_fields[i].f.X
 * is now ts_fields[i].X (name, type, minimum, maximum, exclusive_minimum,
 * exclusive_maximum, values, nullable, fit_only, search_only,
 * budget_only keep their names); the struct ts_json_field is ts_field
 * (ts_api_field, api/ts_api.h, is the same type), TS_API_FIELD_<T> is
 * TS_FT_<T>, ts_json_fi is ts_field_id, ts_api_solve is ts_fit_solve
 * and the TS_BIND_* binders are the TS_FK_* kinds below.  ts_field_docs[]
 * (api/ts_fields_doc.h) is unchanged, index for index.
 *
 * core/ts_fields.def has one row per input; core/ts_fields.c expands it
 * once into ts_fields[], which every consumer loops over: the defaults
 * and the range checks (ts_run.c), the request parser and the "inputs"
 * echo (api/), the docs table and the generated copies
 * (tools/ts_gen_fields.c).  Plain data: no I/O, JSON or allocation.
 */
#ifndef TS_FIELDS_H
#define TS_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

/* The JSON type of a member; a STRING with values is an enum. */
typedef enum ts_field_type {
    TS_FT_INTEGER = 0, /* integral JSON number (2, 2.0, 2e0); 1.5 is rejected */
    TS_FT_NUMBER,      /* any finite JSON number */
    TS_FT_BOOLEAN,     /* true or false */
    TS_FT_STRING       /* an id or one of values[] */
} ts_field_type;

/* Where a member lands.  The plain kinds write the ts_run member at off
 * as given; CUSTOM members have code of their own, by field id (the
 * parser's in api/ts_json_in.c, the echo's in api/ts_json_out.c). */
typedef enum ts_field_kind {
    TS_FK_INT64 = 0, /* int64_t */
    TS_FK_INT,       /* int */
    TS_FK_NUM,       /* double */
    TS_FK_NUM_OPT,   /* double; null or absent = 0 = "not given" */
    TS_FK_BOOL,      /* bool */
    TS_FK_ENUM,      /* an enum (int-sized): ints[k] for values[k] */
    TS_FK_CUSTOM
} ts_field_kind;

/* What POST /v1/fit solves for (the "solve" member). */
typedef enum ts_fit_solve {
    TS_FIT_SOLVE_NONE = 0,
    TS_FIT_SOLVE_MICRO_BATCH,
    TS_FIT_SOLVE_GPUS
} ts_fit_solve;

/* One index per row of the registry, in its order (TS_FI_TP, ...).  The
 * first include of the .def also defines its FLAGS (TS_FF_*) and the
 * enumerations' value lists (TS_VALUES_*). */
typedef enum ts_field_id {
#define TS_FIELD(ID, ...) ID,
#define TS_EXTRA(ID, ...) ID,
#include "ts_fields.def"
    TS_FI_COUNT
} ts_field_id;

/* One row.  The first members are the request's public description
 * (ts_api_request_field(), api/ts_api.h); the rest are the binding. */
typedef struct ts_field {
    const char *name; /* the JSON member, "tp" */
    ts_field_type type;
    double minimum, maximum;   /* integer and number members */
    bool exclusive_minimum;    /* value must be > minimum */
    bool exclusive_maximum;    /* value must be < maximum */
    const char *const *values; /* enum names, NULL-terminated; NULL = free id */
    bool nullable;             /* null is accepted and means "not given" */
    bool fit_only;             /* accepted by POST /v1/fit (and /v1/search, but "solve") only */
    bool search_only;          /* accepted by POST /v1/search only */
    bool budget_only;          /* accepted by POST /v1/budget only */
    ts_field_kind kind;
    size_t off;         /* offsetof(ts_run, member); 0 for route extras */
    const int *ints;    /* enums: the enumerator of each values[k] */
    unsigned flags;     /* TS_FF_* */
    double def;         /* the default ts_run_defaults() stores (plain
                                    * kinds); NAN: none of its own */
    const char *member; /* "model.layers" as written; NULL: a route's extra */
    unsigned char nlen; /* strlen(name): the echo writes names unmeasured */
} ts_field;

extern const ts_field ts_fields[TS_FI_COUNT];

#endif /* TS_FIELDS_H */
