/*
 * ts_fields_doc.h - the documentation half of the request-field registry.
 *
 * Both halves come from the same rows of core/ts_fields.def.
 * ts_fields[] (core/ts_fields.h) says what a member is to the parser and
 * the core: name, JSON type, range, enum values, where it lands, its
 * default.  ts_field_docs[], index for index (TS_FI_*),
 * says what it means to people: the one-line doc (openapi.json's
 * "description"), unit, default, CLI help and dashboard group: an
 * entry's docs columns.  tests/tools (fields-docs) fails when an entry
 * leaves one out.
 *
 * tools/ts_gen_fields.c reads both tables and writes every copy:
 * fuzz/api.dict, docs/fields.md, the CLI's option table and the
 * dashboard's form (web/fields.js; see docs/contributing.md, "Adding a
 * request input"); tools/ts_gen_openapi.c the request schemas of
 * api/openapi.json.
 */
#ifndef TS_FIELDS_DOC_H
#define TS_FIELDS_DOC_H

#include <stdbool.h>

#include "ts_api_int.h"
#include "ts_import.h"

/* How the dashboard shows a field (web/fields.js, generated). */
enum {
    TS_DASH_ADVANCED = 1u << 0, /* inside its fieldset's "more options" */
    TS_DASH_BINARY_K = 1u << 1, /* "8k" is 8192 (sequence length), not 8000 */
    TS_DASH_FRACTION = 1u << 2, /* "40%" is 0.4 */
    TS_DASH_PRETRAIN = 1u << 3, /* shown in pre-training only */
    TS_DASH_LORA = 1u << 4      /* shown in the LoRA / QLoRA modes only */
};

typedef struct ts_field_doc {
    const char *doc;        /* one line, a sentence; openapi "description" */
    const char *group;      /* dashboard fieldset: model, mode, work, parallel, hardware,
                         * ckpt; fit, search: the routes' extras */
    const char *def;        /* the default, as text ("4096", "the preset's") */
    const char *unit;       /* "GB/s", "tokens"; NULL for counts, flags, names */
    const char *cli;        /* --help text; NULL = no CLI option (fit extras).
                         * The flag is the name with '-' for '_'. */
    bool cli_suffix;        /* the CLI accepts k/M/B/T multipliers (7B, 15T) */
    const char *search_doc; /* the doc in SearchRequest when it differs */
    const char *label;      /* the dashboard's label; NULL = not on the dashboard */
    const char *hint;       /* the dashboard's hint under the control, or NULL */
    unsigned dash;          /* TS_DASH_* */
    const char *dash_kind;  /* the control when not derived from the type ("zero") */
} ts_field_doc;

extern const ts_field_doc ts_field_docs[TS_FI_COUNT];

/* The import members (hf_config, ...: import/ts_import.c) sit outside
 * ts_fields[]: an object or a text, applied before the run's own
 * members.  Indexed by TS_IMP_*; the name is ts_api_import_members()[i]. */
typedef struct ts_import_doc {
    bool text;        /* a JSON string (YAML, a launch line); else an object */
    unsigned max_len; /* text: the cap in bytes the parser enforces */
    const char *doc;  /* one line; openapi "description" */
} ts_import_doc;

extern const ts_import_doc ts_import_docs[TS_IMP_COUNT];

/* Dashboard groups, in the dashboard's order (a field's group is an id);
 * the last has id NULL. */
typedef struct ts_field_group {
    const char *id;     /* "ckpt" */
    const char *legend; /* "Checkpoints and failures" */
} ts_field_group;

extern const ts_field_group ts_field_groups[];

#endif /* TS_FIELDS_DOC_H */
