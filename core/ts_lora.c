/*
 * ts_lora.c - the LoRA target set: PEFT's target_modules names to a bit
 * set of the layer's matrices, and back.
 *
 * Names are the module names of Hugging Face's Llama-family models, which
 * PEFT matches by suffix (peft src/peft/tuners/tuners_utils.py,
 * check_target_module_exists), plus the fused query_key_value of
 * GPT-NeoX, Falcon and BLOOM.  "all-linear" is PEFT's
 * INCLUDE_LINEAR_LAYERS_SHORTHAND: every linear of the layers except the
 * output head.  "peft-default" is what PEFT targets when target_modules
 * is not given, TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING
 * (peft@5fe7f8f8 src/peft/utils/constants.py): q_proj and v_proj for
 * llama, mistral, qwen2, gemma, mixtral.
 *
 * The adapters' parameter count per layer is here too, one count for the
 * memory model (ts_mem_states.c) and the step model (ts_step.c).
 */
#include "trainsize.h"

#include <string.h>

typedef struct ts_lora_name {
    const char *name;
    unsigned bit;
} ts_lora_name;

static const ts_lora_name ts_lora_names[] = {
    { "q_proj", TS_LORA_Q },       { "k_proj", TS_LORA_K },
    { "v_proj", TS_LORA_V },       { "o_proj", TS_LORA_O },
    { "gate_proj", TS_LORA_GATE }, { "up_proj", TS_LORA_UP },
    { "down_proj", TS_LORA_DOWN }, { "query_key_value", TS_LORA_QKV },
};

/* PEFT's modules_to_save as Llama-family models name the two modules
 * (LlamaModel.embed_tokens, LlamaForCausalLM.lm_head), first, then the
 * names other families give them, which axolotl lists for its own
 * embedding handling (loaders/utils.py): GPT-NeoX embed_in / embed_out,
 * BLOOM and Falcon word_embeddings, GPT-2 wte.  The text names each set
 * bit by its first name. */
static const ts_lora_name ts_lora_save_names[] = {
    { "embed_tokens", TS_LORA_SAVE_EMBED },    { "lm_head", TS_LORA_SAVE_HEAD },
    { "embed_in", TS_LORA_SAVE_EMBED },        { "embed_out", TS_LORA_SAVE_HEAD },
    { "word_embeddings", TS_LORA_SAVE_EMBED }, { "wte", TS_LORA_SAVE_EMBED },
};

#define TS_LORA_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static bool ts_lora_space(char c)
{
    return c == ' ' || c == '\t';
}

static bool ts_lora_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, len) == 0;
}

/* The trimmed span [*a, *b) of s[a, b). */
static void ts_lora_trim(const char *s, size_t *a, size_t *b)
{
    while (*a < *b && ts_lora_space(s[*a]))
        (*a)++;
    while (*b > *a && ts_lora_space(s[*b - 1]))
        (*b)--;
}

/* Names of table joined by commas onto their bits; -1 with the first
 * item that is not one. */
static int ts_lora_list_parse(const ts_lora_name *tab, size_t nt, const char *s, size_t len,
                              unsigned *out, size_t *bad_at, size_t *bad_len)
{
    unsigned set = 0;
    size_t i = 0;

    while (i <= len) {
        size_t a = i, b, k;
        bool found = false;

        while (i < len && s[i] != ',')
            i++;
        b = i;
        ts_lora_trim(s, &a, &b);
        for (k = 0; k < nt && !found; k++) {
            if (ts_lora_is(s + a, b - a, tab[k].name)) {
                set |= tab[k].bit;
                found = true;
            }
        }
        if (!found) {
            *bad_at = a;
            *bad_len = b - a;
            return -1;
        }
        i++; /* past the comma (or the end) */
    }
    *out = set;
    return 0;
}

/* The names of set's bits in table order, joined by commas, into buf
 * (cut to n, NUL-terminated); the full length. */
static size_t ts_lora_list_text(const ts_lora_name *tab, size_t nt, unsigned set, char *buf,
                                size_t n)
{
    size_t used = 0, k;
    unsigned said = 0;

    if (n > 0)
        buf[0] = '\0';
    for (k = 0; k < nt; k++) {
        const char *nm = tab[k].name;
        size_t l = strlen(nm), j;

        if (!(set & tab[k].bit) || (said & tab[k].bit))
            continue;
        said |= tab[k].bit;
        for (j = 0; j < (used > 0 ? 1u : 0u) + l; j++) {
            char c = used > 0 && j == 0 ? ',' : nm[j - (used > 0 ? 1 : 0)];

            if (n > 0 && used + j < n - 1) {
                buf[used + j] = c;
                buf[used + j + 1] = '\0';
            }
        }
        used += (used > 0 ? 1 : 0) + l;
    }
    return used;
}

int ts_lora_targets_parse(const char *s, size_t len, unsigned *out, size_t *bad_at, size_t *bad_len)
{
    unsigned set = 0;

    *out = 0;
    *bad_at = 0;
    *bad_len = len;
    if (s == NULL)
        return -1;
    /* The two shorthands stand alone. */
    {
        size_t a = 0, b = len;

        ts_lora_trim(s, &a, &b);
        if (ts_lora_is(s + a, b - a, "all-linear")) {
            *out = TS_LORA_ALL_LINEAR;
            return 0;
        }
        if (ts_lora_is(s + a, b - a, "peft-default")) {
            *out = TS_LORA_PEFT_DEFAULT;
            return 0;
        }
    }
    if (ts_lora_list_parse(ts_lora_names, TS_LORA_COUNT(ts_lora_names), s, len, &set, bad_at,
                           bad_len) != 0)
        return -1;
    /* A fused qkv and a separate q, k or v cannot both be in one model. */
    if ((set & TS_LORA_QKV) && (set & (TS_LORA_Q | TS_LORA_K | TS_LORA_V))) {
        *bad_at = 0;
        *bad_len = len;
        return -1;
    }
    *out = set;
    return 0;
}

size_t ts_lora_targets_text(unsigned set, char *buf, size_t n)
{
    if (set == TS_LORA_ALL_LINEAR) {
        const char *all = "all-linear";
        size_t used = strlen(all);

        if (n > 0) {
            size_t c = used < n - 1 ? used : n - 1;

            memcpy(buf, all, c);
            buf[c] = '\0';
        }
        return used;
    }
    return ts_lora_list_text(ts_lora_names, TS_LORA_COUNT(ts_lora_names), set, buf, n);
}

int ts_lora_save_parse(const char *s, size_t len, unsigned *out, size_t *bad_at, size_t *bad_len)
{
    size_t a = 0, b = len;

    *out = 0;
    *bad_at = 0;
    *bad_len = len;
    if (s == NULL)
        return -1;
    ts_lora_trim(s, &a, &b);
    if (a == b || ts_lora_is(s + a, b - a, "none")) /* "" or "none": none */
        return 0;
    return ts_lora_list_parse(ts_lora_save_names, TS_LORA_COUNT(ts_lora_save_names), s, len, out,
                              bad_at, bad_len);
}

size_t ts_lora_save_text(unsigned set, char *buf, size_t n)
{
    return ts_lora_list_text(ts_lora_save_names, TS_LORA_COUNT(ts_lora_save_names), set, buf, n);
}

/* A two-matrix MLP (up_proj, down_proj are fc1, fc2) has no gate; a
 * missing kv_heads or ffn is the shape default ts_run_resolve fills in
 * (heads, 4 h).  q_proj is heads x head_dim wide (Gemma, Qwen3: more
 * than h), k and v kv_heads x head_dim; a MoE layer's experts are moe_ffn
 * wide. */
double ts_lora_layer_params(const ts_model *m, unsigned targets, int64_t rank, double experts)
{
    unsigned tg = targets;
    double rk = (double)rank, h = (double)m->hidden, a = (double)m->heads;
    double hd = m->head_dim > 0 ? (double)m->head_dim : h / a;
    double F = (double)(m->experts > 1 && m->moe_ffn > 0 ? m->moe_ffn
                        : m->ffn > 0                     ? m->ffn
                                                         : 4 * m->hidden);
    double qd = a * hd, kvd = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads) * hd;
    double attn = rk * (((tg & TS_LORA_Q) ? h + qd : 0) + ((tg & TS_LORA_K) ? h + kvd : 0) +
                        ((tg & TS_LORA_V) ? h + kvd : 0) + ((tg & TS_LORA_O) ? qd + h : 0) +
                        ((tg & TS_LORA_QKV) ? h + qd + 2.0 * kvd : 0));
    double mlp = rk * experts *
                 ((m->gated && (tg & TS_LORA_GATE) ? h + F : 0) + ((tg & TS_LORA_UP) ? h + F : 0) +
                  ((tg & TS_LORA_DOWN) ? F + h : 0));

    return attn + mlp;
}

/* embed_tokens' copy is the token embedding (learned positions are
 * another module); lm_head's is vocab x hidden whether or not the model
 * ties it (the copy is its own tensor). */
double ts_lora_save_params(const ts_model *m, unsigned set)
{
    double vh = (double)m->vocab * (double)m->hidden;

    return ((set & TS_LORA_SAVE_EMBED) ? vh : 0) + ((set & TS_LORA_SAVE_HEAD) ? vh : 0);
}
