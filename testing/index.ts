// flowctl/testing: conformance suites for third-party adapters (vitest is a peer dependency of this entry).
export { describeStorageConformance, type StorageConformanceOptions } from './storage-conformance.js';
export { sampleJournal, sampleRun, conformanceTools, conformanceSpec, conformanceId } from './conformance-fixtures.js';
export { describeServiceStorageConformance, type ServiceStorageConformanceOptions } from './service-storage-conformance.js';
export { describeRunLifecycleConformance, type RunLifecycleConformanceOptions } from './run-lifecycle-conformance.js';
export { describeSecretStoreConformance, type SecretStoreConformanceOptions } from './secret-store-conformance.js';
export { describeExecutorConformance, type ExecutorConformanceOptions } from './executor-conformance.js';
export { describeQueueConformance, type QueueConformanceOptions } from './queue-conformance.js';
