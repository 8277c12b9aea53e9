import { registerFlowLoader } from './flow-files.js';

/**
 * `.json` files are Recordings: a bare `<flow>` name tries `flows/<name>.yaml`, then
 * `recordings/<name>.json`. What `run` needs of the browser side before it knows the flow (it loads
 * the browser tools itself, only for a flow that uses them); the other flow commands import
 * recordings.ts, which adds the browser tools' contracts and the browser lint rules. The Recording
 * parser is imported on the first load: a run whose spec comes from the cache never needs it.
 */
registerFlowLoader('.json', {
  kind: 'recording',
  dir: 'recordings',
  load: async (file) => (await import('../src/record/flow-loader.js')).loadRecordingSource(file.text, file.file),
});
