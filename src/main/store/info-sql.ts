import { LIMITS } from '../../shared/protocol/message-schema.ts';
import { FROM_NAME_FIELDS } from '../conversations/identity.ts';
import { TRANSCRIPT_TEXT_MAX } from '../../shared/console-api.ts';

/**
 * SQL that reads single fields out of a stored message_info, so no read parses a whole one in
 * JavaScript to find a name or a quote. A message_info holds every field as received: before the
 * cap on unknown fields (LIMITS.unknownFieldsMaxBytes) a store could keep lines of megabytes, and
 * a data: URL file is still megabytes. What the reads need of a message is its `shown` column
 * (shownInfoSql's small JSON object), written with the message; a row from before that column
 * (migration 23 filled in only the large ones) has it computed here from message_info, which
 * SQLite parses once per row and statement (its JSON cache serves every later path of the value).
 * Every fragment is NULL for a row whose message_info is not JSON, as JSON.parse's failure named
 * nobody before.
 */

/** What String.prototype.trim removes (WhiteSpace and LineTerminator), as SQLite trim's second argument. */
const JS_WHITESPACE = `char(${[9, 10, 11, 12, 13, 32, 160, 5760, ...Array.from({ length: 11 }, (_, i) => 8192 + i), 8232, 8233, 8239, 8287, 12288, 65279].join(', ')})`;

/** A JSON path as an SQL string literal. */
const lit = (path: string): string => `'${path.replaceAll("'", "''")}'`;

/** The string at `path` (an SQL expression) of `col`, cut to `max` characters (code points); NULL when it is no string. */
function textAt(col: string, path: string, max: number): string {
  return `CASE WHEN json_type(${col}, ${path}) = 'text' THEN substr(json_extract(${col}, ${path}), 1, ${max}) END`;
}

/** The number of characters of the string at `path` (an SQL expression); NULL when it is no string. */
function textLengthAt(col: string, path: string): string {
  return `CASE WHEN json_type(${col}, ${path}) = 'text' THEN length(json_extract(${col}, ${path})) END`;
}

/** The integer at `path` (an SQL expression), NULL when it is none. */
const integerAt = (col: string, path: string): string => `CASE WHEN json_type(${col}, ${path}) = 'integer' THEN json_extract(${col}, ${path}) END`;

/** As identity.ts's nameIn: the string at `path`, trimmed, cut to 200 characters, NULL when blank. */
function nameAt(col: string, path: string): string {
  return `CASE WHEN json_type(${col}, ${path}) = 'text' THEN nullif(substr(trim(json_extract(${col}, ${path}), ${JS_WHITESPACE}), 1, ${LIMITS.displayNameMaxChars}), '') END`;
}

/** `expr` where `col` holds JSON, else NULL (json_extract would fail the whole statement). */
function ifJson(col: string, expr: string): string {
  return `CASE WHEN json_valid(${col}) THEN ${expr} END`;
}

/** As identity.ts's nicknameOf: the sender's display name the message carries itself. */
const senderNames = (col: string): string => `coalesce(${FROM_NAME_FIELDS.map((f) => nameAt(col, lit(`$.${f}`))).join(', ')})`;

/** As quotes.ts's quotedMsgId: the msg_id a message_type 2 message quotes, NULL when none. */
const quotedId = (col: string): string =>
  `CASE WHEN json_extract(${col}, '$.message_type') = 2 AND json_type(${col}, '$.quote.msg_id') = 'text' THEN nullif(json_extract(${col}, '$.quote.msg_id'), '') END`;

/**
 * What the reads need of a message_info `col` (an SQL expression: a column, or the bound
 * parameter of an insert), as one small JSON object (NULL when the text is not JSON; shown-info.ts
 * reads it): the sender's own name and the msg_id quoted, as identity.ts and quotes.ts read them;
 * what the transcript shows (TranscriptEntry's messageInfo) with each string cut to
 * TRANSCRIPT_TEXT_MAX characters beside its length, but the quote's own text cut to
 * LIMITS.contentMaxChars (the engines read that much of it); a command line's own fields. `role` is
 * the row's role. One json_valid guards it all; fixed paths (files_info[0..9]) stand in for
 * json_each, which would parse the text again.
 */
export function shownInfoSql(col: string, role: string): string {
  const max = TRANSCRIPT_TEXT_MAX;
  const file = (i: number, key: string): string => lit(`$.files_info[${i}].${key}`);
  const files = Array.from(
    { length: LIMITS.filesMax },
    (_, i) => `CASE WHEN json_type(${col}, ${lit(`$.files_info[${i}]`)}) = 'object' THEN json_object(
      'content', ${textAt(col, file(i, 'content'), max)}, 'content_chars', ${textLengthAt(col, file(i, 'content'))},
      'file_type', coalesce(${textAt(col, file(i, 'file_type'), 64)}, ${integerAt(col, file(i, 'file_type'))}),
      'file_name', ${textAt(col, file(i, 'file_name'), max)}, 'file_name_chars', ${textLengthAt(col, file(i, 'file_name'))}) END`,
  );
  const quote = `json_object(
      'msg_id', ${textAt(col, lit('$.quote.msg_id'), LIMITS.idMax)}, 'message_type', ${integerAt(col, lit('$.quote.message_type'))},
      'content', ${textAt(col, lit('$.quote.content'), LIMITS.contentMaxChars)}, 'content_chars', ${textLengthAt(col, lit('$.quote.content'))})`;
  const command = `json_object(
      'source', ${textAt(col, lit('$.source'), 32)}, 'undo', json_type(${col}, '$.undo') = 'true',
      'note', ${textAt(col, lit('$.note'), max)}, 'note_chars', ${textLengthAt(col, lit('$.note'))},
      'operator', CASE WHEN json_type(${col}, '$.operator') = 'object'
        THEN json_object('id', ${textAt(col, lit('$.operator.id'), max)}, 'name', ${textAt(col, lit('$.operator.name'), max)}) END)`;
  return ifJson(
    col,
    `json_object(
      'name', ${senderNames(col)},
      'quoted_id', ${quotedId(col)},
      'event_type', ${textAt(col, lit('$.event_type'), 32)},
      'message_type', ${integerAt(col, lit('$.message_type'))},
      'create_timestamp', CASE WHEN json_type(${col}, '$.create_timestamp') IN ('integer', 'real') THEN json_extract(${col}, '$.create_timestamp') END,
      'quote', CASE WHEN json_type(${col}, '$.quote') = 'object' THEN ${quote} END,
      'files_info', CASE WHEN json_type(${col}, '$.files_info') = 'array' THEN json_array(${files.join(', ')}) END,
      'at_list', CASE WHEN json_type(${col}, '$.at_list') = 'array' THEN ${col} -> '$.at_list' END,
      'command', CASE WHEN ${role} = 'command' THEN ${command} END)`,
  );
}

/** A message row's `shown` (alias `m`): as written with it, else computed from its message_info. */
export function shownOf(m: string): string {
  return `coalesce(${m}.shown, ${shownInfoSql(`${m}.message_info`, `${m}.role`)})`;
}
