/*
 * fuzz_mega.c - libFuzzer target for the Megatron-LM argument reader
 * (import/ts_megatron.c): word splitting, flag values, the arithmetic on
 * them (the vocabulary padding of issue 22 finding 1), the notes.
 *
 * Each input is a megatron_args text:
 *   1. ts_import_mega() on the bytes as they are (NUL included): 0, or -1
 *      with a 4xx problem at /megatron_args (503 only out of memory);
 *      for UTF-8 bytes every note and the detail are UTF-8 (no quote cut
 *      mid-character); every proposed value is freed (LSan);
 *   2. when the bytes are UTF-8 (a JSON string can carry nothing else),
 *      as the megatron_args member of a request through ts_api_handle():
 *      alone on /v1/import, and over a preset with 64 GPUs on /v1/memory.
 *      The answer's invariants are fuzz_check.c's: 200 or 4xx, a JSON
 *      object of the right type, memory terms that add up, and no U+FFFD
 *      when the text had none (a note cut mid-character, finding 3).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_check.h"
#include "ts_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* libFuzzer's own mutations (dictionary included), and one time in three
 * numbers swapped for edge values (fuzz_check.c): finding 1 needed two
 * flags at 2^40 and 2^24 at once. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    size = LLVMFuzzerMutate(data, size, max_size);
    return seed % 3 == 0 ? fz_mutate_numbers(data, size, max_size, seed) : size;
}

/* A note or detail quoting UTF-8 input is UTF-8 itself: a quote cut
 * mid-character would not be (checked here, before any writer could
 * paper over it with U+FFFD). */
static void check_text(const char *what, const char *t, bool utf8_in)
{
    if (utf8_in && !fz_utf8_valid((const unsigned char *)t, strlen(t))) {
        fprintf(stderr, "fuzz_mega: %s is not UTF-8: %s\n", what, t);
        abort();
    }
}

static void direct(const char *text, size_t len)
{
    bool utf8_in = fz_utf8_valid((const unsigned char *)text, len);
    ts_api_notes notes;
    ts_api_err err;
    ts_import im;
    size_t i;

    memset(&notes, 0, sizeof notes);
    memset(&err, 0, sizeof err);
    ts_import_init(&im, &notes);
    if (ts_import_mega(&im, text, len, &err) != 0) {
        if (!((err.status >= 400 && err.status < 500 &&
               strncmp(err.field, "/megatron_args", 14) == 0) ||
              err.status == 503)) {
            fprintf(stderr, "fuzz_mega: problem %u at '%s': %s\n", err.status, err.field,
                    err.detail);
            abort();
        }
        check_text("a problem's detail", err.detail, utf8_in);
    }
    for (i = 0; i < notes.n; i++)
        check_text("a note", notes.text[i], utf8_in);
    ts_import_free(&im);
}

/* {members..., "megatron_args": text} to route. */
static void via_api(const char *route, const char *members, json_t *text)
{
    json_t *o = json_loads(members, 0, NULL);
    char *body;

    if (o == NULL || json_object_set(o, "megatron_args", text) != 0)
        abort();
    body = json_dumps(o, JSON_COMPACT);
    if (body == NULL)
        abort();
    fz_post(route, body, strlen(body));
    free(body);
    json_decref(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *text;

    direct((const char *)data, size);
    text = json_stringn((const char *)data, size); /* NULL unless UTF-8 */
    if (text != NULL) {
        via_api("/v1/import", "{}", text);
        via_api("/v1/memory", "{\"model\":\"llama3-8b\",\"gpus\":64}", text);
        json_decref(text);
    }
    return 0;
}
