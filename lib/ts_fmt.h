/*
 * ts_fmt.h - the one formatter of human-readable quantities.
 *
 * Every "human" string of an answer is written by ts_fmt_human() with the
 * kind and unit its row of the output-terms table (ts_terms.c) names.  The
 * module depends on nothing but libc and libm, so the CLI compiles the
 * same file for the few figures it derives itself (a margin, a sum of
 * stage terms): the API and the CLI cannot round differently.
 */
#ifndef TS_FMT_H
#define TS_FMT_H

#include <stddef.h>

/* How a value is rounded and labelled.  Three significant digits without
 * exponent notation below 1000 (1.23, 12.3, 123) unless said otherwise. */
typedef enum ts_fmt_kind {
    TS_FMT_BYTES = 0, /* binary prefixes: 80e9 -> "74.5 GiB"; below 1 KiB "512 B" */
    TS_FMT_FLOPS,     /* "3.6e25 FLOP" (exponent from 1000 on) */
    TS_FMT_SECONDS,   /* the largest sensible unit: "250 ms", "3.00 h", "54.2 days" */
    TS_FMT_COUNT,     /* decimal suffix k M B T, then the unit: "30.8M GPU-hours", "8.03B" */
    TS_FMT_FRACTION,  /* as a percentage: 0.0125 -> "1.25 %" */
    TS_FMT_SI, /* SI prefix on the unit: 9.89e14 FLOP/s -> "989 TFLOP/s", 80e9 B -> "80.0 GB" */
    TS_FMT_INTEGER, /* rounded to a whole number, then the unit: "8", "3 copies" */
    TS_FMT_PLAIN,   /* small numbers, 3 significant digits, no padding zeros: "16 B", "2.5 B" */
    TS_FMT_KIND_COUNT
} ts_fmt_kind;

/* Longest string ts_fmt_human writes for any finite value and a unit of
 * up to 24 bytes, with its NUL. */
#define TS_FMT_HUMAN_LEN 64

/* Write v into buf (always NUL-terminated when size > 0).  unit is the
 * value's unit as the terms table spells it; COUNT and SI print it after
 * the number ("" or NULL: none), the other kinds imply theirs.  Non-finite
 * values print as "n/a" (the API answers 422 before one is written).
 * Returns the text's length. */
size_t ts_fmt_human(char *buf, size_t size, double v, ts_fmt_kind kind, const char *unit);

/* "bytes", "flops", ...: the kind's name in generated docs. */
const char *ts_fmt_kind_name(ts_fmt_kind kind);

#endif /* TS_FMT_H */
