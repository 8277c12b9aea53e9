import type { ArtifactStore } from '../../src/ports/storage.js';
import type { SqlContext } from './sql-context.js';
import { toBytes } from './sql-values.js';

/** Artifacts by digest as bytea; content-addressed, so a second put of a digest is a no-op. */
export function sqlArtifactStore(ctx: SqlContext): ArtifactStore {
  return {
    put: (digest, bytes, mediaType) =>
      ctx.guard('artifacts.put', async () => {
        await ctx.db
          .insertInto('artifacts')
          .values({ digest, media_type: mediaType, bytes })
          .onConflict((oc) => oc.column('digest').doNothing())
          .execute();
      }),
    get: (digest) =>
      ctx.guard('artifacts.get', async () => {
        const row = await ctx.db.selectFrom('artifacts').select(['bytes', 'media_type']).where('digest', '=', digest).executeTakeFirst();
        return row ? { bytes: toBytes(row.bytes), mediaType: row.media_type } : undefined;
      }),
  };
}
