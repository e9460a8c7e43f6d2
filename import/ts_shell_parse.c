/*
 * ts_shell.c - a launch script read as bash reads it (see ts_shell.h).
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
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_ckd.h"
#include "ts_import.h"
#include "ts_shell.h"

/* ------------------------------------------------------------------ */
/* Cells and taints                                                   */

#define CF_SPLIT 1u    /* from an unquoted expansion: IFS splits here */
#define CF_GHOST 2u    /* no character: an unknown value's place */
#define CF_BREAK 4u    /* a field ends here ("${A[@]}" between elements) */
#define CF_KEEP 8u     /* a field exists here even if empty ("") */
#define CF_QUOTED 16u  /* quoted: literal in a pattern */

typedef struct cell {
    unsigned char c;
    unsigned char f;
    uint16_t taint;    /* 0, or an index into sh.taints */
    uint16_t line;
} cell;

typedef struct cbuf {
    cell *v;
    size_t n, cap;
} cbuf;

#define TAINTS_MAX 255u

typedef struct tinfo {
    unsigned char why;     /* ts_shell_why */
    char name[48];
    uint16_t line, cond;
} tinfo;

/* ------------------------------------------------------------------ */
/* Tokens                                                             */

enum { T_WORD = 0, T_AOPEN, T_OP, T_NL, T_DPAREN, T_EOF };
enum {
    O_SEMI = 0, O_AMP, O_AND, O_OR, O_PIPE, O_PIPEAMP, O_LP, O_RP, O_DSEMI,
    O_SEMIAMP, O_DSEMIAMP, O_LT, O_GT, O_DGT, O_HEREDOC, O_HERESTR, O_DUPIN,
    O_DUPOUT, O_RW, O_CLOBBER, O_AMPGT, O_AMPDGT
};

typedef struct tok {
    unsigned char type, op;
    unsigned char hq;       /* heredoc: quoted delimiter (no expansion) */
    unsigned char hstrip;   /* heredoc: <<- (leading tabs stripped) */
    uint16_t line;
    uint32_t a, b;          /* raw text [a, b) */
    uint32_t ha, hb;        /* heredoc body [ha, hb) */
} tok;

/* A text being read: the script, or one rebuilt from cells. */
typedef struct unit {
    char *s;
    uint16_t *ln;           /* line of every byte */
    size_t n;
    tok *t;
    size_t nt;
} unit;

/* ------------------------------------------------------------------ */
/* Variables, functions, the reader                                   */

#define NAME_MAX_LEN 64

typedef struct var {
    char name[NAME_MAX_LEN];
    cell *v;                /* every element's cells, in order */
    size_t n;
    size_t *start;          /* element k is v[start[k] .. start[k+1]) */
    size_t ne;
    bool set;
    bool maybe;             /* not set: assigned only in a branch not read */
    uint16_t maybe_line, maybe_cond;
} var;

typedef struct func {
    char name[NAME_MAX_LEN];
    const unit *u;
    size_t body;            /* token index of the compound command */
} func;

#define FUNCS_MAX 64u
#define UNDECIDED_MAX 12u
#define SKIPPED_LEN 200u

typedef struct field {
    cell *c;                /* owned; flags cleared but CF_GHOST */
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
    size_t flags;           /* --flags after the entry point */
} cand;

typedef struct sh {
    const char *ptr;
    const char *member;     /* ptr without the '/' */
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
    field *prefix;          /* wrapper words around a nested text (borrowed) */
    size_t nprefix;
    cand best;              /* the training command so far */
    cand args;              /* the words of commands that start with --flags */
    size_t npy;             /* commands that run a *.py entry point */
    uint16_t py_lines[4];
    uint16_t undecided[UNDECIDED_MAX];
    size_t nundecided;
    char skipped[SKIPPED_LEN];
    uint16_t exit_line;
    uint16_t outer_line;    /* the line of the outermost command being run */
    ts_shell_word *dir;
    size_t ndir, dcap;
} sh;

enum { ST_TRUE = 0, ST_FALSE = 1, ST_UNKNOWN = 2, ST_ASSUMED = 3 };
enum { CTL_NONE = 0, CTL_EXIT, CTL_RETURN, CTL_BREAK, CTL_CONTINUE };
enum { M_RUN = 0, M_MAYBE, M_SKIP };

typedef struct run {
    sh *sh;
    const unit *u;
    size_t i;               /* next token */
    var *pos;               /* positional parameters; NULL: the script's (none given) */
    int ctl;
    uint16_t cond;          /* maybe mode: the line of the condition not read */
} run;

/* ------------------------------------------------------------------ */
/* Errors and bounds                                                  */

static int fail(sh *s, ts_problem type, unsigned line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int fail(sh *s, ts_problem type, unsigned line, const char *fmt, ...)
{
    char msg[TS_API_DETAIL_LEN];
    va_list ap;
    int len;

    if (s->failed)
        return -1;
    s->failed = true;
    va_start(ap, fmt);
    len = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (len < 0)
        msg[0] = '\0';
    else if ((size_t)len >= sizeof msg)
        ts_utf8_trim(msg, sizeof msg - 1);
    if (line > 0)
        ts_api_err_set(s->err, type, s->ptr, "%s line %u: %s", s->member, line, msg);
    else
        ts_api_err_set(s->err, type, s->ptr, "%s: %s", s->member, msg);
    return -1;
}

static int oom(sh *s)
{
    if (!s->failed) {
        s->failed = true;
        ts_api_err_set(s->err, TS_PROB_OUT_OF_MEMORY, NULL, "out of memory reading %s", s->member);
    }
    return -1;
}

/* Count n steps of work; -1 past the bound. */
static int spend(sh *s, size_t n, unsigned line)
{
    if (s->failed)
        return -1;
    s->work += n;
    if (s->work > TS_SHELL_WORK_MAX)
        return fail(s, TS_PROB_IMPORT_TOO_LARGE, line,
                    "reading the script takes more than %u steps (a loop that does "
                    "not end, or an expansion that keeps growing)", TS_SHELL_WORK_MAX);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Cell buffers                                                       */

static int cb_reserve(sh *s, cbuf *b, size_t more, unsigned line)
{
    size_t want;

    if (b->n + more <= b->cap)
        return 0;
    if (b->n + more > TS_SHELL_VALUE_MAX)
        return fail(s, TS_PROB_IMPORT_TOO_LARGE, line,
                    "an expansion is longer than %u characters", TS_SHELL_VALUE_MAX);
    want = b->cap ? b->cap : 32;
    while (want < b->n + more)
        want *= 2;
    if (want > TS_SHELL_VALUE_MAX)
        want = TS_SHELL_VALUE_MAX;
    {
        cell *nv = realloc(b->v, want * sizeof *nv);

        if (nv == NULL)
            return oom(s);
        b->v = nv;
        b->cap = want;
    }
    return 0;
}

static int cb_push(sh *s, cbuf *b, unsigned char c, unsigned f, uint16_t taint, uint16_t line)
{
    if (spend(s, 1, line) != 0 || cb_reserve(s, b, 1, line) != 0)
        return -1;
    b->v[b->n].c = c;
    b->v[b->n].f = (unsigned char)f;
    b->v[b->n].taint = taint;
    b->v[b->n].line = line;
    b->n++;
    return 0;
}

/* Append cells, or-ing flags in (and keeping CF_GHOST). */
static int cb_cat(sh *s, cbuf *b, const cell *c, size_t n, unsigned f, unsigned line)
{
    size_t k;

    if (spend(s, n, line) != 0 || cb_reserve(s, b, n, line) != 0)
        return -1;
    for (k = 0; k < n; k++) {
        b->v[b->n] = c[k];
        b->v[b->n].f = (unsigned char)((c[k].f & CF_GHOST) | f);
        b->n++;
    }
    return 0;
}

static void cb_free(cbuf *b)
{
    free(b->v);
    b->v = NULL;
    b->n = b->cap = 0;
}

/* Real characters (no ghosts) of c[0..n). */
static size_t real_len(const cell *c, size_t n)
{
    size_t k, m = 0;

    for (k = 0; k < n; k++)
        if (!(c[k].f & (CF_GHOST | CF_BREAK | CF_KEEP)))
            m++;
    return m;
}

/* The first taint in c[0..n), 0 when none. */
static uint16_t first_taint(const cell *c, size_t n)
{
    size_t k;

    for (k = 0; k < n; k++)
        if (c[k].taint != 0)
            return c[k].taint;
    return 0;
}

/* The real characters as a C string, into a malloc'd buffer. */
static char *cells_text(sh *s, const cell *c, size_t n)
{
    char *t = malloc(n + 1);
    size_t k, m = 0;

    if (t == NULL) {
        oom(s);
        return NULL;
    }
    for (k = 0; k < n; k++)
        if (!(c[k].f & (CF_GHOST | CF_BREAK | CF_KEEP)))
            t[m++] = (char)c[k].c;
    t[m] = '\0';
    return t;
}

/* ------------------------------------------------------------------ */
/* Taints                                                             */

static uint16_t taint_add(sh *s, ts_shell_why why, const char *name, size_t nlen,
                          unsigned line, unsigned cond)
{
    size_t k;
    char nm[48];

    if (nlen >= sizeof nm)
        nlen = ts_utf8_cut(name, sizeof nm - 1) < nlen ? ts_utf8_cut(name, sizeof nm - 1) : nlen;
    memcpy(nm, name, nlen);
    nm[nlen] = '\0';
    ts_utf8_trim(nm, strlen(nm));
    for (k = 1; k <= s->ntaints; k++)
        if (s->taints[k].why == why && s->taints[k].line == line &&
            s->taints[k].cond == cond && strcmp(s->taints[k].name, nm) == 0)
            return (uint16_t)k;
    if (s->ntaints >= TAINTS_MAX)
        return (uint16_t)TAINTS_MAX;   /* the last one speaks for the rest */
    k = ++s->ntaints;
    s->taints[k].why = (unsigned char)why;
    memcpy(s->taints[k].name, nm, sizeof nm);
    s->taints[k].line = (uint16_t)line;
    s->taints[k].cond = (uint16_t)cond;
    return (uint16_t)k;
}

/* Why an operand of a condition is not known: a command's output or a
 * value not read; a missing argument or variable is empty, as in bash. */
static bool taint_opaque(const sh *s, uint16_t t)
{
    unsigned w;

    if (t == 0)
        return false;
    w = s->taints[t].why;
    return w == TS_SHELL_COMMAND || w == TS_SHELL_UNSUPPORTED || w == TS_SHELL_MAYBE;
}

static bool cells_opaque(const sh *s, const cell *c, size_t n)
{
    size_t k;

    for (k = 0; k < n; k++)
        if (taint_opaque(s, c[k].taint))
            return true;
    return false;
}

/* ------------------------------------------------------------------ */
/* Lexer                                                              */

typedef struct lexer {
    sh *s;
    unit *u;
    size_t cap;
    size_t pend[8];         /* heredoc operators waiting for their body */
    size_t npend;
    size_t want_delim;      /* heredoc operator whose delimiter comes next; 0 none */
} lexer;

static unsigned line_at(const unit *u, size_t i)
{
    if (u->n == 0)
        return 1;
    return u->ln[i < u->n ? i : u->n - 1];
}

static bool is_meta(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' ||
           c == '|' || c == '<' || c == '>' || c == '(' || c == ')';
}

static bool name_start(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool name_char(char c)
{
    return name_start(c) || (c >= '0' && c <= '9');
}

static size_t skip_dq(sh *s, const unit *u, size_t i);
static size_t skip_dollar(sh *s, const unit *u, size_t i);

#define NPOS ((size_t)-1)

static size_t unterminated(sh *s, const unit *u, size_t at, const char *what)
{
    fail(s, TS_PROB_INVALID_VALUE, line_at(u, at), "unterminated %s", what);
    return NPOS;
}

/* i at '\'': the index after the closing quote. */
static size_t skip_sq(sh *s, const unit *u, size_t i)
{
    size_t j;

    for (j = i + 1; j < u->n; j++)
        if (u->s[j] == '\'')
            return j + 1;
    return unterminated(s, u, i, "' quote");
}

/* i at '`': after the closing backquote. */
static size_t skip_bq(sh *s, const unit *u, size_t i)
{
    size_t j;

    for (j = i + 1; j < u->n; j++) {
        if (u->s[j] == '\\')
            j++;
        else if (u->s[j] == '`')
            return j + 1;
    }
    return unterminated(s, u, i, "` command substitution");
}

/* i at open ('(' or '{'): after the matching close, quotes and nested
 * substitutions skipped. */
static size_t skip_nest(sh *s, const unit *u, size_t i, char open, char close)
{
    size_t j = i + 1;
    unsigned depth = 1;

    while (j < u->n) {
        char c = u->s[j];

        if (spend(s, 1, line_at(u, j)) != 0)
            return NPOS;
        if (c == '\\') {
            j += 2;
        } else if (c == '\'' ) {
            /* in $( ) a quote is a quote; in ${ } too (bash 4+). */
            j = skip_sq(s, u, j);
        } else if (c == '"') {
            j = skip_dq(s, u, j);
        } else if (c == '`') {
            j = skip_bq(s, u, j);
        } else if (c == '$' && j + 1 < u->n && (u->s[j + 1] == '(' || u->s[j + 1] == '{')) {
            j = skip_dollar(s, u, j);
        } else if (c == '#' && open == '(' && (u->s[j - 1] == ' ' || u->s[j - 1] == '\t' ||
                                               u->s[j - 1] == '\n')) {
            while (j < u->n && u->s[j] != '\n')
                j++;
        } else {
            if (c == open)
                depth++;
            else if (c == close && --depth == 0)
                return j + 1;
            j++;
        }
        if (j == NPOS)
            return NPOS;
    }
    return unterminated(s, u, i, open == '(' ? "$( command substitution" : "${ expansion");
}

/* i at '$': after the expansion it starts (or i + 1). */
static size_t skip_dollar(sh *s, const unit *u, size_t i)
{
    if (i + 1 >= u->n)
        return i + 1;
    if (u->s[i + 1] == '(')
        return skip_nest(s, u, i + 1, '(', ')');
    if (u->s[i + 1] == '{')
        return skip_nest(s, u, i + 1, '{', '}');
    return i + 1;
}

/* i at '"': after the closing quote. */
static size_t skip_dq(sh *s, const unit *u, size_t i)
{
    size_t j = i + 1;

    while (j < u->n) {
        char c = u->s[j];

        if (c == '\\') {
            j += 2;
        } else if (c == '"') {
            return j + 1;
        } else if (c == '$') {
            j = skip_dollar(s, u, j);
        } else if (c == '`') {
            j = skip_bq(s, u, j);
        } else {
            j++;
        }
        if (j == NPOS)
            return NPOS;
    }
    return unterminated(s, u, i, "\" quote");
}

/* The end of the word starting at i (at the first unquoted metacharacter). */
static size_t scan_word(sh *s, const unit *u, size_t i)
{
    while (i < u->n && !is_meta(u->s[i])) {
        char c = u->s[i];

        if (c == '\\')
            i = i + 2 > u->n ? u->n : i + 2;
        else if (c == '\'')
            i = skip_sq(s, u, i);
        else if (c == '"')
            i = skip_dq(s, u, i);
        else if (c == '`')
            i = skip_bq(s, u, i);
        else if (c == '$')
            i = skip_dollar(s, u, i);
        else
            i++;
        if (i == NPOS)
            return NPOS;
    }
    return i;
}

/* [a, b) is NAME=, NAME+= or NAME[...]= (an array assignment when '(' follows). */
static bool assign_prefix(const char *w, size_t n)
{
    size_t k = 0;

    if (n < 2 || !name_start(w[0]) || w[n - 1] != '=')
        return false;
    while (k < n && name_char(w[k]))
        k++;
    if (k < n && w[k] == '[') {
        while (k < n && w[k] != ']')
            k++;
        k++;
    }
    if (k < n && w[k] == '+')
        k++;
    return k == n - 1;
}

static int lx_push(lexer *lx, unsigned char type, unsigned char op, size_t a, size_t b)
{
    unit *u = lx->u;
    tok *t;

    if (u->nt == lx->cap) {
        size_t nc = lx->cap ? lx->cap * 2 : 256;
        tok *nt;

        if (u->nt >= TS_SHELL_TOKENS_MAX)
            return fail(lx->s, TS_PROB_IMPORT_TOO_LARGE, line_at(u, a),
                        "the text has more than %u words and operators", TS_SHELL_TOKENS_MAX);
        nt = realloc(u->t, nc * sizeof *nt);
        if (nt == NULL)
            return oom(lx->s);
        u->t = nt;
        lx->cap = nc;
    }
    t = &u->t[u->nt++];
    memset(t, 0, sizeof *t);
    t->type = type;
    t->op = op;
    t->a = (uint32_t)a;
    t->b = (uint32_t)b;
    t->line = (uint16_t)line_at(u, a);
    return 0;
}

/* #SBATCH --nodes=2 ...: sbatch's directives, words split on blanks. */
static int directive(lexer *lx, size_t i, size_t end)
{
    sh *s = lx->s;
    const unit *u = lx->u;

    i += 7; /* "#SBATCH" */
    while (i < end) {
        size_t j;
        ts_shell_word *w;

        while (i < end && (u->s[i] == ' ' || u->s[i] == '\t' || u->s[i] == '\r'))
            i++;
        if (i >= end)
            break;
        for (j = i; j < end && u->s[j] != ' ' && u->s[j] != '\t' && u->s[j] != '\r'; j++)
            ;
        if (s->ndir == s->dcap) {
            size_t nc = s->dcap ? s->dcap * 2 : 8;
            ts_shell_word *nd;

            if (nc > 256)
                return 0;
            nd = realloc(s->dir, nc * sizeof *nd);
            if (nd == NULL)
                return oom(s);
            s->dir = nd;
            s->dcap = nc;
        }
        w = &s->dir[s->ndir];
        memset(w, 0, sizeof *w);
        w->text = malloc(j - i + 1);
        if (w->text == NULL)
            return oom(s);
        memcpy(w->text, u->s + i, j - i);
        w->text[j - i] = '\0';
        w->line = line_at(u, i);
        s->ndir++;
        i = j;
    }
    return 0;
}

/* After a newline: the bodies of the heredocs started on that line. */
static int heredoc_bodies(lexer *lx, size_t *pi)
{
    const unit *u = lx->u;
    size_t i = *pi, k;

    for (k = 0; k < lx->npend; k++) {
        tok *op = &lx->u->t[lx->pend[k]];
        const tok *dw = &lx->u->t[lx->pend[k] + 1];
        char delim[128];
        size_t dn = 0, j;
        bool quoted = false;

        /* The delimiter: the word after the operator, quotes removed. */
        if (lx->pend[k] + 1 >= lx->u->nt || dw->type != T_WORD) {
            op->ha = op->hb = (uint32_t)i;
            continue;
        }
        for (j = dw->a; j < dw->b && dn + 1 < sizeof delim; j++) {
            char c = u->s[j];

            if (c == '\'' || c == '"') {
                quoted = true;
                continue;
            }
            if (c == '\\') {
                quoted = true;
                if (++j >= dw->b)
                    break;
                c = u->s[j];
            }
            delim[dn++] = c;
        }
        delim[dn] = '\0';
        op->hq = quoted;
        op->ha = (uint32_t)i;
        op->hb = (uint32_t)u->n;
        while (i < u->n) {
            size_t ls = i, le, t = i;

            while (i < u->n && u->s[i] != '\n')
                i++;
            le = i;
            if (i < u->n)
                i++;
            if (op->hstrip)
                while (t < le && u->s[t] == '\t')
                    t++;
            if (le > t && u->s[le - 1] == '\r')
                le--;
            if (le - t == dn && memcmp(u->s + t, delim, dn) == 0) {
                op->hb = (uint32_t)ls;
                break;
            }
            if (spend(lx->s, le - ls + 1, line_at(u, ls)) != 0)
                return -1;
        }
    }
    lx->npend = 0;
    *pi = i;
    return 0;
}

static const struct { const char *text; unsigned char op; } ops[] = {
    { ";;&", O_DSEMIAMP }, { "&>>", O_AMPDGT }, { "<<<", O_HERESTR }, { "<<-", O_HEREDOC },
    { "&&", O_AND }, { "||", O_OR }, { "|&", O_PIPEAMP }, { ";;", O_DSEMI }, { ";&", O_SEMIAMP },
    { ">>", O_DGT }, { "<<", O_HEREDOC }, { "<&", O_DUPIN }, { ">&", O_DUPOUT },
    { "<>", O_RW }, { ">|", O_CLOBBER }, { "&>", O_AMPGT },
    { ";", O_SEMI }, { "&", O_AMP }, { "|", O_PIPE }, { "(", O_LP }, { ")", O_RP },
    { "<", O_LT }, { ">", O_GT },
};

static int lex(sh *s, unit *u)
{
    lexer lx;
    size_t i = 0;
    bool word_start = true;   /* a '#' here starts a comment */

    memset(&lx, 0, sizeof lx);
    lx.s = s;
    lx.u = u;
    while (i < u->n) {
        char c = u->s[i];
        size_t k;

        if (spend(s, 1, line_at(u, i)) != 0)
            return -1;
        if (c == ' ' || c == '\t' || c == '\r') {
            i++;
            word_start = true;
            continue;
        }
        if (c == '\\' && i + 1 < u->n && u->s[i + 1] == '\n') {
            i += 2;   /* a line continuation between words */
            continue;
        }
        if (c == '#' && word_start) {
            size_t e = i;

            while (e < u->n && u->s[e] != '\n')
                e++;
            if ((i == 0 || u->s[i - 1] == '\n') && e - i >= 8 &&
                memcmp(u->s + i, "#SBATCH", 7) == 0 &&
                (u->s[i + 7] == ' ' || u->s[i + 7] == '\t') && directive(&lx, i, e) != 0)
                return -1;
            i = e;
            continue;
        }
        if (c == '\n') {
            if (lx_push(&lx, T_NL, 0, i, i + 1) != 0)
                return -1;
            i++;
            word_start = true;
            if (lx.npend > 0 && heredoc_bodies(&lx, &i) != 0)
                return -1;
            continue;
        }
        /* (( ... )): an arithmetic command ("( (" would be subshells). */
        if (c == '(' && i + 1 < u->n && u->s[i + 1] == '(') {
            size_t e = skip_nest(s, u, i, '(', ')');

            if (e == NPOS)
                return -1;
            if (lx_push(&lx, T_DPAREN, 0, i, e) != 0)
                return -1;
            i = e;
            word_start = true;
            continue;
        }
        for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            size_t ol = strlen(ops[k].text);

            if (i + ol <= u->n && memcmp(u->s + i, ops[k].text, ol) == 0)
                break;
        }
        if (k < sizeof ops / sizeof ops[0]) {
            size_t ol = strlen(ops[k].text);

            if (lx_push(&lx, T_OP, ops[k].op, i, i + ol) != 0)
                return -1;
            if (ops[k].op == O_HEREDOC) {
                u->t[u->nt - 1].hstrip = ol == 3;
                lx.want_delim = u->nt;   /* the next token */
            }
            i += ol;
            word_start = true;
            continue;
        }
        {
            size_t e = scan_word(s, u, i);

            if (e == NPOS)
                return -1;
            /* An IO number (2>&1): part of a redirection, dropped with it. */
            if (e < u->n && (u->s[e] == '<' || u->s[e] == '>')) {
                size_t d = i;

                while (d < e && u->s[d] >= '0' && u->s[d] <= '9')
                    d++;
                if (d == e) {
                    i = e;
                    continue;
                }
            }
            if (e < u->n && u->s[e] == '(' && assign_prefix(u->s + i, e - i)) {
                if (lx_push(&lx, T_AOPEN, 0, i, e) != 0)
                    return -1;
                i = e + 1;
                word_start = true;
                continue;
            }
            if (lx_push(&lx, T_WORD, 0, i, e) != 0)
                return -1;
            if (lx.want_delim != 0 && lx.want_delim == u->nt - 1) {
                if (lx.npend < sizeof lx.pend / sizeof lx.pend[0])
                    lx.pend[lx.npend++] = u->nt - 2;
                lx.want_delim = 0;
            }
            i = e;
            word_start = false;
        }
    }
    if (lx.npend > 0) {
        /* A heredoc on the last line without a newline: an empty body. */
        size_t k2;

        for (k2 = 0; k2 < lx.npend; k2++)
            u->t[lx.pend[k2]].ha = u->t[lx.pend[k2]].hb = (uint32_t)u->n;
    }
    return lx_push(&lx, T_EOF, 0, u->n, u->n);
}

static void unit_free(unit *u)
{
    free(u->s);
    free(u->ln);
    free(u->t);
    memset(u, 0, sizeof *u);
}

/* ------------------------------------------------------------------ */
/* Variables                                                          */

static var *var_find(sh *s, const char *name, size_t len)
{
    size_t k;

    for (k = 0; k < s->nvars; k++)
        if (strlen(s->vars[k].name) == len && memcmp(s->vars[k].name, name, len) == 0)
            return &s->vars[k];
    return NULL;
}

static var *var_make(sh *s, const char *name, size_t len, unsigned line)
{
    var *v = var_find(s, name, len);

    if (v != NULL)
        return v;
    if (len >= NAME_MAX_LEN) {
        fail(s, TS_PROB_INVALID_VALUE, line, "a variable name is longer than %d characters",
             NAME_MAX_LEN - 1);
        return NULL;
    }
    if (s->nvars == s->vcap) {
        size_t nc = s->vcap ? s->vcap * 2 : 32;
        var *nv;

        if (s->nvars >= TS_SHELL_VARS_MAX) {
            fail(s, TS_PROB_IMPORT_TOO_LARGE, line, "the script assigns more than %u variables",
                 TS_SHELL_VARS_MAX);
            return NULL;
        }
        nv = realloc(s->vars, nc * sizeof *nv);
        if (nv == NULL) {
            oom(s);
            return NULL;
        }
        s->vars = nv;
        s->vcap = nc;
    }
    v = &s->vars[s->nvars++];
    memset(v, 0, sizeof *v);
    memcpy(v->name, name, len);
    v->name[len] = '\0';
    return v;
}

static void var_clear(sh *s, var *v)
{
    s->cells -= v->n;
    free(v->v);
    free(v->start);
    v->v = NULL;
    v->start = NULL;
    v->n = v->ne = 0;
    v->set = false;
}

/* Replace v's value by the elements els[0..ne) (cells, flags cleared
 * but CF_GHOST). */
static int var_assign(sh *s, var *v, const field *els, size_t ne, unsigned line)
{
    size_t total = 0, k, o = 0;
    cell *nv;
    size_t *st;

    for (k = 0; k < ne; k++) {
        size_t j;

        for (j = 0; j < els[k].n; j++)
            total += !(els[k].c[j].f & (CF_KEEP | CF_BREAK));
    }
    if (total > TS_SHELL_VALUE_MAX)
        return fail(s, TS_PROB_IMPORT_TOO_LARGE, line, "a value is longer than %u characters",
                    TS_SHELL_VALUE_MAX);
    if (s->cells - v->n + total > TS_SHELL_CELLS_MAX)
        return fail(s, TS_PROB_IMPORT_TOO_LARGE, line, "the variables hold more than %u characters",
                    TS_SHELL_CELLS_MAX);
    nv = malloc((total ? total : 1) * sizeof *nv);
    st = malloc((ne + 1) * sizeof *st);
    if (nv == NULL || st == NULL) {
        free(nv);
        free(st);
        return oom(s);
    }
    for (k = 0; k < ne; k++) {
        size_t j;

        st[k] = o;
        for (j = 0; j < els[k].n; j++) {
            if (els[k].c[j].f & (CF_KEEP | CF_BREAK))
                continue;
            nv[o] = els[k].c[j];
            nv[o].f &= CF_GHOST;
            o++;
        }
    }
    st[ne] = o;
    var_clear(s, v);
    v->v = nv;
    v->n = total;
    v->start = st;
    v->ne = ne;
    v->set = true;
    v->maybe = false;
    s->cells += total;
    return spend(s, total, line);
}

/* Element k of v as a field view (no copy). */
static field var_elem(const var *v, size_t k)
{
    field f;

    memset(&f, 0, sizeof f);
    if (k < v->ne) {
        f.c = v->v + v->start[k];
        f.n = v->start[k + 1] - v->start[k];
    }
    return f;
}

/* ------------------------------------------------------------------ */
/* Fields                                                             */

static void fields_free(fields *fs)
{
    size_t k;

    for (k = 0; k < fs->n; k++)
        free(fs->v[k].c);
    free(fs->v);
    memset(fs, 0, sizeof *fs);
}

static int fields_add(sh *s, fields *fs, const cell *c, size_t n, uint16_t line,
                      uint16_t taint, bool ghost)
{
    field *f;

    if (fs->n == fs->cap) {
        size_t nc = fs->cap ? fs->cap * 2 : 16;
        field *nv;

        if (fs->n >= TS_SHELL_WORDS_MAX)
            return fail(s, TS_PROB_IMPORT_TOO_LARGE, line, "a command has more than %u words",
                        TS_SHELL_WORDS_MAX);
        nv = realloc(fs->v, nc * sizeof *nv);
        if (nv == NULL)
            return oom(s);
        fs->v = nv;
        fs->cap = nc;
    }
    f = &fs->v[fs->n];
    f->c = malloc((n ? n : 1) * sizeof *f->c);
    if (f->c == NULL)
        return oom(s);
    {
        size_t k, m = 0;

        for (k = 0; k < n; k++) {
            if (c[k].f & (CF_BREAK | CF_KEEP))
                continue;
            f->c[m] = c[k];
            f->c[m].f &= CF_GHOST;
            m++;
        }
        f->n = m;
    }
    f->line = line;
    f->taint = taint;
    f->ghost = ghost;
    fs->n++;
    return 0;
}

/* Field splitting of an expanded word (bash: "Word Splitting"). */
static int split_fields(sh *s, const cbuf *in, fields *out)
{
    size_t k, start = 0;
    bool content = false, keep = false;
    uint16_t taint = 0, line = 0;
    bool have_line = false;

    for (k = 0; k <= in->n; k++) {
        const cell *c = k < in->n ? &in->v[k] : NULL;
        bool end = c == NULL || (c->f & CF_BREAK) ||
                   ((c->f & CF_SPLIT) && !(c->f & CF_GHOST) &&
                    (c->c == ' ' || c->c == '\t' || c->c == '\n'));

        if (!end) {
            if (!have_line) {
                line = c->line;
                have_line = true;
            }
            if (c->f & CF_KEEP)
                keep = true;
            else if (!(c->f & CF_GHOST))
                content = true;
            if (taint == 0 && c->taint != 0)
                taint = c->taint;
            continue;
        }
        if (content || keep || taint != 0) {
            if (fields_add(s, out, in->v + start, k - start, line, taint,
                           !content && taint != 0) != 0)
                return -1;
        }
        start = k + 1;
        content = keep = have_line = false;
        taint = 0;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Pattern matching (case, [[ == ]], ${x#p}): *, ?, [...]; quoted
 * characters literal.  Iterative with one backtrack point per '*'
 * (the classic linear-space matcher), every step counted. */

static bool class_match(const cell *p, size_t np, size_t *pi, unsigned char ch, bool *ok)
{
    size_t i = *pi + 1;
    bool neg = false, hit = false;

    if (i < np && (p[i].c == '!' || p[i].c == '^') && !(p[i].f & CF_QUOTED)) {
        neg = true;
        i++;
    }
    if (i < np && p[i].c == ']') {
        hit = ch == ']';
        i++;
    }
    for (; i < np && !(p[i].c == ']' && !(p[i].f & CF_QUOTED)); i++) {
        if (i + 2 < np && p[i + 1].c == '-' && p[i + 2].c != ']') {
            if (ch >= p[i].c && ch <= p[i + 2].c)
                hit = true;
            i += 2;
        } else if (p[i].c == ch) {
            hit = true;
        }
    }
    if (i >= np) {
        *ok = false;   /* no closing ']': the '[' is literal */
        return false;
    }
    *ok = true;
    *pi = i + 1;
    return hit != neg;
}

/* 1 match, 0 no match, -1 error. */
static int glob(sh *s, const cell *p, size_t np, const cell *t, size_t nt, unsigned line)
{
    size_t pi = 0, ti = 0, star_p = NPOS, star_t = 0;

    while (ti < nt || pi < np) {
        if (spend(s, 1, line) != 0)
            return -1;
        if (pi < np) {
            const cell *pc = &p[pi];
            bool special = !(pc->f & CF_QUOTED);

            if (pc->f & CF_GHOST) {
                pi++;
                continue;
            }
            if (special && pc->c == '*') {
                star_p = pi++;
                star_t = ti;
                continue;
            }
            if (ti < nt && !(t[ti].f & CF_GHOST)) {
                if (special && pc->c == '?') {
                    pi++;
                    ti++;
                    continue;
                }
                if (special && pc->c == '[') {
                    size_t q = pi;
                    bool ok;
                    bool m = class_match(p, np, &q, t[ti].c, &ok);

                    if (ok) {
                        if (m) {
                            pi = q;
                            ti++;
                            continue;
                        }
                        goto backtrack;
                    }
                }
                if (pc->c == t[ti].c) {
                    pi++;
                    ti++;
                    continue;
                }
            } else if (ti < nt) {
                ti++;   /* a ghost in the text matches nothing, costs nothing */
                continue;
            }
        } else if (ti < nt && (t[ti].f & CF_GHOST)) {
            ti++;
            continue;
        }
backtrack:
        if (star_p == NPOS || star_t >= nt)
            return 0;
        pi = star_p + 1;
        ti = ++star_t;
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* Arithmetic ($((...)), (( )), [[ -eq ]]): C's integer operators over
 * int64, every one checked; an unknown operand makes the result unknown,
 * an assignment or a syntax this does not read makes it unsupported. */

typedef struct arith {
    run *r;
    const char *p;
    const char *end;
    uint16_t taint;     /* set: the result is unknown, for this reason */
    bool bad;           /* unsupported or invalid */
    unsigned depth;
    unsigned line;
} arith;

static int64_t a_ternary(arith *a);
static int64_t arith_text(run *r, const char *txt, size_t n, unsigned line, unsigned depth,
                          uint16_t *taint, bool *bad);

static void a_ws(arith *a)
{
    while (a->p < a->end && (*a->p == ' ' || *a->p == '\t' || *a->p == '\n' || *a->p == '\r'))
        a->p++;
}

static int64_t a_fail(arith *a)
{
    a->bad = true;
    return 0;
}

static int64_t a_primary(arith *a)
{
    a_ws(a);
    if (spend(a->r->sh, 1, a->line) != 0)
        return a_fail(a);
    if (a->p >= a->end)
        return a_fail(a);
    if (*a->p == '(') {
        int64_t v;

        a->p++;
        v = a_ternary(a);
        a_ws(a);
        if (a->p >= a->end || *a->p != ')')
            return a_fail(a);
        a->p++;
        return v;
    }
    if (*a->p >= '0' && *a->p <= '9') {
        int base = 10;
        int64_t v = 0;

        if (*a->p == '0' && a->p + 1 < a->end && (a->p[1] == 'x' || a->p[1] == 'X')) {
            base = 16;
            a->p += 2;
        } else if (*a->p == '0') {
            base = 8;
        }
        while (a->p < a->end && name_char(*a->p)) {
            int d;
            char c = *a->p;

            if (c >= '0' && c <= '9')
                d = c - '0';
            else if (c >= 'a' && c <= 'f')
                d = c - 'a' + 10;
            else if (c >= 'A' && c <= 'F')
                d = c - 'A' + 10;
            else
                return a_fail(a);
            if (d >= base || ts_ckd_mul(&v, v, base) || ts_ckd_add(&v, v, d))
                return a_fail(a);
            a->p++;
        }
        return v;
    }
    if (name_start(*a->p)) {
        const char *n0 = a->p;
        size_t nlen;
        var *v;

        while (a->p < a->end && name_char(*a->p))
            a->p++;
        nlen = (size_t)(a->p - n0);
        a_ws(a);
        if (a->p < a->end && (*a->p == '[' ||
                              (*a->p == '=' && !(a->p + 1 < a->end && a->p[1] == '=')) ||
                              ((*a->p == '+' || *a->p == '-') && a->p + 1 < a->end &&
                               a->p[1] == *a->p)))
            return a_fail(a);   /* arrays, assignments, ++ / --: not read */
        v = var_find(a->r->sh, n0, nlen);
        {
            size_t nl = nlen;

            if (v == NULL || !v->set) {
                if (a->taint == 0)
                    a->taint = v != NULL && v->maybe
                        ? taint_add(a->r->sh, TS_SHELL_MAYBE, n0, nl, v->maybe_line, v->maybe_cond)
                        : taint_add(a->r->sh, TS_SHELL_UNSET, n0, nl, a->line, 0);
                return 0;
            }
            {
                field f = var_elem(v, 0);
                uint16_t t = first_taint(f.c, f.n);
                char *txt;
                int64_t r;
                bool bad = false;
                uint16_t sub = 0;

                if (t != 0) {
                    if (a->taint == 0)
                        a->taint = t;
                    return 0;
                }
                if (real_len(f.c, f.n) == 0)
                    return 0;   /* set and empty: 0, as bash */
                txt = cells_text(a->r->sh, f.c, f.n);
                if (txt == NULL)
                    return a_fail(a);
                if (a->depth >= 8) {
                    free(txt);
                    return a_fail(a);
                }
                r = arith_text(a->r, txt, strlen(txt), a->line, a->depth + 1, &sub, &bad);
                free(txt);
                if (bad)
                    return a_fail(a);
                if (sub != 0 && a->taint == 0)
                    a->taint = sub;
                return r;
            }
        }
    }
    return a_fail(a);
}

static int64_t a_unary(arith *a)
{
    a_ws(a);
    if (a->p < a->end && (*a->p == '-' || *a->p == '+') &&
        !(a->p + 1 < a->end && a->p[1] == *a->p)) {
        char op = *a->p++;
        int64_t v = a_unary(a);

        if (op == '-') {
            if (v == INT64_MIN)
                return a_fail(a);
            return -v;
        }
        return v;
    }
    if (a->p < a->end && *a->p == '!' && !(a->p + 1 < a->end && a->p[1] == '=')) {
        a->p++;
        return !a_unary(a);
    }
    if (a->p < a->end && *a->p == '~') {
        a->p++;
        return ~a_unary(a);
    }
    return a_primary(a);
}

static int64_t a_pow(arith *a)
{
    int64_t b = a_unary(a);

    a_ws(a);
    if ((size_t)(a->end - a->p) >= 2 && a->p[0] == '*' && a->p[1] == '*') {
        int64_t e, r = 1;

        a->p += 2;
        e = a_pow(a);   /* right-associative */
        if (e < 0)
            return a_fail(a);
        while (e-- > 0)
            if (ts_ckd_mul(&r, r, b) || spend(a->r->sh, 1, a->line) != 0)
                return a_fail(a);
        return r;
    }
    return b;
}

static int64_t a_mul(arith *a)
{
    int64_t v = a_pow(a);

    for (;;) {
        int64_t w;

        a_ws(a);
        if (a->p + 1 < a->end && a->p[1] == '=' && (*a->p == '*' || *a->p == '/' || *a->p == '%'))
            return a_fail(a);   /* *= /= %=: assignments, not read */
        if (a->p < a->end && *a->p == '*' && !(a->p + 1 < a->end && a->p[1] == '*')) {
            a->p++;
            w = a_pow(a);
            if (ts_ckd_mul(&v, v, w))
                return a_fail(a);
        } else if (a->p < a->end && (*a->p == '/' || *a->p == '%')) {
            char op = *a->p++;

            w = a_pow(a);
            if (w == 0 || (v == INT64_MIN && w == -1)) {
                if (a->taint != 0)
                    return 0;   /* unknown anyway */
                return a_fail(a);
            }
            v = op == '/' ? v / w : v % w;
        } else {
            return v;
        }
    }
}

static int64_t a_add(arith *a)
{
    int64_t v = a_mul(a);

    for (;;) {
        a_ws(a);
        if (a->p < a->end && (*a->p == '+' || *a->p == '-') &&
            !(a->p + 1 < a->end && (a->p[1] == '=' || a->p[1] == *a->p))) {
            char op = *a->p++;
            int64_t w = a_mul(a);

            if (op == '+' ? ts_ckd_add(&v, v, w) : __builtin_sub_overflow(v, w, &v))
                return a_fail(a);
        } else {
            return v;
        }
    }
}

static int64_t a_shift(arith *a)
{
    int64_t v = a_add(a);

    for (;;) {
        a_ws(a);
        if ((size_t)(a->end - a->p) >= 2 && (a->p[0] == '<' || a->p[0] == '>') &&
            a->p[1] == a->p[0] && !((size_t)(a->end - a->p) >= 3 && a->p[2] == '=')) {
            char op = a->p[0];
            int64_t w;

            a->p += 2;
            w = a_add(a);
            if (w < 0 || w > 62 || v < 0)
                return a_fail(a);
            if (op == '<') {
                if (v > (INT64_MAX >> w))
                    return a_fail(a);
                v <<= w;
            } else {
                v >>= w;
            }
        } else {
            return v;
        }
    }
}

static int64_t a_rel(arith *a)
{
    int64_t v = a_shift(a);

    for (;;) {
        a_ws(a);
        if (a->p < a->end && (*a->p == '<' || *a->p == '>') &&
            !(a->p + 1 < a->end && a->p[1] == *a->p)) {
            char op = *a->p++;
            bool eq = a->p < a->end && *a->p == '=';
            int64_t w;

            if (eq)
                a->p++;
            w = a_shift(a);
            v = op == '<' ? (eq ? v <= w : v < w) : (eq ? v >= w : v > w);
        } else {
            return v;
        }
    }
}

static int64_t a_eq(arith *a)
{
    int64_t v = a_rel(a);

    for (;;) {
        a_ws(a);
        if ((size_t)(a->end - a->p) >= 2 && (a->p[0] == '=' || a->p[0] == '!') && a->p[1] == '=') {
            bool ne = a->p[0] == '!';
            int64_t w;

            a->p += 2;
            w = a_rel(a);
            v = ne ? v != w : v == w;
        } else {
            return v;
        }
    }
}

static int64_t a_bits(arith *a, int level)
{
    static const char opc[3] = { '&', '^', '|' };
    int64_t v = level == 0 ? a_eq(a) : a_bits(a, level - 1);

    for (;;) {
        char op = opc[level];

        a_ws(a);
        if (a->p < a->end && *a->p == op && !(a->p + 1 < a->end && (a->p[1] == op || a->p[1] == '='))) {
            int64_t w;

            a->p++;
            w = level == 0 ? a_eq(a) : a_bits(a, level - 1);
            v = op == '&' ? (v & w) : op == '^' ? (v ^ w) : (v | w);
        } else {
            return v;
        }
    }
}

static int64_t a_logic(arith *a, bool or)
{
    int64_t v = or ? a_logic(a, false) : a_bits(a, 2);
    const char *op = or ? "||" : "&&";

    for (;;) {
        a_ws(a);
        if ((size_t)(a->end - a->p) >= 2 && memcmp(a->p, op, 2) == 0) {
            int64_t w;

            a->p += 2;
            w = or ? a_logic(a, false) : a_bits(a, 2);
            v = or ? (v || w) : (v && w);
        } else {
            return v;
        }
    }
}

static int64_t a_ternary(arith *a)
{
    int64_t c;

    if (++a->depth > 64)
        return a_fail(a);
    c = a_logic(a, true);
    a_ws(a);
    if (a->p < a->end && *a->p == '?') {
        int64_t x, y;

        a->p++;
        x = a_ternary(a);
        a_ws(a);
        if (a->p >= a->end || *a->p != ':')
            return a_fail(a);
        a->p++;
        y = a_ternary(a);
        c = c ? x : y;
    }
    a->depth--;
    return c;
}

static int64_t arith_text(run *r, const char *txt, size_t n, unsigned line, unsigned depth,
                          uint16_t *taint, bool *bad)
{
    arith a;
    int64_t v;

    memset(&a, 0, sizeof a);
    a.r = r;
    a.p = txt;
    a.end = txt + n;
    a.line = line;
    a.depth = depth;
    a_ws(&a);
    if (a.p >= a.end) {
        *taint = 0;
        *bad = false;
        return 0;
    }
    v = a_ternary(&a);
    a_ws(&a);
    if (a.p != a.end)
        a.bad = true;
    *taint = a.taint;
    *bad = a.bad;
    return v;
}

/* ------------------------------------------------------------------ */
/* Expansion                                                          */

enum { CTX_UNQ = 0, CTX_DQ, CTX_HD };
enum { XM_SPLIT = 0, XM_JOIN };   /* JOIN: an assignment's value, [[ ]], case */

typedef struct xstate {
    run *r;
    int mode;
    cbuf *out;
    bool atzero;      /* a quoted "${A[@]}" / "$@" gave no element */
} xstate;

static int x_range(xstate *x, size_t a, size_t b, int ctx);

static int push_ghost(xstate *x, ts_shell_why why, const char *name, size_t nlen, unsigned line,
                      unsigned cond)
{
    uint16_t t = taint_add(x->r->sh, why, name, nlen, line, cond);

    return cb_push(x->r->sh, x->out, 0, CF_GHOST, t, (uint16_t)line);
}

static unsigned ctx_flags(int ctx)
{
    return ctx == CTX_UNQ ? CF_SPLIT : CF_QUOTED;
}

/* Push elements of a value: all of them (at: "@" or "*" given), or
 * element 0.  quoted "@" keeps elements apart; "*" and the joined mode
 * join them with a space. */
static int push_elems(xstate *x, const field *els, size_t ne, bool at, bool star, int ctx,
                      unsigned line)
{
    sh *s = x->r->sh;
    size_t k;

    if (!at) {
        if (ne == 0)
            return 0;
        return cb_cat(s, x->out, els[0].c, els[0].n, ctx_flags(ctx), line);
    }
    if (ne == 0) {
        if (ctx != CTX_UNQ && !star)
            x->atzero = true;
        return 0;
    }
    for (k = 0; k < ne; k++) {
        if (k > 0) {
            if (x->mode == XM_JOIN || (star && ctx != CTX_UNQ)) {
                if (cb_push(s, x->out, ' ', ctx_flags(ctx), 0, (uint16_t)line) != 0)
                    return -1;
            } else if (cb_push(s, x->out, 0, CF_BREAK, 0, (uint16_t)line) != 0) {
                return -1;
            }
        }
        if (cb_cat(s, x->out, els[k].c, els[k].n, ctx_flags(ctx), line) != 0)
            return -1;
        if (ctx != CTX_UNQ && !star && x->mode == XM_SPLIT &&
            cb_push(s, x->out, 0, CF_KEEP, 0, (uint16_t)line) != 0)
            return -1;
    }
    return 0;
}

/* A parameter's value: the elements it has (a view, not owned).  state:
 * 1 set, 0 unset (*taint says why, 0 when plainly unset and harmless:
 * $@ of the script). */
typedef struct pval {
    int state;
    field one;          /* a single computed element (owned text buffer) */
    cell onebuf[24];
    const var *v;       /* the variable, for its elements */
    size_t idx;         /* element, or NPOS for all */
    uint16_t taint;
} pval;

static void pval_elems(const pval *p, field *tmp, size_t cap, const field **els, size_t *ne)
{
    size_t k;

    if (p->state != 1) {
        *els = NULL;
        *ne = 0;
        return;
    }
    if (p->v == NULL) {
        *els = &p->one;
        *ne = 1;
        return;
    }
    if (p->idx != NPOS) {
        if (p->idx < p->v->ne) {
            tmp[0] = var_elem(p->v, p->idx);
            *els = tmp;
            *ne = 1;
        } else {
            *els = NULL;
            *ne = 0;
        }
        return;
    }
    for (k = 0; k < p->v->ne && k < cap; k++)
        tmp[k] = var_elem(p->v, k);
    *els = tmp;
    *ne = k;
}

static void pval_small(pval *p, const char *txt, unsigned line)
{
    size_t k, n = strlen(txt);

    if (n > sizeof p->onebuf / sizeof p->onebuf[0])
        n = sizeof p->onebuf / sizeof p->onebuf[0];
    for (k = 0; k < n; k++) {
        p->onebuf[k].c = (unsigned char)txt[k];
        p->onebuf[k].f = 0;
        p->onebuf[k].taint = 0;
        p->onebuf[k].line = (uint16_t)line;
    }
    p->one.c = p->onebuf;
    p->one.n = n;
    p->state = 1;
}

/* Look a parameter up: name[0..nlen) with index spec (NULL none, "@",
 * "*" or an arithmetic text). */
static int lookup(xstate *x, const char *name, size_t nlen, const char *idx, size_t ilen,
                  unsigned line, pval *p)
{
    run *r = x->r;
    sh *s = r->sh;

    memset(p, 0, sizeof *p);
    p->idx = 0;
    if (nlen == 1 && (name[0] == '@' || name[0] == '*')) {
        if (r->pos == NULL) {
            p->state = 2;    /* the script's: no elements, nothing unknown */
            return 0;
        }
        p->state = 1;
        p->v = r->pos;
        p->idx = NPOS;
        return 0;
    }
    if (nlen == 1 && name[0] == '#') {
        char b[24];

        snprintf(b, sizeof b, "%zu", r->pos != NULL ? r->pos->ne : (size_t)0);
        pval_small(p, b, line);
        return 0;
    }
    if (nlen == 1 && name[0] == '?') {
        pval_small(p, "0", line);
        return 0;
    }
    if (nlen == 1 && name[0] == '-') {
        pval_small(p, "", line);
        return 0;
    }
    if (nlen == 1 && (name[0] == '$' || name[0] == '!')) {
        p->state = 0;
        p->taint = taint_add(s, TS_SHELL_UNSUPPORTED, name[0] == '$' ? "$$" : "$!", 2, line, 0);
        return 0;
    }
    if (name[0] >= '0' && name[0] <= '9') {
        size_t k = 0;
        unsigned long n = strtoul(name, NULL, 10);

        for (k = 0; k < nlen; k++)
            if (name[k] < '0' || name[k] > '9')
                break;
        if (r->pos != NULL && n >= 1 && n <= r->pos->ne) {
            p->state = 1;
            p->v = r->pos;
            p->idx = n - 1;
            return 0;
        }
        if (r->pos != NULL && n == 0) {
            pval_small(p, "sh", line);
            return 0;
        }
        p->state = 0;
        p->taint = r->pos != NULL ? 0 : taint_add(s, TS_SHELL_ARG, name, nlen, line, 0);
        if (r->pos != NULL)
            p->state = 2;
        return 0;
    }
    {
        var *v = var_find(s, name, nlen);

        if (v == NULL || !v->set) {
            char full[NAME_MAX_LEN + 24];
            size_t fl = nlen;

            memcpy(full, name, nlen < NAME_MAX_LEN ? nlen : NAME_MAX_LEN);
            if (fl > NAME_MAX_LEN)
                fl = NAME_MAX_LEN;
            p->state = 0;
            p->taint = v != NULL && v->maybe
                ? taint_add(s, TS_SHELL_MAYBE, full, fl, v->maybe_line, v->maybe_cond)
                : taint_add(s, TS_SHELL_UNSET, full, fl, line, 0);
            return 0;
        }
        p->state = 1;
        p->v = v;
        if (idx == NULL) {
            p->idx = 0;
        } else if (ilen == 1 && (idx[0] == '@' || idx[0] == '*')) {
            p->idx = NPOS;
        } else {
            uint16_t t = 0;
            bool bad = false;
            int64_t k = arith_text(r, idx, ilen, line, 0, &t, &bad);

            if (bad || t != 0 || k < 0) {
                p->state = 0;
                p->taint = t != 0 ? t : taint_add(s, TS_SHELL_UNSUPPORTED, name, nlen, line, 0);
                return 0;
            }
            p->idx = (size_t)k;
            if (p->idx >= v->ne) {
                p->state = 0;
                p->taint = taint_add(s, TS_SHELL_UNSET, name, nlen, line, 0);
            }
        }
    }
    return 0;
}

/* Null: unset, or no real character. */
static bool pval_null(const pval *p)
{
    field tmp[1];
    const field *els;
    size_t ne, k;

    if (p->state != 1)
        return true;
    if (p->v != NULL && p->idx == NPOS) {
        for (k = 0; k < p->v->ne; k++) {
            field f = var_elem(p->v, k);

            if (real_len(f.c, f.n) > 0)
                return false;
        }
        return true;
    }
    pval_elems(p, tmp, 1, &els, &ne);
    return ne == 0 || real_len(els[0].c, els[0].n) == 0;
}

static int push_pval(xstate *x, const pval *p, int ctx, const char *name, size_t nlen,
                     unsigned line)
{
    const field *els;
    size_t ne;
    field one[1];
    field *tmp = NULL;
    int rc;
    bool at = p->state == 1 && p->v != NULL && p->idx == NPOS;
    bool star = nlen >= 1 && name[nlen - 1] == '*';

    if (p->state == 2) {   /* "$@" of a script without arguments */
        if (ctx != CTX_UNQ && !star)
            x->atzero = true;
        return 0;
    }
    if (p->state != 1) {
        if (p->taint == 0)
            return 0;
        return cb_push(x->r->sh, x->out, 0, CF_GHOST, p->taint, (uint16_t)line);
    }
    if (!at || p->v->ne == 0)
        pval_elems(p, one, 1, &els, &ne);
    else {
        tmp = malloc(p->v->ne * sizeof *tmp);
        if (tmp == NULL)
            return oom(x->r->sh);
        pval_elems(p, tmp, p->v->ne, &els, &ne);
    }
    rc = push_elems(x, els, ne, at, star, ctx, line);
    free(tmp);
    return rc;
}

/* Remove the shortest/longest prefix/suffix matching pat from f. */
static int trim_match(xstate *x, const field *f, const cbuf *pat, bool suffix, bool longest,
                      int ctx, unsigned line)
{
    sh *s = x->r->sh;
    size_t n = f->n, k;
    size_t best = NPOS;

    for (k = 0; k <= n; k++) {
        size_t cut = longest ? (suffix ? k : n - k) : (suffix ? n - k : k);
        int m = suffix ? glob(s, pat->v, pat->n, f->c + cut, n - cut, line)
                       : glob(s, pat->v, pat->n, f->c, cut, line);

        if (m < 0)
            return -1;
        if (m) {
            best = cut;
            break;
        }
    }
    if (best == NPOS)
        return cb_cat(s, x->out, f->c, n, ctx_flags(ctx), line);
    if (suffix)
        return cb_cat(s, x->out, f->c, best, ctx_flags(ctx), line);
    return cb_cat(s, x->out, f->c + best, n - best, ctx_flags(ctx), line);
}

/* ${...}: [a, b) is the text between the braces. */
static int x_brace(xstate *x, size_t a, size_t b, int ctx)
{
    run *r = x->r;
    sh *s = r->sh;
    const unit *u = r->u;
    const char *t = u->s;
    unsigned line = line_at(u, a);
    size_t i = a, n0, nlen, ia = 0, il = 0;
    bool length = false, has_idx = false;
    pval p;

    if (i < b && t[i] == '#' && i + 1 < b && t[i + 1] != '}' &&
        (name_char(t[i + 1]) || t[i + 1] == '@' || t[i + 1] == '*')) {
        length = true;
        i++;
    }
    if (i < b && t[i] == '!')
        return push_ghost(x, TS_SHELL_UNSUPPORTED, t + a - 2, b - a + 3, line, 0);
    n0 = i;
    if (i < b && name_start(t[i])) {
        while (i < b && name_char(t[i]))
            i++;
    } else if (i < b && t[i] >= '0' && t[i] <= '9') {
        while (i < b && t[i] >= '0' && t[i] <= '9')
            i++;
    } else if (i < b && strchr("@*#?$!-", t[i]) != NULL) {
        i++;
    } else {
        return fail(s, TS_PROB_INVALID_VALUE, line, "bad substitution ${%.*s}",
                    ts_utf8_prec(t + a, b - a < 40 ? b - a : 40), t + a);
    }
    nlen = i - n0;
    if (i < b && t[i] == '[') {
        size_t e = i + 1;

        while (e < b && t[e] != ']')
            e++;
        if (e >= b)
            return fail(s, TS_PROB_INVALID_VALUE, line, "bad array subscript in ${%.*s}",
                        ts_utf8_prec(t + a, b - a < 40 ? b - a : 40), t + a);
        ia = i + 1;
        il = e - ia;
        has_idx = true;
        i = e + 1;
    }
    {
        /* An index with $ in it: expand it first. */
        char ib[128];
        const char *idx = NULL;

        if (has_idx) {
            if (il >= sizeof ib)
                return push_ghost(x, TS_SHELL_UNSUPPORTED, t + a - 2, b - a + 3, line, 0);
            if (memchr(t + ia, '$', il) != NULL) {
                cbuf tmp = { 0 };
                cbuf *save = x->out;
                int save_mode = x->mode;
                char *txt;

                x->out = &tmp;
                x->mode = XM_JOIN;
                if (x_range(x, ia, ia + il, CTX_DQ) != 0) {
                    x->out = save;
                    cb_free(&tmp);
                    return -1;
                }
                x->out = save;
                x->mode = save_mode;
                if (first_taint(tmp.v, tmp.n) != 0) {
                    uint16_t tt = first_taint(tmp.v, tmp.n);

                    cb_free(&tmp);
                    return cb_push(s, x->out, 0, CF_GHOST, tt, (uint16_t)line);
                }
                txt = cells_text(s, tmp.v, tmp.n);
                cb_free(&tmp);
                if (txt == NULL)
                    return -1;
                snprintf(ib, sizeof ib, "%s", txt);
                free(txt);
            } else {
                memcpy(ib, t + ia, il);
                ib[il] = '\0';
            }
            idx = ib;
        }
        if (lookup(x, t + n0, nlen, idx, idx != NULL ? strlen(idx) : 0, line, &p) != 0)
            return -1;
    }
    if (length) {
        char nb[24];
        size_t cnt = 0;

        if (i != b)
            return fail(s, TS_PROB_INVALID_VALUE, line, "bad substitution ${%.*s}",
                        ts_utf8_prec(t + a, b - a < 40 ? b - a : 40), t + a);
        if (p.state == 0 && p.taint != 0 && s->taints[p.taint].why != TS_SHELL_UNSET)
            return cb_push(s, x->out, 0, CF_GHOST, p.taint, (uint16_t)line);
        if (p.state == 1 && p.v != NULL && p.idx == NPOS) {
            cnt = p.v->ne;
        } else if (p.state == 1) {
            field one[1];
            const field *els;
            size_t ne;

            pval_elems(&p, one, 1, &els, &ne);
            if (ne == 1) {
                if (first_taint(els[0].c, els[0].n) != 0)
                    return cb_push(s, x->out, 0, CF_GHOST, first_taint(els[0].c, els[0].n),
                                   (uint16_t)line);
                cnt = real_len(els[0].c, els[0].n);
            }
        }
        snprintf(nb, sizeof nb, "%zu", cnt);
        {
            size_t k;

            for (k = 0; nb[k] != '\0'; k++)
                if (cb_push(s, x->out, (unsigned char)nb[k], ctx_flags(ctx), 0, (uint16_t)line) != 0)
                    return -1;
        }
        return 0;
    }
    if (i == b)
        return push_pval(x, &p, ctx, t + n0, nlen, line);
    {
        bool colon = t[i] == ':';
        char op;
        size_t wa;

        if (colon)
            i++;
        if (i >= b)
            return push_ghost(x, TS_SHELL_UNSUPPORTED, t + a - 2, b - a + 3, line, 0);
        op = t[i];
        wa = i + 1;
        if (op == '-' || op == '=' || op == '+' || op == '?') {
            bool absent = colon ? pval_null(&p) : p.state != 1;

            /* A value not known (an argument, a command's output) counts
             * as absent: bash would see it empty without arguments. */
            if (op == '+')
                return absent ? 0 : x_range(x, wa, b, ctx);
            if (!absent)
                return push_pval(x, &p, ctx, t + n0, nlen, line);
            if (op == '?')
                return p.taint != 0 ? cb_push(s, x->out, 0, CF_GHOST, p.taint, (uint16_t)line)
                                    : push_ghost(x, TS_SHELL_UNSET, t + n0, nlen, line, 0);
            if (op == '=') {
                /* Assign the default, then use it. */
                cbuf val = { 0 };
                cbuf *save = x->out;
                int save_mode = x->mode;
                var *v;
                field f;

                x->out = &val;
                x->mode = XM_JOIN;
                if (x_range(x, wa, b, ctx == CTX_UNQ ? CTX_UNQ : ctx) != 0) {
                    x->out = save;
                    x->mode = save_mode;
                    cb_free(&val);
                    return -1;
                }
                x->out = save;
                x->mode = save_mode;
                if (!name_start(t[n0]) || has_idx) {
                    cb_free(&val);
                    return fail(s, TS_PROB_INVALID_VALUE, line, "${%.*s}: cannot assign this way",
                                ts_utf8_prec(t + a, b - a < 40 ? b - a : 40), t + a);
                }
                v = var_make(s, t + n0, nlen, line);
                memset(&f, 0, sizeof f);
                f.c = val.v;
                f.n = val.n;
                if (v == NULL || var_assign(s, v, &f, 1, line) != 0) {
                    cb_free(&val);
                    return -1;
                }
                {
                    int rc = cb_cat(s, x->out, val.v, val.n, ctx_flags(ctx), line);

                    cb_free(&val);
                    return rc;
                }
            }
            return x_range(x, wa, b, ctx);
        }
        if (!colon && (op == '#' || op == '%')) {
            bool longest = wa < b && t[wa] == op;
            cbuf pat = { 0 };
            cbuf *save = x->out;
            int save_mode = x->mode;
            field one[1];
            const field *els;
            size_t ne;
            int rc;

            if (longest)
                wa++;
            if (p.state != 1)
                return push_pval(x, &p, ctx, t + n0, nlen, line);
            x->out = &pat;
            x->mode = XM_JOIN;
            rc = x_range(x, wa, b, CTX_UNQ);
            x->out = save;
            x->mode = save_mode;
            if (rc != 0) {
                cb_free(&pat);
                return -1;
            }
            pval_elems(&p, one, 1, &els, &ne);
            rc = ne == 0 ? 0 : trim_match(x, &els[0], &pat, op == '%', longest, ctx, line);
            cb_free(&pat);
            return rc;
        }
        /* ${x/a/b}, ${x:1:2}, ${x^^} ...: not read. */
        return push_ghost(x, TS_SHELL_UNSUPPORTED, t + a - 2, b - a + 3, line, 0);
    }
}

/* $((expr)): [a, b) is expr. */
static int x_arith(xstate *x, size_t a, size_t b, int ctx)
{
    sh *s = x->r->sh;
    unsigned line = line_at(x->r->u, a);
    cbuf tmp = { 0 };
    cbuf *save = x->out;
    int save_mode = x->mode;
    uint16_t t;
    char *txt;
    int64_t v;
    bool bad = false;
    char nb[24];
    size_t k;

    x->out = &tmp;
    x->mode = XM_JOIN;
    if (x_range(x, a, b, CTX_DQ) != 0) {
        x->out = save;
        x->mode = save_mode;
        cb_free(&tmp);
        return -1;
    }
    x->out = save;
    x->mode = save_mode;
    t = first_taint(tmp.v, tmp.n);
    if (t != 0) {
        cb_free(&tmp);
        return cb_push(s, x->out, 0, CF_GHOST, t, (uint16_t)line);
    }
    txt = cells_text(s, tmp.v, tmp.n);
    cb_free(&tmp);
    if (txt == NULL)
        return -1;
    v = arith_text(x->r, txt, strlen(txt), line, 0, &t, &bad);
    if (s->failed) {
        free(txt);
        return -1;
    }
    if (bad || t != 0) {
        int rc;

        if (t == 0) {
            char nm[48];

            snprintf(nm, sizeof nm, "$((%.*s))", ts_utf8_prec(txt, 36), txt);
            t = taint_add(s, TS_SHELL_UNSUPPORTED, nm, strlen(nm), line, 0);
        }
        free(txt);
        rc = cb_push(s, x->out, 0, CF_GHOST, t, (uint16_t)line);
        return rc;
    }
    free(txt);
    snprintf(nb, sizeof nb, "%lld", (long long)v);
    for (k = 0; nb[k] != '\0'; k++)
        if (cb_push(s, x->out, (unsigned char)nb[k], ctx_flags(ctx), 0, (uint16_t)line) != 0)
            return -1;
    return 0;
}

/* A command substitution [a, b) (with its $( ) or backquotes): unknown. */
static int x_command(xstate *x, size_t a, size_t b)
{
    const char *t = x->r->u->s;
    char nm[48];
    size_t n = b - a;

    if (n > 40) {
        n = ts_utf8_cut(t + a, 36);
        snprintf(nm, sizeof nm, "%.*s...", (int)n, t + a);
    } else {
        snprintf(nm, sizeof nm, "%.*s", (int)n, t + a);
    }
    {
        size_t k;

        for (k = 0; nm[k] != '\0'; k++)
            if (nm[k] == '\n' || nm[k] == '\t')
                nm[k] = ' ';
    }
    return push_ghost(x, TS_SHELL_COMMAND, nm, strlen(nm), line_at(x->r->u, a), 0);
}

/* i at '$' (in context ctx): expand, return the index after it. */
static size_t x_dollar(xstate *x, size_t i, size_t b, int ctx)
{
    run *r = x->r;
    const unit *u = r->u;
    const char *t = u->s;
    unsigned line = line_at(u, i);

    if (i + 1 >= b)
        return cb_push(r->sh, x->out, '$', ctx_flags(ctx) & CF_QUOTED, 0, (uint16_t)line) ? NPOS : i + 1;
    if (t[i + 1] == '(') {
        size_t e = skip_nest(r->sh, u, i + 1, '(', ')');

        if (e == NPOS)
            return NPOS;
        if (t[i + 2] == '(' && e - i >= 5 && t[e - 2] == ')') {
            if (x_arith(x, i + 3, e - 2, ctx) != 0)
                return NPOS;
            return e;
        }
        return x_command(x, i, e) != 0 ? NPOS : e;
    }
    if (t[i + 1] == '{') {
        size_t e = skip_nest(r->sh, u, i + 1, '{', '}');

        if (e == NPOS)
            return NPOS;
        return x_brace(x, i + 2, e - 1, ctx) != 0 ? NPOS : e;
    }
    if (name_start(t[i + 1])) {
        size_t e = i + 1;
        pval p;

        while (e < b && name_char(t[e]))
            e++;
        if (lookup(x, t + i + 1, e - i - 1, NULL, 0, line, &p) != 0 ||
            push_pval(x, &p, ctx, t + i + 1, e - i - 1, line) != 0)
            return NPOS;
        return e;
    }
    if ((t[i + 1] >= '0' && t[i + 1] <= '9') || strchr("@*#?$!-", t[i + 1]) != NULL) {
        pval p;

        if (lookup(x, t + i + 1, 1, NULL, 0, line, &p) != 0 ||
            push_pval(x, &p, ctx, t + i + 1, 1, line) != 0)
            return NPOS;
        return i + 2;
    }
    if (ctx == CTX_UNQ && t[i + 1] == '\'') {
        /* $'...': ANSI-C quoting, the common escapes. */
        size_t j = i + 2;

        while (j < b && t[j] != '\'') {
            unsigned char c = (unsigned char)t[j];

            if (c == '\\' && j + 1 < b) {
                char e = t[++j];

                c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : (unsigned char)e;
            }
            if (cb_push(r->sh, x->out, c, CF_QUOTED, 0, u->ln[j]) != 0)
                return NPOS;
            j++;
        }
        if (x->mode == XM_SPLIT && cb_push(r->sh, x->out, 0, CF_KEEP, 0, (uint16_t)line) != 0)
            return NPOS;
        return j < b ? j + 1 : b;
    }
    if (ctx == CTX_UNQ && t[i + 1] == '"')
        return i + 1;   /* $"...": a translated string, read as "..." */
    return cb_push(r->sh, x->out, '$', ctx_flags(ctx) & CF_QUOTED, 0, (uint16_t)line) ? NPOS : i + 1;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A marker \x01hh of a rebuilt text: a ghost with taint hh. */
static size_t x_marker(xstate *x, size_t i, size_t b)
{
    const unit *u = x->r->u;
    int h1 = i + 2 < b ? hexval(u->s[i + 1]) : -1, h2 = i + 2 < b ? hexval(u->s[i + 2]) : -1;

    if (h1 < 0 || h2 < 0)
        return i + 1;
    if (cb_push(x->r->sh, x->out, 0, CF_GHOST, (uint16_t)(h1 * 16 + h2), u->ln[i]) != 0)
        return NPOS;
    return i + 3;
}

static int x_range(xstate *x, size_t a, size_t b, int ctx)
{
    run *r = x->r;
    sh *s = r->sh;
    const unit *u = r->u;
    const char *t = u->s;
    size_t i = a;

    while (i < b) {
        char c = t[i];
        uint16_t ln = u->ln[i];

        if (s->failed)
            return -1;
        if (c == '\x01') {
            i = x_marker(x, i, b);
        } else if (c == '\\') {
            if (i + 1 >= b) {
                if (cb_push(s, x->out, '\\', ctx_flags(ctx) & CF_QUOTED, 0, ln) != 0)
                    return -1;
                i++;
                continue;
            }
            if (t[i + 1] == '\n') {
                i += 2;
                continue;
            }
            if (ctx == CTX_UNQ || strchr(ctx == CTX_DQ ? "$`\"\\" : "$`\\", t[i + 1]) != NULL) {
                if (cb_push(s, x->out, (unsigned char)t[i + 1], CF_QUOTED, 0, ln) != 0)
                    return -1;
            } else if (cb_push(s, x->out, '\\', CF_QUOTED, 0, ln) != 0 ||
                       cb_push(s, x->out, (unsigned char)t[i + 1], CF_QUOTED, 0, ln) != 0) {
                return -1;
            }
            i += 2;
            continue;
        } else if (ctx == CTX_UNQ && c == '\'') {
            size_t e = skip_sq(s, u, i), j;

            if (e == NPOS)
                return -1;
            for (j = i + 1; j + 1 < e; j++) {
                if (t[j] == '\x01') {
                    size_t nj = x_marker(x, j, e - 1);

                    if (nj == NPOS)
                        return -1;
                    j = nj - 1;
                    continue;
                }
                if (cb_push(s, x->out, (unsigned char)t[j], CF_QUOTED, 0, u->ln[j]) != 0)
                    return -1;
            }
            if (x->mode == XM_SPLIT && cb_push(s, x->out, 0, CF_KEEP, 0, ln) != 0)
                return -1;
            i = e;
        } else if (ctx == CTX_UNQ && c == '"') {
            size_t e = skip_dq(s, u, i), before = x->out->n;
            bool save_atzero = x->atzero;

            if (e == NPOS)
                return -1;
            x->atzero = false;
            if (x_range(x, i + 1, e - 1, CTX_DQ) != 0)
                return -1;
            if (x->out->n == before && !x->atzero && x->mode == XM_SPLIT &&
                cb_push(s, x->out, 0, CF_KEEP, 0, ln) != 0)
                return -1;
            x->atzero = save_atzero;
            i = e;
        } else if (c == '$') {
            i = x_dollar(x, i, b, ctx);
        } else if (c == '`') {
            size_t e = skip_bq(s, u, i);

            if (e == NPOS || x_command(x, i, e) != 0)
                return -1;
            i = e;
        } else {
            if (cb_push(s, x->out, (unsigned char)c, ctx == CTX_UNQ ? 0 : CF_QUOTED, 0, ln) != 0)
                return -1;
            i++;
        }
        if (i == NPOS)
            return -1;
    }
    return 0;
}

/* Expand raw [a, b) of the current unit. */
static int expand(run *r, size_t a, size_t b, int mode, cbuf *out)
{
    xstate x;

    memset(&x, 0, sizeof x);
    x.r = r;
    x.mode = mode;
    x.out = out;
    return x_range(&x, a, b, CTX_UNQ);
}

/* Expand a word token into fields (appended to fs). */
static int expand_fields(run *r, const tok *t, fields *fs)
{
    cbuf b = { 0 };
    int rc = expand(r, t->a, t->b, XM_SPLIT, &b);

    if (rc == 0)
        rc = split_fields(r->sh, &b, fs);
    cb_free(&b);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Nested texts (bash -c, eval, heredocs)                             */

static int run_unit(sh *s, unit *u, var *pos, field *prefix, size_t nprefix);

/* Rebuild text from cells: unknown values as markers. */
static int unit_from_cells(sh *s, const cell *c, size_t n, unit *u)
{
    size_t k, o = 0, cap = n * 4 + 1;
    uint16_t prev = 0;

    memset(u, 0, sizeof *u);
    if (cap > TS_SHELL_TEXT_MAX * 4 + 1)
        cap = TS_SHELL_TEXT_MAX * 4 + 1;
    u->s = malloc(cap);
    u->ln = malloc(cap * sizeof *u->ln);
    if (u->s == NULL || u->ln == NULL)
        return oom(s);
    for (k = 0; k < n; k++) {
        bool ghost = (c[k].f & CF_GHOST) != 0;

        if (o + 4 >= cap || o + 4 > TS_SHELL_TEXT_MAX)
            return fail(s, TS_PROB_IMPORT_TOO_LARGE, c[k].line,
                        "a nested script (bash -c, eval, heredoc) is longer than %u bytes",
                        TS_SHELL_TEXT_MAX);
        if (c[k].taint != 0 && (ghost || c[k].taint != prev)) {
            static const char hex[] = "0123456789abcdef";

            u->s[o] = '\x01';
            u->s[o + 1] = hex[(c[k].taint >> 4) & 15];
            u->s[o + 2] = hex[c[k].taint & 15];
            u->ln[o] = u->ln[o + 1] = u->ln[o + 2] = c[k].line;
            o += 3;
        }
        prev = c[k].taint;
        if (ghost || (c[k].f & (CF_BREAK | CF_KEEP)))
            continue;
        u->s[o] = (char)c[k].c;
        u->ln[o] = c[k].line;
        o++;
    }
    u->s[o] = '\0';
    u->n = o;
    return 0;
}

static int nested(run *r, const cell *c, size_t n, var *pos, field *prefix, size_t nprefix,
                  unsigned line)
{
    sh *s = r->sh;
    unit u;
    int rc;

    if (s->depth >= TS_SHELL_DEPTH_MAX)
        return fail(s, TS_PROB_IMPORT_TOO_LARGE, line,
                    "eval, bash -c, heredocs and function calls nest more than %u deep",
                    TS_SHELL_DEPTH_MAX);
    if (unit_from_cells(s, c, n, &u) != 0) {
        unit_free(&u);
        return -1;
    }
    s->depth++;
    rc = lex(s, &u);
    if (rc == 0)
        rc = run_unit(s, &u, pos, prefix, nprefix);
    s->depth--;
    unit_free(&u);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Notes on what was not read                                         */

static void undecided(run *r, unsigned line)
{
    sh *s = r->sh;
    size_t k;

    for (k = 0; k < s->nundecided; k++)
        if (s->undecided[k] == line)
            return;
    if (s->nundecided < UNDECIDED_MAX)
        s->undecided[s->nundecided++] = (uint16_t)line;
}

static void skipped(sh *s, const char *what, const char *arg, unsigned line)
{
    size_t n = strlen(s->skipped);
    int len;

    if (n + 16 >= SKIPPED_LEN)
        return;
    len = snprintf(s->skipped + n, SKIPPED_LEN - n, "%s%s %.*s (line %u)", n ? ", " : "", what,
                   ts_utf8_prec(arg, 40), arg, line);
    if (len < 0 || (size_t)len >= SKIPPED_LEN - n)
        ts_utf8_trim(s->skipped, strlen(s->skipped));
}

/* ------------------------------------------------------------------ */
/* The runner                                                         */

static int p_list(run *r, int mode, int *status);
static int p_command(run *r, int mode, int *status);

static const tok *cur(const run *r)
{
    return &r->u->t[r->i];
}

static bool tok_is(const run *r, const tok *t, const char *word)
{
    size_t n = strlen(word);

    return t->type == T_WORD && t->b - t->a == n && memcmp(r->u->s + t->a, word, n) == 0;
}

static bool is_op(const tok *t, unsigned char op)
{
    return t->type == T_OP && t->op == op;
}

static void skip_nl(run *r)
{
    while (cur(r)->type == T_NL)
        r->i++;
}

static int syntax(run *r, const char *want)
{
    const tok *t = cur(r);
    const char *txt = r->u->s + t->a;
    size_t n = t->b - t->a;

    if (t->type == T_EOF)
        return fail(r->sh, TS_PROB_INVALID_VALUE, t->line, "syntax error: the text ends where %s "
                    "should come", want);
    if (t->type == T_NL)
        return fail(r->sh, TS_PROB_INVALID_VALUE, t->line, "syntax error: a new line where %s "
                    "should come", want);
    return fail(r->sh, TS_PROB_INVALID_VALUE, t->line, "syntax error near '%.*s' (%s expected)",
                ts_utf8_prec(txt, n < 40 ? n : 40), txt, want);
}

static int expect_word(run *r, const char *word)
{
    skip_nl(r);
    if (!tok_is(r, cur(r), word))
        return syntax(r, word);
    r->i++;
    return 0;
}

/* Reserved words that end a list. */
static bool at_stop(const run *r)
{
    static const char *const stops[] = { "then", "elif", "else", "fi", "do", "done", "esac",
                                         "}", NULL };
    const tok *t = cur(r);
    const char *const *w;

    if (t->type == T_EOF || is_op(t, O_RP) || is_op(t, O_DSEMI) || is_op(t, O_SEMIAMP) ||
        is_op(t, O_DSEMIAMP))
        return true;
    for (w = stops; *w != NULL; w++)
        if (tok_is(r, t, *w))
            return true;
    return false;
}

/* Maybe mode: an assignment is remembered as made only in a branch. */
static void maybe_assign(run *r, const tok *t)
{
    const char *w = r->u->s + t->a;
    size_t n = 0;
    var *v;

    while (n < t->b - t->a && name_char(w[n]))
        n++;
    if (n == 0 || !name_start(w[0]))
        return;
    v = var_find(r->sh, w, n);
    if (v != NULL && v->set)
        return;
    v = var_make(r->sh, w, n, t->line);
    if (v == NULL)
        return;
    if (!v->maybe) {
        v->maybe = true;
        v->maybe_line = t->line;
        v->maybe_cond = r->cond;
    }
}

/* A word that is an assignment: NAME=..., NAME+=..., NAME[i]=... */
static bool is_assignment(const run *r, const tok *t)
{
    const char *w = r->u->s + t->a;
    size_t n = t->b - t->a, k = 0;

    if (t->type == T_AOPEN)
        return true;
    if (t->type != T_WORD || n < 2 || !name_start(w[0]))
        return false;
    while (k < n && name_char(w[k]))
        k++;
    if (k < n && w[k] == '[') {
        while (k < n && w[k] != ']')
            k++;
        k++;
    }
    if (k < n && w[k] == '+')
        k++;
    return k < n && w[k] == '=';
}

/* Run one assignment word (or T_AOPEN ... ')'); the cursor moves past it. */
static int do_assign(run *r, int mode)
{
    sh *s = r->sh;
    const tok *t = cur(r);
    const char *w = r->u->s + t->a;
    size_t n = t->b - t->a, k = 0, ia = 0, il = 0;
    bool append = false, has_idx = false;
    unsigned line = t->line;
    var *v;

    while (k < n && name_char(w[k]))
        k++;
    if (k < n && w[k] == '[') {
        ia = k + 1;
        while (k < n && w[k] != ']')
            k++;
        il = k - ia;
        has_idx = true;
        k++;
    }
    if (k < n && w[k] == '+') {
        append = true;
        k++;
    }
    r->i++;
    if (t->type == T_AOPEN) {
        fields fs = { 0 };
        int rc = 0;

        for (;;) {
            const tok *e = cur(r);

            if (e->type == T_NL) {
                r->i++;
                continue;
            }
            if (is_op(e, O_RP)) {
                r->i++;
                break;
            }
            if (e->type != T_WORD) {
                fields_free(&fs);
                return syntax(r, "')' closing the array");
            }
            if (mode == M_RUN && expand_fields(r, e, &fs) != 0) {
                fields_free(&fs);
                return -1;
            }
            r->i++;
        }
        if (mode == M_MAYBE)
            maybe_assign(r, t);
        if (mode != M_RUN) {
            fields_free(&fs);
            return 0;
        }
        {
            size_t nl = 0;

            while (nl < n && name_char(w[nl]))
                nl++;
            v = var_make(s, w, nl, line);
        }
        if (v == NULL) {
            fields_free(&fs);
            return -1;
        }
        if (append && v->set && v->ne > 0) {
            size_t total = v->ne + fs.n, j;
            field *all = malloc(total * sizeof *all);

            if (all == NULL) {
                fields_free(&fs);
                return oom(s);
            }
            for (j = 0; j < v->ne; j++)
                all[j] = var_elem(v, j);
            for (j = 0; j < fs.n; j++)
                all[v->ne + j] = fs.v[j];
            /* var_assign copies before it frees the old cells */
            {
                cell *old = v->v;
                size_t *olds = v->start;
                size_t oldn = v->n;

                v->v = NULL;
                v->start = NULL;
                v->n = 0;
                v->ne = 0;
                s->cells -= oldn;
                rc = var_assign(s, v, all, total, line);
                free(old);
                free(olds);
            }
            free(all);
        } else {
            rc = var_assign(s, v, fs.v, fs.n, line);
        }
        fields_free(&fs);
        return rc;
    }
    if (mode == M_MAYBE)
        maybe_assign(r, t);
    if (mode != M_RUN)
        return 0;
    {
        cbuf val = { 0 };
        size_t nl = 0;
        field f;
        int rc;

        while (nl < n && name_char(w[nl]))
            nl++;
        if (expand(r, t->a + (uint32_t)k + 1, t->b, XM_JOIN, &val) != 0) {
            cb_free(&val);
            return -1;
        }
        v = var_make(s, w, nl, line);
        if (v == NULL) {
            cb_free(&val);
            return -1;
        }
        memset(&f, 0, sizeof f);
        if (has_idx) {
            /* A[i]=x: element i (appended when i is the next one). */
            uint16_t tt = 0;
            bool bad = false;
            char ib[64];
            int64_t idx;

            if (il >= sizeof ib) {
                cb_free(&val);
                return fail(s, TS_PROB_INVALID_VALUE, line, "array index too long");
            }
            memcpy(ib, w + ia, il);
            ib[il] = '\0';
            idx = arith_text(r, ib, il, line, 0, &tt, &bad);
            if (bad || tt != 0 || idx < 0 || idx > 4096) {
                cb_free(&val);
                return 0;   /* an index not known: the element is not kept */
            }
            {
                size_t ne = v->set ? v->ne : 0, j, total = ne > (size_t)idx ? ne : (size_t)idx + 1;
                field *all = calloc(total, sizeof *all);
                cell *old = v->v;
                size_t *olds = v->start;
                size_t oldn = v->n;

                if (all == NULL) {
                    cb_free(&val);
                    return oom(s);
                }
                for (j = 0; j < ne; j++)
                    all[j] = var_elem(v, j);
                all[idx].c = val.v;
                all[idx].n = val.n;
                if (append && (size_t)idx < ne) {
                    cb_free(&val);
                    free(all);
                    return fail(s, TS_PROB_INVALID_VALUE, line, "A[i]+= is not read");
                }
                v->v = NULL;
                v->start = NULL;
                v->n = v->ne = 0;
                s->cells -= oldn;
                rc = var_assign(s, v, all, total, line);
                free(old);
                free(olds);
                free(all);
            }
            cb_free(&val);
            return rc;
        }
        if (append && v->set && v->ne > 0) {
            cbuf joined = { 0 };
            field e0 = var_elem(v, 0);

            if (cb_cat(s, &joined, e0.c, e0.n, 0, line) != 0 ||
                cb_cat(s, &joined, val.v, val.n, 0, line) != 0) {
                cb_free(&joined);
                cb_free(&val);
                return -1;
            }
            cb_free(&val);
            val = joined;
        }
        f.c = val.v;
        f.n = val.n;
        rc = var_assign(s, v, &f, 1, line);
        cb_free(&val);
        return rc;
    }
}

/* ---- tests: [ ], test, [[ ]] ---- */

enum { TI_WORD = 0, TI_AND, TI_OR, TI_LP, TI_RP, TI_LT, TI_GT };

typedef struct titem {
    int kind;
    cbuf w;          /* TI_WORD: the cells (pattern flags kept) */
    char *text;      /* TI_WORD: its text */
    bool opaque;     /* depends on a value not known */
} titem;

typedef struct tparse {
    run *r;
    titem *it;
    size_t n, i;
    bool dbl;        /* [[ ]] (else [ ] / test) */
    unsigned line;
} tparse;

static int t3_not(int v)
{
    return v == ST_TRUE ? ST_FALSE : v == ST_FALSE ? ST_TRUE : ST_UNKNOWN;
}

static bool t_word(const tparse *tp, size_t i, const char *w)
{
    return i < tp->n && tp->it[i].kind == TI_WORD && strcmp(tp->it[i].text, w) == 0;
}

static int t_or(tparse *tp);

static bool parse_int(const char *t, int64_t *out)
{
    char *end;
    long long v;

    while (*t == ' ' || *t == '\t')
        t++;
    errno = 0;
    v = strtoll(t, &end, 10);
    if (errno != 0 || end == t)
        return false;
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end != '\0')
        return false;
    *out = v;
    return true;
}

static int t_int(tparse *tp, const titem *x, int64_t *v)
{
    if (parse_int(x->text, v))
        return 0;
    if (tp->dbl) {
        uint16_t t = 0;
        bool bad = false;

        *v = arith_text(tp->r, x->text, strlen(x->text), tp->line, 0, &t, &bad);
        if (!bad && t == 0)
            return 0;
    }
    return -1;
}

static int t_primary(tparse *tp)
{
    static const char *const unary_unknown[] = {
        "-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-t", "-u",
        "-w", "-x", "-G", "-L", "-N", "-O", "-S", "-o", NULL
    };
    static const char *const bin[] = { "=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le",
                                       "-gt", "-ge", "-nt", "-ot", "-ef", "=~", NULL };
    titem *it = tp->it;
    size_t i = tp->i;
    const char *const *w;

    if (spend(tp->r->sh, 1, tp->line) != 0)
        return -1;
    if (i >= tp->n)
        return ST_UNKNOWN;
    if (it[i].kind == TI_LP || t_word(tp, i, "(") ) {
        int v;

        tp->i++;
        v = t_or(tp);
        if (v < 0)
            return v;
        if (tp->i < tp->n && (it[tp->i].kind == TI_RP || t_word(tp, tp->i, ")")))
            tp->i++;
        return v;
    }
    /* binary: a op b */
    if (i + 2 <= tp->n - 1 + 1 && i + 1 < tp->n) {
        const titem *op = &it[i + 1];
        bool isbin = op->kind == TI_LT || op->kind == TI_GT;

        if (op->kind == TI_WORD)
            for (w = bin; *w != NULL; w++)
                if (strcmp(op->text, *w) == 0)
                    isbin = true;
        if (isbin && i + 2 < tp->n && it[i].kind == TI_WORD && it[i + 2].kind == TI_WORD) {
            const titem *a = &it[i], *b = &it[i + 2];
            const char *o = op->kind == TI_LT ? "<" : op->kind == TI_GT ? ">" : op->text;
            int64_t x, y;

            tp->i += 3;
            if (a->opaque || b->opaque)
                return ST_UNKNOWN;
            if (strcmp(o, "=") == 0 || strcmp(o, "==") == 0 || strcmp(o, "!=") == 0) {
                int m;

                if (tp->dbl) {
                    m = glob(tp->r->sh, b->w.v, b->w.n, a->w.v, a->w.n, tp->line);
                    if (m < 0)
                        return -1;
                } else {
                    m = strcmp(a->text, b->text) == 0;
                }
                return (o[0] == '!') != (m == 1) ? ST_TRUE : ST_FALSE;
            }
            if (strcmp(o, "<") == 0)
                return strcmp(a->text, b->text) < 0 ? ST_TRUE : ST_FALSE;
            if (strcmp(o, ">") == 0)
                return strcmp(a->text, b->text) > 0 ? ST_TRUE : ST_FALSE;
            if (o[0] == '-' && o[1] != 'n' && o[1] != 'o' && strcmp(o, "-ef") != 0) {
                bool r2;

                if (t_int(tp, a, &x) != 0 || t_int(tp, b, &y) != 0)
                    return ST_UNKNOWN;
                r2 = strcmp(o, "-eq") == 0 ? x == y : strcmp(o, "-ne") == 0 ? x != y
                   : strcmp(o, "-lt") == 0 ? x < y : strcmp(o, "-le") == 0 ? x <= y
                   : strcmp(o, "-gt") == 0 ? x > y : x >= y;
                return r2 ? ST_TRUE : ST_FALSE;
            }
            return ST_UNKNOWN;   /* -nt, -ot, -ef, =~ */
        }
    }
    if (it[i].kind == TI_WORD && i + 1 < tp->n && it[i + 1].kind == TI_WORD) {
        const char *o = it[i].text;

        if (strcmp(o, "-z") == 0 || strcmp(o, "-n") == 0) {
            const titem *a = &it[i + 1];

            tp->i += 2;
            if (a->opaque)
                return ST_UNKNOWN;
            return (a->text[0] == '\0') == (o[1] == 'z') ? ST_TRUE : ST_FALSE;
        }
        if (strcmp(o, "-v") == 0) {
            var *v = var_find(tp->r->sh, it[i + 1].text, strlen(it[i + 1].text));

            tp->i += 2;
            if (v != NULL && v->maybe && !v->set)
                return ST_UNKNOWN;
            return v != NULL && v->set ? ST_TRUE : ST_FALSE;
        }
        for (w = unary_unknown; *w != NULL; w++)
            if (strcmp(o, *w) == 0) {
                tp->i += 2;
                return ST_UNKNOWN;   /* a file, a terminal, an option: not known here */
            }
    }
    if (it[i].kind == TI_WORD) {
        tp->i++;
        if (it[i].opaque)
            return ST_UNKNOWN;
        return it[i].text[0] != '\0' ? ST_TRUE : ST_FALSE;
    }
    tp->i++;
    return ST_UNKNOWN;
}

static int t_not(tparse *tp)
{
    if (tp->i + 1 < tp->n && t_word(tp, tp->i, "!")) {
        int v;

        tp->i++;
        v = t_not(tp);
        return v < 0 ? v : t3_not(v);
    }
    return t_primary(tp);
}

static int t_and(tparse *tp)
{
    int v = t_not(tp);

    while (v >= 0 && tp->i < tp->n &&
           (tp->dbl ? tp->it[tp->i].kind == TI_AND : t_word(tp, tp->i, "-a"))) {
        int w;

        tp->i++;
        w = t_not(tp);
        if (w < 0)
            return w;
        v = (v == ST_FALSE || w == ST_FALSE) ? ST_FALSE
          : (v == ST_TRUE && w == ST_TRUE) ? ST_TRUE : ST_UNKNOWN;
    }
    return v;
}

static int t_or(tparse *tp)
{
    int v = t_and(tp);

    while (v >= 0 && tp->i < tp->n &&
           (tp->dbl ? tp->it[tp->i].kind == TI_OR : t_word(tp, tp->i, "-o"))) {
        int w;

        tp->i++;
        w = t_and(tp);
        if (w < 0)
            return w;
        v = (v == ST_TRUE || w == ST_TRUE) ? ST_TRUE
          : (v == ST_FALSE && w == ST_FALSE) ? ST_FALSE : ST_UNKNOWN;
    }
    return v;
}

static void titems_free(titem *it, size_t n)
{
    size_t k;

    for (k = 0; k < n; k++) {
        cb_free(&it[k].w);
        free(it[k].text);
    }
    free(it);
}

static int titem_word(sh *s, titem *it, const cell *c, size_t n, unsigned line)
{
    memset(it, 0, sizeof *it);
    it->kind = TI_WORD;
    if (cb_cat(s, &it->w, c, n, 0, line) != 0)
        return -1;
    {
        size_t k;

        /* keep the quoting flag for patterns */
        for (k = 0; k < n; k++)
            it->w.v[k].f = c[k].f;
    }
    it->text = cells_text(s, c, n);
    it->opaque = cells_opaque(s, c, n);
    return it->text == NULL ? -1 : 0;
}

/* [ ... ] or test ...: fs[from..to) are the operands. */
static int eval_test(run *r, const fields *fs, size_t from, size_t to, unsigned line)
{
    tparse tp;
    size_t k;
    int v;

    memset(&tp, 0, sizeof tp);
    tp.r = r;
    tp.line = line;
    tp.n = to - from;
    tp.it = calloc(tp.n ? tp.n : 1, sizeof *tp.it);
    if (tp.it == NULL)
        return oom(r->sh);
    for (k = 0; k < tp.n; k++)
        if (titem_word(r->sh, &tp.it[k], fs->v[from + k].c, fs->v[from + k].n, line) != 0) {
            titems_free(tp.it, tp.n);
            return -1;
        }
    v = tp.n == 0 ? ST_FALSE : t_or(&tp);
    if (v >= 0 && tp.i < tp.n)
        v = ST_UNKNOWN;
    titems_free(tp.it, tp.n);
    return v;
}

/* [[ ... ]]: the cursor is after "[[". */
static int p_dbrack(run *r, int mode, int *status)
{
    sh *s = r->sh;
    unsigned line = cur(r)->line;
    tparse tp;
    size_t cap = 0;
    int v = ST_UNKNOWN;

    memset(&tp, 0, sizeof tp);
    tp.r = r;
    tp.dbl = true;
    tp.line = line;
    for (;;) {
        const tok *t = cur(r);
        titem *it;

        if (t->type == T_EOF || t->type == T_NL) {
            titems_free(tp.it, tp.n);
            return syntax(r, "]]");
        }
        if (tok_is(r, t, "]]")) {
            r->i++;
            break;
        }
        if (tp.n == cap) {
            size_t nc = cap ? cap * 2 : 8;
            titem *ni;

            if (nc > 512) {
                titems_free(tp.it, tp.n);
                return fail(s, TS_PROB_IMPORT_TOO_LARGE, line, "a [[ test ]] is too long");
            }
            ni = realloc(tp.it, nc * sizeof *ni);
            if (ni == NULL) {
                titems_free(tp.it, tp.n);
                return oom(s);
            }
            tp.it = ni;
            cap = nc;
        }
        it = &tp.it[tp.n];
        memset(it, 0, sizeof *it);
        if (t->type == T_OP) {
            it->kind = t->op == O_AND ? TI_AND : t->op == O_OR ? TI_OR : t->op == O_LP ? TI_LP
                     : t->op == O_RP ? TI_RP : t->op == O_LT ? TI_LT : t->op == O_GT ? TI_GT : -1;
            if (it->kind < 0) {
                titems_free(tp.it, tp.n);
                return syntax(r, "]]");
            }
            tp.n++;
        } else if (t->type == T_WORD) {
            if (mode == M_RUN) {
                cbuf b = { 0 };

                if (expand(r, t->a, t->b, XM_JOIN, &b) != 0 ||
                    titem_word(s, it, b.v, b.n, t->line) != 0) {
                    cb_free(&b);
                    tp.n++;
                    titems_free(tp.it, tp.n);
                    return -1;
                }
                cb_free(&b);
            } else {
                it->kind = TI_WORD;
                it->text = calloc(1, 1);
                if (it->text == NULL) {
                    titems_free(tp.it, tp.n);
                    return oom(s);
                }
            }
            tp.n++;
        } else {
            titems_free(tp.it, tp.n);
            return syntax(r, "]]");
        }
        r->i++;
    }
    if (mode == M_RUN) {
        v = tp.n == 0 ? ST_FALSE : t_or(&tp);
        if (v >= 0 && tp.i < tp.n)
            v = ST_UNKNOWN;
    }
    titems_free(tp.it, tp.n);
    if (v < 0)
        return -1;
    *status = v;
    return 0;
}

/* ---- simple commands ---- */

static const char *base_name(const char *p)
{
    const char *sl = strrchr(p, '/');

    return sl != NULL ? sl + 1 : p;
}

static bool is_shell(const char *w)
{
    const char *b = base_name(w);

    return strcmp(b, "bash") == 0 || strcmp(b, "sh") == 0 || strcmp(b, "zsh") == 0 ||
           strcmp(b, "dash") == 0 || strcmp(b, "ksh") == 0;
}

static bool ends_py(const char *w)
{
    size_t n = strlen(w);

    return n > 3 && w[0] != '-' && strcmp(w + n - 3, ".py") == 0;
}

static void cand_free(cand *c)
{
    size_t k;

    for (k = 0; k < c->n; k++)
        free(c->w[k].text);
    free(c->w);
    memset(c, 0, sizeof *c);
}

static int cand_add(sh *s, cand *c, const field *f)
{
    ts_shell_word *w;

    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 32;
        ts_shell_word *nw;

        if (c->n >= TS_SHELL_WORDS_MAX)
            return fail(s, TS_PROB_IMPORT_TOO_LARGE, f->line, "the training command has more than %u "
                        "words", TS_SHELL_WORDS_MAX);
        nw = realloc(c->w, nc * sizeof *nw);
        if (nw == NULL)
            return oom(s);
        c->w = nw;
        c->cap = nc;
    }
    w = &c->w[c->n];
    memset(w, 0, sizeof *w);
    w->text = cells_text(s, f->c, f->n);
    if (w->text == NULL)
        return -1;
    c->n++;
    w->line = f->line;
    w->ghost = f->ghost;
    if (f->taint != 0) {
        const tinfo *t = &s->taints[f->taint];

        w->why = (ts_shell_why)t->why;
        memcpy(w->why_name, t->name, sizeof w->why_name);
        w->why_name[sizeof w->why_name - 1] = '\0';
        w->why_line = t->line;
        w->why_cond = t->cond;
    }
    return 0;
}

/* A command that is not a builtin: is it the training command? */
static int consider(run *r, const fields *fs, unsigned line)
{
    sh *s = r->sh;
    size_t k, entry = fs->n, flags = 0;
    char *first;
    bool args_list;

    for (k = 0; k < fs->n; k++) {
        char *t = cells_text(s, fs->v[k].c, fs->v[k].n);
        bool py;

        if (t == NULL)
            return -1;
        py = ends_py(t);
        free(t);
        if (py) {
            entry = k;
            break;
        }
    }
    if (entry < fs->n) {
        cand c;

        for (k = entry + 1; k < fs->n; k++)
            if (fs->v[k].n >= 3 && fs->v[k].c[0].c == '-' && fs->v[k].c[1].c == '-' &&
                !(fs->v[k].c[0].f & CF_GHOST))
                flags++;
        if (s->npy < sizeof s->py_lines / sizeof s->py_lines[0])
            s->py_lines[s->npy] = (uint16_t)line;
        s->npy++;
        if (s->best.n > 0 && s->best.flags > flags)
            return 0;
        memset(&c, 0, sizeof c);
        for (k = 0; k < s->nprefix; k++)
            if (cand_add(s, &c, &s->prefix[k]) != 0) {
                cand_free(&c);
                return -1;
            }
        for (k = 0; k < fs->n; k++)
            if (cand_add(s, &c, &fs->v[k]) != 0) {
                cand_free(&c);
                return -1;
            }
        c.entry = s->nprefix + entry;
        c.line = s->depth > 0 ? s->outer_line : line;
        c.flags = flags;
        cand_free(&s->best);
        s->best = c;
        return 0;
    }
    /* An argument file: a command that is a --flag. */
    first = fs->n > 0 ? cells_text(s, fs->v[0].c, fs->v[0].n) : NULL;
    if (fs->n > 0 && first == NULL)
        return -1;
    args_list = first != NULL && first[0] == '-' && first[1] == '-' && first[2] != '\0';
    free(first);
    if (args_list) {
        if (s->args.n == 0)
            s->args.line = line;
        for (k = 0; k < fs->n; k++)
            if (cand_add(s, &s->args, &fs->v[k]) != 0)
                return -1;
    }
    return 0;
}

/* Does fs run a shell on a string (bash -c "...")?  Index of the string. */
static size_t shell_string(sh *s, const fields *fs, size_t *shell_at)
{
    size_t k;

    for (k = 0; k < fs->n; k++) {
        char *t = cells_text(s, fs->v[k].c, fs->v[k].n);
        bool sh_word;
        size_t j;
        bool c_opt = false;

        if (t == NULL)
            return NPOS;
        sh_word = is_shell(t);
        free(t);
        if (!sh_word)
            continue;
        for (j = k + 1; j < fs->n; j++) {
            const field *f = &fs->v[j];

            if (f->n >= 2 && f->c[0].c == '-' && f->c[1].c != '-') {
                size_t q;

                for (q = 1; q < f->n; q++)
                    if (f->c[q].c == 'c')
                        c_opt = true;
                continue;
            }
            if (f->n >= 2 && f->c[0].c == '-' && f->c[1].c == '-')
                continue;
            break;
        }
        if (c_opt && j < fs->n) {
            *shell_at = k;
            return j;
        }
        return NPOS;
    }
    return NPOS;
}

/* Builtins that assign: export / declare / local / readonly / typeset. */
static int p_declare(run *r, int mode, size_t start, size_t end)
{
    size_t save = r->i;

    r->i = start;
    while (r->i < end) {
        const tok *t = cur(r);

        if (is_assignment(r, t)) {
            if (do_assign(r, mode) != 0)
                return -1;
            continue;
        }
        r->i++;
    }
    r->i = save > end ? save : end;
    return 0;
}

static int call_function(run *r, const func *fn, fields *fs, unsigned line, int *status)
{
    sh *s = r->sh;
    var pos;
    var *save_pos = r->pos;
    const unit *save_u = r->u;
    size_t save_i = r->i;
    int rc;

    if (s->depth >= TS_SHELL_DEPTH_MAX)
        return fail(s, TS_PROB_IMPORT_TOO_LARGE, line,
                    "eval, bash -c, heredocs and function calls nest more than %u deep",
                    TS_SHELL_DEPTH_MAX);
    memset(&pos, 0, sizeof pos);
    if (fs->n > 1 && var_assign(s, &pos, fs->v + 1, fs->n - 1, line) != 0) {
        var_clear(s, &pos);
        return -1;
    }
    pos.set = true;
    s->depth++;
    r->pos = &pos;
    r->u = fn->u;
    r->i = fn->body;
    rc = p_command(r, M_RUN, status);
    if (r->ctl == CTL_RETURN)
        r->ctl = CTL_NONE;
    r->pos = save_pos;
    r->u = save_u;
    r->i = save_i;
    s->depth--;
    var_clear(s, &pos);
    return rc;
}

static int run_simple(run *r, fields *fs, size_t cmd_tok, size_t end_tok, const tok *heredoc,
                      unsigned line, int *status)
{
    sh *s = r->sh;
    char *name;
    size_t k;

    *status = ST_ASSUMED;
    if (fs->n == 0)
        return 0;
    if (s->depth == 0)
        s->outer_line = (uint16_t)line;
    name = cells_text(s, fs->v[0].c, fs->v[0].n);
    if (name == NULL)
        return -1;
#define IS(w) (strcmp(name, (w)) == 0)
    if (IS("export") || IS("declare") || IS("typeset") || IS("local") || IS("readonly")) {
        free(name);
        *status = ST_TRUE;
        return p_declare(r, M_RUN, cmd_tok + 1, end_tok);
    }
    if (IS("unset")) {
        for (k = 1; k < fs->n; k++) {
            char *t = cells_text(s, fs->v[k].c, fs->v[k].n);
            var *v;

            if (t == NULL) {
                free(name);
                return -1;
            }
            v = t[0] != '-' ? var_find(s, t, strlen(t)) : NULL;
            if (v != NULL) {
                var_clear(s, v);
                v->maybe = false;
            }
            free(t);
        }
        *status = ST_TRUE;
    } else if (IS("exit")) {
        r->ctl = CTL_EXIT;
        if (s->depth == 0 || s->exit_line == 0)
            s->exit_line = (uint16_t)line;
        *status = ST_TRUE;
    } else if (IS("return")) {
        r->ctl = CTL_RETURN;
        *status = ST_TRUE;
    } else if (IS("break")) {
        r->ctl = CTL_BREAK;
        *status = ST_TRUE;
    } else if (IS("continue")) {
        r->ctl = CTL_CONTINUE;
        *status = ST_TRUE;
    } else if (IS("true") || IS(":")) {
        *status = ST_TRUE;
    } else if (IS("false")) {
        *status = ST_FALSE;
    } else if (IS("shift")) {
        if (r->pos != NULL && r->pos->ne > 0) {
            size_t by = 1;

            if (fs->n > 1) {
                char *t = cells_text(s, fs->v[1].c, fs->v[1].n);
                int64_t v2;

                if (t == NULL) {
                    free(name);
                    return -1;
                }
                if (parse_int(t, &v2) && v2 >= 0)
                    by = (size_t)v2;
                free(t);
            }
            if (by > r->pos->ne)
                by = r->pos->ne;
            {
                size_t j, rest = r->pos->ne - by;
                field *els = malloc((rest ? rest : 1) * sizeof *els);
                cell *old = r->pos->v;
                size_t *olds = r->pos->start;
                size_t oldn = r->pos->n;

                if (els == NULL) {
                    free(name);
                    return oom(s);
                }
                for (j = 0; j < rest; j++)
                    els[j] = var_elem(r->pos, by + j);
                r->pos->v = NULL;
                r->pos->start = NULL;
                r->pos->n = r->pos->ne = 0;
                s->cells -= oldn;
                if (var_assign(s, r->pos, els, rest, line) != 0) {
                    free(els);
                    free(old);
                    free(olds);
                    free(name);
                    return -1;
                }
                free(els);
                free(old);
                free(olds);
            }
        }
        *status = ST_TRUE;
    } else if (IS("set") || IS("cd") || IS("echo") || IS("printf") || IS("mkdir") ||
               IS("pushd") || IS("popd") || IS("trap") || IS("ulimit") || IS("umask") ||
               IS("wait") || IS("sleep")) {
        *status = ST_ASSUMED;
    } else if (IS("[") || IS("test")) {
        size_t to = fs->n;
        int v;

        if (IS("[")) {
            char *last = cells_text(s, fs->v[fs->n - 1].c, fs->v[fs->n - 1].n);

            if (last == NULL) {
                free(name);
                return -1;
            }
            if (strcmp(last, "]") == 0)
                to--;
            free(last);
        }
        v = eval_test(r, fs, 1, to, line);
        if (v < 0) {
            free(name);
            return -1;
        }
        *status = v;
    } else if (IS("source") || IS(".")) {
        char *t = fs->n > 1 ? cells_text(s, fs->v[1].c, fs->v[1].n) : NULL;

        skipped(s, "source", t != NULL ? t : "", line);
        free(t);
        *status = ST_ASSUMED;
    } else if (IS("read")) {
        for (k = 1; k < fs->n; k++) {
            char *t = cells_text(s, fs->v[k].c, fs->v[k].n);

            if (t == NULL) {
                free(name);
                return -1;
            }
            if (t[0] != '-' && name_start(t[0])) {
                var *v = var_make(s, t, strlen(t), line);
                cell g;
                field f;

                if (v == NULL) {
                    free(t);
                    free(name);
                    return -1;
                }
                memset(&g, 0, sizeof g);
                g.f = CF_GHOST;
                g.taint = taint_add(s, TS_SHELL_COMMAND, "read", 4, line, 0);
                g.line = (uint16_t)line;
                memset(&f, 0, sizeof f);
                f.c = &g;
                f.n = 1;
                if (var_assign(s, v, &f, 1, line) != 0) {
                    free(t);
                    free(name);
                    return -1;
                }
            }
            free(t);
        }
        *status = ST_UNKNOWN;
    } else if (IS("eval")) {
        cbuf all = { 0 };

        for (k = 1; k < fs->n; k++)
            if ((k > 1 && cb_push(s, &all, ' ', 0, 0, (uint16_t)line) != 0) ||
                cb_cat(s, &all, fs->v[k].c, fs->v[k].n, 0, line) != 0) {
                cb_free(&all);
                free(name);
                return -1;
            }
        if (nested(r, all.v, all.n, NULL, s->prefix, s->nprefix, line) != 0) {
            cb_free(&all);
            free(name);
            return -1;
        }
        cb_free(&all);
        *status = ST_ASSUMED;
    } else {
        const func *fn = NULL;
        size_t shell_at = 0, str;

        for (k = 0; k < s->nfuncs; k++)
            if (strcmp(s->funcs[k].name, name) == 0)
                fn = &s->funcs[k];
        free(name);
        name = NULL;
        if (fn != NULL)
            return call_function(r, fn, fs, line, status);
        str = shell_string(s, fs, &shell_at);
        if (s->failed)
            return -1;
        if (str != NPOS) {
            /* bash -c "STRING" $0 $1 ...: STRING is a script, wrapped by
             * the words before the shell (srun ... bash -c). */
            var pos;
            field *pre;
            size_t npre = s->nprefix + shell_at, j;
            int rc;

            memset(&pos, 0, sizeof pos);
            if (fs->n > str + 2 && var_assign(s, &pos, fs->v + str + 2, fs->n - str - 2, line) != 0) {
                var_clear(s, &pos);
                return -1;
            }
            pos.set = true;
            pre = malloc((npre ? npre : 1) * sizeof *pre);
            if (pre == NULL) {
                var_clear(s, &pos);
                return oom(s);
            }
            for (j = 0; j < s->nprefix; j++)
                pre[j] = s->prefix[j];
            for (j = 0; j < shell_at; j++)
                pre[s->nprefix + j] = fs->v[j];
            rc = nested(r, fs->v[str].c, fs->v[str].n, &pos, pre, npre, line);
            free(pre);
            var_clear(s, &pos);
            *status = ST_ASSUMED;
            return rc;
        }
        if (heredoc != NULL) {
            /* sbatch <<EOF / bash <<EOF: the heredoc is the script. */
            char *last = NULL;
            bool script = false;

            for (k = fs->n; k > 0; k--) {
                char *t = cells_text(s, fs->v[k - 1].c, fs->v[k - 1].n);

                if (t == NULL)
                    return -1;
                if (t[0] != '-') {
                    last = t;
                    break;
                }
                free(t);
            }
            if (last != NULL) {
                const char *b = base_name(last);

                script = is_shell(last) || strcmp(b, "sbatch") == 0 || strcmp(b, "qsub") == 0;
            }
            free(last);
            if (script) {
                cbuf body = { 0 };
                int rc;

                if (heredoc->hq) {
                    size_t j;

                    for (j = heredoc->ha; j < heredoc->hb; j++) {
                        if (heredoc->hstrip && (j == heredoc->ha || r->u->s[j - 1] == '\n'))
                            while (j < heredoc->hb && r->u->s[j] == '\t')
                                j++;
                        if (j < heredoc->hb &&
                            cb_push(s, &body, (unsigned char)r->u->s[j], CF_QUOTED, 0, r->u->ln[j]) != 0) {
                            cb_free(&body);
                            return -1;
                        }
                    }
                } else {
                    xstate x;

                    memset(&x, 0, sizeof x);
                    x.r = r;
                    x.mode = XM_JOIN;
                    x.out = &body;
                    if (x_range(&x, heredoc->ha, heredoc->hb, CTX_HD) != 0) {
                        cb_free(&body);
                        return -1;
                    }
                }
                /* sbatch's own words are not a launcher's: the prefix stays */
                rc = nested(r, body.v, body.n, NULL, s->prefix, s->nprefix, line);
                cb_free(&body);
                *status = ST_ASSUMED;
                return rc;
            }
        }
        {
            /* bash other.sh / sbatch job.sh: another file, not read. */
            char *t0 = cells_text(s, fs->v[0].c, fs->v[0].n);

            if (t0 == NULL)
                return -1;
            if ((is_shell(t0) || strcmp(base_name(t0), "sbatch") == 0) && fs->n > 1) {
                char *t1 = cells_text(s, fs->v[fs->n - 1].c, fs->v[fs->n - 1].n);

                if (t1 == NULL) {
                    free(t0);
                    return -1;
                }
                if (strlen(t1) > 3 && strcmp(t1 + strlen(t1) - 3, ".sh") == 0)
                    skipped(s, base_name(t0), t1, line);
                free(t1);
            }
            free(t0);
        }
        *status = ST_ASSUMED;
        return consider(r, fs, line);
    }
#undef IS
    free(name);
    return 0;
}

static bool ends_command(const tok *t)
{
    if (t->type == T_NL || t->type == T_EOF)
        return true;
    if (t->type != T_OP)
        return false;
    return t->op == O_SEMI || t->op == O_AMP || t->op == O_AND || t->op == O_OR ||
           t->op == O_PIPE || t->op == O_PIPEAMP || t->op == O_RP || t->op == O_DSEMI ||
           t->op == O_SEMIAMP || t->op == O_DSEMIAMP || t->op == O_LP;
}

static bool is_redirect(const tok *t)
{
    return t->type == T_OP && t->op >= O_LT;
}

/* Redirections after a compound command: skipped with their targets. */
static void skip_redirects(run *r, const tok **heredoc)
{
    while (is_redirect(cur(r))) {
        if (cur(r)->op == O_HEREDOC && heredoc != NULL)
            *heredoc = cur(r);
        r->i++;
        if (cur(r)->type == T_WORD)
            r->i++;
    }
}

static int p_simple(run *r, int mode, int *status)
{
    sh *s = r->sh;
    size_t start = r->i, cmd_tok = 0;
    bool have_cmd = false, declare = false;
    unsigned line = cur(r)->line;
    const tok *heredoc = NULL;
    fields fs = { 0 };
    int rc = 0;

    *status = ST_TRUE;
    /* Pass 1: find the command word and the end; assignments before the
     * command word are the command's environment only. */
    while (!ends_command(cur(r))) {
        const tok *t = cur(r);

        if (is_redirect(t)) {
            if (t->op == O_HEREDOC)
                heredoc = t;
            r->i++;
            if (cur(r)->type == T_WORD)
                r->i++;
            continue;
        }
        if (t->type == T_DPAREN) {
            r->i++;
            continue;
        }
        if (!have_cmd && is_assignment(r, t)) {
            if (t->type == T_AOPEN) {
                r->i++;
                while (cur(r)->type != T_EOF && !is_op(cur(r), O_RP))
                    r->i++;
                if (is_op(cur(r), O_RP))
                    r->i++;
            } else {
                r->i++;
            }
            continue;
        }
        if (t->type == T_AOPEN) {   /* declare -a A=( ... ) */
            r->i++;
            while (cur(r)->type != T_EOF && !is_op(cur(r), O_RP))
                r->i++;
            if (is_op(cur(r), O_RP))
                r->i++;
            continue;
        }
        if (!have_cmd) {
            have_cmd = true;
            cmd_tok = r->i;
            declare = tok_is(r, t, "export") || tok_is(r, t, "declare") ||
                      tok_is(r, t, "typeset") || tok_is(r, t, "local") ||
                      tok_is(r, t, "readonly");
        }
        r->i++;
    }
    {
        size_t end = r->i;

        if (!have_cmd) {
            /* Assignments only: they stay. */
            r->i = start;
            while (r->i < end) {
                const tok *t = cur(r);

                if (is_assignment(r, t)) {
                    if (do_assign(r, mode) != 0)
                        return -1;
                    continue;
                }
                r->i++;
            }
            r->i = end;
            return 0;
        }
        if (mode != M_RUN) {
            if (declare && mode == M_MAYBE && p_declare(r, M_MAYBE, cmd_tok + 1, end) != 0)
                return -1;
            r->i = end;
            *status = ST_UNKNOWN;
            return 0;
        }
        if (declare) {
            r->i = end;
            *status = ST_TRUE;
            return p_declare(r, M_RUN, cmd_tok + 1, end);
        }
        /* Pass 2: expand the command's words. */
        for (r->i = cmd_tok; r->i < end; r->i++) {
            const tok *t = cur(r);

            if (is_redirect(t)) {
                r->i++;
                continue;
            }
            if (t->type == T_WORD && expand_fields(r, t, &fs) != 0) {
                fields_free(&fs);
                return -1;
            }
        }
        r->i = end;
        (void)s;
        rc = run_simple(r, &fs, cmd_tok, end, heredoc, line, status);
        fields_free(&fs);
        return rc;
    }
}

/* A condition list, then the branch: decided or not. */
static int cond_mode(run *r, int mode, int st, unsigned line, int *branch_mode)
{
    if (mode != M_RUN) {
        *branch_mode = mode;
        return 0;
    }
    if (st == ST_TRUE)
        *branch_mode = M_RUN;
    else if (st == ST_FALSE)
        *branch_mode = M_SKIP;
    else {
        undecided(r, line);
        *branch_mode = M_MAYBE;
    }
    return 0;
}

static int p_if(run *r, int mode, int *status)
{
    bool taken = false, unknown = false;
    int st = ST_TRUE;
    uint16_t save_cond = r->cond;

    *status = ST_TRUE;
    for (;;) {
        unsigned line = cur(r)->line;
        int cst = ST_TRUE, bm, cm = mode;

        r->i++;   /* if / elif */
        if (taken)
            cm = M_SKIP;
        else if (unknown && cm == M_RUN)
            cm = M_MAYBE;
        if (p_list(r, cm, &cst) != 0)
            return -1;
        if (expect_word(r, "then") != 0)
            return -1;
        if (cm == M_RUN) {
            cond_mode(r, cm, cst, line, &bm);
            if (bm == M_MAYBE) {
                unknown = true;
                r->cond = (uint16_t)line;
            }
        } else {
            bm = cm;
        }
        if (p_list(r, bm, &st) != 0)
            return -1;
        if (bm == M_RUN) {
            taken = true;
            *status = st;
        }
        if (r->ctl != CTL_NONE && bm == M_RUN) {
            /* exit / return / break inside the branch: the rest is skipped. */
            mode = M_SKIP;
        }
        skip_nl(r);
        if (tok_is(r, cur(r), "elif"))
            continue;
        if (tok_is(r, cur(r), "else")) {
            int em = taken || mode == M_SKIP ? M_SKIP : unknown ? M_MAYBE : mode;

            r->i++;
            if (p_list(r, em, &st) != 0)
                return -1;
            if (em == M_RUN)
                *status = st;
        }
        if (expect_word(r, "fi") != 0)
            return -1;
        break;
    }
    r->cond = save_cond;
    if (unknown && !taken)
        *status = ST_UNKNOWN;
    return 0;
}

static int p_loop_body(run *r, int mode, int *status)
{
    if (expect_word(r, "do") != 0)
        return -1;
    if (p_list(r, mode, status) != 0)
        return -1;
    return expect_word(r, "done");
}

static int p_while(run *r, int mode, int *status, bool until)
{
    size_t cond_at = r->i + 1;
    unsigned line = cur(r)->line;
    unsigned iter = 0;
    uint16_t save_cond = r->cond;

    *status = ST_TRUE;
    for (;;) {
        int cst = ST_TRUE, st = ST_TRUE, bm;

        r->i = cond_at;
        if (p_list(r, mode, &cst) != 0)
            return -1;
        if (until && (cst == ST_TRUE || cst == ST_FALSE))
            cst = cst == ST_TRUE ? ST_FALSE : ST_TRUE;
        cond_mode(r, mode, cst, line, &bm);
        if (bm == M_MAYBE)
            r->cond = (uint16_t)line;
        if (++iter > 1000 && bm == M_RUN) {
            /* A loop that would not end here (while true; do ...; done):
             * read 1000 times, then left, and said so. */
            skipped(r->sh, "loop", "past 1000 rounds", line);
            bm = M_SKIP;
        }
        if (p_loop_body(r, bm, &st) != 0)
            return -1;
        r->cond = save_cond;
        if (bm != M_RUN)
            return 0;
        if (r->ctl == CTL_BREAK) {
            r->ctl = CTL_NONE;
            return 0;
        }
        if (r->ctl == CTL_CONTINUE)
            r->ctl = CTL_NONE;
        if (r->ctl != CTL_NONE)
            return 0;
    }
}

static int p_for(run *r, int mode, int *status)
{
    sh *s = r->sh;
    unsigned line = cur(r)->line;
    const tok *nt;
    fields items = { 0 };
    size_t body, k;
    bool all_args = false;
    char name[NAME_MAX_LEN];

    *status = ST_TRUE;
    r->i++;
    nt = cur(r);
    if (nt->type == T_DPAREN) {
        /* for ((;;)): not read */
        r->i++;
        if (is_op(cur(r), O_SEMI))
            r->i++;
        skip_nl(r);
        undecided(r, line);
        return p_loop_body(r, mode == M_RUN ? M_MAYBE : mode, status);
    }
    if (nt->type != T_WORD || nt->b - nt->a >= NAME_MAX_LEN)
        return syntax(r, "a loop variable");
    memcpy(name, r->u->s + nt->a, nt->b - nt->a);
    name[nt->b - nt->a] = '\0';
    r->i++;
    skip_nl(r);
    if (tok_is(r, cur(r), "in")) {
        r->i++;
        while (cur(r)->type == T_WORD) {
            if (mode == M_RUN && expand_fields(r, cur(r), &items) != 0) {
                fields_free(&items);
                return -1;
            }
            r->i++;
        }
    } else {
        all_args = true;
    }
    if (is_op(cur(r), O_SEMI))
        r->i++;
    skip_nl(r);
    body = r->i;
    if (mode != M_RUN) {
        fields_free(&items);
        return p_loop_body(r, mode, status);
    }
    if (all_args && r->pos != NULL) {
        for (k = 0; k < r->pos->ne; k++) {
            field f = var_elem(r->pos, k);

            if (fields_add(s, &items, f.c, f.n, (uint16_t)line, 0, false) != 0) {
                fields_free(&items);
                return -1;
            }
        }
    }
    if (items.n == 0) {
        fields_free(&items);
        return p_loop_body(r, M_SKIP, status);
    }
    for (k = 0; k < items.n; k++) {
        var *v = var_make(s, name, strlen(name), line);

        if (v == NULL || var_assign(s, v, &items.v[k], 1, line) != 0) {
            fields_free(&items);
            return -1;
        }
        r->i = body;
        if (p_loop_body(r, M_RUN, status) != 0) {
            fields_free(&items);
            return -1;
        }
        if (r->ctl == CTL_CONTINUE)
            r->ctl = CTL_NONE;
        if (r->ctl == CTL_BREAK) {
            r->ctl = CTL_NONE;
            break;
        }
        if (r->ctl != CTL_NONE)
            break;
    }
    fields_free(&items);
    return 0;   /* the cursor is past "done" */
}

static int p_case(run *r, int mode, int *status)
{
    sh *s = r->sh;
    unsigned line = cur(r)->line;
    const tok *wt;
    cbuf word = { 0 };
    bool matched = false, opaque = false;
    uint16_t save_cond = r->cond;

    *status = ST_TRUE;
    r->i++;
    wt = cur(r);
    if (wt->type != T_WORD)
        return syntax(r, "a word after case");
    if (mode == M_RUN) {
        if (expand(r, wt->a, wt->b, XM_JOIN, &word) != 0) {
            cb_free(&word);
            return -1;
        }
        opaque = cells_opaque(s, word.v, word.n);
    }
    r->i++;
    if (expect_word(r, "in") != 0) {
        cb_free(&word);
        return -1;
    }
    for (;;) {
        int im = M_SKIP, st;
        bool hit = false;

        skip_nl(r);
        if (tok_is(r, cur(r), "esac")) {
            r->i++;
            break;
        }
        if (is_op(cur(r), O_LP))
            r->i++;
        for (;;) {
            const tok *p = cur(r);

            if (p->type != T_WORD) {
                cb_free(&word);
                return syntax(r, "a case pattern");
            }
            if (mode == M_RUN && !matched && !opaque) {
                cbuf pat = { 0 };
                int m;

                if (expand(r, p->a, p->b, XM_JOIN, &pat) != 0) {
                    cb_free(&pat);
                    cb_free(&word);
                    return -1;
                }
                m = glob(s, pat.v, pat.n, word.v, word.n, p->line);
                cb_free(&pat);
                if (m < 0) {
                    cb_free(&word);
                    return -1;
                }
                if (m)
                    hit = true;
            }
            r->i++;
            if (is_op(cur(r), O_PIPE)) {
                r->i++;
                continue;
            }
            if (is_op(cur(r), O_RP)) {
                r->i++;
                break;
            }
            cb_free(&word);
            return syntax(r, "')' after a case pattern");
        }
        if (mode == M_RUN && opaque) {
            im = M_MAYBE;
            r->cond = (uint16_t)line;
        } else if (mode == M_RUN && hit) {
            im = M_RUN;
            matched = true;
        } else if (mode == M_MAYBE) {
            im = M_MAYBE;
        }
        if (p_list(r, im, &st) != 0) {
            cb_free(&word);
            return -1;
        }
        if (im == M_RUN)
            *status = st;
        r->cond = save_cond;
        if (is_op(cur(r), O_DSEMI) || is_op(cur(r), O_SEMIAMP) || is_op(cur(r), O_DSEMIAMP))
            r->i++;
    }
    if (opaque)
        undecided(r, line);
    cb_free(&word);
    return 0;
}

/* name() compound, or function name [()] compound. */
static int p_function(run *r, size_t name_tok)
{
    sh *s = r->sh;
    const tok *nt = &r->u->t[name_tok];
    size_t n = nt->b - nt->a;
    func *fn = NULL;
    size_t k;
    int st;

    skip_nl(r);
    if (n >= NAME_MAX_LEN)
        return fail(s, TS_PROB_INVALID_VALUE, nt->line, "a function name is too long");
    for (k = 0; k < s->nfuncs; k++)
        if (strlen(s->funcs[k].name) == n && memcmp(s->funcs[k].name, r->u->s + nt->a, n) == 0)
            fn = &s->funcs[k];
    if (fn == NULL) {
        if (s->nfuncs >= FUNCS_MAX)
            return fail(s, TS_PROB_IMPORT_TOO_LARGE, nt->line, "more than %u functions", FUNCS_MAX);
        fn = &s->funcs[s->nfuncs++];
    }
    memcpy(fn->name, r->u->s + nt->a, n);
    fn->name[n] = '\0';
    fn->u = r->u;
    fn->body = r->i;
    return p_command(r, M_SKIP, &st);
}

static int p_command(run *r, int mode, int *status)
{
    const tok *t = cur(r);
    const tok *heredoc = NULL;
    int rc;

    if (spend(r->sh, 1, t->line) != 0)
        return -1;
    *status = ST_TRUE;
    if (t->type == T_WORD) {
        if (tok_is(r, t, "if")) {
            rc = p_if(r, mode, status);
        } else if (tok_is(r, t, "while") || tok_is(r, t, "until")) {
            rc = p_while(r, mode, status, tok_is(r, t, "until"));
        } else if (tok_is(r, t, "for")) {
            rc = p_for(r, mode, status);
        } else if (tok_is(r, t, "case")) {
            rc = p_case(r, mode, status);
        } else if (tok_is(r, t, "{")) {
            r->i++;
            rc = p_list(r, mode, status);
            if (rc == 0)
                rc = expect_word(r, "}");
        } else if (tok_is(r, t, "[[")) {
            r->i++;
            rc = p_dbrack(r, mode, status);
        } else if (tok_is(r, t, "function")) {
            size_t nt;

            r->i++;
            nt = r->i;
            if (cur(r)->type != T_WORD)
                return syntax(r, "a function name");
            r->i++;
            if (is_op(cur(r), O_LP) && is_op(&r->u->t[r->i + 1], O_RP))
                r->i += 2;
            return p_function(r, nt);
        } else if (is_op(&r->u->t[r->i + 1], O_LP) && r->i + 2 < r->u->nt &&
                   is_op(&r->u->t[r->i + 2], O_RP)) {
            size_t nt = r->i;

            r->i += 3;
            return p_function(r, nt);
        } else {
            return p_simple(r, mode, status);
        }
        if (rc != 0)
            return rc;
        skip_redirects(r, &heredoc);
        return 0;
    }
    if (is_op(t, O_LP)) {
        /* ( list ): a subshell; its assignments are kept (harmless here). */
        r->i++;
        rc = p_list(r, mode, status);
        if (rc == 0 && !is_op(cur(r), O_RP))
            return syntax(r, "')'");
        r->i++;
        skip_redirects(r, &heredoc);
        return rc;
    }
    if (t->type == T_DPAREN) {
        r->i++;
        if (mode == M_RUN) {
            uint16_t tt = 0;
            bool bad = false;
            cbuf b = { 0 };
            int64_t v = 0;
            char *txt;

            if (expand(r, t->a + 2, t->b - 2, XM_JOIN, &b) != 0) {
                cb_free(&b);
                return -1;
            }
            txt = cells_text(r->sh, b.v, b.n);
            tt = first_taint(b.v, b.n);
            cb_free(&b);
            if (txt == NULL)
                return -1;
            if (tt == 0)
                v = arith_text(r, txt, strlen(txt), t->line, 0, &tt, &bad);
            free(txt);
            *status = bad || tt != 0 ? ST_UNKNOWN : v != 0 ? ST_TRUE : ST_FALSE;
        }
        skip_redirects(r, &heredoc);
        return 0;
    }
    if (t->type == T_AOPEN || is_redirect(t))
        return p_simple(r, mode, status);
    return syntax(r, "a command");
}

static int p_pipeline(run *r, int mode, int *status)
{
    bool neg = false;

    if (tok_is(r, cur(r), "!")) {
        neg = true;
        r->i++;
    }
    for (;;) {
        if (p_command(r, mode, status) != 0)
            return -1;
        if (is_op(cur(r), O_PIPE) || is_op(cur(r), O_PIPEAMP)) {
            r->i++;
            skip_nl(r);
            continue;
        }
        break;
    }
    if (neg)
        *status = *status == ST_TRUE ? ST_FALSE : *status == ST_FALSE ? ST_TRUE : ST_UNKNOWN;
    return 0;
}

static int p_and_or(run *r, int mode, int *status)
{
    uint16_t save_cond = r->cond;

    if (p_pipeline(r, mode, status) != 0)
        return -1;
    while (is_op(cur(r), O_AND) || is_op(cur(r), O_OR)) {
        bool and = cur(r)->op == O_AND;
        unsigned line = cur(r)->line;
        int st = *status, m = mode, rst = ST_TRUE;

        r->i++;
        skip_nl(r);
        if (r->ctl != CTL_NONE)
            m = M_SKIP;
        else if (mode == M_RUN) {
            /* a command not run counts as succeeding here (mkdir ... || exit) */
            bool ok = st == ST_TRUE || st == ST_ASSUMED;

            if (st == ST_UNKNOWN) {
                m = M_MAYBE;
                undecided(r, line);
                r->cond = (uint16_t)line;
            } else {
                m = (and ? ok : !ok) ? M_RUN : M_SKIP;
            }
        }
        if (p_pipeline(r, m, &rst) != 0)
            return -1;
        r->cond = save_cond;
        if (m == M_RUN)
            *status = rst;
        else if (m == M_MAYBE)
            *status = ST_UNKNOWN;
    }
    return 0;
}

static int p_list(run *r, int mode, int *status)
{
    *status = ST_TRUE;
    for (;;) {
        int st;

        while (cur(r)->type == T_NL || is_op(cur(r), O_SEMI) || is_op(cur(r), O_AMP))
            r->i++;
        if (at_stop(r))
            return 0;
        if (p_and_or(r, r->ctl != CTL_NONE ? M_SKIP : mode, &st) != 0)
            return -1;
        if (r->ctl == CTL_NONE || mode != M_RUN)
            *status = st;
        if (!(cur(r)->type == T_NL || is_op(cur(r), O_SEMI) || is_op(cur(r), O_AMP) ||
              at_stop(r)))
            return syntax(r, "a new line or ';'");
    }
}

static int run_unit(sh *s, unit *u, var *pos, field *prefix, size_t nprefix)
{
    run r;
    int st, rc;
    field *save_prefix = s->prefix;
    size_t save_nprefix = s->nprefix, save_funcs = s->nfuncs;

    memset(&r, 0, sizeof r);
    r.sh = s;
    r.u = u;
    r.pos = pos;
    s->prefix = prefix;
    s->nprefix = nprefix;
    rc = p_list(&r, M_RUN, &st);
    if (rc == 0 && cur(&r)->type != T_EOF)
        rc = syntax(&r, "a command");
    s->prefix = save_prefix;
    s->nprefix = save_nprefix;
    s->nfuncs = save_funcs;
    return rc;
}

/* ------------------------------------------------------------------ */
/* The entry point                                                    */

static void sh_free(sh *s)
{
    size_t k;

    for (k = 0; k < s->nvars; k++) {
        free(s->vars[k].v);
        free(s->vars[k].start);
    }
    free(s->vars);
    cand_free(&s->best);
    cand_free(&s->args);
    for (k = 0; k < s->ndir; k++)
        free(s->dir[k].text);
    free(s->dir);
}

static void lines_list(char *buf, size_t size, const uint16_t *lines, size_t n)
{
    size_t k, o = 0;

    buf[0] = '\0';
    for (k = 0; k < n && o + 12 < size; k++) {
        int len = snprintf(buf + o, size - o, "%s%u", k ? ", " : "", (unsigned)lines[k]);

        if (len < 0)
            break;
        o += (size_t)len;
    }
}

int ts_shell_read(const char *text, size_t len, const char *ptr, ts_shell_cmd *cmd,
                  ts_api_notes *notes, ts_api_err *err)
{
    sh s;
    unit u;
    size_t k;
    unsigned line = 1;
    int rc;

    memset(cmd, 0, sizeof *cmd);
    memset(&s, 0, sizeof s);
    memset(&u, 0, sizeof u);
    s.ptr = ptr;
    s.member = ptr[0] == '/' ? ptr + 1 : ptr;
    s.err = err;
    if (len > TS_SHELL_TEXT_MAX)
        return fail(&s, TS_PROB_IMPORT_TOO_LARGE, 0, "the text is %zu bytes, more than %u", len,
                    TS_SHELL_TEXT_MAX);
    u.s = malloc(len + 1);
    u.ln = malloc((len + 1) * sizeof *u.ln);
    if (u.s == NULL || u.ln == NULL) {
        unit_free(&u);
        return oom(&s);
    }
    for (k = 0; k < len; k++) {
        unsigned char c = (unsigned char)text[k];

        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
            unit_free(&u);
            return fail(&s, TS_PROB_INVALID_VALUE, line, "control character U+%04X in the text", c);
        }
        u.s[k] = (char)c;
        u.ln[k] = (uint16_t)line;
        if (c == '\n')
            line++;
    }
    u.s[len] = '\0';
    u.ln[len] = (uint16_t)line;
    u.n = len;
    rc = lex(&s, &u);
    if (rc == 0)
        rc = run_unit(&s, &u, NULL, NULL, 0);
    unit_free(&u);
    if (rc != 0 || s.failed) {
        sh_free(&s);
        return -1;
    }
    /* The answer: the training command, else the argument list. */
    if (s.best.n > 0) {
        cmd->w = s.best.w;
        cmd->n = s.best.n;
        cmd->entry = s.best.entry;
        cmd->line = s.best.line;
        memset(&s.best, 0, sizeof s.best);
        ts_import_note(notes, "%s: the training command is the one at line %u (%s)", s.member,
                       cmd->line, cmd->w[cmd->entry].text);
        if (s.npy > 1) {
            char list[64];

            lines_list(list, sizeof list, s.py_lines,
                       s.npy < sizeof s.py_lines / sizeof s.py_lines[0] ? s.npy
                       : sizeof s.py_lines / sizeof s.py_lines[0]);
            ts_import_note(notes, "%s: %zu commands run a Python script (lines %s); the one "
                           "with the most --flags is read", s.member, s.npy, list);
        }
    } else if (s.args.n > 0) {
        cmd->w = s.args.w;
        cmd->n = s.args.n;
        cmd->entry = s.args.n;
        cmd->line = s.args.line;
        memset(&s.args, 0, sizeof s.args);
    }
    cmd->dir = s.dir;
    cmd->ndir = s.ndir;
    s.dir = NULL;
    s.ndir = 0;
    if (s.nundecided > 0) {
        char list[96];

        lines_list(list, sizeof list, s.undecided, s.nundecided);
        ts_import_note(notes, "%s: conditions at line%s %s depend on files, commands or "
                       "values not known here; the branches were not read", s.member,
                       s.nundecided > 1 ? "s" : "", list);
    }
    if (s.skipped[0] != '\0')
        ts_import_note(notes, "%s: other files are not read: %s", s.member, s.skipped);
    if (cmd->n == 0 && s.exit_line != 0)
        ts_import_note(notes, "%s: the script exits at line %u, before any training command",
                       s.member, s.exit_line);
    sh_free(&s);
    return cmd->n > 0 ? 1 : 0;
}

void ts_shell_free(ts_shell_cmd *cmd)
{
    size_t k;

    for (k = 0; k < cmd->n; k++)
        free(cmd->w[k].text);
    free(cmd->w);
    for (k = 0; k < cmd->ndir; k++)
        free(cmd->dir[k].text);
    free(cmd->dir);
    memset(cmd, 0, sizeof *cmd);
}

void ts_shell_why_text(const ts_shell_word *w, char *buf, size_t size)
{
    const char *n = w->why_name;
    int p = ts_utf8_prec(n, 40);

    switch (w->why) {
    case TS_SHELL_UNSET:
        snprintf(buf, size, "$%.*s (line %u), which the script never assigns (assign it, or "
                 "give a default: ${%.*s:-value})", p, n, w->why_line, p, n);
        break;
    case TS_SHELL_MAYBE:
        snprintf(buf, size, "$%.*s, assigned only at line %u in a branch of the condition at "
                 "line %u, which is not evaluated here", p, n, w->why_line, w->why_cond);
        break;
    case TS_SHELL_ARG:
        snprintf(buf, size, "$%.*s (line %u), a script argument, and none is given here "
                 "(write the value, or ${%.*s:-value})", p, n, w->why_line, p, n);
        break;
    case TS_SHELL_COMMAND:
        snprintf(buf, size, "the output of %.*s (line %u), a command that is not run here",
                 p, n, w->why_line);
        break;
    case TS_SHELL_UNSUPPORTED:
        snprintf(buf, size, "%.*s (line %u), an expansion that is not evaluated here", p, n,
                 w->why_line);
        break;
    case TS_SHELL_KNOWN:
    default:
        snprintf(buf, size, "'%.*s'", ts_utf8_prec(w->text, 40), w->text);
        break;
    }
    ts_utf8_trim(buf, strlen(buf));
}
