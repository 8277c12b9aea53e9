import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor } from '../../adapters/executor-playwright/index.js';
import { createMemoryStorage } from '../../adapters/storage-memory/index.js';
import { createEngine } from '../../src/engine/engine.js';
import { compile } from '../../src/flow/compile.js';
import { builtinTools } from '../../src/tools/builtins/index.js';
import { createToolRegistry } from '../../src/tools/registry.js';
import { startStaticServer, type StaticServer } from '../helpers/static-server.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * PlaywrightExecutor.warmUp(): `flowctl run` starts Chromium before the first browser step (docs/cli.md).
 * The warmed browser is the one the run's steps use; a launch that fails is reported by the first
 * browser step, never by warmUp() (and never as an unhandled rejection).
 */

let site: StaticServer;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'flowctl-warm-'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>warm</title><h1 id="title">Warm page</h1>');
  site = await startStaticServer(dir);
});

afterAll(async () => {
  await site?.close();
});

const flowFor = (url: string) => `name: warm
steps:
  - id: open
    tool: browser/navigate@1
    args: { url: "${url}/index.html" }
  - id: read
    tool: browser/extract@1
    args: { target: "#title" }
output:
  title: \${steps.read.output.value}
`;

function engineFor(executor: ReturnType<typeof createPlaywrightExecutor>) {
  const tools = createToolRegistry(builtinTools(), executor.tools);
  const compiled = compile(flowFor(site.url), { tools });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
  return { spec: compiled.spec, engine: createEngine({ storage: createMemoryStorage(), tools }) };
}

describe('PlaywrightExecutor.warmUp', () => {
  it('launches the browser before any step, and the run uses that browser', async () => {
    const executor = createPlaywrightExecutor();
    const { spec, engine } = engineFor(executor);
    try {
      expect(executor.stats().launches).toBe(0);
      executor.warmUp();
      executor.warmUp();
      await waitUntil(() => executor.stats().launches === 1, { what: 'the warmed launch' });
      const run = await engine.run({ spec }, {});
      expect(run.status).toBe('succeeded');
      expect(run.output).toEqual({ title: 'Warm page' });
      expect(executor.stats()).toMatchObject({ launches: 1, contextsCreated: 1, openContexts: 0 });
    } finally {
      await engine.dispose();
      await executor.dispose();
    }
  });

  it('leaves a failed launch to the first browser step', async () => {
    const executor = createPlaywrightExecutor({ executablePath: join(tmpdir(), 'no-such-chromium', 'chromium') });
    const { spec, engine } = engineFor(executor);
    try {
      executor.warmUp();
      const run = await engine.run({ spec }, {});
      expect(run.status).toBe('failed');
      const failed = run.journal.find((e) => e.event === 'step_failed');
      expect(failed?.event === 'step_failed' && failed.step).toBe('open');
      expect(failed?.event === 'step_failed' && failed.error.code).toMatch(/^browser_/);
      expect(executor.stats().launches).toBe(0);
    } finally {
      await engine.dispose();
      await executor.dispose();
    }
  });
});
