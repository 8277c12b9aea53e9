import { link, mkdir, open, readFile, stat, truncate, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { FlowError } from '../../src/errors.js';
import type { JournalStore } from '../../src/ports/storage.js';
import type { JournalEntry } from '../../src/run/types.js';
import { pidAlive, syncDir, TEMP_PREFIX } from '../../src/util/atomic-write.js';
import { COMPONENT, fsError, isCode, waitForChange } from './fs-util.js';

/**
 * The journal of a run as append-only JSON lines: runs/<id>/journal.jsonl.
 *
 * Appending at seq N is exclusive across processes: the writer first checks that the file holds
 * exactly N complete entries, then claims N by creating runs/<id>/claims/<N> (a hard link, which fails
 * when the name exists); a second writer at the same seq gets `journal_conflict` instead of forking
 * the journal. Claims are never removed, so a writer killed after claiming leaves the seq closed to
 * other appends rather than gapped. Each line is written with one write() and fdatasync'd. A reader
 * ignores a torn trailing line (no newline yet), so a process killed at any moment leaves the journal
 * readable.
 *
 * A claim names its writer (`{pid, host}`, linked into place whole from a temp file the writer keeps
 * for the run). A claim whose writer is dead (same host, pid gone) while the journal still holds
 * exactly N entries is taken over by the next claim generation (claims/<N>.1, <N>.2, ..., exclusive
 * the same way), after any torn line of the dead writer is cut: so recovery can close a run whose
 * process was killed between claiming a seq and writing its line (issue 13's kill probe). A claim
 * without a writer (an older store) or from another host is never taken over.
 */
export interface FsJournalOptions {
  runDir(runId: string): string;
  /** Poll interval of watch() when fs.watch stays silent. */
  pollMs: number;
}

/** Numbers this process's claim sources (module-wide: two stores on one folder never share a name). */
let claimSourceCounter = 0;

/** The journal store, and `release()`: remove this writer's claim sources (the store's dispose). */
export type FsJournal = JournalStore & { release(): Promise<void> };

export function createFsJournal(options: FsJournalOptions): FsJournal {
  // Entries this instance knows are in each file (after its own appends); other processes may add more.
  const known = new Map<string, number>();
  const wakers = new Map<string, Set<() => void>>();

  const file = (runId: string) => join(options.runDir(runId), 'journal.jsonl');
  const host = hostname();
  const claimText = JSON.stringify({ pid: process.pid, host });

  /**
   * This writer's claim source in each run's claims/ folder: one temp file holding its claim, made
   * once per run (with the folder), hard-linked into place as the claim of every seq it appends. A
   * link is one cheap system call; making a file is not (0.1-0.5 ms each on the ext4 of the machines
   * benchmarked here, and a browser run appends about 50 entries). Removed after run_finished; one a
   * killed writer leaves is a temp of a dead pid, swept at the next init.
   */
  const claimSources = new Map<string, Promise<string>>();
  // Runs that never finish here (a worker's crash, a conflict) leave theirs; bound what is kept.
  const MAX_CLAIM_SOURCES = 256;

  function claimSource(runId: string, dir: string): Promise<string> {
    let source = claimSources.get(runId);
    if (!source) {
      if (claimSources.size >= MAX_CLAIM_SOURCES) void releaseClaimSource(claimSources.keys().next().value as string);
      source = (async () => {
        await mkdir(dir, { recursive: true });
        claimSourceCounter += 1;
        const temp = join(dir, `${TEMP_PREFIX}${process.pid}-${claimSourceCounter}-claim`);
        const fh = await open(temp, 'wx');
        try {
          await fh.write(claimText);
        } finally {
          await fh.close();
        }
        return temp;
      })();
      claimSources.set(runId, source);
      source.catch(() => claimSources.delete(runId));
    }
    return source;
  }

  async function releaseClaimSource(runId: string): Promise<void> {
    const source = claimSources.get(runId);
    claimSources.delete(runId);
    if (source) await unlink(await source).catch(() => undefined);
  }

  /** Create claims/<name> holding this writer's claim, whole, only if it does not exist (a hard link). */
  async function createClaim(runId: string, dir: string, name: string): Promise<boolean> {
    for (let again = false; ; again = true) {
      try {
        await link(await claimSource(runId, dir), join(dir, name));
        return true;
      } catch (err) {
        if (isCode(err, 'EEXIST')) return false;
        // The source or the folder is gone (the run's folder removed and made again): make it once more.
        if (!isCode(err, 'ENOENT') || again) throw err;
        claimSources.delete(runId);
      }
    }
  }

  /** Whether the claim file names a writer on this host that is gone. */
  async function claimAbandoned(path: string): Promise<boolean> {
    try {
      const owner = JSON.parse(await readFile(path, 'utf8')) as { pid?: unknown; host?: unknown };
      return owner.host === host && typeof owner.pid === 'number' && Number.isSafeInteger(owner.pid) && owner.pid > 0 && !pidAlive(owner.pid);
    } catch {
      return false; // no writer named (an older claim), or unreadable: never taken over
    }
  }

  const MAX_CLAIM_GENERATIONS = 16;

  /**
   * Claim seq `seq` of a journal that holds `seq` entries: the first free claim generation whose
   * predecessors were all abandoned by dead writers. Throws journal_conflict when a live (or unknown)
   * writer holds it.
   */
  async function claim(runId: string, seq: number): Promise<void> {
    const dir = join(options.runDir(runId), 'claims');
    for (let gen = 0; gen < MAX_CLAIM_GENERATIONS; gen++) {
      const name = gen === 0 ? String(seq) : `${seq}.${gen}`;
      if (await createClaim(runId, dir, name)) {
        if (gen > 0) {
          // Taken over from a dead writer: cut its torn line, if it left one, before appending.
          const text = await readFile(file(runId), 'utf8').catch((err: unknown) => (isCode(err, 'ENOENT') ? '' : Promise.reject(err)));
          if (text.length > 0 && !text.endsWith('\n')) await truncate(file(runId), Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1)));
        }
        return;
      }
      if (!(await claimAbandoned(join(dir, name)))) throw conflict(runId, seq, seq + 1);
      // The writer is dead; take over only while the journal still lacks its entry.
      if (((await readLines(runId))?.length ?? 0) !== seq) throw conflict(runId, seq, seq + 1);
    }
    throw conflict(runId, seq, seq + 1);
  }

  async function readLines(runId: string): Promise<JournalEntry[] | undefined> {
    let text: string;
    try {
      text = await readFile(file(runId), 'utf8');
    } catch (err) {
      if (isCode(err, 'ENOENT')) return undefined;
      throw fsError(`cannot read the journal of run ${runId}`, err);
    }
    const lines = text.split('\n');
    lines.pop(); // '' after the last newline, or a torn line still being written: not an entry yet
    return lines.map((line, i) => {
      try {
        return JSON.parse(line) as JournalEntry;
      } catch (err) {
        throw fsError(`journal of run ${runId}: line ${i + 1} is not valid JSON`, err, 'storage_corrupt');
      }
    });
  }

  async function runExists(runId: string): Promise<boolean> {
    try {
      await stat(join(options.runDir(runId), 'run.json'));
      return true;
    } catch (err) {
      if (isCode(err, 'ENOENT')) return false;
      throw fsError(`cannot open run ${runId}`, err);
    }
  }

  const conflict = (runId: string, seq: number, next: number) =>
    new FlowError('journal_conflict', `[flowctl] [${COMPONENT}] run ${runId}: append at seq ${seq}, but the next seq is ${next}`, {
      data: { run_id: runId, seq, next_seq: next },
    });

  return {
    async release() {
      await Promise.all([...claimSources.keys()].map(releaseClaimSource));
    },

    async append(runId, entry, text) {
      const seq = entry.seq;
      if (!Number.isInteger(seq) || seq < 0) throw conflict(runId, seq, known.get(runId) ?? 0);
      let count = known.get(runId);
      if (count === undefined) {
        const lines = await readLines(runId);
        if (lines === undefined && !(await runExists(runId))) {
          throw new FlowError('not_found', `[flowctl] [${COMPONENT}] run ${runId} not found`);
        }
        count = lines?.length ?? 0;
      }
      if (seq !== count) throw conflict(runId, seq, count);
      try {
        await claim(runId, seq);
      } catch (err) {
        if (err instanceof FlowError) throw err;
        throw fsError(`cannot claim seq ${seq} of run ${runId}`, err);
      }
      try {
        const fh = await open(file(runId), 'a');
        try {
          // One line per entry: a given text with a line break in it is not used.
          await fh.write(`${text !== undefined && !text.includes('\n') ? text : JSON.stringify(entry)}\n`);
          await fh.datasync();
        } finally {
          await fh.close();
        }
        if (seq === 0) await syncDir(options.runDir(runId));
      } catch (err) {
        throw fsError(`cannot append seq ${seq} to run ${runId}`, err);
      }
      known.set(runId, seq + 1);
      if (entry.event === 'run_finished') await releaseClaimSource(runId);
      for (const wake of wakers.get(runId) ?? []) wake();
    },

    async read(runId, fromSeq = 0) {
      const lines = (await readLines(runId)) ?? [];
      return lines.slice(Math.max(0, fromSeq));
    },

    async *watch(runId, watchOptions = {}) {
      let next = Math.max(0, watchOptions.fromSeq ?? 0);
      const signal = watchOptions.signal;
      const subscribe = (wake: () => void) => {
        let set = wakers.get(runId);
        if (!set) wakers.set(runId, (set = new Set()));
        set.add(wake);
        return () => set.delete(wake);
      };
      for (;;) {
        if (signal?.aborted) return;
        const lines = (await readLines(runId)) ?? [];
        while (next < lines.length) {
          const entry = lines[next++]!;
          yield entry;
          if (entry.event === 'run_finished' || signal?.aborted) return;
        }
        if (lines.some((e) => e.event === 'run_finished')) return;
        await waitForChange(options.runDir(runId), options.pollMs, signal, subscribe);
      }
    },
  };
}

/**
 * The last complete entry of a journal file (the line before the last newline; a torn trailing line
 * is not an entry yet), read from the end of the file so a run header can be checked against its
 * journal without reading the whole journal. Undefined when the file is missing, holds no complete
 * line, or its last complete line is not JSON (a full read reports that as `storage_corrupt`).
 */
export async function readLastJournalEntry(path: string): Promise<JournalEntry | undefined> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if (isCode(err, 'ENOENT')) return undefined;
    throw fsError(`cannot read ${path}`, err);
  }
  try {
    const size = (await fh.stat()).size;
    // Bounded: each pass reads 8x more from the end, the last pass reads the whole file.
    for (let window = 16 * 1024; ; window *= 8) {
      const start = Math.max(0, size - window);
      const buf = Buffer.alloc(size - start);
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await fh.read(buf, got, buf.length - got, start + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      // A newline byte never occurs inside a multi-byte UTF-8 sequence: searching bytes is safe.
      // (lastIndexOf with a negative offset counts from the end, hence the guards.)
      const end = got > 0 ? buf.lastIndexOf(0x0a, got - 1) : -1;
      if (end < 0 && start === 0) return undefined;
      const begin = end > 0 ? buf.lastIndexOf(0x0a, end - 1) : -1;
      if (begin >= 0 || start === 0) {
        try {
          return JSON.parse(buf.subarray(begin + 1, end).toString('utf8')) as JournalEntry;
        } catch {
          return undefined;
        }
      }
    }
  } finally {
    await fh.close();
  }
}
