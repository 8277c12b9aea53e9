import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { describeStorageConformance } from '../../testing/index.js';
import { createFsStorage } from '../../adapters/storage-fs/index.js';
import type { Storage } from '../../src/ports/storage.js';

const dirs = new Map<Storage, string>();
afterAll(async () => {
  for (const dir of new Set(dirs.values())) await rm(dir, { recursive: true, force: true });
});

describeStorageConformance({
  name: 'storage-fs',
  async create() {
    const dir = await mkdtemp(join(tmpdir(), 'flowctl-fs-conformance-'));
    const storage = createFsStorage({ dir, pollMs: 20 });
    dirs.set(storage, dir);
    return storage;
  },
  // A second instance over the same directory: no shared caches, as another process would see it.
  async reopen(storage) {
    const dir = dirs.get(storage)!;
    const other = createFsStorage({ dir, pollMs: 20 });
    dirs.set(other, dir);
    return other;
  },
});
