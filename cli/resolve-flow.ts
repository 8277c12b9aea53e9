import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { FlowError, builtinTools, compileFlow, createToolRegistry, parseLock, type Diagnostic, type Tool, type ToolRegistry } from '../src/engine-entry.js';
import type { CompileResult, Locator, LockFile } from '../src/index.js';
import { formatDiagnostic } from '../src/flow/diagnostics.js';
import { parseFlowSource } from '../src/flow/source.js';
import { LOCK_FILE_NAME } from '../src/tools/lock.js';
import type { CliIO } from './io.js';

/**
 * Resolving a `<flow>` argument and compiling it, shared by every command that takes one.
 *
 * `<flow>` is a file path, or a bare name tried as `flows/<name>.yaml`, `flows/<name>.yml`, then
 * in each registered loader's directory (e.g. `recordings/<name>.json`). Loaders turn a file into a
 * Flow object; YAML is built in, other sources (Recordings) plug in with registerFlowLoader.
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
  load(file) {
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

const extraTools: Tool[][] = [];

/** Add tools (e.g. the browser tools) to the registry every CLI command compiles against. */
export function registerCliTools(tools: Tool[]): void {
  extraTools.push(tools);
}

/** The built-in tools plus every registered list. */
export function cliToolRegistry(): ToolRegistry {
  return createToolRegistry(builtinTools(), ...extraTools);
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

/** Read `flowctl.lock` of the project, if there is one. FlowError `bad_lock` when it is malformed. */
export async function readProjectLock(cwd: string): Promise<LockFile | undefined> {
  const path = join(cwd, LOCK_FILE_NAME);
  if (!existsSync(path)) return undefined;
  return parseLock(await readFile(path, 'utf8'), LOCK_FILE_NAME);
}

export interface FlowCompilation {
  source: FlowFile & { kind: string };
  /** The project lock as read (undefined when there is none). */
  lock: LockFile | undefined;
  result: CompileResult;
  locate?: Locator;
}

/** Resolve, load and compile a `<flow>` argument against the CLI tools and the project lock. */
export async function compileFlowArg(arg: string, io: CliIO): Promise<FlowCompilation> {
  const found = findFlowFile(arg, io.cwd);
  const text = await readFile(found.path, 'utf8');
  const file: FlowFile = { path: found.path, file: found.file, text };
  const lock = await readProjectLock(io.cwd);
  const loaded = await found.loader.load(file);
  const source = { ...file, kind: found.loader.kind };
  if (loaded.diagnostics && loaded.diagnostics.length > 0) {
    return { source, lock, result: { ok: false, diagnostics: loaded.diagnostics }, locate: loaded.locate };
  }
  const result = compileFlow(loaded.flow, { file: found.file, tools: cliToolRegistry(), lock, locate: loaded.locate });
  return { source, lock, result, locate: loaded.locate };
}

/** Diagnostics as human lines on stderr. */
export function printDiagnostics(io: CliIO, diagnostics: Diagnostic[]): void {
  for (const d of diagnostics) io.stderr.write(`${formatDiagnostic(d)}\n`);
}

/**
 * For commands that need a compiled flow and nothing else (e.g. `run`): the compiled spec, or
 * FlowError `compile_failed` whose message lists the diagnostics and whose data has them.
 */
export async function compileFlowOrThrow(arg: string, io: CliIO) {
  const c = await compileFlowArg(arg, io);
  if (!c.result.ok) {
    const lines = c.result.diagnostics.map(formatDiagnostic);
    throw new FlowError('compile_failed', `[flowctl] ${c.source.file} does not compile:\n${lines.join('\n')}`, {
      data: { diagnostics: c.result.diagnostics },
    });
  }
  return { ...c.result, source: c.source };
}
