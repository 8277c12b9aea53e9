import { open } from 'node:fs/promises';
import { digestBytes } from '../../canonical.js';
import { abortError, defineTool, toolError } from '../contract.js';
import { assertRealPathInside, rootedPath } from './fs-paths.js';

/**
 * `fs/read`: read one file under the root (ctx.cwd). `as`: `text` (UTF-8, default), `base64`, or `json`
 * (parsed). Declares `fs` but records no effect: reading changes nothing outside, and the effect
 * summary lists file writes. Errors: `fs_bad_path`, `fs_path_outside_root`, `fs_not_found`,
 * `fs_not_a_file`, `fs_too_large`, `fs_bad_json`, `fs_io`.
 */
interface ReadInput {
  path: string;
  as?: 'text' | 'base64' | 'json';
  max_bytes?: number;
}
interface ReadOutput {
  path: string;
  content: unknown;
  bytes: number;
  digest: string;
}

const NAME = 'fs/read';
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;

export const fsRead = defineTool<ReadInput, ReadOutput>(
  {
    ref: 'fs/read',
    version: '1.0.0',
    description: 'Read a file under the project (or sandbox) root as text, base64 or parsed JSON.',
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', minLength: 1, description: 'Relative to the root; absolute paths and escapes are refused.' },
        as: { enum: ['text', 'base64', 'json'], default: 'text' },
        max_bytes: { type: 'integer', minimum: 0, description: 'Largest file accepted. Default 10485760.' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Normalized, relative to the root.' },
        content: { description: 'A string for text and base64, the parsed value for json.' },
        bytes: { type: 'integer' },
        digest: { type: 'string', description: 'sha256 of the raw bytes.' },
      },
      required: ['path', 'content', 'bytes', 'digest'],
      additionalProperties: false,
    },
    capabilities: ['fs'],
  },
  async (input, ctx) => {
    if (ctx.signal.aborted) throw abortError(ctx.signal, NAME);
    const target = rootedPath(NAME, ctx.cwd, input.path);
    const fail = (code: string, message: string, cause?: unknown) =>
      toolError(code, `[flowctl] [${NAME}] ${message}`, { retryable: false, data: { path: target.rel }, cause });
    await assertRealPathInside(NAME, ctx.cwd, target, input.path);
    let handle;
    try {
      handle = await open(target.abs, 'r');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw fail('fs_not_found', `"${target.rel}" does not exist`, e);
      if (code === undefined) throw e;
      throw fail('fs_io', `cannot open "${target.rel}": ${code}`, e);
    }
    let bytes: Buffer;
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw fail('fs_not_a_file', `"${target.rel}" is not a regular file`);
      const max = input.max_bytes ?? DEFAULT_MAX_BYTES;
      if (stat.size > max) throw fail('fs_too_large', `"${target.rel}" has ${stat.size} bytes, more than ${max}`);
      bytes = await handle.readFile();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EISDIR') throw fail('fs_not_a_file', `"${target.rel}" is a directory`, e);
      throw e;
    } finally {
      await handle.close();
    }
    let content: unknown;
    if (input.as === 'base64') content = bytes.toString('base64');
    else {
      content = bytes.toString('utf8');
      if (input.as === 'json') {
        try {
          content = JSON.parse(content as string);
        } catch (e) {
          throw fail('fs_bad_json', `"${target.rel}" is not valid JSON: ${(e as Error).message}`, e);
        }
      }
    }
    return { path: target.rel, content, bytes: bytes.byteLength, digest: digestBytes(bytes) };
  },
);
