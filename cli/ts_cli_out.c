/*
 * ts_cli_out.c - the reports of check and estimate (see ts_cli_out.h).
 *
 * text      the tables (estimate) or the verdict and memory rows (check)
 * json      one document: every plan, its verdict, margin, worst stage
 *           and the answer as the API sent it (its bytes, spliced in)
 * jsonl     one line per plan, the same plan objects
 * junit     Ant's JUnit XML, the schema CI systems read: testsuites >
 *           testsuite > testcase, failure = does not fit, error = no
 *           verdict (tests/data/junit.xsd)
 * github    GitHub Actions workflow commands (::error file=,line=::),
 *           escaped as actions/toolkit's command.ts does
 * markdown  one summary table, for $GITHUB_STEP_SUMMARY or a PR comment
 * csv       RFC 4180: a row per plan (check) or per figure (estimate)
 */
#include "ts_cli_out.h"
#include "ts_cli_esc.h"
#include "ts_cli_locate.h"
#include "ts_cli_report.h"
#include "ts_cli_terms.h"
#include "ts_fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- */
/* shared pieces                                                     */
/* ---------------------------------------------------------------- */

static const char *verdict_name(ts_check_verdict v)
{
    switch (v) {
    case TS_CHECK_FITS:
        return "fits";
    case TS_CHECK_NO:
        return "does-not-fit";
    case TS_CHECK_REJECTED:
        return "rejected";
    case TS_CHECK_ERROR:
    default:
        return "error";
    }
}

static const char *verdict_word(ts_check_verdict v)
{
    switch (v) {
    case TS_CHECK_FITS:
        return "PASS";
    case TS_CHECK_NO:
        return "FAIL";
    case TS_CHECK_REJECTED:
        return "REJECTED";
    case TS_CHECK_ERROR:
    default:
        return "ERROR";
    }
}

static const char *command_name(const ts_check_run_info *run)
{
    return run->opts->estimate ? "estimate" : "check";
}

static const char *plan_name(const ts_check_result *r)
{
    if (r->file == NULL)
        return "command line";
    return strcmp(r->file, "-") == 0 ? "standard input" : r->file;
}

static ts_check_verdict worst_of(const ts_check_run_info *run, size_t count[4])
{
    ts_check_verdict worst = TS_CHECK_FITS;
    size_t i;

    memset(count, 0, 4 * sizeof count[0]);
    for (i = 0; i < run->n; i++) {
        count[run->results[i].verdict]++;
        if (run->results[i].verdict > worst)
            worst = run->results[i].verdict;
    }
    return worst;
}

static void human(char *buf, size_t size, double v)
{
    if (isfinite(v))
        ts_fmt_human(buf, size, v, TS_FMT_BYTES, "B");
    else
        snprintf(buf, size, "n/a");
}

/* ---------------------------------------------------------------- */
/* where a note or a problem points                                  */
/* ---------------------------------------------------------------- */

typedef struct out_place {
    const char *file; /* NULL: no file (the command line alone) */
    unsigned line;    /* 0: none */
} out_place;

/* The request member a pointer or note starts with: "/hf_config/x" or
 * "megatron_args: ..." -> its index, *rest the pointer inside it. */
static int import_of(const char *what, const char **rest)
{
    for (int k = 0; k < TS_CHECK_IMP_COUNT; k++) {
        size_t n = strlen(ts_check_import_members[k]);
        const char *p = what[0] == '/' ? what + 1 : what;

        if (strncmp(p, ts_check_import_members[k], n) == 0 &&
            (p[n] == '/' || p[n] == ' ' || p[n] == ':' || p[n] == '\0')) {
            *rest = p + n;
            return k;
        }
    }
    return -1;
}

/* The first "--flag" word of a Megatron note, into buf. */
static bool first_flag(const char *note, char *buf, size_t size)
{
    const char *p = strstr(note, "--");
    size_t n;

    if (p == NULL)
        return false;
    n = strspn(p, "-abcdefghijklmnopqrstuvwxyz0123456789_");
    if (n <= 2 || n >= size)
        return false;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return true;
}

/* File and line of what a note or a problem's field names.  what is a
 * note's text (its pointer first) or a field's pointer. */
static out_place place_of(const ts_check_run_info *run, const ts_check_result *r, const char *what)
{
    out_place pl = { r->file, 0 };
    const ts_check_src *plan =
        r->file != NULL ? &run->srcs[TS_CHECK_IMP_COUNT + (size_t)(r - run->results)] : NULL;
    const char *rest = NULL, *text;
    char ptr[256], flag[64];
    int k = import_of(what, &rest);

    /* the pointer: up to the first space or ':' after the slash form */
    if (what[0] == '/')
        snprintf(ptr, sizeof ptr, "%.*s", (int)strcspn(what, " :"), what);
    else
        ptr[0] = '\0';
    if (k >= 0 && run->opts->imports[k] != NULL) {
        /* the config came from its own file on the command line */
        pl.file = strcmp(run->opts->imports[k], "-") == 0 ? NULL : run->opts->imports[k];
        text = run->srcs[k].text;
        if (k == TS_CHECK_IMP_MEGA)
            pl.line = first_flag(what, flag, sizeof flag) ? ts_loc_word(text, flag) : 0;
        else if (k == TS_CHECK_IMP_AXOLOTL || k == TS_CHECK_IMP_LLAMAFACTORY)
            pl.line = rest[0] == '/' ? ts_loc_yaml_key(text, rest + 1) : 0;
        else if (ptr[0] != '\0')
            pl.line = ts_loc_json(text, ptr + (rest - what));
        return pl;
    }
    if (plan == NULL || plan->text == NULL || strcmp(plan->path, "-") == 0) {
        pl.file = plan != NULL && strcmp(plan->path, "-") != 0 ? plan->path : NULL;
        return pl;
    }
    /* inside the plan file: the member itself (a YAML or Megatron text
     * inside a JSON string has no lines of its own) */
    if (k == TS_CHECK_IMP_MEGA || k == TS_CHECK_IMP_AXOLOTL || k == TS_CHECK_IMP_LLAMAFACTORY)
        snprintf(ptr, sizeof ptr, "/%s", ts_check_import_members[k]);
    if (ptr[0] != '\0')
        pl.line = ts_loc_json(plan->text, ptr);
    return pl;
}

/* ---------------------------------------------------------------- */
/* text                                                              */
/* ---------------------------------------------------------------- */

void ts_out_raw(FILE *out, const char *raw, size_t len)
{
    fwrite(raw, 1, len, out);
    if (len == 0 || raw[len - 1] != '\n')
        fputc('\n', out);
}

/* A plan without a verdict: its error on err. */
static void text_error(FILE *err, const ts_check_run_info *run, const ts_check_result *r, bool many)
{
    const char *prefix = many ? plan_name(r) : "";
    const char *sep = many ? ": " : "";

    if (run->opts->estimate) {
        if (r->verdict == TS_CHECK_REJECTED && json_is_string(ts_report_get(r->answer, "detail"))) {
            fprintf(err, "%s%s", prefix, sep);
            ts_report_problem(err, r->answer, 400);
        } else {
            fprintf(err, "%s%s%s%s\n", prefix, sep, many ? "" : "trainsize: ", r->summary);
        }
        return;
    }
    fprintf(err, "%s%s%s: %s\n", prefix, sep, verdict_word(r->verdict), r->summary);
}

static void report_text(FILE *out, FILE *err, const ts_check_run_info *run)
{
    const ts_check_opts *o = run->opts;
    bool many = run->n > 1;
    size_t i, k, count[4];

    worst_of(run, count);
    for (i = 0; i < run->n; i++) {
        const ts_check_result *r = &run->results[i];
        FILE *rep = o->raw_json ? err : out;

        if (many && !o->raw_json)
            fprintf(out, "%s== %s\n", i > 0 ? "\n" : "", plan_name(r));
        if (r->verdict >= TS_CHECK_REJECTED) {
            text_error(err, run, r, many);
            continue;
        }
        if (o->raw_json) {
            /* the answers unchanged on stdout; a verdict against it on stderr */
            ts_out_raw(out, r->raw, r->raw_len);
            if (r->verdict == TS_CHECK_NO)
                fprintf(err, "%s%s%s\n", many ? plan_name(r) : "trainsize", ": ", r->summary);
            continue;
        }
        if (o->estimate)
            ts_report_plan(out, r->answer, o->formulas);
        else if (r->report != NULL)
            fwrite(r->report, 1, r->report_len, out);
        for (k = 0; k < r->n_notes; k++)
            fprintf(rep, "note: %s\n", r->notes[k]);
        if (o->estimate)
            fprintf(out, "\nVerdict: %s\n", r->summary);
    }
    if (many && !o->raw_json)
        fprintf(out, "\n%zu plans: %zu fit, %zu do not fit, %zu rejected, %zu errors\n", run->n,
                count[TS_CHECK_FITS], count[TS_CHECK_NO], count[TS_CHECK_REJECTED],
                count[TS_CHECK_ERROR]);
}

/* ---------------------------------------------------------------- */
/* json, jsonl                                                       */
/* ---------------------------------------------------------------- */

static void json_plan(FILE *out, const ts_check_run_info *run, const ts_check_result *r)
{
    size_t k;

    fputs("{\"file\":", out);
    ts_esc_json_str(out, r->file);
    fputs(",\"verdict\":", out);
    ts_esc_json_str(out, verdict_name(r->verdict));
    fprintf(out, ",\"exit\":%d,\"summary\":", (int)r->verdict);
    ts_esc_json_str(out, r->summary);
    fputs(",\"margin\":", out);
    ts_esc_json_num(out, run->opts->margin);
    fputs(",\"total_bytes\":", out);
    ts_esc_json_num(out, r->total);
    fputs(",\"allowed_bytes\":", out);
    ts_esc_json_num(out, r->allowed);
    fputs(",\"hbm_bytes\":", out);
    ts_esc_json_num(out, r->hbm);
    fputs(",\"spare_bytes\":", out);
    ts_esc_json_num(out, r->allowed - r->total);
    fputs(",\"worst_stage\":", out);
    ts_esc_json_num(out, r->worst_stage);
    fputs(",\"field\":", out);
    ts_esc_json_str(out, r->field);
    fputs(",\"notes\":[", out);
    for (k = 0; k < r->n_notes; k++) {
        if (k > 0)
            fputc(',', out);
        ts_esc_json_str(out, r->notes[k]);
    }
    /* the API's answer (or its problem) as its bytes: the same text the
     * server sends, not a re-encoding */
    fputs("],\"answer\":", out);
    if (r->answer != NULL)
        fwrite(r->raw, 1, r->raw_len, out);
    else
        fputs("null", out);
    fputc('}', out);
}

static void report_json(FILE *out, const ts_check_run_info *run, bool lines)
{
    size_t i, count[4];
    ts_check_verdict worst = worst_of(run, count);

    if (lines) {
        for (i = 0; i < run->n; i++) {
            json_plan(out, run, &run->results[i]);
            fputc('\n', out);
        }
        return;
    }
    fprintf(out, "{\"trainsize\":\"%s\",\"command\":\"%s\",\"source\":", TS_CLI_VERSION,
            command_name(run));
    ts_esc_json_str(out, ts_conn_name(run->conn));
    fputs(",\"margin\":", out);
    ts_esc_json_num(out, run->opts->margin);
    fputs(",\"verdict\":", out);
    ts_esc_json_str(out, verdict_name(worst));
    fprintf(out,
            ",\"exit\":%d,\"counts\":{\"plans\":%zu,\"fits\":%zu,\"does_not_fit\":%zu,"
            "\"rejected\":%zu,\"error\":%zu},\"plans\":[",
            (int)worst, run->n, count[TS_CHECK_FITS], count[TS_CHECK_NO], count[TS_CHECK_REJECTED],
            count[TS_CHECK_ERROR]);
    for (i = 0; i < run->n; i++) {
        if (i > 0)
            fputc(',', out);
        json_plan(out, run, &run->results[i]);
    }
    fputs("]}\n", out);
}

/* ---------------------------------------------------------------- */
/* junit                                                             */
/* ---------------------------------------------------------------- */

static void xml_attr(FILE *out, const char *name, const char *value)
{
    char buf[4096];

    ts_esc_xml(buf, sizeof buf, value);
    fprintf(out, " %s=\"%s\"", name, buf);
}

static void junit_case(FILE *out, const ts_check_result *r)
{
    const char *tag = r->verdict == TS_CHECK_NO ? "failure" : "error";
    size_t k;

    fprintf(out, "    <testcase");
    xml_attr(out, "name", plan_name(r));
    xml_attr(out, "classname", "trainsize.check");
    fprintf(out, " time=\"%.3f\">\n", r->seconds);
    if (r->verdict != TS_CHECK_FITS) {
        fprintf(out, "      <%s", tag);
        xml_attr(out, "message", r->summary);
        xml_attr(out, "type",
                 r->verdict == TS_CHECK_NO         ? "does-not-fit"
                 : r->verdict == TS_CHECK_REJECTED ? "rejected"
                                                   : "error");
        fprintf(out, ">");
        if (r->report != NULL) {
            size_t cap = r->report_len * 6 + 64;
            char *text = malloc(cap);

            if (text != NULL) {
                ts_esc_xml(text, cap, r->report);
                fputs(text, out);
                free(text);
            }
        }
        fprintf(out, "</%s>\n", tag);
    }
    if (r->n_notes > 0) {
        fprintf(out, "      <system-out>");
        for (k = 0; k < r->n_notes; k++) {
            char buf[1024];

            ts_esc_xml(buf, sizeof buf, r->notes[k]);
            fprintf(out, "note: %s&#10;", buf);
        }
        fprintf(out, "</system-out>\n");
    }
    fprintf(out, "    </testcase>\n");
}

/* Ant's JUnit report format: properties, testcase*, system-out and
 * system-err inside each testsuite, in that order. */
static void report_junit(FILE *out, const ts_check_run_info *run)
{
    size_t i, count[4];
    double total = 0;
    char stamp[32], host[256], margin[32], name[32];
    time_t now = time(NULL);
    struct tm tm;

    worst_of(run, count);
    for (i = 0; i < run->n; i++)
        total += run->results[i].seconds;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    snprintf(margin, sizeof margin, "%.6g", run->opts->margin);
    snprintf(name, sizeof name, "trainsize %s", command_name(run));

    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
    xml_attr(out, "name", name);
    fprintf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n", run->n,
            count[TS_CHECK_NO], count[TS_CHECK_REJECTED] + count[TS_CHECK_ERROR], total);
    fprintf(out, "  <testsuite");
    xml_attr(out, "name", name);
    fprintf(out, " package=\"trainsize\" id=\"0\"");
    xml_attr(out, "timestamp", stamp);
    xml_attr(out, "hostname", host);
    fprintf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\" time=\"%.3f\">\n",
            run->n, count[TS_CHECK_NO], count[TS_CHECK_REJECTED] + count[TS_CHECK_ERROR], total);
    fprintf(out, "    <properties>\n      <property name=\"url\"");
    xml_attr(out, "value", ts_conn_name(run->conn));
    fprintf(out, "/>\n      <property name=\"margin\" value=\"%s\"/>\n    </properties>\n", margin);
    for (i = 0; i < run->n; i++)
        junit_case(out, &run->results[i]);
    fprintf(out, "    <system-out></system-out>\n    <system-err></system-err>\n");
    fprintf(out, "  </testsuite>\n</testsuites>\n");
}

/* ---------------------------------------------------------------- */
/* github                                                            */
/* ---------------------------------------------------------------- */

/* "::level file=F,line=L,title=T::message" (file and line when known). */
static void gh_command(FILE *out, const char *level, out_place pl, const char *title,
                       const char *msg)
{
    char file[1024], t[256], m[2048];

    ts_esc_gh(t, sizeof t, title, true);
    ts_esc_gh(m, sizeof m, msg, false);
    fprintf(out, "::%s ", level);
    if (pl.file != NULL) {
        ts_esc_gh(file, sizeof file, pl.file, true);
        fprintf(out, "file=%s,", file);
        if (pl.line > 0)
            fprintf(out, "line=%u,", pl.line);
    }
    fprintf(out, "title=%s::%s\n", t, m);
}

static void report_github(FILE *out, const ts_check_run_info *run)
{
    char title[64];
    size_t i, k;

    for (i = 0; i < run->n; i++) {
        const ts_check_result *r = &run->results[i];
        out_place pl = r->field != NULL ? place_of(run, r, r->field) : place_of(run, r, "");

        snprintf(title, sizeof title, "trainsize %s %s", command_name(run),
                 verdict_word(r->verdict));
        gh_command(out, r->verdict == TS_CHECK_FITS ? "notice" : "error", pl, title, r->summary);
        for (k = 0; k < r->n_notes; k++)
            gh_command(out, "warning", place_of(run, r, r->notes[k]), "trainsize import note",
                       r->notes[k]);
    }
}

/* ---------------------------------------------------------------- */
/* markdown                                                          */
/* ---------------------------------------------------------------- */

static const char *verdict_md(ts_check_verdict v)
{
    switch (v) {
    case TS_CHECK_FITS:
        return "\xE2\x9C\x85 fits"; /* U+2705 */
    case TS_CHECK_NO:
        return "\xE2\x9D\x8C does not fit"; /* U+274C */
    case TS_CHECK_REJECTED:
        return "\xE2\x9A\xA0\xEF\xB8\x8F rejected"; /* U+26A0 U+FE0F */
    case TS_CHECK_ERROR:
    default:
        return "\xE2\x9A\xA0\xEF\xB8\x8F error";
    }
}

static void report_markdown(FILE *out, const ts_check_run_info *run)
{
    size_t i, k, count[4];
    char margin[32];

    worst_of(run, count);
    snprintf(margin, sizeof margin, "%.4g%%", run->opts->margin * 100);
    /* a setext heading: a line and dashes under it */
    fprintf(out, "trainsize %s: %zu of %zu plan%s fit%s with a %s margin\n---\n\n",
            command_name(run), count[TS_CHECK_FITS], run->n, run->n == 1 ? "" : "s",
            count[TS_CHECK_FITS] == 1 ? "s" : "", margin);
    fputs("| plan | verdict | per GPU | allowed | HBM | spare | worst stage |\n"
          "|---|---|---:|---:|---:|---:|---:|\n",
          out);
    for (i = 0; i < run->n; i++) {
        const ts_check_result *r = &run->results[i];
        char t[TS_FMT_HUMAN_LEN], a[TS_FMT_HUMAN_LEN], h[TS_FMT_HUMAN_LEN], s[TS_FMT_HUMAN_LEN];
        const json_t *th = ts_report_get(r->answer, "memory.total.human");

        human(a, sizeof a, r->allowed);
        human(h, sizeof h, r->hbm);
        human(s, sizeof s, r->allowed - r->total);
        if (json_is_string(th))
            snprintf(t, sizeof t, "%s", json_string_value(th));
        else
            human(t, sizeof t, r->total);
        fputs("| ", out);
        ts_esc_md_cell(out, plan_name(r));
        fprintf(out, " | %s | %s | %s | %s | %s | ", verdict_md(r->verdict), t, a, h, s);
        if (isfinite(r->worst_stage))
            fprintf(out, "%.0f |\n", r->worst_stage);
        else
            fputs("n/a |\n", out);
    }
    /* what did not fit, and the notes, under the table */
    for (i = 0; i < run->n; i++) {
        const ts_check_result *r = &run->results[i];

        if (r->verdict == TS_CHECK_FITS && r->n_notes == 0)
            continue;
        fputs("\n**", out);
        ts_esc_md_cell(out, plan_name(r));
        fputs("**: ", out);
        ts_esc_md_cell(out, r->summary);
        fputc('\n', out);
        for (k = 0; k < r->n_notes; k++) {
            fputs("- note: ", out);
            ts_esc_md_cell(out, r->notes[k]);
            fputc('\n', out);
        }
    }
}

/* ---------------------------------------------------------------- */
/* csv                                                               */
/* ---------------------------------------------------------------- */

/* estimate: a row per figure of the tables (the terms table's rows). */
static void csv_figures(FILE *out, const ts_check_result *r)
{
    for (size_t i = 0; i < ts_cli_term_count; i++) {
        const ts_cli_term *t = &ts_cli_terms[i];
        const json_t *obj = ts_report_get(r->answer, t->obj);
        const json_t *v = json_object_get(obj, t->key), *h;

        if (t->shape == TS_CLI_TERM_OBJECT) {
            h = json_object_get(v, "human");
            v = json_object_get(v, "value");
        } else if (t->shape == TS_CLI_TERM_SIBLING) {
            h = json_object_get(obj, t->human_key);
        } else {
            h = json_object_get(json_object_get(obj, "human"), t->key);
        }
        if (!json_is_number(v))
            continue;
        ts_esc_csv_field(out, plan_name(r));
        fputc(',', out);
        ts_esc_csv_field(out, t->obj);
        fputc(',', out);
        ts_esc_csv_field(out, t->key);
        fputc(',', out);
        ts_esc_csv_field(out, t->label);
        fputc(',', out);
        ts_esc_csv_num(out, json_number_value(v));
        fputc(',', out);
        ts_esc_csv_field(out, t->unit);
        fputc(',', out);
        ts_esc_csv_field(out, json_string_value(h));
        fputs("\r\n", out);
    }
}

static void report_csv(FILE *out, const ts_check_run_info *run)
{
    size_t i;

    if (run->opts->estimate)
        fputs("plan,section,figure,label,value,unit,text\r\n", out);
    else
        fputs("plan,verdict,exit,total_bytes,allowed_bytes,hbm_bytes,spare_bytes,margin,"
              "worst_stage,summary\r\n",
              out);
    for (i = 0; i < run->n; i++) {
        const ts_check_result *r = &run->results[i];

        if (run->opts->estimate) {
            /* the verdict first, then the figures */
            ts_esc_csv_field(out, plan_name(r));
            fprintf(out, ",verdict,%s,Verdict,%d,,", verdict_name(r->verdict), (int)r->verdict);
            ts_esc_csv_field(out, r->summary);
            fputs("\r\n", out);
            csv_figures(out, r);
            continue;
        }
        ts_esc_csv_field(out, plan_name(r));
        fprintf(out, ",%s,%d,", verdict_name(r->verdict), (int)r->verdict);
        ts_esc_csv_num(out, r->total);
        fputc(',', out);
        ts_esc_csv_num(out, r->allowed);
        fputc(',', out);
        ts_esc_csv_num(out, r->hbm);
        fputc(',', out);
        ts_esc_csv_num(out, r->allowed - r->total);
        fputc(',', out);
        ts_esc_csv_num(out, run->opts->margin);
        fputc(',', out);
        ts_esc_csv_num(out, r->worst_stage);
        fputc(',', out);
        ts_esc_csv_field(out, r->summary);
        fputs("\r\n", out);
    }
}

void ts_out_plans(FILE *out, FILE *err, const ts_check_run_info *run)
{
    switch (run->opts->format) {
    case TS_CHECK_JSON:
        report_json(out, run, false);
        break;
    case TS_CHECK_JSONL:
        report_json(out, run, true);
        break;
    case TS_CHECK_JUNIT:
        report_junit(out, run);
        break;
    case TS_CHECK_GITHUB:
        report_github(out, run);
        break;
    case TS_CHECK_MARKDOWN:
        report_markdown(out, run);
        break;
    case TS_CHECK_CSV:
        report_csv(out, run);
        break;
    case TS_CHECK_TEXT:
    case TS_CHECK_FORMAT_COUNT:
    default:
        report_text(out, err, run);
        break;
    }
}
