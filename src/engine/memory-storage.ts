import type { Digest } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import type { RunListQuery, RunRecord, Storage } from '../ports/storage.js';
import type { JournalEntry } from '../run/types.js';
import { compareRunsNewestFirst, filterRunList } from '../run/run-list.js';

const NAME = 'storage-memory';

/**
 * In-process storage for tests and embedding. Everything is copied in and out, so a caller mutating
 * a returned object never changes what is stored. Journal entries are kept as JSON text, as a
 * database would keep them: the engine hands over the text it made while sealing, and a heap of
 * strings costs the garbage collector far less than a heap of small objects. Not durable;
 * watch() sees only appends made through this instance.
 */
export function createMemoryStorage(): Storage {
  const specs = new Map<Digest, FlowSpec>();
  const deploys = new Map<string, Map<string, Digest>>();
  const runs = new Map<string, RunRecord>();
  const journals = new Map<string, StoredJournal>();
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
        journals.set(run.id, { texts: [], finished: false });
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
      async append(runId, entry, text) {
        const journal = journals.get(runId);
        if (!journal) throw new FlowError('not_found', `[flowctl] [${NAME}] run ${runId} not found`);
        const next = journal.texts.length;
        if (entry.seq !== next) {
          throw new FlowError('journal_conflict', `[flowctl] [${NAME}] run ${runId}: append at seq ${entry.seq}, but the next seq is ${next}`, {
            data: { run_id: runId, seq: entry.seq, next_seq: next },
          });
        }
        journal.texts.push(text ?? JSON.stringify(entry));
        if (entry.event === 'run_finished') journal.finished = true;
        notify(runId);
      },
      async read(runId, fromSeq = 0) {
        return (journals.get(runId)?.texts ?? []).slice(Math.max(0, fromSeq)).map(parseEntry);
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
  journals: Map<string, StoredJournal>,
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
      const journal = journals.get(runId);
      const texts = journal?.texts ?? [];
      while (next < texts.length) {
        const entry = parseEntry(texts[next]!);
        next++;
        yield entry;
        if (entry.event === 'run_finished') return;
        if (signal?.aborted) return;
      }
      // A run that already finished before fromSeq: nothing more will come.
      if (journal?.finished) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    set.delete(listener);
    signal?.removeEventListener('abort', listener);
  }
}

/** One run's journal: each entry's canonical JSON text, in seq order. */
interface StoredJournal {
  texts: string[];
  finished: boolean;
}

function parseEntry(text: string): JournalEntry {
  return JSON.parse(text) as JournalEntry;
}

/** A run record copied field by field (its fields are mostly strings). */
function copyRecord(run: RunRecord): RunRecord {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(run)) if (v !== undefined) out[k] = copyIn(v);
  return out as unknown as RunRecord;
}

/** A value to keep: primitives as they are, objects copied. */
function copyIn<T>(value: T): T {
  return value === null || typeof value !== 'object' ? value : jsonClone(value);
}

/** Stored values are JSON by contract; a JSON round trip copies them faster than structuredClone. */
function jsonClone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
