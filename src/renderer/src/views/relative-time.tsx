import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { fullTime } from '../format.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The current time, re-read every `ms`: relative times and waits stay true without new data. */
export function useNow(ms = 30_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
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
