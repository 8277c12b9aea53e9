import { FlowError } from '../errors.js';
import type { RunListQuery, RunRecord } from '../ports/storage.js';

/** Newest first: by started_at, then id, both descending. Shared by every storage adapter. */
export function compareRunsNewestFirst(a: RunRecord, b: RunRecord): number {
  if (a.started_at !== b.started_at) return a.started_at < b.started_at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * Apply a RunListQuery to runs already sorted newest first. `before` is a run id: only runs after
 * it in that order are kept (FlowError `not_found` when it is unknown). `limit` defaults to all.
 */
export function filterRunList(sorted: RunRecord[], query: RunListQuery = {}, component = 'storage'): RunRecord[] {
  let list = sorted;
  if (query.before !== undefined) {
    const at = list.findIndex((r) => r.id === query.before);
    if (at < 0) throw new FlowError('not_found', `[flowctl] [${component}] cursor run ${query.before} not found`);
    list = list.slice(at + 1);
  }
  if (query.flow_name !== undefined) list = list.filter((r) => r.flow_name === query.flow_name);
  if (query.status !== undefined) {
    const wanted = new Set(query.status);
    list = list.filter((r) => wanted.has(r.status));
  }
  if (query.limit !== undefined) {
    if (!Number.isInteger(query.limit) || query.limit < 0) {
      throw new FlowError('invalid_query', `[flowctl] [${component}] limit must be a non-negative integer, got ${String(query.limit)}`);
    }
    list = list.slice(0, query.limit);
  }
  return list;
}
