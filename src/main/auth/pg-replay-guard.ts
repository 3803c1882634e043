import type { PgQueryable } from '../store/pg/pool.ts';

/** How often a release that failed (the database was unreachable) is tried again. */
const RELEASE_RETRY_MS = 1000;

/**
 * Replay protection on PostgreSQL (issue 30): the (client, signature) pairs of the replay window
 * in one table every node shares (migration 6), so a signed request accepted by one node, or
 * still in flight there, is refused by every other. The same three steps as the in-memory guard
 * (auth/replay-guard.ts): reserve before processing, keep when accepted, release when refused.
 *
 * A release that fails (the database went away while the request was refused with a 503) is kept
 * and tried again every second until it lands: otherwise the integrator's honest retry of that
 * exact request would meet a 409 for the rest of the window.
 */
export function createPgReplayGuard(db: PgQueryable, windowMs: number, log: (line: string) => void = () => {}) {
  const unreleased = new Map<string, { clientId: string; signature: string }>();
  let retryTimer: NodeJS.Timeout | null = null;

  async function remove(clientId: string, signature: string): Promise<void> {
    await db.query('DELETE FROM replay_signatures WHERE client_id = $1 AND signature = $2', [clientId, signature]);
  }

  function retryLater(): void {
    if (retryTimer) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void retryReleases();
    }, RELEASE_RETRY_MS);
    retryTimer.unref();
  }

  async function retryReleases(): Promise<void> {
    for (const [key, pair] of unreleased) {
      try {
        await remove(pair.clientId, pair.signature);
        unreleased.delete(key);
      } catch {
        retryLater();
        return;
      }
    }
  }

  return {
    /**
     * True when this node may process the request: no row, or one older than the window (taken
     * over in the same statement). A copy in flight or accepted on any node holds the row.
     */
    async reserve(clientId: string, signature: string, now: number): Promise<boolean> {
      const r = await db.query(
        `INSERT INTO replay_signatures (client_id, signature, seen_at) VALUES ($1, $2, $3)
         ON CONFLICT (client_id, signature) DO UPDATE SET seen_at = excluded.seen_at
         WHERE replay_signatures.seen_at <= $3::bigint - $4::bigint
         RETURNING 1`,
        [clientId, signature, now, windowMs],
      );
      return (r.rowCount ?? 0) > 0;
    },
    /** Accepted: the row stays for the window (its seen_at is the reservation's, a moment earlier). */
    confirm(): void {},
    async release(clientId: string, signature: string): Promise<void> {
      try {
        await remove(clientId, signature);
      } catch (error) {
        unreleased.set(`${clientId}\u0000${signature}`, { clientId, signature });
        log(`replay protection: releasing a refused request's signature failed (${(error as Error).message}); retrying every second`);
        retryLater();
      }
    },
    /** Deletes pairs older than the window; returns how many. */
    async prune(now: number): Promise<number> {
      return (await db.query('DELETE FROM replay_signatures WHERE seen_at <= $1', [now - windowMs])).rowCount ?? 0;
    },
    /** Releases still waiting for the database. */
    pendingReleases: (): number => unreleased.size,
    close(): void {
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = null;
    },
  };
}

export type PgReplayGuard = ReturnType<typeof createPgReplayGuard>;
