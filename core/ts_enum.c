/*
 * ts_enum.c - public names of the precision, optimizer and recompute
 * enumerations, their parsers, and bytes per element of each precision.
 *
 * The name tables are indexed by the enum value, so a name and its value
 * cannot drift apart; the parsers are a linear scan (a handful of entries).
 * Names and values are the field registry's (ts_fields.def), which the
 * API's enum members use too.
 */
#include "trainsize.h"
#include "ts_fields.h"

#include <string.h>

/* The names come from the registry's value lists (ts_fields.def, via
 * ts_fields.h), which list each enumeration in the API's order; indexed
 * by the value here.  Every enumerator has its name: the list and the
 * enum have one length. */
#define TS_ENUM_NAME(c, s) [c] = s,
#define TS_ENUM_ONE(c, s)  +1
#define TS_ENUM_NAMES(list, count, table)                           \
    static const char *const table[count] = { list(TS_ENUM_NAME) }; \
    _Static_assert(0 list(TS_ENUM_ONE) == (count), #list " (ts_fields.def) names every " #count)

TS_ENUM_NAMES(TS_VALUES_PRECISION, TS_PREC_COUNT, ts_precision_names);
TS_ENUM_NAMES(TS_VALUES_OPTIMIZER, TS_OPT_COUNT, ts_optimizer_names);
TS_ENUM_NAMES(TS_VALUES_RECOMPUTE, TS_RECOMPUTE_COUNT, ts_recompute_names);
TS_ENUM_NAMES(TS_VALUES_FRAMEWORK, TS_FW_COUNT, ts_framework_names);
TS_ENUM_NAMES(TS_VALUES_ATTENTION, TS_ATTN_COUNT, ts_attention_names);
TS_ENUM_NAMES(TS_VALUES_PP_SCHEDULE, TS_PP_COUNT, ts_pp_schedule_names);
TS_ENUM_NAMES(TS_VALUES_QUANT, TS_QUANT_COUNT, ts_quant_names);
TS_ENUM_NAMES(TS_VALUES_NORM, TS_NORM_COUNT, ts_norm_names);
TS_ENUM_NAMES(TS_VALUES_RECOMPUTE_IMPL, TS_RIMPL_COUNT, ts_recompute_impl_names);
TS_ENUM_NAMES(TS_VALUES_FSDP_IMPL, TS_FSDP_COUNT, ts_fsdp_impl_names);
TS_ENUM_NAMES(TS_VALUES_LOSS_IMPL, TS_LOSS_COUNT, ts_loss_impl_names);
TS_ENUM_NAMES(TS_VALUES_ADAPTER_PRECISION, TS_ADAPTER_COUNT, ts_adapter_precision_names);
TS_ENUM_NAMES(TS_VALUES_LORA_IMPL, TS_LORA_IMPL_COUNT, ts_lora_impl_names);
TS_ENUM_NAMES(TS_VALUES_LAYER_IMPL, TS_LAYER_COUNT, ts_layer_impl_names);
TS_ENUM_NAMES(TS_VALUES_NVLINK_TOPOLOGY, TS_TOPO_COUNT, ts_link_topology_names);

/* Out-of-range values get a fixed marker rather than NULL so callers can
 * print any enum without a check. */
#define TS_ENUM_UNKNOWN "unknown"

const char *ts_precision_name(ts_precision p)
{
    return (unsigned)p < TS_PREC_COUNT ? ts_precision_names[p] : TS_ENUM_UNKNOWN;
}

const char *ts_optimizer_name(ts_optimizer o)
{
    return (unsigned)o < TS_OPT_COUNT ? ts_optimizer_names[o] : TS_ENUM_UNKNOWN;
}

const char *ts_recompute_name(ts_recompute r)
{
    return (unsigned)r < TS_RECOMPUTE_COUNT ? ts_recompute_names[r] : TS_ENUM_UNKNOWN;
}

const char *ts_framework_name(ts_framework f)
{
    return (unsigned)f < TS_FW_COUNT ? ts_framework_names[f] : TS_ENUM_UNKNOWN;
}

const char *ts_recompute_impl_name(ts_recompute_impl i)
{
    return (unsigned)i < TS_RIMPL_COUNT ? ts_recompute_impl_names[i] : TS_ENUM_UNKNOWN;
}

const char *ts_adapter_precision_name(ts_adapter_precision a)
{
    return (unsigned)a < TS_ADAPTER_COUNT ? ts_adapter_precision_names[a] : TS_ENUM_UNKNOWN;
}

const char *ts_lora_impl_name(ts_lora_impl i)
{
    return (unsigned)i < TS_LORA_IMPL_COUNT ? ts_lora_impl_names[i] : TS_ENUM_UNKNOWN;
}

const char *ts_layer_impl_name(ts_layer_impl i)
{
    return (unsigned)i < TS_LAYER_COUNT ? ts_layer_impl_names[i] : TS_ENUM_UNKNOWN;
}

const char *ts_link_topology_name(ts_link_topology t)
{
    return (unsigned)t < TS_TOPO_COUNT ? ts_link_topology_names[t] : TS_ENUM_UNKNOWN;
}

const char *ts_fsdp_impl_name(ts_fsdp_impl i)
{
    return (unsigned)i < TS_FSDP_COUNT ? ts_fsdp_impl_names[i] : TS_ENUM_UNKNOWN;
}

const char *ts_loss_impl_name(ts_loss_impl i)
{
    return (unsigned)i < TS_LOSS_COUNT ? ts_loss_impl_names[i] : TS_ENUM_UNKNOWN;
}

const char *ts_attention_name(ts_attention a)
{
    return (unsigned)a < TS_ATTN_COUNT ? ts_attention_names[a] : TS_ENUM_UNKNOWN;
}

const char *ts_pp_schedule_name(ts_pp_schedule s)
{
    return (unsigned)s < TS_PP_COUNT ? ts_pp_schedule_names[s] : TS_ENUM_UNKNOWN;
}

const char *ts_quant_name(ts_quant q)
{
    return (unsigned)q < TS_QUANT_COUNT ? ts_quant_names[q] : TS_ENUM_UNKNOWN;
}

const char *ts_norm_name(ts_norm n)
{
    return (unsigned)n < TS_NORM_COUNT ? ts_norm_names[n] : TS_ENUM_UNKNOWN;
}

/* Exact, case-sensitive match: the JSON contract spells names in lower case. */
static ts_status ts_enum_lookup(const char *const *names, int count, const char *s, int *out)
{
    int i;

    if (s == NULL)
        return TS_EINVAL;
    for (i = 0; i < count; i++) {
        if (strcmp(names[i], s) == 0) {
            *out = i;
            return TS_OK;
        }
    }
    return TS_EINVAL;
}

ts_status ts_precision_parse(const char *s, ts_precision *out)
{
    int v;

    if (out == NULL || ts_enum_lookup(ts_precision_names, TS_PREC_COUNT, s, &v) != TS_OK)
        return TS_EINVAL;
    *out = (ts_precision)v;
    return TS_OK;
}

ts_status ts_optimizer_parse(const char *s, ts_optimizer *out)
{
    int v;

    if (out == NULL || ts_enum_lookup(ts_optimizer_names, TS_OPT_COUNT, s, &v) != TS_OK)
        return TS_EINVAL;
    *out = (ts_optimizer)v;
    return TS_OK;
}

ts_status ts_recompute_parse(const char *s, ts_recompute *out)
{
    int v;

    if (out == NULL || ts_enum_lookup(ts_recompute_names, TS_RECOMPUTE_COUNT, s, &v) != TS_OK)
        return TS_EINVAL;
    *out = (ts_recompute)v;
    return TS_OK;
}

double ts_precision_bytes(ts_precision p)
{
    switch (p) {
    case TS_PREC_FP32:
        return 4;
    case TS_PREC_BF16:
        return 2;
    case TS_PREC_FP16:
        return 2;
    case TS_PREC_FP8:
        return 1;
    case TS_PREC_COUNT:
        break;
    }
    return 0; /* not a precision: callers validate first */
}

/* NF4 (Dettmers et al. 2023, QLoRA section 3): 4-bit values, one fp8
 * scale per 64 weights and one fp32 second-level scale per 256 blocks:
 * 0.5 + 1/64 + 4/(64*256) bytes = 0.5159 B/param (paper: 0.127 bits of
 * scales per parameter on top of 4).  int8 (LLM.int8): 1 byte plus an fp32
 * scale per row, negligible.  GPTQ (auto-gptq's packing, group size 128,
 * its default and the Qwen Int4 checkpoints'): int32 qweight of eight
 * 4-bit values, an fp16 scale and a 4-bit zero per 128 weights of a
 * column: 0.5 + 2/128 + 0.5/128 bytes (the per-row g_idx is left out). */
double ts_quant_bytes(ts_quant q)
{
    switch (q) {
    case TS_QUANT_BF16:
        return 2;
    case TS_QUANT_INT8:
    case TS_QUANT_FP8:
        return 1;
    case TS_QUANT_NF4:
        return 0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0);
    case TS_QUANT_GPTQ:
        return 0.5 + 2.5 / 128.0;
    case TS_QUANT_COUNT:
        break;
    }
    return 0;
}
