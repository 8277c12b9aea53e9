// flowctl/engine: the engine alone, for applications that embed it (compile, record, run, replay),
// without the hosted service, the launchers or MCP. The package root re-exports all of this too;
// this entry loads only what it names, so a process that runs flows starts faster
// (bench/RESULTS.md, "browser-todomvc").
export { FlowError, isFlowError } from './errors.js';
export { canonicalJson, digestOf, prettyJson, DIGEST_PATTERN } from './canonical.js';
export type { Digest } from './canonical.js';
export type * from './flow/types.js';
export type * from './tools/types.js';
export type * from './run/types.js';
export type * from './ports/index.js';
export type * from './engine/types.js';
export { TERMINAL_STATUSES } from './run/types.js';
export { createEngine } from './engine/engine.js';
export { systemClock, cryptoIds, silentLogger } from './engine/defaults.js';
export { createFixedClock, createSequentialIds } from './engine/deterministic.js';
export { checkJournalChain, sealEntry } from './run/journal.js';
export { readJournalFixture, writeJournalFixture, verifyJournal } from './run/fixture.js';
export { createToolRegistry } from './tools/registry.js';
export { defineTool } from './tools/contract.js';
export { builtinTools } from './tools/builtins/index.js';
export { hostedToolPolicy, type ToolPolicy } from './tools/policy.js';
export { compile, compileFlow } from './flow/compile.js';
export { emptyLock, parseLock, serializeLock } from './tools/lock.js';
export { buildRecording, recordingToFlow, writeRecording, parseRecording, type Recording, type RecordOptions, type BuiltRecording } from './record/index.js';
