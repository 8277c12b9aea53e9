import { existsSync } from 'node:fs';
import { readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module of the example, without types
import { serveDemoSite } from '../../examples/engine-launcher/site-server.mjs';
import { runCli, tempProject } from '../helpers/cli.js';
import { FLOWCTL_BIN } from '../helpers/cli.js';
import { waitUntil } from '../helpers/wait.js';
import { postJson, spawnProcess, type Spawned } from './rest-helpers.js';

// `flowctl serve` spawned as a user runs it (docs/rest.md, docs/cli.md).
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;
const OPS = resolve(import.meta.dirname, '../../examples/engine-launcher/ops.json');

function serve(args: string[], cwd: string, env: Record<string, string | undefined> = {}): Spawned {
  return spawnProcess([FLOWCTL_BIN, 'serve', ...args], { cwd, env: { FLOWCTL_SERVE_TOKEN: undefined, ...env } });
}

describe('flowctl serve', () => {
  let project: string;
  let site: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    project = await tempProject('flowctl-serve-');
    site = await serveDemoSite();
    expect((await runCli(['init'], { cwd: project })).code).toBe(0);
    await writeFile(join(project, 'flows/broken.yaml'), 'name: broken\nsteps:\n  - id: x\n    tool: core/nope@1\n');
    const ops = JSON.parse(await readFile(OPS, 'utf8')).map((op: { kind: string }) => (op.kind === 'navigate' ? { ...op, url: site.url } : op));
    await writeFile(join(project, 'ops.json'), JSON.stringify(ops));
    const rec = await runCli(['record', '--name', 'shop', '--task', 'add an item', '--ops', 'ops.json', '--input', 'item', '--input', 'aisle'], {
      cwd: project,
    });
    expect(rec.stderr + rec.code).toMatch(/0$/);
  });

  afterAll(async () => {
    await site?.close();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('serves every flow of flows/ and recordings/ on loopback; runs land in .flowctl/ for inspect and replay', async () => {
    const proc = serve(['--port', '0'], project);
    try {
      const base = (await proc.waitFor(LISTENING))[1]!;
      await proc.waitFor(/Ctrl-C stops/);
      expect(proc.stderr()).toContain('skipped flows/broken.yaml');
      expect(proc.stderr()).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/flows\/hello\/runs {2}sha256:[0-9a-f]{64}/);
      expect(proc.stdout()).toBe('');

      const { flows } = await (await fetch(`${base}/flows`)).json();
      expect(flows.map((f: { name: string }) => f.name)).toEqual(['hello', 'shop']);

      const hello = await postJson(`${base}/flows/hello/runs`, { who: 'Ada' });
      expect(hello.status).toBe(200);
      expect(hello.body.output).toEqual({ greeting: 'Hello, Ada!' });
      const inspect = await runCli(['inspect', hello.body.id, '--json'], { cwd: project });
      expect(inspect.code).toBe(0);
      expect(JSON.parse(inspect.stdout)).toEqual(hello.body);
      const replay = await runCli(['replay', hello.body.id, '--verify'], { cwd: project });
      expect(replay.code).toBe(0);

      // A browser Recording runs through the same launcher (real Chromium against the test's page).
      const shop = await postJson(`${base}/flows/shop/runs`, { item: 'figs', aisle: 'produce' });
      expect(shop.status).toBe(200);
      expect(shop.body.status).toBe('succeeded');
      expect(shop.body.output.items).toContain('figs (produce)');

      const exit = await proc.stop('SIGTERM');
      expect(exit.code).toBe(0);
      expect(proc.stderr()).toContain('SIGTERM, stopping');
    } finally {
      await proc.stop('SIGKILL');
    }
  });

  it('serves only [flow], and with a token (flag or FLOWCTL_SERVE_TOKEN) answers 401 without it', async () => {
    for (const [args, env] of [
      [['hello', '--port', '0', '--token', 's3cret-token'], {}],
      [['hello', '--port', '0'], { FLOWCTL_SERVE_TOKEN: 's3cret-token' }],
    ] as const) {
      const proc = serve([...args], project, env);
      try {
        const base = (await proc.waitFor(LISTENING))[1]!;
        expect((await fetch(`${base}/flows`)).status).toBe(401);
        expect((await fetch(`${base}/flows`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
        const res = await fetch(`${base}/flows`, { headers: { authorization: 'Bearer s3cret-token' } });
        expect(res.status).toBe(200);
        expect((await res.json()).flows.map((f: { name: string }) => f.name)).toEqual(['hello']);
        expect((await proc.stop('SIGINT')).code).toBe(0);
      } finally {
        await proc.stop('SIGKILL');
      }
    }
  });

  it('refuses a non-loopback host unless both --allow-remote and a token are given: exit 2, nothing bound', async () => {
    const cases: [string[], Record<string, string>][] = [
      [['--host', '0.0.0.0'], {}],
      [['--host', '0.0.0.0', '--allow-remote'], {}],
      [['--host', '0.0.0.0', '--token', 't0ken'], {}],
      [['--host', '::'], { FLOWCTL_SERVE_TOKEN: 't0ken' }],
      [['--host', '192.0.2.10', '--allow-remote', '--token='], {}],
    ];
    for (const [args, env] of cases) {
      const r = await runCli(['serve', '--port', '0', ...args], { cwd: project, env: { FLOWCTL_SERVE_TOKEN: undefined, ...env }, timeoutMs: 30_000 });
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).not.toContain('listening on');
    }
    const refused = await runCli(['serve', '--port', '0', '--host', '0.0.0.0'], { cwd: project, timeoutMs: 30_000 });
    expect(refused.stderr).toMatch(/refusing to serve on non-loopback host "0\.0\.0\.0" without --allow-remote and a token/);
  });

  it('keeps runs in SQL with --store=sql (PGlite under .flowctl/db without DATABASE_URL)', async () => {
    const proc = serve(['hello', '--port', '0', '--store=sql'], project, { DATABASE_URL: undefined });
    try {
      const base = (await proc.waitFor(LISTENING, 90_000))[1]!;
      expect(proc.stderr()).toContain('runs are stored in PGlite in .flowctl/db');
      const r = await postJson(`${base}/flows/hello/runs?mode=async`, { who: 'Sql' });
      expect(r.status).toBe(202);
      const run: any = await waitUntil(
        async () => {
          const now: any = await (await fetch(`${base}/runs/${r.body.run_id}`)).json();
          return (now.status === 'succeeded' || now.status === 'failed') && now;
        },
        { what: 'the async run to end' },
      );
      expect(run.output).toEqual({ greeting: 'Hello, Sql!' });
      expect((await proc.stop('SIGTERM')).code).toBe(0);
      expect(existsSync(join(project, '.flowctl/db'))).toBe(true);
    } finally {
      await proc.stop('SIGKILL');
    }
  });

  it('exits 1 when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = String((blocker.address() as AddressInfo).port);
      const r = await runCli(['serve', 'hello', '--port', port], { cwd: project, timeoutMs: 30_000 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('serves the flows of the packs in --registry <dir>', async () => {
    const author = await tempProject('flowctl-serve-pack-');
    const empty = await tempProject('flowctl-serve-empty-');
    try {
      expect((await runCli(['init'], { cwd: author })).code).toBe(0);
      expect((await runCli(['pack', 'init', 'demo'], { cwd: author })).code).toBe(0);
      expect((await runCli(['pack', 'add', '--body', 'flows/hello.yaml'], { cwd: author })).code).toBe(0);
      const reg = join(author, 'reg');
      await mkdir(reg, { recursive: true });
      const pub = await runCli(['pack', 'publish', '--registry', reg], { cwd: author });
      expect(pub.stderr + pub.code).toMatch(/0$/);
      const proc = serve(['--registry', reg, '--port', '0'], empty);
      try {
        const base = (await proc.waitFor(LISTENING))[1]!;
        expect(proc.stderr()).toContain('(demo@0.0.0)');
        const r = await postJson(`${base}/flows/hello/runs`, {});
        expect(r.status).toBe(200);
        expect(r.body.output).toEqual({ greeting: 'Hello, world!' });
        expect((await runCli(['runs', 'last'], { cwd: empty })).stdout.trim()).toBe(r.body.id);
      } finally {
        await proc.stop('SIGTERM');
      }
    } finally {
      await rm(author, { recursive: true, force: true });
      await rm(empty, { recursive: true, force: true });
    }
  });
});
