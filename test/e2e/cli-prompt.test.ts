import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLOWCTL_BIN } from '../helpers/cli.js';
import { withTmux } from '../helpers/tmux.js';
import { flowctl, project } from './cli-run-helpers.js';

// The confirmation prompt in a real pseudo-terminal (tmux), and its refusal without one.
const cli = (...args: string[]) => ['node', FLOWCTL_BIN, ...args];

describe('confirmation prompt in a terminal', () => {
  it('answering n runs no outward step: the file is never written, exit 3', async () => {
    const dir = await project('files');
    await withTmux(cli('run', 'files'), { cwd: dir }, async (t) => {
      const screen = await t.waitFor(/Proceed\? \[y\/N\]/);
      expect(screen).toContain('run files has outward effects.');
      expect(screen).toMatch(/file writes: +out\/greeting\.txt/);
      // asked before the first outward step: nothing outward has happened yet
      expect(existsSync(join(dir, 'out'))).toBe(false);
      await t.send('n', 'Enter');
      const { code, screen: end } = await t.waitExit();
      expect(code).toBe(3);
      expect(end).toContain('not confirmed; no outward step ran');
    });
    expect(existsSync(join(dir, 'out', 'greeting.txt'))).toBe(false);
    const last = await flowctl(dir, ['inspect', 'last', '--json']);
    const run = JSON.parse(last.stdout);
    expect(run.status).toBe('canceled');
    expect(run.journal.some((e: { event: string; step?: string }) => e.event === 'step_started' && e.step === 'save')).toBe(false);
  });

  it('answering y runs the outward steps once, after one question', async () => {
    const dir = await project('files');
    await withTmux(cli('run', 'files', '--input', 'text=tty'), { cwd: dir }, async (t) => {
      await t.waitFor(/Proceed\? \[y\/N\]/);
      await t.send('y', 'Enter');
      const { code, screen } = await t.waitExit();
      expect(code).toBe(0);
      expect(screen.match(/Proceed\?/g)).toHaveLength(1);
      // a live progress line on a terminal: no plain per-step lines are left on screen
      expect(screen).not.toMatch(/flowctl: \[\d\/3\]/);
      expect(screen).toMatch(/flowctl: run [0-9a-f-]{36} succeeded \(files\)/);
    });
    expect(await readFile(join(dir, 'out', 'greeting.txt'), 'utf8')).toBe('pre tty');
  });

  it('--yes never prompts, even on a terminal', async () => {
    const dir = await project('files');
    await withTmux(cli('run', 'files', '--yes'), { cwd: dir }, async (t) => {
      const { code, screen } = await t.waitExit();
      expect(code).toBe(0);
      expect(screen).not.toContain('Proceed?');
      expect(screen).not.toContain('outward effects');
    });
    expect(existsSync(join(dir, 'out', 'greeting.txt'))).toBe(true);
  });

  it('a pure flow and --dry never ask', async () => {
    const dir = await project('hello', 'files');
    await withTmux(cli('run', 'hello'), { cwd: dir }, async (t) => {
      const { code, screen } = await t.waitExit();
      expect(code).toBe(0);
      expect(screen).toContain('Hello, world!');
      expect(screen).not.toContain('Proceed?');
    });
    await withTmux(cli('run', 'files', '--dry'), { cwd: dir }, async (t) => {
      const { code, screen } = await t.waitExit();
      expect(code).toBe(0);
      expect(screen).not.toContain('Proceed?');
    });
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('replay --rerun asks like run; --verify and hermetic replay never ask', async () => {
    const dir = await project('files');
    const first = await flowctl(dir, ['run', 'files', '--yes', '--json', '--record-journal', 'files.json']);
    expect(first.code, first.stderr).toBe(0);
    const id = JSON.parse(first.stdout).id;
    await import('node:fs/promises').then((fs) => fs.rm(join(dir, 'out'), { recursive: true }));
    await withTmux(cli('replay', id, '--rerun'), { cwd: dir }, async (t) => {
      await t.waitFor(/Proceed\? \[y\/N\]/);
      await t.send('n', 'Enter');
      expect((await t.waitExit()).code).toBe(3);
    });
    expect(existsSync(join(dir, 'out'))).toBe(false);
    for (const args of [
      ['replay', id, '--verify'],
      ['replay', 'files.json'],
      ['replay', 'last'],
    ]) {
      await withTmux(cli(...args), { cwd: dir }, async (t) => {
        const { code, screen } = await t.waitExit();
        expect(code, screen).toBe(0);
        expect(screen).not.toContain('Proceed?');
      });
    }
    expect(existsSync(join(dir, 'out'))).toBe(false);
    await withTmux(cli('replay', id, '--rerun'), { cwd: dir }, async (t) => {
      await t.waitFor(/Proceed\? \[y\/N\]/);
      await t.send('yes', 'Enter');
      const end = await t.waitExit();
      expect(end.code, JSON.stringify(end)).toBe(0);
    });
    expect(existsSync(join(dir, 'out', 'greeting.txt'))).toBe(true);
  });
});

describe('no terminal on stdin', () => {
  it('without --yes, refuses with a clear message before any outward step (exit 3)', async () => {
    const dir = await project('files');
    const r = await flowctl(dir, ['run', 'files']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/refusing: stdin is not a terminal/);
    expect(r.stderr).toMatch(/--yes/);
    expect(r.stderr).toMatch(/run [0-9a-f-]{36} canceled before its first outward step/);
    expect(r.stdout).toBe('');
    expect(existsSync(join(dir, 'out'))).toBe(false);
    // piping "y" does not count: there is no terminal to confirm on
    const piped = await flowctl(dir, ['run', 'files'], { input: 'y\n' });
    expect(piped.code).toBe(3);
    expect(existsSync(join(dir, 'out'))).toBe(false);
    const json = await flowctl(dir, ['run', 'files', '--json']);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout).status).toBe('canceled');
  });

  it('with --yes it runs; a pure flow runs without --yes', async () => {
    const dir = await project('files', 'hello');
    expect((await flowctl(dir, ['run', 'files', '--yes'])).code).toBe(0);
    expect(existsSync(join(dir, 'out', 'greeting.txt'))).toBe(true);
    expect((await flowctl(dir, ['run', 'hello'])).code).toBe(0);
  });

  it('replay --rerun without a terminal refuses too', async () => {
    const dir = await project('files');
    const first = await flowctl(dir, ['run', 'files', '--yes', '--json']);
    const id = JSON.parse(first.stdout).id;
    await import('node:fs/promises').then((fs) => fs.rm(join(dir, 'out'), { recursive: true }));
    const r = await flowctl(dir, ['replay', id, '--rerun']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/refusing/);
    expect(existsSync(join(dir, 'out'))).toBe(false);
    const yes = await flowctl(dir, ['replay', id, '--rerun', '--yes']);
    expect(yes.code, yes.stderr).toBe(0);
    expect(existsSync(join(dir, 'out', 'greeting.txt'))).toBe(true);
  });
});
