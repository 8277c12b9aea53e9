import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { canonicalJson, isDigest, type Digest } from '../../src/canonical.js';
import { FlowError } from '../../src/errors.js';
import type { FlowSpec } from '../../src/flow/types.js';
import type { RunRecord, Storage } from '../../src/ports/storage.js';
import { compareRunsNewestFirst, filterRunList } from '../../src/run/run-list.js';
import { TERMINAL_STATUSES } from '../../src/run/types.js';
import { createFsJournal, readLastJournalEntry } from './fs-journal.js';
import { createUnfinishedIndex } from './fs-unfinished.js';
import { removeStaleTemps, TEMP_PREFIX, writeFileDurable } from '../../src/util/atomic-write.js';
import { COMPONENT, exists, fsError, isCode, readJson, RUN_ID } from './fs-util.js';

export interface FsStorageOptions {
  /** The store directory (the CLI uses `<project>/.flowctl`). Created on init. */
  dir: string;
  /** watch() poll interval in ms when fs.watch reports nothing (default 100). */
  pollMs?: number;
}

/**
 * Durable storage in a directory:
 *
 *   specs/<hex>.json              FlowSpecs by digest (canonical JSON, written once)
 *   deploys/<front>/<name>.json   {name, digest}, one file per deployed name (name URI-encoded)
 *   runs/<id>/run.json            the run header, replaced atomically (temp + fsync + rename)
 *   runs/<id>/journal.jsonl       append-only JSON lines (see fs-journal.ts)
 *   runs/<id>/claims/<seq>        per-seq claim files that make appends exclusive across processes
 *   runs/<id>/cancel_requested    present once `engine.cancel` asked the run to stop (a file of its
 *                                 own, so a lease heartbeat rewriting run.json never loses it)
 *   artifacts/<hex>.bin|.json     artifact bytes and their media type
 *   unfinished/<id>/              one empty folder per run not finished yet: what recovery reads
 *                                 (fs-unfinished.ts)
 *
 * A process killed at any moment leaves every run readable: run.json is always whole, and a torn
 * trailing journal line is ignored. The journal decides a run's outcome: a header that missed its
 * last update (killed between appending run_finished and rewriting run.json) is repaired from the
 * journal when read, so `get`, `list` and every reader of the Run agree. Temp files of writers that
 * died before their rename are removed by init (the next open).
 */
const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

export function createFsStorage(options: FsStorageOptions): Storage {
  const root = resolve(options.dir);
  const dirs = {
    specs: join(root, 'specs'),
    deploys: join(root, 'deploys'),
    runs: join(root, 'runs'),
    artifacts: join(root, 'artifacts'),
  };
  const runDir = (id: string) => {
    if (!RUN_ID.test(id)) {
      throw new FlowError('invalid_id', `[flowctl] [${COMPONENT}] run id "${id}" may hold only letters, digits, _ and -`);
    }
    return join(dirs.runs, id);
  };
  const hexOf = (digest: Digest) => {
    if (!isDigest(digest)) throw new FlowError('invalid_digest', `[flowctl] [${COMPONENT}] "${String(digest)}" is not a sha256:<hex> digest`);
    return digest.slice('sha256:'.length);
  };
  const frontDir = (front: string) => join(dirs.deploys, encodeURIComponent(front));

  /**
   * The run header as the journal decides it. When the journal ends with run_finished, status,
   * finished_at, output and error come from that entry, and a header that differs is rewritten (it
   * missed the engine's last update). A header still `pending` over a journal that has entries reads
   * as `running` (not rewritten: only run_finished settles a header for good).
   */
  async function readRun(id: string): Promise<RunRecord | undefined> {
    const headerFile = join(runDir(id), 'run.json');
    const stored = await readJson<RunRecord>(headerFile);
    if (!stored) return undefined;
    const header = (await cancelRequested(id)) ? { ...stored, cancel_requested: true } : stored;
    const last = await readLastJournalEntry(join(runDir(id), 'journal.jsonl'));
    if (!last) return header;
    if (last.event !== 'run_finished') return header.status === 'pending' ? { ...header, status: 'running' } : header;
    const repaired: Record<string, unknown> = { ...header, status: last.status, finished_at: last.at };
    delete repaired.output;
    delete repaired.error;
    if (last.output !== undefined) repaired.output = last.output;
    if (last.error !== undefined) repaired.error = last.error;
    const same = (k: 'status' | 'finished_at' | 'output' | 'error') => JSON.stringify(repaired[k]) === JSON.stringify(header[k]);
    if (!(same('status') && same('finished_at') && same('output') && same('error'))) {
      // Best effort: a read-only store still reads right, it just repairs again next time.
      const { cancel_requested: _cancel, ...toWrite } = repaired;
      await writeFileDurable(headerFile, `${JSON.stringify(toWrite)}\n`).catch(() => undefined);
    }
    return repaired as unknown as RunRecord;
  }

  async function cancelRequested(id: string): Promise<boolean> {
    try {
      return await exists(join(runDir(id), 'cancel_requested'));
    } catch (err) {
      throw fsError(`cannot read the cancel flag of run ${id}`, err);
    }
  }

  /** Remove temp files of dead writers in every folder the store writes temps to (see atomic-write.ts). */
  async function sweepTemps(): Promise<void> {
    const folders = [dirs.specs, dirs.artifacts, dirs.runs];
    for (const parent of [dirs.deploys, dirs.runs]) {
      try {
        for (const d of await readdir(parent, { withFileTypes: true })) {
          if (!d.isDirectory() || (parent === dirs.runs && !RUN_ID.test(d.name))) continue;
          folders.push(join(parent, d.name));
          // A run's claims/ holds the claim source its claims are linked from (fs-journal.ts).
          if (parent === dirs.runs) folders.push(join(parent, d.name, 'claims'));
        }
      } catch (err) {
        if (!isCode(err, 'ENOENT')) throw err;
      }
    }
    for (const folder of folders) await removeStaleTemps(folder, ['prefix']);
  }

  /** Every run id in runs/ (a name a run id can have). */
  async function allRunIds(): Promise<string[]> {
    try {
      return (await readdir(dirs.runs)).filter((id) => RUN_ID.test(id));
    } catch (err) {
      if (isCode(err, 'ENOENT')) return [];
      throw fsError('cannot list runs', err);
    }
  }

  /** The ids of the runs that do not read as terminal (a full scan: building the unfinished index). */
  async function scanUnfinished(): Promise<string[]> {
    const ids: string[] = [];
    for (const id of await allRunIds()) {
      const run = await readRun(id);
      if (run && !TERMINAL.has(run.status)) ids.push(id);
    }
    return ids;
  }

  const unfinished = createUnfinishedIndex(root);
  const journal = createFsJournal({ runDir, pollMs: options.pollMs ?? 100 });

  return {
    name: COMPONENT,
    flags: { crossProcessWatch: true, durable: true },

    async dispose() {
      await journal.release();
    },

    async init() {
      try {
        for (const dir of Object.values(dirs)) await mkdir(dir, { recursive: true });
      } catch (err) {
        throw fsError(`cannot create the store at ${root}`, err);
      }
      try {
        await unfinished.ensure(scanUnfinished);
      } catch (err) {
        throw fsError(`cannot index the unfinished runs of the store at ${root}`, err);
      }
      try {
        await sweepTemps();
      } catch (err) {
        throw fsError(`cannot remove stale temp files in ${root}`, err);
      }
    },

    specs: {
      async put(digest, spec) {
        const path = join(dirs.specs, `${hexOf(digest)}.json`);
        if ((await readJson(path)) !== undefined) return;
        await writeFileDurable(path, `${canonicalJson(spec)}\n`);
      },
      async get(digest) {
        return readJson<FlowSpec>(join(dirs.specs, `${hexOf(digest)}.json`));
      },
    },

    deploys: {
      async set(front, name, digest) {
        hexOf(digest);
        await mkdir(frontDir(front), { recursive: true });
        await writeFileDurable(join(frontDir(front), `${encodeURIComponent(name)}.json`), `${canonicalJson({ name, digest })}\n`);
      },
      async get(front, name) {
        return (await readJson<{ digest: Digest }>(join(frontDir(front), `${encodeURIComponent(name)}.json`)))?.digest;
      },
      async list(front) {
        let files: string[];
        try {
          files = await readdir(frontDir(front));
        } catch (err) {
          if (isCode(err, 'ENOENT')) return [];
          throw fsError(`cannot list deploys of ${front}`, err);
        }
        const out: { name: string; digest: Digest }[] = [];
        for (const f of files.filter((f) => f.endsWith('.json') && !f.startsWith(TEMP_PREFIX)).sort()) {
          const d = await readJson<{ name: string; digest: Digest }>(join(frontDir(front), f));
          if (d) out.push({ name: d.name, digest: d.digest });
        }
        return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      },
    },

    runs: {
      async create(run) {
        const dir = runDir(run.id);
        try {
          await mkdir(dir);
        } catch (err) {
          if (isCode(err, 'EEXIST')) throw new FlowError('run_exists', `[flowctl] [${COMPONENT}] run ${run.id} already exists`);
          throw fsError(`cannot create run ${run.id}`, err);
        }
        const { cancel_requested: cancel, ...header } = run;
        // Indexed before its header exists: no reader ever sees the run unindexed while unfinished.
        if (!TERMINAL.has(run.status)) await unfinished.add(run.id);
        if (cancel === true) await writeFileDurable(join(dir, 'cancel_requested'), '1\n');
        await writeFileDurable(join(dir, 'run.json'), `${JSON.stringify(header)}\n`);
      },
      get: readRun,
      async list(query) {
        // Only non-terminal statuses (recovery's query): the indexed runs, not every run ever kept.
        const onlyUnfinished = query?.status !== undefined && query.status.length > 0 && query.status.every((st) => !TERMINAL.has(st));
        const indexed = onlyUnfinished ? await unfinished.ids() : undefined;
        const runs: RunRecord[] = [];
        for (const id of indexed ?? (await allRunIds())) {
          // A directory without run.json is a create that was killed before its first write: not a run.
          const run = await readRun(id);
          if (indexed && (run ? TERMINAL.has(run.status) : !(await exists(runDir(id))))) await unfinished.remove(id);
          if (run) runs.push(run);
        }
        return filterRunList(runs.sort(compareRunsNewestFirst), query, COMPONENT);
      },
      async update(id, patch) {
        const run = await readRun(id);
        if (!run) throw new FlowError('not_found', `[flowctl] [${COMPONENT}] run ${id} not found`);
        if (patch.cancel_requested === true && !run.cancel_requested) await writeFileDurable(join(runDir(id), 'cancel_requested'), '1\n');
        const next: Record<string, unknown> = { ...run };
        for (const [k, v] of Object.entries(patch)) if (v !== undefined && k !== 'cancel_requested') next[k] = v;
        delete next.cancel_requested;
        await writeFileDurable(join(runDir(id), 'run.json'), `${JSON.stringify(next)}\n`);
        if (TERMINAL.has(next.status as RunRecord['status'])) await unfinished.remove(id);
      },
    },

    journal,

    artifacts: {
      async put(digest, bytes, mediaType) {
        const base = join(dirs.artifacts, hexOf(digest));
        if ((await readJson(`${base}.json`)) !== undefined) return;
        await writeFileDurable(`${base}.bin`, bytes);
        await writeFileDurable(`${base}.json`, `${JSON.stringify({ mediaType })}\n`);
      },
      async get(digest) {
        const base = join(dirs.artifacts, hexOf(digest));
        const meta = await readJson<{ mediaType: string }>(`${base}.json`);
        if (!meta) return undefined;
        try {
          return { bytes: new Uint8Array(await readFile(`${base}.bin`)), mediaType: meta.mediaType };
        } catch (err) {
          throw fsError(`cannot read artifact ${digest}`, err);
        }
      },
    },
  };
}
