/*
 * ts_llamafactory.c - a LLaMA-Factory training YAML ("llamafactory_config")
 *                     -> run.
 *
 * LLaMA-Factory (hiyouga/LLaMA-Factory, read at ff6d4d12) trains a
 * transformers (+ PEFT) model with the HF Trainer: `llamafactory-cli
 * train config.yaml` reads the YAML with OmegaConf.load
 * (src/llamafactory/hparams/parser.py read_args) into its argument
 * dataclasses.  The text is read as import/ts_yaml.c reads YAML 1.1 and
 * mapped with the typed getters, so an error names
 * /llamafactory_config/<key>.
 *
 * What a key left out means is the dataclass default, which is what the
 * run uses, so it is sent with the config's own pointer as origin:
 * finetuning_type lora (FinetuningArguments) with lora_rank 8 on
 * lora_target "all"; cutoff_len 2048 (DataArguments); gradient
 * checkpointing on unless disable_gradient_checkpointing
 * (ModelArguments; model/model_utils/checkpointing.py
 * prepare_model_for_training), reentrant unless use_reentrant_gc is
 * false; per_device_train_batch_size 8 and gradient_accumulation_steps 1
 * (transformers' TrainingArguments).
 *
 * Dtypes (model/adapter.py init_adapter): the model loads in its
 * checkpoint's dtype and the trainable parameters are cast to fp32
 * unless pure_bf16 (or DeepSpeed ZeRO-3, whose fp32 partitions are the
 * master): with bf16/fp16 autocast that is trainsize's master copy under
 * hf, the default.  pure_bf16 trains bf16 parameters with no autocast, so
 * nothing upcasts them under FSDP either: no master copy, and a full
 * fine-tune's torch AdamW moments in bf16 (ts_import_settle).
 *
 * Methods trainsize does not model are a 400 at their key: the freeze
 * and OFT fine-tuning types, DoRA, the rm/ppo/dpo/kto stages (a value
 * head, reference or reward models), GaLore, APOLLO, BAdam, Adam-mini,
 * Muon, LLaMA Pro, mixture-of-depths, KTransformers, the Megatron Core,
 * Megatron Bridge and HyperParallel backends, and v1 configs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_catalogue.h"
#include "ts_import.h"

#define LF_PTR "/llamafactory_config"

#include "ts_yaml.h"

/* A string key whose value must be one of a list; 1 present, 0 absent. */
static int lf_pick(const ts_import_obj *o, const char *key, const char *const *allowed,
                   const char *what, const char **out, ts_api_err *err)
{
    const char *s = NULL;
    char ptr[TS_IMPORT_ORIGIN_LEN];
    size_t i;
    int rc;

    *out = NULL;
    if ((rc = ts_import_str(o, key, false, &s, err)) <= 0)
        return rc;
    for (i = 0; allowed[i] != NULL; i++) {
        if (strcmp(s, allowed[i]) == 0) {
            *out = allowed[i];
            return 1;
        }
    }
    ts_import_ptr(ptr, sizeof ptr, o, key);
    ts_api_err_set(err, TS_PROB_INVALID_VALUE, ptr, "%s \"%.*s\" is not one of LLaMA-Factory's %s",
                   key, ts_utf8_prec(s, 40), s, what);
    return -1;
}

/* Methods with states or models trainsize does not model: true is a 400. */
static int lf_refused(const ts_import_obj *o, ts_api_err *err)
{
    static const struct {
        const char *key, *what;
    } keys[] = {
        { "use_dora", "DoRA's magnitude vectors and weight norms" },
        { "use_galore", "GaLore's projected optimizer states" },
        { "use_apollo", "APOLLO's projected optimizer states" },
        { "use_badam", "BAdam's block-wise updates" },
        { "use_adam_mini", "Adam-mini's shared second moments" },
        { "use_muon", "Muon's optimizer states" },
        { "use_llama_pro", "LLaMA Pro's expanded blocks" },
        { "use_kt", "KTransformers' CPU experts" },
        { "use_mca", "the Megatron Core backend's layouts" },
        { "use_megatron_bridge", "the Megatron Bridge backend's layouts" },
        { "use_hyper_parallel", "the HyperParallel backend's layouts" },
    };
    const json_t *mod = json_object_get(o->obj, "mixture_of_depths");
    size_t i;

    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char ptr[TS_IMPORT_ORIGIN_LEN];
        bool b = false;

        if (ts_import_bool(o, keys[i].key, &b, err) < 0)
            return -1;
        if (!b)
            continue;
        ts_import_ptr(ptr, sizeof ptr, o, keys[i].key);
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, ptr,
                       "%s: %s are not modelled; LoRA, QLoRA and full fine-tuning with "
                       "the HF Trainer's optimizers are",
                       keys[i].key, keys[i].what);
        return -1;
    }
    /* LLaMA-Factory's v1 configs (examples/v1/: model, micro_batch_size,
     * dist_config) are another schema, not read here. */
    if (json_object_get(o->obj, "model_name_or_path") == NULL &&
        (json_object_get(o->obj, "model") != NULL ||
         json_object_get(o->obj, "dist_config") != NULL)) {
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG,
                       json_object_get(o->obj, "model") != NULL ? LF_PTR "/model"
                                                                : LF_PTR "/dist_config",
                       "a LLaMA-Factory v1 config (model, dist_config, micro_batch_size) is not "
                       "read; the llamafactory-cli train YAML (model_name_or_path, ...) is");
        return -1;
    }
    if (mod != NULL && !json_is_null(mod)) {
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, LF_PTR "/mixture_of_depths",
                       "mixture_of_depths: routed layers are not modelled");
        return -1;
    }
    return 0;
}

/* stage: sft (default) and pt train one model as trainsize estimates it;
 * rm adds a value head, ppo, dpo and kto hold reference or reward models
 * beside the policy (src/llamafactory/train/<stage>/workflow.py). */
static int lf_stage(const ts_import_obj *o, bool *pretrain, ts_api_err *err)
{
    static const char *const stages[] = { "sft", "pt", "rm", "ppo", "dpo", "kto", NULL };
    const char *st = NULL;

    *pretrain = false;
    if (lf_pick(o, "stage", stages, "stages (sft, pt, rm, ppo, dpo, kto)", &st, err) < 0)
        return -1;
    if (st != NULL && strcmp(st, "sft") != 0 && strcmp(st, "pt") != 0) {
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, LF_PTR "/stage",
                       "stage %s holds reward, reference or value models beside the policy, "
                       "which are not modelled; sft and pt are",
                       st);
        return -1;
    }
    *pretrain = st != NULL && strcmp(st, "pt") == 0;
    return 0;
}

/* A list of module names as LLaMA-Factory's split_arg takes it
 * (hparams/finetuning_args.py: a string split on commas, or a list):
 * joined by commas into buf.  1 present, 0 absent, -1 error (a 400 at
 * the key: not a string or list of strings, or longer than buf). */
static int lf_names(const ts_import_obj *o, const char *key, char *buf, size_t size,
                    ts_api_err *err)
{
    const json_t *v = json_object_get(o->obj, key);
    char ptr[TS_IMPORT_ORIGIN_LEN];
    size_t n, i, used = 0;

    buf[0] = '\0';
    if (v == NULL || json_is_null(v))
        return 0;
    ts_import_ptr(ptr, sizeof ptr, o, key);
    if (!json_is_string(v) && !json_is_array(v)) {
        ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr,
                       "%s must be module names joined by commas, or a list of them", key);
        return -1;
    }
    n = json_is_array(v) ? json_array_size(v) : 1;
    for (i = 0; i < n; i++) {
        const json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
        size_t len = json_string_length(item);

        if (!json_is_string(item) || memchr(json_string_value(item), '\0', len) != NULL) {
            ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr, "%s: a module name (a string) at %zu",
                           key, i);
            return -1;
        }
        if (used + (i > 0 ? 1 : 0) + len >= size) {
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, ptr,
                           "%s: more than %zu bytes of module names", key, size - 1);
            return -1;
        }
        if (i > 0)
            buf[used++] = ',';
        memcpy(buf + used, json_string_value(item), len);
        used += len;
        buf[used] = '\0';
    }
    return 1;
}

/* The item a parser refused (at, bl from ts_lora_*_parse), or the whole
 * text when it refused the whole (a mix), cut to 40 bytes for a message:
 * *n, its length. */
static const char *lf_bad_item(const char *s, size_t at, size_t bl, size_t *n)
{
    size_t len = strlen(s);
    const char *bad = at < len ? s + at : s;

    *n = at < len && bl > 0 ? bl : len;
    if (*n > 40)
        *n = 40;
    return bad;
}

/* lora_target: "all" (the default) is every linear but the output head
 * (model/model_utils/misc.py find_all_linear_modules, as PEFT's
 * all-linear), else module names. */
static int lf_lora_target(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    char s[256], text[160];
    unsigned set = 0;
    size_t at = 0, bl = 0, a = 0, b, n = 0;
    int rc;

    if ((rc = lf_names(o, "lora_target", s, sizeof s, err)) < 0)
        return -1;
    b = strlen(s);
    while (a < b && s[a] == ' ')
        a++;
    while (b > a && s[b - 1] == ' ')
        b--;
    if (rc == 0 || (b - a == 3 && memcmp(s + a, "all", 3) == 0))
        return ts_import_set_str(im, TS_FI_LORA_TARGETS, "all-linear", TS_SRC_LLAMAFACTORY,
                                 rc == 0 ? LF_PTR : LF_PTR "/lora_target", err);
    /* trainsize's own shorthands are not LLaMA-Factory's names */
    if (strstr(s, "all-linear") != NULL || strstr(s, "peft-default") != NULL ||
        ts_lora_targets_parse(s, strlen(s), &set, &at, &bl) != 0) {
        const char *bad = lf_bad_item(s, at, bl, &n);

        ts_api_err_set(err, TS_PROB_INVALID_VALUE, LF_PTR "/lora_target",
                       "lora_target: \"%.*s\" is not a module trainsize models; all, or q_proj, "
                       "k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, query_key_value "
                       "(query_key_value not with q/k/v_proj) are",
                       ts_utf8_prec(bad, n), bad);
        return -1;
    }
    ts_lora_targets_text(set, text, sizeof text);
    return ts_import_set_str(im, TS_FI_LORA_TARGETS, text, TS_SRC_LLAMAFACTORY,
                             LF_PTR "/lora_target", err);
}

/* additional_target: modules trained in full beside the adapters
 * (LoraConfig modules_to_save, model/adapter.py _setup_lora_tuning):
 * trainsize's lora_modules_to_save.  Without it, resize_vocab (new
 * tokens) makes the input and output embeddings those modules. */
static int lf_additional(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    char s[256], text[64];
    unsigned set = 0;
    size_t at = 0, bl = 0, n = 0;
    bool resize = false;
    int rc;

    if ((rc = lf_names(o, "additional_target", s, sizeof s, err)) < 0 ||
        ts_import_bool(o, "resize_vocab", &resize, err) < 0)
        return -1;
    if (rc == 0 && resize)
        return ts_import_set_str(im, TS_FI_LORA_SAVE, "embed_tokens,lm_head", TS_SRC_LLAMAFACTORY,
                                 LF_PTR "/resize_vocab", err);
    if (rc == 0)
        return 0;
    if (ts_lora_save_parse(s, strlen(s), &set, &at, &bl) != 0) {
        const char *bad = lf_bad_item(s, at, bl, &n);

        ts_api_err_set(err, TS_PROB_INVALID_VALUE, LF_PTR "/additional_target",
                       "additional_target: \"%.*s\" is not a module trainsize models; "
                       "embed_tokens and lm_head (embed_in, embed_out, word_embeddings, wte) are",
                       ts_utf8_prec(bad, n), bad);
        return -1;
    }
    ts_lora_save_text(set, text, sizeof text);
    return ts_import_set_str(im, TS_FI_LORA_SAVE, text, TS_SRC_LLAMAFACTORY,
                             LF_PTR "/additional_target", err);
}

/* quantization_bit quantizes the model on the fly
 * (model/model_utils/quantization.py configure_quantization): with
 * quantization_method bnb (the default) to 4 bits (nf4 or fp4, the same
 * bytes: 4 bits and an absmax a block of 64, the absmax itself 8-bit
 * with double_quantization, the default) or 8 (LLM.int8), both LoRA
 * only.  hqq and eetq quantize with their own kernels, not modelled: a
 * 400.  The other methods (gptq, awq, aqlm, ...) quantize nothing on the
 * fly: only a checkpoint already quantized with them is, whose
 * config.json says so (and then quantization_bit is ignored): a note. */
static int lf_quant(ts_import *im, const ts_import_obj *o, bool lora, ts_api_err *err)
{
    static const char *const methods[] = { "bnb",  "gptq", "awq",   "aqlm", "quanto",
                                           "eetq", "hqq",  "mxfp4", "fp8",  NULL };
    const char *method = NULL;
    bool dq = true;
    int64_t bits = 0;
    int rc;

    if ((rc = ts_import_int(o, "quantization_bit", 1, 64, false, &bits, err)) < 0 ||
        lf_pick(o, "quantization_method", methods, "quantization methods", &method, err) < 0 ||
        ts_import_bool(o, "double_quantization", &dq, err) < 0)
        return -1;
    if (rc == 0)
        return 0;
    if (method != NULL && (strcmp(method, "hqq") == 0 || strcmp(method, "eetq") == 0)) {
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, LF_PTR "/quantization_method",
                       "quantization_method %s: its on-the-fly quantization is not modelled; "
                       "bnb (4 or 8 bits) is",
                       method);
        return -1;
    }
    if (method != NULL && strcmp(method, "bnb") != 0) {
        ts_import_note(im->notes,
                       LF_PTR "/quantization_method %s quantizes nothing on the fly: only a "
                              "checkpoint already quantized with it is (its config.json's "
                              "quantization_config, which then overrides quantization_bit); "
                              "frozen_precision keeps its request or default value",
                       method);
        return 0;
    }
    if (!lora) {
        /* model/adapter.py init_adapter raises the same. */
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, LF_PTR "/quantization_bit",
                       "quantization_bit: a quantized model trains with LoRA only "
                       "(finetuning_type lora)");
        return -1;
    }
    if (bits != 4 && bits != 8) {
        ts_api_err_set(err, TS_PROB_INVALID_VALUE, LF_PTR "/quantization_bit",
                       "quantization_bit %lld: bitsandbytes quantizes to 4 or 8 bits",
                       (long long)bits);
        return -1;
    }
    if (bits == 4 && !dq)
        ts_import_note(im->notes, LF_PTR "/double_quantization false: each block's absmax stays "
                                         "fp32 (0.0625 B a parameter where nf4 counts 0.0159 for "
                                         "double-quantized ones)");
    if (bits == 8)
        snprintf(im->q8_origin, sizeof im->q8_origin, LF_PTR "/quantization_bit");
    return ts_import_set_str(im, TS_FI_FROZEN_PRECISION, bits == 4 ? "nf4" : "int8",
                             TS_SRC_LLAMAFACTORY, LF_PTR "/quantization_bit", err);
}

/* finetuning_type (default lora) and what it brings. */
static int lf_method(ts_import *im, const ts_import_obj *o, bool *lora, ts_api_err *err)
{
    static const char *const types[] = { "lora", "oft", "freeze", "full", NULL };
    const char *t = NULL;
    int64_t r = 8;
    int rc;

    if (lf_pick(o, "finetuning_type", types, "finetuning types (lora, oft, freeze, full)", &t,
                err) < 0)
        return -1;
    if (t != NULL && (strcmp(t, "oft") == 0 || strcmp(t, "freeze") == 0)) {
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, LF_PTR "/finetuning_type",
                       "finetuning_type %s is not modelled (%s); lora and full are", t,
                       strcmp(t, "oft") == 0 ? "orthogonal adapters"
                                             : "a few trained layers on a frozen model");
        return -1;
    }
    *lora = t == NULL || strcmp(t, "lora") == 0;
    if (!*lora)
        return 0;
    if ((rc = ts_import_int(o, "lora_rank", 1, 1048576, false, &r, err)) < 0)
        return -1;
    if (ts_import_set_int(im, TS_FI_LORA_RANK, r, TS_SRC_LLAMAFACTORY,
                          rc > 0 ? LF_PTR "/lora_rank" : LF_PTR, err) != 0 ||
        lf_lora_target(im, o, err) != 0 || lf_additional(im, o, err) != 0)
        return -1;
    {
        /* lora_dropout: PEFT's nn.Dropout(p) needs 0 <= p < 1, the
         * registry's range (checked naming this key); default 0. */
        const json_t *v = json_object_get(o->obj, "lora_dropout");

        if (v == NULL || json_is_null(v))
            return ts_import_set(im, TS_FI_LORA_DROPOUT, json_real(0.0), TS_SRC_LLAMAFACTORY,
                                 LF_PTR, err);
        if (!json_is_number(v)) {
            ts_api_err_set(err, TS_PROB_INVALID_TYPE, LF_PTR "/lora_dropout",
                           "lora_dropout must be a number");
            return -1;
        }
        return ts_import_set(im, TS_FI_LORA_DROPOUT, json_real(json_number_value(v)),
                             TS_SRC_LLAMAFACTORY, LF_PTR "/lora_dropout", err);
    }
}

/* bf16 / fp16 / pure_bf16: the precision (hparams/parser.py: bf16 or
 * pure_bf16 make the compute dtype bf16, else fp16).  With none of them
 * there is no autocast: a full fine-tune's parameters, cast to fp32, run
 * in fp32 (precision fp32); LoRA's frozen base keeps its checkpoint's
 * dtype, which the config does not say (a note).
 * pure_bf16 records the 16-bit rule for ts_import_settle: no master
 * copy, and a full fine-tune's moments bf16 with torch's AdamW or Lion
 * (the Trainer's default optim is torch's AdamW).  Under the Trainer's
 * own fsdp option without bf16 accelerate runs FSDP with no mixed
 * precision and upcasts nothing (*unmixed, which lf_map makes
 * d16_any_zero with lf_parallel's answer); with bf16 it upcasts; an accelerate config's FSDP (the request's zero) has
 * mixed_precision bf16 in LLaMA-Factory's examples
 * (examples/accelerate/fsdp_config.yaml), and accelerate upcasts the
 * trained parameters to fp32 there: the master copy stays. */
static int lf_precision(ts_import *im, const ts_import_obj *o, bool lora, const char *opt,
                        bool *unmixed, ts_api_err *err)
{
    bool bf16 = false, fp16 = false, pure = false, fp8 = false;

    *unmixed = false;
    if (ts_import_bool(o, "bf16", &bf16, err) < 0 || ts_import_bool(o, "fp16", &fp16, err) < 0 ||
        ts_import_bool(o, "pure_bf16", &pure, err) < 0 || ts_import_bool(o, "fp8", &fp8, err) < 0)
        return -1;
    if ((bf16 || pure) && fp16) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, LF_PTR "/fp16",
                       "llamafactory_config enables both %s and fp16", pure ? "pure_bf16" : "bf16");
        return -1;
    }
    if (fp8)
        ts_import_note(im->notes, LF_PTR "/fp8: accelerate's FP8 matmuls (torchao or Transformer "
                                         "Engine) are not modelled for framework hf; estimated "
                                         "in bf16");
    if (!bf16 && !fp16 && !pure) {
        if (!lora)
            return ts_import_set_str(im, TS_FI_PRECISION, "fp32", TS_SRC_LLAMAFACTORY, LF_PTR, err);
        ts_import_note(im->notes, LF_PTR ": neither bf16, fp16 nor pure_bf16: without autocast "
                                         "the frozen base keeps its checkpoint's dtype, which "
                                         "the config does not say; precision keeps its request "
                                         "or default value");
        return 0;
    }
    if (ts_import_set_str(im, TS_FI_PRECISION, fp16 ? "fp16" : "bf16", TS_SRC_LLAMAFACTORY,
                          fp16   ? LF_PTR "/fp16"
                          : pure ? LF_PTR "/pure_bf16"
                                 : LF_PTR "/bf16",
                          err) != 0)
        return -1;
    /* pure_bf16 keeps the trained parameters bf16 (adapter.py); bf16
     * beside it adds autocast, which makes no fp32 copy, but also turns
     * accelerate's mixed precision on, whose FSDP upcasts them. */
    if (!pure)
        return 0;
    *unmixed = !bf16;
    /* One rule a request: this config's, not an earlier one's. */
    im->d16_full = im->d16_embed_fp32 = im->d16_any_zero = false;
    im->d16_no_ds3 = true;
    im->d16_opt_origin[0] = '\0';
    snprintf(im->d16, sizeof im->d16, "bf16");
    im->d16_src = TS_SRC_LLAMAFACTORY;
    im->d16_base = LF_PTR;
    snprintf(im->d16_origin, sizeof im->d16_origin, LF_PTR "/pure_bf16");
    if (!lora && (opt == NULL || ts_import_hf_optim_torch(opt))) {
        im->d16_full = true;
        snprintf(im->d16_opt_origin, sizeof im->d16_opt_origin, "%s",
                 opt != NULL ? LF_PTR "/optim" : LF_PTR "/pure_bf16");
    }
    return 0;
}

/* The Trainer's fsdp option as transformers' TrainingArguments
 * __post_init__ reads it: true is full_shard, false off; otherwise words
 * split on whitespace (a string) or a list of them (FSDPOption).
 * *zero: full_shard and hybrid_shard 3, shard_grad_op and
 * hybrid_shard_zero2 2, no_shard 0; on with no strategy named is
 * accelerate's default, FULL_SHARD (3); -1 off.  Two strategies are a
 * 400, as transformers refuses full_shard with shard_grad_op. */
static int lf_fsdp_words(const json_t *v, int *zero, bool *offload, bool *hybrid, ts_api_err *err)
{
    static const struct {
        const char *word;
        int zero; /* -1: not a strategy */
        bool hybrid;
    } words[] = {
        { "full_shard", 3, false },  { "shard_grad_op", 2, false },
        { "hybrid_shard", 3, true }, { "hybrid_shard_zero2", 2, true },
        { "no_shard", 0, false },    { "offload", -1, false },
        { "auto_wrap", -1, false },
    };
    size_t n = json_is_array(v) ? json_array_size(v) : 1, i, named = 0, any = 0;

    *zero = -1;
    if (json_is_boolean(v)) {
        *zero = json_is_true(v) ? 3 : -1;
        return 0;
    }
    for (i = 0; i < n; i++) {
        const json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
        const char *s = json_string_value(item);
        size_t at = 0, len;

        if (s == NULL || memchr(s, '\0', json_string_length(item)) != NULL) {
            ts_api_err_set(err, TS_PROB_INVALID_TYPE, LF_PTR "/fsdp",
                           "fsdp must be true/false or FSDP options (full_shard, shard_grad_op, "
                           "hybrid_shard, hybrid_shard_zero2, no_shard, offload, auto_wrap) as a "
                           "string or a list");
            return -1;
        }
        len = strlen(s);
        while (at < len) {
            size_t b, k;
            bool found = false;

            while (at < len && strchr(" \t\r\n", s[at]) != NULL)
                at++;
            for (b = at; b < len && strchr(" \t\r\n", s[b]) == NULL; b++)
                ;
            for (k = 0; k < sizeof words / sizeof words[0] && b > at; k++) {
                if (strlen(words[k].word) != b - at || memcmp(s + at, words[k].word, b - at) != 0)
                    continue;
                found = true;
                any++;
                if (words[k].zero >= 0 && named++ > 0) {
                    ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, LF_PTR "/fsdp",
                                   "fsdp names two sharding strategies");
                    return -1;
                }
                if (words[k].zero >= 0)
                    *zero = words[k].zero;
                *hybrid = *hybrid || words[k].hybrid;
                *offload = *offload || strcmp(words[k].word, "offload") == 0;
            }
            if (!found && b > at) {
                ts_api_err_set(err, TS_PROB_INVALID_VALUE, LF_PTR "/fsdp",
                               "fsdp: \"%.*s\" is not an FSDP option (full_shard, "
                               "shard_grad_op, hybrid_shard, hybrid_shard_zero2, no_shard, "
                               "offload, auto_wrap)",
                               ts_utf8_prec(s + at, b - at < 40 ? b - at : 40), s + at);
                return -1;
            }
            at = b;
        }
    }
    if (any > 0 && *zero < 0)
        *zero = 3;
    return 0;
}

/* deepspeed (a path), or the Trainer's fsdp option, else DDP.
 * LLaMA-Factory's own FSDP examples set FSDP in an accelerate config the
 * YAML does not name (examples/accelerate/fsdp_config.yaml): the
 * request's zero says it then. */
static int lf_parallel(ts_import *im, const ts_import_obj *o, bool *named, ts_api_err *err)
{
    const char *ds = NULL;
    const json_t *fsdp = json_object_get(o->obj, "fsdp");
    bool offload = false, hybrid = false;
    int zero = -1;

    *named = false;
    if (ts_import_str(o, "deepspeed", false, &ds, err) < 0)
        return -1;
    if (fsdp != NULL && !json_is_null(fsdp) &&
        lf_fsdp_words(fsdp, &zero, &offload, &hybrid, err) != 0)
        return -1;
    if (ds != NULL && ds[0] != '\0') {
        if (zero >= 0) {
            ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, LF_PTR "/fsdp",
                           "llamafactory_config names both deepspeed and fsdp");
            return -1;
        }
        ts_import_note(im->notes,
                       LF_PTR "/deepspeed \"%.*s\" is a path: send that file's JSON as "
                              "deepspeed_config",
                       ts_utf8_prec(ds, 80), ds);
        return ts_import_set_str(im, TS_FI_FRAMEWORK, "deepspeed", TS_SRC_LLAMAFACTORY,
                                 LF_PTR "/deepspeed", err);
    }
    *named = zero >= 0;
    if (zero < 0)
        zero = 0; /* the Trainer's DDP */
    if (hybrid)
        ts_import_note(im->notes, LF_PTR "/fsdp: hybrid sharding shards within a node and "
                                         "replicates across nodes; trainsize shards over every "
                                         "data-parallel rank");
    if (ts_import_set_str(im, TS_FI_FRAMEWORK, "hf", TS_SRC_LLAMAFACTORY,
                          *named ? LF_PTR "/fsdp" : LF_PTR, err) != 0 ||
        ts_import_set_int(im, TS_FI_ZERO, zero, TS_SRC_LLAMAFACTORY,
                          *named ? LF_PTR "/fsdp" : LF_PTR, err) != 0)
        return -1;
    if (offload && (ts_import_set_bool(im, TS_FI_OFFLOAD_PARAMS, true, TS_SRC_LLAMAFACTORY,
                                       LF_PTR "/fsdp", err) != 0 ||
                    ts_import_set_bool(im, TS_FI_OFFLOAD_OPTIMIZER, true, TS_SRC_LLAMAFACTORY,
                                       LF_PTR "/fsdp", err) != 0))
        return -1;
    return 0;
}

/* flash_attn (model/model_utils/attention.py configure_attn_implementation):
 * sdpa is transformers' sdpa, fa2 and fa3 flash, disabled eager.  auto (the
 * default) leaves transformers' sdpa to most models but picks a flash
 * kernel for the windowed ones it names (FlashAttention-3 for gpt-oss,
 * fa2 for Gemma 2): flash, which costs the same as sdpa without a window.
 * None keeps a score matrix but eager. */
static int lf_attention(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    static const char *const impls[] = { "auto", "disabled", "sdpa", "fa2", "fa3", NULL };
    const char *a = NULL;
    int rc;

    if ((rc = lf_pick(o, "flash_attn", impls, "flash_attn values (auto, disabled, sdpa, fa2, fa3)",
                      &a, err)) < 0)
        return -1;
    return ts_import_set_str(im, TS_FI_ATTENTION,
                             a != NULL && strcmp(a, "sdpa") == 0       ? "sdpa"
                             : a != NULL && strcmp(a, "disabled") == 0 ? "eager"
                                                                       : "flash",
                             TS_SRC_LLAMAFACTORY, rc > 0 ? LF_PTR "/flash_attn" : LF_PTR, err);
}

/* Gradient checkpointing, on unless disable_gradient_checkpointing;
 * use_reentrant_gc (default true) picks torch.utils.checkpoint's mode. */
static int lf_checkpointing(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    bool off = false, reentrant = true, unsloth = false;
    int rc_off, rc_re;

    if ((rc_off = ts_import_bool(o, "disable_gradient_checkpointing", &off, err)) < 0 ||
        (rc_re = ts_import_bool(o, "use_reentrant_gc", &reentrant, err)) < 0 ||
        ts_import_bool(o, "use_unsloth_gc", &unsloth, err) < 0)
        return -1;
    if (ts_import_set_str(im, TS_FI_RECOMPUTE, off ? "none" : "full", TS_SRC_LLAMAFACTORY,
                          rc_off > 0 ? LF_PTR "/disable_gradient_checkpointing" : LF_PTR, err) != 0)
        return -1;
    if (off)
        return 0;
    if (unsloth)
        ts_import_note(im->notes, LF_PTR "/use_unsloth_gc: unsloth's checkpointing offloads "
                                         "each layer's input to host memory, which trainsize "
                                         "keeps on the GPU (an over-estimate)");
    return ts_import_set_str(im, TS_FI_RECOMPUTE_IMPL, reentrant ? "reentrant" : "non_reentrant",
                             TS_SRC_LLAMAFACTORY, rc_re > 0 ? LF_PTR "/use_reentrant_gc" : LF_PTR,
                             err);
}

/* enable_liger_kernel (model/model_utils/liger_kernel.py
 * apply_liger_kernel): Liger's RMSNorm, RoPE and SwiGLU, and for sft and
 * pt its fused linear cross-entropy, which keeps no logits (a note:
 * trainsize's loss phase still counts them).  Under DeepSpeed, where
 * liger_kernels is not an input, ts_import_settle costs the layers
 * as fused.
 * torch_compile (the Trainer's) fuses the elementwise ops too; otherwise
 * transformers' modules run eager, sent so that a DeepSpeed config keeps
 * it. */
static int lf_kernels(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    bool liger = false, compile = false, unsloth = false;
    int rc;

    if (ts_import_bool(o, "enable_liger_kernel", &liger, err) < 0 ||
        (rc = ts_import_bool(o, "torch_compile", &compile, err)) < 0 ||
        ts_import_bool(o, "use_unsloth", &unsloth, err) < 0)
        return -1;
    if (unsloth)
        ts_import_note(im->notes, LF_PTR "/use_unsloth: unsloth's kernels and its own "
                                         "checkpointing are not modelled; estimated as "
                                         "transformers with PEFT");
    if (liger) {
        ts_import_note(im->notes, LF_PTR "/enable_liger_kernel: the fused linear cross-entropy "
                                         "never holds the logits, which trainsize's loss phase "
                                         "still counts (an over-estimate of the loss peak)");
        /* Under a final framework other than hf, ts_import_settle. */
        return ts_import_set_bool(im, TS_FI_LIGER_KERNELS, true, TS_SRC_LLAMAFACTORY,
                                  LF_PTR "/enable_liger_kernel", err);
    }
    return ts_import_set_str(im, TS_FI_LAYER_IMPL, compile ? "fused" : "eager", TS_SRC_LLAMAFACTORY,
                             rc > 0 ? LF_PTR "/torch_compile" : LF_PTR, err);
}

/* Batch and length: cutoff_len (default 2048), per_device_train_batch_size
 * (default 8), gradient_accumulation_steps (default 1; global batch =
 * micro x steps x dp once dp is known).  Without packing (the default
 * for sft, on for pt) the SFT collator pads each batch to its longest
 * sample (data/collator.py, pad_to_multiple_of 8): a note, as for
 * axolotl. */
static int lf_batch(ts_import *im, const ts_import_obj *o, bool pretrain, ts_api_err *err)
{
    int64_t seq = 2048, micro = 8, gas = 1;
    bool pack = pretrain, neat = false;
    int rc_s, rc_m, rc_g, rc_p;

    if ((rc_s = ts_import_int(o, "cutoff_len", 1, INT64_C(1) << 24, false, &seq, err)) < 0 ||
        (rc_m = ts_import_int(o, "per_device_train_batch_size", 1, 1048576, false, &micro, err)) <
            0 ||
        (rc_g = ts_import_int(o, "gradient_accumulation_steps", 1, 1048576, false, &gas, err)) <
            0 ||
        (rc_p = ts_import_bool(o, "packing", &pack, err)) < 0 ||
        ts_import_bool(o, "neat_packing", &neat, err) < 0)
        return -1;
    if (rc_p == 0)
        pack = pretrain;
    if (ts_import_set_int(im, TS_FI_SEQ, seq, TS_SRC_LLAMAFACTORY,
                          rc_s > 0 ? LF_PTR "/cutoff_len" : LF_PTR, err) != 0 ||
        ts_import_set_int(im, TS_FI_MICRO_BATCH, micro, TS_SRC_LLAMAFACTORY,
                          rc_m > 0 ? LF_PTR "/per_device_train_batch_size" : LF_PTR, err) != 0)
        return -1;
    im->ds_gas = gas;
    im->gas_src = TS_SRC_LLAMAFACTORY;
    snprintf(im->gas_origin, sizeof im->gas_origin, "%s",
             rc_g > 0 ? LF_PTR "/gradient_accumulation_steps" : LF_PTR);
    /* max_steps (TrainingArguments; default -1, off): the run's length. */
    {
        int64_t steps = 0;
        const json_t *v = json_object_get(o->obj, "max_steps");

        /* -1 and 0 are "not set" (the Trainer takes max_steps > 0) */
        if (!(json_is_number(v) && json_number_value(v) <= 0) &&
            ts_import_int(o, "max_steps", 1, INT64_C(1) << 40, false, &steps, err) < 0)
            return -1;
        if (steps > 0) {
            im->max_steps = steps;
            im->steps_src = TS_SRC_LLAMAFACTORY;
            snprintf(im->steps_origin, sizeof im->steps_origin, LF_PTR "/max_steps");
        }
    }
    if (!pack && !neat)
        ts_import_note(im->notes,
                       LF_PTR "/cutoff_len: without packing LLaMA-Factory pads each batch to its "
                              "longest sample, so every figure is that of the longest batch "
                              "(cutoff_len tokens a sample): the peak, and an upper bound on "
                              "step time");
    return 0;
}

static int lf_map(ts_import *im, const json_t *cfg, ts_api_err *err)
{
    ts_import_obj o = { cfg, LF_PTR };
    const char *model = NULL, *opt = NULL;
    bool pretrain = false, lora = true, unmixed = false, fsdp = false;

    if (lf_refused(&o, err) != 0 || lf_stage(&o, &pretrain, err) != 0 ||
        ts_import_str(&o, "model_name_or_path", false, &model, err) < 0 ||
        ts_import_str(&o, "optim", false, &opt, err) < 0)
        return -1;
    if (model != NULL &&
        ts_catalogue_import_named(im, model, LF_PTR "/model_name_or_path", err) != 0)
        return -1;
    if (lf_method(im, &o, &lora, err) != 0 || lf_quant(im, &o, lora, err) != 0 ||
        lf_precision(im, &o, lora, opt, &unmixed, err) != 0 ||
        lf_batch(im, &o, pretrain, err) != 0 || lf_checkpointing(im, &o, err) != 0 ||
        lf_attention(im, &o, err) != 0 || lf_parallel(im, &o, &fsdp, err) != 0 ||
        lf_kernels(im, &o, err) != 0)
        return -1;
    /* pure_bf16 alone under the Trainer's own FSDP: no mixed precision for
     * accelerate to upcast with (lf_precision). */
    im->d16_any_zero = fsdp && unmixed;
    return opt != NULL ? ts_import_hf_optim(im, opt, TS_SRC_LLAMAFACTORY, LF_PTR "/optim", err) : 0;
}

int ts_import_llamafactory(ts_import *im, const char *yaml, size_t len, ts_api_err *err)
{
    im->transformers = true; /* LLaMA-Factory's trainer is transformers' */
    return ts_yaml_import(im, yaml, len, "llamafactory_config", lf_map, err);
}
