/*
 * ts_fields_doc.h - the documentation half of the request-field registry.
 *
 * ts_json_fields[] (ts_json_in.c) says what a member is to the parser:
 * name, JSON type, range, enum values, where it lands.  ts_field_docs[]
 * says what it means to people: the one-line doc (openapi.json's
 * "description"), unit, default, CLI help and dashboard group.  Both are
 * indexed by TS_FI_*, so a field added to one table without the other
 * still compiles; tests/api (fields-docs) fails until its docs exist.
 *
 * tools/ts_gen_fields.c reads both tables and writes every copy: the
 * request schemas of api/openapi.json, fuzz/api.dict and the CLI's option
 * table (see README, "Contributing").
 */
#ifndef TS_FIELDS_DOC_H
#define TS_FIELDS_DOC_H

#include <stdbool.h>

#include "ts_api_int.h"
#include "ts_import.h"

typedef struct ts_field_doc {
    const char *doc;    /* one line, a sentence; openapi "description" */
    const char *group;  /* dashboard fieldset: model, work, parallel, hardware, ckpt;
                         * fit, search: the routes' extras */
    const char *def;    /* the default, as text ("4096", "the preset's") */
    const char *unit;   /* "GB/s", "tokens"; NULL for counts, flags, names */
    const char *cli;    /* --help text; NULL = no CLI option (fit extras).
                         * The flag is the name with '-' for '_'. */
    bool cli_suffix;    /* the CLI accepts k/M/B/T multipliers (7B, 15T) */
    const char *search_doc; /* the doc in SearchRequest when it differs */
} ts_field_doc;

extern const ts_field_doc ts_field_docs[TS_FI_COUNT];

/* The import members (hf_config, ...: api/ts_import.c) sit outside
 * ts_json_fields[]: an object or a text, applied before the run's own
 * members.  Indexed by TS_IMP_*; the name is ts_api_import_members()[i]. */
typedef struct ts_import_doc {
    bool text;          /* a JSON string (YAML, a launch line); else an object */
    unsigned max_len;   /* text: the cap in bytes the parser enforces */
    const char *doc;    /* one line; openapi "description" */
} ts_import_doc;

extern const ts_import_doc ts_import_docs[TS_IMP_COUNT];

/* Dashboard groups, in the dashboard's order (a field's group is an id);
 * the last has id NULL. */
typedef struct ts_field_group {
    const char *id;      /* "ckpt" */
    const char *legend;  /* "Checkpoints and failures" */
} ts_field_group;

extern const ts_field_group ts_field_groups[];

#endif /* TS_FIELDS_DOC_H */
