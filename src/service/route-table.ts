import { createRoute, z, type OpenAPIHono, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { ServiceDeps, ServiceEnv } from './context.js';

/**
 * The route table of the hosted service: every path of spec/hosted-service.md and HOSTED-API.md is a
 * `ServiceRoute` here, with its auth kind. The same table builds the Hono app, the OpenAPI document
 * and the tenancy test matrix (test/e2e/hosted-tenancy.test.ts).
 */
export type AuthKind = 'public' | 'session' | 'owner' | 'bearer';

/**
 * What a route module declares of a route: its OpenAPI parts (less those its auth kind adds) and its
 * auth kind. A zod-openapi RouteConfig, so its request and response schemas type the handler.
 */
export type RouteDef = RouteConfig & {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI form (`/api/members/{userId}`): grep for it. */
  path: string;
  auth: AuthKind;
  summary: string;
  tags: string[];
  /** Extra middleware after auth (rate limits). */
  middleware?: MiddlewareHandler<ServiceEnv>[];
};

/** A route of the table: its declaration, and how it mounts on the app (its handler typed from its own schemas). */
export type ServiceRoute = RouteDef & {
  /** Add the route to the app, `authMiddleware` (its auth kind's guards) first. */
  mount(app: OpenAPIHono<ServiceEnv>, authMiddleware: MiddlewareHandler<ServiceEnv>[]): void;
};

/**
 * A table entry whose handler is typed from the route's own request and response schemas
 * (`c.req.valid('json')` is the body schema's output): @hono/zod-openapi's `RouteHandler` of the config.
 */
export function defineRoute<D extends RouteDef>(def: D, handler: RouteHandler<D, ServiceEnv>): ServiceRoute {
  return {
    ...def,
    mount(app, authMiddleware) {
      // The handler was checked against D above; inside this generic function TypeScript cannot
      // resolve zod-openapi's conditional types over D, so the pair is handed over unchecked here.
      app.openapi(toRouteConfig(def, authMiddleware) as never, handler as never);
    },
  };
}

export const ErrorBody = z.object({ error: z.string().openapi({ example: 'not_found' }), message: z.string() }).openapi('Error');

export const ValidationErrorBody = z
  .object({
    error: z.literal('invalid_request'),
    issues: z.array(z.object({ path: z.array(z.union([z.string(), z.number()])), message: z.string(), code: z.string() })),
  })
  .openapi('ValidationError');

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBody } } });

/** The error responses every route of an auth kind can give, for the OpenAPI document. */
export function standardErrors(auth: AuthKind, hasBody: boolean): RouteConfig['responses'] {
  const out: RouteConfig['responses'] = {};
  if (hasBody) {
    out[400] = errorResponse('`invalid_json`: the body is not a JSON object');
    out[413] = errorResponse('`body_too_large`: over 1 MiB');
    out[415] = errorResponse('`unsupported_media_type`: Content-Type is not application/json');
    out[422] = {
      description: '`invalid_request`: the body, query or path breaks the schema',
      content: { 'application/json': { schema: ValidationErrorBody } },
    };
  }
  if (auth === 'session' || auth === 'owner') {
    out[401] = errorResponse('`unauthenticated`: no valid session cookie');
    out[403] = errorResponse(auth === 'owner' ? '`forbidden`: not an owner, or a write from a foreign Origin' : '`forbidden`: a write from a foreign Origin');
  }
  if (auth === 'bearer') out[401] = errorResponse('`invalid_key`: no, malformed, unknown or revoked API key');
  out[429] = errorResponse('`rate_limited`: see Retry-After');
  return out;
}

export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { body: { content: { 'application/json': { schema } }, required: true, ...(description ? { description } : {}) } };
}

export function jsonResponse<T extends z.ZodType>(description: string, schema: T) {
  return { description, content: { 'application/json': { schema } } };
}

/** Turn a table entry into the zod-openapi route config (auth middleware first). */
function toRouteConfig(route: RouteDef, authMiddleware: MiddlewareHandler<ServiceEnv>[]): RouteConfig {
  const hasBody = route.request?.body !== undefined || route.request?.query !== undefined || route.request?.params !== undefined;
  return createRoute({
    method: route.method,
    path: route.path,
    summary: route.summary,
    tags: route.tags,
    ...(route.request ? { request: route.request } : {}),
    ...(route.auth === 'session' || route.auth === 'owner' ? { security: [{ session: [] }] } : route.auth === 'bearer' ? { security: [{ apiKey: [] }] } : {}),
    middleware: [...authMiddleware, ...(route.middleware ?? [])],
    responses: { ...standardErrors(route.auth, hasBody), ...route.responses },
  });
}

export type RouteModule = (deps: ServiceDeps) => ServiceRoute[];
