// Public barrel: re-exports only. See docs/architecture.md for the map of the code.
export { FlowError, isFlowError } from './errors.js';
export { canonicalJson, digestOf, digestBytes, isDigest, prettyJson, sortKeysDeep, DIGEST_PATTERN } from './canonical.js';
export type { Digest } from './canonical.js';
export type * from './flow/types.js';
export type * from './tools/types.js';
export { CAPABILITIES, OUTWARD_CAPABILITIES } from './tools/types.js';
export type * from './run/types.js';
export { TERMINAL_STATUSES } from './run/types.js';
export type * from './ports/index.js';
export { SECRET_REF_PATTERN, MASK } from './ports/index.js';
