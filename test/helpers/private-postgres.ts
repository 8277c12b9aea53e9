import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

/**
 * A private PostgreSQL cluster for tests that stop and start their database (test/chaos): its own
 * data folder under the temp dir, its own loopback port, trust auth, started and stopped with
 * `pg_ctl`. The machine's main cluster (and every other engineer's tests on it) is never touched.
 * As root (CI, these machines) the server runs as the `postgres` user (`runuser`), as initdb
 * requires; otherwise as the current user. The binaries are those of the newest installed major
 * version (`/usr/lib/postgresql/<major>/bin`, Debian's layout), else `initdb`/`pg_ctl` on PATH.
 */

const run = promisify(execFile);

export interface PgBinaries {
  initdb: string;
  pgCtl: string;
  /** e.g. "15" (from the folder), or "PATH". */
  version: string;
}

/** Where initdb and pg_ctl are, or why there are none. */
export function findPgBinaries(): PgBinaries | { missing: string } {
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const majors = readdirSync(base)
      .filter((v) => /^\d+(\.\d+)?$/.test(v) && existsSync(join(base, v, 'bin/initdb')) && existsSync(join(base, v, 'bin/pg_ctl')))
      .sort((a, b) => Number(b) - Number(a));
    if (majors[0]) return { initdb: join(base, majors[0], 'bin/initdb'), pgCtl: join(base, majors[0], 'bin/pg_ctl'), version: majors[0] };
  }
  const onPath = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  const initdb = onPath('initdb');
  const pgCtl = onPath('pg_ctl');
  if (initdb && pgCtl) return { initdb, pgCtl, version: 'PATH' };
  return { missing: 'no PostgreSQL server binaries (initdb, pg_ctl): install postgresql (scripts/setup.sh --test does, as root)' };
}

const isRoot = () => process.getuid?.() === 0;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface PrivateCluster {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  dir: string;
  version: string;
  /** `pg_ctl stop -m fast`: every connection gets 57P01 admin_shutdown, new ones are refused. */
  stop(): Promise<void>;
  /** Start it again on the same port and data. */
  start(): Promise<void>;
  /** Stop it (immediate) and delete its folder. Idempotent. */
  destroy(): Promise<void>;
}

export async function startPrivateCluster(bins: PgBinaries, name = 'flowctl-chaos'): Promise<PrivateCluster> {
  const dir = await mkdtemp(join(tmpdir(), `${name}-`));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  // As root, the server (and initdb) run as postgres, which must own the folder.
  if (isRoot()) {
    const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (id.status !== 0) throw new Error('running as root, but there is no postgres user to run the server as (install postgresql)');
    await chown(dir, Number(id.stdout.trim()), Number(gid.stdout.trim()));
  }
  const as = (cmd: string, args: string[]) =>
    isRoot() ? run('runuser', ['-u', 'postgres', '--', cmd, ...args], { timeout: 180_000 }) : run(cmd, args, { timeout: 180_000 });
  await as(bins.initdb, ['-D', data, '--auth=trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  let port = 0;
  const startOn = (p: number) =>
    as(bins.pgCtl, [
      '-D',
      data,
      '-l',
      log,
      '-w',
      '-t',
      '120',
      '-o',
      // fsync off: a test cluster on a shared machine; a crash of the machine loses nothing we keep.
      `-p ${p} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c max_connections=300 -c fsync=off -c synchronous_commit=off`,
      'start',
    ]);
  let destroyed = false;
  const stopNow = () => {
    // Synchronous, for process exit: the cluster must not outlive the test process.
    if (destroyed) return;
    const args = ['-D', data, '-m', 'immediate', '-w', 'stop'];
    if (isRoot()) spawnSync('runuser', ['-u', 'postgres', '--', bins.pgCtl, ...args], { stdio: 'ignore' });
    else spawnSync(bins.pgCtl, args, { stdio: 'ignore' });
  };
  process.once('exit', stopNow);
  // The port is free when picked and taken when the server binds: another process may win it in
  // between, then the start fails and another port is tried.
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      await startOn(port);
      break;
    } catch (err) {
      if (attempt >= 4) throw new Error(`the private PostgreSQL did not start: ${(err as Error).message}`);
    }
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
    dir,
    version: bins.version,
    async stop() {
      await as(bins.pgCtl, ['-D', data, '-m', 'fast', '-w', '-t', '120', 'stop']);
    },
    async start() {
      await startOn(port);
    },
    async destroy() {
      if (destroyed) return;
      await as(bins.pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      destroyed = true;
      process.removeListener('exit', stopNow);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One statement on the cluster (a fresh connection each time: the cluster may have restarted). */
export async function clusterQuery<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 30_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}
