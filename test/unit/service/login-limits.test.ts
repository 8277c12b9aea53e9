import { describe, expect, it } from 'vitest';
import { loginDelaySeconds } from '../../../src/service/auth/login-limits.js';
import { resolveSettings } from '../../../src/service/settings.js';

describe('login delay of an (account, source address) pair', () => {
  it('none below the failures allowed; the base at the threshold, doubled per further failure, capped', () => {
    const settings = resolveSettings({ sessionSecrets: ['s'.repeat(40)], authAccountFailuresPer15Min: 5, authDelayBaseSeconds: 1, authDelayCapSeconds: 900 });
    expect([1, 2, 3, 4, 5, 6, 7, 8, 14, 15, 16, 1000].map((n) => loginDelaySeconds(n, settings))).toEqual([0, 0, 0, 0, 1, 2, 4, 8, 512, 900, 900, 900]);
  });

  it('the documented defaults: 5 failures, 1 s doubling, 900 s cap, 50 failures per address, 10 s body idle', () => {
    const s = resolveSettings({ sessionSecrets: ['s'.repeat(40)] });
    expect([s.authAccountFailuresPer15Min, s.authDelayBaseSeconds, s.authDelayCapSeconds, s.authIpFailuresPer15Min, s.bodyIdleTimeoutMs]).toEqual([
      5, 1, 900, 50, 10_000,
    ]);
  });
});
