import { randomBytes } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { checkOrigin, clearSessionCookie, clientIp, loadSession, newSession, setSessionCookie } from '../auth/guards.js';
import { checkLogin, loginFailed, loginSucceeded, rateLimited } from '../auth/login-limits.js';
import { dummyHash, hashPassword, needsRehash, verifyPassword } from '../auth/passwords.js';
import type { ServiceContext, ServiceDeps, ServiceEnv } from '../context.js';
import { replaceSession, signup } from '../domain/accounts.js';
import { serviceError } from '../errors.js';
import { jsonBody, jsonResponse, defineRoute, type ServiceRoute } from '../route-table.js';
import { Email, Org, orgJson, RoleEnum, User } from '../schemas.js';

/** Accounts and sessions (docs/hosted-api.md, "Accounts"). */

const Password = z.string().min(8).max(1024).openapi({ example: 'correct horse battery staple' });
const OrgName = z.string().trim().min(1).max(120);

const SignupBody = z.object({ email: Email, password: Password, org_name: OrgName.optional() }).openapi('SignupBody');
const LoginBody = z.object({ email: Email, password: z.string().min(1).max(1024) }).openapi('LoginBody');
const SwitchOrgBody = z.object({ org_id: z.string().min(1).max(200) }).openapi('SwitchOrgBody');
const UserOrg = z.object({ user: User, org: Org }).openapi('UserAndOrg');
export const SessionBody = z
  .object({ user: User, org: Org, role: RoleEnum, orgs: z.array(z.object({ id: z.string(), name: z.string(), role: RoleEnum })) })
  .openapi('Session');

/** Signup and login attempts per IP (and Origin checked: a login CSRF is refused too). */
function authAttempt(deps: ServiceDeps): MiddlewareHandler<ServiceEnv> {
  return async (c, next) => {
    checkOrigin(c, deps);
    try {
      await deps.limiters.authIp.consume(clientIp(c, deps));
    } catch (res) {
      if (res instanceof RateLimiterRes) throw rateLimited(res, deps.settings.authIpLimitPerMinute);
      throw res;
    }
    await next();
  };
}

function sessionBody(c: ServiceContext) {
  const { user, org, role, orgs } = c.get('auth');
  return { user, org: orgJson(org), role, orgs: orgs.map((o) => ({ id: o.org.id, name: o.org.name, role: o.role })) };
}

/** Start a session for `userId` in `orgId`, rotating out the current one (its expiry is kept). */
async function rotateSession(c: ServiceContext, deps: ServiceDeps, orgId: string): Promise<void> {
  const next = await replaceSession(deps, c.get('auth').session, orgId);
  setSessionCookie(c, deps, next);
}

export function authRoutes(deps: ServiceDeps): ServiceRoute[] {
  const { storage } = deps;

  return [
    defineRoute(
      {
        method: 'post',
        path: '/api/auth/signup',
        auth: 'public',
        summary: 'Sign up: a user, an org they own, and a session cookie',
        tags: ['accounts'],
        middleware: [authAttempt(deps)],
        request: jsonBody(SignupBody),
        responses: {
          201: jsonResponse('The new user and org; `svc_session` is set', UserOrg),
          409: jsonResponse('`conflict`: the email has an account', z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const body = c.req.valid('json');
        const orgName = body.org_name ?? `${body.email.split('@')[0]!.slice(0, 100)}'s org`;
        const { user, org, session } = await signup(deps, body.email, body.password, orgName);
        setSessionCookie(c, deps, session);
        return c.json({ user, org: orgJson(org) }, 201);
      },
    ),
    defineRoute(
      {
        method: 'post',
        path: '/api/auth/login',
        auth: 'public',
        summary: 'Log in; one 401 `invalid_credentials` for an unknown email and a wrong password alike',
        tags: ['accounts'],
        middleware: [authAttempt(deps)],
        request: jsonBody(LoginBody),
        responses: { 200: jsonResponse('The user and their first org; `svc_session` is set', UserOrg) },
      },
      async (c) => {
        const { email, password } = c.req.valid('json');
        const ip = clientIp(c, deps);
        await checkLogin(deps, email, ip);
        const user = await storage.users.getByEmail(email);
        // An unknown email costs one hash verification too, so both failures take the same time.
        const ok = await verifyPassword(password, user?.password_hash ?? (await dummyHash()));
        const orgs = user && ok ? await storage.members.orgsOf(user.id) : [];
        if (!user || !ok || orgs.length === 0) {
          await loginFailed(deps, email, ip);
          throw serviceError('invalid_credentials', 'email or password is wrong');
        }
        await loginSucceeded(deps, email, ip);
        if (needsRehash(user.password_hash)) await storage.users.setPasswordHash(user.id, await hashPassword(password));
        const org = orgs[0]!.org;
        const session = newSession(deps, user.id, org.id);
        await storage.sessions.create(session);
        setSessionCookie(c, deps, session);
        return c.json({ user: { id: user.id, email: user.email }, org: orgJson(org) }, 200);
      },
    ),
    defineRoute(
      {
        method: 'post',
        path: '/api/auth/logout',
        auth: 'session',
        summary: 'Log out: the session is revoked server-side and the cookie cleared',
        tags: ['accounts'],
        responses: { 204: { description: 'Logged out' } },
      },
      async (c) => {
        await storage.sessions.revoke(c.get('auth').session.id, deps.clock.now());
        clearSessionCookie(c, deps);
        return c.body(null, 204);
      },
    ),
    defineRoute(
      {
        method: 'get',
        path: '/api/session',
        // Outside production an unauthenticated caller without a cookie is provisioned a user and an
        // org; the route resolves the session itself.
        auth: 'public',
        summary: 'The current session (outside production: a user and an org are provisioned when no cookie is sent)',
        tags: ['accounts'],
        responses: {
          200: jsonResponse('The session', SessionBody),
          401: jsonResponse('`unauthenticated`', z.object({ error: z.string(), message: z.string() })),
        },
      },
      async (c) => {
        const check = await loadSession(c, deps);
        if (check.ok) return c.json(sessionBody(c), 200);
        if (check.cookieSent || deps.settings.production) {
          if (check.cookieSent) clearSessionCookie(c, deps);
          throw serviceError('unauthenticated', 'sign in first: no valid session cookie');
        }
        const id = randomBytes(4).toString('hex');
        const { session } = await signup(deps, `dev-${id}@localhost.test`, randomBytes(24).toString('base64url'), `Dev org ${id}`);
        setSessionCookie(c, deps, session);
        const found = (await storage.sessions.lookup(session.id))!;
        c.set('auth', { session, user: found.user, org: found.org, role: found.role!, orgs: found.orgs });
        return c.json(sessionBody(c), 200);
      },
    ),
    defineRoute(
      {
        method: 'post',
        path: '/api/session/org',
        auth: 'session',
        summary: 'Switch the active org; the cookie is re-issued',
        tags: ['accounts'],
        request: jsonBody(SwitchOrgBody),
        responses: { 200: jsonResponse('The org and your role in it', z.object({ org: Org, role: RoleEnum })) },
      },
      async (c) => {
        const { org_id } = c.req.valid('json');
        const member = await storage.members.get(org_id, c.get('auth').user.id);
        const org = member ? await storage.orgs.get(org_id) : undefined;
        if (!member || !org) throw serviceError('not_found', 'no such org among yours');
        await rotateSession(c, deps, org.id);
        return c.json({ org: orgJson(org), role: member.role }, 200);
      },
    ),
  ];
}

export { rotateSession };
