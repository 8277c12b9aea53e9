import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flowctl, project, withoutOwnIdsAndTimes } from './cli-run-helpers.js';

describe('flowctl run: inputs', () => {
  it('prints the output value on stdout (a string as is) and progress on stderr', async () => {
    const dir = await project('hello');
    const r = await flowctl(dir, ['run', 'hello']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Hello, world!\n');
    expect(r.stderr).toMatch(/flowctl: \[1\/1\] greet core\/template@1\.0\.0 running/);
    expect(r.stderr).toMatch(/flowctl: run [0-9a-f-]{36} succeeded \(hello\)/);
  });

  it('--input parses JSON for non-string inputs; a string input takes the raw text', async () => {
    const dir = await project('echo');
    const r = await flowctl(dir, [
      'run',
      'echo',
      '--yes',
      '--input',
      'name=Ada',
      '--input',
      'n=42',
      '--input',
      'on=true',
      '--input',
      'tags=["a",1]',
      '--input',
      'obj={"k":{"deep":null}}',
      '--input',
      'text="42"',
    ]);
    expect(r.code, r.stderr).toBe(0);
    // `text` is declared string: its value is the raw text, quotes included (docs/cli.md, "--input").
    expect(JSON.parse(r.stdout)).toEqual({ name: 'Ada', n: 42, on: true, tags: ['a', 1], obj: { k: { deep: null } }, text: '"42"' });
  });

  it('a JSON-looking value that is not JSON stays a string; a value may contain =', async () => {
    const dir = await project('echo');
    const r = await flowctl(dir, ['run', 'echo', '--input', 'name={not json', '--input=text=a=b=c']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: '{not json', text: 'a=b=c' });
  });

  it('a wrongly typed --input is rejected before anything runs (exit 2, every issue named)', async () => {
    const dir = await project('echo');
    const r = await flowctl(dir, ['run', 'echo', '--input', 'n=abc', '--input', 'on=maybe', '--input', 'nope=1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/n must be number|n .*number/);
    expect(r.stderr).toMatch(/on .*boolean/);
    expect(r.stderr).toMatch(/nope is not a declared input/);
    expect(existsSync(join(dir, '.flowctl', 'runs')) ? await readdir(join(dir, '.flowctl', 'runs')) : []).toEqual([]);
    const j = await flowctl(dir, ['run', 'echo', '--input', 'n=abc', '--json']);
    expect(JSON.parse(j.stdout).error.code).toBe('invalid_inputs');
  });

  it('--input-file (JSON or YAML) is merged below the --input pairs; a later file wins', async () => {
    const dir = await project('echo');
    await writeFile(join(dir, 'a.json'), JSON.stringify({ name: 'from-json', n: 1, text: 'json' }));
    await writeFile(join(dir, 'b.yaml'), 'n: 2\ntags: [x, y]\n');
    const r = await flowctl(dir, ['run', 'echo', '--input', 'n=3', '--input-file', 'a.json', '--input-file=b.yaml']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'from-json', n: 3, tags: ['x', 'y'], text: 'json' });
    const fileOnly = await flowctl(dir, ['run', 'echo', '--input-file', 'b.yaml', '--input-file', 'a.json']);
    expect(JSON.parse(fileOnly.stdout)).toMatchObject({ n: 1, tags: ['x', 'y'] });
  });

  it('a missing or malformed --input-file is a clear error, exit 2', async () => {
    const dir = await project('echo');
    await writeFile(join(dir, 'list.yaml'), '- 1\n');
    const missing = await flowctl(dir, ['run', 'echo', '--input-file', 'nope.json']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read --input-file nope\.json/);
    const list = await flowctl(dir, ['run', 'echo', '--input-file', 'list.yaml', '--json']);
    expect(list.code).toBe(2);
    expect(JSON.parse(list.stdout).error.code).toBe('input_file_invalid');
  });
});

describe('flowctl run: argument rules', () => {
  it('--no-flag turns a switch off: --yes --no-yes asks again (and refuses without a terminal)', async () => {
    const dir = await project('files', 'hello');
    const r = await flowctl(dir, ['run', 'files', '--yes', '--no-yes']);
    expect(r.code).toBe(3);
    expect(existsSync(join(dir, 'out', 'greeting.txt'))).toBe(false);
    const json = await flowctl(dir, ['run', 'hello', '--json', '--no-json']);
    expect(json.code).toBe(0);
    expect(json.stdout).toBe('Hello, world!\n');
  });

  it('--key=value binds like --key value, for every value flag of run', async () => {
    const dir = await project('files');
    const r = await flowctl(dir, ['run', 'files', '--yes', '--input=text=eq', '--record-journal=j/eq.json', '--sandbox=subprocess', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout);
    expect(run.output).toEqual({ written: 'out/greeting.txt', read: 'pre eq' });
    expect(existsSync(join(dir, 'j', 'eq.json'))).toBe(true);
    expect(run.journal.filter((e: { event: string }) => e.event === 'step_started').map((e: { provider: string }) => e.provider)).toEqual([
      'in-process',
      'subprocess',
      'subprocess',
    ]);
  });

  it('-- ends flag parsing: what follows is positional', async () => {
    const dir = await project('hello');
    const ok = await flowctl(dir, ['run', '--input', 'who=dash', '--', 'hello']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('Hello, dash!\n');
    const extra = await flowctl(dir, ['run', 'hello', '--', '--json']);
    expect(extra.code).toBe(2);
    expect(extra.stdout).toBe('');
    expect(extra.stderr).toMatch(/run takes one <flow>/);
  });

  it('an unknown flag, a missing flow and an unknown flow are usage errors (exit 2)', async () => {
    const dir = await project('hello');
    const unknown = await flowctl(dir, ['run', 'hello', '--frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown flag --frobnicate/);
    expect((await flowctl(dir, ['run'])).code).toBe(2);
    const missing = await flowctl(dir, ['run', 'nosuch']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/flow "nosuch" not found/);
  });

  it('a flow that does not compile is exit 2 with its diagnostics, and no run is created', async () => {
    const dir = await project();
    await writeFile(join(dir, 'flows', 'bad.yaml'), 'name: bad\nsteps:\n  - id: a\n    tool: core/nope@1\n');
    const r = await flowctl(dir, ['run', 'bad', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/flows\/bad\.yaml:4:\d+/);
    const { error } = JSON.parse(r.stdout);
    expect(error.code).toBe('compile_failed');
    expect(error.data.diagnostics[0]).toMatchObject({ file: 'flows/bad.yaml', line: 4 });
    expect(existsSync(join(dir, '.flowctl'))).toBe(false);
  });
});

describe('flowctl run: results', () => {
  it('a failed run exits 1 after writing its result: the Run on stdout, the fixture, the store', async () => {
    const dir = await project('fail');
    const r = await flowctl(dir, ['run', 'fail', '--json', '--record-journal', 'fail.json']);
    expect(r.code).toBe(1);
    const run = JSON.parse(r.stdout);
    expect(run.status).toBe('failed');
    expect(run.output).toBeUndefined();
    const failures = run.journal.filter((e: { event: string }) => e.event === 'step_failed');
    expect(failures.map((e: { attempt: number; will_retry: boolean }) => [e.attempt, e.will_retry])).toEqual([[1, false]]);
    expect(r.stderr).toMatch(/run [0-9a-f-]{36} failed \(fail\): step check: assertion_failed/);
    const fixture = JSON.parse(await readFile(join(dir, 'fail.json'), 'utf8'));
    expect(fixture.format).toBe('flowctl-journal/1');
    expect(fixture.run.id).toBe(run.id);
    expect(fixture.run.status).toBe('failed');
    const last = await flowctl(dir, ['runs', 'last']);
    expect(last.stdout).toBe(`${run.id}\n`);
    // without --json: nothing on stdout (there is no output value), the error on stderr
    const plain = await flowctl(dir, ['run', 'fail']);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toMatch(/check failed: assertion_failed/);
  });

  it('--json is byte-identical across two runs of a deterministic flow, apart from the run id and times', async () => {
    const dir = await project('files');
    const a = await flowctl(dir, ['run', 'files', '--yes', '--json', '--input', 'text=same']);
    const b = await flowctl(dir, ['run', 'files', '--yes', '--json', '--input', 'text=same']);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const ra = JSON.parse(a.stdout);
    const rb = JSON.parse(b.stdout);
    expect(ra.id).not.toBe(rb.id);
    expect(Object.keys(ra)).toEqual(['finished_at', 'flow_digest', 'id', 'journal', 'output', 'started_at', 'status']);
    expect(a.stdout).toMatch(/^\{\n {2}"finished_at"/); // pretty, sorted keys
    expect(withoutOwnIdsAndTimes(a.stdout, ra.id)).toBe(withoutOwnIdsAndTimes(b.stdout, rb.id));
    // and a different input really changes it (the comparison can fail)
    const c = await flowctl(dir, ['run', 'files', '--yes', '--json', '--input', 'text=other']);
    const rc = JSON.parse(c.stdout);
    expect(withoutOwnIdsAndTimes(c.stdout, rc.id)).not.toBe(withoutOwnIdsAndTimes(a.stdout, ra.id));
  });

  it('--dry prints the resolved steps and outward effects, runs nothing, writes nothing and never asks', async () => {
    const dir = await project('files');
    const r = await flowctl(dir, ['run', 'files', '--dry', '--input', 'text=x']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/2\. save: fs\/write@1\.0\.0 \[fs\]/);
    expect(r.stderr).toMatch(/file writes: +out\/greeting\.txt/);
    expect(r.stderr).not.toMatch(/Proceed|refusing/);
    expect(existsSync(join(dir, 'out'))).toBe(false);
    expect(existsSync(join(dir, '.flowctl'))).toBe(false);
    const j = await flowctl(dir, ['run', 'files', '--dry', '--json']);
    const plan = JSON.parse(j.stdout);
    expect(plan.flow).toBe('files');
    expect(plan.inputs).toEqual({ text: 'hi' });
    expect(plan.steps.map((s: { id: string; tool: string }) => `${s.id} ${s.tool}`)).toEqual([
      'pre core/template@1.0.0',
      'save fs/write@1.0.0',
      'back fs/read@1.0.0',
    ]);
    expect(plan.effects).toMatchObject({ outward: true, fs_writes: ['out/greeting.txt'], net_hosts: [], browser: false });
    // inputs are still checked
    expect((await flowctl(dir, ['run', 'files', '--dry', '--input', 'bogus=1'])).code).toBe(2);
    // and so is the sandbox name
    const badBox = await flowctl(dir, ['run', 'files', '--dry', '--sandbox', 'nope']);
    expect(badBox.code).toBe(2);
    expect(badBox.stderr).toMatch(/known providers: subprocess/);
  });

  it('--record-journal writes a fixture that verifies, and runs are stored in .flowctl/ of the cwd', async () => {
    const dir = await project('hello');
    const r = await flowctl(dir, ['run', 'hello', '--record-journal', 'fx/hello.json', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const id = JSON.parse(r.stdout).id;
    expect(existsSync(join(dir, '.flowctl', 'runs', id, 'journal.jsonl'))).toBe(true);
    const v = await flowctl(dir, ['replay', 'fx/hello.json', '--verify']);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toBe('Hello, world!\n');
    // a fixture that cannot be written: the result is still printed, the exit says something failed
    const blocked = await flowctl(dir, ['run', 'hello', '--record-journal', 'flows/hello.yaml/x.json']);
    expect(blocked.code).toBe(1);
    expect(blocked.stdout).toBe('Hello, world!\n');
    expect(blocked.stderr).toMatch(/cannot write --record-journal flows\/hello\.yaml\/x\.json/);
  });
});

describe('flowctl run --sandbox', () => {
  it('subprocess runs fs tools inside the sandbox root, never the project folder, and the journal says so', async () => {
    const dir = await project('files');
    const r = await flowctl(dir, ['run', 'files', '--yes', '--sandbox', 'subprocess', '--json', '--input', 'text=boxed']);
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout);
    // fs/read in the same run read back what fs/write wrote: the file existed, in the sandbox root
    expect(run.output).toEqual({ written: 'out/greeting.txt', read: 'pre boxed' });
    expect(existsSync(join(dir, 'out'))).toBe(false);
    const started = run.journal.filter((e: { event: string }) => e.event === 'step_started');
    expect(Object.fromEntries(started.map((e: { step: string; provider: string }) => [e.step, e.provider]))).toEqual({
      pre: 'in-process',
      save: 'subprocess',
      back: 'subprocess',
    });
    const effects = run.journal.filter((e: { event: string }) => e.event === 'effect_recorded');
    expect(effects.map((e: { effect: { kind: string; target: string } }) => e.effect)).toContainEqual(
      expect.objectContaining({ kind: 'fs', target: 'out/greeting.txt' }),
    );
  });

  it('FLOWCTL_SANDBOX picks the provider; --sandbox overrides it; an unknown one lists the known ones (exit 2)', async () => {
    const dir = await project('files');
    const env = await flowctl(dir, ['run', 'files', '--yes', '--json'], { env: { FLOWCTL_SANDBOX: 'subprocess' } });
    expect(env.code, env.stderr).toBe(0);
    expect(existsSync(join(dir, 'out'))).toBe(false);
    expect(JSON.parse(env.stdout).journal.some((e: { provider?: string }) => e.provider === 'subprocess')).toBe(true);

    const badEnv = await flowctl(dir, ['run', 'files', '--yes'], { env: { FLOWCTL_SANDBOX: 'nope' } });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toMatch(/unknown sandbox provider "nope"; known providers: subprocess/);

    const override = await flowctl(dir, ['run', 'files', '--yes', '--sandbox', 'subprocess'], { env: { FLOWCTL_SANDBOX: 'nope' } });
    expect(override.code, override.stderr).toBe(0);

    const badFlag = await flowctl(dir, ['run', 'files', '--yes', '--sandbox', 'cloud-x', '--json']);
    expect(badFlag.code).toBe(2);
    expect(JSON.parse(badFlag.stdout).error).toMatchObject({ code: 'unknown_sandbox', data: { known: ['subprocess'] } });
    // nothing ran
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });
});

describe('flowctl run: cancel', () => {
  it('SIGTERM during a step cancels the run: the journal ends with run_finished canceled, exit 1', async () => {
    const { spawn } = await import('node:child_process');
    const { FLOWCTL_BIN } = await import('../helpers/cli.js');
    const dir = await project();
    await writeFile(
      join(dir, 'flows', 'slow.yaml'),
      'name: slow\nsteps:\n  - id: wait\n    tool: shell/exec@1\n    args:\n      command: sleep\n      args: ["30"]\n',
    );
    const child = spawn(process.execPath, [FLOWCTL_BIN, 'run', 'slow', '--yes'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const bound = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await new Promise<void>((resolveStarted) => {
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        if (stderr.includes('wait shell/exec@1.0.0 running')) resolveStarted();
      });
      child.on('close', () => resolveStarted());
    });
    child.kill('SIGTERM');
    const code = await exited;
    clearTimeout(bound);
    expect(code, stderr).toBe(1);
    expect(stderr).toMatch(/SIGTERM: canceling the run/);
    const last = await flowctl(dir, ['inspect', 'last', '--json']);
    const run = JSON.parse(last.stdout);
    expect(run.status).toBe('canceled');
    expect(run.journal.at(-1).event).toBe('run_finished');
  });
});

describe('flowctl run with installed pack tools', () => {
  it('a flow calls a composite tool from .flowctl/registry; its outward steps are confirmed like any; runs last names the outer run', async () => {
    const dir = await project('files');
    await writeFile(
      join(dir, 'tool.json'),
      JSON.stringify({ ref: 'demo/save', version: '1.0.0', description: 'writes a greeting', implementation: { flow: 'files' } }),
    );
    await writeFile(
      join(dir, 'flows', 'uses.yaml'),
      'name: uses\nsteps:\n  - id: call\n    tool: demo/save@1\n    args:\n      text: packed\noutput: ${steps.call.output}\n',
    );
    for (const args of [
      ['pack', 'init', '--version', '1.0.0'],
      ['pack', 'add', '--body', 'flows/files.yaml'],
      ['pack', 'add', '--body', 'tool.json'],
      ['pack', 'publish'],
    ]) {
      const r = await flowctl(dir, args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
    const refused = await flowctl(dir, ['run', 'uses']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/step call \(demo\/save@1\.0\.0\): fs/);
    expect(existsSync(join(dir, 'out'))).toBe(false);

    const r = await flowctl(dir, ['run', 'uses', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout);
    expect(run.output).toEqual({ written: 'out/greeting.txt', read: 'pre packed' });
    expect(await readFile(join(dir, 'out', 'greeting.txt'), 'utf8')).toBe('pre packed');
    expect((await flowctl(dir, ['runs', 'last'])).stdout).toBe(`${run.id}\n`);
  });
});
