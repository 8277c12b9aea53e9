import fc from 'fast-check';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createLauncher } from '../../../src/launcher/launcher.js';
import { digestOf } from '../../../src/canonical.js';
import type { FlowSpec } from '../../../src/flow/types.js';
import { checkJournalChain } from '../../../src/run/journal.js';
import { makeSpec, testEngine, testTools } from '../engine/helpers.js';
import { describeSqlBackends } from './backends.js';
import { journalEntry, runRecord } from './fixtures.js';

// Issue 12, defect 7: Postgres `jsonb` cannot hold U+0000 and refuses a lone surrogate, so an input
// with a NUL answered 500 on --store=sql, or stored a run whose journal started with run_finished.
// The adapter now stores such strings encoded and decodes them on read: values come back exactly.

/** Strings Postgres text and jsonb cannot hold as they are, and strings that look like the encoding. */
const HOSTILE = [
  'a\u0000b',
  '\u0000',
  '\u0000\u0000tail',
  'lone \ud800 high',
  'lone \udfff low',
  '\udc00\ud800',
  'pair \ud83d\ude00 ok',
  '\uffff',
  '\uffff"not json',
  '\uffff"a\\u0000b"',
  'middle \uffff mark',
  'back\\u0000slash',
  '\\ud800 text',
  '',
];

const hostileValue = {
  list: HOSTILE,
  keys: Object.fromEntries(HOSTILE.map((s, i) => [s, i])),
  nested: { deeper: [{ [HOSTILE[0]!]: HOSTILE[3], plain: 'x' }] },
  ['__proto__']: 'data, not a prototype',
};
// Computed keys with __proto__ define an own property, as JSON.parse does.
Object.defineProperty(hostileValue, '__proto__', { value: { 'x\u0000': 1 }, enumerable: true, writable: true, configurable: true });

/** Any string: full code points, NUL, lone surrogates, U+FFFF, and the encoding's own prefix. */
const anyString = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom('\u0000', '\ud800', '\udc00', '\uffff', '"', '\\', 'u', '0', 'a') }),
  fc.constantFrom(...HOSTILE),
);
const anyJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    anyString,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(anyString, tie('value'), { maxKeys: 4, noNullPrototype: true }),
  ),
})).value;

describeSqlBackends('sql storage: text Postgres cannot hold as it is', (backend) => {
  it('stores NUL, lone surrogates and U+FFFF-prefixed strings (values and keys) in every JSON column and reads them back exactly', async () => {
    const storage = await backend.create();
    const spec = { flowspec: 1, name: 'hostile', inputs: {}, steps: [], output: hostileValue } as unknown as FlowSpec;
    const digest = digestOf(spec);
    await storage.specs.put(digest, spec);
    const back = await storage.specs.get(digest);
    expect(back).toStrictEqual(spec);
    expect(digestOf(back)).toBe(digest);
    expect(Object.getPrototypeOf((back as { output: object }).output)).toBe(Object.prototype);

    const run = runRecord({ output: hostileValue, error: { code: 'x', message: 'echoed a\u0000b \ud800', retryable: false } });
    await storage.runs.create(run);
    expect(await storage.runs.get(run.id)).toStrictEqual(run);
    await storage.runs.update(run.id, { output: HOSTILE, status: 'succeeded' });
    expect((await storage.runs.get(run.id))!.output).toStrictEqual(HOSTILE);

    const first = journalEntry(0, null, false, { inputs: hostileValue });
    const second = journalEntry(1, first.digest, true, { output: HOSTILE });
    await storage.journal.append(run.id, first);
    await storage.journal.append(run.id, second);
    const entries = await storage.journal.read(run.id);
    expect(entries).toStrictEqual([first, second]);
    expect(entries.map((e) => e.event)).toEqual(['run_started', 'run_finished']);
    expect(() => checkJournalChain(entries)).not.toThrow();
    const watched = [];
    for await (const e of storage.journal.watch(run.id)) watched.push(e);
    expect(watched).toStrictEqual([first, second]);
  });

  it('keeps the stored jsonb queryable: no U+0000 in it, events and seq readable by SQL', async () => {
    const storage = await backend.create();
    const run = runRecord();
    await storage.runs.create(run);
    const first = journalEntry(0, null, false, { inputs: { s: 'a\u0000b', t: '\ud800' } });
    await storage.journal.append(run.id, first);
    // The raw column as SQL sees it: plain jsonb, no U+0000 in it, queryable like any other entry.
    const raw = await storage.db
      .selectFrom('journal')
      .select([sql<string>`entry->>'event'`.as('event'), sql<string>`entry::text`.as('text'), sql<number>`(entry->>'seq')::integer`.as('seq')])
      .where('run_id', '=', run.id)
      .execute();
    expect(raw).toHaveLength(1);
    expect(raw[0]!.event).toBe('run_started');
    expect(Number(raw[0]!.seq)).toBe(0);
    expect(raw[0]!.text).not.toContain('\u0000');
    expect(raw[0]!.text).toContain('\uffff');
    const rows = await storage.journal.read(run.id);
    expect(rows).toStrictEqual([first]);
  });

  it('round-trips any JSON value, whatever its strings (fast-check, fixed seed)', async () => {
    const storage = await backend.create();
    await fc.assert(
      fc.asyncProperty(anyJson, async (value) => {
        const run = runRecord({ output: value });
        await storage.runs.create(run);
        expect((await storage.runs.get(run.id))!.output).toStrictEqual(value);
        const entry = journalEntry(0, null, false, { inputs: { v: value } });
        await storage.journal.append(run.id, entry);
        const [back] = await storage.journal.read(run.id);
        expect(back).toStrictEqual(entry);
      }),
      { seed: 0x0a11_7e47, numRuns: backend.kind === 'postgres' ? 60 : 120 },
    );
  });

  it('runs a flow whose input holds NUL through the engine and the REST launcher: 200, a journal that starts with run_started, GET and replay verify', async () => {
    const storage = await backend.create();
    const { registry } = testTools();
    const spec = makeSpec(registry, [{ id: 'echo', tool: 'test/echo', args: { text: '${inputs.text}' } }], {
      name: 'nul',
      inputs: { text: { type: 'string', required: true } },
      output: '${steps.echo.output.text}',
    });
    const { engine } = testEngine(registry, { storage });
    const launcher = createLauncher({ engine, flows: [{ name: 'nul', spec }] });
    for (const text of ['a\u0000b', '\u0000', 'x\uffff', '\uffff"\\u0000"']) {
      const res = await launcher.fetch(
        new Request('http://127.0.0.1/flows/nul/runs', { method: 'POST', body: JSON.stringify({ text }), headers: { 'content-type': 'application/json' } }),
      );
      const body = (await res.json()) as { id: string; status: string; output: unknown; journal: Array<{ event: string; inputs?: unknown }> };
      expect(res.status).toBe(200);
      expect(body.status).toBe('succeeded');
      expect(body.output).toBe(text);
      expect(body.journal[0]!.event).toBe('run_started');
      expect(body.journal[0]!.inputs).toEqual({ text });
      const got = await launcher.fetch(new Request(`http://127.0.0.1/runs/${body.id}`));
      expect(got.status).toBe(200);
      expect(await got.json()).toEqual(body);
      const replay = await launcher.fetch(
        new Request(`http://127.0.0.1/runs/${body.id}/replay`, { method: 'POST', body: '{"mode":"verify"}', headers: { 'content-type': 'application/json' } }),
      );
      expect(replay.status).toBe(200);
      const replayed = (await replay.json()) as { status: string; output: unknown };
      expect(replayed.status).toBe('succeeded');
      expect(replayed.output).toBe(text);
    }
  });
});
