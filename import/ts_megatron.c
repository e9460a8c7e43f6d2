/*
 * ts_megatron.c    - Megatron-LM arguments ("megatron_args"): a launch
 * script as users keep it, an args.txt, or a pasted command line.
 *
 * The text is read by the shell reader (ts_shell.c): variables, arrays,
 * ${VAR:-default}, if/else, torchrun / deepspeed / srun / sbatch heredoc
 * / bash -c wrappers.  Its training command gives the flags after the
 * *.py entry point; the launcher's own options before it give the GPU
 * count (torchrun --nproc_per_node x --nnodes, deepspeed --num_gpus x
 * --num_nodes, srun / #SBATCH tasks).  A word whose value is not known
 * (a variable never assigned, a script argument, a command's output) is
 * ignored in a flag that is not read here, and a 400 naming it and its
 * line in a flag that is, unless the request gives that member itself.
 * Flags and defaults follow megatron/training/arguments.py:
 *   - ffn-hidden-size defaults to 4h, or int(8h/3 / 64) * 64 with --swiglu;
 *   - embeddings are tied unless --untie-embeddings-and-output-weights;
 *   - linear layers have biases unless --disable-bias-linear, norms are
 *     LayerNorm unless --normalization RMSNorm, positions are learned
 *     (max-position-embeddings rows) unless --position-embedding-type rope;
 *   - the vocabulary is --vocab-size, else the tokenizer's (GPT2BPETokenizer:
 *     the GPT-2 vocab.json, 50257 entries; HuggingFaceTokenizer: the
 *     catalogue model --tokenizer-model names), padded to a multiple of
 *     make-vocab-size-divisible-by (128) x tp; --padded-vocab-size is not;
 *   - without --bf16 / --fp16 Megatron trains in fp32;
 *   - --use-distributed-optimizer shards optimizer state and fp32 main
 *     weights over data-parallel ranks (ZeRO stage 1), else nothing is;
 *     Megatron-FSDP (--use-megatron-fsdp) shards by
 *     --data-parallel-sharding-strategy (default optim_grads_params: ZeRO-3);
 *   - num-layers-per-virtual-pipeline-stage N gives L / pp / N virtual
 *     stages per rank with the interleaved schedule;
 *   - --multi-latent-attention: kv-lora-rank 32, qk-head-dim 128,
 *     qk-pos-emb-head-dim 64, v-head-dim 128 by default, no q compression;
 *   - hidden/attention dropout default to 0.1.
 * Model-shape defaults are applied only when the text defines a model
 * (--num-layers) and no hf_config gives it, so a parallelism-only text
 * can sit on a preset and explicit flags can adjust an imported shape.
 * Every flag that is not mapped is reported in a note, never dropped
 * silently; a value that is not what the flag takes is a 400.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_catalogue.h"
#include "ts_ckd.h"
#include "ts_import.h"
#include "ts_shell.h"

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
    M_TOK_TYPE, M_TOK_MODEL, M_VOCAB_FILE, M_MERGE_FILE, M_MFSDP, M_TFSDP, M_SHARDING,
    M_MLA, M_Q_LORA, M_KV_LORA, M_QK_HEAD, M_QK_POS, M_V_HEAD, M_MOE_FREQ, M_EXPERT_BIAS,
    M_MTP, M_CKPT_ACT, M_CKPT_METHOD, M_QUICK_GEGLU,
    M_COUNT
} mega_id;

/* An integer flag's value is range-checked as it is read, before any
 * arithmetic: against the request member it lands on (range, the same
 * bounds a request gets), TS_FI_COUNT for [0, MEGA_INT_MAX], and at
 * least lo where Megatron itself refuses less. */
typedef struct mega_flag {
    const char *name;   /* without the leading "--" */
    mega_kind kind;
    ts_field_id range;   /* MK_INT only */
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
    [M_TOK_TYPE] = { "tokenizer-type", MK_STR, TS_FI_COUNT, 0 },
    [M_TOK_MODEL] = { "tokenizer-model", MK_STR, TS_FI_COUNT, 0 },
    [M_VOCAB_FILE] = { "vocab-file", MK_STR, TS_FI_COUNT, 0 },
    [M_MERGE_FILE] = { "merge-file", MK_STR, TS_FI_COUNT, 0 },
    [M_MFSDP] = { "use-megatron-fsdp", MK_FLAG, TS_FI_COUNT, 0 },
    [M_TFSDP] = { "use-torch-fsdp2", MK_FLAG, TS_FI_COUNT, 0 },
    [M_SHARDING] = { "data-parallel-sharding-strategy", MK_STR, TS_FI_COUNT, 0 },
    [M_MLA] = { "multi-latent-attention", MK_FLAG, TS_FI_COUNT, 0 },
    [M_Q_LORA] = { "q-lora-rank", MK_INT, TS_FI_Q_LORA_RANK, 1 },
    [M_KV_LORA] = { "kv-lora-rank", MK_INT, TS_FI_KV_LORA_RANK, 1 },
    [M_QK_HEAD] = { "qk-head-dim", MK_INT, TS_FI_QK_NOPE_DIM, 1 },
    [M_QK_POS] = { "qk-pos-emb-head-dim", MK_INT, TS_FI_QK_ROPE_DIM, 0 },
    [M_V_HEAD] = { "v-head-dim", MK_INT, TS_FI_V_HEAD_DIM, 1 },
    [M_MOE_FREQ] = { "moe-layer-freq", MK_STR, TS_FI_COUNT, 0 },
    [M_EXPERT_BIAS] = { "moe-router-enable-expert-bias", MK_FLAG, TS_FI_COUNT, 0 },
    [M_MTP] = { "mtp-num-layers", MK_INT, TS_FI_COUNT, 0 },
    [M_CKPT_ACT] = { "checkpoint-activations", MK_FLAG, TS_FI_COUNT, 0 },
    [M_CKPT_METHOD] = { "activations-checkpoint-method", MK_STR, TS_FI_COUNT, 0 },
    [M_QUICK_GEGLU] = { "quick-geglu", MK_FLAG, TS_FI_COUNT, 0 },
};

/* The request member a flag's value feeds (for "the request gives it"):
 * the range member, else these. */
static ts_field_id mega_target(mega_id id)
{
    switch (id) {
    case M_TRAIN_ITERS:
    case M_TRAIN_SAMPLES: return TS_FI_TOKENS;
    case M_TOK_TYPE:
    case M_TOK_MODEL:
    case M_VOCAB_FILE:
    case M_MERGE_FILE:
    case M_VOCAB_DIV: return TS_FI_VOCAB;
    case M_POS_TYPE: return TS_FI_POS_EMBEDDINGS;
    case M_NORMALIZATION: return TS_FI_NORM;
    case M_SHARDING: return TS_FI_ZERO;
    case M_RC_GRAN:
    case M_RC_METHOD:
    case M_CKPT_METHOD: return TS_FI_RECOMPUTE;
    case M_FP8: return TS_FI_COMPUTE_PRECISION;
    case M_OPTIMIZER: return TS_FI_OPTIMIZER;
    case M_MOE_FREQ: return TS_FI_DENSE_LAYERS;
    case M_HDROP:
    case M_ADROP: return TS_FI_DROPOUT;
    case M_VPP_LAYERS: return TS_FI_VPP;
    case M_RC_LAYERS: return TS_FI_RECOMPUTE;
    default: return mega_flags[id].range;
    }
}

/* Known Megatron flags that take a value and do not change memory, time
 * or checkpoints as modelled here; reported as "no effect", not unknown. */
static const char *const mega_no_effect[] = {
    "lr", "min-lr", "lr-decay-style", "lr-warmup-iters", "lr-warmup-fraction",
    "lr-decay-iters", "weight-decay", "clip-grad", "adam-beta1", "adam-beta2",
    "adam-eps", "init-method-std", "seed", "data-path", "split",
    "save", "load", "save-interval",
    "eval-interval", "eval-iters", "log-interval", "distributed-backend",
    "norm-epsilon", "rotary-base", "rotary-percent", "transformer-impl",
    "data-cache-path", "tensorboard-dir", "wandb-project", "exit-interval",
    "num-workers", "attention-backend", "moe-router-load-balancing-type",
    "moe-aux-loss-coeff", "moe-token-dispatcher-type", "moe-grouped-gemm",
    "use-mcore-models", "bf16-reduce", NULL
};

static void oom(ts_api_err *err)
{
    ts_api_err_set(err, TS_PROB_OUT_OF_MEMORY, NULL,
                   "out of memory reading megatron_args");
}

typedef struct mega_val {
    bool set;
    int64_t i;
    double d;
    const char *s;
    unsigned line;      /* the flag's line */
    const ts_shell_word *unknown;   /* a value not known (the vocabulary's flags) */
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
    ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                   "megatron_args --%s takes %s, got '%.*s'", flag, want,
                   ts_utf8_prec(got, 48), got);
    return -1;
}

/* "megatron_args line N: " before a problem about a flag of line N. */
static void at_line(ts_api_err *err, unsigned line)
{
    char d[TS_API_DETAIL_LEN];
    const char *pre = "megatron_args ";

    if (line == 0 || strncmp(err->detail, pre, strlen(pre)) != 0)
        return;
    snprintf(d, sizeof d, "megatron_args line %u: %s", line, err->detail + strlen(pre));
    ts_utf8_trim(d, strlen(d));
    memcpy(err->detail, d, sizeof d);
}

/* [lo, hi] of an integer flag (see mega_flag). */
static void int_range(const mega_flag *f, int64_t *lo, int64_t *hi)
{
    *lo = 0;
    *hi = MEGA_INT_MAX;
    if (f->range != TS_FI_COUNT) {
        const ts_api_field *rf = &ts_fields[f->range];

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
            ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, MEGA_PTR,
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

static bool is_flag(const ts_shell_word *w)
{
    return !w->ghost && w->text[0] == '-' && w->text[1] == '-' && w->text[2] != '\0';
}

/* The value word of a flag the estimate reads is not known: a 400 naming
 * why and where, unless the request gives the member it feeds. */
static int unknown_value(const ts_import *im, mega_id id, const ts_shell_word *flag,
                         const ts_shell_word *v, mega_val *vals, ts_api_err *err)
{
    char why[TS_API_DETAIL_LEN / 2];
    ts_field_id fi = mega_target(id);

    if (id == M_TOK_TYPE || id == M_TOK_MODEL || id == M_VOCAB_FILE || id == M_MERGE_FILE) {
        /* Decided with the vocabulary: --vocab-size may make it moot. */
        vals[id].unknown = v;
        return 1;
    }
    if (fi != TS_FI_COUNT && im->req_has[fi])
        return 1;   /* the request's value stands; this one is not needed */
    ts_shell_why_text(v, why, sizeof why);
    ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                   "megatron_args line %u: --%s needs %s", flag->line, mega_flags[id].name, why);
    return -1;
}

/* Walk the training command's flags into vals[]; unknown and no-effect
 * flags into notes.  Megatron's parser has no positional arguments, so
 * every word after a flag that is not itself a flag belongs to it
 * (argparse nargs, e.g. --recompute-modules mlp moe). */
static int scan(const ts_import *im, const ts_shell_cmd *c, mega_val *vals,
                ts_api_notes *notes, ts_api_err *err)
{
    char unknown[TS_API_NOTE_LEN - 64] = "", noeff[TS_API_NOTE_LEN - 64] = "";
    size_t i = c->entry < c->n ? c->entry + 1 : 0;
    bool seen_flag = false;

    for (; i < c->n; i++) {
        const ts_shell_word *w = &c->w[i];
        const char *eq, *name, *val;
        char key[80];
        size_t klen;
        int id;

        if (!is_flag(w)) {
            /* An unknown value in a word no flag takes: bash would have
             * dropped it (an empty $EXTRA_ARGS); other words are noted. */
            if (seen_flag && !w->ghost && w->why == TS_SHELL_KNOWN)
                ts_import_note(notes, "megatron_args line %u: stray word '%.*s' ignored",
                               w->line, ts_utf8_prec(w->text, 48), w->text);
            continue;
        }
        seen_flag = true;
        name = w->text + 2;
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

            for (ne = mega_no_effect; *ne != NULL && strcmp(*ne, key) != 0; ne++)
                ;
            list_add(*ne != NULL ? noeff : unknown, sizeof unknown, key);
            if (eq == NULL)
                while (i + 1 < c->n && !is_flag(&c->w[i + 1]))
                    i++;   /* its values */
            continue;
        }
        vals[id].line = w->line;
        if (mega_flags[id].kind == MK_FLAG) {
            if (eq != NULL) {
                bad_value(err, key, "no value", eq + 1);
                at_line(err, w->line);
                return -1;
            }
            vals[id].set = true;
            continue;
        }
        if (eq != NULL) {
            val = eq + 1;
            if (w->why != TS_SHELL_KNOWN) {
                int u = unknown_value(im, (mega_id)id, w, w, vals, err);

                if (u < 0)
                    return -1;
                continue;
            }
        } else if (i + 1 < c->n && !is_flag(&c->w[i + 1])) {
            const ts_shell_word *v = &c->w[++i]; /* the value is the next word */

            if (v->ghost || v->why != TS_SHELL_KNOWN) {
                int u = unknown_value(im, (mega_id)id, w, v, vals, err);

                if (u < 0)
                    return -1;
                continue;
            }
            val = v->text;
        } else {
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                           "megatron_args line %u: --%s needs a value", w->line, key);
            return -1;
        }
        if (parse_value(&mega_flags[id], val, &vals[id], err) != 0) {
            at_line(err, w->line);
            return -1;
        }
        vals[id].line = w->line;
    }
    if (unknown[0] != '\0')
        ts_import_note(notes, "megatron_args: unknown flags ignored: %s", unknown);
    if (noeff[0] != '\0')
        ts_import_note(notes, "megatron_args: flags with no effect on the estimate: %s", noeff);
    return 0;
}

static int set_i(ts_import *im, ts_field_id fi, int64_t v, mega_id id, ts_api_err *err)
{
    char origin[TS_IMPORT_ORIGIN_LEN];

    snprintf(origin, sizeof origin, MEGA_PTR " (--%s)", mega_flags[id].name);
    return ts_import_set_int(im, fi, v, TS_SRC_MEGATRON, origin, err);
}

static int set_b(ts_import *im, ts_field_id fi, bool v, const char *why, ts_api_err *err)
{
    char origin[TS_IMPORT_ORIGIN_LEN];

    snprintf(origin, sizeof origin, MEGA_PTR " (%s)", why);
    return ts_import_set_bool(im, fi, v, TS_SRC_MEGATRON, origin, err);
}

static int set_s(ts_import *im, ts_field_id fi, const char *v, const char *why,
                 ts_api_err *err)
{
    char origin[TS_IMPORT_ORIGIN_LEN];

    snprintf(origin, sizeof origin, MEGA_PTR " (%s)", why);
    return ts_import_set_str(im, fi, v, TS_SRC_MEGATRON, origin, err);
}

/* Integer flags that map one to one. */
static int emit_direct(ts_import *im, const mega_val *v, ts_api_err *err)
{
    static const struct { mega_id id; ts_field_id fi; } direct[] = {
        { M_NUM_LAYERS, TS_FI_LAYERS }, { M_HIDDEN, TS_FI_HIDDEN },
        { M_HEADS, TS_FI_HEADS }, { M_SEQ, TS_FI_SEQ }, { M_MICRO, TS_FI_MICRO_BATCH },
        { M_GLOBAL, TS_FI_GLOBAL_BATCH }, { M_TP, TS_FI_TP }, { M_PP, TS_FI_PP },
        { M_CP, TS_FI_CP }, { M_EP, TS_FI_EP }, { M_EXPERTS, TS_FI_EXPERTS },
        { M_TOPK, TS_FI_TOP_K }, { M_MOE_FFN, TS_FI_MOE_FFN },
        { M_FIRST, TS_FI_FIRST_STAGE_LAYERS }, { M_LAST, TS_FI_LAST_STAGE_LAYERS },
    };
    size_t k;

    for (k = 0; k < sizeof direct / sizeof direct[0]; k++)
        if (v[direct[k].id].set &&
            set_i(im, direct[k].fi, v[direct[k].id].i, direct[k].id, err) != 0)
            return -1;
    return 0;
}

/* The catalogue model a --tokenizer-model names: a Hub id, or a local
 * path ending in one (".../meta-llama/Meta-Llama-3-8B", with or without
 * a tokenizer file at the end). */
static const ts_catalogue_entry *tokenizer_entry(const char *model)
{
    char buf[256];
    const ts_catalogue_entry *e;
    char *slash;
    size_t n;

    if ((e = ts_catalogue_find(model)) != NULL)
        return e;
    n = ts_utf8_copy(buf, sizeof buf, model);
    while (n > 0 && buf[n - 1] == '/')
        buf[--n] = '\0';
    slash = strrchr(buf, '/');
    if (slash != NULL && strchr(slash + 1, '.') != NULL &&
        (strstr(slash + 1, "tokenizer") != NULL || strstr(slash + 1, ".model") != NULL)) {
        *slash = '\0';   /* .../tokenizer.model: the directory names the model */
        if ((e = ts_catalogue_find(buf)) != NULL)
            return e;
        slash = strrchr(buf, '/');
    }
    if (slash != NULL) {
        char *prev;

        *slash = '\0';
        prev = strrchr(buf, '/');
        *slash = '/';
        if (prev != NULL && (e = ts_catalogue_find(prev + 1)) != NULL)
            return e;   /* org/name at the end */
        if ((e = ts_catalogue_find(slash + 1)) != NULL)
            return e;
    }
    return NULL;
}

/* A 400 asking for the vocabulary, saying what is known of it. */
static int vocab_needed(const mega_val *v, const char *what, ts_api_err *err)
{
    char why[TS_API_DETAIL_LEN / 2] = "";
    char lead[48] = "megatron_args";

    if (v[M_TOK_MODEL].unknown != NULL)
        ts_shell_why_text(v[M_TOK_MODEL].unknown, why, sizeof why);
    if (v[M_TOK_TYPE].line > 0)
        snprintf(lead, sizeof lead, "megatron_args line %u", v[M_TOK_TYPE].line);
    ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                   "%s: %s%s%s; give --vocab-size (the tokenizer's size: Megatron pads it), "
                   "--padded-vocab-size, or the request's vocab", lead, what,
                   why[0] ? ", and --tokenizer-model is " : "", why);
    return -1;
}

/* The vocabulary before padding: --vocab-size, else the tokenizer's.
 * 1 found (*base, *from), 0 none, -1 error (only when need: the text
 * defines the model and nothing else gives the vocabulary). */
static int vocab_base(const mega_val *v, bool need, int64_t *base, char *from, size_t fsz,
                      ts_api_notes *notes, ts_api_err *err)
{
    const char *type = v[M_TOK_TYPE].set ? v[M_TOK_TYPE].s : NULL;
    const char *model = v[M_TOK_MODEL].set ? v[M_TOK_MODEL].s : NULL;
    char what[200];

    if (v[M_VOCAB].set) {
        *base = v[M_VOCAB].i;
        snprintf(from, fsz, "--vocab-size");
        return 1;
    }
    if (v[M_TOK_TYPE].unknown != NULL) {
        char why[TS_API_DETAIL_LEN / 2];

        if (!need)
            return 0;
        ts_shell_why_text(v[M_TOK_TYPE].unknown, why, sizeof why);
        ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                       "megatron_args line %u: the vocabulary comes from --tokenizer-type, "
                       "which is %s; give --vocab-size or the request's vocab",
                       v[M_TOK_TYPE].line, why);
        return -1;
    }
    if (type == NULL) {
        /* No --tokenizer-type: only GPT-2 BPE reads a merges file, and the
         * GPT-2 vocab.json by its usual name says which. */
        const char *vf = v[M_VOCAB_FILE].set ? v[M_VOCAB_FILE].s : NULL;
        const char *slash = vf != NULL ? strrchr(vf, '/') : NULL;

        if (vf != NULL && v[M_MERGE_FILE].set &&
            strcmp(slash != NULL ? slash + 1 : vf, "gpt2-vocab.json") == 0) {
            *base = 50257;
            snprintf(from, fsz, "--vocab-file gpt2-vocab.json");
            ts_import_note(notes, "megatron_args: no --tokenizer-type; --vocab-file "
                           "gpt2-vocab.json with --merge-file is the GPT-2 BPE vocabulary, "
                           "50257 tokens");
            return 1;
        }
        if (!need)
            return 0;
        {
            char why[TS_API_DETAIL_LEN / 2] = "";

            if (v[M_VOCAB_FILE].unknown != NULL) {
                strcpy(why, ", and --vocab-file is ");
                ts_shell_why_text(v[M_VOCAB_FILE].unknown, why + strlen(why),
                                  sizeof why - strlen(why));
            } else if (vf != NULL) {
                snprintf(why, sizeof why, ", and --vocab-file %.*s%s", ts_utf8_prec(vf, 60), vf,
                         v[M_MERGE_FILE].set ? " is not gpt2-vocab.json" : " comes without --merge-file");
            }
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                           "megatron_args: --num-layers defines a model but nothing gives its "
                           "vocabulary (no --vocab-size, --padded-vocab-size or --tokenizer-type%s); "
                           "give one of them, or the request's vocab", why);
        }
        return -1;
    }
    if (strcmp(type, "GPT2BPETokenizer") == 0) {
        /* gpt2-vocab.json has 50257 entries (GPT-2's vocab_size). */
        *base = 50257;
        snprintf(from, fsz, "--tokenizer-type GPT2BPETokenizer");
        return 1;
    }
    if (strcmp(type, "NullTokenizer") == 0) {
        if (!need)
            return 0;
        return vocab_needed(v, "NullTokenizer takes its size from --vocab-size, "
                            "which is not given", err);
    }
    if (model != NULL) {
        const ts_catalogue_entry *e = tokenizer_entry(model);
        int64_t n = e != NULL ? ts_catalogue_vocab(e) : 0;

        if (n > 0) {
            *base = n;
            snprintf(from, fsz, "--tokenizer-model %.*s", ts_utf8_prec(e->id, 100), e->id);
            ts_import_note(notes, "megatron_args: --tokenizer-type %.*s --tokenizer-model "
                           "%.*s: vocab_size %lld of the catalogue's %s (Megatron counts the "
                           "tokenizer's entries, added tokens included; give --vocab-size "
                           "when they differ)", ts_utf8_prec(type, 32), type,
                           ts_utf8_prec(model, 60), model, (long long)n, e->id);
            return 1;
        }
    }
    if (!need)
        return 0;
    snprintf(what, sizeof what, "the vocabulary of --tokenizer-type %.*s%s%.*s is not known "
             "here", ts_utf8_prec(type, 40), type,
             model != NULL ? " --tokenizer-model " : "",
             model != NULL ? ts_utf8_prec(model, 60) : 0, model != NULL ? model : "");
    ts_utf8_trim(what, strlen(what));
    return vocab_needed(v, what, err);
}

/* The vocabulary padded as Megatron pads it: to a multiple of
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
static int pad_vocab(ts_import *im, const mega_val *v, int64_t vocab, const char *from,
                     int64_t tp, ts_api_notes *notes, ts_api_err *err)
{
    int64_t div = v[M_VOCAB_DIV].set ? v[M_VOCAB_DIV].i : 128;
    int64_t hi = (int64_t)ts_fields[TS_FI_VOCAB].maximum;
    int64_t mult = 0, padded = 0;
    char origin[TS_IMPORT_ORIGIN_LEN];

    if (strlen(from) > 100)
        from = "the tokenizer";
    if (ts_ckd_mul(&mult, div, tp) || ts_ckd_round_up(&padded, vocab, mult) || padded > hi) {
        ts_api_err_set(err, TS_PROB_OUT_OF_RANGE, MEGA_PTR,
                       "megatron_args: vocabulary %lld (%s) padded to a multiple of "
                       "--make-vocab-size-divisible-by %lld x --tensor-model-parallel-size "
                       "%lld is more than the vocab maximum %lld", (long long)vocab, from,
                       (long long)div, (long long)tp, (long long)hi);
        return -1;
    }
    if (padded != vocab && strcmp(from, "--vocab-size") == 0)
        ts_import_note(notes, "megatron_args: --vocab-size %lld padded to %lld "
                       "(multiple of %lld x tp %lld, as Megatron does)",
                       (long long)vocab, (long long)padded, (long long)div, (long long)tp);
    else if (padded != vocab)
        ts_import_note(notes, "megatron_args: vocabulary %lld (%s) padded to %lld "
                       "(multiple of %lld x tp %lld, as Megatron does)",
                       (long long)vocab, from, (long long)padded, (long long)div, (long long)tp);
    snprintf(origin, sizeof origin, MEGA_PTR " (%s)", from);
    return ts_import_set_int(im, TS_FI_VOCAB, padded, TS_SRC_MEGATRON, origin, err);
}

/* --moe-layer-freq: an integer N (one MoE layer in N) or Megatron's
 * Python list expression ("[0]*3+[1]*58", "([1]*3+[0])*2").  The model
 * here has its dense layers first: *dense is their count; 0 when every
 * layer is MoE; -1 with a 400 for any other pattern. */
static int moe_pattern(const char *p, int64_t layers, int64_t *dense, ts_api_err *err);

/* hf: an hf_config gave the shape.  Then it is the checkpoint's, and
 * Megatron's defaults for flags the string leaves out would contradict it. */
static int emit_shape(ts_import *im, const mega_val *v, bool hf,
                      ts_api_notes *notes, ts_api_err *err)
{
    bool model = v[M_NUM_LAYERS].set && !hf;
    int64_t tp = v[M_TP].set ? v[M_TP].i : 1;

    if (v[M_KV_CHANNELS].set && !v[M_MLA].set &&
        set_i(im, TS_FI_HEAD_DIM, v[M_KV_CHANNELS].i, M_KV_CHANNELS, err) != 0)
        return -1;

    if (v[M_GQA].set) {
        if (!v[M_QUERY_GROUPS].set) {
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
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
    } else if (!im->req_has[TS_FI_VOCAB]) {
        /* Needed: the text defines the model and no import gave a vocabulary. */
        bool need = model && im->vals[TS_FI_VOCAB] == NULL;
        int64_t base = 0;
        char from[112];
        int got = vocab_base(v, need, &base, from, sizeof from, notes, err);

        if (got < 0 || (got > 0 && pad_vocab(im, v, base, from, tp, notes, err) != 0))
            return -1;
    }
    if (v[M_MLA].set) {
        /* Megatron's MLA defaults (arguments.py _add_mla_args @d98e8a6). */
        if (set_i(im, TS_FI_KV_LORA_RANK, v[M_KV_LORA].set ? v[M_KV_LORA].i : 32, M_KV_LORA, err) != 0 ||
            set_i(im, TS_FI_Q_LORA_RANK, v[M_Q_LORA].set ? v[M_Q_LORA].i : 0, M_Q_LORA, err) != 0 ||
            set_i(im, TS_FI_QK_NOPE_DIM, v[M_QK_HEAD].set ? v[M_QK_HEAD].i : 128, M_QK_HEAD, err) != 0 ||
            set_i(im, TS_FI_QK_ROPE_DIM, v[M_QK_POS].set ? v[M_QK_POS].i : 64, M_QK_POS, err) != 0 ||
            set_i(im, TS_FI_V_HEAD_DIM, v[M_V_HEAD].set ? v[M_V_HEAD].i : 128, M_V_HEAD, err) != 0 ||
            set_i(im, TS_FI_HEAD_DIM, 0, M_MLA, err) != 0)
            return -1;
        if (v[M_KV_CHANNELS].set || v[M_QK_LN].set)
            ts_import_note(notes, "megatron_args: with --multi-latent-attention the head "
                           "widths are --qk-head-dim + --qk-pos-emb-head-dim%s%s",
                           v[M_KV_CHANNELS].set ? "; --kv-channels is not used" : "",
                           v[M_QK_LN].set ? "; --qk-layernorm is the latent norms, counted" : "");
    } else if (v[M_Q_LORA].set || v[M_KV_LORA].set || v[M_QK_HEAD].set || v[M_QK_POS].set ||
               v[M_V_HEAD].set) {
        ts_import_note(notes, "megatron_args: the MLA sizes (--kv-lora-rank ...) are ignored "
                       "without --multi-latent-attention, as Megatron ignores them");
    }
    if (v[M_EXPERTS].set && v[M_EXPERTS].i > 1) {
        if (v[M_MOE_FREQ].set) {
            int64_t dense = 0, L = v[M_NUM_LAYERS].set ? v[M_NUM_LAYERS].i : 0;

            if (moe_pattern(v[M_MOE_FREQ].s, L, &dense, err) != 0)
                return -1;
            if (set_i(im, TS_FI_DENSE_LAYERS, dense, M_MOE_FREQ, err) != 0)
                return -1;
        }
        if (v[M_EXPERT_BIAS].set &&
            set_b(im, TS_FI_ROUTER_BIAS, true, "--moe-router-enable-expert-bias", err) != 0)
            return -1;
    }
    if (v[M_MTP].set && v[M_MTP].i > 0)
        ts_import_note(notes, "megatron_args: --mtp-num-layers %lld: the multi-token-prediction "
                       "layers are not in the count (each is about one transformer layer "
                       "more)", (long long)v[M_MTP].i);
    if (v[M_SHARED_FFN].set) {
        int64_t fe = v[M_MOE_FFN].set ? v[M_MOE_FFN].i : v[M_FFN].i;

        if (fe <= 0 || v[M_SHARED_FFN].i % fe != 0) {
            ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, MEGA_PTR,
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
    if (v[M_QK_LN].set && !v[M_MLA].set &&
        set_b(im, TS_FI_QK_NORM, true, "--qk-layernorm", err) != 0)
        return -1;
    if (v[M_SWIGLU].set && set_b(im, TS_FI_GATED, true, "--swiglu", err) != 0)
        return -1;
    /* --quick-geglu (gpt-oss): a gated unit too, three matrices. */
    if (v[M_QUICK_GEGLU].set && set_b(im, TS_FI_GATED, true, "--quick-geglu", err) != 0)
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
        if (set_b(im, TS_FI_GATED, v[M_SWIGLU].set || v[M_QUICK_GEGLU].set,
                  v[M_QUICK_GEGLU].set ? "--quick-geglu" : "--swiglu", err) != 0 ||
            set_b(im, TS_FI_TIED_EMBEDDINGS, !v[M_UNTIE].set,
                  "--untie-embeddings-and-output-weights", err) != 0 ||
            set_b(im, TS_FI_QKV_BIAS, bias || v[M_QKV_BIAS].set, "--disable-bias-linear", err) != 0 ||
            set_b(im, TS_FI_OUT_BIAS, bias, "--disable-bias-linear", err) != 0 ||
            set_b(im, TS_FI_MLP_BIAS, bias, "--disable-bias-linear", err) != 0 ||
            set_b(im, TS_FI_NORM_BIAS, layernorm, "--normalization", err) != 0 ||
            set_s(im, TS_FI_NORM, layernorm ? "layernorm" : "rmsnorm", "--normalization", err) != 0)
            return -1;
        if (!v[M_KV_CHANNELS].set && !v[M_MLA].set &&
            set_i(im, TS_FI_HEAD_DIM, 0, M_KV_CHANNELS, err) != 0)
            return -1;
        if (!v[M_GQA].set && v[M_HEADS].set &&
            set_i(im, TS_FI_KV_HEADS, v[M_HEADS].i, M_HEADS, err) != 0)
            return -1;
        if (strcmp(pos, "learned_absolute") == 0) {
            int64_t rows = v[M_MAX_POS].set ? v[M_MAX_POS].i : v[M_SEQ].set ? v[M_SEQ].i : 0;

            if (rows == 0) {
                ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
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
    if (v[M_MFSDP].set || v[M_TFSDP].set) {
        /* Megatron-FSDP shards by --data-parallel-sharding-strategy,
         * default optim_grads_params (arguments.py @d98e8a6); torch FSDP2
         * shards everything.  As ZeRO stages: optimizer state 1, + grads
         * 2, + parameters 3. */
        static const char *const strat[] = { "no_shard", "optim", "optim_grads",
                                             "optim_grads_params" };
        const char *st = v[M_MFSDP].set && v[M_SHARDING].set ? v[M_SHARDING].s
                                                               : "optim_grads_params";
        int64_t stage;

        for (stage = 0; stage < 4 && strcmp(strat[stage], st) != 0; stage++)
            ;
        if (stage == 4)
            return bad_value(err, "data-parallel-sharding-strategy",
                             "no_shard, optim, optim_grads or optim_grads_params", st);
        if (set_i(im, TS_FI_ZERO, stage, v[M_SHARDING].set ? M_SHARDING : M_MFSDP, err) != 0)
            return -1;
        ts_import_note_about(notes, TS_FI_ZERO, TS_SRC_MEGATRON,
                             "megatron_args: %s with %s shards over data-parallel ranks as "
                             "ZeRO stage %lld does (zero %lld)",
                             v[M_MFSDP].set ? "--use-megatron-fsdp" : "--use-torch-fsdp2", st,
                             (long long)stage, (long long)stage);
    } else {
        if (set_i(im, TS_FI_ZERO, v[M_DIST_OPT].set ? 1 : 0, M_DIST_OPT, err) != 0)
            return -1;
        if (v[M_SHARDING].set)
            ts_import_note(notes, "megatron_args: --data-parallel-sharding-strategy is read "
                           "only with --use-megatron-fsdp; ignored");
    }
    if ((v[M_CKPT_ACT].set || v[M_CKPT_METHOD].set) && !v[M_RC_GRAN].set && !v[M_RC_ACT].set) {
        /* The flags before recompute-granularity: full recompute. */
        if (v[M_CKPT_METHOD].set && strcmp(v[M_CKPT_METHOD].s, "uniform") != 0 &&
            strcmp(v[M_CKPT_METHOD].s, "block") != 0)
            return bad_value(err, "activations-checkpoint-method", "uniform or block",
                             v[M_CKPT_METHOD].s);
        if (set_s(im, TS_FI_RECOMPUTE, "full",
                  v[M_CKPT_ACT].set ? "--checkpoint-activations" : "--activations-checkpoint-method",
                  err) != 0)
            return -1;
        ts_import_note(notes, "megatron_args: %s is the older Megatron's full recompute "
                       "(today --recompute-granularity full)",
                       v[M_CKPT_ACT].set ? "--checkpoint-activations"
                                         : "--activations-checkpoint-method");
    }
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
                ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
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
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, MEGA_PTR,
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

/* ---- --moe-layer-freq ---- */

#define PATTERN_MAX 65536

typedef struct pat {
    const char *p;
    unsigned char *out;    /* the layer kinds, 0 dense 1 MoE */
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

static int moe_pattern(const char *p, int64_t layers, int64_t *dense, ts_api_err *err)
{
    const char *t = p;
    pat q;
    size_t k;
    int rc = 0;

    while (*t == ' ')
        t++;
    if (*t >= '0' && *t <= '9') {
        char *end;
        long long n = strtoll(t, &end, 10);

        if (*end == '\0' && n == 1) {
            *dense = 0;   /* every layer MoE */
            return 0;
        }
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, MEGA_PTR,
                       "megatron_args --moe-layer-freq %.*s: MoE layers interleaved with dense "
                       "ones are not modelled (only dense layers first, then MoE)",
                       ts_utf8_prec(p, 24), p);
        return -1;
    }
    memset(&q, 0, sizeof q);
    q.p = t;
    q.out = malloc(PATTERN_MAX);
    if (q.out == NULL) {
        oom(err);
        return -1;
    }
    pat_sum(&q);
    pat_ws(&q);
    if (q.bad || *q.p != '\0') {
        ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                       "megatron_args --moe-layer-freq takes an integer or a list expression "
                       "like [0]*3+[1]*58, got '%.*s'", ts_utf8_prec(p, 48), p);
        rc = -1;
    } else if (layers > 0 && (int64_t)q.n != layers) {
        ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                       "megatron_args --moe-layer-freq lists %zu layers, --num-layers is %lld",
                       q.n, (long long)layers);
        rc = -1;
    } else {
        for (k = 0; k < q.n && q.out[k] == 0; k++)
            ;
        *dense = (int64_t)k;
        for (; k < q.n; k++)
            if (q.out[k] == 0) {
                ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, MEGA_PTR,
                               "megatron_args --moe-layer-freq '%.*s': a dense layer after a "
                               "MoE layer is not modelled (only dense layers first)",
                               ts_utf8_prec(p, 48), p);
                rc = -1;
                break;
            }
    }
    free(q.out);
    return rc;
}

/* ---- the launcher: how many GPUs ---- */

typedef struct launch {
    const char *kind;          /* "torchrun", "deepspeed", "srun"; NULL none */
    int64_t nproc, nnodes;     /* torchrun (default 1 x 1) */
    int64_t ds_gpus, ds_nodes; /* deepspeed (0 unset) */
    bool ds_hostfile;
    int64_t nodes, tpn, ntasks, gpn;   /* srun / #SBATCH (0 unset) */
    const ts_shell_word *bad;  /* a value not read, and its option */
    char bad_opt[32];
    char bad_val[40];
    unsigned line;
} launch;

static bool opt_is(const char *w, const char *const *names, const char **val)
{
    size_t k;

    for (k = 0; names[k] != NULL; k++) {
        size_t n = strlen(names[k]);

        if (strncmp(w, names[k], n) == 0 && (w[n] == '\0' || w[n] == '=')) {
            *val = w[n] == '=' ? w + n + 1 : NULL;
            return true;
        }
        /* -N4: a short option with its value attached */
        if (n == 2 && names[k][0] == '-' && names[k][1] != '-' && strncmp(w, names[k], 2) == 0 &&
            w[2] >= '0' && w[2] <= '9') {
            *val = w + 2;
            return true;
        }
    }
    return false;
}

/* An option's value as a count in [1, 2^20]; 0 when it is not one. */
static int64_t count_of(launch *l, const char *opt, const ts_shell_word *w, const char *text)
{
    char *end;
    long long v;

    if (w != NULL && (w->ghost || w->why != TS_SHELL_KNOWN)) {
        if (l->bad == NULL) {
            l->bad = w;
            ts_utf8_copy(l->bad_opt, sizeof l->bad_opt, opt);
        }
        return 0;
    }
    errno = 0;
    v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < 1 || v > 1048576) {
        if (l->bad == NULL) {
            l->bad = w;
            ts_utf8_copy(l->bad_opt, sizeof l->bad_opt, opt);
            ts_utf8_copy(l->bad_val, sizeof l->bad_val, text);
        }
        return -1;
    }
    return (int64_t)v;
}

/* Read the launcher options among words[0..n). */
static void launcher_words(launch *l, const ts_shell_word *w, size_t n, bool directives)
{
    static const char *const tr_nproc[] = { "--nproc_per_node", "--nproc-per-node", NULL };
    static const char *const tr_nnodes[] = { "--nnodes", NULL };
    static const char *const ds_gpus[] = { "--num_gpus", "--num-gpus", NULL };
    static const char *const ds_nodes[] = { "--num_nodes", "--num-nodes", NULL };
    static const char *const ds_host[] = { "--hostfile", "-H", NULL };
    static const char *const s_nodes[] = { "--nodes", "-N", NULL };
    static const char *const s_tpn[] = { "--ntasks-per-node", NULL };
    static const char *const s_ntasks[] = { "--ntasks", "-n", NULL };
    static const char *const s_gpn[] = { "--gpus-per-node", NULL };
    static const char *const s_gres[] = { "--gres", NULL };
    const char *mode = directives ? "srun" : NULL;
    size_t i;

    for (i = 0; i < n; i++) {
        const char *t = w[i].text, *val = NULL;
        const char *b = strrchr(t, '/');
        const ts_shell_word *vw = &w[i];
        int64_t *dst = NULL;

        b = b != NULL ? b + 1 : t;
        if (strcmp(b, "torchrun") == 0 ||
            ((strcmp(t, "torch.distributed.run") == 0 || strcmp(t, "torch.distributed.launch") == 0) &&
             i > 0 && strcmp(w[i - 1].text, "-m") == 0)) {
            mode = "torchrun";
            if (l->kind == NULL || strcmp(l->kind, "torchrun") != 0) {
                l->kind = "torchrun";
                l->line = w[i].line;
            }
            continue;
        }
        if (strcmp(b, "deepspeed") == 0) {
            mode = "deepspeed";
            if (l->kind == NULL || strcmp(l->kind, "srun") == 0) {
                l->kind = "deepspeed";
                l->line = w[i].line;
            }
            continue;
        }
        if (strcmp(b, "srun") == 0) {
            mode = "srun";
            if (l->kind == NULL) {
                l->kind = "srun";
                l->line = w[i].line;
            }
            continue;
        }
        if (mode == NULL || t[0] != '-')
            continue;
        if (strcmp(mode, "torchrun") == 0) {
            if (strcmp(t, "--standalone") == 0) {
                l->nnodes = 1;
                continue;
            }
            if (opt_is(t, tr_nproc, &val))
                dst = &l->nproc;
            else if (opt_is(t, tr_nnodes, &val))
                dst = &l->nnodes;
        } else if (strcmp(mode, "deepspeed") == 0) {
            if (opt_is(t, ds_host, &val)) {
                l->ds_hostfile = true;
                if (val == NULL)
                    i++;
                continue;
            }
            if (opt_is(t, ds_gpus, &val))
                dst = &l->ds_gpus;
            else if (opt_is(t, ds_nodes, &val))
                dst = &l->ds_nodes;
        } else {
            if (opt_is(t, s_nodes, &val))
                dst = &l->nodes;
            else if (opt_is(t, s_tpn, &val))
                dst = &l->tpn;
            else if (opt_is(t, s_ntasks, &val))
                dst = &l->ntasks;
            else if (opt_is(t, s_gpn, &val))
                dst = &l->gpn;
            else if (opt_is(t, s_gres, &val)) {
                /* --gres=gpu:8 or gpu:h100:8: GPUs per node */
                const char *g = val;
                const char *last;

                if (g == NULL) {
                    if (i + 1 >= n)
                        continue;
                    vw = &w[++i];
                    g = vw->text;
                }
                last = strrchr(g, ':');
                if (strncmp(g, "gpu:", 4) == 0 && last != NULL) {
                    int64_t c = count_of(l, "--gres", vw, last + 1);

                    if (c > 0)
                        l->gpn = c;
                }
                continue;
            }
        }
        if (dst == NULL)
            continue;
        if (val == NULL) {
            if (i + 1 >= n)
                continue;
            vw = &w[++i];
            val = vw->text;
        }
        {
            char opt[32];
            int64_t c;
            const char *eq = strchr(t, '=');

            snprintf(opt, sizeof opt, "%.*s", (int)(eq != NULL ? (size_t)(eq - t) < 31 ? eq - t : 31
                                                                : (long)ts_utf8_prec(t, 31)), t);
            c = count_of(l, opt, vw, val);
            if (c > 0)
                *dst = c;
            else if (dst == &l->nproc || dst == &l->nnodes || dst == &l->ds_gpus ||
                     dst == &l->ds_nodes || dst == &l->nodes || dst == &l->tpn ||
                     dst == &l->ntasks || dst == &l->gpn)
                *dst = -1;   /* given, not known */
        }
    }
}

/* The GPU count the launcher starts; a note either way. */
static int emit_gpus(ts_import *im, const ts_shell_cmd *c, ts_api_notes *notes, ts_api_err *err)
{
    launch l;
    int64_t gpus = 0, a = 0, b = 0;
    char how[120] = "";
    char origin[TS_IMPORT_ORIGIN_LEN];

    memset(&l, 0, sizeof l);
    if (c->entry >= c->n)
        return 0;   /* an argument list: no launcher */
    launcher_words(&l, c->dir, c->ndir, true);
    if (c->ndir > 0 && l.kind == NULL) {
        l.kind = "srun";
        l.line = c->dir[0].line;
    }
    launcher_words(&l, c->w, c->entry, false);
    if (l.kind == NULL)
        return 0;
    if (strcmp(l.kind, "torchrun") == 0) {
        a = l.nproc != 0 ? l.nproc : 1;
        b = l.nnodes != 0 ? l.nnodes : 1;
        snprintf(how, sizeof how, "torchrun --nproc_per_node %lld x --nnodes %lld",
                 (long long)a, (long long)b);
    } else if (strcmp(l.kind, "deepspeed") == 0) {
        a = l.ds_gpus != 0 ? l.ds_gpus : -1;
        b = l.ds_nodes != 0 ? l.ds_nodes : l.ds_hostfile ? -1 : 1;
        snprintf(how, sizeof how, "deepspeed --num_gpus %lld x --num_nodes %lld",
                 (long long)a, (long long)b);
        if (l.ds_gpus == 0 && l.bad == NULL) {
            ts_import_note_about(notes, TS_FI_GPUS, TS_SRC_MEGATRON,
                                 "megatron_args line %u: deepspeed without --num_gpus uses "
                                 "every GPU of the machine: the GPU count is not read", l.line);
            return 0;
        }
    } else {
        /* srun: one task per GPU, as Megatron runs under it. */
        if (l.ntasks != 0) {
            a = l.ntasks;
            b = 1;
            snprintf(how, sizeof how, "srun --ntasks %lld", (long long)a);
        } else if (l.tpn != 0 || l.gpn != 0) {
            a = l.tpn != 0 ? l.tpn : l.gpn;
            b = l.nodes != 0 ? l.nodes : 1;
            snprintf(how, sizeof how, "srun --ntasks-per-node %lld x --nodes %lld",
                     (long long)a, (long long)b);
        } else {
            return 0;
        }
    }
    if (a < 0 || b < 0 || l.bad != NULL) {
        char why[TS_API_NOTE_LEN] = "not an integer";

        if (l.bad != NULL && (l.bad->ghost || l.bad->why != TS_SHELL_KNOWN))
            ts_shell_why_text(l.bad, why, sizeof why);
        else if (l.bad != NULL)
            snprintf(why, sizeof why, "'%s', not a count", l.bad_val);
        ts_import_note_about(notes, TS_FI_GPUS, TS_SRC_MEGATRON,
                             "megatron_args line %u: the GPU count is not read from %s: %s is %s",
                             l.line, l.kind, l.bad_opt[0] ? l.bad_opt : "a count", why);
        return 0;
    }
    gpus = ts_ckd_mul_sat(a, b);
    ts_import_note_about(notes, TS_FI_GPUS, TS_SRC_MEGATRON,
                         "megatron_args line %u: gpus %lld from %s", l.line, (long long)gpus, how);
    snprintf(origin, sizeof origin, MEGA_PTR " (%s)", how);
    return ts_import_set_int(im, TS_FI_GPUS, gpus, TS_SRC_MEGATRON, origin, err);
}

int ts_import_mega(ts_import *im, const char *args, size_t len, ts_api_err *err)
{
    mega_val vals[M_COUNT];
    ts_shell_cmd cmd;
    bool hf = im->vals[TS_FI_LAYERS] != NULL && im->src[TS_FI_LAYERS] == TS_SRC_HF;
    int rc = -1, got;
    size_t k;

    if (len > TS_IMPORT_ARGS_MAX) {
        ts_api_err_set(err, TS_PROB_IMPORT_TOO_LARGE, MEGA_PTR,
                       "megatron_args is %zu bytes, more than %d", len, TS_IMPORT_ARGS_MAX);
        return -1;
    }
    memset(vals, 0, sizeof vals);
    got = ts_shell_read(args, len, MEGA_PTR, &cmd, im->notes, err);
    if (got < 0)
        return -1;
    if (got == 0) {
        for (k = 0; k < len && (args[k] == ' ' || args[k] == '\t' || args[k] == '\n' ||
                                args[k] == '\r'); k++)
            ;
        if (k < len) {
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                           "megatron_args has no training command: no command runs a *.py "
                           "entry point (torchrun ... pretrain_gpt.py ...), and no line starts "
                           "with a --flag");
            goto out;
        }
    }
    if (cmd.n > TS_IMPORT_TOKENS_MAX) {
        ts_api_err_set(err, TS_PROB_IMPORT_TOO_LARGE, MEGA_PTR,
                       "megatron_args: the training command has more than %d words",
                       TS_IMPORT_TOKENS_MAX);
        goto out;
    }
    if (scan(im, &cmd, vals, im->notes, err) != 0)
        goto out;
    if (set_s(im, TS_FI_FRAMEWORK, "megatron", "Megatron-LM", err) != 0 ||
        emit_direct(im, vals, err) != 0 ||
        emit_shape(im, vals, hf, im->notes, err) != 0 ||
        emit_layout(im, vals, im->notes, err) != 0 ||
        emit_precision(im, vals, im->notes, err) != 0 ||
        emit_gpus(im, &cmd, im->notes, err) != 0)
        goto out;
    rc = 0;
out:
    ts_shell_free(&cmd);
    return rc;
}
