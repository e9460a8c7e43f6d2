/*
 * state.js - what the page's modules share: the per-page state, the hooks
 * through which they ask app.js to re-plan, and the request plumbing.
 */
import { buildRequest } from './form.js';

/* Per-page state: the user's field texts, and the request plumbing. */

export const page = {
    state: {},
    presets: [],
    gpus: [],
    timer: 0,
    planCtl: null,
    fitCtl: null,
    /* the solver readout's sentences that quote memory: [node, () => text] */
    fitSays: [],
    lastPlan: null,
    lastBody: null,
    customFrom: null,
    pins: [],
    search: null,
    searchSort: { key: null, dir: 1 },
    formReady: false,
    /* the errors on screen (markStale), re-shown at the fields once the form is built */
    lastErrors: null,
    lastMargin: 0.1,
    resizeTimer: 0,
    t0: performance.now(),
};
/* app.js fills these in: changed(now) re-plans, applyFields(fields) sets and re-plans */
export const hooks = {};
/* Checkpointing that loses more than this share of time gets a warning. */
export const CKPT_WASTE_WARN = 0.10;
/* Where the objects of an answer sit (the terms table's object paths). */
export const STAGE = 'memory.stages[]', PHASE = 'memory.phases[]', TIER = 'checkpoint.tiers[]', STEP = 'compute.step';

export async function postJson(path, body, signal) {
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
export const IMPORT_KINDS = ['hf_config', 'deepspeed_config', 'megatron_args', 'axolotl_config', 'llamafactory_config'];
/* sent as text, not parsed as JSON */
export const TEXT_KINDS = ['megatron_args', 'axolotl_config', 'llamafactory_config'];

export function requestFor(state) {
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

