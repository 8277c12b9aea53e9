import { isFlowError } from '../../errors.js';
import type { SessionRecord } from '../../ports/service-storage.js';
import { newSession } from '../auth/guards.js';
import { hashPassword } from '../auth/passwords.js';
import type { ServiceDeps } from '../context.js';
import { serviceError } from '../errors.js';
import { audit } from './audit.js';

/** Accounts and sessions (docs/hosted-api.md, "Accounts"): signup and session rotation. */

/** A user, an org they own and a session in it, in one transaction (conflict when the email has an account). */
export async function signup(deps: ServiceDeps, email: string, password: string, orgName: string) {
  const now = deps.clock.now();
  const user = { id: deps.ids.uuid(), email, password_hash: await hashPassword(password), created_at: now };
  const org = { id: deps.ids.uuid(), name: orgName, created_at: now };
  const session = newSession(deps, user.id, org.id);
  await deps.storage.transaction(async (tx) => {
    try {
      await tx.users.create(user);
    } catch (err) {
      if (isFlowError(err, 'conflict')) throw serviceError('conflict', 'an account with this email already exists; log in instead');
      throw err;
    }
    await tx.orgs.create(org);
    await tx.members.add({ org_id: org.id, user_id: user.id, role: 'owner', created_at: now });
    await tx.sessions.create(session);
    await audit(deps, tx, { org_id: org.id, actor: user.id, target: `org:${org.id}`, action: 'org.create', detail: { name: org.name, via: 'signup' } });
  });
  return { user: { id: user.id, email }, org, session };
}

/** A session of the same user in `orgId` replacing `current` (revoked; its expiry is kept). */
export async function replaceSession(deps: ServiceDeps, current: SessionRecord, orgId: string): Promise<SessionRecord> {
  const next = { ...newSession(deps, current.user_id, orgId), expires_at: current.expires_at };
  await deps.storage.transaction(async (tx) => {
    await tx.sessions.create(next);
    await tx.sessions.revoke(current.id, deps.clock.now());
  });
  return next;
}
