/*
 * ts_megatron_flags.c - Megatron-LM's flags: the table of those read
 * (megatron/training/arguments.py's names), the request member each one
 * feeds, and the scan of a training command's flags into values.
 * Part of the Megatron-LM importer (ts_megatron.c); shared types in
 * ts_megatron_int.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_import.h"
#include "ts_megatron_int.h"

const mega_flag mega_flags[M_COUNT] = {
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
    [M_OVERLAP_P2P] = { "overlap-p2p-communication", MK_FLAG, TS_FI_COUNT, 0 },
    [M_NO_OVERLAP_P2P] = { "no-overlap-p2p-communication", MK_FLAG, TS_FI_COUNT, 0 },
    [M_TP_OVERLAP] = { "tp-comm-overlap", MK_FLAG, TS_FI_COUNT, 0 },
    [M_OVERLAP_GRAD] = { "overlap-grad-reduce", MK_FLAG, TS_FI_COUNT, 0 },
    [M_OVERLAP_PARAM] = { "overlap-param-gather", MK_FLAG, TS_FI_COUNT, 0 },
    [M_DDP_IMPL] = { "DDP-impl", MK_STR, TS_FI_COUNT, 0 },
    [M_WINDOW] = { "window-size", MK_STR, TS_FI_COUNT, 0 },
    [M_WINDOW_SKIP] = { "window-attn-skip-freq", MK_STR, TS_FI_COUNT, 0 },
    [M_DEEPSPEED] = { "deepspeed", MK_FLAG, TS_FI_COUNT, 0 },
    [M_DS_CONFIG] = { "deepspeed_config", MK_STR, TS_FI_COUNT, 0 },
    [M_ZERO_STAGE] = { "zero-stage", MK_INT, TS_FI_ZERO, 0 },
    [M_DS_ACT_CKPT] = { "deepspeed-activation-checkpointing", MK_FLAG, TS_FI_COUNT, 0 },
    [M_NO_PP] = { "no-pipeline-parallel", MK_FLAG, TS_FI_COUNT, 0 },
    [M_FLASH_V1] = { "use-flash-attn-v1", MK_FLAG, TS_FI_COUNT, 0 },
    [M_FLASH_V2] = { "use-flash-attn-v2", MK_FLAG, TS_FI_COUNT, 0 },
    [M_FLASH_TRITON] = { "use-flash-attn-triton", MK_FLAG, TS_FI_COUNT, 0 },
    [M_FLASH_BUILDER] = { "use-flash-attn-builder", MK_FLAG, TS_FI_COUNT, 0 },
    /* Megatron-Core's CPU activation offload: the one CLI flag of it
     * (arguments.py@d98e8a64 excludes cpu_offloading and its
     * activations / weights switches from the CLI and turns
     * cpu_offloading on when this is > 0, 1950-1951). */
    [M_CPU_OFFLOAD] = { "cpu-offloading-num-layers", MK_INT, TS_FI_OFFLOAD_ACTIVATION_LAYERS, 0 },
    [M_FP8_PARAM] = { "fp8-param-gather", MK_FLAG, TS_FI_COUNT, 0 },
    /* Read only to refuse: Mamba hybrid models (ts_megatron_shape.c). */
    [M_HYBRID] = { "hybrid-layer-pattern", MK_STR, TS_FI_COUNT, 0 },
    [M_HYBRID_OLD] = { "hybrid-override-pattern", MK_STR, TS_FI_COUNT, 0 },
    [M_HYBRID_ATTN] = { "hybrid-attention-ratio", MK_STR, TS_FI_COUNT, 0 },
    [M_HYBRID_MLP] = { "hybrid-mlp-ratio", MK_STR, TS_FI_COUNT, 0 },
    [M_MAMBA_STATE] = { "mamba-state-dim", MK_STR, TS_FI_COUNT, 0 },
};

/* The request member a flag's value feeds (for "the request gives it"):
 * the range member, else these. */
static ts_field_id mega_target(mega_id id)
{
    if (mega_mamba(id))
        return TS_FI_LAYERS;
    switch (id) {
    case M_TRAIN_ITERS:
    case M_TRAIN_SAMPLES:
        return TS_FI_TOKENS;
    case M_TOK_TYPE:
    case M_TOK_MODEL:
    case M_VOCAB_FILE:
    case M_MERGE_FILE:
    case M_VOCAB_DIV:
        return TS_FI_VOCAB;
    case M_POS_TYPE:
        return TS_FI_POS_EMBEDDINGS;
    case M_NORMALIZATION:
        return TS_FI_NORM;
    case M_SHARDING:
        return TS_FI_ZERO;
    case M_RC_GRAN:
    case M_RC_METHOD:
    case M_CKPT_METHOD:
        return TS_FI_RECOMPUTE;
    case M_FP8:
        return TS_FI_COMPUTE_PRECISION;
    case M_OPTIMIZER:
        return TS_FI_OPTIMIZER;
    case M_MOE_FREQ:
        return TS_FI_DENSE_LAYERS;
    case M_WINDOW:
        return TS_FI_SLIDING_WINDOW;
    case M_WINDOW_SKIP:
        return TS_FI_SLIDING_LAYERS;
    case M_HDROP:
    case M_ADROP:
        return TS_FI_DROPOUT;
    case M_VPP_LAYERS:
        return TS_FI_VPP;
    case M_RC_LAYERS:
    case M_DS_ACT_CKPT:
        return TS_FI_RECOMPUTE;
    case M_DEEPSPEED:
        return TS_FI_FRAMEWORK;
    case M_NO_PP:
        return TS_FI_PP;
    case M_FLASH_V1:
    case M_FLASH_V2:
    case M_FLASH_TRITON:
    case M_FLASH_BUILDER:
        return TS_FI_ATTENTION;
    default:
        return mega_flags[id].range;
    }
}

/* Known Megatron flags that take a value and do not change memory, time
 * or checkpoints as modelled here; reported as "no effect", not unknown. */
static const char *const mega_no_effect[] = { "lr",
                                              "loss-scale",
                                              "min-lr",
                                              "lr-decay-style",
                                              "lr-warmup-iters",
                                              "lr-warmup-fraction",
                                              "lr-decay-iters",
                                              "weight-decay",
                                              "clip-grad",
                                              "adam-beta1",
                                              "adam-beta2",
                                              "adam-eps",
                                              "init-method-std",
                                              "seed",
                                              "data-path",
                                              "split",
                                              "save",
                                              "load",
                                              "save-interval",
                                              "eval-interval",
                                              "eval-iters",
                                              "log-interval",
                                              "distributed-backend",
                                              "norm-epsilon",
                                              "rotary-base",
                                              "rotary-percent",
                                              "transformer-impl",
                                              "data-cache-path",
                                              "tensorboard-dir",
                                              "wandb-project",
                                              "exit-interval",
                                              "num-workers",
                                              "attention-backend",
                                              "moe-router-load-balancing-type",
                                              "moe-aux-loss-coeff",
                                              "moe-token-dispatcher-type",
                                              "moe-grouped-gemm",
                                              "use-mcore-models",
                                              "bf16-reduce",
                                              NULL };

/* Append ", --name" to a note list (bounded). */
static void list_add(char *list, size_t cap, const char *name)
{
    size_t n = strlen(list);

    if (n + 8 >= cap)
        return;
    snprintf(list + n, cap - n, "%s--%.*s", n ? ", " : "", ts_utf8_prec(name, 48), name);
    ts_utf8_trim(list, strlen(list));
}

int mega_bad_value(ts_api_err *err, const char *flag, const char *want, const char *got)
{
    ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR, "megatron_args --%s takes %s, got '%.*s'",
                   flag, want, ts_utf8_prec(got, 48), got);
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

static int parse_value(const mega_flag *f, const char *v, mega_val *out, ts_api_err *err)
{
    char *end;

    switch (f->kind) {
    case MK_INT: {
        long long x;
        int64_t lo, hi;

        errno = 0;
        x = strtoll(v, &end, 10);
        if (errno != 0 || end == v || *end != '\0' || x < 0)
            return mega_bad_value(err, f->name, "a non-negative integer", v);
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
            return mega_bad_value(err, f->name, "a number in [0, 1]", v);
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

    if (mega_mamba(id)) {
        /* Read only to refuse (ts_megatron_shape.c): the flag's presence
         * says Mamba layers, whatever its value. */
        vals[id].set = true;
        vals[id].s = "";
        vals[id].line = flag->line;
        return 1;
    }
    if (id == M_TOK_TYPE || id == M_TOK_MODEL || id == M_VOCAB_FILE || id == M_MERGE_FILE) {
        /* Decided with the vocabulary: --vocab-size may make it moot. */
        vals[id].unknown = v;
        return 1;
    }
    if (fi != TS_FI_COUNT && im->req_has[fi])
        return 1; /* the request's value stands; this one is not needed */
    /* Megatron-DeepSpeed: the config file's path is only named in a note
     * (or matched to a heredoc), and --zero-stage is needed only when no
     * deepspeed_config (the request's, or a heredoc's read later) gives
     * the stage: layout_ds_zero decides. */
    if (id == M_DS_CONFIG || id == M_ZERO_STAGE) {
        vals[id].set = true;
        vals[id].s = "(not known)";
        vals[id].unknown = v;
        vals[id].line = flag->line;
        return 1;
    }
    ts_shell_why_text(v, why, sizeof why);
    ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR, "megatron_args line %u: --%s needs %s",
                   flag->line, mega_flags[id].name, why);
    return -1;
}

/* The flag c->w[*i] into vals[] (the cursor moves past its value words);
 * a flag not read is listed in unknown or noeff (cap bytes each). */
static int scan_flag(const ts_import *im, const ts_shell_cmd *c, size_t *i, mega_val *vals,
                     char *unknown, char *noeff, size_t cap, ts_api_err *err)
{
    const ts_shell_word *w = &c->w[*i];
    const char *name = w->text + 2, *eq = strchr(name, '='), *val;
    size_t klen = eq != NULL ? (size_t)(eq - name) : strlen(name);
    char key[80];
    int id;

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
        list_add(*ne != NULL ? noeff : unknown, cap, key);
        if (eq == NULL)
            while (*i + 1 < c->n && !is_flag(&c->w[*i + 1]))
                (*i)++; /* its values */
        return 0;
    }
    vals[id].line = w->line;
    if (mega_flags[id].kind == MK_FLAG) {
        if (eq != NULL) {
            mega_bad_value(err, key, "no value", eq + 1);
            at_line(err, w->line);
            return -1;
        }
        vals[id].set = true;
        return 0;
    }
    if (eq != NULL) {
        val = eq + 1;
        if (w->why != TS_SHELL_KNOWN)
            return unknown_value(im, (mega_id)id, w, w, vals, err) < 0 ? -1 : 0;
    } else if (*i + 1 < c->n && !is_flag(&c->w[*i + 1])) {
        const ts_shell_word *v = &c->w[++*i]; /* the value is the next word */

        if (v->ghost || v->why != TS_SHELL_KNOWN)
            return unknown_value(im, (mega_id)id, w, v, vals, err) < 0 ? -1 : 0;
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
    return 0;
}

/* Walk the training command's flags into vals[]; unknown and no-effect
 * flags into notes.  Megatron's parser has no positional arguments, so
 * every word after a flag that is not itself a flag belongs to it
 * (argparse nargs, e.g. --recompute-modules mlp moe). */
int mega_scan(const ts_import *im, const ts_shell_cmd *c, mega_val *vals, ts_api_notes *notes,
              ts_api_err *err)
{
    char unknown[TS_API_NOTE_LEN - 64] = "", noeff[TS_API_NOTE_LEN - 64] = "";
    size_t i = c->entry < c->n ? c->entry + 1 : 0;
    bool seen_flag = false;

    for (; i < c->n; i++) {
        const ts_shell_word *w = &c->w[i];

        if (!is_flag(w)) {
            /* An unknown value in a word no flag takes: bash would have
             * dropped it (an empty $EXTRA_ARGS); other words are noted. */
            if (seen_flag && !w->ghost && w->why == TS_SHELL_KNOWN)
                ts_import_note(notes, "megatron_args line %u: stray word '%.*s' ignored", w->line,
                               ts_utf8_prec(w->text, 48), w->text);
            continue;
        }
        seen_flag = true;
        if (scan_flag(im, c, &i, vals, unknown, noeff, sizeof unknown, err) != 0)
            return -1;
    }
    if (unknown[0] != '\0')
        ts_import_note(notes, "megatron_args: unknown flags ignored: %s", unknown);
    if (noeff[0] != '\0')
        ts_import_note(notes, "megatron_args: flags with no effect on the estimate: %s", noeff);
    return 0;
}
