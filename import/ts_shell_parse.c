/*
 * ts_shell_parse.c - the runner: a recursive-descent walk of the
 * grammar (POSIX XCU 2.10's list / and_or / pipeline / command) with the
 * compound commands (if, while, until, for, case, functions, { }, ( )).
 * Part of the launch-script reader (ts_shell.h); the stages and their
 * shared types are in ts_shell_int.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ts_shell_int.h"

/* ------------------------------------------------------------------ */
/* The runner                                                         */

static int p_list(run *r, int mode, int *status);

const tok *sh_cur(const run *r)
{
    return &r->u->t[r->i];
}

bool sh_tok_is(const run *r, const tok *t, const char *word)
{
    size_t n = strlen(word);

    return t->type == T_WORD && t->b - t->a == n && memcmp(r->u->s + t->a, word, n) == 0;
}

bool sh_is_op(const tok *t, unsigned char op)
{
    return t->type == T_OP && t->op == op;
}

static void skip_nl(run *r)
{
    while (sh_cur(r)->type == T_NL)
        r->i++;
}

int sh_syntax(run *r, const char *want)
{
    const tok *t = sh_cur(r);
    const char *txt = r->u->s + t->a;
    size_t n = t->b - t->a;

    if (t->type == T_EOF)
        return sh_fail(r->sh, TS_PROB_INVALID_VALUE, t->line,
                       "syntax error: the text ends where %s should come", want);
    if (t->type == T_NL)
        return sh_fail(r->sh, TS_PROB_INVALID_VALUE, t->line,
                       "syntax error: a new line where %s "
                       "should come",
                       want);
    return sh_fail(r->sh, TS_PROB_INVALID_VALUE, t->line, "syntax error near '%.*s' (%s expected)",
                   ts_utf8_prec(txt, n < 40 ? n : 40), txt, want);
}

static int expect_word(run *r, const char *word)
{
    skip_nl(r);
    if (!sh_tok_is(r, sh_cur(r), word))
        return sh_syntax(r, word);
    r->i++;
    return 0;
}

/* Reserved words that end a list. */
static bool at_stop(const run *r)
{
    static const char *const stops[] = { "then", "elif", "else", "fi", "do",
                                         "done", "esac", "}",    NULL };
    const tok *t = sh_cur(r);
    const char *const *w;

    if (t->type == T_EOF || sh_is_op(t, O_RP) || sh_is_op(t, O_DSEMI) || sh_is_op(t, O_SEMIAMP) ||
        sh_is_op(t, O_DSEMIAMP))
        return true;
    for (w = stops; *w != NULL; w++)
        if (sh_tok_is(r, t, *w))
            return true;
    return false;
}

/* Redirections after a compound command: skipped with their targets. */
static void skip_redirects(run *r, const tok **heredoc)
{
    while (sh_is_redirect(sh_cur(r))) {
        if (sh_cur(r)->op == O_HEREDOC && heredoc != NULL)
            *heredoc = sh_cur(r);
        r->i++;
        if (sh_cur(r)->type == T_WORD)
            r->i++;
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
        sh_undecided(r, line);
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
        unsigned line = sh_cur(r)->line;
        int cst = ST_TRUE, bm, cm = mode;

        r->i++; /* if / elif */
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
        if (sh_tok_is(r, sh_cur(r), "elif"))
            continue;
        if (sh_tok_is(r, sh_cur(r), "else")) {
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
    unsigned line = sh_cur(r)->line;
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
            sh_skipped(r->sh, "loop", "past 1000 rounds", line);
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

/* The words after "in", expanded when run; without "in", the positional
 * parameters (a function's or bash -c's; the script has none). */
static int for_words(run *r, int mode, unsigned line, fields *items)
{
    size_t k;

    if (!sh_tok_is(r, sh_cur(r), "in")) {
        if (mode != M_RUN || r->pos == NULL)
            return 0;
        for (k = 0; k < r->pos->ne; k++) {
            field f = sh_var_elem(r->pos, k);

            if (sh_fields_add(r->sh, items, f.c, f.n, (uint16_t)line, 0, false) != 0)
                return -1;
        }
        return 0;
    }
    r->i++;
    while (sh_cur(r)->type == T_WORD) {
        if (mode == M_RUN && sh_expand_fields(r, sh_cur(r), items) != 0)
            return -1;
        r->i++;
    }
    return 0;
}

/* The body (at token body) once per item, name set to it. */
static int for_rounds(run *r, const char *name, const fields *items, size_t body, unsigned line,
                      int *status)
{
    sh *s = r->sh;
    size_t k;

    for (k = 0; k < items->n; k++) {
        var *v = sh_var_make(s, name, strlen(name), line);

        if (v == NULL || sh_var_assign(s, v, &items->v[k], 1, line) != 0)
            return -1;
        r->i = body;
        if (p_loop_body(r, M_RUN, status) != 0)
            return -1;
        if (r->ctl == CTL_CONTINUE)
            r->ctl = CTL_NONE;
        if (r->ctl == CTL_BREAK) {
            r->ctl = CTL_NONE;
            break;
        }
        if (r->ctl != CTL_NONE)
            break;
    }
    return 0;
}

static int p_for(run *r, int mode, int *status)
{
    unsigned line = sh_cur(r)->line;
    const tok *nt;
    fields items = { 0 };
    size_t body;
    char name[NAME_MAX_LEN];
    int rc;

    *status = ST_TRUE;
    r->i++;
    nt = sh_cur(r);
    if (nt->type == T_DPAREN) {
        /* for ((;;)): not read */
        r->i++;
        if (sh_is_op(sh_cur(r), O_SEMI))
            r->i++;
        skip_nl(r);
        sh_undecided(r, line);
        return p_loop_body(r, mode == M_RUN ? M_MAYBE : mode, status);
    }
    if (nt->type != T_WORD || nt->b - nt->a >= NAME_MAX_LEN)
        return sh_syntax(r, "a loop variable");
    memcpy(name, r->u->s + nt->a, nt->b - nt->a);
    name[nt->b - nt->a] = '\0';
    r->i++;
    skip_nl(r);
    if (for_words(r, mode, line, &items) != 0) {
        sh_fields_free(&items);
        return -1;
    }
    if (sh_is_op(sh_cur(r), O_SEMI))
        r->i++;
    skip_nl(r);
    body = r->i;
    if (mode != M_RUN)
        rc = p_loop_body(r, mode, status);
    else if (items.n == 0)
        rc = p_loop_body(r, M_SKIP, status);
    else
        rc = for_rounds(r, name, &items, body, line, status); /* past "done" */
    sh_fields_free(&items);
    return rc;
}

/* One clause's patterns, up to the ')'; *hit when one matches word
 * (tried only when test). */
static int case_patterns(run *r, bool test, const cbuf *word, bool *hit)
{
    for (;;) {
        const tok *p = sh_cur(r);

        if (p->type != T_WORD)
            return sh_syntax(r, "a case pattern");
        if (test) {
            cbuf pat = { 0 };
            int m;

            if (sh_expand(r, p->a, p->b, XM_JOIN, &pat) != 0) {
                sh_cb_free(&pat);
                return -1;
            }
            m = sh_glob(r->sh, pat.v, pat.n, word->v, word->n, p->line);
            sh_cb_free(&pat);
            if (m < 0)
                return -1;
            if (m)
                *hit = true;
        }
        r->i++;
        if (sh_is_op(sh_cur(r), O_PIPE)) {
            r->i++;
            continue;
        }
        if (sh_is_op(sh_cur(r), O_RP)) {
            r->i++;
            return 0;
        }
        return sh_syntax(r, "')' after a case pattern");
    }
}

static int p_case(run *r, int mode, int *status)
{
    unsigned line = sh_cur(r)->line;
    const tok *wt;
    cbuf word = { 0 };
    bool matched = false, opaque = false;
    uint16_t save_cond = r->cond;

    *status = ST_TRUE;
    r->i++;
    wt = sh_cur(r);
    if (wt->type != T_WORD)
        return sh_syntax(r, "a word after case");
    if (mode == M_RUN) {
        if (sh_expand(r, wt->a, wt->b, XM_JOIN, &word) != 0)
            goto fail;
        opaque = sh_cells_opaque(r->sh, word.v, word.n);
    }
    r->i++;
    if (expect_word(r, "in") != 0)
        goto fail;
    for (;;) {
        int im = M_SKIP, st;
        bool hit = false;

        skip_nl(r);
        if (sh_tok_is(r, sh_cur(r), "esac")) {
            r->i++;
            break;
        }
        if (sh_is_op(sh_cur(r), O_LP))
            r->i++;
        if (case_patterns(r, mode == M_RUN && !matched && !opaque, &word, &hit) != 0)
            goto fail;
        if (mode == M_RUN && opaque) {
            im = M_MAYBE;
            r->cond = (uint16_t)line;
        } else if (mode == M_RUN && hit) {
            im = M_RUN;
            matched = true;
        } else if (mode == M_MAYBE) {
            im = M_MAYBE;
        }
        if (p_list(r, im, &st) != 0)
            goto fail;
        if (im == M_RUN)
            *status = st;
        r->cond = save_cond;
        if (sh_is_op(sh_cur(r), O_DSEMI) || sh_is_op(sh_cur(r), O_SEMIAMP) ||
            sh_is_op(sh_cur(r), O_DSEMIAMP))
            r->i++;
    }
    if (opaque)
        sh_undecided(r, line);
    sh_cb_free(&word);
    return 0;
fail:
    sh_cb_free(&word);
    return -1;
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
        return sh_fail(s, TS_PROB_INVALID_VALUE, nt->line, "a function name is too long");
    for (k = 0; k < s->nfuncs; k++)
        if (strlen(s->funcs[k].name) == n && memcmp(s->funcs[k].name, r->u->s + nt->a, n) == 0)
            fn = &s->funcs[k];
    if (fn == NULL) {
        if (s->nfuncs >= FUNCS_MAX)
            return sh_fail(s, TS_PROB_IMPORT_TOO_LARGE, nt->line, "more than %u functions",
                           FUNCS_MAX);
        fn = &s->funcs[s->nfuncs++];
    }
    memcpy(fn->name, r->u->s + nt->a, n);
    fn->name[n] = '\0';
    fn->u = r->u;
    fn->body = r->i;
    return sh_p_command(r, M_SKIP, &st);
}

/* function NAME [()] compound: the cursor is at "function". */
static int p_function_kw(run *r)
{
    size_t nt;

    r->i++;
    nt = r->i;
    if (sh_cur(r)->type != T_WORD)
        return sh_syntax(r, "a function name");
    r->i++;
    if (sh_is_op(sh_cur(r), O_LP) && sh_is_op(&r->u->t[r->i + 1], O_RP))
        r->i += 2;
    return p_function(r, nt);
}

/* A command that starts with a word: a compound command, a function
 * definition or a simple command. */
static int p_word_command(run *r, int mode, int *status)
{
    const tok *t = sh_cur(r);
    const tok *heredoc = NULL;
    int rc;

    if (sh_tok_is(r, t, "if")) {
        rc = p_if(r, mode, status);
    } else if (sh_tok_is(r, t, "while") || sh_tok_is(r, t, "until")) {
        rc = p_while(r, mode, status, sh_tok_is(r, t, "until"));
    } else if (sh_tok_is(r, t, "for")) {
        rc = p_for(r, mode, status);
    } else if (sh_tok_is(r, t, "case")) {
        rc = p_case(r, mode, status);
    } else if (sh_tok_is(r, t, "{")) {
        r->i++;
        rc = p_list(r, mode, status);
        if (rc == 0)
            rc = expect_word(r, "}");
    } else if (sh_tok_is(r, t, "[[")) {
        r->i++;
        rc = sh_p_dbrack(r, mode, status);
    } else if (sh_tok_is(r, t, "function")) {
        return p_function_kw(r);
    } else if (sh_is_op(&r->u->t[r->i + 1], O_LP) && r->i + 2 < r->u->nt &&
               sh_is_op(&r->u->t[r->i + 2], O_RP)) {
        size_t nt = r->i;

        r->i += 3;
        return p_function(r, nt);
    } else {
        return sh_p_simple(r, mode, status);
    }
    if (rc != 0)
        return rc;
    skip_redirects(r, &heredoc);
    return 0;
}

/* (( expr )) run: true when expr is not 0, unknown when it is. */
static int p_arith(run *r, const tok *t, int *status)
{
    uint16_t tt = 0;
    bool bad = false;
    cbuf b = { 0 };
    int64_t v = 0;
    char *txt;

    if (sh_expand(r, t->a + 2, t->b - 2, XM_JOIN, &b) != 0) {
        sh_cb_free(&b);
        return -1;
    }
    txt = sh_cells_text(r->sh, b.v, b.n);
    tt = sh_first_taint(b.v, b.n);
    sh_cb_free(&b);
    if (txt == NULL)
        return -1;
    if (tt == 0)
        v = sh_arith_text(r, txt, strlen(txt), t->line, 0, &tt, &bad);
    free(txt);
    *status = bad || tt != 0 ? ST_UNKNOWN : v != 0 ? ST_TRUE : ST_FALSE;
    return 0;
}

int sh_p_command(run *r, int mode, int *status)
{
    const tok *t = sh_cur(r);
    const tok *heredoc = NULL;
    int rc;

    if (sh_spend(r->sh, 1, t->line) != 0)
        return -1;
    *status = ST_TRUE;
    if (t->type == T_WORD)
        return p_word_command(r, mode, status);
    if (sh_is_op(t, O_LP)) {
        /* ( list ): a subshell; its assignments are kept (harmless here). */
        r->i++;
        rc = p_list(r, mode, status);
        if (rc == 0 && !sh_is_op(sh_cur(r), O_RP))
            return sh_syntax(r, "')'");
        r->i++;
        skip_redirects(r, &heredoc);
        return rc;
    }
    if (t->type == T_DPAREN) {
        r->i++;
        if (mode == M_RUN && p_arith(r, t, status) != 0)
            return -1;
        skip_redirects(r, &heredoc);
        return 0;
    }
    if (t->type == T_AOPEN || sh_is_redirect(t))
        return sh_p_simple(r, mode, status);
    return sh_syntax(r, "a command");
}

static int p_pipeline(run *r, int mode, int *status)
{
    bool neg = false;

    if (sh_tok_is(r, sh_cur(r), "!")) {
        neg = true;
        r->i++;
    }
    for (;;) {
        if (sh_p_command(r, mode, status) != 0)
            return -1;
        if (sh_is_op(sh_cur(r), O_PIPE) || sh_is_op(sh_cur(r), O_PIPEAMP)) {
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
    while (sh_is_op(sh_cur(r), O_AND) || sh_is_op(sh_cur(r), O_OR)) {
        bool and = sh_cur(r)->op == O_AND;
        unsigned line = sh_cur(r)->line;
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
                sh_undecided(r, line);
                r->cond = (uint16_t)line;
            } else {
                m = (and? ok : !ok) ? M_RUN : M_SKIP;
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

        while (sh_cur(r)->type == T_NL || sh_is_op(sh_cur(r), O_SEMI) || sh_is_op(sh_cur(r), O_AMP))
            r->i++;
        if (at_stop(r))
            return 0;
        if (p_and_or(r, r->ctl != CTL_NONE ? M_SKIP : mode, &st) != 0)
            return -1;
        if (r->ctl == CTL_NONE || mode != M_RUN)
            *status = st;
        if (!(sh_cur(r)->type == T_NL || sh_is_op(sh_cur(r), O_SEMI) ||
              sh_is_op(sh_cur(r), O_AMP) || at_stop(r)))
            return sh_syntax(r, "a new line or ';'");
    }
}

int sh_run_unit(sh *s, unit *u, var *pos, field *prefix, size_t nprefix)
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
    if (rc == 0 && sh_cur(&r)->type != T_EOF)
        rc = sh_syntax(&r, "a command");
    s->prefix = save_prefix;
    s->nprefix = save_nprefix;
    s->nfuncs = save_funcs;
    return rc;
}
