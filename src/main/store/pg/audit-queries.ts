import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import { NO_OPERATOR, type AuditFilter, type NewAudit } from '../audit.ts';
import type { AuditAction, AuditItem } from '../../../shared/console-workspace.ts';
import { int8, type PgQueryable } from './pool.ts';

const auditRow = z.object({
  id: int8,
  at: int8,
  operator_id: z.string().nullable(),
  operator_name: z.string().nullable(),
  action: z.string(),
  conversation_id: z.string().nullable(),
  detail: z.string().nullable(),
  address: z.string().nullable(),
});

/** Who did what in the console, newest first (audit.ts) on PostgreSQL: one statement per mix of filters, each on its index. */
export function pgAuditQueries(db: PgQueryable): StoreContract['audit'] {
  async function search(filter: AuditFilter): Promise<AuditItem[]> {
    const values: unknown[] = [];
    const where: string[] = [];
    const add = (column: string, value: string | undefined): void => {
      if (value === undefined) return;
      values.push(value);
      where.push(`${column} = $${values.length}`);
    };
    add('conversation_id', filter.conversationId);
    add('operator_id', filter.operatorId);
    add('action', filter.action);
    values.push(filter.limit);
    const sql = `SELECT * FROM audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${values.length}`;
    return (await db.query(sql, values)).rows.map((raw) => {
      const r = auditRow.parse(raw);
      return {
        id: r.id,
        at: r.at,
        operator: r.operator_id !== null && r.operator_name !== null ? { id: r.operator_id, name: r.operator_name } : NO_OPERATOR,
        action: r.action as AuditAction,
        conversationId: r.conversation_id,
        detail: r.detail,
        address: r.address,
      };
    });
  }
  return {
    async insert(a: NewAudit): Promise<void> {
      await db.query('INSERT INTO audit (at, operator_id, operator_name, action, conversation_id, detail, address) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
        a.at, a.operator?.id ?? null, a.operator?.name ?? null, a.action, a.conversationId, a.detail, a.address ?? a.operator?.address ?? null,
      ]);
    },
    list: (conversationId: string | undefined, limit: number) => search(conversationId === undefined ? { limit } : { conversationId, limit }),
    search,
  };
}
