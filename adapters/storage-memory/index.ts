export { createMemoryStorage } from './memory-storage.js';
