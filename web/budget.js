/*
 * budget.js - the budget mode (issue 28 item 4, issue 27): "what can this
 * budget train?"  POST /v1/budget with the page's GPU, GPU count and
 * price, a budget in days of those GPUs, GPU-hours or US dollars, and the
 * page's model (the tokens the budget buys) or none (the compute-optimal
 * size).  The first line is the API's own summary ("With this budget:
 * N-parameter model on T tokens, D days, $C, E MWh, G t CO2e"); the
 * figures under it are the answer's texts; "Open this plan" puts its
 * model and tokens on the page.  Kept apart from the run's form: its
 * controls are not run fields and do not re-plan the page.
 */
import { $, clearNode, fig, fill, h } from './dom.js';
import { FIELDS, SHAPE_FIELDS } from './form.js';
import { DASH, isNum, readable } from './format.js';
import { IMPORT_KINDS, hooks, page, postJson, requestFor } from './state.js';

const BASES = {
    budget_days: 'days of these GPUs',
    budget_gpu_hours: 'GPU-hours',
    budget_usd: 'US dollars (needs a price per GPU-hour)',
};
/* What a compute-optimal ask leaves out: the page's model (the registry's
 * Model fieldset), its fine-tuning (Pre-training or fine-tuning), its
 * token count and any imported document. */
function modelFields() {
    return [...FIELDS.filter((f) => f.group === 'model' || f.group === 'mode').map((f) => f.name), 'tokens', ...IMPORT_KINDS];
}
const B = 'budget';

/* The request for the page's run and the budget typed here, or an error. */
function budgetBody() {
    const basis = $('#budget-basis').value;
    const raw = $('#budget-amount').value.trim().replace(/[,_\s]/g, '');
    const amount = Number(raw);
    if (!raw || !Number.isFinite(amount) || amount <= 0) return { error: 'give the budget as a number above 0' };
    const req = requestFor(page.state);
    if (Object.keys(req.errors).length) return { error: 'fix the flagged fields of the run first' };
    const body = { ...req.body };
    if (!$('#budget-model').checked) for (const k of modelFields()) delete body[k];
    for (const k of Object.keys(BASES)) delete body[k];
    body[basis] = amount;
    return { body };
}

export async function runBudget() {
    const panel = $('#budget-panel');
    const out = $('#budget-summary');
    const figs = $('#budget-figs');
    const use = $('#budget-use');
    if (page.budgetCtl) page.budgetCtl.abort();
    use.hidden = true;
    clearNode(figs);
    const { body, error } = budgetBody();
    if (error) {
        out.textContent = `${DASH} ${error}.`;
        panel.dataset.status = 'error';
        return;
    }
    const ctl = new AbortController();
    page.budgetCtl = ctl;
    panel.dataset.status = 'loading';
    out.textContent = 'Planning from the budget…';
    let r;
    try {
        r = await postJson('/v1/budget', body, ctl.signal);
    } catch (e) {
        if (e && e.name === 'AbortError') return;
        out.textContent = `${DASH} could not reach the API.`;
        panel.dataset.status = 'error';
        return;
    }
    if (ctl.signal.aborted) return;
    page.budgetCtl = null;
    panel.dataset.request = JSON.stringify(body);
    if (r.status === 404) {
        out.textContent = 'This server has no budget planner (POST /v1/budget).';
        panel.dataset.status = 'absent';
        return;
    }
    const b = r.data && r.data.budget;
    if (!r.ok || !b) {
        const d = r.data || {};
        out.textContent = `${DASH} no answer: ${readable(d.detail || d.title || `HTTP ${r.status}`)}.`;
        panel.dataset.status = 'error';
        return;
    }
    out.textContent = typeof b.summary === 'string' ? b.summary : DASH;
    const c = r.data.compute || {};
    fill(figs, [
        fig('bud-params', b, B, 'params'),
        fig('bud-tokens', b, B, 'tokens'),
        fig('bud-tpp', b, B, 'tokens_per_param'),
        fig('bud-loss', b, B, 'loss'),
        fig('bud-days', b, B, 'days'),
        fig('bud-gpu-hours', b, B, 'gpu_hours'),
        fig('bud-usd', b, B, 'usd'),
        fig('bud-mfu', b, B, 'mfu'),
        fig('bud-flops', b, B, 'flops'),
        fig('bud-step', c, 'compute', 'step_time'),
    ]);
    page.budgetPlan = r.data;
    use.hidden = false;
    panel.dataset.status = 'ready';
}

/* The budget's model and tokens on the page (then re-planned there). */
export function useBudget() {
    const a = page.budgetPlan;
    if (!a || !a.request) return;
    const q = a.request;
    const apply = { tokens: isNum(q.tokens) ? String(Math.round(q.tokens)) : '' };
    if (a.budget && a.budget.mode !== 'model') {
        /* a size of its own: a custom shape */
        apply.model = '';
        for (const k of [...SHAPE_FIELDS, 'seq']) if (q[k] !== undefined && q[k] !== null) apply[k] = String(q[k]);
    }
    hooks.applyFields(apply);
    $('#verdict-bar').scrollIntoView({ block: 'nearest' });
}

export function buildBudget() {
    const sel = $('#budget-basis');
    clearNode(sel);
    for (const [k, label] of Object.entries(BASES)) sel.appendChild(h('option', { value: k, text: label }));
    $('#budget-go').addEventListener('click', runBudget);
    $('#budget-use').addEventListener('click', useBudget);
    $('#budget-amount').addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter') runBudget();
    });
}
