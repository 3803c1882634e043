import { z } from 'zod';
import type { Awaitable, StoreContract } from '../contract.ts';
import type { AttemptRow, DeliveryState } from '../deliveries.ts';
import type { ReplyOutcome } from '../messages.ts';
import type { MessageTrace } from '../trace.ts';
import type { ReplyReason } from '../../../shared/conversation.ts';
import type { QuotedLine } from '../../../shared/console-api.ts';
import { pgQuoted } from './context-queries.ts';
import { pgIngestStore } from './ingest-queries.ts';
import { pgMessageReads } from './message-reads.ts';
import { int8, type PgQueryable } from './pool.ts';

const messageRow = z.object({
  msg_id: z.string(),
  reply_scheduled: int8.nullable(),
  reply_reason: z.string().nullable(),
  reply_outcome: z.string().nullable(),
  reply_msg_id: z.string().nullable(),
  reply_note: z.string().nullable(),
});
const replyRow = z.object({
  id: int8,
  msg_id: z.string(),
  content: z.string(),
  handoff: z.number(),
  engine: z.string(),
  confidence: z.number().nullable(),
  sources: z.array(z.unknown()),
  cause: z.string().nullable(),
});
const deliveryRow = z.object({ id: int8, state: z.string(), send_url: z.string() });

/** Why a customer message was or was not answered (trace.ts) on PostgreSQL; `attemptsOf` is the deliveries group's. */
export function pgTraceQueries(db: PgQueryable, attemptsOf: (deliveryId: number) => Awaitable<AttemptRow[]>): StoreContract['trace'] {
  const one = async (sql: string, values: unknown[]): Promise<unknown> => (await db.query(sql, values)).rows[0];
  return {
    async forMessage(messageId: number): Promise<MessageTrace | undefined> {
      const raw = await one('SELECT msg_id, reply_scheduled, reply_reason, reply_outcome, reply_msg_id, reply_note FROM messages WHERE id = $1', [messageId]);
      if (!raw) return undefined;
      const m = messageRow.parse(raw);
      const rawReply = m.reply_msg_id ? await one('SELECT id, msg_id, content, handoff, engine, confidence, sources, cause FROM replies WHERE msg_id = $1', [m.reply_msg_id]) : undefined;
      const r = rawReply ? replyRow.parse(rawReply) : undefined;
      const rawDelivery = r ? await one('SELECT id, state, send_url FROM deliveries WHERE reply_id = $1 ORDER BY id DESC LIMIT 1', [r.id]) : undefined;
      const d = rawDelivery ? deliveryRow.parse(rawDelivery) : undefined;
      return {
        msgId: m.msg_id,
        decision: m.reply_reason ? { scheduled: m.reply_scheduled === 1, reason: m.reply_reason as ReplyReason } : null,
        outcome: m.reply_outcome as ReplyOutcome | null,
        note: m.reply_note,
        reply: r ? { msgId: r.msg_id, content: r.content, handoff: r.handoff === 1, engine: r.engine, confidence: r.confidence, sources: r.sources, cause: r.cause } : null,
        delivery: d ? { id: d.id, state: d.state as DeliveryState, sendUrl: d.send_url, attempts: await attemptsOf(d.id) } : null,
      };
    },
  };
}

/**
 * What quoted messages point at (quotes.ts). context-queries.ts's lookup, not message-reads.ts's:
 * a row without `shown` (copied from a SQLite store older than that column) is named from its
 * message_info there, as SQLite's shownOf does.
 */
export function pgQuoteQueries(db: PgQueryable): (clientId: string, msgIds: Iterable<string>) => Promise<Map<string, QuotedLine>> {
  // StoreContract['quotes'] maps over a function's keys (none): the signature is spelled out here instead.
  return (clientId, msgIds) => pgQuoted(db, clientId, msgIds);
}

/** The names integrators send for their users (people.ts): ingest's remember, the reads' names. */
export function pgPeopleQueries(db: PgQueryable): StoreContract['people'] {
  return { remember: pgIngestStore(db).people.remember, names: pgMessageReads(db).people.names };
}
