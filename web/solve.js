/*
 * solve.js - "Max micro-batch", "Min GPUs" (POST /v1/fit) and the layout
 * search (POST /v1/search), and their tables.
 */
import { $, clearNode, h } from './dom.js';
import { DASH, fmtExact, fmtPct, isNum, labelOf, pick, readable, textOf, valueOf } from './format.js';
import { problemErrors, showFieldErrors, writeForm } from './formui.js';
import { hooks, page, postJson, requestFor } from './state.js';

export async function runFit(solve) {
    if (page.fitCtl) page.fitCtl.abort();
    const ctl = new AbortController();
    page.fitCtl = ctl;
    const out = $('#fit-readout');
    out.dataset.status = 'loading';
    out.textContent = 'Solving…';
    page.fitSays = [];
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
            /* the reason's raw byte counts are written in the page's units */
            const why = () => `Nothing fits with this layout: ${readable(d.reason || 'no configuration within the limits fits')}.`;
            out.textContent = `${why()} Trying other layouts…`;
            const alt = await fitOtherLayouts(solve, body, d.inputs || {}, ctl.signal);
            if (ctl.signal.aborted) return;
            clearNode(out);
            out.appendChild(said(h('span', { id: 'fit-text' }), why));
            if (!alt) {
                out.appendChild(document.createTextNode(' Nor with ZeRO 3, full recompute or tensor and pipeline parallelism across a node: try a larger GPU or a smaller model.'));
                out.dataset.status = 'nofit';
                return;
            }
            out.appendChild(document.createTextNode(' Changing the layout too: '));
            out.appendChild(said(h('span', { id: 'fit-alt-text' }), alt.say));
            out.appendChild(document.createTextNode(' '));
            const b = h('button', { type: 'button', class: 'apply', text: 'Use it' });
            b.addEventListener('click', () => applyFields(alt.apply));
            out.appendChild(b);
            out.dataset.status = 'ready';
            return;
        }
        let say, apply;
        if (solve === 'micro_batch') {
            say = () => `Largest micro-batch that fits: ${isNum(d.micro_batch) ? d.micro_batch : DASH} (${memText(d)}).`;
            apply = isNum(d.micro_batch) ? { micro_batch: String(d.micro_batch) } : null;
        } else {
            say = () => `Fewest GPUs that fit: ${isNum(d.gpus) ? d.gpus : DASH} (dp ${isNum(d.dp) ? d.dp : DASH}, ${memText(d)}).`;
            apply = isNum(d.gpus) ? { gpus: String(d.gpus), dp: '' } : null;
        }
        out.appendChild(said(h('span', { id: 'fit-text' }), say));
        if (apply) {
            const b = h('button', { type: 'button', class: 'apply', text: 'Use it' });
            b.addEventListener('click', () => applyFields(apply));
            out.appendChild(document.createTextNode(' '));
            out.appendChild(b);
        }
        /* the smallest cluster that fits: the layout searched along with
         * the GPU count (issue 27), the same variants as when nothing fits */
        if (solve === 'gpus' && isNum(d.gpus)) {
            const more = h('span', { id: 'fit-alt', text: ' Trying other layouts…' });
            out.appendChild(more);
            out.dataset.status = 'loading';
            const alt = await fitOtherLayouts(solve, body, d.inputs || {}, ctl.signal);
            if (ctl.signal.aborted) return;
            if (alt && alt.gpus < d.gpus) {
                more.textContent = ' Smallest cluster, changing the layout too: ';
                more.appendChild(said(h('span', { id: 'fit-alt-text' }), alt.say));
                more.appendChild(document.createTextNode(' '));
                const b = h('button', { type: 'button', class: 'apply', id: 'fit-alt-use', text: 'Use it' });
                b.addEventListener('click', () => applyFields(alt.apply));
                more.appendChild(b);
            } else {
                more.textContent = ' No other layout tried (ZeRO 3, tp, pp, full recompute) needs fewer.';
            }
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

/*
 * Nothing fits with the user's layout (issue 27, item 6: the solver only
 * moved the one variable it solves for): ask the same question with the
 * layout changes that cut per-GPU memory most, in parallel, bounded to
 * three requests: ZeRO 3 with full recompute (shards every state, keeps
 * few activations), the same with tensor parallelism across a node, and
 * Megatron-style tp x pp of a node each with ZeRO 1.  "gpus": the one
 * that needs the fewest GPUs; "micro_batch": the first (smallest change)
 * that fits.  Returns { text, apply } or null.
 */
async function fitOtherLayouts(solve, body, inputs, signal) {
    const node = isNum(inputs.gpus_per_node) && inputs.gpus_per_node > 1 ? inputs.gpus_per_node : 8;
    const cur = { zero: body.zero ?? inputs.zero, tp: body.tp ?? inputs.tp ?? 1, pp: body.pp ?? inputs.pp ?? 1 };
    const variants = [
        { zero: 3, recompute: 'full' },
        { zero: 3, recompute: 'full', tp: node },
        { zero: 1, recompute: 'full', tp: node, pp: node },
    ].filter((v) => v.zero !== cur.zero || (v.tp || 1) !== cur.tp || (v.pp || 1) !== cur.pp || body.recompute !== 'full')
        /* with the GPU count held, tp x pp must divide it (else a 400) */
        .filter((v) => solve === 'gpus' || !isNum(inputs.gpus) || inputs.gpus % ((v.tp || 1) * (v.pp || 1) * (inputs.cp || 1)) === 0);
    const asks = variants.map(async (v) => {
        const b = { ...body, ...v };
        if (solve === 'gpus') {
            delete b.gpus;
            delete b.dp;
        } else if (isNum(b.gpus)) {
            delete b.dp; /* dp follows from gpus under the new tp x pp */
        }
        try {
            const r = await postJson('/v1/fit', b, signal);
            return r.ok && r.data && r.data.found === true ? { v, d: r.data } : null;
        } catch {
            return null;
        }
    });
    const found = (await Promise.all(asks)).filter(Boolean);
    if (!found.length) return null;
    const best = solve === 'gpus' ? found.reduce((a, x) => (x.d.gpus < a.d.gpus ? x : a)) : found[0];
    const { v, d } = best;
    const change = [`ZeRO ${v.zero}`, v.tp ? `tp ${v.tp}` : null, v.pp ? `pp ${v.pp}` : null, `${v.recompute} recompute`]
        .filter(Boolean).join(', ');
    const apply = { zero: String(v.zero), recompute: v.recompute, tp: v.tp ? String(v.tp) : '', pp: v.pp ? String(v.pp) : '' };
    if (solve === 'gpus') {
        Object.assign(apply, { gpus: String(d.gpus), dp: '' });
        return { apply, gpus: d.gpus, say: () => `${change} fits on ${d.gpus} GPUs (dp ${isNum(d.dp) ? d.dp : DASH}, ${memText(d)}).` };
    }
    Object.assign(apply, { micro_batch: String(d.micro_batch), dp: '' });
    return { apply, say: () => `${change} fits a micro-batch of ${d.micro_batch} (${memText(d)}).` };
}

/* "62.1 GiB per GPU, 17.5 GiB headroom" of a /v1/fit answer, in the
 * page's units at the time it is called. */
function memText(d) {
    const head = isNum(pick(d, 'memory.headroom_bytes')) ? `, ${textOf(d.memory, 'memory', 'headroom_bytes')} headroom` : '';
    return `${textOf(d.memory, 'memory', 'total')} per GPU${head}`;
}

/* A sentence of the readout that quotes memory: kept with the function
 * that writes it, so it can be written again in other units. */
function said(node, say) {
    node.textContent = say();
    page.fitSays.push([node, say]);
    return node;
}

/* The readout's memory figures in the page's units (units.js). */
export function redrawFit() {
    for (const [node, say] of page.fitSays || []) if (node.isConnected) node.textContent = say();
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

/* Apply sits next to the rank, so it is on screen on a laptop without
 * scrolling the table sideways (issue 27, item 5); text columns (layout,
 * why) are left-aligned head and cells alike (class "l"). */
export const SEARCH_COLS = [
    { key: 'rank', label: '#', get: (r, i) => i + 1 },
    { key: 'gpus', label: 'GPUs', get: (r) => (isNum(r.gpus) ? r.gpus : undefined) },
    { key: 'layout', label: 'Layout', get: (r) => layoutText(layoutOf(r)), left: true },
    resultCol('step_time', 'step_time'),
    resultCol('predicted_mfu', 'predicted_mfu'),
    resultCol('memory_total', 'total'),
    resultCol('headroom_bytes', 'headroom'),
    resultCol('cost_usd_per_step', 'cost', { positive: true }),
    { key: 'why', label: 'Why this rank', get: (r) => (typeof r.why === 'string' ? r.why : ''), left: true },
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

/* POST /v1/search, leaving out (and listing in dropped) the fields this
 * server's search does not take.  Returns { r } or { error, absent }. */
async function searchOnce(body, dropped) {
    for (let attempt = 0; attempt < 8; attempt++) {
        let r;
        try {
            r = await postJson('/v1/search', body);
        } catch {
            return { error: `${DASH} could not reach the API` };
        }
        if (r.status === 404) return { absent: true, error: 'This server has no layout search (POST /v1/search) yet.' };
        const f = r.data && typeof r.data.field === 'string' ? r.data.field.replace(/^\//, '').split('/')[0] : '';
        if (r.status === 400 && r.data && /unknown/i.test(`${r.data.type} ${r.data.title} ${r.data.detail}`) && f in body) {
            dropped.push(f);
            delete body[f];
            continue;
        }
        if (!r.ok || !r.data) {
            return { error: `${DASH} no answer: ${readable((r.data && (r.data.detail || r.data.title)) || 'HTTP ' + r.status)}` };
        }
        return { r };
    }
    return { error: `${DASH} the search kept refusing fields: ${dropped.join(', ')}` };
}

/* How many doublings of the GPU count the search tries when no layout of
 * the user's count fits (16 -> 4096 at most). */
const SEARCH_DOUBLINGS = 8;

export async function runSearch() {
    const panel = $('#search-panel');
    const status = $('#search-status');
    panel.hidden = false;
    delete panel.dataset.status;
    status.textContent = 'Searching…';
    const req = requestFor(page.state);
    const body = { ...req.body };
    for (const k of LAYOUT_KEYS) delete body[k];
    if ($('#search-objective').value === 'cost') body.objective = 'cost';
    /* the headroom the user calls tight: the API's search takes it as
     * "margin" where it can; else the page drops what is under it */
    body.margin = req.margin;
    const dropped = [];
    let s = await searchOnce(body, dropped);
    if (s.error) {
        status.textContent = s.error;
        panel.dataset.status = s.absent ? 'absent' : 'error';
        return;
    }
    const asked = isNum(pick(s.r.data, 'inputs.gpus')) ? s.r.data.inputs.gpus : body.gpus;
    let note = '';
    /* no layout of this many GPUs fits: the smallest count, doubling, that does */
    if (!underMargin(s.r.data, req.margin, dropped).kept.length && isNum(asked) && asked > 0) {
        const first = s.r.data;
        const firstTried = pick(first, 'counts.tried');
        let g = asked;
        for (let i = 0; i < SEARCH_DOUBLINGS; i++) {
            g *= 2;
            status.textContent = `No layout of ${asked} GPUs fits; trying ${g}…`;
            const b = { ...body, gpus: g };
            delete b.dp;
            const t = await searchOnce(b, dropped);
            if (t.error) break;
            if (underMargin(t.r.data, req.margin, dropped).kept.length) {
                s = t;
                note = `No layout of ${asked} GPUs fits${isNum(firstTried) ? ` (${fmtExact(firstTried)} tried)` : ''}; ` +
                    `the smallest count that does, doubling from ${asked}: ${g} GPUs. `;
                break;
            }
        }
        if (!note) {
            page.search = [];
            renderSearch();
            status.textContent = `No layout of ${asked} GPUs fits, nor of ${g} (doubling ${SEARCH_DOUBLINGS} times): ` +
                `${readable(first.reason || 'every layout runs out of memory')}.`;
            panel.dataset.status = 'ready';
            return;
        }
    }
    const d = s.r.data;
    const { kept, hidden } = underMargin(d, req.margin, dropped);
    page.search = kept;
    page.searchSort = { key: null, dir: 1 };
    const tried = d.tried ?? pick(d, 'counts.tried') ?? d.layouts_tried;
    const fitting = d.fitting ?? pick(d, 'counts.fitting') ?? d.layouts_fitting;
    const shownDrops = dropped.filter((f) => f !== 'margin');
    status.textContent = note + `${kept.length} layouts, ${body.objective === 'cost' ? 'cheapest' : 'fastest'} first` +
        (isNum(tried) ? ` (${fmtExact(tried)} tried${isNum(fitting) ? `, ${fmtExact(fitting)} fit` : ''})` : '') +
        (hidden ? `; ${hidden} more left out here: under your ${fmtPct(req.margin)} headroom margin` : '') +
        (shownDrops.length ? `; not sent: ${[...new Set(shownDrops)].join(', ')}` : '') + '.';
    panel.dataset.status = 'ready';
    renderSearch();
}

/* The results that keep the margin of headroom.  Only when the server's
 * search did not take "margin" (it was dropped): then the page filters
 * by the same rule as the verdict's "tight" (headroom < margin x HBM). */
function underMargin(data, margin, dropped) {
    const all = Array.isArray(data.results) ? data.results : [];
    const hbmGb = pick(data, 'inputs.hbm_gb');
    if (!dropped.includes('margin') || !isNum(hbmGb) || !(margin > 0)) return { kept: all, hidden: 0 };
    const kept = all.filter((r) => !isNum(r.headroom_bytes) || r.headroom_bytes >= margin * hbmGb * 1e9);
    return { kept, hidden: all.length - kept.length };
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
        tr.appendChild(h('th', { scope: 'col', 'aria-sort': sorted, class: c.left ? `${c.key} l` : c.key }, b));
        if (c.key === 'rank') tr.appendChild(h('th', { scope: 'col', class: 'apply-col', text: 'Apply' }));
    }
    head.appendChild(tr);
    const body = $('#search-table tbody');
    clearNode(body);
    for (const { r, i } of rows) {
        const row = h('tr', { 'data-rank': i + 1 });
        for (const c of SEARCH_COLS) {
            const v = c.show ? c.show(r, i) : c.get(r, i);
            row.appendChild(h(c.key === 'rank' ? 'th' : 'td', {
                scope: c.key === 'rank' ? 'row' : null, class: c.left ? `${c.key} l` : c.key,
                text: v === undefined || v === null ? DASH : String(v),
            }));
            if (c.key === 'rank') row.appendChild(h('td', { class: 'apply-col' }, useButton(r, i)));
        }
        body.appendChild(row);
    }
}

function useButton(r, i) {
    const use = h('button', { type: 'button', class: 'apply', text: 'Use', 'aria-label': `Use this layout, rank ${i + 1}` });
    use.addEventListener('click', () => {
        const lay = layoutOf(r);
        const apply = {};
        for (const k of LAYOUT_KEYS) apply[k] = lay[k] === undefined ? '' : String(lay[k]);
        if (isNum(r.gpus)) apply.gpus = String(r.gpus);
        if (apply.dp && apply.gpus) apply.dp = '';
        /* The search sets tp_comm_overlap per layout (tp > 1): take the
         * result's, or a tp 1 layout would keep the form's and be refused. */
        if (r.request && typeof r.request.tp_comm_overlap === 'boolean')
            apply.tp_comm_overlap = String(r.request.tp_comm_overlap);
        applyFields(apply);
    });
    return use;
}
