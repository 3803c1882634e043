import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../store/db.ts';
import { createStore } from '../store/index.ts';
import { checkSession, digestOf, newSecret, SIGN_IN_LINK_MS } from '../accounts/sessions.ts';
import { agentsCommand, linkOrigin } from './agents-commands.ts';
import { sqliteTarget } from './store-target.ts';
import { UsageError } from './args.ts';

const T = Date.UTC(2026, 5, 1, 9, 0, 0);
const ORIGIN = 'http://127.0.0.1:8788';

function setup() {
  const store = createStore(openDatabase(':memory:'));
  store.accounts.setOwner({ id: 'owner', name: 'Olga Owner', now: 0 });
  const run = (args: string[], flags: Record<string, string> = {}, now = T): Promise<string> => agentsCommand(sqliteTarget(store), now, args, flags, ORIGIN);
  const linkOf = (out: string): string => {
    const m = /^sign-in link: (\S+)$/m.exec(out);
    assert.ok(m, out);
    return m[1]!;
  };
  const sessionFor = (agentId: string): string => {
    const token = newSecret();
    store.accounts.addSession({ digest: digestOf(token), agentId, address: '10.0.0.9', now: T });
    return token;
  };
  const audit = () => store.audit.search({ action: 'agent', limit: 100 }).reverse().map((a) => ({ operator: a.operator.id, detail: JSON.parse(a.detail!) as Record<string, unknown>, address: a.address }));
  return { store, run, linkOf, sessionFor, audit };
}

test('agents add prints a one-time link on the console origin, valid 24 h; only its digest is stored', async () => {
  const { store, run, linkOf, audit } = setup();
  const out = await run(['add', 'ann'], { name: 'Ann Lee', role: 'admin', capacity: '3' });
  assert.match(out, /^agent ann \(Ann Lee, admin, capacity 3\) added$/m);
  const link = linkOf(out);
  assert.match(link, /^http:\/\/127\.0\.0\.1:8788\/#sign-in-link=[A-Za-z0-9_-]{43}$/);
  assert.match(out, new RegExp(`until ${new Date(T + SIGN_IN_LINK_MS).toISOString()}`));
  const secret = link.split('=')[1]!;
  assert.deepEqual(store.accounts.peekSignInLink(digestOf(secret), T + SIGN_IN_LINK_MS - 1), { agentId: 'ann', expiresAt: T + SIGN_IN_LINK_MS });
  assert.equal(store.accounts.peekSignInLink(digestOf(secret), T + SIGN_IN_LINK_MS), null, 'expired after 24 h');
  assert.ok(!JSON.stringify(store.connection.prepare('SELECT * FROM sign_in_links').all()).includes(secret), 'the secret itself is not stored');
  const ann = store.accounts.get('ann')!;
  assert.deepEqual([ann.role, ann.capacity, ann.passwordHash], ['admin', 3, null]);
  assert.deepEqual(audit(), [{ operator: '-', address: null, detail: { change: 'add', agent: 'ann', name: 'Ann Lee', role: 'admin', capacity: 3, via: 'cli' } }]);
  // Defaults: role agent, capacity 5; --origin overrides the configured address.
  assert.match(linkOf(await run(['add', 'omar'], { name: 'Omar', origin: 'https://team.example.com/console?x=1' })), /^https:\/\/team\.example\.com\/#sign-in-link=/);
  assert.deepEqual([store.accounts.get('omar')!.role, store.accounts.get('omar')!.capacity], ['agent', 5]);
});

test('agents add refuses bad input with one clear line each, and changes nothing', async () => {
  const { store, run } = setup();
  await run(['add', 'ann'], { name: 'Ann' });
  const refused: Array<[string[], Record<string, string>, RegExp]> = [
    [['add'], { name: 'X' }, /agents add needs an agent ID/],
    [['add', 'x'], {}, /needs --name NAME/],
    [['add', 'x'], { name: '   ' }, /needs --name NAME/],
    [['add', 'bad id!'], { name: 'X' }, /agent ID "bad id!" must be 1 to 64 letters/],
    [['add', 'x'], { name: 'X', role: 'owner' }, /--role must be admin or agent, got "owner"/],
    [['add', 'x'], { name: 'X', capacity: '-1' }, /--capacity must be a whole number 0\.\.1000, got "-1"/],
    [['add', 'x'], { name: 'X', capacity: '2.5' }, /--capacity must be a whole number/],
    [['add', 'x'], { name: 'X', origin: 'ftp://x' }, /--origin must be an http:\/\/ or https:\/\/ URL/],
    [['add', 'ANN'], { name: 'Ann again' }, /an agent "ann" already exists/],
    [['add', 'x', 'Lee'], { name: 'Ann' }, /takes one ID, got also "Lee" \(quote a name with spaces/],
    [['frob'], {}, /unknown agents command "frob"; use add, list, disable, enable, reset or remove/],
    [['disable', 'ghost'], {}, /no agent "ghost"/],
  ];
  for (const [args, flags, message] of refused) await assert.rejects(run(args, flags), (e: Error) => e instanceof UsageError && message.test(e.message) && !e.message.includes('\n'), args.join(' '));
  assert.deepEqual(store.accounts.list().map((a) => a.id), ['ann', 'owner']);
});

test('agents list shows each account once with its role, capacity, state (active, invited, disabled), the owner marked and the last sign-in', async () => {
  const { store, run } = setup();
  assert.match(await run(['list']), /^ID\s+NAME\s+ROLE\s+CAPACITY\s+STATE\s+LAST_SIGN_IN\s+SESSIONS$/m);
  await run(['add', 'ann'], { name: 'Ann Lee' });
  await run(['add', 'omar'], { name: 'Omar', capacity: '2' });
  store.accounts.setPasswordHash('ann', 'scrypt$hash', T);
  store.accounts.addSession({ digest: 'd1', agentId: 'ann', address: null, now: T + 60_000 });
  await run(['add', 'zed'], { name: 'Zed' });
  await run(['disable', 'zed']);
  const lines = (await run(['list'], {}, T + 120_000)).split('\n');
  assert.match(lines[1]!, /^ann\s+Ann Lee\s+agent\s+5\s+active\s+2026-06-01T09:01:00Z\s+1$/);
  assert.match(lines[2]!, /^omar\s+Omar\s+agent\s+2\s+invited\s+-\s+0$/);
  assert.match(lines[3]!, /^owner\s+Olga Owner\s+admin \(owner\)\s+0\s+active/, 'the owner needs no password');
  assert.match(lines[4]!, /^zed\s+Zed\s+agent\s+5\s+disabled/);
});

test('disable ends the agent\'s sessions at once; enable lets them sign in again; both are audited', async () => {
  const { store, run, sessionFor, audit } = setup();
  await run(['add', 'ann'], { name: 'Ann' });
  store.accounts.setPasswordHash('ann', 'scrypt$hash', T);
  const tokens = [sessionFor('ann'), sessionFor('ann')];
  assert.match(await run(['disable', 'ann']), /^agent ann disabled; 2 sessions ended \(a running server refuses them within a second\)$/);
  for (const token of tokens) assert.deepEqual((await checkSession(store.accounts, token, T + 1)), { ok: false, reason: 'ended' });
  assert.equal(store.accounts.session(digestOf(tokens[0]!))!.endedReason, 'disabled');
  assert.equal(await run(['disable', 'ann']), 'agent ann was already disabled');
  assert.equal(await run(['enable', 'ann']), 'agent ann enabled');
  assert.equal(store.accounts.get('ann')!.disabled, false);
  assert.ok((await checkSession(store.accounts, sessionFor('ann'), T + 2)).ok, 'a new sign-in works');
  assert.deepEqual(audit().slice(1).map((a) => a.detail), [
    { change: 'disable', agent: 'ann', endedSessions: 2, via: 'cli' },
    { change: 'enable', agent: 'ann', via: 'cli' },
  ], 'a disable that changed nothing is not audited');
});

test('reset forgets the password, ends the sessions and prints a new link; the old link stops working', async () => {
  const { store, run, linkOf, sessionFor, audit } = setup();
  const first = linkOf(await run(['add', 'ann'], { name: 'Ann' })).split('=')[1]!;
  store.accounts.setPasswordHash('ann', 'scrypt$hash', T);
  const token = sessionFor('ann');
  const out = await run(['reset', 'ann']);
  assert.match(out, /^agent ann: password forgotten; 1 session ended/m);
  const second = linkOf(out).split('=')[1]!;
  assert.notEqual(second, first);
  assert.equal(store.accounts.get('ann')!.passwordHash, null);
  assert.equal((await checkSession(store.accounts, token, T + 1)).ok, false);
  assert.equal(store.accounts.peekSignInLink(digestOf(first), T + 1), null, 'the earlier link is replaced');
  assert.equal(store.accounts.peekSignInLink(digestOf(second), T + 1)!.agentId, 'ann');
  assert.deepEqual(audit().at(-1)!.detail, { change: 'reset', agent: 'ann', endedSessions: 1, via: 'cli' });
  // Without a known console address (config port 0, no --origin), the fragment and what to put before it.
  const unknown = await agentsCommand(sqliteTarget(store), T, ['reset', 'ann'], {}, null);
  assert.match(unknown, /^sign-in link: <console address>\/#sign-in-link=\S+$/m);
  assert.match(unknown, /console address that serve printed/);
});

test('remove ends the sessions and deletes the account with its links; the owner is never removed, disabled or demoted', async () => {
  const { store, run, sessionFor, audit } = setup();
  await run(['add', 'ann'], { name: 'Ann' });
  const token = sessionFor('ann');
  assert.match(await run(['remove', 'ann']), /^agent ann removed; 1 session ended/);
  assert.equal(store.accounts.get('ann'), null);
  assert.equal((await checkSession(store.accounts, token, T + 1)).ok, false);
  assert.deepEqual(audit().at(-1)!.detail, { change: 'remove', agent: 'ann', name: 'Ann', endedSessions: 1, via: 'cli' });
  const before = audit().length;
  for (const args of [['remove', 'owner'], ['disable', 'owner']]) {
    await assert.rejects(run(args), /owner is this installation's owner and cannot be (removed|disabled)/, args.join(' '));
  }
  assert.deepEqual([store.accounts.owner()!.disabled, store.accounts.owner()!.role], [false, 'admin']);
  assert.equal(audit().length, before, 'refusals write nothing');
  // The owner may still be reset: a link to choose a password for signing in elsewhere.
  assert.match(await run(['reset', 'owner']), /sign-in link:/);
});

test('linkOrigin: --origin wins and is cut to its origin; else the configured one', async () => {
  assert.equal(linkOrigin(undefined, ORIGIN), ORIGIN);
  assert.equal(linkOrigin(undefined, null), null);
  assert.equal(linkOrigin('https://desk.example.com:8443/some/path#x', ORIGIN), 'https://desk.example.com:8443');
  assert.throws(() => linkOrigin('desk.example.com', ORIGIN), /--origin must be/);
});
