import { describe, expect, it } from 'vitest';
import { createConfirmGate, formatEffectSummary } from '../../../cli/confirm.js';
import type { EffectSummary } from '../../../src/engine/types.js';
import { memoryIO } from './io-helpers.js';

const outward: EffectSummary = {
  outward: true,
  steps: [
    { step: 'get', tool: 'http/request@1.0.0', capabilities: ['net'], targets: ['example.test'] },
    { step: 'save', tool: 'fs/write@1.0.0', capabilities: ['fs'], targets: ['out.txt'] },
    { step: 'hello', tool: 'core/template@1.0.0', capabilities: [], targets: [] },
  ],
  net_hosts: ['example.test'],
  fs_writes: ['out.txt'],
  spawns: [],
  browser: false,
};
const pure: EffectSummary = { outward: false, steps: [], net_hosts: [], fs_writes: [], spawns: [], browser: false };

describe('effect summary text', () => {
  it('names hosts, files and the outward steps only', () => {
    const text = formatEffectSummary(outward).join('\n');
    expect(text).toContain('network hosts: example.test');
    expect(text).toContain('file writes:   out.txt');
    expect(text).toContain('step save (fs/write@1.0.0): fs -> out.txt');
    expect(text).not.toContain('step hello');
    expect(text).not.toContain('spawns');
    expect(formatEffectSummary(pure)).toEqual(['outward effects: none (pure flow)']);
  });
});

describe('confirmation gate', () => {
  it('--yes gives the engine no confirm callback at all', () => {
    const { io } = memoryIO();
    expect(createConfirmGate(io, { yes: true, action: 'run x' }).confirm).toBeUndefined();
  });

  it('a pure summary passes without a word', async () => {
    const { io, err } = memoryIO();
    const gate = createConfirmGate(io, { yes: false, action: 'run x' });
    expect(await gate.confirm!(pure)).toBe(true);
    expect(err()).toBe('');
    expect(gate.refusal).toBeUndefined();
  });

  it('refuses without a terminal on stdin, never reading it', async () => {
    const { io, err } = memoryIO({ stdinTTY: false });
    const gate = createConfirmGate(io, { yes: false, action: 'run x' });
    expect(await gate.confirm!(outward)).toBe(false);
    expect(gate.refusal).toBe('no_tty');
    expect(gate.asked).toBe(false);
    expect(err()).toMatch(/refusing: stdin is not a terminal.*--yes/);
  });

  it('on a terminal, y means yes and anything else (or end of input) means no', async () => {
    for (const [answer, expected] of [
      ['y\n', true],
      ['YES\n', true],
      ['n\n', false],
      ['\n', false],
      ['', false],
    ] as const) {
      const { io, stdin, err } = memoryIO({ stdinTTY: true });
      const gate = createConfirmGate(io, { yes: false, action: 'run x' });
      const pending = gate.confirm!(outward);
      if (answer) stdin.write(answer);
      else stdin.end();
      expect(await pending).toBe(expected);
      expect(gate.asked).toBe(true);
      expect(gate.refusal).toBe(expected ? undefined : 'declined');
      expect(err()).toContain('Proceed? [y/N]');
    }
  });
});
