import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestOf } from '../src/canonical.js';
import { createEngine } from '../src/engine/engine.js';
import { createFixedClock, createSequentialIds } from '../src/engine/deterministic.js';
import { isFlowError } from '../src/errors.js';
import type { FlowSpec } from '../src/flow/types.js';
import type { Storage, StorageFlags } from '../src/ports/storage.js';
import { verifyJournal } from '../src/run/fixture.js';
import type { JournalEntry } from '../src/run/types.js';
import { boundedIteration, SUITE_TIMEOUT_MS, WAIT_MS } from './bounded.js';
import { conformanceId as id, conformanceSpec, conformanceTools, sampleJournal, sampleRun } from './conformance-fixtures.js';

export interface StorageConformanceOptions {
  /** Shown in the describe title. */
  name: string;
  /** A fresh, empty storage. The suite calls init() and dispose() itself. */
  create: () => Promise<Storage>;
  /**
   * An independent instance over the same data (a second connection, a second process's view), so
   * writes are checked through a read path the writer does not share. Default: the same instance.
   */
  reopen?: (storage: Storage) => Promise<Storage>;
  /** Capabilities to test; default: the adapter's own `flags`. */
  flags?: StorageFlags;
  /** How long a watch may take to deliver one entry (or to end) before its test fails saying so. Default 5000 ms. */
  waitMs?: number;
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(isFlowError(caught), `expected FlowError ${code}, got ${String(caught)}`).toBe(true);
  expect((caught as { code: string }).code).toBe(code);
}

async function collect(iter: AsyncIterable<JournalEntry>, limit = 1000): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  for await (const e of iter) {
    out.push(e);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * What a watch's next step should bring, for a bounded wait's message: entry n of `expected` (stored
 * before the watch began, or appended while it waited), else the watch's end (`end` says why).
 */
function watchExpects(label: string, expected: JournalEntry[], options: { appendedFrom?: number; end?: string } = {}) {
  const appendedFrom = options.appendedFrom ?? expected.length;
  return (n: number): string => {
    const entry = expected[n];
    if (!entry) return `${label} delivered ${n} entries, then did not end ${options.end ?? 'after run_finished'}`;
    const how = n >= appendedFrom ? 'appended while it waited' : 'stored before it began';
    return `${label} delivered ${n} of ${expected.length} entries: entry seq ${entry.seq} (${entry.event}), ${how}, never came`;
  };
}

/**
 * The conformance suite every Storage adapter passes (memory, fs, SQL; third-party adapters too):
 * specs, deploys, runs, the journal (append at an expected seq, conflicts, gaps, read, watch), and an
 * engine-level run and verify replay through createEngine. Writes are checked through `reopen`.
 */
export function describeStorageConformance(options: StorageConformanceOptions): void {
  const waitMs = options.waitMs ?? WAIT_MS;
  const bounded = (iter: AsyncIterable<JournalEntry>, expects: (n: number) => string) => boundedIteration(iter, expects, waitMs);
  describe(`storage conformance: ${options.name}`, { timeout: SUITE_TIMEOUT_MS }, () => {
    let storage: Storage;
    const opened: Storage[] = [];

    const open = async (s: Storage): Promise<Storage> => {
      await s.init?.();
      opened.push(s);
      return s;
    };
    const independent = async (): Promise<Storage> => (options.reopen ? open(await options.reopen(storage)) : storage);

    beforeEach(async () => {
      storage = await open(await options.create());
    });
    afterEach(async () => {
      for (const s of opened.splice(0).reverse()) await s.dispose?.();
    });

    describe('specs', () => {
      it('stores a spec by digest and reads it back independently', async () => {
        const spec = conformanceSpec(conformanceTools());
        const digest = digestOf(spec);
        await storage.specs.put(digest, spec);
        expect(await (await independent()).specs.get(digest)).toEqual(spec);
        expect(await storage.specs.get(digestOf({ other: true }))).toBeUndefined();
      });

      it('is immutable: a second put of the same digest keeps the first, and readers get copies', async () => {
        const spec = conformanceSpec(conformanceTools());
        const digest = digestOf(spec);
        await storage.specs.put(digest, spec);
        await storage.specs.put(digest, { ...spec, name: 'changed' });
        const read = (await storage.specs.get(digest))!;
        expect(read.name).toBe('conformance');
        read.name = 'mutated by caller';
        expect((await storage.specs.get(digest))!.name).toBe('conformance');
      });
    });

    describe('deploys', () => {
      it('points names at digests per front, lists them by name, and moves on redeploy', async () => {
        const a = digestOf('a');
        const b = digestOf('b');
        await storage.deploys.set('rest', 'zeta', a);
        await storage.deploys.set('rest', 'alpha', a);
        await storage.deploys.set('mcp', 'alpha', b);
        const other = await independent();
        expect(await other.deploys.list('rest')).toEqual([
          { name: 'alpha', digest: a },
          { name: 'zeta', digest: a },
        ]);
        expect(await other.deploys.get('mcp', 'alpha')).toBe(b);
        await storage.deploys.set('rest', 'alpha', b);
        expect(await other.deploys.get('rest', 'alpha')).toBe(b);
        expect(await other.deploys.get('rest', 'missing')).toBeUndefined();
        expect(await other.deploys.list('none')).toEqual([]);
      });
    });

    describe('runs', () => {
      it('creates a run once and reads it independently', async () => {
        const run = sampleRun(id(1), '2026-01-01T00:00:00.000Z');
        await storage.runs.create(run);
        expect(await (await independent()).runs.get(run.id)).toEqual(run);
        await rejectsWith(storage.runs.create(run), 'run_exists');
        expect(await storage.runs.get(id(99))).toBeUndefined();
      });

      it('updates status, finish time, output and error', async () => {
        const run = sampleRun(id(1), '2026-01-01T00:00:00.000Z');
        await storage.runs.create(run);
        await storage.runs.update(run.id, { status: 'running' });
        expect((await (await independent()).runs.get(run.id))!.status).toBe('running');
        const error = { code: 'boom', message: 'it broke', retryable: false, step: 's1' };
        await storage.runs.update(run.id, { status: 'failed', finished_at: '2026-01-01T00:00:05.000Z', error, output: { partial: [1, 2] } });
        expect(await (await independent()).runs.get(run.id)).toEqual({
          ...run,
          status: 'failed',
          finished_at: '2026-01-01T00:00:05.000Z',
          error,
          output: { partial: [1, 2] },
        });
        await rejectsWith(storage.runs.update(id(99), { status: 'running' }), 'not_found');
      });

      it('lists newest first (started_at, then id), with limit, cursor and flow name', async () => {
        await storage.runs.create(sampleRun(id(1), '2026-01-01T00:00:01.000Z', 'a'));
        await storage.runs.create(sampleRun(id(3), '2026-01-01T00:00:03.000Z', 'b'));
        await storage.runs.create(sampleRun(id(2), '2026-01-01T00:00:03.000Z', 'a'));
        await storage.runs.create(sampleRun(id(4), '2026-01-01T00:00:00.500Z', 'b'));
        const other = await independent();
        expect((await other.runs.list()).map((r) => r.id)).toEqual([id(3), id(2), id(1), id(4)]);
        expect((await other.runs.list({ limit: 2 })).map((r) => r.id)).toEqual([id(3), id(2)]);
        expect((await other.runs.list({ before: id(2) })).map((r) => r.id)).toEqual([id(1), id(4)]);
        expect((await other.runs.list({ flow_name: 'b' })).map((r) => r.id)).toEqual([id(3), id(4)]);
        expect((await other.runs.list({ before: id(3), flow_name: 'a', limit: 1 })).map((r) => r.id)).toEqual([id(2)]);
      });

      it("stores a run's inputs, lease and cancel flag, and updates the lease and the flag", async () => {
        const inputs = { to: 'a@example.com', token: 'secret:token', nested: { list: [1, 'two', null], empty: {} } };
        const lease = { owner: 'engine-a', expires_at: '2026-01-01T00:00:30.000Z', pid: 4242, host: 'host-a' };
        const run = { ...sampleRun(id(1), '2026-01-01T00:00:00.000Z'), inputs, lease };
        await storage.runs.create(run);
        expect(await (await independent()).runs.get(run.id)).toEqual(run);
        const plain = sampleRun(id(2), '2026-01-01T00:00:01.000Z');
        await storage.runs.create(plain);
        expect(await (await independent()).runs.get(plain.id)).toEqual(plain);

        const renewed = { owner: 'engine-b', expires_at: '2026-01-01T00:01:00.000Z' };
        await storage.runs.update(run.id, { status: 'running', lease: renewed });
        await storage.runs.update(run.id, { cancel_requested: true });
        // A later update of other fields (a lease heartbeat) keeps the cancel flag.
        await storage.runs.update(run.id, { lease: { ...renewed, expires_at: '2026-01-01T00:02:00.000Z' } });
        expect(await (await independent()).runs.get(run.id)).toEqual({
          ...run,
          status: 'running',
          lease: { ...renewed, expires_at: '2026-01-01T00:02:00.000Z' },
          cancel_requested: true,
        });
      });

      it('lists runs by status (the recovery sweep reads the non-terminal ones)', async () => {
        await storage.runs.create(sampleRun(id(1), '2026-01-01T00:00:01.000Z'));
        await storage.runs.create(sampleRun(id(2), '2026-01-01T00:00:02.000Z'));
        await storage.runs.create(sampleRun(id(3), '2026-01-01T00:00:03.000Z'));
        await storage.runs.update(id(2), { status: 'running' });
        await storage.runs.update(id(3), { status: 'succeeded', finished_at: '2026-01-01T00:00:04.000Z' });
        const other = await independent();
        expect((await other.runs.list({ status: ['pending', 'running'] })).map((r) => r.id)).toEqual([id(2), id(1)]);
        expect((await other.runs.list({ status: ['succeeded'] })).map((r) => r.id)).toEqual([id(3)]);
        expect(await other.runs.list({ status: [] })).toEqual([]);
      });
    });

    describe('journal', () => {
      const runId = id(7);
      beforeEach(async () => {
        await storage.runs.create(sampleRun(runId, '2026-01-01T00:00:00.000Z'));
      });

      it('appends in order and reads from a seq', async () => {
        const entries = sampleJournal(5, true);
        for (const e of entries) await storage.journal.append(runId, e);
        const other = await independent();
        expect(await other.journal.read(runId)).toEqual(entries);
        expect(await other.journal.read(runId, 3)).toEqual(entries.slice(3));
        expect(await other.journal.read(runId, 9)).toEqual([]);
        expect(() => verifyJournal({ journal: entries, flow_digest: entries[0]!.flow_digest })).not.toThrow();
      });

      it('rejects a second append at the same seq and keeps the first', async () => {
        const entries = sampleJournal(3);
        await storage.journal.append(runId, entries[0]!);
        await storage.journal.append(runId, entries[1]!);
        const fork = { ...entries[1]!, at: '2026-02-02T00:00:00.000Z' } as JournalEntry;
        await rejectsWith(storage.journal.append(runId, fork), 'journal_conflict');
        await rejectsWith((await independent()).journal.append(runId, fork), 'journal_conflict');
        expect(await (await independent()).journal.read(runId)).toEqual(entries.slice(0, 2));
      });

      it('rejects gaps', async () => {
        const entries = sampleJournal(4);
        await storage.journal.append(runId, entries[0]!);
        await rejectsWith(storage.journal.append(runId, entries[2]!), 'journal_conflict');
        await storage.journal.append(runId, entries[1]!);
        expect((await storage.journal.read(runId)).map((e) => e.seq)).toEqual([0, 1]);
      });

      it('lets exactly one of two concurrent writers take a seq', async () => {
        const entries = sampleJournal(2);
        await storage.journal.append(runId, entries[0]!);
        const other = await independent();
        const a = entries[1]!;
        const b = { ...entries[1]!, at: '2026-03-03T00:00:00.000Z' } as JournalEntry;
        const results = await Promise.allSettled([storage.journal.append(runId, a), other.journal.append(runId, b)]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(rejected.reason.code).toBe('journal_conflict');
        expect(await storage.journal.read(runId)).toHaveLength(2);
      });

      it('refuses appends to a run that does not exist', async () => {
        await rejectsWith(storage.journal.append(id(404), sampleJournal(1)[0]!), 'not_found');
      });

      it('watch yields the stored entries, then new ones, and ends at run_finished', async () => {
        const entries = sampleJournal(6, true);
        for (const e of entries.slice(0, 2)) await storage.journal.append(runId, e);
        const seen: JournalEntry[] = [];
        const writeRest = async () => {
          for (const e of entries.slice(2)) await storage.journal.append(runId, e);
        };
        let writing: Promise<void> | undefined;
        for await (const e of bounded(storage.journal.watch(runId), watchExpects('journal.watch()', entries, { appendedFrom: 2 }))) {
          seen.push(e);
          // Only once the stored entries were seen: the rest must arrive as appends.
          if (seen.length === 2) writing = writeRest();
        }
        await writing;
        expect(seen).toEqual(entries);
      });

      it('watch starts at fromSeq and ends at once on a finished journal', async () => {
        const entries = sampleJournal(4, true);
        for (const e of entries) await storage.journal.append(runId, e);
        const from2 = bounded(
          storage.journal.watch(runId, { fromSeq: 2 }),
          watchExpects('journal.watch({ fromSeq: 2 }) of a finished journal', entries.slice(2)),
        );
        expect(await collect(from2)).toEqual(entries.slice(2));
        const from10 = bounded(
          storage.journal.watch(runId, { fromSeq: 10 }),
          watchExpects('journal.watch({ fromSeq: 10 })', [], { end: 'at once on a finished journal past its last seq' }),
        );
        expect(await collect(from10)).toEqual([]);
      });

      it('watch ends when its signal aborts', async () => {
        const stored = sampleJournal(1);
        await storage.journal.append(runId, stored[0]!);
        const controller = new AbortController();
        const seen: JournalEntry[] = [];
        for await (const e of bounded(
          storage.journal.watch(runId, { signal: controller.signal }),
          watchExpects('journal.watch({ signal })', stored, { end: 'when its signal aborted' }),
        )) {
          seen.push(e);
          controller.abort();
        }
        expect(seen).toHaveLength(1);
      });

      it('applies a run patch together with its append, and not at all when the append is refused (appendUpdatesRun)', async (ctx) => {
        const flags = options.flags ?? storage.flags;
        if (!flags.appendUpdatesRun) return ctx.skip();
        const entries = sampleJournal(3, true);
        await storage.journal.append(runId, entries[0]!, undefined, { status: 'running' });
        expect((await (await independent()).runs.get(runId))?.status).toBe('running');
        await rejectsWith(storage.journal.append(runId, entries[2]!, undefined, { status: 'failed', finished_at: entries[2]!.at }), 'journal_conflict');
        expect(await (await independent()).runs.get(runId)).toMatchObject({ status: 'running' });
        expect((await (await independent()).runs.get(runId))?.finished_at).toBeUndefined();
        await storage.journal.append(runId, entries[1]!);
        const last = entries[2]!;
        await storage.journal.append(runId, last, undefined, { status: 'succeeded', finished_at: last.at, output: { n: 2 } });
        expect(await (await independent()).runs.get(runId)).toMatchObject({ status: 'succeeded', finished_at: last.at, output: { n: 2 } });
        expect(await (await independent()).journal.read(runId)).toEqual(entries);
      });

      it('watch through an independent instance sees appends from another writer (crossProcessWatch)', async (ctx) => {
        const flags = options.flags ?? storage.flags;
        if (!flags.crossProcessWatch || !options.reopen) return ctx.skip();
        const entries = sampleJournal(3, true);
        await storage.journal.append(runId, entries[0]!);
        const other = await independent();
        const seen: JournalEntry[] = [];
        let writing: Promise<void> | undefined;
        for await (const e of bounded(other.journal.watch(runId), watchExpects('journal.watch() on an independent instance', entries, { appendedFrom: 1 }))) {
          seen.push(e);
          if (seen.length === 1) {
            writing = (async () => {
              for (const x of entries.slice(1)) await storage.journal.append(runId, x);
            })();
          }
        }
        await writing;
        expect(seen).toEqual(entries);
      });
    });

    describe('artifacts', () => {
      it('stores bytes by digest with their media type', async (ctx) => {
        if (!storage.artifacts) return ctx.skip();
        const bytes = new TextEncoder().encode('png-ish bytes');
        const digest = digestOf('artifact');
        await storage.artifacts.put(digest, bytes, 'image/png');
        const got = await (await independent()).artifacts!.get(digest);
        expect(got?.mediaType).toBe('image/png');
        expect(Buffer.from(got!.bytes).toString()).toBe('png-ish bytes');
        expect(await storage.artifacts.get(digestOf('missing'))).toBeUndefined();
      });
    });

    describe('engine', () => {
      it('runs a flow through createEngine, and a verify replay reproduces it', async () => {
        const tools = conformanceTools();
        const spec: FlowSpec = conformanceSpec(tools);
        const engineStorage = await options.create();
        const engine = createEngine({ storage: engineStorage, tools, clock: createFixedClock(), ids: createSequentialIds() });
        try {
          const run = await engine.run({ spec }, { word: 'hello' });
          expect(run.status).toBe('succeeded');
          expect(run.output).toEqual({ echoed: 'hello' });
          expect(run.journal.map((e) => e.event)).toEqual([
            'run_started',
            'step_started',
            'step_succeeded',
            'step_started',
            'step_failed',
            'step_started',
            'step_succeeded',
            'step_skipped',
            'run_finished',
          ]);
          const reader = options.reopen ? await open(await options.reopen(engineStorage)) : engineStorage;
          const stored = await reader.journal.read(run.id);
          expect(stored).toEqual(run.journal);
          expect(() => verifyJournal(run)).not.toThrow();
          expect((await reader.runs.get(run.id))!.status).toBe('succeeded');

          const replay = await engine.replay({ run_id: run.id }, { mode: 'verify' });
          expect(replay.id).not.toBe(run.id);
          expect(replay.status).toBe('succeeded');
          expect(replay.output).toEqual(run.output);
          const started = replay.journal[0]!;
          expect(started.event === 'run_started' && started.replay_of).toEqual({ run_id: run.id, mode: 'verify' });
          // Apart from run_started (which names the original run), every entry matches field for field.
          expect(replay.journal.slice(1).map((e) => [e.event, 'output_digest' in e ? e.output_digest : null])).toEqual(
            run.journal.slice(1).map((e) => [e.event, 'output_digest' in e ? e.output_digest : null]),
          );
          expect((await engine.listRuns()).map((r) => r.id)).toEqual([replay.id, run.id]);
        } finally {
          await engine.dispose();
        }
      });

      it('rejects inputs that break the contract before any run exists', async () => {
        const tools = conformanceTools();
        const engine = createEngine({ storage: await options.create(), tools, clock: createFixedClock(), ids: createSequentialIds() });
        try {
          await rejectsWith(engine.run({ spec: conformanceSpec(tools) }, { word: 42, extra: true }), 'invalid_inputs');
          expect(await engine.listRuns()).toEqual([]);
        } finally {
          await engine.dispose();
        }
      });
    });
  });
}
