import { z } from 'zod';
import { DIGEST_PATTERN } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { JournalEntry, Run } from './types.js';

/**
 * Strict schemas for the Run object of spec/engine.md and its journal entries: no field beyond
 * src/run/types.ts is accepted. The engine parses every Run it returns through `RunSchema`.
 */

const digest = z.string().regex(DIGEST_PATTERN, 'expected a sha256:<hex> digest');
const dateTime = z.iso.datetime({ offset: true });
const json = z.unknown();
// A JSON value whose key must be present (z.unknown() alone would also accept a missing key).
const present = z.unknown().refine((v) => v !== undefined, 'required');

const pin = z.strictObject({ ref: z.string().min(1), version: z.string().min(1), contract_digest: digest });
const stepError = z.strictObject({ code: z.string().min(1), message: z.string(), retryable: z.boolean() });
const warning = z.strictObject({ code: z.string(), message: z.string(), data: json.optional() });
const attempt = z.number().int().min(1);

const base = {
  at: dateTime,
  flow_digest: digest,
  inputs_digest: digest,
  seq: z.number().int().min(0),
  prev: digest.nullable(),
  digest,
};

export const RunStartedEntrySchema = z.strictObject({
  ...base,
  event: z.literal('run_started'),
  flow_name: z.string(),
  inputs: z.record(z.string(), json),
  contracts: z.array(pin),
  replay_of: z.strictObject({ run_id: z.string(), mode: z.enum(['hermetic', 'verify', 'rerun']) }).optional(),
});

export const StepStartedEntrySchema = z.strictObject({
  ...base,
  event: z.literal('step_started'),
  step: z.string(),
  tool: pin,
  attempt,
  input: present,
  input_digest: digest,
  provider: z.string().min(1),
});

export const StepSucceededEntrySchema = z.strictObject({
  ...base,
  event: z.literal('step_succeeded'),
  step: z.string(),
  attempt,
  output: present,
  output_digest: digest,
  warnings: z.array(warning).optional(),
  artifacts: z.array(digest).optional(),
  duration_ms: z.number().min(0).optional(),
});

export const StepFailedEntrySchema = z.strictObject({
  ...base,
  event: z.literal('step_failed'),
  step: z.string(),
  attempt,
  error: stepError,
  will_retry: z.boolean(),
  warnings: z.array(warning).optional(),
  duration_ms: z.number().min(0).optional(),
});

export const StepSkippedEntrySchema = z.strictObject({
  ...base,
  event: z.literal('step_skipped'),
  step: z.string(),
  reason: z.string(),
});

export const EffectRecordedEntrySchema = z.strictObject({
  ...base,
  event: z.literal('effect_recorded'),
  step: z.string(),
  attempt,
  effect: z.strictObject({
    kind: z.enum(['net', 'fs', 'spawn', 'browser']),
    target: z.string(),
    idempotency_key: z.string().min(1),
  }),
});

export const RunFinishedEntrySchema = z.strictObject({
  ...base,
  event: z.literal('run_finished'),
  status: z.enum(['succeeded', 'failed', 'canceled']),
  output: json.optional(),
  error: stepError.extend({ step: z.string().optional() }).optional(),
});

export const JournalEntrySchema = z.discriminatedUnion('event', [
  RunStartedEntrySchema,
  StepStartedEntrySchema,
  StepSucceededEntrySchema,
  StepFailedEntrySchema,
  StepSkippedEntrySchema,
  EffectRecordedEntrySchema,
  RunFinishedEntrySchema,
]);

export const RunStatusSchema = z.enum(['pending', 'running', 'succeeded', 'failed', 'canceled']);

/** The Run object: exactly id, flow_digest, status, started_at, finished_at?, journal, output?. */
export const RunSchema = z.strictObject({
  id: z.uuidv4(),
  flow_digest: digest,
  status: RunStatusSchema,
  started_at: dateTime,
  finished_at: dateTime.optional(),
  journal: z.array(JournalEntrySchema),
  output: json.optional(),
});

function issuesOf(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

/** Parse a Run strictly; FlowError `invalid_run` lists every issue. */
export function parseRun(value: unknown, component = 'run'): Run {
  const r = RunSchema.safeParse(value);
  if (!r.success) {
    const issues = issuesOf(r.error);
    throw new FlowError('invalid_run', `[flowctl] [${component}] not a valid Run: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`, {
      data: { issues },
    });
  }
  return value as Run;
}

/** Parse a journal strictly; FlowError `invalid_journal` names the first bad entry. */
export function parseJournal(value: unknown, component = 'journal'): JournalEntry[] {
  const r = z.array(JournalEntrySchema).safeParse(value);
  if (!r.success) {
    const issues = issuesOf(r.error);
    throw new FlowError(
      'invalid_journal',
      `[flowctl] [${component}] not a valid journal: ${issues
        .slice(0, 5)
        .map((i) => `${i.path || '(root)'}: ${i.message}`)
        .join('; ')}`,
      {
        data: { issues },
      },
    );
  }
  return value as JournalEntry[];
}
