import type { JournalEntry, StepWarning } from '../../api';

/** The run page's model of a journal: the run's start and end, and each step's attempts, effects, warnings and screenshots. */

export const KINDS: JournalEntry['event'][] = [
  'run_started',
  'step_started',
  'step_succeeded',
  'step_failed',
  'step_skipped',
  'effect_recorded',
  'run_finished',
];

interface Attempt {
  attempt: number;
  started?: JournalEntry;
  ended?: JournalEntry;
}
export interface StepView {
  id: string;
  tool?: string;
  attempts: Attempt[];
  skipped?: JournalEntry;
  effects: JournalEntry[];
  status: 'running' | 'succeeded' | 'failed' | 'skipped' | 'retrying';
  startMs?: number;
  endMs?: number;
  durationMs?: number;
  warnings: StepWarning[];
  artifacts: string[];
}

export function model(journal: JournalEntry[]) {
  const steps = new Map<string, StepView>();
  let started: JournalEntry | undefined;
  let finished: JournalEntry | undefined;
  for (const e of journal) {
    if (e.event === 'run_started') started = e;
    else if (e.event === 'run_finished') finished = e;
    else if (e.step !== undefined) {
      let s = steps.get(e.step);
      if (!s) steps.set(e.step, (s = { id: e.step, attempts: [], effects: [], status: 'running', warnings: [], artifacts: [] }));
      const attempt = e.attempt ?? 1;
      let a = s.attempts.find((x) => x.attempt === attempt);
      if (!a && e.event !== 'step_skipped' && e.event !== 'effect_recorded') s.attempts.push((a = { attempt }));
      if (e.event === 'step_started' && a) {
        a.started = e;
        s.tool = e.tool ? `${e.tool.ref}@${e.tool.version}` : s.tool;
        s.startMs ??= Date.parse(e.at);
        s.status = 'running';
      } else if ((e.event === 'step_succeeded' || e.event === 'step_failed') && a) {
        a.ended = e;
        s.endMs = Date.parse(e.at);
        s.status = e.event === 'step_succeeded' ? 'succeeded' : e.will_retry ? 'retrying' : 'failed';
        s.warnings.push(...(e.warnings ?? []));
        s.artifacts.push(...(e.artifacts ?? []));
      } else if (e.event === 'step_skipped') {
        s.skipped = e;
        s.status = 'skipped';
      } else if (e.event === 'effect_recorded') s.effects.push(e);
    }
  }
  for (const s of steps.values()) {
    const timed = s.attempts.map((a) => a.ended?.duration_ms).filter((d): d is number => typeof d === 'number');
    s.durationMs = timed.length > 0 ? timed.reduce((x, y) => x + y, 0) : s.startMs !== undefined && s.endMs !== undefined ? s.endMs - s.startMs : undefined;
  }
  return { steps: [...steps.values()], started, finished };
}
