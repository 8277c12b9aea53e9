import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flowctl, project } from './cli-run-helpers.js';

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const RETRY_FLOW = `name: flaky
inputs:
  url:
    type: string
steps:
  - id: prep
    tool: core/template@1
    args:
      template: ready
  - id: call
    tool: http/request@1
    retry:
      max_attempts: 2
      backoff_ms: 1
    args:
      url: \${inputs.url}
  - id: never
    tool: core/template@1
    args:
      template: unreachable
`;

describe('flowctl inspect', () => {
  it('shows the timeline (step, tool, status, attempts, duration, effects), then the output', async () => {
    const dir = await project('files');
    const r = await flowctl(dir, ['run', 'files', '--yes', '--json', '--input', 'text=insp']);
    const run = JSON.parse(r.stdout);
    const i = await flowctl(dir, ['inspect', run.id]);
    expect(i.code, i.stderr).toBe(0);
    expect(i.stdout).toBe('');
    const lines = i.stderr.split('\n');
    expect(lines[0]).toBe(`run ${run.id}  files  succeeded`);
    expect(lines).toContain(`flow ${run.flow_digest}`);
    expect(i.stderr).toMatch(/STEP +TOOL +STATUS +ATTEMPTS +DURATION/);
    expect(i.stderr).toMatch(/\npre +core\/template@1\.0\.0 +succeeded +1 +\d+ ms/);
    expect(i.stderr).toMatch(/\nsave +fs\/write@1\.0\.0 +succeeded +1 +\d+ ms\n {4}effect: fs out\/greeting\.txt\n/);
    expect(i.stderr).toMatch(/output:\n\{\n {2}"read": "pre insp",\n {2}"written": "out\/greeting\.txt"\n\}/);
  });

  it('shows attempts, the error of each attempt and the run error of a failed run; "last" is the newest run', async () => {
    const dir = await project();
    await writeFile(join(dir, 'flows', 'flaky.yaml'), RETRY_FLOW);
    const url = `http://127.0.0.1:${await closedPort()}/`;
    const r = await flowctl(dir, ['run', 'flaky', '--yes', '--input', `url=${url}`]);
    expect(r.code).toBe(1);
    const i = await flowctl(dir, ['inspect', 'last']);
    expect(i.code, i.stderr).toBe(0);
    expect(i.stderr).toMatch(/ flaky {2}failed\n/);
    expect(i.stderr).toMatch(/\ncall +http\/request@1\.0\.0 +failed +2 /);
    expect(i.stderr).toMatch(/error \(attempt 1\): http_network: /);
    expect(i.stderr).toMatch(/error \(attempt 2\): http_network: /);
    expect(i.stderr).toMatch(/\nerror at step call: http_network: /);
    expect(i.stderr).not.toMatch(/\nnever /);
    expect(i.stderr).not.toMatch(/\noutput:/);
  });

  it('--step shows one step in full: resolved input, digests, output, attempts', async () => {
    const dir = await project('files');
    const r = await flowctl(dir, ['run', 'files', '--yes', '--json', '--input', 'text=step']);
    const run = JSON.parse(r.stdout);
    const started = run.journal.find((e: { event: string; step?: string }) => e.event === 'step_started' && e.step === 'save');
    const done = run.journal.find((e: { event: string; step?: string }) => e.event === 'step_succeeded' && e.step === 'save');
    const i = await flowctl(dir, ['inspect', run.id, '--step', 'save']);
    expect(i.code, i.stderr).toBe(0);
    expect(i.stderr).toContain('step save  fs/write@1.0.0  succeeded');
    expect(i.stderr).toMatch(/attempt 1: succeeded \(\d+ ms\) via in-process/);
    expect(i.stderr).toContain(`input digest:  ${started.input_digest}`);
    expect(i.stderr).toContain('"content": "pre step"');
    expect(i.stderr).toContain(`output digest: ${done.output_digest}`);
    expect(i.stderr).toMatch(/effect: fs out\/greeting\.txt \(key [^)]+\)/);
    const j = await flowctl(dir, ['inspect', run.id, '--step=save', '--json']);
    const view = JSON.parse(j.stdout);
    expect(view).toMatchObject({ step: 'save', tool: 'fs/write@1.0.0', status: 'succeeded' });
    expect(view.attempts).toHaveLength(1);
    expect(view.attempts[0]).toMatchObject({
      attempt: 1,
      input: { path: 'out/greeting.txt', content: 'pre step' },
      input_digest: started.input_digest,
      output_digest: done.output_digest,
    });
  });

  it('--json prints the stored Run exactly as run --json did', async () => {
    const dir = await project('hello');
    const r = await flowctl(dir, ['run', 'hello', '--json']);
    const i = await flowctl(dir, ['inspect', JSON.parse(r.stdout).id, '--json']);
    expect(i.code).toBe(0);
    expect(i.stdout).toBe(r.stdout);
  });

  it('an unknown run or step is exit 2 with a clear message', async () => {
    const dir = await project('hello');
    const none = await flowctl(dir, ['inspect', 'last']);
    expect(none.code).toBe(2);
    const r = await flowctl(dir, ['run', 'hello', '--json']);
    const id = JSON.parse(r.stdout).id;
    const missing = await flowctl(dir, ['inspect', 'f0000000-0000-4000-8000-000000000000']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/run "f0000000-0000-4000-8000-000000000000" not found/);
    const bad = await flowctl(dir, ['inspect', '../../etc']);
    expect(bad.code).toBe(2);
    const step = await flowctl(dir, ['inspect', id, '--step', 'nope', '--json']);
    expect(step.code).toBe(2);
    expect(JSON.parse(step.stdout).error).toMatchObject({ code: 'step_not_found', data: { known: ['greet'] } });
    expect((await flowctl(dir, ['inspect', id, '--step'])).code).toBe(2);
  });
});

describe('flowctl runs', () => {
  it('lists run ids newest first with status and flow name; "runs last" prints exactly the newest id', async () => {
    const dir = await project('hello', 'fail');
    const ids: string[] = [];
    for (const flow of ['hello', 'fail', 'hello']) {
      const r = await flowctl(dir, ['run', flow, '--json']);
      ids.push(JSON.parse(r.stdout).id);
    }
    const list = await flowctl(dir, ['runs']);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe('');
    const rows = list.stderr.trim().split('\n');
    expect(rows.map((l) => l.split(/\s+/).slice(0, 3))).toEqual([
      [ids[2], 'succeeded', 'hello'],
      [ids[1], 'failed', 'fail'],
      [ids[0], 'succeeded', 'hello'],
    ]);
    const last = await flowctl(dir, ['runs', 'last']);
    expect(last.code).toBe(0);
    expect(last.stdout).toBe(`${ids[2]}\n`);
    expect(last.stdout.trim().split('\n')).toHaveLength(1);
    expect(last.stderr).toBe('');
  });

  it('in a folder without runs: "runs" says so, "runs last" prints nothing and exits 1; no store is created', async () => {
    const dir = await project();
    const list = await flowctl(dir, ['runs']);
    expect(list.code).toBe(0);
    expect(list.stderr).toMatch(/no runs/);
    const last = await flowctl(dir, ['runs', 'last']);
    expect(last.code).toBe(1);
    expect(last.stdout).toBe('');
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(dir, '.flowctl'))).toBe(false);
    expect((await flowctl(dir, ['runs', 'first'])).code).toBe(2);
    expect((await flowctl(dir, ['runs', '--limit'])).code).toBe(2);
  });
});
