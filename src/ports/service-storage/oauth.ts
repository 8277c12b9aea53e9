/**
 * OAuth 2.1 for the hosted MCP endpoint (docs/mcp.md, "Hosted"; docs/hosted-api.md, "OAuth"): the
 * authorization server library's records (codes, tokens, clients, grants, interactions) and the
 * grants the service shows and revokes.
 */

/**
 * One record of the OAuth server library (oidc-provider's models: `AccessToken`, `RefreshToken`,
 * `AuthorizationCode`, `Client`, `Grant`, `Interaction`, `Session`, ...). The store never sees a raw
 * id: `key`, `uid`, `user_code` and `grant` are SHA-256 hashes the caller computed, so a database
 * read leaks no usable token. `payload` is the library's JSON without its id.
 */
export interface OAuthModelRecord {
  model: string;
  /** sha256 hex of the record's id. */
  key: string;
  payload: string;
  /** sha256 hex of the grant id the record belongs to (tokens and codes), for revocation. */
  grant?: string;
  /** sha256 hex of the session uid (sessions). */
  uid?: string;
  /** sha256 hex of the user code (device flow; unused here, kept for the library's contract). */
  user_code?: string;
  /** ISO time after which the record is gone. */
  expires_at: string;
  consumed_at?: string;
}

/** A grant a user gave an OAuth client: the same scope model as an API key (org, mode, automations). */
export interface OAuthGrantRecord {
  id: string;
  org_id: string;
  /** sha256 hex of the library's grant id (the tokens carry the raw one). */
  grant_hash: string;
  client_id: string;
  client_name: string;
  redirect_host: string;
  mode: 'live' | 'test';
  /** Scope allowlist of automation names; absent: every automation of the org. */
  automations?: string[];
  created_at: string;
  /** The user who gave it. */
  created_by: string;
  last_used_at?: string;
  revoked_at?: string;
}

export interface OAuthStore {
  /** Insert or replace the record of (model, key). */
  upsert(record: OAuthModelRecord): Promise<void>;
  /** The record unless absent or expired at `now`. */
  find(model: string, key: string, now: string): Promise<OAuthModelRecord | undefined>;
  findByUid(model: string, uid: string, now: string): Promise<OAuthModelRecord | undefined>;
  findByUserCode(model: string, userCode: string, now: string): Promise<OAuthModelRecord | undefined>;
  /** Mark the record consumed (a used authorization code, a rotated refresh token). */
  consume(model: string, key: string, at: string): Promise<void>;
  destroy(model: string, key: string): Promise<void>;
  /** Delete every record of the grant (its tokens and codes, of every model). */
  revokeByGrant(grant: string): Promise<void>;
  /**
   * Store `value` under `name` unless a value is there already; either way, the stored value (the
   * first writer's: processes starting together agree on one signing key).
   */
  putSecretOnce(name: string, value: string): Promise<string>;
  createGrant(grant: OAuthGrantRecord): Promise<void>;
  /** The grant by its library grant id hash, with no org filter (the /mcp check; the caller checks revocation). */
  grantByHash(grantHash: string): Promise<OAuthGrantRecord | undefined>;
  /** Every grant of the org, revoked ones included, newest first. */
  listGrants(orgId: string): Promise<OAuthGrantRecord[]>;
  /** True when a live grant of the org was revoked now. */
  revokeGrant(orgId: string, id: string, at: string): Promise<boolean>;
  /** Record a use, at most once a minute. */
  touchGrant(id: string, at: string): Promise<void>;
}
