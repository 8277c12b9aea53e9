import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { FlowError, prefixed } from '../errors.js';

/**
 * The org secret store's encryption at rest (docs/hosted-api.md, "Secrets"): AES-256-GCM under
 * `SVC_SECRETS_KEY` (32 bytes, base64; a comma-separated list rotates, newest first).
 *
 * Ciphertext text: `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts); the key id is the first
 * 8 hex characters of SHA-256 of the key, so a value sealed under an older key is opened with that
 * key after a new one is added. The additional authenticated data binds the ciphertext to its org
 * and name: a ciphertext copied to another org's row or another name does not open.
 */
export interface SecretBox {
  seal(orgId: string, name: string, value: string): string;
  open(orgId: string, name: string, ciphertext: string): string;
  /** Whether `ciphertext` is sealed under the newest key (re-encryption is needed otherwise). */
  isCurrent(ciphertext: string): boolean;
}

const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);
const aad = (orgId: string, name: string) => Buffer.from(JSON.stringify([orgId, name]), 'utf8');

/** Parse `SVC_SECRETS_KEY`: each entry must decode to exactly 32 bytes. */
export function parseSecretsKeys(text: string): Buffer[] {
  const keys = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry, i) => {
      const key = Buffer.from(entry, 'base64');
      if (key.length !== 32) {
        throw new FlowError('invalid_settings', prefixed('service', `SVC_SECRETS_KEY: key ${i + 1} is not 32 bytes of base64 (got ${key.length} bytes)`));
      }
      return key;
    });
  if (keys.length === 0) throw new FlowError('invalid_settings', prefixed('service', 'SVC_SECRETS_KEY is empty'));
  return keys;
}

export function createSecretBox(keys: readonly Buffer[]): SecretBox {
  const byId = new Map(keys.map((k) => [keyId(k), k]));
  const newest = keys[0]!;
  const newestId = keyId(newest);
  return {
    seal(orgId, name, value) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', newest, iv);
      cipher.setAAD(aad(orgId, name));
      const ct = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
      return ['v1', newestId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
    },
    open(orgId, name, text) {
      const [v, id, iv, tag, ct] = text.split('.');
      const key = id === undefined ? undefined : byId.get(id);
      if (v !== 'v1' || !key || iv === undefined || tag === undefined || ct === undefined) {
        throw new FlowError('secret_unreadable', prefixed('service', `secret "${name}" is sealed under a key that is not in SVC_SECRETS_KEY`));
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(aad(orgId, name));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
      } catch (cause) {
        throw new FlowError('secret_unreadable', prefixed('service', `secret "${name}" does not authenticate (tampered, or sealed for another org or name)`), {
          cause,
        });
      }
    },
    isCurrent: (text) => text.split('.')[1] === newestId,
  };
}
