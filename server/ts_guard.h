/*
 * ts_guard.h - per-request deadlines that slow clients cannot stretch.
 *
 * libmicrohttpd's connection timeout counts idle time only, so a client
 * that sends one byte every few seconds (slowloris) keeps its connection,
 * and its slot, for ever.  The guard keeps every open connection in a
 * list with an absolute deadline; a watchdog thread shuts down the socket
 * of any connection still reading its request past it.  MHD then sees
 * end-of-file, closes the connection and frees its slot.
 *
 * Under pressure (at least pressure_conns connections open, e.g. 3/4 of
 * the connection limit) any connection that has spent pressure_ms
 * reading its request is shut down too: a real client sends a request in
 * milliseconds, and without this a flood of slow connections could hold
 * every slot for a full deadline, again and again.
 *
 * The fd is only ever shut down, never closed, and only while the
 * connection is on the list: MHD removes it (ts_guard_close, from the
 * NOTIFY_CONNECTION "closed" callback) before it closes the fd, and both
 * sides hold the guard's mutex, so a recycled fd number is never hit.
 */
#ifndef TS_GUARD_H
#define TS_GUARD_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ts_guard ts_guard;
typedef struct ts_guard_conn ts_guard_conn;

/* Called by the watchdog (with the guard's lock held: keep it short) for
 * each connection it shuts down; pressure is true when the connection was
 * cut early because too many are open, false at its deadline. */
typedef void (*ts_guard_expired_fn)(void *cls, bool pressure);

/* Start the watchdog; it checks every tick_ms.  pressure_conns 0 turns
 * the pressure rule off.  NULL if out of memory or no thread started. */
ts_guard *ts_guard_new(unsigned tick_ms, unsigned pressure_conns, unsigned pressure_ms,
                       ts_guard_expired_fn on_expired, void *cls);
/* Stop the watchdog and free the guard; all connections must be closed. */
void ts_guard_free(ts_guard *g);

/* Track a new connection's socket; its deadline starts disarmed.  NULL if
 * out of memory (the connection then simply has no deadline). */
ts_guard_conn *ts_guard_open(ts_guard *g, int fd);
/* Forget a connection; before its fd is closed.  NULL is ignored. */
void ts_guard_close(ts_guard *g, ts_guard_conn *c);

/* Deadline timeout_ms from now; 0 disarms.  Any thread, no lock. */
void ts_guard_arm(ts_guard_conn *c, unsigned timeout_ms);

/* Shut the connection's socket down now (from its own MHD thread). */
void ts_guard_kill(ts_guard_conn *c);

/* The socket was shut down by the watchdog (deadline passed). */
bool ts_guard_expired(const ts_guard_conn *c);

/* Monotonic clock in ms (exposed for tests). */
uint64_t ts_guard_now_ms(void);

#endif /* TS_GUARD_H */
