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

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, FlagValue> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('--') && arg.length > 2) {
      const body = arg.slice(2);
      const eq = body.indexOf('=');
      if (eq >= 0) {
        bind(flags, body.slice(0, eq), body.slice(eq + 1));
      } else if (VALUE_FLAGS.has(body)) {
        const next = argv[i + 1];
        if (next === undefined) throw new UsageError(`--${body} needs a value`);
        bind(flags, body, next);
        i++;
      } else if (body.startsWith('no-') && body.length > 3) {
        bind(flags, body.slice(3), false);
      } else {
        bind(flags, body, true);
      }
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1 && arg !== '-') {
      const body = arg.slice(1);
      const eq = body.indexOf('=');
      if (eq >= 0) bind(flags, body.slice(0, eq), body.slice(eq + 1));
      else bind(flags, body, true);
      continue;
    }
    positionals.push(arg);
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
