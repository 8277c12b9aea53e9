// Child process for run-lifecycle.test.ts (bundled by esbuild at test time): executes one prepared
// run by id over PGlite (a data folder) or Postgres, printing "step <id>" for each step_started, and
// waits until it is killed. argv: <run id> <leaseMs> pglite <dataDir> | postgres <url> <schema>.
import { createSqlStorage } from '../../adapters/storage-sql/index.js';
import { createEngine } from '../../src/engine/engine.js';
import { lifecycleTools } from './run-lifecycle-tools.js';

const [runId, leaseMs, kind, a, b] = process.argv.slice(2);
const storage = kind === 'pglite' ? createSqlStorage({ pglite: { dataDir: a! } }) : createSqlStorage({ databaseUrl: a!, schema: b!, poolSize: 2 });
const engine = createEngine({ storage, tools: lifecycleTools(), leaseMs: Number(leaseMs), sweepMs: 0 });
const run = await engine.execute(runId!, {
  onEntry: (e) => {
    if (e.event === 'step_started') process.stdout.write(`step ${e.step}\n`);
  },
});
process.stdout.write(`finished ${run.status}\n`);
await engine.dispose();
