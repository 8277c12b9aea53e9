import type { Kysely } from 'kysely';
import type { JournalNotifier } from './journal-notifier.js';
import type { SqlDatabase } from './schema.js';

/** What every store of the SQL storage shares. */
export interface SqlContext {
  /** Queries through this are schema-qualified when a schema is configured. */
  readonly db: Kysely<SqlDatabase>;
  /** The configured Postgres schema, for raw SQL (sql-values.ts `table`). */
  readonly schema: string | undefined;
  /**
   * Postgres outside a transaction: run a statement as a named prepared statement (the group-commit
   * statements, the same text every time). Absent on PGlite and in a transaction: kysely runs it.
   */
  readonly prepared?: (text: string, values: readonly unknown[]) => Promise<unknown[]>;
  /** The NOTIFY channel appends signal on. */
  readonly channel: string;
  readonly notifier: JournalNotifier;
  /** Safety-net poll of a waiting watcher, in ms (notifications are the fast path). */
  readonly watchPollMs: number;
  /** Waits for init (migrations), then runs `fn`, turning any failure into a FlowError with a code. */
  guard<T>(op: string, fn: () => Promise<T>): Promise<T>;
}
