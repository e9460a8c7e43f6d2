/*
 * ts_cli_esc.c - text escapes of the report formats (see ts_cli_esc.h).
 */
#include "ts_cli_esc.h"
#include "ts_dtoa.h"
#include "ts_utf8.h"

#include <math.h>
#include <string.h>

/* Append n bytes if they fit (leaving the NUL); false when full. */
static bool esc_put(char *buf, size_t size, size_t *o, const char *s, size_t n)
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
void ts_esc_xml(char *buf, size_t size, const char *s)
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
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&apos;";
            break;
        case '\n':
            rep = "&#10;";
            break;
        case '\t':
            rep = "&#9;";
            break;
        default:
            break;
        }
        if (rep == NULL && c < 0x20)
            continue;
        ok = rep != NULL ? esc_put(buf, size, &o, rep, strlen(rep)) : esc_put(buf, size, &o, s, 1);
        if (!ok) {
            ts_utf8_trim(buf, o);
            return;
        }
    }
}

/* Workflow command escaping (actions/toolkit command.ts): data: % CR LF;
 * property values also : and ,. */
void ts_esc_gh(char *buf, size_t size, const char *s, bool property)
{
    size_t o = 0;

    if (size == 0)
        return;
    buf[0] = '\0';
    for (; *s != '\0'; s++) {
        const char *rep = NULL;
        bool ok;

        switch (*s) {
        case '%':
            rep = "%25";
            break;
        case '\r':
            rep = "%0D";
            break;
        case '\n':
            rep = "%0A";
            break;
        case ':':
            rep = property ? "%3A" : NULL;
            break;
        case ',':
            rep = property ? "%2C" : NULL;
            break;
        default:
            break;
        }
        ok = rep != NULL ? esc_put(buf, size, &o, rep, strlen(rep)) : esc_put(buf, size, &o, s, 1);
        if (!ok) {
            ts_utf8_trim(buf, o);
            return;
        }
    }
}

/* A JSON string: " and \ escaped, control characters as \u00XX; the
 * rest (UTF-8 from the answers and file names) as it is. */
void ts_esc_json_str(FILE *out, const char *s)
{
    if (s == NULL) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

/* A JSON number as the API writes its own (shortest round trip), null
 * when not finite. */
void ts_esc_json_num(FILE *out, double v)
{
    char buf[TS_DTOA_BUF];

    if (!isfinite(v) || ts_dtoa_format(v, buf) == 0)
        fputs("null", out);
    else
        fputs(buf, out);
}

/* A CSV field (RFC 4180): quoted when it holds a comma, quote or line
 * break, quotes doubled. */
void ts_esc_csv_field(FILE *out, const char *s)
{
    if (s == NULL)
        return;
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s != '\0'; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void ts_esc_csv_num(FILE *out, double v)
{
    char buf[TS_DTOA_BUF];

    if (isfinite(v) && ts_dtoa_format(v, buf) > 0)
        fputs(buf, out);
}

/* A markdown table cell: | escaped, line breaks as spaces. */
void ts_esc_md_cell(FILE *out, const char *s)
{
    for (; s != NULL && *s != '\0'; s++) {
        if (*s == '|')
            fputs("\\|", out);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', out);
        else
            fputc(*s, out);
    }
}
