/*
 * ts_metrics.h - Prometheus counters for the HTTP server.
 *
 * Lock-free: every update is a relaxed C11 atomic add on memory that is
 * allocated once at start-up, so the hot path never locks or mallocs.
 * The registry is owned by the server, not a global.
 */
#ifndef TS_METRICS_H
#define TS_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "ts_work.h"

typedef struct ts_metrics ts_metrics;

/* Route labels: the paths of api_routes ("METHOD /path", NULL-terminated,
 * static), deduplicated, then "/livez", "/readyz", "/metrics", "static",
 * "mhd" (answers libmicrohttpd made itself), "other".  version goes into trainsize_build_info.  NULL if out of memory. */
ts_metrics *ts_metrics_new(const char *const *api_routes, const char *version);
void ts_metrics_free(ts_metrics *m);

/* Index of a route label; unknown labels (and NULL) map to "other". */
size_t ts_metrics_route(const ts_metrics *m, const char *label);
const char *ts_metrics_route_label(const ts_metrics *m, size_t route);

/* One finished request: its route index, HTTP status (100..599; others
 * are ignored) and duration in nanoseconds. */
void ts_metrics_observe(ts_metrics *m, size_t route, unsigned status, uint64_t duration_ns);
/* The same without a duration (answers libmicrohttpd made itself, whose
 * timing we never see): counted, kept out of the histogram. */
void ts_metrics_count(ts_metrics *m, size_t route, unsigned status);

/* Connections the server closed without an answer, by reason. */
typedef enum ts_close_reason {
    TS_CLOSE_REQUEST_TIMEOUT = 0, /* headers + body not in by the deadline */
    TS_CLOSE_BODY_TOO_LARGE,      /* chunked body crossed the cap mid-upload */
    TS_CLOSE_BAD_REQUEST,         /* request line MHD would hold (too many args) */
    TS_CLOSE_OVERLOAD,            /* slow request cut early: slots nearly full */
    TS_CLOSE_COUNT
} ts_close_reason;
void ts_metrics_closed(ts_metrics *m, ts_close_reason why);
uint64_t ts_metrics_closed_count(const ts_metrics *m, ts_close_reason why);

/* An estimate request looked up in the answer cache (server/ts_memo.h). */
void ts_metrics_answer_cache(ts_metrics *m, int hit);

void ts_metrics_inflight_add(ts_metrics *m, long delta);
long ts_metrics_inflight(const ts_metrics *m);

/* Text exposition format 0.0.4; malloc'd, caller frees.  NULL if out of
 * memory.  work (NULL: left out) is the worker pool's snapshot: queue
 * depth, busy workers, capacity and refusals. */
char *ts_metrics_render(const ts_metrics *m, const ts_work_stats *work, size_t *len);

#endif /* TS_METRICS_H */
