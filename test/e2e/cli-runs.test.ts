import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flowctl, project } from './cli-run-helpers.js';

const PACKAGE = JSON.parse(await readFile(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };

/** The pid of a process that has exited and been reaped: a writer SIGKILLed before its rename. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((r) => child.on('close', r));
  return child.pid!;
}

describe('flowctl runs --json and --version', () => {
  it('runs --json prints one array of run records, newest first, keys sorted, pretty; inspect agrees on every status', async () => {
    const dir = await project('hello', 'fail');
    const ids: string[] = [];
    for (const flow of ['hello', 'fail', 'hello']) ids.push(JSON.parse((await flowctl(dir, ['run', flow, '--json'])).stdout).id);
    const r = await flowctl(dir, ['runs', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const list = JSON.parse(r.stdout) as Record<string, unknown>[];
    expect(list.map((x) => x.id)).toEqual([...ids].reverse());
    expect(list.map((x) => [x.flow_name, x.status])).toEqual([
      ['hello', 'succeeded'],
      ['fail', 'failed'],
      ['hello', 'succeeded'],
    ]);
    // Pretty, keys sorted at every depth: re-printing with sorted keys gives the same bytes.
    const sortKeys = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sortKeys)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v)
                .sort(([a], [b]) => (a < b ? -1 : 1))
                .map(([k, x]) => [k, sortKeys(x)]),
            )
          : v;
    expect(r.stdout).toBe(`${JSON.stringify(sortKeys(list), null, 2)}\n`);
    expect(list[0]).toMatchObject({ output: 'Hello, world!', finished_at: expect.any(String), flow_digest: expect.stringMatching(/^sha256:/) });
    for (const rec of list) {
      const run = JSON.parse((await flowctl(dir, ['inspect', String(rec.id), '--json'])).stdout);
      expect(run.status).toBe(rec.status);
    }
    const last = await flowctl(dir, ['runs', 'last', '--json']);
    expect(last.code).toBe(0);
    expect(JSON.parse(last.stdout)).toEqual([list[0]]);
  });

  it('runs --json in a folder without runs prints [] and creates no store; runs last --json prints [] and exits 1', async () => {
    const dir = await project();
    const r = await flowctl(dir, ['runs', '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('[]\n');
    const last = await flowctl(dir, ['runs', 'last', '--json']);
    expect(last.code).toBe(1);
    expect(last.stdout).toBe('[]\n');
    expect(existsSync(join(dir, '.flowctl'))).toBe(false);
  });

  it('--version prints the package version on stdout', async () => {
    const dir = await project();
    for (const flag of ['--version', '-V']) {
      const r = await flowctl(dir, [flag]);
      expect(r.code, flag).toBe(0);
      expect(r.stdout).toBe(`${PACKAGE.version}\n`);
      expect(r.stderr).toBe('');
    }
  });
});

describe('a run killed between its last journal append and the header update (issue 12, defect 9)', () => {
  it('runs, runs --json and inspect all report what the journal says, and the header is repaired', async () => {
    const dir = await project('hello');
    const run = JSON.parse((await flowctl(dir, ['run', 'hello', '--json', '--input', 'who=Kim'])).stdout);
    const headerFile = join(dir, '.flowctl', 'runs', run.id, 'run.json');
    const header = JSON.parse(await readFile(headerFile, 'utf8'));
    expect(header.status).toBe('succeeded');
    // Exactly the state a SIGKILL after appending run_finished leaves: the header still says running.
    const stale = { ...header, status: 'running' };
    delete stale.finished_at;
    delete stale.output;
    await writeFile(headerFile, `${JSON.stringify(stale)}\n`);
    const journal = (await readFile(join(dir, '.flowctl', 'runs', run.id, 'journal.jsonl'), 'utf8')).trim().split('\n');
    expect(JSON.parse(journal.at(-1)!).event).toBe('run_finished');

    const human = await flowctl(dir, ['runs']);
    expect(human.stderr.split(/\s+/).slice(0, 2)).toEqual([run.id, 'succeeded']);
    const listed = JSON.parse((await flowctl(dir, ['runs', '--json'])).stdout);
    const inspected = JSON.parse((await flowctl(dir, ['inspect', run.id, '--json'])).stdout);
    expect(listed[0]).toMatchObject({ id: run.id, status: 'succeeded', finished_at: run.finished_at, output: 'Hello, Kim!' });
    expect(inspected).toMatchObject({ status: 'succeeded', finished_at: run.finished_at, output: 'Hello, Kim!' });
    expect(JSON.parse(await readFile(headerFile, 'utf8'))).toEqual(header);
    const verify = await flowctl(dir, ['replay', run.id, '--verify']);
    expect(verify.code, verify.stderr).toBe(0);
  });
});

describe('temp files of writers killed before their rename (issue 12, defect 10)', () => {
  it('the next flowctl that opens the store removes them; the next fs/write into out/ removes those there', async () => {
    const dir = await project('files');
    const run = JSON.parse((await flowctl(dir, ['run', 'files', '--yes', '--json'])).stdout);
    const dead = await deadPid();
    const runDir = join(dir, '.flowctl', 'runs', run.id);
    await writeFile(join(runDir, `.tmp-${dead}-8-run.json`), '{"half":');
    await writeFile(join(dir, '.flowctl', 'specs', `.tmp-${dead}-9-spec.json`), '{');
    await writeFile(join(dir, 'out', `.greeting.txt.${dead}.8.tmp`), 'hal');

    const list = await flowctl(dir, ['runs']);
    expect(list.code, list.stderr).toBe(0);
    expect((await readdir(runDir)).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    expect((await readdir(join(dir, '.flowctl', 'specs'))).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    expect(await readdir(join(dir, 'out'))).toContain(`.greeting.txt.${dead}.8.tmp`);

    const again = await flowctl(dir, ['run', 'files', '--yes']);
    expect(again.code, again.stderr).toBe(0);
    expect(await readdir(join(dir, 'out'))).toEqual(['greeting.txt']);
  });
});
