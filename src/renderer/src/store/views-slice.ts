import type { StateCreator } from 'zustand';
import type { ConsoleInput, ConsoleOutputs, ConversationSummary, DeliveryViewState } from '../../../shared/console-api.ts';
import { assertNever } from '../../../shared/assert-never.ts';
import { api } from '../api/bridge.ts';
import type { ConsoleState, View } from './index.ts';
import { appendPage, LIST_PAGE, loadPages, RELOAD_KEEP_MAX } from './conversations-slice.ts';
import { serialQueue } from '../../../shared/serial-queue.ts';

/** The request log's filters as typed in the form: datetime-local strings, empty = no bound. */
export interface RequestFilter {
  requestId: string;
  msgId: string;
  clientId: string;
  /** With a client: also the unverified requests that only named it. */
  withClaims: boolean;
  since: string;
  until: string;
}

export const NO_REQUEST_FILTER: RequestFilter = { requestId: '', msgId: '', clientId: '', withClaims: false, since: '', until: '' };

export interface TestMessage {
  clientId: string;
  sending: boolean;
  result: ConsoleOutputs['sendTestMessage'] | null;
  error: string | null;
}

export interface ViewsSlice {
  /** Conversations flagged needs_human, longest wait first (the server's order). */
  needsYou: ConversationSummary[];
  needsYouLoaded: boolean;
  /** Where the queue's next page starts; null once all of it is loaded. */
  needsYouCursor: string | null;
  /** Reloads the queue from the top, as many rows as were loaded. */
  loadNeedsYou(): Promise<void>;
  loadMoreNeedsYou(): Promise<void>;
  requestFilter: RequestFilter;
  setRequestFilter(filter: RequestFilter): void;
  /** The client added in the first-run flow, whose endpoint, id and test message it shows next. */
  startClient: string | null;
  setStartClient(id: string | null): void;
  testMessage: TestMessage | null;
  /** Content: the server's default test text when absent. */
  sendTestMessage(clientId: string, content?: string): Promise<void>;
  /** Forgets the last test message (a panel closed: its answer belongs to text no longer shown). */
  clearTestMessage(): void;
  /** Switches view and loads what the view shows: the one way nav buttons, tiles and links move. */
  goTo(view: View): void;
  openConversation(id: string): void;
  openDeliveries(states: DeliveryViewState[]): void;
}

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

/** A datetime-local value (the operator's local time) as epoch ms, or undefined when empty or invalid. */
function epochOf(local: string): number | undefined {
  if (!local) return undefined;
  const ms = new Date(local).getTime();
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** The listRequests inputs a filter stands for; `until` is inclusive of the minute typed. */
export function requestQuery(f: RequestFilter): Partial<ConsoleInput<'listRequests'>> {
  const until = epochOf(f.until);
  return {
    requestId: f.requestId.trim() || undefined,
    msgId: f.msgId.trim() || undefined,
    clientId: f.clientId || undefined,
    withClaims: f.clientId && f.withClaims ? true : undefined,
    since: epochOf(f.since),
    until: until === undefined ? undefined : until + 59_999,
  };
}

// The queue's reloads and "show more" pages, one at a time (see shared/serial-queue.ts).
const needsYouQueue = serialQueue();
let needsYouReloadQueued: Promise<void> | null = null;

export const viewsSlice: Slice<ViewsSlice> = (set, get) => ({
  needsYou: [],
  needsYouLoaded: false,
  needsYouCursor: null,
  loadNeedsYou() {
    // Live changes ask for many reloads; one waiting in the queue already covers the rest.
    if (needsYouReloadQueued) return needsYouReloadQueued;
    needsYouReloadQueued = needsYouQueue(async () => {
      needsYouReloadQueued = null;
      const r = await loadPages({ view: 'needs_you' }, Math.min(RELOAD_KEEP_MAX, Math.max(LIST_PAGE, get().needsYou.length)));
      if (r.ok) set({ needsYou: r.page.items, needsYouCursor: r.page.nextCursor, needsYouLoaded: true });
      else set({ error: r.message });
    });
    return needsYouReloadQueued;
  },
  loadMoreNeedsYou: () =>
    needsYouQueue(async () => {
      const cursor = get().needsYouCursor;
      if (cursor === null) return;
      const r = await api.listConversations({ view: 'needs_you', limit: LIST_PAGE, cursor });
      if (r.ok) set((s) => ({ needsYou: appendPage(s.needsYou, r.value.items), needsYouCursor: r.value.nextCursor }));
      else set({ error: r.error.message });
    }),
  requestFilter: NO_REQUEST_FILTER,
  setRequestFilter(requestFilter) {
    set({ requestFilter });
    void get().loadRequests();
  },
  startClient: null,
  setStartClient: (startClient) => set({ startClient, testMessage: null }),
  testMessage: null,
  async sendTestMessage(clientId, content) {
    set({ testMessage: { clientId, sending: true, result: null, error: null } });
    const r = await api.sendTestMessage({ clientId, content: content?.trim() || undefined });
    set({ testMessage: { clientId, sending: false, result: r.ok ? r.value : null, error: r.ok ? null : r.error.message } });
  },
  clearTestMessage: () => set({ testMessage: null }),
  goTo(view) {
    get().setView(view);
    const s = get();
    switch (view) {
      case 'conversations':
      case 'dashboard':
      case 'start':
        return;
      case 'needs_you':
        return void s.loadNeedsYou();
      case 'deliveries':
        return void Promise.all([s.loadDeliveries({ fresh: true }), s.loadClients()]);
      case 'requests':
        return void Promise.all([s.loadRequests(), s.loadClients()]);
      case 'clients':
        return void s.loadClients();
      case 'kb':
        return void s.loadKb();
      case 'agents':
        return void Promise.all([s.loadAgents(), s.loadAudit()]);
      case 'learn':
        // The knowledge base too: a merge picks its entry from it.
        return void Promise.all([s.loadProposals(), s.loadKb()]);
      case 'replay':
        return void Promise.all([s.loadReplay(), s.loadClients()]);
      default:
        return assertNever(view);
    }
  },
  openConversation(id) {
    get().setView('conversations');
    if (get().selectedId !== id) get().select(id);
  },
  openDeliveries(states) {
    set((s) => ({ deliveryFilter: { ...s.deliveryFilter, states } }));
    get().goTo('deliveries');
  },
});
