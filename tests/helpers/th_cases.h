/*
 * th_cases.h - request/answer cases kept as data (tests/data/api_cases),
 * run through any transport: in process through ts_api_handle()
 * (tests/api/test_cases.c) or over loopback HTTP against the real server
 * (tests/server/test_server.c).  One runner, so one copy of the checks.
 *
 * tests/data/api_cases/README.md describes a case's members.  The loader
 * refuses unknown members, so a misspelt expectation cannot pass
 * silently.
 */
#ifndef TH_CASES_H
#define TH_CASES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

typedef struct th_case_req {
    const char *method; /* never NULL */
    const char *route;
    const char *content_type; /* NULL: no Content-Type header */
    const char *body;         /* never NULL; may hold NULs */
    size_t body_len;
} th_case_req;

typedef struct th_case_resp {
    unsigned status;
    char *content_type; /* malloc'd, NULL when absent */
    char *allow;        /* malloc'd, NULL when absent */
    char *body;         /* malloc'd, NUL-terminated */
    size_t body_len;
} th_case_resp;

typedef struct th_transport {
    const char *name; /* "api" or "http": matched against "via" */
    /* Send one request; fail the test when no answer comes back. */
    void (*send)(void *ctx, const th_case_req *req, th_case_resp *resp);
    void *ctx;
} th_transport;

/* Every *.json file of dir, in name order, each an array of cases; only
 * the cases whose "via" names transport (or that have no "via").  Exits
 * the process with a message when a file or a case is malformed or two
 * cases share a name.  The caller owns the array. */
json_t *th_cases_load(const char *dir, const char *transport);

/* Run one case: build the request (data_dir holds the "files"), send it,
 * check the answer against the case and the contract (th_json.h), and a
 * problem against the one problem-type table (api/ts_problem.c): its slug
 * is listed there, with the status and the title it was answered with. */
void th_case_run(const json_t *c, const char *data_dir, const th_transport *t);

void th_case_resp_free(th_case_resp *resp);

#endif /* TH_CASES_H */
