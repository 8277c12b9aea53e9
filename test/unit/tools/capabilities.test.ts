import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { builtinTools } from '../../../src/tools/builtins/index.js';
import { createTestToolContext } from '../../../src/tools/testing-context.js';
import { OUTWARD_CAPABILITIES, type Capability } from '../../../src/tools/types.js';

/**
 * Every built-in contract declares exactly the capabilities its implementation can exercise.
 * Checked three ways: a table of the expected capabilities per tool; the tool's source imports; and a
 * run of each tool with the process's fs, child_process and fetch instrumented.
 */

// What each tool did during its run: 'fs' (file contents opened or changed), 'spawn', 'net'.
// File-content operations count as `fs`; metadata (stat, lstat, realpath) is how paths are confined.
// Hoisted with the vi.mock factories that use it.
const probe = vi.hoisted(() => {
  const used = new Set<string>();
  const state = { recording: false };
  return {
    used,
    state,
    note: (cap: string) => {
      if (state.recording) used.add(cap);
    },
    FS_CONTENT_OPS: ['open', 'readFile', 'writeFile', 'appendFile', 'rename', 'rm', 'unlink', 'mkdir', 'copyFile', 'cp', 'truncate', 'opendir', 'readdir'],
  };
});
const { FS_CONTENT_OPS } = probe;

vi.mock('node:fs/promises', async (importOriginal) => {
  const orig = (await importOriginal()) as Record<string, unknown>;
  const wrapped: Record<string, unknown> = { ...orig };
  for (const name of probe.FS_CONTENT_OPS) {
    const fn = orig[name] as (...a: unknown[]) => unknown;
    wrapped[name] = (...args: unknown[]) => {
      probe.note('fs');
      return fn(...args);
    };
  }
  return { ...wrapped, default: wrapped };
});
vi.mock('node:child_process', async (importOriginal) => {
  const orig = (await importOriginal()) as Record<string, (...a: unknown[]) => unknown>;
  const wrap =
    (name: string) =>
    (...args: unknown[]) => {
      probe.note('spawn');
      return orig[name]!(...args);
    };
  const wrapped = { ...orig, spawn: wrap('spawn'), execFile: wrap('execFile'), exec: wrap('exec'), fork: wrap('fork') };
  return { ...wrapped, default: wrapped };
});

const EXPECTED: Record<string, Capability[]> = {
  'core/template': [],
  'core/transform': [],
  'core/assert': [],
  // secrets: headers and bodies may carry a resolved secret (only granted to steps fed one)
  'http/request': ['net', 'secrets'],
  'fs/read': ['fs'],
  'fs/write': ['fs'],
  'shell/exec': ['spawn'],
};

const SOURCE: Record<string, string> = {
  'core/template': 'core-template.ts',
  'core/transform': 'core-transform.ts',
  'core/assert': 'core-assert.ts',
  'http/request': 'http-request.ts',
  'fs/read': 'fs-read.ts',
  'fs/write': 'fs-write.ts',
  'shell/exec': 'shell-exec.ts',
};

let server: Server;
let base: string;
let root: string;

beforeAll(async () => {
  server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fsp = await import('node:fs/promises');
  root = await fsp.mkdtemp(join((await import('node:os')).tmpdir(), 'flowctl-caps-'));
  await fsp.writeFile(join(root, 'in.txt'), 'input file');
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await (await import('node:fs/promises')).rm(root, { recursive: true, force: true });
});

const SCENARIO: Record<string, () => unknown> = {
  'core/template': () => ({ template: '{{ a }}', values: { a: 1 } }),
  'core/transform': () => ({ value: { a: 1 } }),
  'core/assert': () => ({ that: true }),
  'http/request': () => ({ url: `${base}/` }),
  'fs/read': () => ({ path: 'in.txt' }),
  'fs/write': () => ({ path: 'out.txt', content: 'x' }),
  'shell/exec': () => ({ command: process.execPath, args: ['-e', ''] }),
};

describe('built-in capabilities', () => {
  it('has a row for every built-in, and every contract matches its row', () => {
    const tools = builtinTools();
    expect(tools.map((t) => t.contract.ref).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const tool of tools) {
      expect([...tool.contract.capabilities].sort(), tool.contract.ref).toEqual(EXPECTED[tool.contract.ref]);
      expect(tool.contract.version).toBe('1.0.0');
    }
  });

  it.each(Object.keys(SOURCE))("%s: the source's imports agree with the contract", (ref) => {
    const text = readFileSync(join(import.meta.dirname, '../../../src/tools/builtins', SOURCE[ref]!), 'utf8');
    const found = new Set<Capability>();
    for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'node:fs(?:\/promises)?'/g)) {
      const names = m[1]!.split(',').map((s) => s.trim().split(/\s+as\s+/)[0]!);
      if (names.some((n) => FS_CONTENT_OPS.includes(n))) found.add('fs');
    }
    if (/from\s*'node:child_process'/.test(text)) found.add('spawn');
    if (/\bfetch\(/.test(text) || /from\s*'node:(net|http|https|tls|dgram)'/.test(text)) found.add('net');
    // `secrets` is about what a tool may be fed, not what it reaches: no import shows it.
    expect([...found].sort()).toEqual(EXPECTED[ref]!.filter((c) => c !== 'secrets'));
  });

  it.each(Object.keys(SCENARIO))('%s: a run exercises exactly the declared capabilities and reports outward ones as effects', async (ref) => {
    const tool = builtinTools().find((t) => t.contract.ref === ref)!;
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const ctx = createTestToolContext({ cwd: root });
    probe.used.clear();
    probe.state.recording = true;
    try {
      await tool.run(SCENARIO[ref]!(), ctx);
    } finally {
      probe.state.recording = false;
    }
    if (fetchSpy.mock.calls.length > 0) probe.used.add('net');
    fetchSpy.mockRestore();

    expect([...probe.used].sort()).toEqual(tool.contract.capabilities.filter((c) => c !== 'secrets').sort());
    const effectKinds = new Set(ctx.effects.map((e) => e.kind));
    for (const kind of effectKinds) expect(tool.contract.capabilities).toContain(kind);
    // Every outward capability is journaled as an effect, except fs reads (documented in docs/tools.md).
    const expectedEffects = tool.contract.capabilities.filter((c) => OUTWARD_CAPABILITIES.includes(c) && ref !== 'fs/read');
    expect([...effectKinds].sort()).toEqual(expectedEffects.sort());
  });
});
