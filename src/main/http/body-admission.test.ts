import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { admitBody, MIN_CHUNK_CHARGE } from './body-admission.ts';
import { createIntakeBudget } from './intake-budget.ts';
import { DEFAULT_JSON_BOUNDS } from './json-scan.ts';
import { HttpProblem } from './problem.ts';
import { manualClock } from '../../shared/clock.ts';

const request = (headers: Record<string, string>): IncomingMessage => ({ headers, socket: { remoteAddress: '10.0.0.1' } }) as unknown as IncomingMessage;

test('a stranger pays for each chunk as it comes, at least MIN_CHUNK_CHARGE, so a body sent a byte at a time cannot outgrow its share unseen', () => {
  const intake = createIntakeBudget({ totalBytes: 64 * 1024, perAddressBytes: 8 * 1024, perAddressConnections: 10, bodyTimeoutMs: 1000, maxConnections: 100 });
  const admission = admitBody(request({ 'content-length': '4096' }), { bounds: DEFAULT_JSON_BOUNDS, bodyLimitBytes: 4096, clock: manualClock(0), intake });
  assert.ok(!(admission instanceof HttpProblem));
  assert.equal(intake.held(), 0, 'nothing is held for what it only declared');
  const byte = Buffer.from(' ');
  let sent = 0;
  assert.throws(() => {
    for (;;) {
      admission.read.check!(byte);
      sent++;
    }
  }, (e: unknown) => e instanceof HttpProblem && e.status === 429);
  assert.equal(sent, (8 * 1024) / MIN_CHUNK_CHARGE, '16 one-byte chunks fill an 8 KiB share');
  admission.release();
  assert.equal(intake.held(), 0);
});

test('a declared length that does not fit when the request starts is refused before a byte is read', () => {
  const intake = createIntakeBudget({ totalBytes: 64 * 1024, perAddressBytes: 8 * 1024, perAddressConnections: 10, bodyTimeoutMs: 1000, maxConnections: 100 });
  const refused = admitBody(request({ 'content-length': String(9 * 1024) }), { bounds: DEFAULT_JSON_BOUNDS, bodyLimitBytes: 16 * 1024, clock: manualClock(0), intake });
  assert.ok(refused instanceof HttpProblem);
  assert.equal(refused.status, 429);
});

test('a stranger\'s body in more than 1,024 pieces must average 256 bytes a piece, or it is refused 400', () => {
  const intake = createIntakeBudget({ totalBytes: 64 * 1024 * 1024, perAddressBytes: 32 * 1024 * 1024, perAddressConnections: 10, bodyTimeoutMs: 1000, maxConnections: 100 });
  const start = () => {
    const a = admitBody(request({ 'transfer-encoding': 'chunked' }), { bounds: DEFAULT_JSON_BOUNDS, bodyLimitBytes: 10 * 1024 * 1024, clock: manualClock(0), intake });
    assert.ok(!(a instanceof HttpProblem));
    return a;
  };
  const tiny = start();
  let pieces = 0;
  assert.throws(() => {
    for (;;) {
      tiny.read.check!(Buffer.from(' '));
      pieces++;
    }
  }, (e: unknown) => e instanceof HttpProblem && e.status === 400 && /pieces of 1 bytes on average/.test(e.message));
  assert.equal(pieces, 1024);
  tiny.release();
  // TCP segments of a slow link: many pieces, but not small ones.
  const segments = start();
  for (let i = 0; i < 5000; i++) segments.read.check!(Buffer.alloc(1460, 0x20));
  segments.release();
});
