/*
 * step_time.c - validation of the step-time model (core/ts_step.c) against
 * measured runs (tests/validation/step_time.json).
 *
 * Every row is a POST /v1/compute body, parsed by the api's own parser so
 * the rows exercise exactly what a user would send, and a measurement in
 * seconds per step or tokens/s per GPU (never an MFU: conventions differ).
 * Prints each row's error; fails when a row is outside the file's
 * tolerance or the median absolute error is above its median tolerance.
 * "--markdown" prints the README table instead of the plain listing;
 * "--sources" prints only one tab-separated line per source ("origin":
 * rows, median and max |error|, mean signed error), which
 * scripts/accuracy-table.py turns into the accuracy table of README and
 * docs/accuracy.md.  "--rows" prints one tab-separated line per row for
 * the same script's cross-source lines ("origin", hidden, GPUs, tp, GPUs
 * per node, signed error in %).
 *
 * Every row names where its inputs come from: "record" (input -> the run's
 * own record, path@commit) and, for an input no record gives, "assumed"
 * (input -> reason).  The summary reports rows whose inputs are all
 * recorded apart from rows with an assumed input, and each "group" (a
 * GPU's table) apart: n, median and max |error|, mean signed error.
 *
 * Every row also ran, on the GPU it names: its plan must be predicted to
 * fit that GPU's HBM.  A row predicted over it fails the file unless the
 * row sets "fits_gated": false with a "fits_note" naming what is not
 * modelled, or the file sets "fits_gated": false (held-back files: their
 * rows are reported, not looked at).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api_int.h"

/* vTrain's main file is the largest: 1,033 rows */
#define MAX_ROWS 2048

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* n, median |e|, max |e|, mean e of the rows selected by `pick`. */
static void summary(const char *label, const double *err, const bool *pick, size_t n, bool md)
{
    double a[MAX_ROWS], sum = 0, med;
    size_t i, k = 0;

    for (i = 0; i < n; i++)
        if (pick[i]) {
            a[k++] = fabs(err[i]);
            sum += err[i];
        }
    if (k == 0)
        return;
    qsort(a, k, sizeof a[0], cmp_double);
    med = k % 2 ? a[k / 2] : 0.5 * (a[k / 2 - 1] + a[k / 2]);
    if (md)
        printf("| %s | %zu | %.1f %% | %.1f %% | %+.1f %% |\n", label, k, 100.0 * med,
               100.0 * a[k - 1], 100.0 * sum / (double)k);
    else
        printf("  %-34s %3zu rows  median |error| %5.1f %%  max %5.1f %%  mean %+5.1f %%\n", label,
               k, 100.0 * med, 100.0 * a[k - 1], 100.0 * sum / (double)k);
}

/* A row the runner cannot evaluate: free what the row holds and the
 * document, and exit 2 (a broken file, not an error of the model). */
static int row_fail(json_t *root, char *body, void *req)
{
    free(body);
    free(req);
    json_decref(root);
    return 2;
}

int main(int argc, char **argv)
{
    json_error_t je;
    json_t *root, *rows;
    double tol, mtol, errs[MAX_ROWS], serr[MAX_ROWS], median;
    bool assumed[MAX_ROWS], pick[MAX_ROWS], over[MAX_ROWS];
    const char *group[MAX_ROWS];
    size_t i, n, outside = 0;
    int bad = 0;
    bool rows_gated, fits_gated;
    size_t n_over = 0;
    bool md = argc > 2 && strcmp(argv[2], "--markdown") == 0;
    bool by_src = argc > 2 && strcmp(argv[2], "--sources") == 0;
    bool by_row = argc > 2 && strcmp(argv[2], "--rows") == 0;
    const char *origin[MAX_ROWS];

    if (argc < 2) {
        fprintf(stderr, "usage: %s step_time.json [--markdown | --sources | --rows]\n", argv[0]);
        return 2;
    }
    root = json_load_file(argv[1], 0, &je);
    if (root == NULL) {
        fprintf(stderr, "%s:%d: %s\n", argv[1], je.line, je.text);
        return 2;
    }
    tol = json_number_value(json_object_get(root, "tolerance"));
    mtol = json_number_value(json_object_get(root, "median_tolerance"));
    rows = json_object_get(root, "rows");
    /* A sweep file (every row of a published table, outliers included)
     * sets "rows_gated": false: each row is printed, the median gated. */
    rows_gated = !json_is_false(json_object_get(root, "rows_gated"));
    fits_gated = !json_is_false(json_object_get(root, "fits_gated"));
    n = json_array_size(rows);
    if (n == 0 || n > MAX_ROWS || !(tol > 0) || !(mtol > 0)) {
        fprintf(stderr, "%s: no rows or no tolerance\n", argv[1]);
        json_decref(root);
        return 2;
    }
    if (md) {
        printf("| Run | Measured | Predicted | Error | Exposed comm | Bubble | Source |\n");
        printf("| --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
    }
    for (i = 0; i < n; i++) {
        json_t *row = json_array_get(rows, i);
        json_t *meas = json_object_get(row, "measured");
        const char *name = json_string_value(json_object_get(row, "name"));
        char *body = json_dumps(json_object_get(row, "request"), JSON_COMPACT);
        ts_api_req *req = malloc(sizeof *req);
        ts_api_err aerr;
        ts_error cerr;
        ts_step st;
        ts_memory mem;
        double meas_s, pred_s, tokens, err;
        bool tps = json_object_get(meas, "tokens_per_gpu_second") != NULL;
        json_t *gv = json_object_get(row, "gated");
        json_t *fv = json_object_get(row, "fits_gated");
        bool gated = gv == NULL ? rows_gated : json_is_true(gv);
        json_t *as = json_object_get(row, "assumed");

        if (!json_is_object(json_object_get(row, "record"))) {
            fprintf(stderr, "row %zu (%s): no \"record\" naming where its inputs come from\n", i,
                    name != NULL ? name : "?");
            return row_fail(root, body, req);
        }
        assumed[i] = json_is_object(as) && json_object_size(as) > 0;
        origin[i] = json_string_value(json_object_get(row, "origin"));
        if ((by_src || by_row) && origin[i] == NULL) {
            fprintf(stderr, "row %zu (%s): no \"origin\" (the source's short name)\n", i,
                    name != NULL ? name : "?");
            return row_fail(root, body, req);
        }
        group[i] = json_string_value(json_object_get(row, "group"));

        if (body == NULL || req == NULL ||
            ts_json_parse_run(body, strlen(body), false, req, &aerr) != 0) {
            fprintf(stderr, "row %zu (%s): request rejected: %s %s\n", i, name != NULL ? name : "?",
                    req != NULL ? aerr.field : "", req != NULL ? aerr.detail : "");
            return row_fail(root, body, req);
        }
        memset(&cerr, 0, sizeof cerr);
        if (ts_step_estimate(&req->run, &st, &cerr) != TS_OK) {
            fprintf(stderr, "row %zu (%s): %s: %s\n", i, name, cerr.field, cerr.text);
            return row_fail(root, body, req);
        }
        /* Every row is a run that ran: its plan must be predicted to fit
         * (its peak at most the GPU's HBM) unless the file or the row says
         * "fits_gated": false with the reason in its "about". */
        memset(&cerr, 0, sizeof cerr);
        if (ts_memory_estimate(&req->run, &mem, &cerr) != TS_OK) {
            fprintf(stderr, "row %zu (%s): memory: %s: %s\n", i, name, cerr.field, cerr.text);
            return row_fail(root, body, req);
        }
        over[i] = !mem.fits;
        n_over += over[i];
        if (fv != NULL && !json_is_true(fv) && !json_is_string(json_object_get(row, "fits_note"))) {
            fprintf(stderr, "row %zu (%s): \"fits_gated\": false without a \"fits_note\"\n", i,
                    name);
            return row_fail(root, body, req);
        }
        /* An excused miss that the model now gets right is a stale note. */
        if (!over[i] && fv != NULL && !json_is_true(fv)) {
            fprintf(stderr,
                    "row %zu (%s): \"fits_gated\": false, but predicted to fit (%.1f of %.1f GB): "
                    "drop the stale fits_gated / fits_note\n",
                    i, name, mem.total.value / 1e9, mem.hbm_bytes / 1e9);
            bad = 1;
        }
        if (over[i] && (fv == NULL ? fits_gated : json_is_true(fv))) {
            fprintf(stderr, "row %zu (%s): ran, but predicted not to fit: %.1f of %.1f GB\n", i,
                    name, mem.total.value / 1e9, mem.hbm_bytes / 1e9);
            bad = 1;
        }
        tokens = (double)req->run.global_batch * (double)req->run.seq;
        meas_s = tps ? tokens / ((double)req->run.gpus *
                                 json_number_value(json_object_get(meas, "tokens_per_gpu_second")))
                     : json_number_value(json_object_get(meas, "seconds_per_step"));
        pred_s = st.step_time.value;
        err = pred_s / meas_s - 1.0;
        errs[i] = fabs(err);
        serr[i] = err;
        outside += fabs(err) > tol;
        if (fabs(err) > tol && gated)
            bad = 1;
        if (by_row) {
            printf("%s\t%lld\t%lld\t%lld\t%lld\t%+.2f\n", origin[i],
                   (long long)req->run.model.hidden, (long long)req->run.gpus,
                   (long long)req->run.tp, (long long)req->run.gpus_per_node, 100.0 * err);
        } else if (by_src) {
            /* one line per source, below */
        } else if (md) {
            if (tps)
                printf("| %s%s%s | %.0f tok/s/GPU | %.0f | %+.1f %% | %.2f s | %.2f s | %s |\n",
                       name, gated ? "" : " (not gated)", assumed[i] ? " (assumed input)" : "",
                       tokens / ((double)req->run.gpus * meas_s), st.tokens_per_gpu_second,
                       100.0 * err, st.exposed_comm, st.pp_bubble - st.pp_p2p,
                       origin[i] != NULL ? origin[i]
                       : strstr(json_string_value(json_object_get(row, "source")), "llm-foundry")
                           ? "llm-foundry"
                       : strstr(json_string_value(json_object_get(row, "source")), "Korthikanti")
                           ? "Korthikanti T5"
                           : "LLaMA");
            else
                printf("| %s%s | %.2f s/step | %.2f s | %+.1f %% | %.2f s | %.2f s | %s |\n", name,
                       assumed[i] ? " (assumed input)" : "", meas_s, pred_s, 100.0 * err,
                       st.exposed_comm, st.pp_bubble - st.pp_p2p,
                       origin[i] != NULL ? origin[i] : "Korthikanti T5");
        } else {
            printf("%-44s measured %9.3f s/step  predicted %9.3f s  error %+6.1f %%%s%s%s\n"
                   "    compute %.3f recompute %.3f tp %.3f bubble %.3f (p2p %.3f) dp %.3f cp %.3f "
                   "ep %.3f opt %.3f"
                   " | gemm eff %.3f, mfu %.3f\n",
                   name, meas_s, pred_s, 100.0 * err,
                   fabs(err) > tol ? (gated ? "  OUT OF TOLERANCE" : "  (outside, not gated)") : "",
                   assumed[i] ? "  [assumed input]" : "",
                   over[i] ? "  [ran; predicted over HBM]" : "", st.compute, st.recompute,
                   st.tp_comm, st.pp_bubble, st.pp_p2p, st.dp_comm, st.cp_comm, st.ep_comm,
                   st.optimizer, st.gemm_efficiency, st.predicted_mfu);
        }
        free(body);
        free(req);
    }
    if (by_row) {
        json_decref(root);
        return 0;
    }
    if (by_src) {
        for (i = 0; i < n; i++) {
            size_t j, k = 0;
            double a[MAX_ROWS], sum = 0, med;
            bool first = true;

            for (j = 0; j < i && first; j++)
                first = strcmp(origin[j], origin[i]) != 0;
            if (!first)
                continue;
            for (j = 0; j < n; j++)
                if (strcmp(origin[j], origin[i]) == 0) {
                    a[k++] = fabs(serr[j]);
                    sum += serr[j];
                }
            qsort(a, k, sizeof a[0], cmp_double);
            med = k % 2 ? a[k / 2] : 0.5 * (a[k / 2 - 1] + a[k / 2]);
            printf("%s\t%zu\t%.1f\t%.1f\t%+.1f\n", origin[i], k, 100.0 * med, 100.0 * a[k - 1],
                   100.0 * sum / (double)k);
        }
        json_decref(root);
        return 0;
    }
    /* Recorded-only rows apart from rows with an assumed input, then each group. */
    if (md)
        printf("\n| Rows | n | Median abs. error | Max | Mean signed |\n| --- | ---: | ---: | ---: "
               "| ---: |\n");
    else
        printf("\n");
    for (i = 0; i < n; i++)
        pick[i] = true;
    summary("all", serr, pick, n, md);
    for (i = 0; i < n; i++)
        pick[i] = !assumed[i];
    summary("inputs all recorded", serr, pick, n, md);
    for (i = 0; i < n; i++)
        pick[i] = assumed[i];
    summary("an input assumed", serr, pick, n, md);
    for (i = 0; i < n; i++) {
        size_t j;
        bool first = group[i] != NULL;

        for (j = 0; j < i && first; j++)
            first = group[j] == NULL || strcmp(group[j], group[i]) != 0;
        if (!first)
            continue;
        for (j = 0; j < n; j++)
            pick[j] = group[j] != NULL && strcmp(group[j], group[i]) == 0;
        summary(group[i], serr, pick, n, md);
        for (j = 0; j < n; j++)
            pick[j] = pick[j] && !assumed[j];
        {
            char label[128];

            snprintf(label, sizeof label, "%s, inputs all recorded", group[i]);
            summary(label, serr, pick, n, md);
        }
    }
    qsort(errs, n, sizeof errs[0], cmp_double);
    median = n % 2 ? errs[n / 2] : 0.5 * (errs[n / 2 - 1] + errs[n / 2]);
    printf("%s%zu rows, median |error| %.1f %%, p90 %.1f %%, max %.1f %%, %zu outside %.0f %% "
           "(gate: %.0f %% median, %s)\n",
           md ? "\n" : "", n, 100.0 * median, 100.0 * errs[(n * 9) / 10], 100.0 * errs[n - 1],
           outside, 100.0 * tol, 100.0 * mtol,
           rows_gated ? "every gated row within the tolerance" : "no row gated in this file");
    if (!md && !by_src)
        printf("%zu of %zu rows predicted to fit in the GPU's HBM (each ran on it; %s)\n",
               n - n_over, n,
               fits_gated ? "gated but for rows with a fits_note" : "not gated in this file");
    if (median > mtol)
        bad = 1;
    json_decref(root);
    return bad;
}
