import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashPassword, passwordProblem, verifyPassword, SCRYPT_PARAMS } from './passwords.ts';

test('a password is stored as a salted scrypt hash with its parameters, and only the same password matches it', async () => {
  const stored = await hashPassword('correct horse battery');
  assert.match(stored, new RegExp(`^scrypt\\$${SCRYPT_PARAMS.N}\\$8\\$1\\$[A-Za-z0-9_-]{22}\\$[A-Za-z0-9_-]{43}$`));
  assert.doesNotMatch(stored, /horse/);
  assert.notEqual(await hashPassword('correct horse battery'), stored, 'a fresh salt each time');
  assert.equal(await verifyPassword(stored, 'correct horse battery'), true);
  assert.equal(await verifyPassword(stored, 'correct horse batterY'), false);
  // The same characters composed differently are the same password (NFC), as a person types them.
  const composed = await hashPassword('café au lait 123');
  assert.equal(await verifyPassword(composed, 'cafe\u0301 au lait 123'), true);
});

test('a stored value of another shape, or with parameters out of bounds, matches nothing', async () => {
  const stored = await hashPassword('correct horse battery');
  for (const bad of ['', 'plain', stored.replace('scrypt$', 'bcrypt$'), stored.replace(`$${SCRYPT_PARAMS.N}$`, '$1048577$'), stored.replace(`$${SCRYPT_PARAMS.N}$`, '$4194304$')]) {
    assert.equal(await verifyPassword(bad, 'correct horse battery'), false, bad.slice(0, 30));
  }
});

test('at least 12 characters, counted as a person counts them', () => {
  assert.match(passwordProblem('short')!, /at least 12 characters/);
  assert.equal(passwordProblem('twelve chars'), null);
  assert.equal(passwordProblem('密码密码密码密码密码密码'), null, '12 CJK characters');
  assert.match(passwordProblem('😀'.repeat(11))!, /at least 12/, '11 emoji are 22 UTF-16 units, still 11 characters');
  assert.match(passwordProblem('x'.repeat(1025))!, /at most 1024/);
});
