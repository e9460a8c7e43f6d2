/*
 * ts_gen_fields.c - write every copy of the request-field registry and of
 * the output-terms table.
 *
 * The registry is core/ts_fields.def, one row per request field, as
 * the runtime tables hold it: ts_fields[] (core/ts_fields.c: name, JSON
 * type, range, enum values) and ts_field_docs[] (api/ts_fields_doc.c:
 * doc, unit, default, CLI help, dashboard group, label and hint).  The terms
 * table is ts_terms[] (api/ts_terms.c: object, key, human kind and unit,
 * label, doc, formula).  From them:
 *
 *   ts_gen_fields dict OUT [WORDS]  the libFuzzer dictionary (fuzz/api.dict),
 *                                   hand-written WORDS appended
 *   ts_gen_fields md OUT            the reference table (docs/fields.md)
 *   ts_gen_fields cli-c OUT         the CLI's option table (C, build dir)
 *   ts_gen_fields cli-help OUT      the CLI's run-option list, as --help
 *   ts_gen_fields fields-js OUT     the dashboard's form fields (web/fields.js)
 *   ts_gen_fields terms-js OUT      the terms table for the dashboard (web/terms.js)
 *   ts_gen_fields terms-md OUT      the terms reference (docs/terms.md)
 *   ts_gen_fields cli-terms OUT     the CLI's estimate rows (C, build dir)
 *   ts_gen_fields check KIND COMMITTED OUT [WORDS]
 *                                   generate KIND into OUT; exit 1 with a
 *                                   diff hint when COMMITTED differs
 *                                   (meson test).
 * OUT "-" is stdout.  api/openapi.json has its own writer,
 * tools/ts_gen_openapi.c, which reads the same tables.
 *
 * In the spirit of redis' utils/generate-command-code.py and curl's
 * tool_listhelp.c: one table, generated listings.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_buf.h"
#include "ts_fields_doc.h"
#include "ts_gen_check.h"
#include "ts_terms.h"

#define GEN_BY      "tools/ts_gen_fields.c from core/ts_fields.def"
#define GEN_REFRESH "ninja -C BUILDDIR regen-fields"

/* ------------------------------------------------------------------ */
/* Text buffers: lib's ts_buf; the generator dies on a failed append    */
/* ------------------------------------------------------------------ */

/* Far above any generated file (openapi.json, the largest, is ~0.5 MB). */
#define GEN_BUF_MAX   ((size_t)64 << 20)
#define GEN_BUF(name) ts_buf name = { NULL, 0, 0, GEN_BUF_MAX }

static void die(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "ts_gen_fields: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void buf_add(ts_buf *b, const char *s, size_t n)
{
    if (ts_buf_append(b, s, n) != TS_BUF_OK)
        die("out of memory (or a generated file over %zu bytes)", GEN_BUF_MAX);
}

static void buf_printf(ts_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void buf_printf(ts_buf *b, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        die("line too long");
    buf_add(b, tmp, (size_t)n);
}

/* A JSON string literal as Python's json.dumps(ensure_ascii=False). */
static void buf_json_str(ts_buf *b, const char *s)
{
    buf_add(b, "\"", 1);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        switch (c) {
        case '"':
            buf_add(b, "\\\"", 2);
            break;
        case '\\':
            buf_add(b, "\\\\", 2);
            break;
        case '\n':
            buf_add(b, "\\n", 2);
            break;
        case '\r':
            buf_add(b, "\\r", 2);
            break;
        case '\t':
            buf_add(b, "\\t", 2);
            break;
        case '\b':
            buf_add(b, "\\b", 2);
            break;
        case '\f':
            buf_add(b, "\\f", 2);
            break;
        default:
            if (c < 0x20)
                buf_printf(b, "\\u%04x", c);
            else
                buf_add(b, s, 1);
        }
    }
    buf_add(b, "\"", 1);
}

static void write_out(const char *path, const ts_buf *b)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");

    if (f == NULL)
        die("cannot write %s", path);
    if (b->len > 0 && fwrite(b->data, 1, b->len, f) != b->len)
        die("short write to %s", path);
    if (f != stdout ? fclose(f) != 0 : fflush(f) != 0)
        die("cannot write %s", path);
}

static void read_file(const char *path, ts_buf *b)
{
    char chunk[65536];
    FILE *f = fopen(path, "rb");
    size_t n;

    if (f == NULL)
        die("cannot read %s", path);
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_add(b, chunk, n);
    if (ferror(f))
        die("cannot read %s", path);
    fclose(f);
}

/* ------------------------------------------------------------------ */
/* fuzz/api.dict                                                       */
/* ------------------------------------------------------------------ */

/* words: a hand-written dictionary appended verbatim (NULL: none). */
static void dict(ts_buf *b, const char *words)
{
    static const char *const literals[] = { "true",  "false", "null",
                                            "1e308", "-0",    "9223372036854775807",
                                            "0.5",   NULL };

    buf_printf(b, "# Generated by %s: do not edit.\n# Refresh: %s.\n", GEN_BY, GEN_REFRESH);
    buf_printf(b, "# libFuzzer dictionary: request member names, enum values, catalogue ids.\n");
    for (size_t i = 0; i < TS_FI_COUNT; i++) {
        const ts_api_field *f = &ts_fields[i];

        buf_printf(b, "\"\\\"%s\\\":\"\n", f->name);
        for (const char *const *v = f->values; v != NULL && *v != NULL; v++) {
            bool seen = false;

            /* Each value once, where it first appears. */
            for (size_t j = 0; j < i && !seen; j++)
                for (const char *const *w = ts_fields[j].values; w != NULL && *w != NULL; w++)
                    seen = seen || strcmp(*w, *v) == 0;
            for (const char *const *w = f->values; w != v && !seen; w++)
                seen = strcmp(*w, *v) == 0;
            if (!seen)
                buf_printf(b, "\"\\\"%s\\\"\"\n", *v);
        }
    }
    for (const char *const *m = ts_api_import_members(); *m != NULL; m++)
        buf_printf(b, "\"\\\"%s\\\":\"\n", *m);
    for (size_t i = 0; i < ts_preset_count(); i++)
        buf_printf(b, "\"\\\"%s\\\"\"\n", ts_preset_at(i)->id);
    for (size_t i = 0; i < ts_gpu_count(); i++)
        buf_printf(b, "\"\\\"%s\\\"\"\n", ts_gpu_at(i)->id);
    for (const char *const *l = literals; *l != NULL; l++)
        buf_printf(b, "\"%s\"\n", *l);
    if (words != NULL) {
        const char *base = strrchr(words, '/');

        /* The name only: the output must not depend on the checkout's path. */
        buf_printf(b, "# Appended from fuzz/%s (hand-written):\n", base != NULL ? base + 1 : words);
        read_file(words, b);
    }
}

/* ------------------------------------------------------------------ */
/* docs/fields.md: the reference table, by dashboard group             */
/* ------------------------------------------------------------------ */

/* Markdown table cells: '|' would end the cell. */
static void md_cell(ts_buf *b, const char *s)
{
    for (; s != NULL && *s != '\0'; s++) {
        if (*s == '|')
            buf_add(b, "\\|", 2);
        else
            buf_add(b, s, 1);
    }
}

static void md_range(ts_buf *b, const ts_api_field *f)
{
    static const char *const type_names[] = { "integer", "number", "boolean", "string" };

    buf_add(b, type_names[f->type], strlen(type_names[f->type]));
    if (f->nullable)
        buf_printf(b, " or null");
    if (f->type == TS_FT_INTEGER || f->type == TS_FT_NUMBER)
        buf_printf(b, " %s%.10g, %.10g%s", f->exclusive_minimum ? "(" : "[", f->minimum, f->maximum,
                   f->exclusive_maximum ? ")" : "]");
    for (const char *const *v = f->values; v != NULL && *v != NULL; v++)
        buf_printf(b, "%s`%s`", v == f->values ? ": " : " \\| ", *v);
}

static void markdown(ts_buf *b)
{
    buf_printf(b, "<!-- Generated by %s: do not edit. Refresh: %s. -->\n\n", GEN_BY, GEN_REFRESH);
    buf_printf(b, "# Request fields\n\n"
                  "Every member of the run object that POST /v1/memory, /v1/compute,\n"
                  "/v1/checkpoint, /v1/plan and /v1/fit accept (fit: the /v1/fit extras),\n"
                  "grouped as the dashboard groups them. Ranges are inclusive `[` or\n"
                  "exclusive `(`; the CLI option is the name with `-` for `_`.\n");
    for (const ts_field_group *g = ts_field_groups; g->id != NULL; g++) {
        buf_printf(b,
                   "\n## %s\n\n| field | type and range | default | unit | description |\n"
                   "| --- | --- | --- | --- | --- |\n",
                   g->legend);
        for (size_t i = 0; i < TS_FI_COUNT; i++) {
            const ts_field_doc *d = &ts_field_docs[i];

            if (d->group == NULL || strcmp(d->group, g->id) != 0)
                continue;
            buf_printf(b, "| `%s` | ", ts_fields[i].name);
            md_range(b, &ts_fields[i]);
            buf_add(b, " | ", 3);
            md_cell(b, d->def);
            buf_add(b, " | ", 3);
            md_cell(b, d->unit);
            buf_add(b, " | ", 3);
            md_cell(b, d->doc);
            buf_add(b, " |\n", 3);
        }
    }
    buf_printf(b, "\n## Imported configs\n\nApplied in this order, after the preset and before the "
                  "run's own\n"
                  "members.\n\n| field | type | description |\n| --- | --- | --- |\n");
    for (size_t i = 0; i < TS_IMP_COUNT && ts_api_import_members()[i] != NULL; i++) {
        const ts_import_doc *d = &ts_import_docs[i];

        buf_printf(b, "| `%s` | ", ts_api_import_members()[i]);
        if (d->text)
            buf_printf(b, "string, at most %u bytes", d->max_len);
        else
            buf_printf(b, "object");
        buf_add(b, " | ", 3);
        md_cell(b, d->doc);
        buf_add(b, " |\n", 3);
    }
    /* A field without docs still gets a row, so the table stays complete. */
    for (size_t i = 0; i < TS_FI_COUNT; i++)
        if (ts_field_docs[i].group == NULL)
            buf_printf(b, "\n(undocumented: `%s`)\n", ts_fields[i].name);
}

/* ------------------------------------------------------------------ */
/* The CLI                                                             */
/* ------------------------------------------------------------------ */

static const char *cli_kind(const ts_api_field *f)
{
    switch (f->type) {
    case TS_FT_INTEGER:
        return "TS_CLI_INT";
    case TS_FT_NUMBER:
        return "TS_CLI_NUM";
    case TS_FT_BOOLEAN:
        return "TS_CLI_BOOL";
    case TS_FT_STRING:
    default:
        return "TS_CLI_STR";
    }
}

/* The help line: the CLI text (else the doc), an enum's values from the
 * parser's table, then the default. */
static void cli_help(ts_buf *b, size_t i)
{
    const ts_field_doc *d = &ts_field_docs[i];
    const char *text = d->cli != NULL ? d->cli : d->doc != NULL ? d->doc : "";

    buf_add(b, text, strlen(text));
    for (const char *const *v = ts_fields[i].values; v != NULL && *v != NULL; v++)
        buf_printf(b, "%s%s", v == ts_fields[i].values ? ": " : "|", *v);
    if (d->def != NULL && *d->def != '\0')
        buf_printf(b, " [default: %s]", d->def);
}

/* Run options: every field but solve (the fit extras max_gpus and
 * max_micro_batch bound the search too) and margin, which is the CLI's own
 * --margin (10% or 0.1) for every command. */
static bool cli_has(size_t i)
{
    return i != TS_FI_SOLVE && i != TS_FI_MARGIN;
}

/* The run-option lines of `trainsize --help`: flag, argument, help. */
static void cli_help_text(ts_buf *b)
{
    for (size_t i = 0; i < TS_FI_COUNT; i++) {
        const ts_api_field *f = &ts_fields[i];
        const char *arg = "";
        char opt[64];
        size_t j;
        int pad;

        if (!cli_has(i))
            continue;
        for (j = 0; f->name[j] != '\0' && j + 1 < sizeof opt; j++)
            opt[j] = f->name[j] == '_' ? '-' : f->name[j];
        opt[j] = '\0';
        switch (f->type) {
        case TS_FT_STRING:
            arg = " NAME";
            break;
        case TS_FT_INTEGER:
            arg = " N";
            break;
        case TS_FT_NUMBER:
            arg = " X";
            break;
        case TS_FT_BOOLEAN:
        default:
            arg = "";
            break;
        }
        pad = 24 - (int)(strlen(opt) + strlen(arg));
        buf_printf(b, "  --%s%s%*s", opt, arg, pad > 1 ? pad : 1, "");
        cli_help(b, i);
        buf_add(b, "\n", 1);
    }
}

static void cli_c(ts_buf *b)
{
    size_t n = 0;

    buf_printf(b, "/* Generated by %s: do not edit. */\n", GEN_BY);
    buf_printf(b, "#include \"ts_cli_opts.h\"\n\n");
    buf_printf(b, "/* Every run field of the API (fit extras excepted), in its order. */\n");
    buf_printf(b, "const ts_cli_field ts_cli_field_table[] = {\n");
    for (size_t i = 0; i < TS_FI_COUNT; i++) {
        GEN_BUF(h);

        if (!cli_has(i))
            continue;
        cli_help(&h, i);
        buf_printf(b, "    {\"%s\", %s, %s, ", ts_fields[i].name, cli_kind(&ts_fields[i]),
                   ts_field_docs[i].cli_suffix ? "true" : "false");
        buf_json_str(b, h.data != NULL ? h.data : ""); /* also a C literal: no control characters */
        buf_printf(b, "},\n");
        ts_buf_free(&h);
        n++;
    }
    buf_printf(b, "};\n\nconst size_t ts_cli_field_count = %zu;\n", n);
    {
        GEN_BUF(h);
        const char *line;

        /* --help's run-option list, one string per line (ISO C caps a
         * literal at 4095 bytes), NULL-terminated. */
        cli_help_text(&h);
        buf_printf(b, "\nconst char *const ts_cli_run_options_help[] = {\n");
        for (line = h.data; line != NULL && *line != '\0';) {
            const char *nl = strchr(line, '\n');
            size_t len = nl ? (size_t)(nl - line) : strlen(line);
            char *one = malloc(len + 2);

            if (one == NULL)
                die("out of memory");
            memcpy(one, line, len);
            one[len] = '\n';
            one[len + 1] = '\0';
            buf_add(b, "    ", 4);
            buf_json_str(b, one);
            buf_add(b, ",\n", 2);
            free(one);
            line = nl ? nl + 1 : line + len;
        }
        buf_printf(b, "    NULL\n};\n");
        ts_buf_free(&h);
    }
}

/* ------------------------------------------------------------------ */
/* The output-terms table (api/ts_terms.c)                             */
/* ------------------------------------------------------------------ */

#define GEN_BY_TERMS "tools/ts_gen_fields.c from api/ts_terms.c"

static const char *term_shape_name(const ts_term_def *d)
{
    switch (d->shape) {
    case TS_TERM_OBJECT:
        return "term";
    case TS_TERM_SIBLING:
        return "sibling";
    case TS_TERM_MAP:
    default:
        return "map";
    }
}

/* web/terms.js: the table for the dashboard (labels, docs, formulas of
 * the plain numbers; the texts themselves are in the answers). */
static void terms_js(ts_buf *b)
{
    buf_printf(b, "/* Generated by %s: do not edit.\n * Refresh: %s. */\n", GEN_BY_TERMS,
               GEN_REFRESH);
    buf_printf(b, "/*\n"
                  " * terms.js - the output-terms table: what each figure of an answer is.\n"
                  " *\n"
                  " * Keyed by the figure's path in an answer (\"memory.weights\",\n"
                  " * \"memory.stages[].headroom\").  shape: \"term\" (a {value, human, formula,\n"
                  " * assumptions} object: its formula is the answer's), \"map\" (a number whose\n"
                  " * text is in its object's \"human\" map), \"sibling\" (a number whose text is\n"
                  " * in the member named by human).  formula: how a plain number is computed.\n"
                  " */\n\n");
    buf_printf(b, "export const TERM_OBJECTS = {\n");
    for (int o = 0; o < TS_TO_COUNT; o++) {
        buf_printf(b, "    ");
        buf_json_str(b, ts_term_objs[o].path);
        buf_printf(b, ": { title: ");
        buf_json_str(b, ts_term_objs[o].title);
        buf_printf(b, " },\n");
    }
    buf_printf(b, "};\n\nexport const TERMS = {\n");
    for (size_t i = 0; i < TS_T_COUNT; i++) {
        const ts_term_def *d = &ts_terms[i];
        char path[160];

        snprintf(path, sizeof path, "%s.%s", ts_term_objs[d->obj].path, d->key);
        buf_printf(b, "    ");
        buf_json_str(b, path);
        buf_printf(b, ": {\n        shape: \"%s\", ", term_shape_name(d));
        if (d->human_key != NULL) {
            buf_printf(b, "human: ");
            buf_json_str(b, d->human_key);
            buf_printf(b, ", ");
        }
        buf_printf(b, "fmt: \"%s\", unit: ", ts_fmt_kind_name(d->fmt));
        buf_json_str(b, d->unit);
        buf_printf(b, ", label: ");
        buf_json_str(b, d->label);
        buf_printf(b, ",\n        doc: ");
        buf_json_str(b, d->doc);
        buf_printf(b, ",\n        formula: ");
        if (d->formula != NULL)
            buf_json_str(b, d->formula);
        else
            buf_printf(b, "null");
        buf_printf(b, ",\n    },\n");
    }
    buf_printf(b, "};\n");
}

/* docs/terms.md: the reference table, one section per object. */
static void terms_md(ts_buf *b)
{
    static const char *const kind_text[TS_FMT_KIND_COUNT] = {
        [TS_FMT_BYTES] = "binary prefixes (`74.5 GiB`)",
        [TS_FMT_FLOPS] = "exponent (`3.6e25 FLOP`)",
        [TS_FMT_SECONDS] = "largest sensible unit (`54.2 days`)",
        [TS_FMT_COUNT] = "k/M/B/T suffix (`30.8M GPU-hours`)",
        [TS_FMT_FRACTION] = "percent (`1.25 %`)",
        [TS_FMT_SI] = "SI prefix (`989 TFLOP/s`)",
        [TS_FMT_INTEGER] = "whole number (`8`)",
    };

    buf_printf(b, "<!-- Generated by %s: do not edit. Refresh: %s. -->\n\n", GEN_BY_TERMS,
               GEN_REFRESH);
    buf_printf(b, "# Result terms\n\n"
                  "Every figure of an answer that has a human-readable text, from the\n"
                  "output-terms table `api/ts_terms.c`. The API writes each text from its\n"
                  "row (kind and unit, `lib/ts_fmt.c`); the CLI and the dashboard show\n"
                  "those texts. Where the text is: `term` = the member is\n"
                  "`{\"value\", \"human\", \"formula\", \"assumptions\"}` and its formula, which\n"
                  "depends on the inputs, is in the answer; `map` = the member is a number\n"
                  "and its text is in the object's `human` map under the same key;\n"
                  "`sibling` = the text is in the member named beside it.\n");
    for (int o = 0; o < TS_TO_COUNT; o++) {
        buf_printf(
            b,
            "\n## %s (`%s`)\n\n| key | text | unit, written as | label | description | formula |\n"
            "| --- | --- | --- | --- | --- | --- |\n",
            ts_term_objs[o].title, ts_term_objs[o].path);
        for (size_t i = 0; i < TS_T_COUNT; i++) {
            const ts_term_def *d = &ts_terms[i];

            if (d->obj != (ts_term_obj)o)
                continue;
            buf_printf(b, "| `%s` | %s", d->key, term_shape_name(d));
            if (d->human_key != NULL)
                buf_printf(b, " `%s`", d->human_key);
            buf_printf(b, " | %s%s",
                       *d->unit != '\0'            ? d->unit
                       : d->fmt == TS_FMT_FRACTION ? "fraction"
                                                   : "count",
                       ", ");
            buf_printf(b, "%s | ", kind_text[d->fmt]);
            md_cell(b, d->label);
            buf_add(b, " | ", 3);
            md_cell(b, d->doc);
            buf_add(b, " | ", 3);
            if (d->formula != NULL) {
                buf_add(b, "`", 1);
                md_cell(b, d->formula);
                buf_add(b, "`", 1);
            } else {
                buf_printf(b, "in the answer");
            }
            buf_add(b, " |\n", 3);
        }
    }
}

/* The CLI's rows (build dir): the table's rows the CLI prints, in order. */
static void cli_terms_c(ts_buf *b)
{
    size_t n = 0;

    buf_printf(b, "/* Generated by %s: do not edit. */\n", GEN_BY_TERMS);
    buf_printf(b, "#include \"ts_cli_terms.h\"\n\n");
    buf_printf(b, "/* The rows of the estimate table, in the table's order. */\n");
    buf_printf(b, "const ts_cli_term ts_cli_terms[] = {\n");
    for (size_t i = 0; i < TS_T_COUNT; i++) {
        const ts_term_def *d = &ts_terms[i];

        if (d->cli == TS_TERM_CLI_NO)
            continue;
        buf_printf(b, "    {");
        buf_json_str(b, ts_term_objs[d->obj].path);
        buf_printf(b, ", ");
        buf_json_str(b, d->key);
        buf_printf(b, ", %s, ",
                   d->shape == TS_TERM_OBJECT    ? "TS_CLI_TERM_OBJECT"
                   : d->shape == TS_TERM_SIBLING ? "TS_CLI_TERM_SIBLING"
                                                 : "TS_CLI_TERM_MAP");
        if (d->human_key != NULL)
            buf_json_str(b, d->human_key);
        else
            buf_printf(b, "NULL");
        buf_printf(b, ", ");
        buf_json_str(b, d->unit);
        buf_printf(b, ", ");
        buf_json_str(b, d->label);
        buf_printf(b, ", ");
        if (d->formula != NULL)
            buf_json_str(b, d->formula);
        else
            buf_printf(b, "NULL");
        buf_printf(b, ", %s},\n", d->cli == TS_TERM_CLI_NONZERO ? "true" : "false");
        n++;
    }
    buf_printf(b, "};\n\nconst size_t ts_cli_term_count = %zu;\n\n", n);
    buf_printf(b, "/* Section headings, by object path; NULL-ended. */\n");
    buf_printf(b, "const ts_cli_term_obj ts_cli_term_objs[] = {\n");
    for (int o = 0; o < TS_TO_COUNT; o++) {
        buf_printf(b, "    {");
        buf_json_str(b, ts_term_objs[o].path);
        buf_printf(b, ", ");
        buf_json_str(b, ts_term_objs[o].title);
        buf_printf(b, "},\n");
    }
    buf_printf(b, "    {NULL, NULL}\n};\n");
}

/* ------------------------------------------------------------------ */
/* web/fields.js: the dashboard's form                                 */
/* ------------------------------------------------------------------ */

/* The control for a field: from its JSON type, unless the docs row names
 * one (the preset and GPU pickers, zero's stages). */
static const char *dash_kind(size_t i)
{
    const ts_field *jf = &ts_fields[i];

    if (ts_field_docs[i].dash_kind != NULL)
        return ts_field_docs[i].dash_kind;
    switch (jf->type) {
    case TS_FT_BOOLEAN:
        return "bool";
    case TS_FT_STRING:
        return jf->values != NULL ? "enum" : "text";
    case TS_FT_INTEGER:
        return "int";
    case TS_FT_NUMBER:
    default:
        return "num";
    }
}

static void fields_js(ts_buf *b)
{
    static const struct {
        unsigned flag;
        const char *name;
    } flags[] = {
        { TS_DASH_ADVANCED, "advanced" }, { TS_DASH_BINARY_K, "binaryK" },
        { TS_DASH_FRACTION, "fraction" }, { TS_DASH_PRETRAIN, "pretrain" },
        { TS_DASH_LORA, "lora" },
    };

    buf_printf(b, "/* Generated by %s: do not edit.\n * Refresh: %s. */\n", GEN_BY, GEN_REFRESH);
    buf_printf(b, "/*\n"
                  " * fields.js - the request fields the dashboard's form shows (those with a\n"
                  " * dashboard label in core/ts_fields.def), in the registry's order, and the\n"
                  " * fieldsets they sit in.  kind: \"int\" / \"num\" (free text), \"enum\"\n"
                  " * (options: the parser's values), \"bool\", \"model\" / \"gpu\" (filled from\n"
                  " * /v1/presets and /v1/gpus), \"zero\"; shape: a member of the model's\n"
                  " * shape (ts_model).  The page-only controls and the\n"
                  " * form's logic are in form.js.\n"
                  " */\n\n");
    buf_printf(b, "export const GROUPS = [\n");
    for (const ts_field_group *g = ts_field_groups; g->id != NULL; g++) {
        bool used = false;

        for (size_t i = 0; i < TS_FI_COUNT && !used; i++)
            used = ts_field_docs[i].label != NULL && ts_field_docs[i].group != NULL &&
                   strcmp(ts_field_docs[i].group, g->id) == 0;
        if (!used && strcmp(g->id, "mode") != 0)
            continue; /* "mode" also holds the page's own controls */
        buf_printf(b, "    { id: ");
        buf_json_str(b, g->id);
        buf_printf(b, ", legend: ");
        buf_json_str(b, g->legend);
        buf_printf(b, " },\n");
    }
    buf_printf(b, "];\n\nexport const REQUEST_FIELDS = [\n");
    for (size_t i = 0; i < TS_FI_COUNT; i++) {
        const ts_field_doc *d = &ts_field_docs[i];
        const ts_api_field *f = &ts_fields[i];
        const char *kind;

        if (d->label == NULL)
            continue;
        kind = dash_kind(i);
        buf_printf(b, "    { name: ");
        buf_json_str(b, f->name);
        buf_printf(b, ", group: ");
        buf_json_str(b, d->group != NULL ? d->group : "");
        buf_printf(b, ", kind: ");
        buf_json_str(b, kind);
        if (strcmp(kind, "enum") == 0) {
            buf_printf(b, ", options: [");
            for (const char *const *v = f->values; v != NULL && *v != NULL; v++) {
                buf_printf(b, "%s", v == f->values ? "" : ", ");
                buf_json_str(b, *v);
            }
            buf_printf(b, "]");
        }
        buf_printf(b, ",\n      label: ");
        buf_json_str(b, d->label);
        if (d->hint != NULL) {
            buf_printf(b, ", hint: ");
            buf_json_str(b, d->hint);
        }
        for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
            if (d->dash & flags[k].flag)
                buf_printf(b, ", %s: true", flags[k].name);
        /* A member of the model's shape: typing it over a preset makes a
         * custom copy (form.js SHAPE_FIELDS).  model.params is the plain
         * count a model without a shape gives instead, not part of one. */
        if (f->member != NULL && strncmp(f->member, "model.", 6) == 0 &&
            strcmp(f->member, "model.params") != 0)
            buf_printf(b, ", shape: true");
        buf_printf(b, " },\n");
    }
    buf_printf(b, "];\n");
}

static void generate(const char *kind, const char *words, ts_buf *out)
{
    if (strcmp(kind, "dict") == 0) {
        dict(out, words);
    } else if (strcmp(kind, "md") == 0) {
        markdown(out);
    } else if (strcmp(kind, "cli-c") == 0) {
        cli_c(out);
    } else if (strcmp(kind, "cli-help") == 0) {
        cli_help_text(out);
    } else if (strcmp(kind, "fields-js") == 0) {
        fields_js(out);
    } else if (strcmp(kind, "terms-js") == 0) {
        terms_js(out);
    } else if (strcmp(kind, "terms-md") == 0) {
        terms_md(out);
    } else if (strcmp(kind, "cli-terms") == 0) {
        cli_terms_c(out);
    } else {
        die("unknown kind '%s' (dict, md, cli-c, cli-help, fields-js, terms-js, "
            "terms-md, cli-terms)",
            kind);
    }
}

int main(int argc, char **argv)
{
    GEN_BUF(out);

    if ((argc == 5 || argc == 6) && strcmp(argv[1], "check") == 0) {
        int rc;

        generate(argv[2], argc == 6 ? argv[5] : NULL, &out);
        write_out(argv[4], &out);
        rc = gen_check_committed(argv[3], out.data != NULL ? out.data : "", out.len, argv[4],
                                 GEN_REFRESH);
        ts_buf_free(&out);
        return rc;
    }
    if (argc == 3 || (argc == 4 && strcmp(argv[1], "dict") == 0)) {
        generate(argv[1], argc == 4 ? argv[3] : NULL, &out);
        write_out(argv[2], &out);
    } else {
        fprintf(stderr, "usage: ts_gen_fields dict OUT [WORDS] | md OUT | cli-c OUT\n"
                        "       ts_gen_fields cli-help OUT | fields-js OUT\n"
                        "       ts_gen_fields terms-js OUT | terms-md OUT | cli-terms OUT\n"
                        "       ts_gen_fields check KIND COMMITTED OUT [WORDS]\n");
        ts_buf_free(&out);
        return 64;
    }
    ts_buf_free(&out);
    return 0;
}
