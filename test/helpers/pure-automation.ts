import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Engine } from '../../src/engine/types.js';
import type { FlowSpec } from '../../src/flow/types.js';
import type { AutomationRecord, ServiceStorage } from '../../src/ports/service-storage.js';

/**
 * A published automation whose live version is the golden `hello` FlowSpec (one core/template step,
 * input `who`, no browser, no network), stored in the engine and the service tables as publish
 * leaves them: for tests that need many cheap runs of a published automation.
 */
export async function publishPureAutomation(
  storage: ServiceStorage,
  engine: Engine,
  orgId: string,
  userId: string,
  name: string,
): Promise<AutomationRecord & { live_digest: string }> {
  const spec = JSON.parse(readFileSync(resolve(import.meta.dirname, '../golden/hello.flowspec.json'), 'utf8')) as FlowSpec;
  return publishSpecAutomation(storage, engine, { orgId, userId, name, spec, task: 'Greet someone', site: 'https://example.test' });
}

export interface PublishedSpec {
  orgId: string;
  userId: string;
  name: string;
  spec: FlowSpec;
  task: string;
  site: string;
  /** Default: a random UUID. */
  id?: string;
}

/** A FlowSpec stored in the engine and published as an automation, its rows as publish leaves them. */
export async function publishSpecAutomation(
  storage: ServiceStorage,
  engine: Engine,
  { orgId, userId, name, spec, task, site, id }: PublishedSpec,
): Promise<AutomationRecord & { live_digest: string }> {
  const digest = await engine.putSpec(spec);
  const now = new Date().toISOString();
  const automation = {
    id: id ?? randomUUID(),
    org_id: orgId,
    name,
    task,
    site,
    mcp_enabled: true,
    created_at: now,
    status: 'published' as const,
    live_digest: digest,
    needs_attention: false,
    example: false,
    params: [],
  };
  await storage.automations.create(automation);
  await storage.versions.add({ automation_id: automation.id, org_id: orgId, flow_digest: digest, created_at: now, created_by: userId });
  return automation;
}
