/*
 * ts_http.c - header section checks libmicrohttpd 0.9.75 leaves to us
 * (see ts_http.h).
 *
 * Field names and values are read through MHD's iterator, on every
 * version.  Line endings, NUL bytes and obs-fold leave no trace in what
 * the iterator hands out, but they do in where it points: 0.9.75 parses
 * the header section in place (connection.c@v0.9.75, 940041ad78b4:
 * get_next_header_line() overwrites the CR and LF of each CRLF with two
 * NULs, a bare LF with one; process_header_line() overwrites the colon;
 * parse_initial_message_line() the spaces of the request line;
 * MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE is the length of the whole
 * section from the method).  So in a section made only of CRLF lines,
 * each field's name starts two bytes after the previous line's value (or
 * the version) ends, both of those bytes are NUL, and the blank line's
 * two NULs end exactly header_size bytes after the method.  A bare LF
 * leaves one NUL where two belong; a NUL inside a value ends the value
 * early, and the bytes after it are not NULs; obs-fold makes MHD copy
 * the field name elsewhere in its pool (process_broken_line()).  The walk
 * only reads bytes of that section, after checking each address against
 * its bounds.  0.9.76 and 0.9.77 parse the same way; libmicrohttpd 1.0
 * rejects all three itself at client discipline level 1 (ts_server.c
 * asks for it), and the walk is not compiled there.
 */
#include "ts_http.h"

#include <stdint.h>
#include <string.h>

#if MHD_VERSION >= 0x00097500 && MHD_VERSION < 0x00097800
#define TS_HTTP_LAYOUT 1
#else
#define TS_HTTP_LAYOUT 0
#endif

static const char why_name[] =
    "header field name is not a token: nothing but letters, digits and "
    "!#$%&'*+-.^_`|~ may come before the colon (RFC 9110 5.1, RFC 9112 5.1)";
static const char why_value[] =
    "control character (NUL, CR, ...) in a header field value (RFC 9110 5.5)";
static const char why_layout[] =
    "header section not made of CRLF-terminated lines: a bare LF, a NUL, "
    "or obs-fold (RFC 9112 2.2, 5.2; RFC 9110 5.5)";

bool ts_http_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

bool ts_http_value_ok(const char *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return false;
    }
    return true;
}

typedef struct walk {
    uintptr_t p;       /* where the next line must start */
    uintptr_t lo, end; /* the header section: [method, end) */
    bool layout;       /* check the in-place layout (0.9.75-0.9.77) */
    const char *why;
} walk;

/* A line of the section ends at q: two NULs inside it.  Moves the cursor
 * to the next line. */
static bool crlf_at(walk *w, const char *q)
{
    uintptr_t a = (uintptr_t)q;
    if (a < w->lo || a > w->end || w->end - a < 2 || q[0] != '\0' || q[1] != '\0')
        return false;
    w->p = a + 2;
    return true;
}

static enum MHD_Result check_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                   size_t key_size, const char *value, size_t value_size)
{
    walk *w = cls;
    (void)kind;
    if (key == NULL || key_size == 0)
        w->why = why_name;
    for (size_t i = 0; w->why == NULL && i < key_size; i++)
        if (!ts_http_tchar((unsigned char)key[i]))
            w->why = why_name;
    if (w->why == NULL && value != NULL && !ts_http_value_ok(value, value_size))
        w->why = why_value;
    if (w->why == NULL && w->layout &&
        ((uintptr_t)key != w->p || value == NULL || !crlf_at(w, value + value_size)))
        w->why = why_layout;
    return w->why == NULL ? MHD_YES : MHD_NO;
}

const char *ts_http_header_error(struct MHD_Connection *c, const char *method, const char *version)
{
    walk w = { 0 };
#if TS_HTTP_LAYOUT
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (ci != NULL && method != NULL && version != NULL && version[0] != '\0') {
        w.lo = (uintptr_t)method;
        w.end = w.lo + ci->header_size;
        /* the request line ends right after the version */
        w.layout = true;
        if (!crlf_at(&w, version + strlen(version)))
            return why_layout;
    }
#else
    (void)method;
    (void)version;
#endif
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, check_field, &w);
    if (w.why != NULL)
        return w.why;
    /* the blank line, and nothing after it inside the section */
    if (w.layout && (!crlf_at(&w, (const char *)w.p) || w.p != w.end))
        return why_layout;
    return NULL;
}
