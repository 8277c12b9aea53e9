import { describe, expect, it } from 'vitest';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { createStorageRuntime } from '../../../src/engine/storage-runtime.js';
import { FlowError } from '../../../src/errors.js';

describe('storage runtime wrapper', () => {
  it('inits once (also under concurrent first calls) and disposes once', async () => {
    const storage = createMemoryStorage();
    let inits = 0;
    let disposals = 0;
    storage.init = async () => {
      inits++;
      await new Promise((r) => setTimeout(r, 5));
    };
    storage.dispose = async () => void disposals++;
    const rt = createStorageRuntime(storage);
    await Promise.all([rt.runs.list(), rt.specs.get(`sha256:${'0'.repeat(64)}` as never), rt.deploys.list('rest')]);
    await rt.runs.list();
    expect(inits).toBe(1);
    await Promise.all([rt.dispose(), rt.dispose()]);
    expect(disposals).toBe(1);
    await expect(rt.runs.list()).rejects.toMatchObject({ code: 'storage_disposed' });
  });

  it('prefixes adapter errors with the adapter name and turns plain errors into storage_error', async () => {
    const storage = createMemoryStorage();
    storage.runs.get = async () => {
      throw new Error('disk on fire');
    };
    storage.runs.list = async () => {
      throw new FlowError('not_found', 'cursor gone');
    };
    const rt = createStorageRuntime(storage);
    await expect(rt.runs.get('x')).rejects.toMatchObject({ code: 'storage_error', message: '[flowctl] [storage-memory] disk on fire' });
    await expect(rt.runs.list()).rejects.toMatchObject({ code: 'not_found', message: '[flowctl] [storage-memory] cursor gone' });
  });

  it('retries a failed init on the next call', async () => {
    const storage = createMemoryStorage();
    let attempts = 0;
    storage.init = async () => {
      if (++attempts === 1) throw new Error('not yet');
    };
    const rt = createStorageRuntime(storage);
    await expect(rt.runs.list()).rejects.toMatchObject({ code: 'storage_error' });
    await expect(rt.runs.list()).resolves.toEqual([]);
  });
});
