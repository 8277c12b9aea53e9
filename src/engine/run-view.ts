import { FlowError } from '../errors.js';
import type { RunRecord } from '../ports/storage.js';
import { rememberJournalTexts } from '../run/run-json.js';
import { parseRun } from '../run/run-schema.js';
import type { RunOutcome } from '../run/runner.js';
import type { JournalEntry, Run } from '../run/types.js';
import type { StorageRuntime } from './storage-runtime.js';
import type { Launch } from './launch.js';

/** A stored run as a Run: its record and its journal. */
export async function getRun(storage: StorageRuntime, id: string): Promise<Run | undefined> {
  const record = await storage.runs.get(id);
  if (!record) return undefined;
  return parseRun(runOf(record, await storage.journal.read(id)), 'engine');
}

/** The Run a launch executed here ended with; its fatal error is thrown. */
export async function finish(storage: StorageRuntime, launch: Launch, outcome: RunOutcome): Promise<Run> {
  if (outcome.fatal) throw outcome.fatal;
  // The run's whole journal was appended by this process, each entry acknowledged by storage: the
  // Run is built from those entries as getRun builds it from the stored ones, without reading them
  // back.
  const journal = launch.journal;
  const finished = journal?.[journal.length - 1];
  if (finished?.event === 'run_finished' && journal!.length === finished.seq + 1) {
    const run = runOf({ id: launch.runId, flow_digest: launch.flowDigest, status: 'running', started_at: launch.startedAt }, [...journal!]);
    if (launch.texts) rememberJournalTexts(run.journal, launch.texts);
    return run;
  }
  const run = await getRun(storage, launch.runId);
  if (!run) throw new FlowError('not_found', `[flowctl] [engine] run ${launch.runId} vanished from storage`);
  return run;
}

/**
 * A Run from its record and journal. The journal is the source of truth: its run_finished decides
 * status, finish time and output even if the record's last update was lost.
 */
function runOf(record: Pick<RunRecord, 'id' | 'flow_digest' | 'status' | 'started_at' | 'finished_at' | 'output'>, journal: JournalEntry[]): Run {
  const finished = journal.findLast((e) => e.event === 'run_finished');
  const status = finished?.event === 'run_finished' ? finished.status : record.status;
  const finishedAt = finished?.at ?? record.finished_at;
  const output = finished?.event === 'run_finished' ? finished.output : record.output;
  return {
    id: record.id,
    flow_digest: record.flow_digest,
    status,
    started_at: record.started_at,
    ...(finishedAt !== undefined && status !== 'pending' && status !== 'running' ? { finished_at: finishedAt } : {}),
    journal,
    ...(status === 'succeeded' && output !== undefined ? { output } : {}),
  };
}
