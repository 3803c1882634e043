import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { startHarness, type Harness } from './helpers/harness.ts';
import { createConsoleServer } from '../src/main/console-api/console-server.ts';
import { consoleTokenAtStart } from '../src/main/console-api/console-token.ts';
import { secretKeyPath } from '../src/main/store/data-dir.ts';
import { consoleInputs, type ConsoleMethod } from '../src/shared/console-api.ts';
import { mayCall } from '../src/shared/console-roles.ts';
import { SESSION_IDLE_MS, SESSION_MAX_MS } from '../src/main/accounts/sessions.ts';
import { SIGN_IN_LIMITS } from '../src/main/accounts/sign-in-throttle.ts';

/** The fields these tests read from the answers' values (each answer has some of them). */
interface Value {
  token: string;
  account: { id: string; name: string; role: string };
  link: { url: string | null; fragment: string };
  agent: { state: string; role: string; presence: string };
  id: string;
  name: string;
  role: string;
  capacity: number;
  endedSessions: number;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: { ok: boolean; value: Value; error?: { code: string; message: string; retryAfterSeconds?: number } };
}

const PASSWORD = 'correct horse battery staple';
const WINDOW = SIGN_IN_LIMITS.windowMs;

describe('team mode over HTTP: sign-in, sessions, roles and revocation (protocol v1.2, section 9)', () => {
  let h: Harness;
  let server: Server;
  let base: string;
  let ownerToken: string;

  async function post(path: string, body: unknown, token?: string): Promise<Answer> {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: JSON.parse(text) as Answer['json'] };
  }
  const call = (method: string, input: unknown, token?: string): Promise<Answer> => post(`/api/${method}`, input, token);
  const signIn = (id: string, password: string): Promise<Answer> => post('/api/auth/signIn', { id, password });
  /** A fresh sign-in window: the throttle's failures so far leave it (they are per 15 minutes). */
  const nextWindow = (): void => h.clock.set(h.clock.now() + WINDOW + 1);

  /** An agent added by the owner through the console, with the password they chose through their link. */
  async function agent(id: string, role: 'admin' | 'agent' = 'agent'): Promise<string> {
    const added = await call('addAgent', { id, name: `Agent ${id}`, role }, ownerToken);
    assert.equal(added.status, 200, added.text);
    const secret = (added.json.value.link.fragment as string).split('=')[1]!;
    const chosen = await post('/api/auth/usePasswordLink', { link: secret, password: PASSWORD });
    assert.equal(chosen.status, 200, chosen.text);
    return chosen.json.value.token as string;
  }

  /** The event stream of a token, open; `ended` resolves when the server closes it. */
  async function openStream(token: string): Promise<{ ended: Promise<void>; cancel(): Promise<void> }> {
    const res = await fetch(`${base}/api/events`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    await reader.read();
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return;
    })();
    return { ended, cancel: () => reader.cancel() };
  }

  const audit = async (action: string) => {
    await h.quiesce();
    return h.admin.audit.search({ action: action as 'sign_in', limit: 50 });
  };

  before(async () => {
    h = await startHarness();
    ownerToken = consoleTokenAtStart(h.service.store.settings, secretKeyPath(h.dataDir)).token;
    server = createConsoleServer({ rendererDir: '/nonexistent', accounts: h.service.console.accounts, handlers: h.service.console.handlers, events: h.service.console.events });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    assert.equal((await call('setOperator', { id: 'olga', name: 'Olga Owner' }, ownerToken)).status, 200);
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await h.stop();
  });

  it('the link names the agent; the password chosen there signs them in; the link then is used up', async () => {
    const added = await call('addAgent', { id: 'ann', name: 'Ann Lee' }, ownerToken);
    assert.equal(added.status, 200, added.text);
    const { link, agent } = added.json.value;
    assert.equal(link.url, null, 'this service has no console address others open: the link is its fragment');
    assert.match(link.fragment, /^#sign-in-link=[A-Za-z0-9_-]{43}$/);
    assert.deepEqual({ state: agent.state, role: agent.role, presence: agent.presence }, { state: 'invited', role: 'agent', presence: 'offline' });
    const secret = (link.fragment as string).split('=')[1]!;
    const info = await post('/api/auth/linkInfo', { link: secret });
    assert.deepEqual({ status: info.status, id: info.json.value.id, name: info.json.value.name }, { status: 200, id: 'ann', name: 'Ann Lee' });
    const short = await post('/api/auth/usePasswordLink', { link: secret, password: 'eleven char' });
    assert.deepEqual([short.status, short.json.error?.code], [400, 'invalid_input']);
    assert.match(short.json.error!.message, /at least 12 characters/);
    const chosen = await post('/api/auth/usePasswordLink', { link: secret, password: PASSWORD });
    assert.equal(chosen.status, 200);
    assert.deepEqual(chosen.json.value.account, { id: 'ann', name: 'Ann Lee', role: 'agent' });
    const again = await post('/api/auth/usePasswordLink', { link: secret, password: PASSWORD });
    assert.deepEqual([again.status, again.json.error?.code], [404, 'link_not_valid']);
    assert.equal((await post('/api/auth/linkInfo', { link: secret })).status, 404);

    const session = await signIn('ann', PASSWORD);
    assert.equal(session.status, 200, session.text);
    assert.deepEqual((await call('whoAmI', {}, session.json.value.token)).json.value, { account: { id: 'ann', name: 'Ann Lee' }, role: 'agent', owner: false });
    assert.notEqual(session.json.value.token, chosen.json.value.token, 'each sign-in is a session of its own');
  });

  it('a wrong password, an unknown account, a disabled one and one without a password yet get the same status and byte-identical bodies', async () => {
    nextWindow();
    await agent('bea');
    await call('addAgent', { id: 'cal', name: 'Cal' }, ownerToken); // invited: no password yet
    await agent('dee');
    await call('setAgentDisabled', { id: 'dee', disabled: true }, ownerToken);
    const answers = [await signIn('bea', 'not the password at all'), await signIn('nobody-here', PASSWORD), await signIn('dee', PASSWORD), await signIn('cal', PASSWORD)];
    for (const a of answers) {
      assert.equal(a.status, 401);
      assert.equal(a.text, answers[0]!.text);
      assert.equal(a.headers.get('retry-after'), null);
    }
    assert.deepEqual(answers[0]!.json.error, { code: 'sign_in_failed', message: 'that account id and password do not match an active account' });
    const failed = await audit('sign_in_failed');
    assert.deepEqual(failed.slice(0, 4).map((r) => [JSON.parse(r.detail!).reason, r.address]).reverse(), [
      ['wrong password', '127.0.0.1'],
      ['unknown account', '127.0.0.1'],
      ['account disabled', '127.0.0.1'],
      ['no password chosen yet', '127.0.0.1'],
    ], 'the admin sees why in the audit, with the address');
  });

  it('the 6th failure for one account within 15 minutes gets 429 with Retry-After, even with the right password; it passes once the window moves on', async () => {
    nextWindow();
    await agent('eve');
    const start = h.clock.now();
    // Protocol v1.2: at most 5 failed sign-ins per account per 15 minutes.
    assert.equal(SIGN_IN_LIMITS.perAccount, 5);
    for (let i = 0; i < 5; i++) {
      h.clock.set(start + i * 60_000);
      assert.equal((await signIn('eve', `wrong guess number ${i}`)).status, 401, `failure ${i + 1}`);
    }
    h.clock.set(start + 5 * 60_000);
    const limited = await signIn('eve', PASSWORD);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), String(10 * 60), 'until the first failure is 15 minutes old');
    assert.deepEqual([limited.json.error?.code, limited.json.error?.retryAfterSeconds], ['too_many_attempts', 600]);
    assert.match(limited.json.error!.message, /try again in 10 min/);
    // Same answer for an account that does not exist: the limit says nothing about existence.
    for (let i = 0; i < 5; i++) await signIn('ghost', 'wrong');
    assert.equal((await signIn('ghost', 'wrong')).status, 429);
    h.clock.set(start + WINDOW);
    assert.equal((await signIn('eve', PASSWORD)).status, 200, 'the first failure left the window');
  });

  it('the per-address limit: 20 failures from one address within 15 minutes, then 429 for any account', async () => {
    nextWindow();
    await agent('fay');
    assert.equal(SIGN_IN_LIMITS.perAddress, 20, 'docs/operations.md states 20');
    for (let i = 0; i < 20; i++) assert.equal((await signIn(`guess-${i % 5}-${i}`, 'wrong')).status, 401, `failure ${i + 1}`);
    const limited = await signIn('fay', PASSWORD);
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    const rows = await audit('sign_in_failed');
    assert.match(rows[0]!.detail!, /too many attempts \(per address\)/);
    assert.equal(rows[0]!.address, '127.0.0.1');
    nextWindow();
    assert.equal((await signIn('fay', PASSWORD)).status, 200);
  });

  it('attempts sent all at once are counted as they arrive: 30 parallel guesses at one account get 5 answers of 401 and 25 of 429, and a right password after them still waits', async () => {
    nextWindow();
    await agent('pia');
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => signIn('pia', `parallel guess ${i}`)));
    const counts = answers.reduce<Record<number, number>>((c, a) => ({ ...c, [a.status]: (c[a.status] ?? 0) + 1 }), {});
    assert.deepEqual(counts, { 401: 5, 429: 25 });
    assert.equal((await signIn('pia', PASSWORD)).status, 429);
    nextWindow();
    // A right password does not use up the address's allowance: 25 sign-ins in a row from one address.
    for (let i = 0; i < 25; i++) assert.equal((await signIn('pia', PASSWORD)).status, 200, `sign-in ${i + 1}`);
  });

  it('only the owner can reset the owner (another admin would get a password sign-in as the owner); a disabled agent\'s link dies with the disable; the owner cannot take an agent\'s id in another case', async () => {
    nextWindow();
    const admin = await agent('ray', 'admin');
    const refused = await call('resetAgent', { id: 'olga' }, admin);
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error?.code, 'owner_protected');
    assert.equal((await call('resetAgent', { id: 'olga' }, ownerToken)).status, 200, 'the owner may');
    const invited = await call('addAgent', { id: 'lia', name: 'Lia' }, ownerToken);
    const link = (invited.json.value.link.fragment as string).split('=')[1]!;
    assert.equal((await call('setAgentDisabled', { id: 'lia', disabled: true }, ownerToken)).status, 200);
    assert.equal((await call('setAgentDisabled', { id: 'lia', disabled: false }, ownerToken)).status, 200);
    assert.equal((await post('/api/auth/usePasswordLink', { link, password: PASSWORD })).status, 404, 'enabling again does not revive the link');
    const clash = await call('setOperator', { id: 'RAY', name: 'Not Ray' }, ownerToken);
    assert.equal(clash.json.error?.code, 'id_taken');
  });

  it('a session ends after 12 h unused, and after 30 days however much it is used', async () => {
    nextWindow();
    const idle = await agent('gus');
    h.clock.set(h.clock.now() + SESSION_IDLE_MS - 60_000);
    assert.equal((await call('whoAmI', {}, idle)).status, 200, 'used just before 12 h: it lives on from there');
    h.clock.set(h.clock.now() + SESSION_IDLE_MS - 60_000);
    assert.equal((await call('whoAmI', {}, idle)).status, 200);
    h.clock.set(h.clock.now() + SESSION_IDLE_MS);
    const expired = await call('whoAmI', {}, idle);
    assert.deepEqual([expired.status, expired.json.error?.code], [401, 'unauthorized']);
    assert.equal(h.admin.connection.prepare("SELECT ended_reason FROM sessions WHERE agent_id = 'gus'").get()!['ended_reason'], 'idle');

    const busy = (await signIn('gus', PASSWORD)).json.value.token as string;
    const signedInAt = h.clock.now();
    while (h.clock.now() + 11 * 3600_000 < signedInAt + SESSION_MAX_MS) {
      h.clock.set(h.clock.now() + 11 * 3600_000);
      assert.equal((await call('whoAmI', {}, busy)).status, 200);
    }
    h.clock.set(signedInAt + SESSION_MAX_MS);
    assert.equal((await call('whoAmI', {}, busy)).status, 401, '30 days after sign-in, used every 11 hours');
  });

  it('a forged or altered token gets 401, on calls and on the event stream', async () => {
    const real = await agent('hal');
    const forged = [real.slice(0, -1) + (real.endsWith('A') ? 'B' : 'A'), 'A'.repeat(43), `${real}x`, ownerToken.slice(0, -2)];
    for (const token of forged) {
      const r = await call('listConversations', {}, token);
      assert.deepEqual([r.status, r.json.error?.code], [401, 'unauthorized'], token);
      assert.equal((await fetch(`${base}/api/events`, { headers: { authorization: `Bearer ${token}` } })).status, 401);
    }
    assert.equal((await call('whoAmI', {}, real)).status, 200);
  });

  it('sign-out ends the session and closes its event stream; the next call is 401; the audit has sign-in and sign-out with the address', async () => {
    const token = await agent('ida');
    const other = (await signIn('ida', PASSWORD)).json.value.token as string;
    const stream = await openStream(token);
    const out = await call('signOut', {}, token);
    assert.deepEqual(out.json.value, { signedOut: true });
    await stream.ended;
    assert.equal((await call('whoAmI', {}, token)).status, 401);
    assert.equal((await call('whoAmI', {}, other)).status, 200, 'only that session ends');
    assert.deepEqual((await call('signOut', {}, ownerToken)).json.value, { signedOut: false }, 'the owner\'s console token is not a session');
    assert.equal((await call('whoAmI', {}, ownerToken)).status, 200);
    const [signOut] = await audit('sign_out');
    assert.deepEqual([signOut!.operator.id, signOut!.address], ['ida', '127.0.0.1']);
    const signIns = (await audit('sign_in')).filter((r) => r.operator.id === 'ida');
    assert.deepEqual(signIns.map((r) => [r.address, r.detail === null ? 'password' : 'link']), [['127.0.0.1', 'password'], ['127.0.0.1', 'link']]);
  });

  it('an admin disabling, resetting or removing an agent cuts their open console at once: stream closed, next call 401', async () => {
    for (const [method, input] of [['setAgentDisabled', { disabled: true }], ['resetAgent', {}], ['removeAgent', {}]] as const) {
      const id = `cut-${method}`;
      const token = await agent(id);
      const stream = await openStream(token);
      const started = performance.now();
      const r = await call(method, { id, ...input }, ownerToken);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.value.endedSessions, 1);
      await stream.ended;
      const next = await call('listConversations', {}, token);
      assert.deepEqual([next.status, next.json.error?.code], [401, 'unauthorized'], method);
      const took = Math.round(performance.now() - started);
      assert.ok(took < 1000, `${method}: closed in ${took} ms`);
      console.log(`# ${method}: the agent's stream closed and their next call was refused ${took} ms after the admin's call`);
    }
    const rows = (await audit('agent')).filter((r) => r.detail!.includes('"agent":"cut-')).slice(0, 6).reverse();
    assert.deepEqual(rows.filter((r) => !r.detail!.includes('"change":"add"')).map((r) => [r.operator.id, JSON.parse(r.detail!).change, JSON.parse(r.detail!).via]), [
      ['olga', 'disable', 'console'],
      ['olga', 'reset', 'console'],
      ['olga', 'remove', 'console'],
    ]);
  });

  it('the owner cannot be removed, disabled or demoted, and an admin cannot do it to themselves; as data, nothing changed', async () => {
    const admin = await agent('jo', 'admin');
    for (const [method, input] of [['removeAgent', {}], ['setAgentDisabled', { disabled: true }], ['updateAgent', { role: 'agent' }]] as const) {
      const r = await call(method, { id: 'olga', ...input }, admin);
      assert.deepEqual([r.status, r.json.error?.code], [400, 'owner_protected'], method);
      const self = await call(method, { id: 'jo', ...input }, admin);
      assert.deepEqual([self.status, self.json.error?.code], [400, 'self_protected'], method);
    }
    const list = (await call('listAgents', {}, admin)).json.value as unknown as Array<{ id: string; role: string; state: string; owner: boolean }>;
    assert.deepEqual(list.filter((a) => a.id === 'olga' || a.id === 'jo').map((a) => [a.id, a.role, a.state, a.owner]), [['jo', 'admin', 'active', false], ['olga', 'admin', 'active', true]]);
    const renamed = await call('updateAgent', { id: 'ann', name: 'Ann L.', capacity: 2, role: 'admin' }, admin);
    assert.deepEqual([renamed.json.value.name, renamed.json.value.capacity, renamed.json.value.role], ['Ann L.', 2, 'admin']);
    const [row] = await audit('agent');
    assert.deepEqual({ who: row!.operator.id, address: row!.address, detail: JSON.parse(row!.detail!) }, {
      who: 'jo',
      address: '127.0.0.1',
      detail: { change: 'update', agent: 'ann', role: { from: 'agent', to: 'admin' }, name: { from: 'Ann Lee', to: 'Ann L.' }, capacity: { from: 5, to: 2 }, via: 'console' },
    });
    await call('updateAgent', { id: 'ann', role: 'agent' }, admin);
  });

  it('every console method, called as admin, as agent and as nobody: the agent gets 403 exactly where METHOD_ROLES says, nobody gets 401', async () => {
    nextWindow();
    const admin = await agent('kim', 'admin');
    const member = await agent('lou');
    // signOut last: it ends the session the loop calls with.
    const methods = (Object.keys(consoleInputs) as ConsoleMethod[]).sort((a, b) => Number(a === 'signOut') - Number(b === 'signOut'));
    for (const m of methods) {
      const asAdmin = await call(m, {}, admin);
      assert.ok(asAdmin.status !== 401 && asAdmin.status !== 403, `admin ${m}: ${asAdmin.status} ${asAdmin.text}`);
      const asAgent = await call(m, {}, member);
      if (mayCall('agent', m)) assert.ok(asAgent.status !== 401 && asAgent.status !== 403, `agent ${m}: ${asAgent.status} ${asAgent.text}`);
      else assert.deepEqual([asAgent.status, asAgent.json.error?.code], [403, 'forbidden'], `agent ${m}`);
      const asNobody = await call(m, {});
      assert.deepEqual([asNobody.status, asNobody.json.error?.code], [401, 'unauthorized'], `nobody ${m}`);
    }
    // Protocol v1.2: an agent may not see or change agents, clients, secrets, engines or server-wide records.
    const adminOnly = ['listAgents', 'addAgent', 'updateAgent', 'setAgentDisabled', 'resetAgent', 'removeAgent', 'listAudit', 'listClients', 'addClient', 'listEngines', 'listRequests', 'setOperator'] as const;
    for (const m of adminOnly) assert.equal(mayCall('agent', m), false, m);
  });
});
