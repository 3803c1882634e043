import type { StateCreator } from 'zustand';
import { LIST_PAGE_MAX, type Assignment, type CONVERSATION_FILTERS, type ConsoleInput, type ConversationPage, type ConversationSummary } from '../../../shared/console-api.ts';
import type { Channel } from '../../../shared/conversation.ts';
import { api } from '../api/bridge.ts';
import { serialQueue } from '../../../shared/serial-queue.ts';
import type { ConsoleState } from './index.ts';

type Filter = (typeof CONVERSATION_FILTERS)[number];
type Slice<T> = StateCreator<ConsoleState, [], [], T>;

/** Transcript messages per page: the newest page on open, and each "load earlier" step. */
export const TRANSCRIPT_PAGE = 50;
/** Rows per request: the first page, and each page the list asks for as the operator scrolls near its end. */
export const LIST_PAGE = 100;
/** A reload (live change of a filtered list, a write, a reconnect) keeps at most this many rows already loaded. */
export const RELOAD_KEEP_MAX = 1000;

export interface ConversationsSlice {
  conversations: ConversationSummary[];
  /** `assignment`: team mode's Mine / Unassigned / All tabs (absent: all). */
  filter: { state?: Filter; channel?: Channel; clientId?: string; search: string; assignment?: Assignment };
  selectedId: string | null;
  loaded: boolean;
  /** Where the next page starts; null once the whole list is loaded. */
  nextCursor: string | null;
  loadingMore: boolean;
  setFilter(patch: Partial<ConversationsSlice['filter']>): void;
  /** Reloads the list from the top, as many rows as were loaded (up to RELOAD_KEEP_MAX), so the operator keeps their place. */
  loadConversations(): Promise<void>;
  /** The next page, appended; a no-op while one is loading or at the end. */
  loadMore(): Promise<void>;
  /** Live updates: fetch just these conversations and move them into place. */
  mergeConversations(ids: string[]): Promise<void>;
  select(id: string | null): void;
  move(delta: number): void;
}

export const isFiltered = (f: ConversationsSlice['filter']): boolean =>
  f.state !== undefined || f.channel !== undefined || f.clientId !== undefined || f.search !== '' || (f.assignment !== undefined && f.assignment !== 'all');

const query = (f: ConversationsSlice['filter']): ConsoleInput<'listConversations'> => ({
  state: f.state,
  channel: f.channel,
  clientId: f.clientId,
  search: f.search || undefined,
  assignment: f.assignment === 'all' ? undefined : f.assignment,
});

/** Pages from the top until `rows` rows (or the end): one result, or the first error. */
export async function loadPages(input: ConsoleInput<'listConversations'>, rows: number): Promise<{ ok: true; page: ConversationPage } | { ok: false; message: string }> {
  const items: ConversationSummary[] = [];
  let cursor: string | undefined;
  for (;;) {
    const r = await api.listConversations({ ...input, limit: Math.min(LIST_PAGE_MAX, Math.max(1, rows - items.length)), cursor });
    if (!r.ok) return { ok: false, message: r.error.message };
    items.push(...r.value.items);
    if (r.value.nextCursor === null || items.length >= rows) return { ok: true, page: { items, nextCursor: r.value.nextCursor } };
    cursor = r.value.nextCursor;
  }
}

/** Appends a page, skipping rows already listed (a row moved up by live activity). */
export function appendPage(list: ConversationSummary[], page: ConversationSummary[]): ConversationSummary[] {
  const listed = new Set(list.map((c) => c.id));
  return [...list, ...page.filter((c) => !listed.has(c.id))];
}

// Each list load or filter change starts a generation; answers to an older one are dropped, so a
// slow page for the previous search never lands in the new list.
let generation = 0;
// Reloads and next pages run one at a time (see shared/serial-queue.ts); a reload superseded while it waited is skipped.
const listQueue = serialQueue();

export const conversationsSlice: Slice<ConversationsSlice> = (set, get) => {
  /** The list from the top, `rows` rows (read when the load starts); the rows on screen stay until the answer replaces them (no flicker while typing). */
  const reload = (rows: () => number): Promise<void> => {
    const mine = ++generation;
    return listQueue(async () => {
      if (mine !== generation) return;
      const r = await loadPages(query(get().filter), rows());
      if (mine !== generation) return;
      if (r.ok) set({ conversations: r.page.items, nextCursor: r.page.nextCursor, loaded: true, loadingMore: false });
      else set({ error: r.message, loadingMore: false });
    });
  };
  return {
    conversations: [],
    filter: { search: '' },
    selectedId: null,
    loaded: false,
    nextCursor: null,
    loadingMore: false,
    setFilter(patch) {
      // A new filter or search starts at page one; the old list's cursor must not fetch a page of the new one.
      set((s) => ({ filter: { ...s.filter, ...patch }, nextCursor: null }));
      void reload(() => LIST_PAGE);
    },
    loadConversations: () => reload(() => Math.min(RELOAD_KEEP_MAX, Math.max(LIST_PAGE, get().conversations.length))),
    async loadMore() {
      if (get().nextCursor === null || get().loadingMore) return;
      set({ loadingMore: true });
      await listQueue(async () => {
        // Read when the page starts: a reload queued before it may have replaced the list and its cursor.
        const { nextCursor, filter } = get();
        if (nextCursor === null) return set({ loadingMore: false });
        const mine = generation;
        const r = await api.listConversations({ ...query(filter), limit: LIST_PAGE, cursor: nextCursor });
        if (mine !== generation) return;
        if (r.ok) set((s) => ({ conversations: appendPage(s.conversations, r.value.items), nextCursor: r.value.nextCursor, loadingMore: false }));
        else set({ error: r.error.message, loadingMore: false });
      });
    },
    async mergeConversations(ids) {
      // A filtered list may gain or lose rows on any change: reload the rows it had.
      if (isFiltered(get().filter)) return get().loadConversations();
      const mine = generation;
      const r = await api.getConversations({ ids });
      if (mine !== generation) return;
      if (!r.ok) return set({ error: r.error.message });
      const { conversations, nextCursor } = get();
      const changed = new Map(r.value.map((c) => [c.id, c]));
      // A row whose last activity did not move (read, resolved, stopped) keeps its place, so j/k and
      // the eye do not lose it; conversations with new activity go in front, everything else keeps its order.
      const moved: ConversationSummary[] = [];
      const rest: ConversationSummary[] = [];
      const listed = new Set<string>();
      for (const c of conversations) {
        const next = changed.get(c.id);
        if (next) listed.add(c.id);
        if (!next) rest.push(c);
        else if (next.lastMessageAt === c.lastMessageAt) rest.push(next);
        else moved.push(next);
      }
      // One not loaded yet comes in front only if it now sorts among the loaded rows; otherwise a later page brings it.
      const oldest = conversations.at(-1)?.lastMessageAt ?? -Infinity;
      for (const c of changed.values()) if (!listed.has(c.id) && (nextCursor === null || c.lastMessageAt > oldest)) moved.push(c);
      moved.sort((a, b) => b.lastMessageAt - a.lastMessageAt);
      set({ conversations: [...moved, ...rest] });
    },
    select(id) {
      set({ selectedId: id, transcript: null, transcriptLoad: null, suggestion: null });
      void get().loadTranscript();
    },
    move(delta) {
      const { conversations, selectedId } = get();
      if (conversations.length === 0) return;
      const at = conversations.findIndex((c) => c.id === selectedId);
      const next = Math.min(conversations.length - 1, Math.max(0, at < 0 ? 0 : at + delta));
      get().select(conversations[next]!.id);
      // j/k near the end fetch the next page, as scrolling does.
      if (next >= conversations.length - 5) void get().loadMore();
    },
  };
};
