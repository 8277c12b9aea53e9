import { isFlowError } from '../../errors.js';
import type { StudioPage } from '../../ports/studio.js';
import { orgFileSource } from '../domain/dispatch.js';
import { maskSecrets, planRerecord, type RerecordPlan } from './rerecord.js';
import { plainMessage, type StudioSession } from './session.js';

/**
 * Re-record in a live session (`?from_step=<step id>`): the plan (rerecord.ts), then the published
 * steps before the drifted one replayed in the session's page, each told to the viewer; a plan that
 * cannot be made or a replay that fails ends the session with its reason.
 */

/** The re-record plan, or undefined after telling the viewer why there is none (the session then closes). */
export async function startRerecord(session: StudioSession, step: string): Promise<RerecordPlan | undefined> {
  const { deps, orgId, automationId } = session;
  const { storage, logger } = deps;
  try {
    const automation = await storage.automations.get(orgId, automationId);
    const authoring = await storage.authoring.get(orgId, automationId);
    if (!automation || !authoring) throw new Error('gone');
    return await planRerecord(deps, automation, authoring, step);
  } catch (err) {
    const code = isFlowError(err) ? err.code : 'internal_error';
    if (!isFlowError(err)) logger.error(`[flowctl] [studio] re-record: ${(err as Error)?.stack ?? String(err)}`);
    const message = isFlowError(err) ? plainMessage(err.message) : 'the re-record could not be prepared';
    session.send({ type: 'error', error: code, message });
    session.send({ type: 'closed', reason: code, message });
    session.close(4022, code);
    await session.teardown();
    return undefined;
  }
}

/** Replay the ops before the drifted step, telling the viewer each step; false (session closed) when one fails. */
export async function replayBefore(session: StudioSession, page: StudioPage, p: RerecordPlan): Promise<boolean> {
  const { deps, orgId } = session;
  const { logger } = deps;
  const of = p.steps.length;
  try {
    await page.replay(p.steps, {
      // A replayed upload reads the file the capture pins from the org's files, as a run does.
      files: orgFileSource(deps, orgId),
      onStep: (i, step) => {
        session.touch();
        session.send({ type: 'replaying', step: i + 1, of, id: step.id });
      },
    });
    if (of > 0) session.send({ type: 'replayed', of });
    return !session.closed;
  } catch (err) {
    const data = (isFlowError(err) ? err.data : undefined) as { step?: string; index?: number; code?: string } | undefined;
    const message = maskSecrets(isFlowError(err) ? plainMessage(err.message) : 'the replay failed', p.secrets);
    if (!isFlowError(err)) logger.error(`[flowctl] [studio] replay: ${(err as Error)?.stack ?? String(err)}`);
    session.send({ type: 'replay_failed', step: (data?.index ?? 0) + 1, of, id: data?.step ?? null, code: data?.code ?? 'replay_failed', message });
    session.send({ type: 'closed', reason: 'replay_failed', message });
    session.close(4024, 'replay_failed');
    await session.teardown();
    return false;
  }
}
