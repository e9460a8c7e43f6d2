/*
 * ts_metrics.c - lock-free request counters and latency histogram.
 */
#include "ts_metrics.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ts_buf.h"

#define ROUTES_MAX   48
#define STATUS_LO    100u
#define STATUS_SLOTS 500u /* 100..599 */
#define RENDER_MAX   (1024u * 1024u)

/* Bucket bounds: 100 us .. 10 s covers a cached estimate through a stuck
 * client.  Strings are what Prometheus sees; ns what we compare. */
static const struct {
    const char *le;
    uint64_t ns;
} buckets[] = {
    { "0.0001", 100000u },  { "0.00025", 250000u }, { "0.0005", 500000u },  { "0.001", 1000000u },
    { "0.0025", 2500000u }, { "0.005", 5000000u },  { "0.01", 10000000u },  { "0.025", 25000000u },
    { "0.05", 50000000u },  { "0.1", 100000000u },  { "0.25", 250000000u }, { "0.5", 500000000u },
    { "1", 1000000000u },   { "2.5", 2500000000u }, { "5", 5000000000u },   { "10", 10000000000u },
};
#define NBUCKETS (sizeof buckets / sizeof buckets[0])

static const char *const fixed_routes[] = {
    "/livez", "/readyz", "/metrics", "static", "mhd", "other",
};
#define NFIXED (sizeof fixed_routes / sizeof fixed_routes[0])

struct ts_metrics {
    const char *routes[ROUTES_MAX];
    size_t nroutes;
    size_t other; /* index of "other" */
    const char *version;
    _Atomic uint_least64_t *requests;          /* nroutes * STATUS_SLOTS */
    _Atomic uint_least64_t hist[NBUCKETS + 1]; /* last = above all bounds */
    _Atomic uint_least64_t sum_ns;
    _Atomic long inflight;
    _Atomic uint_least64_t closed[TS_CLOSE_COUNT];
    _Atomic uint_least64_t cache[2]; /* answer cache: [0] misses, [1] hits */
};

static const char *const close_labels[TS_CLOSE_COUNT] = {
    [TS_CLOSE_REQUEST_TIMEOUT] = "request_timeout",
    [TS_CLOSE_BODY_TOO_LARGE] = "body_too_large",
    [TS_CLOSE_BAD_REQUEST] = "bad_request",
    [TS_CLOSE_OVERLOAD] = "overload",
};

static int add_route(ts_metrics *m, const char *label)
{
    for (size_t i = 0; i < m->nroutes; i++)
        if (strcmp(m->routes[i], label) == 0)
            return 0;
    if (m->nroutes == ROUTES_MAX)
        return -1;
    m->routes[m->nroutes++] = label;
    return 0;
}

ts_metrics *ts_metrics_new(const char *const *api_routes, const char *version)
{
    ts_metrics *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    m->version = version ? version : "unknown";
    for (size_t i = 0; api_routes != NULL && api_routes[i] != NULL; i++) {
        /* "POST /v1/plan" -> "/v1/plan"; the label stays static. */
        const char *sp = strchr(api_routes[i], ' ');
        const char *path = sp ? sp + 1 : api_routes[i];
        if (*path != '\0')
            (void)add_route(m, path); /* full table: counted as "other" */
    }
    /* Reserve the fixed labels even if the api table filled the array. */
    if (m->nroutes > ROUTES_MAX - NFIXED)
        m->nroutes = ROUTES_MAX - NFIXED;
    for (size_t i = 0; i < NFIXED; i++)
        (void)add_route(m, fixed_routes[i]);
    m->other = ts_metrics_route(m, "other");

    size_t n = m->nroutes * STATUS_SLOTS;
    m->requests = malloc(n * sizeof *m->requests);
    if (m->requests == NULL) {
        free(m);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        atomic_init(&m->requests[i], 0);
    for (size_t i = 0; i <= NBUCKETS; i++)
        atomic_init(&m->hist[i], 0);
    atomic_init(&m->sum_ns, 0);
    atomic_init(&m->inflight, 0);
    for (size_t i = 0; i < TS_CLOSE_COUNT; i++)
        atomic_init(&m->closed[i], 0);
    atomic_init(&m->cache[0], 0);
    atomic_init(&m->cache[1], 0);
    return m;
}

void ts_metrics_free(ts_metrics *m)
{
    if (m == NULL)
        return;
    free(m->requests);
    free(m);
}

size_t ts_metrics_route(const ts_metrics *m, const char *label)
{
    if (label != NULL)
        for (size_t i = 0; i < m->nroutes; i++)
            if (strcmp(m->routes[i], label) == 0)
                return i;
    return m->other;
}

const char *ts_metrics_route_label(const ts_metrics *m, size_t route)
{
    return route < m->nroutes ? m->routes[route] : "other";
}

void ts_metrics_count(ts_metrics *m, size_t route, unsigned status)
{
    if (route >= m->nroutes)
        route = m->other;
    if (status >= STATUS_LO && status < STATUS_LO + STATUS_SLOTS)
        atomic_fetch_add_explicit(&m->requests[route * STATUS_SLOTS + (status - STATUS_LO)], 1,
                                  memory_order_relaxed);
}

void ts_metrics_observe(ts_metrics *m, size_t route, unsigned status, uint64_t duration_ns)
{
    ts_metrics_count(m, route, status);
    size_t b = 0;
    while (b < NBUCKETS && duration_ns > buckets[b].ns)
        b++;
    atomic_fetch_add_explicit(&m->hist[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->sum_ns, duration_ns, memory_order_relaxed);
}

/* A request's counters are added before it leaves the gauge (release),
 * and /metrics reads the gauge before the counters (acquire): whoever
 * sees a request gone from the gauge sees it counted (C11 7.17.3), which
 * the integration tests' "wait until only this scrape is in flight"
 * relies on; relaxed alone promises that only on x86. */
void ts_metrics_inflight_add(ts_metrics *m, long delta)
{
    atomic_fetch_add_explicit(&m->inflight, delta, memory_order_release);
}

long ts_metrics_inflight(const ts_metrics *m)
{
    return atomic_load_explicit(&m->inflight, memory_order_acquire);
}

void ts_metrics_answer_cache(ts_metrics *m, int hit)
{
    atomic_fetch_add_explicit(&m->cache[hit != 0], 1, memory_order_relaxed);
}

void ts_metrics_closed(ts_metrics *m, ts_close_reason why)
{
    if ((unsigned)why < TS_CLOSE_COUNT)
        atomic_fetch_add_explicit(&m->closed[why], 1, memory_order_relaxed);
}

uint64_t ts_metrics_closed_count(const ts_metrics *m, ts_close_reason why)
{
    if ((unsigned)why >= TS_CLOSE_COUNT)
        return 0;
    return atomic_load_explicit(&m->closed[why], memory_order_relaxed);
}

/* One family each, in exposition order: 1 when the buffer refused it. */
static int render_build_info(ts_buf *b, const ts_metrics *m)
{
    return ts_buf_printf(b,
                         "# HELP trainsize_build_info Build information.\n"
                         "# TYPE trainsize_build_info gauge\n"
                         "trainsize_build_info{version=\"%s\"} 1\n",
                         m->version) != TS_BUF_OK;
}

static int render_inflight(ts_buf *b, const ts_metrics *m)
{
    return ts_buf_printf(b,
                         "# HELP trainsize_inflight_requests Requests being served now.\n"
                         "# TYPE trainsize_inflight_requests gauge\n"
                         "trainsize_inflight_requests %ld\n",
                         ts_metrics_inflight(m)) != TS_BUF_OK;
}

static int render_requests(ts_buf *b, const ts_metrics *m)
{
    int bad = ts_buf_printf(
                  b, "# HELP trainsize_http_requests_total HTTP requests answered, by route and "
                     "status.\n"
                     "# TYPE trainsize_http_requests_total counter\n") != TS_BUF_OK;

    for (size_t r = 0; r < m->nroutes && !bad; r++)
        for (unsigned s = 0; s < STATUS_SLOTS && !bad; s++) {
            uint_least64_t v =
                atomic_load_explicit(&m->requests[r * STATUS_SLOTS + s], memory_order_relaxed);
            if (v == 0)
                continue; /* absent series read as 0 in PromQL */
            bad |=
                ts_buf_printf(b, "trainsize_http_requests_total{route=\"%s\",status=\"%u\"} %llu\n",
                              m->routes[r], s + STATUS_LO, (unsigned long long)v) != TS_BUF_OK;
        }
    return bad;
}

static int render_closed(ts_buf *b, const ts_metrics *m)
{
    int bad =
        ts_buf_printf(b, "# HELP trainsize_connections_closed_total Connections closed by the "
                         "server without an answer, by reason.\n"
                         "# TYPE trainsize_connections_closed_total counter\n") != TS_BUF_OK;
    for (size_t i = 0; i < TS_CLOSE_COUNT && !bad; i++)
        bad |= ts_buf_printf(
                   b, "trainsize_connections_closed_total{reason=\"%s\"} %llu\n", close_labels[i],
                   (unsigned long long)ts_metrics_closed_count(m, (ts_close_reason)i)) != TS_BUF_OK;
    return bad;
}

static int render_cache(ts_buf *b, const ts_metrics *m)
{
    return ts_buf_printf(
               b,
               "# HELP trainsize_answer_cache_total Estimate requests looked up in the "
               "answer cache, by result.\n"
               "# TYPE trainsize_answer_cache_total counter\n"
               "trainsize_answer_cache_total{result=\"hit\"} %llu\n"
               "trainsize_answer_cache_total{result=\"miss\"} %llu\n",
               (unsigned long long)atomic_load_explicit(&m->cache[1], memory_order_relaxed),
               (unsigned long long)atomic_load_explicit(&m->cache[0], memory_order_relaxed)) !=
           TS_BUF_OK;
}

/* One unlabelled series with its HELP and TYPE lines. */
static int render_one(ts_buf *b, const char *name, const char *type, const char *help,
                      unsigned long long v)
{
    return ts_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name, type, name,
                         v) != TS_BUF_OK;
}

/* The work pool's five families, one series each. */
static int render_work(ts_buf *b, const ts_work_stats *w)
{
    const struct {
        const char *name, *type, *help;
        unsigned long long v;
    } f[] = {
        { "trainsize_work_queue_depth", "gauge", "Api requests waiting for a worker.", w->queued },
        { "trainsize_work_busy_workers", "gauge", "Workers computing an api answer now.", w->busy },
        { "trainsize_work_workers", "gauge", "Worker threads (--threads).", w->workers },
        { "trainsize_work_queue_max", "gauge", "Places for waiting api requests (--queue-max).",
          w->queue_max },
        { "trainsize_work_rejected_total", "counter",
          "Api requests refused with 503 server-busy (queue full).", w->rejected },
    };
    int bad = 0;

    for (size_t i = 0; i < sizeof f / sizeof f[0] && !bad; i++)
        bad |= render_one(b, f[i].name, f[i].type, f[i].help, f[i].v);
    return bad;
}

static int render_duration(ts_buf *b, const ts_metrics *m)
{
    int bad =
        ts_buf_printf(b, "# HELP trainsize_http_request_duration_seconds Time from request "
                         "headers to response sent.\n"
                         "# TYPE trainsize_http_request_duration_seconds histogram\n") != TS_BUF_OK;
    /* Cumulative counts; _count is their total so +Inf == _count always,
     * even while other threads keep adding. */
    unsigned long long cum = 0;
    for (size_t i = 0; i <= NBUCKETS && !bad; i++) {
        cum += atomic_load_explicit(&m->hist[i], memory_order_relaxed);
        bad |= ts_buf_printf(b, "trainsize_http_request_duration_seconds_bucket{le=\"%s\"} %llu\n",
                             i < NBUCKETS ? buckets[i].le : "+Inf", cum) != TS_BUF_OK;
    }
    uint_least64_t sum = atomic_load_explicit(&m->sum_ns, memory_order_relaxed);
    if (!bad)
        bad |= ts_buf_printf(b,
                             "trainsize_http_request_duration_seconds_sum %llu.%09llu\n"
                             "trainsize_http_request_duration_seconds_count %llu\n",
                             (unsigned long long)(sum / 1000000000u),
                             (unsigned long long)(sum % 1000000000u), cum) != TS_BUF_OK;
    return bad;
}

char *ts_metrics_render(const ts_metrics *m, const ts_work_stats *work, size_t *len)
{
    ts_buf b;
    ts_buf_init(&b, RENDER_MAX);
    int bad = 0;

    bad |= render_build_info(&b, m);
    bad |= render_inflight(&b, m);
    bad |= render_requests(&b, m);
    bad |= render_closed(&b, m);
    bad |= render_cache(&b, m);
    if (work != NULL && !bad)
        bad |= render_work(&b, work);
    bad |= render_duration(&b, m);

    if (bad) {
        ts_buf_free(&b);
        return NULL;
    }
    return ts_buf_steal(&b, len);
}
