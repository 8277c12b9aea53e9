import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/canonical.js';
import type { AuthoringRecord, AutomationRecord } from '../../../src/ports/service-storage.js';
import type { ServiceDeps } from '../../../src/service/context.js';
import { appendCursor, maskSecrets, planRerecord, rerecordCursor, usedSlots } from '../../../src/service/studio/rerecord.js';

/** Where re-recorded ops go (docs/hosted-api.md, "Re-record at a drifted step"), and the plan's refusals. */

const nav = { kind: 'navigate', url: 'https://shop.example/' };
const fill = { kind: 'fill', target: { label: 'Name' }, value: 'Ada', slot: 'name' };
const drifted = { kind: 'click', target: { testid: 'continue' } };
const extract = { kind: 'extract', target: { testid: 'greeting' }, name: 'greeting' };
const ops = [nav, fill, drifted, extract];
const a = { kind: 'click', target: { testid: 'a' } };
const b = { kind: 'click', target: { testid: 'b' } };

const place = (cursor: ReturnType<typeof rerecordCursor>, list: unknown[], op: unknown) => {
  const p = cursor.place(list, op);
  p.commit();
  return p;
};

describe('the re-record cursor', () => {
  it('the first op replaces the drifted one, the next follow it, later ops stay', () => {
    const cursor = rerecordCursor({ index: 2, drifted: canonicalJson(drifted) });
    expect(cursor.previous(ops)).toBe(fill);
    expect(cursor.replacing(ops)).toBe(drifted);
    const first = place(cursor, ops, a);
    expect([first.index, first.replaced, first.ops]).toEqual([2, true, [nav, fill, a, extract]]);
    expect(cursor.replacing(first.ops)).toBeUndefined();
    expect(cursor.previous(first.ops)).toBe(a);
    const second = place(cursor, first.ops, b);
    expect([second.index, second.replaced, second.ops]).toEqual([3, false, [nav, fill, a, b, extract]]);
  });

  it('a drifted op deleted or changed meanwhile is not replaced: the op is inserted at its place', () => {
    const cursor = rerecordCursor({ index: 2, drifted: canonicalJson(drifted) });
    const edited = [nav, fill, { ...drifted, target: { testid: 'fixed-by-hand' } }, extract];
    expect(cursor.replacing(edited)).toBeUndefined();
    expect(place(cursor, edited, a).ops).toEqual([nav, fill, a, edited[2], extract]);
    // A list shortened under the cursor: the op goes at the end.
    const short = rerecordCursor({ index: 5, drifted: canonicalJson(drifted) });
    expect(place(short, [nav], a)).toMatchObject({ index: 1, replaced: false, ops: [nav, a] });
  });

  it('an uncommitted placement moves nothing; the append cursor appends', () => {
    const cursor = rerecordCursor({ index: 2, drifted: canonicalJson(drifted) });
    cursor.place(ops, a);
    expect(cursor.replacing(ops)).toBe(drifted);
    expect(appendCursor.place(ops, a)).toMatchObject({ index: 4, replaced: false, ops: [...ops, a] });
    expect(appendCursor.previous(ops)).toBe(extract);
  });

  it('slots no op uses are dropped; secrets are masked out of messages', () => {
    expect(usedSlots([nav, a], ['name'])).toEqual([]);
    expect(usedSlots(ops, ['name'])).toEqual(['name']);
    expect(maskSecrets('typed s3cret into s3cret-field', ['s3cret', ''])).toBe('typed ••• into •••-field');
  });
});

describe('the re-record plan', () => {
  const automation = { id: 'a1', org_id: 'o1', name: 'greet', task: '', site: 'https://shop.example/' } as AutomationRecord;
  const session = (captured: unknown[], extra: Partial<AuthoringRecord> = {}) =>
    ({
      automation_id: 'a1',
      org_id: 'o1',
      captured_ops: captured,
      input_slots: ['name'],
      secret_slots: [],
      files: [],
      state: 'editing',
      input_params: [],
      updated_at: '',
      ...extra,
    }) as AuthoringRecord;
  const deps = {} as ServiceDeps;

  it("refuses a step that is not the capture's op of that kind", async () => {
    for (const [step, words] of [
      ['click_9', /has 4 operations/],
      ['fill_3', /operation 3 of the capture is a click, not a fill/],
      ['click_0', /not a step id/],
      ['Click_3', /not a step id/],
      ['click_3x', /not a step id/],
    ] as const) {
      await expect(planRerecord(deps, automation, session(ops), step)).rejects.toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(words),
      });
    }
  });

  it('compiles the ops before the step into browser tool calls, an input slot at its recorded value', async () => {
    const plan = await planRerecord(deps, automation, session([nav, { ...fill, value: 'A ${literal}' }, drifted, extract]), 'click_3');
    expect(plan).toMatchObject({ step: 'click_3', index: 2, drifted: canonicalJson(drifted), secrets: [] });
    expect(plan.steps).toEqual([
      { id: 'navigate_1', tool: 'browser/navigate@1.0', input: { url: 'https://shop.example/' }, timeoutMs: 30_000 },
      { id: 'fill_2', tool: 'browser/fill@1.1', input: { target: { label: 'Name' }, value: 'A ${literal}' }, timeoutMs: 30_000 },
    ]);
    // Re-recording the first op replays nothing.
    expect((await planRerecord(deps, automation, session(ops), 'navigate_1')).steps).toEqual([]);
  });

  it('a secret slot the replay types needs its org secret', async () => {
    const withSecret = [nav, { kind: 'fill', target: { label: 'Password' }, slot: 'password' }, drifted];
    const noSecrets = { storage: { secrets: { list: async () => [] } } } as unknown as ServiceDeps;
    await expect(planRerecord(noSecrets, automation, session(withSecret, { input_slots: [], secret_slots: ['password'] }), 'click_3')).rejects.toMatchObject({
      code: 'secret_not_found',
      message: expect.stringContaining('PUT /api/secrets/password'),
    });
  });
});
