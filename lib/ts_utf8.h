/*
 * ts_utf8.h - cutting human text at character boundaries.
 *
 * Every text that quotes what a client sent (an import note, a problem's
 * detail, a JSON pointer, a CLI message) is bounded, and a bound in bytes
 * can fall inside a UTF-8 sequence: "%.48s" of "a"*47 + "é" keeps half
 * the é, and the answer is no longer UTF-8 (issue 22 finding 3).  These
 * are the only ways the api and the CLI cut text:
 *
 *   ts_utf8_cut(s, max)    bytes of s to keep, at most max, on a boundary
 *   ts_utf8_prec(s, max)   the same as an int for printf's "%.*s"
 *   ts_utf8_copy(d, n, s)  s into d[n], cut on a boundary
 *   ts_utf8_trim(s, len)   after a cut made blindly (vsnprintf's size):
 *                          drop the incomplete sequence at the end
 *   ts_utf8_drop_cut(s)    text that quotes a piece another cut blindly
 *                          (jansson's "near '...'"): drop every
 *                          incomplete sequence, wherever it stands
 *
 * Only the structure of the bytes is looked at (lead and continuation
 * bytes, RFC 3629 section 3), never their validity: ill-formed input is
 * the JSON writer's business (ts_jw_text writes U+FFFD for it).  Plain C,
 * no allocation; compiled into the api and the CLI.
 */
#ifndef TS_UTF8_H
#define TS_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* A continuation byte (10xxxxxx): never the start of a character. */
static inline bool ts_utf8_is_cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* Length of the longest prefix of the NUL-terminated s that is at most
 * max bytes and does not end inside a multi-byte sequence.  Reads at
 * most max + 1 bytes of s. */
size_t ts_utf8_cut(const char *s, size_t max);

/* ts_utf8_cut(s, max) as printf's precision: "%.*s", ts_utf8_prec(s, 48), s. */
int ts_utf8_prec(const char *s, size_t max);

/* Copy s into dst (size bytes, size >= 1), cut with ts_utf8_cut; returns
 * the bytes copied (not counting the NUL). */
size_t ts_utf8_copy(char *dst, size_t size, const char *s);

/* s[0..len) was cut at len without looking: drop a trailing incomplete
 * sequence, NUL-terminate, return the new length. */
size_t ts_utf8_trim(char *s, size_t len);

/* Drop from the NUL-terminated s every lead byte followed by fewer
 * continuation bytes than it announces (with those it has), in place;
 * returns the new length.  Stray continuation bytes are left alone. */
size_t ts_utf8_drop_cut(char *s);

#endif /* TS_UTF8_H */
