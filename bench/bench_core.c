/*
 * bench_core.c - how fast the estimation core answers.
 *
 * Times ts_memory_estimate and ts_plan_estimate for a Llama 3 70B run over
 * many iterations with CLOCK_MONOTONIC and prints ns per estimate and
 * estimates per second.  It only reports: a slow machine is not a failure,
 * but an estimate that errors is (exit 1).
 *
 * usage: bench_core [iterations]   (default 200000; plan gets 1/20 of them)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trainsize.h"

/* Results land here so the optimiser cannot drop the estimate calls. */
static volatile double bench_sink;

static double bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void bench_report(const char *what, long n, double ns)
{
    double per = ns / (double)n;

    printf("%-22s %8ld iterations  %10.1f ns/estimate  %12.0f estimates/s\n", what, n, per,
           1e9 / per);
}

static int bench_run(ts_run *r, const char *what)
{
    ts_error err;
    ts_status st = ts_run_resolve(r, &err);

    if (st != TS_OK)
        fprintf(stderr, "bench: %s: %s (%s)\n", what, err.text, err.field);
    return st == TS_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
    long iters = 200000, plan_iters, i;
    const ts_preset *p = ts_preset_find("llama3-70b");
    ts_run base, r;
    ts_memory mem;
    ts_plan *plan;
    ts_error err;
    double t0, t1;
    double search_ns = 0; /* one search, the reference of the budget lines */

    if (argc > 1) {
        char *end;
        iters = strtol(argv[1], &end, 10);
        if (*end != '\0' || iters < 20 || iters > 100000000) {
            fprintf(stderr, "usage: %s [iterations >= 20]\n", argv[0]);
            return 2;
        }
    }
    plan_iters = iters / 20;
    if (p == NULL) {
        fprintf(stderr, "bench: preset llama3-70b missing\n");
        return 1;
    }

    ts_run_defaults(&base);
    ts_run_apply_preset(&base, p);
    base.gpus = 0;
    base.dp = 64;
    base.tp = 8;
    base.zero = 1;
    if (bench_run(&base, "llama3-70b") != 0)
        return 1;

    plan = malloc(sizeof *plan);
    if (plan == NULL)
        return 1;

    /* Warm up caches and branch predictors. */
    for (i = 0; i < 1000; i++) {
        if (ts_memory_estimate(&base, &mem, &err) != TS_OK) {
            fprintf(stderr, "bench: memory: %s\n", err.text);
            free(plan);
            return 1;
        }
        bench_sink = mem.total.value;
    }

    /* The micro-batch varies so no call can be hoisted out of the loop. */
    r = base;
    t0 = bench_now_ns();
    for (i = 0; i < iters; i++) {
        r.micro_batch = 1 + (i & 3);
        r.global_batch = 0;
        if (ts_memory_estimate(&r, &mem, &err) != TS_OK) {
            fprintf(stderr, "bench: memory: %s\n", err.text);
            free(plan);
            return 1;
        }
        bench_sink = mem.total.value;
    }
    t1 = bench_now_ns();
    bench_report("ts_memory_estimate", iters, t1 - t0);

    r = base;
    t0 = bench_now_ns();
    for (i = 0; i < plan_iters; i++) {
        r.micro_batch = 1 + (i & 3);
        r.global_batch = 0;
        if (ts_plan_estimate(&r, plan, &err) != TS_OK) {
            fprintf(stderr, "bench: plan: %s\n", err.text);
            free(plan);
            return 1;
        }
        bench_sink = plan->compute.gpu_hours.value + plan->ckpt.full_bytes.value;
    }
    t1 = bench_now_ns();
    bench_report("ts_plan_estimate", plan_iters, t1 - t0);
    printf("(sizeof(ts_plan) = %zu bytes; sink %g)\n", sizeof *plan, bench_sink);

    /* Layout search (issue 11): Llama 3 70B on 1024 H100, seq 8192,
     * 1024 sequences per step.  Reports whole searches per second and
     * layouts (memory-estimated candidates) per second. */
    {
        ts_search_cfg cfg;
        ts_search_out *so = malloc(sizeof *so);
        ts_run sr;
        long n_search = iters / 20000 > 3 ? iters / 20000 : 3;
        uint64_t layouts = 0;

        if (so == NULL) {
            free(plan);
            return 1;
        }
        ts_run_defaults(&sr);
        ts_run_apply_preset(&sr, p);
        sr.gpus = 1024;
        sr.global_batch = 1024;
        ts_search_defaults(&cfg);
        t0 = bench_now_ns();
        for (i = 0; i < n_search; i++) {
            if (ts_search_run(&sr, &cfg, so, &err) != TS_OK) {
                fprintf(stderr, "bench: search: %s (%s)\n", err.text, err.field);
                free(so);
                free(plan);
                return 1;
            }
            layouts += so->tried;
            bench_sink = so->results[0].step_time;
        }
        t1 = bench_now_ns();
        bench_report("ts_search_run 70B/1024", n_search, t1 - t0);
        search_ns = (t1 - t0) / (double)n_search;
        printf("%-22s %8llu layouts     %10.1f ns/layout    %12.0f layouts/s  (%llu enumerated, "
               "%llu fit, %llu pruned per search)\n",
               "  layouts evaluated", (unsigned long long)layouts, (t1 - t0) / (double)layouts,
               (double)layouts * 1e9 / (t1 - t0), (unsigned long long)so->enumerated,
               (unsigned long long)so->fitting, (unsigned long long)so->pruned);
        printf("  best: tp %lld pp %lld cp %lld dp %lld mb %lld vpp %lld %s zero %d recompute %s: "
               "%.3f s/step, MFU %.3f, %.2f GiB of %.2f\n",
               (long long)so->results[0].tp, (long long)so->results[0].pp,
               (long long)so->results[0].cp, (long long)so->results[0].dp,
               (long long)so->results[0].micro_batch, (long long)so->results[0].vpp,
               ts_framework_name(so->results[0].framework), so->results[0].zero,
               ts_recompute_name(so->results[0].recompute), so->results[0].step_time,
               so->results[0].predicted_mfu, so->results[0].memory_total / 1073741824.0,
               so->results[0].hbm / 1073741824.0);
        free(so);
    }

    /* From a budget to a plan (issue 28), beside the search it repeats:
     * 1024 H100 for 30 days, the compute-optimal model (a search per
     * shape tried), and Llama 3 70B's tokens (one search).  Each is one
     * POST /v1/budget less the JSON; the same latency class as a search
     * when it converges in one or two. */
    {
        static const struct {
            const char *what;
            ts_sizing_mode mode;
        } cases[] = {
            { "ts_sizing_run optimal", TS_SIZE_OPTIMAL },
            { "ts_sizing_run 70B", TS_SIZE_MODEL },
        };
        ts_search_out *so = malloc(sizeof *so);
        ts_sizing_out *o = malloc(sizeof *o);
        long n_size = iters / 20000 > 3 ? iters / 20000 : 3;
        size_t c;

        if (so == NULL || o == NULL) {
            free(so);
            free(o);
            free(plan);
            return 1;
        }
        for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            ts_sizing_cfg cfg;
            ts_run br;
            int searches = 0;

            ts_run_defaults(&br);
            if (cases[c].mode == TS_SIZE_MODEL)
                ts_run_apply_preset(&br, p);
            br.gpus = 1024;
            memset(&cfg, 0, sizeof cfg);
            cfg.gpu_hours = 1024.0 * 30 * 24;
            cfg.field = "budget_days";
            cfg.mode = cases[c].mode;
            cfg.law = TS_LAW_HOFFMANN;
            ts_search_defaults(&cfg.search);
            t0 = bench_now_ns();
            for (i = 0; i < n_size; i++) {
                if (ts_sizing_run(&br, &cfg, NULL, so, o, &err) != TS_OK) {
                    fprintf(stderr, "bench: sizing: %s (%s)\n", err.text, err.field);
                    free(so);
                    free(o);
                    free(plan);
                    return 1;
                }
                searches += o->iterations;
                bench_sink = o->tokens;
            }
            t1 = bench_now_ns();
            bench_report(cases[c].what, n_size, t1 - t0);
            printf("  %.1f searches each; %.3g params on %.3g tokens, MFU %.3f, useful %.3f%s\n",
                   (double)searches / (double)n_size, o->params, o->tokens, o->mfu,
                   o->useful_fraction, o->converged ? "" : " (not converged)");
            /* Issue 28's done-when: the same latency class as a search,
             * measured against the search above in this run (a ratio
             * carries less of the machine's load than either time). */
            printf("  %.2f x the search above (%.0f vs %.0f ns per call)\n",
                   (t1 - t0) / (double)n_size / search_ns, (t1 - t0) / (double)n_size, search_ns);
        }
        free(so);
        free(o);
    }

    free(plan);
    return 0;
}
