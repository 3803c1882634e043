import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../../test/helpers/postgres.ts';
import type { StoreContract } from '../contract.ts';
import { DEFAULT_CLIENT_SETTINGS, clientSettingsSchema } from '../../../shared/client-settings.ts';
import { engineConfigSchema } from '../../../shared/engine-config.ts';
import { bothStores } from './both-stores.fixture.ts';
import { pgClientQueries } from './client-queries.ts';
import { pgEngineQueries } from './engine-queries.ts';

const T0 = Date.UTC(2025, 0, 2, 3, 4, 5);

async function clientScenario(c: StoreContract['clients']) {
  const empty = { list: await c.list(), unknown: await c.get('shop'), secrets: await c.activeSecrets('shop'), sealed: await c.sealedSecrets() };
  for (const id of ['shop', 'Zed', 'beta']) await c.create(id, DEFAULT_CLIENT_SETTINGS, T0);
  const changes = [
    await c.setEnabled('beta', false, T0 + 1),
    await c.setSettings('shop', clientSettingsSchema.parse({ sendUrl: 'https://hooks.example.com/in', quietSeconds: 1.5, fallbackText: '请稍等' }), T0 + 2),
    await c.setEnabled('ghost', true, T0 + 3),
    await c.setSettings('ghost', DEFAULT_CLIENT_SETTINGS, T0 + 3),
  ];
  for (let n = 1; n <= 3; n++) await c.addSecret('shop', `sealed-${n}`, `hint${n}`, T0 + 10 + n);
  await c.addSecret('Zed', 'sealed-z', 'hintz', T0 + 20);
  const active = await c.activeSecrets('shop');
  const resealed = [await c.resealSecret(active[0]!.id, 'sealed-3', 'resealed-3'), await c.resealSecret(active[0]!.id, 'sealed-3', 'other'), await c.resealSecret(999, 'x', 'y')];
  const retired = [await c.retireOlderSecrets('shop', T0 + 30), await c.retireOlderSecrets('shop', T0 + 31), await c.retireOlderSecrets('ghost', T0 + 32)];
  return { empty, changes, active, resealed, retired, list: await c.list(), shop: await c.get('shop'), after: await c.activeSecrets('shop'), sealed: await c.sealedSecrets() };
}

async function engineScenario(e: StoreContract['engines']) {
  const config = engineConfigSchema.parse({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm' });
  const empty = { list: await e.list(), unknown: await e.get('gpt'), keys: await e.sealedKeys() };
  await e.save('gpt', config, 'sealed-key', T0);
  await e.save('Zeta', engineConfigSchema.parse({ baseUrl: 'http://127.0.0.1:8/v1', model: 'z' }), 'sealed-z', T0 + 1);
  await e.save('beta', config, 'sealed-b', T0 + 2);
  // Saved again without a key: the stored one stays.
  await e.save('gpt', { ...config, model: 'm2' }, null, T0 + 3);
  const kept = await e.get('gpt');
  const keys = await e.sealedKeys();
  const resealed = [await e.resealKey('gpt', 'sealed-key', 'resealed'), await e.resealKey('gpt', 'sealed-key', 'again'), await e.resealKey('Zeta', 'x', 'y')];
  const removed = [await e.remove('beta'), await e.remove('beta')];
  return { empty, kept, keys, resealed, removed, list: await e.list(), gpt: await e.get('gpt'), keysAfter: await e.sealedKeys() };
}

describe('clients and engines on PostgreSQL and on SQLite', { skip: postgresSkipReason() }, () => {
  const stores = bothStores('clientq');

  it('keep clients and their secrets with the same results, in byte order', async () => {
    const sqlite = await clientScenario(stores.sqlite().clients);
    const { pools } = await stores.postgres();
    const postgres = await clientScenario(pgClientQueries(pools[0]!));
    assert.deepEqual(postgres, sqlite);
    assert.deepEqual(sqlite.empty, { list: [], unknown: undefined, secrets: [], sealed: [] });
    assert.deepEqual(sqlite.changes, [true, true, false, false]);
    assert.deepEqual(sqlite.list.map((c) => [c.id, c.enabled]), [['Zed', true], ['beta', false], ['shop', true]]);
    assert.deepEqual([sqlite.shop?.settings.fallbackText, sqlite.shop?.settings.quietSeconds, sqlite.shop?.updatedAt], ['请稍等', 1.5, T0 + 2]);
    assert.deepEqual(sqlite.active.map((s) => [s.sealed, s.hint, s.createdAt]), [['sealed-3', 'hint3', T0 + 13], ['sealed-2', 'hint2', T0 + 12]], 'two active during a rotation, newest first');
    assert.deepEqual(sqlite.resealed, [true, false, false]);
    assert.deepEqual(sqlite.retired, [1, 0, 0]);
    assert.deepEqual(sqlite.after.map((s) => s.sealed), ['resealed-3']);
    assert.deepEqual(sqlite.sealed.map((s) => [s.clientId, s.sealed, s.retired]), [['shop', 'sealed-1', true], ['shop', 'sealed-2', true], ['shop', 'resealed-3', false], ['Zed', 'sealed-z', false]]);
  });

  it('keep engines and their sealed keys with the same results, in byte order', async () => {
    const sqlite = await engineScenario(stores.sqlite().engines);
    const { pools } = await stores.postgres();
    const postgres = await engineScenario(pgEngineQueries(pools[0]!));
    assert.deepEqual(postgres, sqlite);
    assert.deepEqual(sqlite.empty, { list: [], unknown: undefined, keys: [] });
    assert.deepEqual([sqlite.kept?.config.model, sqlite.kept?.apiKeySealed, sqlite.kept?.updatedAt], ['m2', 'sealed-key', T0 + 3]);
    assert.deepEqual(sqlite.keys, [{ name: 'Zeta', sealed: 'sealed-z' }, { name: 'beta', sealed: 'sealed-b' }, { name: 'gpt', sealed: 'sealed-key' }]);
    assert.deepEqual([sqlite.resealed, sqlite.removed], [[true, false, false], [true, false]]);
    assert.deepEqual(sqlite.list.map((e) => e.name), ['Zeta', 'gpt']);
    assert.deepEqual([sqlite.gpt?.apiKeySealed, sqlite.gpt?.updatedAt], ['resealed', T0 + 3], 'a re-seal leaves updated_at');
    assert.deepEqual(sqlite.keysAfter, [{ name: 'Zeta', sealed: 'sealed-z' }, { name: 'gpt', sealed: 'resealed' }]);
  });
});
