import type { StoreContract } from '../store/contract.ts';
import type { InTransaction } from '../store/in-transaction.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ConsoleHandlers, KbProposal, Operator, ProposalGroup, ProposalSource } from '../../shared/console-api.ts';
import type { Caller } from '../../shared/console-roles.ts';
import type { EventBus } from './events.ts';
import { ConsoleError } from './console-error.ts';
import { requireOperator } from './operator-guard.ts';
import { auditDetail } from '../conversations/workspace-commands.ts';
import { groupProposals } from '../learn/grouping.ts';
import { knownNames } from '../learn/proposer.ts';
import { maskPersonalData } from '../learn/mask.ts';
import { entryWithAnswer } from '../learn/entry-answers.ts';

/** What the Learn view reads and changes. */
type LearnStore = Pick<StoreContract, 'accounts' | 'conversations' | 'people' | 'proposalSources' | 'kb' | 'proposals' | 'audit'>;

export interface LearnHandlerDeps {
  store: LearnStore;
  /** A decision, its knowledge-base change and its audit row as one transaction. */
  inTransaction: InTransaction<LearnStore>;
  clock: Clock;
  events: EventBus;
}

type LearnMethods = 'listProposals' | 'countProposals' | 'saveProposal' | 'approveProposals' | 'mergeProposals' | 'rejectProposals';

/**
 * The Learn view: proposals grouped, edited, and decided. Each decision changes the knowledge base
 * and the proposals in one transaction with its audit row, so a proposal is never approved without
 * its entry nor an entry made twice; the engine sees the change at its next question (it re-reads
 * the knowledge base when its version moves).
 */
export function createLearnHandlers(deps: LearnHandlerDeps): Pick<ConsoleHandlers, LearnMethods> {
  const { store, clock } = deps;

  const changed = async (): Promise<void> => deps.events.emit({ type: 'proposals', pending: await store.proposals.pendingCount() });
  const entryView = async (id: number | null): Promise<ProposalGroup['entry']> => {
    const e = id === null ? undefined : await store.kb.get(id);
    return e ? { id: e.id, question: e.question, answer: e.answer, phrasings: e.phrasings } : null;
  };
  /** The proposals named, every one still waiting: a decision covers exactly what the admin saw. */
  const pending = async (tx: LearnStore, ids: readonly number[]): Promise<KbProposal[]> => {
    const found: KbProposal[] = [];
    for (const id of new Set(ids)) {
      const p = await tx.proposals.get(id);
      if (!p) throw new ConsoleError('not_found', `no proposal ${id}`);
      if (p.state !== 'pending') throw new ConsoleError('already_decided', `proposal ${id} was already ${p.state}${p.decidedBy ? ` by ${p.decidedBy.name}` : ''}; reload the list`);
      found.push(p);
    }
    return found;
  };
  const audit = async (tx: LearnStore, operator: Operator & { address: string | null }, detail: Record<string, unknown>, conversationId: string | null = null): Promise<void> => {
    await tx.audit.insert({ at: clock.now(), operator, action: 'learn', conversationId, detail: auditDetail(detail) });
  };
  // An edit by hand is masked too: an agent may paste a customer's details from the transcript.
  const mask = async (text: string, caller: Caller): Promise<string> => maskPersonalData(text, await knownNames(store, '', null, caller.account ? [caller.account.name] : []));

  /** A lesson's provenance, checked: every message named is a customer message or a bot reply of that conversation. */
  const taughtFrom = async (from: { conversationId: string; messageIds: string[] }): Promise<{ conversationId: string; clientId: string; messageIds: string[]; source: ProposalSource }> => {
    const conv = await store.conversations.byId(from.conversationId);
    if (!conv) throw new ConsoleError('not_found', `no conversation ${from.conversationId}`);
    const wanted = [...new Set(from.messageIds)];
    const asked = await store.proposalSources.customerMessages(conv.id, wanted);
    const bot = await store.proposalSources.botReplies(conv.id, wanted);
    const found = new Set([...asked.map((m) => m.msgId), ...bot.map((r) => r.msgId)]);
    const stray = wanted.filter((m) => !found.has(m));
    if (stray.length > 0) throw new ConsoleError('invalid_input', `from.messageIds: ${stray.join(', ')} ${stray.length === 1 ? 'is not a customer message or bot reply' : 'are not customer messages or bot replies'} of conversation ${conv.id}`);
    if (asked.length === 0) throw new ConsoleError('invalid_input', 'from.messageIds: name at least one customer message (the question taught)');
    return {
      conversationId: conv.id,
      clientId: conv.clientId,
      messageIds: [...asked.map((m) => m.msgId), ...bot.map((r) => r.msgId)],
      source: bot.some((r) => r.answered) ? 'correction' : 'handoff',
    };
  };

  return {
    async listProposals(input) {
      const now = clock.now();
      const groups = [];
      for (const g of groupProposals(await store.proposals.list(input.filter, input.limit), now)) groups.push({ ...g, entry: await entryView(g.entryId) });
      return { groups, pending: await store.proposals.pendingCount() };
    },
    async countProposals() {
      return { pending: await store.proposals.pendingCount() };
    },
    async saveProposal(input, caller) {
      const operator = requireOperator(caller);
      if (input.from && input.id !== undefined) throw new ConsoleError('invalid_input', 'from: only a new proposal is taught from a conversation; an edit keeps its provenance');
      const from = input.from ? await taughtFrom(input.from) : null;
      let entryId = input.entryId ?? null;
      if (entryId !== null && !(await store.kb.get(entryId))) throw new ConsoleError('invalid_input', `entryId: no knowledge-base entry ${entryId}`);
      const names = from ? await knownNames(store, from.clientId, from.conversationId, [operator.name]) : null;
      const question = names ? maskPersonalData(input.question, names) : await mask(input.question, caller);
      const answer = names ? maskPersonalData(input.answer, names) : await mask(input.answer, caller);
      // Taught the answer an entry already gives: the customer asked that entry's question in other words.
      if (from && input.entryId === undefined) entryId = (await entryWithAnswer(store.kb, answer))?.id ?? null;
      const now = clock.now();
      const id = await deps.inTransaction(async (tx) => {
        if (input.id === undefined) {
          // The same lesson sent twice (a double click, a retry) is one proposal.
          const same = from ? await tx.proposals.duplicate(from.conversationId, question, answer) : null;
          if (same !== null) return same;
          const kind = entryId === null ? 'entry' : 'phrasing';
          const source = from?.source ?? 'agent';
          const made = await tx.proposals.add({ kind, source, question, answer, entryId, conversationId: from?.conversationId ?? null, messageIds: from?.messageIds ?? [], operator, now });
          await audit(tx, operator, { proposed: made, kind, source, ...(entryId !== null ? { entry: entryId } : {}), ...(from ? { messages: from.messageIds } : {}) }, from?.conversationId ?? null);
          return made;
        }
        const [p] = await pending(tx, [input.id]);
        // Agents propose; a proposal is its author's to edit until an admin decides (admins edit any).
        if (caller.role !== 'admin' && p!.operator?.id !== operator.id) throw new ConsoleError('forbidden', `proposal ${input.id} is ${p!.operator?.name ?? 'the service'}'s; you may edit only your own`);
        await tx.proposals.edit(input.id, { question, answer, entryId }, now);
        await audit(tx, operator, { edited: input.id, question, ...(entryId !== null ? { entry: entryId } : {}) }, p!.conversationId);
        return input.id;
      });
      await changed();
      return (await store.proposals.get(id))!;
    },
    async approveProposals(input, caller) {
      const operator = requireOperator(caller);
      const now = clock.now();
      const result = await deps.inTransaction(async (tx) => {
        const group = await pending(tx, input.ids);
        const phrasings = input.phrasings ?? group.map((p) => p.question);
        const entryId = await tx.kb.add(input.question, input.answer, now, phrasings);
        const decided = await tx.proposals.decide(input.ids, { state: 'approved', by: operator, at: now, reason: null, resultEntryId: entryId });
        await audit(tx, operator, { approved: group.map((p) => p.id), entry: entryId, question: input.question }, group[0]!.conversationId);
        return { entryId, decided };
      });
      await changed();
      return result;
    },
    async mergeProposals(input, caller) {
      const operator = requireOperator(caller);
      const now = clock.now();
      if (!(await store.kb.get(input.entryId))) throw new ConsoleError('not_found', `no knowledge-base entry ${input.entryId}`);
      const result = await deps.inTransaction(async (tx) => {
        const group = await pending(tx, input.ids);
        const phrasingsOf = async (): Promise<number> => (await tx.kb.get(input.entryId))!.phrasings.length;
        const before = await phrasingsOf();
        for (const text of input.phrasings ?? group.map((p) => p.question)) await tx.kb.addPhrasing(input.entryId, text, now);
        const added = (await phrasingsOf()) - before;
        if (input.answer !== undefined) await tx.kb.update(input.entryId, (await tx.kb.get(input.entryId))!.question, input.answer, now);
        const decided = await tx.proposals.decide(input.ids, { state: 'merged', by: operator, at: now, reason: null, resultEntryId: input.entryId });
        await audit(tx, operator, { merged: group.map((p) => p.id), entry: input.entryId, added, ...(input.answer !== undefined ? { answerReplaced: true } : {}) }, group[0]!.conversationId);
        return { entryId: input.entryId, decided, added };
      });
      await changed();
      return result;
    },
    async rejectProposals(input, caller) {
      const operator = requireOperator(caller);
      const now = clock.now();
      const decided = await deps.inTransaction(async (tx) => {
        const group = await pending(tx, input.ids);
        const n = await tx.proposals.decide(input.ids, { state: 'rejected', by: operator, at: now, reason: input.reason, resultEntryId: null });
        await audit(tx, operator, { rejected: group.map((p) => p.id), reason: input.reason }, group[0]!.conversationId);
        return n;
      });
      await changed();
      return { decided };
    },
  };
}
