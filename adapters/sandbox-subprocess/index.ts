export { createSubprocessSandbox, type SubprocessSandboxOptions } from './subprocess-sandbox.js';
