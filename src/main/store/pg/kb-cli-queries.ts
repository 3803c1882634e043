import type pg from 'pg';
import { z } from 'zod';
import type { KbCliStore } from '../contract.ts';
import { cleanPhrasings } from '../kb.ts';
import { inPgTransaction } from './transaction.ts';
import { int8, type PgQueryable } from './pool.ts';

const listed = z.object({ id: int8, question: z.string(), answer: z.string() });

const insert = async (db: PgQueryable, question: string, answer: string, now: number, phrasings: readonly string[] = []): Promise<number> =>
  int8.parse(
    (await db.query('INSERT INTO kb_entries (question, answer, phrasings, created_at, updated_at) VALUES ($1, $2, $3, $4, $4) RETURNING id', [
      question,
      answer,
      JSON.stringify(cleanPhrasings(question, phrasings)),
      now,
    ])).rows[0].id,
  );

/** `kb add | import | list` on PostgreSQL: the SQLite store's rows and order (kb.ts); every node's mirror sees a change within a second. */
export function pgKbCliStore(pool: pg.Pool): KbCliStore {
  return {
    add: (question, answer, now) => insert(pool, question, answer, now),
    addAll: (pairs, now) =>
      inPgTransaction(pool, async (tx) => {
        for (const p of pairs) await insert(tx, p.question, p.answer, now, p.phrasings);
      }, { attempts: 1 }),
    list: async (limit) => (await pool.query('SELECT id, question, answer FROM kb_entries ORDER BY id LIMIT $1', [limit])).rows.map((r) => listed.parse(r)),
  };
}
