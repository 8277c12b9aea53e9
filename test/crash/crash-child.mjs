// Child process for crash.test.ts: runs long flows against storage-fs until it is killed.
// argv: <store dir> <steps per run> [--once]. Prints one line "e <n>" after each journal entry it
// appended (n counts the entries of all its runs), so the parent can kill it on an event: after the
// n-th append.
// FLOWCTL_DIST: a private copy of dist/ (see dist-snapshot.ts); default: the package's own build.
const dist = process.env.FLOWCTL_DIST ?? new URL('../../dist', import.meta.url).pathname;
const { createEngine, createToolRegistry, defineTool, contractDigest, toolError } = await import(`${dist}/index.js`);
const { createFsStorage } = await import(`${dist}/adapters/storage-fs.js`);

const [dir, stepsArg] = process.argv.slice(2);
const steps = Number(stepsArg ?? 200);
let calls = 0;

const contract = (ref, capabilities = []) => ({
  ref,
  version: '1.0.0',
  description: ref,
  input_schema: { type: 'object' },
  output_schema: { type: 'object' },
  capabilities,
});
const tools = createToolRegistry([
  defineTool(contract('crash/add'), async (input) => {
    await new Promise((r) => setImmediate(r));
    return { n: input.n + 1 };
  }),
  // Fails every seventh call once (retryable), so crashes also land between attempts.
  defineTool(contract('crash/flaky'), async (input) => {
    if (++calls % 7 === 0) throw toolError('crash_flaky', 'transient', { retryable: true });
    return { n: input.n };
  }),
  defineTool(contract('crash/effect', ['fs']), async (input, ctx) => {
    ctx.effect({ kind: 'fs', target: `out/${input.n}.txt` });
    return { n: input.n };
  }),
]);
const pin = (ref) => ({ ref, version: '1.0.0', contract_digest: contractDigest(tools.get(ref, '1.0.0').contract) });
const kinds = ['crash/add', 'crash/flaky', 'crash/effect'];
const spec = {
  flowspec: 1,
  name: 'long',
  inputs: { start: { type: 'integer', required: true, secret: false, schema: { type: 'integer' } } },
  steps: Array.from({ length: steps }, (_, i) => {
    const ref = kinds[i % kinds.length];
    return {
      id: `s${i}`,
      tool: pin(ref),
      capabilities: ref === 'crash/effect' ? ['fs'] : [],
      args: { n: i === 0 ? '${inputs.start}' : `\${steps.s${i - 1}.output.n}` },
      retry: { max_attempts: 3, backoff_ms: 1, backoff_factor: 1 },
      timeout_ms: 10_000,
    };
  }),
  output: { n: `\${steps.s${steps - 1}.output.n}` },
};

const engine = createEngine({ storage: createFsStorage({ dir }), tools });
let appended = 0;
for (let i = 0; ; i++) {
  await engine.run(
    { spec },
    { start: i },
    {
      onEntry: () => {
        process.stdout.write(`e ${++appended}\n`);
      },
    },
  );
  if (process.argv.includes('--once')) break;
}
await engine.dispose();
process.stdout.write('done\n');
