import { useEffect, useLayoutEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { LanguageSelect } from './LanguageSelect.tsx';
import { useConsole } from '../store/index.ts';
import { KeyboardIcon, MoonIcon } from './Icons.tsx';
import { SoundToggle } from './AlertControls.tsx';
import './header.css';

const PREFS_ID = 'header-prefs';

/** Children whose vertical middles differ by more than this sit on different rows. */
const ROW_TOLERANCE_PX = 16;

function wraps(header: HTMLElement): boolean {
  const middles = [...header.children]
    // An open popover (the status menu, the account menu) sits in the top layer, under the row: not a second row.
    .filter((k) => !k.classList.contains('endpoint') && !k.matches(':popover-open') && k.checkVisibility() && k.getBoundingClientRect().width > 1)
    .map((k) => {
      const r = k.getBoundingClientRect();
      return (r.top + r.bottom) / 2;
    });
  return middles.length > 1 && Math.max(...middles) - Math.min(...middles) > ROW_TOLERANCE_PX;
}

/**
 * Folds the header's end into "Settings" exactly when the row would not fit otherwise: the room it
 * needs depends on the language, the nav ("Get started"), the operator and the connection state, so
 * a fixed breakpoint either folded too early or let the row wrap. Measured unfolded, before paint,
 * whenever the header's size or content changes.
 */
function useFoldWhenCrowded(button: React.RefObject<HTMLButtonElement | null>, prefs: React.RefObject<HTMLDivElement | null>): void {
  // Before the first paint, so the header never shows wrapped.
  useLayoutEffect(() => {
    const header = button.current?.closest('header');
    if (!header) return;
    let width = -1;
    const fit = (): void => {
      const el = prefs.current;
      if (el?.matches(':popover-open')) {
        // Open, it is out of the row, so the row cannot be measured: a live count changing must
        // not close it under the agent's hand. A resize does (it would be at the wrong place).
        if (header.clientWidth === width && button.current) return place(el, button.current);
        el.hidePopover();
      }
      width = header.clientWidth;
      // 1: the settings fold into "Settings"; 2 (the widest mix at 1024 px): "Set operator" and
      // "Reconnect now" also show as an icon and a word, and the alert switch as its bell.
      delete header.dataset['fold'];
      if (!wraps(header)) return;
      header.dataset['fold'] = '1';
      if (wraps(header)) header.dataset['fold'] = '2';
    };
    fit();
    const resized = new ResizeObserver(fit);
    resized.observe(header);
    // Text and elements only: the fold's own attribute must not call it again.
    const changed = new MutationObserver(fit);
    changed.observe(header, { childList: true, characterData: true, subtree: true });
    return () => {
      resized.disconnect();
      changed.disconnect();
    };
  }, [button, prefs]);
}

/** Under its button, right edges aligned; left-aligned when that would leave the window. */
function place(el: HTMLElement, button: HTMLElement): void {
  const r = button.getBoundingClientRect();
  el.style.top = `${Math.round(r.bottom + 6)}px`;
  const width = el.offsetWidth;
  if (width > 0 && r.right - width < 8) {
    el.style.left = `${Math.round(Math.max(8, r.left))}px`;
    el.style.right = 'auto';
  } else {
    el.style.left = 'auto';
    el.style.right = `${Math.round(document.documentElement.clientWidth - r.right)}px`;
  }
}

/**
 * The header's end: the alert tone, keyboard shortcuts, the theme and the language, each with its
 * words. They sit in the row while it fits (about 1,600 px), and fold into a "Settings" popover when
 * it would wrap (at the default 1280 px already). One set of controls either way: the popover
 * element is shown inline when unfolded. Opened, it sits under its button.
 */
export function HeaderPrefs({ onShortcuts }: { onShortcuts: () => void }) {
  const { t } = useTranslation();
  const theme = useConsole((s) => s.theme);
  const toggleTheme = useConsole((s) => s.toggleTheme);
  const prefs = useRef<HTMLDivElement>(null);
  const more = useRef<HTMLButtonElement>(null);
  useFoldWhenCrowded(more, prefs);
  useEffect(() => {
    const el = prefs.current;
    if (!el) return;
    // Placed before it shows (no frame at the wrong place), and again once its width is known.
    const onBefore = (e: Event): void => {
      if ((e as ToggleEvent).newState === 'open' && more.current) place(el, more.current);
    };
    const onToggle = (e: Event): void => {
      if ((e as ToggleEvent).newState === 'open') {
        if (more.current) place(el, more.current);
        return;
      }
      for (const side of ['top', 'left', 'right']) el.style.removeProperty(side);
      // Esc on the language select left the focus nowhere: back to "Settings", as from the other controls.
      requestAnimationFrame(() => {
        if (document.activeElement === document.body && more.current?.checkVisibility()) more.current.focus();
      });
    };
    el.addEventListener('beforetoggle', onBefore);
    el.addEventListener('toggle', onToggle);
    return () => {
      el.removeEventListener('beforetoggle', onBefore);
      el.removeEventListener('toggle', onToggle);
    };
  }, []);
  return (
    <>
      <button type="button" ref={more} className="more-prefs" popoverTarget={PREFS_ID} title={t('work.morePrefs')}>
        {t('work.prefs')} <span aria-hidden="true">▾</span>
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
          className="labelled"
          title={t('work.keys.open')}
          aria-keyshortcuts="Shift+?"
        >
          <KeyboardIcon />
          <span className="label">{t('work.keys.button')}</span>
        </button>
        <button type="button" className="toggle labelled" aria-pressed={theme === 'dark'} onClick={toggleTheme} title={t('work.darkTheme')}>
          <MoonIcon />
          <span className="label">{t('work.darkTheme')}</span>
        </button>
        <LanguageSelect />
      </div>
    </>
  );
}
