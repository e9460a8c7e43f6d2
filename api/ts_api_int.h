/*
 * ts_api_int.h - private interfaces shared by the api modules.
 *
 * ts_json_in.c   request body -> ts_api_req (validation)
 * ts_json_out.c  core result structs -> JSON text (via ts_jw.c)
 * ts_jw.c        the one JSON writer: answers and problem bodies
 * ts_buf.c       the one capped buffer (ts_buf.h; server and CLI too)
 * ts_problem.c   RFC 9457 problem bodies (the problem-type table), response lifetime
 * ts_fmt.c       human-readable quantities ("12.3 GiB"), ts_fmt.h
 * ts_utf8.c      text cut at character boundaries (ts_utf8.h; the CLI too)
 * ts_terms.c     the output-terms table (ts_terms.h)
 * ts_routes.c    the /v1 route table and ts_api_handle()
 *
 * Nothing here is installed or used outside api/, tests/api/ and fuzz/.
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
#include "ts_utf8.h"

/* ------------------------------------------------------------------ */
/* Errors of the JSON layer                                            */
/* ------------------------------------------------------------------ */

#define TS_API_FIELD_LEN 256
#define TS_API_DETAIL_LEN 768

/* One problem to report: becomes an application/problem+json body. */
typedef struct ts_api_err {
    unsigned status;               /* the type's, from the table: 400, 422, ... */
    const char *slug;              /* static, "unknown-field" */
    char field[TS_API_FIELD_LEN];  /* JSON pointer "/tp", "" when none */
    char detail[TS_API_DETAIL_LEN];
} ts_api_err;

/* The problem of type slug (its status and title from the one table,
 * api/ts_problem.c), at field (a JSON pointer, NULL or "" for none). */
void ts_api_err_set(ts_api_err *e, const char *slug, const char *field,
                    const char *fmt, ...)
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

/* Where a request member lands (the BIND column of core/ts_fields.def). */
typedef enum ts_json_bind {
    TS_BIND_INT64 = 0,  /* int64_t in ts_run at off */
    TS_BIND_INT,        /* int in ts_run at off (zero) */
    TS_BIND_NUM,        /* double in ts_run at off */
    TS_BIND_PARAMS,     /* double, null = not given */
    TS_BIND_BOOL,
    TS_BIND_ENUM,       /* enum in ts_run at off: ints[i] for values[i] */
    TS_BIND_HBM_GIB,    /* GiB onto gpu.hbm_bytes */
    TS_BIND_PRESET,     /* "model": preset id or null */
    TS_BIND_GPU,        /* catalogue id */
    TS_BIND_HBM,        /* GB onto gpu.hbm_bytes */
    TS_BIND_PEAK,       /* TFLOP/s onto the compute-precision peak */
    TS_BIND_SOLVE,      /* fit extras: into ts_api_req */
    TS_BIND_MAX_MB,
    TS_BIND_MAX_GPUS,
    TS_BIND_NUM_OPT,    /* double in ts_run at off; null or absent = 0 = "not given" */
    TS_BIND_SEARCH,     /* search extras: into ts_api_req.search */
    TS_BIND_BUDGET,     /* budget extras: into ts_api_req.budget */
    TS_BIND_LORA_TARGETS /* LoRA target names onto the run's bit set (core/ts_lora.c) */
} ts_json_bind;

typedef struct ts_json_field {
    ts_api_field f;     /* public description (first: ts_api_request_field) */
    unsigned char nlen; /* strlen(f.name): the echo writes names unmeasured */
    ts_json_bind kind;
    size_t off;         /* offsetof(ts_run, ...) for the plain kinds */
    const int *ints;    /* enums: the value of each f.values[i] */
} ts_json_field;

/* Index of every member in ts_json_fields[], one per entry of the
 * registry (core/ts_fields.def), in its order. */
typedef enum ts_json_fi {
#define TS_FIELD(ID, ...) TS_FI_##ID,
#include "ts_fields.def"
    TS_FI_COUNT
} ts_json_fi;

extern const ts_json_field ts_json_fields[TS_FI_COUNT];

typedef enum ts_api_solve {
    TS_API_SOLVE_NONE = 0,
    TS_API_SOLVE_MICRO_BATCH,
    TS_API_SOLVE_GPUS
} ts_api_solve;

/* Where a resolved input came from (the "inputs_source" answer member),
 * in the order they are applied: later ones override earlier ones. */
typedef enum ts_api_src {
    TS_SRC_DEFAULT = 0,          /* documented default, or derived from others */
    TS_SRC_PRESET,               /* "model": a preset */
    TS_SRC_CATALOGUE,            /* "model": a catalogue entry's config.json (ts_catalogue.c) */
    TS_SRC_HF,                   /* "hf_config" (ts_import_hf.c) */
    TS_SRC_AXOLOTL,              /* "axolotl_config" (ts_import_yaml.c) */
    TS_SRC_NEMO,                 /* "nemo_config" (ts_import_nemo.c) */
    TS_SRC_DS,                   /* "deepspeed_config" (ts_import_ds.c) */
    TS_SRC_MEGATRON,             /* "megatron_args" (ts_import_mega.c) */
    TS_SRC_REQUEST,              /* the member itself */
    TS_SRC_COUNT
} ts_api_src;

const char *ts_api_src_name(ts_api_src s);

/* What an import could not map exactly: reported, never silently dropped
 * ("import_notes" in the answer). */
#define TS_API_NOTES_MAX 16
#define TS_API_NOTE_LEN 240

typedef struct ts_api_notes {
    size_t n;
    bool truncated;              /* more notes than TS_API_NOTES_MAX */
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
int ts_api_err_respond_notes(const ts_api_err *e, const ts_api_notes *notes,
                             ts_api_response *resp);
int ts_api_problem_notes(ts_api_response *resp, const char *slug, const char *detail,
                         const char *field, const ts_api_notes *notes);

/* A parsed request: the run plus the /v1/fit extras. */
typedef struct ts_api_req {
    unsigned char source[TS_FI_COUNT]; /* ts_api_src of every member */
    bool imported;               /* an import member was given */
    ts_api_notes notes;
    ts_run run;                  /* resolved (ts_run_resolve passed) */
    ts_run unresolved;           /* before resolution: what fit re-resolves */
    ts_api_solve solve;
    int64_t max_micro_batch;     /* default 1024 */
    int64_t max_gpus;            /* default 65536 */
    ts_search_cfg search;        /* POST /v1/search: limits and fixed dimensions */
    ts_sizing_cfg budget;        /* POST /v1/budget: the budget in GPU-hours, mode, law */
    ts_json_fi budget_field;     /* the budget member given (its pointer names errors) */
} ts_api_req;

/* Parse and validate body into req.  fit: the route is /v1/fit (accepts
 * and requires its extras).  Returns 0, or -1 with *err filled. */
int ts_json_parse_run(const char *body, size_t len, bool fit,
                      ts_api_req *req, ts_api_err *err);

/* POST /v1/search: like ts_json_parse_run, but the layout members that
 * are given fix that dimension of the search (req->search), the others
 * are searched, and req->run is left unresolved (the search resolves
 * every candidate). */
int ts_json_parse_search(const char *body, size_t len, ts_api_req *req,
                         ts_api_err *err);

/* POST /v1/budget: as ts_json_parse_search (the run unresolved, the
 * given layout members fixed), plus the budget: exactly one of
 * budget_gpu_hours, budget_days, budget_usd, converted to GPU-hours. */
int ts_json_parse_budget(const char *body, size_t len, ts_api_req *req, ts_api_err *err);

/* Names of the import members ("hf_config", "axolotl_config",
 * "deepspeed_config", "megatron_args"), NULL-terminated, in the order they
 * apply: request members outside the field table (ts_import.c). */
extern const char *const ts_import_members[];


/* Field name of the closest known request field within edit distance 2,
 * or NULL.  fit selects whether the fit extras count as known. */
const char *ts_json_suggest(const char *key, bool fit);

/* ------------------------------------------------------------------ */
/* Responses: a compact streaming JSON writer (ts_jw.c)                */
/* ------------------------------------------------------------------ */

typedef struct ts_jw {
    ts_buf b;               /* the text (ts_buf.c: capped, NUL-terminated) */
    bool first;             /* next value is the first in its container */
    bool oom;               /* malloc failed or the hard cap was reached */
    const char *nonfinite;  /* static key of the first NaN/Inf, or NULL */
} ts_jw;

void ts_jw_init(ts_jw *w);
void ts_jw_discard(ts_jw *w);
/* The NUL-terminated text (caller frees), or NULL after oom. */
char *ts_jw_finish(ts_jw *w, size_t *len);

/* key is the member name inside an object, NULL inside an array or at
 * the top.  Keys are static literals or table names: they are not
 * escaped.  Each call below passes the key's length along; for a literal
 * key the compiler folds it (ts_jw_klen inlines), so the writer copies
 * keys without a strlen. */
static inline size_t ts_jw_klen(const char *key)
{
    return key != NULL ? strlen(key) : 0;
}

void ts_jw_open_(ts_jw *w, const char *key, size_t kl, char bracket);
void ts_jw_close(ts_jw *w, char bracket);                   /* '}' or ']' */
void ts_jw_num_(ts_jw *w, const char *key, size_t kl, double v);
void ts_jw_int_(ts_jw *w, const char *key, size_t kl, int64_t v);
void ts_jw_bool_(ts_jw *w, const char *key, size_t kl, bool v);
void ts_jw_null_(ts_jw *w, const char *key, size_t kl);
/* s of length n (escaped as needed); s NULL writes null. */
void ts_jw_strl_(ts_jw *w, const char *key, size_t kl, const char *s, size_t n);
/* The same for a text that may hold bytes a client sent: each byte that
 * does not start well-formed UTF-8 goes out as U+FFFD. */
void ts_jw_text_(ts_jw *w, const char *key, size_t kl, const char *s, size_t n);
#define ts_jw_text(w, key, s) \
    ts_jw_text_((w), (key), ts_jw_klen(key), (s), (s) != NULL ? strlen(s) : 0)

#define ts_jw_open(w, key, bracket) ts_jw_open_((w), (key), ts_jw_klen(key), (bracket)) /* '{' or '[' */
#define ts_jw_num(w, key, v) ts_jw_num_((w), (key), ts_jw_klen(key), (v))
#define ts_jw_int(w, key, v) ts_jw_int_((w), (key), ts_jw_klen(key), (v))
#define ts_jw_bool(w, key, v) ts_jw_bool_((w), (key), ts_jw_klen(key), (v))
#define ts_jw_null(w, key) ts_jw_null_((w), (key), ts_jw_klen(key))
/* NULL -> null */
#define ts_jw_str(w, key, s) ts_jw_str_((w), (key), ts_jw_klen(key), (s))
/* at most cap bytes of s (a fixed-size member that may fill its array) */
#define ts_jw_strn(w, key, s, cap) \
    ts_jw_strl_((w), (key), ts_jw_klen(key), (s), strnlen((s), (cap)))

static inline void ts_jw_str_(ts_jw *w, const char *key, size_t kl, const char *s)
{
    ts_jw_strl_(w, key, kl, s, s != NULL ? strlen(s) : 0);
}

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
