import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { createTestToolContext, type TestToolContext } from '../../src/tools/testing-context.js';
import type { Tool } from '../../src/tools/types.js';
import { runCli, tempProject } from '../helpers/cli.js';
import { startSite, type SiteServer, stepFailure, writeSiteOps } from '../helpers/site-server.js';

/**
 * New pages in real Chromium (pages.html): a link that opens a tab, a button that opens a popup that
 * closes itself, Enter on a link that opens a tab (`opens_page: true` on click and press), and
 * `switch` back to earlier pages by index. Through the CLI: record, compile, emit round trip, two runs
 * with two input sets, replay --verify; then the errors one by one.
 */

let site: SiteServer;
let project: string;

const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: project, env, timeoutMs: 120_000 });

const expected = (user: string) => ({
  detail: 'Order 17: 3 items',
  status: `Signed in as ${user}`,
  help: 'Help: call 555-0100',
  detail_again: 'Order 17: 3 items',
});

beforeAll(async () => {
  site = await startSite({ password: 'unused-pages' });
  project = await tempProject('flowctl-browser-pages-');
  await writeSiteOps(project, 'pages', { SITE: site.url });
});

afterAll(async () => {
  await site?.close();
});

describe('new tabs and popups through the CLI', () => {
  const runIds: string[] = [];

  it('records opens_page and switch, and compiles them', async () => {
    const r = await cli(['record', '--name', 'pages', '--task', 'Open details and sign in by popup', '--ops', 'ops/pages.yaml', '--input', 'user']);
    expect(r.code, r.stderr).toBe(0);
    const stored = JSON.parse(await readFile(join(project, 'recordings/pages.json'), 'utf8'));
    expect(stored.ops[1]).toEqual({ kind: 'click', target: { role: 'link', name: 'Order details' }, opens_page: true });
    expect(stored.ops[3]).toEqual({ kind: 'switch', page: 0 });
    const compiled = await cli(['compile', 'pages', '--json']);
    expect(compiled.code, compiled.stderr).toBe(0);
    const spec = JSON.parse(compiled.stdout);
    expect(spec.steps[3]).toMatchObject({ id: 'switch_4', tool: { ref: 'browser/switch', version: '1.0.0' }, args: { page: 0 } });
    expect(spec.steps[10]).toMatchObject({ tool: { ref: 'browser/press' }, args: { key: 'Enter', opens_page: true } });
    const emitted = await cli(['emit', 'pages', '--to', 'yaml']);
    await mkdir(join(project, 'flows'), { recursive: true });
    await writeFile(join(project, 'flows/pages-edit.yaml'), emitted.stdout);
    const digestOf = (stderr: string) => /sha256:[0-9a-f]{64}/.exec(stderr)?.[0];
    const [fromRecording, fromYaml] = await Promise.all([cli(['compile', 'pages', '--check']), cli(['compile', 'flows/pages-edit.yaml', '--check'])]);
    expect(fromYaml.code, fromYaml.stderr).toBe(0);
    expect(digestOf(fromYaml.stderr)).toBe(digestOf(fromRecording.stderr));
    expect((await cli(['lint', 'pages'])).code).toBe(0);
  });

  it.each([
    ['the recorded input', [], 'alice'],
    ['another input', ['--input', 'user=bob'], 'bob'],
  ] as const)('runs in Chromium with %s', async (_what, flags, user) => {
    const r = await cli(['run', 'pages', '--yes', '--json', ...flags]);
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout);
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual(expected(user));
    runIds.push(run.id);
  });

  it('replays a run with --verify without a browser', async () => {
    const r = await cli(['replay', runIds[1]!, '--verify', '--json'], { CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'succeeded', output: expected('bob') });
  });

  it('refuses a switch to a page no earlier op opened, when recording', async () => {
    await writeFile(join(project, 'ops/bad.yaml'), '- {kind: click, target: "#a", opens_page: true}\n- {kind: switch, page: 2}\n');
    const r = await cli(['record', '--name', 'bad', '--task', 'bad', '--ops', 'ops/bad.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('ops[1].page 2 is not open there: pages 0 to 1 are');
  });
});

describe('pages one by one', () => {
  let exec: PlaywrightExecutor;
  let runs = 0;
  const tool = (name: string, version = '1.0.0'): Tool => exec.tools.find((t) => t.contract.ref === `browser/${name}` && t.contract.version === version)!;
  const newRun = (): TestToolContext => createTestToolContext({ runId: `pages-${++runs}`, cwd: project, timeoutMs: 8_000 });

  beforeAll(() => {
    exec = createPlaywrightExecutor();
  });
  afterAll(async () => {
    await exec?.dispose();
  });

  it('reports the page it opened, and refuses pages that are gone or were never opened', async () => {
    const ctx = newRun();
    try {
      await tool('navigate').run({ url: `${site.url}/pages.html` }, ctx);
      expect(await tool('click', '1.1.0').run({ target: '#signin', opens_page: true }, ctx)).toEqual({
        matched: 'css=#signin',
        opened: { page: 1, url: `${site.url}/popup.html` },
      });
      await tool('fill', '1.1.0').run({ target: '#who', value: 'erin' }, ctx);
      await tool('click', '1.1.0').run({ target: '#confirm' }, ctx);
      // The popup closed itself: acting on it says so, and switching to it too.
      const closed = await stepFailure(tool('extract', '1.1.0').run({ target: '#who' }, ctx));
      expect(closed.code).toBe('page_closed');
      expect(closed.message).toContain('(page 1) has closed');
      expect((await stepFailure(tool('switch').run({ page: 1 }, ctx))).code).toBe('page_closed');
      expect((await stepFailure(tool('switch').run({ page: 5 }, ctx))).data).toMatchObject({ page: 5, pages: 2 });
      expect(await tool('switch').run({ page: 0 }, ctx)).toEqual({ page: 0, url: `${site.url}/pages.html` });
      expect(await tool('wait').run({ target: '#status', text: 'erin' }, ctx)).toMatchObject({ state: 'visible' });
      // An action that opens nothing fails once its budget is spent, not before.
      const none = await stepFailure(tool('click', '1.1.0').run({ target: '#nothing', opens_page: true }, ctx));
      expect(none.code).toBe('no_page_opened');
      // A page opened without opens_page is not followed: the run stays where it is.
      await tool('click', '1.1.0').run({ target: '#details' }, ctx);
      expect(await tool('extract', '1.1.0').run({ target: 'h1' }, ctx)).toMatchObject({ value: 'Orders' });
      expect((await stepFailure(tool('switch').run({ page: 2 }, ctx))).code).toBe('page_not_found');
    } finally {
      await ctx.close();
    }
    expect(exec.stats().openContexts).toBe(0);
  });

  it('moves the live screencast to the page the run goes on in', async () => {
    const ctx = newRun();
    const frames: string[] = [];
    const stop = exec.screencast.subscribe(ctx.runId, (f) => frames.push(f.data));
    try {
      await tool('navigate').run({ url: `${site.url}/pages.html` }, ctx);
      await tool('click', '1.1.0').run({ target: '#signin', opens_page: true }, ctx);
      expect(exec.screencast.active()).toEqual([ctx.runId]);
      // Typing repaints the popup only (the first page is idle): frames come, bounded.
      const before = frames.length;
      for (let i = 0; i < 50 && frames.length === before; i++) await tool('fill', '1.1.0').run({ target: '#who', value: `user-${i}` }, ctx);
      expect(frames.length).toBeGreaterThan(before);
    } finally {
      stop();
      await ctx.close();
    }
    expect(exec.screencast.active()).toEqual([]);
  });
});
