import { isFlowError, prettyJson } from '../src/engine-entry.js';
import { SecretMask } from '../src/secrets/mask.js';
import type { CliIO } from './io.js';
import { EXIT } from './io.js';

/**
 * Error codes that mean "bad usage or bad input, nothing ran" (exit 2). Every other FlowError is an
 * operation that ran and failed (exit 1). docs/cli.md lists the exit codes.
 */
const USAGE_CODES = new Set([
  'compile_failed',
  'invalid_inputs',
  'input_file_unreadable',
  'input_file_invalid',
  'unknown_sandbox',
  'flow_not_found',
  'run_not_found',
  'step_not_found',
  'not_found',
  'invalid_fixture',
  'invalid_run',
  'fixture_unreadable',
  'invalid_secret_ref',
  // A secret input does not resolve: found before the run is created, so nothing ran.
  'secret_not_found',
]);

export function exitCodeFor(code: string): number {
  if (code === 'refused') return EXIT.refused;
  return USAGE_CODES.has(code) ? EXIT.usage : EXIT.failed;
}

/**
 * Print a structured error: the message (and its detail lines) on stderr; with `--json` also
 * `{"error": {code, message, data?}}` on stdout so scripts can branch on the code. Non-FlowErrors are
 * bugs: rethrown so the bin prints the stack and exits 70.
 */
export function reportError(io: CliIO, err: unknown, options: { json?: boolean; command: string; details?: string[] }): number {
  if (!isFlowError(err)) throw err;
  io.stderr.write(`flowctl ${options.command}: ${err.message}\n`);
  for (const line of options.details ?? []) io.stderr.write(`${line}\n`);
  if (options.json) io.stdout.write(`${prettyJson({ error: err.toJSON() })}\n`);
  return exitCodeFor(err.code);
}

/** The flow's output value on stdout (a spec exception): strings as they are, anything else as sorted pretty JSON. */
export function printOutputValue(io: CliIO, value: unknown): void {
  if (value === undefined) return;
  io.stdout.write(typeof value === 'string' ? `${value}\n` : `${prettyJson(value)}\n`);
}

/** Replace every occurrence of the given secret values, in any of their encodings (SecretMask), with `***`. */
export function maskText(text: string, secrets: readonly string[] | SecretMask): string {
  return maskOf(secrets).maskString(text);
}

function maskOf(secrets: readonly string[] | SecretMask): SecretMask {
  if (secrets instanceof SecretMask) return secrets;
  const mask = new SecretMask();
  for (const s of secrets) mask.add(s);
  return mask;
}

/** Values of `FLOWCTL_SECRET_*` worth masking: short values would mangle ordinary text, and the engine masks what it resolves anyway. */
export function envSecretValues(env: Record<string, string | undefined>): string[] {
  const values = Object.entries(env)
    .filter(([k, v]) => k.startsWith('FLOWCTL_SECRET_') && typeof v === 'string' && v.length >= 4)
    .map(([, v]) => v!);
  // Longest first, so a secret that contains another is masked whole.
  return [...new Set(values)].sort((a, b) => b.length - a.length);
}

function maskingStream<S extends NodeJS.WritableStream>(stream: S, values: readonly string[]): S {
  const secrets = maskOf(values);
  return new Proxy(stream, {
    get(target, prop) {
      if (prop === 'write') {
        return (chunk: unknown, ...rest: unknown[]) => {
          const masked = typeof chunk === 'string' ? maskText(chunk, secrets) : Buffer.isBuffer(chunk) ? maskText(chunk.toString('utf8'), secrets) : chunk;
          return (target.write as (...a: unknown[]) => boolean).call(target, masked, ...rest);
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The same IO with stdout and stderr masking the environment's secret values (second line of defence). */
export function maskedIO(io: CliIO): CliIO {
  const secrets = envSecretValues(io.env);
  if (secrets.length === 0) return io;
  return { ...io, stdout: maskingStream(io.stdout, secrets), stderr: maskingStream(io.stderr, secrets) };
}
