import type { StateCreator } from 'zustand';
import type { ProposalGroup } from '../../../shared/console-api.ts';
import { api } from '../api/bridge.ts';
import type { ConsoleState } from './index.ts';
import { allowed } from './accounts-slice.ts';

export type ProposalFilter = 'pending' | 'rejected';

export interface LearnSlice {
  proposalGroups: ProposalGroup[];
  proposalFilter: ProposalFilter;
  proposalsLoaded: boolean;
  /** Proposals waiting for a decision (the nav's badge). */
  pendingProposals: number;
  /** What the last decision did, for the view's status line. */
  learnStatus: { kind: 'approved' | 'merged' | 'rejected' | 'saved' | 'proposed'; count: number } | null;
  loadProposals(): Promise<void>;
  loadProposalCount(): Promise<void>;
  setProposalFilter(filter: ProposalFilter): void;
  /** A live event: the count now, and the list again if it is on screen. */
  onProposals(pending: number): void;
  saveProposal(p: { id?: number; question: string; answer: string; entryId?: number | null }): Promise<boolean>;
  /** "Teach the bot" from a transcript line: null once proposed, else why not (shown in the dialog). */
  teachBot(p: { question: string; answer: string; from: { conversationId: string; messageIds: string[] } }): Promise<string | null>;
  approveProposals(ids: number[], question: string, answer: string, phrasings: string[]): Promise<boolean>;
  /** With `answer`, the entry's answer is replaced too (a correction). */
  mergeProposals(ids: number[], entryId: number, phrasings: string[], answer?: string): Promise<boolean>;
  rejectProposals(ids: number[], reason: string): Promise<boolean>;
}

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

export const learnSlice: Slice<LearnSlice> = (set, get) => {
  /** After a change: the list and the count again; false (with the error shown) when it failed. */
  const done = async (r: { ok: boolean; error?: { message: string } }, status: LearnSlice['learnStatus']): Promise<boolean> => {
    if (!r.ok) return (set({ error: r.error?.message ?? null }), false);
    set({ learnStatus: status, error: null });
    await get().loadProposals();
    return true;
  };
  return {
    proposalGroups: [],
    proposalFilter: 'pending',
    proposalsLoaded: false,
    pendingProposals: 0,
    learnStatus: null,
    async loadProposals() {
      const r = await api.listProposals({ filter: get().proposalFilter });
      if (r.ok) set({ proposalGroups: r.value.groups, pendingProposals: r.value.pending, proposalsLoaded: true });
      else set({ error: r.error.message });
    },
    async loadProposalCount() {
      if (!allowed(get(), 'countProposals')) return;
      const r = await api.countProposals({});
      if (r.ok) set({ pendingProposals: r.value.pending });
    },
    setProposalFilter(proposalFilter) {
      set({ proposalFilter, learnStatus: null });
      void get().loadProposals();
    },
    onProposals(pending) {
      set({ pendingProposals: pending });
      if (get().view === 'learn') void get().loadProposals();
    },
    async saveProposal(p) {
      return done(await api.saveProposal(p), { kind: p.id === undefined ? 'proposed' : 'saved', count: 1 });
    },
    async teachBot(p) {
      const r = await api.saveProposal(p);
      // The count and an open Learn list follow from the service's proposals event.
      return r.ok ? null : r.error.message;
    },
    async approveProposals(ids, question, answer, phrasings) {
      const r = await api.approveProposals({ ids, question, answer, phrasings });
      return done(r, { kind: 'approved', count: r.ok ? r.value.decided : 0 });
    },
    async mergeProposals(ids, entryId, phrasings, answer) {
      const r = await api.mergeProposals({ ids, entryId, phrasings, ...(answer !== undefined ? { answer } : {}) });
      return done(r, { kind: 'merged', count: r.ok ? r.value.decided : 0 });
    },
    async rejectProposals(ids, reason) {
      const r = await api.rejectProposals({ ids, reason });
      return done(r, { kind: 'rejected', count: r.ok ? r.value.decided : 0 });
    },
  };
};
