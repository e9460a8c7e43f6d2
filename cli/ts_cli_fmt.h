/*
 * ts_cli_fmt.h - human-readable numbers for the CLI tables.
 *
 * Bytes in binary units (GiB, labelled as such), counts and FLOPs in
 * decimal, seconds in the largest sensible unit.  Non-finite values (a
 * field the server did not send) print as "n/a", never as "nan".
 */
#ifndef TS_CLI_FMT_H
#define TS_CLI_FMT_H

#include <stddef.h>

#define TS_FMT_LEN 48

void ts_fmt_bytes(char *buf, size_t len, double bytes);     /* "16.30 GiB" */
void ts_fmt_count(char *buf, size_t len, double n);         /* "8.03 B" */
void ts_fmt_flops(char *buf, size_t len, double flops);     /* "3.600e+25 FLOP" */
void ts_fmt_seconds(char *buf, size_t len, double seconds); /* "54.2 days" */
void ts_fmt_exact(char *buf, size_t len, double v);         /* "%.6g", "n/a" */

#endif /* TS_CLI_FMT_H */
