/*
 * lib.mjs - what the dashboard's end-to-end suites share: the server
 * (started on 127.0.0.1, port 0, web/ as its web root), headless Debian
 * Chromium, page helpers and the checks that compare the page with the
 * API's answer for the same body.  Each suite file (e2e*.mjs) calls
 * runSuite(name, fn).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, '..', '..');
export const ARTIFACTS = join(HERE, 'artifacts');
export const SERVER = process.argv[2] || process.env.TRAINSIZE_SERVER;
export const STEP_TIMEOUT_MS = 10000;
/* each suite file; a loaded 2-core machine needs the margin */
export const RUN_TIMEOUT_MS = Number(process.env.TRAINSIZE_E2E_TIMEOUT_S || 300) * 1000;
export const AXE_SRC = readFileSync(join(HERE, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
export const DESKTOP = { width: 1366, height: 900 };
export const PHONE = { width: 390, height: 844 };
export const DESKTOP_H = DESKTOP.height;

/* What the page sends on a first visit: only the fields it sets, numbers
 * as JSON numbers (web/form.js DEFAULT_STATE; see the task: llama3-8b on
 * 8x h100-sxm, ZeRO 1). */
export const DEFAULT_BODY = { model: 'llama3-8b', gpus: 8, zero: 1, recompute: 'full', gpu: 'h100-sxm' };

export const results = { passed: 0, failed: 0 };
export const consoleProblems = [];
/* A 400 answer makes Chromium log "Failed to load resource ... 400"; that
 * is expected only while a check deliberately enters bad input. */
export const env = { expectBadRequests: false };

export function log(...a) {
    process.stdout.write(a.join(' ') + '\n');
}

/* TRAINSIZE_E2E_ONLY=regex runs only the checks whose names match (while
 * working on one; later checks may rely on state earlier ones left). */
const ONLY = process.env.TRAINSIZE_E2E_ONLY ? new RegExp(process.env.TRAINSIZE_E2E_ONLY) : null;

export async function check(name, fn) {
    if (ONLY && !ONLY.test(name)) return;
    env.current = name;
    const t0 = Date.now();
    try {
        await fn();
        results.passed++;
        log(`ok   ${name} (${Date.now() - t0} ms)`);
    } catch (e) {
        results.failed++;
        log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    }
}

/* ------------------------------------------------------------------ */
/* the server                                                           */
/* ------------------------------------------------------------------ */

export function startServer() {
    const args = ['--port', '0', '--bind', '127.0.0.1', '--web-root', join(ROOT, 'web')];
    const openapi = join(ROOT, 'api', 'openapi.json');
    if (existsSync(openapi)) args.push('--openapi', openapi);
    const child = spawn(SERVER, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    return new Promise((res, rej) => {
        const timer = setTimeout(() => rej(new Error(`server did not print its address in 10 s; output:\n${out}`)), 10000);
        const onData = (d) => {
            out += d.toString();
            const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
            if (m) {
                clearTimeout(timer);
                res({ child, base: m[1] });
            }
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        child.on('error', (e) => {
            clearTimeout(timer);
            rej(e);
        });
        child.on('exit', (code) => {
            clearTimeout(timer);
            rej(new Error(`server exited (${code}) before listening; output:\n${out}`));
        });
    });
}

export async function api(base, path, body) {
    const r = await fetch(base + path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
    });
    return { status: r.status, data: await r.json() };
}

/* ------------------------------------------------------------------ */
/* page helpers                                                         */
/* ------------------------------------------------------------------ */

export function watch(page, label) {
    page.on('console', (msg) => {
        if (msg.type() !== 'error' && msg.type() !== 'warning') return;
        const text = msg.text();
        if (env.expectBadRequests && /status of 40[04]/.test(text)) return;
        if (msg.type() === 'error') consoleProblems.push(`${label} console: ${text} (${msg.location().url || 'no url'}; during: ${env.current || '?'})`);
    });
    page.on('pageerror', (e) => consoleProblems.push(`${label} pageerror: ${e.message}`));
}

/* Wait until the results reflect exactly this request body. */
export async function waitForBody(page, body, status) {
    /* key order does not matter, values and the key set do */
    const want = JSON.stringify(Object.entries(body).sort());
    await page.waitForFunction(([w, s]) => {
        const r = document.getElementById('results');
        if (!r || !r.dataset.request || r.hasAttribute('aria-busy')) return false;
        const got = JSON.stringify(Object.entries(JSON.parse(r.dataset.request)).sort());
        return got === w && (s ? r.dataset.status === s : r.dataset.status !== 'loading');
    }, [want, status], { timeout: STEP_TIMEOUT_MS }).catch(async (e) => {
        const got = await page.evaluate(() => {
            const r = document.getElementById('results');
            return r ? `${r.dataset.status} ${r.dataset.request}` : 'no #results';
        });
        throw new Error(`results never showed ${JSON.stringify(body)} (${status}); page has ${got}: ${e.message}`);
    });
}

export async function text(page, sel) {
    return (await page.locator(sel).first().textContent()).trim();
}

export async function bodyText(page) {
    return page.evaluate(() => document.body.innerText);
}

export function noJunk(s, where) {
    for (const bad of ['NaN', 'undefined', 'Infinity', '[object Object]']) {
        assert.ok(!s.includes(bad), `${where} shows "${bad}"`);
    }
}

/* Every text the answer carries for people: terms' "human", the objects'
 * "human" maps, "*_human" members (api/ts_terms.c, docs/terms.md). */
export function answerTexts(a) {
    const out = new Set();
    const walk = (o) => {
        if (Array.isArray(o)) return o.forEach(walk);
        if (!o || typeof o !== 'object') return;
        for (const [k, v] of Object.entries(o)) {
            if (typeof v === 'string' && (k === 'human' || k.endsWith('_human'))) out.add(v);
            else if (k === 'human' && v && typeof v === 'object') Object.values(v).forEach((t) => out.add(t));
            else walk(v);
        }
    };
    walk(a);
    return out;
}

/*
 * What the checks below read from the page, gathered in the page in one
 * call (a CDP round trip per figure made the every-preset check take
 * most of the e2e stage).  Self-contained: it runs in the browser, also
 * from inside page.evaluate loops (see snapshotSource).
 */
export function pageSnapshot() {
    const byId = {};
    /* the figures, the verdict, the model lines and the fields' errors */
    for (const n of document.querySelectorAll('.figs .v[id], #verdict, #verdict-model, #params-total, #preset-info, .field-error[id]')) {
        byId[n.id] = n.textContent.trim();
    }
    return {
        byId,
        figs: [
            ...[...document.querySelectorAll('.figs .v')].map((v) => [v.id, v.textContent.trim()]),
            ...[...document.querySelectorAll('#stages tbody td:not(:nth-child(2)):not(:last-child), #tiers tbody tr[data-tier] td')]
                .map((td) => [td.closest('tr').dataset.stage !== undefined ? 'stage' : 'tier', td.textContent.trim()]),
        ],
        tiers: [...document.querySelectorAll('#tiers tbody tr[data-tier]')].map((tr) => [...tr.querySelectorAll('th,td')].map((c) => c.textContent)),
        sweepBars: document.querySelectorAll('#sweep g[data-dp]').length,
        memBarHbm: document.querySelectorAll('#mem-bar line[data-hbm]').length,
        body: document.body.innerText,
    };
}
/* The same as source text, for page.evaluate(`(${snapshotSource})()`)
 * and for loops that define it in the page. */
export const snapshotSource = pageSnapshot.toString();

/* Every figure on the page (and every stage and tier cell) shows one of
 * the answer's own texts: parts of a composite ("16 B = 2 B + ...") each
 * one, a warning mark or a "per node" after it, or the dash of a missing
 * figure; nothing the page formatted itself. */
export function snapshotOnlyApiTexts(snap, plan) {
    const texts = answerTexts(plan);
    const shown = snap.figs;
    assert.ok(shown.length > 40, `${shown.length} figures on the page`);
    for (const [id, t] of shown) {
        if (t.startsWith('—')) continue;
        const bare = t.replace(/ ⚠.*$/, '').replace(/ per node$/, '');
        for (const part of bare.split(/ = | \+ /)) {
            assert.ok(texts.has(part), `${id} shows "${part}" (of "${t}"), which is none of the answer's texts`);
        }
    }
}

export async function assertOnlyApiTexts(page, plan) {
    snapshotOnlyApiTexts(await page.evaluate(pageSnapshot), plan);
}

/* The page (a snapshot of it) against the API's answer for the same body. */
export function snapshotMatchesApi(snap, plan, where = 'page') {
    const m = plan.memory, c = plan.compute, k = plan.checkpoint;
    const t = (id) => (id in snap.byId ? snap.byId[id] : `(no #${id} on the ${where})`);
    const eq = (id, want, what) => assert.equal(t(id), want, `${where}: ${what}`);
    eq('mem-total', m.total.human, 'per-GPU total');
    for (const x of ['weights', 'grads', 'master', 'optimizer', 'activations', 'buffers', 'overhead'].filter((x) => m[x])) {
        eq(`mem-${x}`, m[x].human, `memory term ${x}`);
    }
    eq('mem-headroom', m.human.headroom_bytes, 'headroom');
    eq('mem-hbm', m.human.hbm_bytes, 'HBM');
    eq('cmp-gpu-hours', c.gpu_hours.human, 'GPU-hours');
    eq('cmp-flops', c.model_flops.human, 'model FLOPs');
    eq('cmp-days', c.wall_seconds.human, 'wall-clock');
    eq('cmp-tps', c.human.tokens_per_second, 'tokens/s');
    eq('cmp-mfu', c.human.mfu, 'MFU');
    eq('cmp-hfu', c.human.hfu, 'HFU');
    eq('ck-full', k.full_bytes.human, 'full checkpoint');
    eq('ck-weights', k.weights_bytes.human, 'weights-only checkpoint');
    eq('ck-shard', k.shard_bytes_per_gpu.human, 'per-GPU shard');
    eq('ck-young', k.young_interval_s.human, 'Young interval');
    eq('ck-daly', k.daly_interval_s.human, 'Daly interval');
    eq('ck-waste', k.waste_fraction.human, 'waste fraction');
    assert.equal(snap.tiers.length, k.tiers.length, `${where}: one row per checkpoint tier`);
    snap.tiers.forEach((cells, i) => {
        const tier = k.tiers[i];
        assert.equal(cells[0], tier.name, 'tier name');
        assert.equal(cells[2], tier.human.write_s, `${where}: ${tier.name} write time`);
        assert.ok(cells[6].startsWith(tier.human.storage_bytes), `${where}: ${tier.name} storage`);
    });
    const verdict = t('verdict');
    assert.ok(m.fits ? /^(✓ FITS|⚠ TIGHT)$/.test(verdict) : verdict === '✗ DOES NOT FIT', `${where}: fit verdict ${verdict}`);
    eq('params-total', `${plan.params.human.total} parameters`, 'model parameter count');
    assert.ok(t('verdict-model').includes(`${plan.params.human.total} parameters`), `${where}: count in the verdict`);
    eq('cmp-gpu-years', c.human.gpu_years, 'GPU-years');
    const dps = new Set(plan.sweep.map((p) => p.dp));
    assert.equal(snap.sweepBars, dps.size, `${where}: one sweep bar per dp`);
    assert.equal(snap.memBarHbm, 1, `${where}: HBM line on the bar`);
    snapshotOnlyApiTexts(snap, plan);
    noJunk(snap.body, where);
}

export async function assertMatchesApi(page, plan) {
    snapshotMatchesApi(await page.evaluate(pageSnapshot), plan);
}

/* Set one control; text fields are typed like a user would. */
export async function setField(page, name, value) {
    const sel = `#f-${name}`;
    const tag = await page.locator(sel).evaluate((n) => n.tagName);
    if (tag === 'SELECT') {
        await page.selectOption(sel, value);
    } else {
        await page.fill(sel, value);
    }
}

/* ------------------------------------------------------------------ */
/* axe, screenshots, both widths                                        */
/* ------------------------------------------------------------------ */

export const axeSummary = [];

/* axe-core in this state at both widths, and a screenshot of each. */
export async function auditState(page, state) {
    for (const [vp, tag] of [[DESKTOP, 'desktop'], [PHONE, 'phone']]) {
        await page.setViewportSize(vp);
        await page.waitForTimeout(220); /* charts redraw 150 ms after a resize */
        const has = await page.evaluate(() => typeof window.axe === 'object');
        if (!has) await page.evaluate(AXE_SRC);
        const res = await page.evaluate(async () => {
            const r = await window.axe.run(document, { resultTypes: ['violations'] });
            return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 4).join(', ')})`);
        });
        axeSummary.push(`${state}@${tag}: ${res.length}`);
        /* The screenshot is an artifact for a person, not a check: on a
         * starved 2-core CI machine Chromium once took over 30 s to give
         * one ("search", fonts loaded, no frame), failing a run whose axe
         * audit had passed.  A miss is named in the summary instead. */
        try {
            await page.screenshot({ path: join(ARTIFACTS, `${state}-${tag}.png`), timeout: 20000 });
        } catch (e) {
            axeSummary.push(`${state}@${tag} screenshot not taken (${String(e.message).split('\n')[0]})`);
        }
        assert.deepEqual(res, [], `axe violations in "${state}" at ${vp.width}x${vp.height}`);
    }
    await page.setViewportSize(DESKTOP);
    await page.waitForTimeout(200);
}

export async function apiStatus(base, path, body) {
    const r = await fetch(base + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    let data = null;
    try { data = await r.json(); } catch { data = null; }
    return { status: r.status, data };
}

export function overlaps(a, b) {
    return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/* Llama 3 8B's released config.json (facts from meta-llama/Meta-Llama-3-8B). */
export const LLAMA3_8B_HF = {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 4096, intermediate_size: 14336,
    num_attention_heads: 32, num_hidden_layers: 32, num_key_value_heads: 8, vocab_size: 128256,
    max_position_embeddings: 8192, rms_norm_eps: 1e-5, rope_theta: 500000.0, tie_word_embeddings: false,
    hidden_act: 'silu', torch_dtype: 'bfloat16',
};

/* ------------------------------------------------------------------ */
/* the run                                                              */
/* ------------------------------------------------------------------ */

/* POST /v1/search as the page shows it: with the headroom margin (10 %
 * by default) where the server takes "margin", else without it and the
 * results under the margin left out (web/solve.js underMargin). */
export async function searchAsPage(base, body, margin = 0.1) {
    const withMargin = await apiStatus(base, '/v1/search', { ...body, margin });
    if (withMargin.status !== 400) return withMargin;
    const r = await apiStatus(base, '/v1/search', body);
    if (r.status === 200) {
        const hbm = r.data.inputs.hbm_gb * 1e9;
        r.data.results = r.data.results.filter((x) => x.headroom_bytes >= margin * hbm);
    }
    return r;
}

export async function auditStateCheck(page, state) {
    await check(`axe-core: 0 violations in "${state}" at 1366x900 and 390x844 (screenshots saved)`, () => auditState(page, state));
}

/* No horizontal overflow: the page is no wider than the viewport it was
 * given.  (Not innerWidth: a mobile viewport widens to the content.) */
export async function assertNoOverflow(page, where) {
    const vw = page.viewportSize().width;
    const m = await page.evaluate(() => ({ scroll: document.scrollingElement.scrollWidth, inner: window.innerWidth }));
    assert.ok(m.scroll <= vw && m.inner <= vw, `${where}: page is ${m.scroll}px wide (innerWidth ${m.inner}) in a ${vw}px viewport`);
}

export async function launch() {
    return chromium.launch({
        executablePath: '/usr/bin/chromium',
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
            '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
}

/* A browser context that records CSP violations from the first byte on. */
export async function newContext(browser, opts = {}) {
    const ctx = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true, ...opts });
    await ctx.addInitScript(() => {
        window.__csp = [];
        document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    return ctx;
}

/* Run one suite: fn({ child, base, browser }) with a whole-run guard;
 * prints "<name>: N passed, M failed" and exits non-zero on a failure. */
export function runSuite(name, fn) {
    let child = null;
    const guard = setTimeout(() => {
        log(`${name}: run exceeded ${RUN_TIMEOUT_MS / 1000} s`);
        log(`${name}: ${results.passed} passed, ${results.failed + 1} failed`);
        if (child) child.kill('SIGTERM');
        process.exit(1);
    }, RUN_TIMEOUT_MS);
    const go = async () => {
        if (!SERVER) throw new Error('usage: node <suite>.mjs <path to trainsize-server> (or set TRAINSIZE_SERVER)');
        if (!existsSync(SERVER)) throw new Error(`no server binary at ${SERVER}`);
        mkdirSync(ARTIFACTS, { recursive: true });
        const srv = await startServer();
        child = srv.child;
        log(`server at ${srv.base}`);
        const browser = await launch();
        try {
            await fn({ child: srv.child, base: srv.base, browser });
        } finally {
            await browser.close();
            srv.child.kill('SIGTERM');
        }
    };
    go().then(() => {
        clearTimeout(guard);
        log(`${name}: ${results.passed} passed, ${results.failed} failed`);
        process.exit(results.failed === 0 ? 0 : 1);
    }, (e) => {
        clearTimeout(guard);
        if (child) child.kill('SIGTERM');
        log(`FAIL setup: ${e && e.stack ? e.stack : e}`);
        log(`${name}: ${results.passed} passed, ${results.failed + 1} failed`);
        process.exit(1);
    });
}
