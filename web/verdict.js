/*
 * verdict.js - the sticky verdict bar: fits / tight / does not fit, the
 * model line, warnings, and the note when the answer on screen is stale.
 */
import { $, clearNode, h } from './dom.js';
import { FIELD_BY_NAME, MODES, modeOf } from './form.js';
import { DASH, fmtExact, fmtPct, isNum, textOf, valueOf } from './format.js';
import { overriddenPreset, presetById } from './formui.js';
import { CKPT_WASTE_WARN, TIER, page } from './state.js';

/* The bar's copy of a field's message: cut at a character (not UTF-16
 * unit) boundary; the whole message sits at the field. */
const NOTE_CHARS = 160;
function cut(s) {
    const chars = Array.from(String(s));
    return chars.length > NOTE_CHARS ? chars.slice(0, NOTE_CHARS - 1).join('') + '…' : chars.join('');
}

/*
 * The answer on screen no longer matches the inputs (errors: field name ->
 * message, '' for no field), or errors is null when it does again.  The
 * verdict then says so in place of the fit verdict (issue 27, item 2: a
 * green "FITS" over inputs the API rejected is a lie), the note in the bar
 * names each field with a link and its message, and the panels below are
 * dashed as the last good estimate.  The note sits in the verdict line, in
 * the flow, so it covers no label on a phone.
 */
export function markStale(errors) {
    const note = $('#stale-note');
    const results = $('#results');
    const bar = $('#verdict-bar');
    clearNode(note);
    page.lastErrors = errors || null;
    if (!errors) {
        note.hidden = true;
        $('#glance').hidden = false;
        delete results.dataset.stale;
        bar.removeAttribute('data-stale');
        if (bar.dataset.state === 'invalid' || bar.dataset.state === 'error') renderVerdictState(page.lastPlan);
        return;
    }
    results.dataset.stale = 'true';
    bar.dataset.stale = 'true';
    const v = $('#verdict');
    /* the note takes the glance's place (the detail line stays, muted, so
     * the page below does not move while typing) */
    $('#glance').hidden = true;
    note.hidden = false;
    if (Object.keys(errors).every((k) => k === '')) {
        bar.dataset.state = 'error';
        v.className = 'verdict invalid';
        v.textContent = '⚠ NO ANSWER';
        note.textContent = `${page.lastPlan ? 'Showing the last good estimate' : 'No estimate yet'}: ${errors['']}.`;
        return;
    }
    bar.dataset.state = 'invalid';
    v.className = 'verdict invalid';
    v.textContent = '⚠ CHECK INPUT';
    note.appendChild(document.createTextNode(page.lastPlan ? 'Showing the last good estimate. Fix ' : 'No estimate yet. Fix '));
    Object.keys(errors).forEach((name, i) => {
        const f = FIELD_BY_NAME.get(name);
        if (i) note.appendChild(document.createTextNode('; '));
        /* a field in the form: a link to it (its message sits there too) */
        note.appendChild(f ? h('a', { href: `#f-${name}`, text: f.label }) : h('strong', { text: name || 'the inputs' }));
        note.appendChild(document.createTextNode(`: ${cut(errors[name])}`));
    });
    note.appendChild(document.createTextNode('.'));
}

/* Back from an error: the verdict of the answer on screen. */
function renderVerdictState(plan) {
    if (plan) renderVerdict(plan, page.lastMargin);
    else {
        $('#verdict-bar').dataset.state = 'none';
        $('#verdict').className = 'verdict';
        $('#verdict').textContent = `${DASH} waiting for the first estimate`;
    }
}

/* ------------------------------------------------------------------ */
/* rendering                                                            */
/* ------------------------------------------------------------------ */

/* The worst pipeline stage, when the answer has stages. */
export function worstStage(m) {
    const st = Array.isArray(m.stages) ? m.stages : [];
    if (!st.length) return null;
    const i = isNum(m.worst_stage) ? m.worst_stage : 0;
    return st.find((s) => s.stage === i) || st[i] || null;
}

/* fits / tight / nofit, from the API's verdict and the user's margin. */
export function fitState(m, margin) {
    if (typeof m.fits !== 'boolean') return 'none';
    if (!m.fits) return 'nofit';
    const ws = worstStage(m);
    const head = ws && isNum(ws.headroom) ? ws.headroom : m.headroom_bytes;
    if (isNum(head) && isNum(m.hbm_bytes) && m.hbm_bytes > 0 && head < margin * m.hbm_bytes) return 'tight';
    return 'fits';
}

export function modelLine(plan) {
    const p = plan.params || {};
    const inputs = plan.inputs || {};
    const preset = presetById(inputs.model);
    let name = preset ? (overriddenPreset(page.state) ? `Custom (from ${preset.name})` : preset.name) : (page.customFrom && presetById(page.customFrom)
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

export function renderParams(plan) {
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

export function renderVerdict(plan, margin) {
    page.lastMargin = margin;
    const m = plan.memory || {};
    const v = $('#verdict');
    const d = $('#verdict-detail');
    const state = fitState(m, margin);
    $('#verdict-bar').dataset.state = state;
    renderGlance(plan, state);
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
    let t;
    if (m.fits) t = `${total} of ${hbm} per GPU; ${headText} headroom${pct}`;
    else {
        /* "short by 1.25 TiB (1605.5 % of HBM)" reads badly: past twice
         * the HBM, say how many times the HBM the need is (issue 27, item 7) */
        const need = ws && isNum(ws.total) ? ws.total : valueOf(m, 'memory', 'total');
        const times = isNum(need) && isNum(m.hbm_bytes) && m.hbm_bytes > 0 ? need / m.hbm_bytes : NaN;
        const short = headText.replace(/^-/, '');
        t = times >= 2
            ? `${total} per GPU, ${times < 10 ? times.toFixed(1) : Math.round(times)}× the ${hbm} of HBM; short by ${short}`
            : `${total} per GPU needs more than ${hbm}; short by ${short}${isNum(head) && m.hbm_bytes > 0 ? ` (${fmtPct(Math.abs(head) / m.hbm_bytes)} over HBM)` : ''}`;
    }
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

/* "NVIDIA H100 SXM5 80GB" -> "H100 80GB": the vendor, the default SXM
 * form factor and asides go; PCIe and NVL stay (other parts). */
export function gpuShort(id) {
    const want = String(id || '').toLowerCase();
    const g = page.gpus.find((x) => x.id === want || (Array.isArray(x.aliases) && x.aliases.includes(want)));
    if (!g || typeof g.name !== 'string') return { short: String(id || DASH), full: String(id || DASH) };
    const short = g.name.replace(/^(NVIDIA|AMD)\s+/, '').replace(/\b(SXM\d?|Instinct)\s+/g, '')
        .replace(/\s*\([^)]*\)/g, '').replace(/\s+/g, ' ').trim();
    return { short, full: g.name };
}

/*
 * The answer at a glance (issue 27): the hardware, the headroom, the step
 * time, MFU, wall-clock and the cost when a price is set, each the API's
 * text, in the sticky bar beside the verdict.
 */
function renderGlance(plan, state) {
    const g = $('#glance');
    clearNode(g);
    const i = plan.inputs || {};
    const m = plan.memory || {};
    const c = plan.compute || {};
    const items = [];
    const hw = gpuShort(i.gpu);
    if (isNum(i.gpus)) items.push(['g-hw', `${i.gpus} × ${hw.short}`, hw.full]);
    const ws = worstStage(m);
    const headText = ws ? textOf(ws, 'memory.stages[]', 'headroom') : textOf(m, 'memory', 'headroom_bytes');
    const head = ws && isNum(ws.headroom) ? ws.headroom : m.headroom_bytes;
    if (headText !== DASH) {
        const pct = isNum(head) && isNum(m.hbm_bytes) && m.hbm_bytes > 0 ? ` (${fmtPct(Math.abs(head) / m.hbm_bytes)})` : '';
        items.push(['g-mem', state === 'nofit' ? `short by ${headText.replace(/^-/, '')}` : `${headText} free${pct}`,
            `headroom per GPU of the ${textOf(m, 'memory', 'hbm_bytes')} HBM`]);
    }
    const step = textOf(c, 'compute', 'step_time') !== DASH ? textOf(c, 'compute', 'step_time') : textOf(c, 'compute', 'step_seconds');
    if (step !== DASH) items.push(['g-step', `${step}/step`, 'time per optimizer step']);
    if (textOf(c, 'compute', 'mfu') !== DASH) items.push(['g-mfu', `MFU ${textOf(c, 'compute', 'mfu')}`, c.mfu_source === 'predicted' ? 'predicted MFU' : 'the MFU given']);
    if (textOf(c, 'compute', 'wall_seconds') !== DASH) items.push(['g-days', textOf(c, 'compute', 'wall_seconds'), 'wall-clock for the run, every GPU busy']);
    if (c.cost_usd !== undefined && isNum(i.gpu_hour_usd) && i.gpu_hour_usd > 0) {
        items.push(['g-cost', textOf(c, 'compute', 'cost_usd'), 'GPU time at the price per GPU-hour']);
    }
    items.forEach(([id, text, title], k) => {
        if (k) g.appendChild(h('span', { class: 'sep', 'aria-hidden': 'true', text: ' · ' }));
        g.appendChild(h('span', { id, class: 'gl', title, text }));
    });
}

export function renderWarnings(plan, state, margin) {
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
    /* the step-time model's own warnings (compute.warnings: text) */
    const apiw = plan.compute && Array.isArray(plan.compute.warnings) ? plan.compute.warnings : [];
    apiw.filter((w) => typeof w === 'string' && w).forEach((w, i) => list.push({ id: `w-step-${i}`, text: w[0].toUpperCase() + w.slice(1) + '.' }));
    /* what the API read otherwise than asked (import_notes of a plan the
     * page sent without imports: a default that follows the GPU, a model
     * name read as another organisation's copy) */
    const notes = Array.isArray(plan.import_notes) ? plan.import_notes : [];
    notes.filter((n) => typeof n === 'string' && n).forEach((n, i) => list.push({ id: `w-note-${i}`, text: n[0].toUpperCase() + n.slice(1) + '.' }));
    /* a count in the bar; the list opens under it (issue 27: warnings do
     * not push the first screen down) */
    const ul = $('#warnings');
    const box = $('#warn-box');
    clearNode(ul);
    for (const w of list) ul.appendChild(h('li', { id: w.id, text: `⚠ ${w.text}` }));
    box.hidden = list.length === 0;
    if (!list.length) box.open = false;
    $('#warn-count').textContent = `⚠ ${list.length} warning${list.length === 1 ? '' : 's'}`;
    return list;
}
