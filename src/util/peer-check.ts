// Optional peers (docs/library.md, "Optional peers"): the heavy dependency of an adapter or of the
// hosted service is an optional peer dependency of the package, installed by whoever uses that part.
// An entry that needs peers checks them before it loads its code (scripts/peer-entries.mjs writes
// that small wrapper around each such entry of dist/), so a missing peer fails at import time with
// one error naming every package to install, not with an ERR_MODULE_NOT_FOUND from a deep chunk.
// The CLI maps a command's failed import the same way (peerErrorFrom).
import { FlowError } from '../errors.js';

/** Peer package name -> the specifiers the entry's code imports from it (e.g. `hono`, `hono/route`). */
export type PeerSpecifiers = Readonly<Record<string, readonly string[]>>;

/** The error for an entry used without its peers: FlowError `missing_peer`, `data.install` is the command. */
export function missingPeerError(entry: string, missing: readonly string[], cause?: unknown): FlowError {
  const names = missing.map((name) => `"${name}"`).join(', ');
  const install = `npm install ${missing.join(' ')}`;
  const noun = missing.length === 1 ? 'the optional peer' : 'the optional peers';
  return new FlowError('missing_peer', `${entry} needs ${noun} ${names}: ${install}`, { data: { entry, missing: [...missing], install }, cause });
}

function notFound(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

/**
 * Throws missingPeerError when a peer of `entry` cannot be resolved. `resolve` is the caller's own
 * resolver (`import.meta.resolve` in ES modules, `require.resolve` in CommonJS), so the peers are
 * looked up from where the entry is installed, as its imports would be.
 */
export function checkPeers(entry: string, peers: PeerSpecifiers, resolve: (specifier: string) => unknown): void {
  const missing: string[] = [];
  for (const [name, specifiers] of Object.entries(peers)) {
    for (const specifier of specifiers) {
      try {
        resolve(specifier);
      } catch (err) {
        // Only "not found" means missing: another error (a subpath this condition does not export)
        // still found the package, and the import itself will say what is wrong.
        if (!notFound(err)) continue;
        missing.push(name);
        break;
      }
    }
  }
  if (missing.length > 0) throw missingPeerError(entry, missing);
}

/** The package a "cannot find" error names: `pg` for `Cannot find package 'pg' imported from ...`. */
export function missingPackageOf(err: unknown): string | undefined {
  if (!notFound(err)) return undefined;
  const message = String((err as { message?: unknown }).message ?? '');
  const found = /Cannot find (?:package|module) '([^']+)'/.exec(message);
  if (!found?.[1] || found[1].startsWith('.') || found[1].startsWith('/') || found[1].startsWith('file:')) return undefined;
  const parts = found[1].split('/');
  return found[1].startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * Maps a failed dynamic import of one of `peers` to missingPeerError naming it; any other error is
 * returned unchanged. For code that loads a peer on demand (the browser of executor-playwright).
 */
export function peerErrorFrom(err: unknown, entry: string, peers: Iterable<string>): unknown {
  const name = missingPackageOf(err);
  if (name === undefined) return err;
  for (const peer of peers) if (peer === name) return missingPeerError(entry, [name], err);
  return err;
}
