import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applySettingFlags, describeSettings, SETTING_FLAGS } from './settings-flags.ts';
import { clientSettingsSchema, DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';

test('--media-origins takes comma-separated https origins and shows them', () => {
  assert.ok(SETTING_FLAGS['media-origins'], 'listed in the help with the other settings');
  const s = applySettingFlags(DEFAULT_CLIENT_SETTINGS, { 'media-origins': 'https://cdn.example.com, https://img.example.com:8443' });
  assert.deepEqual(s.mediaOrigins, ['https://cdn.example.com', 'https://img.example.com:8443']);
  assert.match(describeSettings(s), /^media-origins\s+https:\/\/cdn\.example\.com, https:\/\/img\.example\.com:8443$/m);
  assert.deepEqual(applySettingFlags(s, { 'media-origins': '' }).mediaOrigins, [], 'empty clears the list');
  assert.match(describeSettings(DEFAULT_CLIENT_SETTINGS), /^media-origins\s+\(none: https attachments load on a click\)$/m);
});

test('--media-origins refuses plain http, paths and wildcards, naming the flag', () => {
  for (const bad of ['http://cdn.example.com', 'https://cdn.example.com/', 'https://cdn.example.com/img', 'https://*.example.com', 'cdn.example.com']) {
    assert.throws(
      () => applySettingFlags(DEFAULT_CLIENT_SETTINGS, { 'media-origins': `https://ok.example.com,${bad}` }),
      (e: Error) => e.message === `--media-origins must be https origins like https://cdn.example.com; "${bad}" is not one, got "https://ok.example.com,${bad}"`,
      bad,
    );
  }
});

test('stored settings without mediaOrigins (made before it existed) read back as none', () => {
  const old = { allowedOrigins: [], botIds: [], groupPolicy: 'mention', engine: 'kb' };
  assert.deepEqual(clientSettingsSchema.parse(old).mediaOrigins, []);
  assert.ok(!clientSettingsSchema.safeParse({ mediaOrigins: ['http://192.168.1.10'] }).success, 'the schema refuses http where the console API writes it');
});
