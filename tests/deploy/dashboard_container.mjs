/*
 * dashboard_container.mjs - a few dashboard checks in headless Debian
 * Chromium against an already running trainsize (the container image):
 * the page the image serves renders what the image's /v1 answers.
 *
 *   node dashboard_container.mjs http://127.0.0.1:PORT
 *
 * The full dashboard suite is tests/web/e2e.mjs (it starts its own server
 * from the build tree); this uses its pinned playwright-core
 * (tests/web/package-lock.json) and the same element ids.
 * Prints "dashboard-container: N passed, M failed".
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

const HERE = dirname(fileURLToPath(import.meta.url));
const WEB_TESTS = resolve(HERE, '..', 'web');
const BASE = process.argv[2];
const STEP_MS = 10000;

if (!BASE) {
    console.error('usage: node dashboard_container.mjs http://127.0.0.1:PORT');
    process.exit(2);
}
if (!existsSync(join(WEB_TESTS, 'node_modules', 'playwright-core'))) {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'],
        { cwd: WEB_TESTS, stdio: ['ignore', 2, 2], env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' } });
}
const { chromium } = createRequire(join(WEB_TESTS, 'package.json'))('playwright-core');

const results = { passed: 0, failed: 0 };
const problems = [];
let expectBad = false;

async function check(name, fn) {
    try {
        await fn();
        results.passed++;
        console.log(`ok   ${name}`);
    } catch (e) {
        results.failed++;
        console.log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    }
}

async function api(path, body) {
    const r = await fetch(BASE + path, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
    });
    return { status: r.status, data: await r.json() };
}

/* the results panel shows exactly this request, in this state */
async function waitFor(page, body, status) {
    const want = JSON.stringify(Object.entries(body).sort());
    await page.waitForFunction(([w, s]) => {
        const r = document.getElementById('results');
        if (!r || !r.dataset.request || r.hasAttribute('aria-busy')) return false;
        return JSON.stringify(Object.entries(JSON.parse(r.dataset.request)).sort()) === w &&
            r.dataset.status === s;
    }, [want, status], { timeout: STEP_MS });
}
const text = async (page, sel) => (await page.locator(sel).first().textContent()).trim();

const DEFAULT_BODY = { model: 'llama3-8b', gpus: 8, zero: 1, recompute: 'full', gpu: 'h100-sxm' };

const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
    page.on('console', (m) => {
        if (m.type() === 'error' && !(expectBad && /status of 400/.test(m.text()))) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));

    await check('the image serves the dashboard and it shows a verdict', async () => {
        const resp = await page.goto(BASE + '/', { waitUntil: 'load' });
        assert.equal(resp.status(), 200);
        await waitFor(page, DEFAULT_BODY, 'ready');
        assert.match(await text(page, '#verdict'), /^(✓ FITS|✗ DOES NOT FIT)$/);
    });

    await check('default figures equal the image\'s /v1/plan answer', async () => {
        const r = await api('/v1/plan', DEFAULT_BODY);
        assert.equal(r.status, 200);
        const m = r.data.memory;
        assert.equal(await text(page, '#mem-total'), m.total.human);
        for (const t of ['weights', 'grads', 'master', 'optimizer', 'activations']) {
            assert.equal(await text(page, `#mem-${t}`), m[t].human, t);
        }
        assert.equal(await text(page, '#cmp-gpu-hours'), r.data.compute.gpu_hours.human);
        assert.equal(await text(page, '#ck-full'), r.data.checkpoint.full_bytes.human);
        assert.equal(await text(page, '#verdict'), m.fits ? '✓ FITS' : '✗ DOES NOT FIT');
    });

    await check('llama3-70b ZeRO 0 on 8 GPUs: DOES NOT FIT, as the image\'s API says', async () => {
        await page.selectOption('#f-model', 'llama3-70b');
        await page.selectOption('#f-zero', '0');
        const body = { ...DEFAULT_BODY, model: 'llama3-70b', zero: 0 };
        await waitFor(page, body, 'ready');
        const r = await api('/v1/plan', body);
        assert.equal(r.data.memory.fits, false);
        assert.equal(await text(page, '#verdict'), '✗ DOES NOT FIT');
        assert.equal(await text(page, '#mem-total'), r.data.memory.total.human);
    });

    await check('negative seq: the image\'s problem+json detail shows next to the field', async () => {
        expectBad = true;
        await page.selectOption('#f-model', 'llama3-8b');
        await page.selectOption('#f-zero', '1');
        await page.fill('#f-seq', '-5');
        const body = { ...DEFAULT_BODY, seq: -5 };
        await waitFor(page, body, 'error');
        const r = await api('/v1/plan', body);
        assert.equal(r.status, 400);
        assert.equal(r.data.field, '/seq');
        assert.equal(await page.locator('#f-seq').getAttribute('aria-invalid'), 'true');
        assert.equal(await text(page, '#err-seq'), r.data.detail);
        await page.fill('#f-seq', '');
        await waitFor(page, DEFAULT_BODY, 'ready');
        expectBad = false;
    });

    await check('no console or page errors', async () => {
        assert.deepEqual(problems, []);
    });
} finally {
    await browser.close();
}
console.log(`dashboard-container: ${results.passed} passed, ${results.failed} failed`);
process.exit(results.failed === 0 ? 0 : 1);
