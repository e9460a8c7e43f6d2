/*
 * app.js - the dashboard: form <-> URL state <-> POST /v1/plan <-> panels.
 *
 * All estimation is the API's; this file only builds request bodies from
 * what the user set, and lays out the answer.  One in-flight plan request
 * at a time: a newer input aborts the older fetch.
 */
import { FIELDS, FIELD_BY_NAME, GROUPS, DEFAULT_STATE, buildBody, stateFromQuery, queryFromState } from './fields.js';
import {
    DASH, isNum, pick, termText, fmtBytes, fmtGB, fmtCount, fmtFlops, fmtFlopRate, fmtPct,
    fmtDuration, fmtDays, fmtHours, fmtRate, fmtBandwidth, tick,
} from './format.js';
import { TERMS, drawMemoryBar, drawSweep } from './charts.js';

const DEBOUNCE_MS = 250;

const $ = (sel) => document.querySelector(sel);

/* Per-page state: the user's field texts, and the request plumbing. */
const page = {
    state: {},
    presets: [],
    gpus: [],
    timer: 0,
    planCtl: null,
    fitCtl: null,
    lastPlan: null,
    resizeTimer: 0,
};

/* ------------------------------------------------------------------ */
/* small DOM helpers                                                    */
/* ------------------------------------------------------------------ */

function h(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'text') node.textContent = v;
        else node.setAttribute(k, v === true ? '' : String(v));
    }
    for (const kid of kids) {
        if (kid === undefined || kid === null) continue;
        node.appendChild(typeof kid === 'string' ? document.createTextNode(kid) : kid);
    }
    return node;
}

function clearNode(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
}

/* ------------------------------------------------------------------ */
/* the form                                                             */
/* ------------------------------------------------------------------ */

function optionsFor(f) {
    const opts = [h('option', { value: '', text: 'default' })];
    switch (f.kind) {
    case 'model':
        opts[0].textContent = 'custom (shape or parameter count below)';
        for (const p of page.presets) {
            opts.push(h('option', { value: p.id, text: `${p.name} (${fmtCount(p.params)} params)` }));
        }
        break;
    case 'gpu':
        for (const g of page.gpus) {
            opts.push(h('option', { value: g.id, text: `${g.name} — ${fmtGB(g.hbm_bytes)}` }));
        }
        break;
    case 'zero':
        ['0 — none', '1 — optimizer', '2 — + gradients', '3 — + weights (FSDP)'].forEach((t, i) => {
            opts.push(h('option', { value: String(i), text: t }));
        });
        break;
    case 'bool':
        opts.push(h('option', { value: 'true', text: 'yes' }), h('option', { value: 'false', text: 'no' }));
        break;
    default:
        for (const o of f.options) opts.push(h('option', { value: o, text: o }));
    }
    return opts;
}

function fieldRow(f) {
    const id = `f-${f.name}`;
    const described = [f.hint ? `hint-${f.name}` : null, `err-${f.name}`].filter(Boolean).join(' ');
    let control;
    if (f.kind === 'int' || f.kind === 'num') {
        control = h('input', {
            id, name: f.name, type: 'text', inputmode: f.kind === 'int' ? 'numeric' : 'decimal',
            autocomplete: 'off', spellcheck: 'false', 'aria-describedby': described,
        });
    } else {
        control = h('select', { id, name: f.name, 'aria-describedby': described }, ...optionsFor(f));
    }
    return h('div', { class: 'field', 'data-field': f.name },
        h('label', { for: id, text: f.label }),
        control,
        f.hint ? h('p', { id: `hint-${f.name}`, class: 'hint', text: f.hint }) : null,
        h('p', { id: `err-${f.name}`, class: 'field-error', hidden: true }));
}

function buildForm() {
    const root = $('#groups');
    clearNode(root);
    for (const g of GROUPS) {
        const main = FIELDS.filter((f) => f.group === g.id && !f.advanced);
        const adv = FIELDS.filter((f) => f.group === g.id && f.advanced);
        const fs = h('fieldset', { id: `g-${g.id}` }, h('legend', { text: g.legend }));
        if (main.length) fs.appendChild(h('div', { class: 'fields' }, ...main.map(fieldRow)));
        if (g.id === 'model') fs.appendChild(h('p', { id: 'preset-info', class: 'muted preset-info' }));
        if (adv.length) {
            fs.appendChild(h('details', { class: 'adv' },
                h('summary', { text: g.id === 'model' ? 'Custom shape and overrides' : 'More options' }),
                h('div', { class: 'fields' }, ...adv.map(fieldRow))));
        }
        root.appendChild(fs);
    }
}

/* Put page.state into the controls.  A select whose value is not among
 * its options (an unknown preset in a shared URL) gets that option, so the
 * API's "unknown preset" error is what the user sees. */
function writeForm() {
    for (const f of FIELDS) {
        const c = document.getElementById(`f-${f.name}`);
        const v = page.state[f.name] ?? '';
        if (c.tagName === 'SELECT' && ![...c.options].some((o) => o.value === v)) {
            c.appendChild(h('option', { value: v, text: v }));
        }
        c.value = v;
    }
    /* open an "advanced" block that holds a set field, so it is visible */
    for (const d of document.querySelectorAll('details.adv')) {
        if ([...d.querySelectorAll('input,select')].some((c) => c.value !== '')) d.open = true;
    }
}

function readForm() {
    const state = {};
    for (const f of FIELDS) {
        const v = document.getElementById(`f-${f.name}`).value;
        if (v.trim() !== '' || f.name === 'model') state[f.name] = v.trim();
    }
    return state;
}

/* Show what the API resolved for each field the user left empty. */
function showResolved(inputs) {
    for (const f of FIELDS) {
        const c = document.getElementById(`f-${f.name}`);
        const v = inputs ? inputs[f.name] : undefined;
        let text = '';
        /* big counts as 1.5e13 so the hint is also valid input */
        if (typeof v === 'number' && isNum(v)) text = Math.abs(v) >= 1e7 ? v.toExponential().replace('e+', 'e') : String(Number(v.toPrecision(6)));
        else if (typeof v === 'boolean') text = v ? 'yes' : 'no';
        else if (typeof v === 'string') text = v;
        if (c.tagName === 'SELECT') {
            const first = c.options[0];
            if (f.kind === 'model') continue;
            first.textContent = text ? `default (${text})` : 'default';
        } else {
            c.placeholder = text;
        }
    }
}

function showPresetInfo() {
    const info = $('#preset-info');
    const p = page.presets.find((x) => x.id === page.state.model);
    if (!p) {
        info.textContent = page.state.model ? '' : 'Custom model: give layers, hidden, heads, vocab … or a parameter count.';
        return;
    }
    const tokens = isNum(p.train_tokens) && p.train_tokens > 0 ? `${fmtCount(p.train_tokens)} tokens` : 'tokens unpublished';
    info.textContent = `${p.name}: ${fmtCount(p.params)} parameters` +
        (isNum(p.active_params) && p.active_params !== p.params ? ` (${fmtCount(p.active_params)} active)` : '') +
        `, seq ${isNum(p.seq) ? p.seq : DASH}, ${tokens}. Source: ${p.source || DASH}`;
}

/* ------------------------------------------------------------------ */
/* errors                                                               */
/* ------------------------------------------------------------------ */

function clearErrors() {
    for (const c of document.querySelectorAll('[aria-invalid="true"]')) c.removeAttribute('aria-invalid');
    for (const e of document.querySelectorAll('.field-error')) {
        e.hidden = true;
        e.textContent = '';
    }
    const s = $('#summary');
    s.hidden = true;
    clearNode(s);
}

/* problem+json -> the message next to the named field plus a summary. */
function showProblem(problem, httpStatus) {
    const pointer = typeof problem.field === 'string' ? problem.field : '';
    const name = pointer.replace(/^\//, '').split('/')[0];
    const detail = problem.detail || problem.title || `HTTP ${httpStatus}`;
    const s = $('#summary');
    clearNode(s);
    s.appendChild(h('h2', { text: 'The API could not estimate this run' }));
    const f = FIELD_BY_NAME.get(name);
    if (f) {
        const c = document.getElementById(`f-${name}`);
        const msg = document.getElementById(`err-${name}`);
        c.setAttribute('aria-invalid', 'true');
        msg.textContent = detail;
        msg.hidden = false;
        const adv = c.closest('details');
        if (adv) adv.open = true;
        s.appendChild(h('p', {}, h('a', { href: `#f-${name}`, text: f.label }), `: ${detail}`));
    } else {
        s.appendChild(h('p', { text: (name ? `${name}: ` : '') + detail }));
    }
    s.hidden = false;
}

function showFailure(text) {
    const s = $('#summary');
    clearNode(s);
    s.appendChild(h('h2', { text: 'No estimate' }));
    s.appendChild(h('p', { text }));
    s.hidden = false;
}

/* ------------------------------------------------------------------ */
/* rendering                                                            */
/* ------------------------------------------------------------------ */

/* One figure: label, value, and its formula both on hover (title) and in
 * a <details> that keyboard and touch users can open. */
function figure(id, label, text, formula, assumptions, extraClass) {
    const how = formula || assumptions;
    const tip = [formula, assumptions].filter(Boolean).join(' — ');
    const dd = h('dd', {},
        h('span', { class: 'v' + (extraClass ? ' ' + extraClass : ''), id, title: tip || null, text: text || DASH }));
    if (text === DASH || !text) dd.appendChild(h('span', { class: 'why muted', text: ' not in the answer' }));
    if (how) {
        dd.appendChild(h('details', { class: 'how' },
            h('summary', { text: 'how' }),
            formula ? h('code', { text: formula }) : null,
            assumptions ? h('p', { text: assumptions }) : null));
    }
    return [h('dt', { text: label }), dd];
}

function termFigure(id, label, term, fallback) {
    return figure(id, label, termText(term, fallback), term && term.formula, term && term.assumptions);
}

function fill(dl, rows) {
    clearNode(dl);
    for (const r of rows) for (const n of r) dl.appendChild(n);
}

function renderMemory(m) {
    const terms = {};
    for (const t of TERMS) terms[t.key] = pick(m, `${t.key}.value`);
    drawMemoryBar($('#mem-bar'), terms, m.hbm_bytes);
    const rows = TERMS.map((t) => {
        const r = termFigure(`mem-${t.key}`, t.label, m[t.key], fmtBytes);
        r[0].prepend(h('span', { class: `swatch sw-${t.key}`, 'aria-hidden': 'true' }));
        return r;
    });
    rows.push(termFigure('mem-total', 'Total per GPU', m.total, fmtBytes));
    rows.push(figure('mem-hbm', 'GPU HBM', isNum(m.hbm_bytes) ? `${fmtGB(m.hbm_bytes)} (${fmtBytes(m.hbm_bytes)})` : DASH,
        'catalogue HBM, or hbm_gb', 'decimal GB as sold: 80 GB = 80e9 bytes = 74.5 GiB'));
    rows.push(figure('mem-headroom', 'Headroom', fmtBytes(m.headroom_bytes), 'HBM - total per GPU', 'negative: short by that much'));
    const bpp = m.bytes_per_param || {};
    rows.push(figure('mem-bpp', 'Bytes per parameter (unsharded)',
        isNum(bpp.total) ? `${tick(bpp.total)} = ${tick(bpp.weights)} + ${tick(bpp.grads)} + ${tick(bpp.master)} + ${tick(bpp.optimizer)}` : DASH,
        'weights + grads + master + optimizer', 'mixed-precision AdamW is 2 + 2 + 4 + 8 = 16'));
    rows.push(figure('mem-state', 'Model state, whole model', fmtBytes(m.model_state_bytes), 'P × bytes per parameter',
        'all replicas counted once; compare with the HBM of all GPUs'));
    rows.push(figure('mem-params-gpu', 'Parameters per GPU (before ZeRO)', fmtCount(m.params_per_gpu), 'P_dense/(tp·pp) + P_expert/(tp·pp·ep)',
        'layers split evenly across pipeline stages'));
    rows.push(termFigure('mem-seed000', 'Activations, simple form (seed 000)', m.activations_seed000, fmtBytes));
    // The core reports 0 when DeepSpeed has no estimator for the stage
    // (ZeRO 0/1): say so rather than show "0 B" as if it were a figure.
    const ds = m.deepspeed_gpu;
    rows.push(ds && ds.value === 0
        ? figure('mem-deepspeed', 'DeepSpeed cross-check', `${DASH} (ZeRO 2 and 3 only)`, ds.formula, ds.assumptions)
        : termFigure('mem-deepspeed', 'DeepSpeed cross-check', ds, fmtBytes));
    if (isNum(m.host_bytes_per_node) && m.host_bytes_per_node > 0) {
        rows.push(figure('mem-host', 'Host RAM per node (offload)', fmtBytes(m.host_bytes_per_node), 'offloaded bytes per GPU × GPUs per node', 'ZeRO-Offload / ZeRO-Infinity keep them in host RAM'));
    }
    fill($('#mem-figs'), rows);
}

function renderVerdict(m) {
    const v = $('#verdict');
    const d = $('#verdict-detail');
    if (typeof m.fits !== 'boolean') {
        v.textContent = `${DASH} the answer has no fit verdict`;
        v.className = 'verdict';
        d.textContent = '';
        return;
    }
    v.className = 'verdict ' + (m.fits ? 'fits' : 'nofit');
    v.textContent = m.fits ? '✓ FITS' : '✗ DOES NOT FIT';
    const total = termText(m.total, fmtBytes);
    const hbm = fmtBytes(m.hbm_bytes);
    d.textContent = m.fits
        ? `${total} of ${hbm} per GPU; ${fmtBytes(m.headroom_bytes)} headroom.`
        : `${total} per GPU needs more than ${hbm}; short by ${fmtBytes(isNum(m.headroom_bytes) ? -m.headroom_bytes : NaN)}.`;
}

function renderCompute(c) {
    const rows = [
        termFigure('cmp-flops', 'Model FLOPs', c.model_flops, fmtFlops),
        termFigure('cmp-flops-attn', 'Model FLOPs, attention-aware', c.model_flops_attn, fmtFlops),
        termFigure('cmp-hw-flops', 'Hardware FLOPs (with recompute)', c.hardware_flops, fmtFlops),
        termFigure('cmp-gpu-hours', 'GPU-hours', c.gpu_hours, fmtHours),
        figure('cmp-days', 'Wall-clock', fmtDays(c.wall_days), pick(c, 'wall_seconds.formula'), pick(c, 'wall_seconds.assumptions')),
        figure('cmp-tps', 'Tokens per second (job)', fmtRate(c.tokens_per_second, 'tokens/s'), 'tokens / wall seconds', 'steady state at the given MFU'),
        figure('cmp-tpgs', 'Tokens per GPU-second', fmtRate(c.tokens_per_gpu_second, 'tokens/s'), 'tokens per second / GPUs', ''),
        figure('cmp-mfu', 'MFU / HFU', isNum(c.mfu) && isNum(c.hfu) ? `${fmtPct(c.mfu)} / ${fmtPct(c.hfu)}` : DASH,
            'HFU = MFU × hardware FLOPs / model FLOPs', 'HFU counts recomputed forward passes'),
        figure('cmp-peak', 'Peak per GPU', fmtFlopRate(c.peak_flops), 'dense peak at the compute precision, or peak_tflops',
            'dense, not the 2:4-sparse figure some catalogues list'),
        figure('cmp-tokens', 'Training tokens', fmtCount(c.tokens), 'tokens, else the preset\'s published count, else 20 × P',
            'Chinchilla-optimal 20 tokens per parameter when nothing is known'),
        figure('cmp-steps', 'Steps / step time', isNum(c.steps) ? `${fmtCount(c.steps)} / ${fmtDuration(c.step_seconds)}` : DASH,
            'steps = tokens / (global batch × seq); step time = wall seconds / steps', ''),
    ];
    fill($('#compute-figs'), rows);
}

function renderCheckpoint(k) {
    const rows = [
        termFigure('ck-full', 'Full (resumable) checkpoint', k.full_bytes, fmtBytes),
        termFigure('ck-weights', 'Weights only', k.weights_bytes, fmtBytes),
        termFigure('ck-shard', 'Largest per-GPU shard', k.shard_bytes_per_gpu, fmtBytes),
        figure('ck-writers', 'Writers', isNum(k.writers) ? String(k.writers) : DASH, 'GPUs that write a shard',
            'parallel_save: every rank writes 1/dp of the replicated state; otherwise DP rank 0 of each model-parallel group'),
        figure('ck-mtbf', 'Job MTBF', fmtDuration(k.job_mtbf_s), 'job_mtbf_hours, or per-GPU MTBF / GPUs',
            'independent failures; any one GPU stops the job'),
        figure('ck-blocking', 'Blocking write C (first tier)', fmtDuration(k.blocking_write_s), 'C = NVMe tier write time', 'later tiers drain from NVMe asynchronously'),
        termFigure('ck-young', 'Young interval', k.young_interval_s, fmtDuration),
        termFigure('ck-daly', 'Daly interval', k.daly_interval_s, fmtDuration),
        figure('ck-waste', 'Time lost at the Daly interval', fmtPct(pick(k, 'waste_fraction.value')),
            pick(k, 'waste_fraction.formula'), pick(k, 'waste_fraction.assumptions')),
        figure('ck-waste-sched', 'Time lost at the NVMe schedule', fmtPct(k.waste_fraction_schedule),
            pick(k, 'waste_fraction.formula'), 'tau = the configured NVMe interval'),
    ];
    fill($('#ckpt-figs'), rows);

    const body = $('#tiers tbody');
    clearNode(body);
    const tiers = Array.isArray(k.tiers) ? k.tiers : [];
    if (tiers.length === 0) {
        body.appendChild(h('tr', {}, h('td', { colspan: 8, text: `${DASH} the answer has no tiers` })));
        return;
    }
    for (const t of tiers) {
        body.appendChild(h('tr', { title: t.formula || null, 'data-tier': t.name },
            h('th', { scope: 'row', text: t.name || DASH }),
            h('td', { text: fmtDuration(t.interval_s) }),
            h('td', { text: fmtDuration(t.write_s) }),
            h('td', { text: fmtDuration(t.restore_s) }),
            h('td', { text: fmtBandwidth(t.bandwidth_per_writer) }),
            h('td', { text: isNum(t.keep) ? String(t.keep) : DASH }),
            h('td', { text: fmtBytes(t.storage_bytes) + (t.name === 'nvme' ? ' per node' : '') }),
            h('td', { text: fmtPct(t.overhead_fraction) })));
    }
    const formulas = tiers.map((t) => t.formula).filter(Boolean);
    if (formulas.length) {
        body.appendChild(h('tr', {}, h('td', { colspan: 8 },
            h('details', { class: 'how' }, h('summary', { text: 'how the tiers are computed' }),
                ...[...new Set(formulas)].map((f) => h('code', { text: f }))))));
    }
}

/* Charts are laid out in pixels; redraw them when the width changes. */
function redrawCharts() {
    const plan = page.lastPlan;
    if (!plan) return;
    const terms = {};
    for (const t of TERMS) terms[t.key] = pick(plan, `memory.${t.key}.value`);
    drawMemoryBar($('#mem-bar'), terms, pick(plan, 'memory.hbm_bytes'));
    renderSweep(plan);
}

function renderSweep(plan) {
    const cap = drawSweep($('#sweep'), plan.sweep, pick(plan, 'memory.hbm_bytes'), pick(plan, 'inputs.dp'));
    $('#sweep-cap').textContent = cap;
}

function renderLegend() {
    for (const ul of document.querySelectorAll('ul.legend')) {
        clearNode(ul);
        for (const t of TERMS) {
            ul.appendChild(h('li', {}, h('span', { class: `swatch sw-${t.key}`, 'aria-hidden': 'true' }), t.label));
        }
        ul.appendChild(h('li', {}, h('span', { class: 'swatch hbm', 'aria-hidden': 'true' }), 'GPU HBM'));
    }
}

/* No answer: every panel says so, with the reason, instead of going blank
 * or keeping numbers that belong to other inputs. */
function renderEmpty(reason) {
    page.lastPlan = null;
    const why = `${DASH} ${reason}`;
    $('#verdict').textContent = why;
    $('#verdict').className = 'verdict';
    $('#verdict-detail').textContent = '';
    for (const id of ['#mem-figs', '#compute-figs', '#ckpt-figs']) {
        fill($(id), [[h('dt', { text: 'No estimate' }), h('dd', { text: why })]]);
    }
    const body = $('#tiers tbody');
    clearNode(body);
    body.appendChild(h('tr', {}, h('td', { colspan: 8, text: why })));
    drawMemoryBar($('#mem-bar'), {}, NaN);
    drawSweep($('#sweep'), [], NaN, 0);
    $('#sweep-cap').textContent = why;
}

function renderPlan(plan) {
    page.lastPlan = plan;
    const m = plan.memory || {};
    renderVerdict(m);
    renderMemory(m);
    renderCompute(plan.compute || {});
    renderCheckpoint(plan.checkpoint || {});
    renderSweep(plan);
    showResolved(plan.inputs);
}

function renderCurl(body) {
    const json = JSON.stringify(body);
    $('#curl').textContent = `curl -s -X POST ${location.origin}/v1/plan \\\n  -H 'Content-Type: application/json' \\\n  -d '${json}'`;
}

/* ------------------------------------------------------------------ */
/* requests                                                             */
/* ------------------------------------------------------------------ */

async function postJson(path, body, signal) {
    const res = await fetch(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, application/problem+json' },
        body: JSON.stringify(body),
        signal,
    });
    let data = null;
    try {
        data = await res.json();
    } catch {
        data = null;
    }
    return { ok: res.ok, status: res.status, data };
}

async function runPlan() {
    if (page.planCtl) page.planCtl.abort();
    const ctl = new AbortController();
    page.planCtl = ctl;
    const body = buildBody(page.state);
    const results = $('#results');
    results.dataset.status = 'loading';
    results.setAttribute('aria-busy', 'true');
    renderCurl(body);
    try {
        const r = await postJson('/v1/plan', body, ctl.signal);
        if (ctl.signal.aborted) return;
        clearErrors();
        if (r.ok && r.data && r.data.memory) {
            renderPlan(r.data);
            results.dataset.status = 'ready';
        } else if (r.data && (r.data.detail || r.data.title)) {
            showProblem(r.data, r.status);
            renderEmpty(`no estimate: ${r.data.detail || r.data.title}`);
            results.dataset.status = 'error';
        } else {
            showFailure(`The API answered HTTP ${r.status} without a usable body.`);
            renderEmpty(`no estimate: HTTP ${r.status}`);
            results.dataset.status = 'error';
        }
    } catch (e) {
        if (e && e.name === 'AbortError') return;
        clearErrors();
        showFailure(`Could not reach the API: ${e && e.message ? e.message : e}`);
        renderEmpty('no estimate: the API is unreachable');
        results.dataset.status = 'error';
    } finally {
        if (page.planCtl === ctl) {
            page.planCtl = null;
            results.dataset.request = JSON.stringify(body);
            results.removeAttribute('aria-busy');
        }
    }
}

/* "Max micro-batch" / "Min GPUs": the same run, solved for one variable
 * (that variable and what it derives from are left out of the body). */
async function runFit(solve) {
    if (page.fitCtl) page.fitCtl.abort();
    const ctl = new AbortController();
    page.fitCtl = ctl;
    const out = $('#fit-readout');
    out.dataset.status = 'loading';
    out.textContent = 'Solving…';
    const body = buildBody(page.state);
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
            if (d.detail || d.title) showProblem(d, r.status);
            out.textContent = `${DASH} no answer: ${d.detail || d.title || 'HTTP ' + r.status}`;
            out.dataset.status = 'error';
            return;
        }
        const d = r.data;
        if (d.found !== true) {
            out.textContent = `Nothing fits: ${d.reason || 'no configuration within the limits fits'}`;
            out.dataset.status = 'nofit';
            return;
        }
        const total = termText(pick(d, 'memory.total'), fmtBytes);
        let text, apply;
        if (solve === 'micro_batch') {
            text = `Largest micro-batch that fits: ${isNum(d.micro_batch) ? d.micro_batch : DASH} (${total} per GPU).`;
            apply = isNum(d.micro_batch) ? { micro_batch: String(d.micro_batch) } : null;
        } else {
            text = `Fewest GPUs that fit: ${isNum(d.gpus) ? d.gpus : DASH} (dp ${isNum(d.dp) ? d.dp : DASH}, ${total} per GPU).`;
            apply = isNum(d.gpus) ? { gpus: String(d.gpus), dp: '' } : null;
        }
        out.appendChild(h('span', { id: 'fit-text', text }));
        if (apply) {
            const b = h('button', { type: 'button', class: 'apply', text: 'Use it' });
            b.addEventListener('click', () => {
                Object.assign(page.state, apply);
                for (const [k, v] of Object.entries(apply)) if (v === '') delete page.state[k];
                writeForm();
                changed(true);
            });
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

/* ------------------------------------------------------------------ */
/* state flow                                                           */
/* ------------------------------------------------------------------ */

function changed(now) {
    page.state = readForm();
    history.replaceState(null, '', `${location.pathname}?${queryFromState(page.state)}`);
    showPresetInfo();
    /* a solver answer belongs to the inputs it was asked about */
    if (page.fitCtl) page.fitCtl.abort();
    $('#fit-readout').textContent = '';
    delete $('#fit-readout').dataset.status;
    clearTimeout(page.timer);
    if (now) runPlan();
    else page.timer = setTimeout(runPlan, DEBOUNCE_MS);
}

async function loadCatalogues() {
    const get = async (path) => {
        const r = await fetch(path, { headers: { Accept: 'application/json' } });
        if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
        return r.json();
    };
    const [p, g] = await Promise.all([get('/v1/presets'), get('/v1/gpus')]);
    page.presets = Array.isArray(p.presets) ? p.presets : [];
    page.gpus = Array.isArray(g.gpus) ? g.gpus : [];
}

async function main() {
    renderLegend();
    try {
        await loadCatalogues();
    } catch (e) {
        /* the form still works with typed-in ids; say what is missing */
        showFailure(`Could not load the preset and GPU lists (${e.message}); type a custom model.`);
    }
    buildForm();
    page.state = stateFromQuery(location.search);
    writeForm();
    showPresetInfo();

    const form = $('#run');
    form.addEventListener('input', () => changed(false));
    /* text inputs already reported through "input"; selects apply at once */
    form.addEventListener('change', (ev) => {
        if (ev.target.tagName === 'SELECT') changed(true);
    });
    form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        changed(true);
    });
    $('#reset').addEventListener('click', () => {
        page.state = { ...DEFAULT_STATE };
        writeForm();
        changed(true);
    });
    $('#copy-link').addEventListener('click', async () => {
        const status = $('#copy-status');
        try {
            await navigator.clipboard.writeText(location.href);
            status.textContent = 'Link copied.';
        } catch {
            status.textContent = `Link: ${location.href}`;
        }
    });
    $('#fit-mb').addEventListener('click', () => runFit('micro_batch'));
    $('#fit-gpus').addEventListener('click', () => runFit('gpus'));

    let lastWidth = window.innerWidth;
    window.addEventListener('resize', () => {
        if (window.innerWidth === lastWidth) return;
        lastWidth = window.innerWidth;
        clearTimeout(page.resizeTimer);
        page.resizeTimer = setTimeout(redrawCharts, 150);
    });

    history.replaceState(null, '', `${location.pathname}?${queryFromState(page.state)}`);
    runPlan();
}

main();
