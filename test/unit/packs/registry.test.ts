import { mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestOf } from '../../../src/canonical.js';
import { isFlowError } from '../../../src/errors.js';
import { fromExport, toExport } from '../../../src/packs/export-file.js';
import { publishPack } from '../../../src/packs/publish.js';
import { openRegistry } from '../../../src/packs/registry-dir.js';
import { verifyRegistry } from '../../../src/packs/verify.js';
import { build, greetingDraft, runtimeTools, treeHash } from './fixtures.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowctl-packs-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('buildPack', () => {
  it('gives the same digest for the same draft and lists every contract and flow', async () => {
    const a = await build(greetingDraft('hello'));
    const b = await build(greetingDraft('hello'));
    expect(a.digest).toBe(b.digest);
    expect(a.digest).toBe(digestOf(a.manifest));
    expect(a.manifest.flows).toHaveLength(1);
    expect(a.manifest.tools).toEqual([
      { ref: 'hello/greet', version: '1.0.0', contract_digest: expect.stringMatching(/^sha256:/), implementation: { flow: 'greet' } },
    ]);
    // Contract and FlowSpec blobs are canonical JSON, addressed by their own digests.
    const contract = JSON.parse(a.blobs.get(a.manifest.tools[0]!.contract_digest)!);
    expect(digestOf(contract)).toBe(a.manifest.tools[0]!.contract_digest);
    expect(contract.input_schema).toEqual({ type: 'object', properties: { who: { type: 'string' } }, required: ['who'], additionalProperties: false });
    expect(contract.capabilities).toEqual([]);
    const c = await build(greetingDraft('hello', '1.0.0', 'Hi'));
    expect(c.digest).not.toBe(a.digest);
  });

  it('accepts a runtime tool only with its exact contract, and refuses shadowing it', async () => {
    const draft = greetingDraft('hello');
    const contract = runtimeTools.get('core/template', '1.0.0')!.contract;
    draft.tools.push({ ...structuredClone(contract) });
    const built = await build(draft);
    expect(built.manifest.tools.map((t) => t.contract_digest)).toContain(digestOf(contract));

    const altered = greetingDraft('hello');
    altered.tools.push({ ...structuredClone(contract), description: 'changed' });
    await expect(build(altered)).rejects.toMatchObject({ code: 'pack_tool_mismatch' });

    const shadow = greetingDraft('hello');
    shadow.tools.push({ ref: 'core/template', version: '1.0.0', description: 'x', implementation: { flow: 'greet' } });
    await expect(build(shadow)).rejects.toMatchObject({ code: 'pack_tool_invalid' });

    const missing = greetingDraft('hello');
    missing.tools[0]!.implementation = { flow: 'nope' };
    await expect(build(missing)).rejects.toMatchObject({ code: 'pack_tool_invalid' });

    const lying = greetingDraft('hello');
    lying.tools[0]!.capabilities = ['net'];
    await expect(build(lying)).rejects.toMatchObject({ code: 'pack_tool_invalid' });
  });
});

describe('publish', () => {
  it('is idempotent and refuses a different body under the same name@version, changing nothing', async () => {
    const reg = join(root, 'reg');
    const pack = await build(greetingDraft('hello'));
    expect(await publishPack(reg, pack)).toEqual({ name: 'hello', version: '1.0.0', digest: pack.digest, alreadyPresent: false });
    expect(await publishPack(reg, pack)).toMatchObject({ alreadyPresent: true });
    const before = await treeHash(reg);
    const other = await build(greetingDraft('hello', '1.0.0', 'Bonjour'));
    const err = await publishPack(reg, other).catch((e: unknown) => e);
    expect(isFlowError(err, 'pack_conflict')).toBe(true);
    expect((err as { data: unknown }).data).toEqual({ pack: 'hello@1.0.0', existing: pack.digest, incoming: other.digest });
    expect(await treeHash(reg)).toBe(before);
    expect((await verifyRegistry(reg)).ok).toBe(true);
  });

  it('lets concurrent publishes of different packs all land, and exactly one of two conflicting ones', async () => {
    const reg = join(root, 'reg');
    const packs = await Promise.all(Array.from({ length: 8 }, (_, i) => build(greetingDraft(`p${i}`))));
    const results = await Promise.all(packs.map((p) => publishPack(reg, p)));
    expect(results.every((r) => !r.alreadyPresent)).toBe(true);
    expect((await verifyRegistry(reg)).packs).toHaveLength(8);

    const a = await build(greetingDraft('race', '1.0.0', 'A'));
    const b = await build(greetingDraft('race', '1.0.0', 'B'));
    const settled = await Promise.allSettled([publishPack(reg, a), publishPack(reg, b)]);
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    const rejected = settled.find((s) => s.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason.code).toBe('pack_conflict');
    expect((await verifyRegistry(reg)).ok).toBe(true);
    const tempLeft = (await readdir(join(reg, 'index'))).filter((n) => n.startsWith('.tmp-'));
    expect(tempLeft).toEqual([]);
  });

  it('rejects a pack whose blobs do not match their digests before writing', async () => {
    const reg = join(root, 'reg');
    const pack = await build(greetingDraft('hello'));
    const flow = pack.manifest.flows[0]!;
    pack.blobs.set(flow.source, 'tampered');
    await expect(publishPack(reg, pack)).rejects.toMatchObject({ code: 'blob_digest_mismatch' });
  });
});

describe('verify', () => {
  async function published() {
    const reg = join(root, 'reg');
    const a = await build(greetingDraft('alpha'));
    const b = await build(greetingDraft('beta', '1.0.0', 'Hi'));
    await publishPack(reg, a);
    await publishPack(reg, b);
    return { reg, a, b, registry: await openRegistry(reg) };
  }

  it('passes an intact registry', async () => {
    const { reg } = await published();
    const report = await verifyRegistry(reg);
    expect(report.ok).toBe(true);
    expect(report.packs.map((p) => p.pack)).toEqual(['alpha@1.0.0', 'beta@1.0.0']);
  });

  it('names the pack whose blob had one byte flipped', async () => {
    const { reg, a, registry } = await published();
    const path = registry.blobPath(a.manifest.flows[0]!.source);
    const bytes = await readFile(path);
    bytes[0] = bytes[0]! ^ 1;
    await writeFile(path, bytes);
    const report = await verifyRegistry(reg);
    expect(report.ok).toBe(false);
    const bad = report.packs.filter((p) => !p.ok);
    expect(bad.map((p) => p.pack)).toEqual(['alpha@1.0.0']);
    expect(bad[0]!.problems[0]).toMatchObject({ code: 'blob_digest_mismatch', expected: a.manifest.flows[0]!.source });
  });

  it('names the pack whose blob was deleted', async () => {
    const { reg, b, registry } = await published();
    await unlink(registry.blobPath(b.manifest.tools[0]!.contract_digest));
    const report = await verifyRegistry(reg);
    expect(report.packs.filter((p) => !p.ok).map((p) => [p.pack, p.problems[0]!.code])).toEqual([['beta@1.0.0', 'blob_missing']]);
  });

  it('names the pack whose index entry points at another digest', async () => {
    const { reg, b } = await published();
    const file = join(reg, 'index', 'alpha@1.0.0.json');
    const entry = JSON.parse(await readFile(file, 'utf8'));
    await writeFile(file, JSON.stringify({ ...entry, digest: b.digest }));
    const report = await verifyRegistry(reg);
    expect(report.packs.filter((p) => !p.ok).map((p) => [p.pack, p.problems[0]!.code])).toEqual([['alpha@1.0.0', 'index_mismatch']]);
  });

  it('fails a missing registry with registry_not_found', async () => {
    await expect(verifyRegistry(join(root, 'nope'))).rejects.toMatchObject({ code: 'registry_not_found' });
  });
});

describe('export', () => {
  it('round-trips a pack through one file and refuses a tampered one', async () => {
    const pack = await build(greetingDraft('hello'));
    const text = JSON.stringify(toExport(pack));
    const back = fromExport(text);
    expect(back.digest).toBe(pack.digest);
    expect([...back.blobs.keys()].sort()).toEqual([...pack.blobs.keys()].sort());

    const doc = JSON.parse(text);
    const key = Object.keys(doc.blobs)[0]!;
    doc.blobs[key] = `${doc.blobs[key]} `;
    expect(() => fromExport(JSON.stringify(doc))).toThrow(expect.objectContaining({ code: 'blob_digest_mismatch' }));
    const renamed = JSON.parse(text);
    renamed.manifest.version = '9.9.9';
    expect(() => fromExport(JSON.stringify(renamed))).toThrow(expect.objectContaining({ code: 'pack_digest_mismatch' }));
  });
});
