// Recordings: ops schema, the content-addressed Recording, Recording -> Flow, brittle-locator lint.
export * from './locator.js';
export * from './ops.js';
export * from './recording.js';
export * from './recording-schema.js';
export * from './to-flow.js';
export * from './lint.js';
export * from './store.js';
export * from './flow-loader.js';
