/*
 * charts.js - hand-drawn SVG charts: the per-GPU memory stack against HBM,
 * and per-GPU memory over the data-parallel sweep.  Input is the API's
 * numbers as they are; the only arithmetic is layout.
 */
import { fmtBytes, isNum, tick } from './format.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

export const TERMS = [
    { key: 'weights', label: 'Weights', color: '#1f5fa8' },
    { key: 'grads', label: 'Gradients', color: '#7aa6d9' },
    { key: 'master', label: 'Master weights', color: '#8a4fb0' },
    { key: 'optimizer', label: 'Optimizer states', color: '#c48be0' },
    { key: 'activations', label: 'Activations', color: '#c26a12' },
    { key: 'overhead', label: 'Overhead', color: '#6b6b6b' },
];

function el(name, attrs, text) {
    const node = document.createElementNS(SVG_NS, name);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
}

function titled(node, text) {
    node.appendChild(el('title', {}, text));
    return node;
}

function clear(svg) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
}

/* Lay out in the SVG's own pixel width, so labels stay legible on a
 * phone instead of shrinking with a fixed viewBox. */
function widthOf(svg, fallback) {
    const w = svg.getBoundingClientRect().width;
    return Math.round(Math.max(300, Math.min(1000, w > 0 ? w : fallback)));
}

/* GiB axis ticks: 1, 2 or 5 times a power of ten, about five of them. */
function niceStep(max) {
    const raw = max / 5;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) {
        if (m * p >= raw) return m * p;
    }
    return 10 * p;
}

const GIB = 1024 * 1024 * 1024;

/*
 * Horizontal stacked bar of the per-GPU terms (values in bytes), with a
 * vertical line at the GPU's HBM.  terms: { weights: bytes, ... }.
 */
export function drawMemoryBar(svg, terms, hbm) {
    clear(svg);
    const W = widthOf(svg, 640), H = 120, left = 10, right = 10, top = 28, barH = 40;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const sum = TERMS.reduce((a, t) => a + (isNum(terms[t.key]) ? Math.max(0, terms[t.key]) : 0), 0);
    if (sum <= 0 && !(isNum(hbm) && hbm > 0)) {
        svg.appendChild(el('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', 'font-size': 14, fill: '#333' },
            '— no memory figures to draw'));
        return;
    }
    const max = Math.max(sum, isNum(hbm) ? hbm : 0) * 1.08;
    const sx = (v) => left + (v / max) * (W - left - right);

    let x = 0;
    for (const t of TERMS) {
        const v = terms[t.key];
        if (!isNum(v) || v <= 0) continue;
        const r = el('rect', {
            x: sx(x), y: top, width: Math.max(0.5, sx(x + v) - sx(x)), height: barH,
            fill: t.color, 'data-term': t.key,
        });
        titled(r, `${t.label}: ${fmtBytes(v)}`);
        svg.appendChild(r);
        x += v;
    }
    svg.appendChild(el('rect', {
        x: sx(0), y: top, width: sx(sum) - sx(0), height: barH,
        fill: 'none', stroke: '#111', 'stroke-width': 1,
    }));

    /* axis in GiB */
    const step = niceStep(max / GIB);
    for (let g = 0; g * GIB <= max; g += step) {
        const gx = sx(g * GIB);
        svg.appendChild(el('line', { x1: gx, x2: gx, y1: top + barH, y2: top + barH + 5, stroke: '#444' }));
        svg.appendChild(el('text', {
            x: gx, y: top + barH + 18, 'text-anchor': 'middle', 'font-size': 11, fill: '#333',
        }, tick(g)));
    }
    svg.appendChild(el('text', { x: W - right, y: H - 4, 'text-anchor': 'end', 'font-size': 11, fill: '#333' }, 'GiB per GPU'));

    if (isNum(hbm) && hbm > 0) {
        const hx = sx(hbm);
        const line = el('line', {
            x1: hx, x2: hx, y1: top - 16, y2: top + barH + 6,
            stroke: '#b00020', 'stroke-width': 2.5, 'stroke-dasharray': '5 3', 'data-hbm': '1',
        });
        titled(line, `GPU HBM: ${fmtBytes(hbm)}`);
        svg.appendChild(line);
        const anchor = hx > W * 0.7 ? 'end' : 'start';
        svg.appendChild(el('text', {
            x: anchor === 'end' ? hx - 4 : hx + 4, y: top - 6, 'text-anchor': anchor,
            'font-size': 12, fill: '#b00020', 'font-weight': 'bold',
        }, `HBM ${fmtBytes(hbm)}`));
    }
}

/*
 * Per-GPU memory (stacked by term) for each sweep point, with the HBM line,
 * the run's own dp outlined and the dp past which doubling helps < 5%.
 * Returns a one-sentence reading of the chart for the caption.
 */
export function drawSweep(svg, sweep, hbm, runDp) {
    clear(svg);
    const pts = [];
    const seen = new Set();
    for (const p of Array.isArray(sweep) ? sweep : []) {
        if (!p || !isNum(p.dp) || !isNum(p.total) || seen.has(p.dp)) continue;
        seen.add(p.dp);
        pts.push(p);
    }
    pts.sort((a, b) => a.dp - b.dp);
    const W = widthOf(svg, 640), H = W < 500 ? 260 : 300, left = 52, right = 12, top = 16, bottom = 44;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    if (pts.length === 0) {
        svg.appendChild(el('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', 'font-size': 14, fill: '#333' },
            '— no sweep in the answer'));
        return '— the API returned no sweep points.';
    }

    const maxV = Math.max(...pts.map((p) => p.total), isNum(hbm) ? hbm : 0) * 1.08 || 1;
    const plotW = W - left - right, plotH = H - top - bottom;
    const slot = plotW / pts.length;
    const barW = Math.max(4, slot * 0.7);
    const sy = (v) => top + plotH - (v / maxV) * plotH;

    /* y axis in GiB */
    const step = niceStep(maxV / GIB);
    for (let g = 0; g * GIB <= maxV; g += step) {
        const gy = sy(g * GIB);
        svg.appendChild(el('line', { x1: left, x2: W - right, y1: gy, y2: gy, stroke: '#ddd' }));
        svg.appendChild(el('text', { x: left - 6, y: gy + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#333' }, tick(g)));
    }
    svg.appendChild(el('text', {
        x: 14, y: top + plotH / 2, 'font-size': 11, fill: '#333', 'text-anchor': 'middle',
        transform: `rotate(-90 14 ${top + plotH / 2})`,
    }, 'GiB per GPU'));

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
        for (const t of TERMS) {
            const v = p[t.key];
            if (!isNum(v) || v <= 0) continue;
            g.appendChild(el('rect', {
                x: cx - barW / 2, y: sy(acc + v), width: barW, height: Math.max(0.3, sy(acc) - sy(acc + v)), fill: t.color,
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

    if (knee) {
        const i = pts.indexOf(knee);
        const kx = left + slot * i + slot;
        svg.appendChild(el('line', {
            x1: kx, x2: kx, y1: top, y2: top + plotH, stroke: '#111', 'stroke-dasharray': '2 3', 'data-knee': knee.dp,
        }));
    }
    if (isNum(hbm) && hbm > 0) {
        const hy = sy(hbm);
        svg.appendChild(el('line', {
            x1: left, x2: W - right, y1: hy, y2: hy, stroke: '#b00020', 'stroke-width': 2, 'stroke-dasharray': '6 3',
        }));
        svg.appendChild(el('text', { x: W - right - 2, y: hy - 4, 'text-anchor': 'end', 'font-size': 12, fill: '#b00020', 'font-weight': 'bold' },
            `HBM ${fmtBytes(hbm)}`));
    }

    const last = pts[pts.length - 1];
    const floor = (isNum(last.activations) ? last.activations : 0) + (isNum(last.overhead) ? last.overhead : 0);
    const firstFit = pts.find((p) => p.fits);
    const fitText = firstFit ? `Fits from dp = ${firstFit.dp}.` : 'No dp in the sweep fits.';
    if (knee) {
        return `${fitText} Sharding stops helping past dp = ${knee.dp}: the next doubling saves under 5% per GPU; ` +
            `activations + overhead (${fmtBytes(floor)} at dp = ${last.dp}) do not shard over dp.`;
    }
    return `${fitText} Every doubling of dp up to ${last.dp} still saves at least 5% per GPU.`;
}
