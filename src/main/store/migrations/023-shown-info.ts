import type { Migration } from '../migrate.ts';
import { shownInfoSql } from '../info-sql.ts';

/** Rows above this size get `shown` now; a smaller row is read as cheaply from its message_info. */
const LARGE_BYTES = 64 * 1024;

/**
 * `messages.shown`: what the reads need of a message_info (its sender's name, what it quotes,
 * what the transcript shows), written with each message (info-sql.ts's shownInfoSql), so the
 * engines' context and the console's transcript never parse a stored message whole. Messages
 * stored before the cap on unknown fields could hold megabytes each (12 of 9.5 MB made every later
 * message of their conversation take 1.1 s): those above LARGE_BYTES get theirs here, in one
 * pass that reads no other row's text (octet_length reads the row's header only). The rest keep
 * NULL, computed at read. shownInfoSql is this column's format: a change to it needs a migration
 * that computes the column again.
 */
export const migration023: Migration = {
  version: 23,
  name: 'shown-info',
  up(db) {
    db.exec(`
      ALTER TABLE messages ADD COLUMN shown TEXT;
      UPDATE messages AS m SET shown = ${shownInfoSql('m.message_info', 'm.role')} WHERE octet_length(m.message_info) > ${LARGE_BYTES};
    `);
  },
};
