/*
 * app.js - the dashboard: form <-> URL state <-> POST /v1/plan <-> panels.
 *
 * All estimation is the API's; the modules only build request bodies from
 * what the user set, and lay out the answer: every figure is the API's
 * text for it, labelled and explained by the output-terms table
 * (terms.js, generated from api/ts_terms.c; format.js textOf).  One
 * in-flight plan request at a time: a newer input aborts the older fetch.
 * While a field does not parse, or the API rejects the inputs, the verdict
 * says so, the last good answer stays on screen marked as stale and the
 * error sits at the field.
 *
 * This file: the state flow and start-up.  The form is formui.js, the
 * verdict bar verdict.js, the panels panels.js, the solvers solve.js,
 * import importer.js, comparison compare.js, downloads exporter.js.
 */
import { pin, renderCompare } from './compare.js';
import { watchWidths } from './charts.js';
import { $ } from './dom.js';
import { chartSvg, download, exportPng, termsCsv } from './exporter.js';
import { DEFAULT_STATE, SHAPE_FIELDS, queryFromState, stateFromQuery } from './form.js';
import { shellQuote } from './format.js';
import {
    buildForm, clearErrors, customFromLink, overriddenPreset, presetById, problemErrors, readForm, relabelGpus, showFailure, showFieldErrors,
    showModeFields, showPresetInfo, showResolved, toCustom, tokensInput, writeForm,
} from './formui.js';
import { budgetFromQuery, budgetQuery, buildBudget, runBudget } from './budget.js';
import { gpusChanged, redrawGpus, runTryGpus } from './gpus.js';
import { renderImported, runImport } from './importer.js';
import {
    redrawCharts, renderCheckpoint, renderCompute, renderLegend, renderMemory, renderSweep, renderTableHeads,
} from './panels.js';
import { applyFields, redrawFit, renderSearch, runFit, runSearch } from './solve.js';
import { IMPORT_KINDS, TEXT_KINDS, hooks, page, postJson, requestFor } from './state.js';
import { buildUnits, unitsFromQuery, unitsQuery } from './units.js';
import { markStale, renderParams, renderVerdict, renderWarnings } from './verdict.js';

const DEBOUNCE_MS = 200;
/* v2: catalogue entries carry their "human" texts (older copies do not) */
const CATALOGUE_KEY = 'trainsize.catalogues.v2';

function renderPlan(plan, margin) {
    page.lastPlan = plan;
    const m = plan.memory || {};
    const state = renderVerdict(plan, margin);
    renderWarnings(plan, state, margin);
    renderParams(plan);
    renderMemory(m);
    renderCompute(plan.compute || {}, plan.inputs);
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
/* ------------------------------------------------------------------ */
/* state flow                                                           */
/* ------------------------------------------------------------------ */

function changed(now) {
    page.state = readForm();
    writeUrl();
    showPresetInfo();
    showModeFields();
    /* a solver answer belongs to the inputs it was asked about */
    if (page.fitCtl) page.fitCtl.abort();
    $('#fit-readout').textContent = '';
    delete $('#fit-readout').dataset.status;
    gpusChanged();
    clearTimeout(page.timer);
    if (now) runPlan();
    else page.timer = setTimeout(runPlan, DEBOUNCE_MS);
}

function importQuery() {
    const q = new URLSearchParams();
    for (const k of IMPORT_KINDS) if (page.state[k]) q.set(k, page.state[k]);
    return q.toString();
}

/* The link holds every setting: the run, imports, the page's units. */
function writeUrl() {
    const q = [queryFromState(page.state), importQuery(), unitsQuery(), budgetQuery()].filter(Boolean).join('&');
    history.replaceState(null, '', `${location.pathname}?${q}`);
}

/* GB <-> GiB: the answers on screen laid out again in the new units. */
function unitsChanged() {
    if (page.lastPlan) {
        renderPlan(page.lastPlan, page.lastMargin);
        if (page.lastErrors) markStale(page.lastErrors);
    }
    relabelGpus();
    redrawGpus();
    if (page.search) renderSearch();
    redrawFit();
    writeUrl();
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
    unitsFromQuery(location.search);
    page.budgetAsk = budgetFromQuery(location.search);
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
    const over = overriddenPreset(page.state);
    if (over) customFromLink(over);
    showPresetInfo();
    renderImported();
    await first;
    /* the custom copy is a new body: ask again (the first number is out) */
    if (over) changed(true);
    if (cached) fetchCatalogues().catch(() => {});
    if (page.lastPlan) {
        renderParams(page.lastPlan);
        showResolved(page.lastPlan.inputs);
        /* the GPU's name in the glance needs the catalogue */
        if (!page.lastErrors) renderVerdict(page.lastPlan, page.lastMargin);
    }
    /* errors of the first answer (a shared link with a bad value, client
     * side or the API's) arrived before the form existed: mark the fields */
    if (page.lastErrors) showFieldErrors(page.lastErrors);
    document.documentElement.dataset.ready = '1';

    const form = $('#run');
    form.addEventListener('input', (ev) => {
        /* the model search picks the preset through the select itself */
        if (ev.target.closest('#import') || ev.target.id === 'model-search') return;
        onInput(ev);
        changed(false);
    });
    /* text inputs already reported through "input"; selects apply at once */
    form.addEventListener('change', (ev) => {
        if (ev.target.closest('#import') || ev.target.id === 'model-search') return;
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
    $('#show-how').addEventListener('click', (ev) => {
        const on = ev.currentTarget.getAttribute('aria-pressed') !== 'true';
        ev.currentTarget.setAttribute('aria-pressed', String(on));
        $('#results').classList.toggle('show-how', on);
    });
    $('#fit-mb').addEventListener('click', () => runFit('micro_batch'));
    $('#fit-gpus').addEventListener('click', () => runFit('gpus'));
    $('#search-go').addEventListener('click', () => runSearch());
    $('#try-gpus').addEventListener('click', () => runTryGpus());
    buildBudget();
    /* a link's budget: asked once the run's answer (and its errors) are in */
    if (page.budgetAsk) runBudget();
    buildUnits(unitsChanged);
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
            $('#import-status').textContent = 'That file is over 1 MiB; a config is a few KiB (the server takes 64 KiB per request).';
            return;
        }
        $('#import-text').value = await file.text();
        if (/\.json$/i.test(file.name) && TEXT_KINDS.includes($('#import-kind').value)) $('#import-kind').value = 'hf_config';
        /* LLaMA-Factory's own keys tell its YAML from axolotl's */
        if (/\.ya?ml$/i.test(file.name)) {
            $('#import-kind').value = /^(model_name_or_path|finetuning_type|cutoff_len):/m.test($('#import-text').value)
                ? 'llamafactory_config' : 'axolotl_config';
        }
    };
    $('#import-file').addEventListener('change', (ev) => loadFile(ev.target.files[0]));
    const ta = $('#import-text');
    ta.addEventListener('dragover', (ev) => ev.preventDefault());
    ta.addEventListener('drop', (ev) => {
        ev.preventDefault();
        loadFile(ev.dataTransfer.files[0]);
    });

    /* a chart whose width changed (window, form built, scrollbar) is redrawn */
    watchWidths(() => {
        clearTimeout(page.resizeTimer);
        page.resizeTimer = setTimeout(redrawCharts, 150);
    });

    writeUrl();
}

hooks.changed = changed;
hooks.writeUrl = writeUrl;
hooks.applyFields = applyFields;
performance.mark('app-start');
main();
