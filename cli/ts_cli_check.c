/*
 * ts_cli_check.c - `trainsize check`, the CI gate (see ts_cli_check.h).
 *
 * Each plan is checked on its own and its report is kept in memory
 * (open_memstream) so the same verdicts can be written as text, as JUnit
 * XML (the Ant schema CI systems read: testsuites > testsuite > testcase
 * with failure for "does not fit" and error for rejected/unreachable) or
 * as GitHub Actions workflow commands (::error file=...::, escaped as
 * actions/toolkit's command.ts does).
 */
#include "ts_cli_check.h"
#include "ts_fmt.h"
#include "ts_cli_http.h"
#include "ts_cli_report.h"
#include "ts_utf8.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { CK_FITS = 0, CK_NO = 1, CK_REJECTED = 2, CK_UNREACHABLE = 3 };

typedef struct check_result {
    const char *name;       /* plan file, or "command line" */
    int code;               /* CK_* */
    char summary[768];      /* one line */
    char *report;           /* full text report, malloc'd (may be NULL) */
    size_t report_len;
    char **notes;           /* import_notes, copied */
    size_t n_notes;
    char *raw;              /* the answer as sent, for --json */
    double seconds;
} check_result;

/* ---------------------------------------------------------------- */
/* options                                                           */
/* ---------------------------------------------------------------- */

static const char *opt_value(int argc, char **argv, int *i, const char *name,
                             bool *missing)
{
    size_t n = strlen(name);
    const char *arg = argv[*i];

    *missing = false;
    if (strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == '=')
        return arg + n + 1;
    if (arg[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

bool ts_check_parse_margin(const char *s, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s)
        return false;
    if (*end == '%') {
        v /= 100.0;
        end++;
    }
    if (*end != '\0' || !isfinite(v) || v < 0 || v >= 1)
        return false;
    *out = v;
    return true;
}

int ts_check_add_file(ts_check_opts *o, const char *path, char *err, size_t errlen)
{
    if (o->n_files >= TS_CHECK_FILES_MAX) {
        snprintf(err, errlen, "at most %d plan files per check", TS_CHECK_FILES_MAX);
        return -1;
    }
    o->files[o->n_files++] = path;
    return 0;
}

int ts_check_parse_option(int argc, char **argv, int *i, ts_check_opts *o,
                          char *err, size_t errlen)
{
    static const char *const names[] = {
        "--hf-config", "--deepspeed", "--megatron-args", "--file", "--margin", "--format",
        "--axolotl"
    };
    size_t k;

    for (k = 0; k < sizeof names / sizeof names[0]; k++) {
        bool missing;
        const char *v = opt_value(argc, argv, i, names[k], &missing);

        if (missing) {
            snprintf(err, errlen, "%s needs a value", names[k]);
            return -1;
        }
        if (v == NULL)
            continue;
        switch (k) {
        case 0: o->hf_config = v; return 1;
        case 1: o->deepspeed = v; return 1;
        case 2: o->megatron_args = v; return 1;
        case 6: o->axolotl = v; return 1;
        case 3: return ts_check_add_file(o, v, err, errlen) == 0 ? 1 : -1;
        case 4:
            if (!ts_check_parse_margin(v, &o->margin)) {
                snprintf(err, errlen, "--margin needs a fraction of HBM to keep free, "
                         "like 10%% or 0.1 (in [0, 1)), got '%s'", v);
                return -1;
            }
            return 1;
        case 5:
        default:
            if (strcmp(v, "text") == 0)
                o->format = TS_CHECK_TEXT;
            else if (strcmp(v, "junit") == 0)
                o->format = TS_CHECK_JUNIT;
            else if (strcmp(v, "github") == 0)
                o->format = TS_CHECK_GITHUB;
            else {
                snprintf(err, errlen, "--format is text, junit or github, got '%s'", v);
                return -1;
            }
            return 1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- */
/* escaping                                                          */
/* ---------------------------------------------------------------- */

/* Append n bytes if they fit (leaving the NUL); false when full. */
static bool put(char *buf, size_t size, size_t *o, const char *s, size_t n)
{
    if (*o + n + 1 > size)
        return false;
    memcpy(buf + *o, s, n);
    *o += n;
    buf[*o] = '\0';
    return true;
}

/* XML 1.0 text and attribute values: & < > " ' escaped, control
 * characters other than tab/newline (not allowed in XML 1.0) dropped. */
void ts_check_xml_escape(char *buf, size_t size, const char *s)
{
    size_t o = 0;

    if (size == 0)
        return;
    buf[0] = '\0';
    for (; *s != '\0'; s++) {
        const char *rep = NULL;
        unsigned char c = (unsigned char)*s;
        bool ok;

        switch (c) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&apos;"; break;
        case '\n': rep = "&#10;"; break;
        case '\t': rep = "&#9;"; break;
        default: break;
        }
        if (rep == NULL && c < 0x20)
            continue;
        ok = rep != NULL ? put(buf, size, &o, rep, strlen(rep))
                         : put(buf, size, &o, s, 1);
        if (!ok) {
            ts_utf8_trim(buf, o);
            return;
        }
    }
}

/* Workflow command escaping (actions/toolkit command.ts): data: % CR LF;
 * property values also : and ,. */
void ts_check_gh_escape(char *buf, size_t size, const char *s, bool property)
{
    size_t o = 0;

    if (size == 0)
        return;
    buf[0] = '\0';
    for (; *s != '\0'; s++) {
        const char *rep = NULL;
        bool ok;

        switch (*s) {
        case '%': rep = "%25"; break;
        case '\r': rep = "%0D"; break;
        case '\n': rep = "%0A"; break;
        case ':': rep = property ? "%3A" : NULL; break;
        case ',': rep = property ? "%2C" : NULL; break;
        default: break;
        }
        ok = rep != NULL ? put(buf, size, &o, rep, strlen(rep))
                         : put(buf, size, &o, s, 1);
        if (!ok) {
            ts_utf8_trim(buf, o);
            return;
        }
    }
}

/* ---------------------------------------------------------------- */
/* one plan                                                          */
/* ---------------------------------------------------------------- */

/* Whole file, NUL-terminated; NULL with why in err. */
static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n = 0;

    if (f == NULL) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    buf = malloc((size_t)TS_CHECK_FILE_MAX + 1);
    if (buf == NULL) {
        fclose(f);
        snprintf(err, errlen, "out of memory reading %s", path);
        return NULL;
    }
    n = fread(buf, 1, (size_t)TS_CHECK_FILE_MAX + 1, f);
    if (ferror(f) || n > (size_t)TS_CHECK_FILE_MAX) {
        snprintf(err, errlen, ferror(f) ? "cannot read %s" : "%s is larger than 1 MiB", path);
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    buf[n] = '\0';
    if (len != NULL)
        *len = n;
    return buf;
}

static json_t *load_json_file(const char *path, bool object, char *err, size_t errlen)
{
    size_t n = 0;
    char *text = slurp(path, &n, err, errlen);
    json_error_t je;
    json_t *j;

    if (text == NULL)
        return NULL;
    j = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (j == NULL) {
        snprintf(err, errlen, "%s: invalid JSON at line %d, column %d: %s", path,
                 je.line, je.column, je.text);
        return NULL;
    }
    if (object && !json_is_object(j)) {
        snprintf(err, errlen, "%s: a plan is a JSON object (the API's request body)", path);
        json_decref(j);
        return NULL;
    }
    return j;
}

/* The command line's imports, read once. */
typedef struct check_imports {
    json_t *hf, *ds, *mega, *axolotl;
} check_imports;

/* A text file as a JSON string (megatron_args, axolotl_config). */
static json_t *load_text_file(const char *path, char *err, size_t errlen)
{
    size_t n = 0;
    char *text = slurp(path, &n, err, errlen);
    json_t *s;

    if (text == NULL)
        return NULL;
    s = json_stringn(text, n);
    free(text);
    if (s == NULL)
        snprintf(err, errlen, "%s is not UTF-8 text", path);
    return s;
}

static int load_imports(const ts_check_opts *o, check_imports *im, char *err, size_t errlen)
{
    memset(im, 0, sizeof *im);
    if (o->hf_config != NULL &&
        (im->hf = load_json_file(o->hf_config, true, err, errlen)) == NULL)
        return -1;
    if (o->deepspeed != NULL &&
        (im->ds = load_json_file(o->deepspeed, true, err, errlen)) == NULL)
        return -1;
    if (o->megatron_args != NULL &&
        (im->mega = load_text_file(o->megatron_args, err, errlen)) == NULL)
        return -1;
    if (o->axolotl != NULL &&
        (im->axolotl = load_text_file(o->axolotl, err, errlen)) == NULL)
        return -1;
    return 0;
}

static void free_imports(check_imports *im)
{
    json_decref(im->hf);
    json_decref(im->ds);
    json_decref(im->mega);
    json_decref(im->axolotl);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void copy_notes(check_result *r, const json_t *answer)
{
    const json_t *notes = ts_report_get(answer, "import_notes");
    size_t i, n = json_array_size(notes);

    if (n == 0)
        return;
    r->notes = calloc(n, sizeof *r->notes);
    if (r->notes == NULL)
        return;
    for (i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(notes, i));

        if (s != NULL && (r->notes[r->n_notes] = strdup(s)) != NULL)
            r->n_notes++;
    }
}

/* Verdict on a /v1/memory answer; the report text goes to rep. */
static int judge(const ts_check_opts *o, const json_t *a, check_result *r, FILE *rep)
{
    const json_t *mem = ts_report_get(a, "memory");
    double total = ts_report_num(mem, "total.value");
    double hbm = ts_report_num(mem, "hbm_bytes");
    double worst = ts_report_num(mem, "worst_stage");
    double allowed = hbm * (1.0 - o->margin);
    const json_t *t_human = ts_report_get(mem, "total.human");
    const json_t *h_human = ts_report_get(mem, "human.hbm_bytes");
    char t[TS_FMT_HUMAN_LEN], h[TS_FMT_HUMAN_LEN], al[TS_FMT_HUMAN_LEN], gap[TS_FMT_HUMAN_LEN];
    bool fits = false;

    if (!ts_report_check(rep, a, &fits) || !isfinite(total) || !isfinite(hbm)) {
        snprintf(r->summary, sizeof r->summary,
                 "the server's answer has no memory.total / hbm_bytes / fits");
        return CK_UNREACHABLE;
    }
    ts_report_stages(rep, mem);
    /* the answer's texts; the margin's figures are the CLI's own, written
     * by the API's formatter */
    snprintf(t, sizeof t, "%s", json_is_string(t_human) ? json_string_value(t_human) : "n/a");
    snprintf(h, sizeof h, "%s", json_is_string(h_human) ? json_string_value(h_human) : "n/a");
    ts_fmt_human(al, sizeof al, allowed, TS_FMT_BYTES, "B");
    ts_fmt_human(gap, sizeof gap, fabs(allowed - total), TS_FMT_BYTES, "B");
    if (fits && total <= allowed) {
        snprintf(r->summary, sizeof r->summary,
                 "fits with a %.4g%% margin: %s per GPU (worst stage %.0f) of %s allowed "
                 "(%s HBM), %s to spare", o->margin * 100, t, isfinite(worst) ? worst : 0,
                 al, h, gap);
        fprintf(rep, "PASS: %s\n", r->summary);
        return CK_FITS;
    }
    if (fits)
        snprintf(r->summary, sizeof r->summary,
                 "fits, but not with a %.4g%% margin: %s per GPU (worst stage %.0f) > %s "
                 "allowed of %s HBM, over by %s", o->margin * 100, t,
                 isfinite(worst) ? worst : 0, al, h, gap);
    else
        snprintf(r->summary, sizeof r->summary,
                 "does not fit: %s per GPU (worst stage %.0f) > %s HBM", t,
                 isfinite(worst) ? worst : 0, h);
    fprintf(rep, "FAIL: %s\n", r->summary);
    return CK_NO;
}

static void check_one(const ts_check_opts *o, const check_imports *im,
                      const char *url, long timeout_ms, const json_t *run_opts,
                      const char *path, bool json_out, check_result *r)
{
    ts_http_client c = { url, 0, timeout_ms };
    ts_http_response resp;
    ts_http_error herr;
    json_t *plan = NULL, *answer = NULL;
    char *body = NULL;
    char err[640];
    FILE *rep;
    double t0 = now_s();

    memset(r, 0, sizeof *r);
    r->name = path != NULL ? path : "command line";
    rep = open_memstream(&r->report, &r->report_len);
    if (rep == NULL) {
        r->code = CK_UNREACHABLE;
        snprintf(r->summary, sizeof r->summary, "out of memory");
        return;
    }
    if (path != NULL) {
        plan = load_json_file(path, true, err, sizeof err);
        if (plan == NULL) {
            r->code = CK_REJECTED;
            snprintf(r->summary, sizeof r->summary, "%s", err);
            goto done;
        }
    } else {
        plan = json_object();
    }
    /* The command line overrides the plan file: imports, then options. */
    if (im->hf != NULL)
        json_object_set(plan, "hf_config", im->hf);
    if (im->ds != NULL)
        json_object_set(plan, "deepspeed_config", im->ds);
    if (im->mega != NULL)
        json_object_set(plan, "megatron_args", im->mega);
    if (im->axolotl != NULL)
        json_object_set(plan, "axolotl_config", im->axolotl);
    json_object_update(plan, (json_t *)run_opts);
    body = json_dumps(plan, JSON_COMPACT);
    if (body == NULL) {
        r->code = CK_UNREACHABLE;
        snprintf(r->summary, sizeof r->summary, "out of memory");
        goto done;
    }
    if (ts_http_request(&c, "POST", "/v1/memory", body, &resp, &herr) != TS_HTTP_OK) {
        r->code = CK_UNREACHABLE;
        snprintf(r->summary, sizeof r->summary, "%s", herr.text);
        goto done;
    }
    answer = json_loadb(resp.body, resp.len, 0, NULL);
    if (resp.status < 200 || resp.status > 299) {
        if (answer != NULL && ts_http_is_problem(&resp)) {
            const char *detail = json_string_value(json_object_get(answer, "detail"));
            const char *field = json_string_value(json_object_get(answer, "field"));

            r->code = CK_REJECTED;
            snprintf(r->summary, sizeof r->summary, "rejected (HTTP %ld): %s%s%s%s", resp.status,
                     detail != NULL ? detail : "no detail", field != NULL && *field ? " (field " : "",
                     field != NULL ? field : "", field != NULL && *field ? ")" : "");
        } else {
            r->code = resp.status >= 500 ? CK_UNREACHABLE : CK_REJECTED;
            snprintf(r->summary, sizeof r->summary, "server answered HTTP %ld", resp.status);
        }
        ts_http_response_free(&resp);
        goto done;
    }
    if (!json_is_object(answer)) {
        r->code = CK_UNREACHABLE;
        snprintf(r->summary, sizeof r->summary, "%s is not a trainsize server (invalid JSON)", url);
        ts_http_response_free(&resp);
        goto done;
    }
    copy_notes(r, answer);
    r->code = judge(o, answer, r, rep);
    if (json_out) {
        r->raw = resp.body; /* ownership moves to the result */
        resp.body = NULL;
    }
    ts_http_response_free(&resp);
done:
    fclose(rep);
    r->seconds = now_s() - t0;
    free(body);
    json_decref(plan);
    json_decref(answer);
}

/* ---------------------------------------------------------------- */
/* reports                                                           */
/* ---------------------------------------------------------------- */

static const char *verdict_word(int code)
{
    switch (code) {
    case CK_FITS: return "PASS";
    case CK_NO: return "FAIL";
    case CK_REJECTED: return "REJECTED";
    default: return "UNREACHABLE";
    }
}

static void report_text(FILE *out, FILE *err, const check_result *rs, size_t n,
                        bool many)
{
    size_t i, k, count[4] = { 0, 0, 0, 0 };

    for (i = 0; i < n; i++) {
        const check_result *r = &rs[i];

        count[r->code]++;
        if (many)
            fprintf(out, "== %s\n", r->name);
        if (r->code >= CK_REJECTED) {
            fprintf(err, "%s%s%s: %s\n", many ? r->name : "", many ? ": " : "",
                    verdict_word(r->code), r->summary);
            continue;
        }
        /* --json: the answer on stdout, unchanged; the report beside it. */
        if (r->report != NULL)
            fwrite(r->report, 1, r->report_len, r->raw != NULL ? err : out);
        for (k = 0; k < r->n_notes; k++)
            fprintf(r->raw != NULL ? err : out, "note: %s\n", r->notes[k]);
        if (r->raw != NULL) {
            size_t len = strlen(r->raw);

            fputs(r->raw, out);
            if (len == 0 || r->raw[len - 1] != '\n')
                fputc('\n', out);
        }
    }
    if (many)
        fprintf(out, "\n%zu plans: %zu fit, %zu do not fit, %zu rejected, %zu unreachable\n",
                n, count[CK_FITS], count[CK_NO], count[CK_REJECTED], count[CK_UNREACHABLE]);
}

static void xml_attr(FILE *out, const char *name, const char *value)
{
    char buf[4096];

    ts_check_xml_escape(buf, sizeof buf, value);
    fprintf(out, " %s=\"%s\"", name, buf);
}

/* Ant's JUnit report format: properties, testcase*, system-out and
 * system-err inside each testsuite, in that order. */
static void report_junit(FILE *out, const ts_check_opts *o, const char *url,
                         const check_result *rs, size_t n)
{
    size_t i, fail = 0, errs = 0;
    double total = 0;
    char stamp[32], host[256], margin[32];
    time_t now = time(NULL);
    struct tm tm;

    for (i = 0; i < n; i++) {
        fail += rs[i].code == CK_NO;
        errs += rs[i].code >= CK_REJECTED;
        total += rs[i].seconds;
    }
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    snprintf(margin, sizeof margin, "%.6g", o->margin);

    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
    xml_attr(out, "name", "trainsize check");
    fprintf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n",
            n, fail, errs, total);
    fprintf(out, "  <testsuite");
    xml_attr(out, "name", "trainsize check");
    fprintf(out, " package=\"trainsize\" id=\"0\"");
    xml_attr(out, "timestamp", stamp);
    xml_attr(out, "hostname", host);
    fprintf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\" time=\"%.3f\">\n",
            n, fail, errs, total);
    fprintf(out, "    <properties>\n      <property name=\"url\"");
    xml_attr(out, "value", url);
    fprintf(out, "/>\n      <property name=\"margin\" value=\"%s\"/>\n    </properties>\n", margin);
    for (i = 0; i < n; i++) {
        const check_result *r = &rs[i];
        char *text = NULL;
        size_t k;

        fprintf(out, "    <testcase");
        xml_attr(out, "name", r->name);
        xml_attr(out, "classname", "trainsize.check");
        fprintf(out, " time=\"%.3f\"", r->seconds);
        if (r->code == CK_FITS) {
            fprintf(out, ">\n");
        } else {
            size_t cap = r->report_len * 6 + 64;

            fprintf(out, ">\n      <%s", r->code == CK_NO ? "failure" : "error");
            xml_attr(out, "message", r->summary);
            xml_attr(out, "type", r->code == CK_NO ? "does-not-fit"
                                  : r->code == CK_REJECTED ? "rejected" : "unreachable");
            fprintf(out, ">");
            text = r->report != NULL ? malloc(cap) : NULL;
            if (text != NULL) {
                ts_check_xml_escape(text, cap, r->report);
                fputs(text, out);
                free(text);
            }
            fprintf(out, "</%s>\n", r->code == CK_NO ? "failure" : "error");
        }
        if (r->n_notes > 0) {
            fprintf(out, "      <system-out>");
            for (k = 0; k < r->n_notes; k++) {
                char buf[1024];

                ts_check_xml_escape(buf, sizeof buf, r->notes[k]);
                fprintf(out, "note: %s&#10;", buf);
            }
            fprintf(out, "</system-out>\n");
        }
        fprintf(out, "    </testcase>\n");
    }
    fprintf(out, "    <system-out></system-out>\n    <system-err></system-err>\n");
    fprintf(out, "  </testsuite>\n</testsuites>\n");
}

static void report_github(FILE *out, const check_result *rs, size_t n)
{
    size_t i, k;

    for (i = 0; i < n; i++) {
        const check_result *r = &rs[i];
        char file[1024], msg[2048];
        const char *level = r->code == CK_FITS ? "notice" : "error";

        ts_check_gh_escape(file, sizeof file, r->name, true);
        ts_check_gh_escape(msg, sizeof msg, r->summary, false);
        if (rs[i].name != NULL && strcmp(r->name, "command line") != 0)
            fprintf(out, "::%s file=%s,title=trainsize check %s::%s\n", level, file,
                    verdict_word(r->code), msg);
        else
            fprintf(out, "::%s title=trainsize check %s::%s\n", level,
                    verdict_word(r->code), msg);
        for (k = 0; k < r->n_notes; k++) {
            ts_check_gh_escape(msg, sizeof msg, r->notes[k], false);
            fprintf(out, "::warning file=%s,title=trainsize import note::%s\n", file, msg);
        }
    }
}

int ts_check_run(const ts_check_opts *o, const char *url, long timeout_ms,
                 const json_t *run_opts, bool json, FILE *out, FILE *err)
{
    check_imports im;
    check_result *rs;
    size_t n = o->n_files > 0 ? o->n_files : 1, i, k;
    char why[640];
    int worst = CK_FITS;

    if (load_imports(o, &im, why, sizeof why) != 0) {
        fprintf(err, "trainsize: %s\n", why);
        free_imports(&im);
        return CK_REJECTED;
    }
    rs = calloc(n, sizeof *rs);
    if (rs == NULL) {
        fprintf(err, "trainsize: out of memory\n");
        free_imports(&im);
        return CK_UNREACHABLE;
    }
    for (i = 0; i < n; i++) {
        check_one(o, &im, url, timeout_ms, run_opts,
                  o->n_files > 0 ? o->files[i] : NULL,
                  json && o->format == TS_CHECK_TEXT, &rs[i]);
        if (rs[i].code > worst)
            worst = rs[i].code;
    }
    switch (o->format) {
    case TS_CHECK_JUNIT:
        report_junit(out, o, url, rs, n);
        break;
    case TS_CHECK_GITHUB:
        report_github(out, rs, n);
        break;
    case TS_CHECK_TEXT:
    default:
        report_text(out, err, rs, n, o->n_files > 1);
        break;
    }
    for (i = 0; i < n; i++) {
        free(rs[i].report);
        free(rs[i].raw);
        for (k = 0; k < rs[i].n_notes; k++)
            free(rs[i].notes[k]);
        free(rs[i].notes);
    }
    free(rs);
    free_imports(&im);
    return worst;
}
