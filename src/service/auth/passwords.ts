import * as crypto from 'node:crypto';
import { promisify } from 'node:util';

/**
 * Password hashing for hosted accounts (docs/hosted-api.md, "Passwords").
 *
 * Argon2id at the parameters OWASP recommends (m=19 MiB, t=2, p=1) where `node:crypto` has it
 * (Node >= 24.7), scrypt at N=2^17, r=8, p=1 elsewhere. Hashes are stored as self-describing PHC
 * strings (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`), so parameters can be raised later: a
 * stored hash is always verified with its own parameters, and `needsRehash` says when to upgrade.
 */

export interface PasswordParams {
  argon2: { memoryKiB: number; passes: number; parallelism: number };
  scrypt: { log2N: number; r: number; p: number };
}

/** OWASP Password Storage Cheat Sheet, 2025: Argon2id m=19 MiB, t=2, p=1; scrypt N=2^17, r=8, p=1. */
export const DEFAULT_PASSWORD_PARAMS: PasswordParams = {
  argon2: { memoryKiB: 19_456, passes: 2, parallelism: 1 },
  scrypt: { log2N: 17, r: 8, p: 1 },
};

const SALT_BYTES = 16;
const HASH_BYTES = 32;

type Argon2 = (
  algorithm: 'argon2id',
  params: { message: string | Buffer; nonce: Buffer; parallelism: number; tagLength: number; memory: number; passes: number },
  callback: (err: Error | null, key: Buffer) => void,
) => void;

const argon2 = (crypto as unknown as { argon2?: Argon2 }).argon2;
const argon2Async = argon2 ? promisify(argon2) : undefined;

const b64 = (buf: Buffer) => buf.toString('base64').replace(/=+$/, '');
const unb64 = (text: string) => Buffer.from(text, 'base64');

/** Whether this Node has Argon2id in node:crypto. */
export const HAS_ARGON2 = argon2Async !== undefined;

async function argon2id(password: string, salt: Buffer, p: PasswordParams['argon2'], length: number): Promise<Buffer> {
  return (await argon2Async!('argon2id', {
    message: Buffer.from(password, 'utf8'),
    nonce: salt,
    parallelism: p.parallelism,
    tagLength: length,
    memory: p.memoryKiB,
    passes: p.passes,
  })) as Buffer;
}

function scrypt(password: string, salt: Buffer, p: PasswordParams['scrypt'], length: number): Promise<Buffer> {
  const N = 2 ** p.log2N;
  return new Promise((resolve, reject) =>
    crypto.scrypt(password.normalize('NFC'), salt, length, { N, r: p.r, p: p.p, maxmem: 256 * N * p.r }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Hash a password into a PHC string with a fresh random salt. */
export async function hashPassword(password: string, params: PasswordParams = DEFAULT_PASSWORD_PARAMS): Promise<string> {
  const salt = crypto.randomBytes(SALT_BYTES);
  if (HAS_ARGON2) {
    const a = params.argon2;
    const hash = await argon2id(password.normalize('NFC'), salt, a, HASH_BYTES);
    return `$argon2id$v=19$m=${a.memoryKiB},t=${a.passes},p=${a.parallelism}$${b64(salt)}$${b64(hash)}`;
  }
  const s = params.scrypt;
  const hash = await scrypt(password, salt, s, HASH_BYTES);
  return `$scrypt$ln=${s.log2N},r=${s.r},p=${s.p}$${b64(salt)}$${b64(hash)}`;
}

interface Parsed {
  kind: 'argon2id' | 'scrypt';
  params: Record<string, number>;
  salt: Buffer;
  hash: Buffer;
}

function parse(stored: string): Parsed | undefined {
  const argon = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(stored);
  if (argon) {
    return { kind: 'argon2id', params: { m: +argon[1]!, t: +argon[2]!, p: +argon[3]! }, salt: unb64(argon[4]!), hash: unb64(argon[5]!) };
  }
  const sc = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(stored);
  if (sc) return { kind: 'scrypt', params: { ln: +sc[1]!, r: +sc[2]!, p: +sc[3]! }, salt: unb64(sc[4]!), hash: unb64(sc[5]!) };
  return undefined;
}

/**
 * Whether `password` matches `stored`, compared in constant time. A malformed stored string is
 * `false`, never an exception. Verifying against an unknown user's dummy hash (see `dummyHash`) costs
 * the same as against a real one.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed || parsed.hash.length < 16 || parsed.hash.length > 64) return false;
  let computed: Buffer;
  if (parsed.kind === 'argon2id') {
    if (!HAS_ARGON2) return false;
    const { m, t, p } = parsed.params as { m: number; t: number; p: number };
    computed = await argon2id(password.normalize('NFC'), parsed.salt, { memoryKiB: m, passes: t, parallelism: p }, parsed.hash.length);
  } else {
    const { ln, r, p } = parsed.params as { ln: number; r: number; p: number };
    if (ln > 22) return false;
    computed = await scrypt(password, parsed.salt, { log2N: ln, r, p }, parsed.hash.length);
  }
  return crypto.timingSafeEqual(computed, parsed.hash);
}

/** Whether a stored hash uses weaker parameters (or another function) than `params` would today. */
export function needsRehash(stored: string, params: PasswordParams = DEFAULT_PASSWORD_PARAMS): boolean {
  const parsed = parse(stored);
  if (!parsed) return true;
  if (HAS_ARGON2) {
    if (parsed.kind !== 'argon2id') return true;
    const a = params.argon2;
    return parsed.params.m! < a.memoryKiB || parsed.params.t! < a.passes || parsed.params.p! < a.parallelism;
  }
  if (parsed.kind !== 'scrypt') return false;
  const s = params.scrypt;
  return parsed.params.ln! < s.log2N || parsed.params.r! < s.r || parsed.params.p! < s.p;
}

let dummy: Promise<string> | undefined;

/**
 * A hash of a random password at today's parameters, made once per process: login verifies an
 * unknown email against it so that an unknown email and a wrong password take the same time.
 */
export function dummyHash(params: PasswordParams = DEFAULT_PASSWORD_PARAMS): Promise<string> {
  dummy ??= hashPassword(crypto.randomBytes(18).toString('base64'), params);
  return dummy;
}
