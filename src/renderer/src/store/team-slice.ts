import type { StateCreator } from 'zustand';
import type { ArrivedEntry, ConsoleOutputs, ConversationActivity, DraftBase, TeamEvent, TranscriptEntry } from '../../../shared/console-api.ts';
import { TEAM_TIMING } from '../../../shared/console-team.ts';
import { assertNever } from '../../../shared/assert-never.ts';
import { api } from '../api/bridge.ts';
import { playChime, showNotification } from '../api/alerts.ts';
import { i18n } from '../i18n/index.ts';
import { conversationTitle } from '../../../shared/console-display.ts';
import { operatorWrite } from './operator-write.ts';
import type { ConsoleState } from './index.ts';

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

/** A reply or note the service refused because the conversation moved on: what arrived, and what to do. */
export interface Conflict {
  conversationId: string;
  what: 'reply' | 'note';
  arrived: ArrivedEntry[];
}

export interface TeamSlice {
  team: ConsoleOutputs['listTeam'];
  /** Who views and types where (others' and ours, by account id). */
  activity: Record<string, ConversationActivity>;
  /** The agent's own choice in the header; `idle`: no input for 10 minutes (away until they come back). */
  presenceChoice: 'online' | 'away';
  idle: boolean;
  /** The conversation this console is typing in, while keys come. */
  typingIn: string | null;
  /** The compose box writes a private note, per conversation. */
  noteMode: Record<string, boolean>;
  /** Each draft's base: what was on screen when it was started (team mode). */
  draftBases: Record<string, DraftBase>;
  conflict: Conflict | null;
  loadTeam(): Promise<void>;
  onTeamEvent(event: TeamEvent): void;
  setPresenceChoice(choice: 'online' | 'away'): void;
  setIdle(idle: boolean): void;
  /** A key in the compose box of `conversationId`: "typing" now, cleared after a pause. */
  noteTyping(conversationId: string): void;
  /** The draft went out, or the agent moved on: no longer "typing". */
  stopTyping(): void;
  /** Sends the whole state now (on a change, and every heartbeatEveryMs). */
  heartbeat(): Promise<void>;
  assign(conversationId: string, agentId: string | null): Promise<void>;
  setNoteMode(conversationId: string, on: boolean): void;
  /** The draft of `conversationId` begins (or ends, with an empty text): its base is what the transcript shows now. */
  noteDraftStart(conversationId: string, text: string): void;
  /** "Review": the prompt closes, the draft stays, and its base moves to what is on screen now. */
  reviewConflict(): void;
  sendNote(conversationId: string, force?: boolean): Promise<boolean>;
}

/** What the open transcript shows as its newest message and reply: a draft started now has this base. */
export function baseOf(entries: readonly TranscriptEntry[]): DraftBase {
  let messageId = 0;
  let replyId = 0;
  for (const e of entries) {
    if (e.kind === 'message') messageId = Math.max(messageId, e.id);
    else if (e.kind === 'reply' || e.kind === 'suggestion') replyId = Math.max(replyId, e.id);
  }
  return { messageId, replyId };
}

let typingTimer: ReturnType<typeof setTimeout> | null = null;

export const teamSlice: Slice<TeamSlice> = (set, get) => {
  const nameOf = (id: string): string => get().team.members.find((m) => m.id === id)?.name ?? id;
  const titleOf = (conversationId: string, who: Parameters<typeof conversationTitle>[0] | undefined): string => {
    const c = get().conversations.find((x) => x.id === conversationId);
    return c ? conversationTitle(c) : who ? conversationTitle(who) : conversationId;
  };
  /**
   * Tells the agent of something that is theirs now: the live region always; unless they are looking
   * at it, a toast and a mark on its row (seen without desktop alerts), and a notification and a
   * tone when allowed.
   */
  const notify = (kind: 'assigned' | 'mention', title: string, body: string, conversationId: string): void => {
    const s = get();
    s.announce(body ? `${title}: ${body}` : title);
    const watching = s.view === 'conversations' && s.selectedId === conversationId && document.visibilityState === 'visible' && document.hasFocus();
    if (watching) return;
    s.addNotice(kind, conversationId, title);
    if (s.notify && s.notifyPermission === 'granted') showNotification(title, body, conversationId, () => get().openConversation(conversationId));
    if (s.sound) playChime();
  };
  const baseNow = (conversationId: string): DraftBase | null => {
    const t = get().transcript;
    return t && t.conversation.id === conversationId ? baseOf(t.entries) : null;
  };

  return {
    team: { teamMode: false, autoAssign: false, members: [], activity: {} },
    activity: {},
    presenceChoice: localStorage.getItem('sb.presence') === 'away' ? 'away' : 'online',
    idle: false,
    typingIn: null,
    noteMode: {},
    draftBases: {},
    conflict: null,
    async loadTeam() {
      const r = await api.listTeam({});
      if (r.ok) set({ team: r.value, activity: r.value.activity });
    },
    onTeamEvent(event) {
      switch (event.type) {
        case 'presence': {
          const { members } = get().team;
          // A newcomer, or one gone offline (a disabled account's sessions end so): the team as listTeam has it now.
          if (event.presence === 'offline' || !members.some((m) => m.id === event.agentId)) return void get().loadTeam();
          set((s) => ({ team: { ...s.team, members: s.team.members.map((m) => (m.id === event.agentId ? { ...m, presence: event.presence } : m)) } }));
          return;
        }
        case 'activity': {
          const { conversationId, viewing, typing } = event;
          set((s) => {
            const activity = { ...s.activity };
            if (viewing.length === 0 && typing.length === 0) delete activity[conversationId];
            else activity[conversationId] = { viewing, typing };
            return { activity };
          });
          return;
        }
        case 'assigned': {
          void get().loadTeam();
          const who = titleOf(event.conversationId, event.who);
          const title = event.by ? i18n.t('team.notify.assignedBy', { name: event.by.name, who }) : i18n.t('team.notify.assigned', { who });
          notify('assigned', title, event.said ? `“${event.said}”` : '', event.conversationId);
          return;
        }
        case 'mention':
          notify('mention', i18n.t('team.notify.mentioned', { name: event.by.name, who: titleOf(event.conversationId, event.who) }), event.text, event.conversationId);
          return;
        default:
          return assertNever(event, 'team event');
      }
    },
    setPresenceChoice(choice) {
      localStorage.setItem('sb.presence', choice);
      set({ presenceChoice: choice });
      void get().heartbeat();
    },
    setIdle(idle) {
      if (get().idle === idle) return;
      set({ idle });
      void get().heartbeat();
    },
    noteTyping(conversationId) {
      if (typingTimer) clearTimeout(typingTimer);
      typingTimer = setTimeout(() => get().stopTyping(), TEAM_TIMING.typingIdleMs);
      if (get().typingIn === conversationId) return;
      set({ typingIn: conversationId });
      void get().heartbeat();
    },
    stopTyping() {
      if (typingTimer) clearTimeout(typingTimer);
      typingTimer = null;
      if (get().typingIn === null) return;
      set({ typingIn: null });
      void get().heartbeat();
    },
    async heartbeat() {
      const s = get();
      const shown = s.view === 'conversations' && document.visibilityState === 'visible' ? s.selectedId : null;
      // A failed heartbeat is not the agent's problem: the next one, or the event stream, keeps them present.
      await api.heartbeat({ away: s.presenceChoice === 'away' || s.idle, viewing: shown, typing: s.typingIn });
    },
    async assign(conversationId, agentId) {
      const r = await operatorWrite(get, set, () => api.assignConversation({ conversationId, agentId }), () => get().assign(conversationId, agentId));
      if (!r) return;
      const name = agentId === null ? null : nameOf(agentId);
      get().announce(name === null ? i18n.t('team.assign.unassigned') : i18n.t('team.assign.done', { name }));
      await Promise.all([get().loadTranscript(), get().loadConversations(), get().loadTeam()]);
    },
    setNoteMode: (conversationId, on) => set((s) => ({ noteMode: { ...s.noteMode, [conversationId]: on } })),
    noteDraftStart(conversationId, text) {
      const has = conversationId in get().draftBases;
      if (text.trim() === '') {
        if (has) set((s) => ({ draftBases: Object.fromEntries(Object.entries(s.draftBases).filter(([id]) => id !== conversationId)) }));
        return;
      }
      if (has) return;
      const base = baseNow(conversationId);
      if (base) set((s) => ({ draftBases: { ...s.draftBases, [conversationId]: base } }));
    },
    reviewConflict() {
      const c = get().conflict;
      if (!c) return;
      const base = baseNow(c.conversationId);
      set((s) => ({ conflict: null, draftBases: base ? { ...s.draftBases, [c.conversationId]: base } : s.draftBases }));
    },
    async sendNote(conversationId, force = false) {
      const draft = get().drafts[conversationId] ?? '';
      const content = draft.trim();
      if (!content || get().sending) return false;
      const base = get().team.teamMode ? get().draftBases[conversationId] : undefined;
      set({ sending: true, composeError: null, conflict: null });
      const sent = await operatorWrite(
        get,
        set,
        () => api.addNote({ conversationId, content, ...(base ? { base } : {}), force }),
        () => get().sendNote(conversationId, force),
        (message, code, arrived) => {
          if (code === 'conversation_changed' && arrived) set({ conflict: { conversationId, what: 'note', arrived } });
          else set({ composeError: { conversationId, message } });
        },
      );
      set({ sending: false });
      if (!sent) return false;
      get().stopTyping();
      set((s) => ({ drafts: { ...s.drafts, [conversationId]: (s.drafts[conversationId] ?? '') === draft ? '' : (s.drafts[conversationId] ?? '') } }));
      get().noteDraftStart(conversationId, get().drafts[conversationId] ?? '');
      if (sent.mentioned.length > 0) get().announce(i18n.t('team.note.mentioned', { names: sent.mentioned.map(nameOf).join(', ') }));
      await get().loadTranscript();
      return true;
    },
  };
};
