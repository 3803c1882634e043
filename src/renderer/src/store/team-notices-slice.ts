import type { StateCreator } from 'zustand';
import type { ConsoleState } from './index.ts';

/** How many "assigned to you" and "mentioned you" toasts stay on screen at once (the oldest go first). */
export const NOTICES_SHOWN = 3;

/** Something of the agent's own that arrived: a toast until opened or closed, a mark on the row until opened. */
export interface TeamNotice {
  /** Unique per notice (the same conversation can be assigned and mentioned). */
  key: number;
  kind: 'assigned' | 'mention';
  conversationId: string;
  /** The whole sentence, in the console's language when it arrived. */
  text: string;
}

export interface TeamNoticesSlice {
  notices: TeamNotice[];
  /** Conversations with an assignment or a mention not opened yet, and which it was (a mention wins). */
  marks: Record<string, TeamNotice['kind']>;
  addNotice(kind: TeamNotice['kind'], conversationId: string, text: string): void;
  dismissNotice(key: number): void;
  /** The conversation was opened: its toasts and its row's mark go. */
  seenConversation(conversationId: string): void;
}

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

let nextKey = 1;

export const teamNoticesSlice: Slice<TeamNoticesSlice> = (set, get) => ({
  notices: [],
  marks: {},
  addNotice(kind, conversationId, text) {
    const notice = { key: nextKey++, kind, conversationId, text };
    set((s) => ({
      notices: [...s.notices, notice].slice(-NOTICES_SHOWN),
      marks: { ...s.marks, [conversationId]: s.marks[conversationId] === 'mention' ? 'mention' : kind },
    }));
  },
  dismissNotice: (key) => set((s) => ({ notices: s.notices.filter((n) => n.key !== key) })),
  seenConversation(conversationId) {
    const s = get();
    if (!(conversationId in s.marks) && !s.notices.some((n) => n.conversationId === conversationId)) return;
    set({
      notices: s.notices.filter((n) => n.conversationId !== conversationId),
      marks: Object.fromEntries(Object.entries(s.marks).filter(([id]) => id !== conversationId)),
    });
  },
});
