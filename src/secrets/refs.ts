import { SECRET_REF_PATTERN } from '../ports/secrets.js';

/** `secret:<name>` references: the only form in which a secret input travels. */
export function isSecretRef(value: unknown): value is string {
  return typeof value === 'string' && SECRET_REF_PATTERN.test(value);
}

/** The reference an omitted secret input defaults to: `secret:<input name>`. */
export function defaultSecretRef(inputName: string): string {
  return `secret:${inputName}`;
}

/**
 * The one secret a secret input resolves: the reference its flow declares as the input's default,
 * else `secret:<input name>`. A caller may name another only where the operator allows it
 * (`allowSecretRefs`, `serve --allow-secret-refs`).
 */
export function declaredSecretRef(inputName: string, contract: { default?: unknown }): string {
  return isSecretRef(contract.default) ? contract.default : defaultSecretRef(inputName);
}

/** The name part of a reference (`secret:db/password` -> `db/password`). */
export function secretRefName(ref: string): string {
  return ref.slice('secret:'.length);
}

/**
 * Whether `text` mentions `ref` as a whole reference (not as the prefix of a longer one, so
 * `secret:a` is not found inside `secret:ab`).
 */
export function mentionsRef(text: string, ref: string): boolean {
  let from = 0;
  for (;;) {
    const at = text.indexOf(ref, from);
    if (at < 0) return false;
    const next = text[at + ref.length];
    if (next === undefined || !/[A-Za-z0-9_.\-/]/.test(next)) return true;
    from = at + 1;
  }
}

/** Every string leaf of a JSON value (keys included), for scanning. */
export function* stringLeaves(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const v of value) yield* stringLeaves(v);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      yield k;
      yield* stringLeaves(v);
    }
  }
}
