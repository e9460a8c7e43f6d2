/*
 * ts_shell_param.c - parameter expansion: $NAME, ${NAME...} with its
 * operators (:-, :=, :+, :?, #, %, [i], [@]) and the special parameters.
 * Part of the launch-script reader (ts_shell.h); the stages and their
 * shared types are in ts_shell_int.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_shell_int.h"

/* A parameter's value: the elements it has (a view, not owned).  state:
 * 1 set, 0 unset (*taint says why, 0 when plainly unset and harmless:
 * $@ of the script). */
typedef struct pval {
    int state;
    field one; /* a single computed element (owned text buffer) */
    cell onebuf[24];
    const var *v; /* the variable, for its elements */
    size_t idx;   /* element, or NPOS for all */
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
            tmp[0] = sh_var_elem(p->v, p->idx);
            *els = tmp;
            *ne = 1;
        } else {
            *els = NULL;
            *ne = 0;
        }
        return;
    }
    for (k = 0; k < p->v->ne && k < cap; k++)
        tmp[k] = sh_var_elem(p->v, k);
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

/* $@ $* $# $? $- $$ $!: true when name is one of them (p set). */
static bool lookup_special(run *r, const char *name, size_t nlen, unsigned line, pval *p)
{
    char b[24];

    if (nlen != 1)
        return false;
    switch (name[0]) {
    case '@':
    case '*':
        if (r->pos == NULL) {
            p->state = 2; /* the script's: no elements, nothing unknown */
            return true;
        }
        p->state = 1;
        p->v = r->pos;
        p->idx = NPOS;
        return true;
    case '#':
        snprintf(b, sizeof b, "%zu", r->pos != NULL ? r->pos->ne : (size_t)0);
        pval_small(p, b, line);
        return true;
    case '?':
        pval_small(p, "0", line);
        return true;
    case '-':
        pval_small(p, "", line);
        return true;
    case '$':
    case '!':
        p->state = 0;
        p->taint =
            sh_taint_add(r->sh, TS_SHELL_UNSUPPORTED, name[0] == '$' ? "$$" : "$!", 2, line, 0);
        return true;
    default:
        return false;
    }
}

/* $0, $1, ...: a function's or bash -c's arguments; the script's are
 * unknown (none is given). */
static void lookup_arg(run *r, const char *name, size_t nlen, unsigned line, pval *p)
{
    /* Only the name's own digits: unbraced $12 is ${1} then "2" (bash),
     * and the text goes on past nlen.  Saturates: no script has 2^32
     * arguments. */
    unsigned long n = 0;

    for (size_t i = 0; i < nlen && name[i] >= '0' && name[i] <= '9'; i++)
        n = n > 100000000ul ? n : n * 10 + (unsigned long)(name[i] - '0');

    if (r->pos != NULL && n >= 1 && n <= r->pos->ne) {
        p->state = 1;
        p->v = r->pos;
        p->idx = n - 1;
        return;
    }
    if (r->pos != NULL && n == 0) {
        pval_small(p, "sh", line);
        return;
    }
    p->state = 0;
    p->taint = r->pos != NULL ? 0 : sh_taint_add(r->sh, TS_SHELL_ARG, name, nlen, line, 0);
    if (r->pos != NULL)
        p->state = 2;
}

/* The element of v that index idx[0 .. ilen) names (an arithmetic text,
 * or "@" / "*" for all). */
static void lookup_index(run *r, const var *v, const char *name, size_t nlen, const char *idx,
                         size_t ilen, unsigned line, pval *p)
{
    sh *s = r->sh;
    uint16_t t = 0;
    bool bad = false;
    int64_t k;

    if (idx == NULL) {
        p->idx = 0;
        return;
    }
    if (ilen == 1 && (idx[0] == '@' || idx[0] == '*')) {
        p->idx = NPOS;
        return;
    }
    k = sh_arith_text(r, idx, ilen, line, 0, &t, &bad);
    if (bad || t != 0 || k < 0) {
        p->state = 0;
        p->taint = t != 0 ? t : sh_taint_add(s, TS_SHELL_UNSUPPORTED, name, nlen, line, 0);
        return;
    }
    p->idx = (size_t)k;
    if (p->idx >= v->ne) {
        p->state = 0;
        p->taint = sh_taint_add(s, TS_SHELL_UNSET, name, nlen, line, 0);
    }
}

/* A variable: unset ones are unknown, and say whether a branch not read
 * assigns them. */
static void lookup_var(run *r, const char *name, size_t nlen, const char *idx, size_t ilen,
                       unsigned line, pval *p)
{
    sh *s = r->sh;
    var *v = sh_var_find(s, name, nlen);

    if (v == NULL || !v->set) {
        char full[NAME_MAX_LEN + 24];
        size_t fl = nlen;

        memcpy(full, name, nlen < NAME_MAX_LEN ? nlen : NAME_MAX_LEN);
        if (fl > NAME_MAX_LEN)
            fl = NAME_MAX_LEN;
        p->state = 0;
        p->taint = v != NULL && v->maybe
                       ? sh_taint_add(s, TS_SHELL_MAYBE, full, fl, v->maybe_line, v->maybe_cond)
                       : sh_taint_add(s, TS_SHELL_UNSET, full, fl, line, 0);
        return;
    }
    p->state = 1;
    p->v = v;
    lookup_index(r, v, name, nlen, idx, ilen, line, p);
}

/* Look a parameter up: name[0..nlen) with index spec (NULL none, "@",
 * "*" or an arithmetic text). */
static int lookup(xstate *x, const char *name, size_t nlen, const char *idx, size_t ilen,
                  unsigned line, pval *p)
{
    memset(p, 0, sizeof *p);
    p->idx = 0;
    if (lookup_special(x->r, name, nlen, line, p))
        return 0;
    if (name[0] >= '0' && name[0] <= '9')
        lookup_arg(x->r, name, nlen, line, p);
    else
        lookup_var(x->r, name, nlen, idx, ilen, line, p);
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
            field f = sh_var_elem(p->v, k);

            if (sh_real_len(f.c, f.n) > 0)
                return false;
        }
        return true;
    }
    pval_elems(p, tmp, 1, &els, &ne);
    return ne == 0 || sh_real_len(els[0].c, els[0].n) == 0;
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

    if (p->state == 2) { /* "$@" of a script without arguments */
        if (ctx != CTX_UNQ && !star)
            x->atzero = true;
        return 0;
    }
    if (p->state != 1) {
        if (p->taint == 0)
            return 0;
        return sh_cb_push(x->r->sh, x->out, 0, CF_GHOST, p->taint, (uint16_t)line);
    }
    if (!at || p->v->ne == 0)
        pval_elems(p, one, 1, &els, &ne);
    else {
        tmp = malloc(p->v->ne * sizeof *tmp);
        if (tmp == NULL)
            return sh_oom(x->r->sh);
        pval_elems(p, tmp, p->v->ne, &els, &ne);
    }
    rc = sh_push_elems(x, els, ne, at, star, ctx, line);
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
        int m = suffix ? sh_glob(s, pat->v, pat->n, f->c + cut, n - cut, line)
                       : sh_glob(s, pat->v, pat->n, f->c, cut, line);

        if (m < 0)
            return -1;
        if (m) {
            best = cut;
            break;
        }
    }
    if (best == NPOS)
        return sh_cb_cat(s, x->out, f->c, n, sh_ctx_flags(ctx), line);
    if (suffix)
        return sh_cb_cat(s, x->out, f->c, best, sh_ctx_flags(ctx), line);
    return sh_cb_cat(s, x->out, f->c + best, n - best, sh_ctx_flags(ctx), line);
}

/* ${...} taken apart: [a, b) is the text between the braces. */
typedef struct brace {
    size_t a, b;
    size_t n0, nlen; /* the parameter's name [n0, n0 + nlen) */
    size_t ia, il;   /* its index [ia, ia + il) */
    bool has_idx;
    bool length; /* ${#...} */
    size_t i;    /* after the name and index: the operator, or b */
    unsigned line;
} brace;

/* ${!x}, ${x/a/b}, ${x:1:2}, ${x^^} ...: not read, an unknown value. */
static int brace_unread(xstate *x, const brace *br)
{
    const char *t = x->r->u->s;

    return sh_push_ghost(x, TS_SHELL_UNSUPPORTED, t + br->a - 2, br->b - br->a + 3, br->line, 0);
}

/* The name and the index: 0, 1 when not read here, -1 on error. */
static int brace_parse(xstate *x, size_t a, size_t b, brace *br)
{
    sh *s = x->r->sh;
    const char *t = x->r->u->s;
    size_t i = a;

    memset(br, 0, sizeof *br);
    br->a = a;
    br->b = b;
    br->line = sh_line_at(x->r->u, a);
    if (i < b && t[i] == '#' && i + 1 < b && t[i + 1] != '}' &&
        (sh_name_char(t[i + 1]) || t[i + 1] == '@' || t[i + 1] == '*')) {
        br->length = true;
        i++;
    }
    if (i < b && t[i] == '!')
        return 1;
    br->n0 = i;
    if (i < b && sh_name_start(t[i])) {
        while (i < b && sh_name_char(t[i]))
            i++;
    } else if (i < b && t[i] >= '0' && t[i] <= '9') {
        while (i < b && t[i] >= '0' && t[i] <= '9')
            i++;
    } else if (i < b && strchr("@*#?$!-", t[i]) != NULL) {
        i++;
    } else {
        return sh_fail(s, TS_PROB_INVALID_VALUE, br->line, "bad substitution ${%.*s}",
                       ts_utf8_prec(t + a, b - a < 40 ? b - a : 40), t + a);
    }
    br->nlen = i - br->n0;
    if (i < b && t[i] == '[') {
        size_t e = i + 1;

        while (e < b && t[e] != ']')
            e++;
        if (e >= b)
            return sh_fail(s, TS_PROB_INVALID_VALUE, br->line, "bad array subscript in ${%.*s}",
                           ts_utf8_prec(t + a, b - a < 40 ? b - a : 40), t + a);
        br->ia = i + 1;
        br->il = e - br->ia;
        br->has_idx = true;
        i = e + 1;
    }
    br->i = i;
    return 0;
}

/* The parameter's value, its index expanded first when it has a $ in
 * it.  0, 1 when an unknown value was pushed instead, -1 on error. */
static int brace_lookup(xstate *x, const brace *br, pval *p)
{
    sh *s = x->r->sh;
    const char *t = x->r->u->s;
    char ib[128];
    const char *idx = NULL;

    if (br->has_idx && br->il >= sizeof ib)
        return brace_unread(x, br) != 0 ? -1 : 1;
    if (br->has_idx && memchr(t + br->ia, '$', br->il) != NULL) {
        cbuf tmp = { 0 };
        uint16_t tt;
        char *txt;

        if (sh_x_sub(x, br->ia, br->ia + br->il, CTX_DQ, &tmp) != 0) {
            sh_cb_free(&tmp);
            return -1;
        }
        tt = sh_first_taint(tmp.v, tmp.n);
        if (tt != 0) {
            sh_cb_free(&tmp);
            return sh_cb_push(s, x->out, 0, CF_GHOST, tt, (uint16_t)br->line) != 0 ? -1 : 1;
        }
        txt = sh_cells_text(s, tmp.v, tmp.n);
        sh_cb_free(&tmp);
        if (txt == NULL)
            return -1;
        snprintf(ib, sizeof ib, "%s", txt);
        free(txt);
        idx = ib;
    } else if (br->has_idx) {
        memcpy(ib, t + br->ia, br->il);
        ib[br->il] = '\0';
        idx = ib;
    }
    return lookup(x, t + br->n0, br->nlen, idx, idx != NULL ? strlen(idx) : 0, br->line, p);
}

/* ${#x}, ${#A[@]}: the length, or the number of elements. */
static int brace_length(xstate *x, const brace *br, const pval *p, int ctx)
{
    sh *s = x->r->sh;
    const char *t = x->r->u->s;
    uint16_t line = (uint16_t)br->line;
    char nb[24];
    size_t cnt = 0, k;

    if (br->i != br->b)
        return sh_fail(s, TS_PROB_INVALID_VALUE, br->line, "bad substitution ${%.*s}",
                       ts_utf8_prec(t + br->a, br->b - br->a < 40 ? br->b - br->a : 40), t + br->a);
    if (p->state == 0 && p->taint != 0 && s->taints[p->taint].why != TS_SHELL_UNSET)
        return sh_cb_push(s, x->out, 0, CF_GHOST, p->taint, line);
    if (p->state == 1 && p->v != NULL && p->idx == NPOS) {
        cnt = p->v->ne;
    } else if (p->state == 1) {
        field one[1];
        const field *els;
        size_t ne;

        pval_elems(p, one, 1, &els, &ne);
        if (ne == 1) {
            if (sh_first_taint(els[0].c, els[0].n) != 0)
                return sh_cb_push(s, x->out, 0, CF_GHOST, sh_first_taint(els[0].c, els[0].n), line);
            cnt = sh_real_len(els[0].c, els[0].n);
        }
    }
    snprintf(nb, sizeof nb, "%zu", cnt);
    for (k = 0; nb[k] != '\0'; k++)
        if (sh_cb_push(s, x->out, (unsigned char)nb[k], sh_ctx_flags(ctx), 0, line) != 0)
            return -1;
    return 0;
}

/* ${x:=word}: assign the default, then use it. */
static int brace_assign(xstate *x, const brace *br, size_t wa, int ctx)
{
    sh *s = x->r->sh;
    const char *t = x->r->u->s;
    cbuf val = { 0 };
    var *v;
    field f;
    int rc = sh_x_sub(x, wa, br->b, ctx, &val);

    if (rc == 0 && (!sh_name_start(t[br->n0]) || br->has_idx))
        rc = sh_fail(s, TS_PROB_INVALID_VALUE, br->line, "${%.*s}: cannot assign this way",
                     ts_utf8_prec(t + br->a, br->b - br->a < 40 ? br->b - br->a : 40), t + br->a);
    if (rc == 0) {
        v = sh_var_make(s, t + br->n0, br->nlen, br->line);
        memset(&f, 0, sizeof f);
        f.c = val.v;
        f.n = val.n;
        if (v == NULL || sh_var_assign(s, v, &f, 1, br->line) != 0)
            rc = -1;
    }
    if (rc == 0)
        rc = sh_cb_cat(s, x->out, val.v, val.n, sh_ctx_flags(ctx), br->line);
    sh_cb_free(&val);
    return rc;
}

/* ${x-w}, ${x=w}, ${x+w}, ${x?w} and their ':' forms (null counts as
 * unset); word is [wa, b). */
static int brace_default(xstate *x, const brace *br, const pval *p, char op, bool colon, size_t wa,
                         int ctx)
{
    const char *name = x->r->u->s + br->n0;
    bool absent = colon ? pval_null(p) : p->state != 1;

    /* A value not known (an argument, a command's output) counts as
     * absent: bash would see it empty without arguments. */
    if (op == '+')
        return absent ? 0 : sh_x_range(x, wa, br->b, ctx);
    if (!absent)
        return push_pval(x, p, ctx, name, br->nlen, br->line);
    if (op == '?')
        return p->taint != 0
                   ? sh_cb_push(x->r->sh, x->out, 0, CF_GHOST, p->taint, (uint16_t)br->line)
                   : sh_push_ghost(x, TS_SHELL_UNSET, name, br->nlen, br->line, 0);
    if (op == '=')
        return brace_assign(x, br, wa, ctx);
    return sh_x_range(x, wa, br->b, ctx);
}

/* ${x#p} and ${x%p}: the shortest prefix or suffix matching p removed
 * (the longest when the operator is doubled); p is [wa, b). */
static int brace_trim(xstate *x, const brace *br, const pval *p, char op, size_t wa, int ctx)
{
    const char *t = x->r->u->s;
    bool longest = wa < br->b && t[wa] == op;
    cbuf pat = { 0 };
    field one[1];
    const field *els;
    size_t ne;
    int rc;

    if (longest)
        wa++;
    if (p->state != 1)
        return push_pval(x, p, ctx, t + br->n0, br->nlen, br->line);
    rc = sh_x_sub(x, wa, br->b, CTX_UNQ, &pat);
    if (rc == 0) {
        pval_elems(p, one, 1, &els, &ne);
        if (ne > 0)
            rc = trim_match(x, &els[0], &pat, op == '%', longest, ctx, br->line);
    }
    sh_cb_free(&pat);
    return rc;
}

/* ${...}: [a, b) is the text between the braces. */
static int x_brace(xstate *x, size_t a, size_t b, int ctx)
{
    const char *t = x->r->u->s;
    brace br;
    pval p;
    bool colon;
    size_t i;
    int rc = brace_parse(x, a, b, &br);

    if (rc != 0)
        return rc < 0 ? -1 : brace_unread(x, &br);
    rc = brace_lookup(x, &br, &p);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    if (br.length)
        return brace_length(x, &br, &p, ctx);
    if (br.i == b)
        return push_pval(x, &p, ctx, t + br.n0, br.nlen, br.line);
    i = br.i;
    colon = t[i] == ':';
    if (colon)
        i++;
    if (i >= b)
        return brace_unread(x, &br);
    if (t[i] == '-' || t[i] == '=' || t[i] == '+' || t[i] == '?')
        return brace_default(x, &br, &p, t[i], colon, i + 1, ctx);
    if (!colon && (t[i] == '#' || t[i] == '%'))
        return brace_trim(x, &br, &p, t[i], i + 1, ctx);
    return brace_unread(x, &br);
}

/* i at '$' (in context ctx): expand, return the index after it. */
size_t sh_x_dollar(xstate *x, size_t i, size_t b, int ctx)
{
    run *r = x->r;
    const unit *u = r->u;
    const char *t = u->s;
    unsigned line = sh_line_at(u, i);

    if (i + 1 >= b)
        return sh_cb_push(r->sh, x->out, '$', sh_ctx_flags(ctx) & CF_QUOTED, 0, (uint16_t)line)
                   ? NPOS
                   : i + 1;
    if (t[i + 1] == '(') {
        size_t e = sh_skip_nest(r->sh, u, i + 1, '(', ')');

        if (e == NPOS)
            return NPOS;
        if (t[i + 2] == '(' && e - i >= 5 && t[e - 2] == ')') {
            if (sh_x_arith(x, i + 3, e - 2, ctx) != 0)
                return NPOS;
            return e;
        }
        return sh_x_command(x, i, e) != 0 ? NPOS : e;
    }
    if (t[i + 1] == '{') {
        size_t e = sh_skip_nest(r->sh, u, i + 1, '{', '}');

        if (e == NPOS)
            return NPOS;
        return x_brace(x, i + 2, e - 1, ctx) != 0 ? NPOS : e;
    }
    if (sh_name_start(t[i + 1])) {
        size_t e = i + 1;
        pval p;

        while (e < b && sh_name_char(t[e]))
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
            if (sh_cb_push(r->sh, x->out, c, CF_QUOTED, 0, u->ln[j]) != 0)
                return NPOS;
            j++;
        }
        if (x->mode == XM_SPLIT && sh_cb_push(r->sh, x->out, 0, CF_KEEP, 0, (uint16_t)line) != 0)
            return NPOS;
        return j < b ? j + 1 : b;
    }
    if (ctx == CTX_UNQ && t[i + 1] == '"')
        return i + 1; /* $"...": a translated string, read as "..." */
    return sh_cb_push(r->sh, x->out, '$', sh_ctx_flags(ctx) & CF_QUOTED, 0, (uint16_t)line) ? NPOS
                                                                                            : i + 1;
}
