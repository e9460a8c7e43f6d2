/*
 * compare.js - pinned answers side by side, differences marked.
 */
import { $, clearNode, h } from './dom.js';
import { buildRequest } from './form.js';
import { DASH, labelOf, pick, textOf } from './format.js';
import { costText } from './panels.js';
import { page } from './state.js';
import { fitState, modelLine } from './verdict.js';

/* ------------------------------------------------------------------ */
/* compare                                                              */
/* ------------------------------------------------------------------ */

export const COMPARE_ROWS = [
    ['Model', (p) => modelLine(p)],
    ['GPUs', (p) => `${pick(p, 'inputs.gpus') ?? DASH} × ${pick(p, 'inputs.gpu') ?? DASH}`],
    ['Layout', (p) => ['dp', 'tp', 'pp', 'cp', 'ep'].map((k) => `${k} ${pick(p, 'inputs.' + k) ?? DASH}`).join(', ') + `, ZeRO ${pick(p, 'inputs.zero') ?? DASH}`],
    ['Micro / global batch', (p) => `${pick(p, 'inputs.micro_batch') ?? DASH} / ${pick(p, 'inputs.global_batch') ?? DASH}`],
    ['Sequence', (p) => String(pick(p, 'inputs.seq') ?? DASH)],
    ['Recompute', (p) => String(pick(p, 'inputs.recompute') ?? DASH)],
    ['Verdict', (p) => ({ fits: 'fits', tight: 'tight', nofit: 'does not fit', none: DASH })[fitState(p.memory || {}, buildRequest(page.state).margin)]],
    ...[['memory', 'total'], ['memory', 'headroom_bytes'], ['compute', 'gpu_hours'], ['compute', 'gpu_years'],
        ['compute', 'wall_seconds'], ['compute', 'step_time'], ['compute', 'cost_usd'], ['checkpoint', 'full_bytes'],
        ['checkpoint', 'waste_fraction_schedule']].map(([obj, key]) => [labelOf(obj, key),
        (p) => (key === 'cost_usd' && costText(p.compute, p.inputs)) || textOf(p[obj], obj, key)]),
];

export function pin() {
    if (!page.lastPlan) return;
    page.pins.push({ plan: page.lastPlan, body: page.lastBody, label: `#${page.pins.length + 1}` });
    renderCompare();
    $('#compare-panel').scrollIntoView({ block: 'nearest' });
}

export function renderCompare() {
    const panel = $('#compare-panel');
    panel.hidden = page.pins.length === 0;
    if (!page.pins.length) return;
    const cols = [...page.pins];
    if (page.lastPlan && !page.pins.some((p) => p.plan === page.lastPlan)) cols.push({ plan: page.lastPlan, body: page.lastBody, label: 'current' });
    const head = $('#compare-table thead');
    clearNode(head);
    const tr = h('tr', {}, h('th', { scope: 'col', text: 'Figure' }));
    cols.forEach((c, i) => {
        const th = h('th', { scope: 'col' }, c.label === 'current' ? 'Current' : `Pinned ${c.label}`);
        if (c.label !== 'current') {
            const x = h('button', { type: 'button', class: 'remove', text: '×', 'aria-label': `Remove pinned ${c.label}` });
            x.addEventListener('click', () => {
                page.pins.splice(i, 1);
                renderCompare();
            });
            th.appendChild(document.createTextNode(' '));
            th.appendChild(x);
        }
        tr.appendChild(th);
    });
    head.appendChild(tr);
    const body = $('#compare-table tbody');
    clearNode(body);
    for (const [label, get] of COMPARE_ROWS) {
        const vals = cols.map((c) => get(c.plan));
        const row = h('tr', {}, h('th', { scope: 'row', text: label }));
        vals.forEach((v, i) => {
            const diff = i > 0 && v !== vals[0];
            row.appendChild(h('td', { class: diff ? 'diff' : null, 'data-diff': diff ? '1' : null },
                diff ? h('span', { class: 'diff-mark', 'aria-hidden': 'true', text: '≠ ' }) : null,
                diff ? h('span', { class: 'visually-hidden', text: 'differs: ' }) : null, v));
        });
        body.appendChild(row);
    }
}
