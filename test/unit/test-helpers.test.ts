import { spawn } from 'node:child_process';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { describePostgres, dropSchema, pgQuery, uniqueSchemaName } from '../helpers/postgres.js';
import { below, prng, testSeed } from '../helpers/seeded.js';
import { FAST_CHECK_SEED } from '../helpers/setup-seed.js';
import { processAlive, waitGone, waitUntil, withGrowingLimit } from '../helpers/wait.js';

// The helpers that keep the suite independent of CPU speed (test/helpers/wait.ts, seeded.ts).
describe('waitUntil', () => {
  it('returns the first value the probe gives, once the event happened', async () => {
    let calls = 0;
    expect(await waitUntil(() => (++calls >= 3 ? `after ${calls}` : undefined), { what: 'three calls' })).toBe('after 3');
    expect(await waitUntil(async () => 0, { what: 'a falsy but defined value' })).toBe(0);
  });

  it('reports a hang with what was awaited once the cap has passed', async () => {
    await expect(waitUntil(() => false, { what: 'nothing', capMs: 30 })).rejects.toThrow(/^hang: nothing did not happen within 30 ms/);
  });
});

describe('withGrowingLimit', () => {
  it('doubles the limit until the attempt got far enough, and reports when it never did', async () => {
    const limits: number[] = [];
    expect(await withGrowingLimit(100, async (limit) => (limits.push(limit), limit >= 400 ? 'reached' : undefined))).toBe('reached');
    expect(limits).toEqual([100, 200, 400]);
    await expect(withGrowingLimit(10, async () => undefined, 3)).rejects.toThrow(/from 10 ms to 40 ms/);
  });
});

describe('processAlive and waitGone', () => {
  it('sees a running process, then waits until it is gone', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('spawn', resolve));
    expect(processAlive(child.pid!)).toBe(true);
    child.kill('SIGKILL');
    await waitGone(child.pid!);
    expect(processAlive(child.pid!)).toBe(false);
    expect(() => processAlive(0)).toThrow(/not a pid/);
  });
});

describe('seeded randomness', () => {
  it('gives the same sequence for a seed, another for another seed, and integers in range', () => {
    const a = prng(42);
    const b = prng(42);
    const seqA = Array.from({ length: 20 }, () => a());
    expect(Array.from({ length: 20 }, () => b())).toEqual(seqA);
    expect(seqA.every((x) => x >= 0 && x < 1)).toBe(true);
    const c = prng(43);
    expect(Array.from({ length: 20 }, () => c())).not.toEqual(seqA);
    const next = prng(7);
    const ints = Array.from({ length: 1000 }, () => below(next, 5));
    expect(new Set(ints)).toEqual(new Set([0, 1, 2, 3, 4]));
  });

  it('takes FLOWCTL_TEST_SEED over the fixed seed, and refuses a bad one', () => {
    expect(testSeed(5, {})).toBe(5);
    expect(testSeed(5, { FLOWCTL_TEST_SEED: '99' })).toBe(99);
    expect(() => testSeed(5, { FLOWCTL_TEST_SEED: 'soon' })).toThrow(/non-negative integer/);
  });

  it('runs every fast-check property from the fixed seed (vitest setup file)', () => {
    expect(fc.readConfigureGlobal().seed).toBe(FAST_CHECK_SEED);
    const first: number[] = [];
    fc.assert(
      fc.property(fc.integer(), (n) => void first.push(n)),
      { numRuns: 5 },
    );
    const again: number[] = [];
    fc.assert(
      fc.property(fc.integer(), (n) => void again.push(n)),
      { numRuns: 5 },
    );
    expect(again).toEqual(first);
  });
});

describePostgres('dropSchema during a run', (url) => {
  it('notes the schema in the run ledger and leaves it in place until the run is over', async () => {
    const schema = uniqueSchemaName('flowctl_ledger');
    await pgQuery(url, `create schema "${schema}"`);
    await dropSchema(url, schema);
    // Still there: another test file may be initialising storage (kysely lists every schema).
    expect(await pgQuery(url, 'select 1 from pg_namespace where nspname = $1', [schema])).toHaveLength(1);
    const ledger = inject('schemaLedger');
    const noted = readdirSync(ledger).flatMap((f) => readFileSync(join(ledger, f), 'utf8').split('\n'));
    expect(noted).toContain(`${url}\t${schema}`);
  });
});
