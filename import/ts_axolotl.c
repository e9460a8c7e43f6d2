/*
 * ts_axolotl.c     - an axolotl YAML config ("axolotl_config") -> run.
 *
 * The YAML text is read into a jansson tree as PyYAML's safe_load, which
 * axolotl uses, reads it (import/ts_yaml.c: one document, YAML 1.1 scalars,
 * tags, no aliases), then mapped with the same typed getters as the JSON
 * imports, so an error names /axolotl_config/<key>.
 *
 * Keys follow axolotl's config reference (docs/config.qmd):
 * sequence_len, micro_batch_size, gradient_accumulation_steps, bf16/fp16,
 * gradient_checkpointing, adapter (lora/qlora) with lora_r, lora_dropout and
 * load_in_4bit/load_in_8bit, optimizer, flash_attention / sdp_attention,
 * deepspeed (a path: its JSON goes in deepspeed_config), fsdp and
 * fsdp_config, torch_compile, and the LigerPlugin's liger_* switches.  base_model is a
 * Hub id: the catalogue's config.json gives the shape when the request's
 * model, shape or hf_config does not (nothing is fetched).  axolotl trains a transformers (+ PEFT) model through the HF
 * Trainer and accelerate, so the framework is hf (FSDP underneath: zero
 * 3), deepspeed when a DeepSpeed config is named.
 *
 * Built only with libyaml (meson's yaml-0.1); without it
 * ts_import_noyaml.c makes axolotl_config a 400 saying so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_catalogue.h"
#include "ts_import.h"

#define AX_PTR "/axolotl_config"

#include "ts_yaml.h"

/* ---- mapping ------------------------------------------------------- */

static int ax_bool_or_auto(ts_import *im, const ts_import_obj *o, const char *key, int *out,
                           ts_api_err *err)
{
    const json_t *v = json_object_get(o->obj, key);
    bool b = false;
    int rc;

    if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) {
        ts_import_note(im->notes,
                       AX_PTR "/%s is \"auto\": precision keeps its request "
                              "or default value",
                       key);
        *out = 2;
        return 0;
    }
    if ((rc = ts_import_bool(o, key, &b, err)) < 0)
        return -1;
    *out = rc == 0 ? -1 : b ? 1 : 0; /* -1 absent */
    return 0;
}

/* bf16 / fp16 (true or "auto"): the precision; *key, the one that makes
 * the model 16-bit (NULL: neither). */
static int ax_precision(ts_import *im, const ts_import_obj *o, const char **key, ts_api_err *err)
{
    int bf16, fp16;

    *key = NULL;
    if (ax_bool_or_auto(im, o, "bf16", &bf16, err) < 0 ||
        ax_bool_or_auto(im, o, "fp16", &fp16, err) < 0)
        return -1;
    if (bf16 == 1 && fp16 == 1) {
        ts_api_err_set(err, TS_PROB_INCOMPATIBLE_OPTIONS, AX_PTR "/fp16",
                       "axolotl_config enables both bf16 and fp16");
        return -1;
    }
    /* The model's dtype as axolotl's resolve_dtype sets torch_dtype:
     * bf16, else fp16, else "auto" (bf16 absent is "auto", the schema's
     * default) as bf16 where the GPU has it, which the note says. */
    *key = bf16 == 1 ? "bf16" : fp16 == 1 ? "fp16" : bf16 != 0 ? "bf16" : NULL;
    if (bf16 == 1)
        return ts_import_set_str(im, TS_FI_PRECISION, "bf16", TS_SRC_AXOLOTL, AX_PTR "/bf16", err);
    if (fp16 == 1)
        return ts_import_set_str(im, TS_FI_PRECISION, "fp16", TS_SRC_AXOLOTL, AX_PTR "/fp16", err);
    return 0;
}

static int ax_lora_targets(ts_import *im, const ts_import_obj *o, ts_api_err *err);
static int ax_modules_to_save(ts_import *im, const ts_import_obj *o, ts_api_err *err);

/* lora_dropout: axolotl passes it to PEFT's LoraConfig (load_lora), whose
 * nn.Dropout(p) needs 0 <= p < 1: the registry's range for lora_dropout,
 * which ts_json_in.c checks naming this key.  Read only with an adapter:
 * a full fine-tune has none. */
static int ax_lora_dropout(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    const json_t *v = json_object_get(o->obj, "lora_dropout");
    double p;

    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_number(v)) {
        ts_api_err_set(err, TS_PROB_INVALID_TYPE, AX_PTR "/lora_dropout",
                       "lora_dropout must be a number");
        return -1;
    }
    p = json_number_value(v);
    return ts_import_set(im, TS_FI_LORA_DROPOUT, json_real(p), TS_SRC_AXOLOTL,
                         AX_PTR "/lora_dropout", err);
}

static int ax_adapter(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    const char *adapter = NULL;
    bool b4 = false, b8 = false;
    int64_t r = 0;
    int rc;

    if (ts_import_str(o, "adapter", false, &adapter, err) < 0 ||
        ts_import_bool(o, "load_in_4bit", &b4, err) < 0 ||
        ts_import_bool(o, "load_in_8bit", &b8, err) < 0)
        return -1;
    if (adapter != NULL && strcmp(adapter, "lora") != 0 && strcmp(adapter, "qlora") != 0) {
        ts_api_err_set(err, TS_PROB_UNSUPPORTED_CONFIG, AX_PTR "/adapter",
                       "adapter \"%.*s\" is not modelled; lora and qlora are",
                       ts_utf8_prec(adapter, 40), adapter);
        return -1;
    }
    if (adapter == NULL)
        return 0;
    if ((rc = ts_import_int(o, "lora_r", 1, 1048576, true, &r, err)) < 0)
        return -1;
    if (ts_import_set_int(im, TS_FI_LORA_RANK, r, TS_SRC_AXOLOTL, AX_PTR "/lora_r", err) != 0 ||
        ax_lora_dropout(im, o, err) != 0 || ax_modules_to_save(im, o, err) != 0)
        return -1;
    if (strcmp(adapter, "qlora") == 0 || b4) {
        if (ts_import_set_str(im, TS_FI_FROZEN_PRECISION, "nf4", TS_SRC_AXOLOTL,
                              strcmp(adapter, "qlora") == 0 ? AX_PTR "/adapter"
                                                            : AX_PTR "/load_in_4bit",
                              err) != 0)
            return -1;
        return ax_lora_targets(im, o, err);
    }
    if (b8 && ts_import_set_str(im, TS_FI_FROZEN_PRECISION, "int8", TS_SRC_AXOLOTL,
                                AX_PTR "/load_in_8bit", err) != 0)
        return -1;
    return ax_lora_targets(im, o, err);
}

/* lora_modules_to_save (PEFT's modules_to_save, e.g. embed_tokens and
 * lm_head when special tokens are added; axolotl
 * src/axolotl/loaders/adapter.py load_lora passes it to LoraConfig):
 * PEFT trains a full copy of each listed module beside the frozen
 * original (trainsize's lora_modules_to_save).  A list of names (or one
 * name); each must be one trainsize models, and the error names its
 * entry. */
static int ax_modules_to_save(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    const json_t *m = json_object_get(o->obj, "lora_modules_to_save");
    unsigned set = 0;
    char text[64];
    size_t i;

    if (m == NULL || json_is_null(m) || (json_is_array(m) && json_array_size(m) == 0))
        return 0;
    if (!json_is_array(m) && !json_is_string(m)) {
        ts_api_err_set(err, TS_PROB_INVALID_TYPE, AX_PTR "/lora_modules_to_save",
                       "lora_modules_to_save must be a list of module names");
        return -1;
    }
    for (i = 0; i < (json_is_array(m) ? json_array_size(m) : 1); i++) {
        const json_t *v = json_is_array(m) ? json_array_get(m, i) : m;
        const char *s = json_string_value(v), *name;
        char ptr[TS_IMPORT_ORIGIN_LEN];
        unsigned one = 0;
        size_t at = 0, bl = 0;

        snprintf(ptr, sizeof ptr, AX_PTR "/lora_modules_to_save");
        if (json_is_array(m)) {
            char idx[24];

            snprintf(idx, sizeof idx, "%zu", i);
            ts_import_ptr_add(ptr, sizeof ptr, idx);
        }
        if (s == NULL) {
            ts_api_err_set(err, TS_PROB_INVALID_TYPE, ptr, "a module name (a string)");
            return -1;
        }
        /* PEFT matches a module by the end of its path (model.embed_tokens). */
        name = strrchr(s, '.') != NULL ? strrchr(s, '.') + 1 : s;
        if (memchr(s, '\0', json_string_length(v)) != NULL || strchr(s, ',') != NULL ||
            ts_lora_save_parse(name, strlen(name), &one, &at, &bl) != 0 || one == 0) {
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, ptr,
                           "lora_modules_to_save: \"%.*s\" is not a module trainsize models; "
                           "embed_tokens and lm_head (embed_in, embed_out, word_embeddings, wte) "
                           "are",
                           ts_utf8_prec(s, 40), s);
            return -1;
        }
        set |= one;
    }
    ts_lora_save_text(set, text, sizeof text);
    return ts_import_set_str(im, TS_FI_LORA_SAVE, text, TS_SRC_AXOLOTL,
                             AX_PTR "/lora_modules_to_save", err);
}

/* lora_target_linear: true adapts every linear (axolotl adds
 * find_all_linear_names: PEFT's all-linear); lora_target_modules, a list
 * of module names (or one name), the listed ones (axolotl
 * src/axolotl/loaders/adapter.py load_lora: the two are joined).  Each
 * name must be one trainsize models (ts_lora_targets_parse); the error
 * names its list entry. */
static int ax_lora_targets(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    const json_t *mods = json_object_get(o->obj, "lora_target_modules");
    bool linear = false;
    unsigned set = 0;
    char ptr[TS_IMPORT_ORIGIN_LEN], text[160];
    size_t i;
    int rc;

    if ((rc = ts_import_bool(o, "lora_target_linear", &linear, err)) < 0)
        return -1;
    if (linear)
        return ts_import_set_str(im, TS_FI_LORA_TARGETS, "all-linear", TS_SRC_AXOLOTL,
                                 AX_PTR "/lora_target_linear", err);
    if (mods == NULL || json_is_null(mods))
        return 0;
    if (!json_is_array(mods) && !json_is_string(mods)) {
        ts_api_err_set(err, TS_PROB_INVALID_TYPE, AX_PTR "/lora_target_modules",
                       "lora_target_modules must be a list of module names");
        return -1;
    }
    for (i = 0; i < (json_is_array(mods) ? json_array_size(mods) : 1); i++) {
        const json_t *v = json_is_array(mods) ? json_array_get(mods, i) : mods;
        const char *s = json_string_value(v);
        unsigned one = 0;
        size_t at = 0, bl = 0;

        snprintf(ptr, sizeof ptr, AX_PTR "/lora_target_modules");
        if (json_is_array(mods)) {
            char idx[24];

            snprintf(idx, sizeof idx, "%zu", i);
            ts_import_ptr_add(ptr, sizeof ptr, idx);
        }
        if (s == NULL || memchr(s, '\0', json_string_length(v)) != NULL || strchr(s, ',') != NULL ||
            ts_lora_targets_parse(s, json_string_length(v), &one, &at, &bl) != 0 ||
            one == TS_LORA_ALL_LINEAR) {
            ts_api_err_set(err, TS_PROB_INVALID_VALUE, ptr,
                           "lora_target_modules: \"%.*s\" is not a module trainsize models; "
                           "q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, "
                           "query_key_value are",
                           s != NULL ? ts_utf8_prec(s, 40) : 0, s != NULL ? s : "");
            return -1;
        }
        set |= one;
    }
    if (set == 0)
        return 0;
    ts_lora_targets_text(set, text, sizeof text);
    {
        unsigned chk = 0;
        size_t at = 0, bl = 0;

        if (ts_lora_targets_parse(text, strlen(text), &chk, &at, &bl) != 0) {
            ts_api_err_set(
                err, TS_PROB_INCOMPATIBLE_OPTIONS, AX_PTR "/lora_target_modules",
                "lora_target_modules mixes query_key_value with q_proj, k_proj or v_proj");
            return -1;
        }
    }
    return ts_import_set_str(im, TS_FI_LORA_TARGETS, text, TS_SRC_AXOLOTL,
                             AX_PTR "/lora_target_modules", err);
}

static int ax_optimizer(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    const char *name = NULL;
    int rc;

    if ((rc = ts_import_str(o, "optimizer", false, &name, err)) <= 0)
        return rc;
    return ts_import_hf_optim(im, name, TS_SRC_AXOLOTL, AX_PTR "/optimizer", err);
}

/* axolotl's Liger integration (src/axolotl/integrations/liger, README:
 * plugins: [axolotl.integrations.liger.LigerPlugin] with liger_rope,
 * liger_rms_norm, liger_glu_activation, liger_fused_linear_cross_entropy;
 * liger_swiglu is the older name of liger_glu_activation).  liger_kernels
 * models the norms, rotary and SwiGLU together: sent when all three are
 * on, a note when only some are.  The fused linear cross-entropy keeps
 * no logits, which trainsize's loss still counts: a note. */
#define AX_LIGER_PLUGIN "axolotl.integrations.liger.LigerPlugin"

static int ax_liger(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    static const char *const keys[] = { "liger_rope", "liger_rms_norm", "liger_glu_activation",
                                        "liger_swiglu", "liger_fused_linear_cross_entropy" };
    const json_t *pl = json_object_get(o->obj, "plugins");
    bool on[sizeof keys / sizeof keys[0]] = { false };
    bool plugin = false, any = false;
    size_t i;

    if (pl != NULL && !json_is_null(pl) && !json_is_array(pl)) {
        ts_api_err_set(err, TS_PROB_INVALID_TYPE, AX_PTR "/plugins",
                       "plugins must be a list of plugin class paths");
        return -1;
    }
    for (i = 0; pl != NULL && i < json_array_size(pl); i++) {
        const char *s = json_string_value(json_array_get(pl, i));

        if (s != NULL && strcmp(s, AX_LIGER_PLUGIN) == 0)
            plugin = true;
    }
    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (ts_import_bool(o, keys[i], &on[i], err) < 0)
            return -1;
        any = any || on[i];
    }
    if (!any)
        return 0;
    if (!plugin) {
        ts_import_note(im->notes,
                       AX_PTR "/plugins does not list " AX_LIGER_PLUGIN
                              ": axolotl loads no Liger kernel, so the liger_* switches are "
                              "not sent");
        return 0;
    }
    if (on[4])
        ts_import_note(im->notes,
                       AX_PTR "/liger_fused_linear_cross_entropy: the fused loss never holds "
                              "the logits, which trainsize's loss phase still counts (an "
                              "over-estimate of the loss peak)");
    /* Under a final framework other than hf (DeepSpeed, Megatron) the
     * late rule, ts_import_settle, withdraws it for fused layers. */
    if (on[0] && on[1] && (on[2] || on[3]))
        return ts_import_set_bool(im, TS_FI_LIGER_KERNELS, true, TS_SRC_AXOLOTL, AX_PTR "/plugins",
                                  err);
    if (on[0] || on[1] || on[2] || on[3])
        ts_import_note(im->notes,
                       AX_PTR ": only some of liger_rope, liger_rms_norm and "
                              "liger_glu_activation are on; liger_kernels models the three "
                              "together, so it is not sent");
    return 0;
}

/* torch_compile (axolotl's key for transformers' TrainingArguments
 * torch_compile: the Trainer wraps the whole model in torch.compile) fuses
 * the layers' elementwise ops: layer_impl fused.  Otherwise axolotl runs
 * transformers' modules as written, one kernel per op, under FSDP and
 * DeepSpeed alike (DeepSpeed's default, fused, is Megatron-DeepSpeed's):
 * layer_impl eager, sent so that a DeepSpeed config keeps it.  "auto"
 * compiles only on a torch the config does not name: a note, and
 * layer_impl stays the framework's default (eager under hf, fused under
 * DeepSpeed). */
static int ax_compile(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    const json_t *v = json_object_get(o->obj, "torch_compile");
    bool b = false;
    int rc;

    if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) {
        ts_import_note(im->notes, AX_PTR "/torch_compile is \"auto\" (compiled on a recent "
                                         "enough torch, which the config does not name): "
                                         "layer_impl keeps its request or default value");
        return 0;
    }
    if ((rc = ts_import_bool(o, "torch_compile", &b, err)) < 0)
        return -1;
    return ts_import_set_str(im, TS_FI_LAYER_IMPL, b ? "fused" : "eager", TS_SRC_AXOLOTL,
                             rc > 0 ? AX_PTR "/torch_compile" : AX_PTR, err);
}

/* Without FSDP or DeepSpeed axolotl trains the model in the dtype it
 * loads it in: bf16 or fp16 sets torch_dtype (axolotl
 * src/axolotl/utils/config/__init__.py, resolve_dtype) and the HF
 * Trainer's autocast upcasts no parameter, so there is no fp32 master
 * copy and the gradients have the weights' 16 bits (what matters under
 * LoRA for lora_modules_to_save's copies; PEFT's adapters are fp32
 * anyway).  torch's AdamW and Lion keep their moments in the parameter's
 * dtype (torch.optim.AdamW._init_group: zeros_like(p)), so a full
 * fine-tune's are 16-bit too, but only when axolotl casts embed_tokens,
 * lm_head and the norms back to that dtype: it first makes them fp32 and
 * casts them back for an adapter, FSDP or an attention that needs it
 * (flash, flex, xformers; loaders/model.py _configure_embedding_dtypes),
 * so with eager or SDPA attention a full fine-tune mixes fp32 and bf16
 * parameters, which one master_weights cannot say: a note.
 * bitsandbytes' 32-bit and 8-bit states have their own widths.  Under
 * FSDP accelerate upcasts the trained parameters to fp32 when mixed
 * precision is on (accelerate@16cb6eb8 accelerator.py prepare_model,
 * utils/fsdp_utils.py fsdp2_prepare_model), as DeepSpeed keeps fp32
 * partitions: the master copy stays there.  Recorded here, decided by
 * ts_import_settle once the framework and zero are final. */
static int ax_pure16(ts_import *im, const ts_import_obj *o, const char *key, ts_api_err *err)
{
    static const char *const cast_attn[] = { "flash_attention", "flex_attention",
                                             "xformers_attention" };
    const char *opt = NULL, *adapter = NULL, *impl = NULL;
    bool torch = true, cast = false;
    size_t i;

    if (key == NULL)
        return 0;
    snprintf(im->d16, sizeof im->d16, "%s", key);
    im->d16_src = TS_SRC_AXOLOTL;
    im->d16_base = AX_PTR;
    snprintf(im->d16_origin, sizeof im->d16_origin, AX_PTR "/%s", key);
    if (ts_import_str(o, "adapter", false, &adapter, err) < 0 ||
        ts_import_str(o, "optimizer", false, &opt, err) < 0 ||
        ts_import_str(o, "attn_implementation", false, &impl, err) < 0)
        return -1;
    /* attn_implementation (current axolotl; schemas/enums.py
     * ATTN_IMPLS_WITHOUT_DTYPE_CAST = {eager, sdpa}), else the older
     * boolean keys. */
    if (impl != NULL)
        cast = strcmp(impl, "eager") != 0 && strcmp(impl, "sdpa") != 0;
    for (i = 0; impl == NULL && i < sizeof cast_attn / sizeof cast_attn[0]; i++) {
        bool b = false;

        if (ts_import_bool(o, cast_attn[i], &b, err) < 0)
            return -1;
        cast = cast || b;
    }
    if (opt != NULL)
        torch = ts_import_hf_optim_torch(opt);
    /* fp16 weights cannot train in full under the Trainer (its
     * GradScaler refuses to unscale fp16 gradients): bf16 only. */
    if (adapter == NULL && strcmp(key, "bf16") == 0 && torch && cast) {
        im->d16_full = true;
        snprintf(im->d16_opt_origin, sizeof im->d16_opt_origin, "%s",
                 opt != NULL ? AX_PTR "/optimizer" : AX_PTR "/bf16");
    }
    im->d16_embed_fp32 = adapter == NULL && !cast;
    return 0;
}

/* attn_implementation, current axolotl's one key for the kernel (it
 * passes it to from_pretrained): transformers' names.  flash_attention_2
 * and _3 and flex_attention compute a sliding window's band only; sdpa
 * computes every key; eager keeps the scores.  Others (a kernels-hub
 * name) are noted, not guessed. */
static int ax_attn_impl(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    const char *impl = NULL, *att;

    if (ts_import_str(o, "attn_implementation", false, &impl, err) < 0)
        return -1;
    if (impl == NULL)
        return 0;
    att = strcmp(impl, "eager") == 0  ? "eager"
          : strcmp(impl, "sdpa") == 0 ? "sdpa"
          : strcmp(impl, "flash_attention_2") == 0 || strcmp(impl, "flash_attention_3") == 0 ||
                  strcmp(impl, "flex_attention") == 0
              ? "flash"
              : NULL;
    if (att == NULL) {
        ts_import_note(im->notes,
                       AX_PTR "/attn_implementation \"%.*s\" is not one trainsize knows: "
                              "not read (give attention)",
                       ts_utf8_prec(impl, 48), impl);
        return 0;
    }
    return ts_import_set_str(im, TS_FI_ATTENTION, att, TS_SRC_AXOLOTL,
                             AX_PTR "/attn_implementation", err);
}

static int ax_parallel(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    const char *ds = NULL;
    const json_t *fsdp = json_object_get(o->obj, "fsdp");
    ts_import_obj fc;
    int rc;

    if (ts_import_str(o, "deepspeed", false, &ds, err) < 0)
        return -1;
    if (ds != NULL) {
        ts_import_note(im->notes,
                       AX_PTR "/deepspeed \"%.*s\" is a path: send that "
                              "file's JSON as deepspeed_config",
                       ts_utf8_prec(ds, 80), ds);
        if (ts_import_set_str(im, TS_FI_FRAMEWORK, "deepspeed", TS_SRC_AXOLOTL, AX_PTR "/deepspeed",
                              err) != 0)
            return -1;
    }
    if ((rc = ts_import_sub(o, "fsdp_config", &fc, err)) < 0)
        return -1;
    if ((fsdp != NULL && !json_is_null(fsdp) &&
         !(json_is_array(fsdp) && json_array_size(fsdp) == 0)) ||
        rc > 0) {
        bool off = false;

        /* FSDP full shard: parameters, gradients and optimizer state
         * sharded over the data-parallel ranks (ZeRO 3). */
        if ((ds == NULL && ts_import_set_str(im, TS_FI_FRAMEWORK, "hf", TS_SRC_AXOLOTL,
                                             AX_PTR "/fsdp", err) != 0) ||
            ts_import_set_int(im, TS_FI_ZERO, 3, TS_SRC_AXOLOTL, AX_PTR "/fsdp", err) != 0)
            return -1;
        if (rc > 0 && ts_import_bool(&fc, "fsdp_offload_params", &off, err) < 0)
            return -1;
        if (off && (ts_import_set_bool(im, TS_FI_OFFLOAD_PARAMS, true, TS_SRC_AXOLOTL,
                                       AX_PTR "/fsdp_config/fsdp_offload_params", err) != 0 ||
                    ts_import_set_bool(im, TS_FI_OFFLOAD_OPTIMIZER, true, TS_SRC_AXOLOTL,
                                       AX_PTR "/fsdp_config/fsdp_offload_params", err) != 0))
            return -1;
    } else if (ds == NULL &&
               (ts_import_set_str(im, TS_FI_FRAMEWORK, "hf", TS_SRC_AXOLOTL, AX_PTR, err) != 0 ||
                ts_import_set_int(im, TS_FI_ZERO, 0, TS_SRC_AXOLOTL, AX_PTR, err) != 0)) {
        /* Neither FSDP nor DeepSpeed: accelerate's DDP, every state
         * replicated (zero 0). */
        return -1;
    }
    return 0;
}

/* axolotl's N-D parallelism keys (tensor_parallel_size, context_parallel_
 * size, dp_shard_size; sequence_parallel_degree its older name for context
 * parallelism; tensor_parallel in some examples): not read, so said,
 * since they change the layout the estimate assumes. */
static void ax_parallel_keys(ts_import *im, const json_t *cfg)
{
    static const char *const keys[] = { "tensor_parallel_size", "tensor_parallel",
                                        "context_parallel_size", "sequence_parallel_degree",
                                        "dp_shard_size" };
    size_t i;

    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const json_t *v = json_object_get(cfg, keys[i]);

        if (v == NULL || json_is_null(v))
            continue;
        ts_import_note(im->notes,
                       AX_PTR "/%s: axolotl's parallel layout is not read; the layout is the "
                              "request's (tp, cp, gpus)",
                       keys[i]);
    }
}

/* sample_packing packs samples into rows of sequence_len tokens
 * (axolotl's multipack sampler) and pad_to_sequence_len pads every batch
 * to sequence_len (the collator's pad_to_multiple_of, axolotl
 * src/axolotl/core/builders/causal.py _prepare_data_collator_kwargs):
 * either way a row is the seq the estimate takes.  With neither, the
 * collator pads each batch to its own longest sample (rounded up to 64):
 * the estimate is then that of a batch as long as sequence_len allows,
 * the peak memory's worst case; said, since step time is then an upper
 * bound too. */
static int ax_padding(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    bool pack = false, pad = false;

    if (ts_import_bool(o, "sample_packing", &pack, err) < 0 ||
        ts_import_bool(o, "pad_to_sequence_len", &pad, err) < 0)
        return -1;
    if (!pack && !pad)
        ts_import_note(im->notes,
                       AX_PTR "/sequence_len: without sample_packing or pad_to_sequence_len "
                              "axolotl pads each batch to its longest sample, so every figure "
                              "is that of the longest batch (sequence_len tokens a sample): the "
                              "peak, and an upper bound on step time");
    return 0;
}

static int ax_map(ts_import *im, const json_t *cfg, ts_api_err *err)
{
    ts_import_obj o = { cfg, AX_PTR };
    const char *base = NULL, *key = NULL;
    int64_t v = 0;
    bool b = false;
    int rc;

    if (ts_import_str(&o, "base_model", false, &base, err) < 0)
        return -1;
    if (base != NULL && ts_catalogue_import_named(im, base, AX_PTR "/base_model", err) != 0)
        return -1;
    ax_parallel_keys(im, cfg);
    if ((rc = ts_import_int(&o, "sequence_len", 1, INT64_C(1) << 24, false, &v, err)) < 0)
        return -1;
    if (rc > 0 &&
        ts_import_set_int(im, TS_FI_SEQ, v, TS_SRC_AXOLOTL, AX_PTR "/sequence_len", err) != 0)
        return -1;
    if (rc > 0 && ax_padding(im, &o, err) != 0)
        return -1;
    if ((rc = ts_import_int(&o, "micro_batch_size", 1, 1048576, false, &v, err)) < 0)
        return -1;
    if (rc > 0 && ts_import_set_int(im, TS_FI_MICRO_BATCH, v, TS_SRC_AXOLOTL,
                                    AX_PTR "/micro_batch_size", err) != 0)
        return -1;
    if ((rc = ts_import_int(&o, "gradient_accumulation_steps", 1, 1048576, false, &v, err)) < 0)
        return -1;
    if (rc > 0) {
        im->ds_gas = v;
        im->gas_src = TS_SRC_AXOLOTL;
        snprintf(im->gas_origin, sizeof im->gas_origin, AX_PTR "/gradient_accumulation_steps");
    }
    /* max_steps (the HF Trainer's; axolotl passes it on): the run's
     * length, tokens = steps x global batch x seq once dp is known. */
    if ((rc = ts_import_int(&o, "max_steps", 1, INT64_C(1) << 40, false, &v, err)) < 0)
        return -1;
    if (rc > 0) {
        im->max_steps = v;
        im->steps_src = TS_SRC_AXOLOTL;
        snprintf(im->steps_origin, sizeof im->steps_origin, AX_PTR "/max_steps");
    }
    if ((rc = ts_import_bool(&o, "gradient_checkpointing", &b, err)) < 0)
        return -1;
    if (rc > 0 && ts_import_set_str(im, TS_FI_RECOMPUTE, b ? "full" : "none", TS_SRC_AXOLOTL,
                                    AX_PTR "/gradient_checkpointing", err) != 0)
        return -1;
    {
        static const char *const attn[] = { "flash_attention", "sdp_attention",
                                            "xformers_attention", "flex_attention" };
        size_t i;

        for (i = 0; i < sizeof attn / sizeof attn[0]; i++) {
            char ptr[64];

            b = false;
            if (ts_import_bool(&o, attn[i], &b, err) < 0)
                return -1;
            snprintf(ptr, sizeof ptr, AX_PTR "/%s", attn[i]);
            if (b && ts_import_set_str(im, TS_FI_ATTENTION,
                                       strcmp(attn[i], "sdp_attention") == 0 ? "sdpa" : "flash",
                                       TS_SRC_AXOLOTL, ptr, err) != 0)
                return -1;
        }
    }
    if (ax_attn_impl(im, &o, err) < 0)
        return -1;
    if (ax_precision(im, &o, &key, err) < 0 || ax_adapter(im, &o, err) < 0 ||
        ax_optimizer(im, &o, err) < 0 || ax_parallel(im, &o, err) < 0 ||
        ax_pure16(im, &o, key, err) < 0 || ax_compile(im, &o, err) < 0 || ax_liger(im, &o, err) < 0)
        return -1;
    return 0;
}

int ts_import_axolotl(ts_import *im, const char *yaml, size_t len, ts_api_err *err)
{
    im->transformers = true; /* axolotl's trainer is transformers' */
    return ts_yaml_import(im, yaml, len, "axolotl_config", ax_map, err);
}
