/*
 * ts_budget.c - the work budget one request's loops share (trainsize.h,
 * "Work budget").  Counting, not timing: the core reads no clock, so a
 * request's count, and where it stops, is the same on every run.
 */
#include "ts_internal.h"

void ts_budget_init(ts_budget *b, uint64_t limit)
{
    if (b == NULL)
        return;
    b->used = 0;
    b->limit = limit > 0 ? limit : TS_BUDGET_DEFAULT;
    b->exhausted = false;
}

bool ts_budget_take(ts_budget *b, uint64_t units)
{
    /* used <= limit always holds, so limit - used cannot wrap. */
    if (b->exhausted || units > b->limit - b->used) {
        b->exhausted = true;
        return false;
    }
    b->used += units;
    return true;
}
