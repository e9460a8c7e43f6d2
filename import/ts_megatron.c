/*
 * ts_megatron.c    - Megatron-LM arguments ("megatron_args"): a launch
 * script as users keep it, an args.txt, or a pasted command line.  This
 * file maps the flags read to request members (layout, precision) and is
 * the entry point; the flags table and the scan of a command are in
 * ts_megatron_flags.c, the model shape (vocabulary, --moe-layer-freq) in
 * ts_megatron_shape.c, the launcher's GPU count in ts_megatron_launch.c,
 * their shared types in ts_megatron_int.h.
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
 *   - interleaved pipeline p2p runs under compute unless
 *     --no-overlap-p2p-communication (the request's overlap_p2p_comm
 *     default; releases before 4eeff55d1f, Oct 2023, overlapped only with
 *     --overlap-p2p-communication, and a text cannot tell its release);
 *   - --multi-latent-attention: kv-lora-rank 32, qk-head-dim 128,
 *     qk-pos-emb-head-dim 64, v-head-dim 128 by default, no q compression;
 *   - hidden/attention dropout default to 0.1.
 * Model-shape defaults are applied only when the text defines a model
 * (--num-layers) and no hf_config gives it, so a parallelism-only text
 * can sit on a preset and explicit flags can adjust an imported shape.
 * Every flag that is not mapped is reported in a note, never dropped
 * silently; a value that is not what the flag takes is a 400.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ts_megatron_int.h"

int mega_set_i(ts_import *im, ts_field_id fi, int64_t v, mega_id id, ts_api_err *err)
{
    char origin[TS_IMPORT_ORIGIN_LEN];

    snprintf(origin, sizeof origin, MEGA_PTR " (--%s)", mega_flags[id].name);
    return ts_import_set_int(im, fi, v, TS_SRC_MEGATRON, origin, err);
}

int mega_set_b(ts_import *im, ts_field_id fi, bool v, const char *why, ts_api_err *err)
{
    char origin[TS_IMPORT_ORIGIN_LEN];

    snprintf(origin, sizeof origin, MEGA_PTR " (%s)", why);
    return ts_import_set_bool(im, fi, v, TS_SRC_MEGATRON, origin, err);
}

int mega_set_s(ts_import *im, ts_field_id fi, const char *v, const char *why, ts_api_err *err)
{
    char origin[TS_IMPORT_ORIGIN_LEN];

    snprintf(origin, sizeof origin, MEGA_PTR " (%s)", why);
    return ts_import_set_str(im, fi, v, TS_SRC_MEGATRON, origin, err);
}

/* Integer flags that map one to one. */
static int emit_direct(ts_import *im, const mega_val *v, ts_api_err *err)
{
    static const struct {
        mega_id id;
        ts_field_id fi;
    } direct[] = {
        { M_NUM_LAYERS, TS_FI_LAYERS },
        { M_HIDDEN, TS_FI_HIDDEN },
        { M_HEADS, TS_FI_HEADS },
        { M_SEQ, TS_FI_SEQ },
        { M_MICRO, TS_FI_MICRO_BATCH },
        { M_GLOBAL, TS_FI_GLOBAL_BATCH },
        { M_TP, TS_FI_TP },
        { M_PP, TS_FI_PP },
        { M_CP, TS_FI_CP },
        { M_EP, TS_FI_EP },
        { M_EXPERTS, TS_FI_EXPERTS },
        { M_TOPK, TS_FI_TOP_K },
        { M_MOE_FFN, TS_FI_MOE_FFN },
        { M_FIRST, TS_FI_FIRST_STAGE_LAYERS },
        { M_LAST, TS_FI_LAST_STAGE_LAYERS },
        { M_CPU_OFFLOAD, TS_FI_OFFLOAD_ACTIVATION_LAYERS },
    };
    size_t k;

    for (k = 0; k < sizeof direct / sizeof direct[0]; k++)
        if (v[direct[k].id].set &&
            mega_set_i(im, direct[k].fi, v[direct[k].id].i, direct[k].id, err) != 0)
            return -1;
    return 0;
}

/* Megatron-DeepSpeed (--deepspeed): DeepSpeed's engine owns the
 * optimizer and runs the ZeRO stage of the --deepspeed_config file
 * (zero_optimization.stage); --zero-stage is Megatron-DeepSpeed's copy of
 * it (megatron/arguments.py _add_zero_args, default 1), which its example
 * scripts keep equal to the file's.  A deepspeed_config sent with the
 * request is that file: its stage stands.  Without --no-pipeline-parallel
 * the model is a PipelineModule (pretrain_gpt.py model_provider), whose
 * engine asserts ZeRO below 2 (deepspeed/runtime/pipe/engine.py). */
static int layout_ds_zero(ts_import *im, const mega_val *v, ts_api_notes *notes, ts_api_err *err)
{
    bool from_ds = ts_import_from(im, TS_FI_ZERO, TS_SRC_DS);
    int64_t stage = from_ds               ? (int64_t)json_integer_value(im->vals[TS_FI_ZERO])
                    : v[M_ZERO_STAGE].set ? v[M_ZERO_STAGE].i
                                          : 1;

    if (!from_ds && v[M_ZERO_STAGE].unknown != NULL) {
        char why[TS_API_NOTE_LEN];

        ts_shell_why_text(v[M_ZERO_STAGE].unknown, why, sizeof why);
        ts_api_err_set(err, TS_PROB_INVALID_VALUE, MEGA_PTR,
                       "megatron_args line %u: --zero-stage needs %s (or send deepspeed_config)",
                       v[M_ZERO_STAGE].line, why);
        return -1;
    }

    if (v[M_DIST_OPT].set || v[M_MFSDP].set || v[M_TFSDP].set)
        ts_import_note(notes, "megatron_args: --use-distributed-optimizer, --use-megatron-fsdp "
                              "and --use-torch-fsdp2 are ignored under --deepspeed (DeepSpeed's "
                              "ZeRO shards)");
    if (stage >= 2 && !v[M_NO_PP].set) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, MEGA_PTR,
                       "megatron_args: --deepspeed without --no-pipeline-parallel runs DeepSpeed's "
                       "pipeline engine, which refuses ZeRO stage %lld (2 and 3 are incompatible "
                       "with pipeline parallelism); add --no-pipeline-parallel",
                       (long long)stage);
        return -1;
    }
    if (from_ds) {
        if (v[M_ZERO_STAGE].set && v[M_ZERO_STAGE].unknown == NULL && v[M_ZERO_STAGE].i != stage)
            ts_import_note_about(notes, TS_FI_ZERO, TS_SRC_DS,
                                 "megatron_args: --zero-stage %lld differs from the "
                                 "deepspeed_config's stage %lld, which DeepSpeed runs",
                                 (long long)v[M_ZERO_STAGE].i, (long long)stage);
        return 0;
    }
    if (mega_set_i(im, TS_FI_ZERO, stage, v[M_ZERO_STAGE].set ? M_ZERO_STAGE : M_DEEPSPEED, err) !=
        0)
        return -1;
    ts_import_note_about(
        notes, TS_FI_ZERO, TS_SRC_MEGATRON,
        "megatron_args: ZeRO stage %lld from %s; DeepSpeed runs the stage of "
        "the --deepspeed_config file%s%s%s (send it as deepspeed_config to read it)",
        (long long)stage, v[M_ZERO_STAGE].set ? "--zero-stage" : "Megatron-DeepSpeed's default",
        v[M_DS_CONFIG].set ? " (" : "", v[M_DS_CONFIG].set ? v[M_DS_CONFIG].s : "",
        v[M_DS_CONFIG].set ? ")" : "");
    return 0;
}

/* s (a buffer of size bytes, at most TS_API_DETAIL_LEN) becomes the
 * printf head + s + tail, s cut on a UTF-8 boundary to fit; left as it is
 * when head and tail alone do not fit. */
static void text_wrap(char *s, size_t size, const char *tail, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void text_wrap(char *s, size_t size, const char *tail, const char *fmt, ...)
{
    char buf[TS_API_DETAIL_LEN];
    size_t t = strlen(tail), m;
    va_list ap;
    int n;

    if (size > sizeof buf)
        return;
    va_start(ap, fmt);
    n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n + t >= size)
        return;
    m = ts_utf8_copy(buf + n, size - (size_t)n - t, s);
    memcpy(buf + (size_t)n + m, tail, t + 1);
    memcpy(s, buf, (size_t)n + m + t + 1);
}

/* What a --deepspeed_config heredoc set is the request's deepspeed_config
 * in all but name: the origins and the notes it left say where it came
 * from (an error or a later check then names /megatron_args). */
static void ds_heredoc_relabel(ts_import *im, size_t notes0, unsigned line)
{
    size_t k;

    for (k = 0; k < TS_FI_COUNT; k++)
        if (im->vals[k] != NULL && im->src[k] == TS_SRC_DS)
            text_wrap(im->origin[k], sizeof im->origin[k], ")",
                      MEGA_PTR " (the --deepspeed_config heredoc, line %u: ", line);
    if (im->gas_src == TS_SRC_DS)
        snprintf(im->gas_origin, sizeof im->gas_origin,
                 MEGA_PTR
                 " (the --deepspeed_config heredoc's gradient_accumulation_steps, line %u)",
                 line);
    for (k = notes0; k < im->notes->n; k++)
        text_wrap(im->notes->text[k], sizeof im->notes->text[k], "",
                  "megatron_args, the --deepspeed_config heredoc at line %u: ", line);
}

/* A path as written, without leading "./" (./ds_config.json is the
 * file ds_config.json names). */
static const char *path_plain(const char *p)
{
    while (p[0] == '.' && p[1] == '/')
        p += 2;
    return p;
}

/* Megatron-DeepSpeed's example scripts write the --deepspeed_config file
 * from a heredoc before the launch (cat <<EOT > $DS_CONFIG,
 * examples_deepspeed/azure/run-benchmark-model.sh): that text, as bash
 * expands it, is the file DeepSpeed reads, so it is read as a
 * deepspeed_config sent with the request would be, unless one is (the
 * request's wins: it is the file as the user has it, and a note says so).
 * A text with a part not known here (a variable the script never sets)
 * or not a JSON object once expanded is named in a note and not read. */
static int ds_heredoc(ts_import *im, const ts_shell_cmd *cmd, const mega_val *cfg, ts_api_err *err)
{
    const ts_shell_file *f = NULL;
    int pw = ts_utf8_prec(cfg->s, 64);
    json_error_t je;
    json_t *doc;
    size_t k, notes0;

    if (cfg->unknown != NULL)
        return 0;
    for (k = 0; k < cmd->nfiles; k++)
        if (cmd->files[k].path.why == TS_SHELL_KNOWN &&
            strcmp(path_plain(cmd->files[k].path.text), path_plain(cfg->s)) == 0)
            f = &cmd->files[k];
    if (f == NULL)
        return 0;
    if (ts_import_from(im, TS_FI_FRAMEWORK, TS_SRC_DS)) {
        ts_import_note(im->notes,
                       "megatron_args: the request's deepspeed_config is read, not the "
                       "--deepspeed_config file %.*s the heredoc at line %u writes",
                       pw, cfg->s, f->text.line);
        return 0;
    }
    if (f->text.why != TS_SHELL_KNOWN) {
        char why[160];

        ts_shell_why_text(&f->text, why, sizeof why);
        ts_import_note(im->notes,
                       "megatron_args: the --deepspeed_config file %.*s is the heredoc at line "
                       "%u, which uses %s: not read (send the file as deepspeed_config)",
                       pw, cfg->s, f->text.line, why);
        return 0;
    }
    doc = json_loads(f->text.text, JSON_DECODE_INT_AS_REAL | JSON_REJECT_DUPLICATES, &je);
    if (doc == NULL && json_error_code(&je) == json_error_out_of_memory) {
        ts_api_err_set(err, TS_PROB_OUT_OF_MEMORY, NULL, "out of memory reading megatron_args");
        return -1;
    }
    if (doc == NULL) {
        ts_utf8_drop_cut(je.text);
        ts_import_note(im->notes,
                       "megatron_args: the --deepspeed_config file %.*s, the heredoc at line %u, "
                       "is not a JSON object once expanded (%s, at its line %d): not read",
                       pw, cfg->s, f->text.line, je.text, je.line);
        return 0;
    }
    if (!json_is_object(doc)) {
        ts_import_note(im->notes,
                       "megatron_args: the --deepspeed_config file %.*s, the heredoc at line %u, "
                       "is not a JSON object once expanded (%s): not read",
                       pw, cfg->s, f->text.line, json_is_array(doc) ? "an array" : "a scalar");
        json_decref(doc);
        return 0;
    }
    notes0 = im->notes->n;
    ts_import_note(im->notes, "read as deepspeed_config (the file %.*s)", pw, cfg->s);
    if (ts_import_ds(im, doc, err) != 0) {
        json_decref(doc);
        if (err->status < 500 && err->field[0] != '\0') {
            text_wrap(err->detail, sizeof err->detail, "",
                      "the --deepspeed_config heredoc at line %u, %s: ", f->text.line, err->field);
            snprintf(err->field, sizeof err->field, MEGA_PTR);
        }
        return -1;
    }
    json_decref(doc);
    ds_heredoc_relabel(im, notes0, f->text.line);
    return 0;
}

/* Sharding over data-parallel ranks as a ZeRO stage: Megatron-FSDP by
 * --data-parallel-sharding-strategy, default optim_grads_params
 * (arguments.py @d98e8a6), torch FSDP2 everything; else
 * --use-distributed-optimizer (stage 1) or none.  As ZeRO stages:
 * optimizer state 1, + grads 2, + parameters 3. */
static int layout_sharding(ts_import *im, const mega_val *v, ts_api_notes *notes, ts_api_err *err)
{
    static const char *const strat[] = { "no_shard", "optim", "optim_grads", "optim_grads_params" };
    const char *st;
    int64_t stage;

    if (v[M_DEEPSPEED].set)
        return layout_ds_zero(im, v, notes, err);
    if (v[M_ZERO_STAGE].set || v[M_DS_CONFIG].set || v[M_DS_ACT_CKPT].set || v[M_NO_PP].set)
        ts_import_note(notes, "megatron_args: --zero-stage, --deepspeed_config, "
                              "--deepspeed-activation-checkpointing and --no-pipeline-parallel "
                              "are Megatron-DeepSpeed's, read only with --deepspeed");
    if (!v[M_MFSDP].set && !v[M_TFSDP].set) {
        if (mega_set_i(im, TS_FI_ZERO, v[M_DIST_OPT].set ? 1 : 0, M_DIST_OPT, err) != 0)
            return -1;
        if (v[M_SHARDING].set)
            ts_import_note(notes, "megatron_args: --data-parallel-sharding-strategy is read "
                                  "only with --use-megatron-fsdp; ignored");
        return 0;
    }
    st = v[M_MFSDP].set && v[M_SHARDING].set ? v[M_SHARDING].s : "optim_grads_params";
    for (stage = 0; stage < 4 && strcmp(strat[stage], st) != 0; stage++)
        ;
    if (stage == 4)
        return mega_bad_value(err, "data-parallel-sharding-strategy",
                              "no_shard, optim, optim_grads or optim_grads_params", st);
    if (mega_set_i(im, TS_FI_ZERO, stage, v[M_SHARDING].set ? M_SHARDING : M_MFSDP, err) != 0)
        return -1;
    ts_import_note_about(notes, TS_FI_ZERO, TS_SRC_MEGATRON,
                         "megatron_args: %s with %s shards over data-parallel ranks as "
                         "ZeRO stage %lld does (zero %lld)",
                         v[M_MFSDP].set ? "--use-megatron-fsdp" : "--use-torch-fsdp2", st,
                         (long long)stage, (long long)stage);
    return 0;
}

/* --checkpoint-activations / --activations-checkpoint-method, the flags
 * before --recompute-granularity: full recompute. */
static int layout_old_recompute(ts_import *im, const mega_val *v, ts_api_notes *notes,
                                ts_api_err *err)
{
    const char *flag =
        v[M_CKPT_ACT].set ? "--checkpoint-activations" : "--activations-checkpoint-method";

    if ((!v[M_CKPT_ACT].set && !v[M_CKPT_METHOD].set) || v[M_RC_GRAN].set || v[M_RC_ACT].set)
        return 0;
    if (v[M_CKPT_METHOD].set && strcmp(v[M_CKPT_METHOD].s, "uniform") != 0 &&
        strcmp(v[M_CKPT_METHOD].s, "block") != 0)
        return mega_bad_value(err, "activations-checkpoint-method", "uniform or block",
                              v[M_CKPT_METHOD].s);
    if (mega_set_s(im, TS_FI_RECOMPUTE, "full", flag, err) != 0)
        return -1;
    ts_import_note(notes,
                   "megatron_args: %s is the older Megatron's full recompute "
                   "(today --recompute-granularity full)",
                   flag);
    return 0;
}

/* Virtual pipeline stages per rank: given, or L / pp / N from
 * --num-layers-per-virtual-pipeline-stage N; interleaved past 1. */
static int layout_vpp(ts_import *im, const mega_val *v, ts_api_err *err)
{
    int64_t vpp;

    if (!v[M_VPP_LAYERS].set && !v[M_VPP_STAGES].set)
        return 0;
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
    if (mega_set_i(im, TS_FI_VPP, vpp, v[M_VPP_STAGES].set ? M_VPP_STAGES : M_VPP_LAYERS, err) !=
            0 ||
        mega_set_s(im, TS_FI_PP_SCHEDULE, vpp > 1 ? "interleaved" : "1f1b",
                   "--num-layers-per-virtual-pipeline-stage", err) != 0)
        return -1;
    return 0;
}

/* --recompute-method with full recompute: block N is recompute_layers N
 * (each TransformerBlock, one per virtual stage, checkpoints its first N
 * layers: megatron/core/recompute.py@d98e8a64 167-181; block 0
 * checkpoints none); uniform recomputes every layer, one input stored
 * per N (157-166), which full recompute of every layer models. */
static int layout_recompute_method(ts_import *im, const mega_val *v, ts_api_notes *notes,
                                   ts_api_err *err)
{
    const char *m = v[M_RC_METHOD].s;
    long long n = v[M_RC_LAYERS].set ? (long long)v[M_RC_LAYERS].i : 0;

    if (!v[M_RC_METHOD].set)
        return 0;
    if (strcmp(m, "block") != 0 && strcmp(m, "uniform") != 0)
        return mega_bad_value(err, "recompute-method", "uniform or block", m);
    if (strcmp(m, "uniform") == 0) {
        ts_import_note(notes,
                       "megatron_args: --recompute-method uniform recomputes every layer, "
                       "storing one input per %lld layers; modelled as full recompute of "
                       "every layer, one input stored per layer",
                       n > 0 ? n : 1LL);
        return 0;
    }
    if (!v[M_RC_LAYERS].set)
        return 0;
    if (n == 0) {
        /* The block loop checkpoints no layer: nothing is recomputed. */
        if (mega_set_s(im, TS_FI_RECOMPUTE, "none", "--recompute-num-layers", err) != 0)
            return -1;
        ts_import_note(notes, "megatron_args: --recompute-method block with "
                              "--recompute-num-layers 0 recomputes no layer (recompute none)");
        return 0;
    }
    if (mega_set_i(im, TS_FI_RECOMPUTE_LAYERS, (int64_t)n, M_RC_LAYERS, err) != 0)
        return -1;
    ts_import_note(notes,
                   "megatron_args: --recompute-method block --recompute-num-layers %lld: the "
                   "first %lld layers of each pipeline stage (of each virtual stage with "
                   "interleaving) are recomputed, the others keep their activations "
                   "(recompute_layers %lld)",
                   n, n, n);
    return 0;
}

/* --recompute-activations (selective), --recompute-granularity. */
static int layout_recompute(ts_import *im, const mega_val *v, ts_api_notes *notes, ts_api_err *err)
{
    const char *g = v[M_RC_GRAN].s;

    if (v[M_RC_ACT].set && !v[M_RC_GRAN].set &&
        mega_set_s(im, TS_FI_RECOMPUTE, "selective", "--recompute-activations", err) != 0)
        return -1;
    if (!v[M_RC_GRAN].set)
        return 0;
    if (strcmp(g, "full") != 0 && strcmp(g, "selective") != 0)
        return mega_bad_value(err, "recompute-granularity", "full or selective", g);
    if (mega_set_s(im, TS_FI_RECOMPUTE, g, "--recompute-granularity", err) != 0)
        return -1;
    return strcmp(g, "full") == 0 ? layout_recompute_method(im, v, notes, err) : 0;
}

/* Megatron's data-parallel overlap is opt-in (megatron/training/
 * arguments.py@d98e8a64 3121, 3148: store_true; --overlap-grad-reduce
 * since 2d5220a424, 2023-08, --overlap-param-gather since f048bf8c08,
 * 2023-11): a script without the flags waits for the gradient reduce
 * after backward and the parameter gather after the step.  Before them
 * --DDP-impl chose the data-parallel wrapper: local (the default) reduced
 * after forward_backward_func, torch is PyTorch DDP, whose buckets
 * reduce under backward (megatron/training.py@fda81a212b train_step).
 * Megatron asserts --overlap-param-gather with --overlap-grad-reduce and
 * a sharded optimizer (1024-1029).  Megatron-FSDP and torch FSDP2 run
 * their own overlap, and Megatron-DeepSpeed's engine is not Megatron's
 * DDP: the flags are not theirs. */
static int emit_dp_overlap(ts_import *im, const mega_val *v, ts_api_notes *notes, ts_api_err *err)
{
    bool torch_ddp = v[M_DDP_IMPL].set && strcmp(v[M_DDP_IMPL].s, "torch") == 0;
    bool g = v[M_OVERLAP_GRAD].set || torch_ddp, p = v[M_OVERLAP_PARAM].set;
    bool dist = v[M_DIST_OPT].set, both;

    if (v[M_DEEPSPEED].set || v[M_MFSDP].set || v[M_TFSDP].set) {
        if (v[M_OVERLAP_GRAD].set || v[M_OVERLAP_PARAM].set)
            ts_import_note(notes,
                           "megatron_args: --overlap-grad-reduce / --overlap-param-gather "
                           "are Megatron DDP's; %s schedules its own collectives",
                           v[M_DEEPSPEED].set ? "DeepSpeed's engine"
                           : v[M_MFSDP].set   ? "Megatron-FSDP"
                                              : "torch FSDP2");
        return 0;
    }
    if (p && (!v[M_OVERLAP_GRAD].set || !dist)) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, MEGA_PTR,
                       "megatron_args: --overlap-param-gather needs %s (Megatron asserts it)",
                       !v[M_OVERLAP_GRAD].set ? "--overlap-grad-reduce"
                                              : "--use-distributed-optimizer or "
                                                "--use-megatron-fsdp");
        return -1;
    }
    if (mega_set_b(im, TS_FI_OVERLAP_GRAD_REDUCE, g,
                   v[M_OVERLAP_GRAD].set ? "--overlap-grad-reduce"
                   : torch_ddp           ? "--DDP-impl torch: PyTorch DDP reduces under backward"
                                         : "no --overlap-grad-reduce: Megatron-LM's default",
                   err) != 0 ||
        mega_set_b(im, TS_FI_OVERLAP_PARAM_GATHER, p,
                   p ? "--overlap-param-gather"
                     : "no --overlap-param-gather: Megatron-LM's default",
                   err) != 0)
        return -1;
    /* Without the distributed optimizer there is no parameter gather. */
    both = !g && dist && !p;
    if (!g || (dist && !p))
        ts_import_note_about(notes, !g ? TS_FI_OVERLAP_GRAD_REDUCE : TS_FI_OVERLAP_PARAM_GATHER,
                             TS_SRC_MEGATRON,
                             "megatron_args: no %s (Megatron-LM's default), so nothing hides the "
                             "data-parallel %s (Megatron-Bridge and NeMo recipes set the flags)",
                             both ? "--overlap-grad-reduce or --overlap-param-gather"
                             : !g ? "--overlap-grad-reduce"
                                  : "--overlap-param-gather",
                             both ? "gradient reduce and parameter gather"
                             : !g ? "gradient reduce"
                                  : "parameter gather");
    return 0;
}

/* Attention.  Megatron-LM: --use-flash-attn (FlashAttention 2), else the
 * request's default.  Megatron-DeepSpeed (megatron/model/transformer.py
 * ParallelAttention): --use-flash-attn-v2 is FlashAttention 2,
 * --use-flash-attn / -v1 FlashAttention 1 and --use-flash-attn-triton
 * flash-attn's Triton kernel (checked first, as the forward does), both
 * costed at FlashAttention 1's rate (attention "triton", half FlashAttention
 * 2's: Dao 2023); with none of them CoreAttention materialises the scores
 * under the fused softmax (attention "eager"). */
static int emit_attention(ts_import *im, const mega_val *v, ts_api_notes *notes, ts_api_err *err)
{
    const char *att = "eager", *flag = "--deepspeed without --use-flash-attn-*", *why;

    if (!v[M_DEEPSPEED].set) {
        if (v[M_FLASH_V1].set || v[M_FLASH_V2].set || v[M_FLASH_TRITON].set ||
            v[M_FLASH_BUILDER].set)
            ts_import_note(notes, "megatron_args: --use-flash-attn-v1/-v2/-triton/-builder are "
                                  "Megatron-DeepSpeed's flags, read only with --deepspeed");
        return v[M_FLASH].set ? mega_set_s(im, TS_FI_ATTENTION, "flash", "--use-flash-attn", err)
                              : 0;
    }
    if (v[M_FLASH_TRITON].set) {
        att = "triton";
        flag = "--use-flash-attn-triton";
        why = "megatron_args: --use-flash-attn-triton is costed at FlashAttention 1's rate, half "
              "FlashAttention 2's (attention \"triton\")";
    } else if (v[M_FLASH_V2].set) {
        att = "flash";
        flag = "--use-flash-attn-v2";
        why = NULL;
    } else if (v[M_FLASH].set || v[M_FLASH_V1].set) {
        att = "triton";
        flag = "--use-flash-attn-v1";
        why = "megatron_args: --use-flash-attn (FlashAttention 1 under Megatron-DeepSpeed) is "
              "costed at FlashAttention 1's rate, half FlashAttention 2's (attention \"triton\")";
    } else if (v[M_FLASH_BUILDER].set) {
        att = "flash";
        flag = "--use-flash-attn-builder";
        why = "megatron_args: --use-flash-attn-builder (DeepSpeed's FlashAttention op builder) is "
              "costed as FlashAttention 2 (attention \"flash\")";
    } else {
        why = "megatron_args: Megatron-DeepSpeed without --use-flash-attn-* computes attention "
              "over materialised scores with the fused softmax (attention \"eager\")";
    }
    if (why != NULL)
        ts_import_note_about(notes, TS_FI_ATTENTION, TS_SRC_MEGATRON, "%s", why);
    return mega_set_s(im, TS_FI_ATTENTION, att, flag, err);
}

static int emit_layout(ts_import *im, const mega_val *v, ts_api_notes *notes, ts_api_err *err)
{
    if (v[M_SP].set &&
        mega_set_b(im, TS_FI_SEQUENCE_PARALLEL, true, "--sequence-parallel", err) != 0)
        return -1;
    if (layout_sharding(im, v, notes, err) != 0 || layout_old_recompute(im, v, notes, err) != 0 ||
        layout_vpp(im, v, err) != 0 || layout_recompute(im, v, notes, err) != 0)
        return -1;
    if (emit_attention(im, v, notes, err) != 0)
        return -1;
    /* megatron/arguments.py _add_activation_checkpoint_args: it picks
     * DeepSpeed's checkpointing for the recompute the other flags ask. */
    if (v[M_DS_ACT_CKPT].set && v[M_DEEPSPEED].set)
        ts_import_note_about(notes, TS_FI_RECOMPUTE, TS_SRC_MEGATRON,
                             "megatron_args: --deepspeed-activation-checkpointing runs the "
                             "recompute --checkpoint-activations / --recompute-granularity ask "
                             "for with DeepSpeed's checkpointing; alone it recomputes nothing");
    if (v[M_NO_PP].set && v[M_PP].set && v[M_PP].i > 1) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, MEGA_PTR,
                       "megatron_args gives --no-pipeline-parallel with "
                       "--pipeline-model-parallel-size %lld (Megatron-DeepSpeed asserts 1)",
                       (long long)v[M_PP].i);
        return -1;
    }
    /* Pipeline p2p under compute with interleaving: opt-in
     * --overlap-p2p-communication from NVIDIA/Megatron-LM@f9283c5a8a, the
     * default with an opt-out since @4eeff55d1f (arguments.py). */
    if (v[M_OVERLAP_P2P].set && v[M_NO_OVERLAP_P2P].set) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, MEGA_PTR,
                       "megatron_args gives both --overlap-p2p-communication and "
                       "--no-overlap-p2p-communication");
        return -1;
    }
    if (v[M_OVERLAP_P2P].set &&
        mega_set_b(im, TS_FI_OVERLAP_P2P_COMM, true, "--overlap-p2p-communication", err) != 0)
        return -1;
    if (v[M_NO_OVERLAP_P2P].set &&
        mega_set_b(im, TS_FI_OVERLAP_P2P_COMM, false, "--no-overlap-p2p-communication", err) != 0)
        return -1;
    /* Transformer Engine userbuffers (megatron/training/arguments.py
     * --tp-comm-overlap); Megatron asserts sequence parallelism for it,
     * and so does the plan routes' run check (a 400); search and budget
     * set it per layout with tp > 1. */
    if (v[M_TP_OVERLAP].set &&
        mega_set_b(im, TS_FI_TP_COMM_OVERLAP, true, "--tp-comm-overlap", err) != 0)
        return -1;
    return emit_dp_overlap(im, v, notes, err);
}

/* --fp8-param-gather: Megatron-Core builds the weights as FP8 tensors
 * (fp8_param, megatron/training/argument_utils.py@d98e8a64 312) and
 * all-gathers them in FP8; it needs --fp8-format ("fp8_param must be
 * used together with fp8 mode", transformer_config.py@d98e8a64 1566) and
 * a sharded optimizer or FSDP (arguments.py@d98e8a64 1095-1097), and
 * torch FSDP2 under Transformer Engine 2.0 or later turns it off (1051-
 * 1056, not known here: noted).  1: the weights are FP8. */
static int fp8_params(const mega_val *v, ts_api_notes *notes, ts_api_err *err)
{
    if (!v[M_FP8_PARAM].set)
        return 0;
    if (v[M_TFSDP].set) {
        ts_import_note_about(notes, TS_FI_PRECISION, TS_SRC_MEGATRON,
                             "megatron_args: --fp8-param-gather under --use-torch-fsdp2: Megatron "
                             "turns it off with Transformer Engine 2.0 or later, so the weights "
                             "are costed 16-bit");
        return 0;
    }
    if (!v[M_FP8].set) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, MEGA_PTR,
                       "megatron_args: --fp8-param-gather needs --fp8-format (Megatron-Core: "
                       "\"fp8_param must be used together with fp8 mode\")");
        return -1;
    }
    if (!v[M_DIST_OPT].set && !v[M_MFSDP].set && !v[M_TFSDP].set) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, MEGA_PTR,
                       "megatron_args: --fp8-param-gather needs --use-distributed-optimizer, "
                       "--use-megatron-fsdp or --use-torch-fsdp2 (Megatron asserts it)");
        return -1;
    }
    return 1;
}

static int emit_precision(ts_import *im, const mega_val *v, ts_api_notes *notes, ts_api_err *err)
{
    int f8;

    if (v[M_BF16].set && v[M_FP16].set) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, MEGA_PTR,
                       "megatron_args gives both --bf16 and --fp16");
        return -1;
    }
    if ((f8 = fp8_params(v, notes, err)) < 0)
        return -1;
    if (mega_set_s(im, TS_FI_PRECISION,
                   f8              ? "fp8"
                   : v[M_BF16].set ? "bf16"
                   : v[M_FP16].set ? "fp16"
                                   : "fp32",
                   f8              ? "--fp8-param-gather"
                   : v[M_BF16].set ? "--bf16"
                   : v[M_FP16].set ? "--fp16"
                                   : "no --bf16/--fp16: Megatron trains in fp32",
                   err) != 0)
        return -1;
    if (!v[M_BF16].set && !v[M_FP16].set)
        ts_import_note_about(notes, TS_FI_PRECISION, TS_SRC_MEGATRON,
                             "megatron_args: no --bf16 or --fp16, so Megatron "
                             "trains in fp32 (precision \"fp32\")");
    if (v[M_FP8].set) {
        if (strcmp(v[M_FP8].s, "e4m3") != 0 && strcmp(v[M_FP8].s, "hybrid") != 0)
            return mega_bad_value(err, "fp8-format", "e4m3 or hybrid", v[M_FP8].s);
        if (mega_set_s(im, TS_FI_COMPUTE_PRECISION, "fp8", "--fp8-format", err) != 0)
            return -1;
    }
    if (v[M_OPTIMIZER].set) {
        const char *o = v[M_OPTIMIZER].s;

        /* Megatron's "adam" is torch AdamW (decoupled weight decay). */
        if (strcmp(o, "adam") == 0) {
            if (mega_set_s(im, TS_FI_OPTIMIZER, "adamw", "--optimizer", err) != 0)
                return -1;
        } else if (strcmp(o, "sgd") == 0) {
            if (mega_set_s(im, TS_FI_OPTIMIZER, "sgd_momentum", "--optimizer", err) != 0)
                return -1;
        } else {
            return mega_bad_value(err, "optimizer", "adam or sgd", o);
        }
    }
    /* Training length: iterations x global batch x sequence. */
    if ((v[M_TRAIN_ITERS].set || v[M_TRAIN_SAMPLES].set) && v[M_SEQ].set) {
        double tokens = v[M_TRAIN_SAMPLES].set ? (double)v[M_TRAIN_SAMPLES].i * (double)v[M_SEQ].i
                        : v[M_GLOBAL].set ? (double)v[M_TRAIN_ITERS].i * (double)v[M_GLOBAL].i *
                                                (double)v[M_SEQ].i
                                          : 0.0;

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
    ts_shell_cmd cmd;
    bool hf = ts_import_from(im, TS_FI_LAYERS, TS_SRC_HF);
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
        for (k = 0;
             k < len && (args[k] == ' ' || args[k] == '\t' || args[k] == '\n' || args[k] == '\r');
             k++)
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
    if (mega_scan(im, &cmd, vals, im->notes, err) != 0)
        goto out;
    /* The heredoc's config first, as a request's deepspeed_config is read
     * before megatron_args. */
    if (vals[M_DEEPSPEED].set && vals[M_DS_CONFIG].set &&
        ds_heredoc(im, &cmd, &vals[M_DS_CONFIG], err) != 0)
        goto out;
    if (mega_set_s(im, TS_FI_FRAMEWORK, vals[M_DEEPSPEED].set ? "deepspeed" : "megatron",
                   vals[M_DEEPSPEED].set ? "--deepspeed: Megatron-DeepSpeed" : "Megatron-LM",
                   err) != 0 ||
        emit_direct(im, vals, err) != 0 || mega_emit_shape(im, vals, hf, im->notes, err) != 0 ||
        emit_layout(im, vals, im->notes, err) != 0 ||
        emit_precision(im, vals, im->notes, err) != 0 ||
        mega_emit_gpus(im, &cmd, im->notes, err) != 0)
        goto out;
    rc = 0;
out:
    ts_shell_free(&cmd);
    return rc;
}
