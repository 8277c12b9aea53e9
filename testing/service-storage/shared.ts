import { expect } from 'vitest';
import { isFlowError } from '../../src/errors.js';
import type { ServiceStorage } from '../../src/ports/service-storage.js';

export interface ServiceStorageConformanceOptions {
  /** Shown in the describe title. */
  name: string;
  /** A fresh, empty service storage. The suite calls init() and dispose() itself. */
  create: () => Promise<ServiceStorage>;
  /**
   * An independent instance over the same data (a second connection), so writes are checked through
   * a read path the writer does not share. Default: the same instance.
   */
  reopen?: (storage: ServiceStorage) => Promise<ServiceStorage>;
  /** Whether two transactions can really run at once (Postgres: yes; PGlite: one connection). */
  concurrentTransactions?: boolean;
}

export async function rejectsWith(promise: Promise<unknown>, code: string): Promise<unknown> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(isFlowError(caught), `expected FlowError ${code}, got ${String(caught)}`).toBe(true);
  expect((caught as { code: string }).code).toBe(code);
  return caught;
}

let counter = 0;
export const uid = (p: string) => `${p}-${process.pid}-${++counter}`;
export const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();

/** What every group of the suite shares: the storage under test (fresh per test) and its helpers. */
export interface Suite {
  readonly options: ServiceStorageConformanceOptions;
  /** The storage of the running test (a fresh one per test). */
  readonly storage: ServiceStorage;
  /** init() a storage and dispose() it after the test. */
  open(s: ServiceStorage): Promise<ServiceStorage>;
  /** A second instance over the same data (options.reopen), or the same one. */
  independent(): Promise<ServiceStorage>;
  /** An org with `owners` owners then `members` members, each a new user. */
  seedOrg(owners: number, members?: number): Promise<{ org: { id: string; name: string; created_at: string }; users: string[] }>;
}
