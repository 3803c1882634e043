import type pg from 'pg';
import { PG_RETRYABLE, pgCodeOf } from './pool.ts';

export interface PgTransactionOptions {
  /** Runs in all (default 3): a run that lost a race to another node (PG_RETRYABLE) runs again from the start. */
  attempts?: number;
}

/**
 * `work` in a transaction of its own on a pooled connection, run again from the start when it lost
 * a race to another node. A connection whose ROLLBACK failed is broken and is not handed out again.
 */
export async function inPgTransaction<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>, options: PgTransactionOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true;
      }
      if (attempt < attempts && PG_RETRYABLE.has(pgCodeOf(error) ?? '')) continue;
      throw error;
    } finally {
      client.release(broken);
    }
  }
}
