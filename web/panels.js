/*
 * panels.js - the answer's panels: memory (terms, phases, stages), compute
 * and its step breakdown, checkpoints and tiers, the sweep chart, and the
 * legends and table heads they share.  Every figure is the API's text for
 * it (format.js textOf), labelled by the output-terms table.
 */
import { TERMS, drawDays, drawMemoryBar, drawPhases, drawStages, drawSweep, timedPoints } from './charts.js';
import { $, clearNode, fig, fill, h } from './dom.js';
import { DASH, fmtBytes, fmtPct, fmtSeconds, isNum, labelOf, textOf, valueOf } from './format.js';
import { CKPT_WASTE_WARN, PHASE, STAGE, TIER, page } from './state.js';
import { renderStep } from './stepbar.js';
import { worstStage } from './verdict.js';

/* The columns of the stage and tier tables: members of those objects. */
export const STAGE_COLS = ['weights', 'grads', 'master', 'optimizer', 'activations', 'buffers', 'total', 'headroom'];
export const TIER_COLS = ['interval_s', 'write_s', 'restore_s', 'bandwidth_per_writer', 'keep', 'storage_bytes', 'overhead_fraction'];

export function renderMemory(m) {
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
    drawMemoryPictures(m);
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

/* Cost without a price: the API answers 0.00 USD; the page says there is
 * no price instead (issue 27, item 7). */
export function costText(c, inputs) {
    const price = inputs ? inputs.gpu_hour_usd : undefined;
    if (!isNum(price) || price <= 0) return `${DASH} no price: set Price per GPU-hour`;
    return null;
}

/* The phase and stage bars (charts.js) and their captions, their text
 * alternatives.  Laid out in pixels: redrawn on resize too. */
export function drawMemoryPictures(m) {
    const phases = Array.isArray(m.phases) ? m.phases : [];
    const st = Array.isArray(m.stages) ? m.stages : [];
    /* hidden blocks have no width to lay out in: draw once they show */
    $('#phases-block').hidden = phases.length === 0;
    $('#stages-block').hidden = st.length === 0;
    $('#phase-cap').textContent = phases.length ? drawPhases($('#phase-bars'), m, worstStage(m)) : '';
    $('#stage-cap').textContent = st.length ? drawStages($('#stage-bars'), m) : '';
}

export function renderCompute(c, inputs) {
    const C = 'compute';
    /* hardware FLOPs are on the 6 N D basis plus recompute, the
     * attention-aware model FLOPs add the attention matmuls: say why the
     * first can be the smaller */
    const hw = valueOf(c, C, 'hardware_flops'), attn = valueOf(c, C, 'model_flops_attn');
    const hwRow = fig('cmp-hw-flops', c, C, 'hardware_flops');
    if (isNum(hw) && isNum(attn) && hw < attn) {
        hwRow[1].insertBefore(h('span', { class: 'why muted', text: ' counts no attention matmuls (the attention-aware figure above does)' }),
            hwRow[1].querySelector('details'));
    }
    const rows = [
        fig('cmp-flops', c, C, 'model_flops'),
        fig('cmp-flops-attn', c, C, 'model_flops_attn'),
        hwRow,
        fig('cmp-gpu-hours', c, C, 'gpu_hours'),
        fig('cmp-gpu-years', c, C, 'gpu_years'),
        fig('cmp-days', c, C, 'wall_seconds'),
    ];
    if (c.cost_usd !== undefined) {
        const none = costText(c, inputs);
        rows.push(fig('cmp-cost', c, C, 'cost_usd', none ? { text: none } : {}));
    }
    /* one step time and one MFU: the predicted ones when they are what the
     * time uses, both only when an MFU was given and they differ */
    const predicted = c.mfu_source === 'predicted';
    const stepShown = c.step_time !== undefined;
    if (stepShown) rows.push(fig('cmp-step-time', c, C, 'step_time'));
    if (c.predicted_mfu !== undefined && !predicted) rows.push(fig('cmp-pred-mfu', c, C, 'predicted_mfu'));
    rows.push(
        fig('cmp-tps', c, C, 'tokens_per_second'),
        fig('cmp-tpgs', c, C, 'tokens_per_gpu_second'),
        fig('cmp-mfu', c, C, 'mfu', { label: `${labelOf(C, 'mfu')}${predicted ? ' (predicted)' : ' (as given)'}` }),
        fig('cmp-hfu', c, C, 'hfu'),
        fig('cmp-peak', c, C, 'peak_flops'),
        fig('cmp-tokens', c, C, 'tokens'),
        fig('cmp-steps', c, C, 'steps'),
    );
    if (!stepShown || textOf(c, C, 'step_seconds') !== textOf(c, C, 'step_time')) {
        rows.push(fig('cmp-step-seconds', c, C, 'step_seconds'));
    }
    fill($('#compute-figs'), rows);

    renderStep(c);
}

export function renderCheckpoint(k) {
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
export function redrawCharts() {
    const plan = page.lastPlan;
    if (!plan) return;
    drawMemoryBar($('#mem-bar'), plan.memory);
    drawMemoryPictures(plan.memory || {});
    renderSweep(plan);
    if (plan.compute && plan.compute.step) renderCompute(plan.compute, plan.inputs);
}

export function renderSweep(plan) {
    const i = plan.inputs || {};
    const tp = isNum(i.tp) ? i.tp : 1, pp = isNum(i.pp) ? i.pp : 1, cp = isNum(i.cp) ? i.cp : 1;
    const fixed = { other: tp * pp * cp, text: `tp ${tp}, pp ${pp}, cp ${cp}` };
    const m = plan.memory || {};
    const cap = drawSweep($('#sweep'), plan.sweep, m.hbm_bytes, i.dp, fixed, textOf(m, 'memory', 'hbm_bytes'));
    $('#sweep-cap').textContent = cap;
    renderDays(plan);
}

/* Wall-clock against the GPU count (sweep[].wall_seconds), the chart and
 * the same points as a table; the run's own point in the answer's text. */
function renderDays(plan) {
    const pts = timedPoints(plan.sweep);
    const block = $('#days-block');
    block.hidden = pts.length < 2;
    if (block.hidden) return;
    const i = plan.inputs || {};
    const c = plan.compute || {};
    const runText = textOf(c, 'compute', 'wall_seconds');
    $('#days-cap').textContent = drawDays($('#days'), plan.sweep, i.dp, runText === DASH ? '' : runText);
    const body = $('#days-table tbody');
    clearNode(body);
    for (const p of pts) {
        const own = p.dp === i.dp;
        body.appendChild(h('tr', { 'data-dp': p.dp, class: own ? 'worst' : null },
            h('th', { scope: 'row', text: `${p.gpus}${own ? ' (this run)' : ''}` }),
            h('td', { text: String(p.dp) }),
            h('td', { text: own && runText !== DASH ? runText : fmtSeconds(p.wall_seconds) }),
            h('td', { text: fmtSeconds(p.step_seconds) }),
            h('td', { text: fmtPct(p.mfu) }),
            h('td', { text: fmtBytes(p.total) }),
            h('td', { text: p.fits ? 'yes' : 'no' })));
    }
}

/* The stage and tier tables' column heads: the terms table's labels. */
export function renderTableHeads() {
    const head = (sel, labels) => {
        const t = $(`${sel} thead`);
        clearNode(t);
        t.appendChild(h('tr', {}, ...labels.map((l) => h('th', { scope: 'col', text: l }))));
    };
    head('#stages', ['Stage', 'Layers', ...STAGE_COLS.map((k) => labelOf(STAGE, k)), 'Fits']);
    head('#tiers', ['Tier', ...TIER_COLS.map((k) => labelOf(TIER, k))]);
    head('#days-table', ['GPUs', 'dp', 'Wall-clock', 'Step time', 'MFU', 'Memory per GPU', 'Fits']);
}

export function renderLegend() {
    for (const ul of document.querySelectorAll('ul.legend')) {
        clearNode(ul);
        for (const t of TERMS) {
            ul.appendChild(h('li', {}, h('span', { class: `swatch sw-${t.key}`, 'aria-hidden': 'true' }),
                t.label + (t.pattern ? ` (${({ diag: 'striped', cross: 'cross-hatched', dots: 'dotted', vlines: 'vertical lines' })[t.pattern]})` : '')));
        }
        ul.appendChild(h('li', {}, h('span', { class: 'swatch hbm', 'aria-hidden': 'true' }), 'GPU HBM (dashed)'));
    }
}

