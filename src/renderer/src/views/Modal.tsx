import { useEffect, useId, useRef, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

const FOCUSABLE = 'button:not([disabled]), [href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * A real modal dialog: the native <dialog> opened with showModal() makes the rest of the page
 * inert, moves focus in (to `[data-autofocus]` when there is one), keeps Tab inside, closes on
 * Escape; on close, focus goes back where it was.
 */
export function Modal({
  title,
  onClose,
  children,
  testId,
  wide = false,
  describedBy,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  testId?: string;
  wide?: boolean;
  describedBy?: string;
}) {
  const { t } = useTranslation();
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const close = useRef(onClose);
  close.current = onClose;

  useEffect(() => {
    const dialog = ref.current!;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (!dialog.open) dialog.showModal();
    // showModal focuses the first focusable element (the close button); a form starts at its field.
    dialog.querySelector<HTMLElement>('[data-autofocus]')?.focus();
    return () => {
      if (dialog.open) dialog.close();
      // The opener may have gone or been disabled meanwhile (a cleared form): then whatever the
      // view focuses next takes it. One inside a popover that closed (the header's "⋯", when the
      // sheet was opened by Shift+? from inside it) hands the focus to that popover's button.
      if (!opener?.isConnected || (opener as HTMLButtonElement).disabled) return;
      const popover = opener.checkVisibility() ? null : opener.closest<HTMLElement>('[popover]');
      const invoker = popover?.id ? document.querySelector<HTMLElement>(`[popovertarget="${popover.id}"]`) : null;
      (invoker ?? opener).focus();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      className={wide ? 'modal wide' : 'modal'}
      aria-labelledby={titleId}
      aria-describedby={describedBy}
      aria-modal="true"
      data-testid={testId}
      onCancel={(e) => {
        // Escape: let React unmount it, which closes it and returns focus.
        e.preventDefault();
        close.current();
      }}
      onKeyDown={(e) => {
        if (e.key !== 'Tab') return;
        const items = [...ref.current!.querySelectorAll<HTMLElement>(FOCUSABLE)];
        const first = items[0];
        const last = items.at(-1);
        if (!first || !last) return;
        if (e.shiftKey && document.activeElement === first) {
          e.preventDefault();
          last.focus();
        } else if (!e.shiftKey && document.activeElement === last) {
          e.preventDefault();
          first.focus();
        }
      }}
    >
      <header>
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="close" onClick={() => close.current()} aria-label={t('work.close')}>
          ×
        </button>
      </header>
      {children}
    </dialog>
  );
}
