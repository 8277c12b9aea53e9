import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { constants } from 'node:os';
import type { FlowError } from '../../errors.js';
import { abortError, defineTool, toolError } from '../contract.js';
import type { ToolContext } from '../types.js';
import { assertRealPathInside, rootedPath } from './fs-paths.js';

/**
 * `shell/exec`: run one program with arguments, no shell: `command` is looked up on PATH (or is a path
 * relative to `cwd`), `args` are passed as they are, nothing is interpolated.
 *
 * - `cwd` is relative to the root (ctx.cwd) and confined to it; `env` is merged over the process's.
 * - The child runs in its own process group; on `timeout_ms`, on abort of `ctx.signal` and when the
 *   output passes `max_output_bytes` (default 8 MiB per stream) the whole group is killed (SIGKILL).
 * - A child killed by a signal reports `exit_code` 128 + the signal number, like a shell.
 * - Reports the effect `{kind: 'spawn', target: command}` before spawning.
 * Errors: `exec_failed` (non-zero exit, unless `allow_failure`), `exec_timeout` (retryable),
 * `exec_not_found`, `exec_spawn_failed`, `exec_bad_cwd`, `exec_output_too_large`, plus the path errors
 * of fs tools for `cwd`; an abort of `ctx.signal` throws its reason.
 */
interface ExecInput {
  command: string;
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  timeout_ms?: number;
  input?: string;
  allow_failure?: boolean;
  max_output_bytes?: number;
}
interface ExecOutput {
  exit_code: number;
  stdout: string;
  stderr: string;
}

const NAME = 'shell/exec';
const DEFAULT_MAX_OUTPUT = 8 * 1024 * 1024;
const TAIL = 4096;

const fail = (code: string, message: string, retryable: boolean, data?: Record<string, unknown>, cause?: unknown) =>
  toolError(code, `[flowctl] [${NAME}] ${message}`, { retryable, data, cause });

async function resolveCwd(input: ExecInput, ctx: ToolContext): Promise<string> {
  if (input.cwd === undefined) return ctx.cwd;
  const target = rootedPath(NAME, ctx.cwd, input.cwd);
  await assertRealPathInside(NAME, ctx.cwd, target, input.cwd);
  const info = await stat(target.abs).catch(() => undefined);
  if (!info?.isDirectory()) throw fail('exec_bad_cwd', `cwd "${target.rel}" is not a directory`, false, { cwd: target.rel });
  return target.abs;
}

function run(input: ExecInput, ctx: ToolContext, cwd: string): Promise<ExecOutput> {
  const maxOutput = input.max_output_bytes ?? DEFAULT_MAX_OUTPUT;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(input.command, input.args ?? [], {
      cwd,
      env: { ...process.env, ...input.env },
      stdio: 'pipe',
      detached: process.platform !== 'win32',
      windowsHide: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const size = { out: 0, err: 0 };
    // The first reason to stop wins; the promise settles only on 'close', once the pipes are drained.
    let stopped: FlowError | undefined;

    const killGroup = () => {
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // already gone
      }
    };
    const stop = (reason: FlowError) => {
      stopped ??= reason;
      killGroup();
    };
    const timer =
      input.timeout_ms === undefined
        ? undefined
        : setTimeout(
            () =>
              stop(fail('exec_timeout', `"${input.command}" ran longer than ${input.timeout_ms} ms and was killed`, true, { timeout_ms: input.timeout_ms })),
            input.timeout_ms,
          );
    const onAbort = () => stop(abortError(ctx.signal, NAME));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    // The signal may have aborted while the cwd was being checked, before the listener existed.
    if (ctx.signal.aborted) onAbort();

    const collect = (chunks: Buffer[], key: 'out' | 'err') => (chunk: Buffer) => {
      size[key] += chunk.byteLength;
      if (size[key] > maxOutput) {
        stop(fail('exec_output_too_large', `"${input.command}" wrote more than ${maxOutput} bytes to std${key}`, false, { max_output_bytes: maxOutput }));
        return;
      }
      chunks.push(chunk);
    };
    child.stdout.on('data', collect(out, 'out'));
    child.stderr.on('data', collect(err, 'err'));
    // A child that exits without reading its stdin makes our write fail with EPIPE: not our error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input.input ?? '');

    let spawnError: NodeJS.ErrnoException | undefined;
    child.on('error', (e: NodeJS.ErrnoException) => {
      spawnError ??= e;
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      if (stopped) return reject(stopped);
      if (spawnError) {
        if (spawnError.code === 'ENOENT')
          return reject(fail('exec_not_found', `command "${input.command}" not found`, false, { command: input.command }, spawnError));
        return reject(
          fail('exec_spawn_failed', `cannot start "${input.command}": ${spawnError.code ?? spawnError.message}`, false, { command: input.command }, spawnError),
        );
      }
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      const exit_code = code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
      if (exit_code !== 0 && input.allow_failure !== true) {
        return reject(
          fail('exec_failed', `"${input.command}" exited with code ${exit_code}${stderr ? `: ${stderr.slice(-200).trim()}` : ''}`, false, {
            exit_code,
            signal: signal ?? undefined,
            stdout: stdout.slice(-TAIL),
            stderr: stderr.slice(-TAIL),
          }),
        );
      }
      resolvePromise({ exit_code, stdout, stderr });
    });
  });
}

export const shellExec = defineTool<ExecInput, ExecOutput>(
  {
    ref: 'shell/exec',
    version: '1.0.0',
    description: 'Run a program with arguments (no shell) and return its exit code, stdout and stderr.',
    input_schema: {
      type: 'object',
      properties: {
        command: { type: 'string', minLength: 1, description: 'Program name on PATH, or a path relative to cwd.' },
        args: { type: 'array', items: { type: 'string' }, default: [] },
        cwd: { type: 'string', minLength: 1, description: 'Working directory relative to the root. Default: the root.' },
        env: { type: 'object', additionalProperties: { type: 'string' }, description: 'Merged over the environment.' },
        timeout_ms: { type: 'integer', minimum: 1, description: 'Kill after this long. Default: the step timeout only.' },
        input: { type: 'string', description: 'Written to stdin, which is then closed. Default: empty.' },
        allow_failure: { type: 'boolean', default: false, description: 'A non-zero exit is an output, not an error.' },
        max_output_bytes: { type: 'integer', minimum: 0, description: 'Per stream. Default 8388608.' },
      },
      required: ['command'],
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      properties: {
        exit_code: { type: 'integer' },
        stdout: { type: 'string' },
        stderr: { type: 'string' },
      },
      required: ['exit_code', 'stdout', 'stderr'],
      additionalProperties: false,
    },
    capabilities: ['spawn'],
  },
  async (input, ctx) => {
    if (ctx.signal.aborted) throw abortError(ctx.signal, NAME);
    const cwd = await resolveCwd(input, ctx);
    ctx.effect({ kind: 'spawn', target: input.command });
    return run(input, ctx, cwd);
  },
);
