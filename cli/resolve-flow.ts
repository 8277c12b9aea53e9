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
  const text = await readLockText(cwd);
  return text === undefined ? undefined : parseLock(text, LOCK_FILE_NAME);
}

/** The bytes of `flowctl.lock` of the project as text, or undefined when there is none. */
export async function readLockText(cwd: string): Promise<string | undefined> {
  const path = join(cwd, LOCK_FILE_NAME);
  if (!existsSync(path)) return undefined;
  return readFile(path, 'utf8');
}

export interface FlowCompilation {
  source: FlowFile & { kind: string };
  /** The project lock as read (undefined when there is none). */
  lock: LockFile | undefined;
  result: CompileResult;
  locate?: Locator;
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

/** Load (parse) a read `<flow>` into its Flow object, or the diagnostics of why it does not load. */
export async function loadFlowRead(read: FlowSourceRead): Promise<LoadedFlow> {
  return read.loader.load(read.file);
}

/** Compile a read and loaded `<flow>` against the CLI tools and the lock read with it. */
export function compileLoaded(read: FlowSourceRead, loaded: LoadedFlow): FlowCompilation {
  const lock = read.lockText === undefined ? undefined : parseLock(read.lockText, LOCK_FILE_NAME);
  const source = { ...read.file, kind: read.loader.kind };
  if (loaded.diagnostics && loaded.diagnostics.length > 0) {
    return { source, lock, result: { ok: false, diagnostics: loaded.diagnostics }, locate: loaded.locate };
  }
  const result = compileFlow(loaded.flow, { file: read.file.file, tools: cliToolRegistry(), lock, locate: loaded.locate });
  return { source, lock, result, locate: loaded.locate };
}

/** Resolve, load and compile a `<flow>` argument against the CLI tools and the project lock. */
export async function compileFlowArg(arg: string, io: CliIO): Promise<FlowCompilation> {
  const read = await readFlowArg(arg, io);
  return compileLoaded(read, await loadFlowRead(read));
}

/**
 * The tool refs (`ref` without the version) of a loaded Flow's steps, read before compiling
 * (compiling needs the right tools registered first). A flow that did not load gives none.
 */
export function loadedToolRefs(loaded: LoadedFlow): string[] {
  const steps = (loaded.flow as { steps?: unknown } | undefined)?.steps;
  if (!Array.isArray(steps)) return [];
  return steps
    .map((s) => (s && typeof s === 'object' ? (s as { tool?: unknown }).tool : undefined))
    .filter((t): t is string => typeof t === 'string')
    .map((t) => t.replace(/@[^@]*$/, ''));
}

/** Diagnostics as human lines on stderr. */
export function printDiagnostics(io: CliIO, diagnostics: Diagnostic[]): void {
  for (const d of diagnostics) io.stderr.write(`${formatDiagnostic(d)}\n`);
}

/** A failed compilation as FlowError `compile_failed`, whose message lists the diagnostics and whose data has them. */
export function compileFailure(c: FlowCompilation): FlowError {
  const diagnostics = c.result.ok ? [] : c.result.diagnostics;
  return new FlowError('compile_failed', `[flowctl] ${c.source.file} does not compile:\n${diagnostics.map(formatDiagnostic).join('\n')}`, {
    data: { diagnostics },
  });
}

/**
 * For commands that need a compiled flow and nothing else: the compiled spec, or FlowError
 * `compile_failed` (compileFailure).
 */
export async function compileFlowOrThrow(arg: string, io: CliIO) {
  const c = await compileFlowArg(arg, io);
  if (!c.result.ok) throw compileFailure(c);
  return { ...c.result, source: c.source };
}
