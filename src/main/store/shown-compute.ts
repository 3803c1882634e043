import { LIMITS } from '../../shared/protocol/message-schema.ts';
import { TRANSCRIPT_TEXT_MAX } from '../../shared/console-api.ts';
import type { MessageRole } from '../../shared/conversation.ts';
import { nicknameOf } from '../conversations/identity.ts';
import { quotedMsgId } from './quotes.ts';
import type { ShownInfoRow } from './shown-info.ts';

/**
 * A message's `shown` computed in JavaScript, for a store without SQLite's JSON functions
 * (PostgreSQL, issue 30): the same object info-sql.ts's shownInfoSql makes in SQL, field for field,
 * so shown-info.ts reads a row of either store alike (shown-compute.test.ts runs both on the same
 * texts). Strings are cut and counted in code points, as SQLite's substr and length count
 * characters. One difference is left: SQLite calls a number written with an exponent or beyond
 * 64 bits "real", which this reads as the integer JavaScript sees; stored message_info is
 * RFC 8785 text, which writes every integer below 10^21 in plain digits.
 */
export function shownInfoText(messageInfo: string, role: MessageRole): string | null {
  let info: unknown;
  try {
    info = JSON.parse(messageInfo);
  } catch {
    return null;
  }
  // json_valid accepts any JSON value; json_extract on a non-object then finds nothing.
  const o = isObject(info) ? info : {};
  const shown: ShownInfoRow = {
    name: nicknameOf(o),
    quoted_id: quotedMsgId(o),
    event_type: textAt(o['event_type'], 32),
    message_type: integerAt(o['message_type']),
    create_timestamp: typeof o['create_timestamp'] === 'number' ? o['create_timestamp'] : null,
    quote: isObject(o['quote']) ? quoteOf(o['quote']) : null,
    files_info: Array.isArray(o['files_info']) ? filesOf(o['files_info']) : null,
    at_list: Array.isArray(o['at_list']) ? (o['at_list'] as unknown[]) : null,
    command: role === 'command' ? commandOf(o) : null,
  };
  return JSON.stringify(shown);
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** SQLite's INTEGER range: a JSON number beyond it is "real" to json_type. */
const integerAt = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= 9.223372036854776e18 ? v : null);

function textAt(v: unknown, max: number): string | null {
  if (typeof v !== 'string') return null;
  if (v.length <= max) return v; // UTF-16 units ≥ code points: short enough either way
  const points = [...v];
  return points.length <= max ? v : points.slice(0, max).join('');
}

const charsOf = (v: unknown): number | null => (typeof v === 'string' ? [...v].length : null);

function quoteOf(q: Json): NonNullable<ShownInfoRow['quote']> {
  return {
    msg_id: textAt(q['msg_id'], LIMITS.idMax),
    message_type: integerAt(q['message_type']),
    content: textAt(q['content'], LIMITS.contentMaxChars),
    content_chars: charsOf(q['content']),
  };
}

/** Always LIMITS.filesMax places, as SQL's fixed paths make them: null where there is no object. */
function filesOf(files: unknown[]): NonNullable<ShownInfoRow['files_info']> {
  return Array.from({ length: LIMITS.filesMax }, (_, i) => {
    const f = files[i];
    if (!isObject(f)) return null;
    return {
      content: textAt(f['content'], TRANSCRIPT_TEXT_MAX),
      content_chars: charsOf(f['content']),
      file_type: textAt(f['file_type'], 64) ?? integerAt(f['file_type']),
      file_name: textAt(f['file_name'], TRANSCRIPT_TEXT_MAX),
      file_name_chars: charsOf(f['file_name']),
    };
  });
}

function commandOf(o: Json): NonNullable<ShownInfoRow['command']> {
  const operator = o['operator'];
  const undo = o['undo'];
  return {
    source: textAt(o['source'], 32),
    // SQL's `json_type(…) = 'true'`: 1 or 0 for a present value, null for an absent one.
    undo: undo === undefined ? null : undo === true ? 1 : 0,
    note: textAt(o['note'], TRANSCRIPT_TEXT_MAX),
    note_chars: charsOf(o['note']),
    operator: isObject(operator) ? { id: textAt(operator['id'], TRANSCRIPT_TEXT_MAX), name: textAt(operator['name'], TRANSCRIPT_TEXT_MAX) } : null,
  };
}
