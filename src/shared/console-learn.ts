import { z } from 'zod';
import type { Operator } from './console-workspace.ts';

/**
 * Learning from the team in the console API: knowledge-base changes proposed from operators'
 * answers (masked of personal data), grouped when customers asked the same thing, and an admin's
 * decision on each. Spread into consoleInputs / ConsoleOutputs (console-api.ts).
 */

export const PROPOSAL_KINDS = ['entry', 'phrasing'] as const;
export type ProposalKind = (typeof PROPOSAL_KINDS)[number];
export const PROPOSAL_STATES = ['pending', 'approved', 'merged', 'rejected'] as const;
export type ProposalState = (typeof PROPOSAL_STATES)[number];
/** What made it: an operator answering a handed-off question, correcting a bot answer, or an agent by hand. */
export const PROPOSAL_SOURCES = ['handoff', 'correction', 'agent'] as const;
export type ProposalSource = (typeof PROPOSAL_SOURCES)[number];
/** The Learn view's filters: waiting for a decision, or rejected (with their reasons). */
export const PROPOSAL_FILTERS = ['pending', 'rejected'] as const;

export interface KbProposal {
  id: number;
  kind: ProposalKind;
  state: ProposalState;
  source: ProposalSource;
  /** Masked: [name], [email], [phone], [number], [url] stand where personal data was. */
  question: string;
  answer: string;
  /** A phrasing's entry (it may have been removed since). */
  entryId: number | null;
  /** Provenance: the conversation, its customer messages and the operator reply (msg_ids), who, when. */
  conversationId: string | null;
  messageIds: string[];
  operator: Operator | null;
  createdAt: number;
  updatedAt: number;
  decidedBy: Operator | null;
  decidedAt: number | null;
  /** Why it was rejected. */
  reason: string | null;
  /** The entry an approval made or a merge joined. */
  resultEntryId: number | null;
}

/** Proposals that ask the same thing (same entry, or like questions), newest first. */
export interface ProposalGroup {
  proposals: KbProposal[];
  entryId: number | null;
  /** The target entry as it is now (null: none, or removed). */
  entry: { id: number; question: string; answer: string; phrasings: string[] } | null;
  count: number;
  /** How many in the seven days before now ("asked 7 times this week"). */
  thisWeek: number;
  lastAt: number;
}

const ids = z.array(z.number().int().positive()).min(1).max(500);
const question = z.string().trim().min(1, 'write the question').max(2000);
const answer = z.string().trim().min(1, 'write the answer').max(20_000);

export const learnInputs = {
  /** Grouped proposals: those waiting (default) or the rejected ones. */
  listProposals: z.object({ filter: z.enum(PROPOSAL_FILTERS).default('pending'), limit: z.number().int().min(1).max(2000).default(500) }),
  /** Proposals waiting for a decision (the nav's badge). */
  countProposals: z.object({}),
  /**
   * A proposal by hand, or an edit of one still waiting (an agent edits only their own). Texts are
   * masked as the service's own are. `entryId`: a phrasing for that entry rather than a new entry.
   */
  saveProposal: z.object({
    id: z.number().int().positive().optional(),
    question,
    answer,
    entryId: z.number().int().positive().nullable().optional(),
    /**
     * A new proposal taught from a conversation ("Teach the bot"): its customer messages and the
     * bot reply being corrected, if any (msg_ids). Each must be that conversation's; kept as the
     * proposal's provenance. Its source is `correction` when a bot answer is among them, else
     * `handoff`. Without `entryId`, an answer that is an entry's makes it a phrasing of that entry.
     */
    from: z.object({ conversationId: z.string().min(1).max(128), messageIds: z.array(z.string().min(1).max(128)).min(1).max(100) }).optional(),
  }),
  /**
   * Approves a group as one new entry (the question and answer as edited; the other questions of
   * the group become its phrasings unless `phrasings` says otherwise). The bot answers with it at once.
   */
  approveProposals: z.object({ ids, question, answer, phrasings: z.array(z.string().trim().min(1).max(2000)).max(100).optional() }),
  /** Folds proposals into an existing entry: their questions (or `phrasings`, as edited) become its "also asked as". */
  mergeProposals: z.object({
    ids,
    entryId: z.number().int().positive(),
    phrasings: z.array(z.string().trim().min(1).max(2000)).max(100).optional(),
    /** Also the entry's new answer: a correction of the bot's answer replaces it. */
    answer: z.string().trim().min(1).max(20_000).optional(),
  }),
  /** Rejected, with why: kept and shown under the Rejected filter. */
  rejectProposals: z.object({ ids, reason: z.string().trim().min(1, 'say why').max(500) }),
} as const;

export interface LearnOutputs {
  listProposals: { groups: ProposalGroup[]; pending: number };
  countProposals: { pending: number };
  saveProposal: KbProposal;
  approveProposals: { entryId: number; decided: number };
  mergeProposals: { entryId: number; decided: number; added: number };
  rejectProposals: { decided: number };
}

/** Live: the proposals changed (one made, edited or decided); `pending`: how many now wait. */
export type LearnEvent = { type: 'proposals'; pending: number };
