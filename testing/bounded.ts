/**
 * Bounded waits for the conformance suites. An adapter that never delivers (a watch that yields
 * nothing, a queue that never hands a message over) fails the test within seconds, with a message
 * naming what was expected and how long it waited, instead of hanging until the runner's timeout
 * says only that the test took too long.
 */

/** How long one wait lasts by default: one event (an entry, a delivery), not a whole test. */
export const WAIT_MS = 5_000;

/**
 * The suites' own test timeout, far above any one wait, so a wait's message (not vitest's timeout,
 * 5 s by default in an application's config) reports a hang.
 */
export const SUITE_TIMEOUT_MS = 120_000;

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

/** The error a wait fails with: `<what> (waited 5 s)`. */
export class ConformanceWaitError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} (waited ${seconds(ms)})`);
    this.name = 'ConformanceWaitError';
  }
}

/** `work`, or a ConformanceWaitError saying `what` did not happen within `ms`. */
export async function within<T>(work: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new ConformanceWaitError(what, ms)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `probe` until it gives a value (not undefined or false), or fails naming `what`. */
export async function until<T>(probe: () => T | undefined | false, what: string, ms = WAIT_MS): Promise<T> {
  const deadline = Date.now() + ms;
  let delay = 5;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new ConformanceWaitError(`${what} did not happen`, ms);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 100);
  }
}

/**
 * Iterates `source` with every step bounded: `expected(n)` names what the (n+1)-th step should bring
 * (the next item, or the end), for the message when it does not come in time. Leaving the loop early
 * returns the source as a for-await would; a source stuck in a step is left behind, not awaited.
 */
export async function* boundedIteration<T>(source: AsyncIterable<T>, expected: (seen: number) => string, ms = WAIT_MS): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let seen = 0;
  let done = false;
  try {
    for (;;) {
      const step = await within(iterator.next(), expected(seen), ms).catch((err: unknown) => {
        // The source is stuck in next(): a return() would queue behind it for ever.
        done = true;
        throw err;
      });
      if (step.done) {
        done = true;
        return;
      }
      seen++;
      yield step.value;
    }
  } finally {
    if (!done) await iterator.return?.();
  }
}
