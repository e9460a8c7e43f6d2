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

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest request body accepted, bytes.  The server enforces it while
 * reading (413); ts_api_handle() checks it again. */
#define TS_API_BODY_MAX (64u * 1024u)

typedef struct ts_api_response {
    unsigned status;           /* HTTP status */
    const char *content_type;  /* static: "application/json" or "application/problem+json" */
    char *body;                /* malloc'd, NUL-terminated; free with ts_api_response_free() */
    size_t body_len;
    const char *allow;         /* static "GET" / "POST" for 405, else NULL */
    const char *route;         /* static route label for metrics, e.g. "/v1/plan" or "other" */
} ts_api_response;

/* Handle one request for a path under /v1/.  Always fills *resp (never
 * fails for bad input: that becomes a 4xx problem+json).  Returns 0, or -1
 * only when memory ran out (resp then holds a static 503 body that needs
 * no freeing; ts_api_response_free() is still safe). */
int ts_api_handle(const char *method, const char *path,
                  const char *content_type,
                  const char *body, size_t body_len,
                  ts_api_response *resp);

/* Build an RFC 9457 problem response (for the server's own 404/405/413/
 * 408/503).  field may be NULL; it is a JSON pointer such as "/tp". */
int ts_api_problem(ts_api_response *resp, unsigned status, const char *slug,
                   const char *title, const char *detail, const char *field);

void ts_api_response_free(ts_api_response *resp);

/* Routes the api layer serves, for the server's metrics and the OpenAPI
 * test: NULL-terminated list of "METHOD /path" strings. */
const char *const *ts_api_routes(void);

#ifdef __cplusplus
}
#endif

#endif /* TS_API_H */
