import type { Issue } from './errors.js';

/**
 * Limits every request of the hosted service meets before a route sees it (docs/hosted-api.md,
 * "Requests and errors"), for the JSON routes (hosted-service.ts, bodyGuard) and MCP alike.
 */

/**
 * Deepest nesting of arrays and objects a body may have: code that recurses over values
 * (serializers, validators, the secret mask) overflows its stack on a deep enough one, and no
 * route's body needs a tenth of this.
 */
export const MAX_BODY_DEPTH = 64;

/*
 * U+0000 (NUL): Postgres stores none in `text` or `jsonb`, so a string carrying one fails the
 * statement that writes or looks it up. The service refuses it at the edge with 422
 * `invalid_request` (code `nul_character`) instead.
 */

const MAX_ISSUES = 20;
const MESSAGE = 'must not contain the NUL character (U+0000)';

/** Every string and key of a parsed JSON body that holds a NUL, as issues (at most 20). */
export function nulIssues(value: unknown, path: (string | number)[] = [], out: Issue[] = []): Issue[] {
  if (out.length >= MAX_ISSUES) return out;
  if (typeof value === 'string') {
    if (value.includes('\u0000')) out.push({ path, message: MESSAGE, code: 'nul_character' });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => nulIssues(v, [...path, i], out));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) out.push({ path: [...path, k.replaceAll('\u0000', '\\u0000')], message: `key ${MESSAGE}`, code: 'nul_character' });
      nulIssues(v, [...path, k], out);
    }
  }
  return out;
}

/** Issues for a NUL in the path (`%00`, in a parameter) or in a query name or value. */
export function urlNulIssues(url: URL): Issue[] {
  const issues: Issue[] = [];
  if (/%00/.test(url.pathname)) issues.push({ path: ['path'], message: MESSAGE, code: 'nul_character' });
  for (const [k, v] of url.searchParams) {
    if (k.includes('\u0000') || v.includes('\u0000'))
      issues.push({ path: ['query', k.replaceAll('\u0000', '\\u0000')], message: MESSAGE, code: 'nul_character' });
  }
  return issues.slice(0, MAX_ISSUES);
}
