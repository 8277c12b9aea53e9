import { z } from '@hono/zod-openapi';
import type { ServiceDeps } from '../context.js';
import { addMember, changeRole, createOrg, removeMember } from '../domain/members.js';
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
        const org = await createOrg(deps, user.id, name);
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
        const member = await addMember(deps, org.id, actor.id, email, role);
        return c.json({ member }, 201);
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
        const member = await changeRole(deps, org.id, actor.id, userId, role);
        return c.json({ member: memberJson(member) }, 200);
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
        await removeMember(deps, org.id, actor.id, userId);
        return c.body(null, 204);
      },
    ),
  ];
}
