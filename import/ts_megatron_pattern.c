/*
 * ts_megatron_pattern.c - Megatron-LM's per-layer list expressions
 * ("[0]*3+[1]*58", "([1]*3+[0])*2", "[1,1,1,0]*3"), which
 * --moe-layer-freq and --window-attn-skip-freq take where Python would
 * eval them (megatron/training/arguments.py moe_freq_type): read here as
 * a small grammar, never evaluated.  sum: term ('+' term)*; term: '['
 * 0|1 (',' 0|1)* ']' or '(' sum ')', then an optional '*' count.  Bounded:
 * PATTERN_MAX layers, 16 levels of parentheses.
 * Part of the Megatron-LM importer (ts_megatron.c); shared types in
 * ts_megatron_int.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_ckd.h"
#include "ts_import.h"
#include "ts_megatron_int.h"

#define PATTERN_MAX 65536

typedef struct pat {
    const char *p;
    unsigned char *out; /* one 0 or 1 per layer */
    size_t n;
    bool bad;
    unsigned depth;
} pat;

static void pat_ws(pat *q)
{
    while (*q->p == ' ')
        q->p++;
}

static int64_t pat_int(pat *q)
{
    int64_t v = 0;

    pat_ws(q);
    if (*q->p < '0' || *q->p > '9') {
        q->bad = true;
        return 0;
    }
    while (*q->p >= '0' && *q->p <= '9') {
        if (ts_ckd_mul(&v, v, 10) || ts_ckd_add(&v, v, *q->p - '0') || v > PATTERN_MAX) {
            q->bad = true;
            return 0;
        }
        q->p++;
    }
    return v;
}

static void pat_sum(pat *q);

/* term: '[' ints ']' or '(' sum ')', then optional '*' int (repeat). */
static void pat_term(pat *q)
{
    size_t start = q->n;
    int64_t times = 1, t;

    pat_ws(q);
    if (*q->p == '[') {
        q->p++;
        for (;;) {
            int64_t x = pat_int(q);

            if (q->bad)
                return;
            if ((x != 0 && x != 1) || q->n >= PATTERN_MAX) {
                q->bad = true;
                return;
            }
            q->out[q->n++] = (unsigned char)x;
            pat_ws(q);
            if (*q->p == ',') {
                q->p++;
                continue;
            }
            if (*q->p != ']') {
                q->bad = true;
                return;
            }
            q->p++;
            break;
        }
    } else if (*q->p == '(') {
        if (++q->depth > 16) {
            q->bad = true;
            return;
        }
        q->p++;
        pat_sum(q);
        pat_ws(q);
        if (q->bad || *q->p != ')') {
            q->bad = true;
            return;
        }
        q->p++;
        q->depth--;
    } else {
        q->bad = true;
        return;
    }
    pat_ws(q);
    if (*q->p == '*') {
        q->p++;
        times = pat_int(q);
        if (q->bad || times < 0)
            return;
    }
    /* repeat out[start..n) times-1 more times, bounded */
    {
        size_t len = q->n - start;

        if (times == 0) {
            q->n = start;
            return;
        }
        for (t = 1; t < times; t++) {
            if (q->n + len > PATTERN_MAX) {
                q->bad = true;
                return;
            }
            memmove(q->out + q->n, q->out + start, len);
            q->n += len;
        }
    }
}

static void pat_sum(pat *q)
{
    pat_term(q);
    for (;;) {
        pat_ws(q);
        if (q->bad || *q->p != '+')
            return;
        q->p++;
        pat_term(q);
    }
}

int mega_pattern(const char *p, const char *flag, int64_t layers, unsigned char **out, size_t *n,
                 ts_api_err *err)
{
    pat q;

    *out = NULL;
    *n = 0;
    memset(&q, 0, sizeof q);
    q.p = p;
    q.out = malloc(PATTERN_MAX);
    if (q.out == NULL) {
        ts_api_err_set(err, TS_PROB_OUT_OF_MEMORY, NULL, "out of memory reading megatron_args");
        return -1;
    }
    pat_sum(&q);
    pat_ws(&q);
    if (q.bad || *q.p != '\0') {
        ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                       "megatron_args --%s takes an integer or a list expression like "
                       "[0]*3+[1]*58, got '%.*s'",
                       flag, ts_utf8_prec(p, 48), p);
        free(q.out);
        return -1;
    }
    if (layers > 0 && (int64_t)q.n != layers) {
        ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                       "megatron_args --%s lists %zu layers, --num-layers is %lld", flag, q.n,
                       (long long)layers);
        free(q.out);
        return -1;
    }
    *out = q.out;
    *n = q.n;
    return 0;
}
