import { lstat, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep, win32 } from 'node:path';
import { toolError } from '../contract.js';

/**
 * Confinement of tool paths to a root (ctx.cwd): a path is relative, stays inside the root lexically,
 * and its real location (symlinks resolved) stays inside the root's real location.
 * A change to the file system between this check and the use (a race) is outside what it guards.
 */
export interface RootedPath {
  /** Absolute path (lexical, inside the root). */
  abs: string;
  /** The path relative to the root with `/` separators, as effects and outputs report it. */
  rel: string;
}

const fail = (tool: string, code: string, message: string, path: string) =>
  toolError(code, `[flowctl] [${tool}] ${message}`, { retryable: false, data: { path } });

function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/** Lexical checks only: not empty, no NUL, not absolute (POSIX or Windows form), no escape by `..`. */
export function rootedPath(tool: string, root: string, path: string): RootedPath {
  if (path === '' || path.includes('\0')) throw fail(tool, 'fs_bad_path', `invalid path ${JSON.stringify(path)}`, path);
  if (isAbsolute(path) || win32.isAbsolute(path)) {
    throw fail(tool, 'fs_path_outside_root', `absolute paths are refused: "${path}" (use a path relative to the root)`, path);
  }
  const abs = resolve(root, path);
  if (!inside(resolve(root), abs)) throw fail(tool, 'fs_path_outside_root', `"${path}" escapes the root`, path);
  return { abs, rel: relative(resolve(root), abs).split(sep).join('/') || '.' };
}

/** The real path of `abs` must stay inside the real root; for a missing path, its nearest existing ancestor's. */
export async function assertRealPathInside(tool: string, root: string, target: RootedPath, path: string): Promise<void> {
  const realRoot = await realpath(root);
  let probe = target.abs;
  // Walk up to the nearest existing ancestor; bounded by the path's depth.
  for (;;) {
    try {
      await lstat(probe);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      const parent = dirname(probe);
      if (parent === probe) break;
      probe = parent;
    }
  }
  let real: string;
  try {
    real = await realpath(probe);
  } catch (e) {
    // A dangling symlink: where it points is unknown territory, refuse it.
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw fail(tool, 'fs_path_outside_root', `"${path}" goes through a dangling symlink`, path);
    }
    throw e;
  }
  if (!inside(realRoot, real)) throw fail(tool, 'fs_path_outside_root', `"${path}" resolves outside the root through a symlink`, path);
}
