import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import type { TranscriptEntry } from '../../../shared/console-api.ts';
import { mayCall } from '../../../shared/console-roles.ts';
import { WriteButton } from './ConnectionStatus.tsx';
import { Modal } from './Modal.tsx';
import './learn.css';

/** What a lesson is taught from: the customer's question(s), and the bot's answer when correcting one. */
export interface Lesson {
  conversationId: string;
  question: string;
  botAnswer: string | null;
  /** The customer messages, then the bot reply (msg_ids): the proposal's provenance. */
  messageIds: string[];
}

/**
 * The lesson a bot's line offers: an answer to correct, or a handoff to answer (the question the
 * bot could not). On the bot's line, not the customer's: every channel has one (a web chat's
 * messages carry no decision), and a handoff is said there. Null when it offers none.
 */
export function lessonOf(e: TranscriptEntry, conversationId: string, entries: readonly TranscriptEntry[]): Lesson | null {
  if (e.kind !== 'reply' || e.role !== 'ai' || e.operator || !e.replyTo?.length) return null;
  const replyTo = e.replyTo;
  const asked = entries.filter((x) => x.kind === 'message' && x.role === 'customer' && replyTo.includes(x.msgId));
  const question = asked.map((m) => m.content.trim()).filter(Boolean).join('\n');
  const answered = !e.handoff && !e.cause;
  return { conversationId, question, botAnswer: answered ? e.content : null, messageIds: [...replyTo, e.msgId] };
}

/** The dialog: the question (editable), the bot's answer if any, and the right answer, proposed for an admin's review in Learn. */
function TeachDialog({ lesson, onClose }: { lesson: Lesson; onClose: () => void }) {
  const { t } = useTranslation();
  const teach = useConsole((s) => s.teachBot);
  const noteKey = useConsole((s) => s.noteKey);
  const insertDraft = useConsole((s) => s.insertDraft);
  // A handed-off customer still waits: the answer taught can go to them too, through the reply box
  // (where the operator sends it as any reply, with team mode's checks), not silently.
  const [toReply, setToReply] = useState(lesson.botAnswer === null);
  const [question, setQuestion] = useState(lesson.question);
  const [answer, setAnswer] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const whyId = useId();
  const ready = question.trim() !== '' && answer.trim() !== '' && !busy;
  const submit = (): void => {
    if (!ready) return;
    setBusy(true);
    void teach({ question, answer, from: { conversationId: lesson.conversationId, messageIds: lesson.messageIds } })
      .then((failed) => {
        if (failed !== null) return setError(failed);
        if (toReply) insertDraft(lesson.conversationId, answer.trim());
        onClose();
        noteKey(t('learn.teach.sent'));
      })
      .finally(() => setBusy(false));
  };
  return (
    <Modal title={t(lesson.botAnswer === null ? 'learn.teach.titleAnswer' : 'learn.teach.title')} onClose={onClose} testId="teach-dialog" describedBy={whyId}>
      <p className="muted" id={whyId}>
        {t('learn.teach.why')}
      </p>
      <form
        className="teach-form"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <label>
          {t('learn.teach.question')}
          <textarea value={question} rows={2} onChange={(e) => setQuestion(e.target.value)} maxLength={2000} data-testid="teach-question" />
        </label>
        {lesson.botAnswer !== null && (
          <figure className="teach-bot">
            <figcaption>{t('learn.teach.botAnswer')}</figcaption>
            <blockquote data-testid="teach-bot-answer">{lesson.botAnswer}</blockquote>
          </figure>
        )}
        <label>
          {t('learn.teach.answer')}
          <textarea
            value={answer}
            rows={4}
            onChange={(e) => setAnswer(e.target.value)}
            // Ctrl/⌘+Enter proposes, as Compose sends: Enter alone is a new line in an answer.
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
                e.preventDefault();
                submit();
              }
            }}
            maxLength={20_000}
            data-autofocus
            data-testid="teach-answer"
            aria-keyshortcuts="Control+Enter Meta+Enter"
          />
        </label>
        <label className="teach-to-reply">
          <input type="checkbox" checked={toReply} onChange={(e) => setToReply(e.target.checked)} data-testid="teach-to-reply" /> {t('learn.teach.toReply')}
        </label>
        {error && (
          <p role="alert" className="tone-bad">
            {error}
          </p>
        )}
        <span className="actions">
          <WriteButton type="submit" className="primary" disabled={!ready}>
            {t('learn.teach.submit')}
          </WriteButton>
          <button type="button" onClick={onClose}>
            {t('learn.teach.cancel')}
          </button>
        </span>
      </form>
    </Modal>
  );
}

/** "Teach the bot" under a line that offers a lesson, for whoever may propose. */
export function TeachButton({ e }: { e: TranscriptEntry }) {
  const { t } = useTranslation();
  const [lesson, setLesson] = useState<Lesson | null>(null);
  const offered = useConsole((s) => mayCall(s.me.role, 'saveProposal') && s.transcript !== null && lessonOf(e, s.transcript.conversation.id, []) !== null);
  if (!offered) return null;
  const open = (): void => {
    const s = useConsole.getState();
    if (s.transcript) setLesson(lessonOf(e, s.transcript.conversation.id, s.transcript.entries));
  };
  const handoff = Boolean(e.handoff || e.cause);
  return (
    <>
      <WriteButton className="mini" onClick={open} data-testid="teach" aria-haspopup="dialog">
        {t(handoff ? 'learn.teach.buttonAnswer' : 'learn.teach.button')}
      </WriteButton>
      {lesson && <TeachDialog lesson={lesson} onClose={() => setLesson(null)} />}
    </>
  );
}
