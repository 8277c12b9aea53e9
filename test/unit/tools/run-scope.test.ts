import { describe, expect, it } from 'vitest';
import { createRunScope } from '../../../src/tools/run-scope.js';
import { createTestToolContext } from '../../../src/tools/testing-context.js';

describe('createRunScope', () => {
  it('creates a resource once, even for concurrent gets', async () => {
    const scope = createRunScope();
    let created = 0;
    const create = async () => ({ n: ++created });
    const [a, b] = await Promise.all([scope.get('k', create), scope.get('k', create)]);
    expect(a).toBe(b);
    expect(await scope.get('k', create)).toBe(a);
    expect(created).toBe(1);
  });

  it('forgets a failed create so the next get retries', async () => {
    const scope = createRunScope();
    await expect(scope.get('k', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(scope.get('k', async () => 'ok')).resolves.toBe('ok');
  });

  it('disposes newest first, once, runs every disposer and reports failures together', async () => {
    const scope = createRunScope();
    const order: string[] = [];
    await scope.get(
      'a',
      async () => 'a',
      (v) => void order.push(v),
    );
    await scope.get(
      'b',
      async () => 'b',
      () => {
        order.push('b');
        throw new Error('b failed');
      },
    );
    await scope.get(
      'c',
      async () => 'c',
      async (v) => void order.push(v),
    );
    await expect(scope.dispose()).rejects.toBeInstanceOf(AggregateError);
    expect(order).toEqual(['c', 'b', 'a']);
    await expect(scope.dispose()).rejects.toBeInstanceOf(AggregateError);
    expect(order).toEqual(['c', 'b', 'a']);
    await expect(scope.get('d', async () => 'd')).rejects.toThrow(/run has ended/);
  });
});

describe('createTestToolContext', () => {
  it('records effects, warnings and logs and forwards them to overrides', async () => {
    const seen: string[] = [];
    const ctx = createTestToolContext({ stepId: 's1', effect: (e) => void seen.push(e.target) });
    ctx.effect({ kind: 'net', target: 'example.test' });
    ctx.warn({ code: 'drift', message: 'moved' });
    ctx.logger.info('hello', { a: 1 });
    expect(ctx.stepId).toBe('s1');
    expect(ctx.effects).toEqual([{ kind: 'net', target: 'example.test' }]);
    expect(seen).toEqual(['example.test']);
    expect(ctx.warnings).toEqual([{ code: 'drift', message: 'moved' }]);
    expect(ctx.logs).toEqual([{ level: 'info', message: 'hello', data: { a: 1 } }]);
  });

  it('close() disposes what tools put in the scope', async () => {
    const ctx = createTestToolContext();
    let disposed = 0;
    await ctx.scope.get(
      'r',
      async () => 1,
      () => void disposed++,
    );
    await ctx.close();
    expect(disposed).toBe(1);
  });
});
