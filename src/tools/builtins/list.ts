import type { Tool } from '../types.js';
import { coreAssert } from './core-assert.js';
import { coreTemplate } from './core-template.js';
import { coreTransform } from './core-transform.js';
import { fsRead } from './fs-read.js';
import { fsWrite } from './fs-write.js';
import { httpRequest } from './http-request.js';
import { shellExec } from './shell-exec.js';

/** Every built-in tool (browser tools come with the playwright executor). A new array on each call. */
export function builtinTools(): Tool[] {
  return [coreTemplate, coreTransform, coreAssert, httpRequest, fsRead, fsWrite, shellExec];
}
