import { useEffect } from 'react';

/** Under its button, its right edge at the button's (left-aligned when that would leave the window). */
export function placeUnder(el: HTMLElement, button: HTMLElement): void {
  const r = button.getBoundingClientRect();
  el.style.top = `${Math.round(r.bottom + 6)}px`;
  const width = el.offsetWidth;
  const right = document.documentElement.clientWidth - r.right;
  if (width > 0 && r.right - width < 8) {
    el.style.left = `${Math.round(Math.max(8, r.left))}px`;
    el.style.right = 'auto';
  } else {
    el.style.left = 'auto';
    el.style.right = `${Math.round(right)}px`;
  }
}

/**
 * Places a popover under its button each time it opens. Attached again at every render: the
 * popover of a menu that renders nothing at first (no team yet, the owner's badge) appears later.
 */
export function usePlacedPopover(popover: React.RefObject<HTMLElement | null>, button: React.RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const el = popover.current;
    if (!el) return;
    const onToggle = (e: Event): void => {
      if ((e as ToggleEvent).newState === 'open' && button.current) placeUnder(el, button.current);
    };
    el.addEventListener('beforetoggle', onToggle);
    el.addEventListener('toggle', onToggle);
    return () => {
      el.removeEventListener('beforetoggle', onToggle);
      el.removeEventListener('toggle', onToggle);
    };
  });
}
