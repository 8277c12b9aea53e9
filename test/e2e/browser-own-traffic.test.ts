import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import type { Engine } from '../../src/engine/types.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { hostedToolPolicy } from '../../src/tools/policy.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import type { ToolRegistry } from '../../src/tools/types.js';
import { makeSpec, testEngine, type StepDef } from '../unit/engine/helpers.js';

/**
 * The browser's own traffic (docs/browser.md, "Isolation"; NOTES.md: hosted runs reported
 * `content-autofill.googleapis.com:443` as egress_denied warnings): with the launch flags
 * (LAUNCH_FLAGS, DISABLED_FEATURES) Chromium sends nothing of its own while a run fills and submits
 * forms on a 127.0.0.1 page. The run's guard resolves every host name a request of the context names:
 * a run on an IP-literal page asks it to resolve none, and its steps carry no egress_denied warning.
 */

let site: Server;
let origin: string;
let exec: PlaywrightExecutor;
let registry: ToolRegistry;
let engine: Engine;
const names: string[] = [];

const page = (body: string) => `<!doctype html><html><head><title>Forms</title></head><body>${body}</body></html>`;

beforeAll(async () => {
  site = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    res.writeHead(200, { 'content-type': 'text/html' });
    if (path === '/done') return res.end(page('<p id="out">signed in</p>'));
    // A sign-in form and an address form: what Chromium's autofill and password manager look at.
    res.end(
      page(`<form action="/done" method="get">
  <label>Email <input name="email" type="email" autocomplete="username"></label>
  <label>Password <input name="password" type="password" autocomplete="current-password"></label>
  <label>Name <input name="name" autocomplete="name"></label>
  <label>Street <input name="street" autocomplete="street-address"></label>
  <label>City <input name="city" autocomplete="address-level2"></label>
  <label>Postcode <input name="zip" autocomplete="postal-code"></label>
  <button id="go" type="submit">Sign in</button>
</form>`),
    );
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  // As the hosted service runs: warm contexts, each with its guarded proxy.
  exec = createPlaywrightExecutor({ warmContexts: 1 });
  registry = createToolRegistry(builtinTools(), exec.tools);
  const lookup = async (host: string) => {
    names.push(host);
    const { lookup: dns } = await import('node:dns/promises');
    return dns(host, { all: true, verbatim: true });
  };
  engine = testEngine(registry, { toolPolicy: hostedToolPolicy({ allow: [new URL(origin).host], lookup }) }).engine;
  exec.warmUp({ guarded: true });
});

afterAll(async () => {
  await engine?.dispose();
  await exec?.dispose();
  await new Promise((r) => site?.close(r));
});

const step = (id: string, tool: string, args: Record<string, unknown>): StepDef => ({ id, tool: `browser/${tool}`, args, timeout_ms: 60_000 });

describe("the browser's own traffic", () => {
  it('a run filling and submitting forms on a 127.0.0.1 page makes Chromium ask for no host of its own, and has no egress_denied warning', async () => {
    for (let i = 0; i < 2; i++) {
      const run = await engine.run(
        {
          spec: makeSpec(registry, [
            step('open', 'navigate', { url: `${origin}/` }),
            step('email', 'fill', { target: 'input[name="email"]', value: 'ada@example.test' }),
            step('password', 'fill', { target: 'input[name="password"]', value: 'correct horse battery' }),
            step('name', 'fill', { target: 'input[name="name"]', value: 'Ada Lovelace' }),
            step('street', 'fill', { target: 'input[name="street"]', value: '12 Analytical Row' }),
            step('city', 'fill', { target: 'input[name="city"]', value: 'London' }),
            step('zip', 'fill', { target: 'input[name="zip"]', value: 'N1 7AA' }),
            step('submit', 'click', { target: '#go' }),
            step('read', 'extract', { target: '#out' }),
          ]),
        },
        {},
      );
      expect(run.status).toBe('succeeded');
      const warnings = run.journal.flatMap((e) => ('warnings' in e && Array.isArray(e.warnings) ? e.warnings : [])) as { code: string; message: string }[];
      expect(warnings.filter((w) => w.code === 'egress_denied')).toEqual([]);
    }
    expect(names).toEqual([]);
  });
});
