/*
 * ts_shell.c - a launch script read as bash reads it (see ts_shell.h):
 * the entry point, the training command chosen among the commands run,
 * nested texts (bash -c, eval, heredocs) and the notes on what was not
 * read.  The stages are in ts_shell_*.c, their shared types in
 * ts_shell_int.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_import.h"
#include "ts_shell_int.h"

/* ------------------------------------------------------------------ */
/* Nested texts (bash -c, eval, heredocs)                             */

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
        return sh_oom(s);
    for (k = 0; k < n; k++) {
        bool ghost = (c[k].f & CF_GHOST) != 0;

        if (o + 4 >= cap || o + 4 > TS_SHELL_TEXT_MAX)
            return sh_fail(s, TS_PROB_IMPORT_TOO_LARGE, c[k].line,
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

int sh_nested(run *r, const cell *c, size_t n, var *pos, field *prefix, size_t nprefix,
              unsigned line)
{
    sh *s = r->sh;
    unit u;
    int rc;

    if (s->depth >= TS_SHELL_DEPTH_MAX)
        return sh_fail(s, TS_PROB_IMPORT_TOO_LARGE, line,
                       "eval, bash -c, heredocs and function calls nest more than %u deep",
                       TS_SHELL_DEPTH_MAX);
    if (unit_from_cells(s, c, n, &u) != 0) {
        sh_unit_free(&u);
        return -1;
    }
    s->depth++;
    rc = sh_lex(s, &u);
    if (rc == 0)
        rc = sh_run_unit(s, &u, pos, prefix, nprefix);
    s->depth--;
    sh_unit_free(&u);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Notes on what was not read                                         */

void sh_undecided(run *r, unsigned line)
{
    sh *s = r->sh;
    size_t k;

    for (k = 0; k < s->nundecided; k++)
        if (s->undecided[k] == line)
            return;
    if (s->nundecided < UNDECIDED_MAX)
        s->undecided[s->nundecided++] = (uint16_t)line;
}

void sh_skipped(sh *s, const char *what, const char *arg, unsigned line)
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

/* A word from n cells: its text, and why it is not known (taint). */
static int word_set(sh *s, ts_shell_word *w, const cell *c, size_t n, uint16_t taint, unsigned line)
{
    memset(w, 0, sizeof *w);
    w->text = sh_cells_text(s, c, n);
    if (w->text == NULL)
        return -1;
    w->line = line;
    if (taint != 0) {
        const tinfo *t = &s->taints[taint];

        w->why = (ts_shell_why)t->why;
        memcpy(w->why_name, t->name, sizeof w->why_name);
        w->why_name[sizeof w->why_name - 1] = '\0';
        w->why_line = t->line;
        w->why_cond = t->cond;
    }
    return 0;
}

static int cand_add(sh *s, cand *c, const field *f)
{
    ts_shell_word *w;

    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 32;
        ts_shell_word *nw;

        if (c->n >= TS_SHELL_WORDS_MAX)
            return sh_fail(s, TS_PROB_IMPORT_TOO_LARGE, f->line,
                           "the training command has more than %u words", TS_SHELL_WORDS_MAX);
        nw = realloc(c->w, nc * sizeof *nw);
        if (nw == NULL)
            return sh_oom(s);
        c->w = nw;
        c->cap = nc;
    }
    w = &c->w[c->n];
    if (word_set(s, w, f->c, f->n, f->taint, f->line) != 0)
        return -1;
    c->n++;
    w->ghost = f->ghost;
    return 0;
}

static void file_free(ts_shell_file *f)
{
    free(f->path.text);
    free(f->text.text);
    memset(f, 0, sizeof *f);
}

int sh_keep_file(sh *s, const cbuf *path, const cbuf *body, unsigned line)
{
    ts_shell_file f;
    size_t k;

    if (word_set(s, &f.path, path->v, path->n, sh_first_taint(path->v, path->n), line) != 0)
        return -1;
    if (body == NULL) {
        /* a text this reader does not expand: kept, as one not known */
        memset(&f.text, 0, sizeof f.text);
        f.text.text = calloc(1, 1);
        if (f.text.text == NULL) {
            free(f.path.text);
            return sh_oom(s);
        }
        f.text.line = line;
        f.text.why = TS_SHELL_UNSUPPORTED;
        snprintf(f.text.why_name, sizeof f.text.why_name, "the heredoc");
        f.text.why_line = line;
    } else if (word_set(s, &f.text, body->v, body->n, sh_first_taint(body->v, body->n), line) !=
               0) {
        free(f.path.text);
        return -1;
    }
    for (k = 0; k < s->nfiles && strcmp(s->files[k].path.text, f.path.text) != 0; k++)
        ;
    if (k == TS_SHELL_FILES_MAX) { /* past the cap: the first paths are kept, and said */
        file_free(&f);
        s->files_dropped = true;
        return 0;
    }
    if (k == s->nfiles)
        s->nfiles++;
    else
        file_free(&s->files[k]);
    s->files[k] = f;
    return 0;
}

/* A command that is not a builtin: is it the training command? */
int sh_consider(run *r, const fields *fs, unsigned line)
{
    sh *s = r->sh;
    size_t k, entry = fs->n, flags = 0;
    char *first;
    bool args_list;

    for (k = 0; k < fs->n; k++) {
        char *t = sh_cells_text(s, fs->v[k].c, fs->v[k].n);
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
    first = fs->n > 0 ? sh_cells_text(s, fs->v[0].c, fs->v[0].n) : NULL;
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
    for (k = 0; k < s->nfiles; k++)
        file_free(&s->files[k]);
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

/* The text as the first unit: every byte's line; control characters
 * (which the markers of rebuilt texts use) refused. */
static int unit_from_text(sh *s, const char *text, size_t len, unit *u)
{
    size_t k;
    unsigned line = 1;

    u->s = malloc(len + 1);
    u->ln = malloc((len + 1) * sizeof *u->ln);
    if (u->s == NULL || u->ln == NULL)
        return sh_oom(s);
    for (k = 0; k < len; k++) {
        unsigned char c = (unsigned char)text[k];

        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
            return sh_fail(s, TS_PROB_INVALID_VALUE, line, "control character U+%04X in the text",
                           c);
        u->s[k] = (char)c;
        u->ln[k] = (uint16_t)line;
        if (c == '\n')
            line++;
    }
    u->s[len] = '\0';
    u->ln[len] = (uint16_t)line;
    u->n = len;
    return 0;
}

/* The answer: the training command, else the argument list, moved from
 * s into cmd; notes on which command was read. */
static void take_command(sh *s, ts_shell_cmd *cmd, ts_api_notes *notes)
{
    if (s->best.n > 0) {
        cmd->w = s->best.w;
        cmd->n = s->best.n;
        cmd->entry = s->best.entry;
        cmd->line = s->best.line;
        memset(&s->best, 0, sizeof s->best);
        ts_import_note(notes, "%s: the training command is the one at line %u (%s)", s->member,
                       cmd->line, cmd->w[cmd->entry].text);
        if (s->npy > 1) {
            char list[64];

            lines_list(list, sizeof list, s->py_lines,
                       s->npy < sizeof s->py_lines / sizeof s->py_lines[0]
                           ? s->npy
                           : sizeof s->py_lines / sizeof s->py_lines[0]);
            ts_import_note(notes,
                           "%s: %zu commands run a Python script (lines %s); the one "
                           "with the most --flags is read",
                           s->member, s->npy, list);
        }
    } else if (s->args.n > 0) {
        cmd->w = s->args.w;
        cmd->n = s->args.n;
        cmd->entry = s->args.n;
        cmd->line = s->args.line;
        memset(&s->args, 0, sizeof s->args);
    }
    cmd->dir = s->dir;
    cmd->ndir = s->ndir;
    s->dir = NULL;
    s->ndir = 0;
    memcpy(cmd->files, s->files, sizeof cmd->files);
    cmd->nfiles = s->nfiles;
    memset(s->files, 0, sizeof s->files);
    s->nfiles = 0;
}

/* Notes on what was not read: conditions, other files, an early exit. */
static void note_not_read(const sh *s, const ts_shell_cmd *cmd, ts_api_notes *notes)
{
    if (s->nundecided > 0) {
        char list[96];

        lines_list(list, sizeof list, s->undecided, s->nundecided);
        ts_import_note(notes,
                       "%s: conditions at line%s %s depend on files, commands or "
                       "values not known here; the branches were not read",
                       s->member, s->nundecided > 1 ? "s" : "", list);
    }
    if (s->skipped[0] != '\0')
        ts_import_note(notes, "%s: other files are not read: %s", s->member, s->skipped);
    if (s->files_dropped)
        ts_import_note(notes,
                       "%s: the script writes more than %d files from heredocs; the first %d "
                       "are kept",
                       s->member, TS_SHELL_FILES_MAX, TS_SHELL_FILES_MAX);
    if (cmd->n == 0 && s->exit_line != 0)
        ts_import_note(notes, "%s: the script exits at line %u, before any training command",
                       s->member, s->exit_line);
}

int ts_shell_read(const char *text, size_t len, const char *ptr, ts_shell_cmd *cmd,
                  ts_api_notes *notes, ts_api_err *err)
{
    sh s;
    unit u;
    int rc;

    memset(cmd, 0, sizeof *cmd);
    memset(&s, 0, sizeof s);
    memset(&u, 0, sizeof u);
    s.ptr = ptr;
    s.member = ptr[0] == '/' ? ptr + 1 : ptr;
    s.err = err;
    if (len > TS_SHELL_TEXT_MAX)
        return sh_fail(&s, TS_PROB_IMPORT_TOO_LARGE, 0, "the text is %zu bytes, more than %u", len,
                       TS_SHELL_TEXT_MAX);
    rc = unit_from_text(&s, text, len, &u);
    if (rc == 0)
        rc = sh_lex(&s, &u);
    if (rc == 0)
        rc = sh_run_unit(&s, &u, NULL, NULL, 0);
    sh_unit_free(&u);
    if (rc != 0 || s.failed) {
        sh_free(&s);
        return -1;
    }
    take_command(&s, cmd, notes);
    note_not_read(&s, cmd, notes);
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
    for (k = 0; k < cmd->nfiles; k++)
        file_free(&cmd->files[k]);
    memset(cmd, 0, sizeof *cmd);
}

void ts_shell_why_text(const ts_shell_word *w, char *buf, size_t size)
{
    const char *n = w->why_name;
    int p = ts_utf8_prec(n, 40);

    switch (w->why) {
    case TS_SHELL_UNSET:
        snprintf(buf, size,
                 "$%.*s (line %u), which the script never assigns (assign it, or "
                 "give a default: ${%.*s:-value})",
                 p, n, w->why_line, p, n);
        break;
    case TS_SHELL_MAYBE:
        snprintf(buf, size,
                 "$%.*s, assigned only at line %u in a branch of the condition at "
                 "line %u, which is not evaluated here",
                 p, n, w->why_line, w->why_cond);
        break;
    case TS_SHELL_ARG:
        snprintf(buf, size,
                 "$%.*s (line %u), a script argument, and none is given here "
                 "(write the value, or ${%.*s:-value})",
                 p, n, w->why_line, p, n);
        break;
    case TS_SHELL_COMMAND:
        snprintf(buf, size, "the output of %.*s (line %u), a command that is not run here", p, n,
                 w->why_line);
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
