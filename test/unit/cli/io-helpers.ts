import { PassThrough, Writable } from 'node:stream';
import type { CliIO } from '../../../cli/io.js';

/** A CliIO over real in-memory streams; `out()`/`err()` return what was written. */
export function memoryIO(options: { stdinTTY?: boolean; stderrTTY?: boolean; cwd?: string } = {}) {
  let out = '';
  let err = '';
  const stdout = new Writable({
    write(chunk, _enc, cb) {
      out += String(chunk);
      cb();
    },
  });
  const stderr = Object.assign(
    new Writable({
      write(chunk, _enc, cb) {
        err += String(chunk);
        cb();
      },
    }),
    {
      isTTY: options.stderrTTY ?? false,
      columns: 60,
    },
  );
  const stdin = Object.assign(new PassThrough(), { isTTY: options.stdinTTY ?? false });
  const io: CliIO = { cwd: options.cwd ?? process.cwd(), env: {}, stdout, stderr, stdin };
  return { io, stdin, out: () => out, err: () => err };
}
