import { create, type StateCreator } from 'zustand';
import type { RequestLogItem } from '../../../shared/console-api.ts';
import { api } from '../api/bridge.ts';
import { clientsSlice, kbSlice, statsSlice, type ClientsSlice, type KbSlice, type StatsSlice } from './admin-slices.ts';
import { requestQuery, viewsSlice, type ViewsSlice } from './views-slice.ts';
import { workspaceSlice, type WorkspaceSlice } from './workspace-slice.ts';
import { deliveriesSlice, type DeliveriesSlice } from './deliveries-slice.ts';
import { cannedSlice, type CannedSlice } from './canned-slice.ts';
import { connectionSlice, type ConnectionSlice } from './connection-slice.ts';
import { alertsSlice, type AlertsSlice } from './alerts-slice.ts';
import { conversationsSlice, type ConversationsSlice } from './conversations-slice.ts';
import { transcriptSlice, type TranscriptSlice } from './transcript-slice.ts';
import { accountsSlice, allowed, type AccountsSlice } from './accounts-slice.ts';
import { teamSlice, type TeamSlice } from './team-slice.ts';
import { teamNoticesSlice, type TeamNoticesSlice } from './team-notices-slice.ts';
import { learnSlice, type LearnSlice } from './learn-slice.ts';
import { replaySlice, type ReplaySlice } from './replay-slice.ts';

export type View = 'conversations' | 'needs_you' | 'deliveries' | 'requests' | 'clients' | 'kb' | 'dashboard' | 'start' | 'agents' | 'learn' | 'replay';
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

export type { Suggestion } from './workspace-slice.ts';

interface RequestsSlice {
  requests: RequestLogItem[];
  onlyFailed: boolean;
  setOnlyFailed(value: boolean): void;
  loadRequests(): Promise<void>;
}

export type ConsoleState = UiSlice & ConversationsSlice & TranscriptSlice & RequestsSlice & ClientsSlice & KbSlice & StatsSlice &
  ViewsSlice & DeliveriesSlice & WorkspaceSlice & CannedSlice & ConnectionSlice & AlertsSlice & AccountsSlice & TeamSlice & TeamNoticesSlice & LearnSlice & ReplaySlice;
type Slice<T> = StateCreator<ConsoleState, [], [], T>;

const uiSlice: Slice<UiSlice> = (set) => ({
  view: 'conversations',
  theme: (localStorage.getItem('sb.theme') as Theme | null) ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'),
  endpoint: null,
  error: null,
  // An error banner belongs to what the operator was doing: another view starts clean.
  setView: (view) => set({ view, error: null }),
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

const requestsSlice: Slice<RequestsSlice> = (set, get) => ({
  requests: [],
  onlyFailed: false,
  setOnlyFailed(onlyFailed) {
    set({ onlyFailed });
    void get().loadRequests();
  },
  async loadRequests() {
    if (!allowed(get(), 'listRequests')) return;
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
  ...deliveriesSlice(...a),
  ...workspaceSlice(...a),
  ...cannedSlice(...a),
  ...connectionSlice(...a),
  ...alertsSlice(...a),
  ...accountsSlice(...a),
  ...teamSlice(...a),
  ...teamNoticesSlice(...a),
  ...learnSlice(...a),
  ...replaySlice(...a),
}));
