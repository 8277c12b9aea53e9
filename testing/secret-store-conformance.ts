import { describe, expect, it } from 'vitest';
import type { SecretStore } from '../src/ports/secrets.js';
import { SUITE_TIMEOUT_MS } from './bounded.js';

/**
 * The SecretStore port's promises (src/ports/secrets.ts, docs/journal.md "Secrets"): `resolve` takes a
 * reference `secret:<name>` and gives the value set for that name, byte for byte; a name with no value
 * is FlowError `secret_not_found`; something that is not a reference never resolves to a value; no
 * error message carries a stored value.
 *
 * `create(seed)` returns a store holding exactly `seed` (name -> value; names of letters, digits,
 * `_`, `.` and `-`, which every store here accepts). Stores that map names onto another namespace
 * (environment variables) may merge names that differ only in case or punctuation: the suite seeds
 * names that stay distinct.
 */
export interface SecretStoreConformanceOptions {
  name: string;
  create: (seed: Readonly<Record<string, string>>) => Promise<SecretStore>;
  /** Called after each test with the store it made (close pools, restore state). */
  dispose?: (store: SecretStore) => Promise<void>;
}

const SEED: Readonly<Record<string, string>> = {
  api_token: 'tok-CONFORMANCE-1',
  'db.password': 'p@ss word+/=&?#%',
  'mail.key': 'münchen – 東京 – 🔑',
  'multi-line': 'line one\nline two\r\n\ttabbed',
  long_value: 'L'.repeat(4096),
};

async function codeOf(p: Promise<unknown>): Promise<{ code?: string; message: string; resolved?: unknown }> {
  try {
    return { resolved: await p, message: '' };
  } catch (err) {
    return { code: (err as { code?: string }).code, message: String((err as Error).message ?? err) };
  }
}

export function describeSecretStoreConformance(options: SecretStoreConformanceOptions): void {
  describe(`secret store conformance: ${options.name}`, { timeout: SUITE_TIMEOUT_MS }, () => {
    const withStore = async (seed: Readonly<Record<string, string>>, fn: (store: SecretStore) => Promise<void>) => {
      const store = await options.create(seed);
      try {
        await fn(store);
      } finally {
        await options.dispose?.(store);
      }
    };

    it('has a non-empty name', async () => {
      await withStore(SEED, async (store) => {
        expect(typeof store.name).toBe('string');
        expect(store.name.length).toBeGreaterThan(0);
      });
    });

    it('resolves every seeded reference to its exact value (punctuation, non-ASCII, newlines, 4 KiB)', async () => {
      await withStore(SEED, async (store) => {
        for (const [name, value] of Object.entries(SEED)) expect(await store.resolve(`secret:${name}`)).toBe(value);
      });
    });

    it('resolves concurrent lookups each to its own value', async () => {
      await withStore(SEED, async (store) => {
        const names = Object.keys(SEED);
        const values = await Promise.all(Array.from({ length: 50 }, (_, i) => store.resolve(`secret:${names[i % names.length]}`)));
        values.forEach((v, i) => expect(v).toBe(SEED[names[i % names.length]!]));
      });
    });

    it('an unknown name is FlowError secret_not_found, and no error names a stored value', async () => {
      await withStore(SEED, async (store) => {
        const missing = await codeOf(store.resolve('secret:not_set_anywhere'));
        expect(missing.resolved).toBeUndefined();
        expect(missing.code).toBe('secret_not_found');
        for (const value of Object.values(SEED)) expect(missing.message).not.toContain(value);
      });
    });

    it('something that is not a reference never resolves to a value', async () => {
      await withStore(SEED, async (store) => {
        for (const bad of ['api_token', 'secret:', 'secret:api token', 'SECRET:api_token', ' secret:api_token', 'secret:api_token\n', '']) {
          const out = await codeOf(store.resolve(bad));
          expect(out.resolved, `resolve(${JSON.stringify(bad)})`).toBeUndefined();
          expect(['invalid_secret_ref', 'secret_not_found']).toContain(out.code);
          for (const value of Object.values(SEED)) expect(out.message).not.toContain(value);
        }
      });
    });

    it('an empty store resolves nothing', async () => {
      await withStore({}, async (store) => {
        expect((await codeOf(store.resolve('secret:api_token'))).code).toBe('secret_not_found');
      });
    });
  });
}
