import { expect, it } from 'vitest';
import { digestBytes, digestOf } from '../../../src/canonical.js';
import { isFlowError } from '../../../src/errors.js';
import type { FlowSpec } from '../../../src/flow/types.js';
import { describeSqlBackends } from './backends.js';

const spec = {
  flowspec: 1,
  name: 'hello',
  inputs: { who: { type: 'string', required: true, secret: false, schema: { type: 'string' } } },
  steps: [],
  output: { greeting: '${inputs.who}', list: [1, 2.5, -0.125, 1e21, 'x'], empty: {}, nothing: null },
} as unknown as FlowSpec;

describeSqlBackends('sql storage: specs, deploys, artifacts', (backend) => {
  it('stores a spec whose canonical digest survives jsonb (key order, numbers, nulls)', async () => {
    const storage = await backend.create();
    const digest = digestOf(spec);
    await storage.specs.put(digest, spec);
    const back = await storage.specs.get(digest);
    expect(back).toStrictEqual(spec);
    expect(digestOf(back)).toBe(digest);
  });

  it('refuses a malformed digest with invalid_record', async () => {
    const storage = await backend.create();
    for (const put of [
      () => storage.specs.put('sha256:ABC' as never, spec),
      () => storage.deploys.set('rest', 'x', 'md5:1' as never),
      () => storage.artifacts!.put('nope' as never, new Uint8Array([1]), 'image/png'),
    ]) {
      const err = await put().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isFlowError(err) && err.code).toBe('invalid_record');
    }
  });

  it('stores artifact bytes exactly, including zero bytes and every byte value', async () => {
    const storage = await backend.create();
    const bytes = new Uint8Array(256 * 4).map((_, i) => i % 256);
    const digest = digestBytes(bytes);
    await storage.artifacts!.put(digest, bytes, 'application/octet-stream');
    await storage.artifacts!.put(digest, new Uint8Array([9]), 'text/plain'); // content-addressed: a no-op
    const back = await storage.artifacts!.get(digest);
    expect(back?.mediaType).toBe('application/octet-stream');
    expect(back?.bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(back!.bytes).equals(Buffer.from(bytes))).toBe(true);
    const empty = digestBytes(new Uint8Array());
    await storage.artifacts!.put(empty, new Uint8Array(), 'text/plain');
    expect((await storage.artifacts!.get(empty))?.bytes.byteLength).toBe(0);
  });

  it('keeps deploy pointers per front and moves them on redeploy', async () => {
    const storage = await backend.create();
    const a = digestOf('a');
    const b = digestOf('b');
    await storage.deploys.set('rest', 'hello', a);
    await storage.deploys.set('mcp', 'hello', b);
    await storage.deploys.set('rest', 'hello', b);
    expect(await storage.deploys.get('rest', 'hello')).toBe(b);
    expect(await storage.deploys.get('mcp', 'hello')).toBe(b);
    expect(await storage.deploys.list('rest')).toEqual([{ name: 'hello', digest: b }]);
  });
});
