/*
 * ts_megatron_shape.c - the model's shape from Megatron-LM's flags, with
 * Megatron's defaults when the text defines the model: the vocabulary
 * (the tokenizer's, padded as Megatron pads it), the dense / MoE
 * layers of --moe-layer-freq and the sliding-window layers of
 * --window-size with --window-attn-skip-freq.
 * Part of the Megatron-LM importer (ts_megatron.c); shared types in
 * ts_megatron_int.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_catalogue.h"
#include "ts_ckd.h"
#include "ts_import.h"
#include "ts_megatron_int.h"

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
        *slash = '\0'; /* .../tokenizer.model: the directory names the model */
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
            return e; /* org/name at the end */
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
                   "--padded-vocab-size, or the request's vocab",
                   lead, what, why[0] ? ", and --tokenizer-model is " : "", why);
    return -1;
}

/* No --tokenizer-type: only GPT-2 BPE reads a merges file, and the
 * GPT-2 vocab.json by its usual name says which.  As vocab_base. */
static int vocab_untyped(const mega_val *v, bool need, int64_t *base, char *from, size_t fsz,
                         ts_api_notes *notes, ts_api_err *err)
{
    const char *vf = v[M_VOCAB_FILE].set ? v[M_VOCAB_FILE].s : NULL;
    const char *slash = vf != NULL ? strrchr(vf, '/') : NULL;
    char why[TS_API_DETAIL_LEN / 2] = "";

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
    if (v[M_VOCAB_FILE].unknown != NULL) {
        strcpy(why, ", and --vocab-file is ");
        ts_shell_why_text(v[M_VOCAB_FILE].unknown, why + strlen(why), sizeof why - strlen(why));
    } else if (vf != NULL) {
        snprintf(why, sizeof why, ", and --vocab-file %.*s%s", ts_utf8_prec(vf, 60), vf,
                 v[M_MERGE_FILE].set ? " is not gpt2-vocab.json" : " comes without --merge-file");
    }
    ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                   "megatron_args: --num-layers defines a model but nothing gives its "
                   "vocabulary (no --vocab-size, --padded-vocab-size or --tokenizer-type%s); "
                   "give one of them, or the request's vocab",
                   why);
    return -1;
}

/* A --tokenizer-type other than GPT-2's: the catalogue model that
 * --tokenizer-model names.  As vocab_base. */
static int vocab_typed(const mega_val *v, bool need, int64_t *base, char *from, size_t fsz,
                       ts_api_notes *notes, ts_api_err *err)
{
    const char *type = v[M_TOK_TYPE].s;
    const char *model = v[M_TOK_MODEL].set ? v[M_TOK_MODEL].s : NULL;
    char what[200];

    if (model != NULL) {
        const ts_catalogue_entry *e = tokenizer_entry(model);
        int64_t n = e != NULL ? ts_catalogue_vocab(e) : 0;

        if (n > 0) {
            *base = n;
            snprintf(from, fsz, "--tokenizer-model %.*s", ts_utf8_prec(e->id, 100), e->id);
            ts_import_note(notes,
                           "megatron_args: --tokenizer-type %.*s --tokenizer-model "
                           "%.*s: vocab_size %lld of the catalogue's %s (Megatron counts the "
                           "tokenizer's entries, added tokens included; give --vocab-size "
                           "when they differ)",
                           ts_utf8_prec(type, 32), type, ts_utf8_prec(model, 60), model,
                           (long long)n, e->id);
            return 1;
        }
    }
    if (!need)
        return 0;
    snprintf(what, sizeof what,
             "the vocabulary of --tokenizer-type %.*s%s%.*s is not known "
             "here",
             ts_utf8_prec(type, 40), type, model != NULL ? " --tokenizer-model " : "",
             model != NULL ? ts_utf8_prec(model, 60) : 0, model != NULL ? model : "");
    ts_utf8_trim(what, strlen(what));
    return vocab_needed(v, what, err);
}

/* The vocabulary before padding: --vocab-size, else the tokenizer's.
 * 1 found (*base, *from), 0 none, -1 error (only when need: the text
 * defines the model and nothing else gives the vocabulary). */
static int vocab_base(const mega_val *v, bool need, int64_t *base, char *from, size_t fsz,
                      ts_api_notes *notes, ts_api_err *err)
{
    const char *type = v[M_TOK_TYPE].set ? v[M_TOK_TYPE].s : NULL;

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
    if (type == NULL)
        return vocab_untyped(v, need, base, from, fsz, notes, err);
    if (strcmp(type, "GPT2BPETokenizer") == 0) {
        /* gpt2-vocab.json has 50257 entries (GPT-2's vocab_size). */
        *base = 50257;
        snprintf(from, fsz, "--tokenizer-type GPT2BPETokenizer");
        return 1;
    }
    if (strcmp(type, "NullTokenizer") == 0) {
        if (!need)
            return 0;
        return vocab_needed(v,
                            "NullTokenizer takes its size from --vocab-size, "
                            "which is not given",
                            err);
    }
    return vocab_typed(v, need, base, from, fsz, notes, err);
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
static int pad_vocab(ts_import *im, const mega_val *v, int64_t vocab, const char *from, int64_t tp,
                     ts_api_notes *notes, ts_api_err *err)
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
                       "%lld is more than the vocab maximum %lld",
                       (long long)vocab, from, (long long)div, (long long)tp, (long long)hi);
        return -1;
    }
    if (padded != vocab && strcmp(from, "--vocab-size") == 0)
        ts_import_note(notes,
                       "megatron_args: --vocab-size %lld padded to %lld "
                       "(multiple of %lld x tp %lld, as Megatron does)",
                       (long long)vocab, (long long)padded, (long long)div, (long long)tp);
    else if (padded != vocab)
        ts_import_note(notes,
                       "megatron_args: vocabulary %lld (%s) padded to %lld "
                       "(multiple of %lld x tp %lld, as Megatron does)",
                       (long long)vocab, from, (long long)padded, (long long)div, (long long)tp);
    snprintf(origin, sizeof origin, MEGA_PTR " (%s)", from);
    return ts_import_set_int(im, TS_FI_VOCAB, padded, TS_SRC_MEGATRON, origin, err);
}

/* --moe-layer-freq: an integer N (one MoE layer in N) or Megatron's
 * Python list expression ("[0]*3+[1]*58", "([1]*3+[0])*2").  The model
 * here has its dense layers first: *dense is their count; 0 when every
 * layer is MoE; -1 with a 400 for any other pattern. */
static int moe_pattern(const char *p, int64_t layers, int64_t *dense, ts_api_err *err)
{
    const char *t = p;
    unsigned char *kinds;
    size_t n, k;

    while (*t == ' ')
        t++;
    if (*t >= '0' && *t <= '9') {
        char *end;
        long long f = strtoll(t, &end, 10);

        if (*end == '\0' && f == 1) {
            *dense = 0; /* every layer MoE */
            return 0;
        }
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, MEGA_PTR,
                       "megatron_args --moe-layer-freq %.*s: MoE layers interleaved with dense "
                       "ones are not modelled (only dense layers first, then MoE)",
                       ts_utf8_prec(p, 24), p);
        return -1;
    }
    if (mega_pattern(t, "moe-layer-freq", layers, &kinds, &n, err) != 0)
        return -1;
    for (k = 0; k < n && kinds[k] == 0; k++)
        ;
    *dense = (int64_t)k;
    for (; k < n; k++)
        if (kinds[k] == 0) {
            ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, MEGA_PTR,
                           "megatron_args --moe-layer-freq '%.*s': a dense layer after a "
                           "MoE layer is not modelled (only dense layers first)",
                           ts_utf8_prec(p, 48), p);
            free(kinds);
            return -1;
        }
    free(kinds);
    return 0;
}

/* --kv-channels, --group-query-attention with --num-query-groups. */
static int shape_heads(ts_import *im, const mega_val *v, ts_api_notes *notes, ts_api_err *err)
{
    if (v[M_KV_CHANNELS].set && !v[M_MLA].set &&
        mega_set_i(im, TS_FI_HEAD_DIM, v[M_KV_CHANNELS].i, M_KV_CHANNELS, err) != 0)
        return -1;
    if (v[M_GQA].set) {
        if (!v[M_QUERY_GROUPS].set) {
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                           "megatron_args --group-query-attention needs --num-query-groups");
            return -1;
        }
        if (mega_set_i(im, TS_FI_KV_HEADS, v[M_QUERY_GROUPS].i, M_QUERY_GROUPS, err) != 0)
            return -1;
    } else if (v[M_QUERY_GROUPS].set) {
        ts_import_note(notes, "megatron_args: --num-query-groups without "
                              "--group-query-attention is ignored by Megatron (MHA)");
    }
    return 0;
}

/* --ffn-hidden-size, else Megatron's default for a model the text
 * defines: 4h, or int(8h/3 / 64) * 64 with --swiglu. */
static int shape_ffn(ts_import *im, const mega_val *v, bool model, ts_api_err *err)
{
    if (v[M_FFN].set)
        return mega_set_i(im, TS_FI_FFN, v[M_FFN].i, M_FFN, err);
    if (model && v[M_HIDDEN].set) {
        int64_t h = v[M_HIDDEN].i;
        int64_t f = v[M_SWIGLU].set ? ts_ckd_mul_sat(h, 8) / 192 * 64 : ts_ckd_mul_sat(h, 4);

        return mega_set_i(im, TS_FI_FFN, f, M_HIDDEN, err);
    }
    return 0;
}

/* --padded-vocab-size, else the vocabulary padded as Megatron pads it,
 * unless the request gives vocab. */
static int shape_vocab(ts_import *im, const mega_val *v, bool model, ts_api_notes *notes,
                       ts_api_err *err)
{
    int64_t tp = v[M_TP].set ? v[M_TP].i : 1;
    /* Needed: the text defines the model and no import gave a vocabulary. */
    bool need = model && im->vals[TS_FI_VOCAB] == NULL;
    int64_t base = 0;
    char from[112];
    int got;

    if (v[M_PADDED_VOCAB].set)
        return mega_set_i(im, TS_FI_VOCAB, v[M_PADDED_VOCAB].i, M_PADDED_VOCAB, err);
    if (im->req_has[TS_FI_VOCAB])
        return 0;
    got = vocab_base(v, need, &base, from, sizeof from, notes, err);
    if (got < 0 || (got > 0 && pad_vocab(im, v, base, from, tp, notes, err) != 0))
        return -1;
    return 0;
}

/* --multi-latent-attention with Megatron's MLA defaults (arguments.py
 * _add_mla_args @d98e8a6); the MLA sizes without it are ignored. */
static int shape_mla(ts_import *im, const mega_val *v, ts_api_notes *notes, ts_api_err *err)
{
    if (!v[M_MLA].set) {
        if (v[M_Q_LORA].set || v[M_KV_LORA].set || v[M_QK_HEAD].set || v[M_QK_POS].set ||
            v[M_V_HEAD].set)
            ts_import_note(notes,
                           "megatron_args: the MLA sizes (--kv-lora-rank ...) are "
                           "ignored without --multi-latent-attention, as Megatron ignores them");
        return 0;
    }
    if (mega_set_i(im, TS_FI_KV_LORA_RANK, v[M_KV_LORA].set ? v[M_KV_LORA].i : 32, M_KV_LORA,
                   err) != 0 ||
        mega_set_i(im, TS_FI_Q_LORA_RANK, v[M_Q_LORA].set ? v[M_Q_LORA].i : 0, M_Q_LORA, err) !=
            0 ||
        mega_set_i(im, TS_FI_QK_NOPE_DIM, v[M_QK_HEAD].set ? v[M_QK_HEAD].i : 128, M_QK_HEAD,
                   err) != 0 ||
        mega_set_i(im, TS_FI_QK_ROPE_DIM, v[M_QK_POS].set ? v[M_QK_POS].i : 64, M_QK_POS, err) !=
            0 ||
        mega_set_i(im, TS_FI_V_HEAD_DIM, v[M_V_HEAD].set ? v[M_V_HEAD].i : 128, M_V_HEAD, err) !=
            0 ||
        mega_set_i(im, TS_FI_HEAD_DIM, 0, M_MLA, err) != 0)
        return -1;
    if (v[M_KV_CHANNELS].set || v[M_QK_LN].set)
        ts_import_note(notes,
                       "megatron_args: with --multi-latent-attention the head "
                       "widths are --qk-head-dim + --qk-pos-emb-head-dim%s%s",
                       v[M_KV_CHANNELS].set ? "; --kv-channels is not used" : "",
                       v[M_QK_LN].set ? "; --qk-layernorm is the latent norms, counted" : "");
    return 0;
}

/* The experts: --moe-layer-freq, the router's expert bias, multi-token
 * prediction (a note), shared experts, and the router's default top-k. */
static int shape_moe(ts_import *im, const mega_val *v, ts_api_notes *notes, ts_api_err *err)
{
    bool moe = v[M_EXPERTS].set && v[M_EXPERTS].i > 1;

    if (moe && v[M_MOE_FREQ].set) {
        int64_t dense = 0, L = v[M_NUM_LAYERS].set ? v[M_NUM_LAYERS].i : 0;

        if (moe_pattern(v[M_MOE_FREQ].s, L, &dense, err) != 0 ||
            mega_set_i(im, TS_FI_DENSE_LAYERS, dense, M_MOE_FREQ, err) != 0)
            return -1;
    }
    if (moe && v[M_EXPERT_BIAS].set &&
        mega_set_b(im, TS_FI_ROUTER_BIAS, true, "--moe-router-enable-expert-bias", err) != 0)
        return -1;
    if (v[M_MTP].set && v[M_MTP].i > 0)
        ts_import_note(notes,
                       "megatron_args: --mtp-num-layers %lld: the multi-token-prediction "
                       "layers are not in the count (each is about one transformer layer "
                       "more)",
                       (long long)v[M_MTP].i);
    if (v[M_SHARED_FFN].set) {
        int64_t fe = v[M_MOE_FFN].set ? v[M_MOE_FFN].i : v[M_FFN].i;

        if (fe <= 0 || v[M_SHARED_FFN].i % fe != 0) {
            ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, MEGA_PTR,
                           "megatron_args --moe-shared-expert-intermediate-size must be a "
                           "multiple of the expert width (--moe-ffn-hidden-size)");
            return -1;
        }
        if (mega_set_i(im, TS_FI_SHARED_EXPERTS, v[M_SHARED_FFN].i / fe, M_SHARED_FFN, err) != 0)
            return -1;
    }
    /* Megatron routes each token to --moe-router-topk experts, default 2. */
    if (moe && !v[M_TOPK].set &&
        ts_import_set_int(im, TS_FI_TOP_K, 2, TS_SRC_MEGATRON,
                          MEGA_PTR " (--moe-router-topk default 2)", err) != 0)
        return -1;
    return 0;
}

/* --window-size "L,R" (tuple_type: "(127, 0)" too; -1 an unbounded
 * side) into *left; 0, or -1 with a 400. */
static int window_edges(const char *s, int64_t *left, ts_api_err *err)
{
    const char *p = s + strspn(s, " (");
    char *end;
    long long l, r = 0;
    bool ok;

    errno = 0;
    l = strtoll(p, &end, 10);
    ok = end != p;
    end += strspn(end, " ");
    if (ok && *end == ',') {
        p = end + 1;
        r = strtoll(p, &end, 10);
        ok = end != p;
        end += strspn(end, " )");
    } else {
        ok = false;
    }
    if (!ok || *end != '\0' || errno != 0 || l < -1 || l >= INT64_C(1) << 24 || r < -1) {
        ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                       "megatron_args --window-size takes two integers L,R (keys left and "
                       "right of the query, -1 unbounded), got '%.*s'",
                       ts_utf8_prec(s, 48), s);
        return -1;
    }
    *left = l;
    return 0;
}

/* --window-size: flash-attn's inclusive band, L keys back and the query
 * itself, so L + 1 tokens (the gpt-oss example's 127,0 is gpt-oss's 128;
 * Megatron-Bridge converts a Hugging Face sliding_window w to (w - 1, 0));
 * the decoder is causal, so R is cut to 0 (flash_api.cpp mha_fwd).  Which
 * layers: --window-attn-skip-freq N slides 1-indexed layer n when
 * n % N != 0, a list slides its 1s; without it every layer
 * (megatron/core/transformer/utils.py is_layer_window_attention).  The
 * members as the request has them: sliding_layers 0 for every layer, no
 * window when no layer slides.  The layer count: --num-layers, the list's
 * length, else an import's (hf_config). */
static int shape_window(ts_import *im, const mega_val *v, ts_api_notes *notes, ts_api_err *err)
{
    const json_t *lv = im->vals[TS_FI_LAYERS];
    int64_t L = v[M_NUM_LAYERS].set   ? v[M_NUM_LAYERS].i
                : json_is_integer(lv) ? (int64_t)json_integer_value(lv)
                                      : 0;
    int64_t left, n = -1; /* -1: every layer */
    const char *f = v[M_WINDOW_SKIP].s;

    if (!v[M_WINDOW].set) {
        if (v[M_WINDOW_SKIP].set)
            ts_import_note(notes, "megatron_args: --window-attn-skip-freq without --window-size "
                                  "has no effect (no window)");
        return 0;
    }
    if (window_edges(v[M_WINDOW].s, &left, err) != 0)
        return -1;
    if (left >= 0 && v[M_WINDOW_SKIP].set) {
        char *end;
        long long k = strtoll(f, &end, 10);

        if (end != f && *end == '\0') {
            if (k < 1) {
                ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                               "megatron_args --window-attn-skip-freq %lld: the frequency is at "
                               "least 1 (1: no layer slides)",
                               k);
                return -1;
            }
            if (L > 0)
                n = L - L / k;
            else
                ts_import_note(notes,
                               "megatron_args: --window-attn-skip-freq %lld without a "
                               "layer count: every layer is costed with the window",
                               k);
        } else {
            unsigned char *kinds;
            size_t m, i;

            if (mega_pattern(f, "window-attn-skip-freq", L, &kinds, &m, err) != 0)
                return -1;
            for (n = 0, i = 0; i < m; i++)
                n += kinds[i];
            L = (int64_t)m;
            free(kinds);
        }
    }
    if (left < 0 || n == 0)
        return mega_set_i(im, TS_FI_SLIDING_WINDOW, 0, left < 0 ? M_WINDOW : M_WINDOW_SKIP, err);
    if (mega_set_i(im, TS_FI_SLIDING_WINDOW, left + 1, M_WINDOW, err) != 0)
        return -1;
    return mega_set_i(im, TS_FI_SLIDING_LAYERS, n < 0 || n == L ? 0 : n,
                      v[M_WINDOW_SKIP].set ? M_WINDOW_SKIP : M_WINDOW, err);
}

/* The shape's switches given as flags. */
static int shape_flags(ts_import *im, const mega_val *v, ts_api_err *err)
{
    if (v[M_QKV_BIAS].set && mega_set_b(im, TS_FI_QKV_BIAS, true, "--add-qkv-bias", err) != 0)
        return -1;
    if (v[M_QK_LN].set && !v[M_MLA].set &&
        mega_set_b(im, TS_FI_QK_NORM, true, "--qk-layernorm", err) != 0)
        return -1;
    if (v[M_SWIGLU].set && mega_set_b(im, TS_FI_GATED, true, "--swiglu", err) != 0)
        return -1;
    /* --quick-geglu (gpt-oss): a gated unit too, three matrices. */
    if (v[M_QUICK_GEGLU].set && mega_set_b(im, TS_FI_GATED, true, "--quick-geglu", err) != 0)
        return -1;
    return 0;
}

/* Positions: learned (max-position-embeddings rows, the default), rope,
 * yarn or none. */
static int shape_positions(ts_import *im, const mega_val *v, ts_api_err *err)
{
    const char *pos = v[M_POS_TYPE].set      ? v[M_POS_TYPE].s
                      : v[M_ROPE_LEGACY].set ? "rope"
                                             : "learned_absolute";

    if (strcmp(pos, "learned_absolute") == 0) {
        int64_t rows = v[M_MAX_POS].set ? v[M_MAX_POS].i : v[M_SEQ].set ? v[M_SEQ].i : 0;

        if (rows == 0) {
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                           "megatron_args: learned absolute positions (the default "
                           "--position-embedding-type) need --max-position-embeddings");
            return -1;
        }
        return mega_set_i(im, TS_FI_POS_EMBEDDINGS, rows, M_MAX_POS, err);
    }
    if (strcmp(pos, "rope") == 0 || strcmp(pos, "none") == 0 || strcmp(pos, "yarn") == 0)
        return mega_set_i(im, TS_FI_POS_EMBEDDINGS, 0, M_POS_TYPE, err);
    return mega_bad_value(err, "position-embedding-type", "learned_absolute, rope, yarn or none",
                          pos);
}

/* Megatron's own defaults for a model the string defines. */
static int shape_defaults(ts_import *im, const mega_val *v, ts_api_err *err)
{
    bool bias = !v[M_NO_BIAS].set;
    const char *norm = v[M_NORMALIZATION].set ? v[M_NORMALIZATION].s : "LayerNorm";
    bool layernorm;
    /* Megatron's dropout defaults are 0.1 each. */
    double hd = v[M_HDROP].set ? v[M_HDROP].d : 0.1;
    double ad = v[M_ADROP].set ? v[M_ADROP].d : 0.1;

    if (strcmp(norm, "LayerNorm") == 0)
        layernorm = true;
    else if (strcmp(norm, "RMSNorm") == 0)
        layernorm = false;
    else
        return mega_bad_value(err, "normalization", "LayerNorm or RMSNorm", norm);
    if (mega_set_b(im, TS_FI_GATED, v[M_SWIGLU].set || v[M_QUICK_GEGLU].set,
                   v[M_QUICK_GEGLU].set ? "--quick-geglu" : "--swiglu", err) != 0 ||
        mega_set_b(im, TS_FI_TIED_EMBEDDINGS, !v[M_UNTIE].set,
                   "--untie-embeddings-and-output-weights", err) != 0 ||
        mega_set_b(im, TS_FI_QKV_BIAS, bias || v[M_QKV_BIAS].set, "--disable-bias-linear", err) !=
            0 ||
        mega_set_b(im, TS_FI_OUT_BIAS, bias, "--disable-bias-linear", err) != 0 ||
        mega_set_b(im, TS_FI_MLP_BIAS, bias, "--disable-bias-linear", err) != 0 ||
        mega_set_b(im, TS_FI_NORM_BIAS, layernorm, "--normalization", err) != 0 ||
        mega_set_s(im, TS_FI_NORM, layernorm ? "layernorm" : "rmsnorm", "--normalization", err) !=
            0)
        return -1;
    if (!v[M_KV_CHANNELS].set && !v[M_MLA].set &&
        mega_set_i(im, TS_FI_HEAD_DIM, 0, M_KV_CHANNELS, err) != 0)
        return -1;
    if (!v[M_GQA].set && v[M_HEADS].set &&
        mega_set_i(im, TS_FI_KV_HEADS, v[M_HEADS].i, M_HEADS, err) != 0)
        return -1;
    /* No --window-size: full attention, whatever a preset's window. */
    if (!v[M_WINDOW].set && mega_set_i(im, TS_FI_SLIDING_WINDOW, 0, M_NUM_LAYERS, err) != 0)
        return -1;
    if (shape_positions(im, v, err) != 0 ||
        ts_import_set(im, TS_FI_PARAMS, json_null(), TS_SRC_MEGATRON, MEGA_PTR " (--num-layers)",
                      err) != 0 ||
        mega_set_b(im, TS_FI_DROPOUT, hd > 0 || ad > 0,
                   "--hidden-dropout/--attention-dropout, default 0.1", err) != 0)
        return -1;
    return 0;
}

/* Megatron's hybrid models (megatron/training/arguments.py@d98e8a64:
 * --hybrid-layer-pattern, formerly --hybrid-override-pattern, one letter a
 * layer: M Mamba, * attention, - MLP, E MoE) replace --num-layers with the
 * pattern; older scripts (pretrain_mamba.py) give --hybrid-attention-ratio
 * and --hybrid-mlp-ratio (0 for pure Mamba) and --mamba-state-dim.  Mamba layers are not modelled: refused, not read as the
 * transformer that the other flags would describe. */
static int shape_hybrid(const mega_val *v, ts_api_err *err)
{
    mega_id id = M_HYBRID;
    const char *p;

    while (mega_mamba(id) && !v[id].set)
        id = (mega_id)(id + 1);
    if (!mega_mamba(id))
        return 0;
    p = v[id].s != NULL ? v[id].s : "";
    ts_api_err_set(
        err, TS_PROB_UNSUPPORTED_CONFIG, MEGA_PTR,
        "megatron_args line %u: --%s%s%.*s%s%s describes a hybrid Mamba model%s; "
        "state-space layers are not modelled (transformer layers only)",
        v[id].line, mega_flags[id].name, *p != '\0' ? " '" : "", ts_utf8_prec(p, 32), p,
        p[ts_utf8_prec(p, 32)] != '\0' ? "..." : "", *p != '\0' ? "'" : "",
        id == M_HYBRID || id == M_HYBRID_OLD ? " (M Mamba, * attention, - MLP, E MoE layers)" : "");
    return -1;
}

/* hf: an hf_config gave the shape.  Then it is the checkpoint's, and
 * Megatron's defaults for flags the string leaves out would contradict it. */
int mega_emit_shape(ts_import *im, const mega_val *v, bool hf, ts_api_notes *notes, ts_api_err *err)
{
    bool model = v[M_NUM_LAYERS].set && !hf;

    if (shape_hybrid(v, err) != 0 || shape_heads(im, v, notes, err) != 0 ||
        shape_ffn(im, v, model, err) != 0 || shape_vocab(im, v, model, notes, err) != 0 ||
        shape_mla(im, v, notes, err) != 0 || shape_moe(im, v, notes, err) != 0 ||
        shape_flags(im, v, err) != 0 || shape_window(im, v, notes, err) != 0)
        return -1;
    if (!model) {
        if (hf && v[M_NUM_LAYERS].set)
            ts_import_note(notes, "megatron_args: with hf_config, only the flags "
                                  "given override its shape (Megatron's defaults for the "
                                  "others are not applied)");
        return 0;
    }
    return shape_defaults(im, v, err);
}
