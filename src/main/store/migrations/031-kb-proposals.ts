import type { Migration } from '../migrate.ts';
import { addAuditAction } from './audit-actions.ts';

/**
 * Learning from the team: knowledge-base changes proposed from operators' answers, waiting for an
 * admin. Texts are stored masked (names, emails, phones, order numbers: the masker runs before the
 * row is written), so the table holds no more personal data than the knowledge base will.
 *
 * - `entry_id`: for a proposed phrasing, the entry it would join. No foreign key: an entry removed
 *   meanwhile leaves the proposal to be approved as a new entry or rejected, not silently changed.
 * - `message_ids`: the customer messages (msg_id) and the operator reply it came from (provenance).
 * - `result_entry_id`: the entry an approval made or a merge joined.
 *
 * The audit gets the action `learn` (a proposal made, edited, approved, merged or rejected), its
 * table rebuilt with rows and ids kept (audit-actions.ts).
 */
export const migration031: Migration = {
  version: 31,
  name: 'kb-proposals',
  up(db) {
    db.exec(`
      CREATE TABLE kb_proposals (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('entry', 'phrasing')),
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'merged', 'rejected')),
        source TEXT NOT NULL CHECK (source IN ('handoff', 'correction', 'agent')),
        question TEXT NOT NULL CHECK (length(question) BETWEEN 1 AND 4000),
        answer TEXT NOT NULL CHECK (length(answer) BETWEEN 1 AND 20000),
        entry_id INTEGER,
        conversation_id TEXT,
        message_ids TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(message_ids) AND json_type(message_ids) = 'array'),
        operator_id TEXT,
        operator_name TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        decided_by_id TEXT,
        decided_by_name TEXT,
        decided_at INTEGER,
        reason TEXT,
        result_entry_id INTEGER
      ) STRICT;
      CREATE INDEX kb_proposals_state ON kb_proposals(state, id);
    `);
    addAuditAction(db, 'learn', 31);
  },
};
