import { cp, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../helpers/cli.js';
import { treeHash } from '../unit/packs/fixtures.js';

/**
 * Tamper tests: a registry with two packs is copied, damaged in one pack, and both `registry verify`
 * and `install` must fail naming that pack (and not the intact one) while installing nothing.
 */
let work: string;
let registry: string;
const digests: Record<string, string> = {};
const tools: Record<string, { ref: string; contract_digest: string }[]> = {};

async function publishFrom(name: string, greeting: string): Promise<void> {
  const cwd = await tempProject(`flowctl-tamper-${name}-`);
  const ok = async (args: string[]) => {
    const r = await runCli(args, { cwd });
    expect(r.code, r.stderr).toBe(0);
    return r;
  };
  await ok(['init']);
  const file = join(cwd, 'flows/hello.yaml');
  await writeFile(file, (await readFile(file, 'utf8')).replace('Hello,', `${greeting},`));
  await writeFile(join(cwd, 'tool.json'), JSON.stringify({ ref: `${name}/hello`, version: '1.0.0', description: greeting, implementation: { flow: 'hello' } }));
  await ok(['pack', 'init', name, '--version', '1.0.0']);
  await ok(['pack', 'add', '--body', 'flows/hello.yaml']);
  await ok(['pack', 'add', '--body', 'tool.json']);
  const published = JSON.parse((await ok(['pack', 'publish', '--registry', registry, '--json'])).stdout);
  digests[name] = published.digest;
  tools[name] = JSON.parse((await ok(['pack', 'list', '--json'])).stdout).tools.map((t: { ref: string; contract_digest: string }) => ({
    ref: t.ref,
    contract_digest: t.contract_digest,
  }));
}

async function manifestOf(reg: string, name: string): Promise<{ flows: { source: string; flow_digest: string }[]; tools: { contract_digest: string }[] }> {
  const entry = JSON.parse(await readFile(join(reg, 'index', `${name}@1.0.0.json`), 'utf8'));
  return JSON.parse(await readFile(join(reg, 'blobs/sha256', entry.digest.slice(7)), 'utf8'));
}

const blobFile = (reg: string, digest: string) => join(reg, 'blobs/sha256', digest.slice(7));

async function damaged(kind: string, damage: (reg: string) => Promise<void>): Promise<{ reg: string; consumer: string }> {
  const reg = join(work, `reg-${kind}`);
  await cp(registry, reg, { recursive: true });
  await damage(reg);
  const consumer = await tempProject(`flowctl-tamper-consumer-${kind}-`);
  const lock = {
    schema_version: '1.0',
    packs: ['alpha', 'beta'].map((name) => ({ name, version: '1.0.0', digest: digests[name], tools: tools[name] })),
  };
  await writeFile(join(consumer, 'flowctl.packs.lock'), JSON.stringify(lock, null, 2));
  return { reg, consumer };
}

async function expectFailsNaming(reg: string, consumer: string, bad: string, code: string): Promise<void> {
  const verify = await runCli(['registry', 'verify', '--registry', reg, '--json'], { cwd: work });
  expect(verify.code).toBe(1);
  expect(verify.stderr).toContain(`FAIL ${bad}@1.0.0`);
  const report = JSON.parse(verify.stdout);
  expect(report.packs.filter((p: { ok: boolean }) => !p.ok).map((p: { pack: string }) => p.pack)).toEqual([`${bad}@1.0.0`]);
  expect(report.packs.find((p: { ok: boolean }) => !p.ok).problems[0].code).toBe(code);

  const install = await runCli(['install', '--from', reg, '--json'], { cwd: consumer });
  expect(install.code).toBe(1);
  expect(install.stderr).toContain(`${bad}@1.0.0`);
  expect(install.stderr).not.toContain(`${bad === 'alpha' ? 'beta' : 'alpha'}@1.0.0`);
  expect(JSON.parse(install.stdout).error.code).toBe('install_failed');
  expect(await stat(join(consumer, '.flowctl')).catch(() => undefined)).toBeUndefined();
}

describe('tampered registries', () => {
  beforeAll(async () => {
    work = await tempProject('flowctl-tamper-');
    registry = join(work, 'registry');
    await publishFrom('alpha', 'Hello');
    await publishFrom('beta', 'Howdy');
    expect((await runCli(['registry', 'verify', '--registry', registry], { cwd: work })).code).toBe(0);
  });

  it('one flipped byte in a blob', async () => {
    const { reg, consumer } = await damaged('flip', async (r) => {
      const file = blobFile(r, (await manifestOf(r, 'alpha')).flows[0]!.source);
      const bytes = await readFile(file);
      bytes[10] = bytes[10]! ^ 0x20;
      await writeFile(file, bytes);
    });
    await expectFailsNaming(reg, consumer, 'alpha', 'blob_digest_mismatch');
  });

  it('a deleted blob', async () => {
    const { reg, consumer } = await damaged('delete', async (r) => {
      await unlink(blobFile(r, (await manifestOf(r, 'beta')).tools[0]!.contract_digest));
    });
    await expectFailsNaming(reg, consumer, 'beta', 'blob_missing');
  });

  it('an index entry pointing at another digest', async () => {
    const { reg, consumer } = await damaged('index', async (r) => {
      const file = join(r, 'index', 'alpha@1.0.0.json');
      const entry = JSON.parse(await readFile(file, 'utf8'));
      await writeFile(file, JSON.stringify({ ...entry, digest: digests.beta }));
    });
    await expectFailsNaming(reg, consumer, 'alpha', 'index_mismatch');
    // install names the expected (locked) and the actual (indexed) digest.
    const install = await runCli(['install', '--from', reg], { cwd: consumer });
    expect(install.stderr).toContain(`expected ${digests.alpha}, actual ${digests.beta}`);
  });

  it('installs nothing into an existing local registry when one pack fails', async () => {
    const { reg, consumer } = await damaged('partial', async (r) => {
      await unlink(blobFile(r, (await manifestOf(r, 'beta')).flows[0]!.flow_digest));
    });
    const local = join(consumer, '.flowctl/registry');
    await cp(registry, join(work, 'seed'), { recursive: true });
    const seeded = await runCli(['registry', 'mirror', '--from', join(work, 'seed'), '--to', local, '--packs', 'nothing-matches'], { cwd: consumer });
    expect(seeded.code).toBe(0);
    const before = await treeHash(local);
    const install = await runCli(['install', '--from', reg], { cwd: consumer });
    expect(install.code).toBe(1);
    expect(install.stderr).toContain('beta@1.0.0');
    expect(await treeHash(local)).toBe(before);
  });
});
