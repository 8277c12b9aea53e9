import { randomUUID } from 'node:crypto';
import type { Clock, IdSource, Logger } from '../ports/clock.js';

/**
 * Production defaults of the injected ports. These are the only places in src/ that read the
 * system clock or generate random ids; tests and fixtures inject deterministic ones.
 */
export function systemClock(): Clock {
  // Many entries are stamped within one millisecond: format each millisecond once.
  let lastMs = Number.NaN;
  let lastIso = '';
  return {
    now: () => {
      const ms = Date.now();
      if (ms !== lastMs) {
        lastMs = ms;
        lastIso = new Date(ms).toISOString();
      }
      return lastIso;
    },
    millis: () => performance.now(),
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const onAbort = () => {
          clearTimeout(timer);
          reject(signal!.reason);
        };
        const timer = setTimeout(
          () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
          Math.max(0, ms),
        );
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
  };
}

export function cryptoIds(): IdSource {
  return { uuid: () => randomUUID() };
}

export function silentLogger(): Logger {
  const none = () => {};
  return { debug: none, info: none, warn: none, error: none };
}
