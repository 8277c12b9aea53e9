import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFlowError } from '../../../src/errors.js';
import type { Run } from '../../../src/run/types.js';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { httpRequest } from '../../../src/tools/builtins/http-request.js';
import { createEgressGuard, type EgressGuard } from '../../../src/tools/egress.js';
import { hostedToolPolicy, type ToolPolicy } from '../../../src/tools/policy.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import { createTestToolContext } from '../../../src/tools/testing-context.js';
import { makeSpec, testEngine } from './helpers.js';

/**
 * The tool policy through the engine: capabilities refused before the tool runs (`tool_denied`), and
 * the egress guard of `http/request` (`egress_denied`) on literals, names, DNS answers and redirects,
 * with real loopback servers that count what reaches them.
 */

const registry = createToolRegistry(builtinTools());

// Server A (the allowlisted one) and server B (never allowlisted), both on 127.0.0.1.
let a: Server;
let b: Server;
let portA: number;
let portB: number;
const hits = { a: 0, b: 0 };
let root: string;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  b = createServer((_req, res) => {
    hits.b++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"server":"b"}');
  });
  portB = await listen(b);
  a = createServer((req, res) => {
    hits.a++;
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('{"server":"a"}');
    }
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to')! });
      return res.end();
    }
    res.writeHead(404);
    res.end();
  });
  portA = await listen(a);
  root = await mkdtemp(join(tmpdir(), 'flowctl-policy-'));
  await writeFile(join(root, 'in.txt'), 'secret file');
});

afterAll(async () => {
  await new Promise((r) => a.close(r));
  await new Promise((r) => b.close(r));
  await rm(root, { recursive: true, force: true });
});

const stepFailed = (run: Run) => {
  const failed = run.journal.find((e) => e.event === 'step_failed');
  return failed?.event === 'step_failed' ? failed : undefined;
};
const effects = (run: Run) => run.journal.filter((e) => e.event === 'effect_recorded');

async function runHttp(url: string, policy: ToolPolicy | undefined, where: 'engine' | 'run' = 'run'): Promise<Run> {
  const { engine } = testEngine(registry, where === 'engine' && policy ? { toolPolicy: policy } : {});
  const spec = makeSpec(registry, [{ id: 'get', tool: 'http/request', args: { url } }]);
  try {
    return await engine.run({ spec }, {}, where === 'run' && policy ? { toolPolicy: policy } : {});
  } finally {
    await engine.dispose();
  }
}

function expectDenied(run: Run, text: RegExp): void {
  expect(run.status).toBe('failed');
  const failed = stepFailed(run)!;
  expect(failed.error).toMatchObject({ code: 'egress_denied', retryable: false });
  expect(failed.error.message).toMatch(text);
  expect(failed.will_retry).toBe(false);
  expect(run.journal.at(-1)).toMatchObject({ event: 'run_finished', status: 'failed', error: { code: 'egress_denied', retryable: false } });
}

describe('tool policy: capabilities', () => {
  it.each([
    ['shell/exec', { command: process.execPath, args: ['-e', 'require("fs").writeFileSync("spawned.txt", "x")'] }, 'spawn'],
    ['fs/read', { path: 'in.txt' }, 'fs'],
    ['fs/write', { path: 'out.txt', content: 'x' }, 'fs'],
  ])('the hosted policy refuses %s with tool_denied before the tool runs', async (tool, args, capability) => {
    const before = await readdir(root);
    const { engine } = testEngine(registry, { cwd: root, toolPolicy: hostedToolPolicy() });
    const spec = makeSpec(registry, [{ id: 's', tool, args }]);
    const run = await engine.run({ spec }, {});
    await engine.dispose();
    expect(run.status).toBe('failed');
    expect(run.journal.map((e) => e.event)).toEqual(['run_started', 'step_started', 'step_failed', 'run_finished']);
    expect(stepFailed(run)).toMatchObject({ attempt: 1, will_retry: false, error: { code: 'tool_denied', retryable: false } });
    expect(stepFailed(run)!.error.message).toContain(`${tool}@1.0.0 needs the ${capability} capability`);
    expect(stepFailed(run)!.error.message).not.toContain('secret file');
    expect(await readdir(root)).toEqual(before);
  });

  it('a run policy replaces the engine policy, and the default stays permissive', async () => {
    const spec = makeSpec(registry, [{ id: 'r', tool: 'fs/read', args: { path: 'in.txt' } }]);
    const hosted = testEngine(registry, { cwd: root, toolPolicy: hostedToolPolicy() });
    const permissive = await hosted.engine.run({ spec }, {}, { toolPolicy: {} });
    expect(permissive.status).toBe('succeeded');
    await hosted.engine.dispose();
    const plain = testEngine(registry, { cwd: root });
    expect((await plain.engine.run({ spec }, {})).status).toBe('succeeded');
    const denied = await plain.engine.run({ spec }, {}, { toolPolicy: { capabilities: ['net'] } });
    expect(stepFailed(denied)!.error.code).toBe('tool_denied');
    await plain.engine.dispose();
  });

  it('refuses a malformed policy with invalid_tool_policy before any run exists', async () => {
    expect(() => testEngine(registry, { toolPolicy: { capabilities: ['teleport' as never] } })).toThrow(
      expect.objectContaining({ code: 'invalid_tool_policy' }),
    );
    const { engine, storage } = testEngine(registry);
    const spec = makeSpec(registry, [{ id: 'get', tool: 'http/request', args: { url: 'http://127.0.0.1/' } }]);
    await expect(engine.run({ spec }, {}, { toolPolicy: { egress: { allow: ['10.0.0.0/99'] } } })).rejects.toMatchObject({ code: 'invalid_tool_policy' });
    expect(await storage.runs.list({})).toEqual([]);
    await engine.dispose();
  });
});

describe('tool policy: http/request egress guard', () => {
  it('an allowlisted 127.0.0.1 works (engine policy and run policy)', async () => {
    for (const where of ['engine', 'run'] as const) {
      const run = await runHttp(`http://127.0.0.1:${portA}/json`, hostedToolPolicy({ allow: [`127.0.0.1:${portA}`] }), where);
      expect(run.status).toBe('succeeded');
      const ok = run.journal.find((e) => e.event === 'step_succeeded');
      expect(ok?.event === 'step_succeeded' && ok.output).toMatchObject({ status: 200, body: { server: 'a' } });
    }
  });

  it.each([
    ['127.0.0.1 (not allowlisted)', () => `http://127.0.0.1:${portB}/`, /127\.0\.0\.1:\d+ is a loopback address/],
    ['[::1]', () => `http://[::1]:${portB}/`, /\[::1\]:\d+ is a loopback address/],
    ['10.0.0.1', () => 'http://10.0.0.1/', /10\.0\.0\.1:80 is a private address/],
    ['169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254:80 is a metadata address/],
    ['0x7f.1 (an IPv4 spelling of 127.0.0.1)', () => `http://0x7f.1:${portB}/`, /127\.0\.0\.1:\d+ is a loopback address/],
    ['[::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${portB}/`, /loopback address/],
    ['metadata.google.internal', () => 'http://metadata.google.internal/computeMetadata/v1/', /cloud metadata service name/],
  ])('refuses %s before any effect or connection', async (_what, url, text) => {
    const before = { ...hits };
    const run = await runHttp(url(), hostedToolPolicy({ allow: [`127.0.0.1:${portA}`] }));
    expectDenied(run, text);
    // The refusal came from the guard's precheck: the tool reports its effect just before it
    // connects, and no effect was journaled; nothing reached the servers.
    expect(effects(run)).toEqual([]);
    expect(hits).toEqual(before);
  });

  it('refuses localhost, which the system resolver answers with a loopback address', async () => {
    const before = { ...hits };
    const run = await runHttp(`http://localhost:${portB}/`, hostedToolPolicy({ allow: [`127.0.0.1:${portA}`] }));
    expectDenied(run, /localhost:\d+ resolves to (127\.0\.0\.1|::1), a loopback address/);
    expect(hits).toEqual(before);
  });

  it('checks a name when it connects: a name the injected resolver answers with 127.0.0.1 is refused', async () => {
    const asked: string[] = [];
    const lookup = async (name: string) => {
      asked.push(name);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const before = { ...hits };
    const run = await runHttp(`http://rebind.test:${portB}/`, hostedToolPolicy({ allow: [`127.0.0.1:${portA}`], lookup }));
    expectDenied(run, /rebind\.test:\d+ resolves to 127\.0\.0\.1, a loopback address/);
    // The name is not resolved before the effect: it is resolved once, by the connection itself.
    expect(effects(run)).toHaveLength(1);
    expect(asked).toEqual(['rebind.test']);
    expect(hits).toEqual(before);
    // The same name on the allowlisted address and port connects (to the checked address).
    const ok = await runHttp(`http://rebind.test:${portA}/json`, hostedToolPolicy({ allow: [`127.0.0.1:${portA}`], lookup }));
    expect(ok.status).toBe('succeeded');
  });

  it.each([
    ['127.0.0.1 on another port', () => `http://127.0.0.1:${portB}/`],
    ['localhost on another port', () => `http://localhost:${portB}/`],
    ['[::1]', () => `http://[::1]:${portB}/`],
    ['169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/'],
  ])('refuses a redirect from the allowlisted server to %s', async (_what, to) => {
    const target = to();
    const url = `http://127.0.0.1:${portA}/redirect?to=${encodeURIComponent(target)}`;
    // Control: without a policy the redirect is followed (to B when B is the target).
    if (target.startsWith('http://127.0.0.1') || target.startsWith('http://localhost')) {
      const before = hits.b;
      expect((await runHttp(url, undefined)).status).toBe('succeeded');
      expect(hits.b).toBe(before + 1);
    }
    const before = { ...hits };
    const run = await runHttp(url, hostedToolPolicy({ allow: [`127.0.0.1:${portA}`] }));
    expectDenied(run, /address/);
    expect(hits.a).toBe(before.a + 1); // the first hop, allowed
    expect(hits.b).toBe(before.b); // the redirect's target never reached
  });

  it('a redirect within the allowlisted origin is followed', async () => {
    const run = await runHttp(`http://127.0.0.1:${portA}/redirect?to=/json`, hostedToolPolicy({ allow: [`127.0.0.1:${portA}`] }));
    expect(run.status).toBe('succeeded');
  });

  it('at the tool: literal refusals come from the precheck, names from the connect-time resolve', async () => {
    const calls: string[] = [];
    const real = createEgressGuard({ allow: [`127.0.0.1:${portA}`], lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
    const spy: EgressGuard = {
      precheck: (host, port) => (calls.push(`precheck ${host}:${port}`), real.precheck(host, port)),
      resolve: (host, port) => (calls.push(`resolve ${host}:${port}`), real.resolve(host, port)),
    };
    for (const url of ['http://10.0.0.1/', 'http://169.254.169.254/']) {
      calls.length = 0;
      const ctx = createTestToolContext({ egress: spy });
      const err = await httpRequest.run({ url }, ctx).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isFlowError(err, 'egress_denied')).toBe(true);
      expect((err as { data: unknown }).data).toMatchObject({ reason: url.includes('169') ? 'metadata' : 'private', retryable: false });
      // Refused in the precheck: no resolve, so no connection was ever attempted.
      expect(calls).toEqual([`precheck ${new URL(url).hostname}:80`]);
      expect(ctx.effects).toEqual([]);
      await ctx.close();
    }
    calls.length = 0;
    const ctx = createTestToolContext({ egress: spy });
    const err = await httpRequest.run({ url: `http://name.test:${portB}/` }, ctx).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isFlowError(err, 'egress_denied')).toBe(true);
    expect(calls).toEqual([`precheck name.test:${portB}`, `resolve name.test:${portB}`]);
    await ctx.close();
  });
});
