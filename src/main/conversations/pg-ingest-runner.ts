import type pg from 'pg';
import { pgIngestStore } from '../store/pg/ingest-queries.ts';
import { PG_RETRYABLE, pgCodeOf } from '../store/pg/pool.ts';
import { executeIngest, type IngestCommand, type Outcome } from './ingest-commands.ts';

/** How often a command runs again after losing a race to another node (unique key, serialization, deadlock). */
export const PG_INGEST_ATTEMPTS = 3;

/**
 * PostgreSQL's counterpart of the writer thread for the endpoint's commands (issue 30): each
 * command in a transaction of its own on a pooled connection; PostgreSQL's own group commit
 * shares WAL flushes between concurrent ones. A command that lost a race to another node (a twin
 * request stored the same idempotency key first) runs again from the start and then finds the
 * winner's response: the same answer SQLite's single writer gives the second of two twins.
 */
export function createPgIngestRunner(pool: pg.Pool) {
  return {
    async run(command: IngestCommand): Promise<Outcome | null> {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect();
        let broken = false;
        try {
          await client.query('BEGIN');
          const result = await executeIngest(pgIngestStore(client), command);
          await client.query('COMMIT');
          return result;
        } catch (error) {
          try {
            await client.query('ROLLBACK');
          } catch {
            broken = true; // the connection itself failed: the pool must not hand it out again
          }
          if (attempt < PG_INGEST_ATTEMPTS && PG_RETRYABLE.has(pgCodeOf(error) ?? '')) continue;
          throw error;
        } finally {
          client.release(broken);
        }
      }
    },
  };
}

export type PgIngestRunner = ReturnType<typeof createPgIngestRunner>;
