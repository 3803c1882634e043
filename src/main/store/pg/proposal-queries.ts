import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import { pendingChangesOf, proposalReader, type NewProposal, type PendingChanges } from '../proposals.ts';
import type { KbProposal, ProposalState } from '../../../shared/console-learn.ts';
import type { Operator } from '../../../shared/console-workspace.ts';
import { int8, type PgQueryable } from './pool.ts';

const toProposal = proposalReader(int8, z.array(z.string()));

const changed = (r: { rowCount: number | null }): number => r.rowCount ?? 0;

/** The Learn queue's proposals (proposals.ts) on PostgreSQL: the same rows, order and counts. */
export function pgProposalQueries(db: PgQueryable): StoreContract['proposals'] {
  const list = async (state: ProposalState, limit: number): Promise<KbProposal[]> =>
    (await db.query('SELECT * FROM kb_proposals WHERE state = $1 ORDER BY id DESC LIMIT $2', [state, limit])).rows.map(toProposal);
  return {
    async add(p: NewProposal): Promise<number> {
      const r = await db.query(
        `INSERT INTO kb_proposals (kind, source, question, answer, entry_id, conversation_id, message_ids, operator_id, operator_name, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $10) RETURNING id`,
        [p.kind, p.source, p.question, p.answer, p.entryId, p.conversationId, JSON.stringify(p.messageIds), p.operator?.id ?? null, p.operator?.name ?? null, p.now],
      );
      return int8.parse(r.rows[0].id);
    },
    async duplicate(conversationId: string, question: string, answer: string): Promise<number | null> {
      const r = await db.query("SELECT id FROM kb_proposals WHERE conversation_id = $1 AND state = 'pending' AND question = $2 AND answer = $3 ORDER BY id LIMIT 1", [
        conversationId,
        question,
        answer,
      ]);
      return r.rows[0] === undefined ? null : int8.parse(r.rows[0].id);
    },
    async get(id: number): Promise<KbProposal | undefined> {
      const r = (await db.query('SELECT * FROM kb_proposals WHERE id = $1', [id])).rows[0];
      return r === undefined ? undefined : toProposal(r);
    },
    list,
    async pendingCount(): Promise<number> {
      return int8.parse((await db.query("SELECT count(*) AS n FROM kb_proposals WHERE state = 'pending'")).rows[0].n);
    },
    async edit(id: number, change: { question: string; answer: string; entryId: number | null }, now: number): Promise<boolean> {
      const r = await db.query("UPDATE kb_proposals SET kind = $1, question = $2, answer = $3, entry_id = $4, updated_at = $5 WHERE id = $6 AND state = 'pending'", [
        change.entryId === null ? 'entry' : 'phrasing',
        change.question,
        change.answer,
        change.entryId,
        now,
        id,
      ]);
      return changed(r) > 0;
    },
    /**
     * One conditional UPDATE: a proposal another node decided first (its transaction committed
     * while this one waited on the row) no longer matches state = 'pending' when PostgreSQL
     * rechecks it, so of two admins deciding the same proposal at once exactly one counts it. The
     * rows are locked in id order, so two decisions over the same ids in any order do not deadlock.
     */
    async decide(ids: readonly number[], d: { state: Exclude<ProposalState, 'pending'>; by: Operator; at: number; reason: string | null; resultEntryId: number | null }): Promise<number> {
      if (ids.length === 0) return 0;
      const r = await db.query(
        `UPDATE kb_proposals SET state = $2, decided_by_id = $3, decided_by_name = $4, decided_at = $5, reason = $6, result_entry_id = $7
         WHERE state = 'pending' AND id IN (SELECT id FROM kb_proposals WHERE id = ANY($1::bigint[]) AND state = 'pending' ORDER BY id FOR UPDATE)`,
        [ids, d.state, d.by.id, d.by.name, d.at, d.reason, d.resultEntryId],
      );
      return changed(r);
    },
    async pendingChanges(): Promise<PendingChanges> {
      return pendingChangesOf(await list('pending', 10_000));
    },
  };
}
