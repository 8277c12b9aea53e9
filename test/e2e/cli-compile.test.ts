import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/canonical.js';
import { runCli, tempProject } from '../helpers/cli.js';

/** The authoring commands through the built bin, in fresh project folders. */
async function project(): Promise<string> {
  const cwd = await tempProject('flowctl-compile-');
  const r = await runCli(['init'], { cwd });
  expect(r.code).toBe(0);
  return cwd;
}

const read = (cwd: string, p: string) => readFile(join(cwd, p), 'utf8');

describe('flowctl init', () => {
  it('scaffolds flows/, tools/, an empty lock and a starter flow, then fills only what is missing', async () => {
    const cwd = await tempProject('flowctl-init-');
    const first = await runCli(['init'], { cwd });
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('');
    expect(first.stderr).toContain('created flows/, tools/, flowctl.lock, flows/hello.yaml');
    expect(JSON.parse(await read(cwd, 'flowctl.lock'))).toEqual({ entries: [] });
    expect(existsSync(join(cwd, 'tools'))).toBe(true);

    await writeFile(join(cwd, 'flows/hello.yaml'), '# mine\n');
    const second = await runCli(['init'], { cwd });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('nothing to do');
    expect(await read(cwd, 'flows/hello.yaml')).toBe('# mine\n');

    const { rm } = await import('node:fs/promises');
    await rm(join(cwd, 'flowctl.lock'));
    const third = await runCli(['init'], { cwd });
    expect(third.stderr).toContain('created flowctl.lock');
    expect(await read(cwd, 'flows/hello.yaml')).toBe('# mine\n');
  });

  it('rejects arguments and unknown flags as usage errors', async () => {
    const cwd = await tempProject('flowctl-init-');
    expect((await runCli(['init', 'x'], { cwd })).code).toBe(2);
    const r = await runCli(['init', '--force'], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown flag --force');
    expect(existsSync(join(cwd, 'flows'))).toBe(false);
  });
});

describe('flowctl compile', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await project();
  });

  it('--check prints the digest and writes nothing', async () => {
    const r = await runCli(['compile', 'hello', '--check'], { cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/sha256:[0-9a-f]{64}/);
    expect(existsSync(join(cwd, 'out'))).toBe(false);
    expect(JSON.parse(await read(cwd, 'flowctl.lock'))).toEqual({ entries: [] });
  });

  it('writes out/<name>.flowspec.json and pins new tool versions in the lock', async () => {
    const r = await runCli(['compile', 'hello'], { cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const spec = JSON.parse(await read(cwd, 'out/hello.flowspec.json'));
    const digest = r.stderr.match(/sha256:[0-9a-f]{64}\n$/)?.[0].trim();
    expect(digestOf(spec)).toBe(digest);
    const lock = JSON.parse(await read(cwd, 'flowctl.lock'));
    expect(lock.entries).toEqual([{ ref: 'core/template', version: '1.0.0', contract_digest: spec.steps[0].tool.contract_digest }]);
    // Compiling again with the lock in place gives the same digest and leaves the lock alone.
    const again = await runCli(['compile', 'flows/hello.yaml', '--json'], { cwd });
    expect(again.code).toBe(0);
    expect(digestOf(JSON.parse(again.stdout))).toBe(digest);
    expect(JSON.parse(again.stdout)).toEqual(spec);
    expect(JSON.parse(await read(cwd, 'flowctl.lock'))).toEqual(lock);
  });

  it('fails with exit 2 and located diagnostics, structured with --json', async () => {
    await writeFile(join(cwd, 'flows/broken.yaml'), 'name: broken\nsteps:\n  - id: a\n    tool: core/template@1\n    args: {template: "${inputs.nope}"}\n');
    const human = await runCli(['compile', 'broken'], { cwd });
    expect(human.code).toBe(2);
    expect(human.stdout).toBe('');
    expect(human.stderr).toContain('flows/broken.yaml:5:25 error unknown_input');
    const json = await runCli(['compile', 'broken', '--json'], { cwd });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({
      diagnostics: [
        expect.objectContaining({ code: 'unknown_input', file: 'flows/broken.yaml', line: 5, column: 25, field: 'steps[0].args.template', severity: 'error' }),
      ],
    });
    expect(existsSync(join(cwd, 'out/broken.flowspec.json'))).toBe(false);
  });

  it('fails with lock_mismatch when the locked contract digest differs', async () => {
    const dir = await project();
    await writeFile(
      join(dir, 'flowctl.lock'),
      JSON.stringify({ entries: [{ ref: 'core/template', version: '1.0.0', contract_digest: `sha256:${'0'.repeat(64)}` }] }),
    );
    const r = await runCli(['compile', 'hello', '--json'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).diagnostics[0]).toMatchObject({ code: 'lock_mismatch', line: 10, column: 11, field: 'steps[0].tool' });
  });

  it('reports a missing flow, a bad lock file and unknown flags', async () => {
    const missing = await runCli(['compile', 'nope'], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('flow "nope" not found (tried flows/nope.yaml, flows/nope.yml');
    const flag = await runCli(['compile', 'hello', '--chek'], { cwd });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('unknown flag --chek');
    const dir = await project();
    await writeFile(join(dir, 'flowctl.lock'), '{"entries": "no"}');
    const bad = await runCli(['compile', 'hello', '--json'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error.code).toBe('bad_lock');
  });
});

describe('flowctl emit and lint', () => {
  it('emit prints canonical YAML (a compile fixed point) or a typed TS module to stdout', async () => {
    const cwd = await project();
    const yaml = await runCli(['emit', 'hello'], { cwd });
    expect(yaml.code).toBe(0);
    expect(yaml.stdout).toBe(await read(cwd, 'flows/hello.yaml'));
    await mkdir(join(cwd, 'copy'));
    await writeFile(join(cwd, 'copy/hello.yaml'), yaml.stdout);
    const a = await runCli(['compile', 'hello', '--check'], { cwd });
    const b = await runCli(['compile', 'copy/hello.yaml', '--check'], { cwd });
    expect(b.stderr.trim().split('\n').pop()).toBe(a.stderr.trim().split('\n').pop());

    const tsOut = await runCli(['emit', 'hello', '--to', 'ts'], { cwd });
    expect(tsOut.code).toBe(0);
    expect(tsOut.stdout).toContain('export interface Inputs {');
    expect(tsOut.stdout).toContain(`export const flowDigest = "${a.stderr.trim().split('\n').pop()}" as const;`);
    expect(tsOut.stdout).toContain('export const flow = {');

    const bad = await runCli(['emit', 'hello', '--to=xml'], { cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--to must be yaml or ts');
  });

  it('lint reports style findings with exit 0, --fix rewrites, compile failures exit 2', async () => {
    const cwd = await project();
    const clean = await runCli(['lint', 'hello'], { cwd });
    expect(clean.code).toBe(0);
    expect(clean.stderr).toContain('no findings');

    await writeFile(join(cwd, 'flows/messy.yaml'), '# a comment\nsteps:\n- {id: a, tool: "core/template@1", args: {template: hi}}\nname: messy\n');
    const messy = await runCli(['lint', 'messy'], { cwd });
    expect(messy.code).toBe(0);
    expect(messy.stderr).toContain('flows/messy.yaml:1:1 warning no-output');
    expect(messy.stderr).toContain('flows/messy.yaml:1:1 warning non-canonical');

    const fixed = await runCli(['lint', 'messy', '--fix'], { cwd });
    expect(fixed.code).toBe(0);
    expect(await read(cwd, 'flows/messy.yaml')).toBe('name: messy\nsteps:\n  - id: a\n    tool: core/template@1\n    args:\n      template: hi\n');
    const after = await runCli(['lint', 'messy'], { cwd });
    expect(after.stderr).not.toContain('non-canonical');
    expect(after.stderr).toContain('no-output');

    await writeFile(join(cwd, 'flows/bad.yaml'), 'name: Bad\nsteps: []\n');
    const bad = await runCli(['lint', 'bad'], { cwd });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error bad_name');
    expect(bad.stderr).toContain('error no_steps');
  });
});
