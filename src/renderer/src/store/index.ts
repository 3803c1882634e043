import { create, type StateCreator } from 'zustand';
import type { ConsoleOutputs, ConversationSummary, RequestLogItem, CONVERSATION_FILTERS } from '../../../shared/console-api.ts';
import type { Channel } from '../../../shared/conversation.ts';
import { api } from '../api/bridge.ts';
import { clientsSlice, kbSlice, statsSlice, type ClientsSlice, type KbSlice, type StatsSlice } from './admin-slices.ts';
import { requestQuery, viewsSlice, type ViewsSlice } from './views-slice.ts';
import { workspaceSlice, type WorkspaceSlice } from './workspace-slice.ts';
import { cannedSlice, type CannedSlice } from './canned-slice.ts';
import { connectionSlice, type ConnectionSlice } from './connection-slice.ts';
import { alertsSlice, type AlertsSlice } from './alerts-slice.ts';

type Filter = (typeof CONVERSATION_FILTERS)[number];
const PAGE = 50;
export type View = 'conversations' | 'needs_you' | 'deliveries' | 'requests' | 'clients' | 'kb' | 'dashboard' | 'start';
export type Theme = 'light' | 'dark';

interface UiSlice {
  view: View;
  theme: Theme;
  endpoint: string | null;
  error: string | null;
  setView(view: View): void;
  toggleTheme(): void;
  setError(error: string | null): void;
  loadStatus(): Promise<void>;
}

interface ConversationsSlice {
  conversations: ConversationSummary[];
  filter: { state?: Filter; channel?: Channel; clientId?: string; search: string };
  selectedId: string | null;
  loaded: boolean;
  setFilter(patch: Partial<ConversationsSlice['filter']>): void;
  loadConversations(): Promise<void>;
  /** Live updates: fetch just these conversations and move them into place. */
  mergeConversations(ids: string[]): Promise<void>;
  select(id: string | null): void;
  move(delta: number): void;
}

export type { Suggestion } from './workspace-slice.ts';

interface TranscriptSlice {
  transcript: ConsoleOutputs['getTranscript'] | null;
  /** How many of the latest messages are loaded; "load earlier" raises it a page at a time. */
  messageLimit: number;
  loadEarlier(): Promise<void>;
  loadTranscript(): Promise<void>;
}

interface RequestsSlice {
  requests: RequestLogItem[];
  onlyFailed: boolean;
  setOnlyFailed(value: boolean): void;
  loadRequests(): Promise<void>;
}

export type ConsoleState = UiSlice & ConversationsSlice & TranscriptSlice & RequestsSlice & ClientsSlice & KbSlice & StatsSlice &
  ViewsSlice & WorkspaceSlice & CannedSlice & ConnectionSlice & AlertsSlice;
type Slice<T> = StateCreator<ConsoleState, [], [], T>;

const uiSlice: Slice<UiSlice> = (set) => ({
  view: 'conversations',
  theme: (localStorage.getItem('sb.theme') as Theme | null) ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'),
  endpoint: null,
  error: null,
  setView: (view) => set({ view }),
  toggleTheme: () =>
    set((s) => {
      const theme = s.theme === 'dark' ? 'light' : 'dark';
      localStorage.setItem('sb.theme', theme);
      return { theme };
    }),
  setError: (error) => set({ error }),
  async loadStatus() {
    const r = await api.status({});
    if (r.ok) set({ endpoint: r.value.endpoint });
    else set({ error: r.error.message });
  },
});

const conversationsSlice: Slice<ConversationsSlice> = (set, get) => ({
  conversations: [],
  filter: { search: '' },
  selectedId: null,
  loaded: false,
  setFilter(patch) {
    set((s) => ({ filter: { ...s.filter, ...patch } }));
    void get().loadConversations();
  },
  async loadConversations() {
    const { filter } = get();
    const r = await api.listConversations({ state: filter.state, channel: filter.channel, clientId: filter.clientId, search: filter.search || undefined, limit: 20_000 });
    if (r.ok) set({ conversations: r.value, loaded: true });
    else set({ error: r.error.message });
  },
  async mergeConversations(ids) {
    const { filter } = get();
    // A filtered list may gain or lose rows on any change: reload it whole.
    if (filter.state !== undefined || filter.channel !== undefined || filter.clientId !== undefined || filter.search !== '') return get().loadConversations();
    const r = await api.getConversations({ ids });
    if (!r.ok) return set({ error: r.error.message });
    const changed = new Map(r.value.map((c) => [c.id, c]));
    // A row whose last activity did not move (read, resolved, stopped) keeps its place, so j/k and
    // the eye do not lose it; conversations with new activity go in front, everything else keeps its order.
    const moved: ConversationSummary[] = [];
    const rest: ConversationSummary[] = [];
    const listed = new Set<string>();
    for (const c of get().conversations) {
      const next = changed.get(c.id);
      if (next) listed.add(c.id);
      if (!next) rest.push(c);
      else if (next.lastMessageAt === c.lastMessageAt) rest.push(next);
      else moved.push(next);
    }
    for (const c of changed.values()) if (!listed.has(c.id)) moved.push(c);
    moved.sort((a, b) => b.lastMessageAt - a.lastMessageAt);
    set({ conversations: [...moved, ...rest] });
  },
  select(id) {
    set({ selectedId: id, transcript: null, suggestion: null, messageLimit: PAGE });
    void get().loadTranscript();
  },
  move(delta) {
    const { conversations, selectedId } = get();
    if (conversations.length === 0) return;
    const at = conversations.findIndex((c) => c.id === selectedId);
    const next = Math.min(conversations.length - 1, Math.max(0, at < 0 ? 0 : at + delta));
    get().select(conversations[next]!.id);
  },
});

/** Writes on the open conversation (reply, stop, resolve...) live in workspace-slice.ts. */
const transcriptSlice: Slice<TranscriptSlice> = (set, get) => ({
  transcript: null,
  messageLimit: PAGE,
  async loadEarlier() {
    set((s) => ({ messageLimit: s.messageLimit + PAGE }));
    await get().loadTranscript();
  },
  async loadTranscript() {
    const id = get().selectedId;
    if (!id) return;
    const r = await api.getTranscript({ conversationId: id, limit: get().messageLimit });
    if (get().selectedId !== id) return;
    if (r.ok) set({ transcript: r.value });
    else set({ error: r.error.message });
  },
});

const requestsSlice: Slice<RequestsSlice> = (set, get) => ({
  requests: [],
  onlyFailed: false,
  setOnlyFailed(onlyFailed) {
    set({ onlyFailed });
    void get().loadRequests();
  },
  async loadRequests() {
    const r = await api.listRequests({ onlyFailed: get().onlyFailed, ...requestQuery(get().requestFilter), limit: 500 });
    if (r.ok) set({ requests: r.value });
    else set({ error: r.error.message });
  },
});

/** One store made of slices; components read it through selectors. */
export const useConsole = create<ConsoleState>()((...a) => ({
  ...uiSlice(...a),
  ...conversationsSlice(...a),
  ...transcriptSlice(...a),
  ...requestsSlice(...a),
  ...clientsSlice(...a),
  ...kbSlice(...a),
  ...statsSlice(...a),
  ...viewsSlice(...a),
  ...workspaceSlice(...a),
  ...cannedSlice(...a),
  ...connectionSlice(...a),
  ...alertsSlice(...a),
}));
