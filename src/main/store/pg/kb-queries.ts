import { z } from 'zod';
import type { StoreContract } from '../contract.ts';
import { cleanPhrasings, phrasingsSchema, type KbEntry } from '../kb.ts';
import { int8, type PgQueryable } from './pool.ts';

const entrySchema = z.object({ id: int8, question: z.string(), answer: z.string(), phrasings: phrasingsSchema, created_at: int8, updated_at: int8 });
const allSchema = z.object({ id: int8, question: z.string(), answer: z.string(), phrasings: phrasingsSchema });

const toEntry = (raw: unknown): KbEntry => {
  const r = entrySchema.parse(raw);
  return { id: r.id, question: r.question, answer: r.answer, phrasings: r.phrasings, createdAt: r.created_at, updatedAt: r.updated_at };
};

const COLUMNS = 'id, question, answer, phrasings, created_at, updated_at';

/** `term` as a LIKE pattern matching it anywhere, its own % _ and \ taken literally. */
export const containsPattern = (term: string): string => `%${term.replace(/[\\%_]/g, '\\$&')}%`;

/**
 * A read-then-write of one entry's phrasings rechecks on write that they are still what was read
 * (compare-and-set on the jsonb), so an edit on another node between the two is never lost: the
 * loser reads again. The cleaning (NFKC, Unicode punctuation) is JavaScript's, as on SQLite.
 */
const CAS_ATTEMPTS = 20;

/**
 * The knowledge base (kb.ts) on PostgreSQL: the same entries, order and booleans.
 *
 * search: SQLite's is a substring match (instr over lower()) on the question, the answer and the
 * phrasings' JSON text, in id order. Here it is ILIKE '%term%' on question and answer (served by
 * the trigram GIN indexes kb_entries_question_trgm/answer_trgm) and on each phrasing, in id order:
 * the same entries, with two deliberate differences. Case folding is Unicode's (SQLite's lower()
 * folds ASCII only, so "É" never matched there), and a term spanning the JSON syntax between two
 * phrasings (`","`, an escaped quote) matches nothing here.
 *
 * version: kb_version.n (bumped by a statement trigger on any change, on any node) as 8 bytes, the
 * same bytes the configuration mirror gives, so a value read here and one read there compare.
 */
export function pgKbQueries(db: PgQueryable): StoreContract['kb'] {
  const storedPhrasings = async (id: number): Promise<{ question: string; phrasings: string[] } | undefined> => {
    const r = (await db.query('SELECT question, phrasings FROM kb_entries WHERE id = $1', [id])).rows[0];
    return r === undefined ? undefined : z.object({ question: z.string(), phrasings: phrasingsSchema }).parse(r);
  };

  /** Writes `next(stored)` unless another writer changed the phrasings meanwhile; false when the entry is gone. */
  async function rewrite(id: number, set: string, values: unknown[], next: (stored: { question: string; phrasings: string[] }) => string[]): Promise<boolean> {
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const stored = await storedPhrasings(id);
      if (!stored) return false;
      const n = values.length;
      const r = await db.query(`UPDATE kb_entries SET ${set}, phrasings = $${n + 1}::jsonb WHERE id = $${n + 2} AND phrasings = $${n + 3}::jsonb`, [
        ...values,
        JSON.stringify(next(stored)),
        id,
        JSON.stringify(stored.phrasings),
      ]);
      if ((r.rowCount ?? 0) > 0) return true;
    }
    throw new Error(`kb entry ${id}: its phrasings kept changing under ${CAS_ATTEMPTS} attempts to edit them`);
  }

  return {
    async add(question: string, answer: string, now: number, phrasings: readonly string[] = []): Promise<number> {
      const r = await db.query('INSERT INTO kb_entries (question, answer, phrasings, created_at, updated_at) VALUES ($1, $2, $3::jsonb, $4, $4) RETURNING id', [
        question,
        answer,
        JSON.stringify(cleanPhrasings(question, phrasings)),
        now,
      ]);
      return int8.parse(r.rows[0].id);
    },
    async update(id: number, question: string, answer: string, now: number, phrasings?: readonly string[]): Promise<boolean> {
      if (phrasings !== undefined) {
        const r = await db.query('UPDATE kb_entries SET question = $1, answer = $2, phrasings = $3::jsonb, updated_at = $4 WHERE id = $5', [
          question,
          answer,
          JSON.stringify(cleanPhrasings(question, phrasings)),
          now,
          id,
        ]);
        return (r.rowCount ?? 0) > 0;
      }
      return rewrite(id, 'question = $1, answer = $2, updated_at = $3', [question, answer, now], (s) => cleanPhrasings(question, s.phrasings));
    },
    addPhrasing(id: number, phrasing: string, now: number): Promise<boolean> {
      return rewrite(id, 'updated_at = $1', [now], (s) => cleanPhrasings(s.question, [...s.phrasings, phrasing]));
    },
    async remove(id: number): Promise<boolean> {
      return ((await db.query('DELETE FROM kb_entries WHERE id = $1', [id])).rowCount ?? 0) > 0;
    },
    async get(id: number): Promise<KbEntry | undefined> {
      const r = (await db.query(`SELECT ${COLUMNS} FROM kb_entries WHERE id = $1`, [id])).rows[0];
      return r === undefined ? undefined : toEntry(r);
    },
    async list(limit: number, offset = 0): Promise<KbEntry[]> {
      return (await db.query(`SELECT ${COLUMNS} FROM kb_entries ORDER BY id LIMIT $1 OFFSET $2`, [limit, offset])).rows.map(toEntry);
    },
    async search(term: string, limit: number): Promise<KbEntry[]> {
      const r = await db.query(
        `SELECT ${COLUMNS} FROM kb_entries
         WHERE question ILIKE $1 OR answer ILIKE $1 OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(phrasings) p WHERE p ILIKE $1)
         ORDER BY id LIMIT $2`,
        [containsPattern(term), limit],
      );
      return r.rows.map(toEntry);
    },
    async count(): Promise<number> {
      return int8.parse((await db.query('SELECT count(*) AS n FROM kb_entries')).rows[0].n);
    },
    async all(): Promise<Array<{ id: number; question: string; answer: string; phrasings: string[] }>> {
      return (await db.query('SELECT id, question, answer, phrasings FROM kb_entries ORDER BY id')).rows.map((r) => allSchema.parse(r));
    },
    async version(): Promise<Uint8Array> {
      const n = int8.parse((await db.query('SELECT n FROM kb_version')).rows[0].n);
      const bytes = new Uint8Array(8);
      new DataView(bytes.buffer).setFloat64(0, n);
      return bytes;
    },
  };
}
