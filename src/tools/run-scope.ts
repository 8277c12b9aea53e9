import type { RunScope } from './types.js';

/** A RunScope plus the call that ends it: `dispose()` releases every resource the run created. */
export interface DisposableRunScope extends RunScope {
  /**
   * Dispose every resource once, newest first (a resource may depend on an older one). Every disposer
   * runs even when one throws; the errors are then thrown together as an AggregateError. Idempotent.
   * After dispose, `get` throws.
   */
  dispose(): Promise<void>;
}

interface Entry {
  value: Promise<unknown>;
  dispose?: (value: any) => Promise<void> | void;
}

/**
 * The per-run resource scope handed to tools as `ctx.scope`. Concurrent `get`s of one key share a single
 * `create`; a `create` that fails is forgotten so a later attempt can try again.
 */
export function createRunScope(): DisposableRunScope {
  const entries = new Map<string, Entry>();
  let disposed: Promise<void> | undefined;

  return {
    get<T>(key: string, create: () => Promise<T>, dispose?: (value: T) => Promise<void> | void): Promise<T> {
      if (disposed) return Promise.reject(new Error(`[flowctl] [run-scope] the run has ended; cannot get "${key}"`));
      const known = entries.get(key);
      if (known) return known.value as Promise<T>;
      const value = create();
      entries.set(key, { value, dispose });
      value.catch(() => {
        if (entries.get(key)?.value === value) entries.delete(key);
      });
      return value;
    },
    dispose(): Promise<void> {
      disposed ??= (async () => {
        const errors: unknown[] = [];
        for (const [, entry] of [...entries].reverse()) {
          let value: unknown;
          try {
            value = await entry.value;
          } catch {
            continue; // never created: nothing to release
          }
          try {
            await entry.dispose?.(value);
          } catch (err) {
            errors.push(err);
          }
        }
        entries.clear();
        if (errors.length > 0) throw new AggregateError(errors, '[flowctl] [run-scope] some run resources failed to dispose');
      })();
      return disposed;
    },
  };
}
