import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSecretBox, parseSecretsKeys } from '../../../src/service/secret-box.js';

const k1 = Buffer.alloc(32, 1);
const k2 = Buffer.alloc(32, 2);

describe('secret box (AES-256-GCM under SVC_SECRETS_KEY)', () => {
  it('round-trips any value; the ciphertext holds no plaintext and differs every time', () => {
    const box = createSecretBox([k1]);
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200, unit: 'binary' }), (value) => {
        const a = box.seal('org-1', 'token', value);
        expect(box.open('org-1', 'token', a)).toBe(value);
        expect(box.seal('org-1', 'token', value)).not.toBe(a);
        if (value.length >= 4) expect(a.includes(value)).toBe(false);
      }),
      { seed: 99, numRuns: 300 },
    );
  });

  it('is bound to its org and name: a copied ciphertext does not open elsewhere', () => {
    const box = createSecretBox([k1]);
    const c = box.seal('org-1', 'token', 'v');
    expect(() => box.open('org-2', 'token', c)).toThrow(/does not authenticate/);
    expect(() => box.open('org-1', 'other', c)).toThrow(/does not authenticate/);
    const parts = c.split('.');
    parts[4] = Buffer.from('tampered').toString('base64url');
    expect(() => box.open('org-1', 'token', parts.join('.'))).toThrow(/does not authenticate/);
  });

  it('rotation: after a new key is added first, old ciphertexts open and new ones use the new key', () => {
    const old = createSecretBox([k1]).seal('o', 'n', 'value');
    const rotated = createSecretBox([k2, k1]);
    expect(rotated.open('o', 'n', old)).toBe('value');
    expect(rotated.isCurrent(old)).toBe(false);
    const fresh = rotated.seal('o', 'n', 'value');
    expect(rotated.isCurrent(fresh)).toBe(true);
    // Dropping the old key makes old ciphertexts unreadable, with a clear code.
    expect(() => createSecretBox([k2]).open('o', 'n', old)).toThrow(/not in SVC_SECRETS_KEY/);
  });

  it('parses SVC_SECRETS_KEY: base64 keys of 32 bytes, comma-separated, newest first', () => {
    expect(parseSecretsKeys(`${k2.toString('base64')}, ${k1.toString('base64')}`)).toEqual([k2, k1]);
    expect(() => parseSecretsKeys('c2hvcnQ=')).toThrow(/32 bytes/);
    expect(() => parseSecretsKeys(' , ')).toThrow(/empty/);
  });
});
