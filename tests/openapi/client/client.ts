/*
 * client.ts - a typed client of trainsize, on types that openapi-typescript
 * generates from api/openapi.json at test time (./api.d.ts, not kept).
 * It must compile under tsc --strict; the @ts-expect-error lines prove the
 * generated types are strict enough to catch a wrong body at compile time
 * (tsc fails if one of them stops being an error).  Then it calls the
 * server given as argv[2] and checks the answers at run time.
 * Prints one "ok ..." or "FAIL ..." line per check, and "client: N M" last.
 */
import type { components, paths } from './api';

/* No @types/node: the little of node this uses. */
declare const process: { argv: string[] };

type Schemas = components['schemas'];
type PostPath = '/v1/memory' | '/v1/compute' | '/v1/checkpoint' | '/v1/plan' | '/v1/fit';
type Body<P extends PostPath> = NonNullable<paths[P]['post']['requestBody']>['content']['application/json'];
type Ok<P extends PostPath> = paths[P]['post']['responses'][200]['content']['application/json'];
type Bad<P extends PostPath> = paths[P]['post']['responses'][400]['content']['application/problem+json'];
type GetPath = '/v1/presets' | '/v1/gpus';
type GetOk<P extends GetPath> = paths[P]['get']['responses'][200]['content']['application/json'];

type Result<T, E> = { ok: true; status: 200; value: T } | { ok: false; status: number; problem: E };

class Trainsize {
    constructor(private readonly base: string) {}

    async post<P extends PostPath>(path: P, body: Body<P>): Promise<Result<Ok<P>, Bad<P>>> {
        const r = await fetch(this.base + path, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify(body),
        });
        const json: unknown = await r.json();
        if (r.status === 200)
            return { ok: true, status: 200, value: json as Ok<P> };
        return { ok: false, status: r.status, problem: json as Bad<P> };
    }

    async get<P extends GetPath>(path: P): Promise<GetOk<P>> {
        const r = await fetch(this.base + path);
        if (r.status !== 200)
            throw new Error(`${path}: ${r.status}`);
        return (await r.json()) as GetOk<P>;
    }

    async livez(): Promise<paths['/livez']['get']['responses'][200]['content']['text/plain; charset=utf-8']> {
        const r = await fetch(this.base + '/livez');
        const text = await r.text();
        if (text !== 'ok\n')
            throw new Error(`livez: ${JSON.stringify(text)}`);
        return text;
    }
}

/* Compile-time checks: each line below must be a type error. */
function compileTimeChecks(c: Trainsize): void {
    // @ts-expect-error tp is an integer member: a string is refused
    void c.post('/v1/memory', { model: 'llama3-8b', tp: '2' });
    // @ts-expect-error unknown members are refused (additionalProperties: false)
    void c.post('/v1/memory', { model: 'llama3-8b', tpp: 2 });
    // @ts-expect-error recompute is an enum
    void c.post('/v1/plan', { model: 'llama3-8b', recompute: 'sometimes' });
    // @ts-expect-error solve is accepted by /v1/fit only
    void c.post('/v1/memory', { model: 'llama3-8b', solve: 'gpus' });
    // @ts-expect-error /v1/fit requires solve
    void c.post('/v1/fit', { model: 'llama3-8b' });
    const m = null as unknown as Schemas['MemoryResponse'];
    // @ts-expect-error fits is a boolean, not a string
    const s: string = m.memory.fits;
    void s;
}
void compileTimeChecks;

let passed = 0;
let failed = 0;
function check(name: string, ok: boolean, why = ''): void {
    if (ok)
        passed++;
    else
        failed++;
    console.log(`${ok ? 'ok  ' : 'FAIL'} client: ${name}${ok || !why ? '' : ': ' + why}`);
}

async function main(): Promise<void> {
    const base = process.argv[2] ?? 'http://127.0.0.1:8080';
    const c = new Trainsize(base);

    check('livez', (await c.livez()) === 'ok\n');

    const presets = await c.get('/v1/presets');
    const p8 = presets.presets.find((p) => p.id === 'llama3-8b');
    check('presets: llama3-8b listed with 32 layers', p8 !== undefined && p8.layers === 32);
    const gpus = await c.get('/v1/gpus');
    check('gpus: h100-sxm listed', gpus.gpus.some((g: Schemas['Gpu']) => g.id === 'h100-sxm' && g.hbm_bytes > 0));

    const run: Body<'/v1/memory'> = { model: 'llama3-8b', gpus: 8, zero: 1, recompute: 'full', gpu: 'h100-sxm' };
    const mem = await c.post('/v1/memory', run);
    if (mem.ok) {
        const total: number = mem.value.memory.total.value;
        const fits: boolean = mem.value.memory.fits;
        check('memory: total is a positive number of bytes', total > 0 && Number.isFinite(total));
        check('memory: fits is a boolean', typeof fits === 'boolean');
        /* The echo is itself a valid request (CONTRACT.md). */
        const echo: Body<'/v1/plan'> = mem.value.inputs;
        const plan = await c.post('/v1/plan', echo);
        check('plan: the memory echo sent back is accepted', plan.ok,
              plan.ok ? '' : JSON.stringify(plan.problem));
        if (plan.ok)
            check('plan: same memory total as /v1/memory', plan.value.memory.total.value === total);
    } else {
        check('memory: 200', false, JSON.stringify(mem.problem));
    }

    const fit = await c.post('/v1/fit', { model: 'llama3-8b', gpus: 8, zero: 3, recompute: 'full', solve: 'micro_batch' });
    check('fit: found a micro-batch', fit.ok && fit.value.found && (fit.value.micro_batch ?? 0) >= 1,
          JSON.stringify(fit.ok ? fit.value.found : fit.problem));

    /* A value the types allow but the core refuses: a problem naming it. */
    const bad = await c.post('/v1/memory', { model: 'llama3-70b', tp: 3, gpus: 24 });
    check('memory: tp 3 with 64 heads is a 400 naming /tp',
          !bad.ok && bad.status === 400 && bad.problem.field === '/tp',
          bad.ok ? 'got 200' : JSON.stringify(bad.problem));

    console.log(`client: ${passed} ${failed}`);
}

main().catch((e: unknown) => {
    console.log(`FAIL client: ${e instanceof Error ? e.stack : String(e)}`);
    console.log(`client: ${passed} ${failed + 1}`);
});
