import { describe, expect, it } from 'vitest';
import { resolveSettings, settingsFromEnv } from '../../../src/service/settings.js';

describe('SVC_QUEUE_ORPHAN (the orphan sweep bound of queue dispatch)', () => {
  it('defaults to 60 s and reads the environment', () => {
    expect(resolveSettings({}).queueOrphanSeconds).toBe(60);
    expect(resolveSettings(settingsFromEnv({ SVC_QUEUE_ORPHAN: '5' })).queueOrphanSeconds).toBe(5);
  });
  it('refuses a bound outside 1 to 86400 seconds with a clear message', () => {
    for (const bad of [0, -1, 86_401, Number.NaN]) {
      expect(() => resolveSettings({ queueOrphanSeconds: bad })).toThrow(/SVC_QUEUE_ORPHAN must be seconds from 1 to 86400/);
    }
  });
});
