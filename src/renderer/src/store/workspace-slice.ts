import type { StateCreator } from 'zustand';
import { operatorSchema, UNDO_RESOLVE_REFUSALS, type ApiResult, type Operator, type UndoResolveRefusal, type UndoStopOutcome } from '../../../shared/console-api.ts';
import { assertNever } from '../../../shared/assert-never.ts';
import { api } from '../api/bridge.ts';
import { operatorWrite } from './operator-write.ts';
import type { ConsoleState } from './index.ts';

export interface Suggestion {
  conversationId: string;
  /** The suggestion's own line in the transcript (it names the engine that made it). */
  msgId: string;
  forMsgId: string;
  content: string;
  handoff: boolean;
  instruction: string | null;
  contextMessages: number;
}

/** An action that needs the operator's name: run again once it is set. */
type Pending = () => Promise<unknown>;

export const UNDO_MS = 5_000;
/**
 * While the pointer rests on the toast it stays, up to this long after it came: the service takes
 * an Undo for 15 s. Leaving it gives the hand UNDO_LEAVE_MS to come back.
 */
export const UNDO_HOLD_MS = 12_000;
export const UNDO_LEAVE_MS = 1_500;

/** What the toast offers to take back: a stop, or a Resolve (named by its time, see undoResolve). */
export type UndoOffer = { kind: 'stop'; conversationId: string; until: number } | { kind: 'resolve'; conversationId: string; resolvedAt: number; until: number };

/** An Undo the service refused: nothing was changed, and the toast area says why until closed. */
export interface UndoRefused {
  conversationId: string;
  /** Known refusals are said in the console's language; anything else as the service put it. */
  reason: UndoResolveRefusal | null;
  message: string;
  /** An Undo of a stop that did not take it back: not an error, but the agent must know. */
  stop?: Exclude<UndoStopOutcome, 'undone'>;
}

const refusalOf = (code: string): UndoResolveRefusal | null => UNDO_RESOLVE_REFUSALS.find((r) => code === `undo_${r}`) ?? null;

export interface WorkspaceSlice {
  /** Who works this console; undefined until the service said (or when it cannot say). */
  operator: Operator | null | undefined;
  /** The "who are you" dialog, with the action that asked for it. */
  operatorPrompt: { then: Pending | null } | null;
  loadOperator(): Promise<void>;
  /** Returns an error message, or null when saved. */
  saveOperator(operator: Operator): Promise<string | null>;
  askOperator(then?: Pending): void;
  closeOperatorPrompt(): void;

  /** Unsent replies per conversation, kept while the operator looks elsewhere. */
  drafts: Record<string, string>;
  setDraft(conversationId: string, text: string): void;
  /** Puts text into the reply box: replaces an empty draft, else goes after it. */
  insertDraft(conversationId: string, text: string): void;
  sending: boolean;
  composeError: { conversationId: string; message: string } | null;
  /** `force`: send anyway, after the conflict prompt showed what arrived since the draft began. */
  sendReply(conversationId: string, force?: boolean): Promise<boolean>;

  suggestion: Suggestion | null;
  assisting: boolean;
  assist(instruction: string): Promise<void>;
  dismissSuggestion(): void;

  stopAutoReply(conversationId: string): Promise<void>;
  /** `undoStop`: the Undo of a stop just made, which also restores the replies that stop cancelled. */
  resumeAutoReply(conversationId: string, undoStop?: boolean): Promise<void>;
  resolve(conversationId: string): Promise<void>;
  /** "Needs a human" by hand: into Needs you at the end of the queue; true when it was written. */
  flag(conversationId: string, note: string): Promise<boolean>;
  /** A stop or Resolve just made, undoable until `until`. */
  undo: UndoOffer | null;
  undoRefused: UndoRefused | null;
  /** Takes back what the toast offers: a stop (with the replies it cancelled) or a Resolve. */
  runUndo(): Promise<void>;
  dismissUndo(): void;
  /** The pointer is on the toast (true) or left it: the offer does not vanish under the hand about to press Undo. */
  holdUndo(held: boolean): void;
  dismissUndoRefused(): void;
  /** A shortcut pressed where it does not apply says so for a moment (e with nothing to resolve, h when already queued). */
  keyNotice: string | null;
  /** A short notice in the toast area; `ms` for a longer one (read at about 3 words a second). */
  noteKey(text: string, ms?: number): void;

  /** Bumped by j/k: the list scrolls its selected row into view when it changes. */
  scrollRequest: number;
  requestScroll(): void;
  /** The open conversation was seen up to its latest message. */
  markOpenRead(): Promise<void>;
}

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

let undoTimer: ReturnType<typeof setTimeout> | null = null;
let keyNoticeTimer: ReturnType<typeof setTimeout> | null = null;
/** Long enough to read a short line, short enough not to linger over the list. */
const KEY_NOTICE_MS = 3_000;
const marked = new Map<string, number>();
// A double click must not resolve twice: the second Resolve would be the newer one, and the
// first one's Undo would then be refused as "resolved again since".
const resolving = new Set<string>();

export const workspaceSlice: Slice<WorkspaceSlice> = (set, get) => {
  const refresh = async (): Promise<void> => {
    await Promise.all([get().loadTranscript(), get().loadConversations()]);
  };
  const write = <T>(run: () => Promise<ApiResult<T>>, again: Pending, onError?: Parameters<typeof operatorWrite>[4]): Promise<T | null> =>
    operatorWrite(get, set, run, again, onError);

  function countdown(ms: number): void {
    if (undoTimer) clearTimeout(undoTimer);
    undoTimer = setTimeout(() => get().dismissUndo(), Math.max(0, ms));
  }

  function offer(undo: UndoOffer): void {
    countdown(UNDO_MS);
    set({ undo, undoRefused: null });
  }

  /** Back in Needs you at its old place; a refusal (too late, or the conversation moved on) is said in the toast area. */
  async function undoResolve(undo: Extract<UndoOffer, { kind: 'resolve' }>): Promise<void> {
    const { conversationId, resolvedAt } = undo;
    await write(
      () => api.undoResolve({ conversationId, resolvedAt }),
      () => undoResolve(undo),
      (message, code) => set({ undoRefused: { conversationId, reason: refusalOf(code), message } }),
    );
    await refresh();
  }

  return {
    operator: undefined,
    operatorPrompt: null,
    async loadOperator() {
      const r = await api.getOperator({});
      // A service without operator identity (or with a malformed one) leaves it unknown: the header
      // shows no one, and a write that needs a name says so when it is refused.
      const parsed = operatorSchema.nullable().safeParse(r.ok ? r.value : undefined);
      if (parsed.success) set({ operator: parsed.data });
    },
    async saveOperator(operator) {
      const r = await api.setOperator(operator);
      if (!r.ok) return r.error.message;
      const then = get().operatorPrompt?.then ?? null;
      set({ operator: r.value, operatorPrompt: null });
      if (then) await then();
      return null;
    },
    askOperator: (then) => set({ operatorPrompt: { then: then ?? null } }),
    closeOperatorPrompt: () => set({ operatorPrompt: null }),

    drafts: {},
    setDraft(conversationId, text) {
      set((s) => ({ drafts: { ...s.drafts, [conversationId]: text } }));
      get().noteDraftStart(conversationId, text);
    },
    insertDraft(conversationId, text) {
      const current = get().drafts[conversationId] ?? '';
      get().setDraft(conversationId, current.trim() === '' ? text : `${current.replace(/\s+$/, '')}\n\n${text}`);
    },
    sending: false,
    composeError: null,
    async sendReply(conversationId, force = false) {
      const draft = get().drafts[conversationId] ?? '';
      const content = draft.trim();
      if (!content || get().sending) return false;
      // Team mode: the service refuses a reply whose author has not seen what arrived since the draft began.
      const base = get().team.teamMode ? get().draftBases[conversationId] : undefined;
      set({ sending: true, composeError: null, conflict: null });
      const sent = await write(
        () => api.sendReply({ conversationId, content, ...(base ? { base } : {}), force }),
        () => get().sendReply(conversationId, force),
        (message, code, arrived) => {
          if (code === 'conversation_changed' && arrived) set({ conflict: { conversationId, what: 'reply', arrived } });
          else set({ composeError: { conversationId, message } });
        },
      );
      set({ sending: false });
      if (!sent) return false;
      // Only the text that was sent leaves the box: what the operator typed while it was on its way stays.
      set((s) => ({ drafts: { ...s.drafts, [conversationId]: (s.drafts[conversationId] ?? '') === draft ? '' : (s.drafts[conversationId] ?? '') }, suggestion: s.suggestion?.conversationId === conversationId ? null : s.suggestion }));
      get().noteDraftStart(conversationId, get().drafts[conversationId] ?? '');
      get().stopTyping();
      await refresh();
      return true;
    },

    suggestion: null,
    assisting: false,
    async assist(instruction) {
      const conversationId = get().selectedId;
      if (!conversationId) return;
      const given = instruction.trim() || undefined;
      set({ assisting: true, suggestion: null });
      const r = await write(
        () => api.assist({ conversationId, instruction: given }),
        () => get().assist(instruction),
      );
      set({ assisting: false });
      if (!r) return;
      set({
        suggestion: {
          conversationId,
          msgId: r.suggestion.msgId,
          forMsgId: r.msgId,
          content: r.suggestion.content,
          handoff: r.suggestion.handoff,
          instruction: given ?? null,
          contextMessages: r.context.messages,
        },
      });
      await get().loadTranscript();
    },
    dismissSuggestion: () => set({ suggestion: null }),

    async stopAutoReply(conversationId) {
      const r = await write(() => api.stopAutoReply({ conversationId }), () => get().stopAutoReply(conversationId));
      if (r) offer({ kind: 'stop', conversationId, until: Date.now() + UNDO_MS });
      await refresh();
    },
    async resumeAutoReply(conversationId, undoStop = false) {
      const r = await write(() => api.resumeAutoReply({ conversationId, undoStop }), () => get().resumeAutoReply(conversationId, undoStop));
      if (r?.undo && r.undo !== 'undone') set({ undoRefused: { conversationId, reason: null, message: '', stop: r.undo } });
      await refresh();
    },
    async resolve(conversationId) {
      if (resolving.has(conversationId)) return;
      resolving.add(conversationId);
      const r = await write(() => api.resolveConversation({ conversationId }), () => get().resolve(conversationId)).finally(() => resolving.delete(conversationId));
      // After the reload, which takes the Resolve button away: the toast then knows the focus went with it.
      await refresh();
      // Offered only when it took the conversation out of Needs you: otherwise there is nothing to put back.
      if (r?.undoable) offer({ kind: 'resolve', conversationId, resolvedAt: r.resolvedAt, until: Date.now() + UNDO_MS });
    },
    async flag(conversationId, note) {
      const r = await write(() => api.flagConversation({ conversationId, ...(note.trim() ? { note } : {}) }), () => get().flag(conversationId, note));
      await refresh();
      return r !== null;
    },
    undo: null,
    undoRefused: null,
    async runUndo() {
      const undo = get().undo;
      if (!undo) return;
      get().dismissUndo();
      switch (undo.kind) {
        case 'stop':
          // Also brings back the replies the stop cancelled: one stray "s" must not lose a customer's answer.
          return get().resumeAutoReply(undo.conversationId, true);
        case 'resolve':
          return undoResolve(undo);
        default:
          return assertNever(undo, 'undo offer');
      }
    },
    dismissUndo() {
      if (undoTimer) clearTimeout(undoTimer);
      undoTimer = null;
      set({ undo: null });
    },
    holdUndo(held) {
      const undo = get().undo;
      if (!undo) return;
      const last = undo.until - UNDO_MS + UNDO_HOLD_MS;
      const now = Date.now();
      countdown(held ? last - now : Math.min(last, Math.max(undo.until, now + UNDO_LEAVE_MS)) - now);
    },
    dismissUndoRefused: () => set({ undoRefused: null }),
    keyNotice: null,
    noteKey(text, ms = KEY_NOTICE_MS) {
      if (keyNoticeTimer) clearTimeout(keyNoticeTimer);
      set({ keyNotice: text });
      keyNoticeTimer = setTimeout(() => set({ keyNotice: null }), ms);
    },

    scrollRequest: 0,
    requestScroll: () => set((s) => ({ scrollRequest: s.scrollRequest + 1 })),
    async markOpenRead() {
      const t = get().transcript;
      // Read means seen: the transcript is on screen only in Conversations (another view keeps it loaded, hidden).
      if (!t || !(t.conversation.unread > 0) || document.visibilityState !== 'visible' || get().view !== 'conversations') return;
      const id = t.conversation.id;
      const upToId = Math.max(0, ...t.entries.filter((e) => e.kind === 'message').map((e) => e.id));
      if (marked.get(id) === upToId) return;
      marked.set(id, upToId);
      const r = await api.markRead({ conversationId: id, upToId });
      // A failure leaves the count as it was: nothing the operator must act on.
      // The list row follows with the service's change event; the title follows now.
      if (r.ok) get().setUnread(id, r.value.unread);
    },
  };
};
