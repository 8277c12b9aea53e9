import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { createTestToolContext, type TestToolContext } from '../../src/tools/testing-context.js';
import type { Tool } from '../../src/tools/types.js';
import { BrowserPool } from '../../adapters/executor-playwright/browser-pool.js';
import { replayInSession } from '../../adapters/executor-playwright/studio/replay.js';
import type { StudioReplayStep } from '../../src/ports/studio.js';
import { runCli, tempProject } from '../helpers/cli.js';
import { startSite, type SiteServer, stepFailure, writeSiteOps } from '../helpers/site-server.js';

/**
 * Recording semantics for real pages, in Chromium on fixture pages: an optional click on a
 * cookie-consent banner that shows on some visits (consent.html), a list that may be empty but whose
 * container must be there (list.html), and targets that cannot take an op (forms.html). Through the
 * CLI (record, compile, two runs, replay --verify) and the tools one by one.
 */

let site: SiteServer;
let project: string;

const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: project, env, timeoutMs: 120_000 });

type Entry = { event: string; step?: string; reason?: string };

beforeAll(async () => {
  site = await startSite({ password: 'unused-semantics' });
  project = await tempProject('flowctl-browser-semantics-');
  await writeSiteOps(project, 'semantics', { SITE: site.url });
});

afterAll(async () => {
  await site?.close();
});

describe('an optional banner and a list that may be empty, through the CLI', () => {
  const runs: Record<string, string> = {};

  it('records optional and container, and compiles them onto the step and extract 1.2', async () => {
    const r = await cli([
      'record',
      '--name',
      'consent',
      '--task',
      'Accept cookies if asked, then search',
      '--ops',
      'ops/semantics.yaml',
      '--input',
      'visitor',
      '--input',
      'query',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const stored = JSON.parse(await readFile(join(project, 'recordings/consent.json'), 'utf8'));
    expect(stored.ops[3]).toEqual({ kind: 'click', target: { role: 'button', name: 'Accept all' }, optional: true });
    // Ops without optional store nothing for it.
    expect(stored.ops[2]).toEqual({ kind: 'click', target: { css: '#enter' } });
    expect(stored.ops[9]).toEqual({ kind: 'extract', target: { css: '.result' }, all: true, container: { css: '#results' }, name: 'results' });
    const compiled = await cli(['compile', 'consent', '--json']);
    expect(compiled.code, compiled.stderr).toBe(0);
    const spec = JSON.parse(compiled.stdout);
    expect(spec.steps[3]).toMatchObject({ id: 'click_4', optional: true });
    expect(spec.steps[2].optional).toBeUndefined();
    expect(spec.steps[9]).toMatchObject({ tool: { ref: 'browser/extract', version: '1.2.0' }, args: { container: { css: '#results' }, all: true } });
    // The emitted YAML keeps optional and compiles to the same digest.
    const emitted = await cli(['emit', 'consent', '--to', 'yaml']);
    expect(emitted.code, emitted.stderr).toBe(0);
    expect(emitted.stdout).toContain('optional: true');
  });

  it('accepts the banner when it shows, and finds the results', async () => {
    const r = await cli(['run', 'consent', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout);
    expect(run.output).toEqual({ greeting: 'Welcome, new-ann', consent: 'accepted', results: ['apple', 'apricot', 'grape'] });
    expect(run.journal.filter((e: Entry) => e.event === 'step_skipped')).toEqual([]);
    runs.shown = run.id;
  });

  it('skips the banner step when no banner shows, and an empty search is []', async () => {
    const r = await cli(['run', 'consent', '--yes', '--json', '--input', 'visitor=bob', '--input', 'query=zzz']);
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout);
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({ greeting: 'Welcome, bob', consent: 'none', results: [] });
    const journal: Entry[] = run.journal;
    const skipped = journal.filter((e) => e.event === 'step_skipped');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ step: 'click_4' });
    expect(skipped[0]!.reason).toMatch(/^optional: target_absent: .*did not appear within 1500 ms.*role=button\[name="Accept all"\]/);
    // The step began, then was skipped: no step_failed, and the steps after it ran.
    const events = journal.filter((e) => e.step === 'click_4').map((e) => e.event);
    expect(events).toEqual(['step_started', 'effect_recorded', 'step_skipped']);
    expect(journal.some((e) => e.event === 'step_failed')).toBe(false);
    runs.absent = run.id;
  });

  it('replays both runs with --verify without a browser, skip included', async () => {
    for (const [id, output] of [
      [runs.absent!, { greeting: 'Welcome, bob', consent: 'none', results: [] }],
      [runs.shown!, { greeting: 'Welcome, new-ann', consent: 'accepted', results: ['apple', 'apricot', 'grape'] }],
    ] as const) {
      const r = await cli(['replay', id, '--verify', '--json'], { CHROMIUM_PATH: '/nonexistent/chromium' });
      expect(r.code, r.stderr).toBe(0);
      const replay = JSON.parse(r.stdout);
      expect(replay).toMatchObject({ status: 'succeeded', output });
      expect(replay.journal.filter((e: Entry) => e.event === 'step_skipped').length).toBe(id === runs.absent ? 1 : 0);
    }
  });

  it('lints a list without its container and an optional step nothing can skip', async () => {
    const { mkdir, writeFile } = await import('node:fs/promises');
    const clean = await cli(['lint', 'consent']);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stderr).not.toMatch(/list-without-container|optional-without-effect/);
    await writeFile(
      join(project, 'ops/bare-list.yaml'),
      `- {kind: navigate, url: "${site.url}/list.html"}\n- {kind: extract, target: ".result", all: true, name: results}\n`,
    );
    expect((await cli(['record', '--name', 'bare-list', '--task', 'list', '--ops', 'ops/bare-list.yaml'])).code).toBe(0);
    const list = await cli(['lint', 'bare-list']);
    expect(list.code).toBe(0);
    expect(list.stderr).toMatch(/warning list-without-container: .*\(ops\[1\]\.all\)/);
    await mkdir(join(project, 'flows'), { recursive: true });
    await writeFile(
      join(project, 'flows/opt.yaml'),
      `name: opt\nsteps:\n  - id: go\n    tool: browser/navigate@1\n    args: {url: "${site.url}/"}\n    optional: true\noutput: \${steps.go.output}\n`,
    );
    const opt = await cli(['lint', 'flows/opt.yaml']);
    expect(opt.code, opt.stderr).toBe(0);
    expect(opt.stderr).toMatch(/warning optional-without-effect: optional has no effect on browser\/navigate.*\(steps\[0\]\.optional\)/);
    // A step with optional: "yes" is a compile error at its path.
    await writeFile(
      join(project, 'flows/opt-bad.yaml'),
      `name: opt-bad\nsteps:\n  - id: go\n    tool: browser/navigate@1\n    args: {url: "${site.url}/"}\n    optional: "yes"\n`,
    );
    const bad = await cli(['compile', 'flows/opt-bad.yaml', '--check']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"optional" must be true or false');
  });

  it('refuses optional and container where they mean nothing, with the path of the field', async () => {
    const { writeFile } = await import('node:fs/promises');
    const cases: [string, string][] = [
      ['- {kind: extract, target: "#a", name: a, container: "#b"}\n', 'ops[0].container goes with all: true'],
      ['- {kind: press, key: Enter, optional: true}\n', 'ops[0].optional needs a target'],
      ['- {kind: click, target: "#a", optional: yes}\n', 'ops[0].optional must be true or false'],
      ['- {kind: navigate, url: "http://127.0.0.1/", optional: true}\n', 'ops[0] unknown field optional for a navigate op'],
    ];
    for (const [text, message] of cases) {
      await writeFile(join(project, 'ops/bad.yaml'), text);
      const r = await cli(['record', '--name', 'bad', '--task', 'bad', '--ops', 'ops/bad.yaml']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });
});

describe('the tools on pages that cannot do what is asked', () => {
  let executor: PlaywrightExecutor;
  let n = 0;
  const tool = (name: string, version = '1.0.0'): Tool => executor.tools.find((t) => t.contract.ref === `browser/${name}` && t.contract.version === version)!;
  const newRun = (extra: Partial<TestToolContext> = {}): TestToolContext =>
    createTestToolContext({ runId: `semantics-${++n}`, cwd: project, timeoutMs: 30_000, ...extra });

  beforeAll(() => {
    executor = createPlaywrightExecutor({ screenshots: false });
  });
  afterAll(async () => {
    await executor?.dispose();
  });

  it('an optional click on an absent target fails target_absent; one that matches twice is still drift', async () => {
    const ctx = newRun({ optional: true });
    try {
      await tool('navigate').run({ url: `${site.url}/consent.html` }, ctx);
      const absent = await stepFailure(tool('click').run({ target: '#accept' }, ctx));
      expect(absent.code).toBe('target_absent');
      expect(absent.data).toMatchObject({ tried: [{ locator: 'css=#accept', count: 0 }], window_ms: 1500 });
      await tool('fill').run({ target: '#visitor', value: 'new-cy' }, ctx);
      await tool('click').run({ target: '#enter' }, ctx);
      // The banner turns up a moment later, within the window: clicked.
      await tool('click').run({ target: '#accept' }, ctx);
      expect((await tool('extract').run({ target: '#consent' }, ctx)) as object).toMatchObject({ value: 'accepted' });
      await tool('fill').run({ target: '#visitor', value: 'new-di' }, ctx);
      await tool('click').run({ target: '#enter' }, ctx);
      await tool('wait', '1.0.0').run({ target: '#banner' }, ctx);
      // The banner adds a second "Settings": not absent, ambiguous.
      expect((await stepFailure(tool('click').run({ target: '.twin' }, ctx))).code).toBe('locator_drift');
    } finally {
      await ctx.close();
    }
  });

  it('without optional, an absent target is locator_drift as before', async () => {
    const ctx = newRun();
    try {
      await tool('navigate').run({ url: `${site.url}/consent.html` }, ctx);
      expect((await stepFailure(tool('click').run({ target: '#accept' }, ctx))).code).toBe('locator_drift');
    } finally {
      await ctx.close();
    }
  });

  it('a list is [] while its container is there, and drift when the container is gone', async () => {
    const extract12 = tool('extract', '1.2.0');
    const ctx = newRun();
    try {
      await tool('navigate').run({ url: `${site.url}/list.html` }, ctx);
      await tool('fill').run({ target: '#q', value: 'zzz' }, ctx);
      await tool('click').run({ target: '#search' }, ctx);
      expect(await extract12.run({ target: '.result', all: true, container: '#results' }, ctx)).toEqual({ matched: 'css=.result', value: [] });
      // Without a container, an empty list cannot be told from drift: locator_drift, as in 1.1.
      expect((await stepFailure(extract12.run({ target: '.result', all: true }, ctx))).code).toBe('locator_drift');
      expect((await stepFailure(extract12.run({ target: '.result', container: '#results' }, ctx))).code).toBe('invalid_tool_input');
      // The redesigned page: no #results at all.
      await tool('navigate').run({ url: `${site.url}/list.html?layout=v2` }, ctx);
      await tool('fill').run({ target: '#q', value: 'zzz' }, ctx);
      await tool('click').run({ target: '#search' }, ctx);
      const drift = await stepFailure(extract12.run({ target: '.result', all: true, container: '#results' }, ctx));
      expect(drift.code).toBe('locator_drift');
      expect(drift.message).toContain('extract container');
      expect(drift.data).toMatchObject({ tried: [{ locator: 'css=#results', count: 0 }] });
      // A fallback of the container and of the items carries the redesign, with drift warnings.
      await tool('fill').run({ target: '#q', value: 'an' }, ctx);
      await tool('click').run({ target: '#search' }, ctx);
      const read = await extract12.run(
        { target: { css: '.result', fallbacks: [{ css: '.hit' }] }, all: true, container: { css: '#results', fallbacks: [{ css: '#hits' }] } },
        ctx,
      );
      expect(read).toEqual({ matched: 'css=.hit', value: ['banana'] });
      expect(ctx.warnings.map((w) => w.code)).toEqual(['drift', 'drift']);
    } finally {
      await ctx.close();
    }
  });

  it('a select without the option fails option_not_found at once, naming the value and the options', async () => {
    const ctx = newRun();
    try {
      await tool('navigate').run({ url: `${site.url}/forms.html` }, ctx);
      const err = await stepFailure(tool('select').run({ target: '#size', value: 'XXL' }, ctx));
      expect(err.code).toBe('option_not_found');
      expect(err.message).toContain('"XXL"');
      expect(err.message).toContain('"s" ("Small"), "m" ("Medium"), "l" ("Large")');
      expect(err.message).not.toMatch(/Timeout|locator\.selectOption/);
      expect(err.data).toMatchObject({
        value: ['XXL'],
        options: [
          { value: 's', label: 'Small' },
          { value: 'm', label: 'Medium' },
          { value: 'l', label: 'Large' },
        ],
      });
      // A secret value is never named.
      const secret = await stepFailure(tool('select').run({ target: '#size', value: 'hidden-size', mask: true }, ctx));
      expect(secret.code).toBe('option_not_found');
      expect(secret.message).not.toContain('hidden-size');
      // An option the previous action is still adding is waited for (the page settles first).
      await tool('click').run({ target: '#more' }, ctx);
      expect(await tool('select').run({ target: '#size', value: 'Extra large' }, ctx)).toEqual({ matched: 'css=#size', selected: ['xl'] });
      expect((await stepFailure(tool('select').run({ target: '#more', value: 's' }, ctx))).code).toBe('not_selectable');
      expect((await stepFailure(tool('fill').run({ target: '#note', value: 'x' }, ctx))).code).toBe('not_editable');
      const box = await stepFailure(tool('fill').run({ target: '#agree', value: 'x' }, ctx));
      expect(box.code).toBe('not_editable');
      expect(box.message).toContain('<input type=checkbox>');
      // Playwright refuses these at once; the check after its refusal names the element.
      const list = await stepFailure(tool('fill').run({ target: '#size', value: 'x' }, ctx));
      expect(list.code).toBe('not_editable');
      expect(list.message).toContain('<select>');
      expect((await stepFailure(tool('check', '1.0.0').run({ target: '#name' }, ctx))).code).toBe('not_checkable');
      await tool('fill').run({ target: '#name', value: 'ok' }, ctx);
      // A label stands for its control, as in Playwright: not refused.
      await tool('fill').run({ target: '#name-label', value: 'via label' }, ctx);
      expect(await tool('extract').run({ target: '#name', attribute: 'value' }, ctx)).toEqual({ matched: 'css=#name', value: 'via label' });
      expect(await tool('select').run({ target: 'label:has(#size)', value: 'Medium' }, ctx)).toEqual({ matched: 'css=label:has(#size)', selected: ['m'] });
    } finally {
      await ctx.close();
    }
  });
});

describe('the studio re-record replay', () => {
  it('skips an optional step whose target is absent, and stops at the same step when it is not optional', async () => {
    const pool = new BrowserPool({});
    try {
      const steps = (optional: boolean): StudioReplayStep[] => [
        { id: 'navigate_1', tool: 'browser/navigate@1.0', input: { url: `${site.url}/consent.html` }, timeoutMs: 30_000 },
        { id: 'fill_2', tool: 'browser/fill@1.1', input: { target: '#visitor', value: 'bob' }, timeoutMs: 30_000 },
        { id: 'click_3', tool: 'browser/click@1.1', input: { target: '#enter' }, timeoutMs: 30_000 },
        { id: 'click_4', tool: 'browser/click@1.1', input: { target: '#accept' }, timeoutMs: 30_000, ...(optional ? { optional: true } : {}) },
        { id: 'click_5', tool: 'browser/click@1.1', input: { target: '#enter' }, timeoutMs: 30_000 },
      ];
      const seen: string[] = [];
      const session = await pool.openSession('studio-optional');
      await replayInSession(session, steps(true), new AbortController().signal, { onStep: (_i, step) => seen.push(step.id) });
      expect(seen).toEqual(['navigate_1', 'fill_2', 'click_3', 'click_4', 'click_5']);
      const again = await pool.openSession('studio-required');
      const err = await stepFailure(replayInSession(again, steps(false), new AbortController().signal));
      expect(err.code).toBe('replay_failed');
      expect(err.data).toMatchObject({ step: 'click_4', code: 'locator_drift' });
    } finally {
      await pool.dispose();
    }
  });
});
