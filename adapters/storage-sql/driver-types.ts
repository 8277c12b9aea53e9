// The database handles the SQL adapters take and hand out, typed by what flowctl uses of them: the
// published declarations then load neither @types/pg (pg ships no types) nor PGlite's own types
// (which need Emscripten's and Node's), and compile under `skipLibCheck: false` (docs/library.md).
// A real `new pg.Pool()` and `new PGlite()` fit them.

/** A pg Pool (`new pg.Pool(...)` from the `pg` package). */
export interface SqlPool {
  readonly options: object;
  connect(): Promise<unknown>;
  end(): Promise<void>;
}

/** Settings of a pg Client (pg's `ClientConfig`): `connectionString` and the rest as pg takes them. */
export type SqlClientConfig = Readonly<Record<string, unknown>> & { readonly connectionString?: string };

/** A PGlite instance (`new PGlite()` or `await PGlite.create()` from `@electric-sql/pglite`). */
export interface PGliteInstance {
  readonly closed: boolean;
  readonly ready: boolean;
  readonly waitReady: Promise<void>;
  readonly dataDir?: string;
  query(query: string, params?: unknown[], options?: never): Promise<unknown>;
  transaction(callback: (tx: unknown) => Promise<unknown>): Promise<unknown>;
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** The database under a SqlStorage, for adapters that share it (the pg-boss queue). */
export type SqlConnectionInfo = { driver: 'postgres'; clientConfig: SqlClientConfig } | { driver: 'pglite'; pglite: PGliteInstance };
