import { resolve } from 'node:path';
import { buildRecording, isFlowError, prettyJson, writeRecording } from '../../src/engine-entry.js';
import { opsFolderReader, readOpsFile } from '../../src/record/store.js';
import { assertKnownFlags, flagBool, flagString, flagStrings, UsageError, type ParsedArgs } from '../args.js';
import { EXIT, type CliIO } from '../io.js';

/**
 * `flowctl record --name <n> --task <t> --ops <file> [--input <slot>]... [--secret <slot>]... [--json]`
 * Writes a content-addressed Recording to recordings/<name>.json (docs/recordings.md). Everything is
 * validated before the first write; `--secret` slot values are dropped before anything is written.
 * Live capture is unavailable: the ops file is the only source.
 */
export default async function record(args: ParsedArgs, io: CliIO): Promise<number> {
  assertKnownFlags(args, 'record', ['name', 'task', 'ops', 'input', 'secret', 'json']);
  if (args.positionals.length > 0) {
    throw new UsageError(`unexpected argument "${args.positionals[0]}" (live capture is unavailable; give the operations with --ops <file>)`);
  }
  const json = flagBool(args, 'json');
  const name = flagString(args, 'name');
  const task = flagString(args, 'task');
  const ops = flagString(args, 'ops');
  const missing = [
    ['name', name],
    ['task', task],
    ['ops', ops],
  ]
    .filter(([, v]) => v === undefined)
    .map(([k]) => `--${k}`);
  if (missing.length > 0) {
    throw new UsageError(
      `${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} required (live capture is unavailable; --ops is a JSON or YAML list of operations)`,
    );
  }
  try {
    const opsFile = resolve(io.cwd, ops!);
    const built = await buildRecording({
      name: name!,
      task: task!,
      ops: await readOpsFile(opsFile, ops!),
      inputs: flagStrings(args, 'input'),
      secrets: flagStrings(args, 'secret'),
      readFile: opsFolderReader(opsFile),
    });
    const path = await writeRecording(io.cwd, built);
    const { recording } = built;
    const slots = Object.entries(recording.inputs).map(([slot, i]) => `${slot}${i.secret ? ' (secret)' : ''}`);
    io.stderr.write(
      `recorded ${recording.name}: ${recording.ops.length} ops${slots.length ? `, inputs ${slots.join(', ')}` : ''}` +
        `${built.files.size ? `, ${built.files.size} file${built.files.size > 1 ? 's' : ''}` : ''} -> ${path}\n${recording.source_digest}\n`,
    );
    if (json) io.stdout.write(`${prettyJson({ name: recording.name, source_digest: recording.source_digest, path })}\n`);
    return EXIT.ok;
  } catch (err) {
    if (!isFlowError(err)) throw err;
    io.stderr.write(`flowctl record: ${err.message}\n`);
    if (json) io.stdout.write(`${prettyJson(err.toJSON())}\n`);
    return EXIT.usage;
  }
}
