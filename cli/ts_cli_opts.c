/*
 * ts_cli_opts.c - run options table and parser.
 */
#include "ts_cli_opts.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every run field of api/CONTRACT.md, in the contract's order. */
static const ts_cli_field ts_cli_field_table[] = {
    {"model", TS_CLI_STR, false, "preset id, e.g. llama3-70b (see: trainsize presets)"},
    {"params", TS_CLI_NUM, true, "plain parameter count, e.g. 7e9 or 7B"},
    {"layers", TS_CLI_INT, false, "shape: transformer layers"},
    {"hidden", TS_CLI_INT, false, "shape: hidden size"},
    {"heads", TS_CLI_INT, false, "shape: attention heads"},
    {"kv_heads", TS_CLI_INT, false, "shape: KV heads (GQA)"},
    {"ffn", TS_CLI_INT, false, "shape: FFN inner width"},
    {"vocab", TS_CLI_INT, false, "shape: vocabulary size"},
    {"experts", TS_CLI_INT, false, "shape: MoE experts per layer"},
    {"top_k", TS_CLI_INT, false, "shape: experts active per token"},
    {"gated", TS_CLI_BOOL, false, "shape: SwiGLU FFN"},
    {"tied_embeddings", TS_CLI_BOOL, false, "shape: output head tied to embedding"},
    {"head_dim", TS_CLI_INT, false, "shape: per-head width (0 = hidden/heads)"},
    {"qkv_bias", TS_CLI_BOOL, false, "shape: q/k/v biases"},
    {"out_bias", TS_CLI_BOOL, false, "shape: attention output bias"},
    {"mlp_bias", TS_CLI_BOOL, false, "shape: MLP biases"},
    {"norm_bias", TS_CLI_BOOL, false, "shape: LayerNorm with bias"},
    {"norms_per_layer", TS_CLI_INT, false, "shape: norm vectors per layer (0 = 2)"},
    {"qk_norm", TS_CLI_BOOL, false, "shape: RMSNorm on q and k"},
    {"pos_embeddings", TS_CLI_INT, false, "shape: learned position rows (0 = rotary)"},
    {"moe_ffn", TS_CLI_INT, false, "shape: expert inner width (0 = ffn)"},
    {"shared_experts", TS_CLI_INT, false, "shape: always-active experts"},
    {"dense_layers", TS_CLI_INT, false, "shape: first layers with a dense FFN"},
    {"router_bias", TS_CLI_BOOL, false, "shape: per-expert router bias"},
    {"q_lora_rank", TS_CLI_INT, false, "MLA: q rank (0 = full)"},
    {"kv_lora_rank", TS_CLI_INT, false, "MLA: compressed k/v rank (> 0 turns MLA on)"},
    {"qk_nope_dim", TS_CLI_INT, false, "MLA: per-head q/k width without rotary"},
    {"qk_rope_dim", TS_CLI_INT, false, "MLA: per-head rotary width"},
    {"v_head_dim", TS_CLI_INT, false, "MLA: per-head value width"},
    {"precision", TS_CLI_STR, false, "weights: fp32|bf16|fp16|fp8"},
    {"grad_precision", TS_CLI_STR, false, "gradients: fp32|bf16|fp16|fp8"},
    {"compute_precision", TS_CLI_STR, false, "selects the GPU peak: fp32|bf16|fp16|fp8"},
    {"master_weights", TS_CLI_BOOL, false, "fp32 master copy"},
    {"optimizer", TS_CLI_STR, false, "adamw|adam|adam8bit|sgd|sgd_momentum|adafactor|lion|none"},
    {"trainable_fraction", TS_CLI_NUM, false, "(0,1], LoRA-style"},
    {"seq", TS_CLI_INT, false, "sequence length"},
    {"micro_batch", TS_CLI_INT, false, "sequences per GPU per micro-step"},
    {"global_batch", TS_CLI_INT, false, "sequences per step"},
    {"tokens", TS_CLI_NUM, true, "training tokens, e.g. 15e12 or 15T"},
    {"gpus", TS_CLI_INT, false, "total GPUs"},
    {"dp", TS_CLI_INT, false, "data parallel degree"},
    {"tp", TS_CLI_INT, false, "tensor parallel degree"},
    {"pp", TS_CLI_INT, false, "pipeline parallel degree"},
    {"cp", TS_CLI_INT, false, "context parallel degree"},
    {"ep", TS_CLI_INT, false, "expert parallel degree"},
    {"zero", TS_CLI_INT, false, "ZeRO stage 0..3 (3 = FSDP)"},
    {"sequence_parallel", TS_CLI_BOOL, false, "Megatron sequence parallelism"},
    {"recompute", TS_CLI_STR, false, "none|selective|full"},
    {"offload_optimizer", TS_CLI_BOOL, false, "master + optimizer to host RAM"},
    {"offload_params", TS_CLI_BOOL, false, "ZeRO-3: weights to host RAM"},
    {"gpu", TS_CLI_STR, false, "GPU id, e.g. h100-sxm (see: trainsize gpus)"},
    {"hbm_gb", TS_CLI_NUM, false, "override the GPU's HBM, GB"},
    {"peak_tflops", TS_CLI_NUM, false, "override the GPU's bf16-class peak, TFLOP/s"},
    {"gpus_per_node", TS_CLI_INT, false, "GPUs per node"},
    {"mfu", TS_CLI_NUM, false, "model FLOPs utilisation (0,1]"},
    {"overhead_gib", TS_CLI_NUM, false, "fixed per-GPU overhead, GiB"},
    {"fragmentation", TS_CLI_NUM, false, "allocator slack fraction [0,0.5)"},
    {"attention_flops", TS_CLI_BOOL, false, "time from attention-aware FLOPs"},
    {"writer_gbps", TS_CLI_NUM, false, "checkpoint: per-rank write GB/s"},
    {"nvme_gbps", TS_CLI_NUM, false, "checkpoint: node NVMe GB/s"},
    {"shared_gbps", TS_CLI_NUM, false, "checkpoint: shared FS aggregate GB/s"},
    {"object_gbps", TS_CLI_NUM, false, "checkpoint: object store aggregate GB/s"},
    {"nvme_interval_min", TS_CLI_NUM, false, "checkpoint: NVMe interval, minutes"},
    {"shared_interval_min", TS_CLI_NUM, false, "checkpoint: shared FS interval, minutes"},
    {"object_interval_min", TS_CLI_NUM, false, "checkpoint: object store interval, minutes"},
    {"nvme_keep", TS_CLI_INT, false, "checkpoint: NVMe copies kept"},
    {"shared_keep", TS_CLI_INT, false, "checkpoint: shared FS copies kept"},
    {"object_keep", TS_CLI_INT, false, "checkpoint: object store copies kept"},
    {"ckpt_grads", TS_CLI_BOOL, false, "checkpoint: include gradients"},
    {"parallel_save", TS_CLI_BOOL, false, "checkpoint: DP ranks split the write"},
    {"gpu_mtbf_hours", TS_CLI_NUM, false, "per-GPU MTBF, hours"},
    {"job_mtbf_hours", TS_CLI_NUM, false, "whole-job MTBF, hours"},
    {"framework", TS_CLI_STR, false, "megatron|fsdp|deepspeed (buffers it holds)"},
    {"attention", TS_CLI_STR, false, "flash|eager"},
    {"dropout", TS_CLI_BOOL, false, "dropout masks kept"},
    {"norm", TS_CLI_STR, false, "rmsnorm|layernorm"},
    {"pp_schedule", TS_CLI_STR, false, "1f1b|interleaved"},
    {"vpp", TS_CLI_INT, false, "virtual pipeline stages per rank"},
    {"first_stage_layers", TS_CLI_INT, false, "layers on the first stage (0 = even)"},
    {"last_stage_layers", TS_CLI_INT, false, "layers on the last stage (0 = even)"},
    {"loss_chunks", TS_CLI_INT, false, "chunked cross-entropy chunks"},
    {"optimizer_precision", TS_CLI_STR, false, "optimizer states: fp32|bf16"},
    {"lora_rank", TS_CLI_INT, false, "LoRA rank (0 = full training)"},
    {"frozen_precision", TS_CLI_STR, false, "frozen base under LoRA: bf16|int8|nf4"},
    {"hbm_gib", TS_CLI_NUM, false, "override the GPU's HBM, GiB"},
};

#define TS_CLI_NFIELDS (sizeof ts_cli_field_table / sizeof ts_cli_field_table[0])
#define TS_CLI_NAME_MAX 40

static ts_cli_status opt_fail(ts_cli_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static ts_cli_status opt_fail(ts_cli_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof err->text, fmt, ap);
    va_end(ap);
    return TS_CLI_EUSAGE;
}

const ts_cli_field *ts_cli_fields(size_t *count)
{
    *count = TS_CLI_NFIELDS;
    return ts_cli_field_table;
}

const ts_cli_field *ts_cli_field_find(const char *json_name)
{
    for (size_t i = 0; i < TS_CLI_NFIELDS; i++)
        if (strcmp(ts_cli_field_table[i].name, json_name) == 0)
            return &ts_cli_field_table[i];
    return NULL;
}

/* "micro-batch" (len bytes) -> "micro_batch"; false when it does not fit. */
static bool opt_to_json_name(const char *opt, size_t len, char *out, size_t cap)
{
    if (len == 0 || len >= cap)
        return false;
    for (size_t i = 0; i < len; i++)
        out[i] = opt[i] == '-' ? '_' : opt[i];
    out[len] = '\0';
    return true;
}

static bool parse_int(const char *s, json_int_t *out)
{
    char *end;
    long long v;

    if (*s == '\0')
        return false;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = (json_int_t)v;
    return true;
}

static bool parse_num(const char *s, bool suffix, double *out)
{
    char *end;
    double v, mul = 1.0;

    if (*s == '\0')
        return false;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s)
        return false;
    if (suffix && *end != '\0' && end[1] == '\0') {
        /* decimal multipliers, as model cards write them: 70B, 15T */
        switch (*end) {
        case 'k': case 'K': mul = 1e3; break;
        case 'm': case 'M': mul = 1e6; break;
        case 'b': case 'B': case 'g': case 'G': mul = 1e9; break;
        case 't': case 'T': mul = 1e12; break;
        default: return false;
        }
        end++;
    }
    if (*end != '\0')
        return false;
    v *= mul;
    if (!isfinite(v))
        return false;
    *out = v;
    return true;
}

static int parse_bool(const char *s)
{
    if (!strcmp(s, "true") || !strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "on"))
        return 1;
    if (!strcmp(s, "false") || !strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "off"))
        return 0;
    return -1;
}

json_t *ts_cli_typed_value(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);

    /* bare words (h100-sxm, bf16) are strings; "\"8\"" forces a string */
    if (!v)
        v = json_string(text);
    return v;
}

static ts_cli_status set_field(json_t *run, const char *name, json_t *v)
{
    if (!v)
        return TS_CLI_ENOMEM;
    if (json_object_set_new(run, name, v) != 0)
        return TS_CLI_ENOMEM;
    return TS_CLI_OK;
}

static ts_cli_status parse_set(const char *kv, json_t *run, ts_cli_error *err)
{
    const char *eq = strchr(kv, '=');
    char key[TS_CLI_NAME_MAX + 1];
    size_t klen;

    if (!eq)
        return opt_fail(err, "--set needs key=value, got '%s'", kv);
    klen = (size_t)(eq - kv);
    if (klen == 0)
        return opt_fail(err, "--set needs a key before '=', got '%s'", kv);
    if (klen > TS_CLI_NAME_MAX)
        return opt_fail(err, "--set key too long: '%.*s...'", 20, kv);
    memcpy(key, kv, klen);
    key[klen] = '\0';
    /* unknown keys are sent as is: the server rejects them, naming the field */
    return set_field(run, key, ts_cli_typed_value(eq + 1));
}

static ts_cli_status set_typed(const ts_cli_field *f, const char *opt,
                               const char *val, json_t *run, ts_cli_error *err)
{
    json_int_t iv;
    double dv;
    int bv;

    switch (f->kind) {
    case TS_CLI_STR:
        if (*val == '\0')
            return opt_fail(err, "--%s needs a non-empty value", opt);
        return set_field(run, f->name, json_string(val));
    case TS_CLI_INT:
        if (!parse_int(val, &iv))
            return opt_fail(err, "--%s needs an integer, got '%s'", opt, val);
        return set_field(run, f->name, json_integer(iv));
    case TS_CLI_NUM:
        if (!parse_num(val, f->suffix, &dv))
            return opt_fail(err, "--%s needs a finite number%s, got '%s'", opt,
                            f->suffix ? " (suffix k, M, B, T allowed)" : "", val);
        /* whole numbers go out as integers so 7e9 reads as 7000000000 */
        if (dv == floor(dv) && fabs(dv) < 9e15)
            return set_field(run, f->name, json_integer((json_int_t)dv));
        return set_field(run, f->name, json_real(dv));
    case TS_CLI_BOOL:
        bv = parse_bool(val);
        if (bv < 0)
            return opt_fail(err, "--%s needs true or false, got '%s'", opt, val);
        return set_field(run, f->name, json_boolean(bv));
    }
    return opt_fail(err, "--%s: internal error", opt);
}

ts_cli_status ts_cli_parse_run_option(int argc, char **argv, int *i,
                                      json_t *run, ts_cli_error *err)
{
    const char *arg = argv[*i];
    const char *opt, *eq, *val = NULL;
    char name[TS_CLI_NAME_MAX + 1];
    const ts_cli_field *f;
    size_t len;
    bool negated = false;

    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
        return TS_CLI_NOMATCH;
    opt = arg + 2;
    eq = strchr(opt, '=');
    len = eq ? (size_t)(eq - opt) : strlen(opt);

    if (len == 3 && strncmp(opt, "set", 3) == 0) {
        if (eq)
            return parse_set(eq + 1, run, err);
        if (*i + 1 >= argc)
            return opt_fail(err, "--set needs key=value");
        return parse_set(argv[++*i], run, err);
    }

    if (!opt_to_json_name(opt, len, name, sizeof name))
        return TS_CLI_NOMATCH;
    f = ts_cli_field_find(name);
    if (!f && strncmp(name, "no_", 3) == 0) {
        f = ts_cli_field_find(name + 3);
        if (!f || f->kind != TS_CLI_BOOL)
            return TS_CLI_NOMATCH;
        if (eq)
            return opt_fail(err, "--%.*s takes no value", (int)len, opt);
        negated = true;
    }
    if (!f)
        return TS_CLI_NOMATCH;

    if (f->kind == TS_CLI_BOOL) {
        /* flags never eat the next argument: "--gated true" would be ambiguous */
        if (negated)
            return set_field(run, f->name, json_false());
        if (!eq)
            return set_field(run, f->name, json_true());
        return set_typed(f, name, eq + 1, run, err);
    }

    if (eq) {
        val = eq + 1;
    } else {
        if (*i + 1 >= argc)
            return opt_fail(err, "--%s needs a value", opt);
        val = argv[++*i];
    }
    /* report the option as typed (--micro-batch), not the JSON name */
    {
        char shown[TS_CLI_NAME_MAX + 1];
        memcpy(shown, opt, len);
        shown[len] = '\0';
        return set_typed(f, shown, val, run, err);
    }
}

void ts_cli_print_run_options(FILE *out)
{
    for (size_t i = 0; i < TS_CLI_NFIELDS; i++) {
        const ts_cli_field *f = &ts_cli_field_table[i];
        char opt[TS_CLI_NAME_MAX + 1];
        const char *arg = "";
        size_t j;
        int pad;

        for (j = 0; f->name[j] && j < TS_CLI_NAME_MAX; j++)
            opt[j] = f->name[j] == '_' ? '-' : f->name[j];
        opt[j] = '\0';
        switch (f->kind) {
        case TS_CLI_STR: arg = " NAME"; break;
        case TS_CLI_INT: arg = " N"; break;
        case TS_CLI_NUM: arg = " X"; break;
        case TS_CLI_BOOL: arg = ""; break;
        }
        pad = 24 - (int)(strlen(opt) + strlen(arg));
        fprintf(out, "  --%s%s%*s%s\n", opt, arg, pad > 1 ? pad : 1, "", f->help);
    }
    fprintf(out, "  --set KEY=VALUE           any run field; VALUE as JSON (8, 0.4, true, \"x\") else a string\n");
}
