import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { fullTime } from '../format.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * The current time, re-read every `ms`, and also right after `until` (the end of a pause, say),
 * so a state that ends at a known time changes on screen when it ends: nothing else re-renders
 * it, since no event comes when a pause simply runs out.
 */
export function useNow(ms = 30_000, until: number | null = null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  useEffect(() => {
    if (until === null) return;
    const wait = until - Date.now();
    // setTimeout takes at most 2^31-1 ms; the interval above covers anything further off.
    if (wait < 0 || wait > 2 ** 31 - 1) return;
    const timer = setTimeout(() => setNow(Date.now()), wait + 50);
    return () => clearTimeout(timer);
  }, [until]);
  return now;
}

/** "2 min ago"; past a week the date itself says more. */
export function relativeTime(t: TFunction, at: number, now: number, lang: string): string {
  const ago = Math.max(0, now - at);
  if (ago < MINUTE) return t('views.time.justNow');
  if (ago < HOUR) return t('views.time.minutes', { count: Math.floor(ago / MINUTE) });
  if (ago < DAY) return t('views.time.hours', { count: Math.floor(ago / HOUR) });
  if (ago < 7 * DAY) return t('views.time.days', { count: Math.floor(ago / DAY) });
  return new Date(at).toLocaleDateString(lang);
}

/** How long something has lasted: "12 min", "3 h 5 min". */
export function duration(t: TFunction, ms: number): string {
  const d = Math.max(0, ms);
  if (d < MINUTE) return t('views.duration.lessThanMinute');
  if (d < HOUR) return t('views.duration.minutes', { count: Math.floor(d / MINUTE) });
  if (d < DAY) return t('views.duration.hours', { count: Math.floor(d / HOUR), minutes: Math.floor((d % HOUR) / MINUTE) });
  return t('views.duration.days', { count: Math.floor(d / DAY), hours: Math.floor((d % DAY) / HOUR) });
}

/** A relative time whose element carries the exact instant (datetime) and the full date on hover. */
export function When({ at, now, className }: { at: number; now: number; className?: string }) {
  const { t, i18n } = useTranslation();
  return (
    <time className={className} dateTime={new Date(at).toISOString()} title={fullTime(at, i18n.language)}>
      {relativeTime(t, at, now, i18n.language)}
    </time>
  );
}
