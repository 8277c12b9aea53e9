import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { waitForLine } from '../helpers/child-line.mjs';
import { cronAt } from '../helpers/schedule-once.js';

// test/helpers/child-line.mjs: the benches' and crash tests' wait for a child's "ready" line.
const node = (script: string) => spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });

describe('waitForLine', () => {
  it('resolves with the first complete matching line, split across chunks, and keeps following the output', async () => {
    // The URL arrives in two writes; the line is matched only once it is complete.
    const child = node(
      `process.stdout.write('starting\\nlisten on http://127.0.0.1:'); setTimeout(() => { process.stdout.write('4567\\n'); console.log('after'); });`,
    );
    const found = await waitForLine(child, /on (http:\/\/\S+)$/, { what: 'the server' });
    expect([found.line, found.match[1]]).toEqual(['listen on http://127.0.0.1:4567', 'http://127.0.0.1:4567']);
    await new Promise((r) => child.once('close', r));
    expect(found.output()).toBe('starting\nlisten on http://127.0.0.1:4567\nafter\n');
  });

  it('takes a string the line must contain, on stderr', async () => {
    const child = node(`console.error('x'); console.error('the worker is ready now');`);
    const found = await waitForLine(child, 'ready', { stream: 'stderr' });
    expect([found.line, found.match.index]).toEqual(['the worker is ready now', 14]);
  });

  it('rejects when the child ends first, naming the line awaited, the exit code and the last output', async () => {
    const child = node(`console.log('boom: no database'); process.exit(3);`);
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    await expect(waitForLine(child, /^ready$/, { what: 'worker 1', alsoShow: () => `${err}stderr here` })).rejects.toThrow(
      /^worker 1 exited \(3\) before writing a line matching \/\^ready\$\/ on its stdout; last stdout:\nboom: no database\n\nalso:\nstderr here$/,
    );
  });

  it('reports a hang at its cap with the last output (the child never writes the line)', async () => {
    const child = node(`console.log('still starting'); setInterval(() => {}, 1000);`);
    try {
      await expect(waitForLine(child, 'ready', { capMs: 200 })).rejects.toThrow(
        /^hang: process \d+ wrote no line containing "ready" on its stdout within 200 ms/,
      );
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('cronAt (test/helpers/schedule-once.ts)', () => {
  it('names one second of the year in UTC', () => {
    expect(cronAt(new Date('2026-03-04T05:06:07.000Z'))).toBe('7 6 5 4 3 *');
  });
});
