/*
 * budget.js - the budget mode (issue 28 item 4, issue 27): "what can this
 * budget train?"  POST /v1/budget with the page's GPU, GPU count and
 * price, a budget in days of those GPUs, GPU-hours or US dollars, and the
 * page's model (the tokens the budget buys) or none (the compute-optimal
 * size).  The first line is the API's own summary ("With this budget:
 * N-parameter model on T tokens, D days, $C, E MWh, G t CO2e"); the
 * figures under it are the answer's texts; "Open this plan" puts its
 * model and tokens on the page.  Kept apart from the run's form: its
 * controls are not run fields and do not re-plan the page.  A budget that
 * was asked is in the link (budget_days=7, budget_gpu_hours or
 * budget_usd: the API's own field names, and budget_model=1), and a link
 * with one asks it again on opening; an amount that does not parse, or
 * that the API refuses, is flagged at the amount like a run field is.
 */
import { $, clearNode, fig, fill, h } from './dom.js';
import { FIELDS, SHAPE_FIELDS, parseField } from './form.js';
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
/* the API's pointers to the amount (problem+json "field") */
const BASE_POINTERS = Object.fromEntries(Object.keys(BASES).map((k) => [`/${k}`, k]));

/* The amount as typed: the run fields' number syntax (50,000, 50k, 1e6). */
const AMOUNT = { name: 'budget', kind: 'num' };

/* The request for the page's run and the budget typed here, or an error
 * (field: true when it is the amount's). */
function budgetBody() {
    const basis = $('#budget-basis').value;
    const text = $('#budget-amount').value.trim();
    const p = parseField(AMOUNT, text);
    if (p.unset || p.error || !(p.value > 0)) {
        return { error: `give the budget as a number above 0${p.error ? ` (${p.error})` : ''}`, field: true };
    }
    const amount = p.value;
    if (page.budgetAsk && page.budgetAsk.conflict) return { error: page.budgetAsk.conflict, field: true };
    const req = requestFor(page.state);
    if (Object.keys(req.errors).length) return { error: 'fix the flagged fields of the run first' };
    const body = { ...req.body };
    if (!$('#budget-model').checked) for (const k of modelFields()) delete body[k];
    for (const k of Object.keys(BASES)) delete body[k];
    body[basis] = amount;
    return { body };
}

/* The amount's error at the amount (null clears it), as run fields show theirs. */
function amountError(text) {
    const input = $('#budget-amount');
    const msg = $('#budget-err');
    if (text) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
    msg.textContent = text || '';
    msg.hidden = !text;
}

/* What the link says of the budget ({ basis, amount, model }), or null. */
export function budgetFromQuery(search) {
    const q = new URLSearchParams(search);
    const given = Object.keys(BASES).filter((k) => q.has(k));
    if (!given.length) return null;
    return {
        basis: given[0], amount: q.get(given[0]), model: q.get('budget_model') === '1',
        conflict: given.length > 1 ? `the link gives ${given.join(' and ')}: give one budget` : null,
    };
}

/* The link's part for the budget last asked ('' for none). */
export function budgetQuery() {
    const a = page.budgetAsk;
    if (!a) return '';
    const q = new URLSearchParams();
    q.set(a.basis, a.amount);
    if (a.model) q.set('budget_model', '1');
    return q.toString();
}

export async function runBudget() {
    const panel = $('#budget-panel');
    const out = $('#budget-summary');
    const figs = $('#budget-figs');
    const use = $('#budget-use');
    if (page.budgetCtl) page.budgetCtl.abort();
    use.hidden = true;
    clearNode(figs);
    amountError(null);
    /* what is asked goes in the link, as typed, even when it is refused */
    const conflict = page.budgetAsk && page.budgetAsk.conflict;
    page.budgetAsk = { basis: $('#budget-basis').value, amount: $('#budget-amount').value.trim(), model: $('#budget-model').checked, conflict };
    if (hooks.writeUrl) hooks.writeUrl();
    const { body, error, field } = budgetBody();
    /* a link's conflict holds for its first ask only */
    page.budgetAsk.conflict = null;
    if (error) {
        out.textContent = `${DASH} ${error}.`;
        if (field) amountError(error);
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
        const why = readable(d.detail || d.title || `HTTP ${r.status}`);
        out.textContent = `${DASH} no answer: ${why}.`;
        if (typeof d.field === 'string' && d.field in BASE_POINTERS) amountError(why);
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
    /* a link's budget (main() asks it once the run's first answer is in) */
    const a = page.budgetAsk;
    if (a) {
        sel.value = a.basis;
        $('#budget-amount').value = a.amount;
        $('#budget-model').checked = a.model;
    }
    $('#budget-go').addEventListener('click', runBudget);
    $('#budget-use').addEventListener('click', useBudget);
    $('#budget-amount').addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter') runBudget();
    });
}
