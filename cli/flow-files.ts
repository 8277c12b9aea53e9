import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { FlowError } from '../src/errors.js';
import type { Locator } from '../src/flow/diagnostics.js';
import type { Diagnostic } from '../src/flow/types.js';
import { LOCK_FILE_NAME } from '../src/tools/lock-file-name.js';
import type { CliIO } from './io.js';

/**
 * Finding and reading a `<flow>` argument's file (and the project lock beside it): a bare name is
 * tried as `flows/<name>.yaml`, `flows/<name>.yml`, then in each registered loader's directory (e.g.
 * `recordings/<name>.json`). Loaders turn a file into a Flow object; YAML is built in, other sources
 * (Recordings) plug in with registerFlowLoader. Light on purpose (each loader imports its parser on its
 * first load): `flowctl run` reads its flow here before the rest of flowctl has loaded
 * (cli/early-browser.ts). Compiling is resolve-flow.ts.
 */

export interface FlowFile {
  /** Absolute path (never enters a FlowSpec or a diagnostic). */
  path: string;
  /** The project-relative name diagnostics carry, with `/` separators. */
  file: string;
  text: string;
}

export interface LoadedFlow {
  /** The Flow object to compile (undefined when `diagnostics` explain why there is none). */
  flow?: unknown;
  /** Where fields are in the file, for diagnostics. Default: 1:1. */
  locate?: Locator;
  /** Problems found while loading (e.g. a malformed file); compile is skipped when present. */
  diagnostics?: Diagnostic[];
}

export interface FlowLoader {
  /** The source kind lint rules see (`yaml`, `recording`, ...). */
  kind: string;
  /** Bare names are looked up as `<dir>/<name><ext>`. */
  dir: string;
  load(file: FlowFile): LoadedFlow | Promise<LoadedFlow>;
}

const yamlLoader: FlowLoader = {
  kind: 'yaml',
  dir: 'flows',
  async load(file) {
    const { parseFlowSource } = await import('../src/flow/source.js');
    const parsed = parseFlowSource(file.text, file.file);
    return parsed.sink.failed ? { diagnostics: parsed.sink.list } : { flow: parsed.value, locate: parsed.locate };
  },
};

const loaders = new Map<string, FlowLoader>([
  ['.yaml', yamlLoader],
  ['.yml', yamlLoader],
]);

/** Register the loader for files ending in `ext` (with the dot, e.g. `.json`). Replaces an existing one. */
export function registerFlowLoader(ext: string, loader: FlowLoader): void {
  loaders.set(ext.toLowerCase(), loader);
}

function displayName(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return (rel === '' || isAbsolute(rel) ? path.split(sep).pop()! : rel).split(sep).join('/');
}

/** Find the file a `<flow>` argument names. FlowError `flow_not_found` lists what was tried. */
export function findFlowFile(arg: string, cwd: string): { path: string; file: string; loader: FlowLoader } {
  const tried: string[] = [];
  const candidates: string[] = [];
  const bare = !arg.includes('/') && !arg.includes(sep) && !loaders.has(extname(arg).toLowerCase());
  if (bare) {
    for (const [ext, loader] of loaders) candidates.push(join(loader.dir, `${arg}${ext}`));
  } else {
    candidates.push(arg);
  }
  for (const c of candidates) {
    const path = resolve(cwd, c);
    tried.push(displayName(cwd, path));
    const loader = loaders.get(extname(path).toLowerCase());
    if (loader && existsSync(path)) return { path, file: displayName(cwd, path), loader };
  }
  if (!bare && !loaders.has(extname(arg).toLowerCase())) {
    throw new FlowError('flow_not_found', `[flowctl] no loader for "${arg}" (known extensions: ${[...loaders.keys()].join(', ')})`);
  }
  throw new FlowError('flow_not_found', `[flowctl] flow "${arg}" not found (tried ${tried.join(', ')})`, { data: { tried } });
}

/** The bytes of `flowctl.lock` of the project as text, or undefined when there is none. */
export async function readLockText(cwd: string): Promise<string | undefined> {
  const path = join(cwd, LOCK_FILE_NAME);
  if (!existsSync(path)) return undefined;
  return readFile(path, 'utf8');
}

/** A `<flow>` argument's file and the project lock, read once (the spec cache keys on these very bytes). */
export interface FlowSourceRead {
  file: FlowFile;
  loader: FlowLoader;
  /** The text of `flowctl.lock`, undefined when the project has none. */
  lockText: string | undefined;
}

/** Find and read a `<flow>` argument and the project lock. FlowError `flow_not_found` as findFlowFile. */
export async function readFlowArg(arg: string, io: CliIO): Promise<FlowSourceRead> {
  const found = findFlowFile(arg, io.cwd);
  const [text, lockText] = await Promise.all([readFile(found.path, 'utf8'), readLockText(io.cwd)]);
  return { file: { path: found.path, file: found.file, text }, loader: found.loader, lockText };
}
