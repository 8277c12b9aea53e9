import type { Digest } from '../../src/canonical.js';
import type { FlowSpec } from '../../src/flow/types.js';
import type { DeployStore, SpecStore } from '../../src/ports/storage.js';
import type { SqlContext } from './sql-context.js';
import { jsonb, jsonText, parseJson } from './sql-values.js';

/** How many stored digests a storage remembers (a put of one of them is a no-op without a query). */
const KNOWN_SPECS = 1024;

/**
 * FlowSpecs by digest; immutable, so a second put of a digest is a no-op. Specs are never changed or
 * deleted, so `known` (the storage outside a transaction) remembers digests this storage saw committed
 * (put or read): putting one again costs no round trip (`engine.run({ spec })` puts its spec on every
 * run). A transaction's view has none: its puts may still roll back.
 */
export function sqlSpecStore(ctx: SqlContext, known?: Set<string>): SpecStore {
  const remember = (digest: string) => {
    if (!known || known.has(digest)) return;
    if (known.size >= KNOWN_SPECS) known.delete(known.values().next().value!);
    known.add(digest);
  };
  return {
    put: (digest, spec) =>
      ctx.guard('specs.put', async () => {
        if (known?.has(digest)) return;
        await ctx.db
          .insertInto('specs')
          .values({ digest, spec: jsonb(spec) })
          .onConflict((oc) => oc.column('digest').doNothing())
          .execute();
        remember(digest);
      }),
    get: (digest) =>
      ctx.guard('specs.get', async () => {
        const row = await ctx.db.selectFrom('specs').select(jsonText('spec', 'spec')).where('digest', '=', digest).executeTakeFirst();
        if (row) remember(digest);
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
        const row = await ctx.db.selectFrom('deploys').select('digest').where('front', '=', front).where('name', '=', name).executeTakeFirst();
        return row?.digest as Digest | undefined;
      }),
    list: (front) =>
      ctx.guard('deploys.list', async () => {
        const rows = await ctx.db.selectFrom('deploys').select(['name', 'digest']).where('front', '=', front).orderBy('name').execute();
        return rows.map((r) => ({ name: r.name, digest: r.digest as Digest }));
      }),
  };
}
