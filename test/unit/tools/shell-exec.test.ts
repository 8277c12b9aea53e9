import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FlowError } from '../../../src/errors.js';
import { shellExec } from '../../../src/tools/builtins/index.js';
import { createTestToolContext } from '../../../src/tools/testing-context.js';
import { waitGone, waitUntil, withGrowingLimit } from '../../helpers/wait.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowctl-exec-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const ctx = (overrides = {}) => createTestToolContext({ cwd: root, ...overrides });
const node = process.execPath;

describe('shell/exec', () => {
  it('runs a program with arguments, stdin and env, in the root, and reports a spawn effect', async () => {
    const c = ctx();
    const out = await shellExec.run(
      {
        command: node,
        args: [
          '-e',
          'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{console.log(JSON.stringify({cwd:process.cwd(),s,v:process.env.FLOWCTL_T,a:process.argv[1]}));console.error("warn")})',
          'arg with spaces; $(echo no)',
        ],
        env: { FLOWCTL_T: 'yes' },
        input: 'from stdin',
      },
      c,
    );
    expect(out).toMatchObject({ exit_code: 0, stderr: 'warn\n' });
    expect(JSON.parse((out as { stdout: string }).stdout)).toEqual({ cwd: root, s: 'from stdin', v: 'yes', a: 'arg with spaces; $(echo no)' });
    expect(c.effects).toEqual([{ kind: 'spawn', target: node }]);
  });

  it('does not interpolate through a shell', async () => {
    const out = await shellExec.run({ command: 'echo', args: ['$HOME', '`id`', '*'] }, ctx());
    expect(out).toMatchObject({ stdout: '$HOME `id` *\n' });
  });

  it('runs in a cwd relative to the root and refuses one outside it', async () => {
    await mkdir(join(root, 'sub'));
    expect(await shellExec.run({ command: 'pwd', cwd: 'sub' }, ctx())).toMatchObject({ stdout: `${join(root, 'sub')}\n` });
    await expect(shellExec.run({ command: 'pwd', cwd: '..' }, ctx())).rejects.toMatchObject({ code: 'fs_path_outside_root' });
    await symlink(tmpdir(), join(root, 'tmp-link'));
    await expect(shellExec.run({ command: 'pwd', cwd: 'tmp-link' }, ctx())).rejects.toMatchObject({ code: 'fs_path_outside_root' });
    await expect(shellExec.run({ command: 'pwd', cwd: 'missing' }, ctx())).rejects.toMatchObject({ code: 'exec_bad_cwd' });
  });

  it('fails a non-zero exit with exec_failed, unless allow_failure', async () => {
    const args = ['-e', 'console.log("out");console.error("bad thing");process.exit(3)'];
    const err = await shellExec.run({ command: node, args }, ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FlowError);
    expect(err).toMatchObject({ code: 'exec_failed', data: { exit_code: 3, stdout: 'out\n', stderr: 'bad thing\n', retryable: false } });
    expect((err as Error).message).toContain('bad thing');
    expect(await shellExec.run({ command: node, args, allow_failure: true }, ctx())).toEqual({ exit_code: 3, stdout: 'out\n', stderr: 'bad thing\n' });
  });

  it('names a missing command', async () => {
    await expect(shellExec.run({ command: 'flowctl-no-such-command-xyz' }, ctx())).rejects.toMatchObject({ code: 'exec_not_found' });
  });

  it('kills the whole process group on timeout (exec_timeout, retryable)', async () => {
    // sh starts a grandchild and publishes its pid (write, then rename: the file is whole or absent),
    // then waits; the kill must take the grandchild too. The check needs the pid, so the limit must
    // outlast sh's start: an attempt whose limit struck first is run again with twice the limit.
    const script = 'sleep 30 </dev/null >/dev/null 2>&1 & echo $! > grandchild.tmp && mv grandchild.tmp grandchild.pid; wait';
    const pid = await withGrowingLimit(1000, async (limit) => {
      const err = await shellExec.run({ command: 'sh', args: ['-c', script], timeout_ms: limit }, ctx()).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'exec_timeout', data: { retryable: true, timeout_ms: limit } });
      if (!existsSync(join(root, 'grandchild.pid'))) return undefined;
      return Number((await readFile(join(root, 'grandchild.pid'), 'utf8')).trim());
    });
    // SIGKILL delivery and reaping are asynchronous: wait for the process to be gone (capped).
    await waitGone(pid, 'the grandchild to be killed with its group');
  });

  it('kills the child when ctx.signal aborts and throws the abort reason', async () => {
    const controller = new AbortController();
    const reason = new FlowError('run_canceled', 'canceled');
    const call = shellExec.run(
      { command: 'sh', args: ['-c', 'echo $$ > child.pid.tmp; mv child.pid.tmp child.pid; exec sleep 30'] },
      ctx({ signal: controller.signal }),
    );
    // Abort once the child is surely running: its pid file is there.
    await waitUntil(() => existsSync(join(root, 'child.pid')), { what: 'the child to write its pid' });
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    const pid = Number((await readFile(join(root, 'child.pid'), 'utf8')).trim());
    await waitGone(pid, 'the aborted child to be killed');
  });

  it('stops a child whose output passes max_output_bytes', async () => {
    await expect(
      shellExec.run({ command: node, args: ['-e', 'process.stdout.write("x".repeat(100000))'], max_output_bytes: 1000 }, ctx()),
    ).rejects.toMatchObject({ code: 'exec_output_too_large' });
  });
});
