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

#endif /* TS_INTERNAL_H */
