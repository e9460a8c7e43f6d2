/*
 * fuzz_mega.c - libFuzzer target for the Megatron-LM argument reader
 * (api/ts_import_mega.c): word splitting, flag values, the arithmetic on
 * them (the vocabulary padding of issue 22 finding 1), the notes.
 *
 * Each input is a megatron_args text:
 *   1. ts_import_mega() on the bytes as they are (NUL included): 0, or -1
 *      with a 4xx problem at /megatron_args (503 only out of memory);
 *      every proposed value is freed (LSan);
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

static void direct(const char *text, size_t len)
{
    ts_api_notes notes;
    ts_api_err err;
    ts_import im;

    memset(&notes, 0, sizeof notes);
    memset(&err, 0, sizeof err);
    ts_import_init(&im, &notes);
    if (ts_import_mega(&im, text, len, &err) != 0 &&
        !((err.status >= 400 && err.status < 500 &&
           strncmp(err.field, "/megatron_args", 14) == 0) || err.status == 503)) {
        fprintf(stderr, "fuzz_mega: problem %u at '%s': %s\n", err.status, err.field,
                err.detail);
        abort();
    }
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
