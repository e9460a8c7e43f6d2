/*
 * ts_shell_expand.c - word expansion: one raw word -> cells (quoting,
 * $((...)), command substitutions, markers of rebuilt texts) -> fields.
 * Part of the launch-script reader (ts_shell.h); the stages and their
 * shared types are in ts_shell_int.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_shell_int.h"

/* ------------------------------------------------------------------ */
/* Expansion                                                          */

int sh_push_ghost(xstate *x, ts_shell_why why, const char *name, size_t nlen, unsigned line,
                  unsigned cond)
{
    uint16_t t = sh_taint_add(x->r->sh, why, name, nlen, line, cond);

    return sh_cb_push(x->r->sh, x->out, 0, CF_GHOST, t, (uint16_t)line);
}

unsigned sh_ctx_flags(int ctx)
{
    return ctx == CTX_UNQ ? CF_SPLIT : CF_QUOTED;
}

/* Push elements of a value: all of them (at: "@" or "*" given), or
 * element 0.  quoted "@" keeps elements apart; "*" and the joined mode
 * join them with a space. */
int sh_push_elems(xstate *x, const field *els, size_t ne, bool at, bool star, int ctx,
                  unsigned line)
{
    sh *s = x->r->sh;
    size_t k;

    if (!at) {
        if (ne == 0)
            return 0;
        return sh_cb_cat(s, x->out, els[0].c, els[0].n, sh_ctx_flags(ctx), line);
    }
    if (ne == 0) {
        if (ctx != CTX_UNQ && !star)
            x->atzero = true;
        return 0;
    }
    for (k = 0; k < ne; k++) {
        if (k > 0) {
            if (x->mode == XM_JOIN || (star && ctx != CTX_UNQ)) {
                if (sh_cb_push(s, x->out, ' ', sh_ctx_flags(ctx), 0, (uint16_t)line) != 0)
                    return -1;
            } else if (sh_cb_push(s, x->out, 0, CF_BREAK, 0, (uint16_t)line) != 0) {
                return -1;
            }
        }
        if (sh_cb_cat(s, x->out, els[k].c, els[k].n, sh_ctx_flags(ctx), line) != 0)
            return -1;
        if (ctx != CTX_UNQ && !star && x->mode == XM_SPLIT &&
            sh_cb_push(s, x->out, 0, CF_KEEP, 0, (uint16_t)line) != 0)
            return -1;
    }
    return 0;
}

/* Expand [a, b) in context ctx into out, joined: an operand inside a
 * word (${x:=w}, ${x#p}, $((e)), an index); x's own output is kept. */
int sh_x_sub(xstate *x, size_t a, size_t b, int ctx, cbuf *out)
{
    cbuf *save = x->out;
    int save_mode = x->mode, rc;

    x->out = out;
    x->mode = XM_JOIN;
    rc = sh_x_range(x, a, b, ctx);
    x->out = save;
    x->mode = save_mode;
    return rc;
}

/* $((expr)): [a, b) is expr. */
int sh_x_arith(xstate *x, size_t a, size_t b, int ctx)
{
    sh *s = x->r->sh;
    unsigned line = sh_line_at(x->r->u, a);
    cbuf tmp = { 0 };
    uint16_t t;
    char *txt;
    int64_t v;
    bool bad = false;
    char nb[24];
    size_t k;

    if (sh_x_sub(x, a, b, CTX_DQ, &tmp) != 0) {
        sh_cb_free(&tmp);
        return -1;
    }
    t = sh_first_taint(tmp.v, tmp.n);
    if (t != 0) {
        sh_cb_free(&tmp);
        return sh_cb_push(s, x->out, 0, CF_GHOST, t, (uint16_t)line);
    }
    txt = sh_cells_text(s, tmp.v, tmp.n);
    sh_cb_free(&tmp);
    if (txt == NULL)
        return -1;
    v = sh_arith_text(x->r, txt, strlen(txt), line, 0, &t, &bad);
    if (s->failed) {
        free(txt);
        return -1;
    }
    if (bad || t != 0) {
        int rc;

        if (t == 0) {
            char nm[48];

            snprintf(nm, sizeof nm, "$((%.*s))", ts_utf8_prec(txt, 36), txt);
            t = sh_taint_add(s, TS_SHELL_UNSUPPORTED, nm, strlen(nm), line, 0);
        }
        free(txt);
        rc = sh_cb_push(s, x->out, 0, CF_GHOST, t, (uint16_t)line);
        return rc;
    }
    free(txt);
    snprintf(nb, sizeof nb, "%lld", (long long)v);
    for (k = 0; nb[k] != '\0'; k++)
        if (sh_cb_push(s, x->out, (unsigned char)nb[k], sh_ctx_flags(ctx), 0, (uint16_t)line) != 0)
            return -1;
    return 0;
}

/* A command substitution [a, b) (with its $( ) or backquotes): unknown. */
int sh_x_command(xstate *x, size_t a, size_t b)
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
    return sh_push_ghost(x, TS_SHELL_COMMAND, nm, strlen(nm), sh_line_at(x->r->u, a), 0);
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
    if (sh_cb_push(x->r->sh, x->out, 0, CF_GHOST, (uint16_t)(h1 * 16 + h2), u->ln[i]) != 0)
        return NPOS;
    return i + 3;
}

/* i at '\\' (in context ctx): the escaped character; the index after it. */
static size_t x_backslash(xstate *x, size_t i, size_t b, int ctx)
{
    sh *s = x->r->sh;
    const unit *u = x->r->u;
    const char *t = u->s;
    uint16_t ln = u->ln[i];

    if (i + 1 >= b) {
        if (sh_cb_push(s, x->out, '\\', sh_ctx_flags(ctx) & CF_QUOTED, 0, ln) != 0)
            return NPOS;
        return i + 1;
    }
    if (t[i + 1] == '\n')
        return i + 2;
    if (ctx == CTX_UNQ || strchr(ctx == CTX_DQ ? "$`\"\\" : "$`\\", t[i + 1]) != NULL) {
        if (sh_cb_push(s, x->out, (unsigned char)t[i + 1], CF_QUOTED, 0, ln) != 0)
            return NPOS;
    } else if (sh_cb_push(s, x->out, '\\', CF_QUOTED, 0, ln) != 0 ||
               sh_cb_push(s, x->out, (unsigned char)t[i + 1], CF_QUOTED, 0, ln) != 0) {
        return NPOS;
    }
    return i + 2;
}

/* i at an unquoted '\'': the quoted characters (markers kept); the
 * index after the closing quote. */
static size_t x_squote(xstate *x, size_t i)
{
    sh *s = x->r->sh;
    const unit *u = x->r->u;
    size_t e = sh_skip_sq(s, u, i), j;

    if (e == NPOS)
        return NPOS;
    for (j = i + 1; j + 1 < e; j++) {
        if (u->s[j] == '\x01') {
            size_t nj = x_marker(x, j, e - 1);

            if (nj == NPOS)
                return NPOS;
            j = nj - 1;
            continue;
        }
        if (sh_cb_push(s, x->out, (unsigned char)u->s[j], CF_QUOTED, 0, u->ln[j]) != 0)
            return NPOS;
    }
    if (x->mode == XM_SPLIT && sh_cb_push(s, x->out, 0, CF_KEEP, 0, u->ln[i]) != 0)
        return NPOS;
    return e;
}

/* i at an unquoted '"': its contents expanded in double quotes; "" is a
 * field even when empty.  The index after the closing quote. */
static size_t x_dquote(xstate *x, size_t i)
{
    sh *s = x->r->sh;
    const unit *u = x->r->u;
    size_t e = sh_skip_dq(s, u, i), before = x->out->n;
    bool save_atzero = x->atzero;

    if (e == NPOS)
        return NPOS;
    x->atzero = false;
    if (sh_x_range(x, i + 1, e - 1, CTX_DQ) != 0)
        return NPOS;
    if (x->out->n == before && !x->atzero && x->mode == XM_SPLIT &&
        sh_cb_push(s, x->out, 0, CF_KEEP, 0, u->ln[i]) != 0)
        return NPOS;
    x->atzero = save_atzero;
    return e;
}

int sh_x_range(xstate *x, size_t a, size_t b, int ctx)
{
    sh *s = x->r->sh;
    const unit *u = x->r->u;
    size_t i = a;

    while (i < b) {
        char c = u->s[i];

        if (s->failed)
            return -1;
        if (c == '\x01') {
            i = x_marker(x, i, b);
        } else if (c == '\\') {
            i = x_backslash(x, i, b, ctx);
        } else if (ctx == CTX_UNQ && c == '\'') {
            i = x_squote(x, i);
        } else if (ctx == CTX_UNQ && c == '"') {
            i = x_dquote(x, i);
        } else if (c == '$') {
            i = sh_x_dollar(x, i, b, ctx);
        } else if (c == '`') {
            size_t e = sh_skip_bq(s, u, i);

            if (e == NPOS || sh_x_command(x, i, e) != 0)
                return -1;
            i = e;
        } else {
            if (sh_cb_push(s, x->out, (unsigned char)c, ctx == CTX_UNQ ? 0 : CF_QUOTED, 0,
                           u->ln[i]) != 0)
                return -1;
            i++;
        }
        if (i == NPOS)
            return -1;
    }
    return 0;
}

/* Expand raw [a, b) of the current unit. */
int sh_expand(run *r, size_t a, size_t b, int mode, cbuf *out)
{
    xstate x;

    memset(&x, 0, sizeof x);
    x.r = r;
    x.mode = mode;
    x.out = out;
    return sh_x_range(&x, a, b, CTX_UNQ);
}

/* Expand a word token into fields (appended to fs). */
int sh_expand_fields(run *r, const tok *t, fields *fs)
{
    cbuf b = { 0 };
    int rc = sh_expand(r, t->a, t->b, XM_SPLIT, &b);

    if (rc == 0)
        rc = sh_split_fields(r->sh, &b, fs);
    sh_cb_free(&b);
    return rc;
}
