import { z } from 'zod';
import type { ConversationLabel } from './console-api.ts';

/**
 * The agent's workspace in the console API: who the operator is, what they can send, what they
 * must look at. Types only (and their input schemas); src/shared/console-api.ts wires them in.
 */

/** The console user: named in operator deliveries (protocol section 7), the transcript and the audit. */
export const operatorSchema = z.object({
  id: z.string().trim().min(1, 'give an operator id').max(64),
  name: z.string().trim().min(1, 'give a display name').max(100),
});
export type Operator = z.infer<typeof operatorSchema>;

/**
 * Where an operator reply to a conversation would go, or why there is nowhere to send it: `code`
 * for the console to explain in the operator's language, `reason` in the service's words.
 */
export type SendTarget = { ok: true; url: string } | { ok: false; code: 'no_client' | 'no_send_url'; reason: string };

export interface CannedReply {
  id: number;
  title: string;
  content: string;
  updatedAt: number;
}

/** Cancelled ones need no action (a stop or a takeover kept them back): listed only when asked for. */
export const DELIVERY_VIEW_STATES = ['retrying', 'dead', 'cancelled'] as const;
export type DeliveryViewState = (typeof DELIVERY_VIEW_STATES)[number];
/** What the Deliveries view shows until the operator picks: the ones that need attention. */
export const DELIVERY_PROBLEM_STATES: readonly DeliveryViewState[] = ['retrying', 'dead'];

/** A delivery that needs attention (still retrying after a failure, or dead), or one cancelled before it was sent. */
export interface DeliveryItem {
  id: number;
  conversationId: string;
  clientId: string;
  replyMsgId: string;
  /** An AI auto reply, or an operator's answer from the console. */
  kind: 'auto' | 'operator';
  state: DeliveryViewState;
  attempts: number;
  nextAttemptAt: number | null;
  /** A cancelled delivery's says why it was cancelled (a stop, a takeover). */
  lastError: string | null;
  lastStatus: number | null;
  /** The send_url it goes to. */
  url: string;
  createdAt: number;
  /** Which conversation the reply is in, named as the list names it. */
  conversation?: ConversationLabel | null;
  /** The customer it answers (to_user_id, with their latest name): in a group, the member who asked. */
  to?: { id: string; name: string | null } | null;
}

export const AUDIT_ACTIONS = [
  'reply', 'resolve', 'flag', 'stop', 'resume', 'assist', 'retry', 'cancel', 'client_settings', 'operator',
  // Team mode (v1.2): sign-ins and account changes, assignment and private notes.
  'sign_in', 'sign_in_failed', 'sign_out', 'agent', 'assign', 'note',
  // Learning from the team: a knowledge-base proposal made, edited, approved, merged or rejected.
  'learn',
  // A replay of past questions against a candidate configuration (issue 29).
  'replay',
  // The built-in engine's threshold set from the console (issue 29).
  'kb_threshold',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditItem {
  id: number;
  at: number;
  operator: Operator;
  action: AuditAction;
  conversationId: string | null;
  detail: string | null;
  /** The caller's remote address; null from the desktop window and for rows made before team mode. */
  address: string | null;
}

export const CONVERSATION_VIEWS = ['all', 'needs_you'] as const;
export type ConversationView = (typeof CONVERSATION_VIEWS)[number];
