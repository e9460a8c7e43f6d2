/*
 * ts_cli_report.c - text tables for the trainsize CLI.
 */
#include "ts_cli_report.h"
#include "ts_cli_fmt.h"

#include <math.h>
#include <string.h>

#define TS_PATH_MAX 128

typedef void (*ts_fmt_fn)(char *buf, size_t len, double v);

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

/* "  label ..... human   exact" - the exact column is what scripts and the
 * tests compare against the API's JSON. */
static void row(FILE *out, const char *label, ts_fmt_fn fmt, double v,
                const char *exact_unit)
{
    char human[TS_FMT_LEN], exact[TS_FMT_LEN];

    fmt(human, sizeof human, v);
    if (!isfinite(v))
        snprintf(exact, sizeof exact, "n/a");
    else if (exact_unit && strcmp(exact_unit, "B") == 0)
        snprintf(exact, sizeof exact, "%.0f B", v);
    else
        snprintf(exact, sizeof exact, "%.6g%s%s", v,
                 exact_unit ? " " : "", exact_unit ? exact_unit : "");
    fprintf(out, "  %-26s %16s   %s\n", label, human, exact);
}

static void row_text(FILE *out, const char *label, const char *text)
{
    fprintf(out, "  %-26s %16s\n", label, text);
}

static void fmt_fraction(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.2f %%", v * 100.0);
}

static void fmt_plain(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.1f", v);
}

static void header(FILE *out, const json_t *a)
{
    const json_t *in = ts_report_get(a, "inputs");
    char params[TS_FMT_LEN], active[TS_FMT_LEN], tokens[TS_FMT_LEN];

    ts_fmt_count(params, sizeof params, ts_report_num(a, "params.total"));
    ts_fmt_count(active, sizeof active, ts_report_num(a, "params.active"));
    ts_fmt_count(tokens, sizeof tokens, ts_report_num(in, "tokens"));
    fprintf(out, "trainsize: %s on %.0f x %s\n",
            str_at(in, "model", "custom model"), ts_report_num(in, "gpus"),
            str_at(in, "gpu", "?"));
    fprintf(out, "  layout: dp %.0f x tp %.0f x pp %.0f x cp %.0f (ep %.0f), ZeRO %.0f, "
                 "micro-batch %.0f, global batch %.0f, seq %.0f\n",
            ts_report_num(in, "dp"), ts_report_num(in, "tp"), ts_report_num(in, "pp"),
            ts_report_num(in, "cp"), ts_report_num(in, "ep"), ts_report_num(in, "zero"),
            ts_report_num(in, "micro_batch"), ts_report_num(in, "global_batch"),
            ts_report_num(in, "seq"));
    fprintf(out, "  model: %s params (%s active), %s weights, %s, recompute %s, %s tokens\n",
            params, active, str_at(in, "precision", "?"), str_at(in, "optimizer", "?"),
            str_at(in, "recompute", "?"), tokens);
}

static const struct { const char *key; const char *label; } mem_terms[] = {
    {"weights", "weights"},
    {"grads", "gradients"},
    {"master", "master weights"},
    {"optimizer", "optimizer states"},
    {"activations", "activations"},
    {"overhead", "overhead"},
    {"total", "total"},
};

static void memory_rows(FILE *out, const json_t *mem)
{
    char path[TS_PATH_MAX];
    double host;

    for (size_t i = 0; i < sizeof mem_terms / sizeof mem_terms[0]; i++) {
        snprintf(path, sizeof path, "%s.value", mem_terms[i].key);
        row(out, mem_terms[i].label, ts_fmt_bytes, ts_report_num(mem, path), "B");
    }
    row(out, "HBM", ts_fmt_bytes, ts_report_num(mem, "hbm_bytes"), "B");
    row(out, "headroom", ts_fmt_bytes, ts_report_num(mem, "headroom_bytes"), "B");
    row_text(out, "fits", yes_no(mem, "fits"));
    host = ts_report_num(mem, "host_bytes_per_gpu");
    if (isfinite(host) && host > 0) {
        row(out, "host RAM per GPU", ts_fmt_bytes, host, "B");
        row(out, "host RAM per node", ts_fmt_bytes,
            ts_report_num(mem, "host_bytes_per_node"), "B");
    }
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
    fprintf(out, "  %5s %6s %12s %12s %12s %12s %12s %5s\n", "stage", "layers",
            "weights", "states", "activations", "total", "headroom", "fits");
    json_array_foreach(stages, i, st) {
        char w[TS_FMT_LEN], os[TS_FMT_LEN], act[TS_FMT_LEN], tot[TS_FMT_LEN], room[TS_FMT_LEN];
        double stage = ts_report_num(st, "stage");
        double headroom = ts_report_num(st, "headroom");
        /* grads + fp32 master + optimizer moments: the sharded states */
        double states = ts_report_num(st, "grads") + ts_report_num(st, "master") +
                        ts_report_num(st, "optimizer");

        ts_fmt_bytes(w, sizeof w, ts_report_num(st, "weights"));
        ts_fmt_bytes(os, sizeof os, states);
        ts_fmt_bytes(act, sizeof act, ts_report_num(st, "activations"));
        ts_fmt_bytes(tot, sizeof tot, ts_report_num(st, "total"));
        ts_fmt_bytes(room, sizeof room, fabs(headroom));
        fprintf(out, "  %5.0f %6.0f %12s %12s %12s %12s %s%11s %5s%s\n", stage,
                ts_report_num(st, "layers"), w, os, act, tot,
                headroom < 0 ? "-" : " ", room, yes_no(st, "fits"),
                stage == worst ? "  <- worst" : "");
    }
}

void ts_report_plan(FILE *out, const json_t *a)
{
    const json_t *mem = ts_report_get(a, "memory");
    const json_t *cmp = ts_report_get(a, "compute");
    const json_t *ck = ts_report_get(a, "checkpoint");

    header(out, a);

    fprintf(out, "\nMemory per GPU\n");
    memory_rows(out, mem);
    ts_report_stages(out, mem);

    fprintf(out, "\nCompute\n");
    row(out, "model FLOPs", ts_fmt_flops, ts_report_num(cmp, "model_flops.value"), "FLOP");
    row(out, "hardware FLOPs", ts_fmt_flops, ts_report_num(cmp, "hardware_flops.value"), "FLOP");
    row(out, "GPU-hours", ts_fmt_count, ts_report_num(cmp, "gpu_hours.value"), "h");
    row(out, "wall time", ts_fmt_seconds, ts_report_num(cmp, "wall_seconds.value"), "s");
    row(out, "wall days", fmt_plain, ts_report_num(cmp, "wall_days"), "days");
    row(out, "MFU", fmt_fraction, ts_report_num(cmp, "mfu"), NULL);
    row_text(out, "MFU source", str_at(cmp, "mfu_source", "n/a"));
    row(out, "predicted step", ts_fmt_seconds, ts_report_num(cmp, "step_time.value"), "s");
    row(out, "  compute", ts_fmt_seconds, ts_report_num(cmp, "step.compute"), "s");
    row(out, "  recompute", ts_fmt_seconds, ts_report_num(cmp, "step.recompute"), "s");
    row(out, "  exposed comm", ts_fmt_seconds, ts_report_num(cmp, "step.exposed_comm"), "s");
    row(out, "  pipeline bubble", ts_fmt_seconds, ts_report_num(cmp, "step.pp_bubble"), "s");
    row(out, "  optimizer", ts_fmt_seconds, ts_report_num(cmp, "step.optimizer"), "s");
    row(out, "steps", ts_fmt_count, ts_report_num(cmp, "steps"), NULL);
    row(out, "tokens per second", ts_fmt_count, ts_report_num(cmp, "tokens_per_second"), NULL);

    fprintf(out, "\nCheckpoint\n");
    row(out, "full size (resumable)", ts_fmt_bytes, ts_report_num(ck, "full_bytes.value"), "B");
    row(out, "weights only", ts_fmt_bytes, ts_report_num(ck, "weights_bytes.value"), "B");
    row(out, "shard per GPU", ts_fmt_bytes, ts_report_num(ck, "shard_bytes_per_gpu.value"), "B");
    row(out, "job MTBF", ts_fmt_seconds, ts_report_num(ck, "job_mtbf_s"), "s");
    row(out, "Young interval", ts_fmt_seconds, ts_report_num(ck, "young_interval_s.value"), "s");
    row(out, "Daly interval", ts_fmt_seconds, ts_report_num(ck, "daly_interval_s.value"), "s");
    row(out, "waste at Daly interval", fmt_fraction, ts_report_num(ck, "waste_fraction.value"), NULL);
}

bool ts_report_check(FILE *out, const json_t *a, bool *fits)
{
    const json_t *mem = ts_report_get(a, "memory");
    const json_t *in = ts_report_get(a, "inputs");
    const json_t *f = ts_report_get(mem, "fits");
    char total[TS_FMT_LEN], hbm[TS_FMT_LEN], room[TS_FMT_LEN];
    double headroom = ts_report_num(mem, "headroom_bytes");

    if (!json_is_boolean(f)) {
        fprintf(out, "answer has no memory.fits flag\n");
        return false;
    }
    *fits = json_is_true(f);
    ts_fmt_bytes(total, sizeof total, ts_report_num(mem, "total.value"));
    ts_fmt_bytes(hbm, sizeof hbm, ts_report_num(mem, "hbm_bytes"));
    ts_fmt_bytes(room, sizeof room, fabs(headroom));
    if (*fits)
        fprintf(out, "FITS: %s on %.0f x %s needs %s per GPU of %s HBM, headroom %s\n",
                str_at(in, "model", "model"), ts_report_num(in, "gpus"),
                str_at(in, "gpu", "?"), total, hbm, room);
    else
        fprintf(out, "DOES NOT FIT: %s on %.0f x %s needs %s per GPU but HBM is %s, "
                     "short by %s\n",
                str_at(in, "model", "model"), ts_report_num(in, "gpus"),
                str_at(in, "gpu", "?"), total, hbm, room);
    memory_rows(out, mem);
    return true;
}

void ts_report_search(FILE *out, const json_t *a)
{
    const json_t *list = ts_report_get(a, "results");
    const json_t *in = ts_report_get(a, "inputs");
    size_t i;
    const json_t *r;

    fprintf(out, "%s on %.0f x %s, %s objective: %.0f layouts tried, %.0f fit, %.0f pruned\n",
            str_at(in, "model", "model"), ts_report_num(in, "gpus"), str_at(in, "gpu", "?"),
            str_at(a, "objective", "time"), ts_report_num(a, "counts.tried"),
            ts_report_num(a, "counts.fitting"), ts_report_num(a, "counts.pruned"));
    if (!json_is_true(ts_report_get(a, "found"))) {
        fprintf(out, "nothing fits: %s\n", str_at(a, "reason", "no layout fits"));
        return;
    }
    fprintf(out, "%4s %5s %3s %3s %3s %5s %3s %3s %3s %-9s %4s %-9s %10s %6s %9s %10s  %s\n",
            "rank", "gpus", "tp", "pp", "cp", "dp", "ep", "mb", "vpp", "framework", "zero",
            "recompute", "step", "MFU", "tok/s/GPU", "memory", "why");
    json_array_foreach(list, i, r) {
        char step[TS_FMT_LEN], mem[TS_FMT_LEN];

        ts_fmt_seconds(step, sizeof step, ts_report_num(r, "step_time"));
        ts_fmt_bytes(mem, sizeof mem, ts_report_num(r, "memory_total"));
        fprintf(out, "%4.0f %5.0f %3.0f %3.0f %3.0f %5.0f %3.0f %3.0f %3.0f %-9s %4.0f %-9s %10s %5.1f%% %9.0f %10s  %s\n",
                ts_report_num(r, "rank"), ts_report_num(r, "gpus"), ts_report_num(r, "tp"),
                ts_report_num(r, "pp"), ts_report_num(r, "cp"), ts_report_num(r, "dp"),
                ts_report_num(r, "ep"), ts_report_num(r, "micro_batch"), ts_report_num(r, "vpp"),
                str_at(r, "framework", "?"), ts_report_num(r, "zero"), str_at(r, "recompute", "?"),
                step, 100.0 * ts_report_num(r, "predicted_mfu"),
                ts_report_num(r, "tokens_per_gpu_second"), mem, str_at(r, "why", ""));
    }
}

void ts_report_presets(FILE *out, const json_t *a)
{
    const json_t *list = ts_report_get(a, "presets");
    size_t i;
    const json_t *p;

    fprintf(out, "%-20s %-28s %10s %10s %7s %10s\n", "id", "name", "params",
            "active", "seq", "tokens");
    json_array_foreach(list, i, p) {
        char params[TS_FMT_LEN], active[TS_FMT_LEN], tokens[TS_FMT_LEN];
        double t = ts_report_num(p, "train_tokens");

        ts_fmt_count(params, sizeof params, ts_report_num(p, "params"));
        ts_fmt_count(active, sizeof active, ts_report_num(p, "active_params"));
        if (isfinite(t) && t > 0)
            ts_fmt_count(tokens, sizeof tokens, t);
        else
            snprintf(tokens, sizeof tokens, "-");
        fprintf(out, "%-20s %-28s %10s %10s %7.0f %10s\n", str_at(p, "id", "?"),
                str_at(p, "name", ""), params, active, ts_report_num(p, "seq"), tokens);
    }
}

void ts_report_gpus(FILE *out, const json_t *a)
{
    const json_t *list = ts_report_get(a, "gpus");
    size_t i;
    const json_t *g;

    fprintf(out, "%-14s %-28s %8s %9s %11s %10s\n", "id", "name", "HBM GB",
            "HBM TB/s", "BF16 TFLOPs", "FP8 TFLOPs");
    json_array_foreach(list, i, g) {
        double fp8 = ts_report_num(g, "fp8_tflops");
        char fp8s[TS_FMT_LEN];

        if (isfinite(fp8) && fp8 > 0)
            snprintf(fp8s, sizeof fp8s, "%.0f", fp8);
        else
            snprintf(fp8s, sizeof fp8s, "-");
        fprintf(out, "%-14s %-28s %8.0f %9.2f %11.0f %10s\n", str_at(g, "id", "?"),
                str_at(g, "name", ""), ts_report_num(g, "hbm_bytes") / 1e9,
                ts_report_num(g, "hbm_bw") / 1e12, ts_report_num(g, "bf16_tflops"), fp8s);
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
