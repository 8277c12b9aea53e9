import { z } from '@hono/zod-openapi';
import { isFlowError } from '../../errors.js';
import { audit, type ServiceDeps } from '../context.js';
import { serviceError } from '../errors.js';
import { jsonBody, jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';
import { Email, Member, Org, orgJson, RoleEnum, User } from '../schemas.js';
import { rotateSession } from './auth.js';

/** Orgs and members (docs/hosted-api.md, "Orgs and members"). */

const CreateOrgBody = z.object({ name: z.string().trim().min(1).max(120) }).openapi('CreateOrgBody');
const AddMemberBody = z.object({ email: Email, role: RoleEnum }).openapi('AddMemberBody');
const ChangeRoleBody = z.object({ role: RoleEnum }).openapi('ChangeRoleBody');
const UserIdParam = z.object({
  userId: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'userId', in: 'path' } }),
});

const memberJson = (m: { user_id: string; email: string; role: 'owner' | 'member'; created_at: string }) => ({
  user_id: m.user_id,
  email: m.email,
  role: m.role,
  created_at: m.created_at,
});

export function orgRoutes(deps: ServiceDeps): ServiceRoute[] {
  const { storage } = deps;

  /** The member with email, or not_found (one answer whether the user exists elsewhere or not). */
  const memberOf = async (orgId: string, userId: string) => {
    const m = (await storage.members.list(orgId)).find((x) => x.user_id === userId);
    if (!m) throw serviceError('not_found', 'no such member in this org');
    return m;
  };

  return [
    defineRoute(
      {
        method: 'post',
        path: '/api/orgs',
        auth: 'session',
        summary: 'Create an org you own; it becomes the active org of your session',
        tags: ['orgs'],
        request: jsonBody(CreateOrgBody),
        responses: { 200: jsonResponse('The org and you', z.object({ org: Org, user: User })) },
      },
      async (c) => {
        const { name } = c.req.valid('json');
        const { user } = c.get('auth');
        const now = deps.clock.now();
        const org = { id: deps.ids.uuid(), name, created_at: now };
        await storage.transaction(async (tx) => {
          await tx.orgs.create(org);
          await tx.members.add({ org_id: org.id, user_id: user.id, role: 'owner', created_at: now });
          await audit(deps, tx, { org_id: org.id, actor: user.id, target: `org:${org.id}`, action: 'org.create', detail: { name } });
        });
        await rotateSession(c, deps, org.id);
        return c.json({ org: orgJson(org), user }, 200);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/members',
        auth: 'session',
        summary: 'Members of the active org',
        tags: ['orgs'],
        responses: { 200: jsonResponse('Members, oldest first', z.object({ members: z.array(Member) })) },
      },
      async (c) => c.json({ members: (await storage.members.list(c.get('auth').org.id)).map(memberJson) }, 200),
    ),
    defineRoute(
      {
        method: 'post',
        path: '/api/members',
        auth: 'owner',
        summary: 'Add a user (who has an account) to the org',
        tags: ['orgs'],
        request: jsonBody(AddMemberBody),
        responses: {
          201: jsonResponse('The member', z.object({ member: Member })),
          404: jsonResponse('`user_not_found`: no account with that email', z.object({ error: z.string(), message: z.string() })),
          409: jsonResponse('`conflict`: already a member', z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const { email, role } = c.req.valid('json');
        const { org, user: actor } = c.get('auth');
        const user = await storage.users.getByEmail(email);
        if (!user) throw serviceError('user_not_found', 'no account has this email; ask them to sign up first');
        const now = deps.clock.now();
        await storage.transaction(async (tx) => {
          try {
            await tx.members.add({ org_id: org.id, user_id: user.id, role, created_at: now });
          } catch (err) {
            if (isFlowError(err, 'conflict')) throw serviceError('conflict', 'this user is already a member');
            throw err;
          }
          await audit(deps, tx, { org_id: org.id, actor: actor.id, target: `member:${user.id}`, action: 'member.add', detail: { role } });
        });
        return c.json({ member: { user_id: user.id, email: user.email, role, created_at: now } }, 201);
      },
    ),
    defineRoute(
      {
        method: 'patch',
        path: '/api/members/{userId}',
        auth: 'owner',
        summary: "Change a member's role; 409 `last_owner` when it would leave no owner",
        tags: ['orgs'],
        request: { params: UserIdParam, ...jsonBody(ChangeRoleBody) },
        responses: {
          200: jsonResponse('The member', z.object({ member: Member })),
          409: jsonResponse('`last_owner`', z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const { userId } = c.req.valid('param');
        const { role } = c.req.valid('json');
        const { org, user: actor } = c.get('auth');
        const before = await memberOf(org.id, userId);
        await storage.transaction(async (tx) => {
          const updated = await tx.members.setRole(org.id, userId, role);
          if (!updated) throw serviceError('not_found', 'no such member in this org');
          await audit(deps, tx, {
            org_id: org.id,
            actor: actor.id,
            target: `member:${userId}`,
            action: 'member.role',
            detail: { from: before.role, to: role },
          });
        });
        return c.json({ member: memberJson({ ...before, role }) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'delete',
        path: '/api/members/{userId}',
        auth: 'owner',
        summary: 'Remove a member; their sessions in this org end at once; 409 `last_owner`',
        tags: ['orgs'],
        request: { params: UserIdParam },
        responses: { 204: { description: 'Removed' }, 409: jsonResponse('`last_owner`', z.object({ error: z.string(), message: z.string() })) },
      },
      async (c) => {
        const { userId } = c.req.valid('param');
        const { org, user: actor } = c.get('auth');
        const before = await memberOf(org.id, userId);
        await storage.transaction(async (tx) => {
          if (!(await tx.members.remove(org.id, userId))) throw serviceError('not_found', 'no such member in this org');
          await tx.sessions.revokeForMember(org.id, userId, deps.clock.now());
          await audit(deps, tx, { org_id: org.id, actor: actor.id, target: `member:${userId}`, action: 'member.remove', detail: { role: before.role } });
        });
        return c.body(null, 204);
      },
    ),
  ];
}
