export type * from './storage.js';
export type * from './secrets.js';
export type * from './clock.js';
export type * from './executor.js';
export { SECRET_REF_PATTERN, MASK } from './secrets.js';
export type * from './queue.js';
export type * from './studio.js';
