import type { MessageRole, ReplyReason } from './conversation.ts';
import type { Operator } from './console-workspace.ts';

/**
 * What a conversation's transcript is made of, as the console API gives it (getTranscript) and
 * the engines read it: its lines, what each says about why the service did or did not answer, and
 * where a reply's delivery stands. Part of the console contract (console-api.ts re-exports it).
 */

/**
 * A string of a transcript entry's messageInfo is cut to this many characters (code points): a
 * quote's own text, a file's name, a data: URL file (a small image still shows inline; a larger
 * one waits for getMessageInfo). A page of 50 lines then stays within a few megabytes whatever
 * was stored, where whole message_info blobs made one answer 114 MB.
 */
export const TRANSCRIPT_TEXT_MAX = 4096;

/** A stop or resume line: from the console (with the operator who did it, when known) or from the integration (cmd_dialog). */
export interface CommandLine {
  command: string;
  source: 'console' | 'integration';
  operator: string | null;
  /** A flag's note, when the agent wrote one: the list previews it, so a colleague sees why. */
  note?: string | null;
}

/** One line of a conversation: what engines read as context and the console shows. */
export interface TranscriptLine {
  /** A note is a private line among colleagues (team workflow): never delivered, never read by an engine. */
  kind: 'message' | 'reply' | 'suggestion' | 'note';
  id: number;
  msgId: string;
  role: MessageRole;
  speaker: string | null;
  /** Display name: the sender's latest nickname (protocol v1.2), or the operator's name on operator replies. */
  speakerName?: string | null;
  content: string;
  at: number;
}

/** The message a quote (message_type 2) points at, as Switchboard stored it. */
export interface QuotedLine {
  msgId: string;
  role: MessageRole;
  speaker: string | null;
  /** The sender's latest nickname, or the operator's name on an operator reply. */
  speakerName: string | null;
  content: string;
}

export interface TranscriptEntry extends TranscriptLine {
  /** Customer messages: why the service did or did not answer. */
  decision?: {
    scheduled: boolean;
    reason: ReplyReason;
    outcome: string | null;
    note: string | null;
    /** The delivery of the reply that answered it: "answered" reaches the customer only once it is sent. */
    delivery?: ({ id?: number; state: string; attempts: number; lastError: string | null } & Partial<DeliveryWait>) | null;
  } | null;
  /** Replies: engine outcome and delivery state. */
  handoff?: boolean;
  confidence?: number | null;
  cause?: string | null;
  /** The bot's replies: the customer messages (msg_ids) it answered. */
  replyTo?: string[];
  /** Knowledge-base entries the answer used, with their scores and questions. */
  sources?: Array<{ id: number; score: number; question?: string }>;
  /** Who a group message @-mentions (at_list), each with the latest name sent for that id. */
  mentions?: Array<{ id: string; name: string | null }>;
  /** A quoted message (message_type 2) whose quote Switchboard has: the console shows its text when the quote carries none. */
  quoted?: QuotedLine | null;
  /** Operator replies: who sent it from the console. */
  operator?: Operator;
  /** Suggestions: the agent's instruction, if any. */
  instruction?: string | null;
  engine?: string;
  delivery?: ({ id: number; state: string; attempts: number; lastError: string | null } & Partial<DeliveryWait>) | null;
  /**
   * Messages: what the console shows of the stored message_info, never the whole of it. Only
   * event_type, message_type, create_timestamp, quote (msg_id, message_type, content), files_info
   * (content, file_type, file_name) and, on command lines, source, undo, note and operator; every
   * string cut to TRANSCRIPT_TEXT_MAX characters.
   */
  messageInfo?: Record<string, unknown>;
  /**
   * Messages: the stored message_info's size (UTF-8 bytes of its JSON) and the paths of the
   * strings messageInfo cut (`quote.content`, `files_info[0].content`). getMessageInfo fetches
   * the whole.
   */
  stored?: { bytes: number; cut: string[] };
}

/**
 * A pending delivery's place in its conversation's queue (protocol section 7: in order per
 * conversation). `nextAttemptAt`: when it is tried next, or would be if nothing held it.
 * `behind`: the earlier undelivered reply it waits for (its next try, and whether it failed before).
 */
export interface DeliveryWait {
  nextAttemptAt: number | null;
  behind?: { id: number; failing: boolean; nextAttemptAt: number } | null;
}
