import type { Digest } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import type { JsonSchema } from '../tools/types.js';
import { secretInputNames } from '../flow/inputs.js';
import { compileBodyValidator, inputsBodySchema, type BodyValidator, type RequestSchemaOptions } from './request-schemas.js';
import { servedDigest, storeServedSpec } from '../engine/resolved-flow.js';
import type { Engine } from '../engine/types.js';

/**
 * A flow to serve: the name it is served under (the caller's: unique among the flows of this
 * launcher, not across the engine), its FlowSpec, and the digest it runs by. Give the digest when
 * the flow was resolved already (`resolveFlow`); without it, it is computed once per spec object.
 */
export interface LauncherFlow {
  name: string;
  spec: FlowSpec;
  digest?: Digest;
}

/**
 * The served flows: a fixed list, or a resolver called on each request (so a development server
 * can pick up edited flows). Nothing is deployed: a new digest's FlowSpec is stored once, and runs
 * go by digest.
 */
export type LauncherFlowSource = readonly LauncherFlow[] | (() => readonly LauncherFlow[] | Promise<readonly LauncherFlow[]>);

/** A served flow, its FlowSpec stored, with the request schema and validator derived from its inputs contract. */
export interface ServedFlow {
  name: string;
  digest: Digest;
  spec: FlowSpec;
  bodySchema: JsonSchema;
  validate: BodyValidator;
  secretInputs: string[];
}

/** Resolves the served flows, stores their FlowSpecs (once per digest) and caches their request schemas by digest. */
export function createCatalog(engine: Engine, source: LauncherFlowSource, schemaOptions: RequestSchemaOptions = {}) {
  // The request schema depends on the FlowSpec only: keyed by digest, an unchanged flow costs nothing.
  const byDigest = new Map<Digest, { bodySchema: JsonSchema; validate: BodyValidator; secretInputs: string[] }>();
  let fixed: Promise<Map<string, ServedFlow>> | undefined;

  async function serve(flow: LauncherFlow): Promise<ServedFlow> {
    const digest = servedDigest(flow, 'launcher');
    await storeServedSpec(engine, { name: flow.name, digest, spec: flow.spec }, 'launcher');
    let schemas = byDigest.get(digest);
    if (!schemas) {
      const bodySchema = inputsBodySchema(flow.spec, schemaOptions);
      schemas = { bodySchema, validate: compileBodyValidator(bodySchema), secretInputs: secretInputNames(flow.spec) };
      byDigest.set(digest, schemas);
    }
    return { name: flow.name, digest, spec: flow.spec, ...schemas };
  }

  async function load(list: readonly LauncherFlow[]): Promise<Map<string, ServedFlow>> {
    const names = new Set<string>();
    for (const f of list) {
      if (typeof f?.name !== 'string' || f.name === '' || !f.spec) {
        throw new FlowError('invalid_flows', '[flowctl] [launcher] every served flow needs a name and a spec');
      }
      if (names.has(f.name)) throw new FlowError('duplicate_flow', `[flowctl] [launcher] two served flows are named "${f.name}"`);
      names.add(f.name);
    }
    const served = await Promise.all(list.map(serve));
    return new Map(served.map((s) => [s.name, s]));
  }

  return {
    /** The served flows by name (their FlowSpecs stored). */
    async all(): Promise<Map<string, ServedFlow>> {
      if (typeof source === 'function') return load(await source());
      if (!fixed) {
        fixed = load(source);
        // A failed store is retried on the next request.
        fixed.catch(() => (fixed = undefined));
      }
      return fixed;
    },
  };
}
