import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/canonical.js';
import { countingServer, flowctl, project } from './cli-run-helpers.js';

type Entry = Record<string, unknown> & { event: string; seq: number; digest: string; prev: string | null; step?: string };

/** Re-link a journal after an edit, so only a replay (not the chain check) can notice the edit. */
function rechain(journal: Entry[]): void {
  let prev: string | null = null;
  for (const e of journal) {
    e.prev = prev;
    const { at: _at, digest: _digest, ...rest } = e;
    e.digest = digestOf(rest);
    prev = e.digest;
  }
}

describe('flowctl replay of a --record-journal fixture', () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof countingServer>>;
  let runId: string;

  beforeAll(async () => {
    server = await countingServer({ pong: 1 });
    dir = await project('net', 'files');
    const r = await flowctl(dir, ['run', 'net', '--yes', '--input', `url=${server.url}`, '--record-journal', 'net.json', '--json']);
    expect(r.code, r.stderr).toBe(0);
    runId = JSON.parse(r.stdout).id;
    expect(server.hits()).toBe(1);
  });
  afterAll(() => server.close());

  it('--verify passes, touches no network and never asks; it prints the output value', async () => {
    const r = await flowctl(dir, ['replay', 'net.json', '--verify']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ pong: 1 });
    expect(r.stderr).toMatch(/verified net\.json/);
    expect(r.stderr).not.toMatch(/Proceed|refusing/);
    expect(server.hits()).toBe(1);
  });

  it('hermetic replay (the default) by fixture, by run id and by "last" touches no network', async () => {
    for (const source of ['net.json', runId, 'last']) {
      const r = await flowctl(dir, ['replay', source, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const replayRun = JSON.parse(r.stdout);
      expect(replayRun.status).toBe('succeeded');
      expect(replayRun.id).not.toBe(runId);
      expect(replayRun.output).toEqual({ pong: 1 });
      const started = replayRun.journal[0];
      expect(started.replay_of.mode).toBe('hermetic');
    }
    expect(server.hits()).toBe(1);
  });

  it('--rerun re-fires the effect live (with --yes)', async () => {
    const r = await flowctl(dir, ['replay', runId, '--rerun', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).journal[0].replay_of).toEqual({ run_id: runId, mode: 'rerun' });
    expect(server.hits()).toBe(2);
  });

  it('an edited recorded output fails --verify with the structured report and exit 1', async () => {
    const fixture = JSON.parse(await readFile(join(dir, 'net.json'), 'utf8'));
    const ok = fixture.run.journal.find((e: Entry) => e.event === 'step_succeeded');
    ok.output.body = { pong: 2 };
    await writeFile(join(dir, 'edited.json'), JSON.stringify(fixture, null, 2));
    const r = await flowctl(dir, ['replay', 'edited.json', '--verify']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/code: +journal_chain_broken/);
    expect(r.stderr).toMatch(new RegExp(`seq: +${ok.seq}\\n`));
    expect(r.stderr).toMatch(/step: +get\n/);
    expect(r.stderr).toMatch(/field: +digest\n/);
    expect(r.stderr).toMatch(/expected: +sha256:[0-9a-f]{64}\n/);
    expect(r.stderr).toMatch(/actual: +sha256:[0-9a-f]{64}\n/);
    const j = await flowctl(dir, ['replay', 'edited.json', '--verify', '--json']);
    expect(j.code).toBe(1);
    const { error } = JSON.parse(j.stdout);
    expect(error.code).toBe('journal_chain_broken');
    expect(error.data).toMatchObject({ seq: ok.seq, step: 'get', field: 'digest' });
    expect(server.hits()).toBe(2);
  });

  it('an edited output with a re-linked chain diverges at that step: replay_divergence on output_digest', async () => {
    const fixture = JSON.parse(await readFile(join(dir, 'net.json'), 'utf8'));
    const journal: Entry[] = fixture.run.journal;
    const ok = journal.find((e) => e.event === 'step_succeeded') as Entry & { output: { body: unknown } };
    ok.output.body = { pong: 'forged' };
    rechain(journal);
    await writeFile(join(dir, 'forged.json'), JSON.stringify(fixture, null, 2));
    const r = await flowctl(dir, ['replay', 'forged.json', '--verify', '--json']);
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stdout);
    expect(error.code).toBe('replay_divergence');
    expect(error.data).toMatchObject({ seq: ok.seq, step: 'get', field: 'output_digest' });
    expect(error.data.expected).not.toBe(error.data.actual);
    expect(r.stderr).toMatch(/code: +replay_divergence/);
    expect(r.stderr).toMatch(/field: +output_digest/);
    // the hermetic default does not check digests: it reproduces what the journal says
    const hermetic = await flowctl(dir, ['replay', 'forged.json']);
    expect(hermetic.code, hermetic.stderr).toBe(0);
    expect(JSON.parse(hermetic.stdout)).toEqual({ pong: 'forged' });
  });

  it('a fixture of another flow is flow_digest_mismatch; a file that is no fixture is a clear error', async () => {
    const fixture = JSON.parse(await readFile(join(dir, 'net.json'), 'utf8'));
    fixture.spec.name = 'renamed';
    await writeFile(join(dir, 'other.json'), JSON.stringify(fixture));
    const r = await flowctl(dir, ['replay', 'other.json', '--verify', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'flow_digest_mismatch', data: { field: 'flow_digest' } });
    await writeFile(join(dir, 'junk.json'), '{"hello": 1}');
    const junk = await flowctl(dir, ['replay', 'junk.json', '--json']);
    expect(junk.code).toBe(2);
    expect(JSON.parse(junk.stdout).error.code).toBe('invalid_fixture');
    expect(junk.stderr).toMatch(/fixture/);
  });
});

describe('flowctl replay: usage', () => {
  it('--verify and --rerun together are a usage error (exit 2), nothing replays', async () => {
    const dir = await project('hello');
    const first = await flowctl(dir, ['run', 'hello', '--json']);
    const id = JSON.parse(first.stdout).id;
    const r = await flowctl(dir, ['replay', id, '--verify', '--rerun']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--verify and --rerun are mutually exclusive/);
    const runs = await flowctl(dir, ['runs']);
    expect(runs.stderr.trim().split('\n')).toHaveLength(1);
    // --no-rerun switches it back off
    expect((await flowctl(dir, ['replay', id, '--verify', '--rerun', '--no-rerun'])).code).toBe(0);
  });

  it('an unknown run id, an empty store and a missing argument are usage errors', async () => {
    const dir = await project('hello');
    const none = await flowctl(dir, ['replay', 'last']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no runs/);
    const unknown = await flowctl(dir, ['replay', '00000000-0000-4000-8000-000000000000', '--json']);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stdout).error.code).toBe('run_not_found');
    expect((await flowctl(dir, ['replay'])).code).toBe(2);
  });

  it('replaying a failed run reproduces the failure (exit 1); --verify of it passes (exit 0)', async () => {
    const dir = await project('fail');
    const first = await flowctl(dir, ['run', 'fail', '--json']);
    expect(first.code).toBe(1);
    const id = JSON.parse(first.stdout).id;
    const hermetic = await flowctl(dir, ['replay', id, '--json']);
    expect(hermetic.code).toBe(1);
    expect(JSON.parse(hermetic.stdout).status).toBe('failed');
    const verify = await flowctl(dir, ['replay', id, '--verify']);
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stderr).toMatch(/replayed status failed/);
  });
});
