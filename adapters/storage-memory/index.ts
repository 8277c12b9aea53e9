// The memory storage lives beside the engine, whose default storage it is (createEngine() with no
// storage); this entry is its adapter subpath, flowctl/adapters/storage-memory.
export { createMemoryStorage } from '../../src/engine/memory-storage.js';
