/*
 * fuzz_solver.c - libFuzzer target for the fit solvers (core only).
 *
 * The input bytes are read as a little structured record: a preset or a
 * raw shape, a GPU, then each parallel degree, ZeRO stage, precision and
 * limit, so the fuzzer steers the searches directly instead of through
 * JSON (the api target spends most of its time in the parser).  Values
 * cover valid and invalid ranges on purpose; the solvers must reject
 * the latter with a status, never crash or lie.  Invariants, from the
 * contracts in core/trainsize.h:
 *   ts_fit_min_gpus:        TS_OK => 1 <= dp, gpus <= max_gpus,
 *                           gpus == dp*tp*pp*cp, ep | dp, mem->fits;
 *   ts_fit_max_micro_batch: TS_OK => 1 <= mb <= limit, mem->fits;
 *   both: the status is a known ts_status, every reported byte count is
 *   finite and >= 0, and an error names a status that is not TS_OK.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainsize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static unsigned u8(reader *r)
{
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

static uint32_t u32(reader *r)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | u8(r);
    return v;
}

/* Mostly small degrees (what real layouts use), sometimes anything. */
static int64_t degree(reader *r)
{
    unsigned k = u8(r);
    if (k < 200)
        return 1 << (k % 8); /* 1..128 */
    if (k < 250)
        return (int64_t)(k - 200);   /* 0..49, odd ones too */
    return (int64_t)(int32_t)u32(r); /* negatives, huge */
}

static void die(const char *what, ts_status st, const ts_error *e)
{
    fprintf(stderr, "fuzz_solver: %s (status %d, field '%s': %s)\n", what, (int)st, e->field,
            e->text);
    abort();
}

static void check_memory(const ts_memory *m, const ts_error *e)
{
    const double v[] = { m->weights.value,   m->grads.value,       m->master.value,
                         m->optimizer.value, m->activations.value, m->overhead.value,
                         m->total.value,     m->hbm_bytes };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!isfinite(v[i]) || v[i] < 0)
            die("memory term negative or non-finite", TS_OK, e);
    if (!isfinite(m->headroom_bytes))
        die("headroom non-finite", TS_OK, e);
    if (!m->fits)
        die("solver answered with a layout that does not fit", TS_OK, e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader rd = { data, size };
    ts_run run;
    ts_run_defaults(&run);

    unsigned pick = u8(&rd);
    size_t np = ts_preset_count();
    if (np > 0 && pick < 224) {
        ts_run_apply_preset(&run, ts_preset_at(pick % np));
    } else {
        run.model.layers = (int64_t)(u32(&rd) % 200);
        run.model.hidden = (int64_t)(u32(&rd) % 32768);
        run.model.heads = (int64_t)(u32(&rd) % 256);
        run.model.kv_heads = (int64_t)(u32(&rd) % 64);
        run.model.vocab = (int64_t)(u32(&rd) % 300000);
        run.model.experts = (int64_t)(u8(&rd) % 80);
        run.model.top_k = (int64_t)(u8(&rd) % 10);
        run.model.gated = u8(&rd) & 1;
        run.model.tied_embeddings = u8(&rd) & 1;
        if (run.model.layers == 0)
            run.model.params = (double)u32(&rd) * 1e3;
    }
    size_t ng = ts_gpu_count();
    if (ng > 0)
        run.gpu = *ts_gpu_at(u8(&rd) % ng);
    run.tp = degree(&rd);
    run.pp = degree(&rd);
    run.cp = degree(&rd);
    run.ep = degree(&rd);
    run.dp = 0;
    run.gpus = 0;
    run.zero = (int)(u8(&rd) % 5); /* 4 is invalid on purpose */
    run.micro_batch = degree(&rd);
    run.seq = (int64_t)(u32(&rd) % 262144);
    run.sequence_parallel = u8(&rd) & 1;
    run.recompute = (ts_recompute)(u8(&rd) % 3);
    run.precision = (ts_precision)(u8(&rd) % 4);
    run.offload_optimizer = u8(&rd) & 1;
    run.offload_params = u8(&rd) & 1;
    run.vpp = 1 + (int64_t)(u8(&rd) % 4);
    run.lora_rank = (int64_t)(u8(&rd) % 3) * 8;
    if (u8(&rd) & 1)
        run.global_batch = degree(&rd) * 8;
    int64_t max_gpus = degree(&rd) * 64;
    int64_t mb_limit = degree(&rd) * 4;

    ts_error e;
    memset(&e, 0, sizeof e);
    ts_memory mem;
    int64_t dp = 0, gpus = 0;
    ts_status st = ts_fit_min_gpus(&run, max_gpus, &dp, &gpus, &mem, &e);
    if ((unsigned)st > TS_ENOFIT)
        die("unknown status", st, &e);
    if (st != TS_OK && e.code == TS_OK)
        die("error without a code", st, &e);
    if (st == TS_OK) {
        if (dp < 1 || gpus < 1 || gpus > max_gpus)
            die("min_gpus out of its limits", st, &e);
        if (run.tp > 0 && run.pp > 0 && run.cp > 0 && gpus != dp * run.tp * run.pp * run.cp)
            die("gpus != dp*tp*pp*cp", st, &e);
        if (run.ep > 1 && dp % run.ep != 0)
            die("ep does not divide dp", st, &e);
        check_memory(&mem, &e);
    }

    memset(&e, 0, sizeof e);
    int64_t mb = 0;
    run.dp = max_gpus > 0 ? 1 : 0;
    st = ts_fit_max_micro_batch(&run, mb_limit, &mb, &mem, &e);
    if ((unsigned)st > TS_ENOFIT)
        die("unknown status", st, &e);
    if (st != TS_OK && e.code == TS_OK)
        die("error without a code", st, &e);
    if (st == TS_OK) {
        if (mb < 1 || mb > mb_limit)
            die("micro-batch out of [1, limit]", st, &e);
        check_memory(&mem, &e);
    }
    return 0;
}
