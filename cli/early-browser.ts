import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../adapters/executor-playwright/launch.js';
import type { ParsedArgs } from './args.js';
import { BUILD_ID } from './build-id.js';
import { readFlowArg } from './flow-files.js';
import type { CliIO } from './io.js';
import { INSTALLED_REGISTRY_DIR } from './layout.js';
import { createSpecCache } from './spec-cache.js';

/**
 * The early start of `flowctl run` (docs/cli.md, "Start-up work"). A browser flow's run waits for
 * Chromium to launch (about 200 ms on these machines) and for flowctl's own modules to load (about
 * 150 ms), one after the other when the launch waits for the modules. When the run surely starts, it
 * is launched first thing, and the modules load while Chromium starts; the run's executor adopts it
 * (createPlaywrightExecutorAdopting).
 *
 * "Surely starts": the compiled-spec cache holds the flow's spec for these very bytes (flow, lock,
 * build); the spec has browser steps and declares no inputs, and the command line gives none (so no
 * input or secret can be wrong); no installed pack can change what the flow compiles against; not
 * `--dry`. Anything else launches nothing here, and the run starts Chromium as before, once its inputs
 * check out: a run that cannot start still opens no browser.
 */

let pending: Promise<Browser> | undefined;

/**
 * Start Chromium for `flowctl run <args>` when the run surely starts; resolves once the launch is under
 * way (playwright-core loaded and Chromium spawning), or at once when it does not apply. Never rejects:
 * a launch that fails is the run's to report, when its executor adopts it.
 */
export async function startEarlyBrowser(args: ParsedArgs, io: CliIO): Promise<void> {
  try {
    if (!(await earlyStartApplies(args, io))) return;
  } catch {
    return; // the run reports whatever is wrong with its flow
  }
  // Returns once Chromium's process is being spawned (or the launch failed first): the modules the
  // caller loads next keep the main thread busy, and a launch still on its way to the spawn would wait
  // for them. Nothing else spawns a process meanwhile, so the first one is the browser's.
  let onSpawn = () => {};
  const spawning = new Promise<void>((resolve) => {
    onSpawn = resolve;
    subscribe('child_process', onSpawn);
  });
  pending = launchChromium({ env: io.env });
  // When no executor adopts it, discardEarlyBrowser closes it; a failure is the adopter's to report.
  pending.catch(() => {});
  await Promise.race([spawning, pending.then(onSpawn, onSpawn)]);
  unsubscribe('child_process', onSpawn);
}

/** Whether `flowctl run <args>` surely starts a browser run (the conditions above), for this build. */
export async function earlyStartApplies(args: ParsedArgs, io: CliIO, build: string | undefined = BUILD_ID): Promise<boolean> {
  const f = args.flags;
  if (build === undefined || io.env.FLOWCTL_SPEC_CACHE === 'off') return false;
  if (f.dry || f.input !== undefined || f['input-file'] !== undefined || args.positionals.length !== 1) return false;
  if (existsSync(join(io.cwd, INSTALLED_REGISTRY_DIR))) return false;
  const read = await readFlowArg(args.positionals[0]!, io);
  const hit = await createSpecCache(io.cwd).read({ build, file: read.file.file, source: read.file.text, lock: read.lockText });
  if (!hit) return false;
  return Object.keys(hit.spec.inputs).length === 0 && hit.spec.steps.some((s) => s.tool.ref.startsWith('browser/'));
}

/** The browser started early, for the run's executor to adopt (once): undefined when none was started. */
export function takeEarlyBrowser(): Promise<Browser> | undefined {
  const taken = pending;
  pending = undefined;
  return taken;
}

/** Close a browser started early that no executor adopted (the run stopped before its first browser step). */
export async function discardEarlyBrowser(): Promise<void> {
  const left = takeEarlyBrowser();
  if (!left) return;
  const browser = await left.catch(() => undefined);
  await browser?.close().catch(() => {});
}
