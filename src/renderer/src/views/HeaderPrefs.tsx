import { useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { i18n, LANGUAGES, type Language } from '../i18n/index.ts';
import { MoonIcon } from './Icons.tsx';
import { SoundToggle } from './AlertControls.tsx';

const PREFS_ID = 'header-prefs';

/**
 * The header's end: the alert tone, keyboard shortcuts, the theme and the language. In a wide window they sit in
 * the row; below 1200 px (styles.css) they fold into a "More" popover, so the row stays one row at
 * 1024 px even before an operator is set, while offline, or with "Get started" in the nav. One set
 * of controls either way: the popover element is shown inline when wide.
 */
export function HeaderPrefs({ onShortcuts }: { onShortcuts: () => void }) {
  const { t } = useTranslation();
  const theme = useConsole((s) => s.theme);
  const toggleTheme = useConsole((s) => s.toggleTheme);
  const prefs = useRef<HTMLDivElement>(null);
  return (
    <>
      <button type="button" className="more-prefs" popoverTarget={PREFS_ID} aria-label={t('work.morePrefs')} title={t('work.morePrefs')}>
        ⋯
      </button>
      <div id={PREFS_ID} ref={prefs} className="prefs" popover="auto">
        <SoundToggle />
        <button
          type="button"
          onClick={() => {
            // The sheet is a dialog of its own: the popover (when folded) gives way to it.
            if (prefs.current?.matches(':popover-open')) prefs.current.hidePopover();
            onShortcuts();
          }}
          aria-label={t('work.keys.open')}
          title={t('work.keys.open')}
          aria-keyshortcuts="Shift+?"
        >
          ?
        </button>
        <button type="button" className="toggle icon" aria-pressed={theme === 'dark'} onClick={toggleTheme} title={t('work.darkTheme')}>
          <MoonIcon />
          <span className="sr-only">{t('work.darkTheme')}</span>
        </button>
        <select
          aria-label={t('app.language')}
          value={i18n.language}
          onChange={(e) => {
            localStorage.setItem('sb.lang', e.target.value);
            void i18n.changeLanguage(e.target.value as Language);
          }}
        >
          {Object.entries(LANGUAGES).map(([code, name]) => (
            <option key={code} value={code}>
              {name}
            </option>
          ))}
        </select>
      </div>
    </>
  );
}
