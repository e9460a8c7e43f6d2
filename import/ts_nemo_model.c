/*
 * ts_nemo_model.c  - a NeMo training YAML's model: (see ts_nemo.c): the
 * shape and NeMo's defaults for a model the file defines, the layout
 * (parallelism, recompute, FSDP, optimizer) and the vocabulary.
 * Compiled with libyaml only (import/meson.build).
 */
#include <stdio.h>
#include <string.h>

#include "ts_catalogue.h"
#include "ts_ckd.h"
#include "ts_import.h"
#include "ts_nemo_int.h"

/* ---- the vocabulary -------------------------------------------------- */

/* model.tokenizer: GPT2BPETokenizer's 50257, or the catalogue model a
 * Hugging Face tokenizer names; padded to make_vocab_size_divisible_by x
 * tp.  need: the file defines the model and nothing else gives the
 * vocabulary (then an unknown one is a 400). */
int nemo_vocab(nemo *n, const ts_import_obj *m, bool need, int64_t tp)
{
    ts_import_obj t;
    const char *lib = NULL, *type = NULL, *model = NULL;
    int64_t base = 0, div = 128, padded = 0, mult = 0;
    char from[160];
    int rc;

    if ((rc = nemo_int(n, m, "make_vocab_size_divisible_by", 1, 1073741824, &div)) < 0)
        return -1;
    if ((rc = ts_import_sub(m, "tokenizer", &t, n->err)) < 0)
        return -1;
    if (rc > 0 && (nemo_str(n, &t, "library", &lib) < 0 || nemo_str(n, &t, "type", &type) < 0 ||
                   nemo_str(n, &t, "model", &model) < 0))
        return -1;
    if (type != NULL && strcmp(type, "GPT2BPETokenizer") == 0) {
        base = 50257; /* the GPT-2 vocab.json's entries */
        snprintf(from, sizeof from, "tokenizer.type GPT2BPETokenizer");
    } else if (type != NULL && lib != NULL && strcmp(lib, "huggingface") == 0) {
        const ts_catalogue_entry *e = ts_catalogue_find(type);

        if (e != NULL && (base = ts_catalogue_vocab(e)) > 0) {
            snprintf(from, sizeof from, "tokenizer.type %.*s", ts_utf8_prec(e->id, 100), e->id);
            ts_import_note(n->im->notes,
                           NEMO_PTR
                           "/model/tokenizer/type %.*s: vocab_size %lld "
                           "of the catalogue's %s (NeMo counts the tokenizer's entries; give "
                           "vocab when they differ)",
                           ts_utf8_prec(type, 60), type, (long long)base, e->id);
        }
    }
    if (base == 0) {
        char ptr[TS_IMPORT_ORIGIN_LEN];

        if (!need)
            return 0;
        ts_import_ptr(ptr, sizeof ptr, m, "tokenizer");
        ts_api_err_set(n->err, TS_PROB_INVALID_VALUE, ptr,
                       "%s: the vocabulary of a %.*s tokenizer%s%.*s is not known here (its "
                       "model file is not read); give the request's vocab (the tokenizer's "
                       "size padded to a multiple of %lld x tp)",
                       ptr, ts_utf8_prec(lib != NULL ? lib : "missing", 24),
                       lib != NULL ? lib : "missing", type != NULL ? " " : "",
                       type != NULL ? ts_utf8_prec(type, 60) : 0, type != NULL ? type : "",
                       (long long)div);
        return -1;
    }
    if (ts_ckd_mul(&mult, div, tp) || ts_ckd_round_up(&padded, base, mult) ||
        padded > (int64_t)ts_fields[TS_FI_VOCAB].maximum) {
        ts_api_err_set(n->err, TS_PROB_OUT_OF_RANGE, NEMO_PTR "/model/make_vocab_size_divisible_by",
                       "vocabulary %lld padded to a multiple of make_vocab_size_divisible_by %lld "
                       "x tp %lld is past the vocab maximum",
                       (long long)base, (long long)div, (long long)tp);
        return -1;
    }
    if (padded != base)
        ts_import_note(n->im->notes,
                       NEMO_PTR ": vocabulary %lld (%s) padded to %lld (multiple "
                                "of %lld x tp %lld, as NeMo does)",
                       (long long)base, from, (long long)padded, (long long)div, (long long)tp);
    {
        char origin[TS_IMPORT_ORIGIN_LEN];

        snprintf(origin, sizeof origin, NEMO_PTR "/model/tokenizer (%.*s)", ts_utf8_prec(from, 100),
                 from);
        return ts_import_set_int(n->im, TS_FI_VOCAB, padded, TS_SRC_NEMO, origin, n->err);
    }
}

/* ---- model: the shape ------------------------------------------------ */

/* num_query_groups and kv_channels, when given. */
static int given_heads(nemo *n, const ts_import_obj *m)
{
    int64_t v = 0;
    int rc;

    if ((rc = nemo_int(n, m, "num_query_groups", 1, 1048576, &v)) < 0)
        return -1;
    if (rc > 0 && nemo_set_i(n, TS_FI_KV_HEADS, v, m, "num_query_groups") != 0)
        return -1;
    if ((rc = nemo_int(n, m, "kv_channels", 1, 16777216, &v)) < 0)
        return -1;
    if (rc > 0 && nemo_set_i(n, TS_FI_HEAD_DIM, v, m, "kv_channels") != 0)
        return -1;
    return 0;
}

static bool key_absent(const ts_import_obj *m, const char *key)
{
    const json_t *v = json_object_get(m->obj, key);

    return v == NULL || json_is_null(v);
}

/* The norm, gated or not (an activation whose name ends in "glu"), the
 * biases and tied embeddings. */
static int norm_and_biases(nemo *n, const ts_import_obj *m, const char *norm, const char *act,
                           bool bias, bool qkv_bias, bool tied)
{
    bool layernorm = strcmp(norm, "layernorm") == 0 || strcmp(norm, "LayerNorm") == 0 ||
                     strcmp(norm, "layernorm1p") == 0;
    bool rms = strcmp(norm, "rmsnorm") == 0 || strcmp(norm, "RMSNorm") == 0;
    size_t al = strlen(act);
    bool gated = al >= 3 && strcmp(act + al - 3, "glu") == 0;

    if (!layernorm && !rms) {
        ts_api_err_set(n->err, TS_PROB_INVALID_VALUE, NEMO_PTR "/model/normalization",
                       "/nemo_config/model/normalization takes layernorm, layernorm1p or "
                       "rmsnorm, got '%.*s'",
                       ts_utf8_prec(norm, 40), norm);
        return -1;
    }
    if (nemo_set_s(n, TS_FI_NORM, layernorm ? "layernorm" : "rmsnorm", m, "normalization") != 0 ||
        nemo_set_b(n, TS_FI_NORM_BIAS, layernorm, m, "normalization") != 0 ||
        nemo_set_b(n, TS_FI_GATED, gated, m, "activation") != 0 ||
        nemo_set_b(n, TS_FI_QKV_BIAS, bias || qkv_bias, m, "bias") != 0 ||
        nemo_set_b(n, TS_FI_OUT_BIAS, bias, m, "bias") != 0 ||
        nemo_set_b(n, TS_FI_MLP_BIAS, bias, m, "bias") != 0 ||
        nemo_set_b(n, TS_FI_TIED_EMBEDDINGS, tied, m, "share_embeddings_and_output_weights") != 0)
        return -1;
    return 0;
}

/* Positions pos: learned (max_position_embeddings rows, else
 * encoder_seq_length), rope, yarn or none. */
static int positions(nemo *n, const ts_import_obj *m, const char *pos)
{
    int64_t rows = 0;
    int rc;

    if (strcmp(pos, "rope") == 0 || strcmp(pos, "none") == 0 || strcmp(pos, "yarn") == 0)
        return nemo_set_i(n, TS_FI_POS_EMBEDDINGS, 0, m, "position_embedding_type");
    if (strcmp(pos, "learned_absolute") != 0) {
        ts_api_err_set(n->err, TS_PROB_UNSUPPORTED_CONFIG,
                       NEMO_PTR "/model/position_embedding_type",
                       "position_embedding_type '%.*s' is not modelled (learned_absolute, rope)",
                       ts_utf8_prec(pos, 40), pos);
        return -1;
    }
    if ((rc = nemo_int(n, m, "max_position_embeddings", 1, 1073741824, &rows)) < 0)
        return -1;
    if (rc == 0 && (rc = nemo_int(n, m, "encoder_seq_length", 1, 1073741824, &rows)) < 0)
        return -1;
    if (rc == 0) {
        ts_api_err_set(n->err, TS_PROB_INVALID_VALUE, NEMO_PTR "/model/max_position_embeddings",
                       "learned absolute positions (NeMo's default position_embedding_type) "
                       "need max_position_embeddings");
        return -1;
    }
    return nemo_set_i(n, TS_FI_POS_EMBEDDINGS, rows, m, "max_position_embeddings");
}

/* Dropout: hidden, attention and ffn default 0.1 in NeMo. */
static int dropout(nemo *n, const ts_import_obj *m)
{
    double hd = 0.1, ad = 0.1, fd = 0.0;

    if (nemo_num(n, m, "hidden_dropout", &hd) < 0 || nemo_num(n, m, "attention_dropout", &ad) < 0 ||
        nemo_num(n, m, "ffn_dropout", &fd) < 0)
        return -1;
    return nemo_set_b(n, TS_FI_DROPOUT, hd > 0 || ad > 0 || fd > 0, m, "hidden_dropout");
}

int nemo_shape(nemo *n, const ts_import_obj *m, bool model)
{
    const char *norm = "layernorm", *act = "gelu", *pos = "learned_absolute";
    bool bias = true, tied = true, qkv_bias = false;
    int64_t heads = 0;

    if (nemo_str(n, m, "normalization", &norm) < 0 || nemo_str(n, m, "activation", &act) < 0 ||
        nemo_str(n, m, "position_embedding_type", &pos) < 0 || nemo_bool(n, m, "bias", &bias) < 0 ||
        nemo_bool(n, m, "qkv_bias", &qkv_bias) < 0 ||
        nemo_bool(n, m, "share_embeddings_and_output_weights", &tied) < 0)
        return -1;
    if (given_heads(n, m) != 0)
        return -1;
    if (!model)
        return 0;
    /* NeMo's defaults for a model this file defines. */
    if (nemo_int(n, m, "num_attention_heads", 1, 1048576, &heads) < 0)
        return -1;
    if (key_absent(m, "num_query_groups") && heads > 0 &&
        nemo_set_i(n, TS_FI_KV_HEADS, heads, m, "num_attention_heads") != 0)
        return -1;
    if (key_absent(m, "kv_channels") && nemo_set_i(n, TS_FI_HEAD_DIM, 0, m, "kv_channels") != 0)
        return -1;
    /* A window NeMo's model classes place per layer (Gemma 2's on
     * alternate layers in its own code) is not read: full attention,
     * said when the file has one. */
    if (nemo_set_i(n, TS_FI_SLIDING_WINDOW, 0, m, "num_layers") != 0)
        return -1;
    if (!key_absent(m, "window_size"))
        ts_import_note(n->im->notes,
                       NEMO_PTR "/model/window_size is not read: the layers are costed with "
                                "full attention (give sliding_window and sliding_layers)");
    if (norm_and_biases(n, m, norm, act, bias, qkv_bias, tied) != 0 || positions(n, m, pos) != 0 ||
        dropout(n, m) != 0 ||
        ts_import_set(n->im, TS_FI_PARAMS, json_null(), TS_SRC_NEMO, NEMO_PTR "/model/num_layers",
                      n->err) != 0)
        return -1;
    return 0;
}

/* ---- model: the layout ------------------------------------------------ */

/* sequence_parallel, the virtual pipeline, overlap_p2p_comm, the sequence
 * length (encoder_seq_length, else data.seq_length). */
static int seq_and_pipeline(nemo *n, const ts_import_obj *m)
{
    bool sp = false, ov = false;
    int64_t vpp = 0, seq = 0;
    ts_import_obj o;
    int rc;

    if ((rc = nemo_bool(n, m, "sequence_parallel", &sp)) < 0)
        return -1;
    if (rc > 0 && nemo_set_b(n, TS_FI_SEQUENCE_PARALLEL, sp, m, "sequence_parallel") != 0)
        return -1;
    if ((rc = nemo_int(n, m, "virtual_pipeline_model_parallel_size", 1, 1048576, &vpp)) < 0)
        return -1;
    if (rc > 0 && (nemo_set_i(n, TS_FI_VPP, vpp, m, "virtual_pipeline_model_parallel_size") != 0 ||
                   nemo_set_s(n, TS_FI_PP_SCHEDULE, vpp > 1 ? "interleaved" : "1f1b", m,
                              "virtual_pipeline_model_parallel_size") != 0))
        return -1;
    /* NeMo hands overlap_p2p_comm to Megatron-Core's ModelParallelConfig,
     * whose default is False when the file leaves it out
     * (megatron_base_model.py@8e3d65dcfe build_model_parallel_config). */
    if (nemo_bool(n, m, "overlap_p2p_comm", &ov) < 0 ||
        nemo_set_b(n, TS_FI_OVERLAP_P2P_COMM, ov, m, "overlap_p2p_comm") != 0)
        return -1;
    if ((rc = nemo_int(n, m, "encoder_seq_length", 1, 16777216, &seq)) < 0)
        return -1;
    if (rc > 0 && nemo_set_i(n, TS_FI_SEQ, seq, m, "encoder_seq_length") != 0)
        return -1;
    if (rc == 0 && (rc = ts_import_sub(m, "data", &o, n->err)) != 0) {
        if (rc < 0 || (rc = nemo_int(n, &o, "seq_length", 1, 16777216, &seq)) < 0)
            return -1;
        if (rc > 0 && nemo_set_i(n, TS_FI_SEQ, seq, &o, "seq_length") != 0)
            return -1;
    }
    return 0;
}

/* activations_checkpoint_method with granularity full: NeMo hands it and
 * activations_checkpoint_num_layers to Megatron-Core as recompute_method
 * and recompute_num_layers (nemo/collections/nlp/models/language_modeling/
 * megatron_base_model.py@8cfedd72 557-559, 585-587): block N is
 * recompute_layers N (ts_megatron.c, layout_recompute_method); uniform
 * recomputes every layer, as full recompute models it. */
static int recompute_method(nemo *n, const ts_import_obj *m, const char *method)
{
    int64_t num = 0;
    int rc;

    if (strcmp(method, "uniform") == 0) {
        ts_import_note(n->im->notes,
                       NEMO_PTR "/model: activations_checkpoint_method uniform recomputes "
                                "every layer, storing one input per "
                                "activations_checkpoint_num_layers layers; modelled as full "
                                "recompute of every layer, one input stored per layer");
        return 0;
    }
    if (strcmp(method, "block") != 0) {
        ts_api_err_set(n->err, TS_PROB_INVALID_VALUE,
                       NEMO_PTR "/model/activations_checkpoint_method",
                       "activations_checkpoint_method takes uniform or block, got '%.*s'",
                       ts_utf8_prec(method, 40), method);
        return -1;
    }
    if ((rc = nemo_int(n, m, "activations_checkpoint_num_layers", 0, 1048576, &num)) <= 0)
        return rc;
    if (num == 0) {
        /* The block loop checkpoints no layer. */
        if (nemo_set_s(n, TS_FI_RECOMPUTE, "none", m, "activations_checkpoint_num_layers") != 0)
            return -1;
        ts_import_note(n->im->notes, NEMO_PTR "/model: activations_checkpoint_method block with "
                                              "activations_checkpoint_num_layers 0 recomputes "
                                              "no layer (recompute none)");
        return 0;
    }
    if (nemo_set_i(n, TS_FI_RECOMPUTE_LAYERS, num, m, "activations_checkpoint_num_layers") != 0)
        return -1;
    ts_import_note(n->im->notes,
                   NEMO_PTR "/model: activations_checkpoint_method block with "
                            "activations_checkpoint_num_layers %lld: the first %lld layers of "
                            "each pipeline stage (of each virtual stage with interleaving) are "
                            "recomputed, the others keep their activations (recompute_layers "
                            "%lld)",
                   (long long)num, (long long)num, (long long)num);
    return 0;
}

/* activations_checkpoint_granularity (none when absent) and _method. */
static int recompute(nemo *n, const ts_import_obj *m)
{
    const char *gran = NULL, *method = NULL;

    if (nemo_str(n, m, "activations_checkpoint_granularity", &gran) < 0 ||
        nemo_str(n, m, "activations_checkpoint_method", &method) < 0)
        return -1;
    if (gran == NULL) {
        if (nemo_set_s(n, TS_FI_RECOMPUTE, "none", m, "activations_checkpoint_granularity") != 0)
            return -1;
        if (method != NULL)
            ts_import_note(n->im->notes,
                           NEMO_PTR "/model/activations_checkpoint_method is "
                                    "read only with activations_checkpoint_granularity full: no "
                                    "recompute");
        return 0;
    }
    if (strcmp(gran, "full") != 0 && strcmp(gran, "selective") != 0) {
        ts_api_err_set(n->err, TS_PROB_INVALID_VALUE,
                       NEMO_PTR "/model/activations_checkpoint_granularity",
                       "activations_checkpoint_granularity takes full or selective, got "
                       "'%.*s'",
                       ts_utf8_prec(gran, 40), gran);
        return -1;
    }
    if (nemo_set_s(n, TS_FI_RECOMPUTE, gran, m, "activations_checkpoint_granularity") != 0)
        return -1;
    return strcmp(gran, "full") == 0 && method != NULL ? recompute_method(n, m, method) : 0;
}

/* fsdp: NeMo's FSDP strategies as ZeRO stages: full (params, grads,
 * optimizer state: ZeRO 3), hybrid (full within a node), grad (grads and
 * optimizer state: ZeRO 2). */
static int fsdp_stage(nemo *n, const ts_import_obj *m)
{
    const char *st = "full";
    int64_t stage;

    if (nemo_str(n, m, "fsdp_sharding_strategy", &st) < 0)
        return -1;
    stage = strcmp(st, "grad") == 0 ? 2 : 3;
    if (strcmp(st, "hybrid") == 0)
        ts_import_note(n->im->notes,
                       NEMO_PTR "/model/fsdp_sharding_strategy hybrid "
                                "shards within a node only: modelled as ZeRO 3 over all dp ranks "
                                "(a lower bound on memory)");
    return nemo_set_i(n, TS_FI_ZERO, stage, m, "fsdp");
}

/* The distributed optimizers' data-parallel overlap: overlap_grad_sync /
 * overlap_param_sync, with the defaults each optimizer has when the keys
 * are absent.  mcore_distributed_optim: Megatron-Core's DDP config with
 * overlap_grad_reduce = optim.get('overlap_grad_sync', False) and
 * overlap_param_gather = optim.get('overlap_param_sync', False) (NVIDIA/
 * NeMo nlp/models/language_modeling/megatron_gpt_model.py);
 * distributed_fused_adam: apex's DistributedFusedAdam, overlap_grad_sync
 * True and overlap_param_sync False (apex/contrib/optimizers/
 * distributed_fused_adam.py@d571f3ee).  NeMo refuses the parameter sync
 * without the gradient's ("Must use overlap_param_sync together with
 * overlap_grad_sync"). */
static int optim_overlap(nemo *n, const ts_import_obj *o, bool mcore)
{
    bool g = !mcore, p = false;
    int rg, rp;

    if ((rg = nemo_bool(n, o, "overlap_grad_sync", &g)) < 0 ||
        (rp = nemo_bool(n, o, "overlap_param_sync", &p)) < 0)
        return -1;
    if (p && !g) {
        char ptr[TS_IMPORT_ORIGIN_LEN];

        ts_import_ptr(ptr, sizeof ptr, o, "overlap_param_sync");
        ts_api_err_set(n->err, TS_PROB_INCOMPATIBLE_OPTIONS, ptr,
                       "%s needs overlap_grad_sync (NeMo: \"Must use overlap_param_sync together "
                       "with overlap_grad_sync\")",
                       ptr);
        return -1;
    }
    if (nemo_set_b(n, TS_FI_OVERLAP_GRAD_REDUCE, g, o, rg > 0 ? "overlap_grad_sync" : "name") !=
            0 ||
        nemo_set_b(n, TS_FI_OVERLAP_PARAM_GATHER, p, o, rp > 0 ? "overlap_param_sync" : "name") !=
            0)
        return -1;
    if (rg == 0 || rp == 0)
        ts_import_note(n->im->notes,
                       "%s: %s without both overlap keys: %s's defaults fill in (gradient reduce "
                       "%s, parameter gather %s)",
                       o->base, mcore ? "mcore_distributed_optim" : "distributed_fused_adam",
                       mcore ? "Megatron-Core's DDP config" : "apex DistributedFusedAdam",
                       g ? "overlapped" : "not overlapped", p ? "overlapped" : "not overlapped");
    return 0;
}

/* optim.name: the distributed optimizers shard optimizer state and fp32
 * main weights over dp (ZeRO 1); fused_adam does not. */
static int optim_name(nemo *n, const ts_import_obj *m)
{
    const char *name = NULL;
    ts_import_obj o;
    bool dist, plain;
    int rc;

    if ((rc = ts_import_sub(m, "optim", &o, n->err)) <= 0)
        return rc;
    if (nemo_str(n, &o, "name", &name) < 0)
        return -1;
    if (name == NULL)
        return 0;
    dist =
        strcmp(name, "distributed_fused_adam") == 0 || strcmp(name, "mcore_distributed_optim") == 0;
    plain = strcmp(name, "fused_adam") == 0 || strcmp(name, "adam") == 0 ||
            strcmp(name, "adamw") == 0 || strcmp(name, "megatron_fused_adam") == 0;
    if (!dist && !plain) {
        ts_import_note(n->im->notes,
                       NEMO_PTR "/model/optim/name \"%.*s\" has no "
                                "state model here: optimizer and zero keep their request or "
                                "default values",
                       ts_utf8_prec(name, 40), name);
        return 0;
    }
    if (nemo_set_i(n, TS_FI_ZERO, dist ? 1 : 0, &o, "name") != 0 ||
        nemo_set_s(n, TS_FI_OPTIMIZER, "adamw", &o, "name") != 0)
        return -1;
    return dist ? optim_overlap(n, &o, strcmp(name, "mcore_distributed_optim") == 0) : 0;
}

/* activation_func_fp8_input_store: Megatron-Core's MLP keeps the SwiGLU
 * input in FP8 for backward (MLPerf's FP8_ACTIVATION).  Under NeMo's FSDP
 * trainsize costs torch FSDP's framework, whose MLP is not Megatron's:
 * noted, not sent. */
static int act_fp8_store(nemo *n, const ts_import_obj *m, bool fsdp)
{
    bool on = false;

    if (nemo_bool(n, m, "activation_func_fp8_input_store", &on) < 0)
        return -1;
    if (!on)
        return 0;
    if (fsdp) {
        ts_import_note(n->im->notes,
                       "%s/activation_func_fp8_input_store with fsdp: not modelled under the "
                       "fsdp framework (the SwiGLU input is costed in bf16)",
                       m->base);
        return 0;
    }
    return nemo_set_b(n, TS_FI_ACT_FP8_INPUT_STORE, true, m, "activation_func_fp8_input_store");
}

/* ub_tp_comm_overlap: Transformer Engine userbuffers.  NeMo turns it off
 * without sequence parallelism (which it turns off at tensor parallel 1)
 * and under FSDP, with a log line, and trains on
 * (megatron_base_model.py@8e3d65dcfe 955-960, 1002-1017): so does the
 * import, with a note. */
static int tp_overlap(nemo *n, const ts_import_obj *m, bool fsdp)
{
    bool ub = false, sp = false;
    int64_t tp = 1;

    if (nemo_bool(n, m, "ub_tp_comm_overlap", &ub) < 0)
        return -1;
    if (!ub)
        return 0;
    if (nemo_bool(n, m, "sequence_parallel", &sp) < 0 ||
        nemo_int(n, m, "tensor_model_parallel_size", 1, 1048576, &tp) < 0)
        return -1;
    if (sp && tp > 1 && !fsdp)
        return nemo_set_b(n, TS_FI_TP_COMM_OVERLAP, true, m, "ub_tp_comm_overlap");
    ts_import_note(n->im->notes,
                   NEMO_PTR "/model/ub_tp_comm_overlap true: NeMo sets it to False %s, as "
                            "trainsize does",
                   fsdp ? "under fsdp" : "without sequence parallelism (or at tensor parallel 1)");
    return 0;
}

/* cpu_offloading: Megatron-Core's CPU activation offload, whose keys NeMo
 * hands to its TransformerConfig as they are (cpu_offloading,
 * cpu_offloading_num_layers, cpu_offloading_activations,
 * cpu_offloading_weights: megatron/core/model_parallel_config.py@d98e8a64
 * 458-475, activations on and weights off by default).  Activations are
 * modelled (offload_activation_layers); weight offloading moves the
 * copies TE saves for backward, not the parameters, and is noted. */
static int cpu_offload(nemo *n, const ts_import_obj *m)
{
    bool on = false, acts = true, weights = false;
    int64_t num = 0;

    if (nemo_bool(n, m, "cpu_offloading", &on) < 0)
        return -1;
    if (!on)
        return 0;
    if (nemo_bool(n, m, "cpu_offloading_activations", &acts) < 0 ||
        nemo_bool(n, m, "cpu_offloading_weights", &weights) < 0 ||
        nemo_int(n, m, "cpu_offloading_num_layers", 0, 1048576, &num) < 0)
        return -1;
    if (weights)
        ts_import_note(n->im->notes,
                       NEMO_PTR "/model/cpu_offloading_weights true: not modelled (Transformer "
                                "Engine moves the weight copies saved for backward; the "
                                "parameters stay on the GPU)");
    if (!acts || num == 0) {
        ts_import_note(n->im->notes,
                       NEMO_PTR "/model/cpu_offloading true offloads no activations (%s)",
                       !acts ? "cpu_offloading_activations false" : "cpu_offloading_num_layers 0");
        return 0;
    }
    return nemo_set_i(n, TS_FI_OFFLOAD_ACTIVATION_LAYERS, num, m, "cpu_offloading_num_layers");
}

int nemo_layout(nemo *n, const ts_import_obj *m)
{
    bool fp8 = false, fsdp = false, flash = false;

    if (seq_and_pipeline(n, m) != 0 || recompute(n, m) != 0 || cpu_offload(n, m) != 0)
        return -1;
    if (nemo_bool(n, m, "fp8", &fp8) < 0)
        return -1;
    if (fp8 && nemo_set_s(n, TS_FI_COMPUTE_PRECISION, "fp8", m, "fp8") != 0)
        return -1;
    if (nemo_bool(n, m, "use_flash_attention", &flash) < 0)
        return -1;
    if (flash && nemo_set_s(n, TS_FI_ATTENTION, "flash", m, "use_flash_attention") != 0)
        return -1;
    if (nemo_bool(n, m, "fsdp", &fsdp) < 0 || act_fp8_store(n, m, fsdp) != 0 ||
        tp_overlap(n, m, fsdp) != 0)
        return -1;
    return fsdp ? fsdp_stage(n, m) : optim_name(n, m);
}
