import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPlaywrightExecutor } from '../../../adapters/executor-playwright/index.js';
import { parseArgs } from '../../../cli/args.js';
import { earlyStartApplies } from '../../../cli/early-browser.js';
import { INSTALLED_REGISTRY_DIR } from '../../../cli/layout.js';
import { registerCliTools } from '../../../cli/resolve-flow.js';
import { resolveRunSpec } from '../../../cli/run-spec.js';
import { memoryIO } from './io-helpers.js';

/** The early start of `flowctl run` applies only to a run that surely starts a browser (cli/early-browser.ts). */

const BUILD = 'test-build-early';
const BROWSER_FLOW = `name: look
steps:
  - id: open
    tool: browser/navigate@1
    args: { url: "http://127.0.0.1:9/" }
`;
const WITH_INPUT = `name: search
inputs:
  q: { type: string, default: books }
steps:
  - id: open
    tool: browser/navigate@1
    args: { url: "http://127.0.0.1:9/?q=\${inputs.q}" }
`;
const PURE = `name: hello
steps:
  - id: greet
    tool: core/template@1
    args: { template: "hi" }
output:
  text: \${steps.greet.output.text}
`;

beforeAll(() => {
  // The browser tools' contracts, as `flowctl run` registers them (creating the executor starts nothing).
  registerCliTools(createPlaywrightExecutor().tools);
});

async function project(flows: Record<string, string>) {
  const dir = await mkdtemp(join(tmpdir(), 'flowctl-early-'));
  await mkdir(join(dir, 'flows'));
  for (const [name, text] of Object.entries(flows)) await writeFile(join(dir, 'flows', `${name}.yaml`), text);
  const { io } = memoryIO({ cwd: dir });
  const env = io.env;
  /** Compile as `flowctl run` does, so the compiled-spec cache holds the flow (for this build). */
  const cache = (name: string) => resolveRunSpec(name, { ...io, env: {} }, { build: BUILD, write: true, openTools: async () => undefined });
  const applies = (argv: string[], extraEnv: Record<string, string> = {}) => earlyStartApplies(parseArgs(argv), { ...io, env: { ...env, ...extraEnv } }, BUILD);
  return { dir, cache, applies };
}

describe('the early browser start of flowctl run', () => {
  it('applies to a cached browser flow with no inputs, and only then', async () => {
    const p = await project({ look: BROWSER_FLOW, search: WITH_INPUT, hello: PURE });
    // Not compiled yet: nothing is known about the flow.
    expect(await p.applies(['look', '--yes'])).toBe(false);
    await p.cache('look');
    expect(await p.applies(['look', '--yes'])).toBe(true);
    expect(await p.applies(['look'])).toBe(true);
    // Runs that may not start: --dry, inputs given (unknown here: invalid_inputs), a flow with inputs.
    expect(await p.applies(['look', '--dry'])).toBe(false);
    expect(await p.applies(['look', '--input', 'x=1'])).toBe(false);
    expect(await p.applies(['look', '--input-file', 'in.json'])).toBe(false);
    await p.cache('search');
    expect(await p.applies(['search'])).toBe(false);
    // No browser step.
    await p.cache('hello');
    expect(await p.applies(['hello'])).toBe(false);
    // The cache is off, or another build wrote it.
    expect(await p.applies(['look'], { FLOWCTL_SPEC_CACHE: 'off' })).toBe(false);
    expect(await earlyStartApplies(parseArgs(['look']), memoryIO({ cwd: p.dir }).io, 'another-build')).toBe(false);
    // An unknown flow: the run reports it.
    await expect(p.applies(['nope'])).rejects.toMatchObject({ code: 'flow_not_found' });
  });

  it('does not apply once the flow file changed since it was cached', async () => {
    const p = await project({ look: BROWSER_FLOW });
    await p.cache('look');
    await writeFile(join(p.dir, 'flows', 'look.yaml'), BROWSER_FLOW.replace('127.0.0.1:9/', '127.0.0.1:9/other'));
    expect(await p.applies(['look'])).toBe(false);
  });

  it('does not apply with installed packs (their tools may change what the flow compiles against)', async () => {
    const p = await project({ look: BROWSER_FLOW });
    await p.cache('look');
    await mkdir(join(p.dir, INSTALLED_REGISTRY_DIR), { recursive: true });
    expect(await p.applies(['look'])).toBe(false);
  });
});
