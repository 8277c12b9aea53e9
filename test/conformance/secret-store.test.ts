import { PGlite } from '@electric-sql/pglite';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll } from 'vitest';
import { createEnvSecrets, secretEnvName } from '../../adapters/secrets-env/index.js';
import { createSqlServiceStorage, createSqlStorage } from '../../adapters/storage-sql/index.js';
import { describeSecretStoreConformance } from '../../testing/index.js';
import type { ServiceDeps } from '../../src/service/context.js';
import { orgSecretStore } from '../../src/service/domain/secrets.js';
import { createSecretBox } from '../../src/service/secret-box.js';
import { uniqueSchemaName } from '../helpers/postgres.js';

// The SecretStore suite (flowctl/testing) on every SecretStore in the repo: environment variables
// (a private env object, never process.env) and the hosted org secret store (AES-256-GCM rows on
// PGlite), which also must not resolve another org's secret of the same name.

describeSecretStoreConformance({
  name: 'secrets-env',
  create: async (seed) => {
    const env: Record<string, string> = { UNRELATED: 'x' };
    for (const [name, value] of Object.entries(seed)) env[secretEnvName(`secret:${name}`)] = value;
    return createEnvSecrets({ env });
  },
});

let pglite: Promise<PGlite> | undefined;
const disposers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const d of disposers) await d();
  await (await pglite)?.close();
});

describeSecretStoreConformance({
  name: 'hosted org secrets',
  create: async (seed) => {
    const engineStorage = createSqlStorage({ pglite: await (pglite ??= PGlite.create()), schema: uniqueSchemaName() });
    const storage = createSqlServiceStorage(engineStorage);
    await storage.init();
    disposers.push(() => engineStorage.dispose());
    const box = createSecretBox([randomBytes(32)]);
    const at = new Date().toISOString();
    const org = randomUUID();
    const other = randomUUID();
    for (const id of [org, other]) await storage.orgs.create({ id, name: `org ${id.slice(0, 8)}`, created_at: at });
    for (const [name, value] of Object.entries(seed)) await storage.secrets.put({ org_id: org, name, ciphertext: box.seal(org, name, value), updated_at: at });
    // The other org holds a secret every test looks up by name: it must stay unreachable.
    await storage.secrets.put({ org_id: other, name: 'not_set_anywhere', ciphertext: box.seal(other, 'not_set_anywhere', 'OTHER-ORG-VALUE'), updated_at: at });
    return orgSecretStore({ box } as unknown as ServiceDeps, storage, org);
  },
});
