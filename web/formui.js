/*
 * formui.js - the form on the page: controls built from form.js FIELDS,
 * page.state <-> controls, the preset / custom-copy logic, what the API
 * resolved shown as placeholders, and errors at the fields.
 */
import { $, clearNode, h } from './dom.js';
import { FIELDS, FT_DEFAULTS, GROUPS, MODES, SHAPE_FIELDS, buildRequest, modeOf } from './form.js';
import { DASH, fmtCount, isNum, readable, textOf } from './format.js';
import { IMPORT_KINDS, hooks, page } from './state.js';

/* ------------------------------------------------------------------ */
/* the form                                                             */
/* ------------------------------------------------------------------ */

export function presetById(id) {
    return page.presets.find((p) => p.id === id);
}

function gpuOption(g) {
    return `${g.name} — ${textOf(g, 'gpus[]', 'hbm_bytes')}`;
}

/* The GPU list's memory in the page's units (units.js). */
export function relabelGpus() {
    const sel = document.getElementById('f-gpu');
    if (!sel) return;
    for (const o of sel.options) {
        const g = gpuById(o.value);
        if (g) o.textContent = gpuOption(g);
    }
}

function gpuById(id) {
    return id ? page.gpus.find((g) => g.id === id) : null;
}

export function optionsFor(f) {
    const opts = [h('option', { value: '', text: 'default' })];
    switch (f.kind) {
    case 'model':
        opts[0].textContent = 'custom shape (fields below)';
        for (const p of page.presets) {
            opts.push(h('option', { value: p.id, text: `${p.name} (${textOf(p, 'presets[]', 'params')} params)` }));
        }
        break;
    case 'gpu':
        for (const g of page.gpus) opts.push(h('option', { value: g.id, text: gpuOption(g) }));
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

export function fieldRow(f) {
    const id = `f-${f.name}`;
    const described = [f.hint ? `hint-${f.name}` : null, `err-${f.name}`].filter(Boolean).join(' ');
    let control;
    /* numbers and free text (lora_targets) are typed; the rest are picked */
    if (f.kind === 'int' || f.kind === 'num' || f.kind === 'text') {
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

/* The catalogue by Hugging Face id (issue 27): a search box whose
 * suggestions (a datalist: the browser filters them as one types) are the
 * presets' Hub ids with their names; a typed or picked id or alias, in any
 * case, picks the preset in the select as a user would (input, change). */
function hubId(p) {
    const a = (Array.isArray(p.aliases) ? p.aliases : []).find((x) => typeof x === 'string' && x.includes('/'));
    return p.id.includes('/') ? p.id : a || p.id;
}

/* The names a model answers to, as the server reads "model"
 * (api/ts_catalogue.c): its id or an alias, the model page's address
 * naming the repository, or another organisation's copy by its name. */
const HUB_PAGE = /^(?:https?:\/\/)?(?:www\.)?(?:huggingface\.co|hf\.co)\/([^/?#]+)(?:\/([^/?#]+))?/;
const PAGE_WORDS = ['tree', 'blob', 'resolve', 'raw', 'commit', 'commits', 'discussions', 'files'];
const orgless = (n) => n.slice(n.indexOf('/') + 1);

export function presetByName(text) {
    let t = String(text || '').trim().toLowerCase();
    const m = HUB_PAGE.exec(t);
    if (m) t = m[2] && !PAGE_WORDS.includes(m[2]) ? `${m[1]}/${m[2]}` : m[1];
    if (!t) return null;
    const names = (p) => [p.id, ...(Array.isArray(p.aliases) ? p.aliases : [])].map((a) => String(a).toLowerCase());
    return page.presets.find((p) => names(p).includes(t)) ||
        (t.includes('/') && !orgless(t).includes('/') &&
            page.presets.find((p) => names(p).some((a) => a.includes('/') && orgless(a) === orgless(t)))) || null;
}

function modelSearch() {
    const list = h('datalist', { id: 'model-list' },
        ...page.presets.map((p) => h('option', { value: hubId(p), label: `${p.name} (${textOf(p, 'presets[]', 'params')} params)` })));
    const input = h('input', {
        id: 'model-search', type: 'search', list: 'model-list', autocomplete: 'off', spellcheck: 'false',
        placeholder: 'e.g. Qwen/Qwen2.5-7B', 'aria-describedby': 'model-search-hint',
    });
    input.addEventListener('input', () => {
        const p = presetByName(input.value);
        const sel = document.getElementById('f-model');
        if (!p || !sel || sel.value === p.id) return;
        sel.value = p.id;
        sel.dispatchEvent(new Event('input', { bubbles: true }));
        sel.dispatchEvent(new Event('change', { bubbles: true }));
    });
    return h('div', { class: 'field model-search' },
        h('label', { for: 'model-search', text: 'Find a model by name or Hugging Face id' }),
        input, list,
        h('p', { id: 'model-search-hint', class: 'hint', text: `${page.presets.length} models; type to narrow the list, an exact id picks it.` }));
}

export function buildForm() {
    const root = $('#groups');
    clearNode(root);
    for (const g of GROUPS) {
        const main = FIELDS.filter((f) => f.group === g.id && !f.advanced);
        const adv = FIELDS.filter((f) => f.group === g.id && f.advanced);
        const fs = h('fieldset', { id: `g-${g.id}` }, h('legend', { text: g.legend }));
        if (main.length) fs.appendChild(h('div', { class: 'fields' }, ...main.map(fieldRow)));
        if (g.id === 'model') {
            fs.appendChild(modelSearch());
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
export function writeForm() {
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

export function readForm() {
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
export function showModeFields() {
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
export function showResolved(inputs) {
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

export function showPresetInfo() {
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
export function tokensInput(p) {
    return textOf(p, 'presets[]', 'train_tokens').replace(/\.?0+([kMBTP])$/, '$1');
}

/* Typing a shape field over a preset: the model becomes an explicit custom
 * copy of the preset (every shape field filled in), instead of a preset
 * name with silent overrides. */
export function toCustom(p, keep) {
    page.customFrom = p.id;
    const set = (name, v) => {
        if (name === keep) return;
        if (v === undefined || v === null) return;
        page.state[name] = typeof v === 'boolean' ? String(v) : String(v);
    };
    page.state.model = '';
    for (const k of SHAPE_FIELDS) set(k, p[k]);
    if (!page.state.seq) set('seq', p.seq);
    if (modeOf(page.state) === 'pretrain' && !page.state.tokens && isNum(p.train_tokens) && p.train_tokens > 0) {
        set('tokens', tokensInput(p));
    }
    const typed = document.getElementById(`f-${keep}`);
    const caret = typed && typed.selectionStart;
    writeForm();
    if (typed && typed.tagName === 'INPUT' && caret !== null) typed.setSelectionRange(caret, caret);
}

/* A preset whose shape the state changes (a link such as
 * ?model=llama2-7b&layers=16): the preset, else null. */
export function overriddenPreset(state) {
    const p = presetById(state.model);
    return p && SHAPE_FIELDS.some((k) => state[k] !== undefined && state[k] !== '') ? p : null;
}

/* Such a link is the same custom copy typing would make (issue 27, item
 * 7: titled "Llama 2 7B: 3.50B parameters" while the select said 6.74B):
 * the preset's shape fills the fields the link does not set. */
export function customFromLink(p) {
    page.customFrom = p.id;
    page.state.model = '';
    for (const k of SHAPE_FIELDS) {
        const v = p[k];
        if ((page.state[k] === undefined || page.state[k] === '') && v !== undefined && v !== null) page.state[k] = String(v);
    }
    if (!page.state.seq && isNum(p.seq)) page.state.seq = String(p.seq);
    if (modeOf(page.state) === 'pretrain' && !page.state.tokens && isNum(p.train_tokens) && p.train_tokens > 0) {
        page.state.tokens = tokensInput(p);
    }
    writeForm();
}

export function backToPreset(p) {
    for (const k of [...SHAPE_FIELDS, 'seq', 'tokens', 'params']) delete page.state[k];
    page.state.model = p.id;
    page.customFrom = null;
    writeForm();
    hooks.changed(true);
    document.getElementById('f-model').focus();
}

/* ------------------------------------------------------------------ */
/* errors                                                               */
/* ------------------------------------------------------------------ */

export function clearErrors() {
    for (const c of document.querySelectorAll('[aria-invalid="true"]')) c.removeAttribute('aria-invalid');
    for (const e of document.querySelectorAll('.field-error')) {
        e.hidden = true;
        e.textContent = '';
    }
    const s = $('#summary');
    s.hidden = true;
    clearNode(s);
}

export function markField(name, detail) {
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
export function showFieldErrors(errors) {
    for (const [name, detail] of Object.entries(errors)) markField(name, detail);
}

export function problemErrors(problem, httpStatus) {
    const pointer = typeof problem.field === 'string' ? problem.field : '';
    const name = pointer.replace(/^\//, '').split('/')[0];
    return { [name]: readable(problem.detail || problem.title || `HTTP ${httpStatus}`) };
}

export function showFailure(text) {
    const s = $('#summary');
    clearNode(s);
    s.appendChild(h('h2', { text: 'No estimate' }));
    s.appendChild(h('p', { text }));
    s.hidden = false;
}

