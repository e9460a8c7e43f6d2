/*
 * ts_dtoa.h - shortest round-trip text of a double (Ryu).
 *
 * Adams, "Ryu: fast float-to-string conversion", PLDI 2018: the fewest
 * decimal digits that read back (strtod, round to nearest even) as the
 * same double, the closest such when several have that length.
 * Integer arithmetic only: no printf, no strtod, no locale.
 */
#ifndef TS_DTOA_H
#define TS_DTOA_H

#include <stddef.h>
#include <stdint.h>

/* Longest ts_dtoa_format() text plus the NUL:
 * "-2.2250738585072014e-308" is 24 bytes. */
#define TS_DTOA_BUF 32

/* v finite and > 0: *digits * 10^*exp10 is the shortest decimal that
 * rounds to v.  Returns the number of digits (1..17). */
int ts_dtoa_shortest(double v, uint64_t *digits, int32_t *exp10);

/* v as a JSON number in printf's %.*g layout with precision
 * max(digits, 15): plain up to exponent -5 and below the precision,
 * else d.ddde+XX ("1e+21", "1.5e-07", "0.0001", "123.25").  -0 is "0".
 * Writes a NUL-terminated text into buf (TS_DTOA_BUF bytes) and returns
 * its length; 0 (buf "") for NaN and infinities. */
size_t ts_dtoa_format(double v, char buf[TS_DTOA_BUF]);

/* The decimal digits of v (no sign, no NUL) into buf, two at a time;
 * returns their count (1..20). */
size_t ts_dtoa_u64(uint64_t v, char buf[20]);

#endif /* TS_DTOA_H */
