/*
 * importer.js - POST /v1/import: a config document sets what it implies,
 * and rides along in the state (and the link) as text.
 */
import { $, h } from './dom.js';
import { FIELD_BY_NAME, FT_DEFAULTS, SHAPE_FIELDS } from './form.js';
import { DASH, fmtCount, fmtExact, isNum, pick, readable, textOf } from './format.js';
import { presetByName, writeForm } from './formui.js';
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
    let left = [];
    if (!TEXT_KINDS.includes(kind)) {
        try {
            doc = JSON.parse(text);
        } catch (e) {
            status.textContent = `Not JSON: ${e.message}`;
            status.dataset.status = 'error';
            return;
        }
        ({ doc, left } = leaveOut(kind, doc));
    }
    /* axolotl and LLaMA-Factory name the base model by Hub id: the preset
     * with that alias (or the API's catalogue, which takes Hub ids) is
     * the model */
    const yk = YAML_KEYS[kind];
    const ax = yk ? axolotlTop(doc) : {};
    const baseId = yk ? ax[yk.base] : undefined;
    const base = page.state.hf_config ? null : matchBaseModel(baseId);
    const ctxState = { ...page.state };
    if (base) {
        for (const k of [...SHAPE_FIELDS, 'params']) delete ctxState[k];
        ctxState.model = base.id;
    }
    /* the import plus what it needs to resolve: the model (unless the
     * document is one) and the GPUs; not the rest of the form, so that
     * inputs_source shows what the document itself sets */
    const cur = requestFor(ctxState).body;
    const body = { [kind]: doc };
    const ctxKeys = ['gpu', 'gpus', ...(kind === 'hf_config' ? [] : ['model', 'params', ...SHAPE_FIELDS, ...IMPORT_KINDS])];
    for (const k of ctxKeys) if (k !== kind && cur[k] !== undefined) body[k] = cur[k];
    /* the server refuses bodies over its cap (413): say so here, before
     * sending (issue 27, item 8) */
    const bytes = new TextEncoder().encode(JSON.stringify(body)).length;
    if (bytes > BODY_MAX) {
        status.textContent = `Not imported: this would send ${(bytes / 1024).toFixed(1)} KiB, and the server takes ` +
            `request bodies of at most ${BODY_MAX / 1024} KiB. A config is a few KiB: leave out long comments, ` +
            'label maps or embedded data.';
        status.dataset.status = 'error';
        return;
    }
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
    if (base) {
        for (const k of [...SHAPE_FIELDS, 'params']) delete page.state[k];
        page.state.model = base.id;
        page.customFrom = null;
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
    const said = yk ? applyFineTune(kind, yk, ax, inputs, source) : [];
    writeForm();
    renderImported();
    if (kind === 'hf_config') said.push(...hfSeq(doc, inputs, source));
    const shown = set.filter((k) => FIELD_BY_NAME.has(k) && !said.some((s) => s.key === k));
    const what = [...said.map((s) => s.text), ...shown.map((k) => setText(k, inputs[k]))];
    const total = pick(r.data, 'params.total');
    const totalText = textOf(r.data.params, 'params', 'total');
    let notes = Array.isArray(r.data.import_notes) ? r.data.import_notes.filter((n) => typeof n === 'string') : [];
    /* the API cannot fetch a Hub id's shape; the page matched it to a preset */
    if (base) notes = notes.filter((n) => !n.startsWith(`/${kind}/${yk.base}`));
    if (said.some((s) => s.key === 'seq')) notes = notes.filter((n) => !n.startsWith('/hf_config/max_position_embeddings'));
    status.textContent = `Imported (${kind})${isNum(total) ? `: ${totalText} parameters (${fmtExact(total)})` : ''}` +
        (base ? `; model: ${yk.base} ${baseId} is the ${base.name} preset` : '') +
        (what.length ? `; set ${what.join(', ')}.` : `; ${Object.keys(inputs).length} inputs resolved.`) +
        (left.length ? ` Left out ${left.join(', ')}: not used by the estimate.` : '') +
        (notes.length ? ` Notes: ${notes.join(' · ')}` : '');
    status.dataset.status = 'ready';
    offerSeq(said.find((s) => s.key === 'seq'));
    hooks.changed(true);
}

/* The server's request body cap (server/ts_config.c --body-max, at most
 * and by default 65536). */
const BODY_MAX = 64 * 1024;

/* Members of a config.json the estimate never reads, and that can be
 * large: a classifier's label maps (3,000 labels are 6,000 JSON values,
 * past the API's 2048-value cap on an import) and task presets. */
const HF_IRRELEVANT = ['id2label', 'label2id', 'task_specific_params'];

function leaveOut(kind, doc) {
    if (kind !== 'hf_config' || !doc || typeof doc !== 'object' || Array.isArray(doc)) return { doc, left: [] };
    const left = HF_IRRELEVANT.filter((k) => k in doc);
    if (!left.length) return { doc, left };
    const slim = { ...doc };
    for (const k of left) delete slim[k];
    return { doc: slim, left };
}

/* config.json gives the model's context limit, not the training length:
 * when the API kept its default seq, say both and offer the limit. */
function hfSeq(doc, inputs, source) {
    const mpe = doc && doc.max_position_embeddings;
    if (source.seq !== 'default' || !Number.isInteger(mpe) || mpe <= 0 || mpe === inputs.seq) return [];
    return [{
        key: 'seq', value: mpe,
        text: `sequence length ${inputs.seq} (the default: max_position_embeddings ${mpe} is the model's context limit, not necessarily your training length)`,
    }];
}

function offerSeq(s) {
    const old = document.getElementById('import-use-seq');
    if (old) old.remove();
    if (!s) return;
    const b = h('button', { type: 'button', id: 'import-use-seq', class: 'imported-chip', text: `Train at ${s.value} tokens (max_position_embeddings)` });
    b.addEventListener('click', () => {
        page.state.seq = String(s.value);
        b.remove();
        writeForm();
        hooks.changed(true);
    });
    $('#import-status').after(b);
}

/* "sequence length 4096": how the import status names what it set. */
const SET_NAMES = {
    seq: 'sequence length', micro_batch: 'micro-batch', global_batch: 'global batch', precision: 'precision',
    grad_precision: 'gradient precision', lora_rank: 'LoRA rank', lora_targets: 'LoRA targets', frozen_precision: 'frozen base', zero: 'ZeRO',
    recompute: 'recompute', optimizer: 'optimizer', attention: 'attention', framework: 'framework',
    tp: 'tp', pp: 'pp', cp: 'cp', dp: 'dp', ep: 'ep',
};
function setText(k, v) {
    const name = SET_NAMES[k] || FIELD_BY_NAME.get(k).label.toLowerCase();
    return v === undefined || v === null || typeof v === 'object' ? name : `${name} ${v}`;
}

/*
 * The YAML configs' keys the page reads itself (the API reads the rest):
 * the base model's Hub id, whether it pretrains (then no fine-tune
 * mode), the steps and epochs.  axolotl: base_model, pretraining_dataset,
 * max_steps, num_epochs; LLaMA-Factory (hparams/*.py): model_name_or_path,
 * stage pt, max_steps and num_train_epochs (transformers'
 * TrainingArguments).
 */
const YAML_KEYS = {
    axolotl_config: { base: 'base_model', steps: 'max_steps', epochs: 'num_epochs', pretrains: (t) => t.pretraining_dataset !== undefined && t.pretraining_dataset !== '' },
    llamafactory_config: { base: 'model_name_or_path', steps: 'max_steps', epochs: 'num_train_epochs', pretrains: (t) => t.stage === 'pt' },
};

/*
 * The top-level scalars of an axolotl or LLaMA-Factory YAML that the page
 * itself needs (YAML_KEYS): "key: value"
 * lines at column 0, a trailing comment and quotes dropped.  The API reads
 * the document properly (import/ts_axolotl.c); this only finds the keys
 * it does not turn into inputs.
 */
export function axolotlTop(text) {
    const out = {};
    for (const line of String(text).split(/\r?\n/)) {
        const m = /^([A-Za-z_][A-Za-z0-9_]*):(?:[ \t]+(.*?))?[ \t]*$/.exec(line);
        if (!m) continue;
        let v = (m[2] || '').replace(/[ \t]+#.*$/, '');
        const q = /^(["'])(.*)\1$/.exec(v);
        if (q) v = q[2];
        out[m[1]] = v;
    }
    return out;
}

/* The preset whose id or Hub alias (case aside) is base_model. */
/* base_model as the server reads it (presetByName: ids, aliases, a Hub
 * page's address, another organisation's copy). */
export function matchBaseModel(id) {
    if (typeof id !== 'string' || !id) return null;
    return presetByName(id);
}

/*
 * What an axolotl or LLaMA-Factory config implies beyond the API's
 * inputs (issue 27, item 1): it fine-tunes (unless it pretrains), with
 * LoRA or QLoRA when the API read an adapter; the fine-tune's tokens are
 * max_steps x global batch x seq when it gives max_steps (the trainer
 * stops there), else dataset tokens x num_epochs.  The imported LoRA rank
 * and frozen precision are written into their fields, since the page's
 * mode defaults (rank 16, nf4) would otherwise override them; so are
 * the LoRA targets, so the field shows what the plan uses.  Returns
 * [{ key, text }] of what it set, for the status line.
 */
function applyFineTune(kind, yk, ax, inputs, source) {
    const said = [];
    if (yk.pretrains(ax)) return said;
    const lora = source.lora_rank === kind && isNum(inputs.lora_rank) && inputs.lora_rank > 0;
    const mode = !lora ? 'full' : inputs.frozen_precision === 'nf4' ? 'qlora' : 'lora';
    page.state.mode = mode;
    said.push({ key: 'mode', text: `mode ${({ full: 'full fine-tune', lora: 'LoRA', qlora: 'QLoRA' })[mode]}` });
    if (lora) {
        page.state.lora_rank = String(inputs.lora_rank);
        said.push({ key: 'lora_rank', text: `LoRA rank ${inputs.lora_rank}` });
        if (source.frozen_precision === kind && typeof inputs.frozen_precision === 'string') {
            page.state.frozen_precision = inputs.frozen_precision;
            said.push({ key: 'frozen_precision', text: `frozen base ${inputs.frozen_precision}` });
        }
        /* lora_target_modules / lora_target_linear: the matrices adapted */
        if (source.lora_targets === kind && typeof inputs.lora_targets === 'string') {
            page.state.lora_targets = inputs.lora_targets;
            said.push({ key: 'lora_targets', text: `LoRA targets ${inputs.lora_targets}` });
        }
        /* lora_modules_to_save: embed_tokens / lm_head trained in full */
        if (source.lora_modules_to_save === kind && typeof inputs.lora_modules_to_save === 'string') {
            page.state.lora_modules_to_save = inputs.lora_modules_to_save;
            said.push({ key: 'lora_modules_to_save', text: `trained in full ${inputs.lora_modules_to_save}` });
        }
    }
    const steps = Number(ax[yk.steps]);
    const epochs = Number(ax[yk.epochs]);
    if (Number.isInteger(steps) && steps > 0 && isNum(inputs.global_batch) && inputs.global_batch > 0 && isNum(inputs.seq)) {
        page.state.dataset_tokens = String(steps * inputs.global_batch * inputs.seq);
        page.state.epochs = '1';
        said.push({ key: 'tokens', text: `${steps} steps (${yk.steps}) = ${fmtCount(steps * inputs.global_batch * inputs.seq)} tokens` });
    } else if (isNum(epochs) && epochs > 0) {
        page.state.epochs = String(epochs);
        said.push({ key: 'epochs', text: `${epochs} epochs (${yk.epochs}); dataset tokens are not in the config: ` +
            `${page.state.dataset_tokens ? page.state.dataset_tokens : `the default ${fmtCount(FT_DEFAULTS.dataset_tokens)}`}, set Dataset tokens` });
    }
    return said;
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
