/*
 * form.js - the form, as data and logic: the request fields of the
 * dashboard (fields.js, generated from the API's field registry: names,
 * kinds, enum values, labels, hints, fieldsets) plus the page's own
 * controls, URL state and request bodies.
 *
 * kind: "int" / "num" (free text, sent as a JSON number when it parses,
 * else as the raw string so the API names the field in its error),
 * "enum" (select of strings), "zero" (select of 0..3), "bool" (select
 * default / yes / no, so a preset's value can be left alone or overridden),
 * "model" / "gpu" (selects filled from /v1/presets and /v1/gpus), "mode".
 *
 * An empty value means "not set": the field is not sent and the API's (or
 * the preset's) value applies; the placeholder then shows the value the API
 * resolved, read back from the plan's "inputs".
 */
import { GROUPS, REQUEST_FIELDS } from './fields.js';

export { GROUPS };

/* The model's shape (the registry's model.* members on the form, marked
 * shape in fields.js): typing any of these over a preset turns the model
 * into an explicit custom shape copied from that preset (app.js toCustom). */
export const SHAPE_FIELDS = REQUEST_FIELDS.filter((f) => f.shape).map((f) => f.name);

export const MODES = [
    { id: 'pretrain', label: 'Pre-train (all weights, full token budget)' },
    { id: 'full', label: 'Fine-tune, all weights' },
    { id: 'lora', label: 'Fine-tune, LoRA adapters' },
    { id: 'qlora', label: 'Fine-tune, QLoRA (nf4 base + LoRA)' },
];

/* The page's own controls (page: true): never sent as such (buildRequest
 * turns dataset tokens x epochs into tokens; margin only colours the
 * verdict).  Each sits before or after a request field of its fieldset. */
const PAGE_FIELDS = [
    { name: 'mode', group: 'mode', kind: 'mode', label: 'What the run does', page: true, before: 'lora_rank' },
    { name: 'dataset_tokens', group: 'mode', kind: 'num', label: 'Dataset tokens', page: true, finetune: true,
      hint: 'Tokens in the fine-tuning set, e.g. 50M; default 100M.', before: 'lora_rank' },
    { name: 'epochs', group: 'mode', kind: 'num', label: 'Epochs', page: true, finetune: true,
      hint: 'Passes over the dataset; default 3. Tokens = dataset × epochs.', before: 'lora_rank' },
    { name: 'margin', group: 'hardware', kind: 'num', label: 'Tight below headroom of', page: true, fraction: true,
      hint: 'share of HBM, e.g. 10%; default 10%', after: 'mfu' },
];

function mergeFields(request, pageFields) {
    const out = [...request];
    for (const p of pageFields) {
        const at = out.findIndex((f) => f.name === (p.before || p.after));
        if (at < 0) throw new Error(`form.js: ${p.name} is placed next to ${p.before || p.after}, which the form lacks`);
        out.splice(p.before ? at : at + 1, 0, p);
    }
    return out;
}

/* Every control of the form, in the order of the page (and of a request
 * body's keys). */
export const FIELDS = mergeFields(REQUEST_FIELDS, PAGE_FIELDS);

export const FIELD_BY_NAME = new Map(FIELDS.map((f) => [f.name, f]));

/* What a first visit shows: a run that fits and is easy to read.  Full
 * recompute because Llama 3 8B at its 8192 context does not fit 80 GB per
 * GPU with stored activations (the plan would just say DOES NOT FIT). */
export const DEFAULT_STATE = {
    model: 'llama3-8b',
    gpu: 'h100-sxm',
    gpus: '8',
    zero: '1',
    recompute: 'full',
};

/* Fine-tuning defaults: a 100M-token set seen 3 times, LoRA rank 16
 * (Hu et al. 2021 use r = 4..64; QLoRA, Dettmers et al. 2023, uses 64). */
export const FT_DEFAULTS = { dataset_tokens: 1e8, epochs: 3, lora_rank: 16 };
export const DEFAULT_MARGIN = 0.10;

/* Suffixes people type: 8k, 15T, 1.5B, 70M.  k is 1024 only for fields that
 * count in powers of two by convention (sequence length: "8k context" =
 * 8192); elsewhere SI (15T tokens = 15e12). */
const SUFFIX = { k: 1e3, m: 1e6, b: 1e9, g: 1e9, t: 1e12, p: 1e15 };
const NUMBER_RE = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*([kmbgtp%]?)$/i;

/*
 * Parse one field's text.  Returns { value } (a JSON value), { unset: true }
 * for an empty field, or { error } with a message for the field.
 * Accepts "4,096", "4 096", "4_096", "8k", "15T", "40%" (fraction fields).
 */
export function parseField(field, text) {
    if (text === undefined || text === null) return { unset: true };
    const s = String(text).trim();
    if (s === '') return { unset: true };
    switch (field.kind) {
    case 'int':
    case 'num': {
        /* a comma is a thousands separator only between groups of 3 digits */
        const bare = s.replace(/(\d)[,_ ](?=\d{3}(?:\D|$))/g, '$1');
        const m = NUMBER_RE.exec(bare);
        if (!m) return { error: 'not a number; write e.g. 4096, 4,096, 8k, 1.5e13 or 15T' };
        let v = Number(m[1]);
        const suf = m[2].toLowerCase();
        if (suf === '%') {
            if (!field.fraction) return { error: '% only applies to fractions (MFU, margin)' };
            v /= 100;
        } else if (suf) {
            v *= suf === 'k' && field.binaryK ? 1024 : SUFFIX[suf];
        }
        if (!Number.isFinite(v)) return { error: 'too large' };
        if (field.kind === 'int' && !Number.isInteger(v)) {
            return { error: `a whole number is needed (${s} is ${v})` };
        }
        /* 40 typed for 40 %: a fraction field's bare number over 1 is a
         * percentage, in every fraction field alike (issue 27, item 7) */
        if (field.fraction && !suf && v > 1) {
            if (v > 100) return { error: `a share: write e.g. 0.4, 40% or 40 (${s} is over 100 %)` };
            v /= 100;
        }
        return { value: v };
    }
    case 'zero':
        return /^[0-3]$/.test(s) ? { value: Number(s) } : { error: 'ZeRO stage is 0, 1, 2 or 3' };
    case 'bool':
        if (s === 'true') return { value: true };
        if (s === 'false') return { value: false };
        return { value: s };
    default:
        return { value: s };
    }
}

export function modeOf(state) {
    return MODES.some((m) => m.id === state.mode) ? state.mode : 'pretrain';
}

/*
 * The request body for a state (field name -> text), and the fields whose
 * text does not parse (name -> message).  Key order follows FIELDS so the
 * body (and the URL) read the same every time.  Fine-tune modes send
 * tokens = dataset tokens x epochs and the LoRA inputs; pre-training sends
 * neither.
 */
export function buildRequest(state) {
    const body = {};
    const errors = {};
    const mode = modeOf(state);
    const vals = {};
    for (const f of FIELDS) {
        if (mode === 'pretrain' && (f.finetune || f.lora)) continue;
        if (mode !== 'pretrain' && f.pretrain) continue;
        if ((mode === 'full') && f.lora) continue;
        const r = parseField(f, state[f.name]);
        if (r.error) errors[f.name] = r.error;
        else if (!r.unset) vals[f.name] = r.value;
    }
    for (const f of FIELDS) {
        if (f.name in vals && !f.page) body[f.name] = vals[f.name];
        if (f.name === 'tokens' && mode !== 'pretrain' && !errors.dataset_tokens && !errors.epochs) {
            body.tokens = Math.round((vals.dataset_tokens ?? FT_DEFAULTS.dataset_tokens) * (vals.epochs ?? FT_DEFAULTS.epochs));
        }
        if (f.name === 'lora_rank' && (mode === 'lora' || mode === 'qlora') && !('lora_rank' in vals) && !errors.lora_rank) {
            body.lora_rank = FT_DEFAULTS.lora_rank;
        }
        if (f.name === 'frozen_precision' && mode === 'qlora' && !('frozen_precision' in vals)) {
            body.frozen_precision = 'nf4';
        }
    }
    return { body, errors, margin: vals.margin ?? DEFAULT_MARGIN, mode };
}

/* Kept for callers that only want the body. */
export function buildBody(state) {
    return buildRequest(state).body;
}

/* URL query <-> state.  A URL with any field in it is taken as the whole
 * state (no defaults mixed in), so "model=" keeps a custom model custom. */
export function stateFromQuery(search) {
    const q = new URLSearchParams(search);
    const state = {};
    let any = false;
    for (const f of FIELDS) {
        if (q.has(f.name)) {
            state[f.name] = q.get(f.name);
            any = true;
        }
    }
    return any ? state : { ...DEFAULT_STATE };
}

export function queryFromState(state) {
    const q = new URLSearchParams();
    for (const f of FIELDS) {
        const v = state[f.name];
        /* keep an explicit empty model so "custom" survives a reload */
        if (v !== undefined && (v !== '' || f.name === 'model')) q.set(f.name, v);
    }
    return q.toString();
}
