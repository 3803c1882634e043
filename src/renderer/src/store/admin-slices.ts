import type { StateCreator } from 'zustand';
import type { ClientView, ConsoleOutputs, DashboardStats, KbEntryView } from '../../../shared/console-api.ts';
import { api } from '../api/bridge.ts';
import type { ConsoleState } from './index.ts';
import { allowed } from './accounts-slice.ts';

export interface ClientsSlice {
  clients: ClientView[];
  /** Set once the first list arrived: until then "no clients" is not known. */
  clientsLoaded: boolean;
  /** A secret just made: shown once, then forgotten by the console too. */
  freshSecret: { id: string; secret: string } | null;
  loadClients(): Promise<void>;
  addClient(id: string, settings: Record<string, unknown>): Promise<boolean>;
  rotateClient(id: string): Promise<void>;
  setClientEnabled(id: string, enabled: boolean): Promise<void>;
  updateClientSettings(id: string, settings: Record<string, unknown>): Promise<boolean>;
  dismissSecret(): void;
  /** A client whose settings another view asked to open (a conversation with no send_url): Clients opens its form. */
  clientFocus: string | null;
  openClientSettings(id: string): void;
  clearClientFocus(): void;
}

export interface KbSlice {
  kb: KbEntryView[];
  kbSearch: string;
  /** The entry opened from elsewhere (a knowledge-base source in the transcript): highlighted and scrolled to. */
  kbFocus: number | null;
  /** Opens the knowledge base at this entry (clearing a search that could hide it). */
  /** Shows the knowledge base at this entry (a reply's source): cleared search, entry highlighted. */
  openKbEntry(id: number): void;
  tried: (ConsoleOutputs['tryKb'] & { question: string }) | null;
  loadKb(): Promise<void>;
  setKbSearch(search: string): void;
  saveKb(entry: { id?: number; question: string; answer: string; phrasings?: string[] }): Promise<boolean>;
  /** Whether it was deleted. */
  removeKb(id: number): Promise<boolean>;
  importKb(fileName: string, text: string): Promise<number | null>;
  tryKb(question: string): Promise<void>;
}

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

export const clientsSlice: Slice<ClientsSlice> = (set, get) => ({
  clients: [],
  clientsLoaded: false,
  freshSecret: null,
  async loadClients() {
    if (!allowed(get(), 'listClients')) return;
    const r = await api.listClients({});
    if (!r.ok) return set({ error: r.error.message });
    const first = !get().clientsLoaded;
    set({ clients: r.value, clientsLoaded: true });
    // An empty console leads the way: the first-run view, unless the operator already went elsewhere.
    if (first && r.value.length === 0 && get().view === 'conversations') get().setView('start');
  },
  async addClient(id, settings) {
    const r = await api.addClient({ id, settings });
    if (!r.ok) return (set({ error: r.error.message }), false);
    set({ freshSecret: r.value });
    await get().loadClients();
    return true;
  },
  async rotateClient(id) {
    const r = await api.rotateClient({ id });
    if (!r.ok) return set({ error: r.error.message });
    set({ freshSecret: { id, secret: r.value.secret } });
    await get().loadClients();
  },
  async setClientEnabled(id, enabled) {
    const r = await api.setClientEnabled({ id, enabled });
    if (!r.ok) set({ error: r.error.message });
    await get().loadClients();
  },
  async updateClientSettings(id, settings) {
    const r = await api.updateClientSettings({ id, settings });
    if (!r.ok) return (set({ error: r.error.message }), false);
    // A save that works answers the banner an earlier failed one left.
    set({ error: null });
    await get().loadClients();
    // The open conversation's reply box depends on its client's send_url: a new one shows at once.
    if (get().transcript?.conversation.clientId === id) void get().loadTranscript();
    return true;
  },
  dismissSecret: () => set({ freshSecret: null }),
  clientFocus: null,
  openClientSettings(id) {
    set({ clientFocus: id });
    get().goTo('clients');
  },
  clearClientFocus: () => set({ clientFocus: null }),
});

export const kbSlice: Slice<KbSlice> = (set, get) => ({
  kb: [],
  kbSearch: '',
  kbFocus: null,
  openKbEntry(id) {
    set({ view: 'kb', kbFocus: id, kbSearch: '' });
    void get().loadKb();
  },
  tried: null,
  async loadKb() {
    const r = await api.listKb({ search: get().kbSearch || undefined });
    if (r.ok) set({ kb: r.value });
    else set({ error: r.error.message });
  },
  setKbSearch(kbSearch) {
    set({ kbSearch });
    void get().loadKb();
  },
  async saveKb(entry) {
    const r = await api.saveKb(entry);
    if (!r.ok) return (set({ error: r.error.message }), false);
    await get().loadKb();
    return true;
  },
  async removeKb(id) {
    const r = await api.removeKb({ id });
    if (!r.ok) set({ error: r.error.message });
    await get().loadKb();
    return r.ok;
  },
  async importKb(fileName, text) {
    const r = await api.importKb({ fileName, text });
    if (!r.ok) return (set({ error: r.error.message }), null);
    await get().loadKb();
    return r.value.imported;
  },
  async tryKb(question) {
    const r = await api.tryKb({ question });
    if (r.ok) set({ tried: { ...r.value, question } });
    else set({ error: r.error.message });
  },
});

export interface StatsSlice {
  stats: DashboardStats | null;
  loadStats(): Promise<void>;
}

export const statsSlice: Slice<StatsSlice> = (set) => ({
  stats: null,
  async loadStats() {
    const r = await api.stats({ minutes: 60 });
    if (r.ok) set({ stats: r.value });
    else set({ error: r.error.message });
  },
});
