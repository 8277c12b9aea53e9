import { isFlowError } from '../../errors.js';
import type { OrgRecord, Role } from '../../ports/service-storage.js';
import type { ServiceDeps } from '../context.js';
import { serviceError } from '../errors.js';
import { audit } from './audit.js';

/** Orgs and members (docs/hosted-api.md, "Orgs and members"): every change audited. */

/** A new org owned by `actor`. */
export async function createOrg(deps: ServiceDeps, actor: string, name: string): Promise<OrgRecord> {
  const now = deps.clock.now();
  const org = { id: deps.ids.uuid(), name, created_at: now };
  await deps.storage.transaction(async (tx) => {
    await tx.orgs.create(org);
    await tx.members.add({ org_id: org.id, user_id: actor, role: 'owner', created_at: now });
    await audit(deps, tx, { org_id: org.id, actor, target: `org:${org.id}`, action: 'org.create', detail: { name } });
  });
  return org;
}

/** The member with email, or not_found (one answer whether the user exists elsewhere or not). */
async function memberOf(deps: ServiceDeps, orgId: string, userId: string) {
  const m = (await deps.storage.members.list(orgId)).find((x) => x.user_id === userId);
  if (!m) throw serviceError('not_found', 'no such member in this org');
  return m;
}

/** Add the user who has an account with `email` (user_not_found, or conflict when already a member). */
export async function addMember(deps: ServiceDeps, orgId: string, actor: string, email: string, role: Role) {
  const user = await deps.storage.users.getByEmail(email);
  if (!user) throw serviceError('user_not_found', 'no account has this email; ask them to sign up first');
  const now = deps.clock.now();
  await deps.storage.transaction(async (tx) => {
    try {
      await tx.members.add({ org_id: orgId, user_id: user.id, role, created_at: now });
    } catch (err) {
      if (isFlowError(err, 'conflict')) throw serviceError('conflict', 'this user is already a member');
      throw err;
    }
    await audit(deps, tx, { org_id: orgId, actor, target: `member:${user.id}`, action: 'member.add', detail: { role } });
  });
  return { user_id: user.id, email: user.email, role, created_at: now };
}

/** Change a member's role (the storage refuses leaving no owner: 409 last_owner); answers the member. */
export async function changeRole(deps: ServiceDeps, orgId: string, actor: string, userId: string, role: Role) {
  const before = await memberOf(deps, orgId, userId);
  await deps.storage.transaction(async (tx) => {
    const updated = await tx.members.setRole(orgId, userId, role);
    if (!updated) throw serviceError('not_found', 'no such member in this org');
    await audit(deps, tx, { org_id: orgId, actor, target: `member:${userId}`, action: 'member.role', detail: { from: before.role, to: role } });
  });
  return { ...before, role };
}

/** Remove a member; their sessions in this org end at once (409 last_owner as above). */
export async function removeMember(deps: ServiceDeps, orgId: string, actor: string, userId: string): Promise<void> {
  const before = await memberOf(deps, orgId, userId);
  await deps.storage.transaction(async (tx) => {
    if (!(await tx.members.remove(orgId, userId))) throw serviceError('not_found', 'no such member in this org');
    await tx.sessions.revokeForMember(orgId, userId, deps.clock.now());
    await audit(deps, tx, { org_id: orgId, actor, target: `member:${userId}`, action: 'member.remove', detail: { role: before.role } });
  });
}
