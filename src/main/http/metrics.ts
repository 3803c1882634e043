import { EVENT_TYPES } from '../../shared/protocol/message-schema.ts';
import { PROBLEM_CODES } from '../../shared/problem-codes.ts';
import { createHistogram, type Histogram, type RecordableHistogram } from 'node:perf_hooks';
import { DURATION_BUCKETS_SECONDS, emptyDurationHistogram, observeDuration, type DurationHistogram } from '../../shared/duration-histogram.ts';

/** Prometheus text exposition of the few series this service needs; no registry library required. */

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text: the exposition format reserves backslash and newline there. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function labels(pairs: Record<string, string>): string {
  const parts = Object.entries(pairs).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

// Every label value comes from a closed set: a label read from a request before it is
// authenticated would otherwise let anyone create series without end (one per made-up value).
const EVENT_TYPE_LABELS: ReadonlySet<string> = new Set(EVENT_TYPES);
const STATUS_LABELS: ReadonlySet<number> = new Set([200, ...Object.values(PROBLEM_CODES).map((c) => c.status)]);
const OUTCOME_LABELS: ReadonlySet<string> = new Set(['sent', 'retry', 'dead', 'cancelled']);

/** `none` when the request never got as far as naming one, `other` for anything not in the protocol. */
export function eventTypeLabel(eventType: string | null | undefined): string {
  if (eventType === null || eventType === undefined) return 'none';
  return EVENT_TYPE_LABELS.has(eventType) ? eventType : 'other';
}

export function statusLabel(status: number): string {
  return STATUS_LABELS.has(status) ? String(status) : 'other';
}

export function outcomeLabel(outcome: string): string {
  return OUTCOME_LABELS.has(outcome) ? outcome : 'other';
}

export function createMetrics() {
  const requests = new Map<string, { eventType: string; status: string; count: number }>();
  const stored = new Map<string, number>();
  const attempts = new Map<string, number>();
  const requestDurations = emptyDurationHistogram();
  const gauges = new Map<string, { help: string; read: () => number }>();
  const histograms = new Map<string, { help: string; read: () => DurationHistogram }>([
    ['switchboard_http_request_duration_seconds', { help: 'Time from request start to response.', read: () => requestDurations }],
  ]);

  return {
    observeRequest(eventType: string | null, status: number, seconds: number): void {
      const et = eventTypeLabel(eventType);
      const st = statusLabel(status);
      const key = `${et} ${st}`;
      const entry = requests.get(key);
      if (entry) entry.count++;
      else requests.set(key, { eventType: et, status: st, count: 1 });
      observeDuration(requestDurations, seconds);
    },
    messageStored(eventType: string): void {
      const et = eventTypeLabel(eventType);
      stored.set(et, (stored.get(et) ?? 0) + 1);
    },
    deliveryAttempt(outcome: string): void {
      const o = outcomeLabel(outcome);
      attempts.set(o, (attempts.get(o) ?? 0) + 1);
    },
    gauge(name: string, help: string, read: () => number): void {
      gauges.set(name, { help, read });
    },
    /** A histogram another part of the service keeps (the writer thread's commits). */
    histogram(name: string, help: string, read: () => DurationHistogram): void {
      histograms.set(name, { help, read });
    },
    render(): string {
      const out: string[] = [];
      out.push('# HELP switchboard_http_requests_total Requests to the message endpoint by event_type and status.');
      out.push('# TYPE switchboard_http_requests_total counter');
      for (const r of requests.values()) {
        out.push(`switchboard_http_requests_total${labels({ event_type: r.eventType, status: r.status })} ${r.count}`);
      }
      for (const [name, h] of histograms) {
        const histogram = h.read();
        out.push(`# HELP ${name} ${escapeHelp(h.help)}`, `# TYPE ${name} histogram`);
        DURATION_BUCKETS_SECONDS.forEach((le, i) => out.push(`${name}_bucket{le="${le}"} ${histogram.counts[i]}`));
        out.push(`${name}_bucket{le="+Inf"} ${histogram.count}`, `${name}_sum ${histogram.sum}`, `${name}_count ${histogram.count}`);
      }
      out.push('# HELP switchboard_messages_stored_total Messages durably stored, by event_type.');
      out.push('# TYPE switchboard_messages_stored_total counter');
      for (const [et, n] of stored) out.push(`switchboard_messages_stored_total${labels({ event_type: et })} ${n}`);
      out.push('# HELP switchboard_delivery_attempts_total Delivery attempts by outcome (sent, retry, dead, cancelled).');
      out.push('# TYPE switchboard_delivery_attempts_total counter');
      for (const [o, n] of attempts) out.push(`switchboard_delivery_attempts_total${labels({ outcome: o })} ${n}`);
      for (const [name, g] of gauges) {
        out.push(`# HELP ${name} ${escapeHelp(g.help)}`, `# TYPE ${name} gauge`, `${name} ${g.read()}`);
      }
      return out.join('\n') + '\n';
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * Main-thread event-loop delay as two gauges, each covering the time since the previous scrape:
 * a stall shows up once, at the scrape after it, instead of being averaged into a lifetime figure.
 * The histogram resets when the max is read, so with several scrapers each sees only its share.
 * The histogram holds the time between the ticks of a timer (monitorLoopDelay), so an idle loop
 * reads as the timer's resolution (10 ms): the delay is what lies beyond it, as load-shedding
 * libraries compute it. Before this, an idle service reported 10 ms of delay.
 */
export function eventLoopDelayGauges(metrics: Metrics, monitor: { histogram: Pick<Histogram, 'percentile' | 'max' | 'count' | 'reset'>; resolutionMs: number }): void {
  const { histogram, resolutionMs } = monitor;
  const beyondResolution = (ns: number): number => Math.max(0, ns / 1e6 - resolutionMs) / 1000;
  metrics.gauge('switchboard_event_loop_delay_p99_seconds', 'Main-thread event-loop delay p99 since the previous scrape.', () =>
    histogram.count ? beyondResolution(histogram.percentile(99)) : 0,
  );
  metrics.gauge('switchboard_event_loop_delay_max_seconds', 'Main-thread event-loop delay max since the previous scrape.', () => {
    const max = histogram.count ? beyondResolution(histogram.max) : 0;
    histogram.reset();
    return max;
  });
}

/**
 * The main thread's event-loop delay, sampled by a timer of its own every `resolutionMs`: each
 * sample is the time since the previous tick, in nanoseconds, as monitorEventLoopDelay records.
 * Not monitorEventLoopDelay itself: its reset() also forgets its last tick, so the interval after
 * every scrape went unrecorded, and a stall that began within 10 ms of a scrape never showed.
 */
export function monitorLoopDelay(
  resolutionMs: number,
  /** The time source and the repeating tick; tests pass their own and tick by hand. */
  timing: { now?: () => number; every?: (fn: () => void, ms: number) => () => void } = {},
): { histogram: RecordableHistogram; resolutionMs: number; stop(): void } {
  const now = timing.now ?? (() => performance.now());
  const every =
    timing.every ??
    ((fn: () => void, ms: number) => {
      const timer = setInterval(fn, ms);
      timer.unref();
      return () => clearInterval(timer);
    });
  const histogram = createHistogram();
  let last = now();
  const stop = every(() => {
    const at = now();
    histogram.record(Math.max(1, Math.round((at - last) * 1e6)));
    last = at;
  }, resolutionMs);
  return { histogram, resolutionMs, stop };
}
