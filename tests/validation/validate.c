/*
 * validate.c - trainsize against measured runs.
 *
 * Reads a validation table (tests/validation/memory_runs.json): each row is
 * a published measurement of a real training run, with the run as an API
 * request, the figure it measured and its source.  The request goes
 * through the api's own parser (so defaults are the service's), the core
 * estimates it, and the row passes when the matching figure is within the
 * row's tolerance.  Fit rows check the verdict.  Excluded rows are listed
 * with their reason, never compared.  Every measured row names where its
 * inputs come from ("record": input -> source) and, for inputs no record
 * gives, "assumed" (input -> reason); the summary reports rows whose inputs
 * are all recorded apart from rows with an assumed input.  A row with
 * "gated": false is printed and counted in the medians but cannot fail the
 * build; its "ungated" field says why.
 *
 *   validate [--markdown | --sources] TABLE.json
 *
 * "--sources" prints only one tab-separated line per source of the
 * measured rows ("origin": rows, median and max |error|) for
 * scripts/accuracy-table.py.
 *
 * Prints every row's error, the median and maximum, and a closing
 * "validation-memory: N passed, N failed" line; exits 1 on any failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ts_api_int.h"

#define GIB      1073741824.0
#define MAX_ROWS 256

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Median and max of |e| over n rows (e is sorted in place). */
static void summary(const char *label, double *e, size_t n)
{
    if (n == 0) {
        printf("%s: no rows\n", label);
        return;
    }
    qsort(e, n, sizeof e[0], cmp_double);
    printf("%s: median |error| %.1f %%, max %.1f %% over %zu rows\n", label,
           100 * (n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2), 100 * e[n - 1], n);
}

/* The figure a row measured, from the estimate. */
static int figure(const ts_memory *m, const char *name, double *out)
{
    if (strcmp(name, "allocated_peak") == 0)
        *out = m->allocated_peak.value;
    else if (strcmp(name, "reserved_peak") == 0)
        *out = m->reserved_peak.value;
    else if (strcmp(name, "total") == 0)
        *out = m->total.value;
    else
        return -1;
    return 0;
}

/* Request -> resolved run -> memory.  0, or -1 with a message printed. */
static int estimate(const char *id, const json_t *config, ts_memory *m)
{
    char *body = json_dumps(config, JSON_COMPACT);
    ts_api_req *req = malloc(sizeof *req);
    ts_api_err aerr;
    ts_error cerr;
    int rc = -1;

    if (body == NULL || req == NULL) {
        fprintf(stderr, "%s: out of memory\n", id);
    } else if (ts_json_parse_run(body, strlen(body), false, req, &aerr) != 0) {
        fprintf(stderr, "%s: request rejected: %u %s %s: %s\n", id, aerr.status, aerr.slug,
                aerr.field, aerr.detail);
    } else if (ts_memory_estimate(&req->run, m, &cerr) != TS_OK) {
        fprintf(stderr, "%s: estimate failed: %s: %s\n", id, cerr.field, cerr.text);
    } else {
        rc = 0;
    }
    free(req);
    free(body);
    return rc;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    bool markdown = false, by_src = false;
    const char *origin[MAX_ROWS];
    double oerr[MAX_ROWS];
    size_t nor = 0;
    json_error_t je;
    json_t *root, *rows, *fits, *excluded, *row;
    double errs[MAX_ROWS], rec[MAX_ROWS], asm_[MAX_ROWS];
    size_t nerr = 0, nrec = 0, nasm = 0, i;
    int passed = 0, failed = 0;

    for (i = 1; i < (size_t)argc; i++) {
        if (strcmp(argv[i], "--markdown") == 0)
            markdown = true;
        else if (strcmp(argv[i], "--sources") == 0)
            by_src = true;
        else
            path = argv[i];
    }
    if (path == NULL) {
        fprintf(stderr, "usage: validate [--markdown | --sources] TABLE.json\n");
        return 2;
    }
    root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (root == NULL) {
        fprintf(stderr, "%s:%d: %s\n", path, je.line, je.text);
        return 2;
    }
    rows = json_object_get(root, "rows");
    fits = json_object_get(root, "fit");
    excluded = json_object_get(root, "excluded");
    if (!json_is_array(rows) || !json_is_array(fits) || !json_is_array(excluded)) {
        fprintf(stderr, "%s: rows, fit and excluded must be arrays\n", path);
        json_decref(root);
        return 2;
    }

    if (markdown) {
        printf("| run | measured | figure | trainsize | error | peak phase | source |\n");
        printf("|---|---:|---|---:|---:|---|---|\n");
    } else if (!by_src) {
        printf("%-36s %-15s %10s %10s %8s  %s\n", "run", "figure", "measured", "trainsize", "error",
               "peak phase");
    }
    json_array_foreach(rows, i, row)
    {
        const char *id = json_string_value(json_object_get(row, "id"));
        const char *fig = json_string_value(json_object_get(row, "figure"));
        double meas = json_number_value(json_object_get(row, "measured_gib"));
        double tol = json_number_value(json_object_get(row, "tolerance"));
        const char *src = json_string_value(json_object_get(row, "source"));
        json_t *as = json_object_get(row, "assumed");
        bool assumed = json_is_object(as) && json_object_size(as) > 0;
        bool gated = !json_is_false(json_object_get(row, "gated"));
        ts_memory m;
        double got, err;
        bool ok;

        if (id == NULL || fig == NULL || !(meas > 0) || !(tol > 0) || src == NULL ||
            !json_is_object(json_object_get(row, "record")) ||
            (!gated && json_string_value(json_object_get(row, "ungated")) == NULL)) {
            fprintf(stderr,
                    "%s: row %zu lacks id, figure, measured_gib, tolerance, source, record "
                    "(or the reason it is not gated)\n",
                    path, i);
            failed++;
            continue;
        }
        if (estimate(id, json_object_get(row, "config"), &m) != 0 || figure(&m, fig, &got) != 0) {
            fprintf(stderr, "%s: no estimate for figure %s\n", id, fig);
            failed++;
            continue;
        }
        got /= GIB;
        err = (got - meas) / meas;
        ok = fabs(err) <= tol;
        if (nor < MAX_ROWS) {
            origin[nor] = json_string_value(json_object_get(row, "origin"));
            oerr[nor++] = fabs(err);
        }
        if (nerr < MAX_ROWS) {
            errs[nerr++] = fabs(err);
            if (assumed)
                asm_[nasm++] = fabs(err);
            else
                rec[nrec++] = fabs(err);
        }
        if (by_src)
            ; /* one line per source, at the end */
        else if (markdown)
            printf("| %s%s%s | %.2f GiB | %s | %.2f GiB | %+.1f %% | %s | %s |\n", id,
                   assumed ? " (assumed input)" : "", gated ? "" : " (not gated)", meas, fig, got,
                   100 * err, ts_phase_name(m.peak_phase), src);
        else
            printf("%-36s %-15s %8.2f G %8.2f G %+7.1f%%  %-9s %s%s\n", id, fig, meas, got,
                   100 * err, ts_phase_name(m.peak_phase),
                   ok      ? "ok"
                   : gated ? "OUT OF TOLERANCE"
                           : "outside, not gated",
                   assumed ? " [assumed input]" : "");
        if (ok || !gated)
            passed++;
        else
            failed++;
    }

    if (by_src) {
        size_t j, k;

        for (i = 0; i < nor; i++) {
            double a[MAX_ROWS], med;
            bool first = origin[i] != NULL;

            for (j = 0; j < i && first; j++)
                first = origin[j] == NULL || strcmp(origin[j], origin[i]) != 0;
            if (!first)
                continue;
            for (j = 0, k = 0; j < nor; j++)
                if (origin[j] != NULL && strcmp(origin[j], origin[i]) == 0)
                    a[k++] = oerr[j];
            qsort(a, k, sizeof a[0], cmp_double);
            med = k % 2 ? a[k / 2] : 0.5 * (a[k / 2 - 1] + a[k / 2]);
            printf("%s\t%zu\t%.1f\t%.1f\n", origin[i], k, 100.0 * med, 100.0 * a[k - 1]);
        }
        for (i = 0; i < nor; i++)
            if (origin[i] == NULL) {
                fprintf(stderr, "%s: measured row %zu has no \"origin\"\n", path, i);
                failed++;
            }
        json_decref(root);
        return failed == 0 ? 0 : 1;
    }
    if (markdown) {
        printf("\n| fit check | expected | trainsize (worst stage total / HBM) | source |\n");
        printf("|---|---|---|---|\n");
    } else {
        printf("\n%-44s %-8s %s\n", "fit check", "expected", "trainsize");
    }
    json_array_foreach(fits, i, row)
    {
        const char *id = json_string_value(json_object_get(row, "id"));
        const char *src = json_string_value(json_object_get(row, "source"));
        json_t *want = json_object_get(row, "fits");
        ts_memory m;
        bool ok;

        if (id == NULL || src == NULL || !json_is_boolean(want) ||
            estimate(id, json_object_get(row, "config"), &m) != 0) {
            fprintf(stderr, "%s: fit row %zu unusable\n", path, i);
            failed++;
            continue;
        }
        ok = m.fits == json_is_true(want);
        if (markdown)
            printf("| %s | %s | %s (%.1f / %.1f GiB) | %s |\n", id,
                   json_is_true(want) ? "fits" : "OOM", m.fits ? "fits" : "OOM",
                   m.total.value / GIB, m.hbm_bytes / GIB, src);
        else
            printf("%-44s %-8s %s (%.1f of %.1f GiB) %s\n", id, json_is_true(want) ? "fits" : "OOM",
                   m.fits ? "fits" : "OOM", m.total.value / GIB, m.hbm_bytes / GIB,
                   ok ? "ok" : "WRONG VERDICT");
        if (ok)
            passed++;
        else
            failed++;
    }

    if (nerr > 0) {
        printf("\n");
        summary("inputs all recorded", rec, nrec);
        summary("an input assumed", asm_, nasm);
        qsort(errs, nerr, sizeof errs[0], cmp_double);
        printf("\nmedian |error| %.1f %%, max %.1f %% over %zu measured rows; %zu rows excluded "
               "(options not modelled, listed in %s)\n",
               100 * (nerr % 2 ? errs[nerr / 2] : (errs[nerr / 2 - 1] + errs[nerr / 2]) / 2),
               100 * errs[nerr - 1], nerr, json_array_size(excluded), path);
    }
    if (!markdown)
        json_array_foreach(excluded, i, row)
            printf("  excluded: %s: %s\n", json_string_value(json_object_get(row, "id")),
                   json_string_value(json_object_get(row, "reason")));
    printf("validation-memory: %d passed, %d failed\n", passed, failed);
    json_decref(root);
    return failed == 0 ? 0 : 1;
}
