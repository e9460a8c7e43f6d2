/*
 * th_cases.c - the data-driven case runner (see th_cases.h and
 * tests/data/api_cases/README.md).
 */
#include "th_cases.h"
#include "th_file.h"
#include "th_json.h"
#include "ts_api.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const known_members[] = {
    "name",     "why",       "via",    "method", "route", "content_type",
    "body",     "body_text", "pad_to", "files",  "patch", "megatron_append",
    "status",   "type",      "field",  "detail", "allow", "expect",
    "contains", "lacks",     "absent", NULL,
};

static void die(const char *file, const char *name, const char *what)
{
    fprintf(stderr, "th_cases: %s: case '%s': %s\n", file, name != NULL ? name : "?", what);
    exit(2);
}

/* The shape of one case, checked once at load time. */
static void validate(const char *file, const json_t *c)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    const char *k;
    json_t *v;
    json_int_t status;

    if (!json_is_object(c))
        die(file, NULL, "not an object");
    if (name == NULL)
        die(file, NULL, "no \"name\"");
    json_object_foreach((json_t *)c, k, v)
    {
        size_t i;

        for (i = 0; known_members[i] != NULL && strcmp(known_members[i], k) != 0; i++)
            ;
        if (known_members[i] == NULL) {
            char msg[160];

            snprintf(msg, sizeof msg, "unknown member \"%s\"", k);
            die(file, name, msg);
        }
    }
    if (!json_is_string(json_object_get(c, "route")))
        die(file, name, "no \"route\"");
    {
        const json_t *via = json_object_get(c, "via");
        const json_t *ct = json_object_get(c, "content_type");
        size_t i, n = json_is_array(via) ? json_array_size(via) : 1;

        for (i = 0; via != NULL && i < n; i++) {
            const char *w = json_string_value(json_is_array(via) ? json_array_get(via, i) : via);

            if (w == NULL || (strcmp(w, "api") != 0 && strcmp(w, "http") != 0))
                die(file, name, "\"via\" names \"api\" or \"http\"");
        }
        if (ct != NULL && !json_is_string(ct) && !json_is_null(ct))
            die(file, name, "\"content_type\" is a string or null");
        if (json_object_get(c, "method") != NULL && !json_is_string(json_object_get(c, "method")))
            die(file, name, "\"method\" is a string");
        if (json_object_get(c, "pad_to") != NULL && !json_is_integer(json_object_get(c, "pad_to")))
            die(file, name, "\"pad_to\" is an integer");
        if (json_object_get(c, "body_text") != NULL &&
            !json_is_string(json_object_get(c, "body_text")))
            die(file, name, "\"body_text\" is a string");
    }
    if (!json_is_integer(json_object_get(c, "status")))
        die(file, name, "no integer \"status\"");
    status = json_integer_value(json_object_get(c, "status"));
    if (json_object_get(c, "body") != NULL && json_object_get(c, "body_text") != NULL)
        die(file, name, "both \"body\" and \"body_text\"");
    if (status >= 400) {
        json_t *f = json_object_get(c, "field");

        if (!json_is_string(json_object_get(c, "type")))
            die(file, name, "an error case needs \"type\" (the slug)");
        if (f == NULL || !(json_is_null(f) || json_is_string(f)))
            die(file, name, "an error case needs \"field\" (a pointer or null)");
        if ((status == 405) != (json_object_get(c, "allow") != NULL))
            die(file, name, "\"allow\" goes with status 405, and only there");
        if (json_object_get(c, "expect") != NULL || json_object_get(c, "absent") != NULL)
            die(file, name, "expect/absent are for successes");
    } else if (json_object_get(c, "type") != NULL || json_object_get(c, "field") != NULL ||
               json_object_get(c, "allow") != NULL) {
        die(file, name, "type/field/allow are for errors");
    }
}

static bool applies(const json_t *c, const char *transport)
{
    const json_t *via = json_object_get(c, "via");
    size_t i;

    if (via == NULL)
        return true;
    if (json_is_string(via))
        return strcmp(json_string_value(via), transport) == 0;
    for (i = 0; i < json_array_size(via); i++)
        if (strcmp(json_string_value(json_array_get(via, i)), transport) == 0)
            return true;
    return false;
}

static int json_file(const struct dirent *d)
{
    size_t n = strlen(d->d_name);

    return d->d_name[0] != '.' && n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

json_t *th_cases_load(const char *dir, const char *transport)
{
    struct dirent **names = NULL;
    json_t *all = json_array();
    json_t *seen = json_object();
    int n = scandir(dir, &names, json_file, alphasort);

    if (n <= 0) {
        fprintf(stderr, "th_cases: no case files in %s\n", dir);
        exit(2);
    }
    for (int i = 0; i < n; i++) {
        char path[2048];
        json_error_t je;
        json_t *arr;
        size_t k;
        json_t *c;

        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        /* NUL is allowed in strings: body_text may hold one. */
        arr = json_load_file(path, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
        if (!json_is_array(arr)) {
            fprintf(stderr, "th_cases: %s:%d: %s\n", path, je.line,
                    arr == NULL ? je.text : "not an array of cases");
            exit(2);
        }
        json_array_foreach(arr, k, c)
        {
            const char *name;

            validate(names[i]->d_name, c);
            name = json_string_value(json_object_get(c, "name"));
            if (json_object_get(seen, name) != NULL)
                die(names[i]->d_name, name, "name used twice");
            json_object_set_new(seen, name, json_true());
            if (applies(c, transport))
                json_array_append(all, c);
        }
        json_decref(arr);
        free(names[i]);
    }
    free(names);
    json_decref(seen);
    return all;
}

/* ------------------------------------------------------------------ */
/* the request                                                         */
/* ------------------------------------------------------------------ */

/* "a/b" -> obj["a"]["b"] = v (v stolen); the string "$delete" removes. */
static void patch_one(json_t *obj, const char *path, json_t *v)
{
    char key[128];
    const char *slash = strchr(path, '/');

    if (slash != NULL) {
        json_t *sub;

        snprintf(key, sizeof key, "%.*s", (int)(slash - path), path);
        sub = json_object_get(obj, key);
        ck_assert_msg(json_is_object(sub), "patch: %s is not an object", key);
        patch_one(sub, slash + 1, v);
        return;
    }
    if (json_is_string(v) && strcmp(json_string_value(v), "$delete") == 0) {
        json_object_del(obj, path);
        json_decref(v);
        return;
    }
    json_object_set_new(obj, path, v);
}

/* "body" plus the "files" read from data_dir (text for the two members
 * that take text, JSON otherwise), "patch"ed, "megatron_append"ed. */
static json_t *build_json(const json_t *c, const char *data_dir)
{
    const json_t *body = json_object_get(c, "body");
    const json_t *append = json_object_get(c, "megatron_append");
    json_t *req = body != NULL ? json_deep_copy(body) : json_object();
    const char *k;
    json_t *v;

    json_object_foreach(json_object_get(c, "files"), k, v)
    {
        char path[2048];
        char *text;

        snprintf(path, sizeof path, "%s/%s", data_dir, json_string_value(v));
        text = th_read_file(path, NULL);
        ck_assert_msg(text != NULL, "cannot read %s", path);
        if (strcmp(k, "megatron_args") == 0 || strcmp(k, "axolotl_config") == 0 ||
            strcmp(k, "nemo_config") == 0) {
            json_object_set_new(req, k, json_string(text));
        } else {
            json_error_t je;
            json_t *doc = json_loads(text, 0, &je);

            ck_assert_msg(doc != NULL, "%s: %s", path, je.text);
            json_object_set_new(req, k, doc);
        }
        free(text);
    }
    json_object_foreach(json_object_get(c, "patch"), k, v)
    {
        json_t *target = json_object_get(req, k);
        const char *pk;
        json_t *pv;

        ck_assert_msg(json_is_object(target), "patch target %s", k);
        json_object_foreach(v, pk, pv) patch_one(target, pk, json_deep_copy(pv));
    }
    if (append != NULL) {
        const char *old = json_string_value(json_object_get(req, "megatron_args"));
        size_t n;
        char *s;

        ck_assert_ptr_nonnull(old);
        n = strlen(old) + json_string_length(append) + 1;
        s = malloc(n);
        ck_assert_ptr_nonnull(s);
        /* On the text's last line: the script's command goes on there
         * (after a final newline it would be a command of its own). */
        {
            size_t keep = strlen(old);

            while (keep > 0 && (old[keep - 1] == '\n' || old[keep - 1] == '\r'))
                keep--;
            snprintf(s, n, "%.*s%s", (int)keep, old, json_string_value(append));
        }
        json_object_set_new(req, "megatron_args", json_string(s));
        free(s);
    }
    return req;
}

/* The body bytes (malloc'd): body_text as is, else the built JSON, or
 * nothing; then padded with spaces to pad_to bytes. */
static char *build_body(const json_t *c, const char *data_dir, size_t *len)
{
    const json_t *text = json_object_get(c, "body_text");
    size_t pad = (size_t)json_integer_value(json_object_get(c, "pad_to"));
    char *b;
    size_t n;

    if (text != NULL) {
        n = json_string_length(text);
        b = malloc(n + 1);
        ck_assert_ptr_nonnull(b);
        memcpy(b, json_string_value(text), n);
    } else if (json_object_get(c, "body") != NULL || json_object_get(c, "files") != NULL) {
        json_t *j = build_json(c, data_dir);

        b = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
        ck_assert_ptr_nonnull(b);
        n = strlen(b);
        json_decref(j);
    } else {
        n = 0;
        b = malloc(1);
        ck_assert_ptr_nonnull(b);
    }
    if (pad > n) {
        char *p = realloc(b, pad + 1);

        ck_assert_ptr_nonnull(p);
        b = p;
        memset(b + n, ' ', pad - n);
        n = pad;
    }
    b[n] = '\0';
    *len = n;
    return b;
}

/* ------------------------------------------------------------------ */
/* the answer                                                          */
/* ------------------------------------------------------------------ */

/* "contains": some string of an array of the answer holds the text (import
 * notes, on a 200 or a problem). */
static void check_contains(const char *name, const json_t *c, const json_t *ans)
{
    const char *k;
    json_t *v;
    size_t i;

    json_object_foreach(json_object_get(c, "contains"), k, v)
    {
        const json_t *arr = th_json_get(ans, k);
        bool found = false;

        ck_assert_msg(json_is_array(arr), "%s: %s is not an array", name, k);
        for (i = 0; i < json_array_size(arr) && !found; i++)
            found = strstr(json_string_value(json_array_get(arr, i)), json_string_value(v)) != NULL;
        ck_assert_msg(found, "%s: no %s entry contains '%s'", name, k, json_string_value(v));
    }
    /* "lacks": no string of that array (if there is one) holds the text */
    json_object_foreach(json_object_get(c, "lacks"), k, v)
    {
        const json_t *arr = th_json_get(ans, k);

        for (i = 0; i < json_array_size(arr); i++)
            ck_assert_msg(strstr(json_string_value(json_array_get(arr, i)), json_string_value(v)) ==
                              NULL,
                          "%s: %s entry %zu contains '%s'", name, k, i, json_string_value(v));
    }
}

static void check_problem(const char *name, const json_t *c, const json_t *ans,
                          const th_case_resp *r)
{
    const char *type = json_string_value(json_object_get(ans, "type"));
    const char *title = json_string_value(json_object_get(ans, "title"));
    const char *detail = json_string_value(json_object_get(ans, "detail"));
    const json_t *field = json_object_get(ans, "field");
    const json_t *want_field = json_object_get(c, "field");
    const char *want_detail = json_string_value(json_object_get(c, "detail"));
    const char *want_allow = json_string_value(json_object_get(c, "allow"));
    const char *slug;
    char want_type[160];
    const ts_api_problem_type *pt = NULL;
    size_t i;

    snprintf(want_type, sizeof want_type, TH_PROBLEM_BASE "%s",
             json_string_value(json_object_get(c, "type")));
    ck_assert_msg(strcmp(type, want_type) == 0, "%s: type %s, want %s (%s)", name, type, want_type,
                  detail);
    if (json_is_null(want_field))
        ck_assert_msg(json_is_null(field), "%s: field %s, want null (%s)", name,
                      json_string_value(field), detail);
    else
        ck_assert_msg(json_is_string(field) &&
                          strcmp(json_string_value(field), json_string_value(want_field)) == 0,
                      "%s: field %s, want %s (%s)", name, json_string_value(field),
                      json_string_value(want_field), detail);
    if (want_detail != NULL)
        ck_assert_msg(strstr(detail, want_detail) != NULL, "%s: detail '%s' lacks '%s'", name,
                      detail, want_detail);
    /* One table (api/ts_problem.c): whoever answered, api or server, the
     * slug is in it, with this status and this title. */
    slug = type + strlen(TH_PROBLEM_BASE);
    for (i = 0; pt == NULL && ts_api_problem_type_at(i) != NULL; i++)
        if (strcmp(ts_api_problem_type_at(i)->slug, slug) == 0)
            pt = ts_api_problem_type_at(i);
    ck_assert_msg(pt != NULL, "%s: %s is not in the problem table", name, slug);
    ck_assert_msg(pt->status == r->status, "%s: %s answered %u, the table says %u", name, slug,
                  r->status, pt->status);
    ck_assert_msg(strcmp(title, pt->title) == 0, "%s: title '%s', the table says '%s'", name, title,
                  pt->title);
    if (want_allow != NULL)
        ck_assert_msg(r->allow != NULL && strcmp(r->allow, want_allow) == 0,
                      "%s: Allow '%s', want '%s'", name, r->allow ? r->allow : "(none)",
                      want_allow);
}

static void check_success(const char *name, const json_t *c, const json_t *ans,
                          const th_transport *t)
{
    const char *route = json_string_value(json_object_get(c, "route"));
    const json_t *absent = json_object_get(c, "absent");
    const char *k;
    json_t *v;
    size_t i;

    json_object_foreach(json_object_get(c, "expect"), k, v)
    {
        const json_t *got = th_json_get(ans, k);
        char *gs, *ws;

        ck_assert_msg(got != NULL, "%s: %s missing", name, k);
        if (th_json_same(got, v))
            continue;
        gs = json_dumps(got, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        ws = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        ck_abort_msg("%s: %s = %s, want %s", name, k, gs, ws);
    }
    check_contains(name, c, ans);
    for (i = 0; i < json_array_size(absent); i++)
        ck_assert_msg(th_json_get(ans, json_string_value(json_array_get(absent, i))) == NULL,
                      "%s: %s should be absent", name,
                      json_string_value(json_array_get(absent, i)));
    /* CONTRACT.md: the inputs echo is itself a valid request, and it
     * resolves to the same inputs.  /v1/fit and /v1/search echo members
     * only they take, so their echo goes back to neither. */
    if (json_object_get(ans, "inputs") != NULL && strcmp(route, "/v1/fit") != 0 &&
        strcmp(route, "/v1/search") != 0) {
        char *echo =
            json_dumps(json_object_get(ans, "inputs"), JSON_COMPACT | JSON_REAL_PRECISION(17));
        th_case_req rq = { "POST", "/v1/memory", "application/json", echo, strlen(echo) };
        th_case_resp r2;
        json_t *again;

        t->send(t->ctx, &rq, &r2);
        ck_assert_msg(r2.status == 200, "%s: echo refused: %s", name, r2.body);
        again = th_json_contract(r2.status, r2.content_type, r2.body, r2.body_len);
        ck_assert_msg(json_equal(json_object_get(again, "inputs"), json_object_get(ans, "inputs")),
                      "%s: the echo resolves to other inputs: %s", name, r2.body);
        json_decref(again);
        th_case_resp_free(&r2);
        free(echo);
    }
}

void th_case_run(const json_t *c, const char *data_dir, const th_transport *t)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    const json_t *ct = json_object_get(c, "content_type");
    unsigned want = (unsigned)json_integer_value(json_object_get(c, "status"));
    th_case_req rq;
    th_case_resp r;
    size_t len;
    char *body = build_body(c, data_dir, &len);
    json_t *ans;

    rq.method = json_is_string(json_object_get(c, "method"))
                    ? json_string_value(json_object_get(c, "method"))
                    : "POST";
    rq.route = json_string_value(json_object_get(c, "route"));
    rq.content_type = ct == NULL ? "application/json" : json_string_value(ct);
    rq.body = body;
    rq.body_len = len;
    t->send(t->ctx, &rq, &r);
    ck_assert_msg(r.status == want, "%s: status %u, want %u: %.400s", name, r.status, want, r.body);
    /* Allow goes with 405 only (RFC 9110 15.5.6). */
    ck_assert_msg((r.status == 405) == (r.allow != NULL), "%s: %u with Allow '%s'", name, r.status,
                  r.allow != NULL ? r.allow : "(none)");
    if (strcmp(rq.method, "HEAD") == 0) {
        /* HEAD: the status of GET, no body (RFC 9110 9.3.2). */
        ck_assert_msg(r.body_len == 0, "%s: HEAD answered %zu body bytes", name, r.body_len);
        th_case_resp_free(&r);
        free(body);
        return;
    }
    ans = th_json_contract(r.status, r.content_type, r.body, r.body_len);
    if (want >= 400) {
        check_problem(name, c, ans, &r);
        check_contains(name, c, ans);
    } else
        check_success(name, c, ans, t);
    json_decref(ans);
    th_case_resp_free(&r);
    free(body);
}

void th_case_resp_free(th_case_resp *resp)
{
    free(resp->content_type);
    free(resp->allow);
    free(resp->body);
    resp->content_type = resp->allow = resp->body = NULL;
}
