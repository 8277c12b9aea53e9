// Waiting for a line on a child process's output: shared by the benchmarks (bench/*.mjs) and the
// tests (test/**/*.ts, typed by child-line.d.mts). Plain JavaScript so both can import it as is.

/** Default cap on the wait: a hang, not a slow machine (a loaded 2-core machine starts a service in seconds). */
export const LINE_CAP_MS = 120_000;
/** Characters of output kept by default (the tail): enough for a crash's stack trace. */
export const KEEP_CHARS = 1_000_000;

/**
 * Follow `child`'s `stream` ('stdout' or 'stderr', which must be a pipe) and wait for the first
 * complete line matching `pattern` (a RegExp, or a string the line must contain). Resolves with the
 * line, the RegExp match (the string's match when `pattern` is a string) and `output()`, the tail of
 * everything the stream wrote (it keeps following after the line arrived, up to `keep` characters).
 * Rejects when the child ends first (its 'close': the output read to the end), or after `capMs` (a cap on a hang, not a timing assertion),
 * with an error naming the line awaited and the last output of the stream (and of `alsoShow`).
 *
 * @param {import('node:child_process').ChildProcess} child
 * @param {RegExp | string} pattern
 * @param {{ stream?: 'stdout' | 'stderr', what?: string, capMs?: number, keep?: number, alsoShow?: () => string }} [options]
 * @returns {Promise<{ line: string, match: RegExpExecArray, output: () => string }>}
 */
export function waitForLine(child, pattern, options = {}) {
  const streamName = options.stream ?? 'stdout';
  const stream = child[streamName];
  const capMs = options.capMs ?? LINE_CAP_MS;
  const keep = options.keep ?? KEEP_CHARS;
  const name = options.what ?? `process ${child.pid}`;
  const wanted = typeof pattern === 'string' ? `a line containing ${JSON.stringify(pattern)}` : `a line matching ${pattern}`;
  if (!stream) return Promise.reject(new Error(`${name}: its ${streamName} is not a pipe; cannot wait for ${wanted}`));
  const test = (line) => {
    if (typeof pattern !== 'string') return pattern.exec(line);
    const at = line.indexOf(pattern);
    if (at < 0) return null;
    const m = /** @type {RegExpExecArray} */ ([pattern]);
    m.index = at;
    m.input = line;
    return m;
  };
  let text = '';
  let partial = '';
  const output = () => text;
  const tail = () => {
    const own = text.slice(-4000) || '(nothing)';
    const other = options.alsoShow?.().slice(-4000);
    return `last ${streamName}:\n${own}${other ? `\nalso:\n${other}` : ''}`;
  };
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (fn) => {
      if (settled) return;
      settled = true;
      clearTimeout(cap);
      child.off('close', onExit);
      fn();
    };
    const onData = (chunk) => {
      const s = String(chunk);
      text = (text + s).slice(-keep);
      if (settled) return;
      partial += s;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const match = test(line.replace(/\r$/, ''));
        if (match) return finish(() => resolve({ line: line.replace(/\r$/, ''), match, output }));
      }
      // A line never ends: keep the search bounded.
      if (partial.length > keep) partial = partial.slice(-keep);
    };
    const onExit = (code, signal) =>
      finish(() => reject(new Error(`${name} exited (${code ?? signal}) before writing ${wanted} on its ${streamName}; ${tail()}`)));
    const cap = setTimeout(
      () => finish(() => reject(new Error(`hang: ${name} wrote no ${wanted.slice(2)} on its ${streamName} within ${capMs} ms (a cap on a hang); ${tail()}`))),
      capMs,
    );
    stream.setEncoding('utf8');
    stream.on('data', onData);
    if (child.exitCode !== null || child.signalCode !== null) onExit(child.exitCode, child.signalCode);
    else child.once('close', onExit);
  });
}
