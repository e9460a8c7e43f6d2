/*
 * ts_shell_lex.c - the lexer: text -> tokens, as bash's parse.y
 * (read_token_word) decides where a word ends; nothing is expanded yet.
 * Part of the launch-script reader (ts_shell.h); the stages and their
 * shared types are in ts_shell_int.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ts_shell_int.h"

/* ------------------------------------------------------------------ */
/* Lexer                                                              */

typedef struct lexer {
    sh *s;
    unit *u;
    size_t cap;
    size_t pend[8]; /* heredoc operators waiting for their body */
    size_t npend;
    size_t want_delim; /* heredoc operator whose delimiter comes next; 0 none */
    bool word_start;   /* a '#' here starts a comment */
} lexer;

unsigned sh_line_at(const unit *u, size_t i)
{
    if (u->n == 0)
        return 1;
    return u->ln[i < u->n ? i : u->n - 1];
}

static bool is_meta(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' || c == '|' ||
           c == '<' || c == '>' || c == '(' || c == ')';
}

bool sh_name_start(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

bool sh_name_char(char c)
{
    return sh_name_start(c) || (c >= '0' && c <= '9');
}

static size_t skip_dollar(sh *s, const unit *u, size_t i);

static size_t unterminated(sh *s, const unit *u, size_t at, const char *what)
{
    sh_fail(s, TS_PROB_INVALID_VALUE, sh_line_at(u, at), "unterminated %s", what);
    return NPOS;
}

/* i at '\'': the index after the closing quote. */
size_t sh_skip_sq(sh *s, const unit *u, size_t i)
{
    size_t j;

    for (j = i + 1; j < u->n; j++)
        if (u->s[j] == '\'')
            return j + 1;
    return unterminated(s, u, i, "' quote");
}

/* i at '`': after the closing backquote. */
size_t sh_skip_bq(sh *s, const unit *u, size_t i)
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
size_t sh_skip_nest(sh *s, const unit *u, size_t i, char open, char close)
{
    size_t j = i + 1;
    unsigned depth = 1;

    while (j < u->n) {
        char c = u->s[j];

        if (sh_spend(s, 1, sh_line_at(u, j)) != 0)
            return NPOS;
        if (c == '\\') {
            j += 2;
        } else if (c == '\'') {
            /* in $( ) a quote is a quote; in ${ } too (bash 4+). */
            j = sh_skip_sq(s, u, j);
        } else if (c == '"') {
            j = sh_skip_dq(s, u, j);
        } else if (c == '`') {
            j = sh_skip_bq(s, u, j);
        } else if (c == '$' && j + 1 < u->n && (u->s[j + 1] == '(' || u->s[j + 1] == '{')) {
            j = skip_dollar(s, u, j);
        } else if (c == '#' && open == '(' &&
                   (u->s[j - 1] == ' ' || u->s[j - 1] == '\t' || u->s[j - 1] == '\n')) {
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
        return sh_skip_nest(s, u, i + 1, '(', ')');
    if (u->s[i + 1] == '{')
        return sh_skip_nest(s, u, i + 1, '{', '}');
    return i + 1;
}

/* i at '"': after the closing quote. */
size_t sh_skip_dq(sh *s, const unit *u, size_t i)
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
            j = sh_skip_bq(s, u, j);
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
            i = sh_skip_sq(s, u, i);
        else if (c == '"')
            i = sh_skip_dq(s, u, i);
        else if (c == '`')
            i = sh_skip_bq(s, u, i);
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

    if (n < 2 || !sh_name_start(w[0]) || w[n - 1] != '=')
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
            return sh_fail(lx->s, TS_PROB_IMPORT_TOO_LARGE, sh_line_at(u, a),
                           "the text has more than %u words and operators", TS_SHELL_TOKENS_MAX);
        nt = realloc(u->t, nc * sizeof *nt);
        if (nt == NULL)
            return sh_oom(lx->s);
        u->t = nt;
        lx->cap = nc;
    }
    t = &u->t[u->nt++];
    memset(t, 0, sizeof *t);
    t->type = type;
    t->op = op;
    t->a = (uint32_t)a;
    t->b = (uint32_t)b;
    t->line = (uint16_t)sh_line_at(u, a);
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
                return sh_oom(s);
            s->dir = nd;
            s->dcap = nc;
        }
        w = &s->dir[s->ndir];
        memset(w, 0, sizeof *w);
        w->text = malloc(j - i + 1);
        if (w->text == NULL)
            return sh_oom(s);
        memcpy(w->text, u->s + i, j - i);
        w->text[j - i] = '\0';
        w->line = sh_line_at(u, i);
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
            if (sh_spend(lx->s, le - ls + 1, sh_line_at(u, ls)) != 0)
                return -1;
        }
    }
    lx->npend = 0;
    *pi = i;
    return 0;
}

static const struct {
    const char *text;
    unsigned char op;
} ops[] = {
    { ";;&", O_DSEMIAMP }, { "&>>", O_AMPDGT }, { "<<<", O_HERESTR }, { "<<-", O_HEREDOC },
    { "&&", O_AND },       { "||", O_OR },      { "|&", O_PIPEAMP },  { ";;", O_DSEMI },
    { ";&", O_SEMIAMP },   { ">>", O_DGT },     { "<<", O_HEREDOC },  { "<&", O_DUPIN },
    { ">&", O_DUPOUT },    { "<>", O_RW },      { ">|", O_CLOBBER },  { "&>", O_AMPGT },
    { ";", O_SEMI },       { "&", O_AMP },      { "|", O_PIPE },      { "(", O_LP },
    { ")", O_RP },         { "<", O_LT },       { ">", O_GT },
};

/* A comment, to the end of the line; #SBATCH lines at the start of a
 * line are sbatch's directives. */
static int lex_comment(lexer *lx, size_t *pi)
{
    const unit *u = lx->u;
    size_t i = *pi, e = i;

    while (e < u->n && u->s[e] != '\n')
        e++;
    if ((i == 0 || u->s[i - 1] == '\n') && e - i >= 8 && memcmp(u->s + i, "#SBATCH", 7) == 0 &&
        (u->s[i + 7] == ' ' || u->s[i + 7] == '\t') && directive(lx, i, e) != 0)
        return -1;
    *pi = e;
    return 0;
}

/* A newline, then the bodies of the heredocs started on its line. */
static int lex_newline(lexer *lx, size_t *pi)
{
    if (lx_push(lx, T_NL, 0, *pi, *pi + 1) != 0)
        return -1;
    (*pi)++;
    lx->word_start = true;
    if (lx->npend > 0 && heredoc_bodies(lx, pi) != 0)
        return -1;
    return 0;
}

/* (( ... )): an arithmetic command ("( (" would be subshells). */
static int lex_dparen(lexer *lx, size_t *pi)
{
    size_t e = sh_skip_nest(lx->s, lx->u, *pi, '(', ')');

    if (e == NPOS || lx_push(lx, T_DPAREN, 0, *pi, e) != 0)
        return -1;
    *pi = e;
    lx->word_start = true;
    return 0;
}

/* An operator at *pi, the longest that matches: 1 when there is none. */
static int lex_op(lexer *lx, size_t *pi)
{
    unit *u = lx->u;
    size_t i = *pi, k, ol = 0;

    for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        ol = strlen(ops[k].text);
        if (i + ol <= u->n && memcmp(u->s + i, ops[k].text, ol) == 0)
            break;
    }
    if (k == sizeof ops / sizeof ops[0])
        return 1;
    if (lx_push(lx, T_OP, ops[k].op, i, i + ol) != 0)
        return -1;
    if (ops[k].op == O_HEREDOC) {
        u->t[u->nt - 1].hstrip = ol == 3;
        lx->want_delim = u->nt; /* the next token */
    }
    *pi = i + ol;
    lx->word_start = true;
    return 0;
}

/* A word at *pi.  An IO number (2>&1) is part of a redirection, dropped
 * with it; NAME=( opens an array assignment. */
static int lex_word(lexer *lx, size_t *pi)
{
    unit *u = lx->u;
    size_t i = *pi, e = scan_word(lx->s, u, i);

    if (e == NPOS)
        return -1;
    if (e < u->n && (u->s[e] == '<' || u->s[e] == '>')) {
        size_t d = i;

        while (d < e && u->s[d] >= '0' && u->s[d] <= '9')
            d++;
        if (d == e) {
            *pi = e;
            return 0;
        }
    }
    if (e < u->n && u->s[e] == '(' && assign_prefix(u->s + i, e - i)) {
        if (lx_push(lx, T_AOPEN, 0, i, e) != 0)
            return -1;
        *pi = e + 1;
        lx->word_start = true;
        return 0;
    }
    if (lx_push(lx, T_WORD, 0, i, e) != 0)
        return -1;
    if (lx->want_delim != 0 && lx->want_delim == u->nt - 1) {
        if (lx->npend < sizeof lx->pend / sizeof lx->pend[0])
            lx->pend[lx->npend++] = u->nt - 2;
        lx->want_delim = 0;
    }
    *pi = e;
    lx->word_start = false;
    return 0;
}

int sh_lex(sh *s, unit *u)
{
    lexer lx;
    size_t i = 0, k;

    memset(&lx, 0, sizeof lx);
    lx.s = s;
    lx.u = u;
    lx.word_start = true;
    while (i < u->n) {
        char c = u->s[i];
        int rc;

        if (sh_spend(s, 1, sh_line_at(u, i)) != 0)
            return -1;
        if (c == ' ' || c == '\t' || c == '\r') {
            i++;
            lx.word_start = true;
            continue;
        }
        if (c == '\\' && i + 1 < u->n && u->s[i + 1] == '\n') {
            i += 2; /* a line continuation between words */
            continue;
        }
        if (c == '#' && lx.word_start)
            rc = lex_comment(&lx, &i);
        else if (c == '\n')
            rc = lex_newline(&lx, &i);
        else if (c == '(' && i + 1 < u->n && u->s[i + 1] == '(')
            rc = lex_dparen(&lx, &i);
        else if ((rc = lex_op(&lx, &i)) == 1)
            rc = lex_word(&lx, &i);
        if (rc != 0)
            return -1;
    }
    /* A heredoc on the last line without a newline: an empty body. */
    for (k = 0; k < lx.npend; k++)
        u->t[lx.pend[k]].ha = u->t[lx.pend[k]].hb = (uint32_t)u->n;
    return lx_push(&lx, T_EOF, 0, u->n, u->n);
}

void sh_unit_free(unit *u)
{
    free(u->s);
    free(u->ln);
    free(u->t);
    memset(u, 0, sizeof *u);
}
