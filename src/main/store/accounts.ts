import { z } from 'zod';
import type { Db } from './db.ts';

export const ROLES = ['admin', 'agent'] as const;
export type Role = (typeof ROLES)[number];


export interface Agent {
  id: string;
  name: string;
  role: Role;
  capacity: number;
  /** Null until the agent has chosen a password through a sign-in link. */
  passwordHash: string | null;
  disabled: boolean;
  /** The installation's owner: the desktop window and the console token sign in as this account. */
  owner: boolean;
  createdAt: number;
  updatedAt: number;
}


export interface SessionRow {
  digest: string;
  agentId: string;
  address: string | null;
  createdAt: number;
  lastSeenAt: number;
  endedAt: number | null;
  endedReason: string | null;
}

/**
 * Agent and session rows as either store reads them back, checked (a hand-edited row is refused,
 * not trusted); `int` reads an integer column as the database returns it (SQLite: a number;
 * PostgreSQL: int8).
 */
export function accountReaders(int: z.ZodType<number, unknown>): { toAgent(raw: unknown): Agent; toSession(raw: unknown): SessionRow } {
  const agentRow = z.object({
    id: z.string().min(1).max(64),
    name: z.string().min(1).max(200),
    role: z.enum(ROLES),
    capacity: z.number().int().min(0),
    password_hash: z.string().nullable(),
    disabled: z.union([z.literal(0), z.literal(1)]),
    owner: z.union([z.literal(0), z.literal(1)]),
    created_at: int,
    updated_at: int,
  });
  const sessionRow = z.object({
    digest: z.string(),
    agent_id: z.string(),
    address: z.string().nullable(),
    created_at: int,
    last_seen_at: int,
    ended_at: int.nullable(),
    ended_reason: z.string().nullable(),
  });
  return {
    toAgent(raw) {
      const r = agentRow.parse(raw);
      return { id: r.id, name: r.name, role: r.role, capacity: r.capacity, passwordHash: r.password_hash, disabled: r.disabled === 1, owner: r.owner === 1, createdAt: r.created_at, updatedAt: r.updated_at };
    },
    toSession(raw) {
      const r = sessionRow.parse(raw);
      return { digest: r.digest, agentId: r.agent_id, address: r.address, createdAt: r.created_at, lastSeenAt: r.last_seen_at, endedAt: r.ended_at, endedReason: r.ended_reason };
    },
  };
}

const { toAgent, toSession } = accountReaders(z.number().int());

/** Agents, their one-time sign-in links and their sessions. Links and tokens are stored only as digests. */
export function accountQueries(db: Db) {
  const insert = db.prepare('INSERT INTO agents (id, name, role, capacity, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
  const byId = db.prepare('SELECT * FROM agents WHERE id = ?');
  const all = db.prepare('SELECT * FROM agents ORDER BY id');
  const setDisabled = db.prepare('UPDATE agents SET disabled = ?, updated_at = ? WHERE id = ?');
  const setPassword = db.prepare('UPDATE agents SET password_hash = ?, updated_at = ? WHERE id = ?');
  const clearPassword = db.prepare('UPDATE agents SET password_hash = NULL, updated_at = ? WHERE id = ?');
  const remove = db.prepare('DELETE FROM agents WHERE id = ?');
  const dropLinks = db.prepare('DELETE FROM sign_in_links WHERE agent_id = ?');
  const addLink = db.prepare('INSERT INTO sign_in_links (digest, agent_id, expires_at, created_at) VALUES (?, ?, ?, ?)');
  const peekLink = db.prepare('SELECT agent_id, expires_at FROM sign_in_links WHERE digest = ? AND expires_at > ?');
  const takeLink = db.prepare('DELETE FROM sign_in_links WHERE digest = ? AND expires_at > ? RETURNING agent_id');
  const addSession = db.prepare('INSERT INTO sessions (digest, agent_id, address, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)');
  const session = db.prepare('SELECT * FROM sessions WHERE digest = ?');
  const touch = db.prepare('UPDATE sessions SET last_seen_at = ? WHERE digest = ? AND ended_at IS NULL AND last_seen_at < ?');
  const end = db.prepare('UPDATE sessions SET ended_at = ?, ended_reason = ? WHERE digest = ? AND ended_at IS NULL');
  const ownerRow = db.prepare('SELECT * FROM agents WHERE owner = 1');
  // Capacity 0: the owner takes no conversations by auto-assignment until an admin gives them some.
  const addOwner = db.prepare("INSERT INTO agents (id, name, role, capacity, created_at, updated_at, owner) VALUES (?, ?, 'admin', 0, ?, ?, 1)");
  const renameOwner = db.prepare('UPDATE agents SET id = ?, name = ?, updated_at = ? WHERE owner = 1');
  const dropSessions = db.prepare('DELETE FROM sessions WHERE agent_id = ?');
  const rename = db.prepare('UPDATE agents SET name = ?, updated_at = ? WHERE id = ?');
  const setRole = db.prepare('UPDATE agents SET role = ?, updated_at = ? WHERE id = ? AND owner = 0');
  const setCapacity = db.prepare('UPDATE agents SET capacity = ?, updated_at = ? WHERE id = ?');
  const sessionActivity = db.prepare(
    'SELECT agent_id, max(created_at) AS last, sum(ended_at IS NULL AND last_seen_at > ? AND created_at > ?) AS open FROM sessions GROUP BY agent_id',
  );
  const linkExpiry = db.prepare('SELECT agent_id, max(expires_at) AS expires FROM sign_in_links WHERE expires_at > ? GROUP BY agent_id');
  const endAll = db.prepare('UPDATE sessions SET ended_at = ?, ended_reason = ? WHERE agent_id = ? AND ended_at IS NULL RETURNING digest');

  return {
    add(a: { id: string; name: string; role: Role; capacity?: number; now: number }): Agent {
      insert.run(a.id, a.name, a.role, a.capacity ?? 5, a.now, a.now);
      return toAgent(byId.get(a.id));
    },
    get(id: string): Agent | null {
      const row = byId.get(id);
      return row ? toAgent(row) : null;
    },
    list(): Agent[] {
      return all.all().map(toAgent);
    },
    /** The owner account; null until the installation's user has said who they are. */
    owner(): Agent | null {
      const row = ownerRow.get();
      return row ? toAgent(row) : null;
    },
    /**
     * The owner says who they are (the console's "who are you"): the account is made the first
     * time; later its id and name change. A changed id ends the owner's own sessions and links
     * (they name the old id). Throws on an id another account has.
     */
    setOwner(o: { id: string; name: string; now: number }): { previous: Agent | null } {
      const previous = this.owner();
      if (!previous) {
        addOwner.run(o.id, o.name, o.now, o.now);
        return { previous };
      }
      if (previous.id !== o.id) {
        // The rows name the old id (a foreign key without ON UPDATE): they go, and with them those sign-ins.
        dropLinks.run(previous.id);
        dropSessions.run(previous.id);
      }
      renameOwner.run(o.id, o.name, o.now);
      return { previous };
    },
    rename(id: string, name: string, now: number): boolean {
      return rename.run(name, now, id).changes === 1;
    },
    /** The owner stays an admin: the desktop must never lock itself out. */
    setRole(id: string, role: Role, now: number): boolean {
      return setRole.run(role, now, id).changes === 1;
    },
    setCapacity(id: string, capacity: number, now: number): boolean {
      return setCapacity.run(capacity, now, id).changes === 1;
    },
    /** Returns whether the agent exists. Disabling does not end sessions by itself: see endSessionsOf. */
    setDisabled(id: string, disabled: boolean, now: number): boolean {
      return setDisabled.run(disabled ? 1 : 0, now, id).changes === 1;
    },
    setPasswordHash(id: string, hash: string, now: number): boolean {
      return setPassword.run(hash, now, id).changes === 1;
    },
    /** A reset: the password is gone until the agent chooses a new one through a new link. */
    clearPassword(id: string, now: number): boolean {
      return clearPassword.run(now, id).changes === 1;
    },
    /** Removes the agent with its links and sessions. */
    remove(id: string): boolean {
      return remove.run(id).changes === 1;
    },
    /** A disabled agent's pending link goes: enabling them again must not revive it. */
    dropSignInLinks(agentId: string): void {
      dropLinks.run(agentId);
    },
    /** The agent's one link from now on: any earlier one stops working. */
    replaceSignInLink(agentId: string, digest: string, expiresAt: number, now: number): void {
      dropLinks.run(agentId);
      addLink.run(digest, agentId, expiresAt, now);
    },
    /** Who a live link is for, leaving it usable. */
    peekSignInLink(digest: string, now: number): { agentId: string; expiresAt: number } | null {
      const row = peekLink.get(digest, now) as { agent_id: string; expires_at: number } | undefined;
      return row ? { agentId: row.agent_id, expiresAt: row.expires_at } : null;
    },
    /** Uses up a link: the agent it signs in, or null when it is unknown, used or expired. */
    takeSignInLink(digest: string, now: number): string | null {
      const row = takeLink.get(digest, now) as { agent_id: string } | undefined;
      return row?.agent_id ?? null;
    },
    addSession(s: { digest: string; agentId: string; address: string | null; now: number }): void {
      addSession.run(s.digest, s.agentId, s.address, s.now, s.now);
    },
    session(digest: string): SessionRow | null {
      const row = session.get(digest);
      return row ? toSession(row) : null;
    },
    /** Records use at most once a minute: a console's every call need not be a write. */
    touchSession(digest: string, now: number): void {
      touch.run(now, digest, now - 60_000);
    },
    endSession(digest: string, reason: string, now: number): boolean {
      return end.run(now, reason, digest).changes === 1;
    },
    /**
     * Per agent: the newest session's start, the sessions still live (not ended, used after
     * `seenAfter`, started after `startedAfter`), and when their pending link expires. For the
     * admin's list: a few rows per agent, read in two statements whatever the number of agents.
     */
    activity(now: number, seenAfter: number, startedAfter: number): Map<string, { lastSignInAt: number | null; openSessions: number; linkExpiresAt: number | null }> {
      const out = new Map<string, { lastSignInAt: number | null; openSessions: number; linkExpiresAt: number | null }>();
      const entry = (id: string) => out.get(id) ?? out.set(id, { lastSignInAt: null, openSessions: 0, linkExpiresAt: null }).get(id)!;
      for (const r of sessionActivity.all(seenAfter, startedAfter) as Array<{ agent_id: string; last: number; open: number }>) {
        Object.assign(entry(r.agent_id), { lastSignInAt: r.last, openSessions: r.open });
      }
      for (const r of linkExpiry.all(now) as Array<{ agent_id: string; expires: number }>) entry(r.agent_id).linkExpiresAt = r.expires;
      return out;
    },
    /** Ends every open session of the agent; the digests ended, so their event streams can be closed. */
    endSessionsOf(agentId: string, reason: string, now: number): string[] {
      return (endAll.all(now, reason, agentId) as Array<{ digest: string }>).map((r) => r.digest);
    },
  };
}

export type AccountQueries = ReturnType<typeof accountQueries>;
