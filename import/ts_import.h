/*
 * ts_import.h - launch configs users already have -> request members.
 *
 * ts_import.c       the shared part: collected values, notes, typed getters
 * ts_hf.c           Hugging Face config.json ("hf_config")
 * ts_deepspeed.c    DeepSpeed JSON config ("deepspeed_config")
 * ts_megatron.c     Megatron-LM argument string ("megatron_args")
 * ts_axolotl.c      axolotl YAML ("axolotl_config", libyaml)
 * ts_llamafactory.c LLaMA-Factory YAML ("llamafactory_config", libyaml)
 * ts_nemo.c         NeMo training YAML ("nemo_config", libyaml)
 *
 * An importer does not write into the ts_run: it proposes values for
 * request members (by field-table index), each with the JSON pointer of
 * where it came from.  ts_json_in.c then runs every proposed value through
 * the same type and range checks as a request member (an error then
 * names the imported key, e.g. /hf_config/num_hidden_layers) and applies
 * it unless the request gives that member itself.  Order: defaults,
 * preset, hf_config, axolotl_config, llamafactory_config, nemo_config, deepspeed_config,
 * megatron_args, request.
 */
#ifndef TS_IMPORT_H
#define TS_IMPORT_H

#include "ts_api_int.h"

/* The import members, in the order they apply (ts_import_members). */
typedef enum ts_import_member {
    TS_IMP_HF = 0,       /* hf_config: object */
    TS_IMP_AXOLOTL,      /* axolotl_config: YAML text */
    TS_IMP_LLAMAFACTORY, /* llamafactory_config: YAML text */
    TS_IMP_NEMO,         /* nemo_config: YAML text */
    TS_IMP_DS,           /* deepspeed_config: object */
    TS_IMP_MEGA,         /* megatron_args: text */
    TS_IMP_COUNT
} ts_import_member;

#define TS_IMPORT_ORIGIN_LEN 160
#define TS_IMPORT_BASE_LEN   96

/* Caps on an imported document, on top of the 64 KiB body cap: far above
 * any real config (a DeepSeek-V3 config.json has ~50 members, a long
 * Megatron launch line ~150 tokens), low enough to bound the work. */
#define TS_IMPORT_NODES_MAX  2048  /* JSON values in one document */
#define TS_IMPORT_DEPTH_MAX  8     /* nesting of objects/arrays */
#define TS_IMPORT_ARGS_MAX   32768 /* bytes of megatron_args */
#define TS_IMPORT_TOKENS_MAX 2048  /* words of megatron_args */

/* DeepSpeed batch keys left "auto" for the Hugging Face Trainer to fill:
 * ts_json_in.c derives no value from their absence. */
#define TS_DS_AUTO_TBS   1u /* train_batch_size */
#define TS_DS_AUTO_MICRO 2u /* train_micro_batch_size_per_gpu */
#define TS_DS_AUTO_GAS   4u /* gradient_accumulation_steps */

typedef struct ts_import {
    json_t *vals[TS_FI_COUNT]; /* owned; NULL = not proposed */
    ts_api_src src[TS_FI_COUNT];
    char origin[TS_FI_COUNT][TS_IMPORT_ORIGIN_LEN];
    /* gradient_accumulation_steps (DeepSpeed, axolotl): global batch =
     * micro x gas x dp, known only once dp is (ts_json_in.c applies it). */
    int64_t ds_gas;
    ts_api_src gas_src;
    char gas_origin[TS_IMPORT_ORIGIN_LEN];
    bool ds_train_batch; /* global_batch came from train_batch_size */
    /* A trainer's max_steps (axolotl, LLaMA-Factory): tokens = steps x
     * global batch x seq, known only once the global batch is
     * (ts_import_apply_steps). */
    int64_t max_steps;
    ts_api_src steps_src;
    char steps_origin[TS_IMPORT_ORIGIN_LEN];
    unsigned ds_auto;    /* TS_DS_AUTO_*: batch keys given as "auto" */
    ts_api_notes *notes; /* the request's */
    /* Members the request gives itself: an importer does not demand what
     * it would not use (megatron_args' vocabulary, a value it cannot
     * read). */
    bool req_has[TS_FI_COUNT];
    /* A config's model dtype without a wrapper (ts_import_settle):
     * "bf16" / "fp16" or "" (none), decided once every import and the
     * request have set the framework and zero.  axolotl's bf16/fp16
     * without FSDP or DeepSpeed, LLaMA-Factory's pure_bf16. */
    char d16[8];
    bool d16_full;       /* a full fine-tune whose states all stay 16-bit */
    bool d16_embed_fp32; /* a full fine-tune whose embeddings axolotl keeps fp32 */
    bool d16_any_zero;   /* holds under FSDP too (nothing upcasts: pure_bf16) */
    bool d16_no_ds3;     /* the config's tool refuses it under ZeRO-3 */
    ts_api_src d16_src;
    const char *d16_base;                      /* the config's pointer, "/axolotl_config" */
    char d16_origin[TS_IMPORT_ORIGIN_LEN];     /* of master_weights false */
    char d16_opt_origin[TS_IMPORT_ORIGIN_LEN]; /* of optimizer_precision bf16 */
    /* A config's 8-bit bitsandbytes base, which its trainer refuses to
     * shard (LLaMA-Factory): the key's pointer, "" when none
     * (ts_import_settle). */
    char q8_origin[TS_IMPORT_ORIGIN_LEN];
    /* A model transformers trains with eager attention unless a kernel
     * that knows its parts is loaded (gpt-oss's sinks): the config's
     * pointer, "" when none; for a transformers model (framework hf, or
     * an axolotl or LLaMA-Factory config's DeepSpeed) the attention is
     * eager when neither the request nor another import says
     * (ts_import_settle). */
    char eager_origin[TS_IMPORT_ORIGIN_LEN];
    ts_api_src eager_src;
    /* An import whose trainer always loads the model through transformers
     * (axolotl, LLaMA-Factory): its attention rules (eager for gpt-oss,
     * sdpa for a window) hold under its DeepSpeed as under framework hf. */
    bool transformers;
} ts_import;

void ts_import_init(ts_import *im, ts_api_notes *notes);
/* Whether an import of source src gave member fi. */
static inline bool ts_import_from(const ts_import *im, ts_field_id fi, ts_api_src src)
{
    return im->vals[fi] != NULL && im->src[fi] == src;
}

/* After every import, once the framework and zero are final (the
 * request's given[fi], NULL where it gives none, else the imports'):
 * what a config's 16-bit model dtype means for the master copy and the
 * moments, a base the config's trainer will not shard (a 400), an
 * import's Liger kernels under a framework other than hf (withdrawn, the
 * layers costed as fused), gpt-oss's eager attention under hf, sdpa for
 * a model with a sliding window under hf (transformers' default), and an
 * imported window's layer count under the request's layers.  0, or
 * -1 with err set. */
int ts_import_settle(ts_import *im, const json_t *const *given, ts_api_err *err);
void ts_import_free(ts_import *im);

/* Propose v (reference stolen) for member fi.  A later import that
 * proposes a different value wins and the clash is noted.  0, or -1 out
 * of memory (err set). */
int ts_import_set(ts_import *im, ts_field_id fi, json_t *v, ts_api_src src, const char *origin,
                  ts_api_err *err);
int ts_import_set_int(ts_import *im, ts_field_id fi, int64_t v, ts_api_src src, const char *origin,
                      ts_api_err *err);
int ts_import_set_bool(ts_import *im, ts_field_id fi, bool v, ts_api_src src, const char *origin,
                       ts_api_err *err);
int ts_import_set_str(ts_import *im, ts_field_id fi, const char *v, ts_api_src src,
                      const char *origin, ts_api_err *err);

void ts_import_note(ts_api_notes *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A note about member fi from source by ("torch_dtype is the storage
 * type; the training precision is the precision member"): it has nothing
 * to say once the request or another import gives fi, and is dropped then
 * (ts_import_notes_settle). */
void ts_import_note_about(ts_api_notes *n, ts_field_id fi, ts_api_src by, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Drop the notes about a member whose final source (source[], the
 * request's) is the request or an import other than the one that noted
 * it: the user gave that value, and a warning about it would be noise. */
void ts_import_notes_settle(ts_api_notes *n, const unsigned char *source);

/* A JSON object being read, and the pointer that names it in the request
 * ("/hf_config", "/hf_config/text_config"). */
typedef struct ts_import_obj {
    const json_t *obj;
    char base[TS_IMPORT_BASE_LEN];
} ts_import_obj;

/* Pointer of member key of o, into buf. */
void ts_import_ptr(char *buf, size_t size, const ts_import_obj *o, const char *key);
/* Append "/" and key (RFC 6901 escaped) to the pointer in buf (size
 * bytes), cut at a character boundary when it does not fit. */
void ts_import_ptr_add(char *buf, size_t size, const char *key);

/* Typed getters: 1 = present (in *out), 0 = absent or null (unless
 * required: then a 400 missing-field), -1 = error (err set, naming the
 * member's pointer).  Integers must be JSON integers in [lo, hi]. */
int ts_import_int(const ts_import_obj *o, const char *key, int64_t lo, int64_t hi, bool required,
                  int64_t *out, ts_api_err *err);
int ts_import_bool(const ts_import_obj *o, const char *key, bool *out, ts_api_err *err);
int ts_import_str(const ts_import_obj *o, const char *key, bool required, const char **out,
                  ts_api_err *err);
/* A sub-object: 1 present, 0 absent/null, -1 not an object. */
int ts_import_sub(const ts_import_obj *o, const char *key, ts_import_obj *sub, ts_api_err *err);

/* 0 when doc is within TS_IMPORT_NODES_MAX / TS_IMPORT_DEPTH_MAX, else a
 * 400 too-large naming ptr. */
int ts_import_check_size(const json_t *doc, const char *ptr, ts_api_err *err);

/* The batch members once dp is known (ts_json_in.c calls it after the
 * layout is set): DeepSpeed's rule for train_batch_size, micro-batch and
 * gradient_accumulation_steps (ts_deepspeed.c), also for axolotl's steps.
 * 0, or -1 with a 400 in err. */
int ts_import_apply_batch(ts_api_req *req, const ts_import *im, ts_api_err *err);
/* Then a trainer's max_steps: tokens = max_steps x global_batch x seq,
 * unless the request or another import gives tokens (a preset's or the
 * catalogue's default yields).  0, or -1 with a 400 out-of-range at
 * max_steps when that is past tokens' range. */
int ts_import_apply_steps(ts_api_req *req, const ts_import *im, ts_api_err *err);

/* An HF Trainer optim name (adamw_torch, paged_adamw_8bit, ...) onto
 * optimizer, from src at origin; a name with no state model is a note.
 * 0, or -1 with err set. */
int ts_import_hf_optim(ts_import *im, const char *name, ts_api_src src, const char *origin,
                       ts_api_err *err);
/* Whether that optimizer is torch.optim's (moments in the parameter's dtype). */
bool ts_import_hf_optim_torch(const char *name);

int ts_import_hf(ts_import *im, const json_t *cfg, ts_api_err *err);
/* The same reading of a config.json named base ("/hf_config") with
 * source src (the catalogue's entries, api/ts_catalogue.c). */
int ts_import_hf_from(ts_import *im, const json_t *cfg, const char *base, ts_api_src src,
                      ts_api_err *err);
int ts_import_ds(ts_import *im, const json_t *cfg, ts_api_err *err);
int ts_import_mega(ts_import *im, const char *args, size_t len, ts_api_err *err);
#ifdef TS_HAVE_YAML
int ts_import_axolotl(ts_import *im, const char *yaml, size_t len, ts_api_err *err);
int ts_import_llamafactory(ts_import *im, const char *yaml, size_t len, ts_api_err *err);
int ts_import_nemo(ts_import *im, const char *yaml, size_t len, ts_api_err *err);
#else
/* Built without libyaml (meson finds no yaml-0.1), as curl stubs a
 * feature it was built without: each YAML member is a 400
 * unsupported-config naming it (ts_import_noyaml.c).  -1, err set. */
int ts_import_no_yaml(const char *ptr, ts_api_err *err);
#define ts_import_axolotl(im, yaml, len, err)      ts_import_no_yaml("/axolotl_config", (err))
#define ts_import_llamafactory(im, yaml, len, err) ts_import_no_yaml("/llamafactory_config", (err))
#define ts_import_nemo(im, yaml, len, err)         ts_import_no_yaml("/nemo_config", (err))
#endif

#endif /* TS_IMPORT_H */
