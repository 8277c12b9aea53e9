import { describeStorageConformance } from '../../testing/index.js';
import { createMemoryStorage } from '../../adapters/storage-memory/index.js';

describeStorageConformance({ name: 'storage-memory', create: async () => createMemoryStorage() });
