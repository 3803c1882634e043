import type { Migration } from '../migrate.ts';

/**
 * Message search merges its index in small steps, one per commit, instead of in lumps (issue 10,
 * "no commit waits on more than a few milliseconds of batched work"). FTS5's automerge does its
 * merge work in bursts: every 64 leaf pages written it merges 64 pages per level of the index at
 * once, and with the trigram tokenizer that was a 30–60 ms commit a few times a second under load,
 * which every request in that batch waited for. With automerge off, the search queue's flush runs
 * a 'merge' step sized by the text it indexed (store/search-index.ts). The same merges happen
 * (a level is merged once it holds 4 segments, as before), spread over the commits. FTS5's
 * crisis merge (16 segments on level 0) stays as the backstop should the steps fall behind.
 * The setting lives in the index's own config table, so every connection and the CLI follow it.
 */
export const migration020: Migration = {
  version: 20,
  name: 'search-merge-pacing',
  up(db) {
    db.exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0)");
  },
};
