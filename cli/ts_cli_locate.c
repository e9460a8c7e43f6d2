/*
 * ts_cli_locate.c - JSON pointers and words to line numbers.
 *
 * The files were read and parsed already (jansson keeps no positions), so
 * this scanner only walks well-formed JSON far enough to find one member:
 * it skips whole values by their brackets and strings, and never needs
 * to judge them.  Anything it does not expect ends the search with 0.
 */
#include "ts_cli_locate.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct loc_scan {
    const char *p;
    unsigned line;
} loc_scan;

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void loc_skip_ws(loc_scan *s)
{
    while (is_ws(*s->p)) {
        if (*s->p == '\n')
            s->line++;
        s->p++;
    }
}

/* Past a string starting at its quote; false at the end of the text. */
static bool loc_skip_string(loc_scan *s)
{
    s->p++;
    while (*s->p != '\0' && *s->p != '"') {
        if (*s->p == '\\' && s->p[1] != '\0')
            s->p++;
        s->p++;
    }
    if (*s->p != '"')
        return false;
    s->p++;
    return true;
}

/* Past one value (any kind); false at the end of the text. */
static bool loc_skip_value(loc_scan *s)
{
    unsigned depth = 0;

    loc_skip_ws(s);
    for (;;) {
        char c = *s->p;

        if (c == '\0')
            return false;
        /* a scalar ends at the next separator */
        if (depth == 0 && (c == ',' || c == '}' || c == ']' || is_ws(c)))
            return true;
        if (c == '"') {
            if (!loc_skip_string(s))
                return false;
            if (depth == 0)
                return true;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) {
                s->p++;
                return true;
            }
        } else if (c == '\n') {
            s->line++;
        }
        s->p++;
    }
}

/* Does the JSON string at s->p (its quote) equal the pointer token tok
 * (len bytes, ~0 ~1 decoded here)?  Simple escapes only: a key with \u
 * escapes does not match (then the search ends with 0, not a wrong line). */
static bool key_is(const char *q, const char *tok, size_t len)
{
    size_t i = 0;

    q++;
    while (*q != '"' && *q != '\0') {
        char c = *q;

        if (c == '\\') {
            q++;
            switch (*q) {
            case '"':
            case '\\':
            case '/':
                c = *q;
                break;
            default:
                return false;
            }
        }
        if (i >= len)
            return false;
        if (tok[i] == '~' && i + 1 < len && (tok[i + 1] == '0' || tok[i + 1] == '1')) {
            if (c != (tok[i + 1] == '0' ? '~' : '/'))
                return false;
            i += 2;
        } else {
            if (c != tok[i])
                return false;
            i++;
        }
        q++;
    }
    return *q == '"' && i == len;
}

/* Find token tok in the object or array at s->p; on success s->p is at
 * its value and *line the line of its name (element: of its value). */
static bool find_member(loc_scan *s, const char *tok, size_t len, unsigned *line)
{
    loc_skip_ws(s);
    if (*s->p == '{') {
        s->p++;
        for (;;) {
            bool hit;

            loc_skip_ws(s);
            if (*s->p != '"')
                return false;
            hit = key_is(s->p, tok, len);
            *line = s->line;
            if (!loc_skip_string(s))
                return false;
            loc_skip_ws(s);
            if (*s->p != ':')
                return false;
            s->p++;
            loc_skip_ws(s);
            if (hit)
                return true;
            if (!loc_skip_value(s))
                return false;
            loc_skip_ws(s);
            if (*s->p != ',')
                return false;
            s->p++;
        }
    }
    if (*s->p == '[') {
        char *end;
        unsigned long want, k;

        if (len == 0 || len > 9 || strspn(tok, "0123456789") < len)
            return false;
        want = strtoul(tok, &end, 10);
        s->p++;
        for (k = 0;; k++) {
            loc_skip_ws(s);
            if (*s->p == ']' || *s->p == '\0')
                return false;
            if (k == want) {
                *line = s->line;
                return true;
            }
            if (!loc_skip_value(s))
                return false;
            loc_skip_ws(s);
            if (*s->p != ',')
                return false;
            s->p++;
        }
    }
    return false;
}

/* Walk to the value pointer names: s->p at its first byte, *line the
 * line of its name (element: of the value).  false when absent. */
static bool loc_walk(loc_scan *s, const char *pointer, unsigned *line)
{
    *line = 1;
    if (s->p == NULL || pointer == NULL || (*pointer != '\0' && *pointer != '/'))
        return false;
    while (*pointer == '/') {
        const char *tok = pointer + 1;
        size_t len = strcspn(tok, "/");

        if (!find_member(s, tok, len, line))
            return false;
        pointer = tok + len;
    }
    loc_skip_ws(s);
    return true;
}

unsigned ts_loc_json(const char *text, const char *pointer)
{
    loc_scan s = { text, 1 };
    unsigned line;

    return loc_walk(&s, pointer, &line) ? line : 0;
}

bool ts_loc_json_span(const char *text, const char *pointer, size_t *off, size_t *len)
{
    loc_scan s = { text, 1 };
    unsigned line;
    const char *start;

    if (!loc_walk(&s, pointer, &line))
        return false;
    start = s.p;
    if (!loc_skip_value(&s) || s.p == start)
        return false;
    *off = (size_t)(start - text);
    *len = (size_t)(s.p - start);
    return true;
}

unsigned ts_loc_yaml_key(const char *text, const char *key)
{
    size_t n = strlen(key);
    unsigned line = 1;
    const char *p = text;

    if (text == NULL || n == 0)
        return 0;
    while (*p != '\0') {
        const char *q = p + strspn(p, " \t");

        if (strncmp(q, key, n) == 0) {
            const char *r = q + n;

            r += strspn(r, " \t");
            if (*r == ':')
                return line;
        }
        p = strchr(p, '\n');
        if (p == NULL)
            break;
        p++;
        line++;
    }
    return 0;
}

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

unsigned ts_loc_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    const char *p;

    if (text == NULL || n == 0)
        return 0;
    for (p = strstr(text, word); p != NULL; p = strstr(p + 1, word)) {
        if ((p == text || !word_char(p[-1])) && !word_char(p[n])) {
            unsigned line = 1;

            for (const char *q = text; q < p; q++)
                line += *q == '\n';
            return line;
        }
    }
    return 0;
}
