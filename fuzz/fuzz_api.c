/*
 * fuzz_api.c - libFuzzer target for the JSON layer.
 *
 * Each input is sent as the body of every POST route (and as a path for
 * GET) through ts_api_handle(), exactly as the server would.  Invariants:
 * the status is 200 or 4xx (bad input is never a 5xx), the body is valid
 * JSON of the advertised content type, it contains no bare NaN/Infinity
 * token, it quotes no half character (fuzz_check.c), and every response
 * frees cleanly (ASan/LSan check the rest).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "ts_api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* libFuzzer's own mutations, and one time in three numbers swapped for
 * edge values (fuzz_check.c): a product of two members needs both large at once. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    size = LLVMFuzzerMutate(data, size, max_size);
    return seed % 3 == 0 ? fz_mutate_numbers(data, size, max_size, seed) : size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const posts[] = { "/v1/memory", "/v1/compute", "/v1/checkpoint", "/v1/plan",
                                         "/v1/fit",    "/v1/import",  "/v1/search" };
    char path[128];
    size_t i, n;
    bool no_fffd = fz_no_replacement_expected((const char *)data, size);

    for (i = 0; i < sizeof posts / sizeof posts[0]; i++) {
        ts_api_response r;

        if (ts_api_handle("POST", posts[i], "application/json", (const char *)data, size, &r) != 0)
            fz_fail("ts_api_handle failed (out of memory?)", &r);
        fz_check(&r, no_fffd);
        ts_api_response_free(&r);
    }

    /* The same bytes as a path (cut at the first NUL). */
    n = size < sizeof path - 1 ? size : sizeof path - 1;
    memcpy(path, data, n);
    path[n] = '\0';
    {
        ts_api_response r;

        if (ts_api_handle("GET", path, NULL, NULL, 0, &r) != 0)
            fz_fail("ts_api_handle failed on GET", &r);
        fz_check(&r, fz_no_replacement_expected(path, strlen(path)));
        ts_api_response_free(&r);
    }
    return 0;
}
