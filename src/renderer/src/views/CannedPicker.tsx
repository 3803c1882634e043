import { forwardRef, useEffect, useId, useImperativeHandle, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { searchCanned } from '../store/canned-slice.ts';
import type { CannedReply } from '../../../shared/console-api.ts';

export interface CannedPickerHandle {
  /** Arrow keys, Enter and Escape from the field that drives the picker; true when used. */
  handleKey(e: React.KeyboardEvent): boolean;
}

interface Props {
  /** Typed after `/` in the reply box; null when the picker has its own search field. */
  query: string | null;
  onPick(reply: CannedReply): void;
  onClose(): void;
  onManage(): void;
  /** The list's id and its active option's, for the driving field's aria-controls and aria-activedescendant. */
  onActive?(listId: string, optionId: string | undefined): void;
}

/**
 * Saved snippets to put into the reply: opened by the "Canned replies" button (with a search
 * field) or by typing `/` at the start of the reply box (the box is the search field).
 */
export const CannedPicker = forwardRef<CannedPickerHandle, Props>(function CannedPicker({ query, onPick, onClose, onManage, onActive }, ref) {
  const { t } = useTranslation();
  const canned = useConsole((s) => s.canned);
  const loaded = useConsole((s) => s.cannedLoaded);
  const error = useConsole((s) => s.cannedError);
  const load = useConsole((s) => s.loadCanned);
  const [own, setOwn] = useState('');
  const [active, setActive] = useState(0);
  const listId = useId();
  const text = query ?? own;
  const hits = useMemo(() => searchCanned(canned, text), [canned, text]);
  const at = Math.min(active, Math.max(0, hits.length - 1));

  useEffect(() => void load(), [load]);
  useEffect(() => setActive(0), [text]);

  const handleKey = (e: React.KeyboardEvent): boolean => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const step = e.key === 'ArrowDown' ? 1 : -1;
      if (hits.length) setActive((at + step + hits.length) % hits.length);
    } else if (e.key === 'Enter' && !e.ctrlKey && !e.metaKey && !e.shiftKey) {
      if (!hits[at]) return false;
      onPick(hits[at]);
    } else if (e.key === 'Escape') onClose();
    else return false;
    e.preventDefault();
    return true;
  };
  const optionId = (i: number): string => `${listId}-${i}`;
  useImperativeHandle(ref, () => ({ handleKey }));
  const activeId = hits.length ? optionId(at) : undefined;
  useEffect(() => onActive?.(listId, activeId), [onActive, listId, activeId]);

  return (
    <div
      className="picker"
      data-testid="canned-picker"
      onKeyDown={(e) => {
        // Escape from anywhere in the picker (its search field handles its own first).
        if (e.key === 'Escape' && !e.defaultPrevented) {
          e.preventDefault();
          onClose();
        }
      }}
    >
      <div className="picker-head">
        {query === null ? (
          <input
            type="search"
            role="combobox"
            aria-expanded="true"
            aria-controls={listId}
            aria-activedescendant={hits.length ? optionId(at) : undefined}
            aria-label={t('work.canned.search')}
            placeholder={t('work.canned.search')}
            value={own}
            onChange={(e) => setOwn(e.target.value)}
            onKeyDown={(e) => void handleKey(e)}
            autoFocus
          />
        ) : (
          <span className="muted">{t('work.canned.slash', { query: text })}</span>
        )}
        <button type="button" className="mini" onClick={onManage}>
          {t('work.canned.manage')}
        </button>
        <button type="button" className="mini" onClick={onClose} aria-label={t('work.close')}>
          ×
        </button>
      </div>
      {error && !loaded && <p className="form-error">{error}</p>}
      {loaded && hits.length === 0 && <p className="muted">{canned.length ? t('work.canned.noMatch') : t('work.canned.empty')}</p>}
      <ul role="listbox" id={listId} aria-label={t('work.canned.title')}>
        {hits.map((c, i) => (
          <li
            key={c.id}
            id={optionId(i)}
            role="option"
            aria-selected={i === at}
            className={i === at ? 'active' : undefined}
            // Keep focus in the field: a click picks without blurring it first.
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => onPick(c)}
            onMouseEnter={() => setActive(i)}
          >
            <strong className="ellipsis" title={c.title}>
              {c.title}
            </strong>
            <span className="ellipsis">{c.content}</span>
          </li>
        ))}
      </ul>
    </div>
  );
});
