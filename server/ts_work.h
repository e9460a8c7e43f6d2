/*
 * ts_work.h - a bounded pool of worker threads for the api's work.
 *
 * libmicrohttpd's own threads read requests and write answers; anything
 * that computes (estimate, search, fit, plan, import) is handed to this
 * pool, so a few slow requests can hold the workers but never the threads
 * that answer /livez, /readyz, /metrics and static files (issue 22).
 * The queue is bounded: when `workers` jobs run and `queue_max` more
 * wait, a new one is refused at once (the server answers 503) instead of
 * waiting behind them.
 *
 * A job is a struct the caller owns (embedded in its request); the pool
 * only links it.  Two steps let the caller make itself ready before any
 * worker can see the job: ts_work_reserve() claims a place (or refuses),
 * then ts_work_submit() hands the job over; between the two the server
 * suspends the connection, so a worker's resume always follows it.
 */
#ifndef TS_WORK_H
#define TS_WORK_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ts_work ts_work;

typedef struct ts_work_job ts_work_job;
struct ts_work_job {
    ts_work_job *next; /* the pool's link, while queued */
    /* On a worker thread.  The pool never touches the job after run()
     * returns, so run() may hand it back to its owner at its end. */
    void (*run)(ts_work_job *job);
    /* Instead of run(), for a job the pool will not run because it is
     * stopping; called on the thread that stops it (or submits). */
    void (*cancel)(ts_work_job *job);
};

/* Counts for /metrics: a snapshot, each value read under the lock. */
typedef struct ts_work_stats {
    unsigned workers;   /* threads */
    unsigned queue_max; /* places for waiting jobs */
    unsigned queued;    /* jobs waiting (reserved or submitted) */
    unsigned busy;      /* workers running a job */
    uint64_t rejected;  /* ts_work_reserve() refusals since start */
} ts_work_stats;

typedef enum ts_work_status {
    TS_WORK_OK = 0,
    TS_WORK_ENOMEM, /* no memory or no thread could be started */
} ts_work_status;

/* Start `workers` threads (>= 1) with room for queue_max waiting jobs
 * (0: none wait, a job is taken only by an idle worker). */
ts_work_status ts_work_new(unsigned workers, unsigned queue_max, ts_work **out);

/* Claim a place for one job: true when a worker is idle or a queue place
 * is free, false (counted as rejected) when full or stopping.  Every true
 * must be followed by one ts_work_submit(). */
bool ts_work_reserve(ts_work *w);

/* Queue a job on the place reserved for it.  When the pool has been
 * stopped since, job->cancel runs here instead. */
void ts_work_submit(ts_work *w, ts_work_job *job);

void ts_work_stats_get(ts_work *w, ts_work_stats *st);

/* Refuse new jobs, cancel the waiting ones, let the running ones finish
 * and join the threads.  Idempotent. */
void ts_work_stop(ts_work *w);

/* Stop (if not yet) and free.  NULL is ignored. */
void ts_work_free(ts_work *w);

#endif /* TS_WORK_H */
