/*
 * ts_guard.c - request deadlines enforced by a watchdog (see ts_guard.h).
 */
#include "ts_guard.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

struct ts_guard_conn {
    ts_guard_conn *prev, *next; /* guarded by ts_guard.lock */
    int fd;
    _Atomic uint_least64_t deadline_ms; /* 0 = none */
    _Atomic uint_least64_t armed_ms;    /* when armed; 0 = disarmed */
    atomic_bool expired;
};

struct ts_guard {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    ts_guard_conn *head;
    size_t count; /* connections on the list */
    bool stop;    /* guarded by lock */
    unsigned tick_ms;
    unsigned pressure_conns, pressure_ms;
    ts_guard_expired_fn on_expired;
    void *cls;
    pthread_t thread;
};

uint64_t ts_guard_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static void *watchdog(void *p)
{
    ts_guard *g = p;
    pthread_mutex_lock(&g->lock);
    while (!g->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)(g->tick_ms % 1000u) * 1000000L;
        until.tv_sec += (time_t)(g->tick_ms / 1000u) + until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        int rc = 0;
        while (!g->stop && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&g->wake, &g->lock, &until);
        if (g->stop)
            break;
        uint64_t now = ts_guard_now_ms();
        bool pressed = g->pressure_conns > 0 && g->count >= g->pressure_conns;
        for (ts_guard_conn *c = g->head; c != NULL; c = c->next) {
            uint64_t d = atomic_load(&c->deadline_ms);
            uint64_t a = atomic_load(&c->armed_ms);
            if (d == 0 || atomic_load(&c->expired))
                continue;
            bool early = pressed && now >= a + g->pressure_ms;
            if (now < d && !early)
                continue;
            atomic_store(&c->expired, true);
            /* Not close(): MHD owns the fd; this only makes its next
             * recv() return 0 so it tears the connection down itself. */
            shutdown(c->fd, SHUT_RDWR);
            if (g->on_expired != NULL)
                g->on_expired(g->cls, now < d);
        }
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

ts_guard *ts_guard_new(unsigned tick_ms, unsigned pressure_conns, unsigned pressure_ms,
                       ts_guard_expired_fn on_expired, void *cls)
{
    ts_guard *g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    g->tick_ms = tick_ms > 0 ? tick_ms : 1;
    g->pressure_conns = pressure_conns;
    g->pressure_ms = pressure_ms;
    g->on_expired = on_expired;
    g->cls = cls;
    pthread_condattr_t ca;
    int ok = pthread_condattr_init(&ca) == 0;
    /* Deadlines are monotonic; so must the wait be. */
    ok = ok && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0;
    ok = ok && pthread_cond_init(&g->wake, &ca) == 0;
    pthread_condattr_destroy(&ca);
    if (!ok) {
        free(g);
        return NULL;
    }
    if (pthread_mutex_init(&g->lock, NULL) != 0) {
        pthread_cond_destroy(&g->wake);
        free(g);
        return NULL;
    }
    /* The watchdog must not take SIGTERM: main() waits for it with
     * sigwait(), and the mask is inherited from the caller. */
    if (pthread_create(&g->thread, NULL, watchdog, g) != 0) {
        pthread_mutex_destroy(&g->lock);
        pthread_cond_destroy(&g->wake);
        free(g);
        return NULL;
    }
    return g;
}

void ts_guard_free(ts_guard *g)
{
    if (g == NULL)
        return;
    pthread_mutex_lock(&g->lock);
    g->stop = true;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->thread, NULL);
    /* Any left (MHD never called "closed"): free them, touch no fd. */
    for (ts_guard_conn *c = g->head, *n; c != NULL; c = n) {
        n = c->next;
        free(c);
    }
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->wake);
    free(g);
}

ts_guard_conn *ts_guard_open(ts_guard *g, int fd)
{
    ts_guard_conn *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->fd = fd;
    atomic_init(&c->deadline_ms, 0);
    atomic_init(&c->armed_ms, 0);
    atomic_init(&c->expired, false);
    pthread_mutex_lock(&g->lock);
    c->next = g->head;
    if (g->head != NULL)
        g->head->prev = c;
    g->head = c;
    g->count++;
    pthread_mutex_unlock(&g->lock);
    return c;
}

void ts_guard_close(ts_guard *g, ts_guard_conn *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&g->lock);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        g->head = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    g->count--;
    pthread_mutex_unlock(&g->lock);
    free(c);
}

void ts_guard_arm(ts_guard_conn *c, unsigned timeout_ms)
{
    if (c == NULL)
        return;
    uint64_t now = ts_guard_now_ms();
    /* armed first: the watchdog never sees a deadline with a stale start */
    atomic_store(&c->armed_ms, timeout_ms == 0 ? 0 : now);
    atomic_store(&c->deadline_ms, timeout_ms == 0 ? 0 : now + timeout_ms);
}

void ts_guard_kill(ts_guard_conn *c)
{
    if (c != NULL)
        shutdown(c->fd, SHUT_RDWR);
}

bool ts_guard_expired(const ts_guard_conn *c)
{
    return c != NULL && atomic_load(&c->expired);
}
