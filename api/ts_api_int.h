/*
 * ts_api_int.h - private interfaces shared by the api modules.
 *
 * ts_json_in.c   request body -> ts_api_req (validation)
 * ts_json_check.c  one member against its row of the field table
 * ts_json_dup.c  duplicate object keys in the request's text
 * ts_json_route.c  the routes' own members (fit, search, budget)
 * ts_json_out.c  core result structs -> JSON text (via lib/ts_jw.h)
 * ts_problem.c   RFC 9457 problem bodies (the problem-type table), response lifetime
 * ts_terms.c     the output-terms table (ts_terms.h)
 * ts_routes.c    the /v1 route table and ts_api_handle()
 *
 * The importers (import/) share these types.  lib/ holds the buffer,
 * the JSON writer, number and text helpers (libc only).
 *
 * Nothing here is installed or used outside api/, import/, tests/ and fuzz/.
 */
#ifndef TS_API_INT_H
#define TS_API_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "trainsize.h"
#include "ts_api.h"
#include "ts_buf.h"
#include "ts_fmt.h"
#include "ts_jw.h"
#include "ts_utf8.h"

/* ------------------------------------------------------------------ */
/* Errors of the JSON layer                                            */
/* ------------------------------------------------------------------ */

#define TS_FT_LEN         256
#define TS_API_DETAIL_LEN 768

/* One problem to report: becomes an application/problem+json body. */
typedef struct ts_api_err {
    ts_problem type;       /* api/ts_problems.def */
    unsigned status;       /* the type's, from the table: 400, 422, ... */
    const char *slug;      /* the type's, static: "unknown-field" */
    char field[TS_FT_LEN]; /* JSON pointer "/tp", "" when none */
    char detail[TS_API_DETAIL_LEN];
} ts_api_err;

/* The problem of type p (its slug, status and title from the one table,
 * api/ts_problems.def), at field (a JSON pointer, NULL or "" for none). */
void ts_api_err_set(ts_api_err *e, ts_problem p, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Map a core error (status + field name) onto a problem. */
void ts_api_err_from_core(ts_api_err *e, const ts_error *core);

/* Fill resp with the problem body for e.  Returns 0, or -1 when memory ran
 * out (resp then holds the static 503). */
int ts_api_err_respond(const ts_api_err *e, ts_api_response *resp);

/* The static 503 used when memory runs out (body needs no freeing). */
void ts_api_oom_response(ts_api_response *resp);

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

/* The request's members are the rows of the core's field table
 * (ts_fields[], TS_FI_* indices: core/ts_fields.h). */

/* Where a resolved input came from (the "inputs_source" answer member),
 * in the order they are applied: later ones override earlier ones. */
typedef enum ts_api_src {
    TS_SRC_DEFAULT = 0,  /* documented default, or derived from others */
    TS_SRC_PRESET,       /* "model": a preset */
    TS_SRC_CATALOGUE,    /* "model": a catalogue entry's config.json (ts_catalogue.c) */
    TS_SRC_HF,           /* "hf_config" (ts_hf.c) */
    TS_SRC_AXOLOTL,      /* "axolotl_config" (ts_axolotl.c) */
    TS_SRC_LLAMAFACTORY, /* "llamafactory_config" (ts_llamafactory.c) */
    TS_SRC_NEMO,         /* "nemo_config" (ts_nemo.c) */
    TS_SRC_DS,           /* "deepspeed_config" (ts_deepspeed.c) */
    TS_SRC_MEGATRON,     /* "megatron_args" (ts_megatron.c) */
    TS_SRC_REQUEST,      /* the member itself */
    TS_SRC_COUNT
} ts_api_src;

const char *ts_api_src_name(ts_api_src s);

/* What an import could not map exactly: reported, never silently dropped
 * ("import_notes" in the answer). */
#define TS_API_NOTES_MAX 16
#define TS_API_NOTE_LEN  240

typedef struct ts_api_notes {
    size_t n;
    bool truncated; /* more notes than TS_API_NOTES_MAX */
    char text[TS_API_NOTES_MAX][TS_API_NOTE_LEN];
    /* A note about a member another source may decide (torch_dtype is not
     * the precision): that member and the source that noted it, dropped
     * when someone else gives the member (ts_import_notes_settle).
     * about TS_FI_COUNT: a note about nothing that can be given. */
    unsigned short about[TS_API_NOTES_MAX];
    unsigned char by[TS_API_NOTES_MAX];
} ts_api_notes;

/* The same with the import notes gathered before the refusal (notes may be
 * NULL or empty: then no member), as "import_notes" like a 200 answer. */
int ts_api_err_respond_notes(const ts_api_err *e, const ts_api_notes *notes, ts_api_response *resp);
int ts_api_problem_notes(ts_api_response *resp, ts_problem p, const char *detail, const char *field,
                         const ts_api_notes *notes);

/* A parsed request: the run plus the /v1/fit extras. */
typedef struct ts_api_req {
    unsigned char source[TS_FI_COUNT]; /* ts_api_src of every member */
    bool imported;                     /* an import member was given */
    ts_api_notes notes;
    ts_run run;        /* resolved (ts_run_resolve passed) */
    ts_run unresolved; /* before resolution: what fit re-resolves */
    ts_fit_solve solve;
    int64_t max_micro_batch;  /* default 1024 */
    int64_t max_gpus;         /* default 65536 */
    ts_search_cfg search;     /* POST /v1/search: limits and fixed dimensions */
    ts_sizing_cfg budget;     /* POST /v1/budget: the budget in GPU-hours, mode, law */
    ts_field_id budget_field; /* the budget member given (its pointer names errors) */
} ts_api_req;

/* Parse and validate body into req.  fit: the route is /v1/fit (accepts
 * and requires its extras).  Returns 0, or -1 with *err filled. */
int ts_json_parse_run(const char *body, size_t len, bool fit, ts_api_req *req, ts_api_err *err);

/* POST /v1/search: like ts_json_parse_run, but the layout members that
 * are given fix that dimension of the search (req->search), the others
 * are searched, and req->run is left unresolved (the search resolves
 * every candidate). */
int ts_json_parse_search(const char *body, size_t len, ts_api_req *req, ts_api_err *err);

/* POST /v1/budget: as ts_json_parse_search (the run unresolved, the
 * given layout members fixed), plus the budget: exactly one of
 * budget_gpu_hours, budget_days, budget_usd, converted to GPU-hours. */
int ts_json_parse_budget(const char *body, size_t len, ts_api_req *req, ts_api_err *err);

/* Names of the import members ("hf_config", "axolotl_config",
 * "deepspeed_config", "megatron_args"), NULL-terminated, in the order they
 * apply: request members outside the field table (ts_import.c). */
extern const char *const ts_import_members[];

/* ---- One member's checks (ts_json_check.c) ---- */

/* Field name of the closest known request field within edit distance 2,
 * or NULL.  fit selects whether the fit extras count as known. */
const char *ts_json_suggest(const char *key, bool fit);
/* The row of key in ts_fields[], or SIZE_MAX. */
size_t ts_json_field_index(const char *key);
/* The index of an import member ("hf_config", ...) in ts_import_members,
 * or -1. */
int ts_json_import_index(const char *key);
/* Type and range check of one member against its row; no side effects.
 * 0, or -1 with err naming the member. */
int ts_json_check_value(const ts_field *f, const json_t *v, ts_api_err *err);
/* The 400 for a key that is no member of this route (fit, search: which
 * route), with the closest name. */
void ts_json_unknown_field(ts_api_err *err, const char *key, bool fit, bool search);
/* "an object", "a string", ...: what v is, for a message. */
const char *ts_json_kind(const json_t *v);
/* At most max bytes of s into buf, ending on a UTF-8 boundary, "..." if
 * cut. */
void ts_json_quote_short(char *buf, size_t size, const char *s, size_t max);
/* "/" + key as an RFC 6901 JSON pointer token into buf (cut on a
 * character boundary when the key is absurdly long). */
void ts_json_pointer(char *buf, size_t size, const char *key);

/* The value (enumerator) of an enum member that ts_json_check_value()
 * accepted. */
int ts_json_enum_value(const ts_field *f, const json_t *v);

/* ---- The routes' own members into req (ts_json_route.c) ---- */

/* given: every member the request or an import gave, checked, indexed by
 * TS_FI_*.  POST /v1/fit: solve is required, and the members it would
 * overwrite are refused; 0 or -1 with err set. */
int ts_json_fit_seed(ts_api_req *req, const json_t *const *given, ts_api_err *err);
/* POST /v1/search (and /v1/budget): the limits and the fixed dimensions. */
void ts_json_search_seed(ts_api_req *req, const json_t *const *given);
/* POST /v1/budget: exactly one budget, in GPU-hours; the mode and law. */
int ts_json_budget_seed(ts_api_req *req, const json_t *const *given, ts_api_err *err);

/* ---- Duplicate keys in the request's text (ts_json_dup.c) ---- */

/* In the top-level object root was decoded from: 0 (none), 1 (err set)
 * or -1 (out of memory). */
int ts_json_dup_body(const char *body, size_t len, const json_t *root, ts_api_err *err);
/* Inside the import members' objects, likewise. */
int ts_json_dup_imports(const char *body, size_t len, ts_api_err *err);

/* The response objects of api/CONTRACT.md, each written as member key. */
void ts_json_inputs(ts_jw *w, const char *key, const ts_run *r);
/* "inputs_source" (every echoed member's ts_api_src) and "import_notes"
 * (ts_import.c). */
void ts_json_inputs_source(ts_jw *w, const char *key, const ts_api_req *req);
void ts_json_import_notes(ts_jw *w, const char *key, const ts_api_notes *n);
void ts_json_params(ts_jw *w, const char *key, const ts_params *p);
void ts_json_memory(ts_jw *w, const char *key, const ts_memory *m);
/* r: the run the answer is for; batch_default: it gave no global_batch
 * (then "assumptions" says which was chosen and why). */
void ts_json_compute(ts_jw *w, const char *key, const ts_compute *c, const ts_run *r,
                     bool batch_default);
void ts_json_checkpoint(ts_jw *w, const char *key, const ts_ckpt *k);
void ts_json_sweep(ts_jw *w, const char *key, const ts_sweep_point *pts, size_t n);
void ts_json_step(ts_jw *w, const char *key, const ts_step *s);
void ts_json_goodput(ts_jw *w, const char *key, const ts_goodput *g);
void ts_json_energy(ts_jw *w, const char *key, const ts_energy *e);
/* req: the search's (its cfg, the query's run and the source of each
 * member, for each result's "request"). */
void ts_json_search(ts_jw *w, const ts_api_req *req, const ts_search_out *o);
/* POST /v1/budget's "budget" object. */
void ts_json_budget(ts_jw *w, const char *key, const ts_api_req *req, const ts_sizing_out *o,
                    const ts_plan *plan);
/* Returns TS_OK, or the core's error for a broken catalogue entry. */
/* req: scratch for resolving each catalogue entry (ts_catalogue_run). */
ts_status ts_json_presets(ts_jw *w, const char *key, ts_api_req *req, ts_error *err);
void ts_json_gpus(ts_jw *w, const char *key);

/* Human-readable quantities: ts_fmt.h (shared with the CLI); which
 * figure gets which: the output-terms table, ts_terms.h. */

#endif /* TS_API_INT_H */
