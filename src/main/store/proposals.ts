import { z } from 'zod';
import type { Db } from './db.ts';
import type { KbProposal, ProposalKind, ProposalSource, ProposalState } from '../../shared/console-learn.ts';
import type { Operator } from '../../shared/console-workspace.ts';
import { PROPOSAL_KINDS, PROPOSAL_SOURCES, PROPOSAL_STATES } from '../../shared/console-learn.ts';
import { groupProposals } from '../learn/grouping.ts';

export interface NewProposal {
  kind: ProposalKind;
  source: ProposalSource;
  question: string;
  answer: string;
  entryId: number | null;
  conversationId: string | null;
  messageIds: readonly string[];
  operator: Operator | null;
  now: number;
}

/** A candidate knowledge-base change: what approving every pending proposal would do (replay's input). */
export interface PendingChanges {
  entries: Array<{ question: string; answer: string; phrasings: string[] }>;
  phrasings: Array<{ entryId: number; text: string }>;
}

/**
 * A proposal as re-read from either store: rows are checked, since the table's CHECKs hold today
 * and a hand edit may not. `int` reads an integer column and `ids` the message ids column as each
 * database returns them (SQLite: numbers and JSON text; PostgreSQL: int8 and a JSON array).
 */
export function proposalReader(int: z.ZodType<number, unknown>, ids: z.ZodType<string[], unknown>): (raw: unknown) => KbProposal {
  const rowSchema = z.object({
    id: int,
    kind: z.enum(PROPOSAL_KINDS),
    state: z.enum(PROPOSAL_STATES),
    source: z.enum(PROPOSAL_SOURCES),
    question: z.string(),
    answer: z.string(),
    entry_id: int.nullable(),
    conversation_id: z.string().nullable(),
    message_ids: ids,
    operator_id: z.string().nullable(),
    operator_name: z.string().nullable(),
    created_at: int,
    updated_at: int,
    decided_by_id: z.string().nullable(),
    decided_by_name: z.string().nullable(),
    decided_at: int.nullable(),
    reason: z.string().nullable(),
    result_entry_id: int.nullable(),
  });
  const person = (id: string | null, name: string | null): Operator | null => (id !== null && name !== null ? { id, name } : null);
  return (raw) => {
    const r = rowSchema.parse(raw);
    return {
      id: r.id,
      kind: r.kind,
      state: r.state,
      source: r.source,
      question: r.question,
      answer: r.answer,
      entryId: r.entry_id,
      conversationId: r.conversation_id,
      messageIds: r.message_ids,
      operator: person(r.operator_id, r.operator_name),
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      decidedBy: person(r.decided_by_id, r.decided_by_name),
      decidedAt: r.decided_at,
      reason: r.reason,
      resultEntryId: r.result_entry_id,
    };
  };
}

const toProposal = proposalReader(z.number(), z.string().transform((s) => z.array(z.string()).parse(JSON.parse(s))));

/**
 * Pending proposals as one candidate knowledge-base change (the replay's "with proposals"): each
 * group of like questions one new entry (its newest proposal's question and answer, the others'
 * questions its phrasings), each proposed phrasing one more way to ask its entry. Both stores'.
 */
export function pendingChangesOf(pending: readonly KbProposal[]): PendingChanges {
  const entries: PendingChanges['entries'] = [];
  for (const g of groupProposals(pending.filter((p) => p.kind === 'entry'), 0)) {
    const [head, ...rest] = g.proposals;
    const phrasings = [...new Set(rest.map((p) => p.question).filter((q) => q !== head!.question))];
    entries.push({ question: head!.question, answer: head!.answer, phrasings });
  }
  const phrasings = pending.flatMap((p) => (p.kind === 'phrasing' && p.entryId !== null ? [{ entryId: p.entryId, text: p.question }] : []));
  return { entries, phrasings };
}

/** Knowledge-base changes proposed from operators' answers, waiting for (or given) an admin's decision. */
export function proposalQueries(db: Db) {
  const insert = db.prepare(
    `INSERT INTO kb_proposals (kind, source, question, answer, entry_id, conversation_id, message_ids, operator_id, operator_name, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byId = db.prepare('SELECT * FROM kb_proposals WHERE id = ?');
  const inState = db.prepare('SELECT * FROM kb_proposals WHERE state = ? ORDER BY id DESC LIMIT ?');
  const pendingCount = db.prepare("SELECT count(*) AS n FROM kb_proposals WHERE state = 'pending'");
  const edit = db.prepare("UPDATE kb_proposals SET kind = ?, question = ?, answer = ?, entry_id = ?, updated_at = ? WHERE id = ? AND state = 'pending'");
  const decide = db.prepare(
    `UPDATE kb_proposals SET state = ?, decided_by_id = ?, decided_by_name = ?, decided_at = ?, reason = ?, result_entry_id = ?
     WHERE id = ? AND state = 'pending'`,
  );
  // The same customer message answered twice (a reply, then a correction) proposes once.
  const sameSource = db.prepare("SELECT id FROM kb_proposals WHERE conversation_id = ? AND state = 'pending' AND question = ? AND answer = ? LIMIT 1");

  const list = (state: ProposalState, limit: number): KbProposal[] => inState.all(state, limit).map(toProposal);

  return {
    add(p: NewProposal): number {
      return Number(
        insert.run(p.kind, p.source, p.question, p.answer, p.entryId, p.conversationId, JSON.stringify(p.messageIds), p.operator?.id ?? null, p.operator?.name ?? null, p.now, p.now)
          .lastInsertRowid,
      );
    },
    /** A pending proposal of this conversation with the same texts, if one exists. */
    duplicate(conversationId: string, question: string, answer: string): number | null {
      return (sameSource.get(conversationId, question, answer) as { id: number } | undefined)?.id ?? null;
    },
    get(id: number): KbProposal | undefined {
      const r = byId.get(id);
      return r === undefined ? undefined : toProposal(r);
    },
    /** Newest first. */
    list,
    pendingCount(): number {
      return (pendingCount.get() as { n: number }).n;
    },
    /** False when there is no such proposal still pending. */
    edit(id: number, change: { question: string; answer: string; entryId: number | null }, now: number): boolean {
      return edit.run(change.entryId === null ? 'entry' : 'phrasing', change.question, change.answer, change.entryId, now, id).changes > 0;
    },
    /** Decides the pending ones among `ids`; returns how many were (a decided one stays as it was). */
    decide(ids: readonly number[], d: { state: Exclude<ProposalState, 'pending'>; by: Operator; at: number; reason: string | null; resultEntryId: number | null }): number {
      let n = 0;
      for (const id of ids) n += Number(decide.run(d.state, d.by.id, d.by.name, d.at, d.reason, d.resultEntryId, id).changes);
      return n;
    },
    /**
     * The pending proposals as one candidate knowledge-base change (the replay's "with proposals"):
     * each group of like questions one new entry (its newest proposal's question and answer, the
     * others' questions its phrasings), each proposed phrasing one more way to ask its entry.
     */
    pendingChanges(): PendingChanges {
      return pendingChangesOf(list('pending', 10_000));
    },
  };
}

export type ProposalQueries = ReturnType<typeof proposalQueries>;
