import { useCallback, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { BUILTIN_ENGINE } from '../../../shared/engine-config.ts';
import { useConsole } from '../store/index.ts';
import type { CannedReply, ConversationSummary, SendTarget } from '../../../shared/console-api.ts';
import { CannedPicker, type CannedPickerHandle } from './CannedPicker.tsx';
import { CannedManager } from './CannedManager.tsx';
import { OperatorForm } from './Operator.tsx';
import { WriteButton, useWriteBlock } from './ConnectionStatus.tsx';
import { NoSendNote } from './NoSendNote.tsx';
import { MentionPicker, type MentionPickerHandle } from './MentionPicker.tsx';
import { ConflictPrompt } from './ConflictPrompt.tsx';
import { completeMention, mentionAt } from '../../../shared/mention-input.ts';

type Ref = React.RefObject<HTMLTextAreaElement | null>;

/** Puts text at the caret (replacing a selection) and leaves the caret after it. */
function insertAtCaret(box: HTMLTextAreaElement | null, draft: string, text: string): { value: string; caret: number } {
  const start = box?.selectionStart ?? draft.length;
  const end = box?.selectionEnd ?? draft.length;
  return { value: draft.slice(0, start) + text + draft.slice(end), caret: start + text.length };
}

function ReplyBox({ conversationId, composeRef }: { conversationId: string; composeRef: Ref }) {
  const { t } = useTranslation();
  const draft = useConsole((s) => s.drafts[conversationId] ?? '');
  const setDraft = useConsole((s) => s.setDraft);
  const send = useConsole((s) => s.sendReply);
  const sendNote = useConsole((s) => s.sendNote);
  const sending = useConsole((s) => s.sending);
  // Team mode: a private note instead of a reply, @-mentions, and "typing" for the colleagues.
  const teamMode = useConsole((s) => s.team.teamMode);
  const note = useConsole((s) => s.team.teamMode && s.noteMode[conversationId] === true);
  const setNoteMode = useConsole((s) => s.setNoteMode);
  const noteTyping = useConsole((s) => s.noteTyping);
  const [mention, setMention] = useState<{ start: number; query: string } | null>(null);
  const mentionRef = useRef<MentionPickerHandle>(null);
  const error = useConsole((s) => (s.composeError?.conversationId === conversationId ? s.composeError.message : null));
  const blocked = useWriteBlock();
  const [picker, setPicker] = useState<null | 'slash' | 'button'>(null);
  const [managing, setManaging] = useState(false);
  const pickerRef = useRef<CannedPickerHandle>(null);
  const [active, setActive] = useState<{ listId: string; optionId: string | undefined } | null>(null);
  const onActive = useCallback((listId: string, optionId: string | undefined) => setActive({ listId, optionId }), []);

  const focusAt = (caret: number): void => {
    requestAnimationFrame(() => {
      composeRef.current?.focus();
      composeRef.current?.setSelectionRange(caret, caret);
    });
  };
  const pick = (c: CannedReply): void => {
    if (picker === 'slash') {
      setDraft(conversationId, c.content);
      focusAt(c.content.length);
    } else {
      const next = insertAtCaret(composeRef.current, draft, c.content);
      setDraft(conversationId, next.value);
      focusAt(next.caret);
    }
    setPicker(null);
  };
  const submit = (): void => {
    if (blocked || sending || !draft.trim()) return;
    setMention(null);
    void (note ? sendNote(conversationId) : send(conversationId));
  };
  const slash = picker === 'slash';
  const mentioning = note && mention !== null;
  const follow = (box: HTMLTextAreaElement): void => setMention(note ? mentionAt(box.value, box.selectionStart) : null);

  // The picker and the manager sit outside the form: their own fields and forms must not submit the reply.
  return (
    <div className="reply">
      {picker && (
        <CannedPicker
          ref={pickerRef}
          query={slash ? draft.slice(1) : null}
          onPick={pick}
          onClose={() => {
            setPicker(null);
            composeRef.current?.focus();
          }}
          onManage={() => setManaging(true)}
          onActive={onActive}
        />
      )}
      {managing && <CannedManager onClose={() => setManaging(false)} />}
      <ConflictPrompt conversationId={conversationId} draftRef={composeRef} />
      {teamMode && (
        <div className="compose-mode" role="group" aria-label={t('team.note.modes')}>
          <button type="button" aria-pressed={!note} className={note ? 'chip' : 'chip on'} onClick={() => setNoteMode(conversationId, false)}>
            {t('team.note.reply')}
          </button>
          <button type="button" aria-pressed={note} className={note ? 'chip on note' : 'chip'} onClick={() => setNoteMode(conversationId, true)} data-testid="note-mode">
            {t('team.note.note')}
          </button>
        </div>
      )}
      {mentioning && (
        <MentionPicker
          ref={mentionRef}
          query={mention.query}
          onPick={(m) => {
            const box = composeRef.current;
            const next = completeMention(draft, box?.selectionStart ?? draft.length, mention.start, m.id);
            setDraft(conversationId, next.value);
            setMention(null);
            focusAt(next.caret);
          }}
          onClose={() => setMention(null)}
          onActive={onActive}
        />
      )}
      <form
        className={note ? 'note-form' : undefined}
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <textarea
          ref={composeRef}
          value={draft}
          rows={3}
          className={note ? 'note-box' : undefined}
          aria-label={note ? t('team.note.label') : t('work.compose.label')}
          placeholder={note ? t('team.note.placeholder') : t('work.compose.placeholder')}
          aria-keyshortcuts="Control+Enter Meta+Enter"
          aria-controls={slash || mentioning ? active?.listId || undefined : undefined}
          aria-activedescendant={slash || mentioning ? active?.optionId : undefined}
          aria-autocomplete={note ? 'list' : undefined}
          onChange={(e) => {
            const value = e.target.value;
            setDraft(conversationId, value);
            if (teamMode && value.trim()) noteTyping(conversationId);
            follow(e.target);
            // `/` at the start of the box searches canned replies, until a space-free word ends.
            const searching = /^\/\S*$/.test(value);
            if (searching && picker !== 'slash') setPicker('slash');
            else if (!searching && slash) setPicker(null);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              submit();
            } else if (mentioning && mentionRef.current?.handleKey(e)) return;
            else if (slash) pickerRef.current?.handleKey(e);
          }}
          onKeyUp={(e) => {
            // The caret moved without a change (arrows, Home): the mention in progress may have ended.
            if (note && (e.key === 'ArrowLeft' || e.key === 'ArrowRight' || e.key === 'Home' || e.key === 'End')) follow(e.currentTarget);
          }}
          onClick={(e) => follow(e.currentTarget)}
        />
        {error && (
          <p role="alert" className="form-error" data-testid="compose-error">
            {error}
          </p>
        )}
        <div className="row">
          <button type="button" aria-expanded={picker === 'button'} onClick={() => setPicker(picker === 'button' ? null : 'button')}>
            {t('work.canned.open')}
          </button>
          <span className="hint">{note ? t('team.note.hint') : t('work.compose.hint')}</span>
          <WriteButton type="submit" className="primary" disabled={sending || !draft.trim()}>
            {note ? (sending ? t('team.note.sending') : t('team.note.send')) : sending ? t('work.compose.sending') : t('work.compose.send')}
          </WriteButton>
        </div>
      </form>
    </div>
  );
}

/** The built-in engine picks a knowledge-base answer as it stands: an instruction changes nothing, and the operator should know. */
export function InstructionIgnored() {
  const { t } = useTranslation();
  return (
    <p className="why tone-muted" data-testid="instruction-ignored">
      {t('work.suggest.instructionIgnored')}
    </p>
  );
}

function SuggestionCard({ conversationId, onUse }: { conversationId: string; onUse: ((text: string) => void) | null }) {
  const { t } = useTranslation();
  const suggestion = useConsole((s) => (s.suggestion?.conversationId === conversationId ? s.suggestion : null));
  const dismiss = useConsole((s) => s.dismissSuggestion);
  // The engine that made it, from its line in the transcript (the assist answer does not name it).
  const engine = useConsole((s) => s.transcript?.entries.find((e) => e.kind === 'suggestion' && e.msgId === s.suggestion?.msgId)?.engine);
  if (!suggestion) return null;
  return (
    <div className="suggestion" data-testid="suggestion">
      <div className="meta">
        <strong>{t('transcript.suggestion')}</strong> · {t('transcript.contextUsed', { count: suggestion.contextMessages })}
        {suggestion.instruction && <> · {t('work.suggest.instruction', { text: suggestion.instruction })}</>}
      </div>
      <div className="content">{suggestion.handoff ? t('transcript.noSuggestion') : suggestion.content}</div>
      {suggestion.instruction && engine === BUILTIN_ENGINE && <InstructionIgnored />}
      <div className="row">
        {!suggestion.handoff && onUse && (
          <button type="button" className="primary" onClick={() => onUse(suggestion.content)}>
            {t('work.suggest.use')}
          </button>
        )}
        <button type="button" onClick={dismiss}>
          {t('work.suggest.dismiss')}
        </button>
      </div>
    </div>
  );
}

function SuggestBar() {
  const { t } = useTranslation();
  const assist = useConsole((s) => s.assist);
  const assisting = useConsole((s) => s.assisting);
  const [instruction, setInstruction] = useState('');
  return (
    <form
      className="suggest"
      onSubmit={(e) => {
        e.preventDefault();
        void assist(instruction);
      }}
    >
      <input
        value={instruction}
        onChange={(e) => setInstruction(e.target.value)}
        maxLength={2000}
        aria-label={t('work.suggest.instructionLabel')}
        placeholder={t('work.suggest.instructionPlaceholder')}
      />
      <WriteButton type="submit" disabled={assisting}>
        {assisting ? t('transcript.thinking') : t('transcript.assist')}
      </WriteButton>
    </form>
  );
}

/**
 * Under the transcript: the suggestion, the reply box (or why there is none: no send_url, or
 * the operator has not said who they are yet), and "Suggest a reply" with an instruction.
 */
export function Compose({ conversation, sendTarget, composeRef, onUse }: { conversation: ConversationSummary; sendTarget: SendTarget | undefined; composeRef: Ref; onUse: ((text: string) => void) | null }) {
  const { t } = useTranslation();
  const operator = useConsole((s) => s.operator);
  const noSend = sendTarget && !sendTarget.ok ? sendTarget : null;
  return (
    <div className="compose" data-testid="compose">
      <SuggestionCard conversationId={conversation.id} onUse={onUse} />
      {noSend !== null ? (
        <NoSendNote conversation={conversation} target={noSend} />
      ) : operator === null ? (
        <div className="operator-first">
          <p>{t('work.operator.first')}</p>
          <OperatorForm />
        </div>
      ) : (
        <ReplyBox conversationId={conversation.id} composeRef={composeRef} />
      )}
      <SuggestBar />
    </div>
  );
}
