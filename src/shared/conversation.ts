export const CHANNELS = ['im', 'web'] as const;
export type Channel = (typeof CHANNELS)[number];

export const AUTO_REPLY_STATES = ['active', 'paused', 'stopped'] as const;
export type AutoReplyState = (typeof AUTO_REPLY_STATES)[number];

export type MessageRole = 'customer' | 'staff' | 'ai' | 'command';

export const REPLY_REASONS = [
  'scheduled',
  'sender_not_customer',
  'not_mentioned',
  'auto_reply_stopped',
  'auto_reply_paused',
  'stale_message',
  'rate_limited',
] as const;
export type ReplyReason = (typeof REPLY_REASONS)[number];

/** A pause ends by itself: past its end the conversation is active again without a write. */
export function effectiveAutoReply(state: AutoReplyState, pausedUntil: number | null, now: number): AutoReplyState {
  if (state === 'paused' && (pausedUntil === null || pausedUntil <= now)) return 'active';
  return state;
}
