import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../helpers/cli.js';
import { postJson, spawnProcess, type Spawned } from './rest-helpers.js';

// `npm start`: examples/engine-launcher/main.mjs, spawned as a user would, with a temp working dir.
const MAIN = resolve(import.meta.dirname, '../../examples/engine-launcher/main.mjs');

describe('npm start (examples/engine-launcher)', () => {
  let dir: string;
  let proc: Spawned;
  let base: string;

  beforeAll(async () => {
    dir = await tempProject('flowctl-launcher-');
    proc = spawnProcess([MAIN, '--port', '0', '--dir', dir], { cwd: resolve(import.meta.dirname, '../..') });
    base = (await proc.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
    await proc.waitFor(/Ctrl-C stops/);
  });

  afterAll(async () => {
    await proc?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('prints ready-to-paste curl commands and an MCP client command for the bound port', () => {
    const out = proc.stdout();
    expect(out).toContain(`curl -s -X POST ${base}/flows/greet/runs`);
    expect(out).toContain(`curl -s -X POST ${base}/flows/shop-list/runs`);
    expect(out).toContain(`curl -s ${base}/openapi.json`);
    expect(out).toMatch(/"mcpServers":\{"flowctl-demo"/);
    expect(out).toContain('@modelcontextprotocol/inspector --cli');
  });

  it('serves both example flows for discovery', async () => {
    const { flows } = await (await fetch(`${base}/flows`)).json();
    expect(flows.map((f: { name: string }) => f.name)).toEqual(['greet', 'shop-list']);
    const shop = flows.find((f: { name: string }) => f.name === 'shop-list');
    expect(Object.keys(shop.inputs.properties).sort()).toEqual(['aisle', 'item']);
  });

  it('runs the pure flow', async () => {
    const r = await postJson(`${base}/flows/greet/runs`, { who: 'Ada', times: 2 });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('succeeded');
    expect(r.body.output).toEqual({ greeting: 'Hello, Ada!', times: 2 });
  });

  it('runs the browser Recording against the demo page it serves, and the CLI sees the run', async () => {
    const r = await postJson(`${base}/flows/shop-list/runs`, { item: 'pears', aisle: 'produce' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('succeeded');
    expect(r.body.output).toEqual({ count: '3 items', items: ['bread (bakery)', 'milk (dairy)', 'pears (produce)'] });
    const effects = r.body.journal.filter((e: { event: string }) => e.event === 'effect_recorded');
    expect(
      effects.some((e: { effect: { kind: string; target: string } }) => e.effect.kind === 'browser' && e.effect.target.startsWith('http://127.0.0.1:')),
    ).toBe(true);
    // The example's fs store is the CLI's: inspect in the working dir finds the run.
    const inspect = await runCli(['inspect', r.body.id, '--json'], { cwd: dir });
    expect(inspect.code).toBe(0);
    expect(JSON.parse(inspect.stdout).id).toBe(r.body.id);
    expect(inspect.stdout).toContain('"flow_name": "shop-list"');
  });

  it('stops cleanly on SIGTERM', async () => {
    const exit = await proc.stop('SIGTERM');
    expect(exit.code).toBe(0);
  });
});
