/*
 * fuzz_check.h - the invariants every api fuzz target checks on an
 * answer of ts_api_handle() (fuzz_api, fuzz_mega, fuzz_yaml).
 */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ts_api.h"

/* Print what broke, the answer, and abort (libFuzzer keeps the input). */
void fz_fail(const char *what, const ts_api_response *r)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* 1 when s[0..n) is well-formed UTF-8 (RFC 3629 section 4). */
bool fz_utf8_valid(const unsigned char *s, size_t n);

/* 1 when req[0..n) is UTF-8 with no U+FFFD and no "\u" escape in it: an
 * answer to it then has no U+FFFD either (every quote of it is cut on a
 * character boundary, issue 22 finding 3). */
bool fz_no_replacement_expected(const char *req, size_t n);

/* The answer's invariants: 200 or 4xx, its content type, a JSON object
 * (so UTF-8), no bare NaN/Infinity, memory terms that add up, fractions
 * <= 1; and no U+FFFD when no_fffd (fz_no_replacement_expected of the
 * request). */
void fz_check(const ts_api_response *r, bool no_fffd);

/* POST body to route and check the answer. */
void fz_post(const char *route, const char *body, size_t len);

/* A mutation for text that carries numbers (launch lines, YAML): replace
 * one to three decimal numbers of data[0..size) with values at the edges
 * of the integer types and the ranges (0, 2^k - 1, 2^k, 2^k + 1, 10^k).
 * Arithmetic bugs need two large operands at once, which byte mutations
 * rarely make.  Returns the new size (<= max_size); seed drives it. */
size_t fz_mutate_numbers(uint8_t *data, size_t size, size_t max_size, unsigned seed);

#endif /* FUZZ_CHECK_H */
