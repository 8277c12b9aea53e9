import { invalidRequest } from '../errors.js';

/**
 * Where a page of a list starts (the audit log, the executions index): the position its opaque
 * `cursor` query parameter names, undefined for the first page, and 422 `invalid_cursor` for a
 * cursor this API did not return.
 */
export function pageStart<T>(cursor: string | undefined, decode: (cursor: string) => T | undefined): T | undefined {
  if (cursor === undefined) return undefined;
  const at = decode(cursor);
  if (at === undefined) throw invalidRequest([{ path: ['cursor'], message: 'not a cursor this API returned', code: 'invalid_cursor' }]);
  return at;
}
