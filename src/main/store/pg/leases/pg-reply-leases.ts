import { z } from 'zod';
import { checkClaim, int8, leaseArrays, leaseColumns, leaseOf, type Lease, type Queryable } from './lease.ts';

/** A conversation whose quiet period ended, now this node's to answer. */
export interface ClaimedReply {
  conversationId: string;
  dueAt: number;
  /** The newest customer message the answer covers: pass it back to finishReply. */
  lastMessageId: number;
  lease: Lease;
}

/**
 * - done: the timer is gone; the answer stands.
 * - stale: a newer customer message was scheduled meanwhile (on any node): drop this answer;
 *   the timer stays, due at the newer message's time, and this lease is released.
 * - lost: this claim is no longer the timer's (its lease ran out and another node claimed it,
 *   or that node already answered): drop this answer, the other node's stands.
 */
export type FinishResult = 'done' | 'stale' | 'lost';

const rowSchema = z.object({
  conversation_id: z.string(),
  due_at: int8,
  last_message_id: int8,
  ...leaseColumns,
});

const toClaimed = (raw: unknown): ClaimedReply => {
  const r = rowSchema.parse(raw);
  return { conversationId: r.conversation_id, dueAt: r.due_at, lastMessageId: r.last_message_id, lease: leaseOf(r) };
};

/**
 * A newer message (a larger id: ids are given in commit order per database, and a conversation's
 * messages are written one after another) moves the due time and the message; an older one that
 * reaches another node late changes nothing. A lease held on the row stays: its holder learns
 * at finishReply that its answer is stale.
 */
const SCHEDULE_SQL = `
  INSERT INTO due_replies (conversation_id, due_at, last_message_id) VALUES ($1, $2, $3)
  ON CONFLICT (conversation_id) DO UPDATE SET due_at = excluded.due_at, last_message_id = excluded.last_message_id
  WHERE due_replies.last_message_id < excluded.last_message_id
  RETURNING 1`;

/** As deliveries' claim (pg-delivery-leases.ts): due first, locked rows skipped, the picked rows by key. */
export const CLAIM_REPLIES_SQL = `
  WITH picked AS (
    SELECT conversation_id FROM due_replies
    WHERE due_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
    ORDER BY due_at, conversation_id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  )
  UPDATE due_replies r SET lease_holder = $3, lease_until = $1::bigint + $4::bigint, lease_count = r.lease_count + 1
  WHERE r.conversation_id = ANY (ARRAY(SELECT conversation_id FROM picked))
  RETURNING r.*`;

const DONE_SQL = `
  DELETE FROM due_replies
  WHERE conversation_id = $1 AND lease_holder = $2 AND lease_count = $3 AND last_message_id = $4`;

/**
 * Its own statement, after DONE_SQL found nothing: a fresh snapshot, so a newer message whose
 * upsert committed while DONE_SQL ran (DONE_SQL then skipped the row it re-read) is seen here.
 */
const STALE_SQL = `
  UPDATE due_replies SET lease_holder = NULL, lease_until = NULL
  WHERE conversation_id = $1 AND lease_holder = $2 AND lease_count = $3 AND last_message_id > $4`;

const DEFER_SQL = `
  UPDATE due_replies SET due_at = greatest(due_at, $4), lease_holder = NULL, lease_until = NULL
  WHERE conversation_id = $1 AND lease_holder = $2 AND lease_count = $3`;

/** As deliveries' (pg-delivery-leases.ts): the timers leased to $1 other than those in $2, given back. */
const ORPHANS_SQL = `
  UPDATE due_replies SET lease_holder = NULL, lease_until = NULL
  WHERE lease_holder = $1 AND conversation_id <> ALL ($2::text[])
  RETURNING conversation_id`;

const RENEW_SQL = `
  UPDATE due_replies r SET lease_until = $2::bigint + $3::bigint
  FROM unnest($4::text[], $5::int[]) AS h(conversation_id, count)
  WHERE r.conversation_id = h.conversation_id AND r.lease_holder = $1 AND r.lease_count = h.count
  RETURNING r.conversation_id, r.lease_until`;

/** The reply scheduler's side of the PostgreSQL work queue: the quiet-period timers as rows. */
export function pgReplyLeases(db: Queryable) {
  return {
    /**
     * A customer message was stored and awaits an auto reply at `dueAt` (the caller's quiet
     * period, capped from the first pending message). True when it moved the timer; false when a
     * newer message had already.
     */
    async scheduleReply(conversationId: string, dueAt: number, lastCustomerMessageId: number): Promise<boolean> {
      return ((await db.query(SCHEDULE_SQL, [conversationId, dueAt, lastCustomerMessageId])).rowCount ?? 0) > 0;
    },
    /** Up to `limit` conversations whose quiet period ended by `now`, earliest first, each leased to `nodeId` until now + leaseMs. */
    async claimDueReplies(nodeId: string, now: number, limit: number, leaseMs: number): Promise<ClaimedReply[]> {
      checkClaim(nodeId, now, limit, leaseMs);
      const r = await db.query(CLAIM_REPLIES_SQL, [now, limit, nodeId, leaseMs]);
      return r.rows.map(toClaimed).sort((a, b) => a.dueAt - b.dueAt || (a.conversationId < b.conversationId ? -1 : 1));
    },
    /** Extends the reply leases `nodeId` still holds; returns conversation id → new expiry for those. */
    async renewReplyLeases(nodeId: string, held: ReadonlyArray<{ conversationId: string; lease: Lease }>, now: number, leaseMs: number): Promise<Map<string, number>> {
      if (held.length === 0) return new Map();
      const { keys, counts } = leaseArrays(held.map((h) => ({ key: h.conversationId, lease: h.lease })), nodeId);
      const r = await db.query(RENEW_SQL, [nodeId, now, leaseMs, keys, counts]);
      return new Map(r.rows.map((row) => [z.string().parse(row['conversation_id']), int8.parse(row['lease_until'])]));
    },
    /**
     * The answer to everything up to `answeredMessageId` is made: the timer ends if no newer
     * customer message was scheduled meanwhile (FinishResult). Call it first in the transaction
     * that would commit the reply and write the reply only on 'done', then commit either way:
     * on 'stale' the timer's release must commit too (rolled back, the newer message would wait
     * out this lease before any node answered it).
     */
    async finishReply(conversationId: string, lease: Lease, answeredMessageId: number): Promise<FinishResult> {
      const args = [conversationId, lease.holder, lease.count, answeredMessageId];
      if (((await db.query(DONE_SQL, args)).rowCount ?? 0) > 0) return 'done';
      if (((await db.query(STALE_SQL, args)).rowCount ?? 0) > 0) return 'stale';
      return 'lost';
    },
    /**
     * Not now (the per-minute cap): the timer fires again at `notBefore` (or at a newer
     * message's later time), claimable by any node. False when this claim is no longer the timer's.
     */
    async deferReply(conversationId: string, lease: Lease, notBefore: number): Promise<boolean> {
      return ((await db.query(DEFER_SQL, [conversationId, lease.holder, lease.count, notBefore])).rowCount ?? 0) > 0;
    },
    /** After a claim whose outcome was never learned: the timers leased to `nodeId` other than `held` are claimable again at once. */
    async releaseOrphanReplies(nodeId: string, held: readonly string[]): Promise<number> {
      return (await db.query(ORPHANS_SQL, [nodeId, held])).rowCount ?? 0;
    },
  };
}

export type PgReplyLeases = ReturnType<typeof pgReplyLeases>;
