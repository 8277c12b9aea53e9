import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashApiKey, keyChecksum, KEY_PATTERN, mintApiKey, parseApiKey } from '../../../src/service/auth/api-keys.js';
import { DEFAULT_PASSWORD_PARAMS, dummyHash, HAS_ARGON2, hashPassword, needsRehash, verifyPassword } from '../../../src/service/auth/passwords.js';
import { readSessionCookie, sessionCookieHeader, signSession, verifySession } from '../../../src/service/auth/session-cookie.js';

const FAST = { argon2: { memoryKiB: 64, passes: 1, parallelism: 1 }, scrypt: { log2N: 10, r: 8, p: 1 } };

describe('passwords', () => {
  it('hash at the OWASP parameters is a self-describing PHC string that verifies', async () => {
    const stored = await hashPassword('correct horse');
    expect(stored).toMatch(HAS_ARGON2 ? /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/ : /^\$scrypt\$ln=17,r=8,p=1\$/);
    expect(await verifyPassword('correct horse', stored)).toBe(true);
    expect(await verifyPassword('correct horsf', stored)).toBe(false);
    expect(needsRehash(stored)).toBe(false);
  });

  it('two hashes of one password differ (fresh salt); each verifies with its own parameters', async () => {
    const a = await hashPassword('pw', FAST);
    const b = await hashPassword('pw', FAST);
    expect(a).not.toBe(b);
    expect(await verifyPassword('pw', a)).toBe(true);
    expect(await verifyPassword('pw', b)).toBe(true);
    // Weaker than today's defaults: upgrade on the next login.
    expect(needsRehash(a, DEFAULT_PASSWORD_PARAMS)).toBe(true);
  });

  it('malformed stored strings are false, never an exception', async () => {
    for (const bad of [
      '',
      'plain',
      '$argon2id$v=19$m=1,t=1,p=1$$',
      '$scrypt$ln=40,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    ]) {
      expect(await verifyPassword('x', bad)).toBe(false);
    }
  });

  it('Unicode passwords are normalised (NFC) before hashing', async () => {
    const stored = await hashPassword('caf\u00e9', FAST);
    expect(await verifyPassword('cafe\u0301', stored)).toBe(true);
  });

  it('the dummy hash is made once and never matches a user-chosen password', async () => {
    const d1 = await dummyHash();
    expect(await dummyHash()).toBe(d1);
    expect(await verifyPassword('', d1)).toBe(false);
  });
});

describe('API keys', () => {
  it('mints keys of the documented form whose checksum verifies', () => {
    for (const mode of ['live', 'test'] as const) {
      const key = mintApiKey(mode);
      expect(key).toMatch(KEY_PATTERN);
      expect(key.startsWith(`svc_${mode}_`)).toBe(true);
      const parsed = parseApiKey(key)!;
      expect(parsed).toEqual({ mode, prefix: key.slice(0, 13), last4: key.slice(-4) });
    }
  });

  it('any one-character change fails the checksum (offline, no lookup)', () => {
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 24, maxLength: 24 }), fc.nat(), fc.nat(), (bytes, at, by) => {
        const key = mintApiKey('live', () => bytes);
        const i = 9 + (at % (key.length - 9));
        const replacement = alphabet[(alphabet.indexOf(key[i]!) + 1 + (by % 61)) % 62]!;
        const changed = key.slice(0, i) + replacement + key.slice(i + 1);
        expect(changed).not.toBe(key);
        expect(parseApiKey(changed)).toBeUndefined();
      }),
      { seed: 1414, numRuns: 2000 },
    );
  });

  it('refuses other shapes', () => {
    const key = mintApiKey('test');
    for (const bad of ['', 'svc_live_', key.slice(0, -1), `${key}x`, key.replace('svc_test_', 'svc_prod_'), key.toUpperCase(), ` ${key}`]) {
      expect(parseApiKey(bad)).toBeUndefined();
    }
  });

  it('the checksum is CRC32 of the body in base62, so a scanner can recompute it', () => {
    const key = mintApiKey('live', () => new Uint8Array(24));
    expect(key).toBe(`svc_live_${'0'.repeat(30)}${keyChecksum(`svc_live_${'0'.repeat(30)}`)}`);
  });

  it('the stored form is a SHA-256 that does not contain the key', () => {
    const key = mintApiKey('live');
    const h = hashApiKey(key);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(h).not.toContain(key.slice(9));
  });
});

describe('session cookie', () => {
  const secrets = ['n'.repeat(32), 'o'.repeat(32)];

  it('signs base64url(payload).base64url(hmac) and verifies until the absolute expiry', () => {
    const value = signSession({ sid: 'abc', exp: 2000 }, secrets);
    expect(value).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(JSON.parse(Buffer.from(value.split('.')[0]!, 'base64url').toString())).toEqual({ sid: 'abc', exp: 2000 });
    expect(verifySession(value, secrets, 1999)).toEqual({ sid: 'abc', exp: 2000 });
    expect(verifySession(value, secrets, 2000)).toBeUndefined();
  });

  it('rotation: the newest key signs, every listed key verifies, an unlisted key does not', () => {
    const old = signSession({ sid: 's', exp: 10 }, [secrets[1]!]);
    expect(verifySession(old, secrets, 1)).toEqual({ sid: 's', exp: 10 });
    expect(verifySession(old, ['p'.repeat(32)], 1)).toBeUndefined();
  });

  it('any tampering fails: payload, signature, extra parts, garbage', () => {
    const value = signSession({ sid: 'abc', exp: 2000 }, secrets);
    const [body, sig] = value.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ sid: 'other', exp: 2000 })).toString('base64url');
    for (const bad of [`${forged}.${sig}`, `${body}.${sig.slice(0, -1)}A`, `${body}.${sig}.x`, `${body}`, '', '.', 'a'.repeat(600)]) {
      expect(verifySession(bad, secrets, 1)).toBeUndefined();
    }
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        expect(verifySession(s, secrets, 1)).toBeUndefined();
      }),
      { seed: 7, numRuns: 500 },
    );
  });

  it('Set-Cookie attributes: HttpOnly, SameSite=Lax, Path, Max-Age, Secure only when asked', () => {
    expect(sessionCookieHeader('v', { secure: false, maxAgeSeconds: 30 })).toBe('svc_session=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=30');
    expect(sessionCookieHeader('v', { secure: true, maxAgeSeconds: 0 })).toBe('svc_session=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure');
  });

  it('reads the cookie from a Cookie header among others', () => {
    expect(readSessionCookie('a=1; svc_session=xyz.abc; b=2')).toBe('xyz.abc');
    expect(readSessionCookie('a=1')).toBeUndefined();
    expect(readSessionCookie(null)).toBeUndefined();
  });
});
