import type { PgQueryable } from '../store/pg/pool.ts';

/** Thrown inside a request's transaction when its (client, signature) was taken within the window: the transaction rolls back. */
export class ReplayedSignature extends Error {
  constructor() {
    super('this exact signed request was already accepted');
  }
}

/**
 * Replay protection on PostgreSQL (issue 30): the (client, signature) pairs of the replay window
 * in one table every node shares (migration 6), claimed in the same transaction that stores the
 * request. A copy processed at the same moment on another node waits on the first one's row and
 * is refused once it commits; a request refused or failed before its commit leaves no row, so
 * the integrator's retry of a 400, a 429 or a 503 is not a replay. One SQLite process keeps the
 * same window in memory (auth/replay-guard.ts).
 *
 * True when this request may go on: no row, or one older than the window (taken over).
 */
export async function claimSignature(tx: PgQueryable, clientId: string, signature: string, now: number, windowMs: number): Promise<boolean> {
  const r = await tx.query(
    `INSERT INTO replay_signatures (client_id, signature, seen_at) VALUES ($1, $2, $3)
     ON CONFLICT (client_id, signature) DO UPDATE SET seen_at = excluded.seen_at
     WHERE replay_signatures.seen_at <= $3::bigint - $4::bigint
     RETURNING 1`,
    [clientId, signature, now, windowMs],
  );
  return (r.rowCount ?? 0) > 0;
}

/**
 * Whether the pair was claimed within the window, without claiming it: asked before the engine
 * for a website or assist request (their claim comes with the answer's write) and when the rate
 * limit refuses a request, so a replay is refused first, as the protocol orders the checks.
 */
export async function signatureSeen(db: PgQueryable, clientId: string, signature: string, now: number, windowMs: number): Promise<boolean> {
  const r = await db.query(
    'SELECT 1 FROM replay_signatures WHERE client_id = $1 AND signature = $2 AND seen_at > $3::bigint - $4::bigint',
    [clientId, signature, now, windowMs],
  );
  return (r.rowCount ?? 0) > 0;
}

/** Deletes the pairs seen before `before` (now less the window); any node may, at any time. */
export async function pruneSignatures(db: PgQueryable, before: number): Promise<number> {
  return (await db.query('DELETE FROM replay_signatures WHERE seen_at <= $1', [before])).rowCount ?? 0;
}
