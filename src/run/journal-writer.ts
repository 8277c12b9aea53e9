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
 * runs and the step's own entries never race for a seq. An entry's `at` is the time of the call that
 * appended it, whenever it is stored.
 *
 * `post` appends without waiting (docs/journal.md, "Write-behind"): a live run goes on to its next
 * step while its entries are stored in order behind it, and a step's entry may wait there for what
 * is not known yet (a screenshot taken after the step). The first posted entry that fails to store
 * stops every entry posted after it; `throwIfFailed` reports it at the run's next step boundary.
 */
export class JournalWriter {
  readonly entries: JournalEntry[] = [];
  /** Each entry's JSON text, as handed to storage (same order as entries). */
  readonly texts: string[] = [];
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: JournalWriterOptions) {}

  private failure: { error: unknown } | undefined;

  append(draft: EntryDraft): Promise<JournalEntry> {
    const at = this.options.clock.now();
    const written = this.tail.then(() => {
      // After a posted entry failed, nothing is stored past the gap it left.
      this.throwIfFailed();
      return this.write(draft, at);
    });
    this.tail = written.catch(() => undefined);
    return written;
  }

  /**
   * Append without waiting: the entry is stored after every earlier one, once `draft` resolves. A
   * failure (of the draft or the store) is kept for `throwIfFailed`, and entries posted after it are
   * not stored.
   */
  post(draft: EntryDraft | Promise<EntryDraft>): void {
    const at = this.options.clock.now();
    const written = this.tail.then(async () => {
      if (this.failure) return;
      try {
        await this.write(await draft, at);
      } catch (error) {
        this.failure ??= { error };
      }
    });
    this.tail = written;
  }

  /** Throw the failure of a posted entry, if one failed. */
  throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }

  /** Wait for every queued append, then throw the failure of a posted entry, if one failed. */
  async drain(): Promise<void> {
    await this.tail;
    this.throwIfFailed();
  }

  get last(): JournalEntry | undefined {
    return this.entries[this.entries.length - 1];
  }

  private async write(draft: EntryDraft, at: string): Promise<JournalEntry> {
    const o = this.options;
    const seq = this.entries.length;
    const { entry, text } = sealEntryText({
      ...o.mask.mask(draft),
      at,
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
