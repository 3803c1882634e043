import { useEffect, useId, useRef, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

/**
 * A real modal dialog: the native <dialog> opened with showModal() makes the rest of the page
 * inert, moves focus in and closes on Escape; on close, focus goes back where it was.
 */
export function Modal({ title, onClose, children, testId, wide = false }: { title: string; onClose: () => void; children: ReactNode; testId?: string; wide?: boolean }) {
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
      if (opener?.isConnected) opener.focus();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      className={wide ? 'modal wide' : 'modal'}
      aria-labelledby={titleId}
      aria-modal="true"
      data-testid={testId}
      onCancel={(e) => {
        // Escape: let React unmount it, which closes it and returns focus.
        e.preventDefault();
        close.current();
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
