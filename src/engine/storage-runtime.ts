import { FlowError, isFlowError } from '../errors.js';
import type { Storage } from '../ports/storage.js';

/**
 * The core's wrapper around an injected Storage: `init` runs once before first use (concurrent
 * callers share it), `dispose` once, calls after dispose fail with `storage_disposed`, and every error
 * leaving the adapter is a FlowError whose message names the adapter (`[flowctl] [<name>] ...`).
 */
export interface StorageRuntime extends Storage {
  dispose(): Promise<void>;
}

export function createStorageRuntime(storage: Storage): StorageRuntime {
  const component = storage.name;
  let ready: Promise<void> | undefined;
  let disposed: Promise<void> | undefined;

  const wrapError = (err: unknown): FlowError => {
    if (isFlowError(err)) {
      if (err.message.startsWith('[flowctl]')) return err;
      return new FlowError(err.code, `[flowctl] [${component}] ${err.message}`, { data: err.data, cause: err });
    }
    const message = err instanceof Error ? err.message : String(err);
    return new FlowError('storage_error', `[flowctl] [${component}] ${message}`, { cause: err });
  };

  const ensure = (): Promise<void> => {
    if (disposed) return Promise.reject(new FlowError('storage_disposed', `[flowctl] [${component}] storage was disposed`));
    ready ??= (async () => {
      try {
        await storage.init?.();
      } catch (err) {
        ready = undefined; // a failed init may be retried
        throw wrapError(err);
      }
    })();
    return ready;
  };

  function call<A extends unknown[], R>(fn: (...args: A) => Promise<R>, self: object): (...args: A) => Promise<R> {
    return async (...args: A) => {
      await ensure();
      try {
        return await fn.apply(self, args);
      } catch (err) {
        throw wrapError(err);
      }
    };
  }

  const j = storage.journal;
  const a = storage.artifacts;
  return {
    name: storage.name,
    flags: storage.flags,
    specs: { put: call(storage.specs.put, storage.specs), get: call(storage.specs.get, storage.specs) },
    deploys: {
      set: call(storage.deploys.set, storage.deploys),
      get: call(storage.deploys.get, storage.deploys),
      list: call(storage.deploys.list, storage.deploys),
    },
    runs: {
      create: call(storage.runs.create, storage.runs),
      get: call(storage.runs.get, storage.runs),
      list: call(storage.runs.list, storage.runs),
      update: call(storage.runs.update, storage.runs),
    },
    journal: {
      append: call(j.append, j),
      read: call(j.read, j),
      async *watch(runId, options) {
        await ensure();
        try {
          yield* j.watch(runId, options);
        } catch (err) {
          throw wrapError(err);
        }
      },
    },
    ...(a ? { artifacts: { put: call(a.put, a), get: call(a.get, a) } } : {}),
    init: ensure,
    dispose() {
      disposed ??= (async () => {
        await ready?.catch(() => undefined);
        try {
          await storage.dispose?.();
        } catch (err) {
          throw wrapError(err);
        }
      })();
      return disposed;
    },
  };
}
