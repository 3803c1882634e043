import type { Migration } from '../migrate.ts';
import { AUDIT_ACTIONS_027 } from './027-audit-accounts.ts';

/** The audit's actions from 31 on: 27's and `learn` (a knowledge-base proposal made, edited, approved, merged or rejected). */
export const AUDIT_ACTIONS_031 = [...AUDIT_ACTIONS_027, 'learn'] as const;

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
 * The audit gets the action `learn`; its CHECK cannot change in place, so the table is rebuilt as
 * in migration 27, rows and ids kept.
 */
export const migration031: Migration = {
  version: 31,
  name: 'kb-proposals',
  up(db) {
    const actions = AUDIT_ACTIONS_031.map((a) => `'${a}'`).join(', ');
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

      CREATE TABLE audit_new (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        operator_id TEXT,
        operator_name TEXT,
        action TEXT NOT NULL CHECK (action IN (${actions})),
        conversation_id TEXT,
        detail TEXT,
        address TEXT
      ) STRICT;
      INSERT INTO audit_new (id, at, operator_id, operator_name, action, conversation_id, detail, address)
        SELECT id, at, operator_id, operator_name, action, conversation_id, detail, address FROM audit;
      DROP TABLE audit;
      ALTER TABLE audit_new RENAME TO audit;
      CREATE INDEX audit_conversation ON audit(conversation_id, id) WHERE conversation_id IS NOT NULL;
      CREATE INDEX audit_operator ON audit(operator_id, id) WHERE operator_id IS NOT NULL;
      CREATE INDEX audit_action ON audit(action, id);
    `);
  },
};
