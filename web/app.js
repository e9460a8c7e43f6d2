/*
 * app.js - the dashboard: form <-> URL state <-> POST /v1/plan <-> panels.
 *
 * All estimation is the API's; this file only builds request bodies from
 * what the user set, and lays out the answer: every figure is the API's
 * text for it, labelled and explained by the output-terms table
 * (terms.js, generated from api/ts_terms.c; format.js textOf).  One in-flight plan request
 * at a time: a newer input aborts the older fetch.  While a field does not
 * parse, or the API rejects the inputs, the last good answer stays on
 * screen marked as stale and the error sits at the field.
 */
import {
    FIELDS, FIELD_BY_NAME, GROUPS, DEFAULT_STATE, SHAPE_FIELDS, MODES, FT_DEFAULTS,
    buildRequest, stateFromQuery, queryFromState, modeOf,
} from './form.js';
import {
    DASH, isNum, pick, fmtCount, fmtPct, fmtExact, readable, shellQuote, csvField,
    textOf, valueOf, formulaOf, assumptionsOf, labelOf, termRow,
} from './format.js';
import { TERMS, drawMemoryBar, drawSweep, drawStepBar } from './charts.js';

const DEBOUNCE_MS = 200;
/* v2: catalogue entries carry their "human" texts (older copies do not) */
const CATALOGUE_KEY = 'trainsize.catalogues.v2';
/* Checkpointing that loses more than this share of time gets a warning. */
const CKPT_WASTE_WARN = 0.10;
/* Where the objects of an answer sit (the terms table's object paths). */
const STAGE = 'memory.stages[]', PHASE = 'memory.phases[]', TIER = 'checkpoint.tiers[]', STEP = 'compute.step';
/* The columns of the stage and tier tables: members of those objects. */
const STAGE_COLS = ['weights', 'grads', 'master', 'optimizer', 'activations', 'buffers', 'total', 'headroom'];
const TIER_COLS = ['interval_s', 'write_s', 'restore_s', 'bandwidth_per_writer', 'keep', 'storage_bytes', 'overhead_fraction'];

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
    lastBody: null,
    customFrom: null,
    pins: [],
    search: null,
    searchSort: { key: null, dir: 1 },
    formReady: false,
    resizeTimer: 0,
    t0: performance.now(),
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

/* Member key of obj (an object at path of the answer): the terms table's
 * label, the answer's text, the formula (the answer's for a term, the
 * table's for a number) and what it assumes.  opts: label, text (a
 * composite of the answer's texts), cls. */
function fig(id, obj, path, key, opts = {}) {
    return figure(id, opts.label || labelOf(path, key), opts.text || textOf(obj, path, key),
        formulaOf(obj, path, key), assumptionsOf(obj, path, key), opts.cls);
}

function fill(dl, rows) {
    clearNode(dl);
    for (const r of rows) for (const n of r) dl.appendChild(n);
}


/* ------------------------------------------------------------------ */
/* the form                                                             */
/* ------------------------------------------------------------------ */

function presetById(id) {
    return page.presets.find((p) => p.id === id);
}

function optionsFor(f) {
    const opts = [h('option', { value: '', text: 'default' })];
    switch (f.kind) {
    case 'model':
        opts[0].textContent = 'custom shape (fields below)';
        for (const p of page.presets) {
            opts.push(h('option', { value: p.id, text: `${p.name} (${textOf(p, 'presets[]', 'params')} params)` }));
        }
        break;
    case 'gpu':
        for (const g of page.gpus) {
            opts.push(h('option', { value: g.id, text: `${g.name} — ${textOf(g, 'gpus[]', 'hbm_bytes')}` }));
        }
        break;
    case 'mode':
        opts.length = 0;
        for (const m of MODES) opts.push(h('option', { value: m.id, text: m.label }));
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
            id, name: f.name, type: 'text', inputmode: 'text',
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
        if (g.id === 'model') {
            fs.appendChild(h('p', { id: 'model-params', class: 'model-params', 'aria-live': 'polite' }));
            fs.appendChild(h('div', { id: 'custom-note', class: 'custom-note', hidden: true }));
            fs.appendChild(h('p', { id: 'preset-info', class: 'muted preset-info' }));
        }
        if (g.id === 'mode') fs.appendChild(h('p', { id: 'ft-tokens', class: 'muted preset-info' }));
        if (adv.length) {
            fs.appendChild(h('details', { class: 'adv' },
                h('summary', { text: g.id === 'model' ? 'Custom shape and overrides' : 'More options' }),
                h('div', { class: 'fields' }, ...adv.map(fieldRow))));
        }
        root.appendChild(fs);
    }
    page.formReady = true;
}

/* Put page.state into the controls.  A select whose value is not among
 * its options (an unknown preset in a shared URL) gets that option, so the
 * API's "unknown preset" error is what the user sees. */
function writeForm() {
    if (!page.formReady) return;
    for (const f of FIELDS) {
        const c = document.getElementById(`f-${f.name}`);
        let v = page.state[f.name] ?? '';
        if (f.kind === 'mode' && v === '') v = 'pretrain';
        if (c.tagName === 'SELECT' && ![...c.options].some((o) => o.value === v)) {
            c.appendChild(h('option', { value: v, text: v }));
        }
        c.value = v;
    }
    /* open an "advanced" block that holds a set field, so it is visible */
    for (const d of document.querySelectorAll('details.adv')) {
        if ([...d.querySelectorAll('input,select')].some((c) => c.value !== '')) d.open = true;
    }
    showModeFields();
}

function readForm() {
    const state = {};
    for (const f of FIELDS) {
        const v = document.getElementById(`f-${f.name}`).value;
        if (f.kind === 'mode' && v === 'pretrain') continue;
        if (v.trim() !== '' || f.name === 'model') state[f.name] = v.trim();
    }
    /* imported documents ride along in the state, not in a control */
    for (const k of IMPORT_KINDS) if (page.state[k] !== undefined) state[k] = page.state[k];
    return state;
}

/* Fine-tune fields only in fine-tune modes; the token budget only in pre-training. */
function showModeFields() {
    const mode = modeOf(page.state);
    for (const f of FIELDS) {
        const row = document.querySelector(`.field[data-field="${f.name}"]`);
        if (!row) continue;
        row.hidden = (f.finetune && mode === 'pretrain') || (f.lora && mode !== 'lora' && mode !== 'qlora') ||
            (f.pretrain && mode !== 'pretrain');
    }
    const ft = $('#ft-tokens');
    if (mode === 'pretrain') {
        ft.textContent = 'Pre-training: tokens are the run\'s budget (Training tokens below).';
    } else {
        const r = buildRequest(page.state);
        ft.textContent = isNum(r.body.tokens)
            ? `Fine-tuning on ${fmtCount(r.body.tokens)} tokens (dataset × epochs), not the pre-training budget.` +
              (mode === 'full' ? '' : ` Only the LoRA adapters train${mode === 'qlora' ? '; the frozen base is nf4 (4-bit)' : ''}.`)
            : 'Fine-tuning: fix dataset tokens or epochs.';
    }
}

/* Show what the API resolved for each field the user left empty. */
function showResolved(inputs) {
    if (!page.formReady) return;
    for (const f of FIELDS) {
        if (f.page) continue;
        const c = document.getElementById(`f-${f.name}`);
        const v = inputs ? inputs[f.name] : undefined;
        let text = '';
        /* big counts as 15T so the hint is also valid input */
        if (typeof v === 'number' && isNum(v)) text = Math.abs(v) >= 1e6 && f.kind === 'num' ? fmtCount(v).replace(/\.?0+([kMBTP])$/, '$1') : String(Number(v.toPrecision(6)));
        else if (typeof v === 'boolean') text = v ? 'yes' : 'no';
        else if (typeof v === 'string') text = v;
        /* 0 / null that mean "not given" read as what the API does instead */
        if (f.name === 'mfu' && (v === null || v === 0)) text = 'predicted';
        if (f.name === 'gpu_hour_usd' && (v === null || v === 0)) text = 'none';
        if (f.name === 'job_mtbf_hours' && v === 0) text = 'from per-GPU MTBF';
        if ((f.name === 'first_stage_layers' || f.name === 'last_stage_layers') && v === 0) text = 'even split';
        if (c.tagName === 'SELECT') {
            if (f.kind === 'model') continue;
            c.options[0].textContent = text ? `default (${text})` : 'default';
        } else {
            c.placeholder = text;
        }
    }
    for (const n of ['margin', 'dataset_tokens', 'epochs']) {
        const c = document.getElementById(`f-${n}`);
        if (c) c.placeholder = n === 'margin' ? '10%' : n === 'epochs' ? String(FT_DEFAULTS.epochs) : '100M';
    }
}

function showPresetInfo() {
    if (!page.formReady) return;
    const info = $('#preset-info');
    const note = $('#custom-note');
    const p = presetById(page.state.model);
    clearNode(note);
    note.hidden = true;
    if (!p) {
        const from = page.customFrom && presetById(page.customFrom);
        if (!page.state.model && from) {
            note.hidden = false;
            note.appendChild(h('span', { text: `Custom shape, copied from ${from.name}: its shape, sequence length and tokens are now ordinary fields you can edit. ` }));
            const back = h('button', { type: 'button', id: 'back-to-preset', text: `Back to ${from.name}` });
            back.addEventListener('click', () => backToPreset(from));
            note.appendChild(back);
        }
        info.textContent = page.state.model ? '' : (IMPORT_KINDS.some((k) => page.state[k]) ? 'Model from the imported config.'
            : 'Custom model: give layers, hidden, heads, vocab … (gated FFN defaults to yes) or a parameter count.');
        return;
    }
    const tokens = isNum(p.train_tokens) && p.train_tokens > 0 ? `${textOf(p, 'presets[]', 'train_tokens')} tokens` : 'tokens unpublished';
    info.textContent = `${p.name}: seq ${isNum(p.seq) ? p.seq : DASH}, ${tokens}. Source: ${p.source || DASH}`;
}

/* A preset's token count as the tokens field takes it: the API's text
 * without padding zeros ("15.0T" -> "15T"). */
function tokensInput(p) {
    return textOf(p, 'presets[]', 'train_tokens').replace(/\.?0+([kMBTP])$/, '$1');
}

/* Typing a shape field over a preset: the model becomes an explicit custom
 * copy of the preset (every shape field filled in), instead of a preset
 * name with silent overrides. */
function toCustom(p, keep) {
    page.customFrom = p.id;
    const set = (name, v) => {
        if (name === keep) return;
        if (v === undefined || v === null) return;
        page.state[name] = typeof v === 'boolean' ? String(v) : String(v);
    };
    page.state.model = '';
    for (const k of SHAPE_FIELDS) set(k, p[k]);
    set('seq', p.seq);
    if (modeOf(page.state) === 'pretrain' && !page.state.tokens && isNum(p.train_tokens) && p.train_tokens > 0) {
        set('tokens', tokensInput(p));
    }
    const typed = document.getElementById(`f-${keep}`);
    const caret = typed && typed.selectionStart;
    writeForm();
    if (typed && typed.tagName === 'INPUT' && caret !== null) typed.setSelectionRange(caret, caret);
}

function backToPreset(p) {
    for (const k of [...SHAPE_FIELDS, 'seq', 'tokens', 'params']) delete page.state[k];
    page.state.model = p.id;
    page.customFrom = null;
    writeForm();
    changed(true);
    document.getElementById('f-model').focus();
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

function markField(name, detail) {
    const c = document.getElementById(`f-${name}`);
    const msg = document.getElementById(`err-${name}`);
    if (!c || !msg) return false;
    c.setAttribute('aria-invalid', 'true');
    msg.textContent = detail;
    msg.hidden = false;
    const adv = c.closest('details');
    if (adv) adv.open = true;
    return true;
}

/* Field errors (client parsing or problem+json): the message at each
 * field; the sticky verdict bar's note links them (markStale).  Nothing is
 * inserted above the results, so the page does not jump while typing. */
function showFieldErrors(errors) {
    for (const [name, detail] of Object.entries(errors)) markField(name, detail);
}

function problemErrors(problem, httpStatus) {
    const pointer = typeof problem.field === 'string' ? problem.field : '';
    const name = pointer.replace(/^\//, '').split('/')[0];
    return { [name]: readable(problem.detail || problem.title || `HTTP ${httpStatus}`) };
}

function showFailure(text) {
    const s = $('#summary');
    clearNode(s);
    s.appendChild(h('h2', { text: 'No estimate' }));
    s.appendChild(h('p', { text }));
    s.hidden = false;
}

/* The answer on screen no longer matches the inputs: say so, and why. */
function markStale(errors) {
    const note = $('#stale-note');
    const results = $('#results');
    clearNode(note);
    if (!errors) {
        note.hidden = true;
        delete results.dataset.stale;
        $('#verdict-bar').removeAttribute('data-stale');
        return;
    }
    results.dataset.stale = 'true';
    $('#verdict-bar').dataset.stale = 'true';
    if (Object.keys(errors).every((k) => k === '')) {
        note.textContent = `${page.lastPlan ? 'Showing the last good estimate' : 'No estimate yet'}: ${errors['']}.`;
        note.hidden = false;
        return;
    }
    note.appendChild(document.createTextNode(page.lastPlan ? 'Showing the last good estimate. Fix ' : 'No estimate yet. Fix '));
    Object.keys(errors).forEach((name, i) => {
        const f = FIELD_BY_NAME.get(name);
        if (i) note.appendChild(document.createTextNode(', '));
        /* a field in the form: its message sits there; otherwise say it here */
        note.appendChild(f ? h('a', { href: `#f-${name}`, text: f.label })
            : h('span', { text: `${name || 'the inputs'} (${errors[name]})` }));
    });
    /* the message itself sits at the field; the note only points there */
    note.appendChild(document.createTextNode('.'));
    note.hidden = false;
}

/* ------------------------------------------------------------------ */
/* rendering                                                            */
/* ------------------------------------------------------------------ */

/* The worst pipeline stage, when the answer has stages. */
function worstStage(m) {
    const st = Array.isArray(m.stages) ? m.stages : [];
    if (!st.length) return null;
    const i = isNum(m.worst_stage) ? m.worst_stage : 0;
    return st.find((s) => s.stage === i) || st[i] || null;
}

/* fits / tight / nofit, from the API's verdict and the user's margin. */
function fitState(m, margin) {
    if (typeof m.fits !== 'boolean') return 'none';
    if (!m.fits) return 'nofit';
    const ws = worstStage(m);
    const head = ws && isNum(ws.headroom) ? ws.headroom : m.headroom_bytes;
    if (isNum(head) && isNum(m.hbm_bytes) && m.hbm_bytes > 0 && head < margin * m.hbm_bytes) return 'tight';
    return 'fits';
}

function modelLine(plan) {
    const p = plan.params || {};
    const inputs = plan.inputs || {};
    const preset = presetById(inputs.model);
    let name = preset ? preset.name : (page.customFrom && presetById(page.customFrom)
        ? `Custom (from ${presetById(page.customFrom).name})` : 'Custom model');
    if (!preset && page.state.hf_config) {
        let type = '';
        try {
            type = String(JSON.parse(page.state.hf_config).model_type || '');
        } catch { /* flagged at the field */ }
        name = `Imported config.json${type ? ` (${type})` : ''}`;
    }
    if (!isNum(p.total)) return `${name}: ${DASH} parameters`;
    let t = `${name}: ${textOf(p, 'params', 'total')} parameters`;
    if (isNum(p.active) && p.active !== p.total) t += `, ${textOf(p, 'params', 'active')} active per token`;
    const mode = MODES.find((x) => x.id === modeOf(page.state));
    if (mode && mode.id !== 'pretrain') {
        t += ` · ${mode.label.replace(/^Fine-tune, /, 'fine-tune: ')}`;
        if (isNum(inputs.lora_rank) && inputs.lora_rank > 0) t += `, rank ${inputs.lora_rank}`;
    }
    return t;
}

function renderParams(plan) {
    const line = modelLine(plan);
    $('#verdict-model').textContent = line;
    if (!page.formReady) return;
    const p = plan.params || {};
    const el = $('#model-params');
    clearNode(el);
    el.appendChild(h('strong', { id: 'params-total', text: `${textOf(p, 'params', 'total')} parameters` }));
    if (isNum(p.total)) el.appendChild(h('span', { class: 'muted', text: ` (${fmtExact(p.total)})` }));
    if (isNum(p.active)) {
        el.appendChild(document.createTextNode(' · '));
        el.appendChild(h('strong', { id: 'params-active', text: `${textOf(p, 'params', 'active')} active` }));
    }
    el.appendChild(h('span', { class: 'muted', text: p.from_shape ? ' — counted from the shape' : ' — as given' }));
}

function renderVerdict(plan, margin) {
    const m = plan.memory || {};
    const v = $('#verdict');
    const d = $('#verdict-detail');
    const state = fitState(m, margin);
    $('#verdict-bar').dataset.state = state;
    if (state === 'none') {
        v.textContent = `${DASH} the answer has no fit verdict`;
        v.className = 'verdict';
        d.textContent = '';
        return state;
    }
    v.className = 'verdict ' + state;
    v.textContent = state === 'fits' ? '✓ FITS' : state === 'tight' ? '⚠ TIGHT' : '✗ DOES NOT FIT';
    const ws = worstStage(m);
    const total = ws ? textOf(ws, 'memory.stages[]', 'total') : textOf(m, 'memory', 'total');
    const head = ws && isNum(ws.headroom) ? ws.headroom : m.headroom_bytes;
    const headText = ws ? textOf(ws, 'memory.stages[]', 'headroom') : textOf(m, 'memory', 'headroom_bytes');
    const hbm = textOf(m, 'memory', 'hbm_bytes');
    /* the share of HBM is the page's own ratio of two of the answer's numbers */
    const pct = isNum(head) && isNum(m.hbm_bytes) && m.hbm_bytes > 0 ? ` (${fmtPct(Math.abs(head) / m.hbm_bytes)} of HBM)` : '';
    let t = m.fits
        ? `${total} of ${hbm} per GPU; ${headText} headroom${pct}`
        : `${total} per GPU needs more than ${hbm}; short by ${headText.replace(/^-/, '')}${pct}`;
    if (ws && Array.isArray(m.stages) && m.stages.length > 1) {
        const n = m.stages.length;
        const where = ws.stage === 0 ? 'first' : ws.stage === n - 1 ? 'last' : 'middle';
        t += `; worst: pipeline stage ${ws.stage} (the ${where} of ${n}, numbered from 0)`;
    }
    if (typeof m.peak_phase === 'string') t += `; peak in ${m.peak_phase}`;
    if (state === 'tight') t += `; under your ${fmtPct(margin)} margin`;
    d.textContent = t + '.';
    return state;
}

function renderWarnings(plan, state, margin) {
    const list = [];
    if (state === 'tight') {
        list.push({ id: 'w-tight', text: `Tight: headroom is under ${fmtPct(margin)} of HBM; allocator fragmentation, a longer sequence or a framework buffer can still run out of memory.` });
    }
    const k = plan.checkpoint || {};
    if (isNum(k.waste_fraction_schedule) && k.waste_fraction_schedule > CKPT_WASTE_WARN) {
        list.push({ id: 'w-ckpt-waste', text: `The checkpoint schedule loses ${textOf(k, 'checkpoint', 'waste_fraction_schedule')} of the run's time (over ${fmtPct(CKPT_WASTE_WARN)}); the Daly interval is ${textOf(k, 'checkpoint', 'daly_interval_s')}.` });
    }
    for (const t of Array.isArray(k.tiers) ? k.tiers : []) {
        if (isNum(t.interval_s) && isNum(t.write_s) && t.interval_s > 0 && t.write_s > t.interval_s) {
            list.push({ id: `w-ckpt-${t.name}`, text: `${t.name} checkpoints are due every ${textOf(t, TIER, 'interval_s')} but a write takes ${textOf(t, TIER, 'write_s')}: writes pile up.` });
        } else if (isNum(t.overhead_fraction) && t.overhead_fraction > CKPT_WASTE_WARN) {
            list.push({ id: `w-ckpt-${t.name}`, text: `${t.name} checkpoints alone cost ${textOf(t, TIER, 'overhead_fraction')} of the time.` });
        }
    }
    const ul = $('#warnings');
    clearNode(ul);
    for (const w of list) ul.appendChild(h('li', { id: w.id, text: `⚠ ${w.text}` }));
    ul.hidden = list.length === 0;
    return list;
}

function renderMemory(m) {
    drawMemoryBar($('#mem-bar'), m);
    const rows = TERMS.map((t) => {
        if (m[t.key] === undefined && t.key === 'buffers') return null;
        const r = fig(`mem-${t.key}`, m, 'memory', t.key);
        r[0].prepend(h('span', { class: `swatch sw-${t.key}`, 'aria-hidden': 'true' }));
        return r;
    }).filter(Boolean);
    rows.push(fig('mem-total', m, 'memory', 'total'));
    if (m.allocated_peak) rows.push(fig('mem-alloc-peak', m, 'memory', 'allocated_peak'));
    if (m.reserved_peak) rows.push(fig('mem-reserved-peak', m, 'memory', 'reserved_peak'));
    if (m.runtime) rows.push(fig('mem-runtime', m, 'memory', 'runtime'));
    rows.push(fig('mem-hbm', m, 'memory', 'hbm_bytes'));
    rows.push(fig('mem-headroom', m, 'memory', 'headroom_bytes'));
    const bpp = m.bytes_per_param || {};
    const BPP = 'memory.bytes_per_param';
    rows.push(fig('mem-bpp', bpp, BPP, 'total', {
        text: isNum(bpp.total) ? `${textOf(bpp, BPP, 'total')} = ${['weights', 'grads', 'master', 'optimizer'].map((k) => textOf(bpp, BPP, k)).join(' + ')}` : DASH,
    }));
    rows.push(fig('mem-state', m, 'memory', 'model_state_bytes'));
    rows.push(fig('mem-params-gpu', m, 'memory', 'params_per_gpu'));
    rows.push(fig('mem-seed000', m, 'memory', 'activations_seed000'));
    // The core reports 0 when DeepSpeed has no estimator for the stage
    // (ZeRO 0/1): say so rather than show "0 B" as if it were a figure.
    const ds = m.deepspeed_gpu;
    rows.push(fig('mem-deepspeed', m, 'memory', 'deepspeed_gpu',
        ds && ds.value === 0 ? { text: `${DASH} (ZeRO 2 and 3 only)` } : {}));
    if (isNum(m.host_bytes_per_node) && m.host_bytes_per_node > 0) {
        rows.push(fig('mem-host', m, 'memory', 'host_bytes_per_node'));
    }
    fill($('#mem-figs'), rows);

    /* phases: which one sets the peak */
    const phases = Array.isArray(m.phases) ? m.phases : [];
    $('#phases-block').hidden = phases.length === 0;
    const ul = $('#phases');
    clearNode(ul);
    for (const ph of phases) {
        const peak = ph.name === m.peak_phase;
        ul.appendChild(h('li', { class: peak ? 'peak' : null, 'data-phase': ph.name },
            h('span', { class: 'ph-name', text: ph.name }), ' ',
            h('strong', { text: textOf(ph, PHASE, 'bytes') }),
            peak ? h('span', { class: 'peak-tag', text: ' ← sets the peak' }) : null));
    }

    /* stages */
    const st = Array.isArray(m.stages) ? m.stages : [];
    $('#stages-block').hidden = st.length === 0;
    const body = $('#stages tbody');
    clearNode(body);
    for (const s of st) {
        const worst = st.length > 1 && s.stage === m.worst_stage;
        const cell = (key) => h('td', { text: textOf(s, STAGE, key) });
        body.appendChild(h('tr', { 'data-stage': s.stage, class: worst ? (s.fits === false ? 'worst nofit' : 'worst') : null },
            h('th', { scope: 'row', text: `${s.stage}${worst ? ' (worst)' : ''}` }),
            h('td', { text: isNum(s.layers) ? String(s.layers) : DASH }),
            ...STAGE_COLS.map(cell),
            h('td', { text: s.fits === true ? 'yes' : s.fits === false ? 'no' : DASH })));
    }
}

/* step breakdown members, in the order they add up (labels: the terms table) */
const STEP_PARTS = ['compute', 'recompute', 'tp_comm', 'pp_bubble', 'dp_comm', 'cp_comm', 'ep_comm', 'optimizer', 'offload'];
/* the sums beside the parts; other step members are not times */
const STEP_SUMS = ['exposed_comm', 'overlapped_comm', 'pp_p2p'];

function renderCompute(c) {
    const C = 'compute';
    const rows = [
        fig('cmp-flops', c, C, 'model_flops'),
        fig('cmp-flops-attn', c, C, 'model_flops_attn'),
        fig('cmp-hw-flops', c, C, 'hardware_flops'),
        fig('cmp-gpu-hours', c, C, 'gpu_hours'),
        fig('cmp-gpu-years', c, C, 'gpu_years'),
        fig('cmp-days', c, C, 'wall_seconds'),
    ];
    if (c.cost_usd !== undefined) rows.push(fig('cmp-cost', c, C, 'cost_usd'));
    if (c.step_time !== undefined) rows.push(fig('cmp-step-time', c, C, 'step_time'));
    if (c.predicted_mfu !== undefined) rows.push(fig('cmp-pred-mfu', c, C, 'predicted_mfu'));
    rows.push(
        fig('cmp-tps', c, C, 'tokens_per_second'),
        fig('cmp-tpgs', c, C, 'tokens_per_gpu_second'),
        fig('cmp-mfu', c, C, 'mfu', { label: `${labelOf(C, 'mfu')}${c.mfu_source === 'predicted' ? ' (predicted)' : ' (as given)'}` }),
        fig('cmp-hfu', c, C, 'hfu'),
        fig('cmp-peak', c, C, 'peak_flops'),
        fig('cmp-tokens', c, C, 'tokens'),
        fig('cmp-steps', c, C, 'steps'),
        fig('cmp-step-seconds', c, C, 'step_seconds'),
    );
    fill($('#compute-figs'), rows);

    /* where a step's time goes */
    const step = c.step && typeof c.step === 'object' ? c.step : null;
    $('#step-block').hidden = !step;
    if (!step) return;
    const parts = [];
    for (const key of STEP_PARTS) {
        if (step[key] === undefined) continue;
        parts.push({ key, label: labelOf(STEP, key), value: valueOf(step, STEP, key), text: textOf(step, STEP, key) });
    }
    const drawn = drawStepBar($('#step-bar'), parts);
    const srows = drawn.map((p) => {
        const r = fig(`step-${p.key}`, step, STEP, p.key);
        r[0].prepend(h('span', { class: `swatch sw-step-${drawn.indexOf(p)}`, 'aria-hidden': 'true' }));
        return r;
    });
    for (const key of STEP_SUMS) {
        if (!isNum(valueOf(step, STEP, key))) continue;
        srows.push(fig(`step-${key}`, step, STEP, key));
    }
    fill($('#step-figs'), srows);
    $('#step-cap').textContent = drawn.length
        ? `One step: ${drawn.map((p) => `${p.label.toLowerCase()} ${p.text}`).join(', ')}.`
        : 'The answer has no step breakdown.';
}

function renderCheckpoint(k) {
    const K = 'checkpoint';
    const wasteWarn = isNum(k.waste_fraction_schedule) && k.waste_fraction_schedule > CKPT_WASTE_WARN;
    const rows = [
        fig('ck-full', k, K, 'full_bytes'),
        fig('ck-weights', k, K, 'weights_bytes'),
        fig('ck-shard', k, K, 'shard_bytes_per_gpu'),
        fig('ck-writers', k, K, 'writers'),
        fig('ck-mtbf', k, K, 'job_mtbf_s'),
        fig('ck-blocking', k, K, 'blocking_write_s'),
        fig('ck-young', k, K, 'young_interval_s'),
        fig('ck-daly', k, K, 'daly_interval_s'),
        fig('ck-waste', k, K, 'waste_fraction'),
        fig('ck-waste-sched', k, K, 'waste_fraction_schedule', wasteWarn
            ? { text: `${textOf(k, K, 'waste_fraction_schedule')} ⚠ over ${fmtPct(CKPT_WASTE_WARN)}`, cls: 'warn' } : {}),
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
        const over = isNum(t.interval_s) && isNum(t.write_s) && t.write_s > t.interval_s;
        const bad = over || (isNum(t.overhead_fraction) && t.overhead_fraction > CKPT_WASTE_WARN);
        const extra = { interval_s: over ? ' ⚠' : '', storage_bytes: t.name === 'nvme' ? ' per node' : '', overhead_fraction: bad ? ' ⚠' : '' };
        body.appendChild(h('tr', { title: t.formula || null, 'data-tier': t.name, class: bad ? 'warn-row' : null },
            h('th', { scope: 'row', text: t.name || DASH }),
            ...TIER_COLS.map((key) => h('td', { text: textOf(t, TIER, key) + (extra[key] || '') }))));
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
    drawMemoryBar($('#mem-bar'), plan.memory);
    renderSweep(plan);
    if (plan.compute && plan.compute.step) renderCompute(plan.compute);
}

function renderSweep(plan) {
    const i = plan.inputs || {};
    const tp = isNum(i.tp) ? i.tp : 1, pp = isNum(i.pp) ? i.pp : 1, cp = isNum(i.cp) ? i.cp : 1;
    const fixed = { other: tp * pp * cp, text: `tp ${tp}, pp ${pp}, cp ${cp}` };
    const m = plan.memory || {};
    const cap = drawSweep($('#sweep'), plan.sweep, m.hbm_bytes, i.dp, fixed, textOf(m, 'memory', 'hbm_bytes'));
    $('#sweep-cap').textContent = cap;
}

/* The stage and tier tables' column heads: the terms table's labels. */
function renderTableHeads() {
    const head = (sel, labels) => {
        const t = $(`${sel} thead`);
        clearNode(t);
        t.appendChild(h('tr', {}, ...labels.map((l) => h('th', { scope: 'col', text: l }))));
    };
    head('#stages', ['Stage', 'Layers', ...STAGE_COLS.map((k) => labelOf(STAGE, k)), 'Fits']);
    head('#tiers', ['Tier', ...TIER_COLS.map((k) => labelOf(TIER, k))]);
}

function renderLegend() {
    for (const ul of document.querySelectorAll('ul.legend')) {
        clearNode(ul);
        for (const t of TERMS) {
            ul.appendChild(h('li', {}, h('span', { class: `swatch sw-${t.key}`, 'aria-hidden': 'true' }),
                t.label + (t.pattern ? ` (${({ diag: 'striped', cross: 'cross-hatched', dots: 'dotted', vlines: 'vertical lines' })[t.pattern]})` : '')));
        }
        ul.appendChild(h('li', {}, h('span', { class: 'swatch hbm', 'aria-hidden': 'true' }), 'GPU HBM (dashed)'));
    }
}

function renderPlan(plan, margin) {
    page.lastPlan = plan;
    const m = plan.memory || {};
    const state = renderVerdict(plan, margin);
    renderWarnings(plan, state, margin);
    renderParams(plan);
    renderMemory(m);
    renderCompute(plan.compute || {});
    renderCheckpoint(plan.checkpoint || {});
    renderSweep(plan);
    showResolved(plan.inputs);
    renderCompare();
}

/* The copy-paste command: every word that carries input is single-quoted
 * (format.js shellQuote), so a crafted link cannot run anything. */
function curlText(body) {
    return `curl -s -X POST ${shellQuote(location.origin + '/v1/plan')} \\\n` +
        `  -H 'Content-Type: application/json' \\\n  -d ${shellQuote(JSON.stringify(body))}`;
}

function renderCurl(body) {
    $('#curl').textContent = curlText(body);
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

/* Imported documents travel in the state as text; the API gets them parsed. */
const IMPORT_KINDS = ['hf_config', 'deepspeed_config', 'megatron_args', 'axolotl_config'];
/* sent as text, not parsed as JSON */
const TEXT_KINDS = ['megatron_args', 'axolotl_config'];

function requestFor(state) {
    const r = buildRequest(state);
    const custom = !state.model && !IMPORT_KINDS.some((k) => state[k]);
    /* a custom shape is most likely a current (gated, SwiGLU) model */
    if (custom && state.layers && (state.gated === undefined || state.gated === '')) r.body.gated = true;
    for (const k of IMPORT_KINDS) {
        if (!state[k]) continue;
        if (TEXT_KINDS.includes(k)) r.body[k] = state[k];
        else {
            try {
                r.body[k] = JSON.parse(state[k]);
            } catch {
                r.errors[k] = 'the imported document is not JSON';
            }
        }
    }
    return r;
}

async function runPlan() {
    const req = requestFor(page.state);
    const body = req.body;
    const results = $('#results');
    renderCurl(body);
    if (page.formReady) {
        showModeFields();
        clearErrors();
    }
    if (Object.keys(req.errors).length) {
        /* nothing to ask the API: keep the last answer, flag the fields */
        if (page.planCtl) page.planCtl.abort();
        page.planCtl = null;
        if (page.formReady) showFieldErrors(req.errors);
        markStale(req.errors);
        results.dataset.status = 'invalid';
        results.removeAttribute('aria-busy');
        return;
    }
    if (page.planCtl) page.planCtl.abort();
    const ctl = new AbortController();
    page.planCtl = ctl;
    results.dataset.status = 'loading';
    results.setAttribute('aria-busy', 'true');
    try {
        const r = await postJson('/v1/plan', body, ctl.signal);
        if (ctl.signal.aborted) return;
        if (page.formReady) clearErrors();
        if (r.ok && r.data && r.data.memory) {
            page.lastBody = body;
            if (!page.firstResultMs) {
                /* first visit: the verdict now, the panels on the next task */
                const state = renderVerdict(r.data, req.margin);
                renderWarnings(r.data, state, req.margin);
                renderParams(r.data);
                page.firstResultMs = Math.round(performance.now());
                document.documentElement.dataset.firstResultMs = String(page.firstResultMs);
                await new Promise((res) => setTimeout(res, 0));
                if (ctl.signal.aborted) return;
            }
            renderPlan(r.data, req.margin);
            markStale(null);
            results.dataset.status = 'ready';
        } else if (r.data && (r.data.detail || r.data.title)) {
            const errs = problemErrors(r.data, r.status);
            if (page.formReady) showFieldErrors(errs);
            markStale(errs);
            results.dataset.status = 'error';
        } else {
            showFailure(`The API answered HTTP ${r.status} without a usable body.`);
            markStale({ '': `HTTP ${r.status}` });
            results.dataset.status = 'error';
        }
    } catch (e) {
        if (e && e.name === 'AbortError') return;
        showFailure(`Could not reach the API: ${e && e.message ? e.message : e}`);
        markStale({ '': 'the API is unreachable' });
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

function applyFields(apply) {
    for (const [k, v] of Object.entries(apply)) {
        if (v === '' || v === undefined || v === null) delete page.state[k];
        else page.state[k] = String(v);
    }
    writeForm();
    changed(true);
}

/* ------------------------------------------------------------------ */
/* layout search (POST /v1/search, when the server has it)              */
/* ------------------------------------------------------------------ */

const LAYOUT_KEYS = ['tp', 'pp', 'cp', 'dp', 'ep', 'vpp', 'zero', 'framework', 'recompute', 'micro_batch',
    'sequence_parallel', 'pp_schedule', 'first_stage_layers', 'last_stage_layers', 'offload_optimizer', 'offload_params'];

/* A column of the search table from the terms table: sorted by the
 * number, showing the answer's text (a cost of 0 means no price). */
const RESULT = 'results[]';
function resultCol(key, sortKey, opts = {}) {
    return {
        key: sortKey, label: labelOf(RESULT, key), get: (r) => valueOf(r, RESULT, key),
        show: (r) => (opts.positive && !(valueOf(r, RESULT, key) > 0) ? DASH : textOf(r, RESULT, key)),
    };
}

const SEARCH_COLS = [
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
function layoutText(l) {
    const parts = [];
    for (const k of ['tp', 'pp', 'cp', 'dp', 'ep', 'vpp']) if (isNum(l[k]) && (l[k] > 1 || k === 'dp' || k === 'tp')) parts.push(`${k} ${l[k]}`);
    if (isNum(l.zero)) parts.push(`ZeRO ${l.zero}`);
    if (l.framework) parts.push(String(l.framework));
    if (l.recompute) parts.push(`${l.recompute} recompute`);
    if (isNum(l.micro_batch)) parts.push(`mb ${l.micro_batch}`);
    if (l.sequence_parallel === true) parts.push('SP');
    return parts.join(' · ');
}

function layoutOf(r) {
    const src = r.layout && typeof r.layout === 'object' ? r.layout : (r.inputs && typeof r.inputs === 'object' ? r.inputs : r);
    const out = {};
    for (const k of LAYOUT_KEYS) if (src[k] !== undefined && src[k] !== null) out[k] = src[k];
    if (out.dp === undefined && isNum(r.dp)) out.dp = r.dp;
    return out;
}

async function runSearch() {
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

function renderSearch() {
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

/* ------------------------------------------------------------------ */
/* compare                                                              */
/* ------------------------------------------------------------------ */

const COMPARE_ROWS = [
    ['Model', (p) => modelLine(p)],
    ['GPUs', (p) => `${pick(p, 'inputs.gpus') ?? DASH} × ${pick(p, 'inputs.gpu') ?? DASH}`],
    ['Layout', (p) => ['dp', 'tp', 'pp', 'cp', 'ep'].map((k) => `${k} ${pick(p, 'inputs.' + k) ?? DASH}`).join(', ') + `, ZeRO ${pick(p, 'inputs.zero') ?? DASH}`],
    ['Micro / global batch', (p) => `${pick(p, 'inputs.micro_batch') ?? DASH} / ${pick(p, 'inputs.global_batch') ?? DASH}`],
    ['Sequence', (p) => String(pick(p, 'inputs.seq') ?? DASH)],
    ['Recompute', (p) => String(pick(p, 'inputs.recompute') ?? DASH)],
    ['Verdict', (p) => ({ fits: 'fits', tight: 'tight', nofit: 'does not fit', none: DASH })[fitState(p.memory || {}, buildRequest(page.state).margin)]],
    ...[['memory', 'total'], ['memory', 'headroom_bytes'], ['compute', 'gpu_hours'], ['compute', 'gpu_years'],
        ['compute', 'wall_seconds'], ['compute', 'step_time'], ['compute', 'cost_usd'], ['checkpoint', 'full_bytes'],
        ['checkpoint', 'waste_fraction_schedule']].map(([obj, key]) => [labelOf(obj, key), (p) => textOf(p[obj], obj, key)]),
];

function pin() {
    if (!page.lastPlan) return;
    page.pins.push({ plan: page.lastPlan, body: page.lastBody, label: `#${page.pins.length + 1}` });
    renderCompare();
    $('#compare-panel').scrollIntoView({ block: 'nearest' });
}

function renderCompare() {
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

/* ------------------------------------------------------------------ */
/* export                                                               */
/* ------------------------------------------------------------------ */

function download(name, type, data) {
    const url = URL.createObjectURL(data instanceof Blob ? data : new Blob([data], { type }));
    const a = h('a', { href: url, download: name, class: 'visually-hidden' });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/* Every figure of the answer's memory, compute (and its step) and
 * checkpoint sections that has a text: the terms table's rows. */
function termsCsv(plan) {
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
function chartSvg() {
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

async function exportPng() {
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

/* ------------------------------------------------------------------ */
/* import (POST /v1/import)                                             */
/* ------------------------------------------------------------------ */

async function runImport() {
    const kind = $('#import-kind').value;
    const text = $('#import-text').value.trim();
    const status = $('#import-status');
    status.dataset.status = 'loading';
    if (!text) {
        status.textContent = 'Paste a config or choose a file first.';
        status.dataset.status = 'error';
        return;
    }
    let doc = text;
    if (!TEXT_KINDS.includes(kind)) {
        try {
            doc = JSON.parse(text);
        } catch (e) {
            status.textContent = `Not JSON: ${e.message}`;
            status.dataset.status = 'error';
            return;
        }
    }
    /* the import plus what it needs to resolve: the model (unless the
     * document is one) and the GPUs; not the rest of the form, so that
     * inputs_source shows what the document itself sets */
    const cur = requestFor(page.state).body;
    const body = { [kind]: doc };
    const ctxKeys = ['gpu', 'gpus', ...(kind === 'hf_config' ? [] : ['model', 'params', ...SHAPE_FIELDS, ...IMPORT_KINDS])];
    for (const k of ctxKeys) if (k !== kind && cur[k] !== undefined) body[k] = cur[k];
    let r;
    try {
        r = await postJson('/v1/import', body);
    } catch {
        status.textContent = `${DASH} could not reach the API`;
        status.dataset.status = 'error';
        return;
    }
    if (r.status === 404) {
        status.textContent = 'This server cannot import configs yet (no POST /v1/import).';
        status.dataset.status = 'absent';
        return;
    }
    if (!r.ok || !r.data) {
        const d = r.data || {};
        status.textContent = `Not imported: ${readable(d.detail || d.title || 'HTTP ' + r.status)}${d.field ? ` (at ${d.field})` : ''}`;
        status.dataset.status = 'error';
        return;
    }
    const inputs = r.data.inputs || {};
    const source = r.data.inputs_source || {};
    /* fields the import set: cleared from the state so they do not override it */
    const set = Object.keys(source).filter((k) => source[k] === kind);
    for (const k of set) if (FIELD_BY_NAME.has(k)) delete page.state[k];
    if (kind === 'hf_config') {
        page.state.model = '';
        for (const k of [...SHAPE_FIELDS, 'params']) delete page.state[k];
        page.customFrom = null;
    }
    page.state[kind] = TEXT_KINDS.includes(kind) ? doc : JSON.stringify(doc);
    writeForm();
    renderImported();
    const shown = set.filter((k) => FIELD_BY_NAME.has(k));
    const what = shown.length ? `${set.length} inputs (${shown.slice(0, 8).join(', ')}${shown.length > 8 ? ', …' : ''})` : `${Object.keys(inputs).length} inputs resolved`;
    const total = pick(r.data, 'params.total');
    const totalText = textOf(r.data.params, 'params', 'total');
    const notes = Array.isArray(r.data.import_notes) ? r.data.import_notes.filter((n) => typeof n === 'string') : [];
    status.textContent = `Imported (${kind})${isNum(total) ? `: ${totalText} parameters (${fmtExact(total)})` : ''}; set ${what}.` +
        (notes.length ? ` Notes: ${notes.join(' · ')}` : '');
    status.dataset.status = 'ready';
    changed(true);
}

function renderImported() {
    const box = $('#import-status');
    for (const old of document.querySelectorAll('.imported-chip')) old.remove();
    for (const k of IMPORT_KINDS) {
        if (!page.state[k]) continue;
        const b = h('button', { type: 'button', class: 'imported-chip', text: `Remove imported ${k}` });
        b.addEventListener('click', () => {
            delete page.state[k];
            b.remove();
            writeForm();
            changed(true);
        });
        box.after(b);
    }
}

/* ------------------------------------------------------------------ */
/* state flow                                                           */
/* ------------------------------------------------------------------ */

function changed(now) {
    page.state = readForm();
    history.replaceState(null, '', `${location.pathname}?${queryFromState(page.state)}${importQuery()}`);
    showPresetInfo();
    showModeFields();
    /* a solver answer belongs to the inputs it was asked about */
    if (page.fitCtl) page.fitCtl.abort();
    $('#fit-readout').textContent = '';
    delete $('#fit-readout').dataset.status;
    clearTimeout(page.timer);
    if (now) runPlan();
    else page.timer = setTimeout(runPlan, DEBOUNCE_MS);
}

function importQuery() {
    const q = new URLSearchParams();
    for (const k of IMPORT_KINDS) if (page.state[k]) q.set(k, page.state[k]);
    const s = q.toString();
    return s ? '&' + s : '';
}

function onInput(ev) {
    const name = ev.target && ev.target.name;
    const p = presetById(page.state.model);
    if (p && (SHAPE_FIELDS.includes(name) || name === 'params')) {
        page.state[name] = ev.target.value;
        if (name === 'params') {
            page.state.model = '';
            page.customFrom = null;
            writeForm();
        } else {
            toCustom(p, name);
        }
    }
    if (ev.target.id === 'f-model' && ev.target.value && presetById(ev.target.value)) {
        /* custom -> preset: the copied shape would silently override the
         * preset, so it goes; seq/tokens only if they were the copy's */
        const from = page.customFrom && presetById(page.customFrom);
        for (const k of [...SHAPE_FIELDS, 'params']) delete page.state[k];
        if (from && page.state.seq === String(from.seq)) delete page.state.seq;
        if (from && page.state.tokens === tokensInput(from)) delete page.state.tokens;
        page.state.model = ev.target.value;
        page.customFrom = null;
        writeForm();
        return;
    }
    if (ev.target.id === 'f-model' && !ev.target.value) {
        /* preset -> custom from the select: keep the shape we came from */
        const from = presetById(page.state.model);
        if (from) {
            toCustom(from, null);
            return;
        }
        if (!page.state.gated) page.state.gated = 'true';
    }
}

/* Presets and GPUs: a cached copy (localStorage) builds the form at once
 * and the first estimate goes out alone; the network copy refreshes the
 * cache after it.  Without a cache both load in parallel with the plan. */
function fetchCatalogues() {
    const get = async (path) => {
        const r = await fetch(path, { headers: { Accept: 'application/json' } });
        if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
        return r.json();
    };
    return Promise.all([get('/v1/presets'), get('/v1/gpus')]).then(([p, g]) => {
        const c = { presets: Array.isArray(p.presets) ? p.presets : [], gpus: Array.isArray(g.gpus) ? g.gpus : [] };
        try {
            localStorage.setItem(CATALOGUE_KEY, JSON.stringify(c));
        } catch { /* private mode: no cache */ }
        return c;
    });
}

function cachedCatalogues() {
    try {
        const c = JSON.parse(localStorage.getItem(CATALOGUE_KEY) || 'null');
        return c && Array.isArray(c.presets) && Array.isArray(c.gpus) ? c : null;
    } catch {
        return null;
    }
}

async function main() {
    page.state = stateFromQuery(location.search);
    const q = new URLSearchParams(location.search);
    for (const k of IMPORT_KINDS) if (q.has(k)) page.state[k] = q.get(k);
    /* the first estimate does not wait for the catalogues: one request */
    const first = runPlan();
    renderLegend();
    renderTableHeads();
    /* let the first answer render before the form is built (the form is
     * hundreds of nodes; the verdict is what the user waits for), but do
     * not hold the form back long if the API is slow */
    await Promise.race([first, new Promise((res) => setTimeout(res, 300))]);
    const cached = cachedCatalogues();
    try {
        const c = cached || await fetchCatalogues();
        page.presets = c.presets;
        page.gpus = c.gpus;
    } catch (e) {
        /* the form still works with typed-in ids; say what is missing */
        showFailure(`Could not load the preset and GPU lists (${e.message}); type a custom model.`);
    }
    buildForm();
    writeForm();
    showPresetInfo();
    renderImported();
    await first;
    if (cached) fetchCatalogues().catch(() => {});
    if (page.lastPlan) {
        renderParams(page.lastPlan);
        showResolved(page.lastPlan.inputs);
    } else {
        const req = requestFor(page.state);
        if (Object.keys(req.errors).length) showFieldErrors(req.errors);
    }
    document.documentElement.dataset.ready = '1';

    const form = $('#run');
    form.addEventListener('input', (ev) => {
        if (ev.target.closest('#import')) return;
        onInput(ev);
        changed(false);
    });
    /* text inputs already reported through "input"; selects apply at once */
    form.addEventListener('change', (ev) => {
        if (ev.target.closest('#import')) return;
        if (ev.target.tagName === 'SELECT') changed(true);
    });
    form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        changed(true);
    });
    $('#reset').addEventListener('click', () => {
        page.state = { ...DEFAULT_STATE };
        page.customFrom = null;
        writeForm();
        renderImported();
        changed(true);
    });
    $('#copy-link').addEventListener('click', async () => {
        const status = $('#copy-status');
        try {
            await navigator.clipboard.writeText(location.href);
            status.textContent = 'Link copied.';
        } catch {
            status.textContent = 'Copy the address bar: it holds every setting.';
        }
    });
    $('#fit-mb').addEventListener('click', () => runFit('micro_batch'));
    $('#fit-gpus').addEventListener('click', () => runFit('gpus'));
    $('#search-go').addEventListener('click', () => runSearch());
    $('#pin').addEventListener('click', pin);
    $('#compare-clear').addEventListener('click', () => {
        page.pins = [];
        renderCompare();
    });
    $('#export-json').addEventListener('click', () => {
        if (!page.lastPlan) return;
        download('trainsize-plan.json', 'application/json',
            JSON.stringify({ request: page.lastBody, answer: page.lastPlan }, null, 2) + '\n');
    });
    $('#export-csv').addEventListener('click', () => page.lastPlan && download('trainsize-terms.csv', 'text/csv', termsCsv(page.lastPlan)));
    $('#export-svg').addEventListener('click', () => download('trainsize-memory.svg', 'image/svg+xml', chartSvg().text));
    $('#export-png').addEventListener('click', () => exportPng());
    $('#import-go').addEventListener('click', runImport);
    const loadFile = async (file) => {
        if (!file) return;
        if (file.size > 1 << 20) {
            $('#import-status').textContent = 'That file is over 1 MiB; a config is a few KiB.';
            return;
        }
        $('#import-text').value = await file.text();
        if (/\.json$/i.test(file.name) && TEXT_KINDS.includes($('#import-kind').value)) $('#import-kind').value = 'hf_config';
        if (/\.ya?ml$/i.test(file.name)) $('#import-kind').value = 'axolotl_config';
    };
    $('#import-file').addEventListener('change', (ev) => loadFile(ev.target.files[0]));
    const ta = $('#import-text');
    ta.addEventListener('dragover', (ev) => ev.preventDefault());
    ta.addEventListener('drop', (ev) => {
        ev.preventDefault();
        loadFile(ev.dataTransfer.files[0]);
    });

    let lastWidth = window.innerWidth;
    window.addEventListener('resize', () => {
        if (window.innerWidth === lastWidth) return;
        lastWidth = window.innerWidth;
        clearTimeout(page.resizeTimer);
        page.resizeTimer = setTimeout(redrawCharts, 150);
    });

    history.replaceState(null, '', `${location.pathname}?${queryFromState(page.state)}${importQuery()}`);
}

performance.mark('app-start');
main();
