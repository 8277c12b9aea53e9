import { FlowError, builtinTools, compileFlow, createToolRegistry, parseLock, type Diagnostic, type Tool, type ToolRegistry } from '../src/engine-entry.js';
import type { CompileResult, Locator, LockFile } from '../src/index.js';
import { formatDiagnostic } from '../src/flow/diagnostics.js';
import { LOCK_FILE_NAME } from '../src/tools/lock.js';
import { readFlowArg, readLockText, type FlowFile, type FlowSourceRead, type LoadedFlow } from './flow-files.js';
import type { CliIO } from './io.js';

/**
 * Compiling a `<flow>` argument, shared by every command that takes one; finding and reading its file
 * is flow-files.ts (`<flow>` is a file path, or a bare name looked up in `flows/` and each loader's
 * directory).
 */

const extraTools: Tool[][] = [];

/** Add tools (e.g. the browser tools) to the registry every CLI command compiles against. */
export function registerCliTools(tools: Tool[]): void {
  extraTools.push(tools);
}

/** The built-in tools plus every registered list. */
export function cliToolRegistry(): ToolRegistry {
  return createToolRegistry(builtinTools(), ...extraTools);
}

/** Read `flowctl.lock` of the project, if there is one. FlowError `bad_lock` when it is malformed. */
export async function readProjectLock(cwd: string): Promise<LockFile | undefined> {
  const text = await readLockText(cwd);
  return text === undefined ? undefined : parseLock(text, LOCK_FILE_NAME);
}

export interface FlowCompilation {
  source: FlowFile & { kind: string };
  /** The project lock as read (undefined when there is none). */
  lock: LockFile | undefined;
  result: CompileResult;
  locate?: Locator;
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
