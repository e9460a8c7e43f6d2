/*
 * fuzz_check.c - the invariants of an answer (fuzz_check.h), shared by
 * the api fuzz targets.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_check.h"

void fz_fail(const char *what, const ts_api_response *r)
{
    fprintf(stderr, "fuzz: %s (status %u, route %s): %.*s\n", what, r->status,
            r->route != NULL ? r->route : "?", (int)(r->body_len < 2000 ? r->body_len : 2000),
            r->body != NULL ? r->body : "");
    abort();
}

/* Outside strings JSON only has true/false/null and exponents. */
static int has_bare_word(const char *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        char c = s[i];

        if (c == '"') {
            for (i++; i < n && s[i] != '"'; i++)
                if (s[i] == '\\')
                    i++;
            i++;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            size_t j = i;
            while (j < n && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z')))
                j++;
            if (!((j - i == 4 &&
                   (memcmp(s + i, "true", 4) == 0 || memcmp(s + i, "null", 4) == 0)) ||
                  (j - i == 5 && memcmp(s + i, "false", 5) == 0) ||
                  (j - i == 1 && (c == 'e' || c == 'E'))))
                return 1;
            i = j;
        } else {
            i++;
        }
    }
    return 0;
}

static double term(const json_t *m, const char *key)
{
    return json_number_value(json_object_get(json_object_get(m, key), "value"));
}

/* The memory answer adds up: the terms sum to the total, none is
 * negative, the reserved peak holds the allocated one, and no stage
 * exceeds the worst. */
static void check_memory(const json_t *m, const ts_api_response *r)
{
    static const char *const terms[] = { "weights",     "grads",   "master",  "optimizer",
                                         "activations", "buffers", "overhead" };
    double sum = 0, total;
    const json_t *st;
    size_t i;

    if (m == NULL)
        return;
    for (i = 0; i < sizeof terms / sizeof terms[0]; i++) {
        double v = term(m, terms[i]);
        if (v < 0)
            fz_fail("negative memory term", r);
        sum += v;
    }
    total = term(m, "total");
    if (fabs(sum - total) > 1e-9 * total + 1)
        fz_fail("memory terms do not add up to the total", r);
    if (term(m, "reserved_peak") < term(m, "allocated_peak"))
        fz_fail("reserved peak below allocated peak", r);
    json_array_foreach(json_object_get(m, "stages"), i,
                       st) if (json_number_value(json_object_get(st, "total")) >
                               total * (1 + 1e-12)) fz_fail("a stage exceeds the worst stage", r);
}

/* Fractions stay fractions. */
static void check_fractions(const json_t *j, const ts_api_response *r)
{
    const json_t *c = json_object_get(j, "checkpoint"), *k = json_object_get(j, "compute");

    if (c != NULL && (term(c, "waste_fraction") > 1 ||
                      json_number_value(json_object_get(c, "waste_fraction_schedule")) > 1))
        fz_fail("checkpoint waste above 1", r);
    if (k != NULL && (json_number_value(json_object_get(k, "mfu")) > 1 ||
                      json_number_value(json_object_get(k, "hfu")) > 1))
        fz_fail("mfu or hfu above 1", r);
}

/* RFC 3629 section 4: no overlong forms, no surrogates, <= U+10FFFF. */
bool fz_utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        unsigned c = s[i], lo = 0x80, hi = 0xBF;
        size_t len, j;

        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            lo = c == 0xE0 ? 0xA0 : 0x80;
            hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            lo = c == 0xF0 ? 0x90 : 0x80;
            hi = c == 0xF4 ? 0x8F : 0xBF;
        } else {
            return false;
        }
        if (i + len > n || s[i + 1] < lo || s[i + 1] > hi)
            return false;
        for (j = 2; j < len; j++)
            if (s[i + j] < 0x80 || s[i + j] > 0xBF)
                return false;
        i += len;
    }
    return true;
}

static bool has(const char *s, size_t n, const char *what)
{
    size_t k = strlen(what), i;

    for (i = 0; i + k <= n; i++)
        if (memcmp(s + i, what, k) == 0)
            return true;
    return false;
}

bool fz_no_replacement_expected(const char *req, size_t n)
{
    return fz_utf8_valid((const unsigned char *)req, n) && !has(req, n, "\\u") &&
           !has(req, n, "\xef\xbf\xbd");
}

void fz_check(const ts_api_response *r, bool no_fffd)
{
    json_t *j;

    if (r->body == NULL || strlen(r->body) != r->body_len)
        fz_fail("body missing or length wrong", r);
    if (!(r->status == 200 || (r->status >= 400 && r->status < 500)))
        fz_fail("status is not 200 or 4xx", r);
    if (strcmp(r->content_type,
               r->status == 200 ? "application/json" : "application/problem+json") != 0)
        fz_fail("content type does not match status", r);
    if (has_bare_word(r->body, r->body_len))
        fz_fail("non-finite number in output", r);
    j = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(j))
        fz_fail("body is not a JSON object", r);
    check_memory(json_object_get(j, "memory"), r);
    check_fractions(j, r);
    json_decref(j);
    if (no_fffd && has(r->body, r->body_len, "\xef\xbf\xbd"))
        fz_fail("U+FFFD in the answer to a request without one: a character cut in half", r);
}

void fz_post(const char *route, const char *body, size_t len)
{
    ts_api_response r;

    if (ts_api_handle("POST", route, "application/json", body, len, &r) != 0)
        fz_fail("ts_api_handle failed (out of memory?)", &r);
    fz_check(&r, fz_no_replacement_expected(body, len));
    ts_api_response_free(&r);
}

/* xorshift32 (Marsaglia 2003): shifts and xors, no wrap-around for the
 * integer checks to report. */
static unsigned next_rand(unsigned *r)
{
    unsigned x = *r != 0 ? *r : 0x9E3779B9u;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *r = x;
    return x;
}

static bool starts_number(const uint8_t *d, size_t i)
{
    return d[i] >= '0' && d[i] <= '9' && (i == 0 || d[i - 1] < '0' || d[i - 1] > '9');
}

/* An edge value as text: 0, 1, 2^k - 1, 2^k, 2^k + 1 (k < 64) or 10^k. */
static int edge_value(char *buf, size_t size, unsigned *r)
{
    unsigned k = next_rand(r) % 64, kind = next_rand(r) % 5;
    unsigned long long v = 1ULL << k;

    switch (kind) {
    case 0:
        return snprintf(buf, size, "%llu", v - 1);
    case 1:
        return snprintf(buf, size, "%llu", v);
    case 2:
        return snprintf(buf, size, "%llu", k == 63 ? v : v + 1);
    case 3: {
        unsigned long long t = 1;

        for (k %= 20; k > 0; k--)
            t *= 10;
        return snprintf(buf, size, "%llu", t);
    }
    default:
        return snprintf(buf, size, "%s", next_rand(r) % 2 ? "0" : "1");
    }
}

size_t fz_mutate_numbers(uint8_t *data, size_t size, size_t max_size, unsigned seed)
{
    unsigned r = seed, n;

    for (n = 1 + next_rand(&r) % 3; n > 0; n--) {
        size_t count = 0, i, pick, start, end;
        char val[24];
        int vl;

        for (i = 0; i < size; i++)
            if (starts_number(data, i))
                count++;
        if (count == 0)
            break;
        pick = next_rand(&r) % count;
        for (i = 0, start = 0; i < size; i++) {
            if (!starts_number(data, i))
                continue;
            if (pick == 0) {
                start = i;
                break;
            }
            pick--;
        }
        for (end = start; end < size && data[end] >= '0' && data[end] <= '9'; end++)
            ;
        vl = edge_value(val, sizeof val, &r);
        if (vl <= 0 || size - (end - start) + (size_t)vl > max_size)
            continue;
        memmove(data + start + vl, data + end, size - end);
        memcpy(data + start, val, (size_t)vl);
        size = size - (end - start) + (size_t)vl;
    }
    return size;
}
