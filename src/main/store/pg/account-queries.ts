import type { StoreContract } from '../contract.ts';
import { accountReaders, type Agent, type Role, type SessionRow } from '../accounts.ts';
import { int8, type PgQueryable } from './pool.ts';

type Accounts = StoreContract['accounts'];
type Activity = { lastSignInAt: number | null; openSessions: number; linkExpiresAt: number | null };

const { toAgent, toSession } = accountReaders(int8);

/**
 * The accounts group (store/accounts.ts) on PostgreSQL: the same functions and results. Where
 * SQLite's single writer made a read-then-write safe, the statement itself is atomic here, as
 * several nodes write at once (each place says how).
 */
export function pgAccountQueries(db: PgQueryable): Accounts {
  const changed = async (text: string, values: unknown[]): Promise<boolean> => (await db.query(text, values)).rowCount === 1;
  const dropLinks = async (agentId: string): Promise<void> => {
    await db.query('DELETE FROM sign_in_links WHERE agent_id = $1', [agentId]);
  };
  const owner = async (lock: boolean): Promise<Agent | null> => {
    const row = (await db.query(`SELECT * FROM agents WHERE owner = 1${lock ? ' FOR UPDATE' : ''}`)).rows[0];
    return row ? toAgent(row) : null;
  };
  return {
    async add(a: { id: string; name: string; role: Role; capacity?: number; now: number }): Promise<Agent> {
      const r = await db.query('INSERT INTO agents (id, name, role, capacity, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING *', [a.id, a.name, a.role, a.capacity ?? 5, a.now]);
      return toAgent(r.rows[0]);
    },
    async get(id: string): Promise<Agent | null> {
      const row = (await db.query('SELECT * FROM agents WHERE id = $1', [id])).rows[0];
      return row ? toAgent(row) : null;
    },
    // COLLATE "C": byte order, as SQLite's BINARY sorts, whatever the database's locale.
    list: async (): Promise<Agent[]> => (await db.query('SELECT * FROM agents ORDER BY id COLLATE "C"')).rows.map(toAgent),
    owner: () => owner(false),
    /**
     * As SQLite's. The owner row is locked while it is read, so two nodes renaming it run one after
     * the other; two nodes making it the first time both insert, and the unique index on owner
     * (agents_one_owner) fails the second with unique_violation: its transaction runs again
     * (PG_RETRYABLE) and then finds the owner made.
     */
    async setOwner(o: { id: string; name: string; now: number }): Promise<{ previous: Agent | null }> {
      const previous = await owner(true);
      if (!previous) {
        await db.query("INSERT INTO agents (id, name, role, capacity, created_at, updated_at, owner) VALUES ($1, $2, 'admin', 0, $3, $3, 1)", [o.id, o.name, o.now]);
        return { previous };
      }
      if (previous.id !== o.id) {
        // Sessions and links name the old id (a foreign key without ON UPDATE): they go, and with them those sign-ins.
        await dropLinks(previous.id);
        await db.query('DELETE FROM sessions WHERE agent_id = $1', [previous.id]);
      }
      await db.query('UPDATE agents SET id = $1, name = $2, updated_at = $3 WHERE owner = 1', [o.id, o.name, o.now]);
      return { previous };
    },
    rename: (id: string, name: string, now: number) => changed('UPDATE agents SET name = $1, updated_at = $2 WHERE id = $3', [name, now, id]),
    setRole: (id: string, role: Role, now: number) => changed('UPDATE agents SET role = $1, updated_at = $2 WHERE id = $3 AND owner = 0', [role, now, id]),
    setCapacity: (id: string, capacity: number, now: number) => changed('UPDATE agents SET capacity = $1, updated_at = $2 WHERE id = $3', [capacity, now, id]),
    setDisabled: (id: string, disabled: boolean, now: number) => changed('UPDATE agents SET disabled = $1, updated_at = $2 WHERE id = $3', [disabled ? 1 : 0, now, id]),
    setPasswordHash: (id: string, hash: string, now: number) => changed('UPDATE agents SET password_hash = $1, updated_at = $2 WHERE id = $3', [hash, now, id]),
    clearPassword: (id: string, now: number) => changed('UPDATE agents SET password_hash = NULL, updated_at = $1 WHERE id = $2', [now, id]),
    remove: (id: string) => changed('DELETE FROM agents WHERE id = $1', [id]),
    dropSignInLinks: dropLinks,
    /**
     * The agent's one link: the agent's row is locked first, so two nodes replacing the link at once
     * run one after the other and the second's DELETE (a new snapshot under READ COMMITTED) removes
     * the first's link, instead of both deleting nothing and leaving two links.
     */
    async replaceSignInLink(agentId: string, digest: string, expiresAt: number, now: number): Promise<void> {
      await db.query('SELECT 1 FROM agents WHERE id = $1 FOR NO KEY UPDATE', [agentId]);
      await dropLinks(agentId);
      await db.query('INSERT INTO sign_in_links (digest, agent_id, expires_at, created_at) VALUES ($1, $2, $3, $4)', [digest, agentId, expiresAt, now]);
    },
    async peekSignInLink(digest: string, now: number): Promise<{ agentId: string; expiresAt: number } | null> {
      const row = (await db.query('SELECT agent_id, expires_at FROM sign_in_links WHERE digest = $1 AND expires_at > $2', [digest, now])).rows[0] as { agent_id: string; expires_at: unknown } | undefined;
      return row ? { agentId: row.agent_id, expiresAt: int8.parse(row.expires_at) } : null;
    },
    /**
     * Single use across nodes: one DELETE … RETURNING. A second node taking the same link waits on
     * the row lock of the first, then finds the row gone and gets null.
     */
    async takeSignInLink(digest: string, now: number): Promise<string | null> {
      const row = (await db.query('DELETE FROM sign_in_links WHERE digest = $1 AND expires_at > $2 RETURNING agent_id', [digest, now])).rows[0] as { agent_id: string } | undefined;
      return row?.agent_id ?? null;
    },
    async addSession(s: { digest: string; agentId: string; address: string | null; now: number }): Promise<void> {
      await db.query('INSERT INTO sessions (digest, agent_id, address, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $4)', [s.digest, s.agentId, s.address, s.now]);
    },
    async session(digest: string): Promise<SessionRow | null> {
      const row = (await db.query('SELECT * FROM sessions WHERE digest = $1', [digest])).rows[0];
      return row ? toSession(row) : null;
    },
    async touchSession(digest: string, now: number): Promise<void> {
      await db.query('UPDATE sessions SET last_seen_at = $1 WHERE digest = $2 AND ended_at IS NULL AND last_seen_at < $3', [now, digest, now - 60_000]);
    },
    endSession: (digest: string, reason: string, now: number) =>
      changed('UPDATE sessions SET ended_at = $1, ended_reason = $2 WHERE digest = $3 AND ended_at IS NULL', [now, reason, digest]),
    async activity(now: number, seenAfter: number, startedAfter: number): Promise<Map<string, Activity>> {
      const out = new Map<string, Activity>();
      const entry = (id: string) => out.get(id) ?? out.set(id, { lastSignInAt: null, openSessions: 0, linkExpiresAt: null }).get(id)!;
      const sessions = await db.query(
        `SELECT agent_id, max(created_at) AS last, count(*) FILTER (WHERE ended_at IS NULL AND last_seen_at > $1 AND created_at > $2) AS open
         FROM sessions GROUP BY agent_id ORDER BY agent_id COLLATE "C"`,
        [seenAfter, startedAfter],
      );
      for (const r of sessions.rows as Array<{ agent_id: string; last: unknown; open: unknown }>) {
        Object.assign(entry(r.agent_id), { lastSignInAt: int8.parse(r.last), openSessions: int8.parse(r.open) });
      }
      const links = await db.query('SELECT agent_id, max(expires_at) AS expires FROM sign_in_links WHERE expires_at > $1 GROUP BY agent_id ORDER BY agent_id COLLATE "C"', [now]);
      for (const r of links.rows as Array<{ agent_id: string; expires: unknown }>) entry(r.agent_id).linkExpiresAt = int8.parse(r.expires);
      return out;
    },
    async endSessionsOf(agentId: string, reason: string, now: number): Promise<string[]> {
      const r = await db.query('UPDATE sessions SET ended_at = $1, ended_reason = $2 WHERE agent_id = $3 AND ended_at IS NULL RETURNING digest', [now, reason, agentId]);
      return (r.rows as Array<{ digest: string }>).map((x) => x.digest);
    },
  };
}
