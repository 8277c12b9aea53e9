import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCH_FLAGS } from '../../adapters/executor-playwright/index.js';
import { CORPUS } from '../helpers/corpus-apps.js';
import { FIXTURE_SITES, startHosted, type HostedFixture } from '../helpers/hosted.js';
import { startStaticServer, type StaticServer } from '../helpers/static-server.js';
import { signUpInWebApp, StudioCanvas } from '../helpers/studio-canvas.js';

/**
 * The corpus of real apps (issue 26, point 10; the table is test/helpers/corpus-apps.ts). For each
 * app, served from its npm package on 127.0.0.1: a newcomer creates an automation whose site is the
 * app, records the task through the studio canvas in Chromium (mouse and keyboard at the places of the
 * remote page's elements), marks the input slots and any optional step (the step list's toggle, issue
 * 28 point 5), publishes, and calls the automation through the gateway with two input sets; the outputs
 * are checked, and the steps each run skipped (its journal) against the app's table. Results go to test-artifacts/corpus/
 * results.json (scripts/corpus-table.mjs makes docs/corpus.md from them).
 */

const ROOT = resolve(import.meta.dirname, '../..');
const RESULTS = process.env.CORPUS_RESULTS ?? join(ROOT, 'test-artifacts/corpus/results.json');
/** CORPUS_ONLY=id,id runs only those apps (while working on one). */
const ONLY = process.env.CORPUS_ONLY?.split(',');
const APPS = ONLY ? CORPUS.filter((a) => ONLY.includes(a.id)) : CORPUS;

interface Result {
  id: string;
  app: string;
  package: string;
  version: string;
  task: string;
  ops: string[];
  runs: number;
  passed: number;
  /** Steps (1-based) marked optional in the studio, and per run the ones it skipped. */
  optional?: number[];
  skipped?: number[][];
  needs?: string;
  error?: string;
}

let h: HostedFixture;
let browser: Browser;
let web: { context: BrowserContext; page: Page };
const results: Result[] = [];

beforeAll(async () => {
  // The apps are on 127.0.0.1: the egress rule lets the studio and the runs reach them.
  h = await startHosted({ egressAllow: FIXTURE_SITES });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: [...LAUNCH_FLAGS] });
  web = await signUpInWebApp(browser, h.url, 'corpus@example.test');
}, 120_000);

afterAll(async () => {
  await mkdir(resolve(RESULTS, '..'), { recursive: true });
  await writeFile(RESULTS, `${JSON.stringify({ generated: new Date().toISOString(), results }, null, 2)}\n`);
  await web?.context.close();
  await browser?.close();
  await h?.close();
});

describe.each(APPS)('corpus: $app ($package)', (app) => {
  let server: StaticServer;
  beforeAll(async () => {
    server = await startStaticServer(app.root);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is recorded through the studio canvas, published, and run through the gateway with two input sets', async () => {
    const version = JSON.parse(await readFile(join(ROOT, 'node_modules', app.package, 'package.json'), 'utf8')).version as string;
    const result: Result = {
      id: app.id,
      app: app.app,
      package: app.package,
      version,
      task: app.task,
      ops: [],
      runs: 0,
      passed: 0,
      ...(app.needs ? { needs: app.needs } : {}),
    };
    if (app.optional) Object.assign(result, { optional: app.optional, skipped: [] });
    results.push(result);
    const site = `${server.url}${app.path}`;
    const s = await StudioCanvas.open(web.page, browser, { name: `corpus-${app.id}`, site, task: app.task });
    console.log(`[corpus] ${app.id}: remote viewport ${s.viewport.width}x${s.viewport.height}`);
    try {
      await app.record(s, site);
      let session = await s.session();
      result.ops = session.captured_ops.map((o: any) => o.kind);
      expect(result.ops).toEqual(app.kinds);
      for (const [step, slot] of Object.entries(app.slots)) await s.markInput(Number(step), slot);
      const slots = Object.values(app.slots).sort();
      await expect.poll(async () => [...(await s.session()).input_slots].sort(), { timeout: 30_000 }).toEqual(slots);
      // Optional steps: recorded as every step is, then marked with the step list's toggle.
      for (const step of app.optional ?? []) {
        expect(session.captured_ops[step - 1].optional).toBeUndefined();
        await s.markOptional(step);
      }
      session = await s.session();
      expect(session.captured_ops.map((_: unknown, i: number) => session.captured_ops[i].optional === true)).toEqual(
        app.kinds.map((_, i) => app.optional?.includes(i + 1) ?? false),
      );
      const { key, automation } = await s.publish();
      expect(automation.status).toBe('published');

      for (const run of app.runs) {
        result.runs++;
        const res = await fetch(`${h.url}/v1/run/corpus-${app.id}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ inputs: run.inputs }),
        });
        const body = (await res.json()) as any;
        expect([res.status, body.status, body.error], JSON.stringify(body)).toEqual([200, 'succeeded', undefined]);
        expect(body.flow_digest).toBe(automation.live_digest);
        expect(body.output).toEqual(run.output);
        // The steps the run skipped (its journal): the optional ones whose element did not turn up, no others.
        const exec = await web.page.request.get(`/api/executions/${body.run_id}`);
        expect(exec.status()).toBe(200);
        const skipped = ((await exec.json()).journal as { event: string; step?: string; reason?: string }[]).filter((e) => e.event === 'step_skipped');
        const want = run.skipped ?? [];
        expect(skipped.map((e) => e.step)).toEqual(want.map((n) => `${app.kinds[n - 1]}_${n}`));
        for (const e of skipped) expect(e.reason).toMatch(/^optional: target_absent: /);
        result.skipped?.push(want);
        result.passed++;
      }
      expect(session.captured_ops.length).toBe(app.kinds.length);
    } catch (e) {
      result.error = e instanceof Error ? e.message.split('\n')[0] : String(e);
      throw e;
    } finally {
      await s.close();
    }
  }, 300_000);
});
