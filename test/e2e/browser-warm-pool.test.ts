import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { startEgressProxy } from '../../adapters/executor-playwright/egress-proxy.js';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { createEgressGuard } from '../../src/tools/egress.js';
import type { Engine } from '../../src/engine/types.js';
import type { Run } from '../../src/run/types.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { hostedToolPolicy } from '../../src/tools/policy.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import type { ToolRegistry } from '../../src/tools/types.js';
import { makeSpec, testEngine, type StepDef } from '../unit/engine/helpers.js';
import { startHosted } from '../helpers/hosted.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The warm pool (docs/browser.md, "Warm pool") in real Chromium: contexts made ready before the run,
 * each handed to one run only; what one run leaves (a cookie, localStorage) is absent from the next;
 * each run's egress proxy is bound to that run's guard; a failed run's context is closed; dispose
 * closes every waiting context.
 */

let site: Server;
let other: Server;
let origin: string;
let otherConnections = 0;

const html = (body: string) => `<!doctype html><html><head><title>Pool</title></head><body>${body}</body></html>`;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  site = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    res.writeHead(200, { 'content-type': 'text/html' });
    if (path === '/set') {
      res.end(
        html(
          `<p id="out">set</p><script>document.cookie = 'left=by-run-1; path=/; max-age=3600'; localStorage.setItem('left', 'by-run-1'); sessionStorage.setItem('left', 'by-run-1');</script>`,
        ),
      );
      return;
    }
    // What this context sees of earlier runs: cookie, localStorage and sessionStorage.
    res.end(
      html(
        `<p id="out"></p><script>document.getElementById('out').textContent = JSON.stringify({ cookie: document.cookie, local: localStorage.getItem('left'), session: sessionStorage.getItem('left') });</script>`,
      ),
    );
  });
  origin = `http://127.0.0.1:${await listen(site)}`;
  other = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html('<p id="out">other</p>')));
  other.on('connection', () => otherConnections++);
  await listen(other);
});

afterAll(async () => {
  await new Promise((r) => site?.close(r));
  await new Promise((r) => other?.close(r));
});

const nav = (url: string): StepDef => ({ id: 'nav', tool: 'browser/navigate', args: { url }, timeout_ms: 60_000 });
const read: StepDef = { id: 'read', tool: 'browser/extract', args: { target: '#out' }, timeout_ms: 60_000 };

function outputOf(run: Run): unknown {
  const done = run.journal.find((e) => e.event === 'step_succeeded' && e.step === 'read');
  return done?.event === 'step_succeeded' ? done.output : undefined;
}

describe('the warm pool', () => {
  let exec: PlaywrightExecutor;
  let registry: ToolRegistry;
  let guarded: Engine;
  let open: Engine;

  beforeAll(() => {
    exec = createPlaywrightExecutor({ warmContexts: 2 });
    registry = createToolRegistry(builtinTools(), exec.tools);
    guarded = testEngine(registry, { toolPolicy: hostedToolPolicy({ allow: [new URL(origin).host] }) }).engine;
    open = testEngine(registry).engine;
  });

  afterAll(async () => {
    await guarded?.dispose();
    await open?.dispose();
    await exec?.dispose();
  });

  const run = (engine: Engine, steps: StepDef[]) => engine.run({ spec: makeSpec(registry, steps) }, {});

  it('makes contexts ready before the first run, and a run takes one without making its own', async () => {
    exec.warmUp({ guarded: true });
    await waitUntil(() => exec.stats().warmContexts === 2, { what: 'two warm contexts' });
    expect(exec.stats()).toMatchObject({ launches: 1, contextsCreated: 2, openContexts: 0 });
    const r = await run(guarded, [nav(`${origin}/show`), read]);
    expect(r.status).toBe('succeeded');
    // The run's context was one of the two made before it: a third one only refills the pool.
    await waitUntil(() => exec.stats().warmContexts === 2, { what: 'the pool refilled' });
    expect(exec.stats()).toMatchObject({ launches: 1, contextsCreated: 3, contextsClosed: 1, openContexts: 0 });
  });

  it('two runs in a row share no state: cookie, localStorage and sessionStorage of run 1 are absent in run 2', async () => {
    const first = await run(
      guarded,
      [nav(`${origin}/set`), nav(`${origin}/show`), read].map((s, i) => ({ ...s, id: i === 2 ? 'read' : `nav${i}` })),
    );
    expect(first.status).toBe('succeeded');
    expect(JSON.parse(String((outputOf(first) as { value: string }).value))).toEqual({ cookie: 'left=by-run-1', local: 'by-run-1', session: 'by-run-1' });
    const second = await run(guarded, [nav(`${origin}/show`), read]);
    expect(second.status).toBe('succeeded');
    expect(JSON.parse(String((outputOf(second) as { value: string }).value))).toEqual({ cookie: '', local: null, session: null });
  });

  it("binds each warm context's proxy to the guard of the run that takes it", async () => {
    const before = otherConnections;
    const denied = await run(guarded, [nav(`http://localhost:${(other.address() as AddressInfo).port}/`)]);
    expect(denied.status).toBe('failed');
    expect(denied.journal.at(-1)).toMatchObject({ event: 'run_finished', error: { code: 'egress_denied' } });
    expect(otherConnections).toBe(before);
    // A run under no guard (another kind) gets a context without a proxy, and reaches it.
    const free = await run(open, [nav(`http://localhost:${(other.address() as AddressInfo).port}/`), read]);
    expect(free.status).toBe('succeeded');
    expect(outputOf(free)).toMatchObject({ value: 'other' });
  });

  it('closes the context of a failed run, and every waiting context on dispose', async () => {
    const failed = await run(open, [nav(`${origin}/show`), { id: 'missing', tool: 'browser/click', args: { target: '#absent' }, timeout_ms: 5_000 }]);
    expect(failed.status).toBe('failed');
    expect(exec.stats().openContexts).toBe(0);
    await waitUntil(() => exec.stats().warmContexts === 2, { what: 'the pool refilled' });
    const s = exec.stats();
    expect(s.contextsCreated - s.contextsClosed).toBe(2);
    await exec.dispose();
    expect(exec.stats()).toMatchObject({ warmContexts: 0, openContexts: 0 });
    expect(exec.stats().contextsClosed).toBe(exec.stats().contextsCreated);
  });
});

describe("a warm context's proxy", () => {
  const get = (proxy: string, url: string) =>
    new Promise<{ status: number; denied: string | undefined }>((resolve, reject) => {
      const p = new URL(proxy);
      const req = request({ host: p.hostname, port: p.port, path: url, headers: { host: new URL(url).host } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, denied: res.headers['x-flowctl-egress'] as string | undefined }));
      });
      req.on('error', reject);
      req.end();
    });

  it('refuses every destination until bound to a run guard, then follows that guard; it binds once', async () => {
    const proxy = await startEgressProxy();
    try {
      expect(await get(proxy.server, `${origin}/show`)).toEqual({ status: 403, denied: 'denied' });
      expect(proxy.refusals).toHaveLength(1);
      proxy.bind(createEgressGuard({ allow: [new URL(origin).host] }));
      // Binding forgets the refusals made before the run.
      expect(proxy.refusals).toEqual([]);
      expect((await get(proxy.server, `${origin}/show`)).status).toBe(200);
      expect(await get(proxy.server, `http://localhost:${(other.address() as AddressInfo).port}/`)).toEqual({ status: 403, denied: 'denied' });
      expect(() => proxy.bind(createEgressGuard({}))).toThrow(/already has its guard/);
    } finally {
      await proxy.close();
    }
  });
});

describe('the hosted assembly', () => {
  it('starts the browser with 2 warm contexts (each with its proxy) before any run, and closes them all on shutdown', async () => {
    const h = await startHosted();
    let closed = false;
    try {
      await waitUntil(() => h.executor.stats().warmContexts === 2, { what: 'the assembly to fill its warm pool' });
      expect(h.executor.stats()).toMatchObject({ launches: 1, openContexts: 0, contextsCreated: 2 });
      await h.close();
      closed = true;
      const after = h.executor.stats();
      expect(after.warmContexts).toBe(0);
      expect(after.contextsClosed).toBe(after.contextsCreated);
    } finally {
      if (!closed) await h.close();
    }
  });
});

describe('warmContexts', () => {
  it('is refused unless an integer from 0 to 64', () => {
    for (const bad of [-1, 1.5, 65, Number.NaN]) {
      expect(() => createPlaywrightExecutor({ warmContexts: bad })).toThrow(/warmContexts must be an integer from 0 to 64/);
    }
  });
});
