import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor, type PlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { createMemoryStorage } from '../../adapters/storage-memory/index.js';
import { createEngine } from '../../src/engine/engine.js';
import type { Engine } from '../../src/engine/types.js';
import { compileFlow } from '../../src/flow/compile.js';
import type { CompiledFlow } from '../../src/flow/types.js';
import type { Storage } from '../../src/ports/storage.js';
import { loadRecordingSource } from '../../src/record/flow-loader.js';
import type { JournalEntry, Run } from '../../src/run/types.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import { runCli, tempProject } from '../helpers/cli.js';
import { SITE_DIR, startSite, type SiteServer, type SiteVariant } from '../helpers/site-server.js';

/**
 * The acceptance path of the browser issue: an ops file using every op kind is recorded by the real CLI,
 * compiled, run in real Chromium through createEngine, replayed with verify without a browser; the
 * drifted copies of the site succeed with drift warnings or fail with locator_drift; the secret canary
 * appears nowhere; concurrent runs share nothing.
 */

const CANARY = 'CANARY-pw-8d2f41';
const EXPECTED = {
  welcome: 'Signed in as alice',
  results: ['Rust in Action', 'Learning Go'],
  done: ['Write report'],
  uploaded: 'report.csv: 3 lines',
  category: 'books',
  visits: '1',
  cookies: '1',
};

let project: string;
const sites = {} as Record<SiteVariant, SiteServer>;
const specs = {} as Record<SiteVariant, CompiledFlow>;
const cliOutput: string[] = [];
const logs: string[] = [];
let exec: PlaywrightExecutor;
let storage: Storage;
let engine: Engine;

const NAMES: Record<SiteVariant, string> = { base: 'shop', 'drift-renamed': 'shop-renamed', 'drift-removed': 'shop-removed' };

async function record(variant: SiteVariant): Promise<void> {
  const template = await readFile(join(SITE_DIR, 'ops/full.yaml'), 'utf8');
  await writeFile(join(project, 'ops', `${variant}.yaml`), template.replaceAll('{{SITE}}', sites[variant].url).replaceAll('{{PASSWORD}}', CANARY));
  const r = await runCli(
    [
      'record',
      '--name',
      NAMES[variant],
      '--task',
      'Find books and file a report',
      '--ops',
      `ops/${variant}.yaml`,
      '--input',
      'user',
      '--input=query',
      '--secret',
      'password',
      '--json',
    ],
    { cwd: project },
  );
  cliOutput.push(r.stdout, r.stderr);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ name: NAMES[variant], path: `recordings/${NAMES[variant]}.json` });
}

async function compileRecording(variant: SiteVariant): Promise<CompiledFlow> {
  const file = `recordings/${NAMES[variant]}.json`;
  const source = loadRecordingSource(await readFile(join(project, file), 'utf8'), file);
  expect(source.diagnostics ?? []).toEqual([]);
  const result = compileFlow(source.flow, { file, tools: createToolRegistry(builtinTools(), exec.tools), locate: source.locate });
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
  return { spec: result.spec, flow_digest: result.flow_digest };
}

function stepEntries<E extends JournalEntry['event']>(run: Run, event: E): Extract<JournalEntry, { event: E }>[] {
  return run.journal.filter((e): e is Extract<JournalEntry, { event: E }> => e.event === event);
}

beforeAll(async () => {
  project = await tempProject('flowctl-browser-flow-');
  await mkdir(join(project, 'ops/files'), { recursive: true });
  await copyFile(join(SITE_DIR, 'ops/files/report.csv'), join(project, 'ops/files/report.csv'));
  for (const variant of Object.keys(NAMES) as SiteVariant[]) sites[variant] = await startSite({ password: CANARY, variant });
  exec = createPlaywrightExecutor();
  for (const variant of Object.keys(NAMES) as SiteVariant[]) {
    await record(variant);
    specs[variant] = await compileRecording(variant);
  }
  storage = createMemoryStorage();
  const log = (level: string) => (message: string, data?: unknown) => logs.push(`${level} ${message} ${data === undefined ? '' : JSON.stringify(data)}`);
  engine = createEngine({
    storage,
    tools: createToolRegistry(builtinTools(), exec.tools),
    secrets: { name: 'test', resolve: async (ref) => (ref === 'secret:password' ? CANARY : Promise.reject(new Error(`no ${ref}`))) },
    cwd: project,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    toolOptions: { browser: { screenshots: true } },
  });
});

afterAll(async () => {
  await engine?.dispose();
  await exec?.dispose();
  await Promise.all(Object.values(sites).map((s) => s.close()));
});

describe('a recorded flow in real Chromium', () => {
  let run: Run;

  it('records every op kind and compiles to browser steps', () => {
    const { spec } = specs.base;
    expect(spec.steps.map((s) => s.tool.ref)).toEqual([
      'browser/navigate',
      'browser/fill',
      'browser/fill',
      'browser/click',
      'browser/fill',
      'browser/select',
      'browser/drag',
      'browser/upload',
      'browser/extract',
      'browser/extract',
      'browser/extract',
      'browser/extract',
      'browser/extract',
      'browser/extract',
      'browser/extract',
    ]);
    expect(spec.inputs.password).toMatchObject({ secret: true });
    // Only the step fed the secret may receive secrets.
    expect(spec.steps.filter((s) => s.capabilities.includes('secrets')).map((s) => s.id)).toEqual(['fill_3']);
  });

  it('runs through createEngine and produces the expected output', async () => {
    run = await engine.run({ spec: specs.base.spec }, { user: 'alice' });
    const failed = stepEntries(run, 'step_failed')[0];
    expect(run.status, failed && JSON.stringify(failed.error)).toBe('succeeded');
    expect(run.output).toEqual(EXPECTED);
    expect(sites.base.logins).toEqual([{ user: 'alice', ok: true }]);
    // Every browser step journals its effect with the page origin; no drift on the original site.
    const effects = stepEntries(run, 'effect_recorded');
    expect(effects).toHaveLength(15);
    expect(new Set(effects.map((e) => `${e.effect.kind} ${e.effect.target}`))).toEqual(new Set([`browser ${sites.base.url}`]));
    expect(stepEntries(run, 'step_succeeded').flatMap((e) => e.warnings ?? [])).toEqual([]);
    // Screenshots are journaled by digest only and stored as artifacts.
    const shots = stepEntries(run, 'step_succeeded').flatMap((e) => e.artifacts ?? []);
    expect(shots).toHaveLength(15);
    const stored = await storage.artifacts!.get(shots[0]!);
    expect(stored?.mediaType).toBe('image/jpeg');
    expect(exec.stats().openContexts).toBe(0);
  });

  it('replays with verify and launches no browser', async () => {
    const fresh = createPlaywrightExecutor({ executablePath: '/nonexistent/chromium' });
    const replayEngine = createEngine({ storage, tools: createToolRegistry(builtinTools(), fresh.tools), cwd: project });
    try {
      const replay = await replayEngine.replay({ run_id: run.id }, { mode: 'verify' });
      expect(replay.status).toBe('succeeded');
      expect(replay.output).toEqual(EXPECTED);
      expect(fresh.stats()).toMatchObject({ launches: 0, connections: 0, contextsCreated: 0 });
    } finally {
      await replayEngine.dispose();
      await fresh.dispose();
    }
  });

  it('leaks the secret canary nowhere', async () => {
    const texts = [
      await readFile(join(project, 'recordings/shop.json'), 'utf8'),
      JSON.stringify(specs.base.spec),
      JSON.stringify(run),
      JSON.stringify(await storage.journal.read(run.id)),
      ...cliOutput,
      ...logs,
    ];
    for (const digest of stepEntries(run, 'step_succeeded').flatMap((e) => e.artifacts ?? [])) {
      const a = await storage.artifacts!.get(digest);
      texts.push(JSON.stringify({ digest, mediaType: a?.mediaType, size: a?.bytes.length }));
    }
    for (const text of texts) expect(text).not.toContain(CANARY);
    // The secret was really used: the site accepted it.
    expect(sites.base.logins.every((l) => l.ok)).toBe(true);
  });

  it('succeeds through fallbacks on the renamed copy and journals drift warnings', async () => {
    const drifted = await engine.run({ spec: specs['drift-renamed'].spec }, { user: 'alice' });
    expect(drifted.status).toBe('succeeded');
    expect(drifted.output).toEqual(EXPECTED);
    const warned = stepEntries(drifted, 'step_succeeded').filter((e) => e.warnings?.length);
    expect(warned.map((e) => e.step)).toEqual([
      'fill_2',
      'fill_3',
      'click_4',
      'fill_5',
      'select_6',
      'drag_7',
      'upload_8',
      'extract_9',
      'extract_10',
      'extract_11',
      'extract_12',
      'extract_13',
    ]);
    expect(warned.find((e) => e.step === 'click_4')!.warnings![0]).toMatchObject({
      code: 'drift',
      data: {
        matched: 'role=button[name="Sign in"]',
        tried: [
          { locator: 'css=#login', count: 0 },
          { locator: 'role=button[name="Sign in"]', count: 1 },
        ],
      },
    });
    expect(JSON.stringify(drifted)).not.toContain(CANARY);
  });

  it('fails with locator_drift when the element was removed, saying what the page had', async () => {
    const broken = await engine.run({ spec: specs['drift-removed'].spec }, { user: 'alice' });
    expect(broken.status).toBe('failed');
    const failed = stepEntries(broken, 'step_failed');
    expect(failed.map((e) => [e.step, e.error.code])).toEqual([['fill_5', 'locator_drift']]);
    expect(failed[0]!.error.message).toContain('tried css=#search: 0, label="Search": 0, testid=search: 0');
    expect(broken.output).toBeUndefined();
    expect(exec.stats().openContexts).toBe(0);
  });

  it('isolates two concurrent runs: no cookies or storage shared', async () => {
    const [ann, bob] = await Promise.all([
      engine.run({ spec: specs.base.spec }, { user: 'ann', query: '' }),
      engine.run({ spec: specs.base.spec }, { user: 'bob', query: 'go' }),
    ]);
    expect(ann.output).toMatchObject({ welcome: 'Signed in as ann', results: ['Rust in Action', 'Dune', 'Learning Go'], visits: '1', cookies: '1' });
    expect(bob.output).toMatchObject({ welcome: 'Signed in as bob', results: ['Learning Go'], visits: '1', cookies: '1' });
    expect(exec.stats()).toMatchObject({ launches: 1, openContexts: 0 });
  });
});
