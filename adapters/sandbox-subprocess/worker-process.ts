import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, parse } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FlowError } from '../../src/errors.js';
import { WORKER_ENV_MARK, type CallMessage, type FromWorker } from './protocol.js';

/** Where this module is: a `.ts` file when run from sources (tests), a built file in dist otherwise. */
function here(): string {
  // The CJS build has __filename and an empty import.meta; ESM has import.meta.url.
  return typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url);
}

export interface WorkerEntry {
  /** The script to fork. */
  script: string;
  /** Node flags needed to load it (the `.js` -> `.ts` hook from sources). */
  execArgv: string[];
}

/**
 * From sources: `worker.ts` beside this file, loaded with Node's type stripping and dev-hooks.mjs.
 * From dist: `adapters/sandbox-subprocess-worker.js`, a tsup entry; this code may sit in dist/adapters/
 * (the adapter's own entry), in a chunk at dist/ (the core bundles it) or at dist/cli/ (the CLI does).
 */
export function locateWorker(): WorkerEntry {
  const file = here();
  const dir = dirname(file);
  if (file.endsWith('.ts')) {
    return { script: join(dir, 'worker.ts'), execArgv: ['--import', pathToFileURL(join(dir, 'dev-hooks.mjs')).href] };
  }
  const candidates = [
    join(dir, 'sandbox-subprocess-worker.js'),
    join(dir, 'adapters', 'sandbox-subprocess-worker.js'),
    join(dir, '..', 'adapters', 'sandbox-subprocess-worker.js'),
  ];
  const script = candidates.find((c) => existsSync(c));
  if (!script) {
    throw new FlowError('sandbox_worker_missing', `[flowctl] [sandbox-subprocess] worker script not found; looked at ${candidates.join(', ')}`, {
      data: { retryable: false, candidates },
    });
  }
  return { script, execArgv: [] };
}

function packageRoot(from: string): string {
  let dir = dirname(from);
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if (JSON.parse(readFileSync(manifest, 'utf8')).name === 'flowctl') return dir;
      } catch {
        // not ours; keep walking
      }
    }
    if (dir === parse(dir).root) return dirname(from);
    dir = dirname(dir);
  }
}

/** The nearest node_modules folder holding `pkg`, as resolved from this package. */
function modulesDirOf(pkg: string, from: string): string | undefined {
  try {
    let dir = dirname(createRequire(from).resolve(`${pkg}/package.json`));
    while (parse(dir).base !== 'node_modules' && dir !== parse(dir).root) dir = dirname(dir);
    return parse(dir).base === 'node_modules' ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Node's permission model confines the worker itself: it may read its own code and dependencies and the
 * sandbox root, write only the root, and spawn processes only when the tool declares `spawn`. Processes a
 * tool spawns are not under the permission model (they run with the worker's cwd, HOME and TMPDIR set
 * to the root and a minimal environment).
 */
export function permissionFlags(root: string, allowSpawn: boolean): string[] {
  const file = here();
  const reads = new Set([packageRoot(file), root]);
  for (const pkg of ['ajv', 'fast-json-stable-stringify']) {
    const dir = modulesDirOf(pkg, file);
    if (dir) reads.add(dir);
  }
  // `--permission` is stable from Node 22.13 and 23.5; Node 22.12 (our floor) only knows the experimental name.
  const flag = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';
  return [flag, ...[...reads].map((p) => `--allow-fs-read=${p}`), `--allow-fs-write=${root}`, ...(allowSpawn ? ['--allow-child-process'] : [])];
}

export function workerEnv(root: string): Record<string, string> {
  const env: Record<string, string> = { [WORKER_ENV_MARK]: '1', HOME: root, TMPDIR: root, TMP: root, TEMP: root };
  for (const key of ['PATH', 'LANG', 'LC_ALL', 'TZ', 'SYSTEMROOT']) {
    const v = process.env[key];
    if (v !== undefined) env[key] = v;
  }
  return env;
}

export interface WorkerCallOptions {
  root: string;
  allowSpawn: boolean;
  /** Kill the worker after this long: `sandbox_timeout`. */
  timeoutMs: number;
  /** Between asking the worker to abort and killing it. */
  graceMs: number;
  signal: AbortSignal;
  /** Abort reason to throw when `signal` aborts. */
  abortReason: () => Error;
  onMessage: (message: Exclude<FromWorker, { type: 'result' } | { type: 'ready' }>) => void;
  onSpawn?: (child: ChildProcess) => void;
}

/** Fork one worker, run one call, and settle once the worker has exited. */
export function callWorker(call: CallMessage, options: WorkerCallOptions): Promise<FromWorker & { type: 'result' }> {
  const entry = locateWorker();
  return new Promise((resolvePromise, reject) => {
    const child = fork(entry.script, [], {
      cwd: options.root,
      env: workerEnv(options.root),
      execArgv: [...entry.execArgv, ...permissionFlags(options.root, options.allowSpawn)],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'json',
    });
    options.onSpawn?.(child);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-4096);
    });
    let result: (FromWorker & { type: 'result' }) | undefined;
    let stopped: Error | undefined;
    let called = false;
    let killTimer: NodeJS.Timeout | undefined;

    // A running call gets the chance to stop what it started (a tool kills its own process group);
    // a worker that has not started the call yet, or ignores the request, is killed.
    const stop = (reason: Error) => {
      if (stopped || result) return;
      stopped = reason;
      if (!called || !child.connected) {
        child.kill('SIGKILL');
        return;
      }
      child.send({ type: 'abort' }, () => undefined);
      killTimer = setTimeout(() => child.kill('SIGKILL'), options.graceMs);
    };
    const timer = setTimeout(
      () =>
        stop(
          new FlowError('sandbox_timeout', `[flowctl] [sandbox-subprocess] ${call.ref} ran longer than ${options.timeoutMs} ms; the worker was killed`, {
            data: { retryable: true, timeout_ms: options.timeoutMs },
          }),
        ),
      options.timeoutMs,
    );
    const onAbort = () => stop(options.abortReason());
    options.signal.addEventListener('abort', onAbort, { once: true });

    child.on('message', (message: FromWorker) => {
      if (message.type === 'ready') {
        if (stopped || called) return;
        called = true;
        child.send(call);
      } else if (message.type === 'result') result = message;
      else if (!stopped) options.onMessage(message);
    });
    child.on('error', (err) => {
      stop(new FlowError('sandbox_crashed', `[flowctl] [sandbox-subprocess] worker failed: ${err.message}`, { data: { retryable: false }, cause: err }));
      child.kill('SIGKILL');
    });
    // 'close', not 'exit': it comes after the IPC channel and stderr are drained, so no message is lost.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      options.signal.removeEventListener('abort', onAbort);
      if (stopped) return reject(stopped);
      if (result) return resolvePromise(result);
      reject(
        new FlowError(
          'sandbox_crashed',
          `[flowctl] [sandbox-subprocess] worker exited (${signal ?? `code ${code}`}) without an answer${stderr ? `: ${stderr.trim()}` : ''}`,
          {
            data: { retryable: false, exit_code: code, signal, stderr },
          },
        ),
      );
    });
    if (options.signal.aborted) onAbort();
  });
}
