/*
 * ts_megatron_launch.c - the GPU count a launcher starts: torchrun,
 * python -m torch.distributed.run, deepspeed, srun and #SBATCH options
 * before the training command's entry point.
 * Part of the Megatron-LM importer (ts_megatron.c); shared types in
 * ts_megatron_int.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_ckd.h"
#include "ts_import.h"
#include "ts_megatron_int.h"

/* ---- the launcher: how many GPUs ---- */

typedef struct launch {
    const char *kind;          /* "torchrun", "deepspeed", "srun"; NULL none */
    int64_t nproc, nnodes;     /* torchrun (default 1 x 1) */
    int64_t ds_gpus, ds_nodes; /* deepspeed (0 unset) */
    bool ds_hostfile;
    int64_t nodes, tpn, ntasks, gpn; /* srun / #SBATCH (0 unset) */
    const ts_shell_word *bad;        /* a value not read, and its option */
    char bad_opt[32];
    char bad_val[40];
    unsigned line;
} launch;

static bool opt_is(const char *w, const char *const *names, const char **val)
{
    size_t k;

    for (k = 0; names[k] != NULL; k++) {
        size_t n = strlen(names[k]);

        if (strncmp(w, names[k], n) == 0 && (w[n] == '\0' || w[n] == '=')) {
            *val = w[n] == '=' ? w + n + 1 : NULL;
            return true;
        }
        /* -N4: a short option with its value attached */
        if (n == 2 && names[k][0] == '-' && names[k][1] != '-' && strncmp(w, names[k], 2) == 0 &&
            w[2] >= '0' && w[2] <= '9') {
            *val = w + 2;
            return true;
        }
    }
    return false;
}

/* An option's value as a count in [1, 2^20]; 0 when it is not one. */
static int64_t count_of(launch *l, const char *opt, const ts_shell_word *w, const char *text)
{
    char *end;
    long long v;

    if (w != NULL && (w->ghost || w->why != TS_SHELL_KNOWN)) {
        if (l->bad == NULL) {
            l->bad = w;
            ts_utf8_copy(l->bad_opt, sizeof l->bad_opt, opt);
        }
        return 0;
    }
    errno = 0;
    v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < 1 || v > 1048576) {
        if (l->bad == NULL) {
            l->bad = w;
            ts_utf8_copy(l->bad_opt, sizeof l->bad_opt, opt);
            ts_utf8_copy(l->bad_val, sizeof l->bad_val, text);
        }
        return -1;
    }
    return (int64_t)v;
}

/* w[i] starts a launcher (torchrun, python -m torch.distributed.run,
 * deepspeed, srun): its options follow, in *mode. */
static bool launcher_name(launch *l, const ts_shell_word *w, size_t i, const char **mode)
{
    const char *t = w[i].text;
    const char *b = strrchr(t, '/');

    b = b != NULL ? b + 1 : t;
    if (strcmp(b, "torchrun") == 0 ||
        ((strcmp(t, "torch.distributed.run") == 0 || strcmp(t, "torch.distributed.launch") == 0) &&
         i > 0 && strcmp(w[i - 1].text, "-m") == 0)) {
        *mode = "torchrun";
        if (l->kind == NULL || strcmp(l->kind, "torchrun") != 0) {
            l->kind = "torchrun";
            l->line = w[i].line;
        }
        return true;
    }
    if (strcmp(b, "deepspeed") == 0) {
        *mode = "deepspeed";
        if (l->kind == NULL || strcmp(l->kind, "srun") == 0) {
            l->kind = "deepspeed";
            l->line = w[i].line;
        }
        return true;
    }
    if (strcmp(b, "srun") == 0) {
        *mode = "srun";
        if (l->kind == NULL) {
            l->kind = "srun";
            l->line = w[i].line;
        }
        return true;
    }
    return false;
}

/* torchrun's count options: where option t's value goes (NULL none). */
static int64_t *torchrun_opt(launch *l, const char *t, const char **val)
{
    static const char *const nproc[] = { "--nproc_per_node", "--nproc-per-node", NULL };
    static const char *const nnodes[] = { "--nnodes", NULL };

    if (strcmp(t, "--standalone") == 0) {
        l->nnodes = 1;
        return NULL;
    }
    if (opt_is(t, nproc, val))
        return &l->nproc;
    if (opt_is(t, nnodes, val))
        return &l->nnodes;
    return NULL;
}

/* deepspeed's count options, as torchrun_opt; --hostfile (its value
 * skipped) leaves the node count to the file. */
static int64_t *deepspeed_opt(launch *l, const char *t, const char **val, size_t *i)
{
    static const char *const gpus[] = { "--num_gpus", "--num-gpus", NULL };
    static const char *const nodes[] = { "--num_nodes", "--num-nodes", NULL };
    static const char *const host[] = { "--hostfile", "-H", NULL };

    if (opt_is(t, host, val)) {
        l->ds_hostfile = true;
        if (*val == NULL)
            (*i)++;
        return NULL;
    }
    if (opt_is(t, gpus, val))
        return &l->ds_gpus;
    if (opt_is(t, nodes, val))
        return &l->ds_nodes;
    return NULL;
}

/* --gres=gpu:8 or gpu:h100:8 (val, else the next word): GPUs per node. */
static void srun_gres(launch *l, const ts_shell_word *w, size_t n, size_t *i, const char *val)
{
    const ts_shell_word *vw = &w[*i];
    const char *g = val;
    const char *last;

    if (g == NULL) {
        if (*i + 1 >= n)
            return;
        vw = &w[++*i];
        g = vw->text;
    }
    last = strrchr(g, ':');
    if (strncmp(g, "gpu:", 4) == 0 && last != NULL) {
        int64_t c = count_of(l, "--gres", vw, last + 1);

        if (c > 0)
            l->gpn = c;
    }
}

/* srun's (and #SBATCH's) count options, as torchrun_opt. */
static int64_t *srun_opt(launch *l, const ts_shell_word *w, size_t n, size_t *i, const char **val)
{
    static const char *const nodes[] = { "--nodes", "-N", NULL };
    static const char *const tpn[] = { "--ntasks-per-node", NULL };
    static const char *const ntasks[] = { "--ntasks", "-n", NULL };
    static const char *const gpn[] = { "--gpus-per-node", NULL };
    static const char *const gres[] = { "--gres", NULL };
    const char *t = w[*i].text;

    if (opt_is(t, nodes, val))
        return &l->nodes;
    if (opt_is(t, tpn, val))
        return &l->tpn;
    if (opt_is(t, ntasks, val))
        return &l->ntasks;
    if (opt_is(t, gpn, val))
        return &l->gpn;
    if (opt_is(t, gres, val))
        srun_gres(l, w, n, i, *val);
    return NULL;
}

/* The count of option w[*i] (its value val, else the next word) into
 * *dst; -1 when it is given but not known. */
static void launcher_count(launch *l, const ts_shell_word *w, size_t n, size_t *i, const char *val,
                           int64_t *dst)
{
    const char *t = w[*i].text;
    const ts_shell_word *vw = &w[*i];
    const char *eq = strchr(t, '=');
    char opt[32];
    int64_t c;

    if (val == NULL) {
        if (*i + 1 >= n)
            return;
        vw = &w[++*i];
        val = vw->text;
    }
    snprintf(opt, sizeof opt, "%.*s",
             (int)(eq != NULL ? (size_t)(eq - t) < 31 ? eq - t : 31 : (long)ts_utf8_prec(t, 31)),
             t);
    c = count_of(l, opt, vw, val);
    *dst = c > 0 ? c : -1; /* -1: given, not known */
}

/* Read the launcher options among words[0..n). */
static void launcher_words(launch *l, const ts_shell_word *w, size_t n, bool directives)
{
    const char *mode = directives ? "srun" : NULL;
    size_t i;

    for (i = 0; i < n; i++) {
        const char *t = w[i].text, *val = NULL;
        int64_t *dst;

        if (launcher_name(l, w, i, &mode) || mode == NULL || t[0] != '-')
            continue;
        if (strcmp(mode, "torchrun") == 0)
            dst = torchrun_opt(l, t, &val);
        else if (strcmp(mode, "deepspeed") == 0)
            dst = deepspeed_opt(l, t, &val, &i);
        else
            dst = srun_opt(l, w, n, &i, &val);
        if (dst != NULL)
            launcher_count(l, w, n, &i, val, dst);
    }
}

/* The GPU count the launcher starts; a note either way. */
int mega_emit_gpus(ts_import *im, const ts_shell_cmd *c, ts_api_notes *notes, ts_api_err *err)
{
    launch l;
    int64_t gpus = 0, a = 0, b = 0;
    char how[120] = "";
    char origin[TS_IMPORT_ORIGIN_LEN];

    memset(&l, 0, sizeof l);
    if (c->entry >= c->n)
        return 0; /* an argument list: no launcher */
    launcher_words(&l, c->dir, c->ndir, true);
    if (c->ndir > 0 && l.kind == NULL) {
        l.kind = "srun";
        l.line = c->dir[0].line;
    }
    launcher_words(&l, c->w, c->entry, false);
    if (l.kind == NULL)
        return 0;
    if (strcmp(l.kind, "torchrun") == 0) {
        a = l.nproc != 0 ? l.nproc : 1;
        b = l.nnodes != 0 ? l.nnodes : 1;
        snprintf(how, sizeof how, "torchrun --nproc_per_node %lld x --nnodes %lld", (long long)a,
                 (long long)b);
    } else if (strcmp(l.kind, "deepspeed") == 0) {
        a = l.ds_gpus != 0 ? l.ds_gpus : -1;
        b = l.ds_nodes != 0 ? l.ds_nodes : l.ds_hostfile ? -1 : 1;
        snprintf(how, sizeof how, "deepspeed --num_gpus %lld x --num_nodes %lld", (long long)a,
                 (long long)b);
        if (l.ds_gpus == 0 && l.bad == NULL) {
            ts_import_note_about(notes, TS_FI_GPUS, TS_SRC_MEGATRON,
                                 "megatron_args line %u: deepspeed without --num_gpus uses "
                                 "every GPU of the machine: the GPU count is not read",
                                 l.line);
            return 0;
        }
    } else {
        /* srun: one task per GPU, as Megatron runs under it. */
        if (l.ntasks != 0) {
            a = l.ntasks;
            b = 1;
            snprintf(how, sizeof how, "srun --ntasks %lld", (long long)a);
        } else if (l.tpn != 0 || l.gpn != 0) {
            a = l.tpn != 0 ? l.tpn : l.gpn;
            b = l.nodes != 0 ? l.nodes : 1;
            snprintf(how, sizeof how, "srun --ntasks-per-node %lld x --nodes %lld", (long long)a,
                     (long long)b);
        } else {
            return 0;
        }
    }
    if (a < 0 || b < 0 || l.bad != NULL) {
        char why[TS_API_NOTE_LEN] = "not an integer";

        if (l.bad != NULL && (l.bad->ghost || l.bad->why != TS_SHELL_KNOWN))
            ts_shell_why_text(l.bad, why, sizeof why);
        else if (l.bad != NULL)
            snprintf(why, sizeof why, "'%s', not a count", l.bad_val);
        ts_import_note_about(notes, TS_FI_GPUS, TS_SRC_MEGATRON,
                             "megatron_args line %u: the GPU count is not read from %s: %s is %s",
                             l.line, l.kind, l.bad_opt[0] ? l.bad_opt : "a count", why);
        return 0;
    }
    gpus = ts_ckd_mul_sat(a, b);
    ts_import_note_about(notes, TS_FI_GPUS, TS_SRC_MEGATRON,
                         "megatron_args line %u: gpus %lld from %s", l.line, (long long)gpus, how);
    snprintf(origin, sizeof origin, MEGA_PTR " (%s)", how);
    return ts_import_set_int(im, TS_FI_GPUS, gpus, TS_SRC_MEGATRON, origin, err);
}
