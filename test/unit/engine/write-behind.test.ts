import { describe, expect, it } from 'vitest';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { digestBytes, type Digest } from '../../../src/canonical.js';
import { createFixedClock } from '../../../src/engine/deterministic.js';
import type { JournalStore } from '../../../src/ports/storage.js';
import { JournalWriter } from '../../../src/run/journal-writer.js';
import type { JournalEntry } from '../../../src/run/types.js';
import { SecretMask } from '../../../src/secrets/mask.js';
import { defineTool } from '../../../src/tools/contract.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import { makeSpec, objectContract, recordingLogger, testEngine } from './helpers.js';

// A live run stores its journal behind it (docs/journal.md, "Write-behind", issue 30): the next step
// does not wait for the last one's entries, and a step's entry may wait for an artifact taken after it.
describe('engine: write-behind journal', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);

  it("lists a late artifact in its step's entry, and the next step starts before its bytes come", async () => {
    // Step a's picture comes only once step b has started: a runner that waited for a's entry would
    // never start b, and a's picture would be dropped after LATE_ARTIFACT_MAX_MS.
    let release!: (b: Uint8Array) => void;
    const picture = new Promise<Uint8Array>((r) => (release = r));
    const shootLater = defineTool(objectContract('test/shoot-later'), async (_input: unknown, ctx) => {
      ctx.artifacts!.later!(picture, 'text/plain');
      return {};
    });
    const next = defineTool(objectContract('test/next'), async () => {
      release(bytes('after a'));
      return { ran: true };
    });
    const registry = createToolRegistry([shootLater, next]);
    const logger = recordingLogger();
    const storage = createMemoryStorage();
    const { engine } = testEngine(registry, { storage, logger });
    const spec = makeSpec(registry, [
      { id: 'a', tool: 'test/shoot-later', args: {} },
      { id: 'b', tool: 'test/next', args: {} },
    ]);
    const run = await engine.run({ spec });
    expect(run.status).toBe('succeeded');
    expect(run.journal.map((e) => `${e.event}${'step' in e ? `:${e.step}` : ''}`)).toEqual([
      'run_started',
      'step_started:a',
      'step_succeeded:a',
      'step_started:b',
      'step_succeeded:b',
      'run_finished',
    ]);
    const digest = digestBytes(bytes('after a'));
    expect((run.journal[2] as { artifacts?: Digest[] }).artifacts).toEqual([digest]);
    expect(await storage.artifacts!.get(digest)).toMatchObject({ mediaType: 'text/plain' });
    expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('asks a late artifact to hurry when the run finishes, and lists it', async () => {
    const shootLater = defineTool(objectContract('test/shoot-on-hurry'), async (_input: unknown, ctx) => {
      let give!: (b: Uint8Array) => void;
      ctx.artifacts!.later!(new Promise((r) => (give = r)), 'text/plain', () => give(bytes('hurried')));
      return {};
    });
    const registry = createToolRegistry([shootLater]);
    const logger = recordingLogger();
    const { engine } = testEngine(registry, { logger });
    const run = await engine.run({ spec: makeSpec(registry, [{ id: 'a', tool: 'test/shoot-on-hurry', args: {} }]) });
    expect(run.status).toBe('succeeded');
    expect((run.journal.find((e) => e.event === 'step_succeeded') as { artifacts?: Digest[] }).artifacts).toEqual([digestBytes(bytes('hurried'))]);
    expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('a late artifact that fails lists none, with a warning, and the run succeeds', async () => {
    const shootLater = defineTool(objectContract('test/shoot-fails'), async (_input: unknown, ctx) => {
      ctx.artifacts!.later!(Promise.reject(new Error('the page closed')), 'text/plain');
      return {};
    });
    const registry = createToolRegistry([shootLater]);
    const logger = recordingLogger();
    const { engine } = testEngine(registry, { logger });
    const run = await engine.run({ spec: makeSpec(registry, [{ id: 'a', tool: 'test/shoot-fails', args: {} }]) });
    expect(run.status).toBe('succeeded');
    expect((run.journal.find((e) => e.event === 'step_succeeded') as { artifacts?: Digest[] }).artifacts).toBeUndefined();
    expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('the page closed'))).toBe(true);
  });

  it('an entry the store refuses stops the run at its next step: no later step runs, nothing is stored past the gap', async () => {
    const ran: string[] = [];
    const mark = defineTool(objectContract('test/mark'), async (input: { id: string }) => {
      ran.push(input.id);
      return {};
    });
    const registry = createToolRegistry([mark]);
    const storage = createMemoryStorage();
    // The store refuses step b's step_started (a lost connection, another writer).
    const journal: JournalStore = {
      ...storage.journal,
      append: (runId, entry, ...rest) =>
        entry.event === 'step_started' && (entry as { step: string }).step === 'b'
          ? Promise.reject(new Error('connection lost'))
          : storage.journal.append(runId, entry, ...rest),
    };
    const { engine } = testEngine(registry, { storage: { ...storage, journal } });
    const spec = makeSpec(registry, [
      { id: 'a', tool: 'test/mark', args: { id: 'a' } },
      { id: 'b', tool: 'test/mark', args: { id: 'b' } },
      { id: 'c', tool: 'test/mark', args: { id: 'c' } },
      { id: 'd', tool: 'test/mark', args: { id: 'd' } },
    ]);
    const outcome = await engine.run({ spec }).then(
      (run) => ({ run }),
      (error: unknown) => ({ error }),
    );
    // b ran before its entry's failure was seen; c may have (the failure is seen at the next boundary); d never.
    expect(ran.slice(0, 2)).toEqual(['a', 'b']);
    expect(ran).not.toContain('d');
    const runId = 'run' in outcome ? outcome.run.id : (await storage.runs.list())[0]!.id;
    const stored = await storage.journal.read(runId, 0);
    expect(stored.map((e) => `${e.event}${'step' in e ? `:${e.step}` : ''}`)).toEqual(['run_started', 'step_started:a', 'step_succeeded:a']);
    if ('run' in outcome) expect(outcome.run.status).not.toBe('succeeded');
  });
});

describe('JournalWriter.post', () => {
  const store = () => {
    const entries: JournalEntry[] = [];
    const journal = {
      append: async (_runId: string, entry: JournalEntry) => {
        entries.push(entry);
      },
    } as unknown as JournalStore;
    return { entries, journal };
  };
  const writer = (journal: JournalStore) =>
    new JournalWriter({
      runId: 'r',
      store: journal,
      clock: createFixedClock(),
      flowDigest: `sha256:${'0'.repeat(64)}`,
      inputsDigest: `sha256:${'1'.repeat(64)}`,
      mask: new SecretMask(),
      logger: recordingLogger(),
    });

  it('stores posted entries in the order posted, a pending draft holding back the ones after it, the chain intact', async () => {
    const s = store();
    const w = writer(s.journal);
    let finish!: () => void;
    const slow = new Promise<void>((r) => (finish = r));
    w.post({ event: 'step_skipped', step: 'one', reason: 'first' });
    w.post(slow.then(() => ({ event: 'step_skipped' as const, step: 'two', reason: 'late' })));
    w.post({ event: 'step_skipped', step: 'three', reason: 'third' });
    await new Promise((r) => setImmediate(r));
    expect(s.entries.map((e) => (e as { step: string }).step)).toEqual(['one']);
    finish();
    await w.drain();
    expect(s.entries.map((e) => (e as { step: string }).step)).toEqual(['one', 'two', 'three']);
    expect(s.entries.map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(s.entries[1]!.prev).toBe(s.entries[0]!.digest);
    expect(s.entries[2]!.prev).toBe(s.entries[1]!.digest);
  });

  it('after a posted entry fails, later posts and appends are not stored and drain throws its error', async () => {
    const entries: JournalEntry[] = [];
    const journal = {
      append: async (_runId: string, entry: JournalEntry) => {
        if ((entry as { step?: string }).step === 'bad') throw new Error('refused');
        entries.push(entry);
      },
    } as unknown as JournalStore;
    const w = writer(journal);
    w.post({ event: 'step_skipped', step: 'ok', reason: 'x' });
    w.post({ event: 'step_skipped', step: 'bad', reason: 'x' });
    w.post({ event: 'step_skipped', step: 'after', reason: 'x' });
    await expect(w.drain()).rejects.toThrow('refused');
    await expect(w.append({ event: 'step_skipped', step: 'appended', reason: 'x' })).rejects.toThrow('refused');
    expect(() => w.throwIfFailed()).toThrow('refused');
    expect(entries.map((e) => (e as { step: string }).step)).toEqual(['ok']);
  });
});
