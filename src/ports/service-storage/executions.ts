// Executions: one row per run the service dispatched.

/** How a run was dispatched: a gateway call run in the request (`sync`) or queued to a worker (`queue`), a schedule fire, an MCP tools/call. */
export type DispatchKind = 'sync' | 'queue' | 'schedule' | 'mcp';

/**
 * A row of the executions index (a run_ref): it references an engine run and never copies it; the
 * run and its journal are read from the engine on fetch.
 */
export interface ExecutionRecord {
  /** The run_ref id, distinct from the engine run id. */
  id: string;
  org_id: string;
  automation_id: string;
  /** The automation name at dispatch. */
  flow: string;
  run_id: string;
  flow_digest: string;
  dispatch: DispatchKind;
  /** The API key that called, for gateway and MCP dispatches. */
  key_id?: string;
  /** Copied from the engine run when it ends (for listing); the engine run is the source. */
  status: 'queued' | 'pending' | 'running' | 'succeeded' | 'failed' | 'canceled';
  created_at: string;
  finished_at?: string;
  /** The failing step's error code, when failed. */
  error_code?: string;
}

export interface ExecutionStore {
  create(execution: ExecutionRecord): Promise<void>;
  update(orgId: string, id: string, patch: Partial<Pick<ExecutionRecord, 'status' | 'finished_at' | 'error_code'>>): Promise<void>;
  /**
   * Record the terminal outcome once: true for the call that moved the row from a non-terminal status
   * to `patch.status`; false when it was already terminal (the row keeps its outcome) or not in the org.
   */
  finish(orgId: string, id: string, patch: { status: 'succeeded' | 'failed' | 'canceled'; finished_at?: string; error_code?: string }): Promise<boolean>;
  get(orgId: string, id: string): Promise<ExecutionRecord | undefined>;
  getByRunId(orgId: string, runId: string): Promise<ExecutionRecord | undefined>;
  /** Newest first (created_at, id); `before` is the (created_at, id) of the last row of the previous page. */
  list(orgId: string, query: { limit: number; before?: { created_at: string; id: string }; flow?: string }): Promise<ExecutionRecord[]>;
  /** Per automation of the org: runs since `since`, and the newest run's time. */
  usage(orgId: string, since: string): Promise<Map<string, { calls: number; last_run_at: string }>>;
  /**
   * Across every org, for the service's reconcile sweep: rows still `queued` or `running` created
   * before `createdBefore`, oldest first (created_at, id); `after` is the (created_at, id) of the
   * last row of the previous page.
   */
  listUnfinished(query: { createdBefore: string; limit: number; after?: { created_at: string; id: string } }): Promise<ExecutionRecord[]>;
}
