import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../store/db.ts';
import { createStore } from '../store/index.ts';
import { checkSession, digestOf, newSecret, SESSION_IDLE_MS, SESSION_MAX_MS, SIGN_IN_LINK_MS } from './sessions.ts';

function team() {
  const store = createStore(openDatabase(':memory:'));
  store.accounts.add({ id: 'ann', name: 'Ann Lee', role: 'admin', now: 0 });
  store.accounts.add({ id: 'omar', name: 'Omar', role: 'agent', capacity: 3, now: 0 });
  const signIn = (agentId: string, now: number): string => {
    const token = newSecret();
    store.accounts.addSession({ digest: digestOf(token), agentId, address: '10.0.0.7', now });
    return token;
  };
  return { store, accounts: store.accounts, signIn };
}

test('agents are stored with their role and capacity; the table refuses any other role or a negative capacity', () => {
  const { accounts, store } = team();
  assert.deepEqual(accounts.list().map((a) => [a.id, a.name, a.role, a.capacity, a.disabled, a.passwordHash]), [
    ['ann', 'Ann Lee', 'admin', 5, false, null],
    ['omar', 'Omar', 'agent', 3, false, null],
  ]);
  assert.throws(() => accounts.add({ id: 'x', name: 'X', role: 'owner' as 'admin', now: 0 }), /CHECK constraint/);
  assert.throws(() => store.connection.exec("UPDATE agents SET capacity = -1 WHERE id = 'omar'"), /CHECK constraint/, 'nor can a hand edit store one');
});

test('a session token is stored only as its digest, and lives until 12 h unused, 30 days in all, sign-out or a disabled account', async () => {
  const { accounts, store, signIn } = team();
  const token = signIn('omar', 0);
  assert.equal(store.connection.prepare('SELECT count(*) AS n FROM sessions WHERE digest = ?').get(token)!['n'], 0, 'the token itself is not stored');
  assert.equal((await checkSession(accounts, token, SESSION_IDLE_MS - 1)).ok, true);
  // Used just before the idle limit: it lives on from that use.
  assert.equal((await checkSession(accounts, token, 2 * SESSION_IDLE_MS - 2)).ok, true);
  assert.deepEqual(await checkSession(accounts, token, 3 * SESSION_IDLE_MS), { ok: false, reason: 'idle' });
  assert.deepEqual(await checkSession(accounts, token, 3 * SESSION_IDLE_MS + 1), { ok: false, reason: 'ended' }, 'ended once found idle');

  // Used every hour, it still ends 30 days after sign-in.
  const busy = signIn('ann', 0);
  for (let t = 0; t < SESSION_MAX_MS; t += 3_600_000) assert.equal((await checkSession(accounts, busy, t)).ok, true);
  assert.deepEqual(await checkSession(accounts, busy, SESSION_MAX_MS), { ok: false, reason: 'expired' });

  const other = signIn('ann', 0);
  assert.equal(accounts.endSession(digestOf(other), 'signed_out', 5), true);
  assert.deepEqual(await checkSession(accounts, other, 6), { ok: false, reason: 'ended' });
  assert.deepEqual(await checkSession(accounts, newSecret(), 6), { ok: false, reason: 'unknown' });

  const a = signIn('omar', 10);
  const b = signIn('omar', 10);
  accounts.setDisabled('omar', true, 20);
  assert.deepEqual(await checkSession(accounts, a, 21), { ok: false, reason: 'disabled' }, 'a disabled account is refused at its next call');
  assert.deepEqual(accounts.endSessionsOf('omar', 'disabled', 22), [digestOf(b)], 'and its other sessions are ended, named so their streams can close');
});

test('a sign-in link works once, until it expires, and a new one replaces the old', () => {
  const { accounts } = team();
  const first = newSecret();
  accounts.replaceSignInLink('omar', digestOf(first), SIGN_IN_LINK_MS, 0);
  const second = newSecret();
  accounts.replaceSignInLink('omar', digestOf(second), SIGN_IN_LINK_MS, 1);
  assert.equal(accounts.takeSignInLink(digestOf(first), 2), null, 'replaced');
  assert.equal(accounts.takeSignInLink(digestOf(second), SIGN_IN_LINK_MS), null, 'expired at 24 h');
  const third = newSecret();
  accounts.replaceSignInLink('omar', digestOf(third), 100 + SIGN_IN_LINK_MS, 100);
  assert.equal(accounts.takeSignInLink(digestOf(third), 200), 'omar');
  assert.equal(accounts.takeSignInLink(digestOf(third), 201), null, 'used');
});

test('removing an agent removes their links and sessions', async () => {
  const { accounts, store, signIn } = team();
  const token = signIn('omar', 0);
  accounts.replaceSignInLink('omar', digestOf(newSecret()), SIGN_IN_LINK_MS, 0);
  assert.equal(accounts.remove('omar'), true);
  assert.deepEqual(await checkSession(accounts, token, 1), { ok: false, reason: 'unknown' });
  assert.equal(store.connection.prepare('SELECT count(*) AS n FROM sign_in_links').get()!['n'], 0);
});
