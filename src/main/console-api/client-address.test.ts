import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { clientAddress, trustedProxiesOf } from './client-address.ts';

const req = (peer: string, forwarded?: string): IncomingMessage => ({ socket: { remoteAddress: peer }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as unknown as IncomingMessage;

test('without a trusted proxy the socket peer is the caller, whatever X-Forwarded-For claims', () => {
  const none = trustedProxiesOf({});
  assert.equal(clientAddress(req('203.0.113.9', '10.0.0.1'), none), '203.0.113.9');
  assert.equal(clientAddress(req('::ffff:203.0.113.9'), none), '203.0.113.9');
});

test('behind a trusted proxy, the rightmost address it did not add itself; a client cannot choose its own by sending the header', () => {
  const proxy = trustedProxiesOf({ publicOrigin: 'https://team.example' });
  assert.equal(clientAddress(req('::ffff:127.0.0.1', '198.51.100.4'), proxy), '198.51.100.4');
  // The client sent "X-Forwarded-For: 10.9.9.9"; the proxy appended the real peer after it.
  assert.equal(clientAddress(req('127.0.0.1', '10.9.9.9, 198.51.100.4'), proxy), '198.51.100.4');
  assert.equal(clientAddress(req('127.0.0.1', 'not-an-ip, 198.51.100.4'), proxy), '198.51.100.4');
  assert.equal(clientAddress(req('127.0.0.1'), proxy), '127.0.0.1', 'no header: the proxy itself');
  assert.equal(clientAddress(req('127.0.0.1', 'garbage'), proxy), '127.0.0.1');
  assert.equal(clientAddress(req('127.0.0.1', '198.51.100.4:61000'), proxy), '198.51.100.4', 'a forwarded port is dropped');
  assert.equal(clientAddress(req('127.0.0.1', '[2001:db8::7]:61000'), proxy), '2001:db8::7');
  const chain = trustedProxiesOf({ trustedProxies: ['10.0.0.2', '10.0.0.3'] });
  assert.equal(clientAddress(req('10.0.0.3', '198.51.100.4, 10.0.0.2'), chain), '198.51.100.4', 'two trusted hops');
  assert.equal(clientAddress(req('127.0.0.1', '198.51.100.4'), chain), '127.0.0.1', 'loopback is not trusted once proxies are listed');
});
