import { readFile, stat } from 'node:fs/promises';
import { FlowError, prefixed } from '../errors.js';
import { publishPack, type PublishResult } from './publish.js';
import { readPack, type BlobCache } from './read-pack.js';
import { openRegistry } from './registry-dir.js';
import { packId, packsLockSchema, zodIssues, type LoadedPack, type PackProblem, type PacksLock } from './types.js';
import type { ProgressFn } from './verify.js';

/** Parse and validate flowctl.packs.lock text (zod, exact shape of spec/engine.md). */
export function parsePacksLock(text: string, file = 'flowctl.packs.lock'): PacksLock {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new FlowError('packs_lock_invalid', prefixed('packs', `${file} is not JSON: ${(err as Error).message}`), { data: { file } });
  }
  const parsed = packsLockSchema.safeParse(json);
  if (!parsed.success) {
    const issues = zodIssues(parsed.error);
    throw new FlowError('packs_lock_invalid', prefixed('packs', `${file} is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`), {
      data: { file, issues },
    });
  }
  const seen = new Map<string, string>();
  for (const p of parsed.data.packs) {
    const id = packId(p.name, p.version);
    if (seen.has(id) && seen.get(id) !== p.digest) {
      throw new FlowError('packs_lock_invalid', prefixed('packs', `${file} pins ${id} twice with different digests`), { data: { file, pack: id } });
    }
    seen.set(id, p.digest);
  }
  return parsed.data as PacksLock;
}

export async function readPacksLock(path: string): Promise<PacksLock> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new FlowError('packs_lock_not_found', prefixed('packs', `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`), {
      data: { file: path },
    });
  }
  return parsePacksLock(text, path);
}

export interface InstallOptions {
  lock: PacksLock;
  /** The registry to fetch from (must exist). */
  from: string;
  /** The local registry to install into (created when missing; the CLI default is `.flowctl/registry`). */
  to: string;
  onProgress?: ProgressFn;
}

export interface InstallReport {
  installed: PublishResult[];
}

function toolKey(t: { ref: string; contract_digest: string }): string {
  return `${t.ref} ${t.contract_digest}`;
}

/** The lock pins exactly the manifest's tools: same refs, same contract digests. */
function lockToolProblems(pinned: PacksLock['packs'][number], pack: LoadedPack): PackProblem[] {
  const expected = pinned.tools.map(toolKey).sort();
  const actual = pack.manifest.tools.map(toolKey).sort();
  if (expected.join('\n') === actual.join('\n')) return [];
  const missing = expected.filter((k) => !actual.includes(k));
  const extra = actual.filter((k) => !expected.includes(k));
  return [
    {
      code: 'lock_mismatch',
      message: `tool contracts differ from the lock${missing.length ? `; pinned but absent: ${missing.join(', ')}` : ''}${extra.length ? `; present but not pinned: ${extra.join(', ')}` : ''}`,
      expected: expected.join(', '),
      actual: actual.join(', '),
    },
  ];
}

/**
 * Install the packs a lock pins: verify every one first (index digest = lock digest, manifest and
 * every blob re-hashed, tool contract digests = the lock's, no conflicting body already installed),
 * and only when all pass, publish each into `to`. Any failure is FlowError `install_failed` naming
 * each failing pack with expected and actual digests; nothing is written then.
 */
export async function installPacks(options: InstallOptions): Promise<InstallReport> {
  const source = await openRegistry(options.from);
  const targetExists = await stat(options.to).then(
    (s) => s.isDirectory(),
    () => false,
  );
  const existing = targetExists ? await openRegistry(options.to).catch(() => undefined) : undefined;
  const cache: BlobCache = new Map();
  const ready: LoadedPack[] = [];
  const failures: { pack: string; problems: PackProblem[] }[] = [];

  for (const pinned of options.lock.packs) {
    const id = packId(pinned.name, pinned.version);
    const problems: PackProblem[] = [];
    const listing = await source.readIndexEntry(pinned.name, pinned.version);
    if (!listing) {
      problems.push({ code: 'index_invalid', message: `${id} is not in ${options.from}`, expected: pinned.digest });
    } else if ('error' in listing) {
      problems.push({ code: 'index_invalid', message: listing.error, expected: pinned.digest });
    } else if (listing.entry.digest !== pinned.digest) {
      problems.push({ code: 'lock_mismatch', message: `registry digest differs from the lock`, expected: pinned.digest, actual: listing.entry.digest });
    } else {
      const read = await readPack(source, listing.entry, cache);
      if (!read.ok) problems.push(...read.problems);
      else {
        problems.push(...lockToolProblems(pinned, read.pack));
        if (!problems.length) ready.push(read.pack);
      }
    }
    const local = await existing?.readIndexEntry(pinned.name, pinned.version);
    if (local && 'entry' in local && local.entry.digest !== pinned.digest) {
      problems.push({ code: 'lock_mismatch', message: `${options.to} already holds a different body`, expected: pinned.digest, actual: local.entry.digest });
    }
    if (problems.length) failures.push({ pack: id, problems });
  }

  if (failures.length) {
    const lines = failures.map(
      (f) =>
        `${f.pack}: ${f.problems.map((p) => `${p.message}${p.expected ? ` (expected ${p.expected}${p.actual ? `, actual ${p.actual}` : ''})` : ''}`).join('; ')}`,
    );
    throw new FlowError('install_failed', prefixed('packs', `nothing installed; ${failures.length} pack(s) failed verification:\n  ${lines.join('\n  ')}`), {
      data: { packs: failures },
    });
  }

  const installed: PublishResult[] = [];
  const target = ready.length ? await openRegistry(options.to, { create: true }) : undefined;
  for (const pack of ready) {
    installed.push(await publishPack(target!, pack));
    options.onProgress?.(installed.length, ready.length, packId(pack.manifest.name, pack.manifest.version));
  }
  return { installed };
}
