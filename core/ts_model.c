/*
 * ts_model.c - parameter counts from a transformer shape.
 *
 * Llama-style decoder: q/o projections h x (a d), k/v h x (a_kv d) (GQA),
 * an MLP of 2 (or 3 when gated, SwiGLU) h x F matrices, E of them plus a
 * router for MoE, two norm vectors per layer, a final norm, the input
 * embedding and an output head unless tied.  Optional detail so that
 * imported Hugging Face configs count what the checkpoint holds: biases
 * (Qwen2 q/k/v, GPT-2 and GPT-NeoX everywhere), LayerNorm biases, extra
 * norms (Gemma 2), q/k norms (Qwen3), learned positions (GPT-2), an
 * explicit head_dim (Gemma), shared experts, dense first layers and
 * router bias (DeepSeek-V3), the shared-expert gate (Qwen2-MoE), a norm
 * after the embedding (BLOOM), and latent attention (MLA).
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
#define TS_MODEL_LAYERS_MAX  (INT64_C(1) << 20)
#define TS_MODEL_HIDDEN_MAX  (INT64_C(1) << 24)
#define TS_MODEL_HEADS_MAX   (INT64_C(1) << 20)
#define TS_MODEL_FFN_MAX     (INT64_C(1) << 26)
#define TS_MODEL_VOCAB_MAX   (INT64_C(1) << 30)
#define TS_MODEL_EXPERTS_MAX (INT64_C(1) << 20)
#define TS_MODEL_NORMS_MAX   16
/* Like seq's own bound (core/ts_fields.def). */
#define TS_MODEL_WINDOW_MAX (INT64_C(1) << 24)
/* A quadrillion parameters: 1000x the largest published dense model. */
#define TS_MODEL_PARAMS_MAX 1e15

static const char ts_model_formula_shape[] =
    "L (attn + 2 h) + MLP layers + h + V h (+ V h untied); attn = 2 h a d + 2 h a_kv d "
    "(+ biases, q/k norms; MLA: low-rank q/kv); MLP = (3 if gated else 2) h F, "
    "MoE layer: (E + shared) of those at moe_ffn + h E router";
static const char ts_model_formula_plain[] = "params as given";

/* Shape fields without layers would be silently ignored: refuse them. */
static ts_status ts_model_check_plain(const ts_model *m, ts_error *err)
{
    static const char *const names[] = {
        "hidden",          "heads",          "kv_heads",       "ffn",
        "vocab",           "experts",        "top_k",          "head_dim",
        "norms_per_layer", "pos_embeddings", "moe_ffn",        "shared_experts",
        "dense_layers",    "q_lora_rank",    "kv_lora_rank",   "qk_nope_dim",
        "qk_rope_dim",     "v_head_dim",     "sliding_window", "sliding_layers"
    };
    const int64_t vals[] = {
        m->hidden,          m->heads,          m->kv_heads,       m->ffn,
        m->vocab,           m->experts,        m->top_k,          m->head_dim,
        m->norms_per_layer, m->pos_embeddings, m->moe_ffn,        m->shared_experts,
        m->dense_layers,    m->q_lora_rank,    m->kv_lora_rank,   m->qk_nope_dim,
        m->qk_rope_dim,     m->v_head_dim,     m->sliding_window, m->sliding_layers
    };
    static const char *const flag_names[] = { "qkv_bias",           "out_bias",  "mlp_bias",
                                              "norm_bias",          "qk_norm",   "router_bias",
                                              "shared_expert_gate", "embed_norm" };
    const bool flags[] = { m->qkv_bias, m->out_bias,    m->mlp_bias,           m->norm_bias,
                           m->qk_norm,  m->router_bias, m->shared_expert_gate, m->embed_norm };
    size_t i;

    if (!(m->params > 0))
        return ts_error_set(
            err, TS_EINVAL, "model",
            "a model needs either params or a shape (layers, hidden, heads, vocab)");
    for (i = 0; i < sizeof vals / sizeof vals[0]; i++)
        if (vals[i] != 0)
            return ts_error_set(err, TS_EINVAL, names[i],
                                "%s given without layers: give the whole shape or only params",
                                names[i]);
    for (i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (flags[i])
            return ts_error_set(err, TS_EINVAL, flag_names[i],
                                "%s given without layers: give the whole shape or only params",
                                flag_names[i]);
    return TS_OK;
}

/* MoE-only and MLA-only fields on a model that is neither. */
static ts_status ts_model_check_variants(const ts_model *m, ts_error *err)
{
    bool moe = m->experts > 1;
    bool mla = m->kv_lora_rank > 0;

    if (!moe) {
        if (m->moe_ffn != 0 || m->shared_experts != 0 || m->dense_layers != 0 || m->router_bias ||
            m->shared_expert_gate)
            return ts_error_set(err, TS_EINCOMPAT,
                                m->moe_ffn != 0          ? "moe_ffn"
                                : m->shared_experts != 0 ? "shared_experts"
                                : m->dense_layers != 0   ? "dense_layers"
                                : m->router_bias         ? "router_bias"
                                                         : "shared_expert_gate",
                                "this field needs a mixture-of-experts model (experts > 1)");
    } else if (m->shared_expert_gate && m->shared_experts == 0) {
        return ts_error_set(
            err, TS_EINCOMPAT, "shared_expert_gate",
            "shared_expert_gate gates the shared experts: it needs shared_experts >= 1");
    } else if (m->dense_layers > m->layers) {
        return ts_error_set(err, TS_EINCOMPAT, "dense_layers",
                            "dense_layers %lld exceeds layers %lld", (long long)m->dense_layers,
                            (long long)m->layers);
    }
    if (mla) {
        if (m->qk_nope_dim < 1)
            return ts_error_set(err, TS_EINCOMPAT, "qk_nope_dim",
                                "latent attention (kv_lora_rank > 0) needs qk_nope_dim >= 1");
        if (m->head_dim != 0)
            return ts_error_set(err, TS_EINCOMPAT, "head_dim",
                                "with latent attention the head width is qk_nope_dim + "
                                "qk_rope_dim: leave head_dim 0");
        if (m->qkv_bias || m->qk_norm)
            return ts_error_set(err, TS_EINCOMPAT, m->qkv_bias ? "qkv_bias" : "qk_norm",
                                "not modelled with latent attention (kv_lora_rank > 0)");
    } else if (m->q_lora_rank != 0 || m->qk_nope_dim != 0 || m->qk_rope_dim != 0 ||
               m->v_head_dim != 0) {
        return ts_error_set(err, TS_EINCOMPAT,
                            m->q_lora_rank != 0   ? "q_lora_rank"
                            : m->qk_nope_dim != 0 ? "qk_nope_dim"
                            : m->qk_rope_dim != 0 ? "qk_rope_dim"
                                                  : "v_head_dim",
                            "latent-attention fields need kv_lora_rank > 0");
    }
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
        (st = ts_check_int(m->top_k, 0, TS_MODEL_EXPERTS_MAX, "top_k", err)) != TS_OK ||
        (st = ts_check_int(m->head_dim, 0, TS_MODEL_HIDDEN_MAX, "head_dim", err)) != TS_OK ||
        (st = ts_check_int(m->norms_per_layer, 0, TS_MODEL_NORMS_MAX, "norms_per_layer", err)) !=
            TS_OK ||
        (st = ts_check_int(m->pos_embeddings, 0, TS_MODEL_VOCAB_MAX, "pos_embeddings", err)) !=
            TS_OK ||
        (st = ts_check_int(m->moe_ffn, 0, TS_MODEL_FFN_MAX, "moe_ffn", err)) != TS_OK ||
        (st = ts_check_int(m->shared_experts, 0, TS_MODEL_EXPERTS_MAX, "shared_experts", err)) !=
            TS_OK ||
        (st = ts_check_int(m->dense_layers, 0, TS_MODEL_LAYERS_MAX, "dense_layers", err)) !=
            TS_OK ||
        (st = ts_check_int(m->q_lora_rank, 0, TS_MODEL_HIDDEN_MAX, "q_lora_rank", err)) != TS_OK ||
        (st = ts_check_int(m->kv_lora_rank, 0, TS_MODEL_HIDDEN_MAX, "kv_lora_rank", err)) !=
            TS_OK ||
        (st = ts_check_int(m->qk_nope_dim, 0, TS_MODEL_HIDDEN_MAX, "qk_nope_dim", err)) != TS_OK ||
        (st = ts_check_int(m->qk_rope_dim, 0, TS_MODEL_HIDDEN_MAX, "qk_rope_dim", err)) != TS_OK ||
        (st = ts_check_int(m->v_head_dim, 0, TS_MODEL_HIDDEN_MAX, "v_head_dim", err)) != TS_OK ||
        (st = ts_check_int(m->sliding_window, 0, TS_MODEL_WINDOW_MAX, "sliding_window", err)) !=
            TS_OK ||
        (st = ts_check_int(m->sliding_layers, 0, TS_MODEL_LAYERS_MAX, "sliding_layers", err)) !=
            TS_OK)
        return st;
    /* Without a window the count says nothing (a request's sliding_window
     * 0 over an imported model's window turns it off). */
    if (m->sliding_window > 0 && m->sliding_layers > m->layers)
        return ts_error_set(err, TS_EINCOMPAT, "sliding_layers",
                            "sliding_layers %lld exceeds layers %lld (give sliding_layers with "
                            "layers; 0 is every layer)",
                            (long long)m->sliding_layers, (long long)m->layers);
    /* An explicit head width (Gemma: 16 x 256 on hidden 3072) or latent
     * attention frees hidden from being heads x head_dim. */
    if (m->head_dim == 0 && m->kv_lora_rank == 0 && m->hidden % m->heads != 0)
        return ts_error_set(err, TS_EINCOMPAT, "heads",
                            "hidden %lld is not divisible by heads %lld (give head_dim)",
                            (long long)m->hidden, (long long)m->heads);
    if (kv > m->heads || m->heads % kv != 0)
        return ts_error_set(err, TS_EINCOMPAT, "kv_heads",
                            "heads %lld is not a multiple of kv_heads %lld", (long long)m->heads,
                            (long long)kv);
    if (m->top_k > experts)
        return ts_error_set(err, TS_EINCOMPAT, "top_k",
                            "top_k %lld exceeds the %lld expert(s) per layer", (long long)m->top_k,
                            (long long)experts);
    return ts_model_check_variants(m, err);
}

/* One MLP of inner width w: 2 or 3 h x w matrices, optional biases
 * (w per up/gate matrix, h on the down projection). */
static double ts_model_mlp(const ts_model *m, double h, double w)
{
    double mats = m->gated ? 3.0 : 2.0;
    double bias = m->mlp_bias ? (mats - 1.0) * w + h : 0.0;

    return mats * h * w + bias;
}

/* Attention of one layer.  MHA/GQA: q and o are h x a d, k and v
 * h x a_kv d.  MLA (DeepSeek-V2 paper, section 2.1; HF
 * modeling_deepseek.py): q = h x q_lora (+ norm) then q_lora x a (nope +
 * rope); kv = h x (kv_lora + rope) (+ norm) then kv_lora x a (nope + v);
 * o = a v x h. */
static double ts_model_attn(const ts_model *m, double h, double a, double kv)
{
    double attn;

    if (m->kv_lora_rank > 0) {
        double qk = (double)(m->qk_nope_dim + m->qk_rope_dim);
        double v = (double)(m->v_head_dim != 0 ? m->v_head_dim : m->qk_nope_dim);
        double qr = (double)m->q_lora_rank;
        double kvr = (double)m->kv_lora_rank;

        attn = qr > 0 ? h * qr + qr + qr * a * qk : h * a * qk;
        attn += h * (kvr + (double)m->qk_rope_dim) + kvr + kvr * a * ((double)m->qk_nope_dim + v);
        attn += a * v * h;
        if (m->out_bias)
            attn += h;
        return attn;
    }
    {
        double d = m->head_dim != 0 ? (double)m->head_dim : h / a;

        attn = 2.0 * h * (a * d) + 2.0 * h * (kv * d);
        if (m->qkv_bias)
            attn += a * d + 2.0 * kv * d;
        if (m->out_bias)
            attn += h;
        if (m->qk_norm)
            attn += 2.0 * d;
    }
    return attn;
}

/* The counts alone, for a model ts_model_params() has accepted. */
double ts_model_attn_params(const ts_model *m)
{
    return ts_model_attn(m, (double)m->hidden, (double)m->heads,
                         (double)(m->kv_heads != 0 ? m->kv_heads : m->heads));
}

/* Keys a query attends to, mean over the s positions of a causal
 * sequence and over the layers.  Full attention: s / 2 (query i sees
 * i + 1 keys; the continuous form, as the step model has always taken
 * it).  A band of w tokens, itself included (transformers passes
 * flash_attn window_size (w - 1, 0) in effect: the band's left edge,
 * causal on the right): query i sees min(i + 1, w), which sums to
 * s w - w (w - 1) / 2; continuous, w - w^2 / (2 s), which is s / 2 at
 * w = s and w for w << s.  A window of s or more is full attention. */
double ts_model_attn_span(const ts_model *m, double s)
{
    double L = (double)m->layers, w = (double)m->sliding_window;
    double n = ts_model_window_layers(m, s), band;

    if (!(n > 0) || !(w < s))
        return s / 2.0;
    band = w - w * w / (2.0 * s);
    return ((L - n) * (s / 2.0) + n * band) / L;
}

/* The one place sliding_layers 0 means every layer. */
double ts_model_window_layers(const ts_model *m, double s)
{
    if (!(m->sliding_window > 0) || (double)m->sliding_window > s || !(m->layers > 0))
        return 0.0;
    return m->sliding_layers > 0 ? (double)m->sliding_layers : (double)m->layers;
}

void ts_model_count(const ts_model *m, ts_params *out)
{
    double L, Ld, Lm, h, a, kv, F, Fe, V, E, S, k, attn, mlp_one, mlp, norm, norm_vec, dense_mlp;

    *out = (ts_params){ 0 };
    if (m->layers <= 0) {
        out->total = m->params;
        out->active = m->params;
        out->dense = m->params;
        out->from_shape = false;
        out->formula = ts_model_formula_plain;
        return;
    }

    /* Defaults documented in trainsize.h: MHA, F = 4h, top-1 routing. */
    L = (double)m->layers;
    h = (double)m->hidden;
    a = (double)m->heads;
    kv = (double)(m->kv_heads != 0 ? m->kv_heads : m->heads);
    F = (double)(m->ffn != 0 ? m->ffn : 4 * m->hidden);
    Fe = m->moe_ffn != 0 ? (double)m->moe_ffn : F;
    V = (double)m->vocab;
    E = m->experts > 1 ? (double)m->experts : 1.0;
    S = (double)m->shared_experts;
    k = m->experts > 1 ? (double)(m->top_k != 0 ? m->top_k : 1) : 1.0;
    Ld = m->experts > 1 ? (double)m->dense_layers : 0.0; /* dense first layers */
    Lm = L - Ld;

    attn = ts_model_attn(m, h, a, kv);
    norm_vec = m->norm_bias ? 2.0 * h : h; /* LayerNorm: weight + bias */
    norm = (double)(m->norms_per_layer != 0 ? m->norms_per_layer : 2) * norm_vec;
    if (E > 1) {
        mlp_one = ts_model_mlp(m, h, Fe);
        /* routed + shared experts, router h x E (+ E bias), the shared
         * experts' gate h x 1 (Qwen2-MoE modeling_qwen2_moe.py) */
        mlp = (E + S) * mlp_one + h * E + (m->router_bias ? E : 0.0) +
              (m->shared_expert_gate ? h : 0.0);
        dense_mlp = Ld > 0 ? ts_model_mlp(m, h, F) : 0.0;
    } else {
        mlp_one = ts_model_mlp(m, h, F);
        mlp = mlp_one;
        dense_mlp = 0.0;
    }

    out->embedding = (V + (double)m->pos_embeddings) * h;
    /* BLOOM's word_embeddings_layernorm (modeling_bloom.py). */
    out->embed_norm = m->embed_norm ? norm_vec : 0.0;
    out->output_head = m->tied_embeddings ? 0.0 : V * h;
    out->per_layer_attn = attn;
    out->per_layer_mlp = mlp;
    out->per_layer_norm = norm;
    out->dense_layer_mlp = dense_mlp;
    out->dense_layers = m->experts > 1 ? m->dense_layers : 0;
    out->total = L * (attn + norm) + Lm * mlp + Ld * dense_mlp + norm_vec + out->embedding +
                 out->embed_norm + out->output_head;
    /* Routed experts only: shared experts and the router are replicated
     * like dense weights under expert parallelism. */
    out->expert = E > 1 ? Lm * E * mlp_one : 0.0;
    out->dense = out->total - out->expert;
    out->active = out->total - (E - k) * mlp_one * Lm;
    out->from_shape = true;
    out->formula = ts_model_formula_shape;
}

ts_status ts_model_params(const ts_model *m, ts_params *out, ts_error *err)
{
    ts_status st;

    if (m == NULL || out == NULL)
        return ts_error_set(err, TS_EINVAL, "", "null argument");
    *out = (ts_params){ 0 };

    if (!isfinite(m->params) || m->params < 0 || m->params > TS_MODEL_PARAMS_MAX)
        return ts_error_set(err, TS_EINVAL, "params", "params must be finite and in [0, %g]",
                            TS_MODEL_PARAMS_MAX);
    if (m->layers < 0)
        return ts_error_set(err, TS_EINVAL, "layers", "layers must not be negative");
    if ((st = m->layers == 0 ? ts_model_check_plain(m, err) : ts_model_check_shape(m, err)) !=
        TS_OK)
        return st;
    ts_model_count(m, out);
    if (!out->from_shape)
        return TS_OK;

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
