import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';

/**
 * The id a name stands for, one click from the clipboard: agents quote a customer's or a group's
 * id to colleagues and to the integrator, and the console shows names in its place.
 */
export function CopyId({ id }: { id: string }) {
  const { t } = useTranslation();
  const announce = useConsole((s) => s.announce);
  const [copied, setCopied] = useState(false);
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(id);
      setCopied(true);
      announce(t('transcript.copiedId', { id }));
    } catch {
      // No clipboard (an insecure origin, a denied permission): the id is shown, to select by hand.
      announce(t('transcript.copyFailed', { id }));
    }
  };
  return (
    <span className="copy-id">
      <code title={id}>{id}</code>{' '}
      <button type="button" className="link" onClick={() => void copy()} onBlur={() => setCopied(false)} aria-label={t('transcript.copyId', { id })}>
        {copied ? t('transcript.copied') : t('transcript.copy')}
      </button>
    </span>
  );
}
