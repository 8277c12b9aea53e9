import { CompiledQuery, sql, type Kysely, type Transaction } from 'kysely';
import { FlowError, isFlowError, prefixed } from '../../../src/errors.js';
import type {
  ApiKeyRecord,
  AuditRecord,
  AuthoringRecord,
  AutomationRecord,
  ExecutionRecord,
  MemberRecord,
  OrgRecord,
  Role,
  ServiceStorage,
  ServiceStores,
  SecretRecord,
  SessionRecord,
  UserRecord,
  VersionRecord,
} from '../../../src/ports/service-storage.js';
import { auditDigest } from '../../../src/service/audit-chain.js';
import { constraintOf, errorCode, isConnectionError } from '../sql-errors.js';
import type { SqlStorage } from '../sql-storage.js';
import { isoText, jsonb, jsonbOrNull, jsonText, parseJson, timestamptz, timestamptzOrNull } from '../sql-values.js';
import { migrateService, schemaOf, serviceSchemaCurrent } from './service-migrations.js';
import { sqlRateLimitStore, sqlScheduleStore } from './sql-schedules.js';
import { sqlWebhookStore } from './sql-webhooks.js';

/**
 * The hosted service's storage on the engine's SQL storage (same connection, same schema, its own
 * tables and migration set). One transaction per `transaction(fn)`; on PGlite, kysely serialises
 * every query on the single connection, so a transaction holds it until it ends.
 */

export interface SqlServiceStorageOptions {
  /** Skip the `last_used_at` write when the stored value is younger than this. Default 60 000 ms. */
  touchAfterMs?: number;
}

type Db = Kysely<any> | Transaction<any>;

const COMPONENT = 'storage-sql';

function conflict(err: unknown, field: string): never {
  throw new FlowError('conflict', prefixed(COMPONENT, `${field} already exists`), { data: { field }, cause: err });
}

const isUniqueViolation = (err: unknown) => errorCode(err) === '23505';

function wrap(op: string, err: unknown): never {
  if (isFlowError(err)) throw err;
  // No usable connection (the database restarting, unreachable): the engine storage's code for it.
  if (isConnectionError(err)) throw new FlowError('db_unreachable', prefixed(COMPONENT, `${op}: cannot reach the database: ${(err as Error)?.message || errorCode(err) || String(err)}`), { data: { sqlstate: errorCode(err) }, cause: err });
  throw new FlowError('db_error', prefixed(COMPONENT, `${op} failed: ${(err as Error)?.message ?? String(err)}`), { cause: err });
}

async function guard<T>(init: () => Promise<void>, op: string, fn: () => Promise<T>): Promise<T> {
  await init();
  try {
    return await fn();
  } catch (err) {
    wrap(op, err);
  }
}

interface SessionRow {
  id: string;
  user_id: string;
  org_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

interface KeyRow {
  id: string;
  org_id: string;
  name: string;
  mode: string;
  hash: string;
  prefix: string;
  last4: string;
  automations: string | null;
  created_at: string;
  created_by: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

interface AuditRow {
  id: string;
  org_id: string;
  seq: number;
  actor: string;
  target: string;
  at: string;
  metadata: string;
  prev: string | null;
  digest: string;
}

const toSession = (r: SessionRow): SessionRecord => ({
  id: r.id,
  user_id: r.user_id,
  org_id: r.org_id,
  created_at: r.created_at,
  expires_at: r.expires_at,
  ...(r.revoked_at ? { revoked_at: r.revoked_at } : {}),
});

const toKey = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  org_id: r.org_id,
  name: r.name,
  mode: r.mode as ApiKeyRecord['mode'],
  hash: r.hash,
  prefix: r.prefix,
  last4: r.last4,
  ...(r.automations !== null ? { automations: parseJson(r.automations) as string[] } : {}),
  created_at: r.created_at,
  created_by: r.created_by,
  ...(r.last_used_at ? { last_used_at: r.last_used_at } : {}),
  ...(r.revoked_at ? { revoked_at: r.revoked_at } : {}),
});

const toAudit = (r: AuditRow): AuditRecord => ({
  id: r.id,
  org_id: r.org_id,
  seq: Number(r.seq),
  actor: r.actor,
  target: r.target,
  at: r.at,
  metadata: parseJson(r.metadata) as Record<string, unknown>,
  prev: r.prev,
  digest: r.digest,
});

interface AutomationRow {
  id: string;
  org_id: string;
  name: string;
  task: string;
  site: string;
  mcp_enabled: boolean;
  created_at: string;
  status: string;
  live_digest: string | null;
  needs_attention: boolean;
  failing_step: string | null;
  example: boolean;
  params: string;
}

const toAutomation = (r: AutomationRow): AutomationRecord => ({
  id: r.id,
  org_id: r.org_id,
  name: r.name,
  task: r.task,
  site: r.site,
  mcp_enabled: r.mcp_enabled,
  created_at: r.created_at,
  status: r.status as AutomationRecord['status'],
  ...(r.live_digest !== null ? { live_digest: r.live_digest } : {}),
  needs_attention: r.needs_attention,
  ...(r.failing_step !== null ? { failing_step: r.failing_step } : {}),
  example: r.example,
  params: parseJson(r.params) as unknown[],
});

interface AuthoringRow {
  automation_id: string;
  org_id: string;
  captured_ops: string;
  input_params: string;
  input_slots: string;
  secret_slots: string;
  files: string;
  updated_at: string;
  error: string | null;
  state: string;
}

const toAuthoring = (r: AuthoringRow): AuthoringRecord => ({
  automation_id: r.automation_id,
  org_id: r.org_id,
  captured_ops: parseJson(r.captured_ops) as unknown[],
  input_params: parseJson(r.input_params) as AuthoringRecord['input_params'],
  input_slots: parseJson(r.input_slots) as string[],
  secret_slots: parseJson(r.secret_slots) as string[],
  files: parseJson(r.files) as AuthoringRecord['files'],
  updated_at: r.updated_at,
  ...(r.error !== null ? { error: r.error } : {}),
  state: r.state as AuthoringRecord['state'],
});

interface ExecutionRow {
  id: string;
  org_id: string;
  automation_id: string;
  flow: string;
  run_id: string;
  flow_digest: string;
  dispatch: string;
  key_id: string | null;
  status: string;
  created_at: string;
  finished_at: string | null;
  error_code: string | null;
}

const toExecution = (r: ExecutionRow): ExecutionRecord => ({
  id: r.id,
  org_id: r.org_id,
  automation_id: r.automation_id,
  flow: r.flow,
  run_id: r.run_id,
  flow_digest: r.flow_digest,
  dispatch: r.dispatch as ExecutionRecord['dispatch'],
  ...(r.key_id !== null ? { key_id: r.key_id } : {}),
  status: r.status as ExecutionRecord['status'],
  created_at: r.created_at,
  ...(r.finished_at !== null ? { finished_at: r.finished_at } : {}),
  ...(r.error_code !== null ? { error_code: r.error_code } : {}),
});

/** The stores over `db` (the storage's Kysely, or one transaction of it). */
function stores(db: Db, run: <T>(op: string, fn: () => Promise<T>) => Promise<T>, options: Required<SqlServiceStorageOptions>): ServiceStores {
  const schema = schemaOf(db as Kysely<any>);
  const lookupFn = schema === undefined ? sql.id('svc_session_lookup') : sql.id(schema, 'svc_session_lookup');
  const users = () => db.selectFrom('svc_users').select(['id', 'email', 'password_hash', isoText('created_at', 'created_at')]);
  const orgs = () => db.selectFrom('svc_orgs').select(['id', 'name', isoText('created_at', 'created_at')]);
  const sessions = () =>
    db
      .selectFrom('svc_sessions')
      .select(['id', 'user_id', 'org_id', isoText('created_at', 'created_at'), isoText('expires_at', 'expires_at'), isoText('revoked_at', 'revoked_at')]);
  const keys = () =>
    db
      .selectFrom('svc_api_keys')
      .select([
        'id',
        'org_id',
        'name',
        'mode',
        'hash',
        'prefix',
        'last4',
        jsonText('automations', 'automations'),
        isoText('created_at', 'created_at'),
        'created_by',
        isoText('last_used_at', 'last_used_at'),
        isoText('revoked_at', 'revoked_at'),
      ]);
  const audits = () =>
    db
      .selectFrom('svc_audit')
      .select(['id', 'org_id', 'seq', 'actor', 'target', isoText('at', 'at'), jsonText('metadata', 'metadata'), 'prev', 'digest']);

  const automations = () =>
    db
      .selectFrom('svc_automations')
      .select([
        'id',
        'org_id',
        'name',
        'task',
        'site',
        'mcp_enabled',
        isoText('created_at', 'created_at'),
        'status',
        'live_digest',
        'needs_attention',
        'failing_step',
        'example',
        jsonText('params', 'params'),
      ]);
  const authorings = () =>
    db
      .selectFrom('svc_authoring')
      .select([
        'automation_id',
        'org_id',
        jsonText('captured_ops', 'captured_ops'),
        jsonText('input_params', 'input_params'),
        jsonText('input_slots', 'input_slots'),
        jsonText('secret_slots', 'secret_slots'),
        jsonText('files', 'files'),
        isoText('updated_at', 'updated_at'),
        'error',
        'state',
      ]);
  const versions = () =>
    db.selectFrom('svc_versions').select(['automation_id', 'org_id', 'flow_digest', isoText('created_at', 'created_at'), 'created_by']);
  const executions = () =>
    db
      .selectFrom('svc_executions')
      .select(['id', 'org_id', 'automation_id', 'flow', 'run_id', 'flow_digest', 'dispatch', 'key_id', 'status', isoText('created_at', 'created_at'), isoText('finished_at', 'finished_at'), 'error_code']);
  const secrets = () => db.selectFrom('svc_secrets').select(['org_id', 'name', 'ciphertext', isoText('updated_at', 'updated_at')]);

  /**
   * Owners of an org, locked (`for update`) so that a concurrent demotion or removal waits for this
   * transaction: the last-owner check and its write are atomic on Postgres; PGlite has one connection.
   */
  const lockedOwners = async (tx: Db, orgId: string): Promise<string[]> => {
    // Lock the org row first: every owner change of the org queues behind it, whatever member it touches.
    await tx.selectFrom('svc_orgs').select('id').where('id', '=', orgId).forUpdate().execute();
    const rows = await tx.selectFrom('svc_members').select('user_id').where('org_id', '=', orgId).where('role', '=', 'owner').execute();
    return rows.map((r) => r.user_id as string);
  };

  const inTx = <T>(fn: (tx: Db) => Promise<T>): Promise<T> =>
    // A store already bound to a transaction runs in it; otherwise open one for this call.
    (db as Transaction<any>).isTransaction ? fn(db) : (db as Kysely<any>).transaction().execute(fn);

  const lastOwnerError = () =>
    new FlowError('last_owner', prefixed(COMPONENT, 'an org must keep at least one owner'), { data: { rule: 'last_owner' } });

  return {
    users: {
      create: (u: UserRecord) =>
        run('users.create', async () => {
          try {
            await db
              .insertInto('svc_users')
              .values({ id: u.id, email: u.email, password_hash: u.password_hash, created_at: timestamptz('created_at', u.created_at) })
              .execute();
          } catch (err) {
            if (isUniqueViolation(err)) conflict(err, constraintOf(err)?.includes('email') ? 'email' : 'id');
            throw err;
          }
        }),
      get: (id) => run('users.get', async () => (await users().where('id', '=', id).executeTakeFirst()) as UserRecord | undefined),
      getByEmail: (email) => run('users.getByEmail', async () => (await users().where('email', '=', email).executeTakeFirst()) as UserRecord | undefined),
      setPasswordHash: (id, hash) =>
        run('users.setPasswordHash', async () => {
          await db.updateTable('svc_users').set({ password_hash: hash }).where('id', '=', id).execute();
        }),
    },
    orgs: {
      create: (o: OrgRecord) =>
        run('orgs.create', async () => {
          try {
            await db.insertInto('svc_orgs').values({ id: o.id, name: o.name, created_at: timestamptz('created_at', o.created_at) }).execute();
          } catch (err) {
            if (isUniqueViolation(err)) conflict(err, 'id');
            throw err;
          }
        }),
      get: (id) => run('orgs.get', async () => (await orgs().where('id', '=', id).executeTakeFirst()) as OrgRecord | undefined),
    },
    members: {
      add: (m: MemberRecord) =>
        run('members.add', async () => {
          try {
            await db
              .insertInto('svc_members')
              .values({ org_id: m.org_id, user_id: m.user_id, role: m.role, created_at: timestamptz('created_at', m.created_at) })
              .execute();
          } catch (err) {
            if (isUniqueViolation(err)) conflict(err, 'user_id');
            throw err;
          }
        }),
      get: (orgId, userId) =>
        run('members.get', async () => {
          const row = await db
            .selectFrom('svc_members')
            .select(['org_id', 'user_id', 'role', isoText('created_at', 'created_at')])
            .where('org_id', '=', orgId)
            .where('user_id', '=', userId)
            .executeTakeFirst();
          return row as MemberRecord | undefined;
        }),
      list: (orgId) =>
        run('members.list', async () => {
          const rows = await db
            .selectFrom('svc_members as m')
            .innerJoin('svc_users as u', 'u.id', 'm.user_id')
            .select(['m.org_id as org_id', 'm.user_id as user_id', 'm.role as role', 'u.email as email', isoText('m.created_at', 'created_at')])
            .where('m.org_id', '=', orgId)
            .orderBy('m.created_at')
            .orderBy('m.user_id')
            .execute();
          return rows as (MemberRecord & { email: string })[];
        }),
      orgsOf: (userId) =>
        run('members.orgsOf', async () => {
          const rows = await db
            .selectFrom('svc_members as m')
            .innerJoin('svc_orgs as o', 'o.id', 'm.org_id')
            .select(['o.id as id', 'o.name as name', isoText('o.created_at', 'created_at'), 'm.role as role'])
            .where('m.user_id', '=', userId)
            .orderBy('m.created_at')
            .orderBy('o.id')
            .execute();
          return rows.map((r) => ({ org: { id: r.id as string, name: r.name as string, created_at: r.created_at as string }, role: r.role as Role }));
        }),
      setRole: (orgId, userId, role) =>
        run('members.setRole', () =>
          inTx(async (tx) => {
            const owners = await lockedOwners(tx, orgId);
            const current = await tx
              .selectFrom('svc_members')
              .select(['org_id', 'user_id', 'role', isoText('created_at', 'created_at')])
              .where('org_id', '=', orgId)
              .where('user_id', '=', userId)
              .executeTakeFirst();
            if (!current) return undefined;
            if (current.role === 'owner' && role !== 'owner' && owners.length <= 1) throw lastOwnerError();
            await tx.updateTable('svc_members').set({ role }).where('org_id', '=', orgId).where('user_id', '=', userId).execute();
            return { ...(current as MemberRecord), role };
          }),
        ),
      remove: (orgId, userId) =>
        run('members.remove', () =>
          inTx(async (tx) => {
            const owners = await lockedOwners(tx, orgId);
            if (owners.includes(userId) && owners.length <= 1) throw lastOwnerError();
            const res = await tx.deleteFrom('svc_members').where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();
            return Number(res.numDeletedRows) > 0;
          }),
        ),
    },
    sessions: {
      create: (s: SessionRecord) =>
        run('sessions.create', async () => {
          await db
            .insertInto('svc_sessions')
            .values({
              id: s.id,
              user_id: s.user_id,
              org_id: s.org_id,
              created_at: timestamptz('created_at', s.created_at),
              expires_at: timestamptz('expires_at', s.expires_at),
              revoked_at: timestamptzOrNull('revoked_at', s.revoked_at),
            })
            .execute();
        }),
      get: (id) =>
        run('sessions.get', async () => {
          const row = await sessions().where('id', '=', id).executeTakeFirst();
          return row ? toSession(row as SessionRow) : undefined;
        }),
      lookup: (id) =>
        run('sessions.lookup', async () => {
          // One round trip: the session, its user and active org, and every membership of the user,
          // through a function whose plan the connection keeps (migration 0004_session_lookup).
          type Row = SessionRow & { email: string; org_name: string; org_created_at: string; role: Role | null; m_org_id: string | null; m_org_name: string; m_org_created_at: string };
          const { rows } = await sql<Row>`select * from ${lookupFn}(${id})`.execute(db);
          if (rows.length === 0) return undefined;
          const first = rows[0]!;
          const orgs = rows
            .filter((r) => r.m_org_id !== null && r.role !== null)
            .map((r) => ({ org: { id: r.m_org_id!, name: r.m_org_name, created_at: r.m_org_created_at }, role: r.role! }));
          const role = orgs.find((o) => o.org.id === first.org_id)?.role;
          return {
            session: toSession(first),
            user: { id: first.user_id, email: first.email },
            org: { id: first.org_id, name: first.org_name, created_at: first.org_created_at },
            ...(role ? { role } : {}),
            orgs,
          };
        }),
      setOrg: (id, orgId) =>
        run('sessions.setOrg', async () => {
          await db.updateTable('svc_sessions').set({ org_id: orgId }).where('id', '=', id).execute();
        }),
      revoke: (id, at) =>
        run('sessions.revoke', async () => {
          await db.updateTable('svc_sessions').set({ revoked_at: timestamptz('revoked_at', at) }).where('id', '=', id).where('revoked_at', 'is', null).execute();
        }),
      revokeForMember: (orgId, userId, at) =>
        run('sessions.revokeForMember', async () => {
          const res = await db
            .updateTable('svc_sessions')
            .set({ revoked_at: timestamptz('revoked_at', at) })
            .where('org_id', '=', orgId)
            .where('user_id', '=', userId)
            .where('revoked_at', 'is', null)
            .executeTakeFirst();
          return Number(res.numUpdatedRows);
        }),
    },
    apiKeys: {
      create: (k: ApiKeyRecord) =>
        run('apiKeys.create', async () => {
          try {
            await db
              .insertInto('svc_api_keys')
              .values({
                id: k.id,
                org_id: k.org_id,
                name: k.name,
                mode: k.mode,
                hash: k.hash,
                prefix: k.prefix,
                last4: k.last4,
                automations: jsonbOrNull(k.automations),
                created_at: timestamptz('created_at', k.created_at),
                created_by: k.created_by,
                last_used_at: timestamptzOrNull('last_used_at', k.last_used_at),
                revoked_at: timestamptzOrNull('revoked_at', k.revoked_at),
              })
              .execute();
          } catch (err) {
            if (isUniqueViolation(err)) conflict(err, constraintOf(err)?.includes('hash') ? 'hash' : 'id');
            throw err;
          }
        }),
      getByHash: (hash) =>
        run('apiKeys.getByHash', async () => {
          const row = await keys().where('hash', '=', hash).executeTakeFirst();
          return row ? toKey(row as KeyRow) : undefined;
        }),
      getWithOrgByHash: (hash) =>
        run('apiKeys.getWithOrgByHash', async () => {
          const row = await db
            .selectFrom('svc_api_keys as k')
            .innerJoin('svc_orgs as o', 'o.id', 'k.org_id')
            .select([
              'k.id as id',
              'k.org_id as org_id',
              'k.name as name',
              'k.mode as mode',
              'k.hash as hash',
              'k.prefix as prefix',
              'k.last4 as last4',
              jsonText('k.automations', 'automations'),
              isoText('k.created_at', 'created_at'),
              'k.created_by as created_by',
              isoText('k.last_used_at', 'last_used_at'),
              isoText('k.revoked_at', 'revoked_at'),
              'o.name as org_name',
              isoText('o.created_at', 'org_created_at'),
            ])
            .where('k.hash', '=', hash)
            .executeTakeFirst();
          if (!row) return undefined;
          const r = row as KeyRow & { org_name: string; org_created_at: string };
          return { key: toKey(r), org: { id: r.org_id, name: r.org_name, created_at: r.org_created_at } };
        }),
      list: (orgId) =>
        run('apiKeys.list', async () => {
          const rows = await keys().where('org_id', '=', orgId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
          return rows.map((r) => toKey(r as KeyRow));
        }),
      revoke: (orgId, id, at) =>
        run('apiKeys.revoke', async () => {
          const res = await db
            .updateTable('svc_api_keys')
            .set({ revoked_at: timestamptz('revoked_at', at) })
            .where('org_id', '=', orgId)
            .where('id', '=', id)
            .where('revoked_at', 'is', null)
            .executeTakeFirst();
          return Number(res.numUpdatedRows) > 0;
        }),
      touch: (id, at) =>
        run('apiKeys.touch', async () => {
          const cutoff = new Date(new Date(at).getTime() - options.touchAfterMs).toISOString();
          await db
            .updateTable('svc_api_keys')
            .set({ last_used_at: timestamptz('last_used_at', at) })
            .where('id', '=', id)
            .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', timestamptz('cutoff', cutoff))]))
            .execute();
        }),
    },
    audit: {
      append: (entry) =>
        run('audit.append', () =>
          inTx(async (tx) => {
            // Lock the org row: appends of one org are serialised, so the chain never forks.
            await tx.selectFrom('svc_orgs').select('id').where('id', '=', entry.org_id).forUpdate().execute();
            const last = await tx
              .selectFrom('svc_audit')
              .select(['seq', 'digest'])
              .where('org_id', '=', entry.org_id)
              .orderBy('seq', 'desc')
              .limit(1)
              .executeTakeFirst();
            const seq = last ? Number(last.seq) + 1 : 0;
            const prev = last ? (last.digest as string) : null;
            const body = { ...entry, seq, prev };
            const record: AuditRecord = { ...body, digest: auditDigest(body) };
            await tx
              .insertInto('svc_audit')
              .values({
                id: record.id,
                org_id: record.org_id,
                seq,
                actor: record.actor,
                target: record.target,
                at: timestamptz('at', record.at),
                metadata: jsonb(record.metadata),
                prev,
                digest: record.digest,
              })
              .execute();
            return record;
          }),
        ),
      page: (orgId, { limit, beforeSeq }) =>
        run('audit.page', async () => {
          let q = audits().where('org_id', '=', orgId);
          if (beforeSeq !== undefined) q = q.where('seq', '<', beforeSeq);
          const rows = await q.orderBy('seq', 'desc').limit(limit + 1).execute();
          const entries = rows.slice(0, limit).map((r) => toAudit(r as AuditRow));
          return rows.length > limit ? { entries, nextBeforeSeq: entries[entries.length - 1]!.seq } : { entries };
        }),
      all: (orgId) =>
        run('audit.all', async () => {
          const rows = await audits().where('org_id', '=', orgId).orderBy('seq').execute();
          return rows.map((r) => toAudit(r as AuditRow));
        }),
    },
    automations: {
      create: (a: AutomationRecord) =>
        run('automations.create', async () => {
          try {
            await db
              .insertInto('svc_automations')
              .values({
                id: a.id,
                org_id: a.org_id,
                name: a.name,
                task: a.task,
                site: a.site,
                mcp_enabled: a.mcp_enabled,
                created_at: timestamptz('created_at', a.created_at),
                status: a.status,
                live_digest: a.live_digest ?? null,
                needs_attention: a.needs_attention,
                failing_step: a.failing_step ?? null,
                example: a.example,
                params: jsonb(a.params),
              })
              .execute();
          } catch (err) {
            if (isUniqueViolation(err)) conflict(err, constraintOf(err)?.includes('example') ? 'example' : constraintOf(err)?.includes('name') ? 'name' : 'id');
            throw err;
          }
        }),
      get: (orgId, id) =>
        run('automations.get', async () => {
          const row = await automations().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
          return row ? toAutomation(row as AutomationRow) : undefined;
        }),
      getByName: (orgId, name) =>
        run('automations.getByName', async () => {
          const row = await automations().where('org_id', '=', orgId).where('name', '=', name).executeTakeFirst();
          return row ? toAutomation(row as AutomationRow) : undefined;
        }),
      getExample: (orgId) =>
        run('automations.getExample', async () => {
          const row = await automations().where('org_id', '=', orgId).where('example', '=', true).executeTakeFirst();
          return row ? toAutomation(row as AutomationRow) : undefined;
        }),
      list: (orgId) =>
        run('automations.list', async () => {
          const rows = await automations().where('org_id', '=', orgId).orderBy('created_at').orderBy('name').execute();
          return rows.map((r) => toAutomation(r as AutomationRow));
        }),
      listMcpTools: (orgId) =>
        run('automations.listMcpTools', async () => {
          const rows = await db
            .selectFrom('svc_automations')
            .select(['id', 'name', 'task', 'live_digest'])
            .where('org_id', '=', orgId)
            .where('status', '<>', 'draft')
            .where('live_digest', 'is not', null)
            .where('mcp_enabled', '=', true)
            .orderBy('created_at')
            .orderBy('name')
            .execute();
          return rows as { id: string; name: string; task: string; live_digest: string }[];
        }),
      mcpToolsFingerprint: (orgId) =>
        run('automations.mcpToolsFingerprint', async () => {
          // The rows of listMcpTools, in its order, each field length-prefixed (so no text can make two
          // lists concatenate alike), hashed in the database: one short row instead of the list.
          const field = (col: string) => `length(${col})::text || ':' || ${col}`;
          const row = sql.raw(
            `${field('id')} || ${field('name')} || (case when task is null then 'N' else 'S' || ${field('task')} end) || ${field('live_digest')}`,
          );
          const { rows } = await sql<{ fp: string }>`
            select encode(sha256(convert_to(coalesce(string_agg(${row}, ';' order by created_at, name), ''), 'UTF8')), 'hex') || '/' || count(*)::text as fp
              from ${schema === undefined ? sql.id('svc_automations') : sql.id(schema, 'svc_automations')}
             where org_id = ${orgId} and status <> 'draft' and live_digest is not null and mcp_enabled = true`.execute(db);
          return rows[0]!.fp;
        }),
      update: (orgId, id, patch) =>
        run('automations.update', async () => {
          const set: Record<string, unknown> = {};
          if (patch.task !== undefined) set.task = patch.task;
          if (patch.site !== undefined) set.site = patch.site;
          if (patch.mcp_enabled !== undefined) set.mcp_enabled = patch.mcp_enabled;
          if (patch.status !== undefined) set.status = patch.status;
          if ('live_digest' in patch) set.live_digest = patch.live_digest ?? null;
          if (patch.needs_attention !== undefined) set.needs_attention = patch.needs_attention;
          if ('failing_step' in patch) set.failing_step = patch.failing_step ?? null;
          if (Object.keys(set).length > 0) await db.updateTable('svc_automations').set(set).where('org_id', '=', orgId).where('id', '=', id).execute();
          const row = await automations().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
          return row ? toAutomation(row as AutomationRow) : undefined;
        }),
    },
    authoring: {
      create: (a: AuthoringRecord) =>
        run('authoring.create', async () => {
          await db
            .insertInto('svc_authoring')
            .values({
              automation_id: a.automation_id,
              org_id: a.org_id,
              captured_ops: jsonb(a.captured_ops),
              input_params: jsonb(a.input_params),
              input_slots: jsonb(a.input_slots),
              secret_slots: jsonb(a.secret_slots),
              files: jsonb(a.files),
              updated_at: timestamptz('updated_at', a.updated_at),
              error: a.error ?? null,
              state: a.state,
            })
            .execute();
        }),
      get: (orgId, automationId) =>
        run('authoring.get', async () => {
          const row = await authorings().where('org_id', '=', orgId).where('automation_id', '=', automationId).executeTakeFirst();
          return row ? toAuthoring(row as AuthoringRow) : undefined;
        }),
      update: (orgId, automationId, patch) =>
        run('authoring.update', async () => {
          const set: Record<string, unknown> = {};
          for (const key of ['captured_ops', 'input_params', 'input_slots', 'secret_slots', 'files'] as const) {
            if (patch[key] !== undefined) set[key] = jsonb(patch[key]);
          }
          if (patch.updated_at !== undefined) set.updated_at = timestamptz('updated_at', patch.updated_at);
          if ('error' in patch) set.error = patch.error ?? null;
          if (patch.state !== undefined) set.state = patch.state;
          if (Object.keys(set).length > 0) {
            await db.updateTable('svc_authoring').set(set).where('org_id', '=', orgId).where('automation_id', '=', automationId).execute();
          }
          const row = await authorings().where('org_id', '=', orgId).where('automation_id', '=', automationId).executeTakeFirst();
          return row ? toAuthoring(row as AuthoringRow) : undefined;
        }),
      putFile: (orgId, automationId, file) =>
        run('authoring.putFile', async () => {
          await inTx(async (tx) => {
            await tx
              .insertInto('svc_files')
              .values({ org_id: orgId, digest: file.digest, bytes: bytesIn(file.bytes) })
              .onConflict((oc) => oc.columns(['org_id', 'digest']).doNothing())
              .execute();
            await tx
              .insertInto('svc_authoring_files')
              .values({ automation_id: automationId, org_id: orgId, name: file.name, digest: file.digest })
              .onConflict((oc) => oc.columns(['automation_id', 'name']).doUpdateSet({ digest: file.digest }))
              .execute();
          });
        }),
      getFile: (orgId, automationId, name) =>
        run('authoring.getFile', async () => {
          const row = await db
            .selectFrom('svc_authoring_files as a')
            .innerJoin('svc_files as f', (j) => j.onRef('f.org_id', '=', 'a.org_id').onRef('f.digest', '=', 'a.digest'))
            .select(['a.digest', bytesOut('f.bytes')])
            .where('a.org_id', '=', orgId)
            .where('a.automation_id', '=', automationId)
            .where('a.name', '=', name)
            .executeTakeFirst();
          return row ? { digest: row.digest as string, bytes: fromBase64(row.b64 as string) } : undefined;
        }),
      fileByDigest: (orgId, digest) =>
        run('authoring.fileByDigest', async () => {
          const row = await db.selectFrom('svc_files').select([bytesOut('bytes')]).where('org_id', '=', orgId).where('digest', '=', digest).executeTakeFirst();
          return row ? fromBase64(row.b64 as string) : undefined;
        }),
    },
    versions: {
      add: (v: VersionRecord) =>
        run('versions.add', async () => {
          await db
            .insertInto('svc_versions')
            .values({ automation_id: v.automation_id, org_id: v.org_id, flow_digest: v.flow_digest, created_at: timestamptz('created_at', v.created_at), created_by: v.created_by })
            .onConflict((oc) => oc.columns(['automation_id', 'flow_digest']).doNothing())
            .execute();
        }),
      list: (orgId, automationId) =>
        run('versions.list', async () => {
          const rows = await versions().where('org_id', '=', orgId).where('automation_id', '=', automationId).orderBy('created_at', 'desc').orderBy('flow_digest', 'desc').execute();
          return rows as VersionRecord[];
        }),
      get: (orgId, automationId, digest) =>
        run('versions.get', async () => {
          const row = await versions().where('org_id', '=', orgId).where('automation_id', '=', automationId).where('flow_digest', '=', digest).executeTakeFirst();
          return row as VersionRecord | undefined;
        }),
    },
    secrets: {
      put: (sec: SecretRecord) =>
        run('secrets.put', async () => {
          await db
            .insertInto('svc_secrets')
            .values({ org_id: sec.org_id, name: sec.name, ciphertext: sec.ciphertext, updated_at: timestamptz('updated_at', sec.updated_at) })
            .onConflict((oc) => oc.columns(['org_id', 'name']).doUpdateSet({ ciphertext: sec.ciphertext, updated_at: timestamptz('updated_at', sec.updated_at) }))
            .execute();
        }),
      get: (orgId, name) =>
        run('secrets.get', async () => (await secrets().where('org_id', '=', orgId).where('name', '=', name).executeTakeFirst()) as SecretRecord | undefined),
      list: (orgId) => run('secrets.list', async () => (await secrets().where('org_id', '=', orgId).orderBy('name').execute()) as SecretRecord[]),
      delete: (orgId, name) =>
        run('secrets.delete', async () => {
          const res = await db.deleteFrom('svc_secrets').where('org_id', '=', orgId).where('name', '=', name).executeTakeFirst();
          return Number(res.numDeletedRows) > 0;
        }),
    },
    executions: {
      create: (e: ExecutionRecord) =>
        run('executions.create', async () => {
          await db
            .insertInto('svc_executions')
            .values({
              id: e.id,
              org_id: e.org_id,
              automation_id: e.automation_id,
              flow: e.flow,
              run_id: e.run_id,
              flow_digest: e.flow_digest,
              dispatch: e.dispatch,
              key_id: e.key_id ?? null,
              status: e.status,
              created_at: timestamptz('created_at', e.created_at),
              finished_at: timestamptzOrNull('finished_at', e.finished_at),
              error_code: e.error_code ?? null,
            })
            .execute();
        }),
      update: (orgId, id, patch) =>
        run('executions.update', async () => {
          const set: Record<string, unknown> = {};
          if (patch.status !== undefined) set.status = patch.status;
          if (patch.finished_at !== undefined) set.finished_at = timestamptz('finished_at', patch.finished_at);
          if (patch.error_code !== undefined) set.error_code = patch.error_code;
          if (Object.keys(set).length > 0) await db.updateTable('svc_executions').set(set).where('org_id', '=', orgId).where('id', '=', id).execute();
        }),
      finish: (orgId, id, patch) =>
        run('executions.finish', async () => {
          const res = await db
            .updateTable('svc_executions')
            .set({
              status: patch.status,
              finished_at: patch.finished_at === undefined ? null : timestamptz('finished_at', patch.finished_at),
              error_code: patch.error_code ?? null,
            })
            .where('org_id', '=', orgId)
            .where('id', '=', id)
            .where('status', 'not in', ['succeeded', 'failed', 'canceled'])
            .executeTakeFirst();
          return Number(res.numUpdatedRows) === 1;
        }),
      get: (orgId, id) =>
        run('executions.get', async () => {
          const row = await executions().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
          return row ? toExecution(row as ExecutionRow) : undefined;
        }),
      getByRunId: (orgId, runId) =>
        run('executions.getByRunId', async () => {
          const row = await executions().where('org_id', '=', orgId).where('run_id', '=', runId).executeTakeFirst();
          return row ? toExecution(row as ExecutionRow) : undefined;
        }),
      list: (orgId, query) =>
        run('executions.list', async () => {
          let q = executions().where('org_id', '=', orgId);
          if (query.flow !== undefined) q = q.where('flow', '=', query.flow);
          if (query.before) {
            const b = query.before;
            const at = timestamptz('cursor', b.created_at);
            q = q.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', b.id)])]));
          }
          const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
          return rows.map((r) => toExecution(r as ExecutionRow));
        }),
      usage: (orgId, since) =>
        run('executions.usage', async () => {
          const rows = await db
            .selectFrom('svc_executions')
            .select(['automation_id', sql<string>`count(*) filter (where created_at >= ${since}::text::timestamptz)`.as('calls'), sql<string>`to_char(max(created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.as('last_run_at')])
            .where('org_id', '=', orgId)
            .groupBy('automation_id')
            .execute();
          return new Map(rows.map((r) => [r.automation_id as string, { calls: Number(r.calls), last_run_at: r.last_run_at as string }]));
        }),
      listUnfinished: (query) =>
        run('executions.listUnfinished', async () => {
          // The partial index svc_executions_unfinished holds exactly these rows.
          let q = executions().where('status', 'in', ['queued', 'running']).where('created_at', '<', timestamptz('createdBefore', query.createdBefore));
          if (query.after) {
            const a = query.after;
            const at = timestamptz('cursor', a.created_at);
            q = q.where((eb) => eb.or([eb('created_at', '>', at), eb.and([eb('created_at', '=', at), eb('id', '>', a.id)])]));
          }
          const rows = await q.orderBy('created_at', 'asc').orderBy('id', 'asc').limit(query.limit).execute();
          return rows.map((r) => toExecution(r as ExecutionRow));
        }),
    },
    schedules: sqlScheduleStore(db, run),
    webhooks: sqlWebhookStore(db, run),
  };
}

/**
 * Service storage on an engine SQL storage: `init()` runs the engine's migrations, then the
 * service's. `dispose()` leaves the engine storage to its owner.
 */
/**
 * Upload file bytes cross the driver as base64 text, decoded and encoded by the database: PGlite
 * serialises a bytea parameter byte by byte (about 7 s for 10 MiB here, against 0.6 s as base64
 * text; reading: 1.7 s against 0.09 s), and Postgres takes either alike.
 */
const bytesIn = (bytes: Uint8Array) => sql<Uint8Array>`decode(${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}, 'base64')`;
const bytesOut = (column: string) => sql<string>`encode(${sql.ref(column)}, 'base64')`.as('b64');
const fromBase64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));

export function createSqlServiceStorage(engineStorage: SqlStorage, options: SqlServiceStorageOptions = {}): ServiceStorage {
  const db = engineStorage.db as unknown as Kysely<any>;
  const opts: Required<SqlServiceStorageOptions> = { touchAfterMs: options.touchAfterMs ?? 60_000 };
  let initPromise: Promise<void> | undefined;
  const init = (): Promise<void> => {
    initPromise ??= (async () => {
      await engineStorage.init();
      await migrateService(db, engineStorage.schema);
    })().catch((err: unknown) => {
      initPromise = undefined;
      throw isFlowError(err) ? err : new FlowError('db_error', prefixed(COMPONENT, `service migrations failed: ${(err as Error).message}`), { cause: err });
    });
    return initPromise;
  };
  const run = <T>(op: string, fn: () => Promise<T>) => guard(init, op, fn);
  // Inside a transaction, init has happened (the transaction was opened through `run`).
  const inside = <T>(op: string, fn: () => Promise<T>) => fn().catch((err: unknown) => wrap(op, err));
  return {
    name: `service-${engineStorage.name}`,
    ...stores(db, run, opts),
    // Postgres may be shared by many processes: their rate limits count in one table. PGlite is one process.
    ...(engineStorage.driver === 'postgres' ? { rateLimitStore: sqlRateLimitStore(db, engineStorage.schema) } : {}),
    async transaction(fn) {
      await init();
      // fn's own error is rethrown as it is; only a failure to begin or commit becomes db_error.
      let failed: { err: unknown } | undefined;
      try {
        return await db.transaction().execute(async (tx) => {
          try {
            return await fn(stores(tx, inside, opts));
          } catch (err) {
            failed = { err };
            throw err;
          }
        });
      } catch (err) {
        if (failed) throw failed.err;
        wrap('transaction', err);
      }
    },
    async engineTransaction(fn) {
      await init();
      // The engine storage's own transaction: its run store over the same connection, and the
      // connection itself for the queue's insert (pg-boss runs it inline, in this transaction).
      return engineStorage.transaction((etx) => {
        const trx = etx.db as unknown as Transaction<any>;
        return fn({
          ...stores(trx, inside, opts),
          engineRuns: etx.runs,
          sql: { executeSql: async (text, values) => ({ rows: (await trx.executeQuery(CompiledQuery.raw(text, values ?? []))).rows as any[] }) },
        });
      });
    },
    async ready() {
      try {
        await init();
        return await serviceSchemaCurrent(db, engineStorage.schema);
      } catch {
        return false;
      }
    },
    init,
    async dispose() {
      await initPromise?.catch(() => {});
    },
  };
}
