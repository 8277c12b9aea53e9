import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServiceStorage } from '../src/ports/service-storage.js';
import { describeAccounts } from './service-storage/accounts.js';
import { describeAudit } from './service-storage/audit.js';
import { describeAutomations } from './service-storage/automations.js';
import { describeExecutionsAndWebhooks } from './service-storage/executions.js';
import { describeSchedules } from './service-storage/schedules.js';
import { at, type ServiceStorageConformanceOptions, type Suite, uid } from './service-storage/shared.js';
import { SUITE_TIMEOUT_MS } from './bounded.js';
import { describeTransactions } from './service-storage/transactions.js';

export type { ServiceStorageConformanceOptions } from './service-storage/shared.js';

/**
 * The conformance suite of the hosted service's storage port (src/ports/service-storage.ts): users,
 * orgs, members and the last-owner rule (also under concurrent demotions), sessions, API keys (hash
 * only, revocation, scope), the audit chain, and transactions (commit, rollback). Writes are checked
 * through `reopen`.
 */
export function describeServiceStorageConformance(options: ServiceStorageConformanceOptions): void {
  describe(`service storage conformance: ${options.name}`, { timeout: SUITE_TIMEOUT_MS }, () => {
    let storage: ServiceStorage;
    const opened: ServiceStorage[] = [];
    const open = async (s: ServiceStorage) => {
      await s.init();
      opened.push(s);
      return s;
    };
    const independent = async () => (options.reopen ? open(await options.reopen(storage)) : storage);

    beforeEach(async () => {
      storage = await open(await options.create());
    });
    afterEach(async () => {
      for (const s of opened.splice(0).reverse()) await s.dispose();
    });

    const seedOrg = async (owners: number, members = 0) => {
      const org = { id: uid('org'), name: 'Acme', created_at: at(0) };
      await storage.orgs.create(org);
      const users: string[] = [];
      for (let i = 0; i < owners + members; i++) {
        const user = { id: uid('user'), email: `${uid('u')}@example.test`, password_hash: '$argon2id$x', created_at: at(i) };
        await storage.users.create(user);
        await storage.members.add({ org_id: org.id, user_id: user.id, role: i < owners ? 'owner' : 'member', created_at: at(i + 1) });
        users.push(user.id);
      }
      return { org, users };
    };

    it('is ready once initialised', async () => {
      expect(await storage.ready()).toBe(true);
    });

    const suite: Suite = {
      options,
      get storage() {
        return storage;
      },
      open,
      independent,
      seedOrg,
    };
    describeAccounts(suite);
    describeAudit(suite);
    describeAutomations(suite);
    describeExecutionsAndWebhooks(suite);
    describeSchedules(suite);
    describeTransactions(suite);
  });
}
