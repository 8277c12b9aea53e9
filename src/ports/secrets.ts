/**
 * Resolves a secret reference (`secret:<name>`) to its value at run time, inside the one step that
 * declares the `secrets` capability. Throw FlowError `secret_not_found` when it cannot.
 */
export interface SecretStore {
  readonly name: string;
  resolve(ref: string): Promise<string>;
}

export const SECRET_REF_PATTERN = /^secret:[A-Za-z0-9_.\-/]+$/;
export const MASK = '***';
