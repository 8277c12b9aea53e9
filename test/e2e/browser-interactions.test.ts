import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { createTestToolContext, type TestToolContext } from '../../src/tools/testing-context.js';
import type { Tool } from '../../src/tools/types.js';
import { runCli, tempProject } from '../helpers/cli.js';
import { startSite, type SiteServer, stepFailure, writeSiteOps } from '../helpers/site-server.js';

/**
 * The op kinds of Recording format 2 in real Chromium on the fixture page interactions.html: press
 * (on a target, on the focused element, chords), hover, click count and button, check/uncheck, wait
 * (for a text, for hidden). Through the CLI: record, compile, emit round trip, lint, two runs with
 * two input sets, replay --verify without a browser. Then the tools one by one for their errors.
 */

let site: SiteServer;
let project: string;

async function cli(args: string[], env: Record<string, string> = {}) {
  return runCli(args, { cwd: project, env, timeoutMs: 120_000 });
}

const expected = (first: string, second: string) => ({
  items: [first, second],
  replaced: 'x',
  focused: 'first',
  menu: 'exported',
  pad: 'double right middle',
  choices: 'agree=yes news=no plan=pro',
  report: 'Report ready: 42 rows',
  table: 'name  qty\nbolts  12',
  table_flat: 'name qty bolts 12',
  address: '1 Main St\nSpringfield',
});

beforeAll(async () => {
  site = await startSite({ password: 'unused-interactions' });
  project = await tempProject('flowctl-browser-interactions-');
  await writeSiteOps(project, 'interactions', { SITE: site.url });
});

afterAll(async () => {
  await site?.close();
});

describe('format-2 ops through the CLI', () => {
  const runIds: string[] = [];

  it('records format 2, normalizing defaults away', async () => {
    const r = await cli([
      'record',
      '--name',
      'interact',
      '--task',
      'Exercise keys, hover, checkboxes and waits',
      '--ops',
      'ops/interactions.yaml',
      '--input',
      'first',
      '--input',
      'second',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const stored = JSON.parse(await readFile(join(project, 'recordings/interact.json'), 'utf8'));
    expect(stored.format).toBe('flowctl-recording/2');
    expect(stored.ops[2]).toEqual({ kind: 'press', key: 'Enter', target: { css: '#item' } });
    expect(stored.ops[4]).toEqual({ kind: 'press', key: 'Enter' });
    expect(stored.ops[12]).toEqual({ kind: 'click', target: { testid: 'pad' }, count: 2 });
    // count 1 is the default: not stored.
    expect(stored.ops[14]).toEqual({ kind: 'click', target: { css: '#pad' }, button: 'middle' });
    expect(stored.ops[21]).toEqual({ kind: 'wait', target: { css: '#report' }, text: 'Report ready', timeout_ms: 10000 });
    expect(stored.ops[22]).toEqual({ kind: 'wait', target: { text: 'Loading...' }, state: 'hidden' });
    // text: content is the default: not stored.
    expect(stored.ops.slice(-3)).toEqual([
      { kind: 'extract', target: { css: '#table' }, text: 'rendered', name: 'table' },
      { kind: 'extract', target: { css: '#table' }, name: 'table_flat' },
      { kind: 'extract', target: { css: '#address' }, text: 'rendered', name: 'address' },
    ]);
  });

  it('compiles, emits YAML that compiles to the same digest, and lints clean', async () => {
    const compiled = await cli(['compile', 'interact', '--json']);
    expect(compiled.code, compiled.stderr).toBe(0);
    const spec = JSON.parse(compiled.stdout);
    expect(spec.steps.map((s: { tool: { ref: string; version: string } }) => `${s.tool.ref}@${s.tool.version}`).slice(1, 13)).toEqual([
      'browser/fill@1.1.0',
      'browser/press@1.0.0',
      'browser/fill@1.1.0',
      'browser/press@1.0.0',
      'browser/fill@1.1.0',
      'browser/press@1.0.0',
      'browser/press@1.0.0',
      'browser/click@1.1.0',
      'browser/press@1.0.0',
      'browser/hover@1.0.0',
      'browser/click@1.1.0',
      'browser/click@1.1.0',
    ]);
    expect(spec.steps[12].args).toEqual({ target: { testid: 'pad' }, count: 2 });
    expect(spec.steps[15].tool.ref).toBe('browser/check');
    expect(spec.steps[17].tool.ref).toBe('browser/uncheck');
    expect(spec.steps[21]).toMatchObject({
      tool: { ref: 'browser/wait' },
      args: { target: { css: '#report' }, text: 'Report ready', timeout_ms: 10000 },
      timeout_ms: 30000,
    });
    const emitted = await cli(['emit', 'interact', '--to', 'yaml']);
    expect(emitted.code, emitted.stderr).toBe(0);
    expect(emitted.stdout).toContain('tool: browser/press@1.0');
    expect(emitted.stdout).toContain('key: Control+A');
    await mkdir(join(project, 'flows'), { recursive: true });
    await writeFile(join(project, 'flows/interact-edit.yaml'), emitted.stdout);
    const digestOf = (stderr: string) => /sha256:[0-9a-f]{64}/.exec(stderr)?.[0];
    const [fromRecording, fromYaml] = await Promise.all([cli(['compile', 'interact', '--check']), cli(['compile', 'flows/interact-edit.yaml', '--check'])]);
    expect(fromYaml.code, fromYaml.stderr).toBe(0);
    expect(digestOf(fromYaml.stderr)).toBeDefined();
    expect(digestOf(fromYaml.stderr)).toBe(digestOf(fromRecording.stderr));
    const linted = await cli(['lint', 'interact']);
    expect(linted.code, linted.stderr).toBe(0);
    expect(linted.stderr).not.toContain('brittle-locator');
  });

  it.each([
    ['the recorded inputs', [], ['milk', 'eggs']],
    ['other inputs', ['--input', 'first=bread', '--input', 'second=jam'], ['bread', 'jam']],
  ] as const)('runs in Chromium with %s', async (_what, flags, items) => {
    const r = await cli(['run', 'interact', '--yes', '--json', ...flags]);
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout);
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual(expected(items[0], items[1]));
    runIds.push(run.id);
  });

  it('replays a run with --verify without a browser', async () => {
    const r = await cli(['replay', runIds[1]!, '--verify', '--json'], { CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'succeeded', output: expected('bread', 'jam') });
  });

  it('refuses bad format-2 ops with the path of the field', async () => {
    const cases: [string, string][] = [
      ['- {kind: press, key: enter}\n', 'ops[0].key is not a key name'],
      ['- {kind: press, key: "Ctrl+A"}\n', 'ops[0].key has an unknown key name at part 1 of 2'],
      ['- {kind: click, target: "#a", count: 4}\n', 'ops[0].count must be 1, 2 (a double-click) or 3'],
      ['- {kind: click, target: "#a", button: back}\n', 'ops[0].button must be one of left, right, middle'],
      ['- {kind: wait, target: "#a", state: gone}\n', 'ops[0].state must be one of visible, hidden'],
      ['- {kind: wait, target: "#a", timeout_ms: 0}\n', 'ops[0].timeout_ms must be a whole number'],
      ['- {kind: hover}\n', 'ops[0].target is required'],
    ];
    for (const [ops, message] of cases) {
      await writeFile(join(project, 'ops/bad.yaml'), ops);
      const r = await cli(['record', '--name', 'bad', '--task', 'bad', '--ops', 'ops/bad.yaml']);
      expect(r.code, ops).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });
});

describe('the new browser tools one by one', () => {
  let exec: PlaywrightExecutor;
  let runs = 0;
  const tool = (name: string, version = '1.0.0'): Tool => exec.tools.find((t) => t.contract.ref === `browser/${name}` && t.contract.version === version)!;
  const newRun = (): TestToolContext => createTestToolContext({ runId: `interactions-${++runs}`, cwd: project, timeoutMs: 30_000 });
  const open = async (ctx: TestToolContext) => tool('navigate').run({ url: `${site.url}/interactions.html` }, ctx);
  const text = async (ctx: TestToolContext, target: string) => ((await tool('extract').run({ target }, ctx)) as { value: string }).value;

  beforeAll(() => {
    exec = createPlaywrightExecutor();
  });
  afterAll(async () => {
    await exec?.dispose();
  });

  it('declares the new contracts beside the first seven', () => {
    expect(exec.tools.slice(7).map((t) => `${t.contract.ref}@${t.contract.version} ${t.contract.capabilities.join('+')}`)).toEqual([
      'browser/click@1.1.0 browser',
      'browser/fill@1.1.0 browser+secrets',
      'browser/select@1.1.0 browser+secrets',
      'browser/drag@1.1.0 browser',
      'browser/upload@1.1.0 browser+fs',
      'browser/extract@1.1.0 browser',
      'browser/press@1.0.0 browser',
      'browser/hover@1.0.0 browser',
      'browser/check@1.0.0 browser',
      'browser/uncheck@1.0.0 browser',
      'browser/wait@1.0.0 browser',
      'browser/switch@1.0.0 browser',
      'browser/extract@1.2.0 browser',
    ]);
  });

  it('checks idempotently and refuses to check what is not a checkbox', async () => {
    const ctx = newRun();
    try {
      await open(ctx);
      expect(await tool('check').run({ target: '#news' }, ctx)).toEqual({ matched: 'css=#news' });
      expect(await tool('uncheck').run({ target: '#agree' }, ctx)).toEqual({ matched: 'css=#agree' });
      expect(await text(ctx, '#choices')).toBe('agree=no news=yes plan=free');
      const err = await stepFailure(tool('check').run({ target: '#pad' }, ctx));
      expect(err.code).toBe('not_checkable');
      expect((await stepFailure(tool('uncheck').run({ target: '#plan-free' }, ctx))).code).toBe('not_checkable');
    } finally {
      await ctx.close();
    }
  });

  it('waits within its bound and says what it waited for', async () => {
    const ctx = newRun();
    try {
      await open(ctx);
      // Nothing started the report: the wait runs out after its own timeout, not the step's.
      const started = Date.now();
      const err = await stepFailure(tool('wait').run({ target: '#report', text: 'Report ready', timeout_ms: 300 }, ctx));
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(err.code).toBe('wait_timeout');
      expect(err.data).toMatchObject({ retryable: true, state: 'visible', timeout_ms: 300 });
      expect(err.message).toContain('waited 300 ms for the target to show its text');
      // Hidden now (the spinner has not shown): at once.
      expect(await tool('wait').run({ target: '#spinner', state: 'hidden' }, ctx)).toEqual({ state: 'hidden' });
      await tool('click', '1.1.0').run({ target: '#load' }, ctx);
      // A fallback shows it: a drift warning, as for any target.
      expect(await tool('wait').run({ target: { css: '#nope', fallbacks: [{ testid: 'report' }] }, text: '42 rows' }, ctx)).toEqual({
        state: 'visible',
        matched: 'testid=report',
      });
      expect(ctx.warnings.at(-1)).toMatchObject({ code: 'drift', data: { matched: 'testid=report' } });
      expect(await tool('wait').run({ target: '#spinner', state: 'hidden' }, ctx)).toEqual({ state: 'hidden' });
    } finally {
      await ctx.close();
    }
  });

  it('reads text as rendered only when asked, and only from extract 1.1.0', async () => {
    const ctx = newRun();
    try {
      await open(ctx);
      const extract11 = tool('extract', '1.1.0');
      expect(await extract11.run({ target: 'pre, #address', all: true, text: 'rendered' }, ctx)).toEqual({
        matched: 'css=pre, #address',
        value: ['name  qty\nbolts  12', '1 Main St\nSpringfield'],
      });
      expect(await extract11.run({ target: '#address' }, ctx)).toMatchObject({ value: '1 Main StSpringfield (old)' });
      expect((await stepFailure(extract11.run({ target: '#address', attribute: 'id', text: 'rendered' }, ctx))).code).toBe('invalid_tool_input');
      expect((await stepFailure(tool('extract').run({ target: '#address', text: 'rendered' }, ctx))).code).toBe('invalid_tool_input');
    } finally {
      await ctx.close();
    }
  });

  it('presses on the focused element and refuses unknown keys before acting', async () => {
    const ctx = newRun();
    try {
      await open(ctx);
      await tool('fill').run({ target: '#item', value: 'tea' }, ctx);
      expect(await tool('press').run({ key: 'Enter' }, ctx)).toEqual({ matched: null });
      expect(await text(ctx, '#items')).toBe('tea');
      const err = await stepFailure(tool('press').run({ key: 'Ctrl+Enter' }, ctx));
      expect(err.code).toBe('invalid_tool_input');
      expect(ctx.effects).toHaveLength(4);
    } finally {
      await ctx.close();
    }
  });
});
