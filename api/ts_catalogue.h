/*
 * ts_catalogue.h - the model catalogue: widely used open models by
 * Hugging Face Hub id, each with its config.json.
 *
 * One file per model in models/ (models/README.md); tools/ts_gen_catalogue.c
 * turns them into ts_catalogue_table[] at build time, so the server never
 * reads the filesystem for it.  A request's "model" naming an entry is
 * read by the hf_config importer from the entry's config (ts_json_in.c),
 * after the core presets (core/ts_preset.c), which keep their own answers:
 * an entry whose Hub id is a preset's alias answers as that preset.
 */
#ifndef TS_CATALOGUE_H
#define TS_CATALOGUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ts_import.h"

typedef struct ts_catalogue_entry {
    const char *id;             /* "Qwen/Qwen2.5-72B" */
    const char *const *aliases; /* other names, NULL-terminated */
    const char *file;           /* "models/Qwen__Qwen2.5-72B.json" */
    const char *config;         /* its config.json members, JSON text */
    double params_published;    /* as the publisher states it */
    double params_half_unit;    /* rounded figures: half a unit of the last digit; 0 exact */
    bool params_exact;
    const char *params_published_as; /* "72.7B"; NULL when exact */
    double params_adjust;            /* the model's count = published + adjust (0 mostly) */
    const char *params_adjust_why;   /* NULL when adjust is 0 */
    const char *params_source;
    const char *config_source; /* verbatim, near-verbatim or reconstructed, from where */
} ts_catalogue_entry;

/* Generated (build dir ts_catalogue_tab.c), sorted by file name. */
extern const ts_catalogue_entry ts_catalogue_table[];
extern const size_t ts_catalogue_table_n;

size_t ts_catalogue_count(void);
const ts_catalogue_entry *ts_catalogue_at(size_t i);

/* The entry a name means: its Hub id or an alias, in any case and
 * punctuation, with or without the organisation (ts_name_same).  NULL
 * when none. */
const ts_catalogue_entry *ts_catalogue_find(const char *name);

/* The core preset that answers for e (its Hub id is a preset's alias), or
 * NULL when e answers for itself. */
const ts_preset *ts_catalogue_shadow(const ts_catalogue_entry *e);

/* A model name as "model" takes it: a preset first, then the catalogue
 * (an entry shadowed by a preset gives the preset).  The name may be the
 * model's Hub page as pasted ("https://huggingface.co/<org>/<name>/...").
 * One of *p, *e is set on success: 1, or TS_CATALOGUE_OTHER_ORG when only
 * the name after another organisation's slash matched (a re-upload such
 * as "unsloth/Llama-3.2-3B": the caller notes it); 0 when unknown. */
#define TS_CATALOGUE_OTHER_ORG 2
/* ... or TS_CATALOGUE_QUANT when the name is a model's with a suffix that
 * says how a quantised copy stores the same tensors ("unsloth/
 * Meta-Llama-3.1-8B-bnb-4bit", "...-FP8"). */
#define TS_CATALOGUE_QUANT 3
/* What a note says of such a name, after it: "%s" is the entry read. */
#define TS_CATALOGUE_COPY_NOTE                                                   \
    "read as %s, the model of that name in the catalogue; a copy under another " \
    "organisation may change its config.json (send that file as hf_config to be sure)"
#define TS_CATALOGUE_QUANT_NOTE                                                    \
    "read as %s, the model of that name in the catalogue: the suffix names how a " \
    "quantised copy stores its tensors, in the model's shapes; a copy may change " \
    "its config.json (send that file as hf_config to be sure), and a quantised "   \
    "base trains frozen under LoRA (frozen_precision nf4 for bitsandbytes 4-bit, " \
    "int8 for 8-bit)"
int ts_catalogue_resolve(const char *name, const ts_preset **p, const ts_catalogue_entry **e);

/* The catalogue entry a Hub name means, preset checkpoints included (no
 * preset is consulted): as ts_catalogue_resolve reads the name; *how is
 * 1, TS_CATALOGUE_OTHER_ORG or TS_CATALOGUE_QUANT as there.  NULL when
 * none. */
const ts_catalogue_entry *ts_catalogue_lookup(const char *name, int *how);

/* Propose e's shape into im: its config read by the hf_config importer,
 * every value's source "catalogue", origins "/model (<id>)/<key>".  0, or
 * -1 with err set (a defect of the table: the catalogue test reads every
 * entry). */
int ts_catalogue_import(ts_import *im, const ts_catalogue_entry *e, ts_api_err *err);

/* The same from another member that names the model (axolotl's
 * base_model): origins "<member> (<id>)/<key>", notes naming member. */
int ts_catalogue_import_at(ts_import *im, const ts_catalogue_entry *e, const char *member,
                           ts_api_err *err);

/* A member that names the model by Hub id (axolotl's base_model,
 * LLaMA-Factory's model_name_or_path; ptr its pointer): the catalogue's
 * config.json gives the shape when nothing before it did (the request's
 * model or shape, hf_config), as "model" would; otherwise, or when the
 * catalogue lacks it, a note.  0, or -1 with err set. */
int ts_catalogue_import_named(ts_import *im, const char *id, const char *ptr, ts_api_err *err);

/* e's model as the request {"model": "<e's id>"} resolves it, into *req
 * (the path every request takes).  0, or -1 with err set. */
int ts_catalogue_run(const ts_catalogue_entry *e, ts_api_req *req, ts_api_err *err);

/* e's vocab_size (its config's, or its text_config's); 0 when none. */
int64_t ts_catalogue_vocab(const ts_catalogue_entry *e);

/* The closest preset id or catalogue Hub id to an unknown name (for "did
 * you mean"), or NULL when none is close enough. */
const char *ts_catalogue_suggest(const char *typed);

#endif /* TS_CATALOGUE_H */
