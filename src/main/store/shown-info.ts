import { TRANSCRIPT_TEXT_MAX, type TranscriptEntry } from '../../shared/console-api.ts';
import { atMostCodePoints } from '../../shared/protocol/message-schema.ts';

/** A string as info-sql.ts's transcriptInfoSql reads it: cut, beside its whole length in characters. */
type Cut = string | null;
type Chars = number | null;

/** The JSON object info-sql.ts's shownInfoSql makes of one stored message_info (a message's `shown`). */
export interface ShownInfoRow {
  name: string | null;
  quoted_id: string | null;
  event_type: string | null;
  message_type: number | null;
  create_timestamp: number | null;
  quote: { msg_id: string | null; message_type: number | null; content: Cut; content_chars: Chars } | null;
  files_info: Array<{ content: Cut; content_chars: Chars; file_type: string | number | null; file_name: Cut; file_name_chars: Chars } | null> | null;
  at_list: unknown[] | null;
  command: { source: string | null; undo: number | null; note: Cut; note_chars: Chars; operator: { id: string | null; name: string | null } | null } | null;
}

export interface ShownInfo {
  messageInfo: Record<string, unknown>;
  stored: NonNullable<TranscriptEntry['stored']>;
  /** The sender's display name the message carries itself. */
  name: string | null;
  /** The msg_id it quotes (message_type 2), if any. */
  quotedId: string | null;
  /** Who it @-mentions (at_list), as stored. */
  mentions: string[];
}

/** The fields of `o` that are not null: the console reads absent fields, as stored JSON had them. */
function present(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));
}

/** A message's `shown` as read from SQL: null when its message_info is not JSON. */
export const parseShown = (text: string | null): ShownInfoRow | null => (text === null ? null : (JSON.parse(text) as ShownInfoRow));

/** As quotes.ts's quoteTextOf: the text the quote carries itself, when not blank (cut as the engines read it). */
export function quoteTextOfShown(row: ShownInfoRow | null): string | null {
  const text = row?.quote?.content;
  return typeof text === 'string' && text.trim() !== '' ? text : null;
}

/**
 * A transcript entry's messageInfo and `stored` from a message's `shown` (null: the stored text
 * is not JSON, and nothing of it shows). Each string longer than TRANSCRIPT_TEXT_MAX is cut (SQL
 * cut all but the quote's text, which the engines read longer); its path goes into `stored.cut`,
 * so the console says so and offers the whole.
 */
export function shownInfo(row: ShownInfoRow | null, bytes: number): ShownInfo {
  const cut: string[] = [];
  const text = (value: Cut, chars: Chars, path: string): Cut => {
    if (chars === null || chars <= TRANSCRIPT_TEXT_MAX || value === null) return value;
    cut.push(path);
    return atMostCodePoints(value, TRANSCRIPT_TEXT_MAX) ? value : [...value].slice(0, TRANSCRIPT_TEXT_MAX).join('');
  };
  if (!row) return { messageInfo: {}, stored: { bytes, cut }, name: null, quotedId: null, mentions: [] };
  const q = row.quote;
  const files = row.files_info ?? [];
  const last = files.findLastIndex((f) => f !== null);
  const c = row.command;
  const messageInfo = present({
    event_type: row.event_type,
    message_type: row.message_type,
    create_timestamp: row.create_timestamp,
    quote: q && present({ msg_id: q.msg_id, message_type: q.message_type, content: text(q.content, q.content_chars, 'quote.content') }),
    files_info:
      row.files_info &&
      files.slice(0, last + 1).map((f, i) =>
        f === null
          ? {}
          : present({
              content: text(f.content, f.content_chars, `files_info[${i}].content`),
              file_type: f.file_type,
              file_name: text(f.file_name, f.file_name_chars, `files_info[${i}].file_name`),
            }),
      ),
    ...(c
      ? {
          source: c.source,
          undo: c.undo === 1 ? true : null,
          note: text(c.note, c.note_chars, 'note'),
          operator: c.operator && present(c.operator),
        }
      : {}),
  });
  const mentions = (row.at_list ?? []).filter((id): id is string => typeof id === 'string');
  return { messageInfo, stored: { bytes, cut }, name: row.name, quotedId: row.quoted_id, mentions };
}
