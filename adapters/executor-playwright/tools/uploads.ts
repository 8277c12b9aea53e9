import { readFile, realpath } from 'node:fs/promises';
import { extname, isAbsolute, posix, relative, resolve, sep } from 'node:path';
import { digestBytes } from '../../../src/canonical.js';
import { toolError } from '../../../src/tools/contract.js';
import type { Tool, ToolContext } from '../../../src/tools/types.js';
import { COMPONENT } from './step.js';

/** The files an upload step sets: read from the run's file source or the project folder, checked against their recorded digest. */

const MEDIA_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.zip': 'application/zip',
};

export type FileArg = string | { path: string; digest?: string; name?: string };

export async function loadUpload(file: FileArg, ctx: ToolContext): Promise<{ name: string; mimeType: string; buffer: Buffer; digest: string }> {
  const spec = typeof file === 'string' ? { path: file } : file;
  if (ctx.files) return checkUpload(spec, await readFromSource(spec, ctx));
  const root = resolve(ctx.cwd);
  const full = resolve(root, spec.path);
  const outside = (p: string, base: string) => {
    const rel = relative(base, p);
    return rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel);
  };
  if (isAbsolute(spec.path) || outside(full, root)) {
    throw toolError('upload_path_outside_root', `[flowctl] [${COMPONENT}] upload: "${spec.path}" is not inside the project folder`, {
      retryable: false,
      data: { path: spec.path },
    });
  }
  let buffer: Buffer;
  try {
    const real = await realpath(full);
    if (outside(real, await realpath(root))) {
      throw toolError('upload_path_outside_root', `[flowctl] [${COMPONENT}] upload: "${spec.path}" resolves outside the project folder`, {
        retryable: false,
        data: { path: spec.path },
      });
    }
    buffer = await readFile(real);
  } catch (err) {
    if ((err as { code?: string }).code === 'upload_path_outside_root') throw err;
    throw toolError('upload_file_missing', `[flowctl] [${COMPONENT}] upload: cannot read "${spec.path}" (${(err as NodeJS.ErrnoException).code ?? 'error'})`, {
      retryable: false,
      data: { path: spec.path },
    });
  }
  return checkUpload(spec, buffer);
}

/**
 * Upload reads the run's file source when it has one (`ctx.files`), the project folder otherwise: its
 * contract's `fs` is only needed for the folder (ToolFlags.filesFromSource, docs/tools.md "Policy").
 */
export const readsFilesFromSource = (tool: Tool): Tool => ({ ...tool, flags: { ...tool.flags, filesFromSource: true } });

/** The host's files (RunOptions.files): no disk read at all. */
async function readFromSource(spec: { path: string; digest?: string }, ctx: ToolContext): Promise<Buffer> {
  let bytes: Uint8Array | undefined;
  try {
    bytes = await ctx.files!.read(spec.digest === undefined ? { path: spec.path } : { path: spec.path, digest: spec.digest });
  } catch {
    // The host's store failed (not "no such file"): worth another attempt. Its error stays out of the journal.
    throw toolError('upload_file_unavailable', `[flowctl] [${COMPONENT}] upload: "${spec.path}" could not be read from the host's file store`, {
      retryable: true,
      data: { path: spec.path },
    });
  }
  if (bytes === undefined) {
    throw toolError('upload_file_missing', `[flowctl] [${COMPONENT}] upload: no file "${spec.path}" here`, { retryable: false, data: { path: spec.path } });
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function checkUpload(
  spec: { path: string; digest?: string; name?: string },
  buffer: Buffer,
): { name: string; mimeType: string; buffer: Buffer; digest: string } {
  const digest = digestBytes(buffer);
  if (spec.digest !== undefined && spec.digest !== digest) {
    throw toolError('upload_digest_mismatch', `[flowctl] [${COMPONENT}] upload: "${spec.path}" changed since it was recorded`, {
      retryable: false,
      data: { path: spec.path, expected: spec.digest, actual: digest },
    });
  }
  const name = spec.name ?? posix.basename(spec.path.replaceAll('\\', '/'));
  return { name, mimeType: MEDIA_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream', buffer, digest };
}
