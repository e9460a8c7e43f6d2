/*
 * contract.mjs - api/openapi.json checked by independent tools, and the
 * real trainsize-server checked against it.
 *
 *   node tests/openapi/contract.mjs <path to trainsize-server>
 *
 * Everything is read from the document itself (routes, schemas, examples,
 * problem types), so routes and members added later are covered without
 * touching this file.  Phases:
 *   1. the document: @seriousme/openapi-schema-validator, and
 *      @apidevtools/swagger-parser, and `redocly lint` (recommended rules):
 *      zero errors;
 *   2. contract through @stoplight/prism-cli in proxy mode: every documented
 *      operation, the README's curl examples, the documented valid and
 *      invalid bodies, wrong methods, wrong content types, unknown paths,
 *      If-None-Match; no response violation ever, a request violation
 *      exactly when ajv (below) calls the request invalid;
 *   3. straight to the server (what Prism cannot carry: it parses and
 *      re-serialises JSON bodies, and fails on HEAD of a JSON answer):
 *      HEAD beside every GET, duplicated keys, 2.0 for integers, 2^63+
 *      literals for numbers, an over-cap body;
 *   4. a seeded, time-bounded json-schema-faker generator of valid and
 *      mutated bodies for every POST route, classified by ajv (draft
 *      2020-12): valid -> 200 or a documented 4xx naming a field;
 *      invalid -> 4xx problem+json naming the mutated member; never 5xx.
 * Every answer in every phase is also checked here against the document
 * (status documented, media type as documented, body valid by its schema
 * with ajv, required headers, problem type and title as in
 * x-problem-types).
 *   5. a typed client: openapi-typescript generates types from the
 *      document into a scratch folder, client/client.ts compiles against
 *      them under tsc --strict (its @ts-expect-error lines must still be
 *      errors) and then calls the server.
 * Prints "openapi: N passed, M failed" and exits non-zero on any failure.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import jsf from 'json-schema-faker';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const DOC_PATH = join(ROOT, 'api', 'openapi.json');
const SERVER_ARG = process.argv[2] || process.env.TRAINSIZE_SERVER;
const SERVER = SERVER_ARG && resolve(SERVER_ARG);
const SEED = Number(process.env.OPENAPI_SEED || 20261203);
const GEN_MS = Number(process.env.OPENAPI_GEN_MS || 6000);   /* generator budget, all routes */
const GEN_MAX = Number(process.env.OPENAPI_GEN_MAX || 1500); /* and a count cap per route */
const PROBLEM_BASE = 'https://trainsize.dev/problems/';
const BODY_MAX = 64 * 1024; /* api/ts_api.h TS_API_BODY_MAX */

const results = { passed: 0, failed: 0 };
const children = [];

function log(...a) {
    process.stdout.write(a.join(' ') + '\n');
}

function check(name, ok, why) {
    if (ok) {
        results.passed++;
    } else {
        results.failed++;
        log(`FAIL ${name}${why ? ': ' + why : ''}`);
    }
    return ok;
}

/* A group of checks counted as one result: every answer of a phase. */
class Tally {
    constructor(name) {
        this.name = name;
        this.n = 0;
        this.start = sent;
        this.bad = [];
    }
    add(ok, why) {
        this.n++;
        if (!ok && this.bad.length < 1000)
            this.bad.push(why);
        return ok;
    }
    report(extra = '') {
        this.requests = sent - this.start;
        for (const b of this.bad.slice(0, 15))
            log(`  ${this.name}: ${b}`);
        if (this.bad.length > 15)
            log(`  ${this.name}: ... ${this.bad.length - 15} more`);
        check(`${this.name} (${this.requests} requests${extra})`, this.bad.length === 0 && this.n > 0,
              `${this.bad.length} of ${this.n} checks wrong`);
        if (this.bad.length === 0)
            log(`ok   ${this.name}: ${this.requests} requests, ${this.n} checks${extra}`);
    }
}

/* mulberry32: a small seeded PRNG, so a failure reproduces from its seed. */
function prng(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

/* ------------------------------------------------------------------ */
/* processes                                                           */
/* ------------------------------------------------------------------ */

function freePort() {
    return new Promise((res, rej) => {
        const s = createServer();
        s.on('error', rej);
        s.listen(0, '127.0.0.1', () => {
            const { port } = s.address();
            s.close(() => res(port));
        });
    });
}

function startServer() {
    const args = ['--port', '0', '--bind', '127.0.0.1', '--threads', '2', '--access-log', '0',
                  '--web-root', join(ROOT, 'web'), '--openapi', DOC_PATH];
    const child = spawn(SERVER, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    return new Promise((res, rej) => {
        const timer = setTimeout(() => rej(new Error(`server did not start in 10 s:\n${out}`)), 10000);
        const onData = (d) => {
            out += d.toString();
            const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
            if (m) {
                clearTimeout(timer);
                res(m[1]);
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
            rej(new Error(`server exited (${code}):\n${out}`));
        });
    });
}

async function startPrism(upstream) {
    const port = await freePort();
    const cli = join(HERE, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js');
    const child = spawn(process.execPath, [cli, 'proxy', DOC_PATH, upstream, '--host', '127.0.0.1',
                                           '--port', String(port)],
                        { cwd: HERE, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    child.stdout.on('data', (d) => { out += d.toString(); });
    child.stderr.on('data', (d) => { out += d.toString(); });
    const base = `http://127.0.0.1:${port}`;
    const t0 = Date.now();
    while (Date.now() - t0 < 30000) {
        if (child.exitCode !== null)
            throw new Error(`prism exited (${child.exitCode}):\n${out.slice(-2000)}`);
        try {
            const r = await fetch(base + '/livez');
            await r.arrayBuffer();
            return { base, log: () => out };
        } catch {
            await new Promise((r) => setTimeout(r, 100));
        }
    }
    throw new Error(`prism did not start in 30 s:\n${out.slice(-2000)}`);
}

function stopAll() {
    for (const c of children)
        if (c.exitCode === null && c.signalCode === null)
            c.kill('SIGTERM');
}

/* SIGTERM drains and exits 0; a sanitizer report (ASan build) or a crash
 * shows up here as a non-zero status. */
function stopServer() {
    const c = children[0];
    if (!c || c.exitCode !== null || c.signalCode !== null)
        return Promise.resolve(c ? c.exitCode : null);
    let err = '';
    c.stderr.on('data', (d) => { err += d; });
    return new Promise((res) => {
        const timer = setTimeout(() => c.kill('SIGKILL'), 15000);
        c.on('exit', (code, sig) => {
            clearTimeout(timer);
            check('server exits 0 on SIGTERM', code === 0, `status ${code} ${sig || ''} ${err.slice(-3000)}`);
            res(code);
        });
        c.kill('SIGTERM');
    });
}

/* ------------------------------------------------------------------ */
/* the document: lookup and validation of answers                      */
/* ------------------------------------------------------------------ */

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'];
let raw;        /* the document as written */
let doc;        /* dereferenced copy: every $ref replaced by its target */
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
addFormats(ajv);
const compiled = new Map();

function validator(schema) {
    let v = compiled.get(schema);
    if (!v) {
        v = ajv.compile(schema);
        compiled.set(schema, v);
    }
    return v;
}

function ajvErrors(v) {
    return (v.errors || []).slice(0, 3).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
}

function templateRe(p) {
    return new RegExp('^' + p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^/}]+\}/g, '[^/]+') + '$');
}

/* The path item for a concrete path: exact match first (OpenAPI 3.1
 * 4.8.8: concrete paths before templated ones). */
function pathItem(path) {
    const p = path.split('?')[0];
    if (doc.paths[p])
        return { key: p, item: doc.paths[p] };
    for (const [k, item] of Object.entries(doc.paths))
        if (k.includes('{') && templateRe(k).test(p))
            return { key: k, item };
    return null;
}

function problemTypes() {
    return raw.components.schemas.Problem['x-problem-types'] || {};
}

function mediaOf(ct) {
    return (ct || '').toLowerCase().replace(/\s+/g, '');
}

/*
 * Is this answer what the document says?  Returns null or a reason.
 * For a method the path does not have, the document's 405 response
 * (components.responses.MethodNotAllowed*) applies; for an unknown path,
 * its 404 (components.responses.NotFound).
 */
function answerProblem(method, path, status, headers, text) {
    const m = method.toLowerCase();
    const pi = pathItem(path);
    let spec;
    if (!pi) {
        if (status !== 404)
            return `unknown path answered ${status}, documented 404 (components.responses.NotFound)`;
        spec = doc.components.responses.NotFound;
    } else if (!pi.item[m]) {
        if (status !== 405)
            return `${method} not documented for ${pi.key} but answered ${status} (want 405)`;
        const has = METHODS.filter((x) => pi.item[x]).map((x) => x.toUpperCase());
        const allow = (headers.get('allow') || '').split(',').map((s) => s.trim()).filter(Boolean);
        if (allow.sort().join(',') !== has.sort().join(','))
            return `Allow "${headers.get('allow')}" but the document has ${has.join(', ')}`;
        spec = doc.components.responses[pi.item.get ? 'MethodNotAllowedGet' : 'MethodNotAllowedPost'];
    } else {
        const rs = pi.item[m].responses;
        spec = rs[String(status)] || rs[`${String(status)[0]}XX`] || rs.default;
        if (!spec)
            return `${method} ${pi.key}: status ${status} not documented (${Object.keys(rs).join(', ')})`;
    }
    if (status >= 500 && status !== 503)
        return `server error ${status}: ${text.slice(0, 200)}`;
    for (const [h, hs] of Object.entries(spec.headers || {}))
        if (hs.required && !headers.has(h))
            return `required header ${h} missing`;
    const content = spec.content || {};
    const ct = headers.get('content-type');
    if (m === 'head' || status === 304) {
        if (text.length !== 0)
            return `${m === 'head' ? 'HEAD' : '304'} with a body`;
        return null;
    }
    if (Object.keys(content).length === 0) {
        if (text.length !== 0)
            return `body where the document has no content: ${text.slice(0, 80)}`;
        return null;
    }
    const key = Object.keys(content).find((k) => mediaOf(k) === mediaOf(ct));
    if (!key)
        return `Content-Type "${ct}" not documented for ${status} (${Object.keys(content).join(', ')})`;
    const schema = content[key].schema;
    let value = text;
    if (/json/.test(key)) {
        try {
            value = JSON.parse(text);
        } catch (e) {
            return `body is not JSON: ${e.message}`;
        }
    }
    if (schema) {
        const v = validator(schema);
        if (!v(value))
            return `body does not match the ${status} schema: ${ajvErrors(v)}`;
    }
    if (key === 'application/problem+json') {
        const slug = String(value.type).startsWith(PROBLEM_BASE) ? value.type.slice(PROBLEM_BASE.length) : null;
        const t = problemTypes()[slug];
        if (!t)
            return `problem type ${value.type} not in x-problem-types`;
        if (t.title !== value.title || t.status !== status || value.status !== status)
            return `problem ${slug}: title "${value.title}" status ${value.status}/${status}, documented "${t.title}" ${t.status}`;
    }
    return null;
}

/* ------------------------------------------------------------------ */
/* HTTP                                                                */
/* ------------------------------------------------------------------ */

/* body: a string (sent as is) or undefined; ct: Content-Type or null for
 * none (a Uint8Array body carries no default type). */
let sent = 0;
async function send(base, method, path, { body, ct = 'application/json', headers = {} } = {}) {
    sent++;
    const h = { ...headers };
    let b;
    if (body !== undefined) {
        b = new TextEncoder().encode(body);
        if (ct !== null)
            h['content-type'] = ct;
    }
    const r = await fetch(base + path, { method, headers: h, body: b });
    const text = await r.text();
    return { status: r.status, headers: r.headers, text };
}

/* Prism's verdict, from its sl-violations header. */
function violations(r) {
    const v = r.headers.get('sl-violations');
    if (!v)
        return { request: [], response: [] };
    const all = JSON.parse(v);
    return {
        request: all.filter((x) => x.location[0] === 'request'),
        response: all.filter((x) => x.location[0] === 'response'),
    };
}

function fmtViol(list) {
    return list.map((x) => `${x.location.join('.')}: ${x.message}`).join('; ');
}

function pointer(key) {
    return '/' + key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/* ------------------------------------------------------------------ */
/* phase 1: the document                                               */
/* ------------------------------------------------------------------ */

async function phaseDocument() {
    const v = new Validator();
    const r = await v.validate(DOC_PATH);
    check('@seriousme/openapi-schema-validator: valid OpenAPI ' + raw.openapi, r.valid,
          String(JSON.stringify(r.errors)).slice(0, 2000)) && log('ok   @seriousme/openapi-schema-validator');

    try {
        await SwaggerParser.validate(structuredClone(raw));
        check('@apidevtools/swagger-parser', true);
        log('ok   @apidevtools/swagger-parser');
    } catch (e) {
        check('@apidevtools/swagger-parser', false, e.message.slice(0, 2000));
    }

    const cli = join(HERE, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
    const lint = spawnSync(process.execPath, [cli, 'lint', '--format=json', DOC_PATH], {
        cwd: HERE, encoding: 'utf8', timeout: 60000,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    let rep = null;
    try {
        rep = JSON.parse(lint.stdout.slice(lint.stdout.indexOf('{')));
    } catch {
        /* reported below */
    }
    if (check('redocly lint (recommended rules) ran', rep !== null && rep.totals,
              (lint.stderr || '').slice(-1500) + (lint.stdout || '').slice(0, 500))) {
        const errs = rep.problems.filter((p) => p.severity === 'error');
        for (const p of rep.problems.slice(0, 20))
            log(`  redocly ${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`);
        check(`redocly lint: zero errors (${rep.totals.warnings} warnings)`, errs.length === 0,
              `${errs.length} errors`) && log(`ok   redocly lint: 0 errors, ${rep.totals.warnings} warnings`);
    }
}

/* ------------------------------------------------------------------ */
/* requests from the document and the README                           */
/* ------------------------------------------------------------------ */

/* A concrete URL for a documented path: templated segments and required
 * query parameters from their examples. */
function concretePath(key, op) {
    let p = key;
    const q = [];
    for (const prm of op.parameters || []) {
        const ex = prm.example ?? Object.values(prm.examples || {})[0]?.value ?? prm.schema?.default ??
                   prm.schema?.examples?.[0];
        if (prm.in === 'path')
            p = p.replace(`{${prm.name}}`, encodeURIComponent(String(ex)));
        else if (prm.in === 'query' && prm.required)
            q.push(`${encodeURIComponent(prm.name)}=${encodeURIComponent(String(ex))}`);
    }
    return q.length ? `${p}?${q.join('&')}` : p;
}

function jsonRequest(op) {
    return op.requestBody?.content?.['application/json'];
}

/* The curl examples of the README and docs/api.md: -X, -H, -d and the URL
 * (backslash continuations joined, single-quoted words). */
function readmeCurls() {
    const text = ['README.md', 'docs/api.md'].map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n');
    const out = [];
    for (const block of text.matchAll(/```(?:sh|bash|console)?\n([\s\S]*?)```/g)) {
        const lines = block[1].replace(/\\\n\s*/g, ' ').split('\n');
        let producer = ''; /* the commands piped into the next line */
        for (const line of lines) {
            const l = line.trim();
            const fed = producer;
            producer = l.endsWith('|') && !l.startsWith('#') ? `${fed}${l} ` : '';
            if (!l.startsWith('curl '))
                continue;
            const words = [...l.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
            const req = { method: 'GET', headers: {}, body: undefined, url: null, line: l };
            for (let i = 1; i < words.length; i++) {
                const w = words[i];
                if (w === '-X' || w === '--request')
                    req.method = words[++i];
                else if (w === '-H' || w === '--header') {
                    const [k, ...v] = words[++i].split(':');
                    req.headers[k.trim().toLowerCase()] = v.join(':').trim();
                } else if (w === '-d' || w === '--data' || w === '--data-raw') {
                    req.body = words[++i];
                    if (req.method === 'GET')
                        req.method = 'POST';
                } else if (w === '--data-binary' && words[i + 1] === '@-' && fed !== '') {
                    /* The body is what the example pipes in: run that part
                     * of the example as written, from the repository root. */
                    i++;
                    const r = spawnSync('bash', ['-c', fed.replace(/\|\s*$/, '')],
                                        { cwd: ROOT, encoding: 'utf8', timeout: 10000 });
                    req.body = r.status === 0 ? r.stdout : undefined;
                    if (req.method === 'GET')
                        req.method = 'POST';
                } else if (/^https?:\/\//.test(w))
                    req.url = new URL(w);
            }
            /* Only calls of this server (localhost:8080), not other hosts. */
            if (req.url && /^(127\.0\.0\.1|localhost)$/.test(req.url.hostname))
                out.push(req);
        }
    }
    return out;
}

/* ------------------------------------------------------------------ */
/* phase 2: through Prism                                              */
/* ------------------------------------------------------------------ */

async function phasePrism(prism) {
    const t = new Tally('prism contract');
    const cases = [];
    const schemaValid = (op, body) => {
        const media = jsonRequest(op);
        if (!media)
            return true;
        try {
            return validator(media.schema)(JSON.parse(body));
        } catch {
            return false;
        }
    };

    for (const [key, item] of Object.entries(doc.paths)) {
        for (const m of METHODS) {
            const op = item[m];
            if (!op || m === 'head')
                continue; /* HEAD: phase 3 (Prism cannot proxy HEAD of JSON) */
            const path = concretePath(key, op);
            if (m === 'get') {
                cases.push({ what: `GET ${path}`, method: 'GET', path, expectReqViolation: false });
                /* If-None-Match with the ETag just served: 304 */
                if (op.responses['304'])
                    cases.push({ what: `GET ${path} If-None-Match`, method: 'GET', path, etag: true, expectReqViolation: false });
                continue;
            }
            /* Every documented request media type with its examples
             * (a JSON value is sent as JSON, a string as it is). */
            const content = op.requestBody?.content || {};
            const types = Object.keys(content);
            let first = null;
            for (const mt of types) {
                const exs = Object.entries(content[mt].examples || {});
                if (content[mt].example !== undefined)
                    exs.push(['example', { value: content[mt].example }]);
                for (const [name, ex] of exs) {
                    const body = /json/.test(mt) || typeof ex.value !== 'string' ? JSON.stringify(ex.value) : ex.value;
                    first = first || { mt, body };
                    cases.push({ what: `${key} ${mt} example ${name}`, method: m.toUpperCase(), path, body, ct: mt,
                                 expect: [200], expectReqViolation: mt === 'application/json' && !schemaValid(op, body) });
                }
            }
            if (!first) {
                if (op.requestBody)
                    t.add(false, `${m.toUpperCase()} ${key}: no request example to test with`);
                continue;
            }
            const bad = op.responses['400']?.content?.['application/problem+json']?.examples || {};
            for (const [name, ex] of Object.entries(bad)) {
                if (ex['x-request'] === undefined)
                    continue; /* raw text: Prism would re-serialise it (phase 3) */
                const body = JSON.stringify(ex['x-request']);
                cases.push({ what: `${key} 400 example ${name}`, method: m.toUpperCase(), path, body,
                             expect: [400], field: ex.value?.field, expectReqViolation: !schemaValid(op, body) });
            }
            /* wrong content types: 415 */
            for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', null]) {
                if (ct !== null && types.includes(ct))
                    continue;
                cases.push({ what: `${key} Content-Type ${ct}`, method: m.toUpperCase(), path, body: first.body, ct,
                             expect: [415], expectReqViolation: true });
            }
        }
        /* wrong methods: 405 with Allow */
        const path = concretePath(key, item.get || item.post || Object.values(item)[0]);
        for (const wm of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
            if (item[wm.toLowerCase()])
                continue;
            cases.push({ what: `${wm} ${path} (not documented)`, method: wm, path,
                         body: wm === 'GET' ? undefined : '{}', expect: [405], routeMissing: true });
        }
    }
    /* unknown paths: 404 (Prism has no route for them either) */
    for (const path of ['/v1/nope', '/v1/memory/extra', '/v2/memory', '/no/such/file.js', '/nope.js', '/.hidden'])
        cases.push({ what: `GET ${path}`, method: 'GET', path, expect: [404], routeMissing: true });

    for (const c of readmeCurls()) {
        const path = c.url.pathname + c.url.search;
        const pi = pathItem(path);
        const op = pi?.item[c.method.toLowerCase()];
        cases.push({ what: `README: ${c.line.slice(0, 90)}`, method: c.method, path, body: c.body,
                     ct: c.headers['content-type'] ?? (c.body !== undefined ? 'application/x-www-form-urlencoded' : undefined),
                     routeMissing: !op,
                     expectReqViolation: op && c.body !== undefined ? !schemaValid(op, c.body) : false });
    }

    for (const c of cases) {
        let headers = {};
        if (c.etag) {
            const first = await send(prism.base, 'GET', c.path);
            headers = { 'if-none-match': first.headers.get('etag') || '' };
        }
        const r = await send(prism.base, c.method, c.path, { body: c.body, ct: c.ct === undefined ? 'application/json' : c.ct, headers });
        const v = violations(r);
        const prob = answerProblem(c.method, c.path, r.status, r.headers, r.text);
        if (!t.add(prob === null, `${c.what}: ${prob}`))
            continue;
        if (!t.add(v.response.length === 0, `${c.what}: Prism response violations: ${fmtViol(v.response)}`))
            continue;
        if (c.routeMissing) {
            /* Prism's only complaint may be that no operation matches. */
            t.add(v.request.every((x) => /route not found|Route not resolved|no.*match/i.test(x.message)),
                  `${c.what}: request violations ${fmtViol(v.request)}`);
        } else {
            t.add(c.expectReqViolation === (v.request.length > 0),
                  `${c.what}: ${c.expectReqViolation ? 'invalid by the schema but Prism saw no request violation'
                                                     : 'Prism request violations: ' + fmtViol(v.request)}`);
        }
        if (c.expect)
            t.add(c.expect.includes(r.status), `${c.what}: status ${r.status}, want ${c.expect}: ${r.text.slice(0, 200)}`);
        if (c.etag)
            t.add(r.status === 304, `${c.what}: status ${r.status}, want 304`);
        if (c.field !== undefined)
            t.add(JSON.parse(r.text).field === c.field, `${c.what}: field ${JSON.parse(r.text).field}, documented ${c.field}`);
    }
    t.report(`, ${cases.length} cases`);
}

/* ------------------------------------------------------------------ */
/* phase 3: straight to the server                                     */
/* ------------------------------------------------------------------ */

async function phaseDirect(base) {
    const t = new Tally('direct');
    /* HEAD beside every GET: same status and headers, no body. */
    for (const [key, item] of Object.entries(doc.paths)) {
        if (!item.get)
            continue;
        const path = concretePath(key, item.get);
        t.add(!!item.head, `HEAD ${key} not documented beside GET`);
        const g = await send(base, 'GET', path);
        const h = await send(base, 'HEAD', path);
        t.add(answerProblem('HEAD', path, h.status, h.headers, h.text) === null,
              `HEAD ${path}: ${answerProblem('HEAD', path, h.status, h.headers, h.text)}`);
        /* fetch asks for gzip and decodes it: compare the wire lengths
         * then (the static files are served gzipped when asked). */
        const glen = g.headers.get('content-encoding') ? g.headers.get('content-length')
                                                       : String(Buffer.byteLength(g.text));
        t.add(h.status === g.status && h.headers.get('content-type') === g.headers.get('content-type') &&
              h.headers.get('content-encoding') === g.headers.get('content-encoding') &&
              (key === '/metrics' || h.headers.get('content-length') === glen),
              `HEAD ${path}: ${h.status} ${h.headers.get('content-type')} ${h.headers.get('content-length')} vs GET ` +
              `${g.status} ${g.headers.get('content-type')} ${glen}`);
    }
    /* The document the server hands out is the one tested here. */
    {
        const r = await send(base, 'GET', '/openapi.json');
        let same = false;
        try {
            same = JSON.stringify(JSON.parse(r.text)) === JSON.stringify(raw);
        } catch {
            /* reported below */
        }
        t.add(r.status === 200 && same, `GET /openapi.json: ${r.status}, ${same ? 'same' : 'not the same'} document`);
    }
    /* HEAD and OPTIONS where the document has neither: 405 with Allow
     * (Prism answers OPTIONS itself, as a CORS preflight). */
    for (const [key, item] of Object.entries(doc.paths)) {
        const path = concretePath(key, item.get || item.post || Object.values(item)[0]);
        for (const wm of ['HEAD', 'OPTIONS']) {
            if (item[wm.toLowerCase()])
                continue;
            const r = await send(base, wm, path);
            const prob = answerProblem(wm, path, r.status, r.headers, r.text);
            t.add(prob === null && r.status === 405, `${wm} ${path}: ${r.status} ${prob}`);
        }
    }
    /* Bodies Prism would re-serialise: raw-text 400 examples, duplicates
     * of long keys, integral reals, huge integer literals. */
    const posts = Object.entries(doc.paths).filter(([, item]) => jsonRequest(item.post || {}));
    const cases = [];
    for (const [key, item] of posts) {
        const bad = item.post.responses['400']?.content?.['application/problem+json']?.examples || {};
        for (const [name, ex] of Object.entries(bad))
            if (typeof ex['x-request-text'] === 'string')
                cases.push({ what: `${key} 400 example ${name}`, path: key, body: ex['x-request-text'],
                             status: 400, type: ex.value?.type, field: ex.value?.field });
    }
    const run = jsonRequest(doc.paths['/v1/memory'].post).schema;
    const props = run.properties;
    const ints = Object.keys(props).filter((k) => [].concat(props[k].type).includes('integer'));
    const nums = Object.keys(props).filter((k) => [].concat(props[k].type)[0] === 'number');
    /* Every member name, duplicated: the pointer names it at any length. */
    for (const k of Object.keys(props))
        cases.push({ what: `duplicate ${k}`, path: '/v1/memory', body: `{"params": 7e9, "${k}": 1,\n "${k}" : 2}`,
                     status: 400, type: PROBLEM_BASE + 'duplicate-key', field: pointer(k) });
    const long = 'a_member_name_of_forty_characters_long__';
    cases.push({ what: 'duplicate 40-char key', path: '/v1/memory', body: `{"${long}":1,"tp":[{"}":"]"}],"${long}":2}`,
                 status: 400, type: PROBLEM_BASE + 'duplicate-key', field: pointer(long) });
    /* An integral real for every integer member is an integer (JSON
     * Schema 2020-12 validation 6.1.1); a fraction is not. */
    for (const k of ints) {
        const lo = props[k].minimum ?? (props[k].exclusiveMinimum + 1);
        const one = Math.min(Math.max(lo, 1), props[k].maximum ?? 1);
        /* the same answer as for the integer literal, byte for byte */
        cases.push({ what: `${k}: ${one}.0e0`, path: '/v1/memory', body: `{"params":7e9,"${k}":${one}.0e0}`,
                     same: `{"params":7e9,"${k}":${one}}` });
        cases.push({ what: `${k}: ${lo}.5`, path: '/v1/memory', body: `{"params":7e9,"${k}":${lo}.5}`,
                     status: 400, type: PROBLEM_BASE + 'invalid-type', field: pointer(k) });
        cases.push({ what: `${k}: 2^63`, path: '/v1/memory', body: `{"params":7e9,"${k}":9223372036854775808}`,
                     status: 400, type: PROBLEM_BASE + 'out-of-range', field: pointer(k) });
    }
    /* Integer literals of any size are numbers. */
    for (const k of nums) {
        const max = props[k].maximum ?? props[k].exclusiveMaximum;
        if (max === undefined || max < 1e19)
            continue;
        cases.push({ what: `${k}: 10000000000000000000`, path: '/v1/memory',
                     body: `{"params":7e9,"${k}":10000000000000000000}`, notField: pointer(k), statusIn: [200, 400, 422] });
    }
    cases.push({ what: 'body over the cap', path: '/v1/memory', body: `{"params":7e9${' '.repeat(BODY_MAX)}}`,
                 status: 413, type: PROBLEM_BASE + 'payload-too-large' });
    for (const c of cases) {
        const r = await send(base, 'POST', c.path, { body: c.body });
        const prob = answerProblem('POST', c.path, r.status, r.headers, r.text);
        if (!t.add(prob === null, `${c.what}: ${prob}`))
            continue;
        const j = JSON.parse(r.text);
        if (c.status !== undefined)
            t.add(r.status === c.status && (!c.type || j.type === c.type) && (c.field === undefined || j.field === c.field),
                  `${c.what}: ${r.status} ${j.type} field ${j.field}, want ${c.status} ${c.type} ${c.field}`);
        if (c.same) {
            const r2 = await send(base, 'POST', c.path, { body: c.same });
            t.add(r2.status === r.status && r2.text === r.text,
                  `${c.what}: ${r.status} ${r.text.slice(0, 160)} but ${c.same}: ${r2.status} ${r2.text.slice(0, 160)}`);
        }
        if (c.statusIn)
            t.add(c.statusIn.includes(r.status) && j.field !== c.notField,
                  `${c.what}: ${r.status} ${j.type} field ${j.field} (the value itself is valid)`);
    }
    t.report();
}

/* ------------------------------------------------------------------ */
/* phase 4: generated and mutated bodies                               */
/* ------------------------------------------------------------------ */

function mutations(schema, rnd) {
    const props = schema.properties || {};
    const keys = Object.keys(props);
    const k = keys[Math.floor(rnd() * keys.length)];
    const p = props[k];
    const types = [].concat(p.type || []);
    const out = [];
    out.push({ key: k, value: types.includes('string') ? 12 : 'x' + k }); /* wrong type */
    out.push({ key: k, value: { nested: 1 } });
    out.push({ key: k, value: [1] });
    if (!types.includes('null'))
        out.push({ key: k, value: null });
    if (types.includes('integer')) {
        const lo = p.minimum ?? 0;
        out.push({ key: k, value: lo + 0.5 });
    }
    if (p.maximum !== undefined)
        out.push({ key: k, value: p.maximum * 2 + 1 });
    if (p.exclusiveMaximum !== undefined)
        out.push({ key: k, value: p.exclusiveMaximum });
    if (p.minimum !== undefined)
        out.push({ key: k, value: p.minimum - 1 });
    if (p.exclusiveMinimum !== undefined)
        out.push({ key: k, value: p.exclusiveMinimum });
    if (p.enum)
        out.push({ key: k, value: p.enum[0] + '_not' });
    if (types.includes('boolean'))
        out.push({ key: k, value: 1 });
    out.push({ key: k.slice(0, -1) + 'z_', value: 1, unknown: true }); /* unknown member */
    return out[Math.floor(rnd() * out.length)];
}

async function phaseGenerator(base, prism) {
    const rnd = prng(SEED);
    jsf.option({ random: rnd, failOnInvalidTypes: false, useExamplesValue: false, useDefaultValue: false });
    const posts = Object.entries(doc.paths).filter(([, item]) => jsonRequest(item.post || {}));
    const t = new Tally(`generator (seed ${SEED})`);
    const stats = { valid: 0, ok200: 0, valid4xx: 0, invalid: 0, blamed: 0, prism: 0 };
    const deadline = Date.now() + GEN_MS;
    const perRoute = Math.max(1, Math.floor(GEN_MS / posts.length));
    for (const [key, item] of posts) {
        const media = jsonRequest(item.post);
        const schema = media.schema;
        const isValid = validator(schema);
        const bases = Object.values(media.examples || {}).map((e) => e.value);
        const documented4xx = Object.keys(item.post.responses).filter((c) => /^4/.test(c)).map(Number);
        const routeEnd = Math.min(deadline, Date.now() + perRoute);
        for (let i = 0; i < GEN_MAX && Date.now() < routeEnd; i++) {
            /* A documented example plus 1..4 members drawn from the schema
             * (a body of ~70 random members is a 400 every time). */
            let body;
            try {
                body = { ...(bases[Math.floor(rnd() * bases.length)] || {}) };
                const names = Object.keys(schema.properties || {});
                for (let n = 1 + Math.floor(rnd() * 4); n > 0 && names.length; n--) {
                    const k = names[Math.floor(rnd() * names.length)];
                    body[k] = jsf.generate(schema.properties[k]);
                }
            } catch (e) {
                t.add(false, `${key}: json-schema-faker: ${e.message}`);
                break;
            }
            let mut = null;
            const before = { ...body };
            if (rnd() < 0.5) {
                mut = mutations(schema, rnd);
                body[mut.key] = mut.value;
            }
            const valid = isValid(body);
            const text = JSON.stringify(body);
            /* One in 8 goes through Prism for its independent verdict
             * (it is ~10x slower than the server). */
            const viaPrism = i % 8 === 0;
            const r = await send(viaPrism ? prism.base : base, 'POST', key, { body: text });
            const prob = answerProblem('POST', key, r.status, r.headers, r.text);
            const what = `${viaPrism ? 'via Prism ' : ''}${key} ${text.slice(0, 160)}`;
            if (!t.add(prob === null, `${what}: ${prob}`))
                continue;
            if (viaPrism) {
                const v = violations(r);
                stats.prism++;
                t.add(v.response.length === 0, `${what}: Prism response violations: ${fmtViol(v.response)}`);
                t.add(valid === (v.request.length === 0),
                      `${what}: ajv says ${valid ? 'valid' : 'invalid'}, Prism request violations: ${fmtViol(v.request) || 'none'}`);
            }
            const j = JSON.parse(r.text);
            if (valid) {
                stats.valid++;
                if (r.status === 200) {
                    stats.ok200++;
                    t.add(true);
                } else {
                    stats.valid4xx++;
                    t.add(documented4xx.includes(r.status) && typeof j.field === 'string',
                          `${what}: schema-valid, got ${r.status} ${j.type} field ${j.field}`);
                }
            } else {
                stats.invalid++;
                /* The mutated member is to blame when the body was valid
                 * before the mutation: the api checks every member's type
                 * and range before any cross-member rule. */
                const want = mut && isValid(before) ? pointer(mut.key) : null;
                if (want !== null)
                    stats.blamed++;
                t.add(r.status >= 400 && r.status < 500 && r.headers.get('content-type') === 'application/problem+json' &&
                      typeof j.field === 'string' && (want === null || j.field === want),
                      `${what}: schema-invalid (${ajvErrors(isValid)}), got ${r.status} field ${j.field}, want ${want}`);
            }
        }
    }
    /* A generator that never reached a 200 or an invalid body tests little. */
    check(`generator reached 200s (${stats.ok200}) and invalid bodies (${stats.invalid})`,
          stats.ok200 > 0 && stats.invalid > 0);
    t.report(`: ${stats.valid} schema-valid (${stats.ok200} -> 200, ${stats.valid4xx} -> 4xx naming a field), ` +
             `${stats.invalid} schema-invalid (${stats.blamed} with the mutated member named); ${stats.prism} through Prism`);
}

/* ------------------------------------------------------------------ */
/* phase 5: a typed client                                             */
/* ------------------------------------------------------------------ */

async function phaseClient(base) {
    const dir = mkdtempSync(join(tmpdir(), 'trainsize-client-'));
    try {
        copyFileSync(join(HERE, 'client', 'client.ts'), join(dir, 'client.ts'));
        copyFileSync(join(HERE, 'client', 'tsconfig.json'), join(dir, 'tsconfig.json'));
        const bin = (m, f) => join(HERE, 'node_modules', m, 'bin', f);
        const gen = spawnSync(process.execPath, [bin('openapi-typescript', 'cli.js'), DOC_PATH, '-o', join(dir, 'api.d.ts')],
                              { cwd: HERE, encoding: 'utf8', timeout: 60000 });
        if (!check('openapi-typescript generates types', gen.status === 0, (gen.stderr || '') + (gen.stdout || '')))
            return;
        log('ok   openapi-typescript: api.d.ts from the document');
        const tsc = spawnSync(process.execPath, [join(HERE, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')],
                              { cwd: dir, encoding: 'utf8', timeout: 120000 });
        if (!check('client.ts compiles under tsc --strict', tsc.status === 0, (tsc.stdout || '') + (tsc.stderr || '')))
            return;
        log('ok   tsc --strict: client.ts against the generated types');
        await new Promise((res) => {
            const child = spawn(process.execPath, [join(dir, 'out', 'client.js'), base], { stdio: ['ignore', 'pipe', 'pipe'] });
            let out = '';
            child.stdout.on('data', (d) => { out += d; });
            child.stderr.on('data', (d) => { out += d; });
            child.on('exit', () => {
                for (const line of out.split('\n').filter(Boolean))
                    if (!/^client: \d+ \d+$/.test(line))
                        log(line);
                const m = out.match(/^client: (\d+) (\d+)$/m);
                if (m) {
                    results.passed += Number(m[1]);
                    results.failed += Number(m[2]);
                } else {
                    check('typed client ran', false, out.slice(-1000));
                }
                res();
            });
        });
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

/* ------------------------------------------------------------------ */

async function main() {
    if (!SERVER) {
        log('usage: node contract.mjs <path to trainsize-server>');
        process.exit(2);
    }
    raw = JSON.parse(readFileSync(DOC_PATH, 'utf8'));
    doc = await SwaggerParser.dereference(structuredClone(raw));
    const t0 = Date.now();
    await phaseDocument();
    const base = await startServer();
    const prism = await startPrism(base);
    log(`     server ${base}, prism ${prism.base} (${Date.now() - t0} ms)`);
    await phasePrism(prism);
    await phaseDirect(base);
    await phaseGenerator(base, prism);
    await phaseClient(base);
    await stopServer();
    log(`     contract checks took ${Date.now() - t0} ms`);
}

main().catch((e) => {
    check('contract run', false, e && e.stack ? e.stack : String(e));
}).finally(() => {
    stopAll();
    if (process.env.OPENAPI_NO_SUMMARY !== '1')
        log(`openapi: ${results.passed} passed, ${results.failed} failed`);
    process.exitCode = results.failed === 0 ? 0 : 1;
});
