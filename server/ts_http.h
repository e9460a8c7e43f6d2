/*
 * ts_http.h - request header sections libmicrohttpd 0.9.75 accepts and
 * RFC 9110 / 9112 do not (issue 22, finding 5).
 *
 * What a front proxy and libmicrohttpd may read differently is request
 * smuggling: a field name with whitespace before its colon
 * ("Transfer-Encoding : chunked" is no Transfer-Encoding to MHD, but may
 * be one to a proxy that strips it), a line ended by a bare LF (MHD ends
 * the line there, a proxy may not), a NUL or CR inside a value (MHD ends
 * the value at the NUL and keeps what follows out of sight), obs-fold.
 * Each is refused with 400 before the request is routed.
 */
#ifndef TS_HTTP_H
#define TS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

/* Is c an RFC 9110 5.6.2 tchar (a field name is 1*tchar)? */
bool ts_http_tchar(unsigned char c);

/* Is v[0..n) a valid field value (RFC 9110 5.5): no CTL but HTAB?  NUL,
 * CR and LF are the ones RFC 9110 5.5 says to reject. */
bool ts_http_value_ok(const char *v, size_t n);

/* The header section of the request on c, in the state on_request's
 * first call sees it (method and version are that call's arguments).
 * NULL when fine; else a detail for a 400 malformed-request. */
const char *ts_http_header_error(struct MHD_Connection *c, const char *method, const char *version);

#endif /* TS_HTTP_H */
