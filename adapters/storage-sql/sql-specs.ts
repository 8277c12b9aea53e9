import type { Digest } from '../../src/canonical.js';
import type { FlowSpec } from '../../src/flow/types.js';
import type { DeployStore, SpecStore } from '../../src/ports/storage.js';
import type { SqlContext } from './sql-context.js';
import { jsonb, jsonText, parseJson } from './sql-values.js';

/** FlowSpecs by digest; immutable, so a second put of a digest is a no-op. */
export function sqlSpecStore(ctx: SqlContext): SpecStore {
  return {
    put: (digest, spec) =>
      ctx.guard('specs.put', async () => {
        await ctx.db
          .insertInto('specs')
          .values({ digest, spec: jsonb(spec) })
          .onConflict((oc) => oc.column('digest').doNothing())
          .execute();
      }),
    get: (digest) =>
      ctx.guard('specs.get', async () => {
        const row = await ctx.db.selectFrom('specs').select(jsonText('spec', 'spec')).where('digest', '=', digest).executeTakeFirst();
        return row ? (parseJson(row.spec) as FlowSpec) : undefined;
      }),
  };
}

/** name -> digest per front; set moves the pointer. */
export function sqlDeployStore(ctx: SqlContext): DeployStore {
  return {
    set: (front, name, digest) =>
      ctx.guard('deploys.set', async () => {
        await ctx.db
          .insertInto('deploys')
          .values({ front, name, digest })
          .onConflict((oc) => oc.columns(['front', 'name']).doUpdateSet({ digest }))
          .execute();
      }),
    get: (front, name) =>
      ctx.guard('deploys.get', async () => {
        const row = await ctx.db
          .selectFrom('deploys')
          .select('digest')
          .where('front', '=', front)
          .where('name', '=', name)
          .executeTakeFirst();
        return row?.digest as Digest | undefined;
      }),
    list: (front) =>
      ctx.guard('deploys.list', async () => {
        const rows = await ctx.db.selectFrom('deploys').select(['name', 'digest']).where('front', '=', front).orderBy('name').execute();
        return rows.map((r) => ({ name: r.name, digest: r.digest as Digest }));
      }),
  };
}
