/*
 * ts_problem.c - RFC 9457 problem details and response lifetime.
 *
 * Every error the api layer reports leaves through here as
 * {"type","title","status","detail","field"} with content type
 * application/problem+json.  "field" is a JSON pointer to the offending
 * input member, or null when no single member is to blame.  A problem is
 * named by its type (slug) alone: its status and title come from the one
 * table below.  The body is written by the one JSON writer (ts_jw.c); the
 * detail and the field may quote what the client sent, so they go through
 * its UTF-8-checking text writer (a stray byte becomes U+FFFD).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api_int.h"

#define TS_PROBLEM_BASE "https://trainsize.dev/problems/"

/* One title per problem type, whoever raises it (api or server): a
 * client may key on "type" and show "title" (RFC 9457 3.1.3: the title
 * should not change from occurrence to occurrence).  api/openapi.json
 * lists the same table (components.schemas.Problem, x-problem-types);
 * tests/api/test_openapi.c checks they agree. */
static const ts_api_problem_type ts_problem_types[] = {
    { "invalid-json", 400, "Invalid JSON" },
    { "duplicate-key", 400, "Duplicate key" },
    { "not-an-object", 400, "Request is not an object" },
    { "unknown-field", 400, "Unknown field" },
    { "invalid-type", 400, "Wrong type" },
    { "out-of-range", 400, "Value out of range" },
    { "invalid-enum", 400, "Not an allowed value" },
    { "unknown-preset", 400, "Unknown model preset" },
    { "unknown-gpu", 400, "Unknown GPU" },
    { "missing-field", 400, "Missing field" },
    { "incompatible-options", 400, "Incompatible options" },
    { "invalid-value", 400, "Invalid value" },
    { "unknown-id", 400, "Unknown preset or GPU" },
    { "unsupported-model-type", 400, "Unsupported model type" },   /* imports */
    { "unsupported-config", 400, "Unsupported config" },
    { "import-too-large", 400, "Imported config too large" },
    /* HTTP framing the server refuses (server/ts_server.c, issue 14). */
    { "malformed-request", 400, "Malformed request" },
    { "not-found", 404, "Not found" },
    { "method-not-allowed", 405, "Method not allowed" },
    { "request-timeout", 408, "Request timeout" },
    { "payload-too-large", 413, "Payload too large" },
    { "unsupported-media-type", 415, "Unsupported media type" },
    { "result-out-of-range", 422, "Result out of range" },
    { "non-finite-result", 422, "Result not representable" },
    { "no-fit", 422, "Nothing fits" },
    { "internal-error", 500, "Internal error" },
    { "file-too-large", 500, "File too large to serve" },
    { "unsupported-transfer-coding", 501, "Unsupported transfer coding" },
    { "out-of-memory", 503, "Out of memory" },
    /* every worker busy and the queue full (server/ts_work.c, issue 22) */
    { "server-busy", 503, "Server busy" },
};

const ts_api_problem_type *ts_api_problem_type_at(size_t i)
{
    return i < sizeof ts_problem_types / sizeof ts_problem_types[0]
               ? &ts_problem_types[i] : NULL;
}

static const ts_api_problem_type *problem_find(const char *slug)
{
    size_t i;

    for (i = 0; slug != NULL && i < sizeof ts_problem_types / sizeof ts_problem_types[0]; i++)
        if (strcmp(ts_problem_types[i].slug, slug) == 0)
            return &ts_problem_types[i];
    return NULL;
}

const char *ts_api_problem_title(const char *slug)
{
    const ts_api_problem_type *t = problem_find(slug);

    return t != NULL ? t->title : NULL;
}

/* Written nowhere: a body we can hand out when malloc fails.  Not const
 * only because ts_api_response.body is char *. */
static char ts_oom_body[] =
    "{\"type\":\"" TS_PROBLEM_BASE "out-of-memory\",\"title\":\"Out of memory\","
    "\"status\":503,\"detail\":\"the server ran out of memory answering this "
    "request\",\"field\":null}";

void ts_api_oom_response(ts_api_response *resp)
{
    const char *route = resp->route;

    memset(resp, 0, sizeof *resp);
    resp->status = 503;
    resp->content_type = "application/problem+json";
    resp->body = ts_oom_body;
    resp->body_len = sizeof ts_oom_body - 1;
    resp->route = route != NULL ? route : "other";
}

void ts_api_response_free(ts_api_response *resp)
{
    if (resp == NULL)
        return;
    if (resp->body != ts_oom_body)
        free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
}

/* A slug missing from the table is a bug of ours, not the client's: it
 * becomes a 500 that names it (tests walk every slug in the sources, so
 * none ships). */
static const ts_api_problem_type *problem_or_internal(const char **slug)
{
    const ts_api_problem_type *t = problem_find(*slug);

    if (t == NULL) {
        *slug = "internal-error";
        t = problem_find(*slug);
    }
    return t;
}

void ts_api_err_set(ts_api_err *e, const char *slug, const char *field,
                    const char *fmt, ...)
{
    const char *asked = slug;
    const ts_api_problem_type *t = problem_or_internal(&slug);
    va_list ap;
    int n;

    e->status = t->status;
    e->slug = t->slug;
    ts_utf8_copy(e->field, sizeof e->field, field != NULL ? field : "");
    if (slug != asked) {
        asked = asked != NULL ? asked : "(null)";
        snprintf(e->detail, sizeof e->detail, "problem type \"%.*s\" is not in the table",
                 ts_utf8_prec(asked, 64), asked);
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(e->detail, sizeof e->detail, fmt, ap);
    va_end(ap);
    if (n < 0)
        e->detail[0] = '\0';
    else if ((size_t)n >= sizeof e->detail)
        ts_utf8_trim(e->detail, sizeof e->detail - 1);
}

void ts_api_err_from_core(ts_api_err *e, const ts_error *core)
{
    char ptr[TS_ERROR_FIELD_LEN + 1];
    const char *slug = "invalid-value";

    switch (core->code) {
    case TS_EINCOMPAT:
        slug = "incompatible-options";
        break;
    case TS_ENOTFOUND:
        slug = "unknown-id";
        break;
    case TS_ERANGE:
        /* The input was well-formed but a result cannot be represented:
         * the request is understood, not processable (422). */
        slug = "result-out-of-range";
        break;
    case TS_ENOFIT:
        slug = "no-fit"; /* 422 */
        break;
    case TS_OK:
    case TS_EINVAL:
    default:
        break;
    }
    ptr[0] = '\0';
    if (core->field[0] != '\0')
        snprintf(ptr, sizeof ptr, "/%.*s", ts_utf8_prec(core->field, TS_ERROR_FIELD_LEN - 1),
                 core->field);
    ts_api_err_set(e, slug, ptr, "%s",
                   core->text[0] != '\0' ? core->text : ts_strerror(core->code));
}

int ts_api_problem(ts_api_response *resp, const char *slug, const char *detail,
                   const char *field)
{
    return ts_api_problem_notes(resp, slug, detail, field, NULL);
}

int ts_api_problem_notes(ts_api_response *resp, const char *slug, const char *detail,
                         const char *field, const ts_api_notes *notes)
{
    const char *asked = slug;
    const ts_api_problem_type *t = problem_or_internal(&slug);
    char why[128];
    ts_jw w;
    char *body;
    size_t len = 0;

    if (resp->route == NULL)
        resp->route = "other";
    resp->status = t->status;
    resp->content_type = "application/problem+json";
    resp->body = NULL;
    resp->body_len = 0;
    if (slug != asked) {
        asked = asked != NULL ? asked : "(null)";
        snprintf(why, sizeof why, "problem type \"%.*s\" is not in the table",
                 ts_utf8_prec(asked, 64), asked);
        detail = why;
        field = NULL;
    }

    ts_jw_init(&w);
    ts_jw_open(&w, NULL, '{');
    {
        char type[160];
        int n = snprintf(type, sizeof type, TS_PROBLEM_BASE "%s", t->slug);

        ts_jw_strl_(&w, "type", 4, type, n > 0 ? (size_t)n : 0);
    }
    ts_jw_str(&w, "title", t->title);
    ts_jw_int(&w, "status", t->status);
    ts_jw_text(&w, "detail", detail != NULL ? detail : "");
    if (field != NULL && field[0] != '\0')
        ts_jw_text(&w, "field", field);
    else
        ts_jw_null(&w, "field");
    /* The same member as on a 200 (RFC 9457 section 3.2 extension member):
     * what an import did before the request was refused. */
    if (notes != NULL && notes->n > 0)
        ts_json_import_notes(&w, "import_notes", notes);
    ts_jw_close(&w, '}');
    body = ts_jw_finish(&w, &len);
    if (body == NULL) {
        ts_api_oom_response(resp);
        return -1;
    }
    resp->body = body;
    resp->body_len = len;
    return 0;
}

int ts_api_err_respond(const ts_api_err *e, ts_api_response *resp)
{
    return ts_api_err_respond_notes(e, NULL, resp);
}

int ts_api_err_respond_notes(const ts_api_err *e, const ts_api_notes *notes,
                             ts_api_response *resp)
{
    return ts_api_problem_notes(resp, e->slug, e->detail,
                                e->field[0] != '\0' ? e->field : NULL, notes);
}
