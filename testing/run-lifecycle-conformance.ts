import { describe, expect, it } from 'vitest';
import type { Digest } from '../src/canonical.js';
import { createEngine } from '../src/engine/engine.js';
import type { Engine } from '../src/engine/types.js';
import type { FlowSpec } from '../src/flow/types.js';
import type { Logger } from '../src/ports/clock.js';
import type { RunRecord, Storage } from '../src/ports/storage.js';
import { verifyJournal } from '../src/run/fixture.js';
import type { JournalEntry } from '../src/run/types.js';
import { contractDigest, defineTool } from '../src/tools/contract.js';
import { createToolRegistry } from '../src/tools/registry.js';
import type { ToolContract, ToolRegistry } from '../src/tools/types.js';
import { boundedIteration, SUITE_TIMEOUT_MS, WAIT_MS, within } from './bounded.js';

/**
 * Runs by id over a store shared by engine instances (docs/journal.md, "Runs by id, leases and
 * recovery"): instance A prepares and B executes; A cancels what B executes; an executor that stops
 * renewing its lease is recovered by another instance as `worker_lost`, and a watch ends on it.
 *
 * `open` gives a new, independent storage over the same store on every call (for a store shared
 * across processes: its own pool or connection), as two processes would have. Every wait is on a
 * journal event; `leaseMs` (default 300) only sets how soon an abandoned run counts as lost. Each
 * wait is bounded (`waitMs`, plus the lease time where a lease must expire first) and fails naming
 * what did not happen.
 */
export interface RunLifecycleConformanceOptions {
  name: string;
  open: () => Promise<Storage>;
  leaseMs?: number;
  /** How long one event (an entry, a run's end) may take before its test fails saying so. Default 5000 ms. */
  waitMs?: number;
}

const waitContract: ToolContract = {
  ref: 'conformance/wait',
  version: '1.0.0',
  description: 'Waits until the run is aborted (cancel, recovery, shutdown).',
  input_schema: { type: 'object' },
  output_schema: { type: 'object' },
  capabilities: [],
};
const echoContract: ToolContract = { ...waitContract, ref: 'conformance/echo-who', description: 'Echoes its input.' };

function tools(): ToolRegistry {
  return createToolRegistry([
    defineTool(waitContract, async (_input: unknown, ctx) => {
      await new Promise<void>((_resolve, reject) => {
        if (ctx.signal.aborted) reject(ctx.signal.reason);
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
      });
      return {};
    }),
    defineTool(echoContract, async (input: Record<string, unknown>) => ({ ...input })),
  ]);
}

const step = (id: string, contract: ToolContract, args: Record<string, unknown>) => ({
  id,
  tool: { ref: contract.ref, version: contract.version, contract_digest: contractDigest(contract) as Digest },
  capabilities: [],
  args,
  retry: { max_attempts: 1, backoff_ms: 10, backoff_factor: 2 },
  timeout_ms: 3_600_000,
});

function spec(wait: boolean): FlowSpec {
  return {
    flowspec: 1,
    name: wait ? 'conformance-wait' : 'conformance-echo',
    inputs: { who: { type: 'string', required: true, secret: false, schema: { type: 'string' } } },
    steps: [step('hello', echoContract, { who: '${inputs.who}' }), ...(wait ? [step('wait', waitContract, {})] : [])],
    output: '${steps.hello.output.who}',
  } as FlowSpec;
}

/** A watch to its end, each step bounded by `ms`; `what` names the watch, `until` the end it waits for. */
async function collect(iter: AsyncIterable<JournalEntry>, what: string, until: string, ms: number): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  const expects = (n: number) => `${what} delivered ${n} entries${n > 0 ? ` (last: ${out.at(-1)?.event})` : ''}, then neither another nor its end ${until}`;
  for await (const e of boundedIteration(iter, expects, ms)) {
    out.push(e);
    if (out.length > 1000) throw new Error(`${what} did not end after 1000 entries`);
  }
  return out;
}

async function stepStarted(engine: Engine, runId: string, stepId: string, ms: number): Promise<void> {
  const expects = (n: number) => `watch() saw ${n} entries of the run and no step_started of step "${stepId}"`;
  for await (const e of boundedIteration(engine.watch(runId), expects, ms)) if (e.event === 'step_started' && e.step === stepId) return;
  throw new Error(`run ${runId} ended before step ${stepId} started`);
}

/**
 * A storage whose lease renewals fail once `stall()` is called: an executor that froze or lost its
 * connection, as far as the store can tell. Everything else passes through.
 */
function stallable(storage: Storage): { storage: Storage; stall: () => void } {
  let stalled = false;
  const runs = storage.runs;
  const wrapped: Storage = Object.create(storage) as Storage;
  Object.defineProperty(wrapped, 'runs', {
    value: {
      ...runs,
      create: runs.create.bind(runs),
      get: runs.get.bind(runs),
      list: runs.list.bind(runs),
      update: (id: string, patch: Parameters<Storage['runs']['update']>[1]) => {
        if (stalled && Object.keys(patch).length === 1 && 'lease' in patch) return Promise.reject(new Error('conformance: this executor is stalled'));
        return runs.update(id, patch);
      },
    },
  });
  return { storage: wrapped, stall: () => (stalled = true) };
}

export function describeRunLifecycleConformance(options: RunLifecycleConformanceOptions): void {
  const leaseMs = options.leaseMs ?? 300;
  const waitMs = options.waitMs ?? WAIT_MS;
  // Where a lease must run out first (a heartbeat, an expiry, a sweep): a few lease times more.
  const leaseWaitMs = waitMs + 4 * leaseMs;
  const silent: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

  describe(`run lifecycle conformance: ${options.name}`, { timeout: SUITE_TIMEOUT_MS }, () => {
    it('instance A prepares, B executes by id, A watches to the end and reads the result', async () => {
      const a = createEngine({ storage: await options.open(), tools: tools(), leaseMs });
      const b = createEngine({ storage: await options.open(), tools: tools(), leaseMs });
      try {
        const { run_id, status } = await a.prepare({ spec: spec(false) }, { who: 'org-a' });
        expect(status).toBe('pending');
        const watched = collect(a.watch(run_id), "A's watch() of the run B executes", 'at run_finished', waitMs);
        watched.catch(() => undefined); // awaited below; a failure before that must not go unhandled
        const run = await within(b.execute(run_id), 'B execute(run_id) of a run A prepared did not finish', waitMs);
        expect(run).toMatchObject({ status: 'succeeded', output: 'org-a' });
        expect((await watched).map((e) => e.event)).toEqual(['run_started', 'step_started', 'step_succeeded', 'run_finished']);
        const seen = (await a.getRun(run_id))!;
        expect(seen).toMatchObject({ status: 'succeeded', output: 'org-a' });
        expect(() => verifyJournal(seen)).not.toThrow();
      } finally {
        await a.dispose();
        await b.dispose();
      }
    });

    it('A cancels a run B executes: B stops at its heartbeat, the run ends canceled with run_finished', async () => {
      const a = createEngine({ storage: await options.open(), tools: tools(), leaseMs });
      const b = createEngine({ storage: await options.open(), tools: tools(), leaseMs });
      try {
        const { run_id } = await a.prepare({ spec: spec(true) }, { who: 'org-a' });
        const executing = b.execute(run_id);
        executing.catch(() => undefined); // awaited below; a failure before that must not go unhandled
        await stepStarted(a, run_id, 'wait', waitMs);
        expect(await within(a.cancel(run_id), 'A cancel(run_id) of a run B executes did not return', leaseWaitMs)).toEqual({ run_id, status: 'canceled' });
        const stopped = await within(
          executing,
          `B execute() did not end after A canceled its run (B should see it at its next heartbeat, every ${leaseMs / 3} ms)`,
          leaseWaitMs,
        );
        expect(stopped.status).toBe('canceled');
        const run = (await a.getRun(run_id))!;
        expect(run.journal.at(-1)).toMatchObject({ event: 'run_finished', status: 'canceled', error: { code: 'canceled', step: 'wait' } });
        expect(() => verifyJournal(run)).not.toThrow();
      } finally {
        await a.dispose();
        await b.dispose();
      }
    });

    it('an executor whose lease expires is recovered by another instance as worker_lost; watches end; the executor stops', async () => {
      const stalledStore = stallable(await options.open());
      const executor = createEngine({ storage: stalledStore.storage, tools: tools(), leaseMs, sweepMs: 0, logger: silent });
      // The sweeper's periodic sweep (every lease time) ends the run once its lease expired.
      const sweeper = createEngine({ storage: await options.open(), tools: tools(), leaseMs, sweepMs: leaseMs });
      try {
        const { run_id } = await sweeper.prepare({ spec: spec(true) }, { who: 'org-a' });
        // Settled into a value at once: it may end (worker_lost) before this test gets to await it.
        const executing = executor.execute(run_id).then(
          (r) => `resolved ${r.status}`,
          (err: unknown) => (err as { code?: string }).code,
        );
        await stepStarted(sweeper, run_id, 'wait', waitMs);
        const watched = collect(
          sweeper.watch(run_id),
          "the sweeper's watch() of the stalled run",
          `at a run_finished worker_lost once the lease (${leaseMs} ms) expired`,
          leaseWaitMs,
        );
        watched.catch(() => undefined); // awaited below; a failure before that must not go unhandled
        stalledStore.stall();
        const entries = await watched;
        expect(entries.at(-1)).toMatchObject({ event: 'run_finished', status: 'failed', error: { code: 'worker_lost', step: 'wait' } });
        const run = (await sweeper.getRun(run_id))!;
        expect(run.status).toBe('failed');
        expect(() => verifyJournal(run)).not.toThrow();
        // The stalled executor reads the closed record at its next beat and stops with worker_lost,
        // writing nothing more.
        expect(await within(executing, 'the stalled executor did not stop after its run was recovered', leaseWaitMs)).toBe('worker_lost');
        expect((await sweeper.getRun(run_id))!.journal).toHaveLength(entries.length);
        const open: RunRecord[] = await sweeper.listRuns({ status: ['pending', 'running'] });
        expect(open.map((r) => r.id)).not.toContain(run_id);
      } finally {
        await executor.dispose();
        await sweeper.dispose();
      }
    });

    it('a start deadline (prepare startWithinMs): a run nobody starts ends start_timeout; one started in time runs; a cancel closes it at once', async () => {
      const a = createEngine({ storage: await options.open(), tools: tools(), leaseMs, sweepMs: 0, logger: silent });
      const b = createEngine({ storage: await options.open(), tools: tools(), leaseMs, sweepMs: 0, logger: silent });
      try {
        // Nobody executes it (its queue message was lost): a watch checks it every lease time and,
        // the deadline passed, recovery closes it; it never started.
        const orphan = await a.prepare({ spec: spec(false) }, { who: 'org-a' }, { startWithinMs: leaseMs });
        expect((await b.getRun(orphan.run_id))!.status).toBe('pending');
        const entries = await collect(
          b.watch(orphan.run_id),
          'watch() of a run nobody starts',
          `at a run_finished start_timeout once its start deadline (${leaseMs} ms) passed`,
          leaseWaitMs,
        );
        expect(entries.map((e) => e.event)).toEqual(['run_started', 'run_finished']);
        expect(entries.at(-1)).toMatchObject({ status: 'failed', error: { code: 'start_timeout' } });
        const closed = (await a.getRun(orphan.run_id))!;
        expect(closed.status).toBe('failed');
        expect(() => verifyJournal(closed)).not.toThrow();
        await expect(b.execute(orphan.run_id)).rejects.toMatchObject({ code: 'run_not_pending' });

        // Started in time: the executor's lease replaces the deadline and the run goes to its end.
        const timely = await a.prepare({ spec: spec(false) }, { who: 'org-b' }, { startWithinMs: 3_600_000 });
        expect(await a.recover()).toEqual([]);
        expect(await within(b.execute(timely.run_id), 'execute() of a run started before its deadline did not finish', waitMs)).toMatchObject({
          status: 'succeeded',
          output: 'org-b',
        });

        // A cancel does not wait for a heartbeat nobody sends.
        const dropped = await a.prepare({ spec: spec(false) }, { who: 'org-c' }, { startWithinMs: 3_600_000 });
        expect(await b.cancel(dropped.run_id)).toEqual({ run_id: dropped.run_id, status: 'canceled' });
        expect((await a.getRun(dropped.run_id))!.journal.at(-1)).toMatchObject({ event: 'run_finished', status: 'canceled' });
        await expect(a.prepare({ spec: spec(false) }, { who: 'x' }, { startWithinMs: 0 })).rejects.toMatchObject({ code: 'invalid_options' });
      } finally {
        await a.dispose();
        await b.dispose();
      }
    });
  });
}
