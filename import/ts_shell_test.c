/*
 * ts_shell_test.c - conditions: test, [ ] and [[ ]] with string,
 * pattern and integer comparisons, in three-valued logic (true, false,
 * not known here).
 * Part of the launch-script reader (ts_shell.h); the stages and their
 * shared types are in ts_shell_int.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ts_shell_int.h"

/* ---- tests: [ ], test, [[ ]] ---- */

enum { TI_WORD = 0, TI_AND, TI_OR, TI_LP, TI_RP, TI_LT, TI_GT };

typedef struct titem {
    int kind;
    cbuf w;      /* TI_WORD: the cells (pattern flags kept) */
    char *text;  /* TI_WORD: its text */
    bool opaque; /* depends on a value not known */
} titem;

typedef struct tparse {
    run *r;
    titem *it;
    size_t n, i;
    bool dbl; /* [[ ]] (else [ ] / test) */
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

static int t_logic(tparse *tp, bool or);

bool sh_parse_int(const char *t, int64_t *out)
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
    if (sh_parse_int(x->text, v))
        return 0;
    if (tp->dbl) {
        uint16_t t = 0;
        bool bad = false;

        *v = sh_arith_text(tp->r, x->text, strlen(x->text), tp->line, 0, &t, &bad);
        if (!bad && t == 0)
            return 0;
    }
    return -1;
}

/* a o b, both words: string, pattern ([[ == ]]) or integer comparison. */
static int t_compare(tparse *tp, const titem *a, const char *o, const titem *b)
{
    int64_t x, y;
    bool r2;

    if (a->opaque || b->opaque)
        return ST_UNKNOWN;
    if (strcmp(o, "=") == 0 || strcmp(o, "==") == 0 || strcmp(o, "!=") == 0) {
        int m;

        if (tp->dbl) {
            m = sh_glob(tp->r->sh, b->w.v, b->w.n, a->w.v, a->w.n, tp->line);
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
    if (o[0] != '-' || o[1] == 'n' || o[1] == 'o' || strcmp(o, "-ef") == 0)
        return ST_UNKNOWN; /* -nt, -ot, -ef, =~ */
    if (t_int(tp, a, &x) != 0 || t_int(tp, b, &y) != 0)
        return ST_UNKNOWN;
    r2 = strcmp(o, "-eq") == 0   ? x == y
         : strcmp(o, "-ne") == 0 ? x != y
         : strcmp(o, "-lt") == 0 ? x < y
         : strcmp(o, "-le") == 0 ? x <= y
         : strcmp(o, "-gt") == 0 ? x > y
                                 : x >= y;
    return r2 ? ST_TRUE : ST_FALSE;
}

/* a op b at tp->i: true when there is one (*v its status, -1 on error). */
static bool t_binary(tparse *tp, int *v)
{
    static const char *const bin[] = { "=",   "==",  "!=",  "<",   ">",   "-eq", "-ne", "-lt",
                                       "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "=~",  NULL };
    const titem *it = tp->it;
    size_t i = tp->i;
    const titem *op;
    const char *const *w;
    bool isbin;

    if (i + 1 >= tp->n)
        return false;
    op = &it[i + 1];
    isbin = op->kind == TI_LT || op->kind == TI_GT;
    if (op->kind == TI_WORD)
        for (w = bin; *w != NULL; w++)
            if (strcmp(op->text, *w) == 0)
                isbin = true;
    if (!isbin || i + 2 >= tp->n || it[i].kind != TI_WORD || it[i + 2].kind != TI_WORD)
        return false;
    tp->i += 3;
    *v = t_compare(tp, &it[i],
                   op->kind == TI_LT   ? "<"
                   : op->kind == TI_GT ? ">"
                                       : op->text,
                   &it[i + 2]);
    return true;
}

/* -z w, -n w, -v NAME, or a test on a file, a terminal or an option
 * (not known here) at tp->i: true when there is one (*v its status). */
static bool t_unary(tparse *tp, int *v)
{
    static const char *const unary_unknown[] = { "-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h",
                                                 "-k", "-p", "-r", "-s", "-t", "-u", "-w", "-x",
                                                 "-G", "-L", "-N", "-O", "-S", "-o", NULL };
    const titem *it = tp->it;
    size_t i = tp->i;
    const char *o;
    const char *const *w;

    if (it[i].kind != TI_WORD || i + 1 >= tp->n || it[i + 1].kind != TI_WORD)
        return false;
    o = it[i].text;
    if (strcmp(o, "-z") == 0 || strcmp(o, "-n") == 0) {
        tp->i += 2;
        if (it[i + 1].opaque)
            *v = ST_UNKNOWN;
        else
            *v = (it[i + 1].text[0] == '\0') == (o[1] == 'z') ? ST_TRUE : ST_FALSE;
        return true;
    }
    if (strcmp(o, "-v") == 0) {
        const var *vr = sh_var_find(tp->r->sh, it[i + 1].text, strlen(it[i + 1].text));

        tp->i += 2;
        if (vr != NULL && vr->maybe && !vr->set)
            *v = ST_UNKNOWN;
        else
            *v = vr != NULL && vr->set ? ST_TRUE : ST_FALSE;
        return true;
    }
    for (w = unary_unknown; *w != NULL; w++)
        if (strcmp(o, *w) == 0) {
            tp->i += 2;
            *v = ST_UNKNOWN;
            return true;
        }
    return false;
}

static int t_primary(tparse *tp)
{
    const titem *it = tp->it;
    size_t i = tp->i;
    int v;

    if (sh_spend(tp->r->sh, 1, tp->line) != 0)
        return -1;
    if (i >= tp->n)
        return ST_UNKNOWN;
    if (it[i].kind == TI_LP || t_word(tp, i, "(")) {
        tp->i++;
        v = t_logic(tp, true);
        if (v < 0)
            return v;
        if (tp->i < tp->n && (it[tp->i].kind == TI_RP || t_word(tp, tp->i, ")")))
            tp->i++;
        return v;
    }
    if (t_binary(tp, &v) || t_unary(tp, &v))
        return v;
    tp->i++;
    if (it[i].kind != TI_WORD || it[i].opaque)
        return ST_UNKNOWN;
    return it[i].text[0] != '\0' ? ST_TRUE : ST_FALSE;
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

/* -a / && (and) or -o / || (or) over three values: one side false (and)
 * or true (or) decides; otherwise both sides must be known. */
static int t_logic(tparse *tp, bool or)
{
    int decides = or ? ST_TRUE : ST_FALSE, other = or ? ST_FALSE : ST_TRUE;
    int v = or ? t_logic(tp, false) : t_not(tp);

    while (v >= 0 && tp->i < tp->n &&
           (tp->dbl ? tp->it[tp->i].kind == (or ? TI_OR : TI_AND)
                    : t_word(tp, tp->i, or ? "-o" : "-a"))) {
        int w;

        tp->i++;
        w = or ? t_logic(tp, false) : t_not(tp);
        if (w < 0)
            return w;
        v = (v == decides || w == decides) ? decides
            : (v == other && w == other)   ? other
                                           : ST_UNKNOWN;
    }
    return v;
}

static void titems_free(titem *it, size_t n)
{
    size_t k;

    for (k = 0; k < n; k++) {
        sh_cb_free(&it[k].w);
        free(it[k].text);
    }
    free(it);
}

static int titem_word(sh *s, titem *it, const cell *c, size_t n, unsigned line)
{
    memset(it, 0, sizeof *it);
    it->kind = TI_WORD;
    if (sh_cb_cat(s, &it->w, c, n, 0, line) != 0)
        return -1;
    {
        size_t k;

        /* keep the quoting flag for patterns */
        for (k = 0; k < n; k++)
            it->w.v[k].f = c[k].f;
    }
    it->text = sh_cells_text(s, c, n);
    it->opaque = sh_cells_opaque(s, c, n);
    return it->text == NULL ? -1 : 0;
}

/* [ ... ] or test ...: fs[from..to) are the operands. */
int sh_eval_test(run *r, const fields *fs, size_t from, size_t to, unsigned line)
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
        return sh_oom(r->sh);
    for (k = 0; k < tp.n; k++)
        if (titem_word(r->sh, &tp.it[k], fs->v[from + k].c, fs->v[from + k].n, line) != 0) {
            titems_free(tp.it, tp.n);
            return -1;
        }
    v = tp.n == 0 ? ST_FALSE : t_logic(&tp, true);
    if (v >= 0 && tp.i < tp.n)
        v = ST_UNKNOWN;
    titems_free(tp.it, tp.n);
    return v;
}

/* One token of [[ ... ]] as a test item: a word is expanded when run. */
static int dbrack_item(run *r, int mode, const tok *t, titem *it)
{
    memset(it, 0, sizeof *it);
    if (t->type == T_OP) {
        it->kind = t->op == O_AND  ? TI_AND
                   : t->op == O_OR ? TI_OR
                   : t->op == O_LP ? TI_LP
                   : t->op == O_RP ? TI_RP
                   : t->op == O_LT ? TI_LT
                   : t->op == O_GT ? TI_GT
                                   : -1;
        return it->kind < 0 ? sh_syntax(r, "]]") : 0;
    }
    if (t->type != T_WORD)
        return sh_syntax(r, "]]");
    if (mode == M_RUN) {
        cbuf b = { 0 };
        int rc = sh_expand(r, t->a, t->b, XM_JOIN, &b);

        if (rc == 0)
            rc = titem_word(r->sh, it, b.v, b.n, t->line);
        sh_cb_free(&b);
        return rc;
    }
    it->kind = TI_WORD;
    it->text = calloc(1, 1);
    return it->text == NULL ? sh_oom(r->sh) : 0;
}

/* Room for one more item of [[ ... ]]. */
static int dbrack_grow(tparse *tp, size_t *cap)
{
    size_t nc = *cap ? *cap * 2 : 8;
    titem *ni;

    if (nc > 512)
        return sh_fail(tp->r->sh, TS_PROB_IMPORT_TOO_LARGE, tp->line, "a [[ test ]] is too long");
    ni = realloc(tp->it, nc * sizeof *ni);
    if (ni == NULL)
        return sh_oom(tp->r->sh);
    tp->it = ni;
    *cap = nc;
    return 0;
}

/* [[ ... ]]: the cursor is after "[[". */
int sh_p_dbrack(run *r, int mode, int *status)
{
    tparse tp;
    size_t cap = 0;
    int v = ST_UNKNOWN;

    memset(&tp, 0, sizeof tp);
    tp.r = r;
    tp.dbl = true;
    tp.line = sh_cur(r)->line;
    for (;;) {
        const tok *t = sh_cur(r);

        if (t->type == T_EOF || t->type == T_NL) {
            sh_syntax(r, "]]");
            goto fail;
        }
        if (sh_tok_is(r, t, "]]")) {
            r->i++;
            break;
        }
        if (tp.n == cap && dbrack_grow(&tp, &cap) != 0)
            goto fail;
        /* counted even when it fails: it may hold cells to free */
        if (dbrack_item(r, mode, t, &tp.it[tp.n++]) != 0)
            goto fail;
        r->i++;
    }
    if (mode == M_RUN) {
        v = tp.n == 0 ? ST_FALSE : t_logic(&tp, true);
        if (v >= 0 && tp.i < tp.n)
            v = ST_UNKNOWN;
    }
    titems_free(tp.it, tp.n);
    if (v < 0)
        return -1;
    *status = v;
    return 0;
fail:
    titems_free(tp.it, tp.n);
    return -1;
}
