import { describe, expect, it } from 'vitest';
import { createMemoryStorage } from '../../../adapters/storage-memory/index.js';
import { digestBytes, type Digest } from '../../../src/canonical.js';
import type { ArtifactStore } from '../../../src/ports/storage.js';
import { defineTool } from '../../../src/tools/contract.js';
import { createToolRegistry } from '../../../src/tools/registry.js';
import { makeSpec, recordingLogger, testEngine } from './helpers.js';

// A step does not wait for its artifacts to be stored (a browser step's screenshot, issue 30): the
// step lists the digest from the call on, and the run waits for every write before run_finished.
describe('engine: artifact writes off the step path', () => {
  const contract = {
    ref: 'test/shoot',
    version: '1.0.0',
    description: 'stores an artifact without waiting',
    input_schema: { type: 'object' },
    output_schema: { type: 'object' },
    capabilities: [],
  };
  const shoot = defineTool(contract, async (input: { text: string }, ctx) => {
    ctx.artifacts!.put(new TextEncoder().encode(input.text), 'text/plain').catch(() => {});
    return {};
  });

  /** Memory storage whose artifact writes finish only when released (or fail, for `bad`). */
  const slowArtifacts = () => {
    const storage = createMemoryStorage();
    const inner = storage.artifacts!;
    const held: (() => void)[] = [];
    let finishedEntryBeforeWrites = false;
    let flakyFailed = false;
    const stored: Digest[] = [];
    const artifacts: ArtifactStore = {
      get: (d) => inner.get(d),
      put: (digest, bytes, mediaType) =>
        new Promise<void>((resolve, reject) => {
          held.push(() => {
            const text = new TextDecoder().decode(bytes);
            if (text === 'bad') return reject(new Error('disk full'));
            // `flaky` fails its first write only, as a connection blip would.
            if (text === 'flaky' && !flakyFailed) return ((flakyFailed = true), reject(new Error('connection reset')));
            inner.put(digest, bytes, mediaType).then(() => {
              stored.push(digest);
              resolve();
            }, reject);
          });
          // Released after the steps ran: the run must still be waiting for them.
          setTimeout(() => {
            for (const release of held.splice(0)) release();
          }, 50);
        }),
    };
    return {
      storage: { ...storage, artifacts },
      stored,
      finishedEntryBeforeWrites: () => finishedEntryBeforeWrites,
      mark: () => (finishedEntryBeforeWrites = stored.length < 2),
    };
  };

  it("lists each step's artifact and stores every one before the run finishes", async () => {
    const registry = createToolRegistry([shoot]);
    const s = slowArtifacts();
    const { engine } = testEngine(registry, { storage: s.storage });
    const spec = makeSpec(registry, [
      { id: 'a', tool: 'test/shoot', args: { text: 'first' } },
      { id: 'b', tool: 'test/shoot', args: { text: 'second' } },
    ]);
    const run = await engine.run({ spec }, {}, { onEntry: (e) => (e.event === 'run_finished' ? s.mark() : undefined) });
    expect(run.status).toBe('succeeded');
    const listed = run.journal.filter((e) => e.event === 'step_succeeded').map((e) => (e as { artifacts?: Digest[] }).artifacts);
    expect(listed).toEqual([[digestBytes(new TextEncoder().encode('first'))], [digestBytes(new TextEncoder().encode('second'))]]);
    expect(s.finishedEntryBeforeWrites()).toBe(false);
    expect(new Set(s.stored)).toEqual(new Set(listed.flat()));
  });

  it('a write that fails once is tried again before the run finishes, and stored', async () => {
    const registry = createToolRegistry([shoot]);
    const s = slowArtifacts();
    const logger = recordingLogger();
    const { engine } = testEngine(registry, { storage: s.storage, logger });
    const spec = makeSpec(registry, [{ id: 'a', tool: 'test/shoot', args: { text: 'flaky' } }]);
    const run = await engine.run({ spec });
    expect(run.status).toBe('succeeded');
    expect(s.stored).toEqual([digestBytes(new TextEncoder().encode('flaky'))]);
    expect(logger.lines.some((l) => l.level === 'warn')).toBe(false);
  });

  it('a write that fails twice is logged and the run goes on', async () => {
    const registry = createToolRegistry([shoot]);
    const s = slowArtifacts();
    const logger = recordingLogger();
    const { engine } = testEngine(registry, { storage: s.storage, logger });
    const spec = makeSpec(registry, [{ id: 'a', tool: 'test/shoot', args: { text: 'bad' } }]);
    const run = await engine.run({ spec });
    expect(run.status).toBe('succeeded');
    expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('storing artifact') && l.message.includes('disk full'))).toBe(true);
  });
});
