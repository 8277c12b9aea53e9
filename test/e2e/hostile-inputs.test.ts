import fc from 'fast-check';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical.js';
import { FLOWCTL_BIN, runCli, tempProject } from '../helpers/cli.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../helpers/postgres.js';
import { spawnProcess, type Spawned } from './rest-helpers.js';

// Issue 12, defects 2 and 7 and type-directed --input, through the built `flowctl` as a user runs it:
// - an input nested 10,000 (or 5,000) levels deep made `run --input-file` exit 70 with a trace and
//   `POST /flows/{name}/runs` answer 500, or stored a run nobody could read; now it is refused by the
//   inputs contract (exit 2 / 422 invalid_inputs) and nothing is stored;
// - every value the contract accepts round-trips through run, GET /runs/{id}, replay --verify and
//   inspect --json;
// - a NUL in an input answered 500 on `serve --store=sql`, or stored a journal starting with
//   run_finished; now it is stored losslessly (PGlite and Postgres);
// - `--input pet=12` for a string input was refused because 12 parses as JSON.

const ECHO = `name: echo
inputs:
  obj:
    type: object
    required: false
  list:
    type: array
    required: false
  text:
    type: string
    required: false
  n:
    type: number
    required: false
steps:
  - id: echo
    tool: core/transform@1
    args:
      value:
        obj: \${inputs.obj}
        list: \${inputs.list}
        text: \${inputs.text}
        n: \${inputs.n}
output: \${steps.echo.output.value}
`;
const PET = `name: pet
inputs:
  pet:
    type: string
  age:
    type: integer
    default: 1
steps:
  - id: say
    tool: core/template@1
    args:
      template: "pet {{ pet }} is {{ age }}"
      values:
        pet: \${inputs.pet}
        age: \${inputs.age}
output: \${steps.say.output.text}
`;

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;
const MAX = 64;
const deepText = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
/** `depth` levels of objects and arrays, alternating, the outermost an object. */
function nested(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = (depth - 1 - i) % 2 === 0 ? { a: v } : [v];
  return v;
}

let project: string;
beforeAll(async () => {
  project = await tempProject('flowctl-hostile-');
  await mkdir(join(project, 'flows'));
  await writeFile(join(project, 'flows', 'echo.yaml'), ECHO);
  await writeFile(join(project, 'flows', 'pet.yaml'), PET);
});
afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

async function storedRuns(dir: string): Promise<string[]> {
  const runs = join(dir, '.flowctl', 'runs');
  return existsSync(runs) ? (await readdir(runs)).filter((n) => !n.startsWith('.')) : [];
}

function serve(args: string[], cwd: string, env: Record<string, string | undefined> = {}): Spawned {
  return spawnProcess([FLOWCTL_BIN, 'serve', ...args], { cwd, env: { FLOWCTL_SERVE_TOKEN: undefined, ...env } });
}

async function post(url: string, body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  return { status: res.status, text: await res.text() };
}

describe('deep inputs', () => {
  it('run --input-file with 5,000 and 10,000 levels exits 2 with invalid_inputs, no trace, nothing stored', async () => {
    const dir = await tempProject('flowctl-hostile-deep-');
    try {
      await mkdir(join(dir, 'flows'));
      await writeFile(join(dir, 'flows', 'echo.yaml'), ECHO);
      for (const depth of [5_000, 10_000]) {
        await writeFile(join(dir, 'deep.json'), `{"obj":${deepText(depth)}}`);
        const r = await runCli(['run', 'echo', '--input-file', 'deep.json'], { cwd: dir });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain("inputs do not match the flow's inputs contract");
        expect(r.stderr).toContain(`obj is nested deeper than ${MAX} levels`);
        expect(r.stderr).not.toMatch(/RangeError|Maximum call stack|internal error|\n\s+at /);
        // The same through --json: a structured error on stdout.
        const json = await runCli(['run', 'echo', '--input-file', 'deep.json', '--json'], { cwd: dir });
        expect(json.code).toBe(2);
        expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'invalid_inputs' } });
      }
      expect(await storedRuns(dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('serve answers 422 invalid_inputs for 5,000 and 10,000 levels and stores no run', async () => {
    const dir = await tempProject('flowctl-hostile-serve-');
    await mkdir(join(dir, 'flows'));
    await writeFile(join(dir, 'flows', 'echo.yaml'), ECHO);
    const proc = serve(['echo', '--port', '0'], dir);
    try {
      const base = (await proc.waitFor(LISTENING))[1]!;
      for (const depth of [MAX + 1, 5_000, 10_000]) {
        const r = await post(`${base}/flows/echo/runs`, `{"obj":${deepText(depth)}}`);
        expect(r.status, r.text.slice(0, 200)).toBe(422);
        expect(JSON.parse(r.text)).toMatchObject({
          error: 'invalid_inputs',
          issues: [{ path: 'obj', message: expect.stringContaining(`nested deeper than ${MAX}`) }],
        });
      }
      expect(await storedRuns(dir)).toEqual([]);
      expect((await proc.stop('SIGTERM')).code).toBe(0);
    } finally {
      await proc.stop('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('every accepted value round-trips: run, GET /runs/{id}, replay --verify, inspect --json (fast-check, fixed seed, boundary depth)', async () => {
    const proc = serve(['echo', '--port', '0'], project);
    try {
      const base = (await proc.waitFor(LISTENING))[1]!;
      const roundTrip = async (inputs: Record<string, unknown>) => {
        const body = JSON.stringify(inputs);
        const r = await post(`${base}/flows/echo/runs`, body);
        expect(r.status, r.text.slice(0, 300)).toBe(200);
        const run = JSON.parse(r.text) as { id: string; status: string; output: Record<string, unknown>; journal: Array<{ event: string; inputs?: unknown }> };
        expect(run.status).toBe('succeeded');
        expect(run.journal[0]!.event).toBe('run_started');
        expect(canonicalJson(run.journal[0]!.inputs)).toBe(canonicalJson(JSON.parse(body)));
        const got = await fetch(`${base}/runs/${run.id}`);
        expect(got.status).toBe(200);
        expect(canonicalJson(await got.json())).toBe(canonicalJson(run));
        const inspect = await runCli(['inspect', run.id, '--json'], { cwd: project });
        expect(inspect.code, inspect.stderr).toBe(0);
        expect(canonicalJson(JSON.parse(inspect.stdout))).toBe(canonicalJson(run));
        const replay = await runCli(['replay', run.id, '--verify', '--json'], { cwd: project });
        expect(replay.code, replay.stderr).toBe(0);
        const replayed = JSON.parse(replay.stdout) as { status: string; output: unknown };
        expect(replayed.status).toBe('succeeded');
        expect(canonicalJson(replayed.output)).toBe(canonicalJson(run.output));
      };

      // The boundary: each input exactly 64 levels deep, with NUL and astral text at the bottom.
      await roundTrip({ obj: nested(MAX, 'a\u0000b \ud83d\ude00') as Record<string, unknown>, list: [nested(MAX - 1, null)] });

      const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('\u0000', 'a\u0000b', '\uffff', '"\\', '__proto__'));
      const leaf = fc.oneof(text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
      const value = fc.letrec((tie) => ({
        v: fc.oneof(
          { depthSize: 'small', maxDepth: 4 },
          leaf,
          fc.array(tie('v'), { maxLength: 3 }),
          fc.dictionary(text, tie('v'), { maxKeys: 3, noNullPrototype: true }),
        ),
      })).v;
      await fc.assert(
        fc.asyncProperty(
          fc.record(
            {
              obj: fc.dictionary(text, value, { maxKeys: 3, noNullPrototype: true }),
              list: fc.array(value, { maxLength: 3 }),
              text,
              n: fc.double({ noNaN: true, noDefaultInfinity: true }),
            },
            { requiredKeys: [] },
          ),
          fc.integer({ min: 0, max: MAX - 1 }),
          async (inputs, depth) => {
            // Sink a random value to a random depth inside obj (the whole input stays within 64 levels).
            const obj = { ...(inputs.obj ?? {}), deep: nested(depth, 'bottom') };
            await roundTrip({ ...inputs, obj });
          },
        ),
        { seed: 0x0d_ee_9e_12, numRuns: 12 },
      );
      expect((await proc.stop('SIGTERM')).code).toBe(0);
    } finally {
      await proc.stop('SIGKILL');
    }
  });

  it('a flow run from the CLI at the boundary depth is stored readable (inspect --json, replay --verify)', async () => {
    await writeFile(join(project, 'edge.json'), JSON.stringify({ obj: nested(MAX, 'edge'), text: 'x\u0000y' }));
    const r = await runCli(['run', 'echo', '--input-file', 'edge.json', '--json'], { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    const run = JSON.parse(r.stdout) as { id: string; output: { obj: unknown; text: string } };
    expect(canonicalJson(run.output.obj)).toBe(canonicalJson(nested(MAX, 'edge')));
    expect(run.output.text).toBe('x\u0000y');
    const inspect = await runCli(['inspect', run.id, '--json'], { cwd: project });
    expect(inspect.code, inspect.stderr).toBe(0);
    expect(canonicalJson(JSON.parse(inspect.stdout))).toBe(canonicalJson(run));
    expect((await runCli(['replay', run.id, '--verify'], { cwd: project })).code).toBe(0);
  });
});

/** POST a NUL input and a lone surrogate to a `serve --store=sql` started with `env`. */
async function nulThroughSql(env: Record<string, string | undefined>) {
  const dir = await tempProject('flowctl-hostile-sql-');
  await mkdir(join(dir, 'flows'));
  await writeFile(join(dir, 'flows', 'echo.yaml'), ECHO);
  const proc = serve(['echo', '--port', '0', '--store=sql'], dir, env);
  try {
    const base = (await proc.waitFor(LISTENING, 90_000))[1]!;
    for (const text of ['a\u0000b', '\u0000', '\uffff"\\u0000"']) {
      const body = JSON.stringify({ text, obj: { 'k\u0000': [text] } });
      const r = await post(`${base}/flows/echo/runs`, body);
      expect(r.status, r.text.slice(0, 300)).toBe(200);
      const run = JSON.parse(r.text) as {
        id: string;
        status: string;
        output: { text: string; obj: unknown };
        journal: Array<{ event: string; inputs?: unknown }>;
      };
      expect(run.status).toBe('succeeded');
      expect(run.journal.map((e) => e.event)).toEqual(['run_started', 'step_started', 'step_succeeded', 'run_finished']);
      expect(run.journal[0]!.inputs).toEqual(JSON.parse(body));
      expect(run.output.text).toBe(text);
      const got = await fetch(`${base}/runs/${run.id}`);
      expect(got.status).toBe(200);
      expect(await got.json()).toEqual(run);
      const replay = await post(`${base}/runs/${run.id}/replay`, '{"mode":"verify"}');
      expect(replay.status, replay.text.slice(0, 300)).toBe(200);
      expect(JSON.parse(replay.text)).toMatchObject({ status: 'succeeded', output: { text } });
    }
    // A lone surrogate is not text: the contract refuses it, structured, and nothing runs.
    const lone = await post(`${base}/flows/echo/runs`, '{"text":"x\\ud800"}');
    expect(lone.status).toBe(422);
    expect(JSON.parse(lone.text)).toMatchObject({ error: 'invalid_inputs', issues: [{ path: 'text', message: expect.stringContaining('lone surrogate') }] });
    expect((await proc.stop('SIGTERM')).code).toBe(0);
  } finally {
    await proc.stop('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

describe('a NUL in an input on serve --store=sql', () => {
  it('PGlite: stored losslessly, a journal that starts with run_started, GET and replay verify', async () => {
    await nulThroughSql({ DATABASE_URL: undefined });
  });
});

describePostgres('a NUL in an input on serve --store=sql, real Postgres', (url) => {
  const schema = uniqueSchemaName('flowctl_hostile');
  afterAll(async () => {
    await dropSchema(url, schema);
  });
  it('Postgres: stored losslessly, a journal that starts with run_started, GET and replay verify', async () => {
    await nulThroughSql({ DATABASE_URL: url, FLOWCTL_DB_SCHEMA: schema });
  });
});

describe('type-directed --input', () => {
  it('run: a string input takes the raw text (pet=12), an integer input parses JSON (age=3)', async () => {
    const r = await runCli(['run', 'pet', '--input', 'pet=12', '--input', 'age=3', '--json'], { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).output).toBe('pet 12 is 3');
    const zip = await runCli(['run', 'pet', '--input', 'pet=007', '--json'], { cwd: project });
    expect(zip.code, zip.stderr).toBe(0);
    expect(JSON.parse(zip.stdout).output).toBe('pet 007 is 1');
    // A non-string type still refuses text that is not its JSON.
    const bad = await runCli(['run', 'pet', '--input', 'pet=x', '--input', 'age=three'], { cwd: project });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('age must be integer');
  });

  it('--input-file: an unquoted YAML scalar is text for a string input; a JSON number is refused', async () => {
    await writeFile(join(project, 'pet.yaml'), 'pet: 12\nage: 4\n');
    const yaml = await runCli(['run', 'pet', '--input-file', 'pet.yaml', '--json'], { cwd: project });
    expect(yaml.code, yaml.stderr).toBe(0);
    expect(JSON.parse(yaml.stdout).output).toBe('pet 12 is 4');
    await writeFile(join(project, 'pet.json'), '{"pet": 12}');
    const json = await runCli(['run', 'pet', '--input-file', 'pet.json'], { cwd: project });
    expect(json.code).toBe(2);
    expect(json.stderr).toContain('pet must be string');
  });

  it('schedule: inputs are typed the same way (pet=12 fires and succeeds)', async () => {
    const proc = spawnProcess([FLOWCTL_BIN, 'schedule', 'pet', '--cron', '*/1 * * * * *', '--input', 'pet=12'], { cwd: project });
    try {
      const [, id] = (await proc.waitFor(/run ([0-9a-f-]{36}) succeeded/, 90_000)) as RegExpMatchArray;
      expect((await proc.stop('SIGTERM')).code).toBe(0);
      const inspect = await runCli(['inspect', id!, '--json'], { cwd: project });
      expect(inspect.code, inspect.stderr).toBe(0);
      expect(JSON.parse(inspect.stdout).output).toBe('pet 12 is 1');
    } finally {
      await proc.stop('SIGKILL');
    }
  });
});
