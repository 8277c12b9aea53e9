import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Independent MCP clients against a spawned hosted service (`examples/hosted-service/main.mjs`, the
 * built package, PGlite in a temp folder): the official MCP Inspector CLI lists and calls a tool with
 * a bearer key, and the official conformance suite (@modelcontextprotocol/conformance) runs every
 * server scenario of its active suite. The suite's server mode cannot send an Authorization header,
 * so it runs against a loopback reverse proxy in this test that adds the bearer key and forwards
 * everything else as it came (Host and Origin included). The expected failures are the table in
 * docs/mcp.md ("Conformance"): a scenario failing that is not listed, or a listed one passing, fails
 * this test.
 */

const require = createRequire(import.meta.url);
const pkgDir = (name: string) => require.resolve(`${name}/package.json`).replace(/package\.json$/, '');
const INSPECTOR = join(pkgDir('@modelcontextprotocol/inspector'), 'clients/launcher/build/index.js');
const CONFORMANCE = join(pkgDir('@modelcontextprotocol/conformance'), 'dist/index.js');
const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'examples/hosted-service/main.mjs');

let dir: string;
let child: ChildProcess;
let serviceUrl: string;
let proxy: Server;
let proxyUrl: string;
let key: string;

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const p = spawn(cmd, args, { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    p.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), 240_000); // caps a hang only
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

async function call(method: string, path: string, body: unknown, cookie?: string) {
  const res = await fetch(serviceUrl + path, {
    method,
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any, cookie: res.headers.getSetCookie()[0]?.split(';')[0] };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowctl-hosted-mcp-clients-'));
  // The proxy first: its URL is the service's public URL (so its origin is the allowed Origin).
  proxy = createServer((req, res) => {
    const target = new URL(serviceUrl);
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

  child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_PUBLIC_URL: proxyUrl,
      SVC_IP_LIMIT: '100000',
      SVC_ORG_LIMIT: '100000',
      SVC_EGRESS_ALLOW: '127.0.0.1',
      NODE_ENV: 'test',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  serviceUrl = await new Promise<string>((resolvePromise, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      const m = /hosted service on (http:\/\/\S+)/.exec(err);
      if (m) resolvePromise(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the hosted service exited ${code}: ${err}`)));
  });
  const signup = await call('POST', '/api/auth/signup', { email: 'clients@example.test', password: 'correct horse battery' });
  expect(signup.status).toBe(201);
  const example = await call('POST', '/api/automations/example', {}, signup.cookie);
  expect(example.status).toBe(201);
  const minted = await call('POST', '/api/keys', { mode: 'live' }, signup.cookie);
  expect(minted.status).toBe(201);
  key = minted.body.secret;
}, 180_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  proxy?.closeAllConnections();
  await new Promise((r) => proxy?.close(r));
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

const inspector = (args: string[]) =>
  run(process.execPath, [INSPECTOR, '--cli', `${serviceUrl}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${key}`, ...args], dir, {
    MCP_CATALOG_PATH: join(dir, 'inspector-catalog.json'),
  });

describe('MCP Inspector CLI against the spawned hosted service', () => {
  it('tools/list (with --strict schema checks) lists the published automation', async () => {
    const r = await inspector(['--method', 'tools/list', '--strict']);
    expect(r.code, r.stderr).toBe(0);
    const { tools } = JSON.parse(r.stdout);
    expect(tools.map((t: { name: string }) => t.name)).toEqual(['example-forecast']);
    expect(tools[0].inputSchema.properties.city).toMatchObject({ type: 'string' });
    expect(tools[0].annotations.openWorldHint).toBe(true);
    expect(r.stderr).toMatch(/0 errors/);
  }, 240_000);

  it('tools/call runs it in a browser and returns its structuredContent', async () => {
    const r = await inspector(['--method', 'tools/call', '--tool-name', 'example-forecast', '--tool-arg', 'city=Inspectorville']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.forecast).toMatch(/^Forecast for Inspectorville: /);
    expect(result._meta['flowctl/status']).toBe('succeeded');
  }, 240_000);

  it('a wrong key is refused (the Inspector exits non-zero)', async () => {
    const r = await run(
      process.execPath,
      [INSPECTOR, '--cli', `${serviceUrl}/mcp`, '--transport', 'http', '--header', 'Authorization: Bearer svc_live_wrong', '--method', 'tools/list'],
      dir,
      {
        MCP_CATALOG_PATH: join(dir, 'inspector-catalog.json'),
      },
    );
    expect(r.code).not.toBe(0);
    expect(r.stdout).not.toContain('example-forecast');
  }, 240_000);
});

/** The expected-failure table of docs/mcp.md: `| \`scenario\` | reason |` rows between the markers. */
async function expectedFailures(): Promise<Map<string, string>> {
  const doc = await readFile(join(ROOT, 'docs/mcp.md'), 'utf8');
  const start = doc.indexOf('<!-- conformance-expected-failures -->');
  const end = doc.indexOf('<!-- /conformance-expected-failures -->');
  expect(start, 'docs/mcp.md has the expected-failure table').toBeGreaterThan(0);
  const out = new Map<string, string>();
  for (const line of doc.slice(start, end).split('\n')) {
    const m = /^\| `([a-z0-9-]+)` \| (.*) \|$/.exec(line.trim());
    if (m) out.set(m[1]!, m[2]!.trim());
  }
  return out;
}

describe('the official MCP conformance suite against POST /mcp', () => {
  it('every scenario of the active suite passes except the documented expected failures', async () => {
    const expected = await expectedFailures();
    expect(expected.size).toBeGreaterThan(0);
    for (const [name, reason] of expected) expect(reason.length, `a reason for ${name}`).toBeGreaterThan(10);
    const baseline = join(dir, 'conformance-baseline.yml');
    await writeFile(baseline, `server:\n${[...expected.keys()].map((n) => `  - ${n}\n`).join('')}`);
    const out = join(dir, 'conformance-results');
    const r = await run(process.execPath, [CONFORMANCE, 'server', '--url', `${proxyUrl}/mcp`, '--expected-failures', baseline, '-o', out], dir);

    // Every scenario's checks, by scenario name (result folders are server-<scenario>-<timestamp>).
    const failed = new Set<string>();
    const passed = new Set<string>();
    for (const entry of await readdir(out)) {
      const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
      const checks: { status: string }[] = JSON.parse(await readFile(join(out, entry, 'checks.json'), 'utf8'));
      // As the suite's baseline check counts them: a FAILURE or a WARNING fails the scenario.
      (checks.some((c) => c.status === 'FAILURE' || c.status === 'WARNING') ? failed : passed).add(scenario);
    }
    expect([...failed].sort(), r.stdout.slice(-3000)).toEqual([...expected.keys()].sort());
    // The scenarios that apply to a tools-only server, passing.
    for (const s of ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection']) expect(passed.has(s), s).toBe(true);
    // The suite's own verdict with the baseline: no unexpected failure, no stale entry.
    expect(r.code, r.stdout.slice(-3000) + r.stderr.slice(-2000)).toBe(0);
  }, 300_000);
});
