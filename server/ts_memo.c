/*
 * ts_memo.c - answers of recent estimate requests (see ts_memo.h).
 */
#include "ts_memo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct memo_slot {
    uint64_t hash;
    char *key; /* path, ctype, body, back to back; NULL: empty */
    size_t path_len, ctype_len, body_len;
    struct MHD_Response *resp; /* our reference */
    size_t route;              /* metrics route of the answer */
    size_t len;                /* its body's length */
} memo_slot;

struct ts_memo {
    pthread_mutex_t lock;
    size_t mask;             /* slots - 1 (a power of two) */
    size_t bytes, max_bytes; /* keys + answers held */
    size_t entries;
    memo_slot *slot;
};

ts_memo *ts_memo_new(size_t slots, size_t max_bytes)
{
    size_t n = 1;

    if (slots == 0 || slots > ((size_t)1 << 20))
        return NULL;
    while (n < slots)
        n <<= 1;
    ts_memo *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    m->slot = calloc(n, sizeof *m->slot);
    if (m->slot == NULL || pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m->slot);
        free(m);
        return NULL;
    }
    m->mask = n - 1;
    m->max_bytes = max_bytes;
    return m;
}

static size_t slot_bytes(const memo_slot *e)
{
    return e->path_len + e->ctype_len + e->body_len + e->len;
}

static void slot_clear(ts_memo *m, memo_slot *e)
{
    if (e->key == NULL)
        return;
    m->bytes -= slot_bytes(e);
    m->entries--;
    /* Connections still sending it hold their own references. */
    MHD_destroy_response(e->resp);
    free(e->key);
    memset(e, 0, sizeof *e);
}

void ts_memo_free(ts_memo *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i <= m->mask; i++)
        slot_clear(m, &m->slot[i]);
    pthread_mutex_destroy(&m->lock);
    free(m->slot);
    free(m);
}

/* FNV-1a, 64-bit (Fowler, Noll, Vo): a few ns for a ~60-byte body, and
 * only the slot depends on it (a hit compares the whole key). */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;

    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

int ts_memo_key_init(ts_memo_key *k, const char *path, const char *ctype, const char *body,
                     size_t body_len)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    size_t lens[3];

    k->path = path;
    k->ctype = ctype;
    k->body = body;
    k->path_len = strlen(path);
    k->ctype_len = strlen(ctype);
    k->body_len = body_len;
    if (body_len > TS_MEMO_KEY_MAX || k->path_len + k->ctype_len > TS_MEMO_KEY_MAX)
        return 0;
    /* The lengths too: ("ab", "c") and ("a", "bc") must differ. */
    lens[0] = k->path_len;
    lens[1] = k->ctype_len;
    lens[2] = body_len;
    h = fnv1a(h, lens, sizeof lens);
    h = fnv1a(h, path, k->path_len);
    h = fnv1a(h, ctype, k->ctype_len);
    k->hash = fnv1a(h, body, body_len);
    return 1;
}

static int slot_matches(const memo_slot *e, const ts_memo_key *k)
{
    const char *p = e->key;

    return p != NULL && e->hash == k->hash && e->path_len == k->path_len &&
           e->ctype_len == k->ctype_len && e->body_len == k->body_len &&
           memcmp(p, k->path, k->path_len) == 0 &&
           memcmp(p + k->path_len, k->ctype, k->ctype_len) == 0 &&
           (k->body_len == 0 || memcmp(p + k->path_len + k->ctype_len, k->body, k->body_len) == 0);
}

int ts_memo_serve(ts_memo *m, const ts_memo_key *k, struct MHD_Connection *c, size_t *route,
                  size_t *len)
{
    int rc = -1;

    pthread_mutex_lock(&m->lock);
    memo_slot *e = &m->slot[k->hash & m->mask];
    if (slot_matches(e, k)) {
        /* Queued under the lock: an eviction by another thread cannot
         * drop the last reference between finding and queueing it. */
        rc = MHD_queue_response(c, MHD_HTTP_OK, e->resp) == MHD_YES ? MHD_YES : MHD_NO;
        *route = e->route;
        *len = e->len;
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

void ts_memo_put(ts_memo *m, const ts_memo_key *k, struct MHD_Response *resp, size_t route,
                 size_t len)
{
    size_t klen = k->path_len + k->ctype_len + k->body_len;
    size_t need = klen + len;
    char *key = NULL;

    if (len <= TS_MEMO_ANSWER_MAX && need <= m->max_bytes)
        key = malloc(klen > 0 ? klen : 1);
    if (key == NULL) {
        MHD_destroy_response(resp);
        return;
    }
    memcpy(key, k->path, k->path_len);
    memcpy(key + k->path_len, k->ctype, k->ctype_len);
    if (k->body_len > 0)
        memcpy(key + k->path_len + k->ctype_len, k->body, k->body_len);

    pthread_mutex_lock(&m->lock);
    memo_slot *e = &m->slot[k->hash & m->mask];
    slot_clear(m, e);
    /* Over the byte cap: make room by emptying slots in order (rare:
     * the cap is far above slots x a typical answer). */
    for (size_t i = 0; m->bytes + need > m->max_bytes && i <= m->mask; i++)
        slot_clear(m, &m->slot[i]);
    e->hash = k->hash;
    e->key = key;
    e->path_len = k->path_len;
    e->ctype_len = k->ctype_len;
    e->body_len = k->body_len;
    e->resp = resp;
    e->route = route;
    e->len = len;
    m->bytes += need;
    m->entries++;
    pthread_mutex_unlock(&m->lock);
}

void ts_memo_stats(ts_memo *m, size_t *entries, size_t *bytes)
{
    pthread_mutex_lock(&m->lock);
    *entries = m->entries;
    *bytes = m->bytes;
    pthread_mutex_unlock(&m->lock);
}
