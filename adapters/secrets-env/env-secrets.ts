import { FlowError } from '../../src/errors.js';
import type { SecretStore } from '../../src/ports/secrets.js';
import { isSecretRef, secretRefName } from '../../src/secrets/refs.js';

export interface EnvSecretsOptions {
  /** The environment to read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Variable name prefix (default `FLOWCTL_SECRET_`). */
  prefix?: string;
}

/** `secret:db/password` -> `FLOWCTL_SECRET_DB_PASSWORD`: upper-cased, every other character to `_`. */
export function secretEnvName(ref: string, prefix = 'FLOWCTL_SECRET_'): string {
  return (
    prefix +
    secretRefName(ref)
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, '_')
  );
}

/**
 * A SecretStore over environment variables. Values are read at resolve time, never cached. A variable
 * that is unset or empty does not resolve (`secret_not_found`).
 */
export function createEnvSecrets(options: EnvSecretsOptions = {}): SecretStore {
  const env = options.env ?? process.env;
  const prefix = options.prefix ?? 'FLOWCTL_SECRET_';
  return {
    name: 'secrets-env',
    async resolve(ref) {
      if (!isSecretRef(ref)) {
        throw new FlowError('invalid_secret_ref', `[flowctl] [secrets-env] "${ref}" is not a secret reference (secret:<name>)`);
      }
      const variable = secretEnvName(ref, prefix);
      const value = env[variable];
      if (value === undefined) {
        throw new FlowError('secret_not_found', `[flowctl] [secrets-env] ${ref} is not set (environment variable ${variable})`, {
          data: { ref, variable },
        });
      }
      // An empty value is refused as an unset one (the hosted org store refuses to store one): a run
      // typing "" would fail later, and misleadingly (a login page that does not go on, locator_drift).
      if (value === '') {
        throw new FlowError(
          'secret_not_found',
          `[flowctl] [secrets-env] ${ref} is set but empty (environment variable ${variable}); an empty secret is refused`,
          {
            data: { ref, variable, empty: true },
          },
        );
      }
      return value;
    },
  };
}
