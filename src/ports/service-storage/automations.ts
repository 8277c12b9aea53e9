// Automations and what hangs off them: authoring state, published versions, org secrets.

export type AutomationStatus = 'draft' | 'published' | 'failing';

export interface AutomationRecord {
  id: string;
  org_id: string;
  /** Unique per org; `^[a-z0-9][a-z0-9-]*$`, 1-64 characters. */
  name: string;
  task: string;
  site: string;
  mcp_enabled: boolean;
  created_at: string;
  status: AutomationStatus;
  live_digest?: string;
  needs_attention: boolean;
  /** Step id of the drifted step, while failing. */
  failing_step?: string;
  /** The org's starter example (at most one per org). */
  example: boolean;
  /** Params given at creation (`{name, required?, sample?}`), kept for the authoring session. */
  params: unknown[];
}

export interface AuthoringRecord {
  /** One session per automation: keyed by the automation id. */
  automation_id: string;
  org_id: string;
  captured_ops: unknown[];
  input_params: { name: string; required: boolean; sample: string }[];
  input_slots: string[];
  secret_slots: string[];
  /** Upload files of the capture by name: `{name, digest, media_type}`; bytes are in the files table. */
  files: { name: string; digest: string; size: number }[];
  updated_at: string;
  /** The last compile or publish problem, in words. */
  error?: string;
  /** `editing` until published; `published` until reopened with edit. */
  state: 'editing' | 'published';
}

export interface VersionRecord {
  automation_id: string;
  org_id: string;
  flow_digest: string;
  created_at: string;
  created_by: string;
}

export interface SecretRecord {
  org_id: string;
  name: string;
  /** `v1.<key id>.<iv>.<tag>.<ciphertext>` (src/service/secret-box.ts); never the value. */
  ciphertext: string;
  updated_at: string;
}

/** An automation offered as an MCP tool (AutomationStore.listMcpTools). */
export interface McpToolRow {
  id: string;
  name: string;
  task: string;
  live_digest: string;
}

export interface AutomationStore {
  /** FlowError `conflict` (field `name`) when the org has the name. */
  create(automation: AutomationRecord): Promise<void>;
  get(orgId: string, id: string): Promise<AutomationRecord | undefined>;
  getByName(orgId: string, name: string): Promise<AutomationRecord | undefined>;
  /** The org's starter example, if created. */
  getExample(orgId: string): Promise<AutomationRecord | undefined>;
  /** Oldest first. */
  list(orgId: string): Promise<AutomationRecord[]>;
  /**
   * The automations the hosted MCP endpoint offers as tools, oldest first: not a draft, with a live
   * digest, `mcp_enabled` true; only the fields a tool is made of (tools/list reads this on every
   * request, so it stays narrow: docs/mcp.md, "Hosted").
   */
  listMcpTools(orgId: string): Promise<McpToolRow[]>;
  /**
   * A digest of exactly what `listMcpTools(orgId)` would return now (fields and order): equal
   * digests mean equal lists. Cheaper than the list itself, so tools/list can keep the rows and ask
   * only this on every request.
   */
  mcpToolsFingerprint(orgId: string): Promise<string>;
  /** Change the given fields; returns the updated record, or undefined when not in the org. */
  update(
    orgId: string,
    id: string,
    patch: Partial<Pick<AutomationRecord, 'task' | 'site' | 'mcp_enabled' | 'status' | 'live_digest' | 'needs_attention' | 'failing_step'>>,
  ): Promise<AutomationRecord | undefined>;
}

export interface AuthoringStore {
  create(session: AuthoringRecord): Promise<void>;
  get(orgId: string, automationId: string): Promise<AuthoringRecord | undefined>;
  /** Replace the given fields; returns the updated record. */
  update(
    orgId: string,
    automationId: string,
    patch: Partial<Omit<AuthoringRecord, 'automation_id' | 'org_id' | 'error'>> & { error?: string | null },
  ): Promise<AuthoringRecord | undefined>;
  /**
   * Attach an upload file to a capture under `name` (replacing that name's earlier file). The bytes go
   * to the org's content-addressed files, by `digest` (the sha256 of the bytes, `sha256:<hex>`), where
   * they stay: a published version keeps reading them by digest after the name is reused.
   */
  putFile(orgId: string, automationId: string, file: { name: string; digest: string; bytes: Uint8Array }): Promise<void>;
  /** The file a capture holds under `name` now. */
  getFile(orgId: string, automationId: string, name: string): Promise<{ digest: string; bytes: Uint8Array } | undefined>;
  /** An upload file of the org by digest (what runs of its published versions read); never another org's. */
  fileByDigest(orgId: string, digest: string): Promise<Uint8Array | undefined>;
}

export interface VersionStore {
  /** Record a publish; publishing a digest the automation already had keeps its first row. */
  add(version: VersionRecord): Promise<void>;
  /** Newest first. */
  list(orgId: string, automationId: string): Promise<VersionRecord[]>;
  get(orgId: string, automationId: string, digest: string): Promise<VersionRecord | undefined>;
}

export interface SecretStoreRecords {
  /** Insert or replace. */
  put(secret: SecretRecord): Promise<void>;
  get(orgId: string, name: string): Promise<SecretRecord | undefined>;
  /** Names and times, sorted by name (ciphertexts included for re-encryption and leak checks). */
  list(orgId: string): Promise<SecretRecord[]>;
  /** True when it existed. */
  delete(orgId: string, name: string): Promise<boolean>;
}
