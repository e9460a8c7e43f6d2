/*
 * e2e-issue27.mjs - the dashboard defects of issue 27 in headless Chromium
 * against the real trainsize-server: imports that set the mode, errors
 * that show, phone layouts that do not overflow, solvers that help, and
 * the answer at a glance.  Each check names the item.
 *
 *   node tests/web/e2e-issue27.mjs <path to trainsize-server>
 */
import assert from 'node:assert/strict';
import { FIELD_BY_NAME, parseField } from '../../web/form.js';
import { fmtPct } from '../../web/format.js';
import {
    LLAMA3_8B_HF, PHONE, STEP_TIMEOUT_MS, api, assertNoOverflow, auditState, auditStateCheck, check, consoleProblems, env, log,
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

/* Where a step's time goes (issue 27): one segment per part of
 * compute.step that takes time, in the order they add up, each as long as
 * its seconds on the scale that puts the step-time mark at
 * compute.step_time; the axis ticks on that scale too; the shares in the
 * titles and the caption are the API's seconds over its step time. */
const STEP_KEYS = ['compute', 'recompute', 'tp_comm', 'pp_bubble', 'dp_comm', 'cp_comm', 'ep_comm', 'optimizer', 'offload'];
async function checkStepBar(page, c, close) {
    const g = await page.locator('#step-bar').evaluate((svg) => {
        const mark = svg.querySelector('line[data-step-time]');
        const vb = svg.viewBox.baseVal;
        return {
            segs: [...svg.querySelectorAll('rect[data-part]')].map((r) => ({ key: r.dataset.part, x: r.x.baseVal.value, w: r.width.baseVal.value, title: r.textContent })),
            end: mark ? mark.x1.baseVal.value : null,
            ticks: [...svg.querySelectorAll('line[data-tick]')].map((l) => [Number(l.dataset.tick), l.x1.baseVal.value]),
            total: (svg.querySelector('[data-step-label]') || {}).textContent,
            /* every text inside the drawing (a phone's too) */
            outside: [...svg.querySelectorAll('text')].filter((t) => {
                const b = t.getBBox();
                return b.x < -0.5 || b.x + b.width > vb.width + 0.5;
            }).map((t) => t.textContent),
        };
    });
    const total = c.step_time.value;
    const want = STEP_KEYS.filter((k) => c.step[k] > 0);
    assert.deepEqual(g.segs.map((x) => x.key), want, 'one segment per part that takes time');
    assert.ok(g.end !== null, 'the step time is marked');
    const x0 = g.segs[0].x, k = (g.end - x0) / total;
    let acc = 0;
    for (const sg of g.segs) {
        const v = c.step[sg.key];
        close(sg.x, x0 + acc * k, `step part ${sg.key} starts where the one before ends`);
        close(sg.w, v * k, `step part ${sg.key}: ${v} s`);
        assert.ok(sg.title.includes(c.step.human[sg.key]) && sg.title.includes(fmtPct(v / total)), `${sg.key} title: ${sg.title}`);
        acc += v;
    }
    close(acc * k, total * k, 'the parts add up to the step time');
    assert.ok(g.ticks.length >= 3, `${g.ticks.length} axis ticks`);
    for (const [t, x] of g.ticks) close(x, x0 + t * k, `tick at ${t} s`);
    assert.equal(g.total, `step time ${c.step_time.human}`);
    assert.deepEqual(g.outside, [], 'texts inside the chart');
    const cap = await text(page, '#step-cap');
    for (const key of want) assert.ok(cap.includes(`${c.step.human[key]} (${fmtPct(c.step[key] / total)})`), `caption: ${key} in ${cap}`);
    for (const key of want) assert.equal(await text(page, `#step-${key}`), c.step.human[key]);
}

/* The byte figures of a text, in order, against the API's bytes: each a
 * number and a unit of the system (GB: 10^9 bytes, GiB: 2^30), within
 * the rounding of the digits it shows. */
const BYTE_UNITS = { GB: ['B', 'kB', 'MB', 'GB', 'TB', 'PB'], GiB: ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] };
function bytesAgree(where, s, bytes, units) {
    const found = [...s.matchAll(/(-?\d+(?:\.(\d+))?) ([kKMGTP]?i?B)\b/g)];
    assert.ok(found.length >= bytes.length, `${where}: "${s}" has ${found.length} byte figures, want ${bytes.length}`);
    bytes.forEach((b, i) => {
        const [, num, dec, unit] = found[i];
        const at = BYTE_UNITS[units].indexOf(unit);
        assert.ok(at >= 0, `${where}: "${unit}" in "${s}" is not a ${units} unit`);
        const scaled = b / (units === 'GB' ? 1e9 : 2 ** 30) * (units === 'GB' ? 1000 : 1024) ** (3 - at);
        assert.ok(Math.abs(Number(num) - scaled) <= 0.5 * 10 ** -(dec ? dec.length : 0) + 1e-9,
            `${where}: ${num} ${unit} for ${b} bytes (${scaled} ${unit})`);
    });
}

async function main({ base, browser }) {
    const ctx = await newContext(browser);
    const page = await ctx.newPage();
    watch(page, 'desktop');
    const phoneCtx = await newContext(browser, { viewport: PHONE, deviceScaleFactor: 1, isMobile: true, hasTouch: true });

    await check('27 bench: the first number after navigation takes at most 3 round trips', async () => {
        /* every response held 150 ms, so what waits on what shows in the
         * resource timings: a request's round trip is one more than the
         * latest of the responses that ended before it started */
        const c2 = await newContext(browser);
        const p = await c2.newPage();
        watch(p, 'round-trips');
        await p.route('**/*', async (route) => {
            await new Promise((res) => setTimeout(res, 150));
            await route.continue();
        });
        await p.goto(`${base}/`);
        await p.waitForFunction(() => document.documentElement.dataset.firstResultMs, null, { timeout: 2 * STEP_TIMEOUT_MS });
        const t = await p.evaluate(() => {
            const nav = performance.getEntriesByType('navigation')[0];
            const res = performance.getEntriesByType('resource').sort((a, b) => a.startTime - b.startTime);
            const done = [{ end: nav.responseEnd, level: 1 }];
            const levels = {};
            for (const r of res) {
                const before = done.filter((d) => d.end <= r.startTime).map((d) => d.level);
                const level = 1 + Math.max(1, ...before);
                done.push({ end: r.responseEnd, level });
                const path = new URL(r.name).pathname;
                if (!(path in levels)) levels[path] = level;
            }
            return { levels, first: Number(document.documentElement.dataset.firstResultMs) };
        });
        const trips = t.levels['/v1/plan'];
        log(`     bench: first number after ${trips} round trips (${t.first} ms with 150 ms per response; ` +
            `${Object.entries(t.levels).filter(([k]) => k.endsWith('.js')).length} modules, all in round trip 2: ` +
            `${Object.entries(t.levels).filter(([k]) => k.endsWith('.js')).every(([, l]) => l === 2)})`);
        assert.ok(trips <= 3, `first /v1/plan in round trip ${trips}: ${JSON.stringify(t.levels)}`);
        await c2.close();
    });

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

    await check('a LLaMA-Factory QLoRA import (its own example) sets the model, mode, rank, seq and epochs, and says so', async () => {
        env.expectBadRequests = true; /* a custom model with no shape: 400 until the import */
        await page.goto(`${base}/?model=&gpus=1&gpu=a100-80`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        /* the keys of hiyouga/LLaMA-Factory examples/extras/fsdp_qlora/llama3_lora_sft.yaml@ff6d4d12
         * (tests/data/imports/real/llamafactory/llama3-qlora-sft.yaml), dataset keys left out */
        await importDoc(page, 'llamafactory_config', 'model_name_or_path: meta-llama/Meta-Llama-3-8B\nquantization_bit: 4\n' +
            'stage: sft\ndo_train: true\nfinetuning_type: lora\nlora_rank: 8\nlora_target: all\ncutoff_len: 2048\n' +
            'per_device_train_batch_size: 1\ngradient_accumulation_steps: 8\nnum_train_epochs: 3.0\nbf16: true\n');
        assert.equal(await page.locator('#import-status').getAttribute('data-status'), 'ready', await text(page, '#import-status'));
        assert.equal(await page.inputValue('#f-model'), 'llama3-8b', 'meta-llama/Meta-Llama-3-8B is the llama3-8b preset');
        assert.equal(await page.inputValue('#f-mode'), 'qlora');
        assert.equal(await page.inputValue('#f-epochs'), '3', 'num_train_epochs -> epochs');
        const sent = await settled(page);
        assert.ok('llamafactory_config' in sent);
        const r = await api(base, '/v1/plan', sent);
        assert.equal(r.status, 200, JSON.stringify(r.data));
        assert.equal(r.data.inputs.lora_rank, 8, 'the imported rank, not the page default 16');
        assert.equal(r.data.inputs.frozen_precision, 'nf4');
        assert.equal(r.data.inputs.seq, 2048);
        assert.equal(r.data.inputs.recompute, 'full', 'LLaMA-Factory checkpoints by default');
        assert.equal(r.data.inputs_source.recompute, 'llamafactory_config');
        const said = await text(page, '#import-status');
        for (const w of [/QLoRA/, /rank 8/, /model_name_or_path/, /3 epochs \(num_train_epochs\)/]) assert.match(said, w, said);
        env.expectBadRequests = false;
    });

    await check('27 lora_targets: on the form in LoRA and QLoRA modes, sent as typed, the API\'s error at the field; an axolotl import sets it', async () => {
        await page.goto(`${base}/?model=llama3-8b&gpus=1&gpu=a100-80&mode=lora`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        const first = await settled(page);
        assert.ok(!('lora_targets' in first), 'not sent until set');
        assert.ok(await page.locator('#f-lora_targets').isVisible(), 'shown in LoRA mode');
        assert.equal(await page.getAttribute('#f-lora_targets', 'placeholder'), (await api(base, '/v1/plan', first)).data.inputs.lora_targets,
            'the placeholder is what the API resolved');
        const sentWith = async (v, status) => {
            await page.waitForFunction(([want, st]) => {
                const r = document.getElementById('results');
                return r.dataset.request && JSON.parse(r.dataset.request).lora_targets === want && !r.hasAttribute('aria-busy') && r.dataset.status === st;
            }, [v, status], { timeout: STEP_TIMEOUT_MS });
            return JSON.parse(await page.locator('#results').getAttribute('data-request'));
        };
        await setField(page, 'lora_targets', 'q_proj,v_proj');
        const qv = await sentWith('q_proj,v_proj', 'ready');
        const r = await api(base, '/v1/plan', qv);
        assert.equal(r.data.inputs.lora_targets, 'q_proj,v_proj');
        assert.equal(await text(page, '#mem-total'), r.data.memory.total.human);
        assert.match(page.url(), /[?&]lora_targets=q_proj%2Cv_proj(&|$)/, 'in the link');
        /* a name the API does not know: its message at the field */
        env.expectBadRequests = true;
        await setField(page, 'lora_targets', 'q_proj,wq');
        const bad = await sentWith('q_proj,wq', 'error');
        const problem = await api(base, '/v1/plan', bad);
        assert.equal(problem.data.field, '/lora_targets');
        assert.equal(await page.getAttribute('#f-lora_targets', 'aria-invalid'), 'true');
        assert.equal(await text(page, '#err-lora_targets'), problem.data.detail);
        env.expectBadRequests = false;
        await setField(page, 'lora_targets', '');
        await settled(page);
        /* QLoRA too; not in pre-training or a full fine-tune */
        for (const [mode, shown] of [['qlora', true], ['full', false], ['pretrain', false]]) {
            await setField(page, 'mode', mode);
            await settled(page);
            assert.equal(await page.locator('#f-lora_targets').isVisible(), shown, `${mode}: lora_targets shown ${shown}`);
        }
        /* an axolotl LoRA import: lora_target_modules is the field's value */
        await importDoc(page, 'axolotl_config', AXOLOTL_QLORA.replace('adapter: qlora', 'adapter: lora').replace('load_in_4bit: true', 'load_in_4bit: false') +
            'lora_target_modules:\n  - q_proj\n  - k_proj\n  - v_proj\n  - o_proj\n');
        assert.equal(await page.locator('#import-status').getAttribute('data-status'), 'ready', await text(page, '#import-status'));
        assert.equal(await page.inputValue('#f-mode'), 'lora');
        assert.ok(await page.locator('#f-lora_targets').isVisible());
        assert.equal(await page.inputValue('#f-lora_targets'), 'q_proj,k_proj,v_proj,o_proj');
        assert.match(await text(page, '#import-status'), /LoRA targets q_proj,k_proj,v_proj,o_proj/);
        const imp = await sentWith('q_proj,k_proj,v_proj,o_proj', 'ready');
        assert.equal((await api(base, '/v1/plan', imp)).data.inputs.lora_targets, 'q_proj,k_proj,v_proj,o_proj');
        await page.setViewportSize(PHONE);
        await page.waitForTimeout(250);
        await assertNoOverflow(page, 'phone, LoRA targets');
        await page.setViewportSize({ width: 1366, height: 900 });
    });

    await check('lora_modules_to_save: an axolotl import that trains embed_tokens and lm_head in full sets the field, and the plan holds the copies', async () => {
        await page.goto(`${base}/?model=llama3-8b&gpus=1&gpu=a100-80&mode=lora`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(page);
        const lora = AXOLOTL_QLORA.replace('adapter: qlora', 'adapter: lora').replace('load_in_4bit: true', 'load_in_4bit: false');
        await importDoc(page, 'axolotl_config', lora + 'lora_modules_to_save:\n  - embed_tokens\n  - lm_head\n');
        assert.equal(await page.locator('#import-status').getAttribute('data-status'), 'ready', await text(page, '#import-status'));
        assert.ok(await page.locator('#f-lora_modules_to_save').isVisible(), 'shown in LoRA mode');
        assert.equal(await page.inputValue('#f-lora_modules_to_save'), 'embed_tokens,lm_head');
        assert.match(await text(page, '#import-status'), /trained in full embed_tokens,lm_head/);
        await page.waitForFunction(() => {
            const r = document.getElementById('results');
            return r.dataset.request && JSON.parse(r.dataset.request).lora_modules_to_save === 'embed_tokens,lm_head' &&
                !r.hasAttribute('aria-busy') && r.dataset.status === 'ready';
        }, null, { timeout: STEP_TIMEOUT_MS });
        const sent = JSON.parse(await page.locator('#results').getAttribute('data-request'));
        const withCopies = await api(base, '/v1/plan', sent);
        const without = await api(base, '/v1/plan', { ...sent, lora_modules_to_save: '' });
        assert.equal(withCopies.status, 200);
        assert.equal(await text(page, '#mem-total'), withCopies.data.memory.total.human);
        /* Llama 3 8B's two vocab x hidden copies, 1,050,673,152 parameters,
         * at least their 2-byte weights more */
        assert.ok(withCopies.data.memory.weights.value - without.data.memory.weights.value >= 2 * 1050673152,
            `weights ${withCopies.data.memory.weights.value} vs ${without.data.memory.weights.value}`);
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

    await check('27.4: a comparison on a phone does not widen the page; the verdict stays on screen', async () => {
        const p = await phoneCtx.newPage();
        watch(p, 'phone-compare');
        await p.goto(`${base}/?model=llama3-8b&gpus=8&gpu=h100-sxm&zero=1&recompute=full`);
        await p.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(p);
        await p.click('#pin');
        await setField(p, 'zero', '3');
        await waitForBody(p, { model: 'llama3-8b', gpus: 8, zero: 3, recompute: 'full', gpu: 'h100-sxm' }, 'ready');
        await p.click('#pin');
        await setField(p, 'gpu', 'h200');
        await waitForBody(p, { model: 'llama3-8b', gpus: 8, zero: 3, recompute: 'full', gpu: 'h200' }, 'ready');
        assert.ok(await p.locator('#compare-table td.diff').count() > 0, 'differences marked');
        await assertNoOverflow(p, 'phone, comparison');
        await p.evaluate(() => window.scrollTo(0, 0));
        const vb = await p.locator('#verdict-bar').boundingBox();
        assert.ok(vb.x >= 0 && vb.x + vb.width <= PHONE.width, `verdict bar spans ${vb.x}..${vb.x + vb.width}`);
        await p.close();
    });

    await check('27.5: layout search keeps the headroom margin; Apply is on screen at 1280 px', async () => {
        await page.setViewportSize({ width: 1280, height: 800 });
        const body = { model: 'llama3-70b', gpus: 64, zero: 1, recompute: 'full', gpu: 'h100-sxm' };
        await page.goto(`${base}/?model=llama3-70b&gpus=64&gpu=h100-sxm&zero=1&recompute=full`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await waitForBody(page, body, 'ready');
        env.expectBadRequests = true; /* a server without "margin" on /v1/search answers 400 once */
        await page.click('#search-go');
        await page.waitForSelector('#search-panel[data-status="ready"]', { timeout: STEP_TIMEOUT_MS });
        env.expectBadRequests = false;
        const q = { model: 'llama3-70b', gpus: 64, gpu: 'h100-sxm' };
        let sr = await api(base, '/v1/search', { ...q, margin: 0.1 });
        if (sr.status === 400) {
            sr = await api(base, '/v1/search', q);
            const hbm = sr.data.inputs.hbm_gb * 1e9;
            sr.data.results = sr.data.results.filter((r) => r.headroom_bytes >= 0.1 * hbm);
            assert.match(await text(page, '#search-status'), /10(\.0)?% (headroom )?margin/);
        }
        const shown = await page.locator('#search-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.rank));
        assert.equal(shown.length, sr.data.results.length, 'rows kept: those with the margin of headroom');
        const heads = await page.locator('#search-table tbody tr td.headroom').allTextContents();
        assert.deepEqual(heads, sr.data.results.map((r) => r.human.headroom_bytes));
        const btn = await page.locator('#search-table tbody tr:first-child button.apply').boundingBox();
        const wrap = await page.locator('#search-panel .table-wrap').boundingBox();
        assert.ok(btn && btn.x >= wrap.x && btn.x + btn.width <= Math.min(1280, wrap.x + wrap.width), `Apply at ${btn && btn.x}..${btn && btn.x + btn.width}`);
        await page.click('#search-table tbody tr:first-child button.apply');
        await settled(page);
        assert.equal(await text(page, '#verdict'), '✓ FITS', 'the first layout is not under the margin');
        await page.setViewportSize({ width: 1366, height: 900 });
    });

    await check('27.6: when nothing fits, the solvers change the layout along with the GPU count', async () => {
        await page.goto(`${base}/?model=llama3-405b&gpus=16&gpu=h100-sxm&zero=1&recompute=full`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(page);
        await page.click('#fit-gpus');
        await page.waitForSelector('#fit-readout[data-status="ready"], #fit-readout[data-status="nofit"], #fit-readout[data-status="error"]', { timeout: 2 * STEP_TIMEOUT_MS });
        const said = await text(page, '#fit-readout');
        assert.ok(!/\de\+\d/.test(said), `raw numbers: ${said}`);
        assert.match(said, /ZeRO 3/, said);
        assert.equal(await page.locator('#fit-readout').getAttribute('data-status'), 'ready', said);
        await page.click('#fit-readout button.apply');
        const sent = await settled(page);
        assert.equal(sent.zero, 3);
        assert.match(await text(page, '#verdict'), /FITS|TIGHT/);
        /* the layout search: no layout of 16 GPUs fits; it finds the smallest count that does */
        await page.goto(`${base}/?model=llama3-405b&gpus=16&gpu=h100-sxm`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(page);
        env.expectBadRequests = true;
        await page.click('#search-go');
        await page.waitForSelector('#search-panel[data-status="ready"]', { timeout: 3 * STEP_TIMEOUT_MS });
        env.expectBadRequests = false;
        const st = await text(page, '#search-status');
        assert.match(st, /16 GPUs/, st);
        const gpus = await page.locator('#search-table tbody tr td.gpus').allTextContents();
        assert.ok(gpus.length > 0, st);
        const n = Number(gpus[0]);
        assert.ok(n > 16 && gpus.every((g) => Number(g) === n), `rows on ${gpus.join(',')} GPUs`);
        assert.match(st, new RegExp(`${n} GPUs`));
        const none = await api(base, '/v1/search', { model: 'llama3-405b', gpus: n / 2, gpu: 'h100-sxm' });
        assert.equal(none.data.results.length, 0, `half of ${n} has no layout either`);
    });

    await check('27 smallest cluster: Min GPUs searches the layout along with the GPU count', async () => {
        await page.goto(`${base}/?model=llama3-8b&gpus=8&gpu=h100-sxm&zero=1&recompute=full`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        const sent = await settled(page);
        const { gpus, ...rest } = sent;
        assert.equal(gpus, 8);
        const mine = await api(base, '/v1/fit', { ...rest, solve: 'gpus' });
        const z3 = await api(base, '/v1/fit', { ...rest, zero: 3, recompute: 'full', solve: 'gpus' });
        assert.ok(mine.data.found && z3.data.found && z3.data.gpus < mine.data.gpus, `ZeRO 1 ${mine.data.gpus}, ZeRO 3 ${z3.data.gpus}`);
        await page.click('#fit-gpus');
        await page.waitForSelector('#fit-readout[data-status="ready"]', { timeout: 2 * STEP_TIMEOUT_MS });
        assert.ok((await text(page, '#fit-text')).startsWith(`Fewest GPUs that fit: ${mine.data.gpus} `));
        const alt = await text(page, '#fit-alt');
        assert.match(alt, new RegExp(`^Smallest cluster, changing the layout too: ZeRO 3, full recompute fits on ${z3.data.gpus} GPUs`), alt);
        /* the readout's memory follows the GB / GiB choice */
        const fitMem = (d) => [d.memory.total.value, d.memory.headroom_bytes];
        assert.ok((await text(page, '#fit-text')).includes(`${mine.data.memory.total.human} per GPU`));
        await page.selectOption('#units', 'GB');
        bytesAgree('fit, GB', await text(page, '#fit-text'), fitMem(mine.data), 'GB');
        bytesAgree('smallest cluster, GB', await text(page, '#fit-alt-text'), fitMem(z3.data), 'GB');
        await page.selectOption('#units', 'GiB');
        bytesAgree('fit, GiB', await text(page, '#fit-text'), fitMem(mine.data), 'GiB');
        assert.ok((await text(page, '#fit-alt-text')).includes(`${z3.data.memory.total.human} per GPU`));
        await page.click('#fit-alt-use');
        const now = await settled(page);
        assert.deepEqual([now.zero, now.recompute, now.gpus], [3, 'full', z3.data.gpus]);
        assert.match(await text(page, '#verdict'), /FITS|TIGHT/);
    });

    await check('27.7: no cost without a price; a preset with a changed shape is a custom copy', async () => {
        await page.goto(`${base}/?model=llama3-8b&gpus=8&gpu=h100-sxm&zero=1&recompute=full`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(page);
        assert.ok(!/^0(\.0+)? USD/.test(await text(page, '#cmp-cost')), await text(page, '#cmp-cost'));
        assert.match(await text(page, '#cmp-cost'), /no price/);
        await setField(page, 'gpu_hour_usd', '2');
        const sent = { model: 'llama3-8b', gpus: 8, zero: 1, recompute: 'full', gpu: 'h100-sxm', gpu_hour_usd: 2 };
        await waitForBody(page, sent, 'ready');
        const r = await api(base, '/v1/plan', sent);
        assert.equal(await text(page, '#cmp-cost'), r.data.compute.cost_usd.human);
        const p = await ctx.newPage();
        watch(p, 'preset-override');
        await p.goto(`${base}/?model=llama2-7b&layers=16`);
        await p.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(p);
        await p.waitForFunction(() => /parameters/.test(document.getElementById('verdict-model').textContent));
        assert.match(await text(p, '#verdict-model'), /^Custom \(from Llama 2 7B\): 3\.50B parameters/);
        assert.ok(await p.locator('#custom-note').isVisible(), 'the custom-copy note');
        assert.equal(await p.inputValue('#f-model'), '', 'the select says custom, not the 6.74B preset');
        assert.equal(await p.inputValue('#f-layers'), '16');
        await p.close();
    });

    await check('27.7: "short by" reads sensibly when the need is many times the HBM', async () => {
        await page.goto(`${base}/?model=llama3-405b&gpus=1&gpu=h100-sxm&zero=0`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(page);
        const d = await text(page, '#verdict-detail');
        const pcts = [...d.matchAll(/([0-9.]+) ?%/g)].map((m) => Number(m[1]));
        assert.ok(pcts.every((x) => x <= 100), d);
        assert.match(d, /\d+(\.\d+)?× the/, d);
    });

    await check('27.7: each figure once, headers aligned with their cells, few tab stops, MFU "40" is 40 %', async () => {
        await page.goto(`${base}/?model=llama3-8b&gpus=16&pp=2&gpu=h100-sxm&zero=1&recompute=selective`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        const sent = await settled(page);
        const r = await api(base, '/v1/plan', sent);
        const labels = await page.locator('#compute-figs dt').allTextContents();
        assert.equal(new Set(labels).size, labels.length, `labels twice: ${labels.join(' | ')}`);
        assert.equal(await page.locator('#cmp-pred-mfu').count() + await page.locator('#cmp-mfu').count(), 1, 'one MFU (predicted)');
        assert.equal(await page.locator('#cmp-step-time').count() + await page.locator('#cmp-step-seconds').count(), 1, 'one step time');
        const c = r.data.compute;
        if (c.hardware_flops.value < c.model_flops_attn.value) {
            assert.match(await page.locator('#cmp-hw-flops').locator('xpath=..').textContent(), /attention/, 'why hardware < attention-aware');
        }
        await page.click('#pin');
        env.expectBadRequests = true; /* "margin" on a search that does not take it */
        await page.click('#search-go');
        await page.waitForSelector('#search-panel[data-status]', { timeout: STEP_TIMEOUT_MS });
        env.expectBadRequests = false;
        const bad = await page.evaluate(() => {
            const out = [];
            for (const t of document.querySelectorAll('#search-table, #compare-table, #stages, #tiers')) {
                const ths = [...t.querySelectorAll('thead th')];
                const row = t.querySelector('tbody tr');
                if (!row || !ths.length) continue;
                [...row.cells].forEach((cell, i) => {
                    if (!ths[i] || cell.colSpan > 1) return;
                    const a = getComputedStyle(ths[i]).textAlign, b = getComputedStyle(cell).textAlign;
                    if (a !== b) out.push(`${t.id} column ${i + 1}: header ${a}, cells ${b}`);
                });
            }
            return out;
        });
        assert.deepEqual(bad, []);
        /* tab stops outside the search and comparison tables (a row's Apply
         * button is one per row there), the budget planner's own inputs and
         * the page's GB / GiB choice */
        const stops = await page.evaluate(() => [...document.querySelectorAll('#results a[href], #results button, #results summary, #results [tabindex="0"], #results select, #results input')]
            .filter((e) => e.getClientRects().length > 0 && e.id !== 'units' && !e.closest('[hidden], #search-table, #compare-table, #budget-panel')).length);
        log(`     ${stops} tab stops in the results, outside the search and comparison tables`);
        assert.ok(stops <= 25, `${stops} tab stops in the results`);
        assert.equal(await page.locator('#results details.how summary:visible').count(), 0, 'formulas behind one toggle');
        await page.click('#show-how');
        assert.ok(await page.locator('#mem-total').locator('xpath=..').locator('details.how summary').isVisible());
        await page.click('#show-how');
        /* a fraction typed as a bare number over 1 is a percentage, in every fraction field */
        assert.deepEqual(parseField(FIELD_BY_NAME.get('mfu'), '40'), { value: 0.4 });
        assert.deepEqual(parseField(FIELD_BY_NAME.get('margin'), '40'), { value: 0.4 });
        await setField(page, 'mfu', '40');
        await waitForBody(page, { ...sent, mfu: 0.4 }, 'ready');
        assert.equal(await page.locator('#f-mfu').getAttribute('aria-invalid'), null);
        await page.click('#compare-clear');
    });

    await check('27.8: config.json: its context length offered for seq; labels left out; the 64 KiB cap said before sending', async () => {
        await page.goto(`${base}/?model=llama3-8b&gpus=8&gpu=h100-sxm&zero=1&recompute=full`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(page);
        await importDoc(page, 'hf_config', JSON.stringify(LLAMA3_8B_HF));
        const said = await text(page, '#import-status');
        assert.match(said, /sequence length 4096/i, said);
        assert.match(said, /max_position_embeddings 8192/, said);
        await page.click('#import-use-seq');
        const sent = await settled(page);
        assert.equal(sent.seq, 8192);
        /* 3,000 labels: left out, the rest imports */
        const labels = {};
        const ids = {};
        for (let i = 0; i < 3000; i++) {
            labels[String(i)] = `LABEL_${i}`;
            ids[`LABEL_${i}`] = i;
        }
        await importDoc(page, 'hf_config', JSON.stringify({ ...LLAMA3_8B_HF, id2label: labels, label2id: ids }));
        assert.equal(await page.locator('#import-status').getAttribute('data-status'), 'ready', await text(page, '#import-status'));
        assert.match(await text(page, '#import-status'), /id2label, label2id/);
        const s2 = await settled(page);
        assert.ok(!('id2label' in s2.hf_config) && !('label2id' in s2.hf_config));
        /* over the server's body cap: said here, nothing sent */
        let imports = 0;
        const count = (rq) => { if (rq.url().endsWith('/v1/import')) imports++; };
        page.on('request', count);
        const big = AXOLOTL_QLORA + '# ' + 'x'.repeat(70 * 1024) + '\n';
        await importDoc(page, 'axolotl_config', big);
        page.off('request', count);
        assert.equal(imports, 0, 'no request the server would refuse');
        assert.equal(await page.locator('#import-status').getAttribute('data-status'), 'error');
        assert.match(await text(page, '#import-status'), /64 KiB/);
    });

    await check('27 glance: the bar names the hardware, headroom, step time, MFU, wall-clock and priced cost', async () => {
        await page.goto(`${base}/?model=llama3-70b&gpus=64&pp=2&gpu=h100-sxm&zero=1&recompute=full&gpu_hour_usd=2.5`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        const sent = await settled(page);
        const r = await api(base, '/v1/plan', sent);
        const c = r.data.compute, m = r.data.memory;
        assert.equal(await text(page, '#g-hw'), '64 × H100 80GB');
        const ws = m.stages.find((s) => s.stage === m.worst_stage);
        assert.ok((await text(page, '#g-mem')).startsWith(m.fits ? `${ws.human.headroom} free` : 'short by'), await text(page, '#g-mem'));
        assert.equal(await text(page, '#g-step'), `${c.step_time.human}/step`);
        assert.equal(await text(page, '#g-mfu'), `MFU ${c.human.mfu}`);
        assert.equal(await text(page, '#g-days'), c.wall_seconds.human);
        assert.equal(await text(page, '#g-cost'), c.cost_usd.human);
        const gl = await page.locator('#glance').boundingBox();
        const lh = await page.locator('#glance').evaluate((e) => parseFloat(getComputedStyle(e).lineHeight));
        assert.ok(gl.height <= lh * 1.5, `the glance is one line at 1366 px (${gl.height}px)`);
        await setField(page, 'gpu_hour_usd', '');
        await waitForBody(page, { model: 'llama3-70b', gpus: 64, pp: 2, zero: 1, recompute: 'full', gpu: 'h100-sxm' }, 'ready');
        assert.equal(await page.locator('#g-cost').count(), 0, 'no cost without a price');
    });

    await check('27 glance: on a phone the bar stays compact; warnings (the API\'s too) collapse into a count', async () => {
        const p = await phoneCtx.newPage();
        watch(p, 'phone-glance');
        await p.goto(`${base}/?model=llama3-70b&gpus=64&pp=16&global_batch=16&gpu=h100-sxm&zero=1&recompute=full`);
        await p.waitForFunction(() => document.documentElement.dataset.ready === '1');
        const sent = await settled(p);
        const r = await api(base, '/v1/plan', sent);
        const hBefore = (await p.locator('#verdict-bar').boundingBox()).height;
        assert.ok(r.data.compute.warnings.length > 0, 'the API warns about the bubble');
        await setField(p, 'nvme_interval_min', '0.25');
        await waitForBody(p, { ...sent, nvme_interval_min: 0.25 }, 'ready');
        const n = await p.locator('#warnings li').count();
        assert.ok(n >= 2, `${n} warnings`);
        assert.equal(await text(p, '#warn-count'), `⚠ ${n} warnings`);
        const bar = await p.locator('#verdict-bar').boundingBox();
        assert.ok(Math.abs(bar.height - hBefore) < 4, `warnings grew the bar from ${hBefore} to ${bar.height}px`);
        assert.ok(bar.height <= 150, `bar ${bar.height}px on a phone`);
        assert.ok(!(await p.locator('#w-step-0').isVisible()), 'collapsed');
        await p.click('#warn-count');
        assert.ok(await p.locator('#w-step-0').isVisible());
        assert.ok((await text(p, '#w-step-0')).toLowerCase().includes(r.data.compute.warnings[0].slice(0, 40).toLowerCase()));
        await assertNoOverflow(p, 'phone, warnings open');
        await p.close();
    });

    await check('27 pictures: phase, stage and step bars are SVG drawn to the API\'s numbers, with text alternatives', async () => {
        await page.goto(`${base}/?model=llama3-70b&gpus=64&pp=4&gpu=h100-sxm&zero=1&recompute=full`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        const sent = await settled(page);
        const r = await api(base, '/v1/plan', sent);
        const m = r.data.memory, c = r.data.compute;
        const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 0.01 * Math.max(Math.abs(a), Math.abs(b)) + 0.5, `${what}: ${a} vs ${b}`);
        /* bars of one chart share a scale: bar length / bytes is one constant, and so is the HBM line's */
        const bars = async (sel, attr) => page.locator(`${sel} g[${attr}]`).evaluateAll((gs, a) => gs.map((g) => {
            const tot = g.querySelector('rect[data-total]');
            return { id: g.getAttribute(a), x: tot.x.baseVal.value, w: tot.width.baseVal.value, text: g.textContent,
                parts: [...g.querySelectorAll('rect[data-part]')].reduce((s, x) => s + x.width.baseVal.value, 0) };
        }), attr);
        const hbmX = async (sel) => page.locator(`${sel} line[data-hbm]`).evaluate((l) => l.x1.baseVal.value);
        /* phases */
        const ph = await bars('#phase-bars', 'data-phase');
        assert.deepEqual(ph.map((b) => b.id), m.phases.map((p) => p.name));
        const k = ph[0].w / m.phases[0].bytes;
        m.phases.forEach((p, i) => {
            close(ph[i].w, p.bytes * k, `phase ${p.name} bar`);
            close(ph[i].parts, ph[i].w, `phase ${p.name} parts add up`);
            assert.ok(ph[i].text.includes(p.human), `phase ${p.name} label ${ph[i].text}`);
            assert.equal(ph[i].text.includes('← peak'), p.name === m.peak_phase);
        });
        close(await hbmX('#phase-bars') - ph[0].x, m.hbm_bytes * k, 'phase chart HBM line');
        const pcap = await text(page, '#phase-cap');
        for (const p of m.phases) assert.ok(pcap.includes(`${p.name} ${p.human}`), pcap);
        /* stages */
        const sb = await bars('#stage-bars', 'data-stage');
        assert.equal(sb.length, m.stages.length);
        const ks = sb[0].w / m.stages[0].total;
        m.stages.forEach((s, i) => {
            close(sb[i].w, s.total * ks, `stage ${s.stage} bar`);
            close(sb[i].parts, sb[i].w, `stage ${s.stage} parts add up`);
            assert.ok(sb[i].text.includes(s.total_human));
            assert.equal(sb[i].text.includes('← worst'), s.stage === m.worst_stage);
        });
        close(await hbmX('#stage-bars') - sb[0].x, m.hbm_bytes * ks, 'stage chart HBM line');
        const scap = await text(page, '#stage-cap');
        assert.ok(scap.includes(`the worst is stage ${m.worst_stage}`), scap);
        for (const s of m.stages) assert.ok(scap.includes(`stage ${s.stage} ${s.total_human}`), scap);
        await checkStepBar(page, c, close);
        /* the memory bar too */
        const mb = await page.locator('#mem-bar rect[data-term]').evaluateAll((rs) => rs.map((x) => [x.dataset.term, x.width.baseVal.value]));
        for (const [key, w] of mb) close(w, m[key].value * (mb[0][1] / m[mb[0][0]].value), `memory term ${key}`);
        /* text alternatives and keyboard */
        for (const id of ['mem-bar', 'phase-bars', 'stage-bars', 'step-bar', 'sweep', 'days']) {
            const a = await page.locator(`#${id}`).evaluate((s) => ({
                role: s.getAttribute('role'), tab: s.getAttribute('tabindex'),
                label: (s.getAttribute('aria-labelledby') || '').split(' ').map((x) => (document.getElementById(x) || {}).textContent || '').join(' ').trim(),
            }));
            assert.equal(a.role, 'img', id);
            assert.equal(a.tab, '0', `${id} is a tab stop`);
            assert.ok(a.label.length > 20, `${id} text alternative: ${a.label}`);
        }
        await page.focus('#stage-bars');
        const focus = await page.evaluate(() => ({ id: document.activeElement.id, outline: getComputedStyle(document.activeElement).outlineStyle }));
        assert.deepEqual(focus, { id: 'stage-bars', outline: 'solid' });
        await page.keyboard.press('Shift+Tab');
        await page.keyboard.press('Tab');
        assert.equal(await page.evaluate(() => document.activeElement.id), 'stage-bars', 'reached with Tab');
        /* on a phone the step bar is drawn to its width, still to the numbers */
        await page.setViewportSize(PHONE);
        await page.waitForFunction(() => document.getElementById('step-bar').viewBox.baseVal.width < 420, null, { timeout: STEP_TIMEOUT_MS });
        await checkStepBar(page, c, close);
        await assertNoOverflow(page, 'phone, the pictures');
        await page.setViewportSize({ width: 1366, height: 900 });
    });

    await check('27 pictures: wall-clock vs GPUs from the sweep, on log scales, drawn to the API\'s numbers', async () => {
        /* 70B with ZeRO 3 on 64 GPUs: fits from 32 GPUs on, not below */
        await page.goto(`${base}/?model=llama3-70b&gpus=64&gpu=h100-sxm&zero=3&recompute=full`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        const sent = await settled(page);
        const r = await api(base, '/v1/plan', sent);
        const c = r.data.compute, i = r.data.inputs;
        const pts = r.data.sweep.filter((p) => p.wall_seconds > 0).sort((a, b) => a.gpus - b.gpus);
        assert.ok(pts.length >= 8, `${pts.length} timed sweep points`);
        const own = pts.find((p) => p.dp === i.dp);
        assert.equal(own.wall_seconds, c.wall_seconds.value, 'the sweep\'s point of this run is the plan\'s wall-clock');
        const dots = await page.locator('#days g[data-dp]').evaluateAll((gs) => gs.map((g) => {
            const c0 = g.querySelector('circle');
            return { dp: Number(g.dataset.dp), x: c0.cx.baseVal.value, y: c0.cy.baseVal.value, hollow: c0.classList.contains('hollow'),
                fill: getComputedStyle(c0).fill, title: g.textContent };
        }));
        assert.deepEqual(dots.map((d) => d.dp), pts.map((p) => p.dp), 'one dot per timed point, by GPUs');
        /* log scales: x per doubling of GPUs and y per decade of seconds are constants */
        const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 0.5, `${what}: ${a} vs ${b}`);
        const kx = (dots[dots.length - 1].x - dots[0].x) / Math.log2(pts[pts.length - 1].gpus / pts[0].gpus);
        const ky = (dots[dots.length - 1].y - dots[0].y) / Math.log10(pts[pts.length - 1].wall_seconds / pts[0].wall_seconds);
        pts.forEach((p, k) => {
            close(dots[k].x - dots[0].x, kx * Math.log2(p.gpus / pts[0].gpus), `x of ${p.gpus} GPUs`);
            close(dots[k].y - dots[0].y, ky * Math.log10(p.wall_seconds / pts[0].wall_seconds), `y of ${p.gpus} GPUs`);
            assert.equal(dots[k].hollow, !p.fits, `${p.gpus} GPUs: hollow iff it does not fit`);
            assert.ok(dots[k].title.includes(p.fits ? 'fits' : 'does not fit'), dots[k].title);
        });
        assert.ok(ky < 0, 'more GPUs, fewer days: the curve falls');
        assert.ok(dots.some((d) => d.hollow) && dots.some((d) => !d.hollow), 'some points fit, some do not');
        assert.notEqual(dots.find((d) => d.hollow).fill, dots.find((d) => !d.hollow).fill, 'hollow and filled dots differ');
        /* the run's own point says the answer's text, in the chart, its caption and the table */
        assert.ok((await text(page, '#days [data-run-label]')).includes(c.wall_seconds.human));
        const cap = await text(page, '#days-cap');
        assert.ok(cap.includes(`this run, ${own.gpus} GPUs: ${c.wall_seconds.human}`), cap);
        const rows = await page.locator('#days-table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((x) => x.textContent)));
        assert.equal(rows.length, pts.length);
        const ownRow = rows[pts.indexOf(own)];
        assert.deepEqual([ownRow[0], ownRow[2]], [`${own.gpus} (this run)`, c.wall_seconds.human]);
        /* the table's other times are formatted like the API's (api/ts_fmt.c) */
        assert.ok(rows.every((row) => /^[0-9.]+(e[+-]?\d+)? (ms|s|min|h|days|years)$/.test(row[2])), JSON.stringify(rows.map((x) => x[2])));
        await page.focus('#days');
        assert.equal(await page.evaluate(() => document.activeElement.id), 'days');
    });
    await auditStateCheck(page, 'issue27-pictures');

    await check('27 units: GB or GiB for every memory figure, from the API\'s bytes; the choice is kept in the link', async () => {
        const url = `${base}/?model=llama3-70b&gpus=64&pp=4&gpu=h100-sxm&zero=1&recompute=full`;
        await page.goto(`${url}&units=GB`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        const sent = await settled(page);
        const r = await api(base, '/v1/plan', sent);
        const m = r.data.memory, k = r.data.checkpoint;
        const ws = m.stages.find((x) => x.stage === m.worst_stage);
        const ph = m.phases[0];
        const p0 = [...r.data.sweep].sort((a, b) => a.gpus - b.gpus)[0];
        const h100 = (await (await fetch(`${base}/v1/gpus`)).json()).gpus.find((g) => g.id === 'h100-sxm');
        /* [where, the page's text, the API's bytes (in the order the text gives them), the API's GiB texts] */
        const shown = async () => page.evaluate(() => {
            const t = (sel) => (document.querySelector(sel) || {}).textContent || '(none)';
            const texts = (sel) => [...document.querySelectorAll(sel)].map((x) => x.textContent);
            return {
                total: t('#mem-total'), weights: t('#mem-weights'), hbm: t('#mem-hbm'), headroom: t('#mem-headroom'), ckpt: t('#ck-full'),
                detail: t('#verdict-detail'), glance: t('#g-mem'),
                stage: t(`#stages tr.worst td:nth-child(${2 + 7})`), phase: t('#phases li strong'),
                phaseBar: t('#phase-bars g[data-phase] text:last-of-type'),
                days: t('#days-table tbody tr td:nth-child(6)'), gpu: t('#f-gpu option[value="h100-sxm"]').split(' — ')[1],
                axes: [...texts('#mem-bar text'), ...texts('#sweep text')].filter((x) => / per GPU$/.test(x)),
                url: location.search,
            };
        });
        const want = [
            ['total', [m.total.value], [m.total.human]], ['weights', [m.weights.value], [m.weights.human]],
            ['hbm', [m.hbm_bytes], [m.human.hbm_bytes]], ['headroom', [m.headroom_bytes], [m.human.headroom_bytes]],
            ['ckpt', [k.full_bytes.value], [k.full_bytes.human]],
            ['detail', [ws.total, m.hbm_bytes, -ws.headroom], [ws.total_human, m.human.hbm_bytes]],
            ['glance', [-ws.headroom], []], ['stage', [ws.total], [ws.total_human]], ['phase', [ph.bytes], [ph.human]],
            ['phaseBar', [ph.bytes], [ph.human]], ['days', [p0.total], []], ['gpu', [h100.hbm_bytes], [h100.human.hbm_bytes]],
        ];
        const inUnits = async (units) => {
            const s = await shown();
            for (const [where, bytes, api] of want) {
                bytesAgree(where, s[where], bytes, units);
                /* GiB are the API's own texts */
                if (units === 'GiB') for (const t of api) assert.ok(s[where].includes(t), `${where}: "${s[where]}" has the API's "${t}"`);
            }
            assert.deepEqual(s.axes, [`${units} per GPU`, `${units} per GPU`], 'the charts\' axes');
            return s;
        };
        assert.equal(await page.inputValue('#units'), 'GB');
        assert.match((await inUnits('GB')).url, /[?&]units=GB(&|$)/);
        await page.selectOption('#units', 'GiB');
        assert.ok(!(await inUnits('GiB')).url.includes('units='), 'GiB, the default, adds nothing to the link');
        await page.selectOption('#units', 'GB');
        assert.match((await inUnits('GB')).url, /[?&]units=GB(&|$)/);
        /* the link opens in GB; a phone has room for the control */
        await page.goto(`${url}&units=GB`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(page);
        await inUnits('GB');
        await page.setViewportSize(PHONE);
        await page.waitForTimeout(250);
        await assertNoOverflow(page, 'phone, GB');
        await page.setViewportSize({ width: 1366, height: 900 });
    });

    await check('27 try on other GPUs: the same run on every GPU, as the API plans it, one click to use', async () => {
        await page.goto(`${base}/?model=llama3-70b&gpus=16&zero=3&recompute=full&gpu=a100-40&gpu_hour_usd=2`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        const sent = await settled(page);
        await page.click('#try-gpus');
        await page.waitForSelector('#gpus-panel[data-status="ready"]', { timeout: 3 * STEP_TIMEOUT_MS });
        const gpus = (await (await fetch(base + '/v1/gpus')).json()).gpus;
        const rows = await page.locator('#gpus-table tbody tr').evaluateAll((trs) => trs.map((tr) => ({
            gpu: tr.dataset.gpu, state: tr.dataset.state, cells: [...tr.children].map((x) => x.textContent) })));
        assert.deepEqual(rows.map((r) => r.gpu).sort(), gpus.map((g) => g.id).sort(), 'one row per GPU of the catalogue');
        const rank = { fits: 0, tight: 1, nofit: 2, none: 3 };
        let prev = null;
        for (const row of rows) {
            const r = await api(base, '/v1/plan', { ...sent, gpu: row.gpu });
            assert.equal(r.status, 200, row.gpu);
            const c = r.data.compute;
            assert.equal(row.state === 'nofit', !r.data.memory.fits, `${row.gpu}: the API's verdict`);
            /* GPU, Apply, verdict, headroom, step time, MFU, wall-clock, cost */
            assert.equal(row.cells[4], c.step_time.human, `${row.gpu} step time`);
            assert.equal(row.cells[5], c.human.mfu, `${row.gpu} MFU`);
            assert.equal(row.cells[6], c.wall_seconds.human, `${row.gpu} wall-clock`);
            assert.equal(row.cells[7], c.cost_usd.human, `${row.gpu} cost`);
            /* fitting first, then fastest */
            if (prev) assert.ok(rank[prev.state] < rank[row.state] || (rank[prev.state] === rank[row.state] && prev.wall <= c.wall_seconds.value),
                `${row.gpu} after ${prev.gpu}`);
            prev = { ...row, wall: c.wall_seconds.value };
        }
        assert.match(await text(page, '#gpus-table tr[data-gpu="a100-40"] th'), /\(now\)$/);
        const best = rows.find((r) => r.state === 'fits');
        assert.ok(best, 'some GPU fits 70B with ZeRO 3 on 16');
        await page.click(`#gpus-table tr[data-gpu="${best.gpu}"] button.apply`);
        await waitForBody(page, { ...sent, gpu: best.gpu }, 'ready');
        assert.equal(await text(page, '#verdict'), '✓ FITS');
        assert.ok(await page.locator('#gpus-panel').isVisible(), 'only the GPU changed: the table holds');
        assert.match(await text(page, `#gpus-table tr[data-gpu="${best.gpu}"] th`), /\(now\)$/);
        assert.ok(await page.locator(`#gpus-table tr[data-gpu="${best.gpu}"] button.apply`).isDisabled());
        /* at 1366 px the whole table is on screen beside the form */
        const wrap = await page.locator('#gpus-panel .table-wrap').evaluate((w) => [w.scrollWidth, w.clientWidth]);
        assert.ok(wrap[0] <= wrap[1], `the GPUs table scrolls sideways at 1366 px (${wrap})`);
        await page.setViewportSize(PHONE);
        await page.waitForTimeout(250);
        await assertNoOverflow(page, 'phone, GPUs table');
        await page.setViewportSize({ width: 1366, height: 900 });
        await setField(page, 'gpus', '32');
        await waitForBody(page, { ...sent, gpu: best.gpu, gpus: 32 }, 'ready');
        assert.ok(!(await page.locator('#gpus-panel').isVisible()), 'another change: the table goes');
    });

    await check('27 catalogue: search by Hugging Face id, as you type, picks the preset (any case, aliases too)', async () => {
        await page.goto(`${base}/?model=llama3-8b&gpus=8&gpu=h100-sxm`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(page);
        const presets = (await (await fetch(base + '/v1/presets')).json()).presets;
        const opts = await page.locator('#model-list option').evaluateAll((os) => os.map((o) => o.value));
        assert.equal(opts.length, presets.length, 'one suggestion per catalogue model');
        for (const id of ['meta-llama/Meta-Llama-3-70B', 'Qwen/Qwen2.5-7B', 'deepseek-ai/DeepSeek-V3']) assert.ok(opts.includes(id), id);
        await page.locator('#model-search').pressSequentially('qwen/qwen2.5-7b');
        await waitForBody(page, { model: 'Qwen/Qwen2.5-7B', gpus: 8, gpu: 'h100-sxm' }, 'ready');
        assert.equal(await page.inputValue('#f-model'), 'Qwen/Qwen2.5-7B');
        await page.fill('#model-search', 'meta-llama/Meta-Llama-3-70B-Instruct');
        await waitForBody(page, { model: 'llama3-70b', gpus: 8, gpu: 'h100-sxm' }, 'ready');
        assert.ok((await text(page, '#preset-info')).startsWith('Llama 3 70B'));
        /* the model page's address, and another organisation's copy */
        await page.fill('#model-search', 'https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/tree/main');
        await waitForBody(page, { model: 'Qwen/Qwen2.5-7B', gpus: 8, gpu: 'h100-sxm' }, 'ready');
        await page.fill('#model-search', 'NousResearch/Meta-Llama-3-70B-Instruct');
        await waitForBody(page, { model: 'llama3-70b', gpus: 8, gpu: 'h100-sxm' }, 'ready');
        /* a part of a name picks nothing */
        await page.fill('#model-search', 'meta-llama/Meta-Lla');
        await page.waitForTimeout(300);
        assert.equal(await page.inputValue('#f-model'), 'llama3-70b');
        assert.ok(new URL(page.url()).searchParams.get('model') === 'llama3-70b');
    });

    await check('a default that follows the GPU is said: V100 has no BF16, the plan is fp16 and a note in the warnings says why', async () => {
        await page.goto(`${base}/?model=llama3-8b&gpus=8&gpu=v100-32`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        const sent = await settled(page);
        const r = await api(base, '/v1/plan', sent);
        assert.equal(r.data.inputs.precision, 'fp16');
        await page.click('#warn-count');
        assert.ok((await text(page, '#w-note-0')).startsWith('⚠ Precision: fp16, the default on v100-32'),
            await text(page, '#w-note-0'));
    });

    await check('27/28.4 budget mode: "with this budget" from POST /v1/budget, its figures, one click to the plan', async () => {
        await page.goto(`${base}/?model=llama3-8b&gpus=64&gpu=h100-sxm&gpu_hour_usd=2.5`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(page);
        await page.fill('#budget-amount', '7');
        await page.selectOption('#budget-basis', 'budget_days');
        await page.click('#budget-go');
        await page.waitForSelector('#budget-panel[data-status="ready"], #budget-panel[data-status="error"]', { timeout: 2 * STEP_TIMEOUT_MS });
        const body = JSON.parse(await page.locator('#budget-panel').getAttribute('data-request'));
        assert.deepEqual(body, { gpus: 64, gpu: 'h100-sxm', gpu_hour_usd: 2.5, budget_days: 7 },
            'the page\'s GPUs and price, no model: the compute-optimal size');
        const r = await api(base, '/v1/budget', body);
        assert.equal(r.status, 200, JSON.stringify(r.data));
        const b = r.data.budget;
        assert.equal(await text(page, '#budget-summary'), b.summary);
        assert.match(b.summary, /^With this budget: .*-parameter model on .* tokens, .* days, .* USD, .* MWh, .* t CO2e$/);
        for (const [id, key] of [['bud-params', 'params'], ['bud-tokens', 'tokens'], ['bud-days', 'days'], ['bud-usd', 'usd'], ['bud-gpu-hours', 'gpu_hours'], ['bud-mfu', 'mfu']]) {
            assert.equal(await text(page, `#${id}`), b.human[key], key);
        }
        assert.equal(await text(page, '#bud-flops'), b.flops.human);
        await assertNoOverflow(page, 'desktop, budget');
        await auditState(page, 'budget');
        /* the plan: the budget's shape and tokens on the page, the same figures as the budget's plan */
        await page.click('#budget-use');
        const sent = await settled(page);
        assert.equal(sent.layers, r.data.request.layers);
        assert.equal(sent.tokens, Math.round(r.data.request.tokens));
        const plan = await api(base, '/v1/plan', sent);
        assert.equal(await text(page, '#params-total'), `${plan.data.params.human.total} parameters`);
        assert.equal(plan.data.params.human.total, b.human.params, 'the page plans the budget\'s model');
        /* the page's model instead: the tokens the budget buys for it */
        await page.goto(`${base}/?model=llama3-8b&gpus=64&gpu=h100-sxm&gpu_hour_usd=2.5`);
        await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(page);
        await page.fill('#budget-amount', '50,000');
        await page.selectOption('#budget-basis', 'budget_usd');
        await page.check('#budget-model');
        await page.click('#budget-go');
        await page.waitForSelector('#budget-panel[data-status="ready"]', { timeout: 2 * STEP_TIMEOUT_MS });
        const body2 = JSON.parse(await page.locator('#budget-panel').getAttribute('data-request'));
        assert.equal(body2.model, 'llama3-8b');
        assert.equal(body2.budget_usd, 50000);
        const r2 = await api(base, '/v1/budget', body2);
        assert.equal(r2.data.budget.mode, 'model');
        assert.equal(await text(page, '#budget-summary'), r2.data.budget.summary);
        /* a budget the API refuses says why, at the panel */
        env.expectBadRequests = true;
        await setField(page, 'gpu_hour_usd', '');
        await waitForBody(page, { model: 'llama3-8b', gpus: 64, gpu: 'h100-sxm' }, 'ready');
        await page.click('#budget-go');
        await page.waitForSelector('#budget-panel[data-status="error"]', { timeout: 2 * STEP_TIMEOUT_MS });
        env.expectBadRequests = false;
        assert.match(await text(page, '#budget-summary'), /gpu_hour_usd/);
        await page.setViewportSize(PHONE);
        await page.waitForTimeout(250);
        await assertNoOverflow(page, 'phone, budget');
        await page.setViewportSize({ width: 1366, height: 900 });
    });

    await check('27 budget from a link: the link asks the budget again with its inputs; a bad or refused amount shows at the amount', async () => {
        const run = `${base}/?model=llama3-8b&gpus=64&gpu=h100-sxm&gpu_hour_usd=2.5`;
        const open = async (q, status) => {
            await page.goto(`${run}&${q}`);
            await page.waitForFunction(() => document.documentElement.dataset.ready === '1');
            await page.waitForSelector(`#budget-panel[data-status="${status}"]`, { timeout: 2 * STEP_TIMEOUT_MS });
        };
        await open('budget_usd=50%2C000&budget_model=1', 'ready');
        const sent = await settled(page);
        const body = JSON.parse(await page.locator('#budget-panel').getAttribute('data-request'));
        assert.deepEqual(body, { ...sent, budget_usd: 50000 }, 'the run on the page, its model, the link\'s budget');
        const r = await api(base, '/v1/budget', body);
        assert.equal(await text(page, '#budget-summary'), r.data.budget.summary);
        assert.deepEqual([await page.inputValue('#budget-amount'), await page.inputValue('#budget-basis'), await page.isChecked('#budget-model')],
            ['50,000', 'budget_usd', true], 'the inputs restored');
        assert.match(page.url(), /[?&]budget_usd=50%2C000&budget_model=1(&|$)/);
        /* another ask is the link's now */
        await page.fill('#budget-amount', '7');
        await page.selectOption('#budget-basis', 'budget_days');
        await page.uncheck('#budget-model');
        await page.click('#budget-go');
        await page.waitForSelector('#budget-panel[data-status="ready"]', { timeout: 2 * STEP_TIMEOUT_MS });
        assert.match(page.url(), /[?&]budget_days=7(&|$)/);
        assert.ok(!/budget_usd|budget_model/.test(page.url()), page.url());
        /* a hostile amount: not sent, its message at the amount, nothing injected */
        await open('budget_days=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E', 'error');
        assert.equal(await page.locator('#budget-panel').getAttribute('data-request'), null, 'nothing sent');
        assert.equal(await page.inputValue('#budget-amount'), '<img src=x onerror=alert(1)>');
        assert.equal(await page.getAttribute('#budget-amount', 'aria-invalid'), 'true');
        assert.ok(await page.locator('#budget-err').isVisible());
        assert.match(await text(page, '#budget-err'), /a number above 0/);
        assert.equal(await page.locator('#budget-panel img').count(), 0);
        /* two budgets in one link */
        await open('budget_days=7&budget_usd=5', 'error');
        assert.match(await text(page, '#budget-err'), /budget_days and budget_usd: give one budget/);
        /* an amount the API refuses: the API's message at the amount */
        env.expectBadRequests = true;
        await open('budget_days=200000', 'error');
        env.expectBadRequests = false;
        const refused = await api(base, '/v1/budget', JSON.parse(await page.locator('#budget-panel').getAttribute('data-request')));
        assert.equal(refused.data.field, '/budget_days');
        assert.equal(await text(page, '#budget-err'), refused.data.detail);
        assert.equal(await page.getAttribute('#budget-amount', 'aria-invalid'), 'true');
        await page.setViewportSize(PHONE);
        await page.waitForTimeout(250);
        await assertNoOverflow(page, 'phone, a refused budget from a link');
        await page.setViewportSize({ width: 1366, height: 900 });
    });

    await check('27 dark mode: prefers-color-scheme dark themes the page and its charts; axe clean; chart text readable', async () => {
        const c2 = await newContext(browser, { colorScheme: 'dark' });
        const p = await c2.newPage();
        watch(p, 'dark');
        await p.goto(`${base}/?model=llama3-70b&gpus=64&pp=4&gpu=h100-sxm&zero=1&recompute=full&gpu_hour_usd=2`);
        await p.waitForFunction(() => document.documentElement.dataset.ready === '1');
        await settled(p);
        await p.waitForTimeout(250);
        /* WCAG relative luminance and contrast, of computed rgb() colours */
        const seen = await p.evaluate(() => {
            const rgb = (c) => (c.match(/[\d.]+/g) || []).slice(0, 3).map(Number);
            const lum = (c) => {
                const [r, g, b] = rgb(c).map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
                return 0.2126 * r + 0.7152 * g + 0.0722 * b;
            };
            const ratio = (a, b) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
            const low = [];
            for (const svg of document.querySelectorAll('.chart svg')) {
                if (!svg.getClientRects().length) continue;
                const bg = getComputedStyle(svg).backgroundColor;
                for (const t of svg.querySelectorAll('text')) {
                    const r = ratio(getComputedStyle(t).fill, bg);
                    if (r < 4.5) low.push(`#${svg.id} "${t.textContent}" ${getComputedStyle(t).fill} on ${bg}: ${r.toFixed(2)}`);
                }
            }
            return { page: lum(getComputedStyle(document.documentElement).backgroundColor), text: lum(getComputedStyle(document.body).color),
                charts: document.querySelectorAll('.chart svg text').length, low };
        });
        assert.ok(seen.page < 0.03 && seen.text > 0.6, `dark background ${seen.page}, light text ${seen.text}`);
        assert.ok(seen.charts > 50, `${seen.charts} chart texts`);
        assert.deepEqual(seen.low, [], 'every chart text at 4.5:1 or more on its chart');
        await auditState(p, 'dark');
        await c2.close();
    });

    await check('27: no console errors, page errors or CSP violations', async () => {
        assert.deepEqual(consoleProblems, []);
        assert.deepEqual(await page.evaluate(() => window.__csp), []);
    });
    await phoneCtx.close();
    await ctx.close();
}

runSuite('e2e-issue27', main);
