import { useEffect, useLayoutEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { useConsole, type ConsoleState } from '../store/index.ts';
import type { UndoOffer, UndoRefused } from '../store/workspace-slice.ts';
import { conversationTitle } from '../../../shared/console-display.ts';
import { assertNever } from '../../../shared/assert-never.ts';
import { WriteButton } from './ConnectionStatus.tsx';

function titleOf(s: ConsoleState, id: string | undefined): string {
  if (!id) return '';
  const c = s.conversations.find((x) => x.id === id) ?? s.needsYou.find((x) => x.id === id) ?? (s.transcript?.conversation.id === id ? s.transcript.conversation : undefined);
  return c ? conversationTitle(c) : id;
}

function offerText(t: TFunction, undo: UndoOffer, name: string): string {
  switch (undo.kind) {
    case 'stop':
      return t('work.undo.stopped', { name });
    case 'resolve':
      return t('work.undo.resolved', { name });
    default:
      return assertNever(undo, 'undo offer');
  }
}

/** A refusal the console knows, in its language; another as the service said it. */
const refusedText = (t: TFunction, r: UndoRefused, name: string): string =>
  r.stop ? t(`work.undo.stopNotUndone.${r.stop}`, { name }) : r.reason ? t(`work.undo.refused.${r.reason}`, { name }) : r.message;

const focusLost = (): boolean => document.activeElement === null || document.activeElement === document.body;

/**
 * One toast. Leaving while it holds the focus (Undo or × pressed, or the time ran out while on
 * them) hands the focus to the open conversation's lines, not to the page's start. In a layout
 * effect's cleanup: React runs it before it removes the toast, while the focus is still inside.
 */
function Toast({ testId, text, takeFocus, wrap = false, onHold, children }: { testId: string; text: string; takeFocus: boolean; wrap?: boolean; onHold?: (held: boolean) => void; children: React.ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (takeFocus && focusLost()) el?.querySelector<HTMLButtonElement>('button:not([disabled])')?.focus();
    return () => {
      if (el?.contains(document.activeElement)) document.querySelector<HTMLElement>('[data-testid=transcript] .transcript-scroll')?.focus();
    };
  }, [takeFocus]);
  return (
    <div className="toast" data-testid={testId} ref={ref} onMouseEnter={() => onHold?.(true)} onMouseLeave={() => onHold?.(false)}>
      {/* An offer names the conversation in one line; a refusal says why in full. */}
      {wrap ? <span>{text}</span> : <span className="ellipsis" title={text}>{text}</span>}
      {children}
    </div>
  );
}

/**
 * The toast floats over the bottom of the list (or of a view). While it shows, the list and the
 * views get that much room below their last row, so the last row can always be scrolled clear of
 * it: on a long queue the toast otherwise hid the last row, and a refusal stays until closed.
 */
function useRoomBelow(area: React.RefObject<HTMLDivElement | null>): void {
  useEffect(() => {
    const el = area.current;
    const app = el?.closest<HTMLElement>('.app');
    if (!el || !app) return;
    const observer = new ResizeObserver(() => app.style.setProperty('--toast-room', `${el.offsetHeight > 0 ? el.offsetHeight + 24 : 0}px`));
    observer.observe(el);
    return () => {
      observer.disconnect();
      app.style.removeProperty('--toast-room');
    };
  }, [area]);
}

/**
 * After a stop or a Resolve: five seconds to take it back (longer while the pointer rests on the
 * toast), with its button or with z from anywhere (App.tsx). The stop's key (s) leaves the focus
 * where it was. Resolve's button goes with the flag, dropping the focus: Undo takes it then, so the
 * keyboard user's next Enter or Tab lands somewhere that matters.
 */
export function UndoToast() {
  const { t } = useTranslation();
  const area = useRef<HTMLDivElement>(null);
  useRoomBelow(area);
  const undo = useConsole((s) => s.undo);
  const refused = useConsole((s) => s.undoRefused);
  const keyNotice = useConsole((s) => s.keyNotice);
  const runUndo = useConsole((s) => s.runUndo);
  const dismiss = useConsole((s) => s.dismissUndo);
  const dismissRefused = useConsole((s) => s.dismissUndoRefused);
  const holdUndo = useConsole((s) => s.holdUndo);
  const name = useConsole((s) => titleOf(s, s.undo?.conversationId ?? s.undoRefused?.conversationId));
  return (
    <div className="toast-area" role="status" ref={area}>
      {undo && (
        <Toast key={`${undo.kind}-${undo.until}`} testId="undo-toast" text={offerText(t, undo, name)} takeFocus={undo.kind === 'resolve'} onHold={holdUndo}>
          <WriteButton className="primary" onClick={() => void runUndo()} aria-keyshortcuts="z">
            {t('work.undo.button')}
          </WriteButton>
          <button type="button" className="mini" onClick={dismiss} aria-label={t('work.close')}>
            ×
          </button>
        </Toast>
      )}
      {keyNotice && (
        <Toast testId="key-notice" text={keyNotice} takeFocus={false} wrap>
          <span />
        </Toast>
      )}
      {!undo && refused && (
        <Toast testId="undo-refused" text={refusedText(t, refused, name)} takeFocus={false} wrap>
          <button type="button" className="mini" onClick={dismissRefused} aria-label={t('work.close')}>
            ×
          </button>
        </Toast>
      )}
    </div>
  );
}
