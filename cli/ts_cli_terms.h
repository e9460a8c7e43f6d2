/*
 * ts_cli_terms.h - the rows of the CLI's estimate table.
 *
 * Generated at build time from the API's output-terms table (api/ts_terms.c)
 * by tools/ts_gen_fields (ts_cli_terms.c, build dir), like the option
 * table: which figures the table prints, their labels, units and where the
 * answer carries each one's text.  The CLI prints the answer's text, the
 * same whether a server or the api in process (--local) wrote it.
 */
#ifndef TS_CLI_TERMS_H
#define TS_CLI_TERMS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum ts_cli_term_shape {
    TS_CLI_TERM_OBJECT = 0, /* {value, human, formula, assumptions} */
    TS_CLI_TERM_MAP,        /* a number; its text in the object's "human" map */
    TS_CLI_TERM_SIBLING     /* a number; its text in the member human_key */
} ts_cli_term_shape;

typedef struct ts_cli_term {
    const char *obj; /* the object's path in an answer: "memory", "compute.step" */
    const char *key; /* its member */
    ts_cli_term_shape shape;
    const char *human_key; /* TS_CLI_TERM_SIBLING only */
    const char *unit;      /* of the value: "B", "s", "GPU-hours", "" */
    const char *label;     /* at most 32 columns (tests/api terms) */
    const char *formula;   /* a number's formula; NULL: the answer's (a term) */
    bool nonzero;          /* printed only when the value is not 0 */
} ts_cli_term;

typedef struct ts_cli_term_obj {
    const char *path;  /* "memory" */
    const char *title; /* "Memory per GPU" */
} ts_cli_term_obj;

extern const ts_cli_term ts_cli_terms[];
extern const size_t ts_cli_term_count;
extern const ts_cli_term_obj ts_cli_term_objs[]; /* path NULL ends it */

#endif /* TS_CLI_TERMS_H */
