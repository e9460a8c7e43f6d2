/*
 * exporter.js - downloads: the request and answer (JSON), the terms (CSV),
 * the memory chart (SVG, PNG).
 */
import { $, h } from './dom.js';
import { assumptionsOf, csvField, formulaOf, pick, termRow, textOf, valueOf } from './format.js';

/* ------------------------------------------------------------------ */
/* export                                                               */
/* ------------------------------------------------------------------ */

export function download(name, type, data) {
    const url = URL.createObjectURL(data instanceof Blob ? data : new Blob([data], { type }));
    const a = h('a', { href: url, download: name, class: 'visually-hidden' });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/* Every figure of the answer's memory, compute (and its step) and
 * checkpoint sections that has a text: the terms table's rows. */
export function termsCsv(plan) {
    const lines = [['section', 'name', 'value', 'human', 'formula', 'assumptions'].join(',')];
    for (const section of ['memory', 'compute', 'compute.step', 'checkpoint']) {
        const obj = pick(plan, section) || {};
        for (const k of Object.keys(obj)) {
            if (!termRow(section, k)) continue;
            lines.push([section, k, valueOf(obj, section, k), textOf(obj, section, k), formulaOf(obj, section, k),
                assumptionsOf(obj, section, k)].map(csvField).join(','));
        }
    }
    return lines.join('\r\n') + '\r\n';
}

/* The memory chart as a standalone SVG document (its patterns included). */
export function chartSvg() {
    const svg = $('#mem-bar').cloneNode(true);
    svg.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
    const vb = svg.getAttribute('viewBox').split(' ').map(Number);
    svg.setAttribute('width', vb[2]);
    svg.setAttribute('height', vb[3]);
    svg.insertBefore(document.createElementNS('http://www.w3.org/2000/svg', 'rect'), svg.firstChild);
    const bg = svg.firstChild;
    bg.setAttribute('width', '100%');
    bg.setAttribute('height', '100%');
    bg.setAttribute('fill', '#fff');
    return { text: new XMLSerializer().serializeToString(svg), w: vb[2], h: vb[3] };
}

export async function exportPng() {
    const { text, w, h: hh } = chartSvg();
    /* a data: URL, which the page's img-src allows (blob: it does not) */
    const url = 'data:image/svg+xml;base64,' + btoa(unescape(encodeURIComponent(text)));
    {
        const img = new Image();
        await new Promise((res, rej) => {
            img.onload = res;
            img.onerror = () => rej(new Error('chart image did not load'));
            img.src = url;
        });
        const canvas = document.createElement('canvas');
        canvas.width = w * 2;
        canvas.height = hh * 2;
        const g = canvas.getContext('2d');
        g.scale(2, 2);
        g.drawImage(img, 0, 0, w, hh);
        const blob = await new Promise((res) => canvas.toBlob(res, 'image/png'));
        download('trainsize-memory.png', 'image/png', blob);
    }
}
