import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetrics, eventLoopDelayGauges, monitorLoopDelay } from './metrics.ts';
import { emptyDurationHistogram, observeDuration } from '../../shared/duration-histogram.ts';

const series = (text: string, name: string): string[] => text.split('\n').filter((l) => l.startsWith(`${name}{`));

test('event_type labels come from the four event types; anything else is other, a missing one none', () => {
  const m = createMetrics();
  for (const et of ['auto_dialog', 'assist_dialog', 'website_dialog', 'cmd_dialog']) m.observeRequest(et, 200, 0.01);
  for (let i = 0; i < 500; i++) m.observeRequest(`made-up-${i}`, 401, 0.001);
  m.observeRequest('AUTO_DIALOG', 401, 0.001);
  m.observeRequest('x"}\nevil 1', 401, 0.001);
  m.observeRequest(null, 400, 0.001);
  const text = m.render();
  assert.deepEqual(series(text, 'switchboard_http_requests_total').sort(), [
    'switchboard_http_requests_total{event_type="assist_dialog",status="200"} 1',
    'switchboard_http_requests_total{event_type="auto_dialog",status="200"} 1',
    'switchboard_http_requests_total{event_type="cmd_dialog",status="200"} 1',
    'switchboard_http_requests_total{event_type="none",status="400"} 1',
    'switchboard_http_requests_total{event_type="other",status="401"} 502',
    'switchboard_http_requests_total{event_type="website_dialog",status="200"} 1',
  ]);
});

test('status labels are the statuses the server answers; outcomes and stored event types are closed too', () => {
  const m = createMetrics();
  for (const status of [200, 400, 401, 403, 404, 405, 409, 413, 415, 429, 500, 503, 504]) m.observeRequest('auto_dialog', status, 0);
  m.observeRequest('auto_dialog', 299, 0);
  m.observeRequest('auto_dialog', 999, 0);
  m.messageStored('auto_dialog');
  m.messageStored('nonsense');
  for (const o of ['sent', 'retry', 'dead', 'cancelled', 'exploded']) m.deliveryAttempt(o);
  const text = m.render();
  const statuses = series(text, 'switchboard_http_requests_total').map((l) => /status="([^"]+)"/.exec(l)![1]);
  assert.deepEqual(statuses.sort(), ['200', '400', '401', '403', '404', '405', '409', '413', '415', '429', '500', '503', '504', 'other']);
  assert.match(text, /switchboard_http_requests_total\{event_type="auto_dialog",status="other"\} 2/);
  assert.deepEqual(series(text, 'switchboard_messages_stored_total').sort(), [
    'switchboard_messages_stored_total{event_type="auto_dialog"} 1',
    'switchboard_messages_stored_total{event_type="other"} 1',
  ]);
  assert.deepEqual(series(text, 'switchboard_delivery_attempts_total').map((l) => /outcome="(\w+)"/.exec(l)![1]), ['sent', 'retry', 'dead', 'cancelled', 'other']);
});

/** A loop-delay monitor's tick driven by hand: `tick(ms)` is the loop coming back to it `ms` later. */
function handTicks() {
  let at = 0;
  let fn: (() => void) | null = null;
  return {
    timing: { now: () => at, every: (f: () => void) => ((fn = f), () => (fn = null)) },
    tick(ms: number): void {
      at += ms;
      fn?.();
    },
  };
}

test('event-loop delay gauges show a stall at the next scrape, then only what came after it', () => {
  const m = createMetrics();
  const t = handTicks();
  const loop = monitorLoopDelay(10, t.timing);
  eventLoopDelayGauges(m, loop);
  const value = (text: string, name: string): number => Number(text.split('\n').find((l) => l.startsWith(`${name} `))!.split(' ')[1]);
  t.tick(10);
  t.tick(10);
  t.tick(130); // a 120 ms synchronous stall of the main thread, as a batch of reply timers makes
  t.tick(10);
  const first = m.render();
  assert.ok(value(first, 'switchboard_event_loop_delay_max_seconds') >= 0.1, first);
  assert.ok(value(first, 'switchboard_event_loop_delay_p99_seconds') >= 0.1, first);
  for (let i = 0; i < 6; i++) t.tick(10);
  const second = m.render();
  loop.stop();
  assert.ok(value(second, 'switchboard_event_loop_delay_max_seconds') < 0.001, second);
  assert.ok(value(second, 'switchboard_event_loop_delay_p99_seconds') < 0.001, second);
});

test('an idle loop reads as no delay: the monitor timer\'s own 10 ms interval is not counted as delay', () => {
  const m = createMetrics();
  // What monitorEventLoopDelay({ resolution: 10 }) holds for an idle loop: ticks 10.2-10.4 ms apart.
  let count = 200;
  const idle = { percentile: () => 10.29e6, max: 10.37e6, get count() { return count; }, reset: () => void (count = 0) };
  eventLoopDelayGauges(m, { histogram: idle, resolutionMs: 10 });
  const text = m.render();
  const value = (name: string): number => Number(text.split('\n').find((l) => l.startsWith(`${name} `))!.split(' ')[1]);
  assert.ok(value('switchboard_event_loop_delay_p99_seconds') < 0.001, text);
  assert.ok(value('switchboard_event_loop_delay_max_seconds') < 0.001, text);
  assert.equal(m.render().includes('switchboard_event_loop_delay_p99_seconds 0\n'), true, 'nothing sampled since the last scrape: 0');
});

test('a stall that starts right after a scrape shows at the next scrape', () => {
  const m = createMetrics();
  const t = handTicks();
  const loop = monitorLoopDelay(10, t.timing);
  eventLoopDelayGauges(m, loop);
  const value = (text: string, name: string): number => Number(text.split('\n').find((l) => l.startsWith(`${name} `))!.split(' ')[1]);
  t.tick(10);
  t.tick(10);
  m.render(); // a scrape, then at once (before the monitor's next tick) a synchronous stall
  t.tick(130);
  const text = m.render();
  loop.stop();
  assert.ok(value(text, 'switchboard_event_loop_delay_max_seconds') >= 0.1, text);
});

test('a histogram kept elsewhere renders as one family, and HELP text is escaped', () => {
  const metrics = createMetrics();
  const h = emptyDurationHistogram();
  observeDuration(h, 0.003);
  observeDuration(h, 0.04);
  metrics.histogram('switchboard_test_seconds', 'two lines\nand a \\ backslash', () => h);
  const text = metrics.render();
  const family = text.split('\n').filter((l) => l.includes('switchboard_test_seconds'));
  assert.equal(family[0], '# HELP switchboard_test_seconds two lines\\nand a \\\\ backslash');
  assert.equal(family[1], '# TYPE switchboard_test_seconds histogram');
  assert.ok(family.includes('switchboard_test_seconds_bucket{le="0.0025"} 0'));
  assert.ok(family.includes('switchboard_test_seconds_bucket{le="0.005"} 1'));
  assert.ok(family.includes('switchboard_test_seconds_bucket{le="0.05"} 2'));
  assert.ok(family.includes('switchboard_test_seconds_bucket{le="+Inf"} 2'));
  assert.equal(family.at(-1), 'switchboard_test_seconds_count 2');
});
