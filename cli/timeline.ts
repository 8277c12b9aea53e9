import { prettyJson, type JournalEntry, type Run, type StepError, type StepWarning, type ToolPin } from '../src/engine-entry.js';

/** One attempt of one step, read from the journal. */
export interface AttemptView {
  attempt: number;
  status: 'running' | 'succeeded' | 'failed';
  provider?: string;
  input?: unknown;
  input_digest?: string;
  output?: unknown;
  output_digest?: string;
  duration_ms?: number;
  error?: StepError;
  /** When the attempt started and ended (journal `at`). */
  started_at?: string;
  finished_at?: string;
  warnings: StepWarning[];
  effects: { kind: string; target: string; idempotency_key: string }[];
}

/** One step of a run, as `inspect` shows it. Built only from the journal. */
export interface StepView {
  step: string;
  tool?: string;
  status: 'running' | 'succeeded' | 'failed' | 'skipped';
  attempts: AttemptView[];
  skip_reason?: string;
  /** Sum of the attempts' durations, when recorded. */
  duration_ms?: number;
}

const pinText = (pin: ToolPin) => `${pin.ref}@${pin.version}`;

/** The recorded duration, else the time between the attempt's started and finished entries. */
function durationOf(a: AttemptView, finishedAt: string, recorded: number | undefined): number | undefined {
  if (recorded !== undefined) return recorded;
  if (!a.started_at) return undefined;
  const ms = Date.parse(finishedAt) - Date.parse(a.started_at);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** Group the journal by step, in the order steps first appear. */
export function stepViews(journal: readonly JournalEntry[]): StepView[] {
  const views = new Map<string, StepView>();
  const view = (step: string) => {
    let v = views.get(step);
    if (!v) views.set(step, (v = { step, status: 'running', attempts: [] }));
    return v;
  };
  const attemptOf = (v: StepView, n: number) => {
    let a = v.attempts.find((x) => x.attempt === n);
    if (!a) v.attempts.push((a = { attempt: n, status: 'running', warnings: [], effects: [] }));
    return a;
  };
  for (const e of journal) {
    switch (e.event) {
      case 'step_started': {
        const v = view(e.step);
        v.tool = pinText(e.tool);
        v.status = 'running';
        Object.assign(attemptOf(v, e.attempt), { provider: e.provider, input: e.input, input_digest: e.input_digest, started_at: e.at });
        break;
      }
      case 'step_succeeded': {
        const v = view(e.step);
        v.status = 'succeeded';
        const a = attemptOf(v, e.attempt);
        Object.assign(a, {
          status: 'succeeded',
          output: e.output,
          output_digest: e.output_digest,
          duration_ms: durationOf(a, e.at, e.duration_ms),
          finished_at: e.at,
        });
        a.warnings.push(...(e.warnings ?? []));
        break;
      }
      case 'step_failed': {
        const v = view(e.step);
        v.status = 'failed';
        const a = attemptOf(v, e.attempt);
        Object.assign(a, { status: 'failed', error: e.error, duration_ms: durationOf(a, e.at, e.duration_ms), finished_at: e.at });
        a.warnings.push(...(e.warnings ?? []));
        break;
      }
      case 'step_skipped': {
        const v = view(e.step);
        v.status = 'skipped';
        v.skip_reason = e.reason;
        break;
      }
      case 'effect_recorded':
        attemptOf(view(e.step), e.attempt).effects.push(e.effect);
        break;
      default:
        break;
    }
  }
  for (const v of views.values()) {
    const durations = v.attempts.map((a) => a.duration_ms).filter((d): d is number => d !== undefined);
    if (durations.length) v.duration_ms = durations.reduce((a, b) => a + b, 0);
  }
  return [...views.values()];
}

function pad(text: string, width: number): string {
  return text.length >= width ? `${text} ` : text.padEnd(width);
}

/** The human timeline of `inspect`: a header, one block per step, then the output or the error. */
export function formatTimeline(run: Run): string {
  const started = run.journal.find((e) => e.event === 'run_started');
  const finished = run.journal.find((e) => e.event === 'run_finished');
  const lines: string[] = [];
  const name = started && 'flow_name' in started ? started.flow_name : '?';
  lines.push(`run ${run.id}  ${name}  ${run.status}`);
  lines.push(`flow ${run.flow_digest}`);
  lines.push(`started ${run.started_at}${run.finished_at ? `  finished ${run.finished_at}` : ''}`);
  if (started?.event === 'run_started' && started.replay_of) {
    lines.push(`replay (${started.replay_of.mode}) of run ${started.replay_of.run_id}`);
  }
  lines.push('');
  const steps = stepViews(run.journal);
  const w = {
    step: Math.max(4, ...steps.map((s) => s.step.length)) + 2,
    tool: Math.max(4, ...steps.map((s) => (s.tool ?? '-').length)) + 2,
  };
  lines.push(`${pad('STEP', w.step)}${pad('TOOL', w.tool)}${pad('STATUS', 11)}${pad('ATTEMPTS', 10)}DURATION`);
  for (const s of steps) {
    const duration = s.duration_ms === undefined ? '-' : `${s.duration_ms} ms`;
    lines.push(`${pad(s.step, w.step)}${pad(s.tool ?? '-', w.tool)}${pad(s.status, 11)}${pad(String(s.attempts.length), 10)}${duration}`);
    if (s.skip_reason) lines.push(`    skipped: ${s.skip_reason}`);
    for (const a of s.attempts) {
      for (const fx of a.effects) lines.push(`    effect: ${fx.kind} ${fx.target}`);
      for (const w2 of a.warnings) lines.push(`    warning: ${w2.code}: ${w2.message}`);
      if (a.error) {
        const tag = s.attempts.length > 1 ? ` (attempt ${a.attempt})` : '';
        lines.push(`    error${tag}: ${a.error.code}: ${a.error.message}`);
      }
    }
  }
  lines.push('');
  if (finished?.event === 'run_finished' && finished.error) {
    const at = finished.error.step ? ` at step ${finished.error.step}` : '';
    lines.push(`error${at}: ${finished.error.code}: ${finished.error.message}`);
  }
  if (run.output !== undefined) lines.push(`output:\n${prettyJson(run.output)}`);
  else if (run.status === 'succeeded') lines.push('output: (none; the flow declares no output)');
  return `${lines.join('\n')}\n`;
}

/** `inspect --step <id>`: everything the journal holds about one step. */
export function stepDetail(run: Run, stepId: string): StepView | undefined {
  return stepViews(run.journal).find((s) => s.step === stepId);
}

export function formatStepDetail(view: StepView): string {
  const lines = [`step ${view.step}  ${view.tool ?? '-'}  ${view.status}`];
  if (view.skip_reason) lines.push(`skipped: ${view.skip_reason}`);
  for (const a of view.attempts) {
    lines.push('', `attempt ${a.attempt}: ${a.status}${a.duration_ms === undefined ? '' : ` (${a.duration_ms} ms)`}${a.provider ? ` via ${a.provider}` : ''}`);
    if (a.input_digest) lines.push(`input digest:  ${a.input_digest}`);
    if ('input' in a && a.input !== undefined) lines.push(`input:\n${indent(prettyJson(a.input))}`);
    if (a.output_digest) lines.push(`output digest: ${a.output_digest}`);
    if (a.status === 'succeeded') lines.push(`output:\n${indent(prettyJson(a.output ?? null))}`);
    for (const fx of a.effects) lines.push(`effect: ${fx.kind} ${fx.target} (key ${fx.idempotency_key})`);
    for (const w of a.warnings) lines.push(`warning: ${w.code}: ${w.message}${w.data === undefined ? '' : `\n${indent(prettyJson(w.data))}`}`);
    if (a.error) lines.push(`error: ${a.error.code}: ${a.error.message}${a.error.retryable ? ' (retryable)' : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
