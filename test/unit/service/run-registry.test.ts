import { describe, expect, it } from 'vitest';
import { createRunRegistry, type InFlightRun } from '../../../src/service/live/run-registry.js';

/** The in-process registry of sync runs in flight that the run live view reads (src/service/live/run-registry.ts). */

const run = (id: string, automation = 'a1', org = 'o1'): InFlightRun => ({
  run_id: id,
  execution_id: `e-${id}`,
  org_id: org,
  automation_id: automation,
  dispatch: 'sync',
  started_at: '2025-01-01T00:00:00.000Z',
});

describe('run registry', () => {
  it('lists the runs of one automation of one org, newest first, until each finishes', () => {
    const r = createRunRegistry();
    r.started(run('r1'));
    r.started(run('r2'));
    r.started(run('x', 'a2'));
    r.started(run('y', 'a1', 'o2'));
    expect(r.inFlight('o1', 'a1').map((x) => x.run_id)).toEqual(['r2', 'r1']);
    expect(r.inFlight('o2', 'a1').map((x) => x.run_id)).toEqual(['y']);
    r.finished('r2', 'succeeded');
    expect(r.inFlight('o1', 'a1').map((x) => x.run_id)).toEqual(['r1']);
    expect(r.get('r2')).toBeUndefined();
    expect(r.size()).toBe(3);
  });

  it('tells start listeners of their automation only, and finish listeners once; a throwing listener stops nothing', () => {
    const r = createRunRegistry();
    const seen: string[] = [];
    r.onStart('o1', 'a1', () => {
      throw new Error('a listener bug');
    });
    const off = r.onStart('o1', 'a1', (x) => seen.push(`start ${x.run_id}`));
    r.started(run('r1'));
    r.started(run('other', 'a2'));
    r.started(run('elsewhere', 'a1', 'o2'));
    r.onFinish('r1', (s) => seen.push(`finish r1 ${s}`));
    const offFinish = r.onFinish('r1', () => seen.push('never'));
    offFinish();
    r.finished('r1', 'failed');
    r.finished('r1', 'succeeded');
    off();
    r.started(run('r3'));
    // A run not in flight: its finish listener is never called.
    r.onFinish('gone', () => seen.push('gone'));
    r.finished('gone', 'succeeded');
    expect(seen).toEqual(['start r1', 'finish r1 failed']);
  });
});
