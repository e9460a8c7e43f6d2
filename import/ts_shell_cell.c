/*
 * ts_shell_cell.c - errors and bounds, cell buffers, taints, fields and
 * pattern matching: the data every stage of the reader shares.
 * Part of the launch-script reader (ts_shell.h); the stages and their
 * shared types are in ts_shell_int.h.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_shell_int.h"

/* ------------------------------------------------------------------ */
/* Errors and bounds                                                  */

int sh_fail(sh *s, ts_problem type, unsigned line, const char *fmt, ...)
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

int sh_oom(sh *s)
{
    if (!s->failed) {
        s->failed = true;
        ts_api_err_set(s->err, TS_PROB_OUT_OF_MEMORY, NULL, "out of memory reading %s", s->member);
    }
    return -1;
}

/* Count n steps of work; -1 past the bound. */
int sh_spend(sh *s, size_t n, unsigned line)
{
    if (s->failed)
        return -1;
    s->work += n;
    if (s->work > TS_SHELL_WORK_MAX)
        return sh_fail(s, TS_PROB_IMPORT_TOO_LARGE, line,
                       "reading the script takes more than %u steps (a loop that does "
                       "not end, or an expansion that keeps growing)",
                       TS_SHELL_WORK_MAX);
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
        return sh_fail(s, TS_PROB_IMPORT_TOO_LARGE, line,
                       "an expansion is longer than %u characters", TS_SHELL_VALUE_MAX);
    want = b->cap ? b->cap : 32;
    while (want < b->n + more)
        want *= 2;
    if (want > TS_SHELL_VALUE_MAX)
        want = TS_SHELL_VALUE_MAX;
    {
        cell *nv = realloc(b->v, want * sizeof *nv);

        if (nv == NULL)
            return sh_oom(s);
        b->v = nv;
        b->cap = want;
    }
    return 0;
}

int sh_cb_push(sh *s, cbuf *b, unsigned char c, unsigned f, uint16_t taint, uint16_t line)
{
    if (sh_spend(s, 1, line) != 0 || cb_reserve(s, b, 1, line) != 0)
        return -1;
    b->v[b->n].c = c;
    b->v[b->n].f = (unsigned char)f;
    b->v[b->n].taint = taint;
    b->v[b->n].line = line;
    b->n++;
    return 0;
}

/* Append cells, or-ing flags in (and keeping CF_GHOST). */
int sh_cb_cat(sh *s, cbuf *b, const cell *c, size_t n, unsigned f, unsigned line)
{
    size_t k;

    if (sh_spend(s, n, line) != 0 || cb_reserve(s, b, n, line) != 0)
        return -1;
    for (k = 0; k < n; k++) {
        b->v[b->n] = c[k];
        b->v[b->n].f = (unsigned char)((c[k].f & CF_GHOST) | f);
        b->n++;
    }
    return 0;
}

void sh_cb_free(cbuf *b)
{
    free(b->v);
    b->v = NULL;
    b->n = b->cap = 0;
}

/* Real characters (no ghosts) of c[0..n). */
size_t sh_real_len(const cell *c, size_t n)
{
    size_t k, m = 0;

    for (k = 0; k < n; k++)
        if (!(c[k].f & (CF_GHOST | CF_BREAK | CF_KEEP)))
            m++;
    return m;
}

/* The first taint in c[0..n), 0 when none. */
uint16_t sh_first_taint(const cell *c, size_t n)
{
    size_t k;

    for (k = 0; k < n; k++)
        if (c[k].taint != 0)
            return c[k].taint;
    return 0;
}

/* The real characters as a C string, into a malloc'd buffer. */
char *sh_cells_text(sh *s, const cell *c, size_t n)
{
    char *t = malloc(n + 1);
    size_t k, m = 0;

    if (t == NULL) {
        sh_oom(s);
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

uint16_t sh_taint_add(sh *s, ts_shell_why why, const char *name, size_t nlen, unsigned line,
                      unsigned cond)
{
    size_t k;
    char nm[48];

    if (nlen >= sizeof nm)
        nlen = ts_utf8_cut(name, sizeof nm - 1) < nlen ? ts_utf8_cut(name, sizeof nm - 1) : nlen;
    memcpy(nm, name, nlen);
    nm[nlen] = '\0';
    ts_utf8_trim(nm, strlen(nm));
    for (k = 1; k <= s->ntaints; k++)
        if (s->taints[k].why == why && s->taints[k].line == line && s->taints[k].cond == cond &&
            strcmp(s->taints[k].name, nm) == 0)
            return (uint16_t)k;
    if (s->ntaints >= TAINTS_MAX)
        return (uint16_t)TAINTS_MAX; /* the last one speaks for the rest */
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

bool sh_cells_opaque(const sh *s, const cell *c, size_t n)
{
    size_t k;

    for (k = 0; k < n; k++)
        if (taint_opaque(s, c[k].taint))
            return true;
    return false;
}

/* ------------------------------------------------------------------ */
/* Fields                                                             */

void sh_fields_free(fields *fs)
{
    size_t k;

    for (k = 0; k < fs->n; k++)
        free(fs->v[k].c);
    free(fs->v);
    memset(fs, 0, sizeof *fs);
}

int sh_fields_add(sh *s, fields *fs, const cell *c, size_t n, uint16_t line, uint16_t taint,
                  bool ghost)
{
    field *f;

    if (fs->n == fs->cap) {
        size_t nc = fs->cap ? fs->cap * 2 : 16;
        field *nv;

        if (fs->n >= TS_SHELL_WORDS_MAX)
            return sh_fail(s, TS_PROB_IMPORT_TOO_LARGE, line, "a command has more than %u words",
                           TS_SHELL_WORDS_MAX);
        nv = realloc(fs->v, nc * sizeof *nv);
        if (nv == NULL)
            return sh_oom(s);
        fs->v = nv;
        fs->cap = nc;
    }
    f = &fs->v[fs->n];
    f->c = malloc((n ? n : 1) * sizeof *f->c);
    if (f->c == NULL)
        return sh_oom(s);
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
int sh_split_fields(sh *s, const cbuf *in, fields *out)
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
            if (sh_fields_add(s, out, in->v + start, k - start, line, taint,
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
        *ok = false; /* no closing ']': the '[' is literal */
        return false;
    }
    *ok = true;
    *pi = i + 1;
    return hit != neg;
}

/* 1 match, 0 no match, -1 error. */
int sh_glob(sh *s, const cell *p, size_t np, const cell *t, size_t nt, unsigned line)
{
    size_t pi = 0, ti = 0, star_p = NPOS, star_t = 0;

    while (ti < nt || pi < np) {
        if (sh_spend(s, 1, line) != 0)
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
                ti++; /* a ghost in the text matches nothing, costs nothing */
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
