import { parseArgs as splitArgs } from 'node:util';

/**
 * The one argument parser every flowctl command shares: the five argument rules of spec/engine.md.
 *
 * 1. `--flag` is boolean true and `--no-flag` is boolean false.
 * 2. `--key value` and `--key=value` both bind a value. The separated form binds only for the known
 *    value flags (VALUE_FLAGS). Any other flag is a boolean switch, so use `--key=value` for it.
 * 3. A repeated value flag accumulates into an array.
 * 4. A short flag `-x` is boolean unless given as `-x=value`.
 * 5. `--` ends flag parsing; everything after it is positional.
 */
export const VALUE_FLAGS: ReadonlySet<string> = new Set([
  'input',
  'input-file',
  'record-journal',
  'sandbox',
  'to',
  'step',
  'run-id',
  'version',
  'registry',
  'from',
  'lock',
  'mode',
  'packs',
  'body',
  'port',
  'host',
  'token',
  'cron',
  'name',
  'task',
  'ops',
  'secret',
]);

export type FlagValue = boolean | string | (string | boolean)[];

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, FlagValue>;
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

function bind(flags: Record<string, FlagValue>, key: string, value: string | boolean): void {
  const prev = flags[key];
  if (prev === undefined) flags[key] = value;
  else if (Array.isArray(prev)) prev.push(value);
  else flags[key] = [prev, value];
}

// node:util parseArgs splits the words (`--key=value`, a value flag's separated value, `--`); what
// it does not do the way the rules above say is done here, by hand (docs/architecture.md, "Written by
// hand, and why"): a repeated flag of any kind accumulates in order (its `multiple` is per declared
// option and one type), `--no-x` is false for any flag (its `allowNegative` only for declared
// booleans, and the flags are each command's), and a short flag is its whole word (it splits `-abc`
// into -a -b -c and `-x=1` into -x -= -1).
const VALUE_OPTIONS = Object.fromEntries([...VALUE_FLAGS].map((flag) => [flag, { type: 'string', multiple: true } as const]));

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, FlagValue> = {};
  const { tokens } = splitArgs({ args: [...argv], options: VALUE_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  let shortWord = -1;
  for (const token of tokens) {
    if (token.kind === 'positional') {
      positionals.push(token.value);
    } else if (token.kind === 'option-terminator') {
      // Everything after `--` is a positional token.
    } else if (!token.rawName.startsWith('--')) {
      // Rule 4, on the word as typed: one flag, boolean unless `-x=value`.
      if (token.index === shortWord) continue;
      shortWord = token.index;
      const body = argv[token.index]!.slice(1);
      const eq = body.indexOf('=');
      if (eq >= 0) bind(flags, body.slice(0, eq), body.slice(eq + 1));
      else bind(flags, body, true);
    } else if (token.inlineValue) {
      bind(flags, token.name, token.value!);
    } else if (token.name.startsWith('=')) {
      // `--=x`: an empty name bound to x, as the rules read it (parseArgs names the option "=x").
      bind(flags, '', token.name.slice(1));
    } else if (VALUE_FLAGS.has(token.name)) {
      if (token.value === undefined) throw new UsageError(`--${token.name} needs a value`);
      bind(flags, token.name, token.value);
    } else if (token.name.startsWith('no-') && token.name.length > 3) {
      bind(flags, token.name.slice(3), false);
    } else {
      bind(flags, token.name, true);
    }
  }
  return { positionals, flags };
}

/** Accessors that turn flag values into what a command expects, with clear usage errors. */
export function flagString(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) {
    const last = v[v.length - 1];
    if (typeof last !== 'string') throw new UsageError(`--${name} needs a value`);
    return last;
  }
  if (typeof v !== 'string') throw new UsageError(`--${name} needs a value (use --${name} <value> or --${name}=<value>)`);
  return v;
}

export function flagStrings(args: ParsedArgs, name: string): string[] {
  const v = args.flags[name];
  if (v === undefined) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.map((item) => {
    if (typeof item !== 'string') throw new UsageError(`--${name} needs a value`);
    return item;
  });
}

export function flagBool(args: ParsedArgs, name: string): boolean {
  const v = args.flags[name];
  if (v === undefined) return false;
  const last = Array.isArray(v) ? v[v.length - 1] : v;
  if (typeof last === 'boolean') return last;
  if (last === 'true') return true;
  if (last === 'false') return false;
  throw new UsageError(`--${name} is a switch; it takes no value (got "${last}")`);
}

/** Reject flags a command does not know, naming them. */
export function assertKnownFlags(args: ParsedArgs, command: string, known: readonly string[]): void {
  const unknown = Object.keys(args.flags).filter((f) => !known.includes(f));
  if (unknown.length > 0) {
    const list = unknown.map((f) => (f.length === 1 ? `-${f}` : `--${f}`)).join(', ');
    // main() prefixes usage errors with `flowctl <command>:`.
    throw new UsageError(`unknown flag ${list}${known.length ? ` (known: ${known.map((k) => `--${k}`).join(', ')})` : ` (${command} takes no flags)`}`);
  }
}
