import { z } from 'zod';

/** The settings row holding the threshold set from the console; absent: the server's kbThreshold. */
export const KB_THRESHOLD_SETTING = 'kbThreshold';

const stored = z.coerce.number().min(0).max(1);

/**
 * The built-in engine's threshold as it stands now: the one an admin set from the console, read at
 * each question (a point read of one row) so every thread and process sees a change at once, or the
 * server's configured value. A row that does not parse counts as unset.
 */
export function thresholdSource(settings: { get(key: string): string | undefined }, configured: number): () => number {
  return () => {
    const raw = settings.get(KB_THRESHOLD_SETTING);
    if (raw === undefined) return configured;
    const parsed = stored.safeParse(raw);
    return parsed.success ? parsed.data : configured;
  };
}
