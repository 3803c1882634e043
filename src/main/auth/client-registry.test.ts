import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../store/db.ts';
import { createStore } from '../store/index.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import { keyFileBox } from './secret-box.ts';
import { createClientRegistry } from './client-registry.ts';

test('a change this process made itself (invalidate) is seen by the very next lookup, even within the refresh interval', () => {
  const store = createStore(openDatabase(':memory:'));
  const registry = createClientRegistry(store, keyFileBox(join(mkdtempSync(join(tmpdir(), 'sb-registry-')), 'secret.key')));
  store.clients.create('site', DEFAULT_CLIENT_SETTINGS, 0);
  assert.equal(registry.lookup('site', 1000)?.settings.sendUrl, undefined);
  store.clients.setSettings('site', { ...DEFAULT_CLIENT_SETTINGS, sendUrl: 'http://127.0.0.1:9/hook' }, 1001);
  registry.invalidate();
  assert.equal(registry.lookup('site', 1002)?.settings.sendUrl, 'http://127.0.0.1:9/hook');
});
