import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import type { Engine } from '../../src/engine/types.js';
import type { Run } from '../../src/run/types.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { hostedToolPolicy, type ToolPolicy } from '../../src/tools/policy.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import type { ToolRegistry } from '../../src/tools/types.js';
import { makeSpec, testEngine, type StepDef } from '../unit/engine/helpers.js';

/**
 * Browser steps under the hosted tool policy, in real Chromium: the run's context sends every request
 * through its guarded proxy, so navigations, redirects, clicks, subresources and WebSockets to
 * refused addresses never reach them. Server A (127.0.0.1) is allowlisted; server B (127.0.0.1,
 * another port) is not, and counts every TCP connection it gets.
 */

let a: Server;
let b: Server;
let portA: number;
let portB: number;
let connectionsB = 0;
let exec: PlaywrightExecutor;
let registry: ToolRegistry;
let guarded: Engine;
let open: Engine;

const page = (body: string) => `<!doctype html><html><head><title>A</title></head><body>${body}</body></html>`;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  b = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(page('<p id="where">server B</p>'));
  });
  b.on('connection', () => connectionsB++);
  portB = await listen(b);
  a = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const html = (body: string) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(page(body));
    };
    switch (url.pathname) {
      case '/':
        return html('<p id="where">server A</p>');
      case '/redirect':
        res.writeHead(302, { location: url.searchParams.get('to')! });
        return res.end();
      case '/link':
        return html(`<a id="go" href="${url.searchParams.get('to')}">go</a>`);
      case '/subresources':
        // An image, a fetch and a WebSocket to B: each refused, the page itself fine.
        return html(
          `<p id="where">server A</p><img src="http://localhost:${portB}/pixel.png">` +
            `<script>fetch('http://localhost:${portB}/data').catch(() => {}); try { new WebSocket('ws://localhost:${portB}/ws'); } catch {}</script>`,
        );
      default:
        res.writeHead(404);
        return res.end();
    }
  });
  portA = await listen(a);
  exec = createPlaywrightExecutor();
  registry = createToolRegistry(builtinTools(), exec.tools);
  guarded = testEngine(registry, { toolPolicy: hostedToolPolicy({ allow: [`127.0.0.1:${portA}`] }) }).engine;
  open = testEngine(registry).engine;
});

afterAll(async () => {
  await guarded?.dispose();
  await open?.dispose();
  await exec?.dispose();
  await new Promise((r) => a?.close(r));
  await new Promise((r) => b?.close(r));
});

const nav = (url: string): StepDef => ({ id: 'nav', tool: 'browser/navigate', args: { url }, timeout_ms: 60_000 });
const where: StepDef = { id: 'where', tool: 'browser/extract', args: { target: '#where' }, timeout_ms: 60_000 };

function run(engine: Engine, steps: StepDef[], toolPolicy?: ToolPolicy): Promise<Run> {
  return engine.run({ spec: makeSpec(registry, steps) }, {}, toolPolicy ? { toolPolicy } : {});
}

function failure(run: Run) {
  const failed = run.journal.find((e) => e.event === 'step_failed');
  return failed?.event === 'step_failed' ? failed : undefined;
}

function expectDenied(r: Run, step: string, text: RegExp): void {
  expect(r.status, JSON.stringify(r.journal.at(-1))).toBe('failed');
  expect(failure(r)).toMatchObject({ step, will_retry: false, error: { code: 'egress_denied', retryable: false } });
  expect(failure(r)!.error.message).toMatch(text);
  expect(r.journal.at(-1)).toMatchObject({ event: 'run_finished', status: 'failed', error: { code: 'egress_denied', step } });
}

describe('browser steps under the hosted tool policy', () => {
  it('an allowlisted 127.0.0.1 works', async () => {
    const r = await run(guarded, [nav(`http://127.0.0.1:${portA}/`), where]);
    expect(r.status, JSON.stringify(r.journal.at(-1))).toBe('succeeded');
    const out = r.journal.filter((e) => e.event === 'step_succeeded').at(-1);
    expect(out?.event === 'step_succeeded' && out.output).toMatchObject({ value: 'server A' });
  });

  it.each([
    ['127.0.0.1 on a port not allowlisted', () => `http://127.0.0.1:${portB}/`, /loopback address/],
    ['[::1]', () => `http://[::1]:${portB}/`, /\[::1\]:\d+ is a loopback address/],
    ['10.0.0.1', () => 'http://10.0.0.1/', /10\.0\.0\.1:80 is a private address/],
    ['169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254:80 is a metadata address/],
    ['metadata.google.internal', () => 'http://metadata.google.internal/', /cloud metadata service name/],
  ])('navigate to %s is refused before the browser is asked', async (_what, url, text) => {
    const before = connectionsB;
    const r = await run(guarded, [nav(url())]);
    expectDenied(r, 'nav', text);
    // Refused in the tool's precheck: the effect (reported just before the browser navigates) never came.
    expect(r.journal.filter((e) => e.event === 'effect_recorded')).toEqual([]);
    expect(connectionsB).toBe(before);
  });

  it('navigate to localhost (a name resolving to loopback) is refused by the proxy, http and https', async () => {
    const before = connectionsB;
    expectDenied(await run(guarded, [nav(`http://localhost:${portB}/`)]), 'nav', /localhost:\d+ resolves to (127\.0\.0\.1|::1), a loopback address/);
    expectDenied(await run(guarded, [nav(`https://localhost:${portB}/`)]), 'nav', /localhost:\d+ resolves to (127\.0\.0\.1|::1), a loopback address/);
    expect(connectionsB).toBe(before);
  });

  it('a name an injected resolver answers with 127.0.0.1 is refused at connect time', async () => {
    const asked: string[] = [];
    const policy = hostedToolPolicy({
      allow: [`127.0.0.1:${portA}`],
      lookup: async (name) => {
        asked.push(name);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    const before = connectionsB;
    expectDenied(await run(guarded, [nav(`http://rebind.test:${portB}/`)], policy), 'nav', /rebind\.test:\d+ resolves to 127\.0\.0\.1/);
    expect(asked).toContain('rebind.test');
    expect(connectionsB).toBe(before);
    // The same name on the allowlisted port: the proxy connects to the address it checked.
    const ok = await run(guarded, [nav(`http://rebind.test:${portA}/`), where], policy);
    expect(ok.status, JSON.stringify(ok.journal.at(-1))).toBe('succeeded');
  });

  it.each([
    ['localhost', () => `http://localhost:${portB}/`],
    ['127.0.0.1 on another port', () => `http://127.0.0.1:${portB}/`],
    ['169.254.169.254', () => 'http://169.254.169.254/'],
    ['https://localhost', () => `https://localhost:${portB}/`],
  ])('a redirect from the allowlisted server to %s is refused', async (what, to) => {
    const url = `http://127.0.0.1:${portA}/redirect?to=${encodeURIComponent(to())}`;
    if (what === 'localhost') {
      // Control: without a policy Chromium follows the redirect to B.
      const before = connectionsB;
      const r = await run(open, [nav(url), where]);
      expect(r.status).toBe('succeeded');
      expect(connectionsB).toBeGreaterThan(before);
    }
    const before = connectionsB;
    expectDenied(await run(guarded, [nav(url)]), 'nav', /address/);
    expect(connectionsB).toBe(before);
  });

  it('a click on a link to a refused address fails the click with egress_denied', async () => {
    const before = connectionsB;
    const r = await run(guarded, [
      nav(`http://127.0.0.1:${portA}/link?to=${encodeURIComponent(`http://localhost:${portB}/`)}`),
      { id: 'click', tool: 'browser/click', args: { target: '#go' }, timeout_ms: 60_000 },
      where,
    ]);
    expectDenied(r, 'click', /localhost:\d+ resolves to/);
    expect(connectionsB).toBe(before);
  });

  it('refused subresources, fetches and WebSockets leave a warning and never connect', async () => {
    const before = connectionsB;
    const r = await run(guarded, [nav(`http://127.0.0.1:${portA}/subresources`), where]);
    expect(r.status, JSON.stringify(r.journal.at(-1))).toBe('succeeded');
    const warnings = r.journal.flatMap((e) => (e.event === 'step_succeeded' ? (e.warnings ?? []) : []));
    expect(warnings.some((w) => w.code === 'egress_denied' && /localhost:/.test(w.message))).toBe(true);
    expect(connectionsB).toBe(before);
  });
});
