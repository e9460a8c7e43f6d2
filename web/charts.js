/*
 * charts.js - hand-drawn SVG charts: the per-GPU memory stack against HBM,
 * and per-GPU memory over the data-parallel sweep.  Input is the API's
 * numbers as they are; the only arithmetic is layout.  Hover titles show
 * the answer's texts where it has them (the memory terms, HBM); axes and
 * the sweep's points, which have none, are formatted here.
 */
import { byteScale, fmtBytes, fmtPct, fmtSeconds, isNum, tick, labelOf, textOf, valueOf } from './format.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

/* Okabe & Ito's colour-blind-safe palette (Wong, "Points of view: Color
 * blindness", Nature Methods 8:441, 2011), and a pattern on every other
 * term so neighbours differ in texture too, not only in hue. */
/* The memory terms that stack up to the total (labels: the terms table). */
export const TERMS = [
    { key: 'weights', color: '#0072B2', pattern: null },
    { key: 'grads', color: '#56B4E9', pattern: 'diag' },
    { key: 'master', color: '#009E73', pattern: null },
    { key: 'optimizer', color: '#E69F00', pattern: 'cross' },
    { key: 'activations', color: '#CC79A7', pattern: 'dots' },
    { key: 'buffers', color: '#F0E442', pattern: 'vlines' },
    { key: 'overhead', color: '#7a7a7a', pattern: null },
].map((t) => ({ ...t, label: labelOf('memory', t.key) }));

const HBM_COLOR = '#8f0012';

/* <defs> with one pattern per patterned term, ids prefixed by the svg's id
 * so two charts on the page never share an id. */
function addPatterns(svg) {
    const defs = el('defs');
    for (const t of TERMS) {
        if (!t.pattern) continue;
        const p = el('pattern', { id: `${svg.id}-p-${t.key}`, patternUnits: 'userSpaceOnUse', width: 8, height: 8 });
        p.appendChild(el('rect', { width: 8, height: 8, fill: t.color }));
        if (t.pattern === 'diag') p.appendChild(el('path', { d: 'M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4', stroke: '#0b3552', 'stroke-width': 1.4 }));
        if (t.pattern === 'cross') p.appendChild(el('path', { d: 'M0,0 L8,8 M8,0 L0,8', stroke: '#5a3d00', 'stroke-width': 1.2 }));
        if (t.pattern === 'vlines') p.appendChild(el('path', { d: 'M2,0 V8 M6,0 V8', stroke: '#5e5600', 'stroke-width': 1.2 }));
        if (t.pattern === 'dots') p.appendChild(el('circle', { cx: 4, cy: 4, r: 1.6, fill: '#4d1f3c' }));
        defs.appendChild(p);
    }
    svg.appendChild(defs);
}

function fillOf(svg, t) {
    return t.pattern ? `url(#${svg.id}-p-${t.key})` : t.color;
}

/* Text on a chart with a white halo, so it reads on bars and gridlines. */
export function label(attrs, text) {
    return el('text', { 'paint-order': 'stroke', stroke: '#fff', 'stroke-width': 4, 'stroke-linejoin': 'round', ...attrs }, text);
}

export function el(name, attrs, text) {
    const node = document.createElementNS(SVG_NS, name);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
}

export function titled(node, text) {
    node.appendChild(el('title', {}, text));
    return node;
}

export function clear(svg) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
}

/*
 * Lay out in the SVG's own pixel width, so labels stay legible on a
 * phone instead of shrinking with a fixed viewBox.  The width is measured
 * once per chart, then kept up to date by a ResizeObserver: measuring in
 * the middle of a render forced a layout per chart per answer (a fifth of
 * a render's time).  A chart whose width changes is redrawn through the
 * callback given to watchWidths.
 */
const widths = new WeakMap();
let onWidths = null;
const sizer = typeof ResizeObserver === 'function' ? new ResizeObserver((entries) => {
    let moved = false;
    for (const e of entries) {
        /* the border box, as getBoundingClientRect measures it */
        const box = e.borderBoxSize && e.borderBoxSize[0];
        const w = Math.round(box ? box.inlineSize : e.target.getBoundingClientRect().width);
        if (w <= 0 || widths.get(e.target) === w) continue; /* hidden, or as drawn */
        moved = moved || widths.has(e.target);
        widths.set(e.target, w);
    }
    if (moved && onWidths) onWidths();
}) : null;

export function watchWidths(cb) {
    onWidths = cb;
}

export function widthOf(svg, fallback) {
    let w = widths.get(svg);
    if (!w) {
        w = Math.round(svg.getBoundingClientRect().width);
        if (w > 0) widths.set(svg, w);
        if (sizer) sizer.observe(svg);
    }
    return Math.round(Math.max(300, Math.min(1000, w > 0 ? w : fallback)));
}

/* Axis ticks: 1, 2 or 5 times a power of ten, about five of them. */
export function niceStep(max) {
    const raw = max / 5;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) {
        if (m * p >= raw) return m * p;
    }
    return 10 * p;
}

/*
 * Horizontal stacked bar of the per-GPU terms of an answer's memory object
 * (values in bytes), with a vertical line at the GPU's HBM.
 */
export function drawMemoryBar(svg, mem) {
    const m = mem && typeof mem === 'object' ? mem : {};
    const terms = {};
    for (const t of TERMS) terms[t.key] = valueOf(m, 'memory', t.key);
    const hbm = valueOf(m, 'memory', 'hbm_bytes');
    const hbmText = textOf(m, 'memory', 'hbm_bytes');
    clear(svg);
    const W = widthOf(svg, 640), H = 124, left = 10, right = 10, top = 32, barH = 40;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const sum = TERMS.reduce((a, t) => a + (isNum(terms[t.key]) ? Math.max(0, terms[t.key]) : 0), 0);
    if (sum <= 0 && !(isNum(hbm) && hbm > 0)) {
        svg.appendChild(el('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', 'font-size': 14, fill: '#333' },
            '— no memory figures to draw'));
        return;
    }
    addPatterns(svg);
    const max = Math.max(sum, isNum(hbm) ? hbm : 0) * 1.08;
    const sx = (v) => left + (v / max) * (W - left - right);

    let x = 0;
    for (const t of TERMS) {
        const v = terms[t.key];
        if (!isNum(v) || v <= 0) continue;
        const r = el('rect', {
            x: sx(x), y: top, width: Math.max(0.5, sx(x + v) - sx(x)), height: barH,
            fill: fillOf(svg, t), stroke: '#fff', 'stroke-width': 0.75, 'data-term': t.key,
        });
        titled(r, `${t.label}: ${textOf(m, 'memory', t.key)}`);
        svg.appendChild(r);
        x += v;
    }
    svg.appendChild(el('rect', {
        x: sx(0), y: top, width: sx(sum) - sx(0), height: barH,
        fill: 'none', stroke: '#111', 'stroke-width': 1,
    }));

    /* axis in GiB or GB, as the page writes memory */
    const u = byteScale();
    const step = niceStep(max / u.size);
    for (let g = 0; g * u.size <= max; g += step) {
        const gx = sx(g * u.size);
        svg.appendChild(el('line', { x1: gx, x2: gx, y1: top + barH, y2: top + barH + 5, stroke: '#444' }));
        svg.appendChild(el('text', {
            x: gx, y: top + barH + 18, 'text-anchor': 'middle', 'font-size': 11, fill: '#333',
        }, tick(g)));
    }
    svg.appendChild(el('text', { x: W - right, y: H - 4, 'text-anchor': 'end', 'font-size': 11, fill: '#333' }, `${u.name} per GPU`));

    if (isNum(hbm) && hbm > 0) {
        const hx = sx(hbm);
        const line = el('line', {
            x1: hx, x2: hx, y1: top - 12, y2: top + barH + 6,
            stroke: HBM_COLOR, 'stroke-width': 2.5, 'stroke-dasharray': '5 3', 'data-hbm': '1',
        });
        titled(line, `${labelOf('memory', 'hbm_bytes')}: ${hbmText}`);
        svg.appendChild(line);
        /* the label lives in the band above the bar, never on it */
        const anchor = hx > W * 0.7 ? 'end' : 'start';
        svg.appendChild(label({
            x: anchor === 'end' ? hx - 4 : hx + 4, y: top - 14, 'text-anchor': anchor,
            'font-size': 12, fill: HBM_COLOR, 'font-weight': 'bold', 'data-hbm-label': '1',
        }, `HBM ${hbmText}`));
    }
}

/*
 * Per-GPU memory (stacked by term) for each sweep point, with the HBM line,
 * the run's own dp outlined and the dp past which doubling helps < 5%.
 * Returns a one-sentence reading of the chart for the caption.  hbmText:
 * the answer's text for the HBM (memory.human.hbm_bytes); the sweep's own
 * points have no texts, so their labels are formatted here.
 */
export function drawSweep(svg, sweep, hbm, runDp, fixed, hbmText) {
    clear(svg);
    const pts = [];
    const seen = new Set();
    for (const p of Array.isArray(sweep) ? sweep : []) {
        if (!p || !isNum(p.dp) || !isNum(p.total) || seen.has(p.dp)) continue;
        seen.add(p.dp);
        pts.push(p);
    }
    pts.sort((a, b) => a.dp - b.dp);
    /* sweep points may list fewer terms than their total: the rest is the
     * working buffers, drawn so each stack adds up to its total */
    for (let i = 0; i < pts.length; i++) {
        const p = pts[i];
        const listed = TERMS.reduce((a, t) => a + (t.key !== 'buffers' && isNum(p[t.key]) ? p[t.key] : 0), 0);
        if (!isNum(p.buffers) && p.total > listed) pts[i] = { ...p, buffers: p.total - listed };
    }
    const W = widthOf(svg, 640), H = W < 500 ? 270 : 310, left = 52, right = 12, top = 30, bottom = 44;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    if (pts.length === 0) {
        svg.appendChild(el('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', 'font-size': 14, fill: '#333' },
            '— no sweep in the answer'));
        return '— the API returned no sweep points.';
    }

    addPatterns(svg);
    const maxV = Math.max(...pts.map((p) => p.total), isNum(hbm) ? hbm : 0) * 1.08 || 1;
    const plotW = W - left - right, plotH = H - top - bottom;
    const slot = plotW / pts.length;
    const barW = Math.max(4, slot * 0.7);
    const sy = (v) => top + plotH - (v / maxV) * plotH;

    /* y axis in GiB or GB */
    const u = byteScale();
    const step = niceStep(maxV / u.size);
    for (let g = 0; g * u.size <= maxV; g += step) {
        const gy = sy(g * u.size);
        svg.appendChild(el('line', { x1: left, x2: W - right, y1: gy, y2: gy, stroke: '#ddd' }));
        svg.appendChild(el('text', { x: left - 6, y: gy + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#333' }, tick(g)));
    }
    svg.appendChild(el('text', {
        x: 14, y: top + plotH / 2, 'font-size': 11, fill: '#333', 'text-anchor': 'middle',
        transform: `rotate(-90 14 ${top + plotH / 2})`,
    }, `${u.name} per GPU`));

    /* where doubling dp stops paying: the first point whose next
     * (larger) dp saves less than 5% of its per-GPU total */
    let knee = null;
    for (let i = 0; i + 1 < pts.length; i++) {
        if (pts[i + 1].total > pts[i].total * 0.95) {
            knee = pts[i];
            break;
        }
    }

    pts.forEach((p, i) => {
        const cx = left + slot * i + slot / 2;
        const g = el('g', { 'data-dp': p.dp });
        let acc = 0;
        const vals = p;
        for (const t of TERMS) {
            const v = vals[t.key];
            if (!isNum(v) || v <= 0) continue;
            g.appendChild(el('rect', {
                x: cx - barW / 2, y: sy(acc + v), width: barW, height: Math.max(0.3, sy(acc) - sy(acc + v)), fill: fillOf(svg, t),
                stroke: '#fff', 'stroke-width': 0.5,
            }));
            acc += v;
        }
        const outline = el('rect', {
            x: cx - barW / 2, y: sy(p.total), width: barW, height: sy(0) - sy(p.total),
            fill: 'transparent', stroke: p.dp === runDp ? '#111' : 'none', 'stroke-width': p.dp === runDp ? 2.5 : 0,
        });
        titled(outline, `dp ${p.dp} (${isNum(p.gpus) ? p.gpus : '—'} GPUs): ${fmtBytes(p.total)} per GPU, ` +
            `${p.fits ? 'fits' : 'does not fit'}` + (p.dp === runDp ? ' — this run' : ''));
        g.appendChild(outline);
        svg.appendChild(g);
        const label = el('text', {
            x: cx, y: H - bottom + 16, 'text-anchor': 'middle', 'font-size': pts.length > 10 ? 9 : 11,
            fill: '#111', 'font-weight': p.dp === runDp ? 'bold' : 'normal',
        }, String(p.dp));
        svg.appendChild(label);
    });
    svg.appendChild(el('text', { x: left + plotW / 2, y: H - 6, 'text-anchor': 'middle', 'font-size': 11, fill: '#333' },
        'data-parallel degree (dp); bold = this run'));

    if (isNum(hbm) && hbm > 0) {
        const hy = sy(hbm);
        svg.appendChild(el('line', {
            x1: left, x2: W - right, y1: hy, y2: hy, stroke: HBM_COLOR, 'stroke-width': 2, 'stroke-dasharray': '6 3', 'data-hbm': '1',
        }));
        /* above the plot when the line is near the top, else just above the line, with a halo */
        svg.appendChild(label({ x: W - right - 2, y: Math.max(12, hy - 5), 'text-anchor': 'end', 'font-size': 12, fill: HBM_COLOR,
            'font-weight': 'bold', 'data-hbm-label': '1' }, `HBM ${hbmText || fmtBytes(hbm)}`));
    }
    if (knee) {
        const i = pts.indexOf(knee);
        const kx = left + slot * i + slot;
        svg.appendChild(el('line', {
            x1: kx, x2: kx, y1: top - 14, y2: top + plotH, stroke: '#111', 'stroke-width': 1.5, 'stroke-dasharray': '3 3', 'data-knee': knee.dp,
        }));
        /* ~6.6 px per character at 12 px: flip or shorten so the label stays inside */
        let txt = `sharding stops helping past dp ${knee.dp}`;
        const fitsRight = (t) => kx + 4 + t.length * 6.6 <= W - right;
        const fitsLeft = (t) => kx - 4 - t.length * 6.6 >= 0;
        if (!fitsRight(txt) && !fitsLeft(txt)) txt = `flat past dp ${knee.dp}`;
        const anchor = fitsRight(txt) ? 'start' : 'end';
        svg.appendChild(label({ x: anchor === 'end' ? kx - 4 : kx + 4, y: top - 16, 'text-anchor': anchor, 'font-size': 12, fill: '#111',
            'data-knee-label': knee.dp }, txt));
    }

    const last = pts[pts.length - 1];
    const first = pts[0];
    /* what the bars show dp does not shard: the terms that hardly shrink
     * from the first to the last point (named from the bars themselves) */
    const flat = TERMS.filter((t) => isNum(last[t.key]) && last[t.key] > 0 &&
        (!isNum(first[t.key]) || last[t.key] >= 0.9 * first[t.key]));
    const flatSum = flat.reduce((a, t) => a + last[t.key], 0);
    const names = flat.map((t) => t.label.toLowerCase());
    const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}` : names[0] || 'nothing';
    const firstFit = pts.find((p) => p.fits);
    /* say what is held fixed, so the GPU counts under the bars add up under tp/pp */
    const held = fixed && fixed.other > 1 ? ` Each bar keeps tp × pp × cp = ${fixed.other} (${fixed.text}); GPUs = dp × ${fixed.other}.` : '';
    const fitText = firstFit ? `Fits from dp = ${firstFit.dp} (${isNum(firstFit.gpus) ? firstFit.gpus : '—'} GPUs).` : 'No dp in the sweep fits.';
    if (knee) {
        return `${fitText}${held} Sharding stops helping past dp = ${knee.dp}: the next doubling saves under 5% per GPU; ` +
            `at dp = ${last.dp}, ${fmtBytes(flatSum)} of the ${fmtBytes(last.total)} is ${list}, which more dp does not shard at this ZeRO stage.`;
    }
    return `${fitText}${held} Every doubling of dp up to ${last.dp} still saves at least 5% per GPU.`;
}

/* ------------------------------------------------------------------ */
/* bars against HBM: phases of a step, pipeline stages (issue 27)       */
/* ------------------------------------------------------------------ */

const STATE_KEYS = ['weights', 'grads', 'master', 'optimizer'];
const STATE_COLOR = '#0072B2';

/*
 * Horizontal bars, one per row, each a stack of parts [{ key, value,
 * fill, label }] in bytes, on one scale with a dashed line at the HBM.
 * rows: [{ id, name, parts, total, text, mark }]: name at the left, the
 * answer's text (and mark: "peak", "worst") at the right.  Returns the
 * scale (bytes -> x) so callers and tests can read the geometry.
 */
function drawRowBars(svg, rows, hbm, hbmText, attr) {
    clear(svg);
    const W = widthOf(svg, 640);
    const rowH = 24, gap = 10, top = 26, labelW = W < 480 ? 78 : 96, valueW = W < 480 ? 110 : 150;
    const H = top + rows.length * (rowH + gap) + 18;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    addPatterns(svg);
    const max = Math.max(...rows.map((r) => r.total), isNum(hbm) ? hbm : 0) * 1.04 || 1;
    const x0 = labelW, x1 = W - valueW;
    const sx = (v) => x0 + (v / max) * (x1 - x0);
    rows.forEach((r, i) => {
        const y = top + i * (rowH + gap);
        const g = el('g', { [attr]: r.id });
        g.appendChild(el('text', { x: x0 - 6, y: y + rowH / 2 + 4, 'text-anchor': 'end', 'font-size': 12, fill: 'currentColor',
            'font-weight': r.mark ? 'bold' : 'normal' }, r.name));
        let acc = 0;
        for (const p of r.parts) {
            if (!isNum(p.value) || p.value <= 0) continue;
            g.appendChild(titled(el('rect', {
                x: sx(acc), y, width: Math.max(0.5, sx(acc + p.value) - sx(acc)), height: rowH, fill: p.fill,
                stroke: '#fff', 'stroke-width': 0.6, 'data-part': p.key,
            }), `${r.name}, ${p.label}`));
            acc += p.value;
        }
        g.appendChild(el('rect', {
            x: sx(0), y, width: sx(r.total) - sx(0), height: rowH, fill: 'none', 'data-total': r.total,
            stroke: r.mark ? '#111' : '#555', 'stroke-width': r.mark ? 2.5 : 1,
        }));
        g.appendChild(el('text', { x: x1 + 6, y: y + rowH / 2 + 4, 'font-size': 12, fill: 'currentColor', 'font-weight': r.mark ? 'bold' : 'normal' },
            r.text + (r.mark ? ` ← ${r.mark}` : '')));
        svg.appendChild(g);
    });
    if (isNum(hbm) && hbm > 0) {
        const hx = sx(hbm);
        svg.appendChild(titled(el('line', {
            x1: hx, x2: hx, y1: top - 8, y2: H - 14, stroke: HBM_COLOR, 'stroke-width': 2.5, 'stroke-dasharray': '5 3', 'data-hbm': hbm,
        }), `HBM ${hbmText}`));
        const anchor = hx > W * 0.6 ? 'end' : 'start';
        svg.appendChild(label({ x: anchor === 'end' ? hx - 4 : hx + 4, y: top - 10, 'text-anchor': anchor, 'font-size': 12,
            fill: HBM_COLOR, 'font-weight': 'bold', 'data-hbm-label': '1' }, `HBM ${hbmText}`));
    }
    return sx;
}

function listText(parts) {
    return parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}` : parts[0] || '';
}

/*
 * Memory at each phase of a step (memory.phases[]: the worst stage's
 * allocation then) as bars against HBM, split into the model state that
 * stays all step (the worst stage's weights, gradients, master weights
 * and optimizer states) and what the phase adds on top (activations and
 * working buffers): the phase's bytes less that state.  Returns the
 * caption, the chart's text alternative.
 */
export function drawPhases(svg, mem, worst) {
    const m = mem && typeof mem === 'object' ? mem : {};
    const phases = (Array.isArray(m.phases) ? m.phases : []).filter((p) => p && isNum(p.bytes));
    const src = worst || null;
    const state = STATE_KEYS.reduce((a, k) => {
        const v = src ? src[k] : valueOf(m, 'memory', k);
        return a + (isNum(v) ? v : 0);
    }, 0);
    const hbm = valueOf(m, 'memory', 'hbm_bytes');
    const hbmText = textOf(m, 'memory', 'hbm_bytes');
    const rows = phases.map((p) => {
        const kept = Math.min(state, p.bytes);
        return {
            id: p.name, name: p.name, total: p.bytes, text: textOf(p, 'memory.phases[]', 'bytes'),
            mark: p.name === m.peak_phase ? 'peak' : '',
            parts: [
                { key: 'state', value: kept, fill: STATE_COLOR, label: 'model state (weights, gradients, master, optimizer)' },
                { key: 'transient', value: p.bytes - kept, fill: `url(#${svg.id}-p-activations)`, label: 'activations and working buffers' },
            ],
        };
    });
    drawRowBars(svg, rows, hbm, hbmText, 'data-phase');
    if (!rows.length) return '';
    const said = rows.map((r) => `${r.name} ${r.text}${r.mark ? ' (the peak)' : ''}`);
    return `Allocated per GPU at each phase of a step: ${listText(said)}; the GPU has ${hbmText}. ` +
        'Solid: the model state held all step; dotted: activations and working buffers of the phase.';
}

/*
 * Per-GPU memory of each pipeline stage (memory.stages[]), stacked by
 * term like the memory bar, against HBM; the worst stage outlined and
 * named.  Returns the caption.
 */
export function drawStages(svg, mem) {
    const m = mem && typeof mem === 'object' ? mem : {};
    const st = (Array.isArray(m.stages) ? m.stages : []).filter((s) => s && isNum(s.total));
    const hbm = valueOf(m, 'memory', 'hbm_bytes');
    const hbmText = textOf(m, 'memory', 'hbm_bytes');
    const rows = st.map((s) => {
        /* the terms listed may add to less than the total: the rest is
         * drawn as working buffers so each bar adds up to its total */
        const listed = TERMS.reduce((a, t) => a + (t.key !== 'buffers' && isNum(s[t.key]) ? s[t.key] : 0), 0);
        const buffers = isNum(s.buffers) ? s.buffers : Math.max(0, s.total - listed);
        return {
            id: s.stage, name: `stage ${s.stage}`, total: s.total, text: textOf(s, 'memory.stages[]', 'total'),
            mark: st.length > 1 && s.stage === m.worst_stage ? 'worst' : '',
            parts: TERMS.map((t) => ({ key: t.key, value: t.key === 'buffers' ? buffers : s[t.key], fill: fillOf(svg, t), label: t.label })),
        };
    });
    drawRowBars(svg, rows, hbm, hbmText, 'data-stage');
    if (!rows.length) return '';
    const fit = st.filter((s) => s.fits === false).map((s) => `stage ${s.stage}`);
    const worst = rows.find((r) => r.mark);
    return `Per-GPU memory of each of the ${rows.length} pipeline stages: ${listText(rows.map((r) => `stage ${r.id} ${r.text}`))}` +
        `${worst ? `; the worst is stage ${worst.id}` : ''}; the GPU has ${hbmText}` +
        `${fit.length ? `; ${listText(fit)} ${fit.length > 1 ? 'do' : 'does'} not fit` : ''}. Colours and patterns as in the memory bar.`;
}

/* ------------------------------------------------------------------ */
/* wall-clock against the GPU count (issue 27)                          */
/* ------------------------------------------------------------------ */

/* The sweep's points that carry a time (sweep[].wall_seconds: the same
 * run's compute estimate at that dp, tokens fixed), one per dp, by GPUs. */
export function timedPoints(sweep) {
    const seen = new Set();
    return (Array.isArray(sweep) ? sweep : [])
        .filter((p) => p && isNum(p.dp) && isNum(p.gpus) && p.gpus > 0 && isNum(p.wall_seconds) && p.wall_seconds > 0 &&
            !seen.has(p.dp) && seen.add(p.dp))
        .sort((a, b) => a.gpus - b.gpus);
}

/*
 * Wall-clock for the run against the GPU count, both on log scales (each
 * doubling of the GPUs one step right; perfect scaling a straight line,
 * drawn dashed from the first point), one dot per sweep point: filled
 * where it fits, hollow where it does not, the run's own ringed.  runText:
 * the answer's text for the run's wall-clock (compute.wall_seconds), shown
 * for the run's own point.  Returns the caption, the text alternative.
 */
export function drawDays(svg, sweep, runDp, runText) {
    clear(svg);
    const pts = timedPoints(sweep);
    const W = widthOf(svg, 640), H = W < 500 ? 250 : 270, left = 60, right = 16, top = 26, bottom = 46;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    if (pts.length < 2) {
        svg.appendChild(el('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', 'font-size': 14, fill: 'currentColor' },
            '— the answer has no times per GPU count'));
        return '— the answer has no wall-clock per GPU count (sweep[].wall_seconds).';
    }
    const first = pts[0], last = pts[pts.length - 1];
    /* y in days, on powers of ten that cover the points and the ideal line */
    const DAY = 86400;
    const lo = Math.min(...pts.map((p) => p.wall_seconds), first.wall_seconds * first.gpus / last.gpus) / DAY;
    const hi = Math.max(...pts.map((p) => p.wall_seconds)) / DAY;
    const y0 = Math.floor(Math.log10(lo)), y1 = Math.max(y0 + 1, Math.ceil(Math.log10(hi)));
    const x0 = Math.log2(first.gpus), x1 = Math.max(x0 + 1, Math.log2(last.gpus));
    const plotW = W - left - right, plotH = H - top - bottom;
    const sx = (g) => left + ((Math.log2(g) - x0) / (x1 - x0)) * plotW;
    const sy = (s) => top + plotH - ((Math.log10(s / DAY) - y0) / (y1 - y0)) * plotH;
    for (let e = y0; e <= y1; e++) {
        const gy = sy(Math.pow(10, e) * DAY);
        svg.appendChild(el('line', { x1: left, x2: W - right, y1: gy, y2: gy, stroke: '#8a8a8a', 'stroke-opacity': 0.45 }));
        svg.appendChild(el('text', { x: left - 6, y: gy + 4, 'text-anchor': 'end', 'font-size': 11, fill: 'currentColor' },
            tick(Math.pow(10, e))));
    }
    svg.appendChild(el('text', {
        x: 14, y: top + plotH / 2, 'font-size': 11, fill: 'currentColor', 'text-anchor': 'middle',
        transform: `rotate(-90 14 ${top + plotH / 2})`,
    }, 'days (log scale)'));
    /* x ticks: every GPU count of the sweep, thinned to fit */
    const every = Math.max(1, Math.ceil(pts.length / Math.floor(plotW / 44)));
    pts.forEach((p, i) => {
        if (i % every && p.dp !== runDp && i !== pts.length - 1) return;
        svg.appendChild(el('text', { x: sx(p.gpus), y: H - bottom + 16, 'text-anchor': 'middle', 'font-size': 11, fill: 'currentColor',
            'font-weight': p.dp === runDp ? 'bold' : 'normal' }, String(p.gpus)));
    });
    svg.appendChild(el('text', { x: left + plotW / 2, y: H - 6, 'text-anchor': 'middle', 'font-size': 11, fill: 'currentColor' },
        'GPUs (log scale); bold = this run'));
    /* perfect scaling from the first point: GPU-time held */
    svg.appendChild(el('line', {
        x1: sx(first.gpus), y1: sy(first.wall_seconds), x2: sx(last.gpus), y2: sy(first.wall_seconds * first.gpus / last.gpus),
        stroke: '#8a8a8a', 'stroke-width': 1.5, 'stroke-dasharray': '5 4', 'data-ideal': '1',
    }));
    svg.appendChild(el('polyline', {
        points: pts.map((p) => `${sx(p.gpus)},${sy(p.wall_seconds)}`).join(' '), fill: 'none', stroke: '#0072B2', 'stroke-width': 2,
    }));
    for (const p of pts) {
        const own = p.dp === runDp;
        const text = own && runText ? runText : fmtSeconds(p.wall_seconds);
        const g = el('g', { 'data-dp': p.dp, 'data-gpus': p.gpus, 'data-wall': p.wall_seconds });
        g.appendChild(titled(el('circle', {
            cx: sx(p.gpus), cy: sy(p.wall_seconds), r: own ? 6 : 4.5, fill: '#0072B2', class: p.fits ? null : 'hollow',
            stroke: own ? 'currentColor' : '#0072B2', 'stroke-width': own ? 2.5 : 2,
        }), `${p.gpus} GPUs (dp ${p.dp}): ${text}${isNum(p.mfu) ? `, MFU ${fmtPct(p.mfu)}` : ''}, ` +
            `${p.fits ? 'fits' : 'does not fit'}${own ? ' — this run' : ''}`));
        svg.appendChild(g);
        if (own) {
            const right = sx(p.gpus) > left + plotW * 0.6;
            svg.appendChild(label({ x: sx(p.gpus) + (right ? -9 : 9), y: sy(p.wall_seconds) - 8, 'text-anchor': right ? 'end' : 'start',
                'font-size': 12, 'font-weight': 'bold', fill: 'currentColor', 'data-run-label': '1' }, `this run: ${text}`));
        }
    }
    /* what doubling buys at the far end, and how far from perfect scaling */
    const eff = (first.wall_seconds * first.gpus) / (last.wall_seconds * last.gpus);
    const run = pts.find((p) => p.dp === runDp);
    const firstFit = pts.find((p) => p.fits);
    return `Wall-clock for the run's tokens, failure-free, on log scales: ${fmtSeconds(first.wall_seconds)} on ${first.gpus} ` +
        `GPU${first.gpus > 1 ? 's' : ''} down to ${fmtSeconds(last.wall_seconds)} on ${last.gpus}` +
        (run ? `; this run, ${run.gpus} GPUs: ${runText || fmtSeconds(run.wall_seconds)}` : '') +
        `. Scaling efficiency from ${first.gpus} to ${last.gpus} GPUs: ${fmtPct(eff)} (the dashed line is perfect scaling)` +
        (isNum(first.mfu) && isNum(last.mfu) ? `; MFU ${fmtPct(first.mfu)} → ${fmtPct(last.mfu)}` : '') +
        `. ${firstFit ? `Fits in memory from ${firstFit.gpus} GPUs (filled dots)` : 'No point fits in memory (hollow dots)'}.`;
}
