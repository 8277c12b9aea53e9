import type { Logger } from '../../src/ports/clock.js';

/**
 * What a test saw, to search afterwards (test/e2e/hosted-canary.test.ts): every answer a `recFetch`
 * received (status, headers and the whole body, streams too), every line the injected `logger` was
 * given, and, while `teeOutput` is on, everything written to stdout, stderr and the console.
 */
export interface Recorder {
  seen: { where: string; text: string }[];
  /** The bodies still being read: await them all before searching `seen`. */
  pendingReads: Promise<unknown>[];
  logs: string[];
  recFetch: typeof fetch;
  logger: Logger;
  teeOutput(): () => void;
}

export function createRecorder(): Recorder {
  const seen: { where: string; text: string }[] = [];
  const pendingReads: Promise<unknown>[] = [];
  const logs: string[] = [];

  /** fetch that keeps a copy of every answer: status, headers and the whole body (streams too). */
  const recFetch: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const where = `${init?.method ?? 'GET'} ${String(input instanceof Request ? input.url : input)} -> ${res.status}`;
    const copy = res.clone();
    pendingReads.push(
      copy
        .text()
        .then((text) => seen.push({ where, text: `${JSON.stringify([...res.headers])}\n${text}` }))
        .catch((err: unknown) => seen.push({ where: `${where} (read failed)`, text: String(err) })),
    );
    return res;
  };

  const capture = (level: string) => (message: string, data?: unknown) => {
    let extra = '';
    if (data !== undefined) {
      try {
        extra = ` ${JSON.stringify(data)}`;
      } catch {
        extra = ` ${String(data)}`;
      }
    }
    logs.push(`${level}: ${message}${extra}`);
  };
  const logger: Logger = { debug: capture('debug'), info: capture('info'), warn: capture('warn'), error: capture('error') };

  /** Tee stdout, stderr and console into `logs` for the test's duration. */
  function teeOutput(): () => void {
    const restore: (() => void)[] = [];
    for (const stream of [process.stdout, process.stderr]) {
      const original = stream.write.bind(stream);
      stream.write = ((chunk: unknown, ...rest: unknown[]) => {
        logs.push(
          `${stream === process.stdout ? 'stdout' : 'stderr'}: ${typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8')}`,
        );
        return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof stream.write;
      restore.push(() => (stream.write = original as typeof stream.write));
    }
    for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      const original = console[level];
      console[level] = (...args: unknown[]) => {
        logs.push(`console.${level}: ${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}`);
        original.apply(console, args);
      };
      restore.push(() => (console[level] = original));
    }
    return () => restore.forEach((r) => r());
  }
  return { seen, pendingReads, logs, recFetch, logger, teeOutput };
}
