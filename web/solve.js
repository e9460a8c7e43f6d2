/*
 * solve.js - "Max micro-batch", "Min GPUs" (POST /v1/fit) and the layout
 * search (POST /v1/search), and their tables.
 */
import { $, clearNode, h } from './dom.js';
import { DASH, fmtExact, isNum, labelOf, pick, readable, textOf, valueOf } from './format.js';
import { problemErrors, showFieldErrors, writeForm } from './formui.js';
import { hooks, page, postJson, requestFor } from './state.js';

export async function runFit(solve) {
    if (page.fitCtl) page.fitCtl.abort();
    const ctl = new AbortController();
    page.fitCtl = ctl;
    const out = $('#fit-readout');
    out.dataset.status = 'loading';
    out.textContent = 'Solving…';
    const req = requestFor(page.state);
    if (Object.keys(req.errors).length) {
        out.textContent = `${DASH} fix the flagged fields first`;
        out.dataset.status = 'error';
        return;
    }
    const body = req.body;
    if (solve === 'micro_batch') delete body.micro_batch;
    else {
        delete body.gpus;
        delete body.dp;
    }
    body.solve = solve;
    try {
        const r = await postJson('/v1/fit', body, ctl.signal);
        if (ctl.signal.aborted) return;
        clearNode(out);
        if (!r.ok || !r.data) {
            const d = r.data || {};
            if (d.detail || d.title) showFieldErrors(problemErrors(d, r.status));
            out.textContent = `${DASH} no answer: ${readable(d.detail || d.title || 'HTTP ' + r.status)}`;
            out.dataset.status = 'error';
            return;
        }
        const d = r.data;
        if (d.found !== true) {
            out.textContent = `Nothing fits: ${readable(d.reason || 'no configuration within the limits fits')}`;
            out.dataset.status = 'nofit';
            return;
        }
        const total = textOf(d.memory, 'memory', 'total');
        const head = isNum(pick(d, 'memory.headroom_bytes')) ? `, ${textOf(d.memory, 'memory', 'headroom_bytes')} headroom` : '';
        let text, apply;
        if (solve === 'micro_batch') {
            text = `Largest micro-batch that fits: ${isNum(d.micro_batch) ? d.micro_batch : DASH} (${total} per GPU${head}).`;
            apply = isNum(d.micro_batch) ? { micro_batch: String(d.micro_batch) } : null;
        } else {
            text = `Fewest GPUs that fit: ${isNum(d.gpus) ? d.gpus : DASH} (dp ${isNum(d.dp) ? d.dp : DASH}, ${total} per GPU${head}).`;
            apply = isNum(d.gpus) ? { gpus: String(d.gpus), dp: '' } : null;
        }
        out.appendChild(h('span', { id: 'fit-text', text }));
        if (apply) {
            const b = h('button', { type: 'button', class: 'apply', text: 'Use it' });
            b.addEventListener('click', () => applyFields(apply));
            out.appendChild(document.createTextNode(' '));
            out.appendChild(b);
        }
        out.dataset.status = 'ready';
    } catch (e) {
        if (e && e.name === 'AbortError') return;
        out.textContent = `${DASH} could not reach the API`;
        out.dataset.status = 'error';
    } finally {
        if (page.fitCtl === ctl) page.fitCtl = null;
    }
}

export function applyFields(apply) {
    for (const [k, v] of Object.entries(apply)) {
        if (v === '' || v === undefined || v === null) delete page.state[k];
        else page.state[k] = String(v);
    }
    writeForm();
    hooks.changed(true);
}

/* ------------------------------------------------------------------ */
/* layout search (POST /v1/search, when the server has it)              */
/* ------------------------------------------------------------------ */

export const LAYOUT_KEYS = ['tp', 'pp', 'cp', 'dp', 'ep', 'vpp', 'zero', 'framework', 'recompute', 'micro_batch',
    'sequence_parallel', 'pp_schedule', 'first_stage_layers', 'last_stage_layers', 'offload_optimizer', 'offload_params'];

/* A column of the search table from the terms table: sorted by the
 * number, showing the answer's text (a cost of 0 means no price). */
export const RESULT = 'results[]';
export function resultCol(key, sortKey, opts = {}) {
    return {
        key: sortKey, label: labelOf(RESULT, key), get: (r) => valueOf(r, RESULT, key),
        show: (r) => (opts.positive && !(valueOf(r, RESULT, key) > 0) ? DASH : textOf(r, RESULT, key)),
    };
}

export const SEARCH_COLS = [
    { key: 'rank', label: '#', get: (r, i) => i + 1 },
    { key: 'gpus', label: 'GPUs', get: (r) => (isNum(r.gpus) ? r.gpus : undefined) },
    { key: 'layout', label: 'Layout', get: (r) => layoutText(layoutOf(r)) },
    resultCol('step_time', 'step_time'),
    resultCol('predicted_mfu', 'predicted_mfu'),
    resultCol('memory_total', 'total'),
    resultCol('headroom_bytes', 'headroom'),
    resultCol('cost_usd_per_step', 'cost', { positive: true }),
    { key: 'why', label: 'Why this rank', get: (r) => (typeof r.why === 'string' ? r.why : '') },
];

/* "tp 8 · pp 2 · dp 4 · ZeRO 1 · megatron · full recompute · mb 1" */
export function layoutText(l) {
    const parts = [];
    for (const k of ['tp', 'pp', 'cp', 'dp', 'ep', 'vpp']) if (isNum(l[k]) && (l[k] > 1 || k === 'dp' || k === 'tp')) parts.push(`${k} ${l[k]}`);
    if (isNum(l.zero)) parts.push(`ZeRO ${l.zero}`);
    if (l.framework) parts.push(String(l.framework));
    if (l.recompute) parts.push(`${l.recompute} recompute`);
    if (isNum(l.micro_batch)) parts.push(`mb ${l.micro_batch}`);
    if (l.sequence_parallel === true) parts.push('SP');
    return parts.join(' · ');
}

export function layoutOf(r) {
    const src = r.layout && typeof r.layout === 'object' ? r.layout : (r.inputs && typeof r.inputs === 'object' ? r.inputs : r);
    const out = {};
    for (const k of LAYOUT_KEYS) if (src[k] !== undefined && src[k] !== null) out[k] = src[k];
    if (out.dp === undefined && isNum(r.dp)) out.dp = r.dp;
    return out;
}

export async function runSearch() {
    const panel = $('#search-panel');
    const status = $('#search-status');
    panel.hidden = false;
    status.textContent = 'Searching…';
    const req = requestFor(page.state);
    const body = { ...req.body };
    for (const k of LAYOUT_KEYS) delete body[k];
    if ($('#search-objective').value === 'cost') body.objective = 'cost';
    /* drop what this server's search does not take, and say so */
    const dropped = [];
    for (let attempt = 0; attempt < 8; attempt++) {
        let r;
        try {
            r = await postJson('/v1/search', body);
        } catch {
            status.textContent = `${DASH} could not reach the API`;
            return;
        }
        if (r.status === 404) {
            status.textContent = 'This server has no layout search (POST /v1/search) yet.';
            panel.dataset.status = 'absent';
            return;
        }
        const f = r.data && typeof r.data.field === 'string' ? r.data.field.replace(/^\//, '').split('/')[0] : '';
        if (r.status === 400 && r.data && /unknown/i.test(`${r.data.type} ${r.data.title} ${r.data.detail}`) && f in body) {
            dropped.push(f);
            delete body[f];
            continue;
        }
        if (!r.ok || !r.data) {
            status.textContent = `${DASH} no answer: ${readable((r.data && (r.data.detail || r.data.title)) || 'HTTP ' + r.status)}`;
            panel.dataset.status = 'error';
            return;
        }
        page.search = Array.isArray(r.data.results) ? r.data.results : [];
        page.searchSort = { key: null, dir: 1 };
        const tried = r.data.tried ?? pick(r.data, 'counts.tried') ?? r.data.layouts_tried;
        const fitting = r.data.fitting ?? pick(r.data, 'counts.fitting') ?? r.data.layouts_fitting;
        status.textContent = `${page.search.length} layouts, ${body.objective === 'cost' ? 'cheapest' : 'fastest'} first` +
            (isNum(tried) ? ` (${fmtExact(tried)} tried${isNum(fitting) ? `, ${fmtExact(fitting)} fit` : ''})` : '') +
            (dropped.length ? `; not sent: ${dropped.join(', ')}` : '') + '.';
        panel.dataset.status = 'ready';
        renderSearch();
        return;
    }
}

export function renderSearch() {
    const rows = (page.search || []).map((r, i) => ({ r, i }));
    const { key, dir } = page.searchSort;
    if (key) {
        const col = SEARCH_COLS.find((c) => c.key === key);
        rows.sort((a, b) => {
            const x = col.get(a.r, a.i), y = col.get(b.r, b.i);
            if (typeof x === 'number' && typeof y === 'number') return (x - y) * dir;
            return String(x ?? '').localeCompare(String(y ?? '')) * dir;
        });
    }
    const head = $('#search-table thead');
    clearNode(head);
    const tr = h('tr');
    for (const c of SEARCH_COLS) {
        const sorted = key === c.key ? (dir > 0 ? 'ascending' : 'descending') : 'none';
        const b = h('button', { type: 'button', class: 'sort', 'data-sort': c.key, text: c.label });
        b.addEventListener('click', () => {
            page.searchSort = { key: c.key, dir: page.searchSort.key === c.key ? -page.searchSort.dir : 1 };
            renderSearch();
            document.querySelector(`#search-table button[data-sort="${c.key}"]`).focus();
        });
        tr.appendChild(h('th', { scope: 'col', 'aria-sort': sorted }, b));
    }
    tr.appendChild(h('th', { scope: 'col', text: 'Apply' }));
    head.appendChild(tr);
    const body = $('#search-table tbody');
    clearNode(body);
    for (const { r, i } of rows) {
        const row = h('tr', { 'data-rank': i + 1 });
        for (const c of SEARCH_COLS) {
            const v = c.show ? c.show(r, i) : c.get(r, i);
            row.appendChild(h(c.key === 'rank' ? 'th' : 'td', { scope: c.key === 'rank' ? 'row' : null, text: v === undefined || v === null ? DASH : String(v) }));
        }
        const use = h('button', { type: 'button', class: 'apply', text: 'Use this layout', 'aria-label': `Use this layout, rank ${i + 1}` });
        use.addEventListener('click', () => {
            const lay = layoutOf(r);
            const apply = {};
            for (const k of LAYOUT_KEYS) apply[k] = lay[k] === undefined ? '' : String(lay[k]);
            if (isNum(r.gpus)) apply.gpus = String(r.gpus);
            if (apply.dp && apply.gpus) apply.dp = '';
            applyFields(apply);
        });
        row.appendChild(h('td', {}, use));
        body.appendChild(row);
    }
}
