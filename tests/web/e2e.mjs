/*
 * e2e.mjs - the dashboard in a real headless Chromium against the real
 * trainsize-server.
 *
 *   node tests/web/e2e.mjs <path to trainsize-server>   (or TRAINSIZE_SERVER)
 *
 * Builds nothing.  Starts the server on 127.0.0.1, port 0, with web/ as its
 * web root, drives the page with playwright-core and compares what the page
 * shows with what /v1 answers for the same body (fetched here, from node).
 * Prints "e2e: N passed, M failed" and exits non-zero on any failure.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { fmtBytes, fmtDays, fmtDuration, fmtPct, fmtRate } from '../../web/format.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const ARTIFACTS = join(HERE, 'artifacts');
const SERVER = process.argv[2] || process.env.TRAINSIZE_SERVER;
const STEP_TIMEOUT_MS = 10000;
const RUN_TIMEOUT_MS = 90000;

/* What the page sends on a first visit: only the fields it sets, numbers
 * as JSON numbers (web/fields.js DEFAULT_STATE; see the task: llama3-8b on
 * 8x h100-sxm, ZeRO 1). */
const DEFAULT_BODY = { model: 'llama3-8b', gpus: 8, zero: 1, recompute: 'full', gpu: 'h100-sxm' };

const results = { passed: 0, failed: 0 };
const consoleProblems = [];
/* A 400 answer makes Chromium log "Failed to load resource ... 400"; that
 * is expected only while a check deliberately enters bad input. */
let expectBadRequests = false;

function log(...a) {
    process.stdout.write(a.join(' ') + '\n');
}

async function check(name, fn) {
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

function startServer() {
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

async function api(base, path, body) {
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

function watch(page, label) {
    page.on('console', (msg) => {
        if (msg.type() !== 'error' && msg.type() !== 'warning') return;
        const text = msg.text();
        if (expectBadRequests && /status of 400/.test(text)) return;
        if (msg.type() === 'error') consoleProblems.push(`${label} console: ${text}`);
    });
    page.on('pageerror', (e) => consoleProblems.push(`${label} pageerror: ${e.message}`));
}

/* Wait until the results reflect exactly this request body. */
async function waitForBody(page, body, status) {
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

async function text(page, sel) {
    return (await page.locator(sel).first().textContent()).trim();
}

async function bodyText(page) {
    return page.evaluate(() => document.body.innerText);
}

function noJunk(s, where) {
    for (const bad of ['NaN', 'undefined', 'Infinity', '[object Object]']) {
        assert.ok(!s.includes(bad), `${where} shows "${bad}"`);
    }
}

/* Compare the page with the API's answer for the same body. */
async function assertMatchesApi(page, plan) {
    const m = plan.memory, c = plan.compute, k = plan.checkpoint;
    assert.equal(await text(page, '#mem-total'), m.total.human, 'per-GPU total');
    for (const t of ['weights', 'grads', 'master', 'optimizer', 'activations', 'overhead']) {
        assert.equal(await text(page, `#mem-${t}`), m[t].human, `memory term ${t}`);
    }
    assert.equal(await text(page, '#mem-headroom'), fmtBytes(m.headroom_bytes), 'headroom');
    assert.equal(await text(page, '#cmp-gpu-hours'), c.gpu_hours.human, 'GPU-hours');
    assert.equal(await text(page, '#cmp-flops'), c.model_flops.human, 'model FLOPs');
    assert.equal(await text(page, '#cmp-days'), fmtDays(c.wall_days), 'wall-clock days');
    assert.equal(await text(page, '#cmp-tps'), fmtRate(c.tokens_per_second, 'tokens/s'), 'tokens/s');
    assert.equal(await text(page, '#cmp-mfu'), `${fmtPct(c.mfu)} / ${fmtPct(c.hfu)}`, 'MFU / HFU');
    assert.equal(await text(page, '#ck-full'), k.full_bytes.human, 'full checkpoint');
    assert.equal(await text(page, '#ck-weights'), k.weights_bytes.human, 'weights-only checkpoint');
    assert.equal(await text(page, '#ck-shard'), k.shard_bytes_per_gpu.human, 'per-GPU shard');
    assert.equal(await text(page, '#ck-young'), k.young_interval_s.human, 'Young interval');
    assert.equal(await text(page, '#ck-daly'), k.daly_interval_s.human, 'Daly interval');
    assert.equal(await text(page, '#ck-waste'), fmtPct(k.waste_fraction.value), 'waste fraction');
    const rows = page.locator('#tiers tbody tr[data-tier]');
    assert.equal(await rows.count(), k.tiers.length, 'one row per checkpoint tier');
    for (let i = 0; i < k.tiers.length; i++) {
        const cells = await rows.nth(i).locator('th,td').allTextContents();
        const t = k.tiers[i];
        assert.equal(cells[0], t.name, 'tier name');
        assert.equal(cells[2], fmtDuration(t.write_s), `${t.name} write time`);
        assert.ok(cells[6].startsWith(fmtBytes(t.storage_bytes)), `${t.name} storage`);
    }
    const verdict = await text(page, '#verdict');
    assert.equal(verdict, m.fits ? '✓ FITS' : '✗ DOES NOT FIT', 'fit verdict');
    const dps = new Set(plan.sweep.map((p) => p.dp));
    assert.equal(await page.locator('#sweep g[data-dp]').count(), dps.size, 'one sweep bar per dp');
    assert.equal(await page.locator('#mem-bar line[data-hbm]').count(), 1, 'HBM line on the bar');
    noJunk(await bodyText(page), 'page');
}

/* Set one control; text fields are typed like a user would. */
async function setField(page, name, value) {
    const sel = `#f-${name}`;
    const tag = await page.locator(sel).evaluate((n) => n.tagName);
    if (tag === 'SELECT') {
        await page.selectOption(sel, value);
    } else {
        await page.fill(sel, value);
    }
}

/* ------------------------------------------------------------------ */
/* the run                                                              */
/* ------------------------------------------------------------------ */

async function main() {
    if (!SERVER) throw new Error('usage: node e2e.mjs <path to trainsize-server> (or set TRAINSIZE_SERVER)');
    if (!existsSync(SERVER)) throw new Error(`no server binary at ${SERVER}`);
    mkdirSync(ARTIFACTS, { recursive: true });

    const { child, base } = await startServer();
    log(`server at ${base}`);
    const browser = await chromium.launch({
        executablePath: '/usr/bin/chromium',
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
            '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
        const ctx = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
        const page = await ctx.newPage();
        watch(page, 'desktop');
        const fresh = await api(base, '/v1/plan', DEFAULT_BODY);

        await check('default page loads and shows a verdict', async () => {
            const resp = await page.goto(base + '/', { waitUntil: 'load' });
            assert.equal(resp.status(), 200);
            assert.match(resp.headers()['content-type'] || '', /text\/html/);
            await waitForBody(page, DEFAULT_BODY, 'ready');
            assert.match(await text(page, '#verdict'), /^(✓ FITS|✗ DOES NOT FIT)$/);
        });

        await check('static assets are served with their content types', async () => {
            for (const [p, type] of [['/app.js', /javascript/], ['/style.css', /text\/css/], ['/favicon.svg', /image\/svg\+xml/]]) {
                const r = await fetch(base + p);
                assert.equal(r.status, 200, p);
                assert.match(r.headers.get('content-type') || '', type, p);
            }
        });

        await check('default numbers equal the API answer for the same body', async () => {
            assert.equal(fresh.status, 200, JSON.stringify(fresh.data));
            await assertMatchesApi(page, fresh.data);
            await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });
        });

        await check('every figure has its formula on hover and in <details>', async () => {
            const m = fresh.data.memory;
            const title = await page.locator('#mem-total').getAttribute('title');
            assert.ok(title && title.includes(m.total.formula), 'title holds the formula');
            const dd = page.locator('#mem-total').locator('xpath=..');
            const code = await dd.locator('details.how code').textContent();
            assert.equal(code, m.total.formula);
            await dd.locator('details.how summary').click();
            assert.equal(await dd.locator('details.how').getAttribute('open'), '');
            const bare = await page.evaluate(() => [...document.querySelectorAll('.figs .v')]
                .filter((v) => !v.title || !v.parentElement.querySelector('details.how code, details.how p'))
                .map((v) => v.id));
            assert.deepEqual(bare, [], 'figures without a hover title or an expandable formula');
            const gh = page.locator('#cmp-gpu-hours').locator('xpath=..');
            assert.equal(await gh.locator('details.how code').textContent(), fresh.data.compute.gpu_hours.formula);
        });

        await check('every control has a label, keyboard focus is visible', async () => {
            const missing = await page.evaluate(() => [...document.querySelectorAll('#run input, #run select')]
                .filter((c) => !c.id || !document.querySelector(`label[for="${c.id}"]`)).map((c) => c.name || c.outerHTML));
            assert.deepEqual(missing, []);
            await page.focus('#f-model');
            await page.keyboard.press('Tab');
            const focus = await page.evaluate(() => {
                const a = document.activeElement;
                const s = getComputedStyle(a);
                return { id: a.id, tag: a.tagName, outline: s.outlineStyle, width: parseFloat(s.outlineWidth) };
            });
            assert.notEqual(focus.id, 'f-model', 'Tab moves focus on');
            assert.notEqual(focus.outline, 'none', `focused ${focus.id || focus.tag} has an outline`);
            assert.ok(focus.width >= 2, 'outline at least 2px');
            assert.equal(await page.locator('#verdict').getAttribute('aria-live'), 'polite');
        });

        await check('llama3-70b, ZeRO 0 on 8 GPUs: DOES NOT FIT (as the API says)', async () => {
            await setField(page, 'model', 'llama3-70b');
            await setField(page, 'zero', '0');
            const body = { model: 'llama3-70b', gpus: 8, zero: 0, recompute: 'full', gpu: 'h100-sxm' };
            await waitForBody(page, body, 'ready');
            const r = await api(base, '/v1/plan', body);
            assert.equal(r.data.memory.fits, false, 'the API agrees it does not fit');
            assert.equal(await text(page, '#verdict'), '✗ DOES NOT FIT');
            assert.match(await text(page, '#verdict-detail'), /short by/);
            await assertMatchesApi(page, r.data);
        });

        await check('llama3-70b, ZeRO 3 on 64 GPUs: FITS (as the API says)', async () => {
            await setField(page, 'zero', '3');
            await setField(page, 'gpus', '64');
            const body = { model: 'llama3-70b', gpus: 64, zero: 3, recompute: 'full', gpu: 'h100-sxm' };
            await waitForBody(page, body, 'ready');
            const r = await api(base, '/v1/plan', body);
            assert.equal(r.data.memory.fits, true, 'the API agrees it fits');
            assert.equal(await text(page, '#verdict'), '✓ FITS');
            assert.match(await text(page, '#verdict-detail'), /headroom/);
            await assertMatchesApi(page, r.data);
        });

        await check('typing fast sends one final request (debounce + abort)', async () => {
            const loc = page.locator('#f-micro_batch');
            await loc.click();
            await loc.pressSequentially('12', { delay: 30 });
            await page.keyboard.press('Backspace');
            const body = { model: 'llama3-70b', micro_batch: 1, gpus: 64, zero: 3, recompute: 'full', gpu: 'h100-sxm' };
            await waitForBody(page, body, 'ready');
            const r = await api(base, '/v1/plan', body);
            assert.equal(await text(page, '#mem-total'), r.data.memory.total.human);
        });

        await check('"Max micro-batch" and "Min GPUs" show the /v1/fit answer', async () => {
            const base70 = { model: 'llama3-70b', gpus: 64, zero: 3, recompute: 'full', gpu: 'h100-sxm' };
            await page.click('#fit-mb');
            await page.waitForSelector('#fit-readout[data-status="ready"], #fit-readout[data-status="nofit"]', { timeout: STEP_TIMEOUT_MS });
            const mb = await api(base, '/v1/fit', { ...base70, solve: 'micro_batch' });
            assert.equal(mb.status, 200, JSON.stringify(mb.data));
            const shown = await text(page, '#fit-readout');
            if (mb.data.found) assert.ok(shown.includes(`micro-batch that fits: ${mb.data.micro_batch} `), shown);
            else assert.match(shown, /^Nothing fits/);

            await page.click('#fit-gpus');
            await page.waitForFunction(() => /GPUs that fit|Nothing fits/.test(document.getElementById('fit-readout').textContent),
                null, { timeout: STEP_TIMEOUT_MS });
            const { gpus, ...noGpus } = base70;
            assert.equal(gpus, 64);
            const g = await api(base, '/v1/fit', { ...noGpus, solve: 'gpus' });
            assert.equal(g.status, 200, JSON.stringify(g.data));
            const shownG = await text(page, '#fit-readout');
            if (g.data.found) assert.ok(shownG.includes(`Fewest GPUs that fit: ${g.data.gpus} `), shownG);
            else assert.match(shownG, /^Nothing fits/);
        });

        await check('tp that does not divide heads: error next to tp', async () => {
            expectBadRequests = true;
            await setField(page, 'model', 'llama3-8b');
            await setField(page, 'micro_batch', '');
            /* 24 GPUs so tp 3 divides the GPU count and only heads 32 % 3 is wrong */
            await setField(page, 'gpus', '24');
            await setField(page, 'zero', '1');
            await setField(page, 'tp', '3');
            const body = { model: 'llama3-8b', gpus: 24, tp: 3, zero: 1, recompute: 'full', gpu: 'h100-sxm' };
            await waitForBody(page, body, 'error');
            const r = await api(base, '/v1/plan', body);
            assert.equal(r.status, 400);
            assert.equal(r.data.field, '/tp', 'the API names /tp');
            assert.equal(await page.locator('#f-tp').getAttribute('aria-invalid'), 'true');
            assert.ok((await page.locator('#f-tp').getAttribute('aria-describedby')).split(' ').includes('err-tp'));
            assert.ok(await page.locator('#err-tp').isVisible(), 'message visible');
            assert.equal(await text(page, '#err-tp'), r.data.detail);
            /* the message sits right under the field, inside its row */
            const inRow = await page.locator('.field[data-field="tp"] #err-tp').count();
            assert.equal(inRow, 1);
            assert.ok(await page.locator('#summary').isVisible(), 'summary at the top');
            assert.equal(await page.locator('#summary a[href="#f-tp"]').count(), 1, 'summary links the field');
            assert.match(await text(page, '#verdict'), /^— /, 'verdict says why there is no number');
            noJunk(await bodyText(page), 'error page');
            assert.equal(await page.locator('[aria-invalid="true"]').count(), 1, 'only tp is flagged');
        });

        await check('negative seq: error next to seq, then fixing clears it', async () => {
            await setField(page, 'tp', '');
            await setField(page, 'gpus', '8');
            await setField(page, 'seq', '-5');
            const body = { model: 'llama3-8b', seq: -5, gpus: 8, zero: 1, recompute: 'full', gpu: 'h100-sxm' };
            await waitForBody(page, body, 'error');
            const r = await api(base, '/v1/plan', body);
            assert.equal(r.status, 400);
            assert.equal(r.data.field, '/seq');
            assert.equal(await page.locator('#f-seq').getAttribute('aria-invalid'), 'true');
            assert.equal(await text(page, '#err-seq'), r.data.detail);
            assert.equal(await page.locator('#f-tp').getAttribute('aria-invalid'), null, 'old tp error gone');
            /* text that is no number goes to the API as typed; it names the field */
            await setField(page, 'seq', '8k');
            const typo = { ...body, seq: '8k' };
            await waitForBody(page, typo, 'error');
            const t = await api(base, '/v1/plan', typo);
            assert.equal(t.status, 400);
            assert.equal(t.data.field, '/seq');
            assert.equal(await text(page, '#err-seq'), t.data.detail);
            await setField(page, 'seq', '');
            await waitForBody(page, DEFAULT_BODY, 'ready');
            expectBadRequests = false;
            assert.equal(await page.locator('[aria-invalid="true"]').count(), 0);
            assert.ok(!(await page.locator('#summary').isVisible()), 'summary hidden again');
            await assertMatchesApi(page, fresh.data);
        });

        await check('URL state round-trips through reload and a new page', async () => {
            await setField(page, 'model', 'llama3-70b');
            await setField(page, 'zero', '3');
            await setField(page, 'gpus', '64');
            await setField(page, 'micro_batch', '2');
            await setField(page, 'shared_gbps', '250');
            const body = { model: 'llama3-70b', micro_batch: 2, gpus: 64, zero: 3, recompute: 'full', gpu: 'h100-sxm', shared_gbps: 250 };
            await waitForBody(page, body, 'ready');
            const url = page.url();
            const q = new URL(url).searchParams;
            assert.equal(q.get('model'), 'llama3-70b');
            assert.equal(q.get('micro_batch'), '2');
            assert.equal(q.get('shared_gbps'), '250');
            const shown = await text(page, '#mem-total');
            const tiers = await page.locator('#tiers tbody').textContent();

            await page.reload({ waitUntil: 'load' });
            await waitForBody(page, body, 'ready');
            assert.equal(await page.inputValue('#f-micro_batch'), '2');
            assert.equal(await page.inputValue('#f-model'), 'llama3-70b');
            assert.equal(await page.inputValue('#f-zero'), '3');
            assert.equal(await text(page, '#mem-total'), shown);

            const other = await ctx.newPage();
            watch(other, 'shared-url');
            await other.goto(url, { waitUntil: 'load' });
            await waitForBody(other, body, 'ready');
            assert.equal(await other.inputValue('#f-shared_gbps'), '250');
            assert.equal(await text(other, '#mem-total'), shown);
            assert.equal(await other.locator('#tiers tbody').textContent(), tiers);
            const r = await api(base, '/v1/plan', body);
            await assertMatchesApi(other, r.data);
            await other.close();
        });

        await check('dropdowns come from /v1/presets and /v1/gpus; every preset renders cleanly', async () => {
            const presets = (await (await fetch(base + '/v1/presets')).json()).presets;
            const gpus = (await (await fetch(base + '/v1/gpus')).json()).gpus;
            const opts = async (sel) => page.locator(`${sel} option`).evaluateAll((os) => os.map((o) => o.value).filter(Boolean));
            assert.deepEqual(await opts('#f-model'), presets.map((p) => p.id));
            assert.deepEqual(await opts('#f-gpu'), gpus.map((g) => g.id));
            await setField(page, 'micro_batch', '');
            await setField(page, 'shared_gbps', '');
            await setField(page, 'gpus', '64');
            await setField(page, 'zero', '3');
            for (const p of presets) {
                await setField(page, 'model', p.id);
                const body = { model: p.id, gpus: 64, zero: 3, recompute: 'full', gpu: 'h100-sxm' };
                await waitForBody(page, body);
                const r = await api(base, '/v1/plan', body);
                if (r.status === 200) {
                    await assertMatchesApi(page, r.data);
                } else {
                    /* e.g. a preset whose layers do not split: still named */
                    const name = String(r.data.field || '').slice(1);
                    assert.equal(await text(page, `#err-${name}`), r.data.detail, p.id);
                }
                noJunk(await bodyText(page), p.id);
                assert.ok((await text(page, '#preset-info')).startsWith(p.name), `${p.id} info line`);
            }
        });

        await check('375 px phone width: one column, no horizontal overflow', async () => {
            const phone = await browser.newContext({ viewport: { width: 375, height: 800 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
            const p = await phone.newPage();
            watch(p, 'phone');
            await p.goto(base + '/', { waitUntil: 'load' });
            await waitForBody(p, DEFAULT_BODY, 'ready');
            const m = await p.evaluate(() => ({
                scroll: document.documentElement.scrollWidth,
                client: document.documentElement.clientWidth,
                form: document.getElementById('run').getBoundingClientRect().toJSON(),
                results: document.getElementById('results').getBoundingClientRect().toJSON(),
            }));
            assert.ok(m.scroll <= m.client, `page is ${m.scroll}px wide in a ${m.client}px viewport`);
            assert.ok(m.results.top >= m.form.bottom - 1, 'results stack below the form');
            assert.ok(m.form.width <= m.client && m.results.width <= m.client);
            await p.screenshot({ path: join(ARTIFACTS, 'dashboard-phone.png'), fullPage: true });
            await phone.close();
        });

        await check('no console errors or page errors during the run', async () => {
            assert.deepEqual(consoleProblems, []);
        });
        await ctx.close();
    } finally {
        await browser.close();
        child.kill('SIGTERM');
    }
}

const guard = setTimeout(() => {
    log(`e2e: run exceeded ${RUN_TIMEOUT_MS / 1000} s`);
    log(`e2e: ${results.passed} passed, ${results.failed + 1} failed`);
    process.exit(1);
}, RUN_TIMEOUT_MS);

main().then(() => {
    clearTimeout(guard);
    log(`e2e: ${results.passed} passed, ${results.failed} failed`);
    process.exit(results.failed === 0 ? 0 : 1);
}, (e) => {
    clearTimeout(guard);
    log(`FAIL setup: ${e && e.stack ? e.stack : e}`);
    log(`e2e: ${results.passed} passed, ${results.failed + 1} failed`);
    process.exit(1);
});
