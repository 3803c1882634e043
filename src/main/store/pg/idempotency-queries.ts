import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import type { AcceptedRequest, StoredResponse } from '../idempotency.ts';
import { int8, type PgQueryable } from './pool.ts';
import { pgPruneQueries } from './prune-queries.ts';

const storedRow = z.object({ content_hash: z.string(), status: z.number().int(), response: z.string(), conversation_id: z.string() });
const seenRow = z.object({ client_id: z.string(), signature: z.string(), created_at: int8 });

/**
 * idempotency.ts on PostgreSQL: the same functions and results. A key is unique, so of two nodes
 * storing the same request at once one put fails with unique_violation and its command runs again
 * and finds the winner's response (pg-ingest-runner.ts); the prune is the retention pass's own
 * (prune-queries.ts).
 */
export function pgIdempotencyQueries(db: PgQueryable): StoreContract['idempotency'] {
  return {
    async get(clientId: string, eventType: string, msgId: string): Promise<StoredResponse | undefined> {
      const raw = (
        await db.query('SELECT content_hash, status, response, conversation_id FROM idempotency WHERE client_id = $1 AND event_type = $2 AND msg_id = $3', [
          clientId,
          eventType,
          msgId,
        ])
      ).rows[0];
      if (raw === undefined) return undefined;
      const r = storedRow.parse(raw);
      return { contentHash: r.content_hash, status: r.status, body: r.response, conversationId: r.conversation_id };
    },
    async put(a: AcceptedRequest): Promise<void> {
      await db.query(
        `INSERT INTO idempotency (client_id, event_type, msg_id, content_hash, status, response, conversation_id, message_id, signature, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [a.clientId, a.eventType, a.msgId, a.contentHash, a.status, a.body, a.conversationId, a.messageId, a.signature, a.at],
      );
    },
    // In idempotency_created's order, as SQLite reads it.
    async signaturesSince(since: number): Promise<Array<{ clientId: string; signature: string; seenAt: number }>> {
      const r = await db.query('SELECT client_id, signature, created_at FROM idempotency WHERE created_at >= $1 ORDER BY created_at, id', [since]);
      return r.rows.map((raw) => {
        const x = seenRow.parse(raw);
        return { clientId: x.client_id, signature: x.signature, seenAt: x.created_at };
      });
    },
    prune: (before: number, batch: number) => pgPruneQueries(db).idempotency(before, batch),
    async needsPrune(before: number): Promise<boolean> {
      const { oldest } = z.object({ oldest: int8.nullable() }).parse((await db.query('SELECT min(created_at) AS oldest FROM idempotency')).rows[0]);
      return oldest !== null && oldest < before;
    },
  };
}
