/*
 * ts_scaling.c - the Chinchilla scaling law and the shapes a budget plans.
 *
 * L(N, D) = E + A / N^alpha + B / D^beta (Hoffmann et al. 2022, "Training
 * Compute-Optimal Large Language Models", eq. 2), minimised under
 * C = 6 N D: N_opt = G (C/6)^a, D_opt = (C/6) / N_opt with
 * G = (alpha A / (beta B))^(1/(alpha+beta)), a = beta / (alpha+beta) (eq. 4).
 *
 * Two fits:
 *  - hoffmann: their approach 3 with the exponents unrounded.  Eq. 10
 *    prints alpha 0.34, beta 0.28, E 1.69 (A 406.4, B 410.7); the arXiv
 *    source has alpha 0.3392, beta 0.2849, E 1.6934, as Besiroglu et al.
 *    2024 (section 2) report.  The unrounded values give the paper's own
 *    "40B parameters" for Gopher's budget (Fig. 4; 5.76e23 FLOPs: 40.3B)
 *    and its Table A3 (approach 3) within 8 %, where the rounded ones
 *    give 32B and 19-30 % less.
 *  - besiroglu: Besiroglu, Erdil, Barnett, You 2024, "Chinchilla Scaling:
 *    A replication attempt" (arXiv 2404.10102): E 1.8172, A 482.01,
 *    B 2085.43, alpha 0.3478, beta 0.3658, refitted on the data of
 *    Hoffmann's Fig. 4; a = 0.513, close to approaches 1 and 2 (Table 3).
 * See docs/formulas.md, "Compute-optimal sizing".
 */
#include "ts_internal.h"

#include <math.h>
#include <string.h>

static const ts_law ts_laws[TS_LAW_COUNT] = {
    [TS_LAW_HOFFMANN] = { "hoffmann", 1.6934, 406.4, 410.7, 0.3392, 0.2849,
                          "Hoffmann et al. 2022 approach 3 (eq. 10; unrounded exponents of the "
                          "arXiv source, "
                          "as reported by Besiroglu et al. 2024)" },
    [TS_LAW_BESIROGLU] = { "besiroglu", 1.8172, 482.01, 2085.43, 0.3478, 0.3658,
                           "Besiroglu et al. 2024, Chinchilla scaling: a replication attempt "
                           "(arXiv 2404.10102)" },
};

const ts_law *ts_law_get(ts_scaling_law l)
{
    return (unsigned)l < TS_LAW_COUNT ? &ts_laws[l] : NULL;
}

void ts_law_optimum(const ts_law *l, double flops, double *n, double *d)
{
    double s = l->alpha + l->beta;
    double g = pow(l->alpha * l->A / (l->beta * l->B), 1.0 / s);
    double half = flops / 6.0;

    *n = g * pow(half, l->beta / s);
    *d = half / *n;
}

double ts_law_loss(const ts_law *l, double n, double d)
{
    return l->E + l->A / pow(n, l->alpha) + l->B / pow(d, l->beta);
}

/* The shape of `heads` heads of width 128 and `layers` layers. */
static void ts_shape_fill(ts_model *m, int64_t heads, int64_t layers)
{
    int64_t h = heads * 128;

    memset(m, 0, sizeof *m);
    m->layers = layers;
    m->hidden = h;
    m->heads = heads;
    /* Grouped-query attention with 8 KV heads (Llama 3) once there are
     * enough heads for it to save anything. */
    m->kv_heads = heads >= 16 && heads % 8 == 0 ? 8 : heads;
    /* SwiGLU at 3.5 h, rounded up to 256 (Llama 3 8B and 70B: 14336 and
     * 28672, exactly 3.5 h). */
    m->ffn = (h * 7 / 2 + 255) / 256 * 256;
    m->vocab = TS_SHAPE_VOCAB;
    m->gated = true;
}

/* Head counts tried: 1, 2, 4, then every multiple of 8 (tensor
 * parallelism up to a node's 8 GPUs divides them) up to 1024. */
#define TS_SHAPE_HEADS_MAX 1024
#define TS_SHAPE_TOL       0.02

ts_status ts_scaling_shape(double n, const char *field, ts_model *out, ts_error *err)
{
    ts_model m, best;
    double best_err = HUGE_VAL, best_aspect = HUGE_VAL, smallest = 0, largest = 0;
    int64_t heads;
    bool found = false;

    if (!(n > 0) || !isfinite(n))
        return ts_error_set(err, TS_EINVAL, field, "no model size to plan (%g parameters)", n);
    for (heads = 1; heads <= TS_SHAPE_HEADS_MAX; heads = heads < 8 ? heads * 2 : heads + 8) {
        ts_params p1, p2;
        double layer, emb, l, e, aspect;
        int64_t layers;

        ts_shape_fill(&m, heads, 1);
        ts_model_count(&m, &p1);
        ts_shape_fill(&m, heads, 2);
        ts_model_count(&m, &p2);
        layer = p2.total - p1.total;
        emb = p1.total - layer;
        if (heads == 1)
            smallest = p1.total;
        largest = emb + layer * 1048576.0;
        l = floor((n - emb) / layer + 0.5);
        if (l < 1)
            continue;
        if (l > 1048576)
            l = 1048576;
        layers = (int64_t)l;
        ts_shape_fill(&m, heads, layers);
        ts_model_count(&m, &p1);
        e = fabs(log(p1.total / n));
        aspect = fabs(log((double)m.hidden / (double)layers / TS_SHAPE_ASPECT));
        /* Within the tolerance the aspect ratio decides; outside it the
         * closer count does. */
        if (!found || (e <= TS_SHAPE_TOL ? best_err > TS_SHAPE_TOL || aspect < best_aspect
                                         : best_err > TS_SHAPE_TOL && e < best_err)) {
            best = m;
            best_err = e;
            best_aspect = aspect;
            found = true;
        }
    }
    if (!found || best_err > log(1.5)) {
        if (n < smallest)
            return ts_error_set(err, TS_EINVAL, field,
                                "this budget plans a model of %.3g parameters, below the smallest "
                                "shape (%.3g: 1 layer of width 128 with a %d-token vocabulary)",
                                n, smallest, TS_SHAPE_VOCAB);
        return ts_error_set(err, TS_EINVAL, field,
                            "this budget plans a model of %.3g parameters, beyond the largest "
                            "shape planned (%.3g)",
                            n, largest);
    }
    *out = best;
    return TS_OK;
}
