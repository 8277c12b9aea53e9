import { describe, expect, it } from 'vitest';
import { isFlowError } from '../../../src/errors.js';
import { addPins, emptyLock, parseLock, resolvePin, serializeLock } from '../../../src/tools/lock.js';
import { testRegistry } from './test-tools.js';

const D1 = `sha256:${'1'.repeat(64)}` as const;
const D2 = `sha256:${'2'.repeat(64)}` as const;

function badLock(text: string): string {
  try {
    parseLock(text);
  } catch (err) {
    if (isFlowError(err, 'bad_lock')) return err.message;
    throw err;
  }
  throw new Error('expected bad_lock');
}

describe('flowctl.lock', () => {
  it('serializes exactly {entries: [{ref, version, contract_digest}]}, sorted, pretty, with a newline', () => {
    expect(serializeLock(emptyLock())).toBe('{\n  "entries": []\n}\n');
    const lock = addPins({ entries: [{ ref: 'b/x', version: '1.10.0', contract_digest: D1 }] }, [
      { ref: 'b/x', version: '1.9.0', contract_digest: D2 },
      { ref: 'a/y', version: '2.0.0', contract_digest: D1 },
    ]);
    expect(lock.entries.map((e) => `${e.ref}@${e.version}`)).toEqual(['a/y@2.0.0', 'b/x@1.9.0', 'b/x@1.10.0']);
    const text = serializeLock(lock);
    expect(text.endsWith('}\n')).toBe(true);
    expect(JSON.parse(text)).toEqual(lock);
    expect(text.indexOf('"contract_digest"')).toBeLessThan(text.indexOf('"ref"'));
    expect(parseLock(text)).toEqual(lock);
  });

  it('rejects malformed lock files with bad_lock', () => {
    expect(badLock('{')).toMatch(/not JSON/);
    expect(badLock('[]')).toMatch(/not an object/);
    expect(badLock('{"entries": [], "extra": 1}')).toMatch(/exactly one field/);
    expect(badLock('{"entries": [{"ref": "a/b", "version": "1", "contract_digest": "x"}]}')).toMatch(/MAJOR.MINOR.PATCH/);
    expect(badLock(`{"entries": [{"ref": "a/b", "version": "1.0.0", "contract_digest": "sha256:00"}]}`)).toMatch(/contract_digest/);
    expect(badLock(`{"entries": [{"ref": "a/b", "version": "1.0.0", "contract_digest": "${D1}", "note": 1}]}`)).toMatch(/unknown fields note/);
  });

  it('resolvePin explains what is missing', () => {
    const tools = testRegistry();
    const unknown = resolvePin(tools, undefined, 'core/templat', '1');
    expect(unknown).toMatchObject({ ok: false, code: 'unknown_tool' });
    if (!unknown.ok) expect(unknown.message).toContain('core/template');
    const noVersion = resolvePin(tools, undefined, 'test/versioned', '3');
    expect(noVersion).toMatchObject({ ok: false, code: 'unknown_tool' });
    if (!noVersion.ok) expect(noVersion.message).toContain('1.0.0, 1.2.0, 1.10.1, 2.0.0');
    const fromLock = resolvePin(tools, { entries: [{ ref: 'test/versioned', version: '1.2.0', contract_digest: D1 }] }, 'test/versioned', '1');
    expect(fromLock).toMatchObject({ ok: false, code: 'lock_mismatch' });
  });
});
