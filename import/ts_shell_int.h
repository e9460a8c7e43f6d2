/*
 * ts_shell_int.h - the launch-script reader's own types and the functions
 * its files share (sh_*); not part of the interface (ts_shell.h).
 *
 * Three layers, each bounded:
 *   lexer     text -> tokens (words kept raw, operators, newlines, heredoc
 *             bodies, #SBATCH directives); quoting and $(...) / ${...}
 *             nesting decide where a word ends, as in bash's
 *             parse.y (read_token_word); nothing is expanded yet;
 *   expander  one raw word -> characters ("cells") that remember how they
 *             were quoted, where they were written and, for an unknown
 *             value, why (a "taint"); then field splitting on IFS
 *             whitespace for the unquoted expansions only (bash
 *             manual, "Word Splitting"), "${A[@]}" one field per element;
 *   runner    a recursive-descent walk of the grammar (POSIX XCU 2.10's
 *             list / and_or / pipeline / command) that runs what it may:
 *             assignments, builtins that only change variables, tests,
 *             control flow; every other command is assumed to succeed and
 *             is looked at as a possible training command.
 * A branch whose condition is unknown is walked in "maybe" mode: nothing
 * runs, and variables it assigns are remembered as assigned only there.
 *
 * Unknown values: a script argument ($1) is unknown but, as bash runs a
 * script without arguments, empty in a condition; so is a variable the
 * script never assigns (the environment is empty here).  A command's
 * output is unknown everywhere: a condition on it is not evaluated.
 *
 * Text rebuilt from expanded cells (bash -c "$CMD", eval, a heredoc fed
 * to sbatch or bash) is read again with each unknown value kept as a
 * marker, \x01 and two hex digits (the taint's index); the input may not
 * contain control characters, so a marker cannot be forged.
 *
 * The stages, one file each: ts_shell_lex.c (lexer), ts_shell_expand.c
 * and ts_shell_param.c (expander), ts_shell_arith.c (arithmetic),
 * ts_shell_var.c (variables, assignments), ts_shell_test.c (conditions),
 * ts_shell_builtin.c (simple commands), ts_shell_parse.c (the runner's
 * grammar), ts_shell_cell.c (cells, taints, fields, patterns, bounds) and
 * ts_shell.c (the entry point, nested texts, the training command).
 */
#ifndef TS_SHELL_INT_H
#define TS_SHELL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ts_shell.h"

/* ------------------------------------------------------------------ */
/* Cells and taints                                                   */

#define CF_SPLIT  1u  /* from an unquoted expansion: IFS splits here */
#define CF_GHOST  2u  /* no character: an unknown value's place */
#define CF_BREAK  4u  /* a field ends here ("${A[@]}" between elements) */
#define CF_KEEP   8u  /* a field exists here even if empty ("") */
#define CF_QUOTED 16u /* quoted: literal in a pattern */

typedef struct cell {
    unsigned char c;
    unsigned char f;
    uint16_t taint; /* 0, or an index into sh.taints */
    uint16_t line;
} cell;

typedef struct cbuf {
    cell *v;
    size_t n, cap;
} cbuf;

#define TAINTS_MAX 255u

typedef struct tinfo {
    unsigned char why; /* ts_shell_why */
    char name[48];
    uint16_t line, cond;
} tinfo;

/* ------------------------------------------------------------------ */
/* Tokens                                                             */

enum { T_WORD = 0, T_AOPEN, T_OP, T_NL, T_DPAREN, T_EOF };
enum {
    O_SEMI = 0,
    O_AMP,
    O_AND,
    O_OR,
    O_PIPE,
    O_PIPEAMP,
    O_LP,
    O_RP,
    O_DSEMI,
    O_SEMIAMP,
    O_DSEMIAMP,
    O_LT,
    O_GT,
    O_DGT,
    O_HEREDOC,
    O_HERESTR,
    O_DUPIN,
    O_DUPOUT,
    O_RW,
    O_CLOBBER,
    O_AMPGT,
    O_AMPDGT
};

typedef struct tok {
    unsigned char type, op;
    unsigned char hq;     /* heredoc: quoted delimiter (no expansion) */
    unsigned char hstrip; /* heredoc: <<- (leading tabs stripped) */
    uint16_t line;
    uint32_t a, b;   /* raw text [a, b) */
    uint32_t ha, hb; /* heredoc body [ha, hb) */
} tok;

/* A text being read: the script, or one rebuilt from cells. */
typedef struct unit {
    char *s;
    uint16_t *ln; /* line of every byte */
    size_t n;
    tok *t;
    size_t nt;
} unit;

/* ------------------------------------------------------------------ */
/* Variables, functions, the reader                                   */

#define NAME_MAX_LEN 64

typedef struct var {
    char name[NAME_MAX_LEN];
    cell *v; /* every element's cells, in order */
    size_t n;
    size_t *start; /* element k is v[start[k] .. start[k+1]) */
    size_t ne;
    bool set;
    bool maybe; /* not set: assigned only in a branch not read */
    uint16_t maybe_line, maybe_cond;
} var;

typedef struct func {
    char name[NAME_MAX_LEN];
    const unit *u;
    size_t body; /* token index of the compound command */
} func;

#define FUNCS_MAX     64u
#define UNDECIDED_MAX 12u
#define SKIPPED_LEN   200u

typedef struct field {
    cell *c; /* owned; flags cleared but CF_GHOST */
    size_t n;
    uint16_t line;
    uint16_t taint;
    bool ghost;
} field;

typedef struct fields {
    field *v;
    size_t n, cap;
} fields;

typedef struct cand {
    ts_shell_word *w;
    size_t n, cap;
    size_t entry;
    unsigned line;
    size_t flags; /* --flags after the entry point */
} cand;

typedef struct sh {
    const char *ptr;
    const char *member; /* ptr without the '/' */
    ts_api_err *err;
    bool failed;
    size_t work;
    var *vars;
    size_t nvars, vcap;
    size_t cells;
    tinfo taints[TAINTS_MAX + 1];
    size_t ntaints;
    func funcs[FUNCS_MAX];
    size_t nfuncs;
    unsigned depth;
    field *prefix; /* wrapper words around a nested text (borrowed) */
    size_t nprefix;
    cand best;  /* the training command so far */
    cand args;  /* the words of commands that start with --flags */
    size_t npy; /* commands that run a *.py entry point */
    uint16_t py_lines[4];
    uint16_t undecided[UNDECIDED_MAX];
    size_t nundecided;
    char skipped[SKIPPED_LEN];
    uint16_t exit_line;
    uint16_t outer_line; /* the line of the outermost command being run */
    ts_shell_word *dir;
    size_t ndir, dcap;
    ts_shell_file files[TS_SHELL_FILES_MAX];
    size_t nfiles;
    bool files_dropped; /* heredoc files past TS_SHELL_FILES_MAX */
} sh;

enum { ST_TRUE = 0, ST_FALSE = 1, ST_UNKNOWN = 2, ST_ASSUMED = 3 };
enum { CTL_NONE = 0, CTL_EXIT, CTL_RETURN, CTL_BREAK, CTL_CONTINUE };
enum { M_RUN = 0, M_MAYBE, M_SKIP };

typedef struct run {
    sh *sh;
    const unit *u;
    size_t i; /* next token */
    var *pos; /* positional parameters; NULL: the script's (none given) */
    int ctl;
    uint16_t cond; /* maybe mode: the line of the condition not read */
} run;

#define NPOS ((size_t)-1) /* no index: not found, or an error already raised */

enum { CTX_UNQ = 0, CTX_DQ, CTX_HD };
enum { XM_SPLIT = 0, XM_JOIN }; /* JOIN: an assignment's value, [[ ]], case */

typedef struct xstate {
    run *r;
    int mode;
    cbuf *out;
    bool atzero; /* a quoted "${A[@]}" / "$@" gave no element */
} xstate;

/* ts_shell_cell.c: errors, bounds, cells, taints, fields, patterns */
int sh_fail(sh *s, ts_problem type, unsigned line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
int sh_oom(sh *s);
int sh_spend(sh *s, size_t n, unsigned line);
int sh_cb_push(sh *s, cbuf *b, unsigned char c, unsigned f, uint16_t taint, uint16_t line);
int sh_cb_cat(sh *s, cbuf *b, const cell *c, size_t n, unsigned f, unsigned line);
void sh_cb_free(cbuf *b);
size_t sh_real_len(const cell *c, size_t n);
uint16_t sh_first_taint(const cell *c, size_t n);
char *sh_cells_text(sh *s, const cell *c, size_t n);
uint16_t sh_taint_add(sh *s, ts_shell_why why, const char *name, size_t nlen, unsigned line,
                      unsigned cond);
bool sh_cells_opaque(const sh *s, const cell *c, size_t n);
void sh_fields_free(fields *fs);
int sh_fields_add(sh *s, fields *fs, const cell *c, size_t n, uint16_t line, uint16_t taint,
                  bool ghost);
int sh_split_fields(sh *s, const cbuf *in, fields *out);
int sh_glob(sh *s, const cell *p, size_t np, const cell *t, size_t nt, unsigned line);

/* ts_shell_lex.c: the lexer */
unsigned sh_line_at(const unit *u, size_t i);
bool sh_name_start(char c);
bool sh_name_char(char c);
size_t sh_skip_sq(sh *s, const unit *u, size_t i);
size_t sh_skip_bq(sh *s, const unit *u, size_t i);
size_t sh_skip_nest(sh *s, const unit *u, size_t i, char open, char close);
size_t sh_skip_dq(sh *s, const unit *u, size_t i);
int sh_lex(sh *s, unit *u);
void sh_unit_free(unit *u);

/* ts_shell_var.c: variables and assignments */
var *sh_var_find(sh *s, const char *name, size_t len);
var *sh_var_make(sh *s, const char *name, size_t len, unsigned line);
void sh_var_clear(sh *s, var *v);
int sh_var_assign(sh *s, var *v, const field *els, size_t ne, unsigned line);
int sh_var_replace(sh *s, var *v, const field *els, size_t ne, unsigned line);
field sh_var_elem(const var *v, size_t k);
bool sh_is_assignment(const run *r, const tok *t);
int sh_do_assign(run *r, int mode);
int sh_p_declare(run *r, int mode, size_t start, size_t end);

/* ts_shell_arith.c: arithmetic */
int64_t sh_arith_text(run *r, const char *txt, size_t n, unsigned line, unsigned depth,
                      uint16_t *taint, bool *bad);

/* ts_shell_expand.c: word expansion */
int sh_push_ghost(xstate *x, ts_shell_why why, const char *name, size_t nlen, unsigned line,
                  unsigned cond);
unsigned sh_ctx_flags(int ctx);
int sh_push_elems(xstate *x, const field *els, size_t ne, bool at, bool star, int ctx,
                  unsigned line);
int sh_x_arith(xstate *x, size_t a, size_t b, int ctx);
int sh_x_command(xstate *x, size_t a, size_t b);
int sh_x_range(xstate *x, size_t a, size_t b, int ctx);
int sh_x_sub(xstate *x, size_t a, size_t b, int ctx, cbuf *out);
int sh_expand(run *r, size_t a, size_t b, int mode, cbuf *out);
int sh_expand_fields(run *r, const tok *t, fields *fs);

/* ts_shell_param.c: parameter expansion */
size_t sh_x_dollar(xstate *x, size_t i, size_t b, int ctx);

/* ts_shell_test.c: test, [ ], [[ ]] */
bool sh_parse_int(const char *t, int64_t *out);
int sh_eval_test(run *r, const fields *fs, size_t from, size_t to, unsigned line);
int sh_p_dbrack(run *r, int mode, int *status);

/* ts_shell_builtin.c: simple commands */
bool sh_is_redirect(const tok *t);
int sh_p_simple(run *r, int mode, int *status);

/* ts_shell_parse.c: the runner */
const tok *sh_cur(const run *r);
bool sh_tok_is(const run *r, const tok *t, const char *word);
bool sh_is_op(const tok *t, unsigned char op);
int sh_syntax(run *r, const char *want);
int sh_p_command(run *r, int mode, int *status);
int sh_run_unit(sh *s, unit *u, var *pos, field *prefix, size_t nprefix);

/* ts_shell.c: nested texts, notes, the training command */
int sh_nested(run *r, const cell *c, size_t n, var *pos, field *prefix, size_t nprefix,
              unsigned line);
void sh_undecided(run *r, unsigned line);
void sh_skipped(sh *s, const char *what, const char *arg, unsigned line);
int sh_consider(run *r, const fields *fs, unsigned line);
/* cat <<EOF > FILE: keep FILE's path and text (ts_shell_file); body NULL:
 * a text this reader cannot expand. */
int sh_keep_file(sh *s, const cbuf *path, const cbuf *body, unsigned line);

#endif /* TS_SHELL_INT_H */
