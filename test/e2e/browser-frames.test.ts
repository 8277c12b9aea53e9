import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { createMemoryStorage } from '../../adapters/storage-memory/index.js';
import { createEngine } from '../../src/engine/engine.js';
import { compileFlow } from '../../src/flow/compile.js';
import { buildRecording } from '../../src/record/recording.js';
import { opsFolderReader, readOpsFile } from '../../src/record/store.js';
import { recordingToFlow } from '../../src/record/to-flow.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import { createTestToolContext, type TestToolContext } from '../../src/tools/testing-context.js';
import type { Tool } from '../../src/tools/types.js';
import { runCli, tempProject } from '../helpers/cli.js';
import { startSite, type SiteServer, stepFailure, writeSiteOps } from '../helpers/site-server.js';

/**
 * `frame` on targeted ops in real Chromium: a same-origin iframe, an iframe nested in it, and an
 * iframe from another origin (a second server on 127.0.0.1, another port), also forced out of
 * process (`--isolate-origins`). Every frame has a field with the page's id, so only `frame` tells
 * them apart. Through the CLI: record, compile, emit round trip, lint, two runs with two input sets,
 * replay --verify; in-process: the out-of-process frame; then the errors of a frame one by one.
 */

let site: SiteServer;
let cross: SiteServer;
let project: string;

const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: project, env, timeoutMs: 120_000 });

const expected = (name: string, nick: string, card: string) => ({
  saved: `Saved ${name} with newsletter`,
  prefs: `theme=dark nick=${nick}`,
  paid: `Paid with card ending ${card.slice(-4)}`,
  origin: 'cross',
  outer: 'outer',
});

beforeAll(async () => {
  [site, cross] = await Promise.all([startSite({ password: 'unused-frames' }), startSite({ password: 'unused-frames' })]);
  project = await tempProject('flowctl-browser-frames-');
  await writeSiteOps(project, 'frames', { SITE: site.url, CROSS: cross.url });
});

afterAll(async () => {
  await Promise.all([site?.close(), cross?.close()]);
});

describe('ops in iframes through the CLI', () => {
  const runIds: string[] = [];

  it('records frames as lists of locators, outermost first', async () => {
    const r = await cli([
      'record',
      '--name',
      'frames',
      '--task',
      'Fill forms in frames',
      '--ops',
      'ops/frames.yaml',
      '--input',
      'name',
      '--input',
      'nick',
      '--input',
      'card',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const stored = JSON.parse(await readFile(join(project, 'recordings/frames.json'), 'utf8'));
    expect(stored.ops[2].frame).toEqual([{ css: '#profile', fallbacks: [{ css: 'iframe[title="Profile"]' }] }]);
    expect(stored.ops[6].frame).toEqual([{ css: '#profile' }, { css: 'iframe[title="Preferences"]' }]);
    expect(stored.ops[1].frame).toBeUndefined();
  });

  it('compiles, emits YAML that compiles to the same digest, and lints the frame locators too', async () => {
    const compiled = await cli(['compile', 'frames', '--json']);
    expect(compiled.code, compiled.stderr).toBe(0);
    const spec = JSON.parse(compiled.stdout);
    expect(spec.steps[5]).toMatchObject({
      tool: { ref: 'browser/select', version: '1.1.0' },
      args: { frame: [{ css: '#profile' }, { css: '#prefs' }], target: { label: 'Theme' }, value: 'Dark' },
    });
    const emitted = await cli(['emit', 'frames', '--to', 'yaml']);
    expect(emitted.code, emitted.stderr).toBe(0);
    await mkdir(join(project, 'flows'), { recursive: true });
    await writeFile(join(project, 'flows/frames-edit.yaml'), emitted.stdout);
    const digestOf = (stderr: string) => /sha256:[0-9a-f]{64}/.exec(stderr)?.[0];
    const [fromRecording, fromYaml] = await Promise.all([cli(['compile', 'frames', '--check']), cli(['compile', 'flows/frames-edit.yaml', '--check'])]);
    expect(fromYaml.code, fromYaml.stderr).toBe(0);
    expect(digestOf(fromYaml.stderr)).toBe(digestOf(fromRecording.stderr));
    expect((await cli(['lint', 'frames'])).stderr).not.toContain('brittle-locator');
    // A brittle frame locator is a finding pointing at the frame in the recording.
    await writeFile(join(project, 'ops/brittle.yaml'), '- {kind: click, frame: ["#profile", "#ember42"], target: "#save"}\n');
    expect((await cli(['record', '--name', 'brittle', '--task', 'fragile', '--ops', 'ops/brittle.yaml'])).code).toBe(0);
    const linted = await cli(['lint', 'brittle']);
    expect(linted.stderr).toMatch(
      /recordings\/brittle\.json:\d+:\d+ warning brittle-locator: css=#ember42 uses the generated id "ember42".*\(ops\[0\]\.frame\[1\]\)/,
    );
  });

  it.each([
    ['the recorded inputs', [], ['alice', 'ally', '4000000000004242']],
    ['other inputs', ['--input', 'name=bob', '--input', 'nick=bobby', '--input', 'card=5555000000001111'], ['bob', 'bobby', '5555000000001111']],
  ] as const)('runs in Chromium with %s', async (_what, flags, [name, nick, card]) => {
    const r = await cli(['run', 'frames', '--yes', '--json', ...flags]);
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout);
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual(expected(name, nick, card));
    runIds.push(run.id);
  });

  it('replays a run with --verify without a browser', async () => {
    const r = await cli(['replay', runIds[1]!, '--verify', '--json'], { CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'succeeded', output: expected('bob', 'bobby', '5555000000001111') });
  });

  it('refuses a press with a frame and no target', async () => {
    await writeFile(join(project, 'ops/bad.yaml'), '- {kind: press, key: Enter, frame: "#profile"}\n');
    const r = await cli(['record', '--name', 'bad', '--task', 'bad', '--ops', 'ops/bad.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('ops[0].frame needs a target');
  });
});

describe('a cross-origin frame out of process', () => {
  it('is an out-of-process frame with these flags, and the recorded flow runs through it', async () => {
    // Another port is another origin but the same site: Chromium keeps it in process unless origins get processes of their own.
    const isolate = ['--enable-features=OriginKeyedProcessesByDefault'];
    // The flags make the payment frame a target of its own (an OOPIF): checked with a browser of our own.
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', ...isolate] });
    try {
      const page = await browser.newPage();
      await page.goto(`${site.url}/frames.html?cross=${encodeURIComponent(cross.url)}`);
      await page.frameLocator('#payment').locator('#card').waitFor();
      const cdp = await browser.newBrowserCDPSession();
      const { targetInfos } = (await cdp.send('Target.getTargets')) as { targetInfos: { type: string; url: string }[] };
      expect(targetInfos.filter((t) => t.type === 'iframe').map((t) => t.url)).toEqual([`${cross.url}/frame-pay.html`]);
    } finally {
      await browser.close();
    }

    const exec = createPlaywrightExecutor({ launchArgs: isolate });
    const logs: string[] = [];
    const log = (m: string) => logs.push(`${Date.now()} ${m}`);
    const engine = createEngine({
      storage: createMemoryStorage(),
      tools: createToolRegistry(builtinTools(), exec.tools),
      cwd: project,
      logger: { debug: log, info: log, warn: log, error: log },
    });
    try {
      // Recorded in-process from the same ops file.
      const opsFile = join(project, 'ops/frames.yaml');
      const { recording } = await buildRecording({
        name: 'frames',
        task: 'Fill forms in frames',
        ops: await readOpsFile(opsFile),
        inputs: ['name', 'nick', 'card'],
        readFile: opsFolderReader(opsFile),
      });
      const compiled = compileFlow(recordingToFlow(recording), { file: 'recordings/frames.json', tools: createToolRegistry(builtinTools(), exec.tools) });
      if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
      const run = await engine.run({ spec: compiled.spec }, { name: 'carol', nick: 'cc', card: '4111111111119999' });
      expect(run.status, JSON.stringify(run.journal.filter((e) => e.event === 'step_failed'))).toBe('succeeded');
      expect(run.output).toEqual(expected('carol', 'cc', '4111111111119999'));
      // Settling found nothing held up (a request or timer of a frame left pending would log it).
      expect(logs.filter((l) => l.includes('going on'))).toEqual([]);
    } finally {
      await engine.dispose();
      await exec.dispose();
    }
  });
});

describe('frames one by one', () => {
  let exec: PlaywrightExecutor;
  let runs = 0;
  const tool = (name: string, version = '1.1.0'): Tool => exec.tools.find((t) => t.contract.ref === `browser/${name}` && t.contract.version === version)!;
  const newRun = (): TestToolContext => createTestToolContext({ runId: `frames-${++runs}`, cwd: project, timeoutMs: 30_000 });

  beforeAll(() => {
    exec = createPlaywrightExecutor();
  });
  afterAll(async () => {
    await exec?.dispose();
  });

  it('settles the work of a frame before a read: its timers too', async () => {
    const ctx = newRun();
    try {
      await tool('navigate', '1.0.0').run({ url: `${site.url}/frames.html?cross=${encodeURIComponent(cross.url)}` }, ctx);
      await tool('fill').run({ frame: '#profile', target: '#name', value: 'dora' }, ctx);
      await tool('click').run({ frame: '#profile', target: '#save' }, ctx);
      // The frame shows the result 200 ms later (a timer of the frame's own document).
      expect(await tool('extract').run({ frame: '#profile', target: '#result' }, ctx)).toEqual({
        matched: 'css=#result',
        value: 'Saved dora without newsletter',
      });
      expect(ctx.warnings).toEqual([]);
      // The page's own field with the same id was left alone.
      expect(await tool('extract').run({ target: '#name', attribute: 'value' }, ctx)).toMatchObject({ value: '' });
    } finally {
      await ctx.close();
    }
  });

  it('names a missing frame, a frame that is not an iframe, and drifts through a frame fallback', async () => {
    const ctx = newRun();
    try {
      await tool('navigate', '1.0.0').run({ url: `${site.url}/frames.html?cross=${encodeURIComponent(cross.url)}` }, ctx);
      const missing = await stepFailure(tool('click').run({ frame: ['#profile', '#nope'], target: '#save' }, ctx));
      expect(missing.code).toBe('locator_drift');
      expect(missing.message).toContain('click frame 2 of 2: no locator matched exactly one element');
      expect(missing.data).toMatchObject({ tried: [{ locator: 'css=#nope', count: 0 }] });
      const notFrame = await stepFailure(tool('fill').run({ frame: '#name', target: '#name', value: 'x' }, ctx));
      expect(notFrame.code).toBe('not_a_frame');
      expect(notFrame.message).toContain('frame names a <input>, not an <iframe>');
      expect(await tool('extract').run({ frame: { css: '#old', fallbacks: [{ css: 'iframe[title="Payment"]' }] }, target: '#origin' }, ctx)).toEqual({
        matched: 'css=#origin',
        value: 'cross',
      });
      expect(ctx.warnings.at(-1)).toMatchObject({ code: 'drift', data: { matched: 'css=iframe[title="Payment"]' } });
      // A target missing inside a frame that is there: drift in the frame, not on the page.
      const inner = await stepFailure(tool('wait', '1.0.0').run({ frame: '#payment', target: '#receipt', timeout_ms: 200 }, ctx));
      expect(inner.code).toBe('wait_timeout');
      // The 1.0.0 contracts have no frame.
      expect((await stepFailure(tool('fill', '1.0.0').run({ frame: '#profile', target: '#name', value: 'x' }, ctx))).code).toBe('invalid_tool_input');
    } finally {
      await ctx.close();
    }
  });
});
