/*
 * ts_error.c - status strings and the caller-owned error struct.
 *
 * Modelled on jansson's json_error_t: the callee fills a fixed-size struct
 * the caller owns, so reporting an error never allocates and never fails.
 */
#include "ts_internal.h"

#include <stdarg.h>
#include <stdio.h>

const char *ts_strerror(ts_status code)
{
    switch (code) {
    case TS_OK:
        return "ok";
    case TS_EINVAL:
        return "invalid input";
    case TS_ERANGE:
        return "result out of range";
    case TS_EINCOMPAT:
        return "incompatible options";
    case TS_ENOTFOUND:
        return "not found";
    case TS_ENOFIT:
        return "does not fit";
    }
    return "unknown status";
}

ts_status ts_error_set(ts_error *err, ts_status code, const char *field, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return code;
    err->code = code;
    /* snprintf truncates safely; both buffers are always NUL-terminated. */
    snprintf(err->field, sizeof err->field, "%s", field != NULL ? field : "");
    if (fmt == NULL) {
        snprintf(err->text, sizeof err->text, "%s", ts_strerror(code));
        return code;
    }
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof err->text, fmt, ap);
    va_end(ap);
    return code;
}

/* ---- helpers shared by the modules (ts_internal.h) ----------------- */

void ts_term_set(ts_term *t, double value, const char *formula, const char *assumptions)
{
    t->value = value;
    t->formula = formula;
    t->assumptions = assumptions;
}

ts_status ts_check_int(int64_t v, int64_t lo, int64_t hi, const char *field, ts_error *err)
{
    if (v < lo || v > hi)
        return ts_error_set(err, TS_EINVAL, field, "%s must be in [%lld, %lld], got %lld", field,
                            (long long)lo, (long long)hi, (long long)v);
    return TS_OK;
}
