export { builtinTools } from './list.js';
export { coreTemplate, renderTemplate } from './core-template.js';
export { coreTransform } from './core-transform.js';
export { coreAssert } from './core-assert.js';
export { httpRequest } from './http-request.js';
export { fsRead } from './fs-read.js';
export { fsWrite } from './fs-write.js';
export { shellExec } from './shell-exec.js';
