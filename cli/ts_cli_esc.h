/*
 * ts_cli_esc.h - text escapes of the report formats: XML (JUnit), GitHub
 * workflow commands, JSON strings and numbers, CSV fields (RFC 4180) and
 * markdown table cells.
 *
 * The buffer forms always NUL-terminate and cut on a character (UTF-8)
 * boundary; the FILE forms write as they go.
 */
#ifndef TS_CLI_ESC_H
#define TS_CLI_ESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* XML 1.0 text and attribute values: & < > " ' escaped, control
 * characters other than tab and newline (not allowed in XML 1.0) dropped. */
void ts_esc_xml(char *buf, size_t size, const char *s);
/* Workflow command escaping (actions/toolkit command.ts): data % CR LF;
 * property values also : and ,. */
void ts_esc_gh(char *buf, size_t size, const char *s, bool property);

/* A JSON string ("null" for NULL): " and \ escaped, control characters
 * as \u00XX, the rest as it is (UTF-8). */
void ts_esc_json_str(FILE *out, const char *s);
/* A JSON number as the API writes its own (shortest round trip, ts_dtoa),
 * null when not finite. */
void ts_esc_json_num(FILE *out, double v);
/* A CSV field: quoted when it holds a comma, quote or line break, quotes
 * doubled.  NULL writes nothing. */
void ts_esc_csv_field(FILE *out, const char *s);
/* A CSV number (shortest round trip); nothing when not finite. */
void ts_esc_csv_num(FILE *out, double v);
/* A markdown table cell: | escaped, line breaks as spaces. */
void ts_esc_md_cell(FILE *out, const char *s);

#endif /* TS_CLI_ESC_H */
