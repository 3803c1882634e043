import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { certificateVerdict, decideConnect, VERIFY_ACCEPT, VERIFY_CHROMIUM, VERIFY_REFUSE } from './certificate-decision.ts';
import { createPinStore, PINS_FILE } from './pin-store.ts';

const A = Array.from({ length: 32 }, () => 'AA').join(':');
const B = Array.from({ length: 32 }, () => 'BB').join(':');

test('Electron\'s certificate check: a pinned host only with its certificate; others only as Chromium trusts them', () => {
  const pins = { 'team.example': A };
  assert.deepEqual(certificateVerdict('team.example', A, false, pins), { result: VERIFY_ACCEPT, refusal: null }, 'self-signed, confirmed');
  assert.deepEqual(certificateVerdict('TEAM.example', A.toLowerCase(), false, pins), { result: VERIFY_ACCEPT, refusal: null }, 'one spelling');
  const changed = certificateVerdict('team.example', B, true, pins);
  assert.equal(changed.result, VERIFY_REFUSE, 'a changed certificate is refused even when a public authority signed it');
  assert.match(changed.refusal!, new RegExp(`You confirmed ${A}; the server now shows ${B}`));
  assert.deepEqual(certificateVerdict('public.example', B, true, pins), { result: VERIFY_CHROMIUM, refusal: null });
  const never = certificateVerdict('other.example', B, false, pins);
  assert.equal(never.result, VERIFY_REFUSE);
  assert.match(never.refusal!, /never confirmed/);
  assert.equal(certificateVerdict('::1', A, false, { '::1': A }).result, VERIFY_ACCEPT);
  assert.equal(certificateVerdict('__proto__', A, false, {}).result, VERIFY_REFUSE, 'no inherited property is a pin');
});

test('Connect: a self-signed certificate needs its fingerprint confirmed; a changed one is refused whatever is confirmed', () => {
  const unverified = { host: 'team.example', fingerprint: A, trust: 'unverified' as const, pinned: null };
  const unconfirmed = decideConnect(unverified, null);
  assert.equal(unconfirmed.ok ? '' : unconfirmed.code, 'confirm_fingerprint');
  assert.match(unconfirmed.ok ? '' : unconfirmed.message, new RegExp(`not publicly trusted .*${A}`));
  assert.deepEqual(decideConnect(unverified, A.toLowerCase()), { ok: true, pin: A });
  const mismatch = decideConnect(unverified, B);
  assert.equal(mismatch.ok ? '' : mismatch.code, 'fingerprint_mismatch');
  assert.deepEqual(decideConnect({ ...unverified, trust: 'public' }, null), { ok: true, pin: null });
  assert.deepEqual(decideConnect({ ...unverified, trust: 'pinned', pinned: A }, null), { ok: true, pin: null });
  const changed = decideConnect({ host: 'team.example', fingerprint: B, trust: 'changed', pinned: A }, B);
  assert.equal(changed.ok, false);
  assert.equal(changed.ok ? '' : changed.code, 'certificate_changed');
  assert.match(changed.ok ? '' : changed.message, new RegExp(`${A}.*${B}`));
});

test('the pin store keeps confirmed fingerprints by host in the data folder, and forgets on request', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-pins-'));
  const pins = createPinStore(dir);
  assert.deepEqual(pins.all(), {});
  pins.pin('[::1]', A.toLowerCase());
  pins.pin('Team.Example', B);
  assert.deepEqual(createPinStore(dir).all(), { '::1': A, 'team.example': B }, 'read back by a new store (next run)');
  assert.equal(pins.get('TEAM.EXAMPLE'), B);
  assert.equal(pins.forget('team.example'), true);
  assert.equal(pins.forget('team.example'), false);
  assert.equal(pins.get('team.example'), null);
  writeFileSync(join(dir, PINS_FILE), JSON.stringify({ pins: { 'x.example': 'not a fingerprint' } }));
  assert.deepEqual(pins.all(), {}, 'a hand-edited file that does not check out pins nothing');
});
