/*
 * ts_import_yaml.c - an axolotl YAML config ("axolotl_config") -> run.
 *
 * The YAML text is read with libyaml's event parser into a jansson tree
 * (scalars resolved as PyYAML, which axolotl uses, resolves them: YAML
 * 1.1 booleans yes/no/on/off/true/false, decimal integers, floats only
 * with a '.', so 1e-5 stays a string; aliases are refused, which also
 * rules out expansion bombs), then mapped with the same typed getters as
 * the JSON imports, so an error names /axolotl_config/<key>.
 *
 * Keys follow axolotl's config reference (docs/config.qmd):
 * sequence_len, micro_batch_size, gradient_accumulation_steps, bf16/fp16,
 * gradient_checkpointing, adapter (lora/qlora) with lora_r and
 * load_in_4bit/load_in_8bit, optimizer, flash_attention / sdp_attention,
 * deepspeed (a path: its JSON goes in deepspeed_config), fsdp and
 * fsdp_config.  base_model is a Hub id whose shape is not fetched: the
 * model comes from hf_config or a preset.
 *
 * Built without libyaml (meson finds no yaml-0.1), axolotl_config is a
 * 400 saying so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_import.h"

#define AX_PTR "/axolotl_config"

#ifndef TS_HAVE_YAML

int ts_import_axolotl(ts_import *im, const char *yaml, size_t len, ts_api_err *err)
{
    (void)im;
    (void)yaml;
    (void)len;
    ts_api_err_set(err, "unsupported-config", AX_PTR,
                   "this build has no YAML support (libyaml); send the settings "
                   "as request members instead");
    return -1;
}

#else

#include <yaml.h>

/* ---- YAML -> jansson ------------------------------------------------ */

static bool word_in(const char *s, const char *const *list)
{
    for (; *list != NULL; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

/* PyYAML's implicit resolvers for a plain scalar (resolver.py). */
static json_t *resolve_plain(const char *s, size_t n)
{
    static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
    static const char *const trues[] = { "yes", "Yes", "YES", "true", "True", "TRUE",
                                         "on", "On", "ON", NULL };
    static const char *const falses[] = { "no", "No", "NO", "false", "False", "FALSE",
                                          "off", "Off", "OFF", NULL };
    size_t i = 0, digits = 0;
    bool dot = false;

    if (word_in(s, nulls))
        return json_null();
    if (word_in(s, trues))
        return json_true();
    if (word_in(s, falses))
        return json_false();
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    for (; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9')
            digits++;
        else if (s[i] == '.' && !dot)
            dot = true;
        else if ((s[i] == 'e' || s[i] == 'E') && dot && digits > 0)
            break;
        else
            return json_stringn(s, n);
    }
    if (digits == 0)
        return json_stringn(s, n);
    if (!dot && i == n) {
        long long v;
        char *end;

        /* "0" or no leading zero (PyYAML reads 012 as octal: keep it text). */
        if (n > 1 && (s[0] == '0' || ((s[0] == '-' || s[0] == '+') && s[1] == '0')))
            return json_stringn(s, n);
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno != 0 || *end != '\0')
            return json_stringn(s, n);
        return json_integer((json_int_t)v);
    }
    {
        char *end;
        double d;

        errno = 0;
        d = strtod(s, &end);
        if (errno != 0 || *end != '\0')
            return json_stringn(s, n);
        return json_real(d);
    }
}

typedef struct yj_frame {
    json_t *node;            /* object or array */
    char *key;               /* pending mapping key (malloc'd) */
} yj_frame;

static int yaml_fail(ts_api_err *err, const yaml_parser_t *p, const char *what)
{
    ts_api_err_set(err, "invalid-value", AX_PTR,
                   "axolotl_config: %s at line %zu, column %zu", what,
                   (size_t)p->problem_mark.line + 1, (size_t)p->problem_mark.column + 1);
    return -1;
}

/* Add v (stolen) to the innermost container, or make it the root. */
static int yj_add(yj_frame *st, size_t depth, json_t **root, json_t *v,
                  ts_api_err *err)
{
    yj_frame *f;

    if (v == NULL) {
        ts_api_err_set(err, "out-of-memory", NULL,
                       "out of memory reading axolotl_config");
        return -1;
    }
    if (depth == 0) {
        if (*root == NULL)
            *root = v;
        else
            json_decref(v);
        return 0;
    }
    f = &st[depth - 1];
    if (json_is_array(f->node))
        return json_array_append_new(f->node, v) == 0 ? 0 : -1;
    if (f->key == NULL) {
        json_decref(v);
        ts_api_err_set(err, "invalid-value", AX_PTR,
                       "axolotl_config: mapping keys must be plain scalars");
        return -1;
    }
    if (json_object_get(f->node, f->key) != NULL) {
        char ptr[TS_IMPORT_ORIGIN_LEN];
        int n = ts_utf8_prec(f->key, 64);

        snprintf(ptr, sizeof ptr, AX_PTR "/%.*s", n, f->key);
        ts_api_err_set(err, "duplicate-key", ptr,
                       "axolotl_config: key \"%.*s\" appears twice", n, f->key);
        json_decref(v);
        return -1;
    }
    json_object_set_new(f->node, f->key, v);
    free(f->key);
    f->key = NULL;
    return 0;
}

static json_t *yaml_to_json(const char *text, size_t len, ts_api_err *err)
{
    yaml_parser_t p;
    yaml_event_t ev;
    yj_frame st[TS_IMPORT_DEPTH_MAX];
    size_t depth = 0, nodes = 0, i;
    json_t *root = NULL;
    bool done = false, ok = true;

    memset(st, 0, sizeof st);
    if (!yaml_parser_initialize(&p)) {
        ts_api_err_set(err, "out-of-memory", NULL,
                       "out of memory reading axolotl_config");
        return NULL;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (!done && ok) {
        if (!yaml_parser_parse(&p, &ev)) {
            yaml_fail(err, &p, p.problem != NULL ? p.problem : "invalid YAML");
            ok = false;
            break;
        }
        if (++nodes > TS_IMPORT_NODES_MAX * 2) {
            ts_api_err_set(err, "import-too-large",
                           AX_PTR, "axolotl_config has more than %d values",
                           TS_IMPORT_NODES_MAX);
            ok = false;
        }
        switch (ev.type) {
        case YAML_SCALAR_EVENT: {
            const char *s = (const char *)ev.data.scalar.value;
            size_t n = ev.data.scalar.length;
            yj_frame *f = depth > 0 ? &st[depth - 1] : NULL;

            if (!ok)
                break;
            if (f != NULL && json_is_object(f->node) && f->key == NULL) {
                if ((f->key = malloc(n + 1)) == NULL) {
                    ok = yj_add(st, depth, &root, NULL, err) == 0;
                    break;
                }
                memcpy(f->key, s, n);
                f->key[n] = '\0';
                break;
            }
            ok = yj_add(st, depth, &root,
                        ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE
                            ? resolve_plain(s, n) : json_stringn(s, n), err) == 0;
            break;
        }
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (!ok)
                break;
            if (depth >= TS_IMPORT_DEPTH_MAX) {
                ts_api_err_set(err, "import-too-large",
                               AX_PTR, "axolotl_config nests deeper than %d levels",
                               TS_IMPORT_DEPTH_MAX);
                ok = false;
                break;
            }
            st[depth].node = ev.type == YAML_SEQUENCE_START_EVENT ? json_array() : json_object();
            st[depth].key = NULL;
            if (st[depth].node == NULL) {
                ok = yj_add(st, depth, &root, NULL, err) == 0;
                break;
            }
            depth++;
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (!ok || depth == 0)
                break;
            depth--;
            free(st[depth].key);
            st[depth].key = NULL;
            ok = yj_add(st, depth, &root, st[depth].node, err) == 0;
            st[depth].node = NULL;
            break;
        case YAML_ALIAS_EVENT:
            ts_api_err_set(err, "invalid-value", AX_PTR,
                           "axolotl_config: aliases (*name) are not supported");
            ok = false;
            break;
        case YAML_DOCUMENT_END_EVENT:
        case YAML_STREAM_END_EVENT:
            done = true; /* the first document only */
            break;
        case YAML_NO_EVENT:
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_START_EVENT:
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    for (i = 0; i < TS_IMPORT_DEPTH_MAX; i++) {
        json_decref(st[i].node);
        free(st[i].key);
    }
    yaml_parser_delete(&p);
    if (!ok) {
        json_decref(root);
        return NULL;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        ts_api_err_set(err, "invalid-type", AX_PTR,
                       "axolotl_config must be a YAML mapping (key: value lines)");
        return NULL;
    }
    return root;
}

/* ---- mapping ------------------------------------------------------- */

static int ax_bool_or_auto(ts_import *im, const ts_import_obj *o, const char *key,
                           int *out, ts_api_err *err)
{
    const json_t *v = json_object_get(o->obj, key);
    bool b = false;
    int rc;

    if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) {
        ts_import_note(im->notes, AX_PTR "/%s is \"auto\": precision keeps its request "
                       "or default value", key);
        *out = 2;
        return 0;
    }
    if ((rc = ts_import_bool(o, key, &b, err)) < 0)
        return -1;
    *out = rc == 0 ? -1 : b ? 1 : 0; /* -1 absent */
    return 0;
}

static int ax_precision(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    int bf16, fp16;

    if (ax_bool_or_auto(im, o, "bf16", &bf16, err) < 0 ||
        ax_bool_or_auto(im, o, "fp16", &fp16, err) < 0)
        return -1;
    if (bf16 == 1 && fp16 == 1) {
        ts_api_err_set(err, "incompatible-options",
                       AX_PTR "/fp16", "axolotl_config enables both bf16 and fp16");
        return -1;
    }
    if (bf16 == 1)
        return ts_import_set_str(im, TS_FI_PRECISION, "bf16", TS_SRC_AXOLOTL, AX_PTR "/bf16", err);
    if (fp16 == 1)
        return ts_import_set_str(im, TS_FI_PRECISION, "fp16", TS_SRC_AXOLOTL, AX_PTR "/fp16", err);
    return 0;
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
        ts_api_err_set(err, "unsupported-config", AX_PTR "/adapter",
                       "adapter \"%.*s\" is not modelled; lora and qlora are",
                       ts_utf8_prec(adapter, 40), adapter);
        return -1;
    }
    if (adapter == NULL)
        return 0;
    if ((rc = ts_import_int(o, "lora_r", 1, 1048576, true, &r, err)) < 0)
        return -1;
    if (ts_import_set_int(im, TS_FI_LORA_RANK, r, TS_SRC_AXOLOTL, AX_PTR "/lora_r", err) != 0)
        return -1;
    if (strcmp(adapter, "qlora") == 0 || b4)
        return ts_import_set_str(im, TS_FI_FROZEN_PRECISION, "nf4", TS_SRC_AXOLOTL,
                                 strcmp(adapter, "qlora") == 0 ? AX_PTR "/adapter"
                                                               : AX_PTR "/load_in_4bit", err);
    if (b8)
        return ts_import_set_str(im, TS_FI_FROZEN_PRECISION, "int8", TS_SRC_AXOLOTL,
                                 AX_PTR "/load_in_8bit", err);
    return 0;
}

static int ax_optimizer(ts_import *im, const ts_import_obj *o, ts_api_err *err)
{
    /* axolotl passes these to the HF Trainer (transformers OptimizerNames). */
    static const struct { const char *ax, *ours; } map[] = {
        { "adamw_torch", "adamw" }, { "adamw_torch_fused", "adamw" },
        { "adamw_hf", "adamw" }, { "adamw_apex_fused", "adamw" },
        { "adamw_bnb_8bit", "adam8bit" }, { "paged_adamw_8bit", "adam8bit" },
        { "adamw_8bit", "adam8bit" }, { "paged_adamw_32bit", "adamw" },
        { "adafactor", "adafactor" }, { "lion_pytorch", "lion" },
        { "lion_8bit", "lion" }, { "sgd", "sgd" },
    };
    const char *name = NULL;
    size_t i;
    int rc;

    if ((rc = ts_import_str(o, "optimizer", false, &name, err)) <= 0)
        return rc;
    for (i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].ax, name) == 0)
            return ts_import_set_str(im, TS_FI_OPTIMIZER, map[i].ours, TS_SRC_AXOLOTL,
                                     AX_PTR "/optimizer", err);
    ts_import_note(im->notes, AX_PTR "/optimizer \"%.*s\" has no state model here: "
                   "optimizer keeps its request or default value", ts_utf8_prec(name, 40), name);
    return 0;
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
        ts_import_note(im->notes, AX_PTR "/deepspeed \"%.*s\" is a path: send that "
                       "file's JSON as deepspeed_config", ts_utf8_prec(ds, 80), ds);
        if (ts_import_set_str(im, TS_FI_FRAMEWORK, "deepspeed", TS_SRC_AXOLOTL,
                              AX_PTR "/deepspeed", err) != 0)
            return -1;
    }
    if ((rc = ts_import_sub(o, "fsdp_config", &fc, err)) < 0)
        return -1;
    if ((fsdp != NULL && !json_is_null(fsdp) && !(json_is_array(fsdp) && json_array_size(fsdp) == 0)) ||
        rc > 0) {
        bool off = false;

        /* FSDP full shard: parameters, gradients and optimizer state
         * sharded over the data-parallel ranks (ZeRO 3). */
        if (ts_import_set_str(im, TS_FI_FRAMEWORK, "fsdp", TS_SRC_AXOLOTL, AX_PTR "/fsdp", err) != 0 ||
            ts_import_set_int(im, TS_FI_ZERO, 3, TS_SRC_AXOLOTL, AX_PTR "/fsdp", err) != 0)
            return -1;
        if (rc > 0 && ts_import_bool(&fc, "fsdp_offload_params", &off, err) < 0)
            return -1;
        if (off &&
            (ts_import_set_bool(im, TS_FI_OFFLOAD_PARAMS, true, TS_SRC_AXOLOTL,
                                AX_PTR "/fsdp_config/fsdp_offload_params", err) != 0 ||
             ts_import_set_bool(im, TS_FI_OFFLOAD_OPTIMIZER, true, TS_SRC_AXOLOTL,
                                AX_PTR "/fsdp_config/fsdp_offload_params", err) != 0))
            return -1;
    }
    return 0;
}

static int ax_map(ts_import *im, const json_t *cfg, ts_api_err *err)
{
    ts_import_obj o = { cfg, AX_PTR };
    const char *base = NULL;
    int64_t v = 0;
    bool b = false;
    int rc;

    if (ts_import_str(&o, "base_model", false, &base, err) < 0)
        return -1;
    if (base != NULL)
        ts_import_note(im->notes, AX_PTR "/base_model \"%.*s\": its shape is not "
                       "fetched; send its config.json as hf_config (or a model preset)",
                       ts_utf8_prec(base, 80), base);
    if ((rc = ts_import_int(&o, "sequence_len", 1, INT64_C(1) << 24, false, &v, err)) < 0)
        return -1;
    if (rc > 0 && ts_import_set_int(im, TS_FI_SEQ, v, TS_SRC_AXOLOTL, AX_PTR "/sequence_len", err) != 0)
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
            if (b && ts_import_set_str(im, TS_FI_ATTENTION, "flash", TS_SRC_AXOLOTL, ptr, err) != 0)
                return -1;
        }
    }
    if (ax_precision(im, &o, err) < 0 || ax_adapter(im, &o, err) < 0 ||
        ax_optimizer(im, &o, err) < 0 || ax_parallel(im, &o, err) < 0)
        return -1;
    return 0;
}

int ts_import_axolotl(ts_import *im, const char *yaml, size_t len, ts_api_err *err)
{
    json_t *cfg;
    int rc;

    if (len > TS_IMPORT_ARGS_MAX) {
        ts_api_err_set(err, "import-too-large", AX_PTR,
                       "axolotl_config is %zu bytes, more than %d", len, TS_IMPORT_ARGS_MAX);
        return -1;
    }
    if (memchr(yaml, '\0', len) != NULL) {
        ts_api_err_set(err, "invalid-value", AX_PTR,
                       "axolotl_config contains a NUL character");
        return -1;
    }
    if ((cfg = yaml_to_json(yaml, len, err)) == NULL)
        return -1;
    rc = ts_import_check_size(cfg, AX_PTR, err) == 0 ? ax_map(im, cfg, err) : -1;
    json_decref(cfg);
    return rc;
}

#endif /* TS_HAVE_YAML */
