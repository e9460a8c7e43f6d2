/*
 * ts_import_mega.c - a Megatron-LM argument string ("megatron_args").
 *
 * The words are split like a POSIX shell would (quotes, backslash-newline
 * continuations, # comments), so a launch script's argument block or an
 * args.txt can be pasted as is; anything before the first --flag (the
 * torchrun launcher, pretrain_gpt.py) is skipped.  Flags and defaults
 * follow megatron/training/arguments.py:
 *   - ffn-hidden-size defaults to 4h, or int(8h/3 / 64) * 64 with --swiglu;
 *   - embeddings are tied unless --untie-embeddings-and-output-weights;
 *   - linear layers have biases unless --disable-bias-linear, norms are
 *     LayerNorm unless --normalization RMSNorm, positions are learned
 *     (max-position-embeddings rows) unless --position-embedding-type rope;
 *   - --vocab-size is padded to a multiple of make-vocab-size-divisible-by
 *     (128) x tp (_vocab_size_with_padding); --padded-vocab-size is not;
 *   - without --bf16 / --fp16 Megatron trains in fp32;
 *   - --use-distributed-optimizer shards optimizer state and fp32 main
 *     weights over data-parallel ranks (ZeRO stage 1), else nothing is;
 *   - num-layers-per-virtual-pipeline-stage N gives L / pp / N virtual
 *     stages per rank with the interleaved schedule;
 *   - hidden/attention dropout default to 0.1.
 * Model-shape defaults are applied only when the string defines a model
 * (--num-layers) and no hf_config gives it, so a parallelism-only string
 * can sit on a preset and explicit flags can adjust an imported shape.
 * Every flag that is not mapped is reported in a note, never dropped
 * silently; a value that is not what the flag takes is a 400.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_ckd.h"
#include "ts_import.h"

#define MEGA_PTR "/megatron_args"

typedef enum mega_kind { MK_INT = 0, MK_FLAG, MK_STR, MK_NUM } mega_kind;

typedef enum mega_id {
    M_NUM_LAYERS = 0, M_HIDDEN, M_HEADS, M_GQA, M_QUERY_GROUPS, M_FFN, M_KV_CHANNELS,
    M_SWIGLU, M_UNTIE, M_VOCAB, M_PADDED_VOCAB, M_VOCAB_DIV, M_SEQ, M_MAX_POS,
    M_POS_TYPE, M_ROPE_LEGACY, M_NORMALIZATION, M_NO_BIAS, M_QKV_BIAS, M_QK_LN,
    M_MICRO, M_GLOBAL, M_TP, M_PP, M_VPP_LAYERS, M_VPP_STAGES, M_CP, M_EP,
    M_EXPERTS, M_TOPK, M_MOE_FFN, M_SHARED_FFN, M_SP, M_DIST_OPT, M_RC_GRAN,
    M_RC_METHOD, M_RC_LAYERS, M_RC_ACT, M_BF16, M_FP16, M_FP8, M_FIRST, M_LAST,
    M_OPTIMIZER, M_HDROP, M_ADROP, M_FLASH, M_TRAIN_ITERS, M_TRAIN_SAMPLES,
    M_COUNT
} mega_id;

/* An integer flag's value is range-checked as it is read, before any
 * arithmetic: against the request member it lands on (range, the same
 * bounds a request gets), TS_FI_COUNT for [0, MEGA_INT_MAX], and at
 * least lo where Megatron itself refuses less. */
typedef struct mega_flag {
    const char *name;   /* without the leading "--" */
    mega_kind kind;
    ts_json_fi range;   /* MK_INT only */
    int64_t lo;         /* MK_INT only */
} mega_flag;

#define MEGA_INT_MAX (INT64_C(1) << 40)

static const mega_flag mega_flags[M_COUNT] = {
    [M_NUM_LAYERS] = { "num-layers", MK_INT, TS_FI_LAYERS, 0 },
    [M_HIDDEN] = { "hidden-size", MK_INT, TS_FI_HIDDEN, 0 },
    [M_HEADS] = { "num-attention-heads", MK_INT, TS_FI_HEADS, 0 },
    [M_GQA] = { "group-query-attention", MK_FLAG, TS_FI_COUNT, 0 },
    [M_QUERY_GROUPS] = { "num-query-groups", MK_INT, TS_FI_KV_HEADS, 0 },
    [M_FFN] = { "ffn-hidden-size", MK_INT, TS_FI_FFN, 0 },
    [M_KV_CHANNELS] = { "kv-channels", MK_INT, TS_FI_HEAD_DIM, 0 },
    [M_SWIGLU] = { "swiglu", MK_FLAG, TS_FI_COUNT, 0 },
    [M_UNTIE] = { "untie-embeddings-and-output-weights", MK_FLAG, TS_FI_COUNT, 0 },
    [M_VOCAB] = { "vocab-size", MK_INT, TS_FI_VOCAB, 1 },
    [M_PADDED_VOCAB] = { "padded-vocab-size", MK_INT, TS_FI_VOCAB, 1 },
    [M_VOCAB_DIV] = { "make-vocab-size-divisible-by", MK_INT, TS_FI_VOCAB, 1 },
    [M_SEQ] = { "seq-length", MK_INT, TS_FI_SEQ, 0 },
    [M_MAX_POS] = { "max-position-embeddings", MK_INT, TS_FI_POS_EMBEDDINGS, 0 },
    [M_POS_TYPE] = { "position-embedding-type", MK_STR, TS_FI_COUNT, 0 },
    [M_ROPE_LEGACY] = { "use-rotary-position-embeddings", MK_FLAG, TS_FI_COUNT, 0 },
    [M_NORMALIZATION] = { "normalization", MK_STR, TS_FI_COUNT, 0 },
    [M_NO_BIAS] = { "disable-bias-linear", MK_FLAG, TS_FI_COUNT, 0 },
    [M_QKV_BIAS] = { "add-qkv-bias", MK_FLAG, TS_FI_COUNT, 0 },
    [M_QK_LN] = { "qk-layernorm", MK_FLAG, TS_FI_COUNT, 0 },
    [M_MICRO] = { "micro-batch-size", MK_INT, TS_FI_MICRO_BATCH, 0 },
    [M_GLOBAL] = { "global-batch-size", MK_INT, TS_FI_GLOBAL_BATCH, 0 },
    [M_TP] = { "tensor-model-parallel-size", MK_INT, TS_FI_TP, 0 },
    [M_PP] = { "pipeline-model-parallel-size", MK_INT, TS_FI_PP, 0 },
    [M_VPP_LAYERS] = { "num-layers-per-virtual-pipeline-stage", MK_INT, TS_FI_LAYERS, 1 },
    [M_VPP_STAGES] = { "num-virtual-stages-per-pipeline-rank", MK_INT, TS_FI_VPP, 0 },
    [M_CP] = { "context-parallel-size", MK_INT, TS_FI_CP, 0 },
    [M_EP] = { "expert-model-parallel-size", MK_INT, TS_FI_EP, 0 },
    [M_EXPERTS] = { "num-experts", MK_INT, TS_FI_EXPERTS, 0 },
    [M_TOPK] = { "moe-router-topk", MK_INT, TS_FI_TOP_K, 0 },
    [M_MOE_FFN] = { "moe-ffn-hidden-size", MK_INT, TS_FI_MOE_FFN, 0 },
    [M_SHARED_FFN] = { "moe-shared-expert-intermediate-size", MK_INT, TS_FI_COUNT, 0 },
    [M_SP] = { "sequence-parallel", MK_FLAG, TS_FI_COUNT, 0 },
    [M_DIST_OPT] = { "use-distributed-optimizer", MK_FLAG, TS_FI_COUNT, 0 },
    [M_RC_GRAN] = { "recompute-granularity", MK_STR, TS_FI_COUNT, 0 },
    [M_RC_METHOD] = { "recompute-method", MK_STR, TS_FI_COUNT, 0 },
    [M_RC_LAYERS] = { "recompute-num-layers", MK_INT, TS_FI_LAYERS, 0 },
    [M_RC_ACT] = { "recompute-activations", MK_FLAG, TS_FI_COUNT, 0 },
    [M_BF16] = { "bf16", MK_FLAG, TS_FI_COUNT, 0 },
    [M_FP16] = { "fp16", MK_FLAG, TS_FI_COUNT, 0 },
    [M_FP8] = { "fp8-format", MK_STR, TS_FI_COUNT, 0 },
    [M_FIRST] = { "decoder-first-pipeline-num-layers", MK_INT, TS_FI_FIRST_STAGE_LAYERS, 0 },
    [M_LAST] = { "decoder-last-pipeline-num-layers", MK_INT, TS_FI_LAST_STAGE_LAYERS, 0 },
    [M_OPTIMIZER] = { "optimizer", MK_STR, TS_FI_COUNT, 0 },
    [M_HDROP] = { "hidden-dropout", MK_NUM, TS_FI_COUNT, 0 },
    [M_ADROP] = { "attention-dropout", MK_NUM, TS_FI_COUNT, 0 },
    [M_FLASH] = { "use-flash-attn", MK_FLAG, TS_FI_COUNT, 0 },
    [M_TRAIN_ITERS] = { "train-iters", MK_INT, TS_FI_COUNT, 0 },
    [M_TRAIN_SAMPLES] = { "train-samples", MK_INT, TS_FI_COUNT, 0 },
};

/* Known Megatron flags that take a value and do not change memory, time
 * or checkpoints as modelled here; reported as "no effect", not unknown. */
static const char *const mega_no_effect[] = {
    "lr", "min-lr", "lr-decay-style", "lr-warmup-iters", "lr-warmup-fraction",
    "lr-decay-iters", "weight-decay", "clip-grad", "adam-beta1", "adam-beta2",
    "adam-eps", "init-method-std", "seed", "data-path", "split", "tokenizer-type",
    "tokenizer-model", "vocab-file", "merge-file", "save", "load", "save-interval",
    "eval-interval", "eval-iters", "log-interval", "distributed-backend",
    "norm-epsilon", "rotary-base", "rotary-percent", "transformer-impl",
    "data-cache-path", "tensorboard-dir", "wandb-project", "exit-interval",
    "num-workers", "attention-backend", "moe-router-load-balancing-type",
    "moe-aux-loss-coeff", "moe-token-dispatcher-type", "moe-grouped-gemm",
    "use-mcore-models", "bf16-reduce", NULL
};

/* Parsed words: pointers into one malloc'd buffer. */
typedef struct mega_words {
    char *buf;
    char **w;
    size_t n;
} mega_words;

static void words_free(mega_words *t)
{
    free(t->buf);
    free(t->w);
}

static void oom(ts_api_err *err)
{
    ts_api_err_set(err, "out-of-memory", NULL,
                   "out of memory reading megatron_args");
}

/* Start a new word at buf + o. */
static int begin_word(mega_words *t, size_t *cap, size_t o, ts_api_err *err)
{
    if (t->n >= TS_IMPORT_TOKENS_MAX) {
        ts_api_err_set(err, "import-too-large",
                       MEGA_PTR, "megatron_args has more than %d words",
                       TS_IMPORT_TOKENS_MAX);
        return -1;
    }
    if (t->n == *cap) {
        char **nw = realloc(t->w, 2 * *cap * sizeof *t->w);

        if (nw == NULL) {
            oom(err);
            return -1;
        }
        t->w = nw;
        *cap *= 2;
    }
    t->w[t->n++] = t->buf + o;
    return 0;
}

/* POSIX-shell-like word splitting without expansion: blanks separate
 * words, '...' and "..." quote, backslash escapes (and joins lines), #
 * at the start of a word comments out the rest of the line. */
static int split(const char *s, size_t len, mega_words *t, ts_api_err *err)
{
    size_t i = 0, o = 0, cap = 64;
    bool in_word = false;
    char quote = 0;

    memset(t, 0, sizeof *t);
    t->buf = malloc(len + 1);
    t->w = malloc(cap * sizeof *t->w);
    if (t->buf == NULL || t->w == NULL) {
        oom(err);
        return -1;
    }
    for (i = 0; i < len; i++) {
        char c = s[i];

        if (c == '\0') {
            ts_api_err_set(err, "invalid-value", MEGA_PTR,
                           "megatron_args contains a NUL character");
            return -1;
        }
        if (quote == 0) {
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                if (in_word)
                    t->buf[o++] = '\0';
                in_word = false;
                continue;
            }
            if (c == '#' && !in_word) {
                while (i + 1 < len && s[i + 1] != '\n')
                    i++;
                continue;
            }
            if (c == '\\' && i + 1 < len && s[i + 1] == '\n') {
                i++; /* line continuation */
                continue;
            }
        }
        if (!in_word) {
            if (begin_word(t, &cap, o, err) != 0)
                return -1;
            in_word = true;
        }
        if (quote == 0 && (c == '\'' || c == '"')) {
            quote = c;
            continue;
        }
        if (quote != 0 && c == quote) {
            quote = 0;
            continue;
        }
        if (c == '\\' && i + 1 < len &&
            (quote == 0 || (quote == '"' && (s[i + 1] == '"' || s[i + 1] == '\\'))))
            c = s[++i];
        t->buf[o++] = c;
    }
    if (quote != 0) {
        ts_api_err_set(err, "invalid-value", MEGA_PTR,
                       "megatron_args has an unterminated %c quote", quote);
        return -1;
    }
    if (in_word)
        t->buf[o++] = '\0';
    return 0;
}

typedef struct mega_val {
    bool set;
    int64_t i;
    double d;
    const char *s;
} mega_val;

/* Append ", --name" to a note list (bounded). */
static void list_add(char *list, size_t cap, const char *name)
{
    size_t n = strlen(list);

    if (n + 8 >= cap)
        return;
    snprintf(list + n, cap - n, "%s--%.*s", n ? ", " : "", ts_utf8_prec(name, 48), name);
    ts_utf8_trim(list, strlen(list));
}

static int bad_value(ts_api_err *err, const char *flag, const char *want, const char *got)
{
    ts_api_err_set(err, "invalid-value", MEGA_PTR,
                   "megatron_args --%s takes %s, got '%.*s'", flag, want,
                   ts_utf8_prec(got, 48), got);
    return -1;
}

/* [lo, hi] of an integer flag (see mega_flag). */
static void int_range(const mega_flag *f, int64_t *lo, int64_t *hi)
{
    *lo = 0;
    *hi = MEGA_INT_MAX;
    if (f->range != TS_FI_COUNT) {
        const ts_api_field *rf = &ts_json_fields[f->range].f;

        /* integer members: whole bounds, none exclusive */
        *lo = (int64_t)rf->minimum;
        *hi = (int64_t)rf->maximum;
    }
    if (f->lo > *lo)
        *lo = f->lo;
}

static int parse_value(const mega_flag *f, const char *v, mega_val *out,
                       ts_api_err *err)
{
    char *end;

    switch (f->kind) {
    case MK_INT: {
        long long x;
        int64_t lo, hi;

        errno = 0;
        x = strtoll(v, &end, 10);
        if (errno != 0 || end == v || *end != '\0' || x < 0)
            return bad_value(err, f->name, "a non-negative integer", v);
        int_range(f, &lo, &hi);
        if (x < lo || x > hi) {
            ts_api_err_set(err, "out-of-range", MEGA_PTR,
                           "megatron_args --%s must be an integer from %lld to %lld, got %lld",
                           f->name, (long long)lo, (long long)hi, x);
            return -1;
        }
        out->i = (int64_t)x;
        break;
    }
    case MK_NUM:
        errno = 0;
        out->d = strtod(v, &end);
        if (errno != 0 || end == v || *end != '\0' || !(out->d >= 0 && out->d <= 1))
            return bad_value(err, f->name, "a number in [0, 1]", v);
        break;
    case MK_STR:
        out->s = v;
        break;
    case MK_FLAG:
    default:
        break;
    }
    out->set = true;
    return 0;
}

/* Walk the words into vals[]; unknown and no-effect flags into notes. */
static int scan(const mega_words *t, mega_val *vals, ts_api_notes *notes,
                ts_api_err *err)
{
    char unknown[TS_API_NOTE_LEN - 64] = "", noeff[TS_API_NOTE_LEN - 64] = "";
    size_t i;
    bool seen_flag = false;

    /* A pasted launch line: everything up to the training script
     * (torchrun and its options, pretrain_gpt.py) is the launcher's. */
    for (i = t->n; i > 0; i--) {
        size_t wl = strlen(t->w[i - 1]);

        if (wl > 3 && strcmp(t->w[i - 1] + wl - 3, ".py") == 0)
            break;
    }
    for (; i < t->n; i++) {
        const char *w = t->w[i];
        const char *eq, *name, *val;
        char key[80];
        size_t klen;
        int id;

        if (strncmp(w, "--", 2) != 0 || w[2] == '\0') {
            /* The launcher and script before the first flag are skipped. */
            if (seen_flag)
                ts_import_note(notes, "megatron_args: stray word '%.*s' ignored",
                               ts_utf8_prec(w, 48), w);
            continue;
        }
        seen_flag = true;
        name = w + 2;
        eq = strchr(name, '=');
        klen = eq != NULL ? (size_t)(eq - name) : strlen(name);
        snprintf(key, sizeof key, "%.*s",
                 ts_utf8_prec(name, klen < sizeof key - 1 ? klen : sizeof key - 1), name);
        /* argparse accepts --num_layers for --num-layers only where the
         * parser says so; Megatron does not, so neither do we. */
        for (id = 0; id < M_COUNT && strcmp(mega_flags[id].name, key) != 0; id++)
            ;
        if (id == M_COUNT) {
            const char *const *ne;
            bool takes = eq == NULL && i + 1 < t->n && strncmp(t->w[i + 1], "--", 2) != 0;

            for (ne = mega_no_effect; *ne != NULL && strcmp(*ne, key) != 0; ne++)
                ;
            list_add(*ne != NULL ? noeff : unknown, sizeof unknown, key);
            if (takes)
                i++; /* its value */
            continue;
        }
        if (mega_flags[id].kind == MK_FLAG) {
            if (eq != NULL)
                return bad_value(err, key, "no value", eq + 1);
            vals[id].set = true;
            continue;
        }
        if (eq != NULL) {
            val = eq + 1;
        } else if (i + 1 < t->n && strncmp(t->w[i + 1], "--", 2) != 0) {
            val = t->w[++i]; /* the value is the next word */
        } else {
            ts_api_err_set(err, "invalid-value", MEGA_PTR,
                           "megatron_args --%s needs a value", key);
            return -1;
        }
        if (parse_value(&mega_flags[id], val, &vals[id], err) != 0)
            return -1;
    }
    if (unknown[0] != '\0')
        ts_import_note(notes, "megatron_args: unknown flags ignored: %s", unknown);
    if (noeff[0] != '\0')
        ts_import_note(notes, "megatron_args: flags with no effect on the estimate: %s", noeff);
    return 0;
}

static int set_i(ts_import *im, ts_json_fi fi, int64_t v, mega_id id, ts_api_err *err)
{
    char origin[TS_IMPORT_ORIGIN_LEN];

    snprintf(origin, sizeof origin, MEGA_PTR " (--%s)", mega_flags[id].name);
    return ts_import_set_int(im, fi, v, TS_SRC_MEGATRON, origin, err);
}

static int set_b(ts_import *im, ts_json_fi fi, bool v, const char *why, ts_api_err *err)
{
    char origin[TS_IMPORT_ORIGIN_LEN];

    snprintf(origin, sizeof origin, MEGA_PTR " (%s)", why);
    return ts_import_set_bool(im, fi, v, TS_SRC_MEGATRON, origin, err);
}

static int set_s(ts_import *im, ts_json_fi fi, const char *v, const char *why,
                 ts_api_err *err)
{
    char origin[TS_IMPORT_ORIGIN_LEN];

    snprintf(origin, sizeof origin, MEGA_PTR " (%s)", why);
    return ts_import_set_str(im, fi, v, TS_SRC_MEGATRON, origin, err);
}

/* Integer flags that map one to one. */
static int emit_direct(ts_import *im, const mega_val *v, ts_api_err *err)
{
    static const struct { mega_id id; ts_json_fi fi; } direct[] = {
        { M_NUM_LAYERS, TS_FI_LAYERS }, { M_HIDDEN, TS_FI_HIDDEN },
        { M_HEADS, TS_FI_HEADS }, { M_SEQ, TS_FI_SEQ }, { M_MICRO, TS_FI_MICRO_BATCH },
        { M_GLOBAL, TS_FI_GLOBAL_BATCH }, { M_TP, TS_FI_TP }, { M_PP, TS_FI_PP },
        { M_CP, TS_FI_CP }, { M_EP, TS_FI_EP }, { M_EXPERTS, TS_FI_EXPERTS },
        { M_TOPK, TS_FI_TOP_K }, { M_MOE_FFN, TS_FI_MOE_FFN },
        { M_FIRST, TS_FI_FIRST_STAGE_LAYERS }, { M_LAST, TS_FI_LAST_STAGE_LAYERS },
        { M_KV_CHANNELS, TS_FI_HEAD_DIM },
    };
    size_t k;

    for (k = 0; k < sizeof direct / sizeof direct[0]; k++)
        if (v[direct[k].id].set &&
            set_i(im, direct[k].fi, v[direct[k].id].i, direct[k].id, err) != 0)
            return -1;
    return 0;
}

/* --vocab-size padded as Megatron pads it: to a multiple of
 * make_vocab_size_divisible_by (default 128) x tensor_model_parallel_size
 * (megatron/training/tokenizer/tokenizer.py _vocab_size_with_padding
 * @4ff7686c144fcd3f6ac130e5a97f86a0b8aa4dd5; now
 * megatron/training/vocab_utils.py calculate_padded_vocab_size
 * @d98e8a64ddf34856e74b24714e3bedb2f5a39553, which refuses a divisor or
 * tp below 1).  Megatron rounds with ceil(v / m) in floating point; its
 * test_training.py checks that against the integer loop, which is what
 * this computes.  Both factors were range-checked as they were read; the
 * product and the rounding are checked too, and a padded size past the
 * vocab member's range is a 400 naming the three flags. */
static int pad_vocab(ts_import *im, const mega_val *v, int64_t tp,
                     ts_api_notes *notes, ts_api_err *err)
{
    int64_t vocab = v[M_VOCAB].i;
    int64_t div = v[M_VOCAB_DIV].set ? v[M_VOCAB_DIV].i : 128;
    int64_t hi = (int64_t)ts_json_fields[TS_FI_VOCAB].f.maximum;
    int64_t mult = 0, padded = 0;

    if (ts_ckd_mul(&mult, div, tp) || ts_ckd_round_up(&padded, vocab, mult) || padded > hi) {
        ts_api_err_set(err, "out-of-range", MEGA_PTR,
                       "megatron_args: --vocab-size %lld padded to a multiple of "
                       "--make-vocab-size-divisible-by %lld x --tensor-model-parallel-size "
                       "%lld is more than the vocab maximum %lld", (long long)vocab,
                       (long long)div, (long long)tp, (long long)hi);
        return -1;
    }
    if (padded != vocab)
        ts_import_note(notes, "megatron_args: --vocab-size %lld padded to %lld "
                       "(multiple of %lld x tp %lld, as Megatron does)",
                       (long long)vocab, (long long)padded, (long long)div, (long long)tp);
    return set_i(im, TS_FI_VOCAB, padded, M_VOCAB, err);
}

/* hf: an hf_config gave the shape.  Then it is the checkpoint's, and
 * Megatron's defaults for flags the string leaves out would contradict it. */
static int emit_shape(ts_import *im, const mega_val *v, bool hf,
                      ts_api_notes *notes, ts_api_err *err)
{
    bool model = v[M_NUM_LAYERS].set && !hf;
    int64_t tp = v[M_TP].set ? v[M_TP].i : 1;

    if (v[M_GQA].set) {
        if (!v[M_QUERY_GROUPS].set) {
            ts_api_err_set(err, "invalid-value", MEGA_PTR,
                           "megatron_args --group-query-attention needs --num-query-groups");
            return -1;
        }
        if (set_i(im, TS_FI_KV_HEADS, v[M_QUERY_GROUPS].i, M_QUERY_GROUPS, err) != 0)
            return -1;
    } else if (v[M_QUERY_GROUPS].set) {
        ts_import_note(notes, "megatron_args: --num-query-groups without "
                       "--group-query-attention is ignored by Megatron (MHA)");
    }
    if (v[M_FFN].set) {
        if (set_i(im, TS_FI_FFN, v[M_FFN].i, M_FFN, err) != 0)
            return -1;
    } else if (model && v[M_HIDDEN].set) {
        int64_t h = v[M_HIDDEN].i;
        int64_t f = v[M_SWIGLU].set ? ts_ckd_mul_sat(h, 8) / 192 * 64 : ts_ckd_mul_sat(h, 4);

        if (set_i(im, TS_FI_FFN, f, M_HIDDEN, err) != 0)
            return -1;
    }
    if (v[M_PADDED_VOCAB].set) {
        if (set_i(im, TS_FI_VOCAB, v[M_PADDED_VOCAB].i, M_PADDED_VOCAB, err) != 0)
            return -1;
    } else if (v[M_VOCAB].set && pad_vocab(im, v, tp, notes, err) != 0) {
        return -1;
    }
    if (v[M_SHARED_FFN].set) {
        int64_t fe = v[M_MOE_FFN].set ? v[M_MOE_FFN].i : v[M_FFN].i;

        if (fe <= 0 || v[M_SHARED_FFN].i % fe != 0) {
            ts_api_err_set(err, "unsupported-config", MEGA_PTR,
                           "megatron_args --moe-shared-expert-intermediate-size must be a "
                           "multiple of the expert width (--moe-ffn-hidden-size)");
            return -1;
        }
        if (set_i(im, TS_FI_SHARED_EXPERTS, v[M_SHARED_FFN].i / fe, M_SHARED_FFN, err) != 0)
            return -1;
    }
    /* Megatron routes each token to --moe-router-topk experts, default 2. */
    if (v[M_EXPERTS].set && v[M_EXPERTS].i > 1 && !v[M_TOPK].set &&
        ts_import_set_int(im, TS_FI_TOP_K, 2, TS_SRC_MEGATRON,
                          MEGA_PTR " (--moe-router-topk default 2)", err) != 0)
        return -1;
    if (v[M_QKV_BIAS].set && set_b(im, TS_FI_QKV_BIAS, true, "--add-qkv-bias", err) != 0)
        return -1;
    if (v[M_QK_LN].set && set_b(im, TS_FI_QK_NORM, true, "--qk-layernorm", err) != 0)
        return -1;
    if (v[M_SWIGLU].set && set_b(im, TS_FI_GATED, true, "--swiglu", err) != 0)
        return -1;
    if (!model) {
        if (hf && v[M_NUM_LAYERS].set)
            ts_import_note(notes, "megatron_args: with hf_config, only the flags "
                           "given override its shape (Megatron's defaults for the "
                           "others are not applied)");
        return 0;
    }

    /* Megatron's own defaults for a model the string defines. */
    {
        bool bias = !v[M_NO_BIAS].set;
        const char *norm = v[M_NORMALIZATION].set ? v[M_NORMALIZATION].s : "LayerNorm";
        const char *pos = v[M_POS_TYPE].set ? v[M_POS_TYPE].s
                        : v[M_ROPE_LEGACY].set ? "rope" : "learned_absolute";
        bool layernorm;

        if (strcmp(norm, "LayerNorm") == 0) {
            layernorm = true;
        } else if (strcmp(norm, "RMSNorm") == 0) {
            layernorm = false;
        } else {
            return bad_value(err, "normalization", "LayerNorm or RMSNorm", norm);
        }
        if (set_b(im, TS_FI_GATED, v[M_SWIGLU].set, "--swiglu", err) != 0 ||
            set_b(im, TS_FI_TIED_EMBEDDINGS, !v[M_UNTIE].set,
                  "--untie-embeddings-and-output-weights", err) != 0 ||
            set_b(im, TS_FI_QKV_BIAS, bias || v[M_QKV_BIAS].set, "--disable-bias-linear", err) != 0 ||
            set_b(im, TS_FI_OUT_BIAS, bias, "--disable-bias-linear", err) != 0 ||
            set_b(im, TS_FI_MLP_BIAS, bias, "--disable-bias-linear", err) != 0 ||
            set_b(im, TS_FI_NORM_BIAS, layernorm, "--normalization", err) != 0 ||
            set_s(im, TS_FI_NORM, layernorm ? "layernorm" : "rmsnorm", "--normalization", err) != 0)
            return -1;
        if (!v[M_KV_CHANNELS].set &&
            set_i(im, TS_FI_HEAD_DIM, 0, M_KV_CHANNELS, err) != 0)
            return -1;
        if (!v[M_GQA].set && v[M_HEADS].set &&
            set_i(im, TS_FI_KV_HEADS, v[M_HEADS].i, M_HEADS, err) != 0)
            return -1;
        if (strcmp(pos, "learned_absolute") == 0) {
            int64_t rows = v[M_MAX_POS].set ? v[M_MAX_POS].i : v[M_SEQ].set ? v[M_SEQ].i : 0;

            if (rows == 0) {
                ts_api_err_set(err, "invalid-value", MEGA_PTR,
                               "megatron_args: learned absolute positions (the default "
                               "--position-embedding-type) need --max-position-embeddings");
                return -1;
            }
            if (set_i(im, TS_FI_POS_EMBEDDINGS, rows, M_MAX_POS, err) != 0)
                return -1;
        } else if (strcmp(pos, "rope") == 0 || strcmp(pos, "none") == 0 ||
                   strcmp(pos, "yarn") == 0) {
            if (set_i(im, TS_FI_POS_EMBEDDINGS, 0, M_POS_TYPE, err) != 0)
                return -1;
        } else {
            return bad_value(err, "position-embedding-type",
                             "learned_absolute, rope, yarn or none", pos);
        }
        if (ts_import_set(im, TS_FI_PARAMS, json_null(), TS_SRC_MEGATRON,
                          MEGA_PTR " (--num-layers)", err) != 0)
            return -1;
        /* Megatron's dropout defaults are 0.1 each. */
        {
            double hd = v[M_HDROP].set ? v[M_HDROP].d : 0.1;
            double ad = v[M_ADROP].set ? v[M_ADROP].d : 0.1;

            if (set_b(im, TS_FI_DROPOUT, hd > 0 || ad > 0,
                      "--hidden-dropout/--attention-dropout, default 0.1", err) != 0)
                return -1;
        }
    }
    return 0;
}

static int emit_layout(ts_import *im, const mega_val *v, ts_api_notes *notes,
                       ts_api_err *err)
{
    if (v[M_SP].set && set_b(im, TS_FI_SEQUENCE_PARALLEL, true, "--sequence-parallel", err) != 0)
        return -1;
    if (set_i(im, TS_FI_ZERO, v[M_DIST_OPT].set ? 1 : 0, M_DIST_OPT, err) != 0)
        return -1;
    if (v[M_VPP_LAYERS].set || v[M_VPP_STAGES].set) {
        int64_t vpp;

        if (v[M_VPP_STAGES].set) {
            vpp = v[M_VPP_STAGES].i;
        } else {
            int64_t L = v[M_NUM_LAYERS].set ? v[M_NUM_LAYERS].i : 0;
            int64_t pp = v[M_PP].set ? v[M_PP].i : 1;
            int64_t n = v[M_VPP_LAYERS].i;

            /* pp >= 1 and n >= 1: range-checked as read */
            if (L == 0 || (L / pp) % n != 0) {
                ts_api_err_set(err, "invalid-value", MEGA_PTR,
                               "megatron_args --num-layers-per-virtual-pipeline-stage %lld "
                               "needs --num-layers with num-layers / pp divisible by it",
                               (long long)n);
                return -1;
            }
            vpp = L / pp / n;
        }
        if (set_i(im, TS_FI_VPP, vpp, v[M_VPP_STAGES].set ? M_VPP_STAGES : M_VPP_LAYERS, err) != 0 ||
            set_s(im, TS_FI_PP_SCHEDULE, vpp > 1 ? "interleaved" : "1f1b",
                  "--num-layers-per-virtual-pipeline-stage", err) != 0)
            return -1;
    }
    if (v[M_RC_ACT].set && !v[M_RC_GRAN].set &&
        set_s(im, TS_FI_RECOMPUTE, "selective", "--recompute-activations", err) != 0)
        return -1;
    if (v[M_RC_GRAN].set) {
        const char *g = v[M_RC_GRAN].s;

        if (strcmp(g, "full") != 0 && strcmp(g, "selective") != 0)
            return bad_value(err, "recompute-granularity", "full or selective", g);
        if (set_s(im, TS_FI_RECOMPUTE, g, "--recompute-granularity", err) != 0)
            return -1;
        if (strcmp(g, "full") == 0 && v[M_RC_METHOD].set &&
            strcmp(v[M_RC_METHOD].s, "block") == 0 && v[M_RC_LAYERS].set)
            ts_import_note(notes, "megatron_args: --recompute-method block with "
                           "--recompute-num-layers %lld recomputes only that many layers "
                           "per stage; modelled as full recompute of every layer (a lower "
                           "bound on activation memory)", (long long)v[M_RC_LAYERS].i);
    }
    if (v[M_FLASH].set && set_s(im, TS_FI_ATTENTION, "flash", "--use-flash-attn", err) != 0)
        return -1;
    return 0;
}

static int emit_precision(ts_import *im, const mega_val *v, ts_api_notes *notes,
                          ts_api_err *err)
{
    if (v[M_BF16].set && v[M_FP16].set) {
        ts_api_err_set(err, "incompatible-options", MEGA_PTR,
                       "megatron_args gives both --bf16 and --fp16");
        return -1;
    }
    if (set_s(im, TS_FI_PRECISION, v[M_BF16].set ? "bf16" : v[M_FP16].set ? "fp16" : "fp32",
              v[M_BF16].set ? "--bf16" : v[M_FP16].set ? "--fp16"
                            : "no --bf16/--fp16: Megatron trains in fp32", err) != 0)
        return -1;
    if (!v[M_BF16].set && !v[M_FP16].set)
        ts_import_note_about(notes, TS_FI_PRECISION, TS_SRC_MEGATRON,
                             "megatron_args: no --bf16 or --fp16, so Megatron "
                       "trains in fp32 (precision \"fp32\")");
    if (v[M_FP8].set) {
        if (strcmp(v[M_FP8].s, "e4m3") != 0 && strcmp(v[M_FP8].s, "hybrid") != 0)
            return bad_value(err, "fp8-format", "e4m3 or hybrid", v[M_FP8].s);
        if (set_s(im, TS_FI_COMPUTE_PRECISION, "fp8", "--fp8-format", err) != 0)
            return -1;
    }
    if (v[M_OPTIMIZER].set) {
        const char *o = v[M_OPTIMIZER].s;

        /* Megatron's "adam" is torch AdamW (decoupled weight decay). */
        if (strcmp(o, "adam") == 0) {
            if (set_s(im, TS_FI_OPTIMIZER, "adamw", "--optimizer", err) != 0)
                return -1;
        } else if (strcmp(o, "sgd") == 0) {
            if (set_s(im, TS_FI_OPTIMIZER, "sgd_momentum", "--optimizer", err) != 0)
                return -1;
        } else {
            return bad_value(err, "optimizer", "adam or sgd", o);
        }
    }
    /* Training length: iterations x global batch x sequence. */
    if ((v[M_TRAIN_ITERS].set || v[M_TRAIN_SAMPLES].set) && v[M_SEQ].set) {
        double tokens = v[M_TRAIN_SAMPLES].set
            ? (double)v[M_TRAIN_SAMPLES].i * (double)v[M_SEQ].i
            : v[M_GLOBAL].set ? (double)v[M_TRAIN_ITERS].i * (double)v[M_GLOBAL].i *
                                (double)v[M_SEQ].i : 0.0;

        if (tokens > 0 &&
            ts_import_set(im, TS_FI_TOKENS, json_real(tokens), TS_SRC_MEGATRON,
                          MEGA_PTR " (--train-iters/--train-samples x --seq-length)", err) != 0)
            return -1;
    }
    return 0;
}

int ts_import_mega(ts_import *im, const char *args, size_t len, ts_api_err *err)
{
    mega_val vals[M_COUNT];
    mega_words t;
    bool hf = im->vals[TS_FI_LAYERS] != NULL && im->src[TS_FI_LAYERS] == TS_SRC_HF;
    int rc = -1;

    if (len > TS_IMPORT_ARGS_MAX) {
        ts_api_err_set(err, "import-too-large", MEGA_PTR,
                       "megatron_args is %zu bytes, more than %d", len, TS_IMPORT_ARGS_MAX);
        return -1;
    }
    memset(vals, 0, sizeof vals);
    if (split(args, len, &t, err) != 0)
        goto out;
    if (scan(&t, vals, im->notes, err) != 0)
        goto out;
    if (set_s(im, TS_FI_FRAMEWORK, "megatron", "Megatron-LM", err) != 0 ||
        emit_direct(im, vals, err) != 0 ||
        emit_shape(im, vals, hf, im->notes, err) != 0 ||
        emit_layout(im, vals, im->notes, err) != 0 ||
        emit_precision(im, vals, im->notes, err) != 0)
        goto out;
    rc = 0;
out:
    words_free(&t);
    return rc;
}
