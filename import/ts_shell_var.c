/*
 * ts_shell_var.c - variables and the assignments that set them
 * (NAME=, NAME+=, NAME[i]=, NAME=( ... ), declare / export / local).
 * Part of the launch-script reader (ts_shell.h); the stages and their
 * shared types are in ts_shell_int.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ts_shell_int.h"

/* ------------------------------------------------------------------ */
/* Variables                                                          */

var *sh_var_find(sh *s, const char *name, size_t len)
{
    size_t k;

    for (k = 0; k < s->nvars; k++)
        if (strlen(s->vars[k].name) == len && memcmp(s->vars[k].name, name, len) == 0)
            return &s->vars[k];
    return NULL;
}

var *sh_var_make(sh *s, const char *name, size_t len, unsigned line)
{
    var *v = sh_var_find(s, name, len);

    if (v != NULL)
        return v;
    if (len >= NAME_MAX_LEN) {
        sh_fail(s, TS_PROB_INVALID_VALUE, line, "a variable name is longer than %d characters",
                NAME_MAX_LEN - 1);
        return NULL;
    }
    if (s->nvars == s->vcap) {
        size_t nc = s->vcap ? s->vcap * 2 : 32;
        var *nv;

        if (s->nvars >= TS_SHELL_VARS_MAX) {
            sh_fail(s, TS_PROB_IMPORT_TOO_LARGE, line, "the script assigns more than %u variables",
                    TS_SHELL_VARS_MAX);
            return NULL;
        }
        nv = realloc(s->vars, nc * sizeof *nv);
        if (nv == NULL) {
            sh_oom(s);
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

void sh_var_clear(sh *s, var *v)
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
int sh_var_assign(sh *s, var *v, const field *els, size_t ne, unsigned line)
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
        return sh_fail(s, TS_PROB_IMPORT_TOO_LARGE, line, "a value is longer than %u characters",
                       TS_SHELL_VALUE_MAX);
    if (s->cells - v->n + total > TS_SHELL_CELLS_MAX)
        return sh_fail(s, TS_PROB_IMPORT_TOO_LARGE, line,
                       "the variables hold more than %u characters", TS_SHELL_CELLS_MAX);
    nv = malloc((total ? total : 1) * sizeof *nv);
    st = malloc((ne + 1) * sizeof *st);
    if (nv == NULL || st == NULL) {
        free(nv);
        free(st);
        return sh_oom(s);
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
    sh_var_clear(s, v);
    v->v = nv;
    v->n = total;
    v->start = st;
    v->ne = ne;
    v->set = true;
    v->maybe = false;
    s->cells += total;
    return sh_spend(s, total, line);
}

/* Replace v's value by els, which may be views of v's own cells: they are
 * copied before the old cells are freed. */
int sh_var_replace(sh *s, var *v, const field *els, size_t ne, unsigned line)
{
    cell *old = v->v;
    size_t *olds = v->start;
    int rc;

    s->cells -= v->n;
    v->v = NULL;
    v->start = NULL;
    v->n = v->ne = 0;
    rc = sh_var_assign(s, v, els, ne, line);
    free(old);
    free(olds);
    return rc;
}

/* Element k of v as a field view (no copy). */
field sh_var_elem(const var *v, size_t k)
{
    field f;

    memset(&f, 0, sizeof f);
    if (k < v->ne) {
        f.c = v->v + v->start[k];
        f.n = v->start[k + 1] - v->start[k];
    }
    return f;
}

/* Maybe mode: an assignment is remembered as made only in a branch. */
static void maybe_assign(run *r, const tok *t)
{
    const char *w = r->u->s + t->a;
    size_t n = 0;
    var *v;

    while (n < t->b - t->a && sh_name_char(w[n]))
        n++;
    if (n == 0 || !sh_name_start(w[0]))
        return;
    v = sh_var_find(r->sh, w, n);
    if (v != NULL && v->set)
        return;
    v = sh_var_make(r->sh, w, n, t->line);
    if (v == NULL)
        return;
    if (!v->maybe) {
        v->maybe = true;
        v->maybe_line = t->line;
        v->maybe_cond = r->cond;
    }
}

/* A word that is an assignment: NAME=..., NAME+=..., NAME[i]=... */
bool sh_is_assignment(const run *r, const tok *t)
{
    const char *w = r->u->s + t->a;
    size_t n = t->b - t->a, k = 0;

    if (t->type == T_AOPEN)
        return true;
    if (t->type != T_WORD || n < 2 || !sh_name_start(w[0]))
        return false;
    while (k < n && sh_name_char(w[k]))
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

/* The parts of an assignment word NAME[IDX]+=VALUE. */
typedef struct aword {
    size_t nl;     /* NAME is w[0 .. nl) */
    size_t k;      /* w[k] is the '=' */
    size_t ia, il; /* IDX is w[ia .. ia + il) */
    bool has_idx;
    bool append; /* += */
} aword;

static void aword_parse(const char *w, size_t n, aword *a)
{
    size_t k = 0;

    memset(a, 0, sizeof *a);
    while (k < n && sh_name_char(w[k]))
        k++;
    a->nl = k;
    if (k < n && w[k] == '[') {
        a->ia = k + 1;
        while (k < n && w[k] != ']')
            k++;
        a->il = k - a->ia;
        a->has_idx = true;
        k++;
    }
    if (k < n && w[k] == '+') {
        a->append = true;
        k++;
    }
    a->k = k;
}

/* The words of NAME=( ... ) up to the ')', expanded into fs when run. */
static int array_words(run *r, int mode, fields *fs)
{
    for (;;) {
        const tok *e = sh_cur(r);

        if (e->type == T_NL) {
            r->i++;
            continue;
        }
        if (sh_is_op(e, O_RP)) {
            r->i++;
            return 0;
        }
        if (e->type != T_WORD)
            return sh_syntax(r, "')' closing the array");
        if (mode == M_RUN && sh_expand_fields(r, e, fs) != 0)
            return -1;
        r->i++;
    }
}

/* NAME+=( ... ) on an array that has elements: fs after them. */
static int append_elems(sh *s, var *v, const fields *fs, unsigned line)
{
    size_t total = v->ne + fs->n, j;
    field *all = malloc(total * sizeof *all);
    int rc;

    if (all == NULL)
        return sh_oom(s);
    for (j = 0; j < v->ne; j++)
        all[j] = sh_var_elem(v, j);
    for (j = 0; j < fs->n; j++)
        all[v->ne + j] = fs->v[j];
    rc = sh_var_replace(s, v, all, total, line);
    free(all);
    return rc;
}

/* NAME=( ... ) or NAME+=( ... ); the cursor is after "NAME=(". */
static int assign_array(run *r, int mode, const tok *t, const aword *a)
{
    sh *s = r->sh;
    fields fs = { 0 };
    var *v;
    int rc;

    if (array_words(r, mode, &fs) != 0) {
        sh_fields_free(&fs);
        return -1;
    }
    if (mode == M_MAYBE)
        maybe_assign(r, t);
    if (mode != M_RUN) {
        sh_fields_free(&fs);
        return 0;
    }
    v = sh_var_make(s, r->u->s + t->a, a->nl, t->line);
    if (v == NULL)
        rc = -1;
    else if (a->append && v->set && v->ne > 0)
        rc = append_elems(s, v, &fs, t->line);
    else
        rc = sh_var_assign(s, v, fs.v, fs.n, t->line);
    sh_fields_free(&fs);
    return rc;
}

/* NAME[IDX]=value: element IDX (appended when IDX is the next one). */
static int assign_element(run *r, var *v, const tok *t, const aword *a, const cbuf *val)
{
    sh *s = r->sh;
    uint16_t tt = 0;
    bool bad = false;
    char ib[64];
    int64_t idx;
    size_t ne, j, total;
    field *all;
    int rc;

    if (a->il >= sizeof ib)
        return sh_fail(s, TS_PROB_INVALID_VALUE, t->line, "array index too long");
    memcpy(ib, r->u->s + t->a + a->ia, a->il);
    ib[a->il] = '\0';
    idx = sh_arith_text(r, ib, a->il, t->line, 0, &tt, &bad);
    if (bad || tt != 0 || idx < 0 || idx > 4096)
        return 0; /* an index not known: the element is not kept */
    ne = v->set ? v->ne : 0;
    total = ne > (size_t)idx ? ne : (size_t)idx + 1;
    all = calloc(total, sizeof *all);
    if (all == NULL)
        return sh_oom(s);
    if (a->append && (size_t)idx < ne) {
        free(all);
        return sh_fail(s, TS_PROB_INVALID_VALUE, t->line, "A[i]+= is not read");
    }
    for (j = 0; j < ne; j++)
        all[j] = sh_var_elem(v, j);
    all[idx].c = val->v;
    all[idx].n = val->n;
    rc = sh_var_replace(s, v, all, total, t->line);
    free(all);
    return rc;
}

/* NAME=value, or NAME+=value (appended to element 0). */
static int assign_scalar(sh *s, var *v, bool append, cbuf *val, unsigned line)
{
    field f;

    if (append && v->set && v->ne > 0) {
        cbuf joined = { 0 };
        field e0 = sh_var_elem(v, 0);

        if (sh_cb_cat(s, &joined, e0.c, e0.n, 0, line) != 0 ||
            sh_cb_cat(s, &joined, val->v, val->n, 0, line) != 0) {
            sh_cb_free(&joined);
            return -1;
        }
        sh_cb_free(val);
        *val = joined;
    }
    memset(&f, 0, sizeof f);
    f.c = val->v;
    f.n = val->n;
    return sh_var_assign(s, v, &f, 1, line);
}

/* Run one assignment word (or T_AOPEN ... ')'); the cursor moves past it. */
int sh_do_assign(run *r, int mode)
{
    sh *s = r->sh;
    const tok *t = sh_cur(r);
    cbuf val = { 0 };
    aword a;
    var *v;
    int rc;

    aword_parse(r->u->s + t->a, t->b - t->a, &a);
    r->i++;
    if (t->type == T_AOPEN)
        return assign_array(r, mode, t, &a);
    if (mode == M_MAYBE)
        maybe_assign(r, t);
    if (mode != M_RUN)
        return 0;
    if (sh_expand(r, t->a + (uint32_t)a.k + 1, t->b, XM_JOIN, &val) != 0) {
        sh_cb_free(&val);
        return -1;
    }
    v = sh_var_make(s, r->u->s + t->a, a.nl, t->line);
    if (v == NULL)
        rc = -1;
    else if (a.has_idx)
        rc = assign_element(r, v, t, &a, &val);
    else
        rc = assign_scalar(s, v, a.append, &val, t->line);
    sh_cb_free(&val);
    return rc;
}

/* The assignment words among tokens [start, end): a line of assignments,
 * or the operands of export / declare / local / readonly / typeset.  The
 * cursor ends past end. */
int sh_p_declare(run *r, int mode, size_t start, size_t end)
{
    size_t save = r->i;

    r->i = start;
    while (r->i < end) {
        const tok *t = sh_cur(r);

        if (sh_is_assignment(r, t)) {
            if (sh_do_assign(r, mode) != 0)
                return -1;
            continue;
        }
        r->i++;
    }
    r->i = save > end ? save : end;
    return 0;
}
