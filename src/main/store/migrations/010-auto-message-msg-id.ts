import type { Migration } from '../migrate.ts';

/**
 * assist_dialog finds the auto_dialog message it answers by msg_id (section 6). That lookup went
 * through the idempotency table, which is now pruned after `idempotencyRetentionHours` (issue 12),
 * while an assist may name a message of any age: messages get their own partial index instead,
 * paid only by auto_dialog inserts.
 */
export const migration010: Migration = {
  version: 10,
  name: 'auto-message-msg-id',
  up(db) {
    db.exec(`CREATE INDEX messages_auto_msg_id ON messages(client_id, msg_id) WHERE event_type = 'auto_dialog';`);
  },
};
