/*
 * importer.js - POST /v1/import: a config document sets what it implies,
 * and rides along in the state (and the link) as text.
 */
import { $, h } from './dom.js';
import { FIELD_BY_NAME, SHAPE_FIELDS } from './form.js';
import { DASH, fmtExact, isNum, pick, readable, textOf } from './format.js';
import { writeForm } from './formui.js';
import { IMPORT_KINDS, TEXT_KINDS, hooks, page, postJson, requestFor } from './state.js';

/* ------------------------------------------------------------------ */
/* import (POST /v1/import)                                             */
/* ------------------------------------------------------------------ */

export async function runImport() {
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
    hooks.changed(true);
}

export function renderImported() {
    const box = $('#import-status');
    for (const old of document.querySelectorAll('.imported-chip')) old.remove();
    for (const k of IMPORT_KINDS) {
        if (!page.state[k]) continue;
        const b = h('button', { type: 'button', class: 'imported-chip', text: `Remove imported ${k}` });
        b.addEventListener('click', () => {
            delete page.state[k];
            b.remove();
            writeForm();
            hooks.changed(true);
        });
        box.after(b);
    }
}
