/*
 * ts_cli_fmt.c - number formatting for the CLI.
 */
#include "ts_cli_fmt.h"

#include <math.h>
#include <stdio.h>

void ts_fmt_bytes(char *buf, size_t len, double bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double a = fabs(bytes), v = bytes;
    size_t u = 0;

    if (!isfinite(bytes)) {
        snprintf(buf, len, "n/a");
        return;
    }
    while (a >= 1024.0 && u + 1 < sizeof unit / sizeof unit[0]) {
        a /= 1024.0;
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f B", v);
    else
        snprintf(buf, len, "%.2f %s", v, unit[u]);
}

void ts_fmt_count(char *buf, size_t len, double n)
{
    static const struct { double scale; const char *sfx; } step[] = {
        {1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"},
    };

    if (!isfinite(n)) {
        snprintf(buf, len, "n/a");
        return;
    }
    for (size_t i = 0; i < sizeof step / sizeof step[0]; i++) {
        if (fabs(n) >= step[i].scale) {
            snprintf(buf, len, "%.2f %s", n / step[i].scale, step[i].sfx);
            return;
        }
    }
    snprintf(buf, len, "%.4g", n);
}

void ts_fmt_flops(char *buf, size_t len, double flops)
{
    if (!isfinite(flops))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.3e FLOP", flops);
}

void ts_fmt_seconds(char *buf, size_t len, double s)
{
    if (!isfinite(s))
        snprintf(buf, len, "n/a");
    else if (fabs(s) < 60.0)
        snprintf(buf, len, "%.1f s", s);
    else if (fabs(s) < 3600.0)
        snprintf(buf, len, "%.1f min", s / 60.0);
    else if (fabs(s) < 2.0 * 86400.0)
        snprintf(buf, len, "%.1f h", s / 3600.0);
    else
        snprintf(buf, len, "%.1f days", s / 86400.0);
}

void ts_fmt_exact(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.6g", v);
}
