import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { EntryOptions } from './kb-pickers.tsx';
import { useConsole } from '../store/index.ts';
import type { KbProposal, ProposalGroup } from '../../../shared/console-api.ts';
import { mayCall } from '../../../shared/console-roles.ts';
import { WriteButton } from './ConnectionStatus.tsx';
import { useNow, When } from './relative-time.tsx';
import { LearnPropose } from './LearnPropose.tsx';
import './learn.css';

const lines = (text: string): string[] => text.split('\n').map((l) => l.trim()).filter((l) => l !== '');

/** Where a proposal came from: who, how, when, and a way back to the conversation. */
function Provenance({ p, now }: { p: KbProposal; now: number }) {
  const { t } = useTranslation();
  const openConversation = useConsole((s) => s.openConversation);
  const source = t(`learn.source.${p.source}`);
  return (
    <li className="muted">
      {p.operator ? t('learn.by', { name: p.operator.name, source }) : t('learn.byService', { source })}
      {' · '}
      <When at={p.createdAt} now={now} />
      {p.conversationId && (
        <>
          {' · '}
          <button type="button" className="link" onClick={() => openConversation(p.conversationId!)}>
            {t('learn.openConversation')}
          </button>
        </>
      )}
    </li>
  );
}

/** What masking put in a text: an answer with one would reach customers as it stands. */
const PLACEHOLDER = /\[(?:name|email|phone|number|url)\]/;

/** One group: what customers asked, the answer proposed, and (for whoever may) edit and decide. */
function GroupCard({ group, now }: { group: ProposalGroup; now: number }) {
  const { t } = useTranslation();
  const me = useConsole((s) => s.me);
  const kb = useConsole((s) => s.kb);
  const save = useConsole((s) => s.saveProposal);
  const approve = useConsole((s) => s.approveProposals);
  const merge = useConsole((s) => s.mergeProposals);
  const reject = useConsole((s) => s.rejectProposals);
  const head = group.proposals[0]!;
  const ids = group.proposals.map((p) => p.id);
  const pending = head.state === 'pending';
  const others = [...new Set(group.proposals.slice(1).map((p) => p.question))].filter((q) => q !== head.question);
  const [question, setQuestion] = useState(head.question);
  const [answer, setAnswer] = useState(head.answer);
  // A correction of the bot's answer means the entry's answer was wrong: merging replaces it, unless unticked.
  const [replaceAnswer, setReplaceAnswer] = useState(head.source === 'correction');
  const [phrasings, setPhrasings] = useState(others.join('\n'));
  const [target, setTarget] = useState<string>(group.entry ? String(group.entry.id) : '');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const id = useId();
  const decides = mayCall(me.role, 'approveProposals');
  const mine = head.operator !== null && head.operator.id === me.account?.id;
  const editable = pending && (decides || mine);
  const run = (work: Promise<boolean>): void => {
    setBusy(true);
    void work.finally(() => setBusy(false));
  };
  // A phrasing's entry, still there: approving adds the question to it.
  const entry = group.entry;
  return (
    <article className="learn-group" aria-labelledby={`${id}-title`} data-testid="proposal-group" data-proposal={head.id}>
      <h3 id={`${id}-title`}>
        {t('learn.asked', { count: group.count })}
        {' · '}
        {t('learn.thisWeek', { count: group.thisWeek })}
        {' · '}
        <span className="muted">
          {t('learn.lastAt')}{' '}
          <When at={group.lastAt} now={now} />
        </span>
      </h3>
      <p className="learn-kind">
        {t(`learn.kind.${head.kind}`)}
        {head.kind === 'phrasing' && head.entryId !== null && (entry ? ` · ${t('learn.target', { id: entry.id, question: entry.question })}` : ` · ${t('learn.targetGone', { id: head.entryId })}`)}
      </p>
      <h4>{t('learn.questions')}</h4>
      <ul className="learn-questions">
        {group.proposals.map((p) => (
          <li key={p.id}>
            {p.question}
          </li>
        ))}
      </ul>
      <h4>{t('learn.answer')}</h4>
      <p className="learn-answer">{head.answer}</p>
      <ul className="learn-provenance">
        {group.proposals.map((p) => (
          <Provenance key={p.id} p={p} now={now} />
        ))}
      </ul>
      {head.state === 'rejected' && (
        <p className="learn-rejected" data-testid="rejected-reason">
          {t('learn.rejectedBy', { name: head.decidedBy?.name ?? '?', reason: head.reason ?? '' })}
          {head.decidedAt !== null && (
            <>
              {' · '}
              <When at={head.decidedAt} now={now} />
            </>
          )}
        </p>
      )}
      {editable && (
        <div className="learn-edit">
          <label>
            {t('learn.edit.question')}
            <input value={question} onChange={(e) => setQuestion(e.target.value)} data-testid="proposal-question" />
          </label>
          <label>
            {t('learn.edit.answer')}
            <textarea value={answer} rows={3} onChange={(e) => setAnswer(e.target.value)} data-testid="proposal-answer" />
          </label>
          {PLACEHOLDER.test(answer) && (
            <p className="tone-warn" data-testid="proposal-placeholders">
              {t('learn.placeholders')}
            </p>
          )}
          {decides && group.count > 1 && (
            <label>
              {t('learn.edit.phrasings')}
              <textarea value={phrasings} rows={2} onChange={(e) => setPhrasings(e.target.value)} />
            </label>
          )}
          <div className="row">
            {!decides && (
              <WriteButton disabled={busy || !question.trim() || !answer.trim()} onClick={() => run(save({ id: head.id, question, answer, entryId: head.entryId }))}>
                {t('learn.edit.save')}
              </WriteButton>
            )}
            {decides && (head.kind === 'phrasing' && entry ? (
              <WriteButton className="primary" disabled={busy || !question.trim()} onClick={() => run(merge(ids, entry.id, [question, ...lines(phrasings)]))}>
                {t('learn.approvePhrasing', { id: entry.id })}
              </WriteButton>
            ) : (
              <WriteButton className="primary" disabled={busy || !question.trim() || !answer.trim()} onClick={() => run(approve(ids, question, answer, lines(phrasings)))}>
                {t('learn.approve')}
              </WriteButton>
            ))}
          </div>
          {decides && (
            <div className="row">
              <label>
                {t('learn.merge.label')}
                <select value={target} onChange={(e) => setTarget(e.target.value)} data-testid="merge-target">
                  <option value="">{t('learn.merge.choose')}</option>
                  <EntryOptions kb={kb} />
                </select>
              </label>
              {head.kind === 'entry' && (
                <label>
                  <input type="checkbox" checked={replaceAnswer} onChange={(e) => setReplaceAnswer(e.target.checked)} data-testid="merge-replace-answer" />{' '}
                  {t('learn.merge.replaceAnswer')}
                </label>
              )}
              <WriteButton
                disabled={busy || target === '' || !question.trim() || (replaceAnswer && !answer.trim())}
                onClick={() => run(merge(ids, Number(target), [question, ...lines(phrasings)], head.kind === 'entry' && replaceAnswer ? answer : undefined))}
              >
                {t('learn.merge.button')}
              </WriteButton>
            </div>
          )}
          {decides && (
            <div className="row">
              <label>
                {t('learn.reject.reason')}
                <input value={reason} onChange={(e) => setReason(e.target.value)} data-testid="reject-reason" />
              </label>
              <WriteButton disabled={busy || !reason.trim()} onClick={() => run(reject(ids, reason.trim()))}>
                {t('learn.reject.button')}
              </WriteButton>
            </div>
          )}
        </div>
      )}
    </article>
  );
}

/** The Learn view: proposals from the team's answers, grouped; admins decide, agents see and edit their own. */
export function Learn() {
  const { t } = useTranslation();
  const groups = useConsole((s) => s.proposalGroups);
  const filter = useConsole((s) => s.proposalFilter);
  const setFilter = useConsole((s) => s.setProposalFilter);
  const loaded = useConsole((s) => s.proposalsLoaded);
  const status = useConsole((s) => s.learnStatus);
  const role = useConsole((s) => s.me.role);
  const now = useNow();
  return (
    <section className="admin learn" aria-labelledby="learn-title" data-testid="learn">
      <h2 id="learn-title">{t('learn.title')}</h2>
      <p className="muted">{t('learn.intro')}</p>
      {!mayCall(role, 'approveProposals') && <p className="muted">{t('learn.agentNote')}</p>}
      <LearnPropose />
      <fieldset className="learn-filter">
        <legend>{t('learn.filter.label')}</legend>
        {(['pending', 'rejected'] as const).map((f) => (
          <label key={f}>
            <input type="radio" name="learn-filter" value={f} checked={filter === f} onChange={() => setFilter(f)} />
            {t(`learn.filter.${f}`)}
          </label>
        ))}
      </fieldset>
      <p role="status" className="muted" data-testid="learn-status">
        {status && t(`learn.status.${status.kind}`)}
      </p>
      {loaded && groups.length === 0 && <p className="empty">{t(`learn.empty.${filter}`)}</p>}
      {groups.map((g) => (
        // Keyed by its proposals: a group that changed is a new form, not one with stale edits.
        <GroupCard key={g.proposals.map((p) => `${p.id}.${p.updatedAt}`).join('-')} group={g} now={now} />
      ))}
    </section>
  );
}
