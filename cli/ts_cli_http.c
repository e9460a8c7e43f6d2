/*
 * ts_cli_http.c - libcurl transport for the trainsize CLI.
 */
#include "ts_cli_http.h"
#include "ts_buf.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TS_HTTP_URL_MAX 2048

/* The response body: the project's one capped buffer (lib/ts_buf.c),
 * with why an append failed kept for the error message. */
typedef struct ts_http_buf {
    ts_buf b;
    ts_buf_status why; /* TS_BUF_FULL or TS_BUF_NOMEM once one failed */
} ts_http_buf;

static ts_http_status http_fail(ts_http_error *err, ts_http_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static ts_http_status http_fail(ts_http_error *err, ts_http_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->text, sizeof err->text, fmt, ap);
        va_end(ap);
    }
    return code;
}

static size_t http_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    ts_http_buf *b = userdata;
    size_t n = size * nmemb;
    ts_buf_status st;

    if (n == 0)
        return 0;
    st = ts_buf_append(&b->b, ptr, n);
    if (st != TS_BUF_OK) {
        b->why = st;
        return 0; /* makes curl abort with CURLE_WRITE_ERROR */
    }
    return n;
}

bool ts_http_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

void ts_http_global_cleanup(void)
{
    curl_global_cleanup();
}

bool ts_http_url_ok(const char *base)
{
    const char *host;

    if (!base)
        return false;
    if (strncasecmp(base, "http://", 7) == 0)
        host = base + 7;
    else if (strncasecmp(base, "https://", 8) == 0)
        host = base + 8;
    else
        return false;
    /* a host is needed; the rest is curl's to judge */
    return *host != '\0' && *host != '/' && strlen(base) < TS_HTTP_URL_MAX / 2;
}

static ts_http_status http_map(CURLcode rc, const ts_http_buf *b, const char *url,
                               const char *detail, ts_http_error *err)
{
    const char *why = detail[0] ? detail : curl_easy_strerror(rc);

    if (b->why == TS_BUF_FULL)
        return http_fail(err, TS_HTTP_ETOOBIG, "response from %s is larger than %u bytes", url,
                         TS_HTTP_BODY_MAX);
    if (b->why == TS_BUF_NOMEM || rc == CURLE_OUT_OF_MEMORY)
        return http_fail(err, TS_HTTP_ENOMEM, "out of memory");
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
        return http_fail(err, TS_HTTP_ECONNECT, "cannot reach %s: %s", url, why);
    case CURLE_OPERATION_TIMEDOUT:
        return http_fail(err, TS_HTTP_ETIMEOUT, "no answer from %s in time: %s", url, why);
    default:
        return http_fail(err, TS_HTTP_EOTHER, "request to %s failed: %s", url, why);
    }
}

ts_http_status ts_http_request(const ts_http_client *c, const char *method, const char *path,
                               const char *body, ts_http_response *resp, ts_http_error *err)
{
    return ts_http_request_raw(c, method, path, body != NULL ? "application/json" : NULL, body,
                               body != NULL ? strlen(body) : 0, resp, err);
}

/* Accept, and the Content-Type (without one curl would send its form
 * type with a body; "Content-Type:" empty drops it).  NULL: no memory. */
static struct curl_slist *http_headers(const char *content_type, bool body)
{
    char ct_header[160];
    struct curl_slist *hdrs, *tmp;

    hdrs = curl_slist_append(NULL, "Accept: application/json, application/problem+json");
    snprintf(ct_header, sizeof ct_header, "Content-Type:%s%s", content_type != NULL ? " " : "",
             content_type != NULL ? content_type : "");
    if (hdrs != NULL && (body || content_type != NULL)) {
        tmp = curl_slist_append(hdrs, ct_header);
        if (tmp == NULL)
            curl_slist_free_all(hdrs);
        hdrs = tmp;
    }
    return hdrs;
}

/* Every option must take: a libcurl built without one (say, an old one
 * without CURLOPT_PROTOCOLS_STR, 7.85.0) would otherwise run the request
 * with a weaker setting than we asked for.  meson.build sets the version
 * floor; this catches the rest. */
static CURLcode http_options(CURL *h, const ts_http_client *c, const char *url, const char *method,
                             struct curl_slist *hdrs, ts_http_buf *buf, char *detail,
                             const char *body, size_t body_len)
{
    CURLcode rc = curl_easy_setopt(h, CURLOPT_URL, url);

    /* only talk HTTP: no file://, no redirects to other schemes */
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                              c->connect_timeout_ms > 0 ? c->connect_timeout_ms
                                                        : TS_HTTP_CONNECT_TIMEOUT_MS);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
                              c->timeout_ms > 0 ? c->timeout_ms : TS_HTTP_TIMEOUT_MS);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(h, CURLOPT_USERAGENT, "trainsize-cli/" TS_CLI_VERSION);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, http_write);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(h, CURLOPT_WRITEDATA, buf);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(h, CURLOPT_ERRORBUFFER, detail);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (rc == CURLE_OK && body)
        rc = curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    if (rc == CURLE_OK && body)
        rc = curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    return rc;
}

ts_http_status ts_http_request_raw(const ts_http_client *c, const char *method, const char *path,
                                   const char *content_type, const char *body, size_t body_len,
                                   ts_http_response *resp, ts_http_error *err)
{
    char url[TS_HTTP_URL_MAX];
    char detail[CURL_ERROR_SIZE];
    size_t blen;
    ts_http_buf buf = { .why = TS_BUF_OK };
    struct curl_slist *hdrs;
    CURL *h;
    CURLcode rc;
    char *ctype = NULL;
    ts_http_status st = TS_HTTP_OK;
    int n;

    memset(resp, 0, sizeof *resp);
    ts_buf_init(&buf.b, TS_HTTP_BODY_MAX);
    if (!ts_http_url_ok(c->base_url))
        return http_fail(err, TS_HTTP_EURL, "URL must start with http:// or https://: '%s'",
                         c->base_url ? c->base_url : "");

    /* join without doubling the slash: base "http://h:1/" + "/v1/plan" */
    blen = strlen(c->base_url);
    while (blen > 0 && c->base_url[blen - 1] == '/')
        blen--;
    n = snprintf(url, sizeof url, "%.*s%s", (int)blen, c->base_url, path);
    if (n < 0 || (size_t)n >= sizeof url)
        return http_fail(err, TS_HTTP_EURL, "URL too long");

    h = curl_easy_init();
    if (!h)
        return http_fail(err, TS_HTTP_ENOMEM, "cannot start libcurl");
    hdrs = http_headers(content_type, body != NULL);
    if (!hdrs) {
        curl_easy_cleanup(h);
        return http_fail(err, TS_HTTP_ENOMEM, "out of memory");
    }

    detail[0] = '\0';
    rc = http_options(h, c, url, method, hdrs, &buf, detail, body, body_len);
    if (rc != CURLE_OK) {
        st = http_fail(err, rc == CURLE_OUT_OF_MEMORY ? TS_HTTP_ENOMEM : TS_HTTP_EOTHER,
                       "libcurl refused an option: %s", curl_easy_strerror(rc));
        goto out;
    }

    rc = curl_easy_perform(h);
    if (rc != CURLE_OK) {
        st = http_map(rc, &buf, url, detail, err);
        ts_buf_free(&buf.b);
        goto out;
    }

    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
    if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ctype) == CURLE_OK && ctype)
        snprintf(resp->content_type, sizeof resp->content_type, "%s", ctype);
    /* An empty body is still a valid string ("" from ts_buf_steal). */
    resp->body = ts_buf_steal(&buf.b, &resp->len);
    if (!resp->body) {
        st = http_fail(err, TS_HTTP_ENOMEM, "out of memory");
        memset(resp, 0, sizeof *resp);
        goto out;
    }

out:
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    return st;
}

void ts_http_response_free(ts_http_response *resp)
{
    if (!resp)
        return;
    free(resp->body);
    resp->body = NULL;
    resp->len = 0;
}

bool ts_http_is_problem(const ts_http_response *resp)
{
    static const char want[] = "application/problem+json";
    return strncasecmp(resp->content_type, want, sizeof want - 1) == 0;
}
