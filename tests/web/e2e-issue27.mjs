/*
 * e2e-issue27.mjs - the dashboard defects of issue 27 in headless Chromium
 * against the real trainsize-server: imports that set the mode, errors
 * that show, phone layouts that do not overflow, solvers that help, and
 * the answer at a glance.  Each check names the item.
 *
 *   node tests/web/e2e-issue27.mjs <path to trainsize-server>
 */
import assert from 'node:assert/strict';
import {
    PHONE, STEP_TIMEOUT_MS, api, assertNoOverflow, auditStateCheck, check, consoleProblems, env,
    newContext, overlaps, runSuite, setField, text, waitForBody, watch,
} from './lib.mjs';

/* An axolotl QLoRA config for Llama 3 8B (the keys of axolotl's
 * examples/llama-3/qlora.yml; values ours). */
const AXOLOTL_QLORA = [
    'base_model: meta-llama/Meta-Llama-3-8B',
    'load_in_4bit: true',
    'adapter: qlora',
    'lora_r: 32',
    'lora_alpha: 16',
    'sequence_len: 4096',
    'micro_batch_size: 2',
    'gradient_accumulation_steps: 4',
    'num_epochs: 3',
    'bf16: true',
    '',
].join('\n');

async function importDoc(page, kind, textBody) {
    if (!(await page.locator('#import').getAttribute('open') !== null)) await page.click('#import summary');
    await page.selectOption('#import-kind', kind);
    await page.fill('#import-text', textBody);
    await page.click('#import-go');
    await page.waitForFunction(() => {
        const s = document.getElementById('import-status').dataset.status;
        return s && s !== 'loading';
    }, null, { timeout: STEP_TIMEOUT_MS });
}

/* The request body the results now show, once they are settled. */
async function settled(page, status = 'ready') {
    await page.waitForFunction((s) => {
        const r = document.getElementById('results');
        return r.dataset.status === s && !r.hasAttribute('aria-busy') && r.dataset.request;
    }, status, { timeout: STEP_TIMEOUT_MS });
    return JSON.parse(await page.locator('#results').getAttribute('data-request'));
}

async function main({ base, browser }) {
    const ctx = await newContext(browser);
    const page = await ctx.newPage();
    watch(page, 'desktop');
    const phoneCtx = await newContext(browser, { viewport: PHONE, deviceScaleFactor: 1, isMobile: true, hasTouch: true });

    await check('27.1: an axolotl QLoRA import sets the mode, rank, seq and fine-tune tokens, and says so', async () => {
        await page.goto(`${base}/?model=llama3-8b&gpus=1&gpu=a100-80`);
        await waitForBody(page, { model: 'llama3-8b', gpus: 1, gpu: 'a100-80' }, 'ready');
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await importDoc(page, 'axolotl_config', AXOLOTL_QLORA);
        assert.equal(await page.locator('#import-status').getAttribute('data-status'), 'ready', await text(page, '#import-status'));
        assert.equal(await page.inputValue('#f-mode'), 'qlora', 'the mode is QLoRA');
        const sent = await settled(page);
        assert.ok('axolotl_config' in sent);
        assert.ok(!(await page.locator('#f-tokens').isVisible()), 'no pre-training token budget');
        assert.equal(await page.inputValue('#f-epochs'), '3', 'num_epochs -> epochs');
        const r = await api(base, '/v1/plan', sent);
        assert.equal(r.status, 200, JSON.stringify(r.data));
        assert.equal(r.data.inputs.lora_rank, 32, 'the imported rank, not the page default');
        assert.equal(r.data.inputs.frozen_precision, 'nf4');
        assert.equal(r.data.inputs.seq, 4096);
        assert.equal(r.data.inputs.precision, 'bf16');
        assert.equal(r.data.compute.tokens, 3e8, 'dataset tokens (default 100M) x 3 epochs, not 15T');
        assert.equal(await text(page, '#cmp-tokens'), r.data.compute.human.tokens);
        const said = await text(page, '#import-status');
        for (const w of [/QLoRA/, /rank 32/, /sequence length 4096/i, /3 epochs/, /bf16/, /dataset tokens/i]) assert.match(said, w, said);
        assert.match(await text(page, '#verdict-model'), /QLoRA/);
    });

    await check('27.1: base_model (a Hub id) picks the preset; the import works with no preset selected', async () => {
        env.expectBadRequests = true; /* a custom model with no shape: 400 until the import */
        await page.goto(`${base}/?model=&gpus=1&gpu=a100-80`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await importDoc(page, 'axolotl_config', AXOLOTL_QLORA);
        assert.equal(await page.locator('#import-status').getAttribute('data-status'), 'ready', await text(page, '#import-status'));
        assert.equal(await page.inputValue('#f-model'), 'llama3-8b', 'meta-llama/Meta-Llama-3-8B is the llama3-8b preset');
        assert.match(await text(page, '#import-status'), /Meta-Llama-3-8B.*Llama 3 8B/);
        const sent = await settled(page);
        assert.equal(sent.model, 'llama3-8b');
        assert.equal(await page.inputValue('#f-mode'), 'qlora');
        env.expectBadRequests = false;
    });

    await check('27.1: max_steps sets the token count (steps x global batch x seq)', async () => {
        await page.goto(`${base}/?model=llama3-8b&gpus=1&gpu=a100-80`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await importDoc(page, 'axolotl_config', AXOLOTL_QLORA.replace('num_epochs: 3', 'max_steps: 500'));
        assert.equal(await page.inputValue('#f-mode'), 'qlora');
        const sent = await settled(page);
        const r = await api(base, '/v1/plan', sent);
        assert.equal(r.data.compute.steps, 500, `steps ${r.data.compute.steps}`);
        assert.match(await text(page, '#import-status'), /500 steps/);
    });

    await check('27.2: invalid input (GPUs = 0) replaces the green verdict with the error, at the field too', async () => {
        await page.goto(`${base}/?model=llama3-8b&gpus=8&gpu=h100-sxm&zero=1&recompute=full`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(page);
        assert.equal(await text(page, '#verdict'), '✓ FITS');
        env.expectBadRequests = true;
        await setField(page, 'gpus', '0');
        await settled(page, 'error');
        const v = await text(page, '#verdict');
        assert.ok(!/FITS/.test(v), `verdict still says ${v}`);
        assert.equal(await page.locator('#verdict-bar').getAttribute('data-state'), 'invalid');
        assert.match(await text(page, '#verdict-bar'), /give gpus or dp/);
        assert.equal(await page.locator('#f-gpus').getAttribute('aria-invalid'), 'true');
        assert.match(await text(page, '#err-gpus'), /give gpus or dp/);
        /* a client-side parse error does the same */
        await setField(page, 'gpus', '8x');
        await settled(page, 'invalid');
        assert.equal(await page.locator('#verdict-bar').getAttribute('data-state'), 'invalid');
        assert.ok(!/FITS/.test(await text(page, '#verdict')));
        await setField(page, 'gpus', '8');
        await settled(page);
        assert.equal(await text(page, '#verdict'), '✓ FITS');
        env.expectBadRequests = false;
    });

    await check('27.2: on a phone the error note covers no label, and the page does not overflow', async () => {
        const p = await phoneCtx.newPage();
        watch(p, 'phone-invalid');
        env.expectBadRequests = true;
        await p.goto(`${base}/?model=llama3-8b&gpus=0&gpu=h100-sxm`);
        await p.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await p.waitForFunction(() => document.getElementById('verdict-bar').dataset.state === 'invalid', null, { timeout: STEP_TIMEOUT_MS });
        const bar = await p.locator('#verdict-bar').boundingBox();
        const covered = [];
        for (const sel of ['#g-model legend', '.field[data-field="model"] label']) {
            const b = await p.locator(sel).first().boundingBox();
            if (b && overlaps(bar, b)) covered.push(sel);
        }
        const note = await p.locator('#stale-note').boundingBox();
        if (note) {
            for (const sel of ['#g-model legend', '.field[data-field="model"] label']) {
                const b = await p.locator(sel).first().boundingBox();
                if (b && overlaps(note, b)) covered.push(`note over ${sel}`);
            }
        }
        assert.deepEqual(covered, []);
        await assertNoOverflow(p, 'phone, invalid input');
        await p.close();
        env.expectBadRequests = false;
    });

    await check('27.3: a shared link with a bad value shows the API\'s error and marks the field', async () => {
        const p = await ctx.newPage();
        watch(p, 'bad-link');
        env.expectBadRequests = true;
        await p.goto(`${base}/?model=nonsense&gpus=8`);
        await p.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await p.waitForFunction(() => document.getElementById('results').dataset.status === 'error', null, { timeout: STEP_TIMEOUT_MS });
        const r = await api(base, '/v1/plan', { model: 'nonsense', gpus: 8 });
        assert.equal(r.status, 400);
        assert.equal(r.data.field, '/model');
        assert.ok(!(await text(p, '#verdict')).includes('waiting'), 'not "waiting for the first estimate"');
        assert.equal(await p.locator('#verdict-bar').getAttribute('data-state'), 'invalid');
        assert.equal(await p.locator('#f-model').getAttribute('aria-invalid'), 'true');
        assert.ok(await p.locator('#err-model').isVisible());
        assert.equal(await text(p, '#err-model'), r.data.detail, 'the API\'s message, valid presets listed');
        assert.match(await text(p, '#verdict-bar'), /unknown model preset/);
        await p.close();
        /* and on a phone: no overflow */
        const q = await phoneCtx.newPage();
        watch(q, 'bad-link-phone');
        await q.goto(`${base}/?model=nonsense&gpus=8`);
        await q.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await q.waitForFunction(() => document.getElementById('results').dataset.status === 'error', null, { timeout: STEP_TIMEOUT_MS });
        assert.ok(await q.locator('#err-model').isVisible());
        await assertNoOverflow(q, 'phone, bad link');
        await q.close();
        env.expectBadRequests = false;
    });
    await auditStateCheck(page, 'issue27-import');

    await check('27: no console errors, page errors or CSP violations', async () => {
        assert.deepEqual(consoleProblems, []);
        assert.deepEqual(await page.evaluate(() => window.__csp), []);
    });
    await phoneCtx.close();
    await ctx.close();
}

runSuite('e2e-issue27', main);
