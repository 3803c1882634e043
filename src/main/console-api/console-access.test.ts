import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acceptsHost, acceptsOrigin, isLoopbackAddress, LOOPBACK_ACCESS, type ConsoleAccess } from './console-access.ts';

test('loopback binds are 127.0.0.0/8, ::1 and localhost; every other address reaches the network', () => {
  for (const a of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) assert.equal(isLoopbackAddress(a), true, a);
  for (const a of ['0.0.0.0', '::', '10.0.0.5', 'team.example', '128.0.0.1', '::2']) assert.equal(isLoopbackAddress(a), false, a);
});

test('the v1.1 listener: loopback names with any port, its own http origin only', () => {
  assert.equal(acceptsHost(LOOPBACK_ACCESS, '127.0.0.1:8788'), true);
  assert.equal(acceptsHost(LOOPBACK_ACCESS, 'localhost'), true);
  assert.equal(acceptsHost(LOOPBACK_ACCESS, 'attacker.example:8788'), false);
  assert.equal(acceptsHost(LOOPBACK_ACCESS, ''), false);
  assert.equal(acceptsOrigin(LOOPBACK_ACCESS, 'http://127.0.0.1:8788', '127.0.0.1:8788'), true);
  assert.equal(acceptsOrigin(LOOPBACK_ACCESS, 'http://127.0.0.1:9999', '127.0.0.1:8788'), false, 'another port is another origin');
  assert.equal(acceptsOrigin(LOOPBACK_ACCESS, 'https://127.0.0.1:8788', '127.0.0.1:8788'), false);
  assert.equal(acceptsOrigin(LOOPBACK_ACCESS, 'null', '127.0.0.1:8788'), false);
});

test('a TLS listener answers to its certificate\'s names (one-label wildcards too) over https', () => {
  const access: ConsoleAccess = { scheme: 'https', names: ['team.example', '*.desk.example', '[::1]'], loopback: false, publicOrigin: null };
  assert.equal(acceptsHost(access, 'TEAM.example:8788'), true);
  assert.equal(acceptsHost(access, 'ann.desk.example'), true);
  assert.equal(acceptsHost(access, 'a.b.desk.example'), false);
  assert.equal(acceptsHost(access, 'desk.example'), false);
  assert.equal(acceptsHost(access, 'localhost:8788'), false, 'not bound to loopback');
  assert.equal(acceptsHost(access, 'team.example@evil.example'), false);
  assert.equal(acceptsOrigin(access, 'https://team.example:8788', 'team.example:8788'), true);
  assert.equal(acceptsOrigin(access, 'http://team.example:8788', 'team.example:8788'), false);
  assert.equal(acceptsOrigin(access, 'https://team.example', 'team.example:443'), true, 'the default port, spelt or not');
});

test('behind a proxy: the public origin is accepted, http:// on its name is not', () => {
  const access: ConsoleAccess = { scheme: 'http', names: [], loopback: true, publicOrigin: 'https://support.example' };
  assert.equal(acceptsHost(access, 'support.example'), true);
  assert.equal(acceptsHost(access, '127.0.0.1:8788'), true);
  assert.equal(acceptsOrigin(access, 'https://support.example', 'support.example'), true);
  assert.equal(acceptsOrigin(access, 'https://support.example', '127.0.0.1:8788'), true, 'a proxy that sends the upstream Host');
  assert.equal(acceptsOrigin(access, 'http://support.example', 'support.example'), false);
  assert.equal(acceptsOrigin(access, 'https://support.example:8443', 'support.example'), false);
});
