import { isFlowError } from '../../errors.js';
import type { AutomationRecord } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';
import { newDraft, storeDraft } from './automations.js';
import { compileCapture, publishVersion } from './publish.js';

/**
 * The starter example (docs/hosted-api.md, "Starter example"): a browser automation against the demo
 * page (routes/example.ts serves it), with one input (`city`) and one extracted output (`forecast`).
 * With browser tools wired in it is published at once; without, it is a draft prefilled with the site
 * and task. One per org, also under concurrent calls.
 */

export const EXAMPLE_NAME = 'example-forecast';
export const EXAMPLE_TASK = 'Look up the forecast for a city on the demo site and read it back';

export function exampleOps(siteUrl: string): unknown[] {
  return [
    { kind: 'navigate', url: siteUrl },
    { kind: 'fill', target: { label: 'City', fallbacks: [{ css: '#city' }] }, value: 'Lisbon', slot: 'city' },
    { kind: 'click', target: { role: 'button', name: 'Look up' } },
    { kind: 'extract', target: '#result', name: 'forecast' },
  ];
}

/** Whether browser tools are wired in (the example can be published, not only drafted). */
export const exampleRunnable = (deps: ServiceDeps): boolean => deps.engine !== undefined && deps.tools?.resolve('browser/navigate', '1') !== undefined;

/** Give the org the starter example against `siteUrl`; `existed` when it (or a concurrent call's) was there already. */
export async function giveExample(
  deps: ServiceDeps,
  orgId: string,
  actor: string,
  siteUrl: string,
): Promise<{ automation: AutomationRecord; existed: boolean }> {
  const { storage } = deps;
  const existing = await storage.automations.getExample(orgId);
  if (existing) return { automation: existing, existed: true };
  const draft = newDraft(deps, orgId, { name: EXAMPLE_NAME, site: siteUrl, task: EXAMPLE_TASK }, true);
  const { automation, session } = draft;
  if (exampleRunnable(deps)) {
    session.captured_ops = exampleOps(siteUrl);
    session.input_slots = ['city'];
    session.input_params = [{ name: 'city', required: true, sample: 'Lisbon' }];
  }
  try {
    await storeDraft(deps, actor, draft, { example: true });
  } catch (err) {
    // A concurrent call (or an automation already named like the example) won: answer with it.
    if (isFlowError(err, 'conflict')) {
      const winner = (await storage.automations.getExample(orgId)) ?? (await storage.automations.getByName(orgId, EXAMPLE_NAME));
      if (winner) return { automation: winner, existed: true };
    }
    throw err;
  }
  if (!exampleRunnable(deps)) return { automation, existed: false };
  const compiled = await compileCapture(deps, storage, automation, session);
  return { automation: await publishVersion(deps, automation, compiled, actor), existed: false };
}
