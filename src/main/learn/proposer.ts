import type { StoreContract } from '../store/contract.ts';
import type { InTransaction } from '../store/in-transaction.ts';
import type { Operator } from '../../shared/console-workspace.ts';
import type { ProposalSource } from '../../shared/console-learn.ts';
import type { EventBus } from '../console-api/events.ts';
import { auditDetail } from '../conversations/workspace-commands.ts';
import { maskPersonalData } from './mask.ts';
import { answerLikeness, normalise, questionLikeness } from './similarity.ts';
import { entryWithAnswer } from './entry-answers.ts';

/** An operator reply just stored, as the console handler saw it. */
export interface OperatorAnswer {
  conversationId: string;
  clientId: string;
  replyMsgId: string;
  content: string;
  operator: Operator;
  /** The customer messages it answers (since the last answer); empty when it follows a bot answer. */
  answered: ReadonlyArray<{ id: number; msgId: string }>;
  /** The conversation needed a human when the operator sent it. */
  neededHuman: boolean;
  now: number;
}

/** The longest question kept: a customer who pasted a page asked no one question. */
const QUESTION_MAX = 2000;
/** An operator reply this close to the bot's answer agrees with it: nothing to learn. */
const SAME_AS_BOT = 0.9;

/** What proposing reads and writes. */
export type ProposerStore = Pick<StoreContract, 'accounts' | 'conversations' | 'people' | 'proposalSources' | 'kb' | 'proposals' | 'audit'>;

export interface ProposerDeps {
  store: ProposerStore;
  /** The proposal and its audit row as one transaction. */
  inTransaction: InTransaction<Pick<StoreContract, 'proposals' | 'audit'>>;
  events: EventBus;
  log: (line: string) => void;
}

/** Names that may appear in a conversation's texts: its customers' (people) and the team's. */
export async function knownNames(
  store: Pick<StoreContract, 'accounts' | 'conversations' | 'people' | 'proposalSources'>,
  clientId: string,
  conversationId: string | null,
  also: readonly string[] = [],
): Promise<string[]> {
  const names = new Set(also);
  for (const a of await store.accounts.list()) names.add(a.name);
  if (conversationId) {
    const conv = await store.conversations.byId(conversationId);
    if (conv?.customerName) names.add(conv.customerName);
    for (const n of (await store.people.names(clientId, await store.proposalSources.customerIds(conversationId))).values()) names.add(n);
  }
  return [...names].filter((n) => n.trim() !== '');
}

/**
 * Turns operators' answers into knowledge-base proposals, after the reply and off its path: the
 * handler hands the reply over and returns; the work runs on a later turn, and a failure is
 * logged, never the operator's. `busy`/`settled` let quiesce wait for it.
 */
export function createProposer(deps: ProposerDeps) {
  const { store } = deps;
  let inFlight = 0;
  let waiters: Array<() => void> = [];

  /** What the operator answered and why it is worth learning, or null when it is not. */
  async function sourceOf(a: OperatorAnswer): Promise<{ source: ProposalSource; question: string[]; bot: string | null } | null> {
    if (a.answered.length > 0) {
      const decision = await store.proposalSources.botDecisionSince(a.conversationId, a.answered[0]!.id);
      if (decision !== 'handoff' && !a.neededHuman) return null;
      return { source: 'handoff', question: a.answered.map((m) => m.msgId), bot: null };
    }
    // A correction: the operator spoke right after a bot answer, before the customer wrote again.
    const last = await store.proposalSources.lastReply(a.conversationId, a.replyMsgId);
    if (!last || last.kind === 'operator' || last.handoff || last.cause !== null) return null;
    if (await store.proposalSources.spokeAfter(a.conversationId, last.afterMessageId)) return null;
    return { source: 'correction', question: last.replyTo, bot: last.content };
  }

  async function propose(a: OperatorAnswer): Promise<number | null> {
    const found = await sourceOf(a);
    if (!found) return null;
    if (found.bot !== null && answerLikeness(found.bot, a.content) >= SAME_AS_BOT) return null;
    const messages = await store.proposalSources.customerMessages(a.conversationId, found.question);
    const text = messages.flatMap((m) => (m.content?.trim() ? [m.content.trim()] : [])).join('\n').slice(0, QUESTION_MAX);
    if (text === '') return null;
    const names = await knownNames(store, a.clientId, a.conversationId, [a.operator.name]);
    const question = maskPersonalData(text, names);
    const answer = maskPersonalData(a.content, names);
    // The operator gave an entry's answer (pasted, greeted, edited a little): the customer asked that entry's question in other words.
    const best = await entryWithAnswer(store.kb, answer);
    // Already one of the entry's ways of asking: nothing to learn (the engine missed it for another reason).
    if (best && [best.question, ...best.phrasings].some((q) => normalise(q).trim() === normalise(question).trim() || questionLikeness(q, question) >= 0.95)) return null;
    if ((await store.proposals.duplicate(a.conversationId, question, answer)) !== null) return null;
    const target: { id: number } | null = best;
    const kind = target ? 'phrasing' : 'entry';
    return deps.inTransaction(async (tx) => {
      const id = await tx.proposals.add({
        kind,
        source: found.source,
        question,
        answer,
        entryId: target?.id ?? null,
        conversationId: a.conversationId,
        messageIds: [...messages.map((m) => m.msgId), a.replyMsgId],
        operator: a.operator,
        now: a.now,
      });
      await tx.audit.insert({
        at: a.now,
        operator: a.operator,
        action: 'learn',
        conversationId: a.conversationId,
        detail: auditDetail({ proposed: id, kind, source: found.source, ...(target ? { entry: target.id } : {}), reply: a.replyMsgId }),
      });
      return id;
    });
  }

  /** The work of one reply; never throws (a failure is logged). */
  async function learnFrom(a: OperatorAnswer): Promise<void> {
    try {
      if ((await propose(a)) !== null) deps.events.emit({ type: 'proposals', pending: await store.proposals.pendingCount() });
    } catch (error) {
      deps.log(`learn: no proposal from reply ${a.replyMsgId} in ${a.conversationId}: ${(error as Error).stack ?? String(error)}`);
    } finally {
      inFlight--;
      if (inFlight === 0) {
        const w = waiters;
        waiters = [];
        for (const resolve of w) resolve();
      }
    }
  }

  return {
    /** Called once the reply is stored; returns at once. */
    afterReply(a: OperatorAnswer): void {
      inFlight++;
      setImmediate(() => void learnFrom(a));
    },
    busy: (): number => inFlight,
    settled: (): Promise<void> => (inFlight === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
    /** For tests: the same work, in line. */
    proposeNow: propose,
  };
}

export type Proposer = ReturnType<typeof createProposer>;
