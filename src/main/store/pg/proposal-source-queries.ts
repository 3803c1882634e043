import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import type { LastReply, SourceMessage } from '../proposal-sources.ts';
import { int8, type PgQueryable } from './pool.ts';

const lastReplySchema = z.object({
  kind: z.enum(['auto', 'website', 'operator']),
  msg_id: z.string(),
  reply_to: z.string(),
  after_message_id: int8,
  content: z.string(),
  handoff: z.number(),
  cause: z.string().nullable(),
});
const decisionSchema = z.object({ handoff: z.number(), cause: z.string().nullable() });
const sourceSchema = z.object({ msg_id: z.string(), content: z.string().nullable(), from_user_id: z.string().nullable() });
const botReplySchema = z.object({ msg_id: z.string(), handoff: z.number(), cause: z.string().nullable() });

/** reply_to as SQLite's lastReply reads it: a JSON array's strings, anything else none. */
function replyToOf(text: string): string[] {
  const parsed = JSON.parse(text) as unknown;
  return Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === 'string') : [];
}

/** The reads behind a knowledge-base proposal (proposal-sources.ts) on PostgreSQL: the same results, on the same per-conversation indexes. */
export function pgProposalSourceQueries(db: PgQueryable): StoreContract['proposalSources'] {
  return {
    async lastReply(conversationId: string, exceptMsgId: string): Promise<LastReply | null> {
      const raw = (
        await db.query(
          `SELECT kind, msg_id, reply_to, after_message_id, content, handoff, cause FROM replies
           WHERE conversation_id = $1 AND kind != 'suggestion' AND msg_id != $2 ORDER BY after_message_id DESC, id DESC LIMIT 1`,
          [conversationId, exceptMsgId],
        )
      ).rows[0];
      if (raw === undefined) return null;
      const r = lastReplySchema.parse(raw);
      return { kind: r.kind, msgId: r.msg_id, replyTo: replyToOf(r.reply_to), afterMessageId: r.after_message_id, content: r.content, handoff: r.handoff === 1, cause: r.cause };
    },
    async botDecisionSince(conversationId: string, messageId: number): Promise<'handoff' | 'answered' | null> {
      const raw = (
        await db.query(`SELECT handoff, cause FROM replies WHERE conversation_id = $1 AND kind IN ('auto', 'website') AND after_message_id >= $2 ORDER BY id DESC LIMIT 1`, [
          conversationId,
          messageId,
        ])
      ).rows[0];
      if (raw === undefined) return null;
      const r = decisionSchema.parse(raw);
      return r.handoff === 1 || r.cause !== null ? 'handoff' : 'answered';
    },
    async spokeAfter(conversationId: string, messageId: number): Promise<boolean> {
      const r = await db.query("SELECT EXISTS (SELECT 1 FROM messages WHERE conversation_id = $1 AND id > $2 AND role IN ('customer', 'staff')) AS spoke", [conversationId, messageId]);
      return z.boolean().parse(r.rows[0].spoke);
    },
    async customerMessages(conversationId: string, msgIds: readonly string[]): Promise<SourceMessage[]> {
      if (msgIds.length === 0) return [];
      const r = await db.query(`SELECT msg_id, content, from_user_id FROM messages WHERE conversation_id = $1 AND role = 'customer' AND msg_id = ANY($2::text[]) ORDER BY id`, [
        conversationId,
        msgIds,
      ]);
      return r.rows.map((raw) => {
        const m = sourceSchema.parse(raw);
        return { msgId: m.msg_id, content: m.content, fromUserId: m.from_user_id };
      });
    },
    async botReplies(conversationId: string, msgIds: readonly string[]): Promise<Array<{ msgId: string; answered: boolean }>> {
      if (msgIds.length === 0) return [];
      const r = await db.query(`SELECT msg_id, handoff, cause FROM replies WHERE conversation_id = $1 AND kind IN ('auto', 'website') AND msg_id = ANY($2::text[]) ORDER BY id`, [
        conversationId,
        msgIds,
      ]);
      return r.rows.map((raw) => {
        const b = botReplySchema.parse(raw);
        return { msgId: b.msg_id, answered: b.handoff === 0 && b.cause === null };
      });
    },
    // SQLite's DISTINCT keeps the order it first meets each id in along the conversation's index: first message first.
    async customerIds(conversationId: string): Promise<string[]> {
      const r = await db.query(
        `SELECT from_user_id FROM messages WHERE conversation_id = $1 AND role = 'customer' AND from_user_id IS NOT NULL
         GROUP BY from_user_id ORDER BY min(id) LIMIT 50`,
        [conversationId],
      );
      return r.rows.map((raw) => z.string().parse(raw.from_user_id));
    },
  };
}
