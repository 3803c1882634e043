import type { StateCreator } from 'zustand';
import type { ConsoleEvent, ConsoleOutputs, ConversationSummary } from '../../../shared/console-api.ts';
import { api } from '../api/bridge.ts';
import { notifyPermission, playChime, requestNotifyPermission, showNotification, unlockSound, type NotifyPermission } from '../api/alerts.ts';
import { i18n } from '../i18n/index.ts';
import { speakerOf } from '../format.ts';
import { conversationTitle } from '../../../shared/console-display.ts';
import type { ConsoleState } from './index.ts';

type AlertEvent = Extract<ConsoleEvent, { type: 'alert' }>;

export interface AlertsSlice {
  /** The browser's answer so far; 'desktop' in the app window, where main notifies natively. */
  notifyPermission: NotifyPermission;
  /** The operator's own switch, on top of the browser's permission. */
  notify: boolean;
  sound: boolean;
  /**
   * What the live region says, the latest last; `n` makes a repeated text a new announcement. A few
   * are kept so that two said in the same moment (an assignment and an alert) are both read: the
   * region announces additions, and replacing the text would drop the first unread.
   */
  announcements: readonly { text: string; n: number }[];
  /** Customer messages not seen, summed over every conversation the console knows of. */
  unreadTotal: number;
  enableAlerts(): Promise<void>;
  toggleNotify(): void;
  toggleSound(): void;
  announce(text: string): void;
  onAlert(event: AlertEvent): void;
  /** Takes the unread counts of these conversations (a loaded list, a merged row, an open transcript). */
  noteUnread(conversations: readonly ConversationSummary[]): void;
  /** The count after the operator read a conversation. */
  setUnread(conversationId: string, count: number): void;
  /** Fetches the counts of changed conversations that a filtered list does not hold. */
  refreshUnread(ids: readonly string[]): Promise<void>;
  /** Announces lines that arrived in the open conversation since its last load. */
  noteTranscript(transcript: ConsoleOutputs['getTranscript']): void;
}

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

// Unread counts by conversation, and the row each came from: a list of 10,000 rows changes a few
// rows at a time, and an unchanged row (the same object) is skipped without a lookup of its count.
const unread = new Map<string, number>();
const rowSeen = new Map<string, ConversationSummary>();
let total = 0;
let seen: { conversationId: string; keys: Set<string> } | null = null;

/** Enough for a burst (a reassignment, its alert, a message); older ones were read already. */
const KEPT_ANNOUNCEMENTS = 3;

const clip = (text: string, max = 140): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export const alertsSlice: Slice<AlertsSlice> = (set, get) => ({
  notifyPermission: notifyPermission(),
  notify: localStorage.getItem('sb.notify') !== 'off',
  sound: localStorage.getItem('sb.sound') === 'on',
  announcements: [],
  unreadTotal: 0,
  async enableAlerts() {
    const permission = await requestNotifyPermission();
    localStorage.setItem('sb.notify', 'on');
    set({ notifyPermission: permission, notify: true });
  },
  toggleNotify() {
    const notify = !get().notify;
    localStorage.setItem('sb.notify', notify ? 'on' : 'off');
    set({ notify });
  },
  toggleSound() {
    const sound = !get().sound;
    localStorage.setItem('sb.sound', sound ? 'on' : 'off');
    // The click is the user gesture browsers want before a page may play sound.
    if (sound) unlockSound();
    set({ sound });
  },
  announce: (text) => set((s) => ({ announcements: [...s.announcements, { text, n: (s.announcements.at(-1)?.n ?? 0) + 1 }].slice(-KEPT_ANNOUNCEMENTS) })),
  onAlert(event) {
    const s = get();
    const c = s.conversations.find((x) => x.id === event.conversationId) ?? (s.transcript?.conversation.id === event.conversationId ? s.transcript.conversation : undefined);
    // A conversation the console has not listed yet is named by the event itself.
    const who = c ? conversationTitle(c) : event.who ? conversationTitle(event.who) : event.conversationId;
    const title = i18n.t(`work.alert.${event.reason}`, { who });
    // The title in the console's language; the customer's own words after it, not the service's English sentence.
    const said = event.said === null ? null : `${event.saidBy ? `${event.saidBy}: ` : ''}“${clip(event.said)}”`;
    s.announce(said ? `${title}: ${said}` : title);
    // The operator is looking at this very conversation: it still enters Needs you, but a tone or a
    // notification for each line of a live chat would only be noise.
    const watching = s.view === 'conversations' && s.selectedId === event.conversationId && document.visibilityState === 'visible' && document.hasFocus();
    if (watching) return;
    if (s.notify && s.notifyPermission === 'granted') {
      showNotification(title, said ?? '', event.conversationId, () => {
        const st = get();
        st.setView('conversations');
        st.select(event.conversationId);
      });
    }
    if (s.sound) playChime();
  },
  noteUnread(conversations) {
    for (const c of conversations) {
      if (rowSeen.get(c.id) === c) continue;
      rowSeen.set(c.id, c);
      const count = c.unread ?? 0;
      total += count - (unread.get(c.id) ?? 0);
      unread.set(c.id, count);
    }
    if (total !== get().unreadTotal) set({ unreadTotal: total });
  },
  setUnread(conversationId, count) {
    total += count - (unread.get(conversationId) ?? 0);
    unread.set(conversationId, count);
    if (total !== get().unreadTotal) set({ unreadTotal: total });
  },
  async refreshUnread(ids) {
    // A list holding every conversation known here is not filtered: the merge brought these rows.
    if (get().conversations.length >= unread.size) return;
    const listed = new Set(get().conversations.map((c) => c.id));
    const missing = ids.filter((id) => !listed.has(id));
    if (missing.length === 0) return;
    const r = await api.getConversations({ ids: missing });
    if (r.ok) get().noteUnread(r.value);
  },
  noteTranscript(transcript) {
    const id = transcript.conversation.id;
    const keys = new Set(transcript.entries.map((e) => `${e.kind}-${e.id}`));
    const first = seen?.conversationId !== id;
    const before = seen?.keys;
    seen = { conversationId: id, keys };
    if (first || !before) return; // opening a conversation is not news
    const fresh = transcript.entries.filter((e) => e.kind !== 'suggestion' && e.role !== 'command' && !before.has(`${e.kind}-${e.id}`));
    const last = fresh.at(-1);
    if (!last) return;
    const who = speakerOf(last)?.name ?? i18n.t(`transcript.role.${last.role}`);
    get().announce(
      fresh.length === 1 ? i18n.t('work.live.message', { who, text: clip(last.content) }) : i18n.t('work.live.messages', { count: fresh.length, who, text: clip(last.content) }),
    );
  },
});
