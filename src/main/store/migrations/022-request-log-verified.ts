import type { Migration } from '../migrate.ts';

/**
 * Codes that, as of this version, are only ever answered after the signature was checked
 * (src/main/http/chat-messages.ts past `facts.authenticated = true`), frozen here: a code added
 * later must not change how this migration reads old rows.
 */
const AFTER_AUTHENTICATION = [
  'replayed_request',
  'msg_id_conflict',
  'field_not_allowed',
  'missing_sender',
  'mixed_payload',
  'unknown_command',
  'send_url_not_allowed',
  'file_too_large',
  'engine_timeout',
  'service_unavailable',
];

const detail = "CASE WHEN json_valid(problem) THEN json_extract(problem, '$.detail') END";

/**
 * Which rows written before this version passed the signature check. Only what the row proves:
 * an accepted request, a code answered only after authentication, or a detail only a signed
 * request gets (the client's own rate limit; message_info's schema and scenario rules, whose
 * details name a message_info path). Everything else, including the codes answered both before and
 * after authentication (internal_error, the envelope's validation_failed, the address gate's
 * rate_limited), stays unverified: a claim that cannot be proven is not shown as the client's.
 */
const PROVEN_VERIFIED = `client_id IS NOT NULL AND (
  status < 400
  OR code IN (${AFTER_AUTHENTICATION.map((c) => `'${c}'`).join(', ')})
  OR (code = 'rate_limited' AND ${detail} LIKE 'client "%" exceeds its request rate')
  OR (code = 'validation_failed' AND (${detail} = 'message_info failed validation' OR ${detail} LIKE 'message_info.%' OR ${detail} LIKE '% problems; see errors'))
)`;

/**
 * Issue 27: a request refused before or at authentication (unknown or disabled client, stale
 * timestamp, bad signature, bad JSON...) was logged under whatever client it named, so anyone
 * could fill a real client's log. `verified`: the signature was checked against the client's
 * secret. An unverified row keeps the client it named in `claimed_client`, never in `client_id`,
 * so the client's own filter (request_log_client) lists only its verified rows.
 *
 * `request_log_rows` counts each kind of row, kept by triggers, so pruning can hold each to its
 * own limit (a flood of unverified rows goes from its own oldest end and never pushes out
 * verified ones) by reading two numbers rather than counting the table.
 */
export const migration022: Migration = {
  version: 22,
  name: 'request-log-verified',
  up(db) {
    db.exec(`
      ALTER TABLE request_log ADD COLUMN verified INTEGER NOT NULL DEFAULT 0 CHECK (verified IN (0, 1));
      ALTER TABLE request_log ADD COLUMN claimed_client TEXT;
      UPDATE request_log SET verified = 1 WHERE ${PROVEN_VERIFIED};
      UPDATE request_log SET claimed_client = client_id, client_id = NULL WHERE verified = 0 AND client_id IS NOT NULL;

      -- Each kind's oldest rows, for pruning; and the rows that named a client, for the console's "include claims".
      CREATE INDEX request_log_kind ON request_log(verified, id);
      CREATE INDEX request_log_claimed ON request_log(claimed_client, id) WHERE claimed_client IS NOT NULL;

      CREATE TABLE request_log_rows (verified INTEGER PRIMARY KEY CHECK (verified IN (0, 1)), n INTEGER NOT NULL) STRICT;
      INSERT INTO request_log_rows (verified, n)
        SELECT k.v, (SELECT count(*) FROM request_log WHERE verified = k.v) FROM (SELECT 0 AS v UNION ALL SELECT 1 AS v) k;
      CREATE TRIGGER request_log_rows_insert AFTER INSERT ON request_log BEGIN
        UPDATE request_log_rows SET n = n + 1 WHERE verified = NEW.verified;
      END;
      CREATE TRIGGER request_log_rows_delete AFTER DELETE ON request_log BEGIN
        UPDATE request_log_rows SET n = n - 1 WHERE verified = OLD.verified;
      END;
      -- No writer changes a row's kind today; if one does, the counts follow.
      CREATE TRIGGER request_log_rows_move AFTER UPDATE OF verified ON request_log WHEN NEW.verified != OLD.verified BEGIN
        UPDATE request_log_rows SET n = n - 1 WHERE verified = OLD.verified;
        UPDATE request_log_rows SET n = n + 1 WHERE verified = NEW.verified;
      END;
    `);
  },
};
