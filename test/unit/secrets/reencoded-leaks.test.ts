import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MASK } from '../../../src/ports/secrets.js';
import { REENCODED_MIN_LENGTH } from '../../../src/secrets/encodings.js';
import { SecretMask } from '../../../src/secrets/mask.js';
import { leakIn, reencodedFormsOf, secretArb } from './leak-helpers.js';

// Issue 27, point 1: a page that showed the secret upper-cased, lower-cased or in hex returned it
// unmasked. For values of at least REENCODED_MIN_LENGTH characters those forms are masked too.

const long = (s: string) => [...s.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '')].length >= REENCODED_MIN_LENGTH;
const longSecret = secretArb.filter(long);

const WORDS = ['the', 'Total', 'ORDER', 'id', '42', 'café', 'Straße', '0x1f', 'deadbeef', 'DEADBEEF', 'user', 'Name:', '—', '\n', ' ', 'ß', 'İ', 'Σ'];
/** Page text: words, numbers, hex-looking runs and arbitrary strings. */
const pageText: fc.Arbitrary<string> = fc
  .array(fc.oneof(fc.constantFrom(...WORDS), fc.string({ maxLength: 6 }), fc.stringMatching(/^[0-9a-fA-F]{2,24}$/)), { maxLength: 30 })
  .map((parts) => parts.join(' '));

function maskOf(secret: string): SecretMask {
  const mask = new SecretMask();
  mask.add(secret);
  return mask;
}

describe('SecretMask: upper-cased, lower-cased and hex forms', () => {
  it('masks the forms of a fixed secret, inside page text', () => {
    const secret = 'Canary-Token.9f';
    const mask = maskOf(secret);
    const hex = Buffer.from(secret).toString('hex');
    for (const form of [
      secret.toUpperCase(),
      secret.toLowerCase(),
      'cAnArY-tOkEn.9F',
      hex,
      hex.toUpperCase(),
      hex.replace(/../g, '$&:').slice(0, -1),
      hex.replace(/../g, '\\x$&'),
    ]) {
      expect(mask.maskString(`<td>Your key: ${form}</td>`)).toBe(`<td>Your key: ${MASK}</td>`);
    }
    // Upper-cased, then percent- or HTML-encoded by the page.
    expect(mask.maskString(encodeURIComponent(secret.toUpperCase()))).toBe(MASK);
    expect(mask.covers('Straße Σ deadbeef 0x1f')).toBe(false);
  });

  it('masks a secret whose case mapping changes its length or depends on context', () => {
    for (const secret of ['straße-key-1', 'ΟΔΥΣΣΕΥΣ-99', 'ﬁnal-ﬁle-key']) {
      const mask = maskOf(secret);
      for (const form of reencodedFormsOf(secret)) expect(mask.maskString(`x ${form} y`), `${secret} as ${form}`).toBe(`x ${MASK} y`);
    }
  });

  it('property: no upper-cased, lower-cased or hex form of a random secret survives, whatever page surrounds it', () => {
    fc.assert(
      fc.property(longSecret, pageText, pageText, (secret, before, after) => {
        const mask = maskOf(secret);
        const forms = reencodedFormsOf(secret);
        expect(forms.length).toBe(4);
        for (const form of forms) {
          const masked = mask.maskString(`${before}${form}${after}`);
          expect(leakIn(masked, secret), `form ${JSON.stringify(form)} of ${JSON.stringify(secret)}`).toBeUndefined();
        }
      }),
      { numRuns: 150 },
    );
  });

  it('property: page text that holds no form of a long secret is left as it is', () => {
    fc.assert(
      fc.property(longSecret, pageText, (secret, page) => {
        fc.pre(leakIn(page, secret) === undefined && !page.toLowerCase().includes(secret.toLowerCase()));
        expect(maskOf(secret).maskString(page)).toBe(page);
      }),
      { numRuns: 150 },
    );
  });

  it('property: below the floor only the exact forms are masked, so ordinary words in other cases stay', () => {
    const shortWord = fc.stringMatching(/^[a-z]{3,7}$/);
    fc.assert(
      fc.property(shortWord, pageText, (secret, page) => {
        const mask = maskOf(secret);
        const upper = secret.toUpperCase();
        expect(mask.maskString(`${page} ${upper} ${page}`)).toBe(mask.maskString(`${page} `) + upper + mask.maskString(` ${page}`));
        expect(mask.maskString(`a ${secret} b`)).toBe(`a ${MASK} b`);
      }),
      { numRuns: 200 },
    );
  });
});
