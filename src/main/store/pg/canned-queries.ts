import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import type { CannedReply } from '../../../shared/console-workspace.ts';
import { int8, type PgQueryable } from './pool.ts';

const cannedRow = z.object({ id: int8, title: z.string(), content: z.string(), updated_at: int8 });

const toCanned = (raw: unknown): CannedReply => {
  const r = cannedRow.parse(raw);
  return { id: r.id, title: r.title, content: r.content, updatedAt: r.updated_at };
};

/**
 * SQLite's lower() and COLLATE NOCASE fold A–Z only (no ICU): the same fold here, so that titles
 * sort and match alike on both stores whatever PostgreSQL's locale would do with é or Straße.
 */
const asciiLower = (column: string): string => `translate(${column}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`;
const ORDER = `ORDER BY ${asciiLower('title')} COLLATE "C", id`;

/**
 * The canned group (store/audit.ts cannedQueries) on PostgreSQL: the same functions and results.
 * A search is strpos (SQLite's instr), not LIKE: the term's % and _ are plain text, and a few
 * hundred snippets scan in no time.
 */
export function pgCannedQueries(db: PgQueryable): StoreContract['canned'] {
  return {
    async list(term?: string): Promise<CannedReply[]> {
      const r = term
        ? await db.query(`SELECT * FROM canned_replies WHERE strpos(${asciiLower('title')}, $1) > 0 OR strpos(${asciiLower('content')}, $1) > 0 ${ORDER}`, [term.toLowerCase()])
        : await db.query(`SELECT * FROM canned_replies ${ORDER}`);
      return r.rows.map(toCanned);
    },
    async get(id: number): Promise<CannedReply | undefined> {
      const row = (await db.query('SELECT * FROM canned_replies WHERE id = $1', [id])).rows[0];
      return row ? toCanned(row) : undefined;
    },
    async add(title: string, content: string, now: number): Promise<number> {
      return int8.parse((await db.query('INSERT INTO canned_replies (title, content, created_at, updated_at) VALUES ($1, $2, $3, $3) RETURNING id', [title, content, now])).rows[0].id);
    },
    update: async (id: number, title: string, content: string, now: number) =>
      ((await db.query('UPDATE canned_replies SET title = $1, content = $2, updated_at = $3 WHERE id = $4', [title, content, now, id])).rowCount ?? 0) > 0,
    remove: async (id: number) => ((await db.query('DELETE FROM canned_replies WHERE id = $1', [id])).rowCount ?? 0) > 0,
  };
}
