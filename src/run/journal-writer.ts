import type { Digest } from '../canonical.js';
import type { Clock, Logger } from '../ports/clock.js';
import type { JournalStore, RunPatch } from '../ports/storage.js';
import type { SecretMask } from '../secrets/mask.js';
import { sealEntryText, type EntryDraft, type UnsealedEntry } from './journal.js';
import type { JournalEntry } from './types.js';

export interface JournalWriterOptions {
  runId: string;
  store: JournalStore;
  clock: Clock;
  flowDigest: Digest;
  inputsDigest: Digest;
  mask: SecretMask;
  logger: Logger;
  onEntry?: (entry: JournalEntry) => void;
  /** Called with each sealed entry before it is stored; throwing stops the append (replay verify). */
  check?: (entry: JournalEntry) => void;
  /**
   * The run record change that goes with an entry, handed to `store.append` to apply in the same
   * transaction (only for a store with `flags.appendUpdatesRun`; the engine decides).
   */
  runPatch?: (entry: JournalEntry) => RunPatch | undefined;
}

/**
 * Appends one run's entries in order: fills the base fields, masks secrets, seals (digest + prev)
 * and stores each entry at the next seq. Appends are serialized, so effects a tool reports while it
 * runs and the step's own entries never race for a seq.
 */
export class JournalWriter {
  readonly entries: JournalEntry[] = [];
  /** Each entry's JSON text, as handed to storage (same order as entries). */
  readonly texts: string[] = [];
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: JournalWriterOptions) {}

  append(draft: EntryDraft): Promise<JournalEntry> {
    const written = this.tail.then(() => this.write(draft));
    this.tail = written.catch(() => undefined);
    return written;
  }

  /** Wait for every queued append. */
  async drain(): Promise<void> {
    await this.tail;
  }

  get last(): JournalEntry | undefined {
    return this.entries[this.entries.length - 1];
  }

  private async write(draft: EntryDraft): Promise<JournalEntry> {
    const o = this.options;
    const seq = this.entries.length;
    const { entry, text } = sealEntryText({
      ...o.mask.mask(draft),
      at: o.clock.now(),
      flow_digest: o.flowDigest,
      inputs_digest: o.inputsDigest,
      seq,
      prev: seq === 0 ? null : this.entries[seq - 1]!.digest,
    } as UnsealedEntry);
    o.check?.(entry);
    const patch = o.runPatch?.(entry);
    await (patch ? o.store.append(o.runId, entry, text, patch) : o.store.append(o.runId, entry, text));
    this.entries.push(entry);
    this.texts.push(text);
    if (o.onEntry) {
      try {
        o.onEntry(entry);
      } catch (err) {
        // A listener's bug must not break the run it observes.
        o.logger.warn(`[flowctl] [run] onEntry listener threw: ${o.mask.maskError(err)}`);
      }
    }
    return entry;
  }
}
