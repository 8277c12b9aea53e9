// Packs and registries: re-exports only. See docs/packs.md.
export * from './types.js';
export { openRegistry, listRegistry, type RegistryDir, type IndexListing } from './registry-dir.js';
export { writeFileAtomic, createFileExclusive } from '../util/atomic-write.js';
export { buildPack, type BuildPackOptions } from './build.js';
export { compositeContract, compositeTool, flowCapabilities, flowInputSchema, flowRunnerFromEngine, type FlowRunner } from './composite.js';
export { DRAFT_FILE, newDraft, parseDraft, readDraft, writeDraft, classifyBody, putDraftFlow, putDraftTool, type BodyKind } from './draft.js';
export { toExport, fromExport, referencedBlobs } from './export-file.js';
export { publishPack, type PublishResult } from './publish.js';
export { readPack, checkBuiltPack, type ReadPackResult } from './read-pack.js';
export { verifyRegistry, type VerifyReport, type PackVerdict, type ProgressFn } from './verify.js';
export { mirrorRegistries, packPatternMatches, MIRROR_MODES, type MirrorMode, type MirrorOptions, type MirrorReport } from './mirror.js';
export { installPacks, parsePacksLock, readPacksLock, type InstallOptions, type InstallReport } from './install.js';
export {
  loadRegistryFlows,
  loadRegistryPacks,
  loadRegistryTools,
  comparePackVersions,
  type RegistryFlow,
  type LoadRegistryOptions,
  type LoadRegistryToolsOptions,
} from './load.js';
export { compileDraftFlow } from './compile-source.js';
export { flowSpecBody } from './flowspec-body.js';
