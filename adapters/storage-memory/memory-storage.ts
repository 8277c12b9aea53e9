import { deepFreeze, isDeepFrozen, type Digest } from '../../src/canonical.js';
import { FlowError } from '../../src/errors.js';
import type { FlowSpec } from '../../src/flow/types.js';
import type { RunListQuery, RunRecord, Storage } from '../../src/ports/storage.js';
import type { JournalEntry } from '../../src/run/types.js';
import { compareRunsNewestFirst, filterRunList } from '../../src/run/run-list.js';

const NAME = 'storage-memory';

/**
 * In-process storage for tests and embedding. Everything is copied in (structuredClone) and out, so a
 * caller mutating a returned object never changes what is stored; journal entries, immutable by
 * nature, are frozen instead of copied out. Not durable; watch() sees only appends made through this
 * instance.
 */
export function createMemoryStorage(): Storage {
  const specs = new Map<Digest, FlowSpec>();
  const deploys = new Map<string, Map<string, Digest>>();
  const runs = new Map<string, RunRecord>();
  const journals = new Map<string, JournalEntry[]>();
  const artifacts = new Map<Digest, { bytes: Uint8Array; mediaType: string }>();
  // Woken on every append; each watcher re-reads its run's journal from its own cursor.
  const listeners = new Map<string, Set<() => void>>();

  const notify = (runId: string) => {
    for (const wake of listeners.get(runId) ?? []) wake();
  };

  return {
    name: NAME,
    flags: { crossProcessWatch: false, durable: false },
    specs: {
      async put(digest, spec) {
        if (!specs.has(digest)) specs.set(digest, jsonClone(spec));
      },
      async get(digest) {
        const spec = specs.get(digest);
        return spec && jsonClone(spec);
      },
    },
    deploys: {
      async set(front, name, digest) {
        let byName = deploys.get(front);
        if (!byName) deploys.set(front, (byName = new Map()));
        byName.set(name, digest);
      },
      async get(front, name) {
        return deploys.get(front)?.get(name);
      },
      async list(front) {
        return [...(deploys.get(front) ?? new Map<string, Digest>())]
          .map(([name, digest]) => ({ name, digest }))
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      },
    },
    runs: {
      async create(run) {
        if (runs.has(run.id)) throw new FlowError('run_exists', `[flowctl] [${NAME}] run ${run.id} already exists`);
        runs.set(run.id, copyRecord(run));
        journals.set(run.id, []);
      },
      async get(id) {
        const run = runs.get(id);
        return run && copyRecord(run);
      },
      async list(query?: RunListQuery) {
        const all = [...runs.values()].sort(compareRunsNewestFirst);
        return filterRunList(all, query).map((r) => jsonClone(r));
      },
      async update(id, patch) {
        const run = runs.get(id);
        if (!run) throw new FlowError('not_found', `[flowctl] [${NAME}] run ${id} not found`);
        const next: RunRecord = { ...run };
        for (const [k, v] of Object.entries(patch)) {
          if (v !== undefined) (next as unknown as Record<string, unknown>)[k] = copyIn(v);
        }
        runs.set(id, next);
      },
    },
    journal: {
      async append(runId, entry) {
        const journal = journals.get(runId);
        if (!journal) throw new FlowError('not_found', `[flowctl] [${NAME}] run ${runId} not found`);
        if (entry.seq !== journal.length) {
          throw new FlowError(
            'journal_conflict',
            `[flowctl] [${NAME}] run ${runId}: append at seq ${entry.seq}, but the next seq is ${journal.length}`,
            { data: { run_id: runId, seq: entry.seq, next_seq: journal.length } },
          );
        }
        // The engine's sealed entries are deep-frozen already: nobody can change them, so keep them as they are.
        journal.push(isDeepFrozen(entry) ? entry : deepFreeze(jsonClone(entry)));
        notify(runId);
      },
      // Entries are frozen when stored, so readers share them without copies (a 1,000-step run reads
      // 2,000 entries on every getRun).
      async read(runId, fromSeq = 0) {
        return (journals.get(runId) ?? []).slice(Math.max(0, fromSeq));
      },
      watch(runId, options = {}) {
        return watchJournal(runId, options, journals, listeners);
      },
    },
    artifacts: {
      async put(digest, bytes, mediaType) {
        if (!artifacts.has(digest)) artifacts.set(digest, { bytes: new Uint8Array(bytes), mediaType });
      },
      async get(digest) {
        const a = artifacts.get(digest);
        return a && { bytes: new Uint8Array(a.bytes), mediaType: a.mediaType };
      },
    },
  };
}

async function* watchJournal(
  runId: string,
  options: { fromSeq?: number; signal?: AbortSignal },
  journals: Map<string, JournalEntry[]>,
  listeners: Map<string, Set<() => void>>,
): AsyncGenerator<JournalEntry> {
  let next = Math.max(0, options.fromSeq ?? 0);
  const signal = options.signal;
  let wake: (() => void) | undefined;
  const listener = () => wake?.();
  let set = listeners.get(runId);
  if (!set) listeners.set(runId, (set = new Set()));
  set.add(listener);
  signal?.addEventListener('abort', listener);
  try {
    for (;;) {
      if (signal?.aborted) return;
      const journal = journals.get(runId) ?? [];
      while (next < journal.length) {
        const entry = journal[next]!;
        next++;
        yield entry;
        if (entry.event === 'run_finished') return;
        if (signal?.aborted) return;
      }
      // A run that already finished before fromSeq: nothing more will come.
      if (journal.some((e) => e.event === 'run_finished')) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    set.delete(listener);
    signal?.removeEventListener('abort', listener);
  }
}

/** A run record copied field by field (its fields are mostly strings). */
function copyRecord(run: RunRecord): RunRecord {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(run)) if (v !== undefined) out[k] = copyIn(v);
  return out as unknown as RunRecord;
}

/** A value to keep: primitives and deep-frozen values as they are (nobody can change them), others copied. */
function copyIn<T>(value: T): T {
  return value === null || typeof value !== 'object' || isDeepFrozen(value) ? value : jsonClone(value);
}

/** Stored values are JSON by contract; a JSON round trip copies them faster than structuredClone. */
function jsonClone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
