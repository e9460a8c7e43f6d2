/*
 * ts_shell_builtin.c - simple commands: the builtins the reader follows
 * (unset, exit, shift, read, eval, test, ...), function calls, bash -c
 * strings and heredoc scripts; any other command may be the training
 * command.
 * Part of the launch-script reader (ts_shell.h); the stages and their
 * shared types are in ts_shell_int.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ts_shell_int.h"

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

/* Does fs run a shell on a string (bash -c "...")?  Index of the string. */
static size_t shell_string(sh *s, const fields *fs, size_t *shell_at)
{
    size_t k;

    for (k = 0; k < fs->n; k++) {
        char *t = sh_cells_text(s, fs->v[k].c, fs->v[k].n);
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

static int call_function(run *r, const func *fn, fields *fs, unsigned line, int *status)
{
    sh *s = r->sh;
    var pos;
    var *save_pos = r->pos;
    const unit *save_u = r->u;
    size_t save_i = r->i;
    int rc;

    if (s->depth >= TS_SHELL_DEPTH_MAX)
        return sh_fail(s, TS_PROB_IMPORT_TOO_LARGE, line,
                       "eval, bash -c, heredocs and function calls nest more than %u deep",
                       TS_SHELL_DEPTH_MAX);
    memset(&pos, 0, sizeof pos);
    if (fs->n > 1 && sh_var_assign(s, &pos, fs->v + 1, fs->n - 1, line) != 0) {
        sh_var_clear(s, &pos);
        return -1;
    }
    pos.set = true;
    s->depth++;
    r->pos = &pos;
    r->u = fn->u;
    r->i = fn->body;
    rc = sh_p_command(r, M_RUN, status);
    if (r->ctl == CTL_RETURN)
        r->ctl = CTL_NONE;
    r->pos = save_pos;
    r->u = save_u;
    r->i = save_i;
    s->depth--;
    sh_var_clear(s, &pos);
    return rc;
}

/* unset NAME...: the variables are forgotten. */
static int b_unset(sh *s, const fields *fs)
{
    size_t k;

    for (k = 1; k < fs->n; k++) {
        char *t = sh_cells_text(s, fs->v[k].c, fs->v[k].n);
        var *v;

        if (t == NULL)
            return -1;
        v = t[0] != '-' ? sh_var_find(s, t, strlen(t)) : NULL;
        if (v != NULL) {
            sh_var_clear(s, v);
            v->maybe = false;
        }
        free(t);
    }
    return 0;
}

/* shift [N]: the positional parameters lose their first N. */
static int b_shift(run *r, const fields *fs, unsigned line)
{
    sh *s = r->sh;
    size_t by = 1, j, rest;
    field *els;
    int rc;

    if (r->pos == NULL || r->pos->ne == 0)
        return 0;
    if (fs->n > 1) {
        char *t = sh_cells_text(s, fs->v[1].c, fs->v[1].n);
        int64_t v2;

        if (t == NULL)
            return -1;
        if (sh_parse_int(t, &v2) && v2 >= 0)
            by = (size_t)v2;
        free(t);
    }
    if (by > r->pos->ne)
        by = r->pos->ne;
    rest = r->pos->ne - by;
    els = malloc((rest ? rest : 1) * sizeof *els);
    if (els == NULL)
        return sh_oom(s);
    for (j = 0; j < rest; j++)
        els[j] = sh_var_elem(r->pos, by + j);
    rc = sh_var_replace(s, r->pos, els, rest, line);
    free(els);
    return rc;
}

/* [ ... ] or test ...: the status of the condition. */
static int b_test(run *r, const fields *fs, bool bracket, unsigned line, int *status)
{
    size_t to = fs->n;
    int v;

    if (bracket) {
        char *last = sh_cells_text(r->sh, fs->v[fs->n - 1].c, fs->v[fs->n - 1].n);

        if (last == NULL)
            return -1;
        if (strcmp(last, "]") == 0)
            to--;
        free(last);
    }
    v = sh_eval_test(r, fs, 1, to, line);
    if (v < 0)
        return -1;
    *status = v;
    return 0;
}

/* read NAME...: each variable holds a value not known here. */
static int b_read(sh *s, const fields *fs, unsigned line)
{
    size_t k;

    for (k = 1; k < fs->n; k++) {
        char *t = sh_cells_text(s, fs->v[k].c, fs->v[k].n);

        if (t == NULL)
            return -1;
        if (t[0] != '-' && sh_name_start(t[0])) {
            var *v = sh_var_make(s, t, strlen(t), line);
            cell g;
            field f;

            if (v == NULL) {
                free(t);
                return -1;
            }
            memset(&g, 0, sizeof g);
            g.f = CF_GHOST;
            g.taint = sh_taint_add(s, TS_SHELL_COMMAND, "read", 4, line, 0);
            g.line = (uint16_t)line;
            memset(&f, 0, sizeof f);
            f.c = &g;
            f.n = 1;
            if (sh_var_assign(s, v, &f, 1, line) != 0) {
                free(t);
                return -1;
            }
        }
        free(t);
    }
    return 0;
}

/* eval WORD...: the words joined by spaces, read as a script. */
static int b_eval(run *r, const fields *fs, unsigned line)
{
    sh *s = r->sh;
    cbuf all = { 0 };
    size_t k;
    int rc;

    for (k = 1; k < fs->n; k++)
        if ((k > 1 && sh_cb_push(s, &all, ' ', 0, 0, (uint16_t)line) != 0) ||
            sh_cb_cat(s, &all, fs->v[k].c, fs->v[k].n, 0, line) != 0) {
            sh_cb_free(&all);
            return -1;
        }
    rc = sh_nested(r, all.v, all.n, NULL, s->prefix, s->nprefix, line);
    sh_cb_free(&all);
    return rc;
}

/* The builtins the reader follows: 1 when name is none of them. */
static int run_builtin(run *r, const char *name, fields *fs, unsigned line, int *status)
{
    sh *s = r->sh;
    int rc = 0;

#define IS(w) (strcmp(name, (w)) == 0)
    if (IS("unset")) {
        rc = b_unset(s, fs);
        *status = ST_TRUE;
    } else if (IS("exit")) {
        r->ctl = CTL_EXIT;
        if (s->depth == 0 || s->exit_line == 0)
            s->exit_line = (uint16_t)line;
        *status = ST_TRUE;
    } else if (IS("return") || IS("break") || IS("continue")) {
        r->ctl = IS("return") ? CTL_RETURN : IS("break") ? CTL_BREAK : CTL_CONTINUE;
        *status = ST_TRUE;
    } else if (IS("true") || IS(":")) {
        *status = ST_TRUE;
    } else if (IS("false")) {
        *status = ST_FALSE;
    } else if (IS("shift")) {
        rc = b_shift(r, fs, line);
        *status = ST_TRUE;
    } else if (IS("set") || IS("cd") || IS("echo") || IS("printf") || IS("mkdir") || IS("pushd") ||
               IS("popd") || IS("trap") || IS("ulimit") || IS("umask") || IS("wait") ||
               IS("sleep")) {
        *status = ST_ASSUMED;
    } else if (IS("[") || IS("test")) {
        rc = b_test(r, fs, IS("["), line, status);
    } else if (IS("source") || IS(".")) {
        char *t = fs->n > 1 ? sh_cells_text(s, fs->v[1].c, fs->v[1].n) : NULL;

        sh_skipped(s, "source", t != NULL ? t : "", line);
        free(t);
        *status = ST_ASSUMED;
    } else if (IS("read")) {
        rc = b_read(s, fs, line);
        *status = ST_UNKNOWN;
    } else if (IS("eval")) {
        rc = b_eval(r, fs, line);
        *status = ST_ASSUMED;
    } else {
        rc = 1;
    }
#undef IS
    return rc;
}

/* bash -c "STRING" $0 $1 ...: STRING is a script, wrapped by the words
 * before the shell (srun ... bash -c); fs->v[str] is STRING. */
static int run_shell_string(run *r, fields *fs, size_t str, size_t shell_at, unsigned line)
{
    sh *s = r->sh;
    var pos;
    field *pre;
    size_t npre = s->nprefix + shell_at, j;
    int rc;

    memset(&pos, 0, sizeof pos);
    if (fs->n > str + 2 && sh_var_assign(s, &pos, fs->v + str + 2, fs->n - str - 2, line) != 0) {
        sh_var_clear(s, &pos);
        return -1;
    }
    pos.set = true;
    pre = malloc((npre ? npre : 1) * sizeof *pre);
    if (pre == NULL) {
        sh_var_clear(s, &pos);
        return sh_oom(s);
    }
    for (j = 0; j < s->nprefix; j++)
        pre[j] = s->prefix[j];
    for (j = 0; j < shell_at; j++)
        pre[s->nprefix + j] = fs->v[j];
    rc = sh_nested(r, fs->v[str].c, fs->v[str].n, &pos, pre, npre, line);
    free(pre);
    sh_var_clear(s, &pos);
    return rc;
}

/* Is the last word that is not an option a shell, sbatch or qsub?  1
 * yes, 0 no, -1 error. */
static int feeds_script(sh *s, const fields *fs)
{
    char *last = NULL;
    const char *b;
    size_t k;
    int script;

    for (k = fs->n; k > 0; k--) {
        char *t = sh_cells_text(s, fs->v[k - 1].c, fs->v[k - 1].n);

        if (t == NULL)
            return -1;
        if (t[0] != '-') {
            last = t;
            break;
        }
        free(t);
    }
    if (last == NULL)
        return 0;
    b = base_name(last);
    script = is_shell(last) || strcmp(b, "sbatch") == 0 || strcmp(b, "qsub") == 0;
    free(last);
    return script;
}

/* The body of heredoc as cells: quoted (<<'EOF') literal, else expanded
 * as in double quotes. */
static int heredoc_body(run *r, const tok *heredoc, cbuf *body)
{
    sh *s = r->sh;
    xstate x;
    size_t j;

    if (!heredoc->hq) {
        memset(&x, 0, sizeof x);
        x.r = r;
        x.mode = XM_JOIN;
        x.out = body;
        return sh_x_range(&x, heredoc->ha, heredoc->hb, CTX_HD);
    }
    for (j = heredoc->ha; j < heredoc->hb; j++) {
        if (heredoc->hstrip && (j == heredoc->ha || r->u->s[j - 1] == '\n'))
            while (j < heredoc->hb && r->u->s[j] == '\t')
                j++;
        if (j < heredoc->hb &&
            sh_cb_push(s, body, (unsigned char)r->u->s[j], CF_QUOTED, 0, r->u->ln[j]) != 0)
            return -1;
    }
    return 0;
}

/* sbatch <<EOF / bash <<EOF: the heredoc is the script.  1 when the
 * command does not read it as one. */
static int run_heredoc(run *r, const fields *fs, const tok *heredoc, unsigned line)
{
    sh *s = r->sh;
    cbuf body = { 0 };
    int rc = feeds_script(s, fs);

    if (rc <= 0)
        return rc < 0 ? -1 : 1;
    if (heredoc_body(r, heredoc, &body) != 0) {
        sh_cb_free(&body);
        return -1;
    }
    /* sbatch's own words are not a launcher's: the prefix stays */
    rc = sh_nested(r, body.v, body.n, NULL, s->prefix, s->nprefix, line);
    sh_cb_free(&body);
    return rc;
}

/* bash other.sh / sbatch job.sh: another file, not read; a note says so. */
static int note_other_file(sh *s, const fields *fs, unsigned line)
{
    char *t0 = sh_cells_text(s, fs->v[0].c, fs->v[0].n);

    if (t0 == NULL)
        return -1;
    if ((is_shell(t0) || strcmp(base_name(t0), "sbatch") == 0) && fs->n > 1) {
        char *t1 = sh_cells_text(s, fs->v[fs->n - 1].c, fs->v[fs->n - 1].n);

        if (t1 == NULL) {
            free(t0);
            return -1;
        }
        if (strlen(t1) > 3 && strcmp(t1 + strlen(t1) - 3, ".sh") == 0)
            sh_skipped(s, base_name(t0), t1, line);
        free(t1);
    }
    free(t0);
    return 0;
}

/* A command that is not a builtin: a function, a shell on a string or a
 * heredoc, else a possible training command. */
static int run_other(run *r, const char *name, fields *fs, const tok *heredoc, unsigned line,
                     int *status)
{
    sh *s = r->sh;
    size_t k, shell_at = 0, str;
    int rc;

    for (k = s->nfuncs; k > 0; k--)
        if (strcmp(s->funcs[k - 1].name, name) == 0)
            return call_function(r, &s->funcs[k - 1], fs, line, status);
    str = shell_string(s, fs, &shell_at);
    if (s->failed)
        return -1;
    *status = ST_ASSUMED;
    if (str != NPOS)
        return run_shell_string(r, fs, str, shell_at, line);
    if (heredoc != NULL) {
        rc = run_heredoc(r, fs, heredoc, line);
        if (rc != 1)
            return rc;
    }
    if (note_other_file(s, fs, line) != 0)
        return -1;
    return sh_consider(r, fs, line);
}

/* Whether a > redirection writes the standard output: the lexer drops an
 * IO number (2>) with its word, so it is read back from the text (digits
 * alone before the operator, at a word's start). */
static bool to_stdout(const unit *u, const tok *t)
{
    size_t a = t->a;

    while (a > 0 && u->s[a - 1] >= '0' && u->s[a - 1] <= '9')
        a--;
    if (a == t->a || (a > 0 && strchr(" \t\n;&|()", u->s[a - 1]) == NULL))
        return true;
    return t->a - a == 1 && u->s[a] == '1';
}

/* A simple command's tokens, found before anything runs. */
typedef struct simple {
    size_t start;   /* its first token */
    size_t cmd_tok; /* the command word (have_cmd) */
    size_t end;     /* the token that ends it */
    bool have_cmd;
    bool declare; /* the command is export / declare / ... */
    unsigned line;
    const tok *heredoc; /* its last << redirection */
    const tok *out;     /* the target word of its last > redirection */
} simple;

/* cat <<EOF > FILE: the file is kept (ts_shell_file), as an importer
 * may read a file by that name; nothing is written.  A text this reader
 * cannot expand (a construct it refuses) is no reason to refuse the
 * script, as nothing may read the file: it is kept as unsupported.  Out of
 * memory and the work bound stay fatal. */
static int keep_file(run *r, const tok *heredoc, const tok *out, unsigned line)
{
    sh *s = r->sh;
    ts_api_err saved = *s->err;
    cbuf path = { 0 }, body = { 0 };
    int rc = -1;

    if (sh_expand(r, out->a, out->b, XM_JOIN, &path) == 0) {
        rc = heredoc_body(r, heredoc, &body) == 0 ? sh_keep_file(s, &path, &body, line) : -1;
        if (rc != 0 && s->failed && s->err->status < 500 && s->work <= TS_SHELL_WORK_MAX) {
            *s->err = saved;
            s->failed = false;
            rc = sh_keep_file(s, &path, NULL, line);
        }
    }
    sh_cb_free(&path);
    sh_cb_free(&body);
    return rc;
}

static int run_simple(run *r, fields *fs, const simple *sc, int *status)
{
    const tok *heredoc = sc->heredoc;
    unsigned line = sc->line;
    sh *s = r->sh;
    char *name;
    int rc;

    *status = ST_ASSUMED;
    if (fs->n == 0)
        return 0;
    if (s->depth == 0)
        s->outer_line = (uint16_t)line;
    name = sh_cells_text(s, fs->v[0].c, fs->v[0].n);
    if (name == NULL)
        return -1;
    if (strcmp(name, "export") == 0 || strcmp(name, "declare") == 0 ||
        strcmp(name, "typeset") == 0 || strcmp(name, "local") == 0 ||
        strcmp(name, "readonly") == 0) {
        free(name);
        *status = ST_TRUE;
        return sh_p_declare(r, M_RUN, sc->cmd_tok + 1, sc->end);
    }
    if (strcmp(name, "cat") == 0 && fs->n == 1 && heredoc != NULL && sc->out != NULL) {
        free(name);
        return keep_file(r, heredoc, sc->out, line);
    }
    rc = run_builtin(r, name, fs, line, status);
    if (rc == 1)
        rc = run_other(r, name, fs, heredoc, line, status);
    free(name);
    return rc;
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

bool sh_is_redirect(const tok *t)
{
    return t->type == T_OP && t->op >= O_LT;
}

/* Pass 1: find the command word and the end; assignments before the
 * command word are the command's environment only. */
static void scan_simple(run *r, simple *sc)
{
    memset(sc, 0, sizeof *sc);
    sc->start = r->i;
    sc->line = sh_cur(r)->line;
    while (!ends_command(sh_cur(r))) {
        const tok *t = sh_cur(r);

        if (sh_is_redirect(t)) {
            if (t->op == O_HEREDOC)
                sc->heredoc = t;
            r->i++;
            if (sh_cur(r)->type == T_WORD) {
                if ((t->op == O_GT || t->op == O_CLOBBER) && to_stdout(r->u, t))
                    sc->out = sh_cur(r);
                r->i++;
            }
            continue;
        }
        if (t->type == T_AOPEN) { /* A=( ... ), declare -a A=( ... ) */
            r->i++;
            while (sh_cur(r)->type != T_EOF && !sh_is_op(sh_cur(r), O_RP))
                r->i++;
            if (sh_is_op(sh_cur(r), O_RP))
                r->i++;
            continue;
        }
        if (t->type == T_DPAREN || (!sc->have_cmd && sh_is_assignment(r, t))) {
            r->i++;
            continue;
        }
        if (!sc->have_cmd) {
            sc->have_cmd = true;
            sc->cmd_tok = r->i;
            sc->declare = sh_tok_is(r, t, "export") || sh_tok_is(r, t, "declare") ||
                          sh_tok_is(r, t, "typeset") || sh_tok_is(r, t, "local") ||
                          sh_tok_is(r, t, "readonly");
        }
        r->i++;
    }
    sc->end = r->i;
}

/* Pass 2: expand the command's words (redirections and their targets
 * left out) into fs. */
static int expand_words(run *r, const simple *sc, fields *fs)
{
    for (r->i = sc->cmd_tok; r->i < sc->end; r->i++) {
        const tok *t = sh_cur(r);

        if (sh_is_redirect(t)) {
            r->i++;
            continue;
        }
        if (t->type == T_WORD && sh_expand_fields(r, t, fs) != 0)
            return -1;
    }
    r->i = sc->end;
    return 0;
}

int sh_p_simple(run *r, int mode, int *status)
{
    simple sc;
    fields fs = { 0 };
    int rc;

    *status = ST_TRUE;
    scan_simple(r, &sc);
    if (!sc.have_cmd) /* assignments only: they stay */
        return sh_p_declare(r, mode, sc.start, sc.end);
    if (mode != M_RUN) {
        if (sc.declare && mode == M_MAYBE && sh_p_declare(r, M_MAYBE, sc.cmd_tok + 1, sc.end) != 0)
            return -1;
        r->i = sc.end;
        *status = ST_UNKNOWN;
        return 0;
    }
    if (sc.declare) {
        r->i = sc.end;
        return sh_p_declare(r, M_RUN, sc.cmd_tok + 1, sc.end);
    }
    rc = expand_words(r, &sc, &fs);
    if (rc == 0)
        rc = run_simple(r, &fs, &sc, status);
    sh_fields_free(&fs);
    return rc;
}
