import type pg from 'pg';
import { z } from 'zod';
import type { KbCliStore } from '../contract.ts';
import { inPgTransaction } from './transaction.ts';
import { int8 } from './pool.ts';
import { pgKbQueries } from './kb-queries.ts';

const listed = z.object({ id: int8, question: z.string(), answer: z.string() });

/** `kb add | import | list` on PostgreSQL: the SQLite store's rows and order (kb.ts); every node's mirror sees a change within a second. */
export function pgKbCliStore(pool: pg.Pool): KbCliStore {
  return {
    add: (question, answer, now) => pgKbQueries(pool).add(question, answer, now),
    addAll: (pairs, now) =>
      inPgTransaction(pool, async (tx) => {
        const kb = pgKbQueries(tx);
        for (const p of pairs) await kb.add(p.question, p.answer, now, p.phrasings);
      }, { attempts: 1 }),
    list: async (limit) => (await pool.query('SELECT id, question, answer FROM kb_entries ORDER BY id LIMIT $1', [limit])).rows.map((r) => listed.parse(r)),
  };
}
