import { digestOf, isDigest, prettyJson, type Digest } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import { checkJournalChain, checkJournalFlowDigest } from './journal.js';
import { parseRun } from './run-schema.js';
import type { Run } from './types.js';

/**
 * Journal fixture files: a recorded Run with the FlowSpec it ran, so it can be replayed anywhere
 * (`flowctl run --record-journal <file>`, `flowctl replay <file>`, the golden corpus in
 * test/fixtures/journals/). Written pretty with sorted keys; the Run is already masked (`***`).
 *
 *   { "format": "flowctl-journal/1", "flow_digest": "sha256:...", "spec": FlowSpec, "run": Run }
 */
export const JOURNAL_FIXTURE_FORMAT = 'flowctl-journal/1';

export interface JournalFixture {
  format: typeof JOURNAL_FIXTURE_FORMAT;
  flow_digest: Digest;
  spec: FlowSpec;
  run: Run;
}

export function toJournalFixture(run: Run, spec: FlowSpec): JournalFixture {
  const flowDigest = digestOf(spec);
  if (flowDigest !== run.flow_digest) {
    throw new FlowError('flow_digest_mismatch', `[flowctl] [fixture] run ${run.id} ran ${run.flow_digest}, not the given spec ${flowDigest}`, {
      data: { seq: null, step: null, field: 'flow_digest', expected: flowDigest, actual: run.flow_digest },
    });
  }
  return { format: JOURNAL_FIXTURE_FORMAT, flow_digest: flowDigest, spec, run: parseRun(run, 'fixture') };
}

/** The fixture file text: pretty JSON, sorted keys, trailing newline. */
export function writeJournalFixture(run: Run, spec: FlowSpec): string {
  return `${prettyJson(toJournalFixture(run, spec))}\n`;
}

/**
 * Parse a fixture file and check its shape (FlowError `invalid_fixture` with a clear reason; the
 * Run is checked strictly, `invalid_run`). Digests and the chain are checked by replay, so a
 * mutated fixture still loads and fails replay with the precise code.
 */
export function readJournalFixture(text: string): JournalFixture {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new FlowError('invalid_fixture', `[flowctl] [fixture] not JSON: ${(err as Error).message}`, { cause: err });
  }
  const bad = (reason: string) => new FlowError('invalid_fixture', `[flowctl] [fixture] ${reason}`);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad('expected a JSON object');
  const f = value as Record<string, unknown>;
  const extra = Object.keys(f).filter((k) => !['format', 'flow_digest', 'spec', 'run'].includes(k));
  if (extra.length > 0) throw bad(`unknown field(s) ${extra.join(', ')}`);
  if (f.format !== JOURNAL_FIXTURE_FORMAT) throw bad(`format is ${JSON.stringify(f.format)}, expected "${JOURNAL_FIXTURE_FORMAT}"`);
  if (!isDigest(f.flow_digest)) throw bad('flow_digest is not a sha256:<hex> digest');
  const spec = f.spec as Record<string, unknown> | undefined;
  if (spec === null || typeof spec !== 'object' || spec.flowspec !== 1 || !Array.isArray(spec.steps)) {
    throw bad('spec is not a FlowSpec (flowspec: 1 with steps)');
  }
  const run = parseRun(f.run, 'fixture');
  return { format: JOURNAL_FIXTURE_FORMAT, flow_digest: f.flow_digest, spec: spec as unknown as FlowSpec, run };
}

/**
 * Verify a stored or recorded journal without replaying it: seq order, hash chain and, when a
 * digest is given, that every entry names it. Throws `journal_sequence`, `journal_chain_broken` or
 * `flow_digest_mismatch`. A crashed run (no run_finished) is valid as far as it got.
 */
export function verifyJournal(run: Pick<Run, 'journal' | 'flow_digest'>, flowDigest: Digest = run.flow_digest): void {
  checkJournalChain(run.journal, 'journal');
  checkJournalFlowDigest(run.journal, flowDigest, 'journal');
}
