/**
 * Durations in Prometheus' cumulative buckets, as plain data: a worker thread records into one
 * and posts it as it is (structured clone), and /metrics renders it on the main thread.
 */
export const DURATION_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

export interface DurationHistogram {
  /** counts[i]: observations of at most DURATION_BUCKETS_SECONDS[i] seconds (cumulative). */
  counts: number[];
  sum: number;
  count: number;
}

export function emptyDurationHistogram(): DurationHistogram {
  return { counts: new Array<number>(DURATION_BUCKETS_SECONDS.length).fill(0), sum: 0, count: 0 };
}

export function observeDuration(histogram: DurationHistogram, seconds: number): void {
  histogram.sum += seconds;
  histogram.count++;
  for (let i = 0; i < DURATION_BUCKETS_SECONDS.length; i++) if (seconds <= DURATION_BUCKETS_SECONDS[i]!) histogram.counts[i]!++;
}

/** Observations above `seconds`, which must be one of the bucket bounds. */
export function countAbove(histogram: DurationHistogram, seconds: (typeof DURATION_BUCKETS_SECONDS)[number]): number {
  return histogram.count - histogram.counts[DURATION_BUCKETS_SECONDS.indexOf(seconds)]!;
}
