/*
 * ts_model.c - parameter counts from a transformer shape.
 *
 * Llama-style decoder: q/o projections h x h, k/v h x (a_kv d) (GQA),
 * an MLP of 2 (or 3 when gated, SwiGLU) h x F matrices, E of them plus a
 * router for MoE, two norm vectors per layer, a final norm, the input
 * embedding and an output head unless tied.  Biases are ignored.
 * See docs/formulas.md, "Parameters from a shape".
 *
 * Every count is computed in double; the limits below keep each product
 * far from overflow and far from int64 limits in the callers, and the
 * result is still checked for finiteness.
 */
#include "ts_internal.h"

#include <math.h>

/* Limits on shape fields: far above any published model, low enough that
 * no product of them (or of them and a sequence length) leaves double's
 * exact-integer range by much or overflows at all. */
#define TS_MODEL_LAYERS_MAX (INT64_C(1) << 20)
#define TS_MODEL_HIDDEN_MAX (INT64_C(1) << 24)
#define TS_MODEL_HEADS_MAX  (INT64_C(1) << 20)
#define TS_MODEL_FFN_MAX    (INT64_C(1) << 26)
#define TS_MODEL_VOCAB_MAX  (INT64_C(1) << 30)
#define TS_MODEL_EXPERTS_MAX (INT64_C(1) << 20)
/* A quadrillion parameters: 1000x the largest published dense model. */
#define TS_MODEL_PARAMS_MAX 1e15

static const char ts_model_formula_shape[] =
    "L (2 h^2 + 2 h a_kv d + MLP + 2 h) + h + V h (+ V h untied); "
    "MLP = (3 if gated else 2) h F, MoE: E of those + h E";
static const char ts_model_formula_plain[] = "params as given";

/* Shape fields without layers would be silently ignored: refuse them. */
static ts_status ts_model_check_plain(const ts_model *m, ts_error *err)
{
    static const char *const names[] = {
        "hidden", "heads", "kv_heads", "ffn", "vocab", "experts", "top_k"
    };
    const int64_t vals[] = {
        m->hidden, m->heads, m->kv_heads, m->ffn, m->vocab, m->experts, m->top_k
    };
    size_t i;

    if (!(m->params > 0))
        return ts_error_set(err, TS_EINVAL, "model",
                            "a model needs either params or a shape (layers, hidden, heads, vocab)");
    for (i = 0; i < sizeof vals / sizeof vals[0]; i++)
        if (vals[i] != 0)
            return ts_error_set(err, TS_EINVAL, names[i],
                                "%s given without layers: give the whole shape or only params",
                                names[i]);
    return TS_OK;
}

static ts_status ts_model_check_shape(const ts_model *m, ts_error *err)
{
    ts_status st;
    int64_t kv = m->kv_heads != 0 ? m->kv_heads : m->heads;
    int64_t experts = m->experts > 1 ? m->experts : 1;

    if ((st = ts_check_int(m->layers, 1, TS_MODEL_LAYERS_MAX, "layers", err)) != TS_OK ||
        (st = ts_check_int(m->hidden, 1, TS_MODEL_HIDDEN_MAX, "hidden", err)) != TS_OK ||
        (st = ts_check_int(m->heads, 1, TS_MODEL_HEADS_MAX, "heads", err)) != TS_OK ||
        (st = ts_check_int(m->kv_heads, 0, TS_MODEL_HEADS_MAX, "kv_heads", err)) != TS_OK ||
        (st = ts_check_int(m->ffn, 0, TS_MODEL_FFN_MAX, "ffn", err)) != TS_OK ||
        (st = ts_check_int(m->vocab, 1, TS_MODEL_VOCAB_MAX, "vocab", err)) != TS_OK ||
        (st = ts_check_int(m->experts, 0, TS_MODEL_EXPERTS_MAX, "experts", err)) != TS_OK ||
        (st = ts_check_int(m->top_k, 0, TS_MODEL_EXPERTS_MAX, "top_k", err)) != TS_OK)
        return st;
    if (m->hidden % m->heads != 0)
        return ts_error_set(err, TS_EINCOMPAT, "heads",
                            "hidden %lld is not divisible by heads %lld",
                            (long long)m->hidden, (long long)m->heads);
    if (kv > m->heads || m->heads % kv != 0)
        return ts_error_set(err, TS_EINCOMPAT, "kv_heads",
                            "heads %lld is not a multiple of kv_heads %lld",
                            (long long)m->heads, (long long)kv);
    if (m->top_k > experts)
        return ts_error_set(err, TS_EINCOMPAT, "top_k",
                            "top_k %lld exceeds the %lld expert(s) per layer",
                            (long long)m->top_k, (long long)experts);
    return TS_OK;
}

ts_status ts_model_params(const ts_model *m, ts_params *out, ts_error *err)
{
    ts_status st;
    double L, h, a, kv, d, F, V, E, k, attn, mlp_one, mlp, norm;

    if (m == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *out = (ts_params){ 0 };

    if (!isfinite(m->params) || m->params < 0 || m->params > TS_MODEL_PARAMS_MAX)
        return ts_error_set(err, TS_EINVAL, "params",
                            "params must be finite and in [0, %g]", TS_MODEL_PARAMS_MAX);
    if (m->layers < 0)
        return ts_error_set(err, TS_EINVAL, "layers", "layers must not be negative");

    if (m->layers == 0) {
        if ((st = ts_model_check_plain(m, err)) != TS_OK)
            return st;
        out->total = m->params;
        out->active = m->params;
        out->dense = m->params;
        out->from_shape = false;
        out->formula = ts_model_formula_plain;
        return TS_OK;
    }

    if ((st = ts_model_check_shape(m, err)) != TS_OK)
        return st;

    /* Defaults documented in trainsize.h: MHA, F = 4h, top-1 routing. */
    L = (double)m->layers;
    h = (double)m->hidden;
    a = (double)m->heads;
    kv = (double)(m->kv_heads != 0 ? m->kv_heads : m->heads);
    d = h / a; /* exact: hidden % heads == 0 checked above */
    F = (double)(m->ffn != 0 ? m->ffn : 4 * m->hidden);
    V = (double)m->vocab;
    E = m->experts > 1 ? (double)m->experts : 1.0;
    k = m->experts > 1 ? (double)(m->top_k != 0 ? m->top_k : 1) : 1.0;

    attn = 2.0 * h * h + 2.0 * h * (kv * d);
    mlp_one = (m->gated ? 3.0 : 2.0) * h * F;
    mlp = E > 1 ? E * mlp_one + h * E : mlp_one; /* router h x E */
    norm = 2.0 * h;

    out->embedding = V * h;
    out->output_head = m->tied_embeddings ? 0.0 : V * h;
    out->per_layer_attn = attn;
    out->per_layer_mlp = mlp;
    out->per_layer_norm = norm;
    out->total = L * (attn + mlp + norm) + h + out->embedding + out->output_head;
    out->expert = E > 1 ? L * E * mlp_one : 0.0;
    out->dense = out->total - out->expert;
    out->active = out->total - (E - k) * mlp_one * L;
    out->from_shape = true;
    out->formula = ts_model_formula_shape;

    if (!isfinite(out->total) || !isfinite(out->active)) {
        *out = (ts_params){ 0 };
        return ts_error_set(err, TS_ERANGE, "model", "parameter count overflows");
    }
    /* The same ceiling as a plain params count: a shape must not reach
     * what params may not (the audit found 3.7e27 from a shape). */
    if (out->total > TS_MODEL_PARAMS_MAX) {
        double total = out->total;

        *out = (ts_params){ 0 };
        return ts_error_set(err, TS_EINVAL, "layers",
                            "the shape gives %.4g parameters, above the %g limit", total,
                            TS_MODEL_PARAMS_MAX);
    }
    return TS_OK;
}
