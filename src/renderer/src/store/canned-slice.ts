import type { StateCreator } from 'zustand';
import type { CannedReply } from '../../../shared/console-api.ts';
import { api } from '../api/bridge.ts';
import type { ConsoleState } from './index.ts';

export interface CannedSlice {
  /** Every saved snippet; the picker filters them as the operator types. */
  canned: CannedReply[];
  cannedLoaded: boolean;
  cannedError: string | null;
  loadCanned(): Promise<void>;
  /** Returns an error message, or null when saved. */
  saveCanned(entry: { id?: number; title: string; content: string }): Promise<string | null>;
  removeCanned(id: number): Promise<void>;
}

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

export const cannedSlice: Slice<CannedSlice> = (set, get) => ({
  canned: [],
  cannedLoaded: false,
  cannedError: null,
  async loadCanned() {
    const r = await api.listCanned({});
    if (r.ok) set({ canned: r.value, cannedLoaded: true, cannedError: null });
    else set({ cannedError: r.error.message });
  },
  async saveCanned(entry) {
    const r = await api.saveCanned(entry);
    if (!r.ok) return r.error.message;
    await get().loadCanned();
    return null;
  },
  async removeCanned(id) {
    const r = await api.removeCanned({ id });
    if (!r.ok) set({ cannedError: r.error.message });
    await get().loadCanned();
  },
});

/** Case-insensitive match on title and text; titles that start with the query come first. */
export function searchCanned(list: readonly CannedReply[], query: string): CannedReply[] {
  const q = query.trim().toLowerCase();
  if (!q) return [...list].sort((a, b) => a.title.localeCompare(b.title));
  const hits = list.filter((c) => c.title.toLowerCase().includes(q) || c.content.toLowerCase().includes(q));
  const rank = (c: CannedReply): number => (c.title.toLowerCase().startsWith(q) ? 0 : c.title.toLowerCase().includes(q) ? 1 : 2);
  return hits.sort((a, b) => rank(a) - rank(b) || a.title.localeCompare(b.title));
}
