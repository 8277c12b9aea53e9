import { mkdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { prettyJson } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { BuiltRecording, Recording } from './recording.js';
import { parseRecording } from './recording-schema.js';
import { recordedFilePath } from './to-flow.js';

/** Reading ops files and writing/reading Recordings on disk (the CLI's side of src/record). */

/**
 * Parse an ops file (JSON or YAML; YAML is a superset of JSON). Syntax errors name the line and column
 * only: the offending text is not echoed, because an ops file may hold a secret value.
 */
export async function readOpsFile(file: string, display = file): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new FlowError('ops_file_unreadable', `[flowctl] [record] cannot read ops file ${display} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, {
      data: { file: display },
    });
  }
  const counter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true, lineCounter: counter });
  if (doc.errors.length > 0) {
    const issues = doc.errors.map((e) => {
      const { line, col } = counter.linePos(e.pos[0]);
      return { line, column: col, code: e.code };
    });
    const where = issues.map((i) => `line ${i.line}, column ${i.column} (${i.code})`).join('; ');
    throw new FlowError('ops_syntax', `[flowctl] [record] ${display}: syntax error at ${where}`, { data: { file: display, issues } });
  }
  return doc.toJS();
}

/** Reads upload files relative to the ops file's folder, refusing anything (symlinks too) that resolves outside it. */
export function opsFolderReader(opsFile: string): (relativePath: string) => Promise<Uint8Array> {
  const folder = dirname(resolve(opsFile));
  return async (rel) => {
    const realFolder = await realpath(folder);
    const real = await realpath(join(folder, rel));
    const back = relative(realFolder, real);
    if (back === '' || back.startsWith(`..${sep}`) || back === '..' || isAbsolute(back)) {
      throw new FlowError('upload_outside_folder', `[flowctl] [record] "${rel}" resolves outside the ops file's folder`, { data: { file: rel } });
    }
    if (!(await stat(real)).isFile()) {
      throw new FlowError('upload_file_missing', `[flowctl] [record] "${rel}" is not a file`, { data: { file: rel } });
    }
    return new Uint8Array(await readFile(real));
  };
}

let tmpCounter = 0;

async function writeAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${++tmpCounter}.tmp`);
  try {
    await writeFile(tmp, data, { flag: 'wx' });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** The project-relative path of a recording: `recordings/<name>.json`. */
export function recordingPath(name: string): string {
  return `recordings/${name}.json`;
}

/**
 * Write a built Recording into `<projectDir>/recordings/`: upload files first (content-addressed, at
 * `<name>.files/<hex>/<file name>`), the recording last, each by temp file + rename, so a reader never
 * sees a recording whose files are missing. Returns the project-relative path of the recording.
 */
export async function writeRecording(projectDir: string, built: BuiltRecording): Promise<string> {
  const { recording, files } = built;
  const dir = join(projectDir, 'recordings');
  await mkdir(dir, { recursive: true });
  const filesDir = `${recording.name}.files`;
  for (const [digest, file] of files) {
    const target = join(dir, recordedFilePath(filesDir, { name: file.name, digest }));
    await mkdir(dirname(target), { recursive: true });
    await writeAtomic(target, file.bytes);
  }
  const rel = recordingPath(recording.name);
  await writeAtomic(join(projectDir, rel), `${prettyJson(recording)}\n`);
  return rel;
}

/** Read and validate a Recording file (shape and source_digest). */
export async function loadRecordingFile(file: string): Promise<Recording> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new FlowError('not_found', `[flowctl] [record] cannot read recording ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, {
      data: { file },
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new FlowError('invalid_recording', `[flowctl] [record] ${file} is not JSON: ${(err as Error).message}`, { data: { file } });
  }
  return parseRecording(value, file);
}
