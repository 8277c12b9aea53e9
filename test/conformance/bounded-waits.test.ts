import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { boundedIteration, ConformanceWaitError, until, within } from '../../testing/bounded.js';

const ROOT = resolve(import.meta.dirname, '../..');

interface JsonReport {
  testResults: { assertionResults: { title: string; status: string; duration?: number; failureMessages: string[] }[] }[];
}

/** Runs the storage suite's watch case on an adapter whose watch never yields, in a child vitest. */
async function runBrokenWatchSuite(): Promise<JsonReport> {
  const dir = await mkdtemp(join(tmpdir(), 'flowctl-bounded-'));
  try {
    const out = join(dir, 'report.json');
    const args = [
      'node_modules/vitest/vitest.mjs',
      'run',
      '--config',
      'test/conformance/fixtures/vitest.config.ts',
      '--testNamePattern',
      'watch yields the stored entries',
      '--reporter=json',
      `--outputFile=${out}`,
    ];
    // The child fails (its test does): the report is what matters.
    await new Promise<void>((done) => execFile(process.execPath, args, { cwd: ROOT }, () => done()));
    return JSON.parse(await readFile(out, 'utf8')) as JsonReport;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('conformance suites fail with messages, within their bound', () => {
  it('the storage suite fails a watch that never yields, naming the entry it waited for (waited 5 s)', async () => {
    const report = await runBrokenWatchSuite();
    const results = report.testResults.flatMap((f) => f.assertionResults);
    const watchCase = results.find((r) => r.title === 'watch yields the stored entries, then new ones, and ends at run_finished');
    expect(watchCase?.status).toBe('failed');
    expect(watchCase?.failureMessages.join('\n')).toContain(
      'journal.watch() delivered 0 of 6 entries: entry seq 0 (run_started), stored before it began, never came (waited 5 s)',
    );
    // Its bound, not the runner's test timeout, ended it.
    expect(watchCase?.duration ?? 0).toBeLessThan(15_000);
  });

  it('within, until and boundedIteration name what they waited for', async () => {
    await expect(within(new Promise(() => {}), 'the thing did not come', 50)).rejects.toThrow('the thing did not come (waited 0.1 s)');
    await expect(within(Promise.resolve(3), 'unused', 50)).resolves.toBe(3);
    await expect(until(() => false, 'the flag', 60)).rejects.toBeInstanceOf(ConformanceWaitError);
    const stuckAfterOne: AsyncIterable<number> = {
      [Symbol.asyncIterator]: () => {
        let n = 0;
        return { next: () => (n++ === 0 ? Promise.resolve({ done: false, value: 1 }) : new Promise(() => {})) };
      },
    };
    const seen: number[] = [];
    const iterate = async () => {
      for await (const v of boundedIteration(stuckAfterOne, (n) => `item ${n} never came`, 50)) seen.push(v);
    };
    await expect(iterate()).rejects.toThrow('item 1 never came (waited 0.1 s)');
    expect(seen).toEqual([1]);
  });
});
