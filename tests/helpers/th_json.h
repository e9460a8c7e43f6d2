/*
 * th_json.h - JSON helpers shared by the api, server and cli tests:
 * parse an answer, walk dotted paths, and check the
 * response contract (api/CONTRACT.md) every answer must keep.
 *
 * All of them fail the running Check test (ck_assert) rather than return
 * an error, except where a NULL result is documented.
 */
#ifndef TH_JSON_H
#define TH_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define TH_PROBLEM_BASE "https://trainsize.dev/problems/"

/* Parse len bytes as a JSON document; fails the test when it is not. */
json_t *th_json_parse(const char *text, size_t len);

/* Dotted lookup ("memory.bytes_per_param.total", "checkpoint.tiers.0.name":
 * a number indexes an array); NULL when a step is missing. */
json_t *th_json_get(const json_t *root, const char *path);

/* The same, failing the test when the member is missing or (num, str) of
 * the wrong type. */
json_t *th_json_at(const json_t *root, const char *path);
double th_json_num(const json_t *root, const char *path);
const char *th_json_str(const json_t *root, const char *path);

/* Numbers compare by value (2 == 2.0), everything else by json_equal. */
bool th_json_same(const json_t *got, const json_t *want);

/* The contract of every answer (api/CONTRACT.md): valid JSON object
 * without duplicate keys, no bare NaN/Infinity token, no "human" saying
 * nan/inf/n/a, the content type matching the status, and for an error a
 * complete RFC 9457 problem of exactly five members whose "status" is the
 * HTTP status and whose "field" is null or a JSON pointer.  Returns the
 * parsed body (json_decref it). */
json_t *th_json_contract(unsigned status, const char *content_type, const char *body, size_t len);

#endif /* TH_JSON_H */
