import { z } from 'zod';
import type { Db } from './db.ts';

/** "Also asked as": other ways customers put the entry's question. */
export const phrasingsSchema = z.array(z.string());
export const parsePhrasings = (json: string): string[] => phrasingsSchema.parse(JSON.parse(json));

/** What makes two phrasings the same: case, spacing and punctuation do not ("Can I pay?" = "can i pay"). */
const sameKey = (text: string): string => text.normalize('NFKC').toLowerCase().replace(/[\p{P}\p{S}\s]+/gu, ' ').trim();

/** Trimmed, blank and repeated ones (and the question itself) dropped, first kept. */
export function cleanPhrasings(question: string, phrasings: readonly string[]): string[] {
  const seen = new Set([sameKey(question)]);
  const out: string[] = [];
  for (const p of phrasings) {
    const t = p.trim();
    const key = sameKey(t);
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    out.push(t);
  }
  return out;
}

export interface KbEntry {
  id: number;
  question: string;
  answer: string;
  phrasings: string[];
  createdAt: number;
  updatedAt: number;
}

interface Raw {
  id: number;
  question: string;
  answer: string;
  phrasings: string;
  created_at: number;
  updated_at: number;
}

const toEntry = (r: Raw): KbEntry => ({ id: r.id, question: r.question, answer: r.answer, phrasings: parsePhrasings(r.phrasings), createdAt: r.created_at, updatedAt: r.updated_at });

export function kbQueries(db: Db) {
  const insert = db.prepare('INSERT INTO kb_entries (question, answer, phrasings, created_at, updated_at) VALUES (?, ?, ?, ?, ?)');
  const update = db.prepare('UPDATE kb_entries SET question = ?, answer = ?, phrasings = ?, updated_at = ? WHERE id = ?');
  const setPhrasings = db.prepare('UPDATE kb_entries SET phrasings = ?, updated_at = ? WHERE id = ?');
  const remove = db.prepare('DELETE FROM kb_entries WHERE id = ?');
  const byId = db.prepare('SELECT * FROM kb_entries WHERE id = ?');
  const list = db.prepare('SELECT * FROM kb_entries ORDER BY id LIMIT ? OFFSET ?');
  const count = db.prepare('SELECT count(*) AS n FROM kb_entries');
  const search = db.prepare(
    'SELECT * FROM kb_entries WHERE instr(lower(question), ?1) > 0 OR instr(lower(answer), ?1) > 0 OR instr(lower(phrasings), ?1) > 0 ORDER BY id LIMIT ?2',
  );
  const all = db.prepare('SELECT id, question, answer, phrasings FROM kb_entries ORDER BY id');
  // FTS5's structure record (rowid 10 of its data table) is rewritten by every transaction that
  // changes the index, which the triggers do on each insert, update and delete of an entry.
  const structure = db.prepare('SELECT block FROM kb_fts_data WHERE id = 10');

  return {
    add(question: string, answer: string, now: number, phrasings: readonly string[] = []): number {
      return Number(insert.run(question, answer, JSON.stringify(cleanPhrasings(question, phrasings)), now, now).lastInsertRowid);
    },
    /** Phrasings left out keep the entry's own. */
    update(id: number, question: string, answer: string, now: number, phrasings?: readonly string[]): boolean {
      let list = phrasings;
      if (list === undefined) {
        const stored = byId.get(id) as Raw | undefined;
        if (!stored) return false;
        list = parsePhrasings(stored.phrasings);
      }
      return update.run(question, answer, JSON.stringify(cleanPhrasings(question, list)), now, id).changes > 0;
    },
    /** Adds one more way to ask the entry's question; false when there is no such entry. */
    addPhrasing(id: number, phrasing: string, now: number): boolean {
      const r = byId.get(id) as Raw | undefined;
      if (!r) return false;
      const list = cleanPhrasings(r.question, [...parsePhrasings(r.phrasings), phrasing]);
      return setPhrasings.run(JSON.stringify(list), now, id).changes > 0;
    },
    remove(id: number): boolean {
      return remove.run(id).changes > 0;
    },
    get(id: number): KbEntry | undefined {
      const r = byId.get(id) as Raw | undefined;
      return r && toEntry(r);
    },
    list(limit: number, offset = 0): KbEntry[] {
      return (list.all(limit, offset) as unknown as Raw[]).map(toEntry);
    },
    /** Entries whose question, answer or phrasings contain `term` (the console's search box). */
    search(term: string, limit: number): KbEntry[] {
      return (search.all(term.toLowerCase(), limit) as unknown as Raw[]).map(toEntry);
    },
    count(): number {
      return (count.get() as { n: number }).n;
    },
    /** Every entry in id order (the engine thread's in-memory index is built from it). */
    all(): Array<{ id: number; question: string; answer: string; phrasings: string[] }> {
      return (all.all() as unknown as Array<{ id: number; question: string; answer: string; phrasings: string }>).map((r) => ({ ...r, phrasings: parsePhrasings(r.phrasings) }));
    },
    /**
     * Changes whenever an entry is added, edited or removed (by any process): a point read, cheap
     * enough to check before every match.
     */
    version(): Uint8Array {
      return (structure.get() as { block: Uint8Array } | undefined)?.block ?? new Uint8Array();
    },
  };
}

export type KbQueries = ReturnType<typeof kbQueries>;
