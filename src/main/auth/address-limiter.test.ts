import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressKey, createAddressLimiter, createPreAuthGate, type AddressLimit } from './address-limiter.ts';

const LIMIT: AddressLimit = { enabled: true, perSecond: 2, burst: 5, maxAddresses: 100 };

test('an address is refused once its failures use up the burst, and earns requests back over time', () => {
  const l = createAddressLimiter(LIMIT);
  for (let i = 0; i < 5; i++) {
    assert.deepEqual(l.admit('10.0.0.1', 0), { allowed: true });
    l.charge('10.0.0.1', 0);
  }
  assert.deepEqual(l.admit('10.0.0.1', 0), { allowed: false, retryAfterSeconds: 1 });
  assert.deepEqual(l.admit('10.0.0.2', 0), { allowed: true }, 'other addresses are not affected');
  assert.equal(l.admit('10.0.0.1', 499).allowed, false);
  assert.equal(l.admit('10.0.0.1', 500).allowed, true, 'one token back after 1/perSecond');
  l.charge('10.0.0.1', 500);
  assert.equal(l.admit('10.0.0.1', 500).allowed, false);
});

test('asking costs nothing: an address that never fails takes no memory and is never refused', () => {
  const l = createAddressLimiter(LIMIT);
  for (let i = 0; i < 1000; i++) assert.equal(l.admit('10.0.0.1', 0).allowed, true);
  assert.equal(l.size(), 0);
});

test('failures of requests admitted together run up a capped debt, so a flooding address recovers within 2 × burst/perSecond', () => {
  const l = createAddressLimiter(LIMIT);
  for (let i = 0; i < 1000; i++) l.charge('10.0.0.1', 0);
  const r = l.admit('10.0.0.1', 0);
  assert.equal(r.allowed === false && r.retryAfterSeconds, 3);
  assert.equal(l.admit('10.0.0.1', 2999).allowed, false);
  assert.equal(l.admit('10.0.0.1', 3000).allowed, true);
});

test('memory stays bounded: idle addresses are dropped and the map never passes maxAddresses', () => {
  const l = createAddressLimiter({ ...LIMIT, maxAddresses: 50 });
  for (let i = 0; i < 10_000; i++) l.charge(`10.0.${i >> 8}.${i & 255}`, 0);
  assert.equal(l.size(), 50);
  // Once they have refilled they are idle: each new address sweeps out two of them.
  for (let i = 0; i < 10; i++) l.charge(`192.168.0.${i}`, 60_000);
  assert.equal(l.size(), 40);
});

test('disabled: never refuses and remembers nothing', () => {
  const l = createAddressLimiter({ ...LIMIT, enabled: false });
  for (let i = 0; i < 100; i++) l.charge('10.0.0.1', 0);
  assert.equal(l.admit('10.0.0.1', 0).allowed, true);
  assert.equal(l.size(), 0);
});

test('address keys: IPv4 as is, IPv4-mapped unwrapped, IPv6 by its /64', () => {
  assert.equal(addressKey('203.0.113.9'), '203.0.113.9');
  assert.equal(addressKey('::ffff:203.0.113.9'), '203.0.113.9');
  assert.equal(addressKey('::ffff:cb00:7109'), '203.0.113.9');
  assert.equal(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64');
  assert.equal(addressKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  assert.equal(addressKey('2001:DB8:1:2::ffff'), '2001:db8:1:2::/64');
  assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(addressKey('::1'), '0:0:0:0::/64');
  assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(addressKey(undefined), 'unknown');
});

test('the gate: refused unauthenticated requests cost tokens, authenticated ones none, and authenticated connections pass while the address is out', () => {
  const gate = createPreAuthGate(createAddressLimiter(LIMIT));
  const honest = {};
  const attacker = {};
  const fail = { authenticated: false, refused: true };
  const pass = (conn: object, remote: string, outcome: { authenticated: boolean; refused: boolean }): boolean => {
    if (!gate.admit(conn, remote, 0).allowed) return false;
    gate.settle(conn, remote, outcome, 0);
    return true;
  };
  assert.equal(pass(honest, '10.0.0.1', { authenticated: true, refused: false }), true);
  for (let i = 0; i < 5; i++) assert.equal(pass(attacker, '10.0.0.1', fail), true);
  assert.equal(pass(attacker, '10.0.0.1', fail), false);
  assert.equal(gate.admit({}, '::ffff:10.0.0.1', 0).allowed, false, 'a new connection from the address is refused');
  assert.equal(pass(honest, '10.0.0.1', { authenticated: true, refused: false }), true, 'the authenticated connection is still served');
  // Authenticated requests, refused or not (a 409, a per-client 429), cost the address nothing.
  for (let i = 0; i < 100; i++) assert.equal(pass({}, '10.0.0.2', { authenticated: true, refused: true }), true);
  // A trusted connection that fails authentication while the address is out loses its pass.
  assert.equal(pass(honest, '10.0.0.1', fail), true);
  assert.equal(gate.admit(honest, '10.0.0.1', 0).allowed, false);
});

test('a refusal costs one token and one more per MiB of body it sent or declared', () => {
  const gate = createPreAuthGate(createAddressLimiter({ enabled: true, perSecond: 1, burst: 20, maxAddresses: 100 }));
  const refused = (remote: string, bodyBytes: number): number => {
    let n = 0;
    while (gate.admit({}, remote, 0).allowed) {
      gate.settle({}, remote, { authenticated: false, refused: true, bodyBytes }, 0);
      n++;
    }
    return n;
  };
  assert.equal(refused('10.0.0.1', 1000), 20, 'small bodies: the burst');
  assert.equal(refused('10.0.0.2', 8 * 1024 * 1024), 3, '8 MiB bodies cost 9 tokens each');
});
