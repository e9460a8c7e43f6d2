/*
 * ts_nemo_peft.c   - a NeMo fine-tuning YAML's model.peft: LoRA.
 *
 * NeMo's megatron_gpt_peft_tuning_config.yaml (as MLPerf's Llama-2-70B
 * LoRA ships it) puts the adapters under model.peft: peft_scheme and
 * lora_tuning's adapter_dim, adapter_dropout, dropout_position and
 * target_modules.  NeMo reads them in nemo/collections/nlp/parts/
 * peft_config.py@8cfedd72 (PEFT_CONFIG_MAP; LoraPEFTConfig; get_target_
 * modules, default ["attention_qkv"], "attention" = qkv + dense, "mlp" =
 * fc1 + fc2, "all" = the four) and builds one ParallelLinearAdapter per
 * target (nemo/collections/nlp/modules/common/megatron/adapters/
 * parallel_adapters.py@8cfedd72).  Only peft_scheme lora is modelled.
 */
#include <stdio.h>
#include <string.h>

#include "ts_import.h"
#include "ts_nemo_int.h"

/* NeMo's target names onto lora_targets' (core/ts_lora.c).  mlp_fc1 is
 * one adapter over the fused gate and up projections of a gated MLP
 * (out 2F); trainsize's gate_proj and up_proj are two, said in a note. */
static int peft_target(nemo *n, const char *name, const char *ptr, unsigned *set, bool *fc1)
{
    static const struct {
        const char *name;
        unsigned bits;
    } map[] = {
        { "attention_qkv", TS_LORA_QKV },
        { "attention_dense", TS_LORA_O },
        { "mlp_fc1", TS_LORA_GATE | TS_LORA_UP },
        { "mlp_fc2", TS_LORA_DOWN },
        { "attention", TS_LORA_QKV | TS_LORA_O },
        { "mlp", TS_LORA_GATE | TS_LORA_UP | TS_LORA_DOWN },
        { "all", TS_LORA_QKV | TS_LORA_O | TS_LORA_GATE | TS_LORA_UP | TS_LORA_DOWN },
    };
    size_t i;

    for (i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(map[i].name, name) == 0) {
            *set |= map[i].bits;
            *fc1 = *fc1 || (map[i].bits & TS_LORA_GATE) != 0;
            return 0;
        }
    }
    ts_api_err_set(n->err, TS_PROB_INVALID_VALUE, ptr,
                   "target_modules: \"%.*s\" is not a NeMo LoRA target (attention_qkv, "
                   "attention_dense, mlp_fc1, mlp_fc2, attention, mlp, all)",
                   ts_utf8_prec(name, 40), name);
    return -1;
}

static int peft_targets(nemo *n, const ts_import_obj *l)
{
    const json_t *mods = json_object_get(l->obj, "target_modules");
    unsigned set = 0;
    bool fc1 = false;
    char ptr[TS_IMPORT_ORIGIN_LEN], text[128];
    size_t i;

    ts_import_ptr(ptr, sizeof ptr, l, "target_modules");
    if (mods == NULL || json_is_null(mods)) {
        set = TS_LORA_QKV; /* get_target_modules' default */
    } else if (!json_is_array(mods) || json_array_size(mods) == 0) {
        ts_api_err_set(n->err, TS_PROB_INVALID_TYPE, ptr,
                       "target_modules must be a list of NeMo target names");
        return -1;
    }
    for (i = 0; json_is_array(mods) && i < json_array_size(mods); i++) {
        const json_t *v = json_array_get(mods, i);
        char eptr[TS_IMPORT_ORIGIN_LEN], idx[24];

        snprintf(idx, sizeof idx, "%zu", i);
        memcpy(eptr, ptr, sizeof eptr);
        ts_import_ptr_add(eptr, sizeof eptr, idx);
        if (!json_is_string(v)) {
            ts_api_err_set(n->err, TS_PROB_INVALID_TYPE, eptr, "%s must be a string", eptr);
            return -1;
        }
        if (peft_target(n, json_string_value(v), eptr, &set, &fc1) != 0)
            return -1;
    }
    if (fc1)
        ts_import_note(n->im->notes,
                       "%s: mlp_fc1 is one adapter over the fused gate and up projections; "
                       "trainsize counts two (gate_proj, up_proj: r h more parameters, one more "
                       "input dropout)",
                       ptr);
    ts_lora_targets_text(set, text, sizeof text);
    return ts_import_set_str(n->im, TS_FI_LORA_TARGETS, text, TS_SRC_NEMO, ptr, n->err);
}

/* adapter_dropout, [0, 1) as nn.Dropout takes it (the registry's range,
 * checked by ts_json_in.c naming this key); dropout_position post drops
 * the adapter's output, which trainsize costs as pre (its input). */
static int peft_dropout(nemo *n, const ts_import_obj *l)
{
    double p = 0;
    const char *pos = NULL;
    char ptr[TS_IMPORT_ORIGIN_LEN];
    int rc;

    if ((rc = nemo_num(n, l, "adapter_dropout", &p)) < 0 ||
        nemo_str(n, l, "dropout_position", &pos) < 0)
        return -1;
    if (rc == 0 || p == 0)
        return 0;
    ts_import_ptr(ptr, sizeof ptr, l, "adapter_dropout");
    if (pos != NULL && strcmp(pos, "pre") != 0)
        ts_import_note(n->im->notes,
                       "%s/dropout_position is \"%.*s\": the dropout is costed over the "
                       "adapter's input, as pre",
                       l->base, ts_utf8_prec(pos, 20), pos);
    return ts_import_set(n->im, TS_FI_LORA_DROPOUT, json_real(p), TS_SRC_NEMO, ptr, n->err);
}

/* fp8 with fp8_params: NeMo builds the model under Transformer Engine's
 * fp8_model_init (nemo/collections/nlp/models/language_modeling/
 * megatron_gpt_model.py@8cfedd7203), so the weights are FP8, 1 byte
 * each: under LoRA the frozen base (the MLPerf v5.1 Llama-2-70B LoRA
 * configs), in full training the model's (precision fp8). */
int nemo_fp8_weights(nemo *n, const ts_import_obj *m, bool lora)
{
    bool fp8 = false, params = false;

    if (nemo_bool(n, m, "fp8", &fp8) < 0 || nemo_bool(n, m, "fp8_params", &params) < 0)
        return -1;
    if (!params)
        return 0;
    if (!fp8) {
        ts_import_note(n->im->notes,
                       "%s/fp8_params without fp8: NeMo keeps the weights in bf16 (it builds "
                       "FP8 weights only with fp8)",
                       m->base);
        return 0;
    }
    return nemo_set_s(n, lora ? TS_FI_FROZEN_PRECISION : TS_FI_PRECISION, "fp8", m, "fp8_params");
}

int nemo_peft(nemo *n, const ts_import_obj *m)
{
    ts_import_obj p, l;
    const char *scheme = NULL;
    int64_t dim = 0;
    int rc;

    if ((rc = ts_import_sub(m, "peft", &p, n->err)) <= 0)
        return rc;
    if (nemo_str(n, &p, "peft_scheme", &scheme) < 0)
        return -1;
    if (scheme == NULL || strcmp(scheme, "none") == 0)
        return 0;
    if (strcmp(scheme, "lora") != 0) {
        ts_api_err_set(n->err, TS_PROB_UNSUPPORTED_CONFIG, NEMO_PTR "/model/peft/peft_scheme",
                       "peft_scheme \"%.*s\" is not modelled; lora is", ts_utf8_prec(scheme, 40),
                       scheme);
        return -1;
    }
    if ((rc = ts_import_sub(&p, "lora_tuning", &l, n->err)) < 0)
        return -1;
    if (rc == 0) {
        ts_api_err_set(n->err, TS_PROB_MISSING_FIELD, NEMO_PTR "/model/peft/lora_tuning",
                       "peft_scheme lora needs lora_tuning (adapter_dim, target_modules)");
        return -1;
    }
    if ((rc = nemo_int(n, &l, "adapter_dim", 1, 1048576, &dim)) < 0)
        return -1;
    if (rc == 0) {
        ts_api_err_set(n->err, TS_PROB_MISSING_FIELD,
                       NEMO_PTR "/model/peft/lora_tuning/adapter_dim",
                       "lora_tuning needs adapter_dim (the LoRA rank)");
        return -1;
    }
    if (nemo_set_i(n, TS_FI_LORA_RANK, dim, &l, "adapter_dim") != 0 || peft_targets(n, &l) != 0 ||
        peft_dropout(n, &l) != 0)
        return -1;
    return 1;
}
