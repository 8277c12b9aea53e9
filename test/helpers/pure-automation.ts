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
  const digest = await engine.putSpec(spec);
  const now = new Date().toISOString();
  const automation = {
    id: randomUUID(),
    org_id: orgId,
    name,
    task: 'Greet someone',
    site: 'https://example.test',
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
