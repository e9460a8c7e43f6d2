/*
 * fuzz_api.c - libFuzzer target for the JSON layer.
 *
 * Each input is sent as the body of every POST route (and as a path for
 * GET) through ts_api_handle(), exactly as the server would.  Invariants:
 * the status is 200 or 4xx (bad input is never a 5xx), the body is valid
 * JSON of the advertised content type, it contains no bare NaN/Infinity
 * token, and every response frees cleanly (ASan/LSan check the rest).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ts_api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const ts_api_response *r)
{
    fprintf(stderr, "fuzz_api: %s (status %u, route %s): %.*s\n", what, r->status,
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
            if (!((j - i == 4 && (memcmp(s + i, "true", 4) == 0 || memcmp(s + i, "null", 4) == 0)) ||
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
    static const char *const terms[] = {
        "weights", "grads", "master", "optimizer", "activations", "buffers", "overhead"
    };
    double sum = 0, total;
    const json_t *st;
    size_t i;

    if (m == NULL)
        return;
    for (i = 0; i < sizeof terms / sizeof terms[0]; i++) {
        double v = term(m, terms[i]);
        if (v < 0)
            fail("negative memory term", r);
        sum += v;
    }
    total = term(m, "total");
    if (fabs(sum - total) > 1e-9 * total + 1)
        fail("memory terms do not add up to the total", r);
    if (term(m, "reserved_peak") < term(m, "allocated_peak"))
        fail("reserved peak below allocated peak", r);
    json_array_foreach(json_object_get(m, "stages"), i, st)
        if (json_number_value(json_object_get(st, "total")) > total * (1 + 1e-12))
            fail("a stage exceeds the worst stage", r);
}

/* Fractions stay fractions. */
static void check_fractions(const json_t *j, const ts_api_response *r)
{
    const json_t *c = json_object_get(j, "checkpoint"), *k = json_object_get(j, "compute");

    if (c != NULL && (term(c, "waste_fraction") > 1 ||
                      json_number_value(json_object_get(c, "waste_fraction_schedule")) > 1))
        fail("checkpoint waste above 1", r);
    if (k != NULL && (json_number_value(json_object_get(k, "mfu")) > 1 ||
                      json_number_value(json_object_get(k, "hfu")) > 1))
        fail("mfu or hfu above 1", r);
}

static void check(const ts_api_response *r)
{
    json_t *j;

    if (r->body == NULL || strlen(r->body) != r->body_len)
        fail("body missing or length wrong", r);
    if (!(r->status == 200 || (r->status >= 400 && r->status < 500)))
        fail("status is not 200 or 4xx", r);
    if (strcmp(r->content_type, r->status == 200 ? "application/json"
                                                 : "application/problem+json") != 0)
        fail("content type does not match status", r);
    if (has_bare_word(r->body, r->body_len))
        fail("non-finite number in output", r);
    j = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(j))
        fail("body is not a JSON object", r);
    check_memory(json_object_get(j, "memory"), r);
    check_fractions(j, r);
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const posts[] = {
        "/v1/memory", "/v1/compute", "/v1/checkpoint", "/v1/plan", "/v1/fit",
        "/v1/import", "/v1/search"
    };
    char path[128];
    size_t i, n;

    for (i = 0; i < sizeof posts / sizeof posts[0]; i++) {
        ts_api_response r;

        if (ts_api_handle("POST", posts[i], "application/json", (const char *)data,
                          size, &r) != 0)
            fail("ts_api_handle failed (out of memory?)", &r);
        check(&r);
        ts_api_response_free(&r);
    }

    /* The same bytes as a path (cut at the first NUL). */
    n = size < sizeof path - 1 ? size : sizeof path - 1;
    memcpy(path, data, n);
    path[n] = '\0';
    {
        ts_api_response r;

        if (ts_api_handle("GET", path, NULL, NULL, 0, &r) != 0)
            fail("ts_api_handle failed on GET", &r);
        check(&r);
        ts_api_response_free(&r);
    }
    return 0;
}
