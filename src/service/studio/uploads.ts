import { digestBytes } from '../../canonical.js';
import { isFlowError } from '../../errors.js';
import { checkOps } from '../../record/ops.js';
import type { StudioFileChooser } from '../../ports/studio.js';
import type { CaptureAppender } from './capture-append.js';
import { plainMessage, type StudioSession } from './session.js';

/**
 * Uploads in the studio: the page's file chooser is intercepted and offered to the viewer
 * (`file_chooser`), whose files arrive announced (`files`) then in base64 chunks (`file_data`); once
 * all bytes are in, the page's input gets them and the `upload` op is captured with its files attached.
 */

/** What one file chooser may be given: at most this many bytes in all, in at most this many files. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
export const MAX_UPLOAD_FILES = 10;
/** One `file_data` message carries at most this many bytes (base64 of them fits a 64 KiB message). */
export const MAX_FILE_CHUNK_BYTES = 45 * 1024;

/** An upload file name: what the chooser reports (`File.name`), no folders, no control characters. */
export function validFileName(name: unknown): name is string {
  return typeof name === 'string' && name.length >= 1 && name.length <= 200 && name !== '.' && name !== '..' && !/[/\\\u0000-\u001f\u007f]/.test(name);
}

export interface StudioUploads {
  /** The page opened a file chooser. */
  onFileChooser(fc: StudioFileChooser): void;
  /** A transfer is under way (its chunks are not counted against the message rate). */
  transferring(): boolean;
  /** The viewer's `files` message: the list, as sent (checked here). */
  files(list: unknown): void;
  /** The viewer's `file_data` message: the chunk, as sent (checked here). */
  fileData(data: unknown): void;
  /** The viewer's `file_cancel`. */
  cancel(): void;
}

export function createUploads(session: StudioSession, capture: CaptureAppender): StudioUploads {
  const invalid = (message: string) => session.send({ type: 'error', error: 'invalid_message', message });
  let chooser: { target: Record<string, unknown> } | null = null;
  let transfer: { files: { name: string; size: number }[]; total: number; chunks: Buffer[]; received: number } | null = null;

  /** The transfer is complete: give the chooser its files, then capture the upload (its files attached). */
  const finishUpload = async () => {
    const t = transfer!;
    const c = chooser!;
    transfer = null;
    chooser = null;
    const all = Buffer.concat(t.chunks);
    let at = 0;
    const files = t.files.map((f) => {
      const bytes = new Uint8Array(all.subarray(at, (at += f.size)));
      return { name: f.name, bytes, digest: digestBytes(bytes) };
    });
    try {
      await session.page!.setFiles(files.map((f) => ({ name: f.name, bytes: f.bytes })));
    } catch (err) {
      return session.notice(
        `the files could not be given to the page (${isFlowError(err) ? plainMessage(err.message) : 'its file input is gone'}): nothing was captured`,
      );
    }
    const names = files.map((f) => f.name);
    capture.append({ kind: 'upload', target: c.target, files: names.length === 1 ? names[0] : names }, undefined, files);
  };

  return {
    onFileChooser(fc) {
      transfer = null;
      chooser = null;
      const target = fc.target;
      if (target === null || typeof target !== 'object' || checkOps([{ kind: 'upload', target, files: 'f' }]).issues.length > 0) {
        session.page?.cancelFileChooser();
        return session.notice(
          'the page opened a file chooser that cannot be captured (a file input inside a frame, or one with no locator): nothing was uploaded',
        );
      }
      chooser = { target: target as Record<string, unknown> };
      session.send({
        type: 'file_chooser',
        multiple: fc.multiple,
        accept: fc.accept,
        max_bytes: MAX_UPLOAD_BYTES,
        max_files: fc.multiple ? MAX_UPLOAD_FILES : 1,
      });
    },
    transferring: () => transfer !== null,
    files(list) {
      if (!chooser) return invalid("no file chooser is open: click the page's file input first");
      if (!Array.isArray(list) || list.length === 0 || list.length > MAX_UPLOAD_FILES)
        return invalid(`files must list 1 to ${MAX_UPLOAD_FILES} files {name, size}`);
      const files: { name: string; size: number }[] = [];
      for (const f of list as { name?: unknown; size?: unknown }[]) {
        if (f === null || typeof f !== 'object' || !validFileName(f.name))
          return invalid('a file name is 1 to 200 characters, with no / \\ or control characters');
        if (typeof f.size !== 'number' || !Number.isSafeInteger(f.size) || f.size < 0) return invalid('a file size is a whole number of bytes');
        if (files.some((x) => x.name === f.name)) return invalid(`two files are named ${JSON.stringify(f.name)}`);
        files.push({ name: f.name, size: f.size });
      }
      const total = files.reduce((n, f) => n + f.size, 0);
      if (total > MAX_UPLOAD_BYTES) {
        transfer = null;
        return session.send({
          type: 'error',
          error: 'file_too_large',
          message: `the files are ${total} bytes: at most ${MAX_UPLOAD_BYTES} bytes (10 MiB) in all`,
        });
      }
      transfer = { files, total, chunks: [], received: 0 };
      if (total === 0) void finishUpload();
    },
    fileData(text) {
      const t = transfer;
      if (!t) return invalid('file_data comes after a files message, for an open file chooser');
      if (typeof text !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
        transfer = null;
        return invalid('file_data.data must be base64; the transfer was dropped: send the files again');
      }
      const bytes = Buffer.from(text, 'base64');
      if (bytes.byteLength > MAX_FILE_CHUNK_BYTES || t.received + bytes.byteLength > t.total) {
        transfer = null;
        return invalid(`more bytes than announced, or a chunk over ${MAX_FILE_CHUNK_BYTES} bytes: the transfer was dropped`);
      }
      t.chunks.push(bytes);
      t.received += bytes.byteLength;
      if (t.received === t.total) void finishUpload();
    },
    cancel() {
      transfer = null;
      chooser = null;
      session.page?.cancelFileChooser();
    },
  };
}
