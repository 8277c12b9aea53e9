// The hosted service's accounts: users, orgs, members, sessions and API keys (see ../service-storage.ts for the port's rules).

/** A member's role in an org. */
export type Role = 'owner' | 'member';

export interface UserRecord {
  id: string;
  /** Lowercased, trimmed; unique. */
  email: string;
  /** PHC string (src/service/auth/passwords.ts). */
  password_hash: string;
  created_at: string;
}

export interface OrgRecord {
  id: string;
  name: string;
  created_at: string;
}

export interface MemberRecord {
  org_id: string;
  user_id: string;
  role: Role;
  created_at: string;
}

export interface SessionRecord {
  id: string;
  user_id: string;
  /** The active org of the session. */
  org_id: string;
  created_at: string;
  /** Absolute expiry (30 days after login); never extended. */
  expires_at: string;
  revoked_at?: string;
}

export interface ApiKeyRecord {
  id: string;
  org_id: string;
  name: string;
  mode: 'live' | 'test';
  /** Hex SHA-256 of the whole key; the plaintext is never stored. */
  hash: string;
  /** `svc_live_` plus the first 4 random characters, for display. */
  prefix: string;
  last4: string;
  /** Scope allowlist of automation names; absent: every automation of the org. */
  automations?: string[];
  created_at: string;
  created_by: string;
  last_used_at?: string;
  revoked_at?: string;
}

export interface UserStore {
  /** FlowError `conflict` (field `email`) when the email is taken. */
  create(user: UserRecord): Promise<void>;
  get(id: string): Promise<UserRecord | undefined>;
  getByEmail(email: string): Promise<UserRecord | undefined>;
  setPasswordHash(id: string, hash: string): Promise<void>;
}

export interface OrgStore {
  create(org: OrgRecord): Promise<void>;
  get(id: string): Promise<OrgRecord | undefined>;
}

export interface MemberStore {
  /** FlowError `conflict` (field `user_id`) when already a member. */
  add(member: MemberRecord): Promise<void>;
  get(orgId: string, userId: string): Promise<MemberRecord | undefined>;
  /** With each member's email, oldest first. */
  list(orgId: string): Promise<(MemberRecord & { email: string })[]>;
  /** Orgs of a user with their names and the user's role, oldest membership first. */
  orgsOf(userId: string): Promise<{ org: OrgRecord; role: Role }[]>;
  /**
   * Change a role or remove a member, refusing (FlowError `last_owner`) when the org would keep no
   * owner. The check and the write are atomic: two concurrent demotions of the last two owners
   * cannot both succeed. Returns the updated member, or undefined when not a member.
   */
  setRole(orgId: string, userId: string, role: Role): Promise<MemberRecord | undefined>;
  /** True when removed; FlowError `last_owner` as for setRole. */
  remove(orgId: string, userId: string): Promise<boolean>;
}

/** A session with what every authenticated request needs, read in one round trip. */
export interface SessionLookup {
  session: SessionRecord;
  user: { id: string; email: string };
  org: OrgRecord;
  /** The user's role in the session's org; undefined when no longer a member. */
  role?: Role;
  /** Every org of the user with their role, oldest membership first. */
  orgs: { org: OrgRecord; role: Role }[];
}

export interface SessionStore {
  create(session: SessionRecord): Promise<void>;
  get(id: string): Promise<SessionRecord | undefined>;
  /** The session, its user, its active org and the user's role there (one query). */
  lookup(id: string): Promise<SessionLookup | undefined>;
  setOrg(id: string, orgId: string): Promise<void>;
  revoke(id: string, at: string): Promise<void>;
  /** Revoke every live session of a user whose active org is `orgId` (member removed). */
  revokeForMember(orgId: string, userId: string, at: string): Promise<number>;
}

export interface ApiKeyStore {
  /** FlowError `conflict` (field `hash`) when the hash exists (a key minted twice). */
  create(key: ApiKeyRecord): Promise<void>;
  getByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  /** The key by hash with its org, in one read (the bearer check of every gateway and MCP request). */
  getWithOrgByHash(hash: string): Promise<{ key: ApiKeyRecord; org: OrgRecord } | undefined>;
  /** Every key of the org, revoked ones included, newest first. */
  list(orgId: string): Promise<ApiKeyRecord[]>;
  /** True when a live key of the org was revoked now. */
  revoke(orgId: string, id: string, at: string): Promise<boolean>;
  /** Record a use; adapters may skip the write when the stored value is recent (see `touchAfterMs`). */
  touch(id: string, at: string): Promise<void>;
}
