/*
 * format.js - the answer's texts, and the few strings the page writes.
 *
 * Every figure of an answer is shown as the API's own text ("human"),
 * found where the output-terms table (terms.js, generated from
 * api/ts_terms.c) says it is: a term's "human", the object's "human" map,
 * or a "*_human" member beside the number.  The page formats only what the
 * API does not send: the user's own inputs (placeholders, the fine-tune
 * token count, the margin), ratios it derives, and chart axes.  Every
 * function returns "—" for a missing value so the page can never print
 * NaN, Infinity or "undefined".  Pure and DOM-free: the e2e test imports
 * it in node.
 */
import { TERMS } from './terms.js';

export const DASH = '—';

export function isNum(x) {
    return typeof x === 'number' && Number.isFinite(x);
}

function usable(s) {
    return typeof s === 'string' && s !== '' && s !== 'n/a' && !/NaN|undefined|Infinity/.test(s);
}

/* The terms-table row of member key of an object at path of an answer
 * ("memory", "compute.step", "memory.stages[]", "presets[]"). */
export function termRow(path, key) {
    return TERMS[`${path}.${key}`] || null;
}

/*
 * Memory figures in binary units (GiB: the API's texts, 2^30 bytes) or
 * decimal ones (GB, 10^9 bytes), as the user picks (units.js).  In GB a
 * byte figure is written here from the answer's number, in the API's
 * style; the API is not asked for other texts.  Its free sentences
 * (warnings, import notes, problem details) keep the units it wrote.
 */
let byteUnits = 'GiB';
export const BYTE_UNITS = ['GiB', 'GB'];

export function setByteUnits(u) {
    byteUnits = u === 'GB' ? 'GB' : 'GiB';
}

export function byteUnitsOf() {
    return byteUnits;
}

/* Bytes per axis unit and its name, for chart axes. */
export function byteScale() {
    return byteUnits === 'GB' ? { size: 1e9, name: 'GB' } : { size: 1024 * 1024 * 1024, name: 'GiB' };
}

/* The answer's text for member key of obj (an object at path), or "—". */
export function textOf(obj, path, key) {
    const t = termRow(path, key);
    if (!t || !obj || typeof obj !== 'object') return DASH;
    if (t.fmt === 'bytes' && byteUnits === 'GB') {
        const v = valueOf(obj, path, key);
        if (isNum(v)) return fmtBytes(v);
    }
    let s;
    if (t.shape === 'term') s = obj[key] && obj[key].human;
    else if (t.shape === 'sibling') s = obj[t.human];
    else s = obj.human && obj.human[key];
    return usable(s) ? s : DASH;
}

/* The number behind it (a term's value), NaN when absent. */
export function valueOf(obj, path, key) {
    const t = termRow(path, key);
    const v = obj && typeof obj === 'object' ? obj[key] : undefined;
    if (t && t.shape === 'term') return v && isNum(v.value) ? v.value : NaN;
    return isNum(v) ? v : NaN;
}

/* Its formula: the answer's for a term (it depends on the inputs), the
 * table's for a number. */
export function formulaOf(obj, path, key) {
    const t = termRow(path, key);
    if (!t) return '';
    if (t.shape === 'term') return (obj && obj[key] && obj[key].formula) || '';
    return t.formula || '';
}

/* What it assumes: the answer's assumptions for a term, else the table's doc. */
export function assumptionsOf(obj, path, key) {
    const t = termRow(path, key);
    if (!t) return '';
    if (t.shape === 'term') return (obj && obj[key] && obj[key].assumptions) || t.doc;
    return t.doc;
}

export function labelOf(path, key) {
    const t = termRow(path, key);
    return t ? t.label : key;
}

/* Three significant digits by fixed decimals (1.23, 12.3, 123), the style
 * of the API's texts, for the page's own figures below. */
function sig3(x) {
    const a = Math.abs(x);
    const decimals = a < 10 ? 2 : a < 100 ? 1 : 0;
    return (x + 0).toFixed(decimals).replace(/^-(0\.?0*)$/, '$1');
}

/* Chart axes and small integers: no padding zeros (0, 20, 2.5). */
export function tick(x) {
    if (!isNum(x)) return DASH;
    return String(Number(x.toPrecision(3)));
}

/* Byte figures the page writes (the sweep's points, and every memory
 * figure in GB): binary units like the API's texts (lib/ts_fmt.c
 * fmt_bytes: GiB etc.), or decimal ones (kB, MB, GB: SI prefixes). */
const BIN_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
const DEC_UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];

export function fmtBytes(b, units = byteUnits) {
    if (!isNum(b)) return DASH;
    const [base, names] = units === 'GB' ? [1000, DEC_UNITS] : [1024, BIN_UNITS];
    const neg = b < 0;
    let v = Math.abs(b);
    let i = 0;
    while (v >= base && i < names.length - 1) {
        v /= base;
        i++;
    }
    const num = i === 0 ? String(Math.round(v)) : sig3(v);
    return (neg && num !== '0' ? '-' : '') + num + ' ' + names[i];
}

/* The user's own counts (15T tokens typed, dataset x epochs): the API's
 * short-scale suffixes. */
const SI = [[1e15, 'P'], [1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'k']];

export function fmtCount(x) {
    if (!isNum(x)) return DASH;
    const a = Math.abs(x);
    for (const [scale, suffix] of SI) {
        if (a >= scale) return sig3(x / scale) + suffix;
    }
    return sig3(x);
}

/* Durations the answer has no text for (the sweep's points), in the API's
 * own steps and units (api/ts_fmt.c fmt_seconds), so they read alike. */
const YEAR_S = 365.25 * 86400;
export function fmtSeconds(v) {
    if (!isNum(v)) return DASH;
    const a = Math.abs(v);
    if (a < 1e-3) return `${v.toExponential(2)} s`;
    if (a < 1) return `${sig3(v * 1e3)} ms`;
    if (a < 120) return `${sig3(v)} s`;
    if (a < 120 * 60) return `${sig3(v / 60)} min`;
    if (a < 48 * 3600) return `${sig3(v / 3600)} h`;
    if (a < 730 * 86400) return `${sig3(v / 86400)} days`;
    if (a < 1000 * YEAR_S) return `${sig3(v / YEAR_S)} years`;
    return `${(v / YEAR_S).toExponential(2)} years`;
}

/* Shares the page derives (headroom / HBM, the user's margin). */
export function fmtPct(f) {
    if (!isNum(f)) return DASH;
    const p = f * 100;
    if (p !== 0 && Math.abs(p) < 1) return String(Number(p.toPrecision(2))) + '%';
    return p.toFixed(1) + '%';
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

export function anyValue(x) {
    if (x && typeof x === 'object') return isNum(x.value) ? x.value : NaN;
    return isNum(x) ? x : NaN;
}

/* Exact integer with thousands separators: 8,030,261,248. */
export function fmtExact(x) {
    if (!isNum(x)) return DASH;
    return Math.round(x).toLocaleString('en-US');
}

/* Solver and problem texts sometimes carry raw byte counts ("needs
 * 1.664e+11 bytes": core/ts_solve.c writes them, and the core has no
 * access to the API's formatter): show them in GiB like every other figure. */
export function readable(text) {
    if (typeof text !== 'string') return '';
    const conv = (all, n) => {
        const v = Number(n);
        return isNum(v) && v >= 1024 ? fmtBytes(v) : all;
    };
    const NUM = '([0-9]+(?:\\.[0-9]+)?(?:e\\+?[0-9]+)?)';
    /* "(2.478e+12 and 8.552e+10 bytes)": both are byte counts */
    return text.replace(new RegExp(`${NUM} and ${NUM}\\s*bytes\\b`, 'gi'), (all, a, b) => `${conv(a, a)} and ${conv(b, b)}`)
        .replace(new RegExp(`${NUM}\\s*bytes\\b`, 'gi'), conv);
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
