import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerCliTools } from '../../../cli/resolve-flow.js';
import { resolveRunSpec } from '../../../cli/run-spec.js';
import { SPEC_CACHE_DIR } from '../../../cli/spec-cache.js';
import { digestOf } from '../../../src/canonical.js';
import { isFlowError } from '../../../src/errors.js';
import { defineTool } from '../../../src/tools/contract.js';
import { memoryIO } from './io-helpers.js';

const FLOW = (greeting: string) => `name: hello
inputs:
  who: { type: string, default: world }
steps:
  - id: greet
    tool: core/template@1
    args:
      template: ${greeting}, {{ who }}!
      values:
        who: \${inputs.who}
output:
  text: \${steps.greet.output.text}
`;

async function project(flow = FLOW('Hello')) {
  const dir = await mkdtemp(join(tmpdir(), 'flowctl-spec-cache-'));
  await mkdir(join(dir, 'flows'));
  await writeFile(join(dir, 'flows', 'hello.yaml'), flow);
  const { io } = memoryIO({ cwd: dir });
  const refs: string[][] = [];
  const resolve = (options: { build?: string; write?: boolean; env?: Record<string, string> } = {}) =>
    resolveRunSpec(
      'hello',
      { ...io, env: options.env ?? {} },
      {
        build: options.build ?? 'test-build-1',
        write: options.write ?? true,
        openTools: async (r) => {
          refs.push(r);
          return r.length;
        },
      },
    );
  const entries = async () => {
    try {
      return await readdir(join(dir, SPEC_CACHE_DIR));
    } catch {
      return [];
    }
  };
  const entryPath = async () => join(dir, SPEC_CACHE_DIR, (await entries())[0]!);
  return { dir, resolve, refs, entries, entryPath };
}

describe('compiled-spec cache (flowctl run)', () => {
  it('compiles on a miss, then takes the verified spec from the cache for the same bytes', async () => {
    const p = await project();
    const first = await p.resolve();
    expect(first.cached).toBe(false);
    expect(first.opened).toBe(1);
    expect(first.flow_digest).toBe(digestOf(first.spec));
    expect(await p.entries()).toHaveLength(1);
    const second = await p.resolve();
    expect(second.cached).toBe(true);
    expect(second.flow_digest).toBe(first.flow_digest);
    expect(second.spec).toEqual(first.spec);
    // The tools are opened from the cached spec's refs, as from the file's.
    expect(p.refs).toEqual([['core/template'], ['core/template']]);
  });

  it('misses when the source, the lock or the build changes, and keeps one entry per flow file', async () => {
    const p = await project();
    const base = await p.resolve();
    await writeFile(join(p.dir, 'flows', 'hello.yaml'), FLOW('Howdy'));
    const changed = await p.resolve();
    expect(changed.cached).toBe(false);
    expect(changed.flow_digest).not.toBe(base.flow_digest);
    expect(JSON.stringify(changed.spec)).toContain('Howdy');
    expect((await p.resolve()).cached).toBe(true);

    await writeFile(join(p.dir, 'flowctl.lock'), '{\n  "entries": []\n}\n');
    expect((await p.resolve()).cached).toBe(false);
    expect((await p.resolve()).cached).toBe(true);
    await writeFile(join(p.dir, 'flowctl.lock'), '{ "entries": [] }\n');
    expect((await p.resolve()).cached).toBe(false);

    expect((await p.resolve({ build: 'test-build-2' })).cached).toBe(false);
    expect((await p.resolve({ build: 'test-build-2' })).cached).toBe(true);
    expect((await p.resolve({ build: 'test-build-1' })).cached).toBe(false);
    expect(await p.entries()).toHaveLength(1);
  });

  it('ignores a corrupt entry, compiles, and rewrites it', async () => {
    const p = await project();
    const good = await p.resolve();
    const path = await p.entryPath();
    await writeFile(path, '{"format":1, "spec": [tru');
    const afterGarbage = await p.resolve();
    expect(afterGarbage.cached).toBe(false);
    expect(afterGarbage.spec).toEqual(good.spec);
    expect((await p.resolve()).cached).toBe(true);

    // A spec whose content no longer has the entry's digest is never trusted.
    const entry = JSON.parse(await readFile(path, 'utf8'));
    entry.spec.steps[0].args.template = 'Tampered, {{ who }}!';
    await writeFile(path, JSON.stringify(entry));
    const afterTamper = await p.resolve();
    expect(afterTamper.cached).toBe(false);
    expect(JSON.stringify(afterTamper.spec)).not.toContain('Tampered');
    expect(afterTamper.flow_digest).toBe(good.flow_digest);
    expect((await p.resolve()).cached).toBe(true);

    // Changing the digest along with the content does not help: the key holds the source's digest,
    // and the spec must hash to the stored flow digest.
    const again = JSON.parse(await readFile(path, 'utf8'));
    again.spec.steps[0].args.template = 'Tampered, {{ who }}!';
    again.flow_digest = 'sha256:0000000000000000000000000000000000000000000000000000000000000000';
    await writeFile(path, JSON.stringify(again));
    expect((await p.resolve()).cached).toBe(false);
  });

  it('writes nothing with write false (--dry), nothing with FLOWCTL_SPEC_CACHE=off, nothing without a build', async () => {
    const p = await project();
    expect((await p.resolve({ write: false })).cached).toBe(false);
    expect(await p.entries()).toEqual([]);
    expect((await p.resolve({ env: { FLOWCTL_SPEC_CACHE: 'off' } })).cached).toBe(false);
    expect(await p.entries()).toEqual([]);
    await p.resolve();
    expect((await p.resolve({ env: { FLOWCTL_SPEC_CACHE: 'off' } })).cached).toBe(false);
    // From the sources (no build id) the CLI never caches.
    const { io } = memoryIO({ cwd: p.dir });
    const unbuilt = await resolveRunSpec('hello', io, { write: true, openTools: async () => undefined });
    expect(unbuilt.cached).toBe(false);
  });

  it('reports a flow that does not compile, and caches nothing for it', async () => {
    const p = await project('name: hello\nsteps:\n  - id: greet\n    tool: core/nope@1\n');
    await expect(p.resolve()).rejects.toSatisfy((e) => isFlowError(e, 'compile_failed'));
    expect(await p.entries()).toEqual([]);
  });

  // Last: it adds a tool to the CLI registry of this test file's module instance.
  it('misses when the tool registry changed (a pack tool added or a contract changed)', async () => {
    const p = await project();
    await p.resolve();
    expect((await p.resolve()).cached).toBe(true);
    registerCliTools([
      defineTool(
        {
          ref: 'acme/extra',
          version: '1.0.0',
          description: 'A tool added after the entry was written.',
          input_schema: { type: 'object' },
          output_schema: { type: 'object' },
          capabilities: [],
        },
        async () => ({}),
      ),
    ]);
    expect((await p.resolve()).cached).toBe(false);
    expect((await p.resolve()).cached).toBe(true);
  });
});
