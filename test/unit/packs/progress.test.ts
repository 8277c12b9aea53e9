import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { packProgress } from '../../../cli/commands/registry.js';
import type { CliIO } from '../../../cli/io.js';

function io(tty: boolean): { io: CliIO; text: () => string } {
  const stderr = Object.assign(new PassThrough(), { isTTY: tty });
  let text = '';
  stderr.setEncoding('utf8').on('data', (d: string) => (text += d));
  const out = new PassThrough();
  return { io: { cwd: '/', env: {}, stdout: out, stderr, stdin: new PassThrough() }, text: () => text };
}

describe('pack progress', () => {
  it('rewrites one counter line on a terminal and clears it at the end', async () => {
    const t = io(true);
    const p = packProgress(t.io, 'mirror pull');
    p.onProgress!(1, 3, 'a@1.0.0');
    p.onProgress!(3, 3, 'c@1.0.0');
    p.done();
    await new Promise((r) => setImmediate(r));
    expect(t.text()).toBe('\r\x1b[2Kmirror pull 1/3\r\x1b[2Kmirror pull 3/3\r\x1b[2K');
  });

  it('prints nothing when stderr is not a terminal', async () => {
    const t = io(false);
    const p = packProgress(t.io, 'install');
    expect(p.onProgress).toBeUndefined();
    p.done();
    await new Promise((r) => setImmediate(r));
    expect(t.text()).toBe('');
  });
});
