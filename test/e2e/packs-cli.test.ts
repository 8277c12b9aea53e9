import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../helpers/cli.js';
import { treeHash } from '../unit/packs/fixtures.js';

const TOOL = { ref: 'demo/hello', version: '1.0.0', description: 'Says hello', implementation: { flow: 'hello' } };

/** A project with `flowctl init`, a pack draft holding flows/hello.yaml and a composite tool over it. */
async function packProject(name = 'demo', greeting?: string): Promise<string> {
  const cwd = await tempProject('flowctl-packs-e2e-');
  expect((await runCli(['init'], { cwd })).code).toBe(0);
  if (greeting) {
    const file = join(cwd, 'flows/hello.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace('Hello,', `${greeting},`));
  }
  await writeFile(join(cwd, 'hello-tool.json'), JSON.stringify(TOOL));
  expect((await runCli(['pack', 'init', name, '--version', '1.0.0'], { cwd })).code).toBe(0);
  expect((await runCli(['pack', 'add', '--body', 'flows/hello.yaml'], { cwd })).code).toBe(0);
  expect((await runCli(['pack', 'add', '--body', 'hello-tool.json'], { cwd })).code).toBe(0);
  return cwd;
}

async function publishJson(cwd: string, ...extra: string[]) {
  const r = await runCli(['pack', 'publish', '--json', ...extra], { cwd });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { name: string; version: string; digest: string; alreadyPresent: boolean };
}

describe('flowctl pack', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await packProject();
  });

  it('init writes the draft with the default version, add snapshots flows and tools', async () => {
    const fresh = await tempProject('flowctl-packs-e2e-');
    const init = await runCli(['pack', 'init', 'fresh', '--json'], { cwd: fresh });
    expect(init.code).toBe(0);
    expect(JSON.parse(init.stdout)).toEqual({ created: true, name: 'fresh', version: '0.0.0' });
    // --name is the same as the positional name
    const named = await tempProject('flowctl-packs-e2e-');
    const byFlag = await runCli(['pack', 'init', '--name', 'by-flag', '--version', '2.0.0', '--json'], { cwd: named });
    expect(byFlag.code, byFlag.stderr).toBe(0);
    expect(JSON.parse(byFlag.stdout)).toEqual({ created: true, name: 'by-flag', version: '2.0.0' });
    expect((await runCli(['pack', 'init', 'one', '--name', 'two'], { cwd: named })).code).toBe(2);
    const draft = JSON.parse(await readFile(join(cwd, 'flowctl.pack.json'), 'utf8'));
    expect(draft.name).toBe('demo');
    expect(draft.flows.map((f: { name: string; file: string }) => [f.name, f.file])).toEqual([['hello', 'flows/hello.yaml']]);
    expect(draft.tools).toEqual([TOOL]);
    const list = await runCli(['pack', 'list', '--json'], { cwd });
    expect(list.code).toBe(0);
    const summary = JSON.parse(list.stdout);
    expect(summary.tools).toEqual([
      { ref: 'demo/hello', version: '1.0.0', contract_digest: expect.stringMatching(/^sha256:/), implementation: { flow: 'hello' } },
    ]);
    // A Recording joins the pack too: it compiles through recordingToFlow against the browser tools.
    await writeFile(
      join(cwd, 'ops.json'),
      JSON.stringify([
        { kind: 'navigate', url: 'http://127.0.0.1:9/' },
        { kind: 'extract', name: 'title', target: { css: 'h1' } },
      ]),
    );
    expect((await runCli(['record', '--name', 'title', '--task', 'read the title', '--ops', 'ops.json'], { cwd })).code).toBe(0);
    const rec = await runCli(['pack', 'add', '--body', 'recordings/title.json', '--json'], { cwd });
    expect(rec.code, rec.stderr).toBe(0);
    expect(JSON.parse(rec.stdout)).toMatchObject({ kind: 'flow', name: 'title', replaced: false });
    const withRec = JSON.parse((await runCli(['pack', 'list', '--json'], { cwd })).stdout);
    expect(withRec.flows.map((f: { name: string; source_kind: string }) => [f.name, f.source_kind])).toEqual([
      ['hello', 'yaml'],
      ['title', 'recording'],
    ]);

    await writeFile(join(cwd, 'other.json'), '{"hello": 1}');
    const bad = await runCli(['pack', 'add', '--body', 'other.json'], { cwd });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('neither a Recording, a FlowSpec nor a tool contract');
  });

  it('publishes, republishes as alreadyPresent, and refuses a conflicting body leaving the registry byte-identical', async () => {
    const first = await publishJson(cwd);
    expect(first).toMatchObject({ name: 'demo', version: '1.0.0', alreadyPresent: false });
    expect(first.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const second = await publishJson(cwd);
    expect(second).toEqual({ ...first, alreadyPresent: true });

    const registry = join(cwd, '.flowctl/registry');
    const before = await treeHash(registry);
    const file = join(cwd, 'flows/hello.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace('Hello,', 'Howdy,'));
    expect((await runCli(['pack', 'add', '--body', 'flows/hello.yaml'], { cwd })).code).toBe(0);
    const conflict = await runCli(['pack', 'publish', '--json'], { cwd });
    expect(conflict.code).toBe(1);
    expect(JSON.parse(conflict.stdout).error).toMatchObject({ code: 'pack_conflict', data: { pack: 'demo@1.0.0', existing: first.digest } });
    expect(conflict.stderr).toContain('demo@1.0.0 is already published');
    expect(await treeHash(registry)).toBe(before);

    // A new version of the changed body lands beside the old one.
    const next = await publishJson(cwd, '--version', '1.0.1');
    expect(next).toMatchObject({ version: '1.0.1', alreadyPresent: false });
    const verify = await runCli(['registry', 'verify', '--json'], { cwd });
    expect(verify.code).toBe(0);
    expect(JSON.parse(verify.stdout).packs.map((p: { pack: string }) => p.pack)).toEqual(['demo@1.0.0', 'demo@1.0.1']);
  });

  it('exports a pack to one file and imports it into another registry with the same digest', async () => {
    const other = await packProject('exported');
    const exp = await runCli(['pack', 'export', '--to', 'exported.pack.json', '--json'], { cwd: other });
    expect(exp.code, exp.stderr).toBe(0);
    const exported = JSON.parse(exp.stdout);
    const imported = await publishJson(other, '--body', 'exported.pack.json', '--registry', 'imported-reg');
    expect(imported).toEqual({ name: 'exported', version: '1.0.0', digest: exported.digest, alreadyPresent: false });
    expect((await publishJson(other, '--registry', 'imported-reg')).alreadyPresent).toBe(true);
    expect((await runCli(['registry', 'verify', '--registry', 'imported-reg'], { cwd: other })).code).toBe(0);
    // the registry directory may also be a positional argument
    expect((await runCli(['registry', 'verify', 'imported-reg'], { cwd: other })).code).toBe(0);
    const listed = await runCli(['registry', 'ls', 'imported-reg', '--json'], { cwd: other });
    expect(JSON.parse(listed.stdout).packs.length).toBeGreaterThan(0);
    expect((await runCli(['registry', 'verify', 'imported-reg', '--registry', 'elsewhere'], { cwd: other })).code).toBe(2);

    const doc = JSON.parse(await readFile(join(other, 'exported.pack.json'), 'utf8'));
    const key = Object.keys(doc.blobs).find((k) => doc.blobs[k].includes('Hello,'))!;
    doc.blobs[key] = doc.blobs[key].replace('Hello,', 'Jello,');
    await writeFile(join(other, 'tampered.pack.json'), JSON.stringify(doc));
    const tampered = await runCli(['pack', 'publish', '--body', 'tampered.pack.json', '--registry', 'tampered-reg'], { cwd: other });
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain('exported@1.0.0');
  });

  it('installs the packs of a lock into .flowctl/registry, verified, idempotently', async () => {
    const source = await packProject('lib');
    const published = await publishJson(source, '--registry', 'shared');
    const ls = await runCli(['registry', 'ls', '--registry', 'shared', '--json'], { cwd: source });
    expect(JSON.parse(ls.stdout).packs).toEqual([{ name: 'lib', version: '1.0.0', digest: published.digest }]);
    const list = JSON.parse((await runCli(['pack', 'list', '--json'], { cwd: source })).stdout);

    const consumer = await tempProject('flowctl-packs-consumer-');
    const lock = {
      schema_version: '1.0',
      packs: [
        {
          name: 'lib',
          version: '1.0.0',
          digest: published.digest,
          tools: list.tools.map((t: { ref: string; contract_digest: string }) => ({ ref: t.ref, contract_digest: t.contract_digest })),
        },
      ],
    };
    await writeFile(join(consumer, 'flowctl.packs.lock'), JSON.stringify(lock, null, 2));
    const shared = join(source, 'shared');
    const install = await runCli(['install', '--from', shared, '--json'], { cwd: consumer });
    expect(install.code, install.stderr).toBe(0);
    expect(JSON.parse(install.stdout)).toEqual({
      installed: [{ name: 'lib', version: '1.0.0', digest: published.digest, alreadyPresent: false }],
      to: '.flowctl/registry',
    });
    const again = await runCli(['install', '--from', shared, '--json'], { cwd: consumer });
    expect(JSON.parse(again.stdout).installed[0].alreadyPresent).toBe(true);
    expect((await runCli(['registry', 'verify'], { cwd: consumer })).code).toBe(0);

    await writeFile(join(consumer, 'bad.lock'), JSON.stringify({ schema_version: '1.0', packs: [{ name: 'lib' }] }));
    const bad = await runCli(['install', '--from', shared, '--lock', 'bad.lock'], { cwd: consumer });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('bad.lock is invalid');
  });

  it('rejects usage errors with exit 2', async () => {
    expect((await runCli(['pack'], { cwd })).code).toBe(2);
    expect((await runCli(['pack', 'frobnicate'], { cwd })).code).toBe(2);
    expect((await runCli(['pack', 'export'], { cwd })).code).toBe(2);
    expect((await runCli(['install'], { cwd })).code).toBe(2);
    expect((await runCli(['registry', 'mirror', '--from', 'a'], { cwd })).code).toBe(2);
    expect((await runCli(['registry', 'mirror', '--from', 'a', '--to', 'b', '--mode', 'both'], { cwd })).code).toBe(2);
    expect((await runCli(['pack', 'publish', '--bogus'], { cwd })).code).toBe(2);
  });
});
