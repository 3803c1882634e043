import type { Clock } from '../../shared/clock.ts';
import type { MessageWriter } from './message-service.ts';
import type { Unanswered } from '../store/staff-wait.ts';

export interface StaffWaitDeps {
  writer: MessageWriter;
  clock: Clock;
  /** How long a customer may wait on staff who hold the conversation in the IM; 0: never alert. */
  waitMs: number;
  /** Read once at start: conversations a customer may be waiting in (store.staffWait.waiting). */
  waiting: () => Array<Unanswered & { conversationId: string }>;
  /** The conversation entered Needs you (committed): the console's alert. */
  onAlert: (conversationId: string) => void;
  log: (line: string) => void;
}

/**
 * Staff who stop the bot from the IM (stop_auto_reply, or a staff line that pauses it) answer
 * there, so a customer's message then raises no console alert at once, as it does when the console
 * holds the bot off. If nobody answers it within `waitMs` (no staff line, no reply, no Resolve),
 * the conversation enters Needs you as waiting since that message, and the console alerts once.
 *
 * One timer per conversation, set by its first unanswered message; when it fires the writer looks
 * again and either flags the conversation or names the next message to wait for. Timers live in
 * memory: at start, the conversations whose bot is held off are read once and their timers set
 * again, so a restart neither loses a wait nor starts it over.
 */
export function createStaffWaitWatch(deps: StaffWaitDeps) {
  const timers = new Map<string, () => void>();
  let stopped = false;

  function check(conversationId: string): void {
    timers.delete(conversationId);
    deps.writer
      .submit({ kind: 'staff_wait', conversationId, waitMs: deps.waitMs, now: deps.clock.now() })
      .then((result) => {
        if (result?.kind !== 'staff_wait') return;
        if (result.alert) deps.onAlert(conversationId);
        if (result.nextAt !== null) arm(conversationId, result.nextAt);
      })
      .catch((error: unknown) => deps.log(`staff wait check of ${conversationId} failed: ${(error as Error).message}`));
  }

  function arm(conversationId: string, at: number): void {
    if (stopped || deps.waitMs <= 0 || timers.has(conversationId)) return;
    timers.set(conversationId, deps.clock.after(at - deps.clock.now(), () => check(conversationId)));
  }

  return {
    /** Reads what a restart left waiting; call once, after the writer is up. */
    start(): void {
      if (deps.waitMs <= 0) return;
      for (const w of deps.waiting()) arm(w.conversationId, w.receivedAt + deps.waitMs);
    },
    /** A customer just wrote while staff in the IM hold the conversation. */
    customerWrote(conversationId: string): void {
      arm(conversationId, deps.clock.now() + deps.waitMs);
    },
    /** Conversations being watched. */
    watching: (): number => timers.size,
    stop(): void {
      stopped = true;
      for (const cancel of timers.values()) cancel();
      timers.clear();
    },
  };
}
