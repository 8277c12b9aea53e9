import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
// Static: the CLI bundles yaml (tsup.config.ts), and a bundled CommonJS package imported dynamically
// has only a default export. Its module is loaded by every run anyway (flow files).
import { isMap, isScalar, parseDocument } from 'yaml';
import { FlowError, type InputContract } from '../src/engine-entry.js';
import { flagStrings, UsageError, type ParsedArgs } from './args.js';

/** The declared inputs of the flow being run: name -> contract (FlowSpec `inputs`). */
export type InputContracts = Readonly<Record<string, InputContract>>;

/** Whether the raw text itself is the value of an input with this contract (no JSON parsing). */
function takesRawText(contract: InputContract | undefined, raw: string): boolean {
  if (contract === undefined) return false;
  // A secret input carries a reference `secret:<name>`, which is text.
  if (contract.secret || contract.type === 'string') return true;
  // An enum takes the text when it is one of its string values (`--input size=1` for values ["1", "2"]).
  if (contract.type === 'enum') {
    const values = (contract.schema as { enum?: unknown[] }).enum ?? [];
    return values.includes(raw);
  }
  return false;
}

/**
 * The value of one `--input k=v` pair, directed by the input's declared type:
 *
 * - `string` (and secret) inputs: the raw text, exactly as given (`pet=12` is the string "12",
 *   `zip=01234` is "01234", `q="x"` is the three characters `"x"`).
 * - `enum` inputs: the raw text when it is one of the enum's string values, else as below.
 * - every other type, and names the flow does not declare: JSON when the text parses (`n=42` is a
 *   number, `tags=["a"]` an array, `ok=true` a boolean), otherwise the raw text (which the inputs
 *   contract then refuses for a non-string type, naming the input).
 */
export function parseInputValue(raw: string, contract?: InputContract): unknown {
  if (takesRawText(contract, raw)) return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** `k=v` pairs split at the first `=`, in order; a later pair for the same name wins. */
function splitPairs(pairs: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--input needs name=value (got "${pair}")`);
    const name = pair.slice(0, eq);
    // Re-inserted, so the map's order is the order of each name's last pair.
    out.delete(name);
    out.set(name, pair.slice(eq + 1));
  }
  return out;
}

/** `k=v` pairs, typed by `contracts` (see parseInputValue). The value may itself contain `=`. */
export function parseInputPairs(pairs: readonly string[], contracts: InputContracts = {}): Record<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [name, raw] of splitPairs(pairs)) out.set(name, parseInputValue(raw, Object.hasOwn(contracts, name) ? contracts[name] : undefined));
  // fromEntries defines own properties, so a name like `__proto__` stays data, never a prototype.
  return Object.fromEntries(out);
}

/**
 * One inputs file, parsed. `plain` holds, for each top-level key of a YAML file whose value is an
 * unquoted scalar that YAML reads as something other than a string (`pet: 12`, `zip: 01234`,
 * `on: true`, `x: null`), that scalar's text: a `string` input takes the text, not the number.
 */
export interface InputFile {
  values: Record<string, unknown>;
  plain: ReadonlyMap<string, string>;
}

/** Read one inputs file: `.json` as JSON, anything else as YAML (which also reads JSON). Must hold a mapping. */
export async function readInputFile(path: string, cwd: string): Promise<Record<string, unknown>> {
  return (await readInputFileTyped(path, cwd)).values;
}

async function readInputFileTyped(path: string, cwd: string): Promise<InputFile> {
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
  const plain = new Map<string, string>();
  try {
    if (extname(full).toLowerCase() === '.json') value = JSON.parse(text);
    else {
      const doc = parseDocument(text);
      if (doc.errors.length > 0) throw doc.errors[0];
      value = doc.toJS();
      if (isMap(doc.contents)) {
        for (const item of doc.contents.items) {
          const key = isScalar(item.key) ? item.key.value : item.key;
          const node = item.value;
          if (typeof key === 'string' && isScalar(node) && node.type === 'PLAIN' && typeof node.value !== 'string' && typeof node.source === 'string') {
            plain.set(key, node.source);
          }
        }
      }
    }
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
  return { values: value as Record<string, unknown>, plain };
}

/**
 * The inputs of `run` and `schedule` as read from the command line, before the flow is known:
 * every `--input-file` parsed and every `--input` pair split, so a bad file or pair fails first.
 */
export interface InputSources {
  files: readonly InputFile[];
  pairs: ReadonlyMap<string, string>;
}

export async function readInputSources(args: ParsedArgs, cwd: string): Promise<InputSources> {
  const files: InputFile[] = [];
  for (const file of flagStrings(args, 'input-file')) files.push(await readInputFileTyped(file, cwd));
  return { files, pairs: splitPairs(flagStrings(args, 'input')) };
}

/**
 * The inputs, typed by the flow's declared inputs: every file in order (a later file wins), then
 * the `--input` pairs on top, so a pair always overrides a file. A file's values are taken as
 * written (JSON and quoted YAML are typed already), except an unquoted YAML scalar given to a
 * `string` input, which is its text (`pet: 12` is "12"); pairs follow parseInputValue.
 */
export function typedInputs(sources: InputSources, contracts: InputContracts = {}): Record<string, unknown> {
  const merged = new Map<string, unknown>();
  const contractOf = (name: string) => (Object.hasOwn(contracts, name) ? contracts[name] : undefined);
  for (const file of sources.files) {
    for (const [k, v] of Object.entries(file.values)) {
      const text = file.plain.get(k);
      merged.set(k, text !== undefined && takesRawText(contractOf(k), text) ? text : v);
    }
  }
  for (const [k, raw] of sources.pairs) merged.set(k, parseInputValue(raw, contractOf(k)));
  return Object.fromEntries(merged);
}

/** readInputSources then typedInputs: the inputs of `run` and `schedule`, typed by `contracts`. */
export async function collectInputs(args: ParsedArgs, cwd: string, contracts: InputContracts = {}): Promise<Record<string, unknown>> {
  return typedInputs(await readInputSources(args, cwd), contracts);
}
