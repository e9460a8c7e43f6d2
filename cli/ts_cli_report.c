/*
 * ts_cli_report.c - text tables for the trainsize CLI.
 *
 * Every figure is printed as the API's text ("human": api/ts_terms.c, the
 * output-terms table); the rows of the estimate table and their labels are
 * that table's (ts_cli_terms.h, generated).  The CLI formats only what it
 * derives itself, with the API's own formatter (ts_fmt.h).
 */
#include "ts_cli_report.h"
#include "ts_cli_terms.h"
#include "ts_fmt.h"

#include <math.h>
#include <string.h>

#define TS_PATH_MAX 128

const json_t *ts_report_get(const json_t *root, const char *path)
{
    char key[TS_PATH_MAX];
    const json_t *cur = root;
    const char *p = path;

    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);

        if (n == 0 || n >= sizeof key || !json_is_object(cur))
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        cur = json_object_get(cur, key);
        p += n;
        if (*p == '.')
            p++;
    }
    return cur;
}

double ts_report_num(const json_t *root, const char *path)
{
    const json_t *v = ts_report_get(root, path);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str_at(const json_t *root, const char *path, const char *dflt)
{
    const json_t *v = ts_report_get(root, path);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

static const char *yes_no(const json_t *root, const char *path)
{
    const json_t *v = ts_report_get(root, path);
    if (!json_is_boolean(v))
        return "n/a";
    return json_is_true(v) ? "yes" : "no";
}

/* The figure's text as the answer carries it (ts_cli_terms.h), or NULL. */
static const char *term_text(const json_t *obj, const ts_cli_term *t)
{
    const json_t *v;

    switch (t->shape) {
    case TS_CLI_TERM_OBJECT:
        v = json_object_get(json_object_get(obj, t->key), "human");
        break;
    case TS_CLI_TERM_SIBLING:
        v = json_object_get(obj, t->human_key);
        break;
    case TS_CLI_TERM_MAP:
    default:
        v = json_object_get(json_object_get(obj, "human"), t->key);
        break;
    }
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static double term_value(const json_t *obj, const ts_cli_term *t)
{
    const json_t *v = json_object_get(obj, t->key);

    if (t->shape == TS_CLI_TERM_OBJECT)
        v = json_object_get(v, "value");
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The text of the number at key of obj from its "human" map, or "n/a". */
static const char *map_text(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(json_object_get(obj, "human"), key);

    return json_is_string(v) ? json_string_value(v) : "n/a";
}

/* "  label ..... human   exact" - the human column is the API's text, the
 * exact one what scripts and the tests compare against the JSON. */
static void row(FILE *out, const char *label, const char *human, double v, const char *unit)
{
    char exact[TS_FMT_HUMAN_LEN];

    if (!isfinite(v))
        snprintf(exact, sizeof exact, "n/a");
    else if (strcmp(unit, "B") == 0)
        snprintf(exact, sizeof exact, "%.0f B", v);
    else
        snprintf(exact, sizeof exact, "%.6g%s%s", v, *unit ? " " : "", unit);
    fprintf(out, "  %-*s %16s   %s\n", TS_REPORT_LABEL_W, label, human != NULL ? human : "n/a",
            exact);
}

static void row_text(FILE *out, const char *label, const char *text)
{
    fprintf(out, "  %-*s %16s\n", TS_REPORT_LABEL_W, label, text);
}

/* Every row of the object at path (ts_cli_terms[], the terms table's
 * order); with formulas, each one's formula under it: the answer's for a
 * term, the table's for a number. */
static void section(FILE *out, const json_t *a, const char *path, bool formulas)
{
    const json_t *obj = ts_report_get(a, path);

    for (size_t i = 0; i < ts_cli_term_count; i++) {
        const ts_cli_term *t = &ts_cli_terms[i];
        double v;
        const char *f;

        if (strcmp(t->obj, path) != 0)
            continue;
        v = term_value(obj, t);
        if (t->nonzero && !(isfinite(v) && v != 0))
            continue;
        row(out, t->label, term_text(obj, t), v, t->unit);
        if (!formulas)
            continue;
        f = t->formula;
        if (t->shape == TS_CLI_TERM_OBJECT) {
            const json_t *fj = json_object_get(json_object_get(obj, t->key), "formula");
            f = json_is_string(fj) ? json_string_value(fj) : NULL;
        }
        if (f != NULL && *f != '\0')
            fprintf(out, "      = %s\n", f);
    }
}

static const char *title_of(const char *path)
{
    for (const ts_cli_term_obj *o = ts_cli_term_objs; o->path != NULL; o++)
        if (strcmp(o->path, path) == 0)
            return o->title;
    return path;
}

static void header(FILE *out, const json_t *a)
{
    const json_t *in = ts_report_get(a, "inputs");
    const json_t *params = ts_report_get(a, "params");

    fprintf(out, "trainsize: %s on %.0f x %s\n", str_at(in, "model", "custom model"),
            ts_report_num(in, "gpus"), str_at(in, "gpu", "?"));
    fprintf(out,
            "  layout: dp %.0f x tp %.0f x pp %.0f x cp %.0f (ep %.0f), ZeRO %.0f, "
            "micro-batch %.0f, global batch %.0f, seq %.0f\n",
            ts_report_num(in, "dp"), ts_report_num(in, "tp"), ts_report_num(in, "pp"),
            ts_report_num(in, "cp"), ts_report_num(in, "ep"), ts_report_num(in, "zero"),
            ts_report_num(in, "micro_batch"), ts_report_num(in, "global_batch"),
            ts_report_num(in, "seq"));
    fprintf(out, "  model: %s params (%s active), %s weights, %s, recompute %s, %s tokens\n",
            map_text(params, "total"), map_text(params, "active"), str_at(in, "precision", "?"),
            str_at(in, "optimizer", "?"), str_at(in, "recompute", "?"),
            map_text(ts_report_get(a, "compute"), "tokens"));
}

static void memory_rows(FILE *out, const json_t *a, bool formulas)
{
    section(out, a, "memory", formulas);
    row_text(out, "Fits", yes_no(ts_report_get(a, "memory"), "fits"));
}

void ts_report_stages(FILE *out, const json_t *mem)
{
    const json_t *stages = ts_report_get(mem, "stages");
    double worst = ts_report_num(mem, "worst_stage");
    size_t i;
    const json_t *st;

    if (!json_is_array(stages) || json_array_size(stages) == 0)
        return;
    fprintf(out, "\nPer pipeline stage (the verdict is the worst stage's)\n");
    fprintf(out, "  %5s %6s %12s %12s %12s %12s %12s %5s\n", "stage", "layers", "weights", "states",
            "activations", "total", "headroom", "fits");
    json_array_foreach(stages, i, st)
    {
        char states[TS_FMT_HUMAN_LEN];
        double stage = ts_report_num(st, "stage");

        /* grads + fp32 master + optimizer moments: the sharded states, a
         * sum the answer does not carry, written by the API's formatter */
        ts_fmt_human(states, sizeof states,
                     ts_report_num(st, "grads") + ts_report_num(st, "master") +
                         ts_report_num(st, "optimizer"),
                     TS_FMT_BYTES, "B");
        fprintf(out, "  %5.0f %6.0f %12s %12s %12s %12s %12s %5s%s\n", stage,
                ts_report_num(st, "layers"), map_text(st, "weights"), states,
                map_text(st, "activations"), str_at(st, "total_human", "n/a"),
                map_text(st, "headroom"), yes_no(st, "fits"), stage == worst ? "  <- worst" : "");
    }
}

/* The strings of an answer's array under a title, one per line (nothing
 * when it is empty or absent). */
static void lines(FILE *out, const json_t *arr, const char *title, const char *mark)
{
    size_t i;
    const json_t *v;

    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return;
    fprintf(out, "\n%s\n", title);
    json_array_foreach(arr, i, v) if (json_is_string(v))
        fprintf(out, "%s%s\n", mark, json_string_value(v));
}

void ts_report_plan(FILE *out, const json_t *a, bool formulas)
{
    const json_t *mem = ts_report_get(a, "memory");

    header(out, a);

    fprintf(out, "\n%s\n", title_of("memory"));
    memory_rows(out, a, formulas);
    ts_report_stages(out, mem);

    fprintf(out, "\n%s\n", title_of("compute"));
    section(out, a, "compute", formulas);
    row_text(out, "MFU source", str_at(ts_report_get(a, "compute"), "mfu_source", "n/a"));

    fprintf(out, "\n%s\n", title_of("compute.step"));
    section(out, a, "compute.step", formulas);
    lines(out, ts_report_get(a, "compute.assumptions"), "Assumed", "  ");
    lines(out, ts_report_get(a, "compute.warnings"), "Warnings", "  ! ");

    fprintf(out, "\n%s\n", title_of("checkpoint"));
    section(out, a, "checkpoint", formulas);

    /* issue 28: the time with failures beside the failure-free one above */
    fprintf(out, "\n%s\n", title_of("compute.goodput"));
    section(out, a, "compute.goodput", formulas);
    fprintf(out, "\n%s\n", title_of("compute.energy"));
    section(out, a, "compute.energy", formulas);
}

/* A negative headroom's text without its sign: "short by 2.00 GiB". */
static const char *unsigned_text(const char *s)
{
    return s[0] == '-' ? s + 1 : s;
}

bool ts_report_check(FILE *out, const json_t *a, bool *fits)
{
    const json_t *mem = ts_report_get(a, "memory");
    const json_t *in = ts_report_get(a, "inputs");
    const json_t *f = ts_report_get(mem, "fits");
    const char *total = str_at(mem, "total.human", "n/a");
    const char *hbm = map_text(mem, "hbm_bytes");
    const char *room = unsigned_text(map_text(mem, "headroom_bytes"));

    if (!json_is_boolean(f)) {
        fprintf(out, "answer has no memory.fits flag\n");
        return false;
    }
    *fits = json_is_true(f);
    if (*fits)
        fprintf(out, "FITS: %s on %.0f x %s needs %s per GPU of %s HBM, headroom %s\n",
                str_at(in, "model", "model"), ts_report_num(in, "gpus"), str_at(in, "gpu", "?"),
                total, hbm, room);
    else
        fprintf(out,
                "DOES NOT FIT: %s on %.0f x %s needs %s per GPU but HBM is %s, "
                "short by %s\n",
                str_at(in, "model", "model"), ts_report_num(in, "gpus"), str_at(in, "gpu", "?"),
                total, hbm, room);
    memory_rows(out, a, false);
    return true;
}

void ts_report_budget(FILE *out, const json_t *a)
{
    const json_t *in = ts_report_get(a, "request");

    fprintf(out, "%s\n", str_at(ts_report_get(a, "budget"), "summary", ""));
    fprintf(out, "  %.0f x %s, %s law, %s%s\n", ts_report_num(in, "gpus"), str_at(in, "gpu", "?"),
            str_at(ts_report_get(a, "budget"), "scaling_law", "?"),
            str_at(ts_report_get(a, "budget"), "mode", "?"),
            json_is_true(ts_report_get(a, "budget.converged")) ? "" : " (shape not converged)");
    fprintf(out,
            "  model: %s, %.0f layers, hidden %.0f, %.0f heads (%.0f KV), FFN %.0f, vocab %.0f\n",
            str_at(in, "model", "a planned shape"), ts_report_num(in, "layers"),
            ts_report_num(in, "hidden"), ts_report_num(in, "heads"), ts_report_num(in, "kv_heads"),
            ts_report_num(in, "ffn"), ts_report_num(in, "vocab"));
    fprintf(out,
            "  layout: dp %.0f x tp %.0f x pp %.0f x cp %.0f (ep %.0f), %s ZeRO %.0f, "
            "micro-batch %.0f, global batch %.0f, recompute %s\n",
            ts_report_num(in, "dp"), ts_report_num(in, "tp"), ts_report_num(in, "pp"),
            ts_report_num(in, "cp"), ts_report_num(in, "ep"), str_at(in, "framework", "?"),
            ts_report_num(in, "zero"), ts_report_num(in, "micro_batch"),
            ts_report_num(in, "global_batch"), str_at(in, "recompute", "?"));
    fprintf(out, "\n%s\n", title_of("budget"));
    section(out, a, "budget", false);
    fprintf(out, "\n%s\n", title_of("compute"));
    section(out, a, "compute", false);
    fprintf(out, "\n%s\n", title_of("compute.goodput"));
    section(out, a, "compute.goodput", false);
    fprintf(out, "\n%s\n", title_of("compute.energy"));
    section(out, a, "compute.energy", false);
    if (json_is_true(ts_report_get(a, "truncated")))
        fprintf(out, "\n(the request's work budget ran out: the best layout seen)\n");
}

/* A word for a POSIX shell: as it is when it holds only characters no
 * shell treats specially, else in single quotes (a quote as '\''). */
static void shell_word(FILE *out, const char *s)
{
    const char *p;

    for (p = s; *p != '\0' && (strchr("_-./:+=@,%", *p) != NULL || (*p >= '0' && *p <= '9') ||
                               (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'));
         p++)
        ;
    if (*s != '\0' && *p == '\0') {
        fputs(s, out);
        return;
    }
    fputc('\'', out);
    for (p = s; *p != '\0'; p++) {
        if (*p == '\'')
            fputs("'\\''", out);
        else
            fputc(*p, out);
    }
    fputc('\'', out);
}

void ts_report_command(FILE *out, const json_t *request, double margin)
{
    const char *k;
    const json_t *v;

    fputs("trainsize estimate", out);
    json_object_foreach((json_t *)request, k, v)
    {
        char opt[64];
        size_t i;

        /* null: not given (the API's "use the default"); the option
         * would need a value */
        if (json_is_null(v) || strlen(k) + 3 > sizeof opt)
            continue;
        snprintf(opt, sizeof opt, "%s", k);
        for (i = 0; opt[i] != '\0'; i++)
            opt[i] = opt[i] == '_' ? '-' : opt[i];
        if (json_is_boolean(v)) {
            fprintf(out, json_is_true(v) ? " --%s" : " --no-%s", opt);
        } else if (json_is_string(v)) {
            fprintf(out, " --%s ", opt);
            shell_word(out, json_string_value(v));
        } else if (json_is_number(v)) {
            double d = json_number_value(v);

            if (d == floor(d) && fabs(d) < 9e15)
                fprintf(out, " --%s %.0f", opt, d);
            else
                fprintf(out, " --%s %.17g", opt, d);
        }
    }
    /* the verdict with the search's margin */
    if (isfinite(margin) && margin > 0)
        fprintf(out, " --margin %.15g", margin);
}

void ts_report_search(FILE *out, const json_t *a)
{
    const json_t *list = ts_report_get(a, "results");
    const json_t *in = ts_report_get(a, "inputs");
    bool priced = ts_report_num(in, "gpu_hour_usd") > 0;
    size_t i;
    const json_t *r;

    fprintf(out,
            "%s on %.0f x %s, %s objective: %.0f layouts tried, %.0f fit with %.4g%% of "
            "HBM kept free (%.0f more only without it), %.0f over budget, %.0f pruned\n",
            str_at(in, "model", "model"), ts_report_num(in, "gpus"), str_at(in, "gpu", "?"),
            str_at(a, "objective", "time"), ts_report_num(a, "counts.tried"),
            ts_report_num(a, "counts.fitting"), 100 * ts_report_num(a, "margin"),
            ts_report_num(a, "counts.tight"), ts_report_num(a, "counts.over_budget"),
            ts_report_num(a, "counts.pruned"));
    if (!json_is_true(ts_report_get(a, "found"))) {
        fprintf(out, "nothing fits: %s\n", str_at(a, "reason", "no layout fits"));
        return;
    }
    fprintf(out, "%4s %5s %3s %3s %3s %5s %3s %3s %3s %-9s %4s %-9s %7s %10s %7s %15s %10s %12s",
            "rank", "gpus", "tp", "pp", "cp", "dp", "ep", "mb", "vpp", "framework", "zero",
            "recompute", "batch", "step", "MFU", "per GPU", "memory", "run");
    if (priced)
        fprintf(out, " %12s", "cost");
    fprintf(out, "  %s\n", "why");
    json_array_foreach(list, i, r)
    {
        fprintf(out,
                "%4.0f %5.0f %3.0f %3.0f %3.0f %5.0f %3.0f %3.0f %3.0f %-9s %4.0f %-9s %7.0f "
                "%10s %7s %15s %10s %12s",
                ts_report_num(r, "rank"), ts_report_num(r, "gpus"), ts_report_num(r, "tp"),
                ts_report_num(r, "pp"), ts_report_num(r, "cp"), ts_report_num(r, "dp"),
                ts_report_num(r, "ep"), ts_report_num(r, "micro_batch"), ts_report_num(r, "vpp"),
                str_at(r, "framework", "?"), ts_report_num(r, "zero"), str_at(r, "recompute", "?"),
                ts_report_num(r, "global_batch"), str_at(r, "step_time_human", "n/a"),
                map_text(r, "predicted_mfu"), map_text(r, "tokens_per_gpu_second"),
                str_at(r, "memory_total_human", "n/a"), map_text(r, "goodput_wall_seconds"));
        if (priced)
            fprintf(out, " %12s", map_text(r, "goodput_cost_usd"));
        fprintf(out, "  %s\n", str_at(r, "why", ""));
    }
    /* The run column is what --max-days holds (issue 28). */
    fprintf(out,
            "run%s: the whole run with checkpoint writes, failures and restarts "
            "(compute.goodput), which --max-days%s hold%s\n",
            priced ? " and cost" : "", priced ? " and --max-cost" : "", priced ? "" : "s");
    /* Each row as the command that estimates it (its "request"). */
    fprintf(out, "\nEach layout on its own:\n");
    json_array_foreach(list, i, r)
    {
        const json_t *req = ts_report_get(r, "request");

        if (!json_is_object(req))
            continue;
        fprintf(out, "%4.0f  ", ts_report_num(r, "rank"));
        ts_report_command(out, req, ts_report_num(a, "margin"));
        fputc('\n', out);
    }
}

void ts_report_presets(FILE *out, const json_t *a)
{
    const json_t *list = ts_report_get(a, "presets");
    size_t i;
    const json_t *p;

    fprintf(out, "%-20s %-28s %10s %10s %7s %10s\n", "id", "name", "params", "active", "seq",
            "tokens");
    json_array_foreach(list, i, p)
    {
        double t = ts_report_num(p, "train_tokens");

        fprintf(out, "%-20s %-28s %10s %10s %7.0f %10s\n", str_at(p, "id", "?"),
                str_at(p, "name", ""), map_text(p, "params"), map_text(p, "active_params"),
                ts_report_num(p, "seq"), isfinite(t) && t > 0 ? map_text(p, "train_tokens") : "-");
    }
}

void ts_report_gpus(FILE *out, const json_t *a)
{
    const json_t *list = ts_report_get(a, "gpus");
    size_t i;
    const json_t *g;

    fprintf(out, "%-14s %-28s %10s %10s %13s %13s\n", "id", "name", "HBM", "HBM bw", "BF16 peak",
            "FP8 peak");
    json_array_foreach(list, i, g)
    {
        double fp8 = ts_report_num(g, "fp8_tflops");

        fprintf(out, "%-14s %-28s %10s %10s %13s %13s\n", str_at(g, "id", "?"),
                str_at(g, "name", ""), map_text(g, "hbm_bytes"), map_text(g, "hbm_bw"),
                map_text(g, "bf16_tflops"),
                isfinite(fp8) && fp8 > 0 ? map_text(g, "fp8_tflops") : "-");
    }
}

void ts_report_problem(FILE *out, const json_t *p, long status)
{
    const char *detail = str_at(p, "detail", NULL);
    const char *field = str_at(p, "field", NULL);

    if (!detail)
        detail = str_at(p, "title", NULL);
    if (!detail) {
        fprintf(out, "error: server answered HTTP %ld\n", status);
        return;
    }
    if (field && *field)
        fprintf(out, "error: %s (field %s)\n", detail, field);
    else
        fprintf(out, "error: %s\n", detail);
}
