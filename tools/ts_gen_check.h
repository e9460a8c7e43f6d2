/*
 * ts_gen_check.h - the staleness check of a committed generated file
 * (tests/tools runs each generator's "check" mode), shared by
 * tools/ts_gen_fields.c and tools/ts_gen_openapi.c.
 */
#ifndef TS_GEN_CHECK_H
#define TS_GEN_CHECK_H

#include <stddef.h>

/* 0 when the file at committed holds exactly text (len bytes), printing
 * "COMMITTED is up to date"; else 1, printing to stderr the first line
 * that differs, the diff command against out (where the caller wrote
 * text) and the refresh command. */
int gen_check_committed(const char *committed, const char *text, size_t len, const char *out,
                        const char *refresh);

#endif /* TS_GEN_CHECK_H */
