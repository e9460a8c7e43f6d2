/*
 * ts_name.c - matching catalogue names as people type them.
 *
 * Users write "H100", "h100 sxm", "NVIDIA A100-80GB" or
 * "meta-llama/Meta-Llama-3-8B" where the catalogues' ids are "h100-sxm" and
 * "llama3-8b".  A name is compared by its key: ASCII letters folded to lower
 * case, digits and '.' kept, everything else (spaces, '-', '_', '/') dropped,
 * so "H100-SXM" and "h100 sxm" are the same key.  Unknown names get the
 * closest id by optimal-string-alignment distance (Damerau-Levenshtein
 * without repeated edits of one substring), for a "did you mean" hint.
 * Fixed-size arrays, no allocation (core/ rule).
 */
#include "trainsize.h"

#include <string.h>

size_t ts_name_key(const char *s, char *out, size_t n)
{
    size_t o = 0;

    if (n == 0)
        return 0;
    for (; s != NULL && *s != '\0' && o + 1 < n; s++) {
        unsigned char c = (unsigned char)*s;

        if (c >= 'A' && c <= 'Z')
            out[o++] = (char)(c - 'A' + 'a');
        else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.')
            out[o++] = (char)c;
    }
    out[o] = '\0';
    /* A key cut short would match a longer name's prefix: refuse it. */
    return (s != NULL && *s != '\0') ? 0 : o;
}

int ts_name_same(const char *a, const char *b)
{
    char ka[TS_NAME_KEY_MAX], kb[TS_NAME_KEY_MAX];

    return ts_name_key(a, ka, sizeof ka) > 0 && ts_name_key(b, kb, sizeof kb) > 0 &&
           strcmp(ka, kb) == 0;
}

unsigned ts_name_distance(const char *a, const char *b)
{
    /* Three rows of the OSA table are enough: row i needs i-1 and i-2. */
    unsigned rows[3][TS_NAME_KEY_MAX];
    size_t la = strlen(a), lb = strlen(b), i, j;

    if (la >= TS_NAME_KEY_MAX || lb >= TS_NAME_KEY_MAX)
        return (unsigned)TS_NAME_KEY_MAX;
    for (j = 0; j <= lb; j++)
        rows[0][j] = (unsigned)j;
    for (i = 1; i <= la; i++) {
        unsigned *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *pp = rows[(i + 1) % 3];

        cur[0] = (unsigned)i;
        for (j = 1; j <= lb; j++) {
            unsigned cost = a[i - 1] == b[j - 1] ? 0u : 1u;
            unsigned best = prev[j] + 1;

            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (prev[j - 1] + cost < best)
                best = prev[j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                pp[j - 2] + 1 < best)
                best = pp[j - 2] + 1;
            cur[j] = best;
        }
    }
    return rows[la % 3][lb];
}

void ts_name_suggest_init(ts_name_suggest *s, const char *typed)
{
    s->best = NULL;
    s->dist = (unsigned)TS_NAME_KEY_MAX;
    s->prefix = 0;
    if (ts_name_key(typed, s->key, sizeof s->key) == 0)
        s->key[0] = '\0';
}

void ts_name_suggest_try(ts_name_suggest *s, const char *candidate)
{
    char k[TS_NAME_KEY_MAX];
    unsigned d;
    size_t p;

    if (s->key[0] == '\0' || ts_name_key(candidate, k, sizeof k) == 0)
        return;
    d = ts_name_distance(s->key, k);
    /* At the same distance the longer common prefix wins: a name's first
     * characters are the ones people get right ("h10" is h100, not a10). */
    for (p = 0; s->key[p] != '\0' && s->key[p] == k[p]; p++)
        ;
    if (d < s->dist || (d == s->dist && p > s->prefix)) {
        s->dist = d;
        s->best = candidate;
        s->prefix = p;
    }
}

const char *ts_name_suggest_best(const ts_name_suggest *s)
{
    size_t n = strlen(s->key);
    /* Close enough to be a typo: at most a third of the typed key, and at
     * most 3 edits ("lama3-8b" -> "llama3-8b", "h10" -> "h100"). */
    unsigned limit = n >= 9 ? 3u : n >= 6 ? 2u : 1u;

    return s->best != NULL && s->dist <= limit ? s->best : NULL;
}
