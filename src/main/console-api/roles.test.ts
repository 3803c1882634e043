import { test } from 'node:test';
import assert from 'node:assert/strict';
import { consoleInputs, type ConsoleHandlers, type ConsoleMethod } from '../../shared/console-api.ts';
import { METHOD_ROLES, ROLES, mayCall } from '../../shared/console-roles.ts';
import { dispatch } from './handlers.ts';

const METHODS = Object.keys(consoleInputs) as ConsoleMethod[];

test('every console method declares who may call it, and an admin may call every one', () => {
  assert.deepEqual(Object.keys(METHOD_ROLES).sort(), [...METHODS].sort(), 'the role table and the contract list the same methods');
  for (const m of METHODS) assert.ok(METHOD_ROLES[m].length > 0 && mayCall('admin', m), m);
});

test('every method, called as every role: an agent is refused what is an admin\'s, as data, before its handler runs', async () => {
  const called: string[] = [];
  const handlers = new Proxy({}, { get: (_, name) => async () => void called.push(String(name)) }) as ConsoleHandlers;
  for (const role of ROLES) {
    for (const m of METHODS) {
      called.length = 0;
      const result = await dispatch(handlers, m, {}, { role, owner: false, account: { id: 'x', name: 'X' }, address: null, session: null });
      const refused = !result.ok && result.error.code === 'forbidden';
      assert.equal(refused, !mayCall(role, m), `${role} ${m}`);
      if (refused) {
        assert.deepEqual(called, [], `${m}'s handler does not run for ${role}`);
        assert.match(result.error.message, /only an admin may do this/);
      }
    }
  }
  // Protocol v1.2: an agent may not see or change clients, secrets, engines or server-wide records.
  for (const m of ['listClients', 'addClient', 'rotateClient', 'updateClientSettings', 'listEngines', 'listAudit', 'listRequests', 'importKb'] as const) {
    assert.equal(mayCall('agent', m), false, m);
  }
  for (const m of ['getTranscript', 'sendReply', 'resolveConversation', 'stopAutoReply', 'resumeAutoReply', 'assist', 'saveCanned', 'retryDelivery'] as const) {
    assert.equal(mayCall('agent', m), true, m);
  }
});
