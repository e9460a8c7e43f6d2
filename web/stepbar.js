/*
 * stepbar.js - where a step's time goes (issue 27): the parts of the
 * answer's compute.step (compute, recompute, TP / DP / CP / EP
 * communication, pipeline bubble with its point-to-point sends, optimizer,
 * offload) as one stacked SVG bar on a time axis that ends at the answer's
 * step time, and the same parts as a list beside it.  The parts add up to
 * the step time (core/ts_step.c; the API's compute.step_time formula), so
 * the bar's end is the step time; each segment's share is the page's own
 * ratio of two of the answer's numbers.  The caption, the chart's text
 * alternative (aria-labelledby), reads every part with its text and share.
 */
import { clear, el, label, niceStep, titled, widthOf } from './charts.js';
import { $, fig, fill, h } from './dom.js';
import { DASH, fmtPct, isNum, labelOf, textOf, tick, valueOf } from './format.js';
import { STEP } from './state.js';

/* The parts in the order they add up, each with its colour (Okabe & Ito,
 * as charts.js; grey for the idle bubble, brown for host traffic). */
export const STEP_PARTS = [
    { key: 'compute', color: '#0072B2' },
    { key: 'recompute', color: '#56B4E9' },
    { key: 'tp_comm', color: '#E69F00' },
    { key: 'pp_bubble', color: '#7a7a7a' },
    { key: 'dp_comm', color: '#D55E00' },
    { key: 'cp_comm', color: '#CC79A7' },
    { key: 'ep_comm', color: '#F0E442' },
    { key: 'optimizer', color: '#009E73' },
    { key: 'offload', color: '#5a3d00' },
];
/* the sums beside the parts; other step members are not times */
export const STEP_SUMS = ['exposed_comm', 'overlapped_comm', 'pp_p2p'];

/* The axis unit for a step of total seconds: the one the API's own text
 * for such a duration uses (lib/ts_fmt.c fmt_seconds). */
function axisUnit(total) {
    if (total < 1) return { scale: 1e-3, name: 'ms' };
    if (total < 120) return { scale: 1, name: 's' };
    if (total < 7200) return { scale: 60, name: 'min' };
    return { scale: 3600, name: 'h' };
}

/* ~6.6 px per character of 12 px text (charts.js uses the same guess) */
const CHAR_W = 6.6;

/*
 * Draw parts [{ key, label, value (s), text, color }] against the step
 * time (total: seconds, totalText: the answer's text).  Returns the parts
 * drawn (value > 0) with their share of the total.
 */
export function drawStepBar(svg, parts, total, totalText) {
    clear(svg);
    const W = widthOf(svg, 640), H = 100, left = 12, right = 12, top = 26, barH = 32;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const ps = parts.filter((p) => isNum(p.value) && p.value > 0);
    const sum = ps.reduce((a, p) => a + p.value, 0);
    /* the bar ends at the step time; the parts' own sum if it is absent */
    const end = isNum(total) && total > 0 ? total : sum;
    if (!(end > 0)) return [];
    const max = Math.max(end, sum);
    const sx = (v) => left + (v / max) * (W - left - right);
    const out = [];
    let acc = 0;
    let labelEnd = -Infinity;
    for (const p of ps) {
        const share = p.value / end;
        const x = sx(acc), w = sx(acc + p.value) - sx(acc);
        const r = el('rect', { x, y: top, width: Math.max(0.5, w), height: barH, fill: p.color, stroke: '#fff', 'stroke-width': 1,
            'data-part': p.key, 'data-value': p.value });
        titled(r, `${p.label}: ${p.text} (${fmtPct(share)} of the step)`);
        svg.appendChild(r);
        /* a name above its segment where the segment is wide enough and the
         * previous name has ended; the list beside the chart names all */
        const name = [`${p.label} ${fmtPct(share)}`, p.label, fmtPct(share)].find((t) => w >= t.length * CHAR_W + 4);
        if (name && x >= labelEnd) {
            svg.appendChild(label({ x: x + 2, y: top - 8, 'font-size': 12, fill: '#111', 'data-part-label': p.key }, name));
            labelEnd = x + name.length * CHAR_W + 8;
        }
        out.push({ ...p, share });
        acc += p.value;
    }
    svg.appendChild(el('rect', { x: sx(0), y: top, width: sx(sum) - sx(0), height: barH, fill: 'none', stroke: '#111', 'stroke-width': 1 }));

    /* the time axis, in the unit the step time is written in */
    const u = axisUnit(end);
    const step = niceStep(max / u.scale);
    for (let g = 0; g * u.scale <= max * (1 + 1e-9); g += step) {
        const gx = sx(g * u.scale);
        svg.appendChild(el('line', { x1: gx, x2: gx, y1: top + barH, y2: top + barH + 5, stroke: '#111', 'data-tick': g * u.scale }));
        svg.appendChild(el('text', { x: gx, y: top + barH + 18, 'text-anchor': 'middle', 'font-size': 11, fill: '#333' }, tick(g)));
    }
    svg.appendChild(el('text', { x: left, y: H - 4, 'font-size': 11, fill: '#333' }, `time per step (${u.name})`));
    /* the step time: a mark at the bar's end, and the answer's text */
    const ex = sx(end);
    svg.appendChild(el('line', { x1: ex, x2: ex, y1: top - 4, y2: top + barH + 8, stroke: '#111', 'stroke-width': 2, 'data-step-time': end }));
    svg.appendChild(label({ x: W - right, y: H - 4, 'text-anchor': 'end', 'font-size': 12, 'font-weight': 'bold', fill: '#111',
        'data-step-label': '1' }, `step time ${totalText && totalText !== DASH ? totalText : tick(end / u.scale) + ' ' + u.name}`));
    return out;
}

/* "Compute" -> "compute" inside a sentence; "DP / FSDP ..." stays */
function lower(s) {
    return /^.[a-z]/.test(s) ? s[0].toLowerCase() + s.slice(1) : s;
}

/* The step block of the Compute panel: the bar, its caption and the list
 * (each part's swatch, the answer's text, its formula). */
export function renderStep(c) {
    const step = c && c.step && typeof c.step === 'object' ? c.step : null;
    $('#step-block').hidden = !step;
    if (!step) return;
    const parts = [];
    for (const p of STEP_PARTS) {
        if (step[p.key] === undefined) continue;
        parts.push({ ...p, label: labelOf(STEP, p.key), value: valueOf(step, STEP, p.key), text: textOf(step, STEP, p.key) });
    }
    const total = valueOf(c, 'compute', 'step_time');
    const totalText = textOf(c, 'compute', 'step_time');
    const drawn = drawStepBar($('#step-bar'), parts, total, totalText);
    const rows = drawn.map((p) => {
        const r = fig(`step-${p.key}`, step, STEP, p.key);
        r[0].prepend(h('span', { class: `swatch sw-step-${p.key}`, 'aria-hidden': 'true' }));
        r[1].insertBefore(h('span', { class: 'share muted', text: ` (${fmtPct(p.share)})` }), r[1].querySelector('.v').nextSibling);
        return r;
    });
    for (const key of STEP_SUMS) {
        if (!isNum(valueOf(step, STEP, key))) continue;
        rows.push(fig(`step-${key}`, step, STEP, key));
    }
    fill($('#step-figs'), rows);
    $('#step-cap').textContent = drawn.length
        ? `One step, ${totalText !== DASH ? totalText : 'the step time'}: ${drawn.map((p) => `${lower(p.label)} ${p.text} (${fmtPct(p.share)})`).join(', ')}.`
        : 'The answer has no step breakdown.';
}
