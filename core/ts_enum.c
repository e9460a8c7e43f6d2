/*
 * ts_enum.c - public names of the precision, optimizer and recompute
 * enumerations, their parsers, and bytes per element of each precision.
 *
 * The name tables are indexed by the enum value, so a name and its value
 * cannot drift apart; the parsers are a linear scan (a handful of entries).
 */
#include "trainsize.h"

#include <string.h>

static const char *const ts_precision_names[TS_PREC_COUNT] = {
    [TS_PREC_FP32] = "fp32",
    [TS_PREC_BF16] = "bf16",
    [TS_PREC_FP16] = "fp16",
    [TS_PREC_FP8] = "fp8",
};

static const char *const ts_optimizer_names[TS_OPT_COUNT] = {
    [TS_OPT_NONE] = "none",
    [TS_OPT_ADAM] = "adam",
    [TS_OPT_ADAMW] = "adamw",
    [TS_OPT_ADAM8BIT] = "adam8bit",
    [TS_OPT_SGD] = "sgd",
    [TS_OPT_SGD_MOMENTUM] = "sgd_momentum",
    [TS_OPT_ADAFACTOR] = "adafactor",
    [TS_OPT_LION] = "lion",
};

static const char *const ts_recompute_names[TS_RECOMPUTE_COUNT] = {
    [TS_RECOMPUTE_NONE] = "none",
    [TS_RECOMPUTE_SELECTIVE] = "selective",
    [TS_RECOMPUTE_FULL] = "full",
};

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

/* Exact, case-sensitive match: the JSON contract spells names in lower case. */
static ts_status ts_enum_lookup(const char *const *names, int count,
                                const char *s, int *out)
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
    case TS_PREC_FP32: return 4;
    case TS_PREC_BF16: return 2;
    case TS_PREC_FP16: return 2;
    case TS_PREC_FP8:  return 1;
    case TS_PREC_COUNT: break;
    }
    return 0; /* not a precision: callers validate first */
}
