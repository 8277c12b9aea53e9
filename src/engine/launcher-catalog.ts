import { digestOf, type Digest } from '../canonical.js';
import { FlowError } from '../errors.js';
import type { FlowSpec } from '../flow/types.js';
import type { JsonSchema } from '../tools/types.js';
import { secretInputNames } from '../flow/inputs.js';
import { compileBodyValidator, inputsBodySchema, type BodyValidator, type RequestSchemaOptions } from './request-schemas.js';
import type { Engine } from './types.js';

/** A flow to serve: the name it is served (and deployed) under, and its FlowSpec. */
export interface LauncherFlow {
  name: string;
  spec: FlowSpec;
}

/**
 * The served flows: a fixed list, or a resolver called on each request (so a development server
 * can pick up edited flows). A resolver's new digests are deployed before they are served.
 */
export type LauncherFlowSource = readonly LauncherFlow[] | (() => readonly LauncherFlow[] | Promise<readonly LauncherFlow[]>);

/** A served flow, deployed, with the request schema and validator derived from its inputs contract. */
export interface ServedFlow {
  name: string;
  digest: Digest;
  spec: FlowSpec;
  bodySchema: JsonSchema;
  validate: BodyValidator;
  secretInputs: string[];
}

/** Resolves, deploys and caches the served flows. Deploys go to `front` (the launcher's: `rest`). */
export function createCatalog(engine: Engine, source: LauncherFlowSource, front: string, schemaOptions: RequestSchemaOptions = {}) {
  // Keyed by name + digest: a redeployed name gets a new entry, an unchanged one costs nothing.
  const byKey = new Map<string, Promise<ServedFlow>>();
  let fixed: Promise<Map<string, ServedFlow>> | undefined;

  function serve(flow: LauncherFlow): Promise<ServedFlow> {
    const digest = digestOf(flow.spec);
    const key = `${flow.name}\u0000${digest}`;
    let entry = byKey.get(key);
    if (!entry) {
      entry = (async () => {
        const deployed = await engine.deploy(flow.name, flow.spec, { front });
        const bodySchema = inputsBodySchema(flow.spec, schemaOptions);
        return {
          name: flow.name,
          digest: deployed,
          spec: flow.spec,
          bodySchema,
          validate: compileBodyValidator(bodySchema),
          secretInputs: secretInputNames(flow.spec),
        };
      })();
      // A failed deploy is retried on the next request rather than cached forever.
      entry.catch(() => byKey.delete(key));
      byKey.set(key, entry);
    }
    return entry;
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
    /** The served flows by name (deployed). */
    async all(): Promise<Map<string, ServedFlow>> {
      if (typeof source === 'function') return load(await source());
      if (!fixed) {
        fixed = load(source);
        // A failed deploy is retried on the next request.
        fixed.catch(() => (fixed = undefined));
      }
      return fixed;
    },
  };
}
