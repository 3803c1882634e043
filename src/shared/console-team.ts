import { z } from 'zod';
import type { ConversationLabel } from './console-api.ts';
import type { Operator } from './console-workspace.ts';
import type { Role } from './console-roles.ts';

/**
 * The team workflow in the console API (protocol v1.2, "Team workflow"): assignment, presence,
 * who is viewing or typing, private notes and the draft's base that detects a collision. Inputs
 * and outputs are spread into consoleInputs / ConsoleOutputs (console-api.ts).
 */

export const PRESENCES = ['online', 'away', 'offline'] as const;
export type Presence = (typeof PRESENCES)[number];

/** Presence and activity thresholds (protocol v1.2): the service's and the console's shared figures. */
export const TEAM_TIMING = {
  /** No event stream and no heartbeat for this long: offline. */
  offlineAfterMs: 90_000,
  /** A console without input for this long says its agent is away. */
  awayAfterIdleMs: 10 * 60_000,
  /** "Viewing" and "typing" vanish this long after their last refresh (a console that went without a word). */
  activityTtlMs: 30_000,
  /** How often a console sends its heartbeat while open (well under offlineAfterMs). */
  heartbeatEveryMs: 25_000,
  /** The console says "typing" stopped after this long without a keystroke. */
  typingIdleMs: 6_000,
} as const;

/** The conversation list's assignment tabs. */
export const ASSIGNMENTS = ['all', 'mine', 'unassigned'] as const;
export type Assignment = (typeof ASSIGNMENTS)[number];

/**
 * What was on the author's screen when they started a draft: the newest message id and the newest
 * reply id of the transcript (0 when there was none). Messages and replies are numbered apart, so
 * one id cannot name the newest entry: the pair can, and "arrived after it" is exact for both.
 */
export const draftBaseSchema = z.object({
  messageId: z.number().int().nonnegative(),
  replyId: z.number().int().nonnegative(),
});
export type DraftBase = z.infer<typeof draftBaseSchema>;

/** A line that arrived after a draft's base: a customer's or staff's message, or another operator's reply. */
export interface ArrivedEntry {
  id: number;
  kind: 'message' | 'reply';
  role: 'customer' | 'staff';
  /** Who wrote it: the customer's latest name (else their id), the staff member's, or the operator's name. */
  by: string | null;
  text: string;
  at: number;
}

/** At most this many arrived lines are named in a conversation_changed refusal; each text cut to ARRIVED_TEXT_MAX. */
export const ARRIVED_MAX = 20;
export const ARRIVED_TEXT_MAX = 500;

export interface TeamMember {
  id: string;
  name: string;
  role: Role;
  /** The installation's owner (desktop window, printed console URL). */
  owner: boolean;
  presence: Presence;
  /** Conversations assigned to them that still need a human (what capacity counts). */
  openAssigned: number;
  /** Auto-assignment gives them no more open conversations than this; 0: never auto-assigned. */
  capacity: number;
}

/** Who is looking at one conversation and who is writing in it, by account id. */
export interface ConversationActivity {
  viewing: string[];
  typing: string[];
}

const conversationId = z.string().min(1).max(64);

export const teamInputs = {
  /** Everyone on the team with their presence and load, and who is viewing or typing where. */
  listTeam: z.object({}),
  /** Assign to an account (oneself or a colleague), or unassign with null. */
  assignConversation: z.object({ conversationId, agentId: z.string().min(1).max(64).nullable() }),
  /**
   * The console is open: presence, and what its agent is looking at and writing in. Each heartbeat
   * says the whole state (absent = not viewing, not typing, not away).
   */
  heartbeat: z.object({
    away: z.boolean().default(false),
    viewing: conversationId.nullable().default(null),
    typing: conversationId.nullable().default(null),
  }),
  /** A private note: stored in the transcript, never delivered. `@id` mentions notify those accounts. */
  addNote: z.object({
    conversationId,
    content: z.string().trim().min(1, 'write a note').max(20_000).refine((s) => !s.includes('\u0000'), 'a note cannot contain the NUL character'),
    /** The draft's base: refused with conversation_changed if a customer or colleague spoke since (unless `force`). */
    base: draftBaseSchema.optional(),
    force: z.boolean().optional(),
  }),
} as const;

export interface TeamOutputs {
  /**
   * `teamMode`: at least one enabled account besides the owner (a one-person desktop sees no team
   * features). `autoAssign`: the setting, in effect only in team mode.
   */
  listTeam: { teamMode: boolean; autoAssign: boolean; members: TeamMember[]; activity: Record<string, ConversationActivity> };
  assignConversation: { assignee: string | null; previous: string | null };
  heartbeat: { presence: Presence };
  /** `mentioned`: the accounts notified. */
  addNote: { noteId: number; msgId: string; mentioned: string[] };
}

/**
 * Live team events. Those with `recipients` go only to consoles signed in as one of those accounts
 * (the event stream filters by its caller); the others go to every console.
 */
export type TeamEvent =
  | { type: 'presence'; agentId: string; presence: Presence }
  | { type: 'activity'; conversationId: string; viewing: string[]; typing: string[] }
  /** Assigned to you: by a colleague (`by`), or by auto-assignment (`by` null, with what the customer said). */
  | { type: 'assigned'; conversationId: string; assignee: string; by: Operator | null; said: string | null; who?: ConversationLabel; recipients: string[] }
  /** You were @-mentioned in a note. */
  | { type: 'mention'; conversationId: string; noteId: number; by: Operator; text: string; who?: ConversationLabel; recipients: string[] };

/** What an `@id` mention is made of: letters, digits and . _ + - (so "@ann，" or "@ann)" ends at the punctuation). */
export const MENTION_CHARS = '[\\p{L}\\p{N}._+-]';

/**
 * The `@id` mentions in a note's text, in order, each once: `@` at the start or after a space or
 * punctuation, then the id (a trailing full stop is not part of it). Which of them are accounts is
 * for the service to say.
 */
export function mentionsIn(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(new RegExp(`(^|[^\\p{L}\\p{N}._+@-])@(${MENTION_CHARS}{1,64})`, 'gu'))) {
    const id = m[2]!.replace(/\.+$/u, '');
    if (id && !found.includes(id)) found.push(id);
  }
  return found;
}
