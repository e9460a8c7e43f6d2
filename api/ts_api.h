/*
 * ts_api.h - JSON <-> core mapping and the /v1 route table.
 *
 * Transport-free: the server (libmicrohttpd), the fuzz target and the unit
 * tests all call ts_api_handle() with a method, path, content type and a
 * complete body, and get a status, content type and an owned body back.
 * No globals hold request state; the function is thread-safe.
 */
#ifndef TS_API_H
#define TS_API_H

#include <stdbool.h>
#include <stddef.h>

#include "ts_fields.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest request body accepted, bytes.  The server enforces it while
 * reading (413); ts_api_handle() checks it again. */
#define TS_API_BODY_MAX (64u * 1024u)

typedef struct ts_api_response {
    unsigned status;          /* HTTP status */
    const char *content_type; /* static: "application/json" or "application/problem+json" */
    char *body;               /* malloc'd, NUL-terminated; free with ts_api_response_free() */
    size_t body_len;
    const char *allow; /* static "GET, HEAD" / "POST" for 405, else NULL */
    const char *route; /* static route label for metrics, e.g. "/v1/plan" or "other" */
} ts_api_response;

/* Handle one request for a path under /v1/.  Always fills *resp (never
 * fails for bad input: that becomes a 4xx problem+json).  Returns 0, or -1
 * only when memory ran out (resp then holds a static 503 body that needs
 * no freeing; ts_api_response_free() is still safe). */
int ts_api_handle(const char *method, const char *path, const char *content_type, const char *body,
                  size_t body_len, ts_api_response *resp);

/* The problem types (api/ts_problems.def): a raise names one of these,
 * its slug, status and title are the table's. */
typedef enum ts_problem {
#define TS_PROBLEM(id, slug, status, title) id,
#include "ts_problems.def"
#undef TS_PROBLEM
    TS_PROB_COUNT
} ts_problem;

/* Build an RFC 9457 problem response (for the server's own 404/405/413/
 * 408/503) of type p: its status and title are the table's (below).
 * field may be NULL; it is a JSON pointer such as "/tp". */
int ts_api_problem(ts_api_response *resp, ts_problem p, const char *detail, const char *field);

void ts_api_response_free(ts_api_response *resp);

/* A problem type's row: slug (after https://trainsize.dev/problems/),
 * its one status and title. */
typedef struct ts_api_problem_type {
    const char *slug;
    unsigned status;
    const char *title;
} ts_api_problem_type;

/* i-th problem type (the ts_problem of that value), NULL past the end. */
const ts_api_problem_type *ts_api_problem_type_at(size_t i);
/* Title for slug, NULL when slug is not in the table. */
const char *ts_api_problem_title(const char *slug);

/* Routes the api layer serves, for the server's metrics and the OpenAPI
 * test: NULL-terminated list of "METHOD /path" strings. */
const char *const *ts_api_routes(void);

/* The GET routes whose answer depends on nothing but the build (the
 * catalogues: "/v1/presets", "/v1/gpus"), NULL-terminated: a server
 * may build them once and serve the bytes with a validator. */
const char *const *ts_api_catalogues(void);

/* ---- Request schema, for the OpenAPI test and documentation tools ---- */

/* One member of the request object of the POST routes: a row of the
 * core's field registry (core/ts_fields.h), whose first members are
 * this description (name, type, minimum, maximum, exclusive_minimum,
 * exclusive_maximum, values, nullable, fit_only, search_only,
 * budget_only). */
typedef struct ts_field ts_api_field;

/* Request members that import a launch config instead of naming one
 * field ("hf_config", "deepspeed_config", "megatron_args"),
 * NULL-terminated; they are not in the field table below. */
const char *const *ts_api_import_members(void);

/* i-th request field, NULL past the end (same shape as ts_gpu_at()). */
const ts_api_field *ts_api_request_field(size_t i);
size_t ts_api_request_field_count(void);

#ifdef __cplusplus
}
#endif

#endif /* TS_API_H */
