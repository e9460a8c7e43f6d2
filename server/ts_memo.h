/*
 * ts_memo.h - answers of recent estimate requests, sent again as they are.
 *
 * Every POST /v1/... answer is a pure function of the route, the
 * Content-Type and the body bytes (no clock, no randomness, no state: the
 * api has none), and the same request comes back often: a dashboard
 * re-sending the form, CI checking the same plan file on every pull
 * request, a scheduler polling.  So the server keeps the built responses
 * of the last such 200s, keyed by exactly those bytes, and queues the
 * same libmicrohttpd response again on a hit (MHD counts its references,
 * as for the catalogue answers): the estimate, the JSON and the headers
 * are not made again.  A hit compares the whole key, never the hash
 * alone.  Bounded in entries and bytes; --answer-cache 0 turns it off.
 *
 * Direct-mapped: slot = hash mod size, a new answer replaces the one in
 * its slot.  One mutex; the critical sections are a comparison and a
 * reference count (MHD_queue_response), no I/O.
 */
#ifndef TS_MEMO_H
#define TS_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

/* Largest request body and answer remembered: larger ones are rare
 * (imported configs) and would crowd out the rest. */
#define TS_MEMO_KEY_MAX    (8u * 1024u)
#define TS_MEMO_ANSWER_MAX (256u * 1024u)

typedef struct ts_memo ts_memo;

/* A table of `slots` entries (rounded up to a power of two) holding at
 * most max_bytes of keys and answers.  NULL when out of memory. */
ts_memo *ts_memo_new(size_t slots, size_t max_bytes);
void ts_memo_free(ts_memo *m);

/* What a request is looked up by. */
typedef struct ts_memo_key {
    const char *path, *ctype, *body;
    size_t path_len, ctype_len, body_len;
    uint64_t hash;
} ts_memo_key;

/* Fill k (pointers borrowed) and its hash (FNV-1a over the three parts
 * and their lengths).  0 when the request is not to be remembered (too
 * large), 1 otherwise. */
int ts_memo_key_init(ts_memo_key *k, const char *path, const char *ctype, const char *body,
                     size_t body_len);

/* On a hit, queue the remembered answer on c with `status` and fill
 * *route and *len; returns MHD_YES or MHD_NO as MHD_queue_response did.
 * Returns -1 when there is no such answer (nothing queued). */
int ts_memo_serve(ts_memo *m, const ts_memo_key *k, struct MHD_Connection *c, size_t *route,
                  size_t *len);

/* Remember resp (a 200 of body length len, already queued) as the answer
 * to k: takes over the caller's reference to resp whatever happens (it
 * is destroyed at once when it is not kept). */
void ts_memo_put(ts_memo *m, const ts_memo_key *k, struct MHD_Response *resp, size_t route,
                 size_t len);

/* Answers held and their bytes (keys included), for tests; hits and
 * misses are counted in /metrics (trainsize_answer_cache_total). */
void ts_memo_stats(ts_memo *m, size_t *entries, size_t *bytes);

#endif /* TS_MEMO_H */
