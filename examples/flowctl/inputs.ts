import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { FlowError } from '../../src/errors.js';
import { flagStrings, UsageError, type ParsedArgs } from './args.js';

/**
 * The value of one `--input k=v` pair: JSON when it parses (`n=42` is a number, `tags=["a"]` an
 * array, `ok=true` a boolean), otherwise the raw text (`name=Ada` is the string "Ada"). To pass a
 * string that looks like JSON, quote it as JSON: `--input 'n="42"'`.
 */
export function parseInputValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** `k=v` pairs, in order; a later pair for the same name wins. The value may itself contain `=`. */
export function parseInputPairs(pairs: readonly string[]): Record<string, unknown> {
  const out = new Map<string, unknown>();
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--input needs name=value (got "${pair}")`);
    out.set(pair.slice(0, eq), parseInputValue(pair.slice(eq + 1)));
  }
  // fromEntries defines own properties, so a name like `__proto__` stays data, never a prototype.
  return Object.fromEntries(out);
}

/** Read one inputs file: `.json` as JSON, anything else as YAML (which also reads JSON). Must hold a mapping. */
export async function readInputFile(path: string, cwd: string): Promise<Record<string, unknown>> {
  const full = resolve(cwd, path);
  let text: string;
  try {
    text = await readFile(full, 'utf8');
  } catch (cause) {
    throw new FlowError('input_file_unreadable', `[flowctl] [cli] cannot read --input-file ${path}: ${(cause as Error).message}`, {
      cause,
      data: { path },
    });
  }
  let value: unknown;
  try {
    if (extname(full).toLowerCase() === '.json') value = JSON.parse(text);
    else value = (await import('yaml')).parse(text);
  } catch (cause) {
    throw new FlowError('input_file_invalid', `[flowctl] [cli] --input-file ${path} is not valid JSON or YAML: ${(cause as Error).message}`, {
      cause,
      data: { path },
    });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new FlowError('input_file_invalid', `[flowctl] [cli] --input-file ${path} must hold a mapping of input names to values`, {
      data: { path },
    });
  }
  return value as Record<string, unknown>;
}

/**
 * The inputs of `run` and `schedule`: every `--input-file` in order (a later file wins), then the
 * `--input` pairs on top, so a pair always overrides a file.
 */
export async function collectInputs(args: ParsedArgs, cwd: string): Promise<Record<string, unknown>> {
  const merged = new Map<string, unknown>();
  for (const file of flagStrings(args, 'input-file')) {
    for (const [k, v] of Object.entries(await readInputFile(file, cwd))) merged.set(k, v);
  }
  for (const [k, v] of Object.entries(parseInputPairs(flagStrings(args, 'input')))) merged.set(k, v);
  return Object.fromEntries(merged);
}
