import type { Db } from './db.ts';
import type { AuditAction, AuditItem, CannedReply, Operator } from '../../shared/console-workspace.ts';

export interface NewAudit {
  at: number;
  /**
   * Null for actions that do not require an operator (retries, client changes) made before one was
   * set. An operator from requireOperator carries the caller's address: every command that audits
   * records where its action came from without passing it along by hand.
   */
  operator: (Operator & { address?: string | null }) | null;
  action: AuditAction;
  conversationId: string | null;
  detail: string | null;
  /** The caller's remote address (HTTP); absent or null from the desktop window. */
  address?: string | null;
}

/** Which audit rows to list: each filter narrows, all together (the admin's audit view). */
export interface AuditFilter {
  conversationId?: string;
  operatorId?: string;
  action?: AuditAction;
  limit: number;
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
  address: string | null;
}

/** Who did what in the console, newest first. */
export function auditQueries(db: Db) {
  const insert = db.prepare('INSERT INTO audit (at, operator_id, operator_name, action, conversation_id, detail, address) VALUES (?, ?, ?, ?, ?, ?, ?)');
  // One statement per mix of filters, made when first used: `:x IS NULL OR col = :x` would keep
  // SQLite from using the index of the filter given (conversation, operator or action).
  const statements = new Map<string, ReturnType<Db['prepare']>>();
  const statementFor = (filter: AuditFilter) => {
    const where = [
      filter.conversationId !== undefined ? 'conversation_id = :conversation' : null,
      filter.operatorId !== undefined ? 'operator_id = :operator' : null,
      filter.action !== undefined ? 'action = :action' : null,
    ].filter((w) => w !== null);
    const sql = `SELECT * FROM audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT :limit`;
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
  return {
    insert(a: NewAudit): void {
      insert.run(a.at, a.operator?.id ?? null, a.operator?.name ?? null, a.action, a.conversationId, a.detail, a.address ?? a.operator?.address ?? null);
    },
    /** A conversation's rows, or everyone's, newest first. */
    list(conversationId: string | undefined, limit: number): AuditItem[] {
      return search(conversationId === undefined ? { limit } : { conversationId, limit });
    },
    search,
  };
  function search(filter: AuditFilter): AuditItem[] {
      const params: Record<string, string | number> = { limit: filter.limit };
      if (filter.conversationId !== undefined) params['conversation'] = filter.conversationId;
      if (filter.operatorId !== undefined) params['operator'] = filter.operatorId;
      if (filter.action !== undefined) params['action'] = filter.action;
      const rows = statementFor(filter).all(params) as unknown as RawAudit[];
      return rows.map((r) => ({
        id: r.id,
        at: r.at,
        operator: r.operator_id !== null && r.operator_name !== null ? { id: r.operator_id, name: r.operator_name } : NO_OPERATOR,
        action: r.action,
        conversationId: r.conversation_id,
        detail: r.detail,
        address: r.address,
      }));
  }
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
