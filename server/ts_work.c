/*
 * ts_work.c - the worker pool (see ts_work.h).
 *
 * One mutex and one condition variable: a job is a pointer swap in and
 * out of a FIFO list, so the lock is held for a few instructions and
 * never while a job runs.
 *
 * Test hooks: built with -DTS_WORK_TEST_HOOKS (only the
 * trainsize-server-hooks binary of tests/server, never the installed
 * server), every worker sleeps $TRAINSIZE_TEST_WORK_SLEEP_MS before each
 * job, so a test can hold every worker busy for as long as it needs.
 */
#include "ts_work.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#ifdef TS_WORK_TEST_HOOKS
#include <stdio.h>
#define TEST_SLEEP_MAX_MS 60000ul
#endif

struct ts_work {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    ts_work_job *head, *tail; /* submitted, not yet taken */
    unsigned reserved;        /* places claimed: waiting or about to be */
    unsigned busy;            /* workers inside run() */
    unsigned workers, queue_max;
    unsigned started; /* threads created */
    uint64_t rejected;
    bool stopping;
    pthread_t *threads;
    unsigned long test_sleep_ms; /* hooks build only; 0 otherwise */
};

static void test_sleep(const ts_work *w)
{
    if (w->test_sleep_ms == 0)
        return;
    struct timespec t = { (time_t)(w->test_sleep_ms / 1000u),
                          (long)(w->test_sleep_ms % 1000u) * 1000000L };
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

static void *worker(void *p)
{
    ts_work *w = p;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (w->head == NULL && !w->stopping)
            pthread_cond_wait(&w->wake, &w->lock);
        /* Stopping: whatever is still queued is cancelled by ts_work_stop. */
        if (w->stopping)
            break;
        ts_work_job *job = w->head;
        w->head = job->next;
        if (w->head == NULL)
            w->tail = NULL;
        w->reserved--;
        w->busy++;
        pthread_mutex_unlock(&w->lock);
        job->next = NULL;
        test_sleep(w);
        job->run(job); /* job is its owner's again from here */
        pthread_mutex_lock(&w->lock);
        w->busy--;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

ts_work_status ts_work_new(unsigned workers, unsigned queue_max, ts_work **out)
{
    *out = NULL;
    if (workers == 0)
        workers = 1;
    ts_work *w = calloc(1, sizeof *w);
    if (w == NULL)
        return TS_WORK_ENOMEM;
    w->threads = calloc(workers, sizeof *w->threads);
    if (w->threads == NULL || pthread_mutex_init(&w->lock, NULL) != 0) {
        free(w->threads);
        free(w);
        return TS_WORK_ENOMEM;
    }
    if (pthread_cond_init(&w->wake, NULL) != 0) {
        pthread_mutex_destroy(&w->lock);
        free(w->threads);
        free(w);
        return TS_WORK_ENOMEM;
    }
    w->workers = workers;
    w->queue_max = queue_max;
#ifdef TS_WORK_TEST_HOOKS
    const char *ms = getenv("TRAINSIZE_TEST_WORK_SLEEP_MS");
    if (ms != NULL) {
        w->test_sleep_ms = strtoul(ms, NULL, 10);
        if (w->test_sleep_ms > TEST_SLEEP_MAX_MS)
            w->test_sleep_ms = TEST_SLEEP_MAX_MS;
        fprintf(stderr, "trainsize-server: test hook: workers sleep %lu ms per job\n",
                w->test_sleep_ms);
    }
#endif
    for (; w->started < workers; w->started++)
        if (pthread_create(&w->threads[w->started], NULL, worker, w) != 0) {
            ts_work_free(w);
            return TS_WORK_ENOMEM;
        }
    *out = w;
    return TS_WORK_OK;
}

bool ts_work_reserve(ts_work *w)
{
    pthread_mutex_lock(&w->lock);
    /* Waiting jobs plus running ones against workers plus queue places:
     * a job reserved while a worker is idle is taken at once. */
    bool ok = !w->stopping &&
              (unsigned long)w->reserved + w->busy < (unsigned long)w->workers + w->queue_max;
    if (ok)
        w->reserved++;
    else
        w->rejected++;
    pthread_mutex_unlock(&w->lock);
    return ok;
}

void ts_work_submit(ts_work *w, ts_work_job *job)
{
    job->next = NULL;
    pthread_mutex_lock(&w->lock);
    if (w->stopping) {
        w->reserved--;
        pthread_mutex_unlock(&w->lock);
        job->cancel(job);
        return;
    }
    if (w->tail != NULL)
        w->tail->next = job;
    else
        w->head = job;
    w->tail = job;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

void ts_work_stats_get(ts_work *w, ts_work_stats *st)
{
    pthread_mutex_lock(&w->lock);
    st->workers = w->workers;
    st->queue_max = w->queue_max;
    st->queued = w->reserved;
    st->busy = w->busy;
    st->rejected = w->rejected;
    pthread_mutex_unlock(&w->lock);
}

void ts_work_stop(ts_work *w)
{
    pthread_mutex_lock(&w->lock);
    if (w->stopping && w->started == 0) {
        pthread_mutex_unlock(&w->lock);
        return;
    }
    w->stopping = true;
    ts_work_job *job = w->head;
    w->head = w->tail = NULL;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    /* Outside the lock: cancel() resumes connections (MHD's own lock). */
    while (job != NULL) {
        ts_work_job *next = job->next;
        pthread_mutex_lock(&w->lock);
        w->reserved--;
        pthread_mutex_unlock(&w->lock);
        job->next = NULL;
        job->cancel(job);
        job = next;
    }
    for (unsigned i = 0; i < w->started; i++)
        pthread_join(w->threads[i], NULL);
    w->started = 0;
}

void ts_work_free(ts_work *w)
{
    if (w == NULL)
        return;
    ts_work_stop(w);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w->threads);
    free(w);
}
