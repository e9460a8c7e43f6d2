/*
 * test_import_text.c - every path that quotes client text into an answer
 * (import notes, problem details, JSON pointers), with multi-byte text at
 * every truncation offset: the answer must be UTF-8 and must not contain
 * U+FFFD (the client sent none, so one would be a character cut in half
 * and papered over by the writer).  Issue 22 finding 3: "%.48s" of
 * "a"*47 + "é"*10 kept half an é, and the 200 answer was not JSON.
 *
 * Each path is a request template with @T@ where the text goes; the text
 * is "a" * k + c * n for k = 0 .. K_MAX and c a 2-, 3- and 4-byte
 * character, long enough to pass every bound (40, 48, 64, 79, 80, 96,
 * 128, 160, 240, 256 and 768 bytes: the note, pointer and detail sizes),
 * so every bound falls on every byte of a character.  The UTF-8 check
 * here is written from RFC 3629 section 4 on its own, not the writer's.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api.h"

#define K_MAX      100
#define TEXT_BYTES 1100 /* past the largest bound, 768 */

/* 1 when s[0..n) is well-formed UTF-8 (RFC 3629 section 4's ABNF: no
 * overlong forms, no surrogates, nothing above U+10FFFF). */
static int utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        unsigned c = s[i];
        unsigned lo = 0x80, hi = 0xBF;
        size_t len, j;

        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0)
                lo = 0xA0;
            if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0)
                lo = 0x90;
            if (c == 0xF4)
                hi = 0x8F;
        } else {
            return 0;
        }
        if (i + len > n)
            return 0;
        /* the second byte has the narrowed range, the rest 80..BF */
        if (s[i + 1] < lo || s[i + 1] > hi)
            return 0;
        for (j = 2; j < len; j++)
            if (s[i + j] < 0x80 || s[i + j] > 0xBF)
                return 0;
        i += len;
    }
    return 1;
}

typedef struct text_path {
    const char *name;
    const char *route;  /* @T@ in it: the text goes into the path */
    const char *ctype;  /* @T@ in it: into the Content-Type */
    const char *body;   /* @T@ (any number of times): the text */
    unsigned status;    /* expected */
    const char *marker; /* the answer says this: the path was taken */
} text_path;

#define J "application/json"
#define LLAMA                                                              \
    "\"model_type\":\"llama\",\"num_hidden_layers\":2,\"hidden_size\":64," \
    "\"num_attention_heads\":4,\"intermediate_size\":128,\"vocab_size\":1000"

static const text_path paths[] = {
    /* import notes (200) */
    { "megatron stray word", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"megatron_args\":\"--tensor-model-parallel-size 1 @T@\"}", 200,
      "stray word" },
    { "megatron unknown flag", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"megatron_args\":\"--@T@ 1 --lr 1\"}", 200,
      "unknown flags ignored" },
    { "deepspeed optimizer type", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"deepspeed_config\":{\"optimizer\":{\"type\":\"@T@\"}}}", 200,
      "has no state model" },
    { "deepspeed ignored key", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"deepspeed_config\":{\"@T@\":1,\"steps_per_print\":1}}", 200,
      "keys with no effect" },
    { "axolotl base_model", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"axolotl_config\":\"base_model: @T@\\n\"}", 200,
      "its shape is not fetched" },
    { "axolotl optimizer", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"axolotl_config\":\"optimizer: @T@\\n\"}", 200,
      "has no state model" },
    { "axolotl deepspeed path", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"axolotl_config\":\"deepspeed: @T@\\n\"}", 200, "is a path" },
    { "hf torch_dtype", "/v1/import", J, "{\"hf_config\":{" LLAMA ",\"torch_dtype\":\"@T@\"}}", 200,
      "storage type" },
    /* problem details and pointers (4xx) */
    { "megatron bad integer", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"megatron_args\":\"--num-layers @T@\"}", 400, "takes" },
    { "megatron flag given a value", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"megatron_args\":\"--swiglu=@T@\"}", 400, "takes no value" },
    { "megatron bad optimizer", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"megatron_args\":\"--optimizer @T@\"}", 400, "adam or sgd" },
    { "axolotl adapter", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"axolotl_config\":\"adapter: @T@\\n\"}", 400, "is not modelled" },
    { "axolotl duplicate key", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"axolotl_config\":\"@T@: 1\\n@T@: 2\\n\"}", 400, "appears twice" },
    { "axolotl !!bool value", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"axolotl_config\":\"bf16: !!bool @T@\\n\"}", 400,
      "!!bool of a value" },
    { "axolotl nested value pointer", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"axolotl_config\":\"@T@:\\n  x: !!int @T@\\n\"}", 400,
      "!!int of a value" },
    { "hf model_type", "/v1/import", J, "{\"hf_config\":{\"model_type\":\"@T@\"}}", 400,
      "is not supported" },
    { "duplicate key inside an import", "/v1/import", J,
      "{\"model\":\"llama3-8b\",\"deepspeed_config\":{\"@T@\":{\"a\":1,\"a\":2}}}", 400,
      "duplicate object key" },
    { "unknown request member", "/v1/memory", J, "{\"@T@\":1}", 400, "unknown" },
    { "unknown route", "/v1/@T@", J, "{}", 404, "no such resource" },
    { "media type", "/v1/memory", "text/@T@", "{}", 415, "Content-Type" },
};

static const char *const chars[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80" };

/* s with every @T@ replaced by t (malloc'd). */
static char *fill(const char *s, const char *t)
{
    size_t tl = strlen(t), n = 0, o = 0;
    const char *p;
    char *out;

    for (p = s; (p = strstr(p, "@T@")) != NULL; p += 3)
        n++;
    out = malloc(strlen(s) + n * tl + 1);
    ck_assert_ptr_nonnull(out);
    for (p = s; *p != '\0';) {
        if (strncmp(p, "@T@", 3) == 0) {
            memcpy(out + o, t, tl);
            o += tl;
            p += 3;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    return out;
}

START_TEST(test_text_paths)
{
    const text_path *tp = &paths[_i];
    char text[TEXT_BYTES + 8];
    size_t k, c;

    for (c = 0; c < sizeof chars / sizeof chars[0]; c++) {
        size_t w = strlen(chars[c]);

        for (k = 0; k <= K_MAX; k++) {
            size_t o = 0;
            char *route, *ctype, *body;
            ts_api_response r;
            json_t *j;

            memset(text, 'a', k);
            for (o = k; o + w <= TEXT_BYTES; o += w)
                memcpy(text + o, chars[c], w);
            text[o] = '\0';
            route = fill(tp->route, text);
            ctype = fill(tp->ctype, text);
            body = fill(tp->body, text);
            memset(&r, 0, sizeof r);
            ck_assert_int_eq(ts_api_handle("POST", route, ctype, body, strlen(body), &r), 0);
            ck_assert_msg(r.status == tp->status,
                          "%s, k %zu, %zu-byte char: status %u, "
                          "want %u: %.300s",
                          tp->name, k, w, r.status, tp->status, r.body);
            ck_assert_msg(strstr(r.body, tp->marker) != NULL,
                          "%s, k %zu: the answer does not say '%s': %.300s", tp->name, k,
                          tp->marker, r.body);
            ck_assert_msg(utf8_valid((const unsigned char *)r.body, r.body_len),
                          "%s, k %zu, %zu-byte char: the answer is not UTF-8", tp->name, k, w);
            ck_assert_msg(strstr(r.body, "\xef\xbf\xbd") == NULL,
                          "%s, k %zu, %zu-byte char: U+FFFD in the answer (a character cut "
                          "in half): %.400s",
                          tp->name, k, w, r.body);
            j = json_loadb(r.body, r.body_len, 0, NULL);
            ck_assert_msg(j != NULL, "%s, k %zu: the answer is not JSON", tp->name, k);
            json_decref(j);
            ts_api_response_free(&r);
            free(route);
            free(ctype);
            free(body);
        }
    }
}
END_TEST

/* The validator itself, on RFC 3629's edges. */
START_TEST(test_validator)
{
    static const struct {
        const char *s;
        int ok;
    } v[] = {
        { "plain", 1 },
        { "\xc3\xa9", 1 },
        { "\xe2\x82\xac", 1 },
        { "\xf0\x9f\x98\x80", 1 },
        { "\xf4\x8f\xbf\xbf", 1 },
        { "\xed\x9f\xbf", 1 },
        { "\xee\x80\x80", 1 },
        { "\xc3", 0 },
        { "a\xe2\x82", 0 },
        { "\x80", 0 },
        { "\xc0\xaf", 0 },
        { "\xc1\xbf", 0 },
        { "\xe0\x80\xaf", 0 },
        { "\xed\xa0\x80", 0 },
        { "\xf0\x80\x80\xaf", 0 },
        { "\xf4\x90\x80\x80", 0 },
        { "\xf5\x80\x80\x80", 0 },
        { "\xff", 0 },
        { "\xc3\xa9\xa9", 0 },
    };
    size_t i;

    for (i = 0; i < sizeof v / sizeof v[0]; i++)
        ck_assert_msg(utf8_valid((const unsigned char *)v[i].s, strlen(v[i].s)) == v[i].ok,
                      "case %zu", i);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("import-text");
    TCase *tc = tcase_create("paths");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_validator);
    tcase_add_loop_test(tc, test_text_paths, 0, (int)(sizeof paths / sizeof paths[0]));
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
