import { existsSync, readFileSync } from 'node:fs';
import { parseArgs, UsageError } from './args.js';
import { HELP_TEXT } from './help.js';
import { EXIT, type CliIO, type CommandFn } from './io.js';
import { isFlowError } from '../src/errors.js';
import { peerErrorFrom } from '../src/util/peer-check.js';

/** One file per command, loaded lazily so `flowctl --help` starts fast. */
const COMMANDS: Record<string, () => Promise<{ default: CommandFn }>> = {
  init: () => import('./commands/init.js'),
  compile: () => import('./commands/compile.js'),
  emit: () => import('./commands/emit.js'),
  lint: () => import('./commands/lint.js'),
  run: () => import('./commands/run.js'),
  replay: () => import('./commands/replay.js'),
  inspect: () => import('./commands/inspect.js'),
  runs: () => import('./commands/runs.js'),
  record: () => import('./commands/record.js'),
  pack: () => import('./commands/pack.js'),
  install: () => import('./commands/install.js'),
  registry: () => import('./commands/registry.js'),
  serve: () => import('./commands/serve.js'),
  mcp: () => import('./commands/mcp.js'),
  schedule: () => import('./commands/schedule.js'),
};

/** Commands that never load a <flow> (nor a Recording), so they skip the browser registrations. */
const NO_FLOW_COMMANDS = new Set(['init', 'runs', 'inspect', 'install', 'registry']);

export const ALL_COMMANDS = [
  'init',
  'compile',
  'emit',
  'run',
  'lint',
  'record',
  'replay',
  'inspect',
  'runs',
  'pack',
  'install',
  'registry',
  'serve',
  'mcp',
  'schedule',
  'help',
] as const;

/**
 * The package version, from the nearest package.json above this module: cli/ in the sources,
 * dist/cli/ in the build (the first folder up that has one is the package root in both).
 */
export function packageVersion(): string {
  let dir = new URL('./', import.meta.url);
  for (let depth = 0; depth < 8; depth++) {
    const file = new URL('package.json', dir);
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
      if (typeof pkg.version !== 'string') throw new Error('[flowctl] package.json has no version');
      return pkg.version;
    }
    dir = new URL('../', dir);
  }
  throw new Error('[flowctl] no package.json above the CLI');
}

export function defaultIO(): CliIO {
  return { cwd: process.cwd(), env: process.env, stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };
}

export async function main(argv: readonly string[], io: CliIO = defaultIO()): Promise<number> {
  const command = argv[0];
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    io.stdout.write(HELP_TEXT);
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  if (command === '--version' || command === '-V') {
    io.stdout.write(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  const rest = argv.slice(1);
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(HELP_TEXT);
    return EXIT.ok;
  }
  const load = COMMANDS[command];
  if (!load) {
    const known = (ALL_COMMANDS as readonly string[]).includes(command);
    io.stderr.write(
      known
        ? `flowctl: "${command}" is not available in this build\n`
        : `flowctl: unknown command "${command}". Run "flowctl help" for the list of commands.\n`,
    );
    return EXIT.usage;
  }
  let early: typeof import('./early-browser.js') | undefined;
  try {
    const args = parseArgs(rest);
    // Recording loader, browser tool contracts, brittle-locator lint: only commands that load flows need them.
    // `run` needs only the loader: it loads the browser tools itself, for a flow that uses them.
    if (command === 'run') {
      await import('./recording-loader.js');
      // A browser flow that surely starts gets Chromium launching before the rest of flowctl loads.
      early = await import('./early-browser.js');
      await early.startEarlyBrowser(args, io);
    } else if (!NO_FLOW_COMMANDS.has(command)) await import('./recordings.js');
    const mod = await load();
    return await mod.default(args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`flowctl ${command}: ${err.message}\n`);
      return EXIT.usage;
    }
    // A command whose optional peer is not installed names it (docs/library.md, "Optional peers").
    const peer = peerErrorFrom(err, `flowctl ${command}`, optionalPeers());
    if (isFlowError(peer, 'missing_peer')) {
      io.stderr.write(`${peer.message}\n`);
      return EXIT.usage;
    }
    throw err;
  } finally {
    // Started early and never adopted (the run stopped before its executor existed): closed here.
    await early?.discardEarlyBrowser();
  }
}

/** The package's optional peers (package.json peerDependencies), found as packageVersion finds it. */
function optionalPeers(): string[] {
  let dir = new URL('./', import.meta.url);
  for (let depth = 0; depth < 8; depth++) {
    const file = new URL('package.json', dir);
    if (existsSync(file)) return Object.keys((JSON.parse(readFileSync(file, 'utf8')) as { peerDependencies?: object }).peerDependencies ?? {});
    dir = new URL('../', dir);
  }
  return [];
}
