import type { Db } from './db.ts';
import type { AuditAction, AuditItem, CannedReply, Operator } from '../../shared/console-workspace.ts';

export interface NewAudit {
  at: number;
  /** Null for actions that do not require an operator (retries, client changes) made before one was set. */
  operator: Operator | null;
  action: AuditAction;
  conversationId: string | null;
  detail: string | null;
}

/** Shown for audit rows written while no operator was set. */
export const NO_OPERATOR: Operator = { id: '-', name: '(no operator set)' };

interface RawAudit {
  id: number;
  at: number;
  operator_id: string | null;
  operator_name: string | null;
  action: AuditAction;
  conversation_id: string | null;
  detail: string | null;
}

/** Who did what in the console, newest first. */
export function auditQueries(db: Db) {
  const insert = db.prepare('INSERT INTO audit (at, operator_id, operator_name, action, conversation_id, detail) VALUES (?, ?, ?, ?, ?, ?)');
  const recent = db.prepare('SELECT * FROM audit ORDER BY id DESC LIMIT ?');
  const ofConversation = db.prepare('SELECT * FROM audit WHERE conversation_id = ? ORDER BY id DESC LIMIT ?');
  return {
    insert(a: NewAudit): void {
      insert.run(a.at, a.operator?.id ?? null, a.operator?.name ?? null, a.action, a.conversationId, a.detail);
    },
    list(conversationId: string | undefined, limit: number): AuditItem[] {
      const rows = (conversationId === undefined ? recent.all(limit) : ofConversation.all(conversationId, limit)) as unknown as RawAudit[];
      return rows.map((r) => ({
        id: r.id,
        at: r.at,
        operator: r.operator_id !== null && r.operator_name !== null ? { id: r.operator_id, name: r.operator_name } : NO_OPERATOR,
        action: r.action,
        conversationId: r.conversation_id,
        detail: r.detail,
      }));
    },
  };
}

interface RawCanned {
  id: number;
  title: string;
  content: string;
  updated_at: number;
}

const toCanned = (r: RawCanned): CannedReply => ({ id: r.id, title: r.title, content: r.content, updatedAt: r.updated_at });

/** Saved snippets the compose box inserts. A few hundred at most: a scan with instr() is instant. */
export function cannedQueries(db: Db) {
  const all = db.prepare('SELECT * FROM canned_replies ORDER BY title COLLATE NOCASE, id');
  const search = db.prepare('SELECT * FROM canned_replies WHERE instr(lower(title), ?1) > 0 OR instr(lower(content), ?1) > 0 ORDER BY title COLLATE NOCASE, id');
  const byId = db.prepare('SELECT * FROM canned_replies WHERE id = ?');
  const insert = db.prepare('INSERT INTO canned_replies (title, content, created_at, updated_at) VALUES (?, ?, ?, ?)');
  const update = db.prepare('UPDATE canned_replies SET title = ?, content = ?, updated_at = ? WHERE id = ?');
  const remove = db.prepare('DELETE FROM canned_replies WHERE id = ?');
  return {
    list(term?: string): CannedReply[] {
      const rows = term ? search.all(term.toLowerCase()) : all.all();
      return (rows as unknown as RawCanned[]).map(toCanned);
    },
    get(id: number): CannedReply | undefined {
      const r = byId.get(id) as RawCanned | undefined;
      return r && toCanned(r);
    },
    add(title: string, content: string, now: number): number {
      return Number(insert.run(title, content, now, now).lastInsertRowid);
    },
    update(id: number, title: string, content: string, now: number): boolean {
      return update.run(title, content, now, id).changes > 0;
    },
    remove(id: number): boolean {
      return remove.run(id).changes > 0;
    },
  };
}
