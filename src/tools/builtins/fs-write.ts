import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { digestBytes, prettyJson } from '../../canonical.js';
import { abortError, defineTool, toolError } from '../contract.js';
import { removeStaleTemps } from '../../util/atomic-write.js';
import { assertRealPathInside, rootedPath } from './fs-paths.js';

/**
 * `fs/write`: write one file under the root (ctx.cwd), atomically: the bytes go to a temporary file in
 * the same directory, which is then renamed over the target, so readers see the old or the new file,
 * never a part. A symlink at the target is replaced, not written through. Missing parent directories
 * are created unless `mkdirs: false`. `json` writes pretty JSON with sorted keys and a final newline.
 * Reports the effect `{kind: 'fs', target: <relative path>}` before writing.
 * Errors: `fs_bad_path`, `fs_path_outside_root`, `fs_not_found` (parent missing with mkdirs false), `fs_io`.
 */
interface WriteInput {
  path: string;
  content?: string;
  json?: unknown;
  encoding?: 'utf8' | 'base64';
  mkdirs?: boolean;
}
interface WriteOutput {
  path: string;
  bytes: number;
  digest: string;
}

const NAME = 'fs/write';
// Unique temp names without randomness: pid plus a per-process counter.
let tempCounter = 0;

export const fsWrite = defineTool<WriteInput, WriteOutput>(
  {
    ref: 'fs/write',
    version: '1.0.0',
    description: 'Write a file under the project (or sandbox) root atomically, from text, base64 or a JSON value.',
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', minLength: 1, description: 'Relative to the root; absolute paths and escapes are refused.' },
        content: { type: 'string' },
        json: { description: 'Written as pretty JSON with sorted keys.' },
        encoding: { enum: ['utf8', 'base64'], default: 'utf8', description: 'How `content` is encoded.' },
        mkdirs: { type: 'boolean', default: true, description: 'Create missing parent directories.' },
      },
      required: ['path'],
      oneOf: [{ required: ['content'] }, { required: ['json'] }],
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Normalized, relative to the root.' },
        bytes: { type: 'integer' },
        digest: { type: 'string', description: 'sha256 of the bytes written.' },
      },
      required: ['path', 'bytes', 'digest'],
      additionalProperties: false,
    },
    capabilities: ['fs'],
  },
  async (input, ctx) => {
    if (ctx.signal.aborted) throw abortError(ctx.signal, NAME);
    const target = rootedPath(NAME, ctx.cwd, input.path);
    if (target.rel === '.')
      throw toolError('fs_bad_path', `[flowctl] [${NAME}] cannot write the root itself`, { retryable: false, data: { path: input.path } });
    await assertRealPathInside(NAME, ctx.cwd, target, input.path);
    const bytes =
      input.json !== undefined
        ? Buffer.from(`${prettyJson(input.json)}\n`, 'utf8')
        : Buffer.from(input.content ?? '', input.encoding === 'base64' ? 'base64' : 'utf8');

    ctx.effect({ kind: 'fs', target: target.rel });
    const dir = dirname(target.abs);
    const temp = join(dir, `.${basename(target.abs)}.${process.pid}.${++tempCounter}.tmp`);
    try {
      if (input.mkdirs !== false) await mkdir(dir, { recursive: true });
      // Temps of writers killed before their rename (pid not alive) go on the next write here.
      await removeStaleTemps(dir, ['dot']).catch(() => undefined);
      await writeFile(temp, bytes, { flag: 'wx' });
      await rename(temp, target.abs);
    } catch (e) {
      await rm(temp, { force: true }).catch(() => undefined);
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        throw toolError('fs_not_found', `[flowctl] [${NAME}] the parent directory of "${target.rel}" does not exist`, {
          retryable: false,
          data: { path: target.rel },
          cause: e,
        });
      }
      if (code === undefined) throw e;
      throw toolError('fs_io', `[flowctl] [${NAME}] cannot write "${target.rel}": ${code}`, { retryable: false, data: { path: target.rel }, cause: e });
    }
    return { path: target.rel, bytes: bytes.byteLength, digest: digestBytes(bytes) };
  },
);
