import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../api/bridge.ts';
import { TRANSCRIPT_TEXT_MAX } from '../../../shared/console-api.ts';
import { LIMITS } from '../../../shared/protocol/message-schema.ts';
import { assertNever } from '../../../shared/assert-never.ts';

/**
 * A message stored larger than this holds more than its line shows (unknown fields may hold
 * this much together), so its line offers the whole even when nothing shown was cut.
 */
const LARGE_BYTES = LIMITS.unknownFieldsMaxBytes;

/** Whether a message's line offers its whole stored message_info. */
export const offersWhole = (stored: { bytes: number; cut: readonly string[] } | undefined): boolean =>
  stored !== undefined && (stored.cut.length > 0 || stored.bytes > LARGE_BYTES);

/** A size as the operator reads it: "812 B", "64 kB", "9.5 MB". */
export function sizeText(bytes: number, lang: string): string {
  const [value, unit] = bytes < 1000 ? [bytes, 'byte'] : bytes < 1e6 ? [bytes / 1e3, 'kilobyte'] : [bytes / 1e6, 'megabyte'];
  return new Intl.NumberFormat(lang, { style: 'unit', unit, unitDisplay: 'short', maximumFractionDigits: 1 }).format(value);
}

type Whole = { state: 'idle' } | { state: 'loading' } | { state: 'failed'; message: string } | { state: 'loaded'; text: string };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * "Show the whole message": a transcript line carries only what it shows, long fields cut; this
 * fetches the message_info as stored (getMessageInfo), only when asked, and shows it as JSON.
 * `onLoaded` gets it parsed, so the line can show what was cut (a large data: image).
 */
export function WholeMessage({ messageId, bytes, cut, onLoaded }: { messageId: number; bytes: number; cut: boolean; onLoaded?: (info: Record<string, unknown>) => void }) {
  const { t, i18n } = useTranslation();
  const [whole, setWhole] = useState<Whole>({ state: 'idle' });
  const size = sizeText(bytes, i18n.language);
  const load = async (): Promise<void> => {
    setWhole({ state: 'loading' });
    const r = await api.getMessageInfo({ messageId });
    if (!r.ok) return setWhole({ state: 'failed', message: r.error.message });
    let text = r.value.json;
    try {
      const info: unknown = JSON.parse(text);
      text = JSON.stringify(info, null, 2);
      if (isObject(info)) onLoaded?.(info);
    } catch {
      // Not JSON: shown as it was stored.
    }
    setWhole({ state: 'loaded', text });
  };
  const button = (
    <button type="button" className="mini" data-testid="whole-message" onClick={() => void load()}>
      {t('transcript.whole.show', { size })}
    </button>
  );
  switch (whole.state) {
    case 'idle':
      return (
        <div className="whole-message">
          {cut && <small className="why tone-muted">{t('transcript.whole.cut', { max: TRANSCRIPT_TEXT_MAX })} </small>}
          {button}
        </div>
      );
    case 'loading':
      return (
        <div className="whole-message" role="status">
          <small>{t('transcript.whole.loading')}</small>
        </div>
      );
    case 'failed':
      return (
        <div className="whole-message">
          <small className="why tone-bad" role="alert">
            {t('transcript.whole.failed', { message: whole.message })}{' '}
          </small>
          {button}
        </div>
      );
    case 'loaded':
      return (
        <details open className="whole-message" data-testid="whole-json">
          <summary>{t('transcript.whole.title', { size })}</summary>
          {/* Focusable: a keyboard user scrolls a long message too. */}
          <pre tabIndex={0}>{whole.text}</pre>
        </details>
      );
    default:
      return assertNever(whole, 'whole message state');
  }
}
