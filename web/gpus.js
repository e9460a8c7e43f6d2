/*
 * gpus.js - "Try on other GPUs": the same run (the same body, the same GPU
 * count and layout) on every GPU of the catalogue, one POST /v1/plan each,
 * four at a time; a table of the verdicts, headroom, step time, wall-clock
 * and cost (the answers' texts), fitting GPUs first and fastest first,
 * each row one click from being the page's GPU (issue 27).
 */
import { $, clearNode, h } from './dom.js';
import { DASH, fmtPct, isNum, readable, textOf } from './format.js';
import { costText } from './panels.js';
import { hooks, page, postJson, requestFor } from './state.js';
import { fitState, gpuShort, worstStage } from './verdict.js';

const PARALLEL = 4;

/* One row per GPU: { gpu, plan } or { gpu, error }. */
async function planEach(body, gpus, signal) {
    const out = new Array(gpus.length);
    let next = 0;
    const worker = async () => {
        while (next < gpus.length && !signal.aborted) {
            const k = next++;
            const gpu = gpus[k];
            try {
                const r = await postJson('/v1/plan', { ...body, gpu: gpu.id }, signal);
                out[k] = r.ok && r.data && r.data.memory ? { gpu, plan: r.data }
                    : { gpu, error: readable((r.data && (r.data.detail || r.data.title)) || `HTTP ${r.status}`) };
            } catch (e) {
                if (e && e.name === 'AbortError') return;
                out[k] = { gpu, error: 'the API is unreachable' };
            }
        }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    return out.filter(Boolean);
}

const RANK = { fits: 0, tight: 1, nofit: 2, none: 3 };

export async function runTryGpus() {
    if (page.gpusCtl) page.gpusCtl.abort();
    const ctl = new AbortController();
    page.gpusCtl = ctl;
    const panel = $('#gpus-panel');
    const status = $('#gpus-status');
    panel.hidden = false;
    panel.dataset.status = 'loading';
    clearNode($('#gpus-table tbody'));
    const req = requestFor(page.state);
    if (Object.keys(req.errors).length) {
        status.textContent = `${DASH} fix the flagged fields first`;
        panel.dataset.status = 'error';
        return;
    }
    const gpus = page.gpus.filter((g) => g && typeof g.id === 'string');
    status.textContent = `Planning the same run on ${gpus.length} GPUs…`;
    const rows = await planEach(req.body, gpus, ctl.signal);
    if (ctl.signal.aborted) return;
    page.gpusCtl = null;
    const margin = req.margin;
    for (const r of rows) r.state = r.plan ? fitState(r.plan.memory || {}, margin) : 'none';
    const wall = (r) => (r.plan && isNum(r.plan.compute && r.plan.compute.wall_seconds && r.plan.compute.wall_seconds.value)
        ? r.plan.compute.wall_seconds.value : Infinity);
    rows.sort((a, b) => RANK[a.state] - RANK[b.state] || wall(a) - wall(b));
    page.gpusFor = { body: withoutGpu(req.body), rows };
    renderRows(rows, req.body);
    const fit = rows.filter((r) => r.state === 'fits' || r.state === 'tight').length;
    const n = req.body.gpus ?? (rows[0] && rows[0].plan ? rows[0].plan.inputs.gpus : DASH);
    status.textContent = `The same run on ${n} of each GPU: ${fit} of ${rows.length} fit` +
        (fit ? `; fastest that fits: ${gpuShort(rows[0].gpu.id).short}` : '; none fits: try Min GPUs on the largest') + '.';
    panel.dataset.status = 'ready';
}

function withoutGpu(body) {
    const b = { ...body };
    delete b.gpu;
    return JSON.stringify(Object.entries(b).sort());
}

/* The inputs changed: the table still holds when only the GPU did (its
 * rows are the same run; the current one is marked again), else it goes. */
export function gpusChanged() {
    if (page.gpusCtl) {
        page.gpusCtl.abort();
        page.gpusCtl = null;
        page.gpusFor = null;
    }
    const panel = $('#gpus-panel');
    if (panel.hidden) return;
    const req = requestFor(page.state);
    if (page.gpusFor && !Object.keys(req.errors).length && withoutGpu(req.body) === page.gpusFor.body) {
        renderRows(page.gpusFor.rows, req.body);
        return;
    }
    page.gpusFor = null;
    panel.hidden = true;
}

/* The table again, as it is (the page's memory units changed). */
export function redrawGpus() {
    if (page.gpusFor && !$('#gpus-panel').hidden) renderRows(page.gpusFor.rows, requestFor(page.state).body);
}

function renderRows(rows, body) {
    const head = $('#gpus-table thead');
    clearNode(head);
    /* short heads: the table has to fit beside the form at 1366 px; the
     * per-GPU memory is the same run's on every GPU, so it is left out */
    head.appendChild(h('tr', {}, ...['GPU', 'Apply', 'Verdict', 'Headroom', 'Step time', 'MFU', 'Wall-clock', 'Cost']
        .map((l, i) => h('th', { scope: 'col', class: i === 0 || i === 2 ? 'l' : null, text: l }))));
    const tb = $('#gpus-table tbody');
    clearNode(tb);
    const now = body.gpu || (page.lastPlan && page.lastPlan.inputs ? page.lastPlan.inputs.gpu : '');
    for (const r of rows) {
        const name = gpuShort(r.gpu.id);
        const current = r.gpu.id === now;
        const tr = h('tr', { 'data-gpu': r.gpu.id, 'data-state': r.state, class: current ? 'worst' : null });
        tr.appendChild(h('th', { scope: 'row', class: 'l', title: name.full, text: name.short + (current ? ' (now)' : '') }));
        const use = h('button', { type: 'button', class: 'apply', text: 'Use', 'aria-label': `Use ${name.full}`, disabled: current || null });
        use.addEventListener('click', () => hooks.applyFields({ gpu: r.gpu.id }));
        tr.appendChild(h('td', {}, use));
        if (!r.plan) {
            tr.appendChild(h('td', { colspan: 6, class: 'l', text: `${DASH} ${r.error}` }));
            tb.appendChild(tr);
            continue;
        }
        const m = r.plan.memory || {}, c = r.plan.compute || {};
        const ws = worstStage(m);
        const head = ws ? textOf(ws, 'memory.stages[]', 'headroom') : textOf(m, 'memory', 'headroom_bytes');
        const headV = ws && isNum(ws.headroom) ? ws.headroom : m.headroom_bytes;
        const verdict = { fits: '✓ fits', tight: '⚠ tight', nofit: '✗ does not fit', none: DASH }[r.state];
        tr.appendChild(h('td', { class: 'l', text: verdict }));
        tr.appendChild(h('td', { text: head + (isNum(headV) && m.hbm_bytes > 0 ? ` (${fmtPct(headV / m.hbm_bytes)})` : '') }));
        tr.appendChild(h('td', { text: textOf(c, 'compute', 'step_time') }));
        tr.appendChild(h('td', { text: textOf(c, 'compute', 'mfu') }));
        tr.appendChild(h('td', { text: textOf(c, 'compute', 'wall_seconds') }));
        tr.appendChild(h('td', { text: costText(c, r.plan.inputs) ? DASH : textOf(c, 'compute', 'cost_usd') }));
        tb.appendChild(tr);
    }
}
