import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../helpers/cli.js';
import { treeHash } from '../unit/packs/fixtures.js';

/** Three registries, r1, r2, r3, filled by `pack publish` from projects, then mirrored with the CLI. */
let cwd: string;

async function ok(args: string[], at = cwd) {
  const r = await runCli(args, { cwd: at });
  expect(r.code, r.stderr).toBe(0);
  return r;
}

async function publish(name: string, greeting: string, registries: string[]): Promise<string> {
  const project = await tempProject(`flowctl-mirror-${name}-`);
  await ok(['init'], project);
  const file = join(project, 'flows/hello.yaml');
  await writeFile(file, (await readFile(file, 'utf8')).replace('Hello,', `${greeting},`));
  await ok(['pack', 'init', name, '--version', '1.0.0'], project);
  await ok(['pack', 'add', '--body', 'flows/hello.yaml'], project);
  let digest = '';
  for (const r of registries) digest = JSON.parse((await ok(['pack', 'publish', '--registry', join(cwd, r), '--json'], project)).stdout).digest;
  return digest;
}

async function ids(reg: string): Promise<string[]> {
  const out = JSON.parse((await ok(['registry', 'ls', '--registry', reg, '--json'])).stdout);
  return out.packs.map((p: { name: string; version: string }) => `${p.name}@${p.version}`);
}

describe('flowctl registry mirror', () => {
  beforeAll(async () => {
    cwd = await tempProject('flowctl-mirror-');
    await publish('one', 'Hello', ['r1']);
    await publish('two', 'Hi', ['r2']);
    await publish('three', 'Hey', ['r3']);
    await publish('common', 'Yo', ['r1', 'r2', 'r3']);
  });

  it('pull copies from --from into --to, push from --to into --from, sync both ways', async () => {
    const pull = JSON.parse((await ok(['registry', 'mirror', '--from', 'r1', '--to', 'r2', '--json'])).stdout);
    expect(pull.mode).toBe('pull');
    expect(pull.copied.map((c: { pack: string; into: string }) => [c.pack, c.into])).toEqual([['one@1.0.0', 'to']]);
    expect(await ids('r1')).toEqual(['common@1.0.0', 'one@1.0.0']);
    expect(await ids('r2')).toEqual(['common@1.0.0', 'one@1.0.0', 'two@1.0.0']);

    const push = JSON.parse((await ok(['registry', 'mirror', '--from', 'r3', '--to', 'r2', '--mode', 'push', '--packs', 't*', '--json'])).stdout);
    expect(push.copied.map((c: { pack: string; into: string }) => [c.pack, c.into])).toEqual([['two@1.0.0', 'from']]);
    expect(await ids('r3')).toEqual(['common@1.0.0', 'three@1.0.0', 'two@1.0.0']);

    const sync = JSON.parse((await ok(['registry', 'mirror', '--from', 'r1', '--to', 'r3', '--mode', 'sync', '--json'])).stdout);
    expect(sync.ok).toBe(true);
    expect(sync.copied.map((c: { pack: string }) => c.pack).sort()).toEqual(['one@1.0.0', 'three@1.0.0', 'two@1.0.0']);
    for (const r of ['r1', 'r3']) {
      expect(await ids(r)).toEqual(['common@1.0.0', 'one@1.0.0', 'three@1.0.0', 'two@1.0.0']);
      await ok(['registry', 'verify', '--registry', r]);
    }
    const again = JSON.parse((await ok(['registry', 'mirror', '--from', 'r1', '--to', 'r3', '--mode', 'sync', '--json'])).stdout);
    expect(again.copied).toEqual([]);
  });

  it('exits non-zero on a conflict, copies nothing conflicting and still copies the rest', async () => {
    const a = await publish('clash', 'Alpha', ['c1']);
    const b = await publish('clash', 'Beta', ['c2']);
    await publish('extra', 'Extra', ['c1']);
    const before = await treeHash(join(cwd, 'c2'));
    const r = await runCli(['registry', 'mirror', '--from', 'c1', '--to', 'c2', '--mode', 'sync', '--json'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CONFLICT clash@1.0.0');
    const report = JSON.parse(r.stdout);
    expect(report.conflicts).toEqual([{ pack: 'clash@1.0.0', from_digest: a, to_digest: b }]);
    expect(report.copied.map((c: { pack: string }) => c.pack)).toEqual(['extra@1.0.0']);
    expect(await treeHash(join(cwd, 'c2'))).not.toBe(before);
    const c2 = JSON.parse(await readFile(join(cwd, 'c2/index/clash@1.0.0.json'), 'utf8'));
    expect(c2.digest).toBe(b);
    await ok(['registry', 'verify', '--registry', 'c2']);
  });

  it('fails on a missing source registry and creates nothing', async () => {
    const r = await runCli(['registry', 'mirror', '--from', 'missing', '--to', 'fresh'], { cwd });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no registry at');
    const ls = await runCli(['registry', 'ls', '--registry', 'fresh'], { cwd });
    expect(ls.code).toBe(1);
  });
});
