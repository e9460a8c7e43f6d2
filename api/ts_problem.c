/*
 * ts_problem.c - RFC 9457 problem details and response lifetime.
 *
 * Every error the api layer reports leaves through here as
 * {"type","title","status","detail","field"} with content type
 * application/problem+json.  "field" is a JSON pointer to the offending
 * input member, or null when no single member is to blame.  A problem is
 * named by its type (a ts_problem enumerator) alone: its slug, status
 * and title come from the one table, api/ts_problems.def.  The body is
 * written by the one JSON writer (lib/ts_jw.c); the
 * detail and the field may quote what the client sent, so they go through
 * its UTF-8-checking text writer (a stray byte becomes U+FFFD).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_api_int.h"

#define TS_PROBLEM_BASE "https://trainsize.dev/problems/"

/* The rows of ts_problems.def, in enumerator order. */
static const ts_api_problem_type ts_problem_types[TS_PROB_COUNT] = {
#define TS_PROBLEM(id, slug, status, title) [id] = { slug, status, title },
#include "ts_problems.def"
#undef TS_PROBLEM
};

const ts_api_problem_type *ts_api_problem_type_at(size_t i)
{
    return i < TS_PROB_COUNT ? &ts_problem_types[i] : NULL;
}

/* p's row; a value outside the enum (a cast gone wrong) is ours to fix
 * and is answered as internal-error. */
static const ts_api_problem_type *problem_row(ts_problem p)
{
    return (unsigned)p < TS_PROB_COUNT ? &ts_problem_types[p]
                                       : &ts_problem_types[TS_PROB_INTERNAL_ERROR];
}

const char *ts_api_problem_title(const char *slug)
{
    for (size_t i = 0; slug != NULL && i < TS_PROB_COUNT; i++)
        if (strcmp(ts_problem_types[i].slug, slug) == 0)
            return ts_problem_types[i].title;
    return NULL;
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

void ts_api_err_set(ts_api_err *e, ts_problem p, const char *field, const char *fmt, ...)
{
    const ts_api_problem_type *t = problem_row(p);
    va_list ap;
    int n;

    e->type = (unsigned)p < TS_PROB_COUNT ? p : TS_PROB_INTERNAL_ERROR;
    e->status = t->status;
    e->slug = t->slug;
    ts_utf8_copy(e->field, sizeof e->field, field != NULL ? field : "");
    if (e->type != p) {
        snprintf(e->detail, sizeof e->detail, "problem type %d is not in the table", (int)p);
        e->field[0] = '\0';
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
    ts_problem p = TS_PROB_INVALID_VALUE;

    switch (core->code) {
    case TS_EINCOMPAT:
        p = TS_PROB_INCOMPATIBLE_OPTIONS;
        break;
    case TS_ENOTFOUND:
        p = TS_PROB_UNKNOWN_ID;
        break;
    case TS_ERANGE:
        /* The input was well-formed but a result cannot be represented:
         * the request is understood, not processable (422). */
        p = TS_PROB_RESULT_OUT_OF_RANGE;
        break;
    case TS_ENOFIT:
        p = TS_PROB_NO_FIT; /* 422 */
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
    ts_api_err_set(e, p, ptr, "%s", core->text[0] != '\0' ? core->text : ts_strerror(core->code));
}

int ts_api_problem(ts_api_response *resp, ts_problem p, const char *detail, const char *field)
{
    return ts_api_problem_notes(resp, p, detail, field, NULL);
}

int ts_api_problem_notes(ts_api_response *resp, ts_problem p, const char *detail, const char *field,
                         const ts_api_notes *notes)
{
    const ts_api_problem_type *t = problem_row(p);
    char why[64];
    ts_jw w;
    char *body;
    size_t len = 0;

    if (resp->route == NULL)
        resp->route = "other";
    resp->status = t->status;
    resp->content_type = "application/problem+json";
    resp->body = NULL;
    resp->body_len = 0;
    if ((unsigned)p >= TS_PROB_COUNT) {
        snprintf(why, sizeof why, "problem type %d is not in the table", (int)p);
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

int ts_api_err_respond_notes(const ts_api_err *e, const ts_api_notes *notes, ts_api_response *resp)
{
    return ts_api_problem_notes(resp, e->type, e->detail, e->field[0] != '\0' ? e->field : NULL,
                                notes);
}
