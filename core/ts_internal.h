/*
 * ts_internal.h - helpers shared by the core's modules; not installed,
 * not part of the public interface (trainsize.h).
 */
#ifndef TS_INTERNAL_H
#define TS_INTERNAL_H

#include "trainsize.h"

/* Fill one reported figure; formula and assumptions are static strings. */
void ts_term_set(ts_term *t, double value, const char *formula,
                 const char *assumptions);

/* TS_OK when lo <= v <= hi, else TS_EINVAL naming field and the range. */
ts_status ts_check_int(int64_t v, int64_t lo, int64_t hi, const char *field,
                       ts_error *err);

/* Step model on an already resolved run and its params (no resolution,
 * no error text: the search calls it in its inner loop).  TS_EINCOMPAT:
 * no peak at the compute precision; TS_ERANGE: not finite. */
ts_status ts_step_eval(const ts_run *r, const ts_params *p, ts_step *out);

#endif /* TS_INTERNAL_H */
