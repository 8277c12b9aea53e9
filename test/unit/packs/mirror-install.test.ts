import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installPacks, parsePacksLock } from '../../../src/packs/install.js';
import { loadRegistryFlows, loadRegistryTools } from '../../../src/packs/load.js';
import { mirrorRegistries, packPatternMatches } from '../../../src/packs/mirror.js';
import { publishPack } from '../../../src/packs/publish.js';
import { openRegistry } from '../../../src/packs/registry-dir.js';
import type { BuiltPack, PacksLock } from '../../../src/packs/types.js';
import { verifyRegistry } from '../../../src/packs/verify.js';
import { build, greetingDraft, treeHash } from './fixtures.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowctl-packs-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const ids = (list: { pack: string }[]) => list.map((x) => x.pack).sort();

describe('mirror', () => {
  it('matches patterns on the name, or on name@version when the pattern has @', () => {
    expect(packPatternMatches('acme-*', 'acme-login', '1.0.0')).toBe(true);
    expect(packPatternMatches('acme-*', 'other', '1.0.0')).toBe(false);
    expect(packPatternMatches('acme-login@1.*', 'acme-login', '1.2.0')).toBe(true);
    expect(packPatternMatches('acme-login@1.*', 'acme-login', '2.0.0')).toBe(false);
    expect(packPatternMatches('a.b', 'axb', '1.0.0')).toBe(false);
  });

  it('pulls, pushes and syncs between three registries, copying nothing that conflicts', async () => {
    const [r1, r2, r3] = ['r1', 'r2', 'r3'].map((n) => join(root, n)) as [string, string, string];
    await publishPack(r1, await build(greetingDraft('one')));
    await publishPack(r1, await build(greetingDraft('shared', '1.0.0', 'Same')));
    await publishPack(r2, await build(greetingDraft('two')));
    await publishPack(r2, await build(greetingDraft('shared', '1.0.0', 'Same')));
    await publishPack(r3, await build(greetingDraft('three')));

    const pull = await mirrorRegistries({ from: r1, to: r3, mode: 'pull' });
    expect(pull.ok).toBe(true);
    expect(ids(pull.copied)).toEqual(['one@1.0.0', 'shared@1.0.0']);
    expect((await openRegistry(r1).then((r) => r.listIndex())).map((x) => x.id)).toEqual(['one@1.0.0', 'shared@1.0.0']);

    const push = await mirrorRegistries({ from: r2, to: r3, mode: 'push', packs: ['th*', 'one'] });
    expect(ids(push.copied)).toEqual(['one@1.0.0', 'three@1.0.0']);
    expect(push.copied.every((c) => c.into === 'from')).toBe(true);

    const sync = await mirrorRegistries({ from: r1, to: r2, mode: 'sync' });
    expect(sync.ok).toBe(true);
    expect(ids(sync.copied)).toEqual(['three@1.0.0', 'two@1.0.0']);
    expect(ids(sync.present)).toEqual(['one@1.0.0', 'one@1.0.0', 'shared@1.0.0', 'shared@1.0.0']);
    for (const r of [r1, r2]) {
      expect((await openRegistry(r).then((x) => x.listIndex())).map((x) => x.id)).toEqual(['one@1.0.0', 'shared@1.0.0', 'three@1.0.0', 'two@1.0.0']);
      expect((await verifyRegistry(r)).ok).toBe(true);
    }
  });

  it('reports a conflict, copies nothing conflicting, still copies the rest', async () => {
    const a = join(root, 'a');
    const b = join(root, 'b');
    await publishPack(a, await build(greetingDraft('clash', '1.0.0', 'A')));
    await publishPack(a, await build(greetingDraft('fine')));
    await publishPack(b, await build(greetingDraft('clash', '1.0.0', 'B')));
    const beforeA = await treeHash(a);
    const report = await mirrorRegistries({ from: a, to: b, mode: 'sync' });
    expect(report.ok).toBe(false);
    expect(report.conflicts.map((c) => c.pack)).toEqual(['clash@1.0.0']);
    expect(ids(report.copied)).toEqual(['fine@1.0.0']);
    expect(await treeHash(a)).toBe(beforeA);
    const entry = JSON.parse(await readFile(join(b, 'index', 'clash@1.0.0.json'), 'utf8'));
    expect(entry.digest).toBe(report.conflicts[0]!.to_digest);
  });

  it('does not copy a source pack that fails verification', async () => {
    const a = join(root, 'a');
    const b = join(root, 'b');
    const pack = await build(greetingDraft('bad'));
    await publishPack(a, pack);
    await writeFile((await openRegistry(a)).blobPath(pack.manifest.flows[0]!.flow_digest), '{}');
    const report = await mirrorRegistries({ from: a, to: b });
    expect(report.failed.map((f) => f.pack)).toEqual(['bad@1.0.0']);
    expect(await openRegistry(b).then((r) => r.listIndex())).toEqual([]);
  });
});

function lockFor(...packs: BuiltPack[]): PacksLock {
  return {
    schema_version: '1.0',
    packs: packs.map((p) => ({
      name: p.manifest.name,
      version: p.manifest.version,
      digest: p.digest,
      tools: p.manifest.tools.map((t) => ({ ref: t.ref, contract_digest: t.contract_digest })),
    })),
  };
}

describe('install', () => {
  it('installs the locked packs, verified, and is idempotent', async () => {
    const src = join(root, 'src');
    const dst = join(root, 'dst');
    const a = await build(greetingDraft('alpha'));
    const b = await build(greetingDraft('beta', '2.0.0', 'Hi'));
    await publishPack(src, a);
    await publishPack(src, b);
    const first = await installPacks({ lock: lockFor(a, b), from: src, to: dst });
    expect(first.installed.map((i) => [i.name, i.alreadyPresent])).toEqual([
      ['alpha', false],
      ['beta', false],
    ]);
    const again = await installPacks({ lock: lockFor(a, b), from: src, to: dst });
    expect(again.installed.every((i) => i.alreadyPresent)).toBe(true);
    expect((await verifyRegistry(dst)).ok).toBe(true);
  });

  it('installs nothing when any pack mismatches, naming it with expected and actual digests', async () => {
    const src = join(root, 'src');
    const dst = join(root, 'dst');
    const a = await build(greetingDraft('alpha'));
    const b = await build(greetingDraft('beta', '1.0.0', 'Hi'));
    await publishPack(src, a);
    await publishPack(src, b);
    const lock = lockFor(a, b);
    lock.packs[1]!.digest = a.digest;
    const err = (await installPacks({ lock, from: src, to: dst }).catch((e: unknown) => e)) as { code: string; message: string };
    expect(err.code).toBe('install_failed');
    expect(err.message).toContain('beta@1.0.0');
    expect(err.message).toContain(`expected ${a.digest}, actual ${b.digest}`);
    expect(await stat(dst).catch(() => undefined)).toBeUndefined();

    const toolLock = lockFor(a, b);
    toolLock.packs[0]!.tools[0]!.contract_digest = b.manifest.tools[0]!.contract_digest;
    await expect(installPacks({ lock: toolLock, from: src, to: dst })).rejects.toMatchObject({
      code: 'install_failed',
      message: expect.stringContaining('alpha@1.0.0'),
    });
    expect(await stat(dst).catch(() => undefined)).toBeUndefined();
  });

  it('validates the lock shape exactly', () => {
    expect(() => parsePacksLock('{"schema_version":"1.0","packs":[]}')).not.toThrow();
    expect(() => parsePacksLock('{"schema_version":"2.0","packs":[]}')).toThrow(expect.objectContaining({ code: 'packs_lock_invalid' }));
    expect(() => parsePacksLock('{"schema_version":"1.0","packs":[],"extra":1}')).toThrow(expect.objectContaining({ code: 'packs_lock_invalid' }));
    expect(() => parsePacksLock('{"schema_version":"1.0","packs":[{"name":"a","version":"1.0.0","digest":"sha256:00","tools":[]}]}')).toThrow(
      expect.objectContaining({ code: 'packs_lock_invalid' }),
    );
    expect(() => parsePacksLock('nope')).toThrow(expect.objectContaining({ code: 'packs_lock_invalid' }));
  });
});

describe('loaders', () => {
  it('returns the flows and runnable composite tools of installed packs', async () => {
    const reg = join(root, 'reg');
    await publishPack(reg, await build(greetingDraft('alpha', '1.0.0')));
    await publishPack(reg, await build(greetingDraft('alpha', '1.10.0', 'Hey')));
    const flows = await loadRegistryFlows(reg);
    expect(flows.map((f) => `${f.pack}@${f.version}:${f.name}`)).toEqual(['alpha@1.10.0:greet', 'alpha@1.0.0:greet']);
    expect(flows[0]!.spec.name).toBe('greet');

    const calls: unknown[] = [];
    const err = await loadRegistryTools(reg, { runFlow: async () => undefined }).catch((e: unknown) => e);
    // Both versions define alpha/greet@1.0.0 with different flows: a real conflict.
    expect(err).toMatchObject({ code: 'pack_tool_conflict' });

    const reg2 = join(root, 'reg2');
    await publishPack(reg2, await build(greetingDraft('alpha', '1.0.0')));
    const tools = await loadRegistryTools(reg2, {
      runFlow: async (spec, inputs) => {
        calls.push([spec.name, inputs]);
        return { ok: true };
      },
    });
    expect(tools.map((t) => `${t.contract.ref}@${t.contract.version}`)).toEqual(['alpha/greet@1.0.0']);
    expect(await tools[0]!.run({ who: 'Ada' }, {} as never)).toEqual({ ok: true });
    expect(calls).toEqual([['greet', { who: 'Ada' }]]);
    expect(await loadRegistryFlows(join(root, 'absent'), { optional: true })).toEqual([]);
  });
});
