import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadServerConfig, defaultDataDir, ConfigError } from './server-config.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'sb-config-'));

test('defaults are the protocol\'s', () => {
  const c = loadServerConfig(dir());
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.port, 8787);
  assert.equal(c.consolePort, 8788);
  assert.equal(c.bodyLimitBytes, 10 * 1024 * 1024);
  assert.equal(c.timestampToleranceSeconds, 300);
  assert.equal(c.replayWindowSeconds, 600);
  assert.deepEqual(c.rateLimit, { perSecond: 100, burst: 200 });
  assert.equal(c.engineTimeoutMs, 30_000);
});

test('config.json overrides defaults and flags override config.json', () => {
  const d = dir();
  writeFileSync(join(d, 'config.json'), JSON.stringify({ port: 9000, rateLimit: { perSecond: 5, burst: 5 } }));
  assert.equal(loadServerConfig(d).port, 9000);
  assert.equal(loadServerConfig(d, { port: 0 }).port, 0);
  assert.equal(loadServerConfig(d, { port: undefined }).port, 9000);
});

test('a bad file is refused with the key at fault', () => {
  const d = dir();
  writeFileSync(join(d, 'config.json'), '{"port": 70000, "prot": 1}');
  assert.throws(() => loadServerConfig(d), (e: Error) => e instanceof ConfigError && /port/.test(e.message) && /prot/.test(e.message));
  writeFileSync(join(d, 'config.json'), 'not json');
  assert.throws(() => loadServerConfig(d), /is not valid JSON/);
});

test('the data folder comes from SWITCHBOARD_DATA_DIR, else XDG_DATA_HOME, else ~/.local/share', () => {
  assert.equal(defaultDataDir({ SWITCHBOARD_DATA_DIR: '/srv/sb' }), '/srv/sb');
  assert.equal(defaultDataDir({ XDG_DATA_HOME: '/x' }), '/x/switchboard');
  assert.match(defaultDataDir({}), /\.local\/share\/switchboard$/);
});

test('flood settings: defaults an honest integrator never meets, each part switchable in config.json', () => {
  const c = loadServerConfig(dir());
  assert.deepEqual(c.addressRateLimit, { enabled: true, perSecond: 10, burst: 100, maxAddresses: 100_000 });
  assert.deepEqual(c.requestLogAggregation, { enabled: true, windowSeconds: 60, rowsPerWindow: 5 });
  assert.equal(c.requestLogMaxRows, 1_000_000);
  assert.equal(c.requestLogRetentionDays, 30);
  const d = dir();
  writeFileSync(join(d, 'config.json'), JSON.stringify({ addressRateLimit: { enabled: false }, requestLogAggregation: { windowSeconds: 300 } }));
  const off = loadServerConfig(d);
  assert.deepEqual(off.addressRateLimit, { enabled: false, perSecond: 10, burst: 100, maxAddresses: 100_000 });
  assert.equal(off.requestLogAggregation.windowSeconds, 300);
  writeFileSync(join(d, 'config.json'), JSON.stringify({ requestLogMaxRows: 10, addressRateLimit: { burst: 0 } }));
  assert.throws(() => loadServerConfig(d), (e: Error) => /requestLogMaxRows/.test(e.message) && /addressRateLimit\.burst/.test(e.message));
});

test('idempotency retention: 48 hours unless set, never shorter than the replay window', () => {
  assert.equal(loadServerConfig(dir()).idempotencyRetentionHours, 48);
  const d = dir();
  writeFileSync(join(d, 'config.json'), JSON.stringify({ idempotencyRetentionHours: 1, replayWindowSeconds: 7200 }));
  assert.throws(() => loadServerConfig(d), (e: Error) => /idempotencyRetentionHours: must be at least the replay window/.test(e.message));
  writeFileSync(join(d, 'config.json'), JSON.stringify({ idempotencyRetentionHours: 0.5 }));
  assert.throws(() => loadServerConfig(d), (e: Error) => /idempotencyRetentionHours/.test(e.message));
  writeFileSync(join(d, 'config.json'), JSON.stringify({ idempotencyRetentionHours: 2, replayWindowSeconds: 7200 }));
  assert.equal(loadServerConfig(d).idempotencyRetentionHours, 2);
});
