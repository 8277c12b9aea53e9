import { isDigest, prettyJson, type Digest } from '../canonical.js';
import { FlowError } from '../errors.js';
import { contractDigest } from './contract.js';
import { versionMatches } from './registry.js';
import type { Tool, ToolRegistry } from './types.js';
import { LOCK_FILE_NAME } from './lock-file-name.js';

/**
 * `flowctl.lock`: exactly `{entries: [{ref, version, contract_digest}]}` (spec/engine.md, "Lock files").
 * Written by `init` (empty) and by `compile` without `--check` for newly resolved tool versions.
 * Entries are sorted by ref, then version (numerically); the file is pretty JSON with sorted keys.
 */

export interface LockEntry {
  ref: string;
  version: string;
  contract_digest: Digest;
}

export interface LockFile {
  entries: LockEntry[];
}

export { LOCK_FILE_NAME };

export function emptyLock(): LockFile {
  return { entries: [] };
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Sorted by ref then version, duplicates (same ref and version) collapsed to the last one given. */
export function sortLock(lock: LockFile): LockFile {
  const byKey = new Map<string, LockEntry>();
  for (const e of lock.entries) byKey.set(`${e.ref}@${e.version}`, { ref: e.ref, version: e.version, contract_digest: e.contract_digest });
  const entries = [...byKey.values()].sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : compareVersions(a.version, b.version)));
  return { entries };
}

/** The file's bytes: sorted entries, pretty JSON with sorted keys, trailing newline. */
export function serializeLock(lock: LockFile): string {
  return `${prettyJson(sortLock(lock))}\n`;
}

/** Parse `flowctl.lock` text; FlowError `bad_lock` names what is wrong. */
export function parseLock(text: string, file = LOCK_FILE_NAME): LockFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new FlowError('bad_lock', `[flowctl] [lock] ${file} is not JSON: ${(err as Error).message}`, { cause: err });
  }
  const fail = (why: string): never => {
    throw new FlowError('bad_lock', `[flowctl] [lock] ${file}: ${why}; expected {"entries": [{"ref", "version", "contract_digest"}]}`);
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail('not an object');
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== 'entries' || !Array.isArray((value as LockFile).entries)) return fail('must have exactly one field, "entries" (a list)');
  const entries = (value as { entries: unknown[] }).entries.map((e, i) => {
    if (e === null || typeof e !== 'object' || Array.isArray(e)) return fail(`entries[${i}] is not an object`);
    const { ref, version, contract_digest, ...extra } = e as Record<string, unknown>;
    if (Object.keys(extra).length > 0) return fail(`entries[${i}] has unknown fields ${Object.keys(extra).join(', ')}`);
    if (typeof ref !== 'string' || ref === '') return fail(`entries[${i}].ref must be a non-empty string`);
    if (typeof version !== 'string' || !/^\d+\.\d+\.\d+$/.test(version)) return fail(`entries[${i}].version must be MAJOR.MINOR.PATCH`);
    if (!isDigest(contract_digest)) return fail(`entries[${i}].contract_digest must be sha256:<64 hex>`);
    return { ref, version, contract_digest };
  });
  return { entries };
}

// Contracts are frozen by defineTool, so a digest computed once per contract object stays true.
const digests = new WeakMap<object, Digest>();
function digestOfContract(tool: Tool): Digest {
  let d = digests.get(tool.contract);
  if (!d) {
    d = contractDigest(tool.contract);
    if (Object.isFrozen(tool.contract)) digests.set(tool.contract, d);
  }
  return d;
}

/** The outcome of resolving one `ref@range` against the registry and the lock. */
export type PinResolution =
  | { ok: true; tool: Tool; pin: LockEntry; fromLock: boolean }
  | { ok: false; code: 'unknown_tool' | 'lock_mismatch'; message: string };

/**
 * Resolve `ref@range`. When the lock has an entry for `ref` whose version matches `range` (the highest
 * such entry), that version is used and the registry's contract digest must equal the lock's.
 * Otherwise the highest matching version in the registry is used (a new pin).
 */
export function resolvePin(registry: ToolRegistry, lock: LockFile | undefined, ref: string, range: string): PinResolution {
  const locked = (lock?.entries ?? [])
    .filter((e) => e.ref === ref && versionMatches(e.version, range))
    .sort((a, b) => compareVersions(b.version, a.version))[0];
  if (locked) {
    const tool = registry.get(ref, locked.version);
    if (!tool) {
      return {
        ok: false,
        code: 'lock_mismatch',
        message: `${LOCK_FILE_NAME} pins ${ref}@${locked.version}, which no installed tool provides; install it or remove the entry to re-resolve`,
      };
    }
    const digest = digestOfContract(tool);
    if (digest !== locked.contract_digest) {
      return {
        ok: false,
        code: 'lock_mismatch',
        message: `the contract of ${ref}@${locked.version} changed: ${LOCK_FILE_NAME} pins ${locked.contract_digest}, the installed tool has ${digest}; review the change, then remove the entry to re-pin`,
      };
    }
    return { ok: true, tool, pin: { ...locked }, fromLock: true };
  }
  const tool = registry.resolve(ref, range);
  if (!tool) {
    const versions = registry
      .list()
      .filter((t) => t.contract.ref === ref)
      .map((t) => t.contract.version)
      .sort(compareVersions);
    return {
      ok: false,
      code: 'unknown_tool',
      message: versions.length ? `no version of ${ref} matches @${range} (available: ${versions.join(', ')})` : `unknown tool ${ref}${suggest(registry, ref)}`,
    };
  }
  return { ok: true, tool, pin: { ref, version: tool.contract.version, contract_digest: digestOfContract(tool) }, fromLock: false };
}

function suggest(registry: ToolRegistry, ref: string): string {
  const refs = [...new Set(registry.list().map((t) => t.contract.ref))].sort();
  const name = ref.split('/').pop() ?? ref;
  const close = refs.filter((r) => r.endsWith(`/${name}`) || r.includes(name));
  const list = close.length ? close : refs;
  return list.length ? ` (known tools: ${list.slice(0, 12).join(', ')})` : ' (no tools are registered)';
}

/** The lock with new pins added (sorted). */
export function addPins(lock: LockFile | undefined, pins: LockEntry[]): LockFile {
  return sortLock({ entries: [...(lock?.entries ?? []), ...pins] });
}
