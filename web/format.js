/*
 * format.js - turn API numbers into display strings.
 *
 * Formatting only: no estimation happens here.  Every function returns "—"
 * for a missing or non-finite value so the page can never print NaN,
 * Infinity or "undefined".  Pure and DOM-free, so the e2e test imports it
 * in node to format the API's own numbers and compare with the page.
 */

export const DASH = '—';

export function isNum(x) {
    return typeof x === 'number' && Number.isFinite(x);
}

/* Three significant digits by fixed decimals (1.23, 12.3, 123), the same
 * style as the API's "human" strings, so both read alike side by side. */
export function sig3(x) {
    if (!isNum(x)) return DASH;
    const a = Math.abs(x);
    const decimals = a < 10 ? 2 : a < 100 ? 1 : 0;
    return (x + 0).toFixed(decimals).replace(/^-(0\.?0*)$/, '$1');
}

/* Axis ticks and small integers: no padding zeros (0, 20, 2.5). */
export function tick(x) {
    if (!isNum(x)) return DASH;
    return String(Number(x.toPrecision(3)));
}

/* Binary units, like the API's "human" strings for bytes (GiB etc.). */
const BIN_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

export function fmtBytes(b) {
    if (!isNum(b)) return DASH;
    const neg = b < 0;
    let v = Math.abs(b);
    let i = 0;
    while (v >= 1024 && i < BIN_UNITS.length - 1) {
        v /= 1024;
        i++;
    }
    const num = i === 0 ? String(Math.round(v)) : sig3(v);
    return (neg && num !== '0' ? '-' : '') + num + ' ' + BIN_UNITS[i];
}

/* Decimal GB, as GPUs and disks are sold (80 GB H100 = 80e9 bytes). */
export function fmtGB(b) {
    if (!isNum(b)) return DASH;
    return sig3(b / 1e9) + ' GB';
}

/* Counts: 8.03e9 -> "8.03B", 1.5e13 -> "15.0T" (the API's "507k GPU-hours" style). */
const SI = [[1e15, 'P'], [1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'k']];

export function fmtCount(x) {
    if (!isNum(x)) return DASH;
    const a = Math.abs(x);
    for (const [scale, suffix] of SI) {
        if (a >= scale) return sig3(x / scale) + suffix;
    }
    return sig3(x);
}

/* Large physical quantities in engineering-free scientific form. */
export function fmtSci(x) {
    if (!isNum(x)) return DASH;
    if (x === 0) return '0';
    const a = Math.abs(x);
    if (a >= 1e-3 && a < 1e4) return sig3(x);
    const [m, e] = x.toExponential(2).split('e');
    return String(Number(m)) + 'e' + Number(e);
}

export function fmtFlops(x) {
    return isNum(x) ? fmtSci(x) + ' FLOP' : DASH;
}

export function fmtFlopRate(x) {
    if (!isNum(x)) return DASH;
    return sig3(x / 1e12) + ' TFLOP/s';
}

export function fmtPct(f) {
    if (!isNum(f)) return DASH;
    const p = f * 100;
    if (p !== 0 && Math.abs(p) < 1) return String(Number(p.toPrecision(2))) + '%';
    return p.toFixed(1) + '%';
}

/* Seconds -> the largest sensible unit. */
export function fmtDuration(s) {
    if (!isNum(s)) return DASH;
    const a = Math.abs(s);
    if (a < 1) return sig3(s * 1000) + ' ms';
    if (a < 120) return sig3(s) + ' s';
    if (a < 7200) return sig3(s / 60) + ' min';
    if (a < 172800) return sig3(s / 3600) + ' h';
    return sig3(s / 86400) + ' days';
}

export function fmtDays(d) {
    return isNum(d) ? sig3(d) + ' days' : DASH;
}

export function fmtHours(h) {
    return isNum(h) ? fmtCount(h) + ' GPU-h' : DASH;
}

export function fmtRate(x, unit) {
    return isNum(x) ? fmtCount(x) + ' ' + unit : DASH;
}

export function fmtBandwidth(bps) {
    return isNum(bps) ? sig3(bps / 1e9) + ' GB/s' : DASH;
}

/* Read a dotted path ("memory.total.value") without throwing. */
export function pick(obj, path) {
    let cur = obj;
    for (const key of path.split('.')) {
        if (cur === null || typeof cur !== 'object' || !(key in cur)) return undefined;
        cur = cur[key];
    }
    return cur;
}

/* A term's "human" string, falling back to our own formatting of value. */
export function termText(term, fallback) {
    if (term && typeof term.human === 'string' && term.human !== '' && term.human !== 'n/a' &&
        !/NaN|undefined|Infinity/.test(term.human)) {
        return term.human;
    }
    if (term && isNum(term.value) && fallback) return fallback(term.value);
    return DASH;
}

/* A term, or a bare number formatted by fallback (members that the API
 * may send either way). */
export function anyText(x, fallback) {
    if (x && typeof x === 'object') return termText(x, fallback);
    return isNum(x) && fallback ? fallback(x) : DASH;
}

export function anyValue(x) {
    if (x && typeof x === 'object') return isNum(x.value) ? x.value : NaN;
    return isNum(x) ? x : NaN;
}

/* Exact integer with thousands separators: 8,030,261,248. */
export function fmtExact(x) {
    if (!isNum(x)) return DASH;
    return Math.round(x).toLocaleString('en-US');
}

export function fmtUsd(x) {
    if (!isNum(x)) return DASH;
    if (Math.abs(x) >= 1e3) return '$' + fmtCount(x);
    return '$' + x.toFixed(2);
}

/* Solver and problem texts sometimes carry raw byte counts
 * ("needs 1.664e+11 bytes"): show them in GiB like every other figure. */
export function readable(text) {
    if (typeof text !== 'string') return '';
    return text.replace(/([0-9]+(?:\.[0-9]+)?(?:e\+?[0-9]+)?)\s*bytes\b/gi, (all, n) => {
        const v = Number(n);
        return isNum(v) && v >= 1024 ? fmtBytes(v) : all;
    });
}

/*
 * POSIX shell single quoting: the whole word inside '...', and each ' in
 * it as '\'' (close, escaped quote, reopen).  Inside single quotes no
 * character is special (POSIX.1-2017 XCU 2.2.2), so no input can end the
 * word early or reach $( ), backquotes, ; or newlines.
 */
export function shellQuote(s) {
    return "'" + String(s).replace(/'/g, "'\\''") + "'";
}

/* One CSV field (RFC 4180): quoted when it holds a comma, quote or newline.
 * A leading = + - @ is prefixed with ' so a spreadsheet never runs it. */
export function csvField(v) {
    let s = v === undefined || v === null ? '' : String(v);
    if (/^[=+\-@\t\r]/.test(s) && !/^-?[0-9.]+(e[+-]?[0-9]+)?$/i.test(s)) s = "'" + s;
    return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}
