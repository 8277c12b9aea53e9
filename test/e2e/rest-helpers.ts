import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';

/** A long-running process spawned by a REST e2e test (flowctl serve, the engine-launcher example). */
export interface Spawned {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout+stderr; rejects after `boundMs` or on exit. */
  waitFor(pattern: RegExp, boundMs?: number): Promise<RegExpMatchArray>;
  /** Send `signal` and resolve with the exit code (SIGKILL after `boundMs`). */
  stop(signal?: NodeJS.Signals, boundMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnProcess(args: string[], options: { cwd: string; env?: Record<string, string | undefined> }): Spawned {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: '1', ...options.env })) if (v !== undefined) env[k] = v;
  const child = spawn(process.execPath, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    for (const l of listeners) l();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    for (const l of listeners) l();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve({ code, signal });
      for (const l of listeners) l();
    });
  });

  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, boundMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = (out + err).match(pattern);
          if (m) return finish(() => resolve(m));
          if (exitInfo) finish(() => reject(new Error(`process exited (${exitInfo!.code ?? exitInfo!.signal}) before ${pattern}:\n${out}\n${err}`)));
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`no ${pattern} within ${boundMs} ms:\n${out}\n${err}`))), boundMs);
        const finish = (f: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          f();
        };
        listeners.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM', boundMs = 20_000) {
      if (!exitInfo) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), boundMs);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** What a raw HTTP exchange got back. `status` is undefined when the server answered nothing. */
export interface RawAnswer {
  closedByServer: boolean;
  status?: number;
  /** Lower-cased response header names to values (the last one wins). */
  headers: Record<string, string>;
  body: string;
  /** Everything received, as latin1 (bytes preserved). */
  received: string;
}

function parseRaw(all: string): Pick<RawAnswer, 'status' | 'headers' | 'body'> & { complete: boolean } {
  let received = all;
  // Interim answers (100 Continue) come before the final one: skip them.
  while (/^HTTP\/1\.[01] 1\d\d /.test(received) && received.includes('\r\n\r\n')) received = received.slice(received.indexOf('\r\n\r\n') + 4);
  const end = received.indexOf('\r\n\r\n');
  if (end < 0) return { headers: {}, body: '', complete: false };
  const [statusLine, ...lines] = received.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = Buffer.from(received.slice(end + 4), 'latin1');
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  const body = (length === undefined ? rest : rest.subarray(0, length)).toString('utf8');
  return { status: Number.isNaN(status) ? undefined : status, headers, body, complete: length !== undefined && rest.length >= length };
}

/**
 * Send raw bytes on a fresh TCP connection and read one answer: resolves when a response with a
 * Content-Length is complete, when the server closes, or after `boundMs` (a cap on a hang, reported
 * as `closedByServer: false`). `holdOpen` keeps reading until the server closes instead; `halfClose`
 * ends the client's side of the connection after the payload.
 */
export function rawExchange(
  port: number,
  payload: string | Buffer,
  options: { boundMs?: number; holdOpen?: boolean; halfClose?: boolean } = {},
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let settled = false;
    const done = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const { status, headers, body } = parseRaw(received);
      resolve({ closedByServer, status, headers, body, received });
    };
    const timer = setTimeout(() => done(false), options.boundMs ?? 60_000);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      received += d;
      if (!options.holdOpen && parseRaw(received).complete) done(false);
    });
    socket.on('connect', () => {
      const bytes = typeof payload === 'string' ? Buffer.from(payload, 'latin1') : payload;
      // halfClose: end our side after the payload (a request cut short by its client).
      if (options.halfClose) socket.end(bytes);
      else socket.write(bytes);
    });
    socket.on('end', () => done(true));
    socket.on('close', () => done(true));
    socket.on('error', () => done(true));
  });
}

/** Open a connection, send `payload`, resolve once its answer is complete, and keep it open until `close()`. */
export function holdConnection(port: number, payload: string): Promise<{ answer: RawAnswer; close(): void }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('connect', () => socket.write(Buffer.from(payload, 'latin1')));
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`connection closed before its answer: ${JSON.stringify(received.slice(0, 200))}`)));
    socket.on('data', (d: string) => {
      received += d;
      const parsed = parseRaw(received);
      if (!parsed.complete) return;
      socket.removeAllListeners('close');
      resolve({
        answer: { closedByServer: false, status: parsed.status, headers: parsed.headers, body: parsed.body, received },
        close: () => socket.destroy(),
      });
    });
  });
}

/** A raw HTTP/1.1 request (latin1, so `\xff` is one byte), `Connection: close` unless `headers` says otherwise. */
export function rawRequest(method: string, target: string, headers: Record<string, string>, body = ''): string {
  const lines = [`${method} ${target} HTTP/1.1`];
  const all: Record<string, string> = { connection: 'close', ...headers };
  if (body !== '' && all['content-length'] === undefined && all['transfer-encoding'] === undefined)
    all['content-length'] = String(Buffer.byteLength(body, 'latin1'));
  for (const [k, v] of Object.entries(all)) lines.push(`${k}: ${v}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
