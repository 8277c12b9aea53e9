import { describe, expect, it } from 'vitest';
import { envSecretValues, exitCodeFor, maskedIO, maskText, printOutputValue, reportError } from '../../../cli/cli-output.js';
import { EXIT } from '../../../cli/io.js';
import { FlowError } from '../../../src/errors.js';
import { memoryIO } from './io-helpers.js';

describe('CLI output helpers', () => {
  it('maps error codes to exit codes', () => {
    expect(exitCodeFor('invalid_inputs')).toBe(EXIT.usage);
    expect(exitCodeFor('unknown_sandbox')).toBe(EXIT.usage);
    expect(exitCodeFor('compile_failed')).toBe(EXIT.usage);
    expect(exitCodeFor('replay_divergence')).toBe(EXIT.failed);
    expect(exitCodeFor('journal_chain_broken')).toBe(EXIT.failed);
    expect(exitCodeFor('refused')).toBe(EXIT.refused);
  });

  it('reports a FlowError on stderr, and as {error} JSON on stdout with --json; rethrows anything else', () => {
    const { io, out, err } = memoryIO();
    expect(reportError(io, new FlowError('invalid_inputs', 'bad', { data: { issues: [] } }), { json: true, command: 'run', details: ['  x'] })).toBe(2);
    expect(err()).toBe('flowctl run: bad\n  x\n');
    expect(JSON.parse(out())).toEqual({ error: { code: 'invalid_inputs', message: 'bad', data: { issues: [] } } });
    expect(() => reportError(io, new TypeError('bug'), { command: 'run' })).toThrow(TypeError);
  });

  it('prints a string output as is and anything else as sorted pretty JSON', () => {
    const { io, out } = memoryIO();
    printOutputValue(io, 'plain');
    printOutputValue(io, { b: 1, a: [true] });
    printOutputValue(io, undefined);
    expect(out()).toBe('plain\n{\n  "a": [\n    true\n  ],\n  "b": 1\n}\n');
  });

  it('masks the environment secrets (4+ characters, longest first) in everything written', () => {
    expect(envSecretValues({ FLOWCTL_SECRET_A: 'abc', FLOWCTL_SECRET_B: 'hunter22', FLOWCTL_SECRET_C: 'hunter22-long', OTHER: 'zzzzzz' })).toEqual([
      'hunter22-long',
      'hunter22',
    ]);
    expect(maskText('x hunter22-long y hunter22', ['hunter22-long', 'hunter22'])).toBe('x *** y ***');
    const mem = memoryIO();
    mem.io.env = { FLOWCTL_SECRET_PW: 's3cret-value' };
    const io = maskedIO(mem.io);
    io.stdout.write('out s3cret-value\n');
    io.stderr.write(Buffer.from('err s3cret-value\n'));
    expect(mem.out()).toBe('out ***\n');
    expect(mem.err()).toBe('err ***\n');
    expect(io.stderr.isTTY).toBe(false);
    // nothing to mask: the same streams
    const bare = memoryIO().io;
    expect(maskedIO(bare)).toBe(bare);
  });
});
